"""Amazon Managed Service for Prometheus' query API, answered by a real Prometheus.

AMP serves the Prometheus-compatible HTTP API of a workspace at
``https://aps-workspaces.<region>.amazonaws.com/workspaces/<id>/api/v1/<api>`` ("Query using
Prometheus-compatible APIs", AMP user guide); requests are signed with SigV4 for the service ``aps``.
This addition serves the same paths on the sandbox's endpoint for ``query`` and ``query_range``:

- a request that is not signed for ``aps`` in the workspace's Region, with a known access key and
  a signature that matches, is refused with 403 (``MissingAuthenticationTokenException``,
  ``UnrecognizedClientException`` or ``InvalidSignatureException``), as AWS refuses it;
- a workspace that does not exist (or was deleted) is 404 ``ResourceNotFoundException``; one that
  is not ``ACTIVE`` is 409 ``ConflictException``;
- anything else is forwarded, method, query string and form body unchanged, to the Prometheus
  whose URL the sandbox was given (``SANDBOX_PROMETHEUS_URL`` in its environment, or
  ``PUT /_sandbox/upstreams {"prometheus": "http://127.0.0.1:9090"}``), and its answer is returned
  as it is. Without one, 503. Every workspace of the sandbox reads that one Prometheus.

The caller never learns that a Prometheus is behind it: the modules ask the workspace's URL on the
endpoint they are given, as they would ask AWS.
"""

from __future__ import annotations

import hmac
import json
import re
import urllib.error
import urllib.request

import moto.amp.urls
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from sandbox import core
from sandbox.client import SANDBOX_CREDENTIALS

PATH = "{0}/workspaces/(?P<workspace_id>[^/]+)/api/v1/(?P<api>query|query_range)$"
_AUTH = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request,\s*"
    r"SignedHeaders=(?P<headers>[^,]+),\s*Signature=(?P<signature>[0-9a-f]+)"
)
QUERY_PATH = re.compile(r"^/workspaces/([^/]+)/api/v1/(query|query_range)$")
FORWARDED_TIMEOUT = 120


def _answer(status: int, code: str, message: str):
    return status, {"Content-Type": "application/json", "x-amzn-ErrorType": code}, json.dumps({"__type": code, "message": message})


def unsigned():
    return _answer(403, "MissingAuthenticationTokenException", "Missing Authentication Token")


def _secret_of(access_key: str):
    """(account, secret) of an access key the sandbox issued: its own, an IAM user's, or an assumed role's."""
    from moto.iam.models import get_account_id_from, iam_backends
    from moto.sts.models import sts_backends

    account = get_account_id_from(access_key)
    if access_key == SANDBOX_CREDENTIALS["AWS_ACCESS_KEY_ID"]:
        return account, SANDBOX_CREDENTIALS["AWS_SECRET_ACCESS_KEY"], None
    for partition in iam_backends.get(account, {}).values():
        for user in partition.users.values():
            for key in user.access_keys:
                if key.access_key_id == access_key and key.status == "Active":
                    return account, key.secret_access_key, None
    for backend in sts_backends.get(account, {}).values():
        for role in getattr(backend, "assumed_roles", []):
            if role.access_key_id == access_key:
                return account, role.secret_access_key, role.session_token
    return account, None, None


def _signature_ok(request, auth, secret: str, token) -> bool:
    """Recompute the SigV4 signature over the headers the caller signed (botocore's own canonical form)."""
    signed = auth["headers"].split(";")
    headers = {name: request.headers.get(name, "") for name in signed}
    if token and request.headers.get("X-Amz-Security-Token") != token:
        return False
    url = request.base_url + ("?" + request.query_string.decode() if request.query_string else "")
    copy = AWSRequest(method=request.method, url=url, data=request.get_data(), headers=headers)
    copy.context["timestamp"] = request.headers.get("X-Amz-Date", "")
    signer = SigV4Auth(Credentials(auth["key"], secret, token), auth["service"], auth["region"])
    canonical = signer.canonical_request(copy)
    expected = signer.signature(signer.string_to_sign(copy, canonical), copy)
    return hmac.compare_digest(expected, auth["signature"])


def _workspace(account: str, region: str, workspace_id: str):
    from moto.amp.models import amp_backends

    backend = amp_backends[account][region]
    try:
        return backend.describe_workspace(workspace_id)
    except core.AwsError:
        return None


def _forward(request, api: str):
    upstream = core.UPSTREAMS.get("prometheus")
    if not upstream:
        return _answer(503, "ServiceUnavailableException", "the sandbox has no Prometheus to answer queries (SANDBOX_PROMETHEUS_URL)")
    url = "%s/api/v1/%s" % (upstream.rstrip("/"), api)
    if request.query_string:
        url += "?" + request.query_string.decode()
    body = request.get_data() if request.method == "POST" else None
    forwarded = urllib.request.Request(url, data=body, method=request.method)
    if body is not None:
        forwarded.add_header("Content-Type", request.headers.get("Content-Type", "application/x-www-form-urlencoded"))
    try:
        with urllib.request.urlopen(forwarded, timeout=FORWARDED_TIMEOUT) as answer:  # noqa: S310 - a loopback URL the sandbox was given
            return answer.status, {"Content-Type": answer.headers.get("Content-Type", "application/json")}, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, {"Content-Type": error.headers.get("Content-Type", "application/json")}, error.read()


def query_handler(request, full_url, headers):
    workspace_id, api = QUERY_PATH.search(request.path).groups()
    auth = _AUTH.match(request.headers.get("Authorization", ""))
    if auth is None:
        return unsigned()
    account, secret, token = _secret_of(auth["key"])
    if secret is None:
        return _answer(403, "UnrecognizedClientException", "The security token included in the request is invalid.")
    if auth["service"] != "aps" or not _signature_ok(request, auth, secret, token):
        return _answer(403, "InvalidSignatureException", "The request signature we calculated does not match the signature you provided.")
    workspace = _workspace(account, auth["region"], workspace_id)
    if workspace is None:
        return _answer(404, "ResourceNotFoundException", "Workspace %s not found" % workspace_id)
    if workspace.status_code != "ACTIVE":
        return _answer(409, "ConflictException", "Workspace %s is %s" % (workspace_id, workspace.status_code))
    return _forward(request, api)


def install() -> None:
    moto.amp.urls.url_paths[PATH] = query_handler
