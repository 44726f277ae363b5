"""The sandbox's HyperPod clusters (sandbox/services/sagemaker_cluster.py), called through boto3 as the module calls them.

Status transitions are observed without timing: a long status delay holds a cluster in
its transitional status, a zero delay settles it on the next read.
"""

from __future__ import annotations

import re

import botocore.session
import pytest
from botocore.exceptions import ClientError

from tests.unit.sandbox.aws_errors import error_code, refused

NAME = "hp-test"
HOLD = 600.0  # seconds: a transition does not settle while the test looks at it
SETTLE = 0.0  # a transition has settled by the next read
OTHER_EKS = "arn:aws:eks:us-east-1:123456789012:cluster/other"


def group(seed, name, count, instance_type="ml.g5.12xlarge", **extra):
    spec = {
        "InstanceGroupName": name,
        "InstanceType": instance_type,
        "InstanceCount": count,
        "ExecutionRole": seed["cluster_execution_role_arn"],
        "ThreadsPerCore": 1,
        "LifeCycleConfig": {"SourceS3Uri": f"s3://{seed['data_bucket']}/_hyperpod/lifecycle/", "OnCreate": "on_create.sh"},
    }
    spec.update(extra)
    return spec


def create_request(seed, groups, **extra):
    request = {
        "ClusterName": NAME,
        "InstanceGroups": groups,
        "VpcConfig": {"Subnets": seed["subnet_ids"], "SecurityGroupIds": seed["security_group_ids"]},
        "Orchestrator": {"Eks": {"ClusterArn": seed["eks_cluster_arn"]}},
    }
    request.update(extra)
    return request


@pytest.fixture
def sagemaker(seeded):
    client, _ = seeded
    return client.boto3_client("sagemaker")


@pytest.fixture
def seed(seeded):
    return seeded[1]


@pytest.fixture
def cluster(seeded, sagemaker, seed):
    """A settled cluster with groups a (1 x ml.g5.12xlarge) and b (2 x ml.p5.48xlarge)."""
    client, _ = seeded
    client.configure(status_delay=SETTLE)
    arn = sagemaker.create_cluster(**create_request(seed, [group(seed, "a", 1), group(seed, "b", 2, "ml.p5.48xlarge")]))["ClusterArn"]
    assert sagemaker.describe_cluster(ClusterName=NAME)["ClusterStatus"] == "InService"
    return arn


def groups_by_name(description):
    return {g["InstanceGroupName"]: g for g in description["InstanceGroups"]}


def test_create_goes_from_creating_to_in_service_with_counts(seeded, sagemaker, seed):
    client, _ = seeded
    client.configure(status_delay=HOLD)
    arn = sagemaker.create_cluster(**create_request(seed, [group(seed, "a", 2)], NodeRecovery="None"))["ClusterArn"]

    creating = sagemaker.describe_cluster(ClusterName=NAME)
    assert creating["ClusterStatus"] == "Creating"
    assert [(g["Status"], g["CurrentCount"], g["TargetCount"]) for g in creating["InstanceGroups"]] == [("Creating", 0, 2)]
    assert sagemaker.list_cluster_nodes(ClusterName=NAME)["ClusterNodeSummaries"] == []

    client.configure(status_delay=SETTLE)
    settled = sagemaker.describe_cluster(ClusterName=arn)
    assert settled["ClusterStatus"] == "InService"
    assert [(g["Status"], g["CurrentCount"], g["TargetCount"]) for g in settled["InstanceGroups"]] == [("InService", 2, 2)]
    assert settled["Orchestrator"] == {"Eks": {"ClusterArn": seed["eks_cluster_arn"]}}
    assert settled["NodeRecovery"] == "None"
    assert settled["VpcConfig"] == {"Subnets": seed["subnet_ids"], "SecurityGroupIds": seed["security_group_ids"]}
    assert len(sagemaker.list_cluster_nodes(ClusterName=arn)["ClusterNodeSummaries"]) == 2
    assert [c["ClusterStatus"] for c in sagemaker.list_clusters()["ClusterSummaries"]] == ["InService"]


def test_arn_has_the_id_form_botocore_accepts(sagemaker, cluster):
    pattern = botocore.session.get_session().get_service_model("sagemaker").shape_for("ClusterArn").metadata["pattern"]
    assert re.fullmatch(pattern, cluster)
    assert not cluster.endswith(NAME)
    assert sagemaker.describe_cluster(ClusterName=cluster)["ClusterName"] == NAME


def test_node_recovery_defaults_to_automatic_and_threads_per_core_may_be_left_out(sagemaker, seed, seeded):
    seeded[0].configure(status_delay=SETTLE)
    spec = group(seed, "a", 1)
    del spec["ThreadsPerCore"]  # moto itself crashes on this
    sagemaker.create_cluster(**create_request(seed, [spec]))
    described = sagemaker.describe_cluster(ClusterName=NAME)
    assert described["NodeRecovery"] == "Automatic"
    assert described["InstanceGroups"][0]["ThreadsPerCore"] == 1


def test_every_instance_type_in_botocore_enum_is_accepted(sagemaker, seed, seeded):
    seeded[0].configure(status_delay=SETTLE)
    # ml.g6e.12xlarge and ml.p6-b200.48xlarge are in botocore's ClusterInstanceType, not in moto's fixed list.
    sagemaker.create_cluster(**create_request(seed, [group(seed, "a", 1, "ml.g6e.12xlarge"), group(seed, "b", 1, "ml.p6-b200.48xlarge")]))
    types = {g["InstanceGroupName"]: g["InstanceType"] for g in sagemaker.describe_cluster(ClusterName=NAME)["InstanceGroups"]}
    assert types == {"a": "ml.g6e.12xlarge", "b": "ml.p6-b200.48xlarge"}


def test_create_breaking_botocore_model_is_a_validation_error(sagemaker, seed):
    with pytest.raises(ClientError) as excinfo:
        sagemaker.create_cluster(**create_request(seed, [group(seed, "a", 1, "ml.bogus.4xlarge")]))
    assert error_code(excinfo) == "ValidationException"
    assert "'ml.bogus.4xlarge' at 'instanceGroups.1.member.instanceType'" in str(excinfo.value)
    assert "enum value set" in str(excinfo.value)
    with pytest.raises(ClientError) as excinfo:
        sagemaker.create_cluster(**create_request(seed, [group(seed, "a", 1)], Tags=[{"Key": "bad{key}", "Value": "v"}]))
    assert error_code(excinfo) == "ValidationException"
    assert "tags.1.member.key" in str(excinfo.value)
    assert sagemaker.list_clusters()["ClusterSummaries"] == []


@pytest.mark.parametrize(
    "change, fragment",
    [
        ({"Orchestrator": {"Eks": {"ClusterArn": "arn:aws:eks:us-east-1:123456789012:cluster/no-such-eks"}}}, "no-such-eks was not found"),
        ({"InstanceGroups": "dup"}, "duplicated"),
        ({"InstanceGroups": "role"}, "is invalid. Please ensure that the role exists"),  # AWS says so of a role it cannot assume, missing or not
    ],
)
def test_create_checks_what_aws_checks_beyond_the_model(sagemaker, seed, change, fragment):
    groups = [group(seed, "a", 1)]
    if change.get("InstanceGroups") == "dup":
        groups = [group(seed, "a", 1), group(seed, "a", 2)]
    elif change.get("InstanceGroups") == "role":
        groups = [group(seed, "a", 1, ExecutionRole="arn:aws:iam::123456789012:role/NoSuchRole")]
    extra = {k: v for k, v in change.items() if k != "InstanceGroups"}
    with pytest.raises(ClientError) as excinfo:
        sagemaker.create_cluster(**create_request(seed, groups, **extra))
    assert error_code(excinfo) == "ValidationException"
    assert fragment in str(excinfo.value)


def test_create_with_a_name_in_use_is_resource_in_use(sagemaker, seed, cluster):
    assert refused(sagemaker.create_cluster, **create_request(seed, [group(seed, "a", 1)])) == "ResourceInUse"


def test_missing_lifecycle_script_ends_failed_with_a_failure_message(seeded, sagemaker, seed):
    seeded[0].configure(status_delay=SETTLE)
    spec = group(seed, "a", 1, LifeCycleConfig={"SourceS3Uri": f"s3://{seed['data_bucket']}/nowhere/", "OnCreate": "on_create.sh"})
    sagemaker.create_cluster(**create_request(seed, [spec]))
    described = sagemaker.describe_cluster(ClusterName=NAME)
    assert described["ClusterStatus"] == "Failed"
    assert "nowhere/on_create.sh" in described["FailureMessage"]
    assert described["InstanceGroups"][0]["CurrentCount"] == 0


@pytest.mark.parametrize("call", ["describe_cluster", "delete_cluster", "update_cluster", "list_cluster_nodes"])
def test_unknown_cluster_is_resource_not_found(sagemaker, seed, call):
    kwargs = {"ClusterName": "nothere"}
    if call == "update_cluster":
        kwargs["InstanceGroups"] = [group(seed, "a", 1)]
    assert refused(getattr(sagemaker, call), **kwargs) == "ResourceNotFound"


def test_update_grows_a_group_through_updating(seeded, sagemaker, seed, cluster):
    client, _ = seeded
    client.configure(status_delay=HOLD)
    sagemaker.update_cluster(ClusterName=NAME, InstanceGroups=[group(seed, "a", 3), group(seed, "b", 2, "ml.p5.48xlarge")])

    updating = sagemaker.describe_cluster(ClusterName=NAME)
    assert updating["ClusterStatus"] == "Updating"
    groups = groups_by_name(updating)
    assert (groups["a"]["Status"], groups["a"]["CurrentCount"], groups["a"]["TargetCount"]) == ("Updating", 1, 3)
    assert (groups["b"]["Status"], groups["b"]["CurrentCount"], groups["b"]["TargetCount"]) == ("InService", 2, 2)

    client.configure(status_delay=SETTLE)
    settled = groups_by_name(sagemaker.describe_cluster(ClusterName=NAME))
    assert sagemaker.describe_cluster(ClusterName=NAME)["ClusterStatus"] == "InService"
    assert (settled["a"]["Status"], settled["a"]["CurrentCount"], settled["a"]["TargetCount"]) == ("InService", 3, 3)
    nodes = sagemaker.list_cluster_nodes(ClusterName=cluster)["ClusterNodeSummaries"]
    assert sorted(n["InstanceGroupName"] for n in nodes) == ["a", "a", "a", "b", "b"]


def test_update_adds_and_deletes_groups_and_sets_node_recovery(seeded, sagemaker, seed, cluster):
    client, _ = seeded
    client.configure(status_delay=HOLD)
    sagemaker.update_cluster(
        ClusterName=cluster, InstanceGroups=[group(seed, "a", 1), group(seed, "c", 1, "ml.g6e.12xlarge")], InstanceGroupsToDelete=["b"], NodeRecovery="None"
    )
    updating = groups_by_name(sagemaker.describe_cluster(ClusterName=NAME))
    assert {name: g["Status"] for name, g in updating.items()} == {"a": "InService", "b": "Deleting", "c": "Creating"}
    assert (updating["c"]["CurrentCount"], updating["c"]["TargetCount"]) == (0, 1)

    client.configure(status_delay=SETTLE)
    settled = sagemaker.describe_cluster(ClusterName=NAME)
    assert sorted(groups_by_name(settled)) == ["a", "c"]
    assert settled["NodeRecovery"] == "None"
    nodes = sagemaker.list_cluster_nodes(ClusterName=NAME)["ClusterNodeSummaries"]
    assert sorted(n["InstanceGroupName"] for n in nodes) == ["a", "c"]


def test_update_while_not_in_service_is_a_conflict(seeded, sagemaker, seed):
    client, _ = seeded
    client.configure(status_delay=HOLD)
    sagemaker.create_cluster(**create_request(seed, [group(seed, "a", 1)]))
    assert refused(sagemaker.update_cluster, ClusterName=NAME, InstanceGroups=[group(seed, "a", 2)]) == "ConflictException"
    assert groups_by_name(sagemaker.describe_cluster(ClusterName=NAME))["a"]["TargetCount"] == 1


@pytest.mark.parametrize(
    "request_groups, extra, fragment",
    [
        # The update guide does not list an existing group's execution role among what can change.
        ([("a", 1, "ml.g5.12xlarge", {"ExecutionRole": "arn:aws:iam::123456789012:role/HyperPodEksCluster"}), ("b", 2, "ml.p5.48xlarge")], {},
         "ExecutionRole of instance group a cannot be updated"),
        ([("a", 1, "ml.g5.12xlarge"), ("b", 2, "ml.p5.48xlarge")], {"InstanceGroupsToDelete": ["b"]}, "both updated and deleted"),
        ([("a", 1, "ml.g5.12xlarge"), ("b", 2, "ml.p5.48xlarge")], {"InstanceGroupsToDelete": ["zzz"]}, "zzz in InstanceGroupsToDelete does not exist"),
        ([("a", 1, "ml.g5.12xlarge"), ("b", 2, "ml.p5.48xlarge")], {"Orchestrator": {"Eks": {"ClusterArn": OTHER_EKS}}},
         "orchestrator of a cluster cannot be changed"),
        # botocore's model: enum of NodeRecovery, pattern of InstanceGroupName
        ([("a", 1, "ml.g5.12xlarge"), ("b", 2, "ml.p5.48xlarge")], {"NodeRecovery": "Sometimes"}, "at 'nodeRecovery' failed to satisfy constraint"),
        ([("a", 1, "ml.g5.12xlarge"), ("b", 2, "ml.p5.48xlarge"), ("bad_name", 1, "ml.g5.12xlarge")], {}, "instanceGroups.3.member.instanceGroupName"),
    ],
)
def test_update_refusals_are_validation_errors_and_change_nothing(sagemaker, seed, cluster, request_groups, extra, fragment):
    before = sagemaker.describe_cluster(ClusterName=NAME)
    groups = [group(seed, g[0], g[1], g[2], **(g[3] if len(g) > 3 else {})) for g in request_groups]
    with pytest.raises(ClientError) as excinfo:
        sagemaker.update_cluster(ClusterName=NAME, InstanceGroups=groups, **extra)
    assert error_code(excinfo) == "ValidationException"
    assert fragment in str(excinfo.value)
    after = sagemaker.describe_cluster(ClusterName=NAME)
    assert after["InstanceGroups"] == before["InstanceGroups"]
    assert after["ClusterStatus"] == "InService"


def test_delete_goes_through_deleting_and_disappears(seeded, sagemaker, cluster):
    client, _ = seeded
    client.configure(status_delay=HOLD)
    assert sagemaker.delete_cluster(ClusterName=NAME)["ClusterArn"] == cluster
    deleting = sagemaker.describe_cluster(ClusterName=cluster)
    assert deleting["ClusterStatus"] == "Deleting"
    assert {g["Status"] for g in deleting["InstanceGroups"]} == {"Deleting"}
    assert refused(sagemaker.delete_cluster, ClusterName=NAME) == "ConflictException"

    client.configure(status_delay=SETTLE)
    assert refused(sagemaker.describe_cluster, ClusterName=NAME) == "ResourceNotFound"
    assert sagemaker.list_clusters()["ClusterSummaries"] == []


def test_tags_round_trip_by_cluster_arn_and_add_tags_overwrites(sagemaker, seed, seeded):
    seeded[0].configure(status_delay=SETTLE)
    arn = sagemaker.create_cluster(**create_request(seed, [group(seed, "a", 1)], Tags=[{"Key": "team", "Value": "platform"}]))["ClusterArn"]
    assert sagemaker.list_tags(ResourceArn=arn)["Tags"] == [{"Key": "team", "Value": "platform"}]
    sagemaker.add_tags(ResourceArn=arn, Tags=[{"Key": "team", "Value": "ml"}, {"Key": "cost-center", "Value": "CC-1"}])
    assert sorted((t["Key"], t["Value"]) for t in sagemaker.list_tags(ResourceArn=arn)["Tags"]) == [("cost-center", "CC-1"), ("team", "ml")]
    sagemaker.delete_tags(ResourceArn=arn, TagKeys=["team"])
    assert sagemaker.list_tags(ResourceArn=arn)["Tags"] == [{"Key": "cost-center", "Value": "CC-1"}]


def test_update_keeps_groups_it_does_not_name_and_changes_an_instance_type_in_place(seeded, sagemaker, seed, cluster):
    """AWS's update guide: name the groups to update; a new instance type replaces the group's nodes."""
    seeded[0].configure(status_delay=SETTLE)
    before = groups_by_name(sagemaker.describe_cluster(ClusterName=NAME))
    nodes_before = {n["InstanceId"] for n in sagemaker.list_cluster_nodes(ClusterName=NAME)["ClusterNodeSummaries"] if n["InstanceGroupName"] == "a"}
    sagemaker.update_cluster(ClusterName=NAME, InstanceGroups=[group(seed, "a", 1, "ml.p4d.24xlarge")])
    after = groups_by_name(sagemaker.describe_cluster(ClusterName=NAME))
    assert after["b"] == before["b"]  # not named, not changed
    assert after["a"]["InstanceType"] == "ml.p4d.24xlarge"
    nodes = [n for n in sagemaker.list_cluster_nodes(ClusterName=NAME)["ClusterNodeSummaries"] if n["InstanceGroupName"] == "a"]
    assert [n["InstanceType"] for n in nodes] == ["ml.p4d.24xlarge"] and not {n["InstanceId"] for n in nodes} & nodes_before


def test_a_listed_group_takes_its_specification_as_sent(seeded, sagemaker, seed):
    """Labels and taints show as Current/Desired; a group sent again without them loses them (the stricter reading)."""
    seeded[0].configure(status_delay=SETTLE)
    kubernetes = {"Labels": {"tier": "gpu"}, "Taints": [{"Key": "gpu", "Value": "yes", "Effect": "NoSchedule"}]}
    sagemaker.create_cluster(**create_request(seed, [group(seed, "a", 1, KubernetesConfig=kubernetes)]))
    shown = groups_by_name(sagemaker.describe_cluster(ClusterName=NAME))["a"]["KubernetesConfig"]
    assert shown["CurrentLabels"] == shown["DesiredLabels"] == {"tier": "gpu"}
    assert shown["CurrentTaints"] == kubernetes["Taints"]
    sagemaker.update_cluster(ClusterName=NAME, InstanceGroups=[group(seed, "a", 2)])
    assert "KubernetesConfig" not in groups_by_name(sagemaker.describe_cluster(ClusterName=NAME))["a"]


def flexible(seed, name, count, types, **extra):
    spec = group(seed, name, count, **extra)
    del spec["InstanceType"]
    spec["InstanceRequirements"] = {"InstanceTypes": types}
    return spec


def test_a_flexible_group_reads_back_desired_and_current_types_and_its_list_changes_on_update(seeded, sagemaker, seed):
    """ClusterInstanceRequirementDetails: DesiredInstanceTypes as last requested, CurrentInstanceTypes once it settles."""
    client, _ = seeded
    client.configure(status_delay=SETTLE)
    sagemaker.create_cluster(**create_request(seed, [flexible(seed, "f", 2, ["ml.g6e.12xlarge", "ml.g5.12xlarge"])]))
    shown = groups_by_name(sagemaker.describe_cluster(ClusterName=NAME))["f"]
    assert "InstanceType" not in shown
    assert shown["InstanceRequirements"] == {"CurrentInstanceTypes": ["ml.g6e.12xlarge", "ml.g5.12xlarge"],
                                             "DesiredInstanceTypes": ["ml.g6e.12xlarge", "ml.g5.12xlarge"]}
    # HyperPod provisions the first type of the list.
    assert {n["InstanceType"] for n in sagemaker.list_cluster_nodes(ClusterName=NAME)["ClusterNodeSummaries"]} == {"ml.g6e.12xlarge"}

    client.configure(status_delay=HOLD)
    sagemaker.update_cluster(ClusterName=NAME, InstanceGroups=[flexible(seed, "f", 2, ["ml.g5.12xlarge"])])
    updating = groups_by_name(sagemaker.describe_cluster(ClusterName=NAME))["f"]["InstanceRequirements"]
    assert updating == {"CurrentInstanceTypes": ["ml.g6e.12xlarge", "ml.g5.12xlarge"], "DesiredInstanceTypes": ["ml.g5.12xlarge"]}
    client.configure(status_delay=SETTLE)
    settled = groups_by_name(sagemaker.describe_cluster(ClusterName=NAME))["f"]["InstanceRequirements"]
    assert settled == {"CurrentInstanceTypes": ["ml.g5.12xlarge"], "DesiredInstanceTypes": ["ml.g5.12xlarge"]}
    assert {n["InstanceType"] for n in sagemaker.list_cluster_nodes(ClusterName=NAME)["ClusterNodeSummaries"]} == {"ml.g5.12xlarge"}


@pytest.mark.parametrize(
    "spec, fragment",
    [
        (lambda seed: dict(flexible(seed, "a", 1, ["ml.g5.12xlarge"]), InstanceType="ml.g5.12xlarge"), "exactly one of InstanceType and InstanceRequirements"),
        # botocore's enum, checked by the service (the client checks only lengths).
        (lambda seed: flexible(seed, "a", 1, ["ml.g5.12xlarge", "ml.bogus.4xlarge"]), "instanceGroups.1.member.instanceRequirements.instanceTypes"),
    ],
    ids=["both", "unknown type"],
)
def test_a_flexible_group_breaking_the_rules_is_a_validation_error(sagemaker, seed, spec, fragment):
    with pytest.raises(ClientError) as excinfo:
        sagemaker.create_cluster(**create_request(seed, [spec(seed)]))
    assert error_code(excinfo) == "ValidationException"
    assert fragment in str(excinfo.value)


def test_a_group_cannot_switch_between_one_type_and_a_list(sagemaker, seed, cluster):
    with pytest.raises(ClientError) as excinfo:
        sagemaker.update_cluster(ClusterName=NAME, InstanceGroups=[flexible(seed, "a", 1, ["ml.g5.12xlarge"])])
    assert error_code(excinfo) == "ValidationException"
    assert "cannot switch between InstanceType and InstanceRequirements" in str(excinfo.value)


AUTOSCALING = {"AutoScaling": {"Mode": "Enable", "AutoScalerType": "Karpenter"}, "NodeProvisioningMode": "Continuous"}


def test_autoscaling_is_stored_described_and_disabled(seeded, sagemaker, seed):
    client, _ = seeded
    client.configure(status_delay=SETTLE)
    role = seed["cluster_execution_role_arn"]
    sagemaker.create_cluster(**create_request(seed, [group(seed, "a", 1)], ClusterRole=role, **AUTOSCALING))
    described = sagemaker.describe_cluster(ClusterName=NAME)
    assert described["AutoScaling"] == {"Mode": "Enable", "AutoScalerType": "Karpenter", "Status": "InService"}
    assert (described["NodeProvisioningMode"], described["ClusterRole"], described["NodeRecovery"]) == ("Continuous", role, "Automatic")
    # "Cannot be updated while autoscaling is enabled" (UpdateCluster ClusterRole).
    other = "arn:aws:iam::123456789012:role/Other"
    with pytest.raises(ClientError, match="ClusterRole cannot be updated while autoscaling is enabled"):
        sagemaker.update_cluster(ClusterName=NAME, ClusterRole=other)
    # NodeRecovery Automatic is a prerequisite while autoscaling is on.
    with pytest.raises(ClientError, match="NodeRecovery to be Automatic"):
        sagemaker.update_cluster(ClusterName=NAME, NodeRecovery="None")
    sagemaker.update_cluster(ClusterName=NAME, AutoScaling={"Mode": "Disable"})
    described = sagemaker.describe_cluster(ClusterName=NAME)
    assert described["AutoScaling"]["Mode"] == "Disable"
    assert described["NodeProvisioningMode"] == "Continuous"


@pytest.mark.parametrize(
    "extra, fragment",
    [
        ({"AutoScaling": {"Mode": "Enable"}, "ClusterRole": "ROLE"}, "NodeProvisioningMode to be Continuous"),
        (dict(AUTOSCALING, NodeRecovery="None", ClusterRole="ROLE"), "NodeRecovery to be Automatic"),
        (dict(AUTOSCALING), "ClusterRole is required"),
        ({"NodeProvisioningMode": "Sometimes"}, "at 'nodeProvisioningMode' failed to satisfy constraint"),
        (dict(AUTOSCALING, AutoScaling={"Mode": "Enable", "AutoScalerType": "Other"}, ClusterRole="ROLE"), "autoScaling.autoScalerType"),
    ],
    ids=["without continuous provisioning", "with node recovery none", "without a cluster role", "unknown mode", "unknown autoscaler"],
)
def test_autoscaling_without_what_aws_requires_is_a_validation_error(sagemaker, seed, extra, fragment):
    extra = {k: (seed["cluster_execution_role_arn"] if v == "ROLE" else v) for k, v in extra.items()}
    with pytest.raises(ClientError) as excinfo:
        sagemaker.create_cluster(**create_request(seed, [group(seed, "a", 1)], **extra))
    assert error_code(excinfo) == "ValidationException"
    assert fragment in str(excinfo.value)
    assert sagemaker.list_clusters()["ClusterSummaries"] == []


def test_autoscaling_is_enabled_on_an_existing_cluster_with_continuous_provisioning(sagemaker, seed, cluster):
    assert "AutoScaling" not in sagemaker.describe_cluster(ClusterName=NAME)
    with pytest.raises(ClientError, match="NodeProvisioningMode to be Continuous"):
        sagemaker.update_cluster(ClusterName=NAME, AutoScaling={"Mode": "Enable"}, ClusterRole=seed["cluster_execution_role_arn"])
    sagemaker.update_cluster(ClusterName=NAME, ClusterRole=seed["cluster_execution_role_arn"], **AUTOSCALING)
    described = sagemaker.describe_cluster(ClusterName=NAME)
    assert (described["AutoScaling"]["Mode"], described["NodeProvisioningMode"]) == ("Enable", "Continuous")
