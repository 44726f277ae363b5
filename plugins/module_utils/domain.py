# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""A team's SageMaker AI domain (SageMaker Studio): its user profiles and its Identity Center group.

Pure functions (``input_problems``, ``desired_view``, ``current_view``, ``*_request``) are
unit-tested without AWS; ``DomainManager`` drives the boto3 clients.

The comparison works on a *view*: the members of the domain and its user profiles this
collection manages, in snake_case. ``current_view`` reads it from AWS's answers;
``desired_view`` is the current view with the options the user set laid over it, so an
option left unset never causes a change. ``changed`` is ``current != desired``.

A user profile's view holds only what the run compares on it (``profile_keys``: its
``sso_user_name``, ``execution_role`` and ``fsx_path`` options, when set). A profile with none
of them is known from ``ListUserProfiles`` alone and is not described; its view is empty
whether it was just created, updated, read again or predicted in check mode, and so is the
same in every run (``profile_result`` renders it the same way in the result and the prediction).

What AWS cannot change in place (the auth mode, the VPC, the Identity Center user of a
user profile) and what AWS would reject (names outside the API's patterns, unknown
Identity Center users and groups, a network change while apps run) fail with
``InputError`` before any call that writes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

from ansible_collections.amazon.aws.plugins.module_utils.tagging import compare_aws_tags

from ansible_collections.hyperpod.tenancy.plugins.module_utils import engine, identity_center, naming, sagemaker
from ansible_collections.hyperpod.tenancy.plugins.module_utils.compare import snake
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import ConflictError, HyperPodError, InputError, error_code
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import (
    IDENTITY_CENTER, NAME_PREFIX, STATE, TAGS, TEAM_TAGS, known_value, options, team_section,
)
from ansible_collections.hyperpod.tenancy.plugins.module_utils.waiters import GONE, wait_for_status

# botocore's patterns (DomainName, DomainId, UserProfileName, FileSystemPath, RoleArn, SingleSignOnUserValue).
NAME_PATTERN = naming.ENTITY_NAME_PATTERN
DOMAIN_ID_PATTERN = r"d-(-*[a-z0-9]){1,61}"
FSX_PATH_PATTERN = r"\/\S*"
FSX_ID_PATTERN = r"fs-[0-9a-f]{8,}"
ROLE_PATTERN = r"arn:aws[a-z\-]*:iam::\d{12}:role/?[a-zA-Z_0-9+=,.@\-_/]+"
MAX_SECURITY_GROUPS = 5
MAX_FILE_SYSTEMS = 10
MAX_SSO_USER = 256

TRANSITIONAL = ("Pending", "Updating", "Deleting")
FAILED = ("Failed", "Update_Failed", "Delete_Failed")
APP_GONE = ("Deleted", "Failed")
# DeleteUserProfile with apps or spaces of the profile left: how often remove_profile lists and deletes them before it fails.
PROFILE_REMOVAL_ROUNDS = 3
PROFILE_IN_USE_CODES = ("ResourceInUse", "ResourceInUseException")
TAG_PROPAGATION = {True: "ENABLED", False: "DISABLED"}
WEB_PORTAL = {"enabled": "ENABLED", "disabled": "DISABLED"}


# ---------------------------------------------------------------- options -> view


def domain_name(params):
    return params.get("name") or naming.domain_name(params["team"], params.get("name_prefix") or naming.DEFAULT_PREFIX)


def fsx_config(file_system_id, path):
    return {"FSxLustreFileSystemConfig": {"FileSystemId": file_system_id, "FileSystemPath": path or "/"}}


def _fsx_view(configs):
    """CustomFileSystemConfigs as [{file_system_id, path}] (FSx for Lustre ones; others kept as given)."""
    result = []
    for config in configs or []:
        lustre = config.get("FSxLustreFileSystemConfig")
        if lustre:
            result.append({"fsx_lustre_file_system_id": lustre.get("FileSystemId"), "path": lustre.get("FileSystemPath") or "/"})
        else:
            result.append(snake(config))
    return result


def _user_settings_view(settings):
    settings = settings or {}
    return dict((key, to_view(settings[field])) for field, key, to_view, _to_request in USER_SETTINGS if settings.get(field))


def profile_keys(params, auth_mode):
    """{profile name: the view keys this run compares on it}, for the profiles that have any.

    Only these profiles are described (DescribeUserProfile); the others are known from
    ListUserProfiles, and their view is empty. The Identity Center user of a profile is compared
    only when ``sso_user_name`` is given for it.
    """
    keys = {}
    for profile in params.get("user_profiles") or []:
        wanted = []
        if auth_mode == "SSO" and profile.get("sso_user_name"):
            wanted.append("single_sign_on_user_value")
        if profile.get("execution_role"):
            wanted.append("execution_role")
        if profile.get("fsx_path"):
            wanted.append("custom_file_systems")
        if wanted:
            keys[profile["name"]] = tuple(wanted)
    return keys


def _profile_view(profile, keys):
    """The ``keys`` of a profile's view, from DescribeUserProfile (a ListUserProfiles summary has none)."""
    view = {"single_sign_on_user_value": profile.get("SingleSignOnUserValue")}
    view.update(_user_settings_view(profile.get("UserSettings")))
    return dict((k, v) for k, v in view.items() if v is not None and k in keys)


def profile_settings(params, profile, auth_mode):
    """Everything a new profile is created with (``create_profile_request``), compared or not."""
    settings = {}
    if auth_mode == "SSO":
        settings["single_sign_on_user_value"] = profile.get("sso_user_name") or profile["name"]
    if profile.get("execution_role"):
        settings["execution_role"] = profile["execution_role"]
    if profile.get("fsx_path"):
        settings["custom_file_systems"] = _profile_custom_file_systems(params, profile)
    return settings


def profile_result(domain_id, name, status, view):
    """A user profile in the module's result: ListUserProfiles' fields (no timestamps) and its view."""
    entry = {"domain_id": domain_id, "user_profile_name": name, "status": status, "user_settings": snake(user_settings_request(view))}
    if view.get("single_sign_on_user_value"):
        entry.update(single_sign_on_user_identifier="UserName", single_sign_on_user_value=view["single_sign_on_user_value"])
    return entry


def current_view(domain, tags, profiles, group_ids, keys=None):
    """The managed members of a described domain, its tags, its profiles ({name: ListUserProfiles summary,
    or DescribeUserProfile for those in ``keys``}) with the keys ``profile_keys`` gives for each."""
    if not domain:
        return {}
    view = {
        "domain_name": domain["DomainName"],
        "auth_mode": domain["AuthMode"],
        "app_network_access_type": domain.get("AppNetworkAccessType") or "PublicInternetOnly",
        "tag_propagation": (domain.get("TagPropagation") or "DISABLED") == "ENABLED",
        "default_user_settings": _user_settings_view(domain.get("DefaultUserSettings")),
        "tags": dict(tags or {}),
        "user_profiles": dict((name, _profile_view(profile, (keys or {}).get(name, ()))) for name, profile in (profiles or {}).items()),
    }
    if domain.get("VpcId"):
        view["vpc_id"] = domain["VpcId"]
    if domain.get("SubnetIds"):
        view["subnet_ids"] = sorted(domain["SubnetIds"])
    if domain["AuthMode"] == "SSO":
        view["identity_center_group_ids"] = sorted(group_ids or [])
    return view


def _profile_custom_file_systems(params, profile):
    """A profile's CustomFileSystemConfigs view: the domain's FSx path plus the profile's home path."""
    fsx = params.get("fsx_lustre") or {}
    configs = []
    if fsx.get("file_system_id"):
        configs.append({"fsx_lustre_file_system_id": fsx["file_system_id"], "path": fsx.get("path") or "/"})
        if profile.get("fsx_path"):
            configs.append({"fsx_lustre_file_system_id": fsx["file_system_id"], "path": profile["fsx_path"]})
    return configs


def desired_view(params, current, tags, group_id=None):
    """``current`` (a current_view, {} for a new domain) with the options the user set laid over it."""
    auth_mode = effective_auth_mode(params, current)
    view = copy.deepcopy(current) if current else {
        "domain_name": domain_name(params),
        "auth_mode": auth_mode,
        "app_network_access_type": "PublicInternetOnly",
        "tag_propagation": False,
        "default_user_settings": {},
        "tags": {},
        "user_profiles": {},
    }
    if not current and auth_mode == "SSO":
        view["identity_center_group_ids"] = []
    view["auth_mode"] = auth_mode
    if params.get("vpc_id"):
        view["vpc_id"] = params["vpc_id"]
    if params.get("subnet_ids") is not None:
        view["subnet_ids"] = sorted(params["subnet_ids"])
    if params.get("app_network_access_type"):
        view["app_network_access_type"] = params["app_network_access_type"]
    if params.get("tag_propagation") is not None:
        view["tag_propagation"] = params["tag_propagation"]
    settings = view["default_user_settings"]
    if params.get("execution_role"):
        settings["execution_role"] = params["execution_role"]
    if params.get("security_group_ids") is not None:
        settings["security_group_ids"] = sorted(params["security_group_ids"])
        if not settings["security_group_ids"]:
            del settings["security_group_ids"]
    fsx = params.get("fsx_lustre")
    if fsx:
        settings["custom_file_systems"] = [{"fsx_lustre_file_system_id": fsx["file_system_id"], "path": fsx.get("path") or "/"}]
    if params.get("studio_web_portal"):
        settings["studio_web_portal"] = params["studio_web_portal"]
    if params.get("default_landing_uri"):
        settings["default_landing_uri"] = params["default_landing_uri"]
    view["tags"] = dict(tags)
    if params.get("user_profiles") is not None:
        keys = profile_keys(params, view["auth_mode"])
        profiles = {} if params.get("purge_user_profiles") else dict(view["user_profiles"])
        for profile in params["user_profiles"]:
            compared = keys.get(profile["name"], ())
            existing = dict(view["user_profiles"].get(profile["name"]) or {})
            existing.update((k, v) for k, v in profile_settings(params, profile, view["auth_mode"]).items() if k in compared)
            profiles[profile["name"]] = existing
        view["user_profiles"] = profiles
    if group_id and view["auth_mode"] == "SSO":
        view["identity_center_group_ids"] = [group_id]
    return view


# ---------------------------------------------------------------- view -> requests


def _custom_file_systems_request(configs):
    return [fsx_config(c["fsx_lustre_file_system_id"], c["path"]) for c in configs if "fsx_lustre_file_system_id" in c]


def _as_is(value):
    return value


# The user settings the module manages (a domain's DefaultUserSettings, a profile's UserSettings), each once:
# (API field, view key, API value -> view, view value -> request). Unset or empty is left out both ways.
USER_SETTINGS = (
    ("ExecutionRole", "execution_role", _as_is, _as_is),
    ("SecurityGroups", "security_group_ids", sorted, list),
    ("CustomFileSystemConfigs", "custom_file_systems", _fsx_view, _custom_file_systems_request),
    ("StudioWebPortal", "studio_web_portal", lambda value: value.lower(), lambda value: WEB_PORTAL[value]),
    ("DefaultLandingUri", "default_landing_uri", _as_is, _as_is),
)


def user_settings_request(settings_view):
    return dict((field, to_request(settings_view[key])) for field, key, _to_view, to_request in USER_SETTINGS if settings_view.get(key))


def create_domain_request(view):
    request = {
        "DomainName": view["domain_name"],
        "AuthMode": view["auth_mode"],
        "DefaultUserSettings": user_settings_request(view["default_user_settings"]),
        "AppNetworkAccessType": view["app_network_access_type"],
        "TagPropagation": TAG_PROPAGATION[view["tag_propagation"]],
        "Tags": sagemaker.tag_list(view["tags"]),
    }
    if view.get("vpc_id"):
        request["VpcId"] = view["vpc_id"]
    if view.get("subnet_ids"):
        request["SubnetIds"] = list(view["subnet_ids"])
    return request


def update_domain_request(domain_id, current, desired):
    """UpdateDomain with only what differs; None when nothing does."""
    request = {}
    if current["default_user_settings"] != desired["default_user_settings"]:
        changed = dict((k, v) for k, v in desired["default_user_settings"].items() if current["default_user_settings"].get(k) != v)
        request["DefaultUserSettings"] = user_settings_request(changed)
    if current.get("subnet_ids") != desired.get("subnet_ids"):
        request["SubnetIds"] = list(desired["subnet_ids"])
    if current["app_network_access_type"] != desired["app_network_access_type"]:
        request["AppNetworkAccessType"] = desired["app_network_access_type"]
    if current["tag_propagation"] != desired["tag_propagation"]:
        request["TagPropagation"] = TAG_PROPAGATION[desired["tag_propagation"]]
    if not request:
        return None
    request["DomainId"] = domain_id
    return request


def create_profile_request(domain_id, name, view, tags):
    request = {"DomainId": domain_id, "UserProfileName": name, "Tags": sagemaker.tag_list(tags)}
    if view.get("single_sign_on_user_value"):
        request["SingleSignOnUserIdentifier"] = "UserName"
        request["SingleSignOnUserValue"] = view["single_sign_on_user_value"]
    settings = user_settings_request(view)
    if settings:
        request["UserSettings"] = settings
    return request


def update_profile_request(domain_id, name, current, desired):
    changed = dict((k, v) for k, v in desired.items() if k != "single_sign_on_user_value" and current.get(k) != v)
    if not changed:
        return None
    return {"DomainId": domain_id, "UserProfileName": name, "UserSettings": user_settings_request(changed)}


# ---------------------------------------------------------------- input checks (before any call)


def effective_auth_mode(params, current=None):
    """The auth mode the domain will have: the option, else the existing domain's, else SSO."""
    return params.get("auth_mode") or (current or {}).get("auth_mode") or "SSO"


def _naming_problems(params):
    """What is wrong with domain_id, team and the domain name they give, as sentences."""
    problems = []
    if params.get("domain_id") and not re.fullmatch(DOMAIN_ID_PATTERN, params["domain_id"]):
        problems.append("domain_id: %r is not a domain id (d-...)" % params["domain_id"])
    if params.get("team"):
        problems.extend("team %r %s" % (params["team"], p) for p in naming.name_problems(params["team"], params.get("name_prefix") or naming.DEFAULT_PREFIX))
    name = domain_name(params)
    if not re.fullmatch(NAME_PATTERN, name):
        problems.append("name: %r does not match the DomainName pattern %s (at most 63 characters)" % (name, NAME_PATTERN))
    return problems


def _fsx_problems(fsx):
    """What is wrong with the fsx_lustre option (when given), as sentences."""
    problems = []
    if not re.fullmatch(FSX_ID_PATTERN, fsx.get("file_system_id") or ""):
        problems.append("fsx_lustre.file_system_id: %r is not an FSx file system id (fs-...)" % fsx.get("file_system_id"))
    if fsx.get("path") and not re.fullmatch(FSX_PATH_PATTERN, fsx["path"]):
        problems.append("fsx_lustre.path: %r must start with / and contain no white space" % fsx["path"])
    return problems


def _profile_name_problems(label, pname, seen):
    """What is wrong with a user profile's name: its pattern, and whether an earlier profile (``seen``) has it."""
    problems = []
    if not re.fullmatch(NAME_PATTERN, pname):
        problems.append(
            "%s.name: %r does not match the UserProfileName pattern %s (letters, digits and inner hyphens, at most 63)" % (label, pname, NAME_PATTERN)
        )
    if pname in seen:
        problems.append("%s.name: %r is listed twice" % (label, pname))
    return problems


def _profile_settings_problems(label, profile, pname, sso, fsx):
    """What is wrong with a user profile's sso_user_name, execution_role and fsx_path, as sentences."""
    problems = []
    if profile.get("sso_user_name") and not sso:
        problems.append("%s.sso_user_name applies only to auth_mode SSO" % label)
    if sso and len(profile.get("sso_user_name") or pname) > MAX_SSO_USER:
        problems.append("%s.sso_user_name: longer than %d characters" % (label, MAX_SSO_USER))
    if profile.get("execution_role") and not re.fullmatch(ROLE_PATTERN, profile["execution_role"]):
        problems.append("%s.execution_role: %r is not an IAM role ARN" % (label, profile["execution_role"]))
    if profile.get("fsx_path"):
        if not fsx:
            problems.append("%s.fsx_path needs fsx_lustre (the file system it is on)" % label)
        elif not re.fullmatch(FSX_PATH_PATTERN, profile["fsx_path"]):
            problems.append("%s.fsx_path: %r must start with / and contain no white space" % (label, profile["fsx_path"]))
    return problems


def _user_profiles_problems(profiles, sso, fsx):
    """What is wrong with the user_profiles option, profile by profile, as sentences."""
    problems = []
    seen = set()
    for index, profile in enumerate(profiles):
        label = "user_profiles[%d]" % index
        pname = profile.get("name") or ""
        problems.extend(_profile_name_problems(label, pname, seen))
        seen.add(pname)
        problems.extend(_profile_settings_problems(label, profile, pname, sso, fsx))
    return problems


def input_problems(params, auth_mode=None):
    """Everything wrong with the options on their own, as sentences; empty when they can be sent.

    ``auth_mode`` is ``effective_auth_mode`` once the existing domain is known.
    """
    problems = _naming_problems(params)
    if params.get("state", "present") != "present":
        return problems
    sso = (auth_mode or effective_auth_mode(params)) == "SSO"
    if params.get("identity_center_group") and not sso:
        problems.append("identity_center_group applies only to auth_mode SSO")
    if params.get("execution_role") and not re.fullmatch(ROLE_PATTERN, params["execution_role"]):
        problems.append("execution_role: %r is not an IAM role ARN" % params["execution_role"])
    if len(params.get("security_group_ids") or []) > MAX_SECURITY_GROUPS:
        problems.append("security_group_ids: at most %d security groups" % MAX_SECURITY_GROUPS)
    if params.get("subnet_ids") is not None and not params.get("vpc_id"):
        problems.append("subnet_ids need vpc_id")
    fsx = params.get("fsx_lustre") or {}
    if fsx:
        problems.extend(_fsx_problems(fsx))
    problems.extend(_user_profiles_problems(params.get("user_profiles") or [], sso, fsx))
    return problems


def change_problems(current, desired, running_apps):
    """What AWS cannot change in place on an existing domain, as sentences."""
    problems = []
    if current["auth_mode"] != desired["auth_mode"]:
        problems.append(
            "auth_mode cannot change from %s to %s on an existing domain: delete the domain (state: absent) and create it again"
            % (current["auth_mode"], desired["auth_mode"])
        )
    if current.get("vpc_id") and current.get("vpc_id") != desired.get("vpc_id"):
        problems.append("vpc_id cannot change from %s to %s on an existing domain" % (current["vpc_id"], desired.get("vpc_id")))
    if desired.get("subnet_ids") and not desired.get("vpc_id"):
        problems.append("subnet_ids need a VPC; the domain has none")
    if running_apps:
        apps = ", ".join(sorted(running_apps))
        if current["app_network_access_type"] != desired["app_network_access_type"]:
            problems.append("app_network_access_type can only change when no apps run (running: %s)" % apps)
        if set(current.get("subnet_ids") or []) - set(desired.get("subnet_ids") or []):
            problems.append("subnets can only be removed when no apps run (running: %s)" % apps)
    for name, profile in desired["user_profiles"].items():
        before = current["user_profiles"].get(name)
        # Compared only when the profile's sso_user_name is given (profile_keys): then both views hold it.
        if before is not None and "single_sign_on_user_value" in profile and before.get("single_sign_on_user_value") != profile["single_sign_on_user_value"]:
            problems.append(
                "user profile %s belongs to Identity Center user %s and cannot move to %s: remove it first"
                % (name, before.get("single_sign_on_user_value"), profile.get("single_sign_on_user_value"))
            )
    return problems


def new_domain_problems(desired):
    problems = []
    if not desired["default_user_settings"].get("execution_role"):
        problems.append("execution_role is required to create a domain")
    if desired["app_network_access_type"] == "VpcOnly":
        if not desired.get("vpc_id") or not desired.get("subnet_ids"):
            problems.append("vpc_id and subnet_ids are required for app_network_access_type VpcOnly")
        if not desired["default_user_settings"].get("security_group_ids"):
            problems.append("security_group_ids are required for app_network_access_type VpcOnly")
    return problems


# ---------------------------------------------------------------- API helpers


# What a run keeps of a ListUserProfiles summary: what read() uses of a profile it does not describe.
PROFILE_SUMMARY_FIELDS = ("DomainId", "UserProfileName", "Status")


def owner_problem(team, name, domain_id, tags, tag_keys=None, adopt=False):
    """Why the team's domain ``name`` (with ``tags``) must not be changed for ``team``; None when it may.

    The rule is naming.ownership_problem's; this layer's check and shared_info's check of every team before the
    run's first write both ask here.
    """
    return naming.ownership_problem("SageMaker domain %s (%s)" % (name, domain_id), team, tags, tag_keys, adopt, "domain")


def profiles_by_domain(client, domain_ids):
    """{domain id: its user profile summaries} for ``domain_ids``, from one ListUserProfiles of every domain."""
    found = dict((domain_id, []) for domain_id in domain_ids)
    for summary in sagemaker.list_user_profiles(client):
        if summary["DomainId"] in found:
            found[summary["DomainId"]].append(dict((k, summary[k]) for k in PROFILE_SUMMARY_FIELDS if k in summary))
    return found


def profile_arn(domain, name, profile=None):
    """The ARN of the user profile ``name`` of ``domain``: DescribeUserProfile's ``UserProfileArn`` when at hand.

    Otherwise built from the domain's ARN in the form the Service Authorization Reference gives for the
    ``user-profile`` resource type (Amazon SageMaker AI, "Resource types"):
    ``arn:${Partition}:sagemaker:${Region}:${Account}:user-profile/${DomainId}/${UserProfileName}``, so a run reads a
    profile's tags (ListTags) without describing it.
    """
    if profile and profile.get("UserProfileArn"):
        return profile["UserProfileArn"]
    return "%s:user-profile/%s/%s" % (domain["DomainArn"].split(":domain/", 1)[0], domain["DomainId"], name)


def app_request(app):
    """The DeleteApp request for a ListApps summary."""
    return dict((k, app[k]) for k in ("DomainId", "UserProfileName", "SpaceName", "AppType", "AppName") if app.get(k))


# ---------------------------------------------------------------- the resource


def _app_key(app):
    return (app.get("UserProfileName"), app.get("SpaceName"), app["AppType"], app["AppName"])


class DomainManager:
    """One team's domain. ``clients`` is a callable giving a boto3 client by service name."""

    def __init__(self, clients, params, check_mode=False, warn=None):
        self.clients = clients
        self.client = clients("sagemaker")
        self.params = params
        self.check_mode = check_mode
        self.warn = warn or (lambda message: None)
        self.name = domain_name(params)
        self.timeout = params.get("wait_timeout") or 1800
        self.store_id = params.get("identity_store_id")

    # reads

    def describe(self, domain_id):
        return sagemaker.describe_domain(self.client, DomainId=domain_id)

    def describe_profile(self, domain_id, name):
        return sagemaker.describe_user_profile(self.client, DomainId=domain_id, UserProfileName=name)

    def describe_space(self, domain_id, name):
        return sagemaker.describe_space(self.client, DomainId=domain_id, SpaceName=name)

    def find(self):
        """``(domain id, DescribeDomain or None)`` of the domain, or ``(None, None)``.

        By ``domain_id`` when given (one DescribeDomain, whose answer ``read`` reuses), else by
        name (ListDomains). A deletion in progress is waited out, except that a domain given by
        id that is missing or being deleted fails with state present: the module never creates
        a second domain for a team whose domain was resolved for it.
        """
        if self.params.get("domain_id"):
            return self._find_by_id(self.params["domain_id"])
        found = [d for d in sagemaker.list_domains(self.client) if d["DomainName"] == self.name]
        if len(found) > 1:
            raise InputError(message="%d domains are named %s (%s); name one that is unique" % (len(found), self.name, ", ".join(d["DomainId"] for d in found)))
        if found and found[0].get("Status") == "Deleting":
            if self.check_mode:
                return None, None
            self._wait_domain(found[0]["DomainId"], (GONE,))
            return None, None
        return (found[0]["DomainId"], None) if found else (None, None)

    def _find_by_id(self, domain_id):
        present = self.params.get("state", "present") == "present"
        domain = self.describe(domain_id)
        if domain is None:
            if present:
                raise InputError(
                    message="domain_id %s (domain %s) does not exist: it was resolved before it was deleted; run again without domain_id to find it by name"
                    % (domain_id, self.name)
                )
            return None, None
        if domain["DomainName"] != self.name:
            raise InputError(message="domain_id %s is domain %s, not %s" % (domain_id, domain["DomainName"], self.name))
        if domain.get("Status") == "Deleting":
            if present:
                raise InputError(message="domain %s (%s) is being deleted; run again once it is gone" % (self.name, domain_id))
            if not self.check_mode:
                self._wait_domain(domain_id, (GONE,))
            return None, None
        return domain_id, domain

    def keys_for(self, domain):
        """``profile_keys`` for ``domain`` (what is compared on each profile); none when deleting."""
        if not domain or self.params.get("state", "present") != "present":
            return {}
        return profile_keys(self.params, effective_auth_mode(self.params, {"auth_mode": domain["AuthMode"]}))

    def _wait_domain(self, domain_id, ready):
        failed = FAILED if GONE not in ready else ()
        return wait_for_status(lambda: self.describe(domain_id), "domain %s" % self.name, ready=ready, failed=failed, timeout=self.timeout)

    def read(self, domain_id, described=None, listed_profiles=None, listed_tags=None):
        """DescribeDomain once it leaves a transitional status, with tags, profiles and assignments.

        ``described`` is a DescribeDomain answer already at hand, ``listed_profiles`` the domain's
        ListUserProfiles summaries, ``listed_tags`` its tags as listed earlier in the run. Profiles are described only when the run compares something on
        them (``keys_for``).
        """
        if described is not None and described.get("Status") not in TRANSITIONAL:
            domain = described
        else:
            domain = wait_for_status(
                lambda: self.describe(domain_id), "domain %s" % self.name, ready=("InService",) + FAILED + (GONE,), timeout=self.timeout
            )
        if domain is None:
            return None, {}, {}, []
        tags = dict(listed_tags) if listed_tags is not None else sagemaker.list_tags(self.client, domain["DomainArn"])
        keys = self.keys_for(domain)
        profiles = {}
        for summary in sagemaker.list_user_profiles(self.client, DomainIdEquals=domain_id) if listed_profiles is None else listed_profiles:
            if summary.get("Status") == "Deleting":
                continue
            name = summary["UserProfileName"]
            profile = self.describe_profile(domain_id, name) if keys.get(name) else summary
            if profile is not None:
                profiles[name] = profile
        group_ids = []
        if domain.get("SingleSignOnApplicationArn"):
            assignments = identity_center.list_application_assignments(self.clients("sso-admin"), ApplicationArn=domain["SingleSignOnApplicationArn"])
            group_ids = [a["PrincipalId"] for a in assignments if a["PrincipalType"] == "GROUP"]
            self._assigned_users = set(a["PrincipalId"] for a in assignments if a["PrincipalType"] == "USER")
        return domain, tags, profiles, group_ids

    def running_apps(self, domain_id, user=None, space=None):
        """Apps not yet Deleted/Failed, optionally of one user profile or space."""
        return [
            a
            for a in sagemaker.list_apps(self.client, DomainIdEquals=domain_id)
            if a.get("Status") not in APP_GONE and (user is None or a.get("UserProfileName") == user) and (space is None or a.get("SpaceName") == space)
        ]

    def identity_store(self):
        if self.store_id is None:
            wanted = self.params.get("identity_center_instance_arn")
            instances = identity_center.instances(self.clients("sso-admin"), wanted)
            if not instances:
                raise InputError(message="no IAM Identity Center instance %sfound in this Region" % ("%s " % wanted if wanted else ""))
            self.store_id = instances[0]["IdentityStoreId"]
        return self.store_id

    def resolve_group(self, auth_mode):
        group = self.params.get("identity_center_group")
        if not group or auth_mode != "SSO":
            return None
        group_id = (self.params.get("identity_center_group_ids") or {}).get(group)
        group_id = group_id or identity_center.group_id(self.clients("identitystore"), self.identity_store(), group)
        if group_id is None:
            raise InputError(message="Identity Center group %r does not exist in identity store %s" % (group, self.identity_store()))
        return group_id

    def missing_sso_users(self, names):
        identitystore = self.clients("identitystore")
        self._user_ids = dict((n, identity_center.user_id(identitystore, self.identity_store(), n)) for n in names)
        return [n for n in names if self._user_ids[n] is None]

    def unassigned_sso_users(self, names, group_ids):
        """The users of ``names`` (found by ``missing_sso_users``) that the application will not know once ``group_ids`` are assigned."""
        identitystore = self.clients("identitystore")
        direct = getattr(self, "_assigned_users", set())

        def known(name):
            user = self._user_ids[name]
            return user in direct or bool(group_ids) and identity_center.member_of_any(identitystore, self.identity_store(), user, group_ids)

        return [n for n in names if not known(n)]

    def desired_tags(self):
        return naming.team_tags(self.params["team"], self.params.get("cost_center"), self.params.get("tag_keys"), extra=self.params.get("tags") or {})

    def tag_changes(self, current_tags):
        purge = bool(self.params.get("purge_tags")) and self.params.get("tags") is not None
        return compare_aws_tags(current_tags or {}, self.desired_tags(), purge_tags=purge)

    # results

    def result(self, domain, tags, profiles, group_ids):
        if not domain:
            return {}
        result = snake(dict((k, v) for k, v in domain.items() if k != "ResponseMetadata"))
        result["tags"] = dict(tags)
        keys = self.keys_for(domain)
        result["user_profiles"] = [
            profile_result(domain["DomainId"], name, profile.get("Status"), _profile_view(profile, keys.get(name, ())))
            for name, profile in sorted(profiles.items())
        ]
        result["identity_center_group_ids"] = sorted(group_ids)
        return result

    @staticmethod
    def predicted(view, domain=None, current=None, statuses=None):
        """A result for check mode: what ``result`` will show once ``view`` is applied to ``domain``.

        ``current`` is the current view and ``statuses`` the profiles' ListUserProfiles statuses:
        a profile the run leaves alone keeps its status; one it creates or updates ends InService.
        """
        result = snake(dict((k, v) for k, v in (domain or {}).items() if k != "ResponseMetadata"))
        settings = dict(result.get("default_user_settings") or {})
        settings.update(snake(user_settings_request(view["default_user_settings"])))
        result.update(
            domain_name=view["domain_name"],
            auth_mode=view["auth_mode"],
            app_network_access_type=view["app_network_access_type"],
            tag_propagation=TAG_PROPAGATION[view["tag_propagation"]],
            default_user_settings=settings,
            tags=dict(view["tags"]),
            identity_center_group_ids=list(view.get("identity_center_group_ids") or []),
        )
        for key in ("vpc_id", "subnet_ids"):
            if view.get(key):
                result[key] = copy.deepcopy(view[key])
        before = (current or {}).get("user_profiles") or {}
        statuses = statuses or {}
        result["user_profiles"] = [
            profile_result(result.get("domain_id"), name, statuses.get(name) if before.get(name) == profile else "InService", profile)
            for name, profile in sorted(view["user_profiles"].items())
        ]
        return result

    # present

    def _read_present(self, fresh):
        """The domain with its tags, profiles and groups; from what shared_info listed unless ``fresh``."""
        domain_id, described = self.find()
        # shared_info listed the profiles and the tags of the domain it resolved, not of one found since.
        resolved = not fresh and domain_id and domain_id == self.params.get("domain_id")
        listed = known_value(self.params, "user_profiles") if resolved else None
        known_tags = known_value(self.params, "tags") if resolved else None
        domain, tags, profiles, group_ids = self.read(domain_id, described, listed, known_tags) if domain_id else (None, {}, {}, [])
        if domain is None and self.params.get("domain_id"):
            raise InputError(message="domain %s (%s) was deleted while this run read it; run again" % (self.name, self.params["domain_id"]))
        return dict(domain=domain, tags=tags, profiles=profiles, group_ids=group_ids, copied=listed is not None or known_tags is not None)

    def _plan_present(self, read):
        """What ``ensure_present`` plans from ``read`` (``_read_present``'s), refused when it cannot be done; ``writes``
        whether anything is to be written."""
        domain, tags, profiles, group_ids = read["domain"], read["tags"], read["profiles"], read["group_ids"]
        if domain is not None:
            self.check_owner(domain, tags, self.params.get("adopt"))
        current = current_view(domain, tags, profiles, group_ids, self.keys_for(domain))
        auth_mode = effective_auth_mode(self.params, current)
        problems = input_problems(self.params, auth_mode) if auth_mode != effective_auth_mode(self.params) else []
        if problems:
            raise InputError(message="domain %s: %s" % (self.name, "; ".join(problems)))
        group_id = self.resolve_group(auth_mode)
        if group_id and domain is not None and not domain.get("SingleSignOnApplicationArn"):
            # No application to assign the group to: nothing about it can change, and the run says why.
            self._warn_no_application(domain)
            group_id = None
        tags_after = dict(tags)
        to_set, to_unset = self.tag_changes(tags)
        tags_after.update(to_set)
        for key in to_unset:
            tags_after.pop(key, None)
        desired = desired_view(self.params, current, tags_after, group_id)
        if domain is None:
            problems = new_domain_problems(desired)
        else:
            running = [a["AppName"] for a in self.running_apps(domain["DomainId"])] if self._network_change(current, desired) else []
            problems = change_problems(current, desired, running)
        if desired["auth_mode"] == "SSO":
            creating = self.new_profile_settings(desired, current)
            new_users = [creating[name]["single_sign_on_user_value"] for name in sorted(creating)]
            missing = self.missing_sso_users(new_users) if new_users else []
            if missing:
                problems.append("Identity Center has no user named %s (SSO user profiles need one)" % ", ".join(missing))
            elif new_users and (domain is None or domain.get("SingleSignOnApplicationArn")):
                unassigned = self.unassigned_sso_users(new_users, desired.get("identity_center_group_ids") or [])
                if unassigned:
                    problems.append(
                        "%s %s not assigned to the domain's Identity Center application, neither directly nor through a group assigned to it%s "
                        "(AWS creates a user profile only for a user assigned to the application)"
                        % (", ".join(unassigned), "is" if len(unassigned) == 1 else "are",
                           " such as %s" % self.params["identity_center_group"] if self.params.get("identity_center_group") else "")
                    )
        if problems:
            raise InputError(message="domain %s: %s" % (self.name, "; ".join(problems)))
        existing = current.get("user_profiles") or {}
        kept = set(existing) & set(desired["user_profiles"])
        # The profiles this run would change or delete (with adopt_user_profiles, every existing one it keeps, to mark it).
        touched = set(existing) - kept
        touched.update(kept if self.params.get("adopt_user_profiles") else (
            name for name in kept if update_profile_request(domain["DomainId"], name, existing[name], desired["user_profiles"][name])))
        return dict(
            read, current=current, desired=desired, kept=kept, touched=touched, to_set=to_set, to_unset=to_unset,
            writes=not (current == desired and not touched),
        )

    def ensure_present(self):
        problems = input_problems(self.params)
        if problems:
            raise InputError(message="domain %s: %s" % (self.name, "; ".join(problems)))
        # Profiles and tags listed earlier in the run only tell that nothing changes: a write is planned from a live read.
        unused_read, planned = engine.plan_from_copy(
            self._read_present, lambda read: read["copied"], self._plan_present, self.check_mode, writes=lambda planned: planned["writes"]
        )
        domain, tags, profiles, group_ids = planned["domain"], planned["tags"], planned["profiles"], planned["group_ids"]
        current = before = planned["current"]
        desired, kept, touched, to_set, to_unset = planned["desired"], planned["kept"], planned["touched"], planned["to_set"], planned["to_unset"]
        if not planned["writes"]:
            return False, current, desired, self.result(domain, tags, profiles, group_ids)
        adopted = sorted(kept.intersection(self.check_profile_owners(domain, profiles, touched)))
        if adopted:
            # Taken over: the run marks them, and says so in its diff.
            current = before = dict(current, unmarked_user_profiles=adopted)
        if current == desired:
            return False, current, desired, self.result(domain, tags, profiles, group_ids)
        if self.check_mode:
            statuses = dict((name, profile.get("Status")) for name, profile in profiles.items())
            return True, current, desired, self.predicted(desired, domain, current, statuses)
        if domain is None:
            created = sagemaker.create_domain(self.client, **create_domain_request(desired))
            domain = self._wait_domain(created["DomainId"], ("InService",))
            self._yield_to_an_earlier_twin(created["DomainId"])
            current = current_view(domain, desired["tags"], {}, [])
        else:
            for name in adopted:
                sagemaker.add_tags(self.client, profile_arn(domain, name, profiles.get(name)), self.profile_tags())
            self._update_domain(domain, current, desired, to_set, to_unset)
        # The group is assigned to the domain's application before its members' profiles are made:
        # "a user in IAM Identity Center, or a group containing that user, must be assigned to the
        # Amazon SageMaker Studio application ... to create a user profile" (AWS CloudFormation
        # User Guide, AWS::SageMaker::UserProfile). A group taken away goes after the profiles.
        groups = self._group_changes(domain, current, desired)
        self._assign_groups(groups, "create")
        self._sync_profiles(domain["DomainId"], current, desired)
        self._assign_groups(groups, "delete")
        domain, tags, profiles, group_ids = self.read(domain["DomainId"])
        after = current_view(domain, tags, profiles, group_ids, self.keys_for(domain))
        return True, before, after, self.result(domain, tags, profiles, group_ids)

    def _yield_to_an_earlier_twin(self, domain_id):
        """Delete the domain this run just created when another of the same name was created first.

        Domain names are not unique: two runs that both found no domain (two onboardings of one
        team at once) each create one. Every run that created a domain keeps the first one created
        (CreationTime, then DomainId) and deletes only its own, so exactly one is left; the ConflictError
        raised then has the run converge again, on the first (``layer.converge_past_a_lost_race``).
        """
        twins = [d for d in sagemaker.list_domains(self.client) if d["DomainName"] == self.name and d.get("Status") != "Deleting"]
        first = min(twins, key=lambda d: (d["CreationTime"], d["DomainId"]))
        if first["DomainId"] == domain_id:
            return
        sagemaker.delete_domain(self.client, DomainId=domain_id, RetentionPolicy={"HomeEfsFileSystem": "Delete"})
        self._wait_domain(domain_id, (GONE,))
        raise ConflictError(
            message="domain %s: another run created %s at the same time; this run deleted the one it created (%s)" % (self.name, first["DomainId"], domain_id)
        )

    def new_profile_settings(self, desired, current):
        """{name: profile_settings} of the profiles ``desired`` adds to ``current`` (all in O(user_profiles))."""
        wanted = dict((p["name"], p) for p in self.params.get("user_profiles") or [])
        existing = current.get("user_profiles") or {}
        return dict(
            (name, profile_settings(self.params, wanted[name], desired["auth_mode"])) for name in desired["user_profiles"] if name not in existing
        )

    @staticmethod
    def _network_change(current, desired):
        return current["app_network_access_type"] != desired["app_network_access_type"] or bool(
            set(current.get("subnet_ids") or []) - set(desired.get("subnet_ids") or [])
        )

    def _update_domain(self, domain, current, desired, to_set, to_unset):
        request = update_domain_request(domain["DomainId"], current, desired)
        if request:
            sagemaker.update_domain(self.client, **request)
            self._wait_domain(domain["DomainId"], ("InService",))
        if to_set:
            sagemaker.add_tags(self.client, domain["DomainArn"], to_set)
        if to_unset:
            sagemaker.delete_tags(self.client, domain["DomainArn"], to_unset)

    def profile_tags(self):
        """The tags of the team's user profiles: its team tags, the ownership mark among them."""
        return naming.team_tags(self.params["team"], self.params.get("cost_center"), self.params.get("tag_keys"), extra=self.params.get("tags") or {})

    def check_profile_owners(self, domain, profiles, names):
        """Refuse, all at once and before any write, the profiles of ``names`` the collection did not make for the team.

        A profile made in the team's domain by hand or by another tool carries no mark: it is neither changed nor
        deleted unless the team adopts ``user_profiles`` (``adopt_user_profiles``); one marked for another team never
        is. One ListTags per profile, made only for the profiles a run would change or delete (or adopts). Returns the
        unmarked profiles that are adopted.
        """
        team, tag_keys = self.params["team"], self.params.get("tag_keys")
        adopt = bool(self.params.get("adopt_user_profiles"))
        problems, unmarked = [], []
        for name in sorted(names):
            tags = sagemaker.list_tags(self.client, profile_arn(domain, name, profiles.get(name)))
            what = "user profile %s of SageMaker domain %s (%s)" % (name, self.name, domain["DomainId"])
            if naming.ownership_problem(what, team, tags, tag_keys) is None:
                continue
            problem = naming.ownership_problem(what, team, tags, tag_keys, adopt, "user_profiles")
            if problem:
                problems.append(problem)
            else:
                unmarked.append(name)
        if problems:
            raise InputError(message="domain %s: %s" % (self.name, "; ".join(problems)))
        return unmarked

    def _sync_profiles(self, domain_id, current, desired):
        waiting = []
        profile_tags = self.profile_tags()
        creating = self.new_profile_settings(desired, current)
        for name in sorted(set(current.get("user_profiles", {})) - set(desired["user_profiles"])):
            self.remove_profile(domain_id, name)
        for name, view in sorted(desired["user_profiles"].items()):
            before = current.get("user_profiles", {}).get(name)
            if before is None:
                sagemaker.create_user_profile(self.client, **create_profile_request(domain_id, name, creating[name], profile_tags))
                waiting.append(name)
                continue
            request = update_profile_request(domain_id, name, before, view)
            if request:
                sagemaker.update_user_profile(self.client, **request)
                waiting.append(name)
        for name in waiting:
            wait_for_status(
                lambda n=name: self.describe_profile(domain_id, n),
                "user profile %s" % name,
                ready=("InService",),
                failed=FAILED,
                timeout=self.timeout,
            )

    def remove_profile(self, domain_id, name):
        """Delete a profile after its apps and the spaces it owns (with their apps) are gone.

        A space or app made for the profile between the list and DeleteUserProfile (a member acting as the team's
        execution role, which Studio's portal acts as) makes SageMaker refuse the delete (ResourceInUse): the list and
        the deletes are repeated, PROFILE_REMOVAL_ROUNDS times in all, then the run fails naming the team and the profile.
        The execution role's team-studio policy allows no new space or app for a profile that is no member's
        (execution_role.studio_policy, its layer runs before this one), so a second round finds nothing new.
        """
        for round_ in range(1, PROFILE_REMOVAL_ROUNDS + 1):
            spaces = sagemaker.list_spaces(self.client, DomainIdEquals=domain_id)
            owned = [s["SpaceName"] for s in spaces if (s.get("OwnershipSettingsSummary") or {}).get("OwnerUserProfileName") == name]
            self._delete_apps([a for a in self.running_apps(domain_id) if a.get("UserProfileName") == name or a.get("SpaceName") in owned], domain_id)
            for space in owned:
                self._delete_space(domain_id, space)
            self._settle_profile(domain_id, name)
            try:
                deleted = sagemaker.delete_user_profile(self.client, DomainId=domain_id, UserProfileName=name)
            except HyperPodError as error:
                if error_code(error) not in PROFILE_IN_USE_CODES:
                    raise
                if round_ == PROFILE_REMOVAL_ROUNDS:
                    raise HyperPodError(
                        message="team %s: user profile %s of domain %s still has apps or owns spaces after %d rounds of deleting them: "
                        "someone keeps making them (a member acting as the team's Studio execution role?); check the role's "
                        "team-studio policy and the domain's spaces, then run again" % (self.params["team"], name, domain_id, round_),
                        exception=error.exception,
                    )
                continue
            if deleted:
                wait_for_status(lambda: self.describe_profile(domain_id, name), "user profile %s" % name, ready=(GONE,), timeout=self.timeout)
            return

    def _settle_profile(self, domain_id, name):
        wait_for_status(
            lambda: self.describe_profile(domain_id, name), "user profile %s" % name, ready=("InService", GONE) + FAILED, timeout=self.timeout
        )

    def _delete_apps(self, apps, domain_id):
        if not apps:
            return
        for app in apps:
            if app.get("Status") == "Pending":
                self._wait_apps(domain_id, lambda a, app=app: a["AppName"] == app["AppName"] and a.get("Status") == "Pending")
            if app.get("Status") != "Deleting":
                sagemaker.delete_app(self.client, **app_request(app))
        keys = set(_app_key(a) for a in apps)
        self._wait_apps(domain_id, lambda a: _app_key(a) in keys and a.get("Status") not in APP_GONE)

    def _wait_apps(self, domain_id, busy):
        """Wait until no app of the domain matches ``busy``."""
        wait_for_status(
            lambda: {"Status": "busy" if any(busy(a) for a in sagemaker.list_apps(self.client, DomainIdEquals=domain_id)) else "done"},
            "apps of domain %s" % self.name,
            ready=("done",),
            timeout=self.timeout,
        )

    def _delete_space(self, domain_id, name):
        wait_for_status(lambda: self.describe_space(domain_id, name), "space %s" % name, ready=("InService", GONE) + FAILED, timeout=self.timeout)
        if sagemaker.delete_space(self.client, DomainId=domain_id, SpaceName=name):
            wait_for_status(lambda: self.describe_space(domain_id, name), "space %s" % name, ready=(GONE,), timeout=self.timeout)

    def _group_changes(self, domain, current, desired):
        """{"create": group ids to assign, "delete": ids to unassign, "application": the ARN}, or None.

        A domain in SSO mode created before 1 October 2023 has no ``SingleSignOnApplicationArn``
        (botocore's DescribeDomain documentation): no group can be assigned through the API, and
        the run says so rather than leave the team without Studio in silence.
        """
        if not self.params.get("identity_center_group") or desired["auth_mode"] != "SSO":
            return None
        application_arn = domain.get("SingleSignOnApplicationArn")
        current_ids = set(current.get("identity_center_group_ids") or [])
        desired_ids = set(desired["identity_center_group_ids"])
        if not application_arn:
            self._warn_no_application(domain)
            return None
        return {"application": application_arn, "create": sorted(desired_ids - current_ids), "delete": sorted(current_ids - desired_ids)}

    def _warn_no_application(self, domain):
        if getattr(self, "_warned_no_application", False):
            return
        self._warned_no_application = True
        self.warn(
            "domain %s (%s) is in SSO mode but has no SingleSignOnApplicationArn (SageMaker returns it only for domains created after "
            "1 October 2023), so Identity Center group %s is not assigned to it and its members cannot open the domain from the AWS access "
            "portal: assign the group to the domain's application in the IAM Identity Center console (Applications, AWS managed), or "
            "delete the domain and run again to create one that has the ARN" % (self.name, domain["DomainId"], self.params["identity_center_group"])
        )

    def _assign_groups(self, changes, action):
        if not changes or not changes[action]:
            return
        sso_admin = self.clients("sso-admin")
        call = identity_center.create_application_assignment if action == "create" else identity_center.delete_application_assignment
        for group_id in changes[action]:
            call(sso_admin, ApplicationArn=changes["application"], PrincipalId=group_id, PrincipalType="GROUP")

    def check_owner(self, domain, tags, adopt=False):
        """Refuse a domain this collection did not make for the team (``owner_problem``)."""
        problem = owner_problem(self.params["team"], self.name, domain["DomainId"], tags, self.params.get("tag_keys"), adopt)
        if problem:
            raise InputError(message=problem)

    # absent

    def revoke_access(self):
        """Delete the assignments of the domain's Identity Center application: its members no longer reach Studio.

        Offboarding does this before anything else (``revoke_only``); the domain, its profiles, spaces and
        data stay for the later steps. An IAM-mode domain has no application: its access is the permission set's.
        """
        domain_id, described = self.find()
        domain, tags = self.read(domain_id, described)[:2] if domain_id else (None, {})
        if domain is not None:
            self.check_owner(domain, tags)
        application_arn = (domain or {}).get("SingleSignOnApplicationArn")
        if not application_arn:
            return False, {}, {}
        assignments = identity_center.list_application_assignments(self.clients("sso-admin"), ApplicationArn=application_arn)
        before = {"identity_center_assignments": sorted("%s:%s" % (a["PrincipalType"], a["PrincipalId"]) for a in assignments)}
        if not assignments:
            return False, before, before
        if not self.check_mode:
            for assignment in assignments:
                identity_center.delete_application_assignment(
                    self.clients("sso-admin"), ApplicationArn=application_arn, PrincipalId=assignment["PrincipalId"], PrincipalType=assignment["PrincipalType"]
                )
        return True, before, {"identity_center_assignments": []}

    def ensure_absent(self):
        problems = input_problems(self.params)
        if problems:
            raise InputError(message="domain %s: %s" % (self.name, "; ".join(problems)))
        domain_id, described = self.find()
        if domain_id is None:
            return False, {}, {}, {}, {}
        domain, tags, profiles, group_ids = self.read(domain_id, described)
        if domain is None:
            return False, {}, {}, {}, {}
        self.check_owner(domain, tags)
        self.check_profile_owners(domain, profiles, profiles)
        before = current_view(domain, tags, profiles, group_ids, self.keys_for(domain))
        retain = self.params.get("retain_home_efs", True)
        retained = {"home_efs_file_system_id": domain.get("HomeEfsFileSystemId")} if retain and domain.get("HomeEfsFileSystemId") else {}
        if self.check_mode:
            return True, before, {}, {}, retained
        domain_id = domain["DomainId"]
        self._delete_apps(self.running_apps(domain_id), domain_id)
        for space in sagemaker.list_spaces(self.client, DomainIdEquals=domain_id):
            if space.get("Status") != "Deleting":
                self._delete_space(domain_id, space["SpaceName"])
        for name in sorted(profiles):
            self.remove_profile(domain_id, name)
        if sagemaker.delete_domain(self.client, DomainId=domain_id, RetentionPolicy={"HomeEfsFileSystem": "Retain" if retain else "Delete"}):
            self._wait_domain(domain_id, (GONE,))
        return True, before, {}, {}, retained


# The keyword arguments of sagemaker_domain's AnsibleAWSModule (and of team_resources' domain).
MODULE_OPTIONS = options(
    dict(
        team=dict(type="str", required=True),
        name=dict(type="str"),
        auth_mode=dict(type="str", choices=["SSO", "IAM"]),
        vpc_id=dict(type="str"),
        subnet_ids=dict(type="list", elements="str"),
        security_group_ids=dict(type="list", elements="str"),
        app_network_access_type=dict(type="str", choices=["VpcOnly", "PublicInternetOnly"]),
        execution_role=dict(type="str"),
        fsx_lustre=dict(
            type="dict",
            options=dict(file_system_id=dict(type="str", required=True), path=dict(type="str", default="/")),
        ),
        studio_web_portal=dict(type="str", choices=["enabled", "disabled"]),
        default_landing_uri=dict(type="str"),
        tag_propagation=dict(type="bool", default=True),
        user_profiles=dict(
            type="list",
            elements="dict",
            options=dict(
                name=dict(type="str", required=True),
                sso_user_name=dict(type="str"),
                execution_role=dict(type="str"),
                fsx_path=dict(type="str"),
            ),
        ),
        purge_user_profiles=dict(type="bool", default=False),
        identity_center_group=dict(type="str"),
        identity_center_instance_arn=dict(type="str"),
        identity_store_id=dict(type="str"),
        identity_center_group_ids=dict(type="dict"),
        domain_id=dict(type="str"),
        retain_home_efs=dict(type="bool", default=True),
        revoke_only=dict(type="bool", default=False),
        adopt=dict(type="bool", default=False),
        adopt_user_profiles=dict(type="bool", default=False),
        wait_timeout=dict(type="int", default=1800),
    ),
    STATE, NAME_PREFIX, TEAM_TAGS, TAGS, IDENTITY_CENTER,
)
# What shared_info read of the domain earlier in the run (team_resources' ``known``): its user profiles and its tags.
KNOWN = dict(user_profiles=dict(type="list", elements="dict"), tags=dict(type="dict", no_log=False))
# The team file's workspace section (docs/team-file.md) but enabled (team_execution_role's). A team gets SSO and VpcOnly,
# where the module leaves a domain's as they are; retain_home_efs is for offboarding, which the workspace role runs.
TEAM_FILE_SECTION = team_section(
    "workspace", MODULE_OPTIONS, ("auth_mode", "app_network_access_type", "retain_home_efs"),
    offboarding=("retain_home_efs",), auth_mode="SSO", app_network_access_type="VpcOnly",
)


def check(params):
    """What can be refused before the domain is read (names, ids, patterns); raises ``InputError``."""
    problems = input_problems(params)
    if problems:
        raise InputError(message="domain %s: %s" % (domain_name(params), "; ".join(problems)))


def converge(context, params):
    """The result of sagemaker_domain: the domain after the run (and what was kept of a deleted one)."""
    manager = DomainManager(context.client, params, check_mode=context.check_mode, warn=context.warn)
    if params["state"] == "present":
        changed, before, after, domain = manager.ensure_present()
        return dict(changed=changed, domain=domain, diff={"before": before, "after": after})
    if params.get("revoke_only"):
        changed, before, after = manager.revoke_access()
        return dict(changed=changed, domain={}, retained={}, diff={"before": before, "after": after})
    changed, before, after, domain, retained = manager.ensure_absent()
    return dict(changed=changed, domain=domain, retained=retained, diff={"before": before, "after": after})
