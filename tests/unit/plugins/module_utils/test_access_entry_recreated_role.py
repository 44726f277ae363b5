"""An access entry older than its IAM role is re-created (access_entry.stale_reason): EKS does not map a re-created role to it."""

from __future__ import annotations

import datetime
import json
import time

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import access_entry

UTC = datetime.UTC
TRUST = json.dumps({"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}, "Action": "sts:AssumeRole"}]})  # fmt: skip
ROLE_NAME = "hyperpod-vision-studio-execution"


@pytest.mark.parametrize("entry_created, role_created, stale", [
    (datetime.datetime(2026, 1, 1, tzinfo=UTC), datetime.datetime(2026, 1, 2, tzinfo=UTC), True),
    (datetime.datetime(2026, 1, 2, tzinfo=UTC), datetime.datetime(2026, 1, 1, tzinfo=UTC), False),
    # As they cross processes (ISO 8601) and as the sandbox's JSON gives them (epoch seconds).
    ("2026-01-01T00:00:00+00:00", "2026-01-01T00:00:01Z", True),
    (1767225600.5, "2026-01-01T00:00:00Z", False),
    # Unknown dates: nothing to tell.
    (None, "2026-01-01T00:00:00Z", False),
    ("2026-01-01T00:00:00Z", None, False),
])  # fmt: skip
def test_an_entry_is_stale_only_when_older_than_its_role(entry_created, role_created, stale):
    reason = access_entry.stale_reason({"createdAt": entry_created, "principalArn": "arn:aws:iam::123456789012:role/r"}, role_created)
    assert bool(reason) is stale
    if stale:
        assert "older than its IAM role" in reason and "created again" in reason


@pytest.fixture
def studio_entry(seeded):
    """Team vision's Studio execution role with its access entry as the collection makes it, then the role deleted and made again by name."""
    sandbox, seed = seeded
    eks, iam = sandbox.boto3_client("eks"), sandbox.boto3_client("iam")
    cluster = seed["eks_cluster_arn"].rsplit("/", 1)[1]
    role = iam.create_role(RoleName=ROLE_NAME, AssumeRolePolicyDocument=TRUST)["Role"]
    params = {"team": "vision", "name_prefix": "hyperpod", "cluster_name": cluster, "state": "present", "principal": "execution_role",
              "account_id": role["Arn"].split(":")[4], "kubernetes_groups": ["hyperpod-ns-vision-namespace-level-group"], "username": None,
              "access_policies": access_entry.team_access_policies({"policies": ["training"], "cluster_read": True}, "hyperpod-ns-vision"),
              "type": "STANDARD", "tags": {"cost-center": "CC-1001"}, "purge_tags": True, "adopt": False}

    def converge(check_mode=False, **more):
        return access_entry.converge_entry(eks, iam, access_entry.apply_team(dict(params, **more)), check_mode)[:3]

    changed, unused_before, made = converge()
    assert changed and sandbox.access_entry_works(cluster, role["Arn"])
    # A second apart: IAM's CreateDate counts whole seconds.
    time.sleep(1.1)
    iam.delete_role(RoleName=ROLE_NAME)
    iam.create_role(RoleName=ROLE_NAME, AssumeRolePolicyDocument=TRUST)
    return sandbox, eks, iam, cluster, role["Arn"], made, converge


def test_the_sandbox_no_longer_maps_an_entry_to_a_role_made_again_by_name(studio_entry):
    sandbox, eks, _iam, cluster, arn, _made, _converge = studio_entry
    assert eks.describe_access_entry(clusterName=cluster, principalArn=arn)["accessEntry"]["principalArn"] == arn
    assert sandbox.access_entry_works(cluster, arn) is False


def test_an_entry_older_than_its_role_is_recreated_with_what_the_collection_sets(studio_entry):
    sandbox, eks, iam, cluster, arn, made, converge = studio_entry
    old = eks.describe_access_entry(clusterName=cluster, principalArn=arn)["accessEntry"]

    sandbox.clear_requests()
    changed, before, predicted = converge(check_mode=True)
    assert changed and "older than its IAM role" in before["recreated_because"]
    assert sandbox.writes() == []

    changed, before, after = converge()
    assert changed and "the role was deleted and created again" in before["recreated_because"]
    writes = [r["operation"] for r in sandbox.writes()]
    assert writes[:2] == ["DeleteAccessEntry", "CreateAccessEntry"], writes
    entry = eks.describe_access_entry(clusterName=cluster, principalArn=arn)["accessEntry"]
    assert entry["accessEntryArn"] != old["accessEntryArn"]
    assert entry["createdAt"] >= iam.get_role(RoleName=ROLE_NAME)["Role"]["CreateDate"]
    assert sandbox.access_entry_works(cluster, arn)
    # The same groups, user name (EKS's default), tags and access policies as before.
    assert {k: v for k, v in after.items() if k != "access_entry_arn"} == {k: v for k, v in made.items() if k != "access_entry_arn"}
    assert entry["username"] == old["username"]
    assert predicted == made  # check mode predicts the entry as it was made
    # Then nothing more to do.
    sandbox.clear_requests()
    assert converge()[0] is False
    assert sandbox.writes() == []


def test_the_roles_date_read_earlier_in_the_run_spares_reading_the_role(studio_entry):
    sandbox, _eks, iam, _cluster, _arn, _made, converge = studio_entry
    created = iam.get_role(RoleName=ROLE_NAME)["Role"]["CreateDate"].isoformat()
    sandbox.clear_requests()
    assert converge(check_mode=True, known={"principal_created": created})[0] is True
    assert "GetRole" not in [r["operation"] for r in sandbox.requests()]
    # Given a date the entry is not older than, it is left as it is (and the role is not read either).
    sandbox.clear_requests()
    assert converge(check_mode=True, known={"principal_created": "2000-01-01T00:00:00Z"})[0] is False
    assert "GetRole" not in [r["operation"] for r in sandbox.requests()]


def test_a_stale_entry_of_another_type_is_refused_not_retyped_by_a_re_create():
    # An adopted entry (EC2_LINUX, say) whose role was made again: re-creating it as STANDARD would retype it, which
    # the in-place path refuses too; the platform deletes it.
    current = {"principal_arn": "arn:aws:iam::123456789012:role/r", "type": "EC2_LINUX", "kubernetes_groups": [], "username": "u",
               "tags": {}, "access_policies": []}
    desired = dict(current, type="STANDARD")
    with pytest.raises(access_entry.InputError, match="is of type EC2_LINUX, not STANDARD"):
        access_entry.plan(current, desired, stale="older than its IAM role")


def test_an_entry_made_by_the_run_is_not_compared_with_its_role(seeded):
    """The role's CreateDate is asked only of an entry that existed before the run: one read back after its creation is
    new (a GetRole for each team's entries, caught by python -m bench's cold run)."""
    sandbox, seed = seeded
    eks, iam = sandbox.boto3_client("eks"), sandbox.boto3_client("iam")
    role = iam.create_role(RoleName=ROLE_NAME, AssumeRolePolicyDocument=TRUST)["Role"]
    params = {"cluster_name": seed["eks_cluster_arn"].rsplit("/", 1)[1], "state": "present", "principal_arn": role["Arn"], "type": "STANDARD",
              "kubernetes_groups": ["hyperpod-ns-vision-namespace-level-group"], "access_policies": None, "tags": None, "purge_tags": True}
    sandbox.clear_requests()
    changed, _before, after, _result = access_entry.converge_entry(eks, iam, params, False)
    assert changed and after["principal_arn"] == role["Arn"]
    assert [r["operation"] for r in sandbox.requests() if r["operation"] == "GetRole"] == []


def test_a_role_that_is_gone_is_asked_for_once(seeded):
    """The stale check asks GetRole once a run, also when the role no longer exists (its answer None is kept)."""
    sandbox, seed = seeded
    eks, iam = sandbox.boto3_client("eks"), sandbox.boto3_client("iam")
    role = iam.create_role(RoleName=ROLE_NAME, AssumeRolePolicyDocument=TRUST)["Role"]
    params = {"cluster_name": seed["eks_cluster_arn"].rsplit("/", 1)[1], "state": "present", "principal_arn": role["Arn"], "type": "STANDARD",
              "kubernetes_groups": ["hyperpod-ns-vision-namespace-level-group"], "access_policies": None, "tags": None, "purge_tags": True}
    assert access_entry.converge_entry(eks, iam, dict(params), False).changed
    iam.delete_role(RoleName=ROLE_NAME)
    sandbox.clear_requests()
    assert not access_entry.converge_entry(eks, iam, dict(params), False).changed
    assert [r["operation"] for r in sandbox.requests()].count("GetRole") == 1
