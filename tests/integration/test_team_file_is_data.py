"""A team file is data: a value reaches AWS verbatim (or as the service must adapt it), and text Jinja would read as a
template is refused before anything could render it (the attacks themselves: test_team_lead_attacks.py)."""

from __future__ import annotations

import copy

from tests.integration.playbook_runner import SAMPLE, Playbooks, assert_ok
from tests.integration.snapshots import _permission_set


def payload(marker) -> str:
    return "{{ lookup('ansible.builtin.pipe', 'touch %s') }}" % marker


# Accented letters Identity Center keeps and characters it turns into '?' (it takes printable Latin-1 only).
NON_ASCII, NON_ASCII_IN_IDENTITY_CENTER = " Équipe vision: détection d'objets, 研究チーム", " Équipe vision: détection d'objets, ?????"


def test_a_non_ascii_description_that_looks_like_code_reaches_aws_verbatim_or_adapted_and_converges(seeded, tmp_path):
    client, seed = seeded
    marker = tmp_path / "the-command-ran"
    description = "$(touch %s) `touch %s` {x}" % (marker, marker) + NON_ASCII
    settings = copy.deepcopy(SAMPLE)
    settings["hyperpod_teams"][0]["description"] = description
    playbooks = Playbooks(client, seed, tmp_path, settings)

    assert_ok(playbooks.run("site.yml"), "site.yml")
    assert not marker.exists()
    # Identity Center gets the text as written, its non-Latin-1 characters as '?'; SageMaker the value as written.
    described = _permission_set(client.boto3_client("sso-admin"), seed["identity_center_instance_arn"], "hyperpod-vision")
    assert described["Description"] == description.replace(NON_ASCII, NON_ASCII_IN_IDENTITY_CENTER)
    quotas = client.boto3_client("sagemaker").list_compute_quotas()["ComputeQuotaSummaries"]
    vision = [q for q in quotas if q["ComputeQuotaTarget"]["TeamName"] == "vision"]
    described_quota = client.boto3_client("sagemaker").describe_compute_quota(ComputeQuotaId=vision[0]["ComputeQuotaId"])
    assert described_quota["Description"] == description

    # The adapted value converges: a rerun changes and writes nothing.
    client.clear_requests()
    rerun = playbooks.run("site.yml")
    assert_ok(rerun, "second site.yml")
    assert rerun.changed_tasks() == set()
    assert client.writes() == []
    assert not marker.exists()

    # Check mode, the hourly drift job (admin credentials), onboarding one team, the chargeback: none renders it,
    # and none sees a difference (what AWS holds is the value as written).
    for playbook, args in (("site.yml", ("--check",)), ("playbooks/drift.yml", ()), ("playbooks/add_team.yml", ("-e", "team=vision", "--check")),
                           ("playbooks/chargeback.yml", ("-e", "chargeback_month=2026-01", "-e", f"chargeback_output_dir={tmp_path}/reports"))):
        result = playbooks.run(playbook, *args)
        assert_ok(result, playbook)
        assert not marker.exists(), playbook


def test_a_template_in_a_team_name_is_refused_by_the_inventory_and_never_runs(seeded, tmp_path):
    """Threat model 1: the inventory reads the team names first; a template there is refused, never rendered."""
    client, seed = seeded
    marker = tmp_path / "the-command-ran"
    settings = copy.deepcopy(SAMPLE)
    settings["hyperpod_teams"][2]["name"] = payload(marker)
    playbooks = Playbooks(client, seed, tmp_path, settings)
    for playbook, args in (("playbooks/validate.yml", ()), ("playbooks/remove_team.yml", ("-e", "team=research", "--check"))):
        result = playbooks.run(playbook, *args)
        assert result.returncode != 0, result.stdout[-3000:]
        assert not marker.exists(), playbook
        # The name is reported as written, not as what it would render to.
        assert "looks like a Jinja template: the team file is data and is never templated" in result.stderr, result.stderr[-3000:]
    assert client.requests() == []
