"""AWS Budgets beyond moto 5.2.5: UpdateBudget, subscribers, tags, and validation.

moto keeps budgets and notifications but has no UpdateBudget, no
Describe/Create/DeleteSubscriber(s), no DescribeBudgetNotificationsForAccount, no paging of
DescribeBudgets, no budget tags (it drops CreateBudget's ``ResourceTags``), validates nothing,
lets a notification be created twice and deletes a notification that does not exist without
complaint. Here:

- every operation validates its request against botocore's model;
- ``AccountId`` must be the caller's account (``AccessDeniedException`` otherwise);
- notifications are identified as AWS identifies them: NotificationType,
  ComparisonOperator, Threshold (as a number) and ThresholdType (default
  ``PERCENTAGE``); a second identical one is a ``DuplicateRecordException``,
  a missing one a ``NotFoundException``;
- a notification has at least one subscriber, at most one SNS and ten e-mail
  subscribers (``InvalidParameterException``; ``CreationLimitExceededException`` for one more);
  a budget at most five notifications (``CreationLimitExceededException`` for a sixth);
- a PERCENTAGE threshold is at most 1,000,000 (``InvalidParameterException``), the collection's bound too;
- tags live under ``arn:aws:budgets::<account>:budget/<name>`` and go with the budget.
"""

from __future__ import annotations

import json

import moto.budgets.models
import moto.budgets.responses
from moto.core.utils import unix_time

from sandbox.core import AwsError, forwarded, graft, page, state, validate_request

# "A budget can have up to five notifications, and each notification can have one SNS subscriber and up to 10 email
# subscribers" (CreateBudget, AWS Budgets API Reference). The Notification data type says "up to ten notifications" and
# the model's list takes 10: the sandbox holds the five CreateBudget states, the lower (an assumption where the pages differ).
MAX_NOTIFICATIONS = 5
MAX_EMAIL_SUBSCRIBERS = 10
# A PERCENTAGE threshold: "The maximum limit for your threshold is 1,000,000% above the budgeted amount" (Notification,
# AWS Budgets API Reference); botocore's model bounds any threshold at 15,000,000,000,000 (an ABSOLUTE_VALUE one too).
MAX_PERCENTAGE_THRESHOLD = 1_000_000


def _notification(details: dict) -> dict:
    normalized = dict(details)
    normalized.setdefault("ThresholdType", "PERCENTAGE")
    normalized["Threshold"] = float(normalized["Threshold"])
    normalized.pop("NotificationState", None)
    return normalized


def _same(a: dict, b: dict) -> bool:
    keys = ("NotificationType", "ComparisonOperator", "Threshold", "ThresholdType")
    a, b = _notification(a), _notification(b)
    return all(a.get(k) == b.get(k) for k in keys)


def _check_threshold(details: dict) -> None:
    normalized = _notification(details)
    if normalized["ThresholdType"] == "PERCENTAGE" and normalized["Threshold"] > MAX_PERCENTAGE_THRESHOLD:
        raise AwsError("InvalidParameterException", "The threshold of a PERCENTAGE notification is at most %d%%." % MAX_PERCENTAGE_THRESHOLD)


def _check_subscribers(subscribers: list[dict]) -> None:
    sns = [s for s in subscribers if s["SubscriptionType"] == "SNS"]
    email = [s for s in subscribers if s["SubscriptionType"] == "EMAIL"]
    if not subscribers:
        raise AwsError("InvalidParameterException", "A notification must have at least one subscriber.")
    if len(sns) > 1 or len(email) > MAX_EMAIL_SUBSCRIBERS:
        raise AwsError("InvalidParameterException", "A notification can have one SNS subscriber and up to 10 email subscribers.")
    seen = set()
    for subscriber in subscribers:
        key = (subscriber["SubscriptionType"], subscriber["Address"])
        if key in seen:
            raise AwsError("InvalidParameterException", "Duplicate subscriber: %s %s" % key)
        seen.add(key)
        if subscriber["SubscriptionType"] == "SNS" and not subscriber["Address"].startswith("arn:"):
            raise AwsError("InvalidParameterException", "Invalid SNS topic ARN: %s" % subscriber["Address"])
        if subscriber["SubscriptionType"] == "EMAIL" and "@" not in subscriber["Address"]:
            raise AwsError("InvalidParameterException", "Invalid email address: %s" % subscriber["Address"])


def _check_budget(budget: dict) -> None:
    if budget.get("BudgetType") in ("COST", "USAGE") and "BudgetLimit" not in budget and "PlannedBudgetLimits" not in budget:
        raise AwsError(
            "InvalidParameterException",
            "Unable to create/update budget - please provide one of the followings: Budget Limit/ Planned Budget Limit/ Auto Adjust Data",
        )
    if "BudgetLimit" in budget and "PlannedBudgetLimits" in budget:
        raise AwsError("InvalidParameterException", "BudgetLimit and PlannedBudgetLimits cannot be used together.")


class BudgetsExtBackend:
    def _budget(self, account_id: str, name: str, action: str):
        budget = self.budgets[account_id].get(name)
        if budget is None:
            raise AwsError("NotFoundException", "Unable to %s: %s - the budget doesn't exist." % (action, name))
        return budget

    def _find_notification(self, budget, details: dict):
        for notification in budget.notifications:
            if _same(notification.details, details):
                return notification
        return None

    def _arn(self, account_id: str, name: str) -> str:
        return "arn:aws:budgets::%s:budget/%s" % (account_id, name)

    def ext_create_budget(self, account_id: str, budget: dict, notifications: list[dict], tags: list[dict]) -> None:
        _check_budget(budget)
        if len(notifications) > MAX_NOTIFICATIONS:
            raise AwsError("InvalidParameterException", "A budget can have at most %d notifications." % MAX_NOTIFICATIONS)
        normalized = []
        for item in notifications:
            _check_threshold(item["Notification"])
            _check_subscribers(item["Subscribers"])
            if any(_same(item["Notification"], other["Notification"]) for other in normalized):
                raise AwsError("DuplicateRecordException", "Duplicate notification in the request.")
            normalized.append({"Notification": _notification(item["Notification"]), "Subscribers": [dict(s) for s in item["Subscribers"]]})
        self.create_budget(account_id=account_id, budget=budget, notifications=normalized)
        state(self, "budget_tags")[self._arn(account_id, budget["BudgetName"])] = {t["Key"]: t["Value"] for t in tags}

    def update_budget(self, account_id: str, new_budget: dict) -> None:
        budget = self._budget(account_id, new_budget["BudgetName"], "update budget")
        _check_budget(new_budget)
        if new_budget["BudgetType"] != budget.budget["BudgetType"]:
            raise AwsError("InvalidParameterException", "The budget type can't be changed.")
        updated = {k: v for k, v in new_budget.items() if k not in ("CalculatedSpend", "LastUpdatedTime")}
        updated.setdefault("TimePeriod", budget.budget["TimePeriod"])
        updated["LastUpdatedTime"] = unix_time()
        budget.budget = updated

    def ext_delete_budget(self, account_id: str, name: str) -> None:
        self._budget(account_id, name, "delete budget")
        self.delete_budget(account_id=account_id, budget_name=name)
        state(self, "budget_tags").pop(self._arn(account_id, name), None)

    def ext_create_notification(self, account_id: str, name: str, details: dict, subscribers: list[dict]) -> None:
        budget = self._budget(account_id, name, "create notification")
        _check_threshold(details)
        _check_subscribers(subscribers)
        if self._find_notification(budget, details):
            raise AwsError("DuplicateRecordException", "Error creating notification: %s - the notification already exists." % name)
        if len(budget.notifications) >= MAX_NOTIFICATIONS:
            raise AwsError("CreationLimitExceededException", "A budget can have at most %d notifications." % MAX_NOTIFICATIONS)
        budget.add_notification(_notification(details), [dict(s) for s in subscribers])

    def ext_delete_notification(self, account_id: str, name: str, details: dict) -> None:
        budget = self._budget(account_id, name, "delete notification")
        found = self._find_notification(budget, details)
        if found is None:
            raise AwsError("NotFoundException", "Unable to delete notification - the notification doesn't exist.")
        budget.notifications = [n for n in budget.notifications if n is not found]

    def ext_describe_notifications(self, account_id: str, name: str) -> list[dict]:
        budget = self._budget(account_id, name, "describe notifications")
        return [dict(_notification(n.details), NotificationState="OK") for n in budget.notifications]

    def _notification_of(self, account_id: str, name: str, details: dict, action: str):
        budget = self._budget(account_id, name, action)
        found = self._find_notification(budget, details)
        if found is None:
            raise AwsError("NotFoundException", "Unable to %s - the notification doesn't exist." % action)
        return found

    def describe_subscribers_for_notification(self, account_id: str, name: str, details: dict) -> list[dict]:
        return [dict(s) for s in self._notification_of(account_id, name, details, "describe subscribers").subscribers]

    def create_subscriber(self, account_id: str, name: str, details: dict, subscriber: dict) -> None:
        notification = self._notification_of(account_id, name, details, "create subscriber")
        if subscriber in notification.subscribers:
            raise AwsError("DuplicateRecordException", "Error creating subscriber: %s - the subscriber already exists." % subscriber["Address"])
        candidate = notification.subscribers + [dict(subscriber)]
        try:
            _check_subscribers(candidate)
        except AwsError as error:
            if "one SNS subscriber" in error.message:
                raise AwsError("CreationLimitExceededException", error.message) from None
            raise
        notification.subscribers = candidate

    def delete_subscriber(self, account_id: str, name: str, details: dict, subscriber: dict) -> None:
        notification = self._notification_of(account_id, name, details, "delete subscriber")
        if subscriber not in notification.subscribers:
            raise AwsError("NotFoundException", "Unable to delete subscriber - the subscriber doesn't exist.")
        if len(notification.subscribers) == 1:
            raise AwsError("InvalidParameterException", "A notification must have at least one subscriber; delete the notification instead.")
        notification.subscribers = [s for s in notification.subscribers if s != subscriber]

    def _tags_of(self, arn: str) -> dict:
        tags = state(self, "budget_tags")
        if arn not in tags:
            raise AwsError("NotFoundException", "Resource not found: %s" % arn)
        return tags[arn]


class BudgetsExtResponse:
    def _params(self, operation: str) -> dict:
        params = json.loads(self.body or "{}")
        validate_request("budgets", operation, params)
        if "AccountId" in params and params["AccountId"] != self.current_account:
            raise AwsError("AccessDeniedException", "You are not authorized to access account %s." % params["AccountId"])
        return params

    def _forward(self, operation: str, method: str, *members: str, answer: str | None = None) -> str:
        """The request's ``members``, in order, to the backend's ``method``; its result under ``answer``, else an empty answer."""
        return forwarded(getattr(self.backend, method), self._params(operation), members, answer)

    def create_budget(self) -> str:
        params = self._params("CreateBudget")
        self.backend.ext_create_budget(
            params["AccountId"], params["Budget"], params.get("NotificationsWithSubscribers") or [], params.get("ResourceTags") or []
        )
        return "{}"

    def update_budget(self) -> str:
        return self._forward("UpdateBudget", "update_budget", "AccountId", "NewBudget")

    def describe_budget(self) -> str:
        params = self._params("DescribeBudget")
        return json.dumps({"Budget": self.backend.describe_budget(account_id=params["AccountId"], budget_name=params["BudgetName"])})

    def _paged(self, key: str, items: list, params: dict, default_limit: int) -> str:
        refuse = lambda: AwsError("InvalidNextTokenException", "The nextToken provided is not valid")
        found, token = page(items, params.get("MaxResults"), params.get("NextToken"), refuse, default_limit)
        return json.dumps(dict({key: found}, **({"NextToken": token} if token else {})))

    def describe_budgets(self) -> str:
        params = self._params("DescribeBudgets")
        budgets = sorted(self.backend.describe_budgets(account_id=params["AccountId"]), key=lambda b: b["BudgetName"])
        return self._paged("Budgets", budgets, params, 100)

    def describe_budget_notifications_for_account(self) -> str:
        params = self._params("DescribeBudgetNotificationsForAccount")
        names = sorted(self.backend.budgets[params["AccountId"]])
        listed = [{"BudgetName": name, "Notifications": self.backend.ext_describe_notifications(params["AccountId"], name)} for name in names]
        return self._paged("BudgetNotificationsForAccount", [item for item in listed if item["Notifications"]], params, 50)

    def delete_budget(self) -> str:
        return self._forward("DeleteBudget", "ext_delete_budget", "AccountId", "BudgetName")

    def create_notification(self) -> str:
        return self._forward("CreateNotification", "ext_create_notification", "AccountId", "BudgetName", "Notification", "Subscribers")

    def delete_notification(self) -> str:
        return self._forward("DeleteNotification", "ext_delete_notification", "AccountId", "BudgetName", "Notification")

    def describe_notifications_for_budget(self) -> str:
        return self._forward("DescribeNotificationsForBudget", "ext_describe_notifications", "AccountId", "BudgetName", answer="Notifications")

    def describe_subscribers_for_notification(self) -> str:
        members = ("AccountId", "BudgetName", "Notification")
        return self._forward("DescribeSubscribersForNotification", "describe_subscribers_for_notification", *members, answer="Subscribers")

    def create_subscriber(self) -> str:
        return self._forward("CreateSubscriber", "create_subscriber", "AccountId", "BudgetName", "Notification", "Subscriber")

    def delete_subscriber(self) -> str:
        return self._forward("DeleteSubscriber", "delete_subscriber", "AccountId", "BudgetName", "Notification", "Subscriber")

    def list_tags_for_resource(self) -> str:
        params = self._params("ListTagsForResource")
        tags = self.backend._tags_of(params["ResourceARN"])
        return json.dumps({"ResourceTags": [{"Key": k, "Value": v} for k, v in sorted(tags.items())]})

    def tag_resource(self) -> str:
        params = self._params("TagResource")
        tags = self.backend._tags_of(params["ResourceARN"])
        tags.update({t["Key"]: t["Value"] for t in params["ResourceTags"]})
        return "{}"

    def untag_resource(self) -> str:
        params = self._params("UntagResource")
        tags = self.backend._tags_of(params["ResourceARN"])
        for key in params["ResourceTagKeys"]:
            tags.pop(key, None)
        return "{}"


def install() -> None:
    graft(moto.budgets.models.BudgetsBackend, BudgetsExtBackend)
    graft(moto.budgets.responses.BudgetsResponse, BudgetsExtResponse)
