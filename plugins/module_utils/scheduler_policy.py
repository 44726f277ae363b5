# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The cluster's Task Governance scheduler config ("cluster policy"): options <-> API shape, checks, and the calls.

A HyperPod cluster has at most one scheduler config (AWS refuses a second one with a
ConflictException), so the policy is found by its cluster, not by its name. The pure
functions (``input_problems``, ``desired_config``, ``comparable``) are unit-tested without
AWS; ``SchedulerPolicyManager`` drives a boto3 SageMaker client.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

from ansible_collections.hyperpod.tenancy.plugins.module_utils import engine, naming, sagemaker
from ansible_collections.hyperpod.tenancy.plugins.module_utils.compare import snake
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import ConflictError, InputError, SageMakerError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.waiters import GONE, read_settled, wait_for_status

TASK_GOVERNANCE_ADDON = "amazon-sagemaker-hyperpod-taskgovernance"

TRANSITIONAL = ("Creating", "Updating", "Deleting")
SETTLED = ("Created", "Updated")
CREATE_FAILED = ("CreateFailed", "CreateRollbackFailed")
FAILED = CREATE_FAILED + ("UpdateFailed", "UpdateRollbackFailed", "DeleteFailed", "DeleteRollbackFailed")
DELETED = "Deleted"

# botocore's model: PriorityClassList max 10, ClusterSchedulerPriorityClassName, PriorityWeight 0..100,
# EntityName, EntityDescription. The priority class name is a Kubernetes WorkloadPriorityClass;
# docs/team-file.md (and the model's {0,39} repetition) keep it to 40 characters.
MAX_PRIORITY_CLASSES = 10
PRIORITY_CLASS_NAME = naming.DNS_LABEL_PATTERN
MAX_PRIORITY_CLASS_NAME = 40
WEIGHT_RANGE = (0, 100)
ENTITY_NAME = naming.ENTITY_NAME_PATTERN
MAX_ENTITY_NAME = 63

ENABLED = {True: "Enabled", False: "Disabled"}


def policy_name(cluster_name):
    """The scheduler config's name when the module is not given one."""
    return naming.scheduler_policy_name(cluster_name)


# ---------------------------------------------------------------- input checks (before any call)


def input_problems(params):
    """Everything wrong with the module's options, as sentences; empty when they can be sent."""
    problems = []
    if params.get("name") is not None:
        problems.extend(name_problems(params["name"], "name"))
    if params.get("state", "present") != "present":
        return problems
    classes = params.get("priority_classes")
    if classes is not None:
        if len(classes) > MAX_PRIORITY_CLASSES:
            problems.append("priority_classes: at most %d priority classes, got %d" % (MAX_PRIORITY_CLASSES, len(classes)))
        seen = set()
        for index, item in enumerate(classes):
            label = "priority_classes[%d]" % index
            name = item.get("name")
            if not isinstance(name, str) or not re.fullmatch(PRIORITY_CLASS_NAME, name) or len(name) > MAX_PRIORITY_CLASS_NAME:
                problems.append(
                    "%s.name: %r must be lower-case letters, digits and inner hyphens, at most %d characters (pattern %s)"
                    % (label, name, MAX_PRIORITY_CLASS_NAME, PRIORITY_CLASS_NAME)
                )
            elif name in seen:
                problems.append("%s.name: %s is listed twice" % (label, name))
            seen.add(name)
            weight = item.get("weight")
            if weight is None or not WEIGHT_RANGE[0] <= weight <= WEIGHT_RANGE[1]:
                problems.append("%s.weight: %s is outside %d..%d" % (label, weight, WEIGHT_RANGE[0], WEIGHT_RANGE[1]))
    problems.extend(naming.description_problems(params.get("description")))
    return problems


def name_problems(name, what):
    if len(name) > MAX_ENTITY_NAME or not re.fullmatch(ENTITY_NAME, name):
        return ["%s: %r must be letters, digits and inner hyphens, at most %d characters (pattern %s)" % (what, name, MAX_ENTITY_NAME, ENTITY_NAME)]
    return []


# ---------------------------------------------------------------- options <-> API shape


def _sorted_classes(classes):
    return sorted((dict(c) for c in classes or []), key=lambda c: c["Name"])


def current_settings(config):
    """The members of a described scheduler config that this collection manages."""
    if not config:
        return None
    scheduler = config.get("SchedulerConfig") or {}
    settings = {"SchedulerConfig": {"PriorityClasses": _sorted_classes(scheduler.get("PriorityClasses"))}}
    for member in ("FairShare", "IdleResourceSharing"):
        if scheduler.get(member) is not None:
            settings["SchedulerConfig"][member] = scheduler[member]
    if config.get("Description") is not None:
        settings["Description"] = config["Description"]
    return settings


def desired_settings(params, current=None):
    """``params`` over ``current`` (an option left unset keeps its current value; on a new config it is not sent)."""
    settings = copy.deepcopy(current) if current else {"SchedulerConfig": {"PriorityClasses": []}}
    scheduler = settings["SchedulerConfig"]
    if params.get("priority_classes") is not None:
        scheduler["PriorityClasses"] = _sorted_classes({"Name": c["name"], "Weight": c["weight"]} for c in params["priority_classes"])
    if params.get("fair_share") is not None:
        scheduler["FairShare"] = ENABLED[bool(params["fair_share"])]
    if params.get("idle_resource_sharing") is not None:
        scheduler["IdleResourceSharing"] = ENABLED[bool(params["idle_resource_sharing"])]
    if params.get("description") is not None:
        settings["Description"] = params["description"]
    return settings


def comparable(settings, name=None, cluster_arn=None):
    """``settings`` as shown in ``diff``: snake_case, nothing the server manages."""
    if not settings:
        return {}
    result = snake(settings)
    if name:
        result["name"] = name
    if cluster_arn:
        result["cluster_arn"] = cluster_arn
    return result


# ---------------------------------------------------------------- API helpers


def update_config(client, **request):
    """UpdateClusterSchedulerConfig; a stale TargetVersion is a ConflictError."""
    try:
        return sagemaker.update_cluster_scheduler_config(client, **request)
    except SageMakerError as e:
        if sagemaker.is_conflict(e):
            raise ConflictError(
                message="cluster scheduler config %s changed while it was being updated" % request["ClusterSchedulerConfigId"], exception=e.exception
            )
        raise


# ---------------------------------------------------------------- the resource


class SchedulerPolicyManager(engine.Resource):
    """The scheduler config of one HyperPod cluster, as the engine converges it. ``params`` are the module's options;
    ``raw`` is DescribeClusterSchedulerConfig's answer."""

    label = "cluster scheduler config"

    def __init__(self, client, params, check_mode=False, warn=None):
        super(SchedulerPolicyManager, self).__init__(client, params, check_mode, warn)
        self.cluster = None
        self.name = params.get("name")
        # The settings wanted (desired_settings), and the config a re-create made (read back in its place).
        self.settings, self.created_id = None, None

    # reads

    def read_cluster(self):
        self.cluster = sagemaker.describe_cluster(self.client, ClusterName=self.params["cluster"])
        if self.cluster is not None and not self.name:
            self.name = policy_name(self.cluster["ClusterName"])
        return self.cluster

    def find(self):
        """The cluster's scheduler config that is not Deleted (settled if it was transitioning), or None."""
        live = [s for s in sagemaker.list_cluster_scheduler_configs(self.client, ClusterArn=self.cluster["ClusterArn"]) if s.get("Status") != DELETED]
        if not live:
            return None
        # AWS allows one; should there be more, manage the one with our name.
        summary = next((s for s in live if s["Name"] == self.name), live[0])
        if self.params.get("name") and summary["Name"] != self.params["name"]:
            raise InputError(
                message="cluster %s already has the scheduler config %s (%s): a cluster has one, and its name cannot change; "
                "leave name unset to manage it, or delete it first"
                % (self.cluster["ClusterName"], summary["Name"], summary["ClusterSchedulerConfigId"])
            )
        self.name = summary["Name"]
        return self.settle(summary["ClusterSchedulerConfigId"])

    def settle(self, config_id):
        config = wait_for_status(
            lambda: sagemaker.describe_cluster_scheduler_config(self.client, ClusterSchedulerConfigId=config_id),
            "cluster scheduler config %s" % self.name,
            ready=SETTLED + FAILED + (DELETED, GONE),
            timeout=self.timeout,
        )
        if config is None or config.get("Status") == DELETED:
            return None
        return config

    def wait(self, config_id, ready):
        return read_settled(
            lambda: sagemaker.describe_cluster_scheduler_config(self.client, ClusterSchedulerConfigId=config_id),
            "cluster scheduler config %s" % self.name, self.params.get("wait", True), ready, FAILED, self.timeout,
        )

    # what the engine asks

    def prepare(self, state):
        problems = input_problems(self.params)
        if problems:
            raise InputError(message="task governance policy: %s" % "; ".join(problems))
        if state == "absent":
            return
        if self.read_cluster() is None:
            raise InputError(message="HyperPod cluster %s was not found" % self.params["cluster"])
        problems = name_problems(self.name, "derived name (give name)") if not self.params.get("name") else []
        if problems:
            raise InputError(message="task governance policy: %s" % "; ".join(problems))

    def read(self, fresh=False):
        if self.cluster is None and self.read_cluster() is None:
            return None
        return self.find()

    def view(self, raw):
        if raw is None:  # read back after it was deleted meanwhile (or with wait off, gone)
            return {}
        before = comparable(current_settings(raw), raw["Name"], raw["ClusterArn"])
        if raw["Status"] in CREATE_FAILED:
            # The failed config is in the diff with its status: that is what the run replaces.
            before.update(status=raw["Status"], failure_reason=raw.get("FailureReason"))
        return before

    def desired(self, raw):
        # A config that failed to create cannot be updated: it is made anew from the options alone.
        current = None if raw is None or raw["Status"] in CREATE_FAILED else current_settings(raw)
        self.settings = desired_settings(self.params, current)
        return comparable(self.settings, self.name, self.cluster["ClusterArn"])

    def moves(self, raw, desired):
        # A failed update is sent again though the settings match.
        return self.view(raw) != desired or raw["Status"] not in SETTLED

    def refuse(self, raw, desired):
        if raw["Status"] in CREATE_FAILED:
            self.warn(
                "cluster scheduler config %s is %s (%s); deleting it and creating it again"
                % (raw["Name"], raw["Status"], raw.get("FailureReason") or "no reason given")
            )
        elif raw["Status"] in FAILED:
            self.warn("cluster scheduler config %s is %s: %s" % (self.name, raw["Status"], raw.get("FailureReason") or "no reason given"))

    def predict(self, raw, desired):
        if raw is None or raw["Status"] in CREATE_FAILED:
            return dict(copy.deepcopy(self.settings), Name=self.name, ClusterArn=self.cluster["ClusterArn"], Status="Created", ClusterSchedulerConfigVersion=1)
        predicted = dict(copy.deepcopy(raw), **copy.deepcopy(self.settings))
        predicted["Status"] = "Updated"
        predicted["ClusterSchedulerConfigVersion"] = raw["ClusterSchedulerConfigVersion"] + 1
        return predicted

    def create(self, desired):
        request = dict(
            copy.deepcopy(self.settings), Name=self.name, ClusterArn=self.cluster["ClusterArn"], Tags=sagemaker.tag_list(dict([naming.MANAGED_BY_TAG]))
        )
        return sagemaker.create_cluster_scheduler_config(self.client, **request)["ClusterSchedulerConfigId"]

    def update(self, raw, desired):
        if raw["Status"] in CREATE_FAILED:
            # One config per cluster: the next one can only be created once this one is Deleted.
            self.delete(raw)
            self.wait_gone(raw)
            self.created_id = self.create(desired)
            return True
        try:
            self._write(raw, self.settings)
        except ConflictError:
            # Another writer moved the version between our read and our write: read once more.
            config = self.settle(raw["ClusterSchedulerConfigId"])
            if config is None:
                raise InputError(message="cluster scheduler config %s was deleted while it was being updated" % self.name)
            current = current_settings(config)
            settings = desired_settings(self.params, current)
            if current != settings or config["Status"] not in SETTLED:
                self._write(config, settings)
        return True

    def _write(self, config, settings):
        request = dict(
            ClusterSchedulerConfigId=config["ClusterSchedulerConfigId"],
            TargetVersion=config["ClusterSchedulerConfigVersion"],
            SchedulerConfig=copy.deepcopy(settings["SchedulerConfig"]),
        )
        if settings.get("Description") is not None:
            request["Description"] = settings["Description"]
        update_config(self.client, **request)

    def read_back(self, handle, settle):
        config_id = self.created_id or (handle["ClusterSchedulerConfigId"] if isinstance(handle, dict) else handle)
        return self.wait(config_id, SETTLED)

    def delete(self, raw):
        sagemaker.delete_cluster_scheduler_config(self.client, ClusterSchedulerConfigId=raw["ClusterSchedulerConfigId"])
        return True

    def wait_gone(self, raw):
        wait_for_status(
            lambda: sagemaker.describe_cluster_scheduler_config(self.client, ClusterSchedulerConfigId=raw["ClusterSchedulerConfigId"]),
            "cluster scheduler config %s" % self.name,
            ready=(DELETED, GONE),
            failed=("DeleteFailed", "DeleteRollbackFailed"),
            timeout=self.timeout,
        )

    def result(self, raw):
        return snake(raw) if raw else {}
