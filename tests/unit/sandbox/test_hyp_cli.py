"""Issue 40: a member's real way in, end to end: the AWS CLI and the SageMaker HyperPod CLI (``hyp``), as a team member.

The member is a session of the team's Identity Center permission set role (``AWSReservedSSO_hyperpod-<team>_<suffix>``
under ``/aws-reserved/sso.amazonaws.com/``) holding the policy the collection renders for it (team_policy), with the
access entry and access policies the collection associates for the team file's defaults
(access_entry.team_access_policies: HyperPod training and inference in the team's namespace; no cluster read, which
hyp's job commands do not need). The real ``aws`` (.venv's awscli) and the real ``hyp`` (PyPI sagemaker-hyperpod, in a
venv of its own: sandbox/hyp/install.sh, cached once per machine) run with ``AWS_ENDPOINT_URL`` at the worker's sandbox,
as tests/integration/test_aws_cli.py runs the AWS CLI:

- ``aws eks update-kubeconfig`` writes the kubeconfig whose exec plugin is ``aws eks get-token``;
- ``hyp set-cluster-context`` reads the HyperPod cluster, the caller's role and its access entry (team_policy), and
  writes the context;
- ``hyp list hyp-pytorch-job`` and ``hyp create hyp-pytorch-job`` reach the sandbox's kube-apiserver with the token the
  exec plugin makes: the API server asks the sandbox's TokenReview and SubjectAccessReview webhooks
  (sandbox/services/eks_kubernetes_webhook.py);
- the same in another team's namespace is the API server's 403, and the other team's role and access entry are AWS's
  AccessDeniedException.

The HyperPodPyTorchJob CRD is the HyperPod training operator's (an EKS add-on the sandbox does not run): the test
installs a CRD of that group, version and kind whose schema keeps what it is given (an assumption: the operator's own
schema is not published as a file; ``hyp`` builds the object from its template package).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import boto3
import pytest
import yaml
from ansible_collections.hyperpod.tenancy.plugins.module_utils import access_entry, naming

from sandbox.kube.api import KubeApi, KubeError
from tests.unit.sandbox.aws_errors import refused
from tests.unit.sandbox.permission_set_roles import permission_set_roles
from tests.unit.sandbox.test_sagemaker_cluster import NAME

ROOT = Path(__file__).resolve().parents[3]
AWS = str(Path(sys.executable).with_name("aws"))
TEAM, OTHER = "vision", "nlp"
OWN, OTHERS = naming.namespace(TEAM), naming.namespace(OTHER)
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "hyperpodpytorchjobs.sagemaker.amazonaws.com"},
    "spec": {
        "group": "sagemaker.amazonaws.com",
        "scope": "Namespaced",
        "names": {"plural": "hyperpodpytorchjobs", "singular": "hyperpodpytorchjob", "kind": "HyperPodPyTorchJob", "shortNames": ["hyppj"]},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                "subresources": {"status": {}},
            }
        ],
    },
}


@pytest.fixture(scope="session")
def hyp_venv() -> Path:
    """The HyperPod CLI's venv, installed from PyPI once per machine (``make hyp-cli``; here when the target was not run)."""
    started = time.monotonic()
    found = subprocess.run([str(ROOT / "sandbox/hyp/install.sh")], capture_output=True, text=True, timeout=1800, check=False)
    assert found.returncode == 0, found.stderr[-3000:]
    if "installing" in found.stderr:
        print(f"sagemaker-hyperpod installed in {time.monotonic() - started:.0f} s")
    return Path(found.stdout.strip())


@pytest.fixture
def member(seeded, kube_cluster, hyp_venv, tmp_path):
    """Two teams set up as the collection leaves them; the member of the first's environment, with nothing of the admin's."""
    client, seed = seeded
    region = seed["region"]
    eks, sts = client.boto3_client("eks", region), client.boto3_client("sts", region)
    roles, eks_name = permission_set_roles(client, seed, [naming.permission_set_name(team) for team in (TEAM, OTHER)], (TEAM, OTHER))
    roles = {team: roles[naming.permission_set_name(team)] for team in (TEAM, OTHER)}
    for team, role in roles.items():
        eks.create_access_entry(clusterName=eks_name, principalArn=role["Arn"], kubernetesGroups=[naming.kubernetes_group(team)])
        for policy in access_entry.team_access_policies(dict(access_entry.TEAM_FILE_SECTION), naming.namespace(team)):
            eks.associate_access_policy(
                clusterName=eks_name, principalArn=role["Arn"], policyArn=access_entry.policy_arn(policy), accessScope=policy["access_scope"]
            )
    api = KubeApi(kube_cluster.directory)
    for namespace in (OWN, OTHERS):
        api.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    # Made anew (one a test left behind is removed first, and one being removed waited for), removed when the test ends.
    crd_path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD['metadata']['name']}"
    deadline = time.monotonic() + 60
    while True:
        try:
            left = api.request("GET", crd_path)
        except KubeError as error:
            assert error.status == 404, error
            break
        if not left["metadata"].get("deletionTimestamp"):
            api.request("DELETE", crd_path)
        assert time.monotonic() < deadline, "a HyperPodPyTorchJob CRD of an earlier test is still there"
        time.sleep(0.2)
    api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD)
    while not any(c["type"] == "Established" and c["status"] == "True" for c in (api.request("GET", crd_path).get("status") or {}).get("conditions") or []):
        assert time.monotonic() < deadline, "the HyperPodPyTorchJob CRD was not established"
        time.sleep(0.2)
    credentials = sts.assume_role(RoleArn=roles[TEAM]["Arn"], RoleSessionName="alice")["Credentials"]
    home = tmp_path / "home"
    home.mkdir()
    (home / "aws-config").write_text("")
    env = {
        # hyp first (its own python), then the awscli it and the kubeconfig's exec plugin call by name.
        "PATH": f"{hyp_venv / 'bin'}:{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(home),
        "AWS_CONFIG_FILE": str(home / "aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(home / "aws-config"),
        "AWS_ENDPOINT_URL": client.endpoint,
        "AWS_REGION": region,
        "AWS_DEFAULT_REGION": region,
        "AWS_ACCESS_KEY_ID": credentials["AccessKeyId"],
        "AWS_SECRET_ACCESS_KEY": credentials["SecretAccessKey"],
        "AWS_SESSION_TOKEN": credentials["SessionToken"],
        "AWS_RETRY_MODE": "standard",
        "AWS_MAX_ATTEMPTS": "1",
        # hyp's telemetry GETs an S3 URL of AWS's with no timeout: refused at once here; the sandbox and the API server
        # are on the loopback.
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }

    def run(*command: str) -> subprocess.CompletedProcess:
        return subprocess.run(list(command), env=env, cwd=home, capture_output=True, text=True, timeout=180, check=False)

    session = {
        "aws_access_key_id": credentials["AccessKeyId"],
        "aws_secret_access_key": credentials["SecretAccessKey"],
        "aws_session_token": credentials["SessionToken"],
    }
    yield {"run": run, "home": home, "api": api, "eks_name": eks_name, "roles": roles, "session": session, "client": client, "region": region}
    api.request("DELETE", crd_path)
    for namespace in (OWN, OTHERS):
        api.request("DELETE", f"/api/v1/namespaces/{namespace}")


def _ok(answer: subprocess.CompletedProcess) -> str:
    assert answer.returncode == 0, (answer.args, answer.stdout[-2000:], answer.stderr[-3000:])
    return answer.stdout + answer.stderr


def test_a_member_connects_with_aws_and_hyp_lists_and_submits_in_the_own_namespace_only(member):
    run, api = member["run"], member["api"]
    # aws eks update-kubeconfig: DescribeCluster on the shared cluster (the permission set's), an exec plugin of aws.
    _ok(run(AWS, "eks", "update-kubeconfig", "--name", member["eks_name"]))
    kubeconfig = yaml.safe_load((member["home"] / ".kube/config").read_text())
    [user] = kubeconfig["users"]
    assert user["user"]["exec"]["command"] == "aws" and "get-token" in user["user"]["exec"]["args"]
    # hyp set-cluster-context: SageMaker's DescribeCluster, IAM's GetRole of the caller's role, EKS's DescribeAccessEntry
    # of it (the CLI stops when one is refused), then aws eks update-kubeconfig again and the context's namespace.
    connected = _ok(run("hyp", "set-cluster-context", "--cluster-name", NAME, "--namespace", OWN, "--debug"))
    assert f"Access confirmed for {member['roles'][TEAM]['Arn']}" in connected, connected
    kubeconfig = yaml.safe_load((member["home"] / ".kube/config").read_text())
    [context] = [c for c in kubeconfig["contexts"] if c["name"] == kubeconfig["current-context"]]
    assert context["context"]["namespace"] == OWN
    # A job submitted to the team's queue, then listed (each hyp command takes seconds to start: no empty listing first).
    queue = f"{OWN}-localqueue"
    submitted = run("hyp", "create", "hyp-pytorch-job", "--job-name", "train-1", "--image", "public.ecr.aws/docker/library/python:3.12",
                    "--namespace", OWN, "--queue-name", queue)  # fmt: skip
    _ok(submitted)
    job = api.request("GET", f"/apis/sagemaker.amazonaws.com/v1/namespaces/{OWN}/hyperpodpytorchjobs/train-1")
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == queue
    assert "train-1" in _ok(run("hyp", "list", "hyp-pytorch-job", "--namespace", OWN))
    # Another team's namespace: the API server refuses the member's token there (403), list and submit alike.
    refused_list = run("hyp", "list", "hyp-pytorch-job", "--namespace", OTHERS)
    assert refused_list.returncode == 1 and f"Access denied to resource '' in namespace '{OTHERS}'" in refused_list.stdout, refused_list
    user = f"assumed-role/{member['roles'][TEAM]['RoleName']}/alice"
    assert f'{user}\\" cannot list resource \\"hyperpodpytorchjobs\\"' in refused_list.stderr, refused_list.stderr[-3000:]
    refused_create = run("hyp", "create", "hyp-pytorch-job", "--job-name", "train-2", "--image", "public.ecr.aws/docker/library/python:3.12",
                         "--namespace", OTHERS, "--queue-name", f"{OTHERS}-localqueue")  # fmt: skip
    assert refused_create.returncode != 0 or "Failed to create" in refused_create.stdout + refused_create.stderr, refused_create
    assert f'{user}\\" cannot create resource \\"hyperpodpytorchjobs\\"' in refused_create.stdout + refused_create.stderr, refused_create
    assert api.request("GET", f"/apis/sagemaker.amazonaws.com/v1/namespaces/{OTHERS}/hyperpodpytorchjobs")["items"] == []


def test_without_the_own_access_entry_read_hyp_does_not_connect(member):
    """The permission set's OwnAccessEntryRead is what hyp set-cluster-context needs: without it the CLI stops before it
    writes a kubeconfig, naming eks:DescribeAccessEntry (cluster_utils.validate_eks_access_before_kubeconfig_update)."""
    client, region, roles = member["client"], member["region"], member["roles"]
    iam = client.boto3_client("iam", region)
    document = json.loads(json.dumps(iam.get_role_policy(RoleName=roles[TEAM]["RoleName"], PolicyName="AwsSSOInlinePolicy")["PolicyDocument"]))
    document["Statement"] = [st for st in document["Statement"] if st.get("Sid") != "OwnAccessEntryRead"]
    iam.put_role_policy(RoleName=roles[TEAM]["RoleName"], PolicyName="AwsSSOInlinePolicy", PolicyDocument=json.dumps(document))
    refused_connect = member["run"]("hyp", "set-cluster-context", "--cluster-name", NAME, "--namespace", OWN)
    assert refused_connect.returncode == 1, refused_connect
    assert "eks:DescribeAccessEntry" in refused_connect.stdout + refused_connect.stderr, refused_connect
    assert not (member["home"] / ".kube/config").exists()


def test_a_member_reads_the_own_role_and_access_entry_and_no_other_teams(member):
    """The permission set's reads for hyp set-cluster-context are the team's own role and access entry only (team_policy):
    another team's are AccessDeniedException, and so is the listing of every team's entries (threat model m22)."""
    client, region, eks_name, roles = member["client"], member["region"], member["eks_name"], member["roles"]
    session = boto3.session.Session(region_name=region, **member["session"])
    iam, eks = (session.client(s, endpoint_url=client.endpoint) for s in ("iam", "eks"))
    assert iam.get_role(RoleName=roles[TEAM]["RoleName"])["Role"]["Arn"] == roles[TEAM]["Arn"]
    assert eks.describe_access_entry(clusterName=eks_name, principalArn=roles[TEAM]["Arn"])["accessEntry"]["principalArn"] == roles[TEAM]["Arn"]
    assert refused(lambda: iam.get_role(RoleName=roles[OTHER]["RoleName"])) == "AccessDenied"
    assert refused(lambda: eks.describe_access_entry(clusterName=eks_name, principalArn=roles[OTHER]["Arn"])) == "AccessDeniedException"
    assert refused(lambda: eks.list_access_entries(clusterName=eks_name)) == "AccessDeniedException"
    assert refused(lambda: eks.list_associated_access_policies(clusterName=eks_name, principalArn=roles[TEAM]["Arn"])) == "AccessDeniedException"
    assert refused(lambda: eks.describe_access_entry(clusterName=eks_name, principalArn=f"arn:aws:iam::{roles[TEAM]['Arn'].split(':')[4]}:role/nobody"))
