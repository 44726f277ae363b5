# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Team naming rules and team tags for roles, from the same module_utils the modules use."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils import naming


def team_names(team_name, prefix=naming.DEFAULT_PREFIX):
    return naming.names(team_name, prefix or naming.DEFAULT_PREFIX)


def team_tags(team, tag_keys=None):
    return naming.team_tags(team["name"], team.get("cost_center"), tag_keys, team.get("tags"))


class FilterModule(object):
    def filters(self):
        return {"team_names": team_names, "team_tags": team_tags}
