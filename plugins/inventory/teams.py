# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: teams
short_description: One inventory host per team of the team file
version_added: 0.1.0
description:
  - Reads the team file (C(hyperpod_teams)) and adds a host C(team_<name>) per team to the group
    C(hyperpod_teams), with C(ansible_connection=local) and C(hyperpod_team_name) set.
  - Teams then converge in parallel (C(forks)), C(--limit team_vision) targets one team, and AWX
    shows results per team.
  - Teams marked C(state=absent) also join C(hyperpod_teams_absent); the others join C(hyperpod_teams_present).
  - Before anything runs, every YAML file next to the team file (the cluster file too) is parsed strictly;
    a syntax error or a key given twice in one mapping fails the inventory with the file, line and column.
  - The file is read as data only, never as a template (values are marked unsafe); checking it is the job of
    M(hyperpod.tenancy.validate_team_file).
options:
  plugin:
    description: The name of this plugin.
    required: true
    choices: [hyperpod.tenancy.teams]
    type: str
  team_file:
    description: Path of the YAML file defining C(hyperpod_teams), relative to this configuration file.
    type: str
    default: ../../group_vars/all/teams.yml
"""

EXAMPLES = r"""
# inventories/sandbox/hyperpod_teams.yml
plugin: hyperpod.tenancy.teams
team_file: ../../group_vars/all/teams.yml
"""

import glob
import os

import yaml

from ansible.errors import AnsibleParserError
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.inventory import BaseInventoryPlugin
from ansible.utils.unsafe_proxy import wrap_var

try:
    _SafeLoader = yaml.CSafeLoader
except AttributeError:  # PyYAML without libyaml
    _SafeLoader = yaml.SafeLoader


def _where(path, mark):
    return "%s:%d:%d" % (path, mark.line + 1, mark.column + 1)


def _duplicate_keys(path, node, found):
    """Every key given twice in one mapping of ``node``, with where both are."""
    if isinstance(node, yaml.MappingNode):
        seen = {}
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                if key.value in seen:
                    found.append("%s: key %r is given twice in one mapping (first at line %d); YAML would keep only the last" % (
                        _where(path, key.start_mark), key.value, seen[key.value].line + 1))
                else:
                    seen[key.value] = key.start_mark
            _duplicate_keys(path, value, found)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _duplicate_keys(path, item, found)


def yaml_problems(path):
    """Syntax errors and duplicate keys of the YAML file ``path``, each naming the file, line and column."""
    try:
        with open(path, "rb") as stream:
            node = yaml.compose(stream, Loader=_SafeLoader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = _where(path, mark) if mark is not None else path
        return ["%s: YAML syntax error: %s%s" % (where, e.problem or "", (" (%s)" % e.context) if e.context else "")]
    except (OSError, yaml.YAMLError) as e:
        return ["%s: cannot be read as YAML: %s" % (path, to_text(e))]
    found = []
    _duplicate_keys(path, node, found)
    return found


class InventoryModule(BaseInventoryPlugin):
    NAME = "hyperpod.tenancy.teams"

    def verify_file(self, path):
        return super(InventoryModule, self).verify_file(path) and path.endswith(("hyperpod_teams.yml", "hyperpod_teams.yaml"))

    def parse(self, inventory, loader, path, cache=True):
        super(InventoryModule, self).parse(inventory, loader, path, cache)
        self._read_config_data(path)
        team_file = self.get_option("team_file")
        if not os.path.isabs(team_file):
            team_file = os.path.normpath(os.path.join(os.path.dirname(path), team_file))
        # The team file and the files beside it (group_vars/all: the cluster file) are checked before Ansible reads
        # them as variables: its own loader reports a syntax error without the file, and a duplicate key only as a warning.
        siblings = sorted(f for pattern in ("*.yml", "*.yaml") for f in glob.glob(os.path.join(os.path.dirname(team_file), pattern)) if os.path.isfile(f))
        problems = []
        for checked in [team_file] + [f for f in siblings if f != team_file]:
            problems.extend(yaml_problems(checked))
        if problems:
            count = len(problems)
            raise AnsibleParserError("The team and cluster files have %d problem%s:\n%s" % (count, "" if count == 1 else "s", "\n".join(problems)))
        # Team files come from team leads' pull requests: every value is data, never a template.
        data = wrap_var(loader.load_from_file(team_file) or {})
        teams = data.get("hyperpod_teams") if isinstance(data, dict) else None
        if not isinstance(teams, list):
            teams = []  # validate_team_file reports it, naming the file
        for group in ("hyperpod_teams", "hyperpod_teams_present", "hyperpod_teams_absent"):
            self.inventory.add_group(group)
        for team in teams:
            name = team.get("name") if isinstance(team, dict) else None
            if not isinstance(name, str) or not name:
                continue  # validate_team_file reports it, with the rest
            host = "team_%s" % name.replace("-", "_")
            self.inventory.add_host(host, group="hyperpod_teams")
            state_group = "hyperpod_teams_absent" if team.get("state") == "absent" else "hyperpod_teams_present"
            self.inventory.add_host(host, group=state_group)
            self.inventory.set_variable(host, "hyperpod_team_name", name)
            self.inventory.set_variable(host, "ansible_connection", "local")
