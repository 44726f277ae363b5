"""team_resources: every layer's options checked before any layer runs; layers in build order, wired, reported on failure."""

from __future__ import annotations

import threading
import time

import pytest
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible_collections.hyperpod.tenancy.plugins.module_utils import budget as budget_layer
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import CostError, HyperPodError, InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import LayerContext
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_resources import converge_team, failure_message, validated_layers
from botocore.exceptions import ClientError

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


def test_what_shared_info_read_reaches_a_layer_as_its_known_which_the_layers_own_module_does_not_take():
    budget = {"monthly_usd": 100, "known": {"budget": {"budget": None}}}
    (_option, _converge, params), = validated_layers("vision", {"budget": budget}, set())
    assert params["known"] == {"budget": {"budget": None, "notifications": [], "tags": None}}
    # A key the layer does not take, or of the wrong type, is refused with the others.
    with pytest.raises(InputError) as raised:
        validated_layers("vision", {"budget": dict(budget, known={"marker": {}}), "quota": dict(QUOTA, known={"listing": "q-1"})}, set())
    assert "budget (options of team_budget): " in raised.value.message and "marker. Supported parameters include: budget" in raised.value.message
    assert "quota (options of task_governance_quota): argument 'listing' is of type str found in 'known'" in raised.value.message
    # The module itself has no such option: a user calling team_budget cannot hand it a copy.
    checked = ArgumentSpecValidator(**budget_layer.MODULE_OPTIONS).validate(dict(budget, team="vision"))
    assert [str(error).split(".", maxsplit=1)[0] for error in checked.errors] == ["known"]


class Context:
    layer = None

    def __init__(self, check_mode=False):
        self.check_mode = check_mode
        self.warned = []

    def warn(self, message):
        self.warned.append(message)


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


class WarnedModule:
    """What a LayerContext takes from its module, its warnings recorded."""

    check_mode = False

    def __init__(self):
        self.warned = []

    def warn(self, message):
        self.warned.append(message)


def test_a_warning_names_the_layer_that_gave_it():
    module = WarnedModule()
    context = LayerContext(module)

    def prefix(context, params):
        context.warn("3 objects were kept")
        return {"changed": False, "diff": {}}

    converge_team(context, [("s3_prefix", prefix, {})], {}, {"before": {}, "after": {}})
    context.warn("after the layers")
    assert module.warned == ["s3_prefix: 3 objects were kept", "after the layers"]


def test_independent_layers_converge_together_and_report_in_build_order():
    """The permission set, the execution role, the quota and the budget need no other layer: each waits at a barrier
    that opens only when all four are in flight, which one after another would never reach."""
    together = threading.Barrier(4, timeout=10)

    def layer(name):
        def converge(context, params):
            together.wait()
            return {"changed": False, name: {}, "diff": {"before": name, "after": name}}

        return converge

    layers = [(option, layer(option), {}) for option in ("permission_set", "execution_role", "quota", "budget")]
    done, diff = {}, {"before": {}, "after": {}}
    converge_team(Context(), list(reversed(layers)), done, diff)
    assert list(done) == list(diff["before"]) == ["budget", "quota", "execution_role", "permission_set"]


def test_a_layer_waits_for_the_one_it_needs_and_does_not_run_when_that_one_failed():
    ran, execution_role_done = [], threading.Event()

    def permission_set(context, params):
        ran.append("permission_set")
        raise HyperPodError(message="Failed to describe the permission set")

    def access_entry(context, params):
        ran.append("access_entry")
        return {"changed": False, "diff": {}}

    def execution_role(context, params):
        time.sleep(0.2)  # the domain must wait for it, however long it takes
        execution_role_done.set()
        return {"changed": False, "role": {"arn": "arn:aws:iam::123456789012:role/r"}, "diff": {}}

    def domain(context, params):
        assert execution_role_done.is_set()
        ran.append(("domain", params["execution_role"]))
        return {"changed": False, "domain": {}, "diff": {}}

    def budget(context, params):
        raise HyperPodError(message="Failed to describe the budget")

    layers = [
        ("permission_set", permission_set, {}), ("access_entry", access_entry, {}), ("execution_role", execution_role, {}),
        ("domain", domain, {"execution_role": None}), ("budget", budget, {}),
    ]  # fmt: skip
    done, diff = {}, {"before": {}, "after": {}}
    with pytest.raises(HyperPodError) as raised:
        converge_team(Context(), layers, done, diff)
    # The first failure in build order is the one raised; what needs it did not run; the rest converged.
    assert raised.value.message == "Failed to describe the permission set"
    assert "access_entry" not in ran and ("domain", "arn:aws:iam::123456789012:role/r") in ran
    assert list(done) == ["execution_role", "domain"]
    assert failure_message("vision", layers, done, raised.value) == "team 'vision', permission_set: Failed to describe the permission set"


def test_warnings_of_layers_in_flight_together_name_each_its_own_layer():
    module = WarnedModule()
    together = threading.Barrier(2, timeout=10)

    def layer(context, params):
        together.wait()
        context.warn("kept")
        together.wait()
        return {"changed": False, "diff": {}}

    converge_team(LayerContext(module), [("s3_prefix", layer, {}), ("budget", layer, {})], {}, {"before": {}, "after": {}})
    assert sorted(module.warned) == ["budget: kept", "s3_prefix: kept"]


def test_a_layer_whose_create_another_run_beat_converges_again_without_the_run_wide_copy():
    module, given = WarnedModule(), []

    def budget(context, params):
        given.append(params["known"])
        if len(given) == 1:
            raise CostError(
                message="Failed to create the budget",
                exception=ClientError({"Error": {"Code": "DuplicateRecordException", "Message": "exists"}}, "CreateBudget"),
            )
        return {"changed": False, "diff": {}}

    done = {}
    converge_team(LayerContext(module), [("budget", budget, {"known": {"budget": {"budget": None}}})], done, {"before": {}, "after": {}})
    assert given == [{"budget": {"budget": None}}, None] and done == {"budget": {"changed": False}}
    assert module.warned == [
        "budget: another run wrote what this run was writing (Failed to create the budget: DuplicateRecordException); converging from what it made"
    ]


def test_a_team_shared_info_refused_fails_naming_it_before_any_layer_runs(monkeypatch):
    """Threat model (issue 36, cases 4 and 5): the team's team_resources fails with shared_info's reasons, no layer run."""
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import team_layer_args
    from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import ModuleFailure
    from ansible_collections.hyperpod.tenancy.plugins.modules import team_resources

    monkeypatch.setattr(team_resources, "converge_team", lambda *args: pytest.fail("a layer ran"))
    reasons = ["its name research is that of retired team research (...)"]
    shared = {"team_problems": {"research": reasons}, "data_bucket": "data", "name_prefix": "hyperpod"}
    options = team_layer_args.team_layer_args({"name": "research", "identity_center_group": "TeamResearch"}, shared, layers=["s3_prefix"])
    assert options["refused"] == reasons
    assert "refused" not in team_layer_args.team_layer_args({"name": "vision", "identity_center_group": "TeamVision"}, shared, layers=["s3_prefix"])
    params = dict(dict.fromkeys(team_resources.MODULE_OPTIONS["argument_spec"]), **options)
    with pytest.raises(ModuleFailure) as failed:
        team_resources.converge(None, params)
    assert failed.value.message == "team 'research' is refused, nothing of it was changed: " + reasons[0]
    assert failed.value.result == {"problems": ["team 'research': " + reasons[0]], "layers": {}, "changed": False}


def test_a_domain_made_in_the_run_gets_the_execution_roles_studio_policy_in_the_same_run():
    """Issue 39: the role's team-studio policy names the domain's id, which exists only once the domain does."""
    seen = []
    domain_arn = "arn:aws:sagemaker:us-east-1:123456789012:domain/d-vision00000a"

    def role(context, params):
        seen.append(("execution_role", params.get("domain_arn"), params.get("known")))
        studio = {"domain": params["domain_arn"]} if params.get("domain_arn") else None
        return {"changed": bool(studio) or not seen[:-1], "role": {"arn": "arn:aws:iam::123456789012:role/r", "studio_policy": studio}, "diff": {}}

    def domain(context, params):
        seen.append("domain")
        return {"changed": True, "domain": {"domain_arn": domain_arn}, "diff": {}}

    done, diff = {}, {"before": {}, "after": {}}
    given = {"known": {"role": {"role": {"RoleName": "r"}}}}
    converge_team(Context(), [("execution_role", role, given), ("domain", domain, {"execution_role": None})], done, diff)
    # Again after the domain, with its ARN, reading the role the first pass wrote (not shared_info's copy).
    assert seen == [("execution_role", None, {"role": {"role": {"RoleName": "r"}}}), "domain", ("execution_role", domain_arn, None)]
    assert done["execution_role"]["changed"] and done["execution_role"]["role"]["studio_policy"] == {"domain": domain_arn}
    # A domain shared_info found: the role had its ARN from the start, and converges once.
    seen[:] = []
    layers = [("execution_role", role, {"domain_arn": domain_arn}), ("domain", domain, {"execution_role": None})]
    converge_team(Context(), layers, {}, {"before": {}, "after": {}})
    assert seen == [("execution_role", domain_arn, None), "domain"]


def test_a_dry_run_that_would_make_the_domain_says_the_studio_policy_follows_it():
    """Issue 39: a dry run cannot name the id AWS gives a new domain, so its prediction of the role has no team-studio
    policy; it says so rather than show less than the run will write."""
    seen = []

    def role(context, params):
        seen.append("execution_role")
        return {"changed": True, "role": {"arn": "arn:aws:iam::123456789012:role/r", "studio_policy": None}, "diff": {}}

    def domain(context, params):
        return {"changed": True, "domain": {"domain_id": None}, "diff": {}}

    dry = Context(check_mode=True)
    converge_team(dry, [("execution_role", role, {"team": "vision"}), ("domain", domain, {"execution_role": None})], {}, {"before": {}, "after": {}})
    assert seen == ["execution_role"]
    assert dry.warned == [
        "team vision: the execution role's team-studio policy, which names the team's domain, is written once the domain exists; this dry run does not show it"
    ]
    # Nothing to say when the domain is not new (its ARN came with shared_info's read), nor outside a dry run.
    for context, changed in ((Context(check_mode=True), False), (Context(), True)):
        def quiet_domain(context, params, changed=changed):
            return {"changed": changed, "domain": {}, "diff": {}}
        layers = [("execution_role", role, {"team": "vision"}), ("domain", quiet_domain, {"execution_role": None})]
        converge_team(context, layers, {}, {"before": {}, "after": {}})
        assert context.warned == []


def test_every_key_a_layers_known_takes_is_documented_with_its_layer():
    import yaml
    from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_resources import LAYERS
    from ansible_collections.hyperpod.tenancy.plugins.modules import team_resources

    text = next(line for line in yaml.safe_load(team_resources.DOCUMENTATION)["description"] if line.startswith("A layer's options may also hold C(known)"))
    by_layer = text.split("Its keys, by layer: ", 1)[1]
    undocumented = []
    for layer in LAYERS:
        named = by_layer.split("O(%s)" % layer.option, 1)[1].split(";", 1)[0] if "O(%s)" % layer.option in by_layer else ""
        undocumented.extend("%s: %s" % (layer.option, key) for key in layer.known if "C(%s)" % key not in named)
    assert undocumented == []
