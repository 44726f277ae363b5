"""plugins/module_utils/data_repository.py: the team's S3 prefix marker, read once per run when shared_info read it."""

from __future__ import annotations

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import data_repository as dr
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError
from botocore.exceptions import ClientError

MARKS = {"managed-by": "hyperpod.tenancy", "team": "vision"}


class FakeS3:
    """One bucket: the marker's tags (None: no marker) and whether other objects are under the prefix; every call recorded."""

    def __init__(self, tags=None, objects=False):
        self.tags, self.objects, self.calls = tags, objects, []

    def get_object_tagging(self, Bucket, Key):  # noqa: N803 - botocore's names
        self.calls.append("GetObjectTagging")
        if self.tags is None:
            raise ClientError({"Error": {"Code": "NoSuchKey", "Message": "missing"}}, "GetObjectTagging")
        return {"TagSet": [{"Key": k, "Value": v} for k, v in self.tags.items()]}

    def list_objects_v2(self, Bucket, Prefix, MaxKeys):  # noqa: N803 - botocore's names
        self.calls.append("ListObjectsV2")
        return {"Contents": [{"Key": Prefix + "data.csv"}]} if self.objects else {}

    def put_object(self, **kwargs):
        self.calls.append("PutObject")
        self.tags = dict(MARKS)


def known(client):
    """What shared_info hands on for the prefix: its marker's tags, and for a prefix without one whether it holds objects."""
    return {"bucket": "data", "tags": client.tags, "objects": None if client.tags is not None else client.objects}


def test_the_marker_read_earlier_in_the_run_spares_the_reads_and_a_difference_reads_it_again():
    client = FakeS3(tags=dict(MARKS))
    assert dr.ensure_prefix_present(client, "data", "vision", MARKS, False, known=known(client))[0] is False
    assert client.calls == []
    # Without a marker: check mode predicts from the copy; a real run reads again, then writes.
    empty = FakeS3()
    assert dr.ensure_prefix_present(empty, "data", "vision", MARKS, True, known=known(empty))[0] is True
    assert empty.calls == []
    assert dr.ensure_prefix_present(empty, "data", "vision", MARKS, False, known=known(empty))[0] is True
    assert empty.calls == ["GetObjectTagging", "ListObjectsV2", "PutObject", "GetObjectTagging"]


def test_the_copy_is_checked_as_the_prefix_is():
    data = FakeS3(objects=True)
    with pytest.raises(InputError, match="holds objects but no marker object"):
        dr.ensure_prefix_present(data, "data", "vision", MARKS, True, known=known(data))
    assert data.calls == []
    theirs = FakeS3(tags={"managed-by": "hyperpod.tenancy", "team": "nlp"})
    with pytest.raises(InputError, match="belongs to team nlp"):
        dr.ensure_prefix_present(theirs, "data", "vision", MARKS, True, adopt=True, known=known(theirs))


class OtherRunWritesTheMarker(FakeS3):
    """Another run writes the marker (with ``their_tags``) between this run's read of it and its listing of the prefix."""

    def __init__(self, their_tags):
        super().__init__()
        self.their_tags = their_tags

    def list_objects_v2(self, Bucket, Prefix, MaxKeys):  # noqa: N803 - botocore's names
        self.calls.append("ListObjectsV2")
        self.tags = dict(self.their_tags)
        return {"Contents": [{"Key": Prefix}]}


def test_a_marker_written_by_another_run_between_the_reads_is_read_again_not_taken_for_foreign_objects():
    ours = OtherRunWritesTheMarker(MARKS)
    assert dr.ensure_prefix_present(ours, "data", "vision", MARKS, False) == (
        False, {"bucket": "data", "prefix": "vision/", "marker": True, "tags": MARKS}, {"bucket": "data", "prefix": "vision/", "marker": True, "tags": MARKS},
    )
    assert ours.calls == ["GetObjectTagging", "ListObjectsV2", "GetObjectTagging"]
    theirs = OtherRunWritesTheMarker({"managed-by": "hyperpod.tenancy", "team": "nlp"})
    with pytest.raises(InputError, match="belongs to team nlp"):
        dr.ensure_prefix_present(theirs, "data", "vision", MARKS, False)
    assert "PutObject" not in theirs.calls
