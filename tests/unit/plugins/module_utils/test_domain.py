"""plugins/module_utils/domain.py: views, requests, input and in-place checks, deletion order and retention."""

from __future__ import annotations

import copy

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import domain as d
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import ConflictError, InputError

ROLE = "arn:aws:iam::123456789012:role/hyperpod-vision-studio-execution"
FSX = "fs-0123456789abcdef0"
DOMAIN_ID = "d-abcdefabcdef"
APP_ARN = "arn:aws:sso::123456789012:application/ssoins-1234567890abcdef/apl-1234567890abcdef"


def params(**overrides):
    base = {
        "state": "present", "team": "vision", "name_prefix": "hyperpod", "name": None, "auth_mode": None,
        "vpc_id": "vpc-1", "subnet_ids": ["subnet-b", "subnet-a"], "security_group_ids": ["sg-1"],
        "app_network_access_type": "VpcOnly", "execution_role": ROLE, "fsx_lustre": {"file_system_id": FSX, "path": "/vision"},
        "studio_web_portal": None, "default_landing_uri": None, "tag_propagation": True,
        "user_profiles": [{"name": "alice", "sso_user_name": None, "execution_role": None, "fsx_path": None}],
        "purge_user_profiles": False, "identity_center_group": "TeamVision", "identity_center_instance_arn": None,
        "retain_home_efs": True, "cost_center": "CC-1001", "tag_keys": None, "tags": None, "purge_tags": True, "wait_timeout": 30,
    }
    base.update(overrides)
    return base


def described_domain(**overrides):
    domain = {
        "DomainId": DOMAIN_ID, "DomainArn": "arn:aws:sagemaker:us-east-1:123456789012:domain/" + DOMAIN_ID,
        "DomainName": "hyperpod-vision", "AuthMode": "SSO", "Status": "InService", "VpcId": "vpc-1",
        "SubnetIds": ["subnet-a", "subnet-b"], "AppNetworkAccessType": "VpcOnly", "TagPropagation": "ENABLED",
        "HomeEfsFileSystemId": "fs-0000aaaa", "SingleSignOnApplicationArn": APP_ARN,
        "DefaultUserSettings": {
            "ExecutionRole": ROLE, "SecurityGroups": ["sg-1"],
            "CustomFileSystemConfigs": [{"FSxLustreFileSystemConfig": {"FileSystemId": FSX, "FileSystemPath": "/vision"}}],
        },
    }
    domain.update(overrides)
    return domain


TAGS = {"team": "vision", "cost-center": "CC-1001", "managed-by": "hyperpod.tenancy"}


def profile(name, sso=None, **settings):
    return {"DomainId": DOMAIN_ID, "UserProfileName": name, "Status": "InService", "SingleSignOnUserIdentifier": "UserName",
            "SingleSignOnUserValue": sso or name, "UserSettings": settings}


# ---------------------------------------------------------------- views


def test_an_unchanged_domain_has_equal_views():
    current = d.current_view(described_domain(), TAGS, {"alice": profile("alice")}, ["g-1"])
    assert d.desired_view(params(), current, TAGS, "g-1") == current


def summary(name, status="InService"):
    """A ListUserProfiles entry: no Identity Center user, no settings."""
    return {"DomainId": DOMAIN_ID, "UserProfileName": name, "Status": status, "CreationTime": "t0", "LastModifiedTime": "t1"}


def test_a_profile_compares_only_the_options_given_for_it():
    wanted = [
        {"name": "alice"},
        {"name": "bob", "fsx_path": "/vision/home/bob"},
        {"name": "carol", "sso_user_name": "carol.smith", "execution_role": ROLE},
    ]
    assert d.profile_keys(params(user_profiles=wanted), "SSO") == {
        "bob": ("custom_file_systems",),
        "carol": ("single_sign_on_user_value", "execution_role"),
    }
    assert d.profile_keys(params(user_profiles=wanted), "IAM")["carol"] == ("execution_role",)
    assert d.profile_keys(params(user_profiles=None), "SSO") == {}


def test_a_profile_without_compared_options_has_the_same_view_listed_or_described():
    keys = d.profile_keys(params(), "SSO")
    listed = d.current_view(described_domain(), TAGS, {"alice": summary("alice")}, ["g-1"], keys)
    described = d.current_view(described_domain(), TAGS, {"alice": profile("alice", ExecutionRole=ROLE)}, ["g-1"], keys)
    assert listed == described
    assert listed["user_profiles"] == {"alice": {}}
    assert d.desired_view(params(), listed, TAGS, "g-1") == listed


def test_a_new_profile_is_created_with_everything_but_viewed_with_what_is_compared():
    wanted = params(user_profiles=[{"name": "dave"}, {"name": "erin", "sso_user_name": "erin.e", "fsx_path": "/vision/home/erin"}])
    desired = d.desired_view(wanted, {}, TAGS, "g-1")
    assert desired["user_profiles"]["dave"] == {}
    assert desired["user_profiles"]["erin"] == {
        "single_sign_on_user_value": "erin.e",
        "custom_file_systems": [{"fsx_lustre_file_system_id": FSX, "path": "/vision"}, {"fsx_lustre_file_system_id": FSX, "path": "/vision/home/erin"}],
    }
    request = d.create_profile_request(DOMAIN_ID, "dave", d.profile_settings(wanted, {"name": "dave"}, "SSO"), TAGS)
    assert request["SingleSignOnUserValue"] == "dave" and "UserSettings" not in request
    # What AWS answers for the created profiles gives back the desired views.
    created = {
        "dave": profile("dave"),
        "erin": profile("erin", "erin.e", CustomFileSystemConfigs=[d.fsx_config(FSX, "/vision"), d.fsx_config(FSX, "/vision/home/erin")]),
    }
    after = d.current_view(described_domain(), TAGS, created, ["g-1"], d.profile_keys(wanted, "SSO"))
    assert after["user_profiles"] == desired["user_profiles"]


def test_unset_options_leave_the_domain_alone():
    current = d.current_view(described_domain(StudioWebPortal="ENABLED"), TAGS, {"alice": profile("alice"), "zed": profile("zed")}, ["g-1"])
    unset = params(vpc_id=None, subnet_ids=None, security_group_ids=None, app_network_access_type=None, execution_role=None,
                   fsx_lustre=None, user_profiles=None, identity_center_group=None, tag_propagation=None)
    assert d.desired_view(unset, current, TAGS, None) == current


def test_profiles_not_listed_go_only_with_purge():
    current = d.current_view(described_domain(), TAGS, {"alice": profile("alice"), "zed": profile("zed")}, ["g-1"])
    kept = d.desired_view(params(), current, TAGS, "g-1")
    purged = d.desired_view(params(purge_user_profiles=True), current, TAGS, "g-1")
    assert sorted(kept["user_profiles"]) == ["alice", "zed"]
    assert sorted(purged["user_profiles"]) == ["alice"]


def test_a_home_path_is_mounted_besides_the_team_directory():
    wanted = params(user_profiles=[{"name": "bob", "fsx_path": "/vision/home/bob"}])
    request = d.create_profile_request(DOMAIN_ID, "bob", d.profile_settings(wanted, wanted["user_profiles"][0], "SSO"), TAGS)
    assert request["SingleSignOnUserIdentifier"] == "UserName"
    assert request["SingleSignOnUserValue"] == "bob"
    assert [c["FSxLustreFileSystemConfig"]["FileSystemPath"] for c in request["UserSettings"]["CustomFileSystemConfigs"]] == ["/vision", "/vision/home/bob"]


def test_create_request_carries_tags_propagation_and_the_team_directory():
    view = d.desired_view(params(), {}, TAGS, "g-1")
    request = d.create_domain_request(view)
    assert request["DomainName"] == "hyperpod-vision"
    assert request["AuthMode"] == "SSO"
    assert request["TagPropagation"] == "ENABLED"
    assert request["SubnetIds"] == ["subnet-a", "subnet-b"]
    assert request["DefaultUserSettings"] == {
        "ExecutionRole": ROLE, "SecurityGroups": ["sg-1"],
        "CustomFileSystemConfigs": [{"FSxLustreFileSystemConfig": {"FileSystemId": FSX, "FileSystemPath": "/vision"}}],
    }
    assert {"Key": "cost-center", "Value": "CC-1001"} in request["Tags"]


def test_update_request_sends_only_what_differs():
    current = d.current_view(described_domain(), TAGS, {}, [])
    desired = d.desired_view(params(fsx_lustre={"file_system_id": FSX, "path": "/shared"}, studio_web_portal="enabled"), current, TAGS)
    request = d.update_domain_request(DOMAIN_ID, current, desired)
    assert request == {
        "DomainId": DOMAIN_ID,
        "DefaultUserSettings": {
            "CustomFileSystemConfigs": [{"FSxLustreFileSystemConfig": {"FileSystemId": FSX, "FileSystemPath": "/shared"}}],
            "StudioWebPortal": "ENABLED",
        },
    }
    assert d.update_domain_request(DOMAIN_ID, current, current) is None


def test_check_mode_prediction_has_the_shape_of_the_result():
    current = d.current_view(described_domain(), TAGS, {"alice": summary("alice", "Pending")}, ["g-1"], {})
    wanted = params(user_profiles=[{"name": "bob", "fsx_path": "/vision/home/bob"}, {"name": "carol", "sso_user_name": "carol.c"}], studio_web_portal="enabled")
    desired = d.desired_view(wanted, current, TAGS, "g-1")
    predicted = d.DomainManager.predicted(desired, described_domain(), current, {"alice": "Pending"})
    assert predicted["domain_id"] == DOMAIN_ID
    assert predicted["default_user_settings"]["studio_web_portal"] == "ENABLED"
    assert predicted["default_user_settings"]["execution_role"] == ROLE
    assert [p["user_profile_name"] for p in predicted["user_profiles"]] == ["alice", "bob", "carol"]
    alice, bob, carol = predicted["user_profiles"]
    assert alice == {"domain_id": DOMAIN_ID, "user_profile_name": "alice", "status": "Pending", "user_settings": {}}
    assert "single_sign_on_user_value" not in bob and bob["status"] == "InService"
    paths = [c["f_sx_lustre_file_system_config"]["file_system_path"] for c in bob["user_settings"]["custom_file_system_configs"]]
    assert paths == ["/vision", "/vision/home/bob"]
    assert carol["single_sign_on_user_value"] == "carol.c" and carol["single_sign_on_user_identifier"] == "UserName"
    assert predicted["identity_center_group_ids"] == ["g-1"]


# ---------------------------------------------------------------- checks before any call


@pytest.mark.parametrize(
    "overrides, expected",
    [
        ({}, None),
        ({"user_profiles": [{"name": "alice.smith"}]}, "UserProfileName pattern"),
        ({"user_profiles": [{"name": "alice"}, {"name": "alice"}]}, "listed twice"),
        ({"user_profiles": [{"name": "bob", "fsx_path": "/home/bob"}], "fsx_lustre": None}, "fsx_path needs fsx_lustre"),
        ({"user_profiles": [{"name": "bob", "fsx_path": "home bob"}]}, "must start with /"),
        ({"auth_mode": "IAM"}, "identity_center_group applies only to auth_mode SSO"),
        ({"auth_mode": "IAM", "identity_center_group": None, "user_profiles": [{"name": "a", "sso_user_name": "b"}]}, "sso_user_name applies only"),
        ({"execution_role": "studio-role"}, "is not an IAM role ARN"),
        ({"security_group_ids": ["sg-%d" % i for i in range(6)]}, "at most 5"),
        ({"fsx_lustre": {"file_system_id": "vol-1", "path": "/"}}, "not an FSx file system id"),
        ({"team": "Vision_Team"}, "lower-case letters"),
        ({"name": "team_vision"}, "DomainName pattern"),
        ({"domain_id": "D-ABC"}, "is not a domain id"),
        ({"domain_id": DOMAIN_ID}, None),
    ],
)
def test_input_problems(overrides, expected):
    problems = d.input_problems(params(**overrides))
    if expected is None:
        assert problems == []
    else:
        assert any(expected in p for p in problems), problems


def test_what_cannot_change_in_place():
    current = d.current_view(described_domain(), TAGS, {"alice": profile("alice")}, [], {"alice": ("single_sign_on_user_value",)})
    desired = copy.deepcopy(current)
    desired.update(auth_mode="IAM", vpc_id="vpc-2", app_network_access_type="PublicInternetOnly", subnet_ids=["subnet-a"])
    desired["user_profiles"]["alice"]["single_sign_on_user_value"] = "alice2"
    problems = d.change_problems(current, desired, running_apps=["default"])
    text = " | ".join(problems)
    assert "auth_mode cannot change from SSO to IAM" in text
    assert "vpc_id cannot change from vpc-1 to vpc-2" in text
    assert "app_network_access_type can only change when no apps run" in text
    assert "subnets can only be removed" in text
    assert "cannot move to alice2" in text
    assert d.change_problems(current, dict(desired, auth_mode="SSO", vpc_id="vpc-1", user_profiles=current["user_profiles"]), running_apps=[]) == []


def test_a_profile_of_another_identity_center_user_is_refused_only_when_sso_user_name_is_given():
    wanted = params(user_profiles=[{"name": "alice", "sso_user_name": "alice"}])
    keys = d.profile_keys(wanted, "SSO")
    current = d.current_view(described_domain(), TAGS, {"alice": profile("alice", "mallory")}, ["g-1"], keys)
    problems = d.change_problems(current, d.desired_view(wanted, current, TAGS, "g-1"), running_apps=[])
    assert problems == ["user profile alice belongs to Identity Center user mallory and cannot move to alice: remove it first"]
    # Without sso_user_name the profile is not described, so its user is not known and not compared.
    unnamed = d.current_view(described_domain(), TAGS, {"alice": summary("alice")}, ["g-1"], d.profile_keys(params(), "SSO"))
    assert d.change_problems(unnamed, d.desired_view(params(), unnamed, TAGS, "g-1"), running_apps=[]) == []


def test_a_new_domain_needs_its_role_and_network():
    desired = d.desired_view(params(execution_role=None, security_group_ids=None, subnet_ids=None, vpc_id=None), {}, TAGS)
    problems = " | ".join(d.new_domain_problems(desired))
    assert "execution_role is required" in problems
    assert "vpc_id and subnet_ids are required" in problems
    assert "security_group_ids are required" in problems


# ---------------------------------------------------------------- the manager against a recording client


class FakeAws:
    """sagemaker, sso-admin and identitystore clients that answer from a small state and record every call."""

    def __init__(self, domain=None, profiles=(), spaces=(), apps=(), assignments=()):
        self.calls = []
        self.domain = domain
        self.profiles = dict((p["UserProfileName"], p) for p in profiles)
        self.spaces = list(spaces)
        self.apps = list(apps)
        self.assignments = list(assignments)

    def __call__(self, service):
        return self

    # paginators: build_full_result() over a single page
    def get_paginator(self, name):
        fake = self

        class Paginator:
            def paginate(self, PaginationConfig=None, **kwargs):  # noqa: N803 - botocore's name
                class Pages:
                    def build_full_result(self):
                        return getattr(fake, name)(**kwargs)

                return Pages()

        return Paginator()

    def _record(self, name, **kwargs):
        self.calls.append((name, kwargs))

    def list_domains(self):
        self._record("list_domains")
        return {"Domains": [self.domain] if self.domain else []}

    def describe_domain(self, DomainId):
        self._record("describe_domain", DomainId=DomainId)
        if self.domain is None or self.domain["DomainId"] != DomainId:
            from botocore.exceptions import ClientError

            raise ClientError({"Error": {"Code": "ResourceNotFound", "Message": "gone"}}, "DescribeDomain")
        return copy.deepcopy(self.domain)

    def list_tags(self, ResourceArn):
        return {"Tags": [{"Key": k, "Value": v} for k, v in TAGS.items()]}

    def list_user_profiles(self, DomainIdEquals):
        self._record("list_user_profiles", DomainIdEquals=DomainIdEquals)
        return {"UserProfiles": [summary(n, p["Status"]) for n, p in self.profiles.items()]}

    def describe_user_profile(self, DomainId, UserProfileName):
        self._record("describe_user_profile", UserProfileName=UserProfileName)
        if UserProfileName not in self.profiles:
            from botocore.exceptions import ClientError

            raise ClientError({"Error": {"Code": "ResourceNotFound", "Message": "gone"}}, "DescribeUserProfile")
        return copy.deepcopy(self.profiles[UserProfileName])

    def list_application_assignments(self, ApplicationArn):
        return {"ApplicationAssignments": [{"ApplicationArn": ApplicationArn, "PrincipalId": g, "PrincipalType": "GROUP"} for g in self.assignments]}

    def list_spaces(self, DomainIdEquals):
        return {"Spaces": [{"SpaceName": s, "Status": "InService", "OwnershipSettingsSummary": {"OwnerUserProfileName": o}} for s, o in self.spaces]}

    def describe_space(self, DomainId, SpaceName):
        if SpaceName not in [s for s, unused in self.spaces]:
            from botocore.exceptions import ClientError

            raise ClientError({"Error": {"Code": "ResourceNotFound", "Message": "gone"}}, "DescribeSpace")
        return {"SpaceName": SpaceName, "Status": "InService"}

    def list_apps(self, DomainIdEquals):
        return {"Apps": copy.deepcopy(self.apps)}

    def delete_app(self, **kwargs):
        self._record("delete_app", **kwargs)
        key = (kwargs.get("UserProfileName"), kwargs.get("SpaceName"), kwargs["AppType"], kwargs["AppName"])
        for app in self.apps:
            if (app.get("UserProfileName"), app.get("SpaceName"), app["AppType"], app["AppName"]) == key:
                app["Status"] = "Deleted"

    def delete_space(self, DomainId, SpaceName):
        self._record("delete_space", SpaceName=SpaceName)
        self.spaces = [(s, o) for s, o in self.spaces if s != SpaceName]

    def delete_user_profile(self, DomainId, UserProfileName):
        self._record("delete_user_profile", UserProfileName=UserProfileName)
        self.profiles.pop(UserProfileName)

    def delete_domain(self, DomainId, RetentionPolicy):
        self._record("delete_domain", DomainId=DomainId, RetentionPolicy=RetentionPolicy)
        self.domain = None


def _writes(fake):
    return [(name, kwargs) for name, kwargs in fake.calls if name.startswith(("delete", "create", "update"))]


def _loaded_fake():
    return FakeAws(
        domain=described_domain(),
        profiles=[profile("alice"), profile("bob")],
        spaces=[("bob-space", "bob")],
        apps=[
            {"DomainId": DOMAIN_ID, "SpaceName": "bob-space", "AppType": "JupyterLab", "AppName": "default", "Status": "InService"},
            {"DomainId": DOMAIN_ID, "UserProfileName": "alice", "AppType": "JupyterServer", "AppName": "default", "Status": "InService"},
            {"DomainId": DOMAIN_ID, "UserProfileName": "alice", "AppType": "KernelGateway", "AppName": "old", "Status": "Deleted"},
        ],
    )


@pytest.mark.parametrize("retain, policy", [(True, "Retain"), (False, "Delete")])
def test_absent_deletes_apps_spaces_profiles_then_the_domain_with_the_retention_asked(retain, policy):
    fake = _loaded_fake()
    changed, before, after, result, retained = d.DomainManager(fake, params(state="absent", retain_home_efs=retain)).ensure_absent()
    assert changed and after == {} and result == {}
    assert sorted(before["user_profiles"]) == ["alice", "bob"]
    writes = _writes(fake)
    names = [name for name, unused in writes]
    assert names == ["delete_app", "delete_app", "delete_space", "delete_user_profile", "delete_user_profile", "delete_domain"]
    assert all(kwargs.get("AppName") != "old" for unused, kwargs in writes)  # a Deleted app is not deleted again
    assert writes[-1][1]["RetentionPolicy"] == {"HomeEfsFileSystem": policy}
    assert retained == ({"home_efs_file_system_id": "fs-0000aaaa"} if retain else {})


def test_absent_in_check_mode_writes_nothing_and_reports_what_it_would_keep():
    fake = _loaded_fake()
    changed, unused_1, after, unused_2, retained = d.DomainManager(fake, params(state="absent"), check_mode=True).ensure_absent()
    assert changed and after == {}
    assert retained == {"home_efs_file_system_id": "fs-0000aaaa"}
    assert _writes(fake) == []


def test_absent_without_a_domain_is_not_a_change():
    fake = FakeAws()
    assert d.DomainManager(fake, params(state="absent")).ensure_absent()[0] is False
    assert _writes(fake) == []


def test_an_auth_mode_change_fails_before_any_write():
    fake = _loaded_fake()
    with pytest.raises(InputError) as excinfo:
        d.DomainManager(fake, params(auth_mode="IAM", identity_center_group=None, user_profiles=None)).ensure_present()
    assert "auth_mode cannot change from SSO to IAM" in excinfo.value.message
    assert _writes(fake) == []


class FakePresentAws(FakeAws):
    """FakeAws plus what ensure_present calls: Identity Center lookups and the writes it makes."""

    users = ("alice", "bob", "carol")

    def list_instances(self):
        return {"Instances": [{"InstanceArn": "arn:aws:sso:::instance/ssoins-1234567890abcdef", "IdentityStoreId": "d-1234567890"}]}

    def get_group_id(self, IdentityStoreId, AlternateIdentifier):
        name = AlternateIdentifier["UniqueAttribute"]["AttributeValue"]
        if name != "TeamVision":
            from botocore.exceptions import ClientError

            raise ClientError({"Error": {"Code": "ResourceNotFoundException", "Message": "GROUP not found."}}, "GetGroupId")
        return {"GroupId": "g-1", "IdentityStoreId": IdentityStoreId}

    def get_user_id(self, IdentityStoreId, AlternateIdentifier):
        name = AlternateIdentifier["UniqueAttribute"]["AttributeValue"]
        if name not in self.users:
            from botocore.exceptions import ClientError

            raise ClientError({"Error": {"Code": "ResourceNotFoundException", "Message": "USER not found."}}, "GetUserId")
        return {"UserId": "u-" + name, "IdentityStoreId": IdentityStoreId}

    def is_member_in_groups(self, IdentityStoreId, MemberId, GroupIds):
        self._record("is_member_in_groups", MemberId=MemberId, GroupIds=GroupIds)
        return {"Results": [{"GroupId": g, "MemberId": MemberId, "MembershipExists": g == "g-1"} for g in GroupIds]}

    def create_user_profile(self, **request):
        self._record("create_user_profile", **request)
        self.profiles[request["UserProfileName"]] = profile(request["UserProfileName"], request.get("SingleSignOnUserValue"), **request.get("UserSettings", {}))

    def update_domain(self, **request):
        self._record("update_domain", **request)

    def create_application_assignment(self, **request):
        self._record("create_application_assignment", **request)
        self.assignments.append(request["PrincipalId"])

    def delete_application_assignment(self, **request):
        self._record("delete_application_assignment", **request)
        self.assignments.remove(request["PrincipalId"])


def test_present_creates_new_profiles_purges_old_ones_after_their_apps_and_swaps_the_group():
    fake = FakePresentAws(
        domain=described_domain(),
        profiles=[profile("alice"), profile("bob")],
        spaces=[("bob-space", "bob")],
        apps=[{"DomainId": DOMAIN_ID, "SpaceName": "bob-space", "AppType": "JupyterLab", "AppName": "default", "Status": "InService"}],
        assignments=["g-old"],
    )
    wanted = [{"name": "alice"}, {"name": "carol"}]
    changed, before, after, result = d.DomainManager(fake, params(user_profiles=wanted, purge_user_profiles=True)).ensure_present()
    assert changed
    assert before["identity_center_group_ids"] == ["g-old"]
    assert after["identity_center_group_ids"] == ["g-1"]
    assert sorted(after["user_profiles"]) == ["alice", "carol"]
    names = [name for name, unused in _writes(fake)]
    # The new group is assigned before its members' profiles are created; the old one goes after the profiles.
    assert names == [
        "create_application_assignment", "delete_app", "delete_space", "delete_user_profile", "create_user_profile", "delete_application_assignment",
    ]
    created = dict(_writes(fake))["create_user_profile"]
    assert created["SingleSignOnUserIdentifier"] == "UserName" and created["SingleSignOnUserValue"] == "carol"
    assert {"Key": "team", "Value": "vision"} in created["Tags"]
    assert [p["user_profile_name"] for p in result["user_profiles"]] == ["alice", "carol"]


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"user_profiles": [{"name": "alice"}, {"name": "mallory"}]}, "Identity Center has no user named mallory"),
        ({"identity_center_group": "TeamNobody"}, "Identity Center group 'TeamNobody' does not exist"),

        ({"vpc_id": "vpc-2"}, "vpc_id cannot change from vpc-1 to vpc-2"),
    ],
)
def test_present_refuses_before_any_write(overrides, message):
    fake = FakePresentAws(domain=described_domain(), profiles=[profile("alice")], assignments=["g-1"])
    with pytest.raises(InputError) as excinfo:
        d.DomainManager(fake, params(**overrides)).ensure_present()
    assert message in excinfo.value.message
    assert _writes(fake) == []


def test_an_sso_domain_without_an_application_arn_is_left_alone_with_a_warning_naming_it_every_run():
    legacy = described_domain()
    del legacy["SingleSignOnApplicationArn"]
    fake = FakePresentAws(domain=legacy, profiles=[profile("alice")])
    warnings = []
    for check_mode in (True, False):
        changed, before, after, result = d.DomainManager(fake, params(), check_mode=check_mode, warn=warnings.append).ensure_present()
        assert not changed and before == after
    assert _writes(fake) == []
    assert len(warnings) == 2
    assert "domain hyperpod-vision (%s)" % DOMAIN_ID in warnings[0] and "SingleSignOnApplicationArn" in warnings[0]
    assert "group TeamVision is not assigned" in warnings[0] and "IAM Identity Center console" in warnings[0]


def test_a_new_profile_on_a_domain_without_an_application_arn_is_created_without_an_assignment():
    legacy = described_domain()
    del legacy["SingleSignOnApplicationArn"]
    fake = FakePresentAws(domain=legacy, profiles=[profile("alice")])
    warnings = []
    wanted = params(user_profiles=[{"name": "alice"}, {"name": "bob"}])
    changed, unused_1, unused_2, unused_3 = d.DomainManager(fake, wanted, warn=warnings.append).ensure_present()
    assert changed and [name for name, unused in _writes(fake)] == ["create_user_profile"]
    assert len(warnings) == 1


@pytest.mark.parametrize("group, assignments, refused", [(None, [], True), (None, ["g-other"], True), (None, ["g-1"], False), ("TeamVision", [], False)])
def test_a_profile_is_made_only_for_a_user_the_application_will_know(group, assignments, refused):
    fake = FakePresentAws(domain=described_domain(), profiles=[profile("alice")], assignments=assignments)
    manager = d.DomainManager(fake, params(identity_center_group=group, user_profiles=[{"name": "alice"}, {"name": "bob"}]))
    if not refused:
        assert manager.ensure_present()[0]
        assert [c["UserProfileName"] for c in _calls(fake, "create_user_profile")] == ["bob"]
        return
    with pytest.raises(InputError) as excinfo:
        manager.ensure_present()
    assert "domain hyperpod-vision: bob is not assigned to the domain's Identity Center application" in excinfo.value.message
    assert _writes(fake) == []


def test_present_without_changes_writes_nothing():
    fake = FakePresentAws(domain=described_domain(), profiles=[profile("alice")], assignments=["g-1"])
    changed, before, after, unused = d.DomainManager(fake, params()).ensure_present()
    assert not changed and before == after
    assert _writes(fake) == []


# ---------------------------------------------------------------- reads: profiles described only when compared, the domain by id


def _calls(fake, name):
    return [kwargs for call, kwargs in fake.calls if call == name]


def home(name):
    return [d.fsx_config(FSX, "/vision"), d.fsx_config(FSX, "/vision/home/" + name)]


def test_a_no_op_run_describes_only_the_profiles_it_compares():
    fake = FakePresentAws(domain=described_domain(), profiles=[profile("alice"), profile("bob", CustomFileSystemConfigs=home("bob"))], assignments=["g-1"])
    wanted = params(user_profiles=[{"name": "alice"}, {"name": "bob", "fsx_path": "/vision/home/bob"}])
    changed, before, after, result = d.DomainManager(fake, wanted).ensure_present()
    assert not changed and before == after
    assert [c["UserProfileName"] for c in _calls(fake, "describe_user_profile")] == ["bob"]
    assert result["user_profiles"][0] == {"domain_id": DOMAIN_ID, "user_profile_name": "alice", "status": "InService", "user_settings": {}}
    bob_settings = result["user_profiles"][1]["user_settings"]
    assert bob_settings["custom_file_system_configs"][1]["f_sx_lustre_file_system_config"]["file_system_path"] == "/vision/home/bob"


def test_check_mode_predicts_the_result_and_a_rerun_repeats_it():
    fake = FakePresentAws(domain=described_domain(), profiles=[profile("alice"), profile("zed")], assignments=["g-1"])
    wanted = params(
        user_profiles=[{"name": "alice"}, {"name": "bob", "fsx_path": "/vision/home/bob"}, {"name": "carol", "sso_user_name": "carol"}],
        purge_user_profiles=True,
    )
    check = d.DomainManager(fake, wanted, check_mode=True).ensure_present()
    assert _writes(fake) == []
    run = d.DomainManager(fake, wanted).ensure_present()
    check_again = d.DomainManager(fake, wanted, check_mode=True).ensure_present()
    again = d.DomainManager(fake, wanted).ensure_present()
    assert check[0] and run[0] and not check_again[0] and not again[0]
    assert check[2] == run[2] == again[1] == again[2]
    assert check[3]["user_profiles"] == run[3]["user_profiles"] == again[3]["user_profiles"]
    assert again[3] == run[3] == check_again[3]
    assert [p["user_profile_name"] for p in run[3]["user_profiles"]] == ["alice", "bob", "carol"]
    assert run[2]["user_profiles"] == {
        "alice": {},
        "bob": {"custom_file_systems": [{"fsx_lustre_file_system_id": FSX, "path": "/vision"}, {"fsx_lustre_file_system_id": FSX, "path": "/vision/home/bob"}]},
        "carol": {"single_sign_on_user_value": "carol"},
    }
    created = [c["UserProfileName"] for c in _calls(fake, "create_user_profile")]
    assert created == ["bob", "carol"] and fake.profiles["bob"]["SingleSignOnUserValue"] == "bob"


def test_a_resolved_domain_id_replaces_the_name_lookup_and_is_described_once():
    fake = FakePresentAws(domain=described_domain(), profiles=[profile("alice")], assignments=["g-1"])
    changed, unused_1, unused_2, result = d.DomainManager(fake, params(domain_id=DOMAIN_ID)).ensure_present()
    assert not changed and result["domain_id"] == DOMAIN_ID
    assert _calls(fake, "list_domains") == [] and _calls(fake, "describe_user_profile") == []
    assert _calls(fake, "describe_domain") == [{"DomainId": DOMAIN_ID}]


def test_profiles_listed_earlier_in_the_run_are_not_listed_again_and_are_compared():
    fake = FakePresentAws(domain=described_domain(), profiles=[profile("alice"), profile("bob")], assignments=["g-1"])
    listed = [{"DomainId": DOMAIN_ID, "UserProfileName": "alice", "Status": "InService"}]
    wanted = params(domain_id=DOMAIN_ID, known={"user_profiles": listed}, user_profiles=[{"name": "alice"}, {"name": "bob"}])
    changed, before, after, unused = d.DomainManager(fake, wanted, check_mode=True).ensure_present()
    assert _calls(fake, "list_user_profiles") == []
    # The list is what the run compares against: bob, missing from it, is a profile to create.
    assert changed and sorted(before["user_profiles"]) == ["alice"] and sorted(after["user_profiles"]) == ["alice", "bob"]
    # Outside check mode a list from earlier in the run decides nothing: the live list (bob exists) says no change.
    changed, unused_before, unused_after, unused_result = d.DomainManager(fake, wanted).ensure_present()
    assert not changed and _writes(fake) == [] and _calls(fake, "list_user_profiles") == [{"DomainIdEquals": DOMAIN_ID}]
    fake.calls.clear()
    # Listed for another domain id than the one found: the module lists this domain's itself.
    d.DomainManager(fake, params(known={"user_profiles": listed}, user_profiles=[{"name": "alice"}, {"name": "bob"}]), check_mode=True).ensure_present()
    assert _calls(fake, "list_user_profiles") == [{"DomainIdEquals": DOMAIN_ID}]


def test_tags_listed_earlier_in_the_run_are_not_listed_again_and_decide_the_owner():
    fake = FakePresentAws(domain=described_domain(), profiles=[profile("alice")], assignments=["g-1"])
    listed_tags = []
    live = fake.list_tags
    fake.list_tags = lambda ResourceArn: listed_tags.append(ResourceArn) or live(ResourceArn=ResourceArn)  # noqa: N803 - botocore's name
    changed, before, unused_after, unused_result = d.DomainManager(fake, params(domain_id=DOMAIN_ID, known={"tags": dict(TAGS)})).ensure_present()
    assert not changed and before["tags"] == TAGS and listed_tags == []
    # What shared_info read is what the owner check sees: unmarked tags are refused without a read (adopt takes them over).
    with pytest.raises(InputError, match=r"SageMaker domain hyperpod-vision \(%s\) exists and was not made by hyperpod.tenancy" % DOMAIN_ID):
        d.DomainManager(fake, params(domain_id=DOMAIN_ID, known={"tags": {"owner": "someone"}}), check_mode=True).ensure_present()
    assert listed_tags == []
    changed = d.DomainManager(fake, params(domain_id=DOMAIN_ID, known={"tags": {}}, adopt=True), check_mode=True).ensure_present()[0]
    assert changed and listed_tags == []
    # Outside check mode a difference is planned from live tags (they are the team's: nothing to write).
    changed = d.DomainManager(fake, params(domain_id=DOMAIN_ID, known={"tags": {"team": "vision", "managed-by": "hyperpod.tenancy"}})).ensure_present()[0]
    assert not changed and _writes(fake) == [] and listed_tags == [described_domain()["DomainArn"]]
    # Tags for another domain id than the one found: the module lists this domain's itself.
    listed_tags.clear()
    d.DomainManager(fake, params(known={"tags": {"owner": "someone"}}), check_mode=True).ensure_present()
    assert listed_tags == [described_domain()["DomainArn"]]


def test_of_two_domains_created_at_once_the_later_is_deleted_by_the_run_that_created_it():
    fake = FakeAws()
    listing = [
        dict(described_domain(), DomainId="d-later", CreationTime=2),
        dict(described_domain(), DomainId="d-first", CreationTime=1),
        dict(described_domain(), DomainId="d-gone", CreationTime=0, Status="Deleting"),
    ]
    fake.list_domains = lambda: {"Domains": listing}
    manager = d.DomainManager(fake, params())
    manager._yield_to_an_earlier_twin("d-first")
    assert _writes(fake) == []
    with pytest.raises(ConflictError, match="another run created d-first .* deleted the one it created \\(d-later\\)"):
        manager._yield_to_an_earlier_twin("d-later")
    assert _writes(fake) == [("delete_domain", {"DomainId": "d-later", "RetentionPolicy": {"HomeEfsFileSystem": "Delete"}})]


def test_profiles_by_domain_come_from_one_list_of_every_domain():
    fake = FakeAws(profiles=[profile("alice")])
    fake.list_user_profiles = lambda **kwargs: fake.calls.append(("list_user_profiles", kwargs)) or {
        "UserProfiles": [summary("alice"), dict(summary("zed"), DomainId="d-other")]
    }
    found = d.profiles_by_domain(fake, [DOMAIN_ID, "d-empty"])
    assert found == {DOMAIN_ID: [{"DomainId": DOMAIN_ID, "UserProfileName": "alice", "Status": "InService"}], "d-empty": []}
    assert _calls(fake, "list_user_profiles") == [{}]


@pytest.mark.parametrize(
    "domain, message",
    [
        (None, "domain_id d-abcdefabcdef \\(domain hyperpod-vision\\) does not exist"),
        (described_domain(DomainName="hyperpod-nlp"), "domain_id d-abcdefabcdef is domain hyperpod-nlp, not hyperpod-vision"),
        (described_domain(Status="Deleting"), "is being deleted"),
    ],
)
@pytest.mark.parametrize("check_mode", [False, True])
def test_a_resolved_domain_id_that_is_gone_or_another_domain_fails_and_creates_nothing(domain, message, check_mode):
    fake = FakePresentAws(domain=domain, assignments=["g-1"])
    with pytest.raises(InputError, match=message):
        d.DomainManager(fake, params(domain_id=DOMAIN_ID), check_mode=check_mode).ensure_present()
    assert _writes(fake) == [] and _calls(fake, "list_domains") == []


def test_absent_with_a_resolved_domain_id_already_gone_is_no_change_and_another_domain_fails():
    assert d.DomainManager(FakeAws(), params(state="absent", domain_id=DOMAIN_ID)).ensure_absent()[0] is False
    fake = FakeAws(domain=described_domain(DomainName="hyperpod-nlp"))
    with pytest.raises(InputError, match="is domain hyperpod-nlp"):
        d.DomainManager(fake, params(state="absent", domain_id=DOMAIN_ID)).ensure_absent()
    assert _writes(fake) == []


def test_absent_does_not_describe_profiles():
    fake = _loaded_fake()
    d.DomainManager(fake, params(state="absent"), check_mode=True).ensure_absent()
    assert _calls(fake, "describe_user_profile") == []


# ---------------------------------------------------------------- against the sandbox


def _sandbox_params(seed, **overrides):
    return params(
        vpc_id=seed["vpc_id"], subnet_ids=seed["subnet_ids"], security_group_ids=seed["security_group_ids"],
        execution_role=seed["cluster_execution_role_arn"], fsx_lustre={"file_system_id": seed["fsx_file_system_id"], "path": "/vision"},
        identity_store_id=seed["identity_store_id"], wait_timeout=60, **overrides
    )


def test_against_the_sandbox_profiles_follow_the_assignment_and_a_legacy_domain_warns(seeded):
    client, seed = seeded
    clients = client.boto3_client
    wanted = _sandbox_params(seed, user_profiles=[{"name": "alice"}, {"name": "bob"}])
    changed, unused_1, after, result = d.DomainManager(clients, wanted).ensure_present()
    assert changed and sorted(after["user_profiles"]) == ["alice", "bob"]
    assert result["identity_center_group_ids"] == [seed["group_ids"]["TeamVision"]]

    client.configure(legacy_sso_domains=1)
    warnings = []
    legacy = _sandbox_params(seed, name="hyperpod-vision-old", user_profiles=[])
    first = d.DomainManager(clients, legacy, warn=warnings.append).ensure_present()
    second = d.DomainManager(clients, legacy, warn=warnings.append).ensure_present()
    assert first[0] and not second[0]
    assert first[3]["identity_center_group_ids"] == [] and "single_sign_on_application_arn" not in first[3]
    assert len(warnings) == 2 and all("domain hyperpod-vision-old (%s)" % first[3]["domain_id"] in w for w in warnings)


def test_against_the_sandbox_two_domains_of_the_team_name_are_refused_and_a_twin_made_by_this_run_is_deleted(seeded):
    client, seed = seeded
    clients = client.boto3_client
    sm = clients("sagemaker")
    settings = {"ExecutionRole": seed["cluster_execution_role_arn"]}
    first = sm.create_domain(DomainName="hyperpod-vision", AuthMode="SSO", DefaultUserSettings=settings)["DomainId"]
    manager = d.DomainManager(clients, _sandbox_params(seed, user_profiles=[]))
    manager._wait_domain(first, ("InService",))
    # This run created the later twin: it deletes its own and names the first.
    later = sm.create_domain(DomainName="hyperpod-vision", AuthMode="SSO", DefaultUserSettings=settings)["DomainId"]
    with pytest.raises(InputError) as excinfo:
        d.DomainManager(clients, _sandbox_params(seed, user_profiles=[])).ensure_present()
    assert "2 domains are named hyperpod-vision" in excinfo.value.message and first in excinfo.value.message
    manager._wait_domain(later, ("InService",))
    with pytest.raises(ConflictError) as excinfo:
        manager._yield_to_an_earlier_twin(later)
    assert first in excinfo.value.message
    assert [x["DomainId"] for x in sm.list_domains()["Domains"]] == [first]


class RacingAws(FakePresentAws):
    """A teammate makes a space owned by the profile being removed between each list of spaces and the delete, ``races``
    times; SageMaker refuses DeleteUserProfile while the profile owns a space (ResourceInUse)."""

    def __init__(self, races, **kwargs):
        super().__init__(**kwargs)
        self.races = races

    def list_spaces(self, DomainIdEquals):
        listed = super().list_spaces(DomainIdEquals)
        if self.races:
            self.races -= 1
            self.spaces.append(("sneaky-%d" % self.races, "bob"))
        return listed

    def delete_user_profile(self, DomainId, UserProfileName):
        if any(owner == UserProfileName for unused, owner in self.spaces):
            from botocore.exceptions import ClientError

            self._record("delete_user_profile_refused", UserProfileName=UserProfileName)
            raise ClientError({"Error": {"Code": "ResourceInUse", "Message": "owns spaces"}}, "DeleteUserProfile")
        super().delete_user_profile(DomainId, UserProfileName)


def _racing(races):
    return RacingAws(races, domain=described_domain(), profiles=[profile("alice"), profile("bob")], spaces=[("bob-space", "bob")], assignments=["g-1"])


def test_a_space_made_for_a_profile_between_the_list_and_the_delete_is_deleted_in_another_round():
    """Red team H4(c): the profile's removal lists and deletes its spaces again, a bounded number of times."""
    fake = _racing(2)
    changed, before, after, unused = d.DomainManager(fake, params(user_profiles=[{"name": "alice"}], purge_user_profiles=True)).ensure_present()
    assert changed and sorted(after["user_profiles"]) == ["alice"] and "bob" not in fake.profiles
    assert [n for n, unused in fake.calls].count("delete_user_profile_refused") == 2


def test_a_profile_whose_spaces_keep_coming_fails_naming_the_team_and_the_profile():
    fake = _racing(d.PROFILE_REMOVAL_ROUNDS)
    with pytest.raises(d.HyperPodError) as excinfo:
        d.DomainManager(fake, params(user_profiles=[{"name": "alice"}], purge_user_profiles=True)).ensure_present()
    message = excinfo.value.message
    assert message.startswith("team vision: user profile bob of domain %s still has apps or owns spaces after 3 rounds" % DOMAIN_ID), message
    assert [n for n, unused in fake.calls].count("delete_user_profile_refused") == d.PROFILE_REMOVAL_ROUNDS
