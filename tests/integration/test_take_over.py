"""A team never takes over what the collection did not make for it, unless its team file adopts it.

The reproduction of issue 19 item 2: a team named ``platform`` and an account that already has a
``hyperpod-platform`` permission set (AdministratorAccess, assigned to PlatformAdmins) and an FSx
directory ``/fsx/platform`` that someone else made.
"""

from __future__ import annotations

import copy
import os

from sandbox.seed import seed
from tests.integration.playbook_runner import SAMPLE, Playbooks, assert_ok

ADMIN = "arn:aws:iam::aws:policy/AdministratorAccess"
PLATFORM = {
    "name": "platform",
    "identity_center_group": "TeamPlatform",
    "members": [{"name": "pat", "uid": 10100}],
    "storage": {"gid": 20100},
    "cost_center": "CC-1100",
}


def permission_set_view(sso, instance: str, account: str, arn: str) -> dict:
    return {
        "managed": sorted(p["Arn"] for p in sso.list_managed_policies_in_permission_set(InstanceArn=instance, PermissionSetArn=arn)["AttachedManagedPolicies"]),
        "assigned": sorted(
            a["PrincipalId"] for a in sso.list_account_assignments(InstanceArn=instance, AccountId=account, PermissionSetArn=arn)["AccountAssignments"]
        ),
        "inline": sso.get_inline_policy_for_permission_set(InstanceArn=instance, PermissionSetArn=arn).get("InlinePolicy") or "",
        "tags": {t["Key"]: t["Value"] for t in sso.list_tags_for_resource(InstanceArn=instance, ResourceArn=arn)["Tags"]},
    }


def test_a_team_named_platform_takes_over_nothing_unless_it_adopts(sandbox, tmp_path):
    settings = copy.deepcopy(SAMPLE)
    settings["hyperpod_teams"] = [copy.deepcopy(PLATFORM)]
    found = seed(sandbox, settings)
    playbooks = Playbooks(sandbox, found, tmp_path, settings)
    env = dict(playbooks.env, SANDBOX_STATE_DIR=str(tmp_path / "state"))
    sso, instance, account = sandbox.boto3_client("sso-admin"), found["identity_center_instance_arn"], found["account_id"]
    admins = found["group_ids"]["PlatformAdmins"]
    arn = sso.create_permission_set(InstanceArn=instance, Name="hyperpod-platform", SessionDuration="PT1H")["PermissionSet"]["PermissionSetArn"]
    sso.attach_managed_policy_to_permission_set(InstanceArn=instance, PermissionSetArn=arn, ManagedPolicyArn=ADMIN)
    sso.create_account_assignment(
        InstanceArn=instance, TargetId=account, TargetType="AWS_ACCOUNT", PermissionSetArn=arn, PrincipalType="GROUP", PrincipalId=admins
    )
    datasets = tmp_path / "state" / "fsx" / "platform"
    datasets.mkdir(parents=True, mode=0o755)
    (datasets / "imagenet").mkdir()
    before = permission_set_view(sso, instance, account, arn)
    assert before["managed"] == [ADMIN] and before["assigned"] == [admins]
    assert_ok(playbooks.run("site.yml", "--limit", "localhost", env=env), "cluster only")

    for check in (["--check"], []):
        refused = playbooks.run("playbooks/add_team.yml", "-e", "team=platform", *check, env=env)
        assert refused.returncode != 0
        text = " ".join(refused.stdout.split())
        assert f"permission set hyperpod-platform ({arn}) exists and was not made by hyperpod.tenancy for team platform" in text, text[-3000:]
        assert "add permission_set to the team's adopt list" in text
        assert permission_set_view(sso, instance, account, arn) == before
    assert os.stat(datasets).st_mode & 0o7777 == 0o755

    # The team file adopts the permission set: it becomes the team's; the directory is still refused.
    settings["hyperpod_teams"][0]["adopt"] = ["permission_set"]
    playbooks.write_settings(settings)
    refused = playbooks.run("playbooks/add_team.yml", "-e", "team=platform", env=env)
    assert refused.returncode != 0
    text = " ".join(refused.stdout.split())
    assert f"{datasets} exists, owned by uid {os.stat(datasets).st_uid} gid {os.stat(datasets).st_gid} mode 0755" in text, text[-3000:]
    assert "add directories to the team's adopt list" in text
    adopted = permission_set_view(sso, instance, account, arn)
    assert adopted["managed"] == [] and adopted["assigned"] == [found["group_ids"]["TeamPlatform"]]
    assert adopted["tags"]["managed-by"] == "hyperpod.tenancy" and adopted["tags"]["team"] == "platform"
    assert os.stat(datasets).st_mode & 0o7777 == 0o755

    settings["hyperpod_teams"][0]["adopt"] = ["permission_set", "directories"]
    playbooks.write_settings(settings)
    assert_ok(playbooks.run("playbooks/add_team.yml", "-e", "team=platform", env=env), "add_team adopting the directory")
    assert os.stat(datasets).st_mode & 0o7777 == 0o2770 and os.stat(datasets).st_gid == 20100
    # Marked now: the adopt list is no longer needed.
    del settings["hyperpod_teams"][0]["adopt"]
    playbooks.write_settings(settings)
    rerun = playbooks.run("playbooks/add_team.yml", "-e", "team=platform", env=env)
    assert_ok(rerun, "add_team without adopt")
    assert rerun.changed_tasks() == set()
