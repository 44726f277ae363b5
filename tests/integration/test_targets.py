"""Runs every integration target (``targets/<name>/tasks/main.yml``) against a fresh, seeded sandbox.

A target is a role, as in amazon.aws. It runs inside ``module_defaults`` that
point every hyperpod.tenancy and amazon.aws module at the sandbox, with these
variables: ``sandbox_endpoint``, ``sandbox_seed`` (what the seed created, see
sandbox/seed.py) and ``aws_connection`` (endpoint, region, credentials).
``targets/setup_sandbox`` has task files to mark and check the request log.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from sandbox.client import SANDBOX_CREDENTIALS

TARGETS = Path(__file__).parent / "targets"
ROOT = Path(__file__).resolve().parents[2]
# Targets another test runs in full, its assertions included (a second run here would prove nothing more):
# role_observability runs at -vvv, recorded as AWX's job events, in test_no_secret_in_output.py.
RUN_ELSEWHERE = {"role_observability": "tests/integration/test_no_secret_in_output.py"}
NAMES = sorted(
    p.name for p in TARGETS.iterdir() if (p / "tasks" / "main.yml").exists() and not p.name.startswith("setup_") and p.name not in RUN_ELSEWHERE
)


def write_playbook(directory: Path, target: str, endpoint: str, seed: dict) -> Path:
    connection = {
        "endpoint_url": endpoint,
        "region": seed["region"],
        "access_key": "sandbox",
        "secret_key": SANDBOX_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    }
    play = {
        "name": f"Integration target {target}",
        "hosts": "localhost",
        "connection": "local",
        "gather_facts": False,
        "vars": {
            "ansible_python_interpreter": sys.executable,
            "sandbox_endpoint": endpoint,
            "sandbox_seed": seed,
            "aws_connection": connection,
        },
        "module_defaults": {"group/hyperpod.tenancy.hyperpod": connection, "group/amazon.aws.aws": connection},
        "roles": [target],
    }
    path = directory / f"{target}.yml"
    path.write_text(yaml.safe_dump([play], sort_keys=False))
    return path


@pytest.mark.parametrize("target", NAMES)
def test_target(target, seeded, aws_env, tmp_path):
    client, seed = seeded
    playbook = write_playbook(tmp_path, target, client.endpoint, seed)
    env = dict(aws_env, ANSIBLE_ROLES_PATH=str(TARGETS), ANSIBLE_NOCOLOR="1", ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"))
    run = subprocess.run(
        [str(Path(sys.executable).with_name("ansible-playbook")), "-i", "localhost,", str(playbook)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )
    assert run.returncode == 0, f"{target} failed:\n{run.stdout[-20000:]}\n{run.stderr[-5000:]}\nrequests: {json.dumps(client.counts().most_common(20))}"
