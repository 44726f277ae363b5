#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: team_plan
short_description: Read and compare every team of a run at once, as a plan
version_added: 0.1.0
description:
  - Runs M(hyperpod.tenancy.team_resources) for every team in O(teams) in check mode, in one process, up to eight
    teams at once, and returns each team's result (the reads and comparisons a run of the teams would make one team
    after another, made with several in flight).
  - Each team's M(hyperpod.tenancy.team_resources) task takes its entry as O(hyperpod.tenancy.team_resources#module:planned).
    A team whose entry changes nothing (or any team, in check mode) returns it without a call; a team with something to
    change converges from reads of its own, so no write is ever planned from this module's reads.
  - Writes nothing, in check mode or not. A team whose options are refused or whose check fails is returned as
    C(failed) only; its own task then fails with its own message.
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  teams:
    description:
      - The options of M(hyperpod.tenancy.team_resources), one mapping a team, as
        P(hyperpod.tenancy.team_layer_args#filter) builds them.
    type: list
    elements: dict
    required: true
extends_documentation_fragment:
  - hyperpod.tenancy.attributes.info_module
  - hyperpod.tenancy.identity_center
  - hyperpod.tenancy.aws
"""

EXAMPLES = r"""
- name: Plan every team of the play once, on its first host
  hyperpod.tenancy.team_plan:
    teams: "{{ teams | map('hyperpod.tenancy.team_layer_args', hyperpod_shared) | list }}"
  run_once: true
  register: team_plan

- name: Converge each team from its plan
  hyperpod.tenancy.team_resources:
    args: "{{ team | hyperpod.tenancy.team_layer_args(hyperpod_shared) | combine({'planned': team_plan.plan[team.name]}) }}"
"""

RETURN = r"""
plan:
  description:
    - By team, what O(hyperpod.tenancy.team_resources#module:planned) takes.
    - C(digest) names the options the team was planned from; C(result) is what M(hyperpod.tenancy.team_resources) returned
      in check mode (C(changed), C(layers), C(diff)) and C(warnings) its warnings; C(failed) is true instead of
      C(result) when the team's options or a layer failed.
  returned: always
  type: dict
  sample:
    vision:
      digest: 2f1c0a...
      result: {changed: false, layers: {}, diff: {before: {}, after: {}}}
      warnings: []
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import IDENTITY_CENTER, options
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_resources import plan

MODULE_OPTIONS = options(dict(teams=dict(type="list", elements="dict", required=True)), IDENTITY_CENTER)


def converge(context, params):
    return dict(changed=False, plan=plan(context, params["teams"], params.get("identity_center")))


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
