# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The SageMaker HyperPod cluster: desired and current state in one shape, the plan between them, and the calls.

``normalize_desired`` (module options) and ``normalize_current`` (DescribeCluster +
ListTags) give the same snake_case shape; ``plan_cluster`` compares them and says what
to do: create, update (one UpdateCluster with only what changed), replace, nothing,
or refuse with a reason per field. Everything up to the plan makes no call, so it is
unit-tested without AWS; ``Cluster`` runs the plan through the engine.

What UpdateCluster can change in place: an instance group's instance type, count and
lifecycle configuration ("For each instance group, you can change the instance type, the
number of instances, the lifecycle configuration entrypoint script, and the path to the
script", "Updating SageMaker HyperPod cluster configuration", SageMaker AI Developer Guide),
new instance groups, instance groups to delete (InstanceGroupsToDelete) and NodeRecovery.
It cannot change the orchestrator (AWS: the EKS cluster cannot be changed after creation)
or the VpcConfig (UpdateCluster has no such member). The guide does not list an existing
group's execution role as changeable; this module treats it, threads per core, the extra
EBS volume and the training plan of an existing group as fixed: they are set when the
group's instances are launched.

UpdateCluster is sent with every instance group that stays, each with what DescribeCluster
shows of it that the module does not manage (Kubernetes labels and taints, the AMI, patching,
deep health checks, ...): AWS does not document whether a member left out of a listed group
keeps its value or is reset, and re-sending it is right either way. Of the Kubernetes labels the module
manages one, ``nvidia.com/mig.config`` (a group's ``mig_config``), merged into the labels it sends back.

Flexible instance groups (``instance_types``) are sent as ``InstanceRequirements.InstanceTypes``, in the
user's order: "HyperPod attempts to provision instances using the first instance type in the list and falls
back to subsequent types" (ClusterInstanceRequirements, SageMaker API Reference:
https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ClusterInstanceRequirements.html), and read back
from ``InstanceRequirements.DesiredInstanceTypes`` ("as specified in the most recent update request"), else
``CurrentInstanceTypes`` (ClusterInstanceRequirementDetails). That UpdateCluster records desired types is why a
flexible group's list changes in place. Whether a group can switch between ``InstanceType`` and
``InstanceRequirements`` the docs do not say; assumption: it cannot, and the switch is treated as a change that
needs the cluster replaced (FIXED_GROUP_FIELDS).

Managed (Karpenter) autoscaling: ``AutoScaling {Mode, AutoScalerType}``, ``ClusterRole`` and
``NodeProvisioningMode`` of CreateCluster/UpdateCluster (SageMaker API Reference). "Autoscaling on SageMaker
HyperPod EKS" (SageMaker AI Developer Guide,
https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-eks-autoscaling.html) lists as prerequisites
continuous provisioning (``NodeProvisioningMode: Continuous``) and ``NodeRecovery`` Automatic; ClusterRole is
"only required when autoscaling is enabled" (CreateCluster) and "Cannot be updated while autoscaling is enabled"
(UpdateCluster).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

from ansible_collections.amazon.aws.plugins.module_utils.tagging import compare_aws_tags

from ansible_collections.hyperpod.tenancy.plugins.module_utils import eks, engine, instance_types, naming, sagemaker
# request_problems: team_model checks a team file's cluster request with it too.
from ansible_collections.hyperpod.tenancy.plugins.module_utils.botocore_model import request_problems
from ansible_collections.hyperpod.tenancy.plugins.module_utils.compare import snake
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.waiters import GONE
from ansible_collections.hyperpod.tenancy.plugins.module_utils.waiters import wait_for_status

NODE_RECOVERY = {"automatic": "Automatic", "none": "None"}
# ClusterNodeProvisioningMode has one value (botocore's model); a cluster without it reports none.
NODE_PROVISIONING = {"continuous": "Continuous"}
# The only AutoScalerType botocore's ClusterAutoScalerType lists.
AUTOSCALER = "Karpenter"
# The label NVIDIA's MIG manager reads; HyperPod applies it from KubernetesConfig.Labels ("Node Lifecycle and Labels",
# https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-eks-gpu-partitioning-labels.html).
MIG_LABEL = "nvidia.com/mig.config"
# all-disabled, or all-<profile>: every GPU of the node partitioned alike into a profile (1g.10gb, ...), the
# profile named as NVIDIA's MIG manager names it (AWS's AcceleratorPartition type without "mig-").
MIG_CONFIG = re.compile(r"all-(disabled|[1-9][0-9]*g\.[1-9][0-9]*gb)\Z")
# Cluster statuses that settle on their own.
TRANSITIONAL = ("Creating", "Updating", "Deleting", "SystemUpdating", "RollingBack")
EKS_ARN = re.compile(r"arn:aws[a-z\-]*:eks:[a-z0-9\-]*:[0-9]{12}:cluster/.+")
# Module option of an instance group -> why it cannot change on an existing group.
FIXED_GROUP_FIELDS = (
    ("execution_role", "AWS keeps the execution role an instance group was created with"),
    ("threads_per_core", "threads per core are set when the group's instances launch"),
    ("ebs_volume_size_gib", "the extra EBS volume is attached when the group's instances launch"),
    ("training_plan_arn", "the training plan is bound when the group's instances launch"),
)
# Assumption (the docs are silent): a group cannot switch between InstanceType and InstanceRequirements.
SWITCH_WHY = "AWS does not document switching an existing group between instance_type and instance_types (InstanceRequirements)"
# Members of an existing instance group this module does not manage, sent back unchanged.
# ClusterInstanceGroupDetails members a ClusterInstanceGroupSpecification takes unchanged.
PASS_THROUGH = (
    "InstanceStorageConfigs", "TrainingPlanArn", "OnStartDeepHealthChecks", "OverrideVpcConfig", "ScheduledUpdateConfig",
    "AutoPatchConfig", "NetworkInterface", "CapacityRequirements",
)
# Specification member <- the details member(s) that hold it, the desired value first.
RENAMED = (("ImageId", ("DesiredImageId", "CurrentImageId")), ("ImageReleaseVersion", ("DesiredImageReleaseVersion", "CurrentImageReleaseVersion")),
           ("MinInstanceCount", ("MinCount",)))
# Group members that may be unset (left alone) in the desired state.
OPTIONAL_GROUP_FIELDS = ("ebs_volume_size_gib", "training_plan_arn", "mig_config")
# Cluster members that may be unset (left alone) in the desired state.
OPTIONAL_CLUSTER_FIELDS = ("eks_cluster_arn", "subnet_ids", "security_group_ids", "node_recovery", "instance_groups",
                           "auto_scaling", "node_provisioning_mode", "cluster_role")


# The module's options (hyperpod.tenancy.hyperpod_cluster), also what validate_team_file checks the cluster file against.
INSTANCE_GROUP_OPTIONS = dict(
    name=dict(type="str", required=True),
    # Exactly one of instance_type and instance_types (group_type_problem names the group).
    instance_type=dict(type="str"),
    instance_types=dict(type="list", elements="str"),
    count=dict(type="int", required=True),
    execution_role=dict(type="str", required=True),
    lifecycle_config=dict(
        type="dict",
        required=True,
        options=dict(source_s3_uri=dict(type="str", required=True), on_create=dict(type="str", required=True)),
    ),
    threads_per_core=dict(type="int", default=1, choices=[1, 2]),
    ebs_volume_size_gib=dict(type="int"),
    training_plan_arn=dict(type="str"),
    mig_config=dict(type="str"),
)

ARGUMENT_SPEC = dict(
    state=dict(type="str", default="present", choices=["present", "absent"]),
    name=dict(type="str", required=True),
    eks_cluster=dict(type="str"),
    instance_groups=dict(type="list", elements="dict", options=INSTANCE_GROUP_OPTIONS),
    subnet_ids=dict(type="list", elements="str"),
    security_group_ids=dict(type="list", elements="str"),
    node_recovery=dict(type="str", choices=["automatic", "none"]),
    auto_scaling=dict(type="bool"),
    node_provisioning_mode=dict(type="str", choices=["continuous"]),
    cluster_role=dict(type="str"),
    tags=dict(type="dict", aliases=["resource_tags"]),
    purge_tags=dict(type="bool", default=True),
    allow_instance_group_removal=dict(type="bool", default=False),
    allow_replacement=dict(type="bool", default=False),
    wait=dict(type="bool", default=True),
    wait_timeout=dict(type="int", default=3600),
    data_bucket=dict(type="str"),
)
MODULE_OPTIONS = dict(argument_spec=ARGUMENT_SPEC)


# ---------------------------------------------------------------- where the lifecycle scripts are

# SourceS3Uri as botocore's model gives its pattern ((https|s3)://([^/]+)/?(.*), ClusterLifeCycleConfig, SageMaker API
# Reference). An https URI is virtual-hosted (https://<bucket>.s3.<region>.amazonaws.com/<key>) or path style
# (https://s3.<region>.amazonaws.com/<bucket>/<key>) ("Virtual hosting of general purpose buckets", S3 User Guide:
# https://docs.aws.amazon.com/AmazonS3/latest/userguide/VirtualHosting.html).
LIFECYCLE_URI = re.compile(r"(https|s3)://([^/]+)/?(.*)\Z", re.S)
_VIRTUAL_HOSTED = re.compile(r"(.+)\.s3([.-][a-z0-9-]+)*\.amazonaws\.com(\.cn)?\Z")
_PATH_STYLE = re.compile(r"s3([.-][a-z0-9-]+)*\.amazonaws\.com(\.cn)?\Z")


def s3_folder(uri):
    """(bucket, key prefix) of a SourceS3Uri, the prefix as the folder HyperPod reads the scripts from: "" for the bucket's
    root, else ending in "/" ("lifecycle" and "lifecycle/" are one: the sandbox, as HyperPod, reads <folder>/<OnCreate>).
    None when ``uri`` is no S3 location."""
    found = LIFECYCLE_URI.match(uri or "") if isinstance(uri, str) else None
    if not found:
        return None
    scheme, host, key = found.group(1), found.group(2).lower(), found.group(3)
    if scheme == "https":
        if _PATH_STYLE.match(host):
            host, unused_slash, key = key.partition("/")
        elif _VIRTUAL_HOSTED.match(host):
            host = _VIRTUAL_HOSTED.match(host).group(1)
    return host, key.rstrip("/") + "/" if key.strip("/") else ""


def lifecycle_location(uri, bucket):
    """The key prefix an instance group's SourceS3Uri ``uri`` names in ``bucket`` (``s3_folder``); None when ``uri``
    names another bucket or no S3 location."""
    folder = s3_folder(uri)
    return folder[1] if folder and folder[0] == bucket.lower() else None


def lifecycle_uri_problem(uri, data_bucket):
    """Why the lifecycle scripts at ``uri`` would be within a team's reach; None when they are not.

    HyperPod runs them as root on every node it creates or replaces, nodes every team shares. In the teams' data bucket
    a team's policies reach ``<team>/`` (team_policy, execution_role.team_data_policy), and a team may be named after any
    DNS label: only the platform's prefix (``naming.PLATFORM_PREFIX``), which no team name can spell, is out of every
    team's reach. Any other bucket is the platform's to protect.
    """
    if not isinstance(uri, str) or not isinstance(data_bucket, str) or not data_bucket:
        return None
    prefix = lifecycle_location(uri, data_bucket)
    if prefix is None:
        return None
    segments = prefix.split("/")[:-1]
    if prefix.startswith(naming.PLATFORM_PREFIX) and not set(segments) & set(("", ".", "..")):
        return None
    platform = "s3://%s/%s" % (data_bucket, naming.PLATFORM_PREFIX)
    if not prefix:
        where = "the root of the teams' data bucket %s" % data_bucket
    elif set(segments) & set(("", ".", "..")):
        where = "in the teams' data bucket %s, a path with an empty, '.' or '..' segment" % data_bucket
    elif re.fullmatch(naming.DNS_LABEL_PATTERN, segments[0]):
        where = "in the teams' data bucket %s, under %s/, the prefix a team named %r gets" % (data_bucket, segments[0], segments[0])
    else:
        where = "in the teams' data bucket %s, outside the platform's prefix %s" % (data_bucket, naming.PLATFORM_PREFIX)
    return (
        "%r is %s: HyperPod runs these scripts as root on every node the teams share. Keep them under %s (no team policy "
        "reaches it) or in a bucket of their own" % (uri, where, platform)
    )


def lifecycle_problems(params):
    """Each instance group whose lifecycle scripts the module's ``data_bucket`` (the teams' bucket) puts within a team's
    reach, one sentence each naming the group's field; checked before any call."""
    problems = []
    for index, group in enumerate(params.get("instance_groups") or []):
        problem = lifecycle_uri_problem(((group or {}).get("lifecycle_config") or {}).get("source_s3_uri"), params.get("data_bucket"))
        if problem:
            problems.append("instance_groups[%d].lifecycle_config.source_s3_uri (group %s): %s" % (index, group.get("name"), problem))
    return problems


# ---------------------------------------------------------------- what the options must be, checked before any call


def group_type_problem(group):
    """Why ``group`` (an instance group of the module's options, or normalized) does not set exactly one of
    ``instance_type`` and ``instance_types`` (ClusterInstanceGroupSpecification: "The InstanceType and
    InstanceRequirements properties are mutually exclusive"); None when it does."""
    fixed, flexible = group.get("instance_type"), group.get("instance_types")
    if fixed is not None and flexible is not None:
        return "set exactly one of instance_type and instance_types, not both"
    if fixed is None and flexible is None:
        return "set exactly one of instance_type and instance_types (neither is set)"
    if flexible is not None and not flexible:
        return "instance_types must list at least one instance type"
    if flexible is not None and len(set(flexible)) != len(flexible):
        return "instance_types lists an instance type twice: %s" % ", ".join(flexible)
    return None


def mig_config_problem(instance_types_list, value):
    """Why the MIG layout ``value`` (a group's ``mig_config``) cannot be applied to every instance type of
    ``instance_types_list``; None when it can, or when ``value`` is None (the label is left alone).

    ``value`` is ``all-disabled`` or ``all-<profile>``, the profile as AWS names it without ``mig-``
    (``all-1g.10gb`` is ``mig-1g.10gb``), one that instance_types.MIG_PROFILES lists for the GPU of every type the
    group allows: a flexible group's node may be any of them. AWS shows the value shape in "Node Lifecycle and
    Labels" (https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-eks-gpu-partitioning-labels.html,
    ``all-2g.10gb``). A type the collection's table does not know, or whose GPU has no MIG profile, is refused:
    the label would name a layout the node cannot take. Assumption: ``all-disabled`` too needs a MIG-capable GPU
    (the docs are silent; on other nodes the label means nothing).
    """
    if value is None:
        return None
    if not isinstance(value, str) or not MIG_CONFIG.match(value):
        return "%r must be all-disabled or all-<MIG profile>, for example all-1g.10gb" % (value,)
    layout = instance_types.mig_layout(value)
    for instance_type in instance_types_list:
        found = instance_types.spec(instance_type)
        if found is None:
            return "%s: instance type %s is not in the collection's instance table (instance_types.py), its GPU's MIG profiles are unknown" % (
                value, instance_type)
        profiles = instance_types.mig_profiles(instance_type)
        if not profiles:
            what = "has no GPU" if not found["accelerator"] else "has %s GPUs, which MIG cannot partition" % found["accelerator"]
            return "%s: instance type %s %s" % (value, instance_type, what)
        if layout != instance_types.MIG_DISABLED and layout not in profiles:
            return "%s: the %s GPUs of %s have no MIG profile %s (they have %s)" % (
                value, found["accelerator"], instance_type, layout[len("mig-"):], ", ".join(p[len("mig-"):] for p in sorted(profiles)))
    return None


def desired_problems(desired):
    """What the module refuses in ``desired`` (normalize_desired) before any call, one sentence each naming the option."""
    problems = []
    for group in desired.get("instance_groups") or []:
        where = "instance_groups[%s]" % group.get("name")
        problem = group_type_problem(group)
        if problem:
            problems.append("%s: %s" % (where, problem))
            continue
        problem = mig_config_problem(instance_types.group_instance_types(group), group.get("mig_config"))
        if problem:
            problems.append("%s.mig_config: %s" % (where, problem))
    if desired.get("auto_scaling"):
        # Prerequisites of "Autoscaling on SageMaker HyperPod EKS" (SageMaker AI Developer Guide), asked of the options
        # before any call; autoscaling_problems asks them again of the cluster after the run, with its role.
        guide = "a prerequisite of HyperPod's managed Karpenter autoscaling (\"Autoscaling on SageMaker HyperPod EKS\")"
        if desired.get("node_provisioning_mode") != "continuous":
            problems.append("auto_scaling: needs node_provisioning_mode: continuous, continuous provisioning being %s" % guide)
        if desired.get("node_recovery") == "none":
            problems.append("auto_scaling: needs node_recovery: automatic (NodeRecovery Automatic is %s), not none" % guide)
    return problems


def option_problems(params):
    """``desired_problems`` of the module's options, for the module to refuse before any call."""
    return desired_problems(normalize_desired(params))


class Plan(object):
    """What ``ensure_present`` will do. ``action`` is create, update, replace, none or refuse."""

    def __init__(self, action, after=None, request=None, changes=None, refusals=None, warnings=None, to_delete=None, tags_to_add=None, tags_to_remove=None):
        self.action = action
        self.after = after
        self.request = request
        self.changes = changes or []
        self.refusals = refusals or []
        self.warnings = warnings or []
        self.to_delete = to_delete or []
        self.tags_to_add = tags_to_add or {}
        self.tags_to_remove = tags_to_remove or []

    @property
    def changed(self):
        return self.action in ("create", "update", "replace") or bool(self.tags_to_add or self.tags_to_remove)


# ---------------------------------------------------------------- normalizing


def normalize_desired(params, eks_cluster_arn=None):
    """The module's options in the normalized shape; ``None`` means "leave alone".

    It makes no call and takes options desired_problems refuses (both or neither instance type), so that the
    problems can be named."""
    groups = None
    if params.get("instance_groups") is not None:
        groups = []
        for group in params["instance_groups"]:
            lifecycle = group.get("lifecycle_config") or {}
            groups.append(
                {
                    "name": group["name"],
                    "instance_type": group.get("instance_type"),
                    "instance_types": list(group["instance_types"]) if group.get("instance_types") is not None else None,
                    "count": group["count"],
                    "execution_role": group["execution_role"],
                    "lifecycle_config": {"source_s3_uri": lifecycle.get("source_s3_uri"), "on_create": lifecycle.get("on_create")},
                    "threads_per_core": group.get("threads_per_core") or 1,
                    "ebs_volume_size_gib": group.get("ebs_volume_size_gib"),
                    "training_plan_arn": group.get("training_plan_arn"),
                    "mig_config": group.get("mig_config"),
                }
            )
        groups.sort(key=lambda g: g["name"])
    return {
        "cluster_name": params["name"],
        "eks_cluster_arn": eks_cluster_arn,
        "subnet_ids": sorted(params["subnet_ids"]) if params.get("subnet_ids") is not None else None,
        "security_group_ids": sorted(params["security_group_ids"]) if params.get("security_group_ids") is not None else None,
        "node_recovery": params.get("node_recovery"),
        "auto_scaling": params.get("auto_scaling"),
        "node_provisioning_mode": params.get("node_provisioning_mode"),
        "cluster_role": params.get("cluster_role"),
        "instance_groups": groups,
        "tags": params.get("tags"),
    }


def _ebs_size(group):
    for config in group.get("InstanceStorageConfigs") or []:
        ebs = config.get("EbsVolumeConfig") or {}
        if not ebs.get("RootVolume") and ebs.get("VolumeSizeInGB") is not None:
            return ebs["VolumeSizeInGB"]
    return None


def _kubernetes(group, what):
    """A described group's Kubernetes ``Labels`` or ``Taints``: the desired ones, else the current ones (ClusterKubernetesConfigDetails)."""
    kubernetes = group.get("KubernetesConfig") or {}
    return kubernetes.get("Desired" + what) if kubernetes.get("Desired" + what) is not None else kubernetes.get("Current" + what)


def _described_types(group):
    """A described flexible group's instance types (DesiredInstanceTypes, else CurrentInstanceTypes); None for a fixed group."""
    requirements = group.get("InstanceRequirements")
    if not requirements:
        return None
    types = requirements.get("DesiredInstanceTypes") or requirements.get("CurrentInstanceTypes")
    return list(types) if types else None


def current_groups(description):
    """DescribeCluster's instance groups that stay (not being deleted), by name."""
    return dict((g["InstanceGroupName"], g) for g in description.get("InstanceGroups") or [] if g.get("Status") != "Deleting")


def normalize_current(description, tags):
    """DescribeCluster (and the cluster's tags as a dict) in the normalized shape."""
    if description is None:
        return None
    vpc = description.get("VpcConfig") or {}
    groups = []
    for name, group in sorted(current_groups(description).items()):
        lifecycle = group.get("LifeCycleConfig") or {}
        flexible = _described_types(group)
        groups.append(
            {
                "name": name,
                "instance_type": None if flexible else group.get("InstanceType"),
                "instance_types": flexible,
                "count": group.get("TargetCount"),
                "execution_role": group.get("ExecutionRole"),
                "lifecycle_config": {"source_s3_uri": lifecycle.get("SourceS3Uri"), "on_create": lifecycle.get("OnCreate")},
                "threads_per_core": group.get("ThreadsPerCore"),
                "ebs_volume_size_gib": _ebs_size(group),
                "training_plan_arn": group.get("TrainingPlanArn"),
                "mig_config": (_kubernetes(group, "Labels") or {}).get(MIG_LABEL),
            }
        )
    recovery = description.get("NodeRecovery")
    provisioning = description.get("NodeProvisioningMode")
    return {
        "cluster_name": description.get("ClusterName"),
        "eks_cluster_arn": ((description.get("Orchestrator") or {}).get("Eks") or {}).get("ClusterArn"),
        "subnet_ids": sorted(vpc.get("Subnets") or []),
        "security_group_ids": sorted(vpc.get("SecurityGroupIds") or []),
        "node_recovery": recovery.lower() if recovery else None,
        "auto_scaling": (description.get("AutoScaling") or {}).get("Mode") == "Enable",
        "node_provisioning_mode": provisioning.lower() if provisioning else None,
        "cluster_role": description.get("ClusterRole"),
        "instance_groups": groups,
        "tags": dict(tags or {}),
    }


# ---------------------------------------------------------------- requests


def group_spec(group, current=None):
    """A ClusterInstanceGroupSpecification for ``group`` (normalized); ``current`` is its DescribeCluster entry."""
    spec = {"InstanceGroupName": group["name"]}
    if group.get("instance_types") is not None:
        # The order is the priority HyperPod provisions in (ClusterInstanceRequirements).
        spec["InstanceRequirements"] = {"InstanceTypes": list(group["instance_types"])}
    else:
        spec["InstanceType"] = group["instance_type"]
    spec.update({
        "InstanceCount": group["count"],
        "ExecutionRole": group["execution_role"],
        "LifeCycleConfig": {"SourceS3Uri": group["lifecycle_config"]["source_s3_uri"], "OnCreate": group["lifecycle_config"]["on_create"]},
        "ThreadsPerCore": group["threads_per_core"],
    })
    if current is not None:
        spec.update(kept_members(current))
    else:
        if group.get("ebs_volume_size_gib") is not None:
            spec["InstanceStorageConfigs"] = [{"EbsVolumeConfig": {"VolumeSizeInGB": group["ebs_volume_size_gib"]}}]
        if group.get("training_plan_arn"):
            spec["TrainingPlanArn"] = group["training_plan_arn"]
    if group.get("mig_config") is not None:
        # The one label the module manages, merged into the labels set outside it ("Node Lifecycle and Labels").
        kubernetes = spec.setdefault("KubernetesConfig", {})
        kubernetes["Labels"] = dict(kubernetes.get("Labels") or {}, **{MIG_LABEL: group["mig_config"]})
    return spec


def kept_members(current):
    """The specification members of a described instance group that the module does not manage, to send again."""
    kept = dict((key, copy.deepcopy(current[key])) for key in PASS_THROUGH if current.get(key) is not None)
    for key, sources in RENAMED:
        value = next((current[source] for source in sources if current.get(source) is not None), None)
        if value is not None:
            kept[key] = value
    kubernetes = current.get("KubernetesConfig")
    if kubernetes:
        labels, taints = _kubernetes(current, "Labels"), _kubernetes(current, "Taints")
        config = {}
        if labels:
            config["Labels"] = copy.deepcopy(labels)
        if taints:
            config["Taints"] = copy.deepcopy(taints)
        if config:
            kept["KubernetesConfig"] = config
    return kept


def _auto_scaling(enabled):
    """ClusterAutoScalingConfig: Mode Enable or Disable, with the one AutoScalerType botocore lists."""
    return {"Mode": "Enable" if enabled else "Disable", "AutoScalerType": AUTOSCALER}


# The cluster-level options and the request member each is sent as: on creation when set, on an update when changed.
CLUSTER_MEMBERS = (
    ("node_recovery", "NodeRecovery", NODE_RECOVERY.get),
    ("node_provisioning_mode", "NodeProvisioningMode", NODE_PROVISIONING.get),
    ("cluster_role", "ClusterRole", str),
    ("auto_scaling", "AutoScaling", _auto_scaling),
)


def _cluster_members(state, keys):
    """The request members of the cluster-level options ``keys`` of ``state`` (normalized)."""
    return dict((member, value_of(state[key])) for key, member, value_of in CLUSTER_MEMBERS if key in keys)


def create_request(desired):
    request = {
        "ClusterName": desired["cluster_name"],
        "InstanceGroups": [group_spec(g) for g in desired["instance_groups"]],
        "VpcConfig": {"Subnets": list(desired["subnet_ids"]), "SecurityGroupIds": list(desired["security_group_ids"])},
        "Orchestrator": {"Eks": {"ClusterArn": desired["eks_cluster_arn"]}},
    }
    # AutoScaling is left out when off: a cluster created without it has none (CreateCluster, SageMaker API Reference).
    request.update(_cluster_members(desired, [key for key, unused_member, unused_value in CLUSTER_MEMBERS if desired.get(key)]))
    if desired.get("tags"):
        request["Tags"] = sagemaker.tag_list(desired["tags"])
    return request


def update_request(after, description, to_delete, cluster_changed=()):
    """UpdateCluster for ``after``; ``cluster_changed`` names the cluster-level options (CLUSTER_MEMBERS) that changed,
    each sent only then."""
    existing = current_groups(description)
    request = {
        "ClusterName": description["ClusterName"],
        "InstanceGroups": [group_spec(g, existing.get(g["name"])) for g in after["instance_groups"]],
    }
    if to_delete:
        request["InstanceGroupsToDelete"] = list(to_delete)
    request.update(_cluster_members(after, cluster_changed))
    return request


def option_path(problem, operation, request):
    """``CreateCluster.InstanceGroups[1].InstanceType: ...`` as ``instance_groups[gpu].InstanceType: ...``."""
    names = [g.get("InstanceGroupName") for g in request.get("InstanceGroups") or []]

    def group(match):
        index = int(match.group(1))
        return "instance_groups[%s]" % (names[index] if index < len(names) else index)

    problem = re.sub(r"^%s\.InstanceGroups\[(\d+)\]" % operation, group, problem)
    return re.sub(r"^%s\." % operation, "", problem)


# ---------------------------------------------------------------- planning


def _fill_unset(desired, current):
    """``desired`` with what the user left unset taken from ``current`` (the state after the run)."""
    after = copy.deepcopy(desired)
    for key in OPTIONAL_CLUSTER_FIELDS:
        if after[key] is None:
            after[key] = copy.deepcopy(current[key])
    existing = dict((g["name"], g) for g in current["instance_groups"])
    for group in after["instance_groups"]:
        if group["name"] in existing:
            for key in OPTIONAL_GROUP_FIELDS:
                if group[key] is None:
                    group[key] = existing[group["name"]][key]
    return after


def created_after(desired):
    """What DescribeCluster shows, normalized, once ``desired`` is created."""
    after = copy.deepcopy(desired)
    after["node_recovery"] = after["node_recovery"] or "automatic"
    after["auto_scaling"] = bool(after["auto_scaling"])
    after["tags"] = dict(after["tags"] or {})
    return after


def _creation_problems(desired):
    needed = (
        ("eks_cluster", desired["eks_cluster_arn"]),
        ("instance_groups", desired["instance_groups"]),
        ("subnet_ids", desired["subnet_ids"]),
        ("security_group_ids", desired["security_group_ids"]),
    )
    missing = [key for key, value in needed if not value]
    if missing:
        return ["%s: required to create cluster %s" % (", ".join(missing), desired["cluster_name"])]
    return []


def _group_problems(desired):
    names = [g["name"] for g in desired["instance_groups"] or []]
    duplicates = sorted(set(n for n in names if names.count(n) > 1))
    if duplicates:
        return ["instance_groups: names must be unique; repeated: %s" % ", ".join(duplicates)]
    if desired["instance_groups"] is not None and not names:
        return ["instance_groups: a cluster needs at least one instance group"]
    return []


def autoscaling_problems(after, current):
    """What AWS requires of the cluster ``after`` the run for autoscaling (the guide's prerequisites, and ClusterRole:
    "only required when autoscaling is enabled", CreateCluster), and a ClusterRole that "Cannot be updated while
    autoscaling is enabled" (UpdateCluster). ``current`` is None for a cluster to be created."""
    problems = []
    if after["auto_scaling"]:
        if after["node_provisioning_mode"] != "continuous":
            problems.append("auto_scaling: needs node_provisioning_mode: continuous (cluster %s has no continuous provisioning)" % after["cluster_name"])
        if after["node_recovery"] != "automatic":
            problems.append("auto_scaling: needs node_recovery: automatic (cluster %s has node recovery %s)" % (after["cluster_name"], after["node_recovery"]))
        if not after["cluster_role"]:
            problems.append("cluster_role: required with auto_scaling: true, the IAM role HyperPod assumes to add and remove nodes (ClusterRole)")
    if current is not None and current["auto_scaling"] and after["cluster_role"] != current["cluster_role"]:
        problems.append(
            "cluster_role: cannot be changed while autoscaling is enabled (UpdateCluster ClusterRole; current %s, requested %s); "
            "set auto_scaling: false in one run and change the role in the next" % (current["cluster_role"], after["cluster_role"]))
    return problems


def _types_text(group):
    return "/".join(instance_types.group_instance_types(group)) or "no instance type"


def _plan_creation(desired):
    """The Plan for a cluster that does not exist yet: create it, or refuse what creation lacks."""
    problems = _creation_problems(desired)
    if problems:
        return Plan("refuse", refusals=problems)
    after = created_after(desired)
    problems = autoscaling_problems(after, None)
    if problems:
        return Plan("refuse", refusals=problems)
    return Plan("create", after=after, request=create_request(after), changes=["create cluster %s" % desired["cluster_name"]])


def _tag_changes(desired, current, purge_tags):
    """The tags to add and the tag keys to remove, (tags_to_add, tags_to_remove); none when the tags option is unset."""
    if desired["tags"] is None:
        return {}, []
    return compare_aws_tags(current["tags"], desired["tags"], purge_tags)


def _tags_after(current_tags, tags_to_add, tags_to_remove):
    """The cluster's tags once the tags are added and removed."""
    tags = dict((k, v) for k, v in current_tags.items() if k not in tags_to_remove)
    tags.update(tags_to_add)
    return tags


def _fixed_cluster_changes(description, current, after):
    """The cluster-level changes AWS cannot make in place (a Failed cluster cannot be updated at all), as sentences."""
    fixed = []
    status = description.get("ClusterStatus")
    if status == "Failed":
        reason = description.get("FailureMessage") or "no reason given"
        fixed.append("cluster_status: cluster %s is Failed (%s) and cannot be updated" % (current["cluster_name"], reason))
    if after["eks_cluster_arn"] != current["eks_cluster_arn"]:
        fixed.append("eks_cluster: the orchestrator (Orchestrator.Eks.ClusterArn) of a cluster cannot be changed after creation (current %s, requested %s)"
                     % (current["eks_cluster_arn"], after["eks_cluster_arn"]))
    for key, member in (("subnet_ids", "Subnets"), ("security_group_ids", "SecurityGroupIds")):
        if after[key] != current[key]:
            fixed.append("%s: VpcConfig.%s cannot be changed in place, UpdateCluster has no VpcConfig (current %s, requested %s)"
                         % (key, member, ", ".join(current[key]), ", ".join(after[key])))
    return fixed


def _keep_autoscaled_counts(after, existing):
    """With autoscaling on, give each existing group in ``after`` the count it has now (``existing``, by name)."""
    if not after["auto_scaling"]:
        return
    # Karpenter moves an autoscaling group's count with the pending pods, from the 0 it starts at ("Create a
    # NodeClass": https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-eks-autoscaling-nodeclass.html):
    # the count of an existing group stays where Karpenter has it, or every run would scale the group back down, and
    # the run that turns autoscaling on leaves the running nodes to Karpenter's disruption rules rather than
    # terminating them at once.
    for group in after["instance_groups"]:
        if group["name"] in existing:
            group["count"] = existing[group["name"]]["count"]


def _fixed_group_changes(after, existing):
    """The changes to existing instance groups that AWS cannot make in place, as sentences."""
    fixed = []
    for group in after["instance_groups"]:
        was = existing.get(group["name"])
        if was is None:
            continue
        for key, why in FIXED_GROUP_FIELDS:
            if group[key] != was[key]:
                fixed.append(
                    "instance_groups[%s].%s: cannot be changed in place, %s (current %s, requested %s)" % (group["name"], key, why, was[key], group[key])
                )
        if (group["instance_types"] is None) != (was["instance_types"] is None):
            fixed.append("instance_groups[%s].instance_types: cannot be changed in place, %s (current %s, requested %s)"
                         % (group["name"], SWITCH_WHY, _types_text(was), _types_text(group)))
    return fixed


def _populated_removal_problems(removed, described):
    """The refusal to remove the ``removed`` groups that still have nodes (``described``: current_groups), as a list."""
    populated = [name for name in removed if (described[name].get("CurrentCount") or 0) > 0]
    if not populated:
        return []
    return [
        "instance_groups: removing instance group%s %s would delete %s; set allow_instance_group_removal: true to remove %s"
        % ("s" if len(populated) > 1 else "", ", ".join(populated),
           ", ".join("%d nodes of %s" % (described[n]["CurrentCount"], n) for n in populated), "them" if len(populated) > 1 else "it")
    ]


def _group_changes(after, existing, removed):
    """The instance groups UpdateCluster adds, changes in place and removes, as sentences."""
    changes = []
    for group in after["instance_groups"]:
        was = existing.get(group["name"])
        if was is None:
            changes.append("instance_groups[%s]: add (%d x %s)" % (group["name"], group["count"], _types_text(group)))
            continue
        # A flexible group's list changes in place: UpdateCluster records DesiredInstanceTypes (ClusterInstanceRequirementDetails).
        for key in ("instance_type", "instance_types", "count", "lifecycle_config", "mig_config"):
            if group[key] != was[key]:
                changes.append("instance_groups[%s].%s: %s -> %s" % (group["name"], key, was[key], group[key]))
    changes.extend("instance_groups[%s]: remove" % name for name in removed)
    return changes


def plan_cluster(desired, description, current_tags=None, allow_replacement=False, allow_instance_group_removal=False, purge_tags=True):
    """Compare ``desired`` (normalize_desired) with DescribeCluster's ``description`` and return a Plan."""
    problems = _group_problems(desired)
    if problems:
        return Plan("refuse", refusals=problems)
    if description is None:
        return _plan_creation(desired)

    current = normalize_current(description, current_tags)
    after = _fill_unset(desired, current)
    tags_to_add, tags_to_remove = _tag_changes(desired, current, purge_tags)
    after["tags"] = _tags_after(current["tags"], tags_to_add, tags_to_remove)

    existing = dict((g["name"], g) for g in current["instance_groups"])
    fixed = _fixed_cluster_changes(description, current, after)  # changes AWS cannot make in place
    _keep_autoscaled_counts(after, existing)
    fixed.extend(_fixed_group_changes(after, existing))

    refusals = []
    # Not replaceable: these hold for the cluster a replacement would create too, or need another run first.
    refusals.extend(autoscaling_problems(after, None if fixed else current))
    wanted = set(g["name"] for g in after["instance_groups"])
    removed = sorted(name for name in existing if name not in wanted)
    if not allow_instance_group_removal:
        refusals.extend(_populated_removal_problems(removed, current_groups(description)))
    if fixed and not allow_replacement:
        refusals.extend("%s; set allow_replacement: true to delete and recreate the cluster" % reason for reason in fixed)
    if refusals:
        return Plan("refuse", refusals=refusals)
    tag_kwargs = dict(tags_to_add=tags_to_add, tags_to_remove=tags_to_remove)
    if fixed:
        warning = "Replacing cluster %s (deleting it and every node, then creating it again) because: %s" % (current["cluster_name"], "; ".join(fixed))
        request = create_request(after)
        return Plan("replace", after=after, request=request, changes=fixed, warnings=[warning])

    changes = _group_changes(after, existing, removed)
    # Assumption for node_provisioning_mode: the docs are silent on enabling continuous provisioning on an existing EKS
    # cluster; UpdateCluster has the member (botocore's model), so it is sent there. Its one value cannot be unset.
    cluster_changed = [key for key, unused_member, unused_value in CLUSTER_MEMBERS if after[key] != current[key]]
    changes.extend("%s: %s -> %s" % (key, current[key], after[key]) for key in cluster_changed)
    if not changes:
        return Plan("none", after=after, **tag_kwargs)
    request = update_request(after, description, removed, cluster_changed)
    return Plan("update", after=after, request=request, changes=changes, to_delete=removed, **tag_kwargs)


def predicted_description(after, description, action):
    """DescribeCluster as it will read once ``after`` has settled (for check mode's ``cluster``)."""
    predicted = copy.deepcopy(description) if description and action != "replace" else {}
    predicted["ClusterName"] = after["cluster_name"]
    predicted["ClusterStatus"] = {"create": "Creating", "replace": "Creating", "update": "Updating"}.get(action, predicted.get("ClusterStatus"))
    predicted["Orchestrator"] = {"Eks": {"ClusterArn": after["eks_cluster_arn"]}}
    predicted["VpcConfig"] = {"SecurityGroupIds": list(after["security_group_ids"]), "Subnets": list(after["subnet_ids"])}
    for member in ("NodeProvisioningMode", "ClusterRole"):
        predicted.pop(member, None)
    predicted.update(_cluster_members(after, [key for key in ("node_recovery", "node_provisioning_mode", "cluster_role") if after[key]]))
    if after["auto_scaling"] or (predicted.get("AutoScaling") or {}).get("Mode") == "Enable":
        predicted["AutoScaling"] = dict(_auto_scaling(after["auto_scaling"]), Status="InService")
    existing = current_groups(description) if description and action != "replace" else {}
    groups = []
    for group in after["instance_groups"]:
        detail = group_spec(group, existing.get(group["name"]))
        detail["TargetCount"] = detail["CurrentCount"] = detail.pop("InstanceCount")
        detail["Status"] = "InService"
        # The specification's members in the shape DescribeCluster gives them (ClusterInstanceGroupDetails).
        if "InstanceRequirements" in detail:
            types = detail["InstanceRequirements"]["InstanceTypes"]
            detail["InstanceRequirements"] = {"CurrentInstanceTypes": list(types), "DesiredInstanceTypes": list(types)}
        if "KubernetesConfig" in detail:
            kubernetes = detail.pop("KubernetesConfig")
            detail["KubernetesConfig"] = {"CurrentLabels": kubernetes.get("Labels") or {}, "DesiredLabels": kubernetes.get("Labels") or {},
                                          "CurrentTaints": kubernetes.get("Taints") or [], "DesiredTaints": kubernetes.get("Taints") or []}
        groups.append(detail)
    predicted["InstanceGroups"] = groups
    return predicted


def cluster_result(description, tags):
    """The ``cluster`` the module returns: DescribeCluster in snake_case, with the tags as a dict."""
    if not description:
        return {}
    result = snake(dict((k, v) for k, v in description.items() if k != "ResponseMetadata"))
    result["tags"] = dict(tags or {})
    return result


# ---------------------------------------------------------------- API helpers


def resolve_eks_cluster(client, eks_cluster):
    """The ARN of ``eks_cluster`` (a name or an ARN); a name is looked up with eks DescribeCluster."""
    if eks_cluster is None or EKS_ARN.match(eks_cluster):
        return eks_cluster
    found = eks.describe_cluster(client, name=eks_cluster)
    if found is None:
        raise InputError(message="eks_cluster: EKS cluster %s was not found" % eks_cluster)
    return found["arn"]


# ---------------------------------------------------------------- running the plan


class Cluster(engine.Resource):
    """The cluster as the engine converges it: ``raw`` is ``{"description": DescribeCluster, "tags": ListTags}``.

    ``wanted`` is ``normalize_desired``'s; ``params`` the module's (``name``, ``wait``, ``wait_timeout``,
    ``allow_replacement``, ``allow_instance_group_removal``, ``purge_tags``). A transition another run started is
    waited out before anything is planned, so the plan compares settled states.
    """

    label = "cluster"

    def __init__(self, client, params, check_mode=False, warn=None, wanted=None):
        super(Cluster, self).__init__(client, params, check_mode, warn, timeout=3600)
        self.name = params["name"]
        self.wanted = wanted
        self.state = params.get("state", "present")
        self.plan = None

    def prepare(self, state):
        self.state = state
        problems = request_problems(self.client.meta.service_model, "CreateCluster", {"ClusterName": self.name})
        if problems:
            raise InputError(message="name: %s" % "; ".join(option_path(p, "CreateCluster", {}) for p in problems))

    def describe(self):
        return sagemaker.describe_cluster(self.client, ClusterName=self.name)

    def wait_for(self, ready, failed=("Failed",)):
        return wait_for_status(
            self.describe, "cluster %s" % self.name, ready, failed=failed, timeout=self.timeout, status_key="ClusterStatus", reason_key="FailureMessage",
        )

    def read(self, fresh=False):
        description = self.describe()
        if description is not None and description.get("ClusterStatus") in TRANSITIONAL and self.waiting and not self.check_mode:
            description = self.wait_for((GONE,) if description["ClusterStatus"] == "Deleting" else ("InService", "Failed"), failed=())
        deleting = description is not None and description.get("ClusterStatus") == "Deleting"
        if self.state == "present" and deleting:
            if not (self.check_mode and self.waiting):
                raise InputError(message="Cannot create cluster %s while the previous one is Deleting; run again with wait: true, or later" % self.name)
            return None  # check mode with wait: the real run waits for it to go, then creates
        return self._raw(description)

    def _raw(self, description):
        return {"description": description, "tags": sagemaker.list_tags(self.client, description["ClusterArn"])} if description else None

    def going(self, raw):
        return raw["description"].get("ClusterStatus") == "Deleting"

    def view(self, raw):
        return (normalize_current(raw["description"], raw["tags"]) or {}) if raw else {}

    def desired(self, raw):
        description, tags = (raw["description"], raw["tags"]) if raw else (None, {})
        p = self.params
        self.plan = plan = plan_cluster(self.wanted, description, tags, p["allow_replacement"], p["allow_instance_group_removal"], p["purge_tags"])
        if plan.action == "refuse":
            raise InputError(message="Cannot apply cluster %s: %s" % (self.name, "; ".join(plan.refusals)))
        operation = {"create": "CreateCluster", "replace": "CreateCluster", "update": "UpdateCluster"}.get(plan.action)
        if operation:
            problems = [option_path(p, operation, plan.request) for p in request_problems(self.client.meta.service_model, operation, plan.request)]
            if problems:
                raise InputError(message="%s would be rejected: %s" % (operation, "; ".join(problems)))
        status = (description or {}).get("ClusterStatus")
        if plan.action == "update" and status != "InService" and not (self.check_mode and self.waiting):
            raise InputError(
                message="Cannot update cluster %s while it is %s (UpdateCluster needs InService); run again with wait: true, or later" % (self.name, status)
            )
        if plan.changed:
            for warning in plan.warnings:
                self.warn(warning)
        return plan.after

    def moves(self, raw, desired):
        return self.plan.changed

    def predict(self, raw, desired):
        return {"description": predicted_description(desired, raw and raw["description"], self.plan.action), "tags": desired["tags"]}

    def create(self, desired):
        sagemaker.create_cluster(self.client, **self.plan.request)

    def update(self, raw, desired):
        plan, arn = self.plan, raw["description"]["ClusterArn"]
        if plan.action == "replace":
            sagemaker.delete_cluster(self.client, ClusterName=self.name)
            self.wait_for((GONE,), failed=())
            sagemaker.create_cluster(self.client, **plan.request)
        elif plan.action == "update":
            sagemaker.update_cluster(self.client, **plan.request)
        if plan.action in ("none", "update"):
            if plan.tags_to_remove:
                sagemaker.delete_tags(self.client, arn, plan.tags_to_remove)
            if plan.tags_to_add:
                sagemaker.add_tags(self.client, arn, plan.tags_to_add)
        return plan.action != "none"

    def read_back(self, handle, settle):
        return self._raw(self.wait_for(("InService",), failed=("Failed", "RollingBack")) if settle else self.describe())

    def delete(self, raw):
        sagemaker.delete_cluster(self.client, ClusterName=self.name)
        return True

    def wait_gone(self, raw):
        self.wait_for((GONE,), failed=())

    def result(self, raw):
        return cluster_result(raw["description"], raw["tags"]) if raw else {}
