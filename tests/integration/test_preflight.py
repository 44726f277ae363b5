"""playbooks/preflight.yml on an account that is not ready: one table, then one failure naming every problem, nothing written.

That it passes on the sample, under the automation policy alone, is the first step of the automation's life
(automation_lifecycle.py); each problem the module finds is tests/unit/plugins/module_utils/test_preflight.py's.
"""

from __future__ import annotations

import json

from tests.integration.automation_lifecycle import preflight_checks


def test_preflight_prints_one_table_and_fails_with_every_problem_at_once_writing_nothing(sample):
    """In check mode, as an AWX check job runs it: what shared_info finds missing joins the table (its failure is rescued),
    and so does a team it refuses."""
    seed = json.loads(sample.seed_file.read_text())
    s3, identitystore = sample.client.boto3_client("s3"), sample.client.boto3_client("identitystore")
    s3.delete_public_access_block(Bucket=seed["data_bucket"])
    # A team's Identity Center group gone: shared_info's problem, in the same table.
    identitystore.delete_group(IdentityStoreId=seed["identity_store_id"], GroupId=seed["group_ids"]["TeamVision"])
    sample.client.clear_requests()
    result = sample.run("playbooks/preflight.yml", "--check")
    assert result.returncode == 2
    [failure] = [f for f in result.failures() if "Fail with every problem at once" in f]
    assert "Preflight found 2 problem(s) (nothing was changed)" in failure, failure
    assert "data bucket Block Public Access: off on the bucket: BlockPublicAcls, IgnorePublicAcls, BlockPublicPolicy, RestrictPublicBuckets" in failure
    assert "teams shared_info: " in failure and "TeamVision" in failure
    checks = preflight_checks(result)
    assert {c["area"] for c in checks} >= {"caller", "permissions", "identity center", "eks", "add-on", "access policies", "quotas", "data bucket", "fsx"}
    assert sample.client.writes() == []


def test_a_team_shared_info_refuses_is_a_problem_of_preflight(sample):
    """shared_info does not fail for a team it refuses (the others go on); preflight names it."""
    iam = sample.client.boto3_client("iam")
    iam.create_role(RoleName="hyperpod-vision-studio-execution", AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}, "Action": "sts:AssumeRole"}]}))
    result = sample.run("playbooks/preflight.yml")
    assert result.returncode == 2
    [failure] = [f for f in result.failures() if "Fail with every problem at once" in f]
    assert "teams vision: refused: " in failure and "hyperpod-vision-studio-execution" in failure, failure
