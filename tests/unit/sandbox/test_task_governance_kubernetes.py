"""The sandbox's Task Governance add-on acts on the real Kubernetes API server, as the add-on acts on EKS.

Through boto3 only, as the collection calls AWS; then read back from the API server as the admin.
"""

from __future__ import annotations

import base64
import http.server
import json
import ssl
import threading
import time

import pytest

from sandbox.kube import task_governance
from sandbox.kube.api import KubeApi, KubeError
from tests.unit.sandbox.aws_errors import refused
from tests.unit.sandbox.polling import wait_until
from tests.unit.sandbox.test_sagemaker_scheduler import ADDON, EKS_ROLE, create_hyperpod_cluster, wait_addon_active

TEAM = "vision"
NAMESPACE = "hyperpod-ns-vision"
QUEUE = "hyperpod-ns-vision-clusterqueue"
# A finalizer of the tests' own, which no controller removes.
HOLD = "tests.hyperpod.tenancy/hold"


def wait_status(describe, wanted, timeout=10):
    deadline = time.monotonic() + timeout
    while (status := describe()["Status"]) != wanted:
        assert time.monotonic() < deadline, f"status is {status}, not {wanted}"
        time.sleep(0.05)


@pytest.fixture
def env(sandbox, kube_cluster):
    sm, eks = sandbox.boto3_client("sagemaker"), sandbox.boto3_client("eks")
    eks_arn = eks.create_cluster(name="ml-eks", roleArn=EKS_ROLE, resourcesVpcConfig={"subnetIds": ["subnet-1"]})["cluster"]["arn"]
    eks.create_addon(clusterName="ml-eks", addonName=ADDON)
    wait_addon_active(eks, "ml-eks")
    return sm, eks, create_hyperpod_cluster(sandbox, "ml-shared", eks_arn), KubeApi(kube_cluster.directory)


def create_quota(sm, cluster_arn, **config):
    quota_id = sm.create_compute_quota(
        Name="hyperpod-vision-quota",
        ClusterArn=cluster_arn,
        ComputeQuotaConfig={"ComputeQuotaResources": [{"InstanceType": "ml.g5.12xlarge", "Count": 2}], **config},
        ComputeQuotaTarget={"TeamName": TEAM, "FairShareWeight": 20},
    )["ComputeQuotaId"]
    wait_status(lambda: sm.describe_compute_quota(ComputeQuotaId=quota_id), "Created")
    return quota_id


def test_describe_cluster_points_at_the_api_server(sandbox, kube_cluster):
    eks = sandbox.boto3_client("eks")
    eks.create_cluster(name="ml-eks", roleArn=EKS_ROLE, resourcesVpcConfig={"subnetIds": ["subnet-1"]})

    cluster = eks.describe_cluster(name="ml-eks")["cluster"]

    assert cluster["endpoint"] == kube_cluster.server
    assert base64.b64decode(cluster["certificateAuthority"]["data"]) == (kube_cluster.pki / "ca.crt").read_bytes()


def test_the_add_on_installs_kueue_and_takes_it_away(env):
    _sm, eks, _cluster_arn, api = env
    for crd in task_governance.CRDS:
        assert api.get("CustomResourceDefinition", crd["metadata"]["name"])["status"]["acceptedNames"]["kind"] == crd["spec"]["names"]["kind"]

    eks.delete_addon(clusterName="ml-eks", addonName=ADDON)
    deadline = time.monotonic() + task_governance.ADDON_WORK_TIMEOUT
    while ADDON in eks.list_addons(clusterName="ml-eks")["addons"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)

    assert api.list("ClusterQueue") == []
    assert all(api.get("CustomResourceDefinition", crd["metadata"]["name"]) is None for crd in task_governance.CRDS)


def test_reads_answer_at_once_while_kueue_is_slow_to_go(env, sandbox):
    """EKS answers DELETING while the add-on's resources go; no read waits for the API server to drop Kueue's CRDs.

    A CI run once read ListAddons right after DeleteAddon and got botocore's ReadTimeoutError: that read
    was removing Kueue itself, waiting for the API server. Here a finalizer no controller removes keeps a
    ResourceFlavor, and with it its CRD, for as long as the test wants.
    """
    _sm, eks, _cluster_arn, api = env
    flavors_crd = "resourceflavors.kueue.x-k8s.io"
    held = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": "held", "finalizers": [HOLD]}}
    api.apply(held, "tests")
    quick = sandbox.boto3_client("eks", read_timeout=5)
    try:
        eks.delete_addon(clusterName="ml-eks", addonName=ADDON)
        time.sleep(2 * 0.2)  # past the status delay the sandbox fixture sets

        assert quick.list_addons(clusterName="ml-eks")["addons"] == [ADDON]
        assert quick.describe_addon(clusterName="ml-eks", addonName=ADDON)["addon"]["status"] == "DELETING"
        # Not gone yet: EKS refuses to create it again.
        assert refused(quick.create_addon, clusterName="ml-eks", addonName=ADDON) == "ResourceInUseException"
        # ... and it is DELETING because Kueue is on its way out, held by the finalizer.
        wait_until(lambda: "deletionTimestamp" in api.get("CustomResourceDefinition", flavors_crd)["metadata"], True, "the CRD's deletion")
        assert quick.describe_addon(clusterName="ml-eks", addonName=ADDON)["addon"]["status"] == "DELETING"
    finally:
        api.request("PATCH", api.path("ResourceFlavor", "held"), {"metadata": {"finalizers": None}}, "application/merge-patch+json")

    wait_until(lambda: quick.list_addons(clusterName="ml-eks")["addons"], [], "the add-on list", timeout=task_governance.ADDON_WORK_TIMEOUT)
    assert all(api.get("CustomResourceDefinition", crd["metadata"]["name"]) is None for crd in task_governance.CRDS)
    eks.create_addon(clusterName="ml-eks", addonName=ADDON)
    wait_addon_active(eks, "ml-eks")
    assert api.get("CustomResourceDefinition", flavors_crd) is not None


def test_a_created_quota_has_its_namespace_and_queues(env):
    sm, _eks, cluster_arn, api = env
    assert api.get("Namespace", NAMESPACE) is None

    create_quota(sm, cluster_arn, ResourceSharingConfig={"Strategy": "LendAndBorrow", "BorrowLimit": 50}, PreemptTeamTasks="LowerPriority")

    namespace = api.get("Namespace", NAMESPACE)
    assert namespace["metadata"]["labels"] == {
        "kubernetes.io/metadata.name": NAMESPACE,
        "sagemaker.amazonaws.com/sagemaker-managed-queue": "true",
        "sagemaker.amazonaws.com/quota-allocation-id": TEAM,
    }
    queue = api.get("ClusterQueue", QUEUE)["spec"]
    assert queue["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": NAMESPACE}}
    assert queue["preemption"]["withinClusterQueue"] == "LowerPriority"
    assert queue["fairSharing"] == {"weight": 20}
    [flavor] = queue["resourceGroups"][0]["flavors"]
    assert flavor["name"] == "ml.g5.12xlarge"
    # Two ml.g5.12xlarge: 96 vCPUs, 384 GiB, 8 GPUs; half of each may be borrowed.
    assert {r["name"]: (r["nominalQuota"], r["borrowingLimit"]) for r in flavor["resources"]} == {
        "cpu": (96, 48), "memory": ("384Gi", "192Gi"), "nvidia.com/gpu": (8, 4)}  # fmt: skip
    assert api.get("ResourceFlavor", "ml.g5.12xlarge")["spec"]["nodeLabels"] == {"node.kubernetes.io/instance-type": "ml.g5.12xlarge"}
    local = api.get("LocalQueue", "hyperpod-ns-vision-localqueue", NAMESPACE)
    assert local["spec"]["clusterQueue"] == QUEUE


def test_an_updated_quota_updates_its_queue_and_keeps_what_others_added(env):
    sm, _eks, cluster_arn, api = env
    quota_id = create_quota(sm, cluster_arn)
    # The collection's labels on Task Governance's namespace are the collection's (another field manager).
    api.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE, "labels": {"pod-security.kubernetes.io/enforce": "baseline"}}}, "other")

    sm.update_compute_quota(
        ComputeQuotaId=quota_id,
        TargetVersion=1,
        ComputeQuotaConfig={"ComputeQuotaResources": [{"InstanceType": "ml.g5.12xlarge", "Count": 3}], "ResourceSharingConfig": {"Strategy": "DontLend"}},
        ActivationState="Disabled",
    )
    wait_status(lambda: sm.describe_compute_quota(ComputeQuotaId=quota_id), "Updated")

    queue = api.get("ClusterQueue", QUEUE)["spec"]
    gpus = {r["name"]: r for r in queue["resourceGroups"][0]["flavors"][0]["resources"]}["nvidia.com/gpu"]
    assert (gpus["nominalQuota"], gpus["lendingLimit"], gpus["borrowingLimit"]) == (12, 0, 0)
    assert queue["stopPolicy"] == "Hold"
    assert api.get("Namespace", NAMESPACE)["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "baseline"


def test_a_deleted_quota_takes_its_namespace_and_queues_with_it(env):
    sm, _eks, cluster_arn, api = env
    quota_id = create_quota(sm, cluster_arn)

    sm.delete_compute_quota(ComputeQuotaId=quota_id)
    wait_status(lambda: sm.describe_compute_quota(ComputeQuotaId=quota_id), "Deleted")

    assert api.get("Namespace", NAMESPACE) is None
    assert api.get("ClusterQueue", QUEUE) is None
    assert api.list("ResourceFlavor") == []


def test_priority_classes_become_workload_priority_classes(env):
    sm, _eks, cluster_arn, api = env
    config_id = sm.create_cluster_scheduler_config(
        Name="ml-shared-scheduler",
        ClusterArn=cluster_arn,
        SchedulerConfig={"PriorityClasses": [{"Name": "inference", "Weight": 90}, {"Name": "training", "Weight": 50}], "FairShare": "Enabled"},
    )["ClusterSchedulerConfigId"]
    wait_status(lambda: sm.describe_cluster_scheduler_config(ClusterSchedulerConfigId=config_id), "Created")
    assert {c["metadata"]["name"]: c["value"] for c in api.list("WorkloadPriorityClass")} == {"inference": 90, "training": 50}

    sm.update_cluster_scheduler_config(
        ClusterSchedulerConfigId=config_id, TargetVersion=1, SchedulerConfig={"PriorityClasses": [{"Name": "training", "Weight": 60}]}
    )
    wait_status(lambda: sm.describe_cluster_scheduler_config(ClusterSchedulerConfigId=config_id), "Updated")
    assert {c["metadata"]["name"]: c["value"] for c in api.list("WorkloadPriorityClass")} == {"training": 60}

    sm.delete_cluster_scheduler_config(ClusterSchedulerConfigId=config_id)
    wait_status(lambda: sm.describe_cluster_scheduler_config(ClusterSchedulerConfigId=config_id), "Deleted")
    assert api.list("WorkloadPriorityClass") == []


def test_reset_empties_the_cluster(env, sandbox):
    sm, _eks, cluster_arn, api = env
    create_quota(sm, cluster_arn)
    # What a team's run leaves in its namespace, with a claim the protection controller finalizes.
    api.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "left-behind", "namespace": NAMESPACE}})
    api.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "left-behind", "namespace": NAMESPACE},
                "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "", "resources": {"requests": {"storage": "1Gi"}}}})
    api.request("POST", f"/api/v1/namespaces/{NAMESPACE}/configmaps",
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "left-behind"}, "data": {"k": "v"}})

    sandbox.reset()

    assert api.get("Namespace", NAMESPACE) is None
    assert api.list("ClusterQueue") == []
    assert {n["metadata"]["name"] for n in api.list("Namespace")} == set(task_governance.SYSTEM_NAMESPACES)
    # A namespace of the same name made again holds nothing of the old one's (nothing was left in etcd under it).
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    assert api.get("ServiceAccount", "left-behind", NAMESPACE) is None
    assert api.list("PersistentVolumeClaim", NAMESPACE) == []
    assert api.request("GET", f"/api/v1/namespaces/{NAMESPACE}/configmaps")["items"] == []


def test_reset_empties_a_namespace_that_is_already_terminating(sandbox, kube_cluster):
    """A run cut short leaves a namespace terminating (deleted, not yet emptied by the namespace controller)."""
    api = KubeApi(kube_cluster.directory)
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    api.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "left-behind", "namespace": NAMESPACE}})
    api.request("DELETE", f"/api/v1/namespaces/{NAMESPACE}")
    assert api.get("Namespace", NAMESPACE)["status"]["phase"] == "Terminating"

    sandbox.reset()

    assert api.get("Namespace", NAMESPACE) is None


class HeldControllerDeletes:
    """A validating webhook that holds the namespace controller's deletes of ConfigMaps in ``NAMESPACE`` until
    ``release()``, so a test can act while the controller's pass over the namespace is under way; others pass at once."""

    NAME = "tests-hold-controller-deletes"

    def __init__(self, api: KubeApi, kube_cluster):
        self.api, self.arrived, self.released = api, threading.Event(), threading.Event()
        self.answered_at = None
        held = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if review["request"]["userInfo"]["username"] == "system:kube-controller-manager":
                    held.arrived.set()
                    held.released.wait(30)
                    held.answered_at = time.monotonic()
                body = json.dumps(
                    {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {"uid": review["request"]["uid"], "allowed": True}}
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        # The API server's own certificate names 127.0.0.1 and is signed by the cluster's CA.
        context.load_cert_chain(str(kube_cluster.pki / "apiserver.crt"), str(kube_cluster.pki / "apiserver.key"))
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.api.request("POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration", "metadata": {"name": self.NAME},
            "webhooks": [{
                "name": "hold.tests.hyperpod.tenancy", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                "failurePolicy": "Ignore", "timeoutSeconds": 30,
                "clientConfig": {"url": f"https://127.0.0.1:{self.server.server_port}/",
                                 "caBundle": base64.b64encode((kube_cluster.pki / "ca.crt").read_bytes()).decode()},
                "rules": [{"operations": ["DELETE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": NAMESPACE}},
            }],
        })  # fmt: skip

    def release(self) -> float:
        self.released.set()
        return time.monotonic()

    def close(self) -> None:
        self.released.set()
        self.api.request("DELETE", f"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{self.NAME}")
        self.server.shutdown()


def test_reset_waits_for_a_namespace_deletion_under_way(sandbox, kube_cluster):
    """The namespace controller's pass over a deleted namespace deletes each kind in the namespace of that name, not of
    that UID: the reset returns only once a pass under way is over, or the next test's namespace of the same name loses
    what it writes (once in CI, a team's NetworkPolicy)."""
    api = KubeApi(kube_cluster.directory)
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "left-behind"}, "data": {"k": "v"}}
    api.request("POST", f"/api/v1/namespaces/{NAMESPACE}/configmaps", configmap)
    held = HeldControllerDeletes(api, kube_cluster)
    try:
        api.request("DELETE", f"/api/v1/namespaces/{NAMESPACE}")
        # The controller starts 5 s after the deletion (namespaceDeletionGracePeriod); its delete of the ConfigMap waits.
        assert held.arrived.wait(30), "the namespace controller did not start deleting"
        assert api.namespace_syncs_under_way() == 1
        reset_done = []
        resetting = threading.Thread(target=lambda: (sandbox.reset(), reset_done.append(time.monotonic())))
        resetting.start()
        resetting.join(3)
        released_at = held.release()
        resetting.join(60)
        answered_at = held.answered_at
        assert answered_at is not None and reset_done, "the reset returned during the controller's pass"
        assert reset_done[0] > answered_at >= released_at
        assert api.namespace_syncs_under_way() == 0
    finally:
        held.close()


HOLDS_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "holds.tests.hyperpod.tenancy"},
    "spec": {
        "group": "tests.hyperpod.tenancy", "scope": "Cluster", "names": {"plural": "holds", "singular": "hold", "kind": "Hold"},
        "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}}],
    },
}  # fmt: skip


def test_a_deleted_crd_the_api_servers_finalizer_dropped_still_goes(kube_cluster):
    """The API server's CRD finalizer returns without an error when its status write conflicts, trusting to be called
    again, but its informer calls it only for a change outside the CRD's Terminating condition (managed fields count): a
    CRD dropped so stays until the informer's resync, 5 minutes on. A CI run's Task Governance add-on stayed DELETING for
    the 180 s the sandbox gives Kueue to go. ``wait_crds_gone`` touches the CRD, a change the finalizer is called for.

    The test makes the drop. The finalizer's field manager already owns a Terminating condition as the finalizer writes
    it, so the finalizer's first write changes nothing; while it waits for an object the test's finalizer holds, the test
    changes that condition's message as the same manager in the same second, so the managed fields stay as they were.
    """
    api = KubeApi(kube_cluster.directory)
    name = HOLDS_CRD["metadata"]["name"]
    crd_status = f"{api.path('CustomResourceDefinition', name)}/status?fieldManager=kube-apiserver"
    holds = "/apis/tests.hyperpod.tenancy/v1/holds"
    held = {"apiVersion": "tests.hyperpod.tenancy/v1", "kind": "Hold", "metadata": {"name": "held", "finalizers": [HOLD]}}
    deleted_at = []

    def made_the_drop() -> bool:
        api.apply(HOLDS_CRD, "tests")
        api.wait_established(name)
        api.request("POST", holds, held)
        time.sleep(1.02 - time.time() % 1)  # early in a second, so the test's two writes can fall in it
        crd = api.get("CustomResourceDefinition", name)
        terminating = {"type": "Terminating", "status": "True", "lastTransitionTime": crd["metadata"]["creationTimestamp"],
                       "reason": "InstanceDeletionInProgress", "message": "CustomResource deletion is in progress"}  # fmt: skip
        crd["status"]["conditions"].append(terminating)
        api.request("PUT", crd_status, crd)
        api.delete("CustomResourceDefinition", name)
        deleted_at.append(time.monotonic())
        time.sleep(0.1)  # the finalizer's first write
        crd = api.get("CustomResourceDefinition", name)
        next(c for c in crd["status"]["conditions"] if c["type"] == "Terminating")["message"] = "changed by the test"
        try:
            written = api.request("PUT", crd_status, crd)
        except KubeError as error:
            if error.status != 409:  # the finalizer wrote after the test read
                raise
            return False
        finally:
            api.request("PATCH", f"{holds}/held", {"metadata": {"finalizers": None}}, "application/merge-patch+json")
        return written["metadata"]["managedFields"] == crd["metadata"]["managedFields"]

    for _attempt in range(5):
        if made_the_drop():
            break
        api.wait_crds_gone([name], timeout=60)  # the finalizer was called again
    else:
        pytest.fail("the test's writes never fell in one second, after the finalizer's")

    # The finalizer's next listing, 5 s after the deletion, finds no object, and its last write conflicts: the CRD stays.
    time.sleep(max(0.0, deleted_at[-1] + 7 - time.monotonic()))
    assert api.get("CustomResourceDefinition", name) is not None, "the finalizer was called again: the test made no drop"
    # Deleted over 6 s ago: touched at once.
    api.wait_crds_gone([name], timeout=30)

    assert api.get("CustomResourceDefinition", name) is None
