# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""HyperPod instance types: accelerators, vCPUs and memory per instance, and the MIG profiles of their GPUs.

The one table the team model, the quota layer and chargeback count a guarantee with, in every unit Task Governance
takes (ComputeQuotaResourceConfig, SageMaker API Reference:
https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ComputeQuotaResourceConfig.html): whole instances
(``Count``), ``Accelerators``, ``VCpu``, ``MemoryInGiB`` and ``AcceleratorPartition`` (a MIG profile and a count,
https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_AcceleratorPartitionConfig.html).

Sources (tests/unit/plugins/module_utils/test_instance_types.py holds the table to them):

- accelerators, vCPUs and memory (GiB) per instance: "Amazon EC2 instance type specifications", accelerated
  computing (https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html), general purpose
  (https://docs.aws.amazon.com/ec2/latest/instancetypes/gp.html) and compute optimized
  (https://docs.aws.amazon.com/ec2/latest/instancetypes/co.html); an ``ml.`` type is the EC2 type of its name
  (SageMaker HyperPod pricing, https://aws.amazon.com/sagemaker/pricing/). Trainium: "Amazon EC2 Trn2
  architecture" and "Trn1 architecture" (AWS Neuron documentation, https://awsdocs-neuron.readthedocs-hosted.com/).
- MIG profiles and how many of each one GPU holds: NVIDIA's MIG User Guide, "Supported MIG Profiles"
  (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html): the A100 40GB/80GB, H100
  80GB, H200 141GB, B200 180GB and GB200 186GB tables. AWS names a profile ``mig-<profile>``
  (AcceleratorPartitionConfig's Type).

How AWS counts what a guarantee leaves out (ComputeQuotaResourceConfig): accelerators (or an accelerator partition
count) alone get vCPU and memory "ratio-based values" (16 of 32 accelerators: half the vCPUs and memory); vCPU alone
gets memory by the same ratio and memory alone vCPU, with accelerators 0. Where more than one amount is given and one
is left out, the docs are silent; assumption: the left-out amount takes the largest ratio of those given (never less
than AWS could take).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
from fractions import Fraction

# GPU model -> {MIG profile (AWS's name): how many of it one GPU holds} (NVIDIA MIG User Guide, above).
MIG_PROFILES = {
    "NVIDIA A100 40GB": {"mig-1g.5gb": 7, "mig-2g.10gb": 3, "mig-3g.20gb": 2, "mig-4g.20gb": 1, "mig-7g.40gb": 1},
    "NVIDIA A100 80GB": {"mig-1g.10gb": 7, "mig-2g.20gb": 3, "mig-3g.40gb": 2, "mig-4g.40gb": 1, "mig-7g.80gb": 1},
    "NVIDIA H100 80GB": {"mig-1g.10gb": 7, "mig-1g.20gb": 4, "mig-2g.20gb": 3, "mig-3g.40gb": 2, "mig-4g.40gb": 1, "mig-7g.80gb": 1},
    "NVIDIA H200 141GB": {"mig-1g.18gb": 7, "mig-1g.35gb": 4, "mig-2g.35gb": 3, "mig-3g.71gb": 2, "mig-4g.71gb": 1, "mig-7g.141gb": 1},
    "NVIDIA B200 180GB": {"mig-1g.23gb": 7, "mig-1g.45gb": 4, "mig-2g.45gb": 3, "mig-3g.90gb": 2, "mig-4g.90gb": 1, "mig-7g.180gb": 1},
    # Assumption: the GB200 profiles are not yet checked against the MIG guide (their names match botocore's list).
    "NVIDIA GB200 186GB": {"mig-1g.23gb": 7, "mig-1g.47gb": 4, "mig-2g.47gb": 3, "mig-3g.93gb": 2, "mig-4g.93gb": 1, "mig-7g.186gb": 1},
}


def _types(accelerator, sizes):
    return dict((name, {"accelerator": accelerator, "accelerators": gpus, "vcpu": vcpu, "memory_gib": memory}) for name, gpus, vcpu, memory in sizes)


# instance type -> accelerator model (None: no accelerator), accelerators, vCPUs and memory (GiB) per instance.
INSTANCE_TYPES = {}
INSTANCE_TYPES.update(_types("NVIDIA A100 40GB", [("ml.p4d.24xlarge", 8, 96, 1152)]))
INSTANCE_TYPES.update(_types("NVIDIA A100 80GB", [("ml.p4de.24xlarge", 8, 96, 1152)]))
INSTANCE_TYPES.update(_types("NVIDIA H100 80GB", [("ml.p5.48xlarge", 8, 192, 2048), ("ml.p5.4xlarge", 1, 16, 256)]))
INSTANCE_TYPES.update(_types("NVIDIA H200 141GB", [("ml.p5e.48xlarge", 8, 192, 2048), ("ml.p5en.48xlarge", 8, 192, 2048)]))
INSTANCE_TYPES.update(_types("NVIDIA B200 180GB", [("ml.p6-b200.48xlarge", 8, 192, 2048)]))
# Assumption: not yet checked against the EC2 spec page (no test or sample uses it); verify before relying on it.
INSTANCE_TYPES.update(_types("NVIDIA GB200 186GB", [("ml.p6e-gb200.36xlarge", 4, 144, 960)]))
INSTANCE_TYPES.update(_types("NVIDIA A10G", [
    ("ml.g5.xlarge", 1, 4, 16), ("ml.g5.2xlarge", 1, 8, 32), ("ml.g5.4xlarge", 1, 16, 64), ("ml.g5.8xlarge", 1, 32, 128),
    ("ml.g5.16xlarge", 1, 64, 256), ("ml.g5.12xlarge", 4, 48, 192), ("ml.g5.24xlarge", 4, 96, 384), ("ml.g5.48xlarge", 8, 192, 768),
]))
INSTANCE_TYPES.update(_types("NVIDIA L4", [
    ("ml.g6.xlarge", 1, 4, 16), ("ml.g6.2xlarge", 1, 8, 32), ("ml.g6.4xlarge", 1, 16, 64), ("ml.g6.8xlarge", 1, 32, 128),
    ("ml.g6.16xlarge", 1, 64, 256), ("ml.g6.12xlarge", 4, 48, 192), ("ml.g6.24xlarge", 4, 96, 384), ("ml.g6.48xlarge", 8, 192, 768),
]))
INSTANCE_TYPES.update(_types("NVIDIA L40S", [
    ("ml.g6e.xlarge", 1, 4, 32), ("ml.g6e.2xlarge", 1, 8, 64), ("ml.g6e.4xlarge", 1, 16, 128), ("ml.g6e.8xlarge", 1, 32, 256),
    ("ml.g6e.16xlarge", 1, 64, 512), ("ml.g6e.12xlarge", 4, 48, 384), ("ml.g6e.24xlarge", 4, 96, 768), ("ml.g6e.48xlarge", 8, 192, 1536),
]))
INSTANCE_TYPES.update(_types("NVIDIA T4", [
    ("ml.g4dn.xlarge", 1, 4, 16), ("ml.g4dn.2xlarge", 1, 8, 32), ("ml.g4dn.4xlarge", 1, 16, 64), ("ml.g4dn.8xlarge", 1, 32, 128),
    ("ml.g4dn.16xlarge", 1, 64, 256), ("ml.g4dn.12xlarge", 4, 48, 192),
]))
INSTANCE_TYPES.update(_types("NVIDIA L4", [("ml.gr6.4xlarge", 1, 16, 128), ("ml.gr6.8xlarge", 1, 32, 256)]))
INSTANCE_TYPES.update(_types("AWS Trainium", [("ml.trn1.32xlarge", 16, 128, 512), ("ml.trn1n.32xlarge", 16, 128, 512)]))
# Assumption for ml.trn2.3xlarge: not yet checked against the Neuron architecture page (no test or sample uses it).
INSTANCE_TYPES.update(_types("AWS Trainium2", [("ml.trn2.3xlarge", 1, 12, 128), ("ml.trn2.48xlarge", 16, 192, 2048)]))
INSTANCE_TYPES.update(_types(None, [
    ("ml.c5.large", 0, 2, 4), ("ml.c5.xlarge", 0, 4, 8), ("ml.c5.2xlarge", 0, 8, 16), ("ml.c5.4xlarge", 0, 16, 32),
    ("ml.c5.9xlarge", 0, 36, 72), ("ml.c5.12xlarge", 0, 48, 96), ("ml.c5.18xlarge", 0, 72, 144), ("ml.c5.24xlarge", 0, 96, 192),
    ("ml.m5.large", 0, 2, 8), ("ml.m5.xlarge", 0, 4, 16), ("ml.m5.2xlarge", 0, 8, 32), ("ml.m5.4xlarge", 0, 16, 64),
    ("ml.m5.8xlarge", 0, 32, 128), ("ml.m5.12xlarge", 0, 48, 192), ("ml.m5.16xlarge", 0, 64, 256), ("ml.m5.24xlarge", 0, 96, 384),
    ("ml.t3.medium", 0, 2, 4), ("ml.t3.large", 0, 2, 8), ("ml.t3.xlarge", 0, 4, 16), ("ml.t3.2xlarge", 0, 8, 32),
]))

# Every amount of a ComputeQuotaResourceConfig (Count, Accelerators, VCpu, MemoryInGiB) and an AcceleratorPartitionConfig's
# Count: 0 to 10,000,000 in botocore's model.
MAX_AMOUNT = 10000000

# The units a guarantee is counted in, with the words a problem names them by.
UNITS = (("accelerators", "accelerators"), ("vcpu", "vCPUs"), ("memory_gib", "GiB of memory"))


def spec(instance_type):
    """The table's entry of ``instance_type`` (None when the table does not know it)."""
    return INSTANCE_TYPES.get(instance_type)


def mig_profiles(instance_type):
    """{MIG profile: per GPU} the GPUs of ``instance_type`` can be partitioned into ({} for none)."""
    found = spec(instance_type)
    return dict(MIG_PROFILES.get(found["accelerator"], {})) if found else {}


def _exact(value):
    """``value`` (int or float from YAML/JSON) as an exact fraction: 0.1 is 1/10, not its binary neighbour."""
    return Fraction(value) if isinstance(value, int) else Fraction(str(value))


def _is_amount(value, whole=False):
    """A number AWS takes for an amount (0 to MAX_AMOUNT), a whole one when ``whole``; the check names any other."""
    if isinstance(value, bool) or not (isinstance(value, int) or not whole and isinstance(value, float) and math.isfinite(value)):
        return False
    return 0 <= value <= MAX_AMOUNT


def _add_whole_instances(amounts, count, found):
    """Add to ``amounts`` what ``count`` whole instances take (each unit of the type's entry ``found``, when the table knows it)."""
    if _is_amount(count, whole=True):
        amounts["instances"] += count
        if found:
            for unit, _words in UNITS:
                amounts[unit] += count * found[unit]


def _fine_amounts_given(resource, partition_count):
    """Which amounts beyond whole instances ``resource`` gives as numbers AWS takes (accelerators, vcpu, memory_gib, accelerator_partition)."""
    given = [key for key in ("accelerators", "vcpu", "memory_gib") if _is_amount(resource.get(key), whole=key == "accelerators")]
    if _is_amount(partition_count, whole=True):
        given.append("accelerator_partition")
    return given


def _partition_accelerators(instance_type, found, partition, partition_count):
    """``(accelerators, problem)``: the GPUs (a Fraction) ``partition_count`` MIG slices of ``partition``'s profile take, or why
    the profile is not one of ``instance_type``'s (``found`` its table entry)."""
    per_gpu = mig_profiles(instance_type).get(partition.get("type")) if isinstance(partition.get("type"), str) else None
    if not per_gpu:
        profiles = ", ".join(sorted(mig_profiles(instance_type))) or "none: %s cannot be partitioned" % (found["accelerator"] or "it has no GPU")
        return None, "%r is not a MIG profile of %s (its profiles: %s)" % (partition.get("type"), instance_type, profiles)
    return Fraction(partition_count, per_gpu), None


def _accelerator_ratio(instance_type, found, accelerators):
    """``(ratio, problem)``: the share of ``instance_type``'s accelerators that ``accelerators`` is, or why it has none to guarantee."""
    if not found["accelerators"]:
        if accelerators:
            return None, "%s has no accelerators to guarantee" % instance_type
        return Fraction(0), None
    return accelerators / found["accelerators"], None


def guaranteed(instance_type, resource):
    """``(amounts, problem)`` of one quota resource (the team file's shape: count, accelerators, vcpu, memory_gib,
    accelerator_partition {type, count}): {"instances", "accelerators", "vcpu", "memory_gib": Fraction} it takes
    of ``instance_type``, and why it cannot be counted (None when it can). Amounts that are no number are left out
    (their own check names them)."""
    amounts = dict((unit, Fraction(0)) for unit in ("instances", "accelerators", "vcpu", "memory_gib"))
    found = spec(instance_type)
    _add_whole_instances(amounts, resource.get("count"), found)
    partition = resource.get("accelerator_partition")
    partition_count = partition.get("count") if isinstance(partition, dict) else None
    given = _fine_amounts_given(resource, partition_count)
    if not given:
        return amounts, None
    if found is None:
        return amounts, ("%s is not in the collection's table of instance types (plugins/module_utils/instance_types.py): its %s cannot be "
                         "counted against the cluster; guarantee whole instances (count)" % (instance_type, ", ".join(given)))
    ratios = {}
    accelerators = _exact(resource["accelerators"]) if "accelerators" in given else Fraction(0)
    if "accelerator_partition" in given:
        partitioned, problem = _partition_accelerators(instance_type, found, partition, partition_count)
        if problem:
            return amounts, problem
        accelerators += partitioned
    if "accelerators" in given or "accelerator_partition" in given:
        ratio, problem = _accelerator_ratio(instance_type, found, accelerators)
        if problem:
            return amounts, problem
        ratios["accelerators"] = ratio
        amounts["accelerators"] += accelerators
    for unit in ("vcpu", "memory_gib"):
        if unit in given:
            ratios[unit] = _exact(resource[unit]) / found[unit]
            amounts[unit] += _exact(resource[unit])
    ratio = max(ratios.values())
    for unit in ("vcpu", "memory_gib"):
        if unit not in given:
            amounts[unit] += ratio * found[unit]  # AWS's ratio-based value (module docstring)
    return amounts, None


def instance_equivalent(instance_type, resource):
    """How many instances of ``instance_type`` one quota resource takes: its largest share of an instance in any unit,
    an exact Fraction (``count`` when the resource gives only that). Raises ValueError when it cannot be counted."""
    fine = dict((key, value) for key, value in resource.items() if key != "count")
    amounts, problem = guaranteed(instance_type, fine)
    if problem:
        raise ValueError(problem)
    count = resource.get("count")
    whole = Fraction(count) if _is_amount(count, whole=True) else Fraction(0)
    found = spec(instance_type)
    if not found:
        return whole
    return whole + max(amounts[unit] / found[unit] for unit, unused_words in UNITS if found[unit])


def from_api(resource):
    """A ComputeQuotaResourceConfig in the team file's shape (for ``guaranteed`` / ``instance_equivalent``)."""
    shaped = {"instance_type": resource.get("InstanceType")}
    for member, key in (("Count", "count"), ("Accelerators", "accelerators"), ("VCpu", "vcpu"), ("MemoryInGiB", "memory_gib")):
        if resource.get(member) is not None:
            shaped[key] = resource[member]
    partition = resource.get("AcceleratorPartition")
    if partition:
        shaped["accelerator_partition"] = {"type": partition.get("Type"), "count": partition.get("Count")}
    return shaped


# ---------------------------------------------------------------- the cluster file's instance groups

# What a group with ``mig_config: all-disabled`` holds: whole GPUs (cluster.mig_config_problem checks the value).
MIG_DISABLED = "disabled"


def mig_layout(mig_config):
    """The profile (``mig-1g.10gb``) every GPU of a checked ``mig_config`` (``all-1g.10gb``) is cut into, or ``disabled``."""
    name = mig_config[len("all-"):]
    return MIG_DISABLED if name == MIG_DISABLED else "mig-" + name


def group_instance_types(group):
    """The instance types a cluster file's instance group may run: its ``instance_type``, or each of a flexible group's
    ``instance_types`` (InstanceRequirements, ClusterInstanceGroupSpecification in the SageMaker API Reference)."""
    if group.get("instance_type"):
        return [group["instance_type"]]
    return [t for t in group.get("instance_types") or [] if isinstance(t, str)]


def group_instances(group):
    """The instances a cluster file's instance group counts for: ``max_count`` when the cluster autoscales (the most
    Karpenter may scale it to; its ``count`` starts at 0), else ``count``."""
    return group["max_count"] if group.get("max_count") is not None else group.get("count")


def cluster_capacity(instance_groups):
    """{instance type: instances} of the cluster file's instance groups. A flexible group counts its instances for each
    type it allows: HyperPod may provision any of them, so each type's quotas must fit the whole group (the team model
    also checks that the quotas of all the types fit the group together)."""
    return capacity_of((group_instance_types(group), int(group_instances(group))) for group in instance_groups or [])


def capacity_of(groups):
    """{instance type: instances} of ``(instance types, instances)`` pairs, a group counting for each type it allows."""
    capacity = {}
    for instance_types, instances in groups:
        for instance_type in instance_types:
            capacity[instance_type] = capacity.get(instance_type, 0) + instances
    return capacity
