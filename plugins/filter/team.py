# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Team naming rules, team tags and the team's module options for roles: each a call of the module_utils the modules use."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.hyperpod.tenancy.plugins.module_utils import naming, text_table
from ansible_collections.hyperpod.tenancy.plugins.module_utils import team_layer_args as layer_args
from ansible_collections.hyperpod.tenancy.plugins.module_utils import team_resources


def team_names(team_name, prefix=naming.DEFAULT_PREFIX):
    return naming.names(team_name, prefix or naming.DEFAULT_PREFIX)


def team_tags(team, tag_keys=None):
    return naming.team_tags(team["name"], team.get("cost_center"), tag_keys, team.get("tags"))


def team_tag_keys(tag_keys=None):
    return naming.tag_keys_with_defaults(tag_keys)


def _plain(value):
    """``value`` rebuilt of plain dicts and lists. ansible-core 2.19 hands filters lazily templated containers, and the team
    model deep-copies what it fills in: a deep copy of a lazy container copies its whole templating context (every variable
    of the host) with each container, which made this filter cost seconds of CPU per team."""
    if isinstance(value, Mapping):
        return dict((key, _plain(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def team_layer_args(team, shared, settings=None, layers=None):
    """The options of hyperpod.tenancy.team_resources for one normalized team (module_utils/team_layer_args.py builds them)."""
    try:
        return layer_args.team_layer_args(_plain(team), shared, settings, layers)
    except layer_args.MissingSharedValue as e:
        raise AnsibleFilterError(str(e))


SUMMARY_COLUMNS = (
    ("team", "team"),
    ("namespace", "namespace"),
    ("permission_set", "permission set"),
    ("domain_id", "domain"),
    ("user_profiles", "profiles"),
    ("quota", "guaranteed"),
    ("quota_status", "quota"),
    ("service_account", "service account"),
    ("kubernetes_role", "role"),
    ("volume", "volume"),
    ("queue", "queue label"),
    ("priorities", "priorities"),
    ("budget_usd", "budget USD"),
)


def team_summary(layers, team_name):
    """One team's row of the summary table (what hyperpod.tenancy.team_resources returns as ``summary``)."""
    return team_resources.team_summary(layers, team_name)


def summary_table(summaries):
    """Lines of a plain-text table, one per team summary, under a header."""
    rows = [[title for unused_key, title in SUMMARY_COLUMNS]]
    rows += [[str(summary.get(key, "-")) for key, unused_title in SUMMARY_COLUMNS] for summary in sorted(summaries, key=lambda s: s.get("team", ""))]
    return text_table.columns(rows)


class FilterModule(object):
    def filters(self):
        return {
            "team_names": team_names,
            "team_tags": team_tags,
            "team_tag_keys": team_tag_keys,
            "summary_table": summary_table,
            "team_layer_args": team_layer_args,
            "team_summary": team_summary,
        }
