"""IAM's policy grammar for condition values, which moto 5.2.5 holds narrower than IAM: a JSON number is a value too.

"Values are enclosed in quotation marks. Quotation marks are optional for numeric and Boolean values" (Grammar of the
IAM JSON policy language, reference_policies_grammar.html). moto's validator takes a string, a Boolean or a list, and
refuses ``{"NumericLessThan": {"s3:max-keys": 10}}`` or ``{"DateGreaterThan": {"aws:EpochTime": 1700000000}}`` as
"Syntax errors in policy."; IAM stores them, and the collection's evaluator reads them as their text
(``iam_evaluation``). Each number is validated here as the text it stands for; everything else as moto validates it.
"""

from __future__ import annotations

import copy

from moto.iam.policy_validation import BaseIAMPolicyValidator

_CONDITION_SYNTAX = BaseIAMPolicyValidator._validate_condition_syntax
_LEGACY_CONDITION = BaseIAMPolicyValidator._legacy_parse_condition


def _as_text(value):
    if isinstance(value, list):
        return [_as_text(item) for item in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def _texts(condition_value):
    return {key: _as_text(value) for key, value in condition_value.items()} if isinstance(condition_value, dict) else condition_value


def validate_condition_syntax(statement):
    if isinstance(statement.get("Condition"), dict):
        statement = dict(statement, Condition={operator: _texts(block) for operator, block in statement["Condition"].items()})
    _CONDITION_SYNTAX(copy.deepcopy(statement))


def legacy_parse_condition(condition_key, condition_value):
    _LEGACY_CONDITION(condition_key, _texts(condition_value))


def install() -> None:
    BaseIAMPolicyValidator._validate_condition_syntax = staticmethod(validate_condition_syntax)
    BaseIAMPolicyValidator._legacy_parse_condition = staticmethod(legacy_parse_condition)
