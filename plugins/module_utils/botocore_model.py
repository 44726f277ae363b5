# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""A request checked against botocore's service model: what AWS would reject, before it is sent.

One walker (``problems``) finds what breaks the model (a required member missing, a wrong type,
a length or value out of range, a value outside the enum, a pattern not matched); two renderers
word it: ``request_problems`` for the collection's messages (``CreateCluster.InstanceGroups[0].InstanceType:
'ml.bogus' is not a valid ClusterInstanceType``), ``aws_messages`` as AWS's ValidationException says
it (``Value 'ml.bogus' at 'instanceGroups.1.member.instanceType' failed to satisfy constraint: ...``),
which the sandbox uses (``sandbox/core.py``'s ``validate_request``). The sandbox imports this file;
this file never imports the sandbox.

botocore's own parameter validation checks required members, types and minimums only; the
maximums, enums and patterns are AWS's server-side checks, which this imitates.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

try:
    # The \p{L}-style classes of the models' tag patterns (Java's Pattern); Python's re has none.
    import regex as _pattern_engine
except ImportError:
    _pattern_engine = None

# What a value of each kind must be, as AWS words it.
KINDS = (
    ("structure", "a structure", dict),
    ("list", "a list", list),
    ("map", "a map", dict),
    ("string", "a string", str),
    ("integer", "an integer", int),
    ("long", "an integer", int),
    ("float", "a number", (int, float)),
    ("double", "a number", (int, float)),
    ("boolean", "a boolean", bool),
)
KIND_WORDS = dict((kind, words) for kind, words, _types in KINDS)


class Problem:
    """One broken constraint. ``path`` is a tuple of member names (str), list indexes (int) and
    ``("key", k)``/``("value", k)`` steps of a map; ``constraint`` is one of null, type, length,
    range, enum, pattern; ``limit`` the bound (``("min", n)``/``("max", n)``) or the pattern."""

    def __init__(self, path, constraint, shape, value=None, limit=None):
        self.path, self.constraint, self.shape, self.value, self.limit = path, constraint, shape, value, limit


def fullmatch(pattern, value):
    """Whether ``value`` matches all of ``pattern``; True for a pattern this Python cannot read (left to AWS)."""
    if _pattern_engine is not None:
        return bool(_pattern_engine.fullmatch(pattern, value))
    try:
        return bool(re.fullmatch(pattern, value))
    except re.error:
        return True


def _type_problem(shape, value):
    for kind, _words, types in KINDS:
        if kind == shape.type_name:
            if isinstance(value, bool) and kind != "boolean":
                return True
            return not isinstance(value, types)
    return False


def _bounds(measure, shape, path, constraint, value, found):
    meta = shape.metadata
    if "min" in meta and measure < meta["min"]:
        found.append(Problem(path, constraint, shape, value, ("min", meta["min"])))
    if "max" in meta and measure > meta["max"]:
        found.append(Problem(path, constraint, shape, value, ("max", meta["max"])))


def _structure_problems(shape, value, path, found, answer):
    """A structure's required members that are missing, then each member given against its own shape."""
    for required in shape.metadata.get("required", []):
        if value.get(required) is None:
            found.append(Problem(path + (required,), "null", shape))
    for name, item in value.items():
        if name in shape.members and item is not None:
            problems(shape.members[name], item, path + (name,), found, answer)


def _list_problems(shape, value, path, found, answer):
    """A list's length (an empty list AWS answers breaks no minimum), then each item against the member shape."""
    if value or not answer:
        _bounds(len(value), shape, path, "length", value, found)
    for index, item in enumerate(value):
        problems(shape.member, item, path + (index,), found, answer)


def _map_problems(shape, value, path, found, answer):
    """A map's length (an empty map AWS answers breaks no minimum), then each key and value against their shapes."""
    if value or not answer:
        _bounds(len(value), shape, path, "length", value, found)
    for key, item in value.items():
        problems(shape.key, key, path + (("key", key),), found)
        problems(shape.value, item, path + (("value", key),), found, answer)


def _string_problems(shape, value, path, found):
    """A string's length, its enum and its pattern."""
    _bounds(len(value), shape, path, "length", value, found)
    enum = getattr(shape, "enum", None)
    if enum and value not in enum:
        found.append(Problem(path, "enum", shape, value))
    pattern = shape.metadata.get("pattern")
    if pattern and not fullmatch(pattern, value):
        found.append(Problem(path, "pattern", shape, value, pattern))


def problems(shape, value, path=(), found=None, answer=False):
    """Every Problem of ``value`` against ``shape`` (botocore Shape), depth first, in member order.

    ``answer``: ``value`` is what AWS answers (an output shape), where an empty list or map is no
    breach of a minimum length: AWS sends them (``"tags": {}`` under EKS's TagMap, minimum 1).
    """
    found = [] if found is None else found
    if shape is None or getattr(shape, "is_document_type", False):
        return found  # a document (identitystore's AttributeValue) is any JSON value
    kind = shape.type_name
    if _type_problem(shape, value):
        found.append(Problem(path, "type", shape, value))
        return found
    if kind == "structure":
        _structure_problems(shape, value, path, found, answer)
    elif kind == "list":
        _list_problems(shape, value, path, found, answer)
    elif kind == "map":
        _map_problems(shape, value, path, found, answer)
    elif kind == "string":
        _string_problems(shape, value, path, found)
    elif kind in ("integer", "long", "float", "double"):
        _bounds(value, shape, path, "range", value, found)
    return found


# ---------------------------------------------------------------- the collection's words


def _collection_path(operation, path):
    text = operation
    for step in path:
        if isinstance(step, int):
            text += "[%d]" % step
        elif isinstance(step, tuple):
            text += ".key" if step[0] == "key" else "[%s]" % step[1]
        else:
            text += "." + step
    return text


def _collection_message(problem, where):
    meta, value = problem.shape.metadata, problem.value
    if problem.constraint == "null":
        return "%s is required" % where
    if problem.constraint == "type":
        return "%s: %r must be %s" % (where, value, KIND_WORDS[problem.shape.type_name])
    if problem.constraint == "length" and problem.shape.type_name == "string":
        return "%s: %r must be %s to %s characters long" % (where, value, meta.get("min", 0), meta.get("max"))
    if problem.constraint == "length":
        return "%s must have between %s and %s items" % (where, meta.get("min", 0), meta.get("max", "any"))
    if problem.constraint == "range":
        return "%s: %s must be between %s and %s" % (where, value, meta.get("min"), meta.get("max"))
    if problem.constraint == "enum":
        return "%s: %r is not a valid %s" % (where, value, problem.shape.name)
    return "%s: %r does not match the pattern %s" % (where, value, problem.limit)


def request_problems(service_model, operation, request):
    """What AWS would reject in ``request`` for ``operation`` (e.g. ``CreateCluster``), in the collection's words."""
    shape = service_model.operation_model(operation).input_shape
    return [_collection_message(p, _collection_path(operation, p.path)) for p in problems(shape, request)]


# ---------------------------------------------------------------- AWS's words


def _aws_path(path, prefix=""):
    parts = [prefix] if prefix else []
    for step in path:
        if isinstance(step, int):
            parts.append("%d.member" % (step + 1))
        elif isinstance(step, tuple):
            parts.append("key" if step[0] == "key" else str(step[1]))
        else:
            # AWS names members in lowerCamelCase in validation messages.
            parts.append(step[:1].lower() + step[1:])
    return ".".join(parts)


def _aws_message(problem, prefix=""):
    where, value = _aws_path(problem.path, prefix), problem.value
    shown = value if isinstance(value, (str, int, float)) else "[...]"
    if problem.constraint == "null":
        return "Value null at '%s' failed to satisfy constraint: Member must not be null" % where
    if problem.constraint == "type":
        shown = "" if problem.shape.type_name in ("structure", "list", "map") else " '%s'" % (value,)
        return "Value%s at '%s' failed to satisfy constraint: Member must be %s" % (shown, where, KIND_WORDS[problem.shape.type_name])
    if problem.constraint in ("length", "range"):
        bound, limit = problem.limit
        words = "greater than or equal to" if bound == "min" else "less than or equal to"
        what = "have length" if problem.constraint == "length" else "have value"
        return "Value '%s' at '%s' failed to satisfy constraint: Member must %s %s %s" % (shown, where, what, words, limit)
    if problem.constraint == "enum":
        return "Value '%s' at '%s' failed to satisfy constraint: Member must satisfy enum value set: [%s]" % (value, where, ", ".join(problem.shape.enum))
    return "Value '%s' at '%s' failed to satisfy constraint: Member must satisfy regular expression pattern: %s" % (value, where, problem.limit)


def aws_messages(shape, params, prefix="", answer=False):
    """What AWS's ValidationException lists for ``params`` against ``shape`` (an operation's input shape;
    with ``answer``, an output shape and what AWS answered); paths start at ``prefix``."""
    return [_aws_message(p, prefix) for p in problems(shape, params, answer=answer)]
