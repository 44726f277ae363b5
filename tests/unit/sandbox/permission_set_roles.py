"""The roles Identity Center makes for permission sets, made in the sandbox as the collection leaves a team's: under
Identity Center's path, with the team's rendered policy inline, trusted by the account (so a test assumes them)."""

from __future__ import annotations

import json

from ansible_collections.hyperpod.tenancy.plugins.module_utils import naming
from ansible_collections.hyperpod.tenancy.plugins.module_utils.iam import SSO_ROLE_PATH
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_policy import render_team_policy

from tests.unit.sandbox.test_sagemaker_cluster import create_request, group

# A suffix of Identity Center's shape (naming.SSO_ROLE_SUFFIX_LENGTH hexadecimal characters).
SUFFIX = "0123456789abcdef"


def permission_set_roles(client, seed, permission_sets, teams):
    """({permission set name: its role}, the EKS cluster's name): a role for each name in ``permission_sets``, and on the
    role of each team in ``teams`` (its permission set's) the policy the collection renders for it, on a HyperPod cluster
    made here."""
    region, account = seed["region"], seed["account_id"]
    iam, sagemaker = client.boto3_client("iam", region), client.boto3_client("sagemaker", region)
    hyperpod_arn = sagemaker.create_cluster(**create_request(seed, [group(seed, "a", 1)]))["ClusterArn"]
    trust = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{account}:root"}, "Action": "sts:AssumeRole"}]})  # fmt: skip
    roles = {}
    for name in permission_sets:
        roles[name] = iam.create_role(RoleName=f"AWSReservedSSO_{name}_{SUFFIX}", Path=SSO_ROLE_PATH, AssumeRolePolicyDocument=trust)["Role"]
    for team in teams:
        policy = render_team_policy(team, account, region, seed["data_bucket"], hyperpod_arn, seed["eks_cluster_arn"])
        role_name = roles[naming.permission_set_name(team)]["RoleName"]
        iam.put_role_policy(RoleName=role_name, PolicyName="AwsSSOInlinePolicy", PolicyDocument=json.dumps(policy))
    return roles, seed["eks_cluster_arn"].split("/")[-1]
