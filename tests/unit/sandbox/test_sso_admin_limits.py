"""Identity Center's limits on asynchronous work in flight, as the sandbox applies them (services/sso_admin.py): 15
CreateAccountAssignment calls outstanding, 3 ProvisionPermissionSet calls at once, one permission-set role updated at a
time per account ("Quotas and limits in IAM Identity Center"). A call beyond a limit is refused with ConflictException
(an assumption: AWS documents no answer); once the requests in flight complete, the same call is accepted."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

ACCOUNT = "123456789012"


@pytest.fixture
def center(sandbox, statuses):
    sso, store = sandbox.boto3_client("sso-admin"), sandbox.boto3_client("identitystore")
    instance = sso.list_instances()["Instances"][0]
    groups = [store.create_group(IdentityStoreId=instance["IdentityStoreId"], DisplayName=f"Team{i:02d}")["GroupId"] for i in range(16)]
    arns = [sso.create_permission_set(InstanceArn=instance["InstanceArn"], Name=f"hyperpod-t{i}")["PermissionSet"]["PermissionSetArn"] for i in range(4)]
    # Every request stays IN_PROGRESS until settle().
    statuses.hold()
    return sso, instance["InstanceArn"], arns, groups


def _refused(call) -> str:
    with pytest.raises(ClientError) as error:
        call()
    return error.value.response["Error"]["Code"]


def _assign(sso, instance, arn, group):
    return sso.create_account_assignment(
        InstanceArn=instance, PermissionSetArn=arn, TargetId=ACCOUNT, TargetType="AWS_ACCOUNT", PrincipalType="GROUP", PrincipalId=group
    )["AccountAssignmentCreationStatus"]


def _provision(sso, instance, arn):
    answer = sso.provision_permission_set(InstanceArn=instance, PermissionSetArn=arn, TargetId=ACCOUNT, TargetType="AWS_ACCOUNT")
    return answer["PermissionSetProvisioningStatus"]


def test_a_sixteenth_outstanding_assignment_is_refused_until_one_completes(center, statuses):
    sso, instance, arns, groups = center
    for group in groups[:15]:
        assert _assign(sso, instance, arns[0], group)["Status"] == "IN_PROGRESS"
    assert _refused(lambda: _assign(sso, instance, arns[0], groups[15])) == "ConflictException"
    statuses.settle()
    assert _assign(sso, instance, arns[0], groups[15])["Status"] in ("IN_PROGRESS", "SUCCEEDED")


def test_one_role_is_updated_at_a_time_per_account(center, statuses):
    sso, instance, arns, _groups = center
    _provision(sso, instance, arns[0])
    # Another permission set's role in the same account waits for the first.
    assert _refused(lambda: _provision(sso, instance, arns[1])) == "ConflictException"
    statuses.settle()
    assert _provision(sso, instance, arns[1])["Status"] in ("IN_PROGRESS", "SUCCEEDED")


def test_a_fourth_concurrent_provisioning_is_refused(sandbox, center, statuses):
    sso, instance, arns, _groups = center
    sandbox.configure(identity_center_role_updates_per_account=10)
    for arn in arns[:3]:
        assert _provision(sso, instance, arn)["Status"] == "IN_PROGRESS"
    assert _refused(lambda: _provision(sso, instance, arns[3])) == "ConflictException"
    statuses.settle()
    assert _provision(sso, instance, arns[3])["Status"] in ("IN_PROGRESS", "SUCCEEDED")
