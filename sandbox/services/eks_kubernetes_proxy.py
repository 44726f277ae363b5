"""The Kubernetes API as an AWS service reaches it for a caller: ``eks:AccessKubernetesApi``, and ``eks:MutateViaKubernetesApi`` to write.

EKS User Guide, "Grant AWS services write access to Kubernetes APIs" (mutate-workloads.html): for an AWS service to
write Kubernetes objects in a cluster for a principal (the guide names SageMaker HyperPod's deployments from SageMaker AI
Studio), the principal needs ``eks:AccessKubernetesApi`` and ``eks:MutateViaKubernetesApi``: "Write operations such as
create, update, and delete require both permissions—if either permission is missing, write operations will fail";
CloudTrail records the writes as ``createKubernetesObject``, ``updateKubernetesObject`` and ``deleteKubernetesObject``.
The Service Authorization Reference ("Actions, resources, and condition keys for Amazon Elastic Kubernetes Service")
lists both on the resource type ``cluster*`` with the condition key ``aws:ResourceTag/${TagKey}``:
``AccessKubernetesApi`` "to view Kubernetes objects via AWS EKS console" (Read), ``MutateViaKubernetesApi`` "to modify
Kubernetes objects via AWS console" (Write).

AWS documents no public endpoint for that path (the console and Studio call it themselves). The sandbox's stand-in
(assumption: the path is the sandbox's own) is ``/clusters/<name>/kubernetes/<Kubernetes API path and query>`` on its
endpoint, signed with SigV4 for ``eks`` by the caller, as any EKS request is. A request is

1. authenticated and authorized by ``sandbox/authorization.py`` (``requests_for`` asks ``requests_for`` here):
   ``eks:AccessKubernetesApi`` on the cluster's ARN for every request, and ``eks:MutateViaKubernetesApi`` as well for a
   write, with the cluster's tags as ``aws:ResourceTag``; a refusal is EKS's ``AccessDeniedException``;
2. mapped to the caller's access entry on the cluster, as EKS maps a principal: the entry's ``username`` (an assumed
   role's ``{{SessionName}}`` filled in) and ``kubernetesGroups``. No entry, or one whose principal was deleted and made
   again (``eks_access.entry_works``), is 401 Unauthorized, as the API server answers a token it cannot map;
3. sent to the sandbox's API server as that user (``Impersonate-User``/``Impersonate-Group`` with the admin certificate):
   its RBAC and admission decide, as for kubectl. The admin key (whose permissions the sandbox never checks) is sent as
   the admin.

Writes, by HTTP method: ``POST`` (create), ``PUT`` (update), ``PATCH`` and ``DELETE`` (delete, deletecollection).
assumption: a ``PATCH`` is an update (``updateKubernetesObject``); the guide names create, update and delete and no
other verb. ``GET`` and ``HEAD`` (get, list, watch) are reads and need ``eks:AccessKubernetesApi`` only.

The access entry's access policies (``AssociateAccessPolicy``) are the API server's authorization webhook's
(``eks_kubernetes_webhook``) and need the entry in the user's ``extra``, which impersonation does not carry: through this
path the entry reaches what its groups are bound to (a team's entry: its namespace, through the team's RoleBinding), as
EKS's own impersonation page says of impersonated users (access-policies.html). Assumption: whether EKS's path for AWS
services applies the access policies is not documented.
"""

from __future__ import annotations

import http.client
import json
import re
from urllib.parse import unquote, urlsplit

SERVICE = "eks"
# The request log's name for it; the IAM actions are ACTIONS.
OPERATION = "AccessKubernetesApi"
PATH = re.compile(r"^/clusters/(?P<clusterName>[^/]+)/kubernetes(?P<path>/.*)$")
READ, WRITE = "eks:AccessKubernetesApi", "eks:MutateViaKubernetesApi"
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def is_request(environ: dict) -> bool:
    return bool(PATH.match(environ.get("PATH_INFO", "")))


def actions(method: str) -> list[str]:
    """What IAM is asked for one request: a read needs AccessKubernetesApi, a write MutateViaKubernetesApi too."""
    return [READ, WRITE] if method.upper() in WRITES else [READ]


def _cluster(account_id: str, region: str, name: str):
    from moto.eks.models import eks_backends

    return eks_backends[account_id][region].clusters.get(name)


def requests_for(environ: dict, region: str, account_id: str) -> list[tuple[str, str, dict]]:
    name = unquote(PATH.match(environ["PATH_INFO"]).group("clusterName"))
    cluster = _cluster(account_id, region, name)
    arn = cluster.arn if cluster is not None else f"arn:aws:eks:{region}:{account_id}:cluster/{name}"
    context = {f"aws:ResourceTag/{k}": v for k, v in ((getattr(cluster, "tags", None) or {}).items())}
    return [(action, arn, dict(context)) for action in actions(environ.get("REQUEST_METHOD", "GET"))]


def _error(status: str, code: str, message: str) -> tuple[str, list, bytes]:
    body = json.dumps({"message": message}).encode()
    return status, [("Content-Type", "application/json"), ("x-amzn-ErrorType", code)], body


def _unauthorized(message: str) -> tuple[str, list, bytes]:
    # The API server's own answer to a request it cannot authenticate.
    status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message, "reason": "Unauthorized", "code": 401}
    return "401 Unauthorized", [("Content-Type", "application/json")], json.dumps(status).encode()


def identity(account_id: str, region: str, cluster_name: str, principal, access_key: str = "") -> tuple[str, list[str]] | None:
    """(username, groups) EKS maps ``principal`` to on the cluster, from its access entry; None when it maps to none.

    Also what EKS's token authenticator maps a token's caller to (``eks_kubernetes_webhook``). The username's
    ``{{SessionNameRaw}}`` is the session's name, ``{{SessionName}}`` the same with each ``@`` made ``-`` (set-custom-username.html
    names both; the difference is aws-iam-authenticator's renderTemplate, an assumption for EKS); ``{{AccountID}}`` and
    ``{{AccessKeyID}}`` are what that authenticator's mappings fill (assumption: no AWS page names them for access entries).
    A username that comes out with a prefix EKS reserves (``system:``, ...) maps to none (assumption: EKS refuses such
    usernames at CreateAccessEntry, eks_access.RESERVED_PREFIXES, and a session name cannot hold a colon).
    """
    cluster = _cluster(account_id, region, cluster_name)
    entries = (cluster.__dict__.get("sandbox_access_entries") or {}) if cluster is not None else {}
    arn = principal.role_arn or principal.user_arn
    entry = entries.get(arn)
    if entry is None:
        return None
    from moto.eks.models import eks_backends

    if not eks_backends[account_id][region].entry_works(cluster_name, arn):
        return None
    username = entry["username"]
    for variable, value in (
        ("{{SessionNameRaw}}", principal.session_name),
        ("{{SessionName}}", (principal.session_name or "").replace("@", "-")),
        ("{{AccountID}}", account_id),
        ("{{AccessKeyID}}", access_key),
    ):
        username = username.replace(variable, value or "")
    from sandbox.services.eks_access import RESERVED_PREFIXES

    if username.startswith(RESERVED_PREFIXES):
        return None
    return username, list(entry.get("kubernetesGroups") or [])


def handle(environ: dict, body: bytes, account_id: str, region: str, principal) -> tuple[str, list, bytes]:
    """Forward an authorized request to the API server as the caller's Kubernetes identity (``principal`` None: the admin)."""
    from sandbox.kube.api import connected

    match = PATH.match(environ["PATH_INFO"])
    cluster_name = unquote(match.group("clusterName"))
    if _cluster(account_id, region, cluster_name) is None:
        return _error("404 Not Found", "ResourceNotFoundException", f"No cluster found for name: {cluster_name}.")
    api = connected()
    if api is None:
        return _error("503 Service Unavailable", "ServerException", "the sandbox runs without a Kubernetes API server")
    headers = {"Accept": environ.get("HTTP_ACCEPT") or "application/json"}
    if environ.get("CONTENT_TYPE"):
        headers["Content-Type"] = environ["CONTENT_TYPE"]
    groups = []
    if principal is not None:
        mapped = identity(account_id, region, cluster_name, principal)
        if mapped is None:
            return _unauthorized("Unauthorized")
        headers["Impersonate-User"], groups = mapped
    server = urlsplit(api.server)
    path = match.group("path") + ("?" + environ["QUERY_STRING"] if environ.get("QUERY_STRING") else "")
    connection = http.client.HTTPSConnection(server.hostname, server.port, context=api.ssl_context, timeout=30)
    try:
        connection.putrequest(environ.get("REQUEST_METHOD", "GET"), path, skip_accept_encoding=True)
        for key, value in headers.items():
            connection.putheader(key, value)
        for group in groups:
            connection.putheader("Impersonate-Group", group)
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body or None)
        answer = connection.getresponse()
        payload = answer.read()
        return f"{answer.status} {answer.reason}", [("Content-Type", answer.getheader("Content-Type") or "application/json")], payload
    finally:
        connection.close()


def install() -> None:
    """Nothing to graft: sandbox/server.py routes the path here (no botocore operation names it)."""
