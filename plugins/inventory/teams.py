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
  - The team file comes from team leads' pull requests, so it is read as data only, never as Ansible variables
    or a template. It must hold the one key C(hyperpod_teams); anchors, aliases, YAML tags and text Jinja would
    read as a template are refused, and so is a team file inside a C(group_vars) or C(host_vars) directory or
    the inventory directory, where Ansible would load it as trusted variables (docs/isolation.md).
  - The team file's path is set as the variable C(hyperpod_team_file) of every host, where
    M(hyperpod.tenancy.validate_team_file) reads it from.
  - Before anything runs, the team file, every YAML file beside it and the platform's files (O(platform_files))
    are parsed strictly; a syntax error or a key given twice in one mapping fails the inventory with the file,
    line and column, and so does a platform file that defines C(hyperpod_teams).
options:
  plugin:
    description: The name of this plugin.
    required: true
    choices: [hyperpod.tenancy.teams]
    type: str
  team_file:
    description:
      - Path of the team file, relative to this configuration file.
      - Or of a directory of team files, one team each, named as the file (C(teams/vision.yml) holds team C(vision)),
        so that a code host's owners file can give each team's file to its lead (docs/isolation.md).
    type: str
    default: ../../teams/teams.yml
  platform_files:
    description:
      - Globs of the platform's variable files (the cluster file), relative to this configuration file, checked
        as strictly as the team file before anything runs. A missing one is skipped.
    type: list
    elements: str
    default: [group_vars/all/*.yml, ../../group_vars/all/*.yml]
"""

EXAMPLES = r"""
# inventories/sandbox/hyperpod_teams.yml
plugin: hyperpod.tenancy.teams
team_file: ../../teams/teams.yml
"""

import glob
import os

import yaml

from ansible.errors import AnsibleParserError
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.inventory import BaseInventoryPlugin
from ansible.utils.unsafe_proxy import wrap_var

from ansible_collections.hyperpod.tenancy.plugins.plugin_utils import team_file as team_files


def yaml_problems(path):
    """Syntax errors and duplicate keys of the YAML file ``path``, each naming the file, line and column."""
    try:
        with open(path, "rb") as stream:
            node = yaml.compose(stream, Loader=team_files.SAFE_LOADER)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        at = team_files.where(path, mark) if mark is not None else path
        return ["%s: YAML syntax error: %s%s" % (at, e.problem or "", (" (%s)" % e.context) if e.context else "")]
    except (OSError, yaml.YAMLError) as e:
        return ["%s: cannot be read as YAML: %s" % (path, to_text(e))]
    found = []
    team_files.duplicate_keys(path, node, found)
    if isinstance(node, yaml.MappingNode):
        for key in [pair[0] for pair in node.value]:
            if isinstance(key, yaml.ScalarNode) and key.value == team_files.TEAMS_KEY:
                found.append("%s: %s is defined as an Ansible variable here: the teams belong in the team file, which is read as "
                             "data and never loaded as variables (docs/isolation.md)" % (team_files.where(path, key.start_mark), key.value))
    return found


class InventoryModule(BaseInventoryPlugin):
    NAME = "hyperpod.tenancy.teams"

    def verify_file(self, path):
        return super(InventoryModule, self).verify_file(path) and path.endswith(("hyperpod_teams.yml", "hyperpod_teams.yaml"))

    def parse(self, inventory, loader, path, cache=True):
        super(InventoryModule, self).parse(inventory, loader, path, cache)
        self._read_config_data(path)
        here = os.path.dirname(path)
        team_file = os.path.normpath(os.path.join(here, self.get_option("team_file")))
        # The files beside the team file and the platform's are checked before Ansible reads them as variables: its own
        # loader reports a syntax error without the file, and a duplicate key only as a warning.
        checked = set([team_file])
        others = []
        beside = [] if os.path.isdir(team_file) else [os.path.join(os.path.dirname(team_file), p) for p in ("*.yml", "*.yaml")]
        for pattern in beside + [os.path.join(here, p) for p in self.get_option("platform_files")]:
            for found in sorted(glob.glob(os.path.normpath(pattern))):
                if os.path.isfile(found) and found not in checked:
                    checked.add(found)
                    others.append(found)
        problems = team_files.placement_problems(team_file, here)
        read = team_files.read(team_file)
        problems.extend(read.problems)
        for other in others:
            problems.extend(yaml_problems(other))
        if problems:
            count = len(problems)
            raise AnsibleParserError("The team and cluster files have %d problem%s:\n%s" % (count, "" if count == 1 else "s", "\n".join(problems)))
        self.inventory.set_variable("all", "hyperpod_team_file", os.path.abspath(team_file))
        # Team files come from team leads' pull requests: every value is data, never a template.
        teams = wrap_var(read.teams)
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
