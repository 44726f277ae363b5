# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The options a team's resource takes from the team file for its tags (module_utils/naming.py: team_tags).
    DOCUMENTATION = r"""
options:
  cost_center:
    description:
      - The team's cost center, the value of the cost-center tag on what the module makes for the team.
    type: str
  tag_keys:
    description:
      - "The tag keys of the team tags, as in C(hyperpod_team_tag_keys); C({team: team, cost_center: cost-center}) by default."
    type: dict
"""

    # A module that derives names from team names.
    NAME_PREFIX = r"""
options:
  name_prefix:
    description:
      - The prefix of the names derived from the team's name, C(<name_prefix>-<team>...) (C(hyperpod_name_prefix)).
    type: str
    default: hyperpod
"""
