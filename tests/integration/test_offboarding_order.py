"""Offboarding revokes every way in before it touches anything else, and deletes the S3 prefix when the team file says delete.

A fault injected by the sandbox (``/_sandbox/faults``) makes a later step fail: the step right after the
revocation (the compute quota) or the last one (the budget). Either way the team has no access left,
read with boto3 directly: no account assignment of its group, no access entry of its role, no assignment
of its Studio domain's application, no Grafana workspace role. What the run had not reached yet is still there,
and the same run without the fault then finishes the offboarding, deleting the S3 prefix (``on_remove: delete``).
"""

from __future__ import annotations

import copy
import json

from tests.integration.playbook_runner import SAMPLE, assert_ok
from tests.integration.snapshots import domains_named

ENABLED = ["-e", json.dumps({"hyperpod_observability": {"enabled": True}})]
TEAM, GROUP = "vision", "TeamVision"


def access_of(client, seed: dict) -> dict:
    """Every way the team's group reaches the account, the cluster, Studio or Grafana."""
    group_id = seed["group_ids"][GROUP]
    sso = client.boto3_client("sso-admin")
    instance = seed["identity_center_instance_arn"]
    assignments = []
    for page in sso.get_paginator("list_permission_sets").paginate(InstanceArn=instance):
        for arn in page["PermissionSets"]:
            listed = sso.list_account_assignments(InstanceArn=instance, AccountId=seed["account_id"], PermissionSetArn=arn)["AccountAssignments"]
            assignments += [arn for a in listed if a["PrincipalId"] == group_id]
    cluster = seed["eks_cluster_arn"].rsplit("/", 1)[1]
    # The entry of the team's permission-set role and the one of its Studio execution role.
    team_roles = (f"/AWSReservedSSO_hyperpod-{TEAM}_", f":role/hyperpod-{TEAM}-studio-execution")
    listed = client.boto3_client("eks").list_access_entries(clusterName=cluster)["accessEntries"]
    entries = [p for p in listed if any(role in p for role in team_roles)]
    studio = []
    for domain in domains_named(client.boto3_client("sagemaker"), f"hyperpod-{TEAM}"):
        described = client.boto3_client("sagemaker").describe_domain(DomainId=domain["DomainId"])
        if described.get("SingleSignOnApplicationArn"):
            listed = sso.list_application_assignments(ApplicationArn=described["SingleSignOnApplicationArn"])["ApplicationAssignments"]
            studio += [a["PrincipalId"] for a in listed]
    grafana = client.boto3_client("grafana")
    roles = []
    for workspace in grafana.list_workspaces()["workspaces"]:
        permissions = grafana.list_permissions(workspaceId=workspace["id"])["permissions"]
        roles += [p["role"] for p in permissions if p["user"]["id"] == group_id]
    return {"account_assignments": assignments, "access_entries": entries, "studio_assignments": studio, "grafana_roles": roles}


def objects_under(client, seed: dict) -> int:
    return client.boto3_client("s3").list_objects_v2(Bucket=seed["data_bucket"], Prefix=f"{TEAM}/").get("KeyCount", 0)


def budget_exists(client, seed: dict) -> bool:
    budgets = client.boto3_client("budgets")
    try:
        budgets.describe_budget(AccountId=seed["account_id"], BudgetName=f"hyperpod-{TEAM}-monthly")
    except budgets.exceptions.NotFoundException:
        return False
    return True


def onboard_then_mark_absent(sample) -> dict:
    seed = json.loads(sample.seed_file.read_text())
    assert_ok(sample.run("site.yml", "--limit", "localhost", *ENABLED), "cluster with observability")
    assert_ok(sample.run("playbooks/add_team.yml", "-e", f"team={TEAM}", *ENABLED), "add_team")
    before = access_of(sample.client, seed)
    assert all(before.values()), f"the team had no access to revoke: {before}"
    assert len(before["access_entries"]) == 2, before["access_entries"]
    assert objects_under(sample.client, seed) >= 1 and budget_exists(sample.client, seed)
    settings = copy.deepcopy(SAMPLE)
    team = next(t for t in settings["hyperpod_teams"] if t["name"] == TEAM)
    team["state"] = "absent"
    team["storage"]["on_remove"] = "delete"
    sample.write_settings(settings)
    return seed


def offboarding_failing_at(sample, failing: str) -> tuple[dict, tuple]:
    """Onboard the team, then offboard it with ``failing`` denied: the run fails there and the team has no access left."""
    seed = onboard_then_mark_absent(sample)
    args = ("-e", f"team={TEAM}", "-e", f"confirm_delete={TEAM}", *ENABLED)
    # A denial, which no client retries: the run fails at once at that step.
    sample.client.set_faults(denial_rate=1.0, operations=[failing])
    result = sample.run("playbooks/remove_team.yml", *args)
    faulted = [f"{r['service']}:{r['operation']}" for r in sample.client.requests() if r["fault"]]
    sample.client.clear_faults()
    assert result.returncode != 0, "the injected fault did not fail the run"
    assert faulted and set(faulted) == {failing}
    assert access_of(sample.client, seed) == {"account_assignments": [], "access_entries": [], "studio_assignments": [], "grafana_roles": []}
    # The budget goes last: it is there whichever step failed. The data goes after the quota.
    assert budget_exists(sample.client, seed)
    assert (objects_under(sample.client, seed) == 0) == (failing == "budgets:DeleteBudget")
    return seed, args


def test_an_offboarding_failed_at_the_budget_leaves_the_team_no_access(sample):
    offboarding_failing_at(sample, "budgets:DeleteBudget")


def test_an_offboarding_failed_at_the_quota_leaves_the_team_no_access_then_on_remove_delete_deletes_the_s3_prefix(sample):
    seed, args = offboarding_failing_at(sample, "sagemaker:DeleteComputeQuota")
    # The prefix is still there: the run without the fault (on_remove: delete) finishes, the prefix and the budget
    # are gone, and a rerun changes nothing.
    assert_ok(sample.run("playbooks/remove_team.yml", *args), "remove_team with on_remove: delete")
    assert objects_under(sample.client, seed) == 0
    assert not budget_exists(sample.client, seed)
    sample.client.clear_requests()
    rerun = sample.run("playbooks/remove_team.yml", *args)
    assert_ok(rerun, "remove_team again")
    assert rerun.changed_tasks() == set()
    assert [r["operation"] for r in sample.client.writes()] == []
