"""SageMaker HyperPod Task Governance cluster scheduler configs ("cluster policies"), which moto 5.2.5 lacks.

Create/Describe/Update/Delete/ListClusterSchedulerConfig(s). What AWS does and
this reproduces:

- a cluster has at most one scheduler config that is not Deleted; a second
  CreateClusterSchedulerConfig for it is a ConflictException;
- Creating -> Created, Updating -> Updated, Deleting -> Deleted (a Deleted
  config stays visible to Describe and List, and takes no writes);
- Task Governance runs as the EKS add-on ``amazon-sagemaker-hyperpod-taskgovernance``:
  a config created (or updated) while the HyperPod cluster's EKS cluster has no
  ACTIVE add-on ends in CreateFailed (UpdateFailed) with a FailureReason;
- ``ClusterSchedulerConfigVersion`` starts at 1 and grows by one per update;
  UpdateClusterSchedulerConfig with another ``TargetVersion`` is a
  ConflictException, and so is a write while the config is transitioning;
- DescribeClusterSchedulerConfig with ``ClusterSchedulerConfigVersion`` returns
  that version of the config.
"""

from __future__ import annotations

import copy
import string

import moto.sagemaker.models
import moto.sagemaker.responses
from moto.core.responses import ActionResult
from moto.core.utils import utcnow
from moto.moto_api._internal import mock_random as random

from sandbox.core import AwsError, Lifecycle, graft, page, state, validate_request, validation_error
from sandbox.kube import task_governance
from sandbox.services.eks_addons import addon_status

TASK_GOVERNANCE_ADDON = "amazon-sagemaker-hyperpod-taskgovernance"
SETTLED_OK = ("Created", "Updated")
TRANSITIONAL = ("Creating", "Updating", "Deleting")


def conflict(message: str) -> AwsError:
    return AwsError("ConflictException", message)


def not_found(message: str) -> AwsError:
    return AwsError("ResourceNotFound", message)


def _new_id() -> str:
    return "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(12))


def _hyperpod_cluster(backend, cluster_arn: str):
    return next((c for c in list(backend.clusters.values()) if getattr(c, "arn", None) == cluster_arn), None)


def _eks_cluster_arn(cluster) -> str | None:
    """The ARN of the EKS cluster that orchestrates a HyperPod cluster (kept by sagemaker_cluster.py)."""
    orchestrator = getattr(cluster, "orchestrator", None) or {}
    return (orchestrator.get("Eks") or {}).get("ClusterArn")


def _task_governance_problem(backend, cluster_arn: str) -> str | None:
    """Why Task Governance cannot apply a config to the cluster now, or None when it can."""
    cluster = _hyperpod_cluster(backend, cluster_arn)
    eks_arn = _eks_cluster_arn(cluster) if cluster else None
    if not eks_arn:
        return f"Cluster {cluster_arn} is not orchestrated by Amazon EKS; task governance needs an EKS-orchestrated cluster."
    # arn:aws:eks:<region>:<account>:cluster/<name>
    parts = eks_arn.split(":")
    eks_region, eks_account, eks_name = parts[3], parts[4], parts[5].split("/", 1)[1]
    status = addon_status(eks_account, eks_region, eks_name, TASK_GOVERNANCE_ADDON)
    if status != "ACTIVE":
        shown = "not installed" if status is None else f"in status {status}"
        return (
            f"The {TASK_GOVERNANCE_ADDON} add-on is {shown} on EKS cluster {eks_name}. "
            "Install the task governance add-on and wait until it is ACTIVE before creating a cluster policy."
        )
    return None


class SchedulerConfig:
    def __init__(self, backend, params: dict, problem: str | None):
        self.id = _new_id()
        self.arn = f"arn:{backend.partition}:sagemaker:{backend.region_name}:{backend.account_id}:cluster-scheduler-config/{self.id}"
        self.name = params["Name"]
        self.cluster_arn = params["ClusterArn"]
        self.tags = list(params.get("Tags") or [])
        self.creation_time = self.last_modified_time = utcnow()
        self.version = 1
        self.versions = {1: {"SchedulerConfig": copy.deepcopy(params["SchedulerConfig"]), "Description": params.get("Description")}}
        self.failure_reason = problem
        self.lifecycle = Lifecycle("Creating", "CreateFailed" if problem else "Created", on_settle=self._in_cluster)

    def _in_cluster(self, status: str) -> None:
        # Task Governance makes a Kueue WorkloadPriorityClass of each priority class of the settled config.
        if status in ("Created", "Updated"):
            classes = self.versions[self.version]["SchedulerConfig"].get("PriorityClasses") or []
            task_governance.apply_priority_classes(self.name, classes)
        elif status == "Deleted":
            task_governance.remove_priority_classes(self.name)

    @property
    def status(self) -> str:
        return self.lifecycle.status

    def describe(self, version: int | None = None) -> dict:
        version = version or self.version
        snapshot = self.versions[version]
        status = self.status
        result = {
            "ClusterSchedulerConfigArn": self.arn,
            "ClusterSchedulerConfigId": self.id,
            "Name": self.name,
            "ClusterSchedulerConfigVersion": version,
            "Status": status,
            "ClusterArn": self.cluster_arn,
            "SchedulerConfig": copy.deepcopy(snapshot["SchedulerConfig"]),
            "CreationTime": self.creation_time,
            "LastModifiedTime": self.last_modified_time,
        }
        if snapshot.get("Description") is not None:
            result["Description"] = snapshot["Description"]
        if status.endswith("Failed") and self.failure_reason:
            result["FailureReason"] = self.failure_reason
        return result

    def summary(self) -> dict:
        return {
            "ClusterSchedulerConfigArn": self.arn,
            "ClusterSchedulerConfigId": self.id,
            "ClusterSchedulerConfigVersion": self.version,
            "Name": self.name,
            "CreationTime": self.creation_time,
            "LastModifiedTime": self.last_modified_time,
            "Status": self.status,
            "ClusterArn": self.cluster_arn,
        }


def _configs(backend) -> dict:
    return state(backend, "cluster_scheduler_configs")


class SchedulerBackend:
    """Methods grafted onto moto's SageMakerModelBackend."""

    def _scheduler_config(self, config_id: str) -> SchedulerConfig:
        config = _configs(self).get(config_id)
        if config is None:
            raise not_found(f"ClusterSchedulerConfig with id {config_id} not found.")
        return config

    def create_cluster_scheduler_config(self, params: dict) -> SchedulerConfig:
        cluster_arn = params["ClusterArn"]
        if _hyperpod_cluster(self, cluster_arn) is None:
            raise validation_error(f"Cluster {cluster_arn} does not exist.")
        for other in _configs(self).values():
            if other.cluster_arn == cluster_arn and other.status != "Deleted":
                raise conflict(
                    f"Cluster {cluster_arn} already has cluster policy {other.name} ({other.id}); a cluster can have only one."
                )
        config = SchedulerConfig(self, params, _task_governance_problem(self, cluster_arn))
        _configs(self)[config.id] = config
        return config

    def describe_cluster_scheduler_config(self, config_id: str, version: int | None) -> dict:
        config = self._scheduler_config(config_id)
        if version is not None and version not in config.versions:
            raise not_found(f"ClusterSchedulerConfig with id {config_id} and version {version} not found.")
        return config.describe(version)

    def update_cluster_scheduler_config(self, params: dict) -> SchedulerConfig:
        config = self._scheduler_config(params["ClusterSchedulerConfigId"])
        status = config.status
        if status == "Deleted":
            raise not_found(f"ClusterSchedulerConfig with id {config.id} not found.")
        if status in TRANSITIONAL:
            raise conflict(f"ClusterSchedulerConfig {config.id} is {status}; wait until it settles before updating it.")
        if status in ("CreateFailed", "CreateRollbackFailed"):
            raise conflict(f"ClusterSchedulerConfig {config.id} is {status} and cannot be updated; delete it and create it again.")
        if params["TargetVersion"] != config.version:
            raise conflict(
                f"TargetVersion {params['TargetVersion']} does not match the current version {config.version} of ClusterSchedulerConfig {config.id}."
            )
        current = config.versions[config.version]
        # What the request leaves out keeps its current value; SchedulerConfig is replaced whole.
        snapshot = {
            "SchedulerConfig": copy.deepcopy(params.get("SchedulerConfig", current["SchedulerConfig"])),
            "Description": params.get("Description", current.get("Description")),
        }
        config.version += 1
        config.versions[config.version] = snapshot
        config.last_modified_time = utcnow()
        problem = _task_governance_problem(self, config.cluster_arn)
        config.failure_reason = problem
        config.lifecycle.move("Updating", "UpdateFailed" if problem else "Updated")
        return config

    def delete_cluster_scheduler_config(self, config_id: str) -> None:
        config = self._scheduler_config(config_id)
        status = config.status
        if status == "Deleted":
            raise not_found(f"ClusterSchedulerConfig with id {config_id} not found.")
        if status in TRANSITIONAL:
            raise conflict(f"ClusterSchedulerConfig {config_id} is {status}; wait until it settles before deleting it.")
        config.last_modified_time = utcnow()
        config.failure_reason = None
        config.lifecycle.move("Deleting", "Deleted")

    def list_cluster_scheduler_configs(self, params: dict) -> list[SchedulerConfig]:
        found = []
        for config in _configs(self).values():
            if params.get("ClusterArn") and config.cluster_arn != params["ClusterArn"]:
                continue
            if params.get("NameContains") and params["NameContains"] not in config.name:
                continue
            if params.get("Status") and config.status != params["Status"]:
                continue
            if params.get("CreatedAfter") and config.creation_time <= _naive(params["CreatedAfter"]):
                continue
            if params.get("CreatedBefore") and config.creation_time >= _naive(params["CreatedBefore"]):
                continue
            found.append(config)
        sort_by = params.get("SortBy") or "CreationTime"
        key = {"Name": lambda c: c.name, "Status": lambda c: c.status}.get(sort_by, lambda c: c.creation_time)
        return sorted(found, key=key, reverse=(params.get("SortOrder") or "Descending") == "Descending")


def _naive(moment):
    return moment.replace(tzinfo=None) if getattr(moment, "tzinfo", None) else moment


def _params(response, operation: str) -> dict:
    """The request's parameters, validated against botocore's model as AWS validates them."""
    params = {k: v for k, v in dict(response.params).items() if v is not None}
    validate_request("sagemaker", operation, params)
    return params


class SchedulerResponse:
    """Methods grafted onto moto's SageMakerResponse."""

    def create_cluster_scheduler_config(self):
        config = self.sagemaker_backend.create_cluster_scheduler_config(_params(self, "CreateClusterSchedulerConfig"))
        return ActionResult({"ClusterSchedulerConfigArn": config.arn, "ClusterSchedulerConfigId": config.id})

    def describe_cluster_scheduler_config(self):
        params = _params(self, "DescribeClusterSchedulerConfig")
        return ActionResult(
            self.sagemaker_backend.describe_cluster_scheduler_config(params["ClusterSchedulerConfigId"], params.get("ClusterSchedulerConfigVersion"))
        )

    def update_cluster_scheduler_config(self):
        config = self.sagemaker_backend.update_cluster_scheduler_config(_params(self, "UpdateClusterSchedulerConfig"))
        return ActionResult({"ClusterSchedulerConfigArn": config.arn, "ClusterSchedulerConfigVersion": config.version})

    def delete_cluster_scheduler_config(self):
        params = _params(self, "DeleteClusterSchedulerConfig")
        self.sagemaker_backend.delete_cluster_scheduler_config(params["ClusterSchedulerConfigId"])
        return ActionResult({})

    def list_cluster_scheduler_configs(self):
        params = _params(self, "ListClusterSchedulerConfigs")
        configs = self.sagemaker_backend.list_cluster_scheduler_configs(params)
        found, token = page(configs, params.get("MaxResults"), params.get("NextToken"), lambda: validation_error("Invalid pagination token"), 10)
        result = {"ClusterSchedulerConfigSummaries": [c.summary() for c in found]}
        if token:
            result["NextToken"] = token
        return ActionResult(result)


def install() -> None:
    graft(moto.sagemaker.models.SageMakerModelBackend, SchedulerBackend)
    graft(moto.sagemaker.responses.SageMakerResponse, SchedulerResponse)

    # AddTags/ListTags/DeleteTags on scheduler-config ARNs: wrap whatever resolver is installed.
    previous = moto.sagemaker.models.SageMakerModelBackend._get_resource_from_arn

    def _get_resource_from_arn(self, arn):
        if ":cluster-scheduler-config/" in arn:
            return self._scheduler_config(arn.rsplit("/", 1)[-1])
        return previous(self, arn)

    moto.sagemaker.models.SageMakerModelBackend._get_resource_from_arn = _get_resource_from_arn
