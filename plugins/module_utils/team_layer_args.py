# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""A team of the team file, as normalized, and what all teams share, as the options of every layer's module.

The one place where the team file becomes module options (the filter ``hyperpod.tenancy.team_layer_args``
and the action ``validate_team_file`` call it). The team's defaults come from ``team_model``, its names
from ``naming``: nothing here repeats them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import Counter

from ansible_collections.hyperpod.tenancy.plugins.module_utils import access_entry, domain, execution_role, naming, quota, team_dirs, team_namespace
from ansible_collections.hyperpod.tenancy.plugins.module_utils import budget, team_model
from ansible_collections.hyperpod.tenancy.plugins.module_utils.permission_set import DESCRIPTION_MAX as PERMISSION_SET_DESCRIPTION_MAX
from ansible_collections.hyperpod.tenancy.plugins.module_utils.permission_set import team_names as access_names


class MissingSharedValue(Exception):
    """``hyperpod_shared`` lacks a value a layer of the team needs; the message names the team and the key."""


def _given(**options):
    """The options that are set: a module then applies its own default (or leaves the resource as it is) for the rest."""
    return {key: value for key, value in options.items() if value is not None}


def _known(**copies):
    """``known``, what shared_info read for a layer earlier in the run (team_resources hands it on), when it read any."""
    return _given(known=_given(**copies) or None)


def _section(team, declared):
    """The team-file keys a layer declares (its ``TEAM_FILE_SECTION``) that are set, as the options they set.

    Every key the layer passes on (``declared.passed()``: not one its file translates, nor one for offboarding) under
    the option the layer names beside it: a new one needs nothing here.
    """
    values = team[declared.section] or {}
    return _given(**dict((option, values.get(key)) for key, option in declared.passed().items()))


# The 12 characters of a HyperPod cluster ARN's id that stand for a cluster a dry run would create (``predicted_cluster``).
PREDICTED_CLUSTER_ID = "tobecreated0"
PREDICTED_NOTE = (
    "HyperPod cluster %s is created by this run (not by this dry run): its ARN is not known yet, so the team's policies and "
    "compute quota are predicted with %s in its place, and its capacity from the cluster file's instance groups"
)


def predicted_cluster(shared):
    """``shared`` with a stand-in for the HyperPod cluster a dry run would create, and the note that says so (None when the
    cluster exists or no dry run predicts one).

    ``cluster_predicted`` (playbooks/tasks/shared_facts.yml sets it in a dry run only, when the cluster is to be created) holds the
    cluster file's instance groups. The ARN stands in where the team's layers need one (the permission set's and execution
    role's policies, the quota's cluster) and has the shape of an ARN HyperPod gives (``cluster/<12 lower-case letters or
    digits>``); the capacity is what the groups will hold, as ``quota.cluster_capacity`` counts a described cluster's.
    """
    predicted = shared.get("cluster_predicted")
    if shared.get("cluster_arn") is not None or not predicted or not shared.get("account_id") or not shared.get("region"):
        return shared, None
    arn = "arn:%s:sagemaker:%s:%s:cluster/%s" % (partition(shared), shared["region"], shared["account_id"], PREDICTED_CLUSTER_ID)
    groups = [
        dict(InstanceGroupName=group.get("name"), InstanceType=group.get("instance_type"), TargetCount=group.get("count") or 0,
             InstanceRequirements={"DesiredInstanceTypes": group.get("instance_types") or []})
        for group in predicted.get("instance_groups") or []
    ]
    capacity = quota.cluster_capacity({"InstanceGroups": groups}, shared.get("scale_limits"))
    return dict(shared, cluster_arn=arn, cluster_capacity=capacity), PREDICTED_NOTE % (shared.get("cluster_name") or "", arn)


class _Team(object):
    """One team with what all teams share: what several layers derive from them, derived once."""

    def __init__(self, team, shared, settings):
        # The defaults of the team file come from the team model, whether or not the team was normalized.
        team = team_model.with_defaults(team)
        shared, self.note = predicted_cluster(shared)
        self.team, self.shared, self.settings = team, shared, settings
        self.name = team["name"]
        self.prefix = shared.get("name_prefix") or naming.DEFAULT_PREFIX
        self.description = team["description"]
        self.group = team.get("identity_center_group")
        group_ids = shared.get("identity_center_group_ids") or {}
        # Read once per run by shared_info, so that each team's run does not look them up again.
        self.group_ids = {self.group: group_ids[self.group]} if self.group in group_ids else None
        self.tags = naming.team_tags(self.name, team.get("cost_center"), shared.get("tag_keys") or None, team.get("tags"))
        # Extra tags only when the team file gives some: the layers that merge tags then leave others' tags alone.
        self.extra_tags = team.get("tags") or None
        self.tag_options = _given(cost_center=team.get("cost_center") or None, tag_keys=shared.get("tag_keys") or None)

    def need(self, key):
        """A value all teams share; its absence names the team and the key."""
        if self.shared.get(key) is None:
            raise MissingSharedValue("team %r: hyperpod_shared has no %s (hyperpod.tenancy.shared_info returns it)" % (self.name, key))
        return self.shared[key]


def _permission_set(t):
    return _given(
        instance_arn=t.shared.get("identity_center_instance_arn") or None,
        identity_store_id=t.shared.get("identity_store_id") or None,
        identity_center_group_ids=t.group_ids,
        team=t.name,
        name_prefix=t.prefix,
        # Identity Center takes printable Latin-1 only; the quota takes the description as written.
        description=naming.latin1_text(t.description, PERMISSION_SET_DESCRIPTION_MAX),
        session_duration=t.settings.get("session_duration") or team_model.SETTING_DEFAULTS["session_duration"],
        team_policy=dict(
            account_id=t.need("account_id"),
            region=t.need("region"),
            data_bucket=t.need("data_bucket"),
            hyperpod_cluster_arn=t.need("cluster_arn"),
            eks_cluster_arn=t.need("eks_cluster_arn"),
            tag_keys=t.shared.get("tag_keys") or {},
        ),
        managed_policies=[],
        customer_managed_policies=[],
        groups=[t.group],
        accounts=[t.need("account_id")],
        tags=t.tags,
        wait_timeout=t.settings.get("identity_wait_timeout"),
        **_known(
            permission_set=(t.shared.get("permission_sets") or {}).get(naming.permission_set_name(t.name, t.prefix)),
            # shared_info described every permission set of the instance when one it looked for is missing.
            absent=("permission_sets" in t.shared and naming.permission_set_name(t.name, t.prefix) not in t.shared["permission_sets"]) or None,
            outdated_permission_sets=t.shared.get("outdated_permission_sets") or None,
        )
    )


def _kubectl_access(t, names):
    """The options the team's access entries share (its users' and its Studio's): its groups, access policies and mark."""
    return dict(
        _section(t.team, access_entry.TEAM_FILE_SECTION),
        cluster_name=t.need("eks_cluster_name"),
        kubernetes_groups=[names["kubernetes_group"]],
        access_policies=access_entry.team_access_policies(t.team["access"], names["namespace"]),
        tags=t.tags,
        team=t.name,
        name_prefix=t.prefix,
        **_given(tag_keys=t.shared.get("tag_keys") or None)
    )


def _known_entry(t, principal, created):
    """The entry of ``principal`` as shared_info read it (to check its owner before the run's first write), and when its
    role was created, if it read them."""
    return _known(access_entry=(t.shared.get("access_entries") or {}).get(principal), principal_created=created)


def _access_entry(t):
    names = access_names(t.name, t.prefix)
    principal = (t.shared.get("sso_role_arns") or {}).get(names["permission_set"]) or names["role_name_pattern"]
    created = (t.shared.get("sso_role_created") or {}).get(names["permission_set"])
    return dict(_kubectl_access(t, names), principal_arn=principal, **_known_entry(t, principal, created))


def _studio_access_entry(t):
    """The access entry of the team's Studio execution role: the same groups and policies as its users'.

    The role's CreateDate as shared_info read it tells whether the entry is older than the role (access_entry.stale_reason);
    a role shared_info did not find is made in this run, and the layer reads its date.
    """
    account = t.shared.get("account_id") or None
    principal = execution_role.role_arn(account, execution_role.role_name(t.name, t.prefix)) if account else None
    role = ((t.shared.get("execution_roles") or {}).get(execution_role.role_name(t.name, t.prefix)) or {}).get("role") or {}
    return dict(
        _kubectl_access(t, access_names(t.name, t.prefix)), principal="execution_role",
        **dict(_given(account_id=account), **_known_entry(t, principal, role.get("CreateDate")))
    )


def partition(shared):
    """The AWS partition of the shared facts (aws, aws-cn, aws-us-gov): the cluster's ARN says it, else the region."""
    for key in ("eks_cluster_arn", "cluster_arn"):
        arn = shared.get(key)
        if isinstance(arn, str) and arn.startswith("arn:") and arn.count(":") >= 5:
            return arn.split(":")[1]
    region = shared.get("region") or ""
    return "aws-cn" if region.startswith("cn-") else "aws-us-gov" if region.startswith("us-gov-") else "aws"


def _domain_arn(t):
    domain_id = (t.shared.get("domain_ids") or {}).get(naming.domain_name(t.name, t.prefix))
    if not (domain_id and t.shared.get("region") and t.shared.get("account_id")):
        return None
    return "arn:%s:sagemaker:%s:%s:domain/%s" % (partition(t.shared), t.shared["region"], t.shared["account_id"], domain_id)


def _execution_role(t):
    return dict(
        _section(t.team, execution_role.TEAM_FILE_SECTION),
        team=t.name,
        name_prefix=t.prefix,
        description="SageMaker Studio execution role of team %s" % t.name,
        data_bucket=t.shared.get("data_bucket") or "",
        tags=t.extra_tags or {},
        **dict(
            t.tag_options,
            **_given(
                account_id=t.shared.get("account_id") or None,
                hyperpod_cluster_arn=t.shared.get("cluster_arn") or None,
                eks_cluster_arn=t.shared.get("eks_cluster_arn") or None,
                # The team's domain, when shared_info found it (policy team-studio); a domain made in this run is given
                # to the role by team_resources once it exists.
                domain_arn=_domain_arn(t),
                # What a member may ask for as the role (team-studio): the platform's instance types, never the team
                # file's (team_model, hyperpod_team_limits.studio_instance_types), and spaces and apps owned by the
                # team's current members' profiles only (the domain layer, after this one, removes the others).
                studio_instance_types=list(t.team.get("studio_instance_types") or team_model.TEAM_LIMIT_DEFAULTS["studio_instance_types"]),
                studio_owners=[member["name"] for member in t.team["members"]],
            ),
            # shared_info read it (GetRole) to check its owner before the run's first write.
            **_known(role=(t.shared.get("execution_roles") or {}).get(execution_role.role_name(t.name, t.prefix)))
        )
    )


def _domain(t):
    domain_id = (t.shared.get("domain_ids") or {}).get(naming.domain_name(t.name, t.prefix))
    options = dict(
        _section(t.team, domain.TEAM_FILE_SECTION),
        team=t.name,
        name_prefix=t.prefix,
        # shared_info read it once per run and checked that every shared subnet is in it.
        vpc_id=t.need("vpc_id"),
        subnet_ids=t.need("subnet_ids"),
        security_group_ids=t.need("security_group_ids"),
        user_profiles=[{"name": member["name"]} for member in t.team["members"]],
        purge_user_profiles=True,
        **t.tag_options
    )
    if t.shared.get("fsx_file_system_id"):
        options["fsx_lustre"] = {"file_system_id": t.shared["fsx_file_system_id"], "path": "/" + t.name}
    if options.get("auth_mode") == "SSO":
        options.update(_given(
            identity_center_group=t.group,
            identity_center_instance_arn=t.shared.get("identity_center_instance_arn") or None,
            identity_store_id=t.shared.get("identity_store_id") or None,
            identity_center_group_ids=t.group_ids,
        ))
    return dict(
        options,
        **_given(
            tags=t.extra_tags,
            wait_timeout=t.settings.get("workspace_wait_timeout"),
            # shared_info listed the domains and their profiles once per run: the module describes this one instead.
            domain_id=domain_id,
        ),
        **_known(
            user_profiles=(t.shared.get("user_profiles") or {}).get(domain_id) if domain_id else None,
            # ... and read its tags, to check its owner before the run's first write.
            tags=(t.shared.get("domain_tags") or {}).get(domain_id) if domain_id else None,
        )
    )


def _quota(t):
    cluster = t.settings.get("quota_cluster") or t.need("cluster_arn")
    # shared_info described the shared cluster once per run: its capacity spares each quota a DescribeCluster.
    shared_cluster = t.shared.get("cluster_arn") and cluster in (t.shared["cluster_arn"], t.shared.get("cluster_name"))
    capacity = t.shared.get("cluster_capacity") if shared_cluster else None
    # shared_info read its tags on the shared cluster to check its owner before the run's first write, and listed what
    # every quota guarantees: the others' share tells the layer that a quota the run leaves as it is still fits.
    known = (t.shared.get("compute_quotas") or {}).get(t.name) if shared_cluster else None
    listed = None
    if known and known.get("guaranteed") is not None and t.shared.get("compute_quota_guaranteed") is not None:
        others = Counter(t.shared["compute_quota_guaranteed"]) - Counter(known["guaranteed"])
        listed = dict(compute_quota_id=known["compute_quota_id"], others_guaranteed=dict(others))
    return dict(
        team=t.name,
        cluster=t.shared["cluster_arn"] if capacity is not None else cluster,
        name_prefix=t.prefix,
        description=t.description,
        tags=t.extra_tags or {},
        **dict(
            t.tag_options,
            **dict(
                _section(t.team, quota.TEAM_FILE_SECTION),
                **dict(
                    _given(
                        wait_timeout=t.settings.get("quota_wait_timeout"),
                        cluster_capacity=capacity,
                        scale_limits=t.shared.get("scale_limits") or None,
                    ),
                    **_known(tags={known["compute_quota_id"]: known["tags"]} if known else None, listing=listed)
                )
            )
        )
    )


def _s3_prefix(t):
    # shared_info read its mark to check its owner before the run's first write.
    known = (t.shared.get("s3_markers") or {}).get(t.name)
    # ... and the ledger of retired names: the entries the platform's hyperpod_inherit hands to the team, recorded by this layer.
    retired = (t.shared.get("team_inherits") or {}).get(t.name)
    inherit = _given(retired=retired, gid=t.team["storage"].get("gid"), identity_center_group=t.group) if retired else None
    # Who the team is beyond its name, recorded on its mark: its Identity Center group's id (shared_info's) and its gid.
    identity = _given(identity_center_group_id=(t.group_ids or {}).get(t.group), gid=t.team["storage"].get("gid")) or None
    return dict(team=t.name, bucket=t.need("data_bucket"), **dict(t.tag_options, **dict(_given(
        tags=t.extra_tags, inherit=inherit, identity=identity), **_known(marker=known))))


def _directories(t):
    if t.team["storage"].get("s3_link") and not t.shared.get("fsx_file_system_id"):
        # The association is made on the account's file system (docs/team-file.md, storage.s3_link): say which setting is missing.
        raise MissingSharedValue("team %r: storage.s3_link needs the account's FSx file system, and hyperpod_shared has no fsx_file_system_id "
                                 "(hyperpod_account.fsx_file_system_id in the cluster file)" % t.name)
    return dict(
        _section(t.team, team_dirs.TEAM_FILE_SECTION),
        team=t.name,
        root=t.settings.get("fsx_mount_root") or t.need("fsx_mount_root"),
        require_mount=t.settings.get("require_mount", t.shared.get("fsx_require_mount", True)),
        members=[member for member in t.team["members"] if member.get("uid") is not None],
        bucket=t.need("data_bucket"),
        **dict(
            t.tag_options,
            **_given(
                uid=t.settings.get("owner_uid"),
                acl=t.settings.get("acl"),
                file_system_id=t.shared.get("fsx_file_system_id") or None,
                tags=t.extra_tags,
            )
        )
    )


def _namespace(t):
    """The team's objects in its namespace; only when the cluster's kubeconfig is known (hyperpod_kubernetes.kubeconfig)."""
    file_system_id = t.shared.get("fsx_file_system_id")
    return dict(
        _section(t.team, team_namespace.TEAM_FILE_SECTION),
        team=t.name,
        name_prefix=t.prefix,
        kubeconfig=t.settings["kubeconfig"],
        pod_identity=dict(
            cluster_name=t.need("eks_cluster_name"), cluster_arn=t.need("eks_cluster_arn"),
            data_bucket=t.need("data_bucket"), account_id=t.need("account_id"),
        ),
        **dict(
            t.tag_options,
            **_given(
                context=t.settings.get("kube_context") or None,
                priority_classes=t.settings.get("priority_classes"),
                ingress_namespaces=t.settings.get("ingress_namespaces"),
                volume=dict(file_system_id=file_system_id) if file_system_id else None,
            ),
            # shared_info read the pod role and association for its owner check: the layer takes them.
            **_known(pod_identity=(t.shared.get("pod_identities") or {}).get(t.name))
        )
    )


def _budget(t):
    prefix = t.settings.get("budget_name_prefix") or t.prefix
    account = t.settings.get("budget_account_id") or t.shared.get("account_id") or None
    # shared_info listed the budgets of its own account by its own names: any other budget the module reads itself.
    known = (t.shared.get("budgets") or {}).get(naming.budget_name(t.name, prefix)) if account == t.shared.get("account_id") else None
    return dict(
        team=t.name,
        name_prefix=prefix,
        **dict(
            _section(t.team, budget.TEAM_FILE_SECTION),
            **_given(
                cost_center=t.team.get("cost_center") or None,
                tag_keys=t.settings.get("budget_tag_keys") or t.shared.get("tag_keys") or None,
                tags=t.extra_tags,
                account_id=account,
            ),
            **_known(budget=known)
        )
    )


# An adopt entry that is no layer of its own: (its layer, the option of that layer it sets).
ADOPT_OPTIONS = {"user_profiles": ("domain", "adopt_user_profiles"), "pod_role": ("namespace", "adopt_pod_role")}


def team_layer_args(team, shared, settings=None, layers=None):
    """The options of hyperpod.tenancy.team_resources for one normalized team: a layer each, none for a layer the team does not use.

    ``layers`` limits them to those named (a layer role asks for its own).
    """
    t = _Team(team, shared, {key: value for key, value in (settings or {}).items() if value is not None})
    team = t.team
    used = {"permission_set": _permission_set, "access_entry": _access_entry, "s3_prefix": _s3_prefix}
    if team["workspace"]["enabled"]:
        used.update(execution_role=_execution_role, domain=_domain)
        # Studio's kubectl access, where there is a cluster to reach.
        if t.shared.get("eks_cluster_name"):
            used["studio_access_entry"] = _studio_access_entry
    if team["quota"] is not None:
        used["quota"] = _quota
        # The namespace is the quota's (Task Governance makes it): no quota, no namespace to add to.
        if t.settings.get("kubeconfig"):
            used["namespace"] = _namespace
    if team["storage"]["gid"] is not None:
        used["directories"] = _directories
    if (team["budget"] or {}).get("monthly_usd") is not None:
        used["budget"] = _budget
    options = {"team": t.name}
    # Why shared_info refused the team (a resource not its to change, a retired team's name or gid): team_resources then
    # fails before any layer writes, whichever layers a role asks for.
    options.update(_given(refused=(t.shared.get("team_problems") or {}).get(t.name) or None))
    # What a dry run stands in for: team_resources says it (a warning) before the layers run.
    options.update(_given(notes=[t.note] if t.note else None))
    options.update((layer, build(t)) for layer, build in used.items() if layers is None or layer in layers)
    # The platform's hyperpod_adopt for the team: an existing resource of these layers that carries no mark is taken over.
    for adopted in team["adopt"]:
        layer, option = ADOPT_OPTIONS.get(adopted, (adopted, "adopt"))
        if layer in options and layer != "team":
            options[layer][option] = True
    return options
