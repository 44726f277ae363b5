# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Drift found in this run, shared by the drift callback and the drift lookup.

The callback records into ``RECORDED`` in the controller process; a lookup runs
in a worker forked from it afterwards, so it reads what was recorded until then.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils.compare import differences

RECORDED = {}
# Set by the callback when it loads: a drift report without it would find nothing, always.
CALLBACK_LOADED = []


def fields_of(diff):
    """The fields a module's ``diff`` changes; ``["(whole resource)"]`` when it has no before/after."""
    diffs = diff if isinstance(diff, list) else [diff]
    fields = []
    for entry in diffs:
        if isinstance(entry, dict) and "before" in entry and "after" in entry:
            before, after = entry["before"], entry["after"]
            if isinstance(before, dict) and isinstance(after, dict):
                fields.extend(differences(before, after))
            elif before != after:
                fields.append("(whole resource)")
    return sorted(set(fields)) or ["(whole resource)"]


def record(team, task, module, diff):
    RECORDED.setdefault(team, []).append({"task": task, "module": module, "fields": fields_of(diff)})


def summary():
    return dict((team, list(changes)) for team, changes in sorted(RECORDED.items()))
