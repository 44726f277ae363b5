"""The requests plan_cluster builds for flexible instance groups, a group's MIG layout and managed autoscaling, without AWS,
and mig_config_problem, which the team model calls too."""

from __future__ import annotations

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import cluster as cl

from tests.unit.plugins.module_utils import test_cluster as base

ROLE = "arn:aws:iam::123456789012:role/HyperPodAutoscaling"
MIG = "nvidia.com/mig.config"


def plan(changes, description="default", **flags):
    return base.plan(changes, description, **flags)


def test_a_flexible_group_is_sent_as_instance_requirements_in_order_and_read_back_from_desired_types():
    flexible = base.option_group("a", None, 1, instance_types=["ml.g6e.12xlarge", "ml.g5.12xlarge"])
    created = plan({"instance_groups": [flexible]}, None)
    spec = created.request["InstanceGroups"][0]
    assert spec["InstanceRequirements"] == {"InstanceTypes": ["ml.g6e.12xlarge", "ml.g5.12xlarge"]} and "InstanceType" not in spec
    assert base.cl.request_problems(base.MODEL, "CreateCluster", created.request) == []

    described = base.described(groups=[base.described_group("a", None, 1, InstanceRequirements={
        "CurrentInstanceTypes": ["ml.g5.12xlarge"], "DesiredInstanceTypes": ["ml.g6e.12xlarge", "ml.g5.12xlarge"]})])
    del described["InstanceGroups"][0]["InstanceType"]
    assert plan({"instance_groups": [flexible]}, described).action == "none"
    reordered = plan({"instance_groups": [dict(flexible, instance_types=["ml.g5.12xlarge", "ml.g6e.12xlarge"])]}, described)
    assert reordered.action == "update"
    assert reordered.request["InstanceGroups"][0]["InstanceRequirements"] == {"InstanceTypes": ["ml.g5.12xlarge", "ml.g6e.12xlarge"]}
    assert "instance_groups[a].instance_types: ['ml.g6e.12xlarge', 'ml.g5.12xlarge'] -> ['ml.g5.12xlarge', 'ml.g6e.12xlarge']" in reordered.changes
    predicted = cl.predicted_description(reordered.after, described, "update")
    assert cl.normalize_current(predicted, {}) == reordered.after


def test_switching_between_one_type_and_a_list_needs_replacement():
    switched = plan(base.with_group(0, instance_type=None, instance_types=["ml.g5.12xlarge"]))
    assert switched.action == "refuse"
    assert "instance_groups[a].instance_types: cannot be changed in place" in switched.refusals[0]
    assert plan(base.with_group(0, instance_type=None, instance_types=["ml.g5.12xlarge"]), allow_replacement=True).action == "replace"


def test_the_mig_label_is_merged_with_the_labels_and_taints_set_outside():
    # Group a on H100s, with a label and a taint set outside the module.
    labelled_a = dict(base.LABELLED_A, InstanceType="ml.p5.48xlarge")
    description = base.described(groups=[labelled_a, base.EBS_B])
    changed = plan(base.with_group(0, instance_type="ml.p5.48xlarge", mig_config="all-1g.10gb"), description)
    assert changed.action == "update", changed.refusals
    assert base.member(changed.request, "InstanceGroups.a.KubernetesConfig") == {
        "Labels": {"tier": "gpu", MIG: "all-1g.10gb"}, "Taints": [base.TAINT]}
    assert base.member(changed.request, "InstanceGroups.b.KubernetesConfig") is None  # b's labels left alone: it has none
    assert "instance_groups[a].mig_config: None -> all-1g.10gb" in changed.changes
    assert cl.normalize_current(cl.predicted_description(changed.after, description, "update"), {}) == changed.after

    kubernetes = dict(labelled_a["KubernetesConfig"], DesiredLabels={"tier": "gpu", MIG: "all-1g.10gb"})
    description = base.described(groups=[dict(labelled_a, KubernetesConfig=kubernetes), base.EBS_B])
    assert plan(base.with_group(0, instance_type="ml.p5.48xlarge", mig_config="all-1g.10gb"), description).action == "none"
    assert plan(base.with_group(0, instance_type="ml.p5.48xlarge"), description).action == "none"  # unset: left alone
    new_b = plan({"instance_groups": [dict(base.params()["instance_groups"][0], instance_type="ml.p5.48xlarge"),
                                      dict(base.params()["instance_groups"][1], mig_config="all-disabled")]}, description)
    assert base.member(new_b.request, "InstanceGroups.b.KubernetesConfig") == {"Labels": {MIG: "all-disabled"}}
    assert base.member(new_b.request, "InstanceGroups.a.KubernetesConfig")["Labels"] == {"tier": "gpu", MIG: "all-1g.10gb"}


@pytest.mark.parametrize(
    "options, current, action, members",
    [
        ({"auto_scaling": True, "node_provisioning_mode": "continuous", "cluster_role": ROLE}, {}, "update",
         {"AutoScaling": {"Mode": "Enable", "AutoScalerType": "Karpenter"}, "NodeProvisioningMode": "Continuous", "ClusterRole": ROLE}),
        ({"auto_scaling": True, "node_provisioning_mode": "continuous"},
         {"AutoScaling": {"Mode": "Enable", "AutoScalerType": "Karpenter", "Status": "InService"}, "NodeProvisioningMode": "Continuous", "ClusterRole": ROLE},
         "none", {}),
        ({"auto_scaling": False}, {"AutoScaling": {"Mode": "Enable", "AutoScalerType": "Karpenter", "Status": "InService"},
                                   "NodeProvisioningMode": "Continuous", "ClusterRole": ROLE},
         "update", {"AutoScaling": {"Mode": "Disable", "AutoScalerType": "Karpenter"}, "NodeProvisioningMode": None, "ClusterRole": None}),
        ({"auto_scaling": False}, {}, "none", {}),
        ({"auto_scaling": True, "node_provisioning_mode": "continuous", "cluster_role": ROLE.replace("Autoscaling", "Other")},
         {"AutoScaling": {"Mode": "Enable", "AutoScalerType": "Karpenter", "Status": "InService"}, "NodeProvisioningMode": "Continuous", "ClusterRole": ROLE},
         "refuse", "cluster_role: cannot be changed while autoscaling is enabled"),
        ({"auto_scaling": True, "node_provisioning_mode": "continuous"}, {}, "refuse", "cluster_role: required with auto_scaling: true"),
        ({"auto_scaling": True, "node_provisioning_mode": "continuous", "cluster_role": ROLE}, {"NodeRecovery": "None"}, "refuse",
         "auto_scaling: needs node_recovery: automatic"),
    ],
    ids=["enable with continuous provisioning", "enabled stays", "disable", "off stays off", "role cannot change while enabled",
         "enable without a role", "enable with node recovery none"],
)
def test_autoscaling_requests(options, current, action, members):
    description = base.described(**current)
    result = plan(options, description)
    assert result.action == action, (result.refusals, result.changes)
    if action == "refuse":  # members: the reason
        assert any(members in refusal for refusal in result.refusals), result.refusals
        return
    for key, value in members.items():
        assert result.request.get(key) == value, key
    if result.request:
        assert cl.request_problems(base.MODEL, "UpdateCluster", result.request) == []
        assert cl.normalize_current(cl.predicted_description(result.after, description, action), {}) == result.after


def test_an_autoscaling_groups_count_is_left_where_karpenter_has_it():
    """The cluster file says count 0 (AWS has an autoscaling group start there); Karpenter has since scaled group b to 3:
    a run must not send InstanceCount 0 and take the nodes of running workloads away. Without autoscaling it would."""
    enabled = {"AutoScaling": {"Mode": "Enable", "AutoScalerType": "Karpenter", "Status": "InService"}, "NodeProvisioningMode": "Continuous",
               "ClusterRole": ROLE}
    description = base.described(groups=[base.described_group("a", "ml.g5.12xlarge", 0), base.described_group("b", "ml.p5.48xlarge", 3)], **enabled)
    options = {"auto_scaling": True, "node_provisioning_mode": "continuous", "cluster_role": ROLE,
               "instance_groups": [base.option_group("a", "ml.g5.12xlarge", 0), base.option_group("b", "ml.p5.48xlarge", 0)]}
    assert plan(options, description).action == "none"
    relabelled = dict(options, instance_groups=[options["instance_groups"][0], dict(options["instance_groups"][1], mig_config="all-1g.10gb")])
    updated = plan(relabelled, description)
    assert updated.action == "update" and base.member(updated.request, "InstanceGroups.b.InstanceCount") == 3, updated.changes
    manual = plan(dict(options, auto_scaling=False), description)
    assert "instance_groups[b].count: 3 -> 0" in manual.changes
    # Found by the red team (round 2): the run that turns autoscaling on sent the cluster file's count 0 with it,
    # terminating the running nodes at once; they are left to Karpenter's disruption rules.
    running = base.described(groups=[base.described_group("a", "ml.g5.12xlarge", 2), base.described_group("b", "ml.p5.48xlarge", 8)])
    enabling = plan(options, running)
    assert enabling.action == "update" and not [change for change in enabling.changes if ".count:" in change], enabling.changes
    assert [base.member(enabling.request, "InstanceGroups.%s.InstanceCount" % name) for name in "ab"] == [2, 8]


def test_autoscaling_on_creation():
    created = plan({"auto_scaling": True, "node_provisioning_mode": "continuous", "cluster_role": ROLE}, None)
    assert created.action == "create"
    assert (created.request["AutoScaling"], created.request["NodeProvisioningMode"], created.request["ClusterRole"]) == (
        {"Mode": "Enable", "AutoScalerType": "Karpenter"}, "Continuous", ROLE)
    assert base.cl.request_problems(base.MODEL, "CreateCluster", created.request) == []
    assert "AutoScaling" not in plan({}, None).request


@pytest.mark.parametrize(
    "types, value, problem",
    [
        (["ml.p5.48xlarge"], None, None),
        (["ml.p5.48xlarge"], "all-1g.10gb", None),
        (["ml.p5.48xlarge"], "all-disabled", None),
        (["ml.p4d.24xlarge", "ml.p4de.24xlarge"], "all-7g.40gb", "the NVIDIA A100 80GB GPUs of ml.p4de.24xlarge have no MIG profile 7g.40gb"),
        (["ml.p5.48xlarge"], "all-1g.5gb", "the NVIDIA H100 80GB GPUs of ml.p5.48xlarge have no MIG profile 1g.5gb"),
        (["ml.g5.12xlarge"], "all-disabled", "instance type ml.g5.12xlarge has NVIDIA A10G GPUs, which MIG cannot partition"),
        (["ml.m5.large"], "all-1g.10gb", "instance type ml.m5.large has no GPU"),
        (["ml.p9.48xlarge"], "all-1g.10gb", "instance type ml.p9.48xlarge is not in the collection's instance table"),
        (["ml.p5.48xlarge"], "mig-1g.10gb", "must be all-disabled or all-<MIG profile>"),
        (["ml.p5.48xlarge"], "all-balanced", "must be all-disabled or all-<MIG profile>"),
    ],
)
def test_mig_config_problem(types, value, problem):
    found = cl.mig_config_problem(types, value)
    if problem is None:
        assert found is None
    else:
        assert problem in found
