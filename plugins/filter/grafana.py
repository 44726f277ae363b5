# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The uids of a team's Grafana folder and dashboards, as module_utils/dashboards.py derives them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.hyperpod.tenancy.plugins.module_utils import dashboards


def team_grafana_uids(team_name, dashboard_names):
    """``folder`` and ``dashboards`` (name: uid), and the ``legacy`` uids of the same shape the role gave before."""
    try:
        uids = dashboards.team_grafana_uids(team_name, dashboard_names)
    except ValueError as e:
        raise AnsibleFilterError(str(e))
    uids["legacy"] = dashboards.legacy_grafana_uids(team_name, dashboard_names)
    return uids


class FilterModule(object):
    def filters(self):
        return {"team_grafana_uids": team_grafana_uids}
