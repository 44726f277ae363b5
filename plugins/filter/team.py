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


SUMMARY_COLUMNS = (
    ("team", "team"),
    ("namespace", "namespace"),
    ("permission_set", "permission set"),
    ("domain_id", "domain"),
    ("user_profiles", "profiles"),
    ("quota", "guaranteed"),
    ("quota_status", "quota"),
    ("budget_usd", "budget USD"),
)


def summary_table(summaries):
    """Lines of a plain-text table, one per team summary, under a header."""
    rows = [[title for unused_key, title in SUMMARY_COLUMNS]]
    rows += [[str(summary.get(key, "-")) for key, unused_title in SUMMARY_COLUMNS] for summary in sorted(summaries, key=lambda s: s.get("team", ""))]
    widths = [max(len(row[column]) for row in rows) for column in range(len(SUMMARY_COLUMNS))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]


class FilterModule(object):
    def filters(self):
        return {"team_names": team_names, "team_tags": team_tags, "summary_table": summary_table}
