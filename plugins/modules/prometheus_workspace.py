#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: prometheus_workspace
short_description: Manage an Amazon Managed Service for Prometheus workspace, found by its alias
version_added: 0.1.0
description:
  - Creates or deletes an Amazon Managed Service for Prometheus (AMP) workspace and manages its tags, waiting until
    it is C(ACTIVE) or gone.
  - The workspace is found by O(alias). AWS does not require aliases to be unique and filters ListWorkspaces by alias
    prefix; this module keeps only the workspaces whose alias is exactly O(alias) (a workspace being deleted does not
    count) and fails when more than one has it.
  - O(kms_key_arn) is set when the workspace is created; a different key for an existing workspace fails before any
    change (AWS has no call that changes it).
  - A workspace whose creation failed (C(CREATION_FAILED)) is reported as a failure; delete it with O(state=absent).
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  alias:
    description:
      - Alias of the workspace, 1 to 100 characters without blanks at either end; it identifies the workspace.
    type: str
    required: true
  kms_key_arn:
    description:
      - ARN of a customer managed KMS key (symmetric, same Region) that encrypts the workspace's data.
      - Only used when the workspace is created. Left unset, AWS uses a key it owns.
    type: str
  wait:
    description:
      - Wait until the workspace is C(ACTIVE) (or gone, with O(state=absent)).
      - Deleting a workspace that is still being created always waits for its creation to end.
  wait_timeout:
    default: 600
extends_documentation_fragment:
  - hyperpod.tenancy.resource
  - hyperpod.tenancy.wait
"""

EXAMPLES = r"""
- name: Ensure the cluster's Prometheus workspace
  hyperpod.tenancy.prometheus_workspace:
    alias: hyperpod-observability
    tags:
      managed-by: hyperpod.tenancy
      component: observability
  register: amp

- name: Point the HyperPod observability add-on at it
  hyperpod.tenancy.eks_addon:
    cluster_name: ml-shared-eks
    addon_name: amazon-sagemaker-hyperpod-observability
    configuration_values:
      ampWorkspace:
        prometheusEndpoint: "{{ amp.workspace.prometheus_endpoint }}"
        arn: "{{ amp.workspace.arn }}"

- name: Create a workspace encrypted with a customer managed key
  hyperpod.tenancy.prometheus_workspace:
    alias: hyperpod-observability-encrypted
    kms_key_arn: arn:aws:kms:us-east-1:111122223333:key/0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d

- name: Delete the workspace
  hyperpod.tenancy.prometheus_workspace:
    alias: hyperpod-observability
    state: absent
"""

RETURN = r"""
workspace:
  description: The workspace as DescribeWorkspace returns it, in snake_case, its status a string; empty when absent.
  returned: always
  type: dict
  contains:
    workspace_id:
      description: ID of the workspace (absent from a check-mode prediction of a new workspace).
      type: str
      sample: ws-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d
    arn:
      description: ARN of the workspace.
      type: str
      sample: arn:aws:aps:us-east-1:111122223333:workspace/ws-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d
    alias:
      description: Alias of the workspace.
      type: str
      sample: hyperpod-observability
    status:
      description: C(ACTIVE), or C(CREATING)/C(UPDATING) when O(wait=false).
      type: str
      sample: ACTIVE
    prometheus_endpoint:
      description: The workspace's Prometheus endpoint (remote write is C(<endpoint>api/v1/remote_write), queries C(<endpoint>api/v1/query)).
      type: str
      sample: https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d/
    kms_key_arn:
      description: The customer managed KMS key, when the workspace has one.
      type: str
    created_at:
      description: When the workspace was created.
      type: str
    tags:
      description: Tags of the workspace.
      type: dict
      sample: {"managed-by": "hyperpod.tenancy"}
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import converge_by_state, run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import STATE, TAGS, options, wait
from ansible_collections.hyperpod.tenancy.plugins.module_utils.prometheus_workspace import WorkspaceManager

MODULE_OPTIONS = options(
    dict(
        alias=dict(type="str", required=True),
        kms_key_arn=dict(type="str", no_log=False),
    ),
    STATE,
    TAGS,
    wait(600),
)

converge = converge_by_state("workspace", lambda context, params: WorkspaceManager(context.client("amp"), params, check_mode=context.check_mode))


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
