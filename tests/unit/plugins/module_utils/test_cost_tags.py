"""What cost_allocation_tag sends, from what Cost Explorer lists."""

from __future__ import annotations

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import cost_tags

KNOWN = {
    "team": {"TagKey": "team", "Type": "UserDefined", "Status": "Inactive"},
    "cost-center": {"TagKey": "cost-center", "Type": "UserDefined", "Status": "Active"},
}


@pytest.mark.parametrize(
    "keys, state, entries, pending",
    [
        (["team", "cost-center"], "active", [{"TagKey": "team", "Status": "Active"}], []),
        (["team", "cost-center"], "inactive", [{"TagKey": "cost-center", "Status": "Inactive"}], []),
        (["team", "unseen"], "active", [{"TagKey": "team", "Status": "Active"}], ["unseen"]),
        (["unseen"], "inactive", [], []),
    ],
)
def test_plan_sends_only_what_changes_and_holds_back_unseen_keys(keys, state, entries, pending):
    planned, held = cost_tags.plan(KNOWN, keys, state)
    assert planned == entries
    assert [p["tag_key"] for p in held] == pending
    assert all("has not seen" in p["reason"] for p in held)


def test_batches_follow_the_api_limits():
    assert [len(c) for c in cost_tags._chunks(list(range(45)), cost_tags.UPDATE_BATCH)] == [20, 20, 5]
