"""A dry run on an account whose HyperPod cluster the run would create (team_layer_args.predicted_cluster)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_layer_args import MissingSharedValue, team_layer_args
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_model import check_team_file
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_resources import validated_layers

ROOT = Path(__file__).resolve().parents[4]
TEAMS = yaml.safe_load((ROOT / "teams/teams.yml").read_text())["hyperpod_teams"]
CLUSTER = yaml.safe_load((ROOT / "group_vars/all/cluster.yml").read_text())["hyperpod_cluster"]
PLACEHOLDER = "arn:aws:sagemaker:us-east-1:123456789012:cluster/tobecreated0"
# What shared_info reads on an account with the EKS cluster but no HyperPod cluster yet.
SHARED = {
    "account_id": "123456789012", "region": "us-east-1", "cluster_name": "ml-shared", "cluster_arn": None, "cluster_capacity": None,
    "eks_cluster_name": "ml-shared-eks", "eks_cluster_arn": "arn:aws:eks:us-east-1:123456789012:cluster/ml-shared-eks",
    "identity_center_instance_arn": "arn:aws:sso:::instance/ssoins-0123456789abcdef", "identity_store_id": "d-0123456789",
    "data_bucket": "ml-shared-data", "fsx_mount_root": "/fsx", "vpc_id": "vpc-0123456789abcdef0", "subnet_ids": ["subnet-0123456789abcdef0"],
    "security_group_ids": ["sg-0123456789abcdef0"], "name_prefix": "hyperpod",
}  # fmt: skip
# What playbooks/tasks/shared_facts.yml adds in a dry run when the run would create the cluster.
PREDICTED = dict(SHARED, cluster_predicted={"instance_groups": CLUSTER["instance_groups"]})


def vision():
    return check_team_file(copy.deepcopy(TEAMS), CLUSTER, "hyperpod")[1][0]


def test_without_a_prediction_a_missing_cluster_is_still_refused():
    with pytest.raises(MissingSharedValue, match="hyperpod_shared has no cluster_arn"):
        team_layer_args(vision(), SHARED)


def test_a_dry_run_predicts_with_a_stand_in_arn_and_the_cluster_files_capacity_and_says_so():
    options = team_layer_args(vision(), PREDICTED)
    assert options["permission_set"]["team_policy"]["hyperpod_cluster_arn"] == PLACEHOLDER
    assert options["execution_role"]["hyperpod_cluster_arn"] == PLACEHOLDER
    assert (options["quota"]["cluster"], options["quota"]["cluster_capacity"]) == (PLACEHOLDER, {"ml.p5.48xlarge": 8, "ml.g5.12xlarge": 6})
    assert len(options["notes"]) == 1 and "ml-shared is created by this run" in options["notes"][0] and PLACEHOLDER in options["notes"][0]
    # Every layer takes the options (the quota's cluster_capacity needs the cluster as an ARN: the stand-in is one).
    layers = validated_layers("vision", {k: v for k, v in options.items() if k not in ("team", "notes")}, set())
    assert {"permission_set", "execution_role", "quota", "domain"} <= {option for option, _converge, _params in layers}


def test_a_cluster_that_exists_is_never_stood_in_for():
    existing = "arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdef123456"
    options = team_layer_args(vision(), dict(PREDICTED, cluster_arn=existing, cluster_capacity={"ml.p5.48xlarge": 16}))
    assert options["quota"]["cluster"] == existing and "notes" not in options


class _Module:
    no_log_values = set()

    def __init__(self, check_mode):
        self.check_mode = check_mode


class _Context:
    def __init__(self, check_mode):
        self.module, self.warnings = _Module(check_mode), []

    def warn(self, message):
        self.warnings.append(message)


def test_the_stand_in_reaches_no_write_outside_check_mode():
    from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import ModuleFailure
    from ansible_collections.hyperpod.tenancy.plugins.modules import team_resources

    options = team_layer_args(vision(), PREDICTED)
    params = dict({layer: None for layer in team_resources.MODULE_OPTIONS}, **options, refused=None)
    with pytest.raises(ModuleFailure, match="stand in for what a dry run predicts reached a run that writes") as refused:
        team_resources.converge(_Context(check_mode=False), params)
    assert refused.value.result["layers"] == {} and refused.value.result["changed"] is False


def test_the_stand_in_arn_is_in_the_accounts_partition():
    """Red team H6: a dry run in aws-cn predicts an aws-cn cluster ARN (from the EKS cluster's ARN), not arn:aws."""
    china = dict(PREDICTED, region="cn-north-1", eks_cluster_arn="arn:aws-cn:eks:cn-north-1:123456789012:cluster/ml-shared-eks")
    assert team_layer_args(vision(), china)["execution_role"]["hyperpod_cluster_arn"] == "arn:aws-cn:sagemaker:cn-north-1:123456789012:cluster/tobecreated0"
