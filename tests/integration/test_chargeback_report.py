"""playbooks/chargeback.yml on Cost Explorer results seeded in the sandbox, checked against sums done by hand."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

from bench.teams import sandbox_inventory, write_settings
from sandbox.services.ce_tags import queue_cost_and_usage
from tests.integration.usage_month import CLUSTER, G5, MONTH, P5

ROOT = Path(__file__).resolve().parents[2]
PERIOD = {"Start": "2026-02-01", "End": "2026-03-01"}

# The team file of this test: p5 capacity 8 (vision 4, nlp 3: one instance unallocated),
# g5 capacity 6 (nlp 2, research 4: fully allocated).
TEAM_FILE = {
    "hyperpod_cluster": CLUSTER,
    "hyperpod_teams": [
        {"name": "vision", "identity_center_group": "TeamVision", "quota": {"resources": [{"instance_type": P5, "count": 4}]}},
        {
            "name": "nlp",
            "identity_center_group": "TeamNLP",
            "quota": {"resources": [{"instance_type": P5, "count": 3}, {"instance_type": G5, "count": 2}]},
        },
        {"name": "research", "identity_center_group": "TeamResearch", "quota": {"resources": [{"instance_type": G5, "count": 4}]}},
    ],
}


def _group(keys, amount):
    return {"Keys": keys, "Metrics": {"UnblendedCost": {"Amount": amount, "Unit": "USD"}}}


# 1. the month by team tag; 2. SageMaker by usage type and team tag (the report's two calls, in order).
SEEDED = {
    "results": [
        {
            "ResultsByTime": [
                {
                    "TimePeriod": PERIOD,
                    "Total": {},
                    "Estimated": False,
                    "Groups": [
                        _group(["team$vision"], "1000.00"),
                        _group(["team$nlp"], "500.00"),
                        _group(["team$research"], "250.00"),
                        _group(["team$oldteam"], "12.34"),
                        _group(["team$"], "8750.00"),  # the cluster (8600) and 150 of other untagged spend
                    ],
                }
            ],
            "DimensionValueAttributes": [],
        },
        {
            "ResultsByTime": [
                {
                    "TimePeriod": PERIOD,
                    "Total": {},
                    "Estimated": False,
                    "Groups": [
                        _group(["USE1-Cluster:ml.p5.48xlarge", "team$"], "8000.00"),
                        _group(["USE1-Cluster:ml.g5.12xlarge", "team$"], "600.00"),
                        _group(["USE1-Studio_DW:ml.m5.xlarge", "team$vision"], "40.00"),  # not the cluster
                    ],
                }
            ],
            "DimensionValueAttributes": [],
        },
    ]
}


def _run(client, aws_env, tmp_path, *extra):
    team_file, platform = tmp_path / "teams" / "teams.yml", tmp_path / "platform.yml"
    write_settings(TEAM_FILE, team_file, platform)
    out = tmp_path / "reports"
    run = subprocess.run(
        [
            str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(sandbox_inventory(tmp_path, team_file)), "playbooks/chargeback.yml",
            "-e", "@%s" % platform, "-e", "chargeback_month=%s" % MONTH, "-e", "chargeback_output_dir=%s" % out, *extra,
        ],
        cwd=ROOT, env=dict(aws_env, ANSIBLE_NOCOLOR="1", ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp")), capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stdout[-8000:] + run.stderr[-3000:]
    with open(out / ("chargeback-%s.csv" % MONTH)) as handle:
        rows = {row["line"]: row for row in csv.DictReader(handle)}
    return run, out, rows


def test_report_matches_the_sums_done_by_hand(seeded, aws_env, tmp_path):
    client, _seed = seeded
    queue_cost_and_usage(client.endpoint, SEEDED)
    run, out, rows = _run(client, aws_env, tmp_path)

    # p5: 8000 / 8 instances = 1000 each; g5: 600 / 6 = 100 each.
    expected = {
        "vision": ("team", "1000.00", "4000.00", "5000.00"),
        "nlp": ("team", "500.00", "3200.00", "3700.00"),  # 3 p5 + 2 g5
        "research": ("team", "250.00", "400.00", "650.00"),
        "oldteam": ("other", "12.34", "0.00", "12.34"),  # tagged, not a team of the file: its own line
        "unallocated cluster capacity": ("unallocated", "0.00", "1000.00", "1000.00"),  # the eighth p5
        "untagged, outside the cluster": ("untagged", "150.00", "0.00", "150.00"),  # 8750 - 8600
    }
    assert {line: (r["kind"], r["own_resources_usd"], r["cluster_share_usd"], r["total_usd"]) for line, r in rows.items()} == expected
    team_shares = sum(float(r["cluster_share_usd"]) for r in rows.values() if r["kind"] == "team")
    assert team_shares + float(rows["unallocated cluster capacity"]["total_usd"]) == 8000.00 + 600.00
    assert sum(float(r["total_usd"]) for r in rows.values()) == 1000.00 + 500.00 + 250.00 + 12.34 + 8750.00
    assert {r["month"] for r in rows.values()} == {MONTH}

    # The table is printed at the end of the run; the other renderings are written.
    tail = run.stdout[run.stdout.index("TASK [Print the chargeback]"):]
    assert "TOTAL" in tail and "10512.34" in tail
    assert "| unallocated cluster capacity | 0.00 | 1000.00 | n/a | 1000.00 |" in (out / ("chargeback-%s.md" % MONTH)).read_text()
    assert (out / ("chargeback-%s.html" % MONTH)).read_text().count('class="bar team"') == 3

    # Only reads reached AWS.
    assert [r for r in client.writes() if r["service"] in ("ce", "budgets")] == []
    assert [r["operation"] for r in client.requests() if r["service"] == "ce"] == ["GetCostAndUsage", "GetCostAndUsage"]


def test_usage_split_charges_measured_use_and_shows_idle_capacity(seeded, aws_env, tmp_path):
    client, _seed = seeded
    queue_cost_and_usage(client.endpoint, SEEDED)
    usage = {"chargeback_method": "usage", "chargeback_usage": {"vision": {P5: 672 * 5}, "research": {G5: 672 * 3}}}
    _run_, _out, rows = _run(client, aws_env, tmp_path, "-e", json.dumps(usage))
    assert rows["vision"]["cluster_share_usage_usd"] == "5000.00"  # used five p5 instances all month: borrowed one
    assert rows["vision"]["cluster_share_allocation_usd"] == "4000.00"
    assert rows["vision"]["total_usd"] == "6000.00"
    assert rows["nlp"]["total_usd"] == "500.00"  # nothing measured: own resources only
    assert rows["research"]["cluster_share_usd"] == "300.00"
    assert rows["idle cluster capacity"]["total_usd"] == "3300.00"  # idle: 8600 - 5000 - 300
    assert {r["method"] for r in rows.values()} == {"usage"}
