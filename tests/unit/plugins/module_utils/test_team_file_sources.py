"""The team file has one source per key: a layer's section is its layer's options, and docs/team-file.md follows the model.

A team-file key of a layer is written in the layer's module_utils file (``MODULE_OPTIONS`` and ``TEAM_FILE_SECTION``), in
its module's DOCUMENTATION (validate-modules holds it to the spec) and in docs/team-file.md (held to the model here).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible_collections.hyperpod.tenancy.plugins.module_utils import domain, team_dirs, team_model, team_namespace
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import REQUIRED, team_section
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_layer_args import team_layer_args

ROOT = Path(__file__).resolve().parents[4]
SECTIONS = sorted(team_model.LAYER_SECTIONS)


def spec_of(layer):
    return layer.MODULE_OPTIONS["argument_spec"]


@pytest.mark.parametrize("section", SECTIONS)
def test_a_layer_section_takes_its_choices_and_types_from_the_layer(section):
    spec = spec_of(team_model.LAYER_SECTIONS[section])
    defaults = team_model.SECTION_DEFAULTS[section]
    for key in defaults:
        assert key in spec, "%s.%s is no option of its layer" % (section, key)
        assert team_model.CHOICES.get("%s.%s" % (section, key)) == (tuple(spec[key]["choices"]) if spec[key].get("choices") else None)
    given = {key: value for key, value in defaults.items() if value is not REQUIRED and value is not None}
    checked = ArgumentSpecValidator({key: spec[key] for key in given}).validate(given)
    assert checked.error_messages == []
    assert checked.validated_parameters == given


# Keys whose layer takes them under the same name but whose section is not the layer's alone: the same choices and default.
PASSED_THROUGH = [
    ("workspace.auth_mode", domain, "auth_mode"),
    ("workspace.app_network_access_type", domain, "app_network_access_type"),
    ("access.pod_security", team_namespace, "pod_security"),
    ("storage.on_remove", team_dirs, "on_remove"),
    ("storage.mode", team_dirs, "mode"),
    ("storage.s3_link", team_dirs, "s3_link"),
]


@pytest.mark.parametrize("field, layer, option", PASSED_THROUGH, ids=[row[0] for row in PASSED_THROUGH])
def test_a_key_passed_through_agrees_with_its_layer(field, layer, option):
    section, key = field.split(".")
    spec = spec_of(layer)[option]
    assert team_model.CHOICES.get(field) == (tuple(spec["choices"]) if spec.get("choices") else None)
    if spec.get("default") is not None:
        assert team_model.SECTION_DEFAULTS[section][key] == spec["default"]


def test_a_layer_section_refuses_a_key_its_layer_lacks():
    options = {"argument_spec": {"sharing": {"type": "str", "choices": ["lend"]}}}
    assert team_section(options, ("sharing",), sharing="lend") == {"sharing": "lend"}
    with pytest.raises(ValueError, match="lending"):
        team_section(options, ("sharing", "lending"))
    with pytest.raises(ValueError, match="borrow"):
        team_section(options, ("sharing",), borrow="x")


SHARED = {
    "account_id": "123456789012", "region": "us-east-1", "cluster_arn": "arn:aws:sagemaker:us-east-1:123456789012:cluster/abc",
    "data_bucket": "ml-shared-data", "eks_cluster_name": "eks", "eks_cluster_arn": "arn:aws:eks:us-east-1:123456789012:cluster/eks",
    "vpc_id": "vpc-1", "subnet_ids": ["subnet-1"], "security_group_ids": ["sg-1"],
}
GIVEN = {
    "quota": {"resources": [{"instance_type": "ml.p5.48xlarge", "count": 4}], "sharing": "lend", "borrow_limit": 20,
              "absolute_borrow_limits": [{"instance_type": "ml.p5.48xlarge", "count": 1}], "preempt": "never",
              "fair_share_weight": 7, "activation": "disabled"},
    "budget": {"monthly_usd": 10, "notify": ["a@example.com"], "thresholds": [50], "forecast_thresholds": [90]},
}


@pytest.mark.parametrize("section", SECTIONS)
def test_every_key_of_a_layer_section_reaches_the_layer_by_its_name(section):
    assert set(GIVEN[section]) == set(team_model.SECTION_DEFAULTS[section]), "give every key of the section a value here"
    team = {"name": "vision", "identity_center_group": "TeamVision", section: GIVEN[section]}
    options = team_layer_args(team_model.with_defaults(team), SHARED, layers=(section,))[section]
    assert {key: options[key] for key in GIVEN[section]} == GIVEN[section]


def documented_rows():
    rows = {}
    text = (ROOT / "docs/team-file.md").read_text()
    section = text.split("## A team (`hyperpod_teams[]`)", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        match = re.fullmatch(r"`([a-z0-9_.]+)(?:\[\])?`", cells[0])
        if match and len(cells) == 4:
            rows[match.group(1)] = (cells[1], cells[3])
    return rows


def model_keys():
    keys = [(key, default) for key, default in team_model.TEAM_DEFAULTS.items() if key not in team_model.SECTION_DEFAULTS]
    for section, defaults in team_model.SECTION_DEFAULTS.items():
        keys.extend(("%s.%s" % (section, key), default) for key, default in defaults.items())
    return keys


def shown(default):
    """The default as docs/team-file.md writes it."""
    if isinstance(default, bool):
        return "`%s`" % str(default).lower()
    if isinstance(default, list):
        return "`[%s]`" % ", ".join(str(item) for item in default)
    if isinstance(default, dict):
        return "`{}`" if not default else None
    return "`%s`" % default


@pytest.mark.parametrize("key, default", model_keys(), ids=[key for key, unused in model_keys()])
def test_docs_team_file_lists_every_key_with_its_choices_and_default(key, default):
    rows = documented_rows()
    assert key in rows, "docs/team-file.md has no row for %s" % key
    kind, documented = rows[key]
    if key in team_model.CHOICES and not isinstance(default, list):
        assert kind == "/".join("`%s`" % choice for choice in team_model.CHOICES[key])
    if default is REQUIRED:
        assert documented.startswith("required")
    elif key == "description":
        assert documented == "`%s`" % team_model.default_description("<name>")
    elif default is None:
        assert documented.startswith("none")
    else:
        assert documented in (shown(default), '`"%s"`' % default), documented


def test_docs_team_file_lists_no_key_the_model_lacks():
    assert set(documented_rows()) == {key for key, unused in model_keys()}
