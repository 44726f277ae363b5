"""The team budget's desired state, validation and normalized view."""

from __future__ import annotations

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import budget
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError


def test_desired_budget_filters_on_the_team_tag():
    wanted, notifications = budget.desired("vision", "hyperpod", "team", 40000.0, [80, 100], [100], ["finops@example.com"])
    assert wanted == {
        "BudgetName": "hyperpod-vision-monthly",
        "BudgetType": "COST",
        "TimeUnit": "MONTHLY",
        "BudgetLimit": {"Amount": "40000", "Unit": "USD"},
        "CostFilters": {"TagKeyValue": ["user:team$vision"]},
    }
    assert sorted(notifications) == [
        ("ACTUAL", "GREATER_THAN", 80.0, "PERCENTAGE"),
        ("ACTUAL", "GREATER_THAN", 100.0, "PERCENTAGE"),
        ("FORECASTED", "GREATER_THAN", 100.0, "PERCENTAGE"),
    ]
    assert notifications[("ACTUAL", "GREATER_THAN", 80.0, "PERCENTAGE")][1] == [{"SubscriptionType": "EMAIL", "Address": "finops@example.com"}]


def test_no_subscribers_means_no_notifications():
    assert budget.desired("vision", "hyperpod", "team", 1, [80], [100], [])[1] == {}


@pytest.mark.parametrize("value, expected", [(40000, "40000"), ("40000.0", "40000"), (1234.5, "1234.5"), ("0.10", "0.1")])
def test_amounts_compare_as_numbers(value, expected):
    assert budget.amount(value) == expected


def test_sns_and_email_subscribers():
    assert budget.subscriber("arn:aws:sns:us-east-1:123456789012:t") == {"SubscriptionType": "SNS", "Address": "arn:aws:sns:us-east-1:123456789012:t"}
    assert budget.subscriber("a@example.com")["SubscriptionType"] == "EMAIL"


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"monthly_usd": None}, "monthly_usd is required"),
        ({"monthly_usd": 0}, "greater than 0"),
        ({"thresholds": [80, 80.0]}, "lists a threshold twice"),
        ({"thresholds": [0]}, "outside"),
        ({"thresholds": list(range(1, 6))}, "at most 5 notifications"),
        ({"notify": ["not-an-address"]}, "not an e-mail address"),
        ({"notify": ["arn:aws:sns:us-east-1:123456789012:a", "arn:aws:sns:us-east-1:123456789012:b"]}, "at most one SNS topic"),
        ({"notify": ["a@example.com", "a@example.com"]}, "twice"),
        ({"team": "Bad_Name"}, "team 'Bad_Name'"),
    ],
)
def test_invalid_input_is_refused_before_any_call(kwargs, fragment):
    args = {"team": "vision", "prefix": "hyperpod", "monthly_usd": 100, "thresholds": [80], "forecast_thresholds": [100], "notify": ["a@example.com"]}
    args.update(kwargs)
    with pytest.raises(InputError) as raised:
        budget.validate(**args)
    assert fragment in raised.value.message


def test_view_ignores_server_fields_and_order():
    wanted, notifications = budget.desired("vision", "hyperpod", "team", 100, [100, 80], [], ["b@example.com", "a@example.com"])
    server = dict(wanted, BudgetLimit={"Amount": "100.0", "Unit": "USD"}, CalculatedSpend={"ActualSpend": {"Amount": "3", "Unit": "USD"}}, LastUpdatedTime=1)
    reordered = dict(reversed(list(notifications.items())))
    assert budget.view(server, reordered, {"team": "vision"}) == budget.view(wanted, notifications, {"team": "vision"})
    assert budget.view(server, notifications, {})["budget_limit"] == {"amount": "100", "unit": "USD"}
