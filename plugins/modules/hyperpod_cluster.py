#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: hyperpod_cluster
short_description: Manage a SageMaker HyperPod cluster orchestrated by Amazon EKS
version_added: 0.1.0
description:
  - Creates, updates and deletes a SageMaker HyperPod cluster whose orchestrator is an existing EKS cluster.
  - An existing cluster is compared with the requested state and C(UpdateCluster) is called only with what
    changed (instance group instance types, counts, lifecycle configuration and MIG layout, new instance groups,
    removed instance groups, node recovery, autoscaling, continuous provisioning). A new instance type replaces the
    group's nodes in place, as the HyperPod update guide describes. Every instance group that stays is sent again with what C(DescribeCluster) shows
    of it beyond what this module manages (Kubernetes labels and taints, AMI, patching, deep health checks),
    so an update keeps what was set outside the module. Tags are changed with C(AddTags)/C(DeleteTags).
  - Changes AWS cannot make in place fail, naming the field, before any call that writes, unless
    O(allow_replacement=true), which deletes the cluster and creates it again. These are the EKS cluster,
    the subnets and security groups, and an existing instance group's execution role,
    threads per core, EBS volume size and training plan, and switching a group between O(instance_groups[].instance_type)
    and O(instance_groups[].instance_types) (AWS does not document that switch; the module assumes it cannot be made in place).
  - Before any call, the task fails, naming the group or option, when a group sets both or neither of
    O(instance_groups[].instance_type) and O(instance_groups[].instance_types), when a group's
    O(instance_groups[].mig_config) is not a MIG layout the GPUs of every type it allows can take, and when
    O(auto_scaling=true) lacks what AWS requires (O(node_provisioning_mode=continuous), O(node_recovery) not V(none)).
  - Removing an instance group that still has nodes fails unless O(allow_instance_group_removal=true).
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  name:
    description: The cluster's name.
    type: str
    required: true
  eks_cluster:
    description:
      - The EKS cluster that orchestrates the cluster, by name or ARN; a name is resolved to its ARN with EKS C(DescribeCluster).
      - Required to create the cluster.
    type: str
  instance_groups:
    description:
      - Every instance group the cluster should have. Required to create the cluster; when omitted, the groups are left alone.
      - A group in the cluster but not in this list is removed (see O(allow_instance_group_removal)).
    type: list
    elements: dict
    suboptions:
      name:
        description: The instance group's name.
        type: str
        required: true
      instance_type:
        description:
          - The instance type, for example C(ml.p5.48xlarge). Changing it replaces the group's nodes in place.
          - Exactly one of O(instance_groups[].instance_type) and O(instance_groups[].instance_types) is required.
        type: str
      instance_types:
        description:
          - The instance types of a flexible instance group, sent as C(InstanceRequirements.InstanceTypes). The order
            is the priority, HyperPod provisions the first type and falls back to the next ones when capacity runs out.
          - Exactly one of O(instance_groups[].instance_type) and O(instance_groups[].instance_types) is required.
          - The list of an existing flexible group changes in place; switching a group between a single type and a list
            cannot be made in place (see O(allow_replacement)).
        type: list
        elements: str
      count:
        description: How many instances the group should have.
        type: int
        required: true
      execution_role:
        description: ARN of the IAM role the group's instances assume. Cannot change on an existing group.
        type: str
        required: true
      lifecycle_config:
        description: Where the lifecycle scripts are; can change on an existing group (new nodes run the new scripts).
        type: dict
        required: true
        suboptions:
          source_s3_uri:
            description: S3 URI of the folder that holds the lifecycle scripts.
            type: str
            required: true
          on_create:
            description: File name of the entry-point script in O(instance_groups[].lifecycle_config.source_s3_uri).
            type: str
            required: true
      threads_per_core:
        description: Threads per CPU core (1 disables multithreading). Cannot change on an existing group.
        type: int
        default: 1
        choices: [1, 2]
      ebs_volume_size_gib:
        description:
          - Size in GiB of the extra EBS volume attached to every instance of the group (mounted at C(/opt/sagemaker)).
          - When unset, an existing group's volume is left alone. Cannot change on an existing group.
        type: int
      training_plan_arn:
        description:
          - ARN of the SageMaker training plan whose reserved capacity the group uses.
          - When unset, an existing group's plan is left alone. Cannot change on an existing group.
        type: str
      mig_config:
        description:
          - The MIG layout of the group's GPUs, set as the Kubernetes label C(nvidia.com/mig.config) in the group's
            C(KubernetesConfig.Labels); the group's other labels and taints are kept as they are.
          - V(all-disabled), or C(all-<profile>) with a MIG profile without its C(mig-) prefix, for example V(all-1g.10gb).
            The profile must be one the GPUs of every instance type of the group have.
          - When unset, the label is left alone.
        type: str
  subnet_ids:
    description: Subnets of the cluster's VPC configuration. Required to create the cluster; cannot change in place.
    type: list
    elements: str
  security_group_ids:
    description: Security groups of the cluster's VPC configuration. Required to create the cluster; cannot change in place.
    type: list
    elements: str
  node_recovery:
    description:
      - Whether HyperPod replaces or reboots faulty nodes by itself (V(automatic)) or leaves them to the administrators (V(none)).
      - When unset, a new cluster is created with V(automatic) and an existing one is left alone.
    type: str
    choices: [automatic, none]
  auto_scaling:
    description:
      - Whether HyperPod's managed Karpenter autoscaling is enabled (C(AutoScaling) with C(Mode) C(Enable) and
        C(AutoScalerType) C(Karpenter)); V(false) disables it on a cluster that has it.
      - V(true) needs O(node_provisioning_mode=continuous), node recovery V(automatic) and O(cluster_role), the prerequisites
        AWS lists in "Autoscaling on SageMaker HyperPod EKS".
      - When unset, a new cluster is created without autoscaling and an existing one is left alone.
    type: bool
  node_provisioning_mode:
    description:
      - V(continuous) turns on HyperPod's continuous provisioning (C(NodeProvisioningMode) C(Continuous)).
        AWS has no other mode, so it cannot be turned off again.
      - When unset, a new cluster is created without it and an existing one is left alone.
    type: str
    choices: [continuous]
  cluster_role:
    description:
      - ARN of the IAM role HyperPod assumes to add and remove nodes for autoscaling (C(ClusterRole)).
        Required with O(auto_scaling=true) unless the cluster has one.
      - It cannot change while autoscaling is enabled; disable it in one run and change the role in the next.
      - When unset, the cluster's role is left alone.
    type: str
  allow_instance_group_removal:
    description: Allow removing instance groups that still have nodes (C(InstanceGroupsToDelete)); their nodes are terminated.
    type: bool
    default: false
  allow_replacement:
    description:
      - Allow a change AWS cannot make in place to delete the cluster and create it again. Every node is terminated.
      - The deletion is always waited for, whatever O(wait) says.
    type: bool
    default: false
  data_bucket:
    description:
      - The S3 bucket whose prefixes C(<team>/) are the teams' (C(hyperpod_data_bucket)). A group's
        O(instance_groups[].lifecycle_config.source_s3_uri) in it must be under the platform's prefix C(_hyperpod/), which
        no team name can spell and no team policy reaches, since HyperPod runs the lifecycle scripts as root on every node
        the teams share. Any other place in it fails the task, naming the group, before any call.
      - When unset, the lifecycle locations are not checked.
    type: str
  wait:
    description: Wait until the cluster is C(InService) (or gone, for O(state=absent)). A C(Failed) cluster fails the task with its C(FailureMessage).
  wait_timeout:
    description: Seconds to wait for each status change.
    default: 3600
extends_documentation_fragment:
  - hyperpod.tenancy.resource
  - hyperpod.tenancy.wait
"""

EXAMPLES = r"""
- name: Create the shared cluster with two instance groups
  hyperpod.tenancy.hyperpod_cluster:
    name: ml-shared
    eks_cluster: ml-shared-eks
    subnet_ids: "{{ hyperpod_shared.subnet_ids }}"
    security_group_ids: "{{ hyperpod_shared.security_group_ids }}"
    node_recovery: automatic
    # Lifecycle scripts in the teams' bucket only under _hyperpod/, where no team policy reaches.
    data_bucket: "{{ hyperpod_shared.data_bucket }}"
    instance_groups:
      - name: p5-workers
        instance_type: ml.p5.48xlarge
        count: 8
        execution_role: "{{ hyperpod_shared.cluster_execution_role_arn }}"
        lifecycle_config:
          source_s3_uri: "s3://{{ hyperpod_shared.data_bucket }}/_hyperpod/lifecycle/"
          on_create: on_create.sh
      - name: g5-workers
        instance_type: ml.g5.12xlarge
        count: 6
        execution_role: "{{ hyperpod_shared.cluster_execution_role_arn }}"
        lifecycle_config:
          source_s3_uri: "s3://{{ hyperpod_shared.data_bucket }}/_hyperpod/lifecycle/"
          on_create: on_create.sh
        ebs_volume_size_gib: 500
    tags:
      managed-by: hyperpod.tenancy

- name: Create a cluster with Karpenter autoscaling, a flexible group and a MIG layout
  hyperpod.tenancy.hyperpod_cluster:
    name: ml-elastic
    eks_cluster: ml-elastic-eks
    subnet_ids: "{{ hyperpod_shared.subnet_ids }}"
    security_group_ids: "{{ hyperpod_shared.security_group_ids }}"
    node_recovery: automatic
    node_provisioning_mode: continuous
    auto_scaling: true
    cluster_role: "{{ hyperpod_shared.cluster_autoscaling_role_arn }}"
    instance_groups:
      - name: h100-mig
        instance_type: ml.p5.48xlarge
        count: 2
        mig_config: all-1g.10gb
        execution_role: "{{ hyperpod_shared.cluster_execution_role_arn }}"
        lifecycle_config:
          source_s3_uri: "s3://{{ hyperpod_shared.data_bucket }}/_hyperpod/lifecycle/"
          on_create: on_create.sh
      - name: g6e-or-g5
        # ml.g6e.12xlarge first, ml.g5.12xlarge when HyperPod finds no g6e capacity.
        instance_types: [ml.g6e.12xlarge, ml.g5.12xlarge]
        count: 4
        execution_role: "{{ hyperpod_shared.cluster_execution_role_arn }}"
        lifecycle_config:
          source_s3_uri: "s3://{{ hyperpod_shared.data_bucket }}/_hyperpod/lifecycle/"
          on_create: on_create.sh

- name: Remove an instance group that still has nodes
  hyperpod.tenancy.hyperpod_cluster:
    name: ml-shared
    instance_groups:
      - name: p5-workers
        instance_type: ml.p5.48xlarge
        count: 8
        execution_role: "{{ hyperpod_shared.cluster_execution_role_arn }}"
        lifecycle_config:
          source_s3_uri: "s3://{{ hyperpod_shared.data_bucket }}/_hyperpod/lifecycle/"
          on_create: on_create.sh
    allow_instance_group_removal: true

- name: Delete the cluster
  hyperpod.tenancy.hyperpod_cluster:
    name: ml-shared
    state: absent
"""

RETURN = r"""
cluster:
  description: The cluster as DescribeCluster reports it, in snake_case, with its tags; empty when it does not exist.
  returned: always
  type: dict
  contains:
    cluster_arn:
      description: The cluster's ARN.
      type: str
      sample: arn:aws:sagemaker:us-east-1:123456789012:cluster/a1b2c3d4e5f6
    cluster_name:
      description: The cluster's name.
      type: str
      sample: ml-shared
    cluster_status:
      description: C(Creating), C(InService), C(Updating), C(Deleting), C(Failed), C(SystemUpdating) or C(RollingBack).
      type: str
      sample: InService
    failure_message:
      description: Why the cluster failed, when it did.
      type: str
      returned: when the cluster failed
    creation_time:
      description: When the cluster was created.
      type: str
    node_recovery:
      description: C(Automatic) or C(None).
      type: str
      sample: Automatic
    node_provisioning_mode:
      description: C(Continuous) when the cluster has continuous provisioning.
      type: str
      returned: when the cluster has continuous provisioning
      sample: Continuous
    cluster_role:
      description: ARN of the IAM role HyperPod assumes for autoscaling.
      type: str
      returned: when the cluster has one
    auto_scaling:
      description: The autoscaling configuration (C(mode) C(Enable) or C(Disable), C(auto_scaler_type), C(status)).
      type: dict
      returned: when the cluster has one
    orchestrator:
      description: The orchestrator.
      type: dict
      contains:
        eks:
          description: The EKS orchestrator.
          type: dict
          contains:
            cluster_arn:
              description: ARN of the EKS cluster.
              type: str
    vpc_config:
      description: The VPC configuration.
      type: dict
      contains:
        subnets:
          description: Subnet IDs.
          type: list
          elements: str
        security_group_ids:
          description: Security group IDs.
          type: list
          elements: str
    instance_groups:
      description: The instance groups.
      type: list
      elements: dict
      contains:
        instance_group_name:
          description: The group's name.
          type: str
        instance_type:
          description: The group's instance type (a group with one type).
          type: str
        instance_requirements:
          description:
            - The instance types of a flexible group, C(desired_instance_types) (as last requested, in priority order)
              and C(current_instance_types).
          type: dict
          returned: for a flexible group
        kubernetes_config:
          description:
            - The group's Kubernetes labels and taints, desired and current (C(desired_labels), C(current_labels),
              C(desired_taints), C(current_taints)); the label C(nvidia.com/mig.config) holds the MIG layout.
          type: dict
          returned: when the group has labels or taints
        current_count:
          description: Instances the group has now.
          type: int
        target_count:
          description: Instances the group is moving to.
          type: int
        execution_role:
          description: The group's execution role ARN.
          type: str
        life_cycle_config:
          description: The lifecycle script location (C(source_s3_uri), C(on_create)).
          type: dict
        threads_per_core:
          description: Threads per CPU core.
          type: int
        instance_storage_configs:
          description: Extra storage (C(ebs_volume_config.volume_size_in_gb)).
          type: list
          elements: dict
        training_plan_arn:
          description: The training plan ARN, when the group uses one.
          type: str
        status:
          description: The group's status.
          type: str
    tags:
      description: The cluster's tags.
      type: dict
diff:
  description:
    - The cluster before and after, normalized (the module's option names); in check mode, the predicted state.
    - Its keys include C(auto_scaling), C(node_provisioning_mode), C(cluster_role) and, per instance group,
      C(instance_type), C(instance_types) and C(mig_config).
  returned: always
  type: dict
  contains:
    before:
      description: The cluster before the task; empty when it did not exist.
      type: dict
    after:
      description: The cluster after the task; empty when it was deleted.
      type: dict
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils import engine
from ansible_collections.hyperpod.tenancy.plugins.module_utils.cluster import Cluster
from ansible_collections.hyperpod.tenancy.plugins.module_utils.cluster import MODULE_OPTIONS
from ansible_collections.hyperpod.tenancy.plugins.module_utils.cluster import lifecycle_problems
from ansible_collections.hyperpod.tenancy.plugins.module_utils.cluster import normalize_desired
from ansible_collections.hyperpod.tenancy.plugins.module_utils.cluster import option_problems
from ansible_collections.hyperpod.tenancy.plugins.module_utils.cluster import resolve_eks_cluster
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import result, run_module


def converge(context, params):
    wanted = None
    if params["state"] == "present":
        problems = lifecycle_problems(params) + option_problems(params)
        if problems:
            raise InputError(message="; ".join(problems))
        eks = context.client("eks") if params["eks_cluster"] else None
        wanted = normalize_desired(params, resolve_eks_cluster(eks, params["eks_cluster"]))
    cluster = Cluster(context.client("sagemaker"), params, context.check_mode, context.warn, wanted)
    outcome = engine.converge(cluster, params["state"], context.check_mode)
    return result(outcome.changed, outcome.before, outcome.after, cluster=outcome.result)


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
