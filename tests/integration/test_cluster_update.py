"""site.yml changes an instance group's instance type in place and keeps what was set on its nodes outside the file.

AWS's "Update the cluster" guide for HyperPod (sagemaker-hyperpod-eks-operate-console-ui-edit-clusters, and
UpdateCluster's API reference) lets an instance group's instance type change in place. The sandbox keeps only what
an UpdateCluster request lists for a group (a member left out, KubernetesConfig or ImageId, is dropped), so the
labels and taints an operator put on the group survive only if the collection sends them again.
"""

from __future__ import annotations

import copy
import time

from tests.integration.playbook_runner import SAMPLE, assert_ok

GROUP, OLD, NEW = "g5-workers", "ml.g5.12xlarge", "ml.g5.24xlarge"
LABELS = {"pool": "shared-a10g"}
TAINTS = [{"Key": "gpu", "Value": "a10g", "Effect": "NoSchedule"}]


def wait_in_service(sagemaker, name: str) -> dict:
    for _attempt in range(300):
        cluster = sagemaker.describe_cluster(ClusterName=name)
        if cluster["ClusterStatus"] == "InService":
            return cluster
        time.sleep(0.1)
    raise AssertionError(f"cluster {name} is still {cluster['ClusterStatus']}")


def specification(group: dict) -> dict:
    """An UpdateCluster instance group from DescribeCluster's details, as an operator's script sends it."""
    spec = {key: group[key] for key in ("InstanceGroupName", "InstanceType", "LifeCycleConfig", "ExecutionRole", "ThreadsPerCore")}
    spec["InstanceCount"] = group["TargetCount"]
    for key in ("InstanceStorageConfigs", "OnStartDeepHealthChecks"):
        if group.get(key):
            spec[key] = group[key]
    return spec


def by_name(cluster: dict) -> dict:
    return {group["InstanceGroupName"]: group for group in cluster["InstanceGroups"]}


def test_an_instance_type_changes_in_place_and_the_groups_keep_their_labels_and_taints(sample):
    assert_ok(sample.run("site.yml", "--limit", "localhost"), "cluster")
    name = SAMPLE["hyperpod_cluster"]["name"]
    sagemaker = sample.client.boto3_client("sagemaker")
    built = wait_in_service(sagemaker, name)
    # An operator labels and taints the g5 group outside the cluster file.
    groups = []
    for group in built["InstanceGroups"]:
        spec = specification(group)
        if group["InstanceGroupName"] == GROUP:
            spec["KubernetesConfig"] = {"Labels": LABELS, "Taints": TAINTS}
        groups.append(spec)
    sagemaker.update_cluster(ClusterName=name, InstanceGroups=groups)
    wait_in_service(sagemaker, name)

    settings = copy.deepcopy(sample.settings)
    next(g for g in settings["hyperpod_cluster"]["instance_groups"] if g["name"] == GROUP)["instance_type"] = NEW
    for team in settings["hyperpod_teams"]:
        for resource in (team.get("quota") or {}).get("resources", []):
            if resource["instance_type"] == OLD:
                resource["instance_type"] = NEW
    sample.write_settings(settings)
    sample.client.clear_requests()
    assert_ok(sample.run("site.yml", "--limit", "localhost"), "site.yml with the new instance type")
    operations = [r["operation"] for r in sample.client.writes() if r["service"] == "sagemaker"]
    assert "UpdateCluster" in operations and not {"CreateCluster", "DeleteCluster"} & set(operations), operations

    updated = wait_in_service(sagemaker, name)
    assert updated["ClusterArn"] == built["ClusterArn"]
    group, other = by_name(updated)[GROUP], by_name(updated)["p5-workers"]
    assert group["InstanceType"] == NEW and group["TargetCount"] == by_name(built)[GROUP]["TargetCount"]
    assert group["KubernetesConfig"]["CurrentLabels"] == LABELS and group["KubernetesConfig"]["CurrentTaints"] == TAINTS
    assert {key: other[key] for key in ("InstanceType", "TargetCount", "ThreadsPerCore")} == {
        key: by_name(built)["p5-workers"][key] for key in ("InstanceType", "TargetCount", "ThreadsPerCore")}

    sample.client.clear_requests()
    rerun = sample.run("site.yml", "--limit", "localhost")
    assert_ok(rerun, "site.yml again")
    assert rerun.changed_tasks() == set()
    assert [r["operation"] for r in sample.client.writes()] == []
