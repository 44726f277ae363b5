"""The team file has one source per key: the layer that consumes a key declares it, and docs/team-file.md follows the model.

A team-file key of a layer is written in the layer's module_utils file (``MODULE_OPTIONS`` and ``TEAM_FILE_SECTION``), in
its module's DOCUMENTATION (validate-modules holds it to the spec) and in docs/team-file.md (held to the model here).
Every test here reads the keys from the declarations: a new key needs no line in this file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible_collections.hyperpod.tenancy.plugins.module_utils import team_model
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import REQUIRED, team_section
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_layer_args import team_layer_args
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_resources import LAYERS

ROOT = Path(__file__).resolve().parents[4]
# (declaration, key): every key of every section, with the layer's declaration it comes from.
DECLARED = [(declared, key) for declared in team_model.LAYER_SECTIONS for key in declared]
IDS = ["%s.%s" % (declared.section, key) for declared, key in DECLARED]


@pytest.mark.parametrize("declared, key", DECLARED, ids=IDS)
def test_a_key_takes_its_choices_and_default_from_the_spec_its_layer_declares(declared, key):
    field = "%s.%s" % (declared.section, key)
    spec = declared.specs[key]
    option = declared.options[key]
    if option is not None:
        assert spec is declared.module_options["argument_spec"][option], "%s is the layer's option %s" % (field, option)
    assert team_model.SECTION_DEFAULTS[declared.section][key] is declared[key]
    assert team_model.SECTION_SPECS[declared.section][key] is spec
    assert team_model.CHOICES.get(field) == (tuple(spec["choices"]) if spec.get("choices") else team_model.SWITCH_CHOICES.get(field))
    default = declared[key]
    if default is REQUIRED or default is None:
        return
    checked = ArgumentSpecValidator({key: spec}).validate({key: default})
    assert checked.error_messages == []
    assert checked.validated_parameters == {key: default}


def test_team_section_sets_options_by_name_or_as_renamed_and_refuses_what_its_layer_lacks():
    options = {"argument_spec": {"sharing": {"type": "str", "choices": ["lend"]}, "web_portal": {"type": "str", "default": "on"}}}
    declared = team_section("quota", options, ("sharing", "portal", "gate"), renamed=dict(portal="web_portal"),
                            own=dict(gate=dict(type="bool", default=True)), sharing="lend")
    assert declared == {"sharing": "lend", "portal": "on", "gate": True}
    assert declared.passed() == {"sharing": "sharing", "portal": "web_portal"}
    assert declared.specs["gate"] == {"type": "bool", "default": True}
    assert team_section("quota", options, ("sharing", "portal"), renamed=dict(portal="web_portal"), offboarding=("portal",)).passed() == {
        "sharing": "sharing"}
    with pytest.raises(ValueError, match="lending"):
        team_section("quota", options, ("sharing", "lending"))
    with pytest.raises(ValueError, match="portal"):
        team_section("quota", options, ("portal",), renamed=dict(portal="portal_mode"))
    with pytest.raises(ValueError, match="borrow"):
        team_section("quota", options, ("sharing",), borrow="x")
    with pytest.raises(ValueError, match="borrow"):
        team_section("quota", options, ("sharing",), offboarding=("borrow",))


def test_a_key_is_declared_by_one_layer():
    options = {"argument_spec": {"sharing": {"type": "str"}}}
    with pytest.raises(ValueError, match="quota.sharing is declared by two layers"):
        team_model._sections([team_section("quota", options, ("sharing",)), team_section("quota", options, ("sharing",))])


SHARED = {
    "account_id": "123456789012", "region": "us-east-1", "cluster_arn": "arn:aws:sagemaker:us-east-1:123456789012:cluster/abc",
    "data_bucket": "ml-shared-data", "eks_cluster_name": "eks", "eks_cluster_arn": "arn:aws:eks:us-east-1:123456789012:cluster/eks",
    "vpc_id": "vpc-1", "subnet_ids": ["subnet-1"], "security_group_ids": ["sg-1"], "fsx_mount_root": "/fsx",
    "fsx_file_system_id": "fs-0123456789abcdef0",  # storage.s3_link links the team on the account's file system
}


def given(field):
    """A value of ``field`` that nothing else could have put in a layer's options."""
    return "given %s" % field


def team_giving_every_key():
    """A team whose every key that its layer passes on has a value of its own (the others keep their defaults)."""
    team = {"name": "vision", "identity_center_group": "TeamVision"}
    for declared, key in DECLARED:
        if key in declared.passed():
            team.setdefault(declared.section, {})[key] = given("%s.%s" % (declared.section, key))
    return team_model.with_defaults(team)


@pytest.mark.parametrize("declared, key", DECLARED, ids=IDS)
def test_every_key_reaches_each_layer_of_its_module_as_the_option_it_declares(declared, key):
    built = team_layer_args(team_giving_every_key(), SHARED, {"kubeconfig": "/kubeconfig"})
    layers = [layer.option for layer in LAYERS if layer.options is declared.module_options]
    assert layers and all(layer in built for layer in layers), "the team above uses every layer of %s" % ", ".join(layers)
    option = declared.options[key]
    for layer in layers:
        if key in declared.passed():
            assert built[layer][option] == given("%s.%s" % (declared.section, key)), layer
        elif option is not None:
            # Offboarding's: the roles pass it when the team is removed; a build leaves the layer's default alone.
            assert option not in built[layer], layer


def wrong_value(spec):
    """A value the team model refuses for a key of ``spec``, and the words it refuses it with."""
    if spec.get("type") == "bool":
        return "yes", "must be true or false"
    if spec.get("type") == "list" and spec.get("choices"):
        return ["bogus"], "[0]: 'bogus' is not one of " + ", ".join(spec["choices"])
    return "bogus", "'bogus' is not one of " + ", ".join(spec["choices"])


CHECKED = [(declared, key) for declared, key in DECLARED if declared.specs[key].get("choices") or declared.specs[key].get("type") == "bool"]


@pytest.mark.parametrize("declared, key", CHECKED, ids=["%s.%s" % (declared.section, key) for declared, key in CHECKED])
def test_a_wrong_choice_or_switch_is_refused_with_the_team_and_the_field(declared, key):
    field = "%s.%s" % (declared.section, key)
    value, words = wrong_value(declared.specs[key])
    section = {"resources": [{"instance_type": "ml.p5.48xlarge", "count": 1}]} if declared.section == "quota" else {}
    if declared.section == "budget":
        section = {"monthly_usd": 10}
    team = {"name": "vision", "identity_center_group": "TeamVision", declared.section: dict(section, **{key: value})}
    cluster = {"name": "ml-shared", "instance_groups": [{"name": "p5", "instance_type": "ml.p5.48xlarge", "count": 4}]}
    problems = team_model.check_team_file([team], cluster)[0]
    assert problems == ["team 'vision': %s%s" % (field, ": " + words if not words.startswith("[") else words)]


def throwaway(number):
    """Two options a layer's spec did not have, a choice and a switch, named for the layer (``number``)."""
    return {
        "throwaway%d_mode" % number: dict(type="str", choices=["on", "off"], default="off"),
        "throwaway%d_switch" % number: dict(type="bool", default=False),
    }


def with_throwaway_keys(declared, number):
    """``declared`` (a layer's TEAM_FILE_SECTION) declared again with the ``throwaway(number)`` keys, as the recipe of
    docs/development.md ("Adding a team-file option") adds one: an option in the layer's spec and its key in the section."""
    added = throwaway(number)
    options = dict(declared.module_options, argument_spec=dict(declared.module_options["argument_spec"], **added))
    renamed = dict((key, option) for key, option in declared.options.items() if option is not None and option != key)
    own = dict((key, declared.specs[key]) for key, option in declared.options.items() if option is None)
    return team_section(declared.section, options, tuple(declared) + tuple(added), renamed=renamed, own=own,
                        offboarding=declared.offboarding, **dict(declared))


@pytest.fixture
def throwaway_keys(monkeypatch):
    """``[(section, number)]``: the team model built from every layer's declaration with its throwaway keys added."""
    sections = tuple(with_throwaway_keys(declared, number) for number, declared in enumerate(team_model.LAYER_SECTIONS))
    defaults, specs = team_model._sections(sections)
    choices = dict(team_model.CHOICES)
    choices.update(("%s.throwaway%d_mode" % (declared.section, number), ("on", "off")) for number, declared in enumerate(sections))
    monkeypatch.setattr(team_model, "LAYER_SECTIONS", sections)
    monkeypatch.setattr(team_model, "SECTION_DEFAULTS", defaults)
    monkeypatch.setattr(team_model, "SECTION_SPECS", specs)
    monkeypatch.setattr(team_model, "CHOICES", choices)
    return [(declared.section, number) for number, declared in enumerate(sections)]


def test_a_throwaway_option_of_each_layer_is_checked_with_no_line_of_the_team_model(throwaway_keys):
    """Each layer's new keys are taken from its declaration alone: a good value passes, the default fills, a wrong choice
    or a switch that is not true/false is refused with the team and the field (budget's too, once checked by hand only)."""
    assert sorted(set(section for section, _number in throwaway_keys)) == ["access", "budget", "quota", "storage", "workspace"]
    cluster = {"name": "ml-shared", "instance_groups": [{"name": "p5", "instance_type": "ml.p5.48xlarge", "count": 4}]}
    base = {"quota": {"resources": [{"instance_type": "ml.p5.48xlarge", "count": 1}]}, "budget": {"monthly_usd": 10}}
    for section, number in throwaway_keys:
        mode, switch = "throwaway%d_mode" % number, "throwaway%d_switch" % number

        def team(section=section, **values):
            return {"name": "vision", "identity_center_group": "TeamVision", section: dict(base.get(section, {}), **values)}

        problems, normalized, _capacity = team_model.check_team_file([team(**{mode: "on", switch: True})], cluster)
        assert problems == [], (section, number)
        assert normalized[0][section][mode] == "on" and normalized[0][section][switch] is True
        assert team_model.check_team_file([team()], cluster)[1][0][section][mode] == "off", "the declared default"
        problems = team_model.check_team_file([team(**{mode: "bogus", switch: "yes"})], cluster)[0]
        assert problems == [
            "team 'vision': %s.%s: 'bogus' is not one of on, off" % (section, mode),
            "team 'vision': %s.%s: must be true or false" % (section, switch),
        ], (section, number)


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
    if key in team_model.CHOICES and key not in team_model.SWITCH_CHOICES and not isinstance(default, list):
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
