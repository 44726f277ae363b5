#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: task_governance_policy
short_description: Manage the Task Governance cluster policy of a SageMaker HyperPod cluster
version_added: 0.1.0
description:
  - Creates, updates or deletes the cluster scheduler config (the "cluster policy") of a HyperPod
    cluster orchestrated by Amazon EKS. It sets the priority classes that tasks are ranked by, and
    whether teams borrow idle compute by fair share and whether idle compute is shared at all.
  - A cluster has at most one cluster policy, so the module finds it by its cluster. A new policy is
    named O(name), or C(<cluster name>-scheduler) when O(name) is not given. The name of an existing
    policy cannot change; with O(name) unset the module manages the policy whatever its name.
  - Updates are optimistic. The module sends the C(ClusterSchedulerConfigVersion) it read as
    C(TargetVersion); when another writer changed the policy in between, it reads it once more and
    applies its change on top, or fails if the policy changes again.
  - Task Governance needs the EKS add-on C(amazon-sagemaker-hyperpod-taskgovernance) to be C(ACTIVE)
    (see M(hyperpod.tenancy.eks_addon)); a policy created before that ends in C(CreateFailed). A policy
    found in C(CreateFailed) cannot be updated, so the module deletes it and creates it again, with a warning.
  - The options are checked before any call, and nothing is written when one of them would be
    rejected by AWS (more than 10 priority classes, a name outside the API's pattern, a weight outside 0-100).
  - Options left unset are left as they are on an existing policy.
  - A new policy is tagged C(managed-by=hyperpod.tenancy).
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  cluster:
    description: Name or ARN of the HyperPod cluster.
    type: str
    required: true
  name:
    description:
      - Name of the cluster policy; letters, digits and inner hyphens, at most 63 characters.
      - Defaults to C(<cluster name>-scheduler) for a new policy, and to the existing policy's name otherwise.
    type: str
  priority_classes:
    description:
      - The priority classes tasks are ranked by (Kueue WorkloadPriorityClasses); at most 10.
      - The order does not matter; the weight ranks them.
    type: list
    elements: dict
    suboptions:
      name:
        description: Lower-case letters, digits and inner hyphens, at most 40 characters.
        type: str
        required: true
      weight:
        description: Priority weight, 0 to 100; higher runs first.
        type: int
        required: true
  fair_share:
    description: Whether teams borrow idle compute in proportion to their fair-share weights (C(FairShare)).
    type: bool
  idle_resource_sharing:
    description: Whether idle compute is lent to teams beyond their quota (C(IdleResourceSharing)).
    type: bool
  description:
    description: Description of the cluster policy.
    type: str
  wait:
    description: Wait until the policy is C(Created) or C(Updated) (or deleted).
  wait_timeout:
    default: 900
extends_documentation_fragment:
  - hyperpod.tenancy.attributes
  - hyperpod.tenancy.state
  - hyperpod.tenancy.aws
  - hyperpod.tenancy.wait
"""

EXAMPLES = r"""
- name: Rank inference over training, share idle compute by fair share
  hyperpod.tenancy.task_governance_policy:
    cluster: ml-shared
    priority_classes:
      - {name: inference, weight: 100}
      - {name: training, weight: 50}
      - {name: experimentation, weight: 10}
    fair_share: true
    idle_resource_sharing: true

- name: Turn fair share off, leaving the priority classes as they are
  hyperpod.tenancy.task_governance_policy:
    cluster: arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdef012345
    fair_share: false

- name: Remove the cluster policy
  hyperpod.tenancy.task_governance_policy:
    cluster: ml-shared
    state: absent
"""

RETURN = r"""
scheduler_config:
  description: The cluster policy as DescribeClusterSchedulerConfig returns it, in snake_case; empty when absent.
  returned: always
  type: dict
  contains:
    cluster_scheduler_config_arn:
      description: ARN of the policy.
      type: str
      sample: arn:aws:sagemaker:us-east-1:123456789012:cluster-scheduler-config/abcdef012345
    cluster_scheduler_config_id:
      description: ID of the policy.
      type: str
      sample: abcdef012345
    cluster_scheduler_config_version:
      description: Version of the policy; grows by one with each update.
      type: int
      sample: 2
    name:
      description: Name of the policy.
      type: str
      sample: ml-shared-scheduler
    cluster_arn:
      description: ARN of the HyperPod cluster.
      type: str
    status:
      description: C(Created), C(Updated), or a transitional or failed status when O(wait=false).
      type: str
      sample: Created
    failure_reason:
      description: Why the last operation failed.
      type: str
      returned: when the policy is in a failed status
    scheduler_config:
      description: The policy.
      type: dict
      contains:
        priority_classes:
          description: Priority classes, each with C(name) and C(weight).
          type: list
          elements: dict
        fair_share:
          description: C(Enabled) or C(Disabled).
          type: str
        idle_resource_sharing:
          description: C(Enabled) or C(Disabled).
          type: str
    description:
      description: Description of the policy.
      type: str
      returned: when set
    creation_time:
      description: When the policy was created.
      type: str
    last_modified_time:
      description: When the policy last changed.
      type: str
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import converge_by_state, run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import STATE, options, wait
from ansible_collections.hyperpod.tenancy.plugins.module_utils.scheduler_policy import SchedulerPolicyManager

MODULE_OPTIONS = options(
    dict(
        cluster=dict(type="str", required=True),
        name=dict(type="str"),
        priority_classes=dict(
            type="list",
            elements="dict",
            options=dict(name=dict(type="str", required=True), weight=dict(type="int", required=True)),
        ),
        fair_share=dict(type="bool"),
        idle_resource_sharing=dict(type="bool"),
        description=dict(type="str"),
    ),
    STATE,
    wait(900),
)

converge = converge_by_state(
    "scheduler_config",
    lambda context, params: SchedulerPolicyManager(context.client("sagemaker"), params, check_mode=context.check_mode, warn=context.warn),
)


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
