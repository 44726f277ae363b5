"""An EKS cluster's Kubernetes API is the sandbox's real API server (``sandbox.kube``).

DescribeCluster answers ``endpoint`` and ``certificateAuthority.data`` (the base64 PEM of the CA,
as EKS gives it for ``aws eks update-kubeconfig``) of the API server that ``SANDBOX_KUBE_DIR``
names; every EKS cluster of the sandbox points at that one server. Without it moto's made-up
endpoint stays, and nothing answers there.
"""

from __future__ import annotations

import base64

import moto.eks.models

from sandbox.kube.api import connected


def install() -> None:
    original = moto.eks.models.Cluster.__init__
    if getattr(original, "_sandbox_kubernetes", False):
        return

    def __init__(self, *args, **kwargs):  # noqa: N807 (moto's constructor, wrapped)
        original(self, *args, **kwargs)
        api = connected()
        if api is not None:
            self.endpoint = api.server
            self.certificate_authority = {"data": base64.b64encode(api.ca.encode()).decode()}

    __init__._sandbox_kubernetes = True
    moto.eks.models.Cluster.__init__ = __init__
