"""team_offboard refuses a team with running Kueue workloads, against a stub Kubernetes API server.

The stub answers what the kubernetes Python client and kubernetes.core.k8s_info ask for: the
discovery documents (/version, /api, /api/v1, /apis, /apis/kueue.x-k8s.io[/v1beta1]) and the
namespaced list of Kueue workloads, and records every request it gets.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ANSIBLE_PLAYBOOK = str(ROOT / ".venv" / "bin" / "ansible-playbook")
PYTHON = str(ROOT / ".venv" / "bin" / "python")

KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_VERSION = "v1beta1"
WORKLOADS_PATH = re.compile(r"^/apis/kueue\.x-k8s\.io/v1beta1/namespaces/(?P<namespace>[^/]+)/workloads$")

# A normalized team, as hyperpod.tenancy.validate_team_file returns it (docs/team-file.md).
TEAM = {
    "name": "vision",
    "state": "absent",
    "identity_center_group": "TeamVision",
    "members": [{"name": "alice", "uid": 2001}],
    "cost_center": "cc-1001",
    "description": "Team vision",
    "tags": {},
    "quota": {
        "resources": [{"instance_type": "ml.g5.8xlarge", "count": 2}],
        "sharing": "lend_and_borrow",
        "borrow_limit": 50,
        "preempt": "lower_priority",
        "fair_share_weight": 0,
        "activation": "enabled",
    },
    "access": {"policies": ["training", "inference"], "cluster_read": True},
    "workspace": {"enabled": True, "auth_mode": "SSO", "app_network_access_type": "VpcOnly", "retain_home_efs": True},
    "storage": {"gid": None, "mode": "2770", "on_remove": "keep", "s3_link": False},
    "budget": None,
}
NAMESPACE = "hyperpod-ns-vision"


def condition(kind: str, status: str, reason: str) -> dict:
    return {"type": kind, "status": status, "reason": reason, "message": reason, "lastTransitionTime": "2026-11-30T09:00:00Z"}


def workload(name: str, *conditions: dict, owner: str = "PyTorchJob") -> dict:
    job = name.split("-", 1)[1]
    return {
        "apiVersion": f"{KUEUE_GROUP}/{KUEUE_VERSION}",
        "kind": "Workload",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": f"uid-{name}",
            "resourceVersion": "100",
            "ownerReferences": [{"apiVersion": "kubeflow.org/v1", "kind": owner, "name": job, "uid": f"uid-{job}", "controller": True}],
        },
        "spec": {
            "active": True,
            "queueName": f"{NAMESPACE}-localqueue",
            "podSets": [{"name": "worker", "count": 2, "template": {"spec": {"containers": [{"name": "pytorch", "image": "train:1"}]}}}],
        },
        "status": {"conditions": list(conditions)},
    }


RUNNING = workload(
    "pytorchjob-train-detector-5c1e2",
    condition("QuotaReserved", "True", "QuotaReserved"),
    condition("Admitted", "True", "Admitted"),
    condition("PodsReady", "True", "PodsReady"),
)
QUOTA_RESERVED = workload("pytorchjob-tune-segmenter-9a7b3", condition("QuotaReserved", "True", "QuotaReserved"))
FINISHED = workload(
    "pytorchjob-train-baseline-11f0a",
    condition("QuotaReserved", "True", "QuotaReserved"),
    condition("Admitted", "True", "Admitted"),
    condition("Finished", "True", "Succeeded"),
)
FAILED = workload(
    "pytorchjob-train-broken-77d2c",
    condition("QuotaReserved", "False", "Pending"),
    condition("Admitted", "False", "NoReservation"),
    condition("Finished", "True", "Failed"),
)
QUEUED = workload("pytorchjob-sweep-lr-2b4d8", condition("QuotaReserved", "False", "Pending"))


class StubKubernetes:
    """A Kubernetes API server of just enough discovery and one list, on 127.0.0.1."""

    def __init__(self, kueue: bool = True) -> None:
        self.kueue = kueue
        self.workloads: dict[str, list[dict]] = {}
        self.requests: list[tuple[str, str]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                stub.requests.append(("GET", self.path))
                status, body = stub.answer(urlparse(self.path).path)
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer(self, path: str) -> tuple[int, dict]:
        group_version = {"groupVersion": f"{KUEUE_GROUP}/{KUEUE_VERSION}", "version": KUEUE_VERSION}
        if path == "/version":
            return 200, {"major": "1", "minor": "31", "gitVersion": "v1.31.4-eks-2d5f260", "platform": "linux/amd64"}
        if path == "/api":
            return 200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}
        if path == "/api/v1":
            namespaces = {"name": "namespaces", "singularName": "namespace", "namespaced": False, "kind": "Namespace", "verbs": ["get", "list"]}
            return 200, {"kind": "APIResourceList", "groupVersion": "v1", "resources": [namespaces]}
        if path == "/apis":
            groups = [{"name": KUEUE_GROUP, "versions": [group_version], "preferredVersion": group_version}] if self.kueue else []
            return 200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
        if self.kueue and path == f"/apis/{KUEUE_GROUP}":
            return 200, {"kind": "APIGroup", "apiVersion": "v1", "name": KUEUE_GROUP, "versions": [group_version], "preferredVersion": group_version}
        if self.kueue and path == f"/apis/{KUEUE_GROUP}/{KUEUE_VERSION}":
            verbs = ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"]
            resources = [
                {"name": "workloads", "singularName": "workload", "namespaced": True, "kind": "Workload", "verbs": verbs, "shortNames": ["wl"]},
                {"name": "workloads/status", "singularName": "", "namespaced": True, "kind": "Workload", "verbs": ["get", "patch", "update"]},
            ]
            return 200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{KUEUE_GROUP}/{KUEUE_VERSION}", "resources": resources}
        match = WORKLOADS_PATH.match(path)
        if self.kueue and match:
            items = self.workloads.get(match.group("namespace"), [])
            return 200, {"apiVersion": f"{KUEUE_GROUP}/{KUEUE_VERSION}", "kind": "WorkloadList", "metadata": {"resourceVersion": "100"}, "items": items}
        return 404, {
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "message": f"the server could not find the requested resource ({path})",
            "reason": "NotFound",
            "code": 404,
        }

    def workload_lists(self) -> list[str]:
        """The namespaces whose workloads were listed, in order."""
        return [match.group("namespace") for method, path in self.requests if (match := WORKLOADS_PATH.match(urlparse(path).path))]

    def __enter__(self) -> StubKubernetes:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def write_kubeconfig(path: Path, server: str) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "ml-shared-eks", "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
        "users": [{"name": "platform-admin", "user": {"token": "stub-token"}}],
        "contexts": [{"name": "ml-shared-eks", "context": {"cluster": "ml-shared-eks", "user": "platform-admin"}}],
        "current-context": "ml-shared-eks",
    }
    path.write_text(yaml.safe_dump(config))
    return path


def run_check(tmp_path: Path, extra_vars: dict, *args: str) -> subprocess.CompletedProcess:
    """Run only the role's workload check, for TEAM, and return the finished process (stdout + stderr)."""
    playbook = tmp_path / "check_workloads.yml"
    playbook.write_text(
        yaml.safe_dump(
            [
                {
                    "name": "Check the team's workloads",
                    "hosts": "localhost",
                    "gather_facts": False,
                    "tasks": [
                        {
                            "name": "Run the workload check of team_offboard",
                            "ansible.builtin.include_role": {"name": "hyperpod.tenancy.team_offboard", "tasks_from": "check_workloads"},
                            "vars": {"team_offboard_definition": TEAM},
                        }
                    ],
                }
            ],
            sort_keys=False,
        )
    )
    vars_file = tmp_path / "extra_vars.json"
    vars_file.write_text(json.dumps(extra_vars))
    env = dict(
        os.environ,
        ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_FORCE_COLOR="0",
        # kubernetes.core caches discovery under the temporary directory: keep it in this test's.
        TMPDIR=str(tmp_path),
        HYPERPOD_DRIFT_REPORT=str(tmp_path / "drift.json"),
    )
    for name in ("K8S_AUTH_KUBECONFIG", "KUBECONFIG", "K8S_AUTH_CONTEXT"):
        env.pop(name, None)
    command = [
        ANSIBLE_PLAYBOOK, "-i", "localhost,", "-c", "local", str(playbook),
        "-e", f"ansible_python_interpreter={PYTHON}", "-e", f"@{vars_file}", *args,
    ]  # fmt: skip
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def output(run: subprocess.CompletedProcess) -> str:
    """stdout and stderr with whitespace folded, as warnings and messages may wrap."""
    return " ".join((run.stdout + "\n" + run.stderr).split())


@pytest.fixture
def cluster(tmp_path):
    with StubKubernetes() as stub:
        stub.kubeconfig = write_kubeconfig(tmp_path / "kubeconfig.yml", stub.url)
        yield stub


@pytest.mark.parametrize("active", [RUNNING, QUOTA_RESERVED], ids=["admitted", "quota_reserved"])
def test_refuses_a_team_with_a_running_workload(cluster, tmp_path, active):
    cluster.workloads[NAMESPACE] = [FINISHED, active, QUEUED]
    cluster.workloads["hyperpod-ns-nlp"] = [RUNNING | {"metadata": RUNNING["metadata"] | {"name": "other-team-job"}}]

    run = run_check(tmp_path, {"hyperpod_kubernetes": {"kubeconfig": str(cluster.kubeconfig), "context": "ml-shared-eks"}})

    text = output(run)
    assert run.returncode != 0, text
    assert cluster.workload_lists() == [NAMESPACE]
    refusal = re.search(r"Refusing to offboard team 'vision'.*?override with -e force=true", text)
    assert refusal, text
    refusal = refusal.group(0)
    assert f"namespace {NAMESPACE} still has 1 running workload(s)" in refusal
    assert active["metadata"]["name"] in refusal
    assert FINISHED["metadata"]["name"] not in refusal
    assert QUEUED["metadata"]["name"] not in refusal
    assert "other-team-job" not in text
    assert "PLAY RECAP" in text and "failed=1" in text


def test_passes_a_team_whose_workloads_finished(cluster, tmp_path):
    cluster.workloads[NAMESPACE] = [FINISHED, FAILED]

    run = run_check(tmp_path, {"hyperpod_kubernetes": {"kubeconfig": str(cluster.kubeconfig)}})

    text = output(run)
    assert run.returncode == 0, text
    assert cluster.workload_lists() == [NAMESPACE]
    assert "Refusing" not in text and "[WARNING]" not in text
    assert f"Team 'vision' has no running workloads in namespace {NAMESPACE} (2 workload(s) listed)" in text


def test_force_passes_a_running_workload_with_a_warning(cluster, tmp_path):
    cluster.workloads[NAMESPACE] = [RUNNING, FINISHED]

    run = run_check(tmp_path, {"team_offboard_kubeconfig": str(cluster.kubeconfig)}, "-e", "force=true")

    text = output(run)
    assert run.returncode == 0, text
    assert cluster.workload_lists() == [NAMESPACE]
    warning = re.search(r"\[WARNING\]: Offboarding team 'vision' with force=true.*?access\.", text)
    assert warning, text
    assert f"namespace {NAMESPACE} still has 1 running workload(s)" in warning.group(0)
    assert f"{RUNNING['metadata']['name']} (admitted, PyTorchJob/train-detector-5c1e2, queue {NAMESPACE}-localqueue)" in warning.group(0)
    assert "Refusing" not in text


def test_queued_workloads_pass_with_a_warning(cluster, tmp_path):
    cluster.workloads[NAMESPACE] = [QUEUED]

    run = run_check(tmp_path, {"team_offboard_kubeconfig": str(cluster.kubeconfig)})

    text = output(run)
    assert run.returncode == 0, text
    assert re.search(rf"\[WARNING\]: Team 'vision' has 1 queued workload\(s\) in namespace {NAMESPACE} .*{QUEUED['metadata']['name']}", text), text


def test_without_kubeconfig_warns_that_the_check_was_skipped(cluster, tmp_path):
    cluster.workloads[NAMESPACE] = [RUNNING]

    run = run_check(tmp_path, {})

    text = output(run)
    assert run.returncode == 0, text
    assert cluster.requests == []
    assert (
        f"[WARNING]: Skipped the running-workload check for team 'vision' (namespace {NAMESPACE}): "
        "no Kubernetes access is configured (set hyperpod_kubernetes.kubeconfig or team_offboard_kubeconfig)."
    ) in text


def test_disabled_check_warns_that_it_was_skipped(cluster, tmp_path):
    cluster.workloads[NAMESPACE] = [RUNNING]

    run = run_check(tmp_path, {"team_offboard_kubeconfig": str(cluster.kubeconfig), "team_offboard_check_workloads": False})

    text = output(run)
    assert run.returncode == 0, text
    assert cluster.requests == []
    assert "[WARNING]: Skipped the running-workload check for team 'vision'" in text
    assert "team_offboard_check_workloads is false" in text


def test_cluster_without_kueue_passes_with_a_warning(tmp_path):
    with StubKubernetes(kueue=False) as stub:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig.yml", stub.url)
        run = run_check(tmp_path, {"team_offboard_kubeconfig": str(kubeconfig)})

    text = output(run)
    assert run.returncode == 0, text
    assert ("GET", "/apis") in stub.requests
    assert "[WARNING]: The cluster serves no Kueue Workload API (kueue.x-k8s.io/v1beta1)" in text


def test_unreachable_cluster_fails_naming_the_way_out(tmp_path):
    with StubKubernetes() as stub:
        url = stub.url
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig.yml", url)

    run = run_check(tmp_path, {"team_offboard_kubeconfig": str(kubeconfig)})

    text = output(run)
    assert run.returncode != 0, text
    assert f"Could not list the Kueue workloads of team 'vision' in namespace {NAMESPACE}" in text
    assert "-e team_offboard_check_workloads=false" in text


def test_check_mode_refuses_as_the_real_run_would(cluster, tmp_path):
    cluster.workloads[NAMESPACE] = [RUNNING]

    run = run_check(tmp_path, {"team_offboard_kubeconfig": str(cluster.kubeconfig)}, "--check")

    text = output(run)
    assert run.returncode != 0, text
    assert cluster.workload_lists() == [NAMESPACE]
    assert f"Refusing to offboard team 'vision': namespace {NAMESPACE} still has 1 running workload(s)" in text
