"""What a team member may do in the team namespace, asked of the worker's real kube-apiserver as the member.

The member comes in as EKS lets one in (issue 40): with the token ``aws eks get-token`` makes for a session of the team's
permission set role (``TokenMember``), which the API server maps through the role's access entry (a user in the team's
group ``hyperpod-ns-<team>-namespace-level-group``) and authorizes with RBAC and the entry's access policies; only the
identities no token stands for (a pod's service account, a controller) are impersonated. Here the team's objects come from the
team file as the run builds them (team_model, then team_layer_args, then the namespace layer's converge), without AWS.
"""

from __future__ import annotations

import copy
import json
import ssl
import time
import urllib.error
import urllib.request

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import access_entry, naming, team_model, team_namespace
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_layer_args import team_layer_args

from sandbox.kube.api import KubeApi, KubeError
from sandbox.services.eks_kubernetes_webhook import HYPERPOD_POLICIES
from tests.eks_tokens import eks_token
from tests.unit.plugins.module_utils.module_params import module_params

TEAM = "vision"
NAMESPACE = f"hyperpod-ns-{TEAM}"
GROUP = f"hyperpod-ns-{TEAM}-namespace-level-group"
SERVICE_ACCOUNT = f"hyperpod-{TEAM}"
CLAIM = f"hyperpod-{TEAM}-fsx"
CLUSTER = {"name": "ml-shared", "instance_groups": [{"name": "p5", "instance_type": "ml.p5.48xlarge", "count": 8}]}
ENTRY = {
    "name": TEAM, "identity_center_group": "TeamVision", "members": [{"name": "alice", "uid": 10001}, {"name": "bob", "uid": 10002}],
    "quota": {"resources": [{"instance_type": "ml.p5.48xlarge", "count": 4}]},
}  # fmt: skip
# What shared_info would have read: only what the namespace layer's options are built from.
SHARED = {
    "name_prefix": "hyperpod", "account_id": "123456789012", "data_bucket": "hyperpod-team-data",
    "eks_cluster_name": "ml-eks", "eks_cluster_arn": "arn:aws:eks:us-east-1:123456789012:cluster/ml-eks",
}  # fmt: skip
VOLUME = {
    "file_system_id": "fs-0123456789abcdef0", "directory": None, "capacity_gib": 1200,
    "dns_name": "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com", "mount_name": "abcdefgh",
}  # fmt: skip


class Context:
    def __init__(self, check_mode=False):
        self.check_mode = check_mode

    def client(self, service):
        raise AssertionError(f"no AWS call expected, asked for {service}")


class Caller(KubeApi):
    """The API server as someone other than its admin: the headers ``_identity`` gives say who."""

    def _identity(self) -> dict:
        raise NotImplementedError

    def _send(self, method, path, body, content_type):
        headers = {"Content-Type": content_type, "Accept": "application/json", **self._identity()}
        request = urllib.request.Request(self.server + path, data=json.dumps(body).encode() if body is not None else None, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, context=self._context, timeout=30) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            raise KubeError(error.code, json.loads(error.read()).get("message", error.reason)) from None


class Member(Caller):
    """The API server as a user of the given group by impersonation (which the admin may use): for the identities that come
    in through no EKS token (a pod's service account, a controller)."""

    def __init__(self, directory, username="alice", group=GROUP) -> None:
        super().__init__(directory)
        self.username, self.group = username, group

    def _identity(self) -> dict:
        return {"Impersonate-User": self.username, "Impersonate-Group": self.group}


class TokenMember(Caller):
    """The API server as a member of the team the way EKS lets one in (issue 40): the bearer token ``aws eks get-token``
    makes for a session of the team's permission set role (tests/eks_tokens.py), authenticated by the API server's
    TokenReview webhook through the role's access entry (its username and the team's group), authorized by RBAC and
    then by the entry's access policies (sandbox/services/eks_kubernetes_webhook.py). No client certificate: the
    token is the member's only credential."""

    def __init__(self, directory, token) -> None:
        super().__init__(directory)
        self.token = token
        self._context = ssl.create_default_context(cadata=self.ca)

    def _identity(self) -> dict:
        return {"Authorization": f"Bearer {self.token}"}


SSO_PATH = "/aws-reserved/sso.amazonaws.com/"


def token_member(seeded, kube_cluster, team=TEAM, policies=("training",)) -> TokenMember:
    """``team``'s member, alice, with the access entry the collection makes for the team's permission set role (the team's
    group, access_entry.team_access_policies of the team file's defaults with ``policies`` in the team's namespace), and
    a token of her session of that role."""
    client, seed = seeded
    region, account = seed["region"], seed["account_id"]
    iam, eks, sts = (client.boto3_client(s, region) for s in ("iam", "eks", "sts"))
    cluster = seed["eks_cluster_arn"].split("/")[-1]
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{account}:root"}, "Action": "sts:AssumeRole"}]}
    name = f"AWSReservedSSO_{naming.permission_set_name(team)}_0123456789abcdef"
    arn = iam.create_role(RoleName=name, Path=SSO_PATH, AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
    eks.create_access_entry(clusterName=cluster, principalArn=arn, kubernetesGroups=[naming.kubernetes_group(team)])
    for policy in access_entry.team_access_policies(dict(access_entry.TEAM_FILE_SECTION, policies=list(policies)), naming.namespace(team)):
        eks.associate_access_policy(clusterName=cluster, principalArn=arn, policyArn=access_entry.policy_arn(policy), accessScope=policy["access_scope"])
    credentials = sts.assume_role(RoleArn=arn, RoleSessionName="alice")["Credentials"]
    return TokenMember(kube_cluster.directory, eks_token(client.endpoint, region, credentials, cluster))


# The training jobs a member submits (HyperPod's and Kubeflow's PyTorch jobs): (API group, resource).
JOB_KINDS = (("sagemaker.amazonaws.com", "hyperpodpytorchjobs"), ("kubeflow.org", "pytorchjobs"))


def refusal(call) -> tuple[int, str]:
    """(HTTP status, message) of ``call``; (201, '') when the server accepted it."""
    try:
        call()
    except KubeError as error:
        return error.status, str(error)
    return 201, ""


RESTRICTED = {"allowPrivilegeEscalation": False, "runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}


def pod(name, security=None, pod_security=None) -> dict:
    """A training pod of the team's service account with the team's volume at /fsx (its members' homes under
    /fsx/home), with the container's ``security`` context and the pod's ``pod_security`` one."""
    container = {"name": "train", "image": "public.ecr.aws/docker/library/python:3.12", "volumeMounts": [{"name": "team", "mountPath": "/fsx"}]}
    if security is not None:
        container["securityContext"] = security
    spec = {"serviceAccountName": SERVICE_ACCOUNT, "containers": [container], "volumes": [{"name": "team", "persistentVolumeClaim": {"claimName": CLAIM}}]}
    if pod_security is not None:
        spec["securityContext"] = pod_security
    # In the team's queue, as Kueue's webhook leaves a pod it queues (the label, and its gate until it admits the pod): issue 38.
    labels = {"kueue.x-k8s.io/queue-name": f"{NAMESPACE}-localqueue"}
    spec["schedulingGates"] = [{"name": "kueue.x-k8s.io/admission"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels}, "spec": spec}


# A pod runs as root when nothing says otherwise (the image's user, root in most training images), or when it says so.
ROOT_PODS = {
    "no security context": pod("root"),
    "root by uid": pod("root", dict(RESTRICTED, runAsNonRoot=False, runAsUser=0)),
    "root by the pod's uid": pod("root", {k: v for k, v in RESTRICTED.items() if k != "runAsNonRoot"}, {"runAsUser": 0}),
}


def create_pod(client, body):
    """A member's pod, admitted or refused as a real one; a dry run, so that nothing is left to remove."""
    return client.request("POST", f"/api/v1/namespaces/{NAMESPACE}/pods?dryRun=All", body)


def namespace_options(kube_cluster, entry=None, team_limits=None) -> dict:
    """The namespace layer's parameters for ``entry`` as a run builds them: the team file checked with the platform's
    ``hyperpod_team_limits`` (no problem expected), the team's layer options, the module's defaults for the rest.
    No pod identity (that is AWS's), the volume's FSx attributes given (no DescribeFileSystems)."""
    problems, [team], _capacity = team_model.check_team_file([entry or ENTRY], CLUSTER, team_limits=team_limits)
    assert problems == []
    options = team_layer_args(team, SHARED, {"kubeconfig": str(kube_cluster.kubeconfig)}, layers=["namespace"])["namespace"]
    options.pop("pod_identity")
    return module_params(team_namespace.MODULE_OPTIONS, **dict(options, volume=dict(VOLUME)))


@pytest.fixture
def api(sandbox, kube_cluster):
    """An emptied cluster with the namespace Task Governance made for the team."""
    api = KubeApi(kube_cluster.directory)
    labels = {"sagemaker.amazonaws.com/sagemaker-managed-queue": "true", "sagemaker.amazonaws.com/quota-allocation-id": TEAM}
    api.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE, "labels": labels}}, "sagemaker-taskgovernance")
    return api


@pytest.fixture
def member(seeded, kube_cluster):
    """The team's member as EKS lets one in (issue 40): every member test asks through the token, the access entry and
    its access policies, not by impersonation."""
    return token_member(seeded, kube_cluster)


def with_pod_security(level):
    entry = copy.deepcopy(ENTRY)
    entry["access"] = {"pod_security": level}
    return entry


# --- Issue 36, case 8: pods run as root -----------------------------------------------------------------------------


@pytest.mark.parametrize("label", sorted(ROOT_PODS))
def test_by_default_a_members_pod_that_may_run_as_root_is_refused(api, member, kube_cluster, label):
    """Threat model: case 8 of issue 36, a team member (the team's credentials and kubectl) runs a pod as root on the
    team's volume and reads the members' 0700 homes. By default (a team file that says nothing of it) the team namespace
    enforces Pod Security ``restricted``: a pod that may run as root is refused at admission."""
    team_namespace.converge(Context(), namespace_options(kube_cluster))
    status, message = refusal(lambda: create_pod(member, ROOT_PODS[label]))
    assert status == 403, message
    assert 'violates PodSecurity "restricted:latest"' in message
    assert "runAsNonRoot" in message or "runAsUser=0" in message, message
    assert api.get("Namespace", NAMESPACE)["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


def test_by_default_a_pod_that_keeps_to_restricted_is_admitted(api, member, kube_cluster):
    """Threat model: case 8 of issue 36, the other side: a member's pod that sets what ``restricted`` asks (docs/team-file.md,
    "What a pod sets under restricted") runs, the team's volume mounted, as the team's service account."""
    team_namespace.converge(Context(), namespace_options(kube_cluster))
    admitted = create_pod(member, pod("train", dict(RESTRICTED, runAsUser=10001, runAsGroup=10001)))
    assert admitted["spec"]["serviceAccountName"] == SERVICE_ACCOUNT
    assert admitted["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] == CLAIM


def test_with_an_eks_token_a_member_works_in_the_teams_namespace_only(api, kube_cluster, seeded):
    """Threat model: m2, a member acts in another team's namespace, or cluster-wide, through the real way in (issue 40): the
    token ``aws eks get-token`` makes for the member's session of the team's permission set role, the access entry the
    collection makes for it (the team's group; training in the team's namespace, the team file's defaults) and the
    team's objects as the namespace layer writes them. The own namespace: the team's pods and jobs; the
    other team's: nothing, read or write; cluster-wide: no pods, no RBAC."""
    team_namespace.converge(Context(), namespace_options(kube_cluster))
    other = "hyperpod-ns-nlp"
    labels = {"sagemaker.amazonaws.com/sagemaker-managed-queue": "true", "sagemaker.amazonaws.com/quota-allocation-id": "nlp"}
    api.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other, "labels": labels}}, "sagemaker-taskgovernance")
    member = token_member(seeded, kube_cluster)
    who = member.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    assert GROUP in who["status"]["userInfo"]["groups"] and who["status"]["userInfo"]["username"].endswith("/alice")
    # The own namespace: its pods read, a pod that keeps to restricted admitted, HyperPod's and Kubeflow's jobs made.
    assert member.request("GET", f"/api/v1/namespaces/{NAMESPACE}/pods")["items"] == []
    assert create_pod(member, pod("train", dict(RESTRICTED, runAsUser=10001, runAsGroup=10001)))["metadata"]["namespace"] == NAMESPACE
    assert all(may(member, "create", group, resource, NAMESPACE) for group, resource in JOB_KINDS)
    # Another team's namespace: nothing.
    theirs = copy.deepcopy(pod("train", dict(RESTRICTED, runAsUser=10001, runAsGroup=10001)))
    theirs["metadata"]["namespace"] = other
    assert refusal(lambda: member.request("GET", f"/api/v1/namespaces/{other}/pods"))[0] == 403
    assert refusal(lambda: member.request("POST", f"/api/v1/namespaces/{other}/pods?dryRun=All", theirs))[0] == 403
    assert refusal(lambda: member.request("GET", f"/api/v1/namespaces/{other}/secrets"))[0] == 403
    assert not any(may(member, verb, group, resource, other) for group, resource in JOB_KINDS for verb in ("create", "list", "delete"))
    # Cluster-wide: no pods of every namespace, no RBAC of its own making.
    assert refusal(lambda: member.request("GET", "/api/v1/pods"))[0] == 403
    assert not may(member, "create", "rbac.authorization.k8s.io", "rolebindings", NAMESPACE)
    assert not may(member, "create", "rbac.authorization.k8s.io", "clusterrolebindings")


@pytest.mark.parametrize("allowed_by", ["every team", "this team"])
def test_with_the_platform_allowing_baseline_a_team_asking_for_it_runs_root_pods(api, member, kube_cluster, allowed_by):
    """Threat model: case 8 of issue 36: a team may ask for less than ``restricted`` only where the platform allows it
    (the cluster file's hyperpod_team_limits, for every team or for the team); there, what it asked for is what it gets."""
    allowed = {"pod_security": ["restricted", "baseline"]}
    limits = allowed if allowed_by == "every team" else {"teams": {TEAM: allowed}}
    options = namespace_options(kube_cluster, with_pod_security("baseline"), limits)
    assert options["pod_security"] == "baseline"
    team_namespace.converge(Context(), options)
    for label, body in ROOT_PODS.items():
        assert create_pod(member, body)["metadata"]["name"] == "root", label
    # Baseline's own refusals stay (a privileged container, a host path).
    status, message = refusal(lambda: create_pod(member, pod("root", {"privileged": True})))
    assert status == 403 and 'violates PodSecurity "baseline:latest"' in message, message


@pytest.mark.parametrize(
    "limits",
    [None, {"pod_security": ["restricted"]}, {"teams": {"nlp": {"pod_security": ["restricted", "baseline"]}}}],
    ids=["no limits", "restricted only", "allowed for another team"],
)
def test_a_team_asking_for_baseline_without_the_platform_allowing_it_is_refused(limits):
    """Threat model: case 8 of issue 36: a team lead's pull request asks for ``access.pod_security: baseline`` so that the
    team's pods may run as root; the team model refuses it, naming the team and the field, at the team's entry (where
    validate_team_file then names the file and line: tests/integration/test_pod_security_limits.py)."""
    teams = [with_pod_security("baseline"), {"name": "nlp", "identity_center_group": "TeamNLP"}]
    problems, _teams, _capacity, places = team_model.check_team_file_with_places(teams, CLUSTER, team_limits=limits)
    assert problems == [
        "team 'vision': access.pod_security: 'baseline' is not allowed for this team: the platform allows restricted "
        "(hyperpod_team_limits.pod_security, or hyperpod_team_limits.teams.vision.pod_security, in the cluster file)"
    ]
    assert places == [("teams", 0, "access.pod_security")]


def test_restricted_is_always_allowed_and_a_level_that_is_no_choice_is_reported_once():
    assert team_model.check_team_file([with_pod_security("restricted")], CLUSTER)[0] == []
    [problem] = team_model.check_team_file([with_pod_security("privileged")], CLUSTER)[0]
    assert problem.startswith("team 'vision': access.pod_security: 'privileged' is not one of")


# --- Issue 36, case 11 (second half): a long-lived token for the team's service account -------------------------------


def token_secret(name="forever", service_account=SERVICE_ACCOUNT) -> dict:
    """A Secret the token controller fills with a token of ``service_account`` that never expires
    (https://kubernetes.io/docs/concepts/configuration/secret/#serviceaccount-token-secrets)."""
    return {
        "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
        "metadata": {"name": name, "namespace": NAMESPACE, "annotations": {"kubernetes.io/service-account.name": service_account}},
    }  # fmt: skip


def create_secret(client, body, dry_run=True):
    return client.request("POST", f"/api/v1/namespaces/{NAMESPACE}/secrets" + ("?dryRun=All" if dry_run else ""), body)


def test_a_member_cannot_create_a_token_secret_for_the_team_service_account(api, member, kube_cluster):
    """Threat model: case 11 of issue 36 (its second half), a team member with ``secrets: create`` makes a Secret of type
    kubernetes.io/service-account-token for the team's service account, and the token controller writes into it a token
    of that account that never expires (whose pods hold the team's pod role): the team's admission policy refuses it."""
    team_namespace.converge(Context(), namespace_options(kube_cluster))
    for service_account in (SERVICE_ACCOUNT, "default"):
        status, message = refusal(lambda service_account=service_account: create_secret(member, token_secret(service_account=service_account), dry_run=False))
        assert status == 403, message
        assert f"hyperpod-{TEAM}-no-token-secrets" in message and "never expires" in message, message
    assert api.request("GET", f"/api/v1/namespaces/{NAMESPACE}/secrets")["items"] == []
    # Nobody makes one there: the platform's admin neither.
    assert refusal(lambda: create_secret(api, token_secret()))[0] == 403


def test_a_member_still_creates_the_secrets_the_hyperpod_cli_needs(api, member, kube_cluster):
    """The Role keeps ``secrets: create`` (the HyperPod CLI creates a recipe's Secrets; an inference endpoint reads a
    Hugging Face token from one): only the token type is refused, in the team namespace only."""
    team_namespace.converge(Context(), namespace_options(kube_cluster))
    opaque = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "hf-token", "namespace": NAMESPACE}, "stringData": {"token": "hf_x"}}
    assert create_secret(member, opaque)["type"] == "Opaque"
    # Elsewhere (a namespace that is not the team's) the policy does not apply.
    api.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "platform-tools"}})
    body = dict(token_secret(), metadata=dict(token_secret()["metadata"], namespace="platform-tools"))
    assert api.request("POST", "/api/v1/namespaces/platform-tools/secrets?dryRun=All", body)["type"] == "kubernetes.io/service-account-token"


def test_offboarding_removes_the_admission_policies_with_the_team(api, kube_cluster):
    options = namespace_options(kube_cluster)
    team_namespace.converge(Context(), options)
    for name in (f"hyperpod-{TEAM}-no-token-secrets", f"hyperpod-{TEAM}-workloads-in-queue"):
        assert api.get("ValidatingAdmissionPolicy", name)["metadata"]["labels"]["hyperpod.tenancy/team"] == TEAM
    assert team_namespace.converge(Context(), dict(options, state="absent", volume=None))["changed"] is True
    for name in (f"hyperpod-{TEAM}-no-token-secrets", f"hyperpod-{TEAM}-workloads-in-queue"):
        assert api.get("ValidatingAdmissionPolicy", name) is None
        assert api.get("ValidatingAdmissionPolicyBinding", name) is None
    assert api.get("ClusterRole", f"hyperpod-{TEAM}-cluster-queue-reader") is None
    assert api.get("ClusterRoleBinding", f"hyperpod-{TEAM}-cluster-queue-reader") is None


def test_a_token_secret_stored_before_the_policy_is_deleted_by_the_run_that_writes_it(api, kube_cluster):
    """Threat model: case 11 of issue 36 (its second half), a token Secret for the team's service account made before the
    team's admission policy existed (the Role has let members create Secrets all along): the policy refuses new ones only
    (admission acts on requests), so the run that writes it deletes the stored one, which invalidates its token
    (https://kubernetes.io/docs/concepts/configuration/secret/#serviceaccount-token-secrets); a check run reports it as
    drift and deletes nothing. (The sandbox runs no token controller: the Secret's deletion is what is asserted.)"""
    # A policy an earlier test wrote is deleted by the sandbox's reset, but the API server enforces what it cached for a
    # moment after (as it starts enforcing a new one a moment late: team_namespace.wait_token_policy).
    deadline = time.monotonic() + 15
    while True:
        try:
            create_secret(api, token_secret(), dry_run=False)
            break
        except KubeError as refused:
            if refused.status != 403 or time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    opaque = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "hf-token", "namespace": NAMESPACE}, "stringData": {"token": "hf_x"}}
    create_secret(api, opaque, dry_run=False)
    key = f"Secret/{NAMESPACE}/forever"
    options = namespace_options(kube_cluster)
    predicted = team_namespace.converge(Context(check_mode=True), options)
    assert predicted["changed"] is True and predicted["diff"]["after"][key] is None
    assert predicted["diff"]["before"][key]["type"] == "kubernetes.io/service-account-token"
    assert api.request("GET", f"/api/v1/namespaces/{NAMESPACE}/secrets/forever")["metadata"]["name"] == "forever"
    result = team_namespace.converge(Context(), options)
    assert result["changed"] is True and result["diff"]["after"][key] is None
    with pytest.raises(KubeError) as gone:
        api.request("GET", f"/api/v1/namespaces/{NAMESPACE}/secrets/forever")
    assert gone.value.status == 404
    # The member's other Secrets stay; converged, the next check run finds no token Secret to report.
    assert api.request("GET", f"/api/v1/namespaces/{NAMESPACE}/secrets/hf-token")["type"] == "Opaque"
    assert key not in team_namespace.converge(Context(check_mode=True), options)["diff"]["before"]


# --- Issue 38: a member writes Kueue's admission ----------------------------------------------------------------------

KUEUE = "kueue.x-k8s.io"
# Every verb the API server authorizes on a resource (https://kubernetes.io/docs/reference/access-authn-authz/authorization/#determine-the-request-verb).
WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")


def allowed(api, verb, resource, subresource="", name="", username="alice", group=GROUP) -> bool:
    """The API server's own authorization of the member's request (a SubjectAccessReview: every binding counts)."""
    review = {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": username, "groups": [group, "system:authenticated"], "resourceAttributes": {
            "namespace": NAMESPACE, "verb": verb, "group": KUEUE, "resource": resource, "subresource": subresource, "name": name}},
    }  # fmt: skip
    return api.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review)["status"].get("allowed", False)


def test_a_member_reads_the_teams_workloads_and_local_queue_and_writes_no_kueue_object(api, kube_cluster):
    """Threat model (issue 38): the HyperPod CLI chart's Role gave ``patch`` on ``workloads/status``, and a member set its
    own Workload's ``status.admission.clusterQueue`` to another team's ClusterQueue. The Role the run stores grants no
    verb but get, list and watch on any resource of Kueue's group, subresources included (a rule naming the group or
    ``*``, read back from the server: every request, not a sample); the server's authorizer refuses each write verb on
    Workloads, their status and the LocalQueue, and allows reading them."""
    team_namespace.converge(Context(), namespace_options(kube_cluster))
    role = api.get("Role", f"{NAMESPACE}-namespace-role", NAMESPACE)
    for rule in role["rules"]:
        if {KUEUE, "*"} & set(rule.get("apiGroups", [])):
            assert set(rule["verbs"]) <= {"get", "list", "watch"}, rule
    for resource, subresource in (("workloads", ""), ("workloads", "status"), ("localqueues", ""), ("localqueues", "status"), ("clusterqueues", "")):
        for verb in WRITE_VERBS:
            assert not allowed(api, verb, resource, subresource), (verb, resource, subresource)
    for resource in ("workloads", "localqueues"):
        for verb in ("get", "list", "watch"):
            assert allowed(api, verb, resource), (verb, resource)
    # Another team's namespace: nothing of it.
    assert not allowed(api, "list", "workloads", group="hyperpod-ns-nlp-namespace-level-group")


# --- Issue 38: a member's workload outside the team's queue -----------------------------------------------------------

QUEUE = f"{NAMESPACE}-localqueue"
PLATFORM_CLASSES = ["inference", "training", "experimentation"]
QUEUE_POLICY = f"hyperpod-{TEAM}-workloads-in-queue"
RUNNING = dict(RESTRICTED, runAsUser=10001, runAsGroup=10001)


def queued(body, queue=QUEUE, **labels):
    """``body`` labelled for Kueue: ``queue`` (no queue label when None) and any other label."""
    body = copy.deepcopy(body)
    body["metadata"]["labels"] = dict(body["metadata"].get("labels") or {}, **labels)
    body["metadata"]["labels"].pop("kueue.x-k8s.io/queue-name", None)
    if queue:
        body["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = queue
    return body


def job(name="train", **pod_spec) -> dict:
    """A Job as Kueue's webhook leaves it: suspended; its pods the Job controller's to make (no gate of Kueue's)."""
    template = pod("x", RUNNING)
    del template["spec"]["schedulingGates"]
    return {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"suspend": True, "template": {"spec": dict(template["spec"], restartPolicy="Never", **pod_spec)}},
    }  # fmt: skip


def create(client, body, dry_run=True):
    api_path = "/api/v1" if body["apiVersion"] == "v1" else f"/apis/{body['apiVersion']}"
    path = f"{api_path}/namespaces/{NAMESPACE}/{body['kind'].lower()}s"
    return client.request("POST", path + ("?dryRun=All" if dry_run else ""), body)


def cron_job() -> dict:
    """A CronJob whose every part is in the team's queue: its label, its Job template's, its pod template's."""
    template = queued(job())
    template["spec"]["template"]["metadata"] = {"labels": {"kueue.x-k8s.io/queue-name": QUEUE}}
    return queued({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": NAMESPACE},
                   "spec": {"schedule": "0 3 * * *", "jobTemplate": {"metadata": template["metadata"], "spec": template["spec"]}}})


# The Kubeflow training operator's PyTorchJob, its schema left open (the operator is not in the sandbox; its CRD's
# structural schema refuses less than nothing the policy checks).
PYTORCHJOB_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "pytorchjobs.kubeflow.org"},
    "spec": {"group": "kubeflow.org", "scope": "Namespaced",
             "names": {"plural": "pytorchjobs", "singular": "pytorchjob", "kind": "PyTorchJob", "listKind": "PyTorchJobList"},
             "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
}  # fmt: skip


def pytorch_job(suspend=True, scheduling_priority=None, **pod_spec) -> dict:
    """A PyTorchJob of a master and two workers in the team's queue, as Kueue's webhook leaves it (suspended)."""
    template = {"spec": dict(job()["spec"]["template"]["spec"], restartPolicy="OnFailure", **pod_spec)}
    run_policy = dict({"suspend": suspend}, **({"schedulingPolicy": {"priorityClass": scheduling_priority}} if scheduling_priority else {}))
    return queued({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "ddp", "namespace": NAMESPACE},
                   "spec": {"runPolicy": run_policy, "pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": template},
                                                                             "Worker": {"replicas": 2, "template": template}}}})


def open_crd(group, version, kind, plural) -> dict:
    """A CRD of ``kind`` whose schema keeps what it is given: the operators that serve HyperPod's kinds are EKS add-ons the
    sandbox does not run, their schemas published as no file (as tests/unit/sandbox/test_hyp_cli.py installs its own)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": f"{plural}.{group}"},
        "spec": {"group": group, "scope": "Namespaced", "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": f"{kind}List"},
                 "versions": [{"name": version, "served": True, "storage": True, "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
    }  # fmt: skip


# What HyperPod's access policies let a member write in the team namespace (sandbox/services/eks_kubernetes_webhook.py,
# HYPERPOD_POLICIES): the training operator's jobs, the inference operator's endpoints and models, the spaces operator's
# workspaces. (group, version, kind, plural).
HYPERPOD_KINDS = (
    ("sagemaker.amazonaws.com", "v1", "HyperPodPyTorchJob", "hyperpodpytorchjobs"),
    ("inference.sagemaker.aws.amazon.com", "v1", "InferenceEndpointConfig", "inferenceendpointconfigs"),
    ("inference.sagemaker.aws.amazon.com", "v1", "JumpStartModel", "jumpstartmodels"),
    ("workspace.jupyter.org", "v1alpha1", "Workspace", "workspaces"),
)
HYPERPOD_CRDS = [open_crd(*kind) for kind in HYPERPOD_KINDS]


def install_crds(api, crds) -> None:
    """``crds`` made (one another test is removing first gone: test_hyp_cli deletes its HyperPodPyTorchJob CRD when it
    ends) and established."""
    for crd in crds:
        deadline = time.monotonic() + 60
        while (left := api.get("CustomResourceDefinition", crd["metadata"]["name"])) and left["metadata"].get("deletionTimestamp"):
            assert time.monotonic() < deadline, f"{crd['metadata']['name']} is still being removed"
            time.sleep(0.2)
        api.apply(crd, "test")
    for crd in crds:
        api.wait_established(crd["metadata"]["name"])


def hyperpod_job(**pod_spec) -> dict:
    """A HyperPodPyTorchJob in the team's queue as ``hyp create hyp-pytorch-job --queue-name`` writes it
    (hyperpod_pytorch_job_template v1_1): the labels on the job and on its replicas' pod template."""
    template = {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": QUEUE}}, "spec": dict(job()["spec"]["template"]["spec"], **pod_spec)}
    return queued({"apiVersion": "sagemaker.amazonaws.com/v1", "kind": "HyperPodPyTorchJob", "metadata": {"name": "hyp-train", "namespace": NAMESPACE},
                   "spec": {"nprocPerNode": "auto", "replicaSpecs": [{"name": "pod", "replicas": 2, "template": template}]}})  # fmt: skip


def inference_endpoint() -> dict:
    """An InferenceEndpointConfig in the team's queue, its labels on its metadata as AWS's page on task governance for
    model deployment shows them; the rest as hyp's custom inference template writes it."""
    return queued({"apiVersion": "inference.sagemaker.aws.amazon.com/v1", "kind": "InferenceEndpointConfig",
                   "metadata": {"name": "serve", "namespace": NAMESPACE},
                   "spec": {"endpointName": "serve", "instanceType": "ml.g5.8xlarge", "modelName": "llama",
                            "modelSourceConfig": {"modelSourceType": "s3", "modelLocation": "models/llama",
                                                  "s3Storage": {"bucketName": "hyperpod-team-data", "region": "us-east-1"}},
                            "worker": {"image": "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.32.0-lmi14.0.0-cu124",
                                       "resources": {"limits": {"nvidia.com/gpu": 1}},
                                       "modelInvocationPort": {"containerPort": 8080},
                                       "modelVolumeMount": {"name": "model", "mountPath": "/opt/ml/model"}}}})  # fmt: skip


def jumpstart_model() -> dict:
    return queued({"apiVersion": "inference.sagemaker.aws.amazon.com/v1", "kind": "JumpStartModel", "metadata": {"name": "deepseek", "namespace": NAMESPACE},
                   "spec": {"model": {"modelHubName": "SageMakerPublicHub", "modelId": "deepseek-llm-r1-distill-qwen-1-5b"},
                            "server": {"instanceType": "ml.g5.8xlarge"}, "sageMakerEndpoint": {"name": "deepseek"}}})  # fmt: skip


def workspace() -> dict:
    """A Workspace in the team's queue, its labels on its metadata as hyp's space template writes them."""
    return queued({"apiVersion": "workspace.jupyter.org/v1alpha1", "kind": "Workspace", "metadata": {"name": "notebook", "namespace": NAMESPACE},
                   "spec": {"displayName": "notebook", "desiredStatus": "Running", "image": "public.ecr.aws/sagemaker/sagemaker-distribution:latest-cpu",
                            "resources": {"requests": {"cpu": "1", "memory": "4Gi"}}}})  # fmt: skip


# Each of HyperPod's kinds, in the team's queue as a member submits it.
HYPERPOD_OBJECTS = {"HyperPodPyTorchJob": hyperpod_job(), "InferenceEndpointConfig": inference_endpoint(),
                    "JumpStartModel": jumpstart_model(), "Workspace": workspace()}  # fmt: skip


def outside_the_queue(body) -> dict:
    """``body`` out of the team's queue each way its labels can take it: the words of the refusal of each."""
    return {
        "without a queue": (queued(body, queue=None), f"label it kueue.x-k8s.io/queue-name: {QUEUE}"),
        "in another team's queue": (queued(body, queue="hyperpod-ns-nlp-localqueue"), f"label it kueue.x-k8s.io/queue-name: {QUEUE}"),
        "at a Kueue priority the platform has not": (
            queued(body, **{"kueue.x-k8s.io/priority-class": "urgent"}), "names one of the platform's priority classes",
        ),
    }  # fmt: skip


def deployment() -> dict:
    template = pod("x", RUNNING)
    return queued({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "serve", "namespace": NAMESPACE},
                   "spec": {"selector": {"matchLabels": {"app": "serve"}},
                            "template": {"metadata": {"labels": dict(template["metadata"]["labels"], app="serve")}, "spec": template["spec"]}}})


def queue_options(kube_cluster):
    return dict(namespace_options(kube_cluster), priority_classes=list(PLATFORM_CLASSES))


def enforced(member, body, timeout=15):
    """The refusal of ``body`` once the API server enforces the team's queue policy (its informer has it a moment after
    the write: team_namespace.wait_token_policy)."""
    deadline = time.monotonic() + timeout
    while True:
        status, message = refusal(lambda: create(member, body))
        # Admitted, or refused by an authorizer that has not seen a new binding yet: not the policy's answer.
        if (status != 201 and "cannot create resource" not in message) or time.monotonic() > deadline:
            return status, message
        time.sleep(0.2)


def admission(member, body, timeout=15):
    """The answer to ``body`` (as ``refusal``), asked again while refused for up to ``timeout``: the policy a converge
    rewrites (the platform's priority classes added to an earlier test's) reaches the API server's informer a moment
    after the write, and the earlier one answers meanwhile."""
    deadline = time.monotonic() + timeout
    while (answer := refusal(lambda: create(member, body)))[0] != 201 and time.monotonic() < deadline:
        time.sleep(0.2)
    return answer


# Each way out of the team's queue, as a Pod and as a Job's pod template: the workload and the words of its refusal.
OUT_OF_QUEUE = {
    "no queue label": (queued(pod("p", RUNNING), queue=None), f"label it kueue.x-k8s.io/queue-name: {QUEUE}"),
    "another team's queue": (queued(pod("p", RUNNING), queue="hyperpod-ns-nlp-localqueue"), f"label it kueue.x-k8s.io/queue-name: {QUEUE}"),
    "a system priority class": (
        queued(dict(pod("p", RUNNING), spec=dict(pod("p", RUNNING)["spec"], priorityClassName="system-node-critical"))),
        "priorityClassName is empty or one of the platform's priority classes",
    ),
    "a Kueue priority the platform has not": (
        queued(pod("p", RUNNING), **{"kueue.x-k8s.io/priority-class": "urgent"}), "names one of the platform's priority classes",
    ),
    # Without Kueue's gate: the API server refuses a gated pod that names its node.
    "a node named": (queued(dict(pod("p", RUNNING), spec=dict(job()["spec"]["template"]["spec"], nodeName="hyperpod-i-0abc"))), "does not name its node"),
    "a job without a queue": (job(), f"label it kueue.x-k8s.io/queue-name: {QUEUE}"),
    "a queued job whose pods take a system priority": (queued(job(priorityClassName="system-cluster-critical")), "priorityClassName"),
    "a queued job whose pods name a node": (queued(job(nodeName="hyperpod-i-0abc")), "does not name its node"),
    # Kueue would not hold these (the red team's of issue 38): a pod it would not gate, a Job it would not suspend.
    "a pod without Kueue's gate": (dict(pod("p", RUNNING), spec={k: v for k, v in pod("p", RUNNING)["spec"].items() if k != "schedulingGates"}),
                                   "carries Kueue's scheduling gate"),
    "a Job created running": (queued(dict(job(), spec=dict(job()["spec"], suspend=False))), "a Job stays suspended"),
    "a pod owned by the member's own Job": (
        queued(dict(pod("p", RUNNING), metadata=dict(pod("p", RUNNING)["metadata"], ownerReferences=[
            {"apiVersion": "batch/v1", "kind": "Job", "name": "holder", "uid": "7d6c9a52-0f7e-4a8e-9d3e-3f1f2b6a9c11", "controller": True}]))),
        "names no owner",
    ),
    "a Job naming a prebuilt Workload": (queued(job(), **{"kueue.x-k8s.io/prebuilt-workload-name": "nlp-train"}), "no prebuilt Workload"),
    "a PyTorchJob without a queue": (queued(pytorch_job(), queue=None), f"label it kueue.x-k8s.io/queue-name: {QUEUE}"),
    "a PyTorchJob created running": (pytorch_job(suspend=False), "a PyTorchJob stays suspended"),
    "a PyTorchJob whose replicas take a system priority": (pytorch_job(priorityClassName="system-node-critical"), "priorityClassName"),
    "a PyTorchJob whose gang takes a system priority": (pytorch_job(scheduling_priority="system-node-critical"), "schedulingPolicy.priorityClass"),
    "a PyTorchJob whose replicas name a node": (pytorch_job(nodeName="hyperpod-i-0abc"), "does not name its node"),
    # HyperPod's kinds, which its access policies let a member write (the red team of issue 40).
    **{f"a {kind} {way}": case for kind, body in HYPERPOD_OBJECTS.items() for way, case in outside_the_queue(body).items()},
    "a HyperPodPyTorchJob whose replicas take a system priority": (hyperpod_job(priorityClassName="system-node-critical"), "priorityClassName"),
    "a HyperPodPyTorchJob whose replicas name a node": (hyperpod_job(nodeName="hyperpod-i-0abc"), "does not name its node"),
    # Queue labels everywhere, but the Jobs a CronJob makes and the pods of a Deployment's ReplicaSet are not queued by them.
    "a CronJob": (cron_job(), "members submit Pods, Jobs, PyTorchJobs and HyperPod's"),
    "a Deployment": (deployment(), "members submit Pods, Jobs, PyTorchJobs and HyperPod's"),
}


def test_a_members_workload_outside_the_teams_queue_is_refused(api, member, kube_cluster):
    """Threat model: m12 (issue 38), a member bypasses Task Governance: a pod no queue manages goes straight to
    kube-scheduler, which preempts pods of every team to place it (a system priority class, which Pod Security does not
    restrict, lets it preempt almost anything), and one in another team's queue is counted against that team's quota.
    The team's queue policy refuses each, as the member and as the team's service account (a member's pod calling the
    API server), with a message that names what to set."""
    team_namespace.converge(Context(), queue_options(kube_cluster))
    install_crds(api, [PYTORCHJOB_CRD, *HYPERPOD_CRDS])
    # A Role widened beside the team's (the platform's, later): what it lets a member make stays out too. It names
    # HyperPod's kinds as their access policies grant them (impersonation asks RBAC alone; the member's EKS token asks
    # the access policies: test_a_members_hyperpod_objects_are_held_to_the_teams_queue_through_its_access_policies).
    widened = {("batch", "cronjobs"), ("apps", "deployments"), *((group, plural) for group, _version, _kind, plural in HYPERPOD_KINDS)}
    api.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "widened", "namespace": NAMESPACE},
               "rules": [{"apiGroups": [group], "resources": [resource], "verbs": ["create"]} for group, resource in widened]}, "test")  # fmt: skip
    # The team's pods given the members' rights (a platform's choice): a member's pod then calls the API server with them.
    service_account = {"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}
    for role in ("widened", f"{NAMESPACE}-namespace-role"):
        api.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": f"{role}-test", "namespace": NAMESPACE},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
                   "subjects": [{"kind": "Group", "name": GROUP}, service_account]}, "test")  # fmt: skip
    deadline = time.monotonic() + 15
    while not all(authorized(api, "create", group, resource, NAMESPACE) for group, resource in widened):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    as_service_account = Member(kube_cluster.directory, f"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}", f"system:serviceaccounts:{NAMESPACE}")
    admitted = {}
    for label, (body, words) in sorted(OUT_OF_QUEUE.items()):
        for who, client in (("member", member), ("the team's service account", as_service_account)):
            status, message = enforced(client, body)
            if not (status == 403 and QUEUE_POLICY in message and words in message):
                admitted[f"{label}, as {who}"] = message or "admitted"
    # A member's queued Job, then started by the member, by every kind of patch: Kueue alone starts it.
    create(member, queued(job("held")), dry_run=False)
    path = f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs/held"
    for content_type, body in (("application/merge-patch+json", {"spec": {"suspend": False}}),
                               ("application/json-patch+json", [{"op": "replace", "path": "/spec/suspend", "value": False}]),
                               ("application/strategic-merge-patch+json", {"spec": {"suspend": False}})):
        status, message = refusal(lambda content_type=content_type, body=body: member.request("PATCH", path, body, content_type=content_type))
        if not (status == 403 and "a Job stays suspended" in message):
            admitted[f"unsuspended by {content_type}"] = message or "admitted"
    assert admitted == {}
    # The policy as the API server type-checks it against every kind it matches: no expression it cannot check.
    deadline = time.monotonic() + 30
    while "typeChecking" not in (status := api.get("ValidatingAdmissionPolicy", QUEUE_POLICY).get("status") or {}):
        assert time.monotonic() < deadline, status
        time.sleep(0.2)
    assert status["typeChecking"].get("expressionWarnings") is None, status


def test_a_members_workload_in_the_teams_queue_runs_and_the_controllers_are_not_refused(api, member, kube_cluster):
    """The other side of m12: what the HyperPod CLI submits (a Job in the team's queue at one of the platform's
    priorities) is admitted, a pod too; the Job controller's pods (no queue label: Kueue admitted their Job) and the
    platform's own requests are not the policy's; and the policy matches the team namespace only."""
    team_namespace.converge(Context(), queue_options(kube_cluster))
    install_crds(api, [PYTORCHJOB_CRD])
    enforced(member, OUT_OF_QUEUE["no queue label"][0])
    # A platform that gives its Task Governance classes to kube-scheduler too makes PriorityClasses of the same names.
    priority_class = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "inference"}, "value": 100}
    api.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", priority_class)
    try:
        for body in (queued(job(), **{"kueue.x-k8s.io/priority-class": "training"}), queued(pod("p", RUNNING)),
                     pytorch_job(scheduling_priority="training"),
                     queued(dict(pod("p", RUNNING), spec=dict(pod("p", RUNNING)["spec"], priorityClassName="inference")))):
            assert admission(member, body) == (201, ""), body["kind"]
    finally:
        api.request("DELETE", "/apis/scheduling.k8s.io/v1/priorityclasses/inference")
    # A pod as the Job controller makes it from an admitted Job's template: no queue label, no gate of Kueue's. Refused to
    # a member, made by the Job controller (its bootstrap role system:controller:job-controller) and by the platform.
    from_template = dict(job()["spec"]["template"], apiVersion="v1", kind="Pod", metadata={"name": "train-0", "namespace": NAMESPACE})
    assert refusal(lambda: create(member, from_template))[0] == 403
    controller = Member(kube_cluster.directory, "system:serviceaccount:kube-system:job-controller", "system:serviceaccounts:kube-system")
    assert create(controller, from_template)["metadata"]["name"] == "train-0"
    assert create(api, from_template)["metadata"]["name"] == "train-0"
    # A namespace that is not the team's is not this policy's, the members' requests there neither.
    api.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "platform-tools"}}, "test")
    api.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "pods", "namespace": "platform-tools"},
               "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}]}, "test")  # fmt: skip
    api.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "members", "namespace": "platform-tools"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pods"},
               "subjects": [{"kind": "Group", "name": GROUP}]}, "test")  # fmt: skip
    elsewhere = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "platform-tools"},
                 "spec": {"containers": [{"name": "c", "image": "busybox", "securityContext": RUNNING}]}}  # fmt: skip
    deadline = time.monotonic() + 15
    while (answer := refusal(lambda: member.request("POST", "/api/v1/namespaces/platform-tools/pods?dryRun=All", elsewhere)))[0] != 201:
        # Refused by the authorizer until it has the binding, a moment after the write; never by the policy.
        assert "cannot create resource" in answer[1] and time.monotonic() < deadline, answer
        time.sleep(0.2)


def test_the_queue_policy_covers_every_workload_the_role_lets_a_member_write():
    """Soundness of m12 against the Role and the access policies, not a sample: every resource the stored Role, or one of
    the HyperPod access policies a team's entry may carry in its namespace (as the sandbox reads them), lets a member
    create, update or patch (any rule naming a group and resource, ``*`` included) is one the queue policy matches, or one
    that makes no pod (ConfigMaps, Secrets: their own policies and limits hold them). A Role or an access policy widened
    to a workload the policy does not match fails here (the HyperPod kinds did, issue 40)."""
    makes_no_pod = {("", "configmaps"), ("", "secrets")}
    # Refused to members whatever they carry (the first validation); queued by their label, the others.
    assert {kind for _group, _resource, kind in team_namespace.REFUSED_RESOURCES} == {
        "CronJob", "Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "ReplicationController"}
    policy = team_namespace.queue_policy(TEAM, "hyperpod", PLATFORM_CLASSES)[0]
    matched = {(group, resource) for rule in policy["spec"]["matchConstraints"]["resourceRules"]
               for group in rule["apiGroups"] for resource in rule["resources"]}  # fmt: skip
    assert all(rule["operations"] == ["CREATE", "UPDATE"] for rule in policy["spec"]["matchConstraints"]["resourceRules"])
    for rule in team_namespace.TEAM_ROLE_RULES:
        if not {"create", "update", "patch", "*"} & set(rule["verbs"]):
            continue
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                assert "*" not in (group, resource), rule
                assert (group, resource) in matched | makes_no_pod, (group, resource)
    # A status is its operator's (read only in every policy: test_eks_kubernetes_webhook); the workload is the policy's.
    written = set()
    for policy in access_entry.ACCESS_POLICY_NAMES.values():
        for groups, resources, verbs in HYPERPOD_POLICIES[policy]:
            if {"create", "update", "patch", "*"} & set(verbs):
                written |= {(group, resource) for group in groups for resource in resources}
    assert not any("*" in kind or kind[1].endswith("/status") for kind in written), written
    assert written - matched - makes_no_pod == set()
    assert {(group, plural) for group, _version, _kind, plural in HYPERPOD_KINDS} <= written


def test_a_members_hyperpod_objects_are_held_to_the_teams_queue_through_its_access_policies(api, kube_cluster, seeded):
    """Threat model: m12, the red team of issue 40: the HyperPod access policies the collection associates (training,
    inference, space) let a member create a HyperPodPyTorchJob, an InferenceEndpointConfig, a JumpStartModel or a
    Workspace, which the queue policy did not match: one without the team's queue label, in another team's queue or at a
    priority the platform has not ran outside the team's quota. Asked with the member's EKS token (its access entry and
    policies, as the collection makes them): each is refused, and each in the team's queue at one of the platform's
    priorities is admitted."""
    team_namespace.converge(Context(), queue_options(kube_cluster))
    install_crds(api, HYPERPOD_CRDS)
    member = token_member(seeded, kube_cluster, policies=("training", "inference", "space"))
    assert all(may(member, "create", group, plural, NAMESPACE) for group, _version, _kind, plural in HYPERPOD_KINDS)
    enforced(member, queued(hyperpod_job(), queue=None))
    wrong = {}
    for kind, body in HYPERPOD_OBJECTS.items():
        status, message = admission(member, queued(body, **{"kueue.x-k8s.io/priority-class": "training"}))
        if status != 201:
            wrong[f"a {kind} in the team's queue"] = message
        for way, (outside, words) in outside_the_queue(body).items():
            status, message = refusal(lambda outside=outside: create(member, outside))
            if not (status == 403 and QUEUE_POLICY in message and words in message):
                wrong[f"a {kind} {way}"] = message or "admitted"
    assert wrong == {}


def authorized(api, verb, group, resource, namespace="", name="", subresource="") -> bool:
    """The API server's authorization of a member's request on any resource (a SubjectAccessReview of the team's group)."""
    review = {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": "alice", "groups": [GROUP, "system:authenticated"], "resourceAttributes": {
            "namespace": namespace, "verb": verb, "group": group, "resource": resource, "subresource": subresource, "name": name}},
    }  # fmt: skip
    return api.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review)["status"].get("allowed", False)


def may(member, verb, group, resource, namespace="", name="", subresource="") -> bool:
    """The API server's answer to ``member`` (a TokenMember) asking about itself (a SelfSubjectAccessReview): every
    authorizer, RBAC and then the access entry's access policies, for the user and groups its token maps to."""
    review = {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"namespace": namespace, "verb": verb, "group": group, "resource": resource, "subresource": subresource, "name": name}},
    }  # fmt: skip
    return member.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review)["status"].get("allowed", False)


def test_a_member_reads_the_teams_own_cluster_queue_and_pending_workloads_and_no_other_teams(api, kube_cluster, seeded):
    """Threat model: m13 (issue 38), a member reads another team's quota, usage or pending work (its ClusterQueue, its
    LocalQueue's pending workloads), or lists every team's: the team reads its own ClusterQueue by name (a ClusterRole
    whose one rule names it) and its own queue's pending workloads (the Role, in its namespace); the server's authorizers
    refuse every other team's, and listing or watching every ClusterQueue. Asked with the member's EKS token (issue 40),
    its access entry as the team file's defaults make it (no cluster read: ``access.cluster_read`` is the platform's to
    allow); with the cluster read, see the end."""
    team_namespace.converge(Context(), namespace_options(kube_cluster))
    member = token_member(seeded, kube_cluster)
    own, other = f"{NAMESPACE}-clusterqueue", "hyperpod-ns-nlp-clusterqueue"
    assert all(may(member, verb, KUEUE, "clusterqueues", name=own) for verb in ("get", "watch"))
    assert not any(may(member, verb, KUEUE, "clusterqueues", name=other) for verb in ("get", "watch", "update", "patch", "delete"))
    assert not any(may(member, verb, KUEUE, "clusterqueues") for verb in ("list", "watch", "create", "deletecollection"))
    assert not any(may(member, verb, KUEUE, "clusterqueues", name=own) for verb in WRITE_VERBS)
    visibility = "visibility.kueue.x-k8s.io"
    assert may(member, "get", visibility, "localqueues", NAMESPACE, f"{NAMESPACE}-localqueue", "pendingworkloads")
    assert not may(member, "get", visibility, "localqueues", "hyperpod-ns-nlp", "hyperpod-ns-nlp-localqueue", "pendingworkloads")
    assert not may(member, "get", visibility, "clusterqueues", name=other, subresource="pendingworkloads")
    # RBAC alone (the team's group, as the admin asks it) answers the same.
    assert authorized(api, "get", KUEUE, "clusterqueues", name=own) and not authorized(api, "get", KUEUE, "clusterqueues", name=other)
    # With the HyperPod CLI's cluster read (AmazonSagemakerHyperpodUserClusterPolicy at cluster scope, where the platform
    # allows a team access.cluster_read), every ClusterQueue is readable, another team's quota and usage among them: the sandbox's reading of
    # that policy, an assumption (docs/isolation.md, m13). Another team's pending workloads stay refused.
    client, seed = seeded
    eks, cluster = client.boto3_client("eks", seed["region"]), seed["eks_cluster_arn"].split("/")[-1]
    [arn] = [a for a in eks.list_access_entries(clusterName=cluster)["accessEntries"] if "AWSReservedSSO_" in a]
    policy = access_entry.CLUSTER_READ_POLICY
    eks.associate_access_policy(clusterName=cluster, principalArn=arn, policyArn=access_entry.policy_arn(policy), accessScope=policy["access_scope"])
    assert may(member, "get", KUEUE, "clusterqueues", name=other) and may(member, "list", KUEUE, "clusterqueues")
    assert not may(member, "update", KUEUE, "clusterqueues", name=other)
    assert not may(member, "get", visibility, "clusterqueues", name=other, subresource="pendingworkloads")
    assert not may(member, "get", visibility, "localqueues", "hyperpod-ns-nlp", "hyperpod-ns-nlp-localqueue", "pendingworkloads")
    # The stored ClusterRole names one ClusterQueue, the team's, and reads it only: every request, not the sample above.
    [rule] = api.request("GET", f"/apis/rbac.authorization.k8s.io/v1/clusterroles/hyperpod-{TEAM}-cluster-queue-reader")["rules"]
    assert (rule["apiGroups"], rule["resources"], rule["resourceNames"], sorted(rule["verbs"])) == ([KUEUE], ["clusterqueues"], [own], ["get", "watch"])
