# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The team file: every rule it must satisfy, checked at once, before any AWS call.

``check_team_file`` returns every problem (each naming the team and the field)
and the teams normalized: defaults filled in, members as ``{name, uid}``. The
roles consume only the normalized form, so a default lives here and nowhere else.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import copy
import difflib
import math
import re
from fractions import Fraction

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.hyperpod.tenancy.plugins.module_utils import access_entry, data_repository, domain, execution_role, team_dirs, team_namespace
from ansible_collections.hyperpod.tenancy.plugins.module_utils import budget as budget_rules
from ansible_collections.hyperpod.tenancy.plugins.module_utils import cluster as cluster_rules
from ansible_collections.hyperpod.tenancy.plugins.module_utils import identity_center
from ansible_collections.hyperpod.tenancy.plugins.module_utils import instance_types as instance_table
from ansible_collections.hyperpod.tenancy.plugins.module_utils import naming
from ansible_collections.hyperpod.tenancy.plugins.module_utils import quota as quota_rules
from ansible_collections.hyperpod.tenancy.plugins.module_utils import retired_names
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.execution_role import bucket_problems
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import REQUIRED, section_choices
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_dirs import parse_mode

PRIORITY_CLASS_PATTERN = naming.DNS_LABEL_PATTERN
PROFILE_NAME_PATTERN = naming.ENTITY_NAME_PATTERN
CLUSTER_NAME_PATTERN = r"[a-zA-Z0-9](-*[a-zA-Z0-9])*"
MAX_PRIORITY_CLASSES = 10
MAX_QUOTA_RESOURCES = 15
# "You can associate up to 10 tags with an object" (https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-tagging.html):
# the S3 ownership mark carries the team's tags beside managed-by, the team, the cost center and the identity tags.
MAX_TEAM_TAGS = 5
# One data repository association per team with s3_link, against the file system's limit (data_repository.MAX_ASSOCIATIONS).
MAX_DATA_REPOSITORY_ASSOCIATIONS = data_repository.MAX_ASSOCIATIONS

# Every key a team may have, with its default (``REQUIRED`` when it has none).
TEAM_DEFAULTS = {
    "name": REQUIRED,
    "state": "present",
    "identity_center_group": REQUIRED,
    "members": [],
    "cost_center": None,
    "description": None,
    "tags": {},
    "quota": None,
    "access": {},
    "workspace": {},
    "storage": {},
    "budget": None,
}
# What the platform decides for a team, never its own entry: the layers whose existing, unmarked resource it takes over
# (the cluster file's hyperpod_adopt.<team>, naming.ADOPTABLE; docs/isolation.md).
# ``studio_instance_types``: the instance types the team's Studio spaces and apps may run on (hyperpod_team_limits, the
# execution role's team-studio policy), never the team file's.
PLATFORM_DEFAULTS = {"adopt": [], "studio_instance_types": None}
# The platform's bounds on what a team may ask for itself (the cluster file's hyperpod_team_limits; docs/isolation.md).
# ``teams.<name>`` overrides the per-team bounds for one team; ``min_id`` and ``reserved_names`` hold for every team.
TEAM_LIMIT_DEFAULTS = {
    # quota.borrow_limit (percent of the guaranteed amount), and each absolute_borrow_limits amount against it.
    "borrow_limit": 100,
    "fair_share_weight": 50,
    # Pod Security levels a team's namespace may ask for (access.pod_security): restricted keeps root out of its pods.
    "pod_security": ["restricted"],
    # Any other choice of the team file, narrowed by the platform: the field to the values a team may choose. Studio apps
    # reach the internet only through the cluster's VPC unless the platform allows more. storage.s3_link (an FSx data
    # repository association exporting the team's export directory to its S3 prefix, one of the file system's 8) only where
    # the platform allows it: a team lead's pull request alone would otherwise spend one of the platform's associations.
    # access.cluster_read (AmazonSagemakerHyperpodUserClusterPolicy at cluster scope) reads every team's ClusterQueue, its
    # quota and usage, and every node and namespace: one team's switch would show it the others', so the platform's alone.
    "choices": {"workspace.app_network_access_type": ["VpcOnly"], "storage.s3_link": [False], "access.cluster_read": [False]},
    # The instance types a member may run a Studio space or app on, as the team's execution role (its team-studio policy,
    # sagemaker:InstanceTypes): small CPU ones, outside the HyperPod cluster and the team's quota. "system" is
    # JupyterServer's only value and a KernelGateway app's ml.t3.medium (botocore sagemaker ResourceSpec.InstanceType).
    "studio_instance_types": ["system", "ml.t3.medium", "ml.t3.large", "ml.m5.large", "ml.m5.xlarge"],
}
# The choices whose bound has a name of its own in hyperpod_team_limits.
CHOICE_SHORTHANDS = {"access.pod_security": "pod_security"}
PLATFORM_LIMIT_DEFAULTS = dict(TEAM_LIMIT_DEFAULTS, min_id=1000, reserved_names=[], teams={})
# uids and gids no team member or team may take: nobody and nogroup (and NFS's nfsnobody), whatever the platform's floor.
RESERVED_IDS = (65534, 65535, 4294967294)
# The sections' keys, each declared by the layer that consumes it (its ``TEAM_FILE_SECTION``: the key, the option it
# sets, its default, its spec), in the order of the team file (docs/team-file.md). The defaults, choices and types of
# the team file come from them, and team_layer_args passes each key on to its layer as that layer declares.
LAYER_SECTIONS = (
    quota_rules.TEAM_FILE_SECTION,
    access_entry.TEAM_FILE_SECTION,
    team_namespace.TEAM_FILE_SECTION,
    execution_role.TEAM_FILE_SECTION,
    domain.TEAM_FILE_SECTION,
    team_dirs.TEAM_FILE_SECTION,
    budget_rules.TEAM_FILE_SECTION,
)


def _sections(declarations):
    """``({section: {key: default}}, {section: {key: spec}})`` of the layers' declarations; a key declared twice is refused."""
    defaults, specs = {}, {}
    for declared in declarations:
        for key in declared:
            if key in defaults.get(declared.section, {}):
                raise ValueError("%s.%s is declared by two layers: one layer consumes a key" % (declared.section, key))
            defaults.setdefault(declared.section, {})[key] = declared[key]
            specs.setdefault(declared.section, {})[key] = declared.specs[key]
    return defaults, specs


SECTION_DEFAULTS, SECTION_SPECS = _sections(LAYER_SECTIONS)
# What every team shares that the roles may set (identity_session_duration); unset, it is this.
SETTING_DEFAULTS = {"session_duration": "PT8H"}
RESOURCE_KEYS = ("instance_type", "count", "accelerators", "vcpu", "memory_gib", "accelerator_partition")
CHOICES = {"state": ("present", "absent")}
CHOICES.update(
    ("%s.%s" % (declared.section, key), choices) for declared in LAYER_SECTIONS for key, choices in section_choices(declared).items()
)
# Switches the platform narrows too (hyperpod_team_limits.choices), though their layers declare no choices for them.
SWITCH_CHOICES = {"storage.s3_link": (False, True), "access.cluster_read": (False, True)}
CHOICES.update(SWITCH_CHOICES)


def _shown(values):
    """Choices as the messages show them (booleans as the YAML writes them: false, true)."""
    return ", ".join(("true" if value else "false") if isinstance(value, bool) else str(value) for value in values)


def _in_choices(value, choices):
    """``value`` is one of ``choices``, a boolean only as a boolean (``1 == True`` in Python, not in YAML)."""
    return any(value is choice if isinstance(choice, bool) or isinstance(value, bool) else value == choice for choice in choices)


def sagemaker_model():
    """botocore's SageMaker service model (None when botocore is absent)."""
    try:
        import botocore.session
    except ImportError:
        return None
    return botocore.session.get_session().get_service_model("sagemaker")


def hyperpod_instance_types():
    """Instance types HyperPod accepts, from botocore's model (None when botocore is absent)."""
    model = sagemaker_model()
    return frozenset(model.shape_for("ClusterInstanceType").enum) if model is not None else None


def _type_name(value):
    """The YAML-level type of ``value`` (values Ansible loaded are subclasses of these, with names of their own)."""
    for kind in (bool, int, float, str, dict, list):
        if isinstance(value, kind):
            return kind.__name__
    return type(value).__name__


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value):
    """An int, or a finite float: YAML's .nan and .inf are floats no amount can be."""
    return not isinstance(value, bool) and (isinstance(value, int) or isinstance(value, float) and math.isfinite(value))


class _Problems:
    """The problems, one sentence each; ``places`` says for each which value it is about.

    A place is ``(what, index, field)``: ``what`` is ``"teams"`` (``index`` the team's position, None for a problem
    across teams), ``"cluster"`` or ``"settings"`` (``field`` names the variable), ``field`` the dotted path inside
    it, so that a caller holding the parsed files can name the line.
    """

    def __init__(self):
        self.items = []
        self.places = []
        self.team_index = None

    def add(self, where, field, message):
        self.items.append("%s: %s: %s" % (where, field, message) if field else "%s: %s" % (where, message))
        if where in ("cluster", "settings", "teams"):
            self.places.append((where, None, field))
        elif self.team_index is not None:
            self.places.append(("teams", self.team_index, field))
        else:
            self.places.append((None, None, field))


def yaml_hint(value):
    """Why YAML gave ``value`` a type the writer likely did not mean, or an empty string."""
    if isinstance(value, bool):
        return " (YAML reads an unquoted yes, no, on, off, true or false as a boolean: quote the text, e.g. 'no')"
    if isinstance(value, (int, float)):
        return " (YAML reads an unquoted number as a number: quote it to make it text, e.g. '%s')" % (value,)
    if isinstance(value, str) and re.fullmatch(r"[-+]?(\d+(\.\d*)?|\.\d+)[eE][-+]?\d+", value):
        return " (YAML reads %s as text, not a number: write it with a dot and a signed exponent, e.g. 1.0e+3, or in full)" % value
    if isinstance(value, str) and re.fullmatch(r"[-+]?\d[\d_,]*(\.\d+)?", value.strip()):
        return " (it is quoted or has separators, so YAML reads it as text: write the number alone, unquoted)"
    return ""


def _unknown_keys(problems, where, field_prefix, given, allowed):
    for key in given:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), list(allowed), n=1)
            hint = " (did you mean %r?)" % close[0] if close else ""
            problems.add(where, field_prefix + str(key), "unknown key%s; allowed: %s" % (hint, ", ".join(sorted(allowed))))


def _entries(problems, where, field, entries, allowed, not_a_mapping):
    """(field, entry) for each mapping of the list ``entries``, its unknown keys reported; any other entry is reported and skipped."""
    for index, entry in enumerate(entries):
        entry_field = "%s[%d]" % (field, index)
        if not isinstance(entry, dict):
            problems.add(where, entry_field, not_a_mapping)
            continue
        _unknown_keys(problems, where, entry_field + ".", entry, allowed)
        yield entry_field, entry


def _fill(section, defaults):
    filled = {}
    for key, default in defaults.items():
        if key in section:
            filled[key] = copy.deepcopy(section[key])
        elif default is not REQUIRED:
            filled[key] = copy.deepcopy(default)
    return filled


def default_description(name):
    """The description of a team whose file gives none."""
    return "Team %s" % name


def with_defaults(team):
    """``team`` (a mapping) with every default of the team file filled in, as ``check_team_file`` fills them.

    For a team already checked (``check_team_file`` normalized it, or it comes from the roles): nothing is checked,
    members stay as given. What builds module options from a team reads its defaults here.
    """
    filled = _fill(team, dict(TEAM_DEFAULTS, **PLATFORM_DEFAULTS))
    for section, defaults in SECTION_DEFAULTS.items():
        value = filled.get(section)
        if isinstance(value, dict) or (value is None and TEAM_DEFAULTS[section] is not None):
            filled[section] = _fill(value or {}, defaults)
    filled["description"] = filled.get("description") or default_description(filled.get("name"))
    if isinstance(filled.get("access"), dict) and not filled["access"].get("policies"):
        # An empty list of access policies means the default ones, as it always has.
        filled["access"]["policies"] = list(SECTION_DEFAULTS["access"]["policies"])
    return filled


def without_refused(team, fields):
    """``team`` (normalized) as if its file had left out each of the refused ``fields``, or None when no layer can be built.

    A field the team model refused has been reported with its file and line; the layers' own checks then run on this
    team, so they report only what the team model did not find, never the same value again in a module's words.
    A refused field takes its default, a refused tag or member is left out, and a section whose required field was
    refused is left out with its layer. Without a usable name or group no layer runs.
    """
    team = copy.deepcopy(team)
    refused_members = set()
    for field in fields:
        head, unused, rest = field.partition(".")
        member = re.match(r"members\[(\d+)\]", field)
        key = re.match(r"[^.\[]+", rest).group(0) if rest else None
        if member:
            refused_members.add(int(member.group(1)))
        elif head in SECTION_DEFAULTS and isinstance(team.get(head), dict) and key in SECTION_DEFAULTS[head]:
            default = SECTION_DEFAULTS[head][key]
            if default is REQUIRED:
                team[head] = None
            else:
                team[head][key] = copy.deepcopy(default)
        elif head == "tags" and rest and isinstance(team.get("tags"), dict):
            team["tags"].pop(rest, None)
        elif head in TEAM_DEFAULTS and TEAM_DEFAULTS[head] is not REQUIRED:
            team[head] = copy.deepcopy(TEAM_DEFAULTS[head])
        else:
            return None
    if refused_members:
        team["members"] = [m for index, m in enumerate(team.get("members") or []) if index not in refused_members]
    return with_defaults(team)


def _choice(problems, where, field, value, choices):
    if value not in choices:
        problems.add(where, field, "%r is not one of %s" % (value, ", ".join(choices)))


def _int_range(problems, where, field, value, low, high, optional=False):
    if value is None and optional:
        return
    if not _is_int(value) or not low <= value <= high:
        problems.add(where, field, "%r must be a whole number from %d to %d%s" % (value, low, high, "" if _is_number(value) else yaml_hint(value)))


def _check_gid(problems, where, field, gid):
    _int_range(problems, where, field, gid, 1, 4294967294, optional=True)


def _check_mode(problems, where, field, mode):
    if _is_int(mode):
        # YAML 1.1 reads an unquoted 0777 as the octal number 511, and 2770 as the decimal number 2770.
        problems.add(where, field, "%r must be an octal mode given as a string, such as '2770'"
                     " (YAML reads an unquoted mode as a number: 0777 becomes 511)" % (mode,))
        return
    try:
        value = parse_mode(mode)
    except InputError as e:
        problems.add(where, field, e.message)
        return
    if value & 0o007:
        problems.add(where, field, "%r gives every user of the cluster access to the team's files (its last digit must be 0, as in '2770')" % (mode,))
    if value & 0o4000:
        problems.add(where, field, "%r sets the setuid bit on the team's directory; use a mode such as '2770'" % (mode,))


# What the team file asks of a key beyond the choices its layer declares.
KEY_RULES = {"storage.gid": _check_gid, "storage.mode": _check_mode}


def _check_declared(problems, where, section, values):
    """Each key of ``section`` that is set, checked by its rule (``KEY_RULES``) or against the choices its layer declares."""
    for key, spec in SECTION_SPECS[section].items():
        field = "%s.%s" % (section, key)
        if key not in values:
            continue
        if field in KEY_RULES:
            KEY_RULES[field](problems, where, field, values[key])
        elif spec.get("choices") and spec.get("type") == "list":
            if not isinstance(values[key], list):
                problems.add(where, field, "must be a list")
            else:
                for index, value in enumerate(values[key]):
                    _choice(problems, where, "%s[%d]" % (field, index), value, CHOICES[field])
        elif spec.get("choices"):
            _choice(problems, where, field, values[key], CHOICES[field])


def _check_switches(problems, where, section, values):
    """Each key of ``section`` that its layer declares a bool: true or false, never text YAML left as text."""
    for key, spec in SECTION_SPECS[section].items():
        if spec.get("type") == "bool" and key in values and not isinstance(values[key], bool):
            problems.add(where, "%s.%s" % (section, key), "must be true or false")


def _check_section(problems, where, team, section):
    raw = team.get(section)
    if raw is None:
        return None
    if not isinstance(raw, dict):
        problems.add(where, section, "must be a mapping, got %s" % _type_name(raw))
        return None
    defaults = SECTION_DEFAULTS[section]
    _unknown_keys(problems, where, section + ".", raw, defaults)
    for key, default in defaults.items():
        if default is REQUIRED and key not in raw:
            problems.add(where, "%s.%s" % (section, key), "is required")
    return _fill(raw, defaults)


def _check_resource_type(problems, where, field, instance_type, instance_types, cluster_types):
    """A quota resource's instance_type: given, a HyperPod instance type (``instance_types``), one of the cluster's groups' (``cluster_types``)."""
    if not isinstance(instance_type, str):
        problems.add(where, field + ".instance_type", "is required")
    elif instance_types is not None and instance_type not in instance_types:
        close = difflib.get_close_matches(instance_type, sorted(instance_types), n=1)
        hint = " (did you mean %r?)" % close[0] if close else ""
        problems.add(where, field + ".instance_type", "%r is not a HyperPod instance type%s" % (instance_type, hint))
    elif cluster_types is not None and instance_type not in cluster_types:
        known = ", ".join(sorted(cluster_types)) or "none"
        problems.add(where, field + ".instance_type", "the cluster has no %s instance group (it has: %s)" % (instance_type, known))


def _check_resource_amounts(problems, where, field, resource):
    """A quota resource's amounts: at least one given; count and accelerators whole numbers, vcpu and memory_gib numbers, in range."""
    amounts = [key for key in ("count", "accelerators", "vcpu", "memory_gib", "accelerator_partition") if key in resource]
    if not amounts:
        problems.add(where, field, "needs count, accelerators, vcpu, memory_gib or accelerator_partition")
    if "count" in resource:
        _int_range(problems, where, field + ".count", resource["count"], 0, instance_table.MAX_AMOUNT)
    if "accelerators" in resource:
        _int_range(problems, where, field + ".accelerators", resource["accelerators"], 0, instance_table.MAX_AMOUNT)
    for key in ("vcpu", "memory_gib"):
        if key in resource and (not _is_number(resource[key]) or not 0 <= resource[key] <= instance_table.MAX_AMOUNT):
            problems.add(where, "%s.%s" % (field, key), "%r must be a number from 0 to %d" % (resource[key], instance_table.MAX_AMOUNT))


def _check_partition(problems, where, field, partition):
    """A quota resource's accelerator_partition, when given: {type, count}, the type a MIG profile, the count in range."""
    if partition is None:
        return
    if not isinstance(partition, dict) or set(partition) != {"type", "count"}:
        problems.add(where, field + ".accelerator_partition", "must be {type: mig-..., count: N}")
    elif not (isinstance(partition["type"], str) and partition["type"].startswith("mig-")):
        problems.add(where, field + ".accelerator_partition.type", "%r is not a MIG profile (mig-...)" % (partition["type"],))
    else:
        _int_range(problems, where, field + ".accelerator_partition.count", partition["count"], 0, instance_table.MAX_AMOUNT)


def _check_resources(problems, where, resources, instance_types, cluster_types, section="quota.resources"):
    """The entries of ``quota.resources`` (or of ``quota.absolute_borrow_limits``, which may be empty): every amount a
    whole number or a number, never text a layer would convert after the platform's limits were compared."""
    if not isinstance(resources, list) or (not resources and section == "quota.resources"):
        problems.add(where, section, "must be a non-empty list" if section == "quota.resources" else "must be a list")
        return
    if len(resources) > MAX_QUOTA_RESOURCES:
        problems.add(where, section, "has %d entries; Task Governance accepts at most %d" % (len(resources), MAX_QUOTA_RESOURCES))
    seen = set()
    for field, resource in _entries(problems, where, section, resources, RESOURCE_KEYS, "must be a mapping with instance_type and count"):
        instance_type = resource.get("instance_type")
        _check_resource_type(problems, where, field, instance_type, instance_types, cluster_types)
        if isinstance(instance_type, str) and instance_type in seen:
            problems.add(where, field + ".instance_type", "%s is listed twice" % instance_type)
        seen.add(instance_type if isinstance(instance_type, str) else None)
        _check_resource_amounts(problems, where, field, resource)
        _check_partition(problems, where, field, resource.get("accelerator_partition"))


def _check_quota(problems, where, team, instance_types, cluster_types):
    quota = _check_section(problems, where, team, "quota")
    if quota is None:
        return None
    _check_resources(problems, where, quota.get("resources"), instance_types, cluster_types)
    _check_resources(problems, where, quota.get("absolute_borrow_limits"), instance_types, cluster_types, "quota.absolute_borrow_limits")
    _check_declared(problems, where, "quota", quota)
    _check_switches(problems, where, "quota", quota)
    low, high = quota_rules.BORROW_LIMIT_RANGE
    _int_range(problems, where, "quota.borrow_limit", quota["borrow_limit"], low, high, optional=True)
    if quota["borrow_limit"] is not None and quota["sharing"] != "lend_and_borrow":
        problems.add(where, "quota.borrow_limit", "applies only with sharing: lend_and_borrow (sharing is %r)" % quota["sharing"])
    _int_range(problems, where, "quota.fair_share_weight", quota["fair_share_weight"], 0, 100)
    return quota


def _check_members(problems, where, members):
    normalized = []
    if not isinstance(members, list):
        problems.add(where, "members", "must be a list of user names or {name, uid}")
        return normalized
    names, folded = {}, {}
    for index, member in enumerate(members):
        field = "members[%d]" % index
        if isinstance(member, str):
            member = {"name": member, "uid": None}
        elif isinstance(member, dict):
            _unknown_keys(problems, where, field + ".", member, ("name", "uid"))
            member = {"name": member.get("name"), "uid": member.get("uid")}
        else:
            problems.add(where, field, "must be a user name or {name, uid}")
            continue
        name = member["name"]
        if not isinstance(name, str) or not re.fullmatch(PROFILE_NAME_PATTERN, name):
            problems.add(where, field + ".name", "%r must match the SageMaker user profile pattern %s" % (name, PROFILE_NAME_PATTERN))
        elif name in names:
            problems.add(where, field + ".name", "%s is listed twice" % name)
        elif name.lower() in folded:
            problems.add(where, field + ".name", "%s and %s differ only in case: Identity Center user names ignore case, so they are one person" % (
                folded[name.lower()], name))
        if isinstance(name, str):
            names[name] = index
            folded.setdefault(name.lower(), name)
        if member["uid"] is not None:
            _int_range(problems, where, field + ".uid", member["uid"], 1, 4294967294)
        normalized.append(member)
    return normalized


def _check_budget(problems, where, team):
    budget = _check_section(problems, where, team, "budget")
    if budget is None:
        return None
    # The keys' declared choices and switches, as every section's (a new budget key is checked unwritten here).
    _check_declared(problems, where, "budget", budget)
    _check_switches(problems, where, "budget", budget)
    amount = budget.get("monthly_usd")
    if amount is not None and (not _is_number(amount) or amount <= 0):
        problems.add(where, "budget.monthly_usd", "%r must be a positive number%s" % (amount, "" if _is_number(amount) else yaml_hint(amount)))
    if not isinstance(budget["notify"], list):
        problems.add(where, "budget.notify", "must be a list of e-mail addresses or SNS topic ARNs")
    else:
        for index, target in enumerate(budget["notify"]):
            if not isinstance(target, str) or len(target) > naming.NOTIFY_TARGET_MAX or not any(
                    re.fullmatch(p, target) for p in (naming.EMAIL_PATTERN, naming.SNS_TOPIC_ARN_PATTERN)):
                problems.add(where, "budget.notify[%d]" % index, "%r is neither an e-mail address nor an SNS topic ARN" % (target,))
    for key in ("thresholds", "forecast_thresholds"):
        values = budget[key]
        if not isinstance(values, list) or not all(_is_number(v) and 0 < v <= budget_rules.MAX_THRESHOLD for v in values):
            problems.add(
                where, "budget." + key, "%r must be a list of percentages above 0 and at most %s" % (values, "{:,}".format(budget_rules.MAX_THRESHOLD))
            )
    if all(isinstance(budget[key], list) for key in ("notify", "thresholds", "forecast_thresholds")):
        for problem in budget_rules.limit_problems(budget["thresholds"], budget["forecast_thresholds"], [str(t) for t in budget["notify"]]):
            problems.add(where, "budget", problem)
    return budget


def _check_platform_keys(problems, where, team):
    """No key of the platform's (``PLATFORM_DEFAULTS``) in a team's entry: each names where the platform sets it instead."""
    for key in PLATFORM_DEFAULTS:
        if key in team:
            setting = "hyperpod_team_limits.teams.%s.%s" % (team.get("name"), key) if key in TEAM_LIMIT_DEFAULTS else "hyperpod_%s.%s" % (key, team.get("name"))
            problems.add(where, key, "is the platform's decision, not the team's: the platform lists it in the cluster file's "
                         "%s (docs/isolation.md)" % setting)


def _check_required_text(problems, where, team):
    """The team's name and identity_center_group: given, and text."""
    for key in ("name", "identity_center_group"):
        value = team.get(key)
        if value is None or value == "":
            problems.add(where, key, "is required")
        elif not isinstance(value, str):
            problems.add(where, key, "%r is not text%s" % (value, yaml_hint(value)))


def _check_optional_text(problems, where, team, normalized, tag_keys):
    """The team's cost_center and description: text when given (the description defaults from ``team``'s name); the cost
    center a value its tag can carry."""
    for key in ("cost_center", "description"):
        if normalized[key] is not None and not isinstance(normalized[key], str):
            problems.add(where, key, "must be text%s" % yaml_hint(normalized[key]))
    if normalized["description"] is None:
        normalized["description"] = default_description(team.get("name"))
    if isinstance(normalized["cost_center"], str):
        for problem in naming.tag_problems({tag_keys["cost_center"]: normalized["cost_center"]}):
            problems.add(where, "cost_center", problem)


def _check_tags(problems, where, tags, tag_keys):
    """The team's tags: a mapping of at most ``MAX_TEAM_TAGS`` text values AWS takes, none on a key the collection sets."""
    if not isinstance(tags, dict):
        problems.add(where, "tags", "must map tag keys to text values")
        return
    if len(tags) > MAX_TEAM_TAGS:
        problems.add(where, "tags", "has %d tags; a team takes at most %d: its S3 ownership mark carries them beside the collection's "
                     "five, and S3 takes at most 10 tags on an object" % (len(tags), MAX_TEAM_TAGS))
    reserved = {tag_keys["team"].lower(): "the team's name", tag_keys["cost_center"].lower(): "cost_center",
                naming.MANAGED_BY_TAG[0].lower(): "the collection"}
    for key, value in tags.items():
        if not isinstance(value, str):
            problems.add(where, "tags.%s" % key, "%r must be text%s" % (value, yaml_hint(value)))
            continue
        for problem in naming.tag_problems({key: value}):
            problems.add(where, "tags.%s" % key, problem)
        if key.lower() in reserved:
            problems.add(where, "tags.%s" % key, "is set from %s on every team resource; a team cannot set it (nor a key that differs "
                         "only in case)" % reserved[key.lower()])


def _check_always_sections(problems, where, team, normalized):
    """The sections every team has (a mapping by default), into ``normalized``: their keys' rules, then their switches, section by section."""
    always = [section for section in SECTION_DEFAULTS if TEAM_DEFAULTS[section] is not None]
    for section in always:
        normalized[section] = _check_section(problems, where, dict(team, **{section: team.get(section) or {}}), section)
    for section in always:
        _check_declared(problems, where, section, normalized[section])
    for section in always:
        _check_switches(problems, where, section, normalized[section])


def _check_team(problems, where, team, instance_types, cluster_types, tag_keys):
    _check_platform_keys(problems, where, team)
    _unknown_keys(problems, where, "", dict((k, v) for k, v in team.items() if k not in PLATFORM_DEFAULTS), TEAM_DEFAULTS)
    normalized = _fill(team, TEAM_DEFAULTS)
    _check_required_text(problems, where, team)
    _choice(problems, where, "state", normalized["state"], CHOICES["state"])
    normalized["members"] = _check_members(problems, where, normalized["members"])
    _check_optional_text(problems, where, team, normalized, tag_keys)
    _check_tags(problems, where, normalized["tags"], tag_keys)
    normalized["quota"] = _check_quota(problems, where, team, instance_types, cluster_types)
    normalized["budget"] = _check_budget(problems, where, team)
    _check_always_sections(problems, where, team, normalized)
    return normalized


CLUSTER_KEYS = ("name", "eks_cluster_name", "node_recovery", "autoscaling", "instance_groups", "scheduler")
# An instance group's keys in the cluster file beyond hyperpod_cluster's options: the most instances an autoscaling group
# may reach (its quotas are counted against it; the cluster role does not send it).
GROUP_FILE_KEYS = ("max_count",)
# "You must start with 0 nodes in your instance group and let Karpenter handle the autoscaling" ("Create a NodeClass":
# https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-eks-autoscaling-nodeclass.html).
AUTOSCALING_START = "must be 0 when the cluster autoscales: AWS has an autoscaling group start with 0 nodes and Karpenter scale it down to 0 otherwise"
SCHEDULER_KEYS = ("priority_classes", "fair_share", "idle_resource_sharing")
# Stand-ins for what the inventory gives the cluster role (roles, subnets, the EKS cluster): only their shape matters here.
_PLACEHOLDER_ROLE = "arn:aws:iam::111122223333:role/placeholder"
_PLACEHOLDER_EKS = "arn:aws:eks:us-east-1:111122223333:cluster/placeholder"


def _spec_problems(problems, checked, prefix):
    """Add the argument-spec errors of ``checked``, each under the option it names; whether there were any."""
    for error in checked.error_messages:
        option = re.search(r"(?:value of |argument '|parameters: ?)([a-z_]+)", error)
        problems.add("cluster", prefix + (option.group(1) if option else "").rstrip("."), "%s (an option of hyperpod.tenancy.hyperpod_cluster)" % error)
    return bool(checked.error_messages)


def _cluster_module_problems(problems, cluster, data_bucket):
    """What hyperpod_cluster and CreateCluster would refuse, checked now: the module's options, then botocore's model.

    The options are built as the cluster role builds them (``roles/cluster/tasks/main.yml``).
    """
    groups = []
    for index, group in enumerate(cluster.get("instance_groups") or []):
        if not isinstance(group, dict):
            return
        # ansible-core's int check raises OverflowError on .inf (and on its text): such a group is not checked further.
        infinite = sorted(key for key, value in group.items() if isinstance(value, float) and not math.isfinite(value))
        for key in infinite:
            if key not in ("count", "max_count"):  # _check_cluster names these
                problems.add("cluster", "instance_groups[%d].%s" % (index, key), "%r must be a whole number" % (group[key],))
        if infinite:
            return
        groups.append(dict(
            name=group.get("name"),
            instance_type=group.get("instance_type"),
            instance_types=group.get("instance_types"),
            mig_config=group.get("mig_config"),
            count=group.get("count"),
            execution_role=group.get("execution_role") or _PLACEHOLDER_ROLE,
            lifecycle_config=group.get("lifecycle_config") or dict(
                source_s3_uri="s3://%s/%s" % (data_bucket or "x-placeholder", naming.LIFECYCLE_PREFIX), on_create="x"),
            threads_per_core=group.get("threads_per_core") or 1,
            ebs_volume_size_gib=group.get("ebs_volume_size_gib"),
            training_plan_arn=group.get("training_plan_arn"),
        ))
    params = dict(name=cluster.get("name"), eks_cluster=cluster.get("eks_cluster_name"), instance_groups=groups,
                  subnet_ids=["subnet-0123456789abcdef0"], security_group_ids=["sg-0123456789abcdef0"])
    if cluster.get("node_recovery"):
        params["node_recovery"] = cluster["node_recovery"]
    if cluster.get("autoscaling") is True:
        params.update(auto_scaling=True, node_provisioning_mode="continuous", cluster_role=_PLACEHOLDER_ROLE)
    # The module's own spec, its instance groups one by one so that each problem names its group.
    spec = dict(cluster_rules.ARGUMENT_SPEC, instance_groups=dict(type="list", elements="dict"))
    checked = ArgumentSpecValidator(spec).validate(params)
    failed = _spec_problems(problems, checked, "")
    validated_groups = []
    for index, group in enumerate(groups):
        group_checked = ArgumentSpecValidator(cluster_rules.INSTANCE_GROUP_OPTIONS).validate(group)
        failed = _spec_problems(problems, group_checked, "instance_groups[%d]." % index) or failed
        validated_groups.append(group_checked.validated_parameters)
    # A group of neither or both instance_type and instance_types is reported with its fields (_check_group_types).
    if failed or any(cluster_rules.group_type_problem(group) for group in validated_groups):
        return
    params = dict(checked.validated_parameters, instance_groups=validated_groups)
    desired = cluster_rules.normalize_desired(params, _PLACEHOLDER_EKS)
    # What the cluster created from this file would be refused for autoscaling (the groups' problems have their fields).
    for problem in cluster_rules.autoscaling_problems(cluster_rules.created_after(desired), None):
        problems.add("cluster", "autoscaling", problem)
    model = sagemaker_model()
    if model is None:
        return
    request = cluster_rules.create_request(desired)
    for problem in cluster_rules.request_problems(model, "CreateCluster", request):
        problems.add("cluster", "", "CreateCluster would refuse %s" % cluster_rules.option_path(problem, "CreateCluster", request))


def _check_group_mig(problems, where, field, group, types):
    """An instance group's mig_config, when given with usable ``types``: a layout its type takes; the layout
    (instance_table.mig_layout), or None when the group declares none or it is refused."""
    if group.get("mig_config") is None or not types:
        return None
    problem = cluster_rules.mig_config_problem(types, group["mig_config"])
    if problem:
        problems.add(where, field + ".mig_config", problem)
        return None
    return instance_table.mig_layout(group["mig_config"])


def _check_group_lifecycle(problems, where, field, group, data_bucket):
    """An instance group's lifecycle scripts, which every node runs as root: nowhere a team's policy reaches (cluster_rules.lifecycle_uri_problem)."""
    lifecycle = group.get("lifecycle_config")
    lifecycle_problem = cluster_rules.lifecycle_uri_problem(lifecycle.get("source_s3_uri"), data_bucket) if isinstance(lifecycle, dict) else None
    if lifecycle_problem:
        problems.add(where, field + ".lifecycle_config.source_s3_uri", lifecycle_problem)


def _check_scheduler(problems, where, cluster):
    """The cluster's scheduler: a mapping of known keys, its switches true or false, its priority classes."""
    scheduler = cluster.get("scheduler") or {}
    if not isinstance(scheduler, dict):
        problems.add(where, "scheduler", "must be a mapping")
        scheduler = {}
    _unknown_keys(problems, where, "scheduler.", scheduler, SCHEDULER_KEYS)
    for key in ("fair_share", "idle_resource_sharing"):
        # As for the team booleans: a quoted 'yes' is text, and text is not taken for true.
        if key in scheduler and not isinstance(scheduler[key], bool):
            problems.add(where, "scheduler." + key, "%r must be true or false (unquoted)" % (scheduler[key],))
    _check_priority_classes(problems, where, scheduler.get("priority_classes") or [])


def _check_priority_classes(problems, where, classes):
    """The scheduler's priority classes: at most ``MAX_PRIORITY_CLASSES``, each a distinct valid name and a weight from 0 to 100."""
    if len(classes) > MAX_PRIORITY_CLASSES:
        problems.add(where, "scheduler.priority_classes", "has %d entries; Task Governance accepts at most %d" % (len(classes), MAX_PRIORITY_CLASSES))
    class_names = set()
    for index, priority in enumerate(classes):
        field = "scheduler.priority_classes[%d]" % index
        priority_name = priority.get("name") if isinstance(priority, dict) else None
        if not isinstance(priority_name, str) or len(priority_name) > 40 or not re.fullmatch(PRIORITY_CLASS_PATTERN, priority_name):
            problems.add(where, field + ".name", "%r must match %s, at most 40 characters" % (priority_name, PRIORITY_CLASS_PATTERN))
        elif priority_name in class_names:
            problems.add(where, field + ".name", "%r is used twice" % priority_name)
        class_names.add(priority_name)
        _int_range(problems, where, field + ".weight", (priority or {}).get("weight") if isinstance(priority, dict) else None, 0, 100)


def _check_cluster(problems, cluster, instance_types, data_bucket=None):
    """The cluster's instance groups as the capacity check counts them: [{name, types, instances, mig}] (None when the
    cluster is unusable); ``mig`` is the group's MIG layout (instance_table.mig_layout) or None when it declares none."""
    where = "cluster"
    if not isinstance(cluster, dict):
        problems.add(where, "hyperpod_cluster", "must be a mapping")
        return None
    _unknown_keys(problems, where, "", cluster, CLUSTER_KEYS)
    name = cluster.get("name")
    if not isinstance(name, str) or len(name) > 63 or not re.fullmatch(CLUSTER_NAME_PATTERN, name):
        problems.add(where, "name", "%r must match %s, at most 63 characters%s" % (name, CLUSTER_NAME_PATTERN, yaml_hint(name)))
    autoscaling = cluster.get("autoscaling", False)
    if not isinstance(autoscaling, bool):
        problems.add(where, "autoscaling", "%r must be true or false (unquoted)" % (autoscaling,))
    supply = []
    groups = cluster.get("instance_groups")
    if not isinstance(groups, list) or not groups:
        problems.add(where, "instance_groups", "must be a non-empty list")
        groups = []
    group_names = set()
    allowed = tuple(cluster_rules.INSTANCE_GROUP_OPTIONS) + GROUP_FILE_KEYS
    for field, group in _entries(problems, where, "instance_groups", groups, allowed, "must be a mapping"):
        name = group.get("name") if isinstance(group.get("name"), str) else None
        if name is not None and name in group_names:
            problems.add(where, field + ".name", "%r is used twice" % (name,))
        group_names.add(name)
        types = _check_group_types(problems, where, field, group, instance_types)
        count = group.get("count")
        _int_range(problems, where, field + ".count", count, 0, 10000000)
        instances = _check_group_scaling(problems, where, field, group, autoscaling is True)
        layout = _check_group_mig(problems, where, field, group, types)
        if types and _is_int(instances):
            supply.append(dict(name=str(group.get("name")), types=types, instances=instances, mig=layout))
        _check_group_lifecycle(problems, where, field, group, data_bucket)
    _check_scheduler(problems, where, cluster)
    _cluster_module_problems(problems, cluster, data_bucket)
    return supply


def _check_group_types(problems, where, field, group, instance_types):
    """The instance types the group may run (instance_table.group_instance_types) when given right, else []."""
    flexible = group.get("instance_types") is not None
    if flexible and (not isinstance(group["instance_types"], list) or not all(isinstance(t, str) for t in group["instance_types"])):
        problems.add(where, field + ".instance_types", "%r is not a list of instance types" % (group["instance_types"],))
        return []
    problem = cluster_rules.group_type_problem(group)
    if problem:
        problems.add(where, field, problem)
        return []
    if not flexible and not isinstance(group["instance_type"], str):
        problems.add(where, field + ".instance_type", "%r is not a HyperPod instance type" % (group["instance_type"],))
        return []
    types = instance_table.group_instance_types(group)
    for instance_type in types:
        if instance_types is not None and instance_type not in instance_types:
            problems.add(where, field + (".instance_types" if flexible else ".instance_type"), "%r is not a HyperPod instance type" % (instance_type,))
    return types


def _check_group_scaling(problems, where, field, group, autoscaling):
    """The instances the group's quotas are counted against (instance_table.group_instances), checked."""
    count, max_count = group.get("count"), group.get("max_count")
    if not autoscaling:
        if max_count is not None:
            problems.add(where, field + ".max_count", "is read only when the cluster autoscales (autoscaling: true); this group runs count instances")
        return count
    if _is_int(count) and count > 0:
        problems.add(where, field + ".count", AUTOSCALING_START)
    if max_count is None:
        problems.add(where, field + ".max_count", "is required when the cluster autoscales: the most instances Karpenter may scale the group "
                     "to (its NodePool's limit), which the teams' quotas are counted against")
        return None
    _int_range(problems, where, field + ".max_count", max_count, 1, 10000000)
    return max_count


def _check_settings(problems, name_prefix, tag_keys, data_bucket, identity_center_connection=None):
    """The collection-wide settings of the cluster file; returns whether the name prefix can be used."""
    for field, message in identity_center.connection_problems(identity_center_connection):
        problems.add("settings", field, message)
    usable = True
    if not isinstance(name_prefix, str) or not name_prefix:
        problems.add("settings", "hyperpod_name_prefix", "%r must be text%s" % (name_prefix, yaml_hint(name_prefix)))
        return False
    # The shortest team name shows what the prefix alone breaks, said once instead of once per team.
    for what, value, pattern, longest in naming.derived_names("a", name_prefix):
        if len(value) > longest or not re.fullmatch(pattern, value):
            problems.add("settings", "hyperpod_name_prefix", "%r gives %s %r, outside pattern %s or longer than %d characters" % (
                name_prefix, what, value, pattern, longest))
            usable = False
    for role, key in sorted(tag_keys.items()):
        if role not in ("team", "cost_center"):
            problems.add("settings", "hyperpod_team_tag_keys.%s" % role, "unknown key; allowed: cost_center, team")
        for problem in naming.tag_problems({key: None}):
            problems.add("settings", "hyperpod_team_tag_keys.%s" % role, problem)
    if data_bucket is not None:
        if not isinstance(data_bucket, str):
            problems.add("settings", "hyperpod_data_bucket", "%r must be text%s" % (data_bucket, yaml_hint(data_bucket)))
        else:
            for problem in bucket_problems(data_bucket):
                problems.add("settings", "hyperpod_data_bucket", problem)
    return usable


def _check_platform(problems, adopt, limits, inherit=None):
    """``(adopt, limits)``: the cluster file's ``hyperpod_adopt`` and ``hyperpod_team_limits`` checked, defaults filled in;
    ``hyperpod_inherit``'s shape checked (shared_info reads the ledger it answers)."""
    for problem in retired_names.inherit_problems(inherit):
        field, unused, message = problem.partition(": ")
        problems.add("settings", field, message)
    checked_adopt = {}
    if adopt is not None and not isinstance(adopt, dict):
        problems.add("settings", "hyperpod_adopt", "must map team names to lists of layers, among %s" % ", ".join(naming.ADOPTABLE))
    for team, layers in (adopt if isinstance(adopt, dict) else {}).items():
        field = "hyperpod_adopt.%s" % team
        if not isinstance(layers, list):
            problems.add("settings", field, "must be a list of layers, among %s" % ", ".join(naming.ADOPTABLE))
            continue
        for index, layer in enumerate(layers):
            _choice(problems, "settings", "%s[%d]" % (field, index), layer, naming.ADOPTABLE)
        checked_adopt[team] = [layer for layer in layers if layer in naming.ADOPTABLE]
    if limits is None:
        limits = {}
    if not isinstance(limits, dict):
        problems.add("settings", "hyperpod_team_limits", "must be a mapping (docs/isolation.md)")
        limits = {}
    _unknown_keys(problems, "settings", "hyperpod_team_limits.", limits, PLATFORM_LIMIT_DEFAULTS)
    checked = _fill(limits, PLATFORM_LIMIT_DEFAULTS)
    _check_limit_values(problems, "hyperpod_team_limits.", checked)
    if not (_is_int(checked["min_id"]) and 1 <= checked["min_id"] <= 4294967294):
        _int_range(problems, "settings", "hyperpod_team_limits.min_id", checked["min_id"], 1, 4294967294)
        checked["min_id"] = PLATFORM_LIMIT_DEFAULTS["min_id"]
    if not isinstance(checked["reserved_names"], list) or not all(isinstance(n, str) for n in checked["reserved_names"]):
        problems.add("settings", "hyperpod_team_limits.reserved_names", "must be a list of team names")
        checked["reserved_names"] = []
    if not isinstance(checked["teams"], dict):
        problems.add("settings", "hyperpod_team_limits.teams", "must map team names to the limits of that team")
        checked["teams"] = {}
    for team, own in checked["teams"].items():
        field = "hyperpod_team_limits.teams.%s." % team
        if not isinstance(own, dict):
            problems.add("settings", field[:-1], "must be a mapping of %s" % ", ".join(sorted(TEAM_LIMIT_DEFAULTS)))
            checked["teams"][team] = {}
            continue
        _unknown_keys(problems, "settings", field, own, TEAM_LIMIT_DEFAULTS)
        own = checked["teams"][team] = dict((key, value) for key, value in own.items() if key in TEAM_LIMIT_DEFAULTS)
        _check_limit_values(problems, field, own)
    return checked_adopt, checked


def _check_limit_values(problems, field, limits):
    """Report each refused value of ``limits`` and put the default in its place, so the teams are checked against a bound."""
    low, high = quota_rules.BORROW_LIMIT_RANGE
    for key, lowest, highest in (("borrow_limit", low, high), ("fair_share_weight", 0, 100)):
        if key in limits and not (_is_int(limits[key]) and lowest <= limits[key] <= highest):
            _int_range(problems, "settings", field + key, limits[key], lowest, highest)
            limits[key] = TEAM_LIMIT_DEFAULTS[key]
    if "studio_instance_types" in limits and not _studio_instance_types_ok(limits["studio_instance_types"]):
        problems.add("settings", field + "studio_instance_types", "%r must be a non-empty list of SageMaker AI app instance types "
                     "(botocore sagemaker AppInstanceType: system, ml.t3.medium, ...)" % (limits["studio_instance_types"],))
        limits["studio_instance_types"] = list(TEAM_LIMIT_DEFAULTS["studio_instance_types"])
    narrowed = limits.setdefault("choices", {})
    if not isinstance(narrowed, dict):
        problems.add("settings", field + "choices", "must map team-file fields to the values a team may choose")
        limits["choices"] = narrowed = {}
    if field == "hyperpod_team_limits.":
        # Field by field over the defaults: a platform narrowing one choice does not open another (storage.s3_link, Studio's
        # internet access) by leaving it out. update(), not dict(**): a key that is no string is reported below.
        given, limits["choices"] = narrowed, dict(TEAM_LIMIT_DEFAULTS["choices"])
        narrowed = limits["choices"]
        narrowed.update(given)
    narrowable = sorted(set(CHOICES) - set(["state"]) - set(CHOICE_SHORTHANDS))
    for choice, allowed in list(narrowed.items()):
        if choice not in narrowable:
            problems.add("settings", "%schoices.%s" % (field, choice), "is no choice of the team file the platform narrows here; among %s" % (
                ", ".join(narrowable)))
            del narrowed[choice]
        elif not isinstance(allowed, list) or not all(_in_choices(value, CHOICES[choice]) for value in allowed):
            problems.add("settings", "%schoices.%s" % (field, choice), "%r must be a list among %s" % (allowed, _shown(CHOICES[choice])))
            # A refused value keeps the default (storage.s3_link's [false]): dropping the key would allow every value.
            if field == "hyperpod_team_limits." and choice in TEAM_LIMIT_DEFAULTS["choices"]:
                narrowed[choice] = list(TEAM_LIMIT_DEFAULTS["choices"][choice])
            else:
                del narrowed[choice]
    # A shorthand (pod_security) narrows its field as choices does, under a name of its own.
    for choice, key in CHOICE_SHORTHANDS.items():
        if key not in limits:
            continue
        if isinstance(limits[key], list) and all(value in CHOICES[choice] for value in limits[key]):
            narrowed[choice] = limits[key]
        else:
            problems.add("settings", field + key, "%r must be a list among %s" % (limits[key], ", ".join(CHOICES[choice])))


def _studio_instance_types_ok(value):
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        return False
    model = sagemaker_model()
    known = model.shape_for("AppInstanceType").enum if model is not None else None
    return all(v in known for v in value) if known else all(re.fullmatch(r"system|ml\.[a-z0-9-]+\.[a-z0-9]+", v) for v in value)


def limits_for(limits, team):
    """The platform's bounds for ``team``: ``hyperpod_team_limits`` as checked, with that team's own overrides (``choices``
    field by field)."""
    own = limits["teams"].get(team) if isinstance(limits.get("teams"), dict) else None
    own = own if isinstance(own, dict) else {}
    return dict(limits, **dict(own, choices=dict(limits.get("choices") or {}, **(own.get("choices") or {}))))


def _check_choices(problems, where, team, limits):
    """Each choice of the team's entry among the values the platform allows it (``hyperpod_team_limits.choices``, and its
    shorthands such as ``pod_security``). A value that is no choice at all was reported once, as such (_check_declared)."""
    for field, allowed in sorted(limits["choices"].items()):
        section, unused, key = field.partition(".")
        value = team.get(section, {}).get(key) if isinstance(team.get(section), dict) else None
        if _in_choices(value, CHOICES.get(field, ())) and not _in_choices(value, allowed):
            setting = CHOICE_SHORTHANDS.get(field, "choices.%s" % field)
            shown = _shown([value]) if isinstance(value, bool) else repr(value)
            problems.add(where, field, "%s is not allowed for this team: the platform allows %s (hyperpod_team_limits.%s, or "
                         "hyperpod_team_limits.teams.%s.%s, in the cluster file)" % (
                             shown, _shown(allowed) or "none", setting, team.get("name"), setting))


def _check_within_limits(problems, where, team, limits):
    """What a team asks of itself beyond what the platform allows it (``limits_for``), and ids below the platform's floor."""
    source = "the platform's maximum for this team (hyperpod_team_limits in the cluster file)"
    quota = team.get("quota") or {}
    borrow_max = limits["borrow_limit"]
    if _is_int(quota.get("borrow_limit")) and _is_int(borrow_max) and quota["borrow_limit"] > borrow_max:
        problems.add(where, "quota.borrow_limit", "%d is above %d, %s" % (quota["borrow_limit"], borrow_max, source))
    if _is_int(quota.get("fair_share_weight")) and _is_int(limits["fair_share_weight"]) and quota["fair_share_weight"] > limits["fair_share_weight"]:
        problems.add(where, "quota.fair_share_weight", "%d is above %d, %s" % (quota["fair_share_weight"], limits["fair_share_weight"], source))
    guaranteed = {}
    for resource in quota.get("resources") if isinstance(quota.get("resources"), list) else []:
        if isinstance(resource, dict) and isinstance(resource.get("instance_type"), str):
            guaranteed[resource["instance_type"]] = resource
    borrows = quota.get("absolute_borrow_limits")
    for index, borrow in enumerate(borrows if isinstance(borrows, list) and _is_int(borrow_max) else []):
        if not isinstance(borrow, dict):
            continue
        own = (guaranteed.get(borrow["instance_type"]) if isinstance(borrow.get("instance_type"), str) else None) or {}
        amounts = [(key, borrow.get(key), own.get(key)) for key in ("count", "accelerators", "vcpu", "memory_gib")]
        partition, own_partition = borrow.get("accelerator_partition"), own.get("accelerator_partition")
        if isinstance(partition, dict):
            same = isinstance(own_partition, dict) and own_partition.get("type") == partition.get("type")
            amounts.append(("accelerator_partition.count", partition.get("count"), own_partition.get("count") if same else 0))
        for key, asked, given in amounts:
            if _is_number(asked):
                allowed = (given if _is_number(given) else 0) * borrow_max / 100.0
                if asked > allowed:
                    problems.add(where, "quota.absolute_borrow_limits[%d].%s" % (index, key), "%s is above %s: at most %d%% of the %s guaranteed of %s, %s" % (
                        asked, _amount(allowed), borrow_max, _amount(given if _is_number(given) else 0), borrow.get("instance_type"), source))
    floor = limits["min_id"]
    ids = [("members[%d].uid" % index, member.get("uid")) for index, member in enumerate(team.get("members") or []) if isinstance(member, dict)]
    ids.append(("storage.gid", (team.get("storage") or {}).get("gid")))
    for field, value in ids:
        if not _is_int(value) or not _is_int(floor):
            continue
        if value < floor:
            problems.add(where, field, "%d is below %d, the platform's lowest uid and gid for people and teams (hyperpod_team_limits.min_id): "
                         "ids below it belong to the system" % (value, floor))
        elif value in RESERVED_IDS:
            problems.add(where, field, "%d is nobody's (nobody, nogroup): no person or team takes it" % value)


def _amount(value):
    return ("%d" % value) if float(value).is_integer() else ("%.2f" % value)


def _check_across_teams(problems, teams):
    """What one team's entry alone cannot show: gids, uids and S3 links shared between teams."""
    gids, uids, people = {}, {}, {}
    for team in teams:
        name = str(team.get("name"))
        gid = (team.get("storage") or {}).get("gid")
        if _is_int(gid):
            gids.setdefault(gid, []).append(name)
        for member in team.get("members") or []:
            if not isinstance(member.get("name"), str) or not _is_int(member.get("uid")):
                continue
            person = member["name"].lower()
            uids.setdefault(member["uid"], {}).setdefault(person, []).append("%s (team %s)" % (member["name"], name))
            people.setdefault(person, {}).setdefault(member["uid"], []).append(name)
    for gid, owners in sorted(gids.items()):
        if len(owners) > 1:
            problems.add("teams", "storage.gid", "%d is the gid of %s: a gid belongs to one team" % (gid, " and ".join(owners)))
    for uid, holders in sorted(uids.items()):
        if len(holders) > 1:
            named = " and ".join(sorted(entry for entries in holders.values() for entry in entries))
            problems.add("teams", "members", "uid %d is given to %s: a uid belongs to one person" % (uid, named))
    for person, ids in sorted(people.items()):
        if len(ids) > 1:
            detail = ", ".join("%d in %s" % (uid, " and ".join(owners)) for uid, owners in sorted(ids.items()))
            problems.add("teams", "members", "%s has different uids (%s): one person has one uid in every team" % (person, detail))
    linked = [str(t.get("name")) for t in teams if t.get("state") == "present" and (t.get("storage") or {}).get("s3_link") is True]
    if len(linked) > MAX_DATA_REPOSITORY_ASSOCIATIONS:
        message = "%d teams link their directory to S3 (%s) but an FSx file system takes at most %d data repository associations"
        problems.add("teams", "storage.s3_link", message % (len(linked), ", ".join(linked), MAX_DATA_REPOSITORY_ASSOCIATIONS))


def _check_capacity(problems, teams, capacity, supply):
    """Every unit a quota guarantees (instances, accelerators, vCPUs, memory, MIG partitions), per instance type,
    against the cluster's capacity in the same unit (instance_table: the table and how AWS counts what is left out);
    then, when each type fits, every guarantee placed on the instance groups that can hold it (_check_placement)."""
    before = len(problems.items)
    demands = []
    counts, units = {}, {}
    for team in teams:
        if team["state"] != "present" or not team.get("quota") or not isinstance(team["quota"].get("resources"), list):
            continue
        name = str(team.get("name"))
        for index, resource in enumerate(team["quota"]["resources"]):
            if not isinstance(resource, dict) or not isinstance(resource.get("instance_type"), str) or resource["instance_type"] not in capacity:
                continue
            instance_type = resource["instance_type"]
            amounts, problem = instance_table.guaranteed(instance_type, resource)
            if problem:
                problems.add("teams", "quota.resources", "team %r: quota.resources[%d]: %s" % (name, index, problem))
                continue
            counts.setdefault(instance_type, []).append((name, resource.get("count") if _is_int(resource.get("count")) else 0))
            units.setdefault(instance_type, []).append((name, resource, amounts))
            demands.append((name, instance_type, resource, instance_table.instance_equivalent(instance_type, resource)))
    for instance_type, shares in sorted(counts.items()):
        fine = [resource for unused_name, resource, unused_amounts in units[instance_type]
                if any(resource.get(key) is not None for key in ("accelerators", "vcpu", "memory_gib", "accelerator_partition"))]
        if not fine or instance_table.spec(instance_type) is None:
            shares = [share for share in shares if share[1]]
            total = sum(count for unused_team, count in shares)
            if total > capacity[instance_type]:
                detail = ", ".join("%s %d" % share for share in shares)
                problems.add(
                    "teams",
                    "quota.resources",
                    "guaranteed %s total %d (%s) but the cluster has %d" % (instance_type, total, detail, capacity[instance_type]),
                )
            continue
        _check_units(problems, instance_type, units[instance_type], capacity[instance_type])
    if len(problems.items) == before:
        _check_placement(problems, demands, supply)


# The kind of guarantee that shares an instance with any other: vCPUs and memory without an accelerator.
REST = (None, False)


def _kind(instance_type, resource):
    """(MIG profile or None, whether it guarantees whole GPUs) of a quota resource: what an instance holding it is cut
    into. Whole instances of a type with accelerators are whole GPUs (instance_types.guaranteed counts them so)."""
    partition = resource.get("accelerator_partition")
    profile = partition.get("type") if isinstance(partition, dict) and partition.get("count") else None
    accelerators = (instance_table.spec(instance_type) or {}).get("accelerators")
    return profile, bool(resource.get("accelerators")) or bool(resource.get("count") and accelerators)


def _holds(group, instance_type, kind):
    """Whether ``group`` can hold guarantees of ``instance_type`` and ``kind`` (_kind): a group with a MIG layout holds
    partitions of its profile only, and no whole GPUs (nor whole instances of a GPU type); vCPUs and memory any group
    of the type."""
    if instance_type not in group["types"]:
        return False
    layout, (profile, whole) = group["mig"], kind
    if layout is None:
        return True
    if profile:
        return layout == profile and not whole
    return layout == instance_table.MIG_DISABLED if whole else True


def _unplaceable(demands, supply):
    """The demands (indexes of ``demands``, each ``(instance type, kind, instances)``) and groups (indexes of ``supply``)
    of a set whose demands exceed what the groups they can use hold (Hall's condition), or None when all have a place.

    A maximum flow from the demands to the groups (each its instances): what the flow cannot place is the shortfall, and
    the demands still reachable from the source in the residual graph, with the groups they reach, are the set to name
    (the minimum cut).
    """
    source, sink = "source", "sink"
    residual = {source: {}, sink: {}}
    unbounded = sum(d[2] for d in demands) + 1

    def edge(u, v, amount):
        residual.setdefault(u, {})[v] = residual.setdefault(u, {}).get(v, 0) + amount
        residual.setdefault(v, {}).setdefault(u, 0)

    for index, (instance_type, kind, amount) in enumerate(demands):
        edge(source, ("demand", index), amount)
        for group_index, group in enumerate(supply):
            if _holds(group, instance_type, kind):
                edge(("demand", index), ("group", group_index), unbounded)
    for group_index, group in enumerate(supply):
        edge(("group", group_index), sink, group["instances"])
    while True:
        parents, queue = {source: None}, collections.deque([source])
        while queue:
            node = queue.popleft()
            for target, left in residual[node].items():
                if left > 0 and target not in parents:
                    parents[target] = node
                    queue.append(target)
        if sink not in parents:
            break
        path, node = [], sink
        while parents[node] is not None:
            path.append((parents[node], node))
            node = parents[node]
        pushed = min(residual[u][v] for u, v in path)
        for u, v in path:
            residual[u][v] -= pushed
            residual[v][u] += pushed
    if all(left == 0 for left in residual[source].values()):
        return None
    reached = [node for node in parents if isinstance(node, tuple)]
    return sorted(i for kind, i in reached if kind == "demand"), sorted(i for kind, i in reached if kind == "group")


def _check_placement(problems, guarantees, supply):
    """Guarantees that fit each instance type but not the instance groups together.

    An instance runs one type (a flexible group's instances count once for all the types it allows) and its GPUs are cut
    one way (the layouts are all-<profile>): the guarantees of one type and GPU kind (_kind: whole GPUs, or one MIG
    profile's partitions) are added up and rounded up to whole instances, and the rest of the type (vCPUs and memory
    without an accelerator, REST) fills what they leave, any group of the type taking what does not fit there.
    """
    shares = {}
    for name, instance_type, resource, amount in guarantees:
        if amount > 0:
            by_team = shares.setdefault((instance_type, _kind(instance_type, resource)), {})
            by_team[name] = by_team.get(name, Fraction(0)) + amount
    demands = []
    for instance_type in sorted(set(key[0] for key in shares)):
        kinds = sorted((key for key in shares if key[0] == instance_type), key=repr)
        whole = dict((key, -(-sum(shares[key].values()) // 1)) for key in kinds if key[1] != REST)
        needed = -(-sum(sum(shares[key].values()) for key in kinds) // 1)
        whole[(instance_type, REST)] = max(0, needed - sum(whole.values()))
        demands.extend((instance_type, kind, whole[(instance_type, kind)]) for unused_type, kind in kinds if whole[(instance_type, kind)])
    found = _unplaceable(demands, supply)
    if found is None:
        return
    teams = {}
    for index in found[0]:
        for name, amount in shares[demands[index][:2]].items():
            teams[name] = teams.get(name, Fraction(0)) + amount
    groups = [supply[index] for index in found[1]]
    held = "the instance groups that can hold them (%s) have %d" % (
        ", ".join("%s %d%s" % (g["name"], g["instances"], " [mig %s]" % g["mig"] if g["mig"] else "") for g in groups),
        sum(g["instances"] for g in groups)) if groups else "no instance group can hold them"
    problems.add(
        "teams",
        "quota.resources",
        "guaranteed %s take %d whole instances (%s) but %s: the guarantees of one type and kind (whole GPUs, one MIG profile) "
        "are rounded up to whole instances, a flexible group's instances count once for all the types it allows, and a group with a "
        "MIG layout holds only its profile's partitions, no whole GPUs"
        % (", ".join(sorted(set(demands[i][0] for i in found[0]))), sum(demands[i][2] for i in found[0]),
           ", ".join("%s %s" % (name, _amount(float(amount))) for name, amount in teams.items()), held),
    )


def _share(name, resource, amount):
    """``vision 32`` (and where it comes from when not given in that unit)."""
    given = []
    if _is_int(resource.get("count")) and resource["count"]:
        given.append("%d instances" % resource["count"])
    partition = resource.get("accelerator_partition")
    if isinstance(partition, dict):
        given.append("%s x %s" % (partition.get("count"), partition.get("type")))
    return "%s %s%s" % (name, _amount(float(amount)), " [%s]" % " + ".join(given) if given else "")


def _check_units(problems, instance_type, guarantees, instances):
    """Over-subscription of ``instance_type`` in any unit: the guarantees in that unit against instances x per instance."""
    per_instance = instance_table.spec(instance_type)
    over = False
    for unit, words in instance_table.UNITS:
        if not per_instance[unit]:
            continue
        total = sum(amounts[unit] for unused_name, unused_resource, amounts in guarantees)
        has = instances * per_instance[unit]
        if total > has:
            detail = ", ".join(_share(name, resource, amounts[unit]) for name, resource, amounts in guarantees if amounts[unit])
            problems.add(
                "teams",
                "quota.resources",
                "guaranteed %s %s total %s (%s) but the cluster has %d (%d instances x %d)"
                % (instance_type, words, _amount(float(total)), detail, has, instances, per_instance[unit]),
            )
            over = True
    if over:
        return
    # The quota layer (quota.capacity_problems, at run time) counts each quota by its largest share of an instance: a
    # mix that fits unit by unit only because one team asks for vCPUs without memory and another the reverse is refused
    # here too, before the first write, rather than by the quota layer in the middle of a run.
    shares = [(name, instance_table.instance_equivalent(instance_type, resource)) for name, resource, unused_amounts in guarantees]
    total = sum(share for unused_name, share in shares)
    if total > instances:
        detail = ", ".join("%s %s" % (name, _amount(float(share))) for name, share in shares if share)
        problems.add(
            "teams",
            "quota.resources",
            "guaranteed %s total %s instances (%s), each quota counted by its largest share of an instance, but the cluster has %d"
            % (instance_type, _amount(float(total)), detail, instances),
        )


def _check_team_name(problems, where, index, name, name_prefix, reserved, seen):
    """Team #``index``'s name: one AWS names take under ``name_prefix``, not ``reserved`` for the platform, no other team's
    (``seen``: each name's first team index, which this adds to)."""
    for reason in naming.name_problems(name, name_prefix):
        problems.add(where, "name", reason)
    if name in reserved:
        problems.add(where, "name", "%r is reserved for the platform (%s): a team of that name would take over what the platform "
                     "names so" % (name, naming.RESERVED_TEAM_NAMES.get(name, "hyperpod_team_limits.reserved_names")))
    if name in seen:
        problems.add(where, "name", "is used by team #%d and team #%d" % (seen[name] + 1, index + 1))
    seen.setdefault(name, index)


def _check_settings_name_teams(problems, limits, inherit, adopt, seen):
    """Every team the platform's settings name (hyperpod_team_limits.teams, hyperpod_inherit, hyperpod_adopt) is one of
    the team file's (``seen``)."""
    named = dict((team, "hyperpod_team_limits.teams.%s" % team) for team in limits["teams"])
    named.update((team, "hyperpod_inherit.%s" % team) for team in (inherit if isinstance(inherit, dict) else {}))
    named.update((team, "hyperpod_adopt.%s" % team) for team in adopt)
    for team, field in sorted(named.items()):
        if team in seen:
            continue
        problems.add("settings", field, "names no team of the team file (teams: %s)" % (", ".join(sorted(seen)) or "none"))


def _check_groups_not_shared(problems, normalized):
    """No Identity Center group is the group of two teams (present or offboarding)."""
    groups = {}
    for team in normalized:
        group = team.get("identity_center_group")
        # A team being offboarded keeps its group until it is gone: a present team taking it would be granted what the
        # offboarding revokes, and its members what the team still holds.
        if isinstance(group, str):
            groups.setdefault(group, []).append(team.get("name"))
    for group, owners in sorted(groups.items()):
        if len(owners) > 1:
            problems.add("teams", "identity_center_group", "%s is the group of %s: a group belongs to one team" % (group, " and ".join(map(str, owners))))


def check_team_file(teams, cluster, name_prefix=naming.DEFAULT_PREFIX, instance_types=None, tag_keys=None, data_bucket=None,
                    identity_center_connection=None, adopt=None, team_limits=None, inherit=None):
    """Return (problems, normalized teams, capacity per instance type); ``problems_with_places`` also says where."""
    return check_team_file_with_places(teams, cluster, name_prefix, instance_types, tag_keys, data_bucket, identity_center_connection,
                                       adopt, team_limits, inherit)[:3]


def check_team_file_with_places(teams, cluster, name_prefix=naming.DEFAULT_PREFIX, instance_types=None, tag_keys=None, data_bucket=None,
                                identity_center_connection=None, adopt=None, team_limits=None, inherit=None):
    """Return (problems, normalized teams, capacity, places): ``places[i]`` is ``(file, team index, field)`` of ``problems[i]``.

    ``identity_center_connection`` is ``hyperpod_identity_center`` (identity_center.connection_problems checks it);
    ``adopt`` and ``team_limits`` are the platform's ``hyperpod_adopt`` and ``hyperpod_team_limits`` (docs/isolation.md):
    what the teams may take over and ask for, which no team's entry can change.
    """
    problems = _Problems()
    if instance_types is None:
        instance_types = hyperpod_instance_types()
    tag_keys = naming.tag_keys_with_defaults(tag_keys)
    prefix_usable = _check_settings(problems, name_prefix, tag_keys, data_bucket, identity_center_connection)
    adopt, limits = _check_platform(problems, adopt, team_limits, inherit)
    reserved = set(naming.RESERVED_TEAM_NAMES).union(limits["reserved_names"])
    supply = _check_cluster(problems, cluster, instance_types, data_bucket)
    capacity = instance_table.capacity_of((group["types"], group["instances"]) for group in supply) if supply is not None else None
    cluster_types = frozenset(capacity) if capacity is not None else None
    if not isinstance(teams, list):
        problems.add("hyperpod_teams", "", "must be a list of teams, got %s" % _type_name(teams))
        return problems.items, [], capacity or {}, problems.places
    normalized = []
    seen = {}
    for index, team in enumerate(teams):
        if not isinstance(team, dict):
            problems.add("team #%d" % (index + 1), "", "must be a mapping, got %s" % _type_name(team))
            continue
        name = team.get("name")
        where = "team %r" % name if isinstance(name, str) and name else "team #%d" % (index + 1)
        problems.team_index = index
        if isinstance(name, str) and name:
            _check_team_name(problems, where, index, name, name_prefix if prefix_usable else naming.DEFAULT_PREFIX, reserved, seen)
        checked = _check_team(problems, where, team, instance_types, cluster_types, tag_keys)
        checked["adopt"] = list(adopt.get(name, [])) if isinstance(name, str) else []
        own_limits = limits_for(limits, name)
        checked["studio_instance_types"] = list(own_limits["studio_instance_types"])
        _check_within_limits(problems, where, checked, own_limits)
        if checked.get("state") != "absent":
            # An absent entry is always offboardable: what it still says (storage.s3_link) changes nothing it does.
            _check_choices(problems, where, checked, own_limits)
        normalized.append(checked)
        problems.team_index = None
    _check_settings_name_teams(problems, limits, inherit, adopt, seen)
    _check_groups_not_shared(problems, normalized)
    _check_across_teams(problems, normalized)
    if capacity:
        _check_capacity(problems, normalized, capacity, supply)
    return problems.items, normalized, capacity or {}, problems.places


def wanted_team_problems(teams, wanted, expect_state=None):
    """What keeps a run for the team ``wanted`` (with ``state: expect_state`` when given) from the normalized ``teams``."""
    if not wanted:
        return []
    match = [team for team in teams if team.get("name") == wanted]
    if not match:
        return ["team %r: not in the team file (teams: %s)" % (wanted, ", ".join(str(t.get("name")) for t in teams) or "none")]
    if expect_state and match[0]["state"] != expect_state:
        return ["team %r: state: is %r, expected %r" % (wanted, match[0]["state"], expect_state)]
    return []


def problems_message(problems):
    """The failure message of a team file with ``problems``."""
    count = len(problems)
    return "The team file has %d problem%s:\n%s" % (count, "" if count == 1 else "s", "\n".join(problems))
