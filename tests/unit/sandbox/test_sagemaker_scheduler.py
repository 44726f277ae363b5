"""Task Governance cluster scheduler configs in the sandbox, called through boto3."""

from __future__ import annotations

import time

import pytest
from botocore.exceptions import ClientError

from sandbox.kube import task_governance
from tests.unit.sandbox.aws_errors import error_code, refused

ADDON = "amazon-sagemaker-hyperpod-taskgovernance"
EKS_ROLE = "arn:aws:iam::123456789012:role/eks-cluster"
TRUST = '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}, "Action": "sts:AssumeRole"}]}'
POLICY = {
    "PriorityClasses": [{"Name": "inference", "Weight": 100}, {"Name": "training", "Weight": 50}],
    "FairShare": "Enabled",
    "IdleResourceSharing": "Enabled",
}


def wait_for(describe, wanted, timeout=10):
    deadline = time.monotonic() + timeout
    while True:
        current = describe()
        if current["Status"] == wanted:
            return current
        assert time.monotonic() < deadline, f"stayed {current['Status']}, wanted {wanted}"
        time.sleep(0.05)


def wait_addon_active(eks, cluster):
    # ACTIVE once Kueue is installed in the API server, which a loaded machine takes its time for.
    deadline = time.monotonic() + task_governance.ADDON_WORK_TIMEOUT
    while eks.describe_addon(clusterName=cluster, addonName=ADDON)["addon"]["status"] != "ACTIVE":
        assert time.monotonic() < deadline
        time.sleep(0.05)


def create_hyperpod_cluster(sandbox, name, eks_arn):
    role = sandbox.boto3_client("iam").create_role(RoleName=f"{name}-exec", AssumeRolePolicyDocument=TRUST)["Role"]["Arn"]
    s3 = sandbox.boto3_client("s3")
    s3.create_bucket(Bucket=f"{name}-lifecycle")
    s3.put_object(Bucket=f"{name}-lifecycle", Key="scripts/on_create.sh", Body=b"#!/bin/bash\n")
    return sandbox.boto3_client("sagemaker").create_cluster(
        ClusterName=name,
        InstanceGroups=[{
            "InstanceGroupName": "workers",
            "InstanceType": "ml.g5.12xlarge",
            "InstanceCount": 1,
            "ExecutionRole": role,
            "LifeCycleConfig": {"SourceS3Uri": f"s3://{name}-lifecycle/scripts/", "OnCreate": "on_create.sh"},
            "ThreadsPerCore": 1,
        }],
        VpcConfig={"SecurityGroupIds": ["sg-12345678"], "Subnets": ["subnet-12345678"]},
        Orchestrator={"Eks": {"ClusterArn": eks_arn}},
    )["ClusterArn"]


@pytest.fixture
def env(sandbox):
    """A HyperPod cluster on an EKS cluster whose task governance add-on is ACTIVE."""
    eks = sandbox.boto3_client("eks")
    sm = sandbox.boto3_client("sagemaker")
    eks_arn = eks.create_cluster(name="ml-eks", roleArn=EKS_ROLE, resourcesVpcConfig={"subnetIds": ["subnet-1"]})["cluster"]["arn"]
    eks.create_addon(clusterName="ml-eks", addonName=ADDON)
    wait_addon_active(eks, "ml-eks")
    cluster_arn = create_hyperpod_cluster(sandbox, "ml-shared", eks_arn)
    return sm, eks, cluster_arn, eks_arn


def create(sm, cluster_arn, name="ml-shared-scheduler", **extra):
    return sm.create_cluster_scheduler_config(Name=name, ClusterArn=cluster_arn, SchedulerConfig=POLICY, **extra)


def test_create_describe_list_round_trip(statuses, env):
    sm, _eks, cluster_arn, _ = env
    statuses.hold()
    created = create(sm, cluster_arn, Description="shared cluster policy", Tags=[{"Key": "managed-by", "Value": "hyperpod.tenancy"}])
    config_id = created["ClusterSchedulerConfigId"]
    assert len(config_id) == 12
    assert created["ClusterSchedulerConfigArn"].endswith(f":cluster-scheduler-config/{config_id}")
    described = sm.describe_cluster_scheduler_config(ClusterSchedulerConfigId=config_id)
    assert described["Status"] == "Creating"
    assert described["Name"] == "ml-shared-scheduler"
    assert described["ClusterArn"] == cluster_arn
    assert described["SchedulerConfig"] == POLICY
    assert described["Description"] == "shared cluster policy"
    assert described["ClusterSchedulerConfigVersion"] == 1
    statuses.settle()
    done = wait_for(lambda: sm.describe_cluster_scheduler_config(ClusterSchedulerConfigId=config_id), "Created")
    assert "FailureReason" not in done
    summaries = sm.list_cluster_scheduler_configs(ClusterArn=cluster_arn)["ClusterSchedulerConfigSummaries"]
    assert [(s["ClusterSchedulerConfigId"], s["Status"], s["Name"]) for s in summaries] == [(config_id, "Created", "ml-shared-scheduler")]
    assert sm.list_cluster_scheduler_configs(NameContains="other")["ClusterSchedulerConfigSummaries"] == []
    arn = created["ClusterSchedulerConfigArn"]
    assert sm.list_tags(ResourceArn=arn)["Tags"] == [{"Key": "managed-by", "Value": "hyperpod.tenancy"}]
    sm.add_tags(ResourceArn=arn, Tags=[{"Key": "owner", "Value": "platform"}])
    sm.delete_tags(ResourceArn=arn, TagKeys=["managed-by"])
    assert sm.list_tags(ResourceArn=arn)["Tags"] == [{"Key": "owner", "Value": "platform"}]


def test_update_increments_version_and_keeps_history(statuses, env):
    sm, _eks, cluster_arn, _ = env
    config_id = create(sm, cluster_arn)["ClusterSchedulerConfigId"]
    describe = lambda: sm.describe_cluster_scheduler_config(ClusterSchedulerConfigId=config_id)  # noqa: E731
    wait_for(describe, "Created")
    changed = dict(POLICY, FairShare="Disabled")
    statuses.hold()
    updated = sm.update_cluster_scheduler_config(ClusterSchedulerConfigId=config_id, TargetVersion=1, SchedulerConfig=changed)
    assert updated["ClusterSchedulerConfigVersion"] == 2
    assert describe()["Status"] == "Updating"
    statuses.settle()
    done = wait_for(describe, "Updated")
    assert done["SchedulerConfig"]["FairShare"] == "Disabled"
    assert done["ClusterSchedulerConfigVersion"] == 2
    first = sm.describe_cluster_scheduler_config(ClusterSchedulerConfigId=config_id, ClusterSchedulerConfigVersion=1)
    assert first["SchedulerConfig"]["FairShare"] == "Enabled"
    # Description alone keeps the scheduler config.
    sm.update_cluster_scheduler_config(ClusterSchedulerConfigId=config_id, TargetVersion=2, Description="v3")
    third = wait_for(describe, "Updated")
    assert third["ClusterSchedulerConfigVersion"] == 3
    assert third["SchedulerConfig"] == changed
    assert third["Description"] == "v3"


def test_stale_target_version_is_a_conflict(env):
    sm, _eks, cluster_arn, _ = env
    config_id = create(sm, cluster_arn)["ClusterSchedulerConfigId"]
    wait_for(lambda: sm.describe_cluster_scheduler_config(ClusterSchedulerConfigId=config_id), "Created")
    sm.update_cluster_scheduler_config(ClusterSchedulerConfigId=config_id, TargetVersion=1, Description="two")
    wait_for(lambda: sm.describe_cluster_scheduler_config(ClusterSchedulerConfigId=config_id), "Updated")
    assert refused(sm.update_cluster_scheduler_config, ClusterSchedulerConfigId=config_id, TargetVersion=1, Description="stale") == "ConflictException"
    assert sm.describe_cluster_scheduler_config(ClusterSchedulerConfigId=config_id)["Description"] == "two"


def test_writes_while_transitioning_are_conflicts(statuses, env):
    sm, _eks, cluster_arn, _ = env
    statuses.hold()
    config_id = create(sm, cluster_arn)["ClusterSchedulerConfigId"]
    assert refused(sm.update_cluster_scheduler_config, ClusterSchedulerConfigId=config_id, TargetVersion=1, Description="early") == "ConflictException"
    assert refused(sm.delete_cluster_scheduler_config, ClusterSchedulerConfigId=config_id) == "ConflictException"


def test_one_config_per_cluster(statuses, env):
    sm, _eks, cluster_arn, _ = env
    config_id = create(sm, cluster_arn)["ClusterSchedulerConfigId"]
    assert refused(create, sm, cluster_arn, name="second-policy") == "ConflictException"
    describe = lambda: sm.describe_cluster_scheduler_config(ClusterSchedulerConfigId=config_id)  # noqa: E731
    wait_for(describe, "Created")
    statuses.hold()
    sm.delete_cluster_scheduler_config(ClusterSchedulerConfigId=config_id)
    # Still one while it is Deleting; none once it is Deleted.
    assert refused(create, sm, cluster_arn, name="second-policy") == "ConflictException"
    statuses.settle()
    wait_for(describe, "Deleted")
    assert create(sm, cluster_arn, name="second-policy")["ClusterSchedulerConfigId"] != config_id


def test_delete_moves_through_deleting_to_deleted(statuses, env):
    sm, _eks, cluster_arn, _ = env
    config_id = create(sm, cluster_arn)["ClusterSchedulerConfigId"]
    describe = lambda: sm.describe_cluster_scheduler_config(ClusterSchedulerConfigId=config_id)  # noqa: E731
    wait_for(describe, "Created")
    statuses.hold()
    sm.delete_cluster_scheduler_config(ClusterSchedulerConfigId=config_id)
    assert describe()["Status"] == "Deleting"
    statuses.settle()
    wait_for(describe, "Deleted")
    assert [s["Status"] for s in sm.list_cluster_scheduler_configs(ClusterArn=cluster_arn)["ClusterSchedulerConfigSummaries"]] == ["Deleted"]
    assert refused(sm.delete_cluster_scheduler_config, ClusterSchedulerConfigId=config_id) == "ResourceNotFound"
    assert refused(sm.update_cluster_scheduler_config, ClusterSchedulerConfigId=config_id, TargetVersion=1, Description="x") == "ResourceNotFound"


@pytest.mark.parametrize(
    "call",
    [
        lambda sm: sm.describe_cluster_scheduler_config(ClusterSchedulerConfigId="abcdef123456"),
        lambda sm: sm.update_cluster_scheduler_config(ClusterSchedulerConfigId="abcdef123456", TargetVersion=1),
        lambda sm: sm.delete_cluster_scheduler_config(ClusterSchedulerConfigId="abcdef123456"),
    ],
)
def test_missing_config_is_resource_not_found(env, call):
    sm = env[0]
    assert refused(call, sm) == "ResourceNotFound"


@pytest.mark.parametrize(
    "scheduler_config, member",
    [
        ({"PriorityClasses": [{"Name": f"class-{i}", "Weight": 1} for i in range(11)]}, "schedulerConfig.priorityClasses"),
        ({"PriorityClasses": [{"Name": "Training_Jobs", "Weight": 1}]}, "schedulerConfig.priorityClasses.1.member.name"),
        ({"PriorityClasses": [{"Name": "training", "Weight": 101}]}, "schedulerConfig.priorityClasses.1.member.weight"),
        ({"FairShare": "Sometimes"}, "schedulerConfig.fairShare"),
    ],
)
def test_model_validation(env, scheduler_config, member):
    sm, _eks, cluster_arn, _ = env
    with pytest.raises(ClientError) as excinfo:
        sm.create_cluster_scheduler_config(Name="policy", ClusterArn=cluster_arn, SchedulerConfig=scheduler_config)
    assert error_code(excinfo) == "ValidationException"
    assert member in excinfo.value.response["Error"]["Message"]
    assert sm.list_cluster_scheduler_configs()["ClusterSchedulerConfigSummaries"] == []


def test_unknown_cluster_is_rejected(env):
    sm = env[0]
    assert refused(create, sm, "arn:aws:sagemaker:us-east-1:123456789012:cluster/zzzzzzzzzzzz") == "ValidationException"


def test_config_created_before_the_addon_is_active_ends_in_create_failed(sandbox, statuses):
    eks = sandbox.boto3_client("eks")
    sm = sandbox.boto3_client("sagemaker")
    eks_arn = eks.create_cluster(name="bare-eks", roleArn=EKS_ROLE, resourcesVpcConfig={"subnetIds": ["subnet-1"]})["cluster"]["arn"]
    cluster_arn = create_hyperpod_cluster(sandbox, "ml-bare", eks_arn)
    statuses.hold()
    config_id = create(sm, cluster_arn)["ClusterSchedulerConfigId"]
    describe = lambda: sm.describe_cluster_scheduler_config(ClusterSchedulerConfigId=config_id)  # noqa: E731
    assert describe()["Status"] == "Creating"
    statuses.settle()
    failed = wait_for(describe, "CreateFailed")
    assert ADDON in failed["FailureReason"]
    assert "not installed" in failed["FailureReason"]
    # A failed config cannot be updated, still occupies the cluster, and can be deleted.
    assert refused(sm.update_cluster_scheduler_config, ClusterSchedulerConfigId=config_id, TargetVersion=1, Description="x") == "ConflictException"
    assert refused(create, sm, cluster_arn, name="again") == "ConflictException"
    sm.delete_cluster_scheduler_config(ClusterSchedulerConfigId=config_id)
    wait_for(describe, "Deleted")
    # While the add-on is still CREATING the result is the same.
    eks.create_addon(clusterName="bare-eks", addonName=ADDON)
    early = create(sm, cluster_arn, name="early")["ClusterSchedulerConfigId"]
    failed = wait_for(lambda: sm.describe_cluster_scheduler_config(ClusterSchedulerConfigId=early), "CreateFailed")
    assert "CREATING" in failed["FailureReason"]
    sm.delete_cluster_scheduler_config(ClusterSchedulerConfigId=early)
    wait_for(lambda: sm.describe_cluster_scheduler_config(ClusterSchedulerConfigId=early), "Deleted")
    # Once the add-on is ACTIVE a new config is Created.
    wait_addon_active(eks, "bare-eks")
    late = create(sm, cluster_arn, name="late")["ClusterSchedulerConfigId"]
    assert wait_for(lambda: sm.describe_cluster_scheduler_config(ClusterSchedulerConfigId=late), "Created")["Name"] == "late"


def test_update_while_addon_missing_ends_in_update_failed(env):
    sm, eks, cluster_arn, _ = env
    config_id = create(sm, cluster_arn)["ClusterSchedulerConfigId"]
    describe = lambda: sm.describe_cluster_scheduler_config(ClusterSchedulerConfigId=config_id)  # noqa: E731
    wait_for(describe, "Created")
    eks.delete_addon(clusterName="ml-eks", addonName=ADDON)
    sm.update_cluster_scheduler_config(ClusterSchedulerConfigId=config_id, TargetVersion=1, Description="x")
    failed = wait_for(describe, "UpdateFailed")
    assert ADDON in failed["FailureReason"]


def test_description_is_checked_against_its_unicode_pattern(env):
    sm, _eks, cluster_arn, _ = env
    with pytest.raises(ClientError) as excinfo:
        sm.create_cluster_scheduler_config(Name="p", ClusterArn=cluster_arn, SchedulerConfig={"FairShare": "Sometimes"}, Description="no\x07bell")
    message = excinfo.value.response["Error"]["Message"]
    assert message.startswith("2 validation errors detected")
    assert "description" in message and "schedulerConfig.fairShare" in message
    # Accented letters and punctuation are within the pattern.
    assert create(sm, cluster_arn, Description="Política del clúster: inferencia > entrenamiento.")["ClusterSchedulerConfigId"]
