"""IAM's grammar of condition values in the sandbox: a JSON number is stored as IAM stores it, a malformed value refused."""

from __future__ import annotations

import json

import pytest
from moto.iam.exceptions import MalformedPolicyDocument
from moto.iam.policy_validation import IAMPolicyDocumentValidator

from sandbox import services


def _policy(condition) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "*", "Condition": condition}]})


@pytest.fixture(autouse=True)
def installed():
    services.install()


@pytest.mark.parametrize(
    "condition",
    [
        {"NumericLessThanEquals": {"s3:max-keys": 1000}},
        {"NumericLessThan": {"aws:EpochTime": 4102444800.5}},
        {"NumericGreaterThanEquals": {"aws:EpochTime": [1700000000]}},
        {"DateGreaterThan": {"aws:EpochTime": 1700000000}},
        {"StringEquals": {"aws:PrincipalAccount": 123456789012}},
        {"Bool": {"aws:SecureTransport": True}},
    ],
    ids=["a number", "a float", "a list of numbers", "an epoch date", "an account as a number", "a Boolean"],
)
def test_a_json_number_or_boolean_is_a_condition_value(condition):
    IAMPolicyDocumentValidator(_policy(condition)).validate()


@pytest.mark.parametrize(
    "condition",
    [{"NumericLessThan": {"s3:max-keys": {"n": 1}}}, {"DateGreaterThan": {"aws:CurrentTime": "tomorrow"}}],
    ids=["an object", "no date"],
)
def test_a_value_iam_refuses_is_still_refused(condition):
    with pytest.raises(MalformedPolicyDocument):
        IAMPolicyDocumentValidator(_policy(condition)).validate()
