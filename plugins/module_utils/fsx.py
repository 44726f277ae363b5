# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Every Amazon FSx call the collection makes, one wrapper per call (``calls.py``), with FSx's error handler.

Each takes the boto3 client and the operation's own keyword arguments. Reads give ``None`` (lists:
``[]``) for a missing file system or association.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.amazon.aws.plugins.module_utils.tagging import ansible_dict_to_boto3_tag_list

from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import delete, read, write
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import FsxErrorHandler as Handler
from ansible_collections.hyperpod.tenancy.plugins.module_utils.retry import aws_retry

# DescribeDataRepositoryAssociations' largest page (its MaxResults is 1 to 25).
ASSOCIATION_PAGE = 25

describe_file_systems = read(Handler, "describe the FSx file system", "describe_file_systems", "FileSystems")
create_data_repository_association = write(Handler, "create data repository association", "create_data_repository_association", "Association")
update_data_repository_association = write(Handler, "update data repository association", "update_data_repository_association", "Association")
delete_data_repository_association = delete(Handler, "delete data repository association", "delete_data_repository_association")
_tag_resource = write(Handler, "tag data repository association", "tag_resource")


@Handler.list_error_handler("describe data repository associations", [])
@aws_retry()
def describe_data_repository_associations(client, **request):
    """Every association the request's filters select, every page (botocore has no paginator for it)."""
    found, request = [], dict(request, MaxResults=ASSOCIATION_PAGE)
    while True:
        page = client.describe_data_repository_associations(**request)
        found.extend(page.get("Associations", []))
        if not page.get("NextToken"):
            return found
        request["NextToken"] = page["NextToken"]


def tag_resource(client, arn, tags):
    """Set ``tags`` ({key: value}) on the resource."""
    return _tag_resource(client, ResourceARN=arn, Tags=ansible_dict_to_boto3_tag_list(tags))
