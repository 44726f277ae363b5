"""A team never takes over what the collection did not make for it, unless the platform adopts it for the team.

The reproduction of issue 19 item 2: a team named ``mlops`` and an account that already has a
``hyperpod-mlops`` permission set (AdministratorAccess, assigned to PlatformAdmins) and an FSx
directory ``/fsx/mlops`` that someone else made; and (issue 22) a ``hyperpod-mlops-pods`` role
with an admin policy and the association of the team's service account to it, made by hand. Issue 36 item 2: the
team's own entry can neither adopt nor take a name reserved for the platform (``platform``); only the platform's
``hyperpod_adopt`` adopts.
"""

from __future__ import annotations

import copy
import os

from sandbox.seed import seed
from tests.integration.out_of_band import hand_made_pod_role
from tests.integration.playbook_runner import SAMPLE, Playbooks, assert_ok

ADMIN = "arn:aws:iam::aws:policy/AdministratorAccess"
PLATFORM = {
    "name": "mlops",
    "identity_center_group": "TeamMLOps",
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


def test_a_team_takes_over_nothing_unless_the_platform_adopts_it(sandbox, tmp_path):
    settings = copy.deepcopy(SAMPLE)
    settings["hyperpod_teams"] = [copy.deepcopy(PLATFORM)]
    found = seed(sandbox, settings)
    playbooks = Playbooks(sandbox, found, tmp_path, settings)
    env = dict(playbooks.env, SANDBOX_STATE_DIR=str(tmp_path / "state"))
    sso, instance, account = sandbox.boto3_client("sso-admin"), found["identity_center_instance_arn"], found["account_id"]
    admins = found["group_ids"]["PlatformAdmins"]
    # The cluster first, so that what the team's runs write below is the team's alone.
    assert_ok(playbooks.run("site.yml", "--limit", "localhost", env=env), "cluster only")
    arn = sso.create_permission_set(InstanceArn=instance, Name="hyperpod-mlops", SessionDuration="PT1H")["PermissionSet"]["PermissionSetArn"]
    sso.attach_managed_policy_to_permission_set(InstanceArn=instance, PermissionSetArn=arn, ManagedPolicyArn=ADMIN)
    sso.create_account_assignment(
        InstanceArn=instance, TargetId=account, TargetType="AWS_ACCOUNT", PermissionSetArn=arn, PrincipalType="GROUP", PrincipalId=admins
    )
    datasets = tmp_path / "state" / "fsx" / "mlops"
    datasets.mkdir(parents=True, mode=0o755)
    (datasets / "imagenet").mkdir()
    before = permission_set_view(sso, instance, account, arn)
    assert before["managed"] == [ADMIN] and before["assigned"] == [admins]

    for check in (["--check"], []):
        refused = playbooks.run("playbooks/add_team.yml", "-e", "team=mlops", *check, env=env)
        assert refused.returncode != 0
        text = " ".join(refused.stdout.split())
        assert f"permission set hyperpod-mlops ({arn}) exists and was not made by hyperpod.tenancy for team mlops" in text, text[-3000:]
        assert "the platform adds permission_set to hyperpod_adopt.mlops in the cluster file" in text
        assert permission_set_view(sso, instance, account, arn) == before
    assert os.stat(datasets).st_mode & 0o7777 == 0o755

    # The platform adopts the permission set for the team: it becomes the team's; the directory is still refused.
    settings["hyperpod_adopt"] = {"mlops": ["permission_set"]}
    playbooks.write_settings(settings)
    refused = playbooks.run("playbooks/add_team.yml", "-e", "team=mlops", env=env)
    assert refused.returncode != 0
    text = " ".join(refused.stdout.split())
    assert f"{datasets} exists, owned by uid {os.stat(datasets).st_uid} gid {os.stat(datasets).st_gid} mode 0755" in text, text[-3000:]
    assert "the platform adds directories to hyperpod_adopt.mlops in the cluster file" in text
    adopted = permission_set_view(sso, instance, account, arn)
    assert adopted["managed"] == [] and adopted["assigned"] == [found["group_ids"]["TeamMLOps"]]
    assert adopted["tags"]["managed-by"] == "hyperpod.tenancy" and adopted["tags"]["team"] == "mlops"
    assert os.stat(datasets).st_mode & 0o7777 == 0o755

    settings["hyperpod_adopt"] = {"mlops": ["permission_set", "directories"]}
    playbooks.write_settings(settings)
    assert_ok(playbooks.run("playbooks/add_team.yml", "-e", "team=mlops", env=env), "add_team adopting the directory")
    assert os.stat(datasets).st_mode & 0o7777 == 0o2770 and os.stat(datasets).st_gid == 20100
    # Marked now: the adoption is no longer needed.
    del settings["hyperpod_adopt"]
    playbooks.write_settings(settings)
    rerun = playbooks.run("playbooks/add_team.yml", "-e", "team=mlops", env=env)
    assert_ok(rerun, "add_team without adopt")
    assert rerun.changed_tasks() == set()


# With a quota, so that Task Governance makes its namespace and the namespace layer gives its pods an identity.
PODS_TEAM = {
    "name": "mlops",
    "identity_center_group": "TeamMLOps",
    "members": [{"name": "pat", "uid": 10100}],
    "cost_center": "CC-1100",
    "workspace": {"enabled": False},
    "quota": {"resources": [{"instance_type": "ml.g5.12xlarge", "count": 2}], "sharing": "lend", "preempt": "never", "fair_share_weight": 10},
}


def pod_role_view(iam, name: str) -> dict:
    role = iam.get_role(RoleName=name)["Role"]
    return {
        "trust": role["AssumeRolePolicyDocument"],
        "tags": {t["Key"]: t["Value"] for t in role.get("Tags", [])},
        "attached": [p["PolicyArn"] for p in iam.list_attached_role_policies(RoleName=name)["AttachedPolicies"]],
        "inline": iam.list_role_policies(RoleName=name)["PolicyNames"],
    }


def identity_writes(client) -> list[str]:
    """The writes a run made to IAM and to EKS Pod Identity associations (their tags included)."""
    return [
        f"{r['service']}:{r['operation']}"
        for r in client.writes()
        if r["service"] == "iam" or (r["service"] == "eks" and ("PodIdentity" in r["operation"] or r["operation"] in ("TagResource", "UntagResource")))
    ]


def test_a_pod_role_made_by_hand_is_refused_building_and_offboarding_unless_adopted(sandbox, tmp_path):
    settings = copy.deepcopy(SAMPLE)
    settings["hyperpod_teams"] = [copy.deepcopy(PODS_TEAM)]
    found = seed(sandbox, settings)
    made = hand_made_pod_role(sandbox, found, "mlops")
    role, association = made["role"], made["association"]
    playbooks = Playbooks(sandbox, found, tmp_path, settings)
    iam, eks = sandbox.boto3_client("iam"), sandbox.boto3_client("eks")
    cluster = found["eks_cluster_arn"].rsplit("/", 1)[1]
    before = pod_role_view(iam, role["RoleName"])

    def assert_refused(result, what):
        assert result.returncode != 0, what
        text = " ".join(result.stdout.split())
        assert f"IAM role {role['Arn']} exists and was not made by hyperpod.tenancy for team mlops" in text, (what, text[-3000:])
        assert "its tags: owner=ml-infra" in text and "the platform adds pod_role to hyperpod_adopt.mlops in the cluster file" in text, what
        assert f"Pod Identity association {association['associationId']} of service account hyperpod-ns-mlops/hyperpod-mlops" in text, what
        assert pod_role_view(iam, role["RoleName"]) == before, what
        described = eks.describe_pod_identity_association(clusterName=cluster, associationId=association["associationId"])["association"]
        assert (described["roleArn"], described["tags"]) == (role["Arn"], {}), what

    # Building: shared_info reads the pod role and its association with the team's other resources, and refuses the
    # team before its first write (issue 36, case 4: one team's problem stops that team only; the cluster is built).
    sandbox.clear_requests()
    built = playbooks.run("site.yml")
    assert_refused(built, "site.yml")
    text = " ".join(built.stdout.split())
    assert (f"team 'mlops' is refused, nothing of it was changed: IAM role {role['Arn']} exists and was not made by hyperpod.tenancy for team "
            "mlops (it lacks the tags managed-by=hyperpod.tenancy, team=mlops; its tags: owner=ml-infra)") in text, text[-3000:]
    # The run fails for the refused team's host only: the cluster's play went on and built the cluster.
    assert sorted(host for host, counts in built.stats.items() if counts["failures"]) == ["team_mlops"], built.failures()
    assert ("sagemaker", "CreateCluster") in {(w["service"], w["operation"]) for w in sandbox.writes()}
    team_writes = [w for w in sandbox.writes() if w["service"] in ("iam", "sso-admin", "identitystore", "budgets", "s3")]
    assert team_writes == []
    assert not [w for w in sandbox.writes() if "PodIdentity" in w["operation"] or w["operation"] in ("CreateDomain", "CreateComputeQuota", "CreateAccessEntry")]
    # With the cluster built by that run, onboarding the team alone is refused before any write too.
    for check in (["--check"], []):
        sandbox.clear_requests()
        assert_refused(playbooks.run("playbooks/add_team.yml", "-e", "team=mlops", *check), f"add_team {check}")
        assert sandbox.writes() == [], check

    # Offboarding revokes the team's access first (by design), then refuses to delete the role and its association,
    # and stops there: the quota (and with it the namespace) stays.
    settings["hyperpod_teams"][0]["state"] = "absent"
    playbooks.write_settings(settings)
    sandbox.clear_requests()
    assert_refused(playbooks.run("playbooks/remove_team.yml", "-e", "team=mlops"), "remove_team")
    assert identity_writes(sandbox) == []
    assert "DeleteComputeQuota" not in [r["operation"] for r in sandbox.writes()]

    # Adopted: the role gets the team's trust and policy only, the association stays the same one, and both the mark.
    settings["hyperpod_teams"][0]["state"] = "present"
    settings["hyperpod_adopt"] = {"mlops": ["pod_role"]}
    playbooks.write_settings(settings)
    assert_ok(playbooks.run("playbooks/add_team.yml", "-e", "team=mlops"), "add_team adopting the pod role")
    adopted = pod_role_view(iam, role["RoleName"])
    assert adopted["attached"] == [] and adopted["inline"] == ["team-data"]
    assert adopted["trust"]["Statement"][0]["Condition"]["StringEquals"]["aws:RequestTag/kubernetes-namespace"] == "hyperpod-ns-mlops"
    assert (adopted["tags"]["managed-by"], adopted["tags"]["team"]) == ("hyperpod.tenancy", "mlops")
    described = eks.describe_pod_identity_association(clusterName=cluster, associationId=association["associationId"])["association"]
    assert described["roleArn"] == role["Arn"]
    assert (described["tags"]["managed-by"], described["tags"]["team"]) == ("hyperpod.tenancy", "mlops")
