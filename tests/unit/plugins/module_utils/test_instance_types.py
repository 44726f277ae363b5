"""The table of instance types every capacity check counts with, held to its sources (issue 38).

The numbers below are transcribed from the pages named, not from the table: a typo in the table fails here.
"""

from __future__ import annotations

import pathlib
import re
from fractions import Fraction

import botocore.session
import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import instance_types as table

ROOT = pathlib.Path(__file__).resolve().parents[4]
LACKING_ON_PURPOSE = ("test_instance_types.py", "test_capacity_units.py")

# "Amazon EC2 instance type specifications", accelerated computing: https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html
# (GPUs / Trainium chips, vCPUs, memory GiB), general purpose (gp.html) and compute optimized (co.html).
EC2_SPECIFICATIONS = {
    "ml.p4d.24xlarge": ("NVIDIA A100 40GB", 8, 96, 1152),
    "ml.p4de.24xlarge": ("NVIDIA A100 80GB", 8, 96, 1152),
    "ml.p5.48xlarge": ("NVIDIA H100 80GB", 8, 192, 2048),
    "ml.p5e.48xlarge": ("NVIDIA H200 141GB", 8, 192, 2048),
    "ml.p5en.48xlarge": ("NVIDIA H200 141GB", 8, 192, 2048),
    "ml.p6-b200.48xlarge": ("NVIDIA B200 180GB", 8, 192, 2048),
    "ml.g5.xlarge": ("NVIDIA A10G", 1, 4, 16),
    "ml.g5.2xlarge": ("NVIDIA A10G", 1, 8, 32),
    "ml.g5.4xlarge": ("NVIDIA A10G", 1, 16, 64),
    "ml.g5.8xlarge": ("NVIDIA A10G", 1, 32, 128),
    "ml.g5.12xlarge": ("NVIDIA A10G", 4, 48, 192),
    "ml.g5.24xlarge": ("NVIDIA A10G", 4, 96, 384),
    "ml.g5.48xlarge": ("NVIDIA A10G", 8, 192, 768),
    "ml.g6.12xlarge": ("NVIDIA L4", 4, 48, 192),
    "ml.g6e.12xlarge": ("NVIDIA L40S", 4, 48, 384),
    "ml.g6e.24xlarge": ("NVIDIA L40S", 4, 96, 768),
    "ml.trn1.32xlarge": ("AWS Trainium", 16, 128, 512),
    "ml.trn2.48xlarge": ("AWS Trainium2", 16, 192, 2048),
    "ml.c5.large": (None, 0, 2, 4),
    "ml.c5.2xlarge": (None, 0, 8, 16),
    "ml.m5.xlarge": (None, 0, 4, 16),
    "ml.m5.2xlarge": (None, 0, 8, 32),
    "ml.t3.medium": (None, 0, 2, 4),
}

# NVIDIA MIG User Guide, "Supported MIG Profiles" (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html):
# "Number of Instances Available" of each profile on one GPU.
MIG_USER_GUIDE = {
    "NVIDIA A100 40GB": {"1g.5gb": 7, "2g.10gb": 3, "3g.20gb": 2, "4g.20gb": 1, "7g.40gb": 1},
    "NVIDIA A100 80GB": {"1g.10gb": 7, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1},
    "NVIDIA H100 80GB": {"1g.10gb": 7, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1},
    "NVIDIA H200 141GB": {"1g.18gb": 7, "1g.35gb": 4, "2g.35gb": 3, "3g.71gb": 2, "4g.71gb": 1, "7g.141gb": 1},
}


def _model():
    return botocore.session.get_session().get_service_model("sagemaker")


@pytest.mark.parametrize("instance_type", sorted(EC2_SPECIFICATIONS))
def test_the_table_holds_the_ec2_specifications(instance_type):
    accelerator, accelerators, vcpu, memory = EC2_SPECIFICATIONS[instance_type]
    assert table.spec(instance_type) == {"accelerator": accelerator, "accelerators": accelerators, "vcpu": vcpu, "memory_gib": memory}


@pytest.mark.parametrize("gpu", sorted(MIG_USER_GUIDE))
def test_the_mig_profiles_are_nvidias(gpu):
    assert table.MIG_PROFILES[gpu] == dict(("mig-" + profile, count) for profile, count in MIG_USER_GUIDE[gpu].items())


def test_every_type_and_profile_of_the_table_is_one_aws_accepts():
    """The table names no type HyperPod does not run and no profile AcceleratorPartitionConfig does not take (botocore)."""
    model = _model()
    assert set(table.INSTANCE_TYPES) <= set(model.shape_for("ClusterInstanceType").enum)
    profiles = set(profile for profiles in table.MIG_PROFILES.values() for profile in profiles)
    assert profiles == set(model.shape_for("MIGProfileType").enum)


def test_every_hyperpod_type_the_repository_names_is_in_the_table():
    """Each HyperPod GPU, Trainium or CPU type the tests, samples, inventories and docs use can be counted in every unit."""
    hyperpod = set(_model().shape_for("ClusterInstanceType").enum)
    named = set()
    for folder in ("tests", "inventories", "teams", "group_vars", "docs", "playbooks", "extensions"):
        for path in (ROOT / folder).rglob("*"):
            # These name a type the table lacks on purpose (to test its refusal).
            if path.suffix in (".py", ".yml", ".yaml", ".md", ".json") and path.is_file() and path.name not in LACKING_ON_PURPOSE:
                named.update(re.findall(r"ml\.[a-z0-9-]+\.[0-9a-z]+", path.read_text(errors="replace")))
    missing = sorted((named & hyperpod) - set(table.INSTANCE_TYPES))
    assert not missing, missing


def test_a_partition_counts_as_its_fraction_of_a_gpu():
    amounts, problem = table.guaranteed("ml.p5.48xlarge", {"accelerator_partition": {"type": "mig-3g.40gb", "count": 3}})
    assert problem is None
    assert amounts["accelerators"] == Fraction(3, 2)
    # vCPU and memory follow by AWS's ratio: 1.5 of 8 GPUs.
    assert amounts["vcpu"] == Fraction(3, 2) * 192 / 8


def test_aws_ratio_fills_what_a_guarantee_leaves_out():
    """ComputeQuotaResourceConfig: accelerators alone get vCPU and memory by their ratio; vCPU alone gets memory, and no
    accelerators."""
    amounts = table.guaranteed("ml.g5.12xlarge", {"accelerators": 2})[0]
    assert (amounts["vcpu"], amounts["memory_gib"]) == (24, 96)
    amounts = table.guaranteed("ml.g5.12xlarge", {"vcpu": 12})[0]
    assert (amounts["accelerators"], amounts["memory_gib"]) == (0, 48)


@pytest.mark.parametrize(
    "instance_type, resource, fragment",
    [
        ("ml.c6i.large", {"vcpu": 1}, "cannot be counted"),
        ("ml.g5.12xlarge", {"accelerator_partition": {"type": "mig-1g.10gb", "count": 1}}, "NVIDIA A10G cannot be partitioned"),
        ("ml.p4d.24xlarge", {"accelerator_partition": {"type": "mig-1g.10gb", "count": 1}}, "its profiles: mig-1g.5gb"),
        ("ml.c5.large", {"accelerators": 1}, "has no accelerators"),
    ],
)
def test_what_the_table_cannot_count_is_a_problem(instance_type, resource, fragment):
    amounts, problem = table.guaranteed(instance_type, resource)
    assert fragment in problem
    with pytest.raises(ValueError, match=re.escape(fragment)):
        table.instance_equivalent(instance_type, resource)


def test_whole_instances_of_a_type_the_table_lacks_still_count():
    assert table.instance_equivalent("ml.c6i.large", {"count": 3}) == 3
