"""The sandbox's HTTP server: moto in server mode, our additions, a request log and fault injection.

Administrative endpoints (never logged, never faulted):

- ``GET /_sandbox/health``: ``{"status": "ok", "instance": ...}``, the id the sandbox was started with (``sandbox/launch.py``)
- ``GET /_sandbox/requests`` (the log) and ``DELETE /_sandbox/requests`` (clear it)
- ``GET|PUT /_sandbox/faults``: ``{"throttle_rate": 0.2, "error_rate": 0.05, "denial_rate": 0,
  "latency_ms": 0, "operations": ["*"], "seed": 7, "iam_propagation_s": 0.2}``; rates are probabilities per request
  (``iam_propagation_s``: how long a new IAM role is refused by the services it is passed to, ``sandbox/iam_propagation.py``). Clients retry a
  throttle or an error; a denial (AccessDenied, as for a permission the caller lacks) they do not. ``"times": 2`` faults
  only the first two requests the rates fault (then answers them all), so a test sees a call retried, then answered.
  ``"rate_limits": {"sso-admin": 20}`` throttles what a service receives beyond that many requests a second (``RATE_LIMITS``: AWS's;
  each API's for a ``PER_API`` service, the Identity Store).
  ``operations`` names an operation (``CheckAccessNotGranted``), ``service:operation`` (``iam:SimulatePrincipalPolicy``,
  ``accessanalyzer:CheckAccessNotGranted``) or ``service:*``
- ``GET|PUT /_sandbox/config``: ``{"status_delay": 0.5, "legacy_sso_domains": 0, "identity_center_home": "", "iam_roles_per_account": 1000, ...}``
  (``sandbox.core.SETTINGS``, the account's quotas among them)
- ``GET|PUT /_sandbox/upstreams``: ``{"prometheus": "http://127.0.0.1:9090"}``, the real servers
  the sandbox forwards to (a reset keeps them: they are where the sandbox runs, not AWS state)
- ``GET /_sandbox/access-entry-works?cluster=...&principal=...`` (``account``, ``region``): ``{"works": ...}``, whether an EKS
  access entry still maps its principal (``services/eks_access.py`` ``entry_works``)
- ``GET /_sandbox/kubernetes``: ``{"endpoint": ..., "kubeconfig": <path of the admin kubeconfig>}``
  of the API server the EKS clusters point at (``{}`` without one)
- ``POST /_sandbox/kubernetes/token-review`` and ``/_sandbox/kubernetes/subject-access-review``: the TokenReview and
  SubjectAccessReview webhooks of the sandbox's kube-apiserver (``services/eks_kubernetes_webhook.py``): EKS tokens and
  access policies
- ``POST /_sandbox/reset``: moto's state, our additions' state, the log, the faults and the settings, and what
  the Kubernetes API server holds beyond a new cluster's own (``sandbox.kube.task_governance.reset``)
"""

from __future__ import annotations

import io
import json
import random
import re
import threading
import time
import traceback
from dataclasses import asdict, dataclass, field
from urllib.parse import parse_qs

from werkzeug.serving import make_server
from werkzeug.wrappers import Request

from sandbox import access_analyzer, authorization, core, iam_propagation, services
from sandbox.kube import api as kube_api
from sandbox.services import amp_query, eks_auth, eks_kubernetes_proxy, eks_kubernetes_webhook

READ_PREFIXES = ("Describe", "List", "Get", "Head", "Search", "BatchGet", "Query", "Scan", "Lookup", "Check", "Select", "IsMemberInGroups", "Simulate")
# Signing names that differ from the boto3 client name.
CLIENT_NAMES = {"sso": "sso-admin", "monitoring": "cloudwatch", "execute-api": "apigateway", "elasticfilesystem": "efs", "aps": "amp"}
CLIENT_NAMES["access-analyzer"] = "accessanalyzer"
_CREDENTIAL_SCOPE = re.compile(r"Credential=[^/]+/\d{8}/([^/]+)/([^/]+)/aws4_request")


@dataclass
class RequestRecord:
    seq: int
    time: float
    service: str
    operation: str
    kind: str
    region: str
    status: int = 0
    fault: str = ""
    # Who signed ("admin" for the admin key, else the principal's ARN) and what IAM was asked: [action, resource, context].
    principal: str = ""
    asked: list = field(default_factory=list)


class RequestLog:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[RequestRecord] = []
        self._seq = 0

    def add(self, service: str, operation: str, region: str) -> RequestRecord:
        kind = "read" if operation.startswith(READ_PREFIXES) else "write"
        with self._lock:
            self._seq += 1
            record = RequestRecord(self._seq, time.time(), service, operation, kind, region)
            self._records.append(record)
            return record

    def as_list(self) -> list[dict]:
        with self._lock:
            return [asdict(r) for r in self._records]

    def clear(self) -> None:
        with self._lock:
            self._records.clear()


# What AWS throttles an account at, in requests per second, for ``Faults.rate_limits``. IAM Identity Center's APIs
# have "a collective throttle limit of 20 transactions per second (TPS)", while "Identity Store APIs have a throttle
# limit of 20 transactions per second (TPS) per API. This limit applies per Identity Store instance" (Quotas and limits
# in IAM Identity Center; an account has one instance); IAM and SageMaker publish no rate for these APIs, and are taken
# at the same 20 (an assumption: both throttle low in practice).
RATE_LIMITS = {"sso-admin": 20, "identitystore": 20, "iam": 20, "sagemaker": 20}
# The services whose rate is each API's, not the service's collective one.
PER_API = frozenset({"identitystore"})


def rate_key(service: str, operation: str) -> str:
    """What a request's rate is counted under: its service, or its operation of a ``PER_API`` service."""
    return f"{service}:{operation}" if service in PER_API else service


@dataclass
class Faults:
    throttle_rate: float = 0.0
    error_rate: float = 0.0
    denial_rate: float = 0.0
    latency_ms: int = 0
    operations: list = field(default_factory=lambda: ["*"])
    seed: int | None = None
    # Seconds a new IAM role stays unusable to the services it is passed to (sandbox/iam_propagation.py).
    iam_propagation_s: float = iam_propagation.DEFAULT_DELAY
    # Requests per second each service accepts from the account (RATE_LIMITS as AWS sets them); more are throttled.
    rate_limits: dict = field(default_factory=dict)
    # How many requests the rates fault in all, None for no end: a throttle N times, then an answer.
    times: int | None = None

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)
        self._lock = threading.Lock()
        self._faulted = 0
        iam_propagation.set_delay(self.iam_propagation_s)
        # A token bucket per rate_key, made full at its first request: its rate a second, one second's worth saved up,
        # as AWS's throttling allows a burst. [tokens, time of the last refill]
        self._buckets = {}

    def admit(self, service: str, operation: str) -> bool:
        """Whether the service's rate limit (its operation's, ``PER_API``) lets one more request in now (it takes a token if so)."""
        if service not in self.rate_limits:
            return True
        rate = float(self.rate_limits[service])
        burst = max(1.0, rate)
        with self._lock:
            bucket = self._buckets.setdefault(rate_key(service, operation), [burst, time.monotonic()])
            tokens, last = bucket
            now = time.monotonic()
            tokens = min(burst, tokens + (now - last) * rate)
            admitted = tokens >= 1
            bucket[0], bucket[1] = tokens - 1 if admitted else tokens, now
            return admitted

    def applies_to(self, service: str, operation: str) -> bool:
        return any(name in ("*", operation, f"{service}:{operation}", f"{service}:*") for name in self.operations)

    def draw(self) -> str:
        with self._lock:
            if self.times is not None and self._faulted >= self.times:
                return ""
            roll = self._random.random()
            fault = ""
            if roll < self.throttle_rate:
                fault = "throttle"
            elif roll < self.throttle_rate + self.error_rate:
                fault = "error"
            elif roll < self.throttle_rate + self.error_rate + self.denial_rate:
                fault = "deny"
            self._faulted += bool(fault)
            return fault

    def public(self) -> dict:
        return {k: v for k, v in asdict(self).items() if not k.startswith("_")}


def identify(environ: dict, body: bytes) -> tuple[str, str, str, str]:
    """Return (client name, operation, region, protocol family) of an AWS request."""
    # The signing scope is in the Authorization header, or in X-Amz-Credential for a presigned URL.
    presigned = parse_qs(environ.get("QUERY_STRING", "")).get("X-Amz-Credential", [""])[0]
    match = _CREDENTIAL_SCOPE.search(environ.get("HTTP_AUTHORIZATION", "") or "Credential=" + presigned)
    region, signing_name = (match.group(1), match.group(2)) if match else ("", "")
    service = CLIENT_NAMES.get(signing_name, signing_name)
    target = environ.get("HTTP_X_AMZ_TARGET")
    if target:
        return service, target.split(".")[-1], region, "json"
    action = parse_qs(environ.get("QUERY_STRING", "")).get("Action")
    if not action and environ.get("CONTENT_TYPE", "").startswith("application/x-www-form-urlencoded"):
        action = parse_qs(body.decode("utf-8", "replace")).get("Action")
    if action:
        return service, action[0], region, "query"
    try:
        protocol = core.service_model(service).protocol
    except Exception:  # noqa: BLE001 - not a service botocore knows: answer faults as JSON
        protocol = "rest-json"
    if service == "amp" and amp_query.QUERY_PATH.search(environ.get("PATH_INFO", "")):
        return service, "QueryMetrics", region, protocol  # the IAM action of AMP's query API (a read)
    return service, _rest_operation(service, environ, body), region, protocol


def _rest_operation(service: str, environ: dict, body: bytes) -> str:
    from moto.core.request import Request as MotoRequest
    from moto.core.routing import get_service_router

    try:
        request = MotoRequest(dict(environ, **{"wsgi.input": io.BytesIO(body)}))
        operation, _ = get_service_router(service).match(request)
        return operation.name
    except Exception:  # noqa: BLE001 - the log must never break a request: fall back to method and path
        return f"{environ.get('REQUEST_METHOD')} {environ.get('PATH_INFO')}"


def fault_response(kind: str, protocol: str, service: str = "") -> tuple[str, list, bytes]:
    """A throttling or server error in the shape the service's protocol gives it."""
    if service == "accessanalyzer":
        return access_analyzer.fault(kind)
    code, status, message = {
        "throttle": ("ThrottlingException", "400 Bad Request", "Rate exceeded"),
        "error": ("InternalFailure", "500 Internal Server Error", "We encountered an internal error. Please try again."),
        "deny": ("AccessDeniedException", "400 Bad Request", "User: sandbox is not authorized to perform this action"),
    }[kind]
    if protocol == "rest-xml":
        # S3 throttles with 503 SlowDown and fails with 500 InternalError, in a bare <Error>.
        code, status, message = {
            "throttle": ("SlowDown", "503 Slow Down", "Please reduce your request rate."),
            "error": ("InternalError", "500 Internal Server Error", "We encountered an internal error. Please try again."),
            "deny": ("AccessDenied", "403 Forbidden", "Access Denied"),
        }[kind]
        body = f"<Error><Code>{code}</Code><Message>{message}</Message><RequestId>sandbox-fault</RequestId></Error>".encode()
        return status, [("Content-Type", "application/xml")], body
    if protocol == "query":
        code = {"throttle": "Throttling", "deny": "AccessDenied"}.get(kind, code)
        status = "403 Forbidden" if kind == "deny" else status
        body = (
            f"<ErrorResponse><Error><Type>Sender</Type><Code>{code}</Code><Message>{message}</Message></Error>"
            "<RequestId>sandbox-fault</RequestId></ErrorResponse>"
        ).encode()
        return status, [("Content-Type", "text/xml")], body
    body = json.dumps({"__type": code, "message": message}).encode()
    return status, [("Content-Type", "application/x-amz-json-1.1"), ("x-amzn-ErrorType", code)], body


class SandboxApp:
    """WSGI middleware around moto's dispatcher."""

    def __init__(self, moto_app, instance: str) -> None:
        self.moto_app = moto_app
        self.instance = instance
        self.log = RequestLog()
        self.faults = Faults()

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path.startswith("/_sandbox/"):
            return self.admin(environ, start_response)
        if path.startswith("/moto-api"):
            return self.moto_app(environ, start_response)
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        environ["wsgi.input"] = io.BytesIO(body)
        if not environ.get("HTTP_AUTHORIZATION") and amp_query.QUERY_PATH.search(path):
            # AWS knows the service from the host (aps-workspaces); moto would need the signature to.
            status, headers, payload = amp_query.unsigned()
            start_response("%d Forbidden" % status, list(headers.items()) + [("Content-Length", str(len(payload)))])
            return [payload.encode()]
        service, operation, region, protocol = identify(environ, body)
        if service == "accessanalyzer" and path == access_analyzer.PATH:
            operation = "CheckAccessNotGranted"  # moto has no router for the service to name it
        if service == eks_auth.SERVICE and eks_auth.is_request(environ):
            operation = eks_auth.OPERATION  # nor for EKS Auth
        if service == eks_kubernetes_proxy.SERVICE and eks_kubernetes_proxy.is_request(environ):
            operation = eks_kubernetes_proxy.OPERATION  # nor for the Kubernetes API through EKS (no botocore operation)
        record = self.log.add(service, operation, region)
        refusal = authorization.enforce(environ, body, service, operation, protocol)
        if authorization.ASKED in environ:
            record.principal, asked = environ[authorization.ASKED]
            record.asked = [list(item) for item in asked]
        if refusal is not None:
            status, headers, payload = refusal
            record.status = int(status.split()[0])
            start_response(status, headers + [("Content-Length", str(len(payload)))])
            return [payload]
        faults = self.faults
        throttled = not faults.admit(service, operation)
        if throttled or faults.applies_to(service, operation):
            if faults.latency_ms:
                time.sleep(faults.latency_ms / 1000)
            fault = "throttle" if throttled else faults.draw()
            if fault:
                record.fault = fault
                status, headers, payload = fault_response(fault, protocol, service)
                record.status = int(status.split()[0])
                start_response(status, headers + [("Content-Length", str(len(payload)))])
                return [payload]
        # Access Analyzer is answered here, moto having none: after the faults, which reach it as any other service.
        if service == "accessanalyzer" and path == access_analyzer.PATH:
            status, headers, payload = access_analyzer.handle(environ, body)
            record.status = int(status.split()[0])
            start_response(status, headers + [("Content-Length", str(len(payload)))])
            return [payload]
        if service == eks_auth.SERVICE and operation == eks_auth.OPERATION:
            status, headers, payload = eks_auth.handle(environ, body, (authorization.credentials(environ) or ("",))[0], region)
            record.status = int(status.split()[0])
            start_response(status, headers + [("Content-Length", str(len(payload)))])
            return [payload]

        if service == eks_kubernetes_proxy.SERVICE and operation == eks_kubernetes_proxy.OPERATION:
            access_key, _region, _signing, token = authorization.credentials(environ)
            principal = authorization.principal_for(access_key, token)[1]
            # The admin key acts in moto's default account, as every admin request does.
            account_id = principal.account_id if principal is not None else moto_default_account()
            status, headers, payload = eks_kubernetes_proxy.handle(environ, body, account_id, region, principal)
            record.status = int(status.split()[0])
            start_response(status, headers + [("Content-Length", str(len(payload)))])
            return [payload]

        def recording_start_response(status, headers, exc_info=None):
            record.status = int(status.split()[0])
            return start_response(status, headers, exc_info)

        return self.moto_app(environ, recording_start_response)

    def admin(self, environ, start_response):
        try:
            return self._admin(environ, start_response)
        except Exception as error:  # noqa: BLE001 - the test that called says what went wrong, not only "500"
            body = json.dumps({"message": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()}).encode()
            start_response("500 Internal Server Error", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]

    def _admin(self, environ, start_response):
        request = Request(environ)
        route = (request.method, request.path)
        payload: object
        if route == ("GET", "/_sandbox/health"):
            payload = {"status": "ok", "instance": self.instance}
        elif route == ("GET", "/_sandbox/requests"):
            payload = {"requests": self.log.as_list()}
        elif route == ("DELETE", "/_sandbox/requests"):
            self.log.clear()
            payload = {"requests": []}
        elif route == ("GET", "/_sandbox/faults"):
            payload = self.faults.public()
        elif route == ("PUT", "/_sandbox/faults"):
            self.faults = Faults(**(request.get_json(force=True) or {}))
            payload = self.faults.public()
        elif route == ("GET", "/_sandbox/config"):
            payload = dict(core.SETTINGS)
        elif route == ("PUT", "/_sandbox/config"):
            payload = core.configure(request.get_json(force=True) or {})
        elif route == ("GET", "/_sandbox/upstreams"):
            payload = dict(core.UPSTREAMS)
        elif route == ("PUT", "/_sandbox/upstreams"):
            core.UPSTREAMS.update({k: str(v) for k, v in (request.get_json(force=True) or {}).items() if k in core.UPSTREAMS})
            payload = dict(core.UPSTREAMS)
        elif route == ("GET", "/_sandbox/kubernetes"):
            api = kube_api.connected()
            payload = {"endpoint": api.server, "kubeconfig": str(api.kubeconfig)} if api else {}
        elif route == ("GET", "/_sandbox/access-entry-works"):
            # Whether an EKS access entry still maps its principal (EksAccessBackend.entry_works: not after the role is re-created).
            from moto.core import DEFAULT_ACCOUNT_ID
            from moto.eks.models import eks_backends

            args = request.args
            backend = eks_backends[args.get("account", DEFAULT_ACCOUNT_ID)][args.get("region", "us-east-1")]
            payload = {"works": backend.entry_works(args["cluster"], args["principal"])}
        elif request.method == "POST" and request.path in eks_kubernetes_webhook.HANDLERS:
            # The sandbox's kube-apiserver asking, as EKS's control plane asks its authenticator and authorizer.
            payload = eks_kubernetes_webhook.HANDLERS[request.path](request.get_json(force=True) or {}, request.host)
        elif route == ("POST", "/_sandbox/reset"):
            reset_state()
            core.restore_settings()
            self.log.clear()
            self.faults = Faults()
            payload = {"reset": True}
        else:
            body = json.dumps({"message": f"no sandbox route {request.method} {request.path}"}).encode()
            start_response("404 Not Found", [("Content-Type", "application/json")])
            return [body]
        body = json.dumps(payload).encode()
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]


def moto_default_account() -> str:
    from moto.core import DEFAULT_ACCOUNT_ID

    return DEFAULT_ACCOUNT_ID


def reset_state() -> None:
    from moto.moto_api._internal.models import moto_api_backend

    from sandbox.kube import task_governance

    with core.SETTLING:
        core.next_generation()
        moto_api_backend.reset()
        # The cluster's contents go with the AWS resources that made them. A second try when the API server failed the
        # first (an answer slower than the client's timeout on a loaded machine); the first failure goes to the log.
        try:
            task_governance.reset()
        except (kube_api.KubeError, OSError):
            traceback.print_exc()
            task_governance.reset()


def build_app(instance: str) -> SandboxApp:
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

    services.install()
    return SandboxApp(DomainDispatcherApplication(create_backend_app), instance)


def serve(host: str, port: int, instance: str, fd: int | None = None) -> None:
    """Serve on host:port, or on the listening socket ``fd`` that whoever started the sandbox bound (``sandbox/launch.py``)."""
    server = make_server(host, port, build_app(instance), threaded=True, fd=fd)
    server.serve_forever()
