from __future__ import annotations

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import drift


@pytest.mark.parametrize(
    "diff, fields",
    [
        ({"before": {"quota": {"count": 4, "sharing": "lend"}}, "after": {"quota": {"count": 5, "sharing": "lend"}}}, ["quota.count"]),
        ({"before": {"a": 1, "b": [1, 2]}, "after": {"a": 2, "b": [1, 3]}}, ["a", "b.1"]),
        ({"before": {}, "after": {"name": "vision"}}, ["name"]),
        ({"before": "old\n", "after": "new\n"}, ["(whole resource)"]),
        ([{"before": {"x": 1}, "after": {"x": 2}}, {"before": {"y": 1}, "after": {"y": 3}}], ["x", "y"]),
        ({}, ["(whole resource)"]),
    ],
)
def test_fields_of_a_diff(diff, fields):
    assert drift.fields_of(diff) == fields


def test_record_groups_changes_by_team(monkeypatch):
    monkeypatch.setattr(drift, "RECORDED", {})
    drift.record("vision", "Ensure quota", "hyperpod.tenancy.task_governance_quota", {"before": {"count": 4}, "after": {"count": 5}})
    drift.record("nlp", "Ensure domain", "hyperpod.tenancy.sagemaker_domain", {"before": {"a": 1}, "after": {"a": 1, "b": 2}})
    assert drift.summary() == {
        "nlp": [{"task": "Ensure domain", "module": "hyperpod.tenancy.sagemaker_domain", "fields": ["b"]}],
        "vision": [{"task": "Ensure quota", "module": "hyperpod.tenancy.task_governance_quota", "fields": ["count"]}],
    }


def test_a_team_resources_run_is_recorded_per_layer_that_changed(monkeypatch):
    monkeypatch.setattr(drift, "RECORDED", {})
    result = {
        "changed": True,
        "layers": {"quota": {"changed": True}, "budget": {"changed": False}, "access_entry": {"changed": True}},
        "diff": {
            "before": {"quota": {"description": "old", "count": 1}, "budget": {"limit": 1}, "access_entry": {}},
            "after": {"quota": {"description": "new", "count": 1}, "budget": {"limit": 1}, "access_entry": {"groups": ["g"]}},
        },
    }
    drift.record_result("vision", "Converge", "hyperpod.tenancy.team_resources", result)
    assert drift.summary() == {"vision": [
        {"task": "Converge (quota)", "module": "hyperpod.tenancy.task_governance_quota", "fields": ["description"]},
        {"task": "Converge (access_entry)", "module": "hyperpod.tenancy.eks_access_entry", "fields": ["groups"]},
    ]}
    drift.record_result("nlp", "Tag", "amazon.aws.s3_object", {"changed": True, "diff": {"before": {"a": 1}, "after": {"a": 2}}})
    assert drift.summary()["nlp"] == [{"task": "Tag", "module": "amazon.aws.s3_object", "fields": ["a"]}]


class _Task:
    action = "hyperpod.tenancy.team_resources"

    def get_name(self):
        return "Converge"


class _Host:
    def get_vars(self):
        return {"hyperpod_team_name": "vision"}

    def get_name(self):
        return "team_vision"


class _Result:
    """What a callback is given (ansible-core's CallbackTaskResult): its public result, task and host."""

    def __init__(self, result):
        self.result, self.task, self.host = result, _Task(), _Host()


@pytest.mark.parametrize("failed_result, recorded", [
    # A later layer failed: the layers before it still drifted.
    ({"failed": True, "changed": True, "layers": {"quota": {"changed": True}},
      "diff": {"before": {"quota": {"a": 1}}, "after": {"quota": {"a": 2}}}}, ["Converge (quota)"]),
    # Refused before any layer ran: nothing drifted.
    ({"failed": True, "changed": False, "layers": {}}, []),
    # A failure of a task that is not a team run records nothing.
    ({"failed": True, "changed": True, "diff": {"before": {"a": 1}, "after": {"a": 2}}}, []),
])
def test_the_callback_records_the_layers_a_failed_team_run_changed(monkeypatch, failed_result, recorded):
    from ansible_collections.hyperpod.tenancy.plugins.callback.drift import CallbackModule

    monkeypatch.setattr(drift, "RECORDED", {})
    callback = CallbackModule()
    callback._recording = True
    callback.v2_runner_on_failed(_Result(failed_result))
    assert [change["task"] for change in drift.summary().get("vision", [])] == recorded
