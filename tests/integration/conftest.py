"""Fixtures of the playbook tests."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.grafana_api import GrafanaStub
from tests.integration.playbook_runner import ROOT, SAMPLE, Playbooks

# Modules whose tests share a module-scoped build: each goes to one pytest-xdist worker, so the build is made once.
ONE_WORKER_MODULES = ("test_namespace_isolation.py", "test_awx_config.py")


def pytest_xdist_make_scheduler(config, log):
    """``--dist load`` by test, but the tests of each of ``ONE_WORKER_MODULES`` to one worker.

    ``--dist load`` sends tests in chunks to whichever worker runs dry, so such a module's tests can land on both
    workers and each builds the module's sample. ``--dist loadgroup`` would group them, but xdist 3.8 marks a group by
    rewriting ``item._nodeid``, which pytest 9 no longer reads: the groups are silently ignored.
    """
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleBuildsOnOneWorker(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            module = nodeid.split("::", 1)[0]
            return module if module.endswith(ONE_WORKER_MODULES) else nodeid

    return ModuleBuildsOnOneWorker(config, log)


# A bad team file refused before any call: one short run each, with no state the tests around it build on.
REFUSED_BEFORE_ANY_CALL = {"test_bad_team_file_fails_before_any_call", "test_yaml_mistakes_name_the_file_line_and_column"}


def pytest_collection_modifyitems(items):
    """The short refusals go last, in their order: when the queue runs out, a pytest-xdist worker still holds the test it
    runs and the two it was sent ahead, and the other worker waits for them; short ones keep that wait short."""
    items.sort(key=lambda item: getattr(item, "originalname", item.name) in REFUSED_BEFORE_ANY_CALL)


@pytest.fixture
def sample(seeded, tmp_path):
    """The playbooks, run with the sample team file against a seeded sandbox of the test's own."""
    client, seed = seeded
    return Playbooks(client, seed, tmp_path, copy.deepcopy(SAMPLE))


@pytest.fixture(scope="session")
def installed_collection(tmp_path_factory):
    """The Galaxy artifact as a user gets it: built from the checkout, installed into an empty collections path outside it
    (``--no-deps``: amazon.aws and the others come with the ansible package, as in an execution environment)."""
    galaxy = str(Path(sys.executable).with_name("ansible-galaxy"))
    base = tmp_path_factory.mktemp("galaxy")
    env = {name: value for name, value in os.environ.items() if not name.startswith("ANSIBLE_")}
    subprocess.run([galaxy, "collection", "build", "--output-path", str(base)], cwd=ROOT, env=env, check=True, capture_output=True)
    (artifact,) = base.glob("hyperpod-tenancy-*.tar.gz")
    collections_path = base / "collections"
    subprocess.run([galaxy, "collection", "install", "--no-deps", "-p", str(collections_path), str(artifact)], cwd=base, env=env,
                   check=True, capture_output=True)
    return collections_path


@pytest.fixture
def installed(seeded, tmp_path, installed_collection):
    """``sample``, run from the installed artifact by FQCN in a user's directory."""
    client, seed = seeded
    playbooks = Playbooks(client, seed, tmp_path, copy.deepcopy(SAMPLE)).as_installed(installed_collection)
    # The runs see the installed copy and no other (not the checkout's collections/ link).
    listed = subprocess.run([str(Path(sys.executable).with_name("ansible-galaxy")), "collection", "list", "hyperpod.tenancy", "--format", "json"],
                            cwd=playbooks.cwd, env=playbooks.env, check=True, capture_output=True, text=True)
    assert list(json.loads(listed.stdout)) == [str(installed_collection / "ansible_collections")], listed.stdout
    return playbooks


@pytest.fixture
def grafana_stub(tmp_path):
    """The Grafana HTTP API stub on 127.0.0.1 (tests/integration/grafana_api.py), stopped after the test."""
    stub = GrafanaStub(tmp_path)
    yield stub
    stub.stop()


@pytest.fixture(scope="session")
def prometheus_month(tmp_path_factory):
    """Debian's Prometheus serving the usage tests' month (tests/integration/usage_month.py), once per session."""
    from sandbox.prometheus import PrometheusServer, build_tsdb, installed
    from tests.integration.usage_month import SCENARIO

    assert installed(), "prometheus and promtool are absent: make system-packages (as root) installs Debian's prometheus"
    data_dir = tmp_path_factory.mktemp("prometheus") / "data"
    build_tsdb(SCENARIO, data_dir)
    server = PrometheusServer(data_dir)
    yield server
    server.stop()


@pytest.fixture
def amp_workspace(sandbox, prometheus_month):
    """An ACTIVE AMP workspace in the emptied sandbox, whose query API the session's Prometheus answers."""
    import time

    sandbox.set_upstreams(prometheus=prometheus_month.url)
    amp = sandbox.boto3_client("amp")
    workspace_id = amp.create_workspace(alias="hyperpod-observability")["workspaceId"]
    deadline = time.monotonic() + 30
    while amp.describe_workspace(workspaceId=workspace_id)["workspace"]["status"]["statusCode"] != "ACTIVE":
        assert time.monotonic() < deadline, "the workspace did not become ACTIVE"
        time.sleep(0.1)
    return workspace_id
