"""Identity Center additions in the sandbox: tags, boundaries, asynchronous provisioning, and the SSO role in IAM."""

from __future__ import annotations

import json
import time

import pytest
from botocore.exceptions import ClientError

ACCOUNT = "123456789012"
POLICY = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::b"}]})


def _code(error: pytest.ExceptionInfo) -> str:
    return error.value.response["Error"]["Code"]


@pytest.fixture
def center(sandbox):
    sso, store, iam = sandbox.boto3_client("sso-admin"), sandbox.boto3_client("identitystore"), sandbox.boto3_client("iam")
    instance = sso.list_instances()["Instances"][0]
    group = store.create_group(IdentityStoreId=instance["IdentityStoreId"], DisplayName="TeamVision")["GroupId"]
    created = sso.create_permission_set(InstanceArn=instance["InstanceArn"], Name="hyperpod-vision", Description="Team vision")["PermissionSet"]
    return sso, iam, instance["InstanceArn"], created["PermissionSetArn"], group


def _wait(describe, key):
    deadline = time.monotonic() + 5
    while True:
        status = describe()[key]
        if status["Status"] != "IN_PROGRESS" or time.monotonic() > deadline:
            return status
        time.sleep(0.05)


def _sso_roles(iam):
    return iam.list_roles(PathPrefix="/aws-reserved/sso.amazonaws.com/")["Roles"]


def test_permission_set_arn_matches_the_model_and_names_are_unique(center):
    sso, _, instance, arn, _ = center
    assert arn.startswith("arn:aws:sso:::permissionSet/ssoins-") and "/ps-" in arn
    described = sso.describe_permission_set(InstanceArn=instance, PermissionSetArn=arn)["PermissionSet"]
    assert described["SessionDuration"] == "PT1H"
    with pytest.raises(ClientError) as error:
        sso.create_permission_set(InstanceArn=instance, Name="hyperpod-vision")
    assert _code(error) == "ConflictException"
    with pytest.raises(ClientError) as error:
        sso.create_permission_set(InstanceArn=instance, Name="x" * 33)
    assert _code(error) == "ValidationException"


def test_update_keeps_what_the_request_leaves_out(center):
    sso, _, instance, arn, _ = center
    sso.update_permission_set(InstanceArn=instance, PermissionSetArn=arn, SessionDuration="PT8H")
    described = sso.describe_permission_set(InstanceArn=instance, PermissionSetArn=arn)["PermissionSet"]
    assert described["Description"] == "Team vision" and described["SessionDuration"] == "PT8H"


def test_tags_round_trip_and_validate(center):
    sso, _, instance, arn, _ = center
    sso.tag_resource(InstanceArn=instance, ResourceArn=arn, Tags=[{"Key": "team", "Value": "vision"}, {"Key": "managed-by", "Value": "x"}])
    sso.untag_resource(InstanceArn=instance, ResourceArn=arn, TagKeys=["managed-by"])
    assert sso.list_tags_for_resource(InstanceArn=instance, ResourceArn=arn)["Tags"] == [{"Key": "team", "Value": "vision"}]
    with pytest.raises(ClientError) as error:
        sso.tag_resource(InstanceArn=instance, ResourceArn=arn, Tags=[{"Key": "bad#key", "Value": "v"}])
    assert _code(error) == "ValidationException"
    with pytest.raises(ClientError) as error:
        sso.list_tags_for_resource(InstanceArn=instance, ResourceArn=arn[:-4] + "zzzz")
    assert _code(error) == "ResourceNotFoundException"


def test_permissions_boundary_round_trip(center):
    sso, _, instance, arn, _ = center
    with pytest.raises(ClientError) as error:
        sso.get_permissions_boundary_for_permission_set(InstanceArn=instance, PermissionSetArn=arn)
    assert _code(error) == "ResourceNotFoundException"
    boundary = {"CustomerManagedPolicyReference": {"Name": "TeamBoundary", "Path": "/hyperpod/"}}
    sso.put_permissions_boundary_to_permission_set(InstanceArn=instance, PermissionSetArn=arn, PermissionsBoundary=boundary)
    assert sso.get_permissions_boundary_for_permission_set(InstanceArn=instance, PermissionSetArn=arn)["PermissionsBoundary"] == boundary
    with pytest.raises(ClientError) as error:
        sso.put_permissions_boundary_to_permission_set(
            InstanceArn=instance, PermissionSetArn=arn, PermissionsBoundary=dict(boundary, ManagedPolicyArn="arn:aws:iam::aws:policy/ReadOnlyAccess")
        )
    assert _code(error) == "ValidationException"
    sso.delete_permissions_boundary_from_permission_set(InstanceArn=instance, PermissionSetArn=arn)
    with pytest.raises(ClientError) as error:
        sso.delete_permissions_boundary_from_permission_set(InstanceArn=instance, PermissionSetArn=arn)
    assert _code(error) == "ResourceNotFoundException"


def test_assignment_is_asynchronous_and_creates_the_sso_role(center):
    sso, iam, instance, arn, group = center
    sso.put_inline_policy_to_permission_set(InstanceArn=instance, PermissionSetArn=arn, InlinePolicy=POLICY)
    assignment = dict(InstanceArn=instance, TargetId=ACCOUNT, TargetType="AWS_ACCOUNT", PermissionSetArn=arn, PrincipalType="GROUP", PrincipalId=group)
    started = sso.create_account_assignment(**assignment)["AccountAssignmentCreationStatus"]
    assert started["Status"] == "IN_PROGRESS"
    done = _wait(
        lambda: sso.describe_account_assignment_creation_status(InstanceArn=instance, AccountAssignmentCreationRequestId=started["RequestId"]),
        "AccountAssignmentCreationStatus",
    )
    assert done["Status"] == "SUCCEEDED"
    roles = _sso_roles(iam)
    assert len(roles) == 1
    assert roles[0]["Path"] == "/aws-reserved/sso.amazonaws.com/"
    name = roles[0]["RoleName"]
    assert name.startswith("AWSReservedSSO_hyperpod-vision_") and len(name.rsplit("_", 1)[1]) == 16
    assert json.loads(json.dumps(iam.get_role_policy(RoleName=name, PolicyName="AwsSSOInlinePolicy")["PolicyDocument"])) == json.loads(POLICY)
    with pytest.raises(ClientError) as error:
        sso.create_account_assignment(**assignment)
    assert _code(error) == "ConflictException"
    with pytest.raises(ClientError) as error:
        sso.delete_permission_set(InstanceArn=instance, PermissionSetArn=arn)
    assert _code(error) == "ConflictException"
    removed = sso.delete_account_assignment(**assignment)["AccountAssignmentDeletionStatus"]
    assert removed["Status"] == "IN_PROGRESS"
    assert _sso_roles(iam) == []
    sso.delete_permission_set(InstanceArn=instance, PermissionSetArn=arn)


def test_provisioning_refreshes_the_role_and_reports_failures(center):
    sso, iam, instance, arn, group = center
    sso.create_account_assignment(
        InstanceArn=instance, TargetId=ACCOUNT, TargetType="AWS_ACCOUNT", PermissionSetArn=arn, PrincipalType="GROUP", PrincipalId=group
    )
    name = _sso_roles(iam)[0]["RoleName"]
    sso.put_inline_policy_to_permission_set(InstanceArn=instance, PermissionSetArn=arn, InlinePolicy=POLICY)
    # Identity Center changes the role only when the permission set is provisioned again.
    assert iam.list_role_policies(RoleName=name)["PolicyNames"] == []
    started = sso.provision_permission_set(InstanceArn=instance, PermissionSetArn=arn, TargetType="AWS_ACCOUNT", TargetId=ACCOUNT)[
        "PermissionSetProvisioningStatus"
    ]
    assert started["Status"] == "IN_PROGRESS"
    describe = lambda request: sso.describe_permission_set_provisioning_status(InstanceArn=instance, ProvisionPermissionSetRequestId=request)  # noqa: E731
    assert _wait(lambda: describe(started["RequestId"]), "PermissionSetProvisioningStatus")["Status"] == "SUCCEEDED"
    assert iam.list_role_policies(RoleName=name)["PolicyNames"] == ["AwsSSOInlinePolicy"]
    assert _sso_roles(iam)[0]["RoleName"] == name

    sso.attach_customer_managed_policy_reference_to_permission_set(
        InstanceArn=instance, PermissionSetArn=arn, CustomerManagedPolicyReference={"Name": "NotInTheAccount"}
    )
    failing = sso.provision_permission_set(InstanceArn=instance, PermissionSetArn=arn, TargetType="ALL_PROVISIONED_ACCOUNTS")["PermissionSetProvisioningStatus"]
    final = _wait(lambda: describe(failing["RequestId"]), "PermissionSetProvisioningStatus")
    assert final["Status"] == "FAILED" and "NotInTheAccount" in final["FailureReason"]
    with pytest.raises(ClientError) as error:
        sso.provision_permission_set(InstanceArn=instance, PermissionSetArn=arn, TargetType="AWS_ACCOUNT")
    assert _code(error) == "ValidationException"
    with pytest.raises(ClientError) as error:
        describe("00000000-0000-0000-0000-000000000000")
    assert _code(error) == "ResourceNotFoundException"


def test_provisioned_accounts_follow_the_role(center):
    sso, iam, instance, arn, group = center
    listed = lambda: sso.list_accounts_for_provisioned_permission_set(InstanceArn=instance, PermissionSetArn=arn)["AccountIds"]  # noqa: E731
    assert listed() == []
    assignment = dict(InstanceArn=instance, TargetId=ACCOUNT, TargetType="AWS_ACCOUNT", PermissionSetArn=arn, PrincipalType="GROUP", PrincipalId=group)
    sso.create_account_assignment(**assignment)
    assert listed() == [ACCOUNT]
    sso.delete_account_assignment(**assignment)
    assert listed() == []


def test_a_change_leaves_accounts_outdated_until_provisioned(center):
    sso, _, instance, arn, group = center

    def accounts(status):
        return sso.list_accounts_for_provisioned_permission_set(InstanceArn=instance, PermissionSetArn=arn, ProvisioningStatus=status)["AccountIds"]

    sso.create_account_assignment(
        InstanceArn=instance, TargetId=ACCOUNT, TargetType="AWS_ACCOUNT", PermissionSetArn=arn, PrincipalType="GROUP", PrincipalId=group
    )
    assert accounts("LATEST_PERMISSION_SET_PROVISIONED") == [ACCOUNT]
    assert accounts("LATEST_PERMISSION_SET_NOT_PROVISIONED") == []
    sso.put_inline_policy_to_permission_set(InstanceArn=instance, PermissionSetArn=arn, InlinePolicy=POLICY)
    assert accounts("LATEST_PERMISSION_SET_NOT_PROVISIONED") == [ACCOUNT]
    sso.provision_permission_set(InstanceArn=instance, PermissionSetArn=arn, TargetType="ALL_PROVISIONED_ACCOUNTS")
    assert accounts("LATEST_PERMISSION_SET_NOT_PROVISIONED") == []
    sso.update_permission_set(InstanceArn=instance, PermissionSetArn=arn, SessionDuration="PT2H")
    assert accounts("LATEST_PERMISSION_SET_NOT_PROVISIONED") == [ACCOUNT]


def test_account_side_listing_follows_account_status_and_pages(center):
    sso, _, instance, arn, group = center
    other = sso.create_permission_set(InstanceArn=instance, Name="hyperpod-audio")["PermissionSet"]["PermissionSetArn"]

    def listed(account=ACCOUNT, **kwargs):
        return sso.list_permission_sets_provisioned_to_account(InstanceArn=instance, AccountId=account, **kwargs)

    for permission_set in (arn, other):
        sso.create_account_assignment(
            InstanceArn=instance, TargetId=ACCOUNT, TargetType="AWS_ACCOUNT", PermissionSetArn=permission_set, PrincipalType="GROUP", PrincipalId=group
        )
    assert sorted(listed()["PermissionSets"]) == sorted([arn, other])
    assert listed(account="210987654321")["PermissionSets"] == []
    assert listed(ProvisioningStatus="LATEST_PERMISSION_SET_NOT_PROVISIONED")["PermissionSets"] == []
    sso.put_inline_policy_to_permission_set(InstanceArn=instance, PermissionSetArn=other, InlinePolicy=POLICY)
    assert listed(ProvisioningStatus="LATEST_PERMISSION_SET_NOT_PROVISIONED")["PermissionSets"] == [other]
    assert listed(ProvisioningStatus="LATEST_PERMISSION_SET_PROVISIONED")["PermissionSets"] == [arn]
    first = listed(MaxResults=1)
    second = listed(MaxResults=1, NextToken=first["NextToken"])
    assert sorted(first["PermissionSets"] + second["PermissionSets"]) == sorted([arn, other]) and "NextToken" not in second
    with pytest.raises(ClientError) as error:
        listed(ProvisioningStatus="OUTDATED")
    assert _code(error) == "ValidationException"


def test_permission_sets_beyond_the_instance_quota_are_refused(center, sandbox):
    sso, _, instance, _, _ = center
    sandbox.configure(identity_center_permission_sets=2)
    sso.create_permission_set(InstanceArn=instance, Name="hyperpod-nlp")
    with pytest.raises(ClientError) as error:
        sso.create_permission_set(InstanceArn=instance, Name="hyperpod-robotics")
    assert _code(error) == "ServiceQuotaExceededException"
    sandbox.configure(identity_center_permission_sets=3)
    sso.create_permission_set(InstanceArn=instance, Name="hyperpod-robotics")


def test_an_account_full_of_provisioned_permission_sets_takes_no_other(center, sandbox):
    sso, iam, instance, arn, group = center
    other = sso.create_permission_set(InstanceArn=instance, Name="hyperpod-nlp")["PermissionSet"]["PermissionSetArn"]
    sandbox.configure(identity_center_provisioned_per_account=1)
    assignment = dict(InstanceArn=instance, TargetId=ACCOUNT, TargetType="AWS_ACCOUNT", PrincipalType="GROUP", PrincipalId=group)
    started = sso.create_account_assignment(PermissionSetArn=arn, **assignment)["AccountAssignmentCreationStatus"]
    assert _wait(lambda: sso.describe_account_assignment_creation_status(
        InstanceArn=instance, AccountAssignmentCreationRequestId=started["RequestId"]), "AccountAssignmentCreationStatus")["Status"] == "SUCCEEDED"
    # The account's one provisioned permission set takes more assignments and provisionings; another is refused.
    user = sandbox.boto3_client("identitystore").create_user(
        IdentityStoreId=sso.list_instances()["Instances"][0]["IdentityStoreId"], UserName="ana", DisplayName="Ana", Name={"GivenName": "A", "FamilyName": "B"}
    )["UserId"]
    sso.create_account_assignment(**dict(assignment, PermissionSetArn=arn, PrincipalType="USER", PrincipalId=user))
    with pytest.raises(ClientError) as error:
        sso.create_account_assignment(PermissionSetArn=other, **assignment)
    assert _code(error) == "ServiceQuotaExceededException"
    provisioning = sso.provision_permission_set(InstanceArn=instance, PermissionSetArn=other, TargetType="AWS_ACCOUNT", TargetId=ACCOUNT)
    failed = _wait(lambda: sso.describe_permission_set_provisioning_status(
        InstanceArn=instance, ProvisionPermissionSetRequestId=provisioning["PermissionSetProvisioningStatus"]["RequestId"]), "PermissionSetProvisioningStatus")
    assert failed["Status"] == "FAILED" and "quota of 1" in failed["FailureReason"]
    assert [r["RoleName"].split("_")[1] for r in _sso_roles(iam)] == ["hyperpod-vision"]
    assert sso.list_permission_sets_provisioned_to_account(InstanceArn=instance, AccountId=ACCOUNT)["PermissionSets"] == [arn]


def test_provisioning_fails_when_iam_refuses_the_role(center, sandbox):
    sso, iam, instance, arn, group = center
    sandbox.configure(iam_roles_per_account=len(iam.list_roles()["Roles"]))
    started = sso.create_account_assignment(
        InstanceArn=instance, TargetId=ACCOUNT, TargetType="AWS_ACCOUNT", PermissionSetArn=arn, PrincipalType="GROUP", PrincipalId=group
    )["AccountAssignmentCreationStatus"]
    failed = _wait(lambda: sso.describe_account_assignment_creation_status(
        InstanceArn=instance, AccountAssignmentCreationRequestId=started["RequestId"]), "AccountAssignmentCreationStatus")
    assert failed["Status"] == "FAILED" and "RolesPerAccount" in failed["FailureReason"]
    assert _sso_roles(iam) == [] and sso.list_account_assignments(InstanceArn=instance, AccountId=ACCOUNT, PermissionSetArn=arn)["AccountAssignments"] == []
