"""plugins/module_utils/botocore_model.py: one check of a request against botocore's model, in the collection's words and AWS's."""

from __future__ import annotations

import botocore.session
import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import botocore_model

SAGEMAKER = botocore.session.get_session().get_service_model("sagemaker")
CREATE_QUOTA = SAGEMAKER.operation_model("CreateComputeQuota").input_shape

BAD_QUOTA = {
    "Name": "bad_name!",
    "ClusterArn": "arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdef123456",
    "ComputeQuotaConfig": {"ComputeQuotaResources": [{"InstanceType": "ml.bogus", "Count": -1}], "ResourceSharingConfig": {"Strategy": "Lend"}},
    "ComputeQuotaTarget": {"TeamName": "vision", "FairShareWeight": 101},
    "ActivationState": True,
}


def test_the_collections_words_name_each_member_and_what_aws_would_refuse():
    problems = botocore_model.request_problems(SAGEMAKER, "CreateComputeQuota", BAD_QUOTA)
    assert "CreateComputeQuota.Name: 'bad_name!' does not match the pattern" in "; ".join(problems)
    assert "CreateComputeQuota.ComputeQuotaConfig.ComputeQuotaResources[0].InstanceType: 'ml.bogus' is not a valid ClusterInstanceType" in problems
    assert "CreateComputeQuota.ComputeQuotaConfig.ComputeQuotaResources[0].Count: -1 must be between 0 and 10000000" in problems
    assert "CreateComputeQuota.ComputeQuotaTarget.FairShareWeight: 101 must be between 0 and 100" in problems
    assert "CreateComputeQuota.ActivationState: True must be a string" in problems


def test_awss_words_are_the_same_problems_as_the_validation_exception_says_them():
    ours = botocore_model.request_problems(SAGEMAKER, "CreateComputeQuota", BAD_QUOTA)
    theirs = botocore_model.aws_messages(CREATE_QUOTA, BAD_QUOTA)
    assert len(theirs) == len(ours)
    assert (
        "Value '101' at 'computeQuotaTarget.fairShareWeight' failed to satisfy constraint: Member must have value less than or equal to 100"
        in theirs
    )
    assert "Value 'ml.bogus' at 'computeQuotaConfig.computeQuotaResources.1.member.instanceType' failed to satisfy constraint: " \
        "Member must satisfy enum value set: [" in "; ".join(theirs)


def test_a_required_member_left_out_is_named():
    request = dict(BAD_QUOTA)
    del request["ClusterArn"]
    assert "CreateComputeQuota.ClusterArn is required" in botocore_model.request_problems(SAGEMAKER, "CreateComputeQuota", request)
    assert "Value null at 'clusterArn' failed to satisfy constraint: Member must not be null" in botocore_model.aws_messages(CREATE_QUOTA, request)


@pytest.mark.parametrize("value, ok", [("équipe vision", True), ("team<script>", False)])
def test_tag_patterns_with_unicode_classes_are_enforced(value, ok):
    shape = SAGEMAKER.operation_model("AddTags").input_shape
    request = {"ResourceArn": "arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdef123456", "Tags": [{"Key": "team", "Value": value}]}
    assert (botocore_model.request_problems(SAGEMAKER, "AddTags", request) == []) is ok
    assert (botocore_model.aws_messages(shape, request) == []) is ok


def test_the_sandbox_answers_with_the_collections_check():
    from sandbox import core

    with pytest.raises(core.AwsError) as refused:
        core.validate_request("sagemaker", "CreateComputeQuota", BAD_QUOTA)
    count = len(botocore_model.request_problems(SAGEMAKER, "CreateComputeQuota", BAD_QUOTA))
    assert "%d validation errors detected" % count in refused.value.description
