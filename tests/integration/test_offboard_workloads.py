"""team_offboard refuses a team with running Kueue workloads, against the real Kubernetes API server.

The worker's kube-apiserver (``kube_cluster``) serves Kueue's Workload API from the CRDs the
sandbox's Task Governance add-on installs; the workloads are created and their status written as
Kueue writes it; the API server's audit log says what the role asked.
"""

from __future__ import annotations

import copy
import json
import os
import re
import socket
import subprocess
from pathlib import Path

import pytest
import yaml

from sandbox.kube import ADMIN_USER, task_governance
from sandbox.kube.api import KubeApi

ROOT = Path(__file__).resolve().parents[2]
ANSIBLE_PLAYBOOK = str(ROOT / ".venv" / "bin" / "ansible-playbook")
PYTHON = str(ROOT / ".venv" / "bin" / "python")

KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_VERSION = "v1beta1"

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


# Conditions that more than one workload carries.
QUOTA_GRANTED = condition("QuotaReserved", "True", "QuotaReserved")
QUOTA_PENDING = condition("QuotaReserved", "False", "Pending")
ADMITTED = condition("Admitted", "True", "Admitted")

RUNNING = workload("pytorchjob-train-detector-5c1e2", QUOTA_GRANTED, ADMITTED, condition("PodsReady", "True", "PodsReady"))
QUOTA_RESERVED = workload("pytorchjob-tune-segmenter-9a7b3", QUOTA_GRANTED)
FINISHED = workload("pytorchjob-train-baseline-11f0a", QUOTA_GRANTED, ADMITTED, condition("Finished", "True", "Succeeded"))
FAILED = workload("pytorchjob-train-broken-77d2c", QUOTA_PENDING, condition("Admitted", "False", "NoReservation"), condition("Finished", "True", "Failed"))
QUEUED = workload("pytorchjob-sweep-lr-2b4d8", QUOTA_PENDING)


class Cluster:
    """The worker's real API server, emptied by the sandbox's reset, with Kueue's CRDs as Task Governance installs them.

    What the role asked is read from the API server's audit log (``KubeCluster.audit_events``).
    """

    def __init__(self, kube_cluster, kueue: bool = True) -> None:
        self.kube_cluster = kube_cluster
        self.api = KubeApi(kube_cluster.directory)
        self.kubeconfig = kube_cluster.kubeconfig
        if kueue:
            task_governance.install_kueue(self.api)
        else:
            task_governance.remove_kueue(self.api)
        for namespace in (NAMESPACE, "hyperpod-ns-nlp"):
            self.api.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}, "test")
        self.mark = len(kube_cluster.audit_events())

    def add_workloads(self, namespace: str, *workloads: dict) -> None:
        """Create the workloads, then write their status as Kueue's controller does (the status subresource)."""
        for item in workloads:
            body = copy.deepcopy(item)
            body["metadata"] = {k: v for k, v in body["metadata"].items() if k not in ("uid", "resourceVersion")} | {"namespace": namespace}
            status = body.pop("status")
            created = self.api.create(body)
            self.api.update_status(created | {"status": status})
        self.mark = len(self.kube_cluster.audit_events())

    def requests(self) -> list[dict]:
        """The admin's requests since the cluster was set up (the role runs as the admin kubeconfig)."""
        return [e for e in self.kube_cluster.audit_events(self.mark) if e["user"]["username"] == ADMIN_USER]

    def workload_lists(self) -> list[str]:
        """The namespaces whose workloads were listed, in order."""
        return [
            e["objectRef"]["namespace"]
            for e in self.requests()
            if e["verb"] == "list" and e.get("objectRef", {}).get("resource") == "workloads" and e["stage"] == "ResponseComplete"
        ]


def write_kubeconfig(path: Path, server: str, admin_kubeconfig: Path) -> Path:
    """The admin kubeconfig, pointed at another server."""
    config = json.loads(admin_kubeconfig.read_text())
    config["clusters"][0]["cluster"]["server"] = server
    path.write_text(json.dumps(config))
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
def cluster(sandbox, kube_cluster):
    """The API server as a new cluster with Task Governance installed (the sandbox's reset emptied it)."""
    return Cluster(kube_cluster)


@pytest.mark.parametrize("active", [RUNNING, QUOTA_RESERVED], ids=["admitted", "quota_reserved"])
def test_refuses_a_team_with_a_running_workload(cluster, tmp_path, active):
    cluster.add_workloads(NAMESPACE, FINISHED, active, QUEUED)
    cluster.add_workloads("hyperpod-ns-nlp", RUNNING | {"metadata": RUNNING["metadata"] | {"name": "other-team-job"}})

    run = run_check(tmp_path, {"hyperpod_kubernetes": {"kubeconfig": str(cluster.kubeconfig), "context": "hyperpod-sandbox"}})

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
    cluster.add_workloads(NAMESPACE, FINISHED, FAILED)

    run = run_check(tmp_path, {"hyperpod_kubernetes": {"kubeconfig": str(cluster.kubeconfig)}})

    text = output(run)
    assert run.returncode == 0, text
    assert cluster.workload_lists() == [NAMESPACE]
    assert "Refusing" not in text and "[WARNING]" not in text
    assert f"Team 'vision' has no running workloads in namespace {NAMESPACE} (2 workload(s) listed)" in text


def test_force_passes_a_running_workload_with_a_warning(cluster, tmp_path):
    cluster.add_workloads(NAMESPACE, RUNNING, FINISHED)

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
    cluster.add_workloads(NAMESPACE, QUEUED)

    run = run_check(tmp_path, {"team_offboard_kubeconfig": str(cluster.kubeconfig)})

    text = output(run)
    assert run.returncode == 0, text
    assert re.search(rf"\[WARNING\]: Team 'vision' has 1 queued workload\(s\) in namespace {NAMESPACE} .*{QUEUED['metadata']['name']}", text), text


def test_without_kubeconfig_warns_that_the_check_was_skipped(cluster, tmp_path):
    cluster.add_workloads(NAMESPACE, RUNNING)

    run = run_check(tmp_path, {})

    text = output(run)
    assert run.returncode == 0, text
    assert cluster.requests() == []
    assert (
        f"[WARNING]: Skipped the running-workload check for team 'vision' (namespace {NAMESPACE}): "
        "no Kubernetes access is configured (set hyperpod_kubernetes.kubeconfig or team_offboard_kubeconfig)."
    ) in text


def test_disabled_check_warns_that_it_was_skipped(cluster, tmp_path):
    cluster.add_workloads(NAMESPACE, RUNNING)

    run = run_check(tmp_path, {"team_offboard_kubeconfig": str(cluster.kubeconfig), "team_offboard_check_workloads": False})

    text = output(run)
    assert run.returncode == 0, text
    assert cluster.requests() == []
    assert "[WARNING]: Skipped the running-workload check for team 'vision'" in text
    assert "team_offboard_check_workloads is false" in text


def test_cluster_without_kueue_passes_with_a_warning(sandbox, kube_cluster, tmp_path):
    cluster = Cluster(kube_cluster, kueue=False)

    run = run_check(tmp_path, {"team_offboard_kubeconfig": str(cluster.kubeconfig)})

    text = output(run)
    assert run.returncode == 0, text
    assert cluster.workload_lists() == []
    assert "[WARNING]: The cluster serves no Kueue Workload API (kueue.x-k8s.io/v1beta1)" in text


def test_unreachable_cluster_fails_naming_the_way_out(kube_cluster, tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"https://127.0.0.1:{sock.getsockname()[1]}"
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig.yml", url, kube_cluster.kubeconfig)

    run = run_check(tmp_path, {"team_offboard_kubeconfig": str(kubeconfig)})

    text = output(run)
    assert run.returncode != 0, text
    assert f"Could not list the Kueue workloads of team 'vision' in namespace {NAMESPACE}" in text
    assert "-e team_offboard_check_workloads=false" in text


def test_check_mode_refuses_as_the_real_run_would(cluster, tmp_path):
    cluster.add_workloads(NAMESPACE, RUNNING)

    run = run_check(tmp_path, {"team_offboard_kubeconfig": str(cluster.kubeconfig)}, "--check")

    text = output(run)
    assert run.returncode != 0, text
    assert cluster.workload_lists() == [NAMESPACE]
    assert f"Refusing to offboard team 'vision': namespace {NAMESPACE} still has 1 running workload(s)" in text
