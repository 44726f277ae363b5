# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The Grafana HTTP API calls of the collection, with their one typed error.

Every call of the workspace's Grafana HTTP API (Grafana 10's documented API, as Amazon Managed Grafana serves it)
goes through ``GrafanaAPI``: folders and their permissions, dashboards, search, teams and their members, users.
A missing object is a value (``None``), never an exception; every other answer that is not a success raises
``GrafanaAPIError``, which names the call and Grafana's message, never the token. The module catches it once.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import ssl

from ansible.module_utils.six.moves.urllib.error import HTTPError, URLError
from ansible.module_utils.six.moves.urllib.parse import quote, urlencode
from ansible.module_utils.urls import Request, make_context

DEFAULT_TIMEOUT = 30


class GrafanaAPIError(Exception):
    """A Grafana HTTP API call that failed: ``method``, ``path``, ``status`` (None when no answer came) and ``message``."""

    def __init__(self, method, path, status, message):
        self.method, self.path, self.status, self.message = method, path, status, message
        if status is None:
            text = "Grafana API %s %s failed: %s" % (method, path, message)
        else:
            text = "Grafana API %s %s answered HTTP %d: %s" % (method, path, status, message)
        super(GrafanaAPIError, self).__init__(text)


def _message(raw):
    """Grafana's ``message`` of an error answer's body, else the body itself (cut short)."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw or "")
    try:
        payload = json.loads(text)
    except ValueError:
        return text[:300] or "no message"
    if isinstance(payload, dict) and payload.get("message"):
        return str(payload["message"])
    return text[:300]


class GrafanaAPI(object):
    """The Grafana HTTP API at ``url``, signed in with the bearer ``token``."""

    def __init__(self, url, token, validate_certs=True, timeout=DEFAULT_TIMEOUT):
        self.url = url.rstrip("/")
        self.validate_certs = validate_certs
        self.timeout = timeout
        headers = {"Authorization": "Bearer %s" % token, "Content-Type": "application/json", "Accept": "application/json"}
        self._request = Request(
            headers=headers, timeout=timeout, validate_certs=validate_certs, follow_redirects="safe", use_netrc=False, context=self._context(),
        )  # fmt: skip
        self.writes = []  # "<METHOD> <path>" of every write Grafana answered with a success, in order

    def _context(self):
        """The TLS context of every call, made once: ``open_url`` makes one per call, loading the CA bundle each time
        (tens of milliseconds of CPU a call). A plain http URL never uses it, so none is loaded for one."""
        if self.url.startswith("https:"):
            return make_context(validate_certs=self.validate_certs)
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)

    def call(self, method, path, body=None, missing_ok=False):
        """The JSON answer of ``method path`` (``body`` sent as JSON); ``None`` for a 404 when ``missing_ok``."""
        data = json.dumps(body, sort_keys=True) if body is not None else None
        try:
            answer = self._request.open(method, self.url + path, data=data)
            raw = answer.read()
        except HTTPError as e:
            if e.code == 404 and missing_ok:
                return None
            try:
                raw = e.read()
            except Exception:  # an answer without a body
                raw = b""
            raise GrafanaAPIError(method, path.split("?")[0], e.code, _message(raw))
        except (URLError, OSError, ValueError) as e:
            raise GrafanaAPIError(method, path.split("?")[0], None, str(getattr(e, "reason", None) or e))
        if method != "GET":
            self.writes.append("%s %s" % (method, path.split("?")[0]))
        if not raw:
            return {}
        try:
            return json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
        except ValueError:
            raise GrafanaAPIError(method, path.split("?")[0], 200, "the answer is not JSON")

    # ---------------------------------------------------------------- the signed-in identity

    def signed_in_login(self):
        """The login the token signs in as (User API, GET /api/user)."""
        return (self.call("GET", "/api/user") or {}).get("login") or ""

    # ---------------------------------------------------------------- folders

    def get_folder(self, uid):
        return self.call("GET", "/api/folders/%s" % quote(uid, safe=""), missing_ok=True)

    def create_folder(self, uid, title):
        # parentUid: none, a folder at the top level (the body community.grafana's folder module sends).
        return self.call("POST", "/api/folders", {"uid": uid, "title": title, "parentUid": None})

    def delete_folder(self, uid):
        return self.call("DELETE", "/api/folders/%s" % quote(uid, safe=""), missing_ok=True)

    def get_folder_permissions(self, uid):
        """The folder's permission items, ``None`` when the folder does not exist."""
        return self.call("GET", "/api/folders/%s/permissions" % quote(uid, safe=""), missing_ok=True)

    def set_folder_permissions(self, uid, items):
        """Replaces every permission of the folder with ``items``."""
        return self.call("POST", "/api/folders/%s/permissions" % quote(uid, safe=""), {"items": items})

    # ---------------------------------------------------------------- dashboards

    def search_dashboards(self, folder_uids):
        """The dashboards (search hits: ``uid``, ``title``, ``folderUid``) in the folders of ``folder_uids``."""
        query = [("type", "dash-db")] + [("folderUIDs", uid) for uid in folder_uids]
        return self.call("GET", "/api/search?%s" % urlencode(query)) or []

    def get_dashboard(self, uid):
        """``{"dashboard": ..., "meta": ...}``, ``None`` when there is no dashboard of ``uid``."""
        return self.call("GET", "/api/dashboards/uid/%s" % quote(uid, safe=""), missing_ok=True)

    def save_dashboard(self, dashboard, folder_id, message):
        body = {"dashboard": dashboard, "folderId": folder_id, "overwrite": True, "message": message}
        return self.call("POST", "/api/dashboards/db", body)

    # ---------------------------------------------------------------- teams and users

    def find_team(self, name):
        """The team named ``name`` (Team API search), ``None`` when there is none."""
        found = self.call("GET", "/api/teams/search?%s" % urlencode([("name", name)])) or {}
        teams = [team for team in found.get("teams") or [] if team.get("name") == name]
        return teams[0] if teams else None

    def create_team(self, name):
        return self.call("POST", "/api/teams", {"name": name, "email": ""})

    def delete_team(self, team_id):
        return self.call("DELETE", "/api/teams/%d" % int(team_id), missing_ok=True)

    def team_members(self, team_id):
        return self.call("GET", "/api/teams/%d/members" % int(team_id)) or []

    def find_user(self, login_or_email):
        """The user of that login or e-mail (GET /api/users/lookup), ``None`` when there is none."""
        return self.call("GET", "/api/users/lookup?%s" % urlencode([("loginOrEmail", login_or_email)]), missing_ok=True)

    def add_team_member(self, team_id, user_id):
        return self.call("POST", "/api/teams/%d/members" % int(team_id), {"userId": int(user_id)})
