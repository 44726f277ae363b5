"""plugins/modules/hyperpod_cluster.py against the sandbox: flexible instance groups, a group's MIG layout and managed
(Karpenter) autoscaling, each run four ways (check mode, for real, check mode again, for real again) and then changed.

The module's ``converge`` runs as Ansible runs it, with a context whose clients are the sandbox's; a refusal is checked
with a context that fails the test on any client, so "before any call" is what the test proves.
"""

from __future__ import annotations

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError
from ansible_collections.hyperpod.tenancy.plugins.modules import hyperpod_cluster

from tests.unit.sandbox.aws_errors import refused

NAME = "hp-features"
MIG = "nvidia.com/mig.config"


class Context:
    """What ``converge`` uses of the module: clients of the sandbox (none: any client fails the test), check mode, warnings."""

    def __init__(self, sandbox=None, check_mode=False):
        self.sandbox = sandbox
        self.check_mode = check_mode
        self.warnings = []

    def client(self, service):
        if self.sandbox is None:
            raise AssertionError("the module asked for a %s client before refusing" % service)
        return self.sandbox.boto3_client(service)

    def warn(self, message):
        self.warnings.append(message)


def group(seed, name, count=1, **extra):
    """An instance group of the module's options, every suboption present as Ansible hands them over."""
    result = dict(
        name=name, instance_type=None, instance_types=None, count=count, execution_role=seed["cluster_execution_role_arn"],
        lifecycle_config={"source_s3_uri": "s3://%s/_hyperpod/lifecycle/" % seed["data_bucket"], "on_create": "on_create.sh"},
        threads_per_core=1, ebs_volume_size_gib=None, training_plan_arn=None, mig_config=None,
    )
    result.update(extra)
    return result


def params(seed, groups, **extra):
    result = dict(
        state="present", name=NAME, eks_cluster=seed["eks_cluster_arn"], instance_groups=groups, subnet_ids=seed["subnet_ids"],
        security_group_ids=seed["security_group_ids"], node_recovery=None, auto_scaling=None, node_provisioning_mode=None, cluster_role=None,
        tags=None, purge_tags=True, allow_instance_group_removal=False, allow_replacement=False, wait=True, wait_timeout=60, data_bucket=None,
    )
    result.update(extra)
    return result


def four_steps(sandbox, wanted):
    """Check mode, for real, check mode again, for real again; returns the real run's result.

    Check mode must predict the change and the state the real run then reports (its diff's ``after``), and write nothing.
    """
    sandbox.clear_requests()
    predicted = hyperpod_cluster.converge(Context(sandbox, check_mode=True), wanted)
    assert predicted["changed"] is True
    assert sandbox.writes() == []
    applied = hyperpod_cluster.converge(Context(sandbox), wanted)
    assert applied["changed"] is True
    assert applied["diff"]["after"] == predicted["diff"]["after"]
    assert applied["diff"]["before"] == predicted["diff"]["before"]
    sandbox.clear_requests()
    assert hyperpod_cluster.converge(Context(sandbox, check_mode=True), wanted)["changed"] is False
    again = hyperpod_cluster.converge(Context(sandbox), wanted)
    assert again["changed"] is False
    assert again["diff"]["before"] == again["diff"]["after"] == applied["diff"]["after"]
    assert sandbox.writes() == []
    return applied


def described_group(sagemaker, name):
    return next(g for g in sagemaker.describe_cluster(ClusterName=NAME)["InstanceGroups"] if g["InstanceGroupName"] == name)


@pytest.fixture
def sandbox(seeded):
    client, unused_seed = seeded
    client.configure(status_delay=0)
    return client


@pytest.fixture
def seed(seeded):
    return seeded[1]


def test_a_flexible_group_is_created_in_priority_order_and_its_list_changes_in_place(sandbox, seed):
    flexible = group(seed, "flex", instance_types=["ml.g6e.12xlarge", "ml.g5.12xlarge"])
    applied = four_steps(sandbox, params(seed, [flexible]))
    sagemaker = sandbox.boto3_client("sagemaker")
    shown = described_group(sagemaker, "flex")
    assert "InstanceType" not in shown
    assert shown["InstanceRequirements"]["DesiredInstanceTypes"] == ["ml.g6e.12xlarge", "ml.g5.12xlarge"]
    assert [n["InstanceType"] for n in sagemaker.list_cluster_nodes(ClusterName=NAME)["ClusterNodeSummaries"]] == ["ml.g6e.12xlarge"]
    after = applied["diff"]["after"]["instance_groups"][0]
    assert (after["instance_type"], after["instance_types"]) == (None, ["ml.g6e.12xlarge", "ml.g5.12xlarge"])

    # The order is the priority: a new order is a change, made in place by UpdateCluster.
    reordered = params(seed, [dict(flexible, instance_types=["ml.g5.12xlarge", "ml.g6e.12xlarge"])])
    applied = four_steps(sandbox, reordered)
    assert applied["diff"]["before"]["instance_groups"][0]["instance_types"] == ["ml.g6e.12xlarge", "ml.g5.12xlarge"]
    requirements = described_group(sagemaker, "flex")["InstanceRequirements"]
    assert requirements == {"CurrentInstanceTypes": ["ml.g5.12xlarge", "ml.g6e.12xlarge"], "DesiredInstanceTypes": ["ml.g5.12xlarge", "ml.g6e.12xlarge"]}


def test_switching_a_group_between_one_type_and_a_list_is_refused_before_any_write(sandbox, seed):
    hyperpod_cluster.converge(Context(sandbox), params(seed, [group(seed, "flex", instance_types=["ml.g5.12xlarge"])]))
    sandbox.clear_requests()
    with pytest.raises(InputError) as excinfo:
        hyperpod_cluster.converge(Context(sandbox), params(seed, [group(seed, "flex", instance_type="ml.g5.12xlarge")]))
    assert "instance_groups[flex].instance_types: cannot be changed in place" in excinfo.value.message
    assert "allow_replacement: true" in excinfo.value.message
    assert sandbox.writes() == []


def test_a_mig_layout_is_one_label_merged_with_the_labels_and_taints_set_outside(sandbox, seed):
    gpu = group(seed, "h100", instance_type="ml.p5.48xlarge", mig_config="all-1g.10gb")
    four_steps(sandbox, params(seed, [gpu]))
    sagemaker = sandbox.boto3_client("sagemaker")
    assert described_group(sagemaker, "h100")["KubernetesConfig"]["DesiredLabels"] == {MIG: "all-1g.10gb"}

    # Someone adds a label and a taint outside the module.
    taint = {"Key": "gpu", "Value": "yes", "Effect": "NoSchedule"}
    shown = described_group(sagemaker, "h100")
    spec = {k: shown[k] for k in ("InstanceGroupName", "InstanceType", "ExecutionRole", "LifeCycleConfig", "ThreadsPerCore")}
    sagemaker.update_cluster(ClusterName=NAME, InstanceGroups=[dict(spec, InstanceCount=1, KubernetesConfig={
        "Labels": {"tier": "gpu", MIG: "all-1g.10gb"}, "Taints": [taint]})])
    assert hyperpod_cluster.converge(Context(sandbox), params(seed, [gpu]))["changed"] is False

    applied = four_steps(sandbox, params(seed, [dict(gpu, mig_config="all-2g.20gb")]))
    assert applied["diff"]["before"]["instance_groups"][0]["mig_config"] == "all-1g.10gb"
    assert applied["diff"]["after"]["instance_groups"][0]["mig_config"] == "all-2g.20gb"
    kubernetes = described_group(sagemaker, "h100")["KubernetesConfig"]
    assert kubernetes["DesiredLabels"] == {"tier": "gpu", MIG: "all-2g.20gb"}
    assert kubernetes["DesiredTaints"] == [taint]

    # Unset: the label is left alone.
    result = hyperpod_cluster.converge(Context(sandbox), params(seed, [dict(gpu, mig_config=None, count=2)]))
    assert result["changed"] is True
    assert described_group(sagemaker, "h100")["KubernetesConfig"]["DesiredLabels"] == {"tier": "gpu", MIG: "all-2g.20gb"}


def test_autoscaling_is_created_disabled_and_enabled_again(sandbox, seed):
    role = seed["cluster_execution_role_arn"]
    on = dict(auto_scaling=True, node_provisioning_mode="continuous", cluster_role=role)
    applied = four_steps(sandbox, params(seed, [group(seed, "a", instance_type="ml.g5.12xlarge")], **on))
    assert {k: applied["diff"]["after"][k] for k in ("auto_scaling", "node_provisioning_mode", "cluster_role", "node_recovery")} == {
        "auto_scaling": True, "node_provisioning_mode": "continuous", "cluster_role": role, "node_recovery": "automatic"}
    sagemaker = sandbox.boto3_client("sagemaker")
    described = sagemaker.describe_cluster(ClusterName=NAME)
    assert described["AutoScaling"]["Mode"] == "Enable" and described["AutoScaling"]["AutoScalerType"] == "Karpenter"
    assert (described["NodeProvisioningMode"], described["ClusterRole"]) == ("Continuous", role)
    assert applied["cluster"]["auto_scaling"]["mode"] == "Enable"

    off = four_steps(sandbox, params(seed, [group(seed, "a", instance_type="ml.g5.12xlarge")], auto_scaling=False))
    assert (off["diff"]["before"]["auto_scaling"], off["diff"]["after"]["auto_scaling"]) == (True, False)
    assert sagemaker.describe_cluster(ClusterName=NAME)["AutoScaling"]["Mode"] == "Disable"
    # Unset: left alone, as it is now.
    assert hyperpod_cluster.converge(Context(sandbox), params(seed, [group(seed, "a", instance_type="ml.g5.12xlarge")]))["changed"] is False

    four_steps(sandbox, params(seed, [group(seed, "a", instance_type="ml.g5.12xlarge")], **on))
    assert sagemaker.describe_cluster(ClusterName=NAME)["AutoScaling"]["Mode"] == "Enable"


def test_autoscaling_is_turned_on_for_an_existing_cluster_with_continuous_provisioning_in_one_update(sandbox, seed):
    groups = [group(seed, "a", instance_type="ml.g5.12xlarge")]
    hyperpod_cluster.converge(Context(sandbox), params(seed, groups))
    applied = four_steps(sandbox, params(seed, groups, auto_scaling=True, node_provisioning_mode="continuous", cluster_role=seed["cluster_execution_role_arn"]))
    assert (applied["diff"]["before"]["node_provisioning_mode"], applied["diff"]["before"]["auto_scaling"]) == (None, False)
    described = sandbox.boto3_client("sagemaker").describe_cluster(ClusterName=NAME)
    assert (described["NodeProvisioningMode"], described["AutoScaling"]["Mode"]) == ("Continuous", "Enable")


def test_autoscaling_without_a_cluster_role_is_refused_before_any_write(sandbox, seed):
    with pytest.raises(InputError) as excinfo:
        hyperpod_cluster.converge(Context(sandbox), params(seed, [group(seed, "a", instance_type="ml.g5.12xlarge")], auto_scaling=True,
                                                           node_provisioning_mode="continuous"))
    assert "cluster_role: required with auto_scaling: true" in excinfo.value.message
    assert sandbox.writes() == []
    assert refused(sandbox.boto3_client("sagemaker").describe_cluster, ClusterName=NAME) == "ResourceNotFound"


SEED = {"cluster_execution_role_arn": "arn:aws:iam::123456789012:role/Exec", "data_bucket": "bucket", "eks_cluster_arn":
        "arn:aws:eks:us-east-1:123456789012:cluster/eks", "subnet_ids": ["subnet-1"], "security_group_ids": ["sg-1"]}


@pytest.mark.parametrize(
    "groups, extra, expected",
    [
        ([group(SEED, "gpu", instance_type="ml.p5.48xlarge", instance_types=["ml.p5.48xlarge"])], {},
         "instance_groups[gpu]: set exactly one of instance_type and instance_types, not both"),
        ([group(SEED, "gpu")], {}, "instance_groups[gpu]: set exactly one of instance_type and instance_types (neither is set)"),
        ([group(SEED, "gpu", instance_type="ml.p5.48xlarge", mig_config="all-1g.5gb")], {},
         "instance_groups[gpu].mig_config: all-1g.5gb: the NVIDIA H100 80GB GPUs of ml.p5.48xlarge have no MIG profile 1g.5gb"),
        ([group(SEED, "cpu", instance_type="ml.c5.large", mig_config="all-disabled")], {},
         "instance_groups[cpu].mig_config: all-disabled: instance type ml.c5.large has no GPU"),
        ([group(SEED, "mixed", instance_types=["ml.p5.48xlarge", "ml.p4d.24xlarge"], mig_config="all-1g.10gb")], {},
         "instance_groups[mixed].mig_config: all-1g.10gb: the NVIDIA A100 40GB GPUs of ml.p4d.24xlarge have no MIG profile 1g.10gb"),
        ([group(SEED, "gpu", instance_type="ml.p5.48xlarge", mig_config="1g.10gb")], {},
         "instance_groups[gpu].mig_config: '1g.10gb' must be all-disabled or all-<MIG profile>"),
        ([group(SEED, "a", instance_type="ml.g5.12xlarge")], {"auto_scaling": True, "cluster_role": SEED["cluster_execution_role_arn"]},
         "auto_scaling: needs node_provisioning_mode: continuous"),
        ([group(SEED, "a", instance_type="ml.g5.12xlarge")],
         {"auto_scaling": True, "node_provisioning_mode": "continuous", "node_recovery": "none", "cluster_role": SEED["cluster_execution_role_arn"]},
         "auto_scaling: needs node_recovery: automatic"),
    ],
    ids=["both types", "no type", "profile the GPU lacks", "MIG on a GPU-less type", "flexible group with a type lacking it", "bad shape",
         "autoscaling without continuous provisioning", "autoscaling without node recovery"],
)
def test_refused_before_any_call(groups, extra, expected):
    with pytest.raises(InputError) as excinfo:
        hyperpod_cluster.converge(Context(), params(SEED, groups, **extra))
    assert expected in excinfo.value.message
