"""Permission set logic without AWS: input checks, the desired state, the plan of calls."""

from __future__ import annotations

import json

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import permission_set as ps
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError

from tests.unit.plugins.module_utils.module_params import module_params

ARN = "arn:aws:sso:::permissionSet/ssoins-0123456789abcdef/ps-0123456789abcdef"
POLICY = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/v/*"}]}


def params(**overrides):
    return module_params(ps.MODULE_OPTIONS, **dict({"name": "hyperpod-vision"}, **overrides))


def current(**overrides):
    base = {
        "name": "hyperpod-vision",
        "permission_set_arn": ARN,
        "description": "Team vision",
        "session_duration": "PT8H",
        "relay_state": None,
        "inline_policy": POLICY,
        "managed_policies": ["arn:aws:iam::aws:policy/ReadOnlyAccess"],
        "customer_managed_policies": [{"name": "Extra", "path": "/"}],
        "permissions_boundary": None,
        "tags": {"team": "vision"},
        "provisioned_accounts": ["123456789012"],
        "assignments": [{"account_id": "123456789012", "principal_type": "GROUP", "principal_id": "g-vision"}],
    }
    base.update(overrides)
    return base


@pytest.mark.parametrize(
    "overrides, fragment",
    [
        ({"name": "x" * 33}, "name"),
        ({"name": "has space"}, "name"),
        ({"session_duration": "PT13H"}, "session_duration"),
        ({"session_duration": "PT30M"}, "session_duration"),
        ({"session_duration": "8 hours"}, "session_duration"),
        ({"inline_policy": "{not json"}, "not valid JSON"),
        ({"inline_policy": "[1, 2]"}, "JSON object"),
        ({"managed_policies": ["arn:aws:iam::123456789012:policy/Mine"]}, "AWS managed policy"),
        ({"customer_managed_policies": [{"name": "P", "path": "no-slashes"}]}, "path"),
        (
            {"permissions_boundary": {"managed_policy_arn": "arn:aws:iam::aws:policy/ReadOnlyAccess", "customer_managed_policy_reference": {"name": "B"}}},
            "exactly one",
        ),
        ({"groups": ["TeamVision"], "accounts": ["12345"]}, "12-digit"),
        ({"groups": ["TeamVision"]}, "together"),
        ({"description": "é" * 701}, "description"),
    ],
)
def test_validate_refuses_what_aws_refuses(overrides, fragment):
    with pytest.raises(InputError) as error:
        ps.validate(params(**overrides))
    assert fragment in error.value.message


def test_validate_accepts_a_full_request():
    ps.validate(
        params(
            session_duration="PT8H30M",
            inline_policy=json.dumps(POLICY),
            managed_policies=["arn:aws:iam::aws:policy/job-function/ViewOnlyAccess"],
            customer_managed_policies=[{"name": "TeamExtra", "path": "/hyperpod/"}],
            permissions_boundary={"customer_managed_policy_reference": {"name": "Boundary", "path": "/"}},
            groups=["TeamVision"],
            accounts=["123456789012"],
        )
    )


def test_inline_policy_is_compared_as_json_not_text():
    text = json.dumps(POLICY, indent=4, sort_keys=False)
    desired = ps.desired_state(params(inline_policy=text), current(), {})
    assert "inline_policy" not in ps.plan(current(), desired)
    desired = ps.desired_state(params(inline_policy=""), current(), {})
    assert ps.plan(current(), desired)["inline_policy"] == {}


def test_session_duration_is_compared_as_a_duration():
    desired = ps.desired_state(params(session_duration="PT480M"), current(), {})
    assert ps.plan(current(), desired) == {}
    desired = ps.desired_state(params(session_duration="PT4H"), current(), {})
    assert ps.plan(current(), desired) == {"update": {"session_duration": "PT4H"}}


def test_unset_options_are_left_alone():
    assert ps.plan(current(), ps.desired_state(params(), current(), {})) == {}


def test_purge_managed_policies():
    wanted = ["arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess"]
    purged = ps.plan(current(), ps.desired_state(params(managed_policies=wanted, customer_managed_policies=[]), current(), {}))
    assert purged["attach_managed"] == wanted
    assert purged["detach_managed"] == ["arn:aws:iam::aws:policy/ReadOnlyAccess"]
    assert purged["detach_customer"] == [{"name": "Extra", "path": "/"}]
    kept = ps.plan(current(), ps.desired_state(params(managed_policies=wanted, customer_managed_policies=[], purge_managed_policies=False), current(), {}))
    assert kept == {"attach_managed": wanted}


def test_assignments_reconcile_and_purge():
    groups = {"TeamVision": "g-vision", "TeamNLP": "g-nlp"}
    change = ps.plan(current(), ps.desired_state(params(groups=["TeamNLP"], accounts=["123456789012"]), current(), groups))
    assert change == {
        "assign": [{"account_id": "123456789012", "principal_type": "GROUP", "principal_id": "g-nlp"}],
        "unassign": [{"account_id": "123456789012", "principal_type": "GROUP", "principal_id": "g-vision"}],
    }
    keep = ps.plan(current(), ps.desired_state(params(groups=["TeamNLP"], accounts=["123456789012"], purge_assignments=False), current(), groups))
    assert "unassign" not in keep and len(keep["assign"]) == 1


def test_tags_and_boundary():
    desired = ps.desired_state(
        params(tags={"team": "vision", "cost-center": "CC-1"}, permissions_boundary={"managed_policy_arn": "arn:aws:iam::aws:policy/PowerUserAccess"}),
        current(),
        {},
    )
    change = ps.plan(current(), desired)
    assert change["tag"] == {"cost-center": "CC-1"}
    assert change["boundary"] == {"managed_policy_arn": "arn:aws:iam::aws:policy/PowerUserAccess"}
    removed = ps.plan(current(permissions_boundary={"managed_policy_arn": "x"}), ps.desired_state(params(permissions_boundary={}), current(), {}))
    assert removed == {"boundary": None}


def test_a_new_permission_set():
    desired = ps.desired_state(params(inline_policy=POLICY, groups=["TeamVision"], accounts=["123456789012"]), None, {"TeamVision": "g-vision"})
    change = ps.plan(None, desired)
    assert change["create"] is True
    assert change["inline_policy"] == POLICY
    assert change["assign"] == [{"account_id": "123456789012", "principal_type": "GROUP", "principal_id": "g-vision"}]
    assert desired["session_duration"] == "PT1H"


def test_team_names_and_rendered_policy():
    team_params = ps.apply_team(
        params(
            name=None,
            team="vision",
            name_prefix="hyperpod",
            team_policy={
                "account_id": "123456789012",
                "region": "us-east-1",
                "data_bucket": "hyperpod-team-data",
                "hyperpod_cluster_arn": "arn:aws:sagemaker:us-east-1:123456789012:cluster/p1",
                "eks_cluster_arn": "arn:aws:eks:us-east-1:123456789012:cluster/ml-shared-eks",
            },
        )
    )
    assert team_params["name"] == "hyperpod-vision"
    assert any(s["Resource"] == "arn:aws:s3:::hyperpod-team-data/vision/*" for s in team_params["inline_policy"]["Statement"])
    assert ps.team_names("vision", "hyperpod") == {
        "permission_set": "hyperpod-vision",
        "role_name_pattern": "AWSReservedSSO_hyperpod-vision_*",
        "namespace": "hyperpod-ns-vision",
        "kubernetes_group": "hyperpod-ns-vision-namespace-level-group",
    }
    with pytest.raises(InputError):
        ps.apply_team(params(name=None, team="Vision_Team"))


@pytest.mark.parametrize("name, pattern", [("hyperpod-vision", "AWSReservedSSO_hyperpod-vision_*"), ("Admins", "AWSReservedSSO_Admins_*")])
def test_role_name_pattern(name, pattern):
    assert ps.role_name_pattern(name) == pattern


def test_an_outdated_account_is_provisioned_again():
    stale = current(outdated_accounts=["123456789012"])
    change = ps.plan(stale, ps.desired_state(params(), stale, {}))
    assert change == {"provision": ["123456789012"]}
    assert ps.desired_state(params(), stale, {})["outdated_accounts"] == []
