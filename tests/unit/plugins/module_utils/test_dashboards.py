"""Team dashboards: rendered from the team_observability role's templates, valid, and scoped to the team."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jinja2
import pytest
import yaml
from ansible_collections.hyperpod.tenancy.plugins.module_utils import dashboards, naming
from ansible_collections.hyperpod.tenancy.plugins.module_utils import grafana_workspace as gw

ROOT = Path(__file__).resolve().parents[4]
TEMPLATES = ROOT / "roles" / "team_observability" / "templates"
TEAMS = yaml.safe_load((ROOT / "teams" / "teams.yml").read_text())["hyperpod_teams"]
KINDS = sorted(p.name.split(".")[0] for p in (TEMPLATES / "dashboards").glob("*.json.j2"))
DATASOURCE = "hyperpod-prometheus"


def render(kind: str, team: str) -> dict:
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined)
    text = environment.get_template(f"dashboards/{kind}.json.j2").render(
        __team_observability_team_name=team,
        __team_observability_namespace=naming.namespace(team),
        __team_observability_cluster_queue=naming.cluster_queue(team),
        __team_observability_datasource_uid=DATASOURCE,
        # As roles/team_observability/vars/main.yml derives them (filter hyperpod.tenancy.team_grafana_uids).
        __team_observability_dashboard_uids=dashboards.team_grafana_uids(team, KINDS)["dashboards"],
    )
    return json.loads(text)


def test_the_role_has_the_three_dashboards():
    assert KINDS == ["capacity", "gpu", "workloads"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("team", [t["name"] for t in TEAMS])
def test_every_sample_team_gets_valid_dashboards_scoped_to_its_namespace(team, kind):
    dashboard = render(kind, team)
    assert dashboards.dashboard_problems(dashboard, team, DATASOURCE) == []
    assert dashboard["uid"] == dashboards.grafana_uid(kind, team)
    assert isinstance(dashboard["schemaVersion"], int) and dashboard["schemaVersion"] >= 36
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    queries = dashboards.expressions(dashboard)
    assert queries, "a dashboard with no query shows nothing"
    for _panel, _ref, expr in queries:
        assert naming.namespace(team) in expr
        others = [naming.namespace(t["name"]) for t in TEAMS if t["name"] != team]
        assert not any(f'"{other}"' in expr or f'"{other}-' in expr for other in others)


@pytest.mark.parametrize("team", [t["name"] for t in TEAMS])
def test_a_teams_dashboards_fail_validation_for_every_other_team(team):
    for kind in KINDS:
        dashboard = render(kind, team)
        for other in (t["name"] for t in TEAMS if t["name"] != team):
            assert dashboards.dashboard_problems(dashboard, other, DATASOURCE), (kind, team, other)


def test_the_dashboards_cover_gpu_workloads_and_capacity():
    exprs = {kind: " ".join(e for _p, _r, e in dashboards.expressions(render(kind, "vision"))) for kind in KINDS}
    assert "DCGM_FI_DEV_GPU_UTIL" in exprs["gpu"] and "DCGM_FI_DEV_FB_USED" in exprs["gpu"]
    assert "priority_class" in exprs["workloads"] and "kueue_pending_workloads" in exprs["workloads"]
    assert 'phase="Running"' in exprs["workloads"] and 'phase="Pending"' in exprs["workloads"]
    assert "kueue_cluster_queue_nominal_quota" in exprs["capacity"] and "kueue_cluster_queue_resource_usage" in exprs["capacity"]
    legends = [t["legendFormat"] for p in render("workloads", "vision")["panels"] for t in p["targets"]]
    assert "{{priority_class}}" in legends


def test_uids_are_unique_across_teams_and_fit_grafana():
    uids = [render(kind, t["name"])["uid"] for t in TEAMS for kind in KINDS]
    assert len(uids) == len(set(uids))
    long_team = "a" * 40
    assert len(render("gpu", long_team)["uid"]) <= 40
    assert dashboards.dashboard_problems(render("gpu", long_team), long_team, DATASOURCE) == []


# ---------------------------------------------------------------- the validator catches what it must


def _broken(mutate):
    dashboard = copy.deepcopy(render("gpu", "vision"))
    mutate(dashboard)
    return dashboards.dashboard_problems(dashboard, "vision", DATASOURCE)


@pytest.mark.parametrize(
    "mutate, fragment",
    [
        (lambda d: d["panels"][1].update(id=d["panels"][0]["id"]), "used by another panel"),
        (lambda d: d.update(schemaVersion="39"), "schemaVersion"),
        (lambda d: d.pop("uid"), "missing uid"),
        (lambda d: d.update(uid="x" * 41), "does not match"),
        (lambda d: d["panels"][0]["targets"][0].update(expr='count(DCGM_FI_DEV_GPU_UTIL{namespace="hyperpod-ns-nlp"})'), "not the team's namespace"),
        (lambda d: d["panels"][0]["targets"][0].update(expr='count(DCGM_FI_DEV_GPU_UTIL{namespace=~"hyperpod-ns-.*"})'), "exact match"),
        (lambda d: d["panels"][0]["targets"][0].update(expr="count(DCGM_FI_DEV_GPU_UTIL)"), "without a selector"),
        (lambda d: d["panels"][0]["targets"][0].update(expr='count(DCGM_FI_DEV_GPU_UTIL{pod="x"})'), "not scoped"),
        (lambda d: d["panels"][0]["targets"][0].update(expr=(
            'count(DCGM_FI_DEV_GPU_UTIL{namespace="hyperpod-ns-vision"}) or '
            'label_replace(count(DCGM_FI_DEV_GPU_UTIL{namespace="hyperpod-ns-vision"}), "x", "hyperpod-ns-research", "", "")')),
         "hyperpod-ns-research"),
        (lambda d: d["panels"][0]["targets"].append(dict(d["panels"][0]["targets"][0])), "refIds"),
        (lambda d: d["panels"][0].update(datasource={"type": "prometheus", "uid": "other"}), "is not 'hyperpod-prometheus'"),
        (lambda d: d["panels"][0].update(gridPos={"x": 20, "y": 0, "w": 8, "h": 4}), "24-column grid"),
    ],
)
def test_the_validator_rejects(mutate, fragment):
    problems = _broken(mutate)
    assert any(fragment in p for p in problems), problems


def test_a_team_named_like_a_prefix_of_another_is_not_confused():
    # "nlp" must not accept "hyperpod-ns-nlp-research"; the queue name of the team itself is fine.
    assert dashboards.query_problems('sum(kueue_pending_workloads{cluster_queue="hyperpod-ns-nlp-clusterqueue"})', "nlp") == []
    problems = dashboards.query_problems('sum(kueue_pending_workloads{cluster_queue="hyperpod-ns-nlp-research-clusterqueue"})', "nlp")
    assert any("nlp-research" in p for p in problems) and any("not scoped" in p for p in problems)


# ---------------------------------------------------------------- workspace permissions: merge vs replace


def test_merge_touches_only_the_listed_principals():
    current = {("SSO_GROUP", "admins"): "ADMIN", ("SSO_GROUP", "vision"): "VIEWER"}
    entries = [{"principal_id": "nlp", "principal_type": "SSO_GROUP", "role": "VIEWER", "state": "present"}]
    wanted = gw.desired_permissions(current, entries, "merge")
    assert wanted == {**current, ("SSO_GROUP", "nlp"): "VIEWER"}
    batches = gw.permission_batches(current, wanted)
    assert batches == [[{"action": "ADD", "role": "VIEWER", "users": [{"id": "nlp", "type": "SSO_GROUP"}]}]]


def test_revoking_and_changing_roles_builds_revoke_then_add():
    current = {("SSO_GROUP", "admins"): "ADMIN", ("SSO_GROUP", "vision"): "VIEWER", ("SSO_GROUP", "nlp"): "VIEWER"}
    entries = [
        {"principal_id": "vision", "principal_type": "SSO_GROUP", "state": "absent"},
        {"principal_id": "nlp", "principal_type": "SSO_GROUP", "role": "EDITOR", "state": "present"},
    ]
    wanted = gw.desired_permissions(current, entries, "merge")
    assert wanted == {("SSO_GROUP", "admins"): "ADMIN", ("SSO_GROUP", "nlp"): "EDITOR"}
    [batch] = gw.permission_batches(current, wanted)
    assert batch[0] == {"action": "REVOKE", "role": "VIEWER", "users": [{"id": "nlp", "type": "SSO_GROUP"}, {"id": "vision", "type": "SSO_GROUP"}]}
    assert batch[1] == {"action": "ADD", "role": "EDITOR", "users": [{"id": "nlp", "type": "SSO_GROUP"}]}


def test_replace_revokes_everyone_not_listed():
    current = {("SSO_USER", "u%d" % i): ("ADMIN", "EDITOR", "VIEWER")[i] for i in range(3)}
    entries = [{"principal_id": "g%d" % i, "principal_type": "SSO_GROUP", "role": "VIEWER", "state": "present"} for i in range(2)]
    wanted = gw.desired_permissions(current, entries, "replace")
    assert wanted == {("SSO_GROUP", "g0"): "VIEWER", ("SSO_GROUP", "g1"): "VIEWER"}
    [batch] = gw.permission_batches(current, wanted)
    assert [(i["action"], i["role"], [u["id"] for u in i["users"]]) for i in batch] == [
        ("REVOKE", "ADMIN", ["u0"]), ("REVOKE", "EDITOR", ["u1"]), ("REVOKE", "VIEWER", ["u2"]), ("ADD", "VIEWER", ["g0", "g1"]),
    ]
    assert gw.permission_batches(wanted, wanted) == []


@pytest.mark.parametrize(
    "params, fragment",
    [
        ({"name": "bad name"}, "does not match"),
        ({"workspace_id": "g-xyz"}, "workspace_id"),
        ({"name": "ok", "permissions": [{"principal_id": "a", "role": "VIEWER"}, {"principal_id": "a", "role": "ADMIN"}]}, "more than once"),
        ({"name": "ok", "permissions": [{"principal_id": "a", "state": "present"}]}, "role"),
        ({"name": "ok", "authentication_providers": ["SAML"], "permissions": [{"principal_id": "a", "role": "VIEWER"}]}, "AWS_SSO"),
        ({"name": "ok", "tags": {str(i): "v" for i in range(51)}}, "at most 50"),
    ],
)
def test_workspace_input_problems(params, fragment):
    problems = gw.input_problems(dict({"state": "present"}, **params))
    assert any(fragment in p for p in problems), problems


def test_workspace_input_problems_accept_a_valid_request():
    assert gw.input_problems({"state": "present", "name": "hyperpod-observability", "permissions": [{"group_name": "TeamNLP", "role": "VIEWER"}]}) == []
