"""EKS Auth's ``AssumeRoleForPodIdentity``, which moto 5.2.5 lacks: a pod's service-account token for the role of its association.

What the EKS Pod Identity Agent asks on a node for a pod (botocore's ``eks-auth`` model; EKS User Guide,
"Understand how EKS Pod Identity works", pod-id-how-it-works.html, and "Create IAM role with trust policy
required by EKS Pod Identity", pod-id-role.html), done here as EKS does it, against the sandbox's real
Kubernetes API server (``SANDBOX_KUBE_DIR``, the server every sandbox EKS cluster points at):

1. the request is validated against botocore's model (InvalidParameterException), the cluster must exist
   (ResourceNotFoundException);
2. the token is reviewed by the API server (``TokenReview`` with the audience ``pods.eks.amazonaws.com``, the
   audience of the token EKS projects into the pod): a token the server does not authenticate is an
   InvalidTokenException, an expired one an ExpiredTokenException; it must be a service account's token bound to
   a pod (the projected token is), whose name and uid the session tags carry;
3. the association for (cluster, namespace, service account) is looked up (``eks_pod_identity``): none is a
   ResourceNotFoundException;
4. the role's trust policy is evaluated with the collection's evaluator (``plugins/module_utils/iam_evaluation.py``,
   as ``sandbox/authorization.py`` evaluates) for the service principal ``pods.eks.amazonaws.com`` asking
   ``sts:AssumeRole`` and, with session tags, ``sts:TagSession``: the request tags are the six session tags
   (``eks-cluster-arn``, ``eks-cluster-name``, ``kubernetes-namespace``, ``kubernetes-service-account``,
   ``kubernetes-pod-name``, ``kubernetes-pod-uid``; none when the association has ``disableSessionTags``), with
   ``aws:SourceAccount`` and ``aws:SourceArn`` (the cluster's ARN). A trust that does not allow is an
   AccessDeniedException;
5. the credentials are an STS session of the role (moto's, so ``sandbox/authorization.py`` finds and enforces them:
   the role's policies, and the session tags as ``aws:PrincipalTag/*``), named ``eks-<cluster>-<pod>-<uuid>``.

The codes are the model's; the messages are the sandbox's own. What the sandbox does not do: cross-account
``targetRoleArn`` chaining (refused as an InvalidRequestException rather than answered with the wrong role), and
telling clusters apart by their tokens (every sandbox cluster points at the same API server and issuer).
"""

from __future__ import annotations

import json
import re
import uuid
from urllib.parse import unquote

from ansible_collections.hyperpod.tenancy.plugins.module_utils import iam_evaluation

from sandbox.core import AwsError, validate_request

SERVICE = "eks-auth"
OPERATION = "AssumeRoleForPodIdentity"
PATH = re.compile(r"^/clusters/(?P<clusterName>[^/]+)/assume-role-for-pod-identity$")
# The audience of the token EKS projects into the pod, and the service principal the role trusts.
AUDIENCE = PRINCIPAL = "pods.eks.amazonaws.com"
POD_NAME, POD_UID = "authentication.kubernetes.io/pod-name", "authentication.kubernetes.io/pod-uid"
SERVICE_ACCOUNT_USER = re.compile(r"^system:serviceaccount:(?P<namespace>[^:]+):(?P<name>[^:]+)$")
# The sandbox issues the session for STS's default hour.
SESSION_SECONDS = 3600


def error(code: str, message: str) -> AwsError:
    """An error of the model, with the HTTP status the model gives it."""
    shape = {s.name: s for s in _model().error_shapes}[code]
    return AwsError(code, message, shape.metadata.get("error", {}).get("httpStatusCode", 400))


def _model():
    from sandbox.core import service_model

    return service_model(SERVICE).operation_model(OPERATION)


def is_request(environ: dict) -> bool:
    return environ.get("REQUEST_METHOD") == "POST" and PATH.match(environ.get("PATH_INFO", "")) is not None


def _params(environ: dict, body: bytes) -> dict:
    try:
        params = json.loads(body or b"{}")
    except ValueError:
        raise error("InvalidParameterException", "The request body is not valid JSON") from None
    if not isinstance(params, dict):
        raise error("InvalidParameterException", "The request body is not a JSON object")
    params["clusterName"] = unquote(PATH.match(environ["PATH_INFO"]).group("clusterName"))
    try:
        validate_request(SERVICE, OPERATION, params)
    except AwsError as invalid:
        raise error("InvalidParameterException", json.loads(invalid.description)["message"]) from None
    return params


# --- 2. the token, reviewed by the cluster's API server ------------------------------------------


def review(token: str) -> dict:
    """(namespace, service account, pod name, pod uid) of a pod's service-account token, as the API server authenticates it."""
    from sandbox.kube.api import KubeError, connected

    api = connected()
    if api is None:
        raise error("ServiceUnavailableException", "The cluster's Kubernetes API server is not running (SANDBOX_KUBE_DIR)")
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token, "audiences": [AUDIENCE]}}
    try:
        status = api.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", review).get("status") or {}
    except (KubeError, OSError) as failed:
        raise error("InternalServerException", f"The token could not be reviewed: {failed}") from None
    if not status.get("authenticated"):
        reason = status.get("error") or "the token is not authenticated"
        # kube-apiserver: "service account token has expired" (pkg/serviceaccount/claims.go).
        if "has expired" in reason:
            raise error("ExpiredTokenException", f"The service account token has expired: {reason}")
        raise error("InvalidTokenException", f"The service account token is invalid: {reason}")
    if AUDIENCE not in (status.get("audiences") or []):
        raise error("InvalidTokenException", f"The service account token's audience is not {AUDIENCE}")
    user = status.get("user") or {}
    account = SERVICE_ACCOUNT_USER.match(user.get("username", ""))
    extra = user.get("extra") or {}
    if account is None or not extra.get(POD_NAME) or not extra.get(POD_UID):
        raise error("InvalidTokenException", "The token is not a service account token bound to a pod")
    return {"namespace": account.group("namespace"), "service_account": account.group("name"), "pod_name": extra[POD_NAME][0], "pod_uid": extra[POD_UID][0]}


# --- 3 and 4. the association, and the role's trust ----------------------------------------------


def session_tags(cluster, subject: dict) -> dict:
    """The session tags EKS Pod Identity sets (pod-id-abac.html, "List of session tags added by EKS Pod Identity")."""
    return {
        "eks-cluster-arn": cluster.arn,
        "eks-cluster-name": cluster.name,
        "kubernetes-namespace": subject["namespace"],
        "kubernetes-service-account": subject["service_account"],
        "kubernetes-pod-name": subject["pod_name"],
        "kubernetes-pod-uid": subject["pod_uid"],
    }


def trust_allows(trust_policy, role_arn: str, tags: dict, account_id: str, cluster_arn: str, region: str) -> bool:
    """Whether the role's trust policy lets pods.eks.amazonaws.com assume it (and tag the session) for this request."""
    context = {f"aws:RequestTag/{key}": value for key, value in tags.items()}
    context.update({"aws:SourceAccount": account_id, "aws:SourceArn": cluster_arn, "aws:PrincipalServiceName": PRINCIPAL, "aws:RequestedRegion": region})
    if tags:
        context["aws:TagKeys"] = list(tags)
    principal = {"service": PRINCIPAL, "arns": []}
    for action in ("sts:AssumeRole", "sts:TagSession") if tags else ("sts:AssumeRole",):
        effects = {m[0] for m in iam_evaluation.matching_statements(iam_evaluation.load(trust_policy), action, role_arn, context, principal, "TrustPolicy")}
        if "Deny" in effects or "Allow" not in effects:
            return False
    return True


def assume_role_for_pod_identity(params: dict, account_id: str, region: str) -> dict:
    from moto.eks.models import eks_backends
    from moto.iam.models import iam_backends
    from moto.sts.models import sts_backends

    eks = eks_backends[account_id][region]
    cluster_name = params["clusterName"]
    if cluster_name not in eks.clusters:
        raise error("ResourceNotFoundException", f"No cluster found for name: {cluster_name}.")
    cluster = eks.clusters[cluster_name]
    subject = review(params["token"])
    associations = eks._associations(cluster_name).values()
    found = [a for a in associations if (a["namespace"], a["serviceAccount"]) == (subject["namespace"], subject["service_account"])]
    if not found:
        who = f"service account {subject['service_account']} in namespace {subject['namespace']}"
        raise error("ResourceNotFoundException", f"No Pod Identity association found for {who} of cluster {cluster_name}.")
    association = found[0]
    if association.get("targetRoleArn"):
        raise error("InvalidRequestException", "The sandbox does not chain to a targetRoleArn")
    tags = {} if association.get("disableSessionTags") else session_tags(cluster, subject)
    denied = error("AccessDeniedException", f"Unauthorized Exception! EKS does not have permissions to assume the associated role {association['roleArn']}.")
    try:
        role = iam_backends[account_id]["global"].get_role_by_arn(association["roleArn"])
    except Exception:  # noqa: BLE001 - a role that no longer exists cannot be assumed
        raise denied from None
    if not trust_allows(role.assume_role_policy_document, role.arn, tags, account_id, cluster.arn, region):
        raise denied
    session_name = f"eks-{cluster_name}-{subject['pod_name']}-{uuid.uuid4()}"[:64]
    session = sts_backends[account_id]["aws"].assume_role(
        region_name=region, role_session_name=session_name, role_arn=role.arn, policy=None, duration=SESSION_SECONDS, external_id=None,
    )  # fmt: skip
    # sandbox/authorization.py reads them as aws:PrincipalTag/* (a session tag wins over the role's tag of that key).
    session.session_tags = dict(tags)
    return {
        "subject": {"namespace": subject["namespace"], "serviceAccount": subject["service_account"]},
        "audience": AUDIENCE,
        "podIdentityAssociation": {"associationArn": association["associationArn"], "associationId": association["associationId"]},
        "assumedRoleUser": {"arn": session.arn, "assumeRoleId": session.user_id},
        "credentials": {
            "sessionToken": session.session_token,
            "secretAccessKey": session.secret_access_key,
            "accessKeyId": session.access_key_id,
            "expiration": int(session.expiration.timestamp()),
        },
    }


def handle(environ: dict, body: bytes, access_key: str, region: str) -> tuple[str, list, bytes]:
    """(status, headers, body) of an AssumeRoleForPodIdentity request, in REST-JSON."""
    from moto.iam.models import get_account_id_from

    try:
        answer = assume_role_for_pod_identity(_params(environ, body), get_account_id_from(access_key), region)
    except AwsError as failed:
        payload = json.dumps({"message": json.loads(failed.description)["message"]}).encode()
        headers = [("Content-Type", "application/json"), ("x-amzn-ErrorType", failed.error_type), ("x-amzn-RequestId", str(uuid.uuid4()))]
        return f"{failed.code} Error", headers, payload
    return "200 OK", [("Content-Type", "application/json"), ("x-amzn-RequestId", str(uuid.uuid4()))], json.dumps(answer).encode()


def install() -> None:
    """Nothing to graft: sandbox/server.py routes eks-auth's one operation here (moto has no such service)."""
