# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The IAM Identity Center calls (sso-admin and identitystore) the collection shares, with Identity Center's handler.

The instance, a group's and a user's id are looked up here only: ``instances`` and ``group_ids``
are what every identity-aware module (and ``shared_info`` once per run) asks.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.hyperpod.tenancy.plugins.module_utils import sts
from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import delete, each, listing, read, write
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import IdentityCenterErrorHandler as Handler
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.retry import aws_retry, conflict_backoff

list_instances = listing(Handler, "list Identity Center instances", "list_instances", "Instances", missing_ok=False)
list_application_assignments = listing(Handler, "list application assignments", "list_application_assignments", "ApplicationAssignments")
create_application_assignment = write(Handler, "assign the group to the domain's application", "create_application_assignment")
delete_application_assignment = delete(Handler, "remove a group from the domain's application", "delete_application_assignment")


# ---------------------------------------------------------------- permission sets (sso-admin)
# Reads of a permission set's parts follow its DescribePermissionSet: a missing one raises there.

list_permission_sets = listing(Handler, "list permission sets", "list_permission_sets", "PermissionSets", missing_ok=False)
describe_permission_set = read(Handler, "describe the permission set", "describe_permission_set", "PermissionSet")
get_inline_policy_for_permission_set = read(
    Handler, "read the permission set's inline policy", "get_inline_policy_for_permission_set", missing_ok=False
)
list_managed_policies_in_permission_set = listing(
    Handler, "list the permission set's managed policies", "list_managed_policies_in_permission_set", "AttachedManagedPolicies",
    missing_ok=False,
)
list_customer_managed_policy_references_in_permission_set = listing(
    Handler, "list the permission set's customer managed policies", "list_customer_managed_policy_references_in_permission_set",
    "CustomerManagedPolicyReferences", missing_ok=False,
)
get_permissions_boundary_for_permission_set = read(
    Handler, "read the permission set's permissions boundary", "get_permissions_boundary_for_permission_set", "PermissionsBoundary"
)
list_tags_for_resource = listing(Handler, "list the permission set's tags", "list_tags_for_resource", "Tags", missing_ok=False)
list_accounts_for_provisioned_permission_set = listing(
    Handler, "list the accounts the permission set is provisioned to", "list_accounts_for_provisioned_permission_set", "AccountIds",
    missing_ok=False,
)
list_permission_sets_provisioned_to_account = listing(
    Handler, "list the permission sets provisioned to the account", "list_permission_sets_provisioned_to_account", "PermissionSets",
    missing_ok=False,
)
list_account_assignments = listing(
    Handler, "list the permission set's account assignments", "list_account_assignments", "AccountAssignments", missing_ok=False
)
create_permission_set = write(Handler, "create the permission set", "create_permission_set", "PermissionSet")
update_permission_set = write(Handler, "update the permission set", "update_permission_set")
delete_permission_set = write(Handler, "delete the permission set", "delete_permission_set")
put_inline_policy_to_permission_set = write(Handler, "put the permission set's inline policy", "put_inline_policy_to_permission_set")
delete_inline_policy_from_permission_set = write(Handler, "delete the permission set's inline policy", "delete_inline_policy_from_permission_set")
attach_managed_policy_to_permission_set = write(Handler, "attach a managed policy", "attach_managed_policy_to_permission_set")
detach_managed_policy_from_permission_set = write(Handler, "detach a managed policy", "detach_managed_policy_from_permission_set")
attach_customer_managed_policy_reference_to_permission_set = write(
    Handler, "attach a customer managed policy", "attach_customer_managed_policy_reference_to_permission_set"
)
detach_customer_managed_policy_reference_from_permission_set = write(
    Handler, "detach a customer managed policy", "detach_customer_managed_policy_reference_from_permission_set"
)
put_permissions_boundary_to_permission_set = write(Handler, "put the permissions boundary", "put_permissions_boundary_to_permission_set")
delete_permissions_boundary_from_permission_set = write(Handler, "delete the permissions boundary", "delete_permissions_boundary_from_permission_set")
tag_resource = write(Handler, "tag the permission set", "tag_resource")
untag_resource = write(Handler, "untag the permission set", "untag_resource")
# The asynchronous writes: ConflictException is retried with backoff (retry.conflict_backoff), as botocore's model
# recommends and as Identity Center's limits on requests in flight answer (in_flight.py keeps a run within them).
provision_permission_set = write(
    Handler, "provision the permission set", "provision_permission_set", "PermissionSetProvisioningStatus", backoff=conflict_backoff()
)
describe_permission_set_provisioning_status = read(
    Handler, "read the provisioning status", "describe_permission_set_provisioning_status", "PermissionSetProvisioningStatus", missing_ok=False
)
create_account_assignment = write(
    Handler, "create an account assignment", "create_account_assignment", "AccountAssignmentCreationStatus", backoff=conflict_backoff()
)
delete_account_assignment = write(
    Handler, "delete an account assignment", "delete_account_assignment", "AccountAssignmentDeletionStatus", backoff=conflict_backoff()
)
describe_account_assignment_creation_status = read(
    Handler, "read an account assignment's status", "describe_account_assignment_creation_status", "AccountAssignmentCreationStatus",
    missing_ok=False,
)
describe_account_assignment_deletion_status = read(
    Handler, "read an account assignment's status", "describe_account_assignment_deletion_status", "AccountAssignmentDeletionStatus",
    missing_ok=False,
)


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
    names = list(dict.fromkeys(names))
    gids = each(lambda name: (known or {}).get(name) or group_id(identitystore, store_id, name), names)
    found = dict((name, gid) for name, gid in zip(names, gids) if gid is not None)
    return found, [name for name, gid in zip(names, gids) if gid is None]


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


# ---------------------------------------------------------------- the Identity Center connection

# The services whose calls go through the Identity Center connection (LayerContext.client).
SERVICES = ("sso-admin", "identitystore")
SETTING = "hyperpod_identity_center"
DEFAULT_SESSION_NAME = "hyperpod-tenancy"


def connection_problems(settings):
    """What is wrong with ``hyperpod_identity_center`` (the module option ``identity_center``): ``[(field, message)]``."""
    if settings is None:
        return []
    if not isinstance(settings, dict):
        return [(SETTING, "must be a mapping, got %s" % type(settings).__name__)]
    problems = []
    for key in sorted(set(settings) - set(CONNECTION_KEYS), key=str):
        problems.append(("%s.%s" % (SETTING, key), "unknown key; allowed: %s" % ", ".join(CONNECTION_KEYS)))
    for key in CONNECTION_KEYS:
        value = settings.get(key)
        if value is not None and not isinstance(value, str):
            problems.append(("%s.%s" % (SETTING, key), "must be text, got %s" % type(value).__name__))
    for key, pattern, what in CONNECTION_PATTERNS:
        value = settings.get(key)
        if isinstance(value, str) and value and not re.fullmatch(pattern, value):
            # The external id is kept out of every message, as out of the logs (no_log).
            shown = "the value" if key == "external_id" else repr(value)
            problems.append(("%s.%s" % (SETTING, key), "%s is not %s" % (shown, what)))
    for key in ("external_id", "session_name"):
        if settings.get(key) and not settings.get("assume_role_arn"):
            problems.append(("%s.%s" % (SETTING, key), "needs %s.assume_role_arn" % SETTING))
    return problems


# STS AssumeRole's patterns (botocore's sts model: roleSessionNameType, externalIdType) and the ARN of an IAM role.
CONNECTION_KEYS = ("region", "profile", "assume_role_arn", "external_id", "session_name", "endpoint_url")
CONNECTION_PATTERNS = (
    ("region", r"[a-z]{2}(-[a-z]+)+-\d", "an AWS Region name (such as us-east-1)"),
    ("assume_role_arn", r"arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]{1,512}", "an IAM role ARN (arn:aws:iam::<account>:role/<name>)"),
    ("external_id", r"[\w+=,.@:/-]{2,1224}", "an external id (2 to 1224 of letters, digits and +=,.@:/-)"),
    ("session_name", r"[\w+=,.@-]{2,64}", "a role session name (2 to 64 of letters, digits and +=,.@-)"),
    ("endpoint_url", r"https?://\S+", "an http(s) URL"),
)


def connection(module):
    """The keyword arguments ``module.client`` takes for an Identity Center client (``{}``: the module's own connection).

    ``identity_center`` (``hyperpod_identity_center``) names where Identity Center's admin APIs answer: the
    organization's management account or a delegated administrator account, in the instance's home Region
    ("Delegated administration", IAM Identity Center User Guide). ``profile`` replaces the module's credentials;
    ``assume_role_arn`` is assumed through STS with the module's own connection (its credentials, or ``profile``'s
    when both are given), ``external_id`` and ``session_name`` as AssumeRole takes them. The temporary
    credentials stay in this process: they are never returned.
    """
    settings = dict((k, v) for k, v in ((getattr(module, "params", None) or {}).get("identity_center") or {}).items() if v)
    if not settings:
        return {}
    problems = connection_problems(settings)
    if problems:
        raise InputError(message="identity_center: %s" % "; ".join("%s: %s" % problem for problem in problems))
    extra = {}
    if settings.get("region"):
        extra["region"] = settings["region"]
    if settings.get("endpoint_url"):
        extra["endpoint"] = settings["endpoint_url"]
    if settings.get("profile"):
        extra.update(profile_name=settings["profile"], aws_access_key_id=None, aws_secret_access_key=None, aws_session_token=None)
    if settings.get("assume_role_arn"):
        request = dict(RoleArn=settings["assume_role_arn"], RoleSessionName=settings.get("session_name") or DEFAULT_SESSION_NAME)
        if settings.get("external_id"):
            request["ExternalId"] = settings["external_id"]
        source = dict((k, extra[k]) for k in ("profile_name", "aws_access_key_id", "aws_secret_access_key", "aws_session_token") if k in extra)
        credentials = sts.identity_center_assume_role(module.client("sts", **source), **request)
        extra.update(
            profile_name=None,
            aws_access_key_id=credentials["AccessKeyId"],
            aws_secret_access_key=credentials["SecretAccessKey"],
            aws_session_token=credentials["SessionToken"],
        )
    return extra


def caller_account(client):
    return sts.identity_center_caller(client)["Account"]


def connection_place(context):
    """Where the Identity Center calls of ``context`` (a LayerContext) go, for a message: account, Region and the setting."""
    extra = context.identity_center_connection()
    sts_client = context.module.client("sts", **dict((k, v) for k, v in extra.items() if k != "endpoint"))
    region = extra.get("region") or context.region
    how = "set by %s" % SETTING if extra else "%s unset: the workload account's own connection" % SETTING
    return "account %s, Region %s (%s)" % (caller_account(sts_client), region, how)


def instance_problem(context, instance_arn, found):
    """The error when ListInstances does not give the one instance the run needs, naming where it asked and the setting."""
    place = connection_place(context)
    if instance_arn:
        return "Identity Center instance %s is not visible in %s: set %s to the account and Region of that instance" % (instance_arn, place, SETTING)
    if not found:
        # ListInstances answers an empty list in an account that neither holds nor sees an instance, and in any other Region.
        return (
            "No IAM Identity Center instance in %s: Identity Center's admin APIs answer in the organization's management account "
            "or a delegated administrator account, in the instance's home Region; set %s (region, and profile or assume_role_arn) there"
            % (place, SETTING)
        )
    arns = ", ".join(i["InstanceArn"] for i in found)
    return "Found %d Identity Center instances in %s (%s); set identity_center_instance_arn" % (len(found), place, arns)
