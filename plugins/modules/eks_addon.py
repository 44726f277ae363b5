#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: eks_addon
short_description: Manage an Amazon EKS add-on, such as the HyperPod Task Governance add-on
version_added: 0.1.0
description:
  - Installs, updates or removes an add-on on an existing EKS cluster, and waits until it is C(ACTIVE) or gone.
  - HyperPod Task Governance runs as the add-on C(amazon-sagemaker-hyperpod-taskgovernance); its cluster
    policy (M(hyperpod.tenancy.task_governance_policy)) and compute quotas need it C(ACTIVE) first.
  - O(configuration_values) is compared as data with what the add-on has, whether that was given as JSON or YAML.
  - Options left unset are left as they are on an installed add-on; a new add-on gets the version EKS picks by default.
  - An add-on in C(CREATE_FAILED), C(UPDATE_FAILED) or C(DELETE_FAILED) makes the module fail with the health issues EKS reports.
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  cluster_name:
    description: Name of the EKS cluster.
    type: str
    required: true
  addon_name:
    description: Name of the add-on, as DescribeAddonVersions lists it.
    type: str
    required: true
  addon_version:
    description: Version of the add-on, for example C(v1.2.0-eksbuild.1).
    type: str
  service_account_role_arn:
    description: IAM role the add-on's service account assumes (IRSA).
    type: str
  configuration_values:
    description: The add-on's configuration, matching its schema (DescribeAddonConfiguration); sent as JSON.
    type: dict
  resolve_conflicts:
    description: What EKS does when a field it manages was changed in the cluster; used on create and update.
    type: str
    choices: [OVERWRITE, NONE, PRESERVE]
  preserve:
    description: With O(state=absent), leave the add-on's Kubernetes resources in the cluster.
    type: bool
    default: false
  wait:
    description: Wait until the add-on is C(ACTIVE), or gone.
  wait_timeout:
    default: 1200
extends_documentation_fragment:
  - hyperpod.tenancy.resource
  - hyperpod.tenancy.wait
"""

EXAMPLES = r"""
- name: Install the HyperPod Task Governance add-on
  hyperpod.tenancy.eks_addon:
    cluster_name: ml-shared-eks
    addon_name: amazon-sagemaker-hyperpod-taskgovernance

- name: Pin the CloudWatch Observability add-on and configure it
  hyperpod.tenancy.eks_addon:
    cluster_name: ml-shared-eks
    addon_name: amazon-cloudwatch-observability
    addon_version: v4.1.0-eksbuild.1
    configuration_values:
      containerLogs:
        enabled: false
    resolve_conflicts: OVERWRITE
    tags:
      team: platform

- name: Remove an add-on
  hyperpod.tenancy.eks_addon:
    cluster_name: ml-shared-eks
    addon_name: amazon-cloudwatch-observability
    state: absent
"""

RETURN = r"""
addon:
  description: The add-on as DescribeAddon returns it, in snake_case; empty when absent.
  returned: always
  type: dict
  contains:
    addon_name:
      description: Name of the add-on.
      type: str
      sample: amazon-sagemaker-hyperpod-taskgovernance
    cluster_name:
      description: Name of the EKS cluster.
      type: str
      sample: ml-shared-eks
    addon_arn:
      description: ARN of the add-on.
      type: str
    addon_version:
      description: Installed version.
      type: str
      sample: v1.2.0-eksbuild.1
    status:
      description: C(ACTIVE), or a transitional status when O(wait=false).
      type: str
      sample: ACTIVE
    health:
      description: Health issues EKS reports.
      type: dict
    service_account_role_arn:
      description: IAM role of the add-on's service account.
      type: str
      returned: when set
    configuration_values:
      description: The configuration as EKS stores it (a JSON or YAML string).
      type: str
      returned: when set
    tags:
      description: Tags of the add-on.
      type: dict
    created_at:
      description: When the add-on was installed.
      type: str
    modified_at:
      description: When the add-on last changed.
      type: str
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils.eks_addon import AddonManager
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import converge_by_state, run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import STATE, TAGS, options, wait

MODULE_OPTIONS = options(
    dict(
        cluster_name=dict(type="str", required=True),
        addon_name=dict(type="str", required=True),
        addon_version=dict(type="str"),
        service_account_role_arn=dict(type="str"),
        configuration_values=dict(type="dict"),
        resolve_conflicts=dict(type="str", choices=["OVERWRITE", "NONE", "PRESERVE"]),
        preserve=dict(type="bool", default=False),
    ),
    STATE,
    TAGS,
    wait(1200),
)

converge = converge_by_state(
    "addon", lambda context, params: AddonManager(context.client("eks"), params, check_mode=context.check_mode, warn=context.warn)
)


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
