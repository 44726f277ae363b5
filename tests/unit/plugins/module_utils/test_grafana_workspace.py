"""The Grafana workspace's life through its service file's calls (``managed_grafana.py``), against the sandbox."""

from __future__ import annotations

from ansible_collections.hyperpod.tenancy.plugins.module_utils import engine, managed_grafana
from ansible_collections.hyperpod.tenancy.plugins.module_utils.grafana_workspace import WorkspaceManager

ACCOUNT = "123456789012"


def converge(client, **params):
    """The engine's run of the workspace by its ``state``: (changed, before, after, workspace)."""
    base = dict(name="tenancy-test", state="present", account_access_type="CURRENT_ACCOUNT", permission_type="SERVICE_MANAGED",
                authentication_providers=["AWS_SSO"], wait=True, wait_timeout=60, purge_tags=True)
    given = dict(base, **params)
    return engine.converge(WorkspaceManager(client, given, account_id=ACCOUNT), given["state"])


def test_create_tag_grant_and_delete(seeded):
    sandbox, seed = seeded
    client = sandbox.boto3_client("grafana")
    group = seed["group_ids"]["PlatformAdmins"]
    permissions = [dict(principal_id=group, principal_type="SSO_GROUP", role="ADMIN", state="present")]
    changed, _before, after, _result = converge(client, tags={"a": "1"}, permissions=permissions)
    assert changed and after["tags"] == {"a": "1"}
    workspace_id = managed_grafana.list_workspaces(client)[0]["id"]
    assert managed_grafana.list_permissions(client, workspaceId=workspace_id) == [{"user": {"id": group, "type": "SSO_GROUP"}, "role": "ADMIN"}]

    changed, _before, after, _result = converge(client, tags={"b": "2"}, permissions=permissions)
    assert changed and after["tags"] == {"b": "2"}
    assert converge(client, tags={"b": "2"}, permissions=permissions)[0] is False

    assert converge(client, state="absent")[0] is True
    assert managed_grafana.describe_workspace(client, workspaceId=workspace_id) is None
    assert managed_grafana.list_permissions(client, workspaceId=workspace_id) == []
    assert managed_grafana.delete_workspace(client, workspaceId=workspace_id) is False
    assert converge(client, state="absent")[0] is False
