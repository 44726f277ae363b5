"""One life of the sample, as the automation runs it: the preflight check, a cold site.yml, a rerun, an onboarding again and an offboarding.

Run by test_automation_policy.py under the automation policy alone, and (``HYPERPOD_RECORD_ASKED=<file>``) under the admin
key to record what it asks IAM, where a new call of the collection shows first.
"""

from __future__ import annotations

import copy
import time

from ansible_collections.hyperpod.tenancy.plugins.module_utils import automation_policy

from tests.integration.playbook_runner import SAMPLE, Playbooks, assert_ok

TEAMS = [team["name"] for team in SAMPLE["hyperpod_teams"]]


def lifecycle(playbooks: Playbooks) -> None:
    preflight = playbooks.run("playbooks/preflight.yml")
    assert_ok(preflight, "preflight.yml on a new account")
    checks = preflight_checks(preflight)
    assert [c for c in checks if c["status"] == "problem"] == [], checks
    # Every statement of the policy the caller runs under (Identity Center's may be another account's), simulated on the
    # caller itself and allowed.
    workload = {sid for sid, *unused in automation_policy.STATEMENTS} - set(automation_policy.IDENTITY_CENTER_STATEMENTS)
    assert workload <= {c["subject"] for c in checks if c["area"] == "permissions"}, checks
    assert_ok(playbooks.run("site.yml", "--check", "--diff"), "site.yml --check on a new account")
    assert_ok(playbooks.run("site.yml"), "cold site.yml")
    assert_ok(playbooks.run("site.yml"), "site.yml again")
    drift = playbooks.run("playbooks/drift.yml")
    assert drift.returncode == 0, drift.failures()
    # A team's Studio execution role deleted out of band: drift correction (add_team) makes it again.
    iam = playbooks.client.boto3_client("iam")
    name = f"hyperpod-{TEAMS[0]}-studio-execution"
    for policy in iam.list_role_policies(RoleName=name)["PolicyNames"]:
        iam.delete_role_policy(RoleName=name, PolicyName=policy)
    for attached in iam.list_attached_role_policies(RoleName=name)["AttachedPolicies"]:
        iam.detach_role_policy(RoleName=name, PolicyArn=attached["PolicyArn"])
    iam.delete_role(RoleName=name)
    assert_ok(playbooks.run("playbooks/add_team.yml", "-e", f"team={TEAMS[0]}"), "add_team after the Studio role was deleted")
    # A member's private space and its app, made in Studio (untagged: the sample's domains do not propagate tags), which
    # offboarding deletes before the member's profile.
    sagemaker = playbooks.client.boto3_client("sagemaker")
    domain = next(d["DomainId"] for d in sagemaker.list_domains()["Domains"] if d["DomainName"] == f"hyperpod-{TEAMS[0]}")
    owner = sagemaker.list_user_profiles(DomainIdEquals=domain)["UserProfiles"][0]["UserProfileName"]
    sagemaker.create_space(DomainId=domain, SpaceName=f"{owner}-space", OwnershipSettings={"OwnerUserProfileName": owner},
                           SpaceSharingSettings={"SharingType": "Private"}, SpaceSettings={"AppType": "JupyterLab"})
    deadline = time.monotonic() + 60
    while sagemaker.describe_space(DomainId=domain, SpaceName=f"{owner}-space")["Status"] != "InService":
        assert time.monotonic() < deadline, "the space did not come InService"
        time.sleep(0.2)
    sagemaker.create_app(DomainId=domain, SpaceName=f"{owner}-space", AppType="JupyterLab", AppName="default")
    settings = copy.deepcopy(SAMPLE)
    settings["hyperpod_teams"][0]["state"] = "absent"
    playbooks.write_settings(settings)
    assert_ok(playbooks.run("playbooks/remove_team.yml", "-e", f"team={TEAMS[0]}"), "remove_team")


def preflight_checks(result) -> list[dict]:
    """The rows of preflight.yml's checks (the preflight module's result)."""
    return next(found["checks"] for play in result.report["plays"] for task in play["tasks"] for found in task["hosts"].values() if "checks" in found)


def asked(requests: list[dict], principal: str | None = None) -> list[tuple[str, str, dict]]:
    """The distinct (action, resource, context) the recorded requests of ``principal`` (every signer when None) asked IAM."""
    found, seen = [], set()
    for request in requests:
        if principal is not None and request["principal"] != principal:
            continue
        for action, resource, context in request["asked"]:
            key = (action, resource, repr(sorted(context.items())))
            if key not in seen:
                seen.add(key)
                found.append((action, resource, context))
    return found
