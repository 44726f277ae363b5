"""plugins/module_utils/preflight.py against the sandbox: the sample passes read only, and each problem it was built to find
is named, all of them in one run."""

from __future__ import annotations

import copy
import json

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import automation_policy, preflight
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import LayerContext
from ansible_collections.hyperpod.tenancy.plugins.modules import preflight as preflight_module

from sandbox.seed import load_sample
from tests.unit.plugins.module_utils.module_params import module_params

SAMPLE = load_sample()
READS = ("Get", "List", "Describe", "Head", "Simulate")


class Module:
    """What LayerContext takes of an AnsibleAWSModule, with the sandbox's clients (``credentials``: another caller's keys)."""

    region = "us-east-1"
    check_mode = False

    def __init__(self, sandbox, credentials=None, identity_center=None):
        self.sandbox, self.credentials = sandbox, credentials
        self.params = {"identity_center": identity_center}
        self.warnings = []

    def client(self, service, **extra):
        return self.sandbox.boto3_client(service, extra.get("region", self.region), credentials=self.credentials)

    def warn(self, message):
        self.warnings.append(message)


def teams(**changes):
    """The sample's present teams, each changed by ``changes`` ({team: {key: value}})."""
    found = copy.deepcopy([t for t in SAMPLE["hyperpod_teams"] if t.get("state", "present") == "present"])
    for team in found:
        team.update(changes.get(team["name"], {}))
    return found


def settings(seed, **changes):
    base = dict(
        eks_cluster_name=seed["eks_cluster_arn"].rsplit("/", 1)[1], data_bucket=seed["data_bucket"], name_prefix="hyperpod",
        cluster_execution_role_arns=[seed["cluster_execution_role_arn"]], subnet_ids=seed["subnet_ids"], fsx_file_system_id=seed["fsx_file_system_id"],
        addons=[{"name": "amazon-sagemaker-hyperpod-taskgovernance"}, {"name": "eks-pod-identity-agent"}],
        identity_center_instance_arn=None, permission_set_quota=3500, identity_center_elsewhere=False, budget_name_prefix=None,
        budget_account_id=None,
    )
    base.update(changes)
    return base


def problems(rows):
    return {(r["area"], r["subject"]): r["detail"] for r in rows if r["status"] == preflight.PROBLEM}


def statuses(rows):
    return {(r["area"], r["subject"]): r["status"] for r in rows}


def test_the_sample_passes_and_preflight_only_reads(seeded):
    sandbox, seed = seeded
    rows = preflight.checks(LayerContext(Module(sandbox)), settings(seed), teams())
    assert problems(rows) == {}
    found = statuses(rows)
    # Every statement of the automation policy, simulated on the caller (the sandbox's keys, as AdministratorAccess).
    assert {subject for area, subject in found if area == "permissions"} == {sid for sid, *unused in automation_policy.STATEMENTS}
    for wanted in [("eks", settings(seed)["eks_cluster_name"]), ("add-on", "eks-pod-identity-agent"), ("quotas", "IAM roles"),
                   ("quotas", "permission sets"), ("data bucket", "Block Public Access"), ("fsx", seed["fsx_file_system_id"])]:
        assert found[wanted] == preflight.OK, wanted
    assert [r for r in sandbox.requests() if not r["operation"].startswith(READS)] == []


def caller(sandbox, name, *policies, group_policy=None):
    """An IAM user's keys, with ``policies`` inline and ``group_policy`` through a group."""
    iam = sandbox.boto3_client("iam")
    iam.create_user(UserName=name)
    for index, policy in enumerate(policies):
        iam.put_user_policy(UserName=name, PolicyName="p%d" % index, PolicyDocument=json.dumps(policy))
    if group_policy:
        iam.create_group(GroupName=name + "-group")
        iam.put_group_policy(GroupName=name + "-group", PolicyName="g", PolicyDocument=json.dumps(group_policy))
        iam.add_user_to_group(GroupName=name + "-group", UserName=name)
    key = iam.create_access_key(UserName=name)["AccessKey"]
    return {"AccessKeyId": key["AccessKeyId"], "SecretAccessKey": key["SecretAccessKey"]}


EVERYTHING = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}


def test_a_region_guardrail_and_a_group_grant_are_no_false_problem(seeded):
    """The caller's grant comes through its group, and its own policy denies every Region but the run's (a guardrail as
    SCPs write it): the simulation carries aws:RequestedRegion, so nothing is refused."""
    sandbox, seed = seeded
    guardrail = {"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "NotAction": ["iam:*", "sts:*", "budgets:*", "ce:*"], "Resource": "*",
                                                         "Condition": {"StringNotEquals": {"aws:RequestedRegion": ["us-east-1"]}}}]}
    keys = caller(sandbox, "guarded", guardrail, group_policy=EVERYTHING)
    rows = preflight.checks(LayerContext(Module(sandbox, keys)), settings(seed), teams())
    assert [r for r in rows if r["status"] != preflight.OK and r["subject"] != "versioning"] == []


def test_a_deny_of_one_sagemaker_resource_type_is_seen(seeded):
    sandbox, seed = seeded
    deny = {"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Action": "sagemaker:DeleteDomain",
                                                    "Resource": "arn:aws:sagemaker:us-east-1:%s:domain/*" % seed["account_id"]}]}
    rows = preflight.checks(LayerContext(Module(sandbox, caller(sandbox, "denied", EVERYTHING, deny))), settings(seed), teams())
    found = problems(rows)
    assert list(found) == [("permissions", "ChangeMarkedSageMaker")]
    assert found[("permissions", "ChangeMarkedSageMaker")].startswith("sagemaker:DeleteDomain denied on arn:aws:sagemaker:us-east-1:")


def test_one_refused_read_hides_no_other_setting(seeded):
    sandbox, seed = seeded
    sandbox.boto3_client("s3").delete_public_access_block(Bucket=seed["data_bucket"])
    deny = {"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Action": "s3:GetBucketOwnershipControls", "Resource": "*"}]}
    rows = preflight.bucket_rows(LayerContext(Module(sandbox, caller(sandbox, "partial", EVERYTHING, deny))), seed["data_bucket"], seed["account_id"])
    found = statuses(rows)
    assert found[("data bucket", "Block Public Access")] == found[("data bucket", "object ownership")] == preflight.PROBLEM
    assert found[("data bucket", "default encryption")] == preflight.OK
    assert "AccessDenied" in problems(rows)[("data bucket", "object ownership")]


def test_a_file_system_that_holds_no_association_is_named_for_the_teams_that_link(seeded):
    sandbox, seed = seeded
    fsx = sandbox.boto3_client("fsx")
    old = fsx.create_file_system(FileSystemType="LUSTRE", StorageCapacity=1200, SubnetIds=seed["subnet_ids"][:1],
                                 LustreConfiguration={"DeploymentType": "PERSISTENT_1", "PerUnitStorageThroughput": 50})["FileSystem"]
    assert old["FileSystemTypeVersion"] == "2.10"
    context = LayerContext(Module(sandbox))
    [linked] = preflight.fsx_rows(context, old["FileSystemId"], None, ["vision"])
    assert linked["status"] == preflight.PROBLEM
    assert linked["detail"].startswith("Lustre 2.10 holds no data repository association, which storage.s3_link of vision")
    [unlinked] = preflight.fsx_rows(context, old["FileSystemId"], None, [])
    assert unlinked["status"] == preflight.OK


def test_a_caller_without_one_statement_is_refused_that_statement_on_the_runs_own_resources(seeded):
    """The caller's policy is the automation policy less TeamBudgets: that statement, and only it, is a problem, naming
    the action and each team's budget; a caller whose roles statement covers one team's roles only is refused the others'."""
    sandbox, seed = seeded
    iam = sandbox.boto3_client("iam")
    policy = automation_policy.render(seed["account_id"], "us-east-1", seed["data_bucket"], settings(seed)["eks_cluster_name"],
                                      [seed["cluster_execution_role_arn"]])
    narrower = dict(policy, Statement=[s for s in policy["Statement"] if s["Sid"] != "TeamBudgets"])
    for statement in narrower["Statement"]:
        if statement["Sid"] == "CollectionRoles":
            statement["Resource"] = "arn:aws:iam::%s:role/hyperpod-vision-*" % seed["account_id"]
    iam.create_user(UserName="operator")
    iam.put_user_policy(UserName="operator", PolicyName="automation", PolicyDocument=json.dumps(narrower))
    key = iam.create_access_key(UserName="operator")["AccessKey"]
    credentials = {"AccessKeyId": key["AccessKeyId"], "SecretAccessKey": key["SecretAccessKey"]}
    rows = preflight.checks(LayerContext(Module(sandbox, credentials)), settings(seed), teams())
    found = problems(rows)
    assert set(found) == {("permissions", "TeamBudgets"), ("permissions", "CollectionRoles")}, found
    budgets = [t["name"] for t in teams() if (t.get("budget") or {}).get("monthly_usd") is not None]
    assert budgets and all("budget/hyperpod-%s-monthly" % team in found[("permissions", "TeamBudgets")] for team in budgets)
    assert "budgets:ModifyBudget denied" in found[("permissions", "TeamBudgets")]
    others = [t["name"] for t in teams() if t["name"] != "vision"]
    assert all("role/hyperpod-%s-studio-execution" % team in found[("permissions", "CollectionRoles")] for team in others)
    assert "role/hyperpod-vision-" not in found[("permissions", "CollectionRoles")]


def test_every_problem_it_was_built_to_find_is_named_in_one_run(seeded):
    sandbox, seed = seeded
    s3, ec2, fsx, eks = (sandbox.boto3_client(s) for s in ("s3", "ec2", "fsx", "eks"))
    bucket = seed["data_bucket"]
    s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration={
        "BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": False, "RestrictPublicBuckets": True})
    s3.put_bucket_ownership_controls(Bucket=bucket, OwnershipControls={"Rules": [{"ObjectOwnership": "ObjectWriter"}]})
    s3.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration={"Rules": [
        {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "alias/team-data"}}]})
    # A cluster whose authentication mode has no access entries.
    eks.create_cluster(name="legacy-eks", roleArn=seed["eks_role_arn"], accessConfig={"authenticationMode": "CONFIG_MAP"},
                       resourcesVpcConfig={"subnetIds": seed["subnet_ids"], "securityGroupIds": seed["security_group_ids"]})
    # A scratch file system in another VPC, for a team that links to S3.
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.9.0.0/24")["Subnet"]["SubnetId"]
    scratch = fsx.create_file_system(FileSystemType="LUSTRE", FileSystemTypeVersion="2.15", StorageCapacity=1200, SubnetIds=[subnet],
                                     LustreConfiguration={"DeploymentType": "SCRATCH_1"})["FileSystem"]["FileSystemId"]
    sandbox.configure(iam_roles_per_account=len(sandbox.boto3_client("iam").list_roles()["Roles"]))
    wrong_instance = "arn:aws:sso:::instance/ssoins-0000000000000000"
    rows = preflight.checks(
        LayerContext(Module(sandbox)),
        settings(seed, eks_cluster_name="legacy-eks", fsx_file_system_id=scratch, identity_center_instance_arn=wrong_instance,
                 addons=[{"name": "eks-pod-identity-agent", "version": "v0.0.1-eksbuild.1"}]),
        teams(vision={"storage": {"gid": 20001, "s3_link": True}}),
    )
    found, status = problems(rows), statuses(rows)
    assert "authentication mode CONFIG_MAP" in found[("eks", "legacy-eks")]
    assert "v0.0.1-eksbuild.1 not offered" in found[("add-on", "eks-pod-identity-agent")]
    assert found[("data bucket", "Block Public Access")].startswith("off on the bucket: BlockPublicPolicy (")
    assert "not the shared subnets'" in found[("fsx", scratch)] and "SCRATCH_1 holds no data repository association" in found[("fsx", scratch)]
    assert "vision" in found[("fsx", scratch)]
    assert "is not visible" in found[("identity center", "instance")] and wrong_instance in found[("identity center", "instance")]
    assert found[("quotas", "IAM roles")].startswith("%d of %d" % ((len(sandbox.boto3_client("iam").list_roles()["Roles"]),) * 2))
    assert status[("data bucket", "object ownership")] == status[("data bucket", "default encryption")] == preflight.WARNING
    assert status[("data bucket", "versioning")] == preflight.WARNING
    assert [r for r in sandbox.requests() if not r["operation"].startswith(READS)
            and r["operation"] not in ("PutPublicAccessBlock", "PutBucketOwnershipControls", "PutBucketEncryption", "CreateCluster", "CreateVpc",
                                       "CreateSubnet", "CreateFileSystem")] == []


def test_what_is_missing_is_a_problem_of_its_own(seeded):
    sandbox, seed = seeded
    missing = settings(seed, eks_cluster_name="nowhere", data_bucket="no-such-bucket-here", fsx_file_system_id="fs-00000000000000000")
    rows = preflight.checks(LayerContext(Module(sandbox)), missing, teams())
    found = problems(rows)
    assert found[("eks", "nowhere")] == "no EKS cluster nowhere in us-east-1"
    assert found[("data bucket", "no-such-bucket-here")].startswith("no S3 bucket no-such-bucket-here")
    assert found[("fsx", "fs-00000000000000000")] == "no FSx file system fs-00000000000000000 in us-east-1"


def test_the_module_adds_what_shared_info_found_and_lists_every_problem(seeded):
    sandbox, seed = seeded
    given = dict(settings(seed, data_bucket="no-such-bucket-here"), teams=teams(),
                 known_problems=["team 'vision': identity_center_group: no group TeamVision"])
    params = module_params(preflight_module.MODULE_OPTIONS, **given)
    params.pop("identity_center_elsewhere")
    params["team_problems"] = {"nlp": ["IAM role hyperpod-nlp-studio-execution exists and was not made by hyperpod.tenancy"]}
    result = preflight_module.converge(LayerContext(Module(sandbox)), params)
    assert result["changed"] is False
    assert result["problems"] == ["data bucket no-such-bucket-here: no S3 bucket no-such-bucket-here",
                                  "teams shared_info: team 'vision': identity_center_group: no group TeamVision",
                                  "teams nlp: refused: IAM role hyperpod-nlp-studio-execution exists and was not made by hyperpod.tenancy"]
    assert result["table"][0].split() == ["AREA", "SUBJECT", "STATUS", "DETAIL"] and len(result["table"]) == len(result["checks"]) + 2


def test_a_caller_that_is_neither_user_nor_role_is_not_simulated():
    assert preflight.simulated_principal(None, "arn:aws:iam::123456789012:root") is None
    assert preflight.simulated_principal(None, "arn:aws:sts::123456789012:federated-user/ops") is None
    assert preflight.simulated_principal(None, "arn:aws:iam::123456789012:user/ops/alice") == "arn:aws:iam::123456789012:user/ops/alice"


@pytest.mark.parametrize("published, missing", [(["AmazonSagemakerHyperpodTrainingPolicy"], True), (None, False)])
def test_an_access_policy_the_region_does_not_offer_is_a_problem(seeded, monkeypatch, published, missing):
    sandbox, seed = seeded
    if published is not None:
        monkeypatch.setattr(preflight.eks, "list_access_policies", lambda client: [{"name": name} for name in published])
    rows = preflight.eks_rows(LayerContext(Module(sandbox)), settings(seed)["eks_cluster_name"], [], preflight.wanted_access_policies(teams()))
    [access] = [r for r in rows if r["area"] == "access policies"]
    assert (access["status"] == preflight.PROBLEM) is missing
    if missing:
        assert "AmazonSagemakerHyperpodInferencePolicy" in access["detail"] and "AmazonSagemakerHyperpodTrainingPolicy" not in access["detail"]
