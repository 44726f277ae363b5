"""A generated corpus of widenings: statements added to one team principal's policies, each labelled by construction.

Pure data: nothing here evaluates a policy. Each ``Widening`` is one more identity policy for one principal of
test_isolation_matrix's account (vision's three principals, and nlp's for the grants of issue 37), labelled

- ``leak``: some request it allows reaches another team's resource (nlp, research, vis) or a shared resource beyond
  ``isolation.SHARED_ALLOWED``; ``owners`` are owners it surely reaches (at least those), ``spared`` owners it cannot
  reach (a Deny covers them, or the pattern names none of their ARNs);
- ``benign``: every request it allows is inside the principal's own team (``bucket/vision/sub/*``, the team's tag, its
  own quota, budget, roles by ARN) or is a read SHARED_ALLOWED lists for that principal, or its condition cannot hold
  for that principal (``why`` says so).

The label comes from what AWS documents and from the sample account's resources (the same as
test_isolation_matrix's ``_resources()``): the present teams are nlp, research, vis and vision; the data bucket's shared
places are its root (every key under no present team's prefix: ``vision2/x``, ``Vision/x``, ``readme.txt``, the key
``vision`` itself), ``_hyperpod/`` and its ``lifecycle/`` and ``owners/`` folders, ``lifecycle/`` and ``retired/``; a
Studio resource carries its team's tag or none (made before the tag or by hand); a listing of another team's prefix is
any ``s3:prefix`` that shows its keys ("", "n", ..., "nlp", "nlp/...") or none at all, and the listing of the root any
``s3:prefix`` that shows a root key's name (every one but those under a present team's prefix: "R", "vision", "nlpx").
Each team's Studio domain has a home EFS file system, which the platform does not tag; the Prometheus workspace the usage
reports read, and the roles the HyperPod cluster runs as (``HyperPodClusterExecution``, ``HyperPodClusterAutoscaling``),
are shared.

AWS behaviour the labels rely on, as documented:

- Resource ARNs and S3 keys are matched as written, case-sensitively, ``*`` spanning ``/`` ("IAM JSON policy elements:
  Resource", reference_policies_elements_resource.html): ``bucket/*vision/*`` matches ``nlp/vision/x``;
  ``bucket/vision/../nlp/x`` is a key under ``vision/``. An S3 object's ARN has an empty region and account
  (``arn:aws:s3:::bucket/key``, "Policy resources for Amazon S3", S3 User Guide).
- A key missing from the request makes a condition false, but a negated operator (``StringNotEquals``, ``ArnNotLike``,
  ...) true, ``...IfExists`` true, and ``Null: true`` true ("IAM JSON policy elements: Condition operators",
  reference_policies_elements_condition_operators.html).
- ``ForAllValues`` is true when the key is missing; ``ForAnyValue`` false ("Set operators for multivalued context keys",
  reference_policies_condition-single-vs-multi-valued-context-keys.html).
- A role session has ``aws:PrincipalArn`` = the role's ARN, ``aws:PrincipalType`` = ``AssumedRole``, the account in
  ``aws:PrincipalAccount``, and no ``aws:username`` ("AWS global condition context keys",
  reference_policies_condition-keys.html); session tags may set any ``aws:PrincipalTag/`` ("Passing session tags in AWS
  STS", id_session-tags.html): the unit harness has no trust policies, so every principal
  counts as session-taggable unless an entry's ``spec`` says ``session_tags: False``.
- A policy variable with no value makes a Resource entry match nothing, a positive condition operator match nothing and
  a negated one match; ``${key, 'default'}`` takes the default; ``${*}``, ``${?}``, ``${$}`` are the literal characters
  ("IAM policy elements: Variables and tags", reference_policies_variables.html).

Keys AWS sets on every request but the evaluator leaves free on purpose (aws:RequestedRegion, aws:CurrentTime,
aws:SourceIp, ...) are only used with conditions some real request meets: ``Null aws:RequestedRegion: true`` would be
benign in AWS and reported by a sound over-approximation, which is no finding.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ansible_collections.hyperpod.tenancy.plugins.module_utils import isolation, naming

from tests.unit.plugins.module_utils.sample_account import ACCOUNT, BUCKET, EKS_ARN, HYPERPOD_ARN, PLATFORM_ROLES, PROMETHEUS_ID, REGION
from tests.unit.plugins.module_utils.test_isolation_matrix import BUCKET_ARN, SM, _found, _principals

LEAK, BENIGN = "leak", "benign"
SHARED = isolation.SHARED_OWNER
TEAM = "vision"
OTHERS = frozenset(("nlp", "research", "vis"))
EVERYONE = OTHERS | {SHARED}
KINDS = ("permission_set", "execution_role", "pod_identity")
ARNS = {p["id"]: p["arn"] for p in _principals()}

B = BUCKET_ARN
ROLE = f"arn:aws:iam::{ACCOUNT}:role/"
BUDGET = f"arn:aws:budgets::{ACCOUNT}:budget/"
PERMISSION_SET = "arn:aws:sso:::permissionSet/ssoins-0123456789abcdef/"
QUOTA = f"{SM}:compute-quota/"
ACCESS_ENTRY = f"arn:aws:eks:{REGION}:{ACCOUNT}:access-entry/ml-shared-eks/"
DOMAIN = _found(TEAM)["domain_id"]
OWN_QUOTA = QUOTA + _found(TEAM)["compute_quota_id"]
TAG = "aws:ResourceTag/team"
OTHER_ACCOUNT = "999999999999"


@dataclass(frozen=True)
class Widening:
    family: str
    name: str
    principal: str  # the principal id of test_isolation_matrix: "vision/permission_set"
    document: dict  # the policy added as one more identity policy
    label: str
    owners: frozenset = frozenset()
    spared: frozenset = frozenset()
    spec: dict = field(default_factory=dict)  # more of the principal's spec: "tags", "session_tags"
    why: str = ""

    @property
    def id(self) -> str:
        return f"{self.family}: {self.name} [{self.principal}]"


def _policy(*statements) -> dict:
    return {"Version": "2012-10-17", "Statement": list(statements)}


def _allow(action, resource, condition=None, element="Resource", action_element="Action") -> dict:
    statement = {"Effect": "Allow", action_element: action, element: resource}
    if condition is not None:
        statement["Condition"] = condition
    return statement


def _deny(action, resource, condition=None, element="Resource", action_element="Action") -> dict:
    return dict(_allow(action, resource, condition, element, action_element), Effect="Deny")


def _leak(family, name, principal, document, owners, spared=(), spec=None, why="") -> Widening:
    return Widening(family, name, principal, document, LEAK, frozenset(owners), frozenset(spared), dict(spec or {}), why)


def _benign(family, name, principal, document, spec=None, why="") -> Widening:
    return Widening(family, name, principal, document, BENIGN, spec=dict(spec or {}), why=why)


def _of(kind, team=TEAM) -> str:
    return f"{team}/{kind}"


def _rotated(index, offset=0) -> str:
    """A principal of vision's by turns: each family spreads its entries over the three."""
    return _of(KINDS[(index + offset) % len(KINDS)])


def _entries(family, cases, offset=0):
    """Entries from (name, document, owners or None for benign, spared, why), each on one of vision's principals by turns."""
    found = []
    for index, (name, document, owners, spared, why) in enumerate(cases):
        principal = _rotated(index, offset)
        if owners is None:
            found.append(_benign(family, name, principal, document, why=why))
        else:
            found.append(_leak(family, name, principal, document, owners, spared, why=why))
    return found


# --- resource patterns: narrower and wider, inside and across the team prefixes, for each action family ---------------

_OBJECT_ACTIONS = (
    "s3:GetObject",
    "s3:PutObject",
    "s3:DeleteObject",
    "s3:GetObjectVersion",
    "s3:PutObjectTagging",
    "s3:AbortMultipartUpload",
    "s3:GetObject*",
    "s3:*Object",
    "s3:RestoreObject",
    "s3:*",
)
_ROOT_ONLY = "a key of the bucket's root (no present team's prefix holds it), which is a shared place"
# (pattern, owners or None, spared, why)
_OBJECT_PATTERNS = (
    (f"{B}/vision/*", None, (), "the team's own prefix, granted again"),
    (f"{B}/vision/datasets/*", None, (), ""),
    (f"{B}/vision/sub/*", None, (), ""),
    (f"{B}/vision/datasets/train.parquet", None, (), ""),
    (f"{B}/vision/*/checkpoints/*", None, (), ""),
    (f"{B}/vision/?*", None, (), ""),
    (f"{B}/vision/*.parquet", None, (), ""),
    (f"{B}/vision/nlp/*", None, (), "a folder named after another team inside vision's prefix is vision's"),
    (f"{B}/vision/../nlp/*", None, (), "IAM matches the key as written: 'vision/../nlp/x' is a key under vision/"),
    (f"{B}/vision/", None, (), "the folder marker key of vision's prefix"),
    (f"arn:aws:s3:*:*:{BUCKET}/vision/*", None, (), "S3 ARNs have an empty region and account, which * matches"),
    (f"{B}-archive/*", None, (), "another bucket, no team's or platform's place"),
    ("arn:aws:s3:::other-bucket/nlp/*", None, (), "nlp/ of another bucket, not of the data bucket"),
    (f"{B}/nlp/datasets/*", {"nlp"}, {"research", "vis", SHARED}, ""),
    (f"{B}/nlp/*", {"nlp"}, {"research", "vis", SHARED}, ""),
    (f"{B}/research/*", {"research"}, {"nlp", "vis", SHARED}, ""),
    (f"{B}/vis/*", {"vis"}, {"nlp", "research", SHARED}, "vis is a prefix of vision's name, not of its prefix vision/"),
    (f"{B}/vis/datasets/*", {"vis"}, {"nlp", "research", SHARED}, ""),
    (f"{B}/v*", {"vis", SHARED}, {"nlp", "research"}, "vis/ and root keys such as vx/"),
    (f"{B}/vi?/*", {"vis", SHARED}, {"nlp", "research"}, "vis/ and root keys such as vix/"),
    (f"{B}/vis*", {"vis", SHARED}, {"nlp", "research"}, "vis/ and root keys such as visual/"),
    (f"{B}/*/datasets/*", EVERYONE, (), ""),
    (f"{B}/?lp/*", {"nlp", SHARED}, {"research", "vis"}, "nlp/ and root keys such as xlp/"),
    (f"{B}/vision*", {SHARED}, OTHERS, "no present team's prefix but vision/ starts with 'vision': it reaches only root keys (vision2/x)"),
    (f"{B}/Vision/*", {SHARED}, OTHERS, "keys are case-sensitive: Vision/x is " + _ROOT_ONLY),
    (f"{B}/vision", {SHARED}, OTHERS, "the key 'vision' is not under 'vision/': " + _ROOT_ONLY),
    (f"{B}/research", {SHARED}, OTHERS, "the key 'research' is not under 'research/': " + _ROOT_ONLY),
    (f"{B}/readme.txt", {SHARED}, OTHERS, _ROOT_ONLY),
    (f"{B}/*", EVERYONE, (), ""),
    (f"{B}*", EVERYONE, (), ""),
    (f"{B}/{naming.PLATFORM_PREFIX}*", {SHARED}, OTHERS, "the platform's prefix"),
    (f"{B}/{naming.LIFECYCLE_PREFIX}on_create.sh", {SHARED}, OTHERS, "the lifecycle script every node runs as root"),
    (f"{B}/retired/*", {SHARED}, OTHERS, "a retired team's prefix"),
    (f"{B}/lifecycle/*", {SHARED}, OTHERS, "the lifecycle folder of before the platform prefix"),
    (f"{B}/*vision/*", EVERYONE, (), "* spans '/': nlp/vision/x"),
    (f"{B}/*/vision/*", EVERYONE, (), "nlp/vision/x"),
    (f"{B}/n*", {"nlp", SHARED}, {"research", "vis"}, ""),
    ("arn:aws:s3:::*/nlp/*", EVERYONE, (), "* spans '/': hyperpod-team-data/research/nlp/x"),
    ("arn:aws:s3:::*", EVERYONE, (), ""),
    ("*", EVERYONE, (), ""),
    (f"{B}/nlp/../vision/*", {"nlp"}, {"research", "vis", SHARED}, "IAM matches the key as written: 'nlp/../vision/x' is under nlp/"),
    ([f"{B}/vision/*", f"{B}/nlp/models/*"], {"nlp"}, {"research", "vis", SHARED}, "one of two resources is nlp's"),
)


def _object_patterns():
    found = []
    for index, (pattern, owners, spared, why) in enumerate(_OBJECT_PATTERNS):
        action = _OBJECT_ACTIONS[index % len(_OBJECT_ACTIONS)]
        name = f"{action} on {pattern}"
        document = _policy(_allow(action, pattern))
        if owners is None:
            found.append(_benign("resource_patterns", name, _rotated(index), document, why=why))
        else:
            found.append(_leak("resource_patterns", name, _rotated(index), document, owners, spared, why=why))
    return found


# The shared clusters' reads: benign exactly for the principals SHARED_ALLOWED gives them to (shared kind, action, resource).
_CLUSTER_READS = (
    ("eks_cluster", "eks:DescribeCluster", EKS_ARN),
    ("eks_cluster", "eks:DescribeCluster", f"arn:aws:eks:{REGION}:{ACCOUNT}:cluster/*"),
    ("eks_cluster", "eks:DescribeCluster", "*"),
    ("eks_cluster", "eks:AccessKubernetesApi", EKS_ARN),
    ("eks_cluster", "eks:MutateViaKubernetesApi", EKS_ARN),
    ("eks_addon", "eks:DescribeAddon", f"arn:aws:eks:{REGION}:{ACCOUNT}:addon/ml-shared-eks/*"),
    ("eks_cluster", "eks:ListAddons", EKS_ARN),
    ("eks_cluster", "eks:ListAccessEntries", EKS_ARN),
    ("eks_cluster", "eks:ListPodIdentityAssociations", EKS_ARN),
    ("hyperpod_cluster", "sagemaker:DescribeCluster", HYPERPOD_ARN),
    ("hyperpod_cluster", "sagemaker:DescribeCluster", f"{SM}:cluster/*"),
    ("hyperpod_cluster", "sagemaker:ListClusterNodes", HYPERPOD_ARN),
    ("hyperpod_cluster", "sagemaker:DescribeClusterNode", HYPERPOD_ARN),
    ("hyperpod_cluster", "sagemaker:ListComputeQuotas", HYPERPOD_ARN),
    ("hyperpod_cluster", "sagemaker:UpdateClusterSoftware", HYPERPOD_ARN),
)


def _cluster_reads():
    found = []
    for kind in KINDS:
        for shared_kind, action, resource in _CLUSTER_READS:
            name = f"{action} on {resource}"
            document = _policy(_allow(action, resource))
            if action in isolation.SHARED_ALLOWED[kind].get(shared_kind, []):
                found.append(_benign("resource_patterns", name, _of(kind), document, why=f"SHARED_ALLOWED gives the {kind} {action}"))
            else:
                found.append(_leak("resource_patterns", name, _of(kind), document, {SHARED}, OTHERS, why=f"not in SHARED_ALLOWED for the {kind}"))
    return found


_OWN_SSO = _found(TEAM)["permission_set_arn"]
_OWN_ACCESS_ENTRY = _found(TEAM)["access_entry_arn"]
# (actions by turns, pattern, owners or None, spared, why): reads where the entry is benign, any action where it leaks.
_NAMED_PATTERNS = (
    # Roles: the execution and Pod Identity roles of each team.
    (("iam:PassRole", "sts:AssumeRole", "iam:GetRole", "iam:ListRoleTags", "sts:TagSession"), ROLE + "hyperpod-vision-studio-execution", None, (), ""),
    (("sts:AssumeRole",), ROLE + "hyperpod-vision-pods", None, (), ""),
    (("iam:PassRole",), ROLE + "hyperpod-vision-*", None, (), ""),
    (("iam:GetRole",), ROLE + "hyperpod-vision*", None, (), "no other present team's role name starts with hyperpod-vision"),
    (("iam:PassRole",), ROLE + "AWSReservedSSO_hyperpod-vision_x", None, (), "vision's own Identity Center role"),
    (("sts:AssumeRole",), f"arn:aws:iam::{OTHER_ACCOUNT}:role/*", None, (), "another account's roles"),
    (("iam:PassRole",), ROLE + "unrelated-*", None, (), "no team's role"),
    (("iam:PassRole", "sts:AssumeRole", "iam:UpdateAssumeRolePolicy"), ROLE + "*", OTHERS, (), ""),
    (("iam:PassRole", "sts:AssumeRole"), ROLE + "hyperpod-vis*", {"vis"}, {"nlp", "research"}, "hyperpod-vis-pods and hyperpod-vision-*"),
    (("iam:AttachRolePolicy",), ROLE + "hyperpod-vis-*", {"vis"}, {"nlp", "research"}, ""),
    (("sts:AssumeRole",), ROLE + "hyperpod-*-pods", OTHERS, (), ""),
    (("iam:PassRole",), ROLE + "hyperpod-nlp-studio-execution", {"nlp"}, {"research", "vis"}, ""),
    (("iam:PassRole",), ROLE + "*-studio-execution", OTHERS, (), ""),
    (("sts:TagSession",), ROLE + "hyperpod-?lp-*", {"nlp"}, {"research", "vis"}, ""),
    (("iam:PutRolePolicy",), "arn:aws:iam::*:role/hyperpod-research-pods", {"research"}, {"nlp", "vis"}, ""),
    (("iam:PassRole", "sts:AssumeRole"), "*", OTHERS, (), ""),
    (("iam:*",), f"arn:aws:iam::{ACCOUNT}:*", OTHERS, (), ""),
    # Budgets.
    (("budgets:ViewBudget",), BUDGET + naming.budget_name(TEAM), None, (), ""),
    (("budgets:ViewBudget",), BUDGET + "hyperpod-vision-*", None, (), ""),
    (("budgets:ViewBudget",), BUDGET + "hyperpod-vision*", None, (), "no other present team's budget starts with hyperpod-vision"),
    (("budgets:*",), f"arn:aws:budgets::{OTHER_ACCOUNT}:budget/*", None, (), "another account's budgets"),
    (("budgets:ViewBudget", "budgets:ModifyBudget"), BUDGET + "*", OTHERS, (), ""),
    (("budgets:ModifyBudget",), BUDGET + "hyperpod-vis*", {"vis"}, {"nlp", "research"}, ""),
    (("budgets:ViewBudget",), BUDGET + "*-monthly", OTHERS, (), ""),
    (("budgets:ModifyBudget",), BUDGET + naming.budget_name("nlp"), {"nlp"}, {"research", "vis"}, ""),
    (("budgets:*",), "*", OTHERS, (), ""),
    (("budgets:ViewBudget",), BUDGET + "hyperpod-?lp-monthly", {"nlp"}, {"research", "vis"}, ""),
    (("budgets:ViewBudget",), "arn:aws:budgets::*:budget/hyperpod-research-*", {"research"}, {"nlp", "vis"}, ""),
    # Identity Center permission sets.
    (("sso:DescribePermissionSet", "sso:GetInlinePolicyForPermissionSet"), _OWN_SSO, None, (), ""),
    (("sso:DescribePermissionSet",), _OWN_SSO + "*", None, (), ""),
    (("sso:DescribePermissionSet",), "arn:aws:sso:::permissionSet/ssoins-ffffffffffffffff/*", None, (), "another Identity Center instance"),
    (("sso:PutInlinePolicyToPermissionSet", "sso:Attach*"), PERMISSION_SET + "*", OTHERS, (), ""),
    (("sso:DescribePermissionSet",), PERMISSION_SET + "ps-000000000000000?", OTHERS, (), ""),
    (("sso:ProvisionPermissionSet",), _found("nlp")["permission_set_arn"], {"nlp"}, {"research", "vis"}, ""),
    (("sso:DeletePermissionSet",), "arn:aws:sso:::permissionSet/*", OTHERS, (), ""),
    (("sso:DescribePermissionSet",), "*", OTHERS, (), ""),
    # SageMaker compute quotas.
    (("sagemaker:DescribeComputeQuota",), OWN_QUOTA, None, (), "a read of vision's own quota by ARN"),
    (("sagemaker:DescribeComputeQuota",), OWN_QUOTA + "*", None, (), ""),
    (("sagemaker:DescribeComputeQuota",), f"arn:aws:sagemaker:eu-west-1:{ACCOUNT}:compute-quota/*", None, (), "another region's quotas"),
    (("sagemaker:DescribeComputeQuota",), f"arn:aws:sagemaker:{REGION}:{OTHER_ACCOUNT}:compute-quota/*", None, (), "another account's quotas"),
    (("sagemaker:DescribeComputeQuota", "sagemaker:UpdateComputeQuota"), QUOTA + "*", OTHERS, (), ""),
    (("sagemaker:DeleteComputeQuota",), QUOTA + "q0000000000?", OTHERS, (), ""),
    (("sagemaker:UpdateComputeQuota",), QUOTA + _found("nlp")["compute_quota_id"], {"nlp"}, {"research", "vis"}, ""),
    (("sagemaker:DescribeComputeQuota",), f"{SM}:*", OTHERS, (), ""),
    (("sagemaker:*ComputeQuota",), "*", OTHERS, (), ""),
    (("sagemaker:UpdateComputeQuota",), "arn:aws:sagemaker:*:*:compute-quota/*", OTHERS, (), ""),
    (("sagemaker:DescribeComputeQuota",), QUOTA + "q*", OTHERS, (), ""),
    # EKS access entries.
    (("eks:DescribeAccessEntry",), _OWN_ACCESS_ENTRY, None, (), ""),
    (
        ("eks:ListAssociatedAccessPolicies",),
        ACCESS_ENTRY + f"role/{ACCOUNT}/AWSReservedSSO_hyperpod-vision_*/*",
        {SHARED},
        OTHERS,
        "the entry of a platform permission set named hyperpod-vision_<anything> (the red team's F1), no team's",
    ),
    (("eks:DescribeAccessEntry", "eks:DeleteAccessEntry"), ACCESS_ENTRY + "*", OTHERS, (), ""),
    (("eks:AssociateAccessPolicy",), ACCESS_ENTRY + f"role/{ACCOUNT}/AWSReservedSSO_hyperpod-vis*", {"vis"}, {"nlp", "research"}, ""),
    (("eks:UpdateAccessEntry",), f"arn:aws:eks:{REGION}:{ACCOUNT}:access-entry/*", OTHERS, (), ""),
    (("eks:DeleteAccessEntry",), ACCESS_ENTRY + "*/AWSReservedSSO_hyperpod-nlp_*/*", {"nlp"}, {"research", "vis"}, ""),
    # Studio resources by ARN, no tag condition.
    (("sagemaker:DescribeDomain",), f"{SM}:domain/{DOMAIN}", None, (), "vision's own domain by ARN"),
    (("sagemaker:DescribeUserProfile",), f"{SM}:user-profile/{DOMAIN}/*", None, (), ""),
    (("sagemaker:DescribeSpace", "sagemaker:UpdateSpace"), f"{SM}:space/{DOMAIN}/*", None, (), ""),
    (("sagemaker:DescribeApp",), f"{SM}:app/{DOMAIN}/*", None, (), ""),
    (("sagemaker:CreatePresignedDomainUrl",), f"{SM}:user-profile/{DOMAIN}/vision-alice", None, (), ""),
    (("sagemaker:DescribeDomain",), f"{SM}:domain/d-00000000000?", OTHERS, (), ""),
    (("sagemaker:DescribeUserProfile",), f"{SM}:user-profile/{_found('nlp')['domain_id']}/*", {"nlp"}, {"research", "vis"}, ""),
    (("sagemaker:UpdateSpace",), f"{SM}:space/*", OTHERS, (), ""),
    (("sagemaker:DeleteApp",), f"{SM}:app/*/vision-alice/*", OTHERS, (), "a profile named vision-alice may exist in any team's domain"),
    (("sagemaker:CreatePresignedDomainUrl",), f"{SM}:user-profile/*/vision-*", OTHERS, (), "profile names are not unique across domains"),
)


def _named_patterns():
    found = []
    for index, (actions, pattern, owners, spared, why) in enumerate(_NAMED_PATTERNS):
        action = actions[index % len(actions)]
        principal = _rotated(index)
        name = f"{action} on {pattern}"
        if owners is None:
            found.append(_benign("resource_patterns", name, principal, _policy(_allow(action, pattern)), why=why))
        else:
            found.append(_leak("resource_patterns", name, principal, _policy(_allow(action, pattern)), owners, spared, why=why))
    return found


# --- listings: s3:prefix conditions on sub-prefixes ---------------------------------------------------------------

_LISTING_OWNERS = EVERYONE  # the shared places' listings (_hyperpod/, lifecycle/, retired/) are shared
_LISTINGS = (
    # (name, action, resource, condition, owners or None, spared, why)
    ("prefix vision/sub/*", "s3:ListBucket", B, {"StringLike": {"s3:prefix": ["vision/sub/*"]}}, None, (), ""),
    ("prefix vision/a/*", "s3:ListBucket", B, {"StringLike": {"s3:prefix": "vision/a/*"}}, None, (), ""),
    ("prefix vision/", "s3:ListBucket", B, {"StringLike": {"s3:prefix": ["vision/"]}}, None, (), ""),
    ("prefix vision/*", "s3:ListBucket", B, {"StringLike": {"s3:prefix": ["vision/*"]}}, None, (), ""),
    ("prefix vision/?*", "s3:ListBucket", B, {"StringLike": {"s3:prefix": ["vision/?*"]}}, None, (), ""),
    ("prefix vision/nlp/*", "s3:ListBucket", B, {"StringLike": {"s3:prefix": ["vision/nlp/*"]}}, None, (), "nlp/ inside vision's prefix is vision's"),
    ("exact prefix vision/", "s3:ListBucket", B, {"StringEquals": {"s3:prefix": "vision/"}}, None, (), ""),
    ("exact prefix vision/datasets/", "s3:ListBucket", B, {"StringEquals": {"s3:prefix": "vision/datasets/"}}, None, (), ""),
    ("prefix vision/* on every bucket", "s3:ListBucket", "*", {"StringLike": {"s3:prefix": "vision/*"}}, None, (), "the data bucket's listing stays vision's"),
    ("versions under vision/*", "s3:ListBucketVersions", B, {"StringLike": {"s3:prefix": "vision/*"}}, None, (), ""),
    ("uploads under vision/", "s3:ListBucketMultipartUploads", B, {"StringEquals": {"s3:prefix": "vision/"}}, None, (), ""),
    (
        "prefix vision/* and a delimiter",
        "s3:ListBucket",
        B,
        {"StringLike": {"s3:prefix": "vision/*"}, "StringEquals": {"s3:delimiter": "/"}},
        None,
        (),
        "the prefix condition alone keeps it inside vision/",
    ),
    (
        "ForAnyValue prefix vision/*",
        "s3:ListBucket",
        B,
        {"ForAnyValue:StringLike": {"s3:prefix": "vision/*"}},
        None,
        (),
        "ForAnyValue is false with no prefix and true only for a prefix under vision/ (Set operators for multivalued context keys)",
    ),
    ("prefix nlp/a/*", "s3:ListBucket", B, {"StringLike": {"s3:prefix": "nlp/a/*"}}, {"nlp"}, {"research", "vis", SHARED}, ""),
    ("exact prefix nlp/", "s3:ListBucket", B, {"StringEquals": {"s3:prefix": "nlp/"}}, {"nlp"}, {"research", "vis", SHARED}, ""),
    ("empty prefix", "s3:ListBucket", B, {"StringEquals": {"s3:prefix": ""}}, _LISTING_OWNERS, (), "the empty prefix lists every key"),
    ("prefix n", "s3:ListBucket", B, {"StringEquals": {"s3:prefix": "n"}}, {"nlp", SHARED}, {"research", "vis"}, "lists nlp/..., and root keys such as nx"),
    ("prefix *", "s3:ListBucket", B, {"StringLike": {"s3:prefix": "*"}}, _LISTING_OWNERS, (), ""),
    ("prefix v", "s3:ListBucket", B, {"StringEquals": {"s3:prefix": "v"}}, {"vis", SHARED}, {"nlp", "research"}, "vis/ beside vision/, and root keys: vx"),
    ("prefix vis", "s3:ListBucket", B, {"StringEquals": {"s3:prefix": "vis"}}, {"vis", SHARED}, {"nlp", "research"}, "and root keys such as visual"),
    ("prefix vis*", "s3:ListBucket", B, {"StringLike": {"s3:prefix": "vis*"}}, {"vis", SHARED}, {"nlp", "research"}, "and root keys such as visual"),
    ("prefix ?lp/*", "s3:ListBucket", B, {"StringLike": {"s3:prefix": "?lp/*"}}, {"nlp", SHARED}, {"research", "vis"}, "and root keys such as xlp/"),
    ("prefix */datasets/*", "s3:ListBucket", B, {"StringLike": {"s3:prefix": "*/datasets/*"}}, _LISTING_OWNERS, (), ""),
    ("prefix _hyperpod/*", "s3:ListBucket", B, {"StringLike": {"s3:prefix": naming.PLATFORM_PREFIX + "*"}}, {SHARED}, OTHERS, ""),
    ("exact prefix lifecycle/", "s3:ListBucket", B, {"StringEquals": {"s3:prefix": "lifecycle/"}}, {SHARED}, OTHERS, ""),
    ("prefix r*", "s3:ListBucket", B, {"StringLike": {"s3:prefix": "r*"}}, {"research", SHARED}, {"nlp", "vis"}, "research/ and retired/"),
    ("StringNotLike vision/*", "s3:ListBucket", B, {"StringNotLike": {"s3:prefix": "vision/*"}}, _LISTING_OWNERS, (), "true with no prefix too"),
    ("StringNotEquals vision/", "s3:ListBucket", B, {"StringNotEquals": {"s3:prefix": "vision/"}}, _LISTING_OWNERS, (), ""),
    ("no condition", "s3:ListBucket", B, None, _LISTING_OWNERS, (), ""),
    ("StringLikeIfExists vision/*", "s3:ListBucket", B, {"StringLikeIfExists": {"s3:prefix": "vision/*"}}, _LISTING_OWNERS, (), "true with no prefix"),
    ("Null prefix", "s3:ListBucket", B, {"Null": {"s3:prefix": "true"}}, _LISTING_OWNERS, (), "a listing with no prefix lists every key"),
    ("ForAllValues prefix vision/*", "s3:ListBucket", B, {"ForAllValues:StringLike": {"s3:prefix": "vision/*"}}, _LISTING_OWNERS, (), "true with no prefix"),
    ("prefixes vision/* or nlp/*", "s3:ListBucket", B, {"StringLike": {"s3:prefix": ["vision/*", "nlp/*"]}}, {"nlp"}, {"research", "vis", SHARED}, ""),
    (
        "IgnoreCase NLP/",
        "s3:ListBucket",
        B,
        {"StringEqualsIgnoreCase": {"s3:prefix": "NLP/"}},
        {"nlp", SHARED},
        {"research", "vis"},
        "keys are case-sensitive: NLP/x is a root key",
    ),
    ("a delimiter only", "s3:ListBucket", B, {"StringEquals": {"s3:delimiter": "/"}}, _LISTING_OWNERS, (), "no prefix condition"),
    ("max-keys only", "s3:ListBucket", B, {"NumericLessThan": {"s3:max-keys": "10"}}, _LISTING_OWNERS, (), "no prefix condition"),
    ("versions under nlp/*", "s3:ListBucketVersions", B, {"StringLike": {"s3:prefix": "nlp/*"}}, {"nlp"}, {"research", "vis", SHARED}, ""),
    ("uploads, no condition", "s3:ListBucketMultipartUploads", B, None, _LISTING_OWNERS, (), ""),
    ("research/* on the bucket*", "s3:ListBucket", B + "*", {"StringLike": {"s3:prefix": "research/*"}}, {"research"}, {"nlp", "vis", SHARED}, ""),
)


def _listings():
    cases = [(name, _policy(_allow(action, resource, condition)), owners, spared, why) for name, action, resource, condition, owners, spared, why in _LISTINGS]
    return _entries("listing_prefixes", cases, offset=1)


# --- Studio: the team tag condition -----------------------------------------------------------------------------

_STUDIO_TARGETS = (
    ("sagemaker:DescribeDomain", f"{SM}:domain/*"),
    ("sagemaker:DescribeUserProfile", f"{SM}:user-profile/*"),
    ("sagemaker:CreatePresignedDomainUrl", f"{SM}:user-profile/*/*"),
    ("sagemaker:UpdateSpace", f"{SM}:space/*"),
    ("sagemaker:DeleteApp", f"{SM}:app/*"),
    (["sagemaker:DescribeSpace", "sagemaker:DeleteSpace"], f"{SM}:space/*"),
    ("sagemaker:DescribeApp", [f"{SM}:app/*", f"{SM}:domain/*"]),
)
_UNTAGGED = "another team's domain may hold an untagged resource (made before the tag, or by hand)"
_STUDIO_CONDITIONS = (
    ("StringEquals vision", {"StringEquals": {TAG: TEAM}}, None, (), ""),
    ("StringEqualsIgnoreCase VISION", {"StringEqualsIgnoreCase": {TAG: "VISION"}}, None, (), "no present team is named vision in another case"),
    ("StringLike vision", {"StringLike": {TAG: TEAM}}, None, (), ""),
    ("StringLike visio?", {"StringLike": {TAG: "visio?"}}, None, (), "matches vision only among nlp, research, vis"),
    ("StringLike ?ision", {"StringLike": {TAG: "?ision"}}, None, (), ""),
    (
        "StringLike vision*",
        {"StringLike": {TAG: "vision*"}},
        None,
        (),
        "no present team's name starts with vision but vision's; a team 'vision2' would be a resource with its tag",
    ),
    ("ForAnyValue:StringEquals vision", {"ForAnyValue:StringEquals": {TAG: TEAM}}, None, (), "false on an untagged resource: ForAnyValue needs a value"),
    ("StringEquals [vision]", {"StringEquals": {TAG: [TEAM]}}, None, (), ""),
    ("the tag and the region", {"StringEquals": {TAG: TEAM, "aws:RequestedRegion": REGION}}, None, (), "the tag alone keeps it vision's"),
    ("tag present and vision", {"Null": {TAG: "false"}, "StringEquals": {TAG: TEAM}}, None, (), ""),
    ("StringEquals nlp", {"StringEquals": {TAG: "nlp"}}, {"nlp"}, {"research", "vis"}, ""),
    ("StringEquals vision or research", {"StringEquals": {TAG: [TEAM, "research"]}}, {"research"}, {"nlp", "vis"}, ""),
    ("StringLike *", {"StringLike": {TAG: "*"}}, OTHERS, (), ""),
    ("StringLike vis*", {"StringLike": {TAG: "vis*"}}, {"vis"}, {"nlp", "research"}, "vis and vision"),
    ("StringLike ?lp", {"StringLike": {TAG: "?lp"}}, {"nlp"}, {"research", "vis"}, ""),
    ("StringNotEquals vision", {"StringNotEquals": {TAG: TEAM}}, OTHERS, (), ""),
    ("StringNotEquals nobody", {"StringNotEquals": {TAG: "nobody"}}, OTHERS, (), ""),
    ("StringEqualsIfExists vision", {"StringEqualsIfExists": {TAG: TEAM}}, OTHERS, (), _UNTAGGED + ", and IfExists is true without the key"),
    ("Null tag", {"Null": {TAG: "true"}}, OTHERS, (), _UNTAGGED),
    ("no condition", None, OTHERS, (), ""),
    ("ForAllValues:StringEquals vision", {"ForAllValues:StringEquals": {TAG: TEAM}}, OTHERS, (), _UNTAGGED + ", and ForAllValues is true without the key"),
    ("StringNotLike vision", {"StringNotLike": {TAG: TEAM}}, OTHERS, (), ""),
    ("StringEqualsIgnoreCase NLP", {"StringEqualsIgnoreCase": {TAG: "NLP"}}, {"nlp"}, {"research", "vis"}, ""),
    ("StringNotEqualsIgnoreCase VISION", {"StringNotEqualsIgnoreCase": {TAG: "VISION"}}, OTHERS, (), ""),
    (
        "a tag the platform does not manage",
        {"StringEquals": {"aws:ResourceTag/project": TEAM}},
        OTHERS,
        (),
        "anyone may tag another team's resource project=vision",
    ),
    ("the principal's tag, not the resource's", {"StringEquals": {"aws:PrincipalTag/team": TEAM}}, OTHERS, (), "says nothing of the resource"),
    ("the request's tag", {"StringEquals": {"aws:RequestTag/team": TEAM}}, OTHERS, (), "the caller chooses the request's tags"),
    ("StringNotEquals the other teams", {"StringNotEquals": {TAG: sorted(OTHERS)}}, OTHERS, (), _UNTAGGED + ", and a negated operator is true without the key"),
    ("StringLikeIfExists vision", {"StringLikeIfExists": {TAG: TEAM}}, OTHERS, (), _UNTAGGED),
    ("ForAnyValue:StringNotEquals vision", {"ForAnyValue:StringNotEquals": {TAG: TEAM}}, OTHERS, (), "true for nlp's tag"),
)


def _studio():
    cases = []
    for index, (name, condition, owners, spared, why) in enumerate(_STUDIO_CONDITIONS):
        action, resource = _STUDIO_TARGETS[index % len(_STUDIO_TARGETS)]
        cases.append((f"{name}: {action} on {resource}", _policy(_allow(action, resource, condition)), owners, spared, why))
    return _entries("studio_tags", cases, offset=2)


# --- condition operators over the keys AWS sets on every request, on an Allow of another team's resource --------------

# (action, resource, owners, spared): another team's or a shared resource, without a condition a leak.
_TARGETS = (
    ("s3:GetObject", f"{B}/nlp/*", {"nlp"}, {"research", "vis", SHARED}),
    ("sagemaker:DescribeDomain", f"{SM}:domain/*", OTHERS, ()),
    ("iam:PassRole", ROLE + "hyperpod-research-*", {"research"}, {"nlp", "vis"}),
    ("s3:PutObject", f"{B}/{naming.LIFECYCLE_PREFIX}*", {SHARED}, OTHERS),
    ("budgets:ModifyBudget", BUDGET + naming.budget_name("vis"), {"vis"}, {"nlp", "research"}),
    ("sagemaker:UpdateComputeQuota", QUOTA + "*", OTHERS, ()),
    ("eks:DeleteAccessEntry", ACCESS_ENTRY + "*", OTHERS, ()),
)
_ABSENT_USERNAME = "a role session has no aws:username"
# (name, condition, why): satisfiable by some request of each of vision's principals.
_SATISFIABLE = (
    ("StringEquals aws:RequestedRegion", {"StringEquals": {"aws:RequestedRegion": REGION}}, ""),
    ("StringNotEquals aws:RequestedRegion", {"StringNotEquals": {"aws:RequestedRegion": "eu-west-1"}}, ""),
    ("StringLike aws:RequestedRegion", {"StringLike": {"aws:RequestedRegion": "us-*"}}, ""),
    ("StringNotLike aws:RequestedRegion", {"StringNotLike": {"aws:RequestedRegion": "cn-*"}}, ""),
    ("StringEqualsIgnoreCase aws:RequestedRegion", {"StringEqualsIgnoreCase": {"aws:RequestedRegion": REGION.upper()}}, ""),
    ("StringNotEqualsIgnoreCase aws:RequestedRegion", {"StringNotEqualsIgnoreCase": {"aws:RequestedRegion": "EU-WEST-1"}}, ""),
    ("StringEqualsIfExists aws:RequestedRegion", {"StringEqualsIfExists": {"aws:RequestedRegion": REGION}}, ""),
    ("StringLikeIfExists aws:RequestedRegion", {"StringLikeIfExists": {"aws:RequestedRegion": "us-*"}}, ""),
    ("ForAnyValue:StringEquals aws:RequestedRegion", {"ForAnyValue:StringEquals": {"aws:RequestedRegion": REGION}}, ""),
    ("ForAllValues:StringEquals aws:RequestedRegion", {"ForAllValues:StringEquals": {"aws:RequestedRegion": REGION}}, ""),
    ("ForAnyValue:StringLike aws:RequestedRegion", {"ForAnyValue:StringLike": {"aws:RequestedRegion": "*"}}, ""),
    ("ForAllValues:StringNotEquals aws:RequestedRegion", {"ForAllValues:StringNotEquals": {"aws:RequestedRegion": "eu-west-1"}}, ""),
    ("Null aws:RequestedRegion false", {"Null": {"aws:RequestedRegion": "false"}}, ""),
    ("IpAddress aws:SourceIp", {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}, ""),
    ("NotIpAddress aws:SourceIp", {"NotIpAddress": {"aws:SourceIp": "203.0.113.0/24"}}, ""),
    ("IpAddressIfExists aws:SourceIp", {"IpAddressIfExists": {"aws:SourceIp": "192.168.0.0/16"}}, ""),
    ("NotIpAddressIfExists aws:SourceIp", {"NotIpAddressIfExists": {"aws:SourceIp": "198.51.100.0/24"}}, ""),
    ("IpAddress aws:SourceIp v4 and v6", {"IpAddress": {"aws:SourceIp": ["10.0.0.0/8", "2001:db8::/32"]}}, ""),
    ("DateGreaterThan aws:CurrentTime", {"DateGreaterThan": {"aws:CurrentTime": "2020-01-01T00:00:00Z"}}, ""),
    ("DateLessThan aws:CurrentTime", {"DateLessThan": {"aws:CurrentTime": "2999-12-31T23:59:59Z"}}, ""),
    ("DateGreaterThanEquals aws:CurrentTime", {"DateGreaterThanEquals": {"aws:CurrentTime": "2024-06-01"}}, ""),
    ("DateLessThanEquals aws:CurrentTime", {"DateLessThanEquals": {"aws:CurrentTime": "2999-01-01T00:00:00Z"}}, ""),
    ("DateNotEquals aws:CurrentTime", {"DateNotEquals": {"aws:CurrentTime": "2020-01-01T00:00:00Z"}}, ""),
    ("DateEquals aws:CurrentTime", {"DateEquals": {"aws:CurrentTime": "2030-01-01T00:00:00Z"}}, "a request made at that second"),
    ("DateGreaterThanIfExists aws:CurrentTime", {"DateGreaterThanIfExists": {"aws:CurrentTime": "2020-01-01T00:00:00Z"}}, ""),
    ("NumericGreaterThan aws:EpochTime", {"NumericGreaterThan": {"aws:EpochTime": "1700000000"}}, ""),
    ("NumericLessThan aws:EpochTime", {"NumericLessThan": {"aws:EpochTime": "4102444800"}}, ""),
    ("NumericGreaterThanEquals aws:EpochTime", {"NumericGreaterThanEquals": {"aws:EpochTime": "1700000000"}}, ""),
    ("NumericLessThanEquals aws:EpochTime", {"NumericLessThanEquals": {"aws:EpochTime": "4102444800"}}, ""),
    ("NumericNotEquals aws:EpochTime", {"NumericNotEquals": {"aws:EpochTime": "0"}}, ""),
    ("NumericEquals aws:EpochTime", {"NumericEquals": {"aws:EpochTime": "1900000000"}}, "a request made at that second"),
    ("NumericLessThanIfExists aws:EpochTime", {"NumericLessThanIfExists": {"aws:EpochTime": "4102444800"}}, ""),
    ("DateGreaterThan aws:EpochTime", {"DateGreaterThan": {"aws:EpochTime": "1700000000"}}, "date operators take epoch seconds too"),
    ("Bool aws:SecureTransport true", {"Bool": {"aws:SecureTransport": "true"}}, ""),
    ("Bool aws:SecureTransport false", {"Bool": {"aws:SecureTransport": "false"}}, ""),
    ("BoolIfExists aws:SecureTransport", {"BoolIfExists": {"aws:SecureTransport": "true"}}, ""),
    ("StringEquals aws:PrincipalType AssumedRole", {"StringEquals": {"aws:PrincipalType": "AssumedRole"}}, "a role session's type"),
    ("StringLike aws:PrincipalType *Role", {"StringLike": {"aws:PrincipalType": "*Role"}}, ""),
    ("StringNotEquals aws:PrincipalType User", {"StringNotEquals": {"aws:PrincipalType": "User"}}, ""),
    ("StringLike aws:userid AROA*:*", {"StringLike": {"aws:userid": "AROA*:*"}}, "a role session's userid is role id:session name"),
    ("StringLike aws:userid *:*", {"StringLike": {"aws:userid": "*:*"}}, ""),
    ("ArnLike aws:PrincipalArn every role", {"ArnLike": {"aws:PrincipalArn": ROLE + "*"}}, ""),
    ("StringLike aws:PrincipalArn *vision*", {"StringLike": {"aws:PrincipalArn": "*vision*"}}, "each of vision's role names holds 'vision'"),
    ("ArnNotLike aws:PrincipalArn nlp's roles", {"ArnNotLike": {"aws:PrincipalArn": ROLE + "hyperpod-nlp-*"}}, ""),
    ("ArnNotEquals aws:PrincipalArn an admin role", {"ArnNotEquals": {"aws:PrincipalArn": ROLE + "admin"}}, ""),
    ("StringEquals aws:PrincipalAccount", {"StringEquals": {"aws:PrincipalAccount": ACCOUNT}}, ""),
    ("StringLike aws:PrincipalAccount", {"StringLike": {"aws:PrincipalAccount": ACCOUNT[:4] + "*"}}, ""),
    ("StringEquals aws:PrincipalTag/team", {"StringEquals": {"aws:PrincipalTag/team": TEAM}}, "a session tag may say so"),
    ("StringLike aws:PrincipalTag/project", {"StringLike": {"aws:PrincipalTag/project": "*"}}, ""),
    ("Null aws:PrincipalTag/x true", {"Null": {"aws:PrincipalTag/x": "true"}}, ""),
    ("Null aws:PrincipalTag/x false", {"Null": {"aws:PrincipalTag/x": "false"}}, "a session tag may set it"),
    ("StringNotEquals aws:PrincipalTag/team", {"StringNotEquals": {"aws:PrincipalTag/team": "nlp"}}, ""),
    ("ForAnyValue:StringEquals aws:PrincipalTag/team", {"ForAnyValue:StringEquals": {"aws:PrincipalTag/team": TEAM}}, ""),
    ("ForAnyValue:StringEquals aws:CalledVia", {"ForAnyValue:StringEquals": {"aws:CalledVia": "athena.amazonaws.com"}}, ""),
    ("ForAllValues:StringEquals aws:CalledVia", {"ForAllValues:StringEquals": {"aws:CalledVia": "sagemaker.amazonaws.com"}}, "true for a direct call"),
    ("Null aws:CalledVia true", {"Null": {"aws:CalledVia": "true"}}, "a direct call"),
    ("Null aws:CalledVia false", {"Null": {"aws:CalledVia": "false"}}, "a call through a service"),
    ("ForAnyValue:StringLike aws:CalledVia", {"ForAnyValue:StringLike": {"aws:CalledVia": "*"}}, ""),
    ("StringEqualsIfExists aws:username", {"StringEqualsIfExists": {"aws:username": "nobody"}}, _ABSENT_USERNAME + ": IfExists is true"),
    ("Null aws:username true", {"Null": {"aws:username": "true"}}, _ABSENT_USERNAME),
    ("StringNotEquals aws:username", {"StringNotEquals": {"aws:username": TEAM}}, _ABSENT_USERNAME + ": a negated operator is true"),
    ("StringNotLike aws:username", {"StringNotLike": {"aws:username": "*"}}, _ABSENT_USERNAME + ": a negated operator is true"),
    ("ForAllValues:StringEquals aws:username", {"ForAllValues:StringEquals": {"aws:username": "nobody"}}, _ABSENT_USERNAME + ": ForAllValues is true"),
    (
        "several keys at once",
        {
            "StringEquals": {"aws:RequestedRegion": REGION, "aws:PrincipalType": "AssumedRole"},
            "Bool": {"aws:SecureTransport": "true"},
            "IpAddress": {"aws:SourceIp": "10.0.0.0/8"},
            "DateGreaterThan": {"aws:CurrentTime": "2020-01-01T00:00:00Z"},
        },
        "",
    ),
    # The values of one key are ORed, Null's too ("Conditions with multiple context keys or values", IAM User Guide,
    # reference_policies_multi-value-conditions.html): whichever comes first, one of them holds.
    ("Null aws:PrincipalArn true or false", {"Null": {"aws:PrincipalArn": ["true", "false"]}}, "ORed: the key is there, so false holds"),
    ("Null aws:username false or true", {"Null": {"aws:username": ["false", "true"]}}, _ABSENT_USERNAME + ": ORed, true holds"),
)
# (name, condition, why): no request of any of vision's principals meets it.
_UNSATISFIABLE = (
    ("StringEquals aws:PrincipalType User", {"StringEquals": {"aws:PrincipalType": "User"}}, "a role session's type is AssumedRole"),
    ("StringNotEquals aws:PrincipalType AssumedRole", {"StringNotEquals": {"aws:PrincipalType": "AssumedRole"}}, "its type is AssumedRole"),
    ("StringNotEqualsIgnoreCase aws:PrincipalType", {"StringNotEqualsIgnoreCase": {"aws:PrincipalType": "assumedrole"}}, "its type is AssumedRole"),
    ("ForAnyValue:StringEquals aws:PrincipalType", {"ForAnyValue:StringEquals": {"aws:PrincipalType": "FederatedUser"}}, "its type is AssumedRole"),
    ("StringEquals aws:PrincipalAccount", {"StringEquals": {"aws:PrincipalAccount": OTHER_ACCOUNT}}, "its account is " + ACCOUNT),
    ("StringNotEquals aws:PrincipalAccount", {"StringNotEquals": {"aws:PrincipalAccount": ACCOUNT}}, "its account is " + ACCOUNT),
    ("Null aws:PrincipalArn true", {"Null": {"aws:PrincipalArn": "true"}}, "every request has aws:PrincipalArn"),
    ("StringLike aws:username", {"StringLike": {"aws:username": "*"}}, _ABSENT_USERNAME + ": a positive operator is false"),
    ("StringEquals aws:username", {"StringEquals": {"aws:username": TEAM}}, _ABSENT_USERNAME),
    ("Null aws:username false", {"Null": {"aws:username": "false"}}, _ABSENT_USERNAME),
    ("ForAnyValue:StringLike aws:username", {"ForAnyValue:StringLike": {"aws:username": "*"}}, _ABSENT_USERNAME + ": ForAnyValue is false"),
    ("ArnLike aws:PrincipalArn users", {"ArnLike": {"aws:PrincipalArn": "arn:aws:iam::*:user/*"}}, "a role's ARN is no user's"),
    ("ArnLike aws:PrincipalArn nlp's roles", {"ArnLike": {"aws:PrincipalArn": ROLE + "hyperpod-nlp-*"}}, "vision's role is not nlp's"),
    ("StringNotLike aws:PrincipalArn *vision*", {"StringNotLike": {"aws:PrincipalArn": "*vision*"}}, "each of vision's role names holds 'vision'"),
    ("ArnNotLike aws:PrincipalArn every role", {"ArnNotLike": {"aws:PrincipalArn": ROLE + "*"}}, "vision's principal is a role of the account"),
    (
        "a free key met and a pinned key not",
        {"StringEquals": {"aws:RequestedRegion": REGION, "aws:PrincipalType": "User"}},
        "keys are ANDed; its type is AssumedRole",
    ),
)
# (name, condition of the principal's kind, why): aws:PrincipalArn pinned to the principal's own ARN, another value asked.
_NOT_ITS_ARN = (
    ("StringEquals aws:PrincipalArn nlp's", lambda kind: {"StringEquals": {"aws:PrincipalArn": ARNS[_of(kind, "nlp")]}}, "a pinned key with another value"),
    ("ArnEquals aws:PrincipalArn nlp's", lambda kind: {"ArnEquals": {"aws:PrincipalArn": ARNS[_of(kind, "nlp")]}}, "a pinned key with another value"),
    (
        "StringEqualsIfExists aws:PrincipalArn nlp's",
        lambda kind: {"StringEqualsIfExists": {"aws:PrincipalArn": ARNS[_of(kind, "nlp")]}},
        "the key is present, with another value",
    ),
    ("ArnNotEquals aws:PrincipalArn its own", lambda kind: {"ArnNotEquals": {"aws:PrincipalArn": ARNS[_of(kind)]}}, "its own ARN"),
)


def _conditions():
    found = []
    for index, (name, condition, why) in enumerate(_SATISFIABLE):
        action, resource, owners, spared = _TARGETS[index % len(_TARGETS)]
        document = _policy(_allow(action, resource, condition))
        found.append(_leak("condition_operators", f"{name}: {action} on {resource}", _rotated(index), document, owners, spared, why=why))
    for index, (name, condition, why) in enumerate(_UNSATISFIABLE):
        action, resource, unused_owners, unused_spared = _TARGETS[index % len(_TARGETS)]
        document = _policy(_allow(action, resource, condition))
        found.append(_benign("condition_operators", f"{name}: {action} on {resource}", _rotated(index, 1), document, why=why))
    for offset, kind in enumerate(KINDS):
        own = ARNS[_of(kind)]
        its_own = (
            ("StringEquals aws:PrincipalArn its own", {"StringEquals": {"aws:PrincipalArn": own}}),
            ("ArnEquals aws:PrincipalArn its own", {"ArnEquals": {"aws:PrincipalArn": own}}),
            ("StringEqualsIgnoreCase aws:PrincipalArn its own", {"StringEqualsIgnoreCase": {"aws:PrincipalArn": own.upper()}}),
        )
        for index, (name, condition) in enumerate(its_own):
            action, resource, owners, spared = _TARGETS[(index + offset) % len(_TARGETS)]
            document = _policy(_allow(action, resource, condition))
            found.append(_leak("condition_operators", f"{name}: {action} on {resource}", _of(kind), document, owners, spared, why="its own ARN"))
        for index, (name, condition, why) in enumerate(_NOT_ITS_ARN):
            action, resource, unused_owners, unused_spared = _TARGETS[(index + offset) % len(_TARGETS)]
            document = _policy(_allow(action, resource, condition(kind)))
            found.append(_benign("condition_operators", f"{name}: {action} on {resource}", _of(kind), document, why=why))
        # hyperpod-vis* names vision's execution and Pod Identity roles; the permission set's role is AWSReservedSSO_...
        condition = {"ArnLike": {"aws:PrincipalArn": ROLE + "hyperpod-vis*"}}
        document = _policy(_allow("s3:GetObject", f"{B}/nlp/*", condition))
        name = "ArnLike aws:PrincipalArn hyperpod-vis*: s3:GetObject on nlp/*"
        if kind == "permission_set":
            found.append(_benign("condition_operators", name, _of(kind), document, why="its role is AWSReservedSSO_hyperpod-vision_x"))
        else:
            found.append(_leak("condition_operators", name, _of(kind), document, {"nlp"}, {"research", "vis", SHARED}, why="its role is hyperpod-vision-..."))
    return found


# --- policy variables ---------------------------------------------------------------------------------------------

_NO_SESSION_TAGS = {"session_tags": False}
_SESSION_TAGS = "a session tag may hold any value"
_NO_VALUE = "a variable with no value matches nothing (Policy variables with no value)"
_VARIABLES = (
    # (name, document, owners or None, spared, spec, why)
    ("${aws:username} as the prefix", _policy(_allow("s3:GetObject", f"{B}/${{aws:username}}/*")), None, (), None, _NO_VALUE + ": " + _ABSENT_USERNAME),
    (
        "${aws:username} defaulting to nlp",
        _policy(_allow("s3:GetObject", f"{B}/${{aws:username, 'nlp'}}/*")),
        {"nlp"},
        {"research", "vis", SHARED},
        None,
        "the default",
    ),
    ("${aws:username} defaulting to vision", _policy(_allow("s3:GetObject", f"{B}/${{aws:username, 'vision'}}/*")), None, (), None, "the default"),
    ("${aws:PrincipalTag/none} as the prefix", _policy(_allow("s3:PutObject", f"{B}/${{aws:PrincipalTag/none}}/*")), EVERYONE, (), None, _SESSION_TAGS),
    (
        "${aws:PrincipalTag/none}, no session tags",
        _policy(_allow("s3:PutObject", f"{B}/${{aws:PrincipalTag/none}}/*")),
        None,
        (),
        dict(_NO_SESSION_TAGS, tags={"project": TEAM}),
        "the role has no tag 'none' and its trust allows no session tag: " + _NO_VALUE,
    ),
    ("${aws:PrincipalTag/project} as the prefix", _policy(_allow("s3:GetObject", f"{B}/${{aws:PrincipalTag/project}}/*")), EVERYONE, (), None, _SESSION_TAGS),
    (
        "${aws:PrincipalTag/project} = vision, no session tags",
        _policy(_allow("s3:GetObject", f"{B}/${{aws:PrincipalTag/project}}/*")),
        None,
        (),
        dict(_NO_SESSION_TAGS, tags={"project": TEAM}),
        "the role's own tag, which no session overrides",
    ),
    (
        "${aws:PrincipalTag/project} = nlp, no session tags",
        _policy(_allow("s3:GetObject", f"{B}/${{aws:PrincipalTag/project}}/*")),
        {"nlp"},
        {"research", "vis", SHARED},
        dict(_NO_SESSION_TAGS, tags={"project": "nlp"}),
        "the role's own tag names nlp",
    ),
    ("${aws:PrincipalTag/project} under vision/", _policy(_allow("s3:GetObject", f"{B}/vision/${{aws:PrincipalTag/project}}/*")), None, (), None, ""),
    (
        "${aws:PrincipalTag/project}, no session tags and no such role tag",
        _policy(_allow("s3:GetObject", f"{B}/${{aws:PrincipalTag/project}}/*")),
        None,
        (),
        _NO_SESSION_TAGS,
        _NO_VALUE,
    ),
    ("${aws:userid} under vision/", _policy(_allow("s3:PutObject", f"{B}/vision/${{aws:userid}}/*")), None, (), None, ""),
    ("${aws:userid} as the prefix", _policy(_allow("s3:PutObject", f"{B}/${{aws:userid}}/*")), {SHARED}, (), None, "role id:session name/ is a root key"),
    (
        "${aws:PrincipalAccount} as the prefix",
        _policy(_allow("s3:GetObject", f"{B}/${{aws:PrincipalAccount}}/*")),
        {SHARED},
        OTHERS,
        None,
        f"{ACCOUNT}/ is a root key",
    ),
    ("${aws:PrincipalAccount} under vision/", _policy(_allow("s3:GetObject", f"{B}/vision/${{aws:PrincipalAccount}}/*")), None, (), None, ""),
    (
        "${aws:PrincipalType} as the prefix",
        _policy(_allow("s3:GetObject", f"{B}/${{aws:PrincipalType}}/*")),
        {SHARED},
        OTHERS,
        None,
        "AssumedRole/ is a root key",
    ),
    (
        "${aws:RequestedRegion} as the prefix",
        _policy(_allow("s3:GetObject", f"{B}/${{aws:RequestedRegion}}/*")),
        {SHARED},
        (),
        None,
        "us-east-1/ is a root key",
    ),
    (
        "${aws:RequestedRegion} in a domain ARN",
        _policy(_allow("sagemaker:DescribeDomain", f"arn:aws:sagemaker:${{aws:RequestedRegion}}:{ACCOUNT}:domain/*")),
        OTHERS,
        (),
        None,
        "",
    ),
    (
        "${aws:PrincipalAccount} in vision's quota ARN",
        _policy(
            _allow("sagemaker:DescribeComputeQuota", f"arn:aws:sagemaker:{REGION}:${{aws:PrincipalAccount}}:compute-quota/{_found(TEAM)['compute_quota_id']}")
        ),
        None,
        (),
        None,
        "",
    ),
    (
        "${aws:PrincipalAccount} in every quota's ARN",
        _policy(_allow("sagemaker:DescribeComputeQuota", f"arn:aws:sagemaker:{REGION}:${{aws:PrincipalAccount}}:compute-quota/*")),
        OTHERS,
        (),
        None,
        "",
    ),
    ("${*} as the prefix", _policy(_allow("s3:GetObject", f"{B}/${{*}}/*")), {SHARED}, OTHERS, None, "the literal '*/' is a root key, no wildcard"),
    ("${*} under vision/", _policy(_allow("s3:GetObject", f"{B}/vision/${{*}}")), None, (), None, "the one key 'vision/*'"),
    ("${?} in vi?/", _policy(_allow("s3:GetObject", f"{B}/vi${{?}}/*")), {SHARED}, OTHERS, None, "the literal 'vi?/' is a root key; vis/ is not matched"),
    ("${$} before nlp/", _policy(_allow("s3:GetObject", f"{B}/${{$}}nlp/*")), {SHARED}, OTHERS, None, "'$nlp/' is a root key"),
    (
        "listing ${aws:PrincipalTag/project}/*",
        _policy(_allow("s3:ListBucket", B, {"StringLike": {"s3:prefix": "${aws:PrincipalTag/project}/*"}})),
        EVERYONE,
        (),
        None,
        _SESSION_TAGS,
    ),
    ("listing vision/${aws:userid}/*", _policy(_allow("s3:ListBucket", B, {"StringLike": {"s3:prefix": "vision/${aws:userid}/*"}})), None, (), None, ""),
    (
        "listing ${aws:username}/*",
        _policy(_allow("s3:ListBucket", B, {"StringLike": {"s3:prefix": "${aws:username}/*"}})),
        None,
        (),
        None,
        _NO_VALUE + ": a positive operator matches nothing",
    ),
    (
        "listing not ${aws:username}/*",
        _policy(_allow("s3:ListBucket", B, {"StringNotLike": {"s3:prefix": "${aws:username}/*"}})),
        EVERYONE,
        (),
        None,
        _NO_VALUE + ": a negated operator matches",
    ),
    (
        "Studio tag = ${aws:PrincipalTag/team}",
        _policy(_allow("sagemaker:DescribeDomain", f"{SM}:domain/*", {"StringEquals": {TAG: "${aws:PrincipalTag/team}"}})),
        OTHERS,
        (),
        None,
        _SESSION_TAGS,
    ),
    (
        "Studio tag = ${aws:PrincipalTag/team} = vision, no session tags",
        _policy(_allow("sagemaker:DescribeDomain", f"{SM}:domain/*", {"StringEquals": {TAG: "${aws:PrincipalTag/team}"}})),
        None,
        (),
        dict(_NO_SESSION_TAGS, tags={"team": TEAM}),
        "attribute-based access on the role's own tag",
    ),
    (
        "Studio tag = ${aws:username}",
        _policy(_allow("sagemaker:DescribeUserProfile", f"{SM}:user-profile/*", {"StringEquals": {TAG: "${aws:username}"}})),
        None,
        (),
        None,
        _NO_VALUE,
    ),
    (
        "Studio tag = ${aws:PrincipalTag/none}, no session tags",
        _policy(_allow("sagemaker:DescribeSpace", f"{SM}:space/*", {"StringEquals": {TAG: "${aws:PrincipalTag/none}"}})),
        None,
        (),
        _NO_SESSION_TAGS,
        _NO_VALUE,
    ),
    (
        "Studio tag = ${aws:PrincipalTag/team, 'vision'}, no session tags",
        _policy(_allow("sagemaker:DescribeApp", f"{SM}:app/*", {"StringEquals": {TAG: "${aws:PrincipalTag/team, 'vision'}"}})),
        None,
        (),
        _NO_SESSION_TAGS,
        "the default",
    ),
    (
        "PassRole on hyperpod-${aws:PrincipalTag/team}-pods",
        _policy(_allow("iam:PassRole", ROLE + "hyperpod-${aws:PrincipalTag/team}-pods")),
        OTHERS,
        (),
        None,
        _SESSION_TAGS,
    ),
    (
        "PassRole on hyperpod-${aws:PrincipalTag/team}-pods, no session tags",
        _policy(_allow("iam:PassRole", ROLE + "hyperpod-${aws:PrincipalTag/team}-pods")),
        None,
        (),
        dict(_NO_SESSION_TAGS, tags={"team": TEAM}),
        "the role's own tag",
    ),
    (
        "ArnLike aws:PrincipalArn in ${aws:PrincipalAccount}",
        _policy(_allow("s3:GetObject", f"{B}/nlp/*", {"ArnLike": {"aws:PrincipalArn": "arn:aws:iam::${aws:PrincipalAccount}:role/*"}})),
        {"nlp"},
        {"research", "vis", SHARED},
        None,
        "its own account",
    ),
)


def _variables():
    found = []
    for index, (name, document, owners, spared, spec, why) in enumerate(_VARIABLES):
        principal = _rotated(index)
        if owners is None:
            found.append(_benign("policy_variables", name, principal, document, spec, why))
        else:
            found.append(_leak("policy_variables", name, principal, document, owners, spared, spec, why))
    return found


# --- NotAction and NotResource ------------------------------------------------------------------------------------

_NOT_ELEMENTS = (
    ("NotResource vision/* on GetObject", _policy(_allow("s3:GetObject", f"{B}/vision/*", element="NotResource")), EVERYONE, (), ""),
    (
        "NotResource vision/* and nlp/* on PutObject",
        _policy(_allow("s3:PutObject", [f"{B}/vision/*", f"{B}/nlp/*"], element="NotResource")),
        {"research", "vis", SHARED},
        {"nlp"},
        "",
    ),
    (
        "NotResource every team's prefix",
        _policy(_allow("s3:GetObject", [f"{B}/{team}/*" for team in sorted(OTHERS | {TEAM})], element="NotResource")),
        {SHARED},
        OTHERS,
        "the bucket's root and the platform's places are left",
    ),
    ("NotResource every S3 ARN", _policy(_allow("s3:GetObject", "arn:aws:s3:::*", element="NotResource")), None, (), "an object is always an S3 ARN"),
    ("NotResource *", _policy(_allow("s3:DeleteObject", "*", element="NotResource")), None, (), "applies to nothing"),
    ("NotResource bucket/* on GetObject", _policy(_allow("s3:GetObject", f"{B}/*", element="NotResource")), None, (), "every object of the bucket is left out"),
    ("NotResource bucket/* on ListBucket", _policy(_allow("s3:ListBucket", f"{B}/*", element="NotResource")), EVERYONE, (), "a listing is on the bucket's ARN"),
    ("NotResource every domain", _policy(_allow("sagemaker:DescribeDomain", f"{SM}:domain/*", element="NotResource")), None, (), ""),
    ("NotResource vision's domain", _policy(_allow("sagemaker:DescribeDomain", f"{SM}:domain/{DOMAIN}", element="NotResource")), OTHERS, (), ""),
    ("NotResource vision's roles on PassRole", _policy(_allow("iam:PassRole", ROLE + "hyperpod-vision-*", element="NotResource")), OTHERS, (), ""),
    (
        "NotResource vision's domain, tag vision",
        _policy(_allow("sagemaker:DescribeDomain", f"{SM}:domain/{DOMAIN}", {"StringEquals": {TAG: TEAM}}, element="NotResource")),
        None,
        (),
        "the tag condition still holds it to vision's",
    ),
    (
        "NotResource vision/* on ListBucket under vision/",
        _policy(_allow("s3:ListBucket", f"{B}/vision/*", {"StringLike": {"s3:prefix": "vision/*"}}, element="NotResource")),
        None,
        (),
        "",
    ),
    ("NotAction iam:* on everything", _policy(_allow("iam:*", "*", action_element="NotAction")), EVERYONE, (), ""),
    ("NotAction s3:* on nlp/*", _policy(_allow("s3:*", f"{B}/nlp/*", action_element="NotAction")), None, (), "only S3 actions act on an object"),
    ("NotAction GetObject on nlp/*", _policy(_allow("s3:GetObject", f"{B}/nlp/*", action_element="NotAction")), {"nlp"}, {"research", "vis", SHARED}, ""),
    ("NotAction sagemaker:* on domains", _policy(_allow("sagemaker:*", f"{SM}:domain/*", action_element="NotAction")), None, (), ""),
    ("NotAction sagemaker:Describe* on domains", _policy(_allow("sagemaker:Describe*", f"{SM}:domain/*", action_element="NotAction")), OTHERS, (), ""),
    ("NotAction budgets:* on budgets", _policy(_allow("budgets:*", BUDGET + "*", action_element="NotAction")), None, (), ""),
    ("NotAction ViewBudget on budgets", _policy(_allow("budgets:ViewBudget", BUDGET + "*", action_element="NotAction")), OTHERS, (), ""),
    ("NotAction iam:* and sts:* on roles", _policy(_allow(["iam:*", "sts:*"], ROLE + "*", action_element="NotAction")), None, (), ""),
    ("NotAction iam:GetRole on roles", _policy(_allow("iam:GetRole", ROLE + "*", action_element="NotAction")), OTHERS, (), ""),
    (
        "NotAction s3:* NotResource vision/*",
        _policy(_allow("s3:*", f"{B}/vision/*", element="NotResource", action_element="NotAction")),
        EVERYONE,
        (),
        "every other service's action on everything",
    ),
    ("NotAction *", _policy(_allow("*", "*", action_element="NotAction")), None, (), "applies to no action"),
)


def _not_elements():
    return _entries("not_elements", list(_NOT_ELEMENTS), offset=1)


# --- JSON booleans and numbers in conditions ----------------------------------------------------------------------

_JSON_VALUES = (
    ("Bool aws:SecureTransport true", {"Bool": {"aws:SecureTransport": True}}, True, ""),
    ("Bool aws:SecureTransport false", {"Bool": {"aws:SecureTransport": False}}, True, ""),
    ("Bool aws:SecureTransport [true, false]", {"Bool": {"aws:SecureTransport": [True, False]}}, True, ""),
    ("BoolIfExists aws:MultiFactorAuthPresent true", {"BoolIfExists": {"aws:MultiFactorAuthPresent": True}}, True, ""),
    ("Bool aws:ViaAWSService false", {"Bool": {"aws:ViaAWSService": False}}, True, ""),
    ("NumericGreaterThan aws:EpochTime", {"NumericGreaterThan": {"aws:EpochTime": 1700000000}}, True, ""),
    ("NumericLessThan aws:EpochTime, a float", {"NumericLessThan": {"aws:EpochTime": 4102444800.5}}, True, ""),
    ("NumericGreaterThanEquals aws:EpochTime [n]", {"NumericGreaterThanEquals": {"aws:EpochTime": [1700000000]}}, True, ""),
    ("DateGreaterThan aws:EpochTime", {"DateGreaterThan": {"aws:EpochTime": 1700000000}}, True, ""),
    ("DateLessThan aws:CurrentTime, epoch seconds", {"DateLessThan": {"aws:CurrentTime": 4102444800}}, True, ""),
    ("Null aws:username true", {"Null": {"aws:username": True}}, True, _ABSENT_USERNAME),
    ("Null aws:PrincipalTag/team false", {"Null": {"aws:PrincipalTag/team": False}}, True, "a session tag may set it"),
    ("StringEquals aws:PrincipalAccount as a number", {"StringEquals": {"aws:PrincipalAccount": int(ACCOUNT)}}, True, "the number is the account's text"),
    ("ForAnyValue:StringEquals aws:PrincipalAccount [number]", {"ForAnyValue:StringEquals": {"aws:PrincipalAccount": [int(ACCOUNT)]}}, True, ""),
    ("Null aws:username false", {"Null": {"aws:username": False}}, False, _ABSENT_USERNAME),
    ("Null aws:PrincipalArn true", {"Null": {"aws:PrincipalArn": True}}, False, "every request has aws:PrincipalArn"),
    (
        "StringEquals aws:PrincipalAccount another, as a number",
        {"StringEquals": {"aws:PrincipalAccount": int(OTHER_ACCOUNT)}},
        False,
        "its account is " + ACCOUNT,
    ),
    (
        "Bool aws:SecureTransport true and Null aws:PrincipalArn true",
        {"Bool": {"aws:SecureTransport": True}, "Null": {"aws:PrincipalArn": True}},
        False,
        "keys are ANDed",
    ),
)


def _json_values():
    cases = []
    for index, (name, condition, leaks, why) in enumerate(_JSON_VALUES):
        action, resource, owners, spared = _TARGETS[index % len(_TARGETS)]
        cases.append((f"{name}: {action} on {resource}", _policy(_allow(action, resource, condition)), owners if leaks else None, spared, why))
    cases += [
        (
            "Bool aws:SecureTransport true on vision's Studio",
            _policy(_allow("sagemaker:DescribeDomain", f"{SM}:domain/*", {"Bool": {"aws:SecureTransport": True}, "StringEquals": {TAG: TEAM}})),
            None,
            (),
            "the tag keeps it vision's",
        ),
        (
            "NumericLessThanEquals s3:max-keys, a listing with no prefix",
            _policy(_allow("s3:ListBucket", B, {"NumericLessThanEquals": {"s3:max-keys": 1000}})),
            _LISTING_OWNERS,
            (),
            "",
        ),
        (
            "Studio tag = true",
            _policy(_allow("sagemaker:DescribeDomain", f"{SM}:domain/*", {"StringEquals": {TAG: True}})),
            None,
            (),
            "no present team is named 'true', and an untagged resource has no value",
        ),
        (
            "Bool aws:SecureTransport true under vision/",
            _policy(_allow("s3:GetObject", f"{B}/vision/sub/*", {"Bool": {"aws:SecureTransport": True}})),
            None,
            (),
            "",
        ),
    ]
    return _entries("json_values", cases, offset=2)


# --- Deny statements: those that do not cover the whole set, and those that do ------------------------------------

_STUDIO_ALLOW = _allow("sagemaker:DescribeDomain", f"{SM}:domain/*")
_DENIES = (
    (
        "a narrow Deny beside a wide Allow",
        _policy(_allow("s3:GetObject", f"{B}/*"), _deny("s3:GetObject", f"{B}/nlp/*")),
        {"research", "vis", SHARED},
        {"nlp"},
        "",
    ),
    (
        "every other team's prefix denied, the shared places not",
        _policy(_allow("s3:*", f"{B}/*"), _deny("s3:*", [f"{B}/{team}/*" for team in sorted(OTHERS)])),
        {SHARED},
        OTHERS,
        "the bucket's root and the platform's places are left",
    ),
    (
        "denied over plain HTTP only",
        _policy(_allow("s3:GetObject", f"{B}/nlp/*"), _deny("s3:GetObject", f"{B}/nlp/*", {"Bool": {"aws:SecureTransport": "false"}})),
        {"nlp"},
        (),
        "HTTPS requests are allowed",
    ),
    (
        "denied outside the region only",
        _policy(_allow("s3:GetObject", f"{B}/nlp/*"), _deny("s3:GetObject", f"{B}/nlp/*", {"StringNotEquals": {"aws:RequestedRegion": REGION}})),
        {"nlp"},
        (),
        "requests in the region are allowed",
    ),
    (
        "a Deny on a narrower prefix",
        _policy(_allow("s3:GetObject", f"{B}/nlp/*"), _deny("s3:GetObject", f"{B}/nlp/private/*")),
        {"nlp"},
        (),
        "",
    ),
    (
        "every object but vision's denied",
        _policy(_allow("s3:GetObject", f"{B}/*"), _deny("s3:GetObject", f"{B}/vision/*", element="NotResource")),
        None,
        (),
        "the Deny covers every object outside vision/, the bucket's root included",
    ),
    (
        "untagged and other teams' domains denied",
        _policy(_STUDIO_ALLOW, _deny("sagemaker:DescribeDomain", f"{SM}:domain/*", {"StringNotEquals": {TAG: TEAM}})),
        None,
        (),
        "a negated operator is true without the key: the untagged ones are denied too",
    ),
    (
        "StringNotEqualsIfExists denies the rest",
        _policy(_STUDIO_ALLOW, _deny("sagemaker:DescribeDomain", f"{SM}:domain/*", {"StringNotEqualsIfExists": {TAG: TEAM}})),
        None,
        (),
        "",
    ),
    (
        "other teams' tags denied, untagged ones not",
        _policy(_STUDIO_ALLOW, _deny("sagemaker:DescribeDomain", f"{SM}:domain/*", {"StringEquals": {TAG: sorted(OTHERS)}})),
        OTHERS,
        (),
        _UNTAGGED,
    ),
    (
        "one team's domain denied",
        _policy(_STUDIO_ALLOW, _deny("sagemaker:DescribeDomain", f"{SM}:domain/{_found('nlp')['domain_id']}", {"StringNotEquals": {TAG: TEAM}})),
        {"research", "vis"},
        {"nlp"},
        "",
    ),
    (
        "two Denies that together cover the rest",
        _policy(
            _STUDIO_ALLOW,
            _deny("sagemaker:DescribeDomain", f"{SM}:domain/*", {"Null": {TAG: "true"}}),
            _deny("sagemaker:DescribeDomain", f"{SM}:domain/*", {"StringEquals": {TAG: sorted(OTHERS)}}),
        ),
        None,
        (),
        "the untagged domains by the first, the other teams' by the second",
    ),
    (
        "PassRole on every role but vision's denied",
        _policy(_allow("iam:PassRole", ROLE + "*"), _deny("iam:PassRole", ROLE + "hyperpod-vision-*", element="NotResource")),
        None,
        (),
        "",
    ),
    (
        "PassRole on nlp's roles denied",
        # nlp's roles: its own and its permission set's, which Identity Center makes under its reserved path.
        _policy(
            _allow("iam:PassRole", ROLE + "*"),
            _deny("iam:PassRole", [ROLE + "hyperpod-nlp-*", ROLE + "aws-reserved/sso.amazonaws.com/AWSReservedSSO_hyperpod-nlp_*"]),
        ),
        {"research", "vis"},
        {"nlp"},
        "",
    ),
    (
        "budgets but vision's denied",
        _policy(_allow("budgets:*", BUDGET + "*"), _deny("budgets:*", BUDGET + naming.budget_name(TEAM), element="NotResource")),
        None,
        (),
        "",
    ),
    (
        "a NotAction Deny on nlp/*",
        _policy(_allow("s3:GetObject", f"{B}/*"), _deny("s3:PutObject", f"{B}/nlp/*", action_element="NotAction")),
        {"research", "vis", SHARED},
        {"nlp"},
        "denies every action but PutObject on nlp/*",
    ),
    (
        "a wildcard action Deny",
        _policy(_allow("s3:GetObject", f"{B}/nlp/*"), _deny("s3:Get*", f"{B}/nlp/*")),
        None,
        (),
        "",
    ),
    (
        "a Deny for every role session",
        _policy(_allow("s3:GetObject", f"{B}/nlp/*"), _deny("s3:GetObject", f"{B}/nlp/*", {"StringEquals": {"aws:PrincipalType": "AssumedRole"}})),
        None,
        (),
        "its type is AssumedRole",
    ),
    (
        "a Deny without a username",
        _policy(_allow("s3:GetObject", f"{B}/nlp/*"), _deny("s3:GetObject", f"{B}/nlp/*", {"Null": {"aws:username": "true"}})),
        None,
        (),
        _ABSENT_USERNAME,
    ),
    (
        "a Deny for the account's roles",
        _policy(_allow("iam:PassRole", ROLE + "*"), _deny("iam:PassRole", ROLE + "*", {"ArnLike": {"aws:PrincipalArn": ROLE + "*"}})),
        None,
        (),
        "",
    ),
    (
        "a Deny of a session tag",
        _policy(_allow("s3:GetObject", f"{B}/nlp/*"), _deny("s3:GetObject", f"{B}/nlp/*", {"StringNotEquals": {"aws:PrincipalTag/team": TEAM}})),
        {"nlp"},
        (),
        "a session tagged team=vision is not denied",
    ),
)


def _denies():
    found = _entries("denies", _DENIES)
    for kind in KINDS:
        own = ARNS[_of(kind)]
        allow = _allow("s3:GetObject", f"{B}/nlp/*")
        found.append(
            _benign(
                "denies",
                "a Deny naming its own ARN",
                _of(kind),
                _policy(allow, _deny("s3:GetObject", f"{B}/nlp/*", {"ArnEquals": {"aws:PrincipalArn": own}})),
                why="aws:PrincipalArn is pinned to it",
            )
        )
        found.append(
            _leak(
                "denies",
                "a Deny of every principal but itself",
                _of(kind),
                _policy(allow, _deny("s3:GetObject", f"{B}/nlp/*", {"StringNotEquals": {"aws:PrincipalArn": own}})),
                {"nlp"},
                {"research", "vis", SHARED},
                why="the Deny never applies to it",
            )
        )
    return found


# --- issue 37: the three grants, verbatim, on nlp's execution role ------------------------------------------------

_VISION_DATASETS = f"{B}/vision/datasets/*"
_ISSUE_37 = (
    ("GetObject on vision/datasets/*", _policy(_allow("s3:GetObject", _VISION_DATASETS)), {"vision"}, {"research", "vis", SHARED}),
    (
        "ListBucket with s3:prefix vision/datasets/*",
        _policy(_allow("s3:ListBucket", B, {"StringLike": {"s3:prefix": "vision/datasets/*"}})),
        {"vision"},
        {"research", "vis", SHARED},
    ),
    (
        "sagemaker:* on * in the region",
        _policy(_allow("sagemaker:*", "*", {"StringEquals": {"aws:RequestedRegion": REGION}})),
        {"vision", "research", "vis", SHARED},
        (),
    ),
)


def _issue_37():
    found = []
    for kind in ("execution_role", "permission_set", "pod_identity"):
        for name, document, owners, spared in _ISSUE_37:
            found.append(
                _leak("issue_37", name, _of(kind, "nlp"), document, owners, spared, why="issue 37" if kind == "execution_role" else "issue 37's grant")
            )
    mirrored = (
        ("GetObject on nlp/datasets/*", _policy(_allow("s3:GetObject", f"{B}/nlp/datasets/*"))),
        ("ListBucket with s3:prefix nlp/datasets/*", _policy(_allow("s3:ListBucket", B, {"StringLike": {"s3:prefix": "nlp/datasets/*"}}))),
        (
            "Studio in the region, tag nlp",
            _policy(_allow("sagemaker:DescribeDomain", f"{SM}:domain/*", {"StringEquals": {"aws:RequestedRegion": REGION, TAG: "nlp"}})),
        ),
    )
    for name, document in mirrored:
        found.append(_benign("issue_37", name, _of("execution_role", "nlp"), document, why="issue 37's grants on nlp's own space"))
    return found


# --- issue 37's resources outside the matrix: the home EFS file systems, the Prometheus workspace, the platform's roles ---
# --- and the names of the data bucket's root keys ---------------------------------------------------------------------

EFS = f"arn:aws:elasticfilesystem:{REGION}:{ACCOUNT}:file-system/"
OWN_EFS = EFS + _found(TEAM)["home_efs_file_system_id"]
AMP = f"arn:aws:aps:{REGION}:{ACCOUNT}:"
WORKSPACE = AMP + "workspace/" + PROMETHEUS_ID
CLUSTER_ROLE, AUTOSCALING_ROLE = PLATFORM_ROLES
_CLIENT = ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite", "elasticfilesystem:ClientRootAccess"]
_UNTAGGED_EFS = "the platform tags no home EFS: anyone who may tag another team's may tag it team=vision"


def _listing(condition, action="s3:ListBucket"):
    return _policy(_allow(action, B, condition))


# What each of the four needed before it was a resource, on every one of vision's principals.
_OUTSIDE_ATTACKS = (
    ("mounting every home EFS read-write", _policy(_allow(_CLIENT[:2], EFS + "*")), OTHERS, {SHARED}, "each team's Studio home directories"),
    ("querying the usage workspace", _policy(_allow("aps:QueryMetrics", AMP + "workspace/*")), {SHARED}, OTHERS, "every team's use"),
    ("passing the cluster's execution role", _policy(_allow("iam:PassRole", CLUSTER_ROLE)), {SHARED}, OTHERS, "to a service that runs as the nodes"),
    ("listing the root's key names under R", _listing({"StringLike": {"s3:prefix": "R*"}}), {SHARED}, OTHERS, "no present team's prefix starts with R"),
)
# (name, document, owners or None, spared, why), on vision's principals by turns.
_OUTSIDE = (
    ("root access to nlp's home EFS", _policy(_allow(_CLIENT[2], EFS + _found("nlp")["home_efs_file_system_id"])), {"nlp"}, {"research", "vis", SHARED}, ""),
    ("a file system policy on any home EFS", _policy(_allow("elasticfilesystem:PutFileSystemPolicy", "*")), OTHERS, {SHARED}, "lets any client in"),
    (
        "deleting any home EFS, in any region",
        _policy(_allow("elasticfilesystem:DeleteFileSystem", "arn:aws:elasticfilesystem:*:*:file-system/*")),
        OTHERS,
        {SHARED},
        "",
    ),
    (
        "a mount target for research's home EFS",
        _policy(_allow("elasticfilesystem:CreateMountTarget", EFS + _found("research")["home_efs_file_system_id"])),
        {"research"},
        {"nlp", "vis", SHARED},
        "a network path from the team's subnet",
    ),
    ("an access point on every home EFS", _policy(_allow("elasticfilesystem:CreateAccessPoint", EFS + "fs-*")), OTHERS, {SHARED}, ""),
    ("replicating every home EFS", _policy(_allow("elasticfilesystem:CreateReplicationConfiguration", EFS + "*")), OTHERS, {SHARED}, "a copy elsewhere"),
    (
        "elasticfilesystem:Backup on every home EFS",
        _policy(_allow("elasticfilesystem:Backup", "*")),
        OTHERS,
        {SHARED},
        "AWS Backup's role's action, asked of the team principals as an over-approximation",
    ),
    ("every EFS action on a tag", _policy(_allow("elasticfilesystem:*", "*", {"StringEquals": {TAG: TEAM}})), OTHERS, {SHARED}, _UNTAGGED_EFS),
    ("remote write to the usage workspace", _policy(_allow("aps:RemoteWrite", WORKSPACE)), {SHARED}, OTHERS, "forged use"),
    ("every Prometheus read", _policy(_allow("aps:Get*", "*")), {SHARED}, OTHERS, ""),
    ("deleting any Prometheus workspace", _policy(_allow("aps:DeleteWorkspace", "arn:aws:aps:*:*:workspace/*")), {SHARED}, OTHERS, ""),
    ("the usage workspace's retention", _policy(_allow("aps:UpdateWorkspaceConfiguration", WORKSPACE)), {SHARED}, OTHERS, ""),
    ("rewriting the recording rules", _policy(_allow("aps:PutRuleGroupsNamespace", AMP + "rulegroupsnamespace/*")), {SHARED}, OTHERS, "rules write series"),
    ("a rule groups namespace of its own", _policy(_allow("aps:CreateRuleGroupsNamespace", WORKSPACE)), {SHARED}, OTHERS, "in the shared workspace"),
    ("silencing the platform's alerts", _policy(_allow("aps:PutAlertManagerSilences", AMP + "workspace/*")), {SHARED}, OTHERS, ""),
    ("aps:* on everything", _policy(_allow("aps:*", "*")), {SHARED}, OTHERS, ""),
    ("assuming the cluster's roles", _policy(_allow("sts:AssumeRole", ROLE + "HyperPodCluster*")), {SHARED}, OTHERS, ""),
    ("a policy on the autoscaling role", _policy(_allow("iam:PutRolePolicy", AUTOSCALING_ROLE)), {SHARED}, OTHERS, ""),
    (
        "attaching to any role of the cluster",
        _policy(_allow("iam:AttachRolePolicy", ROLE + "*Cluster*")),
        {SHARED},
        OTHERS,
        "no team role's name holds Cluster",
    ),
    (
        "the execution role's trust, any account",
        _policy(_allow("iam:UpdateAssumeRolePolicy", "arn:aws:iam::*:role/HyperPodClusterExecution")),
        {SHARED},
        OTHERS,
        "",
    ),
    ("PassRole on every role", _policy(_allow("iam:PassRole", ROLE + "*")), EVERYONE, (), "the teams' roles and the cluster's"),
    ("root key names: readme", _listing({"StringEquals": {"s3:prefix": "readme"}}), {SHARED}, OTHERS, ""),
    ("root key names under x", _listing({"StringLike": {"s3:prefix": "x*"}}), {SHARED}, OTHERS, ""),
    ("the team's name without its slash", _listing({"StringEquals": {"s3:prefix": TEAM}}), {SHARED}, OTHERS, "vision2/x and the key vision are root keys"),
    ("the team's name and more", _listing({"StringLike": {"s3:prefix": TEAM + "*"}}), {SHARED}, OTHERS, "visionx, vision2/"),
    ("nlpx", _listing({"StringEquals": {"s3:prefix": "nlpx"}}), {SHARED}, OTHERS, "a root key: nlpx is not under nlp/"),
    (
        "VISION/ in any case",
        _listing({"StringEqualsIgnoreCase": {"s3:prefix": "VISION/"}}),
        {SHARED},
        OTHERS,
        "keys are case-sensitive: VISION/x is a root key",
    ),
    ("versions of root keys under R", _listing({"StringLike": {"s3:prefix": "R*"}}, "s3:ListBucketVersions"), {SHARED}, OTHERS, ""),
    ("ForAnyValue root keys under R", _listing({"ForAnyValue:StringLike": {"s3:prefix": "R*"}}), {SHARED}, OTHERS, ""),
    # Benign: the team's own, another account's or region's, what names none of them.
    ("vision's own home EFS, as root", _policy(_allow(_CLIENT, OWN_EFS)), None, (), "the team's own home directories"),
    ("describing vision's own home EFS", _policy(_allow(["elasticfilesystem:Describe*", "elasticfilesystem:ListTagsForResource"], OWN_EFS)), None, (), ""),
    (
        "another account's file systems",
        _policy(_allow("elasticfilesystem:*", f"arn:aws:elasticfilesystem:{REGION}:{OTHER_ACCOUNT}:file-system/*")),
        None,
        (),
        "",
    ),
    (
        "another region's file systems",
        _policy(_allow(_CLIENT, f"arn:aws:elasticfilesystem:eu-west-1:{ACCOUNT}:file-system/*")),
        None,
        (),
        "no team's domain is there",
    ),
    (
        "access points' ARNs",
        _policy(_allow(_CLIENT, f"arn:aws:elasticfilesystem:{REGION}:{ACCOUNT}:access-point/*")),
        None,
        (),
        "NFS access is authorized on the file system; the access point is a condition key (elasticfilesystem:AccessPointArn)",
    ),
    (
        "another Prometheus workspace",
        _policy(_allow("aps:QueryMetrics", AMP + "workspace/ws-ffffffff-0000-0000-0000-000000000000")),
        None,
        (),
        "not the usage reports'",
    ),
    ("another account's Prometheus", _policy(_allow("aps:*", f"arn:aws:aps:{REGION}:{OTHER_ACCOUNT}:*")), None, (), ""),
    ("listing workspaces", _policy(_allow("aps:ListWorkspaces", "*")), None, (), "their aliases and states, no metric"),
    ("another account's cluster role", _policy(_allow("iam:PassRole", f"arn:aws:iam::{OTHER_ACCOUNT}:role/HyperPodClusterExecution")), None, (), ""),
    ("a role the cluster does not run as", _policy(_allow("iam:PassRole", CLUSTER_ROLE + "2")), None, (), "no platform or team role is named so"),
    ("the rendered listing", _listing({"StringLike": {"s3:prefix": ["vision/", "vision/*"]}}), None, (), "every prefix under vision/"),
    ("root-looking names under vision/", _listing({"StringLike": {"s3:prefix": "vision/R*"}}), None, (), "vision/R... is under vision/"),
    (
        "vision/* or research/sub/*",
        _listing({"StringLike": {"s3:prefix": ["vision/*", "research/sub/*"]}}),
        {"research"},
        {"nlp", "vis", SHARED},
        "both under a present team's prefix: no root key's name",
    ),
    # Found by red-teaming the above: the operations on a home EFS's mount targets name only the MountTargetId but are
    # authorized on the mount target's file system (API_DeleteMountTarget, API_ModifyMountTargetSecurityGroups, EFS API
    # Reference); the usage workspace's anomaly detectors are anomalydetector/<workspace id>/<id> (AnomalyDetectorArn, AMP
    # API Reference); a negated Deny on s3:prefix keeps the root's key names out of a listing of every prefix.
    (
        "deleting every home EFS's mount targets",
        _policy(_allow("elasticfilesystem:DeleteMountTarget", EFS + "*")),
        OTHERS,
        {SHARED},
        "breaks every mount of another team's home directories",
    ),
    (
        "another network into nlp's home EFS",
        _policy(
            _allow("elasticfilesystem:ModifyMountTargetSecurityGroups", EFS + _found("nlp")["home_efs_file_system_id"]),
            _allow("ec2:ModifyNetworkInterfaceAttribute", "*"),
        ),
        {"nlp"},
        {"research", "vis", SHARED},
        "its mount targets' security groups: who reaches its NFS",
    ),
    (
        "retraining the usage workspace's anomaly detectors",
        _policy(_allow(["aps:PutAnomalyDetector", "aps:DeleteAnomalyDetector"], AMP + f"anomalydetector/{PROMETHEUS_ID}/*")),
        {SHARED},
        OTHERS,
        "",
    ),
    (
        "describing every anomaly detector",
        _policy(_allow("aps:DescribeAnomalyDetector", AMP + "anomalydetector/*")),
        {SHARED},
        OTHERS,
        "its query over every team's use",
    ),
    (
        "another workspace's anomaly detectors",
        _policy(_allow("aps:*AnomalyDetector", AMP + "anomalydetector/ws-ffffffff-0000-0000-0000-000000000000/*")),
        None,
        (),
        "not the usage reports' workspace",
    ),
    (
        "every prefix, but a Deny outside vision/",
        _policy(
            _allow("s3:ListBucket", B, {"StringLike": {"s3:prefix": "*"}}),
            _deny("s3:ListBucket", B, {"StringNotLike": {"s3:prefix": ["vision/", "vision/*"]}}),
        ),
        None,
        (),
        "the Deny takes every prefix not under vision/, and no listing with none: no root key's name",
    ),
    (
        "every prefix, but a Deny outside vision/ and R",
        _policy(
            _allow("s3:ListBucket", B, {"StringLike": {"s3:prefix": "*"}}),
            _deny("s3:ListBucket", B, {"StringNotLike": {"s3:prefix": ["vision/*", "R*"]}}),
        ),
        {SHARED},
        OTHERS,
        "R... shows the root's key names",
    ),
)


def _outside_the_matrix():
    found = [
        _leak("outside_the_matrix", name, _of(kind), document, owners, spared, why=why)
        for kind in KINDS
        for name, document, owners, spared, why in _OUTSIDE_ATTACKS
    ]
    return found + _entries("outside_the_matrix", list(_OUTSIDE), offset=1)


FAMILIES = (
    "resource_patterns",
    "listing_prefixes",
    "studio_tags",
    "condition_operators",
    "policy_variables",
    "not_elements",
    "json_values",
    "denies",
    "issue_37",
    "outside_the_matrix",
)
CORPUS = tuple(
    _object_patterns()
    + _cluster_reads()
    + _named_patterns()
    + _listings()
    + _studio()
    + _conditions()
    + _variables()
    + _not_elements()
    + _json_values()
    + _denies()
    + _issue_37()
    + _outside_the_matrix()
)


def family(name: str) -> list:
    return [entry for entry in CORPUS if entry.family == name]


def corpus_counts() -> dict:
    """{family: (size, leaks, benign)}."""
    counts = {}
    for name in FAMILIES:
        entries = family(name)
        leaks = sum(1 for entry in entries if entry.label == LEAK)
        counts[name] = (len(entries), leaks, len(entries) - leaks)
    return counts
