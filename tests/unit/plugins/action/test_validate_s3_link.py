"""storage.s3_link where the platform allows it: the validator takes it, the run's options carry the account's file system and
data bucket, and the layer the run builds links the team's export directory (not the team directory with the homes)."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import yaml
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_layer_args import MissingSharedValue, team_layer_args
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_model import check_team_file_with_places
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_resources import validated_layers
from ansible_collections.hyperpod.tenancy.plugins.modules.validate_team_file import PLACEHOLDER_SHARED, layer_problems

from sandbox.client import SANDBOX_CREDENTIALS
from tests.unit.plugins.modules.test_fsx_team_dir import as_root, run_module

ROOT = Path(__file__).resolve().parents[4]
TEAMS = yaml.safe_load((ROOT / "teams/teams.yml").read_text())["hyperpod_teams"]
CLUSTER = yaml.safe_load((ROOT / "group_vars/all/cluster.yml").read_text())["hyperpod_cluster"]
SHARED = dict(PLACEHOLDER_SHARED, name_prefix="hyperpod", tag_keys={}, data_bucket="placeholder-bucket")
FSX = "fs-0123456789abcdef0"
ALLOWED = {"teams": {"vision": {"choices": {"storage.s3_link": [False, True]}}}}


def linked_teams(platform_allows=True):
    teams = copy.deepcopy(TEAMS)
    teams[0]["storage"]["s3_link"] = True
    return check_team_file_with_places(teams, CLUSTER, "hyperpod", team_limits=ALLOWED if platform_allows else None)


def test_the_validator_refuses_s3_link_unless_the_platform_allows_it():
    model = linked_teams(platform_allows=False)[0]
    assert len(model) == 1 and model[0].startswith("team 'vision': storage.s3_link: true is not allowed for this team"), model


def test_the_validator_takes_an_s3_link_the_platform_allows():
    model, normalized, _capacity, places = linked_teams()
    assert model == []
    assert layer_problems(normalized, places, SHARED) == []


def test_the_runs_directories_layer_links_the_teams_prefix_on_the_accounts_file_system():
    normalized = linked_teams()[1]
    shared = dict(SHARED, data_bucket="hyperpod-team-data", fsx_file_system_id=FSX)
    options = team_layer_args(normalized[0], shared)
    directories = options["directories"]
    assert (directories["s3_link"], directories["file_system_id"], directories["bucket"]) == (True, FSX, "hyperpod-team-data")
    layers = validated_layers("vision", {k: v for k, v in options.items() if k != "team"}, set())
    assert "directories" in [option for option, _converge, _params in layers]


def test_an_account_without_a_file_system_names_what_the_link_needs():
    normalized = linked_teams()[1]
    shared = {k: v for k, v in SHARED.items() if k != "fsx_file_system_id"}
    with pytest.raises(MissingSharedValue, match=r"storage.s3_link.*fsx_file_system_id"):
        team_layer_args(normalized[0], shared)


@as_root
def test_the_layer_the_run_builds_links_the_export_directory_through_the_sandbox(seeded, tmp_path, capsys):
    sandbox, seed = seeded
    shared = dict(SHARED, data_bucket=seed["data_bucket"], fsx_file_system_id=seed["fsx_file_system_id"], fsx_mount_root=str(tmp_path))
    directories = team_layer_args(linked_teams()[1][0], shared, {"require_mount": False})["directories"]
    args = dict(directories, endpoint_url=sandbox.endpoint, region=seed["region"], access_key="sandbox",
                secret_key=SANDBOX_CREDENTIALS["AWS_SECRET_ACCESS_KEY"])
    created = run_module(args, capsys)
    association = created["association"]
    assert created["changed"] and association["data_repository_path"] == "s3://%s/vision/" % seed["data_bucket"]
    assert association["file_system_path"] == "/vision/s3-export"
    assert os.stat(tmp_path / "vision" / "s3-export").st_gid == directories["gid"]
    assert not run_module(args, capsys)["changed"]
