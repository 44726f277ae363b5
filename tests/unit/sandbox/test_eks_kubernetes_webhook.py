"""Issue 40: a team's principals reach the cluster as EKS lets them, with the token ``aws eks get-token`` makes.

The sandbox's kube-apiserver authenticates ``k8s-aws-v1.`` tokens and authorizes with the access entries' access policies
through its webhooks (``sandbox/services/eks_kubernetes_webhook.py``); the tokens here are botocore's presigned URLs as
awscli makes them (``tests/eks_tokens.py``), for a member's Identity Center role session, the Studio execution role's
session and a pod's role session, each mapped through its own access entry.
"""

from __future__ import annotations

import base64
import datetime
import json
import types
import urllib.request
from unittest import mock

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import execution_role, naming

from sandbox.kube.api import KubeApi
from sandbox.services import eks_kubernetes_webhook
from tests.eks_tokens import as_token, eks_token

TEAM, OTHER = "vision", "nlp"
OWN, OTHERS = naming.namespace(TEAM), naming.namespace(OTHER)
POLICY = "arn:aws:eks::aws:cluster-access-policy/"
# An Identity Center permission set's role: its path is Identity Center's, its sessions are named by the user.
SSO_PATH = "/aws-reserved/sso.amazonaws.com/"
MEMBER_ROLE = "AWSReservedSSO_TeamVision_0123456789abcdef"
POD_ROLE = "hyperpod-vision-pods"
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


def _namespaced(policy: str, namespace: str = OWN) -> tuple[str, dict]:
    return POLICY + policy, {"type": "namespace", "namespaces": [namespace]}


@pytest.fixture
def world(seeded, kube_cluster):
    client, seed = seeded
    region, account = seed["region"], seed["account_id"]
    iam, eks, sts = (client.boto3_client(s, region) for s in ("iam", "eks", "sts"))
    cluster = seed["eks_cluster_arn"].split("/")[-1]
    trust = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{account}:root"}, "Action": "sts:AssumeRole"}]})  # fmt: skip
    roles = {
        "member": iam.create_role(RoleName=MEMBER_ROLE, Path=SSO_PATH, AssumeRolePolicyDocument=trust)["Role"]["Arn"],
        "studio": iam.create_role(RoleName=execution_role.role_name(TEAM), AssumeRolePolicyDocument=trust)["Role"]["Arn"],
        "pod": iam.create_role(RoleName=POD_ROLE, AssumeRolePolicyDocument=trust)["Role"]["Arn"],
        "stranger": iam.create_role(RoleName="no-entry", AssumeRolePolicyDocument=trust)["Role"]["Arn"],
    }
    # What the collection associates (access_entry.team_access_policies): training in the team's namespace, the
    # HyperPod CLI's cluster read; Studio's spaces; the pods' role, here given the EKS view policy in its namespace.
    policies = {
        "member": [_namespaced("AmazonSagemakerHyperpodTrainingPolicy"), (POLICY + "AmazonSagemakerHyperpodUserClusterPolicy", {"type": "cluster"})],
        "studio": [_namespaced("AmazonSagemakerHyperpodTrainingPolicy"), _namespaced("AmazonSagemakerHyperpodSpacePolicy")],
        "pod": [_namespaced("AmazonEKSViewPolicy")],
    }
    for who, arn in roles.items():
        if who == "stranger":
            continue
        eks.create_access_entry(clusterName=cluster, principalArn=arn)
        for policy_arn, scope in policies[who]:
            eks.associate_access_policy(clusterName=cluster, principalArn=arn, policyArn=policy_arn, accessScope=scope)
    api = KubeApi(kube_cluster.directory)
    for namespace in (OWN, OTHERS):
        api.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    # EKS Pod Identity names the session eks-<cluster>-<pod>-<uuid> (sandbox/services/eks_auth.py); assumed here directly.
    sessions = {"member": "alice", "studio": "SageMaker", "pod": f"eks-{cluster}-train-0-1234", "stranger": "mallory"}
    credentials = {who: sts.assume_role(RoleArn=arn, RoleSessionName=sessions[who])["Credentials"] for who, arn in roles.items()}

    def token(who: str, name: str = cluster) -> str:
        return eks_token(client.endpoint, region, credentials[who], name)

    def ask(who_or_token: str, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        bearer = token(who_or_token) if who_or_token in credentials else who_or_token
        return as_token(kube_cluster.server, kube_cluster.pki / "ca.crt", bearer, method, path, body)

    yield {"account": account, "cluster": cluster, "roles": roles, "token": token, "ask": ask, "eks": eks, "iam": iam, "trust": trust, "client": client}
    for namespace in (OWN, OTHERS):
        api.request("DELETE", f"/api/v1/namespaces/{namespace}")


def _can(world, who: str, verb: str, resource: str, namespace: str = "", group: str = "") -> bool:
    """What the API server's authorizers (RBAC, then the access policies) answer ``who``, asked with its own token."""
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"resourceAttributes": {"verb": verb, "resource": resource, "namespace": namespace, "group": group}}}  # fmt: skip
    status, answer = world["ask"](who, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review)
    assert status == 201, answer
    return answer["status"]["allowed"]


def test_each_principal_is_its_access_entry_user(world):
    """EKS's default username of a role's entry (set-custom-username.html): the role's assumed-role ARN, path dropped, and
    the session's name; the extra says who signed and for which cluster."""
    account = world["account"]
    for who, role, session in (("member", MEMBER_ROLE, "alice"), ("studio", execution_role.role_name(TEAM), "SageMaker")):
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        status, answer = world["ask"](who, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", review)
        assert status == 201, answer
        user = answer["status"]["userInfo"]
        assert user["username"] == f"arn:aws:sts::{account}:assumed-role/{role}/{session}"
        assert "system:authenticated" in user["groups"]
        assert user["extra"]["canonicalArn"] == [world["roles"][who]]
        assert user["extra"][eks_kubernetes_webhook.CLUSTER_EXTRA] == [f"{account}/us-east-1/{world['cluster']}"]


def test_a_member_works_in_the_own_namespace_only(world):
    """The training policy, scoped to the team's namespace, is all the member's entry has there: nothing in another
    team's namespace, nor cluster-wide."""
    ask = world["ask"]
    assert ask("member", "GET", f"/api/v1/namespaces/{OWN}/pods")[0] == 200
    assert _can(world, "member", "create", "hyperpodpytorchjobs", OWN, "sagemaker.amazonaws.com")
    assert ask("member", "GET", f"/api/v1/namespaces/{OTHERS}/pods")[0] == 403
    assert not _can(world, "member", "create", "hyperpodpytorchjobs", OTHERS, "sagemaker.amazonaws.com")
    assert ask("member", "GET", "/api/v1/pods")[0] == 403
    # Nor more than training in its own: no secrets, no pods of its own making, no RBAC.
    assert ask("member", "GET", f"/api/v1/namespaces/{OWN}/secrets")[0] == 403
    assert ask("member", "POST", f"/api/v1/namespaces/{OWN}/pods", POD)[0] == 403
    assert not _can(world, "member", "create", "rolebindings", OWN, "rbac.authorization.k8s.io")


def test_the_cluster_scoped_reads_are_the_user_cluster_policys_only(world):
    """Cluster-scoped UserClusterPolicy: namespaces, nodes and Kueue's ClusterQueues read; nothing written, no other
    cluster-scoped kind; and without it (disassociated) none of them, at once."""
    ask = world["ask"]
    assert ask("member", "GET", "/api/v1/namespaces")[0] == 200
    assert ask("member", "GET", "/api/v1/nodes")[0] == 200
    assert _can(world, "member", "list", "clusterqueues", group="kueue.x-k8s.io")
    assert not _can(world, "member", "update", "clusterqueues", group="kueue.x-k8s.io")
    assert not _can(world, "member", "delete", "namespaces")
    assert ask("member", "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles")[0] == 403
    assert ask("member", "GET", "/api/v1/persistentvolumes")[0] == 403
    # Studio's entry has no cluster scope: the namespaces are no read of its.
    assert ask("studio", "GET", "/api/v1/namespaces")[0] == 403
    world["eks"].disassociate_access_policy(
        clusterName=world["cluster"], principalArn=world["roles"]["member"], policyArn=POLICY + "AmazonSagemakerHyperpodUserClusterPolicy"
    )
    assert ask("member", "GET", "/api/v1/namespaces")[0] == 403
    assert ask("member", "GET", f"/api/v1/namespaces/{OWN}/pods")[0] == 200


def test_studio_and_the_pods_role_reach_their_namespace_only(world):
    ask = world["ask"]
    assert _can(world, "studio", "create", "workspaces", OWN, "workspace.jupyter.org")
    assert not _can(world, "studio", "create", "workspaces", OTHERS, "workspace.jupyter.org")
    assert ask("studio", "GET", f"/api/v1/namespaces/{OTHERS}/pods")[0] == 403
    # AmazonEKSViewPolicy (access-policy-permissions.html): reads of the namespace, no write, no secret.
    assert ask("pod", "GET", f"/api/v1/namespaces/{OWN}/pods")[0] == 200
    assert ask("pod", "GET", f"/api/v1/namespaces/{OWN}/configmaps")[0] == 200
    assert ask("pod", "POST", f"/api/v1/namespaces/{OWN}/pods", POD)[0] == 403
    assert ask("pod", "GET", f"/api/v1/namespaces/{OWN}/secrets")[0] == 403
    assert ask("pod", "GET", f"/api/v1/namespaces/{OTHERS}/configmaps")[0] == 403


def test_a_token_eks_would_not_take_is_401(world):
    ask, token = world["ask"], world["token"]
    pods = f"/api/v1/namespaces/{OWN}/pods"
    member = token("member")
    # Garbage, another shape, a URL whose query was changed after signing (another session's action).
    assert ask("k8s-aws-v1.bm90IGEgdXJs", "GET", pods)[0] == 401
    assert ask(member[len("k8s-aws-v1.") :], "GET", pods)[0] == 401
    url = base64.urlsafe_b64decode(member[len("k8s-aws-v1.") :] + "==").decode().replace("Action=GetCallerIdentity", "Action=GetSessionToken")
    assert ask("k8s-aws-v1." + base64.urlsafe_b64encode(url.encode()).decode().rstrip("="), "GET", pods)[0] == 401
    # Signed for another cluster's name, or for none the sandbox has.
    assert ask(token("member", "another-cluster"), "GET", pods)[0] == 401
    # Made 16 minutes ago: past the 15 minutes EKS takes a token for.
    past = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=16)
    with mock.patch("botocore.auth.get_current_datetime", return_value=past):
        expired = token("member")
    assert ask(expired, "GET", pods)[0] == 401
    # A principal without an access entry, and one whose role was deleted and made again (entry_works).
    assert ask("stranger", "GET", pods)[0] == 401
    iam = world["iam"]
    iam.delete_role(RoleName=POD_ROLE)
    iam.create_role(RoleName=POD_ROLE, AssumeRolePolicyDocument=world["trust"])
    assert ask(token("pod"), "GET", pods)[0] == 401
    # The member's own token still works: what was refused was each token, not the path.
    assert ask(member, "GET", pods)[0] == 200


def _rewritten(token: str, change) -> str:
    url = base64.urlsafe_b64decode(token[len("k8s-aws-v1.") :] + "==").decode()
    return "k8s-aws-v1." + base64.urlsafe_b64encode(change(url).encode()).decode().rstrip("=")


@pytest.mark.parametrize("change, taken", [
    (lambda url: url, True),
    (lambda url: url + "&Foo=bar", False),
    (lambda url: url + "&Action=AssumeRole", False),
    (lambda url: url.replace("/?", "/some/path?", 1), False),
    (lambda url: url.replace("127.0.0.1", "evil.example.com", 1), False),
])  # fmt: skip
def test_the_shape_is_checked_before_any_signature(change, taken):
    """What aws-iam-authenticator refuses before it asks STS, refused here before the key is looked up."""
    token = eks_token("http://127.0.0.1:4566", "us-east-1", {"AccessKeyId": "ASIAEXAMPLE", "SecretAccessKey": "x", "SessionToken": "t"}, "ml-shared-eks")
    asked = []
    with mock.patch("sandbox.authorization.credentials", side_effect=lambda environ: asked.append(environ) or None):
        eks_kubernetes_webhook.authenticate(_rewritten(token, change), sandbox_hosts=("127.0.0.1:4566",))
        eks_kubernetes_webhook.authenticate(token + "A" * 4096, sandbox_hosts=("127.0.0.1:4566",))
    assert bool(asked) is taken


def test_a_token_of_another_shape_than_the_authenticators_is_401_and_its_lifetime_is_whole(world):
    """aws-iam-authenticator's Verify: the presigned URL's own parameters only, each once, on STS's root path, at most 4 KiB;
    X-Amz-Expires up to 900; a token 14 minutes old still taken."""
    ask, token = world["ask"], world["token"]
    pods = f"/api/v1/namespaces/{OWN}/pods"
    member = token("member")
    assert ask(_rewritten(member, lambda url: url + "&Foo=bar"), "GET", pods)[0] == 401
    assert ask(_rewritten(member, lambda url: url + "&Action=AssumeRole"), "GET", pods)[0] == 401
    assert ask(_rewritten(member, lambda url: url.replace("/?", "/some/path?", 1)), "GET", pods)[0] == 401
    assert ask(member + "A" * 4096, "GET", pods)[0] == 401
    # The query changed after signing with its shape kept: only the signature can refuse it.
    assert ask(_rewritten(member, lambda url: url.replace("Version=2011-06-15", "Version=2011-06-15&X-Amz-Expires=61")), "GET", pods)[0] == 401
    past = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=14)
    with mock.patch("botocore.auth.get_current_datetime", return_value=past):
        old = token("member")
    assert ask(old, "GET", pods)[0] == 200


def test_a_colon_in_a_session_name_spells_no_kubernetes_user(world):
    """STS refuses a session name outside "[\\w+=,.@-]*" (AssumeRole), so none spells a ``system:`` user through an entry's
    ``{{SessionName}}``; a username that comes out with a reserved prefix maps to no user; ``@`` is ``-`` there."""
    from sandbox.services import eks_kubernetes_proxy

    sts = world["client"].boto3_client("sts")
    with pytest.raises(sts.exceptions.ClientError, match="ValidationError"):
        sts.assume_role(RoleArn=world["roles"]["member"], RoleSessionName="system:masters")
    session = types.SimpleNamespace(session_name="system:x", role_arn=world["roles"]["member"], user_arn=None)
    cluster = types.SimpleNamespace(sandbox_access_entries={world["roles"]["member"]: {"username": "{{SessionName}}", "kubernetesGroups": []}})
    backend = types.SimpleNamespace(entry_works=lambda *args: True)
    with mock.patch.object(eks_kubernetes_proxy, "_cluster", return_value=cluster), \
            mock.patch("moto.eks.models.eks_backends", {world["account"]: {"us-east-1": backend}}):
        assert eks_kubernetes_proxy.identity(world["account"], "us-east-1", world["cluster"], session) is None
        session.session_name = "alice@example.com"
        assert eks_kubernetes_proxy.identity(world["account"], "us-east-1", world["cluster"], session) == ("alice-example.com", [])


def test_a_token_of_an_unknown_region_is_answered_not_authenticated_not_an_error(world):
    """A webhook error has the API server ask again and again; a member's token must cost one answer."""
    member = world["token"]("member")
    elsewhere = _rewritten(member, lambda url: url.replace("us-east-1", "xx-fake-1"))
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": elsewhere}}
    request = urllib.request.Request(world["client"].endpoint + eks_kubernetes_webhook.TOKEN_REVIEW_PATH, data=json.dumps(review).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        assert answer.status == 200 and json.loads(answer.read())["status"]["authenticated"] is False


def test_an_expired_sessions_keys_are_refused():
    """A session past its Expiration signs nothing AWS takes ("AssumeRole", AWS STS API Reference: Expiration)."""
    import boto3
    from moto import mock_aws

    from sandbox import authorization

    with mock_aws():
        iam, sts = boto3.client("iam", region_name="us-east-1"), boto3.client("sts", region_name="us-east-1")
        trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]}
        arn = iam.create_role(RoleName="r", AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
        keys = sts.assume_role(RoleArn=arn, RoleSessionName="alice", DurationSeconds=900)["Credentials"]
        assert authorization.principal_for(keys["AccessKeyId"], keys["SessionToken"])[1] is not None
        later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=901)
        clock = mock.Mock(datetime=mock.Mock(now=lambda tz=None: later), UTC=datetime.UTC)
        with mock.patch.object(authorization, "datetime", clock), pytest.raises(authorization.UnknownCredentials, match="ExpiredToken"):
            authorization.principal_for(keys["AccessKeyId"], keys["SessionToken"])


def test_a_job_or_a_space_status_is_its_operators_to_write(world):
    """Issue 38's hole, closed in the team Role, stays closed through the access policies: a member reads its jobs' status
    but writes none, so it cannot mark a running job Succeeded and have Kueue release its quota."""
    for who, group, resource in (("member", "kubeflow.org", "pytorchjobs/status"), ("member", "sagemaker.amazonaws.com", "hyperpodpytorchjobs/status"),
                                 ("studio", "workspace.jupyter.org", "workspaces/status")):
        kind, sub = resource.split("/")
        assert _can(world, who, "get", resource, OWN, group)
        for verb in ("update", "patch"):
            assert not _can(world, who, verb, resource, OWN, group), (who, verb, resource)
        assert _can(world, who, "create", kind, OWN, group) and sub == "status"


def test_the_webhook_has_no_opinion_without_an_entry():
    """The admin, the controllers, service accounts and impersonated users carry no entry: RBAC alone decides for them."""
    review = {"spec": {"user": "kubernetes-admin", "groups": ["system:masters"], "resourceAttributes": {"verb": "get", "resource": "pods"}}}
    assert eks_kubernetes_webhook.subject_access_review(review)["status"] == {"allowed": False}


@pytest.mark.parametrize(
    "scope, namespace, allowed",
    [
        ({"type": "namespace", "namespaces": ["hyperpod-ns-*"]}, "hyperpod-ns-vision", True),
        ({"type": "namespace", "namespaces": ["hyperpod-ns-*"]}, "kube-system", False),
        ({"type": "namespace", "namespaces": ["hyperpod-ns-vision"]}, "", False),
        ({"type": "cluster", "namespaces": []}, "", True),
    ],
)
def test_a_policys_scope(scope, namespace, allowed):
    policies = {POLICY + "AmazonEKSViewPolicy": {"accessScope": scope}}
    spec = {"resourceAttributes": {"verb": "list", "resource": "pods", "namespace": namespace}}
    assert (eks_kubernetes_webhook.allowed_by(policies, spec) is not None) == allowed
