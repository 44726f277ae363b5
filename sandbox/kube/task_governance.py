"""What the HyperPod Task Governance add-on does inside the cluster, done through the real API server.

The add-on runs Kueue and turns SageMaker's Task Governance objects into Kueue's
(https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-eks-operate-console-ui-governance.html):

- the add-on installed (ACTIVE): Kueue's CustomResourceDefinitions (``kueue-crds.yaml``);
- a compute quota (allocation) for team ``T`` Created or Updated: the namespace ``hyperpod-ns-T``
  labelled ``sagemaker.amazonaws.com/sagemaker-managed-queue=true`` and
  ``sagemaker.amazonaws.com/quota-allocation-id=T``, a ResourceFlavor per instance type, the
  ClusterQueue ``hyperpod-ns-T-clusterqueue`` (quota, lending and borrowing, preemption, fair-share
  weight) and the LocalQueue ``hyperpod-ns-T-localqueue``; the quota Deleted: all of them gone
  (ResourceFlavors stay while another queue uses them);
- a cluster scheduler config (policy) Created or Updated: a WorkloadPriorityClass per priority
  class (value = weight); Deleted: gone.

The sandbox calls these when a status settles (``sandbox.core.Lifecycle.on_settle``), so a client
that reads Created finds the namespace there; the add-on's own installing and removing of Kueue, which
can take minutes, runs off the request thread while the add-on is CREATING or DELETING
(``Lifecycle.work``). Everything is written by server-side apply under the field manager
``sagemaker-taskgovernance``: what others add to the namespace (the collection's Pod Security labels)
is theirs and stays.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from sandbox.kube.api import KubeApi, connected

MANAGER = "sagemaker-taskgovernance"
MANAGED_QUEUE = "sagemaker.amazonaws.com/sagemaker-managed-queue"
ALLOCATION = "sagemaker.amazonaws.com/quota-allocation-id"
POLICY_LABEL = "sagemaker.amazonaws.com/cluster-policy"
CRDS = list(yaml.safe_load_all((Path(__file__).parent / "kueue-crds.yaml").read_text()))
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
# vCPUs, memory (GiB) and NVIDIA GPUs of an instance of each type, from the SageMaker pricing page's
# instance table; a quota given as a count of instances is that many times these.
INSTANCE_RESOURCES = {
    "ml.p5.48xlarge": (192, 2048, 8),
    "ml.p5e.48xlarge": (192, 2048, 8),
    "ml.p4d.24xlarge": (96, 1152, 8),
    "ml.p4de.24xlarge": (96, 1152, 8),
    "ml.g5.xlarge": (4, 16, 1),
    "ml.g5.2xlarge": (8, 32, 1),
    "ml.g5.4xlarge": (16, 64, 1),
    "ml.g5.8xlarge": (32, 128, 1),
    "ml.g5.12xlarge": (48, 192, 4),
    "ml.g5.24xlarge": (96, 384, 4),
    "ml.g5.48xlarge": (192, 768, 8),
    "ml.g6.12xlarge": (48, 192, 4),
    "ml.g6e.12xlarge": (48, 384, 4),
    "ml.c5.2xlarge": (8, 16, 0),
    "ml.m5.2xlarge": (8, 32, 0),
    "ml.t3.medium": (2, 4, 0),
}
GPU = "nvidia.com/gpu"
# Seconds the API server is given to drop Kueue's deleted CRDs (its finalizer lists a CRD's objects every 5 s, and
# can drop a CRD: KubeApi.wait_crds_gone) and to establish each new one.
CRD_REMOVAL_TIMEOUT = 180
CRD_ESTABLISH_TIMEOUT = 30
# How long the add-on's installing or removing of Kueue takes at most, so its CREATING, UPDATING or DELETING:
# what a client of the sandbox that waits for it (a test) is to be ready for.
ADDON_WORK_TIMEOUT = CRD_REMOVAL_TIMEOUT + CRD_ESTABLISH_TIMEOUT * len(CRDS)


def namespace_of(team: str) -> str:
    return f"hyperpod-ns-{team}"


def install_kueue(api: KubeApi) -> None:
    # A CRD still being deleted (an earlier add-on, a reset) has to be gone before it can be made again.
    api.wait_crds_gone([crd["metadata"]["name"] for crd in CRDS if _terminating(api, crd)], timeout=CRD_REMOVAL_TIMEOUT)
    for crd in CRDS:
        api.apply(crd, MANAGER)
    for crd in CRDS:
        api.wait_established(crd["metadata"]["name"], timeout=CRD_ESTABLISH_TIMEOUT)


def _terminating(api: KubeApi, crd: dict) -> bool:
    current = api.get("CustomResourceDefinition", crd["metadata"]["name"])
    return current is not None and "deletionTimestamp" in current["metadata"]


# Whether the Task Governance add-on is ACTIVE, so Kueue acts. A reset leaves Kueue's CRDs in place (the
# API server can take over a minute to finalize a deleted CRD, longer than a client waits for the add-on
# to settle) and clears this instead: after a reset, nothing acts until an add-on is ACTIVE again.
_kueue_active = False


def kueue_installed(api: KubeApi) -> bool:
    return _kueue_active and api.get("CustomResourceDefinition", "clusterqueues.kueue.x-k8s.io") is not None


def remove_kueue(api: KubeApi) -> None:
    names = [crd["metadata"]["name"] for crd in CRDS]
    for name in names:
        api.delete("CustomResourceDefinition", name)
    api.wait_crds_gone(names, timeout=CRD_REMOVAL_TIMEOUT)


def _quantities(resource: dict) -> dict:
    """cpu, memory and GPUs of one ComputeQuotaResources entry (a count of instances, or the amounts given)."""
    per_instance = INSTANCE_RESOURCES.get(resource["InstanceType"], (0, 0, 0))
    count = resource.get("Count")
    if count is not None:
        cpu, memory, gpus = (count * value for value in per_instance)
    else:
        cpu, memory, gpus = resource.get("VCpu") or 0, resource.get("MemoryInGiB") or 0, resource.get("Accelerators") or 0
    return {"cpu": _number(cpu), "memory": f"{_number(memory)}Gi", GPU: _number(gpus)}


def _number(value):
    return int(value) if float(value).is_integer() else str(value)


def _scaled(quantity, percent: int):
    if isinstance(quantity, str) and quantity.endswith("Gi"):
        return f"{_number(float(quantity[:-2]) * percent / 100)}Gi"
    return _number(float(quantity) * percent / 100)


def cluster_queue(team: str, quota: dict) -> dict:
    config = quota["ComputeQuotaConfig"]
    sharing = config.get("ResourceSharingConfig") or {"Strategy": "LendAndBorrow", "BorrowLimit": 50}
    strategy = sharing["Strategy"]
    flavors = []
    for resource in config.get("ComputeQuotaResources") or []:
        entries = []
        for name, nominal in _quantities(resource).items():
            entry = {"name": name, "nominalQuota": nominal}
            # Lend: idle quota goes to the cohort; DontLend keeps it; only LendAndBorrow borrows, up to BorrowLimit percent.
            entry["lendingLimit"] = nominal if strategy != "DontLend" else _scaled(nominal, 0)
            entry["borrowingLimit"] = _scaled(nominal, sharing.get("BorrowLimit", 50)) if strategy == "LendAndBorrow" else _scaled(nominal, 0)
            entries.append(entry)
        flavors.append({"name": resource["InstanceType"], "resources": entries})
    spec = {
        "cohort": "shared-pool",
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace_of(team)}},
        "queueingStrategy": "BestEffortFIFO",
        "resourceGroups": [{"coveredResources": ["cpu", "memory", GPU], "flavors": flavors}] if flavors else [],
        "preemption": {
            "reclaimWithinCohort": "Any",
            "withinClusterQueue": "LowerPriority" if config.get("PreemptTeamTasks") == "LowerPriority" else "Never",
        },
        "fairSharing": {"weight": quota["ComputeQuotaTarget"].get("FairShareWeight", 0)},
        # A disabled allocation admits nothing new.
        "stopPolicy": "Hold" if quota.get("ActivationState") == "Disabled" else "None",
    }
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "ClusterQueue",
        "metadata": {"name": f"{namespace_of(team)}-clusterqueue", "labels": {ALLOCATION: team}},
        "spec": spec,
    }


def apply_quota(quota: dict) -> None:
    """Make the team's namespace and queues match a compute quota that is Created or Updated."""
    api = connected()
    # Without the add-on (Kueue's CRDs), nothing in the cluster acts on the quota.
    if api is None or not kueue_installed(api):
        return
    team = quota["ComputeQuotaTarget"]["TeamName"]
    namespace = namespace_of(team)
    api.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": {MANAGED_QUEUE: "true", ALLOCATION: team}}}, MANAGER)
    for resource in quota["ComputeQuotaConfig"].get("ComputeQuotaResources") or []:
        flavor = resource["InstanceType"]
        api.apply(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta1",
                "kind": "ResourceFlavor",
                "metadata": {"name": flavor},
                "spec": {"nodeLabels": {"node.kubernetes.io/instance-type": flavor}},
            },
            MANAGER,
        )
    api.apply(cluster_queue(team, quota), MANAGER)
    api.apply(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "LocalQueue",
            "metadata": {"name": f"{namespace}-localqueue", "namespace": namespace, "labels": {ALLOCATION: team}},
            "spec": {"clusterQueue": f"{namespace}-clusterqueue"},
        },
        MANAGER,
    )


def remove_quota(team: str) -> None:
    """Remove what apply_quota made for a team whose quota was deleted, and wait for its namespace to go."""
    api = connected()
    if api is None:
        return
    namespace = namespace_of(team)
    api.delete("ClusterQueue", f"{namespace}-clusterqueue")
    api.delete("Namespace", namespace)
    used = {flavor["name"] for queue in api.list("ClusterQueue") for group in queue["spec"].get("resourceGroups", []) for flavor in group["flavors"]}
    for flavor in api.list("ResourceFlavor"):
        if flavor["metadata"]["name"] not in used:
            api.delete("ResourceFlavor", flavor["metadata"]["name"])
    api.wait_gone("Namespace", [namespace])


def apply_priority_classes(policy_name: str, classes: list[dict]) -> None:
    api = connected()
    if api is None or not kueue_installed(api):
        return
    wanted = {item["Name"]: item["Weight"] for item in classes}
    for name, weight in wanted.items():
        api.apply(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta1",
                "kind": "WorkloadPriorityClass",
                "metadata": {"name": name, "labels": {POLICY_LABEL: policy_name}},
                "value": weight,
                "description": f"Priority class {name} of cluster policy {policy_name}",
            },
            MANAGER,
        )
    remove_priority_classes(policy_name, keep=set(wanted))


def remove_priority_classes(policy_name: str, keep: set | None = None) -> None:
    api = connected()
    if api is None:
        return
    for item in api.list("WorkloadPriorityClass", label_selector=f"{POLICY_LABEL}={policy_name}"):
        if item["metadata"]["name"] not in (keep or set()):
            api.delete("WorkloadPriorityClass", item["metadata"]["name"])


def addon_work(status: str) -> None:
    """What the Task Governance add-on does while it is CREATING or UPDATING (Kueue installed) or DELETING
    (Kueue removed): off the request thread (``Lifecycle.work``), since the API server can take minutes to
    finalize a deleted CRD, and the add-on settles once it is done."""
    api = connected()
    if api is None:
        return
    global _kueue_active
    if status == "ACTIVE":
        install_kueue(api)
    else:
        # Kueue stops acting as soon as the add-on is going.
        _kueue_active = False
        remove_kueue(api)


def addon_settled(status: str) -> None:
    """The Task Governance add-on became ACTIVE: Kueue, installed by ``addon_work``, acts from now on."""
    global _kueue_active
    if status == "ACTIVE":
        _kueue_active = True


def reset() -> None:
    """Forget what the cluster holds beyond a new cluster's own, as the sandbox's reset forgets AWS resources.

    Kueue's CRDs stay, inert until a Task Governance add-on is ACTIVE again (``_kueue_active``).
    """
    api = connected()
    if api is None:
        return
    namespaces = [n["metadata"]["name"] for n in api.list("Namespace") if n["metadata"]["name"] not in SYSTEM_NAMESPACES]
    for name in namespaces:
        api.delete("Namespace", name)
    # Terminating now (the API server admits nothing new in them): emptied and finalized at once.
    api.empty_namespaces(namespaces)
    volumes = [v["metadata"]["name"] for v in api.list("PersistentVolume")]
    # The collection's cluster-scoped objects of a team too: its volume and its admission policy (team_namespace).
    kinds = ("ClusterQueue", "ResourceFlavor", "WorkloadPriorityClass", "PersistentVolume", "ValidatingAdmissionPolicyBinding", "ValidatingAdmissionPolicy")
    for kind in kinds:
        for item in api.list(kind):
            api.delete(kind, item["metadata"]["name"])
    for kind in ("ClusterRoleBinding", "ClusterRole"):
        for item in api.list(kind, label_selector="app.kubernetes.io/managed-by=hyperpod.tenancy"):
            api.delete(kind, item["metadata"]["name"])
    # Volumes go once the protection controller sees their claims gone.
    api.wait_gone("Namespace", namespaces)
    api.wait_namespace_controller_idle()
    api.wait_gone("PersistentVolume", volumes)
    global _kueue_active
    _kueue_active = False
