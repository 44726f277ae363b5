"""Malformed team files: site.yml fails naming the team and the field, before any AWS call."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from sandbox.seed import load_vars

ROOT = Path(__file__).resolve().parents[2]
GOOD = load_vars(ROOT / "group_vars" / "all")


def team_change(index, path, value):
    def change(settings):
        target = settings["hyperpod_teams"][index]
        *parents, last = path
        for key in parents:
            target = target[key]
        target[last] = value

    return change


def settings_change(key, value):
    def change(settings):
        settings[key] = value

    return change


def cluster_change(path, value):
    def change(settings):
        target = settings["hyperpod_cluster"]
        *parents, last = path
        for key in parents:
            target = target[key]
        target[last] = value

    return change


P5 = "ml.p5.48xlarge"
CASES = [
    ("teams not a list", settings_change("hyperpod_teams", "vision"), "hyperpod_teams: must be a list of teams, got str"),
    ("team not a mapping", settings_change("hyperpod_teams", ["vision"]), "team #1: must be a mapping, got str"),
    ("name missing", team_change(0, ["name"], None), "team #1: name: is required"),
    ("name with capitals", team_change(0, ["name"], "Vision"), "team 'Vision': name: must be lower-case"),
    ("name with underscore", team_change(0, ["name"], "computer_vision"), "team 'computer_vision': name:"),
    ("name too long for the permission set", team_change(0, ["name"], "vision-team-with-long-name"), "permission set name"),
    ("duplicate team", team_change(1, ["name"], "vision"), "team 'vision': name: is used by team #1 and team #2"),
    ("group missing", team_change(0, ["identity_center_group"], None), "team 'vision': identity_center_group: is required"),
    ("group shared", team_change(1, ["identity_center_group"], "TeamVision"), "TeamVision is the group of vision and nlp"),
    ("typo in team key", team_change(0, ["cost_centre"], "CC"), "team 'vision': cost_centre: unknown key (did you mean 'cost_center'?)"),
    ("typo in quota key", team_change(0, ["quota", "sharring"], "lend"), "team 'vision': quota.sharring: unknown key"),
    ("unknown state", team_change(0, ["state"], "deleted"), "team 'vision': state: 'deleted' is not one of present, absent"),
    ("unknown instance type", team_change(0, ["quota", "resources"], [{"instance_type": "ml.p5.96xlarge", "count": 1}]), "not a HyperPod instance type"),
    ("type not in the cluster", team_change(0, ["quota", "resources"], [{"instance_type": "ml.g5.xlarge", "count": 1}]), "the cluster has no ml.g5.xlarge"),
    ("over capacity", team_change(0, ["quota", "resources"], [{"instance_type": P5, "count": 6}]), "guaranteed ml.p5.48xlarge total 9 (vision 6, nlp 3)"),
    ("count is text", team_change(0, ["quota", "resources", 0, "count"], "four"), "team 'vision': quota.resources[0].count: 'four'"),
    ("count negative", team_change(0, ["quota", "resources", 0, "count"], -1), "team 'vision': quota.resources[0].count: -1"),
    ("borrow limit out of range", team_change(0, ["quota", "borrow_limit"], 20000), "team 'vision': quota.borrow_limit: 20000"),
    ("borrow limit with lend only", team_change(2, ["quota", "borrow_limit"], 10), "team 'research': quota.borrow_limit: applies only with"),
    ("weight out of range", team_change(0, ["quota", "fair_share_weight"], 250), "team 'vision': quota.fair_share_weight: 250"),
    ("unknown sharing", team_change(0, ["quota", "sharing"], "share"), "team 'vision': quota.sharing: 'share'"),
    ("duplicate member", team_change(0, ["members"], ["alice", "alice"]), "team 'vision': members[1].name: alice is listed twice"),
    ("member breaks profile pattern", team_change(0, ["members"], ["alice.smith"]), "team 'vision': members[0].name: 'alice.smith'"),
    ("budget negative", team_change(0, ["budget", "monthly_usd"], -1), "team 'vision': budget.monthly_usd: -1"),
    ("budget notify not an address", team_change(0, ["budget", "notify"], ["finops"]), "team 'vision': budget.notify[0]: 'finops'"),
    ("storage mode as number", team_change(0, ["storage"], {"gid": 20001, "mode": 770}), "team 'vision': storage.mode: 770"),
    ("unknown on_remove", team_change(0, ["storage"], {"gid": 20001, "on_remove": "purge"}), "team 'vision': storage.on_remove: 'purge'"),
    ("eleven priority classes", cluster_change(["scheduler", "priority_classes"], [{"name": f"p{i}", "weight": 1} for i in range(11)]), "has 11 entries"),
    ("priority class pattern", cluster_change(["scheduler", "priority_classes", 0, "name"], "Inference"), "priority_classes[0].name: 'Inference'"),
    ("priority weight", cluster_change(["scheduler", "priority_classes", 0, "weight"], 101), "priority_classes[0].weight: 101"),
]


@pytest.mark.parametrize("label, change, expected", CASES, ids=[case[0] for case in CASES])
def test_bad_team_file_fails_before_any_call(label, change, expected, seeded, aws_env, tmp_path):
    client, seed = seeded
    settings = copy.deepcopy(GOOD)
    change(settings)
    bad = tmp_path / "bad.yml"
    bad.write_text(yaml.safe_dump(settings, sort_keys=False))
    seed_file = tmp_path / "seed.json"
    seed_file.write_text(json.dumps(seed))
    env = dict(aws_env, HYPERPOD_SANDBOX_SEED=str(seed_file), ANSIBLE_NOCOLOR="1")
    run = subprocess.run(
        [str(Path(sys.executable).with_name("ansible-playbook")), "site.yml", "-e", f"@{bad}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 2, run.stdout[-3000:]
    assert expected in run.stdout, run.stdout[-3000:]
    assert client.requests() == []


def test_there_are_at_least_25_cases():
    assert len(CASES) >= 25
