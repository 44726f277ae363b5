"""site.yml with IAM Identity Center in the organization's management account and another Region.

The sandbox's instance answers only in the management account (222233334444) and its home Region
(eu-west-1); the cluster, roles, domains and the rest are the workload account's (123456789012, us-east-1).
The inventory variant inventories/sandbox-organization sets ``hyperpod_identity_center`` to the role the
management account's trust policy lets the workload account assume. Permission sets and their assignments
land in the management account's instance, the roles Identity Center makes for them in the workload account,
everything else there too; a rerun changes nothing; offboarding revokes in the management account; and a
connection pointed at the wrong account fails before any write, naming the setting.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import automation_policy

from sandbox.seed import _as_account, seed, seed_identity_center_account
from tests.integration.playbook_runner import ROOT, SAMPLE, Playbooks, assert_ok
from tests.integration.snapshots import domains_named

WORKLOAD, MANAGEMENT, HOME, WORKLOAD_REGION = "123456789012", "222233334444", "eu-west-1", "us-east-1"
EXTERNAL_ID = "hyperpod-ext-4242"
WORKLOAD_OPERATOR = "PlatformOperator"
ORGANIZATION = ROOT / "inventories" / "sandbox-organization"
TEAMS = [team["name"] for team in SAMPLE["hyperpod_teams"]]


class OrganizationPlaybooks(Playbooks):
    """The playbooks with the sandbox inventory and, after it, the inventory variant of the organization."""

    def command(self, playbook: str, *args: str) -> list[str]:
        command = super().command(playbook, *args)
        return command[:3] + ["-i", str(ORGANIZATION)] + command[3:]


def _settings() -> dict:
    settings = copy.deepcopy(SAMPLE)
    # An SSO domain works only in Identity Center's Region (docs/identity-center.md): the teams' domains here are IAM ones.
    for team in settings["hyperpod_teams"]:
        team.setdefault("workspace", {})["auth_mode"] = "IAM"
    return settings


def _organization(sandbox, tmp_path, settings, home=HOME):
    sandbox.configure(identity_center_home=f"{MANAGEMENT}/{home}")
    seeded = seed(sandbox, settings)
    # The role the collection assumes there holds the Identity Center policy docs/automation-policy.md ships, and nothing else.
    seeded.update(seed_identity_center_account(sandbox, settings, MANAGEMENT, home, WORKLOAD, external_id=EXTERNAL_ID,
                                               grants=automation_policy.render_identity_center()))
    seeded["identity_center_external_id"] = EXTERNAL_ID
    sandbox.clear_requests()
    return OrganizationPlaybooks(sandbox, seeded, tmp_path, settings), seeded


@pytest.fixture
def organization(sandbox, tmp_path):
    return _organization(sandbox, tmp_path, _settings())


def _management(client, seeded, service, region=HOME):
    """A client of the management account as its administrator (not the collection's role, which may do only what its
    policy allows: the checks below read more than the collection does)."""
    return _as_account(client.boto3_client(service, region), MANAGEMENT)


def _permission_sets(sso, instance_arn) -> dict:
    """{name: ARN} of the instance's permission sets."""
    found = {}
    for arn in sso.list_permission_sets(InstanceArn=instance_arn)["PermissionSets"]:
        found[sso.describe_permission_set(InstanceArn=instance_arn, PermissionSetArn=arn)["PermissionSet"]["Name"]] = arn
    return found


def _sso_roles(iam) -> list[str]:
    return sorted(r["RoleName"] for r in iam.list_roles(PathPrefix="/aws-reserved/sso.amazonaws.com/")["Roles"])


def test_site_puts_identity_center_in_the_management_account_and_the_rest_in_the_workload(organization):
    playbooks, seeded = organization
    client = playbooks.client
    assert_ok(playbooks.run("site.yml"), "site.yml")

    # Every Identity Center call went to its home Region (the management account's instance, the only one there);
    # every other service stayed in the workload Region.
    regions = Counter((r["service"], r["region"]) for r in client.requests())
    identity = {service: region for (service, region) in regions if service in ("sso-admin", "identitystore")}
    assert identity == {"sso-admin": HOME, "identitystore": HOME}
    assert {region for (service, region) in regions if service not in ("sso-admin", "identitystore", "sts", "iam", "s3", "budgets", "ce")} == {WORKLOAD_REGION}
    # Every Identity Center call was signed by the role's session, so the sandbox authorized it with the policy
    # automation_policy.render_identity_center() alone (sandbox/authorization.py).
    session = f"arn:aws:sts::{MANAGEMENT}:assumed-role/{seeded['identity_center_role_arn'].rsplit('/', 1)[1]}/"
    signers = {r["principal"] for r in client.requests() if r["service"] in ("sso-admin", "identitystore")}
    assert signers and all(signer.startswith(session) for signer in signers), signers
    assert [r for r in client.requests() if r["status"] == 403] == []

    sso = _management(client, seeded, "sso-admin")
    instance = seeded["identity_center_instance_arn"]
    names = _permission_sets(sso, instance)
    assert sorted(names) == sorted(f"hyperpod-{team}" for team in TEAMS)
    for team in TEAMS:
        assignments = sso.list_account_assignments(InstanceArn=instance, AccountId=WORKLOAD, PermissionSetArn=names[f"hyperpod-{team}"])["AccountAssignments"]
        group = next(t["identity_center_group"] for t in SAMPLE["hyperpod_teams"] if t["name"] == team)
        assert [(a["AccountId"], a["PrincipalType"], a["PrincipalId"]) for a in assignments] == [(WORKLOAD, "GROUP", seeded["group_ids"][group])]
    # Identity Center made each permission set's role in the workload account, not in its own.
    assert [name.rsplit("_", 1)[0] for name in _sso_roles(client.boto3_client("iam"))] == sorted(f"AWSReservedSSO_hyperpod-{t}" for t in TEAMS)
    assert _sso_roles(_as_account(client.boto3_client("iam"), MANAGEMENT)) == []
    # The workload account holds the rest: the access entries of those roles, the domains, the quotas.
    eks = client.boto3_client("eks", WORKLOAD_REGION)
    entries = eks.list_access_entries(clusterName=seeded["eks_cluster_arn"].rsplit("/", 1)[1])["accessEntries"]
    assert sum(f":{WORKLOAD}:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_hyperpod-" in e for e in entries) == len(TEAMS)
    assert all(len(domains_named(client.boto3_client("sagemaker", WORKLOAD_REGION), f"hyperpod-{t}")) == 1 for t in TEAMS)

    client.clear_requests()
    rerun = playbooks.run("site.yml")
    assert_ok(rerun, "second site.yml")
    assert rerun.changed_tasks() == set()
    # The role is assumed again per module run (AssumeRole makes nothing); nothing else is written.
    assert {(r["service"], r["operation"]) for r in client.writes()} <= {("sts", "AssumeRole")}

    settings = _settings()
    settings["hyperpod_teams"][0]["state"] = "absent"
    playbooks.write_settings(settings)
    assert_ok(playbooks.run("playbooks/remove_team.yml", "-e", f"team={TEAMS[0]}"), "remove_team")
    left = _permission_sets(sso, instance)
    assert sorted(left) == sorted(f"hyperpod-{team}" for team in TEAMS[1:])
    assert not any(name.startswith(f"AWSReservedSSO_hyperpod-{TEAMS[0]}_") for name in _sso_roles(client.boto3_client("iam")))


@pytest.mark.parametrize(
    "connection, words",
    [
        # A role of the workload account that its trust lets the workload account assume (made below: the cluster's execution
        # role trusts SageMaker only, and STS refuses it to every caller): Identity Center is not there (nor its permissions).
        ({"region": HOME, "assume_role_arn": f"arn:aws:iam::{WORKLOAD}:role/{WORKLOAD_OPERATOR}"}, f"in account {WORKLOAD}, Region {HOME}"),
        # No connection: the workload account's own, where no instance answers.
        ({}, f"No IAM Identity Center instance in account {WORKLOAD}, Region {WORKLOAD_REGION}"),
        # The management account's role without the external id its trust policy requires.
        ({"region": HOME, "assume_role_arn": f"arn:aws:iam::{MANAGEMENT}:role/HyperPodIdentityCenterAdmin"}, "hyperpod_identity_center.assume_role_arn"),
        # The right account, the wrong Region.
        ({"region": "us-west-2", "assume_role_arn": f"arn:aws:iam::{MANAGEMENT}:role/HyperPodIdentityCenterAdmin", "external_id": EXTERNAL_ID},
         f"No IAM Identity Center instance in account {MANAGEMENT}, Region us-west-2"),
    ],
)
def test_a_connection_to_the_wrong_account_fails_before_any_write_naming_the_setting(organization, tmp_path: Path, connection, words):
    playbooks, unused = organization
    if connection.get("assume_role_arn", "").endswith(f":role/{WORKLOAD_OPERATOR}"):
        trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{WORKLOAD}:root"}, "Action": "sts:AssumeRole"}]}
        playbooks.client.boto3_client("iam").create_role(RoleName=WORKLOAD_OPERATOR, AssumeRolePolicyDocument=json.dumps(trust))
        playbooks.client.clear_requests()
    settings = _settings()
    settings["hyperpod_identity_center"] = connection  # extra vars: over the inventory variant's
    playbooks.write_settings(settings)
    result = playbooks.run("site.yml")
    assert result.returncode != 0
    failures = "\n".join(result.failures())
    assert words in failures and "hyperpod_identity_center" in failures, failures
    assert [(r["service"], r["operation"]) for r in playbooks.client.writes() if (r["service"], r["operation"]) != ("sts", "AssumeRole")] == []


def test_sso_domains_outside_identity_centers_region_are_refused_before_any_write(organization):
    playbooks, unused = organization
    settings = _settings()
    for team in settings["hyperpod_teams"][:2]:
        team["workspace"]["auth_mode"] = "SSO"
    playbooks.write_settings(settings)
    result = playbooks.run("site.yml")
    assert result.returncode != 0
    failures = " ".join("\n".join(result.failures()).split())
    for team in [t["name"] for t in settings["hyperpod_teams"][:2]]:
        assert f"team '{team}': workspace.auth_mode: SSO needs the team's domain in IAM Identity Center's Region {HOME}" in failures, failures
    assert f"team '{settings['hyperpod_teams'][2]['name']}': workspace" not in failures
    assert [(r["service"], r["operation"]) for r in playbooks.client.writes() if (r["service"], r["operation"]) != ("sts", "AssumeRole")] == []


def test_an_sso_domain_in_the_instance_region_is_assigned_in_the_management_account(sandbox, tmp_path):
    """Same Region, other account: the domain's application is the management account's instance's, and so is the
    assignment of the team's group to it, made before the members' user profiles (which need it)."""
    settings = copy.deepcopy(SAMPLE)
    settings["hyperpod_teams"] = settings["hyperpod_teams"][:1]
    team = settings["hyperpod_teams"][0]
    playbooks, seeded = _organization(sandbox, tmp_path, settings, home=WORKLOAD_REGION)
    assert_ok(playbooks.run("site.yml"), "site.yml")
    sso = _management(sandbox, seeded, "sso-admin", WORKLOAD_REGION)
    applications = sso.list_applications(InstanceArn=seeded["identity_center_instance_arn"], Filter={"ApplicationAccount": WORKLOAD})["Applications"]
    domain = domains_named(sandbox.boto3_client("sagemaker"), f"hyperpod-{team['name']}")[0]
    described = sandbox.boto3_client("sagemaker").describe_domain(DomainId=domain["DomainId"])
    assert [a["ApplicationArn"] for a in applications] == [described["SingleSignOnApplicationArn"]]
    assert f"::{MANAGEMENT}:application/" in described["SingleSignOnApplicationArn"]
    assigned = sso.list_application_assignments(ApplicationArn=described["SingleSignOnApplicationArn"])["ApplicationAssignments"]
    assert [(a["PrincipalType"], a["PrincipalId"]) for a in assigned] == [("GROUP", seeded["group_ids"][team["identity_center_group"]])]
    profiles = sandbox.boto3_client("sagemaker").list_user_profiles(DomainIdEquals=domain["DomainId"])["UserProfiles"]
    assert len(profiles) == len(team["members"]) > 0
