# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""A team's SageMaker Studio execution role (IAM), in as few calls as IAM allows.

The role is named ``naming.studio_execution_role_name(team, prefix)``, trusts
``sagemaker.amazonaws.com`` and carries at most three policies of ours: the inline
policy ``team-data``, which lets the role list and use the team's prefix of the
shared data bucket, ``hyperpod-cluster``, what Studio needs to reach the shared
HyperPod cluster (``cluster_policy``), and ``team-studio``, what Studio's portal does
as the role in the team's domain (``studio_policy``). Every other inline policy and every attached
managed policy is removed (the role's permissions are exactly what this module says).

A run that changes nothing reads six times at most: GetRole (trust policy,
description and tags in one answer), ListRolePolicies, GetRolePolicy for each
policy of ours the role has, and ListAttachedRolePolicies. It writes only what differs.

``plan_present`` / ``plan_absent`` are pure: they turn what was read and what is
wanted into a list of actions, which ``apply`` sends and ``predict`` applies to the
view, so check mode returns what the real run returns.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import re

from urllib.parse import unquote

from ansible_collections.amazon.aws.plugins.module_utils.policy import compare_policies
from ansible_collections.amazon.aws.plugins.module_utils.tagging import (
    ansible_dict_to_boto3_tag_list,
    boto3_tag_list_to_ansible_dict,
    compare_aws_tags,
)

from ansible_collections.hyperpod.tenancy.plugins.module_utils import compare, engine, iam, naming
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import NAME_PREFIX, STATE, TAGS, TEAM_TAGS, known_value, options, team_section
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import result

TEAM_DATA_POLICY = "team-data"
CLUSTER_POLICY = "hyperpod-cluster"
STUDIO_POLICY = "team-studio"
# The inline policies this module writes: (policy name, the key of its document in desired() and view()).
OWN_POLICIES = ((TEAM_DATA_POLICY, "team_data_policy"), (CLUSTER_POLICY, "cluster_policy"), (STUDIO_POLICY, "studio_policy"))
SERVICE_PRINCIPAL = "sagemaker.amazonaws.com"

# Limits of IAM's request shapes (botocore iam service-2: roleNameType, roleDescriptionType,
# tagKeyType, tagValueType, tagListType) and of TagRole (keys starting with aws: are reserved).
ROLE_NAME_PATTERN = naming.IAM_NAME_PATTERN
ROLE_NAME_MAX = 64
# IAM quotas: a role's inline policies together, in characters, whitespace not counted ("IAM and AWS STS quotas").
ROLE_POLICIES_MAX = 10240
DESCRIPTION_MAX = 1000
DESCRIPTION_PATTERN = u"[\u0009\u000A\u000D\u0020-\u007E\u00A1-\u00FF]*"
TAGS_MAX = 50
ACCOUNT_ID_PATTERN = r"\d{12}"
# S3 bucket names (general purpose buckets): 3-63 characters, lower-case letters, digits, dots and
# hyphens, beginning and ending with a letter or digit, no "..", not an IP address.
BUCKET_PATTERN = r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]"

_OWN_KEYS = dict(OWN_POLICIES)


# --- what is wanted -------------------------------------------------------------


def role_name(team, prefix=naming.DEFAULT_PREFIX):
    return naming.studio_execution_role_name(team, prefix)


def role_arn(account_id, name):
    return "arn:aws:iam::%s:role/%s" % (account_id, name)


def trust_policy():
    """Only SageMaker may assume the role."""
    return {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": SERVICE_PRINCIPAL}, "Action": "sts:AssumeRole"}],
    }


def team_data_policy(bucket, team):
    """List the team's prefix of ``bucket`` and read, write and delete its objects; nothing else."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ListTeamPrefix",
                "Effect": "Allow",
                "Action": "s3:ListBucket",
                "Resource": "arn:aws:s3:::%s" % bucket,
                "Condition": {"StringLike": {"s3:prefix": ["%s*" % naming.s3_prefix(team)]}},
            },
            {
                "Sid": "UseTeamObjects",
                "Effect": "Allow",
                "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
                "Resource": "arn:aws:s3:::%s/%s*" % (bucket, naming.s3_prefix(team)),
            },
        ],
    }


def cluster_policy(hyperpod_cluster_arn, eks_cluster_arn):
    """What Studio needs to use the shared HyperPod cluster as the team's execution role, on that cluster only.

    AWS, "Setting up an Amazon EKS cluster in Studio" (sagemaker-hyperpod-studio-setup-eks) gives the
    execution role ``sagemaker:DescribeCluster`` on the HyperPod cluster, ``eks:DescribeCluster``,
    ``eks:AccessKubernetesApi``, ``eks:MutateViaKubernetesApi`` and ``eks:DescribeAddon`` on the EKS cluster and
    ``sagemaker:ListClusters`` (no resource-level permission: ``*``); DescribeAddon is authorized on the add-on's ARN
    (``addon/<cluster>/<name>/<id>``), so the add-ons of that cluster are named too. Inside Kubernetes the
    role's EKS access entry decides (the team's namespace only, ``access_entry``).

    ``eks:MutateViaKubernetesApi``: "Grant AWS services write access to Kubernetes APIs" (EKS User Guide,
    mutate-workloads) says an AWS service's write operations (create, update, delete) on Kubernetes objects need it
    beside ``eks:AccessKubernetesApi`` ("if either permission is missing, write operations will fail"), naming
    HyperPod's deployments from Studio; the Service Authorization Reference for Amazon EKS (list_eks) lists it with the
    resource type ``cluster*`` (condition key ``aws:ResourceTag/${TagKey}``, access level Write), as it lists
    ``AccessKubernetesApi``. Without it Studio reads the team's namespace but submits nothing. What it may write is
    still the access entry's: the team's namespace only.

    Left out, because they cannot be scoped to the cluster or the team: the guide's ``ec2:Describe*``,
    ``cloudwatch:GetMetricData``/``PutMetricData``, ``ecr`` pushes and ``ssm:StartSession`` on ``*``
    (an SSM session reaches a HyperPod node, which runs every team's pods).
    """
    addons = re.sub(r":cluster/([^/]+)$", r":addon/\1/*", eks_cluster_arn)
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "DescribeHyperPodCluster", "Effect": "Allow", "Action": ["sagemaker:DescribeCluster"], "Resource": hyperpod_cluster_arn},
            {
                "Sid": "UseEksCluster",
                "Effect": "Allow",
                "Action": ["eks:AccessKubernetesApi", "eks:DescribeAddon", "eks:DescribeCluster", "eks:MutateViaKubernetesApi"],
                "Resource": [eks_cluster_arn, addons],
            },
            {"Sid": "ListClusters", "Effect": "Allow", "Action": ["sagemaker:ListClusters"], "Resource": "*"},
        ],
    }


# What Studio does as the execution role in the team's domain (studio_policy), by the resource it is authorized on.
STUDIO_SPACE_ACTIONS = ["sagemaker:CreateSpace", "sagemaker:DeleteSpace", "sagemaker:DescribeSpace", "sagemaker:UpdateSpace"]
STUDIO_APP_ACTIONS = ["sagemaker:CreateApp", "sagemaker:DeleteApp", "sagemaker:DescribeApp"]
STUDIO_READ_ACTIONS = {"domain": ["sagemaker:DescribeDomain"], "user_profile": ["sagemaker:DescribeUserProfile"]}
# The domain id: botocore sagemaker DomainId, "d-(-*[a-z0-9]){1,61}".
DOMAIN_ARN_PATTERN = r"arn:aws[a-z-]*:sagemaker:[a-z0-9-]+:\d{12}:domain/d-(-*[a-z0-9]){1,61}"
# botocore sagemaker AppInstanceType (system, ml.t3.medium, ...) and UserProfileName.
STUDIO_INSTANCE_TYPE_PATTERN = r"system|ml\.[a-z0-9-]+\.[a-z0-9]+"
USER_PROFILE_NAME_PATTERN = r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}"


# The instance types a space or app may name when the caller gives none (module option studio_instance_types): ``system``
# only, JupyterServer's one value, which KernelGateway apps run as ml.t3.medium (botocore sagemaker ResourceSpec.InstanceType:
# "JupyterServer apps only support the system value. For KernelGateway apps, the system value is translated to
# ml.t3.medium"). The collection's roles pass the platform's list (team_model, hyperpod_team_limits.studio_instance_types).
DEFAULT_STUDIO_INSTANCE_TYPES = ("system",)


def user_profile_arn(domain_arn, name):
    """The ARN of user profile ``name`` in the domain ``domain_arn``."""
    base, domain_id = domain_arn.split(":domain/", 1)
    return "%s:user-profile/%s/%s" % (base, domain_id, name)


def studio_policy(domain_arn, team, cost_center=None, tag_keys=None, instance_types=None, owners=None, extra_tag_keys=None):
    """What Studio's web portal does as the execution role in an IAM Identity Center domain, in the team's domain only.

    In an SSO domain the portal acts as the domain's execution role ("Understanding domain space permissions and
    execution roles", SageMaker AI Developer Guide): a member's space and its apps are created, described, updated and
    deleted with this role's permissions, and the permission set (team_policy) does not create them. Each action is
    authorized on the resource it names ("Actions, resources, and condition keys for Amazon SageMaker AI", Service
    Authorization Reference): ``space/<domain id>/<space name>`` (CreateSpace, DescribeSpace, UpdateSpace, DeleteSpace),
    ``app/<domain id>/<user profile or space>/<app type>/<app name>`` (CreateApp, DescribeApp, DeleteApp),
    ``user-profile/<domain id>/<name>``, ``domain/<domain id>``. So every statement names the team's domain id, and no
    request on another team's domain matches: a create call, which has no resource tag to be judged by, is held to the
    domain by its ARN alone.

    ``sagemaker:AddTags`` is the creates' dependent action when they carry tags (the reference lists it for CreateSpace;
    for CreateApp an assumption, its row not checked; a domain with tag propagation hands its tags on). It is granted on the domain's spaces and apps only, and
    a request may set the platform's tag keys only to the team's values (``aws:RequestTag``, IfExists: a request without
    them passes): a member cannot give their space another team's ``team`` tag, which that team's permission set would
    then reach (team_policy's tag condition), nor another cost center (chargeback reads it). DeleteTags is not granted.

    Left out: ListSpaces and ListApps (the reference lists no resource type for them: granted on ``*`` they show every
    team's space and app names), and Studio's other features (training jobs, endpoints, ...), which the collection
    does not offer.

    What a member may ask for as the role is held by condition keys the reference lists for CreateSpace, UpdateSpace and
    CreateApp: ``sagemaker:InstanceTypes`` among ``instance_types`` (the platform's list: without it a member runs a space on
    any instance type the account has, outside the team's quota), and ``sagemaker:OwnerUserProfileArn`` among the
    profiles of ``owners`` (the team's current members: a space or app for a profile being removed cannot be made, so
    the domain layer, which runs after this role's layer, removes that profile). Both ``ForAllValues``/``IfExists``: a
    request without the key (Describe, a space without an instance type) is judged by the resource alone. With no
    ``owners`` no request may name an owner. Not held: the space's image and custom file systems (docs/isolation.md,
    "Not covered").

    A tagged request may use only the team's tag keys (``aws:TagKeys``: the platform's ``tag_keys`` and ``extra_tag_keys``,
    the team file's own): IAM's context keys are not case-sensitive, so ``Team: nlp`` beside ``team: vision`` would pass
    the value pins above while SageMaker keeps both tags.

    The profile ARNs take some 80 characters each: a team of about 90 members reaches IAM's limit on a role's inline
    policies (``validate`` refuses it, naming the count).
    """
    base, domain_id = domain_arn.split(":domain/", 1)
    keys = naming.tag_keys_with_defaults(tag_keys)
    pinned = dict(("aws:RequestTag/%s" % key, value) for key, value in naming.team_tags(team, cost_center, tag_keys).items())
    condition = {"StringEqualsIfExists": pinned}
    if not cost_center:
        # No cost center of the team's to pin it to: a request may not set one.
        condition["Null"] = {"aws:RequestTag/%s" % keys["cost_center"]: "true"}
    condition["ForAllValues:StringEquals"] = {"aws:TagKeys": sorted(set(keys.values()).union([naming.MANAGED_BY_TAG[0]], extra_tag_keys or ()))}
    spaces, apps = "%s:space/%s/*" % (base, domain_id), "%s:app/%s/*" % (base, domain_id)
    held = {"ForAllValues:StringEquals": {"sagemaker:InstanceTypes": list(instance_types or DEFAULT_STUDIO_INSTANCE_TYPES)}}
    profiles = sorted(user_profile_arn(domain_arn, name) for name in set(owners or ()))
    if profiles:
        held["ArnEqualsIfExists"] = {"sagemaker:OwnerUserProfileArn": profiles}
    else:
        held["Null"] = {"sagemaker:OwnerUserProfileArn": "true"}
    return {
        "Version": "2012-10-17",
        "Statement": [
            # One statement for spaces and apps: the members' profile ARNs are written once (IAM counts at most 10,240
            # characters of a role's inline policies, ROLE_POLICIES_MAX).
            {"Sid": "TeamSpacesAndApps", "Effect": "Allow", "Action": STUDIO_SPACE_ACTIONS + STUDIO_APP_ACTIONS, "Resource": [spaces, apps], "Condition": held},
            {"Sid": "TeamDomainRead", "Effect": "Allow", "Action": list(STUDIO_READ_ACTIONS["domain"]), "Resource": domain_arn},
            {
                "Sid": "TeamUserProfileRead",
                "Effect": "Allow",
                "Action": list(STUDIO_READ_ACTIONS["user_profile"]),
                "Resource": "%s:user-profile/%s/*" % (base, domain_id),
            },
            {"Sid": "TagOnCreate", "Effect": "Allow", "Action": ["sagemaker:AddTags"], "Resource": [spaces, apps], "Condition": condition},
        ],
    }


def inline_policies(team, bucket=None, hyperpod_cluster_arn=None, eks_cluster_arn=None, domain_arn=None, cost_center=None, tag_keys=None,
                    instance_types=None, owners=None, extra_tag_keys=None):
    """{policy name: document} of the team's role: ``team-data`` with a bucket, ``hyperpod-cluster`` with both clusters,
    ``team-studio`` with the team's domain."""
    policies = {}
    if bucket:
        policies[TEAM_DATA_POLICY] = team_data_policy(bucket, team)
    if hyperpod_cluster_arn and eks_cluster_arn:
        policies[CLUSTER_POLICY] = cluster_policy(hyperpod_cluster_arn, eks_cluster_arn)
    if domain_arn:
        policies[STUDIO_POLICY] = studio_policy(domain_arn, team, cost_center, tag_keys, instance_types, owners, extra_tag_keys)
    return policies


def tag_problems(tags):
    problems = []
    if len(tags) > TAGS_MAX:
        problems.append("a role has at most %d tags, team tags included (got %d)" % (TAGS_MAX, len(tags)))
    return problems + naming.tag_problems(tags)


def bucket_problems(bucket):
    if not re.fullmatch(BUCKET_PATTERN, bucket) or ".." in bucket or re.fullmatch(r"\d+\.\d+\.\d+\.\d+", bucket):
        return ["data_bucket %r is not an S3 bucket name (3 to 63 lower-case letters, digits, dots and hyphens)" % bucket]
    return []


def cluster_problems(hyperpod_cluster_arn, eks_cluster_arn):
    """The two cluster ARNs come together, each of its kind (IAM takes any Resource; a wrong one would grant nothing)."""
    if bool(hyperpod_cluster_arn) != bool(eks_cluster_arn):
        return ["hyperpod_cluster_arn and eks_cluster_arn are given together (policy hyperpod-cluster needs both)"]
    problems = []
    if hyperpod_cluster_arn and not re.fullmatch(r"arn:aws[a-z-]*:sagemaker:[a-z0-9-]+:\d{12}:cluster/[a-z0-9]+", hyperpod_cluster_arn):
        problems.append("hyperpod_cluster_arn %r is not a HyperPod cluster ARN (arn:aws:sagemaker:<region>:<account>:cluster/<id>)" % hyperpod_cluster_arn)
    if eks_cluster_arn and not re.fullmatch(r"arn:aws[a-z-]*:eks:[a-z0-9-]+:\d{12}:cluster/[0-9A-Za-z][A-Za-z0-9_-]*", eks_cluster_arn):
        problems.append("eks_cluster_arn %r is not an EKS cluster ARN (arn:aws:eks:<region>:<account>:cluster/<name>)" % eks_cluster_arn)
    return problems


def desired(params):
    """What the module should make true, from its (validated) parameters."""
    team, prefix = params["team"], params.get("name_prefix") or naming.DEFAULT_PREFIX
    tags = params.get("tags")
    policies = inline_policies(
        team, params.get("data_bucket"), params.get("hyperpod_cluster_arn"), params.get("eks_cluster_arn"),
        params.get("domain_arn"), params.get("cost_center"), params.get("tag_keys"),
        params.get("studio_instance_types"), params.get("studio_owners"), sorted(tags or {}),
    )
    return {
        "role_name": role_name(team, prefix),
        "description": params.get("description"),
        "trust_policy": trust_policy(),
        "team_data_policy": policies.get(TEAM_DATA_POLICY),
        "cluster_policy": policies.get(CLUSTER_POLICY),
        "studio_policy": policies.get(STUDIO_POLICY),
        # Without domain_arn the team-studio policy is left as it is: the domain's id is not known before the domain exists
        # (team_resources converges the role again with it), and a caller that does not know it must not take away the
        # Studio of a team whose domain does exist.
        "leave_policies": [] if params.get("domain_arn") else [STUDIO_POLICY],
        # IAM keeps tag values as strings: compare and predict them as strings.
        "tags": dict((k, "" if v is None else str(v)) for k, v in naming.team_tags(team, params.get("cost_center"), params.get("tag_keys"), tags).items()),
        # Without O(tags) only the team tags are ensured, as in the collection's other modules.
        "purge_tags": bool(params.get("purge_tags", True)) and tags is not None,
    }


def validate(params):
    """Every reason IAM would refuse the role, before any call; raises InputError naming them all."""
    team, prefix = params["team"], params.get("name_prefix") or naming.DEFAULT_PREFIX
    problems = ["team %r: %s" % (team, p) for p in naming.name_problems(team, prefix)]
    name = role_name(team, prefix)
    if len(name) > ROLE_NAME_MAX or not re.fullmatch(ROLE_NAME_PATTERN, name):
        problems.append("gives IAM role name %r, longer than %d characters or outside pattern %s" % (name, ROLE_NAME_MAX, ROLE_NAME_PATTERN))
    if params.get("state", "present") == "present":
        description = params.get("description")
        if description is not None and (len(description) > DESCRIPTION_MAX or not re.fullmatch(DESCRIPTION_PATTERN, description)):
            problems.append("description must be at most %d characters of Latin-1 text (IAM roleDescriptionType)" % DESCRIPTION_MAX)
        if params.get("data_bucket"):
            problems.extend(bucket_problems(params["data_bucket"]))
        problems.extend(cluster_problems(params.get("hyperpod_cluster_arn"), params.get("eks_cluster_arn")))
        if params.get("domain_arn") and not re.fullmatch(DOMAIN_ARN_PATTERN, params["domain_arn"]):
            problems.append("domain_arn %r is not a SageMaker AI domain ARN (arn:aws:sagemaker:<region>:<account>:domain/d-<id>)" % params["domain_arn"])
        problems.extend(tag_problems(naming.team_tags(team, params.get("cost_center"), params.get("tag_keys"), params.get("tags"))))
        for value in params.get("studio_instance_types") or []:
            if not re.fullmatch(STUDIO_INSTANCE_TYPE_PATTERN, value):
                problems.append("studio_instance_types: %r is not a SageMaker AI app instance type (system or ml.<family>.<size>)" % value)
        for value in params.get("studio_owners") or []:
            if not re.fullmatch(USER_PROFILE_NAME_PATTERN, value):
                problems.append("studio_owners: %r is not a SageMaker AI user profile name" % value)
        if not problems:
            size = sum(len(json.dumps(document, separators=(",", ":"))) for document in inline_policies(
                team, params.get("data_bucket"), params.get("hyperpod_cluster_arn"), params.get("eks_cluster_arn"), params.get("domain_arn"),
                params.get("cost_center"), params.get("tag_keys"), params.get("studio_instance_types"), params.get("studio_owners"),
                sorted(params.get("tags") or {}),
            ).values())
            if size > ROLE_POLICIES_MAX:
                problems.append("the role's inline policies would take %d characters, above IAM's %d for a role (the team-studio policy names "
                                "each of the %d studio_owners' profiles)" % (size, ROLE_POLICIES_MAX, len(params.get("studio_owners") or [])))
    account_id = params.get("account_id")
    if account_id and not re.fullmatch(ACCOUNT_ID_PATTERN, account_id):
        problems.append("account_id %r is not a 12-digit AWS account ID" % account_id)
    if problems:
        raise InputError(message="team_execution_role: " + "; ".join(problems))


# --- API helpers ----------------------------------------------------------------


# --- reading, comparing, planning -------------------------------------------------


def policy_document(document):
    """A policy document as a dict, whether the SDK decoded it or IAM's URL-encoded JSON came through."""
    if document is None or isinstance(document, dict):
        return document
    return json.loads(unquote(document))


# What ``read`` and ``view`` take from GetRole's answer, and ``CreateDate`` (as ISO 8601, for the role's access entry,
# access_entry.stale_reason): what team_resources hands on as the layer's ``known.role``.
ROLE_FIELDS = ("RoleName", "Arn", "Description", "AssumeRolePolicyDocument", "Tags", "CreateDate")


def known_role(role):
    """GetRole's answer (or None) as the layer's ``known.role`` takes it: ``{"role": its ROLE_FIELDS or None}``."""
    return {"role": dict((key, compare.iso_date(role[key])) for key in ROLE_FIELDS if key in role) if role else None}


def read(client, name, known=None):
    """The role with its policies, or None: the reads of a run that changes nothing.

    GetRolePolicy is called only for the policies of ours (``OWN_POLICIES``) that the role has. ``known`` is
    ``{"role": GetRole's answer or None}`` read earlier in the run (shared_info's, for its owner check): no GetRole then.
    """
    role = iam.get_role(client, RoleName=name) if known is None else known.get("role")
    if role is None:
        return None
    inline = sorted(iam.list_role_policies(client, RoleName=name))
    current = {"role": role, "inline_policies": inline}
    for policy_name, key in OWN_POLICIES:
        current[key] = policy_document(iam.get_role_policy(client, RoleName=name, PolicyName=policy_name)) if policy_name in inline else None
    current["attached_policies"] = sorted(p["PolicyArn"] for p in iam.list_attached_role_policies(client, RoleName=name))
    return current


def view(current):
    """The snake_case view of a read role (``diff`` and the module's ``role``); {} when it does not exist."""
    if not current:
        return {}
    role = current["role"]
    return {
        "role_name": role["RoleName"],
        "arn": role["Arn"],
        "description": role.get("Description"),
        "assume_role_policy_document": policy_document(role.get("AssumeRolePolicyDocument")),
        "tags": boto3_tag_list_to_ansible_dict(role.get("Tags") or []),
        "inline_policies": list(current["inline_policies"]),
        "team_data_policy": current["team_data_policy"],
        "cluster_policy": current["cluster_policy"],
        "studio_policy": current["studio_policy"],
        "attached_policies": list(current["attached_policies"]),
    }


def plan_present(before, want):
    """The writes that turn ``before`` (a view, {} when the role does not exist) into ``want``, in order.

    Each action is a tuple whose first item names it. Empty when nothing differs. A policy of ours
    whose document ``want`` lacks (or has as None) is not wanted.
    """
    name = want["role_name"]
    wanted = [(policy_name, want.get(key)) for policy_name, key in OWN_POLICIES if want.get(key) is not None]
    if not before:
        actions = [("create_role", name, want["trust_policy"], want["description"], dict(want["tags"]))]
        return actions + [("put_role_policy", policy_name, document) for policy_name, document in wanted]
    actions = []
    if compare_policies(before["assume_role_policy_document"] or {}, want["trust_policy"]):
        actions.append(("update_assume_role_policy", want["trust_policy"]))
    if want["description"] is not None and want["description"] != (before["description"] or ""):
        actions.append(("update_role_description", want["description"]))
    to_set, to_unset = compare_aws_tags(before["tags"], want["tags"], purge_tags=want["purge_tags"])
    if to_unset:
        actions.append(("untag_role", sorted(to_unset)))
    if to_set:
        actions.append(("tag_role", to_set))
    keep = set(policy_name for policy_name, _document in wanted) | set(want.get("leave_policies") or ())
    for policy_name in before["inline_policies"]:
        if policy_name not in keep:
            actions.append(("delete_role_policy", policy_name))
    for arn in before["attached_policies"]:
        actions.append(("detach_role_policy", arn))
    held = dict((policy_name, before.get(key)) for policy_name, key in OWN_POLICIES)
    for policy_name, document in wanted:
        if policy_name not in before["inline_policies"] or held[policy_name] is None or compare_policies(held[policy_name], document):
            actions.append(("put_role_policy", policy_name, document))
    return actions


def plan_absent(before):
    """Inline policies deleted and managed policies detached first: IAM refuses to delete a role that has any."""
    if not before:
        return []
    actions = [("delete_role_policy", p) for p in before["inline_policies"]]
    actions += [("detach_role_policy", arn) for arn in before["attached_policies"]]
    actions.append(("delete_role", before["role_name"]))
    return actions


def predict(before, actions, arn=None):
    """The view after ``actions``; ``arn`` is the ARN of a role that ``create_role`` makes."""
    after = copy.deepcopy(before) if before else {}
    for action in actions:
        kind = action[0]
        if kind == "create_role":
            after = {
                "role_name": action[1],
                "arn": arn,
                "description": action[3],
                "assume_role_policy_document": copy.deepcopy(action[2]),
                "tags": dict(action[4]),
                "inline_policies": [],
                "team_data_policy": None,
                "cluster_policy": None,
                "studio_policy": None,
                "attached_policies": [],
            }
        elif kind == "update_assume_role_policy":
            after["assume_role_policy_document"] = copy.deepcopy(action[1])
        elif kind == "update_role_description":
            after["description"] = action[1]
        elif kind == "untag_role":
            after["tags"] = dict((k, v) for k, v in after["tags"].items() if k not in action[1])
        elif kind == "tag_role":
            after["tags"] = dict(after["tags"], **action[1])
        elif kind == "delete_role_policy":
            after["inline_policies"] = [p for p in after["inline_policies"] if p != action[1]]
            if action[1] in _OWN_KEYS:
                after[_OWN_KEYS[action[1]]] = None
        elif kind == "detach_role_policy":
            after["attached_policies"] = [p for p in after["attached_policies"] if p != action[1]]
        elif kind == "put_role_policy":
            after["inline_policies"] = sorted(set(after["inline_policies"]) | set([action[1]]))
            after[_OWN_KEYS[action[1]]] = copy.deepcopy(action[2])
        elif kind == "delete_role":
            after = {}
    return after


def apply(client, name, actions):
    """Send ``actions``; returns the role CreateRole returned, if it ran."""
    created = None
    for action in actions:
        kind = action[0]
        if kind == "create_role":
            request = {"RoleName": action[1], "AssumeRolePolicyDocument": json.dumps(action[2]), "Tags": ansible_dict_to_boto3_tag_list(action[4])}
            if action[3] is not None:
                request["Description"] = action[3]
            created = iam.create_role(client, **request)
        elif kind == "update_assume_role_policy":
            iam.update_assume_role_policy(client, RoleName=name, PolicyDocument=json.dumps(action[1]))
        elif kind == "update_role_description":
            # Always send Description: an UpdateRole without it must not be taken to mean "no description".
            iam.update_role(client, RoleName=name, Description=action[1])
        elif kind == "untag_role":
            iam.untag_role(client, RoleName=name, TagKeys=list(action[1]))
        elif kind == "tag_role":
            iam.tag_role(client, RoleName=name, Tags=ansible_dict_to_boto3_tag_list(action[1]))
        elif kind == "delete_role_policy":
            iam.delete_role_policy(client, RoleName=name, PolicyName=action[1])
        elif kind == "detach_role_policy":
            iam.detach_role_policy(client, RoleName=name, PolicyArn=action[1])
        elif kind == "put_role_policy":
            iam.put_role_policy(client, RoleName=name, PolicyName=action[1], PolicyDocument=json.dumps(action[2]))
        elif kind == "delete_role":
            iam.delete_role(client, RoleName=name)
    return created


# --- ensure ---------------------------------------------------------------------


def owner_problem(team, arn, tags, tag_keys=None, adopt=False):
    """Why the team's existing execution role ``arn`` (with ``tags``, a dict) must not be changed for ``team``; None when it may.

    The rule is naming.ownership_problem's; this layer's check and shared_info's check of every team before the
    run's first write both ask here.
    """
    return naming.ownership_problem("IAM role %s" % arn, team, tags, tag_keys, adopt, "execution_role")


def check_owner(before, params, adopt=False):
    """Refuse an existing role (its ``view``) this collection did not make for the team (``owner_problem``)."""
    problem = owner_problem(params["team"], before["arn"], before["tags"], params.get("tag_keys"), adopt)
    if problem:
        raise InputError(message=problem)


class ExecutionRole(engine.Resource):
    """An IAM role of the team's (Studio's execution role, its pods' role), as the engine converges it: ``raw`` is the
    role's ``view`` (None when there is none), and what a write makes is known without reading it back (``predict``).

    ``want`` is ``desired``'s (None to delete); ``account_id`` a callable, asked only for a new role's ARN in check
    mode; ``owner(view)`` refuses an existing role that is not the team's; ``before``, the role's ``view`` when the
    caller already read it ({} for none), is not read again. ``known`` (``read``'s) spares GetRole; a write is planned
    from a new read. Deleting refuses, before any write, a role that is in an instance profile: instance profiles
    belong to whoever made them, this module never removes the role from one, and IAM refuses to delete a role that is
    still in one (DeleteConflict).
    """

    label = "IAM role"

    def __init__(self, client, name, check_mode, want=None, account_id=None, owner=None, before=None, known=None):
        super(ExecutionRole, self).__init__(client, {"wait": False}, check_mode)
        self.name, self.want, self.account_id, self.owner, self.given, self.known = name, want, account_id, owner, before, known
        # The writes planned (plan_present's), the role as they leave it, and CreateRole's answer.
        self.actions, self.wanted, self.created = [], None, None

    def read(self, fresh=False):
        if self.given is not None and not fresh:
            return self.given or None
        return view(read(self.client, self.name, None if fresh else self.known)) or None

    def copied(self, raw):
        return self.known is not None

    def owned(self, raw):
        if self.owner is not None:
            self.owner(raw)
        if self.want is None:
            profiles = iam.list_instance_profiles_for_role(self.client, RoleName=self.name)
            if profiles:
                raise InputError(
                    message="team_execution_role: role %s is in instance profile(s) %s; IAM cannot delete it until it is removed from them"
                    % (self.name, ", ".join(sorted(p["InstanceProfileName"] for p in profiles)))
                )

    def view(self, raw):
        return raw

    def desired(self, raw):
        self.actions = plan_present(raw or {}, self.want)
        # A new role's ARN: predicted in check mode, CreateRole's answer otherwise (read_back).
        new_arn = role_arn(self.account_id(), self.name) if raw is None and self.check_mode else None
        self.wanted = predict(raw or {}, self.actions, raw["arn"] if raw is not None else new_arn)
        return self.wanted

    def moves(self, raw, desired):
        return bool(self.actions)

    def predict(self, raw, desired):
        return desired

    def create(self, desired):
        self.created = apply(self.client, self.name, self.actions)

    def update(self, raw, desired):
        apply(self.client, self.name, self.actions)
        return False

    def read_back(self, handle, settle):
        return dict(self.wanted, arn=self.created["Arn"]) if self.created else self.wanted

    def delete(self, raw):
        apply(self.client, self.name, plan_absent(raw))
        return True

    def result(self, raw):
        return raw


def plan_revoke(before):
    """Every permission of the role taken away, the role kept: ``plan_absent`` without ``delete_role``."""
    return [action for action in plan_absent(before) if action[0] != "delete_role"]


def _owned_view(client, name, owner, before):
    """The role's view (``before``, or read now); {} when there is none; ``owner`` checks one that exists."""
    if before is None:
        before = view(read(client, name))
    if before and owner is not None:
        owner(before)
    return before


def ensure_revoked(client, name, check_mode, owner=None, before=None):
    """(changed, before, after): the role's inline policies deleted and managed policies detached, the role kept.

    Offboarding does this before it deletes the team's spaces and domain: every member can run code as the role (Studio's
    portal acts as it), and a running app's session keeps what the role grants after Identity Center access is revoked;
    with the role's team-studio policy a member could make spaces faster than offboarding deletes them."""
    before = _owned_view(client, name, owner, before)
    if not before:
        return False, {}, {}
    actions = plan_revoke(before)
    if not actions:
        return False, before, before
    if not check_mode:
        apply(client, name, actions)
    return True, before, predict(before, actions)


# The keyword arguments of team_execution_role's AnsibleAWSModule (and of team_resources' execution_role).
MODULE_OPTIONS = options(
    dict(
        team=dict(type="str", required=True),
        description=dict(type="str"),
        data_bucket=dict(type="str"),
        hyperpod_cluster_arn=dict(type="str"),
        eks_cluster_arn=dict(type="str"),
        domain_arn=dict(type="str"),
        studio_instance_types=dict(type="list", elements="str"),
        studio_owners=dict(type="list", elements="str"),
        account_id=dict(type="str"),
        adopt=dict(type="bool", default=False),
        revoke_only=dict(type="bool", default=False),
    ),
    STATE, NAME_PREFIX, TEAM_TAGS, TAGS,
)
# What shared_info read of the role earlier in the run (team_resources' ``known``): ``known_role``'s answer.
KNOWN = dict(role=dict(type="dict"))
# The team file's workspace.enabled (docs/team-file.md): whether the team has a Studio, this role first, then the domain
# and Studio's access entry (team_layer_args); sagemaker_domain declares the section's other keys.
TEAM_FILE_SECTION = team_section("workspace", MODULE_OPTIONS, ("enabled",), own=dict(enabled=dict(type="bool", default=True)))


# What can be refused without a call (the team name, description, tags, bucket); raises ``InputError``.
check = validate


def converge(context, params):
    """The result of team_execution_role: the role after the run."""
    check(params)
    client = context.client("iam")
    if params["state"] == "absent" and params.get("revoke_only"):
        changed, before, after = ensure_revoked(
            client, role_name(params["team"], params["name_prefix"]), context.check_mode, owner=lambda before: check_owner(before, params)
        )
    elif params["state"] == "absent":
        name = role_name(params["team"], params["name_prefix"])
        changed, before, after = engine.ensure_absent(
            ExecutionRole(client, name, context.check_mode, owner=lambda before: check_owner(before, params)), context.check_mode
        )[:3]
    else:
        want = desired(params)
        changed, before, after = engine.ensure_present(ExecutionRole(
            client, want["role_name"], context.check_mode, want, account_id=lambda: params["account_id"] or context.account_id(),
            owner=lambda before: check_owner(before, params, params["adopt"]), known=known_value(params, "role"),
        ), context.check_mode)[:3]
    return result(changed, before, after, role=after)
