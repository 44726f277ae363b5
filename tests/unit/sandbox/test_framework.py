"""The sandbox's own machinery: request log, fault injection, model validation, status lifecycle, reset."""

from __future__ import annotations

import time

import botocore.exceptions
import pytest
from ansible_collections.amazon.aws.plugins.module_utils.retries import AWSRetry
from ansible_collections.hyperpod.tenancy.plugins.module_utils.retry import aws_retry

from sandbox import core
from sandbox.client import SandboxError
from sandbox.server import Faults


def test_request_log_counts_reads_and_writes_across_protocols(sandbox):
    sandbox.boto3_client("s3").create_bucket(Bucket="logged")  # REST-XML
    sandbox.boto3_client("s3").list_buckets()
    sandbox.boto3_client("iam").list_roles()  # query
    sandbox.boto3_client("sagemaker").list_domains()  # JSON
    sandbox.boto3_client("eks").list_clusters()  # REST-JSON
    logged = [(r["service"], r["operation"], r["kind"]) for r in sandbox.requests()]
    assert logged == [
        ("s3", "CreateBucket", "write"),
        ("s3", "ListBuckets", "read"),
        ("iam", "ListRoles", "read"),
        ("sagemaker", "ListDomains", "read"),
        ("eks", "ListClusters", "read"),
    ]
    assert [r["operation"] for r in sandbox.writes()] == ["CreateBucket"]
    sandbox.clear_requests()
    assert sandbox.requests() == []


def test_reset_forgets_resources_log_and_faults(sandbox):
    s3 = sandbox.boto3_client("s3")
    s3.create_bucket(Bucket="forgotten")
    sandbox.set_faults(throttle_rate=1.0, operations=["s3:HeadBucket"])
    sandbox.reset()
    assert s3.list_buckets()["Buckets"] == []
    assert len(sandbox.requests()) == 1


def test_throttling_fault_is_a_botocore_throttling_error(sandbox):
    sandbox.set_faults(throttle_rate=1.0, operations=["sagemaker:ListDomains"])
    with pytest.raises(botocore.exceptions.ClientError) as raised:
        sandbox.boto3_client("sagemaker").list_domains()
    assert raised.value.response["Error"]["Code"] == "ThrottlingException"
    sandbox.boto3_client("sagemaker").list_clusters()  # not in the fault list
    assert [r["fault"] for r in sandbox.requests()] == ["throttle", ""]


def test_the_identity_stores_rate_is_each_apis_and_identity_centers_collective():
    """ "Identity Store APIs have a throttle limit of 20 transactions per second (TPS) per API", Identity Center's "a
    collective throttle limit" (Quotas and limits in IAM Identity Center): a second's worth of one Identity Store API
    leaves another's untouched; a second's worth of one Identity Center API spends them all."""
    faults = Faults(rate_limits={"identitystore": 2, "sso-admin": 2})
    assert [faults.admit("identitystore", "ListGroups") for _request in range(3)] == [True, True, False]
    assert faults.admit("identitystore", "ListGroupMemberships") and faults.admit("identitystore", "GetGroupId")
    assert [faults.admit("sso-admin", "ListInstances") for _request in range(2)] == [True, True]
    assert not faults.admit("sso-admin", "ListPermissionSets")
    assert faults.admit("sagemaker", "ListDomains")  # no limit set


def test_plain_awsretry_gives_up_on_throttling_exception(sandbox):
    """Why module_utils/retry.py exists: AWSRetry alone does not retry SageMaker's throttling code."""
    sandbox.set_faults(throttle_rate=1.0, operations=["sagemaker:ListDomains"])
    retried = AWSRetry.jittered_backoff(retries=3, delay=0.01, max_delay=0.05)(sandbox.boto3_client("sagemaker").list_domains)
    with pytest.raises(botocore.exceptions.ClientError, match="ThrottlingException"):
        retried()
    assert len(sandbox.requests()) == 1


@pytest.mark.parametrize("service, call", [("iam", "list_roles"), ("sagemaker", "list_domains"), ("eks", "list_clusters")])
def test_faults_are_survived_by_the_collections_retry(sandbox, service, call):
    sandbox.set_faults(throttle_rate=0.4, error_rate=0.2, seed=3)
    client = sandbox.boto3_client(service)
    retried = aws_retry(retries=20, delay=0.01, max_delay=0.05)(getattr(client, call))
    for _ in range(5):
        retried()
    faults = [r["fault"] for r in sandbox.requests()]
    assert faults.count("") == 5
    assert "throttle" in faults and "error" in faults


@pytest.mark.parametrize("service, call, kwargs, code, status", [
    ("sagemaker", "list_domains", {}, "AccessDeniedException", 400),
    ("iam", "list_roles", {}, "AccessDenied", 403),
    ("s3", "list_buckets", {}, "AccessDenied", 403),
])
def test_a_denial_fault_is_answered_as_access_denied_and_not_retried(sandbox, service, call, kwargs, code, status):
    sandbox.set_faults(denial_rate=1.0)
    retried = aws_retry(retries=5, delay=0.01, max_delay=0.05)(getattr(sandbox.boto3_client(service), call))
    with pytest.raises(botocore.exceptions.ClientError) as raised:
        retried(**kwargs)
    assert raised.value.response["Error"]["Code"] == code
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == status
    assert [r["fault"] for r in sandbox.requests()] == ["deny"]


def test_latency_fault_delays_the_answer(sandbox):
    sandbox.set_faults(latency_ms=300, operations=["sts:GetCallerIdentity"])
    started = time.monotonic()
    sandbox.boto3_client("sts").get_caller_identity()
    assert time.monotonic() - started >= 0.3


def test_validation_follows_botocore_model():
    params = {
        "Name": "q",
        "ClusterArn": "arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdef123456",
        "ComputeQuotaConfig": {"ComputeQuotaResources": [{"InstanceType": "ml.p9.large", "Count": -1}], "PreemptTeamTasks": "Sometimes"},
        "ComputeQuotaTarget": {"TeamName": "Team_A", "FairShareWeight": 101},
    }
    with pytest.raises(core.AwsError) as raised:
        core.validate_request("sagemaker", "CreateComputeQuota", params)
    message = raised.value.message
    assert message.startswith("5 validation errors detected: ")
    assert "'ml.p9.large' at 'computeQuotaConfig.computeQuotaResources.1.member.instanceType'" in message
    count_path = "at 'computeQuotaConfig.computeQuotaResources.1.member.count'"
    assert count_path + " failed to satisfy constraint: Member must have value greater than or equal to 0" in message
    assert "'Team_A' at 'computeQuotaTarget.teamName' failed to satisfy constraint: Member must satisfy regular expression pattern" in message
    assert "computeQuotaTarget.fairShareWeight" in message and "'Sometimes'" in message
    assert raised.value.error_type == "ValidationException" and raised.value.code == 400


def test_validation_requires_members_and_accepts_a_good_request():
    with pytest.raises(core.AwsError, match="Value null at 'computeQuotaTarget' failed to satisfy constraint: Member must not be null"):
        core.validate_request("sagemaker", "CreateComputeQuota", {"Name": "q", "ClusterArn": "arn", "ComputeQuotaConfig": {}})
    core.validate_request(
        "sagemaker",
        "CreateComputeQuota",
        {
            "Name": "hyperpod-vision-quota",
            "ClusterArn": "arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdef123456",
            "ComputeQuotaConfig": {"ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Count": 4}]},
            "ComputeQuotaTarget": {"TeamName": "vision", "FairShareWeight": 10},
        },
    )


def test_lifecycle_settles_after_the_configured_delay(monkeypatch):
    monkeypatch.setitem(core.SETTINGS, "status_delay", 0.2)
    status = core.Lifecycle("Creating", "Created")
    assert status.status == "Creating" and not status.settled
    time.sleep(0.25)
    assert status.status == "Created" and status.settled
    status.move("Updating", "Updated")
    assert status.status == "Updating"
    status.settle_as("UpdateFailed")
    assert status.status == "UpdateFailed"


def test_a_status_from_before_a_reset_settles_without_acting(monkeypatch):
    """A request still in flight when the sandbox reset (a cancelled run's) makes nothing in the emptied cluster."""
    monkeypatch.setitem(core.SETTINGS, "status_delay", 0)
    acted = []
    before = core.Lifecycle("Creating", "Created", on_settle=acted.append)
    core.next_generation()
    after = core.Lifecycle("Creating", "Created", on_settle=acted.append)
    assert before.status == "Created" and after.status == "Created"
    assert acted == ["Created"]


def test_a_failed_administrative_call_says_why(sandbox):
    # A test whose reset fails learns the cause from the error, not from a server log in a temporary directory.
    with pytest.raises(SandboxError, match=r"PUT /_sandbox/faults: 500 .*TypeError: .*unexpected keyword argument 'no_such_fault'"):
        sandbox.set_faults(no_such_fault=1)


def test_status_delay_is_configurable_over_http(sandbox):
    assert sandbox.configure(status_delay=0.05)["status_delay"] == 0.05


def test_s3_faults_are_answered_as_s3_answers_them(sandbox):
    s3 = sandbox.boto3_client("s3")
    s3.create_bucket(Bucket="faulted")
    sandbox.set_faults(throttle_rate=1.0, operations=["s3:HeadBucket"])
    with pytest.raises(botocore.exceptions.ClientError) as raised:
        s3.head_bucket(Bucket="faulted")
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 503
    sandbox.set_faults(throttle_rate=1.0, operations=["s3:ListObjectsV2"])
    with pytest.raises(botocore.exceptions.ClientError) as raised:
        s3.list_objects_v2(Bucket="faulted")
    assert raised.value.response["Error"]["Code"] == "SlowDown"
    retried = aws_retry(retries=20, delay=0.01, max_delay=0.05)(s3.list_objects_v2)
    sandbox.set_faults(throttle_rate=0.5, error_rate=0.2, seed=5, operations=["s3:ListObjectsV2"])
    assert retried(Bucket="faulted")["KeyCount"] == 0


def test_bodyless_s3_head_faults_are_retried(sandbox):
    """A throttled HEAD has no body, so its error code is only "503"; the retry must still catch it."""
    s3 = sandbox.boto3_client("s3")
    s3.create_bucket(Bucket="headed")
    s3.put_object(Bucket="headed", Key="marker", Body=b"")
    sandbox.set_faults(throttle_rate=1.0, operations=["s3:HeadObject"])
    with pytest.raises(botocore.exceptions.ClientError) as raised:
        s3.head_object(Bucket="headed", Key="marker")
    assert raised.value.response["Error"]["Code"] == "503"
    sandbox.set_faults(throttle_rate=0.6, error_rate=0.2, seed=7, operations=["s3:HeadObject"])
    retried = aws_retry(retries=20, delay=0.01, max_delay=0.05)(s3.head_object)
    for _ in range(5):
        assert retried(Bucket="headed", Key="marker")["ContentLength"] == 0
    faults = [r["fault"] for r in sandbox.requests() if r["operation"] == "HeadObject"]
    assert faults.count("") >= 5 and faults.count("throttle") > 0
