"""Fixtures of the playbook tests."""

from __future__ import annotations

import copy

import pytest

from tests.integration.grafana_api import GrafanaStub
from tests.integration.playbook_runner import SAMPLE, Playbooks


@pytest.fixture
def sample(seeded, tmp_path):
    """The playbooks, run with the sample team file against a seeded sandbox of the test's own."""
    client, seed = seeded
    return Playbooks(client, seed, tmp_path, copy.deepcopy(SAMPLE))


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
