#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: capacity_report
short_description: Each team's guaranteed, reserved, in-use, borrowed and pending capacity on the cluster now
version_added: 0.1.0
description:
  - Lists the Kueue ClusterQueues of the cluster through its Kubernetes API (C(list) on C(clusterqueues.kueue.x-k8s.io),
    cluster-wide, so the platform's credentials) and reports each ClusterQueue C(hyperpod-ns-<team>-clusterqueue) that the
    HyperPod Task Governance add-on makes for a team's compute quota. The name is Task Governance's, whatever the
    collection's C(name_prefix).
  - Per team, instance type (the queue's ResourceFlavor) and resource (C(nvidia.com/gpu), C(cpu), C(memory), MIG slices, ...),
    guaranteed is the C(nominalQuota) of C(spec.resourceGroups[].flavors[].resources[]), with its C(borrowingLimit) and
    C(lendingLimit) when set; reserved is C(status.flavorsReservation[].resources[].total); in use is
    C(status.flavorsUsage[].resources[].total), borrowed quota included; borrowed is C(status.flavorsUsage[].resources[].borrowed),
    the use over the guarantee. Per team, the workloads admitted, reserving quota and pending
    (C(status.admittedWorkloads), C(status.reservingWorkloads), C(status.pendingWorkloads)).
  - Amounts are Kubernetes quantities, read exactly; memory is given in GiB, cpu in vCPUs, other resources as counts.
  - Every Task Governance queue is reported, those of teams O(teams) does not name marked as not in the team files. A team of
    O(teams) without a queue (no compute quota yet) is reported without one. Other ClusterQueues are listed by name only.
  - Changes nothing. It takes the AWS connection options every module of the collection takes and makes no AWS call
    with them, so it is not part of the C(hyperpod) action group.
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  kubeconfig:
    description: The cluster's kubeconfig, a path or its content as a dictionary, as M(hyperpod.tenancy.team_namespace) takes it.
    type: raw
    required: true
  context:
    description: The kubeconfig context; by default its current context.
    type: str
  teams:
    description:
      - The names of the teams of the team files. Queues of other teams are still reported, marked.
      - Unset, every queue is reported and none is marked.
    type: list
    elements: str
extends_documentation_fragment:
  - hyperpod.tenancy.attributes.info_module
  - hyperpod.tenancy.aws
requirements:
  - kubernetes (the Python library)
"""

EXAMPLES = r"""
- name: Read each team's capacity
  hyperpod.tenancy.capacity_report:
    kubeconfig: ~/.kube/config
    teams: "{{ hyperpod_teams_normalized | map(attribute='name') | list }}"
  register: capacity

- name: Print it
  ansible.builtin.debug:
    msg: "{{ capacity.table }}"
"""

RETURN = r"""
teams:
  description: A team per Task Governance ClusterQueue and per team of O(teams), by name.
  returned: success
  type: list
  elements: dict
  contains:
    team:
      description: The team name.
      type: str
      sample: vision
    cluster_queue:
      description: Its ClusterQueue, null when it has none.
      type: str
      sample: hyperpod-ns-vision-clusterqueue
    in_team_files:
      description: Whether O(teams) names the team; null without O(teams).
      type: bool
    cohort:
      description: The queue's cohort, the pool it borrows from and lends to.
      type: str
      sample: shared-pool
    admitted_workloads:
      description: Workloads admitted and not finished (C(status.admittedWorkloads)).
      type: int
    reserving_workloads:
      description: Workloads reserving quota (C(status.reservingWorkloads)).
      type: int
    pending_workloads:
      description: Workloads waiting to be admitted (C(status.pendingWorkloads)).
      type: int
    resources:
      description: A row per flavor and resource, the spec's order, then what only the status names.
      type: list
      elements: dict
      contains:
        flavor:
          description: The ResourceFlavor, the instance type.
          type: str
          sample: ml.p5.48xlarge
        resource:
          description: The resource name.
          type: str
          sample: nvidia.com/gpu
        unit:
          description: V(GiB) for memory, V(vCPU) for cpu, V(count) for the rest.
          type: str
        guaranteed:
          description: The nominal quota.
          type: float
        borrowing_limit:
          description: The most it may borrow over the guarantee; null for no limit.
          type: float
        lending_limit:
          description: The most of its unused guarantee it may lend; null for all of it.
          type: float
        reserved:
          description: The quota reserved by its workloads.
          type: float
        in_use:
          description: The quota its admitted workloads use, borrowed included.
          type: float
        borrowed:
          description: The part of RV(teams[].resources[].in_use) over the guarantee.
          type: float
other_queues:
  description: The names of the ClusterQueues that are not a team's.
  returned: success
  type: list
  elements: str
table:
  description: The report as fixed-width text lines, to print.
  returned: success
  type: list
  elements: str
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils import capacity_report
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import options
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_namespace import Cluster

MODULE_OPTIONS = options(
    dict(
        kubeconfig=dict(type="raw", required=True),
        context=dict(type="str"),
        teams=dict(type="list", elements="str"),
    )
)


def converge(context, params):
    """Reads only: the same in check mode."""
    cluster = Cluster(params["kubeconfig"], params.get("context"))
    return dict(changed=False, **capacity_report.read(cluster, params["teams"]))


def main():
    # run_module's AWS module, as every module of the collection: it runs in the worker (plugins/action) and masks the
    # connection options' secrets as the others do, though it calls no AWS API.
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
