#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: chargeback_report
short_description: What each team cost in a month, from Cost Explorer
version_added: 0.1.0
description:
  - Reads a month's costs from Cost Explorer and computes, per team, the cost of the team's own
    resources (cost grouped by the team tag) plus the team's share of the shared HyperPod cluster.
  - HyperPod nodes are billed under SageMaker (C(Cluster:ml.*) usage types), not as EC2 instances,
    so EKS split cost allocation does not split them. The cluster's cost per instance type is split
    by allocation (each team's guaranteed quota as a share of the capacity) and, when O(usage) is
    given, by measured use (instance-hours as a share of the capacity's instance-hours).
  - The cluster cost no team is charged is its own line (unallocated capacity), untagged spend outside
    the cluster is its own line, and tag values that are not a present team get a line each. Nothing
    is spread silently; the lines add up to the month's total.
  - Makes two C(GetCostAndUsage) requests, in this order, each followed through its pages
    (1) the month grouped by the team tag, (2) the month's O(cluster_service) cost grouped by usage type and team tag
    (the tag says which line holds the cluster's cost in (1), so it is not counted twice).
    Changes nothing.
  - The team tag must be an active cost-allocation tag (M(hyperpod.tenancy.cost_allocation_tag)).
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  usage:
    description:
      - Measured use, instance-hours per team and instance type, for example from Kueue workload metrics.
      - 'Example: C({vision: {ml.p5.48xlarge: 2400}}).'
    type: dict
  method:
    description: Which split goes into each team's total; both are reported when O(usage) is given.
    type: str
    choices: [allocation, usage]
    default: allocation
  tag_key:
    description: The team tag key.
    type: str
    default: team
  metric:
    description: The Cost Explorer cost metric.
    type: str
    choices: [UnblendedCost, AmortizedCost, BlendedCost, NetUnblendedCost, NetAmortizedCost]
    default: UnblendedCost
  cluster_service:
    description: The Cost Explorer C(SERVICE) the cluster is billed under.
    type: str
    default: Amazon SageMaker
extends_documentation_fragment:
  - hyperpod.tenancy.attributes.info_module
  - hyperpod.tenancy.report
  - hyperpod.tenancy.aws
"""

EXAMPLES = r"""
- name: Compute last month's chargeback
  hyperpod.tenancy.chargeback_report:
    teams: "{{ hyperpod_teams_normalized }}"
    instance_groups: "{{ hyperpod_cluster.instance_groups }}"
  register: chargeback

- name: Split January's cluster cost by measured use
  hyperpod.tenancy.chargeback_report:
    month: "2026-01"
    teams: "{{ hyperpod_teams_normalized }}"
    instance_groups: "{{ hyperpod_cluster.instance_groups }}"
    usage:
      vision: {ml.p5.48xlarge: 2400}
      nlp: {ml.p5.48xlarge: 1500, ml.g5.12xlarge: 900}
    method: usage
"""

RETURN = r"""
report:
  description: The chargeback, amounts in USD.
  returned: success
  type: dict
  contains:
    month:
      description: The month.
      type: str
      sample: "2026-01"
    method:
      description: The split in each team's total.
      type: str
      sample: allocation
    lines:
      description: One line per team, per unknown tag value, the unallocated cluster capacity and the untagged cost.
      type: list
      elements: dict
      contains:
        name:
          description: The team, tag value or line name.
          type: str
        kind:
          description: V(team), V(other), V(unallocated) or V(untagged).
          type: str
        own:
          description: Cost of resources carrying the tag value.
          type: float
        share_allocation:
          description: Cluster share by allocation.
          type: float
        share_usage:
          description: Cluster share by measured use (null without usage).
          type: float
        cluster_share:
          description: The share in the total.
          type: float
        total:
          description: RV(report.lines[].own) plus the cluster share.
          type: float
    totals:
      description: Sums (cluster, own, cluster_share, teams, unallocated, untagged, all, month).
      type: dict
    checks:
      description: C(cluster_reconciled) (team shares plus unallocated equal the cluster cost) and C(month_reconciled).
      type: dict
    warnings:
      description: What a reader of the report must know.
      type: list
      elements: str
csv:
  description: The lines as CSV.
  returned: success
  type: str
markdown:
  description: The report as Markdown.
  returned: success
  type: str
html:
  description: A self-contained HTML page with a stacked bar per team (inline SVG) and the table.
  returned: success
  type: str
table:
  description: The table as fixed-width text lines, to print.
  returned: success
  type: list
  elements: str
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils import ce, chargeback, instance_types
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError, InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import REPORT, options


MODULE_OPTIONS = options(
    dict(
        usage=dict(type="dict"),
        method=dict(type="str", choices=["allocation", "usage"], default="allocation"),
        tag_key=dict(type="str", default="team", no_log=False),
        metric=dict(type="str", choices=["UnblendedCost", "AmortizedCost", "BlendedCost", "NetUnblendedCost", "NetAmortizedCost"], default="UnblendedCost"),
        cluster_service=dict(type="str", default="Amazon SageMaker"),
    ),
    REPORT,
)


def converge(context, p):
    try:
        period = chargeback.month_period(p["month"])
        capacity = instance_types.cluster_capacity(p["instance_groups"])
        # Refuse quotas or usage that cannot give a correct report before reading any cost.
        chargeback.compute(period, {}, {}, capacity, p["teams"], p["usage"], p["method"])
    except (chargeback.ChargebackError, KeyError, TypeError, ValueError) as e:
        raise InputError(message="chargeback_report: %s" % e)
    client = context.client("ce")
    by_tag = ce.results_by_time(client, chargeback.team_cost_request(period, p["tag_key"], p["metric"]))
    by_usage_type = ce.results_by_time(client, chargeback.cluster_cost_request(period, p["cluster_service"], p["tag_key"], p["metric"]))
    try:
        chargeback.check_periods(by_tag + by_usage_type, period)
        tag_costs = chargeback.parse_tag_costs(by_tag, p["tag_key"], p["metric"])
        cluster_costs, cluster_by_tag = chargeback.parse_cluster_costs(by_usage_type, p["tag_key"], p["metric"])
        report = chargeback.compute(period, tag_costs, cluster_costs, capacity, p["teams"], p["usage"], p["method"], cluster_by_tag)
    except chargeback.ChargebackError as e:
        raise HyperPodError(message="chargeback_report: %s" % e)
    for warning in report["warnings"]:
        context.warn(warning)
    return dict(
        changed=False,
        report=chargeback.plain(report),
        csv=chargeback.to_csv(report),
        markdown=chargeback.to_markdown(report),
        html=chargeback.to_html(report),
        table=chargeback.to_table(report),
    )


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
