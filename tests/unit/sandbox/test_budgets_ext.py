"""Budgets in the sandbox beyond moto: UpdateBudget, subscribers, tags, validation."""

from __future__ import annotations

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import budget

from sandbox.services import budgets_ext

ACCOUNT = "123456789012"
ACTUAL_80 = {"NotificationType": "ACTUAL", "ComparisonOperator": "GREATER_THAN", "Threshold": 80, "ThresholdType": "PERCENTAGE"}
EMAIL = {"SubscriptionType": "EMAIL", "Address": "finops@example.com"}


def _budget(limit="100"):
    return {
        "BudgetName": "hyperpod-vision-monthly",
        "BudgetType": "COST",
        "TimeUnit": "MONTHLY",
        "BudgetLimit": {"Amount": limit, "Unit": "USD"},
        "CostFilters": {"TagKeyValue": ["user:team$vision"]},
    }


@pytest.fixture
def budgets(sandbox):
    client = sandbox.boto3_client("budgets")
    client.create_budget(
        AccountId=ACCOUNT,
        Budget=_budget(),
        NotificationsWithSubscribers=[{"Notification": ACTUAL_80, "Subscribers": [EMAIL]}],
        ResourceTags=[{"Key": "team", "Value": "vision"}],
    )
    return client


def test_update_budget_changes_the_limit_in_place(budgets):
    budgets.update_budget(AccountId=ACCOUNT, NewBudget=_budget("250"))
    budget = budgets.describe_budget(AccountId=ACCOUNT, BudgetName="hyperpod-vision-monthly")["Budget"]
    assert budget["BudgetLimit"] == {"Amount": "250", "Unit": "USD"}
    assert budget["CostFilters"] == {"TagKeyValue": ["user:team$vision"]}


def test_update_of_a_missing_budget_is_not_found(budgets):
    with pytest.raises(budgets.exceptions.NotFoundException):
        budgets.update_budget(AccountId=ACCOUNT, NewBudget=dict(_budget(), BudgetName="other"))


def test_notifications_are_identified_by_their_fields(budgets):
    notifications = budgets.describe_notifications_for_budget(AccountId=ACCOUNT, BudgetName="hyperpod-vision-monthly")["Notifications"]
    assert notifications == [dict(ACTUAL_80, Threshold=80.0, NotificationState="OK")]
    with pytest.raises(budgets.exceptions.DuplicateRecordException):
        budgets.create_notification(AccountId=ACCOUNT, BudgetName="hyperpod-vision-monthly", Notification=dict(ACTUAL_80, Threshold=80.0), Subscribers=[EMAIL])
    missing = dict(ACTUAL_80, Threshold=90)
    with pytest.raises(budgets.exceptions.NotFoundException):
        budgets.delete_notification(AccountId=ACCOUNT, BudgetName="hyperpod-vision-monthly", Notification=missing)


def test_subscribers_round_trip(budgets):
    sns = {"SubscriptionType": "SNS", "Address": "arn:aws:sns:us-east-1:123456789012:finops"}
    kwargs = {"AccountId": ACCOUNT, "BudgetName": "hyperpod-vision-monthly", "Notification": ACTUAL_80}
    budgets.create_subscriber(Subscriber=sns, **kwargs)
    assert budgets.describe_subscribers_for_notification(**kwargs)["Subscribers"] == [EMAIL, sns]
    with pytest.raises(budgets.exceptions.DuplicateRecordException):
        budgets.create_subscriber(Subscriber=sns, **kwargs)
    with pytest.raises(budgets.exceptions.CreationLimitExceededException):
        budgets.create_subscriber(Subscriber={"SubscriptionType": "SNS", "Address": "arn:aws:sns:us-east-1:123456789012:other"}, **kwargs)
    budgets.delete_subscriber(Subscriber=EMAIL, **kwargs)
    assert budgets.describe_subscribers_for_notification(**kwargs)["Subscribers"] == [sns]
    with pytest.raises(budgets.exceptions.InvalidParameterException):
        budgets.delete_subscriber(Subscriber=sns, **kwargs)


def test_tags_live_with_the_budget(budgets):
    arn = "arn:aws:budgets::%s:budget/hyperpod-vision-monthly" % ACCOUNT
    assert budgets.list_tags_for_resource(ResourceARN=arn)["ResourceTags"] == [{"Key": "team", "Value": "vision"}]
    budgets.tag_resource(ResourceARN=arn, ResourceTags=[{"Key": "cost-center", "Value": "CC-1"}])
    budgets.untag_resource(ResourceARN=arn, ResourceTagKeys=["team"])
    assert budgets.list_tags_for_resource(ResourceARN=arn)["ResourceTags"] == [{"Key": "cost-center", "Value": "CC-1"}]
    budgets.delete_budget(AccountId=ACCOUNT, BudgetName="hyperpod-vision-monthly")
    with pytest.raises(budgets.exceptions.NotFoundException):
        budgets.list_tags_for_resource(ResourceARN=arn)


def test_requests_are_validated(budgets):
    with pytest.raises(budgets.exceptions.AccessDeniedException):
        budgets.describe_budget(AccountId="111111111111", BudgetName="hyperpod-vision-monthly")
    with pytest.raises(budgets.exceptions.ClientError) as raised:
        budgets.describe_budget(AccountId=ACCOUNT, BudgetName="bad:name")
    assert raised.value.response["Error"]["Code"] == "ValidationException"
    with pytest.raises(budgets.exceptions.InvalidParameterException):
        budgets.create_budget(AccountId=ACCOUNT, Budget={k: v for k, v in _budget().items() if k != "BudgetLimit"} | {"BudgetName": "x"})
    with pytest.raises(budgets.exceptions.InvalidParameterException):
        budgets.create_notification(
            AccountId=ACCOUNT, BudgetName="hyperpod-vision-monthly", Notification=dict(ACTUAL_80, Threshold=100),
            Subscribers=[{"SubscriptionType": "SNS", "Address": "not-an-arn"}],
        )


def test_the_account_lists_its_budgets_and_their_notifications_in_pages(budgets):
    budgets.create_budget(AccountId=ACCOUNT, Budget=dict(_budget(), BudgetName="hyperpod-nlp-monthly"))
    first = budgets.describe_budgets(AccountId=ACCOUNT, MaxResults=1)
    second = budgets.describe_budgets(AccountId=ACCOUNT, MaxResults=1, NextToken=first["NextToken"])
    assert [b["BudgetName"] for b in first["Budgets"] + second["Budgets"]] == ["hyperpod-nlp-monthly", "hyperpod-vision-monthly"]
    assert "NextToken" not in second
    # A budget without notifications is not listed with them.
    listed = budgets.describe_budget_notifications_for_account(AccountId=ACCOUNT)
    assert listed["BudgetNotificationsForAccount"] == [
        {"BudgetName": "hyperpod-vision-monthly", "Notifications": [dict(ACTUAL_80, Threshold=80.0, NotificationState="OK")]}
    ]
    with pytest.raises(budgets.exceptions.InvalidNextTokenException):
        budgets.describe_budget_notifications_for_account(AccountId=ACCOUNT, NextToken="not-a-token")
    with pytest.raises(budgets.exceptions.AccessDeniedException):
        budgets.describe_budget_notifications_for_account(AccountId="210987654321")


def test_a_sixth_notification_and_an_eleventh_e_mail_subscriber_are_refused(budgets):
    """ "A budget can have up to five notifications, and each notification can have one SNS subscriber and up to 10 email
    subscribers" (CreateBudget, AWS Budgets API Reference), as the collection's team_budget holds them."""
    assert (budgets_ext.MAX_NOTIFICATIONS, budgets_ext.MAX_EMAIL_SUBSCRIBERS) == (budget.MAX_NOTIFICATIONS, budget.MAX_EMAIL_SUBSCRIBERS) == (5, 10)
    name = {"AccountId": ACCOUNT, "BudgetName": "hyperpod-vision-monthly"}
    for threshold in (85, 90, 95, 100):
        budgets.create_notification(Notification=dict(ACTUAL_80, Threshold=threshold), Subscribers=[EMAIL], **name)
    with pytest.raises(budgets.exceptions.CreationLimitExceededException):
        budgets.create_notification(Notification=dict(ACTUAL_80, Threshold=105), Subscribers=[EMAIL], **name)
    assert len(budgets.describe_notifications_for_budget(**name)["Notifications"]) == 5
    kwargs = dict(name, Notification=ACTUAL_80)
    for n in range(1, 10):
        budgets.create_subscriber(Subscriber={"SubscriptionType": "EMAIL", "Address": "finops%d@example.com" % n}, **kwargs)
    budgets.create_subscriber(Subscriber={"SubscriptionType": "SNS", "Address": "arn:aws:sns:us-east-1:123456789012:finops"}, **kwargs)
    with pytest.raises(budgets.exceptions.CreationLimitExceededException):
        budgets.create_subscriber(Subscriber={"SubscriptionType": "EMAIL", "Address": "finops10@example.com"}, **kwargs)
    assert len(budgets.describe_subscribers_for_notification(**kwargs)["Subscribers"]) == 11


def test_a_percentage_threshold_is_at_most_a_million(budgets):
    """"The maximum limit for your threshold is 1,000,000% above the budgeted amount" (Notification, AWS Budgets API Reference)."""
    ids = dict(AccountId=ACCOUNT, BudgetName="hyperpod-vision-monthly", Subscribers=[EMAIL])
    with pytest.raises(budgets.exceptions.InvalidParameterException):
        budgets.create_notification(Notification=dict(ACTUAL_80, Threshold=1000001), **ids)
    budgets.create_notification(Notification=dict(ACTUAL_80, Threshold=1000000), **ids)
    with pytest.raises(budgets.exceptions.InvalidParameterException):
        budgets.create_budget(AccountId=ACCOUNT, Budget=dict(_budget(), BudgetName="other"),
                              NotificationsWithSubscribers=[{"Notification": dict(ACTUAL_80, Threshold=2e6), "Subscribers": [EMAIL]}])
