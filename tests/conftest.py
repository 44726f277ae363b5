"""Fixtures shared by every test: import paths, and a sandbox per pytest worker with its Kubernetes API server."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT / "collections", ROOT):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from sandbox.client import SANDBOX_CREDENTIALS, SandboxClient  # noqa: E402
from sandbox.kube import KubeCluster  # noqa: E402
from sandbox.launch import endpoint_of, listening_socket, new_instance_id, spawn_server  # noqa: E402
from sandbox.seed import load_sample, seed  # noqa: E402


@pytest.fixture(scope="session")
def _servers(tmp_path_factory):
    """This worker's sandbox and its Kubernetes API server, started together for the session.

    The API server asks the sandbox about EKS tokens and access policies (its webhooks, sandbox/kube), so the sandbox's
    socket is bound first and its endpoint given to the API server; the sandbox process starts while the API server
    does (it reads the cluster's kubeconfig on its first Kubernetes request only), so neither waits for the other.
    """
    kube_directory = tmp_path_factory.mktemp("kube")
    log = tmp_path_factory.mktemp("sandbox") / "sandbox.log"
    env = dict(os.environ, SANDBOX_STATUS_DELAY="0.2", SANDBOX_KUBE_DIR=str(kube_directory))
    instance = new_instance_id()
    # Bound here and handed over, as `python -m sandbox start` does: the other worker's sandbox never answers for this one.
    with listening_socket(0) as sock, open(log, "wb") as out:
        process = spawn_server(sock, instance, out, env)
        client = SandboxClient(endpoint_of(sock), instance)
    try:
        cluster = KubeCluster(kube_directory).start(webhook=client.endpoint)
    except BaseException:
        process.kill()
        raise
    deadline = time.monotonic() + 60
    while not client.healthy():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            cluster.stop()
            raise RuntimeError(f"sandbox did not start: {log.read_text()[-2000:]}")
        time.sleep(0.2)
    yield cluster, client
    process.terminate()
    process.wait(timeout=10)
    cluster.stop()


@pytest.fixture(scope="session")
def kube_cluster(_servers):
    """etcd, kube-apiserver and kube-controller-manager of this worker's own (sandbox/kube), for the session.

    The binaries are built once per machine (``make kube-binaries``); starting them takes seconds.
    ``kube_cluster.kubeconfig`` is the admin's kubeconfig (``system:masters``). Its bearer tokens and what RBAC does not
    allow are asked of the worker's sandbox (EKS tokens and access policies), which therefore runs with it.
    """
    return _servers[0]


@pytest.fixture(scope="session")
def sandbox_server(_servers):
    """A sandbox process of this worker's own, its EKS clusters pointing at ``kube_cluster``, stopped when the session ends."""
    return _servers[1]


@pytest.fixture
def sandbox(sandbox_server):
    """The worker's sandbox, emptied: no resources, no log, no faults.

    A role is usable at once here (no IAM propagation delay): these tests call one service right after
    creating its role, as no real client could; playbook runs (``Playbooks``) have the delay back on.
    """
    sandbox_server.reset()
    sandbox_server.configure(status_delay=0.2)
    sandbox_server.set_faults(iam_propagation_s=0)
    return sandbox_server


@pytest.fixture
def statuses(sandbox):
    """Holds the sandbox's asynchronous statuses (``hold()``) or lets them settle at once (``settle()``).

    A test that asserts a transitional status (Creating, Deleting, ...) holds it first, so what
    it asserts does not depend on how fast a loaded machine reaches the next call.
    """

    class Statuses:
        @staticmethod
        def hold():
            sandbox.configure(status_delay=3600)

        @staticmethod
        def settle():
            sandbox.configure(status_delay=0)

    return Statuses()


@pytest.fixture
def seeded(sandbox):
    """The worker's sandbox, emptied and seeded for the sample (load_sample); returns (client, seed)."""
    result = seed(sandbox, load_sample())
    sandbox.clear_requests()
    return sandbox, result


@pytest.fixture
def aws_env(sandbox_server, kube_cluster):
    """Environment for a process that talks to the worker's sandbox and its cluster, as `python -m sandbox run` gives it."""
    return dict(
        os.environ,
        HYPERPOD_SANDBOX_URL=sandbox_server.endpoint,
        ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
        K8S_AUTH_KUBECONFIG=str(kube_cluster.kubeconfig),
        **SANDBOX_CREDENTIALS,
    )


@pytest.fixture
def module_warnings():
    """A module run in the test process returns its warnings in its result, as it does on the target.

    Once a test has imported controller code (a filter, an action plugin), ansible-core sends a module's warnings to
    the controller's display instead; and its record of them lives as long as the process: so does its record of
    deprecations, which an earlier test's import can leave (ansible-core 2.20 deprecates ``ansible.module_utils._text``).
    """
    from ansible.module_utils import _internal
    from ansible.module_utils.common import warnings

    saved = _internal.is_controller, warnings._global_warnings, warnings._global_deprecations
    _internal.is_controller, warnings._global_warnings, warnings._global_deprecations = False, {}, {}
    yield
    _internal.is_controller, warnings._global_warnings, warnings._global_deprecations = saved
