"""aws:SecureTransport in the sandbox's request context (sandbox/authorization.py): AWS's endpoints are reached over TLS."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

TRUST = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::123456789012:root"}, "Action": "sts:AssumeRole"}]}


def session_of(sandbox, name, statement):
    iam, sts = sandbox.boto3_client("iam"), sandbox.boto3_client("sts")
    arn = iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(TRUST))["Role"]["Arn"]
    iam.put_role_policy(RoleName=name, PolicyName="p", PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [statement]}))
    return sts.assume_role(RoleArn=arn, RoleSessionName="alice")["Credentials"]


def test_a_statement_allowed_only_over_tls_allows(sandbox):
    sandbox.boto3_client("s3").create_bucket(Bucket="data")
    credentials = session_of(sandbox, "reader", {"Effect": "Allow", "Action": ["s3:ListBucket", "iam:GetRole"], "Resource": "*",
                                                 "Condition": {"Bool": {"aws:SecureTransport": "true"}}})
    assert sandbox.boto3_client("s3", credentials=credentials).list_objects_v2(Bucket="data")["KeyCount"] == 0
    assert sandbox.boto3_client("iam", credentials=credentials).get_role(RoleName="reader")["Role"]["RoleName"] == "reader"


def test_a_deny_of_requests_without_tls_denies_nothing(sandbox):
    # The usual "deny insecure transport" guard next to an allow: it never matches a request to AWS's endpoints.
    sandbox.boto3_client("s3").create_bucket(Bucket="data")
    iam, sts = sandbox.boto3_client("iam"), sandbox.boto3_client("sts")
    arn = iam.create_role(RoleName="guarded", AssumeRolePolicyDocument=json.dumps(TRUST))["Role"]["Arn"]
    iam.put_role_policy(RoleName="guarded", PolicyName="p", PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "*"},
        {"Effect": "Deny", "Action": "*", "Resource": "*", "Condition": {"Bool": {"aws:SecureTransport": "false"}}},
    ]}))  # fmt: skip
    credentials = sts.assume_role(RoleArn=arn, RoleSessionName="alice")["Credentials"]
    assert sandbox.boto3_client("s3", credentials=credentials).list_objects_v2(Bucket="data")["KeyCount"] == 0


def test_a_statement_allowed_only_without_tls_does_not_allow(sandbox):
    sandbox.boto3_client("s3").create_bucket(Bucket="data")
    credentials = session_of(sandbox, "plain", {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "*",
                                                "Condition": {"Bool": {"aws:SecureTransport": "false"}}})
    with pytest.raises(ClientError) as refused:
        sandbox.boto3_client("s3", credentials=credentials).list_objects_v2(Bucket="data")
    assert refused.value.response["Error"]["Code"] == "AccessDenied"
