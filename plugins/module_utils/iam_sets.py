# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""IAM evaluation over *sets* of requests: may any request of a set be allowed?

``iam_evaluation`` decides one request. The isolation proof needs more: "nlp's role cannot read vision's data" is a
claim about every object under ``vision/``, every listing that shows vision's keys and every value AWS may put in the
request context, not about the one object and context a test happens to ask. So a cell is a ``RequestSet``:

- ``arns``: the resources as ARN patterns (``arn:aws:s3:::bucket/vision/*``), less those of ``exclude``;
- ``keys``: the condition keys the principal and the resource *pin*, each to its alternatives: ``ABSENT`` (the key is
  not in the request), ``("value", text)`` or ``("like", pattern)`` (any string the pattern matches), less the strings of
  the patterns a third element lists (``like(pattern, but)``: the listing of the data bucket's root is every
  ``s3:prefix`` but those under a present team's prefix). ``closed`` lists
  key prefixes whose unlisted keys are absent (a role without session tags has no other ``aws:PrincipalTag/``).
  Every other key is *free*: AWS may give it any value or none (``aws:RequestedRegion``, ``aws:SourceIp``, ...).

``decide`` over-approximates what IAM allows, never under: an Allow counts when it *may* apply to some request of the
set (its Resource pattern intersects the set, each condition key satisfiable on its own), a Deny only when it *surely*
applies to every request (the set inside its Resource, each condition true for every alternative of its key). This is
what IAM Access Analyzer does for a policy check: it "assumes that conditions can be met" and "checks for access to
perform at least one of the actions on at least one of the resources" (CheckAccessNotGranted, IAM Access Analyzer API
Reference; Access, "You can only use a wildcard in the portion of the ARN that specifies the resource ID"). Keys in one
condition block are treated as independent, and an identity Allow and a boundary Allow as met by the same request: both
can only widen what is reported allowed. So a set decided denied has no request IAM allows, for any value of the free
keys; a set decided allowed may be an over-report, which the rendered team policies never trigger (their grants name
the team's own prefix, tag or ARN, which is disjoint from every other team's set).

Wildcards: ``*`` any run of characters, ``?`` one ("IAM JSON policy elements: Resource", "Condition operators");
matching is segment by segment for ARNs ("ARN condition operators ... each of the six colon-delimited components of
the ARN is checked separately"); a pattern of fewer than six segments is matched as a whole string, which can only
widen the answer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import itertools

from ansible_collections.hyperpod.tenancy.plugins.module_utils import iam_evaluation as ie

ABSENT = ("absent",)
_STAR, _ONE = "*", "?"
# Where a policy variable on a free key stood: any string, in a pattern read literally (StringEquals) too.
_FREE = "\1"


def value(text):
    return ("value", text)


def like(pattern, but=()):
    """Any string ``pattern`` matches but those the patterns ``but`` match: an Allow meets it only with a value outside
    every one of them (``_holds_on``)."""
    return ("like", pattern, tuple(but)) if but else ("like", pattern)


class RequestSet:
    """The requests of one cell but its action: ARN patterns less ``exclude``, and the condition keys pinned."""

    def __init__(self, arns, exclude=(), keys=None, closed=()):
        self.arns = tuple(arns)
        self.exclude = tuple(exclude)
        self.keys = dict((key.lower(), tuple(alternatives)) for key, alternatives in (keys or {}).items())
        self.closed = tuple(prefix.lower() for prefix in closed)

    def alternatives(self, key):
        """The alternatives of ``key``, or None when the key is free."""
        folded = key.lower()
        if folded in self.keys:
            return self.keys[folded]
        if any(folded.startswith(prefix) for prefix in self.closed):
            return (ABSENT,)
        return None

    def pinned_value(self, key):
        """The one value of a key pinned to a single value, for a policy variable; None otherwise."""
        found = self.alternatives(key)
        if found and len(found) == 1 and found[0][0] == "value":
            return found[0][1]
        return None


# --- patterns --------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=65536)
def _tokens(pattern, literal=False):
    """A pattern as tokens: _STAR, _ONE or a one-character string prefixed with "=" (a literal).

    ``\\0`` escapes the next character (``iam_evaluation.substitute`` writes ``${*}`` so), _FREE is a run of any
    characters (a variable on a free key); ``literal`` reads every other character as itself (StringEquals).
    """
    found, escaped = [], False
    for char in pattern:
        if escaped:
            found.append("=" + char)
            escaped = False
        elif char == "\0":
            escaped = True
        elif char == _FREE:
            found.append(_STAR)
        elif not literal and char in (_STAR, _ONE):
            found.append(char)
        else:
            found.append("=" + char)
    return tuple(found)


def _steps(token):
    """Where one character of input takes a token: (consumes the token?, the literal it needs or None)."""
    if token == _STAR:
        return False, None
    if token == _ONE:
        return True, None
    return True, token[1:]


def _fixed_run(pairs):
    """How many of the token ``pairs`` (from one end of two patterns) take one character each and may meet, up to the
    first ``*`` of either; None where two different literals meet (the patterns share no string)."""
    run = 0
    for token, other in pairs:
        if token == _STAR or other == _STAR:
            break
        if token != other and token != _ONE and other != _ONE:
            return None
        run += 1
    return run


@functools.lru_cache(maxsize=65536)
def _intersects(first, second):
    """Whether two token patterns match a common string: reachability in the product of their automata.

    Where both begin with a token that takes one character (a literal or _ONE), a common string's first character is
    taken by both, so they must meet and the rest decides; so at their ends. Trimmed so, ``team-data/nlp/*`` against
    ``team-data/vision/*`` is decided at the first character they differ, without the product of the two."""
    start = _fixed_run(zip(first, second))
    if start is None:
        return False
    end = _fixed_run(zip(reversed(first[start:]), reversed(second[start:])))
    if end is None:
        return False
    end_first, end_second = len(first) - end, len(second) - end
    first, second = first[start:end_first], second[start:end_second]
    seen, todo = set(), [(0, 0)]
    while todo:
        i, j = todo.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if i == len(first) and j == len(second):
            return True
        if i < len(first) and first[i] == _STAR:
            todo.append((i + 1, j))
        if j < len(second) and second[j] == _STAR:
            todo.append((i, j + 1))
        if i < len(first) and j < len(second):
            (moves_i, needs_i), (moves_j, needs_j) = _steps(first[i]), _steps(second[j])
            if (moves_i or moves_j) and (needs_i is None or needs_j is None or needs_i == needs_j):
                todo.append((i + moves_i, j + moves_j))
    return False


@functools.lru_cache(maxsize=65536)
def _covers(pattern, subset):
    """Whether every string ``subset`` matches, ``pattern`` matches too (sufficient, not necessary: False may be wrong,
    True never is). ``subset``'s ``*`` is a run only ``pattern``'s ``*`` can absorb, its ``?`` a character only
    ``pattern``'s ``*`` or ``?`` can: so a match of ``subset``'s tokens by ``pattern`` holds for every string of it."""
    seen, todo = set(), [(0, 0)]
    while todo:
        i, j = todo.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if i == len(pattern) and j == len(subset):
            return True
        if i < len(pattern) and pattern[i] == _STAR:
            todo.append((i + 1, j))
            if j < len(subset):
                todo.append((i, j + 1))
        elif i < len(pattern) and j < len(subset):
            one_character = pattern[i] == _ONE and subset[j] != _STAR
            if one_character or (pattern[i] == subset[j] and pattern[i] != _ONE):
                todo.append((i + 1, j + 1))
    return False


def _segments(arn):
    parts = arn.split(":", 5)
    return parts if len(parts) == 6 else None


@functools.lru_cache(maxsize=65536)
def strings_intersect(first, second, ignore_case=False, first_literal=False, second_literal=False):
    if ignore_case:
        first, second = first.lower(), second.lower()
    return _intersects(_tokens(first, first_literal), _tokens(second, second_literal))


@functools.lru_cache(maxsize=65536)
def strings_cover(pattern, subset, ignore_case=False, pattern_literal=False, subset_literal=False):
    if ignore_case:
        pattern, subset = pattern.lower(), subset.lower()
    return _covers(_tokens(pattern, pattern_literal), _tokens(subset, subset_literal))


def arns_intersect(pattern, arns):
    """Whether the ARN pattern matches some ARN of ``arns`` (patterns too), segment by segment."""
    return _arns_intersect(pattern, tuple(arns))


@functools.lru_cache(maxsize=65536)
def _arns_intersect(pattern, arns):
    if pattern == "*":
        return True
    wanted = _segments(pattern)
    for arn in arns:
        have = _segments(arn)
        if wanted is None or have is None:
            if strings_intersect(pattern, arn):
                return True
        elif all(strings_intersect(w, h) for w, h in zip(wanted, have)):
            return True
    return False


@functools.lru_cache(maxsize=65536)
def arn_covers(pattern, arn):
    """Whether the ARN pattern matches every ARN the pattern ``arn`` does (sufficient)."""
    if pattern == "*":
        return True
    wanted, have = _segments(pattern), _segments(arn)
    if wanted is None or have is None:
        return False
    return all(strings_cover(w, h) for w, h in zip(wanted, have))


# --- policy variables ------------------------------------------------------------------------------


def _resolve(text, requests):
    """``text`` with its policy variables resolved from the pinned keys: (text, free), where a variable on a free key
    is _FREE (any value) and ``free`` says there was one, or (None, False) when a variable cannot be resolved (its key
    is absent, with no default), which ``iam_evaluation.substitute`` decides as AWS documents it."""
    if _FREE in text:
        raise ie.PolicyError("a policy value holds the control character U+0001")
    if "${" not in text:
        return text, False
    free = []

    def fill(match):
        inner = match.group(1).strip()
        if inner in ("*", "?", "$"):
            return match.group(0)
        alternatives = requests.alternatives(inner.split(",", 1)[0].strip())
        if alternatives == (ABSENT,) or (alternatives and len(alternatives) == 1 and alternatives[0][0] == "value"):
            return match.group(0)  # substitute decides: the pinned value, or the default of a key that is absent
        free.append(inner)
        return _FREE

    marked = ie._VARIABLE.sub(fill, text)
    pinned = dict((key, alternatives[0][1]) for key, alternatives in requests.keys.items() if len(alternatives) == 1 and alternatives[0][0] == "value")
    resolved = ie.substitute(marked, pinned)
    return (None, False) if resolved is None else (resolved, bool(free))


# --- conditions ------------------------------------------------------------------------------------

_STRING_LIKE = ("StringLike", "StringNotLike")
_STRING_EQUALS = ("StringEquals", "StringNotEquals", "StringEqualsIgnoreCase", "StringNotEqualsIgnoreCase")
_ARN = ("ArnEquals", "ArnLike", "ArnNotEquals", "ArnNotLike")


def _pattern_meets_set(operator, wanted, pattern, every, literal):
    """One policy value against the alternative ``pattern`` (a string read ``literal``ly, or a pattern) under the positive
    form of ``operator``: whether some string of the alternative matches it (``every`` False), or every string does
    (``every`` True). None: cannot tell."""
    if operator in _STRING_LIKE:
        return strings_cover(wanted, pattern, subset_literal=literal) if every else strings_intersect(wanted, pattern, second_literal=literal)
    if operator in _STRING_EQUALS:
        ignore = "IgnoreCase" in operator
        if every:
            return strings_cover(wanted, pattern, ignore, pattern_literal=True, subset_literal=literal)
        return strings_intersect(wanted, pattern, ignore, first_literal=True, second_literal=literal)
    if operator in _ARN:
        return arn_covers(wanted, pattern) if every else arns_intersect(wanted, [pattern])
    return None


def _text(item):
    """A policy value as the string IAM compares (a JSON boolean as "true"/"false")."""
    if isinstance(item, bool):
        return "true" if item else "false"
    return str(item)


# A condition's values as a key of _holds_on_plain: each with its type (True is not 1), a list told from one value.
_PLAIN_TYPES = (str, bool, int, float)
_NO_KEYS = RequestSet(())


def _plain(wanted):
    """``wanted`` as a hashable key when no value of it holds a policy variable (nor _FREE, which _resolve refuses), else
    None: then the condition reads nothing of the request set but ``key``'s alternative (``_holds_on_plain``)."""
    items = wanted if isinstance(wanted, list) else [wanted]
    for item in items:
        if not isinstance(item, _PLAIN_TYPES) or (isinstance(item, str) and ("${" in item or _FREE in item)):
            return None
    return (isinstance(wanted, list), tuple((type(item), item) for item in items))


@functools.lru_cache(maxsize=65536)
def _holds_on_plain(operator_text, key, plain, alternative, every):
    """``_holds_on`` of a condition without policy variables. Its answer depends on the set's other keys only through a
    variable (``_resolve``; ``iam_evaluation.condition_key_holds`` reads ``key`` alone from its context otherwise), so it
    is decided once per alternative, not once per request set: the team tag and ``s3:prefix`` alternatives of every other
    team's resources repeat across each principal's cells."""
    is_list, items = plain
    wanted = [item for unused_type, item in items] if is_list else items[0][1]
    return _holds_on_set(operator_text, key, wanted, alternative, _NO_KEYS, every)


def _holds_on(operator_text, key, wanted, alternative, requests, every, plain=None):
    """Whether the condition holds for some (``every`` False) or every (True) request whose ``key`` is ``alternative``.
    ``plain``: ``_plain(wanted)``, where the caller has it."""
    if plain is not None and isinstance(alternative, tuple) and all(isinstance(part, str) for part in alternative):
        return _holds_on_plain(operator_text, key, plain, alternative, every)
    return _holds_on_set(operator_text, key, wanted, alternative, requests, every)


def _holds_on_set(operator_text, key, wanted, alternative, requests, every):
    """``_holds_on``, reading ``requests`` for the keys its policy variables name."""
    unused_qualifier, operator, unused_if_exists = ie._split_operator(operator_text)
    if alternative[0] == "like" and operator == "Null":
        return False in ie.null_wants_absent(wanted)  # a "like" key is present: some value must want it present
    resolved = [_resolve(_text(item), requests) for item in ie.as_list(wanted)]
    negated = operator in ie.NEGATED_OPERATORS
    free = any(is_free for unused, is_free in resolved)
    if free and alternative != ABSENT and (every or negated or operator not in _STRING_LIKE + _STRING_EQUALS + _ARN):
        # A variable on a free key may stand for any value, or for none (then no positive operator matches and every
        # negated one does: "Policy variables with no value", IAM User Guide): nothing holds surely, a negation may.
        return not every
    if operator in _ARN and any(text is not None and _segments(text) is None for text, unused in resolved):
        return not every  # an ARN value of fewer than six parts: AWS's documents do not say how it compares
    if alternative == ABSENT or (alternative[0] == "value" and not free):
        # One request context decides, with the pinned keys a policy variable may name (a missing key is decided by the
        # operator alone, whatever its values).
        context = dict((k, v[0][1]) for k, v in requests.keys.items() if len(v) == 1 and v[0][0] == "value")
        context.pop(key.lower(), None)
        if alternative != ABSENT:
            context[key] = alternative[1]
        return ie.condition_key_holds(operator_text, key, wanted, context)
    # A set of strings (a "like" alternative), or one string against values with a variable on a free key: each of the
    # keys pinned here is single-valued, so ForAnyValue/ForAllValues read its one value as the plain operator does.
    literal = alternative[0] == "value"
    # Positive: some string meets a value (may) / every string meets one value (surely, sufficient).
    # Negated: no value takes in every string (may: can only widen) / no value meets any string (surely).
    texts = [text for text, unused in resolved if text is not None]
    hits = [_pattern_meets_set(operator, text, alternative[1], every != negated, literal) for text in texts]
    if any(hit is None for hit in hits):
        return not every
    if len(alternative) > 2 and every == negated and operator in _STRING_LIKE + _STRING_EQUALS and "IgnoreCase" not in operator:
        # Where the hits are "some string of the pattern meets the value" (a positive operator's may, a negated one's
        # surely), a value whose every string a left-out pattern takes meets no string of the set. Only then: a value some
        # left-out patterns take only together still counts (an Allow may hold, a Deny does not surely: both can only
        # report more), and a case-insensitive one may be another string. (A negated value with a variable on a free key was decided above.)
        exact = operator in _STRING_EQUALS
        hits = [hit and not any(strings_cover(but, text, subset_literal=exact) for but in alternative[2]) for hit, text in zip(hits, texts)]
    return not any(hits) if negated else any(hits)


def condition_may_hold(operator_text, key, wanted, requests):
    alternatives = requests.alternatives(key)
    if alternatives is None:
        return True
    plain = _plain(wanted)
    return any(_holds_on(operator_text, key, wanted, alternative, requests, False, plain) for alternative in alternatives)


def condition_surely_holds(operator_text, key, wanted, requests):
    alternatives = requests.alternatives(key)
    if alternatives is None:
        return False
    plain = _plain(wanted)
    return all(_holds_on(operator_text, key, wanted, alternative, requests, True, plain) for alternative in alternatives)


def conditions_may_hold(statement, requests):
    """Whether the statement's conditions may all hold for some request of ``requests`` (a free key: any value or none)."""
    return _conditions(statement, requests, False)


def _conditions(statement, requests, every):
    test = condition_surely_holds if every else condition_may_hold
    for operator_text, block in (statement.get("Condition") or {}).items():
        if not isinstance(block, dict):
            raise ie.PolicyError("condition %r must map keys to values" % operator_text)
        for key, wanted in block.items():
            if not test(operator_text, key, wanted, requests):
                return False
    return True


# --- statements ------------------------------------------------------------------------------------


def _patterns(statement, element, requests):
    """The statement's Resource or NotResource patterns, variables resolved: [(pattern, has a free variable)]."""
    found = []
    for pattern in ie.as_list(statement[element]):
        resolved, free = _resolve(pattern, requests)
        if resolved is not None:
            found.append((resolved, free))
    return found


def _narrowed(pattern, arn):
    """``pattern`` with each segment the set's ``arn`` writes without a wildcard taken from it (where both match, the
    common strings have that segment): an S3 object's empty region and account, whatever ``*`` the pattern has there."""
    wanted, have = _segments(pattern), _segments(arn)
    if wanted is None or have is None:
        return pattern
    return ":".join(h if not any(c in h for c in (_STAR, _ONE, _FREE, "\0")) else w for w, h in zip(wanted, have))


def _reaches(pattern, requests):
    """Whether an ARN pattern matches some resource of the set: one of its ARNs, outside its ``exclude``."""
    for arn in requests.arns:
        if arns_intersect(pattern, [arn]) and not any(arn_covers(excluded, _narrowed(pattern, arn)) for excluded in requests.exclude):
            return True
    return False


def statement_may_apply(statement, action, requests):
    """Whether ``statement`` applies to some request of ``requests`` for ``action``."""
    ie.check_statement(statement)
    if not ie.action_applies(statement, action):
        return False
    if "Resource" in statement:
        if not any(_reaches(p, requests) for p, unused in _patterns(statement, "Resource", requests)):
            return False
    elif "NotResource" in statement:
        left_out = [p for p, free in _patterns(statement, "NotResource", requests) if not free]
        if all(any(arn_covers(p, arn) for p in left_out) for arn in requests.arns):
            return False
    else:
        raise ie.PolicyError("an identity-based statement needs Resource or NotResource")
    return _conditions(statement, requests, every=False)


def statement_surely_applies(statement, action, requests):
    """Whether ``statement`` applies to every request of ``requests`` for ``action``."""
    ie.check_statement(statement)
    if not ie.action_applies(statement, action):
        return False
    if "Resource" in statement:
        patterns = [p for p, free in _patterns(statement, "Resource", requests) if not free]
        if not all(any(arn_covers(p, arn) for p in patterns) for arn in requests.arns):
            return False
    elif "NotResource" in statement:
        if any(_reaches(p, requests) for p, unused in _patterns(statement, "NotResource", requests)):
            return False
    else:
        raise ie.PolicyError("an identity-based statement needs Resource or NotResource")
    return _conditions(statement, requests, every=True)


def _slices(requests):
    """The set cut by each alternative of its keys pinned to several: their union is the set, and a Deny that applies to
    every request of one slice protects that slice, though it may not protect another."""
    several = [(key, alternatives) for key, alternatives in sorted(requests.keys.items()) if len(alternatives) > 1]
    if not several:
        return [requests]
    found = []
    for chosen in itertools.product(*[alternatives for unused, alternatives in several]):
        keys = dict(requests.keys, **dict((key, (alternative,)) for (key, unused), alternative in zip(several, chosen)))
        found.append(RequestSet(requests.arns, requests.exclude, keys, requests.closed))
    return found


def decide(identity, boundary, action, requests):
    """(decision, the statements that may allow it) for ``action`` on every request of ``requests``.

    ``identity``: [(policy id, [statements])]; ``boundary``: [statements] or None. ``ALLOWED`` means some request may be
    allowed (with the (policy id, index, Sid) of each identity Allow that may apply); ``EXPLICIT_DENY`` that a Deny
    applies to every request (each slice of the set by its keys' alternatives has one); ``IMPLICIT_DENY`` that no Allow
    applies to any, in the identity policies or the boundary.
    """
    listed = [(policy_id, index, statement) for policy_id, statements in identity for index, statement in enumerate(statements)]
    denies = [statement for unused, unused_index, statement in listed if statement.get("Effect") == "Deny"]
    denies += [statement for statement in boundary or [] if statement.get("Effect") == "Deny"]
    allowing, denied = [], False
    for part in _slices(requests) if denies else [requests]:
        if any(statement_surely_applies(statement, action, part) for statement in denies):
            denied = True
            continue
        may = [(policy_id, index, s.get("Sid", "")) for policy_id, index, s in listed if s.get("Effect") == "Allow" and statement_may_apply(s, action, part)]
        if may and (boundary is None or any(s.get("Effect") == "Allow" and statement_may_apply(s, action, part) for s in boundary)):
            allowing.extend(m for m in may if m not in allowing)
    if allowing:
        return ie.ALLOWED, allowing
    return (ie.EXPLICIT_DENY if denied else ie.IMPLICIT_DENY), []
