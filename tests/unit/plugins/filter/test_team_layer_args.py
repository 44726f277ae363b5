"""team_layer_args: the team file, as normalized, to the options of every layer's module."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible_collections.hyperpod.tenancy.plugins.filter.team import team_layer_args, team_summary
from ansible_collections.hyperpod.tenancy.plugins.module_utils import quota
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_model import check_team_file
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_resources import LAYERS, with_known

ROOT = Path(__file__).resolve().parents[4]
SAMPLE = yaml.safe_load((ROOT / "teams/teams.yml").read_text())["hyperpod_teams"]
CLUSTER_ARN = "arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdef123456"
SHARED = {
    "account_id": "123456789012",
    "region": "us-east-1",
    "cluster_name": "ml-shared",
    "cluster_arn": CLUSTER_ARN,
    "cluster_capacity": {"ml.p5.48xlarge": 16, "ml.g5.12xlarge": 8},
    "domain_ids": {"hyperpod-vision": "d-vision123456"},
    "user_profiles": {"d-vision123456": [{"DomainId": "d-vision123456", "UserProfileName": "alice", "Status": "InService"}]},
    "eks_cluster_name": "ml-shared-eks",
    "eks_cluster_arn": "arn:aws:eks:us-east-1:123456789012:cluster/ml-shared-eks",
    "identity_center_instance_arn": "arn:aws:sso:::instance/ssoins-0123456789abcdef",
    "identity_store_id": "d-0123456789",
    "identity_center_group_ids": {"TeamVision": "g-vision", "TeamNLP": "g-nlp"},
    "permission_sets": {
        "hyperpod-vision": {
            "permission_set_arn": "arn:aws:sso:::permissionSet/ssoins-0123456789abcdef/ps-vision",
            "name": "hyperpod-vision",
            "description": "Team vision",
            "session_duration": "PT8H",
            "relay_state": None,
        }
    },
    "sso_role_arns": {"hyperpod-vision": "arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_hyperpod-vision_0123"},
    "budgets": {"hyperpod-vision-monthly": {"budget": None, "notifications": []}},
    "outdated_permission_sets": {"123456789012": ["arn:aws:sso:::permissionSet/ssoins-0123456789abcdef/ps-vision"]},
    "data_bucket": "ml-shared-data",
    "fsx_file_system_id": "fs-0123456789abcdef0",
    "fsx_mount_root": "/fsx",
    "vpc_id": "vpc-0123456789abcdef0",
    "subnet_ids": ["subnet-0123456789abcdef0"],
    "security_group_ids": ["sg-0123456789abcdef0"],
    "name_prefix": "hyperpod",
    "tag_keys": {"team": "team", "cost_center": "cost-center"},
}
OPTIONS = {layer.option: with_known(layer) for layer in LAYERS}
CHECKS = {layer.option: layer.check for layer in LAYERS}


def known(layers, layer, key):
    """``key`` of what the layer's options hand on of shared_info's reads (its ``known``), None when not handed."""
    return layers[layer].get("known", {}).get(key)


def normalized(teams=None, adopt=None):
    cluster = {"name": "ml-shared", "instance_groups": [
        {"name": "p5", "instance_type": "ml.p5.48xlarge", "count": 16}, {"name": "g5", "instance_type": "ml.g5.12xlarge", "count": 16}]}
    problems, teams, _capacity = check_team_file(copy.deepcopy(teams or SAMPLE), cluster, adopt=adopt)
    assert problems == []
    return {team["name"]: team for team in teams}


@pytest.mark.parametrize("name", [team["name"] for team in SAMPLE])
def test_every_layer_of_every_sample_team_is_valid_for_its_module(name):
    layers = team_layer_args(normalized()[name], SHARED)
    assert layers.pop("team") == name
    assert set(layers) == {
        "permission_set", "access_entry", "execution_role", "studio_access_entry", "domain", "quota", "s3_prefix", "directories", "budget"}
    for option, params in layers.items():
        checked = ArgumentSpecValidator(**OPTIONS[option]).validate(params)
        assert checked.error_messages == [], option
        # What the layer's module refuses without a call (names, patterns, amounts) passes too.
        CHECKS[option](checked.validated_parameters)
        assert params.get("team", name) == name


def test_what_shared_info_resolved_is_passed_for_the_team_alone():
    vision = team_layer_args(normalized()["vision"], SHARED)
    assert vision["permission_set"]["identity_center_group_ids"] == {"TeamVision": "g-vision"}
    assert known(vision, "permission_set", "permission_set") == SHARED["permission_sets"]["hyperpod-vision"]
    assert known(vision, "permission_set", "outdated_permission_sets") == SHARED["outdated_permission_sets"]
    assert vision["access_entry"]["principal_arn"] == SHARED["sso_role_arns"]["hyperpod-vision"]
    assert vision["domain"]["identity_center_group_ids"] == {"TeamVision": "g-vision"}
    research = team_layer_args(normalized()["research"], SHARED)
    # Not resolved yet (a new team): the modules look it up, and the access entry names the role by pattern.
    assert "identity_center_group_ids" not in research["permission_set"]
    assert known(research, "permission_set", "permission_set") is None
    assert research["access_entry"]["principal_arn"] == "AWSReservedSSO_hyperpod-research_*"
    # shared_info looked for every present team's permission set: one it did not find is known to be absent, so the
    # team's run does not describe every permission set again; without that lookup, nothing is known.
    assert (known(vision, "permission_set", "absent"), known(research, "permission_set", "absent")) == (None, True)
    unlooked = team_layer_args(normalized()["research"], {k: v for k, v in SHARED.items() if k != "permission_sets"})
    assert known(unlooked, "permission_set", "absent") is None


def test_access_policies_follow_the_team_file():
    team = dict(normalized()["vision"], access={"policies": ["training", "space"], "cluster_read": False})
    policies = team_layer_args(team, SHARED)["access_entry"]["access_policies"]
    assert [p["name"] for p in policies] == [
        "AmazonSagemakerHyperpodTrainingPolicy", "AmazonSagemakerHyperpodSpacePolicy", "AmazonSagemakerHyperpodSpaceTemplatePolicy"]
    assert policies[0]["access_scope"] == {"type": "namespace", "namespaces": ["hyperpod-ns-vision"]}
    assert policies[2]["access_scope"] == {"type": "namespace", "namespaces": ["jupyter-k8s-shared"]}
    default = team_layer_args(normalized()["vision"], SHARED)["access_entry"]["access_policies"]
    assert [p["name"] for p in default] == ["AmazonSagemakerHyperpodTrainingPolicy", "AmazonSagemakerHyperpodInferencePolicy"]
    cluster_read = dict(normalized()["vision"], access=dict(normalized()["vision"]["access"], cluster_read=True))
    read = team_layer_args(cluster_read, SHARED)["access_entry"]["access_policies"]
    assert read[2] == {"name": "AmazonSagemakerHyperpodUserClusterPolicy", "access_scope": {"type": "cluster"}}
    empty = team_layer_args(dict(normalized()["vision"], access={"policies": []}), SHARED)["access_entry"]["access_policies"]
    assert empty == default


def test_studio_reaches_the_cluster_as_the_execution_role_with_the_users_access():
    vision = team_layer_args(normalized()["vision"], SHARED)
    studio, users = vision["studio_access_entry"], vision["access_entry"]
    assert (studio["team"], studio["principal"], studio["account_id"]) == ("vision", "execution_role", SHARED["account_id"])
    assert "principal_arn" not in studio
    assert studio["kubernetes_groups"] == users["kubernetes_groups"] == ["hyperpod-ns-vision-namespace-level-group"]
    assert studio["access_policies"] == users["access_policies"] and studio["tags"] == users["tags"]
    role = vision["execution_role"]
    assert (role["hyperpod_cluster_arn"], role["eks_cluster_arn"]) == (CLUSTER_ARN, SHARED["eks_cluster_arn"])
    # Without a cluster there is nothing to reach: no Studio access entry, no cluster policy.
    alone = team_layer_args(normalized()["vision"], {k: v for k, v in SHARED.items() if not k.startswith(("eks_", "cluster_"))},
                            layers=["execution_role", "studio_access_entry", "domain"])
    assert "studio_access_entry" not in alone and "hyperpod_cluster_arn" not in alone["execution_role"]


def test_layers_the_team_does_not_use_are_left_out():
    team = normalized()["vision"]
    team = dict(team, quota=None, budget=dict(team["budget"], monthly_usd=None), storage=dict(team["storage"], gid=None),
                workspace=dict(team["workspace"], enabled=False))
    assert set(team_layer_args(team, SHARED)) == {"team", "permission_set", "access_entry", "s3_prefix"}


def test_settings_override_and_unset_settings_keep_the_modules_defaults():
    team = normalized()["vision"]
    layers = team_layer_args(team, SHARED, {"session_duration": "PT4H", "quota_cluster": "ml-other", "quota_wait_timeout": 60,
                                            "identity_wait_timeout": None, "require_mount": False, "owner_uid": 1000})
    assert layers["permission_set"]["session_duration"] == "PT4H"
    assert "wait_timeout" not in layers["permission_set"]
    assert layers["quota"]["cluster"] == "ml-other" and layers["quota"]["wait_timeout"] == 60
    assert layers["directories"]["require_mount"] is False and layers["directories"]["uid"] == 1000
    plain = team_layer_args(team, SHARED)
    assert plain["permission_set"]["session_duration"] == "PT8H"
    assert plain["quota"]["cluster"] == CLUSTER_ARN
    assert plain["directories"]["require_mount"] is True


def test_the_domain_and_directories_follow_the_team():
    team = normalized()["vision"]
    layers = team_layer_args(team, SHARED)
    assert layers["domain"]["user_profiles"] == [{"name": "alice"}, {"name": "bob"}, {"name": "carol"}]
    assert layers["domain"]["fsx_lustre"] == {"file_system_id": SHARED["fsx_file_system_id"], "path": "/vision"}
    assert layers["directories"]["members"] == [m for m in team["members"] if m["uid"] is not None]
    iam = team_layer_args(dict(team, workspace=dict(team["workspace"], auth_mode="IAM")), SHARED)["domain"]
    assert "identity_center_group" not in iam and iam["auth_mode"] == "IAM"


def test_the_summary_comes_from_the_layers_results():
    layers = {
        "permission_set": {"permission_set": {"name": "hyperpod-vision"}},
        "domain": {"domain": {"domain_id": "d-1", "user_profiles": [{"name": "alice"}, {"name": "bob"}]}},
        "quota": {"quota": {"status": "Created", "compute_quota_config": {"compute_quota_resources": [
            {"instance_type": "ml.p5.48xlarge", "count": 4}, {"instance_type": "ml.g5.12xlarge", "count": 2}]}}},
        "budget": {"budget": {"budget_limit": {"amount": "40000.0", "unit": "USD"}}},
        "namespace": {"namespace": {"service_account": "hyperpod-vision", "role": "hyperpod-ns-vision-namespace-role", "volume": "hyperpod-vision-fsx",
                                    "queue": "hyperpod-ns-vision-localqueue", "priority_classes": ["inference", "training"]}},
    }
    assert team_summary(layers, "vision") == {
        "team": "vision", "namespace": "hyperpod-ns-vision", "permission_set": "hyperpod-vision", "domain_id": "d-1",
        "user_profiles": 2, "quota": "4 x ml.p5.48xlarge, 2 x ml.g5.12xlarge", "quota_status": "Created", "budget_usd": "40000.0",
        "service_account": "hyperpod-vision", "kubernetes_role": "hyperpod-ns-vision-namespace-role", "volume": "hyperpod-vision-fsx",
        "queue": "hyperpod-ns-vision-localqueue", "priorities": "inference, training"}
    assert team_summary({}, "nlp")["quota"] == "-"
    assert team_summary({}, "nlp")["volume"] == "-"


def test_the_namespace_layer_runs_only_with_a_kubeconfig_and_a_quota():
    team = normalized()["vision"]
    assert "namespace" not in team_layer_args(team, SHARED)
    layer = team_layer_args(team, SHARED, {"kubeconfig": "/kube/config"})["namespace"]
    assert layer == {
        "team": "vision", "name_prefix": "hyperpod", "kubeconfig": "/kube/config", "pod_security": "restricted", "cost_center": "CC-1001",
        "tag_keys": {"team": "team", "cost_center": "cost-center"},
        "volume": {"file_system_id": SHARED["fsx_file_system_id"]},
        "pod_identity": {
            "cluster_name": SHARED["eks_cluster_name"], "cluster_arn": SHARED["eks_cluster_arn"],
            "data_bucket": SHARED["data_bucket"], "account_id": SHARED["account_id"]}}  # fmt: skip
    baseline = dict(team, access=dict(team["access"], pod_security="baseline"))
    assert team_layer_args(baseline, SHARED, {"kubeconfig": "/kube/config"})["namespace"]["pod_security"] == "baseline"
    assert "namespace" not in team_layer_args(dict(team, quota=None), SHARED, {"kubeconfig": "/kube/config"})


def test_a_layer_role_gets_its_own_layers_from_what_it_knows():
    # The identity role's shared facts need not hold what the workspace or storage layers take.
    shared = {key: SHARED[key] for key in ("account_id", "region", "cluster_arn", "eks_cluster_name", "eks_cluster_arn", "data_bucket")}
    layers = team_layer_args(normalized()["vision"], shared, layers=["permission_set", "access_entry"])
    assert set(layers) == {"team", "permission_set", "access_entry"}


def test_a_resolved_domain_id_is_passed_for_the_team_domain_alone():
    teams = normalized()
    assert team_layer_args(teams["vision"], SHARED)["domain"]["domain_id"] == "d-vision123456"
    # A team whose domain does not exist yet: the module finds it (or creates it) by name.
    assert "domain_id" not in team_layer_args(teams["nlp"], SHARED)["domain"]
    assert "domain_id" not in team_layer_args(teams["vision"], dict(SHARED, domain_ids=None))["domain"]
    prefixed = team_layer_args(teams["vision"], dict(SHARED, name_prefix="ml", domain_ids={"ml-vision": "d-ml1234567"}))["domain"]
    assert prefixed["domain_id"] == "d-ml1234567"
    # The profiles shared_info listed go with the domain id they were listed for.
    assert known(team_layer_args(teams["vision"], SHARED), "domain", "user_profiles") == SHARED["user_profiles"]["d-vision123456"]
    assert known(team_layer_args(teams["nlp"], SHARED), "domain", "user_profiles") is None and "known" not in prefixed
    # So do the tags it read to check the domain's owner.
    tagged = dict(SHARED, domain_tags={"d-vision123456": {"team": "vision"}})
    assert known(team_layer_args(teams["vision"], tagged), "domain", "tags") == {"team": "vision"}
    assert known(team_layer_args(teams["nlp"], tagged), "domain", "tags") is None and known(team_layer_args(teams["vision"], SHARED), "domain", "tags") is None


def test_the_execution_role_gets_the_teams_own_domain_for_its_studio_policy():
    """Issue 39: the role's team-studio policy names the team's domain; a domain not made yet is given by team_resources."""
    teams = normalized()
    assert team_layer_args(teams["vision"], SHARED)["execution_role"]["domain_arn"] == "arn:aws:sagemaker:us-east-1:123456789012:domain/d-vision123456"
    assert "domain_arn" not in team_layer_args(teams["nlp"], SHARED)["execution_role"]
    assert "domain_arn" not in team_layer_args(teams["vision"], dict(SHARED, domain_ids=None))["execution_role"]


def test_the_shared_cluster_capacity_is_passed_with_the_cluster_arn():
    vision = normalized()["vision"]
    options = team_layer_args(vision, SHARED)["quota"]
    assert (options["cluster"], options["cluster_capacity"]) == (CLUSTER_ARN, SHARED["cluster_capacity"])
    checked = ArgumentSpecValidator(**OPTIONS["quota"]).validate(options).validated_parameters
    assert quota.given_capacity(checked) == (SHARED["cluster_capacity"], [])
    # quota_cluster naming the shared cluster by name: still the shared capacity, with its ARN.
    by_name = team_layer_args(vision, SHARED, {"quota_cluster": "ml-shared"})["quota"]
    assert (by_name["cluster"], by_name["cluster_capacity"]) == (CLUSTER_ARN, SHARED["cluster_capacity"])


def test_what_the_other_quotas_guarantee_is_the_listings_total_less_the_teams_own():
    listed = dict(
        SHARED,
        compute_quotas={"vision": {"name": "hyperpod-vision-quota", "compute_quota_id": "q-vision", "tags": {}, "guaranteed": {"ml.p5.48xlarge": 2}}},
        compute_quota_guaranteed={"ml.p5.48xlarge": 5, "ml.g5.12xlarge": 1},
    )
    options = team_layer_args(normalized()["vision"], listed)["quota"]
    assert options["known"]["listing"] == {"compute_quota_id": "q-vision", "others_guaranteed": {"ml.p5.48xlarge": 3, "ml.g5.12xlarge": 1}}
    assert ArgumentSpecValidator(**OPTIONS["quota"]).validate(options).error_messages == []
    # A team without a quota in the listing, or another cluster's quota, lists the quotas itself.
    assert known(team_layer_args(normalized()["nlp"], listed), "quota", "listing") is None
    assert known(team_layer_args(normalized()["vision"], listed, {"quota_cluster": "ml-other"}), "quota", "listing") is None


def test_another_cluster_or_no_capacity_leaves_the_module_to_describe_the_cluster():
    vision = normalized()["vision"]
    other = team_layer_args(vision, SHARED, {"quota_cluster": "ml-other"})["quota"]
    assert other["cluster"] == "ml-other" and "cluster_capacity" not in other
    # The cluster did not exist when shared_info read it.
    unread = team_layer_args(vision, dict(SHARED, cluster_capacity=None))["quota"]
    assert unread["cluster"] == CLUSTER_ARN and "cluster_capacity" not in unread
    alone = team_layer_args(vision, dict(SHARED, cluster_arn=None), {"quota_cluster": "ml-shared"}, layers=["quota"])["quota"]
    assert "cluster_capacity" not in alone


def test_a_missing_shared_value_names_the_team_and_the_key():
    shared = {key: value for key, value in SHARED.items() if key != "vpc_id"}
    with pytest.raises(AnsibleFilterError, match=r"team 'vision': hyperpod_shared has no vpc_id"):
        team_layer_args(normalized()["vision"], shared)


def test_extra_tags_are_passed_only_when_the_team_file_gives_some():
    team = normalized()["vision"]
    assert team["tags"] == {}
    plain = team_layer_args(team, SHARED)
    # Without extra tags these layers ensure the team tags and leave tags added by others alone, as the layer roles did.
    assert all("tags" not in plain[layer] for layer in ("domain", "budget", "s3_prefix", "directories"))
    assert plain["execution_role"]["tags"] == {} and plain["quota"]["tags"] == {}
    tagged = team_layer_args(dict(team, tags={"project": "x"}), SHARED)
    assert all(tagged[layer]["tags"] == {"project": "x"} for layer in ("domain", "budget", "s3_prefix", "directories", "execution_role", "quota"))


def test_the_cost_roles_names_and_account_apply_to_the_budget():
    budget = team_layer_args(normalized()["vision"], SHARED, {"budget_name_prefix": "finops", "budget_tag_keys": {"team": "owner"},
                                                              "budget_account_id": "210987654321"})["budget"]
    assert (budget["name_prefix"], budget["tag_keys"], budget["account_id"]) == ("finops", {"team": "owner"}, "210987654321")


def test_a_budget_shared_info_listed_is_passed_only_for_its_account_and_names():
    vision = normalized()["vision"]
    assert known(team_layer_args(vision, SHARED), "budget", "budget") == {"budget": None, "notifications": []}
    for settings in ({"budget_name_prefix": "finops"}, {"budget_account_id": "210987654321"}):
        assert "known" not in team_layer_args(vision, SHARED, settings)["budget"]


def test_the_adopt_list_sets_each_layers_adopt_option_and_user_profiles_the_domains_own():
    vision = next(team for team in SAMPLE if team["name"] == "vision")
    layers = team_layer_args(normalized([vision], adopt={"vision": ["domain", "user_profiles", "budget"]})["vision"], SHARED)
    assert layers["domain"]["adopt"] is True and layers["domain"]["adopt_user_profiles"] is True and layers["budget"]["adopt"] is True
    assert "adopt" not in layers["permission_set"] and "adopt_user_profiles" not in layers["budget"]
    assert ArgumentSpecValidator(**OPTIONS["domain"]).validate(layers["domain"]).error_messages == []


def test_adopting_the_pod_role_sets_the_namespace_layers_own_option():
    vision = next(team for team in SAMPLE if team["name"] == "vision")
    adopt = {"vision": ["pod_role"]}
    layers = team_layer_args(normalized([vision], adopt)["vision"], SHARED, {"kubeconfig": "/kube/config"})
    assert layers["namespace"]["adopt_pod_role"] is True
    assert not [layer for layer, options in layers.items() if layer != "team" and "adopt" in options]
    assert ArgumentSpecValidator(**OPTIONS["namespace"]).validate(layers["namespace"]).error_messages == []
    # No kubeconfig, no namespace layer: nothing to adopt, and nothing else is set.
    assert "namespace" not in team_layer_args(normalized([vision], adopt)["vision"], SHARED)


def test_the_pod_identity_shared_info_read_goes_to_the_team_s_namespace_layer_alone():
    read = {"vision": {"role": None, "association": None}, "nlp": {"role": {"Arn": "arn:aws:iam::123456789012:role/hyperpod-nlp-pods"}, "association": None}}
    teams = normalized()
    vision = team_layer_args(teams["vision"], dict(SHARED, pod_identities=read), {"kubeconfig": "/kube/config"})
    assert known(vision, "namespace", "pod_identity") == read["vision"]
    assert ArgumentSpecValidator(**OPTIONS["namespace"]).validate(vision["namespace"]).error_messages == []
    # A run whose shared_info read none (no pod_roles) leaves the layer to read its own.
    assert "known" not in team_layer_args(teams["vision"], SHARED, {"kubeconfig": "/kube/config"})["namespace"]


def test_the_resources_shared_info_read_for_their_owners_go_to_their_layers_for_the_team_alone():
    teams = normalized()
    studio = "arn:aws:iam::123456789012:role/hyperpod-vision-studio-execution"
    sso = SHARED["sso_role_arns"]["hyperpod-vision"]
    read = dict(
        SHARED,
        execution_roles={"hyperpod-vision-studio-execution": {"role": {"Arn": studio, "Tags": []}}},
        access_entries={sso: {"principal_arn": sso, "access_entry": {"tags": {}}}, studio: {"principal_arn": studio, "access_entry": None}},
        s3_markers={"vision": {"bucket": "ml-shared-data", "tags": {"team": "vision"}, "objects": None}},
        compute_quotas={"vision": {"name": "hyperpod-vision-quota", "compute_quota_id": "q-1", "tags": {"team": "vision"}}},
    )
    vision = team_layer_args(teams["vision"], read)
    assert known(vision, "execution_role", "role") == read["execution_roles"]["hyperpod-vision-studio-execution"]
    assert known(vision, "access_entry", "access_entry") == read["access_entries"][sso]
    assert known(vision, "studio_access_entry", "access_entry") == read["access_entries"][studio]
    assert known(vision, "s3_prefix", "marker") == read["s3_markers"]["vision"]
    assert known(vision, "quota", "tags") == {"q-1": {"team": "vision"}}
    for option, params in vision.items():
        if option != "team":
            assert ArgumentSpecValidator(**OPTIONS[option]).validate(params).error_messages == [], option
    nlp = team_layer_args(teams["nlp"], read)
    copies = ("role", "access_entry", "marker", "tags")
    assert not [(option, key) for option, params in nlp.items() if option not in ("team", "domain") for key in copies if key in params.get("known", {})]
    # A quota on another cluster than the shared one is its layer's to read.
    elsewhere = team_layer_args(teams["vision"], read, {"quota_cluster": "other-cluster"})
    assert known(elsewhere, "quota", "tags") is None


# Run in a fresh interpreter: Ansible's collection loader must be installed before anything imports the collection.
TEMPLATED_BY_ANSIBLE = """
import copy, json, sys
from ansible.plugins.loader import init_plugin_loader
init_plugin_loader([sys.argv[1]])
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from ansible_collections.hyperpod.tenancy.plugins.module_utils import team_model

copied = []
def recording_deepcopy(value, memo=None):
    copied.append("%s.%s" % (type(value).__module__, type(value).__qualname__))
    return copy.deepcopy(value, memo)

team_model.copy = type("CopyModule", (), {"deepcopy": staticmethod(recording_deepcopy)})
team, shared = json.load(sys.stdin)
layers = Templar(loader=DataLoader(), variables={"team": team, "shared": shared}).template(
    trust_as_template("{{ team | hyperpod.tenancy.team_layer_args(shared) }}"))
print(json.dumps({"copied": sorted(set(copied)), "layers": layers}))
"""


def test_a_team_templated_by_ansible_reaches_the_team_model_as_plain_data():
    """ansible-core 2.19 gives filters lazily templated containers. A deep copy of one copies its templating context,
    every variable of the host, with each nested container: the team model's copy of the team cost about 5 CPU-s per team
    (docs/performance.md). The filter must hand the team model plain dicts and lists, with the same result."""
    team = normalized()["vision"]
    run = subprocess.run(
        [sys.executable, "-c", TEMPLATED_BY_ANSIBLE, str(ROOT / "collections")],
        input=json.dumps([team, SHARED]), capture_output=True, text=True, check=True,
    )
    answer = json.loads(run.stdout)
    assert answer["copied"] and all(kind.startswith("builtins.") for kind in answer["copied"]), answer["copied"]
    assert answer["layers"] == json.loads(json.dumps(team_layer_args(team, SHARED)))


def test_the_execution_role_gets_the_platforms_studio_instance_types_and_the_members_profiles():
    """Red team H1 and H4: the role's team-studio policy holds the platform's instance types and the current members' profiles."""
    vision = normalized()["vision"]
    role = team_layer_args(vision, SHARED)["execution_role"]
    assert role["studio_instance_types"] == ["system", "ml.t3.medium", "ml.t3.large", "ml.m5.large", "ml.m5.xlarge"]
    assert role["studio_owners"] == [member["name"] for member in vision["members"]]
    assert team_layer_args(dict(vision, studio_instance_types=["system"]), SHARED)["execution_role"]["studio_instance_types"] == ["system"]


@pytest.mark.parametrize(
    "partition, region",
    [("aws", "us-east-1"), ("aws-cn", "cn-north-1"), ("aws-us-gov", "us-gov-west-1")],
)
def test_the_domain_arn_is_in_the_shared_facts_partition(partition, region):
    """Red team H6: aws-cn and aws-us-gov, not a hard-coded arn:aws: the cluster ARNs say the partition, else the region."""
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import team_layer_args as layer_args

    shared = dict(
        SHARED,
        region=region,
        cluster_arn="arn:%s:sagemaker:%s:123456789012:cluster/abcdef123456" % (partition, region),
        eks_cluster_arn="arn:%s:eks:%s:123456789012:cluster/ml-shared-eks" % (partition, region),
    )
    arn = "arn:%s:sagemaker:%s:123456789012:domain/d-vision123456" % (partition, region)
    assert team_layer_args(normalized()["vision"], shared)["execution_role"]["domain_arn"] == arn
    assert layer_args.partition({"region": region}) == partition
