"""Amazon Managed Grafana in the sandbox (a service moto lacks), called through boto3 as the modules call it."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from tests.unit.sandbox.aws_errors import error_code, refused
from tests.unit.sandbox.polling import unless_gone, wait_until

SSO = dict(accountAccessType="CURRENT_ACCOUNT", permissionType="SERVICE_MANAGED", authenticationProviders=["AWS_SSO"])


def wait_status(grafana, workspace_id, wanted, timeout=10):
    def status():
        return unless_gone(lambda: grafana.describe_workspace(workspaceId=workspace_id)["workspace"]["status"], "ResourceNotFoundException")

    wait_until(status, wanted, workspace_id, timeout)


@pytest.fixture
def grafana(sandbox):
    return sandbox.boto3_client("grafana")


def test_create_describe_list_delete_round_trip(grafana, sandbox):
    created = grafana.create_workspace(workspaceName="hyperpod-obs", workspaceDataSources=["PROMETHEUS"], tags={"team": "platform"}, **SSO)
    assert created["ResponseMetadata"]["HTTPStatusCode"] == 202
    workspace = created["workspace"]
    assert workspace["status"] == "CREATING"
    assert workspace["id"].startswith("g-") and len(workspace["id"]) == 12
    assert workspace["endpoint"] == f"{workspace['id']}.grafana-workspace.us-east-1.amazonaws.com"
    assert workspace["authentication"] == {"providers": ["AWS_SSO"]}
    assert workspace["dataSources"] == ["PROMETHEUS"]
    assert workspace["grafanaVersion"] == "10.4"
    wait_status(grafana, workspace["id"], "ACTIVE")
    described = grafana.describe_workspace(workspaceId=workspace["id"])["workspace"]
    assert described["name"] == "hyperpod-obs" and described["tags"] == {"team": "platform"}
    listed = grafana.list_workspaces()["workspaces"]
    assert [w["id"] for w in listed] == [workspace["id"]]
    assert grafana.delete_workspace(workspaceId=workspace["id"])["workspace"]["status"] == "DELETING"
    wait_status(grafana, workspace["id"], None)
    assert grafana.list_workspaces()["workspaces"] == []
    operations = [r["operation"] for r in sandbox.requests() if r["service"] == "grafana"]
    assert operations[:2] == ["CreateWorkspace", "DescribeWorkspace"] and "DeleteWorkspace" in operations


def test_missing_workspace_is_resource_not_found_with_model_members(grafana):
    with pytest.raises(ClientError) as excinfo:
        grafana.describe_workspace(workspaceId="g-0123456789")
    assert error_code(excinfo) == "ResourceNotFoundException"
    assert excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    assert excinfo.value.response["resourceId"] == "g-0123456789"
    assert excinfo.value.response["resourceType"] == "WORKSPACE"


@pytest.mark.parametrize(
    "request_args, fragment",
    [
        (dict(SSO, accountAccessType="EVERYWHERE"), "accountAccessType"),
        (dict(SSO, workspaceName="bad name!"), "workspaceName"),
        (dict(SSO, workspaceDataSources=["GRAPHITE"]), "workspaceDataSources"),
        (dict(SSO, grafanaVersion="7.5"), "Grafana version 7.5"),
        (dict(SSO, accountAccessType="ORGANIZATION"), "workspaceOrganizationalUnits"),
        (dict(SSO, authenticationProviders=[]), "authentication provider"),
    ],
)
def test_create_rejects_what_the_model_and_the_api_reference_reject(grafana, request_args, fragment):
    with pytest.raises(ClientError) as excinfo:
        grafana.create_workspace(**request_args)
    assert error_code(excinfo) == "ValidationException"
    assert fragment in excinfo.value.response["Error"]["Message"]
    assert excinfo.value.response["reason"] in ("FIELD_VALIDATION_FAILED", "OTHER")
    assert grafana.list_workspaces()["workspaces"] == []


def test_client_token_makes_create_idempotent(grafana):
    first = grafana.create_workspace(clientToken="token-1", **SSO)["workspace"]
    second = grafana.create_workspace(clientToken="token-1", **SSO)["workspace"]
    assert first["id"] == second["id"]
    assert len(grafana.list_workspaces()["workspaces"]) == 1


def test_writes_while_transitioning_are_refused(grafana, sandbox):
    sandbox.configure(status_delay=30)
    workspace = grafana.create_workspace(**SSO)["workspace"]
    with pytest.raises(ClientError) as excinfo:
        grafana.update_workspace(workspaceId=workspace["id"], workspaceDescription="x")
    assert error_code(excinfo) == "ConflictException"
    assert excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"] == 409
    assert refused(grafana.delete_workspace, workspaceId=workspace["id"]) == "ConflictException"
    assert refused(grafana.update_permissions, workspaceId=workspace["id"], updateInstructionBatch=[]) == "ValidationException"


def test_update_moves_through_updating(grafana):
    workspace = grafana.create_workspace(**SSO)["workspace"]
    wait_status(grafana, workspace["id"], "ACTIVE")
    updated = grafana.update_workspace(workspaceId=workspace["id"], workspaceDescription="team dashboards", workspaceDataSources=["PROMETHEUS", "CLOUDWATCH"])
    assert updated["workspace"]["status"] == "UPDATING"
    wait_status(grafana, workspace["id"], "ACTIVE")
    described = grafana.describe_workspace(workspaceId=workspace["id"])["workspace"]
    assert described["description"] == "team dashboards"
    assert described["dataSources"] == ["PROMETHEUS", "CLOUDWATCH"]


def test_permissions_add_replace_revoke_and_filter(grafana, seeded):
    _, seed = seeded
    groups = seed["group_ids"]
    workspace = grafana.create_workspace(**SSO)["workspace"]
    wait_status(grafana, workspace["id"], "ACTIVE")
    answer = grafana.update_permissions(workspaceId=workspace["id"], updateInstructionBatch=[
        {"action": "ADD", "role": "ADMIN", "users": [{"id": groups["PlatformAdmins"], "type": "SSO_GROUP"}]},
        {"action": "ADD", "role": "VIEWER", "users": [{"id": groups["TeamVision"], "type": "SSO_GROUP"}, {"id": groups["TeamNLP"], "type": "SSO_GROUP"}]},
    ])
    assert answer["errors"] == []
    entries = {e["user"]["id"]: e["role"] for e in grafana.list_permissions(workspaceId=workspace["id"])["permissions"]}
    assert entries == {groups["PlatformAdmins"]: "ADMIN", groups["TeamVision"]: "VIEWER", groups["TeamNLP"]: "VIEWER"}
    # One role per principal: adding EDITOR replaces VIEWER.
    grafana.update_permissions(workspaceId=workspace["id"], updateInstructionBatch=[
        {"action": "ADD", "role": "EDITOR", "users": [{"id": groups["TeamNLP"], "type": "SSO_GROUP"}]},
    ])
    only_nlp = grafana.list_permissions(workspaceId=workspace["id"], groupId=groups["TeamNLP"])["permissions"]
    assert only_nlp == [{"user": {"id": groups["TeamNLP"], "type": "SSO_GROUP"}, "role": "EDITOR"}]
    grafana.update_permissions(workspaceId=workspace["id"], updateInstructionBatch=[
        {"action": "REVOKE", "role": "VIEWER", "users": [{"id": groups["TeamVision"], "type": "SSO_GROUP"}]},
    ])
    remaining = sorted(e["user"]["id"] for e in grafana.list_permissions(workspaceId=workspace["id"])["permissions"])
    assert remaining == sorted([groups["PlatformAdmins"], groups["TeamNLP"]])
    assert grafana.list_permissions(workspaceId=workspace["id"], userType="SSO_USER")["permissions"] == []


def test_permissions_for_unknown_principal_come_back_as_update_errors(grafana, seeded):
    workspace = grafana.create_workspace(**SSO)["workspace"]
    wait_status(grafana, workspace["id"], "ACTIVE")
    answer = grafana.update_permissions(workspaceId=workspace["id"], updateInstructionBatch=[
        {"action": "ADD", "role": "VIEWER", "users": [{"id": "no-such-group", "type": "SSO_GROUP"}]},
    ])
    assert len(answer["errors"]) == 1
    assert answer["errors"][0]["code"] == 404
    assert answer["errors"][0]["causedBy"]["users"] == [{"id": "no-such-group", "type": "SSO_GROUP"}]
    assert grafana.list_permissions(workspaceId=workspace["id"])["permissions"] == []


def test_permissions_need_aws_sso_and_a_valid_batch(grafana):
    saml = grafana.create_workspace(**dict(SSO, authenticationProviders=["SAML"]))["workspace"]
    assert saml["authentication"] == {"providers": ["SAML"], "samlConfigurationStatus": "NOT_CONFIGURED"}
    wait_status(grafana, saml["id"], "ACTIVE")
    with pytest.raises(ClientError) as excinfo:
        grafana.update_permissions(workspaceId=saml["id"], updateInstructionBatch=[
            {"action": "ADD", "role": "VIEWER", "users": [{"id": "g1", "type": "SSO_GROUP"}]},
        ])
    assert error_code(excinfo) == "ValidationException"
    with pytest.raises(ClientError) as excinfo:
        grafana.update_permissions(workspaceId=saml["id"], updateInstructionBatch=[
            {"action": "GRANT", "role": "VIEWER", "users": [{"id": "g1", "type": "SSO_GROUP"}]},
        ])
    assert error_code(excinfo) == "ValidationException"
    assert "action" in excinfo.value.response["Error"]["Message"]


def test_tags_through_the_workspace_arn(grafana, sandbox):
    workspace = grafana.create_workspace(tags={"a": "1"}, **SSO)["workspace"]
    arn = f"arn:aws:grafana:us-east-1:123456789012:/workspaces/{workspace['id']}"
    grafana.tag_resource(resourceArn=arn, tags={"b": "2"})
    grafana.untag_resource(resourceArn=arn, tagKeys=["a"])
    assert grafana.list_tags_for_resource(resourceArn=arn)["tags"] == {"b": "2"}
    assert refused(grafana.list_tags_for_resource, resourceArn="arn:aws:grafana:us-east-1:123456789012:/workspaces/g-0000000000") == "ResourceNotFoundException"
    assert refused(grafana.tag_resource, resourceArn=arn, tags={f"k{i}": "v" for i in range(50)}) == "ValidationException"


def test_reset_empties_grafana(grafana, sandbox):
    grafana.create_workspace(**SSO)
    sandbox.reset()
    assert grafana.list_workspaces()["workspaces"] == []


def test_observability_addon_is_in_the_eks_catalog(sandbox):
    eks = sandbox.boto3_client("eks")
    eks.create_cluster(name="ml-eks", roleArn="arn:aws:iam::123456789012:role/eks", resourcesVpcConfig={"subnetIds": ["subnet-1"]})
    versions = eks.describe_addon_versions(addonName="amazon-sagemaker-hyperpod-observability")["addons"]
    assert [a["addonName"] for a in versions] == ["amazon-sagemaker-hyperpod-observability"]
    addon = eks.create_addon(clusterName="ml-eks", addonName="amazon-sagemaker-hyperpod-observability",
                             configurationValues='{"ampWorkspace": {"arn": "arn:aws:aps:us-east-1:123456789012:workspace/ws-1"}}')["addon"]
    assert addon["status"] == "CREATING" and addon["addonVersion"] == versions[0]["addonVersions"][0]["addonVersion"]
    assert refused(eks.create_addon, clusterName="ml-eks", addonName="amazon-sagemaker-hyperpod-not-a-real-addon") == "InvalidParameterException"
