"""plugins/modules/usage_report.py: the quota advice as a diff of the user's team file, or a warning where there is no one file."""

from __future__ import annotations

from ansible_collections.hyperpod.tenancy.plugins.modules import usage_report

ADVICE = {"proposals": {"vision": {"counts": {"ml.p5.48xlarge": 5}, "current": {"ml.p5.48xlarge": 4}, "borrow_limit": None, "current_borrow_limit": None}}}
TEAM_FILE = """hyperpod_teams:
  - name: vision
    quota:
      resources:
        - instance_type: ml.p5.48xlarge
          count: 4
"""


class Context:
    def __init__(self):
        self.warnings = []

    def warn(self, message):
        self.warnings.append(message)


def test_the_diff_names_the_team_file_as_given_and_changes_its_count(tmp_path):
    team_file = tmp_path / "teams.yml"
    team_file.write_text(TEAM_FILE)
    context = Context()
    diff, unplaced = usage_report.advice_diff(context, ADVICE, str(team_file), None)
    assert diff.startswith("--- %s\n+++ %s\n" % (team_file, team_file))  # outside the current directory: absolute, for patch -p0
    assert "-          count: 4\n+          count: 5\n" in diff
    assert (unplaced, context.warnings) == ([], [])


def test_a_directory_of_team_files_or_none_warns_instead_of_an_empty_diff(tmp_path):
    for team_file, says in ((str(tmp_path), "team_file %s is a directory" % tmp_path), (None, "no team_file was given")):
        context = Context()
        assert usage_report.advice_diff(context, ADVICE, team_file, None) == ("", [])
        assert context.warnings == ["usage_report: the quota advice has no diff: %s (its proposals are in advice.proposals)" % says]


def test_no_proposal_no_warning():
    context = Context()
    assert usage_report.advice_diff(context, {"proposals": {}}, None, None) == ("", [])
    assert context.warnings == []


def test_a_team_file_under_the_current_directory_is_named_relative_to_it(tmp_path, monkeypatch):
    (tmp_path / "teams").mkdir()
    (tmp_path / "teams" / "teams.yml").write_text(TEAM_FILE)
    monkeypatch.chdir(tmp_path)
    diff, _unplaced = usage_report.advice_diff(Context(), ADVICE, str(tmp_path / "teams" / "teams.yml"), None)
    assert diff.startswith("--- a/teams/teams.yml\n+++ b/teams/teams.yml\n")  # as git names it, for patch -p1
