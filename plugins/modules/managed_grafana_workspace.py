#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: managed_grafana_workspace
short_description: Manage an Amazon Managed Grafana workspace and its IAM Identity Center permissions
version_added: 0.1.0
description:
  - Creates, updates or deletes an Amazon Managed Grafana workspace, and waits until it is C(ACTIVE) or gone.
  - Grants and revokes the workspace roles (C(ADMIN), C(EDITOR), C(VIEWER)) of IAM Identity Center groups and users
    with UpdatePermissions, compared with what ListPermissions reports.
  - With O(permissions_mode=merge) only the principals listed in O(permissions) are touched, so the platform's run and
    each team's run can share one workspace without revoking each other's access.
  - The workspace is found by O(name) (which must be unique) or by O(workspace_id). With O(workspace_id) the module never
    creates a workspace, which is how a team-level play changes permissions only.
  - Options left unset are left as they are on an existing workspace. O(authentication_providers) and O(grafana_version)
    are set when the workspace is created; a different value for an existing workspace fails before any change
    (AWS changes them through UpdateWorkspaceAuthentication and UpdateWorkspaceConfiguration, which this module does not call).
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  name:
    description:
      - Name of the workspace (C([a-zA-Z0-9-._~]{1,255})).
      - Required to create a workspace. Exactly one of O(name) and O(workspace_id) is given.
    type: str
  workspace_id:
    description: ID of an existing workspace (C(g-) and ten hexadecimal digits).
    type: str
  description:
    description: Description of the workspace.
    type: str
  authentication_providers:
    description: How users sign in; C(AWS_SSO) is IAM Identity Center. Defaults to C([AWS_SSO]) on create.
    type: list
    elements: str
    choices: [AWS_SSO, SAML]
  account_access_type:
    description: Whether the workspace reads data of this account only. Defaults to C(CURRENT_ACCOUNT) on create.
    type: str
    choices: [CURRENT_ACCOUNT, ORGANIZATION]
  permission_type:
    description: Whether Amazon Managed Grafana creates the workspace's IAM role. Defaults to C(SERVICE_MANAGED) on create.
    type: str
    choices: [SERVICE_MANAGED, CUSTOMER_MANAGED]
  role_arn:
    description: IAM role of the workspace, with O(permission_type=CUSTOMER_MANAGED).
    type: str
  data_sources:
    description: AWS data sources the service-managed role is given access to, such as C(PROMETHEUS).
    type: list
    elements: str
    choices: [AMAZON_OPENSEARCH_SERVICE, CLOUDWATCH, PROMETHEUS, XRAY, TIMESTREAM, SITEWISE, ATHENA, REDSHIFT, TWINMAKER]
  notification_destinations:
    description: Notification channels the service-managed role may publish to.
    type: list
    elements: str
    choices: [SNS]
  grafana_version:
    description: Grafana version of a new workspace, for example C(10.4).
    type: str
  permissions:
    description:
      - Workspace roles of IAM Identity Center principals. Left alone when unset.
    type: list
    elements: dict
    suboptions:
      principal_id:
        description:
          - Identity store ID of the group or user.
          - Exactly one of O(permissions[].principal_id) and O(permissions[].group_name) is given.
        type: str
      group_name:
        description:
          - Display name of an IAM Identity Center group, looked up in the identity store (identitystore GetGroupId).
          - An unknown group fails before any change.
        type: str
      principal_type:
        description: Whether O(permissions[].principal_id) is a group or a user.
        type: str
        choices: [SSO_GROUP, SSO_USER]
        default: SSO_GROUP
      role:
        description: The principal's role in the workspace; required unless O(permissions[].state=absent).
        type: str
        choices: [ADMIN, EDITOR, VIEWER]
      state:
        description: C(absent) revokes whatever role the principal has.
        type: str
        choices: [present, absent]
        default: present
  identity_store_id:
    description:
      - Identity store in which O(permissions[].group_name) is looked up.
      - Defaults to the identity store of the account's only IAM Identity Center instance.
    type: str
  permissions_mode:
    description:
      - C(merge) grants and revokes only the principals in O(permissions).
      - C(replace) makes O(permissions) the workspace's only permissions, revoking every other principal.
    type: str
    choices: [merge, replace]
    default: merge
  wait:
    description: Wait until the workspace is C(ACTIVE), or gone. Granting permissions always waits for C(ACTIVE).
  wait_timeout:
    default: 1200
extends_documentation_fragment:
  - hyperpod.tenancy.resource
  - hyperpod.tenancy.identity_center
  - hyperpod.tenancy.wait
"""

EXAMPLES = r"""
- name: Create the cluster's Grafana workspace, signed in through IAM Identity Center
  hyperpod.tenancy.managed_grafana_workspace:
    name: hyperpod-observability
    description: Team views of the shared HyperPod cluster
    authentication_providers: [AWS_SSO]
    data_sources: [PROMETHEUS]
    permissions:
      - group_name: PlatformAdmins
        role: ADMIN
    tags:
      managed-by: hyperpod.tenancy

- name: Let one team view the workspace, leaving every other permission alone
  hyperpod.tenancy.managed_grafana_workspace:
    workspace_id: g-0123456789
    permissions_mode: merge
    permissions:
      - principal_id: "{{ team_group_id }}"
        role: VIEWER

- name: Revoke an offboarded team's access
  hyperpod.tenancy.managed_grafana_workspace:
    workspace_id: g-0123456789
    permissions:
      - principal_id: "{{ team_group_id }}"
        state: absent

- name: Delete the workspace
  hyperpod.tenancy.managed_grafana_workspace:
    name: hyperpod-observability
    state: absent
"""

RETURN = r"""
workspace:
  description: The workspace as DescribeWorkspace returns it, in snake_case, with its permissions; empty when absent.
  returned: always
  type: dict
  contains:
    id:
      description: ID of the workspace.
      type: str
      sample: g-0123456789
    name:
      description: Name of the workspace.
      type: str
      sample: hyperpod-observability
    endpoint:
      description: Host name of the workspace's Grafana (its HTTP API is at C(https://<endpoint>/api)).
      type: str
      sample: g-0123456789.grafana-workspace.us-east-1.amazonaws.com
    status:
      description: C(ACTIVE), or a transitional status when O(wait=false).
      type: str
      sample: ACTIVE
    grafana_version:
      description: Grafana version.
      type: str
      sample: "10.4"
    authentication:
      description: Sign-in providers.
      type: dict
      contains:
        providers:
          description: C(AWS_SSO) and/or C(SAML).
          type: list
          elements: str
    data_sources:
      description: AWS data sources the workspace's role may read.
      type: list
      elements: str
    permission_type:
      description: C(SERVICE_MANAGED) or C(CUSTOMER_MANAGED).
      type: str
    account_access_type:
      description: C(CURRENT_ACCOUNT) or C(ORGANIZATION).
      type: str
    tags:
      description: Tags of the workspace.
      type: dict
    permissions:
      description: Workspace roles of Identity Center principals.
      type: list
      elements: dict
      contains:
        principal_id:
          description: Identity store ID.
          type: str
        principal_type:
          description: C(SSO_GROUP) or C(SSO_USER).
          type: str
        role:
          description: C(ADMIN), C(EDITOR) or C(VIEWER).
          type: str
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils.grafana_workspace import WorkspaceManager
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import converge_by_state, run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import IDENTITY_CENTER, STATE, TAGS, options, wait
from ansible_collections.hyperpod.tenancy.plugins.module_utils.permission_set import resolve_groups, resolve_instance

MODULE_OPTIONS = options(
    dict(
        name=dict(type="str"),
        workspace_id=dict(type="str"),
        description=dict(type="str"),
        authentication_providers=dict(type="list", elements="str", choices=["AWS_SSO", "SAML"]),
        account_access_type=dict(type="str", choices=["CURRENT_ACCOUNT", "ORGANIZATION"]),
        permission_type=dict(type="str", choices=["SERVICE_MANAGED", "CUSTOMER_MANAGED"]),
        role_arn=dict(type="str"),
        data_sources=dict(
            type="list", elements="str",
            choices=["AMAZON_OPENSEARCH_SERVICE", "CLOUDWATCH", "PROMETHEUS", "XRAY", "TIMESTREAM", "SITEWISE", "ATHENA", "REDSHIFT", "TWINMAKER"],
        ),
        notification_destinations=dict(type="list", elements="str", choices=["SNS"]),
        grafana_version=dict(type="str"),
        permissions=dict(
            type="list", elements="dict",
            options=dict(
                principal_id=dict(type="str"),
                group_name=dict(type="str"),
                principal_type=dict(type="str", choices=["SSO_GROUP", "SSO_USER"], default="SSO_GROUP"),
                role=dict(type="str", choices=["ADMIN", "EDITOR", "VIEWER"]),
                state=dict(type="str", choices=["present", "absent"], default="present"),
            ),
            required_if=[["state", "present", ["role"]]],
            required_one_of=[["principal_id", "group_name"]],
            mutually_exclusive=[["principal_id", "group_name"]],
        ),
        identity_store_id=dict(type="str"),
        permissions_mode=dict(type="str", choices=["merge", "replace"], default="merge"),
    ),
    STATE,
    TAGS,
    IDENTITY_CENTER,
    wait(1200),
    required_one_of=[["name", "workspace_id"]],
    mutually_exclusive=[["name", "workspace_id"]],
)


def workspace_manager(context, params):
    # The account names the workspace's ARN in its tag calls; it is read only when tags are set.
    account_id = context.account_id() if params["state"] == "present" and params.get("tags") is not None else None

    def lookup(names):
        store_id = params.get("identity_store_id")
        instance_arn = None
        if not store_id:
            instance_arn, store_id = resolve_instance(context.client("sso-admin"), None)
        return resolve_groups(context.client("identitystore"), store_id, instance_arn, names)

    return WorkspaceManager(context.client("grafana"), params, check_mode=context.check_mode, account_id=account_id, warn=context.warn, resolve_groups=lookup)


converge = converge_by_state("workspace", workspace_manager)


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
