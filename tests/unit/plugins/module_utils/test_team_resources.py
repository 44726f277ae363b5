"""team_resources: every layer's options checked before any layer runs; layers in build order, wired, reported on failure."""

from __future__ import annotations

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError, InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_resources import converge_team, validated_layers

QUOTA = {"cluster": "ml-shared", "resources": [{"instance_type": "ml.p5.48xlarge", "count": 1}]}


def test_each_layer_gets_the_team_and_its_modules_defaults():
    layers = validated_layers("vision", {"quota": QUOTA, "budget": {"monthly_usd": 100}, "domain": None}, set())
    assert [option for option, _converge, _params in layers] == ["quota", "budget"]
    quota = layers[0][2]
    assert quota["team"] == "vision" and quota["state"] == "present" and quota["wait_timeout"] == 900
    assert layers[1][2]["thresholds"] == [80, 100]


def test_a_layer_given_a_principal_is_not_given_the_team_it_excludes():
    given = {"access_entry": {"cluster_name": "eks", "principal_arn": "arn:aws:iam::123456789012:role/x"}}
    (_option, _converge, params), = validated_layers("vision", given, set())
    assert params["team"] is None and params["principal_arn"].endswith("role/x")


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


def test_layers_run_in_order_the_domain_runs_as_the_role_just_converged_and_the_diff_names_the_layer():
    seen = []

    def role(context, params):
        seen.append("execution_role")
        return {"changed": True, "role": {"arn": "arn:aws:iam::123456789012:role/r"}, "diff": {"before": {}, "after": {"arn": "r"}}}

    def domain(context, params):
        seen.append(("domain", params["execution_role"]))
        return {"changed": False, "domain": {}, "diff": {"before": {"a": 1}, "after": {"a": 1}}}

    done = {}
    changed, diff = converge_team(None, "vision", [("execution_role", role, {}), ("domain", domain, {"execution_role": None})], done)
    assert seen == ["execution_role", ("domain", "arn:aws:iam::123456789012:role/r")]
    assert changed is True
    assert diff == {"before": {"execution_role": {}, "domain": {"a": 1}}, "after": {"execution_role": {"arn": "r"}, "domain": {"a": 1}}}
    assert done == {"execution_role": {"changed": True, "role": {"arn": "arn:aws:iam::123456789012:role/r"}}, "domain": {"changed": False, "domain": {}}}


def test_a_failing_layer_leaves_what_ran_before_it_in_done():
    def quota(context, params):
        return {"changed": True, "quota": {"status": "Created"}, "diff": {}}

    def budget(context, params):
        raise HyperPodError(message="Failed to describe the budget")

    done = {}
    with pytest.raises(HyperPodError):
        converge_team(None, "vision", [("quota", quota, {}), ("budget", budget, {})], done)
    assert done == {"quota": {"changed": True, "quota": {"status": "Created"}}}
