#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: validate_team_file
short_description: Check the whole team file before anything changes
version_added: 0.1.0
description:
  - Checks the cluster definition and every team at once and fails listing every problem,
    each naming the team and the field, before any AWS call is made.
  - Rules include team names that every derived AWS name accepts, duplicate teams, groups and members,
    unknown keys (with a suggestion for typos), instance types that HyperPod does not offer or the
    cluster does not have, guaranteed quotas whose sum exceeds the cluster's capacity per instance type,
    ranges of borrow limits and weights, and at most 10 priority classes.
  - Also checks the cluster file as M(hyperpod.tenancy.hyperpod_cluster) and botocore's C(CreateCluster) model check it,
    the data bucket's name, the name prefix and the tag keys once, tags (no C(aws:) prefix, values of at most 256
    letters, digits, spaces and C(_.:/=+-@)), gids unique across teams, a uid per person, no world-writable mode,
    at most 8 teams with C(storage.s3_link), and every layer's own check on the options its run will get.
  - Runs on the controller (an action plugin). Without O(teams) it reads the team file that the inventory plugin
    M(hyperpod.tenancy.teams) names (the variable C(hyperpod_team_file)) as data, one YAML document with the one key
    C(hyperpod_teams), no anchors, aliases, tags or text Jinja would read as a template, every value marked unsafe, so
    that nothing a team lead writes ever runs. Each problem names the file, line and column of the value. A variable
    C(hyperpod_teams) (the team file loaded from C(group_vars)) is refused.
  - What only the platform decides is checked too, and no team entry can change it, O(adopt) and O(team_limits)
    (docs/isolation.md). Team names reserved for the platform are refused.
  - Returns the teams normalized, with every default filled in, for the roles to consume.
  - Makes no AWS call, so it is not part of the C(hyperpod) action group.
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  teams:
    description:
      - The teams, as in C(hyperpod_teams). See C(docs/team-file.md).
      - Leave it unset to have the team file read as data from its path; a value given here was templated first.
    type: raw
  adopt:
    description:
      - The platform's C(hyperpod_adopt) (cluster file), team name to the layers whose existing, unmarked resource that team
        takes over (C(permission_set), C(access_entry), C(execution_role), C(domain), C(user_profiles), C(quota), C(s3_prefix),
        C(directories), C(budget), C(grafana_folder), C(pod_role)). A team entry's own C(adopt) is refused.
    type: raw
  team_limits:
    description:
      - The platform's C(hyperpod_team_limits) (cluster file), the most a team may ask for itself (C(borrow_limit),
        C(fair_share_weight), C(pod_security)), the instance types of the team's Studio spaces and apps
        (C(studio_instance_types), which each normalized team returns), per team under C(teams.<name>), the lowest uid and
        gid (C(min_id), 1000 by default) and more reserved team names (C(reserved_names)). See docs/isolation.md.
    type: raw
  inherit:
    description:
      - The platform's C(hyperpod_inherit) (cluster file), a team name to the retired team (or list of them) whose kept data
        and gid it inherits. Only its shape is checked here; M(hyperpod.tenancy.shared_info) reads the ledger it answers.
    type: raw
  cluster:
    description: The cluster, as in C(hyperpod_cluster).
    type: dict
    required: true
  tag_keys:
    description: The team tag keys, as in C(hyperpod_team_tag_keys) (C(team), C(cost_center)).
    type: dict
  data_bucket:
    description: The S3 bucket of the teams' data, as in C(hyperpod_data_bucket).
    type: str
  identity_center:
    description:
      - The Identity Center connection, as in C(hyperpod_identity_center) (docs/identity-center.md), checked before any
        AWS call; C(region), C(profile), C(assume_role_arn), C(external_id), C(session_name), C(endpoint_url).
    type: raw
  team:
    description:
      - When set, also fail unless a team of this name is in O(teams).
    type: str
  expect_state:
    description:
      - With O(team), also fail unless that team has this C(state).
    type: str
    choices: [present, absent]
extends_documentation_fragment:
  - hyperpod.tenancy.attributes.info_module
  - hyperpod.tenancy.team.name_prefix
"""

EXAMPLES = r"""
- name: Validate the team file (hyperpod_teams is read untemplated)
  hyperpod.tenancy.validate_team_file:
    cluster: "{{ hyperpod_cluster }}"
    name_prefix: "{{ hyperpod_name_prefix }}"
    tag_keys: "{{ hyperpod_team_tag_keys }}"
    data_bucket: "{{ hyperpod_data_bucket }}"
  register: team_file

- name: Validate that the team to onboard is in the file
  hyperpod.tenancy.validate_team_file:
    cluster: "{{ hyperpod_cluster }}"
    team: vision
    expect_state: present
"""

RETURN = r"""
teams:
  description: The teams with every default filled in; members as C({name, uid}).
  returned: success
  type: list
  elements: dict
  sample:
    - name: vision
      state: present
      identity_center_group: TeamVision
      members: [{name: alice, uid: 10001}]
      quota: {resources: [{instance_type: ml.p5.48xlarge, count: 4}], sharing: lend_and_borrow, borrow_limit: 50}
capacity:
  description: The cluster's instance count per instance type.
  returned: success
  type: dict
  sample: {ml.p5.48xlarge: 8}
problems:
  description: Every problem found, one sentence each, naming the team and the field.
  returned: failure
  type: list
  elements: str
  sample: ["team 'vison': quota.resources[0].count: -1 must be a whole number from 0 to 10000000"]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import ModuleFailure, run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import NAME_PREFIX, options
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_layer_args import team_layer_args
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_model import check_team_file_with_places, problems_message
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_model import wanted_team_problems, without_refused
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_resources import validated_layers

MODULE_OPTIONS = options(
    dict(
        teams=dict(type="raw"),
        cluster=dict(type="dict", required=True),
        tag_keys=dict(type="dict", no_log=False),
        data_bucket=dict(type="str"),
        identity_center=dict(type="raw"),
        adopt=dict(type="raw"),
        team_limits=dict(type="raw"),
        inherit=dict(type="raw"),
        team=dict(type="str"),
        expect_state=dict(type="str", choices=["present", "absent"]),
    ),
    NAME_PREFIX,
    required_by={"expect_state": "team"},
)


# What the layers' own checks need of what the teams share: stand-ins of the right shape (read for real later).
PLACEHOLDER_SHARED = {
    "account_id": "111122223333",
    "region": "us-east-1",
    "identity_center_instance_arn": "arn:aws:sso:::instance/ssoins-0123456789abcdef",
    "identity_store_id": "d-0123456789",
    "cluster_arn": "arn:aws:sagemaker:us-east-1:111122223333:cluster/abcdef012345",
    "eks_cluster_arn": "arn:aws:eks:us-east-1:111122223333:cluster/placeholder",
    "eks_cluster_name": "placeholder",
    "vpc_id": "vpc-0123456789abcdef0",
    "subnet_ids": ["subnet-0123456789abcdef0"],
    "security_group_ids": ["sg-0123456789abcdef0"],
    "fsx_mount_root": "/",
    "fsx_require_mount": False,
    # The account's FSx file system (hyperpod_account.fsx_file_system_id): storage.s3_link, where the platform allows it
    # (hyperpod_team_limits.choices), links the team's export directory to its prefix on it.
    "fsx_file_system_id": "fs-0123456789abcdef0",
}


def _team_name(raw_teams, index):
    team = raw_teams[index] if isinstance(raw_teams, list) and index < len(raw_teams) else None
    name = team.get("name") if isinstance(team, dict) else None
    return str(name) if isinstance(name, str) and name else "#%d" % (index + 1)


def layer_problems(normalized, places, shared):
    """``[(team index, problem)]`` of each present team's layers, checked as its run will check them.

    The layers' options are built by the same filter the run uses. A team the team model refused is checked without
    the values it refused (``without_refused``): each of those was reported once, where the file has it.
    """
    refused = {}
    for file_kind, index, field in places:
        if file_kind == "teams" and index is not None:
            refused.setdefault(index, []).append(field)
    found = []
    for index, team in enumerate(normalized):
        if index in refused:
            team = without_refused(team, refused[index])
        if team is None or team.get("state") != "present" or not isinstance(team.get("name"), str):
            continue
        try:
            options = team_layer_args(team, shared)
            validated_layers(team["name"], dict((k, v) for k, v in options.items() if k != "team"), set())
        except InputError as e:
            found.append((index, e.message))
        except (AttributeError, KeyError, TypeError, ValueError):
            if index not in refused:  # a team with no problem of its own must build its options
                raise
    return found


def validated(p, teams, where=None, read_problems=()):
    """``(msg, problems, teams normalized, capacity)`` of ``teams`` checked with the options ``p``: ``msg`` is None when
    there is no problem. The module's one check, which the action plugin runs on the controller (where the team file
    is read as data, ``read_problems`` what reading it found) and the module with the teams it is given.

    ``where(file kind, team index, field)`` names the file, line and column of a problem's value (None: unknown).
    """
    where = where or (lambda file_kind, index, field: None)
    problems, normalized, capacity, places = check_team_file_with_places(
        teams, p["cluster"], p["name_prefix"], tag_keys=p["tag_keys"], data_bucket=p["data_bucket"],
        identity_center_connection=p["identity_center"], adopt=p["adopt"], team_limits=p["team_limits"], inherit=p["inherit"])
    located = list(read_problems)
    for problem, (file_kind, index, field) in zip(problems, places):
        place = where(file_kind, index, field)
        located.append("%s: %s" % (place, problem) if place else problem)
    blocked = set(index for (file_kind, index, unused) in places if file_kind == "teams" and index is not None)
    if isinstance(teams, list) and len(teams) == len(normalized):
        shared = dict(PLACEHOLDER_SHARED, name_prefix=p["name_prefix"], tag_keys=p["tag_keys"] or {},
                      data_bucket=p["data_bucket"] or "placeholder-bucket")
        for index, message in layer_problems(normalized, places, shared):
            place = where("teams", index, "")
            located.append("%s%s" % ("%s: " % place if place else "", message))
    wanted = p["team"]
    located.extend(wanted_team_problems(normalized, wanted, p["expect_state"]))
    if not located:
        return None, [], normalized, capacity
    msg = problems_message(located)
    others = sorted(set(_team_name(teams, i) for i in blocked) - set([wanted]))
    if wanted and others:
        msg = "Team %r cannot be changed while the team file has problems: the entr%s of team%s %s block%s it (ops fix the file first).\n%s" % (
            wanted, "ies" if len(others) > 1 else "y", "s" if len(others) > 1 else "", ", ".join(others), "" if len(others) > 1 else "s", msg)
    return msg, located, normalized, capacity


# A play runs the action plugin of this name (plugins/action/validate_team_file.py), never this module: the action checks its
# arguments against MODULE_OPTIONS and runs ``validated``, as ``converge`` does for a caller that runs the module itself.
def converge(context, p):
    msg, problems, teams, capacity = validated(p, p["teams"])
    if msg:
        raise ModuleFailure(msg, problems=problems)
    return dict(changed=False, teams=teams, capacity=capacity)


def main():
    run_module(MODULE_OPTIONS, converge, module_class=AnsibleModule)


if __name__ == "__main__":
    main()
