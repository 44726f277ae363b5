"""Pieces every sandbox addition to moto shares.

The additions in ``sandbox/services/`` follow moto's own layout (a backend that
holds state, a response class that parses and serializes), so they could be
offered upstream. What they need beyond moto lives here: AWS error types,
request validation against botocore's service model (which moto does not do),
and status fields that move on their own, as AWS's asynchronous operations do.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote

import botocore.session
from moto.core.exceptions import JsonRESTError, ServiceException

# The request validator is the collection's own (plugins/module_utils/botocore_model.py): modules check
# a request before they send it with the same rules the sandbox answers with.
_COLLECTIONS = str(Path(__file__).resolve().parent.parent / "collections")
if _COLLECTIONS not in sys.path:
    sys.path.insert(0, _COLLECTIONS)

from ansible_collections.hyperpod.tenancy.plugins.module_utils import botocore_model  # noqa: E402

SETTINGS_LOCK = threading.Lock()
SETTINGS: dict[str, float | str] = {
    # Seconds a resource spends in Creating/Updating/Deleting before it settles.
    "status_delay": float(os.environ.get("SANDBOX_STATUS_DELAY", "0.5")),
    # When above 0, new SSO domains are as those created before 1 October 2023: no SingleSignOnApplicationArn.
    "legacy_sso_domains": 0.0,
    # "<account>/<region>": the organization's IAM Identity Center instance is there only (its management account
    # and home Region); every other account and Region has none (services/sso_admin.py). Empty: one account, in
    # which every Region answers with an instance of its own, as moto makes them.
    "identity_center_home": "",
    # The account's quotas the teams' resources count against, as AWS applies them (the defaults, until a quota increase
    # raises one): IAM's roles per account (GetAccountSummary's RolesQuota; CreateRole beyond it is refused), Identity
    # Center's permission sets per instance and permission sets provisioned per account ("Quotas and limits in IAM
    # Identity Center").
    "iam_roles_per_account": 1000.0,
    "identity_center_permission_sets": 3500.0,
    "identity_center_provisioned_per_account": 500.0,
    # Identity Center's limits on asynchronous work in flight ("Quotas and limits in IAM Identity Center", services/sso_admin.py):
    # CreateAccountAssignment calls outstanding, ProvisionPermissionSet calls at once, permission-set roles updated at
    # once per account.
    "identity_center_outstanding_assignments": 15.0,
    "identity_center_concurrent_provisionings": 3.0,
    "identity_center_role_updates_per_account": 1.0,
}
# Real servers the sandbox forwards to (services/amp_query.py: AMP's query API to a Prometheus).
UPSTREAMS: dict[str, str] = {"prometheus": os.environ.get("SANDBOX_PROMETHEUS_URL", "")}


DEFAULT_SETTINGS = dict(SETTINGS)


def restore_settings() -> None:
    """Every setting back to its default (a reset of the sandbox does this)."""
    with SETTINGS_LOCK:
        SETTINGS.update(DEFAULT_SETTINGS)


def setting(name: str) -> float | str:
    with SETTINGS_LOCK:
        return SETTINGS[name]


def configure(values: dict) -> dict:
    """Change the settings named in ``values`` (each as the type of its default; others are ignored); all of them."""
    with SETTINGS_LOCK:
        SETTINGS.update({k: type(DEFAULT_SETTINGS[k])(v) for k, v in values.items() if k in DEFAULT_SETTINGS})
        return dict(SETTINGS)


def status_delay() -> float:
    return float(setting("status_delay"))


def quota(name: str) -> int:
    """The account's quota ``name`` (a setting above), as a count."""
    return int(setting(name))


def identity_center_home() -> tuple[str, str] | None:
    """(account, region) of the organization's Identity Center instance, or None (every account and Region has one)."""
    home = str(setting("identity_center_home"))
    if not home:
        return None
    account, _, region = home.partition("/")
    return account, region


class AwsError(JsonRESTError):
    """An error serialized the way AWS JSON and REST-JSON services send it.

    ``members`` are the error shape's other members (``resourceId``, ``reason``, ...); a None one is not sent.
    """

    def __init__(self, code: str, message: str, status: int = 400, **members):
        super().__init__(code, message)
        self.code = status
        if members:
            self.description = json.dumps(dict({"__type": code, "message": message}, **{k: v for k, v in members.items() if v is not None}))


def validation_error(message: str) -> AwsError:
    return AwsError("ValidationException", message)


@functools.cache
def service_model(service: str):
    return botocore.session.get_session().get_service_model(service)


def shape_problems(shape, value: Any, path: str = "", answer: bool = False) -> list[str]:
    """What in ``value`` breaks botocore's ``shape``: required members, types, lengths, ranges, enums, patterns.

    For requests (validate_request) and, with ``answer``, for what AWS answers and clients print (an
    answer fits the operation's output shape, with the members the model marks required). In an answer
    an empty list or map is no breach of a minimum length: AWS sends them (``"tags": {}`` under EKS's
    TagMap, whose minimum is 1, in the AWS CLI's own examples for ``aws eks create-addon``).
    """
    return botocore_model.aws_messages(shape, value, prefix=path, answer=answer)


class QueryValidationError(ServiceException):
    """The validation error of a Query-protocol service (IAM, STS): code ValidationError, in the XML of its errors."""

    code = "ValidationError"


def validate_request(service: str, operation: str, params: dict) -> None:
    """Raise ValidationException (ValidationError for a Query-protocol service) the way AWS does when ``params`` break the model."""
    model = service_model(service)
    shape = model.operation_model(operation).input_shape
    if shape is None:
        return
    problems = shape_problems(shape, params)
    if problems:
        count = len(problems)
        noun = "error" if count == 1 else "errors"
        message = f"{count} validation {noun} detected: " + "; ".join(problems)
        raise QueryValidationError(message) if model.protocol == "query" else validation_error(message)


# Held while a status settles and while the sandbox resets: what a settling status does in the cluster
# (on_settle) never interleaves with a reset emptying it.
SETTLING = threading.RLock()
# Bumped by every reset: a resource of an earlier generation (a request still in flight when the reset came)
# settles without acting, so nothing it would make reappears in the emptied sandbox.
_generation = 0
# Held by a transition's work (Lifecycle's ``work``) while it runs: one at a time, so that an add-on's removal of
# Kueue and the next installation of it never interleave. Never held by a request thread: no read waits for it.
WORKING = threading.Lock()
_STARTING = threading.Lock()


def next_generation() -> None:
    global _generation
    _generation += 1


class Lifecycle:
    """A status that settles from a transitional value after the sandbox's delay.

    ``move("Updating", "Updated")`` starts a transition; ``status`` reads the
    transitional value until the delay has passed, then the settled one.
    ``on_settle(status)``, when set, runs once per transition as it settles, before the
    settled status is returned to anyone: what a settled status promises (Task Governance's
    namespace once a quota is Created) is there when a client reads it. It runs inside the
    request that first reads the settled status, so it does what takes no time.

    ``work(status)``, when set, is what the transition takes its time for (the Task Governance add-on
    installing or removing Kueue in the API server, which can take minutes): the first read after the
    delay starts it in a thread of its own, as it would have run on_settle, and this and every read answer
    the transitional status until it is done, as AWS answers reads while the work goes on. A work that
    fails is logged and the status settles as it would have; a work whose transition began before a reset
    does nothing (nor does a transition nobody read after the delay before the reset).
    """

    def __init__(
        self,
        transitional: str,
        settled: str,
        on_settle: Callable[[str], None] | None = None,
        work: Callable[[str], None] | None = None,
    ):
        self.on_settle = on_settle
        self.work = work
        self._generation = _generation
        self.move(transitional, settled)

    def move(self, transitional: str, settled: str) -> None:
        self._settling = False
        self._transitional = transitional
        self._settled = settled
        self._since = time.monotonic()
        self._latched = False
        # Each transition has its own: a work still running for an earlier one does not settle this one.
        self._worked = threading.Event() if self.work is not None else None
        self._working = False

    def _start_work(self, worked: threading.Event) -> None:
        with _STARTING:
            if self._working or worked is not self._worked:
                return
            self._working = True
        threading.Thread(target=self._run_work, args=(self._settled, worked), daemon=True).start()

    def _run_work(self, settled: str, worked: threading.Event) -> None:
        try:
            with WORKING:
                if self._generation == _generation:
                    self.work(settled)
        except Exception:  # noqa: BLE001 - a thread's failure has no caller to go to; the sandbox's log shows it
            traceback.print_exc()
        finally:
            worked.set()

    def settle_as(self, status: str) -> None:
        self._transitional = self._settled = status
        self._latch()

    def _latch(self) -> None:
        with SETTLING:
            self._settling = True
            self._latched = True
            try:
                if self.on_settle is not None and self._generation == _generation:
                    self.on_settle(self._settled)
            finally:
                self._settling = False

    @property
    def settled(self) -> bool:
        if self._latched and not self._settling:
            return True
        worked = self._worked
        if worked is not None and not worked.is_set():
            if time.monotonic() - self._since >= status_delay():
                self._start_work(worked)
            return False
        # Once settled, a status stays settled even if the delay is raised afterwards. A reader in another
        # thread waits while on_settle runs; on_settle itself (same thread) reads the settled status.
        with SETTLING:
            if not self._latched and time.monotonic() - self._since >= status_delay():
                self._latch()
            return self._latched

    @property
    def status(self) -> str:
        return self._settled if self.settled else self._transitional


def _query_value(shape, raw: str):
    if shape.type_name in ("integer", "long"):
        try:
            return int(raw)
        except ValueError:
            return raw  # validate_request names it as the wrong type
    if shape.type_name == "boolean":
        return raw.lower() == "true"
    return raw


def rest_json_request(response, service: str, operation: str, invalid: Callable[[str], AwsError], uri_defaults: dict | None = None) -> dict:
    """A REST-JSON request's members, read where botocore's model puts them (URI, query string,
    JSON body) and validated against the model; ``invalid(message)`` is the service's error for a
    request that breaks it. ``uri_defaults`` stand in for URI members moto's route did not capture.
    """
    shape = service_model(service).operation_model(operation).input_shape
    query = parse_qs(response.parsed_url.query, keep_blank_values=True)
    try:
        body = json.loads(response.body) if response.body else {}
    except ValueError:
        raise invalid("The request body is not valid JSON") from None
    params = {}
    for name, member in shape.members.items():
        location = member.serialization.get("location")
        wire_name = member.serialization.get("name", name)
        if location == "uri":
            value = response.uri_match.get(wire_name) or (uri_defaults or {}).get(wire_name)
            if value is not None:
                params[name] = unquote(value)
        elif location == "querystring":
            if wire_name in query:
                values = query[wire_name]
                params[name] = values if member.type_name == "list" else _query_value(member, values[0])
        elif location == "header":
            continue
        elif isinstance(body, dict) and name in body:
            params[name] = body[name]
    try:
        validate_request(service, operation, params)
    except AwsError as error:
        raise invalid(json.loads(error.description)["message"]) from None
    return params


def page(items: list, max_results, next_token, refuse: Callable[[], AwsError], default_limit: int = 100) -> tuple[list, str | None]:
    """One page of ``items`` (the token is an offset) and the next token; ``refuse()`` is the error for a token that is not one."""
    start = 0
    if next_token:
        try:
            start = int(next_token)
        except ValueError:
            raise refuse() from None
    following = start + (max_results or default_limit)
    return items[start:following], (str(following) if following < len(items) else None)


def page_of(items: list, params: dict, invalid: Callable[[str], AwsError], default_limit: int = 100) -> tuple[list, str | None]:
    """``page`` for the ``maxResults``/``nextToken`` of a REST-JSON request."""
    return page(items, params.get("maxResults"), params.get("nextToken"), lambda: invalid("The nextToken provided is not valid"), default_limit)


def page_answer(key: str, items: list, params: dict, invalid: Callable[[str], AwsError], shape: Callable | None = None) -> dict:
    """The answer of a REST-JSON list: ``key`` -> one page of ``items`` (each through ``shape``), and ``nextToken`` when more follow."""
    found, token = page_of(items, params, invalid)
    result = {key: [shape(item) for item in found] if shape else found}
    if token:
        result["nextToken"] = token
    return result


def forwarded(method: Callable, params: dict, members, answer: str | None = None) -> str:
    """A JSON-protocol answer: the request's ``members`` in order (an absent optional one as None) to ``method``,
    and its result under ``answer``, else an empty answer."""
    result = method(*(params.get(member) for member in members))
    return json.dumps({answer: result}) if answer else "{}"


def now_epoch() -> float:
    return time.time()


def graft(target: type, addition: type) -> None:
    """Add the methods of ``addition`` to moto's ``target`` class.

    moto dispatches JSON-protocol operations to the snake_case method of the
    response class, and backends are module-level singletons, so adding methods
    to those classes is how an operation moto lacks joins the running server.
    State an addition keeps goes in attributes created on first use, which
    moto's reset (it re-runs ``__init__`` on an empty ``__dict__``) clears too.
    """
    for name, value in vars(addition).items():
        if not name.startswith("__"):
            setattr(target, name, value)


def state(backend: object, name: str, factory=dict):
    """The addition's state ``name`` on a moto backend, created on first use."""
    if name not in backend.__dict__:
        backend.__dict__[name] = factory()
    return backend.__dict__[name]


def tag_by_arn(backend_cls: type, find: Callable[[object, str], dict | None], too_many: Callable[[], AwsError]) -> None:
    """Let ``backend_cls``'s TagResource/UntagResource/ListTagsForResource reach a sub-resource moto does not tag.

    ``find(backend, arn)`` is the sub-resource (a dict with a ``tags`` dict) of that ARN, or None for any other ARN,
    which goes to the methods as they were: wrapped, not replaced, so that each addition chains its own resources.
    ``too_many()`` is the error for more than the 50 tags AWS allows.
    """
    tag, untag, list_tags = backend_cls.tag_resource, backend_cls.untag_resource, backend_cls.list_tags_for_resource

    def tag_resource(self, resource_arn, tags):
        resource = find(self, resource_arn)
        if resource is None:
            return tag(self, resource_arn, tags)
        if len({**resource["tags"], **tags}) > 50:
            raise too_many()
        resource["tags"].update(tags)

    def untag_resource(self, resource_arn, tag_keys):
        resource = find(self, resource_arn)
        if resource is None:
            return untag(self, resource_arn, tag_keys)
        for key in tag_keys if isinstance(tag_keys, list) else [tag_keys]:
            resource["tags"].pop(key, None)

    def list_tags_for_resource(self, resource_arn):
        resource = find(self, resource_arn)
        return list_tags(self, resource_arn) if resource is None else dict(resource["tags"])

    backend_cls.tag_resource = tag_resource
    backend_cls.untag_resource = untag_resource
    backend_cls.list_tags_for_resource = list_tags_for_resource
