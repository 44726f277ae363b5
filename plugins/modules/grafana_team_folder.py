#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: grafana_team_folder
short_description: Manage a team's Grafana team, folder, folder permissions and dashboards in one call
version_added: 0.1.0
description:
  - Manages, through the Grafana HTTP API of the workspace, what a team has in Grafana, the way the
    C(hyperpod.tenancy.team_observability) role wants it, in one run that reads, compares, predicts (check mode) or
    writes, and reads back.
  - With O(state=present), a Grafana team named O(grafana_team) with O(members) (members are added, never removed),
    a folder of uid O(folder_uid) titled O(folder_title) (an existing folder keeps its title), whose only own permission
    is C(View) for that Grafana team, and the O(dashboards) saved in that folder (overwritten when their content or
    folder differs, fields C(id) and C(version) aside).
  - Before it makes the folder, the team's former folder (O(former_folder_uid)) is deleted when it is the team's
    (the team's folder title, made by the identity of the token); it is refused while that folder holds a dashboard
    whose uid is not in O(former_dashboard_uids).
  - With O(state=absent), the Grafana team is deleted, then every dashboard of the folder and of the former folder is
    exported as JSON into O(export_dir) (Grafana's answer, C(dashboard) and C(meta)), and only then are the folders
    deleted with their dashboards.
  - Whose folder. A folder of uid O(folder_uid) that the identity of the token did not make (its C(createdBy)) is
    refused, before any write, in every state and in check mode, unless O(adopt=true).
  - O(parts) says what O(state) applies to; with O(parts=[]) the module only checks the folder's owner.
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  url:
    description: URL of the workspace's Grafana HTTP API, for example C(https://g-0123456789.grafana-workspace.us-east-1.amazonaws.com).
    type: str
    required: true
  api_key:
    description:
      - A Grafana service account token with admin rights, sent as a bearer token.
      - It is never returned nor shown; give the task C(no_log) too, since a task's arguments reach every callback.
    type: str
    required: true
  validate_certs:
    description: Whether the server's TLS certificate is checked.
    type: bool
    default: true
  timeout:
    description: Seconds to wait for each answer of the Grafana API.
    type: int
    default: 30
  login:
    description:
      - The login the token signs in as, which Grafana records as the creator (C(createdBy)) of the folders the module makes.
      - Unset or empty, Grafana's C(GET /api/user) answer for the token, read only when a folder exists.
    type: str
  team:
    description: Name of the hyperpod.tenancy team, in the module's messages.
    type: str
    required: true
  grafana_team:
    description: Name of the team's Grafana team, the only one that may view the folder.
    type: str
    required: true
  members:
    description: Grafana logins or e-mails added to the Grafana team (a user exists once signed in); others are left.
    type: list
    elements: str
    default: []
  folder_uid:
    description: Uid of the team's folder (C(hyperpod.tenancy.team_grafana_uids) derives it).
    type: str
    required: true
  folder_title:
    description: Title of the team's folder, given to a new folder and required of the former folder.
    type: str
    required: true
  former_folder_uid:
    description: Uid of the folder made for the team before its uid changed, moved (present) or removed (absent) when it is the team's.
    type: str
  former_dashboard_uids:
    description: Uids of the dashboards rendered in the former folder; a former folder holding any other dashboard is not deleted when building.
    type: list
    elements: str
    default: []
  dashboards:
    description:
      - The dashboards of the folder (Grafana dashboard JSON, each with its C(uid) and C(title)), with O(state=present).
    type: list
    elements: dict
    default: []
  commit_message:
    description: The version message of each dashboard saved.
    type: str
    default: Saved by hyperpod.tenancy.grafana_team_folder
  adopt:
    description: Manage a folder of uid O(folder_uid) that another identity made (the team file's C(adopt) lists C(grafana_folder)).
    type: bool
    default: false
  export_dir:
    description:
      - Directory the dashboards are exported into (one C(<uid>.json) each) before their folder is removed, with O(state=absent).
      - Missing directories are made with mode C(0750). Required when there is a dashboard to export.
    type: path
  parts:
    description:
      - What O(state) applies to. V(team) is the Grafana team and its members. V(folder) is the folder, its
        permissions and dashboards, and the former folder.
      - An empty list changes nothing; the module then only checks that the folder, if any, is the collection's.
    type: list
    elements: str
    choices: [team, folder]
    default: [team, folder]
  state:
    description: Whether the team's Grafana objects should exist.
    type: str
    choices: [present, absent]
    default: present
attributes:
  check_mode:
    description: Can run in check mode and return changed status prediction without modifying target.
    support: full
    details: Check mode reads only and returns the changes, the result and the diff the real run would make.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check mode), when in diff mode.
    support: full
notes:
  - Runs in the Ansible worker process (action plugin C(hyperpod.tenancy.grafana_team_folder)) on a local connection.
"""

EXAMPLES = r"""
- name: Ensure team vision's Grafana team, folder and dashboards
  hyperpod.tenancy.grafana_team_folder:
    url: "{{ hyperpod_grafana.grafana_url }}"
    api_key: "{{ hyperpod_grafana_api_key }}"
    team: vision
    grafana_team: TeamVision
    folder_uid: hp-folder_vision
    folder_title: Team vision (hyperpod-ns-vision)
    former_folder_uid: hyperpod-ns-vision
    former_dashboard_uids: [hyperpod-ns-vision-gpu]
    dashboards:
      - "{{ lookup('ansible.builtin.template', 'dashboards/gpu.json.j2') | from_json }}"
  # The token is an argument: keep it out of every callback.
  no_log: true

- name: Check only that team vision's folder is the collection's
  hyperpod.tenancy.grafana_team_folder:
    url: "{{ hyperpod_grafana.grafana_url }}"
    api_key: "{{ hyperpod_grafana_api_key }}"
    team: vision
    grafana_team: TeamVision
    folder_uid: hp-folder_vision
    folder_title: Team vision (hyperpod-ns-vision)
    parts: []
  no_log: true

- name: Export team vision's dashboards, then remove its folder
  hyperpod.tenancy.grafana_team_folder:
    url: "{{ hyperpod_grafana.grafana_url }}"
    api_key: "{{ hyperpod_grafana_api_key }}"
    team: vision
    grafana_team: TeamVision
    folder_uid: hp-folder_vision
    folder_title: Team vision (hyperpod-ns-vision)
    export_dir: /var/lib/hyperpod/offboarding/vision/grafana
    parts: [folder]
    state: absent
  no_log: true
"""

RETURN = r"""
changes:
  description: What the run made, or would make in check mode, in order; empty when nothing changes.
  returned: always
  type: list
  elements: str
  sample: ["create the Grafana team TeamVision", "create the folder hp-folder_vision (Team vision (hyperpod-ns-vision))"]
grafana_team:
  description: The Grafana team, once the run is over (empty when it does not exist, as in check mode before it is made).
  returned: with O(state=present)
  type: dict
  contains:
    id:
      description: Grafana's id of the team.
      type: int
      sample: 7
    name:
      description: Name of the team.
      type: str
      sample: TeamVision
folder:
  description: The team's folder, once the run is over (empty in check mode before it is made).
  returned: with O(state=present) and V(folder) in O(parts)
  type: dict
  contains:
    id:
      description: Grafana's id of the folder.
      type: int
    uid:
      description: Uid of the folder.
      type: str
      sample: hp-folder_vision
    title:
      description: Title of the folder.
      type: str
      sample: Team vision (hyperpod-ns-vision)
    url:
      description: Path of the folder in Grafana.
      type: str
    created_by:
      description: Login of the folder's creator.
      type: str
      sample: sa-hyperpod-tenancy
    version:
      description: Version of the folder.
      type: int
dashboards:
  description: Uids of the dashboards in the folder.
  returned: with O(state=present) and V(folder) in O(parts)
  type: list
  elements: str
  sample: [hp-gpu_vision]
exported:
  description: Paths of the dashboards exported (or that would be) into O(export_dir).
  returned: with O(state=absent) and V(folder) in O(parts)
  type: list
  elements: str
  sample: [/var/lib/hyperpod/offboarding/vision/grafana/hp-gpu_vision.json]
diff:
  description:
    - "The team's Grafana objects before and after: permissions as lines such as C(team TeamVision: View), dashboards by uid with
      their title, folder and a digest of their content."
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hyperpod.tenancy.plugins.module_utils.grafana import GrafanaAPI, GrafanaAPIError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.grafana_team_folder import TeamFolder, TeamFolderRefused

ARGUMENT_SPEC = dict(
    url=dict(type="str", required=True),
    api_key=dict(type="str", required=True, no_log=True),
    validate_certs=dict(type="bool", default=True),
    timeout=dict(type="int", default=30),
    login=dict(type="str"),
    team=dict(type="str", required=True),
    grafana_team=dict(type="str", required=True),
    members=dict(type="list", elements="str", default=[]),
    folder_uid=dict(type="str", required=True),
    folder_title=dict(type="str", required=True),
    former_folder_uid=dict(type="str"),
    former_dashboard_uids=dict(type="list", elements="str", default=[]),
    dashboards=dict(type="list", elements="dict", default=[]),
    commit_message=dict(type="str", default="Saved by hyperpod.tenancy.grafana_team_folder"),
    adopt=dict(type="bool", default=False),
    export_dir=dict(type="path"),
    parts=dict(type="list", elements="str", choices=["team", "folder"], default=["team", "folder"]),
    state=dict(type="str", choices=["present", "absent"], default="present"),
)


def dashboard_problems(dashboards):
    """Why the given dashboards cannot be saved: each needs a uid and a title."""
    problems = []
    for index, dashboard in enumerate(dashboards):
        missing = [key for key in ("uid", "title") if not isinstance(dashboard.get(key), str) or not dashboard.get(key)]
        if missing:
            problems.append("dashboards[%d] has no %s" % (index, " nor ".join(missing)))
    return problems


def os_error_message(error):
    return "%s: %s" % (error.filename, error.strerror or error) if error.filename else str(error.strerror or error)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    problems = dashboard_problems(module.params["dashboards"])
    if problems:
        module.fail_json(msg="; ".join(problems))
    api = GrafanaAPI(module.params["url"], module.params["api_key"], validate_certs=module.params["validate_certs"], timeout=module.params["timeout"])
    try:
        outcome = TeamFolder(api, module.params, check_mode=module.check_mode).run()
    except TeamFolderRefused as e:
        module.fail_json(msg=str(e), changed=bool(api.writes), writes=api.writes)
    except GrafanaAPIError as e:
        module.fail_json(msg="team %s: %s" % (module.params["team"], e), status=e.status, changed=bool(api.writes), writes=api.writes)
    except OSError as e:
        module.fail_json(msg="team %s: %s" % (module.params["team"], os_error_message(e)), changed=bool(api.writes), writes=api.writes)
    module.exit_json(**outcome)


if __name__ == "__main__":
    main()
