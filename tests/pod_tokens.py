"""What a pod on an EKS node does to get its Pod Identity credentials, for the tests.

The kubelet would ask the API server for the pod's projected service-account token (``TokenRequest`` with the
audience ``pods.eks.amazonaws.com``, bound to the pod); the EKS Pod Identity Agent would exchange it with EKS
Auth's ``AssumeRoleForPodIdentity``. No kubelet runs in the sandbox, so the tests ask for the token themselves,
from the real API server, and call EKS Auth as the agent does.
"""

from __future__ import annotations

import base64
import contextlib
import json
import time
from pathlib import Path

import boto3
from botocore.config import Config

from sandbox.kube.api import KubeApi

AUDIENCE = "pods.eks.amazonaws.com"
ISSUER = "https://kubernetes.default.svc"  # sandbox/kube's --service-account-issuer


def pod(api: KubeApi, namespace: str, service_account: str, name: str) -> dict:
    """A pod (Pending: no node runs it) of ``service_account``, with a spec the restricted Pod Security profile admits."""
    security = {"allowPrivilegeEscalation": False, "runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "serviceAccountName": service_account,
            "containers": [{"name": "train", "image": "public.ecr.aws/docker/library/python:3.12", "securityContext": security}],
        },
    }
    return api.request("POST", f"/api/v1/namespaces/{namespace}/pods", body)


@contextlib.contextmanager
def running(api: KubeApi, namespace: str, service_account: str, name: str):
    """``pod`` for the time of a ``with``; deleted after, so that what runs next (an offboarding's check) finds none."""
    made = pod(api, namespace, service_account, name)
    try:
        yield made
    finally:
        api.request("DELETE", f"/api/v1/namespaces/{namespace}/pods/{name}", {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})


def token(api: KubeApi, namespace: str, service_account: str, bound_pod: dict | None = None, audience: str = AUDIENCE) -> str:
    """The service account's token from the TokenRequest API, bound to ``bound_pod`` as a projected token is."""
    spec: dict = {"audiences": [audience], "expirationSeconds": 600}
    if bound_pod is not None:
        spec["boundObjectRef"] = {"kind": "Pod", "apiVersion": "v1", "name": bound_pod["metadata"]["name"], "uid": bound_pod["metadata"]["uid"]}
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}
    return api.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}/token", request)["status"]["token"]


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


def agent(sandbox) -> object:
    """EKS Auth as the Pod Identity Agent calls it (with the node's credentials: here the sandbox's own)."""
    return sandbox.boto3_client("eks-auth")


def pod_client(sandbox, service: str, answer: dict):
    """A client of ``service`` signed with the credentials AssumeRoleForPodIdentity answered."""
    credentials = answer["credentials"]
    return boto3.client(
        service, region_name="us-east-1", endpoint_url=sandbox.endpoint,
        aws_access_key_id=credentials["accessKeyId"], aws_secret_access_key=credentials["secretAccessKey"], aws_session_token=credentials["sessionToken"],
        config=Config(retries={"mode": "standard", "total_max_attempts": 1}),
    )  # fmt: skip
