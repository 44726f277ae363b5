# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""What a team's Grafana dashboard must be: valid dashboard JSON whose every query sees the team's namespace only.

The dashboards are rendered from the templates of the ``team_observability`` role
(``roles/team_observability/templates/dashboards/``). A team must never see another
team's pods or queue, so every PromQL selector of a metric is scoped with an exact
(``=``) matcher on the team's namespace (``namespace``) or its Kueue ClusterQueue
(``cluster_queue``), and no other ``hyperpod-ns-…`` name appears anywhere in a query.
``dashboard_problems`` lists what breaks these rules (empty when none).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import hashlib
import re

from ansible_collections.hyperpod.tenancy.plugins.module_utils import naming

MIN_SCHEMA_VERSION = 36  # Grafana 9.4 and later
# A folder's or a dashboard's uid: at most 40 characters (Amazon Managed Grafana User Guide, "Folder API" and
# "Dashboard API": "The uid can have a maximum length of 40 characters",
# https://docs.aws.amazon.com/grafana/latest/userguide/Grafana-API-Folder.html), letters, digits, '-' and '_' (Grafana's
# util.IsValidShortUID, which the folder and dashboard APIs apply).
UID_MAX = 40
UID = r"[a-zA-Z0-9_-]{1,40}"
GRID_WIDTH = 24
SCOPE_LABELS = ("namespace", "exported_namespace", "cluster_queue", "local_queue", "queue_name")
# A metric selector: a metric name followed by its label matchers.
SELECTOR = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^{}]*)\}")
MATCHER = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')
# Metric families these dashboards read; a bare name without a selector would read every team.
METRIC_PREFIXES = ("DCGM_", "kube_", "kueue_", "container_", "node_")
BARE_METRIC = re.compile(r"(?<![a-zA-Z0-9_:])((?:%s)[a-zA-Z0-9_:]*)(?!\s*\{)(?![a-zA-Z0-9_:])" % "|".join(METRIC_PREFIXES))
TEAM_NAMESPACE = re.compile(naming.namespace(naming.DNS_LABEL_PATTERN))

# ---------------------------------------------------------------- the uids of a team's folder and dashboards
#
# Grafana keeps folders and dashboards in one uid space (a folder is a dashboard row with is_folder set), so the uid of
# one team's folder must never be the uid of any team's dashboard, nor of another team's folder. The uids before this
# rule (``legacy_grafana_uids``) were the team's namespace and "<namespace>-<dashboard>": team ``vision-gpu``'s folder
# took the uid of team ``vision``'s GPU dashboard.
#
# A uid is derived from a kind (``FOLDER``, or a dashboard's name) and a team name:
#
#   readable  "hp-<kind>_<team>"          when it fits in UID_MAX characters
#   hashed    "hp_<kind>_<digest>"        otherwise; <digest>: SHA-256 of the team name, base32 (a-z, 2-7), cut to fill
#                                         UID_MAX
#
# Why no two (kind, team) pairs share a uid. A kind matches UID_KIND and a team name naming.TEAM_NAME_RULE: neither
# can contain '_'. (1) The two forms never meet: the third character is '-' in a readable uid, '_' in a hashed one.
# (2) A readable uid has exactly one '_': the kind is what lies between "hp-" and it, the team what follows it, so
# two readable uids are equal only for the same kind and team. (3) In a hashed uid the kind lies between the first
# and the second '_' (the digest has none), so equal hashed uids have the same kind, hence digests of one length
# (at least 24 characters, 120 bits), which are equal for two team names only if they collide in SHA-256's first
# 120 bits: nobody can choose a team name to meet a given digest (a second preimage costs about 2**120 hashes), and
# no two names of the few thousand teams a platform may have meet by chance (2**-120 a pair).
#
# An exact code for long names cannot exist: 4 kinds times the ~37**40 team names of 40 characters outnumber the
# 38**40 uids of 40 characters a store that compares uids without case (Grafana on MySQL) can tell apart, and a
# case-sensitive packing (base 62) would let a hostile name differ from another team's only in case.
FOLDER = "folder"
UID_KIND = r"[a-z][a-z0-9-]{0,11}"
_HASH_CHARACTERS = "abcdefghijklmnopqrstuvwxyz234567"


def grafana_uid(kind, team):
    """The uid of the team's Grafana object of ``kind`` (``FOLDER`` or a dashboard's name); see above."""
    if not (isinstance(kind, str) and re.fullmatch(UID_KIND, kind)):
        raise ValueError("Grafana uid kind %r does not match %s" % (kind, UID_KIND))
    unused_what, pattern, longest = naming.TEAM_NAME_RULE
    if not (isinstance(team, str) and re.fullmatch(pattern, team) and len(team) <= longest):
        raise ValueError("team name %r does not match %s (at most %d characters)" % (team, pattern, longest))
    readable = "hp-%s_%s" % (kind, team)
    if len(readable) <= UID_MAX:
        return readable
    head = "hp_%s_" % kind
    digest = base64.b32encode(hashlib.sha256(team.encode("ascii")).digest()).decode("ascii").lower().rstrip("=")
    return head + digest[: UID_MAX - len(head)]


def team_grafana_uids(team, dashboard_names):
    """``{"folder": uid, "dashboards": {name: uid}}`` for the team's folder and each of ``dashboard_names``."""
    names = list(dashboard_names)
    if FOLDER in names:
        raise ValueError("a dashboard cannot be named %r: that is the kind of the team's folder uid" % FOLDER)
    return {"folder": grafana_uid(FOLDER, team), "dashboards": dict((name, grafana_uid(name, team)) for name in names)}


def legacy_grafana_uids(team, dashboard_names):
    """The uids the team_observability role gave before ``team_grafana_uids`` (same shape): the team's namespace,
    or "hp-" and a SHA-1 of the team for a namespace longer than 30 characters, and "<that>-<dashboard>". Read only to
    move a team's folder of that uid (roles/team_observability/tasks/legacy_folder.yml)."""
    namespace = naming.namespace(team)
    prefix = namespace if len(namespace) <= 30 else "hp-" + hashlib.sha1(team.encode("ascii")).hexdigest()[:16]
    return {"folder": prefix, "dashboards": dict((name, "%s-%s" % (prefix, name)) for name in dashboard_names)}


def allowed_scopes(team):
    """The names a query of ``team`` may scope itself to."""
    return {
        "namespace": naming.namespace(team),
        "exported_namespace": naming.namespace(team),
        "cluster_queue": naming.cluster_queue(team),
        "local_queue": naming.local_queue(team),
        "queue_name": naming.local_queue(team),
    }


def expressions(dashboard):
    """(panel id, refId, expr) of every query of the dashboard, rows' nested panels included."""
    found = []
    for panel in _panels(dashboard):
        for target in panel.get("targets") or []:
            found.append((panel.get("id"), target.get("refId"), target.get("expr")))
    return found


def _panels(dashboard):
    for panel in dashboard.get("panels") or []:
        yield panel
        yield from panel.get("panels") or []


def query_problems(expr, team):
    """Why ``expr`` could show data of another team than ``team`` (empty when it cannot)."""
    if not isinstance(expr, str) or not expr.strip():
        return ["the query is empty"]
    scopes = allowed_scopes(team)
    allowed_names = set(scopes.values())
    problems = []
    selectors = SELECTOR.findall(expr)
    if not selectors:
        problems.append("no metric selector with label matchers")
    for metric, matchers in selectors:
        parsed = MATCHER.findall(matchers)
        scoped = False
        for label, operator, value in parsed:
            if label in SCOPE_LABELS:
                if operator != "=":
                    problems.append("%s: %s%s%r must be an exact match (=) on the team's own name" % (metric, label, operator, value))
                elif value != scopes[label]:
                    problems.append("%s: %s=%r is not the team's %s (%r)" % (metric, label, value, label, scopes[label]))
                else:
                    scoped = True
        if not scoped:
            problems.append("%s is not scoped to the team (%s)" % (metric, " or ".join(
                '%s="%s"' % (label, scopes[label]) for label in ("namespace", "cluster_queue"))))
    for bare in BARE_METRIC.findall(expr):
        problems.append("%s is read without a selector, across every namespace" % bare)
    for match in TEAM_NAMESPACE.finditer(expr):
        if match.group(0) not in allowed_names:
            problems.append("names %s, which is not the team's" % match.group(0))
    return problems


def dashboard_problems(dashboard, team, datasource_uid=None):
    """Everything that makes ``dashboard`` invalid Grafana dashboard JSON or lets it show another team's data."""
    if not isinstance(dashboard, dict):
        return ["a dashboard is a JSON object"]
    problems = _top_level_problems(dashboard)
    if not isinstance(dashboard.get("panels"), list) or not dashboard.get("panels"):
        problems.append("panels must be a non-empty list")
        return problems
    seen_ids = set()
    for index, panel in enumerate(_panels(dashboard)):
        panel_id = panel.get("id")
        problems.extend(_panel_id_problems(panel_id, "panels[%d]" % index, seen_ids))
        seen_ids.add(panel_id)
        where = "panel %s" % panel_id
        problems.extend(_panel_layout_problems(panel, where))
        if panel.get("type") == "row":
            continue
        problems.extend(_panel_query_problems(panel, where, team, datasource_uid))
    return problems


def _top_level_problems(dashboard):
    """What is wrong with the dashboard's own fields: the required keys, its uid, its id and its schemaVersion."""
    problems = []
    for key in ("uid", "title", "panels", "schemaVersion"):
        if key not in dashboard:
            problems.append("missing %s" % key)
    uid = dashboard.get("uid")
    if uid is not None and not (isinstance(uid, str) and re.fullmatch(UID, uid)):
        problems.append("uid %r does not match %s" % (uid, UID))
    if "id" in dashboard and dashboard["id"] is not None:
        problems.append("id is set by Grafana; a provisioned dashboard has none")
    schema = dashboard.get("schemaVersion")
    if not isinstance(schema, int) or isinstance(schema, bool) or schema < MIN_SCHEMA_VERSION:
        problems.append("schemaVersion %r is not an integer >= %d" % (schema, MIN_SCHEMA_VERSION))
    return problems


def _panel_id_problems(panel_id, where, seen_ids):
    """Why a panel's id is not an integer of its own among ``seen_ids``, the ids of the panels before it."""
    if not isinstance(panel_id, int) or isinstance(panel_id, bool):
        return ["%s: id %r is not an integer" % (where, panel_id)]
    if panel_id in seen_ids:
        return ["%s: id %d is used by another panel" % (where, panel_id)]
    return []


def _panel_layout_problems(panel, where):
    """What is wrong with a panel's type and its place on the grid."""
    problems = []
    if not panel.get("type"):
        problems.append("%s: no type" % where)
    grid = panel.get("gridPos") or {}
    if not all(isinstance(grid.get(k), int) for k in ("x", "y", "w", "h")):
        problems.append("%s: gridPos needs integer x, y, w and h" % where)
    elif grid["x"] < 0 or grid["w"] < 1 or grid["x"] + grid["w"] > GRID_WIDTH:
        problems.append("%s: gridPos does not fit the %d-column grid" % (where, GRID_WIDTH))
    return problems


def _panel_query_problems(panel, where, team, datasource_uid):
    """What is wrong with a (non-row) panel's queries: none, their refIds, their data sources, and each query's scope."""
    problems = []
    targets = panel.get("targets") or []
    if not targets:
        problems.append("%s: no queries" % where)
    ref_ids = [t.get("refId") for t in targets]
    if len(set(ref_ids)) != len(ref_ids) or not all(ref_ids):
        problems.append("%s: refIds must be present and unique: %s" % (where, ref_ids))
    sources = [panel.get("datasource")] + [t.get("datasource") for t in targets]
    for source in sources:
        if not isinstance(source, dict) or source.get("type") != "prometheus":
            problems.append("%s: datasource %r is not a Prometheus data source" % (where, source))
        elif datasource_uid is not None and source.get("uid") != datasource_uid:
            problems.append("%s: datasource uid %r is not %r" % (where, source.get("uid"), datasource_uid))
    for target in targets:
        for problem in query_problems(target.get("expr"), team):
            problems.append("%s query %s: %s" % (where, target.get("refId"), problem))
    return problems
