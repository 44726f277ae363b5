"""Issue 39: Studio works end to end as the team's execution role, and each permission it holds is needed.

In an IAM Identity Center domain Studio's web portal acts as the domain's execution role ("Understanding domain space
permissions and execution roles", SageMaker AI Developer Guide): it makes the member's space and app, and submits work to
the HyperPod cluster's Kubernetes API through EKS ("Grant AWS services write access to Kubernetes APIs", EKS User Guide).
Here the role is assumed through the sandbox's STS with the policies the collection renders
(``execution_role.inline_policies``), and does what Studio does: CreateSpace and CreateApp in the team's domain, and a GET
and a POST of a pod in the team's namespace through the sandbox's stand-in of EKS's Kubernetes API path
(``sandbox/services/eks_kubernetes_proxy.py``). Then each grant is taken away and what it allowed is refused.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from ansible_collections.hyperpod.tenancy.plugins.module_utils import execution_role, naming, team_model
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from sandbox.kube.api import KubeApi
from tests.unit.sandbox.aws_errors import refused

TEAM = "vision"
NAMESPACE = naming.namespace(TEAM)
GROUP = f"{NAMESPACE}-studio"
ROLE = execution_role.role_name(TEAM)
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "train"},
    "spec": {"containers": [{"name": "train", "image": "python:3.11", "command": ["python", "-c", "pass"]}]},
}


def _wait_in_service(describe, timeout=10):
    deadline = time.monotonic() + timeout
    while describe()["Status"] != "InService":
        assert time.monotonic() < deadline
        time.sleep(0.05)


def _domain(sm, seed, name, team, group):
    domain_id = sm.create_domain(
        DomainName=name,
        AuthMode="SSO",
        DefaultUserSettings={
            "ExecutionRole": f"arn:aws:iam::{seed['account_id']}:role/{execution_role.role_name(team)}",
            "SecurityGroups": seed["security_group_ids"],
        },
        VpcId=seed["vpc_id"],
        SubnetIds=seed["subnet_ids"],
        AppNetworkAccessType="VpcOnly",
        Tags=[{"Key": "team", "Value": team}],
        TagPropagation="ENABLED",
    )["DomainId"]
    _wait_in_service(lambda: sm.describe_domain(DomainId=domain_id))
    application = sm.describe_domain(DomainId=domain_id)["SingleSignOnApplicationArn"]
    return domain_id, application


@pytest.fixture
def studio(seeded, kube_cluster):
    """Vision's execution role with the collection's policies, its domain with bob's profile, nlp's domain, and the team's
    namespace where the role's access entry group may read and make pods."""
    client, seed = seeded
    region, account = seed["region"], seed["account_id"]
    iam, sm, eks = (client.boto3_client(s, region) for s in ("iam", "sagemaker", "eks"))
    sso = client.boto3_client("sso-admin", region)
    # SageMaker assumes the role for Studio's portal; the test, which cannot be SageMaker, is let in by a second statement
    # naming the account (the sandbox's STS honours trust policies). The role's permissions are the collection's.
    trust = execution_role.trust_policy()
    trust["Statement"].append({"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{account}:root"}, "Action": "sts:AssumeRole"})
    for team in (TEAM, "nlp"):
        iam.create_role(RoleName=execution_role.role_name(team), AssumeRolePolicyDocument=json.dumps(trust))
    role_arn = execution_role.role_arn(account, ROLE)
    domain_id, application = _domain(sm, seed, naming.domain_name(TEAM), TEAM, "TeamVision")
    sso.create_application_assignment(ApplicationArn=application, PrincipalId=seed["group_ids"]["TeamVision"], PrincipalType="GROUP")
    sm.create_user_profile(DomainId=domain_id, UserProfileName="bob", SingleSignOnUserIdentifier="UserName", SingleSignOnUserValue="bob")
    _wait_in_service(lambda: sm.describe_user_profile(DomainId=domain_id, UserProfileName="bob"))
    nlp_domain_id, _ = _domain(sm, seed, naming.domain_name("nlp"), "nlp", "TeamNLP")
    domain_arn = sm.describe_domain(DomainId=domain_id)["DomainArn"]
    hyperpod_arn = f"arn:aws:sagemaker:{region}:{account}:cluster/abcdef123456"
    # carol has a profile in the domain but is no member any more (her profile is being removed).
    sm.create_user_profile(DomainId=domain_id, UserProfileName="carol", SingleSignOnUserIdentifier="UserName", SingleSignOnUserValue="carol")
    policies = execution_role.inline_policies(
        TEAM, seed["data_bucket"], hyperpod_arn, seed["eks_cluster_arn"], domain_arn,
        instance_types=team_model.TEAM_LIMIT_DEFAULTS["studio_instance_types"], owners=["bob"],
    )
    for name, document in policies.items():
        iam.put_role_policy(RoleName=ROLE, PolicyName=name, PolicyDocument=json.dumps(document))
    # Studio's access entry: the role, in the group the team's Role is bound to (access_entry, team_namespace).
    cluster_name = seed["eks_cluster_arn"].split("/")[-1]
    eks.create_access_entry(clusterName=cluster_name, principalArn=role_arn, kubernetesGroups=[GROUP])
    api = KubeApi(kube_cluster.directory)
    api.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    rules = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "create", "delete"]}]
    api.request("POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NAMESPACE}/roles", {"metadata": {"name": "studio"}, "rules": rules})
    binding = {
        "metadata": {"name": "studio"},
        "subjects": [{"kind": "Group", "name": GROUP, "apiGroup": "rbac.authorization.k8s.io"}],
        "roleRef": {"kind": "Role", "name": "studio", "apiGroup": "rbac.authorization.k8s.io"},
    }
    api.request("POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NAMESPACE}/rolebindings", binding)
    credentials = client.boto3_client("sts", region).assume_role(RoleArn=role_arn, RoleSessionName="bob")["Credentials"]
    yield {
        "client": client,
        "seed": seed,
        "iam": iam,
        "policies": policies,
        "domain_id": domain_id,
        "domain_arn": domain_arn,
        "nlp_domain_id": nlp_domain_id,
        "cluster_name": cluster_name,
        "credentials": credentials,
        "as_role": client.boto3_client("sagemaker", region, credentials=credentials),
    }
    api.request("DELETE", f"/api/v1/namespaces/{NAMESPACE}")


def _kube(studio, method, path, body=None):
    """(HTTP status, answer) of a Kubernetes API request through EKS, signed as the execution role's session."""
    credentials = studio["credentials"]
    url = f"{studio['client'].endpoint}/clusters/{studio['cluster_name']}/kubernetes{path}"
    data = json.dumps(body).encode() if body is not None else None
    request = AWSRequest(method=method, url=url, data=data, headers={"Content-Type": "application/json"} if data else {})
    keys = Credentials(credentials["AccessKeyId"], credentials["SecretAccessKey"], credentials["SessionToken"])
    SigV4Auth(keys, "eks", studio["seed"]["region"]).add_auth(request)
    sent = urllib.request.Request(url, data=data, method=method, headers=dict(request.headers.items()))
    try:
        with urllib.request.urlopen(sent, timeout=30) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def _put(studio, name, document):
    studio["iam"].put_role_policy(RoleName=ROLE, PolicyName=name, PolicyDocument=json.dumps(document))


def _without(document, sid=None, action=None):
    """``document`` with statement ``sid`` removed, or ``action`` removed from every statement."""
    statements = []
    for statement in json.loads(json.dumps(document))["Statement"]:
        if statement.get("Sid") == sid:
            continue
        if action is not None:
            statement["Action"] = [a for a in statement["Action"] if a != action]
        statements.append(statement)
    return dict(document, Statement=statements)


def _space(studio, domain_id, name, owner="bob", instance_type=None, **extra):
    settings = {"AppType": "JupyterLab"}
    if instance_type:
        settings["JupyterLabAppSettings"] = {"DefaultResourceSpec": {"InstanceType": instance_type}}
    return studio["as_role"].create_space(
        DomainId=domain_id,
        SpaceName=name,
        OwnershipSettings={"OwnerUserProfileName": owner},
        SpaceSharingSettings={"SharingType": "Private"},
        SpaceSettings=settings,
        **extra,
    )


def test_studio_as_the_execution_role_makes_a_space_and_an_app_and_submits_a_pod(studio):
    as_role, domain_id = studio["as_role"], studio["domain_id"]
    _space(studio, domain_id, "bob-space", Tags=[{"Key": "team", "Value": TEAM}])
    _wait_in_service(lambda: as_role.describe_space(DomainId=domain_id, SpaceName="bob-space"))
    as_role.create_app(DomainId=domain_id, SpaceName="bob-space", AppType="JupyterLab", AppName="default")
    assert as_role.describe_app(DomainId=domain_id, SpaceName="bob-space", AppType="JupyterLab", AppName="default")["AppName"] == "default"
    assert as_role.describe_user_profile(DomainId=domain_id, UserProfileName="bob")["UserProfileName"] == "bob"
    status, _ = _kube(studio, "GET", f"/api/v1/namespaces/{NAMESPACE}/pods")
    assert status == 200
    status, created = _kube(studio, "POST", f"/api/v1/namespaces/{NAMESPACE}/pods", POD)
    assert status == 201, created
    # Inside Kubernetes the access entry decides: another namespace is the API server's 403, not IAM's.
    status, answer = _kube(studio, "GET", "/api/v1/namespaces/default/pods")
    assert status == 403 and answer["kind"] == "Status"


def test_without_mutate_via_kubernetes_api_studio_reads_the_namespace_but_writes_nothing(studio):
    """EKS User Guide, "Grant AWS services write access to Kubernetes APIs": writes need both permissions."""
    cluster_policy = studio["policies"][execution_role.CLUSTER_POLICY]
    _put(studio, execution_role.CLUSTER_POLICY, _without(cluster_policy, action="eks:MutateViaKubernetesApi"))
    status, _ = _kube(studio, "GET", f"/api/v1/namespaces/{NAMESPACE}/pods")
    assert status == 200
    for method, path, body in (
        ("POST", f"/api/v1/namespaces/{NAMESPACE}/pods", POD),
        ("DELETE", f"/api/v1/namespaces/{NAMESPACE}/pods/train", None),
        ("PATCH", f"/api/v1/namespaces/{NAMESPACE}/pods/train", {"metadata": {"labels": {"a": "b"}}}),
    ):
        status, answer = _kube(studio, method, path, body)
        assert status == 403 and "eks:MutateViaKubernetesApi" in answer["message"], (method, answer)
    # Without eks:AccessKubernetesApi, not even a read.
    _put(studio, execution_role.CLUSTER_POLICY, _without(cluster_policy, action="eks:AccessKubernetesApi"))
    status, answer = _kube(studio, "GET", f"/api/v1/namespaces/{NAMESPACE}/pods")
    assert status == 403 and "eks:AccessKubernetesApi" in answer["message"]


def test_without_the_studio_space_grant_create_space_is_refused(studio):
    studio_policy = studio["policies"][execution_role.STUDIO_POLICY]
    _put(studio, execution_role.STUDIO_POLICY, _without(studio_policy, sid="TeamSpacesAndApps"))
    assert refused(_space, studio, studio["domain_id"], "bob-space") == "AccessDeniedException"
    # ... and a space whose tags the role may not add (AddTags, the create's dependent action) is refused too.
    _put(studio, execution_role.STUDIO_POLICY, studio_policy)
    assert refused(_space, studio, studio["domain_id"], "bob-space", Tags=[{"Key": "team", "Value": "nlp"}]) == "AccessDeniedException"
    _space(studio, studio["domain_id"], "bob-space", Tags=[{"Key": "team", "Value": TEAM}])


def test_the_execution_role_is_refused_on_another_teams_domain(studio):
    nlp = studio["nlp_domain_id"]
    assert refused(_space, studio, nlp, "bob-space") == "AccessDeniedException"
    assert refused(_space, studio, nlp, "bob-space", Tags=[{"Key": "team", "Value": "vision"}]) == "AccessDeniedException"
    as_role = studio["as_role"]
    assert refused(as_role.create_app, DomainId=nlp, SpaceName="x", AppType="JupyterLab", AppName="default") == "AccessDeniedException"
    assert refused(as_role.describe_domain, DomainId=nlp) == "AccessDeniedException"
    with pytest.raises(ClientError):
        as_role.list_spaces(DomainIdEquals=nlp)  # no ListSpaces: it takes no resource, and would show every domain's spaces


def test_a_member_gets_no_studio_capacity_outside_the_platforms_instance_types(studio):
    """Red team H1: as the execution role, a space or app on ml.p5.48xlarge is refused; ml.t3.medium is allowed."""
    as_role, domain_id = studio["as_role"], studio["domain_id"]
    assert refused(_space, studio, domain_id, "big", instance_type="ml.p5.48xlarge") == "AccessDeniedException"
    _space(studio, domain_id, "small", instance_type="ml.t3.medium")
    _wait_in_service(lambda: as_role.describe_space(DomainId=domain_id, SpaceName="small"))
    big = {"InstanceType": "ml.p5.48xlarge"}
    assert refused(as_role.create_app, DomainId=domain_id, SpaceName="small", AppType="JupyterLab", AppName="default", ResourceSpec=big) == (
        "AccessDeniedException")
    assert refused(as_role.update_space, DomainId=domain_id, SpaceName="small",
                   SpaceSettings={"JupyterLabAppSettings": {"DefaultResourceSpec": big}}) == "AccessDeniedException"
    as_role.create_app(DomainId=domain_id, SpaceName="small", AppType="JupyterLab", AppName="default", ResourceSpec={"InstanceType": "ml.t3.medium"})
    # Without the condition (the policy before the fix), the large space is made.
    _put(studio, execution_role.STUDIO_POLICY, execution_role.studio_policy(
        studio["domain_arn"], TEAM, instance_types=["ml.p5.48xlarge"] + team_model.TEAM_LIMIT_DEFAULTS["studio_instance_types"], owners=["bob"]))
    _space(studio, domain_id, "big", instance_type="ml.p5.48xlarge")


def test_a_member_makes_no_space_or_app_for_a_profile_that_is_no_members(studio):
    """Red team H4: a space owned by a profile being removed (carol) would keep the domain layer from deleting it."""
    as_role, domain_id = studio["as_role"], studio["domain_id"]
    assert refused(_space, studio, domain_id, "carol-space", owner="carol") == "AccessDeniedException"
    assert refused(as_role.create_app, DomainId=domain_id, UserProfileName="carol", AppType="JupyterServer", AppName="default") == (
        "AccessDeniedException")
    _space(studio, domain_id, "bob-space")
    # An app in another's space is the space owner's: bob's space is allowed, whoever asks.
    _wait_in_service(lambda: as_role.describe_space(DomainId=domain_id, SpaceName="bob-space"))
    as_role.create_app(DomainId=domain_id, SpaceName="bob-space", AppType="JupyterLab", AppName="default")


def test_once_offboarding_revoked_the_role_no_member_makes_a_space(studio):
    """Red team H4(b): offboarding takes the role's policies away (team_execution_role revoke_only) before it lists and
    deletes the spaces and the domain: a member acting as the role (a running app's session) makes no space meanwhile."""
    as_role, domain_id = studio["as_role"], studio["domain_id"]
    _space(studio, domain_id, "before")
    changed, before, after = execution_role.ensure_revoked(studio["iam"], ROLE, check_mode=False)
    assert changed and before["studio_policy"] and after["inline_policies"] == [] and after["role_name"] == ROLE
    assert execution_role.ensure_revoked(studio["iam"], ROLE, check_mode=False)[0] is False
    assert refused(_space, studio, domain_id, "between-list-and-delete") == "AccessDeniedException"
    assert refused(as_role.create_app, DomainId=domain_id, SpaceName="before", AppType="JupyterLab", AppName="default") == "AccessDeniedException"
    studio["iam"].get_role(RoleName=ROLE)  # kept: the domain runs as it until it is deleted


def test_offboarding_revokes_the_execution_role_before_it_deletes_the_domain():
    """Red team H4(b): the order of roles/team_offboard (phase 2 revokes, phase 3 deletes)."""
    tasks = yaml.safe_load((Path(__file__).resolve().parents[3] / "roles/team_offboard/tasks/main.yml").read_text())
    names = [task["name"] for task in tasks]
    revoke = next(i for i, task in enumerate(tasks) if (task.get("hyperpod.tenancy.team_execution_role") or {}).get("revoke_only") is True)
    assert tasks[revoke]["hyperpod.tenancy.team_execution_role"]["state"] == "absent"
    workspace = next(i for i, task in enumerate(tasks) if (task.get("ansible.builtin.include_role") or {}).get("name") == "hyperpod.tenancy.workspace")
    assert revoke < workspace, names
    assert revoke < names.index("Revoke the team's Studio access (the domain's Identity Center application assignments)")


def test_a_member_tags_no_space_with_a_case_variant_of_the_teams_tag_key(studio):
    """Red team H2: IAM's condition keys are not case-sensitive, SageMaker's tag keys are: Team: nlp beside team: vision."""
    domain_id = studio["domain_id"]
    variant = [{"Key": "team", "Value": TEAM}, {"Key": "Team", "Value": "nlp"}]
    assert refused(_space, studio, domain_id, "two-teams", Tags=variant) == "AccessDeniedException"
    _space(studio, domain_id, "one-team", Tags=[{"Key": "team", "Value": TEAM}, {"Key": "managed-by", "Value": "hyperpod.tenancy"}])
