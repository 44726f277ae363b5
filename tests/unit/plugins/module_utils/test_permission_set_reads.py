"""What identity_center_permission_set reads, against the sandbox: only what the run compares."""

from __future__ import annotations

import json
import time

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import engine, layer
from ansible_collections.hyperpod.tenancy.plugins.module_utils import permission_set as ps
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError, error_code

ACCOUNT = "123456789012"
POLICY = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::b"}]})
BOUNDARY = {"managed_policy_arn": "arn:aws:iam::aws:policy/PowerUserAccess"}


@pytest.fixture
def assigned(sandbox):
    """A permission set assigned to a group in the account (so provisioned there), and the request log emptied."""
    sso, store = sandbox.boto3_client("sso-admin"), sandbox.boto3_client("identitystore")
    instance = sso.list_instances()["Instances"][0]
    group = store.create_group(IdentityStoreId=instance["IdentityStoreId"], DisplayName="TeamVision")["GroupId"]
    arn = sso.create_permission_set(InstanceArn=instance["InstanceArn"], Name="hyperpod-vision", SessionDuration="PT8H")["PermissionSet"]["PermissionSetArn"]
    sso.create_account_assignment(
        InstanceArn=instance["InstanceArn"], TargetId=ACCOUNT, TargetType="AWS_ACCOUNT", PermissionSetArn=arn, PrincipalType="GROUP", PrincipalId=group
    )
    deadline = time.monotonic() + 5
    while ps.list_provisioned_accounts(sso, instance["InstanceArn"], arn) != [ACCOUNT] and time.monotonic() < deadline:
        time.sleep(0.05)
    sandbox.clear_requests()
    return sandbox, sso, store, instance, arn, group


def converge(assigned, check_mode=True, **overrides):
    sandbox, sso, store, instance, arn, group = assigned
    params = dict(
        state="present",
        name="hyperpod-vision",
        instance_arn=instance["InstanceArn"],
        identity_store_id=instance["IdentityStoreId"],
        identity_center_group_ids={"TeamVision": group},
        permission_set_arn=arn,
        session_duration="PT8H",
        managed_policies=[],
        customer_managed_policies=[],
        groups=["TeamVision"],
        accounts=[ACCOUNT],
        purge_assignments=True,
        purge_managed_policies=True,
        wait_timeout=30,
    )
    params.update(overrides, state="present")
    return tuple(engine.converge(ps.PermissionSet(sso, store, params, check_mode), "present", check_mode)[:3])


def reads(sandbox, operation):
    return [r for r in sandbox.requests() if r["operation"] == operation]


def test_a_boundary_the_task_does_not_set_is_neither_read_nor_reported(assigned):
    sandbox = assigned[0]
    changed, before, after = converge(assigned)
    assert not changed and "permissions_boundary" not in after
    assert reads(sandbox, "GetPermissionsBoundaryForPermissionSet") == []


def test_a_boundary_the_task_sets_is_read_and_converged(assigned):
    sandbox = assigned[0]
    changed, before, after = converge(assigned, check_mode=False, permissions_boundary=BOUNDARY)
    assert changed and before["permissions_boundary"] is None and after["permissions_boundary"] == BOUNDARY
    assert reads(sandbox, "GetPermissionsBoundaryForPermissionSet")
    assert converge(assigned, permissions_boundary=BOUNDARY)[0] is False


def test_outdated_accounts_come_from_the_run_wide_list_for_the_accounts_it_covers(assigned):
    sandbox, sso, unused_store, instance, arn, unused_group = assigned
    sso.put_inline_policy_to_permission_set(InstanceArn=instance["InstanceArn"], PermissionSetArn=arn, InlinePolicy=POLICY)
    listed = {ACCOUNT: ps.list_provisioned_to_account(sso, instance["InstanceArn"], ACCOUNT, outdated=True)}
    assert listed == {ACCOUNT: [arn]}
    sandbox.clear_requests()

    changed, before, after = converge(assigned, inline_policy=POLICY, known={"outdated_permission_sets": listed})
    assert changed and before["outdated_accounts"] == [ACCOUNT]
    # The accounts it is provisioned to are read; which of them are outdated is not asked again.
    assert len(reads(sandbox, "ListAccountsForProvisionedPermissionSet")) == 1

    # An account the run-wide list does not cover is asked about.
    sandbox.clear_requests()
    assert converge(assigned, inline_policy=POLICY, known={"outdated_permission_sets": {"210987654321": []}})[1]["outdated_accounts"] == [ACCOUNT]
    assert len(reads(sandbox, "ListAccountsForProvisionedPermissionSet")) == 2

    # Provisioned again, the run converges; the list made before it is not used for what it reads after.
    changed, unused_before, after = converge(assigned, check_mode=False, inline_policy=POLICY, known={"outdated_permission_sets": listed})
    assert changed and after["outdated_accounts"] == []
    assert ps.list_provisioned_to_account(sso, instance["InstanceArn"], ACCOUNT, outdated=True) == []


def test_a_run_wide_list_that_says_up_to_date_is_believed_for_its_accounts(assigned):
    changed, before, unused_after = converge(assigned, known={"outdated_permission_sets": {ACCOUNT: []}})
    assert not changed and before["outdated_accounts"] == []


def test_a_permission_set_described_earlier_in_the_run_is_not_described_again(assigned):
    sandbox, sso, unused_store, instance, arn, unused_group = assigned
    known = ps.known_from_described(sso.describe_permission_set(InstanceArn=instance["InstanceArn"], PermissionSetArn=arn)["PermissionSet"])
    sandbox.clear_requests()
    changed, before, unused_after = converge(assigned, known={"permission_set": known})
    assert not changed and before["session_duration"] == "PT8H"
    assert reads(sandbox, "DescribePermissionSet") == []
    # What it says is compared: a description it lacks is a change to make.
    assert converge(assigned, known={"permission_set": known}, description="Team vision")[0] is True
    # One of another name is not taken for this one.
    sandbox.clear_requests()
    converge(assigned, known={"permission_set": dict(known, name="hyperpod-nlp")})
    assert len(reads(sandbox, "DescribePermissionSet")) == 1


def test_a_run_writes_from_live_reads_not_from_what_was_read_earlier(assigned):
    sandbox, sso, unused_store, instance, arn, unused_group = assigned
    stale = ps.known_from_described(sso.describe_permission_set(InstanceArn=instance["InstanceArn"], PermissionSetArn=arn)["PermissionSet"])
    sso.update_permission_set(InstanceArn=instance["InstanceArn"], PermissionSetArn=arn, Description="Team vision")
    sandbox.clear_requests()
    assert converge(assigned, known={"permission_set": stale}, description="Team vision")[0] is True
    changed, before, unused_after = converge(assigned, check_mode=False, known={"permission_set": stale}, description="Team vision")
    # The live read has the description; what is left is provisioning the account the hand-made update left outdated.
    assert changed and before["description"] == "Team vision" and before["outdated_accounts"] == [ACCOUNT]
    assert [w["operation"] for w in sandbox.writes()] == ["ProvisionPermissionSet"]


def test_tags_read_earlier_in_the_run_are_not_read_again_and_decide_the_owner(assigned):
    sandbox, sso, unused_store, instance, arn, unused_group = assigned
    described = sso.describe_permission_set(InstanceArn=instance["InstanceArn"], PermissionSetArn=arn)["PermissionSet"]
    marked = {"managed-by": "hyperpod.tenancy", "team": "vision"}
    sso.tag_resource(InstanceArn=instance["InstanceArn"], ResourceArn=arn, Tags=[{"Key": k, "Value": v} for k, v in marked.items()])
    known = ps.known_from_described(described, ps.read_tags(sso, instance["InstanceArn"], arn))
    sandbox.clear_requests()
    changed, before, unused_after = converge(assigned, known={"permission_set": known}, tags=marked)
    assert not changed and before["tags"] == marked
    assert reads(sandbox, "ListTagsForResource") == []
    # The team's check takes the tags it is given: unmarked ones are refused without a read.
    with pytest.raises(ps.InputError, match="exists and was not made by hyperpod.tenancy for team vision"):
        converge(assigned, team="vision", known={"permission_set": dict(known, tags={})})
    assert reads(sandbox, "ListTagsForResource") == []
    # A tag to change: written from a live read of them.
    changed, unused_before, after = converge(assigned, check_mode=False, known={"permission_set": known}, tags=dict(marked, extra="1"))
    assert changed and after["tags"] == dict(marked, extra="1")
    assert len(reads(sandbox, "ListTagsForResource")) >= 1


def test_a_permission_set_the_runs_lookup_did_not_find_is_made_without_describing_every_one_again(assigned):
    """shared_info described every permission set and none had the name (known.absent): the team's run creates it
    without listing and describing them all again, which made a cold run's reads grow with the square of the teams.
    One another run made since is found by the conflict of creating it: a lost race, converged again with fresh reads."""
    sandbox, sso, unused_store, instance, unused_arn, unused_group = assigned
    for index in range(5):
        sso.create_permission_set(InstanceArn=instance["InstanceArn"], Name=f"hyperpod-other{index}")
    sandbox.clear_requests()
    changed, unused_before, after = converge(assigned, check_mode=False, name="hyperpod-nlp", permission_set_arn=None, known={"absent": True})
    assert changed and after["name"] == "hyperpod-nlp"
    assert reads(sandbox, "ListPermissionSets") == [] and len(reads(sandbox, "DescribePermissionSet")) <= 1
    with pytest.raises(HyperPodError) as raced:
        converge(assigned, check_mode=False, name="hyperpod-nlp", permission_set_arn=None, known={"absent": True})
    assert error_code(raced.value) == "ConflictException" and layer.lost_a_race(raced.value)
    # Converged again as the lost race is, without what the run knew: found, and nothing left to change.
    assert converge(assigned, check_mode=False, name="hyperpod-nlp", permission_set_arn=None)[0] is False
