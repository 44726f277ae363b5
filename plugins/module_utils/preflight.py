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
from ansible_collections.hyperpod.tenancy.plugins.module_utils import naming, s3, shared, sts, team_namespace, text_table
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError, with_answer

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
    return row(area, subject, PROBLEM, "could not read it: %s" % with_answer(error))


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


def _context_entries(condition, caller_context):
    """The context a request of the run carries: the statement's own condition values (the ``managed-by`` tag,
    ``iam:PassedToService``) and what every request holds of the caller and the Region (``aws:RequestedRegion``,
    ``aws:PrincipalArn``, ``aws:PrincipalAccount``: "AWS global condition context keys", IAM User Guide), which a Region
    guardrail or a principal condition of the caller's own policies or SCPs names."""
    given = dict(caller_context)
    for operator in (condition or {}).values():
        given.update(operator)
    return [
        {"ContextKeyName": key, "ContextKeyValues": value if isinstance(value, list) else [value], "ContextKeyType": "string"}
        for key, value in sorted(given.items())
    ]


# The SageMaker resources the run makes, whose ids it learns only when it makes them: each type's ARNs as a set, so that
# a Deny of the caller's own on one type is seen (resource types of "Actions, resources, and condition keys for Amazon
# SageMaker AI", Service Authorization Reference).
SAGEMAKER_TYPES = ("cluster/*", "cluster-scheduler-config/*", "compute-quota/*", "domain/*", "user-profile/*/*", "space/*/*", "app/*/*/*/*")


def run_resources(settings, teams):
    """{statement Sid: the run's own resource ARNs} where the statement names them: the teams' roles, marks and budgets,
    and the SageMaker resource types the run makes."""
    partition, account, prefix, bucket = settings["partition"], settings["account_id"], settings["name_prefix"], settings["data_bucket"]
    role = "arn:%s:iam::%s:role/" % (partition, account)
    studio = [role + naming.studio_execution_role_name(t["name"], prefix) for t in teams]
    pods = [role + team_namespace.pod_role_name(t["name"], prefix) for t in teams]
    sagemaker = ["arn:%s:sagemaker:%s:%s:%s" % (partition, settings["region"], account, kind) for kind in SAGEMAKER_TYPES]
    return {
        "CollectionRoles": studio + pods,
        "PassRolesToSageMaker": studio + list(settings["cluster_execution_role_arns"]),
        "PassPodRolesToEks": pods,
        "PlatformObjects": ["arn:%s:s3:::%s/%s" % (partition, bucket, data_repository.mark_key(t["name"])) for t in teams],
        "TeamBudgets": [
            "arn:%s:budgets::%s:budget/%s" % (partition, account, naming.budget_name(t["name"], settings["budget_name_prefix"] or prefix))
            for t in teams if (t.get("budget") or {}).get("monthly_usd") is not None
        ],
        "ReadSageMaker": sagemaker,
        "CreateMarkedSageMaker": sagemaker,
        "ChangeMarkedSageMaker": sagemaker,
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


def permission_rows(iam_client, principal, policy, resources_by_sid, caller_context):
    """One row per statement of ``policy``: whether ``principal``'s policies allow it on the statement's own scope and
    on the run's resources, with the context its condition names and ``caller_context``.

    A scope with a wildcard is simulated as its ARN pattern, a string the caller's statements are matched against: a Deny
    narrower than the pattern (one domain's ARN) is not seen there, only on the run's own resources that are named."""
    rows = []
    for statement in policy["Statement"]:
        sid = statement["Sid"]
        scope = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        resources = scope + [arn for arn in resources_by_sid.get(sid, []) if arn not in scope]
        results = []
        try:
            for start in range(0, len(resources), SIMULATED_RESOURCES_PER_CALL):
                page = resources[start:start + SIMULATED_RESOURCES_PER_CALL]
                request = dict(PolicySourceArn=principal, ActionNames=statement["Action"],
                               ContextEntries=_context_entries(statement.get("Condition"), caller_context))
                if page != ["*"]:
                    request["ResourceArns"] = page
                results.extend(iam.simulate_principal_policy(iam_client, **request)[0])
        except HyperPodError as e:
            rows.append(row("permissions", sid, PROBLEM, "could not simulate %s's policies: %s" % (principal, with_answer(e))))
            continue
        denied, missing = _denied(results), _missing_keys(results)
        unsure = "; the simulation lacked the context keys %s, which the caller's policies name: check by hand" % ", ".join(missing) if missing else ""
        if denied:
            detail = "; ".join("%s denied on %s" % (action, ", ".join(sorted(set(on)))) for action, on in sorted(denied.items()))
            # Without a key the caller's policies test, the simulator may deny what the real request is allowed.
            rows.append(row("permissions", sid, WARNING if missing else PROBLEM, detail + unsure))
        else:
            rows.append(row("permissions", sid, WARNING if missing else OK, "%d action(s) allowed on %d resource(s)%s" % (
                len(statement["Action"]), len(resources), unsure)))
    return rows


def caller_rows(context, settings, teams):
    iam_client = context.client("iam")
    try:
        caller = sts.get_caller_identity(context.client("sts"))
    except HyperPodError as e:
        # No caller, no account: nothing else can be asked.
        return [_failed("caller", "credentials", e)], None
    arn = caller["Arn"]
    settings = dict(settings, account_id=caller["Account"], partition=arn.split(":")[1], region=context.region)
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
    if settings["budget_account_id"] not in (None, "", settings["account_id"]):
        # The budgets are another account's (cost_account_id): this caller does not change them.
        policy = dict(policy, Statement=[s for s in policy["Statement"] if s["Sid"] != "TeamBudgets"])
    caller_context = {"aws:RequestedRegion": context.region, "aws:PrincipalArn": principal, "aws:PrincipalAccount": settings["account_id"]}
    return rows + permission_rows(iam_client, principal, policy, run_resources(settings, teams), caller_context), settings


# --- Identity Center --------------------------------------------------------------------------


def identity_center_rows(context, instance_arn, permission_set_quota):
    client = context.client("sso-admin")
    try:
        found = identity_center.instances(client, instance_arn)
    except HyperPodError as e:
        return [row("identity center", "instance", PROBLEM, "could not read it in %s: %s" % (identity_center.connection_place(context), with_answer(e)))]
    if len(found) != 1:
        return [row("identity center", "instance", PROBLEM, identity_center.instance_problem(context, instance_arn, found))]
    instance = found[0]
    region = context.identity_center_connection().get("region") or context.region
    status = instance.get("Status", "ACTIVE")
    rows = [row("identity center", instance["InstanceArn"], OK if status == "ACTIVE" else PROBLEM,
                "identity store %s, account %s, Region %s, status %s" % (instance["IdentityStoreId"], instance.get("OwnerAccountId", "?"), region, status))]
    try:
        count = len(identity_center.list_permission_sets(client, InstanceArn=instance["InstanceArn"]))
    except HyperPodError as e:
        return rows + [_failed("quotas", "permission sets", e)]
    rows.append(row("quotas", "permission sets", OK if count < permission_set_quota else PROBLEM,
                    "%d of %d in the instance (each team adds one)" % (count, permission_set_quota)))
    return rows


# --- EKS ---------------------------------------------------------------------------------------


def wanted_access_policies(teams):
    """The EKS access policies the teams' access entries are given (access_entry.team_access_policies), by name."""
    names = set()
    for team in teams:
        access = dict(access_entry.TEAM_FILE_SECTION, **(team.get("access") or {}))
        names.update(p["name"] for p in access_entry.team_access_policies(access, naming.namespace(team["name"])))
    return sorted(names)


def cluster_rows(context, cluster_name):
    """The cluster's row, and its Kubernetes version (None when it could not be read)."""
    try:
        cluster = eks.describe_cluster(context.client("eks"), name=cluster_name)
    except HyperPodError as e:
        return [_failed("eks", cluster_name, e)], None
    if cluster is None:
        return [row("eks", cluster_name, PROBLEM, "no EKS cluster %s in %s" % (cluster_name, context.region))], None
    mode = (cluster.get("accessConfig") or {}).get("authenticationMode", "CONFIG_MAP")
    version = cluster.get("version")
    problems = []
    if cluster.get("status") != "ACTIVE":
        problems.append("status %s, not ACTIVE" % cluster.get("status"))
    if mode not in ACCESS_ENTRY_MODES:
        problems.append("authentication mode %s grants no access entry: set API_AND_CONFIG_MAP (aws eks update-cluster-config --access-config "
                        "authenticationMode=API_AND_CONFIG_MAP)" % mode)
    return [row("eks", cluster_name, PROBLEM if problems else OK, "; ".join(problems + ["Kubernetes %s, authentication mode %s" % (version, mode)]))], version


def addon_row(context, addon, version):
    if version is None:
        return row("add-on", addon["name"], WARNING, "not checked: the EKS cluster's Kubernetes version is unknown")
    try:
        offered = [v["addonVersion"] for a in eks.describe_addon_versions(context.client("eks"), addonName=addon["name"], kubernetesVersion=version)
                   for v in a.get("addonVersions") or []]
    except HyperPodError as e:
        return _failed("add-on", addon["name"], e)
    pinned = addon.get("version")
    if not offered or (pinned and pinned not in offered):
        return row("add-on", addon["name"], PROBLEM, "%s not offered for Kubernetes %s in %s (offered: %s)" % (
            pinned or "no version", version, context.region, ", ".join(offered) or "none"))
    return row("add-on", addon["name"], OK, "%s for Kubernetes %s" % (pinned or offered[0], version))


def access_policy_row(context, access_policies):
    subject = "%d the teams use" % len(access_policies)
    try:
        published = set(p["name"] for p in eks.list_access_policies(context.client("eks")))
    except HyperPodError as e:
        return _failed("access policies", subject, e)
    missing = [name for name in access_policies if name not in published]
    return row("access policies", subject, PROBLEM if missing else OK,
               "not offered in %s: %s" % (context.region, ", ".join(missing)) if missing else ", ".join(access_policies))


def eks_rows(context, cluster_name, addons, access_policies):
    rows, version = cluster_rows(context, cluster_name)
    return rows + [addon_row(context, addon, version) for addon in addons] + [access_policy_row(context, access_policies)]


# --- the account's quotas, the bucket, the file system ---------------------------------------------


def role_quota_rows(context):
    try:
        summary = iam.get_account_summary(context.client("iam"))
    except HyperPodError as e:
        return [_failed("quotas", "IAM roles", e)]
    used, quota = summary.get("Roles", 0), summary.get("RolesQuota", 0)
    return [row("quotas", "IAM roles", OK if used < quota else PROBLEM, "%d of %d in the account (each team adds up to three)" % (used, quota))]


def _public_access_row(blocked):
    off = [setting for setting in BLOCK_PUBLIC_ACCESS if not (blocked or {}).get(setting)]
    # New buckets block public access ("Blocking public access to your Amazon S3 storage", Amazon S3 User Guide): a bucket
    # that does not could be opened to anyone by a policy or an ACL, every team's data with it. The account's own
    # setting may cover a bucket's (s3control GetPublicAccessBlock), which this check does not read.
    return row("data bucket", "Block Public Access", PROBLEM if off else OK,
               "off on the bucket: %s (turn them on for the bucket; the account's setting is not read)" % ", ".join(off) if off else "all four on")


def _ownership_row(controls):
    rules = [r["ObjectOwnership"] for r in (controls or {}).get("Rules") or []]
    owner = rules[0] if rules else "ObjectWriter (no ownership controls)"
    # Objects owned by their writer keep ACLs in force: an ACL could share a team's object beyond IAM's rules.
    return row("data bucket", "object ownership", OK if owner == "BucketOwnerEnforced" else WARNING,
               owner if owner == "BucketOwnerEnforced" else "%s: ACLs are in force; BucketOwnerEnforced turns them off" % owner)


def _encryption_row(configuration):
    rules = [r["ApplyServerSideEncryptionByDefault"] for r in (configuration or {}).get("Rules") or []]
    algorithm = rules[0].get("SSEAlgorithm") if rules else None
    if algorithm and algorithm.startswith("aws:kms"):
        return row("data bucket", "default encryption", WARNING, "%s with key %s: the team roles need kms:Decrypt and kms:GenerateDataKey "
                   "on it, which the collection does not grant" % (algorithm, rules[0].get("KMSMasterKeyID", "aws/s3")))
    return row("data bucket", "default encryption", OK, algorithm or "none set")


def _versioning_row(versioning):
    status = versioning.get("Status", "never enabled")
    return row("data bucket", "versioning", OK if status == "Enabled" else WARNING,
               "Enabled" if status == "Enabled" else "%s: an overwritten or deleted team object cannot be recovered" % status)


BUCKET_SETTINGS = (
    ("Block Public Access", s3.get_public_access_block, _public_access_row),
    ("object ownership", s3.get_bucket_ownership_controls, _ownership_row),
    ("default encryption", s3.get_bucket_encryption, _encryption_row),
    ("versioning", s3.get_bucket_versioning, _versioning_row),
)


def bucket_rows(context, bucket, account_id):
    """The bucket, then one row per setting, each read on its own. ``ExpectedBucketOwner``: a bucket of that name in another
    account answers 403 rather than its settings ("Verifying bucket ownership with bucket owner condition", Amazon S3 User Guide)."""
    client = context.client("s3")
    try:
        if s3.head_bucket(client, Bucket=bucket, ExpectedBucketOwner=account_id) is None:
            return [row("data bucket", bucket, PROBLEM, "no S3 bucket %s" % bucket)]
    except HyperPodError as e:
        return [row("data bucket", bucket, PROBLEM, "not readable as account %s's: %s" % (account_id, with_answer(e)))]
    rows = []
    for subject, read, judge in BUCKET_SETTINGS:
        try:
            rows.append(judge(read(client, Bucket=bucket, ExpectedBucketOwner=account_id)))
        except HyperPodError as e:
            rows.append(_failed("data bucket", subject, e))
    return rows


# "Data repository associations are supported on ... all FSx for Lustre 2.12 and 2.15 file systems, excluding
# Intelligent-Tiering and scratch_1 file systems"; a file system linked the legacy way (DataRepositoryConfiguration) takes
# none ("This data type is not supported on file systems with a data repository association"): DataRepositoryAssociation
# and DataRepositoryConfiguration, Amazon FSx API Reference.
ASSOCIATION_LUSTRE_VERSIONS = ("2.12", "2.15")


def association_problem(file_system):
    """Why ``file_system`` (DescribeFileSystems) holds no data repository association, or None."""
    lustre = file_system.get("LustreConfiguration") or {}
    if file_system.get("FileSystemTypeVersion") not in ASSOCIATION_LUSTRE_VERSIONS:
        return "Lustre %s" % file_system.get("FileSystemTypeVersion")
    if lustre.get("DeploymentType") == "SCRATCH_1":
        return "SCRATCH_1"
    if file_system.get("StorageType") == "INTELLIGENT_TIERING":
        return "Intelligent-Tiering storage"
    if (lustre.get("DataRepositoryConfiguration") or {}).get("ImportPath"):
        return "linked to S3 the legacy way (ImportPath)"
    return None


def fsx_rows(context, file_system_id, vpc_id, linked_teams):
    client = context.client("fsx")
    try:
        found = fsx.describe_file_systems(client, FileSystemIds=[file_system_id])
    except HyperPodError as e:
        return [_failed("fsx", file_system_id, e)]
    if not found:
        return [row("fsx", file_system_id, PROBLEM, "no FSx file system %s in %s" % (file_system_id, context.region))]
    file_system = found[0]
    problems = []
    if file_system.get("FileSystemType") != "LUSTRE":
        problems.append("a %s file system, not Lustre" % file_system.get("FileSystemType"))
    if file_system.get("Lifecycle") != "AVAILABLE":
        problems.append("lifecycle %s, not AVAILABLE" % file_system.get("Lifecycle"))
    if vpc_id and file_system.get("VpcId") != vpc_id:
        problems.append("in %s, not the shared subnets' %s, where the cluster's nodes mount it" % (file_system.get("VpcId"), vpc_id))
    detail = "%s %s %s, %s" % (file_system.get("FileSystemType"), file_system.get("FileSystemTypeVersion"),
                               (file_system.get("LustreConfiguration") or {}).get("DeploymentType"), file_system.get("Lifecycle"))
    unable = association_problem(file_system) if file_system.get("FileSystemType") == "LUSTRE" else "not Lustre"
    if unable:
        if linked_teams:
            problems.append("%s holds no data repository association, which storage.s3_link of %s needs" % (unable, ", ".join(linked_teams)))
        return [row("fsx", file_system_id, PROBLEM if problems else OK, "; ".join(problems + [detail]))]
    try:
        associations = fsx.describe_data_repository_associations(client, Filters=[{"Name": "file-system-id", "Values": [file_system_id]}])
    except HyperPodError as e:
        return [row("fsx", file_system_id, PROBLEM if problems else OK, "; ".join(problems + [detail])), _failed("fsx", "data repository associations", e)]
    linked = set(a.get("FileSystemPath") for a in associations)
    new = [team for team in linked_teams if naming.fsx_export_path(team) not in linked]
    room = data_repository.MAX_ASSOCIATIONS - len(associations)
    if len(new) > room:
        problems.append("%d associations already, room for %d: storage.s3_link of %s" % (len(associations), room, ", ".join(new)))
    detail += ", %d data repository associations" % len(associations)
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
    rows += bucket_rows(context, settings["data_bucket"], settings["account_id"])
    if settings.get("fsx_file_system_id"):
        linked = [t["name"] for t in teams if (t.get("storage") or {}).get("s3_link") is True]
        rows += fsx_rows(context, settings["fsx_file_system_id"], _vpc(context, settings["subnet_ids"]), linked)
    return rows


def table(rows):
    """The rows as the fixed-width lines the playbook prints."""
    return text_table.columns([("AREA", "SUBJECT", "STATUS", "DETAIL"), None] + [(r["area"], r["subject"], r["status"], r["detail"]) for r in rows])
