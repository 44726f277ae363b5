"""The sandbox's fault injection reaches the calls verify_isolation makes: Access Analyzer's CheckAccessNotGranted (served
by sandbox/access_analyzer.py, not moto) and IAM's SimulatePrincipalPolicy, so a test sees what a failing call does."""

from __future__ import annotations

import json

import botocore.exceptions
import pytest
from ansible_collections.amazon.aws.plugins.module_utils import cloud
from ansible_collections.hyperpod.tenancy.plugins.module_utils import access_analyzer, iam
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import AccessAnalyzerError, IamError, error_code

CHECK = "accessanalyzer:CheckAccessNotGranted"
SIMULATE = "iam:SimulatePrincipalPolicy"
OBJECT = "arn:aws:s3:::data/nlp/x"
REQUEST = {
    "policyDocument": json.dumps(
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::data/vision/*"}]}
    ),
    "access": [{"actions": ["s3:GetObject"], "resources": [OBJECT]}],
    "policyType": "IDENTITY_POLICY",
}


@pytest.fixture
def sleeps(monkeypatch):
    """The back-off's sleeps, recorded instead of slept."""
    slept = []
    monkeypatch.setattr(cloud.time, "sleep", slept.append)
    return slept


@pytest.fixture
def role(sandbox):
    """A role allowed s3:GetObject on its own team's objects only."""
    client = sandbox.boto3_client("iam")
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
    arn = client.create_role(RoleName="hyperpod-vision-execution", AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
    client.put_role_policy(RoleName="hyperpod-vision-execution", PolicyName="team-data", PolicyDocument=REQUEST["policyDocument"])
    sandbox.clear_requests()
    return arn


def faults_of(sandbox, operation):
    return [r["fault"] for r in sandbox.requests() if r["operation"] == operation]


@pytest.mark.parametrize(
    "rate, kind, code, status",
    [
        ("throttle_rate", "throttle", "ThrottlingException", 429),
        ("error_rate", "error", "InternalServerException", 500),
        ("denial_rate", "deny", "AccessDeniedException", 403),
    ],
)
def test_a_fault_on_check_access_not_granted_is_answered_as_access_analyzer_answers_it(sandbox, rate, kind, code, status):
    sandbox.set_faults(operations=[CHECK], **{rate: 1.0})
    with pytest.raises(botocore.exceptions.ClientError) as raised:
        sandbox.boto3_client("accessanalyzer").check_access_not_granted(**REQUEST)
    assert raised.value.response["Error"]["Code"] == code
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == status
    assert faults_of(sandbox, "CheckAccessNotGranted") == [kind]


def test_a_fault_for_another_operation_leaves_the_check_answered(sandbox):
    sandbox.set_faults(throttle_rate=1.0, operations=[SIMULATE])
    assert sandbox.boto3_client("accessanalyzer").check_access_not_granted(**REQUEST)["result"] == "PASS"
    assert faults_of(sandbox, "CheckAccessNotGranted") == [""]


def test_a_check_throttled_twice_is_retried_then_answered(sandbox, sleeps):
    sandbox.set_faults(throttle_rate=1.0, times=2, operations=[CHECK])
    answer = access_analyzer.check_access_not_granted(sandbox.boto3_client("accessanalyzer"), **REQUEST)
    assert answer["result"] == "PASS" and "ResponseMetadata" not in answer
    assert faults_of(sandbox, "CheckAccessNotGranted") == ["throttle", "throttle", ""]
    assert len(sleeps) == 2


def test_a_denied_check_raises_the_collections_error_with_access_analyzers_code(sandbox, sleeps):
    sandbox.set_faults(denial_rate=1.0, operations=[CHECK])
    with pytest.raises(AccessAnalyzerError) as raised:
        access_analyzer.check_access_not_granted(sandbox.boto3_client("accessanalyzer"), **REQUEST)
    assert error_code(raised.value) == "AccessDeniedException"
    assert faults_of(sandbox, "CheckAccessNotGranted") == ["deny"]
    assert sleeps == []


def test_a_throttled_simulation_is_retried_then_answered_page_by_page(sandbox, role, sleeps):
    sandbox.set_faults(throttle_rate=1.0, times=1, operations=[SIMULATE])
    request = {"PolicySourceArn": role, "ActionNames": ["s3:GetObject", "s3:PutObject"], "ResourceArns": [OBJECT], "MaxItems": 1}
    results, pages = iam.simulate_principal_policy(sandbox.boto3_client("iam"), **request)
    assert [(r["EvalActionName"], r["EvalDecision"]) for r in results] == [("s3:GetObject", "implicitDeny"), ("s3:PutObject", "implicitDeny")]
    assert pages == 2
    assert faults_of(sandbox, "SimulatePrincipalPolicy") == ["throttle", "", ""]
    assert len(sleeps) == 1


def test_a_denied_simulation_raises_the_collections_error_with_iams_code(sandbox, role, sleeps):
    sandbox.set_faults(denial_rate=1.0, operations=[SIMULATE])
    with pytest.raises(IamError) as raised:
        iam.simulate_principal_policy(sandbox.boto3_client("iam"), PolicySourceArn=role, ActionNames=["s3:GetObject"], ResourceArns=[OBJECT])
    assert error_code(raised.value) == "AccessDenied"
    assert faults_of(sandbox, "SimulatePrincipalPolicy") == ["deny"]
    assert sleeps == []
