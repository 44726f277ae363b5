"""IAM Access Analyzer CheckAccessNotGranted on the sandbox: PASS/FAIL with the statements that may grant."""

from __future__ import annotations

import json

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import isolation
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_policy import render_team_policy
from botocore.exceptions import ClientError, ParamValidationError

from tests.unit.plugins.module_utils.test_isolation_matrix import ACTIONS, _principals, _rendered, _resources

ACCOUNT = "123456789012"
BUCKET = "hyperpod-team-data"


def _check(client, policy, actions=(), resources=()):
    access = {}
    if actions:
        access["actions"] = list(actions)
    if resources:
        access["resources"] = list(resources)
    return client.check_access_not_granted(policyDocument=json.dumps(policy), access=[access], policyType="IDENTITY_POLICY")


@pytest.fixture
def analyzer(sandbox):
    return sandbox.boto3_client("accessanalyzer")


def test_the_team_policy_grants_nothing_on_another_teams_objects(analyzer):
    policy = render_team_policy(
        "vision", ACCOUNT, "us-east-1", BUCKET, f"arn:aws:sagemaker:us-east-1:{ACCOUNT}:cluster/c", f"arn:aws:eks:us-east-1:{ACCOUNT}:cluster/e"
    )
    assert _check(analyzer, policy, ["s3:GetObject", "s3:PutObject", "s3:GetObjectVersion"], [f"arn:aws:s3:::{BUCKET}/nlp/x"])["result"] == "PASS"
    granted = _check(analyzer, policy, ["s3:GetObject"], [f"arn:aws:s3:::{BUCKET}/vision/x"])
    assert granted["result"] == "FAIL"
    assert [(r["statementIndex"], r.get("statementId")) for r in granted["reasons"]] == [(4, "TeamDataObjects")]
    # A condition may be met by some request: the tag-conditioned Studio statement counts as granting.
    assert _check(analyzer, policy, ["sagemaker:DescribeDomain"])["result"] == "FAIL"
    assert _check(analyzer, policy, ["iam:PassRole", "budgets:ModifyBudget", "sso:PutInlinePolicyToPermissionSet"])["result"] == "PASS"


def test_an_unconditional_deny_takes_access_away_and_not_action_grants(analyzer):
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "All", "Effect": "Allow", "NotAction": "iam:*", "Resource": "*"},
            {"Effect": "Deny", "Action": "s3:*", "Resource": f"arn:aws:s3:::{BUCKET}/nlp/*"},
        ],
    }
    assert _check(analyzer, policy, ["s3:GetObject"], [f"arn:aws:s3:::{BUCKET}/nlp/x"])["result"] == "PASS"
    assert _check(analyzer, policy, ["s3:GetObject"], [f"arn:aws:s3:::{BUCKET}/vision/x"])["result"] == "FAIL"
    assert _check(analyzer, policy, ["iam:PassRole"])["result"] == "PASS"


def test_a_bad_request_is_refused_as_aws_refuses_it(analyzer, sandbox):
    with pytest.raises(ClientError) as error:
        analyzer.check_access_not_granted(policyDocument="{not json", access=[{"actions": ["s3:GetObject"]}], policyType="IDENTITY_POLICY")
    assert error.value.response["Error"]["Code"] == "ValidationException"
    with pytest.raises(ClientError) as error:
        analyzer.check_access_not_granted(policyDocument="{}", access=[{}], policyType="SERVICE_CONTROL_POLICY")
    assert "Member must satisfy enum value set: [IDENTITY_POLICY, RESOURCE_POLICY]" in error.value.response["Error"]["Message"]
    with pytest.raises(ParamValidationError):
        analyzer.check_access_not_granted(policyDocument="{}", access=[{}])
    assert [r["operation"] for r in sandbox.requests()][-1] == "CheckAccessNotGranted"


def test_a_wildcard_outside_an_arns_resource_id_is_refused(analyzer):
    """ "You can only use a wildcard in the portion of the ARN that specifies the resource ID", while the actions are "Any
    strings that can be used as an action in an IAM policy" (Access, IAM Access Analyzer API Reference)."""
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:Get*", "Resource": f"arn:aws:s3:::{BUCKET}/vision/*"}]}
    for resource in ("*", f"arn:aws:s3:*::{BUCKET}/vision/x", "arn:aws:iam::*:role/vision", "arn:*:s3:::x", "arn:aws:s3?:::x"):
        with pytest.raises(ClientError) as error:
            _check(analyzer, policy, ["s3:GetObject"], [resource])
        assert error.value.response["Error"]["Code"] == "ValidationException", resource
    assert _check(analyzer, policy, ["s3:Get*"], [f"arn:aws:s3:::{BUCKET}/vision/*"])["result"] == "FAIL"
    assert _check(analyzer, policy, ["*"], [f"arn:aws:s3:::{BUCKET}/nlp/?"])["result"] == "PASS"


def test_the_collection_asks_about_no_wildcard_access_analyzer_refuses(analyzer):
    """verify_isolation's checks of the rendered policies against the sample teams' resources, asked of the sandbox:
    every resource ARN they ask about has its wildcards, if any, in the resource ID, and every check is answered."""
    documents = {pid: spec["identity"] for pid, spec in _rendered().items()}
    analyzed = isolation.access_not_granted(analyzer, documents, _principals(), _resources(), ACTIONS)
    assert analyzed["findings"] == [] and analyzed["checks"] > 0
