"""Ownership marks members cannot touch, a broken mark that stops its own team only, and retired names (issue 36).

Case 4, "One member freezes every team": the S3 prefix's mark was the object ``<team>/``, inside the prefix every member
may write; one PutObject stripped its tags and shared_info refused site.yml and the drift run for all teams. The mark is
now ``_hyperpod/owners/<team>``, which no team policy reaches, and shared_info refuses a team with a broken mark (or any
resource not its own) alone: its team_resources fails before any write, the other teams converge, the run fails naming it.

Case 5, "Same name, old data" (and case 7's first gap, the gid): offboarding with ``on_remove: keep`` records the team in
the ledger of retired names (``_hyperpod/retired/<team>``); a new team of that name, or of that gid, is refused before any
write unless the platform's cluster file says it inherits (``hyperpod_inherit``).
"""

from __future__ import annotations

import copy
import json

import pytest
from botocore.exceptions import ClientError

from tests.integration.playbook_runner import SAMPLE, assert_ok

TEAMS = [team["name"] for team in SAMPLE["hyperpod_teams"]]


def seed_of(sample) -> dict:
    return json.loads(sample.seed_file.read_text())


def member_s3(sample, team: str):
    """An S3 client with the credentials of a member of ``team``: the policy Identity Center gave the team's role in the
    account (the permission set's inline policy, as the collection wrote it), on a role the test can assume."""
    iam, sts = sample.client.boto3_client("iam"), sample.client.boto3_client("sts")
    roles = iam.list_roles(PathPrefix="/aws-reserved/sso.amazonaws.com/")["Roles"]
    [sso_role] = [role for role in roles if role["RoleName"].startswith(f"AWSReservedSSO_hyperpod-{team}_")]
    [policy_name] = iam.list_role_policies(RoleName=sso_role["RoleName"])["PolicyNames"]
    policy = iam.get_role_policy(RoleName=sso_role["RoleName"], PolicyName=policy_name)["PolicyDocument"]
    account = sts.get_caller_identity()["Account"]
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{account}:root"}, "Action": "sts:AssumeRole"}]}
    role = iam.create_role(RoleName=f"{team}-member", AssumeRolePolicyDocument=json.dumps(trust))["Role"]
    iam.put_role_policy(RoleName=role["RoleName"], PolicyName="team", PolicyDocument=json.dumps(policy))
    credentials = sts.assume_role(RoleArn=role["Arn"], RoleSessionName=f"{team}-alice")["Credentials"]
    return sample.client.boto3_client("s3", credentials=credentials)


def refused(call, **request) -> str:
    with pytest.raises(ClientError) as error:
        call(**request)
    return error.value.response["Error"]["Code"]


def team_task(result, team: str, task: str = "hyperpod.tenancy.team : Give the team its permission set") -> dict:
    """The team's team_resources result in the run's report (the task whose name starts with ``task``)."""
    for play in result.report.get("plays", []):
        for found in play["tasks"]:
            if found["task"]["name"].startswith(task) and f"team_{team}" in found["hosts"]:
                return found["hosts"][f"team_{team}"]
    raise AssertionError(f"no {task} for team {team}")


def test_a_member_cannot_reach_the_marks_and_a_broken_mark_refuses_its_own_team_only(sample):
    """Threat model (issue 36, case 4): a member with the team's credentials writes the old mark's place <team>/ (allowed:
    it is the team's prefix) and the new mark (refused): the next run changes nothing. A mark broken by hand (its tags
    stripped) refuses that team alone: site.yml converges the other teams, then fails naming the one."""
    seed = seed_of(sample)
    bucket = seed["data_bucket"]
    assert_ok(sample.run("site.yml"), "site.yml")
    s3 = sample.client.boto3_client("s3")
    marks = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="_hyperpod/owners/")["Contents"])
    assert marks == [f"_hyperpod/owners/{team}" for team in sorted(TEAMS)]

    member = member_s3(sample, "vision")
    member.put_object(Bucket=bucket, Key="vision/", Body=b"")
    member.put_object(Bucket=bucket, Key="vision/results.csv", Body=b"a,b\n")
    for call, request in (
        (member.put_object, dict(Key="_hyperpod/owners/vision", Body=b"")),
        (member.put_object_tagging, dict(Key="_hyperpod/owners/vision", Tagging={"TagSet": []})),
        (member.delete_object, dict(Key="_hyperpod/owners/vision")),
        (member.put_object, dict(Key="_hyperpod/retired/vision", Body=b"{}")),
        (member.delete_object, dict(Key="_hyperpod/owners/nlp")),
    ):
        assert refused(call, Bucket=bucket, **request) == "AccessDenied", request
    assert s3.get_object_tagging(Bucket=bucket, Key="_hyperpod/owners/vision")["TagSet"] != []
    # The run the member would have stopped (the drift job compares as --check does): nothing to change, for every team.
    checked = sample.run("site.yml", "--check")
    assert_ok(checked, "site.yml --check after the member's writes")
    assert checked.changed_tasks() == set(), checked.changed_tasks()

    # An admin strips nlp's mark by hand: nlp is refused, before any of its writes; vision and research converge.
    s3.delete_object_tagging(Bucket=bucket, Key="_hyperpod/owners/nlp")
    for check in (["--check"], []):
        run = sample.run("site.yml", *check)
        assert run.returncode == 2, (check, run.stdout[-3000:])
        failures = run.failures()
        assert len(failures) == 1 and failures[0].startswith("team_nlp | hyperpod.tenancy.team : "), (check, failures)
        assert (f"team 'nlp' is refused, nothing of it was changed: S3 prefix s3://{bucket}/nlp/ (its ownership mark s3://{bucket}/_hyperpod/owners/nlp) "
                "exists and was not made by hyperpod.tenancy for team nlp") in failures[0], failures[0]
        assert team_task(run, "nlp")["layers"] == {}
        # The other teams ran every layer, to the end.
        for team in ("vision", "research"):
            result = team_task(run, team)
            assert not result.get("failed") and {"permission_set", "access_entry", "s3_prefix", "quota", "budget", "directories"} <= set(result["layers"]), (
                team, result)
    assert s3.get_object_tagging(Bucket=bucket, Key="_hyperpod/owners/nlp")["TagSet"] == []


def identity_center_group(sample, name: str, members: list[str]) -> None:
    """A new group of the seeded identity store and its users: another team's group, as Identity Center admins make one."""
    store = sample.client.boto3_client("identitystore")
    store_id = seed_of(sample)["identity_store_id"]
    group = store.create_group(IdentityStoreId=store_id, DisplayName=name)["GroupId"]
    for member in members:
        users = store.list_users(IdentityStoreId=store_id, Filters=[{"AttributePath": "UserName", "AttributeValue": member}])["Users"]
        user = users[0]["UserId"] if users else store.create_user(
            IdentityStoreId=store_id, UserName=member, DisplayName=member, Name={"GivenName": member, "FamilyName": "Example"})["UserId"]
        store.create_group_membership(IdentityStoreId=store_id, GroupId=group, MemberId={"UserId": user})


def test_a_retired_name_or_gid_is_refused_before_any_write_unless_the_platform_says_the_new_team_inherits(sample):
    """Threat model (issue 36, case 5 and case 7's first gap): research is offboarded keeping its data; a new entry named
    research (another Identity Center group), or a new team with research's gid, is refused before any write, in run and
    --check modes, naming the retired team, its gid and its date. The platform's hyperpod_inherit lets the new research
    converge, and the ledger records it."""
    seed = seed_of(sample)
    bucket = seed["data_bucket"]
    s3 = sample.client.boto3_client("s3")
    assert_ok(sample.run("site.yml"), "site.yml")
    s3.put_object(Bucket=bucket, Key="research/results/run-1.json", Body=b"{}")
    settings = copy.deepcopy(SAMPLE)
    research = next(t for t in settings["hyperpod_teams"] if t["name"] == "research")
    research["state"] = "absent"
    sample.write_settings(settings)
    assert_ok(sample.run("playbooks/remove_team.yml", "-e", "team=research"), "remove_team research")
    entry = json.loads(s3.get_object(Bucket=bucket, Key="_hyperpod/retired/research")["Body"].read())
    gid = research["storage"]["gid"]
    assert (entry["team"], entry["gid"], entry["identity_center_group"], entry["inherited_by"]) == ("research", gid, "TeamResearch", [])
    assert f"s3://{bucket}/research/" in entry["kept"] and any(kept.endswith("/research") and kept.startswith("/") for kept in entry["kept"])

    # The file reuses the name for another group (and another gid); a new team takes research's gid.
    identity_center_group(sample, "TeamResearchNext", ["frank"])
    identity_center_group(sample, "TeamSpeech", ["gina"])
    reused = dict(copy.deepcopy(research), state="present", identity_center_group="TeamResearchNext", storage={"gid": gid + 100})
    taker = dict(copy.deepcopy(research), name="speech", state="present", identity_center_group="TeamSpeech", cost_center="CC-1009",
                 members=[{"name": "gina", "uid": 10099}])
    del taker["quota"]  # the cluster's capacity holds research's quota once
    settings["hyperpod_teams"] = [t for t in settings["hyperpod_teams"] if t["name"] != "research"] + [reused, taker]
    sample.write_settings(settings)
    described = (f"of retired team research (Identity Center group TeamResearch, gid {gid}, offboarded {entry['offboarded_at']}, its data kept: ")
    for team, claim in (("research", "its name research is that "), ("speech", f"its gid {gid} (storage.gid) is that ")):
        for check in (["--check"], []):
            sample.client.clear_requests()
            run = sample.run("playbooks/add_team.yml", "-e", f"team={team}", *check)
            assert run.returncode == 2, (team, check, run.failures())
            text = " ".join(run.stdout.split())
            assert f"team '{team}' is refused, nothing of it was changed: {claim}{described}" in text, (team, check, run.failures())
            assert f"hyperpod_inherit: {{{team}: research}}" in text
            assert sample.client.writes() == [], (team, check, sample.client.writes())

    # The platform decides: the new research inherits the retired one. It converges, and the ledger says so.
    settings["hyperpod_inherit"] = {"research": "research"}
    sample.write_settings(settings)
    assert_ok(sample.run("playbooks/add_team.yml", "-e", "team=research"), "add_team research inheriting")
    entry = json.loads(s3.get_object(Bucket=bucket, Key="_hyperpod/retired/research")["Body"].read())
    assert [(heir["team"], heir["gid"], heir["identity_center_group"]) for heir in entry["inherited_by"]] == [("research", gid + 100, "TeamResearchNext")]
    # Taken once, for good: without the setting the new research converges with nothing to change; the gid it did not take
    # is still refused to speech.
    del settings["hyperpod_inherit"]
    sample.write_settings(settings)
    again = sample.run("playbooks/add_team.yml", "-e", "team=research")
    assert_ok(again, "add_team research again")
    assert again.changed_tasks() == set(), again.changed_tasks()
    assert sample.run("playbooks/add_team.yml", "-e", "team=speech", "--check").returncode == 2
