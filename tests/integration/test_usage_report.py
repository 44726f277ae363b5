"""playbooks/usage_report.yml end to end: the sandbox's AMP (forwarding to a real Prometheus) and Cost Explorer.

The month is tests/integration/usage_month.py; its Cost Explorer answers are queued in the sandbox. The
chargeback by measured use, the idle-capacity report and the quota advice are compared with the sums
done by hand there and here.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import yaml

from bench.teams import sandbox_inventory, write_settings
from sandbox.services.ce_tags import queue_cost_and_usage
from tests.integration.usage_month import CLUSTER, CLUSTER_COST, G5, IDLE, MONTH, P5, SHARES, TEAMS

ROOT = Path(__file__).resolve().parents[2]
PERIOD = {"Start": "2026-02-01", "End": "2026-03-01"}
GROUPS = {"vision": "TeamVision", "nlp": "TeamNLP", "research": "TeamResearch", "audio": "TeamAudio"}
TEAM_FILE = {"hyperpod_cluster": CLUSTER, "hyperpod_teams": [dict(team, identity_center_group=GROUPS[team["name"]]) for team in TEAMS]}
OWN = {"vision": "1000.00", "nlp": "500.00", "research": "250.00"}
CLUSTER_TOTAL = sum(CLUSTER_COST.values())


def _group(keys, amount):
    return {"Keys": keys, "Metrics": {"UnblendedCost": {"Amount": str(amount), "Unit": "USD"}}}


def _costs():
    by_tag = [_group(["team$%s" % team], amount) for team, amount in OWN.items()] + [_group(["team$"], CLUSTER_TOTAL + 150)]
    by_usage = [_group(["USE1-Cluster:%s" % itype, "team$"], cost) for itype, cost in CLUSTER_COST.items()]
    return {"results": [
        {"ResultsByTime": [{"TimePeriod": PERIOD, "Total": {}, "Estimated": False, "Groups": groups}], "DimensionValueAttributes": []}
        for groups in (by_tag, by_usage)
    ]}


def _rows(path, key):
    with open(path) as handle:
        return {tuple(row[k] for k in key): row for row in csv.DictReader(handle)}


def _playbook(aws_env, tmp_path, **variables):
    team_file, platform = tmp_path / "teams" / "teams.yml", tmp_path / "platform.yml"
    write_settings(TEAM_FILE, team_file, platform)
    # The quota advice's diff is of the team file the inventory names, the one the playbook validated.
    variables = dict({"usage_month": MONTH, "usage_output_dir": str(tmp_path / "reports"), "usage_step": 3600}, **variables)
    return team_file, subprocess.run(
        [str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(sandbox_inventory(tmp_path, team_file)), "playbooks/usage_report.yml",
         "-e", "@%s" % platform, "-e", json.dumps(variables)],
        cwd=ROOT, env=dict(aws_env, ANSIBLE_NOCOLOR="1", ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp")), capture_output=True, text=True, timeout=600,
    )


def test_usage_report_splits_by_measured_use_reports_idle_and_advises(sandbox, amp_workspace, aws_env, tmp_path):
    queue_cost_and_usage(sandbox.endpoint, _costs())
    sandbox.clear_requests()
    team_file, run = _playbook(aws_env, tmp_path, usage_workspace_id=amp_workspace)
    before = yaml.safe_dump({"hyperpod_teams": TEAM_FILE["hyperpod_teams"]}, sort_keys=False)
    out = tmp_path / "reports"
    assert run.returncode == 0, run.stdout[-8000:] + run.stderr[-3000:]

    # The chargeback by measured use, to the cent (usage_month.py works the shares out).
    charge = {line: row for (line,), row in _rows(out / ("chargeback-%s.csv" % MONTH), ["line"]).items()}
    assert {r["method"] for r in charge.values()} == {"usage"}
    for team, share in SHARES.items():
        assert charge[team]["cluster_share_usd"] == "%.2f" % share, team
        assert charge[team]["total_usd"] == "%.2f" % (share + Decimal(OWN.get(team, "0"))), team
    assert charge["vision"]["cluster_share_allocation_usd"] == "150528.00"  # 4 of 8 p5 guaranteed: half of 301056.00
    assert charge["idle cluster capacity"]["total_usd"] == "%.2f" % IDLE
    assert charge["idle cluster capacity"]["kind"] == "unallocated"
    shares = sum(Decimal(charge[t]["cluster_share_usd"]) for t in SHARES)
    assert shares + Decimal(charge["idle cluster capacity"]["total_usd"]) == CLUSTER_TOTAL == Decimal("329642.89")
    assert sum(Decimal(r["total_usd"]) for r in charge.values()) == Decimal("1750.00") + CLUSTER_TOTAL + Decimal("150.00")

    # The idle-capacity report: the month per type, by hand (GPU-hours; capacity 64 and 24 GPUs x 672 h).
    idle = _rows(out / ("usage-%s.csv" % MONTH), ["day", "instance_type"])
    assert {k: v for k, v in idle[(MONTH, P5)].items() if k not in ("day", "instance_type")} == {
        "capacity": "43008.00", "guaranteed": "43008.00", "admitted": "32256.00",  # 26880 vision + 5376 nlp
        "busy": "22848.00", "idle": "10752.00", "admitted_not_busy": "9408.00",  # 20160 + 2688
    }
    assert {k: v for k, v in idle[(MONTH, G5)].items() if k not in ("day", "instance_type")} == {
        "capacity": "16128.00", "guaranteed": "16128.00", "admitted": "8064.00",  # 2688 nlp + 5376 research
        "busy": "3225.60", "idle": "8064.00", "admitted_not_busy": "4838.40",  # 2688 + 537.6
    }
    assert idle[("2026-02-01", G5)]["idle"] == "0.00"  # nlp borrowed what research left: all 24 GPUs admitted
    assert idle[("2026-02-08", G5)]["idle"] == "384.00"  # nlp done: 16 GPUs x 24 h idle
    assert len([k for k in idle if k[0] != MONTH]) == 2 * 28

    # The quota advice: a diff for a person to apply; the team file is left as it was.
    assert team_file.read_text() == before
    diff = (out / ("quota-advice-%s.diff" % MONTH)).read_text()
    assert diff.startswith("--- %s\n+++ %s\n" % (team_file, team_file))  # the team file the inventory names, as the user keeps it
    changed = sorted(line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---"))
    assert changed == sorted([
        "-      count: 4", "+      count: 5",  # vision p5: median of 6 (a fortnight) and 4 (a fortnight)
        "-    borrow_limit: 50", "+    borrow_limit: 20",  # vision: p95 6 over 5 guaranteed
        "-      count: 3", "+      count: 1",  # nlp p5: 1 all month
        "-      count: 2", "+      count: 0",  # nlp g5: used in one week of four
        "-      count: 4", "+      count: 2",  # research g5: 2 all month
        "-      count: 1", "+      count: 0",  # audio p5: no jobs
    ])
    assert "a borrow limit in percent cannot express it" in run.stdout  # nlp's g5 peak over a guarantee of 0

    # Only reads reached AWS: the query API (the month, then the advice's weeks) and Cost Explorer.
    assert sandbox.writes() == []
    assert [r["operation"] for r in sandbox.requests() if r["service"] == "amp"] == ["QueryMetrics"] * 5


def test_a_workspace_alias_nobody_has_fails_before_any_query(sandbox, amp_workspace, aws_env, tmp_path):
    sandbox.clear_requests()
    _team_file, run = _playbook(aws_env, tmp_path, usage_workspace_alias="no-such-workspace")
    assert run.returncode != 0
    assert "0 live AMP workspaces have the alias 'no-such-workspace'; give workspace_id" in run.stdout
    assert [r["operation"] for r in sandbox.requests() if r["service"] == "amp"] == ["ListWorkspaces"]
    assert sandbox.writes() == []
