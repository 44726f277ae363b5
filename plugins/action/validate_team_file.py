# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""validate_team_file on the controller: the team file is read as data, checked whole, and never templated.

Team files come from team leads' pull requests. The inventory plugin gives the team file's path
(``hyperpod_team_file``), never its content as variables; this action reads it with ``team_file.read`` (one document,
the key ``hyperpod_teams`` only, no anchors, aliases, tags or template markers) and marks every value unsafe before
anything else sees it: the teams this action returns (and every playbook then uses) carry each value verbatim.
Problems name the file, line and column of the value.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase
from ansible.utils.unsafe_proxy import wrap_var

from ansible_collections.hyperpod.tenancy.plugins.modules.validate_team_file import MODULE_OPTIONS, validated
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_model import problems_message
from ansible_collections.hyperpod.tenancy.plugins.plugin_utils import core_private, team_file as team_files


def _origin(value):
    """``file:line:column`` of a value Ansible loaded (a variable of group_vars, the inventory, ...), or None."""
    place = core_private.origin(value)
    if place is None:
        return None
    path, line, column = place
    path = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
    return "%s:%s:%s" % (path, line or "?", column or "?") if line else path


def _walk(value, field):
    """The deepest value along ``field`` (``quota.resources[0].count``) that exists, with its origin."""
    where = _origin(value)
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", field or ""):
        if part.startswith("[") and isinstance(value, list):
            index = int(part[1:-1])
            if index >= len(value):
                break
            value = value[index]
        elif isinstance(value, dict) and part in value:
            key = next(k for k in value if k == part)
            value = value[part]
            where = _origin(key) or where
        else:
            break
        where = _origin(value) or where
    return where


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        task_vars = task_vars or {}
        args = ArgumentSpecValidator(**MODULE_OPTIONS).validate(self._task.args)
        if args.error_messages:
            return dict(result, failed=True, msg="validate_team_file: %s" % "; ".join(args.error_messages))
        p = args.validated_parameters
        read = self._team_file(p, task_vars)
        if read.problems and read.teams is None:
            return dict(result, failed=True, msg=problems_message(read.problems), problems=read.problems)
        raw_cluster = task_vars.get("hyperpod_cluster") if isinstance(task_vars.get("hyperpod_cluster"), dict) else p["cluster"]

        def where(file_kind, index, field):
            if file_kind == "teams" and index is not None:
                return read.place(index, field)
            if file_kind == "cluster":
                return _walk(raw_cluster, field)
            if file_kind == "settings":
                variable, unused, rest = field.partition(".")
                return _walk(task_vars.get(variable), rest)
            return None

        msg, located, normalized, capacity = validated(p, wrap_var(read.teams), where, read.problems)
        if msg:
            return dict(result, failed=True, msg=msg, problems=located)
        return dict(result, changed=False, teams=normalized, capacity=capacity)

    @staticmethod
    def _team_file(params, task_vars):
        """The teams: the option ``teams`` when a caller gives them, else the file the inventory names (``team_file.read``)."""
        if params["teams"] is not None:
            return team_files.TeamFile(None, params["teams"])
        if "hyperpod_teams" in task_vars:
            return team_files.TeamFile(None, problems=[
                "hyperpod_teams is defined as an Ansible variable (group_vars, host_vars, the inventory or extra vars): the teams "
                "are read from the team file only, as data, never as variables (docs/isolation.md); remove the variable"])
        path = task_vars.get("hyperpod_team_file")
        if not isinstance(path, str) or not path:
            return team_files.TeamFile(None, problems=[
                "no team file: the inventory needs the hyperpod.tenancy.teams plugin, whose team_file names it (docs/team-file.md)"])
        return team_files.read(path)
