"""plugins/module_utils/data_repository.py: the team's S3 prefix and its ownership mark, against moto's S3 in this process.

The mark is ``_hyperpod/owners/<team>`` (under the platform's prefix, which no team policy names), not the object
``<team>/`` inside the prefix any member may overwrite (issue 36, case 4). Each S3 call a function makes is recorded.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import data_repository as dr
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError

from tests.unit.plugins.module_utils.conftest import S3_BUCKET

BUCKET = S3_BUCKET
MARKS = {"managed-by": "hyperpod.tenancy", "team": "vision"}
MARK = "_hyperpod/owners/vision"
NEW_MARK = {"bucket": BUCKET, "prefix": "vision/", "marker": True, "mark": f"s3://{BUCKET}/{MARK}", "tags": MARKS}


def tags_of(s3, key):
    return {t["Key"]: t["Value"] for t in s3.get_object_tagging(Bucket=BUCKET, Key=key)["TagSet"]}


def keys(s3, prefix=""):
    return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", []))


def test_the_mark_is_written_under_the_platform_prefix_and_not_inside_the_teams_prefix(s3):
    assert dr.ensure_prefix_present(s3, BUCKET, "vision", MARKS, False)[0] is True
    assert keys(s3) == [MARK]
    assert tags_of(s3, MARK) == MARKS
    s3.clear()
    assert dr.ensure_prefix_present(s3, BUCKET, "vision", MARKS, False) == (False, NEW_MARK, NEW_MARK)
    assert s3.calls == ["GetObjectTagging"]


def test_a_members_put_object_on_the_old_mark_place_changes_nothing(s3):
    """Threat model (issue 36, case 4): a member of the team, who may PutObject anything under <team>/, writes the old
    mark's place (one PutObject on <team>/ stripped the old mark's tags): the mark, elsewhere, is untouched and the prefix
    is still the team's, with nothing to write."""
    dr.ensure_prefix_present(s3, BUCKET, "vision", MARKS, False)
    s3.put_object(Bucket=BUCKET, Key="vision/", Body=b"")
    s3.put_object(Bucket=BUCKET, Key="vision/results.csv", Body=b"a,b\n")
    found = dr.read_prefix(s3, BUCKET, "vision")
    assert found == {"bucket": BUCKET, "tags": MARKS, "legacy": False, "objects": None}
    assert dr.prefix_owner_problem(BUCKET, "vision", found["tags"], found["objects"], legacy=found["legacy"]) is None
    s3.clear()
    assert dr.ensure_prefix_present(s3, BUCKET, "vision", MARKS, False, known=found)[0] is False
    assert s3.calls == []


def test_the_mark_read_earlier_in_the_run_spares_the_reads_and_a_difference_reads_it_again(s3):
    dr.ensure_prefix_present(s3, BUCKET, "vision", MARKS, False)
    known = dr.read_prefix(s3, BUCKET, "vision")
    s3.clear()
    assert dr.ensure_prefix_present(s3, BUCKET, "nlp", dict(MARKS, team="nlp"), True, known={"bucket": BUCKET, "tags": None, "objects": False})[0]
    assert s3.calls == []
    assert dr.ensure_prefix_present(s3, BUCKET, "vision", MARKS, False, known=known)[0] is False
    assert s3.calls == []
    # Without a mark: check mode predicts from the copy; a real run reads again (the mark, the prefix's first key), then writes.
    empty = {"bucket": BUCKET, "tags": None, "legacy": False, "objects": False}
    assert dr.ensure_prefix_present(s3, BUCKET, "nlp", dict(MARKS, team="nlp"), False, known=empty)[0] is True
    assert s3.calls == ["GetObjectTagging", "ListObjectsV2", "PutObject", "GetObjectTagging"]
    assert tags_of(s3, "_hyperpod/owners/nlp") == dict(MARKS, team="nlp")


def test_the_copy_is_checked_as_the_prefix_is(s3):
    data = {"bucket": BUCKET, "tags": None, "legacy": False, "objects": True}
    with pytest.raises(InputError, match=r"holds objects but no ownership mark s3://data/_hyperpod/owners/vision made by hyperpod\.tenancy"):
        dr.ensure_prefix_present(s3, BUCKET, "vision", MARKS, True, known=data)
    theirs = {"bucket": BUCKET, "tags": dict(MARKS, team="nlp"), "legacy": False, "objects": None}
    with pytest.raises(InputError, match=r"\(its ownership mark s3://data/_hyperpod/owners/vision\) belongs to team nlp"):
        dr.ensure_prefix_present(s3, BUCKET, "vision", MARKS, True, adopt=True, known=theirs)
    assert s3.calls == []


def test_a_broken_mark_refuses_the_prefix_and_the_layer_writes_nothing(s3):
    dr.ensure_prefix_present(s3, BUCKET, "vision", MARKS, False)
    # Stripped by hand (an admin; no team policy reaches it).
    s3.delete_object_tagging(Bucket=BUCKET, Key=MARK)
    s3.clear()
    with pytest.raises(InputError, match=r"its tags: no tags"):
        dr.ensure_prefix_present(s3, BUCKET, "vision", MARKS, False)
    assert [call for call in s3.calls if not call.startswith(("Get", "List"))] == []
    assert tags_of(s3, MARK) == {}


def test_an_old_mark_made_for_the_team_is_taken_then_moved(s3):
    """Migration: the mark the collection made at <team>/ is read while no new mark exists; the next run moves it."""
    s3.put_object(Bucket=BUCKET, Key="vision/", Body=b"", Tagging=urlencode(MARKS))
    s3.put_object(Bucket=BUCKET, Key="vision/results.csv", Body=b"a,b\n")
    found = dr.read_prefix(s3, BUCKET, "vision")
    assert found == {"bucket": BUCKET, "tags": MARKS, "legacy": True, "objects": None}
    assert dr.prefix_owner_problem(BUCKET, "vision", MARKS, None, legacy=True) is None
    s3.clear()
    changed, before, after = dr.ensure_prefix_present(s3, BUCKET, "vision", MARKS, True, known=found)
    assert (changed, before["mark"], after["mark"]) == (True, "s3://data/vision/", f"s3://{BUCKET}/{MARK}")
    assert s3.calls == []
    assert dr.ensure_prefix_present(s3, BUCKET, "vision", MARKS, False, known=found) == (True, before, NEW_MARK)
    assert keys(s3) == [MARK, "vision/results.csv"]
    assert tags_of(s3, MARK) == MARKS
    s3.clear()
    assert dr.ensure_prefix_present(s3, BUCKET, "vision", MARKS, False)[0] is False
    assert s3.calls == ["GetObjectTagging"]


def test_an_old_mark_place_stripped_of_its_tags_is_refused_and_adopted_it_is_left_in_place(s3):
    s3.put_object(Bucket=BUCKET, Key="vision/", Body=b"a member's object")
    found = dr.read_prefix(s3, BUCKET, "vision")
    assert found["legacy"] is True and found["tags"] == {}
    problem = dr.prefix_owner_problem(BUCKET, "vision", found["tags"], found["objects"], legacy=True)
    assert problem.startswith(
        "S3 prefix s3://data/vision/ (its old ownership mark, to be moved to s3://data/_hyperpod/owners/vision, s3://data/vision/) exists and "
        "was not made by hyperpod.tenancy for team vision"), problem
    with pytest.raises(InputError):
        dr.ensure_prefix_present(s3, BUCKET, "vision", MARKS, False)
    assert dr.ensure_prefix_present(s3, BUCKET, "vision", MARKS, False, adopt=True)[0] is True
    # Adopted, it may be anyone's object: the mark is written, the object stays.
    assert keys(s3) == [MARK, "vision/"]


def test_a_mark_written_by_another_run_between_the_reads_is_read_again_not_taken_for_foreign_objects(s3):
    s3.put_object(Bucket=BUCKET, Key="vision/results.csv", Body=b"a,b\n")

    def other_run(their_tags):
        def write(**kwargs):
            s3.meta.events.unregister("after-call.s3.ListObjectsV2", handler)
            s3.put_object(Bucket=BUCKET, Key=MARK, Body=b"", Tagging=urlencode(their_tags))

        handler = write
        s3.meta.events.register("after-call.s3.ListObjectsV2", handler)

    other_run(MARKS)
    s3.clear()
    assert dr.ensure_prefix_present(s3, BUCKET, "vision", MARKS, False) == (False, NEW_MARK, NEW_MARK)
    assert s3.calls == ["GetObjectTagging", "ListObjectsV2", "PutObject", "GetObjectTagging"]
    s3.delete_object(Bucket=BUCKET, Key=MARK)
    other_run(dict(MARKS, team="nlp"))
    s3.clear()
    with pytest.raises(InputError, match="belongs to team nlp"):
        dr.ensure_prefix_present(s3, BUCKET, "vision", MARKS, False)
    assert s3.calls.count("PutObject") == 1  # the other run's


def test_offboarding_keeps_a_prefix_with_its_mark_and_removes_the_mark_of_an_empty_one(s3):
    dr.ensure_prefix_present(s3, BUCKET, "vision", MARKS, False)
    s3.put_object(Bucket=BUCKET, Key="vision/results.csv", Body=b"a,b\n")
    changed, before, after, details = dr.ensure_prefix_absent(s3, BUCKET, "vision", "keep", False)
    assert (changed, details) == (False, {"action": "kept", "objects": 1})
    assert keys(s3) == [MARK, "vision/results.csv"]
    # An empty prefix leaves nothing: its mark goes (predicted in check mode).
    dr.ensure_prefix_present(s3, BUCKET, "nlp", dict(MARKS, team="nlp"), False)
    s3.clear()
    assert dr.ensure_prefix_absent(s3, BUCKET, "nlp", "keep", True)[0] is True
    assert "DeleteObjects" not in s3.calls
    assert dr.ensure_prefix_absent(s3, BUCKET, "nlp", "keep", False)[3] == {"action": "none", "objects": 0}
    assert keys(s3) == [MARK, "vision/results.csv"]
    assert dr.ensure_prefix_absent(s3, BUCKET, "nlp", "keep", False)[0] is False


def test_offboarding_with_delete_deletes_the_objects_and_the_mark_old_or_new(s3):
    s3.put_object(Bucket=BUCKET, Key="vision/", Body=b"", Tagging=urlencode(MARKS))
    s3.put_object(Bucket=BUCKET, Key="vision/results.csv", Body=b"a,b\n")
    changed, before, after, details = dr.ensure_prefix_absent(s3, BUCKET, "vision", "delete", False, confirm_delete="vision")
    assert (changed, details, before["objects"], after["objects"]) == (True, {"action": "deleted", "objects": 1}, 1, 0)
    assert keys(s3) == []
    # Objects without a mark are not the team's to delete.
    s3.put_object(Bucket=BUCKET, Key="nlp/results.csv", Body=b"a,b\n")
    with pytest.raises(InputError, match="holds objects but no ownership mark"):
        dr.ensure_prefix_absent(s3, BUCKET, "nlp", "delete", False, confirm_delete="nlp")
    assert keys(s3) == ["nlp/results.csv"]


def test_no_team_policy_can_write_or_untag_a_mark_or_a_ledger_entry():
    """Threat model (issue 36, cases 4 and 5): the marks and the ledger are where no team principal reaches. Every policy a
    team's principals carry (its permission set's, its Studio execution role's and its pods' data policy), for team names
    the validator accepts, the shortest and those that spell the platform prefix's words, grants no S3 action on them: not
    as a sample key, nor as the pattern of every key there (Access Analyzer's question, iam_evaluation)."""
    import re

    from ansible_collections.hyperpod.tenancy.plugins.module_utils import execution_role, iam_evaluation, naming, retired_names
    from ansible_collections.hyperpod.tenancy.plugins.module_utils.isolation import S3_ACTIONS
    from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_policy import render_team_policy

    from tests.unit.plugins.module_utils.sample_account import ACCOUNT, EKS_ARN, HYPERPOD_ARN, REGION
    from tests.unit.plugins.module_utils.sample_account import BUCKET as DATA

    actions = sorted(set(S3_ACTIONS.values()) | {"s3:PutObjectTagging", "s3:DeleteObjectTagging", "s3:PutObjectAcl", "s3:*"})
    places = [dr.mark_key("vision"), dr.MARKS_PREFIX + "*", retired_names.entry_key("vision"), retired_names.LEDGER_PREFIX + "*", naming.PLATFORM_PREFIX + "*"]
    assert all(place.startswith(naming.PLATFORM_PREFIX) and place[0] == "_" for place in places)
    for team in ("a", "0", "vision", "hyperpod", "owners", "retired", "h-yperpod"):
        assert re.fullmatch(naming.DNS_LABEL_PATTERN, team) and not naming.name_problems(team)
        documents = [render_team_policy(team, ACCOUNT, REGION, DATA, HYPERPOD_ARN, EKS_ARN), execution_role.team_data_policy(DATA, team)]
        resources = ["arn:aws:s3:::%s/%s" % (DATA, place) for place in places]
        for document in documents:
            assert iam_evaluation.access_granting_statements(document, actions, resources) == [], (team, document)
        who = iam_evaluation.Principal(ACCOUNT, [(str(index), document) for index, document in enumerate(documents)])
        for resource in resources:
            for action in actions:
                assert iam_evaluation.evaluate(who, action, resource)["EvalDecision"] != "allowed", (team, action, resource)
    # A team name never starts with the prefix's "_": the validator's pattern refuses it.
    assert naming.name_problems("_hyperpod")
