"""The team file read as untrusted data (plugins/plugin_utils/team_file.py): what a team lead's pull request can put in
it that the collection refuses before anything expands or templates it, each with file, line and column."""

from __future__ import annotations

import time

import pytest
from ansible_collections.hyperpod.tenancy.plugins.plugin_utils import team_file

GOOD = (
    "hyperpod_teams:\n  - name: vision\n    identity_center_group: TeamVision\n    quota:\n      resources:\n"
    "        - {instance_type: ml.p5.48xlarge, count: 4}\n"
)


def read(tmp_path, text, name="teams.yml"):
    path = tmp_path / name
    path.write_text(text)
    return team_file.read(str(path)), str(path)


def test_a_clean_file_gives_its_teams_and_where_each_value_is(tmp_path):
    found, path = read(tmp_path, GOOD)
    assert found.problems == []
    assert found.teams == [{"name": "vision", "identity_center_group": "TeamVision",
                            "quota": {"resources": [{"instance_type": "ml.p5.48xlarge", "count": 4}]}}]
    assert found.place(0, "quota.resources[0].count") == "%s:6:50" % path
    assert found.place(0, "quota.borrow_limit") == "%s:4:5" % path  # absent: the deepest value that is there
    assert found.place(0, "") == "%s:2:5" % path


def test_a_top_level_key_beside_the_teams_is_refused_naming_its_line(tmp_path):
    """Threat model 1: a key beside hyperpod_teams would be a platform variable (hyperpod_data_bucket with a lookup in it)."""
    found, path = read(tmp_path, GOOD + "hyperpod_data_bucket: \"x{{ lookup('ansible.builtin.pipe', 'touch /tmp/x') }}\"\n")
    assert any(p.startswith("%s:7:1: key 'hyperpod_data_bucket': a team file holds hyperpod_teams only" % path) for p in found.problems)
    assert any("looks like a Jinja template" in p and ":7:23:" in p for p in found.problems), found.problems
    assert found.teams[0]["name"] == "vision"  # the teams are still checked, so every problem is reported at once


@pytest.mark.parametrize("marker", ["{{ lookup('pipe', 'id') }}", "{% if true %}x{% endif %}", "{# comment #}"])
def test_text_jinja_would_read_as_a_template_is_refused_in_values_and_keys(tmp_path, marker):
    found, path = read(tmp_path, GOOD + "    description: %r\n    %r: 1\n" % (marker, marker))
    assert [p.split(": ", 1)[0] for p in found.problems] == ["%s:7:18" % path, "%s:8:5" % path], found.problems
    assert all("the team file is data and is never templated" in p for p in found.problems)


def test_an_alias_bomb_is_refused_before_anything_expands_it(tmp_path):
    """Threat model 9: five levels of nine aliases each, 1.8 KB, took ansible-inventory past 90 s."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 9):
        lines.append("a%d: &a%d [%s]" % (level, level, ", ".join(["*a%d" % (level - 1)] * 9)))
    text = "hyperpod_teams:\n  - name: vision\n    description:\n      " + "\n      ".join(lines) + "\n"
    started = time.monotonic()
    found, path = read(tmp_path, text)
    assert time.monotonic() - started < 2
    assert found.teams is None
    assert found.problems[0] == "%s:4:11: YAML anchor &a0: the team file takes no anchors or aliases (each team's entry is written out)" % path
    assert sum("YAML alias *a" in p for p in found.problems) == 8 * 9


@pytest.mark.parametrize("tagged", ["!unsafe '{{ x }}'", "!vault |\n      $ANSIBLE_VAULT;1.1;AES256", "!!python/name:os.system ''"])
def test_yaml_tags_are_refused(tmp_path, tagged):
    found, path = read(tmp_path, GOOD + "    description: %s\n" % tagged)
    assert found.teams is None
    assert found.problems[0].startswith("%s:7:18: YAML tag " % path), found.problems


def test_yaml_core_tags_and_plain_data_pass(tmp_path):
    found, unused = read(tmp_path, GOOD + "    description: !!str 10\n")
    assert found.problems == [] and found.teams[0]["description"] == "10"


def test_a_second_document_a_syntax_error_and_a_duplicate_key_are_refused(tmp_path):
    assert read(tmp_path, GOOD + "---\nhyperpod_teams: []\n")[0].problems[0].endswith("a second YAML document: the team file is one document")
    found, path = read(tmp_path, "hyperpod_teams:\n  - name: vision\n   x: [\n")
    assert found.problems == ["%s:3:4: YAML syntax error: did not find expected '-' indicator (while parsing a block collection)" % path]
    found, path = read(tmp_path, GOOD + "    quota: {}\n")
    assert found.problems == ["%s:7:5: key 'quota' is given twice in one mapping (first at line 4); YAML would keep only the last" % path]


def test_a_file_without_the_teams_or_too_large_is_refused(tmp_path):
    found, path = read(tmp_path, "- name: vision\n")
    assert found.problems == ["%s:1:1: must be a mapping with the one key hyperpod_teams" % path]
    assert read(tmp_path, "")[0].problems == ["%s: is empty: it must define hyperpod_teams" % path]
    found, path = read(tmp_path, "hyperpod_teams: []\n# " + "x" * team_file.MAX_BYTES + "\n")
    assert found.teams is None and "a team file is at most %d bytes" % team_file.MAX_BYTES in found.problems[0]


@pytest.mark.parametrize("where", ["group_vars/all/teams.yml", "inventory/group_vars/teams/teams.yml", "host_vars/localhost/teams.yml"])
def test_a_team_file_where_ansible_loads_variables_is_refused(tmp_path, where):
    """Threat model 1: in group_vars or host_vars, Ansible loads every key of the file as a trusted variable."""
    problems = team_file.placement_problems(str(tmp_path / where))
    assert len(problems) == 1 and "whose every key Ansible loads as a trusted variable" in problems[0]


def test_a_team_file_inside_the_inventory_directory_is_refused(tmp_path):
    assert "inside the inventory directory" in team_file.placement_problems(str(tmp_path / "inventory" / "teams.yml"), str(tmp_path / "inventory"))[0]
    assert team_file.placement_problems(str(tmp_path / "teams" / "teams.yml"), str(tmp_path / "inventory")) == []


def test_a_team_directory_gives_each_file_one_team_named_as_the_file(tmp_path):
    """Threat model 0: with one file per team, the code host's owners file gives each team's entry to its lead only."""
    directory = tmp_path / "teams"
    directory.mkdir()
    (directory / "vision.yml").write_text(GOOD)
    (directory / "nlp.yml").write_text("hyperpod_teams:\n  - name: nlp\n    identity_center_group: TeamNLP\n    cost_center: CC-2\n")
    found = team_file.read(str(directory))
    assert found.problems == []
    assert [t["name"] for t in found.teams] == ["nlp", "vision"]
    assert found.place(0, "cost_center") == "%s:4:18" % (directory / "nlp.yml")
    assert found.place(1, "quota.resources[0].count") == "%s:6:50" % (directory / "vision.yml")


def test_a_file_of_the_team_directory_that_holds_another_team_is_refused(tmp_path):
    """Threat model 0: vision's lead, who owns teams/vision.yml, cannot write nlp's entry there."""
    directory = tmp_path / "teams"
    directory.mkdir()
    (directory / "vision.yml").write_text(GOOD + "  - name: nlp\n    identity_center_group: TeamVision\n")
    (directory / "nlp.yml").write_text(GOOD)
    problems = team_file.read(str(directory)).problems
    assert problems == ["%s: a file of the team directory holds one team, named as the file: %s" % (directory / name, name[:-len(".yml")])
                        for name in ("nlp.yml", "vision.yml")]
