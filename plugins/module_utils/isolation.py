# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The isolation matrix: every team principal x every team's resources x every action that applies.

A *resource* is one of a team's things with the ARN and the condition keys AWS evaluates for it
(``aws:ResourceTag/<team key>`` from its tags, ``s3:prefix`` for a listing). The actions that apply to
a resource kind come from botocore's service models: every operation whose input names that kind of
resource (``DomainId`` without ``UserProfileName``/``SpaceName``/``AppName`` for a domain, ``Key`` for an
S3 object, ``ComputeQuotaId`` for a quota, ``BudgetName``, ``PermissionSetArn``, ``principalArn`` for an
access entry, ``RoleName`` for a role, ``ResourceArn`` for SageMaker's tagging calls), turned into the
IAM action AWS authorizes (``S3_ACTIONS``, the Budgets actions), plus the actions that are no API call
(``iam:PassRole``, versioned S3 actions).

The resources the teams *share* (``SHARED_KINDS``: the data bucket itself, the EKS cluster, its add-ons and Pod
Identity associations, the HyperPod cluster and its scheduler configuration, the FSx file system and its data
repository associations, the Grafana workspace, the Identity Center instance and its identity store) are kinds too,
one resource each whatever the number of teams (``shared_resources``), owned by ``SHARED_OWNER``: every action the
models list for them is expected denied to every team principal, but the few of ``SHARED_ALLOWED``. So are the objects
and listings of the data bucket's places no present team owns and of the cluster's lifecycle folder
(``shared_locations``: the platform's prefix, a retired team's, the scripts every node runs as root).

``matrix(principals, resources, decide)`` asks ``decide(principal, [(resource, actions)])`` for decisions,
once per principal (the local evaluator, or IAM's SimulatePrincipalPolicy on a live account, batched over
the resources that share actions and condition keys) and classifies each cell:
an allow on another team's resource, or on a shared resource outside ``SHARED_ALLOWED``, is a *leak*; a denial
of an action the team needs on its own resource (``NEEDED``) is a *gap*.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import html
import inspect
import json
import threading
import time

from ansible_collections.hyperpod.tenancy.plugins.module_utils import iam as iam_calls
from ansible_collections.hyperpod.tenancy.plugins.module_utils import cluster, iam_evaluation, naming, team_policy
from ansible_collections.hyperpod.tenancy.plugins.module_utils import s3 as s3_calls
from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import each
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError

# S3 operations whose IAM action is not s3:<Operation> (Service Authorization Reference, "Actions defined
# by Amazon S3"; "Required permissions for Amazon S3 API operations"). The sandbox authorizes with it too.
S3_ACTIONS = {
    "ListObjects": "s3:ListBucket",
    "ListObjectsV2": "s3:ListBucket",
    "HeadBucket": "s3:ListBucket",
    "ListObjectVersions": "s3:ListBucketVersions",
    "ListMultipartUploads": "s3:ListBucketMultipartUploads",
    "ListBuckets": "s3:ListAllMyBuckets",
    "HeadObject": "s3:GetObject",
    "CreateMultipartUpload": "s3:PutObject",
    "UploadPart": "s3:PutObject",
    "UploadPartCopy": "s3:PutObject",
    "CopyObject": "s3:PutObject",
    "CompleteMultipartUpload": "s3:PutObject",
    "ListParts": "s3:ListMultipartUploadParts",
    "DeleteObjects": "s3:DeleteObject",
    "GetObjectAttributes": "s3:GetObjectAttributes",
    "DeleteBucketTagging": "s3:PutBucketTagging",
    "GetBucketLifecycleConfiguration": "s3:GetLifecycleConfiguration",
    "PutBucketLifecycleConfiguration": "s3:PutLifecycleConfiguration",
    "DeleteBucketLifecycle": "s3:PutLifecycleConfiguration",
    "GetBucketEncryption": "s3:GetEncryptionConfiguration",
    "PutBucketEncryption": "s3:PutEncryptionConfiguration",
    "DeleteBucketEncryption": "s3:PutEncryptionConfiguration",
    "GetBucketCors": "s3:GetBucketCORS",
    "PutBucketCors": "s3:PutBucketCORS",
    "DeleteBucketCors": "s3:PutBucketCORS",
    "PutPublicAccessBlock": "s3:PutBucketPublicAccessBlock",
    "GetPublicAccessBlock": "s3:GetBucketPublicAccessBlock",
    "DeletePublicAccessBlock": "s3:PutBucketPublicAccessBlock",
    "PutBucketNotificationConfiguration": "s3:PutBucketNotification",
    "GetBucketNotificationConfiguration": "s3:GetBucketNotification",
    # Bucket-level operations of the shared data bucket (kind shared_bucket).
    "GetBucketLifecycle": "s3:GetLifecycleConfiguration",
    "PutBucketLifecycle": "s3:PutLifecycleConfiguration",
    "GetBucketReplication": "s3:GetReplicationConfiguration",
    "PutBucketReplication": "s3:PutReplicationConfiguration",
    "DeleteBucketReplication": "s3:PutReplicationConfiguration",
    "DeleteBucketOwnershipControls": "s3:PutBucketOwnershipControls",
    "GetBucketAccelerateConfiguration": "s3:GetAccelerateConfiguration",
    "PutBucketAccelerateConfiguration": "s3:PutAccelerateConfiguration",
    "GetBucketAnalyticsConfiguration": "s3:GetAnalyticsConfiguration",
    "ListBucketAnalyticsConfigurations": "s3:GetAnalyticsConfiguration",
    "PutBucketAnalyticsConfiguration": "s3:PutAnalyticsConfiguration",
    "DeleteBucketAnalyticsConfiguration": "s3:PutAnalyticsConfiguration",
    "GetBucketIntelligentTieringConfiguration": "s3:GetIntelligentTieringConfiguration",
    "ListBucketIntelligentTieringConfigurations": "s3:GetIntelligentTieringConfiguration",
    "PutBucketIntelligentTieringConfiguration": "s3:PutIntelligentTieringConfiguration",
    "DeleteBucketIntelligentTieringConfiguration": "s3:PutIntelligentTieringConfiguration",
    "GetBucketInventoryConfiguration": "s3:GetInventoryConfiguration",
    "ListBucketInventoryConfigurations": "s3:GetInventoryConfiguration",
    "PutBucketInventoryConfiguration": "s3:PutInventoryConfiguration",
    "DeleteBucketInventoryConfiguration": "s3:PutInventoryConfiguration",
    "GetBucketMetricsConfiguration": "s3:GetMetricsConfiguration",
    "ListBucketMetricsConfigurations": "s3:GetMetricsConfiguration",
    "PutBucketMetricsConfiguration": "s3:PutMetricsConfiguration",
    "DeleteBucketMetricsConfiguration": "s3:PutMetricsConfiguration",
    "GetObjectLockConfiguration": "s3:GetBucketObjectLockConfiguration",
    "PutObjectLockConfiguration": "s3:PutBucketObjectLockConfiguration",
}
# With a versionId these act on one version: s3:GetObjectVersion, s3:DeleteObjectVersion, ...
S3_VERSIONED = ("s3:GetObject", "s3:DeleteObject", "s3:GetObjectTagging", "s3:PutObjectTagging", "s3:DeleteObjectTagging", "s3:GetObjectAcl", "s3:PutObjectAcl")
S3_LISTINGS = ("ListObjects", "ListObjectsV2", "ListObjectVersions", "ListMultipartUploads")

# What a team's principals need on the team's own resources (team_policy, execution_role).
NEEDED = {
    "permission_set": {
        "s3_objects": list(team_policy.OBJECT_ACTIONS),
        "s3_listing": ["s3:ListBucket"],
        "domain": ["sagemaker:DescribeDomain"],
        "user_profile": ["sagemaker:DescribeUserProfile", "sagemaker:CreatePresignedDomainUrl"],
        "space": ["sagemaker:DescribeSpace", "sagemaker:UpdateSpace", "sagemaker:DeleteSpace"],
        "app": ["sagemaker:DescribeApp", "sagemaker:DeleteApp"],
    },
    "execution_role": {
        "s3_objects": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
        "s3_listing": ["s3:ListBucket"],
    },
}
NEEDED["pod_identity"] = NEEDED["execution_role"]

# --- shared resources -----------------------------------------------------------------------------
#
# What every team uses and no team owns: the data bucket itself (its policy, ACL, ownership, encryption,
# lifecycle, replication, ...), the EKS cluster (access entries, Pod Identity associations, add-ons, its
# configuration), the HyperPod cluster (its instance groups, software, nodes, scheduler configuration, new compute
# quotas), the FSx file system (data repository tasks and associations, backups, updates), the Grafana workspace
# (permissions, API keys, service accounts) and the Identity Center instance and its identity store (permission
# sets, account assignments, users, groups and their memberships), and the data bucket's objects no team owns (the
# platform's prefix, the lifecycle scripts, the prefixes of teams no longer present). A team that may change one of them reaches
# every other team, so every action botocore's models list for them is expected *denied* to every team principal,
# but for the few in SHARED_ALLOWED.
SHARED_OWNER = "(shared)"  # the owner of a shared resource in cells; no team is named so (naming.name_problems)
# The matrix at a glance has one row per principal and kind for all the other teams' resources together: a row per
# owner would grow with the square of the team count. The leaks name their owners.
OTHER_TEAMS = "(others)"

# The one allow-list: what a team principal is given on a shared resource, from the rendered policies
# (team_policy.render_team_policy, execution_role.cluster_policy; the Pod Identity role has the team data policy
# only). Reads of the clusters, nothing else; listing the data bucket is its own kind (s3_listing, the team's
# prefix only). Every entry is granted by the rendered policies (test_isolation_matrix), and an allowed action
# that is not here is a leak. A denial of one of them is no leak and, unlike NEEDED, no gap either: a team
# without a HyperPod cluster yet has a Studio role without its cluster policy.
SHARED_ALLOWED = {
    "permission_set": {
        # aws eks update-kubeconfig; HyperPod's console and CLI views of the cluster and its nodes.
        "eks_cluster": list(team_policy.EKS_READ_ACTIONS),
        "hyperpod_cluster": list(team_policy.CLUSTER_READ_ACTIONS),
    },
    "execution_role": {
        # Studio's HyperPod integration (execution_role.cluster_policy): the cluster, its Kubernetes API, its add-ons.
        "eks_cluster": ["eks:AccessKubernetesApi", "eks:DescribeCluster"],
        "eks_addon": ["eks:DescribeAddon"],
        "hyperpod_cluster": ["sagemaker:DescribeCluster"],
    },
    "pod_identity": {},
}

# Each shared kind: the botocore service, the IAM prefix, which of its operations act on that resource (by the
# members of their input), and whether its tagging calls apply. An operation that names a sub-resource by id
# (an add-on, a Pod Identity association, a scheduler configuration, a data repository association) is asked on
# that sub-resource's kind; one that creates it, on the parent.
_CLUSTER_CHILDREN = ("addonName", "associationId")


def _eks_cluster_operation(name, members):
    if "EksAnywhereSubscription" in name:
        return False
    if not members & set(("clusterName", "name")):
        return False
    return not (members & set(_CLUSTER_CHILDREN) and "clusterName" in members and not name.startswith("Create"))


SHARED_KINDS = (
    # kind, botocore service, IAM prefix, operation selector, tagging operations
    ("shared_bucket", "s3", "s3", lambda n, m: "Bucket" in m and "Key" not in m and n not in ("DeleteObjects", "CreateSession"), ()),
    ("eks_cluster", "eks", "eks", _eks_cluster_operation, ("TagResource", "UntagResource", "ListTagsForResource")),
    (
        "eks_addon",
        "eks",
        "eks",
        lambda n, m: "addonName" in m and "clusterName" in m and not n.startswith("Create"),
        ("TagResource", "UntagResource", "ListTagsForResource"),
    ),
    ("eks_pod_identity_association", "eks", "eks", lambda n, m: "associationId" in m, ("TagResource", "UntagResource", "ListTagsForResource")),
    (
        "hyperpod_cluster",
        "sagemaker",
        "sagemaker",
        lambda n, m: bool(m & set(("ClusterName", "ClusterArn"))) and not m & set(("ClusterSchedulerConfigId", "ComputeQuotaId")),
        ("AddTags", "DeleteTags", "ListTags"),
    ),
    ("cluster_scheduler_config", "sagemaker", "sagemaker", lambda n, m: "ClusterSchedulerConfigId" in m, ("AddTags", "DeleteTags", "ListTags")),
    ("fsx_file_system", "fsx", "fsx", lambda n, m: "FileSystemId" in m, ("TagResource", "UntagResource", "ListTagsForResource")),
    ("fsx_association", "fsx", "fsx", lambda n, m: "AssociationId" in m, ("TagResource", "UntagResource", "ListTagsForResource")),
    ("grafana_workspace", "grafana", "grafana", lambda n, m: "workspaceId" in m, ("TagResource", "UntagResource", "ListTagsForResource")),
    ("identity_center", "sso-admin", "sso", lambda n, m: "InstanceArn" in m, ()),
    ("identity_store", "identitystore", "identitystore", lambda n, m: "IdentityStoreId" in m, ()),
    # The teams' Identity Center groups: joining one is joining its team (its permission set, its Studio domain).
    # A team manages no group, its own included, so all of them are one kind, asked together.
    ("identity_center_group", "identitystore", "identitystore", lambda n, m: "GroupId" in m, ()),
    # The data bucket's objects no team owns (shared_locations): the platform's prefix (naming.PLATFORM_PREFIX: the
    # lifecycle scripts, the ownership marks, the ledger) and its folders, every other top-level prefix that is no present
    # team's (a team offboarded with its data kept, anything put there by hand), the bucket's root, and the cluster's
    # lifecycle scripts wherever they are: every object action, as on a team's objects ...
    ("shared_objects", "s3", "s3", lambda n, m: "Key" in m or n == "DeleteObjects", ()),
    # ... and the listing of each of those prefixes (s3:prefix).
    ("shared_listing", "s3", "s3", lambda n, m: n in S3_LISTINGS, ()),
)
# Actions that are no API call, by shared kind.
SHARED_EXTRA_ACTIONS = {"eks_cluster": ["eks:AccessKubernetesApi"]}
# The id a sub-resource probe carries: a statement that reaches it reaches every one of its kind under the parent
# unless it names the id (the collection names none of these).
PROBE = "isolation-probe"


def s3_action(operation):
    return S3_ACTIONS.get(operation, "s3:" + operation)


def _operations(service):
    import botocore.session

    model = botocore.session.get_session().get_service_model(service)
    for name in model.operation_names:
        shape = model.operation_model(name).input_shape
        yield name, set(shape.members) if shape is not None else set()


def actions_by_kind():
    """Resource kind -> the sorted IAM actions that apply to it, from botocore's service models."""
    kinds = dict(
        (k, set())
        for k in ("s3_objects", "s3_listing", "domain", "user_profile", "space", "app", "compute_quota", "budget", "access_entry", "permission_set", "role")
    )
    for name, members in _operations("s3"):
        if "Key" in members or name == "DeleteObjects":
            action = s3_action(name)
            kinds["s3_objects"].add(action)
            if action in S3_VERSIONED:
                kinds["s3_objects"].add(action.replace("Object", "ObjectVersion", 1))
        elif name in S3_LISTINGS:
            kinds["s3_listing"].add(s3_action(name))
    for name, members in _operations("sagemaker"):
        action = "sagemaker:" + name
        if "ResourceArn" in members and name in ("AddTags", "DeleteTags", "ListTags"):
            for kind in ("domain", "user_profile", "space", "app", "compute_quota"):
                kinds[kind].add(action)
        if "AppName" in members and "DomainId" in members:
            kinds["app"].add(action)
        elif "UserProfileName" in members and "DomainId" in members:
            # CreatePresignedDomainUrl (UserProfileName, optional SpaceName) is authorized on the profile.
            kinds["user_profile"].add(action)
        elif "SpaceName" in members and "DomainId" in members:
            kinds["space"].add(action)
        elif "DomainId" in members:
            kinds["domain"].add(action)
        if "ComputeQuotaId" in members:
            kinds["compute_quota"].add(action)
    for name, members in _operations("budgets"):
        if "BudgetName" in members:
            kinds["budget"].add("budgets:ViewBudget" if name.startswith("Describe") else "budgets:ModifyBudget")
    for name, members in _operations("eks"):
        if "principalArn" in members:
            kinds["access_entry"].add("eks:" + name)
    for name, members in _operations("sso-admin"):
        if "PermissionSetArn" in members:
            kinds["permission_set"].add("sso:" + name)
    for name, members in _operations("iam"):
        if "RoleName" in members:
            kinds["role"].add("iam:" + name)
    kinds["role"].update(["iam:PassRole", "sts:AssumeRole", "sts:TagSession"])
    models = {}
    for kind, service, prefix, selected, tagging in SHARED_KINDS:
        if service not in models:
            models[service] = list(_operations(service))
        found = kinds.setdefault(kind, set(SHARED_EXTRA_ACTIONS.get(kind, [])))
        for name, members in models[service]:
            if selected(name, members) or name in tagging:
                action = s3_action(name) if service == "s3" else "%s:%s" % (prefix, name)
                found.add(action)
                if service == "s3" and action in S3_VERSIONED:
                    found.add(action.replace("Object", "ObjectVersion", 1))
    return dict((k, sorted(v)) for k, v in kinds.items())


def shared_locations(bucket, teams, top_level=(), platform_folders=(), lifecycle_configs=()):
    """The S3 places no team owns, [(bucket, key prefix, [keys under it to probe])], each prefix "" or ending in "/".

    In the data ``bucket``: its root, the platform's prefix (naming.PLATFORM_PREFIX) and each of its ``platform_folders``,
    and each prefix of ``top_level`` (the bucket's folders) that is not the prefix of one of ``teams`` (the present
    teams): a team offboarded with its data kept, a prefix put there by hand or by the cluster role before the platform
    had a prefix of its own. And the folder of each of ``lifecycle_configs`` (the cluster's instance groups'
    LifeCycleConfig, in any bucket), with its scripts: what HyperPod runs as root on every node. Each place is probed
    with PROBE, a key no one writes; a statement that reaches it reaches every object of the place unless it names keys.
    No read.
    """
    places = {}

    def place(where, prefix, keys=()):
        listed = places.setdefault((where, prefix), [PROBE])
        listed.extend(key for key in keys if key not in listed)

    if bucket:
        owned = set(naming.s3_prefix(team) for team in teams)
        place(bucket, "")
        place(bucket, naming.PLATFORM_PREFIX)
        for prefix in sorted(set(platform_folders)):
            if prefix.startswith(naming.PLATFORM_PREFIX):
                place(bucket, prefix)
        for prefix in sorted(set(top_level) - owned):
            place(bucket, prefix)
    for config in lifecycle_configs:
        folder = cluster.s3_folder((config or {}).get("SourceS3Uri"))
        if folder:
            place(folder[0], folder[1], [config[key] for key in ("OnCreate", "OnInitComplete") if config.get(key)])
    return [(where, prefix, keys) for (where, prefix), keys in sorted(places.items())]


def shared_resources(found, account_id, region, partition="aws"):
    """The shared resources to probe, one per shared kind whose parent is known.

    ``found``: ``bucket``, ``eks_cluster_arn``, ``hyperpod_cluster_arn``, ``fsx_file_system_id``, ``grafana_workspace_id``,
    ``identity_center_instance_arn``, ``identity_store_id``, ``group_ids`` (the teams' Identity Center group ids),
    ``s3_places`` (``shared_locations``); missing ones are skipped. Sub-resources (an add-on, a Pod Identity association,
    a scheduler configuration, a data repository association) are probes under their parent, named PROBE. No read. One
    resource per kind, but a group per team, all asked in one call per principal (up to 100 groups), an object per key of
    ``s3_places``, asked together too, and a listing per prefix of them (its own ``s3:prefix``, its own call).
    """
    found = dict((k, v) for k, v in found.items() if v)
    resources = []

    def add(kind, arn, context=None):
        resources.append({"team": SHARED_OWNER, "kind": kind, "arn": arn, "context": dict(context or {}), "shared": True})

    if "bucket" in found:
        add("shared_bucket", "arn:%s:s3:::%s" % (partition, found["bucket"]))
    for bucket, prefix, keys in found.get("s3_places", []):
        for key in keys:
            add("shared_objects", "arn:%s:s3:::%s/%s%s" % (partition, bucket, prefix, key))
        if prefix:
            add("shared_listing", "arn:%s:s3:::%s" % (partition, bucket), {"s3:prefix": prefix})
    if "eks_cluster_arn" in found:
        arn = found["eks_cluster_arn"]
        base, name = arn.split(":cluster/", 1)
        add("eks_cluster", arn)
        add("eks_addon", "%s:addon/%s/%s/00000000-0000-0000-0000-000000000000" % (base, name, PROBE))
        add("eks_pod_identity_association", "%s:podidentityassociation/%s/a-%s" % (base, name, PROBE))
    if "hyperpod_cluster_arn" in found:
        add("hyperpod_cluster", found["hyperpod_cluster_arn"])
        add("cluster_scheduler_config", "arn:%s:sagemaker:%s:%s:cluster-scheduler-config/%s" % (partition, region, account_id, PROBE))
    if "fsx_file_system_id" in found:
        fsx = "arn:%s:fsx:%s:%s:" % (partition, region, account_id)
        add("fsx_file_system", "%sfile-system/%s" % (fsx, found["fsx_file_system_id"]))
        add("fsx_association", "%sassociation/%s/dra-%s" % (fsx, found["fsx_file_system_id"], PROBE))
    if "grafana_workspace_id" in found:
        add("grafana_workspace", "arn:%s:grafana:%s:%s:/workspaces/%s" % (partition, region, account_id, found["grafana_workspace_id"]))
    if "identity_center_instance_arn" in found:
        add("identity_center", found["identity_center_instance_arn"])
    if "identity_store_id" in found:
        add("identity_store", "arn:%s:identitystore::%s:identitystore/%s" % (partition, account_id, found["identity_store_id"]))
    for group_id in sorted(found.get("group_ids", [])):
        add("identity_center_group", "arn:%s:identitystore:::group/%s" % (partition, group_id))
    return resources


# --- resources ------------------------------------------------------------------------------------


def team_resources(team, account_id, region, found, tag_keys=None, partition="aws"):
    """The resources of ``team`` to probe, from what was found of them (ids AWS chose, ARNs).

    ``found``: ``bucket``, ``domain_id``, ``user_profiles``, ``spaces``, ``apps`` ([(owner, type, name)]),
    ``compute_quota_id``, ``budget_name``, ``access_entry_arn``, ``permission_set_arn``, ``roles`` (ARNs of
    the team's execution and Pod Identity roles); missing entries are skipped.
    """
    keys = naming.tag_keys_with_defaults(tag_keys)
    tag = {"aws:ResourceTag/%s" % keys["team"]: team}
    sm = "arn:%s:sagemaker:%s:%s:" % (partition, region, account_id)
    found = dict((k, v) for k, v in found.items() if v)
    resources = []

    def add(kind, arn, context=None):
        resources.append({"team": team, "kind": kind, "arn": arn, "context": dict(context or {})})

    prefix = naming.s3_prefix(team)
    if "bucket" in found:
        add("s3_objects", "arn:%s:s3:::%s/%sisolation-probe" % (partition, found["bucket"], prefix))
        add("s3_listing", "arn:%s:s3:::%s" % (partition, found["bucket"]), {"s3:prefix": prefix})
    if "domain_id" in found:
        domain = found["domain_id"]
        add("domain", "%sdomain/%s" % (sm, domain), tag)
        for profile in found.get("user_profiles", []):
            add("user_profile", "%suser-profile/%s/%s" % (sm, domain, profile), tag)
        for space in found.get("spaces", []):
            add("space", "%sspace/%s/%s" % (sm, domain, space), tag)
        for owner, app_type, name in found.get("apps", []):
            add("app", "%sapp/%s/%s/%s/%s" % (sm, domain, owner, app_type.lower(), name), tag)
    if "compute_quota_id" in found:
        add("compute_quota", "%scompute-quota/%s" % (sm, found["compute_quota_id"]), tag)
    if "budget_name" in found:
        add("budget", "arn:%s:budgets::%s:budget/%s" % (partition, account_id, found["budget_name"]), tag)
    if "access_entry_arn" in found:
        add("access_entry", found["access_entry_arn"], tag)
    if "permission_set_arn" in found:
        add("permission_set", found["permission_set_arn"], tag)
    for arn in found.get("roles", []):
        add("role", arn, tag)
    return resources


# --- the matrix -----------------------------------------------------------------------------------


def local_decider(principal_policies, account_id):
    """``decide`` from policy documents: {principal id: {"identity": [(id, doc)], "boundary": doc, "role_arn": arn, "tags": {}}}.

    A request is evaluated against the statements that name its action only (a statement whose Action does not cover
    it applies to no request for it), and once per resource for all the actions those same statements name: past the
    Action element, nothing a statement tests depends on the action. The cells grow with the square of the team count;
    most of their actions are named by no statement (an implicit deny on every resource), the rest by a few.
    """
    covers = {}  # (Action or NotAction patterns, action) -> bool; principals' policies repeat the same Action lists

    def named(statement, action):
        key = ("Action" in statement, tuple(iam_evaluation.as_list(statement.get("Action", statement.get("NotAction")))), action)
        if key not in covers:
            covers[key] = iam_evaluation.action_applies(statement, action)
        return covers[key]

    def decide(principal, asks):
        spec = principal_policies[principal["id"]]
        identity = [(policy_id, iam_evaluation.policy_statements(document)) for policy_id, document in spec["identity"]]
        boundary = iam_evaluation.policy_statements(spec["boundary"]) if spec.get("boundary") else None
        for statement in [s for unused_id, listed in identity for s in listed] + (boundary or []):
            iam_evaluation.check_statement(statement)
        by_action, evaluated = {}, {}

        def narrowed(action):
            """(the indexes of the statements that name ``action``, the principal with only those; None when none do)."""
            if action not in by_action:
                picked = [tuple(i for i, s in enumerate(listed) if named(s, action)) for unused_id, listed in identity]
                fenced = None if boundary is None else tuple(i for i, s in enumerate(boundary) if named(s, action))
                policies = [(policy_id, {"Statement": [listed[i] for i in indexes]}) for (policy_id, listed), indexes in zip(identity, picked) if indexes]
                bounded = None if boundary is None else {"Statement": [boundary[i] for i in fenced]}
                who = iam_evaluation.Principal(account_id, policies, role_arn=spec.get("role_arn"), boundary=bounded, tags=spec.get("tags"))
                by_action[action] = ((tuple(picked), fenced), who if policies or fenced else None)
            return by_action[action]

        def decision(action, index, resource):
            statements, who = narrowed(action)
            if (statements, index) not in evaluated:
                evaluated[(statements, index)] = iam_evaluation.evaluate(who, action, resource["arn"], resource["context"])["EvalDecision"]
            return evaluated[(statements, index)]

        named_of = {}

        def named_in(actions):
            """The actions of a list that some statement names, once per list (another team's resources share one)."""
            if id(actions) not in named_of:
                named_of[id(actions)] = (actions, [action for action in actions if narrowed(action)[1] is not None])
            return named_of[id(actions)][1]

        # An action no statement names is an implicit deny: left out, as ``matrix`` reads a missing action.
        return [dict((action, decision(action, index, resource)) for action in named_in(actions)) for index, (resource, actions) in enumerate(asks)]

    return decide


def _context_entries(context):
    entries = []
    for key, value in sorted(context.items()):
        values = value if isinstance(value, list) else [value]
        kind = "stringList" if isinstance(value, list) else "string"
        entries.append({"ContextKeyName": key, "ContextKeyValues": [str(v) for v in values], "ContextKeyType": kind})
    return entries


def simulate_decider(client, chunk=50, resource_chunk=100, batch=True):
    """``decide`` through IAM's SimulatePrincipalPolicy (the resource's condition keys as ContextEntries).

    Batched: one call (per ``chunk`` actions and ``resource_chunk`` resources) for every group of resources that
    are asked the same actions with the same condition keys, since ContextEntries hold for every ResourceArn of a
    call. Each resource's decision is read from ``ResourceSpecificResults`` ("The simulator now returns a single
    EvaluationResult per action, regardless of how many resource ARNs are provided", EvaluationResult, IAM API
    Reference). ``batch=False`` asks one resource per call. ``decide.calls`` counts the calls (pages included).
    """

    counting = threading.Lock()

    def decide(principal, asks):
        groups = {}
        for index, (resource, actions) in enumerate(asks):
            key = (tuple(sorted((k, str(v)) for k, v in resource["context"].items())), tuple(actions)) if batch else (index,)
            groups.setdefault(key, []).append(index)
        answers = [{} for unused_ask in asks]
        for indexes in groups.values():
            resource, actions = asks[indexes[0]]
            entries = _context_entries(resource["context"])
            for first in range(0, len(indexes), resource_chunk):
                by_arn = {}
                for index in indexes[first : first + resource_chunk]:
                    by_arn.setdefault(asks[index][0]["arn"], []).append(index)
                for start in range(0, len(actions), chunk):
                    request = {"PolicySourceArn": principal["arn"], "ActionNames": list(actions[start : start + chunk]), "ResourceArns": list(by_arn)}
                    if entries:
                        request["ContextEntries"] = entries
                    for page in client.get_paginator("simulate_principal_policy").paginate(**request):
                        with counting:
                            decide.calls += 1
                        for result in page["EvaluationResults"]:
                            _record(result, by_arn, answers)
        return answers

    decide.calls = 0
    return decide


class Memory:
    """What IAM and Access Analyzer answered in earlier runs, by the digest of everything their answer depends on.

    ``proven``: {digest: epoch seconds}, as an earlier run returned it (``used``). An answer is recalled while it is
    younger than ``max_age_hours`` (0 recalls none). A digest covers the question (the principal, its policy documents,
    boundary and tags, each resource's ARN, condition keys and actions; or the policy document and access asked of
    Access Analyzer) and the source of the evaluator, so any change to one of them asks again. What the digest cannot
    see (a service control policy, a change in how IAM evaluates) is why an answer ages out. ``used`` holds the
    answers this run relied on, with the time they were given: a run never makes a recalled answer younger.
    """

    def __init__(self, proven, max_age_hours, now=None):
        self.now = time.time() if now is None else now
        self.evaluator = _evaluator_source_digest()
        oldest = self.now - max_age_hours * 3600
        usable = max_age_hours > 0 and self.evaluator is not None
        self.known = dict((key, when) for key, when in (proven or {}).items() if usable and isinstance(when, (int, float)) and when > oldest)
        self.used = {}
        self.recalled = {"iam": 0, "accessanalyzer": 0}
        self._lock = threading.Lock()

    def key(self, service, *question):
        if self.evaluator is None:
            return None
        text = json.dumps([service, self.evaluator, question], sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def recall(self, service, key):
        with self._lock:
            if key not in self.known:
                return False
            self.used[key] = self.known[key]
            self.recalled[service] += 1
            return True

    def prove(self, key):
        if key is not None:
            with self._lock:
                self.used[key] = self.now


def _evaluator_source_digest():
    """The evaluator's code, so that an upgraded collection asks IAM again; None when the source cannot be read."""
    try:
        source = inspect.getsource(iam_evaluation) + inspect.getsource(local_decider)
    except (OSError, TypeError):
        return None
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def witness_decider(simulate, local, memory=None, inputs=None):
    """``decide``: IAM answers each principal's own team, the shared resources and one other team; the evaluator the rest.

    ``simulate`` (``simulate_decider``) asks IAM every cell of a principal on its own team's resources, on the shared
    ones and on one other team's, its *witness* (the next team by name, the first after the last). ``local``
    (``local_decider``, the principal's policies as IAM holds them) answers every cell, and must agree with IAM on each
    cell both answered; then the evaluator's answers stand for the other teams' cells. Where the two disagree on one
    cell, or the evaluator cannot read a policy (``PolicyError``), IAM answers every cell of that principal, and
    ``decide.fallbacks`` says which principal and why. So IAM is asked a number of calls that grows with the team
    count, not with its square, and no difference between IAM and the evaluator on a principal's policies goes unseen.
    ``decide.local_cells`` counts the cells the evaluator alone answered.

    With a ``memory`` (``Memory``) and each principal's ``inputs`` (what ``local`` evaluates), IAM is not asked again
    about a principal whose inputs and asked cells it already answered as the evaluator does: the evaluator still
    answers every cell of every run, so a policy changed by hand is judged at once, and asked of IAM too.
    """

    counting = threading.Lock()

    def decide(principal, asks):
        owners = sorted(set(resource["team"] for resource, unused_actions in asks if not resource.get("shared")) - set([principal["team"]]))
        witness = next((owner for owner in owners if owner > principal["team"]), owners[0] if owners else None)
        asked = [i for i, (resource, unused_actions) in enumerate(asks) if resource.get("shared") or resource["team"] in (principal["team"], witness)]
        try:
            evaluated = local(principal, asks)
        except iam_evaluation.PolicyError as error:
            evaluated, why = None, "the evaluator cannot read its policies (%s)" % error
        key = None
        if memory is not None and evaluated is not None:
            question = [(asks[i][0]["arn"], asks[i][0]["context"], asks[i][1]) for i in asked]
            key = memory.key("iam", principal["arn"], inputs[principal["id"]], question)
            if memory.recall("iam", key):
                with counting:
                    decide.local_cells += sum(len(actions) for unused_resource, actions in asks)
                return evaluated
        answers = dict(zip(asked, simulate(principal, [asks[i] for i in asked])))
        rest = [i for i in range(len(asks)) if i not in answers]
        if evaluated is not None:
            differ = [(i, action) for i in asked for action in asks[i][1] if _decision(answers[i], action) != _decision(evaluated[i], action)]
            if not differ:
                if memory is not None:
                    memory.prove(key)
                with counting:
                    decide.local_cells += sum(len(asks[i][1]) for i in rest)
                return [answers[i] if i in answers else evaluated[i] for i in range(len(asks))]
            i, action = differ[0]
            why = "IAM answers %s and the evaluator %s for %s on %s" % (
                _decision(answers[i], action), _decision(evaluated[i], action), action, asks[i][0]["arn"]
            )
        answers.update(zip(rest, simulate(principal, [asks[i] for i in rest])))
        with counting:
            decide.fallbacks.append("%s's %s (%s): asked of IAM in full, as %s" % (principal["team"], principal["kind"], principal["arn"], why))
        return [answers[i] for i in range(len(asks))]

    decide.local_cells = 0
    decide.fallbacks = []
    return decide


def _decision(answers, action):
    return answers.get(action, iam_evaluation.IMPLICIT_DENY)


def _record(result, by_arn, answers):
    specific = result.get("ResourceSpecificResults")
    if specific:
        pairs = [(r["EvalResourceName"], r["EvalResourceDecision"]) for r in specific]
    elif len(by_arn) == 1:
        pairs = [(next(iter(by_arn)), result["EvalDecision"])]
    else:
        pairs = [(result.get("EvalResourceName"), result["EvalDecision"])]
    for arn, decision in pairs:
        if arn not in by_arn:
            raise HyperPodError("SimulatePrincipalPolicy answered %s for %s, a resource it was not asked about" % (result["EvalActionName"], arn))
        for index in by_arn[arn]:
            answers[index][result["EvalActionName"]] = decision


def matrix(principals, resources, decide, actions=None, keep_cells=True):
    """Every cell, and the leaks and gaps among them.

    ``principals``: [{"id", "team", "kind" (permission_set / execution_role / pod_identity), "arn"}].
    ``resources``: team_resources' and shared_resources' (``"shared": True``, owner SHARED_OWNER).
    ``decide(principal, [(resource, actions)])`` answers each resource's decisions, once per principal.
    Returns {"cells": [...], "grid": {...}, "leaks": [...], "gaps": [...], "summary": {...}}; a shared resource's cells
    are counted in ``shared_cells``, not in ``cross_team_cells``. ``grid`` counts the allowed and denied cells per team,
    principal, owner (OTHER_TEAMS for all the other teams together, and how many they are) and resource kind
    (``table``); ``keep_cells=False`` keeps no cell but the leaks and gaps, as the cells grow with the square of the
    team count.
    """
    actions = actions or actions_by_kind()
    owners_of_kind = {}
    for resource in resources:
        if not resource.get("shared"):
            owners_of_kind.setdefault(resource["kind"], set()).add(resource["team"])

    def tallied(principal):
        """One principal's rows, counts, and cells (all, or the leaks and gaps only): no principal's asks and answers
        are kept past its own, as they grow with the team count and the principals too."""
        needed, permitted, asks = NEEDED.get(principal["kind"], {}), SHARED_ALLOWED.get(principal["kind"], {}), []
        for resource in resources:
            # Another team's resource is asked the kind's actions as they are: one list, never copied.
            wanted = actions.get(resource["kind"], [])
            if resource.get("shared"):
                wanted = sorted(set(wanted) | set(permitted.get(resource["kind"], [])))
            elif resource["team"] == principal["team"]:
                wanted = sorted(set(wanted) | set(needed.get(resource["kind"], [])))
            asks.append((resource, wanted))
        grid, counts, cells, leaks, gaps = {}, {"cells": 0, "cross_team_cells": 0, "shared_cells": 0}, [], [], []
        for (resource, wanted), decisions in zip(asks, decide(principal, asks)):
            if not wanted:
                continue
            shared = resource.get("shared", False)
            own = not shared and resource["team"] == principal["team"]
            row = (principal["team"], principal["kind"], resource["team"] if shared or own else OTHER_TEAMS, resource["kind"])
            if row not in grid:
                others = len(owners_of_kind.get(resource["kind"], set()) - set([principal["team"]]))
                grid[row] = {"allowed": 0, "denied": 0, "teams": 1 if shared or own else others}
            counts["cells"] += len(wanted)
            if shared or not own:
                counts["shared_cells" if shared else "cross_team_cells"] += len(wanted)
            # A decider may leave implicit denials out: only an allowed action can leak, only a needed one be a gap.
            allowed = sum(1 for decision in decisions.values() if decision == iam_evaluation.ALLOWED)
            grid[row]["allowed"] += allowed
            grid[row]["denied"] += len(wanted) - allowed
            if not (keep_cells or allowed or own):
                continue
            for action in wanted:
                decision = _decision(decisions, action)
                leak = decision == iam_evaluation.ALLOWED and (action not in permitted.get(resource["kind"], []) if shared else not own)
                gap = own and decision != iam_evaluation.ALLOWED and action in needed.get(resource["kind"], [])
                if not (keep_cells or leak or gap):
                    continue
                cell = {
                    "team": principal["team"],
                    "principal": principal["kind"],
                    "principal_arn": principal["arn"],
                    "owner": resource["team"],
                    "resource_kind": resource["kind"],
                    "resource": resource["arn"],
                    "action": action,
                    "decision": decision,
                }
                if keep_cells:
                    cells.append(cell)
                if leak:
                    leaks.append(cell)
                elif gap:
                    gaps.append(cell)
        return grid, counts, cells, leaks, gaps

    # Each principal's decisions are independent of the others': a few principals are asked at once.
    grid, counts, cells, leaks, gaps = {}, {"cells": 0, "cross_team_cells": 0, "shared_cells": 0}, [], [], []
    for their_grid, their_counts, their_cells, their_leaks, their_gaps in each(tallied, principals):
        for row, tally in their_grid.items():
            merged = grid.setdefault(row, {"allowed": 0, "denied": 0, "teams": tally["teams"]})
            merged["allowed"] += tally["allowed"]
            merged["denied"] += tally["denied"]
        for key, value in their_counts.items():
            counts[key] += value
        cells.extend(their_cells)
        leaks.extend(their_leaks)
        gaps.extend(their_gaps)
    summary = dict(
        counts,
        leaks=len(leaks),
        gaps=len(gaps),
        principals=len(principals),
        resources=len(resources),
        shared_resources=sum(1 for r in resources if r.get("shared")),
    )
    return {"cells": cells, "grid": grid, "leaks": leaks, "gaps": gaps, "summary": summary}


# --- IAM Access Analyzer ----------------------------------------------------------------------------

# The kinds whose isolation is in the policy's Resource element (a team's prefix, its roles' ARNs). Others are
# isolated by a tag condition or the s3:prefix condition of a shared bucket's listing, and Access Analyzer counts
# a condition as met by some request: it would report them all ("CheckAccessNotGranted", IAM Access Analyzer API).
ANALYZED_KINDS = ("s3_objects", "role")
ANALYZER_LIMIT = 100  # actions and resources per check (botocore: Access.actions, Access.resources max 100)


class AccountRoles:
    """The account's roles as IAM holds them, read at once (``iam.role_details``, GetAccountAuthorizationDetails), and the
    documents of the managed policies they name, each read once however many roles name it."""

    def __init__(self, iam):
        self.iam = iam
        self.by_name = dict((role["RoleName"], role) for role in iam_calls.role_details(iam, Filter=["Role"]))
        self._documents = {}

    def get(self, name):
        return self.by_name.get(name)

    def _role(self, role_arn):
        role = self.by_name.get(role_arn.rsplit("/", 1)[-1])
        if role is None or role["Arn"] != role_arn:
            raise HyperPodError("The role %s went away while its isolation was verified: run again" % role_arn)
        return role

    def _managed_policy_document(self, policy_arn):
        if policy_arn not in self._documents:
            version = iam_calls.get_policy(self.iam, PolicyArn=policy_arn)["DefaultVersionId"]
            self._documents[policy_arn] = iam_evaluation.load(iam_calls.get_policy_version(self.iam, PolicyArn=policy_arn, VersionId=version)["Document"])
        return self._documents[policy_arn]

    def policy_documents(self, role_arn):
        """[(policy name or ARN, document)] of a role: its inline and its attached managed policies."""
        role = self._role(role_arn)
        found = [(inline["PolicyName"], iam_evaluation.load(inline["PolicyDocument"])) for inline in role.get("RolePolicyList") or []]
        found.extend((attached["PolicyArn"], self._managed_policy_document(attached["PolicyArn"])) for attached in role.get("AttachedManagedPolicies") or [])
        return found

    def evaluation_inputs(self, role_arn, documents):
        """What IAM evaluates for a role besides its policies ``documents`` (``policy_documents``), as ``local_decider``
        takes it: {"identity", "boundary" (the permissions boundary's document), "role_arn", "tags" (aws:PrincipalTag)}."""
        role = self._role(role_arn)
        boundary = (role.get("PermissionsBoundary") or {}).get("PermissionsBoundaryArn")
        return {
            "identity": documents,
            "boundary": self._managed_policy_document(boundary) if boundary else None,
            "role_arn": role["Arn"],
            "tags": dict((t["Key"], t["Value"]) for t in role.get("Tags") or []),
        }


def access_not_granted(analyzer, documents, principals, resources, actions=None, memory=None):
    """IAM Access Analyzer's CheckAccessNotGranted on each team principal's policies: none may grant another team's
    ANALYZED_KINDS actions on that team's resources of those kinds.

    ``documents``: principal id -> [(policy name, document)]. Returns {"checks": n, "findings": [...]}: one finding per
    policy that Access Analyzer says may grant (result FAIL), naming the owner and the statements it points at. A check
    asks about every other team's resources at once (up to ANALYZER_LIMIT), since it fails when the policy may grant any
    of them; only a check that fails is asked again owner by owner, to name the owners. A check that passed in an
    earlier run (``memory``, ``Memory``) is not asked again; ``checks`` counts the checks asked.
    """
    actions = actions or actions_by_kind()
    asked, counting = [0], threading.Lock()

    def check(document, kind_actions, arns):
        access = {"actions": kind_actions, "resources": arns}
        # A pass depends on the document and the access asked alone: the same question is not asked twice.
        key = memory.key("accessanalyzer", document, access) if memory is not None else None
        if key is not None and memory.recall("accessanalyzer", key):
            return {"result": "PASS"}
        with counting:
            asked[0] += 1
        answer = analyzer.check_access_not_granted(policyDocument=json.dumps(document), access=[access], policyType="IDENTITY_POLICY")
        if answer["result"] == "PASS" and memory is not None:
            memory.prove(key)
        return answer

    def analyzed(principal):
        findings = []
        for kind in ANALYZED_KINDS:
            owned = sorted((r["team"], r["arn"]) for r in resources if not r.get("shared") and r["team"] != principal["team"] and r["kind"] == kind)
            for policy_name, document in documents.get(principal["id"], []):
                for first in range(0, len(owned), ANALYZER_LIMIT):
                    batch = owned[first : first + ANALYZER_LIMIT]
                    for start in range(0, len(actions[kind]), ANALYZER_LIMIT):
                        kind_actions = actions[kind][start : start + ANALYZER_LIMIT]
                        if check(document, kind_actions, [arn for unused_owner, arn in batch])["result"] == "PASS":
                            continue
                        for owner in sorted(set(owner for owner, unused_arn in batch)):
                            answer = check(document, kind_actions, [arn for their_owner, arn in batch if their_owner == owner])
                            if answer["result"] != "PASS":
                                findings.append(
                                    {
                                        "team": principal["team"],
                                        "principal": principal["kind"],
                                        "principal_arn": principal["arn"],
                                        "policy": policy_name,
                                        "owner": owner,
                                        "resource_kind": kind,
                                        "statements": [r.get("statementId") or r.get("statementIndex") for r in answer.get("reasons", [])],
                                    }
                                )
        return findings

    # Each principal's checks are independent of the others': a few principals are checked at once.
    done = each(analyzed, principals)
    return {"checks": asked[0], "findings": [f for found in done for f in found]}


def finding_lines(found):
    """One sentence per Access Analyzer finding."""
    return [
        "Access Analyzer: %s's %s policy %s may grant access to %s's %s (statements %s)"
        % (f["team"], f["principal"], f["policy"], f["owner"], f["resource_kind"], ", ".join(str(s) for s in f["statements"]))
        for f in found["findings"]
    ]


def table(result):
    """team x principal x owner x resource kind -> allowed and denied cells, the other teams' resources in one row
    (owner OTHER_TEAMS, ``teams`` of them): the matrix at a glance."""
    return [
        dict(team=team, principal=principal, owner=owner, resource_kind=kind, **counts)
        for (team, principal, owner, kind), counts in sorted(result["grid"].items())
    ]


def _row(cell):
    owner = cell["owner"] if cell["owner"] in (SHARED_OWNER, cell["team"]) else OTHER_TEAMS
    return (cell["team"], cell["principal"], owner, cell["resource_kind"])


def _leaked_by_row(result):
    """row -> the leaked cells' "owner: action" (the action alone on a shared resource)."""
    found = {}
    for cell in result["leaks"]:
        text = cell["action"] if cell["owner"] == SHARED_OWNER else "%s: %s" % (cell["owner"], cell["action"])
        found.setdefault(_row(cell), [])
        if text not in found[_row(cell)]:
            found[_row(cell)].append(text)
    return found


def _few(texts, limit):
    more = len(texts) - limit
    return ", ".join(texts[:limit]) + (", and %d more" % more if more > 0 else "")


def render_html(result, title="Team isolation"):
    """A page people can look at: one row per team principal x owner x resource kind, leaks first."""
    leaks = _leaked_by_row(result)
    out = [
        "<!doctype html><html><head><meta charset='utf-8'><title>%s</title>" % html.escape(title),
        "<style>body{font-family:sans-serif}td,th{padding:2px 8px;border-bottom:1px solid #ddd}.leak{background:#fbb}.own{color:#555}</style></head><body>",
        "<h1>%s</h1>" % html.escape(title),
        (
            "<p>%(cells)d cells (%(cross_team_cells)d across teams, %(shared_cells)d on shared resources); "
            "%(leaks)d cross-team allows; %(gaps)d denials of what a team needs.</p>"
        )
        % result["summary"],
        "<table><tr><th>team</th><th>principal</th><th>resources of</th><th>resource</th><th>allowed</th><th>denied</th><th>cross-team allows</th></tr>",
    ]
    for row in table(result):
        key = (row["team"], row["principal"], row["owner"], row["resource_kind"])
        css = "leak" if key in leaks else ("own" if row["team"] == row["owner"] else "")
        owner = "the %d other teams" % row["teams"] if row["owner"] == OTHER_TEAMS else row["owner"]
        out.append(
            "<tr class='%s'><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%s</td></tr>"
            % (
                css,
                html.escape(row["team"]),
                row["principal"],
                html.escape(owner),
                row["resource_kind"],
                row["allowed"],
                row["denied"],
                html.escape(_few(leaks.get(key, []), 50)),
            )
        )
    out.append("</table></body></html>")
    return "\n".join(out)


# --- a live account -------------------------------------------------------------------------------


def discover(context, roles, teams, shared, prefix=naming.DEFAULT_PREFIX, tag_keys=None, pod_identity_roles=None, grafana_workspace_id=None):
    """(principals, resources) of ``teams`` in the account, from ``shared`` (shared_info's hyperpod_shared) and reads.

    The execution and Pod Identity roles (``<prefix>-<team>-pods``) are found in ``roles`` (``AccountRoles``).
    Reads: the account's ListUserProfiles/ListSpaces/ListApps, one ListComputeQuotas,
    DescribeAccessEntry per permission set role. What does not exist is left out.
    The shared resources (``shared_resources``) come from ``shared`` and ``grafana_workspace_id`` without a read.
    """
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import access_entry, team_namespace
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import sagemaker as sm

    account_id, region = shared["account_id"], shared.get("region") or context.region
    sagemaker = context.client("sagemaker")
    listed = sm.list_compute_quotas(sagemaker, ClusterArn=shared["cluster_arn"]) if shared.get("cluster_arn") else []
    quotas = dict((q["Name"], q["ComputeQuotaId"]) for q in listed)
    # Every domain's user profiles, spaces and apps in a few pages of the account's, not three listings per team.
    in_domains = {}
    if shared.get("domain_ids"):
        for key, listing, name in (("user_profiles", sm.list_user_profiles, "UserProfileName"), ("spaces", sm.list_spaces, "SpaceName")):
            for item in listing(sagemaker):
                in_domains.setdefault(item["DomainId"], {}).setdefault(key, []).append(item[name])
        for app in sm.list_apps(sagemaker):
            owner = app.get("UserProfileName") or app.get("SpaceName") or ""
            in_domains.setdefault(app["DomainId"], {}).setdefault("apps", []).append((owner, app["AppType"], app["AppName"]))

    def of_team(team):
        principals = []
        set_name = naming.permission_set_name(team, prefix)
        sso_role = (shared.get("sso_role_arns") or {}).get(set_name)
        found = {
            "bucket": shared.get("data_bucket"),
            "budget_name": naming.budget_name(team, prefix),
            "compute_quota_id": quotas.get(naming.quota_name(team, prefix)),
            "permission_set_arn": ((shared.get("permission_sets") or {}).get(set_name) or {}).get("permission_set_arn"),
            "roles": [],
        }
        if sso_role:
            principals.append({"id": sso_role, "team": team, "kind": "permission_set", "arn": sso_role})
            if shared.get("eks_cluster_name"):
                entry = access_entry.describe_access_entry(context.client("eks"), shared["eks_cluster_name"], sso_role)
                found["access_entry_arn"] = (entry or {}).get("accessEntryArn")
        role = roles.get(naming.studio_execution_role_name(team, prefix))
        if role:
            principals.append({"id": role["Arn"], "team": team, "kind": "execution_role", "arn": role["Arn"]})
            found["roles"].append(role["Arn"])
        # The Pod Identity role the namespace layer makes (team_namespace.pod_role_name), unless given.
        pod_role = (pod_identity_roles or {}).get(team)
        if not pod_role:
            pod_role = (roles.get(team_namespace.pod_role_name(team, prefix)) or {}).get("Arn")
        if pod_role:
            principals.append({"id": pod_role, "team": team, "kind": "pod_identity", "arn": pod_role})
            found["roles"].append(pod_role)
        domain_id = (shared.get("domain_ids") or {}).get(naming.domain_name(team, prefix))
        if domain_id:
            found["domain_id"] = domain_id
            found.update(in_domains.get(domain_id, {}))
        return principals, team_resources(team, account_id, region, found, tag_keys)

    # Each team's reads are independent of the others': a few teams are read at once.
    read = each(of_team, teams)
    principals = [principal for found, unused in read for principal in found]
    resources = [resource for unused, found in read for resource in found]
    common = {
        "bucket": shared.get("data_bucket"),
        "eks_cluster_arn": shared.get("eks_cluster_arn"),
        "hyperpod_cluster_arn": shared.get("cluster_arn"),
        "fsx_file_system_id": shared.get("fsx_file_system_id"),
        "grafana_workspace_id": grafana_workspace_id,
        "identity_center_instance_arn": shared.get("identity_center_instance_arn"),
        "identity_store_id": shared.get("identity_store_id"),
        "group_ids": list((shared.get("identity_center_group_ids") or {}).values()),
    }
    common["s3_places"] = shared_locations(shared.get("data_bucket"), teams, *_bucket_folders(context, shared))
    resources.extend(shared_resources(common, account_id, region))
    return principals, resources


def _bucket_folders(context, shared):
    """(the data bucket's top-level folders, the platform prefix's folders, the cluster's instance groups' LifeCycleConfig):
    ``shared_locations``' reads, two ListObjectsV2 (with Delimiter "/") and a DescribeCluster."""
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import sagemaker as sm

    bucket, found = shared.get("data_bucket"), [[], [], []]
    if bucket:
        s3 = context.client("s3")
        found[0] = [folder["Prefix"] for folder in s3_calls.list_folders(s3, Bucket=bucket, Delimiter="/")]
        found[1] = [folder["Prefix"] for folder in s3_calls.list_folders(s3, Bucket=bucket, Delimiter="/", Prefix=naming.PLATFORM_PREFIX)]
    if shared.get("cluster_arn"):
        description = sm.describe_cluster(context.client("sagemaker"), ClusterName=shared["cluster_arn"]) or {}
        found[2] = [group.get("LifeCycleConfig") or {} for group in description.get("InstanceGroups") or []]
    return found


def matrix_lines(result):
    """The matrix as text, one line per team principal x owner (the other teams together) x resource kind."""
    lines = ["%-12s %-15s %-12s %-15s %s" % ("team", "principal", "owner", "resource", "decision")]
    leaked = _leaked_by_row(result)
    gapped = set(_row(c) for c in result["gaps"])
    for row in table(result):
        key = (row["team"], row["principal"], row["owner"], row["resource_kind"])
        if key in leaked:
            verdict = "CROSS-TEAM ALLOW (%d of %d actions: %s)" % (row["allowed"], row["allowed"] + row["denied"], _few(leaked[key], 5))
        elif key in gapped:
            verdict = "NEEDED ACTION DENIED"
        elif row["owner"] == SHARED_OWNER:
            verdict = "shared: %d allowed (SHARED_ALLOWED), %d denied" % (row["allowed"], row["denied"])
        elif row["team"] == row["owner"]:
            verdict = "own: %d allowed, %d denied" % (row["allowed"], row["denied"])
        else:
            verdict = "denied on %d other teams (%d actions)" % (row["teams"], row["denied"])
        lines.append("%-12s %-15s %-12s %-15s %s" % (row["team"], row["principal"], row["owner"], row["resource_kind"], verdict))
    return lines


def problem_lines(result, limit=50):
    """One sentence per leak and gap (the first ``limit``), for the failure message."""
    lines = []
    for cell in result["leaks"]:
        whose = "the teams' shared" if cell["owner"] == SHARED_OWNER else "%s's" % cell["owner"]
        lines.append(
            "%s's %s (%s) is allowed %s on %s %s %s"
            % (cell["team"], cell["principal"], cell["principal_arn"], cell["action"], whose, cell["resource_kind"], cell["resource"])
        )
    for cell in result["gaps"]:
        lines.append(
            "%s's %s (%s) is denied %s on its own %s %s"
            % (cell["team"], cell["principal"], cell["principal_arn"], cell["action"], cell["resource_kind"], cell["resource"])
        )
    more = len(lines) - limit
    return lines[:limit] + (["... and %d more" % more] if more > 0 else [])
