"""plugins/module_utils/retired_names.py: the ledger of teams offboarded with their data kept, against moto's S3.

Threat model (issue 36, case 5 and case 7's first gap): after offboarding with ``on_remove: keep``, a new team entry that
reuses the name (another Identity Center group), or the gid, would read the old team's kept data.
"""

from __future__ import annotations

import datetime
import json

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import data_repository, retired_names

from tests.unit.plugins.module_utils.conftest import S3_BUCKET

BUCKET = S3_BUCKET
THEN = datetime.datetime(2025, 6, 1, 9, 0, tzinfo=datetime.UTC)
LATER = datetime.datetime(2025, 7, 1, 9, 0, tzinfo=datetime.UTC)


def team(name, gid=None, state="present", group=None):
    return {"name": name, "state": state, "identity_center_group": group, "storage": {"gid": gid}}


def entry(s3, name):
    return json.loads(s3.get_object(Bucket=BUCKET, Key="_hyperpod/retired/" + name)["Body"].read())


def test_offboarding_records_the_team_once_and_again_only_when_it_changes(s3):
    changed, before, after = retired_names.ensure_retired(s3, BUCKET, "research", 20300, "TeamResearch", ["/fsx/research"], True, THEN)
    assert (changed, before) == (True, None)
    assert "PutObject" not in s3.calls
    assert retired_names.ensure_retired(s3, BUCKET, "research", 20300, "TeamResearch", ["/fsx/research"], False, THEN)[0] is True
    assert entry(s3, "research") == {
        "team": "research", "gid": 20300, "identity_center_group": "TeamResearch", "offboarded_at": "2025-06-01T09:00:00Z",
        "kept": ["/fsx/research"], "inherited_by": [],
    }
    # Offboarding runs again while the team file keeps the team absent: nothing changes, the date stays.
    assert retired_names.ensure_retired(s3, BUCKET, "research", 20300, "TeamResearch", ["/fsx/research"], False, LATER)[0] is False
    assert entry(s3, "research")["offboarded_at"] == "2025-06-01T09:00:00Z"


def test_the_ledger_is_one_listing_and_a_read_per_entry(s3):
    retired_names.ensure_retired(s3, BUCKET, "research", 20300, "TeamResearch", ["/fsx/research"], False, THEN)
    retired_names.ensure_retired(s3, BUCKET, "nlp", None, "TeamNLP", ["s3://data/nlp/"], False, THEN)
    s3.put_object(Bucket=BUCKET, Key="_hyperpod/retired/vision", Body=b"not json")
    s3.put_object(Bucket=BUCKET, Key="_hyperpod/owners/vision", Body=b"")
    del s3.calls[:]
    ledger = retired_names.read_ledger(s3, BUCKET)
    assert sorted(s3.calls) == ["GetObject", "GetObject", "GetObject", "ListObjectsV2"]
    assert sorted(ledger) == ["nlp", "research", "vision"]
    # An entry that cannot be read still claims its name.
    assert ledger["vision"] == {"team": "vision", "gid": None, "unreadable": True}


def test_a_new_team_of_a_retired_name_or_gid_is_refused_naming_the_retired_team_its_gid_and_date(s3):
    retired_names.ensure_retired(s3, BUCKET, "research", 20300, "TeamResearch", ["/fsx/research", "s3://data/research/"], False, THEN)
    ledger = retired_names.read_ledger(s3, BUCKET)
    teams = [team("research", 20400, group="TeamNewResearch"), team("speech", 20300), team("vision", 20100), team("old", 20300, state="absent")]
    problems, takes = retired_names.ledger_problems(teams, ledger, BUCKET)
    assert takes == {} and sorted(problems) == ["research", "speech"]
    described = ("retired team research (Identity Center group TeamResearch, gid 20300, offboarded 2025-06-01T09:00:00Z, its data kept: "
                 "/fsx/research, s3://data/research/), recorded in s3://data/_hyperpod/retired/research: a new team must not read that data")
    assert problems["research"] == ["its name research is that of " + described + ". Give the team another name and gid; or, for it to inherit "
                                    "that data, the platform sets hyperpod_inherit: {research: research} in the cluster file"]
    assert problems["speech"][0].startswith("its gid 20300 (storage.gid) is that of " + described)
    both = retired_names.ledger_problems([team("research", 20300)], ledger, BUCKET)[0]
    assert both["research"][0].startswith("its name research and its gid 20300 (storage.gid) are those of retired team research")


def test_a_team_the_platform_lets_inherit_takes_the_entry_and_then_no_one_else_takes_what_it_took(s3):
    retired_names.ensure_retired(s3, BUCKET, "research", 20300, "TeamResearch", ["/fsx/research"], False, THEN)
    ledger = retired_names.read_ledger(s3, BUCKET)
    teams = [team("research", 20400, group="TeamNewResearch")]
    problems, takes = retired_names.ledger_problems(teams, ledger, BUCKET, {"research": "research"})
    assert (problems, takes) == ({}, {"research": ["research"]})
    del s3.calls[:]
    changed, before, after = retired_names.ensure_inherited(s3, BUCKET, "research", 20400, "TeamNewResearch", ["research"], True, LATER)
    assert changed is True and "PutObject" not in s3.calls
    assert retired_names.ensure_inherited(s3, BUCKET, "research", 20400, "TeamNewResearch", ["research"], False, LATER)[0] is True
    assert entry(s3, "research")["inherited_by"] == [{"team": "research", "gid": 20400, "identity_center_group": "TeamNewResearch",
                                                      "at": "2025-07-01T09:00:00Z"}]
    assert retired_names.ensure_inherited(s3, BUCKET, "research", 20400, "TeamNewResearch", ["research"], False, LATER)[0] is False
    ledger = retired_names.read_ledger(s3, BUCKET)
    # The name is taken: without the setting the heir goes on. The gid 20300 was not taken: a team of it is still refused.
    assert retired_names.ledger_problems(teams, ledger, BUCKET) == ({}, {})
    assert list(retired_names.ledger_problems([team("speech", 20300)], ledger, BUCKET)[0]) == ["speech"]
    # Retired in its turn, the heir is the entry's new team: its name is claimed again.
    assert retired_names.ensure_retired(s3, BUCKET, "research", 20400, "TeamNewResearch", ["/fsx/research"], False, LATER)[0] is True
    assert entry(s3, "research")["inherited_by"] == []
    assert list(retired_names.ledger_problems(teams, retired_names.read_ledger(s3, BUCKET), BUCKET)[0]) == ["research"]


@pytest.mark.parametrize("inherit, problem", [
    (["research"], "hyperpod_inherit: must map a team's name to the retired team it inherits (or a list of them), not list"),
    ({"Research": "research"}, "hyperpod_inherit: key 'Research' is not a team name"),
    ({"research": None}, "hyperpod_inherit.research: must be the name of a retired team, or a list of them, not None"),
    ({"research": []}, "hyperpod_inherit.research: must be the name of a retired team, or a list of them, not []"),
    ({"research": ["nlp", 3]}, "hyperpod_inherit.research: 3 is not a team name"),
])
def test_the_inherit_setting_has_one_shape(inherit, problem):
    problems = retired_names.inherit_problems(inherit)
    assert len(problems) == 1 and problems[0].startswith(problem), problems
    assert retired_names.inherit_problems({"research": "research", "speech": ["research", "nlp"]}) == []


class Context:
    def __init__(self, s3, check_mode=False):
        self.s3, self.check_mode, self.warnings = s3, check_mode, []

    def client(self, service):
        assert service == "s3"
        return self.s3

    def warn(self, message):
        self.warnings.append(message)


def offboarding(**overrides):
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

    params = dict(dict(team="research", bucket=BUCKET, state="absent"), **overrides)
    return ArgumentSpecValidator(**data_repository.PREFIX_MODULE_OPTIONS).validate(params).validated_parameters


def test_the_prefix_layer_records_an_offboarding_that_kept_data_and_only_that(s3):
    retire = {"gid": 20300, "identity_center_group": "TeamResearch", "kept": []}
    # Nothing kept anywhere: no entry.
    result = data_repository.converge_prefix(Context(s3), offboarding(retire=retire))
    assert (result["changed"], result["retired"]) == (False, None)
    assert retired_names.read_ledger(s3, BUCKET) == {}
    # Objects kept under the prefix: recorded, in check mode only predicted.
    s3.put_object(Bucket=BUCKET, Key="research/results.csv", Body=b"a,b\n")
    result = data_repository.converge_prefix(Context(s3, check_mode=True), offboarding(retire=retire))
    assert result["changed"] is True and result["retired"]["kept"] == ["s3://data/research/"]
    assert retired_names.read_ledger(s3, BUCKET) == {}
    result = data_repository.converge_prefix(Context(s3), offboarding(retire=retire))
    assert result["changed"] is True and result["diff"]["after"]["retired"]["gid"] == 20300
    assert entry(s3, "research")["kept"] == ["s3://data/research/"]
    assert data_repository.converge_prefix(Context(s3), offboarding(retire=retire))["changed"] is False
    # A kept FSx directory is recorded even with an empty prefix.
    kept_dir = dict(retire, kept=["/fsx/speech"])
    result = data_repository.converge_prefix(Context(s3), offboarding(retire=kept_dir, team="speech"))
    assert result["retired"]["kept"] == ["/fsx/speech"] and entry(s3, "speech")["gid"] == 20300


def test_the_team_that_inherits_hands_the_entries_to_its_prefix_layer_and_others_hand_none():
    from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_layer_args import team_layer_args

    shared = {"team_inherits": {"research": ["research"]}, "data_bucket": BUCKET, "name_prefix": "hyperpod"}
    heir = {"name": "research", "identity_center_group": "TeamNewResearch", "storage": {"gid": 20400}}
    assert team_layer_args(heir, shared, layers=["s3_prefix"])["s3_prefix"]["inherit"] == {
        "retired": ["research"], "gid": 20400, "identity_center_group": "TeamNewResearch"}
    assert "inherit" not in team_layer_args({"name": "vision", "identity_center_group": "TeamVision"}, shared, layers=["s3_prefix"])["s3_prefix"]


def test_a_confirmed_delete_that_keeps_nothing_frees_the_name(s3):
    s3.put_object(Bucket=BUCKET, Key="_hyperpod/owners/research", Body=b"", Tagging="managed-by=hyperpod.tenancy&team=research")
    s3.put_object(Bucket=BUCKET, Key="research/results.csv", Body=b"a,b\n")
    data_repository.converge_prefix(Context(s3), offboarding())
    assert list(retired_names.read_ledger(s3, BUCKET)) == ["research"]
    result = data_repository.converge_prefix(Context(s3), offboarding(on_remove="delete", confirm_delete="research"))
    assert (result["changed"], result["action"], result["retired"]) == (True, "deleted", None)
    assert result["diff"]["before"]["retired"]["team"] == "research"
    assert retired_names.read_ledger(s3, BUCKET) == {}


# ---------------------------------------------------------------- a team deleted from the team file (no offboarding)

SHARED = {"data_bucket": BUCKET, "name_prefix": "hyperpod"}
GROUP_IDS = {"TeamResearch": "9067a4c2f1-research", "TeamIntruders": "9067a4c2f1-intruders", "TeamMl": "9067a4c2f1-ml"}


def converge_prefix_as_a_run_does(s3, team, shared_info=None):
    """The team's S3 prefix layer with the options the team role hands it (team_layer_args), as team_resources runs it."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
    from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_layer_args import team_layer_args

    options = team_layer_args(team, dict(SHARED, **(shared_info or {})), layers=["s3_prefix"])["s3_prefix"]
    params = ArgumentSpecValidator(**data_repository.PREFIX_MODULE_OPTIONS).validate(dict(options, state="present")).validated_parameters
    return data_repository.converge_prefix(Context(s3), params)


def what_shared_info_reads(s3, teams):
    """shared_info's lookups of the S3 marks, of the ledger (team_resource_phases) and of the groups' ids, for ``teams``."""
    markers, others = data_repository.read_marks(s3, BUCKET, [t["name"] for t in teams])
    return {
        "s3_markers": markers, "s3_owner_marks": others, "retired_names": retired_names.read_ledger(s3, BUCKET),
        "identity_center_group_ids": GROUP_IDS,
    }


def mark_tags(s3, name):
    return dict((t["Key"], t["Value"]) for t in s3.get_object_tagging(Bucket=BUCKET, Key="_hyperpod/owners/" + name)["TagSet"])


def test_a_team_removed_from_the_file_without_offboarding_does_not_hand_its_kept_data_to_a_new_team_of_its_name(s3):
    """Threat model (issue 36, cases 5 and 7): a name is not an identity. Team ``research`` (group TeamResearch, gid 20300)
    ran and wrote data; its entry is then deleted from the team file (a pull request that removes the entry, not one
    that sets ``state: absent``), so no offboarding ran and the ledger of retired names holds nothing. A later entry
    ``research`` of another Identity Center group and gid must not take that data without the platform's
    ``hyperpod_inherit``: the mark ``_hyperpod/owners/research`` records the old team's group id, and shared_info refuses
    the new team (that team only) before its first write, so its permission set never reaches ``s3://<bucket>/research/``."""
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import shared

    old = team("research", 20300, group="TeamResearch")
    converge_prefix_as_a_run_does(s3, old, {"identity_center_group_ids": GROUP_IDS})
    s3.put_object(Bucket=BUCKET, Key="research/patients.csv", Body=b"kept data\n")
    # The entry is deleted from the file: nothing runs for research any more.
    new, other = team("research", 20400, group="TeamIntruders"), team("ml", 20500, group="TeamMl")
    problems, takes = shared.team_problems([new, other], what_shared_info_reads(s3, [new, other]), "hyperpod", data_bucket=BUCKET)
    assert list(problems) == ["research"] and takes == {}, (
        "a new team named research (another group, another gid) takes the kept data of the research removed from the file"
    )
    assert problems["research"] == [
        "its S3 prefix's ownership mark s3://data/_hyperpod/owners/research records Identity Center group id 9067a4c2f1-research (gid 20300), "
        "not 9067a4c2f1-intruders of its group TeamIntruders: a team of the name research with another group ran and was deleted from the team "
        "file, its data kept (s3://data/research/, and its FSx directory): a new team must not read that data. Give the team another name; "
        "or, for it to inherit that data, the platform sets hyperpod_inherit: {research: research} in the cluster file"
    ]
    # And the platform's hyperpod_inherit still lets it, as for an offboarded team; its layer then records its own group.
    problems, takes = shared.team_problems([new], what_shared_info_reads(s3, [new]), "hyperpod", data_bucket=BUCKET, inherit={"research": "research"})
    assert problems == {}
    converge_prefix_as_a_run_does(s3, new, {"identity_center_group_ids": GROUP_IDS})
    assert shared.team_problems([new], what_shared_info_reads(s3, [new]), "hyperpod", data_bucket=BUCKET)[0] == {}


def test_the_gid_of_a_team_removed_from_the_file_is_not_free_for_a_new_team(s3):
    """Threat model (issue 36, case 7, its first gap as the issue states it: "the gid of a team removed from the file while
    its data is kept can be taken by a new team"). The ledger knows only teams offboarded through ``state: absent``; the
    cross-team gid check (team_model._check_across_teams) sees only the teams in the file. Team ``research`` (gid 20300)
    ran, and its entry was then deleted from the file: its directory ``<root>/research`` keeps group 20300 and its mark
    records that gid, so a new team ``ml`` with ``storage.gid: 20300`` is refused, and so is a new team of the name."""
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import shared

    converge_prefix_as_a_run_does(s3, team("research", 20300, group="TeamResearch"), {"identity_center_group_ids": GROUP_IDS})
    s3.put_object(Bucket=BUCKET, Key="research/patients.csv", Body=b"kept data\n")
    newcomer = team("ml", 20300, group="TeamMl")
    problems, unused_takes = shared.team_problems([newcomer], what_shared_info_reads(s3, [newcomer]), "hyperpod", data_bucket=BUCKET)
    assert "ml" in problems, "team ml takes gid 20300 of the research removed from the file, whose directory keeps that group"
    assert problems["ml"][0].startswith(
        "its gid 20300 (storage.gid) is that of removed team research (Identity Center group id 9067a4c2f1-research, gid 20300, not present "
        "in the team file, never offboarded, its data kept: s3://data/research/), recorded in s3://data/_hyperpod/owners/research")
    # The platform lets it inherit; an absent entry's mark claims the same way until offboarding records or frees it.
    assert shared.team_problems([newcomer], what_shared_info_reads(s3, [newcomer]), "hyperpod", data_bucket=BUCKET, inherit={"ml": "research"})[0] == {}
    absent = team("research", None, state="absent")
    assert list(shared.team_problems([newcomer, absent], what_shared_info_reads(s3, [newcomer]), "hyperpod", data_bucket=BUCKET)[0]) == ["ml"]


def test_the_mark_records_the_teams_group_id_and_gid_not_what_the_team_file_tags_say(s3):
    """Threat model (issue 36, cases 5 and 7): what the mark records is the platform's (Identity Center's group id, the
    team's gid), never the team file's extra tags, which a lead writes: a ``tags`` entry of the same keys is not taken."""
    forged = dict(team("research", 20300, group="TeamResearch"), tags={"hyperpod.tenancy/identity-center-group-id": "9067a4c2f1-intruders"})
    converge_prefix_as_a_run_does(s3, forged, {"identity_center_group_ids": GROUP_IDS})
    tags = mark_tags(s3, "research")
    assert (tags["hyperpod.tenancy/identity-center-group-id"], tags["hyperpod.tenancy/gid"]) == ("9067a4c2f1-research", "20300")
    # A layer that is not told the group (no shared_info) keeps what the mark records.
    converge_prefix_as_a_run_does(s3, team("research", 20300, group="TeamResearch"))
    assert mark_tags(s3, "research")["hyperpod.tenancy/identity-center-group-id"] == "9067a4c2f1-research"


def test_a_mark_made_before_it_recorded_the_group_is_tagged_and_refuses_no_one(s3):
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import shared

    s3.put_object(Bucket=BUCKET, Key="_hyperpod/owners/research", Body=b"", Tagging="managed-by=hyperpod.tenancy&team=research")
    present = team("research", 20300, group="TeamResearch")
    assert shared.team_problems([present], what_shared_info_reads(s3, [present]), "hyperpod", data_bucket=BUCKET)[0] == {}
    result = converge_prefix_as_a_run_does(s3, present, {"identity_center_group_ids": GROUP_IDS})
    assert result["changed"] is True
    assert mark_tags(s3, "research") == {"managed-by": "hyperpod.tenancy", "team": "research",
                                         "hyperpod.tenancy/identity-center-group-id": "9067a4c2f1-research", "hyperpod.tenancy/gid": "20300"}
    assert converge_prefix_as_a_run_does(s3, present, {"identity_center_group_ids": GROUP_IDS})["changed"] is False


def test_the_marks_are_one_listing_and_a_read_per_mark(s3):
    for name in ("research", "vision", "gone"):
        s3.put_object(Bucket=BUCKET, Key="_hyperpod/owners/" + name, Body=b"", Tagging="managed-by=hyperpod.tenancy&team=" + name)
    del s3.calls[:]
    markers, others = data_repository.read_marks(s3, BUCKET, ["research", "vision"])
    assert sorted(s3.calls) == ["GetObjectTagging", "GetObjectTagging", "GetObjectTagging", "ListObjectsV2"]
    assert sorted(markers) == ["research", "vision"] and list(others) == ["gone"]


def _storage_offboarding_tasks():
    import pathlib

    import yaml

    root = pathlib.Path(__file__).resolve().parents[4]
    tasks = yaml.safe_load((root / "roles" / "storage" / "tasks" / "main.yml").read_text())
    by_module = {}
    for task in tasks:
        for module in ("hyperpod.tenancy.fsx_team_dir", "hyperpod.tenancy.s3_team_prefix"):
            if module in task:
                by_module[module] = task
    return by_module["hyperpod.tenancy.fsx_team_dir"], by_module["hyperpod.tenancy.s3_team_prefix"]


def test_offboarding_records_the_kept_directory_whatever_the_absent_entry_says_of_its_gid():
    """Threat model (issue 36, cases 5 and 7): the team file is the lead's, so what the ledger of retired names records must
    not come from it. Offboarding a team (``state: absent``) must run the FSx directory's offboarding whatever the absent
    entry gives of ``storage.gid`` (roles/storage/tasks/main.yml), and record in the ledger the kept directory's group as
    the module read it, not the gid the entry gives. Else an entry trimmed to ``{name, identity_center_group, state: absent}``
    (the natural offboarding pull request) leaves ``<root>/<team>`` untouched and unrecorded, and an entry that gives
    another gid records that one, leaving the directory's real gid free for the taking."""
    directories, prefix = _storage_offboarding_tasks()
    conditions = directories.get("when") or []
    conditions = [conditions] if isinstance(conditions, str) else conditions
    assert not [c for c in conditions if "gid" in c], (
        "the FSx directory is offboarded (and recorded) only when the absent entry gives storage.gid: %s" % conditions
    )
    assert "storage_team.storage.gid" not in prefix["hyperpod.tenancy.s3_team_prefix"]["retire"]["gid"], (
        "the ledger records the gid the team file gives, not the kept directory's group (fsx_team_dir's diff.before)"
    )
    assert "diff.before.directories" in prefix["hyperpod.tenancy.s3_team_prefix"]["retire"]["gid"]
