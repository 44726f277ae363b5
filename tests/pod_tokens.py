"""A token the tests forge: what no kubelet would hand a pod (the rest of a node's part is sandbox/kube/pod_identity_agent.py)."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

from sandbox.kube.api import KubeApi
from sandbox.kube.pod_identity_agent import AUDIENCE

ISSUER = "https://kubernetes.default.svc"  # sandbox/kube's --service-account-issuer


def expired_token(pki: Path, api: KubeApi, bound_pod: dict) -> str:
    """A token of the pod's service account signed with the cluster's own service-account key, expired an hour ago."""
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding

    namespace, name = bound_pod["metadata"]["namespace"], bound_pod["spec"]["serviceAccountName"]
    account = api.request("GET", f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}")
    now = int(time.time())
    claims = {
        "iss": ISSUER, "aud": [AUDIENCE], "sub": f"system:serviceaccount:{namespace}:{name}",
        "iat": now - 7200, "nbf": now - 7200, "exp": now - 3600,
        "kubernetes.io": {
            "namespace": namespace, "serviceaccount": {"name": name, "uid": account["metadata"]["uid"]},
            "pod": {"name": bound_pod["metadata"]["name"], "uid": bound_pod["metadata"]["uid"]},
        },
    }  # fmt: skip

    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    signing_input = f"{part({'alg': 'RS256', 'typ': 'JWT'})}.{part(claims)}"
    key = serialization.load_pem_private_key((pki / "sa.key").read_bytes(), None)
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"
