# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""IAM Identity Center lookups every identity-aware module makes: the instance, a group's and a user's id."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import IdentityCenterErrorHandler
from ansible_collections.hyperpod.tenancy.plugins.module_utils.retry import aws_retry


@IdentityCenterErrorHandler.common_error_handler("list Identity Center instances")
@aws_retry()
def list_instances(sso_admin):
    return sso_admin.get_paginator("list_instances").paginate().build_full_result().get("Instances", [])


@IdentityCenterErrorHandler.list_error_handler("look up the Identity Center group", None)
@aws_retry()
def group_id(identitystore, store_id, display_name):
    """The group's id, or None when the identity store has no group of that display name."""
    return identitystore.get_group_id(
        IdentityStoreId=store_id, AlternateIdentifier={"UniqueAttribute": {"AttributePath": "displayName", "AttributeValue": display_name}}
    )["GroupId"]


@IdentityCenterErrorHandler.list_error_handler("look up the Identity Center user", None)
@aws_retry()
def user_id(identitystore, store_id, user_name):
    """The user's id, or None when the identity store has no user of that name."""
    return identitystore.get_user_id(
        IdentityStoreId=store_id, AlternateIdentifier={"UniqueAttribute": {"AttributePath": "userName", "AttributeValue": user_name}}
    )["UserId"]


@IdentityCenterErrorHandler.common_error_handler("check the Identity Center user's group memberships")
@aws_retry()
def member_of_any(identitystore, store_id, user_id, group_ids):
    """Whether the user is a member of at least one of ``group_ids`` (IsMemberInGroups takes up to 100)."""
    group_ids = sorted(group_ids)
    for start in range(0, len(group_ids), 100):
        results = identitystore.is_member_in_groups(IdentityStoreId=store_id, MemberId={"UserId": user_id}, GroupIds=group_ids[start:start + 100])["Results"]
        if any(r.get("MembershipExists") for r in results):
            return True
    return False
