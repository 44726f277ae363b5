"""validate_team_file: every problem of the team file once, the team model's where the file has it, and the layers' own."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_model import check_team_file_with_places, without_refused
from ansible_collections.hyperpod.tenancy.plugins.modules.validate_team_file import PLACEHOLDER_SHARED, layer_problems

ROOT = Path(__file__).resolve().parents[4]
TEAMS = yaml.safe_load((ROOT / "teams/teams.yml").read_text())["hyperpod_teams"]
CLUSTER = yaml.safe_load((ROOT / "group_vars/all/cluster.yml").read_text())["hyperpod_cluster"]
SHARED = dict(PLACEHOLDER_SHARED, name_prefix="hyperpod", tag_keys={}, data_bucket="placeholder-bucket")


def problems_of(change):
    teams = copy.deepcopy(TEAMS)
    change(teams[0])
    model, normalized, _capacity, places = check_team_file_with_places(teams, CLUSTER, "hyperpod")
    return model, [message for _index, message in layer_problems(normalized, places, SHARED)]


def set_in(section, key, value):
    return lambda team: team[section].__setitem__(key, value)


# Values both the team model and a layer's check refuse: each is reported once, by the team model.
REFUSED_BY_BOTH = [
    ("a tag value over 256 characters", lambda team: team.__setitem__("tags", {"x": "v" * 300}), "tags.x"),
    ("an aws: tag key", lambda team: team.__setitem__("tags", {"aws:x": "v"}), "tags.aws:x"),
    ("a cost center with a comma", lambda team: team.__setitem__("cost_center", "a,b"), "cost_center"),
    ("a world-writable mode", set_in("storage", "mode", "0777"), "storage.mode"),
    ("a negative budget", set_in("budget", "monthly_usd", -5), "budget.monthly_usd"),
    ("a borrow limit over 500", set_in("quota", "borrow_limit", 900), "quota.borrow_limit"),
    ("a fair-share weight over 100", set_in("quota", "fair_share_weight", 1000), "quota.fair_share_weight"),
    ("a member name SageMaker refuses", lambda team: team["members"].append({"name": "bad name!", "uid": 10077}), "members[3].name"),
]


@pytest.mark.parametrize("label, change, field", REFUSED_BY_BOTH, ids=[case[0] for case in REFUSED_BY_BOTH])
def test_a_value_both_refuse_is_reported_once_by_the_team_model(label, change, field):
    model, layers = problems_of(change)
    assert [p for p in model if p.startswith("team 'vision': %s: " % field)], model
    assert layers == []


@pytest.mark.parametrize("label, change, field", REFUSED_BY_BOTH, ids=[case[0] for case in REFUSED_BY_BOTH])
def test_the_layers_would_repeat_it_without_the_rule(label, change, field):
    """The layers' checks do refuse these values: left in, each would be reported a second time."""
    teams = copy.deepcopy(TEAMS)
    change(teams[0])
    normalized = check_team_file_with_places(teams, CLUSTER, "hyperpod")[1]
    assert [index for index, _message in layer_problems(normalized, [], SHARED)] == [0]


def test_what_only_a_layer_finds_is_still_reported_with_the_team_models_problems():
    def change(team):
        team["storage"]["mode"] = "0777"
        team["description"] = "d" * 2000  # the compute quota takes at most 1024 characters; the team model does not check it

    model, layers = problems_of(change)
    assert len(model) == 1 and "storage.mode" in model[0]
    assert len(layers) == 1 and "description: longer than 1024 characters" in layers[0] and "0777" not in layers[0]


def test_without_refused_leaves_out_what_was_refused_and_keeps_the_rest():
    team = check_team_file_with_places(copy.deepcopy(TEAMS), CLUSTER, "hyperpod")[1][0]
    team["tags"] = {"keep": "1", "x": "v" * 300}
    reset = without_refused(team, ["tags.x", "storage.mode", "budget.monthly_usd", "members[1].name"])
    assert reset["tags"] == {"keep": "1"}
    assert reset["storage"]["mode"] == "2770" and reset["storage"]["gid"] == team["storage"]["gid"]
    assert reset["budget"] is None
    assert [m["name"] for m in reset["members"]] == [m["name"] for i, m in enumerate(team["members"]) if i != 1]
    assert without_refused(team, ["name"]) is None
    assert team["tags"] == {"keep": "1", "x": "v" * 300}, "the team itself is left as it was"


def test_the_module_and_the_action_check_with_one_spec_and_one_path():
    """The action plugin validates its arguments with the module's MODULE_OPTIONS and runs the module's ``validated``:
    the module run without the action (its converge) reports what a play reports, the layers' problems included."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
    from ansible.playbook.task import Task
    from ansible.template import Templar
    from ansible_collections.hyperpod.tenancy.plugins.action.validate_team_file import ActionModule
    from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import ModuleFailure
    from ansible_collections.hyperpod.tenancy.plugins.modules import validate_team_file

    teams = copy.deepcopy(TEAMS)
    teams[0]["storage"]["mode"] = "0777"
    teams[0]["description"] = "d" * 2000
    args = dict(teams=teams, cluster=CLUSTER, team="vision")
    task = Task()
    task.args = args
    from unittest import mock

    connection = mock.Mock()
    connection._shell.tmpdir = "/tmp"
    action = ActionModule(task, connection=connection, play_context=None, loader=None, templar=Templar(loader=None), shared_loader_obj=None)
    answer = action.run(task_vars={})
    assert answer["failed"] and len(answer["problems"]) == 2
    p = ArgumentSpecValidator(**validate_team_file.MODULE_OPTIONS).validate(args).validated_parameters
    with pytest.raises(ModuleFailure) as failed:
        validate_team_file.converge(None, p)
    assert failed.value.result["problems"] == answer["problems"] and failed.value.message == answer["msg"]
    assert "description: longer than 1024 characters" in answer["problems"][1]
