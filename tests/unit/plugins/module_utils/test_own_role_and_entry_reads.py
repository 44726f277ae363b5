"""The permission set's reads for the HyperPod CLI (OwnAccessEntryRead, OwnRoleRead; issue 40, threat model m22), as a red
team attacked them: widenings of the two statements, and whether verify_isolation's matrix and Access Analyzer batches
report them; the patterns against team names that are prefixes of others and platform permission sets named after a team.

Tests marked ``xfail(strict=True)`` are holes still open: each asserts what a sound proof should report."""

from __future__ import annotations

import copy
import json

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import isolation, team_policy

from tests.unit.plugins.module_utils.sample_account import ACCOUNT, REGION, TEAMS
from tests.unit.plugins.module_utils.test_isolation_matrix import (
    ACTIONS,
    SHARED,
    _found,
    _principals,
    _rendered,
    _resources,
    _statement,
)

CLUSTER = "ml-shared-eks"
ENTRY = f"arn:aws:eks:{REGION}:{ACCOUNT}:access-entry/{CLUSTER}/"
SSO = f"arn:aws:iam::{ACCOUNT}:role/aws-reserved/sso.amazonaws.com/"


def _widened(*statements):
    policies = copy.deepcopy(_rendered())
    for statement in statements:
        policies["vision/permission_set"]["identity"].append(("widened", _statement(*statement)))
    return policies


def _leaks(policies, principals=None, resources=None):
    found = isolation.matrix(principals or _principals(), resources or _resources(), isolation.local_decider(policies, ACCOUNT), ACTIONS)
    return {(c["team"], c["owner"], c["resource_kind"], c["action"]) for c in found["leaks"]}


# --- widenings the proof catches (held) ---------------------------------------------------------------------------------

HELD = {
    "GetRole on every Identity Center role": ("iam:GetRole", SSO + "*"),
    "GetRole on every role named like a permission set role, any path": ("iam:GetRole", f"arn:aws:iam::{ACCOUNT}:role/*AWSReservedSSO_*"),
    "iam:* on the own permission set role": ("iam:*", team_policy.own_role_arns("vision", ACCOUNT)),
    "iam:Get* on the own permission set role": ("iam:Get*", team_policy.own_role_arns("vision", ACCOUNT)),
    "PassRole of the own permission set role": ("iam:PassRole", team_policy.own_role_arns("vision", ACCOUNT)),
    "eks:* on the own access entry": ("eks:*", team_policy.own_access_entry_arn("vision", ACCOUNT, f"arn:aws:eks:{REGION}:{ACCOUNT}:cluster/{CLUSTER}")),
    "ListAssociatedAccessPolicies of the own entry": (
        "eks:ListAssociatedAccessPolicies",
        team_policy.own_access_entry_arn("vision", ACCOUNT, f"arn:aws:eks:{REGION}:{ACCOUNT}:cluster/{CLUSTER}"),
    ),
    "DescribeAccessEntry of any role's entry": ("eks:DescribeAccessEntry", ENTRY + f"role/{ACCOUNT}/*"),
    "DescribeAccessEntry with the prefix cut short": ("eks:DescribeAccessEntry", ENTRY + f"role/{ACCOUNT}/AWSReservedSSO_hyperpod-vis*"),
}


@pytest.mark.parametrize("name", sorted(HELD))
def test_a_widening_of_the_new_statements_is_reported(name):
    assert _leaks(_widened(HELD[name])), name


def test_the_new_patterns_match_no_other_team_whatever_its_name():
    """Team names that are prefixes of others (vis, vision, vision-x): the pattern's "_" after the team name ends it (a DNS
    label holds none), for every prefix of the platform's that itself holds no "_"; a role or entry under a path or in
    another cluster, account or Region is none of the team's."""
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import iam_evaluation

    teams = sorted(set(TEAMS) | {"vision-x", "v", "vision2", "x-vision"})
    for prefix in ("hyperpod", "hp", "ml-platform"):
        eks_arn = f"arn:aws:eks:{REGION}:{ACCOUNT}:cluster/{CLUSTER}"
        for team in teams:
            entry = team_policy.own_access_entry_arn(team, ACCOUNT, eks_arn, prefix)
            roles = team_policy.own_role_arns(team, ACCOUNT, prefix)
            for other in teams:
                name = f"AWSReservedSSO_{prefix}-{other}_0123456789abcdef"
                mine = team == other
                assert iam_evaluation.arn_matches(entry, f"{ENTRY}role/{ACCOUNT}/{name}/1a2b") == mine
                assert any(iam_evaluation.arn_matches(r, SSO + name) for r in roles) == mine
                assert any(iam_evaluation.arn_matches(r, SSO + "eu-west-1/" + name) for r in roles) == mine
                # Elsewhere: none.
                assert not iam_evaluation.arn_matches(entry, f"{ENTRY}user/{ACCOUNT}/{name}/1a2b")
                assert not iam_evaluation.arn_matches(entry, f"arn:aws:eks:{REGION}:{ACCOUNT}:access-entry/other/role/{ACCOUNT}/{name}/1a2b")
                assert not iam_evaluation.arn_matches(entry, f"arn:aws:eks:eu-west-1:{ACCOUNT}:access-entry/{CLUSTER}/role/{ACCOUNT}/{name}/1a2b")
                assert not iam_evaluation.arn_matches(entry, f"{ENTRY}role/210987654321/{name}/1a2b")
                assert not any(iam_evaluation.arn_matches(r, f"arn:aws:iam::{ACCOUNT}:role/{name}") for r in roles)
                assert not any(iam_evaluation.arn_matches(r, f"arn:aws:iam::{ACCOUNT}:role/teams/{name}") for r in roles)
    # A permission set the platform names "<prefix>-<team>_<anything>" (names allow "_"): the suffix's length keeps its
    # role and entry out (the red team found them reached while the pattern ended with "*").
    own = team_policy.own_role_arns("vision", ACCOUNT)
    for name in ("AWSReservedSSO_hyperpod-vision_Admins_0123456789abcdef", "AWSReservedSSO_hyperpod-vision_A_0123456789abcdef"):
        assert not any(iam_evaluation.arn_matches(r, SSO + name) for r in own)
        entry = team_policy.own_access_entry_arn("vision", ACCOUNT, f"arn:aws:eks:{REGION}:{ACCOUNT}:cluster/{CLUSTER}")
        assert not iam_evaluation.arn_matches(entry, f"{ENTRY}role/{ACCOUNT}/{name}/1a2b")


# --- what the analyzer batches ask --------------------------------------------------------------------------------------


class _Recorder:
    def __init__(self):
        self.asked = []

    def check_access_not_granted(self, policyDocument, access, policyType):  # noqa: N803
        self.asked.append((json.loads(policyDocument).get("Statement", [{}])[0].get("Sid"), tuple(access[0]["actions"]), tuple(access[0]["resources"])))
        return {"result": "PASS"}


def test_the_analyzer_asks_the_own_platform_owned_resources_all_but_the_needed_reads():
    """analyzed_sets: vision's permission set role is asked every action on every other team's role and entry, and on its
    own all but the two reads; its execution role (which needs neither) is asked all of them on vision's own too."""
    documents = {pid: spec["identity"] for pid, spec in _rendered().items()}

    def asked_of(principal_id):
        recorder = _Recorder()
        [principal] = [p for p in _principals() if p["id"] == principal_id]
        isolation.access_not_granted(recorder, documents, [principal], _resources(), ACTIONS)
        asked = {}
        for _sid, actions, resources in recorder.asked:
            for arn in resources:
                asked.setdefault(arn, set()).update(actions)
        return asked

    own, nlp = _found("vision"), _found("nlp")
    member = asked_of("vision/permission_set")
    assert member[own["sso_role"]] == set(ACTIONS["sso_role"]) - {"iam:GetRole"}
    assert member[own["access_entry_arn"]] == set(ACTIONS["access_entry"]) - {"eks:DescribeAccessEntry"}
    assert member[nlp["sso_role"]] == set(ACTIONS["sso_role"]) and member[nlp["access_entry_arn"]] == set(ACTIONS["access_entry"])
    studio = asked_of("vision/execution_role")
    assert studio[own["sso_role"]] == set(ACTIONS["sso_role"]) and studio[own["access_entry_arn"]] == set(ACTIONS["access_entry"])
    # ... where "every action" on an entry is what botocore lists with principalArn and its tagging (the ownership marks).
    assert {"eks:TagResource", "eks:UntagResource", "eks:ListTagsForResource"} <= member[own["access_entry_arn"]]


# --- found by the red team ---------------------------------------------------------------------------------------------------------------

OWN_ENTRY = team_policy.own_access_entry_arn("vision", ACCOUNT, f"arn:aws:eks:{REGION}:{ACCOUNT}:cluster/{CLUSTER}")


@pytest.mark.parametrize(
    "statement",
    [
        ("eks:UntagResource", OWN_ENTRY),
        ("eks:TagResource", OWN_ENTRY),
        ("eks:UntagResource", ENTRY + "*"),
        ("eks:TagResource", f"arn:aws:eks:*:{ACCOUNT}:access-entry/*"),
    ],
    ids=["untag own entry", "tag own entry", "untag every entry of the cluster", "tag every entry"],
)
def test_tagging_an_access_entry_is_reported(statement):
    """Untagging an access entry strips the collection's ownership marks (access_entry.owner_problem): the next run refuses
    that team (m4's freeze, for the entry). Another team's: that team's automation frozen by this team's member."""
    assert _leaks(_widened(statement))


NODE_ROLE_ENTRY = ENTRY + f"role/{ACCOUNT}/HyperPodClusterExecution/*"


@pytest.mark.parametrize("action", ["eks:DeleteAccessEntry", "eks:DisassociateAccessPolicy", "eks:UpdateAccessEntry"])
def test_changing_the_platforms_access_entries_is_reported(action):
    """Deleting the node role's (or the automation's) entry stops every team's work; the eks_cluster shared resource asks
    these actions on the cluster's ARN, which EKS does not authorize them on (resource type access-entry)."""
    assert _leaks(_widened((action, NODE_ROLE_ENTRY)))


@pytest.mark.parametrize(
    "statement",
    [("iam:GetRole", SSO + "*"), ("eks:DescribeAccessEntry", ENTRY + "*")],
    ids=["every Identity Center role", "every access entry"],
)
def test_with_a_single_team_reading_the_platforms_is_reported(statement):
    principals = [p for p in _principals() if p["team"] == "vision"]
    owned = isolation.team_resources("vision", ACCOUNT, REGION, _found("vision"))
    shared = isolation.shared_resources(dict(SHARED, teams=["vision"], group_ids=SHARED["group_ids"][:1]), ACCOUNT, REGION)
    assert _leaks(_widened(statement), principals, owned + shared)


def test_if_eks_put_the_roles_path_in_the_entry_arn_verify_isolation_would_report_the_gap():
    """The assumption that IamIdentityName is the role's name without its path is checked on every live run: an entry
    ARN with the path in it is not matched by OwnAccessEntryRead, and the matrix reports the needed read denied."""
    resources = []
    for team in TEAMS:
        found = _found(team)
        found["access_entry_arn"] = found["access_entry_arn"].replace(f"role/{ACCOUNT}/", f"role/{ACCOUNT}/aws-reserved/sso.amazonaws.com/")
        resources += isolation.team_resources(team, ACCOUNT, REGION, found)
    resources += isolation.shared_resources(SHARED, ACCOUNT, REGION)
    result = isolation.matrix(_principals(), resources, isolation.local_decider(_rendered(), ACCOUNT), ACTIONS)
    assert {(c["team"], c["resource_kind"], c["action"]) for c in result["gaps"]} == {(t, "access_entry", "eks:DescribeAccessEntry") for t in TEAMS}


def test_the_platforms_entries_and_roles_are_the_teams_but_their_own():
    """The platform's entries and Identity Center roles are sets less every present team's own (decided by the matrix):
    the automation's and the node role's entries are in, the teams' are out; Access Analyzer, which cannot be told the
    exclusion, is asked their samples every action, and the samples are no team's."""
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import iam_evaluation, iam_sets

    shared = {r["kind"]: r for r in isolation.shared_resources(SHARED, ACCOUNT, REGION)}
    entries, roles = shared["platform_access_entry"], shared["platform_sso_role"]
    admins = ENTRY + f"role/{ACCOUNT}/AWSReservedSSO_hyperpod-vision_Admins_0123456789abcdef/*"
    for pattern in (NODE_ROLE_ENTRY, ENTRY + f"role/{ACCOUNT}/hyperpod-automation/*", admins):
        assert iam_sets._reaches(pattern, iam_sets.RequestSet(entries["requests"]["arns"], entries["requests"]["exclude"]))
    for team in TEAMS:
        assert not iam_sets._reaches(_found(team)["access_entry_arn"], iam_sets.RequestSet(entries["requests"]["arns"], entries["requests"]["exclude"]))
        assert not iam_sets._reaches(_found(team)["sso_role"], iam_sets.RequestSet(roles["requests"]["arns"], roles["requests"]["exclude"]))
        assert not iam_evaluation.arn_matches(team_policy.own_access_entry_arn(team, ACCOUNT, SHARED["eks_cluster_arn"]), entries["arn"])
        assert not any(iam_evaluation.arn_matches(r, roles["arn"]) for r in team_policy.own_role_arns(team, ACCOUNT))
    recorder = _Recorder()
    [principal] = [p for p in _principals() if p["id"] == "vision/permission_set"]
    isolation.access_not_granted(recorder, {principal["id"]: _rendered()[principal["id"]]["identity"]}, [principal], list(shared.values()), ACTIONS)
    asked = {}
    for _sid, actions, resources in recorder.asked:
        for arn in resources:
            asked.setdefault(arn, set()).update(actions)
    assert asked[entries["arn"]] == set(ACTIONS["platform_access_entry"]) == set(ACTIONS["access_entry"])
    assert asked[roles["arn"]] == set(ACTIONS["platform_sso_role"]) == set(ACTIONS["sso_role"])
