"""After site.yml, each team's namespace on the real API server keeps the team in and the others out.

site.yml runs once for the module against the worker's sandbox and its kube-apiserver. The proofs
then ask the API server as each team's Kubernetes identity, as EKS maps the team's access entry:
the user EKS names for the team's Identity Center role, in the groups the entry carries
(``Impersonate-User`` / ``Impersonate-Group``, which the admin may use).

The team's pods get AWS credentials as EKS Pod Identity gives them: a pod's projected token (the
TokenRequest API, audience ``pods.eks.amazonaws.com``, bound to the pod) exchanged with the sandbox's
EKS Auth (``AssumeRoleForPodIdentity``, which reviews the token with the API server, finds the
association and evaluates the role's trust policy), then S3 through the sandbox's IAM enforcement.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import instance_types

from sandbox.kube import node as network_node
from sandbox.kube import pod_identity_agent as node
from sandbox.kube import task_governance
from sandbox.kube.api import KubeApi, KubeError
from sandbox.seed import load_sample, seed
from tests.integration.playbook_runner import ROOT, SAMPLE, Playbooks, assert_ok

TEAMS = [team["name"] for team in SAMPLE["hyperpod_teams"] if team.get("quota")]
A, B = TEAMS[0], TEAMS[1]
CLUSTER = "ml-shared-eks"
BUCKET = "hyperpod-team-data"


class TeamClient(KubeApi):
    """The API server as the principal of an EKS access entry: its username, in its Kubernetes groups."""

    def __init__(self, directory, username: str, group: str) -> None:
        super().__init__(directory)
        self.username, self.group = username, group

    def request(self, method, path, body=None, content_type="application/json"):
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": content_type, "Accept": "application/json", "Impersonate-User": self.username, "Impersonate-Group": self.group}
        request = urllib.request.Request(self.server + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, context=self._context, timeout=30) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            raise KubeError(error.code, json.loads(error.read()).get("message", error.reason)) from None


def status_of(call) -> int:
    try:
        call()
    except KubeError as error:
        return error.status
    return 200


def pod(name: str, namespace: str, **container) -> dict:
    """A pod the restricted profile admits, changed by ``container``."""
    spec = {
        "name": "train",
        "image": "public.ecr.aws/docker/library/python:3.12",
        "securityContext": {
            "allowPrivilegeEscalation": False, "runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"},
        },  # fmt: skip
    }
    spec.update(container.pop("container", {}))
    pod_spec = {"containers": [spec], **container}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": pod_spec}


def member_pod(name: str, namespace: str, **container) -> dict:
    """``pod`` as a member submits it, in the namespace's team queue as Kueue's webhook leaves it (the label, and the gate
    until the queue admits it), which the team's queue policy requires (issue 38)."""
    body = pod(name, namespace, **container)
    body["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": f"{namespace}-localqueue"}
    body["spec"]["schedulingGates"] = [{"name": "kueue.x-k8s.io/admission"}]
    return body


@pytest.fixture(scope="module")
def site(sandbox_server, kube_cluster, tmp_path_factory):
    """The one site.yml run of the module, on the sample teams: (playbooks, its result)."""
    sandbox_server.reset()
    sandbox_server.configure(status_delay=0.2)
    result = seed(sandbox_server, load_sample())
    playbooks = Playbooks(sandbox_server, result, tmp_path_factory.mktemp("site"), copy.deepcopy(SAMPLE))
    run = playbooks.run("site.yml")
    assert_ok(run, "site.yml")
    return playbooks, run


@pytest.fixture(scope="module")
def built(site, sandbox_server, kube_cluster):
    """The sample teams after site.yml; (playbooks, admin client, team clients by team)."""
    playbooks, _run = site
    eks = sandbox_server.boto3_client("eks")
    clients = {}
    for team in TEAMS:
        group = f"hyperpod-ns-{team}-namespace-level-group"
        arns = eks.list_access_entries(clusterName=CLUSTER)["accessEntries"]
        entries = [eks.describe_access_entry(clusterName=CLUSTER, principalArn=arn)["accessEntry"] for arn in arns]
        [entry] = [e for e in entries if group in e.get("kubernetesGroups", []) and "/AWSReservedSSO_" in e["principalArn"]]
        # EKS puts the role session's name where the entry's username says {{SessionName}}.
        clients[team] = TeamClient(kube_cluster.directory, entry["username"].replace("{{SessionName}}", "alice"), group)
    return playbooks, KubeApi(kube_cluster.directory), clients


def studio_entry(eks, team: str) -> tuple[dict, list]:
    """The access entry of ``team``'s Studio execution role and its associated access policies."""
    account = boto3_account(eks)
    role = f"arn:aws:iam::{account}:role/hyperpod-{team}-studio-execution"
    entry = eks.describe_access_entry(clusterName=CLUSTER, principalArn=role)["accessEntry"]
    policies = eks.list_associated_access_policies(clusterName=CLUSTER, principalArn=role)["associatedAccessPolicies"]
    return entry, policies


def boto3_account(eks) -> str:
    return eks.describe_cluster(name=CLUSTER)["cluster"]["arn"].split(":")[4]


def test_each_team_namespace_has_its_guard_rails(built):
    _playbooks, admin, _clients = built
    for team in TEAMS:
        namespace = f"hyperpod-ns-{team}"
        labels = admin.get("Namespace", namespace)["metadata"]["labels"]
        # Task Governance's labels stay; the collection's are added.
        assert labels[task_governance.ALLOCATION] == team
        assert (labels["pod-security.kubernetes.io/enforce"], labels["pod-security.kubernetes.io/warn"], labels["pod-security.kubernetes.io/audit"]) == (
            "restricted", "restricted", "restricted")  # fmt: skip
        egress = admin.request("GET", f"/apis/networking.k8s.io/v1/namespaces/{namespace}/networkpolicies/hyperpod-team-egress")["spec"]
        blocked = {cidr for peer in egress["egress"][0]["to"] if "ipBlock" in peer for cidr in peer["ipBlock"].get("except", [])}
        assert blocked == {"169.254.169.254/32", "fd00:ec2::254/128"}
        ingress = admin.request("GET", f"/apis/networking.k8s.io/v1/namespaces/{namespace}/networkpolicies/hyperpod-team-ingress")["spec"]
        assert ingress["policyTypes"] == ["Ingress"]
        assert admin.request("GET", f"/api/v1/namespaces/{namespace}/serviceaccounts/hyperpod-{team}")["metadata"]["labels"]["hyperpod.tenancy/team"] == team
        volume = admin.get("PersistentVolume", f"hyperpod-{team}-fsx")["spec"]
        assert volume["persistentVolumeReclaimPolicy"] == "Retain"
        assert volume["claimRef"]["namespace"] == namespace
        assert volume["csi"]["driver"] == "fsx.csi.aws.com"
        assert volume["csi"]["volumeAttributes"]["mountname"].endswith(f"/{team}")


@pytest.mark.parametrize("team, other_team", [(a, b) for a in TEAMS for b in TEAMS if a != b])
def test_a_team_works_in_its_own_namespace_only(built, team, other_team):
    _playbooks, _admin, clients = built
    a = clients[team]
    own, other = f"hyperpod-ns-{team}", f"hyperpod-ns-{other_team}"
    assert status_of(lambda: a.request("GET", f"/api/v1/namespaces/{own}/pods")) == 200
    assert status_of(lambda: a.request("GET", f"/api/v1/namespaces/{own}/secrets")) == 200
    assert status_of(lambda: a.request("GET", f"/api/v1/namespaces/{own}/persistentvolumeclaims/hyperpod-{team}-fsx")) == 200
    assert status_of(lambda: a.request("POST", f"/api/v1/namespaces/{own}/pods?dryRun=All", member_pod("job", own))) == 200
    # Issue 38: in the team's own queue only (the team's queue policy), at the cluster file's priorities only.
    elsewhere = member_pod("job", own)
    elsewhere["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = f"{other}-localqueue"
    assert status_of(lambda: a.request("POST", f"/api/v1/namespaces/{own}/pods?dryRun=All", elsewhere)) == 403
    for priority, status in (("training", 200), ("system-node-critical", 403)):
        body = member_pod("job", own)
        body["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = priority
        assert status_of(lambda body=body: a.request("POST", f"/api/v1/namespaces/{own}/pods?dryRun=All", body)) == status, priority
    # Issue 36, case 11: no long-lived token of the team's service account (the team's token policy).
    token = {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
             "metadata": {"name": "forever", "annotations": {"kubernetes.io/service-account.name": f"hyperpod-{team}"}}}  # fmt: skip
    assert status_of(lambda: a.request("POST", f"/api/v1/namespaces/{own}/secrets?dryRun=All", token)) == 403
    for path in ("pods", "secrets", f"persistentvolumeclaims/hyperpod-{other_team}-fsx"):
        assert status_of(lambda path=path: a.request("GET", f"/api/v1/namespaces/{other}/{path}")) == 403, path
    assert status_of(lambda: a.request("POST", f"/api/v1/namespaces/{other}/pods?dryRun=All", member_pod("job", other))) == 403


def test_studio_reaches_its_own_namespace_as_the_execution_role(built, sandbox_server, kube_cluster):
    """AWS's "Setting up an Amazon EKS cluster in Studio": Studio uses the cluster as the domain's execution role,
    through an access entry of that role. site.yml made one per team, scoped as the team's users' one."""
    eks = sandbox_server.boto3_client("eks")
    for team in TEAMS:
        entry, policies = studio_entry(eks, team)
        group = f"hyperpod-ns-{team}-namespace-level-group"
        assert entry["kubernetesGroups"] == [group] and entry["type"] == "STANDARD"
        assert entry["tags"]["team"] == team and entry["tags"]["managed-by"] == "hyperpod.tenancy"
        scoped = {p["policyArn"].rsplit("/", 1)[1]: p["accessScope"] for p in policies}
        assert scoped["AmazonSagemakerHyperpodTrainingPolicy"] == {"type": "namespace", "namespaces": [f"hyperpod-ns-{team}"]}
        assert all(scope["type"] == "namespace" for name, scope in scoped.items() if name != "AmazonSagemakerHyperpodUserClusterPolicy")
        # The username EKS gives a role: its session, as Studio's (SageMaker names the session) would be.
        studio = TeamClient(kube_cluster.directory, entry["username"].replace("{{SessionName}}", "SageMaker"), group)
        assert status_of(lambda studio=studio, team=team: studio.request("GET", f"/api/v1/namespaces/hyperpod-ns-{team}/pods")) == 200
        for other in TEAMS:
            if other != team:
                assert status_of(lambda studio=studio, other=other: studio.request("GET", f"/api/v1/namespaces/hyperpod-ns-{other}/pods")) == 403


def test_the_execution_role_may_reach_the_shared_cluster_and_nothing_of_another_team(built, sandbox_server):
    """The role's hyperpod-cluster policy, as the sandbox's IAM evaluates it (SimulatePrincipalPolicy)."""
    iam, eks = sandbox_server.boto3_client("iam"), sandbox_server.boto3_client("eks")
    eks_arn = eks.describe_cluster(name=CLUSTER)["cluster"]["arn"]
    for team in TEAMS:
        role = iam.get_role(RoleName=f"hyperpod-{team}-studio-execution")["Role"]["Arn"]
        decisions = {
            r["EvalActionName"]: r["EvalDecision"]
            for r in iam.simulate_principal_policy(
                PolicySourceArn=role, ActionNames=["eks:AccessKubernetesApi", "eks:DescribeCluster", "eks:CreateAccessEntry"], ResourceArns=[eks_arn]
            )["EvaluationResults"]
        }
        assert decisions == {"eks:AccessKubernetesApi": "allowed", "eks:DescribeCluster": "allowed", "eks:CreateAccessEntry": "implicitDeny"}
        other_entry = studio_entry(eks, next(t for t in TEAMS if t != team))[0]["accessEntryArn"]
        [result] = iam.simulate_principal_policy(PolicySourceArn=role, ActionNames=["eks:DeleteAccessEntry"], ResourceArns=[other_entry])["EvaluationResults"]
        assert result["EvalDecision"] == "implicitDeny"


@pytest.mark.parametrize(
    "change",
    [
        {"container": {"securityContext": {"privileged": True}}},
        {"volumes": [{"name": "host", "hostPath": {"path": "/fsx"}}], "container": {"volumeMounts": [{"name": "host", "mountPath": "/data"}]}},
    ],
    ids=["privileged", "host_path"],
)
def test_pod_security_refuses_a_pod_that_could_read_other_teams_data(built, change):
    _playbooks, _admin, clients = built
    namespace = f"hyperpod-ns-{A}"
    with pytest.raises(KubeError) as refused:
        clients[A].request("POST", f"/api/v1/namespaces/{namespace}/pods?dryRun=All", member_pod("escape", namespace, **copy.deepcopy(change)))
    assert refused.value.status == 403
    assert "violates PodSecurity" in str(refused.value)


def test_a_team_claim_binds_its_own_volume_and_no_other(built):
    _playbooks, admin, _clients = built
    deadline = time.monotonic() + 30
    while True:
        claims = {team: admin.request("GET", f"/api/v1/namespaces/hyperpod-ns-{team}/persistentvolumeclaims/hyperpod-{team}-fsx") for team in TEAMS}
        phases = {team: claim["status"].get("phase") for team, claim in claims.items()}
        if set(phases.values()) == {"Bound"} or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert phases == dict.fromkeys(TEAMS, "Bound")
    for team in TEAMS:
        assert admin.get("PersistentVolume", f"hyperpod-{team}-fsx")["status"]["phase"] == "Bound"
    # A claim in team B's namespace that names team A's volume: claimRef keeps the volume for A's claim.
    rogue = {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "borrowed", "namespace": f"hyperpod-ns-{B}"},
        "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "", "volumeName": f"hyperpod-{A}-fsx", "resources": {"requests": {"storage": "1200Gi"}}},
    }  # fmt: skip
    admin.request("POST", f"/api/v1/namespaces/hyperpod-ns-{B}/persistentvolumeclaims", rogue)
    # The binder says why it did not bind: the volume is reserved (claimRef) for another claim.
    deadline = time.monotonic() + 30
    while True:
        events = admin.request("GET", f"/api/v1/namespaces/hyperpod-ns-{B}/events?fieldSelector=involvedObject.name%3Dborrowed")["items"]
        if any(e["reason"] == "FailedBinding" for e in events) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert [e["message"] for e in events if e["reason"] == "FailedBinding"], events
    claim = admin.request("GET", f"/api/v1/namespaces/hyperpod-ns-{B}/persistentvolumeclaims/borrowed")
    assert claim["status"].get("phase") == "Pending"
    assert admin.get("PersistentVolume", f"hyperpod-{A}-fsx")["spec"]["claimRef"]["namespace"] == f"hyperpod-ns-{A}"


def test_a_team_pod_uses_its_own_s3_prefix_and_no_other(built, sandbox_server):
    _playbooks, admin, _clients = built
    # On EKS the agent that trades a pod's token for these credentials is an add-on: site.yml installs it.
    assert sandbox_server.boto3_client("eks").describe_addon(clusterName=CLUSTER, addonName="eks-pod-identity-agent")["addon"]["status"] == "ACTIVE"
    sandbox_server.boto3_client("s3").put_object(Bucket=BUCKET, Key="shared/readme.txt", Body=b"not a team's")
    for team in TEAMS:
        answer = node.credentials_of(sandbox_server, admin, CLUSTER, f"hyperpod-ns-{team}", f"hyperpod-{team}", "train")
        assert "refused" not in answer, answer
        assert answer["assumedRoleUser"]["arn"].startswith(f"arn:aws:sts::123456789012:assumed-role/hyperpod-{team}-pods/eks-{CLUSTER}-train-")
        s3 = node.pod_client(sandbox_server, "s3", answer)
        s3.put_object(Bucket=BUCKET, Key=f"{team}/checkpoint.pt", Body=team.encode())
        assert s3.get_object(Bucket=BUCKET, Key=f"{team}/checkpoint.pt")["Body"].read() == team.encode()
        assert f"{team}/checkpoint.pt" in [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=f"{team}/")["Contents"]]
        for prefix, key in [(f"{other}/", "checkpoint.pt") for other in TEAMS if other != team] + [("shared/", "readme.txt"), ("", "readme.txt")]:
            cells = node.prefix_access(s3, BUCKET, prefix, key)
            assert cells == dict.fromkeys(cells, "AccessDenied"), (team, prefix, cells)


def test_only_the_team_service_account_gets_the_team_role(built, sandbox_server):
    _playbooks, admin, _clients = built
    namespace = f"hyperpod-ns-{A}"
    # Another service account in the team's namespace has no association: no credentials at all.
    admin.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sidecar"}})
    try:
        assert node.credentials_of(sandbox_server, admin, CLUSTER, namespace, "sidecar", "sidecar") == {"refused": "ResourceNotFoundException"}
    finally:
        admin.delete("ServiceAccount", "sidecar", namespace)
    # Team B's service account (in B's namespace) gets B's role, never A's.
    answer = node.credentials_of(sandbox_server, admin, CLUSTER, f"hyperpod-ns-{B}", f"hyperpod-{B}", "train")
    assert f"assumed-role/hyperpod-{B}-pods/" in answer["assumedRoleUser"]["arn"]


def test_an_out_of_band_association_to_a_team_role_is_refused_by_its_trust(built, sandbox_server):
    _playbooks, admin, _clients = built
    eks, iam = sandbox_server.boto3_client("eks"), sandbox_server.boto3_client("iam")
    role_arn = iam.get_role(RoleName=f"hyperpod-{A}-pods")["Role"]["Arn"]
    namespace = f"hyperpod-ns-{B}"
    admin.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "borrower"}})
    # Made beside the collection, in team B's namespace, to team A's pod role: EKS accepts it, the role's trust does not.
    association = eks.create_pod_identity_association(clusterName=CLUSTER, namespace=namespace, serviceAccount="borrower", roleArn=role_arn)["association"]
    try:
        assert node.credentials_of(sandbox_server, admin, CLUSTER, namespace, "borrower", "borrower") == {"refused": "AccessDeniedException"}
    finally:
        eks.delete_pod_identity_association(clusterName=CLUSTER, associationId=association["associationId"])
        admin.delete("ServiceAccount", "borrower", namespace)


def test_a_team_role_associated_on_another_cluster_is_refused_by_its_trust(built, sandbox_server):
    _playbooks, admin, _clients = built
    eks, iam = sandbox_server.boto3_client("eks"), sandbox_server.boto3_client("iam")
    role_arn = iam.get_role(RoleName=f"hyperpod-{A}-pods")["Role"]["Arn"]
    shared = eks.describe_cluster(name=CLUSTER)["cluster"]
    # Another cluster of the account, with the same namespace and service account names (the sandbox's clusters share
    # one API server, so the team's own token is valid there): the trust's aws:SourceArn is the shared cluster's only.
    other = "ml-other-eks"
    eks.create_cluster(name=other, roleArn=shared["roleArn"], resourcesVpcConfig={"subnetIds": shared["resourcesVpcConfig"]["subnetIds"]})
    association = eks.create_pod_identity_association(clusterName=other, namespace=f"hyperpod-ns-{A}", serviceAccount=f"hyperpod-{A}", roleArn=role_arn)
    try:
        assert node.credentials_of(sandbox_server, admin, other, f"hyperpod-ns-{A}", f"hyperpod-{A}", "elsewhere") == {"refused": "AccessDeniedException"}
    finally:
        eks.delete_pod_identity_association(clusterName=other, associationId=association["association"]["associationId"])
        eks.delete_cluster(name=other)


@pytest.fixture
def team_network(built, kube_cluster, tmp_path):
    """A node (sandbox/kube/node.py) running kube-network-policies, with a server and a client pod in A's and B's
    namespaces, a DNS-like server pod in kube-system, and hosts at the instance metadata endpoint and on the internet.
    Yields (node, {role: (IP, network namespace)}); the pods are deleted after, so offboarding finds none."""
    problem = network_node.available()
    assert problem is None, problem
    cluster_node = network_node.Node(kube_cluster.directory, tmp_path / "node")
    made = []
    try:
        cluster_node.start()
        where = {}
        for team in (A, B):
            for role in ("server", "client"):
                where[f"{team}-{role}"] = cluster_node.add_pod(pod(f"net-{role}", f"hyperpod-ns-{team}"))
                made.append((f"hyperpod-ns-{team}", f"net-{role}"))
        where["dns"] = cluster_node.add_pod(pod("net-dns", "kube-system"))
        made.append(("kube-system", "net-dns"))
        # A namespace that is neither a team's nor the platform's (anyone with a namespace of their own, Studio's shared one).
        where["elsewhere"] = cluster_node.add_pod(pod("net-elsewhere", "default"))
        made.append(("default", "net-elsewhere"))
        # The instance metadata endpoint as EC2 documents it, and an address on the internet (TEST-NET-3).
        where["metadata"] = cluster_node.add_host("169.254.169.254")
        where["internet"] = cluster_node.add_host("203.0.113.10")
        for role, port in [(f"{A}-server", 8080), (f"{B}-server", 8080), ("dns", 53), ("metadata", 80), ("internet", 443)]:
            cluster_node.serve(where[role][1], tcp=port, udp=port)
        cluster_node.wait_enforced([where[f"{team}-{role}"][0] for team in (A, B) for role in ("server", "client")])
        yield cluster_node, where
    finally:
        for namespace, name in made:
            cluster_node.delete_pod(namespace, name)
        cluster_node.stop()


def reachable(cluster_node, where, probes) -> dict:
    """{(from, protocol, to, port): 'open' | 'closed'}, the probes run at once, each from its pod's network namespace."""
    running = {probe: cluster_node.probe(where[probe[0]][1], probe[1], where[probe[2]][0], probe[3]) for probe in probes}
    return {probe: process.communicate()[0].strip() for probe, process in running.items()}


def test_the_team_network_policies_are_enforced(built, team_network):
    """Packets, not objects: the team policies site.yml made, enforced by kube-network-policies on the node."""
    cluster_node, where = team_network
    expected = {
        # Within a team's namespace: open.
        (f"{A}-client", "tcp", f"{A}-server", 8080): "open",
        (f"{B}-client", "tcp", f"{B}-server", 8080): "open",
        # From another team's namespace: the ingress policy refuses it, both ways.
        (f"{A}-client", "tcp", f"{B}-server", 8080): "closed",
        (f"{B}-client", "tcp", f"{A}-server", 8080): "closed",
        (f"{B}-client", "udp", f"{A}-server", 8080): "closed",
        # From the platform's namespaces, named in the policy (kube-system here): open.
        ("dns", "tcp", f"{A}-server", 8080): "open",
        # From a namespace that is no team's and not named (issue 38: it was open, having no team label): closed.
        ("elsewhere", "tcp", f"{A}-server", 8080): "closed",
        # Egress: DNS and the internet (S3) stay open, the instance metadata endpoint is closed.
        (f"{A}-client", "udp", "dns", 53): "open",
        (f"{A}-client", "tcp", "dns", 53): "open",
        (f"{A}-client", "tcp", "internet", 443): "open",
        (f"{A}-client", "tcp", "metadata", 80): "closed",
        (f"{B}-client", "tcp", "metadata", 80): "closed",
        (f"{B}-client", "udp", "metadata", 80): "closed",
    }
    found = reachable(cluster_node, where, expected)
    assert {probe: found[probe] for probe in expected if found[probe] != expected[probe]} == {}, cluster_node.log_tail()[-1500:]
    # What closed them is the policies' verdict: a policy beside the team's admitting A's namespace opens B to A.
    _playbooks, admin, _clients = built
    namespace = f"hyperpod-ns-{B}"
    admit = {
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "admit-a", "namespace": namespace},
        "spec": {"podSelector": {}, "policyTypes": ["Ingress"],
                 "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": f"hyperpod-ns-{A}"}}}]}]},
    }  # fmt: skip
    admin.request("POST", f"/apis/networking.k8s.io/v1/namespaces/{namespace}/networkpolicies", admit)
    try:
        probe = (f"{A}-client", "tcp", f"{B}-server", 8080)
        deadline = time.monotonic() + 30
        while reachable(cluster_node, where, [probe])[probe] != "open":
            assert time.monotonic() < deadline, f"A's pod still cannot reach B's with B admitting it: {cluster_node.log_tail()}"
    finally:
        admin.request("DELETE", f"/apis/networking.k8s.io/v1/namespaces/{namespace}/networkpolicies/admit-a")


def summary_rows(run) -> dict:
    """The summary table site.yml prints (playbooks/summary.yml), as {team: {column title: cell}}."""
    [lines] = [
        result["msg"]
        for play in run.report["plays"] for task in play["tasks"] if task["task"]["name"] == "Print what each team has"
        for result in task["hosts"].values()
    ]  # fmt: skip
    # summary_table pads each cell and joins them with two spaces; no cell holds two spaces in a row.
    header, *rows = [re.split(r"\s{2,}", line.strip()) for line in lines]
    return {row[0]: dict(zip(header, row, strict=True)) for row in rows}


def test_site_prints_each_team_namespace_service_account_role_and_volume_and_what_its_pods_may_do(site, built, sandbox_server):
    """What `make demo` prints after site.yml: the summary table (playbooks/summary.yml) and the Pod Identity demo
    (``python -m sandbox.kube.pod_identity_agent``, run as the Makefile runs it), each team's own and true."""
    _playbooks, run = site
    playbooks, admin, _clients = built
    rows = summary_rows(run)
    assert sorted(rows) == sorted(team["name"] for team in SAMPLE["hyperpod_teams"])
    for team in TEAMS:
        row = rows[team]
        shown = {column: row[column] for column in ("namespace", "service account", "role", "volume", "queue label", "priorities")}
        assert shown == {
            "namespace": f"hyperpod-ns-{team}", "service account": f"hyperpod-{team}",
            "role": f"hyperpod-ns-{team}-namespace-role", "volume": f"hyperpod-{team}-fsx",
            # The label a member's workload carries, and the priorities it may name: the cluster file's.
            "queue label": f"hyperpod-ns-{team}-localqueue",
            "priorities": ", ".join(c["name"] for c in SAMPLE["hyperpod_cluster"]["scheduler"]["priority_classes"]),
        }, row  # fmt: skip
        # Each is what the API server holds for the team.
        namespace = shown["namespace"]
        assert admin.request("GET", f"/api/v1/namespaces/{namespace}/serviceaccounts/{shown['service account']}") is not None
        assert admin.request("GET", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles/{shown['role']}") is not None
        assert admin.request("GET", f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{shown['volume']}")["spec"]["volumeName"] == shown["volume"]

    # The capacity table make demo prints next (playbooks/capacity.yml): each team's GPUs as its team file guarantees them,
    # read from the ClusterQueue Task Governance made of its quota; nothing reserved, used or pending (no Kueue runs here).
    capacity = playbooks.run("playbooks/capacity.yml")
    assert_ok(capacity, "playbooks/capacity.yml")
    [table] = [result["msg"] for play in capacity.report["plays"] for task in play["tasks"] if task["task"]["name"] == "Print each team's capacity"
               for result in task["hosts"].values()]
    gpus = [line.split() for line in table if " nvidia.com/gpu " in line]
    expected = sorted(
        (team["name"], resource["instance_type"], resource["count"] * instance_types.spec(resource["instance_type"])["accelerators"])
        for team in SAMPLE["hyperpod_teams"] if team.get("state", "present") == "present" for resource in team["quota"]["resources"]
    )
    assert sorted((row[0], row[1], int(row[3])) for row in gpus) == expected, table
    assert all(row[6:] == ["0", "0", "0"] for row in gpus), table

    demo = subprocess.run(
        [sys.executable, "-m", "sandbox.kube.pod_identity_agent"], cwd=ROOT, env=playbooks.env, capture_output=True, text=True, timeout=300
    )
    assert demo.returncode == 0, demo.stderr[-3000:]
    lines = [line.strip() for line in demo.stdout.splitlines()[1:]]
    assert len(lines) == len(TEAMS), demo.stdout
    for team in TEAMS:
        [line] = [line for line in lines if line.startswith(f"{team}: ")]
        cells = {f"{other}/ {'allowed' if other == team else 'denied'}" for other in TEAMS} | {"(the bucket root) denied"}
        assert line.startswith(f"{team}: a pod of hyperpod-ns-{team}/hyperpod-{team} runs as role hyperpod-{team}-pods: "), line
        assert set(line.split(": ", 2)[2].split(", ")) == cells, line


def test_remove_team_removes_the_namespace_objects_and_keeps_the_data(built, sandbox_server):
    playbooks, admin, _clients = built
    settings = copy.deepcopy(SAMPLE)
    settings["hyperpod_teams"][0]["state"] = "absent"
    # The data is storage.on_remove's, left to its default: keep.
    assert "on_remove" not in (settings["hyperpod_teams"][0].get("storage") or {})
    playbooks.write_settings(settings)
    eks, iam, s3 = (sandbox_server.boto3_client(service) for service in ("eks", "iam", "s3"))
    s3.put_object(Bucket=BUCKET, Key=f"{A}/results/run-1.json", Body=b"{}")
    kept = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=f"{A}/")["Contents"])
    assert eks.list_pod_identity_associations(clusterName=CLUSTER, namespace=f"hyperpod-ns-{A}")["associations"] != []
    assert_ok(playbooks.run("playbooks/remove_team.yml", "-e", f"team={A}"), "remove_team")
    assert admin.get("Namespace", f"hyperpod-ns-{A}") is None
    assert admin.get("PersistentVolume", f"hyperpod-{A}-fsx") is None
    # The team's pods lost their identity: no association of its namespace, no pod role; the other team's stay.
    assert eks.list_pod_identity_associations(clusterName=CLUSTER, namespace=f"hyperpod-ns-{A}")["associations"] == []
    with pytest.raises(iam.exceptions.NoSuchEntityException):
        iam.get_role(RoleName=f"hyperpod-{A}-pods")
    [other] = eks.list_pod_identity_associations(clusterName=CLUSTER, namespace=f"hyperpod-ns-{B}")["associations"]
    assert other["serviceAccount"] == f"hyperpod-{B}"
    assert iam.get_role(RoleName=f"hyperpod-{B}-pods")["Role"]["RoleName"] == f"hyperpod-{B}-pods"
    # The team's S3 prefix keeps every object it had.
    assert sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=f"{A}/").get("Contents", [])) == kept
    # Studio's way in went with the team's; the other team's stays.
    eks = sandbox_server.boto3_client("eks")
    entries = eks.list_access_entries(clusterName=CLUSTER)["accessEntries"]
    assert not [arn for arn in entries if arn.endswith(f":role/hyperpod-{A}-studio-execution")]
    assert studio_entry(eks, B)[0]["kubernetesGroups"] == [f"hyperpod-ns-{B}-namespace-level-group"]
    # The other team keeps everything; the team's FSx directory is storage.on_remove's (keep).
    assert admin.get("PersistentVolume", f"hyperpod-{B}-fsx") is not None
    assert admin.get("Namespace", f"hyperpod-ns-{B}")["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    fsx_root = (playbooks.inventory / ".." / ".." / ".sandbox" / "fsx").resolve()
    assert (fsx_root / A).is_dir(), f"offboarding removed {fsx_root / A}"
