"""Amazon Managed Service for Prometheus workspaces in the sandbox, called through boto3 as the modules call it."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from tests.unit.sandbox.aws_errors import error_code, refused
from tests.unit.sandbox.polling import unless_gone, wait_until


def status_of(amp, workspace_id):
    return unless_gone(lambda: amp.describe_workspace(workspaceId=workspace_id)["workspace"]["status"]["statusCode"], "ResourceNotFoundException")


def wait_status(amp, workspace_id, wanted, timeout=15):
    wait_until(lambda: status_of(amp, workspace_id), wanted, workspace_id, timeout)


@pytest.fixture
def amp(sandbox):
    return sandbox.boto3_client("amp")


@pytest.fixture
def unvalidated(sandbox):
    """An amp client that sends what AWS would receive, without botocore's client-side checks."""
    import boto3
    from botocore.config import Config

    from sandbox.client import SANDBOX_CREDENTIALS

    return boto3.client(
        "amp", region_name="us-east-1", endpoint_url=sandbox.endpoint,
        aws_access_key_id="sandbox", aws_secret_access_key=SANDBOX_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        config=Config(parameter_validation=False, retries={"total_max_attempts": 1}),
    )


@pytest.fixture
def slow(sandbox):
    """Transitional statuses last long enough to be observed on a loaded machine."""
    sandbox.configure(status_delay=2.0)
    return sandbox


def test_create_is_creating_then_active_and_describe_carries_the_endpoint(amp, slow):
    created = amp.create_workspace(alias="hyperpod-observability", tags={"team": "platform"})
    assert created["ResponseMetadata"]["HTTPStatusCode"] == 202
    assert created["status"] == {"statusCode": "CREATING"}
    assert created["tags"] == {"team": "platform"}
    workspace_id = created["workspaceId"]
    assert workspace_id.startswith("ws-")
    assert created["arn"] == f"arn:aws:aps:us-east-1:123456789012:workspace/{workspace_id}"
    assert "prometheusEndpoint" not in created  # CreateWorkspaceResponse has no endpoint
    described = amp.describe_workspace(workspaceId=workspace_id)["workspace"]
    assert described["status"]["statusCode"] == "CREATING"
    assert described["alias"] == "hyperpod-observability"
    assert described["prometheusEndpoint"] == f"https://aps-workspaces.us-east-1.amazonaws.com/workspaces/{workspace_id}/"
    assert described["tags"] == {"team": "platform"}
    wait_status(amp, workspace_id, "ACTIVE")


def test_delete_is_deleting_then_not_found(amp, sandbox):
    workspace_id = amp.create_workspace(alias="to-delete")["workspaceId"]
    wait_status(amp, workspace_id, "ACTIVE")
    sandbox.configure(status_delay=2.0)
    amp.delete_workspace(workspaceId=workspace_id)
    assert status_of(amp, workspace_id) == "DELETING"
    assert [w["status"]["statusCode"] for w in amp.list_workspaces()["workspaces"]] == ["DELETING"]
    assert refused(amp.delete_workspace, workspaceId=workspace_id) == "ConflictException"
    sandbox.configure(status_delay=0.2)
    wait_status(amp, workspace_id, None)
    assert amp.list_workspaces()["workspaces"] == []
    assert refused(amp.list_tags_for_resource, resourceArn=f"arn:aws:aps:us-east-1:123456789012:workspace/{workspace_id}") == "ResourceNotFoundException"


def test_missing_workspace_is_resource_not_found_with_model_members(amp):
    with pytest.raises(ClientError) as excinfo:
        amp.describe_workspace(workspaceId="ws-00000000-0000-0000-0000-000000000000")
    error = excinfo.value.response
    assert error["Error"]["Code"] == "ResourceNotFoundException"
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 404
    assert error["resourceId"] == "ws-00000000-0000-0000-0000-000000000000"
    assert error["resourceType"]
    for call in (lambda: amp.delete_workspace(workspaceId="ws-missing"),
                 lambda: amp.update_workspace_alias(workspaceId="ws-missing", alias="x")):
        with pytest.raises(ClientError) as excinfo:
            call()
        assert error_code(excinfo) == "ResourceNotFoundException"


def test_writes_to_a_workspace_that_is_not_active_are_conflicts(amp, slow):
    workspace_id = amp.create_workspace(alias="busy")["workspaceId"]
    for call in (lambda: amp.delete_workspace(workspaceId=workspace_id),
                 lambda: amp.update_workspace_alias(workspaceId=workspace_id, alias="renamed")):
        with pytest.raises(ClientError) as excinfo:
            call()
        assert error_code(excinfo) == "ConflictException"
        assert excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"] == 409
        assert excinfo.value.response["resourceId"] == workspace_id
    slow.configure(status_delay=0.2)
    wait_status(amp, workspace_id, "ACTIVE")
    slow.configure(status_delay=2.0)
    amp.update_workspace_alias(workspaceId=workspace_id, alias="  renamed  ")
    described = amp.describe_workspace(workspaceId=workspace_id)["workspace"]
    assert described["status"]["statusCode"] == "UPDATING"
    assert described["alias"] == "renamed"  # AWS strips blanks at both ends


def test_list_alias_is_a_prefix_filter_and_paginates(amp, sandbox):
    ids = {alias: amp.create_workspace(alias=alias)["workspaceId"] for alias in ("obs", "obs-2", "other")}
    listed = amp.list_workspaces(alias="obs")["workspaces"]
    assert sorted(w["alias"] for w in listed) == ["obs", "obs-2"]
    assert {w["workspaceId"] for w in listed} == {ids["obs"], ids["obs-2"]}
    assert all("prometheusEndpoint" not in w for w in listed)  # WorkspaceSummary has no endpoint
    first = amp.list_workspaces(maxResults=2)
    assert len(first["workspaces"]) == 2 and first["nextToken"]
    second = amp.list_workspaces(maxResults=2, nextToken=first["nextToken"])
    assert len(second["workspaces"]) == 1 and "nextToken" not in second
    seen = [w["workspaceId"] for w in first["workspaces"] + second["workspaces"]]
    assert sorted(seen) == sorted(ids.values())
    paginated = [w for page in amp.get_paginator("list_workspaces").paginate(PaginationConfig={"PageSize": 1}) for w in page["workspaces"]]
    assert len(paginated) == 3


@pytest.mark.parametrize(
    "request_args",
    [
        {"alias": ""},
        {"alias": "x" * 101},
        {"alias": "ok", "kmsKeyArn": "not-an-arn"},
        {"alias": "ok", "tags": {"bad key!": "v"}},
        {"alias": "ok", "tags": {"aws:reserved": "v"}},
        {"alias": "   "},
    ],
    ids=["empty-alias", "long-alias", "kms-pattern", "tag-key-pattern", "aws-prefix", "blank-alias"],
)
def test_bad_create_requests_are_validation_errors_and_create_nothing(amp, unvalidated, request_args):
    with pytest.raises(ClientError) as excinfo:
        unvalidated.create_workspace(**request_args)
    assert error_code(excinfo) == "ValidationException"
    assert excinfo.value.response["reason"] in ("FIELD_VALIDATION_FAILED", "OTHER", "CANNOT_PARSE")
    assert amp.list_workspaces()["workspaces"] == []


def test_bad_list_requests_are_validation_errors(unvalidated):
    for call in (lambda: unvalidated.list_workspaces(maxResults=1001), lambda: unvalidated.list_workspaces(nextToken="not-a-token")):
        with pytest.raises(ClientError) as excinfo:
            call()
        assert error_code(excinfo) == "ValidationException"


def test_tags_round_trip_and_limits(amp):
    created = amp.create_workspace(alias="tagged", tags={"a": "1", "b": "2"})
    arn = created["arn"]
    amp.tag_resource(resourceArn=arn, tags={"c": "3", "a": "one"})
    amp.untag_resource(resourceArn=arn, tagKeys=["b"])
    assert amp.list_tags_for_resource(resourceArn=arn)["tags"] == {"a": "one", "c": "3"}
    assert amp.describe_workspace(workspaceId=created["workspaceId"])["workspace"]["tags"] == {"a": "one", "c": "3"}
    assert refused(amp.tag_resource, resourceArn=arn, tags={f"k{i}": "v" for i in range(49)}) == "ValidationException"
    assert refused(amp.tag_resource, resourceArn=arn, tags={"aws:x": "v"}) == "ValidationException"
    assert refused(amp.tag_resource, resourceArn="arn:aws:aps:us-east-1:123456789012:workspace/ws-nope", tags={"a": "1"}) == "ResourceNotFoundException"
    assert refused(amp.tag_resource, resourceArn="not-an-arn", tags={"a": "1"}) == "ValidationException"


def test_client_token_makes_create_idempotent(amp):
    first = amp.create_workspace(alias="once", clientToken="token-1")
    again = amp.create_workspace(alias="once", clientToken="token-1")
    assert again["workspaceId"] == first["workspaceId"]
    assert len(amp.list_workspaces()["workspaces"]) == 1
    assert refused(amp.create_workspace, alias="different", clientToken="token-1") == "ConflictException"


def test_kms_key_must_exist_and_a_disabled_key_fails_the_creation(amp, sandbox):
    kms = sandbox.boto3_client("kms")
    key = kms.create_key()["KeyMetadata"]
    created = amp.create_workspace(alias="encrypted", kmsKeyArn=key["Arn"])
    assert created["kmsKeyArn"] == key["Arn"]
    wait_status(amp, created["workspaceId"], "ACTIVE")
    assert amp.describe_workspace(workspaceId=created["workspaceId"])["workspace"]["kmsKeyArn"] == key["Arn"]
    missing = key["Arn"].rsplit("/", 1)[0] + "/00000000-0000-0000-0000-000000000000"
    assert refused(amp.create_workspace, alias="missing-key", kmsKeyArn=missing) == "ValidationException"
    kms.disable_key(KeyId=key["KeyId"])
    failing = amp.create_workspace(alias="disabled-key", kmsKeyArn=key["Arn"])
    wait_status(amp, failing["workspaceId"], "CREATION_FAILED")
    assert refused(amp.update_workspace_alias, workspaceId=failing["workspaceId"], alias="x") == "ConflictException"
    amp.delete_workspace(workspaceId=failing["workspaceId"])  # a failed workspace can be deleted
    wait_status(amp, failing["workspaceId"], None)


def test_the_workspace_quota_is_enforced(amp):
    for index in range(25):
        amp.create_workspace(alias=f"w{index}")
    with pytest.raises(ClientError) as excinfo:
        amp.create_workspace(alias="one-too-many")
    assert error_code(excinfo) == "ServiceQuotaExceededException"
    assert excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"] == 402


def test_requests_are_logged_as_amp_reads_and_writes(amp, sandbox):
    sandbox.clear_requests()
    workspace_id = amp.create_workspace(alias="logged")["workspaceId"]
    amp.describe_workspace(workspaceId=workspace_id)
    amp.list_workspaces(alias="logged")
    logged = [(r["service"], r["operation"], r["kind"]) for r in sandbox.requests()]
    assert logged == [
        ("amp", "CreateWorkspace", "write"),
        ("amp", "DescribeWorkspace", "read"),
        ("amp", "ListWorkspaces", "read"),
    ]
