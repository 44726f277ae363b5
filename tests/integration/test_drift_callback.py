"""The drift callback and lookup end to end, on a play whose only resource is a local file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]

PLAYBOOK = [
    {
        "name": "Compare a file",
        "hosts": "localhost",
        "gather_facts": False,
        "check_mode": "{{ not (enforce | default(false) | bool) }}",
        "diff": True,
        "vars": {"hyperpod_drift": True},
        "tasks": [{"name": "Ensure the file", "ansible.builtin.copy": {"dest": "{{ target }}", "content": "desired\n", "mode": "0644"}}],
    },
    {
        "name": "Report drift",
        "hosts": "localhost",
        "gather_facts": False,
        "tasks": [
            {
                "name": "Fail on drift",
                "ansible.builtin.fail": {"msg": "drift"},
                "when": ["not (enforce | default(false) | bool)", "lookup('hyperpod.tenancy.drift') | length > 0"],
            }
        ],
    },
]


def run(playbook: Path, target: Path, report: Path, *extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), HYPERPOD_DRIFT_REPORT=str(report), ANSIBLE_NOCOLOR="1")
    command = [str(Path(sys.executable).with_name("ansible-playbook")), "-i", "localhost,", "-c", "local", str(playbook)]
    command += ["-e", f"target={target}", "-e", f"ansible_python_interpreter={sys.executable}", *extra]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_drift_is_reported_then_corrected(tmp_path):
    playbook = tmp_path / "drift.yml"
    playbook.write_text(yaml.safe_dump(PLAYBOOK, sort_keys=False))
    target, report = tmp_path / "resource.txt", tmp_path / "drift.json"
    target.write_text("changed out of band\n")

    reported = run(playbook, target, report)
    assert reported.returncode == 2, reported.stdout
    assert target.read_text() == "changed out of band\n"  # check mode changed nothing
    assert json.loads(report.read_text()) == {
        "localhost": [{"task": "Ensure the file", "module": "ansible.builtin.copy", "fields": ["(whole resource)"]}]
    }
    assert "DRIFT: 1 team(s) differ from the team file" in reported.stdout

    corrected = run(playbook, target, report, "-e", "enforce=true")
    assert corrected.returncode == 0, corrected.stdout
    assert target.read_text() == "desired\n"

    clean = run(playbook, target, report)
    assert clean.returncode == 0, clean.stdout
    assert json.loads(report.read_text()) == {}
    assert "DRIFT: none" in clean.stdout


def test_drift_report_refuses_to_run_without_the_callback(tmp_path):
    guard = [
        {
            "name": "Guard",
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [{"name": "Require the callback", "ansible.builtin.assert": {"that": "lookup('hyperpod.tenancy.drift', 'loaded')"}}],
        }
    ]
    playbook = tmp_path / "guard.yml"
    playbook.write_text(yaml.safe_dump(guard))
    target, report = tmp_path / "unused.txt", tmp_path / "drift.json"
    assert run(playbook, target, report).returncode == 0
    env_off = dict(os.environ, ANSIBLE_CALLBACKS_ENABLED="ansible.posix.timer")
    command = [str(Path(sys.executable).with_name("ansible-playbook")), "-i", "localhost,", "-c", "local", str(playbook)]
    off = subprocess.run(command, cwd=ROOT, env=dict(env_off, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg")), capture_output=True, text=True)
    assert off.returncode == 2, off.stdout
