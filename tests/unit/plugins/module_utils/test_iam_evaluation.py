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


@pytest.mark.parametrize("wanted", [["true", "false"], ["false", "true"], [True, False]])
@pytest.mark.parametrize("have", [None, "x"])
def test_the_values_of_a_null_condition_are_ored(wanted, have):
    """Several values of one key are ORed for every operator but the negated ones ("Conditions with multiple context keys
    or values", IAM User Guide, reference_policies_multi-value-conditions.html): Null ["true", "false"] holds whether the
    key is in the request or not, whichever value comes first; one value alone still decides as before."""
    context = {} if have is None else {"k:key": have}
    assert ev.condition_key_holds("Null", "k:key", wanted, context) is True
    assert ev.condition_key_holds("Null", "k:key", ["false", "false"], context) is (have is not None)
    assert ev.condition_key_holds("Null", "k:key", ["true"], context) is (have is None)


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


# --- JSON booleans and numbers (reference_policies_grammar.html) --------------------------------------
# "Values are enclosed in quotation marks. Quotation marks are optional for numeric and Boolean values."
# So ``true`` in a policy is the value "true", and ``10`` is "10"; a request context may carry Python bools and numbers.

JSON_VALUE_CASES = [
    # operator, policy value as JSON reads it, context value, expected
    ("StringEquals", True, "true", True),
    ("StringEquals", True, True, True),
    ("StringEquals", False, "true", False),
    ("StringNotEquals", True, "true", False),
    ("StringLike", True, "true", True),
    ("StringEqualsIgnoreCase", False, "FALSE", True),
    ("Bool", True, "true", True),
    ("Bool", True, True, True),
    ("Bool", False, False, True),
    ("Bool", False, True, False),
    ("NumericLessThan", 10, "9", True),
    ("NumericLessThan", 10, 9, True),
    ("NumericLessThan", 10, 10, False),
    ("NumericLessThanEquals", 10.5, 10.5, True),
    ("NumericGreaterThan", 0.5, "1", True),
    ("NumericEquals", 10, "10.0", True),
    ("StringEquals", 10, 10, True),
    ("StringEquals", 10, "10", True),
    ("StringEquals", 1.5, "1.5", True),
    ("DateLessThan", 1577836800, "2019-12-31T23:59:59Z", True),
    ("Null", True, None, True),
    ("Null", False, None, False),
]


@pytest.mark.parametrize("operator, wanted, have, expected", JSON_VALUE_CASES)
def test_json_booleans_and_numbers_are_their_quoted_text(operator, wanted, have, expected):
    """reference_policies_grammar.html: "Quotation marks are optional for numeric and Boolean values"."""
    context = {} if have is None else {"k:key": have}
    assert ev.condition_key_holds(operator, "k:key", wanted, context) is expected
    assert ev.condition_key_holds(operator, "k:key", [wanted], context) is expected


def test_policy_value_text_spells_json_values_as_quoted():
    assert [ev.policy_value_text(v) for v in (True, False, 10, 10.5, "x")] == ["true", "false", "10", "10.5", "x"]
    for value in (None, {"a": 1}, ["a"]):
        with pytest.raises(ev.PolicyError):
            ev.policy_value_text(value)


def test_a_policy_with_unquoted_booleans_and_numbers_decides_as_the_quoted_one():
    """The guide's Boolean and Numeric examples (reference_policies_elements_condition_operators.html), written with
    unquoted values: ``{"Bool": {"aws:SecureTransport": false}}``, ``{"NumericLessThanEquals": {"s3:max-keys": 10}}``."""
    deny_plain_http = {
        "Sid": "BooleanExample",
        "Effect": "Deny",
        "Action": "s3:*",
        "Resource": "arn:aws:s3:::b/*",
        "Condition": {"Bool": {"aws:SecureTransport": False}},
    }
    list_ten = _allow("s3:ListBucket", "arn:aws:s3:::b", Condition={"NumericLessThanEquals": {"s3:max-keys": 10}})
    mfa = _allow("s3:GetObject", "arn:aws:s3:::b/*", Condition={"StringEquals": {"aws:MultiFactorAuthPresent": True}})
    principal = _role(_allow("s3:PutObject", "arn:aws:s3:::b/*"), deny_plain_http, list_ten, mfa)
    assert _decide(principal, "s3:PutObject", "arn:aws:s3:::b/k", {"aws:SecureTransport": False}) == ev.EXPLICIT_DENY
    assert _decide(principal, "s3:PutObject", "arn:aws:s3:::b/k", {"aws:SecureTransport": "false"}) == ev.EXPLICIT_DENY
    assert _decide(principal, "s3:PutObject", "arn:aws:s3:::b/k", {"aws:SecureTransport": True}) == ev.ALLOWED
    assert _decide(principal, "s3:ListBucket", "arn:aws:s3:::b", {"s3:max-keys": 10}) == ev.ALLOWED
    assert _decide(principal, "s3:ListBucket", "arn:aws:s3:::b", {"s3:max-keys": "11"}) == ev.IMPLICIT_DENY
    # StringEquals compared "True" with "true" before: the JSON boolean never matched.
    assert _decide(principal, "s3:GetObject", "arn:aws:s3:::b/k", {"aws:MultiFactorAuthPresent": "true"}) == ev.ALLOWED
    assert _decide(principal, "s3:GetObject", "arn:aws:s3:::b/k", {"aws:MultiFactorAuthPresent": True}) == ev.ALLOWED
    assert _decide(principal, "s3:GetObject", "arn:aws:s3:::b/k", {"aws:MultiFactorAuthPresent": "false"}) == ev.IMPLICIT_DENY


def test_a_boolean_context_value_fills_a_policy_variable_as_its_text():
    principal = _role(_allow("s3:GetObject", "arn:aws:s3:::b/secure-${aws:SecureTransport}/*"))
    assert _decide(principal, "s3:GetObject", "arn:aws:s3:::b/secure-true/k", {"aws:SecureTransport": True}) == ev.ALLOWED
    assert _decide(principal, "s3:GetObject", "arn:aws:s3:::b/secure-True/k", {"aws:SecureTransport": True}) == ev.IMPLICIT_DENY


def test_a_null_condition_value_is_a_policy_error():
    with pytest.raises(ev.PolicyError):
        ev.evaluate(_role(_allow(Condition={"StringEquals": {"k": None}})), "s3:GetObject", "arn:aws:s3:::b/k", {"k": "v"})


# --- policy variables with no value (reference_policies_variables.html, "Policy variables with no value") ----
# "When you use a variable with no value in the condition element of an IAM policy, condition operators like
# StringEquals or StringLike do not match ... Inverted condition operators like StringNotEquals or StringNotLike
# do match against a null value". The issue asked for the opposite (a negated operator on an unresolvable variable
# not applying a Deny); the page says it applies, and its own example is such a Deny.


def test_the_guides_deny_on_an_unset_principal_tag_denies():
    """The page's example: "aws:principaltag/Team must be equal to s3:ExistingObjectTag/Team to allow access. Access is
    explicitly denied when aws:principaltag/Team is not set."."""
    deny = {
        "Effect": "Deny",
        "Action": "s3:GetObject",
        "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*",
        "Condition": {"StringNotEquals": {"s3:ExistingObjectTag/Team": "${aws:PrincipalTag/Team}"}},
    }
    obj = "arn:aws:s3:::amzn-s3-demo-bucket/k"
    untagged = _role(_allow("s3:GetObject"), deny)
    assert _decide(untagged, "s3:GetObject", obj, {"s3:ExistingObjectTag/Team": "red"}) == ev.EXPLICIT_DENY
    assert _decide(untagged, "s3:GetObject", obj) == ev.EXPLICIT_DENY  # neither key: a negated operator on a missing key is true
    tagged = _role(_allow("s3:GetObject"), deny, tags={"Team": "red"})
    assert _decide(tagged, "s3:GetObject", obj, {"s3:ExistingObjectTag/Team": "red"}) == ev.ALLOWED
    assert _decide(tagged, "s3:GetObject", obj, {"s3:ExistingObjectTag/Team": "blue"}) == ev.EXPLICIT_DENY


@pytest.mark.parametrize(
    "operator, have, expected",
    [
        ("StringEquals", "x", False),
        ("StringLike", "x", False),
        ("StringEqualsIgnoreCase", "", False),
        ("ArnLike", ROLE, False),
        ("StringNotEquals", "x", True),
        ("StringNotLike", "x", True),
        ("StringNotEqualsIgnoreCase", "", True),
        ("ArnNotLike", ROLE, True),
        # IfExists asks about the condition key, not the variable: "If the key is not present, evaluate the condition
        # element as true" (reference_policies_elements_condition_operators.html#Conditions_IfExists).
        ("StringEqualsIfExists", "x", False),
        ("StringEqualsIfExists", None, True),
        ("StringNotEqualsIfExists", "x", True),
        ("StringNotEqualsIfExists", None, True),
        ("ForAnyValue:StringEquals", ["x"], False),
        ("ForAllValues:StringEquals", ["x"], False),
        ("ForAllValues:StringNotEquals", ["x"], True),
    ],
)
def test_an_unresolvable_variable_in_a_condition_value_is_effectively_null(operator, have, expected):
    context = {} if have is None else {"k:key": have}
    assert ev.condition_key_holds(operator, "k:key", "${aws:PrincipalTag/missing}", context) is expected
    # Beside a value that matches, the null one changes nothing: positive values are ORed, negated ones NORed.
    if have is not None and operator.startswith("String") and "IfExists" not in operator:
        assert ev.condition_key_holds(operator, "k:key", ["${aws:PrincipalTag/missing}", have], context) is (operator not in ev.NEGATED_OPERATORS)


def test_an_unresolvable_variable_in_resource_or_not_resource_matches_no_resource():
    """ "If a variable that has no value in the authorization context is used as part of the Resource or NotResource element
    of a policy, the resource that includes a policy variable with no value will not match any resource.\""""
    assert _decide(_role(_allow("s3:*", "arn:aws:s3:::b/${aws:PrincipalTag/team}/*")), "s3:GetObject", "arn:aws:s3:::b//k") == ev.IMPLICIT_DENY
    # A NotResource entry that matches no resource excludes nothing: the Deny covers every resource.
    deny_elsewhere = {"Effect": "Deny", "Action": "s3:*", "NotResource": "arn:aws:s3:::b/${aws:PrincipalTag/team}/*"}
    assert _decide(_role(_allow(), deny_elsewhere), "s3:GetObject", "arn:aws:s3:::b/vision/k") == ev.EXPLICIT_DENY
    assert _decide(_role(_allow(), deny_elsewhere, tags={"team": "vision"}), "s3:GetObject", "arn:aws:s3:::b/vision/k") == ev.ALLOWED


def test_a_default_value_stands_for_a_variable_with_no_value():
    """ "Specifying default values": ``"Resource":"arn:aws:s3:::amzn-s3-demo-bucket-${aws:PrincipalTag/team, 'company-wide'}"``;
    "For users without team tags, it sets a default value of company-wide for the bucket name."."""
    statement = _allow("s3:ListBucket", "arn:aws:s3:::amzn-s3-demo-bucket-${aws:PrincipalTag/team, 'company-wide'}")
    assert _decide(_role(statement), "s3:ListBucket", "arn:aws:s3:::amzn-s3-demo-bucket-company-wide") == ev.ALLOWED
    assert _decide(_role(statement), "s3:ListBucket", "arn:aws:s3:::amzn-s3-demo-bucket-yellow") == ev.IMPLICIT_DENY
    assert _decide(_role(statement, tags={"team": "yellow"}), "s3:ListBucket", "arn:aws:s3:::amzn-s3-demo-bucket-yellow") == ev.ALLOWED
    assert _decide(_role(statement, tags={"team": "yellow"}), "s3:ListBucket", "arn:aws:s3:::amzn-s3-demo-bucket-company-wide") == ev.IMPLICIT_DENY


def test_variable_names_are_case_insensitive():
    """ "Key names are case-insensitive. For example, aws:CurrentTime is equivalent to AWS:currenttime."."""
    assert ev.substitute("${AWS:principaltag/TEAM}", {"aws:PrincipalTag/team": "vision"}) == "vision"


# --- principals: the sessions that sign every request (reference_policies_condition-keys.html) ----------

ROLE_ID = "AROAEXAMPLEID123"


def test_a_role_principal_is_an_assumed_role_session():
    """aws:PrincipalArn: "For IAM roles, the request context returns the ARN of the role, not the ARN of the user that
    assumed the role"; aws:PrincipalType and aws:userid per "Principal key values" (reference_policies_variables.html):
    Assumed role | aws:username (not present) | role-id:caller-specified-role-name | AssumedRole."""
    keys = ev.Principal(ACCOUNT, [], role_arn=ROLE).context()
    assert keys["aws:PrincipalType"] == "AssumedRole"
    assert keys["aws:PrincipalArn"] == ROLE
    assert keys["aws:PrincipalAccount"] == ACCOUNT
    assert "aws:userid" not in keys  # the role ID and session name are not known: no value rather than a wrong one
    assert "aws:username" not in keys  # "requests that are made using ... IAM roles do not include this key"
    named = ev.Principal(ACCOUNT, [], role_arn=ROLE, role_id=ROLE_ID, session_name="alice")
    assert named.context()["aws:userid"] == f"{ROLE_ID}:alice"
    assert named.session_arn == SESSION and named.arn == SESSION
    assert "aws:userid" not in ev.Principal(ACCOUNT, [], role_arn=ROLE, session_name="alice").context()
    assert "aws:userid" not in ev.Principal(ACCOUNT, [], role_arn=ROLE, role_id=ROLE_ID).context()


def test_a_session_arn_names_the_session_and_a_role_id_completes_its_userid():
    given = ev.Principal(ACCOUNT, [], role_arn=ROLE, session_arn=SESSION, role_id=ROLE_ID)
    assert given.session_name == "alice"
    assert given.context()["aws:userid"] == f"{ROLE_ID}:alice"
    assert given.context()["aws:PrincipalArn"] == ROLE


def test_the_session_arn_drops_the_roles_path_and_keeps_its_partition():
    """ "arn:aws:sts::account:assumed-role/role-name/role-session-name" (reference_identifiers.html)."""
    pathed = ev.Principal(ACCOUNT, [], role_arn=f"arn:aws:iam::{ACCOUNT}:role/teams/vision/team-role", session_name="bob")
    assert pathed.session_arn == f"arn:aws:sts::{ACCOUNT}:assumed-role/team-role/bob"
    assert pathed.context()["aws:PrincipalArn"] == f"arn:aws:iam::{ACCOUNT}:role/teams/vision/team-role"
    china = ev.Principal(ACCOUNT, [], role_arn=f"arn:aws-cn:iam::{ACCOUNT}:role/r", session_name="s")
    assert china.session_arn == f"arn:aws-cn:sts::{ACCOUNT}:assumed-role/r/s"


def test_a_role_principal_decides_as_its_session_does():
    """A statement on aws:PrincipalType "AssumedRole" or the role's aws:PrincipalArn applies to the role principal; a bucket
    policy naming the session ARN covers the role principal whose session name is known."""
    statement = _allow(
        "s3:GetObject", "arn:aws:s3:::b/*", Condition={"StringEquals": {"aws:PrincipalType": "AssumedRole"}, "ArnLike": {"aws:PrincipalArn": ROLE}}
    )
    assert _decide(ev.Principal(ACCOUNT, [("p", _doc(statement))], role_arn=ROLE), "s3:GetObject", "arn:aws:s3:::b/k") == ev.ALLOWED
    user = ev.Principal(ACCOUNT, [("p", _doc(statement))], user_arn=f"arn:aws:iam::{ACCOUNT}:user/alice")
    assert _decide(user, "s3:GetObject", "arn:aws:s3:::b/k") == ev.IMPLICIT_DENY
    bucket_policy = _doc({"Effect": "Allow", "Principal": {"AWS": SESSION}, "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/*"})
    named = ev.Principal(ACCOUNT, [], role_arn=ROLE, session_name="alice")
    assert _decide(named, "s3:GetObject", "arn:aws:s3:::b/k", resource_policy=bucket_policy) == ev.ALLOWED
    unnamed = ev.Principal(ACCOUNT, [], role_arn=ROLE)
    assert _decide(unnamed, "s3:GetObject", "arn:aws:s3:::b/k", resource_policy=bucket_policy) == ev.IMPLICIT_DENY


def test_a_user_principal_has_its_name_and_type_user():
    """Principal key values: IAM user | IAM-user-name | unique ID | User (the unique ID is not known here: absent)."""
    keys = ev.Principal(ACCOUNT, [], user_arn=f"arn:aws:iam::{ACCOUNT}:user/division/alice").context()
    assert (keys["aws:PrincipalType"], keys["aws:username"], keys["aws:PrincipalArn"]) == ("User", "alice", f"arn:aws:iam::{ACCOUNT}:user/division/alice")
    assert "aws:userid" not in keys


def test_session_tags_override_role_tags_of_the_same_key_regardless_of_case():
    """aws:PrincipalTag "is included for a principal using an IAM role with attached tags or session tags"
    (reference_policies_condition-keys.html); "New session tags override existing assumed role or federated user tags
    with the same tag key, regardless of case." (id_session-tags.html)."""
    principal = ev.Principal(ACCOUNT, [], role_arn=ROLE, tags={"Team": "vision", "tier": "member"}, session_tags={"team": "nlp", "project": "x"})
    assert principal.principal_tags() == {"tier": "member", "team": "nlp", "project": "x"}
    context = principal.context()
    assert ev.lookup(context, "aws:PrincipalTag/Team") == "nlp"
    assert ev.condition_key_holds("StringEquals", "aws:PrincipalTag/team", "vision", context) is False
    assert ev.condition_key_holds("StringEquals", "aws:PrincipalTag/tier", "member", context) is True


# --- the guide's worked examples: condition operators (reference_policies_elements_condition_operators.html) ---


def test_guide_string_example_principal_tag_job_category():
    """ "the principal making the request must be tagged with the iamuser-admin job category ... If a user without the tag
    attempts to view or edit an access key, the condition returns false and the request is implicitly denied"."""
    statement = _allow("iam:*AccessKey*", f"arn:aws:iam::{ACCOUNT}:user/*", Condition={"StringEquals": {"aws:PrincipalTag/job-category": "iamuser-admin"}})
    user = f"arn:aws:iam::{ACCOUNT}:user/bob"
    assert _decide(_role(statement, tags={"job-category": "iamuser-admin"}), "iam:CreateAccessKey", user) == ev.ALLOWED
    assert _decide(_role(statement), "iam:CreateAccessKey", user) == ev.IMPLICIT_DENY
    assert _decide(_role(statement, tags={"job-category": "other"}), "iam:ListAccessKeys", user) == ev.IMPLICIT_DENY


def test_guide_string_like_home_directory_example():
    """StringLike with a policy variable: a user manages "his or her own home directory"."""
    policy = _doc(
        _allow(["s3:ListAllMyBuckets", "s3:GetBucketLocation"], "arn:aws:s3:::*"),
        _allow("s3:ListBucket", "arn:aws:s3:::BUCKET-NAME", Condition={"StringLike": {"s3:prefix": ["", "home/", "home/${aws:username}/"]}}),
        _allow("s3:*", ["arn:aws:s3:::BUCKET-NAME/home/${aws:username}", "arn:aws:s3:::BUCKET-NAME/home/${aws:username}/*"]),
    )
    alice = ev.Principal(ACCOUNT, [("home", policy)], user_arn=f"arn:aws:iam::{ACCOUNT}:user/alice")
    for prefix in ("", "home/", "home/alice/"):
        assert _decide(alice, "s3:ListBucket", "arn:aws:s3:::BUCKET-NAME", {"s3:prefix": prefix}) == ev.ALLOWED
    assert _decide(alice, "s3:ListBucket", "arn:aws:s3:::BUCKET-NAME", {"s3:prefix": "home/bob/"}) == ev.IMPLICIT_DENY
    assert _decide(alice, "s3:PutObject", "arn:aws:s3:::BUCKET-NAME/home/alice/notes.txt") == ev.ALLOWED
    assert _decide(alice, "s3:PutObject", "arn:aws:s3:::BUCKET-NAME/home/bob/notes.txt") == ev.IMPLICIT_DENY
    # A role has no aws:username ("not present"): the variable has no value, and the home statements match nothing.
    role = ev.Principal(ACCOUNT, [("home", policy)], role_arn=ROLE, session_name="alice")
    assert _decide(role, "s3:ListBucket", "arn:aws:s3:::BUCKET-NAME", {"s3:prefix": "home/alice/"}) == ev.IMPLICIT_DENY
    assert _decide(role, "s3:ListBucket", "arn:aws:s3:::BUCKET-NAME", {"s3:prefix": "home/"}) == ev.ALLOWED


def test_guide_numeric_example_max_keys():
    """ "the requester can list up to 10 objects in example_bucket at a time"."""
    principal = _role(_allow("s3:ListBucket", "arn:aws:s3:::example_bucket", Condition={"NumericLessThanEquals": {"s3:max-keys": "10"}}))
    assert _decide(principal, "s3:ListBucket", "arn:aws:s3:::example_bucket", {"s3:max-keys": "10"}) == ev.ALLOWED
    assert _decide(principal, "s3:ListBucket", "arn:aws:s3:::example_bucket", {"s3:max-keys": "11"}) == ev.IMPLICIT_DENY
    assert _decide(principal, "s3:ListBucket", "arn:aws:s3:::example_bucket") == ev.IMPLICIT_DENY


def test_guide_date_example_token_issue_time():
    """ "the temporary security credentials used to make the request were issued in 2020" ... "if an IAM user attempts to
    view or edit an access key, the request is denied" (aws:TokenIssueTime is absent for long-term keys)."""
    statement = _allow("iam:*AccessKey*", f"arn:aws:iam::{ACCOUNT}:user/*", Condition={"DateGreaterThan": {"aws:TokenIssueTime": "2020-01-01T00:00:01Z"}})
    user = f"arn:aws:iam::{ACCOUNT}:user/bob"
    assert _decide(_role(statement), "iam:ListAccessKeys", user, {"aws:TokenIssueTime": "2020-06-30T12:00:00Z"}) == ev.ALLOWED
    assert _decide(_role(statement), "iam:ListAccessKeys", user, {"aws:TokenIssueTime": "2019-12-31T23:00:00Z"}) == ev.IMPLICIT_DENY
    assert _decide(_role(statement), "iam:ListAccessKeys", user) == ev.IMPLICIT_DENY


def test_guide_boolean_example_denies_plain_http():
    """ "deny all S3 actions on a bucket and its contents if the request is not over SSL ... This policy does not allow any
    actions"."""
    deny = {
        "Sid": "BooleanExample",
        "Action": "s3:*",
        "Effect": "Deny",
        "Resource": ["arn:aws:s3:::DOC-EXAMPLE-BUCKET", "arn:aws:s3:::DOC-EXAMPLE-BUCKET/*"],
        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
    }
    assert _decide(_role(deny), "s3:GetObject", "arn:aws:s3:::DOC-EXAMPLE-BUCKET/k", {"aws:SecureTransport": "true"}) == ev.IMPLICIT_DENY
    assert _decide(_role(_allow(), deny), "s3:GetObject", "arn:aws:s3:::DOC-EXAMPLE-BUCKET/k", {"aws:SecureTransport": "true"}) == ev.ALLOWED
    assert _decide(_role(_allow(), deny), "s3:GetObject", "arn:aws:s3:::DOC-EXAMPLE-BUCKET/k", {"aws:SecureTransport": "false"}) == ev.EXPLICIT_DENY


def test_guide_binary_example():
    """ "It compares the value of the specified key byte for byte against a base-64 encoded representation"."""
    assert ev.condition_key_holds("BinaryEquals", "key", "QmluYXJ5VmFsdWVJbkJhc2U2NA==", {"key": "QmluYXJ5VmFsdWVJbkJhc2U2NA=="})
    assert not ev.condition_key_holds("BinaryEquals", "key", "QmluYXJ5VmFsdWVJbkJhc2U2NA==", {"key": "QmluYXJ5"})
    assert not ev.condition_key_holds("BinaryEquals", "key", "QmluYXJ5VmFsdWVJbkJhc2U2NA==", {})


def test_guide_ip_address_examples():
    """ "the request must come from the IP range 203.0.113.0 to 203.0.113.255"; the mixed IPv4/IPv6 example; "If you
    specify an IP address without the associated routing prefix, IAM uses the default prefix value of /32"."""
    assert ev.condition_key_holds("IpAddress", "aws:SourceIp", "203.0.113.0/24", {"aws:SourceIp": "203.0.113.255"})
    assert not ev.condition_key_holds("IpAddress", "aws:SourceIp", "203.0.113.0/24", {"aws:SourceIp": "203.0.114.0"})
    mixed = ["203.0.113.0/24", "2001:DB8:1234:5678::/64"]
    assert ev.condition_key_holds("IpAddress", "aws:SourceIp", mixed, {"aws:SourceIp": "2001:db8:1234:5678::1"})
    assert not ev.condition_key_holds("IpAddress", "aws:SourceIp", mixed, {"aws:SourceIp": "2001:db8:1234:5679::1"})
    assert ev.condition_key_holds("IpAddress", "aws:SourceIp", "203.0.113.7", {"aws:SourceIp": "203.0.113.7"})
    assert not ev.condition_key_holds("IpAddress", "aws:SourceIp", "203.0.113.7", {"aws:SourceIp": "203.0.113.8"})
    # "The aws:SourceIp key is always present ... except when the requester uses a VPC endpoint ... the condition returns false".
    assert not ev.condition_key_holds("IpAddress", "aws:SourceIp", "203.0.113.0/24", {})


def test_guide_arn_example_string_like_matches_where_arn_like_does_not():
    """ "With a StringLike condition, the match succeeds ... With an ArnLike condition, which matches elements between colons,
    the match fails."."""
    pattern = "arn:aws:someservice:*:111122223333:finance/*"
    value = {"aws:SourceArn": "arn:aws:someservice:us-east-2:999999999999:store/abc:111122223333:finance/document.txt"}
    assert ev.condition_key_holds("StringLike", "aws:SourceArn", pattern, value)
    assert not ev.condition_key_holds("ArnLike", "aws:SourceArn", pattern, value)
    assert not ev.condition_key_holds("ArnEquals", "aws:SourceArn", pattern, value)  # "ArnEquals and ArnLike ... behave identically"
    topic = "arn:aws:sns:us-east-1:123456789012:TOPIC-ID"
    assert ev.condition_key_holds("ArnEquals", "aws:SourceArn", topic, {"aws:SourceArn": topic})
    assert not ev.condition_key_holds("ArnEquals", "aws:SourceArn", topic, {})  # "If an IAM user attempts ... the condition returns false"


def test_guide_if_exists_example_run_instances():
    """THISPOLICYDOESNOTWORK: "These additional resources do not have the ec2:InstanceType condition key, so the StringLike
    check fails"; with StringLikeIfExists "If the resource being checked does not have that condition key, then don't
    worry about it."."""
    types = {"ec2:InstanceType": ["t1.*", "t2.*", "m3.*"]}
    broken = _role({"Sid": "THISPOLICYDOESNOTWORK", "Effect": "Allow", "Action": "ec2:RunInstances", "Resource": "*", "Condition": {"StringLike": types}})
    working = _role({"Sid": "RunInstance", "Effect": "Allow", "Action": "ec2:RunInstances", "Resource": "*", "Condition": {"StringLikeIfExists": types}})
    image = "arn:aws:ec2:us-east-1::image/ami-1"
    instance = f"arn:aws:ec2:us-east-1:{ACCOUNT}:instance/*"
    assert _decide(broken, "ec2:RunInstances", image) == ev.IMPLICIT_DENY
    assert _decide(working, "ec2:RunInstances", image) == ev.ALLOWED
    assert _decide(working, "ec2:RunInstances", instance, {"ec2:InstanceType": "t2.micro"}) == ev.ALLOWED
    assert _decide(working, "ec2:RunInstances", instance, {"ec2:InstanceType": "p4d.24xlarge"}) == ev.IMPLICIT_DENY
    # "If you are using an "Effect": "Deny" element with a negated condition operator like StringNotEqualsIfExists, the
    # request is still denied even if the tag is missing."
    deny = {"Effect": "Deny", "Action": "ec2:RunInstances", "Resource": "*", "Condition": {"StringNotEqualsIfExists": {"aws:ResourceTag/team": "vision"}}}
    assert _decide(_role(_allow(), deny), "ec2:RunInstances", image) == ev.EXPLICIT_DENY


def test_guide_null_example_token_issue_time():
    """ "the user must not be using temporary credentials (the key must not exist) for the user to use the Amazon EC2 API"."""
    statement = {"Action": "ec2:*", "Effect": "Allow", "Resource": "*", "Condition": {"Null": {"aws:TokenIssueTime": "true"}}}
    user = ev.Principal(ACCOUNT, [("p", _doc(statement))], user_arn=f"arn:aws:iam::{ACCOUNT}:user/alice")
    assert _decide(user, "ec2:DescribeInstances", "*") == ev.ALLOWED
    assert _decide(user, "ec2:DescribeInstances", "*", {"aws:TokenIssueTime": "2024-01-01T00:00:00Z"}) == ev.IMPLICIT_DENY


def test_guide_missing_key_rule():
    """ "If the key that you specify in a policy condition is not present in the request context, the values do not match
    and the condition is false. If the policy condition requires that the key is not matched, such as StringNotLike or
    ArnNotLike, and the right key is not present, the condition is true.\""""
    for operator in ev.NEGATED_OPERATORS:
        value = "203.0.113.0/24" if "Ip" in operator else "2020-01-01T00:00:00Z" if "Date" in operator else "1" if "Numeric" in operator else "x"
        assert ev.condition_key_holds(operator, "k:absent", value, {}) is True, operator
        assert ev.condition_key_holds(operator.replace("Not", ""), "k:absent", value, {}) is False, operator


# --- the guide's worked examples: multivalued keys (reference_policies_condition-single-vs-multi-valued-context-keys.html,
# formerly reference_policies_multi-value-conditions.html) ------------------------------------------------------
# ForAllValues: "The condition returns true if every context key value in the request matches at least one context key value
# in the policy. It also returns true if there are no context keys in the request." ForAnyValue: "true if any one of the
# context key values in the request matches any one of the context key values in the policy. For no matching context key or
# if the key does not exist, the condition returns false."

THREAD = "arn:aws:dynamodb:us-east-1:123456789012:table/Thread"


def test_guide_for_all_values_dynamodb_attributes():
    """ "The condition allows a user to request only the attributes ID, Message, or Tags ... if the user's request includes the
    UserName attribute, the request fails."."""
    principal = _role(
        _allow(
            "dynamodb:GetItem", "arn:aws:dynamodb:*:*:table/Thread", Condition={"ForAllValues:StringEquals": {"dynamodb:Attributes": ["ID", "Message", "Tags"]}}
        )
    )
    assert _decide(principal, "dynamodb:GetItem", THREAD, {"dynamodb:Attributes": ["ID", "Message", "Tags"]}) == ev.ALLOWED
    assert _decide(principal, "dynamodb:GetItem", THREAD, {"dynamodb:Attributes": ["ID", "Message", "UserName"]}) == ev.IMPLICIT_DENY
    # The evaluation table: PostDateTime and UserName against PostDateTime, Message, Tags: "There's no match for UserName,
    # so the condition operator returns false".
    table = {"ForAllValues:StringEquals": {"dynamodb:Attributes": ["PostDateTime", "Message", "Tags"]}}
    assert not ev.conditions_hold(table, {"dynamodb:Attributes": ["PostDateTime", "UserName"]})
    assert ev.conditions_hold(table, {"dynamodb:Attributes": ["PostDateTime"]})
    # "it returns true if there are no keys in the request": the warning's reason to pair it with another condition.
    assert _decide(principal, "dynamodb:GetItem", THREAD) == ev.ALLOWED
    assert _decide(principal, "dynamodb:GetItem", THREAD, {"dynamodb:Attributes": []}) == ev.ALLOWED
    guarded = _role(
        _allow(
            "dynamodb:GetItem",
            "arn:aws:dynamodb:*:*:table/Thread",
            Condition={"ForAllValues:StringEquals": {"dynamodb:Attributes": ["ID", "Message", "Tags"]}, "Null": {"dynamodb:Attributes": "false"}},
        )
    )
    assert _decide(guarded, "dynamodb:GetItem", THREAD) == ev.IMPLICIT_DENY


def test_guide_for_any_value_dynamodb_deny():
    """ "there is one match (PostDateTime), so the condition is true ... Because the policy's effect is Deny, the request is
    denied"; "PutItem with just the UserName attribute ... The condition returns false ... the request is not denied by
    this policy"."""
    deny = {
        "Effect": "Deny",
        "Action": "dynamodb:PutItem",
        "Resource": "arn:aws:dynamodb:*:*:table/Thread",
        "Condition": {"ForAnyValue:StringEquals": {"dynamodb:Attributes": ["ID", "PostDateTime"]}},
    }
    principal = _role(_allow("dynamodb:*"), deny)
    assert _decide(principal, "dynamodb:PutItem", THREAD, {"dynamodb:Attributes": ["PostDateTime", "Message"]}) == ev.EXPLICIT_DENY
    assert _decide(principal, "dynamodb:PutItem", THREAD, {"dynamodb:Attributes": ["UserName", "Message", "PostDateTime"]}) == ev.EXPLICIT_DENY
    assert _decide(principal, "dynamodb:PutItem", THREAD, {"dynamodb:Attributes": ["UserName"]}) == ev.ALLOWED
    assert _decide(principal, "dynamodb:PutItem", THREAD) == ev.ALLOWED  # no key: ForAnyValue is false
    assert _decide(_role(deny), "dynamodb:PutItem", THREAD, {"dynamodb:Attributes": ["UserName"]}) == ev.IMPLICIT_DENY


def test_guide_negated_operator_with_multiple_values_works_like_and():
    """ "When multiple values are listed in a policy for negated matching condition operators such as StringNotEquals and
    DateNotEquals, the effective permissions work like a logical AND"."""
    block = {"StringNotEquals": {"aws:PrincipalAccount": ["111122223333", "444455556666"]}}
    assert not ev.conditions_hold(block, {"aws:PrincipalAccount": "111122223333"})
    assert not ev.conditions_hold(block, {"aws:PrincipalAccount": "444455556666"})
    assert ev.conditions_hold(block, {"aws:PrincipalAccount": "777788889999"})


def test_guide_multiple_operators_and_keys_are_anded():
    """The guide's condition block: both principal tags must hold one of their values, and the account must be the one given."""
    block = {
        "StringEqualsIgnoreCase": {"aws:PrincipalTag/department": ["finance", "hr", "legal"], "aws:PrincipalTag/role": ["audit", "security"]},
        "StringEquals": {"aws:PrincipalAccount": "123456789012"},
    }
    good = {"aws:PrincipalTag/department": "HR", "aws:PrincipalTag/role": "audit", "aws:PrincipalAccount": "123456789012"}
    assert ev.conditions_hold(block, good)
    assert not ev.conditions_hold(block, dict(good, **{"aws:PrincipalTag/role": "dev"}))
    assert not ev.conditions_hold(block, dict(good, **{"aws:PrincipalAccount": "111122223333"}))
    assert not ev.conditions_hold(block, {k: v for k, v in good.items() if k != "aws:PrincipalTag/department"})


# --- the guide's worked examples: evaluation logic (reference_policies_evaluation-logic.html) ----------------------


def test_guide_carlos_example_identity_and_bucket_policy():
    """ "AWS first checks for a Deny statement ... the identity-based policy explicitly denies Carlos access to any S3 buckets
    used for logging" ... "Both the identity-based policy and the resource-based policy allow the request. Therefore, AWS
    allows the request." and "If one of the policy types allows the request and the other doesn't, the request is still
    allowed"."""
    identity = _doc(
        {
            "Sid": "AllowS3ListRead",
            "Effect": "Allow",
            "Action": ["s3:GetBucketLocation", "s3:GetAccountPublicAccessBlock", "s3:ListAccessPoints", "s3:ListAllMyBuckets"],
            "Resource": "arn:aws:s3:::*",
        },
        {"Sid": "AllowS3Self", "Effect": "Allow", "Action": "s3:*", "Resource": ["arn:aws:s3:::carlossalazar/*", "arn:aws:s3:::carlossalazar"]},
        {"Sid": "DenyS3Logs", "Effect": "Deny", "Action": "s3:*", "Resource": "arn:aws:s3:::*log*"},
    )
    carlos_arn = f"arn:aws:iam::{ACCOUNT}:user/carlossalazar"
    bucket = _doc(
        {"Effect": "Allow", "Principal": {"AWS": carlos_arn}, "Action": "s3:*", "Resource": ["arn:aws:s3:::carlossalazar/*", "arn:aws:s3:::carlossalazar"]}
    )
    carlos = ev.Principal(ACCOUNT, [("carlos", identity)], user_arn=carlos_arn)
    result = ev.evaluate(carlos, "s3:PutObject", "arn:aws:s3:::carlossalazar-logs")
    assert result["EvalDecision"] == ev.EXPLICIT_DENY and [m["Sid"] for m in result["MatchedStatements"]] == ["DenyS3Logs"]
    assert _decide(carlos, "s3:PutObject", "arn:aws:s3:::carlossalazar/file", resource_policy=bucket) == ev.ALLOWED
    assert _decide(carlos, "s3:PutObject", "arn:aws:s3:::carlossalazar/file") == ev.ALLOWED
    alone = ev.Principal(ACCOUNT, [], user_arn=carlos_arn)
    assert _decide(alone, "s3:PutObject", "arn:aws:s3:::carlossalazar/file", resource_policy=bucket) == ev.ALLOWED
    assert _decide(carlos, "s3:ListAllMyBuckets", "arn:aws:s3:::anything") == ev.ALLOWED


def test_guide_explicit_and_implicit_denies_example():
    """AllowGetList "allows read-only access to IAM actions that begin with the prefixes Get and List. All other actions in IAM,
    such as iam:CreatePolicy are implicitly denied. The DenyReports statement explicitly denies ... the Report suffix"; a later
    allow of report actions does not help: "report-related requests are still denied because of this explicit deny"."""
    statements = [
        {"Sid": "AllowGetList", "Effect": "Allow", "Action": ["iam:Get*", "iam:List*"], "Resource": "*"},
        {"Sid": "DenyReports", "Effect": "Deny", "Action": "iam:*Report", "Resource": "*"},
    ]
    principal = _role(statements, _allow("iam:GenerateCredentialReport"))
    assert _decide(principal, "iam:GetRole", ROLE) == ev.ALLOWED
    assert _decide(principal, "iam:CreatePolicy", "*") == ev.IMPLICIT_DENY
    assert _decide(principal, "iam:GetOrganizationsAccessReport", "*") == ev.EXPLICIT_DENY
    assert _decide(principal, "iam:GenerateCredentialReport", "*") == ev.EXPLICIT_DENY
