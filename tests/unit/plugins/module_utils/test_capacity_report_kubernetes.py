"""The capacity report reads the real API server's ClusterQueues, as Task Governance makes them and Kueue writes their status.

Issue 38: a platform engineer sees each team's guaranteed, in-use, borrowed and pending capacity. The queues are made by
the sandbox's Task Governance (sandbox/kube/task_governance.py, the add-on's own shapes); their status is written through
the status subresource, as Kueue's controller writes it (Kueue's field names and quantity forms:
https://kueue.sigs.k8s.io/docs/reference/kueue.v1beta1/#kueue-x-k8s-io-v1beta1-ClusterQueueStatus).

Team vision borrows (10 GPUs in use over 8 guaranteed); team nlp lends nothing and has 4 workloads pending; legacy has a
queue but is in no team file; research is in the team files without a queue; batch-cq is not Task Governance's.
"""

from __future__ import annotations

import re

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import capacity_report, team_namespace
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_namespace import Cluster, KubernetesError
from ansible_collections.hyperpod.tenancy.plugins.modules import capacity_report as capacity_module

from sandbox.kube import task_governance
from sandbox.kube.api import KubeApi
from tests.unit.plugins.module_utils.module_params import module_params

TEAMS = ["vision", "nlp", "research"]
VISION_STATUS = {
    # Kueue writes canonical quantities; 503316480Ki is 480Gi written another way, read the same.
    "flavorsReservation": [{"name": "ml.g5.12xlarge", "resources": [
        {"name": "cpu", "total": "121500m", "borrowed": "25500m"}, {"name": "memory", "total": "496Gi", "borrowed": "112Gi"},
        {"name": "nvidia.com/gpu", "total": "11", "borrowed": "3"}]}],
    "flavorsUsage": [{"name": "ml.g5.12xlarge", "resources": [
        {"name": "cpu", "total": "120", "borrowed": "24"}, {"name": "memory", "total": "503316480Ki", "borrowed": "96Gi"},
        {"name": "nvidia.com/gpu", "total": "10", "borrowed": "2"}]}],
    "pendingWorkloads": 0, "reservingWorkloads": 4, "admittedWorkloads": 3,
    "conditions": [{"type": "Active", "status": "True", "reason": "Ready", "message": "Can admit new workloads",
                    "lastTransitionTime": "2026-01-01T00:00:00Z"}],
}  # fmt: skip
NLP_STATUS = {
    "flavorsReservation": [{"name": "ml.p5.48xlarge", "resources": [
        {"name": "cpu", "total": "96", "borrowed": "0"}, {"name": "memory", "total": "1Ti", "borrowed": "0"},
        {"name": "nvidia.com/gpu", "total": "8", "borrowed": "0"}]}],
    # A borrowed of zero may be left out (omitempty).
    "flavorsUsage": [{"name": "ml.p5.48xlarge", "resources": [
        {"name": "cpu", "total": "96", "borrowed": "0"}, {"name": "memory", "total": "1Ti"}, {"name": "nvidia.com/gpu", "total": "8"}]}],
    "pendingWorkloads": 4, "reservingWorkloads": 1, "admittedWorkloads": 1,
}  # fmt: skip


def quota(team, resource, **sharing):
    """A compute quota as SageMaker describes it: what the add-on turns into the team's ClusterQueue."""
    config = {"ComputeQuotaResources": [resource]}
    if sharing:
        config["ResourceSharingConfig"] = sharing
    return {"ComputeQuotaConfig": config, "ComputeQuotaTarget": {"TeamName": team, "FairShareWeight": 10}}


def write_status(api, name, status):
    """What Kueue's controller does: the queue's status through its status subresource."""
    queue = api.get("ClusterQueue", name)
    queue["status"] = status
    api.update_status(queue)


@pytest.fixture(scope="module")
def cluster(kube_cluster):
    """The worker's API server with Kueue's CRDs and only this file's ClusterQueues; emptied of them afterwards."""
    api = KubeApi(kube_cluster.directory)
    task_governance.install_kueue(api)
    for queue in api.list("ClusterQueue"):
        api.delete("ClusterQueue", queue["metadata"]["name"])
    api.wait_gone("ClusterQueue", [q["metadata"]["name"] for q in api.list("ClusterQueue")])
    queues = [
        task_governance.cluster_queue("vision", quota("vision", {"InstanceType": "ml.g5.12xlarge", "Count": 2}, Strategy="LendAndBorrow", BorrowLimit=50)),
        task_governance.cluster_queue("nlp", quota("nlp", {"InstanceType": "ml.p5.48xlarge", "Accelerators": 16, "VCpu": 384, "MemoryInGiB": 4096},
                                                   Strategy="DontLend")),
        task_governance.cluster_queue("legacy", quota("legacy", {"InstanceType": "ml.g5.12xlarge", "Count": 1})),
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": "batch-cq"}, "spec": {"namespaceSelector": {}}},
    ]  # fmt: skip
    for queue in queues:
        api.apply(queue, task_governance.MANAGER)
    write_status(api, "hyperpod-ns-vision-clusterqueue", VISION_STATUS)
    write_status(api, "hyperpod-ns-nlp-clusterqueue", NLP_STATUS)
    yield kube_cluster
    for queue in queues:
        api.delete("ClusterQueue", queue["metadata"]["name"])


def amounts(team):
    return {(r["flavor"], r["resource"]): tuple(r[k] for k in capacity_report.AMOUNTS) for r in team["resources"]}


def cells(lines):
    """The table's lines as cells (columns are two spaces or more apart, a cell has at most single spaces)."""
    return [tuple(re.split(r"\s{2,}", line)) for line in lines if line]


def test_each_teams_guaranteed_reserved_in_use_borrowed_and_pending(cluster):
    made = capacity_report.read(Cluster(str(cluster.kubeconfig)), TEAMS)
    teams = {t["team"]: t for t in made["teams"]}

    assert sorted(teams) == ["legacy", "nlp", "research", "vision"]
    # (guaranteed, borrowing limit, lending limit, reserved, in use, borrowed); memory in GiB.
    assert amounts(teams["vision"]) == {
        ("ml.g5.12xlarge", "cpu"): (96, 48, 96, 121.5, 120, 24),
        ("ml.g5.12xlarge", "memory"): (384, 192, 384, 496, 480, 96),
        ("ml.g5.12xlarge", "nvidia.com/gpu"): (8, 4, 8, 11, 10, 2),
    }
    assert amounts(teams["nlp"]) == {
        ("ml.p5.48xlarge", "cpu"): (384, 0, 0, 96, 96, 0),
        ("ml.p5.48xlarge", "memory"): (4096, 0, 0, 1024, 1024, 0),
        ("ml.p5.48xlarge", "nvidia.com/gpu"): (16, 0, 0, 8, 8, 0),
    }
    # No status yet (Kueue has not reconciled it): guaranteed only.
    assert amounts(teams["legacy"]) == {
        ("ml.g5.12xlarge", "cpu"): (48, 24, 48, 0, 0, 0),
        ("ml.g5.12xlarge", "memory"): (192, 96, 192, 0, 0, 0),
        ("ml.g5.12xlarge", "nvidia.com/gpu"): (4, 2, 4, 0, 0, 0),
    }
    workloads = {name: (t["cluster_queue"], t["in_team_files"], t["admitted_workloads"], t["reserving_workloads"], t["pending_workloads"])
                 for name, t in teams.items()}  # fmt: skip
    assert workloads == {
        "vision": ("hyperpod-ns-vision-clusterqueue", True, 3, 4, 0),
        "nlp": ("hyperpod-ns-nlp-clusterqueue", True, 1, 1, 4),
        "legacy": ("hyperpod-ns-legacy-clusterqueue", False, 0, 0, 0),
        "research": (None, True, None, None, None),
    }
    assert teams["vision"]["cohort"] == "shared-pool"
    assert made["other_queues"] == ["batch-cq"]

    assert cells(made["table"]) == [
        ("team", "flavor", "resource", "guaranteed", "borrow limit", "lend limit", "reserved", "in use", "borrowed"),
        ("legacy", "ml.g5.12xlarge", "cpu", "48", "24", "48", "0", "0", "0"),
        ("legacy", "ml.g5.12xlarge", "memory (GiB)", "192", "96", "192", "0", "0", "0"),
        ("legacy", "ml.g5.12xlarge", "nvidia.com/gpu", "4", "2", "4", "0", "0", "0"),
        ("nlp", "ml.p5.48xlarge", "cpu", "384", "0", "0", "96", "96", "0"),
        ("nlp", "ml.p5.48xlarge", "memory (GiB)", "4096", "0", "0", "1024", "1024", "0"),
        ("nlp", "ml.p5.48xlarge", "nvidia.com/gpu", "16", "0", "0", "8", "8", "0"),
        ("vision", "ml.g5.12xlarge", "cpu", "96", "48", "96", "121.5", "120", "24"),
        ("vision", "ml.g5.12xlarge", "memory (GiB)", "384", "192", "384", "496", "480", "96"),
        ("vision", "ml.g5.12xlarge", "nvidia.com/gpu", "8", "4", "8", "11", "10", "2"),
        ("team", "cluster queue", "admitted", "reserving", "pending"),
        ("legacy", "hyperpod-ns-legacy-clusterqueue", "0", "0", "0", "not in the team files"),
        ("nlp", "hyperpod-ns-nlp-clusterqueue", "1", "1", "4"),
        ("research", "-", "-", "-", "-", "no ClusterQueue hyperpod-ns-research-clusterqueue (no compute quota yet)"),
        ("vision", "hyperpod-ns-vision-clusterqueue", "3", "4", "0"),
        ("borrow limit - = no limit; lend limit - = all of guaranteed may be lent; in use includes borrowed",),
        ("1 other ClusterQueue(s), not Task Governance's: batch-cq",),
    ]


def test_the_module_reads_page_by_page_and_changes_nothing(cluster, monkeypatch):
    """The module's run: one list per page (a page of one queue here, following metadata.continue), and nothing but lists,
    as the API server's audit log records the requests of the module's client (the kubernetes library's user agent)."""
    monkeypatch.setattr(capacity_report, "PAGE", 1)
    mark = len(cluster.audit_events())
    params = module_params(capacity_module.MODULE_OPTIONS, kubeconfig=str(cluster.kubeconfig), teams=["vision"])

    result = capacity_module.converge(None, params)

    assert result["changed"] is False
    assert [t["team"] for t in result["teams"]] == ["legacy", "nlp", "vision"]
    assert result["other_queues"] == ["batch-cq"]
    requests = [e for e in cluster.audit_events(mark) if e.get("userAgent", "").startswith("OpenAPI-Generator")]
    assert [(e["verb"], e["objectRef"]["resource"], e["objectRef"]["apiGroup"]) for e in requests] == [("list", "clusterqueues", "kueue.x-k8s.io")] * 4


def test_a_cluster_without_kueue_is_named_as_such(cluster, monkeypatch):
    monkeypatch.setitem(team_namespace.RESOURCES, "ClusterQueue", ("/apis/kueue.x-k8s.io/v1beta1", "notclusterqueues", False))
    with pytest.raises(KubernetesError, match="serves no Kueue ClusterQueues .*is the Task Governance add-on installed"):
        capacity_report.read(Cluster(str(cluster.kubeconfig)))
