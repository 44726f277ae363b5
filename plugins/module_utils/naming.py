# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Every name this collection derives from a team name, in one place.

Task Governance itself decides the namespace and queue names; the rest are our
conventions, each kept inside the limits of the AWS API that receives it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import unicodedata

DEFAULT_PREFIX = "hyperpod"
MANAGED_BY_TAG = ("managed-by", "hyperpod.tenancy")
# The keys of the team and cost-center tags unless hyperpod_team_tag_keys names others.
DEFAULT_TAG_KEYS = {"team": "team", "cost_center": "cost-center"}

# The name patterns the APIs enforce, written once (botocore's models; Kubernetes' RFC 1123 label).
# A Kubernetes name (namespace, queue, priority class) and Task Governance's TeamName.
DNS_LABEL_PATTERN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
# SageMaker's EntityName (DomainName, UserProfileName, ComputeQuotaName, ...): at most 63 characters.
ENTITY_NAME_PATTERN = r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}"
# IAM's role and policy names and Identity Center's PermissionSetName.
IAM_NAME_PATTERN = r"[\w+=,.@-]+"
# An SNS topic, arn:partition:sns:region:account:topic-name; a topic name is 1 to 256 ASCII letters, digits,
# underscores and hyphens (SNS CreateTopic, https://docs.aws.amazon.com/sns/latest/api/API_CreateTopic.html).
# A FIFO topic's .fifo suffix is left out: AWS Budgets publishes to standard topics.
SNS_TOPIC_ARN_PATTERN = r"arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}"
# One reading of each address (a dot only between labels of the domain), so that matching takes linear time: the
# former [^@\s]+\.[^@\s]+ tried every dot of a long domain.
EMAIL_PATTERN = r"[^@\s]+@[^@\s.]+(?:\.[^@\s.]+)+"
# An e-mail address is at most 254 characters (RFC 5321's path limit); an SNS topic ARN, with its 256-character name, less than 320.
NOTIFY_TARGET_MAX = 320
# SageMaker's description of a compute quota or a cluster scheduler config: at most 1024 characters, no control
# characters but tab, line feed and carriage return.
SAGEMAKER_DESCRIPTION_MAX = 1024
SAGEMAKER_DESCRIPTION_FORBIDDEN = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"

# (what, pattern the AWS API enforces, longest value it accepts)
TEAM_NAME_RULE = ("team name (Task Governance TeamName)", DNS_LABEL_PATTERN, 40)


def namespace(team):
    """The Kubernetes namespace Task Governance creates for the team's quota."""
    return "hyperpod-ns-%s" % team


def local_queue(team):
    return "%s-localqueue" % namespace(team)


def cluster_queue(team):
    return "%s-clusterqueue" % namespace(team)


def kubernetes_group(team):
    """The group the HyperPod CLI's team-role-and-bindings chart binds in the team namespace."""
    return "%s-namespace-level-group" % namespace(team)


def _prefixed(suffix, doc=None):
    """The rule of a name the team's prefix starts: ``<prefix>-<team><suffix>``."""

    def name(team, prefix=DEFAULT_PREFIX):
        return "%s-%s%s" % (prefix, team, suffix)

    name.__doc__ = doc
    return name


service_account = _prefixed("", "The ServiceAccount the team's pods run as, in the team namespace.")
team_volume = _prefixed("-fsx", "The PersistentVolume of the team's FSx directory, and its claim in the team namespace.")
permission_set_name = _prefixed("")
domain_name = _prefixed("")
quota_name = _prefixed("-quota")
budget_name = _prefixed("-monthly")
studio_execution_role_name = _prefixed("-studio-execution", "The IAM role the team's SageMaker domain runs as.")


# Identity Center names the role it makes for a permission set in each account AWSReservedSSO_<permission set>_<suffix>,
# the suffix 16 hexadecimal characters (as the roles in real accounts and the User Guide's examples show; an assumption: no
# AWS page states the length). A permission set's name may hold "_", so only the whole shape tells a role's permission set:
# the role of a set the platform names <prefix>-<team>_Admins is not the team's.
SSO_ROLE_SUFFIX_LENGTH = 16
_SSO_ROLE_NAME = re.compile(r"AWSReservedSSO_([\w+=,.@-]+)_[0-9a-f]{%d}\Z" % SSO_ROLE_SUFFIX_LENGTH)
# How a module option names "the role of permission set <name>" before the role exists (eks_access_entry's principal_arn).
_SSO_ROLE_NAME_PATTERN = re.compile(r"AWSReservedSSO_([\w+=,.@-]+)_\*\Z")


def sso_role_name_pattern(team, prefix=DEFAULT_PREFIX):
    """The IAM role Identity Center creates in each account for the team's permission set."""
    return sso_role_name_pattern_of(permission_set_name(team, prefix))


def sso_role_name_pattern_of(permission_set):
    """The IAM role Identity Center creates in each account for the permission set named ``permission_set``, as a module
    option names it (``AWSReservedSSO_<name>_*``): ``sso_role_permission_set`` tells which roles it stands for."""
    return "AWSReservedSSO_%s_*" % permission_set


def sso_role_name_wildcard(team, prefix=DEFAULT_PREFIX):
    """The name of the role of ``team``'s permission set in an IAM policy: its suffix as ``?`` wildcards, one a character
    (with ``*``, it would match the role of a permission set named ``<prefix>-<team>_<anything>``)."""
    return "AWSReservedSSO_%s_%s" % (permission_set_name(team, prefix), "?" * SSO_ROLE_SUFFIX_LENGTH)


def sso_role_permission_set(role_name):
    """The name of the permission set Identity Center made the role ``role_name`` for, or None for any other role."""
    match = _SSO_ROLE_NAME.match(role_name)
    return match.group(1) if match else None


def sso_role_pattern_permission_set(pattern):
    """The permission set that the pattern ``AWSReservedSSO_<name>_*`` names, or None when ``pattern`` is not one."""
    match = _SSO_ROLE_NAME_PATTERN.match(pattern)
    return match.group(1) if match else None


def scheduler_policy_name(cluster_name):
    """The cluster's Task Governance scheduler config (cluster policy)."""
    return "%s-scheduler" % cluster_name


def s3_prefix(team):
    return "%s/" % team


# The directory of a team's FSx directory that storage.s3_link exports to the team's S3 prefix (``<root>/<team>/s3-export``),
# beside ``home`` (team_dirs.HOME): never the team directory itself, which holds the members' 0700 homes.
FSX_EXPORT_DIR = "s3-export"


def fsx_export_path(team):
    """The FSx path of the team's export directory, as a data repository association names it (``/<team>/s3-export``)."""
    return "/%s/%s" % (team, FSX_EXPORT_DIR)


# The data bucket's prefix of the platform's own objects (the lifecycle scripts, the ownership marks, the ledger of
# retired names). A team's prefix is ``<team>/`` with a DNS label for ``team``, which never starts with ``_``: no team's
# prefix is or contains it, and no team policy (team_policy, execution_role.team_data_policy) names it.
PLATFORM_PREFIX = "_hyperpod/"
# Where the cluster role keeps the instance groups' lifecycle scripts unless the cluster file names another place.
LIFECYCLE_PREFIX = PLATFORM_PREFIX + "lifecycle/"


def tag_keys_with_defaults(tag_keys=None):
    """``tag_keys`` (as in hyperpod_team_tag_keys) over ``DEFAULT_TAG_KEYS``: the keys the team's tags are written under."""
    keys = dict(DEFAULT_TAG_KEYS)
    keys.update(tag_keys or {})
    return keys


def team_tags(team, cost_center=None, tag_keys=None, extra=None):
    """The tags every resource of ``team`` carries, for isolation checks and cost allocation."""
    keys = tag_keys_with_defaults(tag_keys)
    tags = dict(extra or {})
    tags[keys["team"]] = team
    if cost_center:
        tags[keys["cost_center"]] = cost_center
    tags[MANAGED_BY_TAG[0]] = MANAGED_BY_TAG[1]
    return tags


def owner_marks(team, tag_keys=None):
    """The tags that mark a resource as made by this collection for ``team``: the collection's and the team's.

    ``team_tags`` writes them on every resource the collection creates; a resource found by its
    derived name is changed or deleted only when it carries both (``ownership_problem``).
    """
    marks = team_tags(team, tag_keys=tag_keys)
    return dict((key, marks[key]) for key in (MANAGED_BY_TAG[0], _team_key(tag_keys)))


def _team_key(tag_keys=None):
    return (tag_keys or {}).get("team") or DEFAULT_TAG_KEYS["team"]


# The layers a team file may name in ``adopt``: an existing, unmarked resource of that layer is taken over
# (``user_profiles``: the unmarked user profiles in the team's domain, the domain layer's ``adopt_user_profiles``;
# ``grafana_folder``: the team's Grafana folder made by another identity, role team_observability; ``pod_role``: the
# role of the team's pods and its Pod Identity association, the namespace layer's ``adopt_pod_role``).
ADOPTABLE = (
    "permission_set", "access_entry", "execution_role", "domain", "user_profiles", "quota", "s3_prefix", "directories", "budget", "grafana_folder",
    "pod_role",
)


# Team names the platform's own resources use or are commonly given, with what they would collide with: a team of such a
# name would derive the platform's names (the permission set <prefix>-platform of the platform admins, the
# observability workspaces <prefix>-observability) or its paths (s3://<data bucket>/lifecycle/ where lifecycle scripts
# were kept, <fsx root>/datasets). The platform adds its own with hyperpod_team_limits.reserved_names.
RESERVED_TEAM_NAMES = {
    "platform": "the platform admins' permission set <prefix>-platform",
    "admin": "the platform admins",
    "admins": "the platform admins",
    "observability": "the observability workspaces <prefix>-observability",
    "lifecycle": "the HyperPod lifecycle scripts' prefix lifecycle/",
    "datasets": "the shared datasets directory <fsx root>/datasets",
    "shared": "what the teams share (the data bucket's shared prefixes, Studio's shared namespace)",
    "system": "the platform's system resources",
    "default": "Kubernetes' default namespace and queue names",
    "archive": "the file system's archive of offboarded teams",
}


def ownership_problem(what, team, tags, tag_keys=None, adopt=False, layer=None):
    """Why the existing resource ``what`` (with ``tags``) must not be changed or deleted for ``team``; None when it may.

    It may when it carries ``owner_marks(team)``, or when it carries no mark at all and the team file
    adopts it (``adopt``, for migrations). A resource marked for another team is never taken over.
    """
    tags = tags or {}
    marks = owner_marks(team, tag_keys)
    if all(tags.get(key) == value for key, value in marks.items()):
        return None
    team_key = _team_key(tag_keys)
    ours = tags.get(MANAGED_BY_TAG[0]) == MANAGED_BY_TAG[1]
    if ours and tags.get(team_key):
        return "%s belongs to team %s (tag %s=%s), not to team %s: refusing to change or delete it" % (what, tags[team_key], team_key, tags[team_key], team)
    if adopt and not ours:
        return None
    owner = ", ".join("%s=%s" % (key, tags[key]) for key in sorted(tags)[:8]) or "no tags"
    return (
        "%s exists and was not made by hyperpod.tenancy for team %s (it lacks the tags %s; its tags: %s): refusing to change or delete it. "
        "To take it over, the platform adds %s to hyperpod_adopt.%s in the cluster file" % (
            what, team, ", ".join("%s=%s" % item for item in sorted(marks.items())), owner, layer or "its layer", team)
    )


# Tags as every service that receives the team's tags takes them (botocore's TagKey / TagValue of sagemaker, sso-admin
# and fsx, tagKeyType / tagValueType of iam: [\p{L}\p{Z}\p{N}_.:/=+\-@]*, keys 1-128, values 0-256 characters); the
# prefix aws: is reserved for AWS's own tags (https://docs.aws.amazon.com/tag-editor/latest/userguide/best-practices-and-strats.html).
TAG_KEY_MAX = 128
TAG_VALUE_MAX = 256
TAG_EXTRA_CHARACTERS = "_.:/=+-@"


def _tag_character(char):
    return unicodedata.category(char)[0] in ("L", "Z", "N") or char in TAG_EXTRA_CHARACTERS


def tag_problems(tags):
    """Why ``tags`` ({key: value}) cannot be tags of a team resource, one sentence each; empty when they can."""
    problems = []
    for key, value in sorted(tags.items(), key=lambda item: str(item[0])):
        value = "" if value is None else str(value)
        if not isinstance(key, str) or not 1 <= len(key) <= TAG_KEY_MAX or not all(_tag_character(c) for c in key):
            problems.append("tag key %r must be 1 to %d letters, digits, spaces or %s" % (key, TAG_KEY_MAX, TAG_EXTRA_CHARACTERS))
        elif key.lower().startswith("aws:"):
            problems.append("tag key %r: keys starting with aws: are reserved for AWS" % key)
        if len(value) > TAG_VALUE_MAX:
            problems.append("tag %r: the value has %d characters; AWS takes at most %d" % (key, len(value), TAG_VALUE_MAX))
        bad = "".join(sorted(set(c for c in value if not _tag_character(c))))
        if bad:
            problems.append("tag %r: the value %r has %r; a tag value takes letters, digits, spaces and %s only" % (key, value, bad, TAG_EXTRA_CHARACTERS))
    return problems


def _latin1_printable(char):
    return char in "\t\n\r" or 0x20 <= ord(char) <= 0x7E or 0xA1 <= ord(char) <= 0xFF


def latin1_text(text, longest):
    """``text`` as the printable Latin-1 that Identity Center and IAM descriptions take, at most ``longest`` characters.

    A team's description is free text: where a service is narrower (PermissionSetDescription,
    ``[\u0009\u000A\u000D\u0020-\u007E\u00A1-\u00FF]*``), a character outside it becomes its Latin-1
    decomposition without accents (``ő`` -> ``o``) or ``?``. The same text always gives the same result, so a
    rerun sees no difference.
    """
    adapted = []
    for char in unicodedata.normalize("NFC", text):
        if _latin1_printable(char):
            adapted.append(char)
        else:
            base = "".join(c for c in unicodedata.normalize("NFKD", char) if _latin1_printable(c))
            adapted.append(base or "?")
    return "".join(adapted)[:longest]


def names(team, prefix=DEFAULT_PREFIX):
    """Every name derived from ``team``, by what it names."""
    return {
        "namespace": namespace(team),
        "local_queue": local_queue(team),
        "cluster_queue": cluster_queue(team),
        "kubernetes_group": kubernetes_group(team),
        "service_account": service_account(team, prefix),
        "volume": team_volume(team, prefix),
        "permission_set": permission_set_name(team, prefix),
        "sso_role_name_pattern": sso_role_name_pattern(team, prefix),
        "domain": domain_name(team, prefix),
        "quota": quota_name(team, prefix),
        "budget": budget_name(team, prefix),
        "studio_execution_role": studio_execution_role_name(team, prefix),
        "s3_prefix": s3_prefix(team),
    }


def derived_names(team, prefix=DEFAULT_PREFIX):
    """(what, value, pattern, max length) for every name derived from ``team``."""
    return [
        ("Kubernetes namespace", namespace(team), DNS_LABEL_PATTERN, 63),
        ("Kueue local queue", local_queue(team), DNS_LABEL_PATTERN, 63),
        ("Identity Center permission set name", permission_set_name(team, prefix), IAM_NAME_PATTERN, 32),
        ("SageMaker domain name", domain_name(team, prefix), ENTITY_NAME_PATTERN, 63),
        ("compute quota name", quota_name(team, prefix), ENTITY_NAME_PATTERN, 63),
        ("budget name", budget_name(team, prefix), r"[^:\\]+", 100),
        ("IAM role name", studio_execution_role_name(team, prefix), IAM_NAME_PATTERN, 64),
    ]


def name_problems(team, prefix=DEFAULT_PREFIX):
    """Why ``team`` cannot be used, as a list of sentences; empty when it can."""
    what, pattern, longest = TEAM_NAME_RULE
    problems = []
    if not isinstance(team, str) or not re.fullmatch(pattern, team) or len(team) > longest:
        problems.append(
            "must be lower-case letters, digits and inner hyphens, at most %d characters (%s pattern %s)" % (longest, what, pattern)
        )
        return problems
    for what, value, pattern, longest in derived_names(team, prefix):
        if len(value) > longest or not re.fullmatch(pattern, value):
            problems.append("gives %s %r, longer than %d characters or outside pattern %s" % (what, value, longest, pattern))
    return problems


def description_problems(description):
    """What SageMaker would refuse in the ``description`` option (unset: nothing)."""
    if description is None:
        return []
    problems = []
    if len(description) > SAGEMAKER_DESCRIPTION_MAX:
        problems.append("description: longer than %d characters" % SAGEMAKER_DESCRIPTION_MAX)
    if re.search(SAGEMAKER_DESCRIPTION_FORBIDDEN, description):
        problems.append("description: control characters are not allowed")
    return problems
