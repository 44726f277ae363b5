# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The IAM Identity Center calls (sso-admin and identitystore) the collection shares, with Identity Center's handler.

The instance, a group's and a user's id are looked up here only: ``instances`` and ``group_ids``
are what every identity-aware module (and ``shared_info`` once per run) asks.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import delete, listing, write
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import IdentityCenterErrorHandler as Handler
from ansible_collections.hyperpod.tenancy.plugins.module_utils.retry import aws_retry

list_instances = listing(Handler, "list Identity Center instances", "list_instances", "Instances", missing_ok=False)
list_application_assignments = listing(Handler, "list application assignments", "list_application_assignments", "ApplicationAssignments")
create_application_assignment = write(Handler, "assign the group to the domain's application", "create_application_assignment")
delete_application_assignment = delete(Handler, "remove a group from the domain's application", "delete_application_assignment")


def instances(sso_admin, instance_arn=None):
    """The account's Identity Center instances (only ``instance_arn``'s when given: ``[]`` if it is not one of them)."""
    return [i for i in list_instances(sso_admin) if not instance_arn or i["InstanceArn"] == instance_arn]


def _id_by(what, operation, attribute, key):
    """A lookup of an id by a unique attribute: ``(identitystore, store_id, value)``, None when nothing has that value."""

    @Handler.list_error_handler(what, None)
    @aws_retry()
    def lookup(identitystore, store_id, value):
        unique = {"UniqueAttribute": {"AttributePath": attribute, "AttributeValue": value}}
        return getattr(identitystore, operation)(IdentityStoreId=store_id, AlternateIdentifier=unique)[key]

    return lookup


# The group's id by its display name, the user's by its user name.
group_id = _id_by("look up the Identity Center group", "get_group_id", "displayName", "GroupId")
user_id = _id_by("look up the Identity Center user", "get_user_id", "userName", "UserId")


def group_ids(identitystore, store_id, names, known=None):
    """({display name: group id}, [names the store has no group of]); ``known`` ids (read once per run) are not looked up."""
    found, missing = {}, []
    for name in names:
        if name in found or name in missing:
            continue
        gid = (known or {}).get(name) or group_id(identitystore, store_id, name)
        if gid is None:
            missing.append(name)
        else:
            found[name] = gid
    return found, missing


@Handler.common_error_handler("list the Identity Center users")
@aws_retry()
def user_names(identitystore, store_id):
    """Every user name of the identity store (ListUsers in pages of 100)."""
    pages = identitystore.get_paginator("list_users").paginate(IdentityStoreId=store_id, PaginationConfig={"PageSize": 100})
    return set(user["UserName"] for page in pages for user in page["Users"])


@Handler.common_error_handler("check the Identity Center user's group memberships")
@aws_retry()
def member_of_any(identitystore, store_id, user, group_ids_):
    """Whether the user (an id) is a member of at least one of ``group_ids_`` (IsMemberInGroups takes up to 100)."""
    group_ids_ = sorted(group_ids_)
    for start in range(0, len(group_ids_), 100):
        results = identitystore.is_member_in_groups(IdentityStoreId=store_id, MemberId={"UserId": user}, GroupIds=group_ids_[start:start + 100])["Results"]
        if any(r.get("MembershipExists") for r in results):
            return True
    return False
