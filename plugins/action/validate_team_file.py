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

from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_layer_args import team_layer_args
from ansible_collections.hyperpod.tenancy.plugins.modules.validate_team_file import MODULE_OPTIONS
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_model import check_team_file_with_places, problems_message
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_model import wanted_team_problems, without_refused
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_resources import validated_layers
from ansible_collections.hyperpod.tenancy.plugins.plugin_utils import core_private, team_file as team_files

# What the layers' own checks need of what the teams share: stand-ins of the right shape (read for real later).
PLACEHOLDER_SHARED = {
    "account_id": "111122223333",
    "region": "us-east-1",
    "identity_center_instance_arn": "arn:aws:sso:::instance/ssoins-0123456789abcdef",
    "identity_store_id": "d-0123456789",
    "cluster_arn": "arn:aws:sagemaker:us-east-1:111122223333:cluster/abcdef012345",
    "eks_cluster_arn": "arn:aws:eks:us-east-1:111122223333:cluster/placeholder",
    "eks_cluster_name": "placeholder",
    "vpc_id": "vpc-0123456789abcdef0",
    "subnet_ids": ["subnet-0123456789abcdef0"],
    "security_group_ids": ["sg-0123456789abcdef0"],
    "fsx_mount_root": "/",
    "fsx_require_mount": False,
    # The account's FSx file system (hyperpod_account.fsx_file_system_id): storage.s3_link, where the platform allows it
    # (hyperpod_team_limits.choices), links the team's export directory to its prefix on it.
    "fsx_file_system_id": "fs-0123456789abcdef0",
}


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


def _team_name(raw_teams, index):
    team = raw_teams[index] if isinstance(raw_teams, list) and index < len(raw_teams) else None
    name = team.get("name") if isinstance(team, dict) else None
    return str(name) if isinstance(name, str) and name else "#%d" % (index + 1)


def layer_problems(normalized, places, shared):
    """``[(team index, problem)]`` of each present team's layers, checked as its run will check them.

    The layers' options are built by the same filter the run uses. A team the team model refused is checked without
    the values it refused (``without_refused``): each of those was reported once, where the file has it.
    """
    refused = {}
    for file_kind, index, field in places:
        if file_kind == "teams" and index is not None:
            refused.setdefault(index, []).append(field)
    found = []
    for index, team in enumerate(normalized):
        if index in refused:
            team = without_refused(team, refused[index])
        if team is None or team.get("state") != "present" or not isinstance(team.get("name"), str):
            continue
        try:
            options = team_layer_args(team, shared)
            validated_layers(team["name"], dict((k, v) for k, v in options.items() if k != "team"), set())
        except InputError as e:
            found.append((index, e.message))
        except (AttributeError, KeyError, TypeError, ValueError):
            if index not in refused:  # a team with no problem of its own must build its options
                raise
    return found


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
        teams = wrap_var(read.teams)
        raw_cluster = task_vars.get("hyperpod_cluster") if isinstance(task_vars.get("hyperpod_cluster"), dict) else p["cluster"]
        problems, normalized, capacity, places = check_team_file_with_places(
            teams, p["cluster"], p["name_prefix"], tag_keys=p["tag_keys"], data_bucket=p["data_bucket"],
            identity_center_connection=p["identity_center"], adopt=p["adopt"], team_limits=p["team_limits"], inherit=p["inherit"])
        located = list(read.problems)
        for problem, (file_kind, index, field) in zip(problems, places):
            where = None
            if file_kind == "teams" and index is not None:
                where = read.place(index, field)
            elif file_kind == "cluster":
                where = _walk(raw_cluster, field)
            elif file_kind == "settings":
                variable, unused, rest = field.partition(".")
                where = _walk(task_vars.get(variable), rest)
            located.append("%s: %s" % (where, problem) if where else problem)
        raw_teams = read.teams
        blocked = set(index for (file_kind, index, unused) in places if file_kind == "teams" and index is not None)
        if isinstance(raw_teams, list) and len(raw_teams) == len(normalized):
            shared = dict(PLACEHOLDER_SHARED, name_prefix=p["name_prefix"], tag_keys=p["tag_keys"] or {},
                          data_bucket=p["data_bucket"] or "placeholder-bucket")
            for index, message in layer_problems(normalized, places, shared):
                where = read.place(index, "")
                located.append("%s%s" % ("%s: " % where if where else "", message))
        wanted = p["team"]
        located.extend(wanted_team_problems(normalized, wanted, p["expect_state"]))
        if located:
            msg = problems_message(located)
            others = sorted(set(_team_name(raw_teams, i) for i in blocked) - set([wanted]))
            if wanted and others:
                msg = "Team %r cannot be changed while the team file has problems: the entr%s of team%s %s block%s it (ops fix the file first).\n%s" % (
                    wanted, "ies" if len(others) > 1 else "y", "s" if len(others) > 1 else "", ", ".join(others), "" if len(others) > 1 else "s", msg)
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
