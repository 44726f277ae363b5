# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The ledger of retired team names: each team offboarded with its data kept, so that a new team of its name, or of its
gid, does not silently read that data.

A name is not an identity. Offboarding with ``on_remove: keep`` (the default) leaves the team's objects under
``s3://<data bucket>/<team>/`` and its directory ``<fsx root>/<team>`` (group ``storage.gid``), both still marked for the
name. A later team entry of that name (another Identity Center group) gets a permission set that reaches that prefix and
a directory layer that takes that directory; a later team of that gid reads the directory through its group.

So offboarding writes an entry when it keeps data: the object ``_hyperpod/retired/<team>`` in the data bucket, beside the
ownership marks (``naming.PLATFORM_PREFIX``, which no team policy names), with a JSON body::

    {"team": "research", "gid": 20300, "identity_center_group": "TeamResearch", "offboarded_at": "2025-06-01T09:00:00Z",
     "kept": ["s3://hyperpod-team-data/research/", "/fsx/research"], "inherited_by": []}

``gid`` is recorded when the team's FSx directory was kept (an archived directory is ``root:root 0700``, out of any
group's reach). ``shared_info`` lists the ledger once per run and refuses a present team whose name, or whose gid, an
entry claims, naming the retired team, its gid and date; that team only. The platform lets a team inherit with
``hyperpod_inherit: {<new team>: <retired team>}`` in the cluster file (never the team file): the team's S3 prefix layer
then records it under ``inherited_by`` (the claim it took, its name or its gid, is no one else's to take again), and the
entry stays as the record of what was handed to whom.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json

from ansible_collections.hyperpod.tenancy.plugins.module_utils import naming, s3
from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import each

LEDGER_PREFIX = naming.PLATFORM_PREFIX + "retired/"
# The cluster file's setting (the platform's, never the team file's).
INHERIT_SETTING = "hyperpod_inherit"

# The ownership marks of the teams' S3 prefixes (data_repository), beside the ledger. A team deleted from the team file
# (no ``state: absent``, so no offboarding and no entry here) leaves its mark, which records who the team was beyond its
# name: its Identity Center group's id and its gid, as tags written by its prefix layer. shared_info lists the marks once per
# run: a mark of a team not present claims its name and its gid as an entry of the ledger does (``mark_claims``), and a
# present team whose mark records another group is refused (``group_problems``), unless the platform lets it inherit.
MARKS_PREFIX = naming.PLATFORM_PREFIX + "owners/"
MARK_GROUP_TAG = "hyperpod.tenancy/identity-center-group-id"
MARK_GID_TAG = "hyperpod.tenancy/gid"


def entry_key(team):
    return LEDGER_PREFIX + team


def utc_now(now=None):
    return (now or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _entry(team, body):
    """The entry of ``team`` from its object's body; one that is not a JSON object claims the name, with nothing else known."""
    try:
        entry = json.loads(body)
    except ValueError:
        entry = None
    if not isinstance(entry, dict):
        return {"team": team, "gid": None, "unreadable": True}
    return dict(entry, team=team)


def read_entry(client, bucket, team):
    """The ledger's entry of ``team``, None when there is none (GetObject: NoSuchKey)."""
    found = s3.get_object(client, Bucket=bucket, Key=entry_key(team))
    if found is None:
        return None
    return _entry(team, found["Body"].read())


def read_ledger(client, bucket):
    """{retired team: its entry}: one listing of the ledger (every page), then each entry read, a few in flight at once."""
    keys = [item["Key"] for item in s3.list_all_objects_v2(client, Bucket=bucket, Prefix=LEDGER_PREFIX)]
    names = [key[len(LEDGER_PREFIX):] for key in keys if key[len(LEDGER_PREFIX):] and "/" not in key[len(LEDGER_PREFIX):]]
    entries = each(lambda name: read_entry(client, bucket, name), names)
    return dict((name, entry) for name, entry in zip(names, entries) if entry is not None)


def mark_identity(tags):
    """``(Identity Center group id, gid)`` that a mark's tags record, None for what they do not record (a mark made before)."""
    tags = tags or {}
    gid = tags.get(MARK_GID_TAG)
    return tags.get(MARK_GROUP_TAG) or None, int(gid) if isinstance(gid, str) and gid.isdigit() else None


def mark_claims(bucket, marks):
    """{team: claim} of the marks ``marks`` ({team: the mark's tags}) of teams not present in the team file: each claims the
    team's name and the gid it records, in the shape of a ledger entry (``ledger_problems`` takes both)."""
    claims = {}
    for team, tags in marks.items():
        group_id, gid = mark_identity(tags)
        claims[team] = {
            "team": team, "gid": gid, "identity_center_group_id": group_id, "kept": ["s3://%s/%s" % (bucket, naming.s3_prefix(team))],
            "recorded_in": MARKS_PREFIX + team, "not_present": True,
        }
    return claims


def open_claims(entry):
    """``(name, gid)``: whether the retired team's name is still no one's to take, and its gid still no one's (None: none)."""
    heirs = entry.get("inherited_by") or []
    name_open = not any(isinstance(heir, dict) and heir.get("team") == entry["team"] for heir in heirs)
    gid = entry.get("gid")
    if gid is not None and any(isinstance(heir, dict) and heir.get("gid") == gid for heir in heirs):
        gid = None
    return name_open, gid


def inherited(value):
    """The retired teams one ``hyperpod_inherit`` value names: one name, or a list of them."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def inherit_problems(inherit, where=INHERIT_SETTING):
    """Why ``inherit`` (``hyperpod_inherit``) is not a mapping of team names to a retired team's name or a list of them."""
    if inherit is None:
        return []
    if not isinstance(inherit, dict):
        return ["%s: must map a team's name to the retired team it inherits (or a list of them), not %s" % (where, type(inherit).__name__)]
    problems = []
    for team in sorted(inherit, key=str):
        value = inherit[team]
        why = naming.name_problems(team) if isinstance(team, str) else ["not a string"]
        if why:
            problems.append("%s: key %r is not a team name (%s)" % (where, team, "; ".join(why)))
            continue
        names = [value] if isinstance(value, str) else value if isinstance(value, list) else None
        if not names:
            problems.append("%s.%s: must be the name of a retired team, or a list of them, not %r" % (where, team, value))
            continue
        for name in names:
            if not isinstance(name, str) or naming.name_problems(name):
                problems.append("%s.%s: %r is not a team name" % (where, team, name))
    return problems


def _describe(entry):
    """The retired team as a refusal names it: its group, gid, date and what was kept."""
    parts = []
    if entry.get("identity_center_group"):
        parts.append("Identity Center group %s" % entry["identity_center_group"])
    if entry.get("identity_center_group_id"):
        parts.append("Identity Center group id %s" % entry["identity_center_group_id"])
    parts.append("gid %s" % entry["gid"] if entry.get("gid") is not None else "no gid kept")
    if entry.get("not_present"):
        parts.append("not present in the team file, never offboarded")
    else:
        parts.append("offboarded %s" % (entry.get("offboarded_at") or "at an unknown date"))
    kept = entry.get("kept") or []
    return "%s, its data kept: %s" % (", ".join(parts), ", ".join(str(k) for k in kept) if kept else "unknown")


def ledger_problems(teams, ledger, bucket, inherit=None, marks=None):
    """``({team: [sentence]}, {team: [retired team]})`` for the present ``teams`` (normalized): each team whose name or gid
    an entry of ``ledger`` (``read_ledger``'s, from ``bucket``) still claims is refused with a sentence naming the retired
    team, its gid and its date, unless ``inherit`` (``hyperpod_inherit``) says it inherits that team: it then takes it.
    ``marks`` (``mark_claims``') claim the same way, for the teams the ledger does not hold."""
    inherit = inherit or {}
    ledger = dict(marks or {}, **ledger)
    problems, takes = {}, {}
    for team in sorted((t for t in teams if t.get("state", "present") == "present"), key=lambda t: t["name"]):
        name, gid = team["name"], (team.get("storage") or {}).get("gid")
        heirs_of = inherited(inherit.get(name))
        for retired in sorted(ledger):
            entry = ledger[retired]
            name_open, gid_open = open_claims(entry)
            by_name = name_open and retired == name
            by_gid = gid_open is not None and gid is not None and gid_open == gid
            if not (by_name or by_gid):
                continue
            if retired in heirs_of:
                takes.setdefault(name, []).append(retired)
                continue
            if by_name and by_gid:
                claim = "its name %s and its gid %s (storage.gid) are those" % (name, gid)
            elif by_name:
                claim = "its name %s is that" % name
            else:
                claim = "its gid %s (storage.gid) is that" % gid
            problems.setdefault(name, []).append(
                "%s of %s team %s (%s), recorded in s3://%s/%s: a new team must not read that data. Give the team another "
                "name and gid; or, for it to inherit that data, the platform sets %s: {%s: %s} in the cluster file" % (
                    claim, "removed" if entry.get("not_present") else "retired", retired, _describe(entry), bucket,
                    entry.get("recorded_in") or entry_key(retired), INHERIT_SETTING, name, retired)
            )
    return problems, takes


def group_problems(teams, marks, group_ids, bucket, inherit=None):
    """{team: [sentence]}: each present team of ``teams`` whose ownership mark (``marks``: {team: its tags}) records another
    Identity Center group id than that of the team's group (``group_ids``: {group: id}, shared_info's) is refused: a team of
    that name, with that group, ran before and was deleted from the team file, its data kept. Unless ``inherit``
    (``hyperpod_inherit``) says the team inherits its own name; a mark that records no group (made before) refuses no one."""
    inherit = inherit or {}
    problems = {}
    for team in sorted((t for t in teams if t.get("state", "present") == "present"), key=lambda t: t["name"]):
        name, group = team["name"], team.get("identity_center_group")
        recorded, gid = mark_identity(marks.get(name))
        current = group_ids.get(group)
        if recorded is None or current is None or recorded == current or name in inherited(inherit.get(name)):
            continue
        problems[name] = [
            "its S3 prefix's ownership mark s3://%s/%s records Identity Center group id %s%s, not %s of its group %s: a team of "
            "the name %s with another group ran and was deleted from the team file, its data kept (s3://%s/%s, and its FSx "
            "directory): a new team must not read that data. Give the team another name; or, for it to inherit that data, "
            "the platform sets %s: {%s: %s} in the cluster file" % (
                bucket, MARKS_PREFIX + name, recorded, " (gid %s)" % gid if gid is not None else "", current, group, name, bucket,
                naming.s3_prefix(name), INHERIT_SETTING, name, name)
        ]
    return problems


def _core(team, gid, group, kept):
    return {"team": team, "gid": gid, "identity_center_group": group, "kept": sorted(kept)}


def _write(client, bucket, team, entry):
    s3.put_object(client, Bucket=bucket, Key=entry_key(team), Body=json.dumps(entry, sort_keys=True).encode("utf-8"), ContentType="application/json")


def ensure_retired(client, bucket, team, gid, group, kept, check_mode, now=None):
    """The ledger's entry of ``team`` records it as offboarded with ``kept`` kept; ``(changed, before, after)``.

    An entry of the same team, gid, group and kept data stays as it is (its date and its heirs too): offboarding runs again
    while the team file keeps the team ``absent``. Another one is replaced; a team that had inherited the name and is now
    retired itself is no heir any more.
    """
    current = read_entry(client, bucket, team)
    wanted = _core(team, gid, group, kept)
    same = current is not None and all(current.get(key) == value for key, value in wanted.items())
    heirs = [heir for heir in (current or {}).get("inherited_by") or [] if isinstance(heir, dict) and heir.get("team") != team] if same else []
    if same and heirs == (current.get("inherited_by") or []):
        return False, current, current
    after = dict(wanted, offboarded_at=utc_now(now), inherited_by=heirs)
    if not check_mode:
        _write(client, bucket, team, after)
    return True, current, after


def ensure_forgotten(client, bucket, team, check_mode):
    """No entry of ``team`` (its data was deleted, confirmed): ``(changed, before, None)``."""
    current = read_entry(client, bucket, team)
    if current is not None and not check_mode:
        s3.delete_object(client, Bucket=bucket, Key=entry_key(team))
    return current is not None, current, None


def ensure_inherited(client, bucket, heir, gid, group, retired, check_mode, now=None):
    """Record ``heir`` (with its ``gid`` and ``group``) in the entries of the ``retired`` teams it inherits (the platform's
    ``hyperpod_inherit``); ``(changed, {retired: entry before}, {retired: entry after})``. An entry already naming the heir
    with that gid, or one that no longer exists, is left as it is."""
    before, after = {}, {}
    for name in retired:
        current = read_entry(client, bucket, name)
        if current is None:
            continue
        heirs = [h for h in current.get("inherited_by") or [] if isinstance(h, dict)]
        before[name] = after[name] = current
        if any(h.get("team") == heir and h.get("gid") == gid for h in heirs):
            continue
        entry = dict(current, inherited_by=heirs + [{"team": heir, "gid": gid, "identity_center_group": group, "at": utc_now(now)}])
        entry.pop("unreadable", None)
        after[name] = entry
        if not check_mode:
            _write(client, bucket, name, entry)
    return before != after, before, after
