# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""An Amazon EKS add-on (Task Governance's ``amazon-sagemaker-hyperpod-taskgovernance`` among them).

``configuration_values`` is compared as data: AWS stores the string it was given (JSON or
YAML), so ``{"a": 1}`` and ``a: 1`` are the same configuration. The pure functions are
unit-tested without AWS; ``AddonManager`` drives a boto3 EKS client.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import re

from ansible.module_utils.common.dict_transformations import camel_dict_to_snake_dict
from ansible_collections.amazon.aws.plugins.module_utils.tagging import compare_aws_tags

from ansible_collections.hyperpod.tenancy.plugins.module_utils import eks
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError, InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.waiters import GONE, wait_for_status

TRANSITIONAL = ("CREATING", "UPDATING", "DELETING")
READY = ("ACTIVE", "DEGRADED")
FAILED = ("CREATE_FAILED", "UPDATE_FAILED", "DELETE_FAILED")
ROLE_ARN = r"arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]+"
CLUSTER_NAME = r"[0-9A-Za-z][A-Za-z0-9\-_]*"


def parse_configuration(value):
    """A configurationValues string as data ({} when empty); raises ValueError when it is neither JSON nor YAML."""
    if not value:
        return {}
    try:
        return json.loads(value)
    except ValueError:
        import yaml

        try:
            return yaml.safe_load(value)
        except yaml.YAMLError as error:
            raise ValueError(str(error))


def input_problems(params):
    problems = []
    if not re.fullmatch(CLUSTER_NAME, params["cluster_name"] or "") or len(params["cluster_name"]) > 100:
        problems.append("cluster_name: %r is not an EKS cluster name" % params["cluster_name"])
    if params.get("state", "present") != "present":
        return problems
    role = params.get("service_account_role_arn")
    if role is not None and not re.fullmatch(ROLE_ARN, role):
        problems.append("service_account_role_arn: %r is not an IAM role ARN" % role)
    tags = params.get("tags")
    if tags is not None and len(tags) > 50:
        problems.append("tags: at most 50 tags, got %d" % len(tags))
    return problems


def current_settings(addon):
    """The members of a described add-on this module manages; configuration as data."""
    if not addon:
        return None
    return {
        "addon_version": addon.get("addonVersion"),
        "service_account_role_arn": addon.get("serviceAccountRoleArn"),
        "configuration_values": parse_configuration(addon.get("configurationValues")),
        "tags": dict(addon.get("tags") or {}),
    }


def desired_settings(params, current=None):
    """``params`` over ``current``; an option left unset keeps its current value."""
    settings = copy.deepcopy(current) if current else {"addon_version": None, "service_account_role_arn": None, "configuration_values": {}, "tags": {}}
    for option in ("addon_version", "service_account_role_arn", "configuration_values"):
        if params.get(option) is not None:
            settings[option] = copy.deepcopy(params[option])
    return settings


def result(addon):
    if not addon:
        return {}
    addon = dict((k, v) for k, v in addon.items() if k != "ResponseMetadata")
    return camel_dict_to_snake_dict(addon, ignore_list=["tags"])


# ---------------------------------------------------------------- the resource


class AddonManager:
    def __init__(self, client, params, check_mode=False, warn=None):
        self.client = client
        self.params = params
        self.check_mode = check_mode
        self.warn = warn or (lambda message: None)
        self.cluster_name = params["cluster_name"]
        self.addon_name = params["addon_name"]
        self.timeout = params.get("wait_timeout") or 1200
        self.label = "EKS add-on %s on cluster %s" % (self.addon_name, self.cluster_name)

    def describe(self):
        return eks.describe_addon(self.client, clusterName=self.cluster_name, addonName=self.addon_name)

    def settle(self):
        """The add-on once it has left CREATING/UPDATING/DELETING, or None."""
        return wait_for_status(self.describe, self.label, ready=READY + FAILED + (GONE,), timeout=self.timeout, status_key="status")

    def wait(self, ready):
        if not self.params.get("wait", True):
            return self.describe()
        return wait_for_status(self.describe, self.label, ready=ready, failed=FAILED, timeout=self.timeout, status_key="status", reason_key="health")

    def check(self):
        problems = input_problems(self.params)
        if problems:
            raise InputError(message="%s: %s" % (self.label, "; ".join(problems)))

    # present

    def ensure_present(self):
        self.check()
        if eks.describe_cluster(self.client, name=self.cluster_name) is None:
            raise InputError(message="EKS cluster %s was not found" % self.cluster_name)
        addon = self.settle()
        if addon is not None and addon["status"] in FAILED:
            issues = "; ".join(i.get("message", "") for i in (addon.get("health") or {}).get("issues") or []) or "no issues reported"
            raise HyperPodError(message="%s is %s (%s); delete it (state=absent) and create it again" % (self.label, addon["status"], issues))
        if addon is None:
            return self._create()
        return self._update(addon)

    def _create(self):
        desired = desired_settings(self.params)
        if self.params.get("tags"):
            desired["tags"] = dict(self.params["tags"])
        if self.check_mode:
            predicted = {
                "addonName": self.addon_name,
                "clusterName": self.cluster_name,
                "status": "ACTIVE",
                "addonVersion": desired["addon_version"],
                "tags": desired["tags"],
            }
            if desired["service_account_role_arn"]:
                predicted["serviceAccountRoleArn"] = desired["service_account_role_arn"]
            if self.params.get("configuration_values") is not None:
                predicted["configurationValues"] = json.dumps(desired["configuration_values"], sort_keys=True)
            return True, {}, desired, result(predicted)
        request = dict(clusterName=self.cluster_name, addonName=self.addon_name)
        if self.params.get("addon_version"):
            request["addonVersion"] = self.params["addon_version"]
        if self.params.get("service_account_role_arn"):
            request["serviceAccountRoleArn"] = self.params["service_account_role_arn"]
        if self.params.get("configuration_values") is not None:
            request["configurationValues"] = json.dumps(self.params["configuration_values"], sort_keys=True)
        if self.params.get("resolve_conflicts"):
            request["resolveConflicts"] = self.params["resolve_conflicts"]
        if self.params.get("tags"):
            request["tags"] = dict(self.params["tags"])
        eks.create_addon(self.client, **request)
        addon = self.wait(READY)
        return True, {}, current_settings(addon), result(addon)

    def _update(self, addon):
        if addon["status"] == "DEGRADED":
            self.warn("%s is DEGRADED" % self.label)
        current = current_settings(addon)
        desired = desired_settings(self.params, current)
        to_set, to_unset = {}, []
        if self.params.get("tags") is not None:
            to_set, to_unset = compare_aws_tags(current["tags"], self.params["tags"], purge_tags=self.params.get("purge_tags", True))
        desired["tags"] = dict((k, v) for k, v in current["tags"].items() if k not in to_unset)
        desired["tags"].update(to_set)
        settings_change = dict((k, v) for k, v in desired.items() if k != "tags") != dict((k, v) for k, v in current.items() if k != "tags")
        if not settings_change and not to_set and not to_unset:
            return False, current, current, result(addon)
        if self.check_mode:
            predicted = dict(addon, addonVersion=desired["addon_version"], tags=desired["tags"])
            if desired["service_account_role_arn"]:
                predicted["serviceAccountRoleArn"] = desired["service_account_role_arn"]
            if desired["configuration_values"] != current["configuration_values"]:
                predicted["configurationValues"] = json.dumps(desired["configuration_values"], sort_keys=True)
            return True, current, desired, result(predicted)
        if settings_change:
            request = dict(clusterName=self.cluster_name, addonName=self.addon_name)
            if desired["addon_version"] != current["addon_version"]:
                request["addonVersion"] = desired["addon_version"]
            if desired["service_account_role_arn"] != current["service_account_role_arn"]:
                request["serviceAccountRoleArn"] = desired["service_account_role_arn"]
            if desired["configuration_values"] != current["configuration_values"]:
                request["configurationValues"] = json.dumps(desired["configuration_values"], sort_keys=True)
            if self.params.get("resolve_conflicts"):
                request["resolveConflicts"] = self.params["resolve_conflicts"]
            eks.update_addon(self.client, **request)
        if to_unset:
            eks.untag_resource(self.client, resourceArn=addon["addonArn"], tagKeys=list(to_unset))
        if to_set:
            eks.tag_resource(self.client, resourceArn=addon["addonArn"], tags=to_set)
        addon = self.wait(READY) if settings_change else self.describe()
        return True, current, current_settings(addon), result(addon)

    # absent

    def ensure_absent(self):
        self.check()
        addon = self.settle()
        if addon is None:
            return False, {}, {}, {}
        before = current_settings(addon)
        if self.check_mode:
            return True, before, {}, {}
        eks.delete_addon(self.client, clusterName=self.cluster_name, addonName=self.addon_name, preserve=bool(self.params.get("preserve")))
        if self.params.get("wait", True):
            wait_for_status(self.describe, self.label, ready=(GONE,), failed=("DELETE_FAILED",), timeout=self.timeout, status_key="status")
        return True, before, {}, {}
