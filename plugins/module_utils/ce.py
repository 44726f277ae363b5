# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The Cost Explorer calls (cost-allocation tag activation, the chargeback's costs), one wrapper per call (``calls.py``), with the cost handler.

Each takes the boto3 client and the operation's own keyword arguments and returns the response less
its metadata. Cost Explorer answers LimitExceededException when called too often: retried as throttling.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import read, write
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import CostErrorHandler as Handler

RETRY = ("LimitExceededException",)

# One page (the caller follows NextToken: the tag keys are asked in batches of the filter's size).
list_cost_allocation_tags = read(Handler, "list cost allocation tags", "list_cost_allocation_tags", missing_ok=False, retry_codes=RETRY)
update_cost_allocation_tags_status = write(Handler, "update cost allocation tags status", "update_cost_allocation_tags_status", retry_codes=RETRY)

# One page of GetCostAndUsage, retried on its own: a throttled page does not ask the pages before it again.
get_cost_and_usage = read(Handler, "get cost and usage", "get_cost_and_usage", missing_ok=False, retry_codes=RETRY)


def results_by_time(client, request):
    """The ``ResultsByTime`` of every page of GetCostAndUsage for ``request``, followed by ``NextPageToken``."""
    results, request = [], dict(request)
    while True:
        page = get_cost_and_usage(client, **request)
        results.extend(page.get("ResultsByTime") or [])
        if not page.get("NextPageToken"):
            return results
        request["NextPageToken"] = page["NextPageToken"]
