"""Answers the sandbox gives where moto 5.2.5 departs from AWS: the AWS CLI and the HyperPod CLI meet these first.

Paging that moves on, operations clients call on their own (DescribeInstance, ListApplications),
FSx's not-found error and mount name, identity store ids in AWS's format, the caller's IAM ARN,
a current Kubernetes version.
"""

from __future__ import annotations

import re

from sandbox.core import service_model, shape_problems
from sandbox.kube.api import KubeApi
from tests.unit.sandbox.aws_errors import refused
from tests.unit.sandbox.test_sagemaker_cluster import create_request, group


def test_cluster_nodes_page_one_by_one_to_the_end(seeded):
    client, seed = seeded
    client.configure(status_delay=0.0)
    sagemaker = client.boto3_client("sagemaker")
    sagemaker.create_cluster(**create_request(seed, [group(seed, "a", 3)]))
    seen, token = [], None
    for _ in range(5):
        page = sagemaker.list_cluster_nodes(ClusterName="hp-test", MaxResults=1, **({"NextToken": token} if token else {}))
        seen += [n["InstanceId"] for n in page["ClusterNodeSummaries"]]
        token = page.get("NextToken")
        if not token:
            break
    assert len(seen) == 3 and len(set(seen)) == 3
    assert token is None


def test_identity_center_instance_and_its_applications(seeded):
    client, seed = seeded
    sso = client.boto3_client("sso-admin")
    instance = sso.describe_instance(InstanceArn=seed["identity_center_instance_arn"])
    assert instance["IdentityStoreId"] == seed["identity_store_id"] and instance["Status"] == "ACTIVE"
    assert instance["OwnerAccountId"] == seed["account_id"]
    assert sso.list_applications(InstanceArn=seed["identity_center_instance_arn"])["Applications"] == []
    sagemaker = client.boto3_client("sagemaker")
    settings = {"ExecutionRole": seed["cluster_execution_role_arn"]}
    domain_id = sagemaker.create_domain(DomainName="hyperpod-vision", AuthMode="SSO", DefaultUserSettings=settings)["DomainId"]
    applications = sso.list_applications(InstanceArn=seed["identity_center_instance_arn"])["Applications"]
    assert [a["Name"] for a in applications] == [f"SageMakerStudio-{domain_id}"]
    other_account = sso.list_applications(InstanceArn=seed["identity_center_instance_arn"], Filter={"ApplicationAccount": "210987654321"})
    assert other_account["Applications"] == []
    assert refused(sso.describe_instance, InstanceArn="arn:aws:sso:::instance/ssoins-0000000000000000") == "ValidationException"


def test_fsx_unknown_file_system_is_not_found_and_lustre_has_a_mount_name(seeded):
    client, seed = seeded
    fsx = client.boto3_client("fsx")
    assert refused(fsx.describe_file_systems, FileSystemIds=[seed["fsx_file_system_id"], "fs-0123456789abcdef0"]) == "FileSystemNotFound"
    described = fsx.describe_file_systems(FileSystemIds=[seed["fsx_file_system_id"]])["FileSystems"][0]
    mount_name = described["LustreConfiguration"]["MountName"]
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,8}", mount_name) and mount_name != "fsx"  # PERSISTENT_2: a generated name
    assert described["Lifecycle"] == "AVAILABLE" and described["VpcId"] == seed["vpc_id"]
    assert fsx.describe_file_systems()["FileSystems"][0]["LustreConfiguration"]["MountName"] == mount_name  # stable


def test_identity_store_ids_have_aws_format_and_bad_or_unknown_ids_are_refused(seeded):
    client, seed = seeded
    assert re.fullmatch(r"d-[0-9a-f]{10}", seed["identity_store_id"])
    identitystore = client.boto3_client("identitystore")
    assert identitystore.list_groups(IdentityStoreId=seed["identity_store_id"])["Groups"]
    assert refused(identitystore.list_groups, IdentityStoreId="not-a-store") == "ValidationException"
    assert (
        refused(identitystore.list_groups, IdentityStoreId="d-0000000000" if seed["identity_store_id"] != "d-0000000000" else "d-0000000001")
        == "ResourceNotFoundException"
    )


def test_identity_store_answers_carry_the_arns_and_revisions_the_model_requires(seeded):
    client, seed = seeded
    identitystore = client.boto3_client("identitystore")
    store = seed["identity_store_id"]
    model = service_model("identitystore")
    groups = identitystore.list_groups(IdentityStoreId=store)
    assert shape_problems(model.operation_model("ListGroups").output_shape, _answer(groups), answer=True) == []
    group = groups["Groups"][0]
    assert group["GroupArn"] == f"arn:aws:identitystore:::group/{group['GroupId']}" and group["Revision"].isdigit()
    found = identitystore.get_group_id(IdentityStoreId=store, AlternateIdentifier={"UniqueAttribute": {
        "AttributePath": "displayName", "AttributeValue": group["DisplayName"]}})  # fmt: skip
    assert found["GroupArn"] == group["GroupArn"]
    described = identitystore.describe_group(IdentityStoreId=store, GroupId=group["GroupId"])
    assert shape_problems(model.operation_model("DescribeGroup").output_shape, _answer(described), answer=True) == []
    user_id = identitystore.create_user(IdentityStoreId=store, UserName="zoe", DisplayName="Zoe", Name={"GivenName": "Zoe", "FamilyName": "Z"})["UserId"]
    membership = identitystore.create_group_membership(IdentityStoreId=store, GroupId=group["GroupId"], MemberId={"UserId": user_id})
    for operation, answer in (
        ("DescribeUser", identitystore.describe_user(IdentityStoreId=store, UserId=user_id)),
        ("ListUsers", identitystore.list_users(IdentityStoreId=store)),
        ("ListGroupMemberships", identitystore.list_group_memberships(IdentityStoreId=store, GroupId=group["GroupId"])),
        ("DescribeGroupMembership", identitystore.describe_group_membership(IdentityStoreId=store, MembershipId=membership["MembershipId"])),
    ):
        assert shape_problems(model.operation_model(operation).output_shape, _answer(answer), answer=True) == [], operation


def _answer(response: dict) -> dict:
    """A boto3 answer as the wire had it (timestamps are not checked by shape_problems)."""
    return {k: v for k, v in response.items() if k != "ResponseMetadata"}


def test_the_caller_is_an_iam_user_and_sagemaker_records_the_same_identity(seeded):
    client, seed = seeded
    caller = client.boto3_client("sts").get_caller_identity()
    assert caller["Arn"] == f"arn:aws:iam::{seed['account_id']}:user/sandbox"
    assert re.fullmatch(r"AIDA[A-Z0-9]{17}", caller["UserId"])
    sagemaker = client.boto3_client("sagemaker")
    cluster_arn = sagemaker.create_cluster(**create_request(seed, [group(seed, "a", 1)]))["ClusterArn"]
    quota = sagemaker.create_compute_quota(
        Name="vision-quota", ClusterArn=cluster_arn,
        ComputeQuotaConfig={"ComputeQuotaResources": [{"InstanceType": "ml.g5.12xlarge", "Count": 1}]},
        ComputeQuotaTarget={"TeamName": "vision"},
    )
    created_by = sagemaker.describe_compute_quota(ComputeQuotaId=quota["ComputeQuotaId"])["CreatedBy"]["IamIdentity"]
    assert (created_by["Arn"], created_by["PrincipalId"]) == (caller["Arn"], caller["UserId"])


def test_eks_clusters_run_the_kubernetes_their_api_server_serves_and_add_ons_refuse_an_old_one(seeded, kube_cluster):
    client, seed = seeded
    eks = client.boto3_client("eks")
    cluster = eks.describe_cluster(name=seed["eks_cluster_arn"].rsplit("/", 1)[1])["cluster"]
    served = KubeApi(kube_cluster.directory).request("GET", "/version")
    # EKS reports the control plane's major.minor; the cluster's endpoint is that API server.
    assert cluster["version"] == f"{served['major']}.{served['minor']}"
    assert cluster["endpoint"] == KubeApi(kube_cluster.directory).server
    assert tuple(int(p) for p in cluster["version"].split(".")) >= (1, 29)  # Task Governance's minimum
    old = eks.create_cluster(
        name="old", version="1.19", roleArn=seed["eks_role_arn"], resourcesVpcConfig={"subnetIds": seed["subnet_ids"]},
    )["cluster"]["name"]
    assert refused(eks.create_addon, clusterName=old, addonName="amazon-sagemaker-hyperpod-taskgovernance") == "InvalidParameterException"
