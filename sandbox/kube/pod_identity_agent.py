"""What an EKS node does for a pod that runs as a service account with a Pod Identity association.

The kubelet asks the API server for the pod's projected service-account token (``TokenRequest`` with the audience
``pods.eks.amazonaws.com``, bound to the pod); the EKS Pod Identity Agent exchanges it with EKS Auth's
``AssumeRoleForPodIdentity`` and hands the credentials to the pod's SDK (EKS User Guide, "Understand how EKS Pod
Identity works"). No kubelet or agent runs in the sandbox: this module plays both, against the real API server and
the sandbox's EKS Auth (``sandbox/services/eks_auth.py``), for the tests and for ``make demo``.

``python -m sandbox.kube.pod_identity_agent`` (in ``python -m sandbox run``) prints, for each Pod Identity
association of the sandbox's EKS clusters, what a pod of its service account may do in the data bucket: its team's
prefix, every other team's, and the bucket's root.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from sandbox.kube.api import KubeApi

AUDIENCE = "pods.eks.amazonaws.com"
NO_RETRY = Config(retries={"mode": "standard", "total_max_attempts": 1})


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
    """The service account's token from the TokenRequest API, bound to ``bound_pod`` as the kubelet's projected token is."""
    spec: dict = {"audiences": [audience], "expirationSeconds": 600}
    if bound_pod is not None:
        spec["boundObjectRef"] = {"kind": "Pod", "apiVersion": "v1", "name": bound_pod["metadata"]["name"], "uid": bound_pod["metadata"]["uid"]}
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}
    return api.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}/token", request)["status"]["token"]


def agent(sandbox):
    """EKS Auth as the Pod Identity Agent calls it (with the node's credentials: here the sandbox's own)."""
    return sandbox.boto3_client("eks-auth")


def pod_client(sandbox, service: str, answer: dict):
    """A client of ``service`` signed with the credentials AssumeRoleForPodIdentity answered (what the pod's SDK gets)."""
    credentials = answer["credentials"]
    return boto3.client(
        service, region_name="us-east-1", endpoint_url=sandbox.endpoint, config=NO_RETRY,
        aws_access_key_id=credentials["accessKeyId"], aws_secret_access_key=credentials["secretAccessKey"], aws_session_token=credentials["sessionToken"],
    )  # fmt: skip


def credentials_of(sandbox, api: KubeApi, cluster: str, namespace: str, service_account: str, pod_name: str) -> dict:
    """What AssumeRoleForPodIdentity answers for a pod of ``service_account``: the answer, or ``{"refused": <error code>}``."""
    with running(api, namespace, service_account, pod_name) as made:
        try:
            return agent(sandbox).assume_role_for_pod_identity(clusterName=cluster, token=token(api, namespace, service_account, made))
        except ClientError as error:
            return {"refused": error.response["Error"]["Code"]}


def s3_answer(call, **request) -> str:
    try:
        call(**request)
    except ClientError as error:
        return error.response["Error"]["Code"]
    return "ok"


def prefix_access(s3, bucket: str, prefix: str, key: str = "readme.txt") -> dict:
    """Put, get and list under ``prefix`` of ``bucket``: each call's answer ("ok" or the error code)."""
    return {
        "put": s3_answer(s3.put_object, Bucket=bucket, Key=f"{prefix}{key}", Body=b"written by a pod"),
        "get": s3_answer(s3.get_object, Bucket=bucket, Key=f"{prefix}{key}"),
        "list": s3_answer(s3.list_objects_v2, Bucket=bucket, Prefix=prefix),
    }


def demo(sandbox, api: KubeApi, bucket: str) -> list[str]:
    """A line per Pod Identity association: the role a pod of it gets, and what it may do under each team's prefix."""
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import naming, team_namespace

    eks = sandbox.boto3_client("eks")
    found = []
    for cluster in eks.list_clusters()["clusters"]:
        for association in eks.list_pod_identity_associations(clusterName=cluster)["associations"]:
            labels = (api.get("Namespace", association["namespace"]) or {}).get("metadata", {}).get("labels") or {}
            # Task Governance labels the team namespace with the team of its quota.
            found.append((cluster, association, labels.get(team_namespace.ALLOCATION_LABEL)))
    teams = sorted({team for _, _, team in found if team})
    lines = []
    for cluster, association, team in sorted(found, key=lambda f: (f[0], f[2] or "", f[1]["namespace"])):
        namespace, service_account = association["namespace"], association["serviceAccount"]
        answer = credentials_of(sandbox, api, cluster, namespace, service_account, "pod-identity-demo")
        if "refused" in answer:
            lines.append(f"{namespace}/{service_account}: no credentials ({answer['refused']})")
            continue
        s3 = pod_client(sandbox, "s3", answer)
        cells = []
        for other in teams + [None]:
            prefix = naming.s3_prefix(other) if other else ""
            access = prefix_access(s3, bucket, prefix)
            verdict = "allowed" if set(access.values()) == {"ok"} else "denied" if "ok" not in access.values() else "partly: %s" % access
            cells.append(f"{prefix or '(the bucket root)'} {verdict}")
        role = answer["assumedRoleUser"]["arn"].split("/")[1]
        lines.append(f"{team or namespace}: a pod of {namespace}/{service_account} runs as role {role}: " + ", ".join(cells))
    return lines


def main() -> int:
    """Print the demo's lines; fail (2) when there is nothing to show, which means the demo did not build what it shows.

    ``make demo`` runs it after site.yml in ``python -m sandbox run``, which gives the sandbox's API server as
    ``K8S_AUTH_KUBECONFIG``: without one (``SANDBOX_KUBERNETES=off``) site.yml made no namespace objects and no
    Pod Identity association, so a demo that exits 0 there would claim what it did not show.
    """
    from sandbox.client import SandboxClient
    from sandbox.seed import load_sample

    kubeconfig = os.environ.get("K8S_AUTH_KUBECONFIG")
    if not kubeconfig or not Path(kubeconfig).is_file():
        where = f"{kubeconfig} does not exist" if kubeconfig else "K8S_AUTH_KUBECONFIG is not set"
        print(
            f"pod_identity_agent: no Kubernetes API server ({where}), so no pod to ask EKS Auth for credentials. Run it in "
            "`python -m sandbox run` with the sandbox's API server (not SANDBOX_KUBERNETES=off), after site.yml, as make demo does.",
            file=sys.stderr,
        )
        return 2
    root = Path(__file__).resolve().parents[2]
    bucket = load_sample(root).get("hyperpod_data_bucket", "hyperpod-team-data")
    lines = demo(SandboxClient(), KubeApi(Path(kubeconfig).parent), bucket)
    if not lines:
        print(
            "pod_identity_agent: no Pod Identity association in the sandbox's EKS clusters; site.yml gives each team's service account "
            "one when hyperpod_kubernetes.kubeconfig is set (the sandbox inventory sets it from K8S_AUTH_KUBECONFIG)",
            file=sys.stderr,
        )
        return 2
    print(f"Pod Identity: what each team's pods may put, get and list in s3://{bucket}/ (a pod's token exchanged with EKS Auth, then S3)")
    for line in lines:
        print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
