"""Running the collection's playbooks against the test sandbox, and reading their results."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from bench.teams import sandbox_inventory, write_settings
from sandbox import iam_propagation
from sandbox.client import SANDBOX_CREDENTIALS
from sandbox.seed import load_sample

ROOT = Path(__file__).resolve().parents[2]
ANSIBLE_PLAYBOOK = str(Path(sys.executable).with_name("ansible-playbook"))
# The sample: the cluster file (group_vars/all) and the team file (teams/teams.yml) with vision, nlp and research.
SAMPLE = load_sample()


# Set in the environment of every run that Playbooks.start starts, to a value of its own: every
# process of the run inherits it, also the workers that ansible-core moves to sessions of their own.
RUN_MARKER = "HYPERPOD_TEST_RUN"


def processes_of(marker: str) -> dict[int, str]:
    """pid -> "pid ppid sid state command" of the live processes whose environment carries ``marker``."""
    needle = f"{RUN_MARKER}={marker}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            # /proc/<pid>/stat: pid (comm) state ppid pgrp session ...
            state, ppid, _, sid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:4]
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200]
        except OSError:  # gone meanwhile, or a process of another user
            continue
        if state != "Z":
            found[int(entry.name)] = f"{entry.name} ppid={ppid} sid={sid} {state} {command}"
    return found


def start(command: list[str], env: dict) -> subprocess.Popen:
    """A run in a session and process group of its own, every process of it marked by ``RUN_MARKER`` in its environment."""
    marker = uuid.uuid4().hex
    process = subprocess.Popen(
        command, cwd=ROOT, env=dict(env, **{RUN_MARKER: marker}), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    process.marker = marker
    return process


def cancel(process: subprocess.Popen, grace: float = 30, then=None) -> list[str]:
    """Cancel a run as ansible-runner does (SIGKILL to the run's process group), then return what of it survived.

    ansible-runner's ``Runner.handle_termination`` kills the process group of the
    ``ansible-playbook`` it started with SIGKILL. ansible-core's workers call ``setsid()``, so
    that signal does not reach them. A survivor is reported once ``grace`` seconds passed
    without it ending, and then killed, so that a failing test leaves nothing behind either.
    ``then`` is called once the run's own process is gone.
    """
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.communicate()
    if then:
        then()
    deadline = time.monotonic() + grace
    while (left := processes_of(process.marker)) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return sorted(left.values())


def assert_ok(result, what):
    """Fail with the failed tasks (team, task, message) when the run did not succeed."""
    failures = "\n".join(result.failures()) if result.stdout.lstrip().startswith("{") else result.stdout[-20000:]
    assert result.returncode == 0, f"{what} failed:\n{failures}\n{result.stderr[-5000:]}"


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str

    @property
    def report(self) -> dict:
        start = self.stdout.find("{")
        # raw_decode: the drift callback prints its summary after the JSON document.
        return json.JSONDecoder().raw_decode(self.stdout[start:])[0] if start >= 0 else {}

    def changed_tasks(self) -> set[tuple[str, str]]:
        """(host, task) pairs that reported a change, include_role tasks excluded."""
        changed = set()
        for play in self.report.get("plays", []):
            for task in play["tasks"]:
                for host, result in task["hosts"].items():
                    if result.get("changed") and result.get("action") not in ("ansible.builtin.include_role", "include_role"):
                        changed.add((host, task["task"]["name"]))
        return changed

    def changed_layers(self) -> set[tuple[str, str, str]]:
        """(host, task, layer) for each layer of a team_resources task that reported a change: one task runs every
        layer of a team, so a layer whose prediction is wrong hides behind another's change in ``changed_tasks``."""
        changed = set()
        for play in self.report.get("plays", []):
            for task in play["tasks"]:
                for host, result in task["hosts"].items():
                    for layer, outcome in (result.get("layers") or {}).items():
                        if isinstance(outcome, dict) and outcome.get("changed"):
                            changed.add((host, task["task"]["name"], layer))
        return changed

    def failures(self) -> list[str]:
        """One line per failed task: host, task and message."""
        found = []
        for play in self.report.get("plays", []):
            for task in play["tasks"]:
                for host, result in task["hosts"].items():
                    if result.get("failed") and not result.get("ignore_errors"):
                        found.append(f"{host} | {task['task']['name']} | {str(result.get('msg'))[:600]}")
        return found

    @property
    def stats(self) -> dict:
        return self.report.get("stats", {})


class Playbooks:
    """Runs playbooks with the sandbox inventory, against one team file and one seeded sandbox."""

    def __init__(self, client, seed: dict, workdir: Path, settings: dict) -> None:
        self.client = client
        # Every run meets IAM's eventual consistency, as on AWS: a new role is refused for a moment (sandbox/iam_propagation.py).
        client.set_faults(iam_propagation_s=iam_propagation.DEFAULT_DELAY)
        self.workdir = workdir
        # As a user keeps them: the team file apart (team leads' pull requests, read by the collection as data), the
        # platform's settings (the cluster file) given to Ansible as variables.
        self.team_file = workdir / "teams" / "teams.yml"
        self.vars_file = workdir / "platform.yml"
        self.seed_file = workdir / "seed.json"
        self.seed_file.write_text(json.dumps(seed))
        self.write_settings(settings)
        self.inventory = sandbox_inventory(workdir, self.team_file)
        self.cwd = ROOT
        self.env = dict(
            os.environ,
            ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
            ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
            ANSIBLE_NOCOLOR="1",
            HYPERPOD_SANDBOX_URL=client.endpoint,
            HYPERPOD_SANDBOX_SEED=str(self.seed_file),
            HYPERPOD_DRIFT_REPORT=str(workdir / "drift.json"),
            # The fact cache of this team file's runs only (verify_isolation's answers from IAM).
            ANSIBLE_CACHE_PLUGIN_CONNECTION=str(workdir / "facts"),
            # The cluster the sandbox's EKS cluster points at, as `python -m sandbox run` gives it.
            K8S_AUTH_KUBECONFIG=client.kubeconfig(),
            **SANDBOX_CREDENTIALS,
        )

    def as_installed(self, collections_path: Path) -> Playbooks:
        """Run as a user runs the collection: the installed artifact (``collections_path``, nothing of the checkout), playbooks by
        FQCN, from a directory that holds only the user's ansible.cfg (examples/ansible.cfg), inventory and team file."""
        config = self.workdir / "ansible.cfg"
        shutil.copy(ROOT / "examples" / "ansible.cfg", config)
        self.cwd = self.workdir
        self.env.update(ANSIBLE_CONFIG=str(config), ANSIBLE_COLLECTIONS_PATH=str(collections_path))
        return self

    def write_settings(self, settings: dict) -> None:
        """``settings``: the cluster file's variables and ``hyperpod_teams``, written as the team file."""
        self.settings = settings
        write_settings(settings, self.team_file, self.vars_file)

    def command(self, playbook: str, *args: str) -> list[str]:
        return [ANSIBLE_PLAYBOOK, "-i", str(self.inventory), "-e", f"@{self.vars_file}", playbook, *args]

    def run(self, playbook: str, *args: str, timeout: int = 1200, env: dict | None = None) -> Result:
        run = subprocess.run(self.command(playbook, *args), cwd=self.cwd, env=env or self.env, capture_output=True, text=True, timeout=timeout)
        return Result(run.returncode, run.stdout, run.stderr)

    def start(self, playbook: str, *args: str) -> subprocess.Popen:
        return start(self.command(playbook, *args), self.env)

    @staticmethod
    def kill_after(process: subprocess.Popen, seconds: float) -> None:
        """Cancel the run after ``seconds`` as a job runner does, and fail if any process of it survives."""
        time.sleep(seconds)
        left = cancel(process)
        assert left == [], "processes of the cancelled run still running:\n" + "\n".join(left)

    def drift_report(self) -> dict:
        return json.loads((self.workdir / "drift.json").read_text())
