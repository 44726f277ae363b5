"""A member's reads of the own role and access entry on the sandbox (issue 40, threat model m22): a session of the team's
permission set role holding the rendered policy, against the access-entry authorization (sandbox/authorization.py
EKS_ON_ACCESS_ENTRY, eks_access.access_entry_arn), with a team whose name is a prefix of the member's and a platform
permission set named after the team."""

from __future__ import annotations

import fnmatch

import boto3
import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import access_entry, naming, shared
from ansible_collections.hyperpod.tenancy.plugins.module_utils.iam import SSO_ROLE_PATH

from tests.unit.sandbox.aws_errors import refused
from tests.unit.sandbox.permission_set_roles import permission_set_roles


@pytest.fixture
def teams(seeded):
    client, seed = seeded
    region, account = seed["region"], seed["account_id"]
    eks, sts = client.boto3_client("eks", region), client.boto3_client("sts", region)
    # vis is a prefix of vision; "vision_Admins" is a permission set the platform might name "<prefix>-<team>_...".
    roles, eks_name = permission_set_roles(client, seed, ("hyperpod-vision", "hyperpod-vis", "hyperpod-vision_Admins", "PlatformAdmins"), ("vision", "vis"))
    for name, role in roles.items():
        eks.create_access_entry(clusterName=eks_name, principalArn=role["Arn"], kubernetesGroups=[name.replace("_", "-").lower()], tags={"team": name})
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
    missing = f"arn:aws:iam::{teams['account']}:role{SSO_ROLE_PATH}AWSReservedSSO_hyperpod-vision_ffffffffffffffff"
    assert refused(member["eks"].describe_access_entry, clusterName=eks_name, principalArn=missing) == "ResourceNotFoundException"
    nopath = f"arn:aws:iam::{teams['account']}:role/AWSReservedSSO_hyperpod-vis_0123456789abcdef"
    assert refused(member["eks"].describe_access_entry, clusterName=eks_name, principalArn=nopath) == "AccessDeniedException"


def test_the_collection_takes_the_teams_role_alone_beside_a_platform_set_named_after_the_team(teams):
    """The pattern AWSReservedSSO_<set>_* stands for the role of that permission set only (naming.sso_role_permission_set):
    matched as a glob, it took the platform set's role too, and the team's access entry run stopped ("must match exactly one")."""
    iam, roles = teams["client"].boto3_client("iam", teams["region"]), teams["roles"]
    assert access_entry.resolve_principal(iam, naming.sso_role_name_pattern("vision")) == roles["hyperpod-vision"]["Arn"]
    assert shared.sso_role_arns(iam, {"hyperpod-vision", "hyperpod-vision_Admins"}) == {
        name: roles[name]["Arn"] for name in ("hyperpod-vision", "hyperpod-vision_Admins")
    }


@pytest.mark.parametrize("role_name, permission_set", [
    ("AWSReservedSSO_hyperpod-vision_0123456789abcdef", "hyperpod-vision"),
    ("AWSReservedSSO_hyperpod-vision_Admins_0123456789abcdef", "hyperpod-vision_Admins"),
    # Not a suffix Identity Center gives (its 16 hexadecimal characters): not a permission set's role.
    ("AWSReservedSSO_hyperpod-vision_Admins", None),
    ("AWSReservedSSO_hyperpod-vision_0123456789abcde", None),
    ("AWSReservedSSO_hyperpod-vision_0123456789ABCDEF", None),
    ("AWSReservedSSO_hyperpod-vision_0123456789abcdef0", None),
    ("hyperpod-vision-studio-execution", None),
])  # fmt: skip
def test_a_roles_permission_set_is_read_from_its_whole_name(role_name, permission_set):
    assert naming.sso_role_permission_set(role_name) == permission_set
    if permission_set is not None:  # the policy's wildcard: of the roles Identity Center names, the team's alone
        assert fnmatch.fnmatchcase(role_name, naming.sso_role_name_wildcard("vision")) is (permission_set == "hyperpod-vision")
