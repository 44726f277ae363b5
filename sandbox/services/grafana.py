"""Amazon Managed Grafana workspaces, a service moto 5.2.5 does not have at all.

CreateWorkspace, DescribeWorkspace, UpdateWorkspace, DeleteWorkspace, ListWorkspaces,
UpdatePermissions, ListPermissions, TagResource, UntagResource, ListTagsForResource.
A workspace moves CREATING -> ACTIVE, UPDATING -> ACTIVE and DELETING -> gone after
the sandbox's status delay; UpdateWorkspace and DeleteWorkspace on a workspace that
is still moving are refused with ConflictException, UpdatePermissions on a workspace
that is not ACTIVE with ValidationException.

moto has no ``grafana`` package, so ``install()`` registers a new service with moto's
server the way moto's own services are found:

- ``moto.backend_index.backend_url_patterns`` gets the ``grafana.<region>.amazonaws.com``
  host (the server turns a request signed for ``grafana`` into that host);
- ``sys.modules["moto.grafana"]`` is this module, so ``moto.backends.get_backend("grafana")``
  imports it and finds ``grafana_backends`` (a moto ``BackendDict``: moto's reset clears it);
- the backend names this module as its URL module (``url_bases``/``url_paths`` below).

Grafana is REST-JSON: moto's router finds the operation from botocore's model and the
response class parses the request members from the model (URI, query string, body).
Everything is validated against the model; AWS's errors carry the members the model
requires (``resourceId``/``resourceType``, ``reason``).
"""

from __future__ import annotations

import json
import re
import sys
import uuid

import moto.backend_index
from moto.core.base_backend import BackendDict, BaseBackend
from moto.core.responses import ActionResult, BaseResponse, EmptyResult
from moto.core.utils import utcnow

from sandbox.core import AwsError, Lifecycle, page_answer, validate_request

GONE = "__GONE__"
TRANSITIONAL = ("CREATING", "UPDATING", "DELETING", "UPGRADING", "VERSION_UPDATING")
GRAFANA_VERSIONS = ("8.4", "9.4", "10.4")
DEFAULT_GRAFANA_VERSION = "10.4"
WORKSPACE_ARN = re.compile(r"arn:aws[a-z-]*:grafana:([a-z0-9-]+):(\d{12}):/workspaces/(g-[0-9a-f]{10})")


def not_found(message: str, resource_id: str, resource_type: str = "WORKSPACE") -> AwsError:
    return AwsError("ResourceNotFoundException", message, 404, resourceId=resource_id, resourceType=resource_type)


def conflict(message: str, resource_id: str, resource_type: str = "WORKSPACE") -> AwsError:
    return AwsError("ConflictException", message, 409, resourceId=resource_id, resourceType=resource_type)


def validation(message: str, reason: str = "FIELD_VALIDATION_FAILED") -> AwsError:
    return AwsError("ValidationException", message, 400, reason=reason)


def _validate(operation: str, params: dict) -> None:
    try:
        validate_request("grafana", operation, params)
    except AwsError as error:
        raise validation(json.loads(error.description)["message"]) from None


def _identity_store_has(account_id: str, region: str, kind: str, principal_id: str) -> bool:
    """Whether an Identity Center user or group with this id exists in the account's identity stores."""
    from moto.identitystore.models import identitystore_backends

    backend = identitystore_backends[account_id][region]
    for store in backend.identity_stores.values():
        found = store.groups if kind == "SSO_GROUP" else store.users
        if principal_id in found:
            return True
    return False


class Workspace:
    def __init__(self, backend: GrafanaBackend, params: dict):
        self.id = "g-" + uuid.uuid4().hex[:10]
        self.account_id = backend.account_id
        self.region = backend.region_name
        self.arn = f"arn:{backend.partition}:grafana:{backend.region_name}:{backend.account_id}:/workspaces/{self.id}"
        self.endpoint = f"{self.id}.grafana-workspace.{backend.region_name}.amazonaws.com"
        self.name = params.get("workspaceName")
        self.description = params.get("workspaceDescription")
        self.account_access_type = params["accountAccessType"]
        self.permission_type = params["permissionType"]
        self.providers = list(params["authenticationProviders"])
        self.data_sources = list(params.get("workspaceDataSources") or [])
        self.notification_destinations = list(params.get("workspaceNotificationDestinations") or [])
        self.organizational_units = list(params.get("workspaceOrganizationalUnits") or [])
        self.organization_role_name = params.get("organizationRoleName")
        self.role_arn = params.get("workspaceRoleArn")
        self.stack_set_name = params.get("stackSetName")
        self.grafana_version = params.get("grafanaVersion") or DEFAULT_GRAFANA_VERSION
        self.tags = dict(params.get("tags") or {})
        self.client_token = params.get("clientToken")
        self.created = self.modified = utcnow()
        # (type, id) -> role
        self.permissions: dict[tuple[str, str], str] = {}
        self.lifecycle = Lifecycle("CREATING", "ACTIVE")

    @property
    def status(self) -> str:
        return self.lifecycle.status

    def summary(self) -> dict:
        result = {
            "created": self.created,
            "endpoint": self.endpoint,
            "grafanaVersion": self.grafana_version,
            "id": self.id,
            "modified": self.modified,
            "status": self.status,
            "authentication": self._authentication(),
            "notificationDestinations": list(self.notification_destinations),
            "tags": dict(self.tags),
        }
        if self.name:
            result["name"] = self.name
        if self.description is not None:
            result["description"] = self.description
        return result

    def _authentication(self) -> dict:
        authentication = {"providers": list(self.providers)}
        if "SAML" in self.providers:
            authentication["samlConfigurationStatus"] = "NOT_CONFIGURED"
        return authentication

    def describe(self) -> dict:
        result = self.summary()
        result.update({
            "accountAccessType": self.account_access_type,
            "permissionType": self.permission_type,
            "dataSources": list(self.data_sources),
            "freeTrialConsumed": False,
        })
        for key, value in (
            ("organizationalUnits", self.organizational_units or None),
            ("organizationRoleName", self.organization_role_name),
            ("workspaceRoleArn", self.role_arn),
            ("stackSetName", self.stack_set_name),
        ):
            if value:
                result[key] = value
        return result


def _check_settings(params: dict, current: Workspace | None = None) -> None:
    """What the model cannot say: the constraints CreateWorkspace/UpdateWorkspace document."""
    version = params.get("grafanaVersion")
    if version is not None and version not in GRAFANA_VERSIONS:
        raise validation(f"Grafana version {version} is not supported. Supported versions: {', '.join(GRAFANA_VERSIONS)}")
    access = params.get("accountAccessType") or (current.account_access_type if current else None)
    units = params.get("workspaceOrganizationalUnits")
    if units is None and current is not None:
        units = current.organizational_units
    if access == "ORGANIZATION" and not units:
        raise validation("workspaceOrganizationalUnits must be specified when accountAccessType is ORGANIZATION")
    permission_type = params.get("permissionType") or (current.permission_type if current else None)
    if permission_type == "CUSTOMER_MANAGED" and access == "ORGANIZATION":
        raise validation("CUSTOMER_MANAGED permission type is only supported with CURRENT_ACCOUNT access type")
    providers = params.get("authenticationProviders")
    if providers is not None:
        if not providers:
            raise validation("At least one authentication provider must be specified")
        if len(set(providers)) != len(providers):
            raise validation("authenticationProviders contains duplicates")


class GrafanaBackend(BaseBackend):
    def __init__(self, region_name: str, account_id: str):
        super().__init__(region_name, account_id)
        self.workspaces: dict[str, Workspace] = {}

    @property
    def _url_module(self):
        return sys.modules[__name__]

    def _live(self) -> dict[str, Workspace]:
        for key in [k for k, w in self.workspaces.items() if w.status == GONE]:
            del self.workspaces[key]
        return self.workspaces

    def _workspace(self, workspace_id: str) -> Workspace:
        workspace = self._live().get(workspace_id)
        if workspace is None:
            raise not_found(f"Workspace {workspace_id} not found.", workspace_id)
        return workspace

    def create_workspace(self, params: dict) -> Workspace:
        _check_settings(params)
        token = params.get("clientToken")
        if token:
            for workspace in self._live().values():
                if workspace.client_token == token:
                    return workspace
        workspace = Workspace(self, params)
        self.workspaces[workspace.id] = workspace
        return workspace

    def describe_workspace(self, workspace_id: str) -> Workspace:
        return self._workspace(workspace_id)

    def list_workspaces(self) -> list[Workspace]:
        return sorted(self._live().values(), key=lambda w: w.created)

    def update_workspace(self, params: dict) -> Workspace:
        workspace = self._workspace(params["workspaceId"])
        if workspace.status != "ACTIVE":
            raise conflict(f"Workspace {workspace.id} is in {workspace.status} state and cannot be updated.", workspace.id)
        _check_settings(params, workspace)
        for member, attribute in (
            ("workspaceName", "name"),
            ("workspaceDescription", "description"),
            ("accountAccessType", "account_access_type"),
            ("permissionType", "permission_type"),
            ("workspaceDataSources", "data_sources"),
            ("workspaceNotificationDestinations", "notification_destinations"),
            ("workspaceOrganizationalUnits", "organizational_units"),
            ("organizationRoleName", "organization_role_name"),
            ("workspaceRoleArn", "role_arn"),
            ("stackSetName", "stack_set_name"),
        ):
            if params.get(member) is not None:
                value = params[member]
                setattr(workspace, attribute, list(value) if isinstance(value, list) else value)
        workspace.modified = utcnow()
        workspace.lifecycle.move("UPDATING", "ACTIVE")
        return workspace

    def delete_workspace(self, workspace_id: str) -> Workspace:
        workspace = self._workspace(workspace_id)
        if workspace.status in ("CREATING", "UPDATING", "UPGRADING", "VERSION_UPDATING"):
            raise conflict(f"Workspace {workspace.id} is in {workspace.status} state and cannot be deleted.", workspace.id)
        if workspace.status != "DELETING":
            workspace.modified = utcnow()
            workspace.lifecycle.move("DELETING", GONE)
        return workspace

    def update_permissions(self, workspace_id: str, batch: list) -> list:
        workspace = self._workspace(workspace_id)
        if workspace.status != "ACTIVE":
            raise validation(f"Workspace {workspace.id} is not ACTIVE (status {workspace.status}).", reason="OTHER")
        if "AWS_SSO" not in workspace.providers:
            raise validation("Permissions can only be managed for workspaces that use AWS_SSO authentication.", reason="OTHER")
        errors = []
        for instruction in batch:
            for user in instruction["users"]:
                key = (user["type"], user["id"])
                if not _identity_store_has(self.account_id, self.region_name, user["type"], user["id"]):
                    kind = "Group" if user["type"] == "SSO_GROUP" else "User"
                    errors.append({
                        "code": 404,
                        "message": f"{kind} {user['id']} was not found in IAM Identity Center.",
                        "causedBy": {"action": instruction["action"], "role": instruction["role"], "users": [user]},
                    })
                    continue
                if instruction["action"] == "ADD":
                    # A principal has one role in a workspace: adding another role replaces it.
                    workspace.permissions[key] = instruction["role"]
                elif workspace.permissions.get(key) == instruction["role"]:
                    del workspace.permissions[key]
        return errors

    def list_permissions(self, workspace_id: str, params: dict) -> list:
        workspace = self._workspace(workspace_id)
        entries = []
        for (kind, principal), role in sorted(workspace.permissions.items()):
            if params.get("userType") and params["userType"] != kind:
                continue
            if params.get("userId") and (kind != "SSO_USER" or principal != params["userId"]):
                continue
            if params.get("groupId") and (kind != "SSO_GROUP" or principal != params["groupId"]):
                continue
            entries.append({"user": {"id": principal, "type": kind}, "role": role})
        return entries

    def _by_arn(self, arn: str) -> Workspace:
        match = WORKSPACE_ARN.fullmatch(arn)
        if match is None:
            raise validation(f"Invalid resource ARN: {arn}")
        region, account, workspace_id = match.groups()
        if region != self.region_name or account != self.account_id:
            raise not_found(f"Workspace {workspace_id} not found.", workspace_id)
        return self._workspace(workspace_id)

    def tag_resource(self, arn: str, tags: dict) -> None:
        workspace = self._by_arn(arn)
        merged = dict(workspace.tags, **tags)
        if len(merged) > 50:
            raise validation("A workspace can have at most 50 tags.")
        workspace.tags = merged

    def untag_resource(self, arn: str, keys: list) -> None:
        workspace = self._by_arn(arn)
        for key in keys:
            workspace.tags.pop(key, None)

    def list_tags_for_resource(self, arn: str) -> dict:
        return dict(self._by_arn(arn).tags)


grafana_backends = BackendDict(GrafanaBackend, "grafana")


class GrafanaResponse(BaseResponse):
    def __init__(self) -> None:
        super().__init__(service_name="grafana")
        self.automated_parameter_parsing = True

    @property
    def backend(self) -> GrafanaBackend:
        return grafana_backends[self.current_account][self.region]

    def _params(self, operation: str) -> dict:
        params = {k: v for k, v in dict(self.params).items() if v is not None}
        _validate(operation, params)
        return params

    def create_workspace(self):
        params = self._params("CreateWorkspace")
        return ActionResult({"workspace": self.backend.create_workspace(params).describe()})

    def describe_workspace(self):
        params = self._params("DescribeWorkspace")
        return ActionResult({"workspace": self.backend.describe_workspace(params["workspaceId"]).describe()})

    def update_workspace(self):
        params = self._params("UpdateWorkspace")
        return ActionResult({"workspace": self.backend.update_workspace(params).describe()})

    def delete_workspace(self):
        params = self._params("DeleteWorkspace")
        return ActionResult({"workspace": self.backend.delete_workspace(params["workspaceId"]).describe()})

    def list_workspaces(self):
        params = self._params("ListWorkspaces")
        return ActionResult(page_answer("workspaces", self.backend.list_workspaces(), params, validation, shape=lambda w: w.summary()))

    def update_permissions(self):
        params = self._params("UpdatePermissions")
        return ActionResult({"errors": self.backend.update_permissions(params["workspaceId"], params["updateInstructionBatch"])})

    def list_permissions(self):
        params = self._params("ListPermissions")
        return ActionResult(page_answer("permissions", self.backend.list_permissions(params["workspaceId"], params), params, validation))

    def tag_resource(self):
        params = self._params("TagResource")
        self.backend.tag_resource(params["resourceArn"], params["tags"])
        return EmptyResult()

    def untag_resource(self):
        params = self._params("UntagResource")
        self.backend.untag_resource(params["resourceArn"], params["tagKeys"])
        return EmptyResult()

    def list_tags_for_resource(self):
        params = self._params("ListTagsForResource")
        return ActionResult({"tags": self.backend.list_tags_for_resource(params["resourceArn"])})


url_bases = [r"https?://grafana\.(.+)\.amazonaws\.com"]
url_paths = {
    "{0}/workspaces$": GrafanaResponse.dispatch,
    "{0}/workspaces/(?P<workspaceId>[^/]+)$": GrafanaResponse.dispatch,
    "{0}/workspaces/(?P<workspaceId>[^/]+)/permissions$": GrafanaResponse.dispatch,
    "{0}/tags/(?P<resourceArn>.+)$": GrafanaResponse.dispatch,
}


def install() -> None:
    patterns = moto.backend_index.backend_url_patterns
    if not any(name == "grafana" for name, _ in patterns):
        patterns.append(("grafana", re.compile(url_bases[0])))
    sys.modules.setdefault("moto.grafana", sys.modules[__name__])
