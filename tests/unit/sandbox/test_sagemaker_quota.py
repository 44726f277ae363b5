"""The sandbox's SageMaker compute quotas, called through boto3 as the modules call them."""

from __future__ import annotations

import json
import time
import urllib.request
from datetime import UTC, datetime, timedelta

import pytest
from botocore.exceptions import ClientError, ParamValidationError

from tests.unit.sandbox.aws_errors import error_code, refused

# Plain moto names a cluster's ARN after the cluster; a name of 12 lower-case letters and
# digits keeps that ARN inside botocore's pattern (cluster/[a-z0-9]{12}) with or without
# the sandbox's cluster addition, which gives clusters AWS's id-based ARNs.
CLUSTER = "quotacluster"
OTHER_CLUSTER = "othercluster"
ROLE = "arn:aws:iam::123456789012:role/HyperPodClusterExecution"
TRUST = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}, "Action": "sts:AssumeRole"}]}


def create_cluster(sagemaker, name=CLUSTER, groups=(("ml.p5.48xlarge", 8), ("ml.g5.12xlarge", 6))):
    return sagemaker.create_cluster(
        ClusterName=name,
        InstanceGroups=[
            {
                "InstanceGroupName": f"group-{index}",
                "InstanceType": instance_type,
                "InstanceCount": count,
                "ExecutionRole": ROLE,
                "ThreadsPerCore": 1,
                "LifeCycleConfig": {"SourceS3Uri": "s3://sagemaker-lifecycle/scripts/", "OnCreate": "on_create.sh"},
            }
            for index, (instance_type, count) in enumerate(groups)
        ],
        VpcConfig={"SecurityGroupIds": ["sg-12345678"], "Subnets": ["subnet-12345678"]},
    )["ClusterArn"]


def quota_request(cluster_arn, team="vision", name=None, count=2, **extra):
    request = {
        "Name": name or f"hyperpod-{team}-quota",
        "ClusterArn": cluster_arn,
        "ComputeQuotaConfig": {"ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Count": count}]},
        "ComputeQuotaTarget": {"TeamName": team, "FairShareWeight": 10},
    }
    request.update(extra)
    return request


def settle(sagemaker, quota_id, timeout=5):
    deadline = time.monotonic() + timeout
    while True:
        try:
            quota = sagemaker.describe_compute_quota(ComputeQuotaId=quota_id)
        except ClientError as e:
            if e.response["Error"]["Code"] == "ResourceNotFound":
                return None
            raise
        if quota["Status"] not in ("Creating", "Updating", "Deleting") or time.monotonic() > deadline:
            return quota
        time.sleep(0.05)


@pytest.fixture
def sagemaker(sandbox):
    return sandbox.boto3_client("sagemaker")


@pytest.fixture
def cluster_arn(sandbox, sagemaker):
    sandbox.boto3_client("iam").create_role(RoleName=ROLE.rsplit("/", 1)[-1], AssumeRolePolicyDocument=json.dumps(TRUST))
    return create_cluster(sagemaker)


def test_create_then_describe_round_trip_with_documented_defaults(sagemaker, cluster_arn, statuses):
    statuses.hold()
    created = sagemaker.create_compute_quota(**quota_request(cluster_arn, Tags=[{"Key": "team", "Value": "vision"}]))
    assert created["ComputeQuotaArn"].endswith(":compute-quota/" + created["ComputeQuotaId"])

    quota = sagemaker.describe_compute_quota(ComputeQuotaId=created["ComputeQuotaId"])
    assert quota["Status"] == "Creating"
    assert quota["ComputeQuotaVersion"] == 1
    assert quota["Name"] == "hyperpod-vision-quota"
    assert quota["ClusterArn"] == cluster_arn
    assert quota["ComputeQuotaConfig"] == {
        "ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Count": 2}],
        "ResourceSharingConfig": {"Strategy": "LendAndBorrow", "BorrowLimit": 50},
        "PreemptTeamTasks": "LowerPriority",
    }
    assert quota["ComputeQuotaTarget"] == {"TeamName": "vision", "FairShareWeight": 10}
    assert quota["ActivationState"] == "Enabled"
    assert isinstance(quota["CreationTime"], datetime)
    statuses.settle()
    assert settle(sagemaker, created["ComputeQuotaId"])["Status"] == "Created"
    assert sagemaker.list_tags(ResourceArn=created["ComputeQuotaArn"])["Tags"] == [{"Key": "team", "Value": "vision"}]


def test_update_increments_version_and_keeps_old_versions(sagemaker, cluster_arn, statuses):
    quota_id = sagemaker.create_compute_quota(**quota_request(cluster_arn))["ComputeQuotaId"]
    settle(sagemaker, quota_id)
    statuses.hold()
    updated = sagemaker.update_compute_quota(
        ComputeQuotaId=quota_id,
        TargetVersion=1,
        ComputeQuotaConfig={
            "ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Count": 3}],
            "ResourceSharingConfig": {"Strategy": "Lend"},
        },
        ActivationState="Disabled",
    )
    assert updated["ComputeQuotaVersion"] == 2
    quota = sagemaker.describe_compute_quota(ComputeQuotaId=quota_id)
    assert quota["Status"] == "Updating"
    assert quota["ComputeQuotaConfig"]["ComputeQuotaResources"] == [{"InstanceType": "ml.p5.48xlarge", "Count": 3}]
    # The config is replaced as a whole: a Lend strategy has no borrow limit, preemption is back to its default.
    assert quota["ComputeQuotaConfig"]["ResourceSharingConfig"] == {"Strategy": "Lend"}
    assert quota["ComputeQuotaConfig"]["PreemptTeamTasks"] == "LowerPriority"
    assert quota["ActivationState"] == "Disabled"
    assert quota["ComputeQuotaTarget"] == {"TeamName": "vision", "FairShareWeight": 10}
    statuses.settle()
    assert settle(sagemaker, quota_id)["Status"] == "Updated"
    old = sagemaker.describe_compute_quota(ComputeQuotaId=quota_id, ComputeQuotaVersion=1)
    assert old["ComputeQuotaVersion"] == 1
    assert old["ComputeQuotaConfig"]["ComputeQuotaResources"][0]["Count"] == 2


def test_stale_target_version_is_a_conflict(sagemaker, cluster_arn):
    quota_id = sagemaker.create_compute_quota(**quota_request(cluster_arn))["ComputeQuotaId"]
    settle(sagemaker, quota_id)
    sagemaker.update_compute_quota(ComputeQuotaId=quota_id, TargetVersion=1, Description="first")
    settle(sagemaker, quota_id)
    assert refused(sagemaker.update_compute_quota, ComputeQuotaId=quota_id, TargetVersion=1, Description="second") == "ConflictException"
    assert sagemaker.describe_compute_quota(ComputeQuotaId=quota_id)["Description"] == "first"


def test_update_while_transitioning_is_a_conflict(statuses, sagemaker, cluster_arn):
    statuses.hold()
    quota_id = sagemaker.create_compute_quota(**quota_request(cluster_arn))["ComputeQuotaId"]
    assert refused(sagemaker.update_compute_quota, ComputeQuotaId=quota_id, TargetVersion=1, Description="too early") == "ConflictException"
    assert refused(sagemaker.delete_compute_quota, ComputeQuotaId=quota_id) == "ConflictException"


@pytest.mark.parametrize(
    "change",
    [
        {"name": "hyperpod-vision-quota", "team": "nlp"},  # same name on the same cluster
        {"name": "another-name", "team": "vision"},  # a second quota for the same team
    ],
)
def test_duplicates_on_the_same_cluster_are_conflicts(sagemaker, cluster_arn, change):
    sagemaker.create_compute_quota(**quota_request(cluster_arn))
    assert refused(sagemaker.create_compute_quota, **quota_request(cluster_arn, team=change["team"], name=change["name"])) == "ConflictException"


def test_same_name_and_team_on_another_cluster_is_allowed(sagemaker, cluster_arn):
    other = create_cluster(sagemaker, OTHER_CLUSTER)
    sagemaker.create_compute_quota(**quota_request(cluster_arn))
    assert sagemaker.create_compute_quota(**quota_request(other))["ComputeQuotaId"]


def test_updating_to_a_team_that_has_a_quota_is_a_conflict(sagemaker, cluster_arn):
    sagemaker.create_compute_quota(**quota_request(cluster_arn, team="vision"))
    quota_id = sagemaker.create_compute_quota(**quota_request(cluster_arn, team="nlp"))["ComputeQuotaId"]
    settle(sagemaker, quota_id)
    assert refused(sagemaker.update_compute_quota, ComputeQuotaId=quota_id, TargetVersion=1, ComputeQuotaTarget={"TeamName": "vision"}) == "ConflictException"


def test_unknown_cluster_is_resource_not_found(sagemaker, cluster_arn):
    missing = cluster_arn.rsplit("/", 1)[0] + "/abcdefabcdef"
    assert refused(sagemaker.create_compute_quota, **quota_request(missing)) == "ResourceNotFound"


@pytest.mark.parametrize("call", ["describe", "update", "delete", "describe_version"])
def test_unknown_quota_is_resource_not_found(sagemaker, cluster_arn, call):
    quota_id = sagemaker.create_compute_quota(**quota_request(cluster_arn))["ComputeQuotaId"]
    settle(sagemaker, quota_id)
    calls = {
        "describe": lambda: sagemaker.describe_compute_quota(ComputeQuotaId="abcdefabcdef"),
        "update": lambda: sagemaker.update_compute_quota(ComputeQuotaId="abcdefabcdef", TargetVersion=1),
        "delete": lambda: sagemaker.delete_compute_quota(ComputeQuotaId="abcdefabcdef"),
        "describe_version": lambda: sagemaker.describe_compute_quota(ComputeQuotaId=quota_id, ComputeQuotaVersion=7),
    }
    with pytest.raises(ClientError) as excinfo:
        calls[call]()
    assert error_code(excinfo) == "ResourceNotFound"


@pytest.mark.parametrize(
    "change, fragment",
    [
        ({"ComputeQuotaTarget": {"TeamName": "Vision_Team"}}, "computeQuotaTarget.teamName"),
        ({"ComputeQuotaTarget": {"TeamName": "vision", "FairShareWeight": 101}}, "computeQuotaTarget.fairShareWeight"),
        ({"Name": "bad_name"}, "name"),
        (
            {"ComputeQuotaConfig": {"ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Count": 1}],
                                    "ResourceSharingConfig": {"Strategy": "LendAndBorrow", "BorrowLimit": 10001}}},
            "computeQuotaConfig.resourceSharingConfig.borrowLimit",
        ),
        ({"ComputeQuotaConfig": {"ComputeQuotaResources": [{"InstanceType": "ml.x9.huge", "Count": 1}]}}, "instanceType"),
        ({"Description": "bell\x07"}, "description"),
        ({"Tags": [{"Key": "team#1", "Value": "vision"}]}, "tags.1.member.key"),
    ],
)
def test_requests_breaking_the_model_are_validation_errors(sagemaker, cluster_arn, change, fragment):
    request = quota_request(cluster_arn)
    request.update(change)
    with pytest.raises(ClientError) as excinfo:
        sagemaker.create_compute_quota(**request)
    assert error_code(excinfo) == "ValidationException"
    assert fragment in excinfo.value.response["Error"]["Message"]
    assert sagemaker.list_compute_quotas()["ComputeQuotaSummaries"] == []


def test_missing_target_version_is_refused(sagemaker, cluster_arn):
    with pytest.raises(ParamValidationError):
        sagemaker.update_compute_quota(ComputeQuotaId="abcdefabcdef")


def test_delete_goes_through_deleting_to_a_deleted_quota_that_stays_listed(statuses, sagemaker, cluster_arn):
    quota_id = sagemaker.create_compute_quota(**quota_request(cluster_arn))["ComputeQuotaId"]
    settle(sagemaker, quota_id)
    statuses.hold()
    sagemaker.delete_compute_quota(ComputeQuotaId=quota_id)
    assert sagemaker.describe_compute_quota(ComputeQuotaId=quota_id)["Status"] == "Deleting"
    assert [q["Status"] for q in sagemaker.list_compute_quotas()["ComputeQuotaSummaries"]] == ["Deleting"]
    with pytest.raises(ClientError) as excinfo:
        sagemaker.create_compute_quota(**quota_request(cluster_arn))
    assert error_code(excinfo) == "ConflictException"  # the name is taken until the deletion ends
    statuses.settle()
    assert settle(sagemaker, quota_id)["Status"] == "Deleted"
    assert [q["Status"] for q in sagemaker.list_compute_quotas(Status="Deleted")["ComputeQuotaSummaries"]] == ["Deleted"]
    for write in (lambda: sagemaker.delete_compute_quota(ComputeQuotaId=quota_id),
                  lambda: sagemaker.update_compute_quota(ComputeQuotaId=quota_id, TargetVersion=1, Description="x")):
        with pytest.raises(ClientError) as excinfo:
            write()
        assert error_code(excinfo) == "ResourceNotFound"
    # The team and the name are free again; the deleted quota stays listed beside the new one.
    new_id = sagemaker.create_compute_quota(**quota_request(cluster_arn))["ComputeQuotaId"]
    assert new_id != quota_id
    assert sorted(q["ComputeQuotaId"] for q in sagemaker.list_compute_quotas()["ComputeQuotaSummaries"]) == sorted([quota_id, new_id])


def test_list_filters_sorts_and_paginates(statuses, sagemaker, cluster_arn):
    statuses.hold()
    other = create_cluster(sagemaker, OTHER_CLUSTER)
    before = datetime.now(UTC) - timedelta(seconds=5)
    for team in ("alpha", "bravo", "charlie", "delta", "echo"):
        sagemaker.create_compute_quota(**quota_request(cluster_arn, team=team))
    sagemaker.create_compute_quota(**quota_request(other, team="alpha"))

    on_cluster = sagemaker.list_compute_quotas(ClusterArn=cluster_arn, SortBy="Name", SortOrder="Ascending")["ComputeQuotaSummaries"]
    assert [q["ComputeQuotaTarget"]["TeamName"] for q in on_cluster] == ["alpha", "bravo", "charlie", "delta", "echo"]
    assert on_cluster[0]["ComputeQuotaConfig"]["ComputeQuotaResources"] == [{"InstanceType": "ml.p5.48xlarge", "Count": 2}]
    assert on_cluster[0]["ComputeQuotaVersion"] == 1

    names = [q["Name"] for q in sagemaker.list_compute_quotas(NameContains="charlie")["ComputeQuotaSummaries"]]
    assert names == ["hyperpod-charlie-quota"]
    assert len(sagemaker.list_compute_quotas(Status="Creating")["ComputeQuotaSummaries"]) == 6
    assert sagemaker.list_compute_quotas(Status="Created")["ComputeQuotaSummaries"] == []
    assert len(sagemaker.list_compute_quotas(CreatedAfter=before)["ComputeQuotaSummaries"]) == 6
    assert sagemaker.list_compute_quotas(CreatedBefore=before)["ComputeQuotaSummaries"] == []

    descending = [q["Name"] for q in sagemaker.list_compute_quotas(ClusterArn=cluster_arn, SortBy="Name")["ComputeQuotaSummaries"]]
    assert descending == sorted(descending, reverse=True)

    pages, token = [], None
    while True:
        kwargs = {"ClusterArn": cluster_arn, "SortBy": "Name", "SortOrder": "Ascending", "MaxResults": 2}
        if token:
            kwargs["NextToken"] = token
        page = sagemaker.list_compute_quotas(**kwargs)
        pages.append([q["ComputeQuotaTarget"]["TeamName"] for q in page["ComputeQuotaSummaries"]])
        token = page.get("NextToken")
        if not token:
            break
    assert pages == [["alpha", "bravo"], ["charlie", "delta"], ["echo"]]

    paginated = sagemaker.get_paginator("list_compute_quotas").paginate(PaginationConfig={"PageSize": 4})
    assert sum(len(p["ComputeQuotaSummaries"]) for p in paginated) == 6


def test_tags_on_a_quota(sagemaker, cluster_arn):
    arn = sagemaker.create_compute_quota(**quota_request(cluster_arn))["ComputeQuotaArn"]
    sagemaker.add_tags(ResourceArn=arn, Tags=[{"Key": "cost-center", "Value": "CC-1"}])
    sagemaker.delete_tags(ResourceArn=arn, TagKeys=["cost-center"])
    sagemaker.add_tags(ResourceArn=arn, Tags=[{"Key": "team", "Value": "vision"}])
    assert sagemaker.list_tags(ResourceArn=arn)["Tags"] == [{"Key": "team", "Value": "vision"}]


def test_interleaved_writer_makes_the_next_update_conflict(sandbox, sagemaker, cluster_arn):
    quota_id = sagemaker.create_compute_quota(**quota_request(cluster_arn))["ComputeQuotaId"]
    settle(sagemaker, quota_id)
    hook = urllib.request.Request(
        sandbox.endpoint + "/moto-api/static/sagemaker/compute-quota-interleave",
        data=json.dumps({"ComputeQuotaId": quota_id, "Update": {"Description": "another writer"}}).encode(),
        method="POST",
    )
    with urllib.request.urlopen(hook, timeout=10) as response:
        assert response.status == 201
    assert refused(sagemaker.update_compute_quota, ComputeQuotaId=quota_id, TargetVersion=1, Description="mine") == "ConflictException"
    current = sagemaker.describe_compute_quota(ComputeQuotaId=quota_id)
    assert (current["ComputeQuotaVersion"], current["Description"]) == (2, "another writer")
    assert sagemaker.update_compute_quota(ComputeQuotaId=quota_id, TargetVersion=2, Description="mine")["ComputeQuotaVersion"] == 3
