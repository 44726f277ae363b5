# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # A module that calls IAM Identity Center (sso-admin, identitystore): the connection those calls use.
    DOCUMENTATION = r"""
options:
  identity_center:
    description:
      - Where the module's IAM Identity Center calls (C(sso-admin) and C(identitystore)) go, as C(hyperpod_identity_center)
        sets it (docs/identity-center.md). Identity Center's admin APIs answer only in the organization's management
        account or a delegated administrator account, in the instance's home Region; every other call of the module stays
        on the module's own connection (the workload account).
      - Unset or empty, Identity Center is called with the module's own connection (same account and Region).
      - The account assignments still target the workload account (the caller of the module's own connection).
    type: dict
    suboptions:
      region:
        description: The Identity Center instance's home Region. Defaults to the module's O(region).
        type: str
      profile:
        description: An AWS profile whose credentials replace the module's for Identity Center calls.
        type: str
      assume_role_arn:
        description:
          - A role in the management (or delegated administrator) account, assumed through STS with the module's own
            connection (or O(identity_center.profile)'s credentials when both are set). Its trust policy must name the
            caller's account.
          - The temporary credentials are used in the module's process only and never returned.
        type: str
      external_id:
        description: The external id the role's trust policy requires (C(sts:ExternalId)). Never logged.
        type: str
      session_name:
        description: The role session name (CloudTrail shows it). Defaults to C(hyperpod-tenancy).
        type: str
      endpoint_url:
        description: An endpoint for the Identity Center calls. Defaults to the module's O(endpoint_url).
        type: str
"""
