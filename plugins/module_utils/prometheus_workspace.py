# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""An Amazon Managed Service for Prometheus (AMP) workspace, found by its alias.

AMP identifies a workspace by a generated ID (``ws-...``); its alias is free text, not
unique, and ListWorkspaces' ``alias`` filter is a prefix match. This module makes the
alias the identity: it lists with the alias as prefix and keeps the workspaces whose
alias is exactly the one asked for (a workspace being deleted does not count). Two
live workspaces with the same alias are an error, never a guess.

The KMS key is create-only (AMP has no call that changes it); tags are the only setting
changed in place. The pure functions are unit-testable without AWS; ``WorkspaceManager``
drives a boto3 ``amp`` client.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import uuid

from ansible.module_utils.common.dict_transformations import camel_dict_to_snake_dict
from ansible_collections.amazon.aws.plugins.module_utils.tagging import compare_aws_tags

from ansible_collections.hyperpod.tenancy.plugins.module_utils import amp, engine
from ansible_collections.hyperpod.tenancy.plugins.module_utils.compare import tag_delta
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import AmpError, InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.waiters import GONE, wait_for_status

READY = ("ACTIVE",)
FAILED = ("CREATION_FAILED",)
TRANSITIONAL = ("CREATING", "UPDATING", "DELETING")
ALIAS_MAX = 100
KMS_KEY_ARN = r"arn:aws[-a-z]*:kms:[-a-z0-9]+:[0-9]{12}:key/[-a-f0-9]+"
MAX_TAGS = 50
# botocore's TagKey/TagValue pattern is ([\p{L}\p{Z}\p{N}_.:/=+\-@]*); Python's re has no \p classes.
TAG_PUNCTUATION = "_.:/=+-@"


# ---------------------------------------------------------------- pure functions


def _tag_text_ok(text):
    return all(c.isalpha() or c.isnumeric() or c.isspace() or c in TAG_PUNCTUATION for c in text)


def input_problems(params):
    """What AWS would reject for this workspace, found before any call."""
    problems = []
    alias = params.get("alias")
    if alias is None or not 1 <= len(alias) <= ALIAS_MAX:
        problems.append("alias: 1 to %d characters" % ALIAS_MAX)
    elif alias != alias.strip():
        # AWS strips the blanks and stores another alias than the one asked for: it would never be found again.
        problems.append("alias: %r has blanks at its start or end, which AWS strips" % alias)
    if params.get("state", "present") != "present":
        return problems
    kms_key_arn = params.get("kms_key_arn")
    if kms_key_arn is not None and not (20 <= len(kms_key_arn) <= 2048 and re.fullmatch(KMS_KEY_ARN, kms_key_arn)):
        problems.append("kms_key_arn: %r is not a KMS key ARN (%s)" % (kms_key_arn, KMS_KEY_ARN))
    tags = params.get("tags")
    if tags is not None:
        if len(tags) > MAX_TAGS:
            problems.append("tags: at most %d tags, got %d" % (MAX_TAGS, len(tags)))
        for key, value in sorted(tags.items()):
            value = "" if value is None else str(value)
            if not 1 <= len(key) <= 128 or not _tag_text_ok(key):
                problems.append("tags: key %r must be 1 to 128 letters, digits, blanks or %s" % (key, TAG_PUNCTUATION))
            elif key.lower().startswith("aws:"):
                problems.append("tags: key %r must not begin with aws:" % key)
            if len(value) > 256 or not _tag_text_ok(value):
                problems.append("tags: value of %r must be at most 256 letters, digits, blanks or %s" % (key, TAG_PUNCTUATION))
    return problems


def flatten(workspace):
    """A described or listed workspace with its status as a plain string (``status.statusCode``)."""
    if workspace is None:
        return None
    flat = dict((k, v) for k, v in workspace.items() if k != "ResponseMetadata")
    flat["status"] = (workspace.get("status") or {}).get("statusCode")
    return flat


def matching(summaries, alias):
    """The listed workspaces whose alias is exactly ``alias`` (ListWorkspaces filters by prefix)."""
    return [w for w in summaries or [] if w.get("alias") == alias]


def settings(workspace):
    """What this module manages of a workspace, in snake_case (diffs); {} when there is none."""
    if not workspace:
        return {}
    return {
        "alias": workspace.get("alias"),
        "kms_key_arn": workspace.get("kmsKeyArn"),
        "tags": dict(workspace.get("tags") or {}),
    }


def result(workspace):
    """The workspace as the module returns it: snake_case, status a string, tags as given."""
    if not workspace:
        return {}
    return camel_dict_to_snake_dict(workspace, ignore_list=["tags"])


def list_workspaces(client, alias):
    """The workspaces ListWorkspaces gives for ``alias`` (a prefix: see ``matching``)."""
    return amp.list_workspaces(client, alias=alias)


def live_workspace_ids(client, workspace_id=None, alias=None):
    """[``workspace_id``], or the IDs of the workspaces with exactly ``alias`` that are not being deleted (one ListWorkspaces)."""
    if workspace_id:
        return [workspace_id]
    found = matching(list_workspaces(client, alias), alias) if alias else []
    return [w["workspaceId"] for w in found if (w.get("status") or {}).get("statusCode") != "DELETING"]


# ---------------------------------------------------------------- the resource


class WorkspaceManager(engine.Resource):
    """The workspace of one alias, reconciled by ``engine``."""

    def __init__(self, client, params, check_mode=False):
        super(WorkspaceManager, self).__init__(client, params, check_mode, timeout=600)
        self.label = "Prometheus workspace %r" % params.get("alias")
        self._deleting = []

    def check(self):
        problems = input_problems(self.params)
        if problems:
            raise InputError(message="%s: %s" % (self.label, "; ".join(problems)))

    def _found(self):
        """The workspaces with exactly this alias, as listed: (live ones, ones being deleted)."""
        found = matching(list_workspaces(self.client, self.params["alias"]), self.params["alias"])
        live = [flatten(w) for w in found if (w.get("status") or {}).get("statusCode") != "DELETING"]
        deleting = [flatten(w) for w in found if (w.get("status") or {}).get("statusCode") == "DELETING"]
        if len(live) > 1:
            raise InputError(message="%s: %d workspaces have this alias (%s); aliases are not unique in AWS, delete the extra ones" % (
                self.label, len(live), ", ".join(sorted(w["workspaceId"] for w in live))))
        return live, deleting

    def _describe(self, workspace_id):
        return flatten(amp.describe_workspace(self.client, workspaceId=workspace_id))

    def _wait(self, workspace_id, ready, failed=FAILED):
        return wait_for_status(lambda: self._describe(workspace_id), "%s (%s)" % (self.label, workspace_id),
                               ready=ready, failed=failed, timeout=self.timeout, status_key="status")

    # what the engine asks

    def read(self, fresh=False):
        live, self._deleting = self._found()
        # None as well when it was deleted between the list and the describe.
        return self._describe(live[0]["workspaceId"]) if live else None

    def view(self, raw):
        return settings(raw)

    def desired(self, raw):
        p = self.params
        if raw is None:
            return {"alias": p["alias"], "kms_key_arn": p.get("kms_key_arn"), "tags": dict(p.get("tags") or {})}
        current = settings(raw)
        to_set, to_unset = {}, []
        if p.get("tags") is not None:
            to_set, to_unset = compare_aws_tags(current["tags"], p["tags"], purge_tags=p.get("purge_tags", True))
        desired = dict(current, tags=dict((k, v) for k, v in current["tags"].items() if k not in to_unset))
        desired["tags"].update(to_set)
        return desired

    def refuse(self, raw, desired):
        if raw["status"] in FAILED:
            raise AmpError(message="%s (%s) is %s; delete it (state=absent) and create it again" % (self.label, raw["workspaceId"], raw["status"]))
        kms_key_arn = self.params.get("kms_key_arn")
        if kms_key_arn is not None and kms_key_arn != raw.get("kmsKeyArn"):
            raise InputError(message="%s (%s): kms_key_arn is %r, not %r; AWS sets the key only when it creates a workspace" % (
                self.label, raw["workspaceId"], raw.get("kmsKeyArn"), kms_key_arn))

    def predict(self, raw, desired):
        if raw is None:
            predicted = {"alias": desired["alias"], "status": "CREATING", "tags": desired["tags"]}
            if desired["kms_key_arn"]:
                predicted["kmsKeyArn"] = desired["kms_key_arn"]
        else:
            predicted = dict(raw, tags=desired["tags"])
        if self.waiting:
            predicted["status"] = "ACTIVE"
        return predicted

    def create(self, desired):
        # One token for every retry of this call: a retried create never makes a second workspace.
        request = dict(alias=desired["alias"], clientToken=str(uuid.uuid4()))
        if desired["tags"]:
            request["tags"] = desired["tags"]
        if desired["kms_key_arn"]:
            request["kmsKeyArn"] = desired["kms_key_arn"]
        return amp.create_workspace(self.client, **request)["workspaceId"]

    def update(self, raw, desired):
        current = settings(raw)
        to_set, to_unset = tag_delta(current["tags"], desired["tags"])
        if to_unset:
            amp.untag_resource(self.client, resourceArn=raw["arn"], tagKeys=to_unset)
        if to_set:
            amp.tag_resource(self.client, resourceArn=raw["arn"], tags=to_set)
        # Tags move at once; a workspace still settling from before is waited for.
        return raw["status"] in TRANSITIONAL

    def read_back(self, handle, settle):
        workspace_id = handle["workspaceId"] if isinstance(handle, dict) else handle
        return self._wait(workspace_id, READY) if settle else self._describe(workspace_id)

    def unchanged(self, raw):
        return self._wait(raw["workspaceId"], READY) if raw["status"] in TRANSITIONAL and self.waiting else raw

    def missing(self):
        if self.waiting:
            for workspace in self._deleting:
                self._wait(workspace["workspaceId"], (GONE,), failed=())

    def delete(self, raw):
        # AWS refuses to delete a workspace that is still moving (ConflictException): let it settle first.
        moving = raw["status"] in ("CREATING", "UPDATING")
        if moving and self._wait(raw["workspaceId"], READY + FAILED + (GONE,), failed=()) is None:
            return False
        return amp.delete_workspace(self.client, workspaceId=raw["workspaceId"], clientToken=str(uuid.uuid4()))

    def wait_gone(self, raw):
        self._wait(raw["workspaceId"], (GONE,), failed=())

    def result(self, raw):
        return result(raw)

    def prepare(self, state):
        self.check()
