#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: task_governance_quota
short_description: Manage a team's SageMaker HyperPod Task Governance compute quota
version_added: 0.1.0
description:
  - Creates, updates or deletes the compute quota (compute allocation) of one team on a
    HyperPod cluster orchestrated by EKS. Task Governance turns it into the Kueue queues of the
    team namespace C(hyperpod-ns-<team>).
  - The quota is named C(<name_prefix>-<team>-quota) and found by its team; AWS allows one
    quota per team and cluster.
  - Updates are optimistic. The module sends the C(ComputeQuotaVersion) it read as
    C(TargetVersion); when another writer changed the quota in between, it reads the quota once
    more and applies its change on top, or fails if the quota changes again.
  - Before any write the module refuses a quota that would make the instances all enabled quotas
    on the cluster guarantee exceed the cluster's capacity for an instance type, naming the other
    teams and their shares, and a quota for an instance type the cluster does not have. A quota
    guarantees O(resources[].count) instances, or for fine-grained amounts its largest share of an
    instance in any unit (accelerators, vCPUs, memory, MIG partitions as their fraction of a GPU),
    from the collection's table of instance types; a fine-grained amount of a type the table does
    not know is refused. Capacity is the sum of the instance groups'
    C(TargetCount) per instance type, not C(CurrentCount), which drops while nodes are replaced.
    It is read with C(DescribeCluster), unless O(cluster_capacity) gives it.
  - Options left unset are left as they are on an existing quota; a new quota gets AWS's
    defaults (sharing V(lend_and_borrow) with a borrow limit of 50 percent, preemption of
    V(lower_priority) tasks, fair-share weight 0, V(enabled)).
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  team:
    description:
      - The team, the quota's C(ComputeQuotaTarget.TeamName); the quota is C(<name_prefix>-<team>-quota).
      - Lower-case letters, digits and inner hyphens.
    type: str
    required: true
  cluster:
    description:
      - Name or ARN of the HyperPod cluster.
      - Its ARN when O(cluster_capacity) is given.
    type: str
    required: true
  cluster_capacity:
    description:
      - The cluster's capacity, already read, as the number of instances per instance type (the
        sum of the instance groups' C(TargetCount)), for example V(ml.p5.48xlarge) mapped to V(8).
        M(hyperpod.tenancy.shared_info) returns it for the shared cluster once per run.
      - When given, the cluster is not described (C(DescribeCluster)), O(cluster) must be its ARN,
        and the quota is checked against this capacity before any write, as it is against the
        described one.
    type: dict
  scale_limits:
    description:
      - The most instances each autoscaling instance group may scale to, by group name (the cluster file's C(max_count)).
        Such a group of the described cluster counts by it, not by its C(TargetCount), which Karpenter moves from 0 with the
        pending pods. M(hyperpod.tenancy.shared_info) returns it as RV(hyperpod.tenancy.shared_info#module:hyperpod_shared.scale_limits).
    type: dict
  resources:
    description:
      - What the team is guaranteed, per instance type (at most 15).
      - Each entry gives O(resources[].count) (whole instances) or fine-grained amounts
        (O(resources[].accelerators), O(resources[].vcpu), O(resources[].memory_gib),
        O(resources[].accelerator_partition)), not both.
      - Required to create a quota.
    type: list
    elements: dict
    # The same entries as O(absolute_borrow_limits) (quota.py: _resource_spec).
    suboptions: &resource_entry
      instance_type:
        description: An instance type of the cluster, for example V(ml.p5.48xlarge).
        type: str
        required: true
      count:
        description: Whole instances.
        type: int
      accelerators:
        description: Accelerators (GPUs, Trainium chips).
        type: int
      vcpu:
        description: vCPUs.
        type: float
      memory_gib:
        description: Memory in GiB.
        type: float
      accelerator_partition:
        description: Multi-Instance GPU partitions.
        type: dict
        suboptions:
          type:
            description: MIG profile, for example V(mig-1g.10gb).
            type: str
            required: true
          count:
            description: Number of partitions.
            type: int
            required: true
  sharing:
    description:
      - How the team shares idle compute. V(lend) lends its idle compute, V(dont_lend) keeps it,
        V(lend_and_borrow) lends and borrows.
    type: str
    choices: [lend, dont_lend, lend_and_borrow]
  borrow_limit:
    description:
      - Percent of idle compute the team may borrow, 1 to 500 (the API reference's range). Only with V(lend_and_borrow).
    type: int
  absolute_borrow_limits:
    description:
      - Upper bounds on what the team may borrow, per instance type, in the form of O(resources).
        Only with V(lend_and_borrow). An empty list removes them.
    type: list
    elements: dict
    suboptions: *resource_entry
  preempt:
    description: Whether the team's higher-priority tasks preempt its own lower-priority ones.
    type: str
    choices: [never, lower_priority]
  fair_share_weight:
    description: The team's weight, 0 to 100, when idle compute is shared by fair share.
    type: int
  activation:
    description: V(disabled) keeps the quota but stops it from applying.
    type: str
    choices: [enabled, disabled]
  description:
    description: Description of the quota.
    type: str
  wait:
    description: Wait until the quota is V(Created)/V(Updated), or gone.
  wait_timeout:
    description: Seconds to wait.
    default: 900
notes:
  - The quota always carries the team tags (team, cost-center, managed-by) besides O(tags);
    O(purge_tags) removes other tags only when O(tags) is given.
extends_documentation_fragment:
  - hyperpod.tenancy.ownership
  - hyperpod.tenancy.resource
  - hyperpod.tenancy.team
  - hyperpod.tenancy.team.name_prefix
  - hyperpod.tenancy.wait
"""

EXAMPLES = r"""
- name: Guarantee team vision four p5 instances, lending and borrowing idle compute
  hyperpod.tenancy.task_governance_quota:
    team: vision
    cluster: ml-shared
    resources:
      - instance_type: ml.p5.48xlarge
        count: 4
    sharing: lend_and_borrow
    borrow_limit: 50
    preempt: lower_priority
    fair_share_weight: 40
    cost_center: CC-1001

- name: Give team research GPUs rather than whole instances
  hyperpod.tenancy.task_governance_quota:
    team: research
    cluster: ml-shared
    resources:
      - instance_type: ml.g5.12xlarge
        accelerators: 8
    sharing: lend

- name: Pause the quota without deleting it
  hyperpod.tenancy.task_governance_quota:
    team: vision
    cluster: ml-shared
    activation: disabled

- name: Remove the team's quota
  hyperpod.tenancy.task_governance_quota:
    team: vision
    cluster: ml-shared
    state: absent
"""

RETURN = r"""
quota:
  description: The quota after the change (predicted in check mode); empty when absent.
  returned: always
  type: dict
  contains:
    compute_quota_id:
      description: The quota id.
      type: str
      sample: a1b2c3d4e5f6
    compute_quota_arn:
      description: The quota ARN.
      type: str
      sample: arn:aws:sagemaker:us-east-1:123456789012:compute-quota/a1b2c3d4e5f6
    name:
      description: The quota name.
      type: str
      sample: hyperpod-vision-quota
    cluster_arn:
      description: The cluster ARN.
      type: str
    compute_quota_version:
      description: The version, which grows by one on each update.
      type: int
      sample: 2
    status:
      description: C(Created), C(Updated), or a transitional or failed status.
      type: str
      sample: Created
    activation_state:
      description: C(Enabled) or C(Disabled).
      type: str
    description:
      description: The description.
      type: str
    compute_quota_config:
      description: What the team gets and how it shares.
      type: dict
      contains:
        compute_quota_resources:
          description: Per instance type, C(instance_type) and C(count) or the fine-grained amounts.
          type: list
          elements: dict
        resource_sharing_config:
          description: C(strategy), C(borrow_limit), C(absolute_borrow_limits).
          type: dict
        preempt_team_tasks:
          description: C(Never) or C(LowerPriority).
          type: str
    compute_quota_target:
      description: C(team_name) and C(fair_share_weight).
      type: dict
    tags:
      description: The quota's tags.
      type: dict
      sample: {team: vision, managed-by: hyperpod.tenancy}
namespace:
  description: The Kubernetes namespace Task Governance creates for the team.
  returned: always
  type: str
  sample: hyperpod-ns-vision
local_queue:
  description: The Kueue local queue of the team namespace; jobs name it in C(kueue.x-k8s.io/queue-name).
  returned: always
  type: str
  sample: hyperpod-ns-vision-localqueue
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.quota import MODULE_OPTIONS, converge


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
