"""The evaluator says what AWS's documentation says, example by example.

Each case cites the page of the IAM User Guide it comes from; principalmapper's answers differ on the
cases marked ``principalmapper differs`` (the reason the collection evaluates itself).
"""

from __future__ import annotations

import json
import urllib.parse

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import iam_evaluation as ev

ACCOUNT = "123456789012"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/team-role"
SESSION = f"arn:aws:sts::{ACCOUNT}:assumed-role/team-role/alice"


def _role(*policies, boundary=None, session_policy=None, tags=None):
    return ev.Principal(
        ACCOUNT,
        [(f"p{i}", {"Version": "2012-10-17", "Statement": s if isinstance(s, list) else [s]}) for i, s in enumerate(policies)],
        role_arn=ROLE,
        session_arn=SESSION,
        boundary=boundary,
        session_policy=session_policy,
        tags=tags,
    )


def _decide(principal, action, resource, context=None, resource_policy=None):
    return ev.evaluate(principal, action, resource, context, resource_policy)["EvalDecision"]


def _allow(action="*", resource="*", **extra):
    return dict({"Effect": "Allow", "Action": action, "Resource": resource}, **extra)


def _doc(*statements):
    return {"Version": "2012-10-17", "Statement": list(statements)}


# --- evaluation order (reference_policies_evaluation-logic_policy-eval-denyallow.html) ----------


def test_nothing_allows_by_default():
    assert _decide(_role(), "s3:GetObject", "arn:aws:s3:::b/k") == ev.IMPLICIT_DENY


def test_an_explicit_deny_wins_over_any_allow():
    principal = _role(_allow(), {"Effect": "Deny", "Action": "s3:*", "Resource": "arn:aws:s3:::b/secret/*"})
    assert _decide(principal, "s3:GetObject", "arn:aws:s3:::b/secret/x") == ev.EXPLICIT_DENY
    assert _decide(principal, "s3:GetObject", "arn:aws:s3:::b/open/x") == ev.ALLOWED


def test_a_boundary_limits_the_identity_policies():
    principal = _role(_allow("s3:*"), boundary=_doc(_allow("s3:GetObject")))
    assert _decide(principal, "s3:GetObject", "arn:aws:s3:::b/k") == ev.ALLOWED
    assert _decide(principal, "s3:PutObject", "arn:aws:s3:::b/k") == ev.IMPLICIT_DENY
    # ... and grants nothing by itself.
    assert _decide(_role(boundary=_doc(_allow())), "s3:GetObject", "arn:aws:s3:::b/k") == ev.IMPLICIT_DENY


def test_a_session_policy_limits_the_role():
    principal = _role(_allow("s3:*"), session_policy=_doc(_allow("s3:List*")))
    assert _decide(principal, "s3:ListBucket", "arn:aws:s3:::b") == ev.ALLOWED
    assert _decide(principal, "s3:GetObject", "arn:aws:s3:::b/k") == ev.IMPLICIT_DENY


def test_a_resource_policy_naming_the_session_allows_past_boundary_and_identity():
    # "Resource-based policies ... role session ARN: an implicit deny in identity-based policies, a
    # permissions boundary or a session policy does not limit the grant."
    bucket_policy = _doc({"Effect": "Allow", "Principal": {"AWS": SESSION}, "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/*"})
    principal = _role(boundary=_doc(_allow("ec2:*")))
    assert _decide(principal, "s3:GetObject", "arn:aws:s3:::b/k", resource_policy=bucket_policy) == ev.ALLOWED


def test_a_resource_policy_naming_the_role_is_limited_by_the_boundary():
    # "... IAM role ARN: an implicit deny in a permissions boundary or session policy limits the grant."
    bucket_policy = _doc({"Effect": "Allow", "Principal": {"AWS": ROLE}, "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/*"})
    assert _decide(_role(), "s3:GetObject", "arn:aws:s3:::b/k", resource_policy=bucket_policy) == ev.ALLOWED
    assert _decide(_role(boundary=_doc(_allow("ec2:*"))), "s3:GetObject", "arn:aws:s3:::b/k", resource_policy=bucket_policy) == ev.IMPLICIT_DENY
    assert _decide(_role(session_policy=_doc(_allow("ec2:*"))), "s3:GetObject", "arn:aws:s3:::b/k", resource_policy=bucket_policy) == ev.IMPLICIT_DENY


def test_an_account_principal_delegates_to_identity_policies():
    bucket_policy = _doc({"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}, "Action": "s3:*", "Resource": "arn:aws:s3:::b/*"})
    assert _decide(_role(), "s3:GetObject", "arn:aws:s3:::b/k", resource_policy=bucket_policy) == ev.IMPLICIT_DENY
    assert _decide(_role(_allow("s3:GetObject")), "s3:GetObject", "arn:aws:s3:::b/k", resource_policy=bucket_policy) == ev.ALLOWED


def test_a_deny_in_the_bucket_policy_applies_to_every_principal():
    bucket_policy = _doc(
        {"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": "arn:aws:s3:::b/*", "Condition": {"Bool": {"aws:SecureTransport": "false"}}}
    )
    principal = _role(_allow())
    assert _decide(principal, "s3:GetObject", "arn:aws:s3:::b/k", {"aws:SecureTransport": False}, bucket_policy) == ev.EXPLICIT_DENY
    assert _decide(principal, "s3:GetObject", "arn:aws:s3:::b/k", {"aws:SecureTransport": True}, bucket_policy) == ev.ALLOWED


def test_not_principal_excludes():
    bucket_policy = _doc({"Effect": "Deny", "NotPrincipal": {"AWS": [ROLE, SESSION]}, "Action": "s3:*", "Resource": "arn:aws:s3:::b/*"})
    assert _decide(_role(_allow()), "s3:GetObject", "arn:aws:s3:::b/k", resource_policy=bucket_policy) == ev.ALLOWED
    other = ev.Principal(ACCOUNT, [("p", _doc(_allow()))], role_arn=f"arn:aws:iam::{ACCOUNT}:role/x", session_arn=f"arn:aws:sts::{ACCOUNT}:assumed-role/x/s")
    assert _decide(other, "s3:GetObject", "arn:aws:s3:::b/k", resource_policy=bucket_policy) == ev.EXPLICIT_DENY


# --- NotAction, NotResource (reference_policies_elements_notaction.html, _notresource.html) ------


def test_not_action_allows_everything_else():
    # The guide's example: everything but IAM.
    principal = _role({"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"})
    assert _decide(principal, "s3:GetObject", "arn:aws:s3:::b/k") == ev.ALLOWED
    assert _decide(principal, "iam:PassRole", ROLE) == ev.IMPLICIT_DENY


def test_not_action_with_deny_denies_everything_else():
    principal = _role(_allow(), {"Effect": "Deny", "NotAction": ["iam:Get*", "iam:List*"], "Resource": "*"})
    assert _decide(principal, "iam:GetRole", ROLE) == ev.ALLOWED
    assert _decide(principal, "s3:GetObject", "arn:aws:s3:::b/k") == ev.EXPLICIT_DENY


def test_not_resource():
    principal = _role({"Effect": "Allow", "Action": "s3:*", "NotResource": ["arn:aws:s3:::b/private/*"]})
    assert _decide(principal, "s3:GetObject", "arn:aws:s3:::b/public/x") == ev.ALLOWED
    assert _decide(principal, "s3:GetObject", "arn:aws:s3:::b/private/x") == ev.IMPLICIT_DENY


# --- matching ------------------------------------------------------------------------------------


def test_actions_are_case_insensitive_and_resources_are_not():
    principal = _role(_allow("S3:get*", "arn:aws:s3:::Bucket/*"))
    assert _decide(principal, "s3:GetObject", "arn:aws:s3:::Bucket/k") == ev.ALLOWED
    assert _decide(principal, "s3:GetObject", "arn:aws:s3:::bucket/k") == ev.IMPLICIT_DENY


def test_wildcards_stay_inside_their_arn_part():
    # "Each of the six colon-delimited components of the ARN is checked separately."
    assert ev.arn_matches("arn:aws:sagemaker:*:*:domain/*", "arn:aws:sagemaker:us-east-1:1:domain/d-1")
    assert not ev.arn_matches("arn:aws:sagemaker:*:domain/*", "arn:aws:sagemaker:us-east-1:1:domain/d-1")
    assert ev.arn_matches("arn:aws:s3:::b/team/*", "arn:aws:s3:::b/team/a:b/c")
    assert ev.arn_matches("arn:aws:s3:::b/t?am/*", "arn:aws:s3:::b/team/x")


def test_policy_variables():
    # reference_policies_variables.html: ${aws:username}, defaults, ${*} as a literal, a missing variable matches nothing.
    user = ev.Principal(ACCOUNT, [("p", _doc(_allow("s3:*", "arn:aws:s3:::b/home/${aws:username}/*")))], user_arn=f"arn:aws:iam::{ACCOUNT}:user/alice")
    assert _decide(user, "s3:GetObject", "arn:aws:s3:::b/home/alice/x") == ev.ALLOWED
    assert _decide(user, "s3:GetObject", "arn:aws:s3:::b/home/bob/x") == ev.IMPLICIT_DENY
    role = _role(_allow("s3:*", "arn:aws:s3:::b/home/${aws:username}/*"))
    assert _decide(role, "s3:GetObject", "arn:aws:s3:::b/home/x") == ev.IMPLICIT_DENY
    assert ev.substitute("a/${aws:x, 'dflt'}/b", {}) == "a/dflt/b"
    literal = _role(_allow("s3:*", "arn:aws:s3:::b/${*}"))
    assert _decide(literal, "s3:GetObject", "arn:aws:s3:::b/*") == ev.ALLOWED
    assert _decide(literal, "s3:GetObject", "arn:aws:s3:::b/x") == ev.IMPLICIT_DENY
    tagged = _role(_allow("s3:*", "arn:aws:s3:::b/${aws:PrincipalTag/team}/*"), tags={"team": "vision"})
    assert _decide(tagged, "s3:GetObject", "arn:aws:s3:::b/vision/x") == ev.ALLOWED
    assert _decide(tagged, "s3:GetObject", "arn:aws:s3:::b/nlp/x") == ev.IMPLICIT_DENY


# --- condition operators (reference_policies_elements_condition_operators.html) ------------------

CASES = [
    # operator, policy value, context value (None: key absent), expected
    ("StringEquals", "vision", "vision", True),
    ("StringEquals", "vision", "Vision", False),
    ("StringEquals", ["a", "vision"], "vision", True),
    ("StringEquals", "vision", None, False),
    ("StringNotEquals", "vision", "nlp", True),
    ("StringNotEquals", ["vision", "nlp"], "nlp", False),
    ("StringNotEquals", "vision", None, True),
    ("StringEqualsIgnoreCase", "vision", "VISION", True),
    ("StringNotEqualsIgnoreCase", "vision", "VISION", False),
    ("StringLike", "vision/*", "vision/a/b", True),
    ("StringLike", "vision/*", "visionary/a", False),
    ("StringLike", "v?sion", "vision", True),
    ("StringNotLike", "vision/*", "nlp/x", True),
    ("StringNotLike", "vision/*", "vision/x", False),
    ("StringNotLike", "vision/*", None, True),  # principalmapper differs (False)
    ("StringEqualsIfExists", "vision", None, True),
    ("StringEqualsIfExists", "vision", "nlp", False),
    ("StringLikeIfExists", "v*", "vision", True),
    ("NumericLessThan", "10", "9", True),
    ("NumericLessThan", "10", "10", False),
    ("NumericLessThanEquals", "10", "10", True),
    ("NumericGreaterThan", "10", "10.5", True),
    ("NumericGreaterThanEquals", "10", "9", False),
    ("NumericEquals", "10", "10.0", True),
    ("NumericNotEquals", "10", "11", True),
    ("NumericEquals", "10", "ten", False),
    ("NumericLessThan", "10", None, False),
    ("DateGreaterThan", "2020-01-01T00:00:00Z", "2026-12-01T11:00:00Z", True),
    ("DateLessThan", "2020-01-01T00:00:00Z", "2026-12-01T11:00:00Z", False),
    ("DateLessThanEquals", "2020-01-01", "1577836800", True),
    ("DateEquals", "2020-01-01T00:00:00Z", "2020-01-01T00:00:00+00:00", True),
    ("DateNotEquals", "2020-01-01T00:00:00Z", "2020-01-02T00:00:00Z", True),
    ("Bool", "true", "true", True),
    ("Bool", "true", True, True),
    ("Bool", "false", True, False),
    ("Bool", "true", None, False),
    ("BoolIfExists", "true", None, True),
    ("BinaryEquals", "QmluYXJ5", "QmluYXJ5", True),
    ("IpAddress", "203.0.113.0/24", "203.0.113.7", True),
    ("IpAddress", "203.0.113.0/24", "198.51.100.1", False),
    ("NotIpAddress", "203.0.113.0/24", "198.51.100.1", True),
    ("NotIpAddress", "203.0.113.0/24", None, True),
    ("IpAddress", "2001:db8::/32", "2001:db8::1", True),
    ("ArnEquals", f"arn:aws:iam::{ACCOUNT}:role/*", ROLE, True),
    ("ArnLike", "arn:aws:iam::*:role/team-*", ROLE, True),
    ("ArnLike", "arn:aws:iam::*:role/other-*", ROLE, False),
    ("ArnNotEquals", "arn:aws:iam::*:role/other", ROLE, True),
    ("ArnNotLike", "arn:aws:iam::*:role/team-*", ROLE, False),
    ("ArnNotLike", "arn:aws:iam::*:role/team-*", None, True),  # principalmapper differs (False)
    ("Null", "true", None, True),
    ("Null", "true", "x", False),
    ("Null", "false", "x", True),
    ("Null", "false", None, False),
]


@pytest.mark.parametrize("operator, wanted, have, expected", CASES)
def test_condition_operator(operator, wanted, have, expected):
    context = {} if have is None else {"k:key": have}
    assert ev.condition_key_holds(operator, "k:key", wanted, context) is expected


def test_condition_keys_are_case_insensitive():
    assert ev.condition_key_holds("StringEquals", "aws:ResourceTag/team", "vision", {"AWS:resourcetag/team": "vision"})


def test_keys_and_operators_are_anded_values_ored():
    conditions = {"StringEquals": {"a:x": ["1", "2"], "a:y": "3"}, "StringLike": {"a:z": "q*"}}
    assert ev.conditions_hold(conditions, {"a:x": "2", "a:y": "3", "a:z": "qq"})
    assert not ev.conditions_hold(conditions, {"a:x": "2", "a:y": "4", "a:z": "qq"})
    assert not ev.conditions_hold(conditions, {"a:x": "2", "a:y": "3", "a:z": "zz"})


# Set operators (reference_policies_condition-single-vs-multi-valued-context-keys.html).
SET_CASES = [
    ("ForAllValues:StringEquals", ["a", "b"], ["a"], True),
    ("ForAllValues:StringEquals", ["a", "b"], ["a", "c"], False),
    ("ForAllValues:StringEquals", ["a", "b"], None, True),  # no value: true, as the guide warns
    ("ForAllValues:StringEquals", ["a", "b"], [], True),
    ("ForAnyValue:StringEquals", ["a", "b"], ["c", "b"], True),
    ("ForAnyValue:StringEquals", ["a", "b"], ["c"], False),
    ("ForAnyValue:StringEquals", ["a", "b"], None, False),
    ("ForAnyValue:StringNotEquals", ["a"], ["a", "c"], True),
    ("ForAllValues:StringNotEquals", ["a"], ["b", "c"], True),
    ("ForAllValues:StringLike", ["team/*"], ["team/a", "team/b"], True),
    ("ForAllValues:StringLike", ["team/*"], ["team/a", "other/b"], False),
]


@pytest.mark.parametrize("operator, wanted, have, expected", SET_CASES)
def test_set_operator(operator, wanted, have, expected):
    context = {} if have is None else {"aws:TagKeys": have}
    assert ev.condition_key_holds(operator, "aws:TagKeys", wanted, context) is expected


def test_for_any_value_ands_its_keys():
    # Keys of one block are ANDed whatever the qualifier. principalmapper differs (it ORs them).
    block = {"ForAnyValue:StringEquals": {"aws:TagKeys": ["team"], "aws:CalledVia": ["cloudformation.amazonaws.com"]}}
    assert not ev.conditions_hold(block, {"aws:TagKeys": ["team"], "aws:CalledVia": ["athena.amazonaws.com"]})
    assert ev.conditions_hold(block, {"aws:TagKeys": ["team"], "aws:CalledVia": ["cloudformation.amazonaws.com"]})


def test_condition_values_take_policy_variables():
    principal = _role(
        _allow("sagemaker:DescribeDomain", "*", Condition={"StringEquals": {"aws:ResourceTag/team": "${aws:PrincipalTag/team}"}}), tags={"team": "vision"}
    )
    assert _decide(principal, "sagemaker:DescribeDomain", "arn:d", {"aws:ResourceTag/team": "vision"}) == ev.ALLOWED
    assert _decide(principal, "sagemaker:DescribeDomain", "arn:d", {"aws:ResourceTag/team": "nlp"}) == ev.IMPLICIT_DENY
    untagged = _role(_allow("sagemaker:DescribeDomain", "*", Condition={"StringEquals": {"aws:ResourceTag/team": "${aws:PrincipalTag/team}"}}))
    assert _decide(untagged, "sagemaker:DescribeDomain", "arn:d", {"aws:ResourceTag/team": ""}) == ev.IMPLICIT_DENY


@pytest.mark.parametrize(
    "statement",
    [
        {"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": {"StringMatches": {"k": "v"}}},
        {"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": {"NullIfExists": {"k": "true"}}},
        {"Effect": "Allow", "Action": "*", "Resource": "*", "Conditions": {}},
        {"Effect": "allow", "Action": "*", "Resource": "*"},
        {"Effect": "Allow", "Action": "*", "NotAction": "iam:*", "Resource": "*"},
        {"Effect": "Allow", "Action": "*"},
    ],
)
def test_a_policy_it_cannot_read_is_an_error_not_a_guess(statement):
    with pytest.raises(ev.PolicyError):
        ev.evaluate(_role(statement), "s3:GetObject", "arn:aws:s3:::b/k", {"k": "v"})


def test_the_result_names_the_statements_and_the_boundary():
    principal = _role(dict(_allow("s3:GetObject"), Sid="Read"), boundary=_doc(_allow("s3:*")))
    result = ev.evaluate(principal, "s3:GetObject", "arn:aws:s3:::b/k")
    assert result["EvalDecision"] == ev.ALLOWED
    assert {"SourcePolicyId": "p0", "SourcePolicyType": "role", "Sid": "Read", "Index": 0} in result["MatchedStatements"]
    assert result["PermissionsBoundaryDecisionDetail"] == {"AllowedByPermissionsBoundary": True}
    denied = ev.evaluate(_role(_allow("s3:GetObject"), boundary=_doc(_allow("ec2:*"))), "s3:GetObject", "arn:aws:s3:::b/k")
    assert denied["PermissionsBoundaryDecisionDetail"] == {"AllowedByPermissionsBoundary": False}
    assert ev.denial_reason(principal, denied) == "because no permissions boundary allows the s3:GetObject action"


def test_policy_text_is_accepted_as_iam_returns_it():
    text = urllib.parse.quote(json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
    principal = ev.Principal(ACCOUNT, [("p", text)], role_arn=ROLE, session_arn=SESSION)
    assert _decide(principal, "s3:GetObject", "arn:aws:s3:::b/k") == ev.ALLOWED
