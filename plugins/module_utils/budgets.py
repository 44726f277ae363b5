# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Every AWS Budgets call the collection makes, one wrapper per call (``calls.py``), with the cost handler.

Each takes the boto3 client and the operation's own keyword arguments. ``describe_budget`` gives
``None`` for a missing budget; the lists of one budget raise when the budget is gone. Tags are a
dict both ways (``list_tags`` returns one, ``tag_resource`` takes one).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.amazon.aws.plugins.module_utils.tagging import ansible_dict_to_boto3_tag_list
from ansible_collections.amazon.aws.plugins.module_utils.tagging import boto3_tag_list_to_ansible_dict

from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import listing, read, write
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import CostErrorHandler as Handler

# The account-wide lists every team's run reads once: DescribeBudgets' largest page.
PAGE = 1000

describe_budget = read(Handler, "describe budget", "describe_budget", "Budget")
describe_notifications_for_budget = listing(Handler, "describe budget notifications", "describe_notifications_for_budget", "Notifications", missing_ok=False)
describe_subscribers_for_notification = listing(
    Handler, "describe notification subscribers", "describe_subscribers_for_notification", "Subscribers", missing_ok=False
)
describe_budgets = listing(Handler, "list the account's budgets", "describe_budgets", "Budgets", page_size=PAGE, missing_ok=False)
describe_budget_notifications_for_account = listing(
    Handler,
    "list the account's budget notifications",
    "describe_budget_notifications_for_account",
    "BudgetNotificationsForAccount",
    page_size=PAGE,
    missing_ok=False,
)
create_budget = write(Handler, "create budget", "create_budget")
update_budget = write(Handler, "update budget", "update_budget")
delete_budget = write(Handler, "delete budget", "delete_budget")
create_notification = write(Handler, "create budget notification", "create_notification")
delete_notification = write(Handler, "delete budget notification", "delete_notification")
create_subscriber = write(Handler, "create notification subscriber", "create_subscriber")
delete_subscriber = write(Handler, "delete notification subscriber", "delete_subscriber")
_list_tags = read(Handler, "list budget tags", "list_tags_for_resource")
_tag_resource = write(Handler, "tag budget", "tag_resource")
untag_resource = write(Handler, "untag budget", "untag_resource")


def list_tags(client, arn):
    """{key: value} of the budget's tags, None when the budget is gone."""
    response = _list_tags(client, ResourceARN=arn)
    return None if response is None else boto3_tag_list_to_ansible_dict(response.get("ResourceTags") or [])


def tag_resource(client, arn, tags):
    """Set ``tags`` ({key: value}) on the budget."""
    return _tag_resource(client, ResourceARN=arn, ResourceTags=ansible_dict_to_boto3_tag_list(tags, "Key", "Value"))


def tag_list(tags):
    """``tags`` ({key: value}) as CreateBudget's ResourceTags."""
    return ansible_dict_to_boto3_tag_list(tags, "Key", "Value")
