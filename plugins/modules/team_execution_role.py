#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: team_execution_role
short_description: A team's SageMaker Studio execution role (IAM) with its data-prefix policy
version_added: 0.1.0
description:
  - Creates, converges or deletes the IAM role the team's SageMaker domain runs as, named
    C(<name_prefix>-<team>-studio-execution), trusted by C(sagemaker.amazonaws.com) only.
  - With O(data_bucket) the role carries the inline policy C(team-data), which allows
    C(s3:ListBucket) on the bucket for keys under C(<team>/) and C(s3:GetObject), C(s3:PutObject),
    C(s3:DeleteObject) on C(arn:aws:s3:::<data_bucket>/<team>/*). Without O(data_bucket) that policy is removed.
  - With O(hyperpod_cluster_arn) and O(eks_cluster_arn) the role carries the inline policy C(hyperpod-cluster),
    what AWS's I(Setting up an Amazon EKS cluster in Studio) gives the execution role to use a HyperPod cluster
    from Studio, on those clusters only (C(sagemaker:DescribeCluster) on the HyperPod cluster,
    C(eks:DescribeCluster), C(eks:AccessKubernetesApi), C(eks:MutateViaKubernetesApi) and C(eks:DescribeAddon) on the
    EKS cluster and its add-ons, C(sagemaker:ListClusters)). Without C(eks:MutateViaKubernetesApi) Studio could read
    the team's namespace but not submit a workload to it (EKS User Guide, I(Grant AWS services write access to
    Kubernetes APIs)). The guide's statements on C(*) for EC2, CloudWatch, ECR and SSM are not granted
    (an SSM session reaches a node that runs every team's pods). Inside Kubernetes, the role's
    access entry (M(hyperpod.tenancy.eks_access_entry) with O(hyperpod.tenancy.eks_access_entry#module:principal=execution_role))
    limits it to the team's namespace. Without the two ARNs that policy is removed.
  - With O(domain_arn) the role carries the inline policy C(team-studio), what Studio's web portal does as the role in
    an IAM Identity Center domain (SageMaker AI Developer Guide, I(Understanding domain space permissions and execution
    roles)), in that domain only (C(space/<domain id>/*), C(app/<domain id>/*), C(user-profile/<domain id>/*),
    C(domain/<domain id>)). C(sagemaker:CreateSpace), C(DescribeSpace), C(UpdateSpace), C(DeleteSpace) on its spaces,
    C(sagemaker:CreateApp), C(DescribeApp), C(DeleteApp) on its apps, C(sagemaker:DescribeUserProfile) and
    C(sagemaker:DescribeDomain), and C(sagemaker:AddTags) on its spaces and apps (the creates' dependent action when
    they carry tags) with the team's own values only for the team, cost center and managed-by tags. Not granted
    C(ListSpaces) and C(ListApps), which take no resource-level permission (on C(*) they show every team's names), nor
    C(DeleteTags). Without O(domain_arn) that policy is left as it is.
  - Every member of the team can run code as this role, so C(team-studio) holds what a member may ask for. A space or app
    may name only the instance types of O(studio_instance_types) (condition key C(sagemaker:InstanceTypes)), and only
    the user profiles of O(studio_owners) as its owner (C(sagemaker:OwnerUserProfileArn)), so a profile being removed
    gets no new space that would keep its removal failing. A tagged request may use only the team's tag keys
    (C(aws:TagKeys)), whatever their case.
  - The role's permissions are exactly these. B(Every other inline policy is deleted and every
    attached managed policy is detached), whoever added them.
  - One module run replaces M(amazon.aws.iam_role) followed by M(amazon.aws.iam_policy). A run that changes
    nothing makes at most six IAM reads (GetRole, ListRolePolicies, GetRolePolicy for C(team-data),
    C(hyperpod-cluster) and C(team-studio) when the role has them, ListAttachedRolePolicies) and writes only what differs.
  - Options left unset are left alone on an existing role (O(description)).
  - O(state=absent) deletes the inline policies, detaches the managed policies and deletes the role.
    It never removes the role from an instance profile; when the role is in one, the module fails
    before any write, because IAM refuses to delete it.
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  team:
    description:
      - The team name. Lower-case letters, digits and inner hyphens.
      - The role is C(<name_prefix>-<team>-studio-execution).
    type: str
    required: true
  description:
    description:
      - The role's description, at most 1000 characters of Latin-1 text.
      - Left as it is on an existing role when unset.
    type: str
  data_bucket:
    description:
      - The shared data bucket whose C(<team>/) prefix the role may use (policy C(team-data)).
      - When unset or empty, the role has no C(team-data) policy.
    type: str
  hyperpod_cluster_arn:
    description:
      - The ARN of the shared SageMaker HyperPod cluster the team uses from Studio (policy C(hyperpod-cluster)).
      - Given together with O(eks_cluster_arn); when both are unset, the role has no C(hyperpod-cluster) policy.
    type: str
  eks_cluster_arn:
    description:
      - The ARN of the EKS cluster that orchestrates O(hyperpod_cluster_arn) (policy C(hyperpod-cluster)).
    type: str
  domain_arn:
    description:
      - The ARN of the team's SageMaker AI domain, C(arn:aws:sagemaker:<region>:<account>:domain/d-<id>) (policy C(team-studio)).
      - When unset, a C(team-studio) policy the role has is left as it is, and a new role has none. The domain runs as this
        role, so it does not exist when the role is first made; M(hyperpod.tenancy.team_resources) converges the role again
        with the ARN O(hyperpod.tenancy.team_resources#module:domain) returns.
    type: str
  studio_instance_types:
    description:
      - The instance types the team's Studio spaces and apps may run on (policy C(team-studio), condition key
        C(sagemaker:InstanceTypes) of CreateSpace, UpdateSpace and CreateApp). A request that names no instance type is allowed.
      - V(system) is the only value of a JupyterServer app and runs a KernelGateway app on C(ml.t3.medium) (SageMaker API
        Reference, ResourceSpec).
      - When unset, V(system) only. M(hyperpod.tenancy.team_resources) passes the platform's
        C(hyperpod_team_limits.studio_instance_types), which the team file cannot set.
    type: list
    elements: str
  studio_owners:
    description:
      - The user profiles (the team's members) that a space or app made as the role may be owned by (policy C(team-studio),
        condition key C(sagemaker:OwnerUserProfileArn)). When unset or empty, no request may name an owner.
    type: list
    elements: str
  revoke_only:
    description:
      - With O(state=absent), take every permission away from the role (delete its inline policies, detach its managed
        policies) and keep the role. Offboarding does this before it deletes the team's spaces and domain, which run as
        the role, so that no member acting as the role makes a space meanwhile, and a running app keeps nothing.
    type: bool
    default: false
  account_id:
    description:
      - The role's account, used only to predict the ARN of a role that does not exist yet in check mode.
      - When unset and needed, the module asks STS (C(GetCallerIdentity)).
    type: str
notes:
  - The role always carries the team tags (team, cost-center, managed-by) besides O(tags);
    O(purge_tags) removes other tags only when O(tags) is given. Tag keys starting with C(aws:) are never removed.
  - Bad input (a team name, description, tag or bucket name IAM or S3 would refuse) fails before any call.
extends_documentation_fragment:
  - hyperpod.tenancy.ownership
  - hyperpod.tenancy.resource
  - hyperpod.tenancy.team
  - hyperpod.tenancy.team.name_prefix
"""

EXAMPLES = r"""
- name: Give team vision its Studio execution role, with access to its prefix of the data bucket
  hyperpod.tenancy.team_execution_role:
    team: vision
    description: SageMaker Studio execution role of team vision
    data_bucket: ml-shared-data
    hyperpod_cluster_arn: arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdef123456
    eks_cluster_arn: arn:aws:eks:us-east-1:123456789012:cluster/ml-shared-eks
    cost_center: CC-1001
    account_id: "123456789012"
    tags: {}

- name: Remove the role's data and cluster access (the team-data and hyperpod-cluster policies)
  hyperpod.tenancy.team_execution_role:
    team: vision

- name: Delete the role of an offboarded team
  hyperpod.tenancy.team_execution_role:
    team: vision
    state: absent
"""

RETURN = r"""
role:
  description: The role after the change (empty when absent).
  returned: always
  type: dict
  contains:
    role_name:
      description: The role name.
      type: str
      sample: hyperpod-vision-studio-execution
    arn:
      description: The role ARN.
      type: str
      sample: arn:aws:iam::123456789012:role/hyperpod-vision-studio-execution
    description:
      description: The role's description, null when it has none.
      type: str
      sample: SageMaker Studio execution role of team vision
    assume_role_policy_document:
      description: The trust policy.
      type: dict
      sample:
        Version: "2012-10-17"
        Statement: [{Effect: Allow, Principal: {Service: sagemaker.amazonaws.com}, Action: "sts:AssumeRole"}]
    tags:
      description: The role's tags.
      type: dict
      sample: {team: vision, cost-center: CC-1001, managed-by: hyperpod.tenancy}
    inline_policies:
      description: Names of the role's inline policies, sorted.
      type: list
      elements: str
      sample: [hyperpod-cluster, team-data, team-studio]
    team_data_policy:
      description: The document of the C(team-data) inline policy, null when the role has none.
      type: dict
      sample:
        Version: "2012-10-17"
        Statement:
          - Sid: ListTeamPrefix
            Effect: Allow
            Action: s3:ListBucket
            Resource: arn:aws:s3:::ml-shared-data
            Condition: {StringLike: {"s3:prefix": ["vision/*"]}}
          - Sid: UseTeamObjects
            Effect: Allow
            Action: [s3:GetObject, s3:PutObject, s3:DeleteObject]
            Resource: arn:aws:s3:::ml-shared-data/vision/*
    cluster_policy:
      description: The document of the C(hyperpod-cluster) inline policy, null when the role has none.
      type: dict
      sample:
        Version: "2012-10-17"
        Statement:
          - Sid: DescribeHyperPodCluster
            Effect: Allow
            Action: [sagemaker:DescribeCluster]
            Resource: arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdef123456
          - Sid: UseEksCluster
            Effect: Allow
            Action: [eks:AccessKubernetesApi, eks:DescribeAddon, eks:DescribeCluster, eks:MutateViaKubernetesApi]
            Resource: [arn:aws:eks:us-east-1:123456789012:cluster/ml-shared-eks, "arn:aws:eks:us-east-1:123456789012:addon/ml-shared-eks/*"]
          - Sid: ListClusters
            Effect: Allow
            Action: [sagemaker:ListClusters]
            Resource: "*"
    studio_policy:
      description: The document of the C(team-studio) inline policy, null when the role has none.
      type: dict
      sample:
        Version: "2012-10-17"
        Statement:
          - Sid: TeamSpacesAndApps
            Effect: Allow
            Action: [sagemaker:CreateSpace, sagemaker:DeleteSpace, sagemaker:DescribeSpace, sagemaker:UpdateSpace, sagemaker:CreateApp,
                     sagemaker:DeleteApp, sagemaker:DescribeApp]
            Resource: ["arn:aws:sagemaker:us-east-1:123456789012:space/d-abcdef123456/*", "arn:aws:sagemaker:us-east-1:123456789012:app/d-abcdef123456/*"]
            Condition:
              ForAllValues:StringEquals: {"sagemaker:InstanceTypes": [system, ml.t3.medium]}
              ArnEqualsIfExists: {"sagemaker:OwnerUserProfileArn": ["arn:aws:sagemaker:us-east-1:123456789012:user-profile/d-abcdef123456/alice"]}
          - Sid: TeamDomainRead
            Effect: Allow
            Action: [sagemaker:DescribeDomain]
            Resource: arn:aws:sagemaker:us-east-1:123456789012:domain/d-abcdef123456
          - Sid: TeamUserProfileRead
            Effect: Allow
            Action: [sagemaker:DescribeUserProfile]
            Resource: arn:aws:sagemaker:us-east-1:123456789012:user-profile/d-abcdef123456/*
          - Sid: TagOnCreate
            Effect: Allow
            Action: [sagemaker:AddTags]
            Resource: ["arn:aws:sagemaker:us-east-1:123456789012:space/d-abcdef123456/*", "arn:aws:sagemaker:us-east-1:123456789012:app/d-abcdef123456/*"]
            Condition:
              StringEqualsIfExists: {"aws:RequestTag/team": vision, "aws:RequestTag/cost-center": CC-1001, "aws:RequestTag/managed-by": hyperpod.tenancy}
              ForAllValues:StringEquals: {"aws:TagKeys": [cost-center, managed-by, team]}
    attached_policies:
      description: ARNs of the managed policies attached to the role, sorted (empty after a run).
      type: list
      elements: str
      sample: []
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.execution_role import MODULE_OPTIONS, converge


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
