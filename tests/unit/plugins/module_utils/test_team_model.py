"""Every team-file rule, each with a file that breaks it and the same file without the break."""

from __future__ import annotations

import copy

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import budget
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_model import check_team_file, check_team_file_with_places

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
    assert vision["access"] == {"policies": ["training", "inference"], "cluster_read": False, "pod_security": "restricted"}
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
    ("borrow limit too high", with_change(["quota", "borrow_limit"], 501), "quota.borrow_limit: 501"),
    ("borrow limit without borrowing", with_change(["quota", "sharing"], "lend"), "applies only with sharing: lend_and_borrow"),
    ("weight out of range", with_change(["quota", "fair_share_weight"], 101), "quota.fair_share_weight: 101"),
    ("bad sharing", with_change(["quota", "sharing"], "borrow"), "quota.sharing: 'borrow' is not one of"),
    ("bad preempt", with_change(["quota", "preempt"], "always"), "quota.preempt"),
    ("duplicate member", with_change(["members"], ["alice", "alice"]), "members[1].name: alice is listed twice"),
    ("member name pattern", with_change(["members"], ["al ice"]), "members[0].name: 'al ice' must match"),
    ("bad uid", with_change(["members"], [{"name": "alice", "uid": 0}]), "members[0].uid: 0"),
    ("bad budget", with_change(["budget", "monthly_usd"], -5), "budget.monthly_usd: -5 must be a positive number"),
    ("bad notify", with_change(["budget", "notify"], ["finops"]), "budget.notify[0]: 'finops' is neither"),
    # AWS Budgets' limits (module_utils/budget.py), before any call: 5 + 1 notifications, 11 e-mail addresses, 2 topics.
    ("six notifications", with_change(["budget", "thresholds"], [50, 60, 70, 80, 90]), "budget: a budget has at most 5 notifications"),
    (
        "eleven e-mail addresses",
        with_change(["budget", "notify"], ["finops%d@example.com" % n for n in range(11)]),
        "budget: notify: a notification has at most one SNS topic and 10 e-mail addresses",
    ),
    (
        "two SNS topics",
        with_change(["budget", "notify"], ["arn:aws:sns:us-east-1:123456789012:a", "arn:aws:sns:us-east-1:123456789012:b"]),
        "budget: notify: a notification has at most one SNS topic",
    ),
    ("bad mode", with_change(["storage"], {"mode": 2770}), "storage.mode: 2770 must be an octal mode"),
    ("bad access policy", with_change(["access"], {"policies": ["admin"]}), "access.policies[0]: 'admin' is not one of"),
    ("bad pod security level", with_change(["access"], {"pod_security": "privileged"}), "access.pod_security: 'privileged' is not one of"),
    ("bool as text", with_change(["workspace"], {"enabled": "yes"}), "workspace.enabled: must be true or false"),
    ("quota not a mapping", with_change(["quota"], ["p5"]), "quota: must be a mapping"),
]


@pytest.mark.parametrize("label, teams, expected", BROKEN_FILES, ids=[case[0] for case in BROKEN_FILES])
def test_each_rule_names_team_and_field(label, teams, expected):
    problems = problems_of(teams)
    assert any(expected in problem for problem in problems), problems


NOTIFY_TARGETS = [
    ("e-mail", "finops@example.com", True),
    ("SNS topic", "arn:aws:sns:us-east-1:123456789012:finops_alerts-1", True),
    ("SNS topic of another partition", "arn:aws-cn:sns:cn-north-1:123456789012:finops", True),
    ("topic name with a non-ASCII letter", "arn:aws:sns:us-east-1:123456789012:fin\u00e9ops", False),
    ("topic name of 257 characters", "arn:aws:sns:us-east-1:123456789012:" + "t" * 257, False),
    ("account of 11 digits", "arn:aws:sns:us-east-1:12345678901:finops", False),
]


THRESHOLDS = [
    ("a percentage beyond 1000", 5000, True),
    ("AWS's limit", budget.MAX_THRESHOLD, True),
    ("beyond AWS's limit", budget.MAX_THRESHOLD + 1, False),
    ("botocore's bound, for an absolute threshold", 15000000000000, False),
    ("zero", 0, False),
]


@pytest.mark.parametrize("label, threshold, valid", THRESHOLDS, ids=[case[0] for case in THRESHOLDS])
def test_thresholds_are_checked_as_team_budget_checks_them(label, threshold, valid):
    """One bound of a threshold (budget.MAX_THRESHOLD, AWS's 1,000,000 %) for the team file and team_budget."""
    problems = problems_of(with_change(["budget", "thresholds"], [threshold]))
    assert (not problems) is valid, problems
    assert valid or "at most 1,000,000" in problems[0]
    try:
        budget.validate("vision", "hyperpod", 1000, [threshold], [100], ["finops@example.com"])
        module_accepts = True
    except InputError:
        module_accepts = False
    assert module_accepts is valid


def test_the_sandbox_double_takes_the_collections_threshold_bound():
    from sandbox.services import budgets_ext

    assert budgets_ext.MAX_PERCENTAGE_THRESHOLD == budget.MAX_THRESHOLD


@pytest.mark.parametrize("label, address, valid", NOTIFY_TARGETS, ids=[case[0] for case in NOTIFY_TARGETS])
def test_notify_targets_are_checked_as_team_budget_checks_them(label, address, valid):
    """The team file accepts exactly the notify targets hyperpod.tenancy.team_budget accepts (one pattern, naming.py)."""
    problems = problems_of(with_change(["budget", "notify"], [address]))
    assert (not problems) is valid, problems
    try:
        budget.validate("vision", "hyperpod", 1000, [80], [100], [address])
        module_accepts = True
    except InputError:
        module_accepts = False
    assert module_accepts is valid


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


def test_a_bad_choices_setting_is_reported_and_keeps_the_s3_link_default():
    """Threat model 12 (H5): a key that is no string is a problem, not a TypeError; a refused value of storage.s3_link keeps the default ([false])."""
    refused = check_team_file(TEAMS, CLUSTER, team_limits={"choices": {1: [True]}})[0]
    assert len(refused) == 1 and refused[0].startswith("settings: hyperpod_team_limits.choices.1: is no choice of the team file"), refused
    teams = copy.deepcopy(TEAMS)
    teams[0]["storage"] = {"s3_link": True}
    problems = check_team_file(teams, CLUSTER, team_limits={"choices": {"storage.s3_link": "yes"}})[0]
    assert problems[0] == "settings: hyperpod_team_limits.choices.storage.s3_link: 'yes' must be a list among false, true"
    assert problems[1].startswith("team 'vision': storage.s3_link: true is not allowed for this team: the platform allows false"), problems


def test_an_absent_entry_is_offboardable_whatever_its_choices_say():
    """Threat model 12 (H3): the platform's choices narrow what a present team asks for; an absent entry's leftovers never block its offboarding."""
    teams = copy.deepcopy(TEAMS)
    teams[0].update(state="absent", storage={"s3_link": True}, workspace={"app_network_access_type": "PublicInternetOnly"})
    assert problems_of(teams) == []


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


def two_teams(**changes):
    """vision and nlp with storage and uids; ``changes`` maps (team index, key) paths to values."""
    teams = copy.deepcopy(TEAMS)
    teams[0].update(members=[{"name": "alice", "uid": 10001}, {"name": "bob", "uid": 10002}], storage={"gid": 20001})
    teams[1].update(members=[{"name": "dave", "uid": 10004}], storage={"gid": 20002})
    for path, value in changes.items():
        index, *keys = path.split("__")
        target = teams[int(index[1:])]
        for key in keys[:-1]:
            target = target[int(key)] if key.isdigit() else target[key]
        target[int(keys[-1]) if keys[-1].isdigit() else keys[-1]] = value
    return teams


ACROSS_TEAMS = [
    ("gid shared", two_teams(t1__storage__gid=20001), "teams: storage.gid: 20001 is the gid of vision and nlp: a gid belongs to one team"),
    ("uid of two people", two_teams(t1__members__0__uid=10001), "uid 10001 is given to alice (team vision) and dave (team nlp)"),
    ("one person, two uids", two_teams(t1__members__0={"name": "alice", "uid": 10009}), "alice has different uids (10001 in vision, 10009 in nlp)"),
    ("one person, two uids, other case", two_teams(t1__members__0={"name": "Alice", "uid": 10009}), "alice has different uids"),
    ("alice and Alice in one team", two_teams(t0__members__1={"name": "Alice", "uid": 10003}), "members[1].name: alice and Alice differ only in case"),
    ("mode 0777", two_teams(t0__storage__mode="0777"), "storage.mode: mode '0777' makes the team directory world-writable"),
    ("mode 2777", two_teams(t0__storage__mode="2777"), "mode '2777' makes the team directory world-writable"),
    ("mode '777'", two_teams(t0__storage__mode="777"), "mode '777' makes the team directory world-writable"),
    ("unquoted 0777", two_teams(t0__storage__mode=0o777), "storage.mode: 511 must be an octal mode given as a string"),
]


@pytest.mark.parametrize("label, teams, expected", ACROSS_TEAMS, ids=[case[0] for case in ACROSS_TEAMS])
def test_ids_and_modes_are_checked_across_teams(label, teams, expected):
    problems = problems_of(teams)
    assert any(expected in problem for problem in problems), problems


def test_the_same_person_in_two_teams_with_one_uid_is_valid():
    assert problems_of(two_teams(t1__members__0={"name": "alice", "uid": 10001})) == []


def test_every_id_problem_is_reported_at_once():
    problems = problems_of(two_teams(t1__storage__gid=20001, t1__members__0__uid=10002, t0__storage__mode="2777"))
    assert [p.split(":")[0] + ":" + p.split(":")[1] for p in problems] == [
        "team 'vision': storage.mode", "teams: storage.gid", "teams: members"]


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"name": False}, "team #1: name: False is not text (YAML reads an unquoted yes, no, on, off, true or false as a boolean"),
        ({"name": 2024}, "team #1: name: 2024 is not text (YAML reads an unquoted number as a number: quote it"),
        ({"budget": {"monthly_usd": "1e3"}}, "budget.monthly_usd: '1e3' must be a positive number (YAML reads 1e3 as text"),
        ({"quota": {"resources": [{"instance_type": "ml.p5.48xlarge", "count": 1}], "borrow_limit": 0}},
         "quota.borrow_limit: 0 must be a whole number from 1 to 500"),
        ({"quota": {"resources": [{"instance_type": "ml.p5.48xlarge", "count": 1}], "borrow_limit": 501}}, "from 1 to 500"),
        ({"tags": {"aws:owner": "me"}}, "tags.aws:owner: tag key 'aws:owner': keys starting with aws: are reserved"),
        ({"tags": {"project": "x" * 257}}, "tags.project: tag 'project': the value has 257 characters"),
        ({"tags": {"team": "nlp"}}, "tags.team: is set from the team's name on every team resource"),
        ({"tags": {"managed-by": "me"}}, "tags.managed-by: is set from the collection"),
        ({"tags": {"n": 5}}, "tags.n: 5 must be text"),
        ({"cost_center": "CC-1,CC-2"}, "cost_center: tag 'cost-center': the value 'CC-1,CC-2' has ','"),
    ],
)
def test_yaml_surprises_tags_and_limits(change, expected):
    teams = copy.deepcopy(TEAMS)
    teams[0].update(change)
    problems = problems_of(teams)
    assert any(expected in problem for problem in problems), problems


S3_LINK_ALLOWED = {"choices": {"storage.s3_link": [False, True]}}


def test_nine_teams_with_s3_link_are_refused_eight_are_not():
    teams = [{"name": "t%d" % i, "identity_center_group": "T%d" % i, "storage": {"gid": 30000 + i, "s3_link": True}} for i in range(9)]

    def problems(teams):
        return check_team_file(teams, CLUSTER, team_limits=S3_LINK_ALLOWED)[0]

    assert any("9 teams link their directory to S3" in p and "at most 8 data repository associations" in p for p in problems(teams))
    assert problems(teams[:8]) == []
    teams[8]["state"] = "absent"
    assert problems(teams) == []


def test_a_team_links_its_directory_to_s3_only_where_the_platform_allows_it():
    """Threat model 12: a lead's pull request alone does not turn on an FSx data repository association."""
    teams = copy.deepcopy(TEAMS)
    teams[0]["storage"] = {"s3_link": True}
    assert problems_of(teams) == [
        "team 'vision': storage.s3_link: true is not allowed for this team: the platform allows false (hyperpod_team_limits.choices."
        "storage.s3_link, or hyperpod_team_limits.teams.vision.choices.storage.s3_link, in the cluster file)"
    ]
    # Narrowing another choice leaves this one at its default: the platform opts in by naming it.
    assert len(check_team_file(teams, CLUSTER, team_limits={"choices": {"quota.preempt": ["never", "lower_priority"]}})[0]) == 1
    assert check_team_file(teams, CLUSTER, team_limits=S3_LINK_ALLOWED)[0] == []
    one_team = {"teams": {"vision": {"choices": {"storage.s3_link": [False, True]}}}}
    assert check_team_file(teams, CLUSTER, team_limits=one_team)[0] == []
    teams[1]["storage"] = {"s3_link": True}
    assert [p.split(":")[0] for p in check_team_file(teams, CLUSTER, team_limits=one_team)[0]] == ["team 'nlp'"]
    refused = check_team_file(TEAMS, CLUSTER, team_limits={"choices": {"storage.s3_link": ["yes", 1]}})[0]
    assert refused == ["settings: hyperpod_team_limits.choices.storage.s3_link: ['yes', 1] must be a list among false, true"]


def test_a_team_reads_the_whole_cluster_only_where_the_platform_allows_it():
    """Threat model m13: the cluster read (every team's ClusterQueue, its quota and usage) is the platform's to give, per team
    or to all; a lead's pull request alone does not turn it on, and by default no team has it."""
    teams = copy.deepcopy(TEAMS)
    assert all(team["access"]["cluster_read"] is False for team in check_team_file(teams, CLUSTER)[1])
    teams[0]["access"] = {"cluster_read": True}
    assert problems_of(teams) == [
        "team 'vision': access.cluster_read: true is not allowed for this team: the platform allows false (hyperpod_team_limits.choices."
        "access.cluster_read, or hyperpod_team_limits.teams.vision.choices.access.cluster_read, in the cluster file)"
    ]
    assert check_team_file(teams, CLUSTER, team_limits={"choices": {"access.cluster_read": [False, True]}})[0] == []
    one_team = {"teams": {"vision": {"choices": {"access.cluster_read": [False, True]}}}}
    assert check_team_file(teams, CLUSTER, team_limits=one_team)[0] == []
    teams[1]["access"] = {"cluster_read": True}
    assert [p.split(":")[0] for p in check_team_file(teams, CLUSTER, team_limits=one_team)[0]] == ["team 'nlp'"]


@pytest.mark.parametrize(
    "cluster_change, expected",
    [
        ({"node_recovery": "automatc"}, "cluster: node_recovery: value of node_recovery must be one of: automatic, none, got: automatc"),
        ({"instance_groups": [{"name": "p5", "instance_type": "ml.p5.48xlarge", "count": 8, "threads_per_core": 3}]},
         "cluster: instance_groups[0].threads_per_core: value of threads_per_core must be one of: 1, 2, got: 3"),
        ({"instance_groups": [{"name": "p5", "instance_type": "ml.p5.48xlarge", "count": 8, "ebs_volume_size_gib": "big"}]},
         "cluster: instance_groups[0].ebs_volume_size_gib: argument 'ebs_volume_size_gib' is of type str"),
        ({"instance_groups": [{"name": "p5", "instance_type": "ml.p5.48xlarge", "count": 8, "ebs_volume_size_gib": 0}]},
         "CreateCluster would refuse instance_groups[p5].InstanceStorageConfigs[0].EbsVolumeConfig.VolumeSizeInGB: 0 must be between 1"),
        ({"scheduler": {"fair_share": "yes"}}, "cluster: scheduler.fair_share: 'yes' must be true or false"),
        ({"node_recovey": "automatic"}, "cluster: node_recovey: unknown key (did you mean 'node_recovery'?)"),
    ],
)
def test_cluster_file_is_checked_as_the_cluster_module_and_botocore_check_it(cluster_change, expected):
    cluster = dict(copy.deepcopy(CLUSTER), **cluster_change)
    problems = problems_of(cluster=cluster, teams=[])
    assert any(expected in problem for problem in problems), problems


def test_settings_are_named_once():
    problems = check_team_file(TEAMS, CLUSTER, "Hyper_Pod", tag_keys={"team": "aws:team"}, data_bucket="Team_Data")[0]
    assert [p for p in problems if "name:" in p] == []  # the teams' names are not blamed for the prefix
    assert any(p.startswith("settings: hyperpod_name_prefix: 'Hyper_Pod' gives") for p in problems), problems
    assert any("settings: hyperpod_team_tag_keys.team: tag key 'aws:team'" in p for p in problems), problems
    assert any("settings: hyperpod_data_bucket: data_bucket 'Team_Data' is not an S3 bucket name" in p for p in problems), problems


def test_every_problem_says_which_value_it_is_about():
    teams = two_teams(t1__storage__gid=20001, t0__quota__borrow_limit=0)
    problems, unused_teams, unused_capacity, places = check_team_file_with_places(teams, dict(CLUSTER, node_recovery="x"))
    assert dict(zip(problems, places, strict=True)) == {
        "cluster: node_recovery: value of node_recovery must be one of: automatic, none, got: x (an option of hyperpod.tenancy.hyperpod_cluster)":
            ("cluster", None, "node_recovery"),
        "team 'vision': quota.borrow_limit: 0 must be a whole number from 1 to 500": ("teams", 0, "quota.borrow_limit"),
        "teams: storage.gid: 20001 is the gid of vision and nlp: a gid belongs to one team": ("teams", None, "storage.gid"),
    }


def with_quota(**quota):
    teams = copy.deepcopy(TEAMS)
    teams[0]["quota"].update(quota)
    return teams


@pytest.mark.parametrize("quota, field, expected", [
    ({"borrow_limit": 101}, "quota.borrow_limit", "101 is above 100"),
    ({"fair_share_weight": 51}, "quota.fair_share_weight", "51 is above 50"),
    ({"absolute_borrow_limits": [{"instance_type": "ml.p5.48xlarge", "count": 5}]}, "quota.absolute_borrow_limits[0].count", "5 is above 4"),
    ({"absolute_borrow_limits": [{"instance_type": "ml.g5.12xlarge", "count": 1}]}, "quota.absolute_borrow_limits[0].count", "1 is above 0"),
])
def test_a_team_asks_no_more_than_the_platforms_limits(quota, field, expected):
    """Threat model 6: each bound, one above it refused naming the field; at the bound accepted."""
    problems = problems_of(with_quota(**quota))
    assert len(problems) == 1 and problems[0].startswith("team 'vision': %s: %s" % (field, expected)), problems
    assert problems[0].endswith("the platform's maximum for this team (hyperpod_team_limits in the cluster file)")
    at_bound = {"borrow_limit": 100, "fair_share_weight": 50, "absolute_borrow_limits": [{"instance_type": "ml.p5.48xlarge", "count": 4}]}
    assert problems_of(with_quota(**at_bound)) == []


def test_the_platform_sets_limits_for_every_team_and_for_one():
    teams = with_quota(borrow_limit=300, fair_share_weight=90)
    teams[1]["quota"].update(borrow_limit=300)
    limits = {"borrow_limit": 200, "teams": {"vision": {"borrow_limit": 300, "fair_share_weight": 90}}}
    assert check_team_file(teams, CLUSTER, team_limits=limits)[0] == [
        "team 'nlp': quota.borrow_limit: 300 is above 200, the platform's maximum for this team (hyperpod_team_limits in the cluster file)"]


def test_the_platforms_settings_are_checked_and_name_present_teams():
    limits = {"borrow_limit": 0, "min_id": "1000", "reserved_names": "x", "teams": {"vision": {"weight": 1}, "audio": {}}, "colour": 1}
    problems = check_team_file(TEAMS, CLUSTER, team_limits=limits, adopt={"vision": "quota"})[0]
    assert problems == [
        "settings: hyperpod_adopt.vision: must be a list of layers, among %s" % problems[0].split("among ")[1],
        "settings: hyperpod_team_limits.colour: unknown key; allowed: borrow_limit, choices, fair_share_weight, min_id, pod_security, reserved_names, "
        "studio_instance_types, "
        "teams",
        "settings: hyperpod_team_limits.borrow_limit: 0 must be a whole number from 1 to 500",
        "settings: hyperpod_team_limits.min_id: '1000' must be a whole number from 1 to 4294967294 (it is quoted or has separators, so YAML reads "
        "it as text: write the number alone, unquoted)",
        "settings: hyperpod_team_limits.reserved_names: must be a list of team names",
        "settings: hyperpod_team_limits.teams.vision.weight: unknown key; allowed: borrow_limit, choices, fair_share_weight, pod_security, "
        "studio_instance_types",
        "settings: hyperpod_team_limits.teams.audio: names no team of the team file (teams: nlp, vision)",
    ]


@pytest.mark.parametrize("name", ["platform", "lifecycle", "datasets", "observability", "ml-infra"])
def test_a_name_reserved_for_the_platform_is_refused(name):
    """Threat model 3: the collection's reserved names, and the platform's own."""
    teams = copy.deepcopy(TEAMS)
    teams[1]["name"] = name
    problems = check_team_file(teams, CLUSTER, team_limits={"reserved_names": ["ml-infra"]})[0]
    assert len(problems) == 1 and problems[0].startswith("team '%s': name: '%s' is reserved for the platform (" % (name, name)), problems


@pytest.mark.parametrize("member_uid, gid, mode, expected", [
    (999, 20001, "2770", ["team 'vision': members[1].uid: 999 is below 1000"]),
    (10002, 4, "2770", ["team 'vision': storage.gid: 4 is below 1000"]),
    (65534, 65535, "2770", ["team 'vision': members[1].uid: 65534 is nobody's", "team 'vision': storage.gid: 65535 is nobody's"]),
    (10002, 20001, "2775", ["team 'vision': storage.mode: '2775' gives every user of the cluster access"]),
    (10002, 20001, "2771", ["team 'vision': storage.mode: '2771' gives every user of the cluster access"]),
    (10002, 20001, "6770", ["team 'vision': storage.mode: '6770' sets the setuid bit"]),
    (1000, 1000, "0750", []),
])
def test_system_ids_and_modes_open_to_others_are_refused(member_uid, gid, mode, expected):
    """Threat model 7: ids below the platform's floor (hyperpod_team_limits.min_id) or nobody's; no access for others."""
    teams = copy.deepcopy(TEAMS)
    teams[0]["members"][1]["uid"] = member_uid
    teams[0]["storage"] = {"gid": gid, "mode": mode}
    problems = problems_of(teams)
    assert len(problems) == len(expected) and all(p.startswith(e) for p, e in zip(problems, expected, strict=True)), problems


def test_a_present_team_cannot_take_the_group_of_a_team_being_offboarded():
    """Threat model 7: an absent team keeps its group until it is gone."""
    teams = copy.deepcopy(TEAMS)
    teams[1].update(state="absent", identity_center_group="TeamVision")
    assert problems_of(teams) == ["teams: identity_center_group: TeamVision is the group of vision and nlp: a group belongs to one team"]


def test_the_platform_narrows_any_choice_of_the_team_file_for_every_team_or_one():
    """Threat model 6: Studio apps with internet access only where the platform allows it (hyperpod_team_limits.choices)."""
    teams = copy.deepcopy(TEAMS)
    for entry in teams:
        entry["workspace"] = {"app_network_access_type": "PublicInternetOnly"}
    problems = check_team_file(teams, CLUSTER)[0]
    assert problems == ["team '%s': workspace.app_network_access_type: 'PublicInternetOnly' is not allowed for this team: the platform allows "
                        "VpcOnly (hyperpod_team_limits.choices.workspace.app_network_access_type, or hyperpod_team_limits.teams.%s.choices."
                        "workspace.app_network_access_type, in the cluster file)" % (name, name) for name in ("vision", "nlp")]
    limits = {"teams": {"vision": {"choices": {"workspace.app_network_access_type": ["VpcOnly", "PublicInternetOnly"]}}}}
    assert [p.split(":")[0] for p in check_team_file(teams, CLUSTER, team_limits=limits)[0]] == ["team 'nlp'"]
    refused = check_team_file(TEAMS, CLUSTER, team_limits={"choices": {"state": ["present"], "quota.preempt": ["sometimes"]}})[0]
    assert [p.split(":")[1].strip() for p in refused] == ["hyperpod_team_limits.choices.state", "hyperpod_team_limits.choices.quota.preempt"]


def test_the_platforms_inheritance_is_checked_before_any_call_and_names_present_teams():
    """Threat model 5: hyperpod_inherit is the platform's (cluster file); its shape and teams are checked up front."""
    assert check_team_file(TEAMS, CLUSTER, inherit={"vision": "research"})[0] == []
    problems = check_team_file(TEAMS, CLUSTER, inherit={"nlp": 5, "audio": "speech"})[0]
    assert problems == [
        "settings: hyperpod_inherit.nlp: must be the name of a retired team, or a list of them, not 5",
        "settings: hyperpod_inherit.audio: names no team of the team file (teams: nlp, vision)",
    ]


def test_a_team_takes_no_more_tags_than_its_s3_mark_can_carry():
    teams = copy.deepcopy(TEAMS)
    teams[0]["tags"] = {"k%d" % index: "v" for index in range(5)}
    assert problems_of(teams) == []
    teams[0]["tags"]["k5"] = "v"
    assert problems_of(teams) == ["team 'vision': tags: has 6 tags; a team takes at most 5: its S3 ownership mark carries them beside the "
                                  "collection's five, and S3 takes at most 10 tags on an object"]


def test_studio_instance_types_are_the_platforms_never_the_team_files():
    """Red team H1: a member runs Studio as the team's execution role; the instance types it may ask for are the platform's
    (hyperpod_team_limits.studio_instance_types, default small CPU types), set for every team or for one, never by the team."""
    problems, teams, unused = check_team_file(copy.deepcopy(TEAMS), CLUSTER)
    assert problems == [] and teams[0]["studio_instance_types"] == ["system", "ml.t3.medium", "ml.t3.large", "ml.m5.large", "ml.m5.xlarge"]
    limits = {"studio_instance_types": ["system"], "teams": {"vision": {"studio_instance_types": ["system", "ml.g5.xlarge"]}}}
    problems, teams, unused = check_team_file(copy.deepcopy(TEAMS), CLUSTER, team_limits=limits)
    assert problems == [] and {t["name"]: t["studio_instance_types"] for t in teams} == {"vision": ["system", "ml.g5.xlarge"], "nlp": ["system"]}
    own = copy.deepcopy(TEAMS)
    own[0]["studio_instance_types"] = ["ml.p5.48xlarge"]
    problems, teams, unused = check_team_file(own, CLUSTER)
    assert problems == ["team 'vision': studio_instance_types: is the platform's decision, not the team's: the platform lists it in the cluster "
                        "file's hyperpod_team_limits.teams.vision.studio_instance_types (docs/isolation.md)"]
    assert teams[0]["studio_instance_types"] == ["system", "ml.t3.medium", "ml.t3.large", "ml.m5.large", "ml.m5.xlarge"]
    problems = check_team_file(copy.deepcopy(TEAMS), CLUSTER, team_limits={"studio_instance_types": ["p5"]})[0]
    assert len(problems) == 1 and problems[0].startswith("settings: hyperpod_team_limits.studio_instance_types: ['p5'] must be a non-empty list")
