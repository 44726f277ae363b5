"""team_resources: every layer's options checked before any layer runs; layers in build order, wired, reported on failure."""

from __future__ import annotations

import threading

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import budget, team_resources
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError, InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import LayerContext
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_resources import converge_team, failure_message, validated_layers

QUOTA = {"cluster": "ml-shared", "resources": [{"instance_type": "ml.p5.48xlarge", "count": 1}]}


def test_each_layer_gets_the_team_and_its_modules_defaults():
    layers = validated_layers("vision", {"quota": QUOTA, "budget": {"monthly_usd": 100}, "domain": None}, set())
    assert [option for option, _converge, _params in layers] == ["quota", "budget"]
    quota = layers[0][2]
    assert quota["team"] == "vision" and quota["state"] == "present" and quota["wait_timeout"] == 900
    assert layers[1][2]["thresholds"] == [80, 100]


def test_a_layer_given_a_name_is_not_given_the_team_it_excludes():
    given = {"permission_set": {"name": "hyperpod-vision", "instance_arn": "arn:aws:sso:::instance/ssoins-0123456789abcdef"}}
    (_option, _converge, params), = validated_layers("vision", given, set())
    assert params["team"] is None and params["name"] == "hyperpod-vision"


def test_an_access_entry_given_its_principal_still_names_the_team_whose_entry_it_is():
    given = {"access_entry": {"cluster_name": "eks", "principal_arn": "arn:aws:iam::123456789012:role/x"}}
    (_option, _converge, params), = validated_layers("vision", given, set())
    assert params["team"] == "vision" and params["principal_arn"].endswith("role/x")


def test_every_problem_is_named_with_team_layer_and_option_before_anything_runs():
    given = {
        "quota": {"cluster": "ml-shared", "resources": [{"count": 1}], "sharing": "always"},
        "budget": {"monthly_usd": "lots"},
        "s3_prefix": {"bucket": "b", "state": "absent"},
        "execution_role": {"team": "nlp"},
    }
    with pytest.raises(InputError) as raised:
        validated_layers("vision", given, set())
    message = raised.value.message
    assert message.startswith("team 'vision': ")
    assert "quota (options of task_governance_quota): " in message and "instance_type" in message and "sharing" in message
    assert "budget (options of team_budget): " in message and "monthly_usd" in message
    assert "s3_prefix: team_resources only builds and converges" in message
    assert "execution_role: team is 'nlp', not the team being converged ('vision')" in message


def test_an_unknown_option_in_a_layer_is_refused():
    with pytest.raises(InputError, match=r"budget \(options of team_budget\): unsupported parameters monthly\. Supported parameters include: account_id"):
        validated_layers("vision", {"budget": {"monthly": 100}}, set())


class Context:
    layer = None


def test_layers_run_in_order_the_domain_runs_as_the_role_just_converged_and_the_diff_names_the_layer():
    seen = []

    def role(context, params):
        seen.append("execution_role")
        return {"changed": True, "role": {"arn": "arn:aws:iam::123456789012:role/r"}, "diff": {"before": {}, "after": {"arn": "r"}}}

    def domain(context, params):
        seen.append(("domain", params["execution_role"]))
        return {"changed": False, "domain": {}, "diff": {"before": {"a": 1}, "after": {"a": 1}}}

    done, diff = {}, {"before": {}, "after": {}}
    converge_team(Context(), [("execution_role", role, {}), ("domain", domain, {"execution_role": None})], done, diff)
    assert seen == ["execution_role", ("domain", "arn:aws:iam::123456789012:role/r")]
    assert diff == {"before": {"execution_role": {}, "domain": {"a": 1}}, "after": {"execution_role": {"arn": "r"}, "domain": {"a": 1}}}
    assert done == {"execution_role": {"changed": True, "role": {"arn": "arn:aws:iam::123456789012:role/r"}}, "domain": {"changed": False, "domain": {}}}


def test_a_failing_layer_leaves_what_ran_before_it_in_done():
    def quota(context, params):
        return {"changed": True, "quota": {"status": "Created"}, "diff": {}}

    def budget(context, params):
        raise HyperPodError(message="Failed to describe the budget")

    layers, done, diff = [("quota", quota, {}), ("budget", budget, {})], {}, {"before": {}, "after": {}}
    with pytest.raises(HyperPodError) as raised:
        converge_team(Context(), layers, done, diff)
    assert done == {"quota": {"changed": True, "quota": {"status": "Created"}}}
    assert diff == {"before": {"quota": None}, "after": {"quota": None}}
    assert failure_message("vision", layers, done, raised.value) == "team 'vision', budget: Failed to describe the budget"


def test_a_file_system_error_names_the_layer_and_its_root():
    layers = [("directories", None, {"root": "/fsx"})]
    error = OSError(13, "Permission denied")
    assert failure_message("vision", layers, {}, error) == "team 'vision', directories: /fsx: Permission denied"


def test_refused_input_is_reported_without_a_layer():
    assert failure_message("vision", [], {}, InputError(message="team 'vision': budget: bad")) == "team 'vision': budget: bad"


def test_what_each_layer_refuses_without_a_call_is_found_before_any_layer_runs():
    given = {
        "quota": QUOTA,
        "budget": {"monthly_usd": 100, "notify": ["not-an-address"], "thresholds": [150]},
        "directories": {"root": "/fsx", "gid": 2000, "mode": "rwx", "members": []},
        "execution_role": {"data_bucket": "Not A Bucket"},
    }
    with pytest.raises(InputError) as raised:
        validated_layers("vision", given, set())
    message = raised.value.message
    assert "budget: " in message and "not-an-address" in message
    assert "directories: mode 'rwx' must be an octal mode" in message
    assert "execution_role: " in message and "Not A Bucket" in message
    assert "quota" not in message


def test_a_warning_names_the_layer_that_gave_it():
    warned = []

    class Module:
        check_mode = False

        def warn(self, message):
            warned.append(message)

    context = LayerContext(Module())

    def prefix(context, params):
        context.warn("3 objects were kept")
        return {"changed": False, "diff": {}}

    converge_team(context, [("s3_prefix", prefix, {})], {}, {"before": {}, "after": {}})
    context.warn("after the layers")
    assert warned == ["s3_prefix: 3 objects were kept", "after the layers"]


class PlanModule:
    """What LayerContext takes from a module; no client can be made, so a layer that reads fails the test."""

    def __init__(self, check_mode=False):
        self.check_mode = check_mode
        self.no_log_values = set()
        self.warnings = []

    def warn(self, message):
        self.warnings.append(message)


def budget_layer(monkeypatch, converged, changed=False, fail=(), barrier=None):
    """Only the budget layer, whose converge records (team, check mode) instead of calling AWS."""

    def converge_budget(context, params):
        if barrier is not None:
            barrier.wait()
        if params["team"] in fail:
            raise KeyError("a bug in the layer")
        converged.append((params["team"], context.check_mode))
        context.warn("read the budget")
        return {"changed": changed, "budget": {"budget_name": params["team"]}, "diff": {"before": {}, "after": {"limit": params["monthly_usd"]}}}

    layer = team_resources.Layer("budget", "team_budget", budget.MODULE_OPTIONS, budget.check, converge_budget)
    monkeypatch.setattr(team_resources, "LAYERS", (layer,))


def teams(*names, monthly_usd=100):
    return [{"team": name, "budget": {"monthly_usd": monthly_usd}} for name in names]


def test_a_team_whose_plan_changes_nothing_takes_it_and_converges_nothing_again(monkeypatch):
    converged = []
    budget_layer(monkeypatch, converged)
    planned = team_resources.plan(LayerContext(PlanModule()), teams("vision", "nlp"))
    assert sorted(converged) == [("nlp", True), ("vision", True)]  # the plan is a check: it writes nothing
    module = PlanModule()
    result = team_resources.converge(LayerContext(module), dict(teams("vision")[0], planned=planned["vision"]))
    assert len(converged) == 2
    assert result == planned["vision"]["result"] and result["layers"]["budget"]["budget"] == {"budget_name": "vision"}
    assert module.warnings == ["budget: read the budget"]


def test_a_planned_change_is_converged_from_its_own_reads_but_check_mode_takes_the_plan(monkeypatch):
    converged = []
    budget_layer(monkeypatch, converged, changed=True)
    planned = team_resources.plan(LayerContext(PlanModule()), teams("vision"))["vision"]
    team_resources.converge(LayerContext(PlanModule(check_mode=True)), dict(teams("vision")[0], planned=planned))
    assert converged == [("vision", True)]
    team_resources.converge(LayerContext(PlanModule()), dict(teams("vision")[0], planned=planned))
    assert converged == [("vision", True), ("vision", False)]


def test_a_plan_of_other_options_is_not_taken_but_a_default_given_or_left_unset_is_the_same(monkeypatch):
    converged = []
    budget_layer(monkeypatch, converged)
    planned = team_resources.plan(LayerContext(PlanModule()), teams("vision"))["vision"]
    team_resources.converge(LayerContext(PlanModule()), dict(teams("vision", monthly_usd=200)[0], planned=planned))
    assert converged[-1] == ("vision", False)
    defaults_given = {"team": "vision", "budget": {"monthly_usd": 100, "thresholds": [80, 100]}, "planned": planned}
    team_resources.converge(LayerContext(PlanModule()), defaults_given)
    assert len(converged) == 2


def test_the_plan_converges_teams_at_once(monkeypatch):
    # Sequential teams would leave the barrier waiting for the others and break it: every team would be failed.
    barrier = threading.Barrier(team_resources.TEAMS_IN_FLIGHT, timeout=10)
    converged = []
    budget_layer(monkeypatch, converged, barrier=barrier)
    names = ["team%d" % n for n in range(team_resources.TEAMS_IN_FLIGHT)]
    planned = team_resources.plan(LayerContext(PlanModule()), teams(*names))
    assert all("result" in planned[name] for name in names)


def test_a_team_that_fails_in_the_plan_converges_on_its_own_and_fails_there_alone(monkeypatch):
    converged = []
    budget_layer(monkeypatch, converged, fail=("nlp",))
    planned = team_resources.plan(LayerContext(PlanModule()), teams("vision", "nlp"))
    assert planned["nlp"] == {"failed": True} and "result" in planned["vision"]
    with pytest.raises(KeyError):
        team_resources.converge(LayerContext(PlanModule()), dict(teams("nlp")[0], planned=planned["nlp"]))
