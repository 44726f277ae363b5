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

from ansible_collections.hyperpod.tenancy.plugins.module_utils import eks, engine
from ansible_collections.hyperpod.tenancy.plugins.module_utils.compare import tag_delta
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


def _configuration(settings):
    return json.dumps(settings["configuration_values"], sort_keys=True)


class AddonManager(engine.Resource):
    """One add-on of one EKS cluster, reconciled by ``engine``."""

    def __init__(self, client, params, check_mode=False, warn=None):
        super(AddonManager, self).__init__(client, params, check_mode, warn, timeout=1200)
        self.cluster_name = params["cluster_name"]
        self.addon_name = params["addon_name"]
        self.label = "EKS add-on %s on cluster %s" % (self.addon_name, self.cluster_name)

    def describe(self):
        return eks.describe_addon(self.client, clusterName=self.cluster_name, addonName=self.addon_name)

    def check(self):
        problems = input_problems(self.params)
        if problems:
            raise InputError(message="%s: %s" % (self.label, "; ".join(problems)))

    # what the engine asks

    def read(self, fresh=False):
        """The add-on once it has left CREATING/UPDATING/DELETING, or None."""
        return wait_for_status(self.describe, self.label, ready=READY + FAILED + (GONE,), timeout=self.timeout, status_key="status")

    def view(self, raw):
        return current_settings(raw)

    def desired(self, raw):
        if raw is None:
            desired = desired_settings(self.params)
            desired["tags"] = dict(self.params.get("tags") or {})
            return desired
        current = current_settings(raw)
        desired = desired_settings(self.params, current)
        if self.params.get("tags") is not None:
            to_set, to_unset = compare_aws_tags(current["tags"], self.params["tags"], purge_tags=self.params.get("purge_tags", True))
            desired["tags"] = dict((k, v) for k, v in current["tags"].items() if k not in to_unset)
            desired["tags"].update(to_set)
        return desired

    def refuse(self, raw, desired):
        if raw["status"] in FAILED:
            issues = "; ".join(i.get("message", "") for i in (raw.get("health") or {}).get("issues") or []) or "no issues reported"
            raise HyperPodError(message="%s is %s (%s); delete it (state=absent) and create it again" % (self.label, raw["status"], issues))
        if raw["status"] == "DEGRADED":
            self.warn("%s is DEGRADED" % self.label)

    def predict(self, raw, desired):
        if raw is None:
            predicted = {"addonName": self.addon_name, "clusterName": self.cluster_name, "status": "ACTIVE"}
            predicted.update(addonVersion=desired["addon_version"], tags=desired["tags"])
            if self.params.get("configuration_values") is not None:
                predicted["configurationValues"] = _configuration(desired)
        else:
            predicted = dict(raw, addonVersion=desired["addon_version"], tags=desired["tags"])
            if desired["configuration_values"] != current_settings(raw)["configuration_values"]:
                predicted["configurationValues"] = _configuration(desired)
        if desired["service_account_role_arn"]:
            predicted["serviceAccountRoleArn"] = desired["service_account_role_arn"]
        return predicted

    def _request(self):
        request = dict(clusterName=self.cluster_name, addonName=self.addon_name)
        if self.params.get("resolve_conflicts"):
            request["resolveConflicts"] = self.params["resolve_conflicts"]
        return request

    def create(self, desired):
        request = self._request()
        if self.params.get("addon_version"):
            request["addonVersion"] = self.params["addon_version"]
        if self.params.get("service_account_role_arn"):
            request["serviceAccountRoleArn"] = self.params["service_account_role_arn"]
        if self.params.get("configuration_values") is not None:
            request["configurationValues"] = _configuration(desired)
        if desired["tags"]:
            request["tags"] = desired["tags"]
        return eks.create_addon(self.client, **request)

    def update(self, raw, desired):
        current = current_settings(raw)
        changed = dict((k, v) for k, v in desired.items() if k != "tags" and v != current[k])
        if changed:
            request = self._request()
            for option, member in (("addon_version", "addonVersion"), ("service_account_role_arn", "serviceAccountRoleArn")):
                if option in changed:
                    request[member] = desired[option]
            if "configuration_values" in changed:
                request["configurationValues"] = _configuration(desired)
            eks.update_addon(self.client, **request)
        to_set, to_unset = tag_delta(current["tags"], desired["tags"])
        if to_unset:
            eks.untag_resource(self.client, resourceArn=raw["addonArn"], tagKeys=to_unset)
        if to_set:
            eks.tag_resource(self.client, resourceArn=raw["addonArn"], tags=to_set)
        return bool(changed)

    def read_back(self, handle, settle):
        if not settle:
            return self.describe()
        return wait_for_status(self.describe, self.label, ready=READY, failed=FAILED, timeout=self.timeout, status_key="status", reason_key="health")

    def delete(self, raw):
        return eks.delete_addon(self.client, clusterName=self.cluster_name, addonName=self.addon_name, preserve=bool(self.params.get("preserve")))

    def wait_gone(self, raw):
        wait_for_status(self.describe, self.label, ready=(GONE,), failed=("DELETE_FAILED",), timeout=self.timeout, status_key="status")

    def result(self, raw):
        return result(raw)

    def prepare(self, state):
        self.check()
        if state == "present" and eks.describe_cluster(self.client, name=self.cluster_name) is None:
            raise InputError(message="EKS cluster %s was not found" % self.cluster_name)
