"""team_namespace's converge against the worker's real kube-apiserver: the four steps, ownership, removal."""

from __future__ import annotations

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import team_namespace
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError

from sandbox.kube.api import KubeApi

TEAM = "vision"
NAMESPACE = "hyperpod-ns-vision"
VOLUME = {
    "file_system_id": "fs-0123456789abcdef0", "directory": None, "capacity_gib": 1200,
    "dns_name": "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com", "mount_name": "abcdefgh",
}  # fmt: skip


class Context:
    def __init__(self, check_mode):
        self.check_mode = check_mode

    def client(self, service):
        raise AssertionError(f"no AWS call expected, asked for {service}")


def params(kube_cluster, **changes):
    base = {
        "team": TEAM, "name_prefix": "hyperpod", "state": "present", "kubeconfig": str(kube_cluster.kubeconfig),
        "context": None, "pod_security": "baseline", "volume": dict(VOLUME),
    }  # fmt: skip
    return base | changes


def writes(kube_cluster, since):
    """Requests that changed the cluster (not dry runs, not reads) since an audit-log mark."""
    return [
        (e["verb"], e["objectRef"].get("resource"), e["objectRef"].get("name"))
        for e in kube_cluster.audit_events(since)
        if e["stage"] == "ResponseComplete" and e["verb"] in ("create", "update", "patch", "delete") and "dryRun" not in e["requestURI"]
    ]


@pytest.fixture
def api(sandbox, kube_cluster):
    """An emptied cluster with the namespace Task Governance made for the team."""
    api = KubeApi(kube_cluster.directory)
    labels = {"sagemaker.amazonaws.com/sagemaker-managed-queue": "true", "sagemaker.amazonaws.com/quota-allocation-id": TEAM}
    api.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE, "labels": labels}}, "sagemaker-taskgovernance")
    return api


def test_check_run_check_run(api, kube_cluster):
    mark = len(kube_cluster.audit_events())
    predicted = team_namespace.converge(Context(True), params(kube_cluster))
    assert predicted["changed"] is True
    assert writes(kube_cluster, mark) == []
    assert api.get("Namespace", NAMESPACE)["metadata"]["labels"].get("pod-security.kubernetes.io/enforce") is None

    done = team_namespace.converge(Context(False), params(kube_cluster))
    assert done["changed"] is True
    # What the dry run predicted is what the apply made.
    assert predicted["diff"]["after"].keys() == done["diff"]["after"].keys()
    for key, after in done["diff"]["after"].items():
        assert predicted["diff"]["after"][key]["spec" if "spec" in after else "metadata"] == after["spec" if "spec" in after else "metadata"], key
    labels = api.get("Namespace", NAMESPACE)["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "baseline"
    assert labels["sagemaker.amazonaws.com/quota-allocation-id"] == TEAM  # Task Governance's label stays
    assert done["namespace"]["service_account"] == "hyperpod-vision"
    assert done["namespace"]["volume"] == "hyperpod-vision-fsx"

    mark = len(kube_cluster.audit_events())
    assert team_namespace.converge(Context(True), params(kube_cluster))["changed"] is False
    assert team_namespace.converge(Context(False), params(kube_cluster))["changed"] is False
    assert writes(kube_cluster, mark) == []


def test_restricted_is_a_change_of_one_label(api, kube_cluster):
    team_namespace.converge(Context(False), params(kube_cluster))
    result = team_namespace.converge(Context(False), params(kube_cluster, pod_security="restricted"))
    assert result["changed"] is True
    changed = [key for key in result["diff"]["after"] if result["diff"]["before"][key] != result["diff"]["after"][key]]
    assert changed == [f"Namespace/{NAMESPACE}"]
    assert api.get("Namespace", NAMESPACE)["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


def test_an_object_the_collection_did_not_make_is_refused(api, kube_cluster):
    foreign = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "hyperpod-vision"}}
    api.request("POST", f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts", foreign)
    mark = len(kube_cluster.audit_events())
    with pytest.raises(InputError, match=r"ServiceAccount/hyperpod-ns-vision/hyperpod-vision exists and was not made by hyperpod.tenancy"):
        team_namespace.converge(Context(False), params(kube_cluster))
    assert writes(kube_cluster, mark) == []


def test_a_namespace_task_governance_did_not_make_for_the_team_is_refused(api, kube_cluster):
    other = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE, "labels": {"sagemaker.amazonaws.com/quota-allocation-id": "nlp"}}}
    api.apply(other, "sagemaker-taskgovernance")
    with pytest.raises(InputError, match="team 'vision': namespace hyperpod-ns-vision is not Task Governance's namespace for this team"):
        team_namespace.converge(Context(False), params(kube_cluster))


def test_without_the_namespace_check_mode_predicts_and_a_run_fails(sandbox, kube_cluster):
    predicted = team_namespace.converge(Context(True), params(kube_cluster))
    assert predicted["changed"] is True
    assert all(before is None for before in predicted["diff"]["before"].values())
    with pytest.raises(InputError, match="namespace hyperpod-ns-vision does not exist; the team's compute quota makes it"):
        team_namespace.converge(Context(False), params(kube_cluster))


def test_absent_removes_what_it_made_and_gives_up_its_labels(api, kube_cluster):
    team_namespace.converge(Context(False), params(kube_cluster))
    removal = params(kube_cluster, state="absent", volume=None)

    predicted = team_namespace.converge(Context(True), removal)
    assert predicted["changed"] is True
    # Check mode deleted nothing: nothing is even marked for deletion.
    volume = api.get("PersistentVolume", "hyperpod-vision-fsx")
    claim = api.request("GET", f"/api/v1/namespaces/{NAMESPACE}/persistentvolumeclaims/hyperpod-vision-fsx")
    assert "deletionTimestamp" not in volume["metadata"] and "deletionTimestamp" not in claim["metadata"]
    assert api.get("Namespace", NAMESPACE)["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "baseline"

    assert team_namespace.converge(Context(False), removal)["changed"] is True
    assert api.get("PersistentVolume", "hyperpod-vision-fsx") is None
    assert api.request("GET", f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts?labelSelector=hyperpod.tenancy%2Fteam%3Dvision")["items"] == []
    labels = api.get("Namespace", NAMESPACE)["metadata"]["labels"]
    assert not [label for label in labels if label.startswith("pod-security.kubernetes.io/")]
    assert labels["sagemaker.amazonaws.com/quota-allocation-id"] == TEAM
    assert team_namespace.converge(Context(False), removal)["changed"] is False


def test_the_volume_is_the_team_directory_reserved_for_the_team_claim():
    objects = {o["kind"]: o for o in team_namespace.desired(TEAM, "hyperpod", "baseline", dict(VOLUME, directory="vision"))}
    volume = objects["PersistentVolume"]["spec"]
    assert volume["csi"]["volumeAttributes"] == {"dnsname": VOLUME["dns_name"], "mountname": "abcdefgh/vision"}
    assert volume["claimRef"] == {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": NAMESPACE, "name": "hyperpod-vision-fsx"}
    assert volume["persistentVolumeReclaimPolicy"] == "Retain"
    assert objects["PersistentVolumeClaim"]["spec"]["volumeName"] == "hyperpod-vision-fsx"
