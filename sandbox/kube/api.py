"""A small client of the sandbox's Kubernetes API server, for the sandbox's own controllers.

The sandbox plays the parts of the EKS control plane that act inside the cluster (the Task
Governance add-on); they reach the API server with the admin certificate that
``sandbox.kube.KubeCluster`` made, found through ``SANDBOX_KUBE_DIR``. Writes are server-side
apply (``application/apply-patch+yaml``) under a field manager of their own, as a controller's are.
"""

from __future__ import annotations

import calendar
import json
import os
import ssl
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote

from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_namespace import RESOURCES as COLLECTION_RESOURCES

from sandbox.kube import CONTROLLER_MANAGER_METRICS

# Seconds a deleted CRD is left to the API server's finalizer before the sandbox touches it (KubeApi.wait_crds_gone):
# a touch while the finalizer is at work only has it look once more.
CRD_NUDGE_INTERVAL = 6
NUDGED_AT = "sandbox.hyperpod.tenancy/finalizer-nudged-at"

# Where each kind the sandbox writes is served: kind -> (API path prefix, plural, namespaced); the collection's
# kinds as the collection's table says, and those only the sandbox's controllers write.
RESOURCES = {
    **COLLECTION_RESOURCES,
    "CustomResourceDefinition": ("/apis/apiextensions.k8s.io/v1", "customresourcedefinitions", False),
    "ResourceFlavor": ("/apis/kueue.x-k8s.io/v1beta1", "resourceflavors", False),
    "ClusterQueue": ("/apis/kueue.x-k8s.io/v1beta1", "clusterqueues", False),
    "LocalQueue": ("/apis/kueue.x-k8s.io/v1beta1", "localqueues", True),
    "WorkloadPriorityClass": ("/apis/kueue.x-k8s.io/v1beta1", "workloadpriorityclasses", False),
    "Workload": ("/apis/kueue.x-k8s.io/v1beta1", "workloads", True),
}


class KubeError(Exception):
    def __init__(self, status: int, message: str, retry_after: float = 0.2) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.retry_after = retry_after


class KubeApi:
    def __init__(self, directory: str | Path) -> None:
        directory = Path(directory)
        self.kubeconfig = directory / "kubeconfig"
        config = json.loads(self.kubeconfig.read_text())
        self.server = config["clusters"][0]["cluster"]["server"]
        self.ca = (directory / "pki" / "ca.crt").read_text()
        self._context = ssl.create_default_context(cadata=self.ca)
        self._context.load_cert_chain(str(directory / "pki" / "admin.crt"), str(directory / "pki" / "admin.key"))
        self.controller_metrics = (directory / CONTROLLER_MANAGER_METRICS).read_text().strip()

    @property
    def ssl_context(self) -> ssl.SSLContext:
        """The admin's TLS context: for the sandbox's stand-in of EKS's Kubernetes API path (eks_kubernetes_proxy)."""
        return self._context

    def request(self, method: str, path: str, body: dict | None = None, content_type: str = "application/json"):
        # 429 (a custom resource's storage re-initialising after its CRD was made again) says to retry,
        # with Retry-After, as client-go does.
        for attempt in range(50):
            try:
                return self._send(method, path, body, content_type)
            except KubeError as error:
                if error.status != 429 or attempt == 49:
                    raise
                time.sleep(min(error.retry_after, 1.0))
        raise AssertionError("unreachable")

    def _send(self, method: str, path: str, body: dict | None, content_type: str):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.server + path, data=data, method=method, headers={"Content-Type": content_type, "Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, context=self._context, timeout=30) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            try:
                message = json.loads(error.read()).get("message", error.reason)
            except ValueError:
                message = error.reason
            raise KubeError(error.code, message, float(error.headers.get("Retry-After") or 0.2)) from None

    @staticmethod
    def path(kind: str, name: str | None = None, namespace: str | None = None) -> str:
        prefix, plural, namespaced = RESOURCES[kind]
        path = f"{prefix}/namespaces/{quote(namespace)}/{plural}" if namespaced else f"{prefix}/{plural}"
        return f"{path}/{quote(name)}" if name else path

    def apply(self, obj: dict, manager: str) -> dict:
        meta = obj["metadata"]
        path = self.path(obj["kind"], meta["name"], meta.get("namespace"))
        return self.request("PATCH", f"{path}?fieldManager={quote(manager)}&force=true", obj, "application/apply-patch+yaml")

    def create(self, obj: dict) -> dict:
        meta = obj["metadata"]
        return self.request("POST", self.path(obj["kind"], namespace=meta.get("namespace")), obj)

    def update_status(self, obj: dict) -> dict:
        """PUT the object's status subresource (what a controller such as Kueue writes)."""
        meta = obj["metadata"]
        return self.request("PUT", self.path(obj["kind"], meta["name"], meta.get("namespace")) + "/status", obj)

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        try:
            return self.request("GET", self.path(kind, name, namespace))
        except KubeError as error:
            if error.status == 404:
                return None
            raise

    def list(self, kind: str, namespace: str | None = None, label_selector: str | None = None) -> list[dict]:
        path = self.path(kind, namespace=namespace)
        if label_selector:
            path += f"?labelSelector={quote(label_selector)}"
        try:
            return self.request("GET", path)["items"]
        except KubeError as error:
            if error.status == 404:  # a kind whose CRD is not installed
                return []
            raise

    def delete(self, kind: str, name: str, namespace: str | None = None) -> bool:
        try:
            self.request("DELETE", self.path(kind, name, namespace), {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"})
            return True
        except KubeError as error:
            if error.status == 404:
                return False
            raise

    def wait_gone(self, kind: str, names: list[str], timeout: float = 60, nudge=None) -> None:
        """Wait until every named object is gone, or another of its name (another uid) stands in its place (a namespace
        goes once the namespace controller emptied it). ``nudge(obj)``, when given, is called with each one still there."""
        deadline = time.monotonic() + timeout
        for name in names:
            uid = None
            while (obj := self.get(kind, name)) is not None and uid in (None, obj["metadata"]["uid"]):
                uid = obj["metadata"]["uid"]
                if time.monotonic() > deadline:
                    terminating = [c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == "Terminating"]
                    why = "".join(f" ({c.get('reason')}: {c.get('message')})" for c in terminating)
                    raise KubeError(504, f"{kind} {name} still exists after {timeout:.0f} s{why}")
                if nudge is not None:
                    nudge(obj)
                time.sleep(0.1)

    def namespaced_resources(self) -> list[str]:
        """The collection path (``/api/v1/namespaces/{}/pods``, with ``{}`` for the namespace) of every namespaced
        resource the server serves that can be deleted as a collection, from its discovery documents."""
        versions = ["/api/v1"]
        for group in self.request("GET", "/apis")["groups"]:
            versions.append("/apis/" + group["preferredVersion"]["groupVersion"])
        paths = []
        for version in versions:
            for resource in self.request("GET", version)["resources"]:
                if resource["namespaced"] and "/" not in resource["name"] and {"list", "deletecollection"} <= set(resource["verbs"]):
                    paths.append(f"{version}/namespaces/{{}}/{resource['name']}")
        return paths

    def empty_namespaces(self, names: list[str], timeout: float = 60) -> None:
        """Delete every object in the namespaces ``names`` (already being deleted) and finalize them.

        What the namespace controller does, without the 5 s it waits before it starts
        (``namespaceDeletionGracePeriod`` in pkg/controller/namespace). Objects that other controllers
        finalize (a claim's ``pvc-protection``) are waited for before the namespace is finalized, so
        nothing is left in etcd under a name a later test uses again.
        """
        if not names:
            return
        now = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background", "gracePeriodSeconds": 0}
        pending = []
        for collection in self.namespaced_resources():
            for name in names:
                path = collection.format(quote(name))
                try:
                    deleted = self.request("DELETE", path, now)
                except KubeError as error:
                    if error.status in (404, 405):
                        continue
                    raise
                if (deleted or {}).get("items"):
                    pending.append(path)
        deadline = time.monotonic() + timeout
        for path in pending:
            while self.request("GET", path)["items"]:
                if time.monotonic() > deadline:
                    raise KubeError(504, f"{path} still has objects after {timeout:.0f} s")
                time.sleep(0.05)
        for name in names:
            for _attempt in range(5):
                namespace = self.get("Namespace", name)
                if namespace is None:
                    break
                namespace["spec"]["finalizers"] = []
                try:
                    self.request("PUT", f"/api/v1/namespaces/{quote(name)}/finalize", namespace)
                    break
                except KubeError as error:
                    if error.status != 409:  # 409: the namespace controller changed it meanwhile; read it again
                        raise

    def namespace_syncs_under_way(self) -> int:
        """How many namespaces the namespace controller is working on now: the items its work queue handed out
        (``workqueue_queue_duration_seconds_count``, counted when taken) less those it is done with
        (``workqueue_work_duration_seconds_count``, counted when done), from client-go's workqueue metrics."""
        with urllib.request.urlopen(self.controller_metrics, context=self._context, timeout=10) as answer:
            text = answer.read().decode()
        counts = {}
        for line in text.splitlines():
            for metric in ("workqueue_queue_duration_seconds_count", "workqueue_work_duration_seconds_count"):
                if line.startswith(metric + '{name="namespace"}'):
                    counts[metric] = int(float(line.rsplit(" ", 1)[1]))
        return counts.get("workqueue_queue_duration_seconds_count", 0) - counts.get("workqueue_work_duration_seconds_count", 0)

    def wait_namespace_controller_idle(self, timeout: float = 60) -> None:
        """Wait until no namespace deletion of the namespace controller is under way.

        A pass that began before the sandbox finalized a namespace goes on deleting every kind in the namespace of
        that name, without asking for its UID (k8s pkg/controller/namespace/deletion/namespaced_resources_deleter.go,
        deleteCollection): a test that makes the namespace again meanwhile loses what it wrote there (once in CI, a
        team's NetworkPolicy). A pass that begins once the namespace is gone reads it afresh and does nothing.
        """
        deadline = time.monotonic() + timeout
        while self.namespace_syncs_under_way() > 0:
            if time.monotonic() > deadline:
                raise KubeError(504, f"the namespace controller was still deleting after {timeout:.0f} s")
            time.sleep(0.05)

    def wait_crds_gone(self, names: list[str], timeout: float) -> None:
        """Wait until the deleted CRDs ``names`` are gone, touching one still there ``CRD_NUDGE_INTERVAL`` seconds after its
        deletion, and as long again after each touch.

        The API server's CRD finalizer (apiextensions-apiserver pkg/controller/finalizer/crd_finalizer.go, k8s 1.35.4) can
        drop a CRD it has not finished. When a status write of its conflicts it returns without an error ("we'll get
        called again"), but its informer queues a CRD again only for a change outside the Terminating condition (managed
        fields included, whose times count whole seconds). Its first listing of a CRD's objects fails while their
        storage's cache is still being made (a CRD no request had reached: "storage is (re)initializing"); it records that
        in the Terminating condition alone, within the second of its previous write, and retries 5 ms later from its
        informer's copy, which a loaded server has not updated yet: the write conflicts and nothing calls the finalizer
        again until the informer's resync, 5 minutes on. Measured here: 1 deletion of Kueue's
        CRDs in 12, under load, took 299 s; a CI run's Task Governance add-on stayed DELETING for the 180 s it is given.
        A change to a CRD's metadata is one the finalizer is queued for; a CRD no longer being finalized ignores it.
        """
        self.wait_gone("CustomResourceDefinition", names, timeout, nudge=self._touch_crd)

    def _touch_crd(self, crd: dict) -> None:
        """Touch the deleted ``crd`` when it has waited ``CRD_NUDGE_INTERVAL`` seconds since its deletion or its last touch."""
        meta = crd["metadata"]
        if "deletionTimestamp" not in meta:
            return
        touched = float((meta.get("annotations") or {}).get(NUDGED_AT) or 0)
        if time.time() - max(touched, _epoch(meta["deletionTimestamp"])) < CRD_NUDGE_INTERVAL:
            return
        # The uid: this CRD, not one made since under its name.
        touch = {"metadata": {"uid": meta["uid"], "annotations": {NUDGED_AT: str(time.time())}}}
        try:
            self.request("PATCH", self.path("CustomResourceDefinition", meta["name"]), touch, "application/merge-patch+json")
        except KubeError as error:
            # Gone, or another CRD of its name: a uid that differs is an immutable field changed (422, ValidateObjectMetaUpdate).
            if error.status not in (404, 422):
                raise

    def wait_established(self, crd_name: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while True:
            crd = self.get("CustomResourceDefinition", crd_name) or {}
            # A CRD just made can have status.conditions null until the API server has looked at its names.
            conditions = {c["type"]: c["status"] for c in (crd.get("status") or {}).get("conditions") or []}
            if conditions.get("Established") == "True":
                return
            if time.monotonic() > deadline:
                raise KubeError(504, f"CustomResourceDefinition {crd_name} was not established within {timeout:.0f} s")
            time.sleep(0.1)


def _epoch(timestamp: str) -> float:
    """An RFC 3339 time as the API server writes it (``2026-12-07T01:38:24Z``), in seconds since the epoch."""
    return calendar.timegm(time.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ"))


_api: KubeApi | None = None


def connected() -> KubeApi | None:
    """The API server the sandbox's EKS clusters point at, or None when the sandbox runs without one."""
    global _api
    directory = os.environ.get("SANDBOX_KUBE_DIR")
    if not directory:
        return None
    if _api is None:
        _api = KubeApi(directory)
    return _api
