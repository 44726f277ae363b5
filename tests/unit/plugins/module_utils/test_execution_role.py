"""The team execution role's validation, plan and prediction (no AWS)."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import engine
from ansible_collections.hyperpod.tenancy.plugins.module_utils import execution_role as er
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError

from tests.unit.plugins.module_utils.module_params import module_params

ACCOUNT = "123456789012"
NAME = "hyperpod-vision-studio-execution"
ARN = "arn:aws:iam::%s:role/%s" % (ACCOUNT, NAME)
TEAM_TAGS = {"team": "vision", "cost-center": "CC-1001", "managed-by": "hyperpod.tenancy"}

# The policy roles/workspace wrote with amazon.aws.iam_policy before this module, as that YAML gives it.
WORKSPACE_POLICY = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Sid": "ListTeamPrefix",
            "Effect": "Allow",
            "Action": "s3:ListBucket",
            "Resource": "arn:aws:s3:::ml-data",
            "Condition": {"StringLike": {"s3:prefix": ["vision/*"]}},
        },
        {
            "Sid": "UseTeamObjects",
            "Effect": "Allow",
            "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
            "Resource": "arn:aws:s3:::ml-data/vision/*",
        },
    ],
}


def present(client, want, check_mode, **options):
    """(changed, before, after) of the role ``want`` describes, as the engine converges it."""
    return tuple(engine.ensure_present(er.ExecutionRole(client, want["role_name"], check_mode, want, **options), check_mode)[:3])


def absent(client, name, check_mode, **options):
    """(changed, before, after) of deleting the role ``name``."""
    return tuple(engine.ensure_absent(er.ExecutionRole(client, name, check_mode, **options), check_mode)[:3])


def params(**overrides):
    given = {"team": "vision", "description": "SageMaker Studio execution role of team vision", "data_bucket": "ml-data", "cost_center": "CC-1001"}
    return module_params(er.MODULE_OPTIONS, **dict(given, **overrides))


def existing(**overrides):
    """A role view as ``er.view`` gives it for a role that is exactly as wanted."""
    role = {
        "role_name": NAME,
        "arn": ARN,
        "description": "SageMaker Studio execution role of team vision",
        "assume_role_policy_document": er.trust_policy(),
        "tags": dict(TEAM_TAGS),
        "inline_policies": ["team-data"],
        "team_data_policy": json.loads(json.dumps(WORKSPACE_POLICY)),
        "cluster_policy": None,
        "studio_policy": None,
        "attached_policies": [],
    }
    role.update(overrides)
    return role


# --- wanted state and validation ---------------------------------------------------


def test_desired_names_the_role_through_naming_and_tags_it():
    want = er.desired(params())
    assert want["role_name"] == NAME
    assert want["tags"] == TEAM_TAGS
    assert want["purge_tags"] is False
    assert want["team_data_policy"] == WORKSPACE_POLICY


def test_desired_without_bucket_has_no_team_data_policy():
    assert er.desired(params(data_bucket=""))["team_data_policy"] is None
    assert er.desired(params(data_bucket=None))["team_data_policy"] is None


def test_desired_purges_tags_only_when_tags_are_given():
    want = er.desired(params(tags={"purpose": "ci"}))
    assert want["purge_tags"] is True
    assert want["tags"] == dict(TEAM_TAGS, purpose="ci")
    assert er.desired(params(tags={}, purge_tags=False))["purge_tags"] is False


def test_desired_tag_values_are_strings_as_iam_keeps_them():
    assert er.desired(params(cost_center=None, tags={"budget": 40000}))["tags"]["budget"] == "40000"


def test_validate_accepts_good_input():
    er.validate(params(tags={"purpose": "ci test", "owner": "a.b@example.com"}, account_id=ACCOUNT))


@pytest.mark.parametrize(
    "overrides, fragment",
    [
        ({"team": "Vision"}, "lower-case letters"),
        ({"name_prefix": "hyperpod-platform-shared", "team": "computer-vision-research"}, "IAM role name"),
        ({"description": "caf\u00e9 \u65e5\u672c"}, "description must be"),
        ({"description": "x" * 1001}, "description must be"),
        ({"data_bucket": "s3://ml-data"}, "not an S3 bucket name"),
        ({"data_bucket": "ML-Data"}, "not an S3 bucket name"),
        ({"tags": {"aws:created-by": "me"}}, "reserved for AWS"),
        ({"tags": {"bad%key": "x"}}, "tag key 'bad%key'"),
        ({"tags": {"k": "v" * 257}}, "AWS takes at most 256"),
        ({"tags": dict(("k%d" % i, "v") for i in range(48))}, "at most 50 tags"),
        ({"account_id": "12345"}, "12-digit"),
    ],
)
def test_validate_refuses_what_iam_refuses(overrides, fragment):
    with pytest.raises(InputError) as caught:
        er.validate(params(**overrides))
    assert fragment in caught.value.message


def test_validate_names_every_problem_at_once():
    with pytest.raises(InputError) as caught:
        er.validate(params(data_bucket="Bad_Bucket", tags={"aws:x": "y"}))
    assert "not an S3 bucket name" in caught.value.message
    assert "reserved for AWS" in caught.value.message


def test_validate_for_absent_checks_only_the_name():
    er.validate(params(state="absent", data_bucket="Bad_Bucket", description="\u65e5\u672c"))
    with pytest.raises(InputError):
        er.validate(params(state="absent", team="Bad_Team"))


# --- reading ---------------------------------------------------------------------


def test_policy_documents_are_decoded_whether_or_not_the_sdk_did_it():
    assert er.policy_document(quote(json.dumps(er.trust_policy()))) == er.trust_policy()
    assert er.policy_document(json.dumps(er.trust_policy())) == er.trust_policy()
    assert er.policy_document(er.trust_policy()) == er.trust_policy()
    assert er.policy_document(None) is None


def test_view_of_a_read_role():
    current = {
        "role": {
            "RoleName": NAME,
            "Arn": ARN,
            "RoleId": "AROAEXAMPLE",
            "MaxSessionDuration": 3600,
            "AssumeRolePolicyDocument": quote(json.dumps(er.trust_policy())),
            "Tags": [{"Key": "team", "Value": "vision"}],
        },
        "inline_policies": ["other", "team-data"],
        "team_data_policy": WORKSPACE_POLICY,
        "cluster_policy": None,
        "studio_policy": None,
        "attached_policies": ["arn:aws:iam::aws:policy/AmazonS3FullAccess"],
    }
    assert er.view(current) == {
        "role_name": NAME,
        "arn": ARN,
        "description": None,
        "assume_role_policy_document": er.trust_policy(),
        "tags": {"team": "vision"},
        "inline_policies": ["other", "team-data"],
        "team_data_policy": WORKSPACE_POLICY,
        "cluster_policy": None,
        "studio_policy": None,
        "attached_policies": ["arn:aws:iam::aws:policy/AmazonS3FullAccess"],
    }
    assert er.view(None) == {}


# --- planning ---------------------------------------------------------------------


def test_a_role_as_the_workspace_role_left_it_needs_nothing():
    assert er.plan_present(existing(), er.desired(params())) == []


@pytest.mark.parametrize(
    "trust",
    [
        # The same trust policy as IAM may hand it back: lists for single values, statement order, no Sid.
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": ["sagemaker.amazonaws.com"]}, "Action": ["sts:AssumeRole"]}]},
        {"Statement": [{"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}}], "Version": "2012-10-17"},
    ],
)
def test_trust_policy_compares_as_a_policy_not_as_text(trust):
    assert er.plan_present(existing(assume_role_policy_document=trust), er.desired(params())) == []


def test_a_new_role_is_created_with_its_tags_then_gets_team_data():
    want = er.desired(params())
    actions = er.plan_present({}, want)
    assert [a[0] for a in actions] == ["create_role", "put_role_policy"]
    assert actions[0] == ("create_role", NAME, er.trust_policy(), "SageMaker Studio execution role of team vision", TEAM_TAGS)
    assert actions[1] == ("put_role_policy", "team-data", WORKSPACE_POLICY)


def test_a_new_role_without_bucket_gets_no_policy():
    assert [a[0] for a in er.plan_present({}, er.desired(params(data_bucket=None)))] == ["create_role"]


def test_a_foreign_trust_policy_is_replaced():
    ec2 = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
    assert er.plan_present(existing(assume_role_policy_document=ec2), er.desired(params())) == [("update_assume_role_policy", er.trust_policy())]


def test_description_is_left_alone_when_unset_and_updated_when_set():
    assert er.plan_present(existing(description="old"), er.desired(params(description=None))) == []
    assert er.plan_present(existing(description="old"), er.desired(params(description="new"))) == [("update_role_description", "new")]
    assert er.plan_present(existing(description=None), er.desired(params(description=""))) == []


def test_tags_are_added_and_purged_only_when_tags_are_given():
    current = existing(tags=dict(TEAM_TAGS, extra="x", **{"cost-center": "CC-9"}))
    assert er.plan_present(current, er.desired(params())) == [("tag_role", {"cost-center": "CC-1001"})]
    assert er.plan_present(current, er.desired(params(tags={"purpose": "ci"}))) == [
        ("untag_role", ["extra"]),
        ("tag_role", {"cost-center": "CC-1001", "purpose": "ci"}),
    ]


def test_foreign_policies_are_removed_and_team_data_kept():
    current = existing(inline_policies=["extra", "team-data"], attached_policies=["arn:aws:iam::%s:policy/p" % ACCOUNT])
    assert er.plan_present(current, er.desired(params())) == [
        ("delete_role_policy", "extra"),
        ("detach_role_policy", "arn:aws:iam::%s:policy/p" % ACCOUNT),
    ]


def test_without_bucket_team_data_is_removed():
    assert er.plan_present(existing(), er.desired(params(data_bucket=""))) == [("delete_role_policy", "team-data")]


def test_a_changed_bucket_rewrites_team_data():
    actions = er.plan_present(existing(), er.desired(params(data_bucket="other-bucket")))
    assert [a[:2] for a in actions] == [("put_role_policy", "team-data")]
    assert actions[0][2]["Statement"][1]["Resource"] == "arn:aws:s3:::other-bucket/vision/*"


def test_a_missing_team_data_is_put():
    actions = er.plan_present(existing(inline_policies=[], team_data_policy=None), er.desired(params()))
    assert actions == [("put_role_policy", "team-data", WORKSPACE_POLICY)]


def test_absent_removes_policies_before_the_role():
    current = existing(inline_policies=["extra", "team-data"], attached_policies=["arn:aws:iam::%s:policy/p" % ACCOUNT])
    assert er.plan_absent(current) == [
        ("delete_role_policy", "extra"),
        ("delete_role_policy", "team-data"),
        ("detach_role_policy", "arn:aws:iam::%s:policy/p" % ACCOUNT),
        ("delete_role", NAME),
    ]
    assert er.plan_absent({}) == []


# --- prediction -------------------------------------------------------------------


def test_prediction_of_a_new_role():
    want = er.desired(params())
    after = er.predict({}, er.plan_present({}, want), ARN)
    assert after == existing(team_data_policy=WORKSPACE_POLICY)


def test_prediction_applies_every_kind_of_change():
    current = existing(
        description="old",
        tags=dict(TEAM_TAGS, extra="x"),
        inline_policies=["extra", "team-data"],
        attached_policies=["arn:aws:iam::%s:policy/p" % ACCOUNT],
        team_data_policy=er.team_data_policy("old-bucket", "vision"),
    )
    want = er.desired(params(tags={}))
    after = er.predict(current, er.plan_present(current, want))
    assert after == existing()
    assert current["tags"]["extra"] == "x", "predict must not change what was read"


def test_prediction_of_removal():
    assert er.predict(existing(), er.plan_absent(existing())) == {}


# --- ensure_* against a recorded fake IAM client ----------------------------------------


class FakePaginator:
    def __init__(self, client, operation):
        self.client, self.operation = client, operation

    def paginate(self, **kwargs):
        result = getattr(self.client, self.operation)(**kwargs)
        return type("Pages", (), {"build_full_result": lambda _self: result})()


class FakeIam:
    """Just enough IAM for ensure_present/absent: one role, recording every call."""

    def __init__(self, role=None, inline=None, attached=None, profiles=None):
        self.role, self.inline, self.attached, self.profiles = role, dict(inline or {}), list(attached or []), list(profiles or [])
        self.calls = []

    def _missing(self, operation):
        from botocore.exceptions import ClientError

        return ClientError({"Error": {"Code": "NoSuchEntity", "Message": "not found"}}, operation)

    def get_paginator(self, operation):
        return FakePaginator(self, operation)

    def get_role(self, RoleName):
        self.calls.append("GetRole")
        if self.role is None:
            raise self._missing("GetRole")
        return {"Role": dict(self.role)}

    def list_role_policies(self, RoleName):
        self.calls.append("ListRolePolicies")
        return {"PolicyNames": sorted(self.inline)}

    def get_role_policy(self, RoleName, PolicyName):
        self.calls.append("GetRolePolicy")
        return {"PolicyDocument": self.inline[PolicyName]}

    def list_attached_role_policies(self, RoleName):
        self.calls.append("ListAttachedRolePolicies")
        return {"AttachedPolicies": [{"PolicyArn": a, "PolicyName": a.rsplit("/", 1)[1]} for a in self.attached]}

    def list_instance_profiles_for_role(self, RoleName):
        self.calls.append("ListInstanceProfilesForRole")
        return {"InstanceProfiles": [{"InstanceProfileName": p} for p in self.profiles]}

    def create_role(self, **kwargs):
        self.calls.append("CreateRole")
        self.role = {"RoleName": kwargs["RoleName"], "Arn": ARN, "AssumeRolePolicyDocument": json.loads(kwargs["AssumeRolePolicyDocument"]),
                     "Tags": kwargs["Tags"], "Description": kwargs.get("Description")}
        return {"Role": dict(self.role)}

    def put_role_policy(self, RoleName, PolicyName, PolicyDocument):
        self.calls.append("PutRolePolicy")
        self.inline[PolicyName] = json.loads(PolicyDocument)

    def delete_role_policy(self, RoleName, PolicyName):
        self.calls.append("DeleteRolePolicy")
        del self.inline[PolicyName]

    def detach_role_policy(self, RoleName, PolicyArn):
        self.calls.append("DetachRolePolicy")
        self.attached.remove(PolicyArn)

    def delete_role(self, RoleName):
        self.calls.append("DeleteRole")
        self.role = None


def workspace_role():
    return FakeIam(
        role={"RoleName": NAME, "Arn": ARN, "Description": "SageMaker Studio execution role of team vision",
              "AssumeRolePolicyDocument": quote(json.dumps(er.trust_policy())), "Tags": [{"Key": k, "Value": v} for k, v in TEAM_TAGS.items()]},
        inline={"team-data": WORKSPACE_POLICY},
    )


def test_a_no_op_run_reads_four_times_and_writes_nothing():
    client = workspace_role()
    changed, before, after = present(client, er.desired(params()), check_mode=False, account_id=pytest.fail)
    assert not changed
    assert before == after == existing()
    assert client.calls == ["GetRole", "ListRolePolicies", "GetRolePolicy", "ListAttachedRolePolicies"]


def test_check_mode_predicts_a_new_role_with_its_policy_and_the_run_agrees():
    check_client = FakeIam()
    check = present(check_client, er.desired(params()), check_mode=True, account_id=lambda: ACCOUNT)
    assert check_client.calls == ["GetRole"]
    client = FakeIam()
    run = present(client, er.desired(params()), check_mode=False, account_id=pytest.fail)
    assert client.calls == ["GetRole", "CreateRole", "PutRolePolicy"]
    assert check == run
    assert run[0] is True and run[1] == {} and run[2]["team_data_policy"] == WORKSPACE_POLICY


def test_absent_refuses_a_role_in_an_instance_profile_before_any_write():
    client = workspace_role()
    client.profiles = ["someone-elses-profile"]
    with pytest.raises(InputError) as caught:
        absent(client, NAME, check_mode=False)
    assert "someone-elses-profile" in caught.value.message
    assert client.calls == ["GetRole", "ListRolePolicies", "GetRolePolicy", "ListAttachedRolePolicies", "ListInstanceProfilesForRole"]


def test_absent_deletes_policies_then_the_role_and_then_has_nothing_to_do():
    client = workspace_role()
    client.attached = ["arn:aws:iam::%s:policy/p" % ACCOUNT]
    changed, before, after = absent(client, NAME, check_mode=False)
    assert changed and before["role_name"] == NAME and after == {}
    assert client.calls[-3:] == ["DeleteRolePolicy", "DetachRolePolicy", "DeleteRole"]
    assert absent(client, NAME, check_mode=False) == (False, {}, {})


# --- the HyperPod cluster from Studio ------------------------------------------------

HYPERPOD = "arn:aws:sagemaker:us-east-1:%s:cluster/abcdef123456" % ACCOUNT
EKS = "arn:aws:eks:us-east-1:%s:cluster/ml-shared-eks" % ACCOUNT


def test_the_cluster_policy_names_the_shared_clusters_only():
    policy = er.desired(params(hyperpod_cluster_arn=HYPERPOD, eks_cluster_arn=EKS))["cluster_policy"]
    resources = {s["Sid"]: s["Resource"] for s in policy["Statement"]}
    assert resources == {
        "DescribeHyperPodCluster": HYPERPOD,
        "UseEksCluster": [EKS, "arn:aws:eks:us-east-1:%s:addon/ml-shared-eks/*" % ACCOUNT],
        # ListClusters takes no resource-level permission.
        "ListClusters": "*",
    }
    actions = sorted(a for s in policy["Statement"] for a in s["Action"])
    # eks:MutateViaKubernetesApi: Studio's writes to the team's namespace ("Grant AWS services write access to Kubernetes APIs").
    assert actions == [
        "eks:AccessKubernetesApi",
        "eks:DescribeAddon",
        "eks:DescribeCluster",
        "eks:MutateViaKubernetesApi",
        "sagemaker:DescribeCluster",
        "sagemaker:ListClusters",
    ]
    assert er.desired(params())["cluster_policy"] is None


@pytest.mark.parametrize(
    "given, problem",
    [
        ({"hyperpod_cluster_arn": HYPERPOD}, "given together"),
        ({"eks_cluster_arn": EKS}, "given together"),
        ({"hyperpod_cluster_arn": EKS, "eks_cluster_arn": EKS}, "is not a HyperPod cluster ARN"),
        ({"hyperpod_cluster_arn": HYPERPOD, "eks_cluster_arn": "ml-shared-eks"}, "is not an EKS cluster ARN"),
    ],
)
def test_cluster_arns_are_refused_before_any_call(given, problem):
    with pytest.raises(InputError) as refused:
        er.validate(params(**given))
    assert problem in refused.value.message


def test_a_role_without_the_cluster_policy_gets_it_and_then_reads_five_times():
    want = er.desired(params(hyperpod_cluster_arn=HYPERPOD, eks_cluster_arn=EKS))
    client = workspace_role()
    changed, before, after = present(client, want, check_mode=False, account_id=pytest.fail)
    assert changed and before["cluster_policy"] is None
    assert client.calls[-1] == "PutRolePolicy" and client.inline["hyperpod-cluster"] == want["cluster_policy"]
    assert after["inline_policies"] == ["hyperpod-cluster", "team-data"] and after["cluster_policy"] == want["cluster_policy"]
    client.calls = []
    assert present(client, want, check_mode=False, account_id=pytest.fail) == (False, after, after)
    assert client.calls == ["GetRole", "ListRolePolicies", "GetRolePolicy", "GetRolePolicy", "ListAttachedRolePolicies"]


def test_the_cluster_policy_is_removed_without_the_cluster_arns():
    current = existing(inline_policies=["hyperpod-cluster", "team-data"], cluster_policy=er.cluster_policy(HYPERPOD, EKS))
    assert er.plan_present(current, er.desired(params())) == [("delete_role_policy", "hyperpod-cluster")]
    assert er.predict(current, [("delete_role_policy", "hyperpod-cluster")]) == existing()


def test_the_role_read_earlier_in_the_run_spares_get_role_and_a_difference_reads_it_again():
    client = workspace_role()
    known = er.known_role(dict(client.role, CreateDate="2026-12-02"))
    # The creation date goes with the copy (as text: it crosses processes), for the access entry's age (access_entry.stale_reason).
    assert known["role"]["CreateDate"] == "2026-12-02"
    changed, _before, _after = present(client, er.desired(params()), check_mode=False, account_id=pytest.fail, known=known)
    assert not changed and client.calls == ["ListRolePolicies", "GetRolePolicy", "ListAttachedRolePolicies"]
    # The copy says the role is missing: check mode predicts from it, a real run reads the role again and finds it unchanged.
    client.calls = []
    assert present(client, er.desired(params()), check_mode=True, account_id=lambda: ACCOUNT, known={"role": None})[0] is True
    assert client.calls == []
    assert present(client, er.desired(params()), check_mode=False, account_id=pytest.fail, known={"role": None})[0] is False
    assert client.calls == ["GetRole", "ListRolePolicies", "GetRolePolicy", "ListAttachedRolePolicies"]


# --- the team's Studio (issue 39): what the portal does as the role in an SSO domain -----------------------------

DOMAIN_ARN = "arn:aws:sagemaker:us-east-1:%s:domain/d-vision00000a" % ACCOUNT
SM = "arn:aws:sagemaker:us-east-1:%s:" % ACCOUNT


def _decide(policy, action, resource, context=None):
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import iam_evaluation

    principal = iam_evaluation.Principal(ACCOUNT, [(er.STUDIO_POLICY, policy)], role_arn=ARN)
    return iam_evaluation.evaluate(principal, action, resource, dict(context or {}))["EvalDecision"]


def test_the_studio_policy_names_the_teams_domain_only():
    policy = er.desired(params(domain_arn=DOMAIN_ARN))["studio_policy"]
    resources = {s["Sid"]: s["Resource"] for s in policy["Statement"]}
    assert resources == {
        "TeamSpacesAndApps": [SM + "space/d-vision00000a/*", SM + "app/d-vision00000a/*"],
        "TeamDomainRead": DOMAIN_ARN,
        "TeamUserProfileRead": SM + "user-profile/d-vision00000a/*",
        "TagOnCreate": [SM + "space/d-vision00000a/*", SM + "app/d-vision00000a/*"],
    }
    actions = sorted(a for s in policy["Statement"] for a in s["Action"])
    assert actions == [
        "sagemaker:AddTags",
        "sagemaker:CreateApp",
        "sagemaker:CreateSpace",
        "sagemaker:DeleteApp",
        "sagemaker:DeleteSpace",
        "sagemaker:DescribeApp",
        "sagemaker:DescribeDomain",
        "sagemaker:DescribeSpace",
        "sagemaker:DescribeUserProfile",
        "sagemaker:UpdateSpace",
    ]
    assert er.desired(params())["studio_policy"] is None
    with pytest.raises(InputError, match="not a SageMaker AI domain ARN"):
        er.validate(params(domain_arn="arn:aws:sagemaker:us-east-1:%s:domain/*" % ACCOUNT))


@pytest.mark.parametrize(
    "action, resource, decision",
    [
        ("sagemaker:CreateSpace", "space/d-vision00000a/alice-space", "allowed"),
        ("sagemaker:CreateApp", "app/d-vision00000a/alice-space/jupyterlab/default", "allowed"),
        ("sagemaker:DescribeUserProfile", "user-profile/d-vision00000a/alice", "allowed"),
        # Another team's domain, whatever the request's tags say: a create has no resource tag, the ARN decides.
        ("sagemaker:CreateSpace", "space/d-nlp0000000b/x", "implicitDeny"),
        ("sagemaker:CreateApp", "app/d-nlp0000000b/bob-space/jupyterlab/default", "implicitDeny"),
        ("sagemaker:DeleteSpace", "space/d-nlp0000000b/bob-space", "implicitDeny"),
        ("sagemaker:DescribeUserProfile", "user-profile/d-nlp0000000b/bob", "implicitDeny"),
        ("sagemaker:CreatePresignedDomainUrl", "user-profile/d-vision00000a/alice", "implicitDeny"),
        ("sagemaker:UpdateDomain", "domain/d-vision00000a", "implicitDeny"),
    ],
)
def test_a_member_acting_as_the_role_makes_spaces_and_apps_in_the_teams_domain_and_nowhere_else(action, resource, decision):
    policy = er.studio_policy(DOMAIN_ARN, "vision", "CC-1001")
    assert _decide(policy, action, SM + resource, {"aws:RequestTag/team": "vision"}) == decision


@pytest.mark.parametrize(
    "tags, decision",
    [
        ({}, "allowed"),
        ({"team": "vision", "cost-center": "CC-1001", "managed-by": "hyperpod.tenancy", "project": "x"}, "allowed"),
        # Another team's tag on the team's own space: that team's permission set would reach it (team_policy's tag condition).
        ({"team": "nlp"}, "implicitDeny"),
        # Another cost center: the space's spend charged to someone else.
        ({"cost-center": "CC-2002"}, "implicitDeny"),
    ],
)
def test_a_member_tags_the_teams_spaces_with_the_teams_own_values_only(tags, decision):
    policy = er.studio_policy(DOMAIN_ARN, "vision", "CC-1001")
    context = dict(("aws:RequestTag/%s" % key, value) for key, value in tags.items())
    assert _decide(policy, "sagemaker:AddTags", SM + "space/d-vision00000a/alice-space", context) == decision
    # A team without a cost center: a request may set none.
    unpinned = er.studio_policy(DOMAIN_ARN, "vision")
    assert _decide(unpinned, "sagemaker:AddTags", SM + "space/d-vision00000a/s", {"aws:RequestTag/cost-center": "CC-2002"}) == "implicitDeny"
    assert _decide(unpinned, "sagemaker:AddTags", SM + "space/d-vision00000a/s", {"aws:RequestTag/team": "vision"}) == "allowed"


def test_a_role_without_the_studio_policy_gets_it_and_then_reads_six_times():
    want = er.desired(params(hyperpod_cluster_arn=HYPERPOD, eks_cluster_arn=EKS, domain_arn=DOMAIN_ARN))
    client = workspace_role()
    changed, before, after = present(client, want, check_mode=False, account_id=pytest.fail)
    assert changed and before["studio_policy"] is None and client.inline["team-studio"] == want["studio_policy"]
    assert after["inline_policies"] == ["hyperpod-cluster", "team-data", "team-studio"] and after["studio_policy"] == want["studio_policy"]
    client.calls = []
    assert present(client, want, check_mode=False, account_id=pytest.fail) == (False, after, after)
    assert client.calls == ["GetRole", "ListRolePolicies", "GetRolePolicy", "GetRolePolicy", "GetRolePolicy", "ListAttachedRolePolicies"]
    # Without the domain's ARN (a caller that did not find the domain) the policy is left as it is: team_resources gives
    # the ARN once the domain layer returns it; a new role has none.
    assert er.plan_present(after, er.desired(params(hyperpod_cluster_arn=HYPERPOD, eks_cluster_arn=EKS))) == []
    assert [a[1] for a in er.plan_present({}, er.desired(params())) if a[0] == "put_role_policy"] == ["team-data"]
    # Another document under its name (written by hand) is put right when the ARN is given.
    tampered = dict(after, studio_policy=er.studio_policy(DOMAIN_ARN.replace("d-vision00000a", "d-other000000"), "vision", "CC-1001"))
    assert er.plan_present(tampered, want) == [("put_role_policy", "team-studio", want["studio_policy"])]


STUDIO_TYPES = ["system", "ml.t3.medium", "ml.t3.large", "ml.m5.large", "ml.m5.xlarge"]


@pytest.mark.parametrize(
    "action, resource, types, decision",
    [
        # Red team H1: a member, as the role, asks for capacity outside the team's quota.
        ("sagemaker:CreateSpace", "space/d-vision00000a/s", ["ml.p5.48xlarge"], "implicitDeny"),
        ("sagemaker:UpdateSpace", "space/d-vision00000a/s", ["ml.g5.48xlarge"], "implicitDeny"),
        ("sagemaker:CreateApp", "app/d-vision00000a/s/jupyterlab/default", ["ml.p4d.24xlarge"], "implicitDeny"),
        ("sagemaker:CreateSpace", "space/d-vision00000a/s", ["ml.t3.medium", "ml.p5.48xlarge"], "implicitDeny"),
        ("sagemaker:CreateSpace", "space/d-vision00000a/s", ["ml.t3.medium"], "allowed"),
        ("sagemaker:CreateApp", "app/d-vision00000a/s/jupyterserver/default", ["system"], "allowed"),
        # No instance type in the request (Describe, Delete, a space without settings): ForAllValues holds.
        ("sagemaker:CreateSpace", "space/d-vision00000a/s", None, "allowed"),
        ("sagemaker:DescribeSpace", "space/d-vision00000a/s", None, "allowed"),
        ("sagemaker:DeleteApp", "app/d-vision00000a/s/jupyterlab/default", None, "allowed"),
    ],
)
def test_a_member_acting_as_the_role_gets_only_the_platforms_studio_instance_types(action, resource, types, decision):
    policy = er.studio_policy(DOMAIN_ARN, "vision", "CC-1001", instance_types=STUDIO_TYPES, owners=["alice"])
    context = {} if types is None else {"sagemaker:InstanceTypes": types}
    assert _decide(policy, action, SM + resource, context) == decision


def test_without_studio_instance_types_only_system_is_allowed():
    policy = er.desired(params(domain_arn=DOMAIN_ARN))["studio_policy"]
    assert _decide(policy, "sagemaker:CreateSpace", SM + "space/d-vision00000a/s", {"sagemaker:InstanceTypes": ["ml.t3.medium"]}) == "implicitDeny"
    assert _decide(policy, "sagemaker:CreateSpace", SM + "space/d-vision00000a/s", {"sagemaker:InstanceTypes": ["system"]}) == "allowed"
    given = er.desired(params(domain_arn=DOMAIN_ARN, studio_instance_types=["ml.m5.large"]))["studio_policy"]
    assert _decide(given, "sagemaker:CreateSpace", SM + "space/d-vision00000a/s", {"sagemaker:InstanceTypes": ["ml.m5.large"]}) == "allowed"
    with pytest.raises(InputError, match="studio_instance_types: 'p5' is not"):
        er.validate(params(domain_arn=DOMAIN_ARN, studio_instance_types=["p5"]))
    with pytest.raises(InputError, match="studio_owners: 'a b' is not"):
        er.validate(params(domain_arn=DOMAIN_ARN, studio_owners=["a b"]))


@pytest.mark.parametrize(
    "action, resource, owner, decision",
    [
        ("sagemaker:CreateSpace", "space/d-vision00000a/s", "alice", "allowed"),
        ("sagemaker:CreateApp", "app/d-vision00000a/s/jupyterlab/default", "alice", "allowed"),
        # Red team H4: a space or app for a profile being removed (no longer a member) keeps its removal failing.
        ("sagemaker:CreateSpace", "space/d-vision00000a/s", "carol", "implicitDeny"),
        ("sagemaker:CreateApp", "app/d-vision00000a/s/jupyterlab/default", "carol", "implicitDeny"),
        ("sagemaker:UpdateSpace", "space/d-vision00000a/s", "carol", "implicitDeny"),
        # A profile of the same name in another domain is not the team's.
        ("sagemaker:CreateSpace", "space/d-vision00000a/s", "arn:aws:sagemaker:us-east-1:%s:user-profile/d-nlp0000000b/alice" % ACCOUNT, "implicitDeny"),
        ("sagemaker:DescribeSpace", "space/d-vision00000a/s", None, "allowed"),
    ],
)
def test_a_member_acting_as_the_role_makes_spaces_and_apps_for_current_members_only(action, resource, owner, decision):
    policy = er.studio_policy(DOMAIN_ARN, "vision", "CC-1001", instance_types=STUDIO_TYPES, owners=["alice", "bob"])
    context = {}
    if owner is not None:
        context["sagemaker:OwnerUserProfileArn"] = owner if owner.startswith("arn:") else er.user_profile_arn(DOMAIN_ARN, owner)
    assert _decide(policy, action, SM + resource, context) == decision
    # No members: no request may name an owner.
    nobody = er.studio_policy(DOMAIN_ARN, "vision", "CC-1001", instance_types=STUDIO_TYPES)
    alice = {"sagemaker:OwnerUserProfileArn": er.user_profile_arn(DOMAIN_ARN, "alice")}
    assert _decide(nobody, "sagemaker:CreateSpace", SM + "space/d-vision00000a/s", alice) == "implicitDeny"


@pytest.mark.parametrize(
    "tags, decision",
    [
        # Red team H2: IAM's context keys are not case-sensitive: Team pins nothing, and SageMaker keeps both tags.
        ([("team", "vision"), ("Team", "nlp")], "implicitDeny"),
        ([("TEAM", "nlp")], "implicitDeny"),
        ([("owner", "x")], "implicitDeny"),
        ([("team", "vision"), ("cost-center", "CC-1001"), ("managed-by", "hyperpod.tenancy")], "allowed"),
        ([("team", "vision"), ("project", "x")], "allowed"),
    ],
)
def test_a_member_tags_with_the_teams_tag_keys_only(tags, decision):
    policy = er.studio_policy(DOMAIN_ARN, "vision", "CC-1001", extra_tag_keys=["project"])
    context = {"aws:TagKeys": [key for key, unused in tags]}
    for key, value in tags:
        context["aws:RequestTag/%s" % key] = value
    assert _decide(policy, "sagemaker:AddTags", SM + "space/d-vision00000a/s", context) == decision


def test_revoke_only_takes_every_policy_away_and_keeps_the_role():
    """Red team H4(b): offboarding's first step on the role; check mode predicts it, a second run changes nothing."""
    want = er.desired(params(hyperpod_cluster_arn=HYPERPOD, eks_cluster_arn=EKS, domain_arn=DOMAIN_ARN))
    client = workspace_role()
    present(client, want, check_mode=False, account_id=pytest.fail)
    client.calls = []
    predicted = er.ensure_revoked(client, NAME, check_mode=True)
    assert [c for c in client.calls if not c.startswith(("Get", "List"))] == []
    changed, before, after = er.ensure_revoked(client, NAME, check_mode=False)
    assert changed and predicted == (True, before, after)
    assert after["inline_policies"] == [] and after["studio_policy"] is None and after["role_name"] == NAME and client.inline == {}
    assert "DeleteRole" not in client.calls
    assert er.ensure_revoked(client, NAME, check_mode=False)[0] is False


def test_a_team_too_large_for_the_roles_policies_is_refused_before_any_call():
    """IAM counts at most 10,240 characters of a role's inline policies; team-studio names each member's profile once."""
    members = ["member-%03d" % i for i in range(150)]
    with pytest.raises(InputError, match="above IAM's 10240 for a role .*150 studio_owners"):
        er.validate(params(domain_arn=DOMAIN_ARN, studio_owners=members, studio_instance_types=STUDIO_TYPES))
    er.validate(params(domain_arn=DOMAIN_ARN, studio_owners=members[:60], studio_instance_types=STUDIO_TYPES))
