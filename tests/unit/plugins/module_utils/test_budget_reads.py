"""What team_budget reads, against the sandbox, when shared_info listed the account's budgets earlier in the run."""

from __future__ import annotations

from ansible_collections.hyperpod.tenancy.plugins.module_utils import budget, engine

ACCOUNT = "123456789012"
TAGS = {"team": "vision"}


def wanted(monthly_usd=100):
    return budget.desired("vision", "hyperpod", "team", monthly_usd, [80, 100], [100], ["finops@example.com"])


def converge(client, check_mode, monthly_usd=100, known=None, owner=None):
    """(changed, before, after)."""
    resource = budget.Budget(client, ACCOUNT, "hyperpod-vision-monthly", check_mode, wanted(monthly_usd), TAGS, False, known, owner)
    return engine.ensure_present(resource, check_mode)[:3]


def operations(sandbox):
    return [r["operation"] for r in sandbox.requests()]


def test_a_listed_budget_is_not_described_again(sandbox):
    client = sandbox.boto3_client("budgets")
    absent = budget.list_account_budgets(client, ACCOUNT).get("hyperpod-vision-monthly")
    assert absent is None
    assert converge(client, False, known={"budget": None, "notifications": []})[0] is True
    sandbox.clear_requests()

    known = budget.list_account_budgets(client, ACCOUNT)["hyperpod-vision-monthly"]
    assert operations(sandbox) == ["DescribeBudgets", "DescribeBudgetNotificationsForAccount"]
    assert len(known["notifications"]) == 3
    sandbox.clear_requests()
    changed, before, after = converge(client, True, known=known)
    assert not changed and before == after and len(after["notifications"]) == 3
    # Subscribers and tags are still read; the budget and its notifications are not.
    assert sorted(set(operations(sandbox))) == ["DescribeSubscribersForNotification", "ListTagsForResource"]


def test_a_change_from_a_listed_budget_keeps_what_the_list_left_out(sandbox):
    client = sandbox.boto3_client("budgets")
    converge(client, False)
    whole = client.describe_budget(AccountId=ACCOUNT, BudgetName="hyperpod-vision-monthly")["Budget"]
    # Set by hand, and not compared: UpdateBudget would drop it if the module sent only what it compares.
    whole["CostTypes"] = {"IncludeTax": False, "IncludeCredit": False}
    client.update_budget(AccountId=ACCOUNT, NewBudget={k: v for k, v in whole.items() if k not in budget.SERVER_FIELDS})
    known = budget.list_account_budgets(client, ACCOUNT)["hyperpod-vision-monthly"]
    assert "CostTypes" not in known["budget"]

    changed, before, after = converge(client, False, monthly_usd=250, known=known)
    assert changed and after["budget_limit"]["amount"] == budget.amount(250)
    updated = client.describe_budget(AccountId=ACCOUNT, BudgetName="hyperpod-vision-monthly")["Budget"]
    assert budget.amount(updated["BudgetLimit"]["Amount"]) == budget.amount(250)
    assert updated["CostTypes"] == whole["CostTypes"] and updated["TimePeriod"] == whole["TimePeriod"]
    assert converge(client, True, monthly_usd=250)[0] is False


def test_a_budget_listed_as_missing_but_created_since_is_read_again_not_created_twice(sandbox):
    client = sandbox.boto3_client("budgets")
    converge(client, False)
    sandbox.clear_requests()
    # In check mode the list is the answer; a real run reads again before it writes.
    assert converge(client, True, known={"budget": None, "notifications": []})[0] is True
    changed, before, after = converge(client, False, known={"budget": None, "notifications": []})
    assert not changed and before == after
    assert "CreateBudget" not in operations(sandbox) and "DescribeBudget" in operations(sandbox)


def test_tags_read_earlier_in_the_run_are_not_read_again_and_decide_the_owner(sandbox):
    client = sandbox.boto3_client("budgets")
    converge(client, False)
    known = dict(budget.list_account_budgets(client, ACCOUNT)["hyperpod-vision-monthly"], tags=dict(TAGS))
    sandbox.clear_requests()
    changed, before, unused_after = converge(client, True, known=known)
    assert not changed and before["tags"] == TAGS
    assert "ListTagsForResource" not in operations(sandbox)
    # The owner check sees the tags it is given; the layer's and shared_info's check are one rule.
    refused = []
    converge(client, True, known=dict(known, tags={"owner": "finops"}), owner=refused.append)
    assert refused == [{"owner": "finops"}] and "ListTagsForResource" not in operations(sandbox)
    problem = budget.owner_problem("vision", "hyperpod-vision-monthly", ACCOUNT, {"owner": "finops"}, None, False)
    assert problem.startswith("budget hyperpod-vision-monthly (account %s) exists and was not made by hyperpod.tenancy for team vision" % ACCOUNT)
    assert budget.owner_problem("vision", "hyperpod-vision-monthly", ACCOUNT, {"owner": "finops"}, None, True) is None
