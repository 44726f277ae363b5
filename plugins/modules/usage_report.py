#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: usage_report
short_description: What each team used of the shared cluster in a month, from its Amazon Managed Prometheus workspace
version_added: 0.1.0
description:
  - Asks the cluster's Amazon Managed Service for Prometheus (AMP) workspace, through its Prometheus-compatible
    C(query_range) API signed with SigV4 for the service C(aps), for each team's GPU-hours per instance type in a
    month - guaranteed (Kueue nominal quota), admitted (Kueue resource usage), busy (NVIDIA DCGM exporter
    utilisation), borrowed above the guarantee and lent or left idle - and the workloads Kueue admitted.
    The queries are listed in C(docs/usage.md).
  - Returns the admitted instance-hours in the shape M(hyperpod.tenancy.chargeback_report) takes as O(hyperpod.tenancy.chargeback_report#module:usage),
    the idle-capacity report per instance type and day (CSV, Markdown, HTML with a chart), and a quota advice from
    the last O(advice_weeks) weeks of use, as a diff of the team file for a person to apply.
  - Changes nothing, the team file included. Needs C(aps:QueryMetrics) on the workspace (and C(aps:ListWorkspaces)
    with O(workspace_alias)).
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  workspace_id:
    description: The AMP workspace's ID (C(ws-...)). One of O(workspace_id) and O(workspace_alias) is required.
    type: str
  workspace_alias:
    description: The AMP workspace's alias; exactly one live workspace must have it.
    type: str
  step:
    description: Seconds between the query's evaluations; must divide the month (and the advice weeks) into whole steps.
    type: int
    default: 300
  advice_weeks:
    description: Weeks of use, ending with the month, the quota advice is drawn from; V(0) gives no advice.
    type: int
    default: 4
  advice_percentile:
    description: The percentile of concurrent use the borrow limit reaches towards (the guarantee is the median).
    type: int
    default: 95
  team_file:
    description: The team file the advice's diff is made against (read only). Without it the advice has no diff.
    type: path
  team_file_label:
    description: The path the diff names for the team file; defaults to O(team_file), relative to the current directory when under it.
    type: str
extends_documentation_fragment:
  - hyperpod.tenancy.attributes.info_module
  - hyperpod.tenancy.report
  - hyperpod.tenancy.aws
"""

EXAMPLES = r"""
- name: Read last month's use from the cluster's Prometheus workspace
  hyperpod.tenancy.usage_report:
    teams: "{{ hyperpod_teams_normalized }}"
    instance_groups: "{{ hyperpod_cluster.instance_groups }}"
    workspace_alias: hyperpod-observability
    team_file: "{{ hyperpod_team_file }}"
  register: usage

- name: Split the cluster's cost by what each team used
  hyperpod.tenancy.chargeback_report:
    teams: "{{ hyperpod_teams_normalized }}"
    instance_groups: "{{ hyperpod_cluster.instance_groups }}"
    usage: "{{ usage.chargeback_usage }}"
    method: usage
"""

RETURN = r"""
usage:
  description: GPU-hours per team and instance type, and what the month's series held that is no team's.
  returned: success
  type: dict
  contains:
    teams:
      description: >-
        C({team: {instance type: {guaranteed, admitted, busy, borrowed, lent, instance_hours}}}), GPU-hours
        (C(instance_hours) is admitted GPU-hours over the type's GPUs per instance).
      type: dict
    workloads:
      description: Workloads Kueue admitted per team in the month.
      type: dict
    days:
      description: "C({instance type: {day: {guaranteed, admitted, busy}}}), GPU-hours summed over the teams."
      type: dict
    unknown:
      description: Series of ClusterQueues, namespaces or flavors that are not a present team's; charged to nobody.
      type: list
      elements: str
chargeback_usage:
  description: "Admitted instance-hours C({team: {instance type: hours}}), for M(hyperpod.tenancy.chargeback_report)."
  returned: success
  type: dict
idle:
  description: The idle-capacity report per instance type and day.
  returned: success
  type: dict
  contains:
    rows:
      description: Per type and day, then the month per type; capacity, guaranteed, admitted, busy, idle, admitted_not_busy GPU-hours.
      type: list
      elements: dict
    csv:
      description: The rows as CSV.
      type: str
    markdown:
      description: The rows as Markdown.
      type: str
    html:
      description: A self-contained HTML page, a chart per instance type (inline SVG) and the table.
      type: str
    summary:
      description: The month per instance type, as text lines.
      type: list
      elements: str
advice:
  description: The proposed quotas (absent when O(advice_weeks=0)).
  returned: when O(advice_weeks) is not 0
  type: dict
  contains:
    proposals:
      description: Per team, C(counts) and C(peaks) per instance type (instances), C(borrow_limit) (percent, null to keep the current one).
      type: dict
    problems:
      description: What a person must settle (proposals above the capacity, use a percent limit cannot express).
      type: list
      elements: str
    fits:
      description: Whether the proposed guarantees fit the cluster's capacity of every type.
      type: bool
    diff:
      description: A unified diff of O(team_file) with the proposals; empty without O(team_file).
      type: str
    unplaced:
      description: Proposals the diff could not place in the file.
      type: list
      elements: str
"""

import os
from decimal import Decimal

from ansible_collections.amazon.aws.plugins.module_utils.botocore import get_aws_connection_info

from ansible_collections.hyperpod.tenancy.plugins.module_utils import chargeback, idle_report, instance_types
from ansible_collections.hyperpod.tenancy.plugins.module_utils import prometheus_workspace as amp
from ansible_collections.hyperpod.tenancy.plugins.module_utils import usage as us
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError, InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import REPORT, options


def workspace_of(context, p):
    """The workspace's ID: the given one, or that of the one live workspace with the alias."""
    found = amp.live_workspace_ids(context.client("amp"), p["workspace_id"], p["workspace_alias"])
    if len(found) != 1:
        raise InputError(message="usage_report: %d live AMP workspaces have the alias %r; give workspace_id" % (len(found), p["workspace_alias"]))
    return found[0]


def credentials(module):
    import boto3

    _region, _endpoint, params = get_aws_connection_info(module)
    session = boto3.session.Session(profile_name=params.get("profile_name"), aws_access_key_id=params.get("aws_access_key_id"),
                                    aws_secret_access_key=params.get("aws_secret_access_key"), aws_session_token=params.get("aws_session_token"))
    found = session.get_credentials()
    if found is None:
        raise InputError(message="usage_report: no AWS credentials to sign the query API's requests with")
    return found.get_frozen_credentials(), params.get("verify")


MODULE_OPTIONS = options(
    dict(
        workspace_id=dict(type="str"),
        workspace_alias=dict(type="str"),
        step=dict(type="int", default=us.DEFAULT_STEP),
        advice_weeks=dict(type="int", default=4),
        advice_percentile=dict(type="int", default=95),
        team_file=dict(type="path"),
        team_file_label=dict(type="str"),
    ),
    REPORT,
    required_one_of=[("workspace_id", "workspace_alias")],
    mutually_exclusive=[("workspace_id", "workspace_alias")],
)


def _as_given(path):
    """``path`` relative to the directory the playbook runs from when it is under it (the user's repository), else absolute."""
    relative = os.path.relpath(path)
    return os.path.abspath(path) if relative.startswith("..") else relative


def advice_diff(context, advice, team_file, label):
    """The advice as a diff of ``team_file`` and what it could not place; a warning, not an empty diff, where there is no one file."""
    if team_file and not os.path.isdir(team_file):
        try:
            with open(team_file) as handle:
                text = handle.read()
        except OSError as e:
            raise InputError(message="usage_report: team_file %s: %s" % (team_file, e))
        return us.quota_diff(text, advice, label or _as_given(team_file))
    if advice["proposals"]:
        # A directory of team files: which file holds a team's block is the inventory's business, so no one diff.
        context.warn("usage_report: the quota advice has no diff: %s (its proposals are in advice.proposals)"
                     % ("team_file %s is a directory" % team_file if team_file else "no team_file was given"))
    return "", []


def converge(context, p):
    try:
        period = chargeback.month_period(p["month"])
        capacity = instance_types.cluster_capacity(p["instance_groups"])
        if p["step"] < 1 or not 0 <= p["advice_weeks"] <= 52 or not 50 <= p["advice_percentile"] <= 100:
            raise us.UsageError("step must be at least 1, advice_weeks 0 to 52, advice_percentile 50 to 100")
        us.range_of(period, p["step"])
        if p["advice_weeks"]:
            us.range_of(period, p["step"], p["advice_weeks"])
    except (chargeback.ChargebackError, us.UsageError, KeyError, TypeError, ValueError) as e:
        raise InputError(message="usage_report: %s" % e)
    region = context.region
    if not region:
        raise InputError(message="usage_report: region is required (the workspace's Region signs the query API's requests)")
    workspace_id = workspace_of(context, p)
    signing, verify = credentials(context.module)
    query = us.AmpQuery(us.query_url(region, workspace_id, p.get("endpoint_url")), signing, region, verify=verify)
    try:
        usage = us.read_month(query, p["teams"], capacity, period, p["step"])
        result = {"usage": usage, "chargeback_usage": us.chargeback_usage(usage)}
        rows = idle_report.rows(usage, capacity)
        result["idle"] = {"rows": rows, "csv": idle_report.to_csv(rows), "markdown": idle_report.to_markdown(usage, rows),
                          "html": idle_report.to_html(usage, rows), "summary": idle_report.summary(rows, usage["month"])}
        if p["advice_weeks"]:
            start, end, points = us.range_of(period, p["step"], p["advice_weeks"])
            use = us.concurrent_use(query.range(us.QUERIES["admitted"], start, end, p["step"]), p["teams"], capacity, start, points, p["step"])
            advice = us.advise(use, p["teams"], capacity, high=Decimal(p["advice_percentile"]) / 100)
            advice["diff"], advice["unplaced"] = advice_diff(context, advice, p["team_file"], p["team_file_label"])
            result["advice"] = advice
    except us.UsageError as e:
        raise HyperPodError(message="usage_report: workspace %s: %s" % (workspace_id, e))
    for unknown in result["usage"]["unknown"]:
        context.warn("usage_report: series of no present team, charged to nobody: %s" % unknown)
    return dict(chargeback.plain(result), changed=False)


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
