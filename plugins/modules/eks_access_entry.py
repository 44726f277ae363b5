#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: eks_access_entry
short_description: Manage an EKS access entry and its access policies
version_added: 0.1.0
description:
  - Creates, updates or deletes the EKS access entry of an IAM principal on a cluster, with its
    Kubernetes groups, user name, tags and associated access policies (each scoped to the cluster
    or to namespaces).
  - Only what differs is changed; access policies that O(access_policies) does not list are
    disassociated when O(access_policies) is given.
  - O(principal_arn) also takes the role-name pattern of an IAM Identity Center permission set,
    V(AWSReservedSSO_<name>_*), which M(hyperpod.tenancy.identity_center_permission_set) returns as
    C(role_name_pattern). It stands for the role Identity Center made for the permission set named C(<name>),
    C(AWSReservedSSO_<name>_) and a suffix of 16 hexadecimal characters, not for every name the glob would match (the role of
    a permission set named C(<name>_Admins) is not C(<name>)'s). The role is found with IAM C(ListRoles) under
    C(/aws-reserved/sso.amazonaws.com/) and must be the only one. In check mode, a pattern that matches no role yet (its permission set is created earlier in
    the same run) is reported as a change.
  - An access entry older than its role was made for a role since deleted and created again by name; the EKS API
    reference (C(AccessEntry.principalArn)) says such an entry "won't work", so the module deletes the entry and creates
    it again, with the same groups, user name, tags and access policies, and says why in the diff (C(recreated_because))
    and a warning. It reads the role's creation date (C(iam:GetRole)) when the entry exists.
  - The cluster's authentication mode must be V(API) or V(API_AND_CONFIG_MAP). Input EKS would refuse
    fails before any call that writes; so does a change of O(type), which EKS cannot make in place.
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  tag_keys:
    description:
      - Tag keys for the team tag, as in C(naming.team_tags); default C(team).
      - With O(team) and O(state=absent), the entry is deleted only when it carries the collection's ownership mark for the
        team (C(managed-by=hyperpod.tenancy) and the team tag); any other is refused, naming it and its tags.
    type: dict
  cluster_name:
    description: The EKS cluster.
    type: str
    required: true
  principal_arn:
    description:
      - The IAM role or user ARN, path included, or an Identity Center role-name pattern V(AWSReservedSSO_<name>_*).
      - Give O(principal_arn), O(team) or both (the principal of the team's entry, as found earlier in the run).
    type: str
  team:
    description:
      - A team of the shared cluster. Without O(principal_arn), the principal is the role of the team's
        permission set, V(AWSReservedSSO_<name_prefix>-<team>_*), or its Studio execution role (O(principal)).
      - With a team, an existing entry is changed or deleted only when it is the team's (O(adopt)).
    type: str
  principal:
    description:
      - With O(team), which of the team's roles the entry is for.
      - V(permission_set), the role Identity Center made for the team's permission set.
      - V(execution_role), the team's SageMaker Studio execution role C(<name_prefix>-<team>-studio-execution)
        (M(hyperpod.tenancy.team_execution_role)), in O(account_id). AWS's I(Setting up an Amazon EKS cluster in Studio)
        has Studio reach the cluster as that role, through its own access entry.
    type: str
    choices: [permission_set, execution_role]
    default: permission_set
  account_id:
    description:
      - The account of the execution role, for O(principal=execution_role). When unset, the module asks STS (C(GetCallerIdentity)).
    type: str
  type:
    description: The access entry type; it cannot be changed once the entry exists.
    type: str
    choices: [STANDARD, FARGATE_LINUX, EC2_LINUX, EC2_WINDOWS, EC2, HYBRID_LINUX, HYPERPOD_LINUX]
    default: STANDARD
  kubernetes_groups:
    description: Kubernetes groups the principal belongs to (for RBAC bindings). Unset leaves them alone.
    type: list
    elements: str
  username:
    description: The Kubernetes user name. Unset keeps the current one (EKS's default on creation).
    type: str
  access_policies:
    description:
      - Access policies to associate. Unset leaves associations alone; V([]) removes them all.
    type: list
    elements: dict
    suboptions:
      policy_arn:
        description: The policy ARN, V(arn:aws:eks::aws:cluster-access-policy/<Name>).
        type: str
      name:
        description: The policy name, for example V(AmazonSagemakerHyperpodTrainingPolicy), instead of O(access_policies[].policy_arn).
        type: str
      access_scope:
        description: Where the policy applies.
        type: dict
        required: true
        suboptions:
          type:
            description: V(cluster) or V(namespace).
            type: str
            choices: [cluster, namespace]
            required: true
          namespaces:
            description: The namespaces, for a V(namespace) scope.
            type: list
            elements: str
extends_documentation_fragment:
  - hyperpod.tenancy.ownership
  - hyperpod.tenancy.resource
  - hyperpod.tenancy.team.name_prefix
"""

EXAMPLES = r"""
- name: Give team vision's permission-set role kubectl access to its namespace
  hyperpod.tenancy.eks_access_entry:
    cluster_name: ml-shared-eks
    principal_arn: AWSReservedSSO_hyperpod-vision_*
    kubernetes_groups: [hyperpod-ns-vision-namespace-level-group]
    access_policies:
      - name: AmazonSagemakerHyperpodTrainingPolicy
        access_scope: {type: namespace, namespaces: [hyperpod-ns-vision]}
      - name: AmazonSagemakerHyperpodUserClusterPolicy
        access_scope: {type: cluster}
    tags:
      team: vision

- name: Let team vision's Studio (its execution role) reach its namespace
  hyperpod.tenancy.eks_access_entry:
    cluster_name: ml-shared-eks
    team: vision
    principal: execution_role
    account_id: "123456789012"
    kubernetes_groups: [hyperpod-ns-vision-namespace-level-group]
    access_policies:
      - name: AmazonSagemakerHyperpodTrainingPolicy
        access_scope: {type: namespace, namespaces: [hyperpod-ns-vision]}

- name: Remove the access entry
  hyperpod.tenancy.eks_access_entry:
    cluster_name: ml-shared-eks
    principal_arn: AWSReservedSSO_hyperpod-vision_*
    state: absent
"""

RETURN = r"""
access_entry:
  description: The access entry after the run; empty when it does not exist.
  returned: always
  type: dict
  contains:
    cluster_name:
      description: The cluster.
      type: str
    principal_arn:
      description: The principal's ARN.
      type: str
      sample: arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_hyperpod-vision_0123456789abcdef
    access_entry_arn:
      description: The access entry's ARN.
      type: str
    type:
      description: The type.
      type: str
      sample: STANDARD
    username:
      description: The Kubernetes user name.
      type: str
    kubernetes_groups:
      description: The Kubernetes groups, sorted.
      type: list
      elements: str
    tags:
      description: The tags.
      type: dict
    access_policies:
      description: The associated access policies, sorted by ARN.
      type: list
      elements: dict
      contains:
        policy_arn:
          description: The policy ARN.
          type: str
        access_scope:
          description: The scope, V(type) and sorted V(namespaces).
          type: dict
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.access_entry import MODULE_OPTIONS, converge


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
