"""Everything AWS holds for one team, read with boto3 directly (not with the code under test)."""

from __future__ import annotations

import json

PREFIX = "hyperpod"


def _permission_set(sso, instance_arn: str, name: str) -> dict | None:
    for page in sso.get_paginator("list_permission_sets").paginate(InstanceArn=instance_arn):
        for arn in page["PermissionSets"]:
            described = sso.describe_permission_set(InstanceArn=instance_arn, PermissionSetArn=arn)["PermissionSet"]
            if described["Name"] == name:
                return described
    return None


def permission_sets_named(sso, instance_arn: str, name: str) -> int:
    count = 0
    for page in sso.get_paginator("list_permission_sets").paginate(InstanceArn=instance_arn):
        for arn in page["PermissionSets"]:
            if sso.describe_permission_set(InstanceArn=instance_arn, PermissionSetArn=arn)["PermissionSet"]["Name"] == name:
                count += 1
    return count


def domains_named(sagemaker, name: str) -> list[dict]:
    return [d for d in sagemaker.list_domains()["Domains"] if d["DomainName"] == name]


def quotas_of_team(sagemaker, team: str) -> list[dict]:
    quotas = sagemaker.list_compute_quotas()["ComputeQuotaSummaries"]
    return [q for q in quotas if q.get("ComputeQuotaTarget", {}).get("TeamName") == team and q.get("Status") != "Deleted"]


def team_snapshot(client, seed: dict, team: str) -> dict:
    """Describe outputs of every resource of ``team``; equal snapshots mean nothing of the team moved."""
    sso = client.boto3_client("sso-admin")
    sagemaker = client.boto3_client("sagemaker")
    eks = client.boto3_client("eks")
    budgets = client.boto3_client("budgets")
    instance = seed["identity_center_instance_arn"]
    snapshot: dict = {}

    permission_set = _permission_set(sso, instance, f"{PREFIX}-{team}")
    snapshot["permission_set"] = permission_set
    if permission_set:
        arn = permission_set["PermissionSetArn"]
        snapshot["inline_policy"] = sso.get_inline_policy_for_permission_set(InstanceArn=instance, PermissionSetArn=arn)["InlinePolicy"]
        snapshot["managed_policies"] = sso.list_managed_policies_in_permission_set(InstanceArn=instance, PermissionSetArn=arn)["AttachedManagedPolicies"]
        snapshot["assignments"] = sso.list_account_assignments(InstanceArn=instance, AccountId=seed["account_id"], PermissionSetArn=arn)["AccountAssignments"]

    cluster = seed["eks_cluster_arn"].rsplit("/", 1)[1]
    entries = {}
    for principal in eks.list_access_entries(clusterName=cluster)["accessEntries"]:
        if f"AWSReservedSSO_{PREFIX}-{team}_" in principal:
            entries[principal] = {
                "entry": eks.describe_access_entry(clusterName=cluster, principalArn=principal)["accessEntry"],
                "policies": eks.list_associated_access_policies(clusterName=cluster, principalArn=principal)["associatedAccessPolicies"],
            }
    snapshot["access_entries"] = entries

    domains = domains_named(sagemaker, f"{PREFIX}-{team}")
    snapshot["domains"] = []
    for domain in domains:
        described = sagemaker.describe_domain(DomainId=domain["DomainId"])
        described.pop("ResponseMetadata", None)
        profiles = sagemaker.list_user_profiles(DomainIdEquals=domain["DomainId"])["UserProfiles"]
        snapshot["domains"].append({"domain": described, "profiles": sorted(p["UserProfileName"] for p in profiles)})

    snapshot["quotas"] = []
    for quota in quotas_of_team(sagemaker, team):
        described = sagemaker.describe_compute_quota(ComputeQuotaId=quota["ComputeQuotaId"])
        described.pop("ResponseMetadata", None)
        snapshot["quotas"].append(described)

    try:
        snapshot["budget"] = budgets.describe_budget(AccountId=seed["account_id"], BudgetName=f"{PREFIX}-{team}-monthly")["Budget"]
    except budgets.exceptions.NotFoundException:
        snapshot["budget"] = None

    tags = {}
    if permission_set:
        listed = sso.list_tags_for_resource(InstanceArn=instance, ResourceArn=permission_set["PermissionSetArn"])["Tags"]
        tags["permission_set"] = {t["Key"]: t["Value"] for t in listed}
    for kind, arns in (("domain", [d["domain"]["DomainArn"] for d in snapshot["domains"]]), ("quota", [q["ComputeQuotaArn"] for q in snapshot["quotas"]])):
        for arn in arns:
            tags[kind] = {t["Key"]: t["Value"] for t in sagemaker.list_tags(ResourceArn=arn)["Tags"]}
    snapshot["tags"] = tags
    s3 = client.boto3_client("s3")
    listing = s3.list_objects_v2(Bucket=seed["data_bucket"], Prefix=f"{team}/")
    snapshot["s3_objects"] = sorted(o["Key"] for o in listing.get("Contents", []))
    # The prefix's ownership mark and the team's entry in the ledger of retired names, beside the marks (None: none).
    marks = s3.list_objects_v2(Bucket=seed["data_bucket"], Prefix=f"_hyperpod/owners/{team}").get("Contents", [])
    snapshot["s3_mark"] = None
    if any(o["Key"] == f"_hyperpod/owners/{team}" for o in marks):
        tagging = s3.get_object_tagging(Bucket=seed["data_bucket"], Key=f"_hyperpod/owners/{team}")["TagSet"]
        snapshot["s3_mark"] = {t["Key"]: t["Value"] for t in tagging}
    retired = s3.list_objects_v2(Bucket=seed["data_bucket"], Prefix=f"_hyperpod/retired/{team}").get("Contents", [])
    snapshot["retired"] = None
    if any(o["Key"] == f"_hyperpod/retired/{team}" for o in retired):
        snapshot["retired"] = json.loads(s3.get_object(Bucket=seed["data_bucket"], Key=f"_hyperpod/retired/{team}")["Body"].read())
    return snapshot


def cluster_snapshot(client, seed: dict, name: str) -> dict:
    """The HyperPod cluster, its scheduler policy and the Task Governance add-on, as AWS describes them."""
    sagemaker = client.boto3_client("sagemaker")
    eks = client.boto3_client("eks")
    cluster = sagemaker.describe_cluster(ClusterName=name)
    summaries = sagemaker.list_cluster_scheduler_configs(ClusterArn=cluster["ClusterArn"])["ClusterSchedulerConfigSummaries"]
    configs = [c for c in summaries if c["Status"] != "Deleted"]
    policies = [sagemaker.describe_cluster_scheduler_config(ClusterSchedulerConfigId=c["ClusterSchedulerConfigId"]) for c in configs]
    eks_name = seed["eks_cluster_arn"].rsplit("/", 1)[1]
    addon = eks.describe_addon(clusterName=eks_name, addonName="amazon-sagemaker-hyperpod-taskgovernance")["addon"]
    for item in [cluster, *policies]:
        item.pop("ResponseMetadata", None)
    return {"cluster": cluster, "scheduler_policies": policies, "addon_status": addon["status"]}


def main() -> None:
    """``python -m tests.integration.snapshots TEAM...`` (or ``--cluster NAME``): snapshots as JSON, for molecule's verify plays.

    The sandbox and its seed come from HYPERPOD_SANDBOX_URL (or $SANDBOX_STATE_DIR/endpoint and /instance)
    and HYPERPOD_SANDBOX_SEED (or $SANDBOX_STATE_DIR/seed.json).
    """
    import os
    import sys
    from pathlib import Path

    from sandbox.client import SandboxClient

    state = Path(os.environ.get("SANDBOX_STATE_DIR", Path(__file__).resolve().parents[2] / ".sandbox"))
    client = SandboxClient() if os.environ.get("HYPERPOD_SANDBOX_URL") else SandboxClient.recorded_in(state)
    client.verify()  # a snapshot of another sandbox would pass or fail for someone else's state
    seed = json.loads(Path(os.environ.get("HYPERPOD_SANDBOX_SEED", state / "seed.json")).read_text())
    if sys.argv[1:2] == ["--cluster"]:
        print(json.dumps(cluster_snapshot(client, seed, sys.argv[2]), default=str, sort_keys=True))
        return
    print(json.dumps({team: team_snapshot(client, seed, team) for team in sys.argv[1:]}, default=str, sort_keys=True))


if __name__ == "__main__":
    main()
