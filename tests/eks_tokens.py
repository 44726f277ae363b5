"""A Kubernetes bearer token made as ``aws eks get-token`` makes it, and the API server asked with one.

awscli's ``customizations/eks/get_token.py`` (aws/aws-cli): an STS client whose ``GetCallerIdentity`` takes the cluster's
name as the parameter ``x-k8s-aws-id``, moved into the request's context (``provide-client-params``) and sent as the
header of that name (``before-sign``), so SigV4 signs it in; the URL presigned by botocore for 60 seconds; the token is
``k8s-aws-v1.`` and the URL in unpadded base64url. Here the client is botocore's own, pointed at the sandbox.
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.request
from pathlib import Path

import botocore.session

HEADER = "x-k8s-aws-id"
URL_TIMEOUT = 60
PREFIX = "k8s-aws-v1."


def eks_token(endpoint: str, region: str, credentials: dict, cluster_name: str) -> str:
    """The token of ``credentials`` (AccessKeyId, SecretAccessKey, SessionToken) for ``cluster_name``."""
    sts = botocore.session.Session().create_client(
        "sts", region_name=region, endpoint_url=endpoint, aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"], aws_session_token=credentials.get("SessionToken"),
    )  # fmt: skip

    def retrieve_k8s_aws_id(params, context, **_):
        if HEADER in params:
            context[HEADER] = params.pop(HEADER)

    def inject_k8s_aws_id_header(request, **_):
        if HEADER in request.context:
            request.headers[HEADER] = request.context[HEADER]

    sts.meta.events.register("provide-client-params.sts.GetCallerIdentity", retrieve_k8s_aws_id)
    sts.meta.events.register("before-sign.sts.GetCallerIdentity", inject_k8s_aws_id_header)
    url = sts.generate_presigned_url("get_caller_identity", Params={HEADER: cluster_name}, ExpiresIn=URL_TIMEOUT, HttpMethod="GET")
    return PREFIX + base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")


def as_token(server: str, ca: Path, token: str, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    """(HTTP status, answer) of a request to the API server with ``token`` as its bearer token, as kubectl sends it."""
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json", "Content-Type": "application/json"}
    request = urllib.request.Request(server + path, data=data, method=method, headers=headers)
    context = ssl.create_default_context(cafile=str(ca))
    try:
        with urllib.request.urlopen(request, context=context, timeout=30) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")
