"""EKS access entries and access policies in the sandbox, called through boto3 as the modules call them."""

from __future__ import annotations

import json
import time

import pytest
from botocore.exceptions import ClientError

TRAINING = "arn:aws:eks::aws:cluster-access-policy/AmazonSagemakerHyperpodTrainingPolicy"
USER_CLUSTER = "arn:aws:eks::aws:cluster-access-policy/AmazonSagemakerHyperpodUserClusterPolicy"
TRUST = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "eks.amazonaws.com"}, "Action": "sts:AssumeRole"}]})


def _code(error: pytest.ExceptionInfo) -> str:
    return error.value.response["Error"]["Code"]


@pytest.fixture
def cluster(sandbox):
    iam, eks = sandbox.boto3_client("iam"), sandbox.boto3_client("eks")
    role = iam.create_role(RoleName="eks", AssumeRolePolicyDocument=TRUST)["Role"]["Arn"]
    sso_role = iam.create_role(
        RoleName="AWSReservedSSO_hyperpod-vision_0123456789abcdef", Path="/aws-reserved/sso.amazonaws.com/", AssumeRolePolicyDocument=TRUST
    )["Role"]["Arn"]
    eks.create_cluster(name="shared", roleArn=role, resourcesVpcConfig={"subnetIds": []}, accessConfig={"authenticationMode": "API_AND_CONFIG_MAP"})
    eks.create_cluster(name="legacy", roleArn=role, resourcesVpcConfig={"subnetIds": []})
    return eks, sso_role


def test_describe_cluster_returns_the_recorded_authentication_mode(cluster):
    eks, _ = cluster
    assert eks.describe_cluster(name="shared")["cluster"]["accessConfig"]["authenticationMode"] == "API_AND_CONFIG_MAP"
    # Without accessConfig the API default is CONFIG_MAP.
    assert eks.describe_cluster(name="legacy")["cluster"]["accessConfig"]["authenticationMode"] == "CONFIG_MAP"


def test_access_entry_round_trip_with_a_role_path(cluster):
    eks, role = cluster
    created = eks.create_access_entry(
        clusterName="shared", principalArn=role, kubernetesGroups=["hyperpod-ns-vision-namespace-level-group"], tags={"team": "vision"}
    )
    entry = created["accessEntry"]
    assert entry["type"] == "STANDARD"
    assert entry["username"] == "arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_hyperpod-vision_0123456789abcdef/{{SessionName}}"
    assert entry["accessEntryArn"].startswith("arn:aws:eks:us-east-1:123456789012:access-entry/shared/role/123456789012/AWSReservedSSO_")
    described = eks.describe_access_entry(clusterName="shared", principalArn=role)["accessEntry"]
    assert described["kubernetesGroups"] == ["hyperpod-ns-vision-namespace-level-group"]
    assert described["tags"] == {"team": "vision"}
    updated = eks.update_access_entry(clusterName="shared", principalArn=role, kubernetesGroups=["other"])["accessEntry"]
    assert updated["kubernetesGroups"] == ["other"] and updated["username"] == entry["username"]
    assert eks.list_access_entries(clusterName="shared")["accessEntries"] == [role]
    eks.delete_access_entry(clusterName="shared", principalArn=role)
    with pytest.raises(ClientError) as error:
        eks.describe_access_entry(clusterName="shared", principalArn=role)
    assert _code(error) == "ResourceNotFoundException"
    assert error.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404


def test_create_refuses_what_eks_refuses(cluster):
    eks, role = cluster
    with pytest.raises(ClientError) as error:
        eks.create_access_entry(clusterName="legacy", principalArn=role)
    assert _code(error) == "InvalidRequestException"
    with pytest.raises(ClientError) as error:
        eks.create_access_entry(clusterName="missing", principalArn=role)
    assert _code(error) == "ResourceNotFoundException"
    # The SSO role's ARN without its path is not a principal that exists.
    with pytest.raises(ClientError) as error:
        eks.create_access_entry(clusterName="shared", principalArn="arn:aws:iam::123456789012:role/AWSReservedSSO_hyperpod-vision_0123456789abcdef")
    assert _code(error) == "InvalidParameterException"
    with pytest.raises(ClientError) as error:
        eks.create_access_entry(clusterName="shared", principalArn=role, username="system:admin")
    assert _code(error) == "InvalidParameterException"
    eks.create_access_entry(clusterName="shared", principalArn=role)
    with pytest.raises(ClientError) as error:
        eks.create_access_entry(clusterName="shared", principalArn=role)
    assert _code(error) == "ResourceInUseException"


def test_access_policies_scopes_and_filters(cluster):
    eks, role = cluster
    eks.create_access_entry(clusterName="shared", principalArn=role)
    namespace = {"type": "namespace", "namespaces": ["hyperpod-ns-vision"]}
    associated = eks.associate_access_policy(clusterName="shared", principalArn=role, policyArn=TRAINING, accessScope=namespace)
    assert associated["associatedAccessPolicy"]["accessScope"] == namespace
    eks.associate_access_policy(clusterName="shared", principalArn=role, policyArn=USER_CLUSTER, accessScope={"type": "cluster"})
    listed = eks.list_associated_access_policies(clusterName="shared", principalArn=role)["associatedAccessPolicies"]
    assert {p["policyArn"]: p["accessScope"]["type"] for p in listed} == {TRAINING: "namespace", USER_CLUSTER: "cluster"}
    assert eks.list_access_entries(clusterName="shared", associatedPolicyArn=TRAINING)["accessEntries"] == [role]
    # Associating again replaces the scope.
    time.sleep(0.01)
    again = eks.associate_access_policy(
        clusterName="shared", principalArn=role, policyArn=TRAINING, accessScope={"type": "namespace", "namespaces": ["a", "b"]}
    )
    assert again["associatedAccessPolicy"]["accessScope"]["namespaces"] == ["a", "b"]
    assert again["associatedAccessPolicy"]["modifiedAt"] > again["associatedAccessPolicy"]["associatedAt"]
    eks.disassociate_access_policy(clusterName="shared", principalArn=role, policyArn=TRAINING)
    assert eks.list_access_entries(clusterName="shared", associatedPolicyArn=TRAINING)["accessEntries"] == []
    with pytest.raises(ClientError) as error:
        eks.disassociate_access_policy(clusterName="shared", principalArn=role, policyArn=TRAINING)
    assert _code(error) == "ResourceNotFoundException"


@pytest.mark.parametrize(
    "policy, scope",
    [
        (TRAINING, {"type": "namespace"}),
        (TRAINING, {"type": "namespace", "namespaces": []}),
        (TRAINING, {"type": "cluster", "namespaces": ["x"]}),
        ("arn:aws:eks::aws:cluster-access-policy/MadeUpPolicy", {"type": "cluster"}),
        ("arn:aws:iam::aws:policy/AdministratorAccess", {"type": "cluster"}),
    ],
)
def test_associate_refuses_bad_scopes_and_unknown_policies(cluster, policy, scope):
    eks, role = cluster
    eks.create_access_entry(clusterName="shared", principalArn=role)
    with pytest.raises(ClientError) as error:
        eks.associate_access_policy(clusterName="shared", principalArn=role, policyArn=policy, accessScope=scope)
    assert _code(error) == "InvalidParameterException"
    assert eks.list_associated_access_policies(clusterName="shared", principalArn=role)["associatedAccessPolicies"] == []


def test_model_validation_and_policy_list(cluster):
    eks, role = cluster
    with pytest.raises(ClientError) as error:
        eks.list_access_entries(clusterName="shared", maxResults=500)
    assert _code(error) == "ValidationException"
    names = set()
    token = None
    while True:
        page = eks.list_access_policies(maxResults=5, **({"nextToken": token} if token else {}))
        names |= {p["name"] for p in page["accessPolicies"]}
        token = page.get("nextToken")
        if not token:
            break
    assert {
        "AmazonSagemakerHyperpodTrainingPolicy",
        "AmazonSagemakerHyperpodInferencePolicy",
        "AmazonSagemakerHyperpodSpacePolicy",
        "AmazonSagemakerHyperpodSpaceTemplatePolicy",
        "AmazonSagemakerHyperpodUserClusterPolicy",
        "AmazonEKSViewPolicy",
        "AmazonEKSEditPolicy",
        "AmazonEKSAdminPolicy",
        "AmazonEKSClusterAdminPolicy",
    } <= names


def test_deleting_an_entry_drops_its_policies(cluster):
    eks, role = cluster
    eks.create_access_entry(clusterName="shared", principalArn=role)
    eks.associate_access_policy(clusterName="shared", principalArn=role, policyArn=USER_CLUSTER, accessScope={"type": "cluster"})
    eks.delete_access_entry(clusterName="shared", principalArn=role)
    eks.create_access_entry(clusterName="shared", principalArn=role)
    assert eks.list_associated_access_policies(clusterName="shared", principalArn=role)["associatedAccessPolicies"] == []


def test_access_entry_tags(cluster):
    eks, role = cluster
    arn = eks.create_access_entry(clusterName="shared", principalArn=role, tags={"team": "vision"})["accessEntry"]["accessEntryArn"]
    eks.tag_resource(resourceArn=arn, tags={"cost-center": "CC-1"})
    eks.untag_resource(resourceArn=arn, tagKeys=["team"])
    assert eks.list_tags_for_resource(resourceArn=arn)["tags"] == {"cost-center": "CC-1"}
    assert eks.describe_access_entry(clusterName="shared", principalArn=role)["accessEntry"]["tags"] == {"cost-center": "CC-1"}
    # Cluster tags still go to moto.
    cluster_arn = eks.describe_cluster(name="shared")["cluster"]["arn"]
    eks.tag_resource(resourceArn=cluster_arn, tags={"shared": "yes"})
    assert eks.list_tags_for_resource(resourceArn=cluster_arn)["tags"] == {"shared": "yes"}


def test_a_recreated_cluster_starts_without_entries(cluster, sandbox):
    eks, role = cluster
    eks.create_access_entry(clusterName="shared", principalArn=role)
    role_arn = eks.describe_cluster(name="shared")["cluster"]["roleArn"]
    eks.delete_cluster(name="shared")
    eks.create_cluster(name="shared", roleArn=role_arn, resourcesVpcConfig={"subnetIds": []}, accessConfig={"authenticationMode": "API"})
    assert eks.list_access_entries(clusterName="shared")["accessEntries"] == []
