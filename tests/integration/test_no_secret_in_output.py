"""No Grafana token in any output of the observability roles: -vvv, AWX's job events, the drift report, files.

The Grafana admin token reaches the roles as a variable and leaves them only in the Authorization
header of the Grafana API calls. The role_observability target (both roles against the Grafana API
stub, onboarding, a rerun and offboarding) is run at -vvv with the drift callback recording and with a
callback that keeps every event as AWX's job events do (tests/integration/callback_plugins/job_events.py).

This is the target's only run (test_targets.py leaves it out, ``RUN_ELSEWHERE``): the run must pass, so every
assertion of the target (check mode, first run, rerun, offboarding against the stub) holds here too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from tests.integration.test_targets import ROOT, TARGETS, write_playbook

TOKEN = "glsa_CANARYtoken0123456789abcdefCANARY_5f0e1d2c"


def files_under(directory: Path):
    for path in directory.rglob("*"):
        if path.is_file():
            yield path


def test_the_grafana_token_appears_in_no_output_event_or_file(seeded, aws_env, tmp_path):
    client, seed = seeded
    playbook = write_playbook(tmp_path, "role_observability", client.endpoint, seed)
    plays = yaml.safe_load(playbook.read_text())
    plays[0]["vars"]["hyperpod_drift"] = True
    playbook.write_text(yaml.safe_dump(plays, sort_keys=False))
    events, drift = tmp_path / "job_events.jsonl", tmp_path / "drift.json"
    # The roles' scratch files (the rendered dashboards, the stub's files) are removed by the end of the run;
    # the job-events callback copies them as they stand after each task, so the scan below reads them too.
    scratch, scratch_copies = tmp_path / "scratch", tmp_path / "scratch-copies"
    scratch.mkdir()
    env = dict(
        aws_env,
        ANSIBLE_ROLES_PATH=str(TARGETS),
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"),
        ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default",
        ANSIBLE_CALLBACK_PLUGINS=str(Path(__file__).parent / "callback_plugins"),
        ANSIBLE_CALLBACKS_ENABLED="hyperpod.tenancy.drift,job_events",
        HYPERPOD_JOB_EVENTS=str(events),
        HYPERPOD_DRIFT_REPORT=str(drift),
        TMPDIR=str(scratch),
        HYPERPOD_SCRATCH_DIR=str(scratch),
        HYPERPOD_SCRATCH_COPIES=str(scratch_copies),
    )
    run = subprocess.run(
        [str(Path(sys.executable).with_name("ansible-playbook")), "-i", "localhost,", str(playbook), "-vvv",
         "-e", json.dumps({"role_observability_token": TOKEN})],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-20000:] + run.stderr[-5000:]
    # The run did call Grafana with the token: the stub answers 401 without it, and the target checks what Grafana holds.
    assert events.exists() and drift.exists()
    recorded = events.read_text()
    assert '"community.grafana.grafana_folder"' in recorded and '"task_args"' in recorded
    assert json.loads(drift.read_text()), "the drift callback recorded nothing: the run's changes were not seen"
    dashboards = yaml.safe_load((ROOT / "roles/team_observability/defaults/main.yml").read_text())["team_observability_dashboards"]
    rendered = {path.name for path in files_under(scratch_copies) if path.parent.name.endswith("-dashboards")}
    assert rendered == {f"{name}.json" for name in dashboards}, "the scan did not see the rendered dashboards"
    leaks = [name for name, text in (("stdout", run.stdout), ("stderr", run.stderr)) if TOKEN in text]
    leaks += [str(path.relative_to(tmp_path)) for path in files_under(tmp_path) if TOKEN in path.read_text(errors="replace")]
    counts = {"stdout": run.stdout.count(TOKEN), "job events": recorded.count(TOKEN)}
    assert leaks == [], f"the Grafana token appears in {leaks} ({counts})"
