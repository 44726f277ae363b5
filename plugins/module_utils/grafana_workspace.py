# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""An Amazon Managed Grafana workspace and who may use it (its IAM Identity Center permissions).

Permissions are the part several callers share: the platform role grants its admins
ADMIN, each team's role grants the team's group VIEWER. ``permissions_mode=merge``
(the default) touches only the principals listed, so one team's run never revokes
another team's access; ``replace`` makes the listed entries the workspace's only
ones. An entry with ``state: absent`` revokes that principal, whatever its role.

The pure functions are unit-tested without AWS; ``WorkspaceManager`` drives a boto3
``grafana`` client.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

from ansible.module_utils.common.dict_transformations import camel_dict_to_snake_dict
from ansible_collections.amazon.aws.plugins.module_utils.tagging import compare_aws_tags

from ansible_collections.hyperpod.tenancy.plugins.module_utils import engine
from ansible_collections.hyperpod.tenancy.plugins.module_utils import managed_grafana as grafana
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import GrafanaError, HyperPodError, InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.waiters import GONE, wait_for_status

READY = ("ACTIVE",)
FAILED = ("FAILED", "CREATION_FAILED", "UPDATE_FAILED", "DELETION_FAILED", "UPGRADE_FAILED", "VERSION_UPDATE_FAILED", "LICENSE_REMOVAL_FAILED")
SETTLED = READY + FAILED + ("DEGRADED",)
NAME = r"[a-zA-Z0-9-._~]{1,255}"
WORKSPACE_ID = r"g-[0-9a-f]{10}"
ROLES = ("ADMIN", "EDITOR", "VIEWER")
PRINCIPAL_TYPES = ("SSO_GROUP", "SSO_USER")
MAX_BATCH = 20
# Settings UpdateWorkspace changes: module option -> (CreateWorkspace/UpdateWorkspace member, DescribeWorkspace member).
UPDATABLE = (
    ("description", "workspaceDescription", "description"),
    ("account_access_type", "accountAccessType", "accountAccessType"),
    ("permission_type", "permissionType", "permissionType"),
    ("role_arn", "workspaceRoleArn", "workspaceRoleArn"),
    ("data_sources", "workspaceDataSources", "dataSources"),
    ("notification_destinations", "workspaceNotificationDestinations", "notificationDestinations"),
)
# Settings this module sets only when it creates the workspace (AWS changes them through other APIs).
CREATE_ONLY = (
    ("authentication_providers", "authenticationProviders", "UpdateWorkspaceAuthentication"),
    ("grafana_version", "grafanaVersion", "UpdateWorkspaceConfiguration"),
)
DEFAULTS = {
    "authentication_providers": ["AWS_SSO"],
    "account_access_type": "CURRENT_ACCOUNT",
    "permission_type": "SERVICE_MANAGED",
}


# ---------------------------------------------------------------- pure functions


def normalize_permissions(entries):
    """Permission entries (ListPermissions or module options) as ``{(type, id): role}``."""
    result = {}
    for entry in entries or []:
        if "user" in entry:
            result[(entry["user"]["type"], entry["user"]["id"])] = entry["role"]
        else:
            result[(entry.get("principal_type") or "SSO_GROUP", entry["principal_id"])] = entry.get("role")
    return result


def permissions_list(mapping):
    """``{(type, id): role}`` as a sorted list of snake_case entries (returns and diffs)."""
    return [
        {"principal_type": kind, "principal_id": principal, "role": role}
        for (kind, principal), role in sorted(mapping.items())
    ]


def desired_permissions(current, entries, mode):
    """The workspace's permissions once ``entries`` are applied in ``mode`` (merge or replace)."""
    wanted = {}
    revoked = set()
    for entry in entries or []:
        key = (entry.get("principal_type") or "SSO_GROUP", entry["principal_id"])
        if entry.get("state", "present") == "absent":
            revoked.add(key)
        else:
            wanted[key] = entry["role"]
    if mode == "replace":
        return wanted
    result = dict((k, v) for k, v in current.items() if k not in revoked)
    result.update(wanted)
    return result


def permission_batches(current, desired):
    """UpdatePermissions instruction batches (at most 20 instructions each) that turn ``current`` into ``desired``."""
    grouped = {}
    for key, role in sorted(current.items()):
        if desired.get(key) != role:
            grouped.setdefault(("REVOKE", role), []).append(key)
    for key, role in sorted(desired.items()):
        if current.get(key) != role:
            grouped.setdefault(("ADD", role), []).append(key)
    # Revocations first: a principal whose role changes is revoked from the old role, then added to the new one.
    ordered = sorted(grouped.items(), key=lambda item: (item[0][0] != "REVOKE", item[0][1]))
    instructions = [
        {"action": action, "role": role, "users": [{"id": principal, "type": kind} for kind, principal in keys]}
        for (action, role), keys in ordered
    ]
    return [instructions[i:i + MAX_BATCH] for i in range(0, len(instructions), MAX_BATCH)]


def resolve_principals(entries, lookup):
    """``entries`` with ``principal_id`` filled in from ``group_name`` through ``lookup({names}) -> {name: id}``."""
    names = sorted(set(e["group_name"] for e in entries or [] if e.get("group_name")))
    if not names:
        return entries
    ids = lookup(names)
    resolved = []
    for entry in entries:
        entry = dict(entry)
        if entry.get("group_name"):
            entry["principal_id"] = ids[entry["group_name"]]
            entry["principal_type"] = "SSO_GROUP"
        resolved.append(entry)
    return resolved


def input_problems(params):
    """What AWS would reject, or what this module cannot change in place, found before any call."""
    problems = []
    name = params.get("name")
    if name is not None and not re.fullmatch(NAME, name):
        problems.append("name: %r does not match %s" % (name, NAME))
    workspace_id = params.get("workspace_id")
    if workspace_id is not None and not re.fullmatch(WORKSPACE_ID, workspace_id):
        problems.append("workspace_id: %r does not match %s" % (workspace_id, WORKSPACE_ID))
    if params.get("state", "present") != "present":
        return problems
    description = params.get("description")
    if description is not None and len(description) > 2048:
        problems.append("description: at most 2048 characters")
    tags = params.get("tags")
    if tags is not None and len(tags) > 50:
        problems.append("tags: at most 50 tags, got %d" % len(tags))
    providers = params.get("authentication_providers")
    if providers is not None and not providers:
        problems.append("authentication_providers: at least one provider")
    if params.get("account_access_type") == "ORGANIZATION":
        problems.append("account_access_type: ORGANIZATION needs organizational units, which this module does not manage")
    seen = set()
    for index, entry in enumerate(params.get("permissions") or []):
        if entry.get("group_name") and entry.get("principal_type") == "SSO_USER":
            problems.append("permissions[%d]: group_name names a group, not an SSO_USER" % index)
        key = (entry.get("principal_type") or "SSO_GROUP", entry.get("principal_id") or "group:%s" % entry.get("group_name"))
        if key in seen:
            problems.append("permissions[%d]: %s %s is listed more than once" % (index, key[0], key[1]))
        seen.add(key)
        if not entry.get("group_name") and (not entry.get("principal_id") or len(entry["principal_id"]) > 47):
            problems.append("permissions[%d].principal_id: 1 to 47 characters" % index)
        if entry.get("state", "present") == "present" and entry.get("role") not in ROLES:
            problems.append("permissions[%d].role: one of %s" % (index, ", ".join(ROLES)))
    if params.get("permissions") is not None:
        providers_given = params.get("authentication_providers")
        if providers_given is not None and "AWS_SSO" not in providers_given:
            problems.append("permissions: Identity Center permissions need AWS_SSO in authentication_providers")
    return problems


def current_settings(workspace, permissions):
    """The members of a described workspace this module manages, in snake_case."""
    if not workspace:
        return None
    return {
        "name": workspace.get("name"),
        "description": workspace.get("description"),
        "account_access_type": workspace.get("accountAccessType"),
        "permission_type": workspace.get("permissionType"),
        "role_arn": workspace.get("workspaceRoleArn"),
        "authentication_providers": list((workspace.get("authentication") or {}).get("providers") or []),
        "data_sources": list(workspace.get("dataSources") or []),
        "notification_destinations": list(workspace.get("notificationDestinations") or []),
        "grafana_version": workspace.get("grafanaVersion"),
        "tags": dict(workspace.get("tags") or {}),
        "permissions": permissions_list(permissions or {}),
    }


def result(workspace, permissions):
    if not workspace:
        return {}
    workspace = dict((k, v) for k, v in workspace.items() if k != "ResponseMetadata")
    snaked = camel_dict_to_snake_dict(workspace, ignore_list=["tags"])
    snaked["permissions"] = permissions_list(permissions or {})
    return snaked


def _same(option, a, b):
    if option in ("data_sources", "notification_destinations", "authentication_providers"):
        return sorted(a or []) == sorted(b or [])
    return a == b


def predicted_workspace(workspace, desired):
    """DescribeWorkspace as it will read once ``desired``'s settings and tags are made (for check mode)."""
    predicted = dict(workspace, tags=desired["tags"])
    for option, _member, described in UPDATABLE:
        if desired[option] is not None:
            predicted[described] = desired[option]
    return predicted


def workspace_arn(partition, region, account_id, workspace_id):
    return "arn:%s:grafana:%s:%s:/workspaces/%s" % (partition, region, account_id, workspace_id)


def partition_of(region):
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


# ---------------------------------------------------------------- the resource


class WorkspaceManager(engine.Resource):
    """A Managed Grafana workspace with its Identity Center permissions, as the engine converges it: ``raw`` is
    ``{"workspace": DescribeWorkspace's answer, "permissions": normalize_permissions' of ListPermissions}``, the
    permissions listed when first asked."""

    def __init__(self, client, params, check_mode=False, account_id=None, region=None, warn=None, resolve_groups=None):
        super(WorkspaceManager, self).__init__(client, params, check_mode, warn, timeout=1200)
        self.resolve_groups = resolve_groups
        self.account_id = account_id
        self.region = region or client.meta.region_name
        self.label = "Grafana workspace %s" % (params.get("workspace_id") or params.get("name"))
        # The writes planned from the read (_plan_create's or _plan_update's), and the workspace as the write left it (raw).
        self.planned, self.written = None, None

    def check(self):
        problems = input_problems(self.params)
        if problems:
            raise InputError(message="%s: %s" % (self.label, "; ".join(problems)))

    def find(self):
        """The workspace (DescribeWorkspace), by id or by its unique name, or None."""
        if self.params.get("workspace_id"):
            return grafana.describe_workspace(self.client, workspaceId=self.params["workspace_id"])
        named = [w for w in grafana.list_workspaces(self.client) if w.get("name") == self.params["name"]]
        if len(named) > 1:
            raise InputError(message="%d Grafana workspaces are named %s (%s): give workspace_id" % (
                len(named), self.params["name"], ", ".join(sorted(w["id"] for w in named))))
        return grafana.describe_workspace(self.client, workspaceId=named[0]["id"]) if named else None

    def settle(self, workspace):
        """``workspace`` once settled; None once gone (one being deleted is waited for)."""
        if workspace is None or workspace["status"] in SETTLED:
            return workspace
        return wait_for_status(lambda: grafana.describe_workspace(self.client, workspaceId=workspace["id"]), self.label,
                               ready=SETTLED + (GONE,), timeout=self.timeout, status_key="status")

    def wait(self, workspace_id, ready):
        def describe():
            return grafana.describe_workspace(self.client, workspaceId=workspace_id)

        if not self.params.get("wait", True):
            return describe()
        return wait_for_status(describe, self.label, ready=ready, failed=FAILED, timeout=self.timeout,
                               status_key="status", reason_key="degradedWorkspaceReason")

    def arn(self, workspace_id):
        return workspace_arn(partition_of(self.region), self.region, self.account_id, workspace_id)

    def _permissions(self, workspace_id):
        return normalize_permissions(grafana.list_permissions(self.client, workspaceId=workspace_id))

    def _listed(self, raw):
        if raw["permissions"] is None:
            raw["permissions"] = self._permissions(raw["workspace"]["id"])
        return raw["permissions"]

    def _apply_permissions(self, workspace_id, current, desired):
        errors = []
        for batch in permission_batches(current, desired):
            errors.extend(grafana.update_permissions(self.client, workspaceId=workspace_id, updateInstructionBatch=batch).get("errors") or [])
        if errors:
            raise GrafanaError(message="%s: UpdatePermissions failed for %s" % (self.label, "; ".join(
                "%s %s %s: %s (%s)" % (e["causedBy"]["action"], e["causedBy"]["role"],
                                       ",".join(u["id"] for u in e["causedBy"]["users"]), e.get("message"), e.get("code"))
                for e in errors)))

    # what the engine asks

    def prepare(self, state):
        self.check()
        if state == "present" and self.params.get("permissions"):
            self.params = dict(self.params, permissions=resolve_principals(self.params["permissions"], self.resolve_groups))
            self.check()

    def read(self, fresh=False):
        workspace = self.settle(self.find())
        return None if workspace is None else {"workspace": workspace, "permissions": None}

    def view(self, raw):
        return current_settings(raw["workspace"], self._listed(raw))

    def desired(self, raw):
        if raw is None:
            return self._plan_create()
        workspace = raw["workspace"]
        if workspace["status"] in FAILED:
            raise HyperPodError(message="%s (%s) is %s; delete it (state=absent) and create it again" % (self.label, workspace["id"], workspace["status"]))
        return self._plan_update(self.view(raw), raw["permissions"])

    def _plan_create(self):
        if self.params.get("workspace_id"):
            raise InputError(message="%s was not found; a workspace is created by name, not by id" % self.label)
        p = self.params
        settings = {
            "name": p["name"],
            "description": p.get("description"),
            "account_access_type": p.get("account_access_type") or DEFAULTS["account_access_type"],
            "permission_type": p.get("permission_type") or DEFAULTS["permission_type"],
            "role_arn": p.get("role_arn"),
            "authentication_providers": list(p.get("authentication_providers") or DEFAULTS["authentication_providers"]),
            "data_sources": list(p.get("data_sources") or []),
            "notification_destinations": list(p.get("notification_destinations") or []),
            "grafana_version": p.get("grafana_version"),
            "tags": dict(p.get("tags") or {}),
        }
        permissions = desired_permissions({}, p.get("permissions"), p.get("permissions_mode") or "merge")
        if permissions and "AWS_SSO" not in settings["authentication_providers"]:
            raise InputError(message="%s: permissions need AWS_SSO in authentication_providers" % self.label)
        self.planned = {"settings": settings, "permissions": permissions}
        return dict(settings, permissions=permissions_list(permissions))

    def _refuse_create_only_changes(self, current):
        """Raise when an option asks a change to a setting this module sets only at creation."""
        p = self.params
        for option, _member, api in CREATE_ONLY:
            if p.get(option) is not None and not _same(option, p[option], current[option]):
                raise InputError(message="%s: %s is %r, not %r; this module does not call %s to change it" % (
                    self.label, option, current[option], p[option], api))

    def _settings_update(self, current, desired):
        """The UpdateWorkspace members the options change; sets those options in ``desired``."""
        p = self.params
        update_request = {}
        for option, member, _described in UPDATABLE:
            if p.get(option) is not None and not _same(option, p[option], current[option]):
                desired[option] = copy.deepcopy(p[option])
                update_request[member] = p[option]
        return update_request

    def _tag_changes(self, current):
        """The tags to set and the tag keys to unset: (to_set, to_unset)."""
        p = self.params
        if p.get("tags") is None:
            return {}, []
        return compare_aws_tags(current["tags"], p["tags"], purge_tags=p.get("purge_tags", True))

    def _wanted_permissions(self, current, current_permissions):
        """The permissions the workspace is to have; raise when they change on a workspace without AWS_SSO."""
        p = self.params
        if p.get("permissions") is None:
            return current_permissions
        wanted_permissions = desired_permissions(current_permissions, p["permissions"], p.get("permissions_mode") or "merge")
        if wanted_permissions != current_permissions and "AWS_SSO" not in current["authentication_providers"]:
            raise InputError(message="%s: permissions need AWS_SSO authentication; the workspace uses %s" % (
                self.label, ", ".join(current["authentication_providers"])))
        return wanted_permissions

    def _plan_update(self, current, current_permissions):
        self._refuse_create_only_changes(current)
        desired = copy.deepcopy(current)
        update_request = self._settings_update(current, desired)
        to_set, to_unset = self._tag_changes(current)
        desired["tags"] = dict((k, v) for k, v in current["tags"].items() if k not in to_unset)
        desired["tags"].update(to_set)
        wanted_permissions = self._wanted_permissions(current, current_permissions)
        desired["permissions"] = permissions_list(wanted_permissions)
        self.planned = {"update_request": update_request, "to_set": to_set, "to_unset": to_unset, "permissions": wanted_permissions}
        return desired

    def predict(self, raw, desired):
        if raw is not None:
            return {"workspace": predicted_workspace(raw["workspace"], desired), "permissions": self.planned["permissions"]}
        settings = self.planned["settings"]
        predicted = {
            "name": settings["name"], "status": "ACTIVE", "accountAccessType": settings["account_access_type"],
            "permissionType": settings["permission_type"], "authentication": {"providers": settings["authentication_providers"]},
            "dataSources": settings["data_sources"], "notificationDestinations": settings["notification_destinations"],
            "tags": settings["tags"],
        }
        for key, member in (("description", "description"), ("role_arn", "workspaceRoleArn"), ("grafana_version", "grafanaVersion")):
            if settings[key] is not None:
                predicted[member] = settings[key]
        return {"workspace": predicted, "permissions": self.planned["permissions"]}

    def create(self, desired):
        settings, permissions = self.planned["settings"], self.planned["permissions"]
        request = dict(
            workspaceName=settings["name"],
            accountAccessType=settings["account_access_type"],
            permissionType=settings["permission_type"],
            authenticationProviders=settings["authentication_providers"],
        )
        for key, member in (("description", "workspaceDescription"), ("role_arn", "workspaceRoleArn"), ("grafana_version", "grafanaVersion")):
            if settings[key] is not None:
                request[member] = settings[key]
        if settings["data_sources"]:
            request["workspaceDataSources"] = settings["data_sources"]
        if settings["notification_destinations"]:
            request["workspaceNotificationDestinations"] = settings["notification_destinations"]
        if settings["tags"]:
            request["tags"] = settings["tags"]
        created = grafana.create_workspace(self.client, **request)
        if permissions:
            # Permissions can only be granted once the workspace is ACTIVE, whatever wait says.
            self.params = dict(self.params, wait=True)
        workspace = self.wait(created["id"], READY)
        self._apply_permissions(created["id"], {}, permissions)
        # A workspace made without permissions has none: nothing to list.
        self.written = {"workspace": workspace, "permissions": None if permissions else {}}

    def update(self, raw, desired):
        workspace_id, planned = raw["workspace"]["id"], self.planned
        update_request, current_permissions, wanted_permissions = planned["update_request"], raw["permissions"], planned["permissions"]
        if update_request:
            grafana.update_workspace(self.client, workspaceId=workspace_id, **update_request)
        if planned["to_unset"]:
            grafana.untag_resource(self.client, resourceArn=self.arn(workspace_id), tagKeys=list(planned["to_unset"]))
        if planned["to_set"]:
            grafana.tag_resource(self.client, resourceArn=self.arn(workspace_id), tags=planned["to_set"])
        if wanted_permissions != current_permissions:
            if update_request:
                self.params = dict(self.params, wait=True)
                self.wait(workspace_id, READY)
            self._apply_permissions(workspace_id, current_permissions, wanted_permissions)
        workspace = self.wait(workspace_id, READY) if update_request else grafana.describe_workspace(self.client, workspaceId=workspace_id)
        self.written = {"workspace": workspace, "permissions": None}
        return False

    def read_back(self, handle, settle):
        # The workspace as the write read it (create and update wait for it); its permissions listed now.
        self._listed(self.written)
        return self.written

    def delete(self, raw):
        grafana.delete_workspace(self.client, workspaceId=raw["workspace"]["id"])
        return True

    def wait_gone(self, raw):
        wait_for_status(lambda: grafana.describe_workspace(self.client, workspaceId=raw["workspace"]["id"]), self.label, ready=(GONE,),
                        failed=FAILED, timeout=self.timeout, status_key="status")

    def result(self, raw):
        return result(raw["workspace"], raw["permissions"])
