"""The team policy, enforced: team A's credentials reach team-a/ in the data bucket and not team-b/.

moto checks IAM policies when authentication is switched on (POST ``/moto-api/reset-auth`` with the
number of requests to let through unchecked; see moto's docs/docs/iam.rst). It compares actions for
every service but resource ARNs only for S3, IAM and STS, and ignores conditions, so this proves the
S3 object statements against real request signing and evaluation; the SageMaker statements and the
``s3:prefix`` condition on listing are proved by the evaluator in
tests/unit/plugins/module_utils/test_team_policy.py.
"""

from __future__ import annotations

import json
import urllib.request

import boto3
import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_policy import render_team_policy
from botocore.config import Config
from botocore.exceptions import ClientError

BUCKET = "hyperpod-team-data"
REGION = "us-east-1"


def _reset_auth(endpoint: str, unchecked_requests: float) -> None:
    # moto reads the body as a bare number; a form content type (urllib's default) would hide it from moto.
    request = urllib.request.Request(
        f"{endpoint}/moto-api/reset-auth", data=str(unchecked_requests).encode(), method="POST", headers={"Content-Type": "text/plain"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert json.loads(response.read())["status"] == "ok"


@pytest.fixture
def enforcing(sandbox):
    """The sandbox with IAM enforcement switched on by the test; switched off again afterwards."""
    yield sandbox
    _reset_auth(sandbox.endpoint, float("inf"))


def _denied(call) -> str:
    with pytest.raises(ClientError) as error:
        call()
    return error.value.response["Error"]["Code"]


def test_team_credentials_reach_only_the_team_prefix(enforcing):
    sandbox = enforcing
    s3, iam, sts = (sandbox.boto3_client(s) for s in ("s3", "iam", "sts"))
    account = sts.get_caller_identity()["Account"]
    s3.create_bucket(Bucket=BUCKET)
    for team in ("team-a", "team-b"):
        s3.put_object(Bucket=BUCKET, Key=f"{team}/datasets/train.csv", Body=f"{team} data".encode())

    policy = render_team_policy(
        "team-a",
        account,
        REGION,
        BUCKET,
        f"arn:aws:sagemaker:{REGION}:{account}:cluster/p0a1b2c3d4e5",
        f"arn:aws:eks:{REGION}:{account}:cluster/ml-shared-eks",
    )
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{account}:root"}, "Action": "sts:AssumeRole"}]}
    role = iam.create_role(
        RoleName="AWSReservedSSO_hyperpod-team-a_0123456789abcdef", Path="/aws-reserved/sso.amazonaws.com/", AssumeRolePolicyDocument=json.dumps(trust)
    )
    iam.put_role_policy(RoleName=role["Role"]["RoleName"], PolicyName="AwsSSOInlinePolicy", PolicyDocument=json.dumps(policy))
    credentials = sts.assume_role(RoleArn=role["Role"]["Arn"], RoleSessionName="alice")["Credentials"]

    # From here on, every request is authenticated and authorized.
    _reset_auth(sandbox.endpoint, 0)
    team_a = boto3.client(
        "s3",
        region_name=REGION,
        endpoint_url=sandbox.endpoint,
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
        config=Config(retries={"mode": "standard", "max_attempts": 1}),
    )

    # Team A reads, writes and deletes under team-a/ and lists its prefix.
    assert team_a.get_object(Bucket=BUCKET, Key="team-a/datasets/train.csv")["Body"].read() == b"team-a data"
    team_a.put_object(Bucket=BUCKET, Key="team-a/checkpoints/step-1.pt", Body=b"weights")
    listed = team_a.list_objects_v2(Bucket=BUCKET, Prefix="team-a/")["Contents"]
    assert sorted(o["Key"] for o in listed) == ["team-a/checkpoints/step-1.pt", "team-a/datasets/train.csv"]
    team_a.delete_object(Bucket=BUCKET, Key="team-a/checkpoints/step-1.pt")

    # Team B's objects and the bucket itself are out of reach.
    assert _denied(lambda: team_a.get_object(Bucket=BUCKET, Key="team-b/datasets/train.csv")) == "AccessDenied"
    assert _denied(lambda: team_a.put_object(Bucket=BUCKET, Key="team-b/datasets/train.csv", Body=b"overwritten")) == "AccessDenied"
    assert _denied(lambda: team_a.delete_object(Bucket=BUCKET, Key="team-b/datasets/train.csv")) == "AccessDenied"
    assert _denied(lambda: team_a.put_object(Bucket=BUCKET, Key="team-a-archive/x", Body=b"x")) == "AccessDenied"
    assert _denied(lambda: team_a.delete_bucket(Bucket=BUCKET)) == "AccessDenied"
    assert _denied(lambda: team_a.put_bucket_policy(Bucket=BUCKET, Policy=json.dumps(trust))) == "AccessDenied"

    # Nothing of team B changed: read it back with enforcement off.
    _reset_auth(sandbox.endpoint, float("inf"))
    assert s3.get_object(Bucket=BUCKET, Key="team-b/datasets/train.csv")["Body"].read() == b"team-b data"
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]] == ["team-a/datasets/train.csv", "team-b/datasets/train.csv"]


def test_enforcement_refuses_credentials_it_does_not_know(enforcing):
    """The check above is not vacuous: with enforcement on, unknown keys are refused outright."""
    s3 = enforcing.boto3_client("s3")
    s3.create_bucket(Bucket=BUCKET)
    _reset_auth(enforcing.endpoint, 0)
    assert _denied(lambda: s3.list_objects_v2(Bucket=BUCKET)) == "InvalidAccessKeyId"
