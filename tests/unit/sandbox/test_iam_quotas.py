"""IAM's roles per account quota in the sandbox: reported by GetAccountSummary, applied by CreateRole."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

TRUST = json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
)


def test_create_role_beyond_the_quota_is_refused_as_iam_refuses_it(sandbox):
    iam = sandbox.boto3_client("iam")
    summary = iam.get_account_summary()["SummaryMap"]
    assert summary["RolesQuota"] == 1000
    sandbox.configure(iam_roles_per_account=summary["Roles"] + 1)
    assert iam.get_account_summary()["SummaryMap"]["RolesQuota"] == summary["Roles"] + 1
    iam.create_role(RoleName="first", AssumeRolePolicyDocument=TRUST)
    with pytest.raises(ClientError) as error:
        iam.create_role(RoleName="second", AssumeRolePolicyDocument=TRUST)
    assert error.value.response["Error"]["Code"] == "LimitExceeded"
    assert error.value.response["ResponseMetadata"]["HTTPStatusCode"] == 409
    assert error.value.response["Error"]["Message"] == "Cannot exceed quota for RolesPerAccount: %d" % (summary["Roles"] + 1)
    iam.delete_role(RoleName="first")
    iam.create_role(RoleName="second", AssumeRolePolicyDocument=TRUST)
