# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""An IAM Identity Center permission set, its policies and its group assignments.

The pure functions (``validate``, ``desired_state``, ``plan``) are unit-tested without AWS;
``ensure_present`` / ``ensure_absent`` drive the ``sso-admin`` and ``identitystore`` clients.

A permission set is found by name in its instance (names are unique per instance). Present is a
full reconcile of what the user gives: policies and assignments that are not listed are removed
when the matching ``purge_*`` option is true; options left unset are left alone. Identity Center
copies a permission set into each account as the IAM role ``AWSReservedSSO_<name>_<suffix>``
only when it is provisioned, so after a change the permission set is provisioned again to the
accounts it is already in, and the module waits for each provisioning request to succeed.
New assignments provision the current permission set themselves.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import re

from ansible.module_utils.six import string_types
from ansible_collections.amazon.aws.plugins.module_utils.tagging import ansible_dict_to_boto3_tag_list
from ansible_collections.amazon.aws.plugins.module_utils.tagging import boto3_tag_list_to_ansible_dict
from ansible_collections.amazon.aws.plugins.module_utils.tagging import compare_aws_tags

from ansible_collections.hyperpod.tenancy.plugins.module_utils import engine, identity_center, in_flight, naming
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import result
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import IDENTITY_CENTER, NAME_PREFIX, STATE, TAGS, known_value, options
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_policy import render_team_policy
from ansible_collections.hyperpod.tenancy.plugins.module_utils.waiters import wait_for_status

# botocore's sso-admin model
NAME_PATTERN = naming.IAM_NAME_PATTERN
NAME_MAX = 32
DESCRIPTION_MAX = 700
DESCRIPTION_PATTERN = u"[\u0009\u000A\u000D\u0020-\u007E\u00A1-\u00FF]*"
RELAY_STATE_MAX = 240
INLINE_POLICY_MAX = 32768
MANAGED_POLICY_ARN = r"arn:aws(-[a-z]{1,5}){0,3}:iam::aws:policy((/[A-Za-z0-9\.,\+@=_-]+)*)/([A-Za-z0-9\.,\+=@_-]+)"
POLICY_NAME_PATTERN = naming.IAM_NAME_PATTERN
POLICY_PATH_PATTERN = r"((/[A-Za-z0-9\.,\+@=_-]+)*)/"
ACCOUNT_PATTERN = r"\d{12}"
# Identity Center accepts 1 to 12 hours.
SESSION_RANGE = (3600, 43200)
_DURATION = re.compile(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?")


def role_name_pattern(name):
    """The IAM role name Identity Center gives the permission set ``name`` in each account."""
    return naming.sso_role_name_pattern_of(name)


# ---------------------------------------------------------------- input


def team_names(team, prefix):
    """The names derived from ``team`` that the permission set and its kubectl access use (naming.py)."""
    return {
        "permission_set": naming.permission_set_name(team, prefix),
        "role_name_pattern": naming.sso_role_name_pattern(team, prefix),
        "namespace": naming.namespace(team),
        "kubernetes_group": naming.kubernetes_group(team),
    }


def apply_team(params):
    """Fill ``name`` (and ``inline_policy`` from ``team_policy``) for a team; the params, copied."""
    params = dict(params)
    team = params.get("team")
    if not team:
        if params.get("team_policy"):
            raise InputError(message="team_policy needs team")
        return params
    prefix = params.get("name_prefix") or naming.DEFAULT_PREFIX
    problems = naming.name_problems(team, prefix)
    if problems:
        raise InputError(message="team %r: %s" % (team, "; ".join(problems)))
    params["name"] = naming.permission_set_name(team, prefix)
    settings = params.get("team_policy")
    if settings:
        params["inline_policy"] = render_team_policy(
            team,
            settings["account_id"],
            settings["region"],
            settings["data_bucket"],
            settings["hyperpod_cluster_arn"],
            settings["eks_cluster_arn"],
            tag_keys=settings.get("tag_keys") or None,
            name_prefix=prefix,
        )
    return params


def duration_seconds(value):
    match = _DURATION.fullmatch(value or "")
    if not match or not any(match.groups()):
        return None
    hours, minutes, seconds = (int(part or 0) for part in match.groups())
    return hours * 3600 + minutes * 60 + seconds


def parse_policy(value):
    """``inline_policy`` as a dict (None: leave alone; {}: no inline policy)."""
    if value is None:
        return None
    if isinstance(value, string_types):
        if not value.strip():
            return {}
        try:
            value = json.loads(value)
        except ValueError as e:
            raise InputError(message="inline_policy is not valid JSON: %s" % e)
    if not isinstance(value, dict):
        raise InputError(message="inline_policy must be a JSON object (a dict or a JSON string)")
    return value


def validate(params):
    """Everything AWS would refuse, before any call that writes."""
    problems = []
    name = params["name"]
    if not name or len(name) > NAME_MAX or not re.fullmatch(NAME_PATTERN, name):
        problems.append("name %r must be 1 to %d characters of letters, digits and +=,.@_-" % (name, NAME_MAX))
    if params.get("state", "present") == "absent":
        if problems:
            raise InputError(message="; ".join(problems))
        return
    problems.extend(_settings_problems(params))
    problems.extend(_policies_problems(params))
    problems.extend(_assignment_problems(params))
    if problems:
        raise InputError(message="; ".join(problems))


def _settings_problems(params):
    """What AWS would refuse of the description, session duration, relay state and inline policy."""
    problems = []
    description = params.get("description")
    if description is not None and (not description or len(description) > DESCRIPTION_MAX or not re.fullmatch(DESCRIPTION_PATTERN, description)):
        problems.append("description must be 1 to %d printable Latin-1 characters" % DESCRIPTION_MAX)
    if params.get("session_duration") is not None:
        seconds = duration_seconds(params["session_duration"])
        if seconds is None or not SESSION_RANGE[0] <= seconds <= SESSION_RANGE[1]:
            problems.append("session_duration %r must be an ISO-8601 duration (PT1H, PT8H30M) of 1 to 12 hours" % params["session_duration"])
    relay = params.get("relay_state")
    if relay is not None and not 1 <= len(relay) <= RELAY_STATE_MAX:
        problems.append("relay_state must be 1 to %d characters" % RELAY_STATE_MAX)
    policy = parse_policy(params.get("inline_policy"))
    if policy and len(json.dumps(policy, separators=(",", ":"))) > INLINE_POLICY_MAX:
        problems.append("inline_policy is longer than %d characters" % INLINE_POLICY_MAX)
    return problems


def _policies_problems(params):
    """What AWS would refuse of the managed policies, the customer managed policy references and the boundary."""
    problems = []
    for arn in params.get("managed_policies") or []:
        if not re.fullmatch(MANAGED_POLICY_ARN, arn):
            problems.append("managed_policies: %r is not an AWS managed policy ARN (arn:aws:iam::aws:policy/...)" % arn)
    for ref in params.get("customer_managed_policies") or []:
        problems.extend(_reference_problems("customer_managed_policies", ref))
    boundary = params.get("permissions_boundary")
    if boundary:
        problems.extend(_boundary_problems(boundary))
    return problems


def _boundary_problems(boundary):
    """What AWS would refuse of ``permissions_boundary``: exactly one of its two kinds, and that one well formed."""
    given = [k for k in ("managed_policy_arn", "customer_managed_policy_reference") if boundary.get(k)]
    if len(given) != 1:
        return ["permissions_boundary needs exactly one of managed_policy_arn and customer_managed_policy_reference"]
    if given == ["managed_policy_arn"] and not re.fullmatch(MANAGED_POLICY_ARN, boundary["managed_policy_arn"]):
        return ["permissions_boundary.managed_policy_arn %r is not an AWS managed policy ARN" % boundary["managed_policy_arn"]]
    if given == ["customer_managed_policy_reference"]:
        return _reference_problems("permissions_boundary.customer_managed_policy_reference", boundary["customer_managed_policy_reference"])
    return []


def _assignment_problems(params):
    """What AWS would refuse of the accounts, and groups without accounts (or accounts without groups)."""
    problems = []
    for account in params.get("accounts") or []:
        if not re.fullmatch(ACCOUNT_PATTERN, account):
            problems.append("accounts: %r is not a 12-digit account id" % account)
    if (params.get("groups") is None) != (params.get("accounts") is None):
        problems.append("groups and accounts go together: give both or neither")
    return problems


def _reference_problems(where, ref):
    problems = []
    if not ref.get("name") or len(ref["name"]) > 128 or not re.fullmatch(POLICY_NAME_PATTERN, ref["name"]):
        problems.append("%s: name %r must be 1 to 128 characters of letters, digits and +=,.@_-" % (where, ref.get("name")))
    path = ref.get("path") or "/"
    if len(path) > 512 or not re.fullmatch(POLICY_PATH_PATTERN, path):
        problems.append("%s: path %r must start and end with /" % (where, path))
    return problems


# ---------------------------------------------------------------- reads with logic of their own (identity_center.py has the calls)


def list_provisioned_accounts(client, instance_arn, arn, outdated=False):
    """The accounts holding the permission set's role; with ``outdated``, those holding an older version."""
    kwargs = dict(InstanceArn=instance_arn, PermissionSetArn=arn)
    if outdated:
        kwargs["ProvisioningStatus"] = "LATEST_PERMISSION_SET_NOT_PROVISIONED"
    return sorted(identity_center.list_accounts_for_provisioned_permission_set(client, **kwargs))


def list_provisioned_to_account(client, instance_arn, account, outdated=False):
    """ARNs of the permission sets provisioned to ``account``; with ``outdated``, those whose role there holds an older version than the latest."""
    kwargs = dict(InstanceArn=instance_arn, AccountId=account)
    if outdated:
        kwargs["ProvisioningStatus"] = "LATEST_PERMISSION_SET_NOT_PROVISIONED"
    return sorted(identity_center.list_permission_sets_provisioned_to_account(client, **kwargs))


def outdated_accounts(client, instance_arn, arn, provisioned, known=None):
    """The accounts of ``provisioned`` holding an older version of the permission set than its latest.

    ``known`` ({account: outdated permission set ARNs}, listed once per run for all teams) answers
    for the accounts it covers; any other account makes the permission set's own list be read.
    """
    known = known or {}
    if any(account not in known for account in provisioned):
        return list_provisioned_accounts(client, instance_arn, arn, outdated=True)
    return sorted(account for account in provisioned if arn in known[account])


def _assignment_request(instance_arn, arn, assignment):
    """Create/DeleteAccountAssignment's request for an assignment in the module's shape."""
    return dict(
        InstanceArn=instance_arn,
        TargetId=assignment["account_id"],
        TargetType="AWS_ACCOUNT",
        PermissionSetArn=arn,
        PrincipalType=assignment["principal_type"],
        PrincipalId=assignment["principal_id"],
    )


# ---------------------------------------------------------------- normalized shapes


def boundary_to_api(boundary):
    if boundary.get("managed_policy_arn"):
        return {"ManagedPolicyArn": boundary["managed_policy_arn"]}
    ref = boundary["customer_managed_policy_reference"]
    return {"CustomerManagedPolicyReference": {"Name": ref["name"], "Path": ref.get("path") or "/"}}


def boundary_from_api(api):
    if not api:
        return None
    if api.get("ManagedPolicyArn"):
        return {"managed_policy_arn": api["ManagedPolicyArn"]}
    ref = api["CustomerManagedPolicyReference"]
    return {"customer_managed_policy_reference": {"name": ref["Name"], "path": ref.get("Path", "/")}}


def _refs(refs):
    return sorted(({"name": r["name"], "path": r.get("path") or "/"} for r in refs), key=lambda r: (r["path"], r["name"]))


def _assignments(items):
    return sorted(items, key=lambda a: (a["account_id"], a["principal_type"], a["principal_id"]))


def resolve_instance(client, instance_arn, store_id=None):
    """(instance ARN, identity store id); the only instance when none is given.

    Given both (as hyperpod.tenancy.shared_info reads them once per run), nothing is read.
    """
    if instance_arn and store_id:
        return instance_arn, store_id
    instances = identity_center.instances(client, instance_arn)
    if instance_arn and not instances:
        raise InputError(message="Identity Center instance %s does not exist" % instance_arn)
    if len(instances) != 1:
        raise InputError(message="instance_arn is required: this account has %d Identity Center instances" % len(instances))
    return instances[0]["InstanceArn"], instances[0]["IdentityStoreId"]


def resolve_groups(identitystore, store_id, instance_arn, names, known=None):
    """{display name: group id}; an unknown name is an InputError naming the instance.

    ``known`` ({display name: group id}, already resolved for this run) spares their lookups.
    """
    found, missing = identity_center.group_ids(identitystore, store_id, names, known)
    if missing:
        raise InputError(
            message="Identity Center group%s %s not found in identity store %s of instance %s"
            % ("s" if len(missing) > 1 else "", ", ".join(repr(n) for n in missing), store_id, instance_arn)
        )
    return found


# What DescribePermissionSet returns that the module compares, by option name.
DESCRIBED_FIELDS = (
    ("permission_set_arn", "PermissionSetArn"),
    ("name", "Name"),
    ("description", "Description"),
    ("session_duration", "SessionDuration"),
    ("relay_state", "RelayState"),
)


def known_from_described(described, tags=None):
    """The layer's ``known.permission_set`` for a DescribePermissionSet answer (and the permission set's tags, when read)."""
    known = dict((option, described.get(member)) for option, member in DESCRIBED_FIELDS)
    if tags is not None:
        known["tags"] = tags
    return known


def read_tags(client, instance_arn, arn):
    """{key: value} of the permission set's tags."""
    return boto3_tag_list_to_ansible_dict(identity_center.list_tags_for_resource(client, InstanceArn=instance_arn, ResourceArn=arn))


def find_permission_set(client, instance_arn, name, known_arn=None, known=None, known_absent=False):
    """The permission set named ``name``, described; None when there is none.

    Identity Center has no lookup by name: without ``known`` (the permission set as described
    earlier in the run) or ``known_arn`` (its ARN) every permission set of the instance is
    described until one has the name, unless ``known_absent`` says that was done earlier in the run
    and none had it (shared_info): each team reading them all again made a cold run's reads grow with
    the square of the team count. A permission set made since is found when creating one conflicts.
    """
    if known and known.get("name") == name:
        return dict((member, known[option]) for option, member in DESCRIBED_FIELDS if known.get(option) is not None)
    if known_absent and not known_arn:
        return None
    if known_arn:
        described = identity_center.describe_permission_set(client, InstanceArn=instance_arn, PermissionSetArn=known_arn)
        if described and described["Name"] == name:
            return described
    for arn in identity_center.list_permission_sets(client, InstanceArn=instance_arn):
        described = identity_center.describe_permission_set(client, InstanceArn=instance_arn, PermissionSetArn=arn)
        if described and described["Name"] == name:
            return described
    return None


def read_current(client, instance_arn, described, assignment_accounts=(), with_boundary=True, known_outdated=None, known_tags=None):
    """The permission set in the module's normalized shape, with its assignments.

    Without ``with_boundary`` the boundary, which the run then leaves as it is, is not read.
    ``known_outdated`` is outdated_accounts' ``known``; ``known_tags`` the tags read earlier in the run
    (shared_info reads them to check the owner of every team's permission set before the run's first write).
    """
    arn = described["PermissionSetArn"]
    ps = dict(InstanceArn=instance_arn, PermissionSetArn=arn)
    inline = identity_center.get_inline_policy_for_permission_set(client, **ps).get("InlinePolicy") or ""
    provisioned = list_provisioned_accounts(client, instance_arn, arn)
    accounts = sorted(set(provisioned) | set(assignment_accounts))
    assignments = [
        {"account_id": a["AccountId"], "principal_type": a["PrincipalType"], "principal_id": a["PrincipalId"]}
        for account in accounts
        for a in identity_center.list_account_assignments(client, AccountId=account, **ps)
    ]
    current = {
        "name": described["Name"],
        "permission_set_arn": arn,
        "description": described.get("Description"),
        "session_duration": described.get("SessionDuration"),
        "relay_state": described.get("RelayState"),
        "inline_policy": json.loads(inline) if inline else {},
        "managed_policies": sorted(p["Arn"] for p in identity_center.list_managed_policies_in_permission_set(client, **ps)),
        "customer_managed_policies": _refs(
            {"name": r["Name"], "path": r.get("Path", "/")} for r in identity_center.list_customer_managed_policy_references_in_permission_set(client, **ps)
        ),
        "tags": dict(known_tags) if known_tags is not None else read_tags(client, instance_arn, arn),
        "provisioned_accounts": provisioned,
        # Accounts whose role is older than the permission set (an earlier provisioning failed or never ran).
        "outdated_accounts": outdated_accounts(client, instance_arn, arn, provisioned, known_outdated),
        "assignments": _assignments(assignments),
    }
    if with_boundary:
        current["permissions_boundary"] = boundary_from_api(identity_center.get_permissions_boundary_for_permission_set(client, **ps))
    return current


def desired_state(params, current, group_ids):
    """What the permission set should look like after this run (current for what is left unset)."""
    base = copy.deepcopy(current) if current else {
        "name": params["name"],
        "permission_set_arn": None,
        "description": None,
        "session_duration": "PT1H",
        "relay_state": None,
        "inline_policy": {},
        "managed_policies": [],
        "customer_managed_policies": [],
        "tags": {},
        "provisioned_accounts": [],
        "outdated_accounts": [],
        "assignments": [],
    }
    for key in ("description", "session_duration", "relay_state"):
        if params.get(key) is not None:
            base[key] = params[key]
    if current and params.get("session_duration") and duration_seconds(params["session_duration"]) == duration_seconds(current["session_duration"]):
        base["session_duration"] = current["session_duration"]
    policy = parse_policy(params.get("inline_policy"))
    if policy is not None:
        base["inline_policy"] = policy
    if params.get("managed_policies") is not None:
        wanted = sorted(set(params["managed_policies"]))
        base["managed_policies"] = wanted if params.get("purge_managed_policies", True) else sorted(set(base["managed_policies"]) | set(wanted))
    if params.get("customer_managed_policies") is not None:
        wanted = _refs(params["customer_managed_policies"])
        if not params.get("purge_managed_policies", True):
            wanted = _refs(wanted + [r for r in base["customer_managed_policies"] if r not in wanted])
        base["customer_managed_policies"] = wanted
    if params.get("permissions_boundary") is not None:
        base["permissions_boundary"] = boundary_from_api(boundary_to_api(params["permissions_boundary"])) if params["permissions_boundary"] else None
    if params.get("tags") is not None:
        to_set, to_unset = compare_aws_tags(base["tags"], params["tags"], params.get("purge_tags", True))
        base["tags"] = dict((k, v) for k, v in base["tags"].items() if k not in to_unset)
        base["tags"].update(to_set)
    # After the run every account holds the latest version.
    base["outdated_accounts"] = []
    if params.get("groups") is not None:
        wanted = [
            {"account_id": account, "principal_type": "GROUP", "principal_id": group_ids[group]}
            for account in sorted(set(params["accounts"]))
            for group in sorted(set(params["groups"]))
        ]
        if not params.get("purge_assignments", True):
            wanted += [a for a in base["assignments"] if a not in wanted]
        base["assignments"] = _assignments(wanted)
    return base


# Changes Identity Center copies into the accounts' roles only when the permission set is provisioned.
PROVISIONED_CHANGES = ("update", "inline_policy", "attach_managed", "detach_managed", "attach_customer", "detach_customer", "boundary")


def plan(current, desired):
    """The changes from ``current`` (None: missing) to ``desired``, as a dict of lists."""
    current = current or {}
    changes = {}
    if not current:
        changes["create"] = True
    for key in ("description", "session_duration", "relay_state"):
        if current and desired[key] != current.get(key):
            changes.setdefault("update", {})[key] = desired[key]
    changes.update(_policy_changes(current, desired))
    if current and desired["tags"] != current.get("tags"):
        changes.update(_tag_changes(current.get("tags", {}), desired["tags"]))
    if current.get("outdated_accounts"):
        changes["provision"] = list(current["outdated_accounts"])
    changes.update(_assignment_changes(current.get("assignments", []), desired["assignments"]))
    return changes


def _policy_changes(current, desired):
    """``plan``'s changes of the inline policy, the managed policies, the customer managed policy references and the boundary."""
    changes = {}
    if desired["inline_policy"] != current.get("inline_policy", {}):
        changes["inline_policy"] = desired["inline_policy"]
    before = set(current.get("managed_policies", []))
    after = set(desired["managed_policies"])
    if after - before:
        changes["attach_managed"] = sorted(after - before)
    if before - after:
        changes["detach_managed"] = sorted(before - after)
    before_refs, after_refs = current.get("customer_managed_policies", []), desired["customer_managed_policies"]
    if [r for r in after_refs if r not in before_refs]:
        changes["attach_customer"] = [r for r in after_refs if r not in before_refs]
    if [r for r in before_refs if r not in after_refs]:
        changes["detach_customer"] = [r for r in before_refs if r not in after_refs]
    if "permissions_boundary" in desired and desired["permissions_boundary"] != current.get("permissions_boundary"):
        changes["boundary"] = desired["permissions_boundary"]
    return changes


def _tag_changes(old, new):
    """``plan``'s ``tag`` ({key: value} to set) and ``untag`` (keys to remove) from tags ``old`` to ``new``."""
    changes = {}
    set_tags = dict((k, v) for k, v in new.items() if old.get(k) != v)
    if set_tags:
        changes["tag"] = set_tags
    if set(old) - set(new):
        changes["untag"] = sorted(set(old) - set(new))
    return changes


def _assignment_changes(before_a, after_a):
    """``plan``'s ``assign`` and ``unassign``: the assignments of ``after_a`` not in ``before_a``, and the reverse."""
    changes = {}
    if [a for a in after_a if a not in before_a]:
        changes["assign"] = [a for a in after_a if a not in before_a]
    if [a for a in before_a if a not in after_a]:
        changes["unassign"] = [a for a in before_a if a not in after_a]
    return changes


def _wait_request(what, describe, timeout):
    return wait_for_status(describe, what, ready=("SUCCEEDED",), failed=("FAILED",), timeout=timeout, first_delay=0.2, max_delay=5)


# Per direction: the request, the read of its status, that read's request id member, what the wait names.
_ASSIGNMENT_CHANGES = {
    "assign": (
        identity_center.create_account_assignment, identity_center.describe_account_assignment_creation_status,
        "AccountAssignmentCreationRequestId", "assignment of %s %s to account %s",
    ),
    "unassign": (
        identity_center.delete_account_assignment, identity_center.describe_account_assignment_deletion_status,
        "AccountAssignmentDeletionRequestId", "removal of %s %s from account %s",
    ),
}


def _change_assignments(client, instance_arn, arn, direction, assignments, timeout):
    """Create (``assign``) or delete (``unassign``) each assignment, waiting for each request."""
    request, status_of, request_id_member, what = _ASSIGNMENT_CHANGES[direction]
    for assignment in assignments:
        # A slot of the run's outstanding assignments, held until the request's status is read settled (in_flight.py).
        with in_flight.slots("assignments").held():
            status = request(client, **_assignment_request(instance_arn, arn, assignment))
            _wait_request(
                what % (assignment["principal_type"].lower(), assignment["principal_id"], assignment["account_id"]),
                lambda request_id=status["RequestId"]: status_of(client, InstanceArn=instance_arn, **{request_id_member: request_id}),
                timeout,
            )


def _public(state):
    if not state:
        return {}
    result = dict((k, v) for k, v in state.items() if k != "provisioned_accounts")
    result["role_name_pattern"] = role_name_pattern(state["name"])
    return result


def owner_problem(team, name, arn, tags, tag_keys=None, adopt=False):
    """Why the team's permission set ``name`` (with ``tags``) must not be changed for ``team``; None when it may.

    The rule is naming.ownership_problem's; this layer's check and shared_info's check of every team before the
    run's first write both ask here.
    """
    return naming.ownership_problem("permission set %s (%s)" % (name, arn), team, tags, tag_keys, adopt, "permission_set")


def check_owner(params, current, adopt=False):
    """Refuse a team's permission set that this collection did not make for the team (``owner_problem``)."""
    if not params.get("team"):
        return
    tag_keys = (params.get("team_policy") or {}).get("tag_keys") or params.get("tag_keys")
    problem = owner_problem(params["team"], current["name"], current["permission_set_arn"], current.get("tags"), tag_keys, adopt)
    if problem:
        raise InputError(message=problem)


def _with_boundary(params):
    """Whether the run reads (and sets) the permissions boundary."""
    # A boundary the task does not set is left as it is, so it is not read either.
    return params.get("permissions_boundary") is not None


def _read_permission_set(client, instance_arn, params, arn, known=None, outdated=None, known_absent=False):
    """The permission set ``params["name"]`` in ``read_current``'s shape (None: missing); ``find_permission_set``'s arguments."""
    described = find_permission_set(client, instance_arn, params["name"], arn, known, known_absent)
    if not described:
        return None
    # The tags shared_info read with the description, for the permission set it described.
    known_tags = known.get("tags") if known and known.get("permission_set_arn") == described["PermissionSetArn"] else None
    return read_current(client, instance_arn, described, params.get("accounts") or [], _with_boundary(params), outdated, known_tags)


def _create_permission_set(client, instance_arn, desired):
    """CreatePermissionSet for ``desired`` (its settings and tags); the new permission set's ARN."""
    kwargs = dict(InstanceArn=instance_arn, Name=desired["name"], SessionDuration=desired["session_duration"])
    if desired["description"]:
        kwargs["Description"] = desired["description"]
    if desired["relay_state"]:
        kwargs["RelayState"] = desired["relay_state"]
    if desired["tags"]:
        kwargs["Tags"] = ansible_dict_to_boto3_tag_list(desired["tags"])
    return identity_center.create_permission_set(client, **kwargs)["PermissionSetArn"]


def _update_settings(client, ps, desired, changes):
    """UpdatePermissionSet for ``plan``'s ``update`` (description, session duration, relay state)."""
    if changes.get("update"):
        kwargs = dict(ps)
        for key, member in (("description", "Description"), ("session_duration", "SessionDuration"), ("relay_state", "RelayState")):
            if key in changes["update"] and desired[key] is not None:
                kwargs[member] = desired[key]
        identity_center.update_permission_set(client, **kwargs)


def _write_policies(client, ps, changes):
    """``plan``'s policy changes, in order: the inline policy, detachments, attachments, the boundary."""
    if "inline_policy" in changes:
        if changes["inline_policy"]:
            identity_center.put_inline_policy_to_permission_set(client, InlinePolicy=json.dumps(changes["inline_policy"], sort_keys=True), **ps)
        else:
            identity_center.delete_inline_policy_from_permission_set(client, **ps)
    for policy_arn in changes.get("detach_managed", []):
        identity_center.detach_managed_policy_from_permission_set(client, ManagedPolicyArn=policy_arn, **ps)
    for ref in changes.get("detach_customer", []):
        identity_center.detach_customer_managed_policy_reference_from_permission_set(
            client, CustomerManagedPolicyReference={"Name": ref["name"], "Path": ref["path"]}, **ps
        )
    for policy_arn in changes.get("attach_managed", []):
        identity_center.attach_managed_policy_to_permission_set(client, ManagedPolicyArn=policy_arn, **ps)
    for ref in changes.get("attach_customer", []):
        identity_center.attach_customer_managed_policy_reference_to_permission_set(
            client, CustomerManagedPolicyReference={"Name": ref["name"], "Path": ref["path"]}, **ps
        )
    if "boundary" in changes:
        if changes["boundary"]:
            identity_center.put_permissions_boundary_to_permission_set(client, PermissionsBoundary=boundary_to_api(changes["boundary"]), **ps)
        else:
            identity_center.delete_permissions_boundary_from_permission_set(client, **ps)


def _write_tags(client, instance_arn, arn, changes):
    """``plan``'s ``untag``, then its ``tag``."""
    if changes.get("untag"):
        identity_center.untag_resource(client, InstanceArn=instance_arn, ResourceArn=arn, TagKeys=list(changes["untag"]))
    if changes.get("tag"):
        identity_center.tag_resource(client, InstanceArn=instance_arn, ResourceArn=arn, Tags=ansible_dict_to_boto3_tag_list(changes["tag"]))


def _accounts_to_provision(current, changes):
    """The accounts to provision the permission set to after ``changes``."""
    # The accounts that already have the role get the new content only when provisioned again.
    content_changed = any(k in changes for k in PROVISIONED_CHANGES)
    return current["provisioned_accounts"] if current and content_changed else changes.get("provision", [])


def _provision(client, instance_arn, ps, name, accounts, timeout):
    """ProvisionPermissionSet to each account, waiting for each request."""
    for account in accounts:
        # The account's role lock and a provisioning slot, held until the request settles (in_flight.py).
        with in_flight.provisioning(account):
            status = identity_center.provision_permission_set(client, TargetType="AWS_ACCOUNT", TargetId=account, **ps)
            _wait_request(
                "provisioning of permission set %s to account %s" % (name, account),
                lambda request_id=status["RequestId"]: identity_center.describe_permission_set_provisioning_status(
                    client, InstanceArn=instance_arn, ProvisionPermissionSetRequestId=request_id
                ),
                timeout,
            )


class PermissionSet(engine.Resource):
    """An Identity Center permission set with its policies, tags, provisioning and assignments, as the engine converges
    it: ``raw`` is ``read_current``'s. What shared_info read earlier in the run (the layer's ``known``: the permission set,
    its tags, the outdated accounts) only tells that nothing changes: a write is planned from a new read."""

    label = "permission set"

    def __init__(self, client, identitystore, params, check_mode):
        super(PermissionSet, self).__init__(client, {"wait": False}, check_mode)
        self.identitystore, self.params = identitystore, params
        self.present = params["state"] == "present"
        self.instance_arn, self.group_ids, self.first = None, None, None
        # What the run makes of the permission set (desired_state's), and plan's changes to get there.
        self.wanted, self.changes = None, {}

    def prepare(self, state):
        validate(self.params)
        p = self.params
        self.instance_arn, store_id = resolve_instance(self.client, p.get("instance_arn"), p.get("identity_store_id"))
        if state == "present":
            groups = sorted(set(p.get("groups") or []))
            self.group_ids = resolve_groups(self.identitystore, store_id, self.instance_arn, groups, p.get("identity_center_group_ids"))

    def read(self, fresh=False):
        p = self.params
        if not self.present:
            described = find_permission_set(self.client, self.instance_arn, p["name"], p.get("permission_set_arn"))
            return None if described is None else read_current(self.client, self.instance_arn, described)
        if fresh:
            return _read_permission_set(self.client, self.instance_arn, p, self.first["permission_set_arn"])
        # Absent from shared_info's lookup: CreatePermissionSet itself tells whether another run made it since
        # (ConflictException, a lost race converged again with fresh reads, layer.converge_past_a_lost_race).
        self.first = _read_permission_set(
            self.client, self.instance_arn, p, p.get("permission_set_arn"), known_value(p, "permission_set"), known_value(p, "outdated_permission_sets"),
            known_value(p, "absent"),
        )
        return self.first

    def copied(self, raw):
        return bool(raw and (known_value(self.params, "permission_set") or known_value(self.params, "outdated_permission_sets")))

    def owned(self, raw):
        check_owner(self.params, raw, adopt=self.present and self.params.get("adopt"))

    def view(self, raw):
        return _public(raw)

    def desired(self, raw):
        self.wanted = desired_state(self.params, raw, self.group_ids)
        self.changes = plan(raw, self.wanted)
        return _public(self.wanted)

    def moves(self, raw, desired):
        return bool(self.changes)

    def predict(self, raw, desired):
        return self.wanted

    def _write(self, current, arn):
        """``plan``'s changes, in order: settings, policies, tags, provisioning, assignments."""
        changes, timeout = self.changes, self.params.get("wait_timeout", 600)
        ps = dict(InstanceArn=self.instance_arn, PermissionSetArn=arn)
        _update_settings(self.client, ps, self.wanted, changes)
        _write_policies(self.client, ps, changes)
        _write_tags(self.client, self.instance_arn, arn, changes)
        _provision(self.client, self.instance_arn, ps, self.wanted["name"], _accounts_to_provision(current, changes), timeout)
        _change_assignments(self.client, self.instance_arn, arn, "assign", changes.get("assign", []), timeout)
        _change_assignments(self.client, self.instance_arn, arn, "unassign", changes.get("unassign", []), timeout)
        return arn

    def create(self, desired):
        return self._write(None, _create_permission_set(self.client, self.instance_arn, self.wanted))

    def update(self, raw, desired):
        self._write(raw, raw["permission_set_arn"])
        return False

    def read_back(self, handle, settle):
        arn = handle["permission_set_arn"] if isinstance(handle, dict) else handle
        described = identity_center.describe_permission_set(self.client, InstanceArn=self.instance_arn, PermissionSetArn=arn)
        return read_current(self.client, self.instance_arn, described, self.params.get("accounts") or [], _with_boundary(self.params))

    def delete(self, raw):
        """The permission set's assignments, then the permission set."""
        arn = raw["permission_set_arn"]
        _change_assignments(self.client, self.instance_arn, arn, "unassign", raw["assignments"], self.params.get("wait_timeout", 600))
        identity_center.delete_permission_set(self.client, InstanceArn=self.instance_arn, PermissionSetArn=arn)
        return True

    def result(self, raw):
        return _public(raw)


_POLICY_REFERENCE = dict(name=dict(type="str", required=True), path=dict(type="str", default="/"))
# The permission set's own settings: options of the module and what the layer's known.permission_set carries of a described one.
_SETTINGS = dict(description=dict(type="str"), session_duration=dict(type="str"), relay_state=dict(type="str"))

# The keyword arguments of identity_center_permission_set's AnsibleAWSModule (and of team_resources' permission_set).
MODULE_OPTIONS = options(
    dict(
        instance_arn=dict(type="str"),
        identity_store_id=dict(type="str"),
        identity_center_group_ids=dict(type="dict"),
        permission_set_arn=dict(type="str"),
        name=dict(type="str"),
        team=dict(type="str"),
        team_policy=dict(
            type="dict",
            options=dict(
                account_id=dict(type="str", required=True),
                region=dict(type="str", required=True),
                data_bucket=dict(type="str", required=True),
                hyperpod_cluster_arn=dict(type="str", required=True),
                eks_cluster_arn=dict(type="str", required=True),
                tag_keys=dict(type="dict", no_log=False),
            ),
        ),
        inline_policy=dict(type="raw"),
        managed_policies=dict(type="list", elements="str"),
        customer_managed_policies=dict(type="list", elements="dict", options=_POLICY_REFERENCE),
        purge_managed_policies=dict(type="bool", default=True),
        permissions_boundary=dict(
            type="dict",
            options=dict(managed_policy_arn=dict(type="str"), customer_managed_policy_reference=dict(type="dict", options=_POLICY_REFERENCE)),
        ),
        groups=dict(type="list", elements="str"),
        accounts=dict(type="list", elements="str"),
        purge_assignments=dict(type="bool", default=True),
        tag_keys=dict(type="dict", no_log=False),
        adopt=dict(type="bool", default=False),
        wait_timeout=dict(type="int", default=600),
    ),
    _SETTINGS, STATE, NAME_PREFIX, TAGS, IDENTITY_CENTER,
    required_together=[["groups", "accounts"]],
    required_one_of=[["name", "team"]],
    mutually_exclusive=[["name", "team"], ["inline_policy", "team_policy"]],
)
# What shared_info read earlier in the run (team_resources' ``known``): the permission set (``known_from_described``'s
# shape), whether it found none of its name after describing every one (``absent``), the accounts each permission set is
# outdated in (``outdated_accounts``).
KNOWN = dict(
    permission_set=dict(
        type="dict",
        options=dict(
            permission_set_arn=dict(type="str", required=True), name=dict(type="str", required=True), tags=dict(type="dict", no_log=False), **_SETTINGS
        ),
    ),
    absent=dict(type="bool", default=False),
    outdated_permission_sets=dict(type="dict"),
)


def check(params):
    """What can be refused without a call (names, the policy, the references); raises ``InputError``."""
    validate(apply_team(params))


def converge(context, params):
    """The result of identity_center_permission_set: the permission set after the run, and the team's names."""
    params = apply_team(params)
    client = context.client("sso-admin")
    outcome = engine.converge(PermissionSet(client, context.client("identitystore"), params, context.check_mode), params["state"], context.check_mode)
    names = dict(team_names=team_names(params["team"], params["name_prefix"])) if params.get("team") else {}
    return result(
        outcome.changed, outcome.before, outcome.after, permission_set=outcome.after,
        permission_set_arn=outcome.after.get("permission_set_arn") or "", role_name_pattern=role_name_pattern(params["name"]), **names
    )
