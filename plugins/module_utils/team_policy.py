# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The inline policy of a team's permission set: the shared cluster, the team's Studio, the team's S3 prefix.

What a member of team ``T`` may do with the credentials of ``T``'s permission set:

- see the shared clusters: ``eks:DescribeCluster`` on the EKS cluster (``aws eks update-kubeconfig``),
  ``sagemaker:DescribeCluster``/``ListClusterNodes``/``DescribeClusterNode`` on the HyperPod cluster.
  Inside Kubernetes, the EKS access entry decides (namespace ``hyperpod-ns-T`` only);
- connect as the HyperPod CLI does (``hyp set-cluster-context``, sagemaker-hyperpod 3.12.0,
  ``sagemaker/hyperpod/cli/commands/cluster.py`` and ``cli/cluster_utils.py``): ``sts:GetCallerIdentity`` (no
  permission needed), ``sagemaker:DescribeCluster`` (above), ``iam:GetRole`` of the caller's own role (its ARN with the
  path: without it the CLI guesses the ARN without ``/aws-reserved/sso.amazonaws.com/``, whose access entry does not
  exist), ``eks:DescribeAccessEntry`` of that ARN (the CLI stops when it is refused) and ``aws eks update-kubeconfig``
  (``eks:DescribeCluster``). Both reads are held to the team's own role and own access entry: the role name pattern of
  the team's permission set (``AWSReservedSSO_<prefix>-T_`` and Identity Center's 16-character suffix, as ``?``
  wildcards: a team name holds no ``_`` and the suffix has a length, so neither another team's role nor a platform
  permission set named ``<prefix>-T_<anything>`` matches), in the access entry's ARN on the shared EKS cluster only
  ("access-entry/${ClusterName}/${IamIdentityType}/${IamIdentityAccountID}/${IamIdentityName}/${UUID}", Service Authorization Reference for Amazon EKS,
  https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonelastickubernetesservice.html;
  ``IamIdentityName`` taken to be the role's name without its path, an assumption the reference does not settle).
  Not granted: ``eks:ListAccessEntries``, which would show every team's principal;
- use the team's SageMaker AI domain, user profiles, spaces and apps. Their ARNs carry the domain
  *id* (``domain/d-xxxx``, ``user-profile/d-xxxx/alice``), which does not exist before the domain
  does, so they cannot be named here. Every team resource carries the team tag
  (``naming.team_tags``), and SageMaker authorizes these actions on the resource's tags, so the
  statement allows them on any domain/user-profile/space/app whose ``aws:ResourceTag/<team key>``
  is ``T``. That includes ``CreatePresignedDomainUrl``, which is authorized on the *user profile*:
  only the team's own profiles can be opened.
  Not granted: creating spaces and apps (in an SSO domain Studio creates them with the domain's
  execution role, whose ``team-studio`` policy names the team's domain id, execution_role.studio_policy;
  for a create call the only team evidence here is a request tag the caller chooses, which would let
  ``T`` create apps in another team's domain), and any tagging call (re-tagging another team's resource
  with ``T`` would be a way in);
- read and write ``s3://<bucket>/T/*``, and list the bucket only under the prefix ``T/``
  (``s3:prefix`` is ``T/`` or starts with ``T/``; ``T/`` keeps team ``vis`` out of team ``vision``'s prefix).

Nothing in the policy names another team; ``tests/unit/plugins/module_utils/test_team_policy.py``
evaluates each team's policy against another team's resources.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils import naming
from ansible_collections.hyperpod.tenancy.plugins.module_utils.iam import SSO_ROLE_PATH

POLICY_VERSION = "2012-10-17"

CLUSTER_READ_ACTIONS = ["sagemaker:DescribeCluster", "sagemaker:DescribeClusterNode", "sagemaker:ListClusterNodes"]
EKS_READ_ACTIONS = ["eks:DescribeCluster"]
# What hyp set-cluster-context reads of the caller's own role and access entry (the module's docstring).
OWN_ACCESS_ENTRY_ACTIONS = ["eks:DescribeAccessEntry"]
OWN_ROLE_ACTIONS = ["iam:GetRole"]
LIST_CLUSTERS_ACTIONS = ["eks:ListClusters", "sagemaker:ListClusters"]
STUDIO_ACTIONS = [
    "sagemaker:CreatePresignedDomainUrl",
    "sagemaker:DeleteApp",
    "sagemaker:DeleteSpace",
    "sagemaker:DescribeApp",
    "sagemaker:DescribeDomain",
    "sagemaker:DescribeSpace",
    "sagemaker:DescribeUserProfile",
    "sagemaker:ListTags",
    "sagemaker:UpdateSpace",
]
OBJECT_ACTIONS = ["s3:AbortMultipartUpload", "s3:DeleteObject", "s3:GetObject", "s3:ListMultipartUploadParts", "s3:PutObject"]


def _studio_arns(partition, region, account_id):
    base = "arn:%s:sagemaker:%s:%s:" % (partition, region, account_id)
    return [base + "app/*", base + "domain/*", base + "space/*", base + "user-profile/*"]


def own_role_arns(team, account_id, prefix=naming.DEFAULT_PREFIX, partition="aws"):
    """The ARN patterns of the role Identity Center makes for ``team``'s permission set, with its path (iam.SSO_ROLE_PATH),
    or a Region's directory under it ("*/": an assumption, no AWS page read here states which an account's roles use)."""
    base, name = "arn:%s:iam::%s:role%s" % (partition, account_id, SSO_ROLE_PATH), naming.sso_role_name_wildcard(team, prefix)
    return [base + name, base + "*/" + name]


def own_access_entry_arn(team, account_id, eks_cluster_arn, prefix=naming.DEFAULT_PREFIX):
    """The ARN pattern of the access entry of ``team``'s permission set role on the EKS cluster ``eks_cluster_arn``."""
    head, cluster = eks_cluster_arn.split(":cluster/", 1)
    return "%s:access-entry/%s/role/%s/%s/*" % (head, cluster, account_id, naming.sso_role_name_wildcard(team, prefix))


def render_team_policy(
    team, account_id, region, data_bucket, hyperpod_cluster_arn, eks_cluster_arn, tag_keys=None, partition="aws", name_prefix=naming.DEFAULT_PREFIX
):
    """The inline policy document (a dict) of ``team``'s permission set (named with ``name_prefix``)."""
    problems = naming.name_problems(team)
    if problems:
        raise ValueError("team %r %s" % (team, "; ".join(problems)))
    keys = naming.tag_keys_with_defaults(tag_keys)
    prefix = naming.s3_prefix(team)
    bucket_arn = "arn:%s:s3:::%s" % (partition, data_bucket)
    return {
        "Version": POLICY_VERSION,
        "Statement": [
            {"Sid": "SharedHyperPodClusterRead", "Effect": "Allow", "Action": list(CLUSTER_READ_ACTIONS), "Resource": hyperpod_cluster_arn},
            {"Sid": "SharedEksClusterRead", "Effect": "Allow", "Action": list(EKS_READ_ACTIONS), "Resource": eks_cluster_arn},
            {"Sid": "ListClusters", "Effect": "Allow", "Action": list(LIST_CLUSTERS_ACTIONS), "Resource": "*"},
            {
                "Sid": "TeamStudio",
                "Effect": "Allow",
                "Action": list(STUDIO_ACTIONS),
                "Resource": _studio_arns(partition, region, account_id),
                "Condition": {"StringEquals": {"aws:ResourceTag/%s" % keys["team"]: team}},
            },
            {"Sid": "TeamDataObjects", "Effect": "Allow", "Action": list(OBJECT_ACTIONS), "Resource": "%s/%s*" % (bucket_arn, prefix)},
            {
                "Sid": "TeamDataListing",
                "Effect": "Allow",
                "Action": ["s3:ListBucket"],
                "Resource": bucket_arn,
                "Condition": {"StringLike": {"s3:prefix": [prefix, prefix + "*"]}},
            },
            {
                "Sid": "OwnAccessEntryRead",
                "Effect": "Allow",
                "Action": list(OWN_ACCESS_ENTRY_ACTIONS),
                "Resource": own_access_entry_arn(team, account_id, eks_cluster_arn, name_prefix),
            },
            {"Sid": "OwnRoleRead", "Effect": "Allow", "Action": list(OWN_ROLE_ACTIONS), "Resource": own_role_arns(team, account_id, name_prefix, partition)},
        ],
    }
