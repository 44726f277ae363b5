"""iam_sets: IAM evaluation over sets of requests, sound (a set decided denied has no request IAM allows).

The pattern algebra is checked against brute force over a small alphabet: for every pair of patterns, ``strings_intersect``
is exactly "some string matches both" and ``strings_cover`` never claims a containment that a string breaks.
"""

from __future__ import annotations

import itertools

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import iam_evaluation, iam_sets
from ansible_collections.hyperpod.tenancy.plugins.module_utils.iam_sets import ABSENT, RequestSet, like, value

ALPHABET = "ab/"
PATTERNS = sorted({"".join(p) for n in range(4) for p in itertools.product("ab/*?", repeat=n)})
STRINGS = ["".join(s) for n in range(6) for s in itertools.product(ALPHABET, repeat=n)]


def _matching(pattern: str) -> set:
    return {s for s in STRINGS if iam_evaluation.wildcard_match(pattern, s)}


MATCHING = {pattern: _matching(pattern) for pattern in PATTERNS}


def test_intersection_is_exact_on_every_pair_of_small_patterns():
    """Strings up to 5 characters witness every intersection of patterns of up to 3 tokens over this alphabet."""
    wrong = [(p, q) for p in PATTERNS for q in PATTERNS if iam_sets.strings_intersect(p, q) != bool(MATCHING[p] & MATCHING[q])]
    assert wrong == []


def test_cover_is_never_claimed_where_a_string_breaks_it_and_holds_where_it_should():
    claimed = [(p, q) for p in PATTERNS for q in PATTERNS if iam_sets.strings_cover(p, q)]
    assert [(p, q) for p, q in claimed if not MATCHING[q] <= MATCHING[p]] == []
    # What the proof relies on: a prefix pattern covers the narrower prefixes and the keys under it.
    assert iam_sets.strings_cover("vision/*", "vision/datasets/*") and iam_sets.strings_cover("*", "a?b*")
    assert not iam_sets.strings_cover("vision/datasets/*", "vision/*")


BUCKET = "arn:aws:s3:::data"
ROLE = "arn:aws:iam::111122223333:role/hyperpod-nlp-studio"


def _principal_keys() -> dict:
    return {"aws:PrincipalArn": [value(ROLE)], "aws:PrincipalType": [value("AssumedRole")], "aws:username": [ABSENT]}


def _vision_objects() -> RequestSet:
    return RequestSet([f"{BUCKET}/vision/*"], keys=_principal_keys())


def _vision_listing() -> RequestSet:
    prefixes = [value("vision/"[:n]) for n in range(len("vision/"))]
    return RequestSet([BUCKET], keys=dict(_principal_keys(), **{"s3:prefix": [ABSENT, *prefixes, like("vision/*")]}))


def _decide(statements, action, requests, boundary=None):
    return iam_sets.decide([("inline", statements)], boundary, action, requests)[0]


# The three grants of issue 37 that a one-sample proof passed at 95a77e0.
@pytest.mark.parametrize(
    "statement, action, requests",
    [
        ({"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"{BUCKET}/vision/datasets/*"}, "s3:GetObject", _vision_objects()),
        (
            {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": BUCKET, "Condition": {"StringLike": {"s3:prefix": "vision/datasets/*"}}},
            "s3:ListBucket",
            _vision_listing(),
        ),
        (
            {"Effect": "Allow", "Action": "sagemaker:*", "Resource": "*", "Condition": {"StringEquals": {"aws:RequestedRegion": "us-east-1"}}},
            "sagemaker:DescribeDomain",
            RequestSet(["arn:aws:sagemaker:us-east-1:111122223333:domain/d-1"], keys=dict(_principal_keys(), **{"aws:ResourceTag/team": [value("vision")]})),
        ),
        (
            {"Effect": "Allow", "Action": "sagemaker:*", "Resource": "*", "Condition": {"StringEquals": {"aws:PrincipalType": "AssumedRole"}}},
            "sagemaker:DeleteApp",
            RequestSet(["arn:aws:sagemaker:us-east-1:111122223333:app/d-1/*"], keys=_principal_keys()),
        ),
    ],
    ids=["narrower object pattern", "listing of a sub-prefix", "a key AWS sets on every request", "the principal type of a session"],
)
def test_a_grant_on_part_of_another_teams_set_is_allowed(statement, action, requests):
    assert _decide([statement], action, requests) == iam_evaluation.ALLOWED


def test_the_own_teams_grants_reach_no_request_of_another_teams_set():
    own = [
        {"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"], "Resource": f"{BUCKET}/nlp/*"},
        {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": BUCKET, "Condition": {"StringLike": {"s3:prefix": ["nlp/", "nlp/*"]}}},
    ]
    assert _decide(own, "s3:GetObject", _vision_objects()) == iam_evaluation.IMPLICIT_DENY
    assert _decide(own, "s3:ListBucket", _vision_listing()) == iam_evaluation.IMPLICIT_DENY
    # "vis" is no prefix of vision's: its slash keeps it out.
    assert _decide([dict(own[0], Resource=f"{BUCKET}/vis/*")], "s3:GetObject", _vision_objects()) == iam_evaluation.IMPLICIT_DENY


def test_a_listing_of_a_prefix_of_the_teams_prefix_shows_the_teams_keys():
    """ListObjectsV2 with Prefix "vis" (or none) lists vision/...: a grant of those is a grant of vision's listing."""
    for prefix in ("vis", "", "*"):
        statement = {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": BUCKET, "Condition": {"StringLike": {"s3:prefix": prefix}}}
        assert _decide([statement], "s3:ListBucket", _vision_listing()) == iam_evaluation.ALLOWED, prefix
    bare = {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": BUCKET, "Condition": {"Null": {"s3:prefix": "true"}}}
    assert _decide([bare], "s3:ListBucket", _vision_listing()) == iam_evaluation.ALLOWED


def test_a_deny_protects_only_when_it_applies_to_every_request():
    allow = {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}
    narrow_deny = {"Effect": "Deny", "Action": "s3:GetObject", "Resource": f"{BUCKET}/vision/private/*"}
    whole_deny = {"Effect": "Deny", "Action": "s3:*", "Resource": f"{BUCKET}/vision/*"}
    on_a_free_key = {"Effect": "Deny", "Action": "s3:*", "Resource": "*", "Condition": {"StringEquals": {"aws:RequestedRegion": "us-east-1"}}}
    on_a_pinned_key = {"Effect": "Deny", "Action": "s3:*", "Resource": "*", "Condition": {"StringEquals": {"aws:PrincipalType": "AssumedRole"}}}
    negated_outside = {"Effect": "Deny", "Action": "s3:*", "NotResource": f"{BUCKET}/nlp/*"}
    assert _decide([allow, narrow_deny], "s3:GetObject", _vision_objects()) == iam_evaluation.ALLOWED
    assert _decide([allow, on_a_free_key], "s3:GetObject", _vision_objects()) == iam_evaluation.ALLOWED
    for deny in (whole_deny, on_a_pinned_key, negated_outside):
        assert _decide([allow, deny], "s3:GetObject", _vision_objects()) == iam_evaluation.EXPLICIT_DENY, deny


def test_excluded_places_are_not_reached_but_a_wider_pattern_is():
    """The bucket's root as a shared place: every key but the teams' prefixes."""
    root = RequestSet([f"{BUCKET}/*"], exclude=[f"{BUCKET}/vision/*", f"{BUCKET}/nlp/*"], keys=_principal_keys())
    own = {"Effect": "Allow", "Action": "s3:PutObject", "Resource": f"{BUCKET}/nlp/*"}
    assert _decide([own], "s3:PutObject", root) == iam_evaluation.IMPLICIT_DENY
    assert _decide([dict(own, Resource=f"{BUCKET}/*")], "s3:PutObject", root) == iam_evaluation.ALLOWED
    assert _decide([dict(own, Resource=f"{BUCKET}/n*")], "s3:PutObject", root) == iam_evaluation.ALLOWED


def test_the_roots_listing_is_every_prefix_but_those_under_a_teams_and_is_decided_soundly():
    """The listing of the bucket's root (issue 37): an s3:prefix a key no team's prefix holds starts with, which is any but
    one under a team's prefix. Checked against brute force: a condition some such prefix meets may hold (an Allow is
    never missed), one that holds surely holds for every such prefix (a Deny never hides one), and a value every string of
    which is under a team's prefix reaches nothing."""
    teams = ["a/*", "b/*"]
    root = RequestSet([BUCKET], keys={"s3:prefix": [like("*", teams)]})
    outside = [s for s in STRINGS if not any(iam_evaluation.wildcard_match(t, s) for t in teams)]
    for operator in ("StringLike", "StringEquals", "StringNotLike", "StringNotEquals"):
        for pattern in PATTERNS:
            literal = operator in ("StringEquals", "StringNotEquals")
            met = [s == pattern if literal else iam_evaluation.wildcard_match(pattern, s) for s in outside]
            if "Not" in operator:
                met = [not m for m in met]
            if any(met):
                assert iam_sets.condition_may_hold(operator, "s3:prefix", pattern, root), (operator, pattern)
            if iam_sets.condition_surely_holds(operator, "s3:prefix", pattern, root):
                assert all(met), (operator, pattern)
    for under_a_team in ("a/", "a/*", "b/a?", ["a/*", "b/*"]):
        assert not iam_sets.condition_may_hold("StringLike", "s3:prefix", under_a_team, root), under_a_team
    for showing_a_root_key in ("a", "a*", "ab", "?/", "*"):
        assert iam_sets.condition_may_hold("StringLike", "s3:prefix", showing_a_root_key, root), showing_a_root_key
    # Case-insensitively "A/" is "a/" and "A/": no left-out pattern takes every string of it.
    assert iam_sets.condition_may_hold("StringEqualsIgnoreCase", "s3:prefix", "a/", root)


def test_a_negated_condition_on_the_roots_listing_holds_surely_when_each_value_is_inside_a_left_out_pattern():
    """A Deny with a negated operator protects the root's listing when no string of it meets a value: a value that meets
    some string of the pattern but lies wholly inside one left-out pattern meets none of the set (red-teaming: a Deny
    "StringNotLike s3:prefix [nlp/, nlp/*]" never protected it, a false alarm). Checked against brute force on pairs of
    values too (values of one key are NORed under a negated operator): a negated condition that holds surely holds for
    every string of the set, and a Deny never hides an Allow."""
    teams = ["a/*", "b/*"]
    root = RequestSet([BUCKET], keys={"s3:prefix": [like("*", teams)]})
    outside = [s for s in STRINGS if not any(iam_evaluation.wildcard_match(t, s) for t in teams)]
    proven = 0
    for operator in ("StringNotLike", "StringNotEquals"):
        literal = operator == "StringNotEquals"
        for values in itertools.chain(([p] for p in PATTERNS), (list(pair) for pair in itertools.combinations(PATTERNS, 2))):
            if iam_sets.condition_surely_holds(operator, "s3:prefix", values, root):
                proven += 1
                assert all(not any(s == v if literal else iam_evaluation.wildcard_match(v, s) for v in values) for s in outside), (operator, values)
    assert proven > 0
    for values in (["a/", "a/*"], ["a/*", "b/*"], ["a/*", "b/a", "b/b*"]):
        assert iam_sets.condition_surely_holds("StringNotLike", "s3:prefix", values, root), values
    # Only a value wholly inside one left-out pattern: "*" meets every string, "a*" the string "a", and case-insensitively
    # "A/x" is no string under "a/".
    for values in (["a/*", "*"], ["a*"]):
        assert not iam_sets.condition_surely_holds("StringNotLike", "s3:prefix", values, root), values
    assert not iam_sets.condition_surely_holds("StringNotEqualsIgnoreCase", "s3:prefix", "a/", RequestSet([BUCKET], keys={"s3:prefix": [like("A*", teams)]}))
    allow = {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": BUCKET, "Condition": {"StringLike": {"s3:prefix": "*"}}}
    deny = {"Effect": "Deny", "Action": "s3:ListBucket", "Resource": BUCKET, "Condition": {"StringNotLike": {"s3:prefix": ["a/", "a/*"]}}}
    listing = RequestSet([BUCKET], keys={"s3:prefix": [ABSENT, like("*", ["a/*"])]})
    assert _decide([allow, deny], "s3:ListBucket", listing) == iam_evaluation.EXPLICIT_DENY
    assert _decide([allow, dict(deny, Condition={"StringNotLike": {"s3:prefix": ["a/", "b/*"]}})], "s3:ListBucket", listing) == iam_evaluation.ALLOWED


@pytest.mark.parametrize("wanted", [["true", "false"], ["false", "true"]])
def test_the_values_of_a_null_condition_are_ored_on_a_set(wanted):
    """Null ["true", "false"] holds for every request, the key present or not ("Conditions with multiple context keys or
    values", IAM User Guide): on a pinned key, a free one and a listing's set of prefixes, whichever value comes first."""
    listing = _vision_listing()
    for key in ("aws:PrincipalArn", "aws:username", "aws:RequestedRegion", "s3:prefix"):
        assert iam_sets.condition_may_hold("Null", key, wanted, listing), key
    for key in ("aws:PrincipalArn", "aws:username", "s3:prefix"):
        assert iam_sets.condition_surely_holds("Null", key, wanted, listing), key
    allow = {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*", "Condition": {"Null": {"aws:PrincipalArn": wanted}}}
    assert _decide([allow], "s3:GetObject", _vision_objects()) == iam_evaluation.ALLOWED
    # One value alone decides as before: the role's ARN is always there, a listing's prefix may be absent or present.
    assert not iam_sets.condition_may_hold("Null", "aws:PrincipalArn", "true", listing)
    assert not iam_sets.condition_surely_holds("Null", "s3:prefix", "false", listing)


def test_policy_variables_on_free_keys_are_wildcards_and_on_pinned_keys_their_value():
    requests = RequestSet([f"{BUCKET}/vision/*"], keys=dict(_principal_keys(), **{"aws:PrincipalTag/team": [value("nlp")]}))
    pinned = {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"{BUCKET}/${{aws:PrincipalTag/team}}/*"}
    free = {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"{BUCKET}/${{aws:PrincipalTag/project}}/*"}
    assert _decide([pinned], "s3:GetObject", requests) == iam_evaluation.IMPLICIT_DENY
    assert _decide([free], "s3:GetObject", requests) == iam_evaluation.ALLOWED
    closed = RequestSet(requests.arns, keys=requests.keys, closed=["aws:PrincipalTag/"])
    assert _decide([free], "s3:GetObject", closed) == iam_evaluation.IMPLICIT_DENY


def test_a_boundary_must_also_allow_some_request():
    allow = {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}
    boundary = [{"Effect": "Allow", "Action": "s3:*", "Resource": f"{BUCKET}/nlp/*"}]
    assert _decide([allow], "s3:GetObject", _vision_objects(), boundary) == iam_evaluation.IMPLICIT_DENY
    assert _decide([allow], "s3:GetObject", _vision_objects(), [dict(boundary[0], Resource="*")]) == iam_evaluation.ALLOWED


def test_access_analyzer_is_asked_about_a_set_and_finds_a_grant_on_part_of_it():
    """CheckAccessNotGranted with a wildcard resource (the sandbox's, iam_evaluation.access_granting_statements): a grant
    on part of the set fails the check; one beside it passes; a Deny takes away only what it covers whole."""
    narrower = {"Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"{BUCKET}/vision/datasets/*"}]}
    beside = {"Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"{BUCKET}/nlp/*"}]}
    wide = {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"{BUCKET}/*"}
    denied_part = {"Statement": [wide, {"Effect": "Deny", "Action": "s3:GetObject", "Resource": f"{BUCKET}/vision/private/*"}]}
    denied_whole = {"Statement": [wide, {"Effect": "Deny", "Action": "s3:*", "Resource": f"{BUCKET}/vision/*"}]}
    ask = (["s3:GetObject"], [f"{BUCKET}/vision/*"])
    assert iam_evaluation.access_granting_statements(narrower, *ask) == [0]
    assert iam_evaluation.access_granting_statements(beside, *ask) == []
    assert iam_evaluation.access_granting_statements(denied_part, *ask) == [0]
    assert iam_evaluation.access_granting_statements(denied_whole, *ask) == []


def test_a_variable_on_a_free_key_in_a_condition_value_proves_nothing():
    """The variable may stand for any value, or none: a negated operator may then hold (red-teamed: a StringNotEquals on
    a principal tag named in the value read as never holding), and a Deny conditioned on it protects nothing."""
    negated = {"StringNotEquals": {"aws:PrincipalArn": "${aws:PrincipalTag/quarantined-arn}"}}
    positive = {"StringEquals": {"aws:PrincipalArn": "${aws:PrincipalTag/blocked-arn}"}}
    allow = {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"{BUCKET}/*"}
    assert _decide([dict(allow, Condition=negated)], "s3:GetObject", _vision_objects()) == iam_evaluation.ALLOWED
    deny = {"Effect": "Deny", "Action": "s3:GetObject", "Resource": "*", "Condition": positive}
    assert _decide([allow, deny], "s3:GetObject", _vision_objects()) == iam_evaluation.ALLOWED
    # Pinned, the same variable is its value: the role's own ARN is no quarantined one.
    closed = RequestSet(
        _vision_objects().arns, keys=dict(_principal_keys(), **{"aws:PrincipalTag/quarantined-arn": [value(ROLE)]}), closed=["aws:PrincipalTag/"]
    )
    assert _decide([dict(allow, Condition=negated)], "s3:GetObject", closed) == iam_evaluation.IMPLICIT_DENY


def test_an_arn_condition_value_of_fewer_than_six_parts_is_not_taken_as_a_mismatch():
    """AWS's documents do not say how ArnLike compares "arn:*": it may match, so an Allow counts."""
    allow = {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"{BUCKET}/*", "Condition": {"ArnLike": {"aws:PrincipalArn": "arn:*"}}}
    assert _decide([allow], "s3:GetObject", _vision_objects()) == iam_evaluation.ALLOWED
