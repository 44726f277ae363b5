"""The sandbox authenticates every request as AWS does: unsigned, badly signed or stale requests are refused.

Each refusal is checked twice: by the error code AWS gives for the protocol, and by what did not happen
(the write never reached moto). A request signed right with the same credentials passes, so each test
shows the difference is the signature, not the caller.
"""

from __future__ import annotations

import datetime
import json
import urllib.error
import urllib.request
from unittest import mock

import boto3
import pytest
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import ClientError

from sandbox.client import SANDBOX_CREDENTIALS

NO_RETRY = {"retries": {"mode": "standard", "total_max_attempts": 1}}
ROLE_TRUST = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::123456789012:root"}, "Action": "sts:AssumeRole"}]}
EVERYTHING = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}


def client(sandbox, service, key=None, secret=None, token=None, unsigned=False):
    # Presigned S3 URLs with SigV4 (botocore presigns with SigV2 unless told; S3 refuses SigV2 on buckets made since 2020).
    signature = {"signature_version": UNSIGNED} if unsigned else {"signature_version": "s3v4"} if service == "s3" else {}
    return boto3.client(
        service,
        region_name="us-east-1",
        endpoint_url=sandbox.endpoint,
        aws_access_key_id=key or SANDBOX_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=secret or SANDBOX_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        aws_session_token=token,
        config=Config(**signature, **NO_RETRY),
    )


def refusal(call) -> tuple[int, str, str]:
    with pytest.raises(ClientError) as excinfo:
        call()
    response = excinfo.value.response
    return response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Code"], response["Error"].get("Message", "")


@pytest.fixture
def bucket(sandbox):
    s3 = sandbox.boto3_client("s3")
    s3.create_bucket(Bucket="hyperpod-team-data")
    s3.put_object(Bucket="hyperpod-team-data", Key="vision/a.csv", Body=b"vision data")
    return "hyperpod-team-data"


@pytest.fixture
def admin_role(sandbox):
    """Keys moto issued: an assumed role's session and an IAM user's access key, both allowed everything."""
    iam, sts = sandbox.boto3_client("iam"), sandbox.boto3_client("sts")
    arn = iam.create_role(RoleName="operator", AssumeRolePolicyDocument=json.dumps(ROLE_TRUST))["Role"]["Arn"]
    iam.put_role_policy(RoleName="operator", PolicyName="all", PolicyDocument=json.dumps(EVERYTHING))
    session = sts.assume_role(RoleArn=arn, RoleSessionName="alice")["Credentials"]
    iam.create_user(UserName="bob")
    iam.put_user_policy(UserName="bob", PolicyName="all", PolicyDocument=json.dumps(EVERYTHING))
    key = iam.create_access_key(UserName="bob")["AccessKey"]
    return {
        "session": (session["AccessKeyId"], session["SecretAccessKey"], session["SessionToken"]),
        "user": (key["AccessKeyId"], key["SecretAccessKey"], None),
    }


def test_unsigned_requests_are_refused_as_each_protocol_refuses_them(sandbox, bucket):
    assert refusal(lambda: client(sandbox, "s3", unsigned=True).get_object(Bucket=bucket, Key="vision/a.csv"))[:2] == (403, "AccessDenied")
    assert refusal(lambda: client(sandbox, "s3", unsigned=True).put_object(Bucket=bucket, Key="vision/b.csv", Body=b"x"))[:2] == (403, "AccessDenied")
    assert refusal(lambda: client(sandbox, "s3", unsigned=True).list_buckets())[:2] == (403, "AccessDenied")
    unsigned_json = refusal(lambda: client(sandbox, "sagemaker", unsigned=True).list_domains())
    assert unsigned_json == (403, "MissingAuthenticationTokenException", "Missing Authentication Token")
    assert refusal(lambda: client(sandbox, "iam", unsigned=True).list_roles()) == (403, "MissingAuthenticationToken", "Request is missing Authentication Token")
    assert refusal(lambda: client(sandbox, "sts", unsigned=True).get_caller_identity())[:2] == (403, "MissingAuthenticationToken")
    created = lambda: client(sandbox, "iam", unsigned=True).create_role(RoleName="anonymous", AssumeRolePolicyDocument=json.dumps(ROLE_TRUST))  # noqa: E731
    assert refusal(created)[1] == "MissingAuthenticationToken"
    # Nothing reached moto: the object and the role were not made.
    admin_s3, admin_iam = sandbox.boto3_client("s3"), sandbox.boto3_client("iam")
    assert refusal(lambda: admin_s3.head_object(Bucket=bucket, Key="vision/b.csv"))[0] == 404
    assert [r["RoleName"] for r in admin_iam.list_roles()["Roles"]] == []


def test_an_unsigned_request_aws_serves_unsigned_passes(sandbox):
    """AssumeRoleWithWebIdentity is ``smithy.api#noAuth`` in botocore's model: it is authenticated by its token, not a signature."""
    iam = sandbox.boto3_client("iam")
    arn = iam.create_role(RoleName="web", AssumeRolePolicyDocument=json.dumps(ROLE_TRUST))["Role"]["Arn"]
    answer = client(sandbox, "sts", unsigned=True).assume_role_with_web_identity(RoleArn=arn, RoleSessionName="web-session", WebIdentityToken="a" * 20)
    assert answer["Credentials"]["AccessKeyId"]


@pytest.mark.parametrize(
    "service, call, code",
    [
        ("s3", lambda c: c.get_object(Bucket="hyperpod-team-data", Key="vision/a.csv"), "SignatureDoesNotMatch"),
        ("s3", lambda c: c.put_object(Bucket="hyperpod-team-data", Key="vision/b.csv", Body=b"x"), "SignatureDoesNotMatch"),
        ("sagemaker", lambda c: c.list_domains(), "InvalidSignatureException"),
        ("eks", lambda c: c.list_clusters(), "InvalidSignatureException"),
        ("iam", lambda c: c.list_roles(), "SignatureDoesNotMatch"),
        ("sts", lambda c: c.get_caller_identity(), "SignatureDoesNotMatch"),
    ],
)
@pytest.mark.parametrize("keys", ["admin", "session", "user"])
def test_a_wrong_secret_is_refused_and_the_right_one_passes(sandbox, bucket, admin_role, service, call, code, keys):
    key, secret, token = (SANDBOX_CREDENTIALS["AWS_ACCESS_KEY_ID"], SANDBOX_CREDENTIALS["AWS_SECRET_ACCESS_KEY"], None) if keys == "admin" else admin_role[keys]
    status, found, _ = refusal(lambda: call(client(sandbox, service, key, secret[:-1] + ("x" if secret[-1] != "x" else "y"), token)))
    assert (status, found) == (403, code)
    call(client(sandbox, service, key, secret, token))


def test_a_body_changed_after_signing_is_refused(sandbox, bucket):
    def tamper(request, **_):
        body = request.body.read() if hasattr(request.body, "read") else request.body
        body = body if isinstance(body, bytes) else body.encode()
        request.body = body.replace(b"team-a", b"team-b")

    iam = client(sandbox, "iam")
    iam.meta.events.register("before-send.iam.CreateRole", tamper)
    assert refusal(lambda: iam.create_role(RoleName="team-a", AssumeRolePolicyDocument=json.dumps(ROLE_TRUST)))[:2] == (403, "SignatureDoesNotMatch")
    s3 = client(sandbox, "s3")
    s3.meta.events.register("before-send.s3.PutObject", tamper)
    # S3 checks the body against the x-amz-content-sha256 the signature covers.
    assert refusal(lambda: s3.put_object(Bucket=bucket, Key="vision/b.csv", Body=b"team-a"))[:2] == (400, "XAmzContentSHA256Mismatch")
    assert sandbox.boto3_client("iam").list_roles()["Roles"] == []
    assert refusal(lambda: sandbox.boto3_client("s3").head_object(Bucket=bucket, Key="vision/b.csv"))[0] == 404


def test_a_session_token_must_be_the_one_issued_with_the_key(sandbox, bucket, admin_role):
    key, secret, token = admin_role["session"]
    assert refusal(lambda: client(sandbox, "s3", key, secret, token[:-4] + "AAAA").get_object(Bucket=bucket, Key="vision/a.csv"))[1] == "InvalidToken"
    assert refusal(lambda: client(sandbox, "sagemaker", key, secret, None).list_domains())[1] == "UnrecognizedClientException"
    # Long-term keys carry no session token.
    admin = SANDBOX_CREDENTIALS["AWS_ACCESS_KEY_ID"], SANDBOX_CREDENTIALS["AWS_SECRET_ACCESS_KEY"]
    assert refusal(lambda: client(sandbox, "iam", *admin, token="made-up-token").list_roles())[1] == "InvalidClientTokenId"
    user_key, user_secret, _ = admin_role["user"]
    sandbox.boto3_client("iam").update_access_key(UserName="bob", AccessKeyId=user_key, Status="Inactive")
    assert refusal(lambda: client(sandbox, "iam", user_key, user_secret).list_roles())[1] == "InvalidClientTokenId"


def _open(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:  # noqa: S310 - the sandbox's loopback endpoint
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_a_presigned_url_is_checked_for_its_signature_and_its_expiry(sandbox, bucket):
    s3 = client(sandbox, "s3")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "vision/a.csv"}, ExpiresIn=600)
    assert _open(url) == (200, b"vision data")
    status, body = _open(url.replace("vision/a.csv", "vision/other.csv"))
    assert status == 403 and b"<Code>SignatureDoesNotMatch</Code>" in body
    wrong = client(sandbox, "s3", secret="not-the-secret").generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "vision/a.csv"})
    assert _open(wrong)[0] == 403
    # Signed an hour ago for ten minutes: expired (the signer's clock, not a wait).
    an_hour_ago = datetime.datetime.now(datetime.UTC).replace(tzinfo=None) - datetime.timedelta(hours=1)
    with mock.patch("botocore.auth.get_current_datetime", return_value=an_hour_ago):
        stale = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "vision/a.csv"}, ExpiresIn=600)
    status, body = _open(stale)
    assert status == 403 and b"<Message>Request has expired</Message>" in body


def test_a_request_signed_long_ago_is_refused(sandbox):
    an_hour_ago = datetime.datetime.now(datetime.UTC).replace(tzinfo=None) - datetime.timedelta(hours=1)
    sagemaker = client(sandbox, "sagemaker")
    with mock.patch("botocore.auth.get_current_datetime", return_value=an_hour_ago):
        status, code, message = refusal(sagemaker.list_domains)
    assert (status, code) == (403, "InvalidSignatureException") and message.startswith("Signature expired")
    sagemaker.list_domains()
