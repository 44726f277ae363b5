#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: shared_info
short_description: Read once what every team of the cluster shares
version_added: 0.1.0
description:
  - Reads the account ID, the IAM Identity Center instance and its identity store, the EKS cluster's
    ARN and the HyperPod cluster's ARN in one module run, so that per-team roles do not read them
    once per team.
  - Also makes once, for all teams, the lookups each team's modules would otherwise repeat per team
    (the VPC of the shared subnets, the teams' Identity Center group ids, the permission sets, which
    of them are outdated, and the roles Identity Center made for them, the present teams' SageMaker
    domain ids and their user profiles, the HyperPod cluster's capacity, the teams' budgets and their
    notifications).
  - Fails, listing every one at once, when something the teams need does not exist - an Identity
    Center group, an Identity Center user of a present team's SSO domain, the EKS cluster, the data
    bucket (C(extra.data_bucket)), the FSx file system (C(extra.fsx_file_system_id)) - so that a run
    that starts with it stops before its first write.
  - Refuses a present team, and that team only, when its permission set, SageMaker AI domain, budget, Studio execution
    role, EKS access entry (the team's and its Studio execution role's), S3 prefix (its ownership mark
    C(_hyperpod/owners/<team>) in the data bucket, or objects without one) or compute quota exists and is not the team's
    to change (not marked for it, unless the team's C(adopt) lists its layer; never when marked for another team). That
    is the rule each of those layers applies, checked here for all teams, with the tags read with the lookups above (for
    the role, the entries, the prefixes and the quotas, one C(GetRole), C(DescribeAccessEntry) and C(GetObjectTagging)
    each, and one C(ListComputeQuotas) of the cluster with a C(ListTags) per quota) and handed to the layers, which do not
    read them again (the quota layer lists the cluster's quotas again only to check the capacity for a change).
  - Refuses the same way a present team whose name, or whose C(storage.gid), is that of a team offboarded with its data
    kept, as the ledger of retired names in the data bucket records it (C(_hyperpod/retired/<team>), one listing and a
    C(GetObject) per entry), unless O(inherit) lets it inherit that team.
  - And a present team whose name, or whose C(storage.gid), is that of a team not present in the team file (deleted from
    it without offboarding) whose ownership mark C(_hyperpod/owners/<team>) is still in the data bucket, with the gid the
    mark records; and a present team whose mark records another Identity Center group id than its group's (a team of its
    name ran before). The marks are listed once per run (one C(ListObjectsV2) of C(_hyperpod/owners/)), each read with one
    C(GetObjectTagging). O(inherit) lets such a team inherit too.
  - A refused team is not a failure of this module. It warns, and returns every refused team's reasons in
    RV(hyperpod_shared.team_problems); M(hyperpod.tenancy.team_resources) of that team then fails before any write
    (C(refused)), and the other teams converge.
  - Returns C(hyperpod_shared) in the shape the team roles take (see C(docs/team-file.md)).
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  cluster_name:
    description: The HyperPod cluster. Its ARN is C(null) in the result while it does not exist.
    type: str
    required: true
  eks_cluster_name:
    description: The EKS cluster that orchestrates it.
    type: str
    required: true
  identity_center_instance_arn:
    description:
      - The Identity Center instance. When omitted, the account must have exactly one.
    type: str
  teams:
    description:
      - The teams, as normalized by M(hyperpod.tenancy.validate_team_file) (C(name), C(state),
        C(identity_center_group)). The groups of the teams that are C(present) must exist.
    type: list
    elements: dict
    default: []
  subnet_ids:
    description: The shared subnets. They must exist and be in one VPC, returned as RV(hyperpod_shared.vpc_id).
    type: list
    elements: str
    default: []
  extra:
    description: Values added to the result as they are (bucket, FSx, security groups, ...).
    type: dict
    default: {}
  budget_name_prefix:
    description:
      - The prefix of the teams' budget names when it is not O(name_prefix) (the role C(cost)'s C(cost_name_prefix)).
        The budgets are looked up and checked under the names M(hyperpod.tenancy.team_budget) gives them.
    type: str
  budget_tag_keys:
    description:
      - The tag keys of the teams' budgets when they are not C(extra.tag_keys) (C(cost_tag_keys)), for their owner check.
    type: dict
  budget_account_id:
    description:
      - The account of the teams' budgets (C(cost_account_id)). When it is another account than the one the module
        reads, the budgets are neither listed nor checked here (M(hyperpod.tenancy.team_budget) checks them).
    type: str
  pod_roles:
    description:
      - Also read and check each present team's Pod Identity role (C(<name_prefix>-<team>-pods)) and its service
        account's association, which M(hyperpod.tenancy.team_namespace) makes when the run has a kubeconfig
        (C(hyperpod_kubernetes.kubeconfig)). Without it they are checked by that module, before its own writes only.
    type: bool
    default: false
  scale_limits:
    description:
      - The most instances each autoscaling instance group may scale to, by group name (the cluster file's C(max_count)
        of a cluster with C(autoscaling) on). RV(hyperpod_shared.cluster_capacity) counts such a group by its limit rather than by its
        C(TargetCount), which Karpenter moves with the pending pods.
    type: dict
    default: {}
  inherit:
    description:
      - The platform's decision (C(hyperpod_inherit) in the cluster file, never the team file) that a present team inherits
        what a retired team kept, by the new team's name, each naming the retired team (or a list of them).
      - A team that inherits is not refused for that retired team's name or gid, and its S3 prefix layer records it in the
        retired team's entry of the ledger (M(hyperpod.tenancy.s3_team_prefix) O(hyperpod.tenancy.s3_team_prefix#module:inherit)),
        which then no longer refuses anyone for what it took.
    type: dict
    default: {}
  identity_center_quotas:
    description:
      - The quotas of the Identity Center instance that the teams' permission sets count against, as AWS applies them
        to it, since Identity Center's APIs do not say them; AWS's defaults unless an increase was granted.
      - Before the first write the run is refused when the present teams' new permission sets would pass either one,
        and likewise when their new IAM roles (the roles Identity Center makes, the Studio execution and Pod Identity
        roles) would pass the account's roles per account quota, which IAM's C(GetAccountSummary) says.
    type: dict
    default: {}
    suboptions:
      permission_sets:
        description: Permission sets in the instance ("Number of permission sets allowed in IAM Identity Center").
        type: int
        default: 3500
      provisioned_permission_sets_per_account:
        description: Permission sets provisioned to one account ("Number of provisioned permission sets allowed per AWS account").
        type: int
        default: 500
extends_documentation_fragment:
  - hyperpod.tenancy.attributes.info_module
  - hyperpod.tenancy.team.name_prefix
  - hyperpod.tenancy.identity_center
  - hyperpod.tenancy.aws
"""

EXAMPLES = r"""
- name: Read what the teams share
  hyperpod.tenancy.shared_info:
    cluster_name: ml-shared
    eks_cluster_name: ml-shared-eks
    extra:
      data_bucket: hyperpod-team-data
  register: shared
"""

RETURN = r"""
hyperpod_shared:
  description: What every team role needs to know about the account and the cluster.
  returned: always
  type: dict
  contains:
    account_id:
      description: The account ID.
      type: str
      sample: "123456789012"
    region:
      description: The region.
      type: str
      sample: us-east-1
    cluster_name:
      description: The HyperPod cluster's name.
      type: str
    cluster_arn:
      description: The HyperPod cluster's ARN, or null while it does not exist.
      type: str
    cluster_capacity:
      description:
        - The HyperPod cluster's instances per instance type, the sum of its instance groups'
          C(TargetCount) (what M(hyperpod.tenancy.task_governance_quota) checks quotas against),
          or null while the cluster does not exist.
        - An autoscaling group counts by its O(scale_limits) entry; a flexible group for each type it allows.
      type: dict
      sample: {"ml.p5.48xlarge": 8, "ml.g5.12xlarge": 6}
    scale_limits:
      description:
        - O(scale_limits) as given, for each team's M(hyperpod.tenancy.task_governance_quota) that describes the cluster
          itself (on the run that creates it).
      type: dict
      sample: {"p5-workers": 4}
    eks_cluster_name:
      description: The EKS cluster's name.
      type: str
    eks_cluster_arn:
      description: The EKS cluster's ARN.
      type: str
    identity_center_instance_arn:
      description: The Identity Center instance.
      type: str
    identity_store_id:
      description: Its identity store.
      type: str
    name_prefix:
      description: The name prefix.
      type: str
    subnet_ids:
      description: The shared subnets.
      type: list
      elements: str
    vpc_id:
      description: The VPC of the shared subnets (when O(subnet_ids) is given).
      type: str
      sample: vpc-0123456789abcdef0
    identity_center_group_ids:
      description: The Identity Center group id of each present team's group, by display name.
      type: dict
      sample: {"TeamVision": "9067d4d8-1081-7012-49a3-2ef1f1d8a6c2"}
    permission_sets:
      description:
        - Each team's permission set that exists, by name, as C(DescribePermissionSet) returned it
          (Identity Center finds a permission set by name only by describing them), with its C(tags) for a present team.
        - The team's permission set layer of M(hyperpod.tenancy.team_resources) takes one as C(known.permission_set) and does not
          describe it again.
      type: dict
    sso_role_arns:
      description: The IAM role Identity Center made in this account for each team's permission set, by permission set name.
      type: dict
    sso_role_created:
      description:
        - The C(CreateDate) (ISO 8601) of each role in RV(hyperpod_shared.sso_role_arns), by permission set name, from the same listing.
        - The team's access entry layer of M(hyperpod.tenancy.team_resources) takes it as C(known.principal_created).
      type: dict
    outdated_permission_sets:
      description:
        - The ARNs of the permission sets whose latest version is not provisioned to this account
          (C(ListPermissionSetsProvisionedToAccount)), under the account id.
        - The team's permission set layer of M(hyperpod.tenancy.team_resources) takes them as C(known.outdated_permission_sets).
      type: dict
      sample: {"123456789012": ["arn:aws:sso:::permissionSet/ssoins-0123456789abcdef/ps-0123456789abcdef"]}
    domain_ids:
      description:
        - The id of each present team's SageMaker AI domain (C(<name_prefix>-<team>)) that exists, by domain
          name, from one C(ListDomains) (teams whose workspace is disabled are left out). A domain being
          deleted, or a name two domains share, is left out for M(hyperpod.tenancy.sagemaker_domain) to look up itself.
      returned: when a present team has a workspace
      type: dict
      sample: {"hyperpod-vision": "d-a1b2c3d4e5f6"}
    user_profiles:
      description:
        - The user profiles of each domain of RV(hyperpod_shared.domain_ids), by domain id, from one C(ListUserProfiles)
          of every domain (C(DomainId), C(UserProfileName), C(Status) each).
        - The team's domain layer of M(hyperpod.tenancy.team_resources) takes a domain's as C(known.user_profiles).
      returned: when a present team has a workspace
      type: dict
    domain_tags:
      description:
        - The tags of each domain of RV(hyperpod_shared.domain_ids), by domain id, from one C(ListTags) each.
        - The team's domain layer of M(hyperpod.tenancy.team_resources) takes a domain's as C(known.tags).
      returned: when a present team has a workspace
      type: dict
      sample: {"d-a1b2c3d4e5f6": {"managed-by": "hyperpod.tenancy", "team": "vision"}}
    budgets:
      description:
        - Each present team's budget (C(<name_prefix>-<team>-monthly)) with its notifications, by budget name, from one
          C(DescribeBudgets) and one C(DescribeBudgetNotificationsForAccount) for the account; C(budget) is null for
          a budget that does not exist yet.
        - The team's budget layer of M(hyperpod.tenancy.team_resources) takes one as C(known.budget), with the C(tags) of a
          budget that exists.
      returned: when a present team has a budget
      type: dict
    execution_roles:
      description:
        - Each present team's Studio execution role (C(<name_prefix>-<team>-studio-execution)) by role name, as
          a mapping whose key C(role) holds what C(GetRole) returned (its name, ARN, description, trust policy and tags)
          or null for a role that does not exist.
        - The team's execution role layer of M(hyperpod.tenancy.team_resources) takes one as C(known.role).
      returned: when a present team has a workspace
      type: dict
    access_entries:
      description:
        - The EKS access entries of each present team's permission set role (when Identity Center made it) and of its
          Studio execution role, by principal ARN, each as C(principal_arn) and C(access_entry) (what
          C(DescribeAccessEntry) returned, or null for an entry that does not exist).
        - The team's access entry layers of M(hyperpod.tenancy.team_resources) take one as C(known.access_entry).
      returned: when a present team exists and the EKS cluster exists
      type: dict
    s3_markers:
      description:
        - Each present team's S3 prefix ownership mark (the object C(_hyperpod/owners/<team>) in the data bucket) by team, as
          C(bucket), C(tags) (null without a mark), C(legacy) (the tags are those of the old mark C(<team>/), which the
          prefix layer moves) and C(objects) (for a prefix without a mark, whether it holds objects).
        - The team's S3 prefix layer of M(hyperpod.tenancy.team_resources) takes one as C(known.marker).
      returned: when a present team exists and the data bucket exists
      type: dict
      sample: {"vision": {"bucket": "hyperpod-team-data", "tags": {"managed-by": "hyperpod.tenancy", "team": "vision"}, "legacy": false,
                          "objects": null}}
    team_problems:
      description:
        - Why each refused present team is refused, by team, one sentence per reason (a resource the team must not change,
          a name or gid of a retired team). Teams that are not refused are left out.
        - The team roles hand them to M(hyperpod.tenancy.team_resources) as C(refused), and that team fails before any write.
      returned: always
      type: dict
      sample: {"research": ["its name research is that of retired team research (Identity Center group TeamResearch, gid 20300, ...)"]}
    team_inherits:
      description:
        - The retired teams whose ledger entries each present team takes, by team, as O(inherit) allows.
        - The team's M(hyperpod.tenancy.s3_team_prefix) takes them as O(hyperpod.tenancy.s3_team_prefix#module:inherit).
      returned: always
      type: dict
      sample: {"research": ["research"]}
    compute_quotas:
      description:
        - Each present team's compute quota on the HyperPod cluster, by team, from one C(ListComputeQuotas) (those deleted or
          being deleted left out), with C(name), C(compute_quota_id), C(tags) (one C(ListTags) each) and C(guaranteed)
          (the instances it guarantees, by instance type).
        - The team's quota layer of M(hyperpod.tenancy.team_resources) takes the tags as C(known.tags), and what the others
          guarantee as C(known.listing).
      returned: when a present team has a quota and the HyperPod cluster exists
      type: dict
    compute_quota_guaranteed:
      description:
        - The instances every quota of the cluster guarantees together (any team's, enabled), by instance type, from the same listing.
      returned: when a present team has a quota and the HyperPod cluster exists
      type: dict
      sample: {"ml.p5.48xlarge": 6}
    pod_identities:
      description:
        - With O(pod_roles), each present team's Pod Identity role and association, by team, as a mapping whose key
          C(role) holds what C(GetRole) returned (null when the role does not exist) and C(association) what
          C(DescribePodIdentityAssociation) returned for the team's service account (null when it has none).
        - The team's namespace layer of M(hyperpod.tenancy.team_resources) takes one as C(known.pod_identity).
      returned: with O(pod_roles), when a present team has a quota and the EKS cluster exists
      type: dict
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils import naming, retired_names
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError, with_answer
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import ModuleFailure, run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import IDENTITY_CENTER, NAME_PREFIX, options
from ansible_collections.hyperpod.tenancy.plugins.module_utils.shared import has_workspace, preflight_problems, quota_problems, read_shared, team_problems
from ansible_collections.hyperpod.tenancy.plugins.module_utils.shared import read_phases, team_lookup_phases, team_resource_phases

MODULE_OPTIONS = options(
    dict(
        cluster_name=dict(type="str", required=True),
        eks_cluster_name=dict(type="str", required=True),
        identity_center_instance_arn=dict(type="str"),
        teams=dict(type="list", elements="dict", default=[]),
        subnet_ids=dict(type="list", elements="str", default=[]),
        extra=dict(type="dict", default={}),
        budget_name_prefix=dict(type="str"),
        budget_tag_keys=dict(type="dict", no_log=False),
        budget_account_id=dict(type="str"),
        pod_roles=dict(type="bool", default=False),
        inherit=dict(type="dict", default={}),
        scale_limits=dict(type="dict", default={}),
        identity_center_quotas=dict(
            type="dict",
            default={},
            options=dict(permission_sets=dict(type="int", default=3500), provisioned_permission_sets_per_account=dict(type="int", default=500)),
        ),
    ),
    NAME_PREFIX,
    IDENTITY_CENTER,
)


def converge(context, p):
    extra = p["extra"]
    # The platform's setting, checked before any call.
    problems = retired_names.inherit_problems(p["inherit"])
    if problems:
        raise ModuleFailure("hyperpod_inherit is not valid (nothing was read or changed):\n%s" % "\n".join(problems), problems=problems)
    # The budgets as team_budget names them (team_layer_args: the cost role's prefix, else the teams').
    budget_prefix = p["budget_name_prefix"] or p["name_prefix"]
    present = [t for t in p["teams"] if t.get("state", "present") == "present"]
    shared = read_shared(context, p["cluster_name"], p["eks_cluster_name"], p["identity_center_instance_arn"], p["scale_limits"])
    if shared["eks_cluster_arn"] is None:
        problems.append("EKS cluster %s does not exist in %s" % (p["eks_cluster_name"], context.region))
    # Before the first write of the run: every user, the bucket and the file system the teams need, all at once.
    sso_members = dict(
        (t["name"], [m["name"] if isinstance(m, dict) else m for m in t.get("members") or []])
        for t in present
        if has_workspace(t) and (t.get("workspace") or {}).get("auth_mode", "SSO") == "SSO"
    )
    problems.extend(preflight_problems(context, shared["identity_store_id"], sso_members, extra.get("data_bucket"), extra.get("fsx_file_system_id")))
    home = (p["identity_center"] or {}).get("region")
    if home and home != context.region:
        # A domain signs in through an Identity Center application of the instance's own Region (SageMaker Developer
        # Guide, "Onboard to a SageMaker AI domain using IAM Identity Center": Identity Center in the domain's Region).
        problems.extend(
            "team %r: workspace.auth_mode: SSO needs the team's domain in IAM Identity Center's Region %s (hyperpod_identity_center.region), "
            "not %s: set auth_mode: IAM for the team, or build the cluster in %s" % (team, home, context.region, home)
            for team in sorted(sso_members)
        )
    # The resources the layers would change, read with their tags (the bucket's prefixes only when it exists), in flight
    # with the lookups: the access entries once IAM has listed the roles Identity Center made.
    bucket = extra.get("data_bucket") if not any(problem.startswith("hyperpod_data_bucket:") for problem in problems) else None
    found, refused = {}, None
    try:
        read_phases(
            team_lookup_phases(
                context,
                shared,
                team_groups=dict((t["name"], t["identity_center_group"]) for t in present if t.get("identity_center_group")),
                permission_set_names=[naming.permission_set_name(t["name"], p["name_prefix"]) for t in p["teams"]],
                subnet_ids=p["subnet_ids"],
                domain_names=[naming.domain_name(t["name"], p["name_prefix"]) for t in present if has_workspace(t)],
                budget_names=[
                    naming.budget_name(t["name"], budget_prefix) for t in present if (t.get("budget") or {}).get("monthly_usd") is not None
                ] if p["budget_account_id"] in (None, "", shared["account_id"]) else [],
                tagged_permission_sets=[naming.permission_set_name(t["name"], p["name_prefix"]) for t in present],
            )
            + team_resource_phases(context, shared, found, present, p["name_prefix"], bucket, p["pod_roles"]),
            found,
        )
    except HyperPodError as e:
        # AWS's answer kept whole (its code and message): a refusal is not a missing resource.
        refused = e
        problems.insert(0, with_answer(e))
    shared.update(found)
    # Read for this check only: what the present teams would add beyond their account's and instance's quotas.
    problems.extend(quota_problems(present, shared, p["name_prefix"], p["identity_center_quotas"], shared["account_id"]))
    for counted in ("permission_set_count", "provisioned_permission_sets", "iam_account_summary"):
        shared.pop(counted, None)
    if refused is not None:
        raise ModuleFailure(
            "AWS refused a read of what the teams need, so it could not be checked (nothing was changed):\n%s" % "\n".join(problems),
            exception=refused.exception, problems=problems,
        )
    if problems:
        raise ModuleFailure("What the teams need is missing (nothing was changed):\n%s" % "\n".join(problems), problems=problems)
    # Before the first write of the run too, for all teams at once: each team whose existing resource it must not change,
    # or whose name or gid a retired team's kept data holds. That team is refused (its team_resources fails before any
    # write, hyperpod_shared.team_problems), not the run: the other teams converge.
    refused, inherits = team_problems(
        present, shared, p["name_prefix"], extra.get("tag_keys") or None, shared.get("account_id"), budget_prefix, p["budget_tag_keys"] or None,
        p["inherit"], bucket,
    )
    for team in sorted(refused):
        context.warn("team %r is refused, the other teams go on: %s" % (team, "; ".join(refused[team])))
    shared.pop("retired_names", None)
    shared.pop("s3_owner_marks", None)
    shared.update(team_problems=refused, team_inherits=inherits)
    shared.update(name_prefix=p["name_prefix"], subnet_ids=p["subnet_ids"])
    shared.update(extra)
    return dict(changed=False, hyperpod_shared=shared)


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
