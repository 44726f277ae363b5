"""verify_isolation's logic on the rendered policies: no cross-team allow, nothing a team needs denied,
and every widening of the rendered policies reported as a cross-team allow.

The matrix crosses each principal of each team (the permission set's role with ``render_team_policy``,
the Studio execution role with ``execution_role.inline_policies`` (its data and HyperPod-cluster policies) and the
Pod Identity role ``<prefix>-<team>-pods`` with ``execution_role.team_data_policy``) with each team's resources (S3 objects
and the listing of its prefix, domain, user profile, space, app, compute quota, budget, access entry, permission set,
execution role, Pod Identity role) and every action botocore's models list for that resource kind.
"""

from __future__ import annotations

import copy

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import execution_role, isolation, naming, team_namespace
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_policy import render_team_policy

from tests.unit.plugins.module_utils.sample_account import ACCOUNT, BUCKET, EKS_ARN, HYPERPOD_ARN, REGION, TEAMS

ACTIONS = isolation.actions_by_kind()


def _found(team: str) -> dict:
    index = TEAMS.index(team)
    return {
        "bucket": BUCKET,
        "domain_id": f"d-{index:012d}",
        "user_profiles": [f"{team}-alice"],
        "spaces": [f"{team}-space"],
        "apps": [(f"{team}-alice", "JupyterLab", "default")],
        "compute_quota_id": f"q{index:011d}",
        "budget_name": naming.budget_name(team),
        "access_entry_arn": f"arn:aws:eks:{REGION}:{ACCOUNT}:access-entry/ml-shared-eks/role/{ACCOUNT}/AWSReservedSSO_hyperpod-{team}_x/{index:08d}",
        "permission_set_arn": f"arn:aws:sso:::permissionSet/ssoins-0123456789abcdef/ps-{index:016d}",
        "roles": [
            f"arn:aws:iam::{ACCOUNT}:role/{naming.studio_execution_role_name(team)}",
            f"arn:aws:iam::{ACCOUNT}:role/{team_namespace.pod_role_name(team, naming.DEFAULT_PREFIX)}",
        ],
    }


def _rendered() -> dict:
    """principal id -> its policies, as the collection renders them."""
    policies = {}
    for team in TEAMS:
        policies[f"{team}/permission_set"] = {"identity": [("AwsSSOInlinePolicy", render_team_policy(team, ACCOUNT, REGION, BUCKET, HYPERPOD_ARN, EKS_ARN))]}
        role_policies = execution_role.inline_policies(team, BUCKET, HYPERPOD_ARN, EKS_ARN)
        assert sorted(role_policies) == [execution_role.CLUSTER_POLICY, execution_role.TEAM_DATA_POLICY]
        # team-data first: the widenings below edit it as the role's first policy.
        policies[f"{team}/execution_role"] = {"identity": [(name, role_policies[name]) for name, _key in execution_role.OWN_POLICIES]}
        # The namespace layer gives the pods role the same team data policy (team_namespace.ensure_pod_identity).
        policies[f"{team}/pod_identity"] = {"identity": [(execution_role.TEAM_DATA_POLICY, execution_role.team_data_policy(BUCKET, team))]}
    return policies


def _principals() -> list:
    found = []
    for team in TEAMS:
        found.append(
            {"id": f"{team}/permission_set", "team": team, "kind": "permission_set", "arn": f"arn:aws:iam::{ACCOUNT}:role/AWSReservedSSO_hyperpod-{team}_x"}
        )
        found.append({"id": f"{team}/execution_role", "team": team, "kind": "execution_role", "arn": _found(team)["roles"][0]})
        found.append({"id": f"{team}/pod_identity", "team": team, "kind": "pod_identity", "arn": _found(team)["roles"][1]})
    return found


def _resources() -> list:
    return [r for team in TEAMS for r in isolation.team_resources(team, ACCOUNT, REGION, _found(team))]


def _matrix(policies: dict) -> dict:
    return isolation.matrix(_principals(), _resources(), isolation.local_decider(policies, ACCOUNT), ACTIONS)


def test_the_rendered_policies_isolate_the_teams():
    result = _matrix(_rendered())
    assert result["leaks"] == []
    assert result["gaps"] == []
    # Every resource kind is probed, for every principal, with every action the models list.
    kinds = {c["resource_kind"] for c in result["cells"]}
    assert kinds == set(ACTIONS)
    expected = sum(len(ACTIONS[r["kind"]]) for p in _principals() for r in _resources() if r["team"] != p["team"])
    assert result["summary"]["cross_team_cells"] == expected


def test_the_page_names_the_leaks():
    policies = _rendered()
    policies["vision/permission_set"]["identity"].append(("oob", _statement("budgets:ModifyBudget", "*")))
    page = isolation.render_html(_matrix(policies))
    assert "class='leak'" in page and "budgets:ModifyBudget" in page


def _statement(action, resource, **extra) -> dict:
    return {"Version": "2012-10-17", "Statement": [dict({"Effect": "Allow", "Action": action, "Resource": resource}, **extra)]}


def _add(principal):
    def widen(policies, statement):
        policies[f"vision/{principal}"]["identity"].append(("widened", statement))

    return widen


def _edit(principal, change):
    def widen(policies, unused_statement):
        del unused_statement
        document = policies[f"vision/{principal}"]["identity"][0][1]
        change(document)

    return widen


def _drop_condition(sid):
    def change(document):
        next(s for s in document["Statement"] if s.get("Sid") == sid).pop("Condition")

    return change


def _set(sid, key, value):
    def change(document):
        next(s for s in document["Statement"] if s.get("Sid") == sid)[key] = value

    return change


def _listing_without_slash(document):
    statement = next(s for s in document["Statement"] if s.get("Sid") in ("TeamDataListing", "ListTeamPrefix"))
    statement["Condition"] = {"StringLike": {"s3:prefix": ["vis*"]}}


def _edit_cluster_policy(sid, action, resource):
    def widen(policies, unused_statement):
        del unused_statement
        document = dict(policies["vision/execution_role"]["identity"])[execution_role.CLUSTER_POLICY]
        statement = next(s for s in document["Statement"] if s["Sid"] == sid)
        statement["Action"], statement["Resource"] = action, resource

    return widen


SM = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}"
WIDENINGS = {
    # The 13 of issue 19 item 8 ...
    "PassRole on every team's execution role": (_add("permission_set"), _statement("iam:PassRole", f"arn:aws:iam::{ACCOUNT}:role/*")),
    "AssociateAccessPolicy on access entries": (_add("permission_set"), _statement("eks:AssociateAccessPolicy", "*")),
    "budget writes": (_add("permission_set"), _statement("budgets:ModifyBudget", f"arn:aws:budgets::{ACCOUNT}:budget/*")),
    "budget reads of every team": (_add("permission_set"), _statement("budgets:ViewBudget", "*")),
    "Identity Center writes": (_add("permission_set"), _statement("sso:PutInlinePolicyToPermissionSet", "*")),
    "Identity Center permission set attach": (_add("permission_set"), _statement("sso:Attach*", "arn:aws:sso:::permissionSet/*")),
    "quota updates": (_add("permission_set"), _statement("sagemaker:UpdateComputeQuota", f"{SM}:compute-quota/*")),
    "object versions of the whole bucket": (_add("permission_set"), _statement("s3:GetObjectVersion", f"arn:aws:s3:::{BUCKET}/*")),
    "version listing of the whole bucket": (_add("permission_set"), _statement("s3:ListBucketVersions", f"arn:aws:s3:::{BUCKET}")),
    "Studio statement without its tag condition": (_edit("permission_set", _drop_condition("TeamStudio")), None),
    "objects of the whole bucket": (_edit("permission_set", _set("TeamDataObjects", "Resource", f"arn:aws:s3:::{BUCKET}/*")), None),
    "listing without the prefix condition": (_edit("permission_set", _drop_condition("TeamDataListing")), None),
    "execution role on the whole bucket": (_edit("execution_role", _set("UseTeamObjects", "Resource", f"arn:aws:s3:::{BUCKET}/*")), None),
    # ... and more.
    "listing prefix without its slash": (_edit("permission_set", _listing_without_slash), None),
    "execution role listing without its slash": (_edit("execution_role", _listing_without_slash), None),
    "execution role listing without condition": (_edit("execution_role", _drop_condition("ListTeamPrefix")), None),
    "Studio condition made a wildcard": (_edit("permission_set", _set("TeamStudio", "Condition", {"StringLike": {"aws:ResourceTag/team": "*"}})), None),
    "Studio condition negated": (_edit("permission_set", _set("TeamStudio", "Condition", {"StringNotEquals": {"aws:ResourceTag/team": "nobody"}})), None),
    "Studio presigned URL on any profile": (_add("permission_set"), _statement("sagemaker:CreatePresignedDomainUrl", f"{SM}:user-profile/*")),
    "re-tagging another team's domain": (_add("permission_set"), _statement("sagemaker:AddTags", "*")),
    "domain updates": (_add("permission_set"), _statement("sagemaker:UpdateDomain", f"{SM}:domain/*")),
    "NotResource on the team's own prefix": (
        _add("permission_set"),
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "NotResource": f"arn:aws:s3:::{BUCKET}/vision/*"}]},
    ),
    "NotAction on everything but IAM": (
        _add("execution_role"),
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}]},
    ),
    "assuming another team's role": (_add("execution_role"), _statement("sts:AssumeRole", f"arn:aws:iam::{ACCOUNT}:role/*")),
    "role policy writes": (_add("execution_role"), _statement("iam:PutRolePolicy", "*")),
    "access entry deletion": (_add("permission_set"), _statement("eks:DeleteAccessEntry", f"arn:aws:eks:{REGION}:{ACCOUNT}:access-entry/*")),
    "quota deletion by wildcard action": (_add("permission_set"), _statement("sagemaker:*ComputeQuota", "*")),
    "space writes in every domain": (_add("permission_set"), _statement("sagemaker:*Space", f"{SM}:space/*")),
    "app deletion in every domain": (_add("permission_set"), _statement("sagemaker:DeleteApp", f"{SM}:app/*")),
    "object tagging across the bucket": (_add("execution_role"), _statement("s3:PutObjectTagging", f"arn:aws:s3:::{BUCKET}/*")),
    # The Pod Identity role as a principal: its S3 scope is the team prefix only ...
    "pods role on the whole bucket": (_edit("pod_identity", _set("UseTeamObjects", "Resource", f"arn:aws:s3:::{BUCKET}/*")), None),
    "pods role listing without condition": (_edit("pod_identity", _drop_condition("ListTeamPrefix")), None),
    "pods role reading object versions": (_add("pod_identity"), _statement("s3:GetObjectVersion", f"arn:aws:s3:::{BUCKET}/*")),
    # ... and as a resource: no other team may pass it, rewrite its trust or attach to it.
    "PassRole on every team's pods role": (_add("permission_set"), _statement("iam:PassRole", f"arn:aws:iam::{ACCOUNT}:role/hyperpod-*-pods")),
    "trust rewrites of the pods roles": (_add("execution_role"), _statement("iam:UpdateAssumeRolePolicy", f"arn:aws:iam::{ACCOUNT}:role/*-pods")),
    "policy attachment to the pods roles": (_add("pod_identity"), _statement("iam:AttachRolePolicy", f"arn:aws:iam::{ACCOUNT}:role/hyperpod-*-pods")),
    "execution role's cluster statement on every EKS action and resource": (_edit_cluster_policy("UseEksCluster", "eks:*", "*"), None),
}


@pytest.mark.parametrize(
    "name, principal, owner_role",
    [
        ("PassRole on every team's pods role", "permission_set", "hyperpod-nlp-pods"),
        ("trust rewrites of the pods roles", "execution_role", "hyperpod-nlp-pods"),
        ("policy attachment to the pods roles", "pod_identity", "hyperpod-nlp-pods"),
    ],
)
def test_another_teams_pods_role_is_a_resource_of_the_matrix(name, principal, owner_role):
    widen, statement = WIDENINGS[name]
    policies = copy.deepcopy(_rendered())
    widen(policies, statement)
    leaks = _matrix(policies)["leaks"]
    assert any(c["principal"] == principal and c["resource"].endswith(":role/" + owner_role) for c in leaks), leaks


@pytest.mark.parametrize("name", sorted(WIDENINGS))
def test_every_widening_is_reported_as_a_cross_team_allow(name):
    widen, statement = WIDENINGS[name]
    policies = copy.deepcopy(_rendered())
    widen(policies, statement)
    leaks = _matrix(policies)["leaks"]
    assert leaks, f"widening {name!r} went unnoticed"
    assert {c["team"] for c in leaks} == {"vision"}
    assert all(c["owner"] != "vision" for c in leaks)
