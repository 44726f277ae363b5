"""Running the collection's playbooks against the test sandbox, and reading their results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench.teams import sandbox_inventory
from sandbox.client import SANDBOX_CREDENTIALS
from sandbox.seed import load_vars

ROOT = Path(__file__).resolve().parents[2]
ANSIBLE_PLAYBOOK = str(Path(sys.executable).with_name("ansible-playbook"))
# The sample team file of group_vars/all: the cluster and the teams vision, nlp and research.
SAMPLE = load_vars(ROOT / "group_vars" / "all")


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
        self.workdir = workdir
        self.vars_file = workdir / "teams.yml"
        self.seed_file = workdir / "seed.json"
        self.seed_file.write_text(json.dumps(seed))
        self.write_settings(settings)
        self.inventory = sandbox_inventory(workdir, self.vars_file)
        self.env = dict(
            os.environ,
            ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
            ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
            ANSIBLE_NOCOLOR="1",
            HYPERPOD_SANDBOX_URL=client.endpoint,
            HYPERPOD_SANDBOX_SEED=str(self.seed_file),
            HYPERPOD_DRIFT_REPORT=str(workdir / "drift.json"),
            # The cluster the sandbox's EKS cluster points at, as `python -m sandbox run` gives it.
            K8S_AUTH_KUBECONFIG=client.kubeconfig(),
            **SANDBOX_CREDENTIALS,
        )

    def write_settings(self, settings: dict) -> None:
        self.settings = settings
        self.vars_file.write_text(yaml.safe_dump(settings, sort_keys=False))

    def command(self, playbook: str, *args: str) -> list[str]:
        return [ANSIBLE_PLAYBOOK, "-i", str(self.inventory), "-e", f"@{self.vars_file}", playbook, *args]

    def run(self, playbook: str, *args: str, timeout: int = 1200, env: dict | None = None) -> Result:
        run = subprocess.run(self.command(playbook, *args), cwd=ROOT, env=env or self.env, capture_output=True, text=True, timeout=timeout)
        return Result(run.returncode, run.stdout, run.stderr)

    def start(self, playbook: str, *args: str) -> subprocess.Popen:
        return subprocess.Popen(
            self.command(playbook, *args), cwd=ROOT, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
        )

    @staticmethod
    def kill_after(process: subprocess.Popen, seconds: float) -> None:
        time.sleep(seconds)
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()

    def drift_report(self) -> dict:
        return json.loads((self.workdir / "drift.json").read_text())
