"""A team lead's merged pull request, run unattended (docs/isolation.md, "The trust boundary"): each attack of issue 36
that the team file alone can try, run by the real playbook (site.yml, as the hourly job runs it, in --check and in
run mode) with the team file where users keep it (teams/teams.yml, named by the inventory), refused before the
first AWS request, with a message that names the team file's line or the field.

Each test names the line of the threat model it proves (docs/isolation.md, "Threat model and the tests").
"""

from __future__ import annotations

import copy
import time
from pathlib import Path

import pytest
import yaml

from tests.integration.playbook_runner import SAMPLE, Playbooks

MODES = (["--check", "--diff"], [])


@pytest.fixture
def lead(seeded, tmp_path):
    client, seed = seeded
    return Playbooks(client, seed, tmp_path, copy.deepcopy(SAMPLE))


def team(settings, name):
    return next(t for t in settings["hyperpod_teams"] if t["name"] == name)


def refused(playbooks, *expected, marker: Path | None = None):
    """site.yml in --check and in run mode: failed, each ``expected`` text in its output, no AWS request at all, and the
    marker file (what a template in the file would have made) absent."""
    for mode in MODES:
        playbooks.client.clear_requests()
        result = playbooks.run("site.yml", *mode)
        text = " ".join((result.stdout + result.stderr).split())
        assert result.returncode != 0, (mode, text[-3000:])
        for sentence in expected:
            assert sentence in text, (mode, sentence, text[-3000:])
        assert playbooks.client.requests() == [], mode
        if marker is not None:
            assert not marker.exists(), f"the team file ran code ({mode})"
    return text


def write_team_file(playbooks, text):
    playbooks.team_file.write_text(text)


def sample_text(playbooks):
    return yaml.safe_dump({"hyperpod_teams": playbooks.settings["hyperpod_teams"]}, sort_keys=False)


def test_a_key_beside_the_teams_runs_no_code_and_sets_no_platform_variable(lead, tmp_path):
    """Threat model 1: a top-level key of the team file (a platform variable holding a lookup) runs no code."""
    marker = tmp_path / "ran"
    text = sample_text(lead) + "hyperpod_data_bucket: \"x{{ lookup('ansible.builtin.pipe', 'touch %s') }}\"\n" % marker
    write_team_file(lead, text)
    line = len(text.splitlines())
    refused(lead, "teams/teams.yml:%d:1: key 'hyperpod_data_bucket': a team file holds hyperpod_teams only" % line,
            "teams/teams.yml:%d:23:" % line, "looks like a Jinja template", marker=marker)


def test_a_template_in_a_value_runs_no_code(lead, tmp_path):
    """Threat model 1: a value holding a template (a description with a lookup) is refused, never rendered."""
    marker = tmp_path / "ran"
    team(lead.settings, "nlp")["description"] = "{{ lookup('ansible.builtin.pipe', 'touch %s') }}" % marker
    lead.write_settings(lead.settings)
    refused(lead, "looks like a Jinja template: the team file is data and is never templated", marker=marker)


def test_a_team_file_where_ansible_loads_variables_is_refused_before_anything_is_templated(lead, tmp_path):
    """Threat model 1: the old layout (the team file in group_vars) would have Ansible load every key as a variable."""
    marker = tmp_path / "ran"
    loaded = lead.inventory / "group_vars" / "all" / "teams.yml"
    loaded.write_text(sample_text(lead) + "hyperpod_data_bucket: \"x{{ lookup('ansible.builtin.pipe', 'touch %s') }}\"\n" % marker)
    (lead.inventory / "hyperpod_teams.yml").write_text(yaml.safe_dump({"plugin": "hyperpod.tenancy.teams", "team_file": str(loaded)}))
    refused(lead, "the team file is in a group_vars directory, whose every key Ansible loads as a trusted variable",
            "the team file is inside the inventory directory", marker=marker)


def test_a_team_cannot_adopt_for_itself(lead):
    """Threat model 2: adoption is the platform's (hyperpod_adopt); a team entry's own adopt list is refused."""
    team(lead.settings, "vision")["adopt"] = ["permission_set", "directories"]
    lead.write_settings(lead.settings)
    refused(lead, "team 'vision': adopt: is the platform's decision, not the team's: the platform lists it in the cluster file's "
                  "hyperpod_adopt.vision")


@pytest.mark.parametrize("name", ["platform", "lifecycle", "datasets"])
def test_a_team_cannot_take_a_name_reserved_for_the_platform(lead, name):
    """Threat model 3: a team named as the platform's resources or paths (the admins' permission set, the lifecycle prefix,
    the datasets directory) is refused."""
    team(lead.settings, "research")["name"] = name
    lead.write_settings(lead.settings)
    refused(lead, "team '%s': name: '%s' is reserved for the platform" % (name, name))


def test_a_team_cannot_grant_itself_capacity_beyond_the_platforms_limits(lead):
    """Threat model 6: borrow limit, fair-share weight and absolute borrow limits within hyperpod_team_limits only."""
    quota = team(lead.settings, "vision")["quota"]
    quota.update(borrow_limit=500, fair_share_weight=100, absolute_borrow_limits=[{"instance_type": "ml.p5.48xlarge", "count": 8}])
    lead.write_settings(lead.settings)
    refused(lead, "team 'vision': quota.borrow_limit: 500 is above 100, the platform's maximum for this team",
            "team 'vision': quota.fair_share_weight: 100 is above 50, the platform's maximum for this team",
            "team 'vision': quota.absolute_borrow_limits[0].count: 8 is above 4: at most 100% of the 4 guaranteed of ml.p5.48xlarge")


def test_the_platform_raises_a_teams_limits_in_the_cluster_file_only(lead):
    """Threat model 6: what the platform grants one team (hyperpod_team_limits.teams) is not another's."""
    team(lead.settings, "vision")["quota"]["borrow_limit"] = 200
    team(lead.settings, "nlp")["quota"]["borrow_limit"] = 200
    lead.settings["hyperpod_team_limits"] = {"teams": {"vision": {"borrow_limit": 200}}}
    lead.write_settings(lead.settings)
    text = refused(lead, "team 'nlp': quota.borrow_limit: 200 is above 100")
    assert "team 'vision': quota.borrow_limit" not in text


def test_system_ids_and_a_mode_open_to_every_user_are_refused(lead):
    """Threat model 7: uids and gids below the platform's floor (root's group, daemon), and a mode giving others access."""
    vision = team(lead.settings, "vision")
    vision["members"][0]["uid"] = 1
    vision["storage"] = {"gid": 4, "mode": "2775"}
    lead.write_settings(lead.settings)
    refused(lead, "team 'vision': members[0].uid: 1 is below 1000, the platform's lowest uid and gid",
            "team 'vision': storage.gid: 4 is below 1000", "team 'vision': storage.mode: '2775' gives every user of the cluster access")


def test_a_present_team_cannot_take_the_group_of_a_team_being_offboarded(lead):
    """Threat model 7: the Identity Center group of a team marked absent belongs to it until it is gone."""
    team(lead.settings, "research")["state"] = "absent"
    team(lead.settings, "nlp")["identity_center_group"] = team(lead.settings, "research")["identity_center_group"]
    lead.write_settings(lead.settings)
    refused(lead, "TeamResearch is the group of nlp and research: a group belongs to one team")


def test_an_alias_bomb_is_refused_at_once(lead):
    """Threat model 9: a few kilobytes of nested aliases expand to millions of nodes; the file is refused before."""
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, 9):
        lines.append("a%d: &a%d [%s]" % (level, level, ", ".join(["*a%d" % (level - 1)] * 9)))
    text = sample_text(lead).replace("  cost_center: CC-1001\n", "  cost_center: CC-1001\n  tags:\n    " + "\n    ".join(lines) + "\n", 1)
    assert "&a0" in text
    write_team_file(lead, text)
    started = time.monotonic()
    refused(lead, "YAML anchor &a0: the team file takes no anchors or aliases", "YAML alias *a7")
    assert time.monotonic() - started < 60


def asking_for_baseline(playbooks, name):
    """The team file with ``access.pod_security: baseline`` in team ``name``'s entry; (line, column) of the value."""
    team(playbooks.settings, name).setdefault("access", {})["pod_security"] = "baseline"
    playbooks.write_settings(playbooks.settings)
    lines = playbooks.team_file.read_text().splitlines()
    start = lines.index(f"- name: {name}")
    line = next(i for i in range(start, len(lines)) if lines[i].strip() == "pod_security: baseline")
    return line + 1, lines[line].index("baseline") + 1


def test_a_team_cannot_let_its_pods_run_as_root_without_the_platform(lead):
    """Threat model 8: Pod Security baseline (root pods read every home on the team's volume) only where the platform
    allows it (hyperpod_team_limits.pod_security); what a member's pod may then do is proven on the real API server in
    tests/unit/plugins/module_utils/test_team_namespace_members.py."""
    line, column = asking_for_baseline(lead, "vision")
    refused(lead, f"teams/teams.yml:{line}:{column}: team 'vision': access.pod_security: 'baseline' is not allowed for this team: "
                  "the platform allows restricted (hyperpod_team_limits.pod_security, or hyperpod_team_limits.teams.vision.pod_security, "
                  "in the cluster file)")


def test_what_the_platform_allows_one_team_is_not_another_teams(lead):
    """Threat model 8: the platform allows baseline to vision only (hyperpod_team_limits.teams.vision); nlp is refused."""
    asking_for_baseline(lead, "vision")
    line, column = asking_for_baseline(lead, "nlp")
    lead.settings["hyperpod_team_limits"] = {"teams": {"vision": {"pod_security": ["restricted", "baseline"]}}}
    lead.write_settings(lead.settings)
    text = refused(lead, f"teams/teams.yml:{line}:{column}: team 'nlp': access.pod_security: 'baseline' is not allowed for this team")
    assert "team 'vision': access.pod_security" not in text


def test_in_a_team_directory_a_lead_writes_their_own_teams_entry_only(lead):
    """Threat model 0: one file per team (teams/<team>.yml, each given to its lead by the code host's owners file); a
    file that holds another team's entry is refused, and the directory of the sample's teams validates."""
    directory = lead.workdir / "team-files"
    directory.mkdir()
    for entry in lead.settings["hyperpod_teams"]:
        (directory / ("%s.yml" % entry["name"])).write_text(yaml.safe_dump({"hyperpod_teams": [entry]}, sort_keys=False))
    (lead.inventory / "hyperpod_teams.yml").write_text(yaml.safe_dump({"plugin": "hyperpod.tenancy.teams", "team_file": str(directory)}))
    validated = lead.run("playbooks/validate.yml")
    assert validated.returncode == 0, validated.stdout[-3000:]
    nlp = team(lead.settings, "nlp")
    (directory / "vision.yml").write_text(yaml.safe_dump({"hyperpod_teams": [team(lead.settings, "vision"), dict(nlp, state="absent")]}))
    refused(lead, "team-files/vision.yml: a file of the team directory holds one team, named as the file: vision")
