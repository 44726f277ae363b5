"""The calls verify_isolation makes (iam.simulate_principal_policy, access_analyzer.check_access_not_granted): retried on
throttling, any other error raised as the collection's typed error with AWS's code kept."""

from __future__ import annotations

import json

import boto3
import pytest
from ansible_collections.amazon.aws.plugins.module_utils import cloud
from ansible_collections.hyperpod.tenancy.plugins.module_utils import access_analyzer, iam
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import AccessAnalyzerError, IamError, error_code
from botocore.stub import Stubber

ROLE = "arn:aws:iam::123456789012:role/hyperpod-vision-execution"
ACTIONS = ["s3:GetObject", "s3:PutObject"]
SIMULATION = {"PolicySourceArn": ROLE, "ActionNames": ACTIONS, "ResourceArns": ["arn:aws:s3:::data/nlp/x"]}
CHECK = {
    "policyDocument": json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]}),
    "access": [{"actions": ["s3:GetObject"], "resources": ["arn:aws:s3:::data/nlp/x"]}],
    "policyType": "IDENTITY_POLICY",
}
PASS = {"result": "PASS", "message": "The policy document does not grant access to perform the listed actions or resources.", "reasons": []}


@pytest.fixture
def sleeps(monkeypatch):
    """The back-off's sleeps, recorded instead of slept."""
    slept = []
    monkeypatch.setattr(cloud.time, "sleep", slept.append)
    return slept


def stubbed(service):
    client = boto3.client(service, region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")
    return client, Stubber(client)


def evaluation(action):
    return {"EvalActionName": action, "EvalResourceName": "arn:aws:s3:::data/nlp/x", "EvalDecision": "implicitDeny"}


def test_a_simulation_reads_every_page_and_counts_them(sleeps):
    client, stub = stubbed("iam")
    stub.add_response("simulate_principal_policy", {"EvaluationResults": [evaluation(ACTIONS[0])], "IsTruncated": True, "Marker": "m1"}, SIMULATION)
    stub.add_response("simulate_principal_policy", {"EvaluationResults": [evaluation(ACTIONS[1])], "IsTruncated": False}, dict(SIMULATION, Marker="m1"))
    with stub:
        results, pages = iam.simulate_principal_policy(client, **SIMULATION)
    stub.assert_no_pending_responses()
    assert [r["EvalActionName"] for r in results] == ACTIONS
    assert pages == 2
    assert sleeps == []


def test_a_throttled_simulation_page_is_retried_alone(sleeps):
    """IAM throttles with ``Throttling``; the page is asked again from its own marker, not the pages before it."""
    client, stub = stubbed("iam")
    stub.add_response("simulate_principal_policy", {"EvaluationResults": [evaluation(ACTIONS[0])], "IsTruncated": True, "Marker": "m1"}, SIMULATION)
    stub.add_client_error("simulate_principal_policy", service_error_code="Throttling", http_status_code=400, expected_params=dict(SIMULATION, Marker="m1"))
    stub.add_response("simulate_principal_policy", {"EvaluationResults": [evaluation(ACTIONS[1])], "IsTruncated": False}, dict(SIMULATION, Marker="m1"))
    with stub:
        results, pages = iam.simulate_principal_policy(client, **SIMULATION)
    stub.assert_no_pending_responses()
    assert [r["EvalActionName"] for r in results] == ACTIONS
    assert pages == 2
    assert len(sleeps) == 1


@pytest.mark.parametrize("code, status", [("AccessDenied", 403), ("NoSuchEntity", 404), ("InvalidInput", 400)])
def test_a_refused_simulation_raises_iams_error_with_its_code_at_once(sleeps, code, status):
    """A simulation IAM did not answer is never read as an answer: not even a missing principal is a value."""
    client, stub = stubbed("iam")
    stub.add_client_error("simulate_principal_policy", service_error_code=code, http_status_code=status)
    with stub, pytest.raises(IamError, match="Failed to simulate principal policy") as raised:
        iam.simulate_principal_policy(client, **SIMULATION)
    assert error_code(raised.value) == code
    assert sleeps == []


@pytest.mark.parametrize("code, status", [("ThrottlingException", 429), ("InternalServerException", 500)])
def test_a_throttled_or_failed_check_is_retried_until_answered(sleeps, code, status):
    client, stub = stubbed("accessanalyzer")
    stub.add_client_error("check_access_not_granted", service_error_code=code, http_status_code=status)
    stub.add_client_error("check_access_not_granted", service_error_code=code, http_status_code=status)
    stub.add_response("check_access_not_granted", PASS, CHECK)
    with stub:
        answer = access_analyzer.check_access_not_granted(client, **CHECK)
    stub.assert_no_pending_responses()
    assert answer == PASS
    assert len(sleeps) == 2


@pytest.mark.parametrize("code, status", [("AccessDeniedException", 403), ("ValidationException", 400), ("UnprocessableEntityException", 422)])
def test_a_refused_check_raises_access_analyzers_error_with_its_code_at_once(sleeps, code, status):
    client, stub = stubbed("accessanalyzer")
    stub.add_client_error("check_access_not_granted", service_error_code=code, http_status_code=status)
    with stub, pytest.raises(AccessAnalyzerError, match="Failed to check access not granted") as raised:
        access_analyzer.check_access_not_granted(client, **CHECK)
    assert error_code(raised.value) == code
    assert sleeps == []


def test_a_check_that_is_throttled_to_the_end_raises_no_answer(sleeps):
    client, stub = stubbed("accessanalyzer")
    for _attempt in range(10):
        stub.add_client_error("check_access_not_granted", service_error_code="ThrottlingException", http_status_code=429)
    with stub, pytest.raises(AccessAnalyzerError) as raised:
        access_analyzer.check_access_not_granted(client, **CHECK)
    stub.assert_no_pending_responses()
    assert error_code(raised.value) == "ThrottlingException"
    assert len(sleeps) == 9
