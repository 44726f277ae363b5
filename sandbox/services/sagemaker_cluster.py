"""SageMaker HyperPod clusters as AWS runs them, on moto's own Cluster and ClusterNode model.

moto 5.2.5 has Create/Describe/List/DeleteCluster and ListClusterNodes, but:

- it lacks UpdateCluster;
- it validates nothing against botocore's model, accepts only an old, fixed list of
  instance types, crashes without ``ThreadsPerCore`` and insists on an ``s3://sagemaker-``
  lifecycle bucket (AWS documents that prefix only as what the managed IAM policy can read);
- it forgets ``Orchestrator`` and ``NodeRecovery``;
- its ARNs end in the cluster name, where AWS's end in a 12-character id
  (``ClusterArn`` and ``ClusterNameOrArn`` in botocore's model only accept the id);
- a cluster is ``InService`` at once and gone at once, and a missing cluster is a
  ``ValidationException`` where AWS answers ``ResourceNotFound``.

This module replaces moto's create/describe/delete with versions that keep moto's
``Cluster``/``ClusterNode`` objects in ``backend.clusters`` (so moto's ListClusters and
tagging keep working) and adds UpdateCluster. Status moves through
``sandbox.core.Lifecycle``: Creating -> InService, Updating -> InService,
Deleting -> gone. Instance groups report ``CurrentCount``/``TargetCount``; CurrentCount
reaches TargetCount, and nodes appear or disappear, when the transition settles.

A flexible group's ``InstanceRequirements`` (ClusterInstanceRequirements: ``InstanceTypes``, in priority order)
reads back as ClusterInstanceRequirementDetails: ``DesiredInstanceTypes`` as last requested, ``CurrentInstanceTypes``
when the transition settles; its nodes are of the first type. Managed autoscaling (``AutoScaling``,
``ClusterRole``, ``NodeProvisioningMode``) is stored, described and checked against what AWS documents as required:
continuous provisioning and NodeRecovery Automatic ("Autoscaling on SageMaker HyperPod EKS", prerequisites), a
ClusterRole ("only required when autoscaling is enabled", CreateCluster) that "Cannot be updated while autoscaling is
enabled" (UpdateCluster).
"""

from __future__ import annotations

import copy
import json
import random
import string
from typing import Any

import moto.sagemaker.models
from moto.core.utils import utcnow
from moto.sagemaker.models import Cluster, ClusterNode, SageMakerModelBackend
from moto.sagemaker.responses import SageMakerResponse

from sandbox import iam_propagation
from sandbox.core import AwsError, Lifecycle, graft, service_model, validate_request, validation_error

# Statuses in which AWS accepts UpdateCluster.
UPDATABLE = ("InService",)
# Fields of an existing instance group that UpdateCluster cannot change: AWS asks for
# the instance type and execution role the group was created with.
# "For each instance group, you can change the instance type, the number of instances, the lifecycle
# configuration entrypoint script, and the path to the script" ("Updating SageMaker HyperPod cluster
# configuration", SageMaker AI Developer Guide): the instance type changes in place, the nodes are
# replaced. The guide does not say the execution role can change; the sandbox keeps it fixed.
IMMUTABLE_GROUP_FIELDS = ("ExecutionRole",)
# Spec fields stored on an instance group and returned by DescribeCluster as given (InstanceRequirements and
# KubernetesConfig change shape: ClusterInstanceRequirementDetails, ClusterKubernetesConfigDetails).
GROUP_SPEC_FIELDS = (
    "InstanceGroupName", "InstanceType", "LifeCycleConfig", "ExecutionRole", "ThreadsPerCore",
    "InstanceStorageConfigs", "OnStartDeepHealthChecks", "TrainingPlanArn", "OverrideVpcConfig", "ScheduledUpdateConfig",
    "AutoPatchConfig", "NetworkInterface", "CapacityRequirements",
)


def _cluster_id() -> str:
    return "".join(random.choices(string.ascii_lowercase + string.digits, k=12))


def _node_id() -> str:
    return "i-" + "".join(random.choices("0123456789abcdef", k=17))


def _not_found(name: str) -> AwsError:
    return AwsError("ResourceNotFound", f"Cluster '{name}' not found.")


class SandboxCluster(Cluster):
    """moto's Cluster, with AWS's id-based ARN, orchestrator, node recovery and asynchronous status.

    It does not run moto's ``Cluster.__init__`` (which validates against moto's fixed
    instance-type list and bucket prefix) but sets the same attributes, so moto's
    ``summary()``, ListClusters and the tagging calls work on it unchanged.
    """

    def __init__(self, backend: SageMakerModelBackend, params: dict):
        self.region_name = backend.region_name
        self.account_id = backend.account_id
        self.cluster_name = params["ClusterName"]
        self.cluster_id = _cluster_id()
        self.arn = f"arn:{backend.partition}:sagemaker:{self.region_name}:{self.account_id}:cluster/{self.cluster_id}"
        self.instance_groups = [_group(spec, current=0, status="Creating") for spec in params.get("InstanceGroups") or []]
        self.vpc_config = copy.deepcopy(params.get("VpcConfig"))
        self.orchestrator = copy.deepcopy(params.get("Orchestrator"))
        self.node_recovery = params.get("NodeRecovery") or "Automatic"
        self.node_provisioning_mode = params.get("NodeProvisioningMode")
        self.cluster_role = params.get("ClusterRole")
        # ClusterAutoScalingConfigOutput: Mode, AutoScalerType (Karpenter when left out, the only type), Status.
        self.auto_scaling = _auto_scaling(params.get("AutoScaling"), "Creating")
        self.tags = copy.deepcopy(params.get("Tags") or [])
        self.creation_time = utcnow()
        self.failure_message = ""
        self.nodes: dict[str, ClusterNode] = {}
        self.deleting = False
        # HyperPod runs each group's OnCreate script on every new node: when the script
        # is not where LifeCycleConfig says, the creation ends Failed.
        self.creation_failure = _missing_lifecycle_script(backend, self.instance_groups)
        self.lifecycle = Lifecycle("Creating", "Failed" if self.creation_failure else "InService")

    @property
    def status(self) -> str:
        return self.lifecycle.status

    def describe(self) -> dict[str, Any]:
        result = {
            "ClusterArn": self.arn,
            "ClusterName": self.cluster_name,
            "ClusterStatus": self.status,
            "CreationTime": self.creation_time,
            "InstanceGroups": copy.deepcopy(self.instance_groups),
            "NodeRecovery": self.node_recovery,
        }
        if self.status == "Failed":
            result["FailureMessage"] = self.creation_failure
        if self.vpc_config:
            result["VpcConfig"] = copy.deepcopy(self.vpc_config)
        if self.orchestrator:
            result["Orchestrator"] = copy.deepcopy(self.orchestrator)
        if self.node_provisioning_mode:
            result["NodeProvisioningMode"] = self.node_provisioning_mode
        if self.cluster_role:
            result["ClusterRole"] = self.cluster_role
        if self.auto_scaling:
            result["AutoScaling"] = copy.deepcopy(self.auto_scaling)
        return result


def _auto_scaling(config: dict | None, status: str) -> dict | None:
    """What DescribeCluster shows of a requested ClusterAutoScalingConfig, ``status`` until the transition settles.

    Assumption: a disabled autoscaler still shows, Mode Disable (the docs do not say whether it disappears)."""
    if not config:
        return None
    return {"Mode": config["Mode"], "AutoScalerType": config.get("AutoScalerType") or "Karpenter", "Status": status}


def _check_auto_scaling(enabled: bool, provisioning: str | None, recovery: str | None, role: str | None) -> None:
    """AWS's prerequisites of managed autoscaling, on the cluster as the request would leave it."""
    if not enabled:
        return
    if provisioning != "Continuous":
        raise validation_error("Autoscaling requires NodeProvisioningMode to be Continuous.")
    if recovery != "Automatic":
        raise validation_error("Autoscaling requires NodeRecovery to be Automatic.")
    if not role:
        raise validation_error("ClusterRole is required when autoscaling is enabled.")


def _group(spec: dict, current: int, status: str, previous: dict | None = None) -> dict:
    """An instance group as DescribeCluster shows it (ClusterInstanceGroupDetails) from its specification.

    A listed group takes the specification as sent: a member left out (KubernetesConfig, ImageId)
    is not kept from before. AWS does not document whether it keeps them; the sandbox takes the
    stricter reading, so the collection has to send them again. ``previous`` is the group as it was
    (an update): its CurrentInstanceTypes stay until the transition settles.
    """
    group = {key: copy.deepcopy(spec[key]) for key in GROUP_SPEC_FIELDS if spec.get(key) is not None}
    requirements = spec.get("InstanceRequirements")
    if requirements is not None:
        types = list(requirements["InstanceTypes"])
        was = ((previous or {}).get("InstanceRequirements") or {}).get("CurrentInstanceTypes")
        group["InstanceRequirements"] = {"CurrentInstanceTypes": list(was or types), "DesiredInstanceTypes": types}
    kubernetes = spec.get("KubernetesConfig")
    if kubernetes is not None:
        # Details carry Current* (on the nodes) and Desired* (asked for); the sandbox applies them at once.
        group["KubernetesConfig"] = {
            "CurrentLabels": copy.deepcopy(kubernetes.get("Labels") or {}),
            "DesiredLabels": copy.deepcopy(kubernetes.get("Labels") or {}),
            "CurrentTaints": copy.deepcopy(kubernetes.get("Taints") or []),
            "DesiredTaints": copy.deepcopy(kubernetes.get("Taints") or []),
        }
    if spec.get("ImageId"):
        group["CurrentImageId"] = group["DesiredImageId"] = spec["ImageId"]
    if spec.get("MinInstanceCount") is not None:
        group["MinCount"] = spec["MinInstanceCount"]
    # AWS reports the threads per core the nodes run with; 1 when the request left it out.
    group.setdefault("ThreadsPerCore", 1)
    group["TargetCount"] = spec["InstanceCount"]
    group["CurrentCount"] = current
    group["Status"] = status
    return group


def _settle(backend: SageMakerModelBackend, cluster: SandboxCluster) -> None:
    """Apply what a finished Creating/Updating/Deleting transition leaves behind."""
    if not cluster.lifecycle.settled:
        return
    # Latch the settled status, so a later change of the sandbox's delay cannot move it back.
    cluster.lifecycle.settle_as(cluster.lifecycle.status)
    if cluster.deleting:
        backend.clusters.pop(cluster.cluster_name, None)
        return
    if cluster.auto_scaling:
        cluster.auto_scaling["Status"] = "Failed" if cluster.status == "Failed" else "InService"
    if cluster.status == "Failed":
        for group in cluster.instance_groups:
            group["Status"] = "Failed"
        return
    if all(g["Status"] == "InService" and g["CurrentCount"] == g["TargetCount"] for g in cluster.instance_groups):
        return
    cluster.instance_groups = [g for g in cluster.instance_groups if g["Status"] != "Deleting"]
    names = {g["InstanceGroupName"] for g in cluster.instance_groups}
    for node_id, node in list(cluster.nodes.items()):
        if node.instance_group_name not in names:
            del cluster.nodes[node_id]
    for group in cluster.instance_groups:
        group["CurrentCount"] = group["TargetCount"]
        group["Status"] = "InService"
        requirements = group.get("InstanceRequirements")
        if requirements:
            requirements["CurrentInstanceTypes"] = list(requirements["DesiredInstanceTypes"])
        allowed = requirements["DesiredInstanceTypes"] if requirements else [group.get("InstanceType")]
        for node in [n for n in cluster.nodes.values() if n.instance_group_name == group["InstanceGroupName"]]:
            if node.instance_type not in allowed:
                del cluster.nodes[node.instance_id]  # replaced by a node of a type the group allows
        nodes = [n for n in cluster.nodes.values() if n.instance_group_name == group["InstanceGroupName"]]
        for node in nodes[group["TargetCount"]:]:
            del cluster.nodes[node.instance_id]
        for _ in range(group["TargetCount"] - len(nodes)):
            node_id = _node_id()
            cluster.nodes[node_id] = ClusterNode(
                region_name=cluster.region_name,
                account_id=cluster.account_id,
                cluster_name=cluster.cluster_name,
                instance_group_name=group["InstanceGroupName"],
                # A flexible group's first type: HyperPod provisions it first (ClusterInstanceRequirements).
                instance_type=group.get("InstanceType") or group["InstanceRequirements"]["DesiredInstanceTypes"][0],
                life_cycle_config=group.get("LifeCycleConfig") or {},
                execution_role=group["ExecutionRole"],
                node_id=node_id,
                threads_per_core=group.get("ThreadsPerCore"),
            )


def _missing_lifecycle_script(backend: SageMakerModelBackend, groups: list[dict]) -> str:
    """Why the creation fails when a group's lifecycle script is not in S3; empty when they all are."""
    from moto.s3.models import s3_backends

    s3 = s3_backends[backend.account_id][backend.partition]
    for group in groups:
        config = group.get("LifeCycleConfig") or {}
        uri, script = config.get("SourceS3Uri"), config.get("OnCreate")
        if not uri or not script or not uri.startswith("s3://"):
            continue
        bucket, _, prefix = uri[len("s3://"):].partition("/")
        key = f"{prefix.rstrip('/')}/{script}" if prefix.strip("/") else script
        found = s3.buckets.get(bucket)
        if found is None or key not in found.keys:
            return (
                f"Lifecycle script s3://{bucket}/{key} of instance group {group['InstanceGroupName']} could not be downloaded; "
                "the nodes did not complete the lifecycle configuration."
            )
    return ""


def _check_groups(backend: SageMakerModelBackend, groups: list[dict]) -> None:
    """What AWS checks on instance group specifications beyond botocore's model."""
    seen: set[str] = set()
    for group in groups:
        name = group["InstanceGroupName"]
        if name in seen:
            raise validation_error(f"Instance group name {name} is duplicated in the request.")
        seen.add(name)
        if bool(group.get("InstanceType")) == bool(group.get("InstanceRequirements")):
            raise validation_error(f"Instance group {name} must specify exactly one of InstanceType and InstanceRequirements.")
        _check_role(backend, group["ExecutionRole"])


def _check_role(backend: SageMakerModelBackend, role_arn: str) -> None:
    from moto.iam.models import iam_backends

    iam = iam_backends[backend.account_id][backend.partition]
    if not any(role.arn == role_arn for role in iam.get_roles()):
        raise validation_error(iam_propagation.ROLE_INVALID.format(arn=role_arn))
    # A role just created: the same answer until IAM has propagated it (sandbox/iam_propagation.py).
    iam_propagation.refuse_new_role("CreateCluster", backend.account_id, role_arn)


def _check_orchestrator(backend: SageMakerModelBackend, orchestrator: dict | None) -> None:
    if orchestrator is None:
        return
    kinds = [kind for kind in ("Eks", "Slurm") if orchestrator.get(kind) is not None]
    if len(kinds) != 1:
        raise validation_error("Orchestrator must specify exactly one of Eks and Slurm.")
    if kinds == ["Eks"]:
        from moto.eks.models import eks_backends

        arn = orchestrator["Eks"]["ClusterArn"]
        try:
            clusters = eks_backends[backend.account_id][arn.split(":")[3]].clusters
        except KeyError:
            clusters = {}
        if not any(c.arn == arn for c in clusters.values()):
            raise validation_error(f"EKS cluster {arn} was not found.")


class ClusterBackend:
    """Methods grafted onto moto's SageMakerModelBackend."""

    def _sandbox_find_cluster(self, name_or_arn: str) -> SandboxCluster | None:
        for cluster in list(self.clusters.values()):
            if name_or_arn in (cluster.cluster_name, cluster.arn):
                if isinstance(cluster, SandboxCluster):
                    _settle(self, cluster)
                    if cluster.cluster_name not in self.clusters:
                        return None
                return cluster
        return None

    def _sandbox_get_cluster(self, name_or_arn: str) -> SandboxCluster:
        cluster = self._sandbox_find_cluster(name_or_arn)
        if cluster is None:
            raise _not_found(name_or_arn)
        return cluster

    def _sandbox_settle_clusters(self) -> None:
        for cluster in list(self.clusters.values()):
            if isinstance(cluster, SandboxCluster):
                _settle(self, cluster)

    def sandbox_create_cluster(self, params: dict) -> str:
        validate_request("sagemaker", "CreateCluster", params)
        self._sandbox_settle_clusters()
        name = params["ClusterName"]
        if name in self.clusters:
            raise AwsError("ResourceInUse", f"Resource Already Exists: Cluster with name {name} already exists. Choose a different name.")
        if not params.get("InstanceGroups") and not params.get("RestrictedInstanceGroups"):
            raise validation_error("At least one of InstanceGroups and RestrictedInstanceGroups must be specified.")
        _check_groups(self, params.get("InstanceGroups") or [])
        _check_orchestrator(self, params.get("Orchestrator"))
        _check_auto_scaling((params.get("AutoScaling") or {}).get("Mode") == "Enable", params.get("NodeProvisioningMode"),
                            params.get("NodeRecovery") or "Automatic", params.get("ClusterRole"))
        if params.get("ClusterRole"):
            _check_role(self, params["ClusterRole"])
        cluster = SandboxCluster(self, params)
        self.clusters[name] = cluster
        return cluster.arn

    def sandbox_update_cluster(self, params: dict) -> str:
        validate_request("sagemaker", "UpdateCluster", params)
        cluster = self._sandbox_get_cluster(params["ClusterName"])
        if cluster.status not in UPDATABLE:
            raise AwsError("ConflictException", f"Cluster {cluster.cluster_name} is in {cluster.status} status; it can be updated only when InService.")
        orchestrator = params.get("Orchestrator")
        if orchestrator is not None and orchestrator != cluster.orchestrator:
            raise validation_error("The orchestrator of a cluster cannot be changed after the cluster is created.")
        specs = params.get("InstanceGroups") or []
        to_delete = params.get("InstanceGroupsToDelete") or []
        existing = {g["InstanceGroupName"]: g for g in cluster.instance_groups}
        requested = [s["InstanceGroupName"] for s in specs]
        for name in to_delete:
            if name not in existing:
                raise validation_error(f"Instance group {name} in InstanceGroupsToDelete does not exist in cluster {cluster.cluster_name}.")
            if name in requested:
                raise validation_error(f"Instance group {name} cannot be both updated and deleted.")
        # Groups neither listed nor in InstanceGroupsToDelete stay as they are: "To update an existing
        # instance group, specify the name of the instance group you want to update" (the update guide).
        untouched = [copy.deepcopy(g) for name, g in existing.items() if name not in requested and name not in to_delete]
        _check_groups(self, specs)
        for spec in specs:
            current = existing.get(spec["InstanceGroupName"])
            if current is None:
                continue
            for field in IMMUTABLE_GROUP_FIELDS:
                if spec.get(field) != current.get(field):
                    raise validation_error(
                        f"{field} of instance group {spec['InstanceGroupName']} cannot be updated "
                        f"(current: {current.get(field)}, requested: {spec.get(field)})."
                    )
            # Assumption (the docs are silent): a group keeps the kind it was created with; a flexible group's
            # list may change (DesiredInstanceTypes is "as specified in the most recent update request").
            if bool(spec.get("InstanceRequirements")) != bool(current.get("InstanceRequirements")):
                raise validation_error(
                    f"Instance group {spec['InstanceGroupName']} cannot switch between InstanceType and InstanceRequirements."
                )
        enabled = cluster.auto_scaling is not None and cluster.auto_scaling["Mode"] == "Enable"
        role = params.get("ClusterRole")
        if role is not None and role != cluster.cluster_role and enabled:
            raise validation_error("ClusterRole cannot be updated while autoscaling is enabled.")
        if role is not None:
            _check_role(self, role)
        auto_scaling = params.get("AutoScaling")
        _check_auto_scaling(
            auto_scaling.get("Mode") == "Enable" if auto_scaling else enabled,
            params.get("NodeProvisioningMode") or cluster.node_provisioning_mode,
            params.get("NodeRecovery") or cluster.node_recovery,
            role or cluster.cluster_role,
        )
        groups = untouched
        for spec in specs:
            current = existing.get(spec["InstanceGroupName"])
            if current is None:
                groups.append(_group(spec, current=0, status="Creating"))
                continue
            group = _group(spec, current=current["CurrentCount"], status="Updating", previous=current)
            if {k: v for k, v in group.items() if k != "Status"} == {k: v for k, v in current.items() if k != "Status"}:
                group["Status"] = current["Status"]
            groups.append(group)
        for name in to_delete:
            group = copy.deepcopy(existing[name])
            group["Status"] = "Deleting"
            groups.append(group)
        cluster.instance_groups = groups
        if params.get("NodeRecovery"):
            cluster.node_recovery = params["NodeRecovery"]
        if params.get("NodeProvisioningMode"):
            cluster.node_provisioning_mode = params["NodeProvisioningMode"]
        if role is not None:
            cluster.cluster_role = role
        if auto_scaling:
            cluster.auto_scaling = _auto_scaling(auto_scaling, "Creating" if auto_scaling["Mode"] == "Enable" else "Deleting")
        cluster.lifecycle.move("Updating", "InService")
        return cluster.arn

    def sandbox_describe_cluster(self, params: dict) -> dict:
        validate_request("sagemaker", "DescribeCluster", params)
        return self._sandbox_get_cluster(params["ClusterName"]).describe()

    def sandbox_delete_cluster(self, params: dict) -> str:
        validate_request("sagemaker", "DeleteCluster", params)
        cluster = self._sandbox_get_cluster(params["ClusterName"])
        if getattr(cluster, "deleting", False):
            raise AwsError("ConflictException", f"Cluster {cluster.cluster_name} is already being deleted.")
        if not isinstance(cluster, SandboxCluster):
            del self.clusters[cluster.cluster_name]
            return cluster.arn
        cluster.deleting = True
        for group in cluster.instance_groups:
            group["Status"] = "Deleting"
        cluster.lifecycle.move("Deleting", "Deleting")
        return cluster.arn

    def sandbox_cluster_name(self, name_or_arn: str) -> str:
        """The name moto's own cluster-node methods look clusters up by."""
        return self._sandbox_get_cluster(name_or_arn).cluster_name


class ClusterResponse:
    """Methods grafted onto moto's SageMakerResponse (X-Amz-Target dispatch)."""

    def _sandbox_params(self) -> dict:
        return json.loads(self.body or b"{}")

    def create_cluster(self):
        from moto.core.responses import ActionResult

        return ActionResult({"ClusterArn": self.sagemaker_backend.sandbox_create_cluster(self._sandbox_params())})

    def update_cluster(self):
        from moto.core.responses import ActionResult

        return ActionResult({"ClusterArn": self.sagemaker_backend.sandbox_update_cluster(self._sandbox_params())})

    def describe_cluster(self):
        from moto.core.responses import ActionResult

        return ActionResult(self.sagemaker_backend.sandbox_describe_cluster(self._sandbox_params()))

    def delete_cluster(self):
        from moto.core.responses import ActionResult

        return ActionResult({"ClusterArn": self.sagemaker_backend.sandbox_delete_cluster(self._sandbox_params())})


def _wrap_backend_methods() -> None:
    """Wrap moto's list/tag/node methods so they see settled status and AWS's ARNs."""
    original_list_clusters = SageMakerModelBackend.list_clusters
    original_list_nodes = SageMakerModelBackend.list_cluster_nodes
    original_describe_node = SageMakerModelBackend.describe_cluster_node
    original_resource = SageMakerModelBackend._get_resource_from_arn
    original_add_tags = SageMakerModelBackend.add_tags

    def list_clusters(self, *args, **kwargs):
        self._sandbox_settle_clusters()
        return original_list_clusters(self, *args, **kwargs)

    def list_cluster_nodes(self, *args, cluster_name: str, **kwargs):
        return original_list_nodes(self, *args, cluster_name=self.sandbox_cluster_name(cluster_name), **kwargs)

    def describe_cluster_node(self, cluster_name: str, node_id: str):
        name = self.sandbox_cluster_name(cluster_name)
        if node_id not in self.clusters[name].nodes:
            raise AwsError("ResourceNotFound", f"Node '{node_id}' not found in cluster '{name}'.")
        return original_describe_node(self, name, node_id)

    def _get_resource_from_arn(self, arn: str):
        if ":cluster/" in arn:
            cluster = self._sandbox_find_cluster(arn)
            if cluster is None:
                raise validation_error(f"Resource {arn} not found.")
            return cluster
        return original_resource(self, arn)

    def add_tags(self, arn: str, tags: list[dict[str, str]]):
        # AWS's AddTags "adds or overwrites": a key that is already there takes the new value.
        keys = {tag["Key"] for tag in tags}
        resource = self._get_resource_from_arn(arn)
        resource.tags = [tag for tag in resource.tags if tag["Key"] not in keys]
        return original_add_tags(self, arn, tags)

    SageMakerModelBackend.list_clusters = list_clusters
    SageMakerModelBackend.list_cluster_nodes = list_cluster_nodes
    SageMakerModelBackend.describe_cluster_node = describe_cluster_node
    SageMakerModelBackend._get_resource_from_arn = _get_resource_from_arn
    SageMakerModelBackend.add_tags = add_tags


def install() -> None:
    service_model("sagemaker")
    # moto pages ListClusterNodes by an ``arn`` its nodes lack: every page was the first, with the
    # same NextToken (the AWS CLI stops: "The same next token was received twice"). Nodes are
    # unique by instance id.
    moto.sagemaker.models.PAGINATION_MODEL["list_cluster_nodes"]["unique_attribute"] = "instance_id"
    graft(SageMakerModelBackend, ClusterBackend)
    graft(SageMakerResponse, ClusterResponse)
    _wrap_backend_methods()
