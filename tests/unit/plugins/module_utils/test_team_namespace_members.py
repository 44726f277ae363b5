"""What a team member may do in the team namespace, asked of the worker's real kube-apiserver as the member.

The member is the Kubernetes identity EKS gives the team's access entry: a user in the team's group
``hyperpod-ns-<team>-namespace-level-group`` (``Impersonate-User`` / ``Impersonate-Group``, which the admin may use),
as tests/integration/test_namespace_isolation.py asks after a whole site.yml. Here the team's objects come from the
team file as the run builds them (team_model, then team_layer_args, then the namespace layer's converge), without AWS.
"""

from __future__ import annotations

import copy
import json
import time
import urllib.error
import urllib.request

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import team_model, team_namespace
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_layer_args import team_layer_args

from sandbox.kube.api import KubeApi, KubeError
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


class Member(KubeApi):
    """The API server as a member of the team: a user of the team's Kubernetes group."""

    def __init__(self, directory, username="alice", group=GROUP) -> None:
        super().__init__(directory)
        self.username, self.group = username, group

    def _send(self, method, path, body, content_type):
        headers = {"Content-Type": content_type, "Accept": "application/json", "Impersonate-User": self.username, "Impersonate-Group": self.group}
        request = urllib.request.Request(self.server + path, data=json.dumps(body).encode() if body is not None else None, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, context=self._context, timeout=30) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            raise KubeError(error.code, json.loads(error.read()).get("message", error.reason)) from None


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
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NAMESPACE}, "spec": spec}


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
def member(kube_cluster):
    return Member(kube_cluster.directory)


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


def test_offboarding_removes_the_token_policy_with_the_team(api, kube_cluster):
    options = namespace_options(kube_cluster)
    team_namespace.converge(Context(), options)
    policy = api.get("ValidatingAdmissionPolicy", f"hyperpod-{TEAM}-no-token-secrets")
    assert policy["metadata"]["labels"]["hyperpod.tenancy/team"] == TEAM
    assert team_namespace.converge(Context(), dict(options, state="absent", volume=None))["changed"] is True
    assert api.get("ValidatingAdmissionPolicy", f"hyperpod-{TEAM}-no-token-secrets") is None
    assert api.get("ValidatingAdmissionPolicyBinding", f"hyperpod-{TEAM}-no-token-secrets") is None


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
