"""plugins/module_utils/quota.py: normalization, comparison, input and capacity checks, conflict retry."""

from __future__ import annotations

import copy

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import engine
from ansible_collections.hyperpod.tenancy.plugins.module_utils import quota as q
from ansible_collections.hyperpod.tenancy.plugins.module_utils.compare import differences
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import ConflictError, HyperPodError, InputError
from botocore.exceptions import ClientError

CLUSTER_ARN = "arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdefabcdef"


def converged(manager):
    """The engine's run of ``manager`` by its ``state``: (changed, before, after, quota)."""
    return engine.converge(manager, manager.params["state"], manager.check_mode)


def params(**overrides):
    base = {
        "state": "present", "team": "vision", "cluster": "ml-shared", "name_prefix": "hyperpod",
        "resources": [{"instance_type": "ml.p5.48xlarge", "count": 4}],
        "sharing": None, "borrow_limit": None, "absolute_borrow_limits": None, "preempt": None,
        "fair_share_weight": None, "activation": None, "description": None, "cost_center": None,
        "tag_keys": None, "tags": None, "purge_tags": True, "wait": True, "wait_timeout": 30,
    }
    base.update(overrides)
    return base


# Team vision's quota with every setting at its documented default, as the API takes and answers it.
DEFAULT_SETTINGS = {
    "ComputeQuotaConfig": {
        "ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Count": 4}],
        "ResourceSharingConfig": {"Strategy": "LendAndBorrow", "BorrowLimit": 50},
        "PreemptTeamTasks": "LowerPriority",
    },
    "ComputeQuotaTarget": {"TeamName": "vision", "FairShareWeight": 0},
    "ActivationState": "Enabled",
}


def described(**overrides):
    """A DescribeComputeQuota answer as AWS gives it: floats, server fields, defaults filled."""
    quota = dict(
        copy.deepcopy(DEFAULT_SETTINGS),
        ComputeQuotaArn="arn:aws:sagemaker:us-east-1:123456789012:compute-quota/q1q1q1q1q1q1",
        ComputeQuotaId="q1q1q1q1q1q1",
        Name="hyperpod-vision-quota",
        ComputeQuotaVersion=3,
        Status="Updated",
        ClusterArn=CLUSTER_ARN,
        CreationTime="2026-11-30T00:00:00Z",
        LastModifiedTime="2026-11-30T00:00:00Z",
    )
    quota.update(overrides)
    return quota


@pytest.mark.parametrize(
    "resource, api",
    [
        ({"instance_type": "ml.p5.48xlarge", "count": 2}, {"InstanceType": "ml.p5.48xlarge", "Count": 2}),
        (
            {"instance_type": "ml.g5.12xlarge", "accelerators": 2, "vcpu": 24.0, "memory_gib": 96.5},
            {"InstanceType": "ml.g5.12xlarge", "Accelerators": 2, "VCpu": 24.0, "MemoryInGiB": 96.5},
        ),
        (
            {"instance_type": "ml.p5.48xlarge", "accelerator_partition": {"type": "mig-1g.10gb", "count": 3}},
            {"InstanceType": "ml.p5.48xlarge", "AcceleratorPartition": {"Type": "mig-1g.10gb", "Count": 3}},
        ),
    ],
)
def test_resources_round_trip_between_options_and_api(resource, api):
    assert q.to_api_resource(dict(resource, count=resource.get("count"))) == api
    assert q.from_api_resource(api) == resource


def test_a_new_quota_takes_the_documented_defaults():
    desired = q.desired_settings(params())
    assert desired == DEFAULT_SETTINGS


@pytest.mark.parametrize(
    "server_says",
    [
        {},  # exactly as desired
        {"Status": "Created", "ComputeQuotaVersion": 9, "LastModifiedTime": "later"},  # server-managed fields
        {"ComputeQuotaConfig": {"ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Count": 4}]}},  # defaults omitted
    ],
)
def test_what_the_server_returns_for_the_same_settings_is_no_change(server_says):
    current = q.current_settings(described(**server_says))
    assert q.desired_settings(params(), current) == current


def test_resource_order_and_float_amounts_are_no_change():
    resources = [
        {"instance_type": "ml.p5.48xlarge", "count": 2, "accelerators": None, "vcpu": None, "memory_gib": None, "accelerator_partition": None},
        {"instance_type": "ml.g5.12xlarge", "count": None, "accelerators": None, "vcpu": 8, "memory_gib": None, "accelerator_partition": None},
    ]
    server = described(ComputeQuotaConfig={
        "ComputeQuotaResources": [{"InstanceType": "ml.g5.12xlarge", "VCpu": 8.0}, {"InstanceType": "ml.p5.48xlarge", "Count": 2}],
        "ResourceSharingConfig": {"Strategy": "LendAndBorrow", "BorrowLimit": 50},
        "PreemptTeamTasks": "LowerPriority",
    })
    current = q.current_settings(server)
    assert q.desired_settings(params(resources=resources), current) == current


@pytest.mark.parametrize(
    "change, path, expected",
    [
        (
            {"resources": [{"instance_type": "ml.p5.48xlarge", "count": 5}]},
            ("ComputeQuotaConfig", "ComputeQuotaResources"),
            [{"InstanceType": "ml.p5.48xlarge", "Count": 5}],
        ),
        ({"sharing": "lend"}, ("ComputeQuotaConfig", "ResourceSharingConfig"), {"Strategy": "Lend"}),
        ({"sharing": "dont_lend"}, ("ComputeQuotaConfig", "ResourceSharingConfig"), {"Strategy": "DontLend"}),
        ({"borrow_limit": 200}, ("ComputeQuotaConfig", "ResourceSharingConfig"), {"Strategy": "LendAndBorrow", "BorrowLimit": 200}),
        ({"preempt": "never"}, ("ComputeQuotaConfig", "PreemptTeamTasks"), "Never"),
        ({"fair_share_weight": 40}, ("ComputeQuotaTarget", "FairShareWeight"), 40),
        ({"activation": "disabled"}, ("ActivationState",), "Disabled"),
        ({"description": "Team vision"}, ("Description",), "Team vision"),
    ],
)
def test_each_option_changes_only_its_member(change, path, expected):
    current = q.current_settings(described())
    desired = q.desired_settings(params(**dict({"resources": None}, **change)), current)
    value = desired
    for key in path:
        value = value[key]
    assert value == expected
    changed = differences(current, desired)
    assert changed and all(p.startswith(".".join(path)) for p in changed), changed


def test_lend_back_to_lend_and_borrow_gets_the_default_borrow_limit():
    current = q.current_settings(described(ComputeQuotaConfig={"ResourceSharingConfig": {"Strategy": "Lend"}}))
    desired = q.desired_settings(params(resources=None, sharing="lend_and_borrow"), current)
    assert desired["ComputeQuotaConfig"]["ResourceSharingConfig"] == {"Strategy": "LendAndBorrow", "BorrowLimit": 50}


def test_absolute_borrow_limits_are_set_and_removed():
    current = q.current_settings(described())
    limits = [{"instance_type": "ml.p5.48xlarge", "count": 2}]
    desired = q.desired_settings(params(resources=None, absolute_borrow_limits=limits), current)
    assert desired["ComputeQuotaConfig"]["ResourceSharingConfig"]["AbsoluteBorrowLimits"] == [{"InstanceType": "ml.p5.48xlarge", "Count": 2}]
    with_limits = q.current_settings(described(ComputeQuotaConfig=desired["ComputeQuotaConfig"]))
    removed = q.desired_settings(params(resources=None, absolute_borrow_limits=[]), with_limits)
    assert "AbsoluteBorrowLimits" not in removed["ComputeQuotaConfig"]["ResourceSharingConfig"]


@pytest.mark.parametrize(
    "overrides, fragment",
    [
        ({"team": "Vision"}, "team 'Vision'"),
        ({"team": "a" * 41}, "at most 40"),
        ({"resources": []}, "at least one instance type"),
        ({"resources": None}, "resources is required"),
        ({"resources": [{"instance_type": "ml.p5.48xlarge"}]}, "give count, or accelerators"),
        ({"resources": [{"instance_type": "ml.p5.48xlarge", "count": 1, "accelerators": 2}]}, "cannot be combined with accelerators"),
        ({"resources": [{"instance_type": "ml.p5.48xlarge", "count": -1}]}, "outside 0..10000000"),
        ({"resources": [{"instance_type": "ml.p5.48xlarge", "count": 1}, {"instance_type": "ml.p5.48xlarge", "count": 1}]}, "listed twice"),
        ({"resources": [{"instance_type": "ml.x1.huge", "count": 1}]}, "not a HyperPod instance type"),
        ({"resources": [{"instance_type": "ml.p5.48xlarge", "accelerator_partition": {"type": "mig-9g", "count": 1}}]}, "not a MIG profile"),
        ({"resources": [{"instance_type": "ml.p%d.48xlarge" % i, "count": 1} for i in range(16)]}, "at most 15"),
        ({"borrow_limit": 501}, "borrow_limit: 501 is outside 1..500"),
        ({"borrow_limit": 0}, "borrow_limit: 0 is outside 1..500"),
        ({"borrow_limit": -1}, "borrow_limit: -1 is outside"),
        ({"fair_share_weight": 101}, "fair_share_weight: 101 is outside 0..100"),
        ({"sharing": "lend", "borrow_limit": 20}, "borrow_limit applies only to sharing lend_and_borrow"),
        ({"sharing": "dont_lend", "absolute_borrow_limits": [{"instance_type": "ml.p5.48xlarge", "count": 1}]}, "absolute_borrow_limits applies only"),
        ({"description": "x" * 1025}, "longer than 1024"),
    ],
)
def test_input_problems_name_the_option(overrides, fragment):
    instance_types = ["ml.p5.48xlarge", "ml.g5.12xlarge"] + ["ml.p%d.48xlarge" % i for i in range(16)]
    problems = q.input_problems(params(**overrides), None, instance_types, ["mig-1g.10gb"])
    assert any(fragment in p for p in problems), problems


def test_valid_input_has_no_problems():
    assert q.input_problems(params(borrow_limit=100, fair_share_weight=100), None, ["ml.p5.48xlarge"], []) == []


def test_borrow_limit_is_checked_against_the_strategy_in_force():
    lend = q.current_settings(described(ComputeQuotaConfig={"ResourceSharingConfig": {"Strategy": "Lend"}}))
    assert q.input_problems(params(resources=None, borrow_limit=10), lend)
    assert q.input_problems(params(resources=None, borrow_limit=10, sharing="lend_and_borrow"), lend) == []


def test_absent_needs_only_a_valid_team():
    assert q.input_problems(params(state="absent", resources=None, borrow_limit=99999)) == []


@pytest.mark.parametrize(
    "groups, expected",
    [
        ([{"InstanceType": "ml.p5.48xlarge", "TargetCount": 8, "CurrentCount": 6}], {"ml.p5.48xlarge": 8}),
        (
            [{"InstanceType": "ml.p5.48xlarge", "TargetCount": 4, "CurrentCount": 4}, {"InstanceType": "ml.p5.48xlarge", "TargetCount": 2, "CurrentCount": 0},
             {"InstanceType": "ml.g5.12xlarge", "TargetCount": 6, "CurrentCount": 6}],
            {"ml.p5.48xlarge": 6, "ml.g5.12xlarge": 6},
        ),
        ([], {}),
        # A flexible group (InstanceRequirements) counts for each type it allows.
        (
            [{"InstanceRequirements": {"DesiredInstanceTypes": ["ml.p5.48xlarge", "ml.p5en.48xlarge"], "CurrentInstanceTypes": ["ml.p5.48xlarge"]},
              "TargetCount": 4, "CurrentCount": 4},
             {"InstanceType": "ml.p5.48xlarge", "TargetCount": 2, "CurrentCount": 2}],
            {"ml.p5.48xlarge": 6, "ml.p5en.48xlarge": 4},
        ),
    ],
)
def test_cluster_capacity_adds_target_counts_per_type(groups, expected):
    assert q.cluster_capacity({"InstanceGroups": groups}) == expected


def settings_for(team, counts, activation="enabled"):
    resources = [{"instance_type": t, "count": n} for t, n in counts.items()]
    return q.desired_settings(params(team=team, resources=resources, activation=activation))


CAPACITY = {"ml.p5.48xlarge": 8, "ml.g5.12xlarge": 6}


@pytest.mark.parametrize(
    "ours, others, expected",
    [
        ({"ml.p5.48xlarge": 4}, {"nlp": {"ml.p5.48xlarge": 3}}, []),
        ({"ml.p5.48xlarge": 5}, {"nlp": {"ml.p5.48xlarge": 3}}, []),  # exactly full
        (
            {"ml.p5.48xlarge": 6},
            {"nlp": {"ml.p5.48xlarge": 3, "ml.g5.12xlarge": 2}, "research": {"ml.g5.12xlarge": 4}},
            ["ml.p5.48xlarge: team vision 6 + nlp 3 = 9 exceeds the 8 instances of cluster ml-shared"],
        ),
        (
            {"ml.g5.12xlarge": 1},
            {"nlp": {"ml.g5.12xlarge": 2}, "research": {"ml.g5.12xlarge": 4}},
            ["ml.g5.12xlarge: team vision 1 + nlp 2 + research 4 = 7 exceeds the 6 instances of cluster ml-shared"],
        ),
        ({"ml.c5.large": 1}, {}, ["cluster ml-shared has no ml.c5.large instances (it has ml.g5.12xlarge x6, ml.p5.48xlarge x8)"]),
        ({"ml.p5.48xlarge": 9}, {}, ["ml.p5.48xlarge: team vision 9 = 9 exceeds the 8 instances of cluster ml-shared"]),
    ],
)
def test_capacity_problems_name_the_teams_and_numbers(ours, others, expected):
    others = {team: q.guaranteed_counts(settings_for(team, counts)) for team, counts in others.items()}
    assert q.capacity_problems("ml-shared", CAPACITY, settings_for("vision", ours), others) == expected


def settings_with(team, *resources):
    return q.desired_settings(params(team=team, resources=[dict(r) for r in resources]))


FINE_GRAINED = [
    # 4 instances + 33 GPUs of 8 per instance: 4 + 4.125 of 8.
    ({"instance_type": "ml.p5.48xlarge", "accelerators": 33}, ["ml.p5.48xlarge: team vision 4.12 + nlp 4 = 8.12 exceeds the 8 instances of cluster ml-shared"]),
    ({"instance_type": "ml.p5.48xlarge", "accelerators": 32}, []),
    ({"instance_type": "ml.p5.48xlarge", "vcpu": 769}, ["ml.p5.48xlarge: team vision 4.01 + nlp 4 = 8.01 exceeds the 8 instances of cluster ml-shared"]),
    ({"instance_type": "ml.p5.48xlarge", "memory_gib": 8192}, []),
    # 28 slices of a seventh of a GPU are 4 GPUs, half an instance: 4 + 0.5 + the other 3.5.
    ({"instance_type": "ml.p5.48xlarge", "accelerator_partition": {"type": "mig-1g.10gb", "count": 28}}, []),
    ({"instance_type": "ml.p5.48xlarge", "accelerator_partition": {"type": "mig-1g.10gb", "count": 29}},
     ["ml.p5.48xlarge: team vision 0.52 + nlp 4 + research 3.50 = 8.02 exceeds the 8 instances of cluster ml-shared"]),
    ({"instance_type": "ml.g5.12xlarge", "accelerator_partition": {"type": "mig-1g.10gb", "count": 1}},
     ["ml.g5.12xlarge: 'mig-1g.10gb' is not a MIG profile of ml.g5.12xlarge (its profiles: none: NVIDIA A10G cannot be partitioned)"]),
]


@pytest.mark.parametrize("ours, expected", FINE_GRAINED, ids=[str(case[0]) for case in FINE_GRAINED])
def test_fine_grained_quotas_count_as_the_instances_they_take(ours, expected):
    """Threat model: (a) issue 36, case 6 (a team takes capacity another team was guaranteed): at run time the quota
    layer added up ``count`` only, so a quota of GPUs, vCPUs, memory or MIG slices fitted beside any others."""
    others = {"nlp": q.guaranteed_counts(settings_for("nlp", {"ml.p5.48xlarge": 4}))}
    if "accelerator_partition" in ours and ours["instance_type"] == "ml.p5.48xlarge":
        others = {"nlp": others["nlp"], "research": q.guaranteed_counts(settings_with("research", {"instance_type": "ml.p5.48xlarge", "accelerators": 28}))}
        assert others["research"] == {"ml.p5.48xlarge": 3.5}
    assert q.capacity_problems("ml-shared", CAPACITY, settings_with("vision", ours), others) == expected


def test_others_fractions_add_up_to_the_whole_they_are():
    """Seven teams with one seventh of a GPU each, rounded to 6 decimals on the way, fill one GPU and no more."""
    slice_ = {"instance_type": "ml.p5.48xlarge", "accelerator_partition": {"type": "mig-1g.10gb", "count": 1}}
    others = dict(("t%d" % index, q.guaranteed_counts(settings_with("t%d" % index, slice_))) for index in range(6))
    others["nlp"] = q.guaranteed_counts(settings_for("nlp", {"ml.p5.48xlarge": 7}))
    others["full"] = q.guaranteed_counts(settings_with("full", {"instance_type": "ml.p5.48xlarge", "accelerators": 7}))
    assert q.capacity_problems("ml-shared", CAPACITY, settings_with("vision", slice_), others) == []


def test_disabled_quotas_guarantee_nothing():
    assert q.guaranteed_counts(settings_for("nlp", {"ml.p5.48xlarge": 8}, activation="disabled")) == {}
    full = {"nlp": q.guaranteed_counts(settings_for("nlp", {"ml.p5.48xlarge": 8}))}
    assert full == {"nlp": {"ml.p5.48xlarge": 8}}
    assert q.capacity_problems("ml-shared", CAPACITY, settings_for("vision", {"ml.p5.48xlarge": 8}, activation="disabled"), full) == []


# ---------------------------------------------------------------- the manager against a stub client


def conflict(operation="UpdateComputeQuota"):
    return ClientError({"Error": {"Code": "ConflictException", "Message": "version mismatch"}}, operation)


class Pages:
    def __init__(self, key, items):
        self.result = {key: items}

    def paginate(self, **_kwargs):
        return self

    def build_full_result(self):
        return self.result


class StubSageMaker:
    """Just enough of a SageMaker client: one cluster, one quota of team vision, scripted update failures."""

    def __init__(self, quota, update_failures=(), after_failure=None):
        self.quota = quota
        self.update_failures = list(update_failures)
        self.after_failure = after_failure  # what another writer did before the failure
        self.updates = []

    def describe_cluster(self, ClusterName):
        self.cluster_reads = getattr(self, "cluster_reads", 0) + 1
        return {"ClusterArn": CLUSTER_ARN, "ClusterName": "ml-shared", "InstanceGroups": [{"InstanceType": "ml.p5.48xlarge", "TargetCount": 8}]}

    def get_paginator(self, name):
        if name == "list_compute_quotas":
            return Pages("ComputeQuotaSummaries", [copy.deepcopy(self.quota)] if self.quota else [])
        return Pages("Tags", [{"Key": "team", "Value": "vision"}, {"Key": "managed-by", "Value": "hyperpod.tenancy"}])

    def describe_compute_quota(self, ComputeQuotaId):
        return copy.deepcopy(self.quota)

    def update_compute_quota(self, **request):
        self.updates.append(request)
        if self.update_failures:
            if self.after_failure:
                self.after_failure(self.quota)
            raise self.update_failures.pop(0)
        assert request["TargetVersion"] == self.quota["ComputeQuotaVersion"]
        self.quota["ComputeQuotaVersion"] += 1
        for key in ("ComputeQuotaConfig", "ComputeQuotaTarget", "ActivationState", "Description"):
            if key in request:
                self.quota[key] = request[key]
        return {"ComputeQuotaArn": self.quota["ComputeQuotaArn"], "ComputeQuotaVersion": self.quota["ComputeQuotaVersion"]}


def other_writer_sets_description(quota):
    quota["ComputeQuotaVersion"] += 1
    quota["Description"] = "set by someone else"


def test_a_version_conflict_is_read_again_and_retried_once():
    client = StubSageMaker(described(), update_failures=[conflict()], after_failure=other_writer_sets_description)
    manager = q.QuotaManager(client, params(fair_share_weight=40))
    changed, before, after, result = converged(manager)
    assert changed
    assert [u["TargetVersion"] for u in client.updates] == [3, 4]
    # The retry is computed from what the other writer left: its description stays.
    assert client.updates[1]["Description"] == "set by someone else"
    assert result["compute_quota_target"] == {"team_name": "vision", "fair_share_weight": 40}
    assert result["compute_quota_version"] == 5
    assert before["compute_quota_target"]["fair_share_weight"] == 0
    assert after["compute_quota_target"]["fair_share_weight"] == 40


def test_a_second_conflict_fails_with_conflict_error():
    client = StubSageMaker(described(), update_failures=[conflict(), conflict()], after_failure=other_writer_sets_description)
    with pytest.raises(ConflictError, match="changed again"):
        converged(q.QuotaManager(client, params(fair_share_weight=40)))
    assert len(client.updates) == 2


def test_no_retry_when_the_other_writer_already_made_our_change():
    def other_writer_does_our_change(quota):
        quota["ComputeQuotaVersion"] += 1
        quota["ComputeQuotaTarget"] = {"TeamName": "vision", "FairShareWeight": 40}

    client = StubSageMaker(described(), update_failures=[conflict()], after_failure=other_writer_does_our_change)
    changed, _before, _after, result = converged(q.QuotaManager(client, params(fair_share_weight=40)))
    assert changed and len(client.updates) == 1
    assert result["compute_quota_target"]["fair_share_weight"] == 40


def test_other_errors_are_not_retried():
    client = StubSageMaker(described(), update_failures=[ClientError({"Error": {"Code": "ValidationException", "Message": "no"}}, "UpdateComputeQuota")])
    with pytest.raises(HyperPodError) as excinfo:
        converged(q.QuotaManager(client, params(fair_share_weight=40)))
    assert not isinstance(excinfo.value, ConflictError)
    assert len(client.updates) == 1


def test_check_mode_predicts_without_writing():
    client = StubSageMaker(described())
    changed, before, after, result = converged(q.QuotaManager(client, params(borrow_limit=80), check_mode=True))
    assert changed and client.updates == []
    assert after["compute_quota_config"]["resource_sharing_config"] == {"strategy": "LendAndBorrow", "borrow_limit": 80}
    assert result["compute_quota_config"]["resource_sharing_config"]["borrow_limit"] == 80


def test_unchanged_quota_makes_no_call():
    client = StubSageMaker(described())
    changed, before, after, _result = converged(q.QuotaManager(client, params()))
    assert not changed and before == after and client.updates == []


class ListingCounted(StubSageMaker):
    """The stub, recording its listings and descriptions in order (``calls``); a quota of another id is not found."""

    def __init__(self, quota):
        super(ListingCounted, self).__init__(quota)
        self.calls = []

    def get_paginator(self, name):
        self.calls.append(name)
        return super(ListingCounted, self).get_paginator(name)

    def update_compute_quota(self, **request):
        self.calls.append("update")
        return super(ListingCounted, self).update_compute_quota(**request)

    def describe_compute_quota(self, ComputeQuotaId):  # noqa: N803 - botocore's name
        self.calls.append(("describe", ComputeQuotaId))
        if ComputeQuotaId != self.quota["ComputeQuotaId"]:
            raise ClientError({"Error": {"Code": "ResourceNotFound", "Message": "no quota %s" % ComputeQuotaId}}, "DescribeComputeQuota")
        return copy.deepcopy(self.quota)


# shared_info's listing of the cluster's quotas: vision's quota, and 4 p5 instances the other quotas guarantee.
LISTED = {"compute_quota_id": "q1q1q1q1q1q1", "others_guaranteed": {"ml.p5.48xlarge": 4}}


def test_a_run_that_changes_nothing_takes_the_runs_listing_of_the_quotas_instead_of_listing_them_again():
    client = ListingCounted(described())
    changed, before, after, _result = converged(q.QuotaManager(client, params(known={"listing": LISTED})))
    assert not changed and before == after and client.updates == []
    assert "list_compute_quotas" not in client.calls


@pytest.mark.parametrize(
    "overrides, listed",
    [
        # The listing says the cluster would be over-full (4 + 5 > 8): the refusal comes from a fresh listing, which here fits.
        ({}, dict(LISTED, others_guaranteed={"ml.p5.48xlarge": 5})),
        # A change is checked against the quotas as they are now, not as the run listed them.
        ({"fair_share_weight": 40}, LISTED),
        # The listing was of another quota of the team.
        ({}, dict(LISTED, compute_quota_id="q2q2q2q2q2q2")),
    ],
    ids=["listed-over-full", "settings-change", "another-quota"],
)
def test_the_quotas_are_listed_again_when_the_runs_listing_does_not_tell_that_nothing_changes(overrides, listed):
    client = ListingCounted(described())
    changed, _before, _after, _result = converged(q.QuotaManager(client, params(known={"listing": listed}, **overrides)))
    assert client.calls.count("list_compute_quotas") == 1
    assert changed == bool(overrides) and len(client.updates) == int(bool(overrides))
    # Before any write the quota is described once, and again after the listing only when that found another quota.
    planning = client.calls[:client.calls.index("update")] if "update" in client.calls else client.calls
    listing = planning.index("list_compute_quotas")
    assert [call for call in planning[:listing] if call != "list_tags"] == [("describe", listed["compute_quota_id"])]
    found_another = listed["compute_quota_id"] != client.quota["ComputeQuotaId"]
    assert [call for call in planning[listing + 1:] if call != "list_tags"] == ([("describe", client.quota["ComputeQuotaId"])] if found_another else [])


def test_failed_status_is_reported_with_its_reason():
    client = StubSageMaker(described())

    def fail(**request):
        client.quota["ComputeQuotaVersion"] += 1
        client.quota["Status"] = "UpdateFailed"
        client.quota["FailureReason"] = "Kueue rejected the ClusterQueue"
        return {"ComputeQuotaArn": client.quota["ComputeQuotaArn"], "ComputeQuotaVersion": client.quota["ComputeQuotaVersion"]}

    client.update_compute_quota = fail
    with pytest.raises(HyperPodError, match="UpdateFailed: Kueue rejected the ClusterQueue"):
        converged(q.QuotaManager(client, params(fair_share_weight=5)))


def test_over_capacity_is_refused_before_any_write():
    client = StubSageMaker(None)
    with pytest.raises(InputError, match="team vision 9 = 9 exceeds the 8 instances"):
        converged(q.QuotaManager(client, params(resources=[{"instance_type": "ml.p5.48xlarge", "count": 9}])))
    assert client.updates == []


def test_a_quota_still_being_deleted_is_waited_for_before_creating():
    client = StubSageMaker(described(Status="Deleting"))
    describes = []

    def describe(ComputeQuotaId):
        describes.append(ComputeQuotaId)
        if ComputeQuotaId == "q1q1q1q1q1q1":
            raise ClientError({"Error": {"Code": "ResourceNotFound", "Message": "gone"}}, "DescribeComputeQuota")
        return described(ComputeQuotaId="n2n2n2n2n2n2", ComputeQuotaVersion=1, Status="Created")

    def create(**request):
        client.created = request
        return {"ComputeQuotaId": "n2n2n2n2n2n2", "ComputeQuotaArn": "arn:aws:sagemaker:us-east-1:123456789012:compute-quota/n2n2n2n2n2n2"}

    client.describe_compute_quota = describe
    client.create_compute_quota = create
    changed, before, _after, result = converged(q.QuotaManager(client, params()))
    assert changed and before == {}
    assert describes[0] == "q1q1q1q1q1q1"  # waited for the old one to be gone first
    assert client.created["Name"] == "hyperpod-vision-quota"
    assert result["compute_quota_id"] == "n2n2n2n2n2n2"


def test_a_deleted_quota_still_listed_is_not_waited_for_and_a_new_one_is_created():
    """AWS may keep a deleted quota listed and described with status Deleted: re-onboarding creates a new one at once."""
    client = StubSageMaker(described(Status="Deleted"))
    describes = []
    describe = client.describe_compute_quota

    def create(**request):
        client.created = request
        return {"ComputeQuotaId": "n2n2n2n2n2n2", "ComputeQuotaArn": "arn:aws:sagemaker:us-east-1:123456789012:compute-quota/n2n2n2n2n2n2"}

    def describe_new(ComputeQuotaId):
        describes.append(ComputeQuotaId)
        if ComputeQuotaId == "n2n2n2n2n2n2":
            return described(ComputeQuotaId="n2n2n2n2n2n2", ComputeQuotaVersion=1, Status="Created")
        return describe(ComputeQuotaId=ComputeQuotaId)

    client.create_compute_quota = create
    client.describe_compute_quota = describe_new
    changed, before, _after, result = converged(q.QuotaManager(client, params(wait_timeout=1)))
    assert changed and before == {} and client.created["Name"] == "hyperpod-vision-quota"
    assert "q1q1q1q1q1q1" not in describes and result["compute_quota_id"] == "n2n2n2n2n2n2"


@pytest.mark.parametrize("after_delete", ["gone", "Deleted"])
def test_absent_ends_when_the_quota_is_gone_or_listed_as_deleted(after_delete):
    client = StubSageMaker(described())
    deleted = []
    describe = client.describe_compute_quota

    def delete_compute_quota(ComputeQuotaId):
        deleted.append(ComputeQuotaId)

    def describe_after(ComputeQuotaId):
        if ComputeQuotaId in deleted:
            if after_delete == "gone":
                raise ClientError({"Error": {"Code": "ResourceNotFound", "Message": "gone"}}, "DescribeComputeQuota")
            return dict(describe(ComputeQuotaId=ComputeQuotaId), Status="Deleted")
        return describe(ComputeQuotaId=ComputeQuotaId)

    client.delete_compute_quota = delete_compute_quota
    client.describe_compute_quota = describe_after
    changed, unused, after, unused_result = converged(q.QuotaManager(client, params(state="absent", resources=None, wait_timeout=2)))
    assert changed and deleted == ["q1q1q1q1q1q1"] and after == {}


def test_absent_with_a_bad_team_name_fails_before_any_call():
    class NoCalls:
        def __getattr__(self, name):
            raise AssertionError("called %s" % name)

    with pytest.raises(InputError, match="team 'Vision'"):
        converged(q.QuotaManager(NoCalls(), params(state="absent", team="Vision")))


def test_absent_deletes_only_this_teams_quota():
    client = StubSageMaker(described())
    deleted = []

    def delete_compute_quota(ComputeQuotaId):
        deleted.append(ComputeQuotaId)

    client.delete_compute_quota = delete_compute_quota
    client.get_paginator = lambda name: Pages(
        "ComputeQuotaSummaries" if name == "list_compute_quotas" else "Tags",
        [described(), described(ComputeQuotaId="n2n2n2n2n2n2", Name="hyperpod-nlp-quota", ComputeQuotaTarget={"TeamName": "nlp"})]
        if name == "list_compute_quotas" else [{"Key": "team", "Value": "vision"}, {"Key": "managed-by", "Value": "hyperpod.tenancy"}],
    )
    describe = client.describe_compute_quota

    def describe_until_deleted(ComputeQuotaId):
        if ComputeQuotaId in deleted:
            raise ClientError({"Error": {"Code": "ResourceNotFound", "Message": "gone"}}, "DescribeComputeQuota")
        return describe(ComputeQuotaId=ComputeQuotaId)

    client.describe_compute_quota = describe_until_deleted
    changed, before, after, _result = converged(q.QuotaManager(client, params(state="absent", resources=None)))
    assert changed and deleted == ["q1q1q1q1q1q1"]
    assert before["compute_quota_target"]["team_name"] == "vision" and after == {}


# ---------------------------------------------------------------- capacity given: the cluster is not described

P5_ONLY = {"ml.p5.48xlarge": 8}


@pytest.mark.parametrize(
    "overrides, expected, problem",
    [
        ({}, None, None),
        ({"cluster_capacity": {"ml.p5.48xlarge": 8, "ml.g5.12xlarge": "2"}}, {"ml.p5.48xlarge": 8, "ml.g5.12xlarge": 2}, None),
        ({"cluster_capacity": {}}, {}, None),
        ({"cluster_capacity": P5_ONLY, "cluster": "ml-shared"}, P5_ONLY, "must be the cluster's ARN when cluster_capacity is given"),
        ({"cluster_capacity": {"ml.p5.48xlarge": -1}}, {}, "cluster_capacity.ml.p5.48xlarge: -1 is not a whole number"),
        ({"cluster_capacity": {"ml.p5.48xlarge": True}}, {}, "is not a whole number"),
        ({"cluster_capacity": {"ml.p5.48xlarge": 1.5}}, {}, "is not a whole number"),
    ],
)
def test_given_capacity(overrides, expected, problem):
    capacity, problems = q.given_capacity(params(**dict({"cluster": CLUSTER_ARN}, **overrides)))
    assert capacity == expected
    assert (problems == []) if problem is None else any(problem in p for p in problems)


def test_a_given_capacity_replaces_describe_cluster():
    client = StubSageMaker(described())
    changed, before, after, _result = converged(q.QuotaManager(client, params(cluster=CLUSTER_ARN, cluster_capacity=P5_ONLY)))
    assert not changed and before == after
    assert getattr(client, "cluster_reads", 0) == 0


@pytest.mark.parametrize(
    "resources, message",
    [
        ([{"instance_type": "ml.p5.48xlarge", "count": 9}], "ml.p5.48xlarge: team vision 9 = 9 exceeds the 8 instances of cluster " + CLUSTER_ARN),
        ([{"instance_type": "ml.g5.12xlarge", "count": 1}], "cluster %s has no ml.g5.12xlarge instances \\(it has ml.p5.48xlarge x8\\)" % CLUSTER_ARN),
    ],
)
def test_a_given_capacity_still_refuses_before_any_write(resources, message):
    client = StubSageMaker(None)
    with pytest.raises(InputError, match=message):
        converged(q.QuotaManager(client, params(cluster=CLUSTER_ARN, cluster_capacity=P5_ONLY, resources=resources)))
    assert client.updates == [] and getattr(client, "cluster_reads", 0) == 0


def test_a_given_capacity_needs_the_cluster_arn_before_any_call():
    class NoCalls:
        def __getattr__(self, name):
            raise AssertionError("called %s" % name)

    with pytest.raises(InputError, match="must be the cluster's ARN"):
        converged(q.QuotaManager(NoCalls(), params(cluster="ml-shared", cluster_capacity=P5_ONLY)))


def test_check_mode_with_a_given_capacity_predicts_the_same_as_with_describe_cluster():
    described_run = converged(q.QuotaManager(StubSageMaker(described()), params(borrow_limit=80), check_mode=True))
    given = params(borrow_limit=80, cluster=CLUSTER_ARN, cluster_capacity=P5_ONLY)
    given_run = converged(q.QuotaManager(StubSageMaker(described()), given, check_mode=True))
    assert given_run == described_run


class TagCounting(StubSageMaker):
    """The stub, counting the quota's tag lists."""

    tag_reads = 0

    def get_paginator(self, name):
        if name == "list_tags":
            self.tag_reads += 1
        return super().get_paginator(name)


def test_tags_read_earlier_in_the_run_spare_list_tags_and_a_tag_to_change_is_read_again():
    quota = described()
    marked = {"team": "vision", "managed-by": "hyperpod.tenancy"}

    def run(known_tags):
        client = TagCounting(copy.deepcopy(quota))
        # tags={} with purge_tags: the quota's tags are to be exactly the team's.
        changed = converged(q.QuotaManager(client, params(tags={}, known={"tags": known_tags}), warn=lambda _m: None))[0]
        return changed, client.tag_reads

    assert run(None) == (False, 1)
    assert run({quota["ComputeQuotaId"]: marked}) == (False, 0)
    # A copy with a tag the run would remove: the tags are listed again and the writes planned from them (none).
    assert run({quota["ComputeQuotaId"]: dict(marked, stale="x")}) == (False, 1)
    # Tags of another quota (one made again since) are not taken.
    assert run({"other-id": marked}) == (False, 1)
