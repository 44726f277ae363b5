"""IAM's eventual consistency in the sandbox (sandbox/iam_propagation.py): a new role is refused, for a moment, as AWS refuses it."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

TRUST = json.dumps({"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Principal": {"Service": ["eks.amazonaws.com", "pods.eks.amazonaws.com"]}, "Action": ["sts:AssumeRole", "sts:TagSession"]},
]})  # fmt: skip


@pytest.fixture
def eks_cluster(sandbox):
    iam, eks = sandbox.boto3_client("iam"), sandbox.boto3_client("eks")
    role = iam.create_role(RoleName="eks", AssumeRolePolicyDocument=TRUST)["Role"]["Arn"]
    eks.create_cluster(name="shared", roleArn=role, resourcesVpcConfig={"subnetIds": []}, accessConfig={"authenticationMode": "API"})
    return iam, eks


def refusal(call, **request) -> tuple[str, str]:
    with pytest.raises(ClientError) as refused:
        call(**request)
    return refused.value.response["Error"]["Code"], refused.value.response["Error"]["Message"]


def test_a_new_role_is_refused_until_it_has_propagated(sandbox, eks_cluster):
    iam, eks = eks_cluster
    sandbox.set_faults(iam_propagation_s=3600)
    new = iam.create_role(RoleName="studio", AssumeRolePolicyDocument=TRUST)["Role"]["Arn"]
    assert refusal(eks.create_access_entry, clusterName="shared", principalArn=new) == (
        "InvalidParameterException", "The specified principalArn is invalid: invalid principal.")
    assert refusal(eks.create_pod_identity_association, clusterName="shared", namespace="ns", serviceAccount="sa", roleArn=new) == (
        "InvalidParameterException", "Role provided in the request does not exist")
    # Once it has propagated (here: no delay any more), the same requests are accepted.
    sandbox.set_faults(iam_propagation_s=0)
    assert eks.create_access_entry(clusterName="shared", principalArn=new)["accessEntry"]["principalArn"] == new
    assert eks.create_pod_identity_association(clusterName="shared", namespace="ns", serviceAccount="sa", roleArn=new)["association"]["roleArn"] == new


def test_a_reset_puts_the_default_delay_back(sandbox):
    sandbox.set_faults(iam_propagation_s=0)
    sandbox.reset()
    from sandbox.iam_propagation import DEFAULT_DELAY

    assert sandbox.set_faults()["iam_propagation_s"] == DEFAULT_DELAY > 0
