"""Changes made behind the collection's back, as a person with console access would.

``python -m tests.integration.out_of_band`` applies the four changes the drift scenario
expects drift.yml to report, and prints what it changed as JSON.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from sandbox.client import SandboxClient

PREFIX = "hyperpod"


def shrink_quota(client, team: str) -> str:
    sagemaker = client.boto3_client("sagemaker")
    quota = next(q for q in sagemaker.list_compute_quotas()["ComputeQuotaSummaries"] if q["ComputeQuotaTarget"]["TeamName"] == team)
    described = sagemaker.describe_compute_quota(ComputeQuotaId=quota["ComputeQuotaId"])
    config = described["ComputeQuotaConfig"]
    config["ComputeQuotaResources"][0]["Count"] = max(0, config["ComputeQuotaResources"][0]["Count"] - 1)
    sagemaker.update_compute_quota(ComputeQuotaId=quota["ComputeQuotaId"], TargetVersion=described["ComputeQuotaVersion"], ComputeQuotaConfig=config)
    return f"{team}: quota count lowered"


def detach_access_policy(client, seed: dict, team: str) -> str:
    eks = client.boto3_client("eks")
    cluster = seed["eks_cluster_arn"].rsplit("/", 1)[1]
    principal = next(p for p in eks.list_access_entries(clusterName=cluster)["accessEntries"] if f"AWSReservedSSO_{PREFIX}-{team}_" in p)
    policy = eks.list_associated_access_policies(clusterName=cluster, principalArn=principal)["associatedAccessPolicies"][0]["policyArn"]
    eks.disassociate_access_policy(clusterName=cluster, principalArn=principal, policyArn=policy)
    return f"{team}: access policy {policy.rsplit('/', 1)[1]} detached"


def delete_access_entry(client, seed: dict, team: str) -> str:
    eks = client.boto3_client("eks")
    cluster = seed["eks_cluster_arn"].rsplit("/", 1)[1]
    principal = next(p for p in eks.list_access_entries(clusterName=cluster)["accessEntries"] if f"AWSReservedSSO_{PREFIX}-{team}_" in p)
    eks.delete_access_entry(clusterName=cluster, principalArn=principal)
    return f"{team}: access entry deleted"


def delete_user_profile(client, team: str) -> str:
    sagemaker = client.boto3_client("sagemaker")
    domain = next(d for d in sagemaker.list_domains()["Domains"] if d["DomainName"] == f"{PREFIX}-{team}")
    profile = sagemaker.list_user_profiles(DomainIdEquals=domain["DomainId"])["UserProfiles"][0]["UserProfileName"]
    sagemaker.delete_user_profile(DomainId=domain["DomainId"], UserProfileName=profile)
    return f"{team}: user profile {profile} deleted"


def hand_made_pod_role(client, seed: dict, team: str) -> dict:
    """A role named as the team's pod role, made for pods by someone else (an admin policy, trusted by every cluster's
    pods, tagged by its owner), and the association of the team's service account to it: what the collection must not
    take over. Returns {"role": the role, "association": the association}."""
    iam, eks = client.boto3_client("iam"), client.boto3_client("eks")
    trust = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": "pods.eks.amazonaws.com"}, "Action": ["sts:AssumeRole", "sts:TagSession"]}],
    }
    name = f"{PREFIX}-{team}-pods"
    role = iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(trust), Tags=[{"Key": "owner", "Value": "ml-infra"}])["Role"]
    admin = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
    policy = iam.create_policy(PolicyName=f"{name}-admin", PolicyDocument=json.dumps(admin))["Policy"]["Arn"]
    iam.attach_role_policy(RoleName=name, PolicyArn=policy)
    cluster = seed["eks_cluster_arn"].rsplit("/", 1)[1]
    association = eks.create_pod_identity_association(
        clusterName=cluster, namespace=f"hyperpod-ns-{team}", serviceAccount=f"{PREFIX}-{team}", roleArn=role["Arn"]
    )["association"]
    return {"role": role, "association": association}


def main() -> None:
    state = Path(os.environ.get("SANDBOX_STATE_DIR", Path(__file__).resolve().parents[2] / ".sandbox"))
    client = SandboxClient() if os.environ.get("HYPERPOD_SANDBOX_URL") else SandboxClient.recorded_in(state)
    client.verify()  # another sandbox's state is not this scenario's to change
    seed = json.loads(Path(os.environ.get("HYPERPOD_SANDBOX_SEED", state / "seed.json")).read_text())
    changes = [
        shrink_quota(client, "vision"),
        detach_access_policy(client, seed, "nlp"),
        delete_access_entry(client, seed, "research"),
        delete_user_profile(client, "vision"),
    ]
    print(json.dumps(changes))


if __name__ == "__main__":
    main()
