"""The teams inventory plugin's strict YAML check of the platform's files: syntax errors and duplicate keys, with file,
line and column, and a platform file that would load the teams as variables."""

from __future__ import annotations

from ansible_collections.hyperpod.tenancy.plugins.inventory.teams import yaml_problems


def test_a_duplicate_key_names_both_lines(tmp_path):
    path = tmp_path / "cluster.yml"
    path.write_text("hyperpod_cluster:\n  name: ml-shared\n  scheduler: {fair_share: true}\n  scheduler: {fair_share: false}\n")
    assert yaml_problems(str(path)) == [
        "%s:4:3: key 'scheduler' is given twice in one mapping (first at line 3); YAML would keep only the last" % path]


def test_a_syntax_error_names_the_line_and_column(tmp_path):
    path = tmp_path / "cluster.yml"
    path.write_text("hyperpod_cluster:\n  name: ml-shared\n   eks: [\n")
    assert yaml_problems(str(path)) == ["%s:3:7: YAML syntax error: mapping values are not allowed in this context" % path]


def test_a_clean_platform_file_and_ansible_tags_pass(tmp_path):
    path = tmp_path / "account.yml"
    path.write_text("hyperpod_aws:\n  region: us-east-1\n  secret_key: !unsafe '{{ x }}'\n")
    assert yaml_problems(str(path)) == []


def test_a_platform_file_that_defines_the_teams_is_refused(tmp_path):
    """Threat model 1: a team file left in group_vars is loaded by Ansible as variables, every key of it trusted."""
    path = tmp_path / "teams.yml"
    path.write_text("hyperpod_teams:\n  - name: vision\n")
    assert yaml_problems(str(path)) == [
        "%s:1:1: hyperpod_teams is defined as an Ansible variable here: the teams belong in the team file, which is read as "
        "data and never loaded as variables (docs/isolation.md)" % path]
