"""EKS add-ons in the sandbox, called through boto3 as the modules call them."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from sandbox.kube import task_governance
from tests.unit.sandbox.aws_errors import error_code, refused
from tests.unit.sandbox.polling import unless_gone, wait_until

ADDON = "amazon-sagemaker-hyperpod-taskgovernance"
ROLE = "arn:aws:iam::123456789012:role/eks-cluster"


# The Task Governance add-on settles once Kueue is installed in (removed from) the API server, which a loaded machine takes its time for.
def wait_status(eks, cluster, addon, wanted, timeout=task_governance.ADDON_WORK_TIMEOUT):
    def status():
        return unless_gone(lambda: eks.describe_addon(clusterName=cluster, addonName=addon)["addon"]["status"], "ResourceNotFoundException")

    wait_until(status, wanted, addon, timeout)


@pytest.fixture
def eks(sandbox):
    client = sandbox.boto3_client("eks")
    client.create_cluster(name="ml-eks", roleArn=ROLE, resourcesVpcConfig={"subnetIds": ["subnet-1"]})
    return client


def test_create_describe_list_round_trip(eks):
    created = eks.create_addon(
        clusterName="ml-eks", addonName=ADDON, configurationValues=json.dumps({"replicas": 2}), tags={"team": "platform"}
    )["addon"]
    assert created["status"] == "CREATING"
    assert created["addonVersion"] == "v1.2.0-eksbuild.1"
    assert created["addonArn"].startswith("arn:aws:eks:us-east-1:123456789012:addon/ml-eks/" + ADDON + "/")
    wait_status(eks, "ml-eks", ADDON, "ACTIVE")
    described = eks.describe_addon(clusterName="ml-eks", addonName=ADDON)["addon"]
    assert described["addonArn"] == created["addonArn"]
    assert json.loads(described["configurationValues"]) == {"replicas": 2}
    assert described["tags"] == {"team": "platform"}
    assert eks.list_addons(clusterName="ml-eks")["addons"] == [ADDON]
    assert eks.list_tags_for_resource(resourceArn=created["addonArn"])["tags"] == {"team": "platform"}


def test_duplicate_create_is_resource_in_use(eks):
    eks.create_addon(clusterName="ml-eks", addonName=ADDON)
    with pytest.raises(ClientError) as excinfo:
        eks.create_addon(clusterName="ml-eks", addonName=ADDON)
    assert error_code(excinfo) == "ResourceInUseException"
    assert excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"] == 409


@pytest.mark.parametrize(
    "call",
    [
        lambda eks: eks.describe_addon(clusterName="ml-eks", addonName=ADDON),
        lambda eks: eks.update_addon(clusterName="ml-eks", addonName=ADDON, addonVersion="v1.0.0-eksbuild.1"),
        lambda eks: eks.delete_addon(clusterName="ml-eks", addonName=ADDON),
        lambda eks: eks.list_addons(clusterName="no-such-cluster"),
        lambda eks: eks.create_addon(clusterName="no-such-cluster", addonName=ADDON),
    ],
)
def test_missing_addon_or_cluster_is_not_found(eks, call):
    assert refused(call, eks) == "ResourceNotFoundException"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"addonName": "not-an-addon"},
        {"addonName": ADDON, "addonVersion": "v9.9.9-eksbuild.1"},
        {"addonName": ADDON, "serviceAccountRoleArn": "not-a-role"},
        {"addonName": ADDON, "configurationValues": "[1, 2]"},
        {"addonName": ADDON, "resolveConflicts": "SOMETIMES"},
    ],
)
def test_invalid_parameters(eks, kwargs):
    assert refused(eks.create_addon, clusterName="ml-eks", **kwargs) == "InvalidParameterException"
    assert eks.list_addons(clusterName="ml-eks")["addons"] == []


def test_model_validation_failure_names_the_member(eks):
    with pytest.raises(ClientError) as excinfo:
        eks.create_addon(clusterName="ml-eks", addonName=ADDON, resolveConflicts="SOMETIMES")
    assert "resolveConflicts" in excinfo.value.response["Error"]["Message"]


def test_update_moves_through_updating_and_refuses_writes_while_transitioning(eks, statuses):
    eks.create_addon(clusterName="ml-eks", addonName=ADDON)
    assert refused(eks.update_addon, clusterName="ml-eks", addonName=ADDON, addonVersion="v1.1.3-eksbuild.1") == "ResourceInUseException"
    wait_status(eks, "ml-eks", ADDON, "ACTIVE")
    statuses.hold()
    update = eks.update_addon(
        clusterName="ml-eks", addonName=ADDON, addonVersion="v1.1.3-eksbuild.1", resolveConflicts="OVERWRITE"
    )["update"]
    assert update["status"] == "InProgress"
    assert update["type"] == "AddonUpdate"
    assert {"type": "AddonVersion", "value": "v1.1.3-eksbuild.1"} in update["params"]
    described = eks.describe_addon(clusterName="ml-eks", addonName=ADDON)["addon"]
    assert described["status"] == "UPDATING"
    assert described["addonVersion"] == "v1.1.3-eksbuild.1"
    statuses.settle()
    wait_status(eks, "ml-eks", ADDON, "ACTIVE")


def test_delete_moves_through_deleting_to_gone(statuses, eks):
    eks.create_addon(clusterName="ml-eks", addonName=ADDON)
    wait_status(eks, "ml-eks", ADDON, "ACTIVE")
    statuses.hold()
    deleted = eks.delete_addon(clusterName="ml-eks", addonName=ADDON)["addon"]
    assert deleted["status"] == "DELETING"
    assert eks.list_addons(clusterName="ml-eks")["addons"] == [ADDON]
    statuses.settle()
    wait_status(eks, "ml-eks", ADDON, None)
    assert eks.list_addons(clusterName="ml-eks")["addons"] == []
    # Gone means it can be installed again.
    statuses.hold()
    assert eks.create_addon(clusterName="ml-eks", addonName=ADDON)["addon"]["status"] == "CREATING"


def test_tags_on_addon_arn(eks):
    arn = eks.create_addon(clusterName="ml-eks", addonName=ADDON, tags={"a": "1"})["addon"]["addonArn"]
    eks.tag_resource(resourceArn=arn, tags={"b": "2"})
    eks.untag_resource(resourceArn=arn, tagKeys=["a"])
    assert eks.list_tags_for_resource(resourceArn=arn)["tags"] == {"b": "2"}
    cluster_arn = eks.describe_cluster(name="ml-eks")["cluster"]["arn"]
    eks.tag_resource(resourceArn=cluster_arn, tags={"c": "3"})
    assert eks.list_tags_for_resource(resourceArn=cluster_arn)["tags"]["c"] == "3"


def test_list_pagination(eks):
    for name in ("coredns", "kube-proxy", "vpc-cni"):
        eks.create_addon(clusterName="ml-eks", addonName=name)
    first = eks.list_addons(clusterName="ml-eks", maxResults=2)
    assert first["addons"] == ["coredns", "kube-proxy"]
    second = eks.list_addons(clusterName="ml-eks", maxResults=2, nextToken=first["nextToken"])
    assert second["addons"] == ["vpc-cni"]
    assert "nextToken" not in second


def test_describe_addon_versions(eks):
    addons = eks.describe_addon_versions(addonName=ADDON, kubernetesVersion="1.31")["addons"]
    assert [a["addonName"] for a in addons] == [ADDON]
    versions = addons[0]["addonVersions"]
    assert versions[0]["compatibilities"][0] == {"clusterVersion": "1.31", "platformVersions": ["*"], "defaultVersion": True}
    assert eks.describe_addon_versions(addonName="not-an-addon")["addons"] == []
