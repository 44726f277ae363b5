# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""A team's objects in the workspace's Grafana: its Grafana team, its folder, the folder's permissions, its dashboards.

What ``hyperpod.tenancy.grafana_team_folder`` does, in one process (the calls are in ``module_utils/grafana.py``):
read what Grafana holds, compare it with what the team should have, predict (check mode) or make the changes, and
read back what Grafana then holds for the result and the diff.

- Whose folder. The team's folder is changed or deleted only when the identity of the module's token made it (the
  folder's ``createdBy``, which Grafana records when the folder is made and no update changes), unless the team
  adopts it; anything else under the team's uid is refused before any write (docs/observability.md, "Whose folder").
- The former folder. The folder the role made under the uid it gave before (``dashboards.legacy_grafana_uids``) is
  the team's when it has the team's folder title and the token's identity made it. Building deletes it before it
  makes the folder under the new uid (Grafana refuses a second folder of one title), and refuses while it holds a
  dashboard that was not rendered there; offboarding exports its dashboards with the folder's and deletes it.
- Offboarding exports every dashboard of the folders into ``export_dir`` before it deletes any folder: a failed
  export keeps them all for the next run.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import hashlib
import json
import os

PARTS = ("team", "folder")
VIEW = 1
PERMISSION_NAMES = {1: "View", 2: "Edit", 4: "Admin"}
# What Grafana sets on a saved dashboard, never part of what the role renders (community.grafana's comparison too).
SERVER_MANAGED = ("id", "version")


class TeamFolderRefused(Exception):
    """The team's objects may not be changed as asked; nothing was written."""


def _digest(dashboard):
    text = json.dumps(dashboard, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def rendered_form(dashboard):
    """The dashboard as it is compared and saved: without the fields Grafana manages."""
    return dict((key, value) for key, value in dashboard.items() if key not in SERVER_MANAGED)


def permission_line(item, team_names=None):
    """One permission item as a line of the diff: ``"team TeamVision: View"``, ``"role Editor: Edit"``."""
    name = PERMISSION_NAMES.get(item.get("permission"), str(item.get("permission")))
    if item.get("teamId"):
        team = item.get("team") or (team_names or {}).get(item["teamId"]) or "id %s" % item["teamId"]
        return "team %s: %s" % (team, name)
    if item.get("userId"):
        return "user %s: %s" % (item.get("userLogin") or "id %s" % item["userId"], name)
    return "role %s: %s" % (item.get("role") or "none", name)


def own_permissions(items):
    """The folder's own permission items, not those inherited from a parent folder."""
    return [item for item in items or [] if not item.get("inherited")]


def viewable_by_team_only(items, team_id):
    own = own_permissions(items)
    return len(own) == 1 and int(own[0].get("teamId") or 0) == int(team_id or 0) and int(own[0].get("permission") or 0) == VIEW


def export_text(answer):
    """What the export of a dashboard writes: Grafana's answer (dashboard and meta), as community.grafana wrote it."""
    return json.dumps(answer, indent=2)


def make_directory(path, mode=0o750):
    """``path`` and the directories above it that are missing, each of ``mode``; whether one was made."""
    path = os.path.abspath(path)
    if os.path.isdir(path):
        return False
    make_directory(os.path.dirname(path), mode)
    try:
        os.mkdir(path, mode)
    except OSError as e:
        if e.errno != errno.EEXIST:
            raise
        return False
    os.chmod(path, mode)
    return True


class TeamFolder(object):
    """The team's Grafana objects as ``params`` (the module's options) describe them, through ``api`` (grafana.GrafanaAPI)."""

    def __init__(self, api, params, check_mode=False):
        self.api = api
        self.params = params
        self.check_mode = check_mode
        self.parts = list(params.get("parts") or []) if params.get("parts") is not None else list(PARTS)
        self.changes = []
        self._login = params.get("login") or None

    # ---------------------------------------------------------------- reads

    def login(self):
        """The login of the module's token: O(login), else Grafana's GET /api/user (read once)."""
        if self._login is None:
            self._login = self.api.signed_in_login()
        return self._login

    def check_owner(self, folder):
        """Refuses a folder of the team's uid that the token's identity did not make, unless the team adopts it."""
        if folder is None or self.params.get("adopt"):
            return
        creator = folder.get("createdBy") or ""
        login = self.login()
        if creator != login:
            team, uid = self.params["team"], self.params["folder_uid"]
            raise TeamFolderRefused(
                "team %s: Grafana folder %s exists and was not made by hyperpod.tenancy for team %s (created by %s, not by %s, the "
                "identity of the roles' Grafana token): refusing to change or delete it. To take it over, the platform adds "
                "grafana_folder to hyperpod_adopt.%s in the cluster file" % (team, uid, team, json.dumps(creator), json.dumps(login), team)
            )

    def former_folder(self):
        """The team's former folder (the folder under O(former_folder_uid) that the token's identity made with the
        team's folder title), ``None`` when there is none or what has that uid is not the team's."""
        uid = self.params.get("former_folder_uid")
        if not uid or uid == self.params["folder_uid"]:
            return None
        folder = self.api.get_folder(uid)
        if folder is None or folder.get("title") != self.params["folder_title"]:
            return None
        creator = folder.get("createdBy") or ""
        if not creator or creator != self.login():
            return None
        return folder

    def dashboard_view(self, answer):
        """A dashboard as the diff shows it: title, folder and a digest of its content."""
        if answer is None:
            return None
        dashboard = answer.get("dashboard") or {}
        return {
            "title": dashboard.get("title"),
            "folder_uid": (answer.get("meta") or {}).get("folderUid") or "",
            "digest": _digest(rendered_form(dashboard)),
        }

    def team_view(self, team, members):
        if team is None:
            return None
        view = {"name": team.get("name")}
        if members is not None:
            view["members"] = sorted(members)
        return view

    @staticmethod
    def member_names(members):
        names = set()
        for member in members or []:
            names.update(name for name in (member.get("login"), member.get("email")) if name)
        return names

    # ---------------------------------------------------------------- the whole run

    def run(self):
        """The result: ``changed``, ``changes`` (what was or would be done, in order), the objects and the diff."""
        folder = self.api.get_folder(self.params["folder_uid"])
        self.check_owner(folder)
        if self.params["state"] == "present":
            return self.ensure_present(folder)
        return self.ensure_absent(folder)

    def _result(self, before, after, **keys):
        changed = bool(self.changes)
        return dict(keys, changed=changed, changes=list(self.changes), diff={"before": before, "after": after})

    # ---------------------------------------------------------------- present

    def ensure_present(self, folder):
        before, after = {}, {}
        if "folder" in self.parts:
            self.remove_former_folder(before, after)
        team = None
        if "team" in self.parts:
            team = self.ensure_team(before, after)
        elif "folder" in self.parts:
            team = self.api.find_team(self.params["grafana_team"])
            if team is None:
                raise TeamFolderRefused(
                    "team %s: the Grafana team %s does not exist: the folder's permissions name it (parts must include team)"
                    % (self.params["team"], self.params["grafana_team"])
                )
        keys = {}
        if "team" in self.parts or "folder" in self.parts:
            keys["grafana_team"] = self._team_result(team)
        if "folder" in self.parts:
            existed = folder is not None
            folder = self.ensure_folder(folder, before, after)
            self.ensure_permissions(folder, existed, team, before, after)
            keys["dashboards"] = self.ensure_dashboards(folder, before, after)
            keys["folder"] = self._folder_result(folder)
        if self.changes and not self.check_mode:
            after, keys = self.read_back(after, keys)
        return self._result(before, after, **keys)

    def remove_former_folder(self, before, after):
        former = self.former_folder()
        if former is None:
            return
        uid = former["uid"]
        rendered = set(self.params.get("former_dashboard_uids") or [])
        found = self.api.search_dashboards([uid])
        others = [hit["uid"] for hit in found if hit.get("uid") not in rendered]
        if others:
            raise TeamFolderRefused(
                "team %s: Grafana folder %s, the team's folder before its uid became %s, holds dashboards the role did not render "
                "(%s): refusing to delete them with it. Move them out of the folder (or delete them) and run again: the role then "
                "deletes the folder and makes the team's under %s."
                % (self.params["team"], uid, self.params["folder_uid"], ", ".join(others), self.params["folder_uid"])
            )
        before["former_folder"] = {"uid": uid, "title": former.get("title"), "dashboards": sorted(hit["uid"] for hit in found)}
        after["former_folder"] = None
        self.changes.append(
            "delete the team's former folder %s with the dashboards rendered there, and make the team's folder as %s"
            % (uid, self.params["folder_uid"])
        )
        if not self.check_mode:
            self.api.delete_folder(uid)

    def ensure_team(self, before, after):
        name = self.params["grafana_team"]
        wanted = list(self.params.get("members") or [])
        team = self.api.find_team(name)
        current = self.api.team_members(team["id"]) if team is not None and wanted else []
        known = self.member_names(current)
        before["grafana_team"] = self.team_view(team, sorted(self.member_names(current)) if wanted else None)
        # The members to add are looked up before the team is made: an unknown user is refused before that write.
        missing = [member for member in wanted if member not in known]
        users = []
        for member in missing:
            user = self.api.find_user(member)
            if user is None:
                raise TeamFolderRefused(
                    "team %s: Grafana user %s does not exist (a user exists once signed in): cannot add it to the Grafana team %s"
                    % (self.params["team"], member, name)
                )
            users.append((member, user))
        if team is None:
            self.changes.append("create the Grafana team %s" % name)
            if not self.check_mode:
                self.api.create_team(name)
                team = self.api.find_team(name)
                if team is None:
                    raise TeamFolderRefused("team %s: Grafana did not keep the Grafana team %s it created" % (self.params["team"], name))
        for member, user in users:
            self.changes.append("add %s to the Grafana team %s" % (member, name))
            if not self.check_mode:
                self.api.add_team_member(team["id"], user["id"])
        after["grafana_team"] = {"name": name}
        if wanted:
            after["grafana_team"]["members"] = sorted(known | set(missing))
        return team

    def ensure_folder(self, folder, before, after):
        uid, title = self.params["folder_uid"], self.params["folder_title"]
        before["folder"] = {"uid": uid, "title": folder.get("title")} if folder else None
        if folder is None:
            self.changes.append("create the folder %s (%s)" % (uid, title))
            if not self.check_mode:
                self.api.create_folder(uid, title)
                folder = self.api.get_folder(uid)
                if folder is None:
                    raise TeamFolderRefused("team %s: Grafana did not keep the folder %s it created" % (self.params["team"], uid))
            after["folder"] = {"uid": uid, "title": title}
        else:
            # A folder of the team's uid keeps its title (community.grafana's folder module did not rename either).
            after["folder"] = dict(before["folder"])
        return folder

    def ensure_permissions(self, folder, existed, team, before, after):
        """The folder's own permissions: View for the Grafana team, nothing else. A folder made by this run has
        Grafana's defaults (Editor and Viewer roles), replaced too; its ``before`` is no permission."""
        uid, name = self.params["folder_uid"], self.params["grafana_team"]
        items = self.api.get_folder_permissions(uid) if folder is not None else []
        team_id = int((team or {}).get("id") or 0)
        names = {team_id: name} if team_id else {}
        before["permissions"] = sorted(permission_line(item, names) for item in own_permissions(items or [])) if existed else []
        after["permissions"] = ["team %s: View" % name]
        if viewable_by_team_only(items, team_id):
            return
        now = " (now: %s)" % (", ".join(before["permissions"]) or "none") if existed else ""
        self.changes.append("let only the Grafana team %s view the folder %s%s" % (name, uid, now))
        if not self.check_mode and team_id > 0:
            self.api.set_folder_permissions(uid, [{"teamId": team_id, "permission": VIEW}])

    def ensure_dashboards(self, folder, before, after):
        folder_id = (folder or {}).get("id")
        folder_uid = self.params["folder_uid"]
        before["dashboards"], after["dashboards"] = {}, {}
        saved = []
        for dashboard in self.params.get("dashboards") or []:
            uid = dashboard["uid"]
            wanted = rendered_form(dashboard)
            answer = self.api.get_dashboard(uid)
            before["dashboards"][uid] = self.dashboard_view(answer)
            after["dashboards"][uid] = {"title": wanted.get("title"), "folder_uid": folder_uid, "digest": _digest(wanted)}
            saved.append(uid)
            if answer is not None and folder_id is not None:
                current = rendered_form(answer.get("dashboard") or {})
                if current == wanted and (answer.get("meta") or {}).get("folderId", 0) == folder_id:
                    continue
            self.changes.append("%s the dashboard %s in the folder %s" % ("update" if answer else "create", uid, folder_uid))
            if not self.check_mode:
                self.api.save_dashboard(wanted, folder_id, self.params["commit_message"])
        return saved

    def read_back(self, predicted, keys):
        """What Grafana holds once written: the ``after`` of the diff (the keys of ``predicted``) and the result's objects."""
        uid = self.params["folder_uid"]
        after, keys = {}, dict(keys)
        if "team" in self.parts or "folder" in self.parts:
            team = self.api.find_team(self.params["grafana_team"])
            members = self.member_names(self.api.team_members(team["id"])) if team is not None and self.params.get("members") else None
            after["grafana_team"] = self.team_view(team, members)
            keys["grafana_team"] = self._team_result(team)
        if "folder" in self.parts:
            former_uid = self.params.get("former_folder_uid")
            if "former_folder" in predicted:
                after["former_folder"] = None if self.api.get_folder(former_uid) is None else {"uid": former_uid}
            folder = self.api.get_folder(uid)
            after["folder"] = {"uid": uid, "title": folder.get("title")} if folder else None
            keys["folder"] = self._folder_result(folder)
            team_names = {int((team or {}).get("id") or 0): self.params["grafana_team"]}
            after["permissions"] = sorted(permission_line(item, team_names) for item in own_permissions(self.api.get_folder_permissions(uid) or []))
            after["dashboards"] = dict((d, self.dashboard_view(self.api.get_dashboard(d))) for d in keys.get("dashboards") or [])
        return after, keys

    @staticmethod
    def _team_result(team):
        if team is None:
            return {}
        return {"id": team.get("id"), "name": team.get("name")}

    @staticmethod
    def _folder_result(folder):
        if folder is None:
            return {}
        return {
            "id": folder.get("id"), "uid": folder.get("uid"), "title": folder.get("title"), "url": folder.get("url"),
            "created_by": folder.get("createdBy"), "version": folder.get("version"),
        }  # fmt: skip

    # ---------------------------------------------------------------- absent

    def ensure_absent(self, folder):
        before, after = {}, {}
        keys = {}
        if "team" in self.parts:
            name = self.params["grafana_team"]
            team = self.api.find_team(name)
            before["grafana_team"] = self.team_view(team, None)
            after["grafana_team"] = None
            if team is not None:
                self.changes.append("delete the Grafana team %s" % name)
                if not self.check_mode:
                    self.api.delete_team(team["id"])
        if "folder" in self.parts:
            keys["exported"] = self.remove_folders(folder, before, after)
        return self._result(before, after, **keys)

    def remove_folders(self, folder, before, after):
        """Exports every dashboard of the team's folder and former folder, then deletes both; the files written."""
        uid = self.params["folder_uid"]
        former = self.former_folder()
        uids = [uid] + ([former["uid"]] if former else [])
        found = self.api.search_dashboards(uids)
        before["folder"] = {"uid": uid, "title": folder.get("title")} if folder else None
        before["former_folder"] = {"uid": former["uid"], "title": former.get("title")} if former else None
        before["dashboards"] = sorted(hit["uid"] for hit in found)
        after.update(folder=None, former_folder=None, dashboards=[])
        exported = []
        if found:
            directory = self.params.get("export_dir")
            if not directory:
                raise TeamFolderRefused("team %s: export_dir is required to remove the folder %s with its dashboards" % (self.params["team"], uid))
            if not os.path.isdir(directory):
                self.changes.append("create the export directory %s" % directory)
                if not self.check_mode:
                    make_directory(directory)
            for hit in found:
                answer = self.api.get_dashboard(hit["uid"])
                if answer is None:  # deleted meanwhile
                    continue
                path = os.path.join(directory, "%s.json" % hit["uid"])
                text = export_text(answer)
                exported.append(path)
                if _read(path) == text:
                    continue
                self.changes.append("export the dashboard %s to %s" % (hit["uid"], path))
                if not self.check_mode:
                    _write(path, text)
        if folder is not None:
            self.changes.append("delete the folder %s with its dashboards" % uid)
            if not self.check_mode:
                self.api.delete_folder(uid)
        if former is not None:
            self.changes.append("delete the team's former folder %s with its dashboards" % former["uid"])
            if not self.check_mode:
                self.api.delete_folder(former["uid"])
        return exported


def _read(path):
    try:
        with open(path) as stream:
            return stream.read()
    except OSError:
        return None


def _write(path, text):
    temporary = path + ".tmp"
    with open(temporary, "w") as stream:
        stream.write(text)
    os.replace(temporary, path)
