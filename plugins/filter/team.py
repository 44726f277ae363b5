# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Team naming rules, team tags and the team's module options for roles, from the same module_utils the modules use."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils import naming
from ansible_collections.hyperpod.tenancy.plugins.module_utils.permission_set import team_names as access_names


def team_names(team_name, prefix=naming.DEFAULT_PREFIX):
    return naming.names(team_name, prefix or naming.DEFAULT_PREFIX)


def team_tags(team, tag_keys=None):
    return naming.team_tags(team["name"], team.get("cost_center"), tag_keys, team.get("tags"))


# access.policies in the team file -> HyperPod's EKS access policies, scoped to the team namespace.
ACCESS_POLICY_NAMES = {
    "training": "AmazonSagemakerHyperpodTrainingPolicy",
    "inference": "AmazonSagemakerHyperpodInferencePolicy",
    "space": "AmazonSagemakerHyperpodSpacePolicy",
}
# A space also needs the shared space templates; cluster_read is the cluster-scope read the HyperPod CLI needs.
SPACE_TEMPLATE_POLICY = {"name": "AmazonSagemakerHyperpodSpaceTemplatePolicy", "access_scope": {"type": "namespace", "namespaces": ["jupyter-k8s-shared"]}}
CLUSTER_READ_POLICY = {"name": "AmazonSagemakerHyperpodUserClusterPolicy", "access_scope": {"type": "cluster"}}


def _given(**options):
    """The options that are set: a module then applies its own default (or leaves the resource as it is) for the rest."""
    return {key: value for key, value in options.items() if value is not None}


def _permission_set(team, shared, settings, tags):
    prefix = shared.get("name_prefix") or naming.DEFAULT_PREFIX
    name = naming.permission_set_name(team["name"], prefix)
    group = team["identity_center_group"]
    group_ids = shared.get("identity_center_group_ids") or {}
    return _given(
        instance_arn=shared.get("identity_center_instance_arn") or None,
        # Read once per run by shared_info, so that each team's run does not look them up again.
        identity_store_id=shared.get("identity_store_id") or None,
        identity_center_group_ids={group: group_ids[group]} if group in group_ids else None,
        permission_set_arn=(shared.get("permission_set_arns") or {}).get(name),
        team=team["name"],
        name_prefix=prefix,
        description=team.get("description") or "Team %s" % team["name"],
        session_duration=settings.get("session_duration") or "PT8H",
        team_policy=dict(
            account_id=shared["account_id"],
            region=shared["region"],
            data_bucket=shared["data_bucket"],
            hyperpod_cluster_arn=shared["cluster_arn"],
            eks_cluster_arn=shared["eks_cluster_arn"],
            tag_keys=shared.get("tag_keys") or {},
        ),
        managed_policies=[],
        customer_managed_policies=[],
        groups=[group],
        accounts=[shared["account_id"]],
        tags=tags,
        wait_timeout=settings.get("identity_wait_timeout"),
    )


def _access_entry(team, shared, tags):
    prefix = shared.get("name_prefix") or naming.DEFAULT_PREFIX
    names = access_names(team["name"], prefix)
    access = team.get("access") or {}
    policies = access.get("policies") or ["training", "inference"]
    in_namespace = {"type": "namespace", "namespaces": [names["namespace"]]}
    return dict(
        cluster_name=shared["eks_cluster_name"],
        principal_arn=(shared.get("sso_role_arns") or {}).get(names["permission_set"]) or names["role_name_pattern"],
        kubernetes_groups=[names["kubernetes_group"]],
        access_policies=[{"name": ACCESS_POLICY_NAMES[policy], "access_scope": in_namespace} for policy in policies]
        + ([SPACE_TEMPLATE_POLICY] if "space" in policies else [])
        + ([CLUSTER_READ_POLICY] if access.get("cluster_read", True) else []),
        tags=tags,
    )


def _team_tag_options(team, shared):
    return _given(cost_center=team.get("cost_center") or None, tag_keys=shared.get("tag_keys") or None)


def _execution_role(team, shared):
    return dict(
        team=team["name"],
        name_prefix=shared.get("name_prefix") or naming.DEFAULT_PREFIX,
        description="SageMaker Studio execution role of team %s" % team["name"],
        data_bucket=shared.get("data_bucket") or "",
        tags=team.get("tags") or {},
        **dict(_team_tag_options(team, shared), **_given(account_id=shared.get("account_id") or None))
    )


def _domain(team, shared, settings):
    workspace = team.get("workspace") or {}
    sso = (workspace.get("auth_mode") or "SSO") == "SSO"
    group_ids = shared.get("identity_center_group_ids") or {}
    group = team["identity_center_group"]
    prefix = shared.get("name_prefix") or naming.DEFAULT_PREFIX
    options = dict(
        team=team["name"],
        name_prefix=prefix,
        auth_mode=workspace.get("auth_mode") or "SSO",
        # shared_info read it once per run and checked that every shared subnet is in it.
        vpc_id=shared["vpc_id"],
        subnet_ids=shared["subnet_ids"],
        security_group_ids=shared["security_group_ids"],
        app_network_access_type=workspace.get("app_network_access_type") or "VpcOnly",
        user_profiles=[{"name": member["name"]} for member in team.get("members") or []],
        purge_user_profiles=True,
        **_team_tag_options(team, shared)
    )
    if shared.get("fsx_file_system_id"):
        options["fsx_lustre"] = {"file_system_id": shared["fsx_file_system_id"], "path": "/" + team["name"]}
    if sso:
        options.update(_given(
            identity_center_group=group,
            identity_center_instance_arn=shared.get("identity_center_instance_arn") or None,
            identity_store_id=shared.get("identity_store_id") or None,
            identity_center_group_ids={group: group_ids[group]} if group in group_ids else None,
        ))
    return dict(
        options,
        **_given(
            tags=team.get("tags"),
            wait_timeout=settings.get("workspace_wait_timeout"),
            # shared_info listed the domains once per run: the module describes this one instead of listing them all.
            domain_id=(shared.get("domain_ids") or {}).get(naming.domain_name(team["name"], prefix)),
        )
    )


def _quota(team, shared, settings):
    quota = team["quota"]
    cluster = settings.get("quota_cluster") or shared["cluster_arn"]
    # shared_info described the shared cluster once per run: its capacity spares each quota a DescribeCluster.
    shared_cluster = shared.get("cluster_arn") and cluster in (shared["cluster_arn"], shared.get("cluster_name"))
    capacity = shared.get("cluster_capacity") if shared_cluster else None
    return dict(
        team=team["name"],
        cluster=shared["cluster_arn"] if capacity is not None else cluster,
        name_prefix=shared.get("name_prefix") or naming.DEFAULT_PREFIX,
        resources=quota["resources"],
        description=team.get("description") or "Team %s" % team["name"],
        tags=team.get("tags") or {},
        **dict(
            _team_tag_options(team, shared),
            **_given(
                sharing=quota.get("sharing") or None,
                borrow_limit=quota.get("borrow_limit"),
                absolute_borrow_limits=quota.get("absolute_borrow_limits"),
                preempt=quota.get("preempt") or None,
                fair_share_weight=quota.get("fair_share_weight"),
                activation=quota.get("activation") or None,
                wait_timeout=settings.get("quota_wait_timeout"),
                cluster_capacity=capacity,
            )
        )
    )


def _s3_prefix(team, shared):
    return dict(team=team["name"], bucket=shared["data_bucket"], **dict(_team_tag_options(team, shared), **_given(tags=team.get("tags"))))


def _directories(team, shared, settings):
    storage = team["storage"]
    return dict(
        team=team["name"],
        root=settings.get("fsx_mount_root") or shared["fsx_mount_root"],
        require_mount=settings.get("require_mount", shared.get("fsx_require_mount", True)),
        uid=settings.get("owner_uid") or 0,
        gid=storage["gid"],
        mode=storage.get("mode") or "2770",
        members=[member for member in team.get("members") or [] if member.get("uid") is not None],
        acl=settings.get("acl") or False,
        s3_link=storage.get("s3_link") or False,
        bucket=shared["data_bucket"],
        **dict(_team_tag_options(team, shared), **_given(file_system_id=shared.get("fsx_file_system_id") or None, tags=team.get("tags")))
    )


def _budget(team, shared):
    budget = team["budget"]
    return dict(
        team=team["name"],
        name_prefix=shared.get("name_prefix") or naming.DEFAULT_PREFIX,
        monthly_usd=budget["monthly_usd"],
        **dict(
            _team_tag_options(team, shared),
            **_given(
                thresholds=budget.get("thresholds"),
                forecast_thresholds=budget.get("forecast_thresholds"),
                notify=budget.get("notify"),
                tags=team.get("tags"),
                account_id=shared.get("account_id") or None,
            )
        )
    )


def team_layer_args(team, shared, settings=None, layers=None):
    """The options of hyperpod.tenancy.team_resources for one normalized team: a layer each, none for a layer the team does not use.

    ``layers`` limits them to those named (a layer role asks for its own).
    """
    settings = {key: value for key, value in (settings or {}).items() if value is not None}
    tags = naming.team_tags(team["name"], team.get("cost_center"), shared.get("tag_keys") or None, team.get("tags"))
    used = {
        "permission_set": lambda: _permission_set(team, shared, settings, tags),
        "access_entry": lambda: _access_entry(team, shared, tags),
        "s3_prefix": lambda: _s3_prefix(team, shared),
    }
    if (team.get("workspace") or {}).get("enabled", True):
        used.update(execution_role=lambda: _execution_role(team, shared), domain=lambda: _domain(team, shared, settings))
    if team.get("quota") is not None:
        used["quota"] = lambda: _quota(team, shared, settings)
    if (team.get("storage") or {}).get("gid") is not None:
        used["directories"] = lambda: _directories(team, shared, settings)
    if (team.get("budget") or {}).get("monthly_usd") is not None:
        used["budget"] = lambda: _budget(team, shared)
    options = {"team": team["name"]}
    options.update((layer, build()) for layer, build in used.items() if layers is None or layer in layers)
    return options


SUMMARY_COLUMNS = (
    ("team", "team"),
    ("namespace", "namespace"),
    ("permission_set", "permission set"),
    ("domain_id", "domain"),
    ("user_profiles", "profiles"),
    ("quota", "guaranteed"),
    ("quota_status", "quota"),
    ("budget_usd", "budget USD"),
)


def team_summary(layers, team_name):
    """One team's row of the summary table, from what each layer of hyperpod.tenancy.team_resources returned."""
    quota = (layers.get("quota") or {}).get("quota") or {}
    resources = (quota.get("compute_quota_config") or {}).get("compute_quota_resources") or []
    domain = (layers.get("domain") or {}).get("domain") or {}
    budget = (layers.get("budget") or {}).get("budget") or {}
    return {
        "team": team_name,
        "namespace": naming.namespace(team_name),
        "permission_set": ((layers.get("permission_set") or {}).get("permission_set") or {}).get("name", "-"),
        "domain_id": domain.get("domain_id", "-"),
        "user_profiles": len(domain.get("user_profiles") or []),
        "quota": ", ".join("%s x %s" % (resource.get("count"), resource["instance_type"]) for resource in resources) or "-",
        "quota_status": quota.get("status", "-"),
        "budget_usd": (budget.get("budget_limit") or {}).get("amount", "-"),
    }


def summary_table(summaries):
    """Lines of a plain-text table, one per team summary, under a header."""
    rows = [[title for unused_key, title in SUMMARY_COLUMNS]]
    rows += [[str(summary.get(key, "-")) for key, unused_title in SUMMARY_COLUMNS] for summary in sorted(summaries, key=lambda s: s.get("team", ""))]
    widths = [max(len(row[column]) for row in rows) for column in range(len(SUMMARY_COLUMNS))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]


class FilterModule(object):
    def filters(self):
        return {
            "team_names": team_names,
            "team_tags": team_tags,
            "summary_table": summary_table,
            "team_layer_args": team_layer_args,
            "team_summary": team_summary,
        }
