"""The sandbox's SageMaker AI domains, user profiles, spaces, apps and Identity Center application assignments."""

from __future__ import annotations

import re
import time

import pytest
from botocore.exceptions import ClientError

from sandbox.client import SANDBOX_CREDENTIALS
from tests.unit.sandbox.aws_errors import error, refused


def _wait(describe, ready, timeout=10):
    deadline = time.monotonic() + timeout
    while True:
        try:
            resource = describe()
        except ClientError as e:
            if "gone" in ready and e.response["Error"]["Code"] == "ResourceNotFound":
                return None
            raise
        if resource["Status"] in ready:
            return resource
        assert time.monotonic() < deadline, f"still {resource['Status']}"
        time.sleep(0.05)


@pytest.fixture
def studio(seeded):
    client, seed = seeded
    return client, seed, client.boto3_client("sagemaker", seed["region"])


@pytest.fixture
def slow_studio(studio):
    """``studio`` whose transitional statuses last long enough for a loaded machine to see them, for tests that assert them."""
    client, _seed, _sm = studio
    client.configure(status_delay=2.0)
    return studio


def _create(sm, seed, name="hyperpod-vision", auth="SSO", **extra):
    settings = {
        "ExecutionRole": seed["cluster_execution_role_arn"],
        "SecurityGroups": seed["security_group_ids"],
        "CustomFileSystemConfigs": [{"FSxLustreFileSystemConfig": {"FileSystemId": seed["fsx_file_system_id"], "FileSystemPath": "/vision"}}],
    }
    params = dict(
        DomainName=name,
        AuthMode=auth,
        DefaultUserSettings=settings,
        VpcId=seed["vpc_id"],
        SubnetIds=seed["subnet_ids"],
        AppNetworkAccessType="VpcOnly",
        Tags=[{"Key": "team", "Value": "vision"}],
        TagPropagation="ENABLED",
    )
    params.update(extra)
    return sm.create_domain(**params)


def _in_service(sm, domain_id):
    return _wait(lambda: sm.describe_domain(DomainId=domain_id), ("InService",))


def _assign_group(client, seed, sm, domain_id, group="TeamVision"):
    application = sm.describe_domain(DomainId=domain_id)["SingleSignOnApplicationArn"]
    sso = client.boto3_client("sso-admin", seed["region"])
    sso.create_application_assignment(ApplicationArn=application, PrincipalId=seed["group_ids"][group], PrincipalType="GROUP")


def test_domain_is_pending_then_in_service_with_sso_application(slow_studio):
    client, seed, sm = slow_studio
    created = _create(sm, seed)
    assert re.fullmatch(r"d-[a-z0-9]{12}", created["DomainId"])
    first = sm.describe_domain(DomainId=created["DomainId"])
    assert first["Status"] == "Pending"
    domain = _in_service(sm, created["DomainId"])
    assert domain["DomainArn"] == created["DomainArn"]
    assert domain["TagPropagation"] == "ENABLED"
    assert domain["DefaultUserSettings"]["CustomFileSystemConfigs"][0]["FSxLustreFileSystemConfig"]["FileSystemPath"] == "/vision"
    instance_id = seed["identity_center_instance_arn"].rsplit("/", 1)[-1]
    assert re.fullmatch(rf"arn:aws:sso::{seed['account_id']}:application/{instance_id}/apl-[a-z0-9]{{16}}", domain["SingleSignOnApplicationArn"])
    assert sm.list_tags(ResourceArn=domain["DomainArn"])["Tags"] == [{"Key": "team", "Value": "vision"}]
    summaries = sm.list_domains()["Domains"]
    assert [(d["DomainId"], d["Status"]) for d in summaries] == [(created["DomainId"], "InService")]


def test_a_legacy_sso_domain_has_no_application_arn_and_a_reset_ends_legacy_mode(studio):
    client, seed, sm = studio
    client.configure(legacy_sso_domains=1)
    domain = _in_service(sm, _create(sm, seed)["DomainId"])
    assert "SingleSignOnApplicationArn" not in domain
    assert domain["AuthMode"] == "SSO"
    client.reset()
    client.configure(status_delay=0.2)
    assert client._call("GET", "/_sandbox/config")["legacy_sso_domains"] == 0


def test_iam_domain_has_no_sso_application(studio):
    _, seed, sm = studio
    created = _create(sm, seed, auth="IAM")
    assert "SingleSignOnApplicationArn" not in sm.describe_domain(DomainId=created["DomainId"])


@pytest.mark.parametrize(
    "change, message",
    [
        ({"DomainName": "bad_name"}, "regular expression pattern"),
        ({"AuthMode": "LDAP"}, "enum value set"),
        ({"SubnetIds": ["subnet-00000000"]}, "does not exist"),
        ({"DefaultUserSettings": {"SecurityGroups": []}}, "SecurityGroups is required"),
        (
            {
                "AppNetworkAccessType": "PublicInternetOnly",
                "DefaultUserSettings": {"CustomFileSystemConfigs": [{"FSxLustreFileSystemConfig": {"FileSystemId": "fs-0123456789abcdef0"}}]},
            },
            "FSx for Lustre file system fs-0123456789abcdef0 in DefaultUserSettings does not exist",
        ),
    ],
)
def test_create_domain_validates_like_aws(studio, change, message):
    _, seed, sm = studio
    with pytest.raises(ClientError) as excinfo:
        _create(sm, seed, **change)
    code, text = error(excinfo)
    assert code == "ValidationException"
    assert message in text
    assert sm.list_domains()["Domains"] == []


def test_describe_missing_domain_is_resource_not_found(studio):
    _, _, sm = studio
    assert refused(sm.describe_domain, DomainId="d-000000000000") == "ResourceNotFound"


def test_update_domain_changes_settings_in_place_and_refuses_vpc_change(slow_studio):
    client, seed, sm = slow_studio
    domain_id = _create(sm, seed)["DomainId"]
    with pytest.raises(ClientError) as excinfo:
        sm.update_domain(DomainId=domain_id, DefaultUserSettings={"StudioWebPortal": "ENABLED"})
    assert error(excinfo)[0] == "ResourceInUse"  # still Pending
    _in_service(sm, domain_id)
    sm.update_domain(DomainId=domain_id, DefaultUserSettings={"StudioWebPortal": "DISABLED"}, TagPropagation="DISABLED")
    updating = sm.describe_domain(DomainId=domain_id)
    assert updating["Status"] == "Updating"
    domain = _in_service(sm, domain_id)
    assert domain["DefaultUserSettings"]["StudioWebPortal"] == "DISABLED"
    # members not sent stay as they were
    assert domain["DefaultUserSettings"]["ExecutionRole"] == seed["cluster_execution_role_arn"]
    assert domain["TagPropagation"] == "DISABLED"
    other_vpc = client.boto3_client("ec2", seed["region"]).create_vpc(CidrBlock="10.99.0.0/16")["Vpc"]["VpcId"]
    assert refused(sm.update_domain, DomainId=domain_id, VpcId=other_vpc) == "ValidationException"


def test_user_profiles_need_sso_user_and_follow_their_lifecycle(slow_studio):
    client, seed, sm = slow_studio
    domain_id = _create(sm, seed)["DomainId"]
    with pytest.raises(ClientError) as excinfo:
        sm.create_user_profile(DomainId=domain_id, UserProfileName="alice", SingleSignOnUserIdentifier="UserName", SingleSignOnUserValue="alice")
    assert error(excinfo)[0] == "ResourceInUse"  # the domain is still Pending
    _in_service(sm, domain_id)
    assert refused(sm.create_user_profile, DomainId=domain_id, UserProfileName="alice") == "ValidationException"
    with pytest.raises(ClientError) as excinfo:
        sm.create_user_profile(DomainId=domain_id, UserProfileName="mallory", SingleSignOnUserIdentifier="UserName", SingleSignOnUserValue="mallory")
    assert "does not exist" in error(excinfo)[1]
    with pytest.raises(ClientError) as excinfo:
        sm.create_user_profile(DomainId=domain_id, UserProfileName="alice.smith", SingleSignOnUserIdentifier="UserName", SingleSignOnUserValue="alice")
    assert error(excinfo)[0] == "ValidationException"
    assert "regular expression pattern" in error(excinfo)[1]

    sso_alice = {"SingleSignOnUserIdentifier": "UserName", "SingleSignOnUserValue": "alice"}
    with pytest.raises(ClientError) as excinfo:
        sm.create_user_profile(DomainId=domain_id, UserProfileName="alice", **sso_alice)
    assert error(excinfo)[0] == "ValidationException"
    assert "is not assigned to the IAM Identity Center application" in error(excinfo)[1]
    _assign_group(client, seed, sm, domain_id, "TeamNLP")  # another team's group does not make alice a user of this domain
    with pytest.raises(ClientError) as excinfo:
        sm.create_user_profile(DomainId=domain_id, UserProfileName="alice", **sso_alice)
    assert "is not assigned" in error(excinfo)[1]
    _assign_group(client, seed, sm, domain_id)
    tags = [{"Key": "team", "Value": "vision"}]
    arn = sm.create_user_profile(DomainId=domain_id, UserProfileName="alice", Tags=tags, **sso_alice)["UserProfileArn"]
    assert arn.endswith(f":user-profile/{domain_id}/alice")
    assert sm.list_tags(ResourceArn=arn)["Tags"] == tags
    with pytest.raises(ClientError) as excinfo:
        sm.create_user_profile(DomainId=domain_id, UserProfileName="alice2", SingleSignOnUserIdentifier="UserName", SingleSignOnUserValue="alice")
    assert error(excinfo)[0] == "ResourceInUse"  # one profile per Identity Center user
    assert sm.describe_user_profile(DomainId=domain_id, UserProfileName="alice")["Status"] == "Pending"
    profile = _wait(lambda: sm.describe_user_profile(DomainId=domain_id, UserProfileName="alice"), ("InService",))
    assert profile["SingleSignOnUserValue"] == "alice"
    sm.update_user_profile(DomainId=domain_id, UserProfileName="alice", UserSettings={"StudioWebPortal": "ENABLED"})
    profile = _wait(lambda: sm.describe_user_profile(DomainId=domain_id, UserProfileName="alice"), ("InService",))
    assert profile["UserSettings"] == {"StudioWebPortal": "ENABLED"}
    assert [p["UserProfileName"] for p in sm.list_user_profiles(DomainIdEquals=domain_id)["UserProfiles"]] == ["alice"]

    sm.delete_user_profile(DomainId=domain_id, UserProfileName="alice")
    assert sm.describe_user_profile(DomainId=domain_id, UserProfileName="alice")["Status"] == "Deleting"
    _wait(lambda: sm.describe_user_profile(DomainId=domain_id, UserProfileName="alice"), ("gone",))
    assert sm.list_user_profiles(DomainIdEquals=domain_id)["UserProfiles"] == []


def test_iam_domain_profiles_take_no_sso_user(studio):
    _, seed, sm = studio
    domain_id = _create(sm, seed, auth="IAM")["DomainId"]
    _in_service(sm, domain_id)
    assert (
        refused(sm.create_user_profile, DomainId=domain_id, UserProfileName="alice", SingleSignOnUserIdentifier="UserName", SingleSignOnUserValue="alice")
        == "ValidationException"
    )


def test_deletion_order_is_enforced(studio, statuses):
    client, seed, sm = studio
    domain_id = _create(sm, seed)["DomainId"]
    _in_service(sm, domain_id)
    _assign_group(client, seed, sm, domain_id)
    sm.create_user_profile(DomainId=domain_id, UserProfileName="bob", SingleSignOnUserIdentifier="UserName", SingleSignOnUserValue="bob")
    _wait(lambda: sm.describe_user_profile(DomainId=domain_id, UserProfileName="bob"), ("InService",))
    sm.create_space(DomainId=domain_id, SpaceName="bob-space", OwnershipSettings={"OwnerUserProfileName": "bob"})
    _wait(lambda: sm.describe_space(DomainId=domain_id, SpaceName="bob-space"), ("InService",))
    sm.create_app(DomainId=domain_id, SpaceName="bob-space", AppType="JupyterLab", AppName="default")
    app = {"DomainId": domain_id, "SpaceName": "bob-space", "AppType": "JupyterLab", "AppName": "default"}
    _wait(lambda: sm.describe_app(**app), ("InService",))

    def refused(call, **kwargs):
        with pytest.raises(ClientError) as excinfo:
            call(**kwargs)
        return error(excinfo)[0]

    assert refused(sm.delete_domain, DomainId=domain_id) == "ResourceInUse"
    assert refused(sm.delete_user_profile, DomainId=domain_id, UserProfileName="bob") == "ResourceInUse"
    assert refused(sm.delete_space, DomainId=domain_id, SpaceName="bob-space") == "ResourceInUse"
    assert refused(sm.update_domain, DomainId=domain_id, AppNetworkAccessType="PublicInternetOnly") == "ValidationException"

    sm.delete_app(**app)
    _wait(lambda: sm.describe_app(**app), ("Deleted",))
    assert [a["Status"] for a in sm.list_apps(DomainIdEquals=domain_id)["Apps"]] == ["Deleted"]  # still listed, as in AWS
    sm.delete_space(DomainId=domain_id, SpaceName="bob-space")
    _wait(lambda: sm.describe_space(DomainId=domain_id, SpaceName="bob-space"), ("gone",))
    sm.delete_user_profile(DomainId=domain_id, UserProfileName="bob")
    _wait(lambda: sm.describe_user_profile(DomainId=domain_id, UserProfileName="bob"), ("gone",))

    statuses.hold()
    sm.delete_domain(DomainId=domain_id, RetentionPolicy={"HomeEfsFileSystem": "Retain"})
    assert sm.describe_domain(DomainId=domain_id)["Status"] == "Deleting"
    assert refused(sm.delete_domain, DomainId=domain_id) == "ResourceInUse"
    statuses.settle()
    _wait(lambda: sm.describe_domain(DomainId=domain_id), ("gone",))
    assert sm.list_domains()["Domains"] == []


@pytest.fixture
def in_process(monkeypatch):
    """moto in this process with the sandbox's additions, for what the server cannot show.

    The sandbox server cannot route EFS calls yet (their signing name,
    elasticfilesystem, is missing from sandbox.server.CLIENT_NAMES), so the home
    file system's fate is checked here, through boto3 against moto in-process.
    """
    from moto import mock_aws

    from sandbox import core, services

    services.install()
    monkeypatch.setitem(core.SETTINGS, "status_delay", 0.05)
    for name, value in SANDBOX_CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        import boto3

        yield boto3.client("sagemaker", region_name="us-east-1"), boto3.client("efs", region_name="us-east-1")


@pytest.mark.parametrize("retention, kept", [(None, True), ("Retain", True), ("Delete", False)])
def test_home_file_system_follows_the_retention_policy(in_process, retention, kept):
    sm, efs = in_process
    role = "arn:aws:iam::123456789012:role/studio"
    domain_id = sm.create_domain(DomainName="team", AuthMode="IAM", DefaultUserSettings={"ExecutionRole": role})["DomainId"]
    home = _in_service(sm, domain_id)["HomeEfsFileSystemId"]
    assert efs.describe_file_systems(FileSystemId=home)["FileSystems"][0]["Tags"] == [
        {"Key": "ManagedByAmazonSageMakerResource", "Value": f"arn:aws:sagemaker:us-east-1:123456789012:domain/{domain_id}"}
    ]
    sm.delete_domain(DomainId=domain_id, **({"RetentionPolicy": {"HomeEfsFileSystem": retention}} if retention else {}))
    _wait(lambda: sm.describe_domain(DomainId=domain_id), ("gone",))
    if kept:
        assert efs.describe_file_systems(FileSystemId=home)["FileSystems"][0]["FileSystemId"] == home
    else:
        assert refused(efs.describe_file_systems, FileSystemId=home) == "FileSystemNotFound"


def test_retained_home_file_system_is_visible_through_moto_api(studio):
    client, seed, sm = studio
    domain_id = _create(sm, seed)["DomainId"]
    home = _in_service(sm, domain_id)["HomeEfsFileSystemId"]
    sm.delete_domain(DomainId=domain_id, RetentionPolicy={"HomeEfsFileSystem": "Retain"})
    _wait(lambda: sm.describe_domain(DomainId=domain_id), ("gone",))
    import json
    import urllib.request

    with urllib.request.urlopen(client.endpoint + "/moto-api/data.json", timeout=10) as response:
        data = json.loads(response.read())
    assert home in [fs["file_system_id"] for fs in data["efs"]["FileSystem"]]


def test_application_assignments(studio):
    client, seed, sm = studio
    sso = client.boto3_client("sso-admin", seed["region"])
    domain_id = _create(sm, seed)["DomainId"]
    app_arn = _in_service(sm, domain_id)["SingleSignOnApplicationArn"]
    assert sso.describe_application(ApplicationArn=app_arn)["InstanceArn"] == seed["identity_center_instance_arn"]
    group = seed["group_ids"]["TeamVision"]
    sso.create_application_assignment(ApplicationArn=app_arn, PrincipalId=group, PrincipalType="GROUP")
    listed = sso.list_application_assignments(ApplicationArn=app_arn)["ApplicationAssignments"]
    assert listed == [{"ApplicationArn": app_arn, "PrincipalId": group, "PrincipalType": "GROUP"}]
    assert refused(sso.create_application_assignment, ApplicationArn=app_arn, PrincipalId=group, PrincipalType="GROUP") == "ConflictException"
    assert (
        refused(sso.create_application_assignment, ApplicationArn=app_arn, PrincipalId="00000000-0000-0000-0000-000000000000", PrincipalType="GROUP")
        == "ResourceNotFoundException"
    )
    assert refused(sso.create_application_assignment, ApplicationArn=app_arn, PrincipalId="TeamVision", PrincipalType="GROUP") == "ValidationException"
    sso.delete_application_assignment(ApplicationArn=app_arn, PrincipalId=group, PrincipalType="GROUP")
    assert sso.list_application_assignments(ApplicationArn=app_arn)["ApplicationAssignments"] == []
    assert refused(sso.delete_application_assignment, ApplicationArn=app_arn, PrincipalId=group, PrincipalType="GROUP") == "ResourceNotFoundException"

    sm.delete_domain(DomainId=domain_id)
    _wait(lambda: sm.describe_domain(DomainId=domain_id), ("gone",))
    assert refused(sso.list_application_assignments, ApplicationArn=app_arn) == "ResourceNotFoundException"


def test_two_domains_may_have_one_name(studio):
    _, seed, sm = studio
    first = _create(sm, seed)["DomainId"]
    second = _create(sm, seed)["DomainId"]
    assert first != second
    assert sorted(d["DomainId"] for d in sm.list_domains()["Domains"] if d["DomainName"] == "hyperpod-vision") == sorted([first, second])
