# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Every SageMaker call the collection makes, one wrapper per call (``calls.py``), with SageMaker's error handler.

Each takes the boto3 client and the operation's own keyword arguments. Reads give ``None`` (lists:
``[]``) for a missing resource; a response comes back without its ``ResponseMetadata``. Tags are a
dict both ways (``list_tags`` returns one, ``add_tags`` takes one).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.amazon.aws.plugins.module_utils.tagging import ansible_dict_to_boto3_tag_list
from ansible_collections.amazon.aws.plugins.module_utils.tagging import boto3_tag_list_to_ansible_dict

from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import crud, delete, listing, read, write
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import SageMakerErrorHandler as Handler
from ansible_collections.hyperpod.tenancy.plugins.module_utils.retry import aws_retry

# Where every team lists the same collection: the API's largest page, not its default of 10.
PAGE = 100


def is_conflict(error):
    """True for a ConflictException (a stale TargetVersion, or a write while the resource transitions)."""
    response = getattr(getattr(error, "exception", None), "response", None) or {}
    return response.get("Error", {}).get("Code") == "ConflictException"


# ---------------------------------------------------------------- tags (every SageMaker resource)


_list_tags = listing(Handler, "list SageMaker tags", "list_tags", "Tags")


def list_tags(client, arn):
    """{key: value} of the resource's tags (every page)."""
    return boto3_tag_list_to_ansible_dict(_list_tags(client, ResourceArn=arn))


@Handler.common_error_handler("tag SageMaker resource")
@aws_retry()
def add_tags(client, arn, tags):
    """Set ``tags`` ({key: value}) on the resource."""
    client.add_tags(ResourceArn=arn, Tags=ansible_dict_to_boto3_tag_list(tags))


@Handler.common_error_handler("untag SageMaker resource")
@aws_retry()
def delete_tags(client, arn, keys):
    client.delete_tags(ResourceArn=arn, TagKeys=list(keys))


def tag_list(tags):
    """``tags`` ({key: value}) as the Tags member of a create request."""
    return ansible_dict_to_boto3_tag_list(tags)


# ---------------------------------------------------------------- HyperPod clusters

describe_cluster = read(Handler, "describe cluster", "describe_cluster")
create_cluster = write(Handler, "create cluster", "create_cluster", "ClusterArn")
update_cluster = write(Handler, "update cluster", "update_cluster", "ClusterArn")
delete_cluster = write(Handler, "delete cluster", "delete_cluster")

# ---------------------------------------------------------------- Task Governance

list_compute_quotas, describe_compute_quota, create_compute_quota, update_compute_quota, delete_compute_quota = crud(
    Handler, "compute quota", "compute_quota", "ComputeQuotaSummaries", page_size=PAGE
)
(
    list_cluster_scheduler_configs,
    describe_cluster_scheduler_config,
    create_cluster_scheduler_config,
    update_cluster_scheduler_config,
    delete_cluster_scheduler_config,
) = crud(Handler, "cluster scheduler config", "cluster_scheduler_config", "ClusterSchedulerConfigSummaries")

# ---------------------------------------------------------------- Studio

list_domains, describe_domain, create_domain, update_domain, delete_domain = crud(Handler, "domain", "domain", "Domains", page_size=PAGE)
list_user_profiles, describe_user_profile, create_user_profile, update_user_profile, delete_user_profile = crud(
    Handler, "user profile", "user_profile", "UserProfiles", page_size=PAGE
)

list_spaces = listing(Handler, "list spaces", "list_spaces", "Spaces", page_size=PAGE)
describe_space = read(Handler, "describe space", "describe_space")
delete_space = delete(Handler, "delete space", "delete_space")

list_apps = listing(Handler, "list apps", "list_apps", "Apps", page_size=PAGE)
delete_app = delete(Handler, "delete app", "delete_app")
