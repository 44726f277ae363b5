"""scheduler_policy: input checks and options <-> API shape without AWS; the manager against the sandbox."""

from __future__ import annotations

import time

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import engine
from ansible_collections.hyperpod.tenancy.plugins.module_utils import scheduler_policy as sp
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import ConflictError, HyperPodError, InputError
from ansible_collections.hyperpod.tenancy.plugins.modules import task_governance_policy

from sandbox.kube import task_governance
from tests.unit.plugins.module_utils.module_params import module_params

ADDON = sp.TASK_GOVERNANCE_ADDON
TRUST = '{"Version": "2012-10-17", "Statement": []}'


def converge(client, module_params_, check_mode=False, warn=None):
    """The engine's run of the module's resource by its ``state``: (changed, before, after, config)."""
    manager = sp.SchedulerPolicyManager(client, module_params_, check_mode, warn)
    return engine.converge(manager, module_params_["state"], check_mode)


def params(**overrides):
    return module_params(task_governance_policy.MODULE_OPTIONS, **dict({"cluster": "ml-shared", "wait_timeout": 30}, **overrides))


# ---------------------------------------------------------------- pure functions


def test_policy_name_is_derived_from_the_cluster():
    assert sp.policy_name("ml-shared") == "ml-shared-scheduler"


@pytest.mark.parametrize(
    "overrides, expected",
    [
        ({"priority_classes": [{"name": "c%d" % i, "weight": 1} for i in range(11)]}, ["priority_classes: at most 10 priority classes, got 11"]),
        ({"priority_classes": [{"name": "Training_Jobs", "weight": 1}]}, ["priority_classes[0].name: 'Training_Jobs' must be lower-case"]),
        ({"priority_classes": [{"name": "-training", "weight": 1}]}, ["priority_classes[0].name: '-training' must be lower-case"]),
        ({"priority_classes": [{"name": "a" * 41, "weight": 1}]}, ["priority_classes[0].name: '%s' must be lower-case" % ("a" * 41)]),
        ({"priority_classes": [{"name": "train", "weight": 101}]}, ["priority_classes[0].weight: 101 is outside 0..100"]),
        ({"priority_classes": [{"name": "train", "weight": -1}]}, ["priority_classes[0].weight: -1 is outside 0..100"]),
        (
            {"priority_classes": [{"name": "train", "weight": 1}, {"name": "train", "weight": 2}]},
            ["priority_classes[1].name: train is listed twice"],
        ),
        ({"name": "bad_name"}, ["name: 'bad_name' must be letters, digits and inner hyphens"]),
        ({"description": "bell\x07"}, ["description: control characters are not allowed"]),
        ({"description": "x" * 1025}, ["description: longer than 1024 characters"]),
    ],
)
def test_input_problems(overrides, expected):
    problems = sp.input_problems(params(**overrides))
    assert len(problems) == len(expected)
    for problem, start in zip(problems, expected, strict=True):
        assert problem.startswith(start)


def test_input_problems_accepts_the_team_file_example():
    classes = [{"name": "inference", "weight": 100}, {"name": "training", "weight": 50}, {"name": "a" * 40, "weight": 0}]
    assert sp.input_problems(params(priority_classes=classes, fair_share=True, description="Política: inferencia primero.")) == []


def test_absent_ignores_settings_problems():
    assert sp.input_problems(params(state="absent", priority_classes=[{"name": "Bad", "weight": 1}])) == []


def test_desired_settings_leaves_unset_options_alone():
    current = sp.current_settings({
        "SchedulerConfig": {"PriorityClasses": [{"Name": "training", "Weight": 50}], "FairShare": "Enabled", "IdleResourceSharing": "Enabled"},
        "Description": "kept",
    })
    desired = sp.desired_settings(params(fair_share=False), current)
    assert desired == {
        "SchedulerConfig": {"PriorityClasses": [{"Name": "training", "Weight": 50}], "FairShare": "Disabled", "IdleResourceSharing": "Enabled"},
        "Description": "kept",
    }


def test_priority_class_order_does_not_matter():
    current = sp.current_settings({"SchedulerConfig": {"PriorityClasses": [{"Name": "b", "Weight": 1}, {"Name": "a", "Weight": 2}]}})
    desired = sp.desired_settings(params(priority_classes=[{"name": "a", "weight": 2}, {"name": "b", "weight": 1}]), current)
    assert desired == current


def test_new_config_sends_only_what_is_set():
    assert sp.desired_settings(params(idle_resource_sharing=True)) == {"SchedulerConfig": {"PriorityClasses": [], "IdleResourceSharing": "Enabled"}}


def test_comparable_is_snake_case():
    settings = {"SchedulerConfig": {"PriorityClasses": [{"Name": "a", "Weight": 2}], "FairShare": "Enabled"}}
    assert sp.comparable(settings, "p", "arn") == {
        "scheduler_config": {"priority_classes": [{"name": "a", "weight": 2}], "fair_share": "Enabled"},
        "name": "p",
        "cluster_arn": "arn",
    }
    assert sp.comparable(None) == {}


# ---------------------------------------------------------------- the manager, against the sandbox


def _wait_addon(eks, cluster):
    # ACTIVE once Kueue is installed in the API server, which a loaded machine takes its time for.
    deadline = time.monotonic() + task_governance.ADDON_WORK_TIMEOUT
    while eks.describe_addon(clusterName=cluster, addonName=ADDON)["addon"]["status"] != "ACTIVE":
        assert time.monotonic() < deadline
        time.sleep(0.05)


@pytest.fixture
def cluster(sandbox):
    """(sagemaker client, eks client, HyperPod cluster) with the add-on ACTIVE."""
    eks = sandbox.boto3_client("eks")
    sm = sandbox.boto3_client("sagemaker")
    role = sandbox.boto3_client("iam").create_role(RoleName="exec", AssumeRolePolicyDocument=TRUST)["Role"]["Arn"]
    eks_arn = eks.create_cluster(name="ml-eks", roleArn="arn:aws:iam::123456789012:role/eks", resourcesVpcConfig={"subnetIds": ["s"]})["cluster"]["arn"]
    eks.create_addon(clusterName="ml-eks", addonName=ADDON)
    _wait_addon(eks, "ml-eks")
    s3 = sandbox.boto3_client("s3")
    s3.create_bucket(Bucket="bucket")
    s3.put_object(Bucket="bucket", Key="lifecycle/on_create.sh", Body=b"#!/bin/bash\n")
    sm.create_cluster(
        ClusterName="ml-shared",
        InstanceGroups=[{
            "InstanceGroupName": "workers", "InstanceType": "ml.g5.12xlarge", "InstanceCount": 1, "ExecutionRole": role,
            "ThreadsPerCore": 1, "LifeCycleConfig": {"SourceS3Uri": "s3://bucket/lifecycle/", "OnCreate": "on_create.sh"},
        }],
        Orchestrator={"Eks": {"ClusterArn": eks_arn}},
    )
    deadline = time.monotonic() + 10
    while sm.describe_cluster(ClusterName="ml-shared")["ClusterStatus"] != "InService":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return sm, eks, sm.describe_cluster(ClusterName="ml-shared")


CLASSES = [{"name": "inference", "weight": 100}, {"name": "training", "weight": 50}]


def test_create_then_no_change(cluster, sandbox):
    sm, _eks, described = cluster
    changed, before, after, config = converge(sm, params(priority_classes=CLASSES, fair_share=True))
    assert changed and before == {}
    assert config["name"] == "ml-shared-scheduler" and config["status"] == "Created"
    assert after["cluster_arn"] == described["ClusterArn"]
    sandbox.clear_requests()
    changed, before, after, again = converge(sm, params(priority_classes=list(reversed(CLASSES))))
    assert not changed and before == after and again == config
    assert sandbox.writes() == []


def test_check_mode_predicts_without_writing(cluster, sandbox):
    sm = cluster[0]
    sandbox.clear_requests()
    changed, _before, after, config = converge(sm, params(priority_classes=CLASSES), check_mode=True)
    assert changed and config["status"] == "Created"
    assert sandbox.writes() == []
    _c, _b, real_after, _config = converge(sm, params(priority_classes=CLASSES))
    assert after == real_after


def test_bad_input_makes_no_call(cluster, sandbox):
    sandbox.clear_requests()
    with pytest.raises(InputError) as excinfo:
        converge(cluster[0], params(priority_classes=[{"name": "x%d" % i, "weight": 1} for i in range(11)]))
    assert "at most 10 priority classes" in excinfo.value.message
    assert sandbox.requests() == []


def test_missing_cluster_is_an_input_error(sandbox):
    with pytest.raises(InputError):
        converge(sandbox.boto3_client("sagemaker"), params(cluster="nowhere"))
    assert converge(sandbox.boto3_client("sagemaker"), params(cluster="nowhere", state="absent"))[0] is False


class InterleavingClient:
    """A SageMaker client that lets another writer update the config just before each of our updates."""

    def __init__(self, client, other_writes):
        self._client = client
        self._other_writes = list(other_writes)

    def __getattr__(self, name):
        return getattr(self._client, name)

    def update_cluster_scheduler_config(self, **request):
        if self._other_writes:
            config_id = request["ClusterSchedulerConfigId"]
            current = self._client.describe_cluster_scheduler_config(ClusterSchedulerConfigId=config_id)
            self._client.update_cluster_scheduler_config(
                ClusterSchedulerConfigId=config_id, TargetVersion=current["ClusterSchedulerConfigVersion"], Description=self._other_writes.pop(0)
            )
            deadline = time.monotonic() + 10
            while self._client.describe_cluster_scheduler_config(ClusterSchedulerConfigId=config_id)["Status"] != "Updated":
                assert time.monotonic() < deadline
                time.sleep(0.05)
        return self._client.update_cluster_scheduler_config(**request)


def test_conflict_is_read_again_and_retried_once(cluster):
    sm = cluster[0]
    converge(sm, params(priority_classes=CLASSES, fair_share=True))
    racing = InterleavingClient(sm, ["changed by another writer"])
    changed, _before, _after, config = converge(racing, params(fair_share=False))
    assert changed
    assert config["scheduler_config"]["fair_share"] == "Disabled"
    # The other writer's change was kept: the retry applied ours on top of it.
    assert config["description"] == "changed by another writer"
    assert config["cluster_scheduler_config_version"] == 3


def test_second_conflict_fails(cluster):
    sm = cluster[0]
    converge(sm, params(priority_classes=CLASSES))
    racing = InterleavingClient(sm, ["first", "second"])
    with pytest.raises(ConflictError):
        converge(racing, params(fair_share=False))


def test_create_failed_is_deleted_and_created_again(cluster):
    sm, eks, _described = cluster
    eks.delete_addon(clusterName="ml-eks", addonName=ADDON)
    # DELETING lasts until the API server dropped Kueue's CRDs, which a loaded machine takes its time for.
    deadline = time.monotonic() + task_governance.ADDON_WORK_TIMEOUT
    while eks.list_addons(clusterName="ml-eks")["addons"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    with pytest.raises(HyperPodError) as excinfo:
        converge(sm, params(priority_classes=CLASSES))
    assert "CreateFailed" in excinfo.value.message and ADDON in excinfo.value.message
    failed_id = sm.list_cluster_scheduler_configs()["ClusterSchedulerConfigSummaries"][0]["ClusterSchedulerConfigId"]
    eks.create_addon(clusterName="ml-eks", addonName=ADDON)
    _wait_addon(eks, "ml-eks")
    warnings = []
    changed, before, _after, config = converge(sm, params(priority_classes=CLASSES), warn=warnings.append)
    assert changed and config["status"] == "Created"
    assert config["cluster_scheduler_config_id"] != failed_id
    assert before["name"] == "ml-shared-scheduler" and before["status"] == "CreateFailed"
    assert ADDON in before["failure_reason"]
    assert len(warnings) == 1 and "CreateFailed" in warnings[0]


def test_renaming_is_refused_before_any_write(cluster, sandbox):
    sm = cluster[0]
    converge(sm, params(priority_classes=CLASSES))
    sandbox.clear_requests()
    with pytest.raises(InputError) as excinfo:
        converge(sm, params(name="other-name"))
    assert "ml-shared-scheduler" in excinfo.value.message
    assert sandbox.writes() == []


def test_absent_deletes_and_is_then_unchanged(cluster):
    sm = cluster[0]
    converge(sm, params(priority_classes=CLASSES))
    changed, before, after, config = converge(sm, params(state="absent"))
    assert changed and before["name"] == "ml-shared-scheduler" and after == {} and config == {}
    assert [s["Status"] for s in sm.list_cluster_scheduler_configs()["ClusterSchedulerConfigSummaries"]] == ["Deleted"]
    assert converge(sm, params(state="absent"))[0] is False
