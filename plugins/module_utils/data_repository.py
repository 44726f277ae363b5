# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""A team's long-lived data: its S3 prefix and the FSx data repository association that links it.

- The prefix is ``s3://<data bucket>/<team>/`` (``naming.s3_prefix``). Its ownership mark is the zero-byte object
  ``_hyperpod/owners/<team>`` with the team tags, under the platform's prefix of the bucket, where no team policy
  reaches (a member of the team may write anything under ``<team>/``). Offboarding keeps the objects unless
  ``on_remove=delete`` is confirmed with the team name, and records a team whose data it kept in the ledger of
  retired names (``retired_names``); a team the platform lets inherit one takes its entry.
- The association (DRA) links the team's export directory, FSx for Lustre path ``/<team>/s3-export``
  (``naming.fsx_export_path``; ``team_dirs`` makes it), to that prefix, exporting new, changed and deleted
  files to S3 and importing nothing. Never ``/<team>``: that exports the members' ``0700`` homes to a prefix
  every principal of the team reads. An association of ``/<team>`` (made by the module before) is refused,
  never deleted for the caller. Before creating one the file system's associations are counted, the
  platform's own included: at most 8 per file system. FSx for Lustre imports a file's
  owner, group, mode and symbolic links from the S3 object's metadata
  (``x-amz-meta-file-owner``, ``-file-group``, ``-file-permissions``, a symlink's target as its
  data: "POSIX metadata support for data repositories", FSx for Lustre User Guide), and no DRA
  setting turns that off; any team member who may put objects under the prefix sets that metadata.
  So the association has no automatic import (``AutoImportPolicy`` with no events) and no import
  when it is created (``BatchImportMetaDataOnCreate=false``): no file on FSx ever takes its owner,
  mode or link target from S3. A run corrects an association that imports. Its
  ``DataRepositoryPath`` cannot be changed in place; deleting it never deletes the
  files on FSx (``DeleteDataInFileSystem=false``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from urllib.parse import urlencode

from ansible_collections.amazon.aws.plugins.module_utils.tagging import ansible_dict_to_boto3_tag_list, boto3_tag_list_to_ansible_dict
from ansible_collections.hyperpod.tenancy.plugins.module_utils import engine, fsx, naming, retired_names, s3
from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import each
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import STATE, TEAM_TAGS, known_value, options
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError, InputError, S3Error
from ansible_collections.hyperpod.tenancy.plugins.module_utils.waiters import GONE, wait_for_status

ALL_EVENTS = ["NEW", "CHANGED", "DELETED"]
# Export only: an import would take owner, group, mode and symlinks from S3 object metadata (see above).
S3_LINK = {"AutoImportPolicy": {"Events": []}, "AutoExportPolicy": {"Events": ALL_EVENTS}}
TRANSITIONAL = ("CREATING", "UPDATING")
DELETE_BATCH = 1000


# ---------------------------------------------------------------- FSx data repository association


# "You can have a maximum of 8 data repository associations on a file system" (CreateDataRepositoryAssociation, Amazon FSx
# API Reference, https://docs.aws.amazon.com/fsx/latest/APIReference/API_CreateDataRepositoryAssociation.html); the
# platform's own associations count as the teams' do (the team model checks the teams' alone against this limit).
MAX_ASSOCIATIONS = 8


def file_system_path(team):
    """The FSx path the team's association links: its export directory, never the team directory with the homes."""
    return naming.fsx_export_path(team)


def legacy_path(team):
    """The path the module linked before: the whole team directory, the members' homes included."""
    return "/%s" % team


def repository_path(bucket, team):
    return "s3://%s/%s" % (bucket, naming.s3_prefix(team))


def _normal_path(path):
    """``/a/b/`` and ``/a/b`` are one directory; ``""`` is ``/`` (FileSystemPath's default)."""
    return "/" + (path or "").strip("/") if (path or "").strip("/") else "/"


def _same_path(first, second):
    return _normal_path(first) == _normal_path(second)


def _overlaps(first, second):
    """Two FSx paths one of which holds the other. "Two data repository associations cannot have overlapping file system
    paths. For example, if a data repository is associated with file system path /ns1/, then you cannot link another data
    repository with file system path /ns1/ns2"; "/" only as the first and only one (FileSystemPath, CreateDataRepositoryAssociation,
    https://docs.aws.amazon.com/fsx/latest/APIReference/API_CreateDataRepositoryAssociation.html)."""
    a, b = _normal_path(first), _normal_path(second)
    return a == "/" or b == "/" or a == b or a.startswith(b + "/") or b.startswith(a + "/")


def list_associations(client, file_system_id):
    """Every association of the file system (every page), whoever made it."""
    return fsx.describe_data_repository_associations(client, Filters=[{"Name": "file-system-id", "Values": [file_system_id]}])


def find_association(client, file_system_id, team, listed=None, path=None):
    """The association of the team's export directory (or of ``path``) on the file system, or None."""
    listed = list_associations(client, file_system_id) if listed is None else listed
    for association in listed:
        if _same_path(association.get("FileSystemPath"), path or file_system_path(team)):
            return association
    return None


def _prefixes_overlap(first, second):
    """Two S3 paths one of which holds the other (``s3://b/`` holds ``s3://b/team/``)."""
    a, b = (first or "").rstrip("/") + "/", (second or "").rstrip("/") + "/"
    return a.startswith(b) or b.startswith(a)


def link_problem(listed, file_system_id, team, bucket=None):
    """Why the team's association cannot be made on the file system whose associations are ``listed``; None when it can
    (or exists). Checked before any write: an association of ``/<team>`` (it exports the homes), another one whose S3 path
    overlaps the team's prefix (with ``bucket``), another one inside the team directory, another one overlapping the export
    directory (FSx refuses it), or the file system's 8 taken."""
    path = file_system_path(team)
    legacy = find_association(None, file_system_id, team, listed, legacy_path(team))
    if legacy is not None:
        return (
            "FSx path %s of file system %s, team %s's whole directory with its members' 0700 homes, is linked to %s by data repository "
            "association %s: storage.s3_link links %s only, and FSx refuses overlapping paths. Delete association %s (with "
            "DeleteDataInFileSystem false, which keeps the files on FSx) and run again: the collection does not delete it for you"
            % (legacy_path(team), file_system_id, team, legacy.get("DataRepositoryPath"), legacy.get("AssociationId"), path,
               legacy.get("AssociationId"))
        )
    own = repository_path(bucket, team) if bucket else None
    for other in listed:
        if _same_path(other.get("FileSystemPath"), path):
            continue
        if own and _prefixes_overlap(other.get("DataRepositoryPath"), own):
            return "data repository association %s of file system %s links FSx path %s to %s, which overlaps team %s's prefix %s: FSx " \
                   "requires each association's data repository path to be its own, and what it exports lands where every principal of " \
                   "the team reads; delete it or move it elsewhere, and run again" % (
                       other.get("AssociationId"), file_system_id, _normal_path(other.get("FileSystemPath")), other.get("DataRepositoryPath"), team, own)
        if _normal_path(other.get("FileSystemPath")).startswith(legacy_path(team) + "/") and not _overlaps(other.get("FileSystemPath"), path):
            return "data repository association %s of file system %s links FSx path %s, inside team %s's directory, to %s: the collection " \
                   "links %s only (another path there may hold the members' homes). Delete it (with DeleteDataInFileSystem false) and run " \
                   "again" % (other.get("AssociationId"), file_system_id, _normal_path(other.get("FileSystemPath")), team,
                              other.get("DataRepositoryPath"), path)
    if find_association(None, file_system_id, team, listed) is not None:
        return None
    for other in listed:
        if _overlaps(other.get("FileSystemPath"), path):
            return "team %s's export directory %s overlaps FSx path %s of data repository association %s on file system %s; FSx refuses " \
                   "overlapping association paths" % (team, path, _normal_path(other.get("FileSystemPath")), other.get("AssociationId"), file_system_id)
    if len(listed) >= MAX_ASSOCIATIONS:
        # Assumption (the page is silent): an association still DELETING counts until it is gone.
        return "team %s's data repository association would be the %dth on FSx file system %s, which takes at most %d: it has %d (%s), " \
               "whoever made them" % (team, len(listed) + 1, file_system_id, MAX_ASSOCIATIONS, len(listed),
                                      ", ".join("%s %s" % (a.get("AssociationId"), _normal_path(a.get("FileSystemPath"))) for a in listed))
    return None


def _wait(client, file_system_id, team, ready, timeout):
    return wait_for_status(
        lambda: find_association(client, file_system_id, team),
        "data repository association of %s" % file_system_path(team),
        ready, failed=("FAILED",), timeout=timeout, status_key="Lifecycle", reason_key="FailureDetails",
    )


def _events(s3):
    s3 = s3 or {}
    return {
        "auto_import_policy": {"events": sorted((s3.get("AutoImportPolicy") or {}).get("Events") or [])},
        "auto_export_policy": {"events": sorted((s3.get("AutoExportPolicy") or {}).get("Events") or [])},
    }


def describe(association):
    """The association as this collection returns (and diffs) it: snake_case, events sorted, tags as a dict."""
    if association is None:
        return None
    return {
        "association_id": association.get("AssociationId"),
        "resource_arn": association.get("ResourceARN"),
        "file_system_id": association.get("FileSystemId"),
        "lifecycle": association.get("Lifecycle"),
        "file_system_path": (association.get("FileSystemPath") or "/").rstrip("/") or "/",
        "data_repository_path": (association.get("DataRepositoryPath") or "").rstrip("/") + "/",
        "s3": _events(association.get("S3")),
        "tags": boto3_tag_list_to_ansible_dict(association.get("Tags") or []),
    }


def _check_path(association, bucket, team):
    if association is not None and describe(association)["data_repository_path"] != repository_path(bucket, team):
        raise InputError(message="FSx path %s is linked to %s, not %s; an association's data repository path cannot be changed in place: "
                         "delete association %s first" % (file_system_path(team), association["DataRepositoryPath"], repository_path(bucket, team),
                                                          association["AssociationId"]))


def check_association(client, file_system_id, team, bucket):
    """Raise InputError when the team's export directory is linked to another S3 path, or its association cannot be made
    (``link_problem``); reads only. Returns the team's association (None before the first link)."""
    listed = list_associations(client, file_system_id)
    problem = link_problem(listed, file_system_id, team, bucket)
    if problem:
        raise InputError(message=problem)
    current = find_association(client, file_system_id, team, listed)
    _check_path(current, bucket, team)
    return current


def ensure_association_present(client, file_system_id, team, bucket, tags, check_mode, wait=True, timeout=600):
    """``(changed, before, after)`` of the team's association; ``after`` is predicted in check mode.

    Tags are added or corrected, never removed (other tools may tag the association).
    """
    current = find_association(client, file_system_id, team)
    if current is not None and current.get("Lifecycle") == "DELETING":
        current = None if check_mode else _wait(client, file_system_id, team, (GONE,), timeout)
    if current is not None and current.get("Lifecycle") in TRANSITIONAL:
        current = _wait(client, file_system_id, team, ("AVAILABLE", "MISCONFIGURED"), timeout)
    if current is not None and current.get("Lifecycle") == "FAILED":
        raise HyperPodError(message="data repository association %s of %s is FAILED (%s); delete it and run again" % (
            current["AssociationId"], file_system_path(team), (current.get("FailureDetails") or {}).get("Message", "no reason given")))
    wanted = {
        "file_system_id": file_system_id, "file_system_path": file_system_path(team), "data_repository_path": repository_path(bucket, team),
        "s3": _events(S3_LINK), "tags": dict(tags),
    }
    before = describe(current)
    if current is None:
        problem = link_problem(list_associations(client, file_system_id), file_system_id, team, bucket)
        if problem:
            raise InputError(message=problem)
        if check_mode:
            return True, None, wanted
        fsx.create_data_repository_association(
            client, FileSystemId=file_system_id, FileSystemPath=file_system_path(team), DataRepositoryPath=repository_path(bucket, team),
            BatchImportMetaDataOnCreate=False, S3=S3_LINK, Tags=ansible_dict_to_boto3_tag_list(tags),
        )
        created = _wait(client, file_system_id, team, ("AVAILABLE",), timeout) if wait else find_association(client, file_system_id, team)
        return True, None, describe(created)
    _check_path(current, bucket, team)
    missing_tags = dict((k, v) for k, v in tags.items() if before["tags"].get(k) != v)
    events_differ = before["s3"] != wanted["s3"]
    if not (missing_tags or events_differ):
        return False, before, before
    predicted = dict(before, s3=wanted["s3"], tags=dict(before["tags"], **missing_tags))
    if check_mode:
        return True, before, predicted
    if events_differ:
        fsx.update_data_repository_association(client, AssociationId=current["AssociationId"], S3=S3_LINK)
    if missing_tags:
        fsx.tag_resource(client, current["ResourceARN"], missing_tags)
    after = _wait(client, file_system_id, team, ("AVAILABLE", "MISCONFIGURED"), timeout) if wait else find_association(client, file_system_id, team)
    return True, before, describe(after)


def ensure_association_absent(client, file_system_id, team, check_mode, wait=True, timeout=600):
    """Delete the team's association, keeping the files on FSx; ``(changed, before, after)``."""
    current = find_association(client, file_system_id, team)
    if current is None:
        return False, None, None
    if current.get("Lifecycle") == "DELETING":
        if wait and not check_mode:
            _wait(client, file_system_id, team, (GONE,), timeout)
        return False, describe(current), None
    if check_mode:
        return True, describe(current), None
    if current.get("Lifecycle") in TRANSITIONAL:
        current = _wait(client, file_system_id, team, ("AVAILABLE", "MISCONFIGURED", "FAILED"), timeout)
    fsx.delete_data_repository_association(client, AssociationId=current["AssociationId"], DeleteDataInFileSystem=False)
    if wait:
        _wait(client, file_system_id, team, (GONE,), timeout)
    return True, describe(current), None


# ---------------------------------------------------------------- S3 team prefix

# The ownership marks of the teams' prefixes: an object per team under the platform's prefix of the data bucket
# (naming.PLATFORM_PREFIX), which no team policy names: a team's policies grant ``<bucket>/<team>/*`` only
# (team_policy, execution_role.team_data_policy), and a team name never starts with "_". The mark was the object
# ``<team>/`` inside the prefix, where every member may PutObject: one PutObject there replaced it, and its tags with it
# (a PutObject of an existing key replaces the object, its tag-set being the request's ``x-amz-tagging``, none without:
# PutObject, Amazon S3 API Reference, https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html). That old mark,
# made by the collection for the team, is read while no new one exists, and moved on the next run that converges the prefix.
MARKS_PREFIX = retired_names.MARKS_PREFIX


# Who the mark's team is, beyond its name (a name is not an identity): the Identity Center group id and the gid the team
# had when its prefix layer last ran, recorded as tags of the mark (``retired_names``, which reads them as claims).
MARK_GROUP_TAG, MARK_GID_TAG = retired_names.MARK_GROUP_TAG, retired_names.MARK_GID_TAG


def mark_key(team):
    """The key of the team's ownership mark (``_hyperpod/owners/<team>``)."""
    return MARKS_PREFIX + team


def identity_tags(identity_center_group_id=None, gid=None):
    """The mark's tags recording the team's Identity Center group id and gid (those given; a tag value takes an id as is)."""
    tags = {}
    if identity_center_group_id:
        tags[MARK_GROUP_TAG] = str(identity_center_group_id)
    if gid is not None:
        tags[MARK_GID_TAG] = str(gid)
    problems = naming.tag_problems(tags)
    if problems:
        raise InputError(message="the ownership mark's identity tags: %s" % "; ".join(problems))
    return tags


def list_keys(client, bucket, prefix, limit=None):
    """The keys under ``prefix``: every page, or the first ``limit`` only."""
    if limit:
        return [item["Key"] for item in (s3.list_objects_v2(client, Bucket=bucket, Prefix=prefix, MaxKeys=limit) or {}).get("Contents", [])]
    return [item["Key"] for item in s3.list_all_objects_v2(client, Bucket=bucket, Prefix=prefix)]


def _delete_keys(client, bucket, keys):
    for start in range(0, len(keys), DELETE_BATCH):
        batch = [{"Key": key} for key in keys[start:start + DELETE_BATCH]]
        answer = s3.delete_objects(client, Bucket=bucket, Delete={"Objects": batch, "Quiet": True})
        if answer.get("Errors"):
            first = answer["Errors"][0]
            raise S3Error(message="could not delete %d objects under s3://%s/%s, first %s: %s" % (
                len(answer["Errors"]), bucket, keys[0], first.get("Key"), first.get("Message")))


def _tags(client, bucket, key):
    """The tags of the object ``key``, None when it does not exist (GetObjectTagging answers NoSuchKey: one read tells both)."""
    tagging = s3.get_object_tagging(client, Bucket=bucket, Key=key)
    return None if tagging is None else boto3_tag_list_to_ansible_dict(tagging.get("TagSet", []))


def read_marker(client, bucket, team):
    """The tags of the team's ownership mark, None when it has none."""
    return _tags(client, bucket, mark_key(team))


def _found(bucket, tags, legacy=False, objects=None):
    return {"bucket": bucket, "tags": tags, "legacy": legacy, "objects": objects}


def read_prefix(client, bucket, team, marked=None):
    """``{"bucket", "tags": the mark's tags or None, "legacy": whether they are the old mark's, "objects": whether anything
    is under the prefix, asked only without a mark}``.

    Without a mark the prefix is listed, one key: a first key ``<team>/`` is the old mark, whose tags are then read. When
    the prefix holds objects (or the old mark went meanwhile), the mark is read again: another run may have written it
    (and moved the old one) between the reads, and the objects are then not taken for someone else's. ``marked=False``:
    the mark was just found missing (``read_marks``' listing), so it is not read first.
    """
    tags = None if marked is False else read_marker(client, bucket, team)
    if tags is not None:
        return _found(bucket, tags)
    prefix = naming.s3_prefix(team)
    first = list_keys(client, bucket, prefix, limit=1)
    if not first:
        return _found(bucket, None, objects=False)
    legacy = _tags(client, bucket, prefix) if first == [prefix] else None
    if legacy is not None:
        return _found(bucket, legacy, legacy=True)
    tags = read_marker(client, bucket, team)
    return _found(bucket, tags) if tags is not None else _found(bucket, None, objects=True)


def read_marks(client, bucket, teams):
    """``(s3_markers, owner_marks)``: ``read_prefix``'s answer for each of ``teams`` (the present ones), and ``{team: its
    mark's tags}`` of every other mark under ``_hyperpod/owners/`` (a team no longer present, whose name and recorded gid
    its kept data still claims).

    One listing of the marks (every page), then GetObjectTagging of each mark listed, a few in flight at once; a present
    team without a mark listed is read as ``read_prefix`` reads it (its prefix listed, one key), so a mark written meanwhile
    is still found.
    """
    listed = [item["Key"][len(MARKS_PREFIX):] for item in s3.list_all_objects_v2(client, Bucket=bucket, Prefix=MARKS_PREFIX)]
    listed = [name for name in listed if name and "/" not in name]
    tags = dict(zip(listed, each(lambda name: read_marker(client, bucket, name), listed)))
    wanted = set(teams)
    unmarked = [team for team in teams if tags.get(team) is None]
    markers = dict((team, _found(bucket, tags[team])) for team in teams if tags.get(team) is not None)
    markers.update(zip(unmarked, each(lambda team: read_prefix(client, bucket, team, marked=False), unmarked)))
    others = dict((name, found) for name, found in tags.items() if name not in wanted and found is not None)
    return markers, others


def _mark_at(bucket, team, found):
    if found.get("tags") is None:
        return None
    return "s3://%s/%s" % (bucket, naming.s3_prefix(team) if found.get("legacy") else mark_key(team))


def _prefix_state(bucket, team, found):
    """The prefix's mark as the diff shows it (where it is, its tags), from ``read_prefix``'s answer or shared_info's copy."""
    tags = found.get("tags")
    return {"bucket": bucket, "prefix": naming.s3_prefix(team), "marker": tags is not None, "mark": _mark_at(bucket, team, found), "tags": tags or {}}


def _marker_state(client, bucket, team):
    """``_prefix_state`` of the mark as it is now (a read of its tags, no listing)."""
    return _prefix_state(bucket, team, {"tags": read_marker(client, bucket, team)})


def prefix_owner_problem(bucket, team, marker_tags, objects, tag_keys=None, adopt=False, legacy=False):
    """Why the team's prefix is not this collection's for ``team``; None when it is, or when nothing is under it yet.

    The mark's tags (``marker_tags``, None without a mark; ``legacy`` when they are the old mark's) mark it. Objects
    under the prefix without a mark are someone else's data, taken over only when adopted; ``objects`` tells whether there
    are any. This layer's check and shared_info's check of every team before the run's first write both ask here.
    """
    where = "s3://%s/%s" % (bucket, naming.s3_prefix(team))
    if marker_tags is not None:
        mark = _mark_at(bucket, team, {"tags": marker_tags, "legacy": legacy})
        what = "S3 prefix %s (its %s %s)" % (where, "old ownership mark, to be moved to s3://%s/%s," % (bucket, mark_key(team)) if legacy else
                                             "ownership mark", mark)
        return naming.ownership_problem(what, team, marker_tags, tag_keys, adopt, "s3_prefix")
    if adopt or not objects:
        return None
    return (
        "S3 prefix %s holds objects but no ownership mark s3://%s/%s made by hyperpod.tenancy for team %s: refusing to change or delete it. "
        "To take it over, the platform adds s3_prefix to hyperpod_adopt.%s in the cluster file" % (where, bucket, mark_key(team), team, team)
    )


def ensure_prefix_present(client, bucket, team, tags, check_mode, tag_keys=None, adopt=False, known=None, identity=None):
    """The team's ownership mark exists with exactly the team tags and its identity tags; ``(changed, before, after)``. An
    old mark is moved.

    ``identity`` (``identity_tags``') records the team's Identity Center group id and gid on the mark; what it does not
    give, the mark keeps as it records it (never from ``tags``, the team file's). ``known`` (``read_prefix``'s, read
    earlier in the run) spares the reads; a write is planned from a new read (``engine.plan_from_copy``).
    """
    key = mark_key(team)
    recording = (MARK_GROUP_TAG, MARK_GID_TAG)

    def read(fresh):
        copied = known is not None and not fresh
        return (known if copied else read_prefix(client, bucket, team)), copied

    def plan(state):
        found = state[0]
        problem = prefix_owner_problem(bucket, team, found["tags"], found["objects"], tag_keys, adopt, found.get("legacy", False))
        if problem:
            raise InputError(message=problem)
        before = _prefix_state(bucket, team, found)
        # The old mark is deleted once moved when the collection made it (adopted, it may be anyone's object).
        made = found.get("legacy", False) and naming.ownership_problem("", team, found["tags"], tag_keys) is None
        wanted = dict((k, v) for k, v in tags.items() if k not in recording)
        wanted.update((k, v) for k, v in (found["tags"] or {}).items() if k in recording and not found.get("legacy", False))
        wanted.update(identity or {})
        return before, dict(before, marker=True, mark="s3://%s/%s" % (bucket, key), tags=wanted), made

    unused_read, (before, after, move) = engine.plan_from_copy(
        read, lambda state: state[1], plan, check_mode, writes=lambda planned: planned[0] != planned[1]
    )
    if before == after:
        return False, before, after
    if check_mode:
        return True, before, after
    if before["mark"] != after["mark"]:
        s3.put_object(client, Bucket=bucket, Key=key, Body=b"", Tagging=urlencode(sorted(after["tags"].items())))
        if move:
            # Nothing reads the old mark once the new one exists.
            s3.delete_object(client, Bucket=bucket, Key=naming.s3_prefix(team))
    else:
        s3.put_object_tagging(client, Bucket=bucket, Key=key, Tagging={"TagSet": ansible_dict_to_boto3_tag_list(after["tags"])})
    return True, before, _marker_state(client, bucket, team)


def ensure_prefix_absent(client, bucket, team, on_remove, check_mode, confirm_delete=None, tag_keys=None):
    """Offboarding: ``keep`` leaves every object (and reports how many); ``delete`` needs ``confirm_delete=<team>``.

    Returns ``(changed, before, after, details)`` with ``details``: ``action``, ``objects`` (count under the prefix, an old
    mark not counted). The mark goes with the objects, and with a prefix that holds none: a kept prefix keeps it.
    Versioned buckets keep noncurrent versions; their lifecycle rules expire them.
    """
    if on_remove not in ("keep", "delete"):
        raise InputError(message="on_remove must be keep or delete, not %r" % (on_remove,))
    prefix = naming.s3_prefix(team)
    if on_remove == "delete" and confirm_delete != team:
        raise InputError(message="on_remove=delete deletes every object under s3://%s/%s: set confirm_delete to the team name (%r) to confirm" % (
            bucket, prefix, team))
    found = _found(bucket, read_marker(client, bucket, team))
    keys = list_keys(client, bucket, prefix)
    if found["tags"] is None and keys[:1] == [prefix]:
        legacy = _tags(client, bucket, prefix)
        if legacy is not None:
            found = _found(bucket, legacy, legacy=True)
    data = [k for k in keys if not (found["legacy"] and k == prefix)]
    before = dict(_prefix_state(bucket, team, found), objects=len(data))
    marks = [prefix] if found["legacy"] else [mark_key(team)] if found["tags"] is not None else []
    problem = prefix_owner_problem(bucket, team, found["tags"], bool(data), tag_keys, legacy=found["legacy"])
    if data and on_remove == "keep":
        return False, before, before, {"action": "kept", "objects": len(data)}
    if not data and (not marks or problem):
        # Nothing under the prefix, and no mark of the team's to remove (a mark not the team's is left as it is).
        return False, before, before, {"action": "none", "objects": 0}
    if problem:
        raise InputError(message=problem)
    after = dict(before, marker=False, mark=None, tags={}, objects=0)
    details = {"action": "deleted" if data else "none", "objects": len(data)}
    if check_mode:
        return True, before, after, details
    _delete_keys(client, bucket, data + marks)
    after = dict(_marker_state(client, bucket, team), objects=len(list_keys(client, bucket, prefix)))
    return True, before, after, details


# The keyword arguments of s3_team_prefix's AnsibleAWSModule (and of team_resources' s3_prefix).
PREFIX_MODULE_OPTIONS = options(
    dict(
        team=dict(type="str", required=True),
        bucket=dict(type="str", required=True),
        on_remove=dict(type="str", choices=["keep", "delete"], default="keep"),
        confirm_delete=dict(type="str"),
        tags=dict(type="dict"),
        adopt=dict(type="bool", default=False),
        identity=dict(type="dict", options=dict(identity_center_group_id=dict(type="str"), gid=dict(type="int"))),
        retire=dict(
            type="dict",
            options=dict(gid=dict(type="int"), identity_center_group=dict(type="str"), kept=dict(type="list", elements="str", default=[])),
        ),
        inherit=dict(
            type="dict",
            options=dict(
                retired=dict(type="list", elements="str", required=True), gid=dict(type="int"), identity_center_group=dict(type="str"),
            ),
        ),
    ),
    STATE, TEAM_TAGS,
)
# What shared_info read of the prefix earlier in the run (team_resources' ``known``): its mark.
KNOWN = dict(marker=dict(type="dict"))


def check_prefix(params):
    """What can be refused without a call (the team name, an unconfirmed delete); raises ``InputError``."""
    p = params
    problems = naming.name_problems(p["team"])
    if problems:
        raise InputError(message="team %r %s" % (p["team"], "; ".join(problems)))
    if p["state"] == "absent" and p["on_remove"] == "delete" and p["confirm_delete"] != p["team"]:
        raise InputError(message="on_remove=delete deletes every object under s3://%s/%s: set confirm_delete to the team name (%r) to confirm" % (
            p["bucket"], naming.s3_prefix(p["team"]), p["team"]))
    for retired in (p.get("inherit") or {}).get("retired") or []:
        if naming.name_problems(retired):
            raise InputError(message="inherit.retired: %r is not a team name" % (retired,))


def _retire(context, client, p, details):
    """Offboarding that kept data (the prefix's objects, or what ``retire.kept`` names) records the team in the ledger of
    retired names (``retired_names``), so that no new team of its name or gid reads that data; ``(changed, before, after)``.
    A confirmed delete that kept nothing frees the name: the team's entry goes."""
    retire = p.get("retire") or {}
    kept = list(retire.get("kept") or [])
    if details["action"] == "kept":
        kept.append("s3://%s/%s" % (p["bucket"], naming.s3_prefix(p["team"])))
    if not kept:
        if p["on_remove"] == "delete":
            return retired_names.ensure_forgotten(client, p["bucket"], p["team"], context.check_mode)
        return False, None, None
    return retired_names.ensure_retired(
        client, p["bucket"], p["team"], retire.get("gid"), retire.get("identity_center_group"), kept, context.check_mode,
    )


def converge_prefix(context, params):
    """The result of s3_team_prefix: the prefix after the run, and on offboarding what was done with its objects."""
    p = params
    check_prefix(p)
    client = context.client("s3")
    if p["state"] == "present":
        tags = naming.team_tags(p["team"], p["cost_center"], p["tag_keys"], p["tags"])
        # The mark as read earlier in the run (shared_info's), when it is this bucket's.
        marker = known_value(p, "marker")
        known = marker if (marker or {}).get("bucket") == p["bucket"] else None
        identity = identity_tags(**(p.get("identity") or {}))
        changed, before, after = ensure_prefix_present(
            client, p["bucket"], p["team"], tags, context.check_mode, p["tag_keys"], p["adopt"], known, identity,
        )
        result = dict(changed=changed, prefix=after, diff={"before": before, "after": after})
        inherit = p.get("inherit")
        if inherit:
            # The platform's hyperpod_inherit: this team takes the retired teams' entries of the ledger (shared_info let it).
            took, entries_before, entries_after = retired_names.ensure_inherited(
                client, p["bucket"], p["team"], inherit.get("gid"), inherit.get("identity_center_group"), inherit["retired"], context.check_mode,
            )
            result.update(changed=changed or took, inherited=entries_after)
            result["diff"] = {"before": dict(before, inherited=entries_before), "after": dict(after, inherited=entries_after)}
        return result
    changed, before, after, details = ensure_prefix_absent(
        client, p["bucket"], p["team"], p["on_remove"], context.check_mode, confirm_delete=p["confirm_delete"], tag_keys=p["tag_keys"],
    )
    if details["action"] == "kept":
        context.warn("%d objects under s3://%s/%s were kept (on_remove=keep)" % (details["objects"], p["bucket"], naming.s3_prefix(p["team"])))
    retired, entry_before, entry_after = _retire(context, client, p, details)
    if entry_before is not None or entry_after is not None:
        before, after = dict(before, retired=entry_before), dict(after, retired=entry_after)
    return dict(changed=changed or retired, prefix=after, diff={"before": before, "after": after}, retired=entry_after, **details)
