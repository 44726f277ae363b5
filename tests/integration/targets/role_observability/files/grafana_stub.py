"""A tiny stand-in for the Grafana HTTP API, for tests only: no Grafana can be installed here.

It answers the calls the community.grafana modules and the observability roles make
(health, folders and their permissions, dashboards, search, teams, data sources) the way
Grafana 10 documents them, keeps what it was given in memory, and records every request
so a test can assert paths and JSON bodies. It listens on 127.0.0.1 only, needs a bearer
token (--token signs in as the service account sa-hyperpod-tenancy, --member-token as the user alice, an org
Editor: each request acts as its token's identity, as GET /api/user and a folder's createdBy/updatedBy say),
writes the port it got to --port-file, and stops on POST /_stub/shutdown or after
--lifetime seconds, whichever comes first.

Admin endpoints (not recorded): GET|DELETE /_stub/requests, GET /_stub/state, POST /_stub/shutdown, and
GET|PUT /_stub/faults, fault injection as the sandbox's ``/_sandbox/faults`` does it:
``{"error_rate": 1.0, "denial_rate": 0, "operations": ["DELETE /api/folders/*"], "seed": 7}``, rates are
probabilities per request of the operations named (``"<METHOD> <path pattern>"``, fnmatch, ``"*"`` for every
request); an error answers 500 and a denial 403, as Grafana does, and the request is recorded with ``"fault"``.
PUT ``{}`` clears them.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import random
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

VERSION = "10.4.1"
PERMISSIONS = (1, 2, 4)  # View, Edit, Admin


class Faults:
    """What the sandbox's Faults are for AWS (sandbox/server.py), for the Grafana API: errors and denials by rate."""

    def __init__(self, error_rate=0.0, denial_rate=0.0, operations=("*",), seed=None):
        self.error_rate, self.denial_rate, self.operations, self.seed = float(error_rate), float(denial_rate), list(operations), seed
        self._random = random.Random(seed)

    def public(self):
        return {"error_rate": self.error_rate, "denial_rate": self.denial_rate, "operations": self.operations, "seed": self.seed}

    def draw(self, method, path):
        """The fault of one request: ``"error"``, ``"deny"`` or ``""`` (drawn under the state's lock)."""
        if not any(name == "*" or fnmatch.fnmatchcase("%s %s" % (method, path), name) for name in self.operations):
            return ""
        roll = self._random.random()
        if roll < self.error_rate:
            return "error"
        return "deny" if roll < self.error_rate + self.denial_rate else ""


# Grafana's answers: an unexpected server error, and the access control's refusal of an action the caller lacks.
FAULT_ANSWERS = {
    "error": (500, {"message": "Internal Server Error"}),
    "deny": (403, {"accessErrorId": "ACE0000000000", "message": "You'll need additional permissions to perform this action."}),
}


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.faults = Faults()
        self.requests = []
        self.next_id = 100
        self.folders = {}  # uid -> folder
        self.folder_permissions = {}  # uid -> items
        self.dashboards = {}  # uid -> {"dashboard": ..., "folderId": ..., "folderUid": ...}
        self.teams = {}  # id -> team
        self.datasources = {}  # name -> datasource

    def new_id(self):
        self.next_id += 1
        return self.next_id


class Handler(BaseHTTPRequestHandler):
    state: State
    tokens: dict  # bearer token -> the login it signs in as
    server_version = "GrafanaStub/1"

    def log_message(self, *args):  # quiet
        pass

    # ---------------------------------------------------------------- plumbing

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return {"__invalid__": raw.decode("utf-8", "replace")}

    def _send(self, status, payload):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _handle(self, method):
        url = urlparse(self.path)
        path, query = unquote(url.path), parse_qs(url.query)
        body = self._body() if method in ("POST", "PUT", "PATCH", "DELETE") else None
        if path.startswith("/_stub/"):
            return self._admin(method, path, body)
        record = {"method": method, "path": path, "query": {k: v[0] for k, v in query.items()}, "body": body}
        with self.state.lock:
            self.state.requests.append(record)
        scheme, unused, token = (self.headers.get("Authorization") or "").partition(" ")
        login = self.tokens.get(token) if scheme == "Bearer" else None
        if login is None:
            return self._send(401, {"message": "Unauthorized"})
        with self.state.lock:
            fault = self.state.faults.draw(method, path)
        if fault:
            record["fault"] = fault
            return self._send(*FAULT_ANSWERS[fault])
        if isinstance(body, dict) and "__invalid__" in body:
            return self._send(400, {"message": "bad request data"})
        with self.state.lock:
            self.login = login
            status, payload = self._route(method, path, query, body)
        return self._send(status, payload)

    def do_GET(self):  # noqa: N802
        self._handle("GET")

    def do_POST(self):  # noqa: N802
        self._handle("POST")

    def do_PUT(self):  # noqa: N802
        self._handle("PUT")

    def do_DELETE(self):  # noqa: N802
        self._handle("DELETE")

    def _admin(self, method, path, body=None):
        if (method, path) == ("GET", "/_stub/faults"):
            with self.state.lock:
                return self._send(200, self.state.faults.public())
        if (method, path) == ("PUT", "/_stub/faults"):
            try:
                faults = Faults(**(body if isinstance(body, dict) else {}))
            except (TypeError, ValueError) as error:
                return self._send(400, {"message": str(error)})
            with self.state.lock:
                self.state.faults = faults
            return self._send(200, faults.public())
        if (method, path) == ("GET", "/_stub/requests"):
            with self.state.lock:
                return self._send(200, {"requests": list(self.state.requests)})
        if (method, path) == ("DELETE", "/_stub/requests"):
            with self.state.lock:
                self.state.requests.clear()
            return self._send(200, {"requests": []})
        if (method, path) == ("GET", "/_stub/state"):
            with self.state.lock:
                return self._send(200, {
                    "folders": self.state.folders, "folder_permissions": self.state.folder_permissions,
                    "dashboards": self.state.dashboards, "teams": self.state.teams, "datasources": self.state.datasources,
                })
        if (method, path) == ("POST", "/_stub/shutdown"):
            self._send(200, {"stopping": True})
            threading.Thread(target=self.server.shutdown, daemon=True).start()
            return None
        return self._send(404, {"message": "no stub route"})

    # ---------------------------------------------------------------- the Grafana API

    def _route(self, method, path, query, body):
        s = self.state
        if path == "/api/health":
            return 200, {"commit": "stub", "database": "ok", "version": VERSION}
        if path == "/api/frontend/settings":
            return 200, {"buildInfo": {"version": VERSION}}
        if path == "/api/user" and method == "GET":
            # The signed-in identity (Grafana's User HTTP API, "Actual user"): a service account is a user of the org.
            return 200, {"id": 1 + sorted(self.tokens.values()).index(self.login), "login": self.login, "isGrafanaAdmin": False}

        # folders
        if path == "/api/folders" and method == "GET":
            return 200, [{"id": f["id"], "uid": f["uid"], "title": f["title"]} for f in s.folders.values()]
        if path == "/api/folders" and method == "POST":
            title, uid = (body or {}).get("title"), (body or {}).get("uid") or "f%d" % s.next_id
            if not title:
                return 400, {"message": "folder title cannot be empty"}
            if uid in s.folders or any(f["title"] == title for f in s.folders.values()):
                return 409, {"message": "a folder with the same name already exists"}
            if len(uid) > 40 or not re.fullmatch(r"[a-zA-Z0-9_-]+", uid):
                return 400, {"message": "uid contains illegal characters"}
            # Grafana keeps who created the folder (createdBy, never changed by an update) and who updated it last.
            now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            folder = {"id": s.new_id(), "uid": uid, "title": title, "url": "/dashboards/f/%s/" % uid, "version": 1,
                      "createdBy": self.login, "created": now, "updatedBy": self.login, "updated": now}
            s.folders[uid] = folder
            # Grafana's default: editors may edit, viewers may view; the team role replaces this.
            s.folder_permissions[uid] = [{"role": "Editor", "permission": 2}, {"role": "Viewer", "permission": 1}]
            return 200, folder
        match = re.fullmatch(r"/api/folders/([^/]+)", path)
        if match:
            uid = match.group(1)
            if uid not in s.folders:
                return 404, {"message": "folder not found"}
            if method == "GET":
                return 200, s.folders[uid]
            if method == "PUT":
                folder = s.folders[uid]
                if not (body or {}).get("title"):
                    return 400, {"message": "folder title cannot be empty"}
                if not body.get("overwrite") and body.get("version") != folder["version"]:
                    return 412, {"message": "the folder has been changed by someone else"}
                folder.update(title=body["title"], version=folder["version"] + 1, updatedBy=self.login,
                              updated=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
                return 200, folder
            if method == "DELETE":
                folder = s.folders.pop(uid)
                s.folder_permissions.pop(uid, None)
                for dash_uid in [d for d, v in s.dashboards.items() if v["folderUid"] == uid]:
                    del s.dashboards[dash_uid]
                return 200, {"id": folder["id"], "message": "Folder deleted", "title": folder["title"]}
        match = re.fullmatch(r"/api/folders/([^/]+)/permissions", path)
        if match:
            uid = match.group(1)
            if uid not in s.folders:
                return 404, {"message": "folder not found"}
            if method == "GET":
                items = []
                for item in s.folder_permissions[uid]:
                    entry = {"folderId": s.folders[uid]["id"], "uid": uid, "permission": item["permission"],
                             "permissionName": {1: "View", 2: "Edit", 4: "Admin"}[item["permission"]], "inherited": False,
                             "userId": item.get("userId", 0), "teamId": item.get("teamId", 0)}
                    if "role" in item:
                        entry["role"] = item["role"]
                    if "teamId" in item:
                        entry["team"] = next((t["name"] for t in s.teams.values() if t["id"] == item["teamId"]), "")
                    items.append(entry)
                return 200, items
            if method == "POST":
                items = (body or {}).get("items")
                if not isinstance(items, list):
                    return 400, {"message": "bad request data"}
                for item in items:
                    subjects = [k for k in ("role", "teamId", "userId") if item.get(k)]
                    if len(subjects) != 1 or item.get("permission") not in PERMISSIONS:
                        return 400, {"message": "Permission item needs exactly one of role, teamId, userId and a permission of 1, 2 or 4"}
                    if "teamId" in subjects and item["teamId"] not in s.teams:
                        return 404, {"message": "Team not found"}
                s.folder_permissions[uid] = [dict(i) for i in items]
                return 200, {"message": "Folder permissions updated"}

        # dashboards
        if path == "/api/dashboards/db" and method == "POST":
            dashboard = dict((body or {}).get("dashboard") or {})
            if not dashboard.get("title"):
                return 400, {"message": "Dashboard title cannot be empty"}
            folder_id = (body or {}).get("folderId", 0)
            folder_uid = (body or {}).get("folderUid")
            folder = next((f for f in s.folders.values() if f["id"] == folder_id or f["uid"] == folder_uid), None)
            if folder is None and folder_id not in (0, None):
                return 400, {"message": "Folder not found"}
            uid = dashboard.get("uid") or "d%d" % s.next_id
            existing = s.dashboards.get(uid)
            if existing and not body.get("overwrite") and dashboard.get("version") != existing["dashboard"]["version"]:
                return 412, {"message": "The dashboard has been changed by someone else", "status": "version-mismatch"}
            dashboard["uid"] = uid
            dashboard["id"] = existing["dashboard"]["id"] if existing else s.new_id()
            dashboard["version"] = existing["dashboard"]["version"] + 1 if existing else 1
            s.dashboards[uid] = {"dashboard": dashboard, "folderId": folder["id"] if folder else 0, "folderUid": folder["uid"] if folder else ""}
            return 200, {"id": dashboard["id"], "uid": uid, "url": "/d/%s" % uid, "status": "success", "version": dashboard["version"], "slug": uid}
        match = re.fullmatch(r"/api/dashboards/uid/([^/]+)", path)
        if match:
            uid = match.group(1)
            if uid not in s.dashboards:
                return 404, {"message": "Dashboard not found"}
            stored = s.dashboards[uid]
            if method == "GET":
                meta = {"folderId": stored["folderId"], "folderUid": stored["folderUid"], "slug": uid, "url": "/d/%s" % uid,
                        "version": stored["dashboard"]["version"]}
                return 200, {"dashboard": stored["dashboard"], "meta": meta}
            if method == "DELETE":
                del s.dashboards[uid]
                return 200, {"title": stored["dashboard"]["title"], "message": "Dashboard deleted", "id": stored["dashboard"]["id"]}
        if path == "/api/search" and method == "GET":
            folder_uids = query.get("folderUIDs", [])
            folder_ids = [int(i) for i in query.get("folderIds", []) if i.isdigit()]
            title = (query.get("query") or [""])[0]
            found = []
            for uid, stored in sorted(s.dashboards.items()):
                if folder_uids and stored["folderUid"] not in folder_uids:
                    continue
                if folder_ids and stored["folderId"] not in folder_ids:
                    continue
                if title and title.lower() not in stored["dashboard"]["title"].lower():
                    continue
                found.append({"id": stored["dashboard"]["id"], "uid": uid, "title": stored["dashboard"]["title"], "type": "dash-db",
                              "folderUid": stored["folderUid"], "folderId": stored["folderId"], "url": "/d/%s" % uid})
            return 200, found

        # teams
        if path == "/api/teams/search" and method == "GET":
            name = (query.get("name") or [""])[0]
            teams = [t for t in s.teams.values() if not name or t["name"] == name]
            return 200, {"totalCount": len(teams), "teams": teams, "page": 1, "perPage": 1000}
        if path == "/api/teams" and method == "POST":
            name = (body or {}).get("name")
            if not name:
                return 400, {"message": "team name cannot be empty"}
            if any(t["name"] == name for t in s.teams.values()):
                return 409, {"message": "Team name taken"}
            team_id = s.new_id()
            s.teams[team_id] = {"id": team_id, "orgId": 1, "name": name, "email": body.get("email") or "", "memberCount": 0}
            return 200, {"message": "Team created", "teamId": team_id}
        match = re.fullmatch(r"/api/teams/(\d+)(/members)?", path)
        if match:
            team_id = int(match.group(1))
            if team_id not in s.teams:
                return 404, {"message": "Team not found"}
            if match.group(2) and method == "GET":
                return 200, []
            if not match.group(2) and method == "DELETE":
                del s.teams[team_id]
                for uid, items in s.folder_permissions.items():
                    s.folder_permissions[uid] = [i for i in items if i.get("teamId") != team_id]
                return 200, {"message": "Team deleted"}

        # data sources
        match = re.fullmatch(r"/api/datasources/name/(.+)", path)
        if match:
            name = match.group(1)
            if name not in s.datasources:
                return 404, {"message": "Data source not found"}
            if method == "GET":
                return 200, s.datasources[name]
            if method == "DELETE":
                del s.datasources[name]
                return 200, {"message": "Data source deleted"}
        if path == "/api/datasources" and method == "POST":
            return self._save_datasource(body, None)
        match = re.fullmatch(r"/api/datasources/(\d+)", path)
        if match and method == "PUT":
            return self._save_datasource(body, int(match.group(1)))
        return 404, {"message": "Not found"}

    def _save_datasource(self, body, ds_id):
        s = self.state
        body = dict(body or {})
        if not body.get("name") or not body.get("type"):
            return 400, {"message": "name and type are required"}
        existing = next((d for d in s.datasources.values() if d["id"] == ds_id), None) if ds_id else None
        if ds_id and existing is None:
            return 404, {"message": "Data source not found"}
        if not ds_id and body["name"] in s.datasources:
            return 409, {"message": "data source with the same name already exists"}
        secure = body.pop("secureJsonData", None) or {}
        stored = dict(body)
        stored["id"] = existing["id"] if existing else s.new_id()
        stored["uid"] = body.get("uid") or (existing or {}).get("uid") or "ds%d" % stored["id"]
        stored["version"] = (existing or {}).get("version", 0) + 1
        stored["readOnly"] = False
        stored["secureJsonFields"] = dict((k, True) for k in secure)
        if existing:
            s.datasources.pop(existing["name"], None)
        s.datasources[stored["name"]] = stored
        return 200, {"datasource": stored, "id": stored["id"], "message": "Datasource saved", "name": stored["name"]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--member-token")
    parser.add_argument("--lifetime", type=float, default=600)
    args = parser.parse_args()
    Handler.state = State()
    Handler.tokens = {args.token: "sa-hyperpod-tenancy"}
    if args.member_token:
        Handler.tokens[args.member_token] = "alice"
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(args.port_file + ".tmp", "w") as out:
        out.write(str(server.server_address[1]))
    import os

    os.replace(args.port_file + ".tmp", args.port_file)
    timer = threading.Timer(args.lifetime, server.shutdown)
    timer.daemon = True
    timer.start()
    started = time.monotonic()
    server.serve_forever(poll_interval=0.2)
    server.server_close()
    timer.cancel()
    return 0 if time.monotonic() - started < args.lifetime else 1


if __name__ == "__main__":
    raise SystemExit(main())
