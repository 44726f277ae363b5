"""A member's reads of the own role and access entry on the sandbox (issue 40, threat model m22): a session of the team's
permission set role holding the rendered policy, against the access-entry authorization (sandbox/authorization.py
EKS_ON_ACCESS_ENTRY, eks_access.access_entry_arn), with a team whose name is a prefix of the member's and a platform
permission set named after the team."""

from __future__ import annotations

import json

import boto3
import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_policy import render_team_policy

from tests.unit.sandbox.aws_errors import refused
from tests.unit.sandbox.test_sagemaker_cluster import create_request, group

SSO_PATH = "/aws-reserved/sso.amazonaws.com/"


@pytest.fixture
def teams(seeded):
    client, seed = seeded
    region, account = seed["region"], seed["account_id"]
    iam, eks, sts, sagemaker = (client.boto3_client(s, region) for s in ("iam", "eks", "sts", "sagemaker"))
    hyperpod_arn = sagemaker.create_cluster(**create_request(seed, [group(seed, "a", 1)]))["ClusterArn"]
    eks_name = seed["eks_cluster_arn"].split("/")[-1]
    trust = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{account}:root"}, "Action": "sts:AssumeRole"}]})  # fmt: skip
    roles = {}
    # vis is a prefix of vision; "vision_Admins" is a permission set the platform might name "<prefix>-<team>_...".
    for name in ("hyperpod-vision", "hyperpod-vis", "hyperpod-vision_Admins", "PlatformAdmins"):
        role = iam.create_role(RoleName=f"AWSReservedSSO_{name}_0123456789abcdef", Path=SSO_PATH, AssumeRolePolicyDocument=trust)["Role"]
        roles[name] = role
        eks.create_access_entry(clusterName=eks_name, principalArn=role["Arn"], kubernetesGroups=[name.replace("_", "-").lower()], tags={"team": name})
    for team in ("vision", "vis"):
        policy = render_team_policy(team, account, region, seed["data_bucket"], hyperpod_arn, seed["eks_cluster_arn"])
        iam.put_role_policy(RoleName=roles[f"hyperpod-{team}"]["RoleName"], PolicyName="AwsSSOInlinePolicy", PolicyDocument=json.dumps(policy))
    credentials = sts.assume_role(RoleArn=roles["hyperpod-vision"]["Arn"], RoleSessionName="alice")["Credentials"]
    session = boto3.session.Session(
        region_name=region,
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
    )
    member = {s: session.client(s, endpoint_url=client.endpoint) for s in ("iam", "eks")}
    return {"member": member, "roles": roles, "eks_name": eks_name, "client": client, "account": account, "region": region}


def test_a_vision_member_reads_no_entry_or_role_of_the_team_vis(teams):
    member, roles, eks_name = teams["member"], teams["roles"], teams["eks_name"]
    assert member["iam"].get_role(RoleName=roles["hyperpod-vision"]["RoleName"])
    assert member["eks"].describe_access_entry(clusterName=eks_name, principalArn=roles["hyperpod-vision"]["Arn"])
    for other in ("hyperpod-vis", "PlatformAdmins"):
        assert refused(member["iam"].get_role, RoleName=roles[other]["RoleName"]) == "AccessDenied"
        assert refused(member["eks"].describe_access_entry, clusterName=eks_name, principalArn=roles[other]["Arn"]) == "AccessDeniedException"
    # The tags and the untag of the own entry: TagResource on /tags/<arn> is authorized on "*" in the sandbox.
    arn = member["eks"].describe_access_entry(clusterName=eks_name, principalArn=roles["hyperpod-vision"]["Arn"])["accessEntry"]["accessEntryArn"]
    assert refused(member["eks"].untag_resource, resourceArn=arn, tagKeys=["team"]) == "AccessDeniedException"
    # A path that makes the sandbox's router and its authorization disagree: the own ARN with "/access-policies" after it.
    own = roles["hyperpod-vision"]["Arn"]
    code = refused(member["eks"].describe_access_entry, clusterName=eks_name, principalArn=own + "/access-policies")
    assert code in ("AccessDeniedException", "ResourceNotFoundException", "InvalidParameterException"), code


def test_a_platform_permission_set_named_after_the_team_is_none_of_the_members(teams):
    """A permission set the platform names "<prefix>-<team>_<anything>" (permission set names allow "_"): its role and
    entry are refused to the team's member (the red team read both while the patterns ended with "*")."""
    member, roles, eks_name = teams["member"], teams["roles"], teams["eks_name"]
    admins = roles["hyperpod-vision_Admins"]
    assert refused(member["iam"].get_role, RoleName=admins["RoleName"]) == "AccessDenied"
    assert refused(member["eks"].describe_access_entry, clusterName=eks_name, principalArn=admins["Arn"]) == "AccessDeniedException"


def test_the_sandbox_logs_the_entry_arn_it_authorized(teams):
    member, roles, eks_name, client = teams["member"], teams["roles"], teams["eks_name"], teams["client"]
    client.clear_requests()
    member["eks"].describe_access_entry(clusterName=eks_name, principalArn=roles["hyperpod-vision"]["Arn"])
    missing = f"arn:aws:iam::{teams['account']}:role{SSO_PATH}AWSReservedSSO_hyperpod-vision_ffffffffffffffff"
    assert refused(member["eks"].describe_access_entry, clusterName=eks_name, principalArn=missing) == "ResourceNotFoundException"
    nopath = f"arn:aws:iam::{teams['account']}:role/AWSReservedSSO_hyperpod-vis_0123456789abcdef"
    assert refused(member["eks"].describe_access_entry, clusterName=eks_name, principalArn=nopath) == "AccessDeniedException"
