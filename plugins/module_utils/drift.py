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


def record_result(team, task, module, result):
    """A changed task's drift. A team_resources run is one change per layer that changed, under that layer's module."""
    layers, diff = result.get("layers"), result.get("diff", {})
    if not isinstance(layers, dict) or not isinstance(diff, dict):
        record(team, task, module, diff)
        return
    # Only team_resources returns layers; its layer table loads every layer, so only when one ran.
    from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_resources import LAYERS

    modules = dict((layer.option, layer.module) for layer in LAYERS)
    for option, outcome in layers.items():
        if outcome.get("changed"):
            layer_diff = {"before": (diff.get("before") or {}).get(option), "after": (diff.get("after") or {}).get(option)}
            record(team, "%s (%s)" % (task, option), "hyperpod.tenancy.%s" % modules.get(option, option), layer_diff)


def summary():
    return dict((team, list(changes)) for team, changes in sorted(RECORDED.items()))
