"""plugins/modules/shared_info.py: what is missing refused in one failure; what is not a team's to change, refusing that team."""

from __future__ import annotations

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import ModuleFailure
from ansible_collections.hyperpod.tenancy.plugins.modules import shared_info

UNMARKED = {"permission_set_arn": "arn:aws:sso:::permissionSet/ssoins-1/ps-1", "name": "hyperpod-vision", "tags": {"owner": "admins"}}


class Context:
    region = "us-east-1"

    def __init__(self):
        self.warnings = []

    def warn(self, message):
        self.warnings.append(message)


def params(**overrides):
    base = dict(
        cluster_name="ml-shared", eks_cluster_name="ml-shared-eks", identity_center_instance_arn=None, identity_center=None,
        teams=[{"name": "vision", "state": "present", "adopt": []}, {"name": "nlp", "state": "present", "adopt": []}],
        subnet_ids=[], extra={}, name_prefix="hyperpod", budget_name_prefix=None, budget_tag_keys=None, budget_account_id=None, pod_roles=False, inherit={},
        scale_limits={},
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


def test_what_the_teams_need_is_missing_fails_the_run_but_a_teams_foreign_resource_refuses_that_team_only(reads):
    reads["eks"] = None
    with pytest.raises(ModuleFailure) as failed:
        shared_info.converge(Context(), params())
    message = failed.value.message
    assert message.startswith("What the teams need is missing (nothing was changed):")
    assert "EKS cluster ml-shared-eks does not exist in us-east-1" in message
    assert failed.value.result["problems"] == ["EKS cluster ml-shared-eks does not exist in us-east-1"]


def test_a_foreign_resource_refuses_its_team_only_and_adopting_it_lets_the_team_go_on(reads):
    """Threat model (issue 36, case 4): one team's resource that is not its to change (a broken mark) does not stop the run:
    shared_info names the team and why in hyperpod_shared.team_problems, for that team's team_resources to refuse."""
    context = Context()
    result = shared_info.converge(context, params())
    found = result["hyperpod_shared"]["team_problems"]
    assert list(found) == ["vision"] and len(found["vision"]) == 1
    assert found["vision"][0].startswith("permission set hyperpod-vision (arn:aws:sso:::permissionSet/ssoins-1/ps-1) exists and was not made")
    assert context.warnings == ["team 'vision' is refused, the other teams go on: " + found["vision"][0]]
    adopting = params(teams=[{"name": "vision", "state": "present", "adopt": ["permission_set"]}])
    result = shared_info.converge(Context(), adopting)
    assert result["changed"] is False and result["hyperpod_shared"]["permission_sets"]["hyperpod-vision"]["tags"] == {"owner": "admins"}
    assert result["hyperpod_shared"]["team_problems"] == {}


def test_the_platforms_inherit_setting_is_checked_before_any_call(reads, monkeypatch):
    monkeypatch.setattr(shared_info, "read_shared", lambda *args: pytest.fail("read before the setting was checked"))
    with pytest.raises(ModuleFailure, match=r"^hyperpod_inherit is not valid \(nothing was read or changed\):\nhyperpod_inherit: key 'Vision'"):
        shared_info.converge(Context(), params(inherit={"Vision": "vision"}))


def test_a_refused_read_is_reported_as_awss_refusal_with_its_code_not_as_something_missing(reads, monkeypatch):
    import boto3
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import identity_center
    from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import error_code
    from botocore.stub import Stubber

    client = boto3.client("sso-admin", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")
    stub = Stubber(client)
    denied = "User: arn:aws:sts::123456789012:assumed-role/automation/run is not authorized to perform: sso:ListPermissionSets"
    stub.add_client_error("list_permission_sets", service_error_code="AccessDeniedException", service_message=denied, http_status_code=400)
    phases = [("sso-admin", lambda: {"permission_sets": identity_center.list_permission_sets(client, InstanceArn="arn:aws:sso:::instance/ssoins-1")})]
    monkeypatch.setattr(shared_info, "team_lookup_phases", lambda *args, **kwargs: phases)
    with stub, pytest.raises(ModuleFailure) as failed:
        shared_info.converge(Context(), params())
    message = failed.value.message
    assert message.startswith("AWS refused a read of what the teams need, so it could not be checked (nothing was changed):")
    assert "missing" not in message
    assert failed.value.result["problems"] == ["Failed to list permission sets: AWS refused it: AccessDeniedException (%s)" % denied]
    # The module's failure keeps AWS's answer (fail_json_aws reports its code and message).
    assert error_code(failed.value) == "AccessDeniedException"
