# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Cost Explorer cost-allocation tag activation (ListCostAllocationTags / UpdateCostAllocationTagsStatus).

A key appears in Cost Explorer only after AWS has seen it on a billed resource
(up to a day after the first tagged resource). Until then it cannot be
activated: such a key is *pending*, reported with the reason, and activated by a
later run. UpdateCostAllocationTagsStatus answers HTTP 200 with per-key
``Errors`` (``TagKeysNotFoundException`` for a key AWS has not seen); those are
read, never discarded.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ansible_collections.hyperpod.tenancy.plugins.module_utils import ce
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import CostError

NOT_SEEN_CODE = "TagKeysNotFoundException"
NOT_SEEN_REASON = (
    "AWS has not seen this tag key on a billed resource yet (it can take up to 24 hours after the first "
    "resource is tagged); it cannot be activated before that. A later run activates it."
)
UPDATE_BATCH = 20
LIST_FILTER_BATCH = 100
STATUS = {"active": "Active", "inactive": "Inactive"}


def _chunks(items, size):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def list_tags(client, keys):
    """The cost-allocation tags Cost Explorer knows among ``keys``, by key (unseen keys are absent)."""
    found = {}
    for batch in _chunks(sorted(set(keys)), LIST_FILTER_BATCH):
        kwargs = {"TagKeys": batch, "MaxResults": 1000}
        while True:
            page = ce.list_cost_allocation_tags(client, **kwargs)
            for tag in page.get("CostAllocationTags", []):
                found[tag["TagKey"]] = tag
            if not page.get("NextToken"):
                break
            kwargs["NextToken"] = page["NextToken"]
    return found


def update_status(client, entries):
    """Apply ``entries`` ([{TagKey, Status}]) in batches of 20; return the per-key errors."""
    errors = []
    for batch in _chunks(entries, UPDATE_BATCH):
        errors.extend(ce.update_cost_allocation_tags_status(client, CostAllocationTagsStatus=batch).get("Errors") or [])
    return errors


def snake_tag(tag):
    result = {"tag_key": tag["TagKey"], "type": tag.get("Type"), "status": tag.get("Status")}
    for field, key in (("LastUpdatedDate", "last_updated_date"), ("LastUsedDate", "last_used_date")):
        if tag.get(field):
            result[key] = tag[field]
    return result


def plan(known, keys, state):
    """What to change: (entries to send, pending keys), from the tags Cost Explorer lists.

    A key not listed is pending when it should be active; when it should be
    inactive there is nothing to do (a key AWS has not seen is not active).
    """
    desired = STATUS[state]
    entries, pending = [], []
    for key in keys:
        tag = known.get(key)
        if tag is None:
            if desired == "Active":
                pending.append({"tag_key": key, "reason": NOT_SEEN_REASON})
            continue
        if tag.get("Status") != desired:
            entries.append({"TagKey": key, "Status": desired})
    return entries, pending


def ensure(client, keys, state, check_mode):
    """Bring ``keys`` to ``state`` ('active'/'inactive').

    Returns a dict: changed, before and after ({key: status, or 'not seen'}),
    tags (what Cost Explorer lists afterwards, snake_case) and pending
    ([{tag_key, reason}]). Per-key errors other than an unseen key raise CostError.
    """
    keys = list(dict.fromkeys(keys))
    known = list_tags(client, keys)
    before = dict((key, known[key]["Status"] if key in known else "not seen") for key in keys)
    entries, pending = plan(known, keys, state)
    after = dict(before)
    for entry in entries:
        after[entry["TagKey"]] = entry["Status"]
    if not entries or check_mode:
        tags = [snake_tag(known[k]) for k in keys if k in known]
        if check_mode:
            tags = [dict(t, status=after[t["tag_key"]]) for t in tags]
        return {"changed": bool(entries), "before": before, "after": after, "tags": tags, "pending": pending}

    errors = update_status(client, entries)
    failed = []
    for error in errors:
        key = error.get("TagKey")
        after[key] = before.get(key, "not seen")
        if error.get("Code") == NOT_SEEN_CODE:
            pending.append({"tag_key": key, "reason": NOT_SEEN_REASON})
        else:
            failed.append("%s: %s %s" % (key, error.get("Code"), error.get("Message", "")))
    if failed:
        raise CostError(message="Cost Explorer refused to update cost allocation tags: " + "; ".join(failed))
    known = list_tags(client, keys)
    return {
        "changed": after != before,
        "before": before,
        "after": after,
        "tags": [snake_tag(known[k]) for k in keys if k in known],
        "pending": pending,
    }
