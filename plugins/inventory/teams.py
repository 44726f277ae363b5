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
  - The file is read as data only; checking it is the job of M(hyperpod.tenancy.validate_team_file).
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

import os

from ansible.errors import AnsibleParserError
from ansible.plugins.inventory import BaseInventoryPlugin


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
        data = loader.load_from_file(team_file) or {}
        teams = data.get("hyperpod_teams") if isinstance(data, dict) else None
        if not isinstance(teams, list):
            raise AnsibleParserError("%s defines no list hyperpod_teams" % team_file)
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
