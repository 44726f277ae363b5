"""playbooks/verify_isolation.yml on the built sample teams: it passes, prints the matrix and writes the page;
a statement added by hand to one team's role, Pod Identity role or permission set role, on another team's resources or on one the
teams share, makes it (and the drift job) fail, naming it."""

from __future__ import annotations

import json

from ansible_collections.hyperpod.tenancy.plugins.module_utils import isolation

from tests.integration.playbook_runner import SAMPLE, assert_ok

TEAMS = [team["name"] for team in SAMPLE["hyperpod_teams"]]


def _task_result(result, name):
    for play in result.report.get("plays", []):
        for task in play["tasks"]:
            if task["task"]["name"] == name:
                return task["hosts"]["localhost"]
    raise AssertionError(f"no task {name!r}")


def _role(iam, pattern):
    return next(r for r in iam.list_roles()["Roles"] if r["RoleName"].startswith(pattern))


def test_verify_isolation_passes_on_the_sample_teams_and_fails_on_a_statement_added_by_hand(sample, tmp_path):
    assert_ok(sample.run("site.yml"), "site.yml")
    report = tmp_path / "isolation.html"
    sample.client.clear_requests()
    passed = sample.run("playbooks/verify_isolation.yml", "-e", f"hyperpod_isolation_report={report}")
    assert_ok(passed, "verify_isolation.yml")
    asked = _task_result(passed, "Ask IAM about every team principal on every team's resources")
    summary = asked["summary"]
    assert (summary["leaks"], summary["gaps"], summary["access_analyzer_findings"]) == (0, 0, 0)
    assert asked["access_analyzer"] == [] and summary["access_analyzer_checks"] > 0
    # The three principals of each team (permission set role, Studio execution role, Pod Identity role), and every
    # resource kind each team has in the sandbox, were crossed; each team's two roles are resources too.
    assert summary["principals"] == 3 * len(TEAMS)
    assert {line.split()[1] for line in asked["matrix"][1:]} == {"permission_set", "execution_role", "pod_identity"}
    kinds = {line.split()[3] for line in asked["matrix"][1:]}
    assert {"s3_objects", "s3_listing", "domain", "user_profile", "home_efs", "compute_quota", "budget", "access_entry", "permission_set", "role"} <= kinds
    assert summary["cross_team_cells"] > 0 and summary["cells"] > summary["cross_team_cells"] + summary["shared_cells"]
    # The resources the teams share, one of each (the sample has no Grafana or Prometheus workspace: observability is off).
    shared = {line.split()[3] for line in asked["matrix"][1:] if line.split()[2] == "(shared)"}
    observability = {"grafana_workspace", "amp_workspace", "amp_rule_groups_namespace", "amp_anomaly_detector"}
    assert shared == {kind for kind, *_rest in isolation.SHARED_KINDS} - observability
    # One of each shared kind (the cluster runs as the one execution role the seed made), but a group per team, and
    # objects and a listing per place of the data bucket no team owns: at least its root (its probe and the listing of its
    # keys' names), the platform's prefix and the lifecycle folder (its probe, on_create.sh and its listing).
    places = summary["shared_resources"] - (len(shared) - 3 + len(TEAMS))
    assert places >= 7 and summary["shared_cells"] > 0
    print(f"verify_isolation on the sample teams: {summary}")
    # Batched: fewer calls than one per principal and resource. Each principal's third team is the evaluator's,
    # which agreed with IAM on every cell both answered.
    assert 0 < summary["simulate_calls"] < summary["principals"] * summary["resources"]
    assert summary["local_cells"] > 0 and asked["evaluator_fallbacks"] == []
    printed = _task_result(passed, "Print the matrix")["msg"][-1]
    assert f"{summary['simulate_calls']} SimulatePrincipalPolicy calls" in printed
    assert "PASS: no team principal can reach" in report.read_text()
    assert [r["operation"] for r in sample.client.writes()] == []
    assert summary["remembered_principals"] == summary["remembered_checks"] == 0 and len(asked["witnessed"]) > summary["principals"]

    # The next run: the same policies and resources, so IAM and Access Analyzer are not asked again (the fact cache
    # holds their answers); the evaluator answers every cell again, as the first run's IAM did.
    sample.client.clear_requests()
    again = _task_result(sample.run("playbooks/verify_isolation.yml"), "Ask IAM about every team principal on every team's resources")
    assert (again["summary"]["simulate_calls"], again["summary"]["access_analyzer_checks"]) == (0, 0)
    assert again["summary"]["remembered_principals"] == summary["principals"] and again["summary"]["remembered_checks"] == summary["access_analyzer_checks"]
    assert again["matrix"] == asked["matrix"] and again["witnessed"] == asked["witnessed"]
    # The roles' policies in one GetAccountAuthorizationDetails, not read role by role.
    read = {r["operation"] for r in sample.client.requests() if r["service"] in ("iam", "accessanalyzer")}
    assert "GetAccountAuthorizationDetails" in read and not read & {"SimulatePrincipalPolicy", "CheckAccessNotGranted", "ListRolePolicies", "GetRolePolicy"}

    iam = sample.client.boto3_client("iam")
    bucket = SAMPLE["hyperpod_data_bucket"]
    widened = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObjectVersion", "Resource": f"arn:aws:s3:::{bucket}/*"}]}
    iam.put_role_policy(RoleName=_role(iam, "hyperpod-vision-studio-execution")["RoleName"], PolicyName="added-by-hand", PolicyDocument=json.dumps(widened))
    budget_writes = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "budgets:ModifyBudget", "Resource": "*"}]}
    iam.put_role_policy(RoleName=_role(iam, "AWSReservedSSO_hyperpod-nlp_")["RoleName"], PolicyName="added-by-hand", PolicyDocument=json.dumps(budget_writes))
    # The Pod Identity role: widened as a principal (the whole bucket), and reached as a resource (another team rewrites its trust).
    whole_bucket = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*"}]}
    iam.put_role_policy(RoleName="hyperpod-vision-pods", PolicyName="added-by-hand", PolicyDocument=json.dumps(whole_bucket))
    vision_pods = iam.get_role(RoleName="hyperpod-vision-pods")["Role"]["Arn"]
    trust_writes = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "iam:UpdateAssumeRolePolicy", "Resource": vision_pods}]}
    research = _role(iam, "AWSReservedSSO_hyperpod-research_")["RoleName"]
    iam.put_role_policy(RoleName=research, PolicyName="added-by-hand", PolicyDocument=json.dumps(trust_writes))
    # A shared resource: nlp's pods may rewrite the data bucket's policy and join any Identity Center group; and what was
    # outside the matrix until issue 37's red team found it: pass the role the cluster runs as, mount every team's Studio
    # home EFS, list the names of the bucket root's keys.
    cluster_role = iam.get_role(RoleName="HyperPodClusterExecution")["Role"]["Arn"]
    shared_writes = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": "s3:PutBucketPolicy", "Resource": f"arn:aws:s3:::{bucket}"},
            {"Effect": "Allow", "Action": "identitystore:CreateGroupMembership", "Resource": "*"},
            {"Effect": "Allow", "Action": "iam:PassRole", "Resource": cluster_role},
            {"Effect": "Allow", "Action": "elasticfilesystem:ClientMount", "Resource": "*"},
            {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{bucket}", "Condition": {"StringLike": {"s3:prefix": "R*"}}},
        ],
    }
    iam.put_role_policy(RoleName="hyperpod-nlp-pods", PolicyName="added-by-hand", PolicyDocument=json.dumps(shared_writes))

    # The three grants a one-sample proof passed at 95a77e0 (issue 37), by hand on nlp's Studio execution role: a narrower
    # pattern inside vision's prefix, a listing of a sub-prefix of vision's, and every SageMaker action under a condition
    # every real request meets (the requested Region).
    region = iam.meta.region_name
    nlp_studio = _role(iam, "hyperpod-nlp-studio-execution")["RoleName"]
    one_sample_missed = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/vision/datasets/*"},
            {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{bucket}", "Condition": {"StringLike": {"s3:prefix": "vision/ds/*"}}},
            {"Effect": "Allow", "Action": "sagemaker:*", "Resource": "*", "Condition": {"StringEquals": {"aws:RequestedRegion": region}}},
        ],
    }
    iam.put_role_policy(RoleName=nlp_studio, PolicyName="added-by-hand", PolicyDocument=json.dumps(one_sample_missed))

    failed = sample.run("playbooks/verify_isolation.yml", "-e", f"hyperpod_isolation_report={report}")
    assert failed.returncode == 2
    leaks = _task_result(failed, "Ask IAM about every team principal on every team's resources")["leaks"]
    # IAM is asked again about the six roles whose policies changed, and only them.
    changed = _task_result(failed, "Ask IAM about every team principal on every team's resources")["summary"]
    assert changed["remembered_principals"] == summary["principals"] - 6 and changed["simulate_calls"] > 0
    missed = [c for c in leaks if (c["team"], c["principal"]) == ("nlp", "execution_role")]
    assert {(c["owner"], c["resource_kind"], c["action"]) for c in missed if c["action"].startswith("s3:")} == {
        ("vision", "s3_objects", "s3:GetObject"),
        ("vision", "s3_listing", "s3:ListBucket"),
    }
    assert {(c["owner"], c["resource_kind"]) for c in missed if c["action"] == "sagemaker:DeleteApp"} == {(owner, "app") for owner in set(TEAMS) - {"nlp"}}
    assert {c["resource_kind"] for c in missed if c["owner"] == "(shared)"} == {"hyperpod_cluster", "cluster_scheduler_config"}
    assert {(c["team"], c["principal"], c["action"]) for c in leaks if c not in missed} == {
        ("vision", "execution_role", "s3:GetObjectVersion"),
        ("nlp", "permission_set", "budgets:ModifyBudget"),
        ("vision", "pod_identity", "s3:GetObject"),
        ("research", "permission_set", "iam:UpdateAssumeRolePolicy"),
        ("nlp", "pod_identity", "s3:PutBucketPolicy"),
        ("nlp", "pod_identity", "identitystore:CreateGroupMembership"),
        ("nlp", "pod_identity", "iam:PassRole"),
        ("nlp", "pod_identity", "elasticfilesystem:ClientMount"),
        ("nlp", "pod_identity", "s3:ListBucket"),
    }
    # Each of the other teams' home EFS (the domains' HomeEfsFileSystemId), not nlp's own; the role the cluster runs as.
    assert {(c["owner"], c["resource_kind"]) for c in leaks if c["team"] == "nlp" and c["principal"] == "pod_identity"} == {
        ("(shared)", "shared_bucket"),
        ("(shared)", "identity_store"),
        ("(shared)", "identity_center_group"),
        ("(shared)", "platform_role"),
        ("(shared)", "shared_listing"),
    } | {(team, "home_efs") for team in set(TEAMS) - {"nlp"}}
    assert {c["resource"] for c in leaks if c["resource_kind"] == "platform_role"} == {cluster_role}
    assert {c["resource"] for c in leaks if c["action"] == "iam:UpdateAssumeRolePolicy"} == {vision_pods}
    # IAM Access Analyzer finds the same widenings in the policies, on every kind whose isolation is in the Resource
    # element (not the Studio kinds and listings, isolated by a condition): each of its findings is a leak of the matrix.
    found = _task_result(failed, "Ask IAM about every team principal on every team's resources")["access_analyzer"]
    others = set(TEAMS) - {"vision"}
    analyzed = {(f["team"], f["principal"], f["policy"], f["owner"], f["resource_kind"]) for f in found}
    assert {(t, p, o, k) for t, p, unused_policy, o, k in analyzed} <= {(c["team"], c["principal"], c["owner"], c["resource_kind"]) for c in leaks}
    assert {policy for unused, unused_p, policy, unused_o, unused_k in analyzed} == {"added-by-hand"}
    # vision's objects asked as the set they are (arn:aws:s3:::<bucket>/vision/*): the narrower pattern is found.
    assert ("nlp", "execution_role", "added-by-hand", "vision", "s3_objects") in analyzed
    assert analyzed >= (
        {("vision", "execution_role", "added-by-hand", owner, "s3_objects") for owner in others}
        | {("vision", "pod_identity", "added-by-hand", owner, "s3_objects") for owner in others}
        | {("research", "permission_set", "added-by-hand", "vision", "role")}
        # Budgets (nlp's own too: the platform owns it) and the identity store, asked by ARN.
        | {("nlp", "permission_set", "added-by-hand", owner, "budget") for owner in TEAMS}
        | {("nlp", "pod_identity", "added-by-hand", "(shared)", "identity_store")}
        | {("nlp", "pod_identity", "added-by-hand", "(shared)", "platform_role")}
        | {("nlp", "pod_identity", "added-by-hand", owner, "home_efs") for owner in set(TEAMS) - {"nlp"}}
    )
    # The whole bucket: the other teams' objects and the objects no team owns (the platform's, the lifecycle scripts).
    assert {c["owner"] for c in leaks if c["team"] == "vision"} == set(TEAMS) - {"vision"} | {"(shared)"}
    assert {c["owner"] for c in leaks if c["principal"] == "pod_identity" and c["team"] == "vision"} == set(TEAMS) - {"vision"} | {"(shared)"}
    assert {c["resource_kind"] for c in leaks if c["team"] == "vision" and c["owner"] == "(shared)"} == {"shared_objects"}
    # The page leads with the verdict and each cross-team allow, before the matrix.
    page = report.read_text()
    assert page.index("FAIL: ") < page.index("nlp's Studio execution role") < page.index("<table id='matrix'>")
    message = "\n".join(_task_result(failed, "Fail on a cross-team allow or a denial of what a team needs")["msg"])
    assert "vision's execution_role" in message and "s3:GetObjectVersion" in message
    assert any("nlp's pod_identity" in line and "s3:PutBucketPolicy on the teams' shared shared_bucket" in line for line in message.splitlines())

    # Asked of IAM cell by cell, the same leaks, in more calls.
    every_cell = sample.run("playbooks/verify_isolation.yml", "-e", "hyperpod_isolation_simulation=every_cell")
    assert every_cell.returncode == 2
    asked_everything = _task_result(every_cell, "Ask IAM about every team principal on every team's resources")
    assert asked_everything["leaks"] == leaks and asked_everything["summary"]["local_cells"] == 0
    witnessed = _task_result(failed, "Ask IAM about every team principal on every team's resources")["summary"]
    assert asked_everything["summary"]["simulate_calls"] > witnessed["simulate_calls"] and witnessed["local_cells"] > 0

    # The hourly drift job reports it too.
    drift = sample.run("playbooks/drift.yml")
    assert drift.returncode == 2
    drift_message = _task_result(drift, "Fail on a cross-team allow or a denial of what a team needs, found by verify_isolation")["msg"]
    assert any("nlp's permission_set" in line and "budgets:ModifyBudget" in line for line in drift_message)
