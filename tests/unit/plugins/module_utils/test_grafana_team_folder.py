"""module_utils/grafana.py and grafana_team_folder.py against the Grafana API stub of the integration tests, run in-process.

What Grafana holds after each run is read from the stub's state, as the role_observability target does: the team,
the folder and its creator, the folder's permissions, the dashboards and their folder, the former folder's fate,
the exported files. Check mode writes nothing and predicts exactly the real run's changes; a second run changes
nothing; a folder someone else made, or a former folder holding a dashboard the role did not render, is refused
before any write. The token never appears in an error.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import dashboards
from ansible_collections.hyperpod.tenancy.plugins.module_utils.grafana import GrafanaAPI, GrafanaAPIError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.grafana_team_folder import TeamFolder, TeamFolderRefused

ROOT = Path(__file__).resolve().parents[4]
STUB_PATH = ROOT / "tests/integration/targets/role_observability/files/grafana_stub.py"
TOKEN = "glsa_unit-test-token-0123456789"
MEMBER_TOKEN = "member-token"
NAMES = ["gpu", "workloads", "capacity"]


def _load_stub():
    spec = importlib.util.spec_from_file_location("grafana_stub", STUB_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


STUB = _load_stub()


class Stub:
    """The stub on 127.0.0.1 in a thread: its state (objects and request log) is read directly."""

    def __init__(self):
        handler = type("Handler", (STUB.Handler,), {"state": STUB.State(), "tokens": {TOKEN: "sa-hyperpod-tenancy", MEMBER_TOKEN: "alice"}})
        self.state = handler.state
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]

    def api(self, token=TOKEN):
        return GrafanaAPI(self.url, token)

    def writes(self):
        return ["%s %s" % (r["method"], r["path"]) for r in self.state.requests if r["method"] != "GET"]

    def clear(self):
        self.state.requests.clear()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub():
    running = Stub()
    yield running
    running.stop()


def rendered(team):
    """The team's dashboards as the role renders them: uid, title, a query scoped to the namespace."""
    uids = dashboards.team_grafana_uids(team, NAMES)["dashboards"]
    return [
        {"uid": uids[name], "title": "Team %s - %s" % (team, name), "schemaVersion": 39, "version": 1, "editable": False,
         "panels": [{"id": 1, "type": "stat", "targets": [{"refId": "A", "expr": 'up{namespace="hyperpod-ns-%s"}' % team}]}]}
        for name in NAMES
    ]  # fmt: skip


def params(team="vision", **overrides):
    legacy = dashboards.legacy_grafana_uids(team, NAMES)
    base = dict(
        url=None, api_key=TOKEN, login=None, team=team, grafana_team="Team%s" % team.capitalize(), members=[],
        folder_uid=dashboards.grafana_uid(dashboards.FOLDER, team), folder_title="Team %s (hyperpod-ns-%s)" % (team, team),
        former_folder_uid=legacy["folder"], former_dashboard_uids=list(legacy["dashboards"].values()),
        dashboards=rendered(team), commit_message="Rendered by hyperpod.tenancy.team_observability", adopt=False,
        export_dir=None, parts=["team", "folder"], state="present",
    )  # fmt: skip
    base.update(overrides)
    return base


def run(stub, check_mode=False, **overrides):
    return TeamFolder(stub.api(), params(**overrides), check_mode=check_mode).run()


def make_legacy_folder(stub, team="vision", extra=()):
    """The team's folder and dashboards under the uids the role gave before, made with the role's token."""
    api = stub.api()
    legacy = dashboards.legacy_grafana_uids(team, NAMES)
    api.create_folder(legacy["folder"], "Team %s (hyperpod-ns-%s)" % (team, team))
    for uid in list(legacy["dashboards"].values()) + list(extra):
        api.call("POST", "/api/dashboards/db", {"dashboard": {"uid": uid, "title": uid, "panels": []}, "folderUid": legacy["folder"], "overwrite": True})
    return legacy


def test_check_mode_predicts_the_first_run_which_builds_everything_then_a_rerun_changes_nothing(stub):
    predicted = run(stub, check_mode=True)
    assert stub.writes() == []
    assert predicted["changed"] is True
    done = run(stub)
    assert done["changes"] == predicted["changes"]
    assert done["diff"]["before"] == predicted["diff"]["before"]
    assert done["diff"]["after"] == predicted["diff"]["after"]

    state = stub.state
    team = next(t for t in state.teams.values() if t["name"] == "TeamVision")
    folder = state.folders["hp-folder_vision"]
    assert folder["title"] == "Team vision (hyperpod-ns-vision)" and folder["createdBy"] == "sa-hyperpod-tenancy"
    # Only the team's Grafana team may view the folder: Grafana's default Editor and Viewer grants are gone.
    assert state.folder_permissions["hp-folder_vision"] == [{"teamId": team["id"], "permission": 1}]
    in_folder = sorted(uid for uid, d in state.dashboards.items() if d["folderUid"] == "hp-folder_vision")
    assert in_folder == ["hp-capacity_vision", "hp-gpu_vision", "hp-workloads_vision"]
    posts = [r["body"] for r in state.requests if (r["method"], r["path"]) == ("POST", "/api/dashboards/db")]
    assert {p["folderId"] for p in posts} == {folder["id"]} and all(p["overwrite"] and "id" not in p["dashboard"] for p in posts)
    assert [r["body"] for r in state.requests if (r["method"], r["path"]) == ("POST", "/api/folders")] == [
        {"title": "Team vision (hyperpod-ns-vision)", "uid": "hp-folder_vision", "parentUid": None}]
    assert done["folder"]["created_by"] == "sa-hyperpod-tenancy" and done["grafana_team"] == {"id": team["id"], "name": "TeamVision"}

    stub.clear()
    again_predicted = run(stub, check_mode=True)
    again = run(stub)
    assert again_predicted["changed"] is again["changed"] is False
    assert again["changes"] == [] and again["diff"]["before"] == again["diff"]["after"]
    assert stub.writes() == []


def test_a_drifted_folder_is_put_back_its_permissions_and_an_edited_dashboard(stub):
    run(stub)
    api = stub.api()
    api.set_folder_permissions("hp-folder_vision", [{"role": "Editor", "permission": 2}])
    answer = api.get_dashboard("hp-gpu_vision")
    edited = dict(answer["dashboard"], title="edited by hand")
    api.call("POST", "/api/dashboards/db", {"dashboard": edited, "folderId": answer["meta"]["folderId"], "overwrite": True})
    stub.clear()

    predicted = run(stub, check_mode=True)
    assert stub.writes() == []
    assert predicted["diff"]["before"]["permissions"] == ["role Editor: Edit"]
    assert predicted["diff"]["before"]["dashboards"]["hp-gpu_vision"]["title"] == "edited by hand"
    done = run(stub)
    assert done["changes"] == predicted["changes"] and len(done["changes"]) == 2
    assert stub.writes() == ["POST /api/folders/hp-folder_vision/permissions", "POST /api/dashboards/db"]
    assert stub.state.dashboards["hp-gpu_vision"]["dashboard"]["title"] == "Team vision - gpu"
    assert run(stub)["changed"] is False


def test_the_former_folder_goes_before_the_folder_is_made_under_its_new_uid(stub):
    legacy = make_legacy_folder(stub)
    stub.clear()
    predicted = run(stub, check_mode=True)
    assert stub.writes() == []
    assert predicted["changes"][0].startswith("delete the team's former folder hyperpod-ns-vision")
    done = run(stub)
    assert done["changes"] == predicted["changes"]
    writes = stub.writes()
    assert writes.index("DELETE /api/folders/hyperpod-ns-vision") < writes.index("POST /api/folders")
    assert legacy["folder"] not in stub.state.folders
    assert not [uid for uid in stub.state.dashboards if uid.startswith("hyperpod-ns-")]
    assert done["diff"]["after"]["former_folder"] is None


@pytest.mark.parametrize("state", ["present", "absent"])
def test_a_former_folder_that_is_not_the_teams_is_left_alone(stub, state, tmp_path):
    # Under the former uid: a folder of another title (another team's, or a dashboard's uid space neighbour).
    stub.api().create_folder("hyperpod-ns-vision", "Someone's folder")
    stub.clear()
    run(stub, state=state, export_dir=str(tmp_path))
    assert "hyperpod-ns-vision" in stub.state.folders
    assert "DELETE /api/folders/hyperpod-ns-vision" not in stub.writes()


def test_a_former_folder_holding_a_dashboard_the_role_did_not_render_is_refused_before_any_write(stub):
    make_legacy_folder(stub, extra=["hand-made"])
    stub.clear()
    for check_mode in (True, False):
        with pytest.raises(TeamFolderRefused) as refused:
            run(stub, check_mode=check_mode)
        assert str(refused.value) == (
            "team vision: Grafana folder hyperpod-ns-vision, the team's folder before its uid became hp-folder_vision, holds "
            "dashboards the role did not render (hand-made): refusing to delete them with it. Move them out of the folder (or "
            "delete them) and run again: the role then deletes the folder and makes the team's under hp-folder_vision."
        )
    assert stub.writes() == []


@pytest.mark.parametrize("state", ["present", "absent"])
@pytest.mark.parametrize("parts", [[], ["team"], ["folder"], ["team", "folder"]])
def test_a_folder_someone_else_made_is_refused_in_every_state_and_part_unless_adopted(stub, state, parts, tmp_path):
    stub.api(MEMBER_TOKEN).create_folder("hp-folder_vision", "Team vision (hyperpod-ns-vision)")
    stub.clear()
    for check_mode in (True, False):
        with pytest.raises(TeamFolderRefused) as refused:
            run(stub, check_mode=check_mode, state=state, parts=parts, export_dir=str(tmp_path))
        assert str(refused.value) == (
            'team vision: Grafana folder hp-folder_vision exists and was not made by hyperpod.tenancy for team vision (created by '
            '"alice", not by "sa-hyperpod-tenancy", the identity of the roles\' Grafana token): refusing to change or delete it. '
            "To take it over, the platform adds grafana_folder to hyperpod_adopt.vision in the cluster file"
        )
    assert stub.writes() == []
    # Given the login, the module does not ask Grafana whom the token signs in as.
    with pytest.raises(TeamFolderRefused, match='not by "someone-else"'):
        run(stub, login="someone-else", state=state, parts=parts, export_dir=str(tmp_path))
    assert not [r for r in stub.state.requests if r["path"] == "/api/user"][2:]

    if parts == ["folder"] and state == "present":
        # The folder's permissions name the Grafana team: without it, the folder alone is refused.
        with pytest.raises(TeamFolderRefused, match="the Grafana team TeamVision does not exist"):
            run(stub, adopt=True, parts=parts)
        run(stub, adopt=True, parts=["team"])
    adopted = run(stub, adopt=True, state=state, parts=parts, export_dir=str(tmp_path))
    if parts and state == "present":
        assert adopted["changed"] is True
    if "folder" in parts and state == "present":
        assert stub.state.folders["hp-folder_vision"]["createdBy"] == "alice"
        assert len(stub.state.folder_permissions["hp-folder_vision"]) == 1


def test_offboarding_revokes_the_team_then_exports_every_dashboard_before_the_folders_go(stub, tmp_path):
    make_legacy_folder(stub)
    # The former folder kept: built by a run that predates the move, the team's folder made beside it by hand.
    api = stub.api()
    api.create_folder("hp-folder_vision", "Team vision (moved)")
    run(stub, parts=["team"])
    for dashboard in rendered("vision"):
        api.save_dashboard(dashboard, stub.state.folders["hp-folder_vision"]["id"], "test")
    report = tmp_path / "reports" / "vision" / "grafana"
    team_id = next(t["id"] for t in stub.state.teams.values() if t["name"] == "TeamVision")
    stub.clear()

    revoke_predicted = run(stub, check_mode=True, state="absent", parts=["team"])
    revoked = run(stub, state="absent", parts=["team"])
    assert revoke_predicted["changes"] == revoked["changes"] == ["delete the Grafana team TeamVision"]
    assert stub.writes() == ["DELETE /api/teams/%d" % team_id]
    assert not [t for t in stub.state.teams.values() if t["name"] == "TeamVision"]
    assert "hp-folder_vision" in stub.state.folders
    stub.clear()

    predicted = run(stub, check_mode=True, state="absent", parts=["folder"], export_dir=str(report))
    assert stub.writes() == [] and not report.exists()
    done = run(stub, state="absent", parts=["folder"], export_dir=str(report))
    assert done["changes"] == predicted["changes"]
    assert stub.writes() == ["DELETE /api/folders/hp-folder_vision", "DELETE /api/folders/hyperpod-ns-vision"]
    exported = sorted(path.name for path in report.iterdir())
    assert exported == sorted("%s.json" % uid for uid in ["hp-gpu_vision", "hp-workloads_vision", "hp-capacity_vision",
                                                          "hyperpod-ns-vision-gpu", "hyperpod-ns-vision-workloads", "hyperpod-ns-vision-capacity"])
    gpu = json.loads((report / "hp-gpu_vision.json").read_text())
    assert gpu["dashboard"]["uid"] == "hp-gpu_vision" and gpu["meta"]["folderUid"] == "hp-folder_vision"
    assert oct(report.stat().st_mode & 0o777) == "0o750"
    assert stub.state.folders == {} and stub.state.dashboards == {}

    stub.clear()
    assert run(stub, state="absent", export_dir=str(report))["changed"] is False
    assert stub.writes() == []


def test_a_failed_export_keeps_every_folder_and_dashboard(stub, tmp_path):
    run(stub)
    stub.state.faults = STUB.Faults(error_rate=1.0, operations=["GET /api/dashboards/uid/*"])
    stub.clear()
    with pytest.raises(GrafanaAPIError) as failed:
        run(stub, state="absent", parts=["folder"], export_dir=str(tmp_path / "report"))
    assert failed.value.status == 500 and "GET /api/dashboards/uid/hp-" in str(failed.value)
    assert TOKEN not in str(failed.value)
    assert stub.writes() == []
    assert "hp-folder_vision" in stub.state.folders and len(stub.state.dashboards) == 3


def test_an_error_names_the_call_and_grafanas_message_never_the_token(stub):
    with pytest.raises(GrafanaAPIError) as unauthorized:
        TeamFolder(stub.api("wrong-" + TOKEN), params()).run()
    assert unauthorized.value.status == 401 and str(unauthorized.value) == "Grafana API GET /api/folders/hp-folder_vision answered HTTP 401: Unauthorized"
    stub.state.faults = STUB.Faults(denial_rate=1.0, operations=["POST /api/teams"])
    with pytest.raises(GrafanaAPIError, match="POST /api/teams answered HTTP 403: You'll need additional permissions"):
        run(stub)
    with pytest.raises(GrafanaAPIError, match="GET /api/folders/x failed") as unreachable:
        GrafanaAPI("http://127.0.0.1:9", TOKEN, timeout=2).get_folder("x")
    assert unreachable.value.status is None and TOKEN not in str(unreachable.value)


def test_an_unknown_member_is_refused_before_any_write(stub):
    # The stub has no users lookup: every user is unknown, which refuses the run before the team is made.
    with pytest.raises(TeamFolderRefused, match="Grafana user bob does not exist"):
        run(stub, members=["bob"])
    assert stub.writes() == []


def test_members_are_added_once_and_never_removed(stub, monkeypatch):
    """The stub keeps no members: a fake of the two member calls over it (users alice and bob, ids 1 and 2)."""
    users = {"alice": {"id": 1, "login": "alice", "email": "alice@example.com"}, "bob@example.com": {"id": 2, "login": "bob", "email": "bob@example.com"}}
    members = {}
    monkeypatch.setattr(GrafanaAPI, "find_user", lambda self, name: users.get(name))
    monkeypatch.setattr(GrafanaAPI, "team_members", lambda self, team_id: list(members.get(team_id, [])))
    monkeypatch.setattr(GrafanaAPI, "add_team_member", lambda self, team_id, user_id: members.setdefault(team_id, []).append(
        next(u for u in users.values() if u["id"] == user_id)))
    run(stub, members=["alice"], parts=["team"])
    team_id = next(t["id"] for t in stub.state.teams.values() if t["name"] == "TeamVision")
    members[team_id].append({"id": 3, "login": "carol", "email": "carol@example.com"})  # added by hand
    predicted = run(stub, check_mode=True, members=["alice", "bob@example.com"], parts=["team"])
    assert predicted["changes"] == ["add bob@example.com to the Grafana team TeamVision"]
    done = run(stub, members=["alice", "bob@example.com"], parts=["team"])
    assert done["changes"] == predicted["changes"]
    assert sorted(m["login"] for m in members[team_id]) == ["alice", "bob", "carol"]
    assert run(stub, members=["alice", "bob@example.com"], parts=["team"])["changed"] is False
