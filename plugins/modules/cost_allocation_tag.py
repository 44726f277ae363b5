#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: cost_allocation_tag
short_description: Activate or deactivate cost-allocation tag keys in Cost Explorer
version_added: 0.1.0
description:
  - Activates (or deactivates) cost-allocation tag keys with the Cost Explorer
    C(UpdateCostAllocationTagsStatus) API, so Cost Explorer, budgets and the chargeback
    report can group costs by them.
  - Works for user-defined keys such as V(team) and V(cost-center) and for AWS-generated
    keys such as V(aws:eks:namespace).
  - A key appears in Cost Explorer only after AWS has seen it on a billed resource, which can
    take up to 24 hours after the first resource is tagged. Such a key is returned in RV(pending)
    with the reason and a warning; it is not a failure and it does not count as a change. A later
    run activates it.
  - Activation is not retroactive, and cost-allocation tags are managed in the payer account
    of an organization.
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  tag_keys:
    description:
      - The tag keys, as written on resources (no V(user:) prefix).
      - At most 100 keys; duplicates are ignored.
    type: list
    elements: str
    required: true
  state:
    description:
      - V(active) activates the keys, V(inactive) deactivates them.
      - A key AWS has not seen is pending with V(active) and needs nothing with V(inactive).
    type: str
    choices: [active, inactive]
    default: active
extends_documentation_fragment:
  - hyperpod.tenancy.attributes
  - hyperpod.tenancy.aws
"""

EXAMPLES = r"""
- name: Activate the team and cost-center tags and the EKS namespace tag
  hyperpod.tenancy.cost_allocation_tag:
    tag_keys:
      - team
      - cost-center
      - aws:eks:namespace

- name: Stop allocating costs by an old tag
  hyperpod.tenancy.cost_allocation_tag:
    tag_keys: [project]
    state: inactive
"""

RETURN = r"""
cost_allocation_tags:
  description: The requested keys Cost Explorer knows, after the change.
  returned: always
  type: list
  elements: dict
  contains:
    tag_key: &tag_key
      description: The tag key.
      type: str
      sample: team
    type:
      description: V(UserDefined) or V(AWSGenerated).
      type: str
      sample: UserDefined
    status:
      description: V(Active) or V(Inactive).
      type: str
      sample: Active
    last_updated_date:
      description: When the status last changed.
      type: str
      returned: when the status has changed
      sample: "2026-01-05T10:00:00Z"
    last_used_date:
      description: When the key was last used on a billed resource.
      type: str
      returned: when AWS reports it
      sample: "2026-01-05T00:00:00Z"
pending:
  description: Keys that cannot be activated yet because AWS has not seen them, with the reason.
  returned: always
  type: list
  elements: dict
  contains:
    tag_key: *tag_key
    reason:
      description: Why it is pending.
      type: str
      sample: AWS has not seen this tag key on a billed resource yet
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils import cost_tags
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import result, run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import options

MAX_KEYS = 100

MODULE_OPTIONS = options(
    dict(
        tag_keys=dict(type="list", elements="str", required=True, no_log=False),
        state=dict(type="str", choices=["active", "inactive"], default="active"),
    )
)


def check(params):
    keys = params["tag_keys"]
    if not keys:
        raise InputError(message="tag_keys must name at least one tag key")
    if len(set(keys)) > MAX_KEYS:
        raise InputError(message="tag_keys: at most %d keys (got %d)" % (MAX_KEYS, len(set(keys))))
    for key in keys:
        if not key or len(key) > 1024:
            raise InputError(message="tag_keys: %r is not a tag key (1 to 1024 characters)" % key)
        if key.startswith("user:"):
            raise InputError(message="tag_keys: write %r without the 'user:' prefix, as the key appears on resources" % key)


def converge(context, params):
    check(params)
    found = cost_tags.ensure(context.client("ce"), params["tag_keys"], params["state"], context.check_mode)
    for item in found["pending"]:
        context.warn("cost allocation tag %r is pending: %s" % (item["tag_key"], item["reason"]))
    return result(found["changed"], found["before"], found["after"], cost_allocation_tags=found["tags"], pending=found["pending"])


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
