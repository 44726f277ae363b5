"""Cost Explorer cost-allocation tags and GetCostAndUsage in the sandbox, called through boto3 as modules call them."""

from __future__ import annotations

import botocore.exceptions
import pytest

from sandbox.services.ce_tags import cost_and_usage_results, last_full_month, report_requests, seed_cost_and_usage


def _unvalidated_ce(sandbox):
    """A client that sends what AWS would receive, without botocore's client-side checks."""
    import boto3
    from botocore.config import Config

    from sandbox.client import SANDBOX_CREDENTIALS

    return boto3.client(
        "ce", region_name="us-east-1", endpoint_url=sandbox.endpoint,
        aws_access_key_id="sandbox", aws_secret_access_key=SANDBOX_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        config=Config(parameter_validation=False, retries={"max_attempts": 1}),
    )


def _tags(ce, **kwargs):
    return {t["TagKey"]: t for t in ce.list_cost_allocation_tags(**kwargs)["CostAllocationTags"]}


def _tag_bucket(sandbox, key, value="x"):
    s3 = sandbox.boto3_client("s3")
    s3.create_bucket(Bucket="tagged-bucket")
    s3.put_bucket_tagging(Bucket="tagged-bucket", Tagging={"TagSet": [{"Key": key, "Value": value}]})


def test_a_key_is_listed_only_once_a_resource_carries_it(sandbox):
    ce = sandbox.boto3_client("ce")
    assert "team" not in _tags(ce)
    _tag_bucket(sandbox, "team")
    entry = _tags(ce)["team"]
    assert entry["Status"] == "Inactive"
    assert entry["Type"] == "UserDefined"
    assert entry["LastUsedDate"].endswith("Z")
    assert "LastUpdatedDate" not in entry


def test_keys_on_iam_roles_and_ec2_resources_are_seen(sandbox):
    iam = sandbox.boto3_client("iam")
    iam.create_role(RoleName="r", AssumeRolePolicyDocument="{}", Tags=[{"Key": "cost-center", "Value": "CC-1"}])
    ec2 = sandbox.boto3_client("ec2", "eu-west-1")
    ec2.create_vpc(CidrBlock="10.0.0.0/16", TagSpecifications=[{"ResourceType": "vpc", "Tags": [{"Key": "owner", "Value": "me"}]}])
    assert {"cost-center", "owner"} <= set(_tags(sandbox.boto3_client("ce")))


def test_eks_split_cost_keys_are_aws_generated_once_a_cluster_exists(sandbox):
    ce = sandbox.boto3_client("ce")
    assert "aws:eks:namespace" not in _tags(ce)
    sandbox.boto3_client("eks").create_cluster(
        name="c", roleArn="arn:aws:iam::123456789012:role/eks", resourcesVpcConfig={"subnetIds": []}
    )
    entry = _tags(ce, Type="AWSGenerated")["aws:eks:namespace"]
    assert entry["Type"] == "AWSGenerated"
    assert "team" not in _tags(ce, Type="AWSGenerated")


def test_update_activates_seen_keys_and_reports_unseen_ones_per_key(sandbox):
    ce = sandbox.boto3_client("ce")
    _tag_bucket(sandbox, "team")
    response = ce.update_cost_allocation_tags_status(
        CostAllocationTagsStatus=[{"TagKey": "team", "Status": "Active"}, {"TagKey": "never-used", "Status": "Active"}]
    )
    assert response["Errors"] == [
        {"TagKey": "never-used", "Code": "TagKeysNotFoundException", "Message": "Failed to update Cost Allocation Tag: never-used"}
    ]
    tags = _tags(ce)
    assert tags["team"]["Status"] == "Active"
    assert tags["team"]["LastUpdatedDate"].endswith("Z")
    assert "never-used" not in tags
    assert list(_tags(ce, Status="Active")) == ["team"]
    assert _tags(ce, TagKeys=["never-used"]) == {}


def test_setting_the_same_status_changes_nothing(sandbox):
    ce = sandbox.boto3_client("ce")
    _tag_bucket(sandbox, "team")
    ce.update_cost_allocation_tags_status(CostAllocationTagsStatus=[{"TagKey": "team", "Status": "Active"}])
    first = _tags(ce)["team"]["LastUpdatedDate"]
    assert ce.update_cost_allocation_tags_status(CostAllocationTagsStatus=[{"TagKey": "team", "Status": "Active"}])["Errors"] == []
    assert _tags(ce)["team"]["LastUpdatedDate"] == first
    ce.update_cost_allocation_tags_status(CostAllocationTagsStatus=[{"TagKey": "team", "Status": "Inactive"}])
    assert _tags(ce)["team"]["Status"] == "Inactive"


def test_a_key_stays_listed_after_its_resource_is_gone(sandbox):
    ce = sandbox.boto3_client("ce")
    _tag_bucket(sandbox, "team")
    assert "team" in _tags(ce)
    s3 = sandbox.boto3_client("s3")
    s3.delete_bucket_tagging(Bucket="tagged-bucket")
    assert "team" in _tags(ce)


@pytest.mark.parametrize(
    "request_kwargs, fragment",
    [
        ({"CostAllocationTagsStatus": []}, "have length greater than or equal to 1"),
        ({"CostAllocationTagsStatus": [{"TagKey": "k%d" % i, "Status": "Active"} for i in range(21)]}, "less than or equal to 20"),
        ({"CostAllocationTagsStatus": [{"TagKey": "team", "Status": "Enabled"}]}, "enum value set: [Active, Inactive]"),
        ({"CostAllocationTagsStatus": [{"TagKey": "team", "Status": "Active"}, {"TagKey": "team", "Status": "Inactive"}]}, "Duplicate"),
    ],
)
def test_update_validates_against_the_model(sandbox, request_kwargs, fragment):
    ce = _unvalidated_ce(sandbox)
    with pytest.raises(botocore.exceptions.ClientError) as raised:
        ce.update_cost_allocation_tags_status(**request_kwargs)
    assert raised.value.response["Error"]["Code"] == "ValidationException"
    assert fragment in raised.value.response["Error"]["Message"]


def test_list_pages_and_rejects_a_bad_token(sandbox):
    s3 = sandbox.boto3_client("s3")
    s3.create_bucket(Bucket="paging-bucket")
    s3.put_bucket_tagging(Bucket="paging-bucket", Tagging={"TagSet": [{"Key": "k%d" % i, "Value": "v"} for i in range(5)]})
    ce = sandbox.boto3_client("ce")
    first = ce.list_cost_allocation_tags(MaxResults=3)
    assert len(first["CostAllocationTags"]) == 3 and first["NextToken"]
    second = ce.list_cost_allocation_tags(MaxResults=3, NextToken=first["NextToken"])
    assert len(second["CostAllocationTags"]) == 2 and "NextToken" not in second
    with pytest.raises(ce.exceptions.InvalidNextTokenException):
        ce.list_cost_allocation_tags(NextToken="garbage")


def test_get_cost_and_usage_validates_the_period(sandbox):
    ce = sandbox.boto3_client("ce")
    with pytest.raises(botocore.exceptions.ClientError) as raised:
        ce.get_cost_and_usage(TimePeriod={"Start": "2026-02-01", "End": "2026-01-01"}, Granularity="MONTHLY", Metrics=["UnblendedCost"])
    assert raised.value.response["Error"]["Code"] == "ValidationException"


def test_seeded_costs_answer_the_reports_two_queries_in_order(sandbox):
    settings = {
        "hyperpod_cluster": {"instance_groups": [{"instance_type": "ml.p5.48xlarge", "count": 2}, {"instance_type": "ml.g5.12xlarge", "count": 1}]},
        "hyperpod_teams": [{"name": "vision"}, {"name": "nlp", "state": "absent"}],
    }
    assert seed_cost_and_usage(sandbox, settings, "2026-02") == {"month": "2026-02", "queued": True}
    assert seed_cost_and_usage(sandbox, settings, "2026-02") == {"month": "2026-02", "queued": False}
    ce = sandbox.boto3_client("ce")
    first, second = report_requests(settings, "2026-02")
    by_team = ce.get_cost_and_usage(**first)
    keys = [g["Keys"][0] for g in by_team["ResultsByTime"][0]["Groups"]]
    assert keys == ["team$vision", "team$"]
    by_usage = ce.get_cost_and_usage(**second)
    amounts = {g["Keys"][0]: float(g["Metrics"]["UnblendedCost"]["Amount"]) for g in by_usage["ResultsByTime"][0]["Groups"]}
    # February 2026 has 28 days: 2 instances * 672 h * 113.07 USD.
    assert amounts["USE1-Cluster:ml.p5.48xlarge"] == pytest.approx(2 * 672 * 113.07)
    untagged = float(by_team["ResultsByTime"][0]["Groups"][1]["Metrics"]["UnblendedCost"]["Amount"])
    cluster = amounts["USE1-Cluster:ml.p5.48xlarge"] + amounts["USE1-Cluster:ml.g5.12xlarge"]
    assert untagged > cluster
    # Nothing else was queued by the second seed: another request finds no answer.
    other, _ = report_requests(settings, "2026-03")
    assert ce.get_cost_and_usage(**other)["ResultsByTime"] == []


def test_last_full_month_and_default_results():
    import datetime

    assert last_full_month(datetime.date(2026, 1, 15)) == "2025-12"
    assert last_full_month(datetime.date(2026, 3, 1)) == "2026-02"
    results = cost_and_usage_results({}, "2025-12")["results"]
    assert results[0]["ResultsByTime"][0]["TimePeriod"] == {"Start": "2025-12-01", "End": "2026-01-01"}
