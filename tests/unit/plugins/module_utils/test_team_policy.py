"""The team policy keeps each team to its own resources: hand-picked probes, and parliament's lint.

The full matrix (every action botocore's models list for each resource kind) and the widenings it must
catch are in test_isolation_matrix.py.
"""

from __future__ import annotations

import hashlib
import itertools
import json

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import iam_evaluation
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_policy import render_team_policy
from parliament import analyze_policy_string, enhance_finding

from tests.unit.plugins.module_utils import sample_account
from tests.unit.plugins.module_utils.sample_account import ACCOUNT, BUCKET, EKS_ARN, HYPERPOD_ARN, REGION, TEAMS

SEVERITY = {"INFO": 0, "LOW": 1, "MEDIUM": 2, "HIGH": 3, "CRITICAL": 4}


# --- the evaluator: the collection's own (plugins/module_utils/iam_evaluation.py, tested in test_iam_evaluation.py)


def evaluate(policy: dict, action: str, resource: str, context: dict | None = None) -> str:
    """ "Allow", "Deny" (an explicit deny) or "ImplicitDeny", for a role holding ``policy`` alone."""
    principal = iam_evaluation.Principal(ACCOUNT, [("team", policy)], role_arn=f"arn:aws:iam::{ACCOUNT}:role/team")
    decision = iam_evaluation.evaluate(principal, action, resource, context)["EvalDecision"]
    return {iam_evaluation.ALLOWED: "Allow", iam_evaluation.EXPLICIT_DENY: "Deny"}.get(decision, "ImplicitDeny")


# --- the matrix --------------------------------------------------------------------------------


def _policy(team: str) -> dict:
    return render_team_policy(team, ACCOUNT, REGION, BUCKET, HYPERPOD_ARN, EKS_ARN)


def _domain_id(team: str) -> str:
    # SageMaker domain ids are random; nothing in them says which team owns the domain.
    return "d-" + hashlib.sha256(team.encode()).hexdigest()[:12]


def _team_requests(team: str) -> list[tuple[str, str, dict]]:
    """(action, resource ARN, context) a member needs on ``team``'s resources."""
    sm = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}"
    domain = _domain_id(team)
    tag = {"aws:ResourceTag/team": team}
    return [
        ("sagemaker:DescribeDomain", f"{sm}:domain/{domain}", tag),
        ("sagemaker:DescribeUserProfile", f"{sm}:user-profile/{domain}/alice", tag),
        ("sagemaker:CreatePresignedDomainUrl", f"{sm}:user-profile/{domain}/alice", tag),
        ("sagemaker:DescribeSpace", f"{sm}:space/{domain}/alice-space", tag),
        ("sagemaker:UpdateSpace", f"{sm}:space/{domain}/alice-space", tag),
        ("sagemaker:DescribeApp", f"{sm}:app/{domain}/alice/JupyterLab/default", tag),
        ("sagemaker:DeleteApp", f"{sm}:app/{domain}/alice/JupyterLab/default", tag),
        ("s3:GetObject", f"arn:aws:s3:::{BUCKET}/{team}/datasets/train.parquet", {}),
        ("s3:PutObject", f"arn:aws:s3:::{BUCKET}/{team}/checkpoints/step-100.pt", {}),
        ("s3:DeleteObject", f"arn:aws:s3:::{BUCKET}/{team}/tmp/x", {}),
        ("s3:ListBucket", f"arn:aws:s3:::{BUCKET}", {"s3:prefix": f"{team}/"}),
        ("s3:ListBucket", f"arn:aws:s3:::{BUCKET}", {"s3:prefix": f"{team}/checkpoints/"}),
    ]


@pytest.mark.parametrize("team", TEAMS)
def test_a_team_reaches_its_own_resources(team):
    policy = _policy(team)
    denied = [(a, r) for a, r, c in _team_requests(team) if evaluate(policy, a, r, c) != "Allow"]
    assert denied == []


@pytest.mark.parametrize("team, other", list(itertools.permutations(TEAMS, 2)))
def test_a_team_reaches_nothing_of_another_team(team, other):
    policy = _policy(team)
    allowed = [(a, r, c) for a, r, c in _team_requests(other) if evaluate(policy, a, r, c) == "Allow"]
    assert allowed == [], f"{team}'s policy allows on {other}'s resources"


@pytest.mark.parametrize("team", TEAMS)
def test_a_team_cannot_widen_its_reach(team):
    policy = _policy(team)
    sm = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}"
    other_domain = _domain_id(team + "-other")
    attempts = [
        # listing the whole bucket, or a prefix that only starts like the team's
        ("s3:ListBucket", f"arn:aws:s3:::{BUCKET}", {}),
        ("s3:ListBucket", f"arn:aws:s3:::{BUCKET}", {"s3:prefix": ""}),
        ("s3:ListBucket", f"arn:aws:s3:::{BUCKET}", {"s3:prefix": team}),
        ("s3:ListBucket", f"arn:aws:s3:::{BUCKET}", {"s3:prefix": f"{team}-archive/"}),
        ("s3:GetObject", f"arn:aws:s3:::{BUCKET}/{team}-archive/x", {}),
        ("s3:GetObject", f"arn:aws:s3:::{BUCKET}/lifecycle/on_create.sh", {}),
        ("s3:GetObject", f"arn:aws:s3:::other-bucket/{team}/x", {}),
        ("s3:PutBucketPolicy", f"arn:aws:s3:::{BUCKET}", {}),
        # an untagged domain, or creating in another domain with a request tag of one's own
        ("sagemaker:DescribeDomain", f"{sm}:domain/{other_domain}", {}),
        ("sagemaker:CreateApp", f"{sm}:app/{other_domain}/alice/JupyterLab/default", {"aws:RequestTag/team": team}),
        ("sagemaker:CreateSpace", f"{sm}:space/{other_domain}/s", {"aws:RequestTag/team": team}),
        ("sagemaker:AddTags", f"{sm}:domain/{other_domain}", {"aws:RequestTag/team": team}),
        ("sagemaker:DeleteDomain", f"{sm}:domain/{_domain_id(team)}", {"aws:ResourceTag/team": team}),
        ("sagemaker:CreateUserProfile", f"{sm}:user-profile/{_domain_id(team)}/mallory", {"aws:ResourceTag/team": team}),
        # the shared clusters: read only
        ("sagemaker:UpdateCluster", HYPERPOD_ARN, {}),
        ("sagemaker:DeleteCluster", HYPERPOD_ARN, {}),
        ("sagemaker:DescribeCluster", f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:cluster/another", {}),
        ("eks:DescribeCluster", f"arn:aws:eks:{REGION}:{ACCOUNT}:cluster/another", {}),
        ("eks:CreateAccessEntry", EKS_ARN, {}),
        ("eks:AssociateAccessPolicy", EKS_ARN, {}),
        ("eks:CreatePodIdentityAssociation", EKS_ARN, {}),
        ("sagemaker:UpdateClusterSchedulerConfig", f"{sm}:cluster-scheduler-config/abcdef123456", {}),
        ("sagemaker:CreateComputeQuota", HYPERPOD_ARN, {}),
        ("sagemaker:CreateComputeQuota", f"{sm}:compute-quota/abcdef123456", {"aws:RequestTag/team": team}),
        # the shared bucket itself, the file system, the Grafana workspace
        ("s3:PutBucketAcl", f"arn:aws:s3:::{BUCKET}", {}),
        ("s3:DeleteBucket", f"arn:aws:s3:::{BUCKET}", {}),
        ("fsx:CreateDataRepositoryTask", f"arn:aws:fsx:{REGION}:{ACCOUNT}:file-system/{sample_account.FSX_ID}", {}),
        ("grafana:UpdatePermissions", f"arn:aws:grafana:{REGION}:{ACCOUNT}:/workspaces/{sample_account.GRAFANA_ID}", {}),
        # Identity Center: a permission set of one's own, another team's group
        ("sso:CreatePermissionSet", sample_account.INSTANCE_ARN, {}),
        ("identitystore:CreateGroupMembership", f"arn:aws:identitystore::{ACCOUNT}:identitystore/{sample_account.IDENTITY_STORE_ID}", {}),
        ("identitystore:CreateGroupMembership", "arn:aws:identitystore:::group/9067d4d8-1081-7012-49a3-2ef1f1d8a6c2", {}),
        # identity
        ("iam:PassRole", f"arn:aws:iam::{ACCOUNT}:role/HyperPodClusterExecution", {}),
        ("sts:AssumeRole", f"arn:aws:iam::{ACCOUNT}:role/anything", {}),
    ]
    allowed = [(a, r, c) for a, r, c in attempts if evaluate(policy, a, r, c) == "Allow"]
    assert allowed == []


@pytest.mark.parametrize("team", TEAMS)
def test_every_team_reads_the_shared_clusters(team):
    policy = _policy(team)
    assert evaluate(policy, "eks:DescribeCluster", EKS_ARN) == "Allow"
    assert evaluate(policy, "sagemaker:DescribeCluster", HYPERPOD_ARN) == "Allow"
    assert evaluate(policy, "sagemaker:ListClusterNodes", HYPERPOD_ARN) == "Allow"


@pytest.mark.parametrize("team", TEAMS)
def test_the_policy_names_no_other_team(team):
    text = json.dumps(_policy(team))
    for other in TEAMS:
        if other != team and not team.startswith(other):
            assert f'"{other}"' not in text and f"/{other}/" not in text


def test_tag_key_follows_the_collection_setting():
    policy = render_team_policy("vision", ACCOUNT, REGION, BUCKET, HYPERPOD_ARN, EKS_ARN, tag_keys={"team": "ml-team"})
    domain = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:domain/d-abc"
    assert evaluate(policy, "sagemaker:DescribeDomain", domain, {"aws:ResourceTag/ml-team": "vision"}) == "Allow"
    assert evaluate(policy, "sagemaker:DescribeDomain", domain, {"aws:ResourceTag/team": "vision"}) == "ImplicitDeny"


def test_a_bad_team_name_is_refused():
    with pytest.raises(ValueError):
        render_team_policy("Vision/../nlp", ACCOUNT, REGION, BUCKET, HYPERPOD_ARN, EKS_ARN)


# --- parliament -----------------------------------------------------------------------------------


def _findings(policy: dict) -> list:
    return [enhance_finding(f) for f in analyze_policy_string(json.dumps(policy)).findings]


@pytest.mark.parametrize("team", TEAMS)
def test_parliament_finds_nothing_above_low(team):
    findings = _findings(_policy(team))
    serious = [(f.issue, f.severity, f.location) for f in findings if SEVERITY.get(f.severity, 4) > SEVERITY["LOW"]]
    assert serious == []
    # Stricter than the bar: an unknown action or a needless Resource "*" is LOW, but a typo all the same.
    assert not [f.issue for f in findings if f.issue in ("UNKNOWN_ACTION", "UNKNOWN_PREFIX", "RESOURCE_STAR", "UNKNOWN_CONDITION_FOR_ACTION")]


def test_parliament_does_flag_a_broken_policy():
    broken = _policy("vision")
    broken["Statement"][-1]["Condition"] = {"StringLike": {"s3:prefx": ["vision/"]}}
    broken["Statement"].append({"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"})
    issues = {f.issue for f in _findings(broken)}
    assert {"UNKNOWN_CONDITION_FOR_ACTION", "RESOURCE_STAR"} <= issues
