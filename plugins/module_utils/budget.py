# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""A team's monthly cost budget (AWS Budgets), filtered on the team's cost-allocation tag.

The budget is named ``naming.budget_name(team, prefix)``, tracks the monthly
unblended cost of resources tagged ``<team tag key>=<team>``
(``CostFilters: {"TagKeyValue": ["user:team$<team>"]}``) and has one notification
per threshold: actual cost and forecasted cost, in percent of the limit, each sent
to the same subscribers (e-mail addresses and at most one SNS topic).
Changes are made in place: UpdateBudget for the limit and filter,
Create/DeleteNotification for thresholds, Create/DeleteSubscriber for subscribers.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from decimal import Decimal, InvalidOperation

from ansible_collections.amazon.aws.plugins.module_utils.tagging import compare_aws_tags

from ansible_collections.hyperpod.tenancy.plugins.module_utils import budgets, engine, naming
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import NAME_PREFIX, REQUIRED, STATE, TAGS, known_value, options, team_section
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import result

# AWS Budgets: "A budget can have up to five notifications, and each notification can have one SNS subscriber and up to
# 10 email subscribers" (CreateBudget, AWS Budgets API Reference; NotificationWithSubscribers: "for a total of 11
# subscribers"). The Notification data type says "up to ten notifications" and the model's list takes 10: the five
# CreateBudget states is kept, the lower of the two. The sandbox (sandbox/services/budgets_ext.py) holds the same.
MAX_NOTIFICATIONS = 5
MAX_EMAIL_SUBSCRIBERS = 10
# A notification's threshold, a percentage of the limit here (ThresholdType PERCENTAGE): "The maximum limit for your
# threshold is 1,000,000% above the budgeted amount" (Notification, AWS Budgets API Reference). botocore's model allows
# up to 15,000,000,000,000, the bound of an ABSOLUTE_VALUE threshold too, which the collection never sends. The one
# bound of the collection: the team file (team_model) and the module check it; the sandbox's double agrees.
MAX_THRESHOLD = 1000000
SNS_ARN = re.compile("^%s$" % naming.SNS_TOPIC_ARN_PATTERN)
EMAIL = re.compile("^%s$" % naming.EMAIL_PATTERN)
# Fields Budgets sets itself, never a reason for a change.
SERVER_FIELDS = ("CalculatedSpend", "LastUpdatedTime", "HealthStatus")
# What view compares of a budget: the part of DescribeBudgets' answer kept for a run.
COMPARED_FIELDS = ("BudgetName", "BudgetType", "TimeUnit", "BudgetLimit", "CostFilters")


def budget_arn(account_id, name):
    return "arn:aws:budgets::%s:budget/%s" % (account_id, name)


def tag_filter(team, tag_key="team"):
    """The Budgets cost filter for costs tagged ``tag_key=team`` (a user-defined tag)."""
    return {"TagKeyValue": ["user:%s$%s" % (tag_key, team)]}


def amount(value):
    """A money amount as Budgets writes it, normalized so 40000, 40000.0 and '40000.00' compare equal."""
    number = Decimal(str(value))
    text = format(number.normalize(), "f")
    return text


def subscriber(address):
    kind = "SNS" if address.startswith("arn:") else "EMAIL"
    return {"SubscriptionType": kind, "Address": address}


def notification(kind, threshold):
    return {"NotificationType": kind, "ComparisonOperator": "GREATER_THAN", "Threshold": float(threshold), "ThresholdType": "PERCENTAGE"}


def notification_key(details):
    return (details["NotificationType"], details["ComparisonOperator"], float(details["Threshold"]), details.get("ThresholdType", "PERCENTAGE"))


def validate(team, prefix, monthly_usd, thresholds, forecast_thresholds, notify):
    """Every reason AWS would refuse the budget, before any call."""
    problems = ["team %r: %s" % (team, p) for p in naming.name_problems(team, prefix)]
    if monthly_usd is None:
        problems.append("monthly_usd is required when state is present")
    else:
        try:
            if Decimal(str(monthly_usd)) <= 0:
                problems.append("monthly_usd must be greater than 0 (got %s)" % monthly_usd)
        except InvalidOperation:
            problems.append("monthly_usd must be a number (got %r)" % (monthly_usd,))
    for name, values in (("thresholds", thresholds), ("forecast_thresholds", forecast_thresholds)):
        for value in values:
            if not 0 < float(value) <= MAX_THRESHOLD:
                problems.append("%s: %s is outside 0 < percent <= %s" % (name, value, "{:,}".format(MAX_THRESHOLD)))
        if len(set(float(v) for v in values)) != len(values):
            problems.append("%s: %s lists a threshold twice" % (name, list(values)))
    problems.extend(limit_problems(thresholds, forecast_thresholds, notify))
    for address in notify:
        if address.startswith("arn:") and not SNS_ARN.match(address):
            problems.append("notify: %r is not an SNS topic ARN" % address)
        if not address.startswith("arn:") and not EMAIL.match(address):
            problems.append("notify: %r is not an e-mail address" % address)
    if len(set(notify)) != len(notify):
        problems.append("notify lists an address twice")
    if problems:
        raise InputError(message="team_budget: " + "; ".join(problems))


def limit_problems(thresholds, forecast_thresholds, notify):
    """Where a budget passes AWS's notification and subscriber limits (``desired`` makes a notification per threshold,
    each to every ``notify`` address, and none without one), for this module and the team file alike."""
    problems = []
    if notify and len(thresholds) + len(forecast_thresholds) > MAX_NOTIFICATIONS:
        problems.append("a budget has at most %d notifications (thresholds + forecast_thresholds)" % MAX_NOTIFICATIONS)
    sns = [a for a in notify if a.startswith("arn:")]
    if len(sns) > 1 or len(notify) - len(sns) > MAX_EMAIL_SUBSCRIBERS:
        problems.append("notify: a notification has at most one SNS topic and %d e-mail addresses" % MAX_EMAIL_SUBSCRIBERS)
    return problems


def desired(team, prefix, tag_key, monthly_usd, thresholds, forecast_thresholds, notify):
    """(budget, {notification key: (details, [subscribers])}) as AWS should hold them."""
    budget = {
        "BudgetName": naming.budget_name(team, prefix),
        "BudgetType": "COST",
        "TimeUnit": "MONTHLY",
        "BudgetLimit": {"Amount": amount(monthly_usd), "Unit": "USD"},
        "CostFilters": tag_filter(team, tag_key),
    }
    notifications = {}
    if notify:
        subscribers = [subscriber(a) for a in notify]
        for kind, values in (("ACTUAL", thresholds), ("FORECASTED", forecast_thresholds)):
            for value in values:
                details = notification(kind, value)
                notifications[notification_key(details)] = (details, subscribers)
    return budget, notifications


def list_account_budgets(client, account_id):
    """{budget name: {budget, notifications}} of every budget of the account, from two account-wide lists.

    ``budget`` keeps what ``view`` compares; a budget without notifications has ``[]``.
    """
    found = dict(
        (budget["BudgetName"], {"budget": dict((k, budget[k]) for k in COMPARED_FIELDS if k in budget), "notifications": []})
        for budget in budgets.describe_budgets(client, AccountId=account_id)
    )
    for listed in budgets.describe_budget_notifications_for_account(client, AccountId=account_id):
        if listed["BudgetName"] in found:
            found[listed["BudgetName"]]["notifications"] = listed.get("Notifications") or []
    return found


# --- reading and comparing ----------------------------------------------------


def read(client, account_id, name, known=None):
    """The budget with its notifications, subscribers and tags, or None.

    ``known`` (the budget and its notifications as list_account_budgets read them earlier in the
    run; ``budget`` null when it did not exist) spares describing them, and its ``tags``, when given, reading them.
    """
    if known is None:
        budget = budgets.describe_budget(client, AccountId=account_id, BudgetName=name)
        listed = budgets.describe_notifications_for_budget(client, AccountId=account_id, BudgetName=name) if budget else []
    else:
        budget, listed = known.get("budget"), known.get("notifications") or []
    if budget is None:
        return None
    notifications = {}
    for details in listed:
        plain = dict((k, v) for k, v in details.items() if k != "NotificationState")
        notifications[notification_key(plain)] = (
            plain, budgets.describe_subscribers_for_notification(client, AccountId=account_id, BudgetName=name, Notification=plain)
        )
    tags = (known or {}).get("tags")
    if tags is None:
        tags = budgets.list_tags(client, budget_arn(account_id, name))
    return {"budget": budget, "notifications": notifications, "tags": tags or {}}


def owner_problem(team, name, account_id, tags, tag_keys=None, adopt=False):
    """Why the team's budget ``name`` (with ``tags``) must not be changed for ``team``; None when it may.

    The rule is naming.ownership_problem's; this layer's check and shared_info's check of every team before the
    run's first write both ask here.
    """
    return naming.ownership_problem("budget %s (account %s)" % (name, account_id), team, tags, tag_keys, adopt, "budget")


def view(budget, notifications, tags):
    """The comparable, snake_case view of a budget (what ``diff`` and the module return)."""
    if budget is None:
        return {}
    limit = budget.get("BudgetLimit") or {}
    return {
        "budget_name": budget["BudgetName"],
        "budget_type": budget.get("BudgetType"),
        "time_unit": budget.get("TimeUnit"),
        "budget_limit": {"amount": amount(limit["Amount"]) if limit.get("Amount") else None, "unit": limit.get("Unit")},
        "cost_filters": dict((k, sorted(v)) for k, v in (budget.get("CostFilters") or {}).items()),
        "notifications": sorted(
            (
                {
                    "notification_type": key[0],
                    "comparison_operator": key[1],
                    "threshold": key[2],
                    "threshold_type": key[3],
                    "subscribers": sorted(
                        ({"subscription_type": s["SubscriptionType"], "address": s["Address"]} for s in subs),
                        key=lambda s: (s["subscription_type"], s["address"]),
                    ),
                }
                for key, (_details, subs) in notifications.items()
            ),
            key=lambda n: (n["notification_type"], n["threshold"]),
        ),
        "tags": dict(tags),
    }


def _new_budget(current, wanted):
    """UpdateBudget's NewBudget: the current budget with our fields, nothing the user did not set dropped."""
    new = dict((k, v) for k, v in current.items() if k not in SERVER_FIELDS)
    new.update(wanted)
    return new


def _create_budget(client, account_id, wanted_budget, wanted_notifications, wanted_tags):
    """CreateBudget with its notifications, their subscribers and the tags, in one call."""
    budgets.create_budget(
        client,
        AccountId=account_id,
        Budget=wanted_budget,
        NotificationsWithSubscribers=[{"Notification": d, "Subscribers": s} for d, s in wanted_notifications.values()],
        ResourceTags=budgets.tag_list(wanted_tags),
    )


def _update_subscribers(client, ids, current_notification, details, subscribers):
    """Make the notification ``current_notification`` ((details, subscribers) as read) send to ``subscribers``."""
    current_details, current_subs = current_notification
    existing = [(s["SubscriptionType"], s["Address"]) for s in current_subs]
    wanted = [(s["SubscriptionType"], s["Address"]) for s in subscribers]
    if not set(existing) & set(wanted):
        # Nothing of the notification's subscribers stays: replace the notification.
        budgets.delete_notification(client, Notification=current_details, **ids)
        budgets.create_notification(client, Notification=details, Subscribers=subscribers, **ids)
        return
    # Add first: a notification must keep at least one subscriber. An SNS topic
    # replacing another is removed first (one SNS subscriber per notification).
    for kind, address in existing:
        if (kind, address) not in wanted and kind == "SNS":
            budgets.delete_subscriber(client, Notification=current_details, Subscriber=subscriber(address), **ids)
    for kind, address in wanted:
        if (kind, address) not in existing:
            budgets.create_subscriber(client, Notification=current_details, Subscriber=subscriber(address), **ids)
    for kind, address in existing:
        if (kind, address) not in wanted and kind != "SNS":
            budgets.delete_subscriber(client, Notification=current_details, Subscriber=subscriber(address), **ids)


def _update_notifications(client, ids, have, wanted_notifications):
    """Delete the notifications of ``have`` (read's) not wanted, then create or update each wanted one."""
    for key in set(have) - set(wanted_notifications):
        budgets.delete_notification(client, Notification=have[key][0], **ids)
    for key, (details, subscribers) in wanted_notifications.items():
        if key not in have:
            budgets.create_notification(client, Notification=details, Subscribers=subscribers, **ids)
        else:
            _update_subscribers(client, ids, have[key], details, subscribers)


def _update_existing(client, account_id, current, before, after, wanted_budget, wanted_notifications, tags_to_set, tags_to_remove):
    """The writes that take the existing budget ``current`` (read's) to ``after``, in order: budget, notifications, tags."""
    name = wanted_budget["BudgetName"]
    arn = budget_arn(account_id, name)
    ids = {"AccountId": account_id, "BudgetName": name}
    budget_fields = ("budget_type", "time_unit", "budget_limit", "cost_filters")
    if any(before[f] != after[f] for f in budget_fields):
        budgets.update_budget(client, AccountId=account_id, NewBudget=_new_budget(current["budget"], wanted_budget))
    _update_notifications(client, ids, current["notifications"], wanted_notifications)
    if tags_to_remove:
        budgets.untag_resource(client, ResourceARN=arn, ResourceTagKeys=tags_to_remove)
    if tags_to_set:
        budgets.tag_resource(client, arn, tags_to_set)


class Budget(engine.Resource):
    """The team's budget as the engine converges it: ``raw`` is read's (the budget, its notifications with their
    subscribers, its tags), and what a write makes is known without reading it back (Budgets' writes take effect at once).

    ``wanted`` is ``desired``'s (budget, notifications), None to delete; ``known`` is read's earlier in the run
    (``list_account_budgets``, shared_info's copy); ``owner(tags)`` refuses a budget that is not the team's.
    """

    label = "budget"

    def __init__(self, client, account_id, name, check_mode, wanted=None, tags=None, purge_tags=False, known=None, owner=None):
        super(Budget, self).__init__(client, {"wait": False}, check_mode)
        self.account_id, self.name, self.known, self.owner = account_id, name, known, owner
        self.wanted_budget, self.wanted_notifications = wanted or (None, None)
        self.wanted_tags, self.purge_tags = tags or {}, purge_tags
        self.planned, self.tag_delta = None, None

    def read(self, fresh=False):
        return read(self.client, self.account_id, self.name, None if fresh else self.known)

    def copied(self, raw):
        # The copy's "missing" too: a budget another run created since is read before this one creates it.
        return self.known is not None

    def owned(self, raw):
        if self.owner is not None:
            self.owner(raw["tags"])

    def view(self, raw):
        return view(raw["budget"], raw["notifications"], raw["tags"])

    def desired(self, raw):
        # Planned once a read: ``planned`` is the budget as it reads once written (the wanted budget over what it holds
        # beyond, the wanted notifications, its tags with the wanted ones); ``tag_delta`` the tag writes to get there.
        if raw is None:
            self.tag_delta = ({}, [])
            self.planned = {"budget": self.wanted_budget, "notifications": self.wanted_notifications, "tags": self.wanted_tags}
        else:
            self.tag_delta = to_set, to_remove = compare_aws_tags(raw["tags"], self.wanted_tags, purge_tags=self.purge_tags)
            tags = dict((k, v) for k, v in raw["tags"].items() if k not in to_remove)
            tags.update(to_set)
            self.planned = {"budget": dict(raw["budget"], **self.wanted_budget), "notifications": self.wanted_notifications, "tags": tags}
        return self.view(self.planned)

    def predict(self, raw, desired):
        return self.planned

    def create(self, desired):
        _create_budget(self.client, self.account_id, self.wanted_budget, self.wanted_notifications, self.wanted_tags)

    def update(self, raw, desired):
        to_set, to_remove = self.tag_delta
        _update_existing(self.client, self.account_id, raw, self.view(raw), desired, self.wanted_budget, self.wanted_notifications, to_set, to_remove)
        return False

    def read_back(self, handle, settle):
        # Budgets' writes take effect at once: the budget reads as planned.
        return self.planned

    def delete(self, raw):
        budgets.delete_budget(self.client, AccountId=self.account_id, BudgetName=self.name)
        return True

    def result(self, raw):
        return self.view(raw)


# The keyword arguments of team_budget's AnsibleAWSModule (and of team_resources' budget).
MODULE_OPTIONS = options(
    dict(
        team=dict(type="str", required=True),
        monthly_usd=dict(type="float"),
        thresholds=dict(type="list", elements="float", default=[80, 100]),
        forecast_thresholds=dict(type="list", elements="float", default=[100]),
        notify=dict(type="list", elements="str", default=[]),
        cost_center=dict(type="str"),
        tag_keys=dict(type="dict", default=dict(naming.DEFAULT_TAG_KEYS), no_log=False),
        account_id=dict(type="str"),
        adopt=dict(type="bool", default=False),
    ),
    STATE, NAME_PREFIX, TAGS,
)
# What shared_info read of the budget earlier in the run (team_resources' ``known``): ``read``'s answer.
KNOWN = dict(
    budget=dict(
        type="dict",
        options=dict(budget=dict(type="dict"), notifications=dict(type="list", elements="dict", default=[]), tags=dict(type="dict", no_log=False)),
    )
)
# The team file's budget section (docs/team-file.md): the module's defaults, but monthly_usd, which a team must give.
TEAM_FILE_SECTION = team_section("budget", MODULE_OPTIONS, ("monthly_usd", "notify", "thresholds", "forecast_thresholds"), monthly_usd=REQUIRED)


def check(params):
    """What can be refused without a call (limit, thresholds, subscribers, names); raises ``InputError``."""
    p = params
    if p["state"] == "present":
        validate(p["team"], p["name_prefix"], p["monthly_usd"], p["thresholds"], p["forecast_thresholds"], p["notify"])


def converge(context, params):
    """The result of team_budget: the budget after the run."""
    p = params
    name = naming.budget_name(p["team"], p["name_prefix"])
    check(p)
    client = context.client("budgets")
    account_id = p["account_id"] or context.account_id()

    def owner(tags, adopt=False):
        problem = owner_problem(p["team"], name, account_id, tags, p["tag_keys"], adopt)
        if problem:
            raise InputError(message=problem)

    if p["state"] == "absent":
        outcome = engine.ensure_absent(Budget(client, account_id, name, context.check_mode, owner=owner), context.check_mode)
    else:
        tag_keys = naming.tag_keys_with_defaults(p["tag_keys"])
        wanted = desired(p["team"], p["name_prefix"], tag_keys["team"], p["monthly_usd"], p["thresholds"], p["forecast_thresholds"], p["notify"])
        tags = naming.team_tags(p["team"], p["cost_center"], tag_keys, p["tags"])
        # Without O(tags) only the team tags are ensured; other tags are left alone.
        resource = Budget(client, account_id, name, context.check_mode, wanted, tags, p["purge_tags"] and p["tags"] is not None, known_value(p, "budget"),
                          owner=lambda tags: owner(tags, p["adopt"]))
        outcome = engine.ensure_present(resource, context.check_mode)
    return result(outcome.changed, outcome.before, outcome.after, budget=outcome.result)
