"""Which refusals are IAM propagation (module_utils/retry.py IAM_PROPAGATION), and that their retry stays bounded."""

from __future__ import annotations

import boto3
import pytest
from ansible_collections.amazon.aws.plugins.module_utils import cloud
from ansible_collections.hyperpod.tenancy.plugins.module_utils import sagemaker
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import SageMakerError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.retry import iam_propagation
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from sandbox import iam_propagation as sandbox_propagation

ROLE = "arn:aws:iam::123456789012:role/hyperpod-vision-studio"
DOMAIN = {"DomainName": "d", "AuthMode": "SSO", "DefaultUserSettings": {"ExecutionRole": ROLE}, "SubnetIds": ["subnet-1"], "VpcId": "vpc-1"}


def error(code, message):
    return ClientError({"Error": {"Code": code, "Message": message}}, "CreateDomain")


# The wordings AWS's services answer for a role they cannot see or assume yet (retry.py cites where each was seen).
PROPAGATION = [
    ("InvalidParameterException", "The specified principalArn is invalid: invalid principal."),
    ("InvalidParameterException", "Role provided in the request does not exist"),
    ("ValidationException", f'The execution role ARN "{ROLE}" is invalid. Please ensure that the role exists and that its trust relationship policy '
                            'allows the action "sts:AssumeRole" for the service principal "sagemaker.amazonaws.com".'),
    ("ValidationException", "The role ARN isn't valid. Make sure the role exists and that its trust relationship policy allows the action "
                            '"sts:AssumeRole" for the service principal "sagemaker.amazonaws.com".'),
    ("ValidationException", "SageMaker is unable to perform: sts:AssumeRole on the role. Check if you have a trust relationship for "
                            "'sagemaker.amazonaws.com' to assume the role."),
    ("ValidationException", f"Could not assume role {ROLE}. Please ensure that the role exists and allows principal 'sagemaker.amazonaws.com'."),
]  # fmt: skip

# The same codes for bad input: never retried.
NOT_PROPAGATION = [
    ("ValidationException", "1 validation error detected: Value 'd d' at 'domainName' failed to satisfy constraint"),
    ("ValidationException", "Subnet subnet-1 does not exist."),
    ("InvalidParameterException", "The kubernetesGroups can't start with system:, eks:: system:masters."),
    # A known wording under another code is some other refusal.
    ("AccessDeniedException", "SageMaker is unable to perform: sts:AssumeRole on the role."),
]


@pytest.mark.parametrize("code, message", PROPAGATION)
def test_each_wording_of_a_role_not_propagated_yet_is_iam_propagation(code, message):
    assert iam_propagation(error(code, message))


@pytest.mark.parametrize("code, message", NOT_PROPAGATION)
def test_the_same_codes_for_bad_input_are_not(code, message):
    assert not iam_propagation(error(code, message))


@pytest.mark.parametrize("operation", sorted(sandbox_propagation.REFUSALS))
def test_every_refusal_the_sandbox_answers_is_one_the_collection_retries(operation):
    # The sandbox answers in AWS's words (sandbox/iam_propagation.py), so the cold-run test proves the retry on AWS's text.
    code, message = sandbox_propagation.REFUSALS[operation]
    assert iam_propagation(error(code, message.format(arn=ROLE)))


def test_sagemaker_answers_in_aws_words_not_the_sandboxs_own():
    assert sandbox_propagation.REFUSALS["CreateDomain"][1].startswith('The execution role ARN "{arn}" is invalid. Please ensure that the role exists')


def test_a_role_that_never_becomes_usable_fails_after_the_bounded_retries(monkeypatch):
    # The words also mean a role that does not exist at all, or one SageMaker may never assume: the retry gives up.
    slept = []
    monkeypatch.setattr(cloud.time, "sleep", slept.append)
    client = boto3.client("sagemaker", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")
    attempts = []
    client.meta.events.register("before-parameter-build.sagemaker.CreateDomain", lambda **_: attempts.append(1))
    stub = Stubber(client)
    for _attempt in range(20):
        stub.add_client_error("create_domain", service_error_code="ValidationException", service_message=PROPAGATION[2][1], http_status_code=400)
    with stub, pytest.raises(SageMakerError, match="is invalid"):
        sagemaker.create_domain(client, **DOMAIN)
    # aws_retry's defaults: ten attempts, nine sleeps of at most 30 s each (jittered: typically far less).
    assert (len(attempts), len(slept)) == (10, 9)
    assert all(0 <= seconds <= 30 for seconds in slept)
