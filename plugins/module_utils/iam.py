# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""IAM calls shared by several resources, one wrapper per call (``calls.py``), with IAM's error handler."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import delete, listing, read, write
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import IamErrorHandler as Handler

# Where IAM Identity Center puts the roles it makes for a permission set in each account.
SSO_ROLE_PATH = "/aws-reserved/sso.amazonaws.com/"

list_roles = listing(Handler, "list IAM roles", "list_roles", "Roles", missing_ok=False)

# A role and its policies: IAM answers ConcurrentModification to a write racing another on the same role.
ROLE_RETRY = ("ConcurrentModification",)
get_role = read(Handler, "get role", "get_role", "Role", retry_codes=ROLE_RETRY)
list_role_policies = listing(Handler, "list role inline policies", "list_role_policies", "PolicyNames", retry_codes=ROLE_RETRY)
get_role_policy = read(Handler, "get role inline policy", "get_role_policy", "PolicyDocument", retry_codes=ROLE_RETRY)
list_attached_role_policies = listing(Handler, "list role attached policies", "list_attached_role_policies", "AttachedPolicies", retry_codes=ROLE_RETRY)
list_instance_profiles_for_role = listing(
    Handler, "list instance profiles of role", "list_instance_profiles_for_role", "InstanceProfiles", retry_codes=ROLE_RETRY
)
# The account's roles with their inline policies' documents, attached policies, boundary and tags (RoleDetail): one
# paginated call, 1000 to a page (the most MaxItems allows), instead of five reads per role.
role_details = listing(Handler, "get account authorization details", "get_account_authorization_details", "RoleDetailList", page_size=1000, missing_ok=False)
# The account's IAM entities and their quotas (SummaryMap: Roles, RolesQuota, ...).
get_account_summary = read(Handler, "get account summary", "get_account_summary", "SummaryMap", missing_ok=False)
get_policy = read(Handler, "get policy", "get_policy", "Policy", missing_ok=False)
get_policy_version = read(Handler, "get policy version", "get_policy_version", "PolicyVersion", missing_ok=False)
create_role = write(Handler, "create role", "create_role", "Role", retry_codes=ROLE_RETRY)
update_assume_role_policy = write(Handler, "update role trust policy", "update_assume_role_policy", retry_codes=ROLE_RETRY)
update_role = write(Handler, "update role description", "update_role", retry_codes=ROLE_RETRY)
put_role_policy = write(Handler, "put role inline policy", "put_role_policy", retry_codes=ROLE_RETRY)
delete_role_policy = delete(Handler, "delete role inline policy", "delete_role_policy", retry_codes=ROLE_RETRY)
detach_role_policy = delete(Handler, "detach role policy", "detach_role_policy", retry_codes=ROLE_RETRY)
tag_role = write(Handler, "tag role", "tag_role", retry_codes=ROLE_RETRY)
untag_role = write(Handler, "untag role", "untag_role", retry_codes=ROLE_RETRY)
delete_role = delete(Handler, "delete role", "delete_role", retry_codes=ROLE_RETRY)

# One page of SimulatePrincipalPolicy, retried on its own: a throttled page does not ask the pages before it again. A
# principal that does not exist (NoSuchEntity) raises: a simulation of nobody answers nothing about isolation.
_simulate_principal_policy_page = read(Handler, "simulate principal policy", "simulate_principal_policy", missing_ok=False)


def simulate_principal_policy(client, **request):
    """``(evaluation_results, pages)``: the ``EvaluationResults`` of every page of SimulatePrincipalPolicy, and how many
    pages (calls, retries aside) IAM answered them in.

    Paged by ``Marker`` while ``IsTruncated``: "IAM might return fewer than the MaxItems number of results even when
    there are more results available. We recommend that you check IsTruncated after every call" (SimulatePrincipalPolicy,
    IAM API Reference). ``calls.listing`` would hide the page count, and retry the whole pagination on a throttled page.
    """
    results, pages = [], 0
    page = {"IsTruncated": True}
    while page.get("IsTruncated"):
        if page.get("Marker"):
            request = dict(request, Marker=page["Marker"])
        page = _simulate_principal_policy_page(client, **request)
        pages += 1
        results.extend(page.get("EvaluationResults") or [])
    return results, pages


def sso_roles(client):
    """The roles Identity Center made in this account (``AWSReservedSSO_<permission set>_<hash>``)."""
    return list_roles(client, PathPrefix=SSO_ROLE_PATH)
