"""A create or update that passes a role is also authorized as iam:PassRole, and the request log keeps what IAM was asked."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from sandbox.authorization import passes_roles

ACCOUNT = "123456789012"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/hyperpod-vision-studio-execution"


@pytest.mark.parametrize(
    "service, operation, body, passed",
    [
        ("sagemaker", "CreateDomain", {"DomainName": "d", "DefaultUserSettings": {"ExecutionRole": ROLE}}, [(ROLE, "sagemaker.amazonaws.com")]),
        ("sagemaker", "CreateCluster", {"InstanceGroups": [{"ExecutionRole": ROLE}, {"ExecutionRole": ROLE + "2"}]},
         [(ROLE, "sagemaker.amazonaws.com"), (ROLE + "2", "sagemaker.amazonaws.com")]),
        ("eks", "CreatePodIdentityAssociation", {"namespace": "n", "roleArn": ROLE}, [(ROLE, "pods.eks.amazonaws.com")]),
        ("grafana", "CreateWorkspace", {"workspaceRoleArn": ROLE}, [(ROLE, "grafana.amazonaws.com")]),
        # A read that names a role passes nothing; nor does an access entry, which names its principal, not a role to act as.
        ("sagemaker", "DescribeDomain", {"DefaultUserSettings": {"ExecutionRole": ROLE}}, []),
        ("eks", "CreateAccessEntry", {"principalArn": ROLE}, []),
    ],
)
def test_the_roles_a_request_passes(service, operation, body, passed):
    assert passes_roles(service, operation, json.dumps(body).encode()) == [("iam:PassRole", arn, {"iam:PassedToService": to}) for arn, to in passed]


def test_a_session_without_pass_role_cannot_give_sagemaker_a_role(sandbox):
    """CreateUserProfile with an ExecutionRole needs iam:PassRole on it, to sagemaker.amazonaws.com."""
    iam, sts = sandbox.boto3_client("iam"), sandbox.boto3_client("sts")
    account_trust = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}, "Action": "sts:AssumeRole"}]}  # fmt: skip
    studio = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
    role = iam.create_role(RoleName="hyperpod-vision-studio-execution", AssumeRolePolicyDocument=json.dumps(studio))["Role"]["Arn"]
    sessions = {}
    for name, extra in (("without", []), ("with", [{"Effect": "Allow", "Action": "iam:PassRole", "Resource": role,
                                                     "Condition": {"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}}}])):
        iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(account_trust))
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sagemaker:CreateUserProfile", "Resource": "*"}] + extra}
        iam.put_role_policy(RoleName=name, PolicyName="p", PolicyDocument=json.dumps(policy))
        sessions[name] = sts.assume_role(RoleArn=f"arn:aws:iam::{ACCOUNT}:role/{name}", RoleSessionName=name)["Credentials"]
    request = {"DomainId": "d-0123456789ab", "UserProfileName": "alice", "UserSettings": {"ExecutionRole": role}}
    sandbox.clear_requests()
    with pytest.raises(ClientError) as refused:
        sandbox.boto3_client("sagemaker", credentials=sessions["without"]).create_user_profile(**request)
    assert refused.value.response["Error"]["Code"] == "AccessDeniedException" and "iam:PassRole" in str(refused.value)
    with pytest.raises(ClientError) as passed:  # allowed: it reaches SageMaker, which has no such domain
        sandbox.boto3_client("sagemaker", credentials=sessions["with"]).create_user_profile(**request)
    assert passed.value.response["Error"]["Code"] != "AccessDeniedException"
    logged = [r for r in sandbox.requests() if r["operation"] == "CreateUserProfile"]
    assert [r["principal"] for r in logged] == [f"arn:aws:sts::{ACCOUNT}:assumed-role/{name}/{name}" for name in ("without", "with")]
    assert logged[1]["asked"] == [
        ["sagemaker:CreateUserProfile", f"arn:aws:sagemaker:us-east-1:{ACCOUNT}:user-profile/d-0123456789ab/alice", {}],
        ["iam:PassRole", role, {"iam:PassedToService": "sagemaker.amazonaws.com"}],
    ]
