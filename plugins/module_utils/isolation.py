# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The isolation matrix: every team principal x every team's resources x every action that applies.

A *resource* is one of a team's things with the ARN and the condition keys AWS evaluates for it
(``aws:ResourceTag/<team key>`` from its tags, ``s3:prefix`` for a listing). The actions that apply to
a resource kind come from botocore's service models: every operation whose input names that kind of
resource (``DomainId`` without ``UserProfileName``/``SpaceName``/``AppName`` for a domain, ``Key`` for an
S3 object, ``FileSystemId`` for the domain's home EFS file system, ``ComputeQuotaId`` for a quota, ``BudgetName``,
``PermissionSetArn``, ``principalArn`` for an access entry, ``RoleName`` for a role, ``ResourceArn`` for SageMaker's
tagging calls), turned into the IAM action AWS authorizes (``S3_ACTIONS``, the Budgets actions), plus the actions that
are no API call (``iam:PassRole``, versioned S3 actions, an NFS client's ``elasticfilesystem:ClientMount``).

The resources the teams *share* (``SHARED_KINDS``: the data bucket itself, the EKS cluster, its add-ons and Pod
Identity associations, the HyperPod cluster and its scheduler configuration, the FSx file system and its data
repository associations, the Grafana and Prometheus workspaces, the Identity Center instance and its identity store,
the roles the cluster runs as, the cluster's access entries and the Identity Center roles that are no team's) are
kinds too, one resource each whatever the number of teams (``shared_resources``), owned by ``SHARED_OWNER``: every
action the models list for them is expected denied to every team principal, but the few of ``SHARED_ALLOWED``. So
are the objects and listings of the data bucket's places no present team owns and of the cluster's lifecycle folder
(``shared_locations``: the bucket's root, the platform's prefix, a retired team's, the scripts every node runs as
root).

``matrix(principals, resources, decide)`` asks ``decide(principal, [(resource, actions)])`` for decisions,
once per principal (the local evaluator, or IAM's SimulatePrincipalPolicy on a live account, batched over
the resources that share actions and condition keys) and classifies each cell:
an allow on another team's resource, or on a shared resource outside ``SHARED_ALLOWED``, is a *leak*; a denial
of an action the team needs on its own resource (``NEEDED``) is a *gap*.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import hashlib
import inspect
import json
import threading
import time

from ansible_collections.hyperpod.tenancy.plugins.module_utils import access_analyzer as analyzer_calls
from ansible_collections.hyperpod.tenancy.plugins.module_utils import iam as iam_calls
from ansible_collections.hyperpod.tenancy.plugins.module_utils import cluster, execution_role, iam_evaluation, iam_sets, naming, team_policy
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
S3_VERSIONED = (
    "s3:GetObject",
    "s3:DeleteObject",
    "s3:GetObjectTagging",
    "s3:PutObjectTagging",
    "s3:DeleteObjectTagging",
    "s3:GetObjectAcl",
    "s3:PutObjectAcl",
    "s3:GetObjectAttributes",
    "s3:GetObjectTorrent",
)
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
        # hyp set-cluster-context reads the caller's own role (its ARN with the path) and that role's access entry, and
        # stops when either is refused (team_policy). Both are the platform's (PLATFORM_OWNED): a needed read of them is
        # the only allow on them that is no leak.
        "access_entry": list(team_policy.OWN_ACCESS_ENTRY_ACTIONS),
        "sso_role": list(team_policy.OWN_ROLE_ACTIONS),
    },
    "execution_role": {
        "s3_objects": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
        "s3_listing": ["s3:ListBucket"],
        # In an IAM Identity Center domain Studio's portal acts as the execution role: a member's space and apps are made
        # and used with its permissions (execution_role.studio_policy), in the team's own domain only.
        "domain": list(execution_role.STUDIO_READ_ACTIONS["domain"]),
        "user_profile": list(execution_role.STUDIO_READ_ACTIONS["user_profile"]),
        "space": list(execution_role.STUDIO_SPACE_ACTIONS),
        "app": list(execution_role.STUDIO_APP_ACTIONS),
    },
    # The team's pods: its data, nothing of Studio.
    "pod_identity": {
        "s3_objects": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
        "s3_listing": ["s3:ListBucket"],
    },
}

# --- shared resources -----------------------------------------------------------------------------
#
# What every team uses and no team owns: the data bucket itself (its policy, ACL, ownership, encryption,
# lifecycle, replication, ...), the EKS cluster (access entries, Pod Identity associations, add-ons, its
# configuration), the HyperPod cluster (its instance groups, software, nodes, scheduler configuration, new compute
# quotas) and the roles it runs as, the FSx file system (data repository tasks and associations, backups, updates), the
# Grafana workspace (permissions, API keys, service accounts), the Prometheus workspace (every team's use), the Identity
# Center instance and its identity store (permission sets, account assignments, users, groups and their memberships), and
# the data bucket's objects no team owns and their names (its root, the platform's prefix, the lifecycle scripts, the
# prefixes of teams no longer present). A team that may change one of them reaches every other team, so every action
# botocore's models list for them is expected *denied* to every team principal, but for the few in SHARED_ALLOWED.
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
        # Studio's HyperPod integration (execution_role.cluster_policy): the cluster, its Kubernetes API (reads, and the
        # writes Studio makes in the team's namespace: eks:MutateViaKubernetesApi, which the access entry holds to that
        # namespace), its add-ons.
        "eks_cluster": ["eks:AccessKubernetesApi", "eks:DescribeCluster", "eks:MutateViaKubernetesApi"],
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
    # The Prometheus workspace the usage reports and the chargeback read: every team's use is in it. Its operations but
    # those on a rule groups namespace or an anomaly detector by name, which AMP authorizes on that sub-resource's ARN
    # (Describe/Put/DeleteRuleGroupsNamespace on rulegroupsnamespace/<workspace id>/<name>, "Understanding IAM permissions
    # needed for using rules", AMP User Guide; creating one, or listing them, is on the workspace).
    (
        "amp_workspace",
        "amp",
        "aps",
        lambda n, m: "workspaceId" in m and (n.startswith(("Create", "List")) or not m & set(("name", "anomalyDetectorId"))),
        ("TagResource", "UntagResource", "ListTagsForResource"),
    ),
    # A rule groups namespace of it: its recording rules write series into the workspace, a team's usage among them.
    (
        "amp_rule_groups_namespace",
        "amp",
        "aps",
        lambda n, m: "name" in m and "workspaceId" in m and not n.startswith(("Create", "List")),
        ("TagResource", "UntagResource", "ListTagsForResource"),
    ),
    # An anomaly detector of it (Describe/Put/DeleteAnomalyDetector name workspaceId and anomalyDetectorId): it reads every
    # team's series and alerts on them. Its ARN is anomalydetector/<workspace id>/<id> (botocore's AnomalyDetectorArn,
    # "arn:aws[-a-z]*:aps:[-a-z0-9]+:[0-9]{12}:anomalydetector/ws-.+/ad-.+"; the arn of AnomalyDetectorDescription, AMP
    # API Reference); creating one, or listing them, is on the workspace.
    (
        "amp_anomaly_detector",
        "amp",
        "aps",
        lambda n, m: "anomalyDetectorId" in m and "workspaceId" in m,
        ("TagResource", "UntagResource", "ListTagsForResource"),
    ),
    ("identity_center", "sso-admin", "sso", lambda n, m: "InstanceArn" in m, ()),
    ("identity_store", "identitystore", "identitystore", lambda n, m: "IdentityStoreId" in m, ()),
    # The teams' Identity Center groups: joining one is joining its team (its permission set, its Studio domain).
    # A team manages no group, its own included, so all of them are one kind, asked together.
    ("identity_center_group", "identitystore", "identitystore", lambda n, m: "GroupId" in m, ()),
    # The roles the platform's HyperPod cluster runs as (each instance group's ExecutionRole, the autoscaling ClusterRole):
    # a team that may pass one, or change its policies or trust, acts as the nodes every team's pods run on. Every action
    # on a role, as on a team's (ROLE_ACTIONS), one resource per role.
    ("platform_role", "iam", "iam", lambda n, m: "RoleName" in m, ()),
    # The shared EKS cluster's access entries that are no team's (the node role's, the automation's, the admins'): EKS
    # authorizes an entry's calls on the entry's ARN (resource type access-entry, Service Authorization Reference for
    # Amazon EKS), not on the cluster's, so eks_cluster does not stand for them. Deleting the node role's stops every
    # team's work; describing the admins' maps who may do what. Every action of a team's entry (access_entry).
    ("platform_access_entry", "eks", "eks", lambda n, m: "principalArn" in m, ("TagResource", "UntagResource", "ListTagsForResource")),
    # The roles under Identity Center's path that are no team's permission set role (the platform's permission sets'):
    # every action of a team's (sso_role), as for another team's. With a single team nothing else stands for them.
    ("platform_sso_role", "iam", "iam", lambda n, m: "RoleName" in m, ()),
    # The data bucket's objects no team owns (shared_locations): the platform's prefix (naming.PLATFORM_PREFIX: the
    # lifecycle scripts, the ownership marks, the ledger) and its folders, every other top-level prefix that is no present
    # team's (a team offboarded with its data kept, anything put there by hand), the bucket's root, and the cluster's
    # lifecycle scripts wherever they are: every object action, as on a team's objects ...
    ("shared_objects", "s3", "s3", lambda n, m: "Key" in m or n == "DeleteObjects", ()),
    # ... and the listing of each of those prefixes (s3:prefix).
    ("shared_listing", "s3", "s3", lambda n, m: n in S3_LISTINGS, ()),
)
# Actions that are no API call of the kind's service, by shared kind. A shell on a HyperPod node is an SSM session whose
# target is the node ("sagemaker-cluster:<cluster id>_<group>-<instance id>"); the IAM resource of ssm:StartSession for it
# is taken to be the cluster's ARN, as the HyperPod developer guide's access policy names it (an assumption: the
# Service Authorization Reference lists no HyperPod node resource). A statement on "*" reaches it either way.
#
# The Prometheus workspace's HTTP APIs are no botocore operations: querying it (aps:QueryMetrics, GetSeries, GetLabels,
# GetMetricMetadata, the AWS managed policy AmazonPrometheusQueryAccess) reads every team's use, aps:RemoteWrite
# (AmazonPrometheusRemoteWriteAccess) forges it, and the ruler's and alert manager's ("Understanding IAM permissions needed
# for working with alert manager", AMP User Guide) read the rules or silence the alerts. They are taken to be authorized on
# the workspace's ARN: an assumption, as the AMP User Guide's policies name them on "*" (a statement on "*" reaches it
# either way).
AMP_HTTP_ACTIONS = (
    "aps:QueryMetrics",
    "aps:GetSeries",
    "aps:GetLabels",
    "aps:GetMetricMetadata",
    "aps:RemoteWrite",
    "aps:ListRules",
    "aps:ListAlerts",
    "aps:ListAlertManagerAlerts",
    "aps:ListAlertManagerAlertGroups",
    "aps:ListAlertManagerReceivers",
    "aps:ListAlertManagerSilences",
    "aps:GetAlertManagerStatus",
    "aps:GetAlertManagerSilence",
    "aps:DescribeAlertManagerSilence",
    "aps:PutAlertManagerSilences",
    "aps:DeleteAlertManagerSilence",
    "aps:CreateAlertManagerAlerts",
)
# What acts on a role besides the IAM calls naming it (RoleName): passing it to a service, assuming it, tagging the session.
ROLE_ACTIONS = ("iam:PassRole", "sts:AssumeRole", "sts:TagSession")
SHARED_EXTRA_ACTIONS = {
    # The Kubernetes API through EKS: reads, and writes (eks:MutateViaKubernetesApi, "Grant AWS services write access to
    # Kubernetes APIs", EKS User Guide; resource cluster*, Service Authorization Reference for Amazon EKS).
    "eks_cluster": ["eks:AccessKubernetesApi", "eks:MutateViaKubernetesApi"],
    "hyperpod_cluster": ["ssm:StartSession"],
    "amp_workspace": list(AMP_HTTP_ACTIONS),
    "platform_role": list(ROLE_ACTIONS),
    "platform_sso_role": list(ROLE_ACTIONS),
}
# A team's Studio home EFS file system (the domain's HomeEfsFileSystemId), as "Actions, resources, and condition keys for Amazon
# Elastic File System" (Service Authorization Reference) authorizes it: every EFS operation naming the file system
# (FileSystemId, a replication's SourceFileSystemId, the tagging calls' ResourceId), and the actions that are no API call of
# it or name it otherwise:
# - an NFS client's read, write and root access (elasticfilesystem:ClientMount, ClientWrite, ClientRootAccess, "Using IAM
#   to control access to file systems", EFS User Guide). They bind only a client that mounts with IAM authorization under
#   a file system policy that asks for it: under the default policy any client that reaches a mount target mounts it, and
#   the network is the boundary (docs/isolation.md, "Not covered");
# - the operations on one of its mount targets, which name only the MountTargetId but are authorized "on the mount
#   target's file system" (API_DeleteMountTarget, API_ModifyMountTargetSecurityGroups,
#   API_DescribeMountTargetSecurityGroups, EFS API Reference): breaking every mount of it, or letting another network in;
# - elasticfilesystem:Backup and Restore, what AWS Backup's role is given on the file system ("Backing up EFS file
#   systems", EFS User Guide): asked of the team principals as an over-approximation, since the caller's way to a copy is
#   backup:StartBackupJob and iam:PassRole of a backup role, which the matrix does not ask (docs/isolation.md, "Not covered").
EFS_ACTIONS = (
    "elasticfilesystem:ClientMount",
    "elasticfilesystem:ClientWrite",
    "elasticfilesystem:ClientRootAccess",
    "elasticfilesystem:DeleteMountTarget",
    "elasticfilesystem:ModifyMountTargetSecurityGroups",
    "elasticfilesystem:DescribeMountTargetSecurityGroups",
    "elasticfilesystem:Backup",
    "elasticfilesystem:Restore",
)
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
    # Reading the models costs about a CPU-second; they do not change within a process. Each caller gets lists of its own.
    return dict((kind, list(actions)) for kind, actions in _actions_by_kind().items())


@functools.lru_cache(maxsize=1)
def _actions_by_kind():
    """``actions_by_kind``'s answer, computed once: resource kind -> its sorted actions, as a tuple."""
    kinds = dict(
        (k, set())
        for k in (
            "s3_objects",
            "s3_listing",
            "domain",
            "user_profile",
            "space",
            "app",
            "home_efs",
            "compute_quota",
            "budget",
            "access_entry",
            "permission_set",
            "role",
            "sso_role",
        )
    )
    _add_s3_actions(kinds)
    _add_sagemaker_actions(kinds)
    _add_efs_actions(kinds)
    _add_budget_actions(kinds)
    _add_entry_and_permission_set_actions(kinds)
    _add_role_actions(kinds)
    _add_shared_actions(kinds)
    return dict((k, tuple(sorted(v))) for k, v in kinds.items())


def _add_s3_actions(kinds):
    """A team's objects' and its prefix's listing's S3 actions into ``kinds``."""
    for name, members in _operations("s3"):
        if "Key" in members or name == "DeleteObjects":
            action = s3_action(name)
            kinds["s3_objects"].add(action)
            if action in S3_VERSIONED:
                kinds["s3_objects"].add(action.replace("Object", "ObjectVersion", 1))
        elif name in S3_LISTINGS:
            kinds["s3_listing"].add(s3_action(name))


def _add_sagemaker_actions(kinds):
    """A team's SageMaker actions into ``kinds``: its domain's, user profiles', spaces', apps' and compute quota's."""
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
        elif ("SpaceName" in members and "DomainId" in members) or name == "StartSession":
            # StartSession names the space by its ARN (ResourceIdentifier): a remote session as the space's role.
            kinds["space"].add(action)
        elif "DomainId" in members:
            kinds["domain"].add(action)
        if "ComputeQuotaId" in members:
            kinds["compute_quota"].add(action)


def _add_efs_actions(kinds):
    """A team's Studio home EFS file system's actions (EFS_ACTIONS among them) into ``kinds``."""
    for name, members in _operations("efs"):
        if members & set(("FileSystemId", "SourceFileSystemId")) or name in ("TagResource", "UntagResource", "ListTagsForResource"):
            kinds["home_efs"].add("elasticfilesystem:" + name)
    kinds["home_efs"].update(EFS_ACTIONS)


def _add_budget_actions(kinds):
    """A team's budget's actions into ``kinds``."""
    for name, members in _operations("budgets"):
        if "BudgetName" in members:
            # Budget actions have IAM actions of their own; the rest is ViewBudget or ModifyBudget ("Actions defined by
            # AWS Budget Service", Service Authorization Reference).
            if "BudgetAction" in name:
                kinds["budget"].add("budgets:" + name)
            else:
                kinds["budget"].add("budgets:ViewBudget" if name.startswith("Describe") else "budgets:ModifyBudget")


def _add_entry_and_permission_set_actions(kinds):
    """A team's access entry's and permission set's actions into ``kinds``, and the tagging of them and of its budget."""
    for name, members in _operations("eks"):
        if "principalArn" in members:
            kinds["access_entry"].add("eks:" + name)
    for name, members in _operations("sso-admin"):
        if "PermissionSetArn" in members:
            kinds["permission_set"].add("sso:" + name)
    # Tagging names the resource by its ARN, not by the member the loops look for, and the tags are the collection's
    # ownership marks: untagging a team's entry, permission set or budget refuses that team's next run (m4's freeze).
    for kind, service in (("access_entry", "eks"), ("permission_set", "sso"), ("budget", "budgets")):
        kinds[kind].update("%s:%s" % (service, action) for action in ("TagResource", "UntagResource", "ListTagsForResource"))


def _add_role_actions(kinds):
    """A team's roles' actions (ROLE_ACTIONS among them) into ``kinds``, its permission set role's the same."""
    for name, members in _operations("iam"):
        if "RoleName" in members:
            kinds["role"].add("iam:" + name)
    kinds["role"].update(ROLE_ACTIONS)
    # The team's permission set role (Identity Center's, AWSReservedSSO_<permission set>_<suffix>): a role like the others.
    kinds["sso_role"].update(kinds["role"])


def _add_shared_actions(kinds):
    """The actions of each of SHARED_KINDS (SHARED_EXTRA_ACTIONS among them) into ``kinds``, each service's model read once."""
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
    ``prometheus_workspace_ids`` (each an ID, in ``region`` and ``account_id``, or a workspace's ARN, wherever it is),
    ``identity_center_instance_arn``, ``identity_store_id``, ``group_ids`` (the teams' Identity
    Center group ids), ``platform_roles`` (ARNs), ``s3_places`` (``shared_locations``), ``teams`` (the present teams) and
    ``name_prefix`` (their names' prefix: their permission set roles and access entries are left out of the platform's);
    missing ones are skipped.
    Sub-resources (an add-on, a Pod Identity association, a scheduler configuration, a data repository association, a rule
    groups namespace) are probes under their parent, named PROBE. No read. One resource per kind, but a group per team, all
    asked in one call per principal (up to 100 groups), a role per platform role, an object per key of ``s3_places``, asked
    together too, and a listing per place of them (its own ``s3:prefix``, its own call).
    """
    found = dict((k, v) for k, v in found.items() if v)
    resources = _shared_s3_resources(found, partition)

    def add(kind, arn, context=None, requests=None):
        resources.append(_shared_resource(kind, arn, context, requests))

    if "eks_cluster_arn" in found:
        arn = found["eks_cluster_arn"]
        base, name = arn.split(":cluster/", 1)
        add("eks_cluster", arn)
        add("eks_addon", "%s:addon/%s/%s/00000000-0000-0000-0000-000000000000" % (base, name, PROBE), requests=requests_of(["%s:addon/%s/*" % (base, name)]))
        add(
            "eks_pod_identity_association",
            "%s:podidentityassociation/%s/a-%s" % (base, name, PROBE),
            requests=requests_of(["%s:podidentityassociation/%s/*" % (base, name)]),
        )
    if "hyperpod_cluster_arn" in found:
        add("hyperpod_cluster", found["hyperpod_cluster_arn"])
        scheduler = "arn:%s:sagemaker:%s:%s:cluster-scheduler-config/" % (partition, region, account_id)
        add("cluster_scheduler_config", scheduler + PROBE, requests=requests_of([scheduler + "*"]))
    if "fsx_file_system_id" in found:
        fsx = "arn:%s:fsx:%s:%s:" % (partition, region, account_id)
        add("fsx_file_system", "%sfile-system/%s" % (fsx, found["fsx_file_system_id"]))
        association = "%sassociation/%s/" % (fsx, found["fsx_file_system_id"])
        add("fsx_association", association + "dra-" + PROBE, requests=requests_of([association + "*"]))
    if "grafana_workspace_id" in found:
        add("grafana_workspace", "arn:%s:grafana:%s:%s:/workspaces/%s" % (partition, region, account_id, found["grafana_workspace_id"]))
    for workspace in sorted(found.get("prometheus_workspace_ids", [])):
        resources.extend(_shared_prometheus_resources(workspace, account_id, region, partition))
    if "identity_center_instance_arn" in found:
        add("identity_center", found["identity_center_instance_arn"])
    if "identity_store_id" in found:
        add("identity_store", "arn:%s:identitystore::%s:identitystore/%s" % (partition, account_id, found["identity_store_id"]))
    for group_id in sorted(found.get("group_ids", [])):
        add("identity_center_group", "arn:%s:identitystore:::group/%s" % (partition, group_id))
    for role_arn in sorted(set(found.get("platform_roles", []))):
        add("platform_role", role_arn)
    resources.extend(_shared_platform_resources(found, account_id, partition))
    return resources


def _shared_resource(kind, arn, context=None, requests=None):
    """A shared resource of ``kind`` to probe at ``arn``, owned by SHARED_OWNER."""
    return {"team": SHARED_OWNER, "kind": kind, "arn": arn, "context": dict(context or {}), "shared": True, "requests": requests}


def _shared_s3_resources(found, partition):
    """``shared_resources``' data bucket (when ``found`` names it) and the objects and listing of each of its ``s3_places``."""
    resources = []
    bucket_arn = "arn:%s:s3:::%s" % (partition, found.get("bucket"))
    owned = [naming.s3_prefix(team) + "*" for team in found.get("teams", [])]
    if "bucket" in found:
        # Its s3:ListBucket is HeadBucket's, with no prefix; a listing with one is a listing kind's.
        resources.append(_shared_resource("shared_bucket", bucket_arn, requests=requests_of([bucket_arn], keys={"s3:prefix": [iam_sets.ABSENT]})))
    for bucket, prefix, keys in found.get("s3_places", []):
        place = "arn:%s:s3:::%s/%s" % (partition, bucket, prefix)
        # The bucket's root is every key no present team's prefix holds; a folder, every key under it.
        but = owned if bucket == found.get("bucket") and not prefix else ()
        objects = requests_of([place + "*"], exclude=[bucket_arn + "/" + pattern for pattern in but])
        for key in keys:
            resources.append(_shared_resource("shared_objects", place + key, requests=objects))
        # The root's listing shows the names of its keys: every s3:prefix but one under a present team's prefix (that
        # team's listing), asked on a prefix no team's folder holds.
        listed = "arn:%s:s3:::%s" % (partition, bucket)
        resources.append(_shared_resource("shared_listing", listed, {"s3:prefix": prefix or PROBE}, listing_requests(listed, prefix, but)))
    return resources


def _shared_prometheus_resources(workspace, account_id, region, partition):
    """An AMP workspace (its ID or ARN) to probe, and probes of its rule groups namespaces and anomaly detectors."""
    # arn:aws:aps:<region>:<account>:workspace/<id> (the Workspace property's pattern, AWS::APS::RuleGroupsNamespace,
    # CloudFormation User Guide): the ARN given, wherever it is, or an ID's in the cluster's region and account. A rule
    # groups namespace is rulegroupsnamespace/<workspace id>/<name> (its arn, RuleGroupsNamespaceDescription, AMP API
    # Reference), an anomaly detector anomalydetector/<workspace id>/<id> (SHARED_KINDS), both beside the workspace.
    if workspace.startswith("arn:") and ":workspace/" in workspace:
        aps, workspace_id = workspace.split(":workspace/", 1)
        aps += ":"
    else:
        aps, workspace_id = "arn:%s:aps:%s:%s:" % (partition, region, account_id), workspace
    namespaces = "%srulegroupsnamespace/%s/" % (aps, workspace_id)
    detectors = "%sanomalydetector/%s/" % (aps, workspace_id)
    return [
        _shared_resource("amp_workspace", "%sworkspace/%s" % (aps, workspace_id)),
        _shared_resource("amp_rule_groups_namespace", namespaces + PROBE, requests=requests_of([namespaces + "*"])),
        _shared_resource("amp_anomaly_detector", detectors + "ad-" + PROBE, requests=requests_of([detectors + "*"])),
    ]


def _shared_platform_resources(found, account_id, partition):
    """The platform's access entries on the EKS cluster and its Identity Center roles, but the present teams' own."""
    # What is no team's of the kinds the teams own one of (their permission set roles and access entries): each a set, the
    # present teams' own patterns (team_policy) left out, decided by the matrix over the set. Access Analyzer cannot be
    # told the exclusion and is asked the sample only (_analyzed_arns); the sample's name is no team's (no 16-character
    # suffix), so the teams' own reads of their role and entry are no finding.
    resources = []
    name_prefix = found.get("name_prefix", naming.DEFAULT_PREFIX)
    teams = found.get("teams", [])
    if "eks_cluster_arn" in found:
        arn = found["eks_cluster_arn"]
        base, name = arn.split(":cluster/", 1)
        theirs = [team_policy.own_access_entry_arn(team, account_id, arn, name_prefix) for team in teams]
        entries = requests_of(["%s:access-entry/%s/*" % (base, name)], exclude=theirs)
        resources.append(
            _shared_resource("platform_access_entry", "%s:access-entry/%s/role/%s/%s/%s" % (base, name, account_id, PROBE, PROBE), requests=entries)
        )
    if teams:
        # Relative to the present teams: with none, no principal asks it.
        sso = "arn:%s:iam::%s:role%s" % (partition, account_id, iam_calls.SSO_ROLE_PATH)
        theirs = [pattern for team in teams for pattern in team_policy.own_role_arns(team, account_id, name_prefix, partition)]
        resources.append(_shared_resource("platform_sso_role", sso + "AWSReservedSSO_" + PROBE, requests=requests_of([sso + "*"], exclude=theirs)))
    return resources


def requests_of(arns, exclude=(), keys=None):
    """A resource's set of requests, as ``iam_sets.RequestSet`` takes it: its ARN patterns less ``exclude``, and the
    condition keys the resource pins to their alternatives (``iam_sets.value``/``like``/``ABSENT``)."""
    return {"arns": list(arns), "exclude": list(exclude), "keys": dict(keys or {})}


def listing_requests(bucket_arn, prefix, but=()):
    """Every ListBucket request that shows a key under ``prefix``: with no ``s3:prefix`` (the whole bucket), with a
    prefix of ``prefix`` ("", "v", ..., "vision", which list "vision/..." too: ListObjectsV2 returns the keys that begin
    with the prefix given, Amazon S3 API Reference), or with ``prefix`` and anything after it, but the prefixes the
    patterns ``but`` match (those that show no key of the place: under a team's prefix, for the bucket's root)."""
    alternatives = [iam_sets.ABSENT] + [iam_sets.value(prefix[:n]) for n in range(len(prefix))] + [iam_sets.like(prefix + "*", but)]
    return requests_of([bucket_arn], keys={"s3:prefix": alternatives})


# --- resources ------------------------------------------------------------------------------------


def team_resources(team, account_id, region, found, tag_keys=None, partition="aws"):
    """The resources of ``team`` to probe, from what was found of them (ids AWS chose, ARNs).

    ``found``: ``bucket``, ``domain_id``, ``user_profiles``, ``spaces``, ``apps`` ([(owner, type, name)]),
    ``home_efs_file_system_id`` (the domain's), ``compute_quota_id``, ``budget_name``, ``access_entry_arn``,
    ``permission_set_arn``, ``roles`` (ARNs of the team's execution and Pod Identity roles), ``sso_role`` (the ARN of its
    permission set's role); missing entries are skipped.
    """
    keys = naming.tag_keys_with_defaults(tag_keys)
    tag_key = "aws:ResourceTag/%s" % keys["team"]
    tag = {tag_key: team}
    # SageMaker authorizes on the resource's tags: the platform tags the team's, and an untagged one may be in the domain
    # (made before the tag, or by hand), so a team's Studio requests carry the team's tag or none.
    tagged = {tag_key: [iam_sets.value(team), iam_sets.ABSENT]}
    sm = "arn:%s:sagemaker:%s:%s:" % (partition, region, account_id)
    found = dict((k, v) for k, v in found.items() if v)
    resources = []

    def add(kind, arn, context=None, patterns=None):
        requests = requests_of(patterns or [arn], keys=tagged if context else None)
        resources.append({"team": team, "kind": kind, "arn": arn, "context": dict(context or {}), "requests": requests})

    prefix = naming.s3_prefix(team)
    if "bucket" in found:
        bucket_arn = "arn:%s:s3:::%s" % (partition, found["bucket"])
        add("s3_objects", "%s/%s%s" % (bucket_arn, prefix, PROBE), patterns=["%s/%s*" % (bucket_arn, prefix)])
        resources.append(
            {"team": team, "kind": "s3_listing", "arn": bucket_arn, "context": {"s3:prefix": prefix}, "requests": listing_requests(bucket_arn, prefix)}
        )
    if "domain_id" in found:
        domain = found["domain_id"]
        add("domain", "%sdomain/%s" % (sm, domain), tag)
        # Every user profile, space and app of the domain, those made after this run too: one set each, asked of IAM on
        # the first found (or a probe name).
        apps = ["%s/%s/%s" % (owner, app_type.lower(), name) for owner, app_type, name in found.get("apps", [])]
        for kind, path, names in (("user_profile", "user-profile", found.get("user_profiles")), ("space", "space", found.get("spaces")), ("app", "app", apps)):
            add(kind, "%s%s/%s/%s" % (sm, path, domain, (names or [PROBE])[0]), tag, ["%s%s/%s/*" % (sm, path, domain)])
    if "home_efs_file_system_id" in found:
        # Every member's home directory (FileSystemArn, "arn:aws:elasticfilesystem:region:account-id:file-system/file-system-id",
        # EFS API Reference). SageMaker makes it with the domain and the platform tags it not: its tags are free.
        add("home_efs", "arn:%s:elasticfilesystem:%s:%s:file-system/%s" % (partition, region, account_id, found["home_efs_file_system_id"]))
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
    if "sso_role" in found:
        add("sso_role", found["sso_role"], tag)
    return resources


# --- the matrix -----------------------------------------------------------------------------------


# A team's resources that the platform owns and the team only uses: its roles (a policy of its own on them, a new tag for
# an ABAC statement), its access entry (an access policy of cluster scope), its permission set, its compute quota and its
# budget. An allow of any action on them is a leak though they are the team's own (but a read NEEDED names: the HyperPod
# CLI's of the permission set's own role and access entry): the team would grant itself more than the platform allows.
# They are decided over their sets, as another team's.
PLATFORM_OWNED = ("role", "sso_role", "access_entry", "permission_set", "compute_quota", "budget")

# A cell that could not be proven denied: IAM lacked a context key a statement naming the action tests, or the evaluator
# cannot read the principal's policies. It counts as allowed: reported, never passed.
UNKNOWN = "unknown"
REACHES = (iam_evaluation.ALLOWED, UNKNOWN)


def principal_requests(principal, spec, account_id):
    """The condition keys a principal pins on every request it makes, as ``iam_sets`` takes them (a dict of alternatives,
    and the key prefixes whose other keys are absent).

    A role never signs a request: its sessions do ("Global condition context keys", IAM User Guide): for an assumed role
    ``aws:PrincipalArn`` is the role's ARN, ``aws:PrincipalType`` is AssumedRole, ``aws:userid`` is "role id:session
    name" (the session name is the caller's: a wildcard), ``aws:username`` is absent. ``aws:PrincipalTag/`` holds the
    role's tags and the session's; session tags override a role tag of the same key ("Passing session tags in AWS
    STS"), so a role's tags are pinned only when ``spec["session_tags"]`` is False (its trust policy allows no
    sts:TagSession); otherwise every principal tag is free.
    """
    keys = {
        "aws:PrincipalArn": [iam_sets.value(spec.get("role_arn") or principal["arn"])],
        "aws:PrincipalAccount": [iam_sets.value(account_id)],
        "aws:PrincipalType": [iam_sets.value("AssumedRole")],
        "aws:username": [iam_sets.ABSENT],
    }
    if spec.get("role_id"):
        keys["aws:userid"] = [iam_sets.like(spec["role_id"] + ":*")]
    closed = ()
    if spec.get("session_tags") is False:
        keys.update(("aws:PrincipalTag/%s" % key, [iam_sets.value(value)]) for key, value in (spec.get("tags") or {}).items())
        closed = ("aws:PrincipalTag/",)
    return keys, closed


def request_set(resource, pinned, closed):
    """The ``iam_sets.RequestSet`` of a resource (its ``requests``, or its one sample) for a principal's pinned keys."""
    described = resource.get("requests") or requests_of([resource["arn"]], keys=dict((k, [iam_sets.value(v)]) for k, v in resource["context"].items()))
    return iam_sets.RequestSet(described["arns"], described["exclude"], dict(pinned, **described["keys"]), closed)


def _check_version(document):
    """Refuse (PolicyError: the principal's cells are unproven) a policy whose ``${...}`` IAM reads as literal text: without
    Version 2012-10-17 "policy variables ... are treated as literal strings" (IAM JSON policy elements: Version)."""
    loaded = iam_evaluation.load(document)
    if loaded.get("Version") != "2012-10-17" and "${" in json.dumps(loaded):
        raise iam_evaluation.PolicyError("a policy without Version 2012-10-17 holds ${...}, which IAM reads as text and this evaluator does not")


def local_decider(principal_policies, account_id):
    """``decide`` from policy documents: {principal id: {"identity": [(id, doc)], "boundary": doc, "role_arn": arn, "tags": {},
    "role_id": id, "session_tags": bool}}.

    A cell of the principal's own team is one request, the resource's sample (``arn``, ``context``), decided as IAM
    decides it (``iam_evaluation``): that is where a denial of what the team needs shows. Every other cell is the set of
    requests the resource stands for (``requests``: ARN patterns and pinned condition keys), decided by ``iam_sets``:
    allowed when some request of the set may be, with every key the principal and resource do not pin free, so a cell
    decided denied has no request IAM allows.

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
        for _policy_id, document in list(spec["identity"]) + ([("boundary", spec["boundary"])] if spec.get("boundary") else []):
            _check_version(document)
        identity = [(policy_id, iam_evaluation.policy_statements(document)) for policy_id, document in spec["identity"]]
        boundary = iam_evaluation.policy_statements(spec["boundary"]) if spec.get("boundary") else None
        for statement in [s for unused_id, listed in identity for s in listed] + (boundary or []):
            iam_evaluation.check_statement(statement)
        pinned, closed = principal_requests(principal, spec, account_id)
        by_action, evaluated, sets = {}, {}, {}

        def narrowed(action):
            """(the indexes of the statements that name ``action``, the principal with only those; None when none do)."""
            if action not in by_action:
                picked = [tuple(i for i, s in enumerate(listed) if named(s, action)) for unused_id, listed in identity]
                fenced = None if boundary is None else tuple(i for i, s in enumerate(boundary) if named(s, action))
                policies = [(policy_id, [listed[i] for i in indexes]) for (policy_id, listed), indexes in zip(identity, picked) if indexes]
                bounded = None if boundary is None else [boundary[i] for i in fenced]
                by_action[action] = ((tuple(picked), fenced), (policies, bounded) if policies or fenced else None)
            return by_action[action]

        def requests(index, resource):
            if index not in sets:
                sets[index] = request_set(resource, pinned, closed)
            return sets[index]

        def decision(action, index, resource):
            statements, (policies, bounded) = narrowed(action)
            if (statements, index) not in evaluated:
                if _own(principal, resource):
                    who = iam_evaluation.Principal(
                        account_id,
                        [(policy_id, {"Statement": listed}) for policy_id, listed in policies],
                        role_arn=spec.get("role_arn") or principal["arn"],
                        boundary=None if bounded is None else {"Statement": bounded},
                        tags=spec.get("tags"),
                    )
                    found = iam_evaluation.evaluate(who, action, resource["arn"], resource["context"])["EvalDecision"]
                else:
                    found = iam_sets.decide(policies, bounded, action, requests(index, resource))[0]
                evaluated[(statements, index)] = found
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


def request_context(principal, region, spec=None, now=None):
    """The keys AWS sets on every request of a role session, as one request of a sample shows them: IAM's simulator
    fills none itself ("If you don't provide a value for a context key ... the policy simulator cannot include that
    context key", IAM policy simulator, IAM User Guide; GetContextKeysForPrincipalPolicy: the keys "you must supply").
    From ``spec`` (``AccountRoles.evaluation_inputs``): the role's tags (``aws:PrincipalTag/``) and its id
    (``aws:userid``, with a session name of the sample's). A sample only: the evaluator (``iam_sets``) decides every value."""
    spec = spec or {}
    now = time.time() if now is None else now
    found = {
        "aws:PrincipalArn": spec.get("role_arn") or principal["arn"],
        "aws:PrincipalAccount": principal["arn"].split(":")[4],
        "aws:PrincipalType": "AssumedRole",
        "aws:RequestedRegion": region,
        "aws:SecureTransport": "true",
        "aws:ViaAWSService": "false",
        "aws:CurrentTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
        "aws:EpochTime": str(int(now)),
    }
    if spec.get("role_id"):
        found["aws:userid"] = "%s:%s" % (spec["role_id"], PROBE)
    found.update(("aws:PrincipalTag/%s" % key, value) for key, value in (spec.get("tags") or {}).items())
    return found


def simulate_decider(client, chunk=50, resource_chunk=100, batch=True, region=None, inputs=None):
    """``decide`` through IAM's SimulatePrincipalPolicy (the resource's condition keys and ``request_context`` as
    ContextEntries).

    Batched: one call (per ``chunk`` actions and ``resource_chunk`` resources) for every group of resources that
    are asked the same actions with the same condition keys, since ContextEntries hold for every ResourceArn of a
    call. Each resource's decision is read from ``ResourceSpecificResults`` ("The simulator now returns a single
    EvaluationResult per action, regardless of how many resource ARNs are provided", EvaluationResult, IAM API
    Reference). ``batch=False`` asks one resource per call. ``decide.calls`` counts the calls (pages included).
    A decision that is not an allow while IAM lists ``MissingContextValues`` for it is UNKNOWN, its keys in
    ``decide.missing`` by (principal ARN, resource ARN, action). ``inputs``: each principal's ``evaluation_inputs``, for
    the keys its sessions carry (``request_context``).
    """

    counting = threading.Lock()

    def decide(principal, asks):
        groups = {}
        for index, (resource, actions) in enumerate(asks):
            key = (tuple(sorted((k, str(v)) for k, v in resource["context"].items())), tuple(actions)) if batch else (index,)
            groups.setdefault(key, []).append(index)
        answers = [{} for unused_ask in asks]
        every = request_context(principal, region or getattr(getattr(client, "meta", None), "region_name", None) or "", (inputs or {}).get(principal["id"]))
        for indexes in groups.values():
            resource, actions = asks[indexes[0]]
            entries = _context_entries(dict(every, **resource["context"]))
            for first in range(0, len(indexes), resource_chunk):
                by_arn = {}
                for index in indexes[first : first + resource_chunk]:
                    by_arn.setdefault(asks[index][0]["arn"], []).append(index)
                for start in range(0, len(actions), chunk):
                    request = {"PolicySourceArn": principal["arn"], "ActionNames": list(actions[start : start + chunk]), "ResourceArns": list(by_arn)}
                    request["ContextEntries"] = entries
                    results, pages = iam_calls.simulate_principal_policy(client, **request)
                    with counting:
                        decide.calls += pages
                    for result in results:
                        for arn, action, missing in _record(result, by_arn, answers):
                            with counting:
                                decide.missing[(principal["arn"], arn, action)] = missing
        return answers

    decide.calls = 0
    decide.missing = {}
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
        # The whole of what decides a cell: the evaluators, and how resources, principals and cells are built here.
        source = inspect.getsource(iam_evaluation) + inspect.getsource(iam_sets) + inspect.getsource(inspect.getmodule(local_decider))
    except (OSError, TypeError):
        return None
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def witness_decider(simulate, local, memory=None, inputs=None, every_cell=False):
    """``decide``: the evaluator answers every cell; IAM witnesses each principal's own team, the shared resources and one
    other team, and may only add allows.

    ``local`` (``local_decider``, the principal's policies as IAM holds them) decides each cell of another team and of the
    shared resources over the set of requests it stands for, and each cell of the principal's own team on its sample.
    ``simulate`` (``simulate_decider``) asks IAM the samples of the principal's own team, of the shared resources and of
    one other team, its *witness* (the next team by name, the first after the last); with ``every_cell`` every sample.
    IAM's answer on a sample must agree with the evaluator's on its own team's cells, and must be no allow where the
    evaluator decided the set denied (a sample is one request of its set). Where either fails the evaluator is wrong
    about this principal: IAM answers every sample of it, and ``decide.fallbacks`` says which principal and why. A cell
    is allowed when either says so (the evaluator's set, or IAM's sample), UNKNOWN when IAM could not decide it for
    lack of a context key a statement naming the action tests (``unknown_why``), and denied only otherwise. A principal
    whose policies the evaluator cannot read (``PolicyError``) has every cell beyond its own team UNKNOWN. So the
    decision is sound whatever IAM's samples show, and IAM is asked a number of calls that grows with the team count, not
    with its square. ``decide.local_cells`` counts the cells the evaluator alone answered.

    With a ``memory`` (``Memory``) and each principal's ``inputs`` (what ``local`` evaluates), IAM is not asked again
    about a principal whose inputs and asked cells it already answered as the evaluator does: the evaluator still
    answers every cell of every run, so a policy changed by hand is judged at once, and asked of IAM too.
    """

    counting = threading.Lock()

    def missing_of(principal):
        def for_resource(resource):
            return lambda action: getattr(simulate, "missing", {}).get((principal["arn"], resource["arn"], action), [])

        return for_resource

    def decide(principal, asks):
        missing = missing_of(principal)
        owners = sorted(set(resource["team"] for resource, unused_actions in asks if not resource.get("shared")) - set([principal["team"]]))
        witness = next((owner for owner in owners if owner > principal["team"]), owners[0] if owners else None)
        asked = [
            i for i, (resource, unused_actions) in enumerate(asks) if every_cell or resource.get("shared") or resource["team"] in (principal["team"], witness)
        ]
        try:
            evaluated = local(principal, asks)
        except iam_evaluation.PolicyError as error:
            evaluated, why = None, "the evaluator cannot read its policies (%s)" % error
        key = None
        if memory is not None and evaluated is not None:
            # The cells as a set: the order of the team file (of the resources) is no part of what IAM answered.
            question = sorted(json.dumps([asks[i][0]["arn"], asks[i][0]["context"], list(asks[i][1])], sort_keys=True) for i in asked)
            key = memory.key("iam", principal["arn"], inputs[principal["id"]], question)
            if memory.recall("iam", key):
                with counting:
                    decide.local_cells += sum(len(actions) for unused_resource, actions in asks)
                return evaluated
        answers = dict(zip(asked, simulate(principal, [asks[i] for i in asked])))
        rest = [i for i in range(len(asks)) if i not in answers]
        if evaluated is not None:
            differ = [
                (i, action)
                for i in asked
                for action in asks[i][1]
                if _disagree(principal, asks[i][0], _decision(answers[i], action), _decision(evaluated[i], action))
            ]
            if not differ:
                combined = [_combined(principal, asks[i], answers.get(i, {}), evaluated[i], inputs, missing(asks[i][0])) for i in range(len(asks))]
                # An answer IAM could not give is not remembered: the next run asks again.
                if memory is not None and not any(_decision(combined[i], a) == UNKNOWN for i in asked for a in asks[i][1]):
                    memory.prove(key)
                with counting:
                    decide.local_cells += sum(len(asks[i][1]) for i in rest)
                return combined
            i, action = differ[0]
            why = "IAM answers %s and the evaluator %s for %s on %s" % (
                _decision(answers[i], action),
                _decision(evaluated[i], action),
                action,
                asks[i][0]["arn"],
            )
        answers.update(zip(rest, simulate(principal, [asks[i] for i in rest])))
        with counting:
            decide.fallbacks.append("%s's %s (%s): asked of IAM in full, as %s" % (principal["team"], principal["kind"], principal["arn"], why))
        if evaluated is None:
            # Unreadable: IAM's samples decide the own team's cells; no other cell can be proven denied.
            return [answers[i] if _own(principal, asks[i][0]) else dict((a, UNKNOWN) for a in asks[i][1]) for i in range(len(asks))]
        return [_combined(principal, asks[i], answers[i], evaluated[i], inputs, missing(asks[i][0])) for i in range(len(asks))]

    decide.local_cells = 0
    decide.fallbacks = []
    return decide


def _own(principal, resource):
    """Whether a cell is decided on its sample: the principal's own team's resource, but those the platform owns."""
    return not resource.get("shared") and resource["team"] == principal["team"] and resource["kind"] not in PLATFORM_OWNED


def _disagree(principal, resource, iam, evaluator):
    """Whether IAM's answer on a sample shows the evaluator wrong: on the own team, any difference (both decided the one
    request); elsewhere, an allow of one request of a set the evaluator decided denied."""
    if iam == UNKNOWN:
        return False
    if _own(principal, resource):
        return iam != evaluator
    return iam == iam_evaluation.ALLOWED and evaluator != iam_evaluation.ALLOWED


def _combined(principal, ask, iam, evaluated, inputs, missing):
    """One resource's decisions: the evaluator's, an IAM allow or UNKNOWN added (the own team: IAM's, as asked).
    ``missing(action)``: the context keys IAM said it lacked for the resource's sample."""
    resource, actions = ask
    found = dict(evaluated)
    if not iam:
        return found  # nothing of IAM's to add: a resource it was not asked about (another team's but the witness's)
    for action in actions:
        answer = iam.get(action)
        if answer == UNKNOWN and not unknown_why(inputs, principal, resource, action, missing(action)):
            answer = iam_evaluation.IMPLICIT_DENY  # the keys IAM lacked decide no statement for this request
        # The own team's cell is IAM's, as asked; elsewhere IAM may only widen the evaluator's answer.
        widens = answer == iam_evaluation.ALLOWED or (answer == UNKNOWN and found.get(action) != iam_evaluation.ALLOWED)
        if answer is not None and (_own(principal, resource) or widens):
            found[action] = answer
    return found


def unknown_why(inputs, principal, resource, action, keys):
    """Whether IAM's lack of ``keys`` leaves the cell unproven: a statement of the principal's that names ``action`` tests
    one of them, and neither the resource's set nor the principal pins it absent (a HeadBucket has no s3:prefix, a role
    session no aws:username, a role whose trust allows no session tags no principal tag it lacks: a statement on such a
    key is decided by its absence, as IAM decided it), and the statement's conditions on the keys IAM was given for the
    sample (its ``context``, as ``s3:prefix``) may hold: a statement they exclude applies to the sample whatever the
    missing keys hold, so IAM's answer stands. Without the principal's documents, any missing key counts."""
    spec = (inputs or {}).get(principal["id"])
    if spec is None:
        return bool(keys)
    pinned = dict((k.lower(), v) for k, v in ((resource.get("requests") or {}).get("keys") or {}).items())
    held, closed = principal_requests(principal, spec, principal["arn"].split(":")[4])
    pinned.update((k.lower(), v) for k, v in held.items())
    closed = tuple(prefix.lower() for prefix in closed)

    def absent(key):
        if key in pinned:
            return [tuple(a) for a in pinned[key]] == [iam_sets.ABSENT]
        return key.startswith(closed)

    open_keys = set(k.lower() for k in keys if not absent(k.lower()))
    # The sample IAM was asked: the keys it was given as they were (the sample's context, the principal's), those pinned
    # absent, and every key IAM lacked free.
    missing = set(k.lower() for k in keys)
    given = dict((k, v) for k, v in pinned.items() if k not in missing or absent(k))
    given.update((k.lower(), [iam_sets.value(v)]) for k, v in resource["context"].items())
    sample = iam_sets.RequestSet([resource["arn"]], (), given, closed)
    documents = [document for unused_id, document in spec["identity"]] + ([spec["boundary"]] if spec.get("boundary") else [])
    for document in documents:
        for statement in iam_evaluation.policy_statements(document):
            if iam_evaluation.action_applies(statement, action) and _may_name(statement, resource["arn"]):
                # The keys its conditions test, and those its policy variables name anywhere in it.
                tested = set(key.lower() for block in (statement.get("Condition") or {}).values() for key in block)
                tested.update(name.split(",", 1)[0].strip().lower() for name in iam_evaluation._VARIABLE.findall(json.dumps(statement)))
                if tested & open_keys and _may_hold(statement, sample):
                    return True
    return False


def _may_hold(statement, sample):
    try:
        return iam_sets.conditions_may_hold(statement, sample)
    except iam_evaluation.PolicyError:
        return True


def _may_name(statement, arn):
    """Whether a statement's Resource (or NotResource) may take in ``arn``, whatever its policy variables stand for: a
    statement for other resources tests its conditions on no request for this one."""
    if "NotResource" in statement:
        return not any(iam_evaluation.arn_matches(pattern, arn) for pattern in iam_evaluation.as_list(statement["NotResource"]) if "${" not in pattern)
    return any(iam_sets.arns_intersect(iam_evaluation._VARIABLE.sub("*", pattern), [arn]) for pattern in iam_evaluation.as_list(statement.get("Resource", "*")))


def _decision(answers, action):
    return answers.get(action, iam_evaluation.IMPLICIT_DENY)


def _record(result, by_arn, answers):
    """Each resource's decision of one EvaluationResult into ``answers``; returns the (ARN, action, missing keys) of the
    decisions made UNKNOWN by IAM's MissingContextValues."""
    specific = result.get("ResourceSpecificResults")
    if specific:
        triples = [(r["EvalResourceName"], r["EvalResourceDecision"], r.get("MissingContextValues") or []) for r in specific]
    elif len(by_arn) == 1:
        triples = [(next(iter(by_arn)), result["EvalDecision"], result.get("MissingContextValues") or [])]
    else:
        triples = [(result.get("EvalResourceName"), result["EvalDecision"], result.get("MissingContextValues") or [])]
    unknown = []
    for arn, decision, missing in triples:
        if arn not in by_arn:
            raise HyperPodError("SimulatePrincipalPolicy answered %s for %s, a resource it was not asked about" % (result["EvalActionName"], arn))
        if missing and decision != iam_evaluation.ALLOWED:
            decision = UNKNOWN
            unknown.append((arn, result["EvalActionName"], list(missing)))
        for index in by_arn[arn]:
            answers[index][result["EvalActionName"]] = decision
    return unknown


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
        return _tallied(principal, resources, decide, actions, owners_of_kind, keep_cells)

    # Each principal's decisions are independent of the others': a few principals are asked at once.
    grid, counts, cells, leaks, gaps = _merged(each(tallied, principals))
    summary = dict(
        counts,
        leaks=len(leaks),
        gaps=len(gaps),
        principals=len(principals),
        resources=len(resources),
        shared_resources=sum(1 for r in resources if r.get("shared")),
    )
    return {"cells": cells, "grid": grid, "leaks": leaks, "gaps": gaps, "summary": summary}


def _asks(principal, resources, actions):
    """[(resource, the actions asked of it)] of one principal: each resource's kind's actions, and those the principal is
    given on a shared resource (SHARED_ALLOWED) or needs of its own team's (NEEDED)."""
    needed, permitted, asks = NEEDED.get(principal["kind"], {}), SHARED_ALLOWED.get(principal["kind"], {}), []
    for resource in resources:
        # Another team's resource is asked the kind's actions as they are: one list, never copied.
        wanted = actions.get(resource["kind"], [])
        if resource.get("shared"):
            wanted = sorted(set(wanted) | set(permitted.get(resource["kind"], [])))
        elif resource["team"] == principal["team"]:
            wanted = sorted(set(wanted) | set(needed.get(resource["kind"], [])))
        asks.append((resource, wanted))
    return asks


def _tallied(principal, resources, decide, actions, owners_of_kind, keep_cells):
    """One principal's rows, counts, and cells (all, or the leaks and gaps only): no principal's asks and answers
    are kept past its own, as they grow with the team count and the principals too."""
    asks = _asks(principal, resources, actions)
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
        # A decider may leave implicit denials out: only an allowed (or unproven) action can leak, only a needed one be a gap.
        allowed = sum(1 for decision in decisions.values() if decision in REACHES)
        grid[row]["allowed"] += allowed
        grid[row]["denied"] += len(wanted) - allowed
        if not (keep_cells or allowed or own):
            continue
        for action in wanted:
            decision = _decision(decisions, action)
            leak, gap = _leak_or_gap(principal, resource, action, decision, own)
            if not (keep_cells or leak or gap):
                continue
            cell = _cell(principal, resource, action, decision)
            if keep_cells:
                cells.append(cell)
            if leak:
                leaks.append(cell)
            elif gap:
                gaps.append(cell)
    return grid, counts, cells, leaks, gaps


def _leak_or_gap(principal, resource, action, decision, own):
    """(whether the cell is a leak, whether it is a gap): ``own`` when the resource is the principal's own team's.

    A leak is an action that reaches (REACHES) a shared resource beyond what the principal is given on it
    (SHARED_ALLOWED), another team's resource, or a resource of its own team that the platform owns (PLATFORM_OWNED)
    beyond what it needs (NEEDED). A gap is an action the principal needs of its own team's resource that IAM does not
    allow."""
    needed, permitted = NEEDED.get(principal["kind"], {}), SHARED_ALLOWED.get(principal["kind"], {})
    shared = resource.get("shared", False)
    leak = decision in REACHES and (
        action not in permitted.get(resource["kind"], [])
        if shared
        else not own or (resource["kind"] in PLATFORM_OWNED and action not in needed.get(resource["kind"], []))
    )
    gap = own and decision != iam_evaluation.ALLOWED and action in needed.get(resource["kind"], [])
    return leak, gap


def _cell(principal, resource, action, decision):
    """The matrix's cell of one principal, resource and action."""
    return {
        "team": principal["team"],
        "principal": principal["kind"],
        "principal_arn": principal["arn"],
        "owner": resource["team"],
        "resource_kind": resource["kind"],
        "resource": resource["arn"],
        "action": action,
        "decision": decision,
    }


def _merged(tallies):
    """The matrix's grid, counts, cells, leaks and gaps from each principal's (``_tallied``), in the principals' order."""
    grid, counts, cells, leaks, gaps = {}, {"cells": 0, "cross_team_cells": 0, "shared_cells": 0}, [], [], []
    for their_grid, their_counts, their_cells, their_leaks, their_gaps in tallies:
        for row, tally in their_grid.items():
            merged = grid.setdefault(row, {"allowed": 0, "denied": 0, "teams": tally["teams"]})
            merged["allowed"] += tally["allowed"]
            merged["denied"] += tally["denied"]
        for key, value in their_counts.items():
            counts[key] += value
        cells.extend(their_cells)
        leaks.extend(their_leaks)
        gaps.extend(their_gaps)
    return grid, counts, cells, leaks, gaps


# --- IAM Access Analyzer ----------------------------------------------------------------------------

# The kinds whose isolation is in the policy's Resource element (a team's prefix, its roles' ARNs, the ids AWS chose), and
# the shared kinds but the data bucket itself. The others are isolated by a condition: the team tag (a domain, its user
# profiles, spaces and apps) or s3:prefix (a listing, and the bucket's ListBucket), and Access Analyzer "assumes that
# conditions can be met" ("CheckAccessNotGranted", IAM Access Analyzer API Reference): it would report the team's own
# grant of them. The evaluator decides those over every value of the condition keys.
ANALYZED_KINDS = (
    "s3_objects",
    "home_efs",
    "role",
    "sso_role",
    "compute_quota",
    "budget",
    "access_entry",
    "permission_set",
    "shared_objects",
    "eks_cluster",
    "eks_addon",
    "eks_pod_identity_association",
    "hyperpod_cluster",
    "cluster_scheduler_config",
    "fsx_file_system",
    "fsx_association",
    "grafana_workspace",
    "amp_workspace",
    "amp_rule_groups_namespace",
    "amp_anomaly_detector",
    "identity_center",
    "identity_store",
    "identity_center_group",
    "platform_role",
    "platform_access_entry",
    "platform_sso_role",
)
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
            "role_id": role.get("RoleId"),
            "tags": dict((t["Key"], t["Value"]) for t in role.get("Tags") or []),
            "session_tags": _trusts_session_tags(role.get("AssumeRolePolicyDocument")),
        }


def _trusts_session_tags(trust):
    """Whether a role's trust policy lets a session carry tags (sts:TagSession; Identity Center's and EKS Pod Identity's
    roles do): then a session tag may override any of the role's ("Passing session tags in AWS STS", IAM User Guide).
    A trust policy that cannot be read, or was not given (every role has one), counts as letting it."""
    if not trust:
        return True
    try:
        statements = iam_evaluation.policy_statements(trust)
    except ValueError:
        return True
    return any(s.get("Effect") == "Allow" and iam_evaluation.action_applies(s, "sts:TagSession") for s in statements)


def _analyzed_arns(resource):
    """What Access Analyzer is asked of a resource: its ARN patterns, every resource of the set (a wildcard is allowed "in
    the portion of the ARN that specifies the resource ID", Access, IAM Access Analyzer API Reference), or its sample when
    the set leaves places out (the bucket's root, less the teams' prefixes), which a list of ARNs cannot say."""
    requests = resource.get("requests")
    if not requests or requests["exclude"]:
        return [resource["arn"]]
    return requests["arns"]


def access_not_granted(analyzer, documents, principals, resources, actions=None, memory=None):
    """IAM Access Analyzer's CheckAccessNotGranted on each team principal's policies: none may grant another team's
    ANALYZED_KINDS actions on that team's resources of those kinds, nor any but SHARED_ALLOWED on the shared ones, each
    resource asked as the set of ARNs it stands for (``_analyzed_arns``).

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
        answer = analyzer_calls.check_access_not_granted(analyzer, policyDocument=json.dumps(document), access=[access], policyType="IDENTITY_POLICY")
        if answer["result"] == "PASS" and memory is not None:
            memory.prove(key)
        return answer

    of_kind = {}  # each principal reads a kind's resources, not every resource once per kind
    for resource in resources:
        of_kind.setdefault(resource["kind"], []).append(resource)

    def analyzed(principal):
        findings = []
        for kind, owned, asked_actions in _analyzed_sets(principal, of_kind, actions):
            for policy_name, document in documents.get(principal["id"], []):
                for batch, kind_actions in _batches(owned, asked_actions):
                    if check(document, kind_actions, [arn for unused_owner, arn in batch])["result"] == "PASS":
                        continue
                    for owner in sorted(set(owner for owner, unused_arn in batch)):
                        answer = check(document, kind_actions, [arn for their_owner, arn in batch if their_owner == owner])
                        if answer["result"] != "PASS":
                            findings.append(_finding(principal, policy_name, owner, kind, answer))
        return findings

    # Each principal's checks are independent of the others': a few principals are checked at once.
    done = each(analyzed, principals)
    return {"checks": asked[0], "findings": [f for found in done for f in found]}


def _analyzed_sets(principal, of_kind, actions):
    """(kind, [(owner, ARN)], actions asked) of each of ANALYZED_KINDS that ``access_not_granted`` asks of ``principal``
    (``of_kind``: kind -> its resources): another team's and the shared ones; the team's own that the platform owns
    (PLATFORM_OWNED) apart, asked all but the reads the team needs of them (NEEDED)."""
    for kind in ANALYZED_KINDS:
        # What the team is given on a shared resource is no finding: the rest of its actions are asked.
        permitted = SHARED_ALLOWED.get(principal["kind"], {}).get(kind, [])
        asked_actions = [action for action in actions.get(kind, []) if action not in permitted]
        not_own = [r for r in of_kind.get(kind, []) if not _own(principal, r)]
        needed = NEEDED.get(principal["kind"], {}).get(kind, [])
        platform = [r for r in not_own if needed and not r.get("shared") and r["team"] == principal["team"]]
        others = [r for r in not_own if r not in platform]
        yield kind, sorted(set((r["team"], arn) for r in others for arn in _analyzed_arns(r))), asked_actions
        if platform:
            yield kind, sorted(set((r["team"], arn) for r in platform for arn in _analyzed_arns(r))), [a for a in asked_actions if a not in needed]


def _batches(owned, asked_actions):
    """(batch of ``owned``, batch of ``asked_actions``) of each check, each at most ANALYZER_LIMIT long: every batch of
    actions for the first batch of resources, then for the next."""
    for first in range(0, len(owned), ANALYZER_LIMIT):
        batch = owned[first : first + ANALYZER_LIMIT]
        for start in range(0, len(asked_actions), ANALYZER_LIMIT):
            yield batch, asked_actions[start : start + ANALYZER_LIMIT]


def _finding(principal, policy_name, owner, kind, answer):
    """``access_not_granted``'s finding of a check of ``principal``'s ``policy_name`` that did not pass on ``owner``'s
    resources of ``kind``, naming the statements Access Analyzer points at."""
    return {
        "team": principal["team"],
        "principal": principal["kind"],
        "principal_arn": principal["arn"],
        "policy": policy_name,
        "owner": owner,
        "resource_kind": kind,
        "statements": [r.get("statementId") or r.get("statementIndex") for r in answer.get("reasons", [])],
    }


def analyzer_decides(document, principal_documents, boundary=None):
    """Whether Access Analyzer's answer on ``document`` holds for the principal whose policies are ``principal_documents``
    ([(name, document)]) and ``boundary``. Access Analyzer checks one document alone and "assumes that conditions can be
    met" ("CheckAccessNotGranted", IAM Access Analyzer API Reference), a policy variable standing for any value: its FAIL
    is the principal's only when no statement of the document tests a condition or names a variable, and nothing else of
    the principal may take the access away (a Deny in another of its policies, a permissions boundary)."""
    if boundary:
        return False
    try:
        statements = iam_evaluation.policy_statements(document)
        others = [s for unused_name, other in principal_documents if other is not document for s in iam_evaluation.policy_statements(other)]
    except (ValueError, TypeError, AttributeError):
        return False
    if any(isinstance(s, dict) and (s.get("Condition") or iam_evaluation._VARIABLE.search(json.dumps(s))) for s in statements):
        return False
    return not any(isinstance(s, dict) and s.get("Effect") == "Deny" for s in others)


def _finding_key(found):
    return (found["principal_arn"], found["owner"], found["resource_kind"])


def settle_findings(findings, found, principals, documents, inputs, ask_in_full):
    """(the matrix, the findings that stand, one sentence per finding that does not): ``access_not_granted``'s
    ``findings`` against ``matrix``'s ``found``.

    A finding stands when the matrix holds a leak of its principal on its owner's resources of its kind, or when Access
    Analyzer decides for the principal (``analyzer_decides``): then the evaluator missed what Access Analyzer proves.
    Otherwise Access Analyzer assumed a condition met or a variable any value where the evaluator proved the principal
    reaches none of those resources. That principal is asked of IAM in full (``ask_in_full(principals)``: ``matrix`` with
    a ``witness_decider`` of ``every_cell``), its part of the matrix replaced by that answer, in which any IAM allow
    counts; the finding stands if a leak of it shows there, and is dropped, with its sentence, if none does.
    """
    by_arn = dict((p["arn"], p) for p in principals)
    reached = set(_finding_key(c) for c in found["leaks"])
    disputed = []
    for finding in findings:
        if _finding_key(finding) in reached:
            continue
        principal = by_arn[finding["principal_arn"]]
        held = documents.get(principal["id"], [])
        document = next((d for name, d in held if name == finding["policy"]), None)
        if not analyzer_decides(document, held, (inputs.get(principal["id"]) or {}).get("boundary")):
            disputed.append(finding)
    if not disputed:
        return found, list(findings), []
    asked = [p for p in principals if p["arn"] in set(f["principal_arn"] for f in disputed)]
    found = _with_principals(found, ask_in_full(asked), asked)
    reached = set(_finding_key(c) for c in found["leaks"])
    dropped = [f for f in disputed if _finding_key(f) not in reached]
    notes = []
    for f in dropped:
        whose = "the teams' shared" if f["owner"] == SHARED_OWNER else f["owner"] + "'s"
        notes.append(
            "%s's %s (%s): Access Analyzer says %s may grant %s %s, taking its conditions as met and its policy variables as any"
            " value; the evaluator and IAM, asked every cell of the principal, allow none of them: no finding"
            % (f["team"], f["principal"], f["principal_arn"], f["policy"], whose, f["resource_kind"])
        )
    return found, [f for f in findings if f not in dropped], notes


def _with_principals(found, again, principals):
    """``found`` (``matrix``'s) with the rows, cells, leaks and gaps of ``principals`` those of ``again``, their own matrix."""
    ours, arns = set((p["team"], p["kind"]) for p in principals), set(p["arn"] for p in principals)
    grid = dict((row, tally) for row, tally in found["grid"].items() if row[:2] not in ours)
    grid.update(again["grid"])
    kept = dict((key, [c for c in found[key] if c["principal_arn"] not in arns] + again[key]) for key in ("cells", "leaks", "gaps"))
    return dict(found, grid=grid, summary=dict(found["summary"], leaks=len(kept["leaks"]), gaps=len(kept["gaps"])), **kept)


# --- a live account -------------------------------------------------------------------------------


def discover(
    context, roles, teams, shared, prefix=naming.DEFAULT_PREFIX, tag_keys=None, pod_identity_roles=None, grafana_workspace_id=None, prometheus_workspace=None
):
    """(principals, resources) of ``teams`` in the account, from ``shared`` (shared_info's hyperpod_shared) and reads.

    The execution and Pod Identity roles (``<prefix>-<team>-pods``) are found in ``roles`` (``AccountRoles``).
    Reads: the account's ListUserProfiles/ListSpaces/ListApps, one ListComputeQuotas, DescribeAccessEntry per permission
    set role, DescribeDomain per team domain (its home EFS file system). What does not exist is left out.
    The shared resources (``shared_resources``) come from ``shared``, ``grafana_workspace_id`` and ``prometheus_workspace``
    ({"arn"}, {"id"} or {"alias"}: ``prometheus_workspace.live_workspace_ids``), and the reads of ``_platform_reads``.
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
            found["sso_role"] = sso_role
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
            # ListDomains does not say it; a domain made with HomeEfsFileSystemCreation Disabled has none.
            found["home_efs_file_system_id"] = (sm.describe_domain(sagemaker, DomainId=domain_id) or {}).get("HomeEfsFileSystemId")
        return principals, team_resources(team, account_id, region, found, tag_keys)

    # Each team's reads are independent of the others': a few teams are read at once.
    read = each(of_team, teams)
    principals = [principal for found, unused in read for principal in found]
    resources = [resource for unused, found in read for resource in found]
    common = {
        "bucket": shared.get("data_bucket"),
        "teams": teams,
        "name_prefix": prefix,
        "eks_cluster_arn": shared.get("eks_cluster_arn"),
        "hyperpod_cluster_arn": shared.get("cluster_arn"),
        "fsx_file_system_id": shared.get("fsx_file_system_id"),
        "grafana_workspace_id": grafana_workspace_id,
        "identity_center_instance_arn": shared.get("identity_center_instance_arn"),
        "identity_store_id": shared.get("identity_store_id"),
        "group_ids": list((shared.get("identity_center_group_ids") or {}).values()),
    }
    top_level, platform_folders, lifecycle_configs, cluster_roles = _platform_reads(context, shared)
    common["s3_places"] = shared_locations(shared.get("data_bucket"), teams, top_level, platform_folders, lifecycle_configs)
    # The roles the platform gives its cluster, as the cluster runs them and as the inventory names them (before it exists).
    common["platform_roles"] = cluster_roles + [shared.get(key) for key in ("cluster_execution_role_arn", "cluster_autoscaling_role_arn") if shared.get(key)]
    if prometheus_workspace:
        from ansible_collections.hyperpod.tenancy.plugins.module_utils import prometheus_workspace as amp

        # The ARN the cluster file gives is the workspace, in whatever region or account; an ID or an alias is the region's.
        arn = prometheus_workspace.get("arn")
        common["prometheus_workspace_ids"] = (
            [arn] if arn else amp.live_workspace_ids(context.client("amp"), prometheus_workspace.get("id"), prometheus_workspace.get("alias"))
        )
    resources.extend(shared_resources(common, account_id, region))
    return principals, resources


def select_principals(principals, names):
    """The principals of ``principals`` (``discover``'s) that ``names`` names, each by its role ARN, its team or
    ``<team>/<kind>``; all of them when ``names`` is empty. A name that names none of them raises: a run that crossed
    nobody would pass having proven nothing."""
    if not names:
        return list(principals)

    def called(principal):
        return set((principal["arn"], principal["team"], "%s/%s" % (principal["team"], principal["kind"])))

    unknown = [name for name in names if not any(name in called(principal) for principal in principals)]
    if unknown:
        raise HyperPodError("principals names no principal of the present teams: %s" % ", ".join(unknown))
    return [principal for principal in principals if called(principal) & set(names)]


def _platform_reads(context, shared):
    """(the data bucket's top-level folders, the platform prefix's folders, the cluster's instance groups' LifeCycleConfig, the
    roles the cluster runs as: each instance group's ExecutionRole, its ClusterRole): ``shared_locations``' reads and the platform
    roles', two ListObjectsV2 (with Delimiter "/") and a DescribeCluster."""
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import sagemaker as sm

    bucket, found = shared.get("data_bucket"), [[], [], [], []]
    if bucket:
        s3 = context.client("s3")
        found[0] = [folder["Prefix"] for folder in s3_calls.list_folders(s3, Bucket=bucket, Delimiter="/")]
        found[1] = [folder["Prefix"] for folder in s3_calls.list_folders(s3, Bucket=bucket, Delimiter="/", Prefix=naming.PLATFORM_PREFIX)]
    if shared.get("cluster_arn"):
        description = sm.describe_cluster(context.client("sagemaker"), ClusterName=shared["cluster_arn"]) or {}
        groups = description.get("InstanceGroups") or []
        found[2] = [group.get("LifeCycleConfig") or {} for group in groups]
        running = groups + (description.get("RestrictedInstanceGroups") or [])
        found[3] = [role for role in [group.get("ExecutionRole") for group in running] + [description.get("ClusterRole")] if role]
    return found
