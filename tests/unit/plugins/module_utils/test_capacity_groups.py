"""Guarantees counted against autoscaling, flexible and MIG-partitioned instance groups (issue 38).

Before: an autoscaling group (AWS has it start at 0 nodes) refused every whole-instance quota ("exceeds the 0
instances"), a flexible group (InstanceRequirements) contributed nothing, and no group could say how its GPUs are cut.
Now an autoscaling group counts by ``max_count``, a flexible group by each type it allows with its instances counted
once across them, and a group's ``mig_config`` (the ``nvidia.com/mig.config`` label) decides which guarantees it holds.
"""

from __future__ import annotations

import copy

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import chargeback, engine, instance_types, quota
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_model import check_team_file

from tests.unit.plugins.module_utils import test_quota as quota_stub

P5, P5E, G5 = "ml.p5.48xlarge", "ml.p5e.48xlarge", "ml.g5.12xlarge"


def cluster(*groups, autoscaling=None):
    found = {"name": "ml-shared", "instance_groups": [dict(group) for group in groups],
             "scheduler": {"priority_classes": [{"name": "training", "weight": 50}]}}
    if autoscaling is not None:
        found["autoscaling"] = autoscaling
    return found


def team(name, *resources):
    return {"name": name, "identity_center_group": "Team" + name.capitalize(), "quota": {"resources": [dict(r) for r in resources]}}


def problems_of(spec, *teams):
    return check_team_file(copy.deepcopy(list(teams)), copy.deepcopy(spec), "hyperpod")[0]


def capacity_problems(spec, *teams):
    return [problem for problem in problems_of(spec, *teams) if "quota.resources" in problem]


def cluster_problems(spec):
    return [problem for problem in problems_of(spec) if problem.startswith("cluster: instance_groups") or problem.startswith("cluster: autoscaling")]


# ---------------------------------------------------------------- autoscaling

AUTOSCALING = cluster({"name": "p5", "instance_type": P5, "count": 0, "max_count": 4}, autoscaling=True)


def test_an_autoscaling_group_counts_by_the_most_it_may_scale_to():
    """Threat model: (a) issue 36, case 6: a group at 0 nodes refused every quota; counted by its count it would hold
    nothing, counted by nothing it would hold everything. By max_count: 4 instances fit, a fifth is refused naming both
    teams."""
    assert capacity_problems(AUTOSCALING, team("vision", {"instance_type": P5, "count": 3}), team("nlp", {"instance_type": P5, "count": 1})) == []
    assert capacity_problems(AUTOSCALING, team("vision", {"instance_type": P5, "count": 3}), team("nlp", {"instance_type": P5, "count": 2})) == [
        "teams: quota.resources: guaranteed ml.p5.48xlarge total 5 (vision 3, nlp 2) but the cluster has 4"]
    assert instance_types.cluster_capacity(AUTOSCALING["instance_groups"]) == {P5: 4}


@pytest.mark.parametrize(
    "group, autoscaling, expected",
    [
        ({"count": 0}, True, "cluster: instance_groups[0].max_count: is required when the cluster autoscales"),
        ({"count": 2, "max_count": 4}, True, "cluster: instance_groups[0].count: must be 0 when the cluster autoscales"),
        ({"count": 0, "max_count": 0}, True, "cluster: instance_groups[0].max_count: 0 must be"),
        ({"count": 4, "max_count": 8}, None, "cluster: instance_groups[0].max_count: is read only when the cluster autoscales"),
        ({"count": 0, "max_count": 4}, "yes", "cluster: autoscaling: 'yes' must be true or false (unquoted)"),
        ({"count": 0, "max_count": 4, "node_recovery": "none"}, True, "cluster: autoscaling: auto_scaling: needs node_recovery: automatic"),
    ],
)
def test_an_autoscaling_cluster_file_is_checked(group, autoscaling, expected):
    recovery = group.pop("node_recovery", None)
    spec = cluster(dict({"name": "p5", "instance_type": P5}, **group), autoscaling=autoscaling)
    if recovery:
        spec["node_recovery"] = recovery
    problems = cluster_problems(spec)
    assert any(problem.startswith(expected) for problem in problems), problems


def test_the_run_counts_an_autoscaling_group_by_its_limit_not_by_where_karpenter_has_it():
    """The quota layer's capacity at run time (shared_info's cluster_capacity): TargetCount 0 while scaled down."""
    described = {"InstanceGroups": [
        {"InstanceGroupName": "p5", "InstanceType": P5, "TargetCount": 0, "CurrentCount": 0},
        {"InstanceGroupName": "g5", "InstanceType": G5, "TargetCount": 2, "CurrentCount": 2},
    ]}
    assert quota.cluster_capacity(described) == {P5: 0, G5: 2}
    assert quota.cluster_capacity(described, {"p5": 4}) == {P5: 4, G5: 2}


class ScaledDownCluster(quota_stub.StubSageMaker):
    """An autoscaling cluster Karpenter has at 0 nodes, with no quota yet; a create stops the run, recorded."""

    def __init__(self):
        super().__init__(None)
        self.creates = []

    def describe_cluster(self, ClusterName):
        return {"ClusterArn": quota_stub.CLUSTER_ARN, "ClusterName": "ml-shared",
                "InstanceGroups": [{"InstanceGroupName": "p5", "InstanceType": P5, "TargetCount": 0, "CurrentCount": 0}]}

    def create_compute_quota(self, **request):
        self.creates.append(request)
        raise RuntimeError("stop after the capacity check: the create is what it let through")


def test_the_quota_layer_that_describes_the_cluster_itself_counts_by_the_limit_too():
    """The run that creates the cluster: shared_info read no capacity, so each quota layer describes the cluster (at 0
    nodes) and would refuse every guarantee ("exceeds the 0 instances") without the limits shared_info hands on."""
    options = quota_stub.params(resources=[{"instance_type": P5, "count": 2}], adopt=False)
    with pytest.raises(InputError, match="exceeds the 0 instances"):
        engine.converge(quota.QuotaManager(ScaledDownCluster(), options), "present")
    client = ScaledDownCluster()
    with pytest.raises(RuntimeError, match="stop after the capacity check"):
        engine.converge(quota.QuotaManager(client, dict(options, scale_limits={"p5": 4})), "present")
    assert client.creates[0]["ComputeQuotaConfig"]["ComputeQuotaResources"] == [{"InstanceType": P5, "Count": 2}]


# ---------------------------------------------------------------- flexible groups

FLEXIBLE = cluster({"name": "flex", "instance_types": [P5, P5E], "count": 4}, {"name": "g5", "instance_type": G5, "count": 2})


def test_a_flexible_group_holds_a_quota_of_each_type_it_allows():
    """Before, a quota of ml.p5e.48xlarge on this cluster was refused: "the cluster has no ml.p5e.48xlarge"."""
    assert capacity_problems(FLEXIBLE, team("vision", {"instance_type": P5E, "count": 4})) == []
    assert capacity_problems(FLEXIBLE, team("vision", {"instance_type": P5, "count": 2}), team("nlp", {"instance_type": P5E, "count": 2})) == []
    assert instance_types.cluster_capacity(FLEXIBLE["instance_groups"]) == {P5: 4, P5E: 4, G5: 2}


def test_a_flexible_groups_instances_count_once_across_its_types():
    """Threat model: (a) issue 36, case 6: each type alone fits the group of 4 (3 and 2), both together take 5 of its
    4 instances: one team's guarantee would be capacity the cluster also promised the other."""
    problems = capacity_problems(FLEXIBLE, team("vision", {"instance_type": P5, "count": 3}), team("nlp", {"instance_type": P5E, "accelerators": 16}))
    assert problems == [
        "teams: quota.resources: guaranteed ml.p5.48xlarge, ml.p5e.48xlarge take 5 whole instances (vision 3, nlp 2) but the instance groups "
        "that can hold them (flex 4) have 4: the guarantees of one type and kind (whole GPUs, one MIG profile) are rounded up to whole "
        "instances, a flexible group's instances count once for all the types it allows, and a group with a MIG layout holds only its "
        "profile's partitions, no whole GPUs"
    ], problems


def test_one_instance_runs_one_type_and_one_cut_of_its_gpus():
    """Found by the red team: half a p5 and half a p5e on a flexible group of one instance, and a p5's GPUs half whole
    and half cut into slices, were accepted: an instance is of one type, and its GPUs are cut one way (all-<profile>)."""
    one_flexible = cluster({"name": "flex", "instance_types": [P5, P5E], "count": 1})
    problems = capacity_problems(one_flexible, team("vision", {"instance_type": P5, "accelerators": 4}), team("nlp", {"instance_type": P5E, "accelerators": 4}))
    assert len(problems) == 1 and "take 2 whole instances (vision 0.50, nlp 0.50)" in problems[0] and "(flex 1) have 1" in problems[0], problems
    # The same halves of one type share the instance.
    same_type = team("vision", {"instance_type": P5, "accelerators": 4}), team("nlp", {"instance_type": P5, "accelerators": 4})
    assert capacity_problems(one_flexible, *same_type) == []
    one_p5 = cluster({"name": "p5", "instance_type": P5, "count": 1})
    problems = capacity_problems(one_p5, team("vision", {"instance_type": P5, "accelerator_partition": {"type": "mig-1g.10gb", "count": 7}}),
                                 team("nlp", {"instance_type": P5, "accelerators": 7}))
    assert len(problems) == 1 and "take 2 whole instances (vision 0.12, nlp 0.88)" in problems[0], problems


def test_whole_instances_of_a_gpu_type_are_whole_gpus_a_sliced_group_cannot_hold():
    """Found by the red team (round 2): a count guarantee was placed on a group cut into slices while another team's
    whole GPUs took the plain group: 16 whole GPUs guaranteed where 8 are whole."""
    spec = cluster({"name": "plain", "instance_type": P5, "count": 1}, {"name": "sliced", "instance_type": P5, "count": 1, "mig_config": "all-1g.10gb"})
    problems = capacity_problems(spec, team("x", {"instance_type": P5, "count": 1}), team("y", {"instance_type": P5, "accelerators": 8}))
    assert len(problems) == 1 and "take 2 whole instances (x 1, y 1)" in problems[0] and "(plain 1) have 1" in problems[0], problems
    # vCPUs and memory without a GPU take any instance of the type, a sliced one too.
    assert capacity_problems(spec, team("x", {"instance_type": P5, "vcpu": 192}), team("y", {"instance_type": P5, "accelerators": 8})) == []


def test_vcpus_and_memory_fill_what_whole_gpus_leave_of_an_instance():
    """Found by the red team (round 2): rounding every kind up on its own refused 2 of a g5.12xlarge's 4 GPUs beside
    24 of its 48 vCPUs, on one instance, which fit (and were accepted before the rounding)."""
    one_g5 = cluster({"name": "g5", "instance_type": G5, "count": 1})
    assert capacity_problems(one_g5, team("x", {"instance_type": G5, "accelerators": 2}), team("y", {"instance_type": G5, "vcpu": 24})) == []
    problems = capacity_problems(one_g5, team("x", {"instance_type": G5, "accelerators": 2}), team("y", {"instance_type": G5, "vcpu": 25}))
    assert problems, "49 of 48 vCPUs"
    # But not across the types of a flexible group: half a p5's vCPUs and half a p5e's are two instances.
    one_flexible = cluster({"name": "flex", "instance_types": [P5, P5E], "count": 1})
    problems = capacity_problems(one_flexible, team("x", {"instance_type": P5, "vcpu": 96}), team("y", {"instance_type": P5E, "vcpu": 96}))
    assert len(problems) == 1 and "take 2 whole instances" in problems[0], problems


def test_a_negative_amount_is_refused_once_and_placed_nowhere():
    problems = problems_of(FLEXIBLE, team("vision", {"instance_type": P5, "accelerators": -8}))
    assert not any("instance group" in p for p in problems) and any("accelerators" in p for p in problems), problems


def test_a_type_two_groups_allow_is_placed_where_there_is_room():
    """p5 in a flexible group and a fixed one: vision's 5 p5 fit only with nlp's p5e all in the flexible group's rest."""
    spec = cluster({"name": "flex", "instance_types": [P5, P5E], "count": 4}, {"name": "p5", "instance_type": P5, "count": 2})
    assert capacity_problems(spec, team("vision", {"instance_type": P5, "count": 4}), team("nlp", {"instance_type": P5E, "count": 2})) == []
    problems = capacity_problems(spec, team("vision", {"instance_type": P5, "count": 5}), team("nlp", {"instance_type": P5E, "count": 2}))
    assert len(problems) == 1 and "take 7 whole instances (vision 5, nlp 2)" in problems[0] and "(flex 4, p5 2) have 6" in problems[0], problems


@pytest.mark.parametrize(
    "group, expected",
    [
        ({"instance_type": P5, "instance_types": [P5E]}, "cluster: instance_groups[0]: set exactly one of instance_type and instance_types, not both"),
        ({}, "cluster: instance_groups[0]: set exactly one of instance_type and instance_types (neither is set)"),
        ({"instance_types": []}, "cluster: instance_groups[0]: instance_types must list at least one instance type"),
        ({"instance_types": [P5, P5]}, "cluster: instance_groups[0]: instance_types lists an instance type twice"),
        ({"instance_types": P5}, "cluster: instance_groups[0].instance_types: 'ml.p5.48xlarge' is not a list of instance types"),
        ({"instance_types": [P5, "ml.p9.huge"]}, "cluster: instance_groups[0].instance_types: 'ml.p9.huge' is not a HyperPod instance type"),
    ],
)
def test_a_flexible_group_is_checked(group, expected):
    problems = cluster_problems(cluster(dict({"name": "flex", "count": 2}, **group)))
    assert any(problem.startswith(expected) for problem in problems), problems


# ---------------------------------------------------------------- MIG layouts

SLICED = cluster({"name": "sliced", "instance_type": P5, "count": 2, "mig_config": "all-1g.10gb"}, {"name": "whole", "instance_type": P5, "count": 1})


def test_a_mig_layout_holds_its_profiles_partitions_and_no_whole_gpus():
    """2 instances cut into 1g.10gb slices (2 x 8 GPUs x 7 = 112 slices) and 1 of whole GPUs (8)."""
    assert capacity_problems(SLICED, team("grab", {"instance_type": P5, "accelerator_partition": {"type": "mig-1g.10gb", "count": 112}}),
                             team("nlp", {"instance_type": P5, "accelerators": 8})) == []
    # Per type the 9 GPUs fit (3 instances x 8); only one instance has them whole.
    problems = capacity_problems(SLICED, team("nlp", {"instance_type": P5, "accelerators": 9}))
    assert len(problems) == 1 and "take 2 whole instances (nlp 1.12)" in problems[0] and "(whole 1) have 1" in problems[0], problems
    # A group that declares no layout is counted as it always was (a partition as its share of a GPU); a profile no
    # group can be cut into has no place at all.
    assert capacity_problems(SLICED, team("nlp", {"instance_type": P5, "accelerator_partition": {"type": "mig-3g.40gb", "count": 16}})) == []
    three_g = team("nlp", {"instance_type": P5, "accelerator_partition": {"type": "mig-3g.40gb", "count": 1}})
    problems = capacity_problems(cluster(SLICED["instance_groups"][0]), three_g)
    assert len(problems) == 1 and "but no instance group can hold them" in problems[0], problems


def test_whole_instances_and_slices_share_the_groups_exactly():
    """A whole instance on the plain group, 112 slices on the sliced pair: 3 of 3; one slice more is refused."""
    teams = [team("vision", {"instance_type": P5, "count": 1}),
             team("grab", {"instance_type": P5, "accelerator_partition": {"type": "mig-1g.10gb", "count": 112}})]
    spec = SLICED
    assert capacity_problems(spec, *teams) == []
    teams[1]["quota"]["resources"][0]["accelerator_partition"]["count"] = 113
    assert capacity_problems(spec, *teams), "113 slices and a whole instance exceed three instances"


@pytest.mark.parametrize(
    "group, expected",
    [
        ({"instance_type": P5, "mig_config": "all-balanced"}, "must be all-disabled or all-<MIG profile>"),
        ({"instance_type": P5, "mig_config": "all-1g.5gb"}, "the NVIDIA H100 80GB GPUs of ml.p5.48xlarge have no MIG profile 1g.5gb"),
        ({"instance_type": G5, "mig_config": "all-1g.10gb"}, "instance type ml.g5.12xlarge has NVIDIA A10G GPUs, which MIG cannot partition"),
        ({"instance_types": [P5, "ml.p4d.24xlarge"], "mig_config": "all-1g.10gb"}, "ml.p4d.24xlarge have no MIG profile 1g.10gb"),
    ],
)
def test_a_mig_layout_is_one_the_groups_gpus_have(group, expected):
    problems = cluster_problems(cluster(dict({"name": "gpu", "count": 2}, **group)))
    assert any(problem.startswith("cluster: instance_groups[0].mig_config: ") and expected in problem for problem in problems), problems


def test_the_chargeback_counts_the_groups_as_the_team_model_does():
    """The allocation split divides each type's cost by the same capacity the guarantees were checked against."""
    groups = [{"name": "flex", "instance_types": [P5, P5E], "count": 0, "max_count": 4}, {"name": "p5", "instance_type": P5, "count": 2}]
    capacity = instance_types.cluster_capacity(groups)
    assert capacity == {P5: 6, P5E: 4}
    teams = check_team_file([team("vision", {"instance_type": P5, "count": 3})], cluster(*groups), "hyperpod")[1]
    assert chargeback.allocation_shares(capacity, teams) == {"vision": {P5: chargeback.Decimal(3) / chargeback.Decimal(6)}}


@pytest.mark.parametrize(
    "resource, fragment",
    [
        ({"instance_type": [P5], "count": 1}, "quota.resources[0].instance_type: is required"),
        ({"instance_type": P5, "accelerator_partition": {"type": ["mig-1g.10gb"], "count": 1}}, ".type: ['mig-1g.10gb'] is not a MIG profile"),
        ({"instance_type": P5, "accelerator_partition": {"type": {"mig": 1}, "count": 1}}, "is not a MIG profile"),
        ({"instance_type": P5, "vcpu": float("nan")}, "quota.resources[0].vcpu: nan must be a number from 0 to 10000000"),
        ({"instance_type": P5, "memory_gib": float("inf")}, "quota.resources[0].memory_gib: inf must be a number from 0 to 10000000"),
    ],
)
def test_a_team_file_value_of_the_wrong_shape_is_a_problem_not_a_traceback(resource, fragment):
    """Found by the red team (before this change too): a list, a mapping, .nan or .inf where the team file wants a name
    or an amount stopped the check with a Python exception instead of naming the team and the field."""
    problems = problems_of(FLEXIBLE, team("vision", resource))
    assert any(fragment in problem for problem in problems), problems


@pytest.mark.parametrize("key", ["count", "threads_per_core"])
def test_an_infinite_group_number_is_a_problem_not_a_traceback(key):
    problems = problems_of(cluster(dict({"name": "p5", "instance_type": P5, "count": 1}, **{key: float("inf")})))
    assert any(problem.startswith("cluster: instance_groups[0].%s" % key) for problem in problems), problems


@pytest.mark.parametrize(
    "resource, fragment",
    [
        ({"instance_type": P5, "count": 10**400}, "quota.resources[0].count"),
        ({"instance_type": P5, "vcpu": 1e308}, "quota.resources[0].vcpu: 1e+308 must be a number from 0 to 10000000"),
        ({"instance_type": P5, "memory_gib": 10000001}, "quota.resources[0].memory_gib: 10000001 must be a number from 0 to 10000000"),
    ],
)
def test_amounts_beyond_what_aws_takes_are_problems_not_tracebacks(resource, fragment):
    """Found by the red team: an int too large for a float, or a vCPU amount whose ratio overflows, raised OverflowError;
    VCpuAmount and MemoryInGiBAmount stop at 10,000,000 in botocore's model, which the check now holds them to."""
    problems = problems_of(FLEXIBLE, team("vision", resource))
    assert any(fragment in problem for problem in problems), problems


def test_an_instance_group_name_of_the_wrong_shape_is_a_problem_not_a_traceback():
    problems = problems_of(cluster({"name": {"x": 1}, "instance_type": P5, "count": 1}, {"name": ["y"], "instance_type": P5, "count": 1}))
    assert sum("InstanceGroupName" in problem and "does not match the pattern" in problem for problem in problems) == 2, problems


def test_many_teams_rounded_shares_still_add_up_to_the_whole_at_run_time():
    """Found by the red team (round 2): 33 teams of two thirds of a p5 each on 22 instances pass the team check, but the
    run's check, adding the others' shares rounded to 6 decimals, refused the last team ("= 22.00 exceeds the 22")."""
    two_thirds = {"ComputeQuotaConfig": {"ComputeQuotaResources": [{"InstanceType": P5, "AcceleratorPartition": {"Type": "mig-2g.20gb", "Count": 16}}]},
                  "ActivationState": "Enabled"}
    others = dict(("team%d" % index, quota.guaranteed_counts(two_thirds)) for index in range(32))
    desired = dict(two_thirds, ComputeQuotaTarget={"TeamName": "last"})
    assert quota.capacity_problems("ml-shared", {P5: 22}, desired, others) == []
    assert quota.capacity_problems("ml-shared", {P5: 21}, desired, others) != []
