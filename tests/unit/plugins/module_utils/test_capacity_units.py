"""Guarantees counted in every unit Task Governance takes, against the cluster in the same unit (issue 38).

The cluster: 8 x ml.p5.48xlarge (64 H100 GPUs, 1536 vCPUs, 16384 GiB) and 6 x ml.g5.12xlarge. vision guarantees 4
whole p5 instances (32 GPUs, 768 vCPUs, 8192 GiB); each case adds a team guaranteeing in another unit.
"""

from __future__ import annotations

import copy

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import chargeback
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_model import check_team_file

P5 = "ml.p5.48xlarge"
CLUSTER = {
    "name": "ml-shared",
    "instance_groups": [
        {"name": "p5", "instance_type": P5, "count": 8},
        {"name": "g5", "instance_type": "ml.g5.12xlarge", "count": 6},
        {"name": "cpu", "instance_type": "ml.c6i.large", "count": 2},
    ],
    "scheduler": {"priority_classes": [{"name": "training", "weight": 50}]},
}
VISION = {"name": "vision", "identity_center_group": "TeamVision", "quota": {"resources": [{"instance_type": P5, "count": 4}]}}


def team(name, *resources):
    return {"name": name, "identity_center_group": "Team" + name.capitalize(), "quota": {"resources": [dict(r) for r in resources]}}


def capacity_problems(*teams):
    problems = check_team_file([copy.deepcopy(VISION)] + list(teams), CLUSTER, "hyperpod")[0]
    return [problem for problem in problems if "quota.resources" in problem]


OVER_SUBSCRIBED = [
    (
        "GPUs beside another team's instances",
        [team("nlp", {"instance_type": P5, "accelerators": 33})],
        "teams: quota.resources: guaranteed ml.p5.48xlarge accelerators total 65 (vision 32 [4 instances], nlp 33) "
        "but the cluster has 64 (8 instances x 8)",
    ),
    (
        "vCPUs beside another team's instances",
        [team("nlp", {"instance_type": P5, "vcpu": 769})],
        "guaranteed ml.p5.48xlarge vCPUs total 1537 (vision 768 [4 instances], nlp 769) but the cluster has 1536 (8 instances x 192)",
    ),
    (
        "memory beside another team's instances",
        [team("nlp", {"instance_type": P5, "memory_gib": 8193})],
        "guaranteed ml.p5.48xlarge GiB of memory total 16385 (vision 8192 [4 instances], nlp 8193) but the cluster has 16384",
    ),
    (
        "MIG slices beside whole GPUs and instances",
        # 4 instances + 24 GPUs + 57 slices of a seventh of a GPU: 32 + 24 + 8.14 > 64.
        [team("nlp", {"instance_type": P5, "accelerators": 24}),
         team("grab", {"instance_type": P5, "accelerator_partition": {"type": "mig-1g.10gb", "count": 57}})],
        "guaranteed ml.p5.48xlarge accelerators total 64.14 (vision 32 [4 instances], nlp 24, grab 8.14 [57 x mig-1g.10gb])",
    ),
    (
        "whole-GPU MIG slices of three teams",
        [team("nlp", {"instance_type": P5, "accelerator_partition": {"type": "mig-7g.80gb", "count": 20}}),
         team("grab", {"instance_type": P5, "accelerator_partition": {"type": "mig-3g.40gb", "count": 25}})],
        "(vision 32 [4 instances], nlp 20 [20 x mig-7g.80gb], grab 12.50 [25 x mig-3g.40gb])",
    ),
]


@pytest.mark.parametrize("label, teams, expected", OVER_SUBSCRIBED, ids=[case[0] for case in OVER_SUBSCRIBED])
def test_over_subscription_in_any_unit_is_refused_naming_every_team(label, teams, expected):
    """Threat model: (a) issue 36, case 6 (a team takes capacity another team was guaranteed): a guarantee in
    accelerators, vCPUs, memory or MIG slices was never added up, so a team's Kueue nominal quota could claim what the
    cluster had already guaranteed to others."""
    problems = capacity_problems(*teams)
    assert any(expected in problem for problem in problems), problems


def test_a_mix_that_fits_exactly_passes():
    """32 + 16 + 8 GPUs of 64; vCPUs and memory (AWS's ratio for what each leaves out) exactly the cluster's."""
    teams = [
        team("nlp", {"instance_type": P5, "accelerators": 16}),  # 2 instances' worth in every unit
        team("grab", {"instance_type": P5, "accelerator_partition": {"type": "mig-1g.10gb", "count": 56}}),  # 8 GPUs: 1 instance
        team("data", {"instance_type": P5, "vcpu": 192}),  # 1 instance of vCPUs and memory, no GPU
    ]
    assert capacity_problems(*teams) == []
    # One slice more is a seventh of a GPU, and of vCPUs and memory, too many.
    teams[1]["quota"]["resources"][0]["accelerator_partition"]["count"] = 57
    assert [problem for problem in capacity_problems(*teams) if "vCPUs total" in problem]


def test_a_mix_that_fits_only_unit_by_unit_is_refused_as_the_quota_layer_refuses_it():
    """nlp asks for half the vCPUs and no memory, data for half the memory and no vCPUs: each unit fits, but the quota
    layer at run time counts each quota by its largest share of an instance (4 + 4 + 4 of 8), so the team file is
    refused before the first write rather than in the middle of a run."""
    teams = [team("nlp", {"instance_type": P5, "vcpu": 768, "memory_gib": 0}), team("data", {"instance_type": P5, "vcpu": 0, "memory_gib": 8192})]
    problems = capacity_problems(*teams)
    assert problems == ["teams: quota.resources: guaranteed ml.p5.48xlarge total 12 instances (vision 4, nlp 4, data 4), each quota counted by "
                        "its largest share of an instance, but the cluster has 8"], problems


def test_whole_instances_keep_their_message():
    problems = capacity_problems(team("nlp", {"instance_type": P5, "count": 5}))
    assert problems == ["teams: quota.resources: guaranteed ml.p5.48xlarge total 9 (vision 4, nlp 5) but the cluster has 8"]


@pytest.mark.parametrize(
    "resource, fragment",
    [
        ({"instance_type": "ml.c6i.large", "vcpu": 1}, "team 'nlp': quota.resources[0]: ml.c6i.large is not in the collection's table"),
        ({"instance_type": "ml.g5.12xlarge", "accelerator_partition": {"type": "mig-1g.10gb", "count": 1}}, "NVIDIA A10G cannot be partitioned"),
    ],
)
def test_a_guarantee_the_table_cannot_count_is_refused(resource, fragment):
    """Threat model: (a) issue 36, case 6: what cannot be counted against the cluster cannot be shown not to take
    another team's capacity; whole instances of the same type still can."""
    problems = capacity_problems(team("nlp", resource))
    assert any(fragment in problem for problem in problems), problems
    assert capacity_problems(team("nlp", {"instance_type": "ml.c6i.large", "count": 2})) == []


def test_what_the_team_model_accepts_the_chargeback_splits():
    teams = check_team_file([copy.deepcopy(VISION), team("grab", {"instance_type": P5, "accelerator_partition": {"type": "mig-1g.10gb", "count": 7}})],
                            CLUSTER, "hyperpod")[1]
    assert chargeback.quota_instances(teams[1]) == {P5: 1 / chargeback.Decimal(8)}
