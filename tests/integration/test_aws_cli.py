"""The AWS CLI as a client of the sandbox: what a platform engineer runs to look at what site.yml built.

Each row of ``COMMANDS`` is a command from the AWS guides (HyperPod, Task Governance, Studio, EKS access
entries and Pod Identity, IAM Identity Center, FSx for Lustre, S3, Budgets, STS), run by the real
``aws`` (awscli 1.46, which carries its own botocore) after one converge of site.yml. Every answer must

- parse and fit the operation's output shape in the CLI's model (required members, types, lengths,
  enums, patterns: ``sandbox.core.shape_problems``);
- page to the end when asked for pages of one (``--page-size 1``): one request per item, no item twice
  (the CLI stops on a repeated NextToken; a server error would be retried, which the log would show);
- hold what the engineer looks for (a JMESPath expression over the answer);
- render with ``--output table`` where the row asks for it, every value of the JSON answer in the table;
- or, for a row that expects an error, fail with that code, one the operation's model lists, at once.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import json
import shlex
import subprocess
import sys
from pathlib import Path

import jmespath
import pytest
from botocore import xform_name
from botocore.loaders import Loader
from botocore.model import ServiceModel

from sandbox.client import SANDBOX_CREDENTIALS
from sandbox.core import shape_problems
from sandbox.kube.api import KubeApi
from sandbox.seed import load_sample, seed
from tests.integration.playbook_runner import SAMPLE, Playbooks, assert_ok

AWS = str(Path(sys.executable).with_name("aws"))
TASK_GOVERNANCE = "amazon-sagemaker-hyperpod-taskgovernance"
# Errors any operation may answer (botocore's models leave them out of most operations' lists).
COMMON_ERRORS = {"AccessDenied", "AccessDeniedException", "ThrottlingException", "ValidationException"}


def row(command: str, check: str = "", paged: str = "", table: bool = False, error: str = "") -> dict:
    """A command (``{fact}`` placeholders), a JMESPath check that must be true, the list ``--page-size 1``
    pages through, whether to render it as a table too, or the error code it must fail with."""
    return {"command": command, "check": check, "paged": paged, "table": table, "error": error}


COMMANDS = [
    # SageMaker HyperPod: the cluster, its nodes, Task Governance's policy and quotas ("HyperPod CLI
    # commands", "Task governance for HyperPod", SageMaker AI Developer Guide).
    row("sagemaker describe-cluster --cluster-name {cluster_name}", "ClusterStatus == 'InService' && length(InstanceGroups) == `2`", table=True),
    row("sagemaker list-cluster-nodes --cluster-name {cluster_name} --page-size 1",
        "length(ClusterNodeSummaries) == `{node_count}`", paged="ClusterNodeSummaries"),
    row("sagemaker list-cluster-nodes --cluster-name {cluster_name} --instance-group-name-contains p5", "length(ClusterNodeSummaries) == `8`"),
    row("sagemaker list-cluster-scheduler-configs --cluster-arn {cluster_arn}", "ClusterSchedulerConfigSummaries[0].Status == 'Created'"),
    row("sagemaker list-compute-quotas --cluster-arn {cluster_arn} --page-size 1",
        "sort(ComputeQuotaSummaries[].ComputeQuotaTarget.TeamName) == `[\"nlp\", \"research\", \"vision\"]`", paged="ComputeQuotaSummaries", table=True),
    # Studio: the team's domain and its user profiles.
    row("sagemaker describe-domain --domain-id {domain_id}", "AuthMode == 'SSO' && SingleSignOnApplicationArn != null"),
    row("sagemaker list-user-profiles --domain-id-equals {domain_id} --page-size 1",
        "sort(UserProfiles[].UserProfileName) == `[\"alice\", \"bob\", \"carol\"]`", paged="UserProfiles"),
    # EKS: the cluster's Kubernetes version, access entries, their policies, the add-on, Pod Identity.
    row("eks describe-cluster --name {eks_cluster}", "cluster.version == '{kubernetes_version}' && cluster.status == 'ACTIVE'"),
    row("eks list-access-entries --cluster-name {eks_cluster} --page-size 1", "contains(accessEntries, '{principal_arn}')", paged="accessEntries"),
    row("eks list-associated-access-policies --cluster-name {eks_cluster} --principal-arn {principal_arn}",
        "contains(associatedAccessPolicies[].accessScope.namespaces[], 'hyperpod-ns-vision')", table=True),
    row("eks describe-addon --cluster-name {eks_cluster} --addon-name " + TASK_GOVERNANCE, "addon.status == 'ACTIVE'"),
    row("eks list-pod-identity-associations --cluster-name {eks_cluster} --namespace hyperpod-ns-vision",
        "associations[0].serviceAccount == 'hyperpod-vision'"),
    # IAM Identity Center: the instance, its permission sets, the domains' applications, assignments, groups.
    row("sso-admin list-instances", "Instances[0].IdentityStoreId == '{identity_store_id}'"),
    row("sso-admin describe-instance --instance-arn {instance_arn}", "Status == 'ACTIVE' && IdentityStoreId == '{identity_store_id}'"),
    row("sso-admin list-permission-sets --instance-arn {instance_arn} --page-size 1",
        "contains(PermissionSets, '{permission_set_arn}')", paged="PermissionSets"),
    row("sso-admin list-applications --instance-arn {instance_arn}",
        "length(Applications[?ApplicationProviderArn == 'arn:aws:sso::aws:applicationProvider/sagemaker']) == `3`", table=True),
    row("sso-admin list-account-assignments --instance-arn {instance_arn} --account-id {account_id} --permission-set-arn {permission_set_arn}",
        "AccountAssignments[0].PrincipalType == 'GROUP'"),
    row("identitystore list-groups --identity-store-id {identity_store_id} --page-size 1", "contains(Groups[].DisplayName, 'TeamVision')", paged="Groups"),
    row("identitystore list-groups --identity-store-id d-123", error="ValidationException"),
    # FSx for Lustre: what a mount needs (DNSName, MountName); an id that does not exist.
    row("fsx describe-file-systems", "FileSystems[?FileSystemId == '{file_system_id}'].LustreConfiguration.MountName | [0] != null", table=True),
    row("fsx describe-file-systems --file-system-ids {file_system_id} fs-0123456789abcdef0", error="FileSystemNotFound"),
    # S3: the teams' prefixes' ownership marks, under the platform's prefix; Budgets; who the caller is.
    row("s3api list-objects-v2 --bucket {bucket} --prefix _hyperpod/owners/",
        "Contents[].Key == `[\"_hyperpod/owners/nlp\", \"_hyperpod/owners/research\", \"_hyperpod/owners/vision\"]` && Prefix == '_hyperpod/owners/'"),
    row("s3api get-object-tagging --bucket {bucket} --key _hyperpod/owners/vision", "TagSet[?Key == 'team'].Value | [0] == 'vision'"),
    row("s3api list-objects-v2 --bucket {bucket} --page-size 1",
        "length(Contents[?starts_with(Key, '_hyperpod/owners/')]) == `3`", paged="Contents"),
    row("budgets describe-budgets --account-id {account_id} --page-size 1",
        "sort(Budgets[].BudgetName) == `[\"hyperpod-nlp-monthly\", \"hyperpod-research-monthly\", \"hyperpod-vision-monthly\"]`", paged="Budgets"),
    row("sts get-caller-identity", "Arn == '{creator_arn}' && UserId == '{creator_id}' && Account == '{account_id}'", table=True),
]


@pytest.fixture(scope="module")
def built(sandbox_server, kube_cluster, tmp_path_factory):
    """The sample teams after one site.yml; (sandbox client, facts the commands name)."""
    sandbox_server.reset()
    sandbox_server.configure(status_delay=0.2)
    seeded = seed(sandbox_server, load_sample())
    assert_ok(Playbooks(sandbox_server, seeded, tmp_path_factory.mktemp("site"), copy.deepcopy(SAMPLE)).run("site.yml"), "site.yml")
    return sandbox_server, facts_of(sandbox_server, seeded, KubeApi(kube_cluster.directory))


def facts_of(client, seeded: dict, kube: KubeApi) -> dict:
    """What the commands name, read from the built sandbox with boto3 and from its Kubernetes API server."""
    sagemaker, eks, sso = (client.boto3_client(s) for s in ("sagemaker", "eks", "sso-admin"))
    cluster = SAMPLE["hyperpod_cluster"]
    cluster_arn = sagemaker.describe_cluster(ClusterName=cluster["name"])["ClusterArn"]
    [domain_id] = [d["DomainId"] for d in sagemaker.list_domains()["Domains"] if d["DomainName"] == "hyperpod-vision"]
    [instance] = sso.list_instances()["Instances"]
    permission_sets = sso.list_permission_sets(InstanceArn=instance["InstanceArn"], MaxResults=100)["PermissionSets"]
    [permission_set_arn] = [
        arn for arn in permission_sets
        if sso.describe_permission_set(InstanceArn=instance["InstanceArn"], PermissionSetArn=arn)["PermissionSet"]["Name"] == "hyperpod-vision"
    ]  # fmt: skip
    entries = eks.list_access_entries(clusterName=cluster["eks_cluster_name"])["accessEntries"]
    [principal_arn] = [arn for arn in entries if "AWSReservedSSO_hyperpod-vision_" in arn]
    quota_id = sagemaker.list_compute_quotas(ClusterArn=cluster_arn)["ComputeQuotaSummaries"][0]["ComputeQuotaId"]
    creator = sagemaker.describe_compute_quota(ComputeQuotaId=quota_id)["CreatedBy"]["IamIdentity"]
    served = kube.request("GET", "/version")
    return {
        "account_id": seeded["account_id"],
        "cluster_name": cluster["name"],
        "cluster_arn": cluster_arn,
        "node_count": sum(group["count"] for group in cluster["instance_groups"]),
        "domain_id": domain_id,
        "eks_cluster": cluster["eks_cluster_name"],
        "kubernetes_version": f"{served['major']}.{served['minor']}",
        "principal_arn": principal_arn,
        "instance_arn": instance["InstanceArn"],
        "identity_store_id": instance["IdentityStoreId"],
        "permission_set_arn": permission_set_arn,
        "file_system_id": seeded["fsx_file_system_id"],
        "bucket": seeded["data_bucket"],
        "creator_arn": creator["Arn"],
        "creator_id": creator["PrincipalId"],
    }


class CliModels:
    """The service models the CLI parses answers with: those of the botocore awscli carries.

    Read from its files with our botocore's loader: importing awscli here would make later imports
    of ``botocore`` resolve to its copy, and it sets AWS_DATA_PATH for every process started after.
    """

    def __init__(self) -> None:
        [package] = importlib.util.find_spec("awscli").submodule_search_locations
        self.loader = Loader(extra_search_paths=[str(Path(package) / "botocore" / "data")], include_default_search_paths=False)

    @functools.cache  # noqa: B019 - one instance per test
    def get_service_model(self, service: str) -> ServiceModel:
        return ServiceModel(self.loader.load_service_model(service, "service-2"), service_name=service)


def _operation(models, command: list[str]):
    service = "s3" if command[0] == "s3api" else command[0]
    model = models.get_service_model(service)
    [name] = [op for op in model.operation_names if xform_name(op, "-") == command[1]]
    return model.operation_model(name)


def _leaves(value):
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif value is not None:
        yield value


def _run(env: dict, command: list[str], output: str) -> subprocess.CompletedProcess:
    return subprocess.run([AWS, *command, "--output", output], env=env, capture_output=True, text=True, timeout=120, check=False)


def _problems(client, env: dict, facts: dict, spec: dict, cli_models: CliModels) -> list[str]:
    command = shlex.split(spec["command"].format(**facts))
    operation = _operation(cli_models, command)
    client.clear_requests()
    answer = _run(env, command, "json")
    calls = [r for r in client.requests() if r["operation"] == operation.name]
    if spec["error"]:
        found = []
        if f"An error occurred ({spec['error']}) when calling the {operation.name} operation" not in answer.stderr:
            found.append(f"expected {spec['error']}, got rc {answer.returncode}: {answer.stdout[-300:]}{answer.stderr[-300:]}")
        if spec["error"] not in {shape.name for shape in operation.error_shapes} | COMMON_ERRORS:
            found.append(f"{spec['error']} is not an error the model lists for {operation.name}")
        if len(calls) != 1:
            found.append(f"{len(calls)} requests for one error (retried?)")
        return found
    if answer.returncode != 0:
        return [f"rc {answer.returncode}: {answer.stderr[-600:]}"]
    printed = json.loads(answer.stdout)
    # The CLI shows members a paginator adds but the answer lacks as null (RequestCharged of ListObjectsV2):
    # shape_problems reads a null member as absent, as the CLI's parser wrote it.
    # Against the CLI's model only: the CLI drops members its (older) model lacks, which ours may require
    # (identitystore's GroupArn); the sandbox's answers meet our botocore's models in tests/unit/sandbox.
    found = shape_problems(operation.output_shape, printed, answer=True)
    if spec["check"] and jmespath.search(spec["check"].format(**facts), printed) is not True:
        found.append(f"{spec['check'].format(**facts)} is not true of {json.dumps(printed)[:1500]}")
    if spec["paged"]:
        items = printed.get(spec["paged"]) or []
        keys = [json.dumps(item, sort_keys=True) for item in items]
        if len(set(keys)) != len(keys):
            found.append(f"an item came twice in {len(keys)} paged {spec['paged']}")
        if not max(len(items), 1) <= len(calls) <= len(items) + 1:
            found.append(f"{len(calls)} requests for {len(items)} items in pages of one")
        if len(items) < 2:
            found.append(f"{len(items)} {spec['paged']}: too few to prove paging")
    elif len(calls) != 1:
        found.append(f"{len(calls)} requests for one answer")
    if spec["table"]:
        table = _run(env, command, "table")
        title = table.stdout.splitlines()[1].strip("| ") if table.returncode == 0 and table.stdout.count("\n") > 2 else ""
        if title != operation.name:
            found.append(f"table titled {title!r} (rc {table.returncode}): {table.stderr[-300:]}")
        missing = sorted(value for value in {str(v) for v in _leaves(printed) if not isinstance(v, bool)} if value not in table.stdout)
        if missing:
            found.append(f"values missing from the table: {missing[:5]}")
    return found


def test_the_aws_cli_reads_what_site_built_in_aws_shapes(built, tmp_path):
    client, facts = built
    config = tmp_path / "aws-config"
    config.write_text("")
    env = {
        "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
        "HOME": str(tmp_path),
        "AWS_CONFIG_FILE": str(config),
        "AWS_SHARED_CREDENTIALS_FILE": str(config),
        "AWS_ENDPOINT_URL": client.endpoint,
        # One attempt: an answer AWS would not give (HTTP 500) fails at once instead of being retried.
        "AWS_RETRY_MODE": "standard",
        "AWS_MAX_ATTEMPTS": "1",
        **SANDBOX_CREDENTIALS,
    }
    cli_models = CliModels()
    failures = {}
    for spec in COMMANDS:
        problems = _problems(client, env, facts, spec, cli_models)
        if problems:
            failures[spec["command"]] = problems
    assert failures == {}
