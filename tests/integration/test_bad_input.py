"""Malformed team files: site.yml fails naming the team and the field, before any AWS call."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.teams import sandbox_inventory, write_settings
from sandbox.seed import load_sample

ROOT = Path(__file__).resolve().parents[2]
GOOD = load_sample()


def team_change(index, path, value):
    def change(settings):
        target = settings["hyperpod_teams"][index]
        *parents, last = path
        for key in parents:
            target = target[key]
        target[last] = value

    return change


def settings_change(key, value):
    def change(settings):
        settings[key] = value

    return change


def cluster_change(path, value):
    def change(settings):
        target = settings["hyperpod_cluster"]
        *parents, last = path
        for key in parents:
            target = target[key]
        target[last] = value

    return change


P5 = "ml.p5.48xlarge"
CASES = [
    ("teams not a list", settings_change("hyperpod_teams", "vision"), "hyperpod_teams: must be a list of teams, got str"),
    ("team not a mapping", settings_change("hyperpod_teams", ["vision"]), "team #1: must be a mapping, got str"),
    ("name missing", team_change(0, ["name"], None), "team #1: name: is required"),
    ("name with capitals", team_change(0, ["name"], "Vision"), "team 'Vision': name: must be lower-case"),
    ("name with underscore", team_change(0, ["name"], "computer_vision"), "team 'computer_vision': name:"),
    ("name too long for the permission set", team_change(0, ["name"], "vision-team-with-long-name"), "permission set name"),
    ("duplicate team", team_change(1, ["name"], "vision"), "team 'vision': name: is used by team #1 and team #2"),
    ("group missing", team_change(0, ["identity_center_group"], None), "team 'vision': identity_center_group: is required"),
    ("group shared", team_change(1, ["identity_center_group"], "TeamVision"), "TeamVision is the group of vision and nlp"),
    ("typo in team key", team_change(0, ["cost_centre"], "CC"), "team 'vision': cost_centre: unknown key (did you mean 'cost_center'?)"),
    ("typo in quota key", team_change(0, ["quota", "sharring"], "lend"), "team 'vision': quota.sharring: unknown key"),
    ("unknown state", team_change(0, ["state"], "deleted"), "team 'vision': state: 'deleted' is not one of present, absent"),
    ("unknown instance type", team_change(0, ["quota", "resources"], [{"instance_type": "ml.p5.96xlarge", "count": 1}]), "not a HyperPod instance type"),
    ("type not in the cluster", team_change(0, ["quota", "resources"], [{"instance_type": "ml.g5.xlarge", "count": 1}]), "the cluster has no ml.g5.xlarge"),
    ("over capacity", team_change(0, ["quota", "resources"], [{"instance_type": P5, "count": 6}]), "guaranteed ml.p5.48xlarge total 9 (vision 6, nlp 3)"),
    ("count is text", team_change(0, ["quota", "resources", 0, "count"], "four"), "team 'vision': quota.resources[0].count: 'four'"),
    ("count negative", team_change(0, ["quota", "resources", 0, "count"], -1), "team 'vision': quota.resources[0].count: -1"),
    ("borrow limit out of range", team_change(0, ["quota", "borrow_limit"], 20000), "team 'vision': quota.borrow_limit: 20000"),
    ("borrow limit with lend only", team_change(2, ["quota", "borrow_limit"], 10), "team 'research': quota.borrow_limit: applies only with"),
    ("weight out of range", team_change(0, ["quota", "fair_share_weight"], 250), "team 'vision': quota.fair_share_weight: 250"),
    ("unknown sharing", team_change(0, ["quota", "sharing"], "share"), "team 'vision': quota.sharing: 'share'"),
    ("duplicate member", team_change(0, ["members"], ["alice", "alice"]), "team 'vision': members[1].name: alice is listed twice"),
    ("member breaks profile pattern", team_change(0, ["members"], ["alice.smith"]), "team 'vision': members[0].name: 'alice.smith'"),
    ("budget negative", team_change(0, ["budget", "monthly_usd"], -1), "team 'vision': budget.monthly_usd: -1"),
    ("budget notify not an address", team_change(0, ["budget", "notify"], ["finops"]), "team 'vision': budget.notify[0]: 'finops'"),
    ("storage mode as number", team_change(0, ["storage"], {"gid": 20001, "mode": 770}), "team 'vision': storage.mode: 770"),
    ("unknown on_remove", team_change(0, ["storage"], {"gid": 20001, "on_remove": "purge"}), "team 'vision': storage.on_remove: 'purge'"),
    ("eleven priority classes", cluster_change(["scheduler", "priority_classes"], [{"name": f"p{i}", "weight": 1} for i in range(11)]), "has 11 entries"),
    ("priority class pattern", cluster_change(["scheduler", "priority_classes", 0, "name"], "Inference"), "priority_classes[0].name: 'Inference'"),
    ("priority weight", cluster_change(["scheduler", "priority_classes", 0, "weight"], 101), "priority_classes[0].weight: 101"),
    # Issue 19 item 3: uids, gids and modes, across teams.
    ("two teams share a gid", team_change(1, ["storage", "gid"], 20001), "storage.gid: 20001 is the gid of vision and nlp"),
    ("two people share a uid", team_change(1, ["members", 0, "uid"], 10001), "uid 10001 is given to alice (team vision) and dave (team nlp)"),
    ("one person, two uids", team_change(1, ["members", 0], {"name": "alice", "uid": 10009}), "alice has different uids (10001 in vision, 10009 in nlp)"),
    ("alice and Alice", team_change(0, ["members", 1, "name"], "Alice"), "members[1].name: alice and Alice differ only in case"),
    ("world-writable mode", team_change(0, ["storage", "mode"], "777"), "storage.mode: mode '777' makes the team directory world-writable"),
    ("world-writable setgid mode", team_change(0, ["storage", "mode"], "2777"), "mode '2777' makes the team directory world-writable"),
    ("unquoted 0777", team_change(0, ["storage", "mode"], 0o777), "storage.mode: 511 must be an octal mode given as a string"),
    # Issue 20: what only the cluster module checked, and the cluster file's own mistakes.
    ("node_recovery typo", cluster_change(["node_recovery"], "automatc"), "node_recovery: value of node_recovery must be one of: automatic, none"),
    ("threads_per_core 3", cluster_change(["instance_groups", 0, "threads_per_core"], 3), "instance_groups[0].threads_per_core: value of threads_per_core"),
    ("ebs size as text", cluster_change(["instance_groups", 0, "ebs_volume_size_gib"], "500 GiB"), "instance_groups[0].ebs_volume_size_gib: argument"),
    ("invalid data bucket", settings_change("hyperpod_data_bucket", "Team_Data"), "hyperpod_data_bucket: data_bucket 'Team_Data' is not an S3 bucket name"),
    ("fair_share quoted yes", cluster_change(["scheduler", "fair_share"], "yes"), "scheduler.fair_share: 'yes' must be true or false"),
    ("typo in cluster key", cluster_change(["node_recovey"], "automatic"), "cluster: node_recovey: unknown key (did you mean 'node_recovery'?)"),
    ("aws: tag key", settings_change("hyperpod_team_tag_keys", {"team": "aws:team", "cost_center": "cost-center"}),
     "hyperpod_team_tag_keys.team: tag key 'aws:team'"),
    ("tag value over 256", team_change(0, ["tags"], {"project": "p" * 257}), "tags.project: tag 'project': the value has 257 characters"),
    ("team overrides its team tag", team_change(0, ["tags"], {"team": "nlp"}), "tags.team: is set from the team's name"),
    ("cost center with commas", team_change(0, ["cost_center"], "CC-1001,CC-1002"), "cost_center: tag 'cost-center': the value 'CC-1001,CC-1002' has ','"),
    ("two SNS topics", team_change(0, ["budget", "notify"], [f"arn:aws:sns:us-east-1:123456789012:t{i}" for i in (1, 2)]), "at most one SNS topic"),
    ("eleven e-mails", team_change(0, ["budget", "notify"], [f"u{i}@example.com" for i in range(11)]), "at most one SNS topic and 10 e-mail addresses"),
    ("six notifications", team_change(0, ["budget", "thresholds"], [50, 60, 70, 80, 90]), "a budget has at most 5 notifications"),
    ("name 2024", team_change(2, ["name"], 2024), "team #3: name: 2024 is not text (YAML reads an unquoted number"),
    ("name no", team_change(2, ["name"], False), "team #3: name: False is not text (YAML reads an unquoted yes, no"),
    ("1e3 read as text", team_change(0, ["budget", "monthly_usd"], "1e3"), "budget.monthly_usd: '1e3' must be a positive number (YAML reads 1e3 as text"),
    ("bad prefix named once", settings_change("hyperpod_name_prefix", "HyperPod_"), "settings: hyperpod_name_prefix: 'HyperPod_' gives"),
    # Issue 21 item 7: AWS's documented limits.
    ("borrow limit 0", team_change(0, ["quota", "borrow_limit"], 0), "quota.borrow_limit: 0 must be a whole number from 1 to 500"),
    ("borrow limit 501", team_change(0, ["quota", "borrow_limit"], 501), "quota.borrow_limit: 501 must be a whole number from 1 to 500"),
    # Issue 39 item 7b: an FSx data repository association only where the platform allows it (hyperpod_team_limits.choices).
    ("s3_link without the platform", team_change(1, ["storage", "s3_link"], True), "team 'nlp': storage.s3_link: true is not allowed for this team"),
]


def run_site(seeded, aws_env, tmp_path, change, playbook="site.yml", *args, seed_change=None):
    """``playbook`` with the sample changed by ``change``: its teams as the team file of the inventory, the rest as extra vars.

    ``seed_change`` changes what the sandbox inventory reads of the seeded account (its FSx file system, ...).
    """
    client, seed = seeded
    seed = dict(seed)
    if seed_change:
        seed_change(seed)
    settings = copy.deepcopy(GOOD)
    change(settings)
    team_file, platform = tmp_path / "teams" / "teams.yml", tmp_path / "platform.yml"
    write_settings(settings, team_file, platform)
    seed_file = tmp_path / "seed.json"
    seed_file.write_text(json.dumps(seed))
    env = dict(aws_env, HYPERPOD_SANDBOX_SEED=str(seed_file), ANSIBLE_NOCOLOR="1")
    inventory = sandbox_inventory(tmp_path / playbook.replace("/", "_").replace(".yml", ""), team_file)
    run = subprocess.run(
        [str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(inventory), playbook, "-e", f"@{platform}", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    return run, client


# The cases one run refuses together. validate_team_file reports every problem of the file at once and fails on any,
# so each problem in its failure is a refusal before any call, whatever else the file holds: one run proves the cases
# whose changes leave each other's problem as it is. A team's name (by which every problem of the team is named), the
# shape of hyperpod_teams, and two cross-team checks on one pair of teams are never in one run. A run costs a few
# CPU seconds whatever it refuses (docs/development.md, "The suite's time budget"); every case is in exactly one.
RUNS = [
    ("group shared", "typo in team key", "typo in quota key", "unknown state", "borrow limit with lend only", "member breaks profile pattern",
     "budget negative", "storage mode as number", "eleven priority classes", "node_recovery typo", "threads_per_core 3", "invalid data bucket",
     "typo in cluster key", "aws: tag key", "tag value over 256", "cost center with commas", "bad prefix named once"),
    ("unknown instance type", "duplicate member", "budget notify not an address", "unknown on_remove", "priority class pattern", "ebs size as text",
     "team overrides its team tag", "group missing"),
    ("type not in the cluster", "priority weight", "two teams share a gid", "world-writable mode", "two SNS topics", "weight out of range"),
    ("over capacity", "world-writable setgid mode", "fair_share quoted yes", "eleven e-mails", "unknown sharing"),
    ("count is text", "two people share a uid", "unquoted 0777", "six notifications", "borrow limit 0"),
    ("count negative", "one person, two uids", "1e3 read as text", "borrow limit 501", "s3_link without the platform"),
    ("borrow limit out of range", "alice and Alice"),
    ("name with capitals", "name no"),
    ("name with underscore", "name 2024"),
    ("name missing",),
    ("name too long for the permission set",),
    ("duplicate team",),
    ("teams not a list",),
    ("team not a mapping",),
]
CASE_OF = {case[0]: case for case in CASES}


def test_every_case_is_in_one_run():
    labels = [label for run in RUNS for label in run]
    assert sorted(labels) == sorted(CASE_OF), (set(CASE_OF) ^ set(labels), [label for label in labels if labels.count(label) > 1])


def refused_problems(stdout: str) -> list[str]:
    """The problems of the failed validation (``problems`` of its result, as the default callback prints it)."""
    start = stdout.find("FAILED! => ")
    assert start >= 0, stdout[-3000:]
    result = json.JSONDecoder().raw_decode(stdout[stdout.index("{", start):])[0]
    return result["problems"]


@pytest.mark.parametrize("labels", RUNS, ids=[run[0] if len(run) == 1 else "%s and %d more" % (run[0], len(run) - 1) for run in RUNS])
def test_bad_team_file_fails_before_any_call(labels, seeded, aws_env, tmp_path):
    def change(settings):
        for label in labels:
            CASE_OF[label][1](settings)

    run, client = run_site(seeded, aws_env, tmp_path, change)
    assert run.returncode == 2, run.stdout[-3000:]
    problems = refused_problems(run.stdout)
    for label in labels:
        expected = CASE_OF[label][2]
        assert expected in run.stdout and any(expected in problem for problem in problems), (label, expected, problems)
    assert client.requests() == []


def nine_linked_teams(settings):
    base = settings["hyperpod_teams"][2]
    settings["hyperpod_teams"] = [
        dict(base, name=f"t{i}", identity_center_group=f"T{i}", members=[], storage={"gid": 30000 + i, "s3_link": True}, quota=None)
        for i in range(9)
    ]
    # The platform allows the link (the check this test proves is the count of the teams' associations).
    settings["hyperpod_team_limits"] = dict(settings.get("hyperpod_team_limits") or {}, choices={"storage.s3_link": [False, True]})


def test_a_ninth_s3_link_is_refused_before_any_call(seeded, aws_env, tmp_path):
    run, client = run_site(seeded, aws_env, tmp_path, nine_linked_teams)
    assert run.returncode == 2, run.stdout[-3000:]
    assert "9 teams link their directory to S3 (t0, t1, t2, t3, t4, t5, t6, t7, t8)" in run.stdout
    assert "at most 8 data repository associations" in run.stdout
    assert "is not allowed for this team" not in run.stdout
    assert client.requests() == []


def test_one_bad_team_refuses_the_whole_run_and_add_team_names_the_blocking_entry(seeded, aws_env, tmp_path):
    run, client = run_site(seeded, aws_env, tmp_path, team_change(1, ["storage", "mode"], "0777"))
    assert run.returncode == 2 and "team 'nlp': storage.mode" in run.stdout
    added, _client = run_site(seeded, aws_env, tmp_path, team_change(1, ["storage", "mode"], "0777"), "playbooks/add_team.yml", "-e", "team=vision")
    assert added.returncode == 2, added.stdout[-3000:]
    assert "Team 'vision' cannot be changed while the team file has problems: the entry of team nlp blocks it" in added.stdout
    assert client.requests() == []


def test_there_are_at_least_25_cases():
    assert len(CASES) >= 25


TEAMS_TEXT = (ROOT / "teams" / "teams.yml").read_text()
CLUSTER_TEXT = (ROOT / "group_vars" / "all" / "cluster.yml").read_text()


def line_of(text: str, line: str) -> int:
    """The 1-based number of the line ``line`` in ``text``."""
    return text.splitlines().index(line) + 1

YAML_CASES = [
    (
        "duplicate budget key",
        TEAMS_TEXT.replace("\n\n  - name: nlp", "\n    budget: {monthly_usd: 1}\n\n  - name: nlp", 1),
        CLUSTER_TEXT,
        "teams.yml:22:5: key 'budget' is given twice in one mapping (first at line 19)",
    ),
    ("duplicate cluster key", TEAMS_TEXT, CLUSTER_TEXT.replace("  node_recovery: automatic\n", "  node_recovery: automatic\n  node_recovery: none\n"),
     "cluster.yml:%d:3: key 'node_recovery' is given twice" % (line_of(CLUSTER_TEXT, "  node_recovery: automatic") + 1)),
    ("cluster syntax error", TEAMS_TEXT, CLUSTER_TEXT.replace("  name: ml-shared\n", "  name: ml-shared\n   eks: [\n"),
     "cluster.yml:%d:7: YAML syntax error: mapping values are not allowed" % (line_of(CLUSTER_TEXT, "  name: ml-shared") + 1)),
]


@pytest.mark.parametrize("label, teams, cluster, expected", YAML_CASES, ids=[case[0] for case in YAML_CASES])
def test_yaml_mistakes_name_the_file_line_and_column(label, teams, cluster, expected, seeded, aws_env, tmp_path):
    client, seed = seeded
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "teams.yml").write_text(teams)
    (tmp_path / "files" / "cluster.yml").write_text(cluster)
    seed_file = tmp_path / "seed.json"
    seed_file.write_text(json.dumps(seed))
    env = dict(aws_env, HYPERPOD_SANDBOX_SEED=str(seed_file), ANSIBLE_NOCOLOR="1")
    inventory = sandbox_inventory(tmp_path, tmp_path / "files" / "teams.yml")
    run = subprocess.run(
        [str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(inventory), "site.yml"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert run.returncode != 0, run.stdout[-3000:]
    assert expected in run.stdout + run.stderr, (run.stdout + run.stderr)[-3000:]
    assert client.requests() == []


def everything_missing(settings):
    settings["hyperpod_teams"][0]["members"].append({"name": "zed", "uid": 10099})
    settings["hyperpod_teams"][1]["identity_center_group"] = "TeamNobody"
    settings["hyperpod_cluster"]["eks_cluster_name"] = "no-such-eks"
    settings["hyperpod_data_bucket"] = "hyperpod-no-such-bucket"


def no_such_file_system(seed):
    seed["fsx_file_system_id"] = "fs-0123456789abcdef0"


def test_what_the_teams_need_is_read_for_all_teams_before_the_first_write(seeded, aws_env, tmp_path):
    run, client = run_site(seeded, aws_env, tmp_path, everything_missing, seed_change=no_such_file_system)
    assert run.returncode == 2, run.stdout[-3000:]
    for expected in (
        "'TeamNobody' (team nlp)",
        "team 'vision': members: no Identity Center user zed",
        "EKS cluster no-such-eks does not exist",
        "hyperpod_data_bucket: S3 bucket hyperpod-no-such-bucket does not exist",
        "hyperpod_account.fsx_file_system_id: FSx file system fs-0123456789abcdef0 does not exist",
    ):
        assert expected in run.stdout, (expected, run.stdout[-3000:])
    assert client.writes() == []


def made_by_hand(client, seed, vision=True, research=False, nlp=False):
    """Out of band, as someone with console access: an unmarked ``hyperpod-vision`` permission set (tagged by its maker),
    a ``hyperpod-research`` SageMaker domain marked for team nlp and an untagged ``hyperpod-nlp-monthly`` budget; the
    request log emptied. Their ids."""
    made = {}
    if vision:
        sso = client.boto3_client("sso-admin")
        made["vision"] = sso.create_permission_set(
            InstanceArn=seed["identity_center_instance_arn"], Name="hyperpod-vision", SessionDuration="PT1H",
            Tags=[{"Key": "owner", "Value": "platform-admins"}],
        )["PermissionSet"]["PermissionSetArn"]
    if research:
        sagemaker = client.boto3_client("sagemaker")
        made["research"] = sagemaker.create_domain(
            DomainName="hyperpod-research", AuthMode="IAM", DefaultUserSettings={"ExecutionRole": seed["cluster_execution_role_arn"]},
            Tags=[{"Key": "managed-by", "Value": "hyperpod.tenancy"}, {"Key": "team", "Value": "nlp"}],
        )["DomainArn"].rsplit("/", 1)[1]
    if nlp:
        client.boto3_client("budgets").create_budget(
            AccountId=seed["account_id"],
            Budget={"BudgetName": "hyperpod-nlp-monthly", "BudgetLimit": {"Amount": "100", "Unit": "USD"}, "TimeUnit": "MONTHLY", "BudgetType": "COST"},
        )
    client.clear_requests()
    return made


def marked(client, seed):
    """The teams whose S3 prefix has its ownership mark: a team's layers all start at once, so a team without one (and
    without objects under its prefix) had none of its layers run."""
    listed = client.boto3_client("s3").list_objects_v2(Bucket=seed["data_bucket"], Prefix="_hyperpod/owners/").get("Contents", [])
    return sorted(o["Key"].rsplit("/", 1)[1] for o in listed)


def refused_alone(run, text, teams):
    """``teams`` are each refused by their own team_resources, before any layer, and the run fails for them only."""
    assert run.returncode == 2, run.stdout[-3000:]
    for team in teams:
        assert f"team '{team}' is refused, nothing of it was changed: " in text, (team, text[-3000:])
    failed = sorted(set(re.findall(r"fatal: \[team_([a-z0-9_]+)\]", run.stdout)))
    assert failed == sorted(team.replace("-", "_") for team in teams), (failed, run.stdout[-3000:])


def test_every_teams_resource_that_is_not_theirs_is_listed_in_one_failure_and_adopt_takes_over_only_its_own(seeded, aws_env, tmp_path):
    """Threat model (issue 36, case 4): a resource that is not a team's to change stops that team only: each team is
    refused before its first write (the cluster is built), then, adopted, vision and nlp converge beside research."""
    client, seed = seeded
    made = made_by_hand(client, seed, research=True, nlp=True)
    run, client = run_site(seeded, aws_env, tmp_path, lambda settings: None)
    assert run.returncode == 2, run.stdout[-3000:]
    text = " ".join(run.stdout.split())
    for expected in (
        f"team 'vision': permission set hyperpod-vision ({made['vision']}) exists and was not made by hyperpod.tenancy for team vision "
        "(it lacks the tags managed-by=hyperpod.tenancy, team=vision; its tags: owner=platform-admins)",
        f"team 'research': SageMaker domain hyperpod-research ({made['research']}) belongs to team nlp (tag team=nlp), not to team research",
        f"team 'nlp': budget hyperpod-nlp-monthly (account {seed['account_id']}) exists and was not made by hyperpod.tenancy for team nlp "
        "(it lacks the tags managed-by=hyperpod.tenancy, team=nlp; its tags: no tags)",
    ):
        assert expected in text, (expected, text[-3000:])
    refused_alone(run, text, ["nlp", "research", "vision"])
    assert marked(client, seed) == []
    # vision's layers never ran: its permission set keeps its maker's tags.
    sso = client.boto3_client("sso-admin")
    tags = sso.list_tags_for_resource(InstanceArn=seed["identity_center_instance_arn"], ResourceArn=made["vision"])["Tags"]
    assert tags == [{"Key": "owner", "Value": "platform-admins"}]
    # vision adopts its permission set and nlp its budget: the run is still refused, for research's domain only, which no
    # adopt list takes over.
    def adopting(settings):
        settings["hyperpod_adopt"] = {"vision": ["permission_set"], "nlp": ["budget"]}

    client.clear_requests()
    (tmp_path / "adopting").mkdir()
    run, client = run_site(seeded, aws_env, tmp_path / "adopting", adopting)
    assert run.returncode == 2, run.stdout[-3000:]
    text = " ".join(run.stdout.split())
    assert "team 'research': SageMaker domain hyperpod-research" in text and "team 'vision'" not in text and "team 'nlp'" not in text, text[-3000:]
    refused_alone(run, text, ["research"])
    assert marked(client, seed) == ["nlp", "vision"]


TRUST_SAGEMAKER = {"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}, "Action": "sts:AssumeRole"}]}


def made_by_hand_too(client, seed):
    """Out of band: vision's Studio execution role untagged; nlp's Studio role (marked for nlp) with an EKS access entry
    marked for team research; objects under research's S3 prefix and no marker; the HyperPod cluster and, on it, an
    untagged compute quota of team research. The request log emptied. The role's ARN, the entry's principal, the quota id."""
    iam, eks, s3, sagemaker = (client.boto3_client(service) for service in ("iam", "eks", "s3", "sagemaker"))
    made = {}
    made["role"] = iam.create_role(
        RoleName="hyperpod-vision-studio-execution", AssumeRolePolicyDocument=json.dumps(TRUST_SAGEMAKER), Tags=[{"Key": "owner", "Value": "ml-platform"}],
    )["Role"]["Arn"]
    made["entry"] = iam.create_role(
        RoleName="hyperpod-nlp-studio-execution", AssumeRolePolicyDocument=json.dumps(TRUST_SAGEMAKER),
        Tags=[{"Key": "managed-by", "Value": "hyperpod.tenancy"}, {"Key": "team", "Value": "nlp"}],
    )["Role"]["Arn"]
    eks.create_access_entry(
        clusterName=GOOD["hyperpod_cluster"]["eks_cluster_name"], principalArn=made["entry"], tags={"managed-by": "hyperpod.tenancy", "team": "research"},
    )
    s3.put_object(Bucket=seed["data_bucket"], Key="research/results.csv", Body=b"a,b\n")
    cluster = sagemaker.create_cluster(
        ClusterName=GOOD["hyperpod_cluster"]["name"],
        Orchestrator={"Eks": {"ClusterArn": seed["eks_cluster_arn"]}},
        InstanceGroups=[{
            "InstanceGroupName": "p5-workers", "InstanceType": "ml.p5.48xlarge", "InstanceCount": 8, "ExecutionRole": seed["cluster_execution_role_arn"],
            "ThreadsPerCore": 1, "LifeCycleConfig": {"SourceS3Uri": "s3://%s/_hyperpod/lifecycle/" % seed["data_bucket"], "OnCreate": "on_create.sh"},
        }],
        VpcConfig={"SecurityGroupIds": seed["security_group_ids"], "Subnets": seed["subnet_ids"]},
    )["ClusterArn"]
    made["quota"] = sagemaker.create_compute_quota(
        Name="research-by-hand", ClusterArn=cluster,
        ComputeQuotaConfig={"ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Count": 1}]},
        ComputeQuotaTarget={"TeamName": "research", "FairShareWeight": 1},
    )["ComputeQuotaId"]
    client.clear_requests()
    return made


def test_every_teams_role_access_entry_s3_prefix_and_quota_not_theirs_is_refused_before_the_first_write_in_check_mode_too(seeded, aws_env, tmp_path):
    client, seed = seeded
    made = made_by_hand_too(client, seed)
    # --check tells the same: shared_info reads for real in check mode, and refuses each team before anything of it is (or
    # would be) written.
    run, client = run_site(seeded, aws_env, tmp_path, lambda settings: None, "site.yml", "--check")
    assert run.returncode == 2, run.stdout[-3000:]
    text = " ".join(run.stdout.split())
    eks_cluster = GOOD["hyperpod_cluster"]["eks_cluster_name"]
    for expected in (
        f"team 'vision': IAM role {made['role']} exists and was not made by hyperpod.tenancy for team vision "
        "(it lacks the tags managed-by=hyperpod.tenancy, team=vision; its tags: owner=ml-platform)",
        f"team 'nlp': access entry of {made['entry']} on cluster {eks_cluster} belongs to team research (tag team=research), not to team nlp",
        f"team 'research': S3 prefix s3://{seed['data_bucket']}/research/ holds objects but no ownership mark "
        f"s3://{seed['data_bucket']}/_hyperpod/owners/research made by hyperpod.tenancy for team research",
        f"team 'research': compute quota research-by-hand ({made['quota']}) exists and was not made by hyperpod.tenancy for team research",
    ):
        assert expected in text, (expected, text[-3000:])
    refused_alone(run, text, ["nlp", "research", "vision"])
    assert client.writes() == []
    # Each team adopts what it may: vision its role, research its prefix and its quota, nlp its access entry. The run is
    # still refused, for nlp's Studio access entry only, which is marked for research and which no adopt list takes over.
    def adopting(settings):
        settings["hyperpod_adopt"] = {"vision": ["execution_role"], "nlp": ["access_entry"], "research": ["s3_prefix", "quota"]}

    client.clear_requests()
    (tmp_path / "adopting").mkdir()
    run, client = run_site(seeded, aws_env, tmp_path / "adopting", adopting)
    assert run.returncode == 2, run.stdout[-3000:]
    text = " ".join(run.stdout.split())
    assert f"team 'nlp' is refused, nothing of it was changed: access entry of {made['entry']}" in text, text[-3000:]
    assert "team 'vision' is refused" not in text and "team 'research' is refused" not in text, text[-3000:]
    # vision and research ran their layers (research's quota may still fail on the hand-made cluster's capacity, read before
    # the run adds its g5 group): their prefixes are marked, nlp's is not.
    assert run.returncode == 2 and marked(client, seed) == ["research", "vision"]
