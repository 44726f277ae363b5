"""The HyperPod cluster plan (plugins/module_utils/cluster.py): desired vs DescribeCluster, without AWS."""

from __future__ import annotations

import copy

import botocore.session
import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import cluster as cl
from ansible_collections.hyperpod.tenancy.plugins.module_utils import engine
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError

ROLE = "arn:aws:iam::123456789012:role/HyperPodClusterExecution"
OTHER_ROLE = "arn:aws:iam::123456789012:role/OtherRole"
EKS = "arn:aws:eks:us-east-1:123456789012:cluster/ml-shared-eks"
ARN = "arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdef123456"
LIFECYCLE = {"source_s3_uri": "s3://hyperpod-team-data/_hyperpod/lifecycle/", "on_create": "on_create.sh"}
SUBNETS = ["subnet-1", "subnet-2"]
GROUPS = ["sg-1"]
MODEL = botocore.session.get_session().get_service_model("sagemaker")


def option_group(name, instance_type, count, **extra):
    group = {
        "name": name, "instance_type": instance_type, "count": count, "execution_role": ROLE, "lifecycle_config": dict(LIFECYCLE),
        "threads_per_core": 1, "ebs_volume_size_gib": None, "training_plan_arn": None,
    }
    group.update(extra)
    return group


def params(**overrides):
    """The module's options for groups a (1 x g5) and b (2 x p5), as Ansible hands them over."""
    result = {
        "name": "ml-shared",
        "instance_groups": [option_group("a", "ml.g5.12xlarge", 1), option_group("b", "ml.p5.48xlarge", 2, ebs_volume_size_gib=500)],
        "subnet_ids": list(SUBNETS),
        "security_group_ids": list(GROUPS),
        "node_recovery": None,
        "tags": None,
    }
    result.update(overrides)
    return result


def described_group(name, instance_type, count, current=None, status="InService", **extra):
    group = {
        "InstanceGroupName": name, "InstanceType": instance_type, "TargetCount": count, "CurrentCount": count if current is None else current,
        "ExecutionRole": ROLE, "LifeCycleConfig": {"SourceS3Uri": LIFECYCLE["source_s3_uri"], "OnCreate": LIFECYCLE["on_create"]},
        "ThreadsPerCore": 1, "Status": status,
    }
    group.update(extra)
    return group


def described(groups=None, status="InService", **extra):
    """DescribeCluster for the cluster params() asks for."""
    description = {
        "ClusterArn": ARN, "ClusterName": "ml-shared", "ClusterStatus": status, "CreationTime": "2026-01-01T00:00:00Z",
        "InstanceGroups": groups if groups is not None else [
            described_group("a", "ml.g5.12xlarge", 1),
            described_group("b", "ml.p5.48xlarge", 2, InstanceStorageConfigs=[{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}]),
        ],
        "VpcConfig": {"Subnets": list(SUBNETS), "SecurityGroupIds": list(GROUPS)},
        "Orchestrator": {"Eks": {"ClusterArn": EKS}},
        "NodeRecovery": "Automatic",
    }
    description.update(extra)
    return description


def with_group(index, **changes):
    groups = params()["instance_groups"]
    groups[index].update(changes)
    return {"instance_groups": groups}


def plan(option_changes=None, description="default", tags=None, eks=EKS, **flags):
    desired = cl.normalize_desired(params(**(option_changes or {})), eks)
    return cl.plan_cluster(desired, described() if description == "default" else description, tags or {}, **flags)


TAINT = {"Key": "gpu", "Value": "yes", "Effect": "NoSchedule"}
# Group a as DescribeCluster shows it with labels, taints, an AMI, patching and a minimum set outside the module.
LABELLED_A = described_group(
    "a", "ml.g5.12xlarge", 1, DesiredImageId="ami-0123456789abcdef0", CurrentImageId="ami-0123456789abcdef0",
    KubernetesConfig={"CurrentLabels": {"tier": "gpu"}, "DesiredLabels": {"tier": "gpu"}, "CurrentTaints": [TAINT], "DesiredTaints": [TAINT]},
    AutoPatchConfig={"PatchingStrategy": "WhenIdle"}, MinCount=1,
)
EBS_B = described_group("b", "ml.p5.48xlarge", 2, InstanceStorageConfigs=[{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}])

# (id, option changes, description, flags, action, expected request members, expected text in refusals/changes)
PLANS = [
    ("unchanged", {}, "default", {}, "none", {}, ""),
    ("missing cluster is created", {}, None, {}, "create", {"ClusterName": "ml-shared", "Orchestrator": {"Eks": {"ClusterArn": EKS}}}, "create cluster"),
    ("count grows", with_group(0, count=3), "default", {}, "update",
     {"InstanceGroups.a.InstanceCount": 3, "InstanceGroups.b.InstanceCount": 2}, "count: 1 -> 3"),
    ("count shrinks", with_group(1, count=1), "default", {}, "update", {"InstanceGroups.b.InstanceCount": 1}, "count: 2 -> 1"),
    ("lifecycle changes in place", with_group(0, lifecycle_config={"source_s3_uri": "s3://other/lc/", "on_create": "go.sh"}), "default", {}, "update",
     {"InstanceGroups.a.LifeCycleConfig": {"SourceS3Uri": "s3://other/lc/", "OnCreate": "go.sh"}}, "lifecycle_config"),
    ("new group is added", {"instance_groups": params()["instance_groups"] + [option_group("c", "ml.g6e.12xlarge", 1, ebs_volume_size_gib=100)]},
     "default", {}, "update", {"InstanceGroups.c.InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": 100}}]}, "instance_groups[c]: add"),
    ("node recovery changes", {"node_recovery": "none"}, "default", {}, "update", {"NodeRecovery": "None"}, "node_recovery: automatic -> none"),
    ("node recovery unset is left alone", {"node_recovery": None}, described(NodeRecovery="None"), {}, "none", {}, ""),
    ("instance type changes in place", with_group(0, instance_type="ml.p4d.24xlarge"), "default", {}, "update",
     {"InstanceGroups.a.InstanceType": "ml.p4d.24xlarge", "InstanceGroups.b.InstanceType": "ml.p5.48xlarge"},
     "instance_groups[a].instance_type: ml.g5.12xlarge -> ml.p4d.24xlarge"),
    ("instance type with allow_replacement still changes in place", with_group(0, instance_type="ml.p4d.24xlarge"), "default", {"allow_replacement": True},
     "update", {"InstanceGroups.a.InstanceType": "ml.p4d.24xlarge"}, "instance_groups[a].instance_type"),
    ("labels, taints, image and patching set outside are sent again", with_group(0, count=2), described(groups=[LABELLED_A, EBS_B]), {}, "update",
     {"InstanceGroups.a.KubernetesConfig": {"Labels": {"tier": "gpu"}, "Taints": [TAINT]},
      "InstanceGroups.a.ImageId": "ami-0123456789abcdef0", "InstanceGroups.a.MinInstanceCount": 1, "InstanceGroups.b.KubernetesConfig": None},
     "count: 1 -> 2"),
    ("execution role is fixed", with_group(1, execution_role=OTHER_ROLE), "default", {}, "refuse", {}, "instance_groups[b].execution_role"),
    ("threads per core are fixed", with_group(0, threads_per_core=2), "default", {}, "refuse", {}, "instance_groups[a].threads_per_core"),
    ("ebs size is fixed", with_group(1, ebs_volume_size_gib=1000), "default", {}, "refuse", {}, "instance_groups[b].ebs_volume_size_gib"),
    ("ebs unset is left alone", with_group(1, ebs_volume_size_gib=None), "default", {}, "none", {}, ""),
    ("eks cluster is fixed", {}, described(Orchestrator={"Eks": {"ClusterArn": EKS.replace("ml-shared-eks", "other")}}), {}, "refuse", {},
     "eks_cluster: the orchestrator"),
    ("subnets are fixed", {"subnet_ids": ["subnet-3"]}, "default", {}, "refuse", {}, "subnet_ids: VpcConfig.Subnets cannot be changed in place"),
    ("security groups are fixed", {"security_group_ids": ["sg-9"]}, "default", {}, "refuse", {}, "security_group_ids: VpcConfig.SecurityGroupIds"),
    ("subnet order does not matter", {"subnet_ids": list(reversed(SUBNETS))}, "default", {}, "none", {}, ""),
    ("removing a populated group is refused", {"instance_groups": params()["instance_groups"][:1]}, "default", {}, "refuse", {},
     "removing instance group b would delete 2 nodes of b; set allow_instance_group_removal: true"),
    ("removing a populated group with the flag", {"instance_groups": params()["instance_groups"][:1]}, "default", {"allow_instance_group_removal": True},
     "update", {"InstanceGroupsToDelete": ["b"]}, "instance_groups[b]: remove"),
    ("removing an empty group needs no flag", {"instance_groups": params()["instance_groups"][:1]},
     described(groups=[described_group("a", "ml.g5.12xlarge", 1), described_group("b", "ml.p5.48xlarge", 0)]), {}, "update",
     {"InstanceGroupsToDelete": ["b"]}, "instance_groups[b]: remove"),
    ("a group being deleted is already gone", {"instance_groups": params()["instance_groups"][:1]},
     described(groups=[described_group("a", "ml.g5.12xlarge", 1), described_group("b", "ml.p5.48xlarge", 2, status="Deleting")]), {}, "none", {}, ""),
    ("a failed cluster cannot be updated", {}, described(status="Failed", FailureMessage="lifecycle script failed"), {}, "refuse", {},
     "is Failed (lifecycle script failed)"),
    ("a failed cluster is recreated with allow_replacement", {}, described(status="Failed", FailureMessage="x"), {"allow_replacement": True}, "replace",
     {"ClusterName": "ml-shared"}, "Failed"),
    ("groups left unset are left alone", {"instance_groups": None}, "default", {}, "none", {}, ""),
    ("creating needs the network", {"subnet_ids": None}, None, {}, "refuse", {}, "subnet_ids: required to create cluster ml-shared"),
    ("duplicate group names", {"instance_groups": [option_group("a", "ml.g5.12xlarge", 1), option_group("a", "ml.g5.12xlarge", 2)]}, "default", {},
     "refuse", {}, "repeated: a"),
]


APPLIED = [p for p in PLANS if p[4] != "refuse"]


def member(request, dotted):
    """``InstanceGroups.<name>.<Member>`` or a top-level member of a request."""
    parts = dotted.split(".")
    if parts[0] == "InstanceGroups" and len(parts) == 3:
        group = next(g for g in request["InstanceGroups"] if g["InstanceGroupName"] == parts[1])
        return group.get(parts[2])
    return request.get(dotted)


@pytest.mark.parametrize("case, changes, description, flags, action, members, text", PLANS, ids=[p[0] for p in PLANS])
def test_plan_table(case, changes, description, flags, action, members, text):
    result = plan(changes, description, **flags)
    assert result.action == action, (result.refusals, result.changes)
    for dotted, value in members.items():
        assert member(result.request, dotted) == value, dotted
    if action == "refuse":
        assert text in "; ".join(result.refusals)
        assert result.request is None
    elif text:
        assert text in "; ".join(result.changes + result.warnings)
    if action == "replace":
        assert "Replacing cluster ml-shared" in result.warnings[0]
    assert result.changed == (action in ("create", "update", "replace"))


def test_update_request_sends_every_remaining_group_and_keeps_unmanaged_members():
    description = described()
    description["InstanceGroups"][1]["OnStartDeepHealthChecks"] = ["InstanceStress"]
    result = plan(with_group(0, count=3), description)
    assert [g["InstanceGroupName"] for g in result.request["InstanceGroups"]] == ["a", "b"]
    b = member(result.request, "InstanceGroups.b.OnStartDeepHealthChecks")
    assert b == ["InstanceStress"]
    assert member(result.request, "InstanceGroups.b.InstanceStorageConfigs") == [{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}]
    assert "NodeRecovery" not in result.request and "InstanceGroupsToDelete" not in result.request


@pytest.mark.parametrize("case, changes, description, flags, action, members, text", APPLIED, ids=[p[0] for p in APPLIED])
def test_requests_satisfy_botocore_model(case, changes, description, flags, action, members, text):
    result = plan(changes, description, **flags)
    if result.request is not None:
        operation = "UpdateCluster" if action == "update" else "CreateCluster"
        assert cl.request_problems(MODEL, operation, result.request) == []


@pytest.mark.parametrize("case, changes, description, flags, action, members, text", APPLIED, ids=[p[0] for p in APPLIED])
def test_check_mode_prediction_reads_back_as_the_planned_after(case, changes, description, flags, action, members, text):
    """What check mode returns as ``cluster``, normalized, is the ``after`` it reports in the diff."""
    description = described() if description == "default" else description
    result = plan(changes, description, **flags)
    predicted = cl.predicted_description(result.after, description, action)
    assert cl.normalize_current(predicted, result.after["tags"]) == result.after


def test_request_problems_name_what_aws_would_reject():
    desired = cl.normalize_desired(params(instance_groups=[option_group("bad_name", "ml.bogus.4xlarge", 7000, execution_role="arn:nope")]), EKS)
    problems = cl.request_problems(MODEL, "CreateCluster", cl.create_request(cl.created_after(desired)))
    text = "; ".join(problems)
    assert "InstanceGroups[0].InstanceType: 'ml.bogus.4xlarge' is not a valid ClusterInstanceType" in text
    assert "InstanceGroups[0].InstanceGroupName: 'bad_name' does not match" in text
    assert "InstanceGroups[0].InstanceCount: 7000 must be between 0 and 6758" in text
    assert "InstanceGroups[0].ExecutionRole: 'arn:nope'" in text


@pytest.mark.parametrize(
    "desired_tags, purge, add, remove, after",
    [
        (None, True, {}, [], {"team": "platform", "extra": "x"}),
        ({"team": "ml"}, True, {"team": "ml"}, ["extra"], {"team": "ml"}),
        ({"team": "ml"}, False, {"team": "ml"}, [], {"team": "ml", "extra": "x"}),
        ({"team": "platform", "extra": "x"}, True, {}, [], {"team": "platform", "extra": "x"}),
    ],
)
def test_tags_are_planned_with_compare_aws_tags(desired_tags, purge, add, remove, after):
    result = plan({"tags": desired_tags}, tags={"team": "platform", "extra": "x"}, purge_tags=purge)
    assert result.action == "none"
    assert (result.tags_to_add, sorted(result.tags_to_remove)) == (add, remove)
    assert result.after["tags"] == after
    assert result.changed == bool(add or remove)


def test_create_prediction_fills_aws_defaults():
    result = plan({"tags": {"team": "platform"}}, None)
    assert result.after["node_recovery"] == "automatic"
    assert result.request["Tags"] == [{"Key": "team", "Value": "platform"}]
    # Sent explicitly, so what check mode predicts does not rest on AWS's default.
    assert result.request["NodeRecovery"] == "Automatic"
    assert [g["ThreadsPerCore"] for g in result.request["InstanceGroups"]] == [1, 1]


class RecordingClient:
    """Answers the reads ensure_present makes; any other call is recorded and fails the test."""

    def __init__(self, description, tags=None):
        self.description = description
        self.tags = tags or []
        self.calls = []
        self.meta = type("Meta", (), {"service_model": MODEL})()

    def describe_cluster(self, ClusterName):
        self.calls.append("DescribeCluster")
        return copy.deepcopy(self.description)

    def get_paginator(self, name):
        assert name == "list_tags", "unexpected paginator %s" % name
        client = self

        class Pages:
            def paginate(self, ResourceArn):
                client.calls.append("ListTags")
                return self

            def build_full_result(self):
                return {"Tags": list(client.tags)}

        return Pages()

    def __getattr__(self, name):
        raise AssertionError("unexpected call %s" % name)


def converge(client, state="present", check_mode=False, wait=True, **overrides):
    """The engine's converge of the cluster ``params(**overrides)`` names: its Outcome and the warnings given."""
    options = dict(params(**overrides), state=state, wait=wait, wait_timeout=60, allow_replacement=False, allow_instance_group_removal=False, purge_tags=True)
    warnings = []
    wanted = cl.normalize_desired(options, EKS) if state == "present" else None
    outcome = engine.converge(cl.Cluster(client, options, check_mode, warnings.append, wanted), state, check_mode)
    return outcome, warnings


def test_check_mode_makes_no_write_and_predicts_the_update():
    client = RecordingClient(described())
    (changed, before, after, cluster), warnings = converge(client, check_mode=True, **with_group(0, count=4))
    assert changed
    assert set(client.calls) == {"DescribeCluster", "ListTags"}
    assert [g["count"] for g in before["instance_groups"]] == [1, 2]
    assert [g["count"] for g in after["instance_groups"]] == [4, 2]
    assert [(g["instance_group_name"], g["target_count"], g["current_count"]) for g in cluster["instance_groups"]] == [("a", 4, 4), ("b", 2, 2)]
    assert cluster["cluster_arn"] == ARN
    assert warnings == []


def test_refusal_raises_input_error_before_any_write():
    client = RecordingClient(described())
    with pytest.raises(InputError) as excinfo:
        converge(client, **with_group(0, execution_role=OTHER_ROLE))
    assert "instance_groups[a].execution_role" in excinfo.value.message
    assert set(client.calls) == {"DescribeCluster", "ListTags"}


def test_update_while_updating_without_wait_is_refused_before_any_write():
    client = RecordingClient(described(status="Updating"))
    with pytest.raises(InputError) as excinfo:
        converge(client, wait=False, **with_group(0, count=4))
    assert "while it is Updating" in excinfo.value.message


@pytest.mark.parametrize("check_mode", [False, True])
def test_a_cluster_being_deleted_is_left_to_go_and_nothing_is_deleted_again(check_mode):
    client = RecordingClient(described(status="Deleting"))
    (changed, before, after, cluster), _warnings = converge(client, state="absent", check_mode=check_mode, wait=False)
    assert (changed, after, cluster) == (False, {}, {})
    assert [g["count"] for g in before["instance_groups"]] == [1, 2]
    assert set(client.calls) == {"DescribeCluster", "ListTags"}


def test_model_problems_are_reported_with_the_group_name():
    request = {"InstanceGroups": [{"InstanceGroupName": "gpu"}, {"InstanceGroupName": "cpu"}]}
    problem = "CreateCluster.InstanceGroups[1].InstanceType: 'ml.bogus' is not a valid ClusterInstanceType"
    assert cl.option_path(problem, "CreateCluster", request) == "instance_groups[cpu].InstanceType: 'ml.bogus' is not a valid ClusterInstanceType"
    assert cl.option_path("UpdateCluster.NodeRecovery: 'x' is not a valid ClusterNodeRecovery", "UpdateCluster", request) == (
        "NodeRecovery: 'x' is not a valid ClusterNodeRecovery"
    )


@pytest.mark.parametrize("state", ["present", "absent"])
def test_a_name_aws_rejects_fails_before_any_call(state):
    client = RecordingClient(None)
    with pytest.raises(InputError) as excinfo:
        converge(client, state=state, name="bad_name")
    assert excinfo.value.message.startswith("name: ClusterName: 'bad_name' does not match")
    assert client.calls == []
