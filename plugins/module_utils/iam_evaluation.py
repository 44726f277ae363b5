# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""IAM policy evaluation for requests within one account, as AWS documents it.

Sources (AWS IAM User Guide): "Policy evaluation logic" and "Policy evaluation for requests within a
single account" (reference_policies_evaluation-logic_policy-eval-denyallow.html), "IAM JSON policy
elements: Condition operators" (reference_policies_elements_condition_operators.html), "Single-valued
vs. multivalued context keys" (reference_policies_condition-single-vs-multi-valued-context-keys.html),
"IAM policy elements: Variables and tags" (reference_policies_variables.html), "AWS global condition context
keys" (reference_policies_condition-keys.html), "Grammar of the IAM JSON policy language"
(reference_policies_grammar.html), NotAction, NotResource, NotPrincipal.

Why not a library: principalmapper 1.1.5 (``principalmapper.querying.local_policy_simulation``) is the
only evaluator on PyPI that evaluates a request context; iam-ape 1.1.6 and policyglass 0.8.0 compute
effective permission sets and keep conditions symbolic. principalmapper departs from the documentation
where these policies depend on it: ``StringNotLike``/``ArnNotLike`` on a key missing from the request
answer *false* (the guide: a negated operator on a missing key is true), ``ForAnyValue`` ORs the keys
of one block instead of ANDing them, and a resource-based policy is evaluated without telling a
role-session principal from a role principal (which decides whether a permissions boundary limits the
grant). It also needs a principal graph object built from an account. So this file evaluates, and
``tests/unit/plugins/module_utils/test_iam_evaluation.py`` holds it to the guide's own examples.

The order (single account):

1. an explicit ``Deny`` in any policy that applies (identity, permissions boundary, session, resource) denies;
2. a resource-based policy that allows the *role session* ARN (or the IAM user) allows;
3. a resource-based policy that allows the *role* ARN (or ``*``) allows when the permissions boundary and
   the session policy, where there are any, allow too;
4. otherwise the identity-based policies must allow, and the boundary and the session policy (if any).

An account principal (``"AWS": "123456789012"`` or ``...:root``) in a resource-based policy delegates to
the identity-based policies and grants nothing by itself.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import datetime
import functools
import ipaddress
import json
import re

ALLOWED = "allowed"
EXPLICIT_DENY = "explicitDeny"
IMPLICIT_DENY = "implicitDeny"

_BASE_OPERATORS = (
    "StringEquals",
    "StringNotEquals",
    "StringEqualsIgnoreCase",
    "StringNotEqualsIgnoreCase",
    "StringLike",
    "StringNotLike",
    "NumericEquals",
    "NumericNotEquals",
    "NumericLessThan",
    "NumericLessThanEquals",
    "NumericGreaterThan",
    "NumericGreaterThanEquals",
    "DateEquals",
    "DateNotEquals",
    "DateLessThan",
    "DateLessThanEquals",
    "DateGreaterThan",
    "DateGreaterThanEquals",
    "Bool",
    "BinaryEquals",
    "IpAddress",
    "NotIpAddress",
    "ArnEquals",
    "ArnLike",
    "ArnNotEquals",
    "ArnNotLike",
    "Null",
)
NEGATED_OPERATORS = (
    "StringNotEquals",
    "StringNotEqualsIgnoreCase",
    "StringNotLike",
    "NumericNotEquals",
    "DateNotEquals",
    "NotIpAddress",
    "ArnNotEquals",
    "ArnNotLike",
)
# Operators whose values may hold policy variables (reference_policies_variables.html: "Where you can use
# policy variables": the Resource element and string comparisons in conditions, ARN operators included).
_VARIABLE_OPERATORS = ("String", "Arn")


class PolicyError(ValueError):
    """A policy this evaluator cannot read (AWS would have refused it when it was stored)."""


def as_list(value):
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def load(document):
    """A policy document as a dict, from a dict or its JSON text (URL-encoded text included)."""
    if isinstance(document, dict):
        return document
    text = document.decode("utf-8") if isinstance(document, bytes) else document
    if text.lstrip().startswith("%7B") or text.lstrip().startswith("%7b"):
        from urllib.parse import unquote

        text = unquote(text)
    return json.loads(text)


# --- matching -------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _wildcard_regex(pattern, ignore_case=False):
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile(body + r"\Z", re.IGNORECASE | re.DOTALL if ignore_case else re.DOTALL)


def wildcard_match(pattern, value, ignore_case=False):
    return _wildcard_regex(pattern, ignore_case).match(value) is not None


def action_matches(pattern, action):
    """``s3:Get*`` matches ``s3:GetObject``; actions are case-insensitive."""
    return wildcard_match(pattern, action, ignore_case=True)


def arn_matches(pattern, arn):
    """ArnLike / Resource matching: the six colon-separated parts are matched one by one.

    reference_policies_elements_condition_operators.html#Conditions_ARN.
    """
    if pattern == "*":
        return True
    wanted = pattern.split(":", 5)
    have = arn.split(":", 5)
    if len(wanted) != 6 or len(have) != 6:
        # Not an ARN on one side: only a request for "*" (an action without resource-level permissions) is matched literally.
        return len(wanted) != 6 and len(have) != 6 and wildcard_match(pattern, arn)
    return all(wildcard_match(w, h) for w, h in zip(wanted, have))


_VARIABLE = re.compile(r"\$\{([^}]*)\}")


def policy_value_text(value):
    """A policy or request-context value as the string IAM compares: JSON ``true`` is ``"true"``, ``10`` is ``"10"``.

    "Values are enclosed in quotation marks. Quotation marks are optional for numeric and Boolean values."
    (Grammar of the IAM JSON policy language, reference_policies_grammar.html): a policy may carry
    ``{"Bool": {"aws:SecureTransport": true}}`` or ``{"NumericLessThan": {"s3:max-keys": 10}}`` and means the
    quoted value. A number is written as JSON writes it (``1.5``; ``1e3`` was read as ``1000.0`` and is
    compared as such: an assumption, the guide does not say how IAM spells a number it converts).
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        return value
    # null, an object, or an array inside the value list: IAM stores no such policy (DATA_TYPE_MISMATCH).
    raise PolicyError("a condition value must be a string, a number or a Boolean, not %r" % (value,))


def substitute(text, context):
    """``${aws:username}`` from the request context, ``${*}``/``${?}``/``${$}`` as literals, ``${key, 'default'}``.

    Returns None when a variable is missing from the context and has no default: "the value is effectively
    null. There is no equal or like value" ("Policy variables with no value", reference_policies_variables.html).
    The caller decides what matches nothing means: a Resource or NotResource entry "will not match any
    resource"; in a condition, positive operators do not match and negated ones "do match against a null value".
    """
    missing = []

    def value(match):
        inner = match.group(1).strip()
        if inner in ("*", "?", "$"):
            return "\0" + inner  # a literal, escaped until matching
        default = None
        if "," in inner:
            inner, default = inner.split(",", 1)
            inner, default = inner.strip(), default.strip().strip("'")
        found = as_list(lookup(context, inner))
        if not found:
            if default is None:
                missing.append(inner)
                return ""
            return default
        return policy_value_text(found[0])

    result = _VARIABLE.sub(value, text)
    return None if missing else result


def _literal_aware_match(pattern, value, ignore_case=False, arn=False):
    if "\0" not in pattern:
        return arn_matches(pattern, value) if arn else wildcard_match(pattern, value, ignore_case)
    # ${*} and friends: match the literal character, not the wildcard.
    pieces = re.split(r"(\0.)", pattern)
    body = ""
    for piece in pieces:
        if piece.startswith("\0"):
            body += re.escape(piece[1])
        else:
            body += "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in piece)
    return re.match(body + r"\Z", value, re.IGNORECASE if ignore_case else 0) is not None


def lookup(context, key):
    """A context value by key, case-insensitively (condition keys are not case-sensitive); None if absent."""
    if key in context:
        return context[key]
    folded = key.lower()
    for name, value in context.items():
        if name.lower() == folded:
            return value
    return None


# --- conditions -----------------------------------------------------------------------------------


def _split_operator(operator):
    qualifier = None
    for prefix in ("ForAllValues:", "ForAnyValue:"):
        if operator.startswith(prefix):
            qualifier, operator = prefix[:-1], operator[len(prefix) :]
    if_exists = operator.endswith("IfExists") and operator != "IfExists"
    if if_exists:
        operator = operator[: -len("IfExists")]
    if operator not in _BASE_OPERATORS or (if_exists and operator == "Null"):
        raise PolicyError("unknown condition operator %r" % operator)
    return qualifier, operator, if_exists


def _number(text):
    return float(text)


def _date(text):
    text = str(text)
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    normalized = text.replace("Z", "+00:00")
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", normalized):
        normalized += "T00:00:00+00:00"
    moment = datetime.datetime.fromisoformat(normalized)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return calendar.timegm(moment.utctimetuple()) + moment.microsecond / 1e6


def _context_text(value):
    """A request-context value as IAM compares it: a Python bool or number as its policy text, anything else as str."""
    return policy_value_text(value) if isinstance(value, (bool, int, float, str)) else str(value)


def _positive(operator, wanted, have):
    """Whether one context value satisfies one policy value under the positive form of ``operator``.

    Both sides may come as JSON booleans or numbers (``policy_value_text``): ``true`` is ``"true"``."""
    wanted = policy_value_text(wanted)
    have_text = _context_text(have)
    if operator in ("StringEquals", "StringNotEquals"):
        return wanted == have_text
    if operator in ("StringEqualsIgnoreCase", "StringNotEqualsIgnoreCase"):
        return wanted.lower() == have_text.lower()
    if operator in ("StringLike", "StringNotLike"):
        return _literal_aware_match(wanted, have_text)
    if operator in ("ArnEquals", "ArnLike", "ArnNotEquals", "ArnNotLike"):
        return _literal_aware_match(wanted, have_text, arn=True)
    if operator == "Bool":
        return wanted.lower() == have_text.lower()
    if operator == "BinaryEquals":
        return wanted == have_text
    try:
        if operator.startswith("Numeric"):
            a, b = _number(have_text), _number(wanted)
        elif operator.startswith("Date"):
            a, b = _date(have_text), _date(wanted)
        elif operator in ("IpAddress", "NotIpAddress"):
            return ipaddress.ip_address(have_text) in ipaddress.ip_network(wanted, strict=False)
        else:
            raise PolicyError("unknown condition operator %r" % operator)
    except ValueError:
        return False
    comparison = operator.replace("Numeric", "").replace("Date", "")
    return {
        "Equals": a == b,
        "NotEquals": a == b,
        "LessThan": a < b,
        "LessThanEquals": a <= b,
        "GreaterThan": a > b,
        "GreaterThanEquals": a >= b,
    }[comparison]


def _value_satisfies(operator, wanted_values, have):
    """One context value against the policy's values: ORed for positive operators, NORed for negated ones."""
    hit = any(w is not None and _positive(operator, w, have) for w in wanted_values)
    return not hit if operator in NEGATED_OPERATORS else hit


def null_wants_absent(wanted):
    """The answers to "is the key absent?" that meet a Null condition's values, ORed: "true" wants it absent, any other
    value present."""
    return set(policy_value_text(w).lower() == "true" for w in as_list(wanted))


def condition_key_holds(operator_text, key, wanted, context):
    """One key of one condition block (keys are ANDed by the caller, values ORed here)."""
    qualifier, operator, if_exists = _split_operator(operator_text)
    if wanted is None:
        raise PolicyError("condition %s on %s has a null value" % (operator_text, key))
    present = lookup(context, key)
    have_values = list(as_list(present)) if present is not None else []
    if operator == "Null":
        # Null: "true" means the key is absent (or, for a multivalued key, empty). Several values of one key are ORed, as
        # for every operator but the negated ones ("Conditions with multiple context keys or values", IAM User Guide):
        # ["true", "false"] holds whether the key is there or not.
        return (len(have_values) == 0) in null_wants_absent(wanted)
    variables = operator.startswith(_VARIABLE_OPERATORS)
    # A variable that cannot be resolved leaves None: no context value is equal to or like it, so a positive
    # operator does not match it and a negated one does (_value_satisfies; reference_policies_variables.html).
    wanted_values = [substitute(policy_value_text(w), context) if variables else policy_value_text(w) for w in as_list(wanted)]
    if qualifier == "ForAllValues":
        # True when every context value satisfies the operator, and when there is none.
        return all(_value_satisfies(operator, wanted_values, h) for h in have_values)
    if qualifier == "ForAnyValue":
        # False when there is no context value.
        return any(_value_satisfies(operator, wanted_values, h) for h in have_values)
    if not have_values:
        # A missing key: IfExists makes the condition true; negated operators are true; others false.
        return if_exists or operator in NEGATED_OPERATORS
    if operator in NEGATED_OPERATORS:
        return all(_value_satisfies(operator, wanted_values, h) for h in have_values)
    return any(_value_satisfies(operator, wanted_values, h) for h in have_values)


def conditions_hold(conditions, context):
    for operator_text, block in (conditions or {}).items():
        if not isinstance(block, dict):
            raise PolicyError("condition %r must map keys to values" % operator_text)
        for key, wanted in block.items():
            if not condition_key_holds(operator_text, key, wanted, context):
                return False
    return True


# --- statements -----------------------------------------------------------------------------------


def policy_statements(policy):
    statements = load(policy).get("Statement", [])
    return statements if isinstance(statements, list) else [statements]


def _resource_matches(patterns, resource, context):
    for pattern in as_list(patterns):
        text = substitute(pattern, context)
        if text is not None and _literal_aware_match(text, resource, arn=True):
            return True
    return False


def check_statement(statement):
    """Raise PolicyError for a statement no policy store accepts."""
    unknown = set(statement) - {"Sid", "Effect", "Action", "NotAction", "Resource", "NotResource", "Condition", "Principal", "NotPrincipal"}
    if unknown:
        raise PolicyError("unknown statement elements %s" % sorted(unknown))
    if statement.get("Effect") not in ("Allow", "Deny"):
        raise PolicyError("Effect must be Allow or Deny, not %r" % statement.get("Effect"))
    if ("Action" in statement) == ("NotAction" in statement):
        raise PolicyError("a statement has exactly one of Action and NotAction")


def principal_matches(statement, principal):
    """Whether a resource-based policy's Principal/NotPrincipal covers ``principal`` ({"arns": [...], "service": ...})."""

    def covered(block, arns=None):
        arns = principal.get("arns", ()) if arns is None else arns
        if block == "*":
            return True
        if not isinstance(block, dict):
            raise PolicyError('Principal must be "*" or a map')
        for kind, values in block.items():
            for value in as_list(values):
                if kind == "AWS" and (value == "*" or value in arns):
                    return True
                if kind == "Service" and value == principal.get("service"):
                    return True
                if kind == "Federated" and value == principal.get("federated"):
                    return True
        return False

    if "Principal" in statement:
        return covered(statement["Principal"])
    if "NotPrincipal" in statement:
        # Excluded only when the requester itself is named (a role's sessions are not excluded by the role ARN).
        return not covered(statement["NotPrincipal"], principal.get("requester", principal.get("arns", ())))
    return True  # identity-based policies have no principal element


def action_applies(statement, action):
    """Whether a statement's Action (or NotAction) covers ``action``: a statement that does not applies to no request
    for it, whatever the resource and the context."""
    if "Action" in statement:
        return any(action_matches(p, action) for p in as_list(statement["Action"]))
    return not any(action_matches(p, action) for p in as_list(statement["NotAction"]))


def statement_applies(statement, action, resource, context, principal=None):
    check_statement(statement)
    if not action_applies(statement, action):
        return False
    if "Resource" in statement:
        if not _resource_matches(statement["Resource"], resource, context):
            return False
    elif "NotResource" in statement:
        if _resource_matches(statement["NotResource"], resource, context):
            return False
    elif principal is None:
        raise PolicyError("an identity-based statement needs Resource or NotResource")
    if principal is not None and not principal_matches(statement, principal):
        return False
    return conditions_hold(statement.get("Condition"), context)


def matching_statements(policy, action, resource, context, principal=None, policy_id=""):
    """The statements of ``policy`` that apply to the request, as (effect, policy_id, index, sid)."""
    found = []
    for index, statement in enumerate(policy_statements(policy)):
        if statement_applies(statement, action, resource, context, principal):
            found.append((statement["Effect"], policy_id, index, statement.get("Sid", "")))
    return found


def _verdict(matches):
    effects = {m[0] for m in matches}
    if "Deny" in effects:
        return EXPLICIT_DENY
    if "Allow" in effects:
        return ALLOWED
    return IMPLICIT_DENY


# --- the decision ---------------------------------------------------------------------------------


class Principal:
    """Who signs the request: an IAM role's session (``role_arn``) or an IAM user (``user_arn``).

    A role never signs a request: its sessions do, so a principal with a ``role_arn`` is always an assumed-role
    session, whether or not its ``session_arn`` or ``session_name`` is known. ``role_id`` is the role's unique ID
    (AROA...); ``session_name`` is the RoleSessionName (read from ``session_arn`` when only that is given); the
    session ARN is built from the two when ``session_arn`` is not given.

    ``identity_policies`` are (policy id, document) pairs: inline and attached policies; ``boundary`` and
    ``session_policy`` are documents or None; ``tags`` are the role's or user's tags and ``session_tags`` the
    session's (aws:PrincipalTag).
    """

    def __init__(
        self,
        account_id,
        identity_policies,
        role_arn=None,
        session_arn=None,
        user_arn=None,
        boundary=None,
        session_policy=None,
        tags=None,
        role_id=None,
        session_name=None,
        session_tags=None,
    ):
        self.account_id = account_id
        self.identity_policies = list(identity_policies)
        self.role_arn = role_arn
        self.user_arn = user_arn
        self.boundary = boundary
        self.session_policy = session_policy
        self.tags = dict(tags or {})
        self.session_tags = dict(session_tags or {})
        self.role_id = role_id
        if session_name is None and session_arn and ":assumed-role/" in session_arn:
            session_name = session_arn.rsplit("/", 1)[-1]
        self.session_name = session_name
        if session_arn is None and role_arn and session_name:
            session_arn = role_session_arn(role_arn, session_name)
        self.session_arn = session_arn

    @property
    def arn(self):
        return self.session_arn or self.user_arn or self.role_arn

    def principal_tags(self):
        """The aws:PrincipalTag keys: "New session tags override existing assumed role or federated user tags with
        the same tag key, regardless of case." ("Passing session tags in AWS STS", id_session-tags.html)."""
        overridden = set(key.lower() for key in self.session_tags)
        merged = dict((key, value) for key, value in self.tags.items() if key.lower() not in overridden)
        merged.update(self.session_tags)
        return merged

    def context(self):
        """The global condition keys AWS sets from the principal ("AWS global condition context keys",
        reference_policies_condition-keys.html, and its "Principal key values" table in reference_policies_variables.html).

        For an assumed role: ``aws:PrincipalArn`` is the role's ARN ("For IAM roles, the request context returns the
        ARN of the role, not the ARN of the user that assumed the role"), ``aws:PrincipalType`` is ``AssumedRole``,
        ``aws:userid`` is ``role-id:caller-specified-role-name`` (absent here unless both are known: no value is
        better than a wrong one), ``aws:username`` is "(not present)" ("requests that are made using ... IAM roles do
        not include this key"). For an IAM user: its ARN, ``User``, its name; ``aws:userid`` is the user's unique ID,
        which this principal does not know, so it is absent.
        """
        keys = {"aws:PrincipalAccount": self.account_id}
        if self.role_arn:
            keys["aws:PrincipalArn"] = self.role_arn
            keys["aws:PrincipalType"] = "AssumedRole"
            if self.role_id and self.session_name:
                keys["aws:userid"] = "%s:%s" % (self.role_id, self.session_name)
        elif self.user_arn:
            keys["aws:PrincipalArn"] = self.user_arn
            keys["aws:PrincipalType"] = "User"
            keys["aws:username"] = self.user_arn.rsplit("/", 1)[-1]
        for key, value in self.principal_tags().items():
            keys["aws:PrincipalTag/%s" % key] = value
        return dict((k, v) for k, v in keys.items() if v is not None)


def role_session_arn(role_arn, session_name):
    """``arn:aws:sts::account:assumed-role/role-name/role-session-name`` ("IAM identifiers", reference_identifiers.html):
    the role's name without its path."""
    parts = role_arn.split(":", 5)
    if len(parts) != 6 or not parts[5].startswith("role/"):
        raise PolicyError("not a role ARN: %r" % role_arn)
    return "arn:%s:sts::%s:assumed-role/%s/%s" % (parts[1], parts[4], parts[5].rsplit("/", 1)[-1], session_name)


def evaluate(principal, action, resource, context=None, resource_policy=None):
    """The decision for one request: a dict shaped like one of SimulatePrincipalPolicy's EvaluationResults.

    ``{"EvalActionName", "EvalResourceName", "EvalDecision", "MatchedStatements", "PermissionsBoundaryDecisionDetail"}``.
    """
    context = dict(principal.context(), **(context or {}))
    identity = []
    for policy_id, document in principal.identity_policies:
        identity.extend(matching_statements(document, action, resource, context, policy_id=policy_id))
    boundary = matching_statements(principal.boundary, action, resource, context, policy_id="PermissionsBoundary") if principal.boundary else None
    session = matching_statements(principal.session_policy, action, resource, context, policy_id="SessionPolicy") if principal.session_policy else None
    by_session, by_role, resource_matches = [], [], []
    if resource_policy:
        exact = {"arns": [a for a in (principal.session_arn, principal.user_arn) if a]}
        role = {"arns": [a for a in (principal.role_arn,) if a]}
        account = {"arns": [principal.account_id, "arn:aws:iam::%s:root" % principal.account_id]}
        by_session = matching_statements(resource_policy, action, resource, context, dict(exact, requester=exact["arns"]), "ResourcePolicy")
        by_role = [
            m
            for m in matching_statements(resource_policy, action, resource, context, dict(role, requester=exact["arns"]), "ResourcePolicy")
            if m not in by_session
        ]
        # A Deny naming the requester, its role or its account (or "*") applies; NotPrincipal excludes the requester only.
        anyone = {"arns": exact["arns"] + role["arns"] + account["arns"], "requester": exact["arns"]}
        denies = [m for m in matching_statements(resource_policy, action, resource, context, anyone, "ResourcePolicy") if m[0] == "Deny"]
        by_session = [m for m in by_session if m[0] == "Allow"]
        by_role = [m for m in by_role if m[0] == "Allow"]
        resource_matches = by_session + by_role + denies
    everything = identity + (boundary or []) + (session or []) + resource_matches
    boundary_allows = boundary is None or _verdict(boundary) == ALLOWED
    session_allows = session is None or _verdict(session) == ALLOWED
    if any(m[0] == "Deny" for m in everything):
        decision, matched = EXPLICIT_DENY, [m for m in everything if m[0] == "Deny"]
    elif _verdict(by_session) == ALLOWED:
        decision, matched = ALLOWED, by_session
    elif _verdict(by_role) == ALLOWED and boundary_allows and session_allows:
        decision, matched = ALLOWED, by_role + (boundary or []) + (session or [])
    elif _verdict(identity) == ALLOWED and boundary_allows and session_allows:
        decision, matched = ALLOWED, identity + (boundary or []) + (session or [])
    else:
        decision, matched = IMPLICIT_DENY, []
    result = {
        "EvalActionName": action,
        "EvalResourceName": resource,
        "EvalDecision": decision,
        "MatchedStatements": [{"SourcePolicyId": m[1], "SourcePolicyType": _policy_type(principal, m[1]), "Sid": m[3], "Index": m[2]} for m in matched],
    }
    if principal.boundary:
        result["PermissionsBoundaryDecisionDetail"] = {"AllowedByPermissionsBoundary": boundary_allows}
    return result


def _policy_type(principal, policy_id):
    """SimulatePrincipalPolicy's PolicySourceType: user, group, role, aws-managed, user-managed, resource, none."""
    if policy_id == "ResourcePolicy":
        return "resource"
    if policy_id in ("PermissionsBoundary", "SessionPolicy"):
        return "none"
    if policy_id.startswith("arn:aws:iam::aws:policy/"):
        return "aws-managed"
    if policy_id.startswith("arn:"):
        return "user-managed"
    return "user" if principal.user_arn else "role"


def denial_reason(principal, result):
    """The end of AWS's AccessDenied message: why the request was refused."""
    if result["EvalDecision"] == EXPLICIT_DENY:
        kinds = {m["SourcePolicyId"] for m in result["MatchedStatements"]}
        if "ResourcePolicy" in kinds:
            return "with an explicit deny in a resource-based policy"
        if "PermissionsBoundary" in kinds:
            return "with an explicit deny in a permissions boundary"
        if "SessionPolicy" in kinds:
            return "with an explicit deny in a session policy"
        return "with an explicit deny in an identity-based policy"
    if principal.boundary and not result.get("PermissionsBoundaryDecisionDetail", {}).get("AllowedByPermissionsBoundary", True):
        return "because no permissions boundary allows the %s action" % result["EvalActionName"]
    return "because no identity-based policy allows the %s action" % result["EvalActionName"]


# --- Access Analyzer's CheckAccessNotGranted -----------------------------------------------------


def _any_value(pattern):
    """A resource pattern with its policy variables as wildcards: any request may give them any value."""
    return _VARIABLE.sub("*", pattern)


def _statement_may_grant(statement, actions, resources):
    """Whether ``statement`` may allow one of ``actions`` on one of ``resources`` for some request (conditions assumed met).

    A resource may be a pattern (Access, IAM Access Analyzer API Reference: "You can only use a wildcard in the portion of
    the ARN that specifies the resource ID"): a statement on any part of it counts (``iam_sets``, pattern intersection).
    """
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import iam_sets

    if actions and not any(action_applies(statement, a) for a in actions):
        return False
    if resources:
        if "Resource" in statement:
            return any(iam_sets.arns_intersect(_any_value(p), [r]) for p in as_list(statement["Resource"]) for r in resources)
        if "NotResource" in statement:
            # A NotResource entry with a variable may leave out anything, or nothing: it leaves out nothing here.
            left_out = [p for p in as_list(statement["NotResource"]) if not _VARIABLE.search(p)]
            return any(not any(iam_sets.arn_covers(p, r) for p in left_out) for r in resources)
    return True


def _denied_outright(statements, action, resource):
    """Whether an unconditional Deny takes ``action`` away on every resource ``resource`` (a pattern) stands for."""
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import iam_sets

    for statement in statements:
        unconditional = not statement.get("Condition") and "Principal" not in statement and "NotPrincipal" not in statement
        if statement.get("Effect") != "Deny" or not unconditional or not action_applies(statement, action):
            continue
        if "Resource" in statement:
            if any(iam_sets.arn_covers(p, resource) for p in as_list(statement["Resource"]) if not _VARIABLE.search(p)):
                return True
        elif not any(iam_sets.arns_intersect(_any_value(p), [resource]) for p in as_list(statement.get("NotResource"))):
            return True
    return False


def access_granting_statements(policy, actions, resources):
    """The indexes of the Allow statements that may grant one of ``actions`` on one of ``resources``.

    IAM Access Analyzer's CheckAccessNotGranted: "If only actions are specified, IAM Access Analyzer checks
    for access to perform at least one of the actions on any resource in the policy. If only resources are
    specified, ... any action on at least one of the resources. If both ... at least one of the specified
    actions on at least one of the specified resources." A condition may be met by some request, so a
    statement with one counts; an unconditional Deny covering an action on a resource takes it away.
    """
    statements = policy_statements(policy)
    for statement in statements:
        check_statement(statement)
        for operator in statement.get("Condition") or {}:
            _split_operator(operator)
    # Whether a statement may grant one action on one resource is whether it names the action and reaches the resource,
    # the two tested apart (``_statement_may_grant``): the pairs it may grant are the actions it names times the resources
    # it reaches, found in as many tests as there are actions and resources, not their product. Only an unconditional
    # Deny (``_denied_outright``) is decided pair by pair, and only where the policy has a Deny.
    denies = any(statement.get("Effect") == "Deny" for statement in statements)
    found = []
    for index, statement in enumerate(statements):
        if statement.get("Effect") != "Allow":
            continue
        named = [a for a in (actions or [None]) if _statement_may_grant(statement, [a] if a else [], [])]
        reached = [r for r in (resources or [None]) if _statement_may_grant(statement, [], [r] if r else [])]
        if not (named and reached):
            continue
        if denies and all(action and resource and _denied_outright(statements, action, resource) for action in named for resource in reached):
            continue
        found.append(index)
    return found
