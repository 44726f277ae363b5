"""Two sandboxes started at once on one machine, as two clones' `make demo` start them (issue 42).

Each wanted the same port: the old start checked that the port was free, spent seconds starting the Kubernetes API
server, then started the server, so the second start's server lost the port and its health check passed against the
first sandbox. Each now holds its port from its start and answers with its own instance id, which its state directory
records and every client of that directory checks.

Both tests start with what the old sandbox had too (the CLI, the endpoint and pid files), so that they run, and fail, on it.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from sandbox.client import SandboxClient
from tests.conftest import ROOT


@dataclass
class Clone:
    """A clone's sandbox: its state directory and the environment its `python -m sandbox` commands run in."""

    state: Path
    env: dict

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "sandbox", *args]

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(*args), cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=300)

    def endpoint(self) -> str:
        return (self.state / "endpoint").read_text().strip()

    def instance(self) -> str:
        return (self.state / "instance").read_text().strip()

    def client(self) -> SandboxClient:
        return SandboxClient(self.endpoint())


def at_once(clones: list[Clone], *args: str) -> list[subprocess.CompletedProcess]:
    """The same command in each clone, all started before any is waited for."""
    processes = [
        subprocess.Popen(clone.command(*args), cwd=ROOT, env=clone.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for clone in clones
    ]
    outputs = [process.communicate(timeout=300)[0] for process in processes]
    return [subprocess.CompletedProcess(process.args, process.returncode, output) for process, output in zip(processes, outputs, strict=True)]


@pytest.fixture(scope="module")
def clones(tmp_path_factory):
    # The same port for both, as both clones' make demo want 5055; one free now rather than 5055, which may be in use.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    states = [tmp_path_factory.mktemp(name) for name in ("a", "b")]
    pair = [Clone(state, dict(os.environ, SANDBOX_STATE_DIR=str(state), SANDBOX_PORT=str(port))) for state in states]
    try:
        starts = at_once(pair, "start")
        assert [start.returncode for start in starts] == [0, 0], [start.stdout for start in starts]
        yield pair
    finally:
        for clone in pair:
            clone.cli("stop")


TRUST = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]})


def bucket_names(client: SandboxClient) -> set[str]:
    return {bucket["Name"] for bucket in client.boto3_client("s3").list_buckets()["Buckets"]}


def role_names(client: SandboxClient) -> set[str]:
    return {role["RoleName"] for role in client.boto3_client("iam").list_roles()["Roles"]}


def test_sandboxes_started_at_once_each_seed_and_reset_their_own(clones):
    a, b = clones
    assert a.endpoint() != b.endpoint()
    seeds = at_once(clones, "seed")
    assert [seed.returncode for seed in seeds] == [0, 0], [seed.stdout[-2000:] for seed in seeds]
    for name, clone in (("a", a), ("b", b)):
        clone.client().boto3_client("s3").create_bucket(Bucket=f"only-in-clone-{name}")
        clone.client().boto3_client("iam").create_role(RoleName=f"OnlyInClone{name.upper()}", AssumeRolePolicyDocument=TRUST)
    assert "only-in-clone-a" in bucket_names(a.client()) and "only-in-clone-b" not in bucket_names(a.client())
    assert "only-in-clone-b" in bucket_names(b.client()) and "only-in-clone-a" not in bucket_names(b.client())
    assert "OnlyInCloneA" in role_names(a.client()) and "OnlyInCloneA" not in role_names(b.client())

    reset = a.cli("reset")
    assert reset.returncode == 0, reset.stderr
    assert bucket_names(a.client()) == set() and "OnlyInCloneA" not in role_names(a.client())
    assert "only-in-clone-b" in bucket_names(b.client()) and "OnlyInCloneB" in role_names(b.client())


def test_a_health_answer_from_another_sandbox_is_refused(clones, tmp_path):
    """A state directory whose endpoint another sandbox answers at (b's record, a's server at its endpoint) is not
    running: its status, reset and seed refuse, naming both ids, and a's state stays as it was."""
    a, b = clones
    a.client().boto3_client("s3").create_bucket(Bucket="a-keeps-this")
    recorded = secrets.token_hex(8)
    (tmp_path / "endpoint").write_text(a.endpoint())
    (tmp_path / "instance").write_text(recorded)
    (tmp_path / "sandbox.pid").write_text((b.state / "sandbox.pid").read_text())
    mistaken = Clone(tmp_path, dict(b.env, SANDBOX_STATE_DIR=str(tmp_path)))
    for command in ("status", "reset", "seed"):
        result = mistaken.cli(command)
        assert result.returncode == 3, (command, result.stdout)
        assert f"instance {a.instance()}, not {recorded}" in result.stdout + result.stderr, (command, result)
    assert "a-keeps-this" in bucket_names(a.client())

    from sandbox.client import NotThisSandbox  # not in the sandbox before issue 42, whose first test runs on it

    client = SandboxClient(a.endpoint(), recorded)
    assert not client.healthy()
    with pytest.raises(NotThisSandbox, match=f"instance {a.instance()}, not {recorded}"):
        client.verify()
    assert SandboxClient(a.endpoint(), a.instance()).healthy()
