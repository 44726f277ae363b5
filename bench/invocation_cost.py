"""``python -m bench.invocation_cost``: what one module invocation costs, before it does any work.

Runs 20 local hosts x 5 tasks of a task that needs no process (``set_fact``), the smallest
module (``ansible.builtin.ping``) and the smallest AWS module (``amazon.aws.aws_caller_info``,
one STS call against a sandbox of its own), and prints the CPU seconds (user + system, the
playbook and every process under it) per task and host. On a 2-core machine the wall time of a
converged team cannot go below half the CPU seconds of its module invocations.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.processes import ROOT, RUSAGE_WRAPPER, own_sandbox
from sandbox.client import SANDBOX_CREDENTIALS

HOSTS = 20
TASKS = 5


def playbook(task: dict) -> list:
    return [{"name": "Invocation cost", "hosts": "all", "gather_facts": False, "tasks": [dict(task, name=f"task {i}") for i in range(TASKS)]}]


def main() -> int:
    workdir = Path(tempfile.mkdtemp(prefix="hyperpod-invocation-"))
    with own_sandbox() as (_server, client):
        endpoint = client.endpoint
        inventory = workdir / "hosts.json"
        inventory.write_text(json.dumps({"all": {
            "hosts": {f"h{i:02d}": {} for i in range(HOSTS)},
            "vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
        }}))
        tasks = {
            "ansible.builtin.set_fact": {"ansible.builtin.set_fact": {"probe": 1}},
            "ansible.builtin.ping": {"ansible.builtin.ping": {}},
            "amazon.aws.aws_caller_info": {"amazon.aws.aws_caller_info": {"endpoint_url": endpoint, "region": "us-east-1"}},
        }
        env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_FORKS="8", **SANDBOX_CREDENTIALS)
        print(f"{'task':<30} {'wall s':>7} {'cpu s':>7} {'cpu s per task and host':>24}")
        figures = {}
        for name, task in tasks.items():
            book = workdir / f"{name}.yml"
            book.write_text(json.dumps(playbook(task)))
            usage = workdir / f"{name}.rusage"
            started = time.monotonic()
            run = subprocess.run(
                [sys.executable, "-c", RUSAGE_WRAPPER, str(usage), str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(inventory), str(book)],
                cwd=ROOT, env=env, capture_output=True, text=True,
            )
            wall = time.monotonic() - started
            if run.returncode != 0:
                raise SystemExit(f"{name} failed:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
            cpu = json.loads(usage.read_text())[1]
            figures[name] = {"wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1), "cpu_seconds_per_invocation": round(cpu / (HOSTS * TASKS), 3)}
            print(f"{name:<30} {wall:>7.1f} {cpu:>7.1f} {cpu / (HOSTS * TASKS):>24.3f}")
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
