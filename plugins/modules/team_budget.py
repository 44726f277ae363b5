#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: team_budget
short_description: A monthly AWS cost budget per team, filtered on the team tag
version_added: 0.1.0
description:
  - Creates, updates in place, or deletes the monthly C(COST) budget of a team, named
    C(<name_prefix>-<team>-monthly), that tracks the cost of resources tagged with the team's
    cost-allocation tag (C(CostFilters) C(TagKeyValue) V(user:team$<team>)).
  - Each threshold becomes a notification (actual or forecasted cost, greater than a percentage
    of the limit) sent to O(notify). Without O(notify) the budget has no notifications.
  - The team tag key must be an active cost-allocation tag (M(hyperpod.tenancy.cost_allocation_tag))
    for the budget to see any cost.
  - The budget carries the team's tags (team, cost center, C(managed-by)) plus O(tags).
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  team:
    description: The team name; the budget is named after it and O(name_prefix).
    type: str
    required: true
  state:
    description: V(absent) deletes the budget with its notifications and subscribers.
    type: str
    choices: [present, absent]
    default: present
  monthly_usd:
    description: The monthly limit in USD. Required when O(state=present).
    type: float
  thresholds:
    description: Percentages of the limit at which actual cost notifies.
    type: list
    elements: float
    default: [80, 100]
  forecast_thresholds:
    description: Percentages of the limit at which forecasted cost notifies.
    type: list
    elements: float
    default: [100]
  notify:
    description:
      - Subscribers of every notification, e-mail addresses or SNS topic ARNs.
      - At most one SNS topic and ten e-mail addresses.
    type: list
    elements: str
    default: []
  tag_keys:
    description: The tag keys of the collection, C(team) and C(cost_center).
    type: dict
    default: {team: team, cost_center: cost-center}
  account_id:
    description: The account that holds the budget; by default the caller's account (STS).
    type: str
extends_documentation_fragment:
  - hyperpod.tenancy.ownership
  - hyperpod.tenancy.attributes
  - hyperpod.tenancy.team
  - hyperpod.tenancy.team.name_prefix
  - hyperpod.tenancy.aws
  - amazon.aws.tags"""

EXAMPLES = r"""
- name: Give team vision a monthly budget of 40000 USD
  hyperpod.tenancy.team_budget:
    team: vision
    cost_center: CC-1001
    monthly_usd: 40000
    thresholds: [80, 100]
    forecast_thresholds: [100]
    notify:
      - finops@example.com
      - arn:aws:sns:us-east-1:123456789012:finops

- name: Remove the budget of an offboarded team
  hyperpod.tenancy.team_budget:
    team: vision
    state: absent
"""

RETURN = r"""
budget:
  description: The budget after the change (empty when absent).
  returned: always
  type: dict
  contains:
    budget_name:
      description: The budget name.
      type: str
      sample: hyperpod-vision-monthly
    budget_type:
      description: Always V(COST).
      type: str
      sample: COST
    time_unit:
      description: Always V(MONTHLY).
      type: str
      sample: MONTHLY
    budget_limit:
      description: The limit.
      type: dict
      contains:
        amount:
          description: The amount, normalized.
          type: str
          sample: "40000"
        unit:
          description: The currency.
          type: str
          sample: USD
    cost_filters:
      description: The cost filters.
      type: dict
      sample: {TagKeyValue: ["user:team$vision"]}
    notifications:
      description: The notifications with their subscribers.
      type: list
      elements: dict
      contains:
        notification_type:
          description: V(ACTUAL) or V(FORECASTED).
          type: str
        comparison_operator:
          description: Always V(GREATER_THAN).
          type: str
        threshold:
          description: Percent of the limit.
          type: float
        threshold_type:
          description: Always V(PERCENTAGE).
          type: str
        subscribers:
          description: The subscribers.
          type: list
          elements: dict
          contains:
            subscription_type:
              description: V(EMAIL) or V(SNS).
              type: str
            address:
              description: The e-mail address or topic ARN.
              type: str
    tags:
      description: The budget's tags.
      type: dict
      sample: {team: vision, managed-by: hyperpod.tenancy}
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.budget import MODULE_OPTIONS, converge


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
