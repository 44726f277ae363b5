"""AssumeRole in the sandbox's own account honours the role's trust policy, as AWS does (sandbox/services/sts_identity.py).

AssumeRole, AWS STS API Reference: within one account, a caller may assume a role when the trust policy names the caller,
or names the account (``arn:aws:iam::<account>:root`` or the bare id) and the caller's identity policy allows
``sts:AssumeRole``. A trust naming only a service or Identity Center's SAML provider refuses every IAM caller.
"""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

ACCOUNT = "123456789012"
SANDBOX_USER = f"arn:aws:iam::{ACCOUNT}:user/sandbox"


def trust(principal, action="sts:AssumeRole"):
    return json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": principal, "Action": action}]})


def refusal(call):
    with pytest.raises(ClientError) as refused:
        call()
    return refused.value.response["Error"]["Code"], refused.value.response["Error"]["Message"]


@pytest.mark.parametrize(
    "principal",
    [
        {"Service": "sagemaker.amazonaws.com"},
        {"Service": ["eks.amazonaws.com", "pods.eks.amazonaws.com"]},
        {"Federated": f"arn:aws:iam::{ACCOUNT}:saml-provider/AWSSSO_0123456789abcdef_DO_NOT_DELETE"},
        {"AWS": "arn:aws:iam::999988887777:root"},
        {"AWS": f"arn:aws:iam::{ACCOUNT}:role/someone-else"},
    ],
)
def test_the_admin_cannot_assume_a_role_whose_trust_does_not_name_it_or_its_account(sandbox, principal):
    arn = sandbox.boto3_client("iam").create_role(RoleName="untrusting", AssumeRolePolicyDocument=trust(principal))["Role"]["Arn"]
    code, message = refusal(lambda: sandbox.boto3_client("sts").assume_role(RoleArn=arn, RoleSessionName="admin"))
    assert code == "AccessDenied"
    assert message == f"User: {SANDBOX_USER} is not authorized to perform: sts:AssumeRole on resource: {arn}"


def test_a_role_that_does_not_exist_is_refused_in_the_own_account_too(sandbox):
    arn = f"arn:aws:iam::{ACCOUNT}:role/NoSuchRole"
    assert refusal(lambda: sandbox.boto3_client("sts").assume_role(RoleArn=arn, RoleSessionName="admin"))[0] == "AccessDenied"


@pytest.mark.parametrize("principal", [{"AWS": f"arn:aws:iam::{ACCOUNT}:root"}, {"AWS": ACCOUNT}, {"AWS": SANDBOX_USER}, {"AWS": "*"}])
def test_the_admin_assumes_a_role_whose_trust_names_its_account_or_it(sandbox, principal):
    arn = sandbox.boto3_client("iam").create_role(RoleName="trusting", AssumeRolePolicyDocument=trust(principal))["Role"]["Arn"]
    answer = sandbox.boto3_client("sts").assume_role(RoleArn=arn, RoleSessionName="admin")
    assert answer["AssumedRoleUser"]["Arn"] == f"arn:aws:sts::{ACCOUNT}:assumed-role/trusting/admin"


def test_a_session_needs_its_identity_policy_when_the_trust_names_the_account(sandbox):
    """Trust naming the account delegates to the caller's identity policy: a session without sts:AssumeRole is refused."""
    iam, sts = sandbox.boto3_client("iam"), sandbox.boto3_client("sts")
    account_trust = trust({"AWS": f"arn:aws:iam::{ACCOUNT}:root"})
    target = iam.create_role(RoleName="target", AssumeRolePolicyDocument=account_trust)["Role"]["Arn"]
    for name, allowed in (("may", True), ("may-not", False)):
        iam.create_role(RoleName=name, AssumeRolePolicyDocument=account_trust)
        statement = {"Effect": "Allow", "Action": "sts:AssumeRole" if allowed else "s3:ListBucket", "Resource": target if allowed else "*"}
        iam.put_role_policy(RoleName=name, PolicyName="p", PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [statement]}))
    may = sts.assume_role(RoleArn=f"arn:aws:iam::{ACCOUNT}:role/may", RoleSessionName="aa")["Credentials"]
    may_not = sts.assume_role(RoleArn=f"arn:aws:iam::{ACCOUNT}:role/may-not", RoleSessionName="bb")["Credentials"]
    assert sandbox.boto3_client("sts", credentials=may).assume_role(RoleArn=target, RoleSessionName="cc")["Credentials"]["AccessKeyId"]
    assert refusal(lambda: sandbox.boto3_client("sts", credentials=may_not).assume_role(RoleArn=target, RoleSessionName="cc"))[0] == "AccessDenied"


def test_a_trust_naming_a_role_admits_that_roles_sessions_only(sandbox):
    iam, sts = sandbox.boto3_client("iam"), sandbox.boto3_client("sts")
    everything = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "*"}]})
    callers = {}
    for name in ("operator", "stranger"):
        arn = iam.create_role(RoleName=name, Path="/platform/", AssumeRolePolicyDocument=trust({"AWS": SANDBOX_USER}))["Role"]["Arn"]
        iam.put_role_policy(RoleName=name, PolicyName="p", PolicyDocument=everything)
        callers[name] = sts.assume_role(RoleArn=arn, RoleSessionName=name)["Credentials"]
    target = iam.create_role(RoleName="target", AssumeRolePolicyDocument=trust({"AWS": f"arn:aws:iam::{ACCOUNT}:role/platform/operator"}))["Role"]["Arn"]
    assert sandbox.boto3_client("sts", credentials=callers["operator"]).assume_role(RoleArn=target, RoleSessionName="xx")["Credentials"]
    assert refusal(lambda: sandbox.boto3_client("sts", credentials=callers["stranger"]).assume_role(RoleArn=target, RoleSessionName="xx"))[0] == "AccessDenied"
    # And the admin, whom this trust does not name, neither.
    assert refusal(lambda: sts.assume_role(RoleArn=target, RoleSessionName="xx"))[0] == "AccessDenied"
