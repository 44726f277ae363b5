# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""What every team of the cluster shares, read once per run.

Besides the account and the clusters, the lookups each team's modules would otherwise
repeat per team: the shared subnets' VPC, the teams' Identity Center group ids, the
permission sets by name, as described (Identity Center can only find a permission set by name by
describing every one of them), the roles Identity Center made for them, the permission sets
whose latest version is not provisioned to the account, the teams' domain
ids (SageMaker finds a domain by name only by listing every domain) and their user profiles, the HyperPod
cluster's capacity per instance type (what each team's quota is checked against) and the teams'
budgets with their notifications (two account-wide lists instead of two reads per team).

The tags of the present teams' permission sets, domains and budgets are read with them, and ``read_team_resources``
reads the teams' Studio execution roles, access entries, S3 prefix marks, compute quotas and the ledger of retired names:
``team_problems`` tells, for every team at once and before the run's first write, each team that must not be converged
and why (a resource it must not change, by the layers' own rule; a name or gid of a retired team whose data was kept).
That team is refused before its first write, the others go on; the layers take what was read instead of reading it again.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import Counter

from ansible_collections.amazon.aws.plugins.module_utils.tagging import boto3_tag_list_to_ansible_dict

from ansible_collections.hyperpod.tenancy.plugins.module_utils import access_entry, budget, compare, data_repository, domain, eks, execution_role, fsx, iam
from ansible_collections.hyperpod.tenancy.plugins.module_utils import identity_center
from ansible_collections.hyperpod.tenancy.plugins.module_utils import naming, permission_set, quota, retired_names, sagemaker, team_namespace
from ansible_collections.hyperpod.tenancy.plugins.module_utils import budgets as budgets_api
from ansible_collections.hyperpod.tenancy.plugins.module_utils import ec2 as ec2_api
from ansible_collections.hyperpod.tenancy.plugins.module_utils import s3 as s3_api
from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import READS_IN_FLIGHT, each, together
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError


def vpc_of(ec2, subnet_ids):
    """The one VPC of ``subnet_ids``; an error when a subnet is missing or they span VPCs."""
    subnets = ec2_api.describe_subnets(ec2, SubnetIds=subnet_ids)
    vpcs = sorted(set(s["VpcId"] for s in subnets))
    missing = sorted(set(subnet_ids) - set(s["SubnetId"] for s in subnets))
    if missing or len(vpcs) != 1:
        raise HyperPodError(
            message="The shared subnets %s must exist and be in one VPC (missing: %s; VPCs: %s)"
            % (", ".join(subnet_ids), ", ".join(missing) or "none", ", ".join(vpcs) or "none")
        )
    return vpcs[0]


def preflight_problems(context, store_id, team_members, data_bucket=None, fsx_file_system_id=None):
    """What the teams need that does not exist, every one at once, each naming the team and the field.

    ``team_members`` is ``{team: [user name]}`` of the present teams whose Studio domain signs in through
    Identity Center. One ListUsers in pages of 100, one HeadBucket and one DescribeFileSystems, in flight together
    (``calls.together``): read before the run's first write, so that a missing user, bucket or file system stops the
    run before the cluster is touched.
    """
    wanted = dict((team, names) for team, names in team_members.items() if names)
    phases = []
    if wanted:

        def missing_users():
            known, problems = set(name.lower() for name in identity_center.user_names(context.client("identitystore"), store_id)), []
            for team, names in sorted(wanted.items()):
                missing = [name for name in names if name.lower() not in known]
                if missing:
                    problems.append("team %r: members: no Identity Center user %s in identity store %s" % (team, ", ".join(missing), store_id))
            return problems

        phases.append(("identitystore", missing_users))
    if data_bucket:
        phases.append(("s3", lambda: [] if s3_api.head_bucket(context.client("s3"), Bucket=data_bucket) is not None else [
            "hyperpod_data_bucket: S3 bucket %s does not exist (or is not this account's)" % data_bucket]))
    if fsx_file_system_id:
        phases.append(("fsx", lambda: [] if fsx.describe_file_systems(context.client("fsx"), FileSystemIds=[fsx_file_system_id]) else [
            "hyperpod_account.fsx_file_system_id: FSx file system %s does not exist in %s" % (fsx_file_system_id, context.region)]))
    return [problem for problems in together(*phases) for problem in problems]


def group_ids(identitystore, store_id, team_groups):
    """{display name: group id} of ``team_groups`` ({team: group}); every missing group named with its teams."""
    found, missing = identity_center.group_ids(identitystore, store_id, sorted(set(team_groups.values())))
    if missing:
        teams = dict((group, sorted(t for t, g in team_groups.items() if g == group)) for group in missing)
        raise HyperPodError(
            message="Identity Center groups missing from identity store %s: %s"
            % (store_id, "; ".join("%r (team %s)" % (group, ", ".join(teams[group])) for group in sorted(missing)))
        )
    return found


def permission_sets(sso_admin, instance_arn, names, tagged=()):
    """({name: the permission set as described} of those named in ``names`` that exist, how many the instance holds).

    Identity Center finds a permission set by name only by describing them: what that read
    returns spares each team's module its own DescribePermissionSet. Those named in ``tagged`` (the
    present teams') come with their tags, which their module then does not read again.
    """
    wanted, found = set(names), {}
    arns = identity_center.list_permission_sets(sso_admin, InstanceArn=instance_arn)
    # Described a few at once, and no more once every wanted one is found.
    for start in range(0, len(arns), READS_IN_FLIGHT):
        if wanted <= set(found):
            break
        described = each(lambda arn: identity_center.describe_permission_set(sso_admin, InstanceArn=instance_arn, PermissionSetArn=arn),
                         arns[start:start + READS_IN_FLIGHT])
        ours = [d for d in described if d and d["Name"] in wanted]
        tags = each(lambda d: permission_set.read_tags(sso_admin, instance_arn, d["PermissionSetArn"]) if d["Name"] in tagged else None, ours)
        found.update((d["Name"], permission_set.known_from_described(d, t)) for d, t in zip(ours, tags))
    return found, len(arns)


def sso_role_arns(client, names):
    """{permission set name: ARN of the role Identity Center made for it in this account}."""
    return sso_roles_found(client, names)["sso_role_arns"]


def sso_roles_found(client, names):
    """``sso_role_arns``, and ``sso_role_created``: {permission set name: the role's CreateDate (ISO 8601)}, from the same listing
    (the role's access entry must not be older than it, access_entry.stale_reason)."""
    by_name = {}
    for role in iam.sso_roles(client):
        set_name = naming.sso_role_permission_set(role["RoleName"])
        if set_name in names:
            by_name.setdefault(set_name, []).append(role)
    # Two roles for one permission set (a stale one left behind) are for eks_access_entry to report.
    found = dict((name, roles[0]) for name, roles in by_name.items() if len(roles) == 1)
    return {"sso_role_arns": dict((name, role["Arn"]) for name, role in found.items()),
            "sso_role_created": dict((name, compare.iso_date(role.get("CreateDate"))) for name, role in found.items() if role.get("CreateDate"))}


def domains(client, names):
    """{domain name: its ListDomains summary} of the domains named in ``names``, from one ListDomains in pages of 100.

    A domain being deleted, and a name two domains share, are left out: sagemaker_domain then
    looks the domain up by name itself (and waits for the deletion, or reports the duplicate).
    """
    wanted, found = set(names), {}
    for summary in sagemaker.list_domains(client):
        if summary["DomainName"] in wanted:
            found.setdefault(summary["DomainName"], []).append(summary)
    return dict((name, same[0]) for name, same in found.items() if len(same) == 1 and same[0].get("Status") != "Deleting")


def domain_ids(client, names):
    """{domain name: domain id} of ``domains``."""
    return dict((name, summary["DomainId"]) for name, summary in domains(client, names).items())


def budgets(client, account_id, names):
    """{name: {budget, notifications, tags}} for each of ``names``; ``budget`` is None for one that does not exist.

    The tags of those that exist are read here (for ``owner_problems``); their module then does not read them.
    """
    listed = budget.list_account_budgets(client, account_id)
    found = dict((name, listed.get(name) or {"budget": None, "notifications": []}) for name in names)
    existing = [name for name in names if found[name]["budget"] is not None]
    for name, tags in zip(existing, each(lambda name: budgets_api.list_tags(client, budget.budget_arn(account_id, name)), existing)):
        found[name] = dict(found[name], tags=tags or {})
    return found


# Not a service: the phase that lists the roles Identity Center made, and the phase that describes their access entries,
# name it among their services, so ``together`` starts the second once the first has the roles' ARNs.
SSO_ROLES = "sso roles"


def read_phases(phases, found=None):
    """Every phase's answers in one mapping (``found``, filled in place): the phases in flight together
    (calls.together), each phase's answers in the mapping as soon as it has them, so a phase that ``together`` starts
    after another can read what that one found."""
    found = {} if found is None else found
    together(*[(services, _merging(found, function)) for services, function in phases])
    return found


def _merging(found, function):
    return lambda: found.update(function())


def read_team_lookups(context, shared, team_groups, permission_set_names, subnet_ids, domain_names=(), budget_names=(), tagged_permission_sets=()):
    """The per-team lookups, made once for all teams (see the module docstring); ``context`` is a LayerContext."""
    return read_phases(team_lookup_phases(context, shared, team_groups, permission_set_names, subnet_ids, domain_names, budget_names, tagged_permission_sets))


def team_lookup_phases(context, shared, team_groups, permission_set_names, subnet_ids, domain_names=(), budget_names=(), tagged_permission_sets=()):
    """The phases of ``read_team_lookups``, each ``(services, function)`` as ``read_phases`` takes them.

    The tags of the present teams' permission sets (``tagged_permission_sets``) and domains (``domain_names``) are
    read here, for ``owner_problems``, and handed to their modules, which do not read them again.
    """
    # One phase per service, in flight together (calls.together: at most READS_IN_FLIGHT reads per service).
    phases = []
    if budget_names:
        phases.append(("budgets", lambda: {"budgets": budgets(context.client("budgets"), shared["account_id"], budget_names)}))
    if domain_names:

        def domain_lookups():
            sagemaker_client = context.client("sagemaker")
            found = domains(sagemaker_client, domain_names)
            ids = dict((name, summary["DomainId"]) for name, summary in found.items())
            summaries = list(found.values())
            profiles = domain.profiles_by_domain(sagemaker_client, ids.values())
            tags = each(lambda s: sagemaker.list_tags(sagemaker_client, s["DomainArn"]), summaries)
            return {"domain_ids": ids, "user_profiles": profiles, "domain_tags": dict((s["DomainId"], t) for s, t in zip(summaries, tags))}

        phases.append(("sagemaker", domain_lookups))
    if subnet_ids:
        phases.append(("ec2", lambda: {"vpc_id": vpc_of(context.client("ec2"), subnet_ids)}))
    if team_groups:
        phases.append(("identitystore", lambda: {
            "identity_center_group_ids": group_ids(context.client("identitystore"), shared["identity_store_id"], team_groups)}))
    if permission_set_names:
        instance_arn, account = shared["identity_center_instance_arn"], shared["account_id"]

        def described():
            found, count = permission_sets(context.client("sso-admin"), instance_arn, permission_set_names, set(tagged_permission_sets))
            return {"permission_sets": found, "permission_set_count": count}

        def provisioned(outdated=False):
            return {account: permission_set.list_provisioned_to_account(context.client("sso-admin"), instance_arn, account, outdated)}

        phases.append(("sso-admin", described))
        phases.append((("iam", SSO_ROLES), lambda: sso_roles_found(context.client("iam"), set(permission_set_names))))
        # After the descriptions (the same service), while IAM lists the roles; what the account holds, and IAM's roles,
        # count against their quotas (quota_problems).
        phases.append(("sso-admin", lambda: {"outdated_permission_sets": provisioned(outdated=True), "provisioned_permission_sets": provisioned()}))
        phases.append(("iam", lambda: {"iam_account_summary": iam.get_account_summary(context.client("iam"))}))
    return phases


def has_workspace(team):
    """Whether the team (as normalized) has a SageMaker domain: its workspace is on unless the file turns it off."""
    return (team.get("workspace") or {}).get("enabled", True)


def read_team_resources(context, shared, teams, name_prefix, data_bucket=None, pod_roles=False):
    """``team_resource_phases``' answers, the roles Identity Center made taken from ``shared`` (``read_team_lookups``')."""
    return read_phases(team_resource_phases(context, shared, shared, teams, name_prefix, data_bucket, pod_roles))


def team_resource_phases(context, shared, lookups, teams, name_prefix, data_bucket=None, pod_roles=False):
    """The present teams' resources their layers would change, with their tags, for ``owner_problems``; ``context`` is a LayerContext.

    Per team: GetRole of its Studio execution role (a team with a workspace), DescribeAccessEntry of the entries of its
    permission set's role and of its execution role (when the EKS cluster exists), and when ``data_bucket`` exists one listing of
    the S3 prefixes' ownership marks with GetObjectTagging of each mark (those of teams not present too: their names and gids
    are claimed, ``s3_owner_marks``), a prefix without a mark listed (one key) to tell whether it holds objects; and for the
    cluster one ListComputeQuotas and a ListTags per team quota; with ``pod_roles`` (a run with a kubeconfig, where
    the namespace layer makes them), each team's Pod Identity role (GetRole) and its service account's association.
    The layers take these answers instead of reading them again. Of the quotas' list they take what every quota
    guarantees (``compute_quota_guaranteed``, by instance type, and each team's ``guaranteed``): it tells a team's
    quota layer that its quota still fits beside the others when the run changes nothing; one that writes lists them again.

    ``lookups`` holds the ARNs of the roles Identity Center made (``sso_role_arns``) once the phase naming ``SSO_ROLES``
    that lists them has ended: ``read_team_lookups``' answers, or the mapping ``read_phases`` fills while it runs these
    phases with those of ``team_lookup_phases``.
    """
    present = [t for t in teams if t.get("state", "present") == "present"]
    with_workspace = [t["name"] for t in present if has_workspace(t)]
    with_quota = set(t["name"] for t in present if t.get("quota") is not None)
    # One phase per kind of resource, in flight together (calls.together: at most READS_IN_FLIGHT reads per service;
    # the pod identities, IAM's and EKS's, follow the execution roles and the access entries).
    phases = []
    cluster = shared.get("eks_cluster_name")
    if with_workspace:
        role_names = [execution_role.role_name(team, name_prefix) for team in with_workspace]
        phases.append(("iam", lambda: {"execution_roles": dict(zip(role_names, each(
            lambda name: execution_role.known_role(iam.get_role(context.client("iam"), RoleName=name)), role_names)))}))
    if shared.get("eks_cluster_arn") and present:

        def access_entries():
            sso_roles = lookups.get("sso_role_arns") or {}
            principals = [sso_roles.get(naming.permission_set_name(t["name"], name_prefix)) for t in present]
            principals += [execution_role.role_arn(shared["account_id"], execution_role.role_name(team, name_prefix)) for team in with_workspace]
            principals = [arn for arn in principals if arn]
            return {"access_entries": dict(zip(principals, each(
                lambda arn: access_entry.known_entry(arn, access_entry.describe_access_entry(context.client("eks"), cluster, arn)), principals)))}

        phases.append((("eks", SSO_ROLES), access_entries))
    if data_bucket and present:

        teams_with_prefix = [t["name"] for t in present]

        def marks():
            # One listing of the marks, their tags read: the present teams' (their owner check), and those of teams no
            # longer present, whose name and recorded gid their kept data claims (retired_names.mark_claims).
            markers, others = data_repository.read_marks(context.client("s3"), data_bucket, teams_with_prefix)
            return {"s3_markers": markers, "s3_owner_marks": others}

        phases.append(("s3", marks))
        # The ledger of retired names beside the marks: one listing, and each entry (the teams offboarded with data kept).
        phases.append(("s3", lambda: {"retired_names": retired_names.read_ledger(context.client("s3"), data_bucket)}))
    if shared.get("cluster_arn") and with_quota:

        def compute_quotas():
            sagemaker_client = context.client("sagemaker")
            summaries = quota.team_quotas(sagemaker.list_compute_quotas(sagemaker_client, ClusterArn=shared["cluster_arn"]))
            ours = [(team, s) for team, s in summaries.items() if team in with_quota]
            tags = each(lambda item: sagemaker.list_tags(sagemaker_client, item[1]["ComputeQuotaArn"]), ours)
            guaranteed = dict((team, quota.guaranteed_counts(quota.current_settings(s))) for team, s in summaries.items())
            return {
                "compute_quotas": dict((team, {"name": s["Name"], "compute_quota_id": s["ComputeQuotaId"], "tags": t, "guaranteed": guaranteed[team]})
                                       for (team, s), t in zip(ours, tags)),
                "compute_quota_guaranteed": dict(sum((Counter(counts) for counts in guaranteed.values()), Counter())),
            }

        phases.append(("sagemaker", compute_quotas))
    # The namespace layer runs for a team with a quota (Task Governance makes its namespace).
    if pod_roles and shared.get("eks_cluster_arn") and with_quota:
        pod_teams = sorted(with_quota)
        phases.append((("iam", "eks"), lambda: {"pod_identities": dict(zip(pod_teams, each(
            lambda team: team_namespace.read_known_pod_identity(context.client("iam"), context.client("eks"), team, name_prefix, cluster), pod_teams)))}))
    return phases


def _team_resource_problems(team, lookups, name_prefix, tag_keys, account_id, adopt):
    """``owner_problems`` of one team's execution role, access entries, S3 prefix, compute quota and Pod Identity role and
    association (``read_team_resources``)."""
    found = []
    role = ((lookups.get("execution_roles") or {}).get(execution_role.role_name(team, name_prefix)) or {}).get("role")
    if role:
        tags = boto3_tag_list_to_ansible_dict(role.get("Tags") or [])
        found.append(execution_role.owner_problem(team, role["Arn"], tags, tag_keys, "execution_role" in adopt))
    principals = [
        ((lookups.get("sso_role_arns") or {}).get(naming.permission_set_name(team, name_prefix)), "access_entry"),
        (execution_role.role_arn(account_id, execution_role.role_name(team, name_prefix)) if account_id else None, "studio_access_entry"),
    ]
    for principal, layer in principals:
        entry = ((lookups.get("access_entries") or {}).get(principal) or {}).get("access_entry")
        if entry:
            found.append(access_entry.owner_problem(team, lookups.get("eks_cluster_name"), principal, entry.get("tags"), tag_keys, layer in adopt))
    marker = (lookups.get("s3_markers") or {}).get(team)
    if marker is not None:
        found.append(data_repository.prefix_owner_problem(
            marker["bucket"], team, marker["tags"], marker["objects"], tag_keys, "s3_prefix" in adopt, marker.get("legacy", False)))
    known = (lookups.get("compute_quotas") or {}).get(team)
    if known is not None:
        found.append(quota.owner_problem(team, known["name"], known["compute_quota_id"], known["tags"], tag_keys, "quota" in adopt))
    known = (lookups.get("pod_identities") or {}).get(team)
    if known is not None:
        role = known.get("role")
        role = {"arn": role["Arn"], "tags": boto3_tag_list_to_ansible_dict(role.get("Tags") or [])} if role else {}
        found.extend(team_namespace.pod_identity_problems(
            team, name_prefix, lookups.get("eks_cluster_name"), role, known.get("association"), tag_keys, "pod_role" in adopt))
    return found


def _teams_named(teams, shown=5):
    """Some of ``teams`` by name, and how many others: a run of 500 teams is refused in one readable sentence."""
    teams = sorted(teams)
    named = ", ".join(teams[:shown])
    return named if len(teams) <= shown else "%s and %d more" % (named, len(teams) - shown)


def _beyond(place, held, what, teams, quota, setting):
    return "%s holds %d %s: the %d present teams without theirs (%s) would make %d, beyond its quota of %d (%s): ask AWS for an increase, then set it" % (
        place, held, what, len(teams), _teams_named(teams), held + len(teams), quota, setting)


def quota_problems(teams, lookups, name_prefix, identity_center_quotas, account_id):
    """What the present teams would add beyond the quotas of their account and Identity Center instance, before the first write.

    Every present team has a permission set in the instance ("Number of permission sets allowed in IAM Identity
    Center"), provisioned to the account ("Number of provisioned permission sets allowed per AWS account"), which makes
    an IAM role there, as do the team's Studio execution role and Pod Identity role (IAM's roles per account). IAM says
    its quota (GetAccountSummary's ``RolesQuota``, raised ones too); Identity Center does not, so
    ``identity_center_quotas`` holds the instance's (AWS's defaults unless an increase was granted). Counted from what
    ``read_team_lookups`` and ``read_team_resources`` read; what they could not read is not counted.
    """
    present = sorted(t["name"] for t in teams if t.get("state", "present") == "present")
    known = lookups.get("permission_sets") or {}
    set_of = dict((team, known.get(naming.permission_set_name(team, name_prefix)) or {}) for team in present)
    problems = []
    count = lookups.get("permission_set_count")
    without_set = [team for team in present if not set_of[team]]
    if count is not None and count + len(without_set) > identity_center_quotas["permission_sets"]:
        problems.append(_beyond("Identity Center instance %s" % lookups.get("identity_center_instance_arn"), count, "permission sets", without_set,
                                identity_center_quotas["permission_sets"], "hyperpod_identity_center_quotas.permission_sets"))
    provisioned = (lookups.get("provisioned_permission_sets") or {}).get(account_id)
    if provisioned is not None:
        provisioned = set(provisioned)
        not_provisioned = [team for team in present if set_of[team].get("permission_set_arn") not in provisioned]
        if len(provisioned) + len(not_provisioned) > identity_center_quotas["provisioned_permission_sets_per_account"]:
            problems.append(_beyond("account %s" % account_id, len(provisioned), "provisioned permission sets", not_provisioned,
                                    identity_center_quotas["provisioned_permission_sets_per_account"],
                                    "hyperpod_identity_center_quotas.provisioned_permission_sets_per_account"))
    summary = lookups.get("iam_account_summary")
    if summary:
        sso_roles, studio_roles, pod_identities = (lookups.get(key) or {} for key in ("sso_role_arns", "execution_roles", "pod_identities"))
        new_roles = {}
        for team in present:
            new_roles[team] = int(naming.permission_set_name(team, name_prefix) not in sso_roles)
            role_name = execution_role.role_name(team, name_prefix)
            new_roles[team] += int(role_name in studio_roles and not studio_roles[role_name].get("role"))
            new_roles[team] += int(team in pod_identities and not pod_identities[team].get("role"))
        adding = [team for team in present if new_roles[team]]
        if summary["Roles"] + sum(new_roles.values()) > summary["RolesQuota"]:
            problems.append("account %s holds %d IAM roles: the %d new roles of %d present teams (%s: their Identity Center, Studio execution and "
                            "Pod Identity roles) would make %d, beyond its quota of %d roles per account (IAM's GetAccountSummary)" % (
                                account_id, summary["Roles"], sum(new_roles.values()), len(adding), _teams_named(adding),
                                summary["Roles"] + sum(new_roles.values()), summary["RolesQuota"]) + ": ask AWS for an increase first")
    return problems


def owner_problems(teams, lookups, name_prefix, tag_keys=None, account_id=None, budget_prefix=None, budget_tag_keys=None):
    """``team_owner_problems``' sentences, each naming its team, in the teams' order."""
    by_team = team_owner_problems(teams, lookups, name_prefix, tag_keys, account_id, budget_prefix, budget_tag_keys)
    return ["team %r: %s" % (team, problem) for team in sorted(by_team) for problem in by_team[team]]


def team_owner_problems(teams, lookups, name_prefix, tag_keys=None, account_id=None, budget_prefix=None, budget_tag_keys=None):
    """{team: [sentence]}: every present team's existing resource, among those ``read_team_lookups`` read with their tags,
    that the team must not change.

    The rule is each layer's (``permission_set.owner_problem``, ``domain.owner_problem``, ``budget.owner_problem``, and for
    what ``read_team_resources`` read ``execution_role.owner_problem``, ``access_entry.owner_problem``,
    ``data_repository.prefix_owner_problem``, ``quota.owner_problem``: naming.ownership_problem), with the team's ``adopt``
    list as the layer gets it (team_layer_args: the Studio access entry is adopted by no entry of the list); checked here for all teams before
    the run's first write, so that such a team is refused before any of its layers writes, and the others are not. One
    sentence per resource. The budgets are named and tagged as the budget layer names and tags them (``budget_prefix``,
    ``budget_tag_keys``, by default the team's).
    """
    problems = {}
    known_sets, resolved, domain_tags, known_budgets = (lookups.get(key) or {} for key in ("permission_sets", "domain_ids", "domain_tags", "budgets"))
    for team in sorted((t for t in teams if t.get("state", "present") == "present"), key=lambda t: t["name"]):
        name, adopt = team["name"], set(team.get("adopt") or ())
        found = []
        known = known_sets.get(naming.permission_set_name(name, name_prefix))
        if known and known.get("tags") is not None:
            found.append(permission_set.owner_problem(
                name, known["name"], known["permission_set_arn"], known["tags"], tag_keys, "permission_set" in adopt))
        domain_id = resolved.get(naming.domain_name(name, name_prefix))
        if domain_id in domain_tags:
            found.append(domain.owner_problem(
                name, naming.domain_name(name, name_prefix), domain_id, domain_tags[domain_id], tag_keys, "domain" in adopt))
        budget_name = naming.budget_name(name, budget_prefix or name_prefix)
        known = known_budgets.get(budget_name) or {}
        if known.get("budget") is not None and known.get("tags") is not None:
            found.append(budget.owner_problem(name, budget_name, account_id, known["tags"], budget_tag_keys or tag_keys, "budget" in adopt))
        found.extend(_team_resource_problems(name, lookups, name_prefix, tag_keys, account_id, adopt))
        found = [problem for problem in found if problem]
        if found:
            problems[name] = found
    return problems


def team_problems(teams, lookups, name_prefix, tag_keys=None, account_id=None, budget_prefix=None, budget_tag_keys=None, inherit=None,
                  data_bucket=None):
    """``({team: [sentence]}, {team: [retired team it inherits]})``: why each present team is refused, the run's other teams
    going on (``team_owner_problems``; a name or gid the ledger of retired names of ``data_bucket`` claims,
    ``retired_names.ledger_problems``), and the ledger's entries the platform's ``inherit`` (``hyperpod_inherit``) hands to
    a team."""
    problems = team_owner_problems(teams, lookups, name_prefix, tag_keys, account_id, budget_prefix, budget_tag_keys)
    present = set(t["name"] for t in teams if t.get("state", "present") == "present")
    # The marks of teams not present (deleted from the team file, or absent) claim their names and gids as the ledger does.
    marks = retired_names.mark_claims(data_bucket, dict(
        (team, tags) for team, tags in (lookups.get("s3_owner_marks") or {}).items() if team not in present))
    retired, takes = retired_names.ledger_problems(teams, lookups.get("retired_names") or {}, data_bucket, inherit, marks)
    for team, found in retired.items():
        problems.setdefault(team, []).extend(found)
    # A present team whose mark records another Identity Center group: the team of that name that ran before.
    recorded = dict((team, found.get("tags")) for team, found in (lookups.get("s3_markers") or {}).items() if not found.get("legacy"))
    renamed = retired_names.group_problems(teams, recorded, lookups.get("identity_center_group_ids") or {}, data_bucket, inherit)
    for team, found in renamed.items():
        problems.setdefault(team, []).extend(found)
    return problems, takes


def read_shared(context, cluster_name, eks_cluster_name, instance_arn=None, scale_limits=None):
    """The account, Identity Center and both clusters; ``context`` is a LayerContext (one client per service);
    ``scale_limits`` as quota.cluster_capacity takes them."""
    # The four reads in flight together, one per service (calls.together).

    def the_instance():
        try:
            instances = identity_center.instances(context.client("sso-admin"), instance_arn)
        except HyperPodError as e:
            # Refused where the calls went (a role without Identity Center's permissions): say where that was.
            raise HyperPodError(message="%s; Identity Center is asked in %s" % (e.message, identity_center.connection_place(context)), exception=e.exception)
        if len(instances) != 1:
            raise HyperPodError(message=identity_center.instance_problem(context, instance_arn, instances))
        return instances[0]

    instance, eks_cluster, cluster, account_id = together(
        ("sso-admin", the_instance),
        # None when the EKS cluster does not exist: shared_info reports it with the rest, before any write.
        ("eks", lambda: eks.describe_cluster(context.client("eks"), name=eks_cluster_name)),
        ("sagemaker", lambda: sagemaker.describe_cluster(context.client("sagemaker"), ClusterName=cluster_name)),
        ("sts", context.account_id),
    )
    return {
        "account_id": account_id,
        "region": context.region,
        "cluster_name": cluster_name,
        "cluster_arn": cluster["ClusterArn"] if cluster else None,
        # What task_governance_quota checks each team's quota against (quota.cluster_capacity's rule).
        "cluster_capacity": quota.cluster_capacity(cluster, scale_limits) if cluster else None,
        # For each quota layer that describes the cluster itself (the first run creates it after this read).
        "scale_limits": dict(scale_limits or {}),
        "eks_cluster_name": eks_cluster_name,
        "eks_cluster_arn": eks_cluster["arn"] if eks_cluster else None,
        "identity_center_instance_arn": instance["InstanceArn"],
        "identity_store_id": instance["IdentityStoreId"],
    }
