"""The sandbox's EKS Pod Identity associations, called through boto3 as the modules call them."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from sandbox.client import SANDBOX_CREDENTIALS
from tests.unit.sandbox.aws_errors import error, error_code

ROLE = "arn:aws:iam::123456789012:role/hyperpod-vision-pods"
EKS_ROLE = "arn:aws:iam::123456789012:role/eks-cluster"


def pod_trust(*actions: str, service: str = "pods.eks.amazonaws.com") -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": list(actions)}]})


@pytest.fixture
def eks(sandbox):
    iam = sandbox.boto3_client("iam")
    for name in ("hyperpod-vision-pods", "hyperpod-vision2-pods"):
        iam.create_role(RoleName=name, AssumeRolePolicyDocument=pod_trust("sts:AssumeRole", "sts:TagSession"))
    client = sandbox.boto3_client("eks")
    client.create_cluster(name="ml-eks", roleArn=EKS_ROLE, resourcesVpcConfig={"subnetIds": ["subnet-1"]})
    return client


def create(eks, namespace="hyperpod-ns-vision", service_account="hyperpod-vision", role_arn=ROLE, **extra):
    request = dict(clusterName="ml-eks", namespace=namespace, serviceAccount=service_account, roleArn=role_arn, **extra)
    return eks.create_pod_identity_association(**request)["association"]


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
    assert error_code(gone) == "ResourceNotFoundException"


def test_an_association_is_tagged_by_its_arn(eks):
    """TagResource is how an association made without tags gets them (UpdatePodIdentityAssociation takes none)."""
    created = create(eks)
    arn = created["associationArn"]
    eks.tag_resource(resourceArn=arn, tags={"team": "vision", "managed-by": "hyperpod.tenancy"})
    eks.untag_resource(resourceArn=arn, tagKeys=["managed-by"])
    assert eks.list_tags_for_resource(resourceArn=arn)["tags"] == {"team": "vision"}
    assert eks.describe_pod_identity_association(clusterName="ml-eks", associationId=created["associationId"])["association"]["tags"] == {"team": "vision"}
    with pytest.raises(ClientError) as too_many:
        eks.tag_resource(resourceArn=arn, tags={f"k{i}": "v" for i in range(50)})
    assert error_code(too_many) == "InvalidParameterException"
    # The cluster's own tags are still moto's.
    cluster = eks.describe_cluster(name="ml-eks")["cluster"]["arn"]
    eks.tag_resource(resourceArn=cluster, tags={"env": "test"})
    assert eks.list_tags_for_resource(resourceArn=cluster)["tags"] == {"env": "test"}


def test_one_association_per_namespace_and_service_account(eks):
    first = create(eks)
    with pytest.raises(ClientError) as second:
        create(eks)
    assert error_code(second) == "ResourceInUseException"
    assert first["associationId"] in str(second.value)
    # Another service account, or the same name in another namespace, is another association.
    create(eks, service_account="other")
    create(eks, namespace="hyperpod-ns-nlp")


def test_unknown_cluster_and_invalid_requests(sandbox, eks):
    with pytest.raises(ClientError) as unknown:
        eks.create_pod_identity_association(clusterName="nope", namespace="n", serviceAccount="s", roleArn=ROLE)
    assert error_code(unknown) == "ResourceNotFoundException"
    # What botocore's model refuses, the sandbox refuses too when a client does not check first.
    unchecked = boto3.client(
        "eks", region_name="us-east-1", endpoint_url=sandbox.endpoint, config=Config(parameter_validation=False),
        aws_access_key_id=SANDBOX_CREDENTIALS["AWS_ACCESS_KEY_ID"], aws_secret_access_key=SANDBOX_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    )  # fmt: skip
    with pytest.raises(ClientError) as missing:
        unchecked.create_pod_identity_association(clusterName="ml-eks", namespace="n", serviceAccount="s")
    assert error_code(missing) == "InvalidParameterException"
    assert "roleArn" in str(missing.value)


@pytest.mark.parametrize(
    "trust",
    [
        pod_trust("sts:AssumeRole"),  # no TagSession: the agent's session tags could not be set
        pod_trust("sts:AssumeRole", "sts:TagSession", service="eks.amazonaws.com"),
        json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Principal": {"Service": "pods.eks.amazonaws.com"}, "Action": "sts:*"}]}),
    ],
    ids=["no-tag-session", "another-service", "deny"],
)
def test_a_role_that_does_not_trust_pod_identity_is_refused(sandbox, eks, trust):
    untrusting = sandbox.boto3_client("iam").create_role(RoleName="untrusting", AssumeRolePolicyDocument=trust)["Role"]["Arn"]
    with pytest.raises(ClientError) as created:
        eks.create_pod_identity_association(clusterName="ml-eks", namespace="ns", serviceAccount="sa", roleArn=untrusting)
    assert error(created) == (
        "InvalidParameterException", "Trust policy of the role provided is invalid. Follow the official documentation to resolve the issue.")
    association = create(eks)
    with pytest.raises(ClientError) as updated:
        eks.update_pod_identity_association(clusterName="ml-eks", associationId=association["associationId"], roleArn=untrusting)
    assert error_code(updated) == "InvalidParameterException"
    assert eks.describe_pod_identity_association(clusterName="ml-eks", associationId=association["associationId"])["association"]["roleArn"] == ROLE


def test_a_wildcard_action_trusts_pod_identity_and_a_missing_role_is_refused(sandbox, eks):
    wildcard = sandbox.boto3_client("iam").create_role(RoleName="wildcard", AssumeRolePolicyDocument=pod_trust("sts:*"))["Role"]["Arn"]
    assert create(eks, service_account="wild", role_arn=wildcard)["roleArn"] == wildcard
    with pytest.raises(ClientError) as missing:
        create(eks, service_account="missing", role_arn=ROLE.replace("vision-pods", "nobody"))
    assert error(missing) == ("InvalidParameterException", "Role provided in the request does not exist")
