# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""What a real account must have before the collection's first write there, read only: ``playbooks/preflight.yml``.

Each check is a row of one table (area, subject, status, detail); a check whose own read fails is a problem row of its
own, so that one run names every problem at once. The checks:

- the caller (GetCallerIdentity) and, by ``SimulatePrincipalPolicy`` on the caller's own user or role, whether its
  policies allow every statement of the automation policy (``automation_policy.render``) on the run's own resources (the
  teams' roles, budgets and marks by name, each statement's own scope besides) with the context its conditions need;
- IAM Identity Center: the instance where the run asks for it, its identity store and owner account, and its permission
  sets against the instance's quota;
- the EKS cluster: ACTIVE, an authentication mode with access entries, its Kubernetes version, each add-on the run
  installs offered for that version, and each access policy the teams are given offered in the Region;
- IAM roles against the account's quota;
- the data bucket: Block Public Access, object ownership, default encryption and versioning;
- the FSx file system: available, Lustre, in the shared subnets' VPC, and able to hold the teams' S3 links.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils import access_entry, automation_policy, data_repository, eks, fsx, iam, identity_center
from ansible_collections.hyperpod.tenancy.plugins.module_utils import naming, s3, shared, team_namespace, text_table
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError

OK, WARNING, PROBLEM = "ok", "warning", "problem"

# "The ARNs of the resources to include in the simulation" (SimulatePrincipalPolicy ResourceArns): asked in pages of this
# many, as verify_isolation asks (an assumption: the API reference states no maximum).
SIMULATED_RESOURCES_PER_CALL = 100
# "Modes: API, API_AND_CONFIG_MAP" grant access with access entries; CONFIG_MAP does not ("Change authentication mode to
# use access entries", Amazon EKS User Guide). The collection grants every team's access with access entries.
ACCESS_ENTRY_MODES = ("API", "API_AND_CONFIG_MAP")
# Block Public Access's four settings (PublicAccessBlockConfiguration, Amazon S3 API Reference).
BLOCK_PUBLIC_ACCESS = ("BlockPublicAcls", "IgnorePublicAcls", "BlockPublicPolicy", "RestrictPublicBuckets")


def row(area, subject, status, detail):
    return {"area": area, "subject": subject, "status": status, "detail": detail}


def _failed(area, subject, error):
    return row(area, subject, PROBLEM, "could not read it: %s" % error.message)


# --- the caller and its permissions ----------------------------------------------------------


def simulated_principal(iam_client, caller_arn):
    """The IAM user or role SimulatePrincipalPolicy evaluates for ``caller_arn`` (GetCallerIdentity's Arn); None for the
    account's root user and a federated user, which it cannot simulate ("PolicySourceArn: The Amazon Resource Name (ARN)
    of a user, group, or role", SimulatePrincipalPolicy, IAM API Reference)."""
    partition, service, account, resource = caller_arn.split(":", 5)[1], caller_arn.split(":")[2], caller_arn.split(":")[4], caller_arn.split(":", 5)[5]
    if service == "iam" and resource.startswith("user/"):
        return caller_arn
    if service == "sts" and resource.startswith("assumed-role/"):
        # A session's ARN leaves out its role's path, which the role's ARN holds.
        name = resource.split("/")[1]
        found = [role["Arn"] for role in iam.list_roles(iam_client) if role["RoleName"] == name]
        return found[0] if found else "arn:%s:iam::%s:role/%s" % (partition, account, name)
    return None


def _context_entries(condition):
    return [
        {"ContextKeyName": key, "ContextKeyValues": value if isinstance(value, list) else [value], "ContextKeyType": "string"}
        for operator in (condition or {}).values()
        for key, value in sorted(operator.items())
    ]


def run_resources(settings, teams):
    """{statement Sid: the run's own resource ARNs} where the statement names them: the teams' roles, marks and budgets."""
    partition, account, prefix, bucket = settings["partition"], settings["account_id"], settings["name_prefix"], settings["data_bucket"]
    role = "arn:%s:iam::%s:role/" % (partition, account)
    studio = [role + naming.studio_execution_role_name(t["name"], prefix) for t in teams]
    pods = [role + team_namespace.pod_role_name(t["name"], prefix) for t in teams]
    return {
        "CollectionRoles": studio + pods,
        "PassRolesToSageMaker": studio + list(settings["cluster_execution_role_arns"]),
        "PassPodRolesToEks": pods,
        "PlatformObjects": ["arn:%s:s3:::%s/%s" % (partition, bucket, data_repository.mark_key(t["name"])) for t in teams],
        "TeamBudgets": [
            "arn:%s:budgets::%s:budget/%s" % (partition, account, naming.budget_name(t["name"], prefix))
            for t in teams if (t.get("budget") or {}).get("monthly_usd") is not None
        ],
    }


def _denied(results):
    """{action: [resources]} of the simulation's results that are not allowed."""
    denied = {}
    for result in results:
        if result["EvalDecision"] != "allowed":
            resources = [r["EvalResourceName"] for r in result.get("ResourceSpecificResults") or [] if r["EvalResourceDecision"] != "allowed"]
            denied.setdefault(result["EvalActionName"], []).extend(resources or [result.get("EvalResourceName", "*")])
    return denied


def _missing_keys(results):
    return sorted(set(key for result in results for found in [result] + list(result.get("ResourceSpecificResults") or [])
                      for key in found.get("MissingContextValues") or []))


def permission_rows(iam_client, principal, policy, resources_by_sid):
    """One row per statement of ``policy``: whether ``principal``'s policies allow it on the statement's own scope and
    on the run's resources, with the context its condition names."""
    rows = []
    for statement in policy["Statement"]:
        sid = statement["Sid"]
        scope = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        resources = scope + [arn for arn in resources_by_sid.get(sid, []) if arn not in scope]
        results = []
        try:
            for start in range(0, len(resources), SIMULATED_RESOURCES_PER_CALL):
                page = resources[start:start + SIMULATED_RESOURCES_PER_CALL]
                request = dict(PolicySourceArn=principal, ActionNames=statement["Action"], ContextEntries=_context_entries(statement.get("Condition")))
                if page != ["*"]:
                    request["ResourceArns"] = page
                results.extend(iam.simulate_principal_policy(iam_client, **request)[0])
        except HyperPodError as e:
            rows.append(row("permissions", sid, PROBLEM, "could not simulate %s's policies: %s" % (principal, e.message)))
            continue
        denied, missing = _denied(results), _missing_keys(results)
        unsure = "; the simulation lacked the context keys %s, which the caller's policies name" % ", ".join(missing) if missing else ""
        if denied:
            detail = "; ".join("%s denied on %s" % (action, ", ".join(sorted(set(on)))) for action, on in sorted(denied.items()))
            rows.append(row("permissions", sid, PROBLEM, detail + unsure))
        else:
            rows.append(row("permissions", sid, WARNING if missing else OK, "%d action(s) allowed on %d resource(s)%s" % (
                len(statement["Action"]), len(resources), unsure)))
    return rows


def caller_rows(context, settings, teams):
    iam_client = context.client("iam")
    try:
        caller = iam.get_caller_identity(context.client("sts"))
    except HyperPodError as e:
        # No caller, no account: nothing else can be asked.
        return [_failed("caller", "credentials", e)], None
    arn = caller["Arn"]
    settings = dict(settings, account_id=caller["Account"], partition=arn.split(":")[1])
    rows = [row("caller", arn, OK, "account %s, Region %s" % (caller["Account"], context.region))]
    try:
        principal = simulated_principal(iam_client, arn)
    except HyperPodError as e:
        return rows + [_failed("permissions", arn, e)], settings
    if principal is None:
        return rows + [row("permissions", arn, WARNING, "not a user or a role: its permissions cannot be simulated; run as the automation's role")], settings
    policy = automation_policy.render(
        settings["account_id"], context.region, settings["data_bucket"], settings["eks_cluster_name"], settings["cluster_execution_role_arns"],
        prefix=settings["name_prefix"], partition=settings["partition"], identity_center_elsewhere=settings["identity_center_elsewhere"],
    )
    return rows + permission_rows(iam_client, principal, policy, run_resources(settings, teams)), settings


# --- Identity Center --------------------------------------------------------------------------


def identity_center_rows(context, instance_arn, permission_set_quota):
    try:
        found = identity_center.instances(context.client("sso-admin"), instance_arn)
        if len(found) != 1:
            return [row("identity center", "instance", PROBLEM, identity_center.instance_problem(context, instance_arn, found))]
        instance = found[0]
        count = len(identity_center.list_permission_sets(context.client("sso-admin"), InstanceArn=instance["InstanceArn"]))
    except HyperPodError as e:
        return [_failed("identity center", "instance", e)]
    region = (context.identity_center_connection() or {}).get("region") or context.region
    status = instance.get("Status", "ACTIVE")
    rows = [row("identity center", instance["InstanceArn"], OK if status == "ACTIVE" else PROBLEM,
                "identity store %s, account %s, Region %s, status %s" % (instance["IdentityStoreId"], instance.get("OwnerAccountId", "?"), region, status))]
    rows.append(row("quotas", "permission sets", OK if count < permission_set_quota else PROBLEM,
                    "%d of %d in the instance (each team adds one)" % (count, permission_set_quota)))
    return rows


# --- EKS ---------------------------------------------------------------------------------------


def wanted_access_policies(teams):
    """The EKS access policies the teams' access entries are given (access_entry.team_access_policies), by name."""
    names = set()
    for team in teams:
        access = dict({"policies": ["training", "inference"], "cluster_read": True}, **(team.get("access") or {}))
        names.update(p["name"] for p in access_entry.team_access_policies(access, naming.namespace(team["name"])))
    return sorted(names)


def eks_rows(context, cluster_name, addons, access_policies):
    client = context.client("eks")
    try:
        cluster = eks.describe_cluster(client, name=cluster_name)
    except HyperPodError as e:
        return [_failed("eks", cluster_name, e)]
    if cluster is None:
        return [row("eks", cluster_name, PROBLEM, "no EKS cluster %s in %s" % (cluster_name, context.region))]
    mode = (cluster.get("accessConfig") or {}).get("authenticationMode", "CONFIG_MAP")
    version = cluster.get("version")
    problems = []
    if cluster.get("status") != "ACTIVE":
        problems.append("status %s, not ACTIVE" % cluster.get("status"))
    if mode not in ACCESS_ENTRY_MODES:
        problems.append("authentication mode %s grants no access entry: set API_AND_CONFIG_MAP (aws eks update-cluster-config --access-config "
                        "authenticationMode=API_AND_CONFIG_MAP)" % mode)
    rows = [row("eks", cluster_name, PROBLEM if problems else OK, "; ".join(problems + ["Kubernetes %s, authentication mode %s" % (version, mode)]))]
    for addon in addons:
        try:
            offered = [v["addonVersion"] for a in eks.describe_addon_versions(client, addonName=addon["name"], kubernetesVersion=version)
                       for v in a.get("addonVersions") or []]
        except HyperPodError as e:
            rows.append(_failed("add-on", addon["name"], e))
            continue
        pinned = addon.get("version")
        if not offered or (pinned and pinned not in offered):
            rows.append(row("add-on", addon["name"], PROBLEM, "%s not offered for Kubernetes %s in %s (offered: %s)" % (
                pinned or "no version", version, context.region, ", ".join(offered) or "none")))
        else:
            rows.append(row("add-on", addon["name"], OK, "%s for Kubernetes %s" % (pinned or offered[0], version)))
    try:
        published = set(p["name"] for p in eks.list_access_policies(client))
    except HyperPodError as e:
        return rows + [_failed("access policies", ", ".join(access_policies), e)]
    missing = [name for name in access_policies if name not in published]
    rows.append(row("access policies", "%d the teams use" % len(access_policies), PROBLEM if missing else OK,
                    "not offered in %s: %s" % (context.region, ", ".join(missing)) if missing else ", ".join(access_policies)))
    return rows


# --- the account's quotas, the bucket, the file system ---------------------------------------------


def role_quota_rows(context):
    try:
        summary = iam.get_account_summary(context.client("iam"))
    except HyperPodError as e:
        return [_failed("quotas", "IAM roles", e)]
    used, quota = summary.get("Roles", 0), summary.get("RolesQuota", 0)
    return [row("quotas", "IAM roles", OK if used < quota else PROBLEM, "%d of %d in the account (each team adds up to three)" % (used, quota))]


def bucket_rows(context, bucket):
    client = context.client("s3")
    try:
        if s3.head_bucket(client, Bucket=bucket) is None:
            return [row("data bucket", bucket, PROBLEM, "no S3 bucket %s (or not this account's)" % bucket)]
        blocked = s3.get_public_access_block(client, Bucket=bucket) or {}
        ownership = [r["ObjectOwnership"] for r in (s3.get_bucket_ownership_controls(client, Bucket=bucket) or {}).get("Rules") or []]
        encryption = [r["ApplyServerSideEncryptionByDefault"] for r in (s3.get_bucket_encryption(client, Bucket=bucket) or {}).get("Rules") or []]
        versioning = s3.get_bucket_versioning(client, Bucket=bucket).get("Status", "never enabled")
    except HyperPodError as e:
        return [_failed("data bucket", bucket, e)]
    rows = []
    off = [setting for setting in BLOCK_PUBLIC_ACCESS if not blocked.get(setting)]
    # New buckets block public access ("Blocking public access to your Amazon S3 storage", Amazon S3 User Guide): a bucket
    # that does not could be opened to anyone by a policy or an ACL, every team's data with it.
    rows.append(row("data bucket", "Block Public Access", PROBLEM if off else OK, "off: %s" % ", ".join(off) if off else "all four on"))
    # Objects owned by their writer keep ACLs in force: an ACL could share a team's object beyond IAM's rules.
    owner = ownership[0] if ownership else "ObjectWriter (no ownership controls)"
    rows.append(row("data bucket", "object ownership", OK if owner == "BucketOwnerEnforced" else WARNING,
                    owner if owner == "BucketOwnerEnforced" else "%s: ACLs are in force; BucketOwnerEnforced turns them off" % owner))
    algorithm = encryption[0].get("SSEAlgorithm") if encryption else None
    if algorithm and algorithm.startswith("aws:kms"):
        rows.append(row("data bucket", "default encryption", WARNING, "%s with key %s: the team roles need kms:Decrypt and kms:GenerateDataKey "
                        "on it, which the collection does not grant" % (algorithm, encryption[0].get("KMSMasterKeyID", "aws/s3"))))
    else:
        rows.append(row("data bucket", "default encryption", OK, algorithm or "none set"))
    rows.append(row("data bucket", "versioning", OK if versioning == "Enabled" else WARNING,
                    "Enabled" if versioning == "Enabled" else "%s: an overwritten or deleted team object cannot be recovered" % versioning))
    return rows


def fsx_rows(context, file_system_id, vpc_id, linked_teams):
    client = context.client("fsx")
    try:
        found = fsx.describe_file_systems(client, FileSystemIds=[file_system_id])
        associations = fsx.describe_data_repository_associations(client, Filters=[{"Name": "file-system-id", "Values": [file_system_id]}]) if found else []
    except HyperPodError as e:
        return [_failed("fsx", file_system_id, e)]
    if not found:
        return [row("fsx", file_system_id, PROBLEM, "no FSx file system %s in %s" % (file_system_id, context.region))]
    file_system = found[0]
    deployment = (file_system.get("LustreConfiguration") or {}).get("DeploymentType")
    problems = []
    if file_system.get("FileSystemType") != "LUSTRE":
        problems.append("a %s file system, not Lustre" % file_system.get("FileSystemType"))
    if file_system.get("Lifecycle") != "AVAILABLE":
        problems.append("lifecycle %s, not AVAILABLE" % file_system.get("Lifecycle"))
    if vpc_id and file_system.get("VpcId") != vpc_id:
        problems.append("in %s, not the shared subnets' %s, where the cluster's nodes mount it" % (file_system.get("VpcId"), vpc_id))
    if linked_teams and deployment == "SCRATCH_1":
        problems.append("SCRATCH_1 holds no data repository association, which storage.s3_link of %s needs" % ", ".join(linked_teams))
    linked = set(a.get("FileSystemPath") for a in associations)
    new = [team for team in linked_teams if naming.fsx_export_path(team) not in linked]
    room = data_repository.MAX_ASSOCIATIONS - len(associations)
    if len(new) > room:
        problems.append("%d associations already, room for %d: storage.s3_link of %s" % (len(associations), room, ", ".join(new)))
    detail = "%s %s, %s, %d data repository associations" % (file_system.get("FileSystemType"), deployment, file_system.get("Lifecycle"), len(associations))
    return [row("fsx", file_system_id, PROBLEM if problems else OK, "; ".join(problems + [detail]))]


def _vpc(context, subnet_ids):
    try:
        return shared.vpc_of(context.client("ec2"), subnet_ids) if subnet_ids else None
    except HyperPodError:
        # shared_info names a missing subnet with the rest; here the VPC only places the file system.
        return None


def checks(context, settings, teams):
    """Every row, in the table's order; ``settings`` as the module's options, ``teams`` the present teams."""
    rows, settings = caller_rows(context, settings, teams)
    if settings is None:
        return rows
    rows += identity_center_rows(context, settings["identity_center_instance_arn"], settings["permission_set_quota"])
    rows += eks_rows(context, settings["eks_cluster_name"], settings["addons"], wanted_access_policies(teams))
    rows += role_quota_rows(context)
    rows += bucket_rows(context, settings["data_bucket"])
    if settings.get("fsx_file_system_id"):
        linked = [t["name"] for t in teams if (t.get("storage") or {}).get("s3_link") is True]
        rows += fsx_rows(context, settings["fsx_file_system_id"], _vpc(context, settings["subnet_ids"]), linked)
    return rows


def table(rows):
    """The rows as the fixed-width lines the playbook prints."""
    return text_table.columns([("AREA", "SUBJECT", "STATUS", "DETAIL"), None] + [(r["area"], r["subject"], r["status"], r["detail"]) for r in rows])
