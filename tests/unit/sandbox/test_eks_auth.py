"""The sandbox's EKS Auth (AssumeRoleForPodIdentity) against the real API server: tokens, associations, trust, credentials.

One cluster, two namespaces with a service account and a pod each, a role trusted for one namespace only, set up
once for the module (a reset of the sandbox waits for the namespaces to go: seconds). Tests that add to it remove
what they add.
"""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from sandbox.client import SANDBOX_CREDENTIALS
from sandbox.core import service_model, shape_problems
from sandbox.kube import pod_identity_agent as node
from sandbox.kube.api import KubeApi
from tests.pod_tokens import expired_token

CLUSTER, BUCKET = "ml-eks", "team-data"
OWN, OTHER = "team-a", "team-b"


def trust(cluster_arn: str, namespace: str, account: str) -> dict:
    return {
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow", "Principal": {"Service": "pods.eks.amazonaws.com"}, "Action": ["sts:AssumeRole", "sts:TagSession"],
            "Condition": {
                "StringEquals": {"aws:SourceAccount": account, "aws:RequestTag/kubernetes-namespace": namespace},
                "ArnEquals": {"aws:SourceArn": cluster_arn},
            },
        }],
    }  # fmt: skip


# The session tags reach the role's policy as aws:PrincipalTag: the pod may use its namespace's prefix only.
DATA_POLICY = {
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"], "Resource": f"arn:aws:s3:::{BUCKET}/${{aws:PrincipalTag/kubernetes-namespace}}/*"},
    ],
}


@pytest.fixture(scope="module")
def world(sandbox_server, kube_cluster):
    sandbox_server.reset()
    # Its role is associated right after it is made, as the `sandbox` fixture allows (no IAM propagation delay).
    sandbox_server.set_faults(iam_propagation_s=0)
    eks, iam, s3 = (sandbox_server.boto3_client(s) for s in ("eks", "iam", "s3"))
    cluster = eks.create_cluster(name=CLUSTER, roleArn="arn:aws:iam::123456789012:role/eks", resourcesVpcConfig={"subnetIds": ["subnet-1"]})
    cluster_arn = cluster["cluster"]["arn"]
    s3.create_bucket(Bucket=BUCKET)
    role_arn = iam.create_role(RoleName="team-a-pods", AssumeRolePolicyDocument=json.dumps(trust(cluster_arn, OWN, "123456789012")))["Role"]["Arn"]
    iam.put_role_policy(RoleName="team-a-pods", PolicyName="data", PolicyDocument=json.dumps(DATA_POLICY))
    api = KubeApi(kube_cluster.directory)
    pods = {}
    for namespace in (OWN, OTHER):
        api.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        for account in ("jobs", "other"):
            service_account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account}}
            api.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts", service_account)
            pods[namespace, account] = node.pod(api, namespace, account, f"{account}-pod")
    association = eks.create_pod_identity_association(clusterName=CLUSTER, namespace=OWN, serviceAccount="jobs", roleArn=role_arn)["association"]
    return {"api": api, "eks": eks, "pods": pods, "role_arn": role_arn, "cluster_arn": cluster_arn, "association": association, "pki": kube_cluster.pki}


def ask(sandbox, token: str, cluster: str = CLUSTER) -> dict:
    return node.agent(sandbox).assume_role_for_pod_identity(clusterName=cluster, token=token)


def refused(sandbox, token: str, cluster: str = CLUSTER) -> tuple[str, int]:
    with pytest.raises(ClientError) as error:
        ask(sandbox, token, cluster)
    return error.value.response["Error"]["Code"], error.value.response["ResponseMetadata"]["HTTPStatusCode"]


def test_the_pod_of_the_associated_service_account_gets_the_role(sandbox_server, world):
    own_pod = world["pods"][OWN, "jobs"]
    answer = ask(sandbox_server, node.token(world["api"], OWN, "jobs", own_pod))
    output = service_model("eks-auth").operation_model("AssumeRoleForPodIdentity").output_shape
    assert shape_problems(output, {k: v for k, v in answer.items() if k != "ResponseMetadata"}, answer=True) == []
    assert answer["subject"] == {"namespace": OWN, "serviceAccount": "jobs"}
    assert answer["audience"] == "pods.eks.amazonaws.com"
    assert answer["podIdentityAssociation"] == {k: world["association"][k] for k in ("associationArn", "associationId")}
    assert answer["assumedRoleUser"]["arn"].startswith(f"arn:aws:sts::123456789012:assumed-role/team-a-pods/eks-{CLUSTER}-jobs-pod-")
    caller = node.pod_client(sandbox_server, "sts", answer).get_caller_identity()
    assert caller["Arn"] == answer["assumedRoleUser"]["arn"]
    # The role's policy, with the session's kubernetes-namespace tag as aws:PrincipalTag: its own prefix, nothing else.
    s3 = node.pod_client(sandbox_server, "s3", answer)
    s3.put_object(Bucket=BUCKET, Key=f"{OWN}/model.pt", Body=b"weights")
    assert s3.get_object(Bucket=BUCKET, Key=f"{OWN}/model.pt")["Body"].read() == b"weights"
    for key in (f"{OTHER}/model.pt", "model.pt"):
        with pytest.raises(ClientError) as denied:
            s3.put_object(Bucket=BUCKET, Key=key, Body=b"x")
        assert denied.value.response["Error"]["Code"] == "AccessDenied", key


def test_a_token_the_api_server_does_not_authenticate_is_refused(sandbox_server, world):
    api, own_pod = world["api"], world["pods"][OWN, "jobs"]
    # Shaped as a JWT, signed by nobody.
    assert refused(sandbox_server, "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl") == ("InvalidTokenException", 400)
    # The API server's own audience, not the one EKS projects for Pod Identity.
    assert refused(sandbox_server, node.token(api, OWN, "jobs", own_pod, audience="https://kubernetes.default.svc")) == ("InvalidTokenException", 400)
    # A token of the right service account that no pod holds (not bound to a pod).
    assert refused(sandbox_server, node.token(api, OWN, "jobs")) == ("InvalidTokenException", 400)
    # Signed with the cluster's key, expired.
    assert refused(sandbox_server, expired_token(world["pki"], api, own_pod)) == ("ExpiredTokenException", 400)


def test_no_association_no_credentials(sandbox_server, world):
    api = world["api"]
    # Another service account of the namespace, and the same name in another namespace.
    assert refused(sandbox_server, node.token(api, OWN, "other", world["pods"][OWN, "other"])) == ("ResourceNotFoundException", 404)
    assert refused(sandbox_server, node.token(api, OTHER, "jobs", world["pods"][OTHER, "jobs"])) == ("ResourceNotFoundException", 404)
    assert refused(sandbox_server, node.token(api, OWN, "jobs", world["pods"][OWN, "jobs"]), cluster="nope") == ("ResourceNotFoundException", 404)


def test_the_trust_policy_decides(sandbox_server, world):
    api, eks = world["api"], world["eks"]
    # An association from the other namespace to the role: the trust's kubernetes-namespace condition refuses it.
    role_arn = world["role_arn"]
    borrowed = eks.create_pod_identity_association(clusterName=CLUSTER, namespace=OTHER, serviceAccount="jobs", roleArn=role_arn)["association"]
    # Without session tags there is no kubernetes-namespace to meet the condition: refused too.
    untagged = eks.create_pod_identity_association(clusterName=CLUSTER, namespace=OWN, serviceAccount="other", roleArn=role_arn, disableSessionTags=True)
    untagged = untagged["association"]
    try:
        assert refused(sandbox_server, node.token(api, OTHER, "jobs", world["pods"][OTHER, "jobs"])) == ("AccessDeniedException", 400)
        assert refused(sandbox_server, node.token(api, OWN, "other", world["pods"][OWN, "other"])) == ("AccessDeniedException", 400)
    finally:
        for association in (borrowed, untagged):
            eks.delete_pod_identity_association(clusterName=CLUSTER, associationId=association["associationId"])


def test_a_request_that_breaks_the_model_is_refused(sandbox_server, world):
    unchecked = boto3.client(
        "eks-auth", region_name="us-east-1", endpoint_url=sandbox_server.endpoint, config=Config(parameter_validation=False),
        aws_access_key_id=SANDBOX_CREDENTIALS["AWS_ACCESS_KEY_ID"], aws_secret_access_key=SANDBOX_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    )  # fmt: skip
    with pytest.raises(ClientError) as missing:
        unchecked.assume_role_for_pod_identity(clusterName=CLUSTER, token="not a jwt")
    assert missing.value.response["Error"]["Code"] == "InvalidParameterException"
    assert "token" in str(missing.value)
