"""Create, in the sandbox, what an AWS account has before this collection runs.

An EKS cluster, the IAM roles HyperPod needs, a VPC with subnets and a security
group, an IAM Identity Center instance with the team groups and their members,
an FSx for Lustre file system, and the S3 data bucket with lifecycle scripts (under its platform prefix).
Idempotent: a second seed finds what the first one made.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

# The platform's prefix of the data bucket is the collection's (naming.LIFECYCLE_PREFIX).
from ansible_collections.hyperpod.tenancy.plugins.module_utils.naming import LIFECYCLE_PREFIX

from sandbox.client import SandboxClient

SEED_TAG = {"Key": "hyperpod.tenancy/sandbox-seed", "Value": "true"}
TRUST = {
    "sagemaker": {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}, "Action": "sts:AssumeRole"}]},
    "eks": {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "eks.amazonaws.com"}, "Action": "sts:AssumeRole"}]},
}
ON_CREATE_SCRIPT = b"#!/bin/bash\n# HyperPod lifecycle script (sandbox seed)\nset -euo pipefail\necho on-create\n"


def load_vars(vars_dir: Path) -> dict:
    merged: dict = {}
    for path in sorted(vars_dir.glob("*.yml")):
        merged.update(yaml.safe_load(path.read_text()) or {})
    return merged


PROJECT = Path(__file__).resolve().parent.parent


def load_sample(root: Path = PROJECT) -> dict:
    """The sample's settings as one mapping: the cluster file (group_vars/all) and the team file (teams/teams.yml)."""
    return dict(load_vars(root / "group_vars" / "all"), **load_vars(root / "teams"))


def _role(iam, name: str, trust: dict) -> str:
    try:
        return iam.get_role(RoleName=name)["Role"]["Arn"]
    except iam.exceptions.NoSuchEntityException:
        return iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(trust), Tags=[SEED_TAG])["Role"]["Arn"]


def _network(ec2) -> dict:
    vpcs = ec2.describe_vpcs(Filters=[{"Name": f"tag:{SEED_TAG['Key']}", "Values": ["true"]}])["Vpcs"]
    if vpcs:
        vpc_id = vpcs[0]["VpcId"]
    else:
        vpc_id = ec2.create_vpc(CidrBlock="10.20.0.0/16", TagSpecifications=[{"ResourceType": "vpc", "Tags": [SEED_TAG]}])["Vpc"]["VpcId"]
    subnets = ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc_id]}])["Subnets"]
    if not subnets:
        for index, zone in enumerate(("us-east-1a", "us-east-1b")):
            ec2.create_subnet(VpcId=vpc_id, CidrBlock=f"10.20.{index}.0/24", AvailabilityZone=zone)
        subnets = ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc_id]}])["Subnets"]
    in_vpc = [{"Name": "vpc-id", "Values": [vpc_id]}, {"Name": "group-name", "Values": ["hyperpod-nodes"]}]
    groups = ec2.describe_security_groups(Filters=in_vpc)["SecurityGroups"]
    group_id = groups[0]["GroupId"] if groups else ec2.create_security_group(GroupName="hyperpod-nodes", Description="HyperPod nodes", VpcId=vpc_id)["GroupId"]
    return {"vpc_id": vpc_id, "subnet_ids": sorted(s["SubnetId"] for s in subnets), "security_group_ids": [group_id]}


def _identity_center(sso_admin, identitystore, groups: dict[str, list[str]]) -> dict:
    instances = sso_admin.list_instances()["Instances"]
    if not instances:
        # The organization's instance is another account's (identity_center_home): seed_identity_center_account seeds it.
        return {}
    instance = instances[0]
    store_id = instance["IdentityStoreId"]
    group_ids = {}
    for group_name, members in groups.items():
        found = identitystore.list_groups(IdentityStoreId=store_id, Filters=[{"AttributePath": "DisplayName", "AttributeValue": group_name}])["Groups"]
        group_id = found[0]["GroupId"] if found else identitystore.create_group(IdentityStoreId=store_id, DisplayName=group_name)["GroupId"]
        group_ids[group_name] = group_id
        for member in members:
            users = identitystore.list_users(IdentityStoreId=store_id, Filters=[{"AttributePath": "UserName", "AttributeValue": member}])["Users"]
            if users:
                user_id = users[0]["UserId"]
            else:
                user_id = identitystore.create_user(
                    IdentityStoreId=store_id, UserName=member, DisplayName=member, Name={"GivenName": member, "FamilyName": "Example"}
                )["UserId"]
            memberships = identitystore.list_group_memberships(IdentityStoreId=store_id, GroupId=group_id)["GroupMemberships"]
            if all(m["MemberId"].get("UserId") != user_id for m in memberships):
                identitystore.create_group_membership(IdentityStoreId=store_id, GroupId=group_id, MemberId={"UserId": user_id})
    return {"identity_center_instance_arn": instance["InstanceArn"], "identity_store_id": store_id, "group_ids": group_ids}


def _groups(settings: dict) -> dict[str, list[str]]:
    """{Identity Center group: its members' user names} of the team file, with the platform admins' group."""
    groups: dict[str, list[str]] = {}
    for team in settings.get("hyperpod_teams", []):
        if team.get("identity_center_group"):
            members = [m if isinstance(m, str) else m["name"] for m in team.get("members", [])]
            groups.setdefault(team["identity_center_group"], []).extend(members)
    if settings.get("hyperpod_platform_admins_group"):
        groups.setdefault(settings["hyperpod_platform_admins_group"], [])
    return groups


IDENTITY_CENTER_ROLE = "HyperPodIdentityCenterAdmin"


def _as_account(made, account_id: str):
    """``made`` (a client of the sandbox's admin) acting as the administrator of ``account_id`` (moto's
    ``x-moto-account-id``): how the seed sets up another account, as its owner would before the collection runs."""
    made.meta.events.register("before-sign", lambda request, **kwargs: request.headers.__setitem__("x-moto-account-id", account_id))
    return made


def seed_identity_center_account(
    client: SandboxClient, settings: dict, account_id: str, region: str, workload_account: str, external_id: str = "", grants: dict | None = None
) -> dict:
    """The organization's management account ``account_id``: its Identity Center instance in ``region`` (the sandbox's
    ``identity_center_home`` must name them) with the team file's groups and users, and the role the workload account's
    administrator assumes to manage it (trust policy naming the workload account, with ``sts:ExternalId`` when given),
    allowed ``grants`` (every Identity Center action unless given: tests give automation_policy.render_identity_center())."""
    iam = _as_account(client.boto3_client("iam", region), account_id)
    statement: dict = {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{workload_account}:root"}, "Action": "sts:AssumeRole"}
    if external_id:
        statement["Condition"] = {"StringEquals": {"sts:ExternalId": external_id}}
    role_arn = _role(iam, IDENTITY_CENTER_ROLE, {"Version": "2012-10-17", "Statement": [statement]})
    grants = grants or {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["sso:*", "identitystore:*"], "Resource": "*"}]}
    iam.put_role_policy(RoleName=IDENTITY_CENTER_ROLE, PolicyName="IdentityCenterAdministration", PolicyDocument=json.dumps(grants))
    sso_admin = _as_account(client.boto3_client("sso-admin", region), account_id)
    identitystore = _as_account(client.boto3_client("identitystore", region), account_id)
    result = _identity_center(sso_admin, identitystore, _groups(settings))
    result.update(identity_center_account=account_id, identity_center_region=region, identity_center_role_arn=role_arn)
    return result


def seed(client: SandboxClient, settings: dict) -> dict:
    region = settings.get("hyperpod_aws_region", "us-east-1")
    cluster = settings.get("hyperpod_cluster", {})
    iam, ec2, eks = (client.boto3_client(s, region) for s in ("iam", "ec2", "eks"))
    s3, fsx, sts = (client.boto3_client(s, region) for s in ("s3", "fsx", "sts"))
    result = {"region": region, "account_id": sts.get_caller_identity()["Account"]}
    result["cluster_execution_role_arn"] = _role(iam, "HyperPodClusterExecution", TRUST["sagemaker"])
    result["eks_role_arn"] = _role(iam, "HyperPodEksCluster", TRUST["eks"])
    result.update(_network(ec2))

    eks_name = cluster.get("eks_cluster_name", "ml-shared-eks")
    if eks_name in eks.list_clusters()["clusters"]:
        result["eks_cluster_arn"] = eks.describe_cluster(name=eks_name)["cluster"]["arn"]
    else:
        result["eks_cluster_arn"] = eks.create_cluster(
            name=eks_name,
            roleArn=result["eks_role_arn"],
            resourcesVpcConfig={"subnetIds": result["subnet_ids"], "securityGroupIds": result["security_group_ids"]},
            accessConfig={"authenticationMode": "API_AND_CONFIG_MAP"},
        )["cluster"]["arn"]

    bucket = settings.get("hyperpod_data_bucket", "hyperpod-team-data")
    if bucket not in [b["Name"] for b in s3.list_buckets()["Buckets"]]:
        s3.create_bucket(Bucket=bucket)
    # Where the cluster role looks by default: the platform's prefix, which no team's policy reaches (naming.LIFECYCLE_PREFIX).
    s3.put_object(Bucket=bucket, Key=LIFECYCLE_PREFIX + "on_create.sh", Body=ON_CREATE_SCRIPT)
    result["data_bucket"] = bucket

    result.update(_identity_center(client.boto3_client("sso-admin", region), client.boto3_client("identitystore", region), _groups(settings)))

    file_systems = [fs for fs in fsx.describe_file_systems()["FileSystems"] if {"Key": "Name", "Value": "hyperpod-shared"} in fs.get("Tags", [])]
    if file_systems:
        result["fsx_file_system_id"] = file_systems[0]["FileSystemId"]
    else:
        result["fsx_file_system_id"] = fsx.create_file_system(
            FileSystemType="LUSTRE",
            StorageCapacity=1200,
            SubnetIds=result["subnet_ids"][:1],
            SecurityGroupIds=result["security_group_ids"],
            LustreConfiguration={"DeploymentType": "PERSISTENT_2", "PerUnitStorageThroughput": 125},
            Tags=[{"Key": "Name", "Value": "hyperpod-shared"}],
        )["FileSystem"]["FileSystemId"]
    return result


def seed_from_vars(client: SandboxClient, settings: dict, out: Path) -> dict:
    from sandbox.services.ce_tags import seed_cost_and_usage

    result = seed(client, settings)
    # Last full month's Cost Explorer results, so the demo's chargeback report has figures.
    result["cost_and_usage_month"] = seed_cost_and_usage(client, settings)["month"]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, sort_keys=True))
    return result
