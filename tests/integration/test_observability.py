"""Observability end to end on the sandbox: site.yml with hyperpod_observability.enabled, then one team onboarded or offboarded alone.

AWS's side is checked (Amazon Managed Service for Prometheus, the EKS add-on, Amazon Managed Grafana and its
Identity Center permissions). No Grafana server can be installed here, so no Grafana API token is given and the
team folders and dashboards are not managed in these runs: their requests are checked against a stub by
tests/integration/targets/role_observability and the rendering by tests/unit/plugins/module_utils/test_dashboards.py.
The whole sample with observability on (site.yml, its rerun, one team offboarded) is built once, with the Grafana stub,
by tests/integration/test_no_secret_in_output.py, which checks it with ``assert_observability_built`` and
``assert_observability_offboarded`` below.
"""

from __future__ import annotations

import json

from tests.integration.playbook_runner import SAMPLE, assert_ok

ENABLED = ["-e", json.dumps({"hyperpod_observability": {"enabled": True}})]
ADDON = "amazon-sagemaker-hyperpod-observability"
WORKSPACE_NAME = "hyperpod-observability"


def prometheus_workspaces(client):
    return client.boto3_client("amp").list_workspaces()["workspaces"]


def grafana_permissions(client):
    """{(principal type, principal id): role} of the one Grafana workspace named hyperpod-observability."""
    grafana = client.boto3_client("grafana")
    named = [w for w in grafana.list_workspaces()["workspaces"] if w.get("name") == WORKSPACE_NAME]
    assert len(named) == 1, named
    assert named[0]["status"] == "ACTIVE"
    permissions = grafana.list_permissions(workspaceId=named[0]["id"])["permissions"]
    return {(p["user"]["type"], p["user"]["id"]): p["role"] for p in permissions}


def expected_permissions(seed, teams):
    groups = seed["group_ids"]
    expected = {("SSO_GROUP", groups[SAMPLE["hyperpod_platform_admins_group"]]): "ADMIN"}
    for team in SAMPLE["hyperpod_teams"]:
        if team["name"] in teams:
            expected[("SSO_GROUP", groups[team["identity_center_group"]])] = "VIEWER"
    return expected


def assert_observability_built(sample, seed, teams):
    """What site.yml with observability built on AWS's side for the sample's present ``teams``: one ACTIVE Prometheus
    workspace, the EKS add-on writing to it, and the Grafana workspace's permissions (the admins and each team)."""
    workspaces = prometheus_workspaces(sample.client)
    assert len(workspaces) == 1, workspaces
    assert workspaces[0]["status"]["statusCode"] == "ACTIVE"
    assert workspaces[0]["alias"] == "hyperpod-observability"
    amp = sample.client.boto3_client("amp").describe_workspace(workspaceId=workspaces[0]["workspaceId"])["workspace"]

    addon = sample.client.boto3_client("eks").describe_addon(clusterName=seed["eks_cluster_arn"].split("/")[-1], addonName=ADDON)["addon"]
    assert addon["status"] == "ACTIVE"
    configuration = json.loads(addon["configurationValues"])
    assert configuration["ampWorkspace"] == {"prometheusEndpoint": amp["prometheusEndpoint"], "arn": amp["arn"]}

    assert len(teams) >= 2
    assert grafana_permissions(sample.client) == expected_permissions(seed, teams)


def assert_observability_offboarded(sample, seed, remaining):
    """After one team's offboarding (the request log cleared before it): the Grafana workspace's permissions are the
    ``remaining`` teams' (one UpdatePermissions), and the cluster's Prometheus workspace stays."""
    assert grafana_permissions(sample.client) == expected_permissions(seed, remaining)
    grafana_writes = [r["operation"] for r in sample.client.writes() if r["service"] == "grafana"]
    assert grafana_writes == ["UpdatePermissions"]
    assert len(prometheus_workspaces(sample.client)) == 1


def test_add_team_refused_without_grafana_then_check_mode_predicts_observability_then_add_team_gives_that_team_viewer(sample):
    seed = json.loads(sample.seed_file.read_text())
    assert_ok(sample.run("site.yml", "--limit", "localhost"), "cluster only, without observability")
    # Onboarding with observability on, before the cluster has its Grafana workspace, is refused before any write.
    sample.client.clear_requests()
    refused = sample.run("playbooks/add_team.yml", "-e", "team=vision", *ENABLED)
    assert refused.returncode == 2
    assert "Grafana workspace hyperpod-observability does not exist yet" in refused.stdout
    assert sample.client.writes() == []

    sample.client.clear_requests()
    predicted = sample.run("site.yml", "--limit", "localhost", "--check", *ENABLED)
    assert_ok(predicted, "cluster only, with observability, --check")
    assert sample.client.writes() == []
    assert prometheus_workspaces(sample.client) == []
    done = sample.run("site.yml", "--limit", "localhost", *ENABLED)
    assert_ok(done, "cluster only, with observability")
    assert predicted.changed_tasks() == done.changed_tasks()
    assert ("localhost", "hyperpod.tenancy.observability : Ensure the Amazon Managed Service for Prometheus workspace") in done.changed_tasks()
    assert [w["status"]["statusCode"] for w in prometheus_workspaces(sample.client)] == ["ACTIVE"]
    assert grafana_permissions(sample.client) == expected_permissions(seed, [])

    sample.client.clear_requests()
    predicted = sample.run("playbooks/add_team.yml", "-e", "team=vision", "--check", *ENABLED)
    assert_ok(predicted, "add_team --check")
    assert sample.client.writes() == []
    done = sample.run("playbooks/add_team.yml", "-e", "team=vision", *ENABLED)
    assert_ok(done, "add_team")
    assert predicted.changed_tasks() == done.changed_tasks()
    assert ("team_vision", "hyperpod.tenancy.team_observability : Give the team's group VIEWER on the Grafana workspace") in done.changed_tasks()
    assert grafana_permissions(sample.client) == expected_permissions(seed, ["vision"])
