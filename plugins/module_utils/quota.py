# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""A team's Task Governance compute quota: options <-> API shape, comparison, capacity, and the calls.

The pure functions (``to_api_*``, ``comparable``, ``input_problems``, ``capacity_*``) are
unit-tested without AWS; ``ensure_present`` / ``ensure_absent`` drive a boto3 client.

Capacity is counted from ``DescribeCluster``: per instance type, the sum of the instance
groups' ``TargetCount`` (what the cluster is configured to run). ``CurrentCount`` dips while
HyperPod replaces a faulty node or while a group is still being created, and a quota that
fits the configured cluster must not start failing then. Each quota is added up against it as
the instances it takes: ``count``, or for fine-grained amounts (accelerators, vCPU, memory,
MIG partitions) the largest share of an instance they take in any unit (instance_types: the
table of instance types and AWS's ratio for what a guarantee leaves out); a fine-grained
amount the table cannot count is refused. Quotas that are ``Disabled`` guarantee
nothing and are left out of the sum, ours included. The option ``cluster_capacity`` gives that
sum already counted (``hyperpod.tenancy.shared_info`` describes the cluster once per run); the
cluster is then not described, and ``cluster`` must be its ARN.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

from ansible_collections.amazon.aws.plugins.module_utils.tagging import compare_aws_tags

from ansible_collections.hyperpod.tenancy.plugins.module_utils import engine, naming, sagemaker
from ansible_collections.hyperpod.tenancy.plugins.module_utils import instance_types as instance_table
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import (
    NAME_PREFIX, REQUIRED, STATE, TAGS, TEAM_TAGS, known_value, options, team_section, wait,
)
from ansible_collections.hyperpod.tenancy.plugins.module_utils.compare import snake, without
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import ConflictError, InputError, SageMakerError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import result
from ansible_collections.hyperpod.tenancy.plugins.module_utils.waiters import GONE, read_settled, wait_for_status

SHARING = {"lend": "Lend", "dont_lend": "DontLend", "lend_and_borrow": "LendAndBorrow"}
PREEMPT = {"never": "Never", "lower_priority": "LowerPriority"}
ACTIVATION = {"enabled": "Enabled", "disabled": "Disabled"}

# What AWS fills in when a request leaves a member out (botocore's documentation).
API_DEFAULTS = {"Strategy": "LendAndBorrow", "BorrowLimit": 50, "PreemptTeamTasks": "LowerPriority", "FairShareWeight": 0, "ActivationState": "Enabled"}

TRANSITIONAL = ("Creating", "Updating", "Deleting")
# A deleted quota is gone, or still listed and described with status Deleted: AWS's API reference lists
# Deleted among the ComputeQuota statuses (and as a ListComputeQuotas Status filter) without saying how
# long it is kept. Both mean the same here: a Deleted quota takes no writes and holds no name or team.
DELETED = (GONE, "Deleted")
SETTLED = ("Created", "Updated")
FAILED = ("CreateFailed", "CreateRollbackFailed", "UpdateFailed", "UpdateRollbackFailed", "DeleteFailed", "DeleteRollbackFailed")

# botocore's limits (ComputeQuotaResourceConfig, ResourceSharingConfig, ComputeQuotaTarget, EntityDescription).
MAX_RESOURCES = 15
# BorrowLimit: "The values can be 1 - 500 percent of idle compute that the team is allowed to borrow" (API reference,
# https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ResourceSharingConfig.html); the model says 0-10000.
BORROW_LIMIT_RANGE = (1, 500)
WEIGHT_RANGE = (0, 100)
CLUSTER_ARN_PATTERN = r"arn:aws[a-z\-]*:sagemaker:[a-z0-9\-]*:[0-9]{12}:cluster/[a-z0-9]{12}"
AMOUNTS = (("count", "Count", int), ("accelerators", "Accelerators", int), ("vcpu", "VCpu", float), ("memory_gib", "MemoryInGiB", float))


# ---------------------------------------------------------------- options <-> API shape


def to_api_resource(resource):
    """One ``resources`` entry of the module as a ComputeQuotaResourceConfig."""
    api = {"InstanceType": resource["instance_type"]}
    for option, member, kind in AMOUNTS:
        if resource.get(option) is not None:
            api[member] = kind(resource[option])
    partition = resource.get("accelerator_partition")
    if partition:
        api["AcceleratorPartition"] = {"Type": partition["type"], "Count": int(partition["count"])}
    return api


def from_api_resource(api):
    resource = {"instance_type": api["InstanceType"]}
    for option, member, kind in AMOUNTS:
        if api.get(member) is not None:
            resource[option] = kind(api[member])
    if api.get("AcceleratorPartition"):
        resource["accelerator_partition"] = {"type": api["AcceleratorPartition"]["Type"], "count": api["AcceleratorPartition"]["Count"]}
    return resource


def _sorted_resources(resources):
    return sorted((copy.deepcopy(r) for r in resources or []), key=lambda r: r["InstanceType"])


def _number(value):
    """AWS answers floats for VCpu/MemoryInGiB; 8 and 8.0 are the same request."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _normalize_resource(api):
    result = dict((k, _number(v)) for k, v in api.items() if k != "AcceleratorPartition" and v is not None)
    if api.get("AcceleratorPartition"):
        result["AcceleratorPartition"] = dict(api["AcceleratorPartition"])
    return result


def current_settings(quota):
    """The members of a described quota that this collection manages, defaults filled in."""
    if not quota:
        return None
    config = quota.get("ComputeQuotaConfig") or {}
    sharing = dict(config.get("ResourceSharingConfig") or {"Strategy": API_DEFAULTS["Strategy"]})
    if sharing.get("Strategy") == "LendAndBorrow" and sharing.get("BorrowLimit") is None:
        sharing["BorrowLimit"] = API_DEFAULTS["BorrowLimit"]
    if sharing.get("AbsoluteBorrowLimits"):
        sharing["AbsoluteBorrowLimits"] = [_normalize_resource(r) for r in _sorted_resources(sharing["AbsoluteBorrowLimits"])]
    else:
        sharing.pop("AbsoluteBorrowLimits", None)
    target = quota.get("ComputeQuotaTarget") or {}
    settings = {
        "ComputeQuotaConfig": {
            "ComputeQuotaResources": [_normalize_resource(r) for r in _sorted_resources(config.get("ComputeQuotaResources"))],
            "ResourceSharingConfig": sharing,
            "PreemptTeamTasks": config.get("PreemptTeamTasks") or API_DEFAULTS["PreemptTeamTasks"],
        },
        "ComputeQuotaTarget": {
            "TeamName": target.get("TeamName"),
            "FairShareWeight": target.get("FairShareWeight", API_DEFAULTS["FairShareWeight"]),
        },
        "ActivationState": quota.get("ActivationState") or API_DEFAULTS["ActivationState"],
    }
    if quota.get("Description") is not None:
        settings["Description"] = quota["Description"]
    return settings


def desired_settings(params, current=None):
    """What the quota should look like: ``params`` over ``current`` (an unset option is left alone).

    ``current`` is ``current_settings(...)`` of the existing quota, or None for a new one, whose
    unset options take AWS's documented defaults. Returns the same shape as ``current_settings``.
    """
    base = copy.deepcopy(current) if current else current_settings({"ComputeQuotaTarget": {"TeamName": params["team"]}})
    config = base["ComputeQuotaConfig"]
    if params.get("resources") is not None:
        config["ComputeQuotaResources"] = [_normalize_resource(to_api_resource(r)) for r in params["resources"]]
        config["ComputeQuotaResources"].sort(key=lambda r: r["InstanceType"])
    sharing = config["ResourceSharingConfig"]
    if params.get("sharing") is not None and SHARING[params["sharing"]] != sharing.get("Strategy"):
        sharing = {"Strategy": SHARING[params["sharing"]]}
        if sharing["Strategy"] == "LendAndBorrow":
            sharing["BorrowLimit"] = API_DEFAULTS["BorrowLimit"]
    if params.get("borrow_limit") is not None:
        sharing["BorrowLimit"] = params["borrow_limit"]
    if params.get("absolute_borrow_limits") is not None:
        limits = [_normalize_resource(to_api_resource(r)) for r in params["absolute_borrow_limits"]]
        if limits:
            sharing["AbsoluteBorrowLimits"] = sorted(limits, key=lambda r: r["InstanceType"])
        else:
            sharing.pop("AbsoluteBorrowLimits", None)
    config["ResourceSharingConfig"] = sharing
    if params.get("preempt") is not None:
        config["PreemptTeamTasks"] = PREEMPT[params["preempt"]]
    if params.get("fair_share_weight") is not None:
        base["ComputeQuotaTarget"]["FairShareWeight"] = params["fair_share_weight"]
    base["ComputeQuotaTarget"]["TeamName"] = params["team"]
    if params.get("activation") is not None:
        base["ActivationState"] = ACTIVATION[params["activation"]]
    if params.get("description") is not None:
        base["Description"] = params["description"]
    return base


def comparable(settings, tags=None):
    """``settings`` (and tags) as returned in ``diff``: snake_case, nothing the server manages."""
    if settings is None:
        return {}
    result = snake(without(settings))
    if tags is not None:
        result["tags"] = dict(tags)
    return result


# ---------------------------------------------------------------- input checks (before any call)


def _resource_problems(where, resources, instance_types=None, mig_profiles=None):
    problems = []
    seen = set()
    if len(resources) > MAX_RESOURCES:
        problems.append("%s: at most %d instance types, got %d" % (where, MAX_RESOURCES, len(resources)))
    for index, resource in enumerate(resources):
        label = "%s[%d]" % (where, index)
        instance_type = resource.get("instance_type")
        if not instance_type:
            problems.append("%s.instance_type is required" % label)
        elif instance_type in seen:
            problems.append("%s.instance_type: %s is listed twice" % (label, instance_type))
        elif instance_types and instance_type not in instance_types:
            problems.append("%s.instance_type: %s is not a HyperPod instance type" % (label, instance_type))
        seen.add(instance_type)
        amounts = [option for option, _member, _kind in AMOUNTS if resource.get(option) is not None]
        if resource.get("accelerator_partition"):
            amounts.append("accelerator_partition")
        if not amounts:
            problems.append("%s: give count, or accelerators/vcpu/memory_gib/accelerator_partition" % label)
        if "count" in amounts and len(amounts) > 1:
            problems.append("%s: count (whole instances) cannot be combined with %s" % (label, ", ".join(a for a in amounts if a != "count")))
        for option, _member, _kind in AMOUNTS:
            value = resource.get(option)
            if value is not None and not 0 <= value <= instance_table.MAX_AMOUNT:
                problems.append("%s.%s: %s is outside 0..%d" % (label, option, value, instance_table.MAX_AMOUNT))
        partition = resource.get("accelerator_partition")
        if partition:
            if not partition.get("type") or partition.get("count") is None:
                problems.append("%s.accelerator_partition needs type and count" % label)
            elif mig_profiles and partition["type"] not in mig_profiles:
                problems.append("%s.accelerator_partition.type: %s is not a MIG profile (%s)" % (label, partition["type"], ", ".join(mig_profiles)))
            elif not 0 <= partition["count"] <= instance_table.MAX_AMOUNT:
                problems.append("%s.accelerator_partition.count: %s is outside 0..%d" % (label, partition["count"], instance_table.MAX_AMOUNT))
    return problems


def input_problems(params, current=None, instance_types=None, mig_profiles=None):
    """Everything wrong with the module's options, as sentences; empty when they can be sent.

    ``current`` (current_settings of the existing quota, or None) decides the sharing
    strategy in force when ``sharing`` is not given. ``instance_types`` and ``mig_profiles``
    are botocore's enums (ClusterInstanceType, MIGProfileType) when known.
    """
    problems = ["team %r %s" % (params["team"], p) for p in naming.name_problems(params["team"], params.get("name_prefix") or naming.DEFAULT_PREFIX)]
    if params.get("state", "present") != "present":
        return problems
    if params.get("resources") is not None:
        if not params["resources"]:
            problems.append("resources: give at least one instance type")
        problems.extend(_resource_problems("resources", params["resources"], instance_types, mig_profiles))
    elif current is None:
        problems.append("resources is required to create a quota")
    if params.get("absolute_borrow_limits"):
        problems.extend(_resource_problems("absolute_borrow_limits", params["absolute_borrow_limits"], instance_types, mig_profiles))
    if params.get("borrow_limit") is not None and not BORROW_LIMIT_RANGE[0] <= params["borrow_limit"] <= BORROW_LIMIT_RANGE[1]:
        problems.append("borrow_limit: %s is outside %d..%d (percent)" % (params["borrow_limit"], BORROW_LIMIT_RANGE[0], BORROW_LIMIT_RANGE[1]))
    if params.get("fair_share_weight") is not None and not WEIGHT_RANGE[0] <= params["fair_share_weight"] <= WEIGHT_RANGE[1]:
        problems.append("fair_share_weight: %s is outside %d..%d" % (params["fair_share_weight"], WEIGHT_RANGE[0], WEIGHT_RANGE[1]))
    if params.get("sharing") is not None:
        strategy = SHARING[params["sharing"]]
    elif current is not None:
        strategy = current["ComputeQuotaConfig"]["ResourceSharingConfig"]["Strategy"]
    else:
        strategy = API_DEFAULTS["Strategy"]
    if strategy != "LendAndBorrow":
        for option in ("borrow_limit", "absolute_borrow_limits"):
            if params.get(option):
                shown = dict((v, k) for k, v in SHARING.items())[strategy]
                problems.append("%s applies only to sharing lend_and_borrow (sharing is %s)" % (option, shown))
    problems.extend(naming.description_problems(params.get("description")))
    return problems


# ---------------------------------------------------------------- capacity


def cluster_capacity(cluster, scale_limits=None):
    """{instance type: sum of TargetCount} of a DescribeCluster answer (see the module docstring).

    ``scale_limits`` ({instance group: the most instances it may scale to}, the cluster file's ``max_count`` when the
    cluster autoscales) counts such a group by that limit: Karpenter starts it at 0 and moves TargetCount with the
    pending pods ("Create a NodeClass", https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-eks-autoscaling-nodeclass.html),
    and a guarantee must not be refused because the group is scaled down at the moment of the run.

    A flexible instance group (no InstanceType; InstanceRequirements, "the instance types that the instance group can
    use", ClusterInstanceRequirementDetails: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ClusterInstanceRequirementDetails.html)
    counts its TargetCount for each type it allows, desired and current: HyperPod may provision any of them, so a
    quota of any of them is one the group can hold.
    """
    capacity = {}
    for group in cluster.get("InstanceGroups") or []:
        requirements = group.get("InstanceRequirements") or {}
        types = [group["InstanceType"]] if group.get("InstanceType") else sorted(
            set(requirements.get("DesiredInstanceTypes") or []).union(requirements.get("CurrentInstanceTypes") or []))
        count = group.get("TargetCount", group.get("CurrentCount", 0)) or 0
        count = max(count, (scale_limits or {}).get(group.get("InstanceGroupName"), 0))
        for instance_type in types:
            capacity[instance_type] = capacity.get(instance_type, 0) + count
    return capacity


def given_capacity(params):
    """``(capacity, problems)`` of the ``cluster_capacity`` option: {instance type: count}, or None when unset."""
    given = params.get("cluster_capacity")
    if given is None:
        return None, []
    problems, capacity = [], {}
    if not re.fullmatch(CLUSTER_ARN_PATTERN, params.get("cluster") or ""):
        problems.append("cluster: %r must be the cluster's ARN when cluster_capacity is given" % params.get("cluster"))
    for instance_type, count in sorted(given.items()):
        if isinstance(count, bool) or not re.fullmatch(r"[0-9]+", str(count)):
            problems.append("cluster_capacity.%s: %r is not a whole number of instances" % (instance_type, count))
        else:
            capacity[instance_type] = int(count)
    return capacity, problems


def _countable(resources):
    """[(instance type, instances it takes or None, why it cannot be counted)] of ComputeQuotaResourceConfigs."""
    counted = []
    for resource in resources or []:
        try:
            share = instance_table.instance_equivalent(resource["InstanceType"], instance_table.from_api(resource))
        except ValueError as error:
            counted.append((resource["InstanceType"], None, str(error)))
            continue
        counted.append((resource["InstanceType"], share, None))
    return counted


def _instances(share):
    """A Fraction of instances as the option carries it: an int when whole, else a float of 6 decimals."""
    return int(share) if share.denominator == 1 else round(float(share), 6)


def guaranteed_counts(settings):
    """{instance type: instances} a quota guarantees; empty when it is disabled.

    A guarantee in accelerators, vCPUs, memory or MIG partitions counts as its largest share of an instance in any unit
    (instance_types.instance_equivalent: AWS's ratio fills what it leaves out), so 4 of a p5's 8 GPUs are 0.5; one
    the table cannot count is left out here and refused by ``capacity_problems`` when it is ours.
    """
    if not settings or settings.get("ActivationState", "Enabled") != "Enabled":
        return {}
    counts = {}
    for instance_type, share, _problem in _countable(settings["ComputeQuotaConfig"]["ComputeQuotaResources"]):
        if share:
            counts[instance_type] = counts.get(instance_type, 0) + share
    return dict((instance_type, _instances(share)) for instance_type, share in counts.items())


def _shown(value):
    return ("%d" % value) if float(value).is_integer() else ("%.2f" % float(value))


def capacity_problems(cluster_name, capacity, desired, others):
    """Why ``desired`` does not fit next to ``others`` ({team: what its quota guarantees, ``guaranteed_counts``}) on a cluster of ``capacity``."""
    problems = []
    requested = set(r["InstanceType"] for r in desired["ComputeQuotaConfig"]["ComputeQuotaResources"])
    for instance_type in sorted(requested - set(capacity)):
        problems.append(
            "cluster %s has no %s instances (it has %s)"
            % (cluster_name, instance_type, ", ".join("%s x%d" % (t, n) for t, n in sorted(capacity.items())) or "no instance groups")
        )
    if desired.get("ActivationState", "Enabled") == "Enabled":
        for instance_type, _share, problem in _countable(desired["ComputeQuotaConfig"]["ComputeQuotaResources"]):
            if problem and instance_type in capacity:
                problems.append("%s: %s" % (instance_type, problem))
    ours = guaranteed_counts(desired)
    team = desired["ComputeQuotaTarget"]["TeamName"]
    for instance_type in sorted(ours):
        if instance_type not in capacity:
            continue
        taken = sorted((other, counts.get(instance_type, 0)) for other, counts in others.items())
        taken = [(other, count) for other, count in taken if count]
        # Others' shares arrive rounded to 6 decimals (``_instances``), each off by at most 5e-7: seven sevenths add up to
        # the whole they are, and so do 33 two-thirds.
        total = ours[instance_type] + sum(count for _other, count in taken)
        if total > capacity[instance_type] + 1e-6 * (len(taken) + 1):
            shares = "".join(" + %s %s" % (other, _shown(count)) for other, count in taken)
            problems.append(
                "%s: team %s %s%s = %s exceeds the %d instances of cluster %s"
                % (instance_type, team, _shown(ours[instance_type]), shares, _shown(total), capacity[instance_type], cluster_name)
            )
    return problems


def owner_problem(team, name, quota_id, tags, tag_keys=None, adopt=False):
    """Why the team's compute quota ``name`` (``quota_id``, with ``tags``) must not be changed for ``team``; None when it may.

    The rule is naming.ownership_problem's; this layer's check and shared_info's check of every team before the
    run's first write both ask here.
    """
    return naming.ownership_problem("compute quota %s (%s)" % (name, quota_id), team, tags, tag_keys, adopt, "quota")


def team_quotas(summaries):
    """{team: its ListComputeQuotas summary} on one cluster, those deleted or being deleted left out (``read_quotas``'s rule)."""
    return dict(
        ((s.get("ComputeQuotaTarget") or {}).get("TeamName"), s) for s in summaries if s.get("Status") not in ("Deleting", "Deleted")
    )


# ---------------------------------------------------------------- the resource


class QuotaManager(engine.Resource):
    """One team's quota on one cluster, as the engine converges it. ``params`` are the module's options; ``raw`` is
    DescribeComputeQuota's answer with its ``Tags``."""

    def __init__(self, client, params, check_mode=False, warn=None):
        super(QuotaManager, self).__init__(client, params, check_mode, warn)
        self.team = params["team"]
        self.name = naming.quota_name(self.team, params.get("name_prefix") or naming.DEFAULT_PREFIX)
        self.cluster_label = None
        self.cluster_arn = None
        self.capacity = None
        self.deleting = None
        # The quota as described this run (only its tags come from shared_info's copy), the settings wanted over it,
        # the tag changes planned, and whether a write moved the settings (read back once settled).
        self.described, self.settings, self.tag_delta, self.settles = None, None, None, False
        self.warned = False

    def model_enums(self):
        """botocore's ClusterInstanceType and MIGProfileType values, or (None, None)."""
        try:
            model = self.client.meta.service_model
            return model.shape_for("ClusterInstanceType").enum, model.shape_for("MIGProfileType").enum
        except Exception:  # an older botocore without these shapes: AWS will say
            return None, None

    # reads

    def read_cluster(self):
        """The cluster's ARN and capacity: from ``cluster_capacity`` when given, else DescribeCluster."""
        capacity, problems = given_capacity(self.params)
        if problems:
            raise InputError(message="compute quota %s for team %s: %s" % (self.name, self.team, "; ".join(problems)))
        if capacity is not None:
            self.cluster_label = self.cluster_arn = self.params["cluster"]
            self.capacity = capacity
            return
        cluster = sagemaker.describe_cluster(self.client, ClusterName=self.params["cluster"])
        if cluster is None:
            raise InputError(message="HyperPod cluster %s was not found" % self.params["cluster"])
        self.cluster_label = cluster["ClusterName"]
        self.cluster_arn = cluster["ClusterArn"]
        self.capacity = cluster_capacity(cluster, self.params.get("scale_limits"))

    def read_quotas(self):
        """(this team's summary or None, {other team: settings}) on the cluster, deleted ones left out.

        A quota of this team that is still being deleted is remembered in ``self.deleting``:
        its name and team are taken until it is gone.
        """
        summaries = sagemaker.list_compute_quotas(self.client, ClusterArn=self.cluster_arn)
        self.deleting = None
        for summary in summaries:
            if (summary.get("ComputeQuotaTarget") or {}).get("TeamName") == self.team and summary.get("Status") == "Deleting":
                self.deleting = summary["ComputeQuotaId"]
        by_team = team_quotas(summaries)
        ours = by_team.pop(self.team, None)
        others = dict((team, current_settings(summary)) for team, summary in by_team.items())
        if ours is not None and ours.get("Name") != self.name:
            self.warn("team %s's compute quota on this cluster is named %s, not %s; managing it as it is" % (self.team, ours["Name"], self.name))
        return ours, others

    def describe(self, quota_id, settle=False, known_tags=None):
        """DescribeComputeQuota (after it leaves a transitional status when ``settle``) plus its tags.

        ``known_tags`` (the layer's ``known.tags``: {quota id: tags}, read earlier in the run: shared_info's, for its owner check) spares the
        ListTags of that quota.
        """
        if settle:
            quota = wait_for_status(
                lambda: sagemaker.describe_compute_quota(self.client, ComputeQuotaId=quota_id),
                "compute quota %s" % self.name,
                ready=SETTLED + FAILED + (GONE,),
                timeout=self.timeout,
            )
        else:
            quota = sagemaker.describe_compute_quota(self.client, ComputeQuotaId=quota_id)
        if quota is None:
            return None
        known = (known_tags or {}).get(quota["ComputeQuotaId"])
        quota["Tags"] = dict(known) if known is not None else sagemaker.list_tags(self.client, quota["ComputeQuotaArn"])
        return quota

    def desired_tags(self):
        return naming.team_tags(self.team, self.params.get("cost_center"), self.params.get("tag_keys"), extra=self.params.get("tags") or {})

    def tag_changes(self, current_tags):
        purge = bool(self.params.get("purge_tags")) and self.params.get("tags") is not None
        return compare_aws_tags(current_tags or {}, self.desired_tags(), purge_tags=purge)

    def result(self, raw):
        if not raw:
            return {}
        snaked = snake(dict((k, v) for k, v in raw.items() if k != "ResponseMetadata"))
        snaked["tags"] = raw.get("Tags", {})
        return snaked

    def wait(self, quota_id):
        return read_settled(
            lambda: sagemaker.describe_compute_quota(self.client, ComputeQuotaId=quota_id),
            "compute quota %s" % self.name, self.params.get("wait", True), SETTLED, FAILED, self.timeout,
        )

    def leaves_as_listed(self, quota, others):
        """Whether the run leaves ``quota`` as it is and it fits beside what ``others`` guarantee: shared_info's listing of
        the cluster's quotas (the layer's ``known.listing``) then answers for them; otherwise (a change, a refusal) they are listed afresh."""
        if quota is None or quota["Status"] in FAILED:
            return False
        current = current_settings(quota)
        desired = desired_settings(self.params, current)
        to_set, to_unset = self.tag_changes(quota["Tags"])
        return current == desired and not (to_set or to_unset or input_problems(self.params, current, *self.model_enums())
                                           or capacity_problems(self.cluster_label, self.capacity, desired, others))

    def check_owner(self, quota, adopt=False):
        """Refuse a compute quota this collection did not make for the team (``owner_problem``)."""
        problem = owner_problem(self.team, quota.get("Name") or self.name, quota["ComputeQuotaId"], quota["Tags"], self.params.get("tag_keys"), adopt)
        if problem:
            raise InputError(message=problem)

    def _refuse(self, problems):
        if problems:
            raise InputError(message="compute quota %s for team %s: %s" % (self.name, self.team, "; ".join(problems)))

    # what the engine asks

    def prepare(self, state):
        if state == "absent":
            self._refuse(input_problems(self.params))
        self.read_cluster()

    def read(self, fresh=False):
        if self.params["state"] == "absent":
            return self._read_to_delete()
        if fresh:
            # Only the tags may come from the copy (the settings were described now): they are what is read again.
            return dict(self.described, Tags=sagemaker.list_tags(self.client, self.described["ComputeQuotaArn"]))
        known_tags = known_value(self.params, "tags")
        listed = known_value(self.params, "listing")
        quota = self.describe(listed["compute_quota_id"], settle=True, known_tags=known_tags) if listed else None
        others = {"the other quotas": listed["others_guaranteed"]} if listed else None
        if not listed or not self.leaves_as_listed(quota, others):
            summary, by_team = self.read_quotas()
            others = dict((team, guaranteed_counts(settings)) for team, settings in by_team.items())
            if (summary or {}).get("ComputeQuotaId") != (quota or {}).get("ComputeQuotaId"):
                quota = self.describe(summary["ComputeQuotaId"], settle=True, known_tags=known_tags) if summary else None
        # What the options ask is checked against the quota as it is and the others' guarantees, before its owner.
        current = current_settings(quota)
        problems = input_problems(self.params, current, *self.model_enums())
        self.settings = desired_settings(self.params, current)
        self._refuse(problems + capacity_problems(self.cluster_label, self.capacity, self.settings, others))
        self.described = quota
        return quota

    def _read_to_delete(self):
        summary, _others = self.read_quotas()
        return self.describe(summary["ComputeQuotaId"], settle=not self.check_mode) if summary else None

    def copied(self, raw):
        # Only the tags come from the copy: it matters when tags are to be written from it.
        return bool(known_value(self.params, "tags")) and raw is not None and any(self.tag_delta)

    def owned(self, raw):
        self.check_owner(raw, self.params["state"] == "present" and self.params.get("adopt"))

    def view(self, raw):
        return comparable(current_settings(raw), raw["Tags"])

    def desired(self, raw):
        if raw is None:
            self.tag_delta = ({}, [])
            return comparable(self.settings, self.desired_tags())
        self.tag_delta = to_set, to_unset = self.tag_changes(raw["Tags"])
        tags = dict((k, v) for k, v in raw["Tags"].items() if k not in to_unset)
        tags.update(to_set)
        return comparable(self.settings, tags)

    def refuse(self, raw, desired):
        # Once, though the tags may be read again and the quota planned twice.
        if raw["Status"] in FAILED and not self.warned:
            self.warned = True
            self.warn("compute quota %s is %s: %s" % (self.name, raw["Status"], raw.get("FailureReason") or "no reason given"))

    def predict(self, raw, desired):
        if raw is None:
            return dict(self.settings, Name=self.name, ClusterArn=self.cluster_arn, Tags=self.desired_tags())
        predicted = dict(copy.deepcopy(raw), **self.settings)
        predicted["Tags"] = desired["tags"]
        return predicted

    def create(self, desired):
        if self.deleting:
            wait_for_status(
                lambda: sagemaker.describe_compute_quota(self.client, ComputeQuotaId=self.deleting),
                "deletion of the previous compute quota of team %s" % self.team,
                ready=DELETED,
                failed=FAILED,
                timeout=self.timeout,
            )
        request = dict(copy.deepcopy(self.settings), Name=self.name, ClusterArn=self.cluster_arn, Tags=sagemaker.tag_list(self.desired_tags()))
        self.settles = True
        return sagemaker.create_compute_quota(self.client, **request)["ComputeQuotaId"]

    def update(self, raw, desired):
        to_set, to_unset = self.tag_delta
        self.settles = current_settings(raw) != self.settings
        if self.settles:
            self._write_settings(raw, self.settings)
        if to_unset:
            sagemaker.delete_tags(self.client, raw["ComputeQuotaArn"], to_unset)
        if to_set:
            sagemaker.add_tags(self.client, raw["ComputeQuotaArn"], to_set)
        return self.settles

    def read_back(self, handle, settle):
        quota_id = handle["ComputeQuotaId"] if isinstance(handle, dict) else handle
        # A write that moved the settings is waited for as the module's wait says (read_settled), tags alone are not.
        if self.settles:
            self.wait(quota_id)
        return self.describe(quota_id)

    def _write_settings(self, quota, desired):
        """UpdateComputeQuota at the version we read; on a version conflict read once more and retry."""
        request = dict(copy.deepcopy(desired), ComputeQuotaId=quota["ComputeQuotaId"], TargetVersion=quota["ComputeQuotaVersion"])
        try:
            return sagemaker.update_compute_quota(self.client, **request)
        except SageMakerError as e:
            if not sagemaker.is_conflict(e):
                raise
            first = e
        fresh = self.describe(quota["ComputeQuotaId"], settle=True)
        if fresh is None:
            raise ConflictError(message="compute quota %s was deleted while it was being updated" % self.name, exception=first.exception)
        desired = desired_settings(self.params, current_settings(fresh))
        if current_settings(fresh) == desired:
            return None
        request = dict(copy.deepcopy(desired), ComputeQuotaId=fresh["ComputeQuotaId"], TargetVersion=fresh["ComputeQuotaVersion"])
        try:
            return sagemaker.update_compute_quota(self.client, **request)
        except SageMakerError as e:
            if sagemaker.is_conflict(e):
                raise ConflictError(
                    message="compute quota %s changed again while it was being updated (read version %s); run again"
                    % (self.name, fresh["ComputeQuotaVersion"]),
                    exception=e.exception,
                )
            raise

    def delete(self, raw):
        sagemaker.delete_compute_quota(self.client, ComputeQuotaId=raw["ComputeQuotaId"])
        return True

    def wait_gone(self, raw):
        wait_for_status(
            lambda: sagemaker.describe_compute_quota(self.client, ComputeQuotaId=raw["ComputeQuotaId"]),
            "deletion of compute quota %s" % self.name,
            ready=DELETED,
            failed=FAILED,
            timeout=self.timeout,
        )


def _resource_spec():
    return dict(
        instance_type=dict(type="str", required=True),
        count=dict(type="int"),
        accelerators=dict(type="int"),
        vcpu=dict(type="float"),
        memory_gib=dict(type="float"),
        accelerator_partition=dict(
            type="dict",
            options=dict(type=dict(type="str", required=True), count=dict(type="int", required=True)),
        ),
    )


# The keyword arguments of task_governance_quota's AnsibleAWSModule (and of team_resources' quota).
MODULE_OPTIONS = options(
    dict(
        team=dict(type="str", required=True),
        cluster=dict(type="str", required=True),
        resources=dict(type="list", elements="dict", options=_resource_spec()),
        sharing=dict(type="str", choices=["lend", "dont_lend", "lend_and_borrow"]),
        borrow_limit=dict(type="int"),
        absolute_borrow_limits=dict(type="list", elements="dict", options=_resource_spec()),
        preempt=dict(type="str", choices=["never", "lower_priority"]),
        fair_share_weight=dict(type="int"),
        activation=dict(type="str", choices=["enabled", "disabled"]),
        description=dict(type="str"),
        adopt=dict(type="bool", default=False),
        cluster_capacity=dict(type="dict"),
        scale_limits=dict(type="dict"),
    ),
    STATE, NAME_PREFIX, TEAM_TAGS, TAGS, wait(900),
)
# What shared_info read earlier in the run (team_resources' ``known``): the quota's tags by its id, and its id with what the
# cluster's other quotas guarantee (``listing``).
KNOWN = dict(
    tags=dict(type="dict", no_log=False),
    listing=dict(type="dict", options=dict(compute_quota_id=dict(type="str", required=True), others_guaranteed=dict(type="dict", required=True))),
)
# The team file's quota section (docs/team-file.md): a team gets these defaults, the module leaves an unset option alone.
TEAM_FILE_SECTION = team_section(
    "quota",
    MODULE_OPTIONS,
    ("resources", "sharing", "borrow_limit", "absolute_borrow_limits", "preempt", "fair_share_weight", "activation"),
    resources=REQUIRED, sharing="lend_and_borrow", borrow_limit=None, absolute_borrow_limits=[], preempt="lower_priority",
    fair_share_weight=0, activation="enabled",
)


def check(params):
    """What can be refused before the quota and its cluster are read; raises ``InputError``."""
    problems = input_problems(params) + given_capacity(params)[1]
    if problems:
        name = naming.quota_name(params["team"], params.get("name_prefix") or naming.DEFAULT_PREFIX)
        raise InputError(message="compute quota %s for team %s: %s" % (name, params["team"], "; ".join(problems)))


def converge(context, params):
    """The result of task_governance_quota: the quota after the run and the team's Kueue names."""
    manager = QuotaManager(context.client("sagemaker"), params, check_mode=context.check_mode, warn=context.warn)
    outcome = engine.converge(manager, params["state"], context.check_mode)
    return result(outcome.changed, outcome.before, outcome.after, quota=outcome.result,
                  namespace=naming.namespace(params["team"]), local_queue=naming.local_queue(params["team"]))
