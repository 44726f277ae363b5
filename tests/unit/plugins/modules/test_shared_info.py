"""plugins/modules/shared_info.py: what is missing and what is not the teams' to change, refused in one failure."""

from __future__ import annotations

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import ModuleFailure
from ansible_collections.hyperpod.tenancy.plugins.modules import shared_info

UNMARKED = {"permission_set_arn": "arn:aws:sso:::permissionSet/ssoins-1/ps-1", "name": "hyperpod-vision", "tags": {"owner": "admins"}}


class Context:
    region = "us-east-1"


def params(**overrides):
    base = dict(
        cluster_name="ml-shared", eks_cluster_name="ml-shared-eks", identity_center_instance_arn=None, identity_center=None,
        teams=[{"name": "vision", "state": "present", "adopt": []}, {"name": "nlp", "state": "present", "adopt": []}],
        subnet_ids=[], extra={}, name_prefix="hyperpod", budget_name_prefix=None, budget_tag_keys=None, budget_account_id=None, pod_roles=False,
        identity_center_quotas={"permission_sets": 3500, "provisioned_permission_sets_per_account": 500},
    )
    base.update(overrides)
    return base


@pytest.fixture
def reads(monkeypatch):
    """shared_info's reads, faked: the EKS cluster (``eks``) and vision's hand-made permission set."""
    found = {"eks": "arn:aws:eks:us-east-1:123456789012:cluster/ml-shared-eks"}
    monkeypatch.setattr(shared_info, "read_shared", lambda *args: {"eks_cluster_arn": found["eks"], "identity_store_id": "d-1", "account_id": "123456789012"})
    monkeypatch.setattr(shared_info, "preflight_problems", lambda *args: [])
    permission_sets = {"permission_sets": {"hyperpod-vision": dict(UNMARKED)}}
    monkeypatch.setattr(shared_info, "team_lookup_phases", lambda *args, **kwargs: [("sso-admin", lambda: permission_sets)])
    monkeypatch.setattr(shared_info, "team_resource_phases", lambda *args: [])
    return found


def test_a_teams_foreign_resource_and_what_is_missing_are_one_failure(reads):
    reads["eks"] = None
    with pytest.raises(ModuleFailure) as failed:
        shared_info.converge(Context(), params())
    message = failed.value.message
    assert message.startswith("What the teams need is missing, or exists and is not theirs to change (nothing was changed):")
    assert "EKS cluster ml-shared-eks does not exist in us-east-1" in message
    assert "team 'vision': permission set hyperpod-vision (arn:aws:sso:::permissionSet/ssoins-1/ps-1) exists and was not made" in message
    assert len(failed.value.result["problems"]) == 2


def test_a_foreign_resource_alone_is_refused_and_adopting_it_lets_the_run_go_on(reads):
    with pytest.raises(ModuleFailure, match=r"^What the teams would change exists and is not theirs to change \(nothing was changed\):\nteam 'vision'"):
        shared_info.converge(Context(), params())
    adopting = params(teams=[{"name": "vision", "state": "present", "adopt": ["permission_set"]}])
    result = shared_info.converge(Context(), adopting)
    assert result["changed"] is False and result["hyperpod_shared"]["permission_sets"]["hyperpod-vision"]["tags"] == {"owner": "admins"}
