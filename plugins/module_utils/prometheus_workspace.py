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

from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import AmpError, AmpErrorHandler, InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.retry import aws_retry
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


# ---------------------------------------------------------------- API helpers


@AmpErrorHandler.list_error_handler("list Prometheus workspaces", [])
@aws_retry()
def list_workspaces(client, alias):
    paginator = client.get_paginator("list_workspaces")
    return [w for page in paginator.paginate(alias=alias) for w in page["workspaces"]]


@AmpErrorHandler.list_error_handler("describe Prometheus workspace", None)
@aws_retry()
def describe_workspace(client, workspace_id):
    return flatten(client.describe_workspace(workspaceId=workspace_id)["workspace"])


@AmpErrorHandler.common_error_handler("create Prometheus workspace")
@aws_retry()
def create_workspace(client, **request):
    return client.create_workspace(**request)


@AmpErrorHandler.deletion_error_handler("delete Prometheus workspace")
@aws_retry()
def delete_workspace(client, workspace_id, token):
    client.delete_workspace(workspaceId=workspace_id, clientToken=token)
    return True


@AmpErrorHandler.common_error_handler("tag Prometheus workspace")
@aws_retry()
def tag_resource(client, arn, tags):
    client.tag_resource(resourceArn=arn, tags=tags)


@AmpErrorHandler.common_error_handler("untag Prometheus workspace")
@aws_retry()
def untag_resource(client, arn, keys):
    client.untag_resource(resourceArn=arn, tagKeys=list(keys))


# ---------------------------------------------------------------- the resource


class WorkspaceManager:
    def __init__(self, client, params, check_mode=False):
        self.client = client
        self.params = params
        self.check_mode = check_mode
        self.timeout = params.get("wait_timeout") or 600
        self.label = "Prometheus workspace %r" % params.get("alias")

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
        return describe_workspace(self.client, workspace_id)

    def _wait(self, workspace_id, ready, failed=FAILED):
        return wait_for_status(lambda: self._describe(workspace_id), "%s (%s)" % (self.label, workspace_id),
                               ready=ready, failed=failed, timeout=self.timeout, status_key="status")

    # present

    def ensure_present(self):
        self.check()
        live, _deleting = self._found()
        if not live:
            return self._create()
        workspace = self._describe(live[0]["workspaceId"])
        if workspace is None:  # deleted between the list and the describe
            return self._create()
        return self._update(workspace)

    def _create(self):
        p = self.params
        after = {"alias": p["alias"], "kms_key_arn": p.get("kms_key_arn"), "tags": dict(p.get("tags") or {})}
        if self.check_mode:
            predicted = {"alias": p["alias"], "status": "ACTIVE" if p.get("wait", True) else "CREATING", "tags": after["tags"]}
            if p.get("kms_key_arn"):
                predicted["kmsKeyArn"] = p["kms_key_arn"]
            return True, {}, after, result(predicted)
        # One token for every retry of this call: a retried create never makes a second workspace.
        request = dict(alias=p["alias"], clientToken=str(uuid.uuid4()))
        if after["tags"]:
            request["tags"] = after["tags"]
        if p.get("kms_key_arn"):
            request["kmsKeyArn"] = p["kms_key_arn"]
        created = create_workspace(self.client, **request)
        workspace = self._wait(created["workspaceId"], READY) if p.get("wait", True) else self._describe(created["workspaceId"])
        return True, {}, settings(workspace), result(workspace)

    def _update(self, workspace):
        p = self.params
        if workspace["status"] in FAILED:
            raise AmpError(message="%s (%s) is %s; delete it (state=absent) and create it again" % (
                self.label, workspace["workspaceId"], workspace["status"]))
        current = settings(workspace)
        if p.get("kms_key_arn") is not None and p["kms_key_arn"] != current["kms_key_arn"]:
            raise InputError(message="%s (%s): kms_key_arn is %r, not %r; AWS sets the key only when it creates a workspace" % (
                self.label, workspace["workspaceId"], current["kms_key_arn"], p["kms_key_arn"]))
        to_set, to_unset = {}, []
        if p.get("tags") is not None:
            to_set, to_unset = compare_aws_tags(current["tags"], p["tags"], purge_tags=p.get("purge_tags", True))
        desired = dict(current, tags=dict((k, v) for k, v in current["tags"].items() if k not in to_unset))
        desired["tags"].update(to_set)
        if desired == current:
            if workspace["status"] in TRANSITIONAL and p.get("wait", True):
                workspace = self._wait(workspace["workspaceId"], READY)
            return False, current, current, result(workspace)
        if self.check_mode:
            predicted = dict(workspace, tags=desired["tags"])
            if p.get("wait", True):
                predicted["status"] = "ACTIVE"
            return True, current, desired, result(predicted)
        if to_unset:
            untag_resource(self.client, workspace["arn"], to_unset)
        if to_set:
            tag_resource(self.client, workspace["arn"], to_set)
        if workspace["status"] in TRANSITIONAL and p.get("wait", True):
            workspace = self._wait(workspace["workspaceId"], READY)
        else:
            workspace = self._describe(workspace["workspaceId"])
        return True, current, settings(workspace), result(workspace)

    # absent

    def ensure_absent(self):
        self.check()
        live, deleting = self._found()
        if not live:
            if deleting and self.params.get("wait", True):
                for workspace in deleting:
                    self._wait(workspace["workspaceId"], (GONE,), failed=())
            return False, {}, {}, {}
        workspace = self._describe(live[0]["workspaceId"])
        if workspace is None:
            return False, {}, {}, {}
        before = settings(workspace)
        if self.check_mode:
            return True, before, {}, {}
        if workspace["status"] in ("CREATING", "UPDATING"):
            # AWS refuses to delete a workspace that is still moving (ConflictException): let it settle first.
            workspace = self._wait(workspace["workspaceId"], READY + FAILED + (GONE,), failed=())
            if workspace is None:
                return True, before, {}, {}
        delete_workspace(self.client, workspace["workspaceId"], str(uuid.uuid4()))
        if self.params.get("wait", True):
            self._wait(workspace["workspaceId"], (GONE,), failed=())
        return True, before, {}, {}
