"""IAM SimulatePrincipalPolicy in the sandbox (sandbox/services/iam_simulation.py): the simulator evaluates with the
ContextEntries the caller gives and fills no condition key from the PolicySourceArn by itself; a key a statement that may
apply uses and the caller did not give is in MissingContextValues, on the EvaluationResult for ``*`` and on each
ResourceSpecificResult for named resources ("EvaluationResult", IAM API reference)."""

from __future__ import annotations

import json

import pytest

from sandbox.core import service_model, shape_problems

BUCKET = "arn:aws:s3:::data"
OBJECT = f"{BUCKET}/vision/k"
TRUST = json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
)


def _policy(*statements):
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


TAGGED = {
    "Effect": "Allow",
    "Action": "s3:GetObject",
    "Resource": f"{BUCKET}/*",
    "Condition": {"StringEquals": {"aws:PrincipalTag/team": "vision"}, "ArnLike": {"aws:PrincipalArn": "arn:aws:iam::*:role/vision"}},
}
OWN_PREFIX = {"Effect": "Allow", "Action": "s3:PutObject", "Resource": f"{BUCKET}/${{aws:PrincipalTag/team}}/*"}
OTHER_ACTION = {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": BUCKET, "Condition": {"StringLike": {"s3:prefix": "vision/*"}}}


@pytest.fixture
def iam(sandbox):
    return sandbox.boto3_client("iam")


@pytest.fixture
def role(iam):
    """A role tagged team=vision whose policy needs its own principal keys."""
    arn = iam.create_role(RoleName="vision", AssumeRolePolicyDocument=TRUST, Tags=[{"Key": "team", "Value": "vision"}])["Role"]["Arn"]
    iam.put_role_policy(RoleName="vision", PolicyName="data", PolicyDocument=_policy(TAGGED, OWN_PREFIX, OTHER_ACTION))
    return arn


def _entries(**keys):
    return [{"ContextKeyName": k.replace("__", "/").replace("_", ":", 1), "ContextKeyValues": [v], "ContextKeyType": "string"} for k, v in keys.items()]


def test_the_simulator_does_not_fill_the_roles_own_keys(iam, role):
    """ "Use GetContextKeysForPrincipalPolicy to understand what key names and values you must supply when you call
    SimulatePrincipalPolicy": the role's tag and ARN are not in the simulation unless the caller gives them."""
    [result] = iam.simulate_principal_policy(PolicySourceArn=role, ActionNames=["s3:GetObject"])["EvaluationResults"]
    assert result["EvalDecision"] == "implicitDeny"
    assert result["MissingContextValues"] == ["aws:PrincipalArn", "aws:PrincipalTag/team"]
    entries = _entries(aws_PrincipalTag__team="vision", aws_PrincipalArn=role)
    [given] = iam.simulate_principal_policy(PolicySourceArn=role, ActionNames=["s3:GetObject"], ResourceArns=[OBJECT], ContextEntries=entries)[
        "EvaluationResults"
    ]
    assert given["EvalDecision"] == "allowed" and given["ResourceSpecificResults"][0]["MissingContextValues"] == []
    [untold] = iam.simulate_principal_policy(PolicySourceArn=role, ActionNames=["s3:GetObject"], ResourceArns=[OBJECT])["EvaluationResults"]
    assert untold["EvalDecision"] == "implicitDeny"


def test_a_policy_variable_is_a_key_the_caller_must_give(iam, role):
    [result] = iam.simulate_principal_policy(PolicySourceArn=role, ActionNames=["s3:PutObject"], ResourceArns=[f"{BUCKET}/vision/k"])["EvaluationResults"]
    [specific] = result["ResourceSpecificResults"]
    assert specific["EvalResourceDecision"] == "implicitDeny" and specific["MissingContextValues"] == ["aws:PrincipalTag/team"]
    entries = _entries(aws_PrincipalTag__team="vision")
    [given] = iam.simulate_principal_policy(PolicySourceArn=role, ActionNames=["s3:PutObject"], ResourceArns=[f"{BUCKET}/vision/k"], ContextEntries=entries)[
        "EvaluationResults"
    ]
    assert given["ResourceSpecificResults"][0]["EvalResourceDecision"] == "allowed"
    assert given["ResourceSpecificResults"][0]["MissingContextValues"] == []


def test_missing_keys_are_per_resource_when_resources_are_named(iam, role):
    """ "This list is used when the resource in a simulation is "*" ... If you include a list of resources, then any missing
    context values are instead included under the ResourceSpecificResults section"."""
    arns = [f"{BUCKET}/vision/k", "arn:aws:s3:::elsewhere/k"]
    [result] = iam.simulate_principal_policy(PolicySourceArn=role, ActionNames=["s3:GetObject"], ResourceArns=arns)["EvaluationResults"]
    assert result["MissingContextValues"] == []
    by_arn = {r["EvalResourceName"]: r["MissingContextValues"] for r in result["ResourceSpecificResults"]}
    # The statement may apply to the bucket's objects only: elsewhere, no key is needed.
    assert by_arn == {arns[0]: ["aws:PrincipalArn", "aws:PrincipalTag/team"], arns[1]: []}


def test_a_statement_for_another_action_needs_no_key(iam, role):
    [result] = iam.simulate_principal_policy(PolicySourceArn=role, ActionNames=["s3:DeleteObject"])["EvaluationResults"]
    assert result["EvalDecision"] == "implicitDeny" and result["MissingContextValues"] == []
    [listing] = iam.simulate_principal_policy(PolicySourceArn=role, ActionNames=["s3:ListBucket"])["EvaluationResults"]
    assert listing["MissingContextValues"] == ["s3:prefix"]


def test_a_boundary_deny_on_a_principal_tag_needs_the_tag_given(iam, role):
    """A boundary's Deny on aws:PrincipalTag/tier does not apply to a simulation that does not give the tag: the key is
    reported missing, as the collection must see it (a decision that is not an allow with missing keys is unknown)."""
    boundary = _policy(
        {"Effect": "Allow", "Action": "*", "Resource": "*"},
        {"Effect": "Deny", "Action": "s3:GetObject", "Resource": "*", "Condition": {"StringEquals": {"aws:PrincipalTag/tier": "member"}}},
    )
    arn = iam.create_policy(PolicyName="boundary", PolicyDocument=boundary)["Policy"]["Arn"]
    iam.put_role_permissions_boundary(RoleName="vision", PermissionsBoundary=arn)
    iam.tag_role(RoleName="vision", Tags=[{"Key": "tier", "Value": "member"}])
    entries = _entries(aws_PrincipalTag__team="vision", aws_PrincipalArn=role)
    [untold] = iam.simulate_principal_policy(PolicySourceArn=role, ActionNames=["s3:GetObject"], ResourceArns=[OBJECT], ContextEntries=entries)[
        "EvaluationResults"
    ]
    assert untold["EvalDecision"] == "allowed" and untold["ResourceSpecificResults"][0]["MissingContextValues"] == ["aws:PrincipalTag/tier"]
    told = entries + _entries(aws_PrincipalTag__tier="member")
    [result] = iam.simulate_principal_policy(PolicySourceArn=role, ActionNames=["s3:GetObject"], ResourceArns=[OBJECT], ContextEntries=told)[
        "EvaluationResults"
    ]
    assert result["EvalDecision"] == "explicitDeny" and result["ResourceSpecificResults"][0]["MissingContextValues"] == []


def test_a_users_name_is_not_filled_either(iam):
    """For a user source too: ``${aws:username}`` resolves only from the ContextEntries (an assumption: the docs do not say
    the simulator sets it; not setting it is the stricter answer)."""
    iam.create_user(UserName="alice")
    iam.put_user_policy(
        UserName="alice", PolicyName="home", PolicyDocument=_policy({"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"{BUCKET}/${{aws:username}}/*"})
    )
    arn = iam.get_user(UserName="alice")["User"]["Arn"]
    [result] = iam.simulate_principal_policy(PolicySourceArn=arn, ActionNames=["s3:GetObject"], ResourceArns=[f"{BUCKET}/alice/k"])["EvaluationResults"]
    assert result["ResourceSpecificResults"][0]["EvalResourceDecision"] == "implicitDeny"
    assert result["ResourceSpecificResults"][0]["MissingContextValues"] == ["aws:username"]
    entries = _entries(aws_username="alice")
    [given] = iam.simulate_principal_policy(PolicySourceArn=arn, ActionNames=["s3:GetObject"], ResourceArns=[f"{BUCKET}/alice/k"], ContextEntries=entries)[
        "EvaluationResults"
    ]
    assert given["ResourceSpecificResults"][0]["EvalResourceDecision"] == "allowed"


def test_boolean_context_entries_meet_json_booleans(iam, role):
    """A ContextEntry of type boolean against a policy's unquoted ``true`` (reference_policies_grammar.html)."""
    iam.put_role_policy(
        RoleName="vision",
        PolicyName="mfa",
        PolicyDocument=_policy(
            {"Effect": "Allow", "Action": "s3:DeleteObject", "Resource": "*", "Condition": {"StringEquals": {"aws:MultiFactorAuthPresent": True}}}
        ),
    )
    entries = [{"ContextKeyName": "aws:MultiFactorAuthPresent", "ContextKeyValues": ["true"], "ContextKeyType": "boolean"}]
    [result] = iam.simulate_principal_policy(PolicySourceArn=role, ActionNames=["s3:DeleteObject"], ContextEntries=entries)["EvaluationResults"]
    assert result["EvalDecision"] == "allowed"


def test_eval_decision_details_is_empty_for_named_resources_and_absent_for_all(iam, role):
    """ "If the simulation evaluates policies within the same account and includes a resource ARN, then the parameter is
    present but the response is empty. If the simulation evaluates policies within the same account and specifies all
    resources (*), then the parameter is not returned"; a ResourceSpecificResult's "is returned only for cross-account
    simulations" (EvaluationResult, ResourceSpecificResult, IAM API Reference). The answers fit botocore's model."""
    output = service_model("iam").operation_model("SimulatePrincipalPolicy").output_shape
    named = iam.simulate_principal_policy(PolicySourceArn=role, ActionNames=["s3:GetObject"], ResourceArns=[OBJECT, "arn:aws:s3:::elsewhere/k"])
    [result] = named["EvaluationResults"]
    assert result["EvalDecisionDetails"] == {} and "EvalResourceName" not in result
    assert all("EvalDecisionDetails" not in specific for specific in result["ResourceSpecificResults"])
    answers = [named]
    for resources in ({}, {"ResourceArns": ["*"]}):
        answers.append(iam.simulate_principal_policy(PolicySourceArn=role, ActionNames=["s3:GetObject"], **resources))
        [every] = answers[-1]["EvaluationResults"]
        assert "EvalDecisionDetails" not in every and "ResourceSpecificResults" not in every and every["EvalResourceName"] == "*", resources
        assert every["MissingContextValues"] == ["aws:PrincipalArn", "aws:PrincipalTag/team"], resources
    for answer in answers:
        assert shape_problems(output, {k: v for k, v in answer.items() if k != "ResponseMetadata"}, answer=True) == []
