"""The playbooks ops teams run, end to end on the sandbox: build, onboard, offboard, drift."""

from __future__ import annotations

import copy
import json
import threading
import time
from collections import Counter

import pytest

from bench.teams import team_file
from sandbox import iam_propagation
from sandbox.seed import seed
from tests.integration.playbook_runner import SAMPLE, Playbooks, assert_ok
from tests.integration.snapshots import domains_named, permission_sets_named, quotas_of_team, team_snapshot

TEAMS = [team["name"] for team in SAMPLE["hyperpod_teams"]]
# Seconds a new IAM role is refused in the cold site.yml below: long enough that every team's new roles are refused first.
IAM_DELAY = 2.0


def test_the_installed_artifact_from_a_dry_run_on_a_new_account_to_a_cold_site_a_no_op_a_corrected_role_and_an_offboarding(installed):
    """The sample's life as a user runs it: the built artifact installed into an empty collections path, its playbooks run
    by FQCN from a directory holding only the user's ansible.cfg, inventory and team file. One sandbox throughout: each
    step was a test of its own, each paying for a cold site.yml of its own."""
    dry_run_on_a_new_account(installed)
    cold_site_waits_out_new_roles(installed)
    deleted_studio_role_and_its_access_entry_made_again(installed)
    rerun_writes_nothing_and_reads_what_teams_share_once(installed)
    reports_go_where_the_user_runs(installed)
    offboarding_keeps_data_and_other_teams(installed)


def dry_run_on_a_new_account(installed):
    # A new account: the EKS cluster and what the platform provides (seed), no HyperPod cluster yet. The first dry run a
    # platform team makes predicts the cluster and each team's resources; the teams' cluster ARN is not known yet.
    assert "ml-shared" not in [c["ClusterName"] for c in installed.client.boto3_client("sagemaker").list_clusters()["ClusterSummaries"]]
    installed.client.clear_requests()
    predicted = installed.run("hyperpod.tenancy.site", "--check", "--diff")
    assert_ok(predicted, "site.yml --check on a new account")
    assert installed.client.writes() == []
    layers = {(host, layer) for host, _task, layer in predicted.changed_layers()}
    for team in TEAMS:
        # The quota too: predicted on the stand-in ARN, against the capacity of the cluster file's instance groups.
        assert {(f"team_{team}", layer) for layer in ("permission_set", "execution_role", "domain", "s3_prefix", "quota")} <= layers, layers
    # The cluster itself is predicted (the cluster play reports a change).
    assert [task for host, task in predicted.changed_tasks() if host == "localhost"], predicted.changed_tasks()
    # What cannot be predicted before the cluster exists is said, not guessed.
    assert "created by this run" in predicted.stdout
    # So does the first drift report of the AWX job (check mode from its play, not from --check): it reports every team.
    drift = installed.run("hyperpod.tenancy.drift")
    assert drift.returncode == 2 and installed.client.writes() == []
    assert {host for host, _task, _layer in drift.changed_layers()} >= {f"team_{team}" for team in TEAMS}, drift.failures()
    # Its one failure is the drift it reports, of the cluster and every team, not a team the run could not predict.
    assert drift.failures() == [
        "localhost | Fail when a team differs from the team file, so the scheduler alerts | Drift in localhost, %s: run with -e enforce=true to correct it"
        % ", ".join(sorted(TEAMS))]


def cold_site_waits_out_new_roles(installed):
    # A cold site.yml converges although IAM is eventually consistent: the sandbox refuses every new role for
    # IAM_DELAY seconds after its CreateRole, with what each service answers (sandbox/iam_propagation.py); the modules
    # wait it out with the bounded retries of exactly those errors (module_utils/retry.py IAM_PROPAGATION).
    installed.client.set_faults(iam_propagation_s=IAM_DELAY)
    installed.client.clear_requests()
    assert_ok(installed.run("hyperpod.tenancy.site"), "site.yml while new roles are refused")
    requests = installed.client.requests()
    # Per team: the access entries of its permission-set role and of its Studio execution role; its pods role's association;
    # its Studio domain, which SageMaker refuses in AWS's own words while the execution role is new (retry.py IAM_PROPAGATION).
    for operation, made in (("CreateAccessEntry", 2 * len(TEAMS)), ("CreatePodIdentityAssociation", len(TEAMS)), ("CreateDomain", len(TEAMS))):
        statuses = [r["status"] for r in requests if r["operation"] == operation]
        # Refused while the team roles were new, then accepted: every team got its entry and association.
        assert 400 in statuses, (operation, statuses)
        assert statuses.index(400) < len(statuses) - 1 and statuses[-1] == 200, (operation, statuses)
        assert statuses.count(200) == made, (operation, statuses)


def deleted_studio_role_and_its_access_entry_made_again(installed):
    # EKS API reference, AccessEntry.principalArn: an entry of a deleted principal "won't work", even for a principal made
    # again with the same ARN. Drift correction makes the team's Studio execution role again by name: its entry too.
    installed.client.set_faults(iam_propagation_s=iam_propagation.DEFAULT_DELAY)
    iam, eks = installed.client.boto3_client("iam"), installed.client.boto3_client("eks")
    cluster = json.loads(installed.seed_file.read_text())["eks_cluster_arn"].rsplit("/", 1)[1]
    name = "hyperpod-vision-studio-execution"
    arn = iam.get_role(RoleName=name)["Role"]["Arn"]
    old = eks.describe_access_entry(clusterName=cluster, principalArn=arn)["accessEntry"]
    # Deleted out of band (a second later: IAM's CreateDate counts whole seconds); its access entry stays, and no longer works.
    time.sleep(1.1)
    for policy in iam.list_role_policies(RoleName=name)["PolicyNames"]:
        iam.delete_role_policy(RoleName=name, PolicyName=policy)
    for attached in iam.list_attached_role_policies(RoleName=name)["AttachedPolicies"]:
        iam.detach_role_policy(RoleName=name, PolicyArn=attached["PolicyArn"])
    iam.delete_role(RoleName=name)
    assert eks.describe_access_entry(clusterName=cluster, principalArn=arn)["accessEntry"]["accessEntryArn"] == old["accessEntryArn"]

    corrected = installed.run("hyperpod.tenancy.add_team", "-e", "team=vision")
    assert_ok(corrected, "add_team vision after its Studio role was deleted")
    layers = {layer for _host, _task, layer in corrected.changed_layers()}
    assert {"execution_role", "studio_access_entry"} <= layers, layers
    assert "older than its IAM role" in corrected.stdout
    entry = eks.describe_access_entry(clusterName=cluster, principalArn=arn)["accessEntry"]
    assert entry["accessEntryArn"] != old["accessEntryArn"]
    assert entry["createdAt"] >= iam.get_role(RoleName=name)["Role"]["CreateDate"]
    assert (entry["kubernetesGroups"], entry["username"], entry["tags"]) == (old["kubernetesGroups"], old["username"], old["tags"])
    assert installed.client.access_entry_works(cluster, arn)


def rerun_writes_nothing_and_reads_what_teams_share_once(installed):
    # A rerun (IAM's delay back to what every playbook run meets) changes nothing, writes nothing, and reads what the teams share once.
    installed.client.set_faults(iam_propagation_s=iam_propagation.DEFAULT_DELAY)
    installed.client.clear_requests()
    rerun = installed.run("hyperpod.tenancy.site")
    assert_ok(rerun, "second site.yml")
    assert rerun.changed_tasks() == set()
    assert {host: stats["changed"] for host, stats in rerun.stats.items()} == dict.fromkeys(rerun.stats, 0)
    assert [r["operation"] for r in installed.client.writes()] == []
    # What the teams share is looked up once per run, not once per team.
    reads = Counter(r["operation"] for r in installed.client.requests())
    groups = {team["identity_center_group"] for team in SAMPLE["hyperpod_teams"]}
    assert (reads["ListInstances"], reads["DescribeSubnets"], reads["ListPermissionSets"], reads["GetGroupId"]) == (1, 1, 1, len(groups))
    assert reads["DescribePermissionSet"] == len(TEAMS)  # shared_info finds each by name; its module takes that answer
    # Which permission sets the account holds, and which are outdated, are listed once (two listings); a boundary no team sets is not read.
    assert (reads["ListPermissionSetsProvisionedToAccount"], reads["ListAccountsForProvisionedPermissionSet"]) == (2, len(TEAMS))
    # The account's roles and their quota, once (the teams' new roles are counted against it).
    assert reads["GetAccountSummary"] == 1
    assert reads["GetPermissionsBoundaryForPermissionSet"] == 0
    # The budgets and their notifications are listed once for the account, not described per team.
    assert (reads["DescribeBudgets"], reads["DescribeBudgetNotificationsForAccount"]) == (1, 1)
    assert reads["DescribeBudget"] == reads["DescribeNotificationsForBudget"] == 0
    # So are the domains' user profiles.
    assert reads["ListUserProfiles"] == 1
    # shared_info reads each team's Studio role, access entries and S3 marker to check their owners before the first write;
    # the layers take those answers (GetRole: the Studio role there, the pods role in the namespace layer).
    assert (reads["GetRole"], reads["DescribeAccessEntry"], reads["GetObjectTagging"]) == (2 * len(TEAMS), 2 * len(TEAMS), len(TEAMS))
    # The quotas: one list per run, for the owner check and for each team's capacity check of a quota the run leaves as it is.
    assert reads["ListComputeQuotas"] == 1


def reports_go_where_the_user_runs(installed):
    # A report goes where the user runs the playbook (reports/ there), never into the installed collection.
    assert_ok(installed.run("hyperpod.tenancy.chargeback", "-e", "chargeback_month=2026-01"), "chargeback")
    assert sorted(path.name for path in (installed.cwd / "reports" / "chargeback").iterdir()) == [
        "chargeback-2026-01.csv", "chargeback-2026-01.html", "chargeback-2026-01.md"]


def offboarding_keeps_data_and_other_teams(installed):
    # Offboarding one team (on the state the rerun left as it found it) keeps its data and leaves the other teams as they were.
    seed = json.loads(installed.seed_file.read_text())
    others_before = {team: team_snapshot(installed.client, seed, team) for team in TEAMS if team != "vision"}
    settings = copy.deepcopy(SAMPLE)
    settings["hyperpod_teams"][0]["state"] = "absent"
    # A lead's file that turns Studio off before the removal (red team): what the runs made of it goes all the same.
    settings["hyperpod_teams"][0]["workspace"] = dict(settings["hyperpod_teams"][0].get("workspace") or {}, enabled=False)
    installed.write_settings(settings)
    s3 = installed.client.boto3_client("s3")
    s3.put_object(Bucket=seed["data_bucket"], Key="vision/results/run-1.json", Body=b"{}")
    assert_ok(installed.run("hyperpod.tenancy.remove_team", "-e", "team=vision"), "remove_team")
    others_after = {team: team_snapshot(installed.client, seed, team) for team in TEAMS if team != "vision"}
    assert others_after == others_before
    gone = team_snapshot(installed.client, seed, "vision")
    assert gone["permission_set"] is None and gone["quotas"] == [] and gone["domains"] == [] and gone["budget"] is None
    iam = installed.client.boto3_client("iam")
    assert [r["RoleName"] for r in iam.list_roles()["Roles"] if r["RoleName"].startswith("hyperpod-vision-")] == []
    eks_cluster = SAMPLE["hyperpod_cluster"]["eks_cluster_name"]
    entries = installed.client.boto3_client("eks").list_access_entries(clusterName=eks_cluster)["accessEntries"]
    assert not [entry for entry in entries if "hyperpod-vision-" in entry], entries
    kept = s3.list_objects_v2(Bucket=seed["data_bucket"], Prefix="vision/")
    assert [o["Key"] for o in kept.get("Contents", [])] == ["vision/results/run-1.json"], "offboarding deleted the team's S3 data"
    # Kept, so the name (and the gid of the kept FSx directory) is retired: the ledger beside the marks names the team.
    retired = json.loads(s3.get_object(Bucket=seed["data_bucket"], Key="_hyperpod/retired/vision")["Body"].read())
    assert (retired["team"], retired["identity_center_group"], retired["gid"]) == ("vision", "TeamVision", SAMPLE["hyperpod_teams"][0]["storage"]["gid"])


def test_a_team_whose_group_is_missing_fails_before_any_team_resource(sample):
    settings = copy.deepcopy(SAMPLE)
    settings["hyperpod_teams"][1]["identity_center_group"] = "TeamNobody"
    sample.write_settings(settings)
    result = sample.run("site.yml")
    assert result.returncode == 2
    assert "'TeamNobody' (team nlp)" in result.stdout
    team_writes = [r["operation"] for r in sample.client.writes() if r["service"] in ("sso-admin", "identitystore", "iam", "budgets", "s3")]
    assert team_writes == []
    assert not [r for r in sample.client.writes() if r["operation"] in ("CreateDomain", "CreateComputeQuota", "CreateAccessEntry")]


def test_teams_that_would_pass_an_account_quota_are_refused_before_any_team_resource(sample):
    # IAM says its quota; the sample's three teams make three roles each in a cold run (Identity Center's, Studio's, Pod Identity's).
    roles = sample.client.boto3_client("iam").get_account_summary()["SummaryMap"]["Roles"]
    sample.client.configure(iam_roles_per_account=roles + 3 * len(TEAMS) - 1)
    # Identity Center does not: the team file says what AWS granted, here one provisioned permission set short.
    settings = dict(copy.deepcopy(SAMPLE), hyperpod_identity_center_quotas={"provisioned_permission_sets_per_account": len(TEAMS) - 1})
    sample.write_settings(settings)
    result = sample.run("site.yml")
    assert result.returncode == 2
    assert "holds 0 provisioned permission sets: the %d present teams without theirs" % len(TEAMS) in result.stdout
    assert "hyperpod_identity_center_quotas.provisioned_permission_sets_per_account" in result.stdout
    assert "holds %d IAM roles: the %d new roles of %d present teams" % (roles, 3 * len(TEAMS), len(TEAMS)) in result.stdout
    team_writes = [r["operation"] for r in sample.client.writes() if r["service"] in ("sso-admin", "identitystore", "iam", "budgets", "s3")]
    assert team_writes == []
    # With the quotas AWS would have raised, the same run goes through.
    sample.client.configure(iam_roles_per_account=roles + 3 * len(TEAMS))
    settings["hyperpod_identity_center_quotas"]["provisioned_permission_sets_per_account"] = len(TEAMS)
    sample.write_settings(settings)
    assert_ok(sample.run("site.yml"), "site.yml within the quotas")


def test_check_mode_predicts_exactly_what_onboarding_by_fqcn_changes(installed):
    assert_ok(installed.run("hyperpod.tenancy.site", "--limit", "localhost"), "cluster only")
    installed.client.clear_requests()
    predicted = installed.run("hyperpod.tenancy.add_team", "-e", "team=vision", "--check")
    assert_ok(predicted, "add_team --check")
    assert installed.client.writes() == []
    done = installed.run("hyperpod.tenancy.add_team", "-e", "team=vision")
    assert_ok(done, "add_team")
    assert predicted.changed_tasks() == done.changed_tasks()
    assert predicted.changed_tasks(), "onboarding changed nothing: the comparison proves nothing"
    assert predicted.changed_layers() == done.changed_layers()
    assert {layer for _host, _task, layer in done.changed_layers()} >= {"permission_set", "namespace", "quota"}, done.changed_layers()


@pytest.mark.parametrize(
    "playbook, team, refusal, calls",
    [
        # A team not in the file: refused before any call.
        ("add_team", "robotics", "team 'robotics': not in the team file", "requests"),
        # A team still present is removed only when confirmed: refused before any write.
        ("remove_team", "nlp", "Team nlp is still state: present", "writes"),
    ],
    ids=["add_team-a-team-not-in-the-file", "remove_team-a-team-still-present-unless-confirmed"],
)
def test_team_playbooks_refuse(sample, playbook, team, refusal, calls):
    sample.client.clear_requests()
    result = sample.run("playbooks/%s.yml" % playbook, "-e", "team=%s" % team)
    assert result.returncode == 2
    assert refusal in result.stdout
    assert getattr(sample.client, calls)() == []


def test_two_onboardings_of_one_team_at_once_both_succeed_and_make_one_set_of_resources(sample):
    assert_ok(sample.run("site.yml", "--limit", "localhost"), "cluster only")
    results = []

    def onboard():
        results.append(sample.run("playbooks/add_team.yml", "-e", "team=vision"))

    threads = [threading.Thread(target=onboard) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # A run whose create another run beat converges what that run made (layer.converge_past_a_lost_race).
    assert all(r.returncode == 0 for r in results), [r.stdout[-5000:] for r in results]
    assert_ok(sample.run("playbooks/add_team.yml", "-e", "team=vision"), "third onboarding converges")
    seed = json.loads(sample.seed_file.read_text())
    sagemaker = sample.client.boto3_client("sagemaker")
    assert len(domains_named(sagemaker, "hyperpod-vision")) == 1
    assert len(quotas_of_team(sagemaker, "vision")) == 1
    assert permission_sets_named(sample.client.boto3_client("sso-admin"), seed["identity_center_instance_arn"], "hyperpod-vision") == 1


def generated(sandbox, tmp_path, teams: int) -> Playbooks:
    """A sandbox seeded for a generated file of ``teams`` teams (their groups, members, cluster)."""
    settings = team_file(teams)
    return Playbooks(sandbox, seed(sandbox, settings), tmp_path, settings)


@pytest.mark.parametrize("kill_after", [4, 9, 16])
def test_an_interrupted_onboarding_converges_on_rerun_without_duplicates(sandbox, tmp_path, kill_after):
    playbooks = generated(sandbox, tmp_path, 5)
    client, seed = sandbox, json.loads(playbooks.seed_file.read_text())
    Playbooks.kill_after(playbooks.start("site.yml"), kill_after)
    assert_ok(playbooks.run("site.yml"), "rerun after the interruption")
    sagemaker = client.boto3_client("sagemaker")
    sso = client.boto3_client("sso-admin")
    for team in playbooks.settings["hyperpod_teams"]:
        name = team["name"]
        assert len(domains_named(sagemaker, f"hyperpod-{name}")) == 1, name
        assert len(quotas_of_team(sagemaker, name)) == 1, name
        assert permission_sets_named(sso, seed["identity_center_instance_arn"], f"hyperpod-{name}") == 1, name


def test_site_survives_throttling_and_server_errors(sandbox, tmp_path):
    client = sandbox
    playbooks = generated(sandbox, tmp_path, 5)
    client.set_faults(throttle_rate=0.2, error_rate=0.05, seed=11)
    assert_ok(playbooks.run("site.yml"), "site.yml under faults")
    faults = [r["fault"] for r in client.requests() if r["fault"]]
    assert faults.count("throttle") > 10 and faults.count("error") > 0
    client.clear_requests()
    rerun = playbooks.run("site.yml")
    assert_ok(rerun, "rerun under faults")
    assert rerun.changed_tasks() == set()
    assert [r["operation"] for r in client.writes()] == []
