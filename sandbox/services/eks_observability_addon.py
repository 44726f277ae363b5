"""The HyperPod observability EKS add-on in the sandbox's add-on catalog.

``sandbox/services/eks_addons.py`` implements the add-on API with a fixed catalog
(what DescribeAddonVersions offers and CreateAddon accepts). HyperPod observability
(``amazon-sagemaker-hyperpod-observability``: collectors that remote-write the cluster's
GPU, Kueue and node metrics to an Amazon Managed Service for Prometheus workspace)
is not in it; this module adds it, so ``hyperpod.tenancy.eks_addon`` can install it
as EKS would and an unknown add-on name stays refused.
"""

from __future__ import annotations

from sandbox.services import eks_addons

OBSERVABILITY_ADDON = "amazon-sagemaker-hyperpod-observability"
VERSIONS = ["v1.0.2-eksbuild.1", "v1.0.1-eksbuild.1", "v1.0.0-eksbuild.1"]


def install() -> None:
    eks_addons.CATALOG.setdefault(OBSERVABILITY_ADDON, ("observability", "eks", "aws", list(VERSIONS)))
