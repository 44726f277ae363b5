# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""IAM calls shared by several resources, one wrapper per call (``calls.py``), with IAM's error handler."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import listing
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import IamErrorHandler as Handler

# Where IAM Identity Center puts the roles it makes for a permission set in each account.
SSO_ROLE_PATH = "/aws-reserved/sso.amazonaws.com/"

list_roles = listing(Handler, "list IAM roles", "list_roles", "Roles", missing_ok=False)


def sso_roles(client):
    """The roles Identity Center made in this account (``AWSReservedSSO_<permission set>_<hash>``)."""
    return list_roles(client, PathPrefix=SSO_ROLE_PATH)
