"""The sandbox's EKS Pod Identity associations, called through boto3 as the modules call them."""

from __future__ import annotations

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from sandbox.client import SANDBOX_CREDENTIALS

ROLE = "arn:aws:iam::123456789012:role/hyperpod-vision-pods"
EKS_ROLE = "arn:aws:iam::123456789012:role/eks-cluster"


@pytest.fixture
def eks(sandbox):
    client = sandbox.boto3_client("eks")
    client.create_cluster(name="ml-eks", roleArn=EKS_ROLE, resourcesVpcConfig={"subnetIds": ["subnet-1"]})
    return client


def create(eks, namespace="hyperpod-ns-vision", service_account="hyperpod-vision", **extra):
    return eks.create_pod_identity_association(clusterName="ml-eks", namespace=namespace, serviceAccount=service_account, roleArn=ROLE, **extra)["association"]


def code(excinfo) -> str:
    return excinfo.value.response["Error"]["Code"]


def test_round_trip(eks):
    created = create(eks, tags={"team": "vision"})
    assert created["associationId"].startswith("a-") and len(created["associationId"]) == 19
    assert created["associationArn"] == f"arn:aws:eks:us-east-1:123456789012:podidentityassociation/ml-eks/{created['associationId']}"
    described = eks.describe_pod_identity_association(clusterName="ml-eks", associationId=created["associationId"])["association"]
    assert (described["namespace"], described["serviceAccount"], described["roleArn"], described["tags"]) == (
        "hyperpod-ns-vision", "hyperpod-vision", ROLE, {"team": "vision"})  # fmt: skip
    listed = eks.list_pod_identity_associations(clusterName="ml-eks", namespace="hyperpod-ns-vision")["associations"]
    assert [a["associationId"] for a in listed] == [created["associationId"]]
    assert "roleArn" not in listed[0]
    assert eks.list_pod_identity_associations(clusterName="ml-eks", namespace="hyperpod-ns-nlp")["associations"] == []

    other_role = ROLE.replace("vision", "vision2")
    updated = eks.update_pod_identity_association(clusterName="ml-eks", associationId=created["associationId"], roleArn=other_role)["association"]
    assert updated["roleArn"] == other_role

    eks.delete_pod_identity_association(clusterName="ml-eks", associationId=created["associationId"])
    with pytest.raises(ClientError) as gone:
        eks.describe_pod_identity_association(clusterName="ml-eks", associationId=created["associationId"])
    assert code(gone) == "ResourceNotFoundException"


def test_one_association_per_namespace_and_service_account(eks):
    first = create(eks)
    with pytest.raises(ClientError) as second:
        create(eks)
    assert code(second) == "ResourceInUseException"
    assert first["associationId"] in str(second.value)
    # Another service account, or the same name in another namespace, is another association.
    create(eks, service_account="other")
    create(eks, namespace="hyperpod-ns-nlp")


def test_unknown_cluster_and_invalid_requests(sandbox, eks):
    with pytest.raises(ClientError) as unknown:
        eks.create_pod_identity_association(clusterName="nope", namespace="n", serviceAccount="s", roleArn=ROLE)
    assert code(unknown) == "ResourceNotFoundException"
    # What botocore's model refuses, the sandbox refuses too when a client does not check first.
    unchecked = boto3.client(
        "eks", region_name="us-east-1", endpoint_url=sandbox.endpoint, config=Config(parameter_validation=False),
        aws_access_key_id=SANDBOX_CREDENTIALS["AWS_ACCESS_KEY_ID"], aws_secret_access_key=SANDBOX_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    )  # fmt: skip
    with pytest.raises(ClientError) as missing:
        unchecked.create_pod_identity_association(clusterName="ml-eks", namespace="n", serviceAccount="s")
    assert code(missing) == "InvalidParameterException"
    assert "roleArn" in str(missing.value)
