#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: identity_center_permission_set
short_description: Manage an IAM Identity Center permission set and its group assignments
version_added: 0.1.0
description:
  - Creates, updates or deletes an IAM Identity Center permission set found by O(name), with its
    inline policy, AWS managed policies, customer managed policy references, permissions boundary
    and tags, and assigns it to Identity Center groups on AWS accounts.
  - O(state=present) is a full reconcile of what is given. Managed and customer managed policies
    that are not listed are detached when O(purge_managed_policies=true); assignments that are not
    listed are removed when O(purge_assignments=true). Options left unset are left alone.
  - After a change, the permission set is provisioned again to every account it is provisioned to
    (C(ProvisionPermissionSet)), and the module waits for each request to succeed; a failed
    provisioning fails the task with the reason AWS gives. New assignments provision the permission set
    to their account. Accounts left with an older version (C(LATEST_PERMISSION_SET_NOT_PROVISIONED)),
    for example after a failed provisioning, are provisioned again on the next run.
  - In each account, Identity Center creates the IAM role C(AWSReservedSSO_<name>_<suffix>) under the
    path C(/aws-reserved/sso.amazonaws.com/); RV(permission_set.role_name_pattern) is its name pattern,
    which M(hyperpod.tenancy.eks_access_entry) accepts as O(hyperpod.tenancy.eks_access_entry#module:principal_arn).
  - An unknown group, or input AWS would refuse, fails before any call that writes.
  - O(state=absent) removes the permission set's assignments in every account, then the permission set.
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  instance_arn:
    description:
      - The ARN of the Identity Center instance.
      - Optional when the account has exactly one instance (C(ListInstances)).
    type: str
  identity_store_id:
    description:
      - The identity store of O(instance_arn). With both given, the instance is not looked up
        (M(hyperpod.tenancy.shared_info) reads them once per run).
    type: str
  identity_center_group_ids:
    description:
      - Group ids already resolved, by display name (M(hyperpod.tenancy.shared_info) returns them for
        every team). The groups of O(groups) found here are not looked up in the identity store.
    type: dict
  permission_set_arn:
    description:
      - The permission set's ARN when already known.
        Identity Center has no lookup by name, so without it every permission
        set of the instance may be described to find this one. An ARN whose permission set has another name is ignored.
    type: str
  name:
    description:
      - The permission set's name, unique in the instance; at most 32 characters.
      - Give O(name) or O(team).
    type: str
  team:
    description:
      - A team of the shared cluster, instead of O(name); the name is then C(<name_prefix>-<team>) and the module
        returns the names derived from the team in RV(team_names).
    type: str
  team_policy:
    description:
      - Render the team's inline policy (the shared clusters read-only, the team's SageMaker domain, user profiles,
        spaces and apps by their team tag, the team's S3 prefix) instead of giving O(inline_policy). Needs O(team).
    type: dict
    suboptions:
      account_id:
        description: The account of the cluster.
        type: str
        required: true
      region:
        description: The region of the cluster.
        type: str
        required: true
      data_bucket:
        description: The bucket holding a prefix C(<team>/) per team.
        type: str
        required: true
      hyperpod_cluster_arn:
        description: The HyperPod cluster's ARN.
        type: str
        required: true
      eks_cluster_arn:
        description: The EKS cluster's ARN.
        type: str
        required: true
      tag_keys:
        description: The collection's tag keys, C({team, cost_center}); the team key scopes the SageMaker statement.
        type: dict
  description:
    description: The permission set's description.
    type: str
  session_duration:
    description:
      - How long a session lasts, as an ISO-8601 duration from V(PT1H) to V(PT12H).
      - Compared as a duration, so V(PT60M) and V(PT1H) are the same.
      - A new permission set gets V(PT1H) when this is unset.
    type: str
  relay_state:
    description: The URL users go to after signing in.
    type: str
  inline_policy:
    description:
      - The inline policy, as a dict or a JSON string. Compared as JSON, not as text.
      - An empty string or V({}) removes the inline policy.
    type: raw
  managed_policies:
    description: ARNs of AWS managed policies to attach.
    type: list
    elements: str
  customer_managed_policies:
    description: Customer managed policies to attach, by name and path; each must exist in every account the permission set is provisioned to.
    type: list
    elements: dict
    # A customer managed policy reference, as O(permissions_boundary.customer_managed_policy_reference) takes it too.
    suboptions: &policy_reference
      name:
        description: The policy's name.
        type: str
        required: true
      path:
        description: The policy's path.
        type: str
        default: /
  purge_managed_policies:
    description: Detach managed and customer managed policies that O(managed_policies) and O(customer_managed_policies) do not list.
    type: bool
    default: true
  permissions_boundary:
    description:
      - The permissions boundary; give exactly one of its two keys. V({}) removes the boundary.
    type: dict
    suboptions:
      managed_policy_arn:
        description: An AWS managed policy ARN.
        type: str
      customer_managed_policy_reference:
        description: A customer managed policy, by name and path.
        type: dict
        suboptions: *policy_reference
  groups:
    description:
      - Display names of Identity Center groups to assign the permission set to on each of O(accounts).
      - Resolved with the identity store's C(GetGroupId); an unknown name fails before any change.
      - Give with O(accounts). Unset leaves assignments alone.
    type: list
    elements: str
  accounts:
    description: AWS account ids (12 digits) to assign O(groups) on.
    type: list
    elements: str
  purge_assignments:
    description:
      - Remove assignments of this permission set (to any group or user) that O(groups) and O(accounts) do not list.
      - Only on the accounts in O(accounts) and the accounts the permission set is provisioned to.
    type: bool
    default: true
  tag_keys:
    description:
      - Tag keys for the team tag, as in C(naming.team_tags); default C(team). Used with O(team) to tell whether an
        existing permission set is the team's (O(team_policy.tag_keys) when given).
    type: dict
  wait_timeout:
    description: Seconds to wait for each provisioning or assignment request.
    type: int
    default: 600
extends_documentation_fragment:
  - hyperpod.tenancy.ownership
  - hyperpod.tenancy.resource
  - hyperpod.tenancy.team.name_prefix
  - hyperpod.tenancy.identity_center
"""

EXAMPLES = r"""
- name: Give team vision its permission set on the cluster account
  hyperpod.tenancy.identity_center_permission_set:
    name: hyperpod-vision
    description: Team vision on the shared HyperPod cluster
    session_duration: PT8H
    inline_policy: "{{ lookup('ansible.builtin.file', 'vision-policy.json') }}"
    managed_policies:
      - arn:aws:iam::aws:policy/AmazonSageMakerReadOnly
    groups: [TeamVision]
    accounts: ["123456789012"]
    tags:
      team: vision

- name: Give team vision its permission set with the rendered team policy
  hyperpod.tenancy.identity_center_permission_set:
    team: vision
    team_policy:
      account_id: "123456789012"
      region: us-east-1
      data_bucket: hyperpod-team-data
      hyperpod_cluster_arn: arn:aws:sagemaker:us-east-1:123456789012:cluster/p1a2b3c4d5e6
      eks_cluster_arn: arn:aws:eks:us-east-1:123456789012:cluster/ml-shared-eks
    groups: [TeamVision]
    accounts: ["123456789012"]
  register: vision_permission_set

- name: Offboard team vision
  hyperpod.tenancy.identity_center_permission_set:
    name: hyperpod-vision
    state: absent
"""

RETURN = r"""
permission_set:
  description: The permission set after the run; empty when it does not exist.
  returned: always
  type: dict
  contains:
    name:
      description: The name.
      type: str
      sample: hyperpod-vision
    permission_set_arn:
      description: The ARN.
      type: str
      sample: arn:aws:sso:::permissionSet/ssoins-0123456789abcdef/ps-0123456789abcdef
    description:
      description: The description.
      type: str
    session_duration:
      description: The session duration.
      type: str
      sample: PT8H
    relay_state:
      description: The relay state.
      type: str
    inline_policy:
      description: The inline policy document; V({}) when there is none.
      type: dict
    managed_policies:
      description: Attached AWS managed policy ARNs.
      type: list
      elements: str
    customer_managed_policies:
      description: Attached customer managed policies.
      type: list
      elements: dict
      contains:
        name:
          description: The policy name.
          type: str
        path:
          description: The policy path.
          type: str
    permissions_boundary:
      description:
        - The permissions boundary, or null.
        - Only when O(permissions_boundary) is set; otherwise the module leaves the boundary as it is and does not read it.
      type: dict
      returned: when O(permissions_boundary) is set
    tags:
      description: The tags.
      type: dict
    outdated_accounts:
      description:
        - Accounts whose role does not hold the latest version of the permission set (an earlier provisioning failed).
        - The module provisions them again, which counts as a change.
      type: list
      elements: str
    assignments:
      description: Account assignments.
      type: list
      elements: dict
      contains:
        account_id:
          description: The account.
          type: str
        principal_type:
          description: V(GROUP) or V(USER).
          type: str
        principal_id:
          description: The group or user id in the identity store.
          type: str
    role_name_pattern:
      description: The name pattern of the IAM role Identity Center creates for the permission set in each account.
      type: str
      sample: AWSReservedSSO_hyperpod-vision_*
permission_set_arn:
  description: The permission set's ARN; empty when it does not exist.
  returned: always
  type: str
role_name_pattern:
  description: The name pattern of the IAM role the permission set gets in each account.
  returned: always
  type: str
  sample: AWSReservedSSO_hyperpod-vision_*
team_names:
  description: The names derived from O(team) (C(naming.py)), also in check mode.
  returned: when O(team) is given
  type: dict
  contains:
    permission_set:
      description: The permission set's name.
      type: str
      sample: hyperpod-vision
    role_name_pattern:
      description: The name pattern of the team's Identity Center role.
      type: str
      sample: AWSReservedSSO_hyperpod-vision_*
    namespace:
      description: The team's Kubernetes namespace.
      type: str
      sample: hyperpod-ns-vision
    kubernetes_group:
      description: The Kubernetes group the team's RBAC bindings name.
      type: str
      sample: hyperpod-ns-vision-namespace-level-group
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.permission_set import MODULE_OPTIONS, converge


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
