"""Offboarding revokes every way in before it touches anything else, and deletes the S3 prefix when the team file says delete.

The team is onboarded with observability and a Grafana token (the Grafana HTTP API is the stub of
tests/integration/grafana_api.py), so its Grafana team, folder and dashboards exist too. A fault injected by
the sandbox (``/_sandbox/faults``) or by the stub (``/_stub/faults``) makes one step fail, or the run is refused:

- a refusal (the team's Grafana folder is not the collection's): nothing is written, to AWS or to Grafana;
- a revocation itself (DeleteAccessEntry denied): the revocations before it are done (the account assignment),
  that way in and those after it are still open, and nothing else was written, to AWS or to Grafana;
- the dashboards' export (a Grafana 500), the step right after the revocations;
- the compute quota, or the budget (the last step).

After any failure but the revocation's, the team has no access left, read with boto3 and the stub directly: no
account assignment of its group, no access entry of its role or of its Studio execution role, no assignment of its
Studio domain's application, no Grafana workspace role, no Grafana team. What the run had not reached yet is still
there (the folder is never deleted before its dashboards are exported), and the next run, without that fault,
carries on from there; the last one, without any fault, finishes the offboarding, deleting the S3 prefix
(``on_remove: delete``), and a rerun changes nothing.
"""

from __future__ import annotations

import copy
import fnmatch
import json

from tests.integration.playbook_runner import SAMPLE, assert_ok
from tests.integration.snapshots import domains_named, quotas_of_team

TEAM, GROUP = "vision", "TeamVision"
# module_utils/dashboards.py, grafana_uid: "hp-<kind>_<team>".
FOLDER = f"hp-folder_{TEAM}"
DASHBOARDS = sorted(f"hp-{name}_{TEAM}" for name in ("gpu", "workloads", "capacity"))
NO_ACCESS = {"account_assignments": [], "access_entries": [], "studio_assignments": [], "grafana_roles": [], "grafana_teams": []}


def enabled(sample, grafana) -> tuple[str, str]:
    """Observability on, with the stub as the workspace's Grafana API and its token; reports under the test's directory."""
    return "-e", json.dumps({
        "hyperpod_observability": {"enabled": True},
        "observability_grafana_url": grafana.url,
        "hyperpod_grafana_api_key": grafana.token,
        "hyperpod_offboarding_report_dir": str(sample.workdir / "reports"),
    })  # fmt: skip


def access_of(client, seed: dict, grafana) -> dict:
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
    workspaces = client.boto3_client("grafana")
    roles = []
    for workspace in workspaces.list_workspaces()["workspaces"]:
        permissions = workspaces.list_permissions(workspaceId=workspace["id"])["permissions"]
        roles += [p["role"] for p in permissions if p["user"]["id"] == group_id]
    # The Grafana team named after the group is what lets its members see the team's folder.
    teams = [t["name"] for t in grafana.state()["teams"].values() if t["name"] == GROUP]
    return {"account_assignments": assignments, "access_entries": entries, "studio_assignments": studio, "grafana_roles": roles, "grafana_teams": teams}


def objects_under(client, seed: dict) -> int:
    return client.boto3_client("s3").list_objects_v2(Bucket=seed["data_bucket"], Prefix=f"{TEAM}/").get("KeyCount", 0)


def budget_exists(client, seed: dict) -> bool:
    budgets = client.boto3_client("budgets")
    try:
        budgets.describe_budget(AccountId=seed["account_id"], BudgetName=f"hyperpod-{TEAM}-monthly")
    except budgets.exceptions.NotFoundException:
        return False
    return True


def folder_dashboards(grafana) -> list[str] | None:
    """The dashboards in the team's folder, None when the folder is gone."""
    state = grafana.state()
    if FOLDER not in state["folders"]:
        return None
    return sorted(uid for uid, stored in state["dashboards"].items() if stored["folderUid"] == FOLDER)


def exported(sample) -> list[str]:
    directory = sample.workdir / "reports" / TEAM / "grafana"
    return sorted(path.stem for path in directory.glob("*.json")) if directory.is_dir() else []


def onboard_then_mark_absent(sample, grafana) -> tuple[dict, tuple]:
    """Onboard the team with observability and its Grafana folder, mark it absent (on_remove: delete); the offboarding's arguments."""
    seed = json.loads(sample.seed_file.read_text())
    assert_ok(sample.run("site.yml", "--limit", "localhost", *enabled(sample, grafana)), "cluster with observability")
    assert_ok(sample.run("playbooks/add_team.yml", "-e", f"team={TEAM}", *enabled(sample, grafana)), "add_team")
    before = access_of(sample.client, seed, grafana)
    assert all(before.values()), f"the team had no access to revoke: {before}"
    assert len(before["access_entries"]) == 2, before["access_entries"]
    assert folder_dashboards(grafana) == DASHBOARDS
    # The team's data: what on_remove: delete deletes last (the prefix's ownership mark is not under it).
    sample.client.boto3_client("s3").put_object(Bucket=seed["data_bucket"], Key=f"{TEAM}/results/run-1.json", Body=b"{}")
    assert objects_under(sample.client, seed) >= 1 and budget_exists(sample.client, seed)
    settings = copy.deepcopy(SAMPLE)
    team = next(t for t in settings["hyperpod_teams"] if t["name"] == TEAM)
    team["state"] = "absent"
    team["storage"]["on_remove"] = "delete"
    sample.write_settings(settings)
    return seed, ("-e", f"team={TEAM}", "-e", f"confirm_delete={TEAM}", *enabled(sample, grafana))


def offboarding_failing_at(sample, grafana, seed: dict, args: tuple, failing: str) -> dict:
    """Offboard with ``failing`` denied by the sandbox (``service:Operation``) or failed by Grafana (``METHOD path``).

    The run fails there, at that step and no other (every failed request is one of ``failing``); returns what access the
    team has left.
    """
    sample.client.clear_requests()
    grafana.clear_requests()
    # A denial, or a Grafana server error, which no client retries: the run fails at once at that step.
    if ":" in failing:
        sample.client.set_faults(denial_rate=1.0, operations=[failing])
    else:
        grafana.set_faults(error_rate=1.0, operations=[failing])
    result = sample.run("playbooks/remove_team.yml", *args)
    sample.client.clear_faults()
    grafana.clear_faults()
    faulted = {f"{r['service']}:{r['operation']}" for r in sample.client.requests() if r["fault"]}
    faulted |= {f"{r['method']} {r['path']}" for r in grafana.requests() if r.get("fault")}
    assert result.returncode != 0, "the injected fault did not fail the run"
    # The export loops over the dashboards: each of them fails, and the loop fails after the last one.
    assert faulted and all(fnmatch.fnmatchcase(operation, failing) for operation in faulted), faulted
    return access_of(sample.client, seed, grafana)


def test_refused_writes_nothing_denied_at_a_revocation_stops_there_failed_at_the_budget_leaves_no_access(sample, grafana_stub):
    seed, args = onboard_then_mark_absent(sample, grafana_stub)
    # A refusal comes before the first write: with the roles' token taken for another identity, the team's folder is not
    # the collection's, and the run stops with nothing written, to AWS or to Grafana, and every way in as it was.
    before = access_of(sample.client, seed, grafana_stub)
    sample.client.clear_requests()
    grafana_stub.clear_requests()
    refused = sample.run("playbooks/remove_team.yml", *args, "-e", "hyperpod_grafana_login=someone-else")
    assert refused.returncode != 0 and any("not made by" in failure for failure in refused.failures()), refused.failures()
    assert sample.client.writes() == [] and grafana_stub.writes() == []
    assert access_of(sample.client, seed, grafana_stub) == before

    # The account assignment goes first, then the access entry of the team's role: denied, the run stops there.
    left = offboarding_failing_at(sample, grafana_stub, seed, args, "eks:DeleteAccessEntry")
    assert left["account_assignments"] == []
    assert len(left["access_entries"]) == 2, left["access_entries"]
    assert left["studio_assignments"] and left["grafana_roles"] and left["grafana_teams"], left
    # Nothing after the denied revocation ran: the only writes are Identity Center's and the denied one, none to Grafana.
    writes = [f"{r['service']}:{r['operation']}" for r in sample.client.writes()]
    assert writes[-1] == "eks:DeleteAccessEntry" and writes.count("eks:DeleteAccessEntry") == 1, writes
    assert {w.split(":")[0] for w in writes[:-1]} == {"sso-admin"}, writes
    assert grafana_stub.writes() == []
    assert folder_dashboards(grafana_stub) == DASHBOARDS and quotas_of_team(sample.client.boto3_client("sagemaker"), TEAM)

    # The next run carries on: every way in is revoked, then everything else, and it fails at the budget, the last step.
    assert offboarding_failing_at(sample, grafana_stub, seed, args, "budgets:DeleteBudget") == NO_ACCESS
    assert budget_exists(sample.client, seed)
    assert objects_under(sample.client, seed) == 0
    assert folder_dashboards(grafana_stub) is None and exported(sample) == DASHBOARDS


def test_an_offboarding_failed_at_grafana_then_at_the_quota_leaves_no_access_then_on_remove_delete_deletes_the_s3_prefix(sample, grafana_stub):
    seed, args = onboard_then_mark_absent(sample, grafana_stub)
    # Grafana fails the export of a dashboard, the first step after the revocations: every way in is already closed,
    # the folder is kept with its dashboards (none is deleted unexported), and nothing after it ran.
    assert offboarding_failing_at(sample, grafana_stub, seed, args, "GET /api/dashboards/uid/*") == NO_ACCESS
    assert folder_dashboards(grafana_stub) == DASHBOARDS
    assert quotas_of_team(sample.client.boto3_client("sagemaker"), TEAM)
    assert objects_under(sample.client, seed) >= 1 and budget_exists(sample.client, seed)

    # The next run exports the dashboards, removes the folder, and is denied at the quota.
    assert offboarding_failing_at(sample, grafana_stub, seed, args, "sagemaker:DeleteComputeQuota") == NO_ACCESS
    assert folder_dashboards(grafana_stub) is None and exported(sample) == DASHBOARDS
    # The budget goes last and the data after the quota: both are still there.
    assert budget_exists(sample.client, seed)
    assert objects_under(sample.client, seed) >= 1

    # The run without the fault (on_remove: delete) finishes, the prefix and the budget are gone, and a rerun changes nothing.
    assert_ok(sample.run("playbooks/remove_team.yml", *args), "remove_team with on_remove: delete")
    assert objects_under(sample.client, seed) == 0
    assert not budget_exists(sample.client, seed)
    sample.client.clear_requests()
    grafana_stub.clear_requests()
    rerun = sample.run("playbooks/remove_team.yml", *args)
    assert_ok(rerun, "remove_team again")
    assert rerun.changed_tasks() == set()
    assert [r["operation"] for r in sample.client.writes()] == []
    assert grafana_stub.writes() == []
