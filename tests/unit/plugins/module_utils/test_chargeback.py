"""The chargeback arithmetic, checked against numbers worked out by hand."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import chargeback as cb

PERIOD = cb.month_period("2026-02")  # 28 days: 672 hours
CAPACITY = {"ml.p5.48xlarge": 8, "ml.g5.12xlarge": 6}
TEAMS = [
    {"name": "vision", "quota": {"resources": [{"instance_type": "ml.p5.48xlarge", "count": 4}]}},
    {"name": "nlp", "quota": {"resources": [{"instance_type": "ml.p5.48xlarge", "count": 3}, {"instance_type": "ml.g5.12xlarge", "count": 2}]}},
    {"name": "research", "quota": {"resources": [{"instance_type": "ml.g5.12xlarge", "count": 4}]}},
]
CLUSTER = {"ml.p5.48xlarge": Decimal("8000.00"), "ml.g5.12xlarge": Decimal("600.00")}
TAGS = {"vision": Decimal("1000.00"), "nlp": Decimal("500.00"), "research": Decimal("250.00"), "": Decimal("8700.00")}


def _line(report, name):
    return next(line for line in report["lines"] if line["name"] == name)


def test_month_period_defaults_to_the_last_full_month():
    assert cb.month_period(today=datetime.date(2026, 1, 10)) == {"month": "2025-12", "start": "2025-12-01", "end": "2026-01-01", "hours": 744}
    assert PERIOD == {"month": "2026-02", "start": "2026-02-01", "end": "2026-03-01", "hours": 672}
    with pytest.raises(cb.ChargebackError):
        cb.month_period("2026-13")


def test_cost_explorer_answers_are_parsed():
    by_tag = [{"Groups": [
        {"Keys": ["team$vision"], "Metrics": {"UnblendedCost": {"Amount": "10.5", "Unit": "USD"}}},
        {"Keys": ["team$"], "Metrics": {"UnblendedCost": {"Amount": "3", "Unit": "USD"}}},
    ]}]
    assert cb.parse_tag_costs(by_tag) == {"vision": Decimal("10.5"), "": Decimal("3")}
    by_usage = [{"Groups": [
        {"Keys": ["USE1-Cluster:ml.p5.48xlarge", "team$"], "Metrics": {"UnblendedCost": {"Amount": "7", "Unit": "USD"}}},
        {"Keys": ["USE1-Cluster:ml.p5.48xlarge", "team$platform"], "Metrics": {"UnblendedCost": {"Amount": "1.004", "Unit": "USD"}}},
        {"Keys": ["USE1-Studio_DW:ml.m5.xlarge", "team$vision"], "Metrics": {"UnblendedCost": {"Amount": "2", "Unit": "USD"}}},
    ]}]
    assert cb.parse_cluster_costs(by_usage) == ({"ml.p5.48xlarge": Decimal("8.00")}, {"": Decimal("7.00"), "platform": Decimal("1.00")})


def test_allocation_splits_by_quota_and_leaves_the_rest_unallocated():
    report = cb.compute(PERIOD, TAGS, CLUSTER, CAPACITY, TEAMS)
    # p5: 8000 / 8 = 1000 per instance; g5: 600 / 6 = 100 per instance.
    assert _line(report, "vision")["cluster_share"] == Decimal("4000.00")
    assert _line(report, "nlp")["cluster_share"] == Decimal("3200.00")  # 3 * 1000 + 2 * 100
    assert _line(report, "research")["cluster_share"] == Decimal("400.00")
    assert _line(report, "unallocated cluster capacity")["total"] == Decimal("1000.00")  # the eighth p5 nobody is guaranteed
    assert _line(report, "vision")["total"] == Decimal("5000.00")
    assert _line(report, "untagged, outside the cluster")["total"] == Decimal("100.00")  # 8700 - 8600
    assert report["totals"]["all"] == Decimal("10450.00") == sum(TAGS.values())
    assert report["checks"] == {"cluster_reconciled": True, "month_reconciled": True}


def test_usage_splits_by_measured_instance_hours():
    usage = {"vision": {"ml.p5.48xlarge": 672 * 5}, "research": {"ml.g5.12xlarge": 672 * 3}}
    report = cb.compute(PERIOD, TAGS, CLUSTER, CAPACITY, TEAMS, usage=usage, method="usage")
    assert _line(report, "vision")["cluster_share"] == Decimal("5000.00")  # borrowed a fifth instance
    assert _line(report, "vision")["share_allocation"] == Decimal("4000.00")
    assert _line(report, "nlp")["cluster_share"] == Decimal("0")
    assert _line(report, "research")["cluster_share"] == Decimal("300.00")
    assert _line(report, "idle cluster capacity")["total"] == Decimal("3300.00")  # idle: 8600 - 5300
    assert _line(report, "idle cluster capacity")["kind"] == "unallocated"


def test_rounding_goes_to_the_unallocated_line_so_lines_add_up():
    capacity = {"ml.p5.48xlarge": 3}
    teams = [{"name": n, "quota": {"resources": [{"instance_type": "ml.p5.48xlarge", "count": 1}]}} for n in ("a", "b", "c")]
    report = cb.compute(PERIOD, {"": Decimal("100.00")}, {"ml.p5.48xlarge": Decimal("100.00")}, capacity, teams)
    assert [_line(report, n)["cluster_share"] for n in "abc"] == [Decimal("33.33")] * 3
    assert _line(report, "unallocated cluster capacity")["total"] == Decimal("0.01")
    assert report["checks"]["cluster_reconciled"]


def test_a_tagged_cluster_is_taken_out_of_its_tag_value_not_counted_twice():
    tags = dict(TAGS, platform=Decimal("8620.00"), **{"": Decimal("100.00")})
    by_tag = {"platform": Decimal("8600.00")}
    report = cb.compute(PERIOD, tags, CLUSTER, CAPACITY, TEAMS, cluster_by_tag=by_tag)
    assert _line(report, "platform")["total"] == Decimal("20.00")  # platform's own spend besides the cluster
    assert _line(report, "untagged, outside the cluster")["total"] == Decimal("100.00")
    assert report["totals"]["all"] == sum(tags.values())
    only_cluster = cb.compute(PERIOD, dict(tags, platform=Decimal("8600.00")), CLUSTER, CAPACITY, TEAMS, cluster_by_tag=by_tag)
    assert all(line["name"] != "platform" for line in only_cluster["lines"])
    with pytest.raises(cb.ChargebackError, match="differs"):
        cb.compute(PERIOD, tags, CLUSTER, CAPACITY, TEAMS, cluster_by_tag={"": Decimal("1")})


def test_unknown_tag_values_get_their_own_line_and_a_warning():
    report = cb.compute(PERIOD, dict(TAGS, oldteam=Decimal("12.34")), CLUSTER, CAPACITY, TEAMS)
    assert _line(report, "oldteam")["kind"] == "other"
    assert any("oldteam" in w for w in report["warnings"])
    assert report["totals"]["all"] == sum(TAGS.values()) + Decimal("12.34")


def test_an_absent_team_is_not_charged_a_share():
    teams = [dict(TEAMS[0], state="absent")] + TEAMS[1:]
    report = cb.compute(PERIOD, TAGS, CLUSTER, CAPACITY, teams)
    assert _line(report, "vision")["kind"] == "other"
    assert _line(report, "unallocated cluster capacity")["total"] == Decimal("5000.00")


def test_accelerator_quotas_become_instances():
    teams = [{"name": "a", "quota": {"resources": [{"instance_type": "ml.p5.48xlarge", "accelerators": 16}]}}]
    report = cb.compute(PERIOD, {"": Decimal("8000")}, {"ml.p5.48xlarge": Decimal("8000")}, {"ml.p5.48xlarge": 8}, teams)
    assert _line(report, "a")["cluster_share"] == Decimal("2000.00")


@pytest.mark.parametrize(
    "resource, share",
    [
        # 7 mig-1g.10gb slices are one H100 of 64: 8000 / 64.
        ({"accelerator_partition": {"type": "mig-1g.10gb", "count": 7}}, Decimal("125.00")),
        # 1 slice: a seventh of a GPU, 8000 / 448 = 17.857... -> 17.86.
        ({"accelerator_partition": {"type": "mig-1g.10gb", "count": 1}}, Decimal("17.86")),
        # 96 vCPUs are half a p5 (192 vCPUs): memory follows by AWS's ratio.
        ({"vcpu": 96}, Decimal("500.00")),
        # 512 GiB is a quarter of a p5's 2048 GiB.
        ({"memory_gib": 512}, Decimal("250.00")),
        # Given beside each other, the largest share of an instance counts: 2 GPUs (a quarter) with 192 vCPUs (one instance).
        ({"accelerators": 2, "vcpu": 192}, Decimal("1000.00")),
    ],
)
def test_fine_grained_and_partition_quotas_are_charged_by_their_instance_equivalent(resource, share):
    """Threat model: (a) issue 36, case 4 (one team stops every team's report): a MIG, vCPU or memory guarantee the team
    file accepts made the allocation chargeback raise for the whole month; it is charged as the instances it takes."""
    teams = [{"name": "a", "quota": {"resources": [dict(resource, instance_type="ml.p5.48xlarge")]}}]
    report = cb.compute(PERIOD, {"": Decimal("8000")}, {"ml.p5.48xlarge": Decimal("8000")}, {"ml.p5.48xlarge": 8}, teams)
    assert _line(report, "a")["cluster_share"] == share
    lines = [line for line in report["lines"] if line["kind"] == "team"] + [_line(report, "unallocated cluster capacity")]
    assert sum(line["cluster_share"] for line in lines) == Decimal("8000.00")


@pytest.mark.parametrize(
    "teams, usage, method, fragment",
    [
        ([{"name": "a", "quota": {"resources": [{"instance_type": "ml.p5.48xlarge", "count": 9}]}}], None, "allocation", "more than the cluster's 8"),
        ([{"name": "a", "quota": {"resources": [{"instance_type": "ml.p4d.24xlarge", "count": 1}]}}], None, "allocation", "does not have"),
        ([{"name": "a", "quota": {"resources": [{"instance_type": "ml.g5.12xlarge", "accelerator_partition": {"type": "mig-1g.10gb", "count": 1}}]}}],
         None, "allocation", "not a MIG profile of ml.g5.12xlarge"),
        (TEAMS, {"vision": {"ml.p5.48xlarge": 8 * 672 + 1}}, "usage", "more than the cluster's"),
        (TEAMS, {"ghost": {"ml.p5.48xlarge": 1}}, "usage", "not present"),
        (TEAMS, None, "usage", "needs usage data"),
    ],
)
def test_inputs_that_cannot_give_a_correct_report_are_refused(teams, usage, method, fragment):
    with pytest.raises(cb.ChargebackError, match=fragment):
        cb.compute(PERIOD, TAGS, CLUSTER, CAPACITY, teams, usage=usage, method=method)


def test_renderings_carry_every_line():
    report = cb.compute(PERIOD, TAGS, CLUSTER, CAPACITY, TEAMS)
    csv_text = cb.to_csv(report)
    assert csv_text.splitlines()[0].startswith("month,method,line,kind,own_resources_usd")
    assert "2026-02,allocation,vision,team,1000.00,4000.00,,4000.00,5000.00" in csv_text
    assert "| unallocated cluster capacity | 0.00 | 1000.00 | n/a | 1000.00 |" in cb.to_markdown(report)
    html = cb.to_html(report)
    assert html.count('class="bar team"') == 3 and html.count('class="bar unallocated"') == 1
    assert "http" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert cb.to_table(report)[-1].split()[-1] == "10450.00"
    assert cb.plain(report)["totals"]["all"] == 10450.0


def test_an_answer_for_another_month_is_refused():
    cb.check_periods([{"TimePeriod": {"Start": "2026-02-01", "End": "2026-03-01"}}], PERIOD)
    with pytest.raises(cb.ChargebackError, match="answered for 2026-01-01 to 2026-02-01"):
        cb.check_periods([{"TimePeriod": {"Start": "2026-01-01", "End": "2026-02-01"}}], PERIOD)
