# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The IAM policy of the role the automation (AWX, ``ansible-playbook``) runs as: what the playbooks call, and no more.

Written once, here; docs/automation-policy.md shows it rendered for the sample and says what each statement is for.
Each statement is one scope: the actions the playbooks were seen calling in that scope (the sandbox's request log of
a cold ``site.yml``, a rerun, a drift run, an ``add_team`` that makes a deleted role again and a ``remove_team``:
``tests/integration/test_automation_policy.py``), plus, in ``NOT_EXERCISED``, the actions the modules call only on a
change that run does not make (an update, a tag change). That test runs the life under this policy alone, and proves
that dropping any one statement, or any one action of ``STATEMENTS``, denies a request the run made.

Scoping, where the service supports it:

- IAM: roles named ``<prefix>-*`` only (the collection's roles: ``naming.studio_execution_role_name``, the pods role);
  ``iam:PassRole`` only of those roles and of the cluster's execution role, only to the service that takes each
  (``iam:PassedToService``: sagemaker.amazonaws.com, pods.eks.amazonaws.com; "Grant a user permissions to pass a role
  to an AWS service", IAM User Guide);
- SageMaker: creates only with the request tag ``managed-by: hyperpod.tenancy`` (``naming.MANAGED_BY_TAG``), updates
  and deletes only of resources carrying it (``aws:RequestTag`` / ``aws:ResourceTag``, "How Amazon SageMaker AI works
  with IAM": SageMaker supports both); reads of the account's and Region's SageMaker resources;
- S3: the data bucket only, objects only under the platform's prefix ``_hyperpod/`` (``naming``: marks and ledger);
- Budgets: budgets named ``<prefix>-*`` (``naming.budget_name``);
- EKS: the cluster file's EKS cluster for the calls EKS authorizes on the cluster; ``*`` for those on an access
  entry's or association's own ARN (assumption: narrower on AWS with the access-entry and podidentityassociation ARNs;
  the sandbox names an access entry's since issue 40, not yet an association's: narrowing the entries' part to
  ``access-entry/<cluster>/*`` is left to do);
- Identity Center, Identity Store, Cost Explorer, Access Analyzer, EC2, FSx reads and IAM's account-wide reads: ``*``
  (their resources are the instance, the store or the account; the sandbox authorizes them on ``*``).

Not covered: the report playbooks (chargeback, usage, capacity), cluster.yml's updates of a running cluster,
awx_configure, Managed Grafana and Prometheus, an ``adopt`` of an unmarked resource (it tags a resource that has no
``managed-by`` tag), and the Kubernetes side (the automation's EKS access entry, not IAM).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.hyperpod.tenancy.plugins.module_utils import naming

POLICY_VERSION = "2012-10-17"
# "Managed policy character size: 6,144" (IAM and AWS STS quotas, IAM User Guide; whitespace not counted).
MANAGED_POLICY_LIMIT = 6144

# Sid -> (actions seen in the recorded life, resource scope, condition scope). Scopes are filled in by ``render``.
STATEMENTS = (
    (
        "ReadAccountWide",
        [
            "access-analyzer:CheckAccessNotGranted", "budgets:ViewBudget", "ce:ListCostAllocationTags", "ec2:DescribeSubnets",
            "eks:DescribeAccessEntry", "eks:DescribeAddon", "eks:DescribeAddonVersions", "eks:DescribePodIdentityAssociation",
            "eks:ListAccessPolicies", "eks:ListAssociatedAccessPolicies",
            "fsx:DescribeFileSystems", "iam:GetAccountAuthorizationDetails", "iam:GetAccountSummary", "iam:ListRoles",
            "iam:SimulatePrincipalPolicy", "sagemaker:ListApps", "sagemaker:ListClusterSchedulerConfigs", "sagemaker:ListComputeQuotas",
            "sagemaker:ListDomains", "sagemaker:ListSpaces", "sagemaker:ListTags", "sagemaker:ListUserProfiles",
        ],
        "*",
        None,
    ),
    ("CostAllocationTags", ["ce:UpdateCostAllocationTagsStatus"], "*", None),
    (
        "IdentityCenter",
        [
            "identitystore:GetGroupId", "identitystore:GetUserId", "identitystore:IsMemberInGroups", "identitystore:ListUsers",
            "sso:CreateAccountAssignment", "sso:CreateApplicationAssignment", "sso:CreatePermissionSet", "sso:DeleteAccountAssignment",
            "sso:DeleteApplicationAssignment", "sso:DeletePermissionSet", "sso:DescribeAccountAssignmentCreationStatus",
            "sso:DescribeAccountAssignmentDeletionStatus", "sso:DescribePermissionSet", "sso:GetInlinePolicyForPermissionSet",
            "sso:GetPermissionsBoundaryForPermissionSet", "sso:ListAccountAssignments", "sso:ListAccountsForProvisionedPermissionSet",
            "sso:ListApplicationAssignments", "sso:ListCustomerManagedPolicyReferencesInPermissionSet", "sso:ListInstances",
            "sso:ListManagedPoliciesInPermissionSet", "sso:ListPermissionSets", "sso:ListPermissionSetsProvisionedToAccount",
            "sso:ListTagsForResource", "sso:PutInlinePolicyToPermissionSet",
        ],
        "*",
        None,
    ),
    ("ReadSageMaker", ["sagemaker:DescribeCluster", "sagemaker:DescribeClusterSchedulerConfig", "sagemaker:DescribeComputeQuota",
                       "sagemaker:DescribeDomain", "sagemaker:DescribeSpace", "sagemaker:DescribeUserProfile"], "sagemaker", None),
    # A create that carries tags also needs sagemaker:AddTags, its dependent action ("Actions, resources, and condition keys
    # for Amazon SageMaker AI", Service Authorization Reference: CreateDomain, CreateUserProfile), asked with the same tags.
    ("CreateMarkedSageMaker", ["sagemaker:AddTags", "sagemaker:CreateCluster", "sagemaker:CreateClusterSchedulerConfig", "sagemaker:CreateComputeQuota",
                               "sagemaker:CreateDomain", "sagemaker:CreateUserProfile"], "*", "request-tag"),
    # Spaces and apps a member makes in Studio carry the domain's tags: the collection's domains propagate them
    # (sagemaker_domain's tag_propagation, default true; CreateDomain's TagPropagation, SageMaker API Reference).
    ("ChangeMarkedSageMaker", ["sagemaker:DeleteApp", "sagemaker:DeleteComputeQuota", "sagemaker:DeleteDomain", "sagemaker:DeleteSpace",
                               "sagemaker:DeleteUserProfile"], "sagemaker", "resource-tag"),
    ("TheEksCluster", ["eks:CreateAccessEntry", "eks:CreateAddon", "eks:CreatePodIdentityAssociation", "eks:DescribeCluster",
                       "eks:ListAccessEntries", "eks:ListPodIdentityAssociations"], "eks-cluster", None),
    ("EksAccessAndPods", ["eks:AssociateAccessPolicy", "eks:DeleteAccessEntry", "eks:DeletePodIdentityAssociation"], "*", None),
    ("CollectionRoles", ["iam:CreateRole", "iam:DeleteRole", "iam:DeleteRolePolicy", "iam:GetRole", "iam:GetRolePolicy",
                         "iam:ListAttachedRolePolicies", "iam:ListInstanceProfilesForRole", "iam:ListRolePolicies", "iam:PutRolePolicy"],
     "roles", None),
    ("PassRolesToSageMaker", ["iam:PassRole"], "sagemaker-roles", "passed-to-sagemaker"),
    ("PassPodRolesToEks", ["iam:PassRole"], "pod-roles", "passed-to-pods"),
    # preflight.yml reads the bucket's settings.
    ("DataBucket", ["s3:GetBucketOwnershipControls", "s3:GetBucketPublicAccessBlock", "s3:GetBucketVersioning", "s3:GetEncryptionConfiguration",
                    "s3:ListBucket"], "bucket", None),
    ("PlatformObjects", ["s3:DeleteObject", "s3:GetObject", "s3:GetObjectTagging", "s3:PutObject"], "platform-objects", None),
    ("TeamBudgets", ["budgets:ModifyBudget"], "budgets", None),
    # A team's FSx data repository association (storage.s3_link): offboarding looks for it whatever the link says.
    ("TeamExportAssociations", ["fsx:DescribeDataRepositoryAssociations"], "*", None),
)

# Actions the modules call only on a change the recorded life does not make: granted in the statement of their scope,
# not proved by the run (tests/integration/test_automation_policy.py checks this list is exactly what the run leaves unused).
NOT_EXERCISED = {
    "ChangeMarkedSageMaker": [
        "sagemaker:AddTags", "sagemaker:DeleteCluster", "sagemaker:DeleteClusterSchedulerConfig", "sagemaker:DeleteTags", "sagemaker:UpdateCluster",
        "sagemaker:UpdateClusterSchedulerConfig", "sagemaker:UpdateComputeQuota", "sagemaker:UpdateDomain", "sagemaker:UpdateUserProfile",
    ],
    "TheEksCluster": ["eks:ListAddons"],
    "EksAccessAndPods": ["eks:DeleteAddon", "eks:DisassociateAccessPolicy", "eks:UpdateAccessEntry", "eks:UpdateAddon",
                         "eks:UpdatePodIdentityAssociation"],
    "CollectionRoles": ["iam:DetachRolePolicy", "iam:TagRole", "iam:UntagRole", "iam:UpdateAssumeRolePolicy", "iam:UpdateRole"],
    "IdentityCenter": [
        "sso:AttachManagedPolicyToPermissionSet", "sso:DeleteInlinePolicyFromPermissionSet", "sso:DeletePermissionsBoundaryFromPermissionSet",
        "sso:DetachManagedPolicyFromPermissionSet", "sso:ProvisionPermissionSet", "sso:DescribePermissionSetProvisioningStatus",
        "sso:PutPermissionsBoundaryToPermissionSet", "sso:TagResource", "sso:UntagResource", "sso:UpdatePermissionSet",
    ],
    "TeamBudgets": [],
    # The sample links no team to S3: the association's own writes are made only where the platform allows the link.
    "TeamExportAssociations": ["fsx:CreateDataRepositoryAssociation", "fsx:DeleteDataRepositoryAssociation", "fsx:TagResource",
                               "fsx:UpdateDataRepositoryAssociation"],
    "PlatformObjects": ["s3:PutObjectTagging"],
}

# The statements that go to the account of IAM Identity Center when it is elsewhere (hyperpod_identity_center.assume_role_arn:
# the role the automation assumes there, docs/identity-center.md); the workload account's policy then allows assuming it.
IDENTITY_CENTER_STATEMENTS = ("IdentityCenter",)


def _resources(scope, partition, account_id, region, prefix, data_bucket, eks_cluster, cluster_execution_roles):
    iam = "arn:%s:iam::%s:role/" % (partition, account_id)
    return {
        "*": "*",
        "sagemaker": "arn:%s:sagemaker:%s:%s:*" % (partition, region, account_id),
        "eks-cluster": "arn:%s:eks:%s:%s:cluster/%s" % (partition, region, account_id, eks_cluster),
        "roles": iam + "%s-*" % prefix,
        "sagemaker-roles": [iam + naming.studio_execution_role_name("*", prefix)] + list(cluster_execution_roles),
        "pod-roles": iam + "%s-*-pods" % prefix,
        "bucket": "arn:%s:s3:::%s" % (partition, data_bucket),
        "platform-objects": "arn:%s:s3:::%s/%s*" % (partition, data_bucket, naming.PLATFORM_PREFIX),
        "budgets": "arn:%s:budgets::%s:budget/%s" % (partition, account_id, naming.budget_name("*", prefix)),
    }[scope]


def _condition(scope):
    managed_key, managed_value = naming.MANAGED_BY_TAG
    return {
        None: None,
        "request-tag": {"StringEquals": {"aws:RequestTag/" + managed_key: managed_value}},
        "resource-tag": {"StringEquals": {"aws:ResourceTag/" + managed_key: managed_value}},
        "passed-to-sagemaker": {"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}},
        "passed-to-pods": {"StringEquals": {"iam:PassedToService": "pods.eks.amazonaws.com"}},
    }[scope]


def render(account_id, region, data_bucket, eks_cluster, cluster_execution_roles=(), prefix=naming.DEFAULT_PREFIX, partition="aws",
           identity_center_elsewhere=False, exercised_only=False):
    """The automation role's policy in the workload account.

    ``identity_center_elsewhere``: leave Identity Center's statements out (they go to ``render_identity_center``'s policy
    in its account). ``exercised_only``: without ``NOT_EXERCISED``, what the recorded life proves.
    """
    statements = []
    for sid, actions, resource_scope, condition_scope in STATEMENTS:
        if identity_center_elsewhere and sid in IDENTITY_CENTER_STATEMENTS:
            continue
        wanted = sorted(set(actions) | (set() if exercised_only else set(NOT_EXERCISED.get(sid, ()))))
        statement = {"Sid": sid, "Effect": "Allow", "Action": wanted,
                     "Resource": _resources(resource_scope, partition, account_id, region, prefix, data_bucket, eks_cluster, cluster_execution_roles)}
        condition = _condition(condition_scope)
        if condition:
            statement["Condition"] = condition
        statements.append(statement)
    return {"Version": POLICY_VERSION, "Statement": statements}


def render_identity_center(exercised_only=False):
    """The policy of the role the automation assumes in IAM Identity Center's account, when it is elsewhere."""
    statements = []
    for statement in STATEMENTS:
        sid, actions = statement[0], statement[1]
        if sid in IDENTITY_CENTER_STATEMENTS:
            wanted = sorted(set(actions) | (set() if exercised_only else set(NOT_EXERCISED.get(sid, ()))))
            statements.append({"Sid": sid, "Effect": "Allow", "Action": wanted, "Resource": "*"})
    return {"Version": POLICY_VERSION, "Statement": statements}


def size(policy):
    """Characters as IAM counts them against ``MANAGED_POLICY_LIMIT``: the JSON without whitespace."""
    return len(json.dumps(policy, separators=(",", ":")))
