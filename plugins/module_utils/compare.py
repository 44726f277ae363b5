# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Normalizing and comparing resources, so ``changed`` comes from a diff and not from which call ran."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import datetime

from ansible.module_utils.common.dict_transformations import camel_dict_to_snake_dict

# Fields AWS sets itself; never a reason to report a change.
SERVER_MANAGED = frozenset(
    (
        "CreationTime", "CreatedTime", "CreatedAt", "createdAt", "LastModifiedTime", "LastModifiedAt", "modifiedAt",
        "ResponseMetadata", "Status", "status", "FailureReason", "CreatedBy", "LastModifiedBy",
    )
)


def iso_date(value):
    """A date of an answer as a JSON value (ISO 8601): module options and results cross processes as JSON."""
    return value.isoformat() if isinstance(value, datetime.datetime) else value


def snake(resource, ignore=("Tags", "tags")):
    """AWS's CamelCase resource as this collection returns it, tags kept as given."""
    if resource is None:
        return {}
    return camel_dict_to_snake_dict(resource, ignore_list=list(ignore))


def tag_delta(current, desired):
    """``(to_set, to_unset)`` that turn tags ``current`` into ``desired`` (both {key: value})."""
    to_set = dict((k, v) for k, v in desired.items() if current.get(k) != v)
    return to_set, sorted(k for k in current if k not in desired)


def without(resource, fields=SERVER_MANAGED):
    """A deep copy of ``resource`` without ``fields`` at any depth."""
    if isinstance(resource, dict):
        return dict((k, without(v, fields)) for k, v in resource.items() if k not in fields)
    if isinstance(resource, list):
        return [without(v, fields) for v in resource]
    return copy.deepcopy(resource)


def differences(before, after, path=""):
    """Dotted paths whose values differ between two plain structures, sorted.

    Used for drift reports: ``quota.resources.0.count`` says more than "changed".
    """
    if isinstance(before, dict) and isinstance(after, dict):
        found = []
        for key in sorted(set(before) | set(after), key=str):
            found.extend(differences(before.get(key), after.get(key), "%s.%s" % (path, key) if path else str(key)))
        return found
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        found = []
        for index, (b, a) in enumerate(zip(before, after)):
            found.extend(differences(b, a, "%s.%d" % (path, index) if path else str(index)))
        return found
    return [] if before == after else [path or "."]
