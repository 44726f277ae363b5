"""Every team-file rule, each with a file that breaks it and the same file without the break."""

from __future__ import annotations

import copy

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_model import check_team_file

CLUSTER = {
    "name": "ml-shared",
    "instance_groups": [
        {"name": "p5", "instance_type": "ml.p5.48xlarge", "count": 8},
        {"name": "g5", "instance_type": "ml.g5.12xlarge", "count": 6},
    ],
    "scheduler": {"priority_classes": [{"name": "training", "weight": 50}]},
}
TEAMS = [
    {
        "name": "vision",
        "identity_center_group": "TeamVision",
        "members": ["alice", {"name": "bob", "uid": 10002}],
        "quota": {"resources": [{"instance_type": "ml.p5.48xlarge", "count": 4}], "borrow_limit": 50, "fair_share_weight": 40},
        "budget": {"monthly_usd": 1000, "notify": ["finops@example.com"]},
    },
    {"name": "nlp", "identity_center_group": "TeamNLP", "quota": {"resources": [{"instance_type": "ml.p5.48xlarge", "count": 4}]}},
]


def problems_of(teams=None, cluster=None, prefix="hyperpod"):
    return check_team_file(TEAMS if teams is None else teams, CLUSTER if cluster is None else cluster, prefix)[0]


def test_sample_file_is_valid_and_normalized():
    problems, teams, capacity = check_team_file(TEAMS, CLUSTER)
    assert problems == []
    assert capacity == {"ml.p5.48xlarge": 8, "ml.g5.12xlarge": 6}
    vision = teams[0]
    assert vision["state"] == "present"
    assert vision["members"] == [{"name": "alice", "uid": None}, {"name": "bob", "uid": 10002}]
    assert vision["quota"]["sharing"] == "lend_and_borrow"
    assert vision["quota"]["preempt"] == "lower_priority"
    assert vision["access"] == {"policies": ["training", "inference"], "cluster_read": True}
    assert vision["storage"]["on_remove"] == "keep"
    assert vision["budget"]["thresholds"] == [80, 100]
    assert teams[1]["budget"] is None


def with_change(path, value, team=0):
    teams = copy.deepcopy(TEAMS)
    target = teams[team]
    *parents, last = path
    for key in parents:
        target = target[key]
    target[last] = value
    return teams


def without_key(key, team=0):
    teams = copy.deepcopy(TEAMS)
    del teams[team][key]
    return teams


BROKEN_FILES = [
    ("name with capitals", with_change(["name"], "Vision"), "team 'Vision': name: must be lower-case"),
    ("name ending in hyphen", with_change(["name"], "vision-"), "team 'vision-': name:"),
    ("name too long for the permission set", with_change(["name"], "a-rather-long-team-name-x"), "permission set name"),
    ("missing name", without_key("name"), "team #1: name: is required"),
    ("missing group", without_key("identity_center_group"), "team 'vision': identity_center_group: is required"),
    ("duplicate team", with_change(["name"], "nlp"), "team 'nlp': name: is used by team #1 and team #2"),
    ("shared group", with_change(["identity_center_group"], "TeamNLP"), "TeamNLP is the group of vision and nlp"),
    ("typo in a key", with_change(["quota", "borow_limit"], 5), "quota.borow_limit: unknown key (did you mean 'borrow_limit'?)"),
    ("unknown team key", with_change(["budgett"], {}), "team 'vision': budgett: unknown key (did you mean 'budget'?)"),
    ("bad state", with_change(["state"], "gone"), "state: 'gone' is not one of present, absent"),
    ("unknown instance type", with_change(["quota", "resources"], [{"instance_type": "ml.p9.48xlarge", "count": 1}]), "not a HyperPod instance type"),
    ("type the cluster lacks", with_change(["quota", "resources"], [{"instance_type": "ml.g5.xlarge", "count": 1}]), "the cluster has no ml.g5.xlarge"),
    (
        "over capacity",
        with_change(["quota", "resources"], [{"instance_type": "ml.p5.48xlarge", "count": 5}]),
        "guaranteed ml.p5.48xlarge total 9 (vision 5, nlp 4) but the cluster has 8",
    ),
    ("negative count", with_change(["quota", "resources"], [{"instance_type": "ml.p5.48xlarge", "count": -1}]), "resources[0].count: -1 must be a whole"),
    ("count as text", with_change(["quota", "resources"], [{"instance_type": "ml.p5.48xlarge", "count": "4"}]), "quota.resources[0].count: '4'"),
    ("no amount", with_change(["quota", "resources"], [{"instance_type": "ml.p5.48xlarge"}]), "needs count, accelerators"),
    ("type listed twice", with_change(["quota", "resources"], [{"instance_type": "ml.p5.48xlarge", "count": 1}] * 2), "ml.p5.48xlarge is listed twice"),
    ("empty resources", with_change(["quota", "resources"], []), "quota.resources: must be a non-empty list"),
    ("borrow limit too high", with_change(["quota", "borrow_limit"], 10001), "quota.borrow_limit: 10001"),
    ("borrow limit without borrowing", with_change(["quota", "sharing"], "lend"), "applies only with sharing: lend_and_borrow"),
    ("weight out of range", with_change(["quota", "fair_share_weight"], 101), "quota.fair_share_weight: 101"),
    ("bad sharing", with_change(["quota", "sharing"], "borrow"), "quota.sharing: 'borrow' is not one of"),
    ("bad preempt", with_change(["quota", "preempt"], "always"), "quota.preempt"),
    ("duplicate member", with_change(["members"], ["alice", "alice"]), "members[1].name: alice is listed twice"),
    ("member name pattern", with_change(["members"], ["al ice"]), "members[0].name: 'al ice' must match"),
    ("bad uid", with_change(["members"], [{"name": "alice", "uid": 0}]), "members[0].uid: 0"),
    ("bad budget", with_change(["budget", "monthly_usd"], -5), "budget.monthly_usd: -5 must be a positive number"),
    ("bad notify", with_change(["budget", "notify"], ["finops"]), "budget.notify[0]: 'finops' is neither"),
    ("bad mode", with_change(["storage"], {"mode": 2770}), "storage.mode: 2770 must be an octal mode"),
    ("bad access policy", with_change(["access"], {"policies": ["admin"]}), "access.policies[0]: 'admin' is not one of"),
    ("bool as text", with_change(["workspace"], {"enabled": "yes"}), "workspace.enabled: must be true or false"),
    ("quota not a mapping", with_change(["quota"], ["p5"]), "quota: must be a mapping"),
]


@pytest.mark.parametrize("label, teams, expected", BROKEN_FILES, ids=[case[0] for case in BROKEN_FILES])
def test_each_rule_names_team_and_field(label, teams, expected):
    problems = problems_of(teams)
    assert any(expected in problem for problem in problems), problems


def test_absent_teams_do_not_count_against_capacity():
    teams = with_change(["quota", "resources"], [{"instance_type": "ml.p5.48xlarge", "count": 5}])
    assert problems_of(teams)
    teams[1]["state"] = "absent"
    assert problems_of(teams) == []


def test_every_problem_is_reported_at_once():
    teams = with_change(["quota", "fair_share_weight"], 101)
    teams[1]["name"] = "NLP"
    problems = problems_of(teams)
    assert len(problems) >= 2
    assert any("team 'vision'" in p for p in problems) and any("team 'NLP'" in p for p in problems)


def test_teams_must_be_a_list():
    assert problems_of(teams={"name": "vision"}) == ["hyperpod_teams: must be a list of teams, got dict"]


@pytest.mark.parametrize(
    "cluster_change, expected",
    [
        ({"scheduler": {"priority_classes": [{"name": "p%d" % i, "weight": 1} for i in range(11)]}}, "has 11 entries"),
        ({"scheduler": {"priority_classes": [{"name": "Training", "weight": 1}]}}, "priority_classes[0].name: 'Training' must match"),
        ({"scheduler": {"priority_classes": [{"name": "training", "weight": 101}]}}, "priority_classes[0].weight: 101"),
        ({"name": "ml_shared"}, "cluster: name: 'ml_shared' must match"),
        ({"instance_groups": [{"name": "x", "instance_type": "ml.p5.48xlarge", "count": 8}] * 2}, "instance_groups[1].name: 'x' is used twice"),
    ],
)
def test_cluster_rules(cluster_change, expected):
    cluster = dict(copy.deepcopy(CLUSTER), **cluster_change)
    assert any(expected in p for p in problems_of(cluster=cluster)), problems_of(cluster=cluster)
    assert problems_of(cluster=CLUSTER) == []


def test_longer_prefix_shortens_allowed_names():
    teams = with_change(["name"], "computer-vision-lab")
    assert problems_of(teams, prefix="hyperpod") == []
    assert any("permission set name" in p for p in problems_of(teams, prefix="platform-hyperpod"))
