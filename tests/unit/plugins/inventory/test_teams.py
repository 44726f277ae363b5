"""The teams inventory plugin's strict YAML check: syntax errors and duplicate keys, with file, line and column."""

from __future__ import annotations

from ansible_collections.hyperpod.tenancy.plugins.inventory.teams import yaml_problems


def test_a_duplicate_key_names_both_lines(tmp_path):
    path = tmp_path / "teams.yml"
    path.write_text("hyperpod_teams:\n  - name: vision\n    budget: {monthly_usd: 1}\n    budget: {monthly_usd: 2}\n")
    assert yaml_problems(str(path)) == [
        "%s:4:5: key 'budget' is given twice in one mapping (first at line 3); YAML would keep only the last" % path]


def test_a_syntax_error_names_the_line_and_column(tmp_path):
    path = tmp_path / "cluster.yml"
    path.write_text("hyperpod_cluster:\n  name: ml-shared\n   eks: [\n")
    assert yaml_problems(str(path)) == ["%s:3:7: YAML syntax error: mapping values are not allowed in this context" % path]


def test_a_clean_file_and_ansible_tags_pass(tmp_path):
    path = tmp_path / "teams.yml"
    path.write_text("hyperpod_teams:\n  - name: vision\n    description: !unsafe '{{ x }}'\n  - name: nlp\n")
    assert yaml_problems(str(path)) == []
