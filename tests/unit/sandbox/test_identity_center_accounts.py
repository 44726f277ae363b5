"""Identity Center in the organization's management account and home Region, the rest in a workload account.

With ``identity_center_home`` the instance answers there only: the workload account's administrator sees no
instance anywhere, reaches it by assuming the role the management account's trust policy names it in, and a
request naming the instance from anywhere else is refused. A reset brings back the single-account default.
"""

from __future__ import annotations

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from sandbox.seed import _as_account, _role, seed_identity_center_account

WORKLOAD, MANAGEMENT, HOME = "123456789012", "222233334444", "eu-west-1"
SETTINGS = {"hyperpod_teams": [{"name": "vision", "identity_center_group": "TeamVision", "members": ["alice"]}]}


def _code(error: pytest.ExceptionInfo) -> str:
    return error.value.response["Error"]["Code"]


@pytest.fixture
def organization(sandbox):
    sandbox.configure(identity_center_home=f"{MANAGEMENT}/{HOME}")
    seeded = seed_identity_center_account(sandbox, SETTINGS, MANAGEMENT, HOME, WORKLOAD, external_id="ext-12345")
    return sandbox, seeded


def _assumed(sandbox, role_arn, service, region, **request):
    sts = sandbox.boto3_client("sts")
    credentials = sts.assume_role(RoleArn=role_arn, RoleSessionName="hyperpod-tenancy", **request)["Credentials"]
    return boto3.client(
        service, region_name=region, endpoint_url=sandbox.endpoint, aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"], aws_session_token=credentials["SessionToken"],
        config=Config(retries={"mode": "standard", "total_max_attempts": 1}),
    )


def test_the_workload_account_sees_no_instance_in_any_region(organization):
    sandbox, unused = organization
    for region in ("us-east-1", HOME):
        assert sandbox.boto3_client("sso-admin", region).list_instances()["Instances"] == []


def test_the_role_reaches_the_instance_in_its_home_region_only(organization):
    sandbox, seeded = organization
    role = seeded["identity_center_role_arn"]
    home = _assumed(sandbox, role, "sso-admin", HOME, ExternalId="ext-12345")
    assert [i["InstanceArn"] for i in home.list_instances()["Instances"]] == [seeded["identity_center_instance_arn"]]
    assert _assumed(sandbox, role, "sts", HOME, ExternalId="ext-12345").get_caller_identity()["Account"] == MANAGEMENT
    store = _assumed(sandbox, role, "identitystore", HOME, ExternalId="ext-12345")
    assert store.get_group_id(
        IdentityStoreId=seeded["identity_store_id"], AlternateIdentifier={"UniqueAttribute": {"AttributePath": "displayName", "AttributeValue": "TeamVision"}}
    )["GroupId"] == seeded["group_ids"]["TeamVision"]
    assert _assumed(sandbox, role, "sso-admin", "us-east-1", ExternalId="ext-12345").list_instances()["Instances"] == []


@pytest.mark.parametrize("region", ["us-east-1", HOME])
def test_a_request_naming_the_instance_from_the_workload_account_is_refused(organization, region):
    sandbox, seeded = organization
    sso = sandbox.boto3_client("sso-admin", region)
    with pytest.raises(ClientError) as refused:
        sso.create_permission_set(InstanceArn=seeded["identity_center_instance_arn"], Name="hyperpod-vision")
    assert _code(refused) == "AccessDeniedException"
    with pytest.raises(ClientError) as refused:
        sso.list_permission_sets(InstanceArn=seeded["identity_center_instance_arn"])
    assert _code(refused) == "AccessDeniedException"
    with pytest.raises(ClientError) as missing:
        sandbox.boto3_client("identitystore", region).list_groups(IdentityStoreId=seeded["identity_store_id"])
    assert _code(missing) == "ResourceNotFoundException"


def test_assuming_the_role_needs_its_trust_policy(organization):
    sandbox, seeded = organization
    sts = sandbox.boto3_client("sts")
    role = seeded["identity_center_role_arn"]
    for request in ({}, {"ExternalId": "ext-wrong"}):
        with pytest.raises(ClientError) as refused:
            sts.assume_role(RoleArn=role, RoleSessionName="hyperpod-tenancy", **request)
        assert _code(refused) == "AccessDenied" and role in str(refused.value)
    with pytest.raises(ClientError) as refused:
        sts.assume_role(RoleArn=f"arn:aws:iam::{MANAGEMENT}:role/NoSuchRole", RoleSessionName="hyperpod-tenancy")
    assert _code(refused) == "AccessDenied"
    # A role whose trust policy names another account is refused too.
    other = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::999988887777:root"}, "Action": "sts:AssumeRole"}]}
    stranger = _role(_as_account(sandbox.boto3_client("iam"), MANAGEMENT), "TrustsSomeoneElse", other)
    with pytest.raises(ClientError) as refused:
        sts.assume_role(RoleArn=stranger, RoleSessionName="hyperpod-tenancy")
    assert _code(refused) == "AccessDenied"


def test_an_sso_domain_needs_the_instance_region(organization, sandbox):
    """The domain's application is made in the organization's instance, in its home Region only."""
    sandbox, seeded = organization
    ec2 = sandbox.boto3_client("ec2", "us-east-1")
    vpc = ec2.create_vpc(CidrBlock="10.30.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.30.0.0/24", AvailabilityZone="us-east-1a")["Subnet"]["SubnetId"]
    role = sandbox.boto3_client("iam").create_role(RoleName="Exec", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    sagemaker = sandbox.boto3_client("sagemaker", "us-east-1")
    with pytest.raises(ClientError) as refused:
        sagemaker.create_domain(DomainName="hyperpod-vision", AuthMode="SSO", DefaultUserSettings={"ExecutionRole": role}, SubnetIds=[subnet], VpcId=vpc)
    assert _code(refused) == "ValidationException" and "No IAM Identity Center instance" in str(refused.value)


def test_a_reset_brings_back_one_account(organization):
    sandbox, unused = organization
    sandbox.reset()
    assert len(sandbox.boto3_client("sso-admin").list_instances()["Instances"]) == 1
