"""The isolation proof's fast paths give the answers of the paths they shortcut, on every input of a grid.

``iam_sets._holds_on_plain`` (a condition without policy variables, decided once per alternative) against
``iam_sets._holds_on_set`` with the request set's other keys; ``iam_evaluation.access_granting_statements`` (a
statement's actions and resources tested apart) against the pairwise definition it replaced. The pattern intersection's
trimming is held to brute force by test_iam_sets.
"""

from __future__ import annotations

import itertools

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import iam_evaluation, iam_sets
from ansible_collections.hyperpod.tenancy.plugins.module_utils.iam_sets import ABSENT, RequestSet, like, value

OPERATORS = ["StringEquals", "StringNotEquals", "StringLike", "StringNotLike", "StringEqualsIgnoreCase", "ArnLike", "ArnNotEquals", "Null", "Bool"]
OPERATORS += ["NumericLessThan", "StringLikeIfExists", "ForAnyValue:StringLike", "ForAllValues:StringEquals", "IpAddress"]
VALUES = [["team0/", "team0/*"], "team*", "", True, 5, ["arn:aws:iam::1:role/*"], "10.0.0.0/8", "false"]
ALTERNATIVES = [ABSENT, value("team0/"), value("t"), value(""), like("team0/*"), like("team1/*"), value("true"), value("arn:aws:iam::1:role/x")]
ALTERNATIVES += [like("arn:aws:iam::1:role/*"), value("10.1.2.3"), value("3")]
OTHER_KEYS = [{}, {"aws:username": [value("x")], "s3:prefix": [ABSENT, value("b")]}, {"aws:ResourceTag/team": [value("team0"), ABSENT]}]


def _answer(function, *args):
    try:
        return function(*args)
    except (iam_evaluation.PolicyError, ValueError, IndexError) as error:
        return type(error)


@pytest.mark.parametrize("key", ["s3:prefix", "aws:ResourceTag/team"])
def test_a_condition_without_variables_is_decided_as_over_its_whole_set(key):
    differ = []
    for operator, wanted, alternative, keys, every in itertools.product(OPERATORS, VALUES, ALTERNATIVES, OTHER_KEYS, (False, True)):
        plain = iam_sets._plain(wanted)
        assert plain is not None
        requests = RequestSet(["arn:aws:s3:::b/*"], keys=keys, closed=("aws:PrincipalTag/",))
        fast = _answer(iam_sets._holds_on, operator, key, wanted, alternative, requests, every, plain)
        if fast != _answer(iam_sets._holds_on_set, operator, key, wanted, alternative, requests, every):
            differ.append((operator, wanted, alternative, keys, every))
    assert differ == []


def test_a_value_with_a_variable_or_of_another_type_is_not_plain():
    assert iam_sets._plain("${aws:username}/*") is None
    assert iam_sets._plain(["a", "${aws:PrincipalTag/team}"]) is None
    assert iam_sets._plain(None) is None
    assert iam_sets._plain(("a",)) is None
    assert iam_sets._plain(True) != iam_sets._plain(1)  # True is not 1 to IAM ("true" against "1")


def _pairwise(policy, actions, resources):
    """access_granting_statements as it was: every (action, resource) pair of every Allow statement."""
    statements = iam_evaluation.policy_statements(policy)
    found = []
    for index, statement in enumerate(statements):
        if statement.get("Effect") != "Allow":
            continue
        for action, resource in [(a, r) for a in (actions or [None]) for r in (resources or [None])]:
            if not iam_evaluation._statement_may_grant(statement, [action] if action else [], [resource] if resource else []):
                continue
            if action and resource and iam_evaluation._denied_outright(statements, action, resource):
                continue
            found.append(index)
            break
    return found


STATEMENTS = [
    {"Effect": "Allow", "Action": ["s3:Get*"], "Resource": "arn:aws:s3:::b/a/*"},
    {"Effect": "Allow", "Action": "s3:*", "Resource": ["arn:aws:s3:::b/*", "arn:aws:s3:::b"]},
    {"Effect": "Allow", "NotAction": "iam:*", "NotResource": "arn:aws:s3:::b/a/*"},
    {"Effect": "Allow", "Action": "*", "Resource": "arn:aws:s3:::b/${aws:username}/*"},
    {"Effect": "Deny", "Action": "s3:PutObject", "Resource": "arn:aws:s3:::b/*"},
    {"Effect": "Deny", "Action": "s3:GetObject", "NotResource": "arn:aws:s3:::b/a/*"},
    {"Effect": "Deny", "Action": "s3:*", "Resource": "*", "Condition": {"Bool": {"aws:SecureTransport": "false"}}},
]
ACTIONS = [[], ["s3:GetObject"], ["s3:PutObject", "iam:PassRole"], ["s3:GetObject", "s3:PutObject", ""]]
RESOURCES = [[], ["arn:aws:s3:::b/a/x"], ["arn:aws:s3:::b/b/*", "arn:aws:s3:::b"], ["arn:aws:iam::1:role/r", "*", "arn:aws:s3:::b/a/*"]]


def test_access_granting_statements_tests_actions_and_resources_apart_with_the_same_answer():
    differ = []
    for size in (1, 2, 3):
        for chosen in itertools.combinations(STATEMENTS, size):
            policy = {"Version": "2012-10-17", "Statement": list(chosen)}
            for actions, resources in itertools.product(ACTIONS, RESOURCES):
                if iam_evaluation.access_granting_statements(policy, actions, resources) != _pairwise(policy, actions, resources):
                    differ.append((chosen, actions, resources))
    assert differ == []
