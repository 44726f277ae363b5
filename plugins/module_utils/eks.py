# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Every Amazon EKS call the collection makes, one wrapper per call (``calls.py``), with EKS's error handler.

Each takes the boto3 client and the operation's own keyword arguments and returns the resource
under the response's key (``describe_cluster`` the cluster, ``describe_addon`` the add-on, ...);
``None`` for a missing one.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import delete, listing, read, write
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import EksErrorHandler as Handler

describe_cluster = read(Handler, "describe the EKS cluster", "describe_cluster", "cluster")

describe_addon = read(Handler, "describe EKS add-on", "describe_addon", "addon")
create_addon = write(Handler, "create EKS add-on", "create_addon", "addon")
update_addon = write(Handler, "update EKS add-on", "update_addon", "update")
delete_addon = delete(Handler, "delete EKS add-on", "delete_addon")

list_access_entries = listing(Handler, "list the access entries", "list_access_entries", "accessEntries", missing_ok=False)
describe_access_entry = read(Handler, "describe the access entry", "describe_access_entry", "accessEntry")
create_access_entry = write(Handler, "create the access entry", "create_access_entry", "accessEntry")
update_access_entry = write(Handler, "update the access entry", "update_access_entry", "accessEntry")
delete_access_entry = write(Handler, "delete the access entry", "delete_access_entry")
list_associated_access_policies = listing(
    Handler, "list the associated access policies", "list_associated_access_policies", "associatedAccessPolicies", missing_ok=False
)
associate_access_policy = write(Handler, "associate the access policy", "associate_access_policy")
disassociate_access_policy = write(Handler, "disassociate the access policy", "disassociate_access_policy")

# What the Region offers, for preflight: the add-on versions for a Kubernetes version, and the access policies.
describe_addon_versions = listing(Handler, "describe the EKS add-on versions", "describe_addon_versions", "addons", missing_ok=False)
list_access_policies = listing(Handler, "list the EKS access policies", "list_access_policies", "accessPolicies", missing_ok=False)

# Pod Identity: the one association of a namespace's service account (the list filtered to it: one page, [] when the
# cluster is missing); its delete raises on a missing one, as the caller has just described it.
list_pod_identity_associations = read(
    Handler, "list the Pod Identity associations", "list_pod_identity_associations", "associations", default=[]
)
describe_pod_identity_association = read(Handler, "describe the Pod Identity association", "describe_pod_identity_association", "association")
create_pod_identity_association = write(Handler, "create the Pod Identity association", "create_pod_identity_association", "association")
update_pod_identity_association = write(Handler, "update the Pod Identity association", "update_pod_identity_association", "association")
delete_pod_identity_association = write(Handler, "delete the Pod Identity association", "delete_pod_identity_association")

tag_resource = write(Handler, "tag EKS resource", "tag_resource")
untag_resource = write(Handler, "untag EKS resource", "untag_resource")
