"""No secret in any output: -vvv, AWX's job events, the drift report, files.

The Grafana admin token reaches the roles as a variable and leaves them only in the Authorization
header of the Grafana API calls. The role_observability target (both roles against the Grafana API
stub, onboarding, a rerun and offboarding) is run at -vvv with the drift callback recording and with a
callback that keeps every event as AWX's job events do (tests/integration/callback_plugins/job_events.py).

This is the target's only run (test_targets.py leaves it out, ``RUN_ELSEWHERE``): the run must pass, so every
assertion of the target (check mode, first run, rerun, offboarding against the stub) holds here too.

The AWS credentials never are a module argument (every argument reaches every callback): the playbooks, run as
users run them (the sandbox inventory, AWX's way of giving credentials), are recorded the same way, and a
connection variable that carries a credential is refused before any call (filter hyperpod.tenancy.aws_connection).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import yaml

from sandbox.client import SANDBOX_CREDENTIALS
from tests.integration.grafana_api import GrafanaStub
from tests.integration.playbook_runner import SAMPLE, assert_ok
from tests.integration.test_observability import assert_observability_built, assert_observability_offboarded
from tests.integration.test_targets import ROOT, TARGETS, write_playbook

TOKEN = "glsa_CANARYtoken0123456789abcdefCANARY_5f0e1d2c"
CALLBACKS = Path(__file__).parent / "callback_plugins"


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
    # The scratch files (the dashboards exported at offboarding, the stub's files) are removed by the end of the run;
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
    assert '"hyperpod.tenancy.grafana_team_folder"' in recorded and '"task_args"' in recorded
    assert json.loads(drift.read_text()), "the drift callback recorded nothing: the run's changes were not seen"
    dashboards = yaml.safe_load((ROOT / "roles/team_observability/defaults/main.yml").read_text())["team_observability_dashboards"]
    exported = {path.name for path in files_under(scratch_copies) if path.parent.name == "vision" and path.parent.parent.name == "report"}
    assert exported == {f"hp-{name}_vision.json" for name in dashboards}, "the scan did not see the exported dashboards"
    leaks = [name for name, text in (("stdout", run.stdout), ("stderr", run.stderr)) if TOKEN in text]
    leaks += [str(path.relative_to(tmp_path)) for path in files_under(tmp_path) if TOKEN in path.read_text(errors="replace")]
    counts = {"stdout": run.stdout.count(TOKEN), "job events": recorded.count(TOKEN)}
    assert leaks == [], f"the Grafana token appears in {leaks} ({counts})"


# ---------------------------------------------------------------- the AWS credentials in the playbooks' runs


def operator_session(client) -> dict:
    """The AWS_* variables of an assumed-role session of a role allowed everything: a real secret and session token,
    which the sandbox checks (signatures, the token), as AWX's credential would give them."""
    iam = client.boto3_client("iam")
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::123456789012:root"}, "Action": "sts:AssumeRole"}]}
    role = iam.create_role(RoleName="platform-operator", AssumeRolePolicyDocument=json.dumps(trust))["Role"]
    everything = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
    iam.put_role_policy(RoleName=role["RoleName"], PolicyName="operator", PolicyDocument=json.dumps(everything))
    session = client.boto3_client("sts").assume_role(RoleArn=role["Arn"], RoleSessionName="canary")["Credentials"]
    return {"AWS_ACCESS_KEY_ID": session["AccessKeyId"], "AWS_SECRET_ACCESS_KEY": session["SecretAccessKey"], "AWS_SESSION_TOKEN": session["SessionToken"]}


def recorded(sample, events: Path, credentials: dict) -> dict:
    """The environment of a run at -vvv, every event kept as AWX keeps its job events, the credentials in the environment."""
    return dict(
        sample.env,
        **credentials,
        ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default",
        ANSIBLE_CALLBACK_PLUGINS=str(CALLBACKS),
        # ansible.cfg's callbacks, and the one that keeps the events.
        ANSIBLE_CALLBACKS_ENABLED="hyperpod.tenancy.drift,hyperpod.tenancy.orphan_guard,job_events",
        HYPERPOD_JOB_EVENTS=str(events),
    )


def observability(sample, grafana) -> tuple[str, str]:
    return "-e", json.dumps({
        "hyperpod_observability": {"enabled": True},
        "observability_grafana_url": grafana.url,
        "hyperpod_grafana_api_key": grafana.token,
        "hyperpod_offboarding_report_dir": str(sample.workdir / "reports"),
    })  # fmt: skip


def leaks(secrets: dict, outputs: dict, directory: Path, but: Path | None = None) -> dict:
    """Where each secret appears: the named outputs and every file under ``directory`` (``but`` one), with counts."""
    found = {}
    files = [path for path in files_under(directory) if path != but]
    texts = dict(outputs, **{str(path.relative_to(directory)): path.read_text(errors="replace") for path in files})
    for name, secret in secrets.items():
        where = {place: text.count(secret) for place, text in texts.items() if secret in text}
        if where:
            found[name] = where
    return found


def test_no_aws_credential_or_grafana_token_in_the_events_of_a_build_a_drift_and_an_offboarding_run(sample, tmp_path):
    """Threat model: case 10 of issue 36, the AWS secret key reaches the job events. Every playbook gave every AWS task
    the connection of hyperpod_aws through module_defaults, and ansible-core 2.19 hands a callback each task's
    arguments, module_defaults applied: the sandbox inventory's secret_key was in clear in the job events of a drift and
    an offboarding run (AWX keeps them; anyone who may read the job reads them). Here the playbooks run as users run
    them (sandbox inventory, observability on, a Grafana token), at -vvv, every event kept as AWX keeps it: site.yml and
    an offboarding with the sandbox's key in the environment (as ``python -m sandbox run`` gives it), and the drift
    report with an operator's assumed-role session there (as AWX's credential gives it, a session token with it). No
    secret key, session token or Grafana token appears in any event, output, drift report or file. (One drift run: the
    credentials reach it from the environment whichever they are, and the session's are a secret key and a token.)

    The same runs are observability's end to end on the sandbox (one build of the sample with observability on, not
    two): AWS's side of what site.yml built (Amazon Managed Service for Prometheus, the EKS add-on, Amazon Managed
    Grafana and its Identity Center permissions), a rerun that changes and writes nothing, and the offboarding of one
    team, which takes its group off the Grafana workspace and leaves the rest (tests/integration/test_observability.py)."""
    (tmp_path / "grafana").mkdir()
    grafana = GrafanaStub(tmp_path / "grafana", token=TOKEN)
    try:
        sandbox_key = {key: SANDBOX_CREDENTIALS[key] for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
        session = operator_session(sample.client)
        secrets = {
            "the sandbox's secret key": SANDBOX_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            "the session's secret key": session["AWS_SECRET_ACCESS_KEY"],
            "the session token": session["AWS_SESSION_TOKEN"],
            "the Grafana token": TOKEN,
        }
        with_grafana = observability(sample, grafana)
        outputs = {}

        def run_recorded(name, playbook, args, credentials):
            events = tmp_path / f"{name.replace(' ', '-')}-events.jsonl"
            result = sample.run(playbook, *args, "-vvv", env=recorded(sample, events, credentials))
            assert_ok(result, f"{playbook} -vvv ({name})")
            recorded_events = events.read_text()
            # The runs did what the secrets are for: AWS tasks with their arguments, and Grafana's (the drift report
            # reads the Grafana workspace after the teams: it compares no team's folder).
            assert '"task_args"' in recorded_events and '"hyperpod.tenancy.team_resources"' in recorded_events, name
            assert name.startswith("drift") or '"hyperpod.tenancy.grafana_team_folder"' in recorded_events, name
            outputs.update({f"{name} stdout": result.stdout, f"{name} stderr": result.stderr})
            assert leaks(secrets, outputs, tmp_path) == {}, name

        seed = json.loads(sample.seed_file.read_text())
        run_recorded("site", "site.yml", with_grafana, sandbox_key)
        teams = [team["name"] for team in SAMPLE["hyperpod_teams"] if team.get("state", "present") == "present"]
        assert_observability_built(sample, seed, teams)

        sample.client.clear_requests()
        rerun = sample.run("site.yml", *with_grafana)
        assert_ok(rerun, "second site.yml with observability")
        assert rerun.changed_tasks() == set()
        assert [(r["service"], r["operation"]) for r in sample.client.writes()] == []
        outputs.update({"rerun stdout": rerun.stdout, "rerun stderr": rerun.stderr})

        offboarded = teams[0]
        assert offboarded == "vision"
        settings = copy.deepcopy(SAMPLE)
        next(t for t in settings["hyperpod_teams"] if t["name"] == offboarded)["state"] = "absent"
        sample.write_settings(settings)
        sample.client.clear_requests()
        run_recorded("offboarding", "playbooks/remove_team.yml", ("-e", f"team={offboarded}", *with_grafana), sandbox_key)
        assert_observability_offboarded(sample, seed, teams[1:])

        run_recorded("drift with a session", "playbooks/drift.yml", with_grafana, session)
        assert sample.drift_report() is not None
    finally:
        grafana.stop()


def test_a_credential_in_the_aws_connection_is_refused_before_any_call_and_shown_nowhere(sample, tmp_path):
    """Threat model: case 10 of issue 36. A credential in hyperpod_aws (the inventory, a vaulted group_vars file)
    would be an argument of every AWS task, in clear in every job event: every playbook refuses it on the first task
    that would carry it, naming the variable and the keys, before any write, and no value shows in any output."""
    canaries = {"secret_key": "hyperpod-canary-secret-9f8e7d6c5b4a", "session_token": "hyperpod-canary-token-0a1b2c3d4e5f"}
    settings = copy.deepcopy(SAMPLE)
    settings["hyperpod_aws"] = {"endpoint_url": sample.client.endpoint, "region": "us-east-1", "access_key": "AKIACANARY0000000001", **canaries}
    sample.write_settings(settings)
    for playbook, *args in (
        ("site.yml",),
        ("playbooks/drift.yml",),
        ("playbooks/remove_team.yml", "-e", "team=vision", "-e", "confirm=vision"),
    ):
        events = tmp_path / "events.jsonl"
        sample.client.clear_requests()
        result = sample.run(playbook, *args, "-vvv", env=recorded(sample, events, {}))
        assert result.returncode != 0, f"{playbook} ran with credentials in hyperpod_aws"
        assert "hyperpod_aws sets access_key, secret_key, session_token: refusing to run" in result.stdout, result.stdout[-5000:]
        assert sample.client.writes() == [], playbook
        outputs = {"stdout": result.stdout, "stderr": result.stderr}
        # The platform's settings file, which the harness writes with the connection, is the only place they are.
        assert leaks(canaries, outputs, tmp_path, but=sample.vars_file) == {}, playbook
