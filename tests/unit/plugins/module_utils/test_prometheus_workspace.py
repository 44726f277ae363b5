"""The pure parts of prometheus_workspace: input checks, exact alias matching, returns."""

from __future__ import annotations

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import prometheus_workspace as amp

KEY = "arn:aws:kms:us-east-1:111122223333:key/0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"


@pytest.mark.parametrize(
    "params, problem",
    [
        ({"alias": ""}, "alias: 1 to 100"),
        ({"alias": "x" * 101}, "alias: 1 to 100"),
        ({"alias": " obs"}, "AWS strips"),
        ({"alias": "obs", "kms_key_arn": "arn:aws:kms:us-east-1:111122223333:alias/obs"}, "not a KMS key ARN"),
        ({"alias": "obs", "tags": {"aws:team": "a"}}, "must not begin with aws:"),
        ({"alias": "obs", "tags": {"bad!": "a"}}, "key 'bad!'"),
        ({"alias": "obs", "tags": {"team": "a;b"}}, "value of 'team'"),
        ({"alias": "obs", "tags": {"k%d" % i: "v" for i in range(51)}}, "at most 50 tags"),
    ],
)
def test_input_problems_catch_what_aws_rejects(params, problem):
    problems = amp.input_problems(dict(params, state="present"))
    assert any(problem in p for p in problems), problems


@pytest.mark.parametrize(
    "params",
    [
        {"alias": "hyperpod-observability", "kms_key_arn": KEY, "tags": {"managed-by": "hyperpod.tenancy", "équipe": "vision 1", "empty": ""}},
        {"alias": "x" * 100},
        # Settings are not checked when the workspace is to be deleted.
        {"alias": "obs", "state": "absent", "kms_key_arn": "nonsense", "tags": {"aws:x": "y"}},
    ],
)
def test_input_problems_accept_what_aws_accepts(params):
    assert amp.input_problems(dict({"state": "present"}, **params)) == []


def test_matching_keeps_exact_aliases_only():
    listed = [{"alias": "obs", "workspaceId": "ws-1"}, {"alias": "obs-staging", "workspaceId": "ws-2"}, {"workspaceId": "ws-3"}]
    assert [w["workspaceId"] for w in amp.matching(listed, "obs")] == ["ws-1"]
    assert amp.matching(listed, "ob") == []


def test_the_live_workspaces_of_an_alias_are_those_not_being_deleted(monkeypatch):
    listed = [
        {"alias": "obs", "workspaceId": "ws-1", "status": {"statusCode": "ACTIVE"}},
        {"alias": "obs", "workspaceId": "ws-2", "status": {"statusCode": "DELETING"}},
        {"alias": "obs-staging", "workspaceId": "ws-3", "status": {"statusCode": "ACTIVE"}},
    ]
    asked = []
    monkeypatch.setattr(amp, "list_workspaces", lambda client, alias: asked.append(alias) or listed)
    assert amp.live_workspace_ids(None, alias="obs") == ["ws-1"]
    # An ID given is the workspace, without a read; with neither, there is none.
    assert amp.live_workspace_ids(None, "ws-9", "obs") == ["ws-9"] and amp.live_workspace_ids(None) == []
    assert asked == ["obs"]


def test_result_and_settings_flatten_the_status_and_keep_tag_keys():
    described = {
        "workspaceId": "ws-1", "alias": "obs", "arn": "arn:aws:aps:us-east-1:111122223333:workspace/ws-1",
        "status": {"statusCode": "ACTIVE"}, "prometheusEndpoint": "https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-1/",
        "tags": {"managedBy": "me"}, "ResponseMetadata": {},
    }
    flat = amp.flatten(described)
    assert flat["status"] == "ACTIVE" and "ResponseMetadata" not in flat
    returned = amp.result(flat)
    assert returned["workspace_id"] == "ws-1"
    assert returned["prometheus_endpoint"].endswith("/workspaces/ws-1/")
    assert returned["tags"] == {"managedBy": "me"}
    assert amp.settings(flat) == {"alias": "obs", "kms_key_arn": None, "tags": {"managedBy": "me"}}
    assert amp.settings(None) == {} and amp.result(None) == {}
