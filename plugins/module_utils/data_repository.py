# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""A team's long-lived data: its S3 prefix and the FSx data repository association that links it.

- The prefix is ``s3://<data bucket>/<team>/`` (``naming.s3_prefix``); a zero-byte
  ``<team>/`` marker object carries the team tags, so the prefix exists (and shows
  in the console) before the team writes anything. Offboarding keeps the objects
  unless ``on_remove=delete`` is confirmed with the team name.
- The association (DRA) links FSx for Lustre path ``/<team>`` to that prefix, exporting
  new, changed and deleted files to S3 and importing nothing. FSx for Lustre imports a file's
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
from ansible_collections.hyperpod.tenancy.plugins.module_utils import engine, fsx, naming, s3
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import STATE, TEAM_TAGS, options
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError, InputError, S3Error
from ansible_collections.hyperpod.tenancy.plugins.module_utils.waiters import GONE, wait_for_status

ALL_EVENTS = ["NEW", "CHANGED", "DELETED"]
# Export only: an import would take owner, group, mode and symlinks from S3 object metadata (see above).
S3_LINK = {"AutoImportPolicy": {"Events": []}, "AutoExportPolicy": {"Events": ALL_EVENTS}}
TRANSITIONAL = ("CREATING", "UPDATING")
DELETE_BATCH = 1000


# ---------------------------------------------------------------- FSx data repository association


def file_system_path(team):
    return "/%s" % team


def repository_path(bucket, team):
    return "s3://%s/%s" % (bucket, naming.s3_prefix(team))


def _same_path(first, second):
    return (first or "").rstrip("/") == (second or "").rstrip("/")


def find_association(client, file_system_id, team):
    """The association of FSx path ``/<team>`` on the file system, or None."""
    listed = fsx.describe_data_repository_associations(client, Filters=[{"Name": "file-system-id", "Values": [file_system_id]}])
    for association in listed:
        if _same_path(association.get("FileSystemPath"), file_system_path(team)):
            return association
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
    """Raise InputError when the team's FSx path is linked to another S3 path (reads only)."""
    _check_path(find_association(client, file_system_id, team), bucket, team)


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


def read_marker(client, bucket, team):
    """The tags of the team's marker object ``<team>/``, None when it does not exist.

    GetObjectTagging answers NoSuchKey for a missing marker: one read tells both whether it exists and its tags.
    """
    tagging = s3.get_object_tagging(client, Bucket=bucket, Key=naming.s3_prefix(team))
    return None if tagging is None else boto3_tag_list_to_ansible_dict(tagging.get("TagSet", []))


def read_prefix(client, bucket, team):
    """``{"tags": the marker's tags or None, "objects": whether anything is under the prefix, asked only without a marker}``.

    A marker written by another run between the two reads is the first key of the listing (no key under ``<team>/`` sorts
    before it): it is read again rather than taken for someone else's objects.
    """
    key = naming.s3_prefix(team)
    tags = read_marker(client, bucket, team)
    if tags is None:
        first = list_keys(client, bucket, key, limit=1)
        if first != [key]:
            return {"bucket": bucket, "tags": None, "objects": bool(first)}
        tags = read_marker(client, bucket, team)
    return {"bucket": bucket, "tags": tags, "objects": None if tags is not None else True}


def _prefix_state(bucket, team, found):
    """The prefix's marker as the diff shows it, from ``read_prefix``'s answer (or the copy shared_info read with it)."""
    tags = found.get("tags")
    return {"bucket": bucket, "prefix": naming.s3_prefix(team), "marker": tags is not None, "tags": tags or {}}


def _marker_state(client, bucket, team):
    """``_prefix_state`` of the marker as it is now (a read of its tags, no listing)."""
    return _prefix_state(bucket, team, {"tags": read_marker(client, bucket, team)})


def prefix_owner_problem(bucket, team, marker_tags, objects, tag_keys=None, adopt=False):
    """Why the team's prefix is not this collection's for ``team``; None when it is, or when nothing is under it yet.

    The marker object's tags (``marker_tags``, None without a marker) mark it. Objects under the prefix without a
    marker are someone else's data, taken over only when adopted; ``objects`` tells whether there are any. This
    layer's check and shared_info's check of every team before the run's first write both ask here.
    """
    where = "s3://%s/%s" % (bucket, naming.s3_prefix(team))
    if marker_tags is not None:
        return naming.ownership_problem("S3 prefix %s (its marker object)" % where, team, marker_tags, tag_keys, adopt, "s3_prefix")
    if adopt or not objects:
        return None
    return (
        "S3 prefix %s holds objects but no marker object %s made by hyperpod.tenancy for team %s: refusing to change or delete it. "
        "To take it over, add s3_prefix to the team's adopt list" % (where, naming.s3_prefix(team), team)
    )


def ensure_prefix_present(client, bucket, team, tags, check_mode, tag_keys=None, adopt=False, known=None):
    """The ``<team>/`` marker object exists with exactly the team tags; ``(changed, before, after)``.

    ``known`` (``read_prefix``'s, read earlier in the run) spares the reads; a write is planned from a new read
    (``engine.plan_from_copy``).
    """
    key = naming.s3_prefix(team)

    def read(fresh):
        copied = known is not None and not fresh
        return (known if copied else read_prefix(client, bucket, team)), copied

    def plan(state):
        found = state[0]
        problem = prefix_owner_problem(bucket, team, found["tags"], found["objects"], tag_keys, adopt)
        if problem:
            raise InputError(message=problem)
        before = _prefix_state(bucket, team, found)
        return before, dict(before, marker=True, tags=dict(tags))

    unused_read, (before, after) = engine.plan_from_copy(
        read, lambda state: state[1], plan, check_mode, writes=lambda planned: planned[0] != planned[1]
    )
    if before == after:
        return False, before, after
    if check_mode:
        return True, before, after
    if not before["marker"]:
        s3.put_object(client, Bucket=bucket, Key=key, Body=b"", Tagging=urlencode(sorted(tags.items())))
    else:
        s3.put_object_tagging(client, Bucket=bucket, Key=key, Tagging={"TagSet": ansible_dict_to_boto3_tag_list(tags)})
    return True, before, _marker_state(client, bucket, team)


def ensure_prefix_absent(client, bucket, team, on_remove, check_mode, confirm_delete=None, tag_keys=None):
    """Offboarding: ``keep`` leaves every object (and reports how many); ``delete`` needs ``confirm_delete=<team>``.

    Returns ``(changed, before, after, details)`` with ``details``: ``action``, ``objects`` (count under the prefix).
    Versioned buckets keep noncurrent versions; their lifecycle rules expire them.
    """
    if on_remove not in ("keep", "delete"):
        raise InputError(message="on_remove must be keep or delete, not %r" % (on_remove,))
    if on_remove == "delete" and confirm_delete != team:
        raise InputError(message="on_remove=delete deletes every object under s3://%s/%s: set confirm_delete to the team name (%r) to confirm" % (
            bucket, naming.s3_prefix(team), team))
    before = _marker_state(client, bucket, team)
    keys = list_keys(client, bucket, naming.s3_prefix(team))
    before["objects"] = len(keys)
    if not keys:
        return False, before, before, {"action": "none", "objects": 0}
    if on_remove == "keep":
        return False, before, before, {"action": "kept", "objects": len(keys)}
    problem = prefix_owner_problem(bucket, team, before["tags"] if before["marker"] else None, keys, tag_keys)
    if problem:
        raise InputError(message=problem)
    after = dict(before, marker=False, tags={}, objects=0)
    details = {"action": "deleted", "objects": len(keys)}
    if check_mode:
        return True, before, after, details
    _delete_keys(client, bucket, keys)
    after = _marker_state(client, bucket, team)
    after["objects"] = len(list_keys(client, bucket, naming.s3_prefix(team)))
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
        known_marker=dict(type="dict"),
    ),
    STATE, TEAM_TAGS,
)


def check_prefix(params):
    """What can be refused without a call (the team name, an unconfirmed delete); raises ``InputError``."""
    p = params
    problems = naming.name_problems(p["team"])
    if problems:
        raise InputError(message="team %r %s" % (p["team"], "; ".join(problems)))
    if p["state"] == "absent" and p["on_remove"] == "delete" and p["confirm_delete"] != p["team"]:
        raise InputError(message="on_remove=delete deletes every object under s3://%s/%s: set confirm_delete to the team name (%r) to confirm" % (
            p["bucket"], naming.s3_prefix(p["team"]), p["team"]))


def converge_prefix(context, params):
    """The result of s3_team_prefix: the prefix after the run, and on offboarding what was done with its objects."""
    p = params
    check_prefix(p)
    client = context.client("s3")
    if p["state"] == "present":
        tags = naming.team_tags(p["team"], p["cost_center"], p["tag_keys"], p["tags"])
        # The marker as read earlier in the run (shared_info's), when it is this bucket's.
        known = p["known_marker"] if (p["known_marker"] or {}).get("bucket") == p["bucket"] else None
        changed, before, after = ensure_prefix_present(client, p["bucket"], p["team"], tags, context.check_mode, p["tag_keys"], p["adopt"], known)
        return dict(changed=changed, prefix=after, diff={"before": before, "after": after})
    changed, before, after, details = ensure_prefix_absent(
        client, p["bucket"], p["team"], p["on_remove"], context.check_mode, confirm_delete=p["confirm_delete"], tag_keys=p["tag_keys"],
    )
    if details["action"] == "kept":
        context.warn("%d objects under s3://%s/%s were kept (on_remove=keep)" % (details["objects"], p["bucket"], naming.s3_prefix(p["team"])))
    return dict(changed=changed, prefix=after, diff={"before": before, "after": after}, **details)
