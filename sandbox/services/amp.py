"""Amazon Managed Service for Prometheus (AMP) workspaces, as hard as AWS.

moto 5.2.5 has ``amp``, but its workspaces are ACTIVE the moment they are created,
its deletions are instant, nothing is validated and a missing workspace is not always
an error. This module replaces moto's workspace operations (CreateWorkspace,
DescribeWorkspace, ListWorkspaces, UpdateWorkspaceAlias, DeleteWorkspace, TagResource,
UntagResource, ListTagsForResource) on moto's own classes:

- every request is validated against botocore's ``amp`` model (ValidationException with
  the ``reason`` the model requires);
- a workspace moves CREATING -> ACTIVE, UPDATING -> ACTIVE (UpdateWorkspaceAlias) and
  DELETING -> gone after the sandbox's status delay; a workspace encrypted with a KMS key
  that is disabled or pending deletion moves CREATING -> CREATION_FAILED;
- UpdateWorkspaceAlias and DeleteWorkspace on a workspace that is not ACTIVE (or, for a
  deletion, CREATION_FAILED) are refused with ConflictException (409);
- a missing workspace is ResourceNotFoundException (404) with ``resourceId``/``resourceType``;
- ListWorkspaces' ``alias`` is a prefix filter, as AWS documents, and it lists workspaces
  being created or deleted;
- at most 25 workspaces per Region are allowed (AMP's default workspace quota as we know it; not verified
  against the Service Quotas console), then ServiceQuotaExceededException (402); tag keys must not begin
  with ``aws:``.

Rule groups namespaces and logging configuration stay moto's (they find workspaces through
the ``describe_workspace`` defined here, so a deleted workspace is gone for them too).
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import moto.amp.models
import moto.amp.responses
from moto.core.responses import ActionResult, EmptyResult
from moto.core.utils import utcnow

from sandbox.core import AwsError, Lifecycle, graft, page_answer, rest_json_request

GONE = "__GONE__"
RESOURCE_TYPE = "AWS::APS::Workspace"
WORKSPACE_QUOTA = 25
MAX_TAGS = 50
WORKSPACE_ARN = re.compile(r"arn:aws[-a-z]*:aps:([-a-z0-9]+):(\d{12}):workspace/(.+)")
KMS_KEY_ARN = re.compile(r"arn:aws[-a-z]*:kms:([-a-z0-9]+):(\d{12}):key/([-a-f0-9]+)")


def not_found(workspace_id: str) -> AwsError:
    return AwsError("ResourceNotFoundException", f"Workspace {workspace_id} not found", 404,
                  resourceId=workspace_id, resourceType=RESOURCE_TYPE)


def conflict(message: str, workspace_id: str) -> AwsError:
    return AwsError("ConflictException", message, 409, resourceId=workspace_id, resourceType=RESOURCE_TYPE)


def validation(message: str, reason: str = "FIELD_VALIDATION_FAILED", field: str | None = None) -> AwsError:
    members = {"reason": reason}
    if field:
        members["fieldList"] = [{"name": field, "message": message}]
    return AwsError("ValidationException", message, 400, **members)


def quota_exceeded(account_id: str) -> AwsError:
    return AwsError(
        "ServiceQuotaExceededException",
        f"You have reached the maximum number of workspaces ({WORKSPACE_QUOTA}) in this Region.",
        # The model requires serviceCode and quotaCode; AWS's actual codes for this quota were not verified here.
        402, resourceId=account_id, resourceType=RESOURCE_TYPE, serviceCode="aps", quotaCode="workspaces-per-region",
    )


class SandboxWorkspace(moto.amp.models.Workspace):
    """moto's workspace (its rule groups and logging keep working) with a status that moves."""

    def __init__(self, backend, alias, kms_key_arn, client_token, fails):
        super().__init__(backend.account_id, backend.region_name, alias=alias, tag_fn=backend.list_tags_for_resource)
        self.kms_key_arn = kms_key_arn
        self.client_token = client_token
        self.created = utcnow()
        self.lifecycle = Lifecycle("CREATING", "CREATION_FAILED" if fails else "ACTIVE")
        self.deletion_token = None

    @property
    def status(self):
        return {"statusCode": self.lifecycle.status}

    @status.setter
    def status(self, value):
        # moto's __init__ sets a fixed ACTIVE status; the lifecycle decides instead.
        pass

    @property
    def status_code(self) -> str:
        return self.lifecycle.status

    def summary(self) -> dict:
        result = {
            "workspaceId": self.workspace_id,
            "arn": self.arn,
            "status": self.status,
            "createdAt": self.created,
            "tags": self.tag_fn(self.arn),
        }
        if self.alias is not None:
            result["alias"] = self.alias
        if self.kms_key_arn:
            result["kmsKeyArn"] = self.kms_key_arn
        return result

    def describe(self) -> dict:
        return dict(self.summary(), prometheusEndpoint=self.endpoint)


def _trimmed_alias(alias):
    """AWS strips blanks at both ends of an alias; what is left must still be 1 to 100 characters."""
    if alias is None:
        return None
    trimmed = alias.strip()
    if not trimmed:
        raise validation("alias must contain at least one character that is not a blank", field="alias")
    return trimmed


def _check_tags(tags: dict) -> None:
    for key in tags or {}:
        if key.lower().startswith("aws:"):
            raise validation(f"Tag keys must not begin with 'aws:': {key}", field="tags")


def _kms_key_usable(account_id: str, region: str, key_arn: str) -> bool:
    """Whether the KMS key exists in the workspace's Region; raises ValidationException if it cannot be used at all."""
    from moto.kms.models import kms_backends

    match = KMS_KEY_ARN.fullmatch(key_arn)
    key_region, key_account, key_id = match.groups()
    if key_region != region:
        raise validation(f"KMS key {key_arn} must be in the workspace's Region {region}", field="kmsKeyArn")
    key = kms_backends[key_account][key_region].keys.get(key_id)
    if key is None:
        raise validation(f"KMS key {key_arn} does not exist or is not accessible", field="kmsKeyArn")
    if (key.key_usage or "ENCRYPT_DECRYPT") != "ENCRYPT_DECRYPT" or (key.key_spec or "SYMMETRIC_DEFAULT") != "SYMMETRIC_DEFAULT":
        raise validation(f"KMS key {key_arn} must be a symmetric encryption key", field="kmsKeyArn")
    # A disabled key, or one pending deletion, is accepted by the call; creating the workspace then fails.
    return key.key_state == "Enabled"


class AmpBackend:
    """Methods grafted onto moto's PrometheusServiceBackend (replacing its workspace operations)."""

    def _amp_live(self) -> dict:
        for key in [k for k, w in self.workspaces.items() if getattr(w, "status_code", "ACTIVE") == GONE]:
            workspace = self.workspaces.pop(key)
            self.tagger.delete_all_tags_for_resource(workspace.arn)
        return self.workspaces

    def describe_workspace(self, workspace_id: str):
        workspace = self._amp_live().get(workspace_id)
        if workspace is None:
            raise not_found(workspace_id)
        return workspace

    def amp_create_workspace(self, params: dict):
        alias = _trimmed_alias(params.get("alias"))
        tags = params.get("tags") or {}
        _check_tags(tags)
        token = params.get("clientToken")
        live = self._amp_live()
        if token:
            for workspace in live.values():
                if workspace.client_token == token:
                    if workspace.alias != alias or workspace.kms_key_arn != params.get("kmsKeyArn"):
                        raise conflict("The client token was already used with different parameters", workspace.workspace_id)
                    return workspace
        if len(live) >= WORKSPACE_QUOTA:
            raise quota_exceeded(self.account_id)
        fails = False
        if params.get("kmsKeyArn"):
            fails = not _kms_key_usable(self.account_id, self.region_name, params["kmsKeyArn"])
        workspace = SandboxWorkspace(self, alias, params.get("kmsKeyArn"), token, fails)
        live[workspace.workspace_id] = workspace
        if tags:
            self.tag_resource(workspace.arn, tags)
        return workspace

    def amp_list_workspaces(self, alias) -> list:
        prefix = _trimmed_alias(alias) if alias is not None else None
        found = [w for w in self._amp_live().values() if prefix is None or (w.alias or "").startswith(prefix)]
        return sorted(found, key=lambda w: (getattr(w, "created", None) is None, getattr(w, "created", None) or 0, w.workspace_id))

    def amp_update_alias(self, workspace_id: str, alias, token) -> None:
        workspace = self.describe_workspace(workspace_id)
        status = workspace.status_code
        if status != "ACTIVE":
            raise conflict(f"Workspace {workspace_id} is in {status} state and its alias cannot be updated", workspace_id)
        workspace.alias = _trimmed_alias(alias)
        workspace.lifecycle.move("UPDATING", "ACTIVE")

    def amp_delete_workspace(self, workspace_id: str, token) -> None:
        workspace = self.describe_workspace(workspace_id)
        status = workspace.status_code
        if status == "DELETING" and token and token == workspace.deletion_token:
            return
        if status not in ("ACTIVE", "CREATION_FAILED"):
            raise conflict(f"Workspace {workspace_id} is in {status} state and cannot be deleted", workspace_id)
        workspace.deletion_token = token
        workspace.lifecycle.move("DELETING", GONE)

    def _amp_tagged(self, arn: str):
        match = WORKSPACE_ARN.fullmatch(arn)
        if match is None:
            if f":aps:{self.region_name}:{self.account_id}:rulegroupsnamespace/" in arn:
                return None  # moto's rule groups namespaces keep moto's tagging
            raise validation(f"Invalid resource ARN: {arn}", field="resourceArn")
        region, account, workspace_id = match.groups()
        if region != self.region_name or account != self.account_id:
            raise not_found(workspace_id)
        return self.describe_workspace(workspace_id)

    def amp_tag_resource(self, arn: str, tags: dict) -> None:
        _check_tags(tags)
        self._amp_tagged(arn)
        merged = dict(self.list_tags_for_resource(arn), **tags)
        if len(merged) > MAX_TAGS:
            raise validation(f"A resource can have at most {MAX_TAGS} tags", field="tags")
        self.tag_resource(arn, tags)

    def amp_untag_resource(self, arn: str, keys: list) -> None:
        self._amp_tagged(arn)
        self.untag_resource(arn, keys)

    def amp_list_tags(self, arn: str) -> dict:
        self._amp_tagged(arn)
        return self.list_tags_for_resource(arn)


def request_params(response, operation: str) -> dict:
    # Tagging routes carry the workspace ARN in the path without naming it.
    tagged_arn = unquote(response.path).split("/tags/", 1)[-1]
    return rest_json_request(response, "amp", operation, validation, uri_defaults={"resourceArn": tagged_arn})


class AmpResponse:
    """Methods grafted onto moto's PrometheusServiceResponse."""

    def create_workspace(self):
        params = request_params(self, "CreateWorkspace")
        workspace = self.amp_backend.amp_create_workspace(params)
        result = {"workspaceId": workspace.workspace_id, "arn": workspace.arn, "status": workspace.status,
                  "tags": workspace.tag_fn(workspace.arn)}
        if workspace.kms_key_arn:
            result["kmsKeyArn"] = workspace.kms_key_arn
        return ActionResult(result)

    def describe_workspace(self):
        params = request_params(self, "DescribeWorkspace")
        return ActionResult({"workspace": self.amp_backend.describe_workspace(params["workspaceId"]).describe()})

    def list_workspaces(self):
        params = request_params(self, "ListWorkspaces")
        workspaces = self.amp_backend.amp_list_workspaces(params.get("alias"))
        invalid = lambda message: validation(message, field="nextToken")
        return ActionResult(page_answer("workspaces", workspaces, params, invalid, shape=lambda w: w.summary()))

    def update_workspace_alias(self):
        params = request_params(self, "UpdateWorkspaceAlias")
        self.amp_backend.amp_update_alias(params["workspaceId"], params.get("alias"), params.get("clientToken"))
        return EmptyResult()

    def delete_workspace(self):
        params = request_params(self, "DeleteWorkspace")
        self.amp_backend.amp_delete_workspace(params["workspaceId"], params.get("clientToken"))
        return EmptyResult()

    def tag_resource(self):
        params = request_params(self, "TagResource")
        self.amp_backend.amp_tag_resource(params["resourceArn"], params["tags"])
        return EmptyResult()

    def untag_resource(self):
        params = request_params(self, "UntagResource")
        self.amp_backend.amp_untag_resource(params["resourceArn"], params["tagKeys"])
        return EmptyResult()

    def list_tags_for_resource(self):
        params = request_params(self, "ListTagsForResource")
        return ActionResult({"tags": self.amp_backend.amp_list_tags(params["resourceArn"])})


def install() -> None:
    graft(moto.amp.models.PrometheusServiceBackend, AmpBackend)
    graft(moto.amp.responses.PrometheusServiceResponse, AmpResponse)
