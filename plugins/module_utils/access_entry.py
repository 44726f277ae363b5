# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""An EKS access entry and the access policies associated with it.

The pure functions (``validate``, ``policy_arn``, ``desired_policies``, ``plan``) are unit-testable
without AWS; ``ensure_present`` / ``ensure_absent`` drive the ``eks`` and ``iam`` clients.

The principal can be given as the role-name pattern of an Identity Center permission set
(``AWSReservedSSO_<name>_*``): the role's suffix is random, so the pattern is resolved through
IAM ``ListRoles`` under ``/aws-reserved/sso.amazonaws.com/`` to the one role of permission set ``<name>``
(``naming.sso_role_permission_set``: the whole name, not a glob, which would take ``<name>_Admins``'s too). The
access entry is made for the role's full ARN, path included (EKS refuses the ARN without it).

With ``team`` and ``principal: execution_role`` the principal is the team's Studio execution role
(``execution_role.py``): AWS's "Setting up an Amazon EKS cluster in Studio" has Studio reach the
cluster as that role, through an access entry of its own with the access policies and scope the
team's users get.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import re

from ansible_collections.hyperpod.tenancy.plugins.module_utils import compare
from ansible_collections.hyperpod.tenancy.plugins.module_utils import eks as eks_api
from ansible_collections.hyperpod.tenancy.plugins.module_utils import engine
from ansible_collections.hyperpod.tenancy.plugins.module_utils import execution_role
from ansible_collections.hyperpod.tenancy.plugins.module_utils import iam as iam_api
from ansible_collections.hyperpod.tenancy.plugins.module_utils import naming
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import NAME_PREFIX, STATE, TAGS, known_value, options, team_section
from ansible_collections.hyperpod.tenancy.plugins.module_utils.compare import snake
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import result

POLICY_ARN_PREFIX = "arn:aws:eks::aws:cluster-access-policy/"
PRINCIPAL_ARN = re.compile(r"arn:aws[a-z-]*:iam::\d{12}:(role|user)(/[\x21-\x7e]*)?/[\w+=,.@-]+")
TYPES = ("STANDARD", "FARGATE_LINUX", "EC2_LINUX", "EC2_WINDOWS", "EC2", "HYBRID_LINUX", "HYPERPOD_LINUX")
RESERVED_PREFIXES = ("system:", "eks:", "aws:", "amazon:", "iam:")
API_MODES = ("API", "API_AND_CONFIG_MAP")
NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\*?|[a-z0-9]*\*")


# An account ID for check(), which makes no call: it checks the execution role's name, not its account.
_ANY_ACCOUNT = "000000000000"


def apply_team(params, account_id=None):
    """``principal_arn`` from ``team``: the role-name pattern of the team's permission set (naming.py), or with
    ``principal: execution_role`` the ARN of the team's Studio execution role in ``account_id`` (when the
    option is unset: ``account_id``, a callable asked only then)."""
    team = params.get("team")
    if team:
        prefix = params.get("name_prefix") or naming.DEFAULT_PREFIX
        problems = naming.name_problems(team, prefix)
        if params.get("account_id") and not re.fullmatch(r"\d{12}", params["account_id"]):
            problems.append("account_id %r is not a 12-digit AWS account ID" % params["account_id"])
        if problems:
            raise InputError(message="team %r: %s" % (team, "; ".join(problems)))
        if params.get("principal_arn"):
            return params  # the team's principal as found earlier in the run: the team names whose entry it is
        if params.get("principal") == "execution_role":
            account = params.get("account_id") or account_id()
            params["principal_arn"] = execution_role.role_arn(account, execution_role.role_name(team, prefix))
        else:
            params["principal_arn"] = naming.sso_role_name_pattern(team, prefix)
    return params


def policy_arn(policy):
    """An ``access_policies`` entry's ARN, from ``policy_arn`` or the policy ``name``."""
    if policy.get("policy_arn"):
        return policy["policy_arn"]
    return POLICY_ARN_PREFIX + policy["name"]


def scope(access_scope):
    """An access scope, normalized: namespaces sorted and unique, none for a cluster scope."""
    access_scope = access_scope or {}
    return {"type": access_scope.get("type"), "namespaces": sorted(set(access_scope.get("namespaces") or []))}


def validate(params):
    problems = []
    if params.get("state", "present") == "absent":
        return
    entry_type = params.get("type") or "STANDARD"
    if entry_type != "STANDARD" and (params.get("kubernetes_groups") or params.get("username") is not None or params.get("access_policies")):
        problems.append("kubernetes_groups, username and access_policies are only for access entries of type STANDARD, not %s" % entry_type)
    username = params.get("username")
    if username is not None and (not username or username.startswith(RESERVED_PREFIXES)):
        problems.append("username %r must not be empty or start with %s" % (username, ", ".join(RESERVED_PREFIXES)))
    for group in params.get("kubernetes_groups") or []:
        if not group or group.startswith(RESERVED_PREFIXES):
            problems.append("kubernetes_groups: %r must not be empty or start with %s" % (group, ", ".join(RESERVED_PREFIXES)))
    problems.extend(_access_policies_problems(params.get("access_policies") or []))
    principal = params.get("principal_arn") or ""
    if not (PRINCIPAL_ARN.fullmatch(principal) or naming.sso_role_pattern_permission_set(principal)):
        problems.append("principal_arn %r must be an IAM role or user ARN, or an Identity Center role-name pattern AWSReservedSSO_<name>_*" % principal)
    if problems:
        raise InputError(message="; ".join(problems))


def _access_policies_problems(policies):
    """What EKS would refuse of ``access_policies``: each policy's ARN or name, a policy listed twice, the scopes."""
    problems = []
    seen = set()
    for index, policy in enumerate(policies):
        where = "access_policies[%d]" % index
        if bool(policy.get("policy_arn")) == bool(policy.get("name")):
            problems.append("%s: give exactly one of policy_arn and name" % where)
            continue
        arn = policy_arn(policy)
        if not arn.startswith(POLICY_ARN_PREFIX) or not re.fullmatch(r"[A-Za-z0-9]+", arn[len(POLICY_ARN_PREFIX):]):
            problems.append("%s: %r is not an EKS access policy (%s<Name>)" % (where, arn, POLICY_ARN_PREFIX))
        if arn in seen:
            problems.append("%s: %s is listed twice" % (where, arn))
        seen.add(arn)
        problems.extend(_scope_problems(where, scope(policy.get("access_scope"))))
    return problems


def _scope_problems(where, access_scope):
    """What EKS would refuse of an access policy's normalized scope (``scope``)."""
    problems = []
    if access_scope["type"] == "namespace" and not access_scope["namespaces"]:
        problems.append("%s: a namespace scope needs namespaces" % where)
    if access_scope["type"] == "cluster" and access_scope["namespaces"]:
        problems.append("%s: a cluster scope takes no namespaces" % where)
    for namespace in access_scope["namespaces"]:
        if len(namespace) > 63 or not NAMESPACE.fullmatch(namespace):
            problems.append("%s: %r is not a Kubernetes namespace name" % (where, namespace))
    return problems


# ---------------------------------------------------------------- the calls


def _scope(access_scope):
    """An access scope as the API takes it (no ``namespaces`` member for a cluster scope)."""
    api_scope = {"type": access_scope["type"]}
    if access_scope["namespaces"]:
        api_scope["namespaces"] = access_scope["namespaces"]
    return api_scope


def describe_access_entry(eks, cluster, principal):
    return eks_api.describe_access_entry(eks, clusterName=cluster, principalArn=principal)


# What ``current_state`` takes from DescribeAccessEntry's answer, and ``createdAt`` (``stale_reason``): what a caller hands on
# as the layer's ``known.access_entry``.
ENTRY_FIELDS = ("clusterName", "principalArn", "accessEntryArn", "type", "username", "kubernetesGroups", "tags", "createdAt")


def when(value):
    """A date as botocore gives it, as ``iso_date`` passes it on, or as epoch seconds: an aware datetime (None for None)."""
    if value is None or isinstance(value, datetime.datetime):
        return value if value is None or value.tzinfo else value.replace(tzinfo=datetime.timezone.utc)
    if isinstance(value, (int, float)):
        return datetime.datetime.fromtimestamp(value, datetime.timezone.utc)
    return when(datetime.datetime.fromisoformat(value.replace("Z", "+00:00")))


def known_entry(principal, entry):
    """DescribeAccessEntry's answer (or None) for ``principal`` as the layer's ``known.access_entry`` takes it."""
    return {"principal_arn": principal, "access_entry": dict((key, compare.iso_date(entry[key])) for key in ENTRY_FIELDS if key in entry) if entry else None}


def stale_reason(entry, role_created):
    """Why ``entry`` no longer works for its principal (None when it does): it is older than the IAM role it names.

    EKS API reference, AccessEntry ``principalArn``: "If you'll be deleting or recreating an IAM principal, you should
    delete the access entry and create it again [...] If you delete the IAM principal, even if it has the same ARN, the
    access entry won't work" (EKS ties the entry to the principal's unique ID, not to its ARN). A role re-created by name
    (drift correction of a deleted execution role) is such a principal: its CreateDate is after the entry's createdAt.
    """
    created, role = when(entry.get("createdAt")), when(role_created)
    if created is None or role is None or created >= role:
        return None
    return (
        "the access entry (created %s) is older than its IAM role %s (created %s): the role was deleted and created again, and EKS "
        "does not map the new role to the old entry, so the entry is deleted and created again"
        % (created.isoformat(), entry.get("principalArn"), role.isoformat())
    )


def role_created(iam, principal):
    """The CreateDate of the IAM role ``principal`` names (None for a user, or a role that does not exist)."""
    match = re.match(r"arn:aws[a-z-]*:iam::\d{12}:role/(?:.*/)?([\w+=,.@-]+)$", principal)
    role = iam_api.get_role(iam, RoleName=match.group(1)) if match else None
    return (role or {}).get("CreateDate")


def list_associated(eks, cluster, principal):
    return eks_api.list_associated_access_policies(eks, clusterName=cluster, principalArn=principal)


# ---------------------------------------------------------------- reconcile


def resolve_principal(iam, principal, check_mode=False):
    """The principal's ARN; an Identity Center role-name pattern must match exactly one role.

    In check mode a pattern that matches no role yet gives None: the permission set may be
    created earlier in the same (checked) run, so its role cannot exist before the real run.
    """
    permission_set = naming.sso_role_pattern_permission_set(principal)
    if permission_set is None:
        return principal
    matches = sorted(r["Arn"] for r in iam_api.sso_roles(iam) if naming.sso_role_permission_set(r["RoleName"]) == permission_set)
    if not matches and check_mode:
        return None
    if len(matches) != 1:
        found = ", ".join(matches) if matches else "none"
        raise InputError(
            message="principal_arn %s must match exactly one IAM role under %s; found %s (is the permission set assigned to this account?)"
            % (principal, iam_api.SSO_ROLE_PATH, found)
        )
    return matches[0]


def desired_policies(params):
    """{policy ARN: normalized scope} the user asks for (None: leave associations alone)."""
    if params.get("access_policies") is None:
        return None
    return dict((policy_arn(p), scope(p.get("access_scope"))) for p in params["access_policies"])


def current_state(entry, associated):
    if entry is None:
        return None
    return {
        "cluster_name": entry["clusterName"],
        "principal_arn": entry["principalArn"],
        "access_entry_arn": entry["accessEntryArn"],
        "type": entry.get("type", "STANDARD"),
        "username": entry.get("username"),
        "kubernetes_groups": sorted(entry.get("kubernetesGroups") or []),
        "tags": dict(entry.get("tags") or {}),
        "access_policies": sorted(
            ({"policy_arn": p["policyArn"], "access_scope": scope(p["accessScope"])} for p in associated), key=lambda p: p["policy_arn"]
        ),
    }


def desired_state(params, current, principal):
    """What the access entry should look like (current for what is left unset)."""
    if current:
        desired = dict(current, tags=dict(current["tags"]), kubernetes_groups=list(current["kubernetes_groups"]), type=params.get("type") or "STANDARD")
    else:
        desired = {
            "cluster_name": params["cluster_name"],
            "principal_arn": principal,
            "access_entry_arn": None,
            "type": params.get("type") or "STANDARD",
            "username": None,
            "kubernetes_groups": [],
            "tags": {},
            "access_policies": [],
        }
    if params.get("kubernetes_groups") is not None:
        desired["kubernetes_groups"] = sorted(set(params["kubernetes_groups"]))
    if params.get("username") is not None:
        desired["username"] = params["username"]
    if params.get("tags") is not None:
        tags = dict(params["tags"]) if params.get("purge_tags", True) else dict(desired["tags"], **params["tags"])
        desired["tags"] = tags
    if params.get("team"):
        # What the collection makes for a team carries the team's mark, whatever tags were given (check_owner reads it).
        desired["tags"].update(naming.owner_marks(params["team"], params.get("tag_keys")))
    wanted = desired_policies(params)
    if wanted is not None:
        desired["access_policies"] = [{"policy_arn": arn, "access_scope": wanted[arn]} for arn in sorted(wanted)]
    return desired


def plan(current, desired, stale=None):
    """The writes from ``current`` to ``desired``; ``stale`` (``stale_reason``) re-creates the entry: delete, then create
    as if none existed (its groups, user name, tags and access policies as ``desired`` has them)."""
    if current is not None and desired["type"] != current["type"]:
        # Also before a re-create: an adopted entry of another type is the platform's to delete, not this module's to retype.
        raise InputError(
            message="access entry %s is of type %s, not %s; the type cannot be changed in place (delete the entry first)"
            % (current["principal_arn"], current["type"], desired["type"])
        )
    if current is not None and stale:
        return dict(plan(None, desired), recreate=stale)
    changes = {}
    if current is None:
        changes["create"] = True
    else:
        update = {}
        if desired["kubernetes_groups"] != current["kubernetes_groups"]:
            update["kubernetesGroups"] = desired["kubernetes_groups"]
        if desired["username"] != current["username"]:
            update["username"] = desired["username"]
        if update:
            changes["update"] = update
        old, new = current["tags"], desired["tags"]
        if dict((k, v) for k, v in new.items() if old.get(k) != v):
            changes["tag"] = dict((k, v) for k, v in new.items() if old.get(k) != v)
        if set(old) - set(new):
            changes["untag"] = sorted(set(old) - set(new))
    before = dict((p["policy_arn"], p["access_scope"]) for p in (current or {}).get("access_policies", []))
    after = dict((p["policy_arn"], p["access_scope"]) for p in desired["access_policies"])
    associate_list = [(arn, after[arn]) for arn in sorted(after) if before.get(arn) != after[arn]]
    if associate_list:
        changes["associate"] = associate_list
    if set(before) - set(after):
        changes["disassociate"] = sorted(set(before) - set(after))
    return changes


def _public(state):
    return snake(state, ignore=("tags",)) if state else {}


def _check_cluster(eks, name):
    cluster = eks_api.describe_cluster(eks, name=name)
    if cluster is None:
        raise InputError(message="EKS cluster %s does not exist" % name)
    mode = (cluster.get("accessConfig") or {}).get("authenticationMode", "CONFIG_MAP")
    if mode not in API_MODES:
        raise InputError(message="EKS cluster %s uses authentication mode %s; access entries need %s" % (name, mode, " or ".join(API_MODES)))
    return cluster


def owner_problem(team, cluster, principal, tags, tag_keys=None, adopt=False):
    """Why the team's access entry of ``principal`` on ``cluster`` (with ``tags``) must not be changed for ``team``; None when it may.

    The rule is naming.ownership_problem's; this layer's check and shared_info's check of every team before the
    run's first write both ask here.
    """
    return naming.ownership_problem("access entry of %s on cluster %s" % (principal, cluster), team, tags, tag_keys, adopt, "access_entry")


def check_owner(entry, principal, params, adopt=False):
    """Refuse a team's access entry that this collection did not make for the team (``owner_problem``)."""
    if not params.get("team"):
        return
    problem = owner_problem(params["team"], params["cluster_name"], principal, entry.get("tags"), params.get("tag_keys"), adopt)
    if problem:
        raise InputError(message=problem)


def _create_entry(eks, principal, params, desired, recreate):
    """CreateAccessEntry for ``desired`` (``recreate``: in place of the stale entry just deleted)."""
    kwargs = dict(clusterName=params["cluster_name"], principalArn=principal, type=desired["type"])
    if desired["kubernetes_groups"]:
        kwargs["kubernetesGroups"] = desired["kubernetes_groups"]
    # A re-created entry takes the user name the task sets; one EKS made for the old entry EKS makes again.
    username = params.get("username") if recreate else desired["username"]
    if username is not None:
        kwargs["username"] = username
    if desired["tags"]:
        kwargs["tags"] = desired["tags"]
    eks_api.create_access_entry(eks, **kwargs)


def _write_changes(eks, principal, params, current, desired, changes):
    """The writes of ``changes`` (``plan``'s), in order: re-create or create, update, tags, access policies."""
    cluster = params["cluster_name"]
    if changes.get("recreate"):
        eks_api.delete_access_entry(eks, clusterName=cluster, principalArn=principal)
    if changes.get("create"):
        _create_entry(eks, principal, params, desired, changes.get("recreate"))
    if changes.get("update"):
        eks_api.update_access_entry(eks, clusterName=cluster, principalArn=principal, **changes["update"])
    if changes.get("untag"):
        eks_api.untag_resource(eks, resourceArn=current["access_entry_arn"], tagKeys=list(changes["untag"]))
    if changes.get("tag"):
        eks_api.tag_resource(eks, resourceArn=current["access_entry_arn"], tags=changes["tag"])
    for arn in changes.get("disassociate", []):
        eks_api.disassociate_access_policy(eks, clusterName=cluster, principalArn=principal, policyArn=arn)
    for arn, access_scope in changes.get("associate", []):
        eks_api.associate_access_policy(eks, clusterName=cluster, principalArn=principal, policyArn=arn, accessScope=_scope(access_scope))


class AccessEntry(engine.Resource):
    """The access entry of one principal on one cluster, as the engine converges it.

    ``raw`` is ``{"entry": DescribeAccessEntry's answer, "current": current_state}``, ``current`` added when first
    asked (after the owner check: another team's entry's policies are not listed). With ``state: present``,
    the layer's ``known.access_entry`` (``{"principal_arn": ..., "access_entry": DescribeAccessEntry's answer or None}``, read earlier
    in the run) spares the DescribeAccessEntry when it is of the principal resolved here; ``principal`` is None in check
    mode for a role-name pattern whose role does not exist yet (resolve_principal). With ``state: absent``, a role-name
    pattern is matched against the cluster's access entries, not IAM: the entry of a role that Identity Center has
    already deleted is still found and removed.
    """

    label = "access entry"

    def __init__(self, eks, iam, params, check_mode, principal=None):
        super(AccessEntry, self).__init__(eks, params, check_mode)
        # EKS's access-entry writes take effect at once: nothing to wait for.
        self.iam, self.principal, self.waiting = iam, principal, False
        self.present = params["state"] == "present"
        known = known_value(params, "access_entry")
        self.copy = known if self.present and known is not None and known.get("principal_arn") == principal else None
        # The principal's CreateDate (given, as shared_info read it, or read here once, when an entry exists to compare with).
        self.principal_created, self.role_asked = known_value(params, "principal_created"), False
        self.wanted = None

    def read(self, fresh=False):
        cluster = self.params["cluster_name"]
        if not self.present:
            if eks_api.describe_cluster(self.client, name=cluster) is None:
                return None
            self.principal = self._entry_of_pattern(cluster)
        if self.principal is None:
            return None
        from_copy = self.copy is not None and not fresh
        entry = self.copy.get("access_entry") if from_copy else describe_access_entry(self.client, cluster, self.principal)
        return None if entry is None else {"entry": entry}

    def _entry_of_pattern(self, cluster):
        """The principal of the entry a role-name pattern names (None: no entry); the principal as given otherwise."""
        given = self.params["principal_arn"]
        permission_set = naming.sso_role_pattern_permission_set(given)
        if permission_set is None:
            return given
        entries = eks_api.list_access_entries(self.client, clusterName=cluster)
        matches = [arn for arn in entries if naming.sso_role_permission_set(arn.rsplit("/", 1)[-1]) == permission_set]
        if len(matches) > 1:
            raise InputError(message="principal_arn %s matches several access entries: %s" % (given, ", ".join(sorted(matches))))
        return matches[0] if matches else None

    def copied(self, raw):
        return self.copy is not None

    def owned(self, raw):
        # Offboarding by team deletes only the entry this collection made (or adopted, and so marked) for the team.
        check_owner(raw["entry"], self.principal, self.params, self.present and self.params.get("adopt"))

    def _current(self, raw):
        if "current" not in raw:
            raw["current"] = current_state(raw["entry"], list_associated(self.client, self.params["cluster_name"], self.principal))
        return raw["current"]

    def _stale(self, raw):
        # An entry read back after this run's write is not: its role was read before it was made.
        if not self.present or raw["entry"] is None or raw.get("written"):
            return None
        if self.principal_created is None and not self.role_asked:
            # Asked once: a role that does not exist (None) is not asked again.
            self.role_asked, self.principal_created = True, role_created(self.iam, self.principal)
        return stale_reason(raw["entry"], self.principal_created)

    def view(self, raw):
        public = _public(self._current(raw))
        stale = self._stale(raw)
        if stale:
            # The diff says why an entry that looks as desired changes (its ARN and dates will).
            public["recreated_because"] = stale
        return public

    def desired(self, raw):
        if raw is None:
            # An existing entry proves the cluster exists and takes access entries (EKS cannot go back to
            # CONFIG_MAP); the cluster is read only when the entry is missing.
            _check_cluster(self.client, self.params["cluster_name"])
        self.wanted = desired_state(self.params, None if raw is None else self._current(raw), self.principal or self.params["principal_arn"])
        return _public(self.wanted)

    def refuse(self, raw, desired):
        current = self._current(raw)
        if self.wanted["type"] != current["type"]:
            # Also before a re-create: an adopted entry of another type is the platform's to delete, not this module's to retype.
            raise InputError(
                message="access entry %s is of type %s, not %s; the type cannot be changed in place (delete the entry first)"
                % (current["principal_arn"], current["type"], self.wanted["type"])
            )

    def predict(self, raw, desired):
        return {"entry": None, "current": self.wanted}

    def _write(self, raw):
        current = None if raw is None else self._current(raw)
        stale = None if raw is None else self._stale(raw)
        _write_changes(self.client, self.principal, self.params, current, self.wanted, plan(current, self.wanted, stale))

    def create(self, desired):
        self._write(None)

    def update(self, raw, desired):
        self._write(raw)
        return False

    def read_back(self, handle, settle):
        cluster = self.params["cluster_name"]
        entry = describe_access_entry(self.client, cluster, self.principal)
        return {"entry": entry, "current": current_state(entry, list_associated(self.client, cluster, self.principal)), "written": True}

    def delete(self, raw):
        eks_api.delete_access_entry(self.client, clusterName=self.params["cluster_name"], principalArn=self.principal)
        return True

    def result(self, raw):
        return _public(self._current(raw))


def converge_entry(eks, iam, params, check_mode):
    """engine.Outcome of the entry ``params`` describe, by their ``state``."""
    if params["state"] == "absent":
        return engine.ensure_absent(AccessEntry(eks, iam, params, check_mode), check_mode)
    validate(params)
    principal = resolve_principal(iam, params["principal_arn"], check_mode)
    return engine.ensure_present(AccessEntry(eks, iam, params, check_mode, principal), check_mode)


_SCOPE = dict(type=dict(type="str", choices=["cluster", "namespace"], required=True), namespaces=dict(type="list", elements="str"))

# The keyword arguments of eks_access_entry's AnsibleAWSModule (and of team_resources' access_entry).
MODULE_OPTIONS = options(
    dict(
        cluster_name=dict(type="str", required=True),
        principal_arn=dict(type="str"),
        team=dict(type="str"),
        principal=dict(type="str", choices=["permission_set", "execution_role"], default="permission_set"),
        account_id=dict(type="str"),
        type=dict(type="str", choices=list(TYPES), default="STANDARD"),
        kubernetes_groups=dict(type="list", elements="str"),
        username=dict(type="str"),
        access_policies=dict(
            type="list",
            elements="dict",
            options=dict(policy_arn=dict(type="str"), name=dict(type="str"), access_scope=dict(type="dict", required=True, options=_SCOPE)),
        ),
        tag_keys=dict(type="dict", no_log=False),
        adopt=dict(type="bool", default=False),
    ),
    STATE, NAME_PREFIX, TAGS,
    required_one_of=[["principal_arn", "team"]],
)
# What shared_info read of the entry earlier in the run (team_resources' ``known``): DescribeAccessEntry's answer for the
# principal (``known_entry``'s shape) and the role's CreateDate.
KNOWN = dict(access_entry=dict(type="dict"), principal_created=dict(type="str"))

# access.policies in the team file -> HyperPod's EKS access policies, scoped to the team namespace.
ACCESS_POLICY_NAMES = {
    "training": "AmazonSagemakerHyperpodTrainingPolicy",
    "inference": "AmazonSagemakerHyperpodInferencePolicy",
    "space": "AmazonSagemakerHyperpodSpacePolicy",
}
# A space also needs the shared space templates. cluster_read is the cluster-scope read of the HyperPod CLI's cluster views
# (hyp list-cluster): namespaces, nodes (their images too) and every team's ClusterQueue, quota and usage, so off unless
# the platform allows it (team_model's hyperpod_team_limits.choices); hyp's job commands in the team's namespace need none.
SPACE_TEMPLATE_POLICY = {"name": "AmazonSagemakerHyperpodSpaceTemplatePolicy", "access_scope": {"type": "namespace", "namespaces": ["jupyter-k8s-shared"]}}
CLUSTER_READ_POLICY = {"name": "AmazonSagemakerHyperpodUserClusterPolicy", "access_scope": {"type": "cluster"}}
# The team file's access section (docs/team-file.md) but pod_security (team_namespace's): both keys become access_policies
# (team_access_policies), of the team's users' entry and of its Studio's.
TEAM_FILE_SECTION = team_section("access", MODULE_OPTIONS, ("policies", "cluster_read"), own=dict(
    policies=dict(type="list", elements="str", choices=list(ACCESS_POLICY_NAMES), default=["training", "inference"]),
    cluster_read=dict(type="bool", default=False),
))


def team_access_policies(access, namespace):
    """``access_policies`` of a team's access entries, from the team file's ``access`` (normalized) and the team's namespace."""
    policies = access["policies"]
    in_namespace = {"type": "namespace", "namespaces": [namespace]}
    return (
        [{"name": ACCESS_POLICY_NAMES[policy], "access_scope": in_namespace} for policy in policies]
        + ([SPACE_TEMPLATE_POLICY] if "space" in policies else [])
        + ([CLUSTER_READ_POLICY] if access["cluster_read"] else [])
    )


def check(params):
    """What can be refused without a call (the team name, policies and scopes); raises ``InputError``."""
    validate(apply_team(dict(params), lambda: _ANY_ACCOUNT))


def converge(context, params):
    """The result of eks_access_entry: the access entry after the run."""
    apply_team(params, context.account_id)
    outcome = converge_entry(context.client("eks"), context.client("iam"), params, context.check_mode)
    if outcome.before.get("recreated_because"):
        context.warn("access entry of %s: %s" % (outcome.before["principal_arn"], outcome.before["recreated_because"]))
    return result(outcome.changed, outcome.before, outcome.after, access_entry=outcome.result)
