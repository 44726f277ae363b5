# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: drift
type: aggregate
short_description: Per-team drift summary, field by field
version_added: 0.1.0
description:
  - In plays whose vars set C(hyperpod_drift=true) (as C(playbooks/drift.yml) does), records every
    task that reports a change, per host (per team), with the fields its before/after diff changes.
  - Prints the summary at the end of the run and writes it as JSON to C(HYPERPOD_DRIFT_REPORT) when
    that environment variable is set. The lookup P(hyperpod.tenancy.drift#lookup) reads it, so the
    playbook can fail when drift exists.
requirements:
  - enabled in callbacks_enabled (this repository's ansible.cfg enables it)
"""

import json
import os

from ansible_collections.hyperpod.tenancy.plugins.module_utils import drift
from ansible_collections.hyperpod.tenancy.plugins.plugin_utils.callback import AggregateCallback


class CallbackModule(AggregateCallback):
    CALLBACK_NAME = "hyperpod.tenancy.drift"

    def __init__(self):
        super(CallbackModule, self).__init__()
        drift.CALLBACK_LOADED.append(True)
        self._recording = False
        self._used = False

    def v2_playbook_on_play_start(self, play):
        self._recording = bool(play.vars.get("hyperpod_drift"))
        self._used = self._used or self._recording

    def v2_runner_on_ok(self, result):
        if not self._recording or not result.result.get("changed"):
            return
        task = result.task
        if task.action in ("ansible.builtin.include_role", "include_role", "ansible.builtin.set_fact", "set_fact"):
            return
        team = result.host.get_vars().get("hyperpod_team_name", result.host.get_name())
        drift.record_result(team, task.get_name(), task.action, result.result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        # A team run whose later layer failed still found the drift of the layers before it.
        if self._recording and result.result.get("changed") and isinstance(result.result.get("layers"), dict):
            self.v2_runner_on_ok(result)

    def v2_playbook_on_stats(self, stats):
        if not self._used:
            return
        found = drift.summary()
        path = os.environ.get("HYPERPOD_DRIFT_REPORT")
        if path:
            with open(path, "w") as report:
                json.dump(found, report, indent=2, sort_keys=True)
        if not found:
            self._display.display("DRIFT: none, every team matches the team file")
            return
        self._display.display("DRIFT: %d team(s) differ from the team file" % len(found))
        for team, changes in found.items():
            self._display.display("  %s" % team)
            for change in changes:
                self._display.display("    - %s (%s): %s" % (change["task"], change["module"], ", ".join(change["fields"])))
