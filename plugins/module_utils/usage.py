# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""What each team used of the shared cluster in a month, read from its Amazon Managed Prometheus workspace.

The cluster's metrics reach AMP through the HyperPod observability add-on (docs/observability.md).
This file asks AMP's Prometheus-compatible query API for them and turns the answers into hours.

**The query API.** ``POST https://aps-workspaces.<region>.amazonaws.com/workspaces/<id>/api/v1/query_range``
with a form body ``query=…&start=…&end=…&step=…``, signed with AWS Signature Version 4 for the service
``aps`` (AMP user guide, "Query using Prometheus-compatible APIs" and "Use awscurl to query with
Prometheus-compatible APIs"; the answer is Prometheus's own JSON, ``{"status": "success", "data":
{"resultType": "matrix", "result": [...]}}``). With an ``endpoint_url`` (the sandbox, a VPC endpoint) the
same path is asked of that host.

**The queries, all of them** (``QUERIES``; ``<gpu>`` is ``resource="nvidia.com/gpu"``):

==========  ============================================================================================
guaranteed  ``sum by (cluster_queue, flavor) (kueue_cluster_queue_nominal_quota{<gpu>})``: GPUs the team's
            ClusterQueue is guaranteed (Kueue's optional ClusterQueue resource metrics; labels
            ``cohort``, ``cluster_queue``, ``flavor``, ``resource``)
admitted    ``sum by (cluster_queue, flavor) (kueue_cluster_queue_resource_usage{<gpu>})``: GPUs of the
            workloads Kueue admitted in that ClusterQueue, guaranteed and borrowed alike
workloads   ``sum by (cluster_queue) (kueue_admitted_workloads_total)``: the counter of admitted workloads
            (its increase from one step before the month to its end, a drop counted as a reset)
busy        ``sum by (namespace, instance_type) (label_replace(DCGM_FI_DEV_GPU_UTIL, "node", "$1", "Hostname",
            "(.+)") * on (node) group_left (instance_type) label_replace(kube_node_labels, "instance_type",
            "$1", "label_node_kubernetes_io_instance_type", "(.+)")) / 100``: GPUs actually busy, from the
            NVIDIA DCGM exporter's utilisation per GPU (percent, labels ``namespace``/``pod`` of the pod
            using it, ``Hostname`` of its node) joined to the node's instance type (kube-state-metrics'
            ``kube_node_labels``, which carries ``node.kubernetes.io/instance-type`` only when that label is
            in its ``--metric-labels-allowlist``)
==========  ============================================================================================

Each query is asked once for the month, at a fixed step (300 s by default). A value at an evaluation
time stands for the step that begins there, so hours are ``sum(values) * step / 3600``; the range's
last point (the next month's first instant) is left out. From the same points, step by step and per
team and flavor: **borrowed** is ``max(admitted - guaranteed, 0)``, **lent or idle** (guaranteed that
the team left unused, which Kueue may lend) is ``max(guaranteed - admitted, 0)``.

A team is its ClusterQueue ``hyperpod-ns-<team>-clusterqueue`` and its namespace ``hyperpod-ns-<team>``
(``naming.py``). Task Governance makes one ResourceFlavor per instance type; the flavor's name is taken
to be the instance type (``ml.…``). Series of other ClusterQueues, namespaces or flavors are reported as
``unknown``, never charged to a team.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import difflib
import json
import re
import statistics
import time
from decimal import ROUND_HALF_UP, Decimal

from ansible_collections.hyperpod.tenancy.plugins.module_utils import chargeback, naming

GPU_SELECTOR = 'resource="nvidia.com/gpu"'
QUERIES = {
    "guaranteed": "sum by (cluster_queue, flavor) (kueue_cluster_queue_nominal_quota{%s})" % GPU_SELECTOR,
    "admitted": "sum by (cluster_queue, flavor) (kueue_cluster_queue_resource_usage{%s})" % GPU_SELECTOR,
    "workloads": "sum by (cluster_queue) (kueue_admitted_workloads_total)",
    "busy": (
        'sum by (namespace, instance_type) (label_replace(DCGM_FI_DEV_GPU_UTIL, "node", "$1", "Hostname", "(.+)")'
        ' * on (node) group_left (instance_type) label_replace(kube_node_labels, "instance_type", "$1",'
        ' "label_node_kubernetes_io_instance_type", "(.+)")) / 100'
    ),
}
HOURS = Decimal("0.01")
DEFAULT_STEP = 300
# AMP answers 429 when throttled and 503 when busy; both are worth another try.
RETRIED_STATUS = (429, 500, 502, 503, 504)


class UsageError(ValueError):
    """An answer that cannot give a correct report; the message says which and why."""


def gpu_hours(value):
    return Decimal(value).quantize(HOURS, rounding=ROUND_HALF_UP)


# --- the request ----------------------------------------------------------------------------


def query_url(region, workspace_id, endpoint_url=None, api="query_range"):
    """The workspace's Prometheus-compatible API URL, as AMP documents it (or on ``endpoint_url``)."""
    base = endpoint_url.rstrip("/") if endpoint_url else "https://aps-workspaces.%s.amazonaws.com" % region
    return "%s/workspaces/%s/api/v1/%s" % (base, workspace_id, api)


def range_of(period, step=DEFAULT_STEP, weeks=None):
    """(start, end, points) in epoch seconds: the month (or the ``weeks`` before its end), end included."""
    end = _epoch(period["end"])
    start = end - weeks * 7 * 86400 if weeks else _epoch(period["start"])
    if (end - start) % step:
        raise UsageError("step %d s does not divide the period into whole steps" % step)
    return start, end, (end - start) // step


def _epoch(day):
    return int(datetime.datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=datetime.timezone.utc).timestamp())


class AmpQuery:
    """Asks one AMP workspace's query API, signed with SigV4 (service ``aps``), through botocore."""

    def __init__(self, url, credentials, region, verify=True, attempts=4, sleep=time.sleep):
        from botocore.httpsession import URLLib3Session

        self.url = url
        self.credentials = credentials
        self.region = region
        self.session = URLLib3Session(verify=verify)
        self.attempts = attempts
        self.sleep = sleep

    def _send(self, form):
        from urllib.parse import urlencode

        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        request = AWSRequest(method="POST", url=self.url, data=urlencode(form),
                             headers={"Content-Type": "application/x-www-form-urlencoded"})
        SigV4Auth(self.credentials, "aps", self.region).add_auth(request)
        return self.session.send(request.prepare())

    def range(self, query, start, end, step):
        from botocore.exceptions import ConnectionError as BotocoreConnectionError
        from botocore.exceptions import HTTPClientError

        form = {"query": query, "start": str(start), "end": str(end), "step": "%ds" % step}
        for attempt in range(self.attempts):
            try:
                response = self._send(form)
            except (BotocoreConnectionError, HTTPClientError) as e:  # refused, reset, timed out: the endpoint did not answer
                if attempt == self.attempts - 1:
                    raise UsageError("%s did not answer (%s) for %s" % (self.url, e, query))
                self.sleep(min(2 ** attempt, 8))
                continue
            if response.status_code not in RETRIED_STATUS or attempt == self.attempts - 1:
                break
            self.sleep(min(2 ** attempt, 8))
        return parse_matrix(response.status_code, response.content, query)


def parse_matrix(status, body, query):
    """[(labels, {epoch: value})] of a query_range answer; an error answer raises UsageError."""
    try:
        answer = json.loads(body)
    except ValueError:
        raise UsageError("the query API answered HTTP %d with no JSON for %s: %r" % (status, query, body[:200]))
    if status != 200 or answer.get("status") != "success":
        raise UsageError("the query API answered HTTP %d (%s: %s) for %s" % (
            status, answer.get("errorType") or answer.get("__type") or "error", answer.get("error") or answer.get("message"), query))
    data = answer.get("data") or {}
    if data.get("resultType") != "matrix":
        raise UsageError("the query API answered a %s, not a matrix, for %s" % (data.get("resultType"), query))
    return [(series.get("metric") or {}, dict((int(float(t)), v) for t, v in series.get("values") or []))
            for series in data.get("result") or []]


# --- from points to hours -------------------------------------------------------------------


def _team_maps(teams):
    present = [t["name"] for t in teams if t.get("state", "present") == "present"]
    return (dict((naming.cluster_queue(t), t) for t in present), dict((naming.namespace(t), t) for t in present))


def _points(series, start, points, step):
    """{epoch: Decimal} on the period's steps (the range's last point, the period's end, left out)."""
    times = set(range(start, start + points * step, step))
    values = dict((t, Decimal(v)) for t, v in series.items() if t in times)
    broken = sorted(t for t, v in values.items() if not v.is_finite())
    if broken:
        raise UsageError("the series answered %s at %d, which is not a number of GPUs" % (series[broken[0]], broken[0]))
    return values


def collect(answers, teams, capacity, period, step=DEFAULT_STEP):
    """The month's usage per team and instance type, GPU-hours per day and type, and what fits no team.

    ``answers``: {query name: parse_matrix(...)} for every name in QUERIES, over ``range_of(period, step)``.
    """
    start, _end, points = range_of(period, step)
    by_queue, by_namespace = _team_maps(teams)
    unknown = set()
    steps = (start, points, step)
    # {(team, itype): {epoch: gpus}} per measure
    measures = {
        "guaranteed": _queue_measure("guaranteed", answers["guaranteed"], by_queue, capacity, steps, unknown),
        "admitted": _queue_measure("admitted", answers["admitted"], by_queue, capacity, steps, unknown),
        "busy": _busy_measure(answers["busy"], by_namespace, capacity, steps, unknown),
    }
    workloads = _workloads(answers["workloads"], by_queue, unknown)

    keys = sorted(set(k for m in measures.values() for k in m))
    teams_out, days = {}, {}
    for team, itype in keys:
        g, a, b = (measures[m].get((team, itype), {}) for m in ("guaranteed", "admitted", "busy"))
        sums = _step_sums(g, a, b, itype, days, steps)
        teams_out.setdefault(team, {})[itype] = _hours(sums, itype, step)
    for by_day in days.values():
        for cell in by_day.values():
            for measure in list(cell):
                cell[measure] = gpu_hours(cell[measure] * step / 3600)
    return {
        "month": period["month"], "start": period["start"], "end": period["end"], "step": step,
        "teams": teams_out, "workloads": workloads, "days": days, "unknown": sorted(unknown),
    }


def _queue_measure(name, answer, by_queue, capacity, steps, unknown):
    """{(team, itype): {epoch: gpus}} of a measure labelled by cluster queue and flavor (``guaranteed``, ``admitted``);
    the series of no present team or of an instance type not in ``capacity`` are added to ``unknown``."""
    start, points, step = steps
    measure = {}
    for labels, series in answer:
        team, itype = by_queue.get(labels.get("cluster_queue")), labels.get("flavor")
        if team is None or itype not in capacity:
            unknown.add("%s cluster_queue=%s flavor=%s" % (name, labels.get("cluster_queue"), itype))
            continue
        measure[(team, itype)] = _points(series, start, points, step)
    return measure


def _busy_measure(answer, by_namespace, capacity, steps, unknown):
    """{(team, itype): {epoch: gpus}} of ``busy``, labelled by namespace and instance type; the series of no present
    team or of an instance type not in ``capacity`` are added to ``unknown``."""
    start, points, step = steps
    measure = {}
    for labels, series in answer:
        if not labels.get("namespace"):
            continue  # GPUs no pod holds: idle by definition, nobody's use
        team, itype = by_namespace.get(labels.get("namespace")), labels.get("instance_type")
        if team is None or itype not in capacity:
            unknown.add("busy namespace=%s instance_type=%s" % (labels.get("namespace"), itype))
            continue
        measure[(team, itype)] = _points(series, start, points, step)
    return measure


def _workloads(answer, by_queue, unknown):
    """{team: workloads admitted over the month} of the ``workloads`` counter; the queues of no present team are added
    to ``unknown``."""
    workloads = {}
    for labels, series in answer:
        team = by_queue.get(labels.get("cluster_queue"))
        if team is None:
            unknown.add("workloads cluster_queue=%s" % labels.get("cluster_queue"))
            continue
        workloads[team] = workloads.get(team, 0) + counter_increase(series)
    return workloads


def _step_sums(g, a, b, itype, days, steps):
    """The period's sums of one team and instance type's GPUs guaranteed (``g``), admitted (``a``), busy (``b``),
    borrowed and lent, step by step; each step's guaranteed, admitted and busy GPUs are added to its day in ``days``."""
    start, points, step = steps
    sums = dict.fromkeys(("guaranteed", "admitted", "busy", "borrowed", "lent"), Decimal(0))
    for t in range(start, start + points * step, step):
        guaranteed, admitted, busy = g.get(t, Decimal(0)), a.get(t, Decimal(0)), b.get(t, Decimal(0))
        step_values = {"guaranteed": guaranteed, "admitted": admitted, "busy": busy,
                       "borrowed": max(admitted - guaranteed, 0), "lent": max(guaranteed - admitted, 0)}
        day = datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%d")
        cell = days.setdefault(itype, {}).setdefault(day, dict.fromkeys(("guaranteed", "admitted", "busy"), Decimal(0)))
        for measure, value in step_values.items():
            sums[measure] += value
            if measure in cell:
                cell[measure] += value
    return sums


def _hours(sums, itype, step):
    """GPU-hours of each of ``sums`` (GPUs summed over steps of ``step`` seconds), and the admitted instance-hours."""
    hours = dict((m, gpu_hours(v * step / 3600)) for m, v in sums.items())
    per_instance = chargeback.ACCELERATORS.get(itype)
    hours["instance_hours"] = gpu_hours(sums["admitted"] * step / 3600 / per_instance) if per_instance else None
    return hours


def counter_increase(series):
    """How much a counter grew over its points, a drop counted as a reset (Prometheus' rule)."""
    values = [Decimal(series[t]) for t in sorted(series)]
    grown = Decimal(0)
    for before, after in zip(values, values[1:]):
        grown += after - before if after >= before else after
    return int(grown)


def read_month(query, teams, capacity, period, step=DEFAULT_STEP):
    """Ask every query of QUERIES for the month through ``query`` (an AmpQuery) and collect the answers."""
    start, end, _points = range_of(period, step)
    # A counter's increase needs its value just before the month: that query starts one step earlier.
    answers = dict((name, query.range(text, start - step if name == "workloads" else start, end, step)) for name, text in QUERIES.items())
    return collect(answers, teams, capacity, period, step)


def chargeback_usage(usage):
    """{team: {instance type: admitted instance-hours}}: what ``chargeback.compute(usage=…)`` splits by."""
    return dict(
        (team, dict((itype, h["instance_hours"]) for itype, h in by_type.items() if h["instance_hours"]))
        for team, by_type in usage["teams"].items()
        if any(h["instance_hours"] for h in by_type.values())
    )


# --- the quota advisor -------------------------------------------------------------------------


def concurrent_use(answer, teams, capacity, start, points, step):
    """{(team, itype): [instances in use at each step]} from an ``admitted`` answer (absent points are 0)."""
    by_queue, _ns = _team_maps(teams)
    use = {}
    for labels, series in answer:
        team, itype = by_queue.get(labels.get("cluster_queue")), labels.get("flavor")
        if team is None or itype not in capacity or itype not in chargeback.ACCELERATORS:
            continue
        values = _points(series, start, points, step)
        per_instance = chargeback.ACCELERATORS[itype]
        use[(team, itype)] = [values.get(t, Decimal(0)) / per_instance for t in range(start, start + points * step, step)]
    return use


def percentile(values, fraction):
    """The nearest-rank percentile (the smallest value with at least ``fraction`` of the values at or below it)."""
    ordered = sorted(values)
    rank = max(int((Decimal(fraction) * len(ordered)).to_integral_value(rounding="ROUND_CEILING")), 1)
    return ordered[rank - 1]


def advise(use, teams, capacity, high=Decimal("0.95")):
    """Each team's proposed quota from its concurrent use: guaranteed count, borrow limit, and whether it fits.

    Guaranteed instances of a type: the median of the team's concurrent use, rounded half up to a whole
    instance (a quota's ``count`` is an integer). Borrow limit (percent of the guaranteed, the team
    file's ``quota.borrow_limit``, one for all types): the most, over the team's types, that its
    ``high`` percentile exceeds the proposed guaranteed count, rounded up to a whole percent (none proposed,
    so the current one stays, when it never does or when a type's guarantee would be 0). The
    proposals of a type must fit the cluster's capacity; if they do not, ``problems`` says so and the
    proposal is left for a person to settle.
    """
    proposals, problems = {}, []
    present = [t for t in teams if t.get("state", "present") == "present"]
    for team in present:
        name = team["name"]
        current = dict((r["instance_type"], r.get("count")) for r in (team.get("quota") or {}).get("resources") or [])
        counts, peaks, limit = {}, {}, 0
        for itype in sorted(set(current) | set(i for (t, i) in use if t == name)):
            series = use.get((name, itype)) or [Decimal(0)]
            median = Decimal(statistics.median(series)).to_integral_value(rounding=ROUND_HALF_UP)
            peak = Decimal(percentile(series, high)).quantize(HOURS, rounding=ROUND_HALF_UP)
            counts[itype], peaks[itype] = int(median), peak
            if peak > median:
                if median == 0:
                    problems.append("team %r: uses %s up to %s instances (p%d) with a proposed guarantee of 0; a borrow limit in "
                                    "percent cannot express it" % (name, itype, peak, int(high * 100)))
                else:
                    limit = max(limit, int(((peak - median) * 100 / median).to_integral_value(rounding="ROUND_CEILING")))
        sharing = (team.get("quota") or {}).get("sharing", "lend_and_borrow")
        proposals[name] = {
            "counts": counts, "peaks": peaks, "current": current,
            "borrow_limit": limit if sharing == "lend_and_borrow" and limit else None,
            "current_borrow_limit": (team.get("quota") or {}).get("borrow_limit"),
        }
    for itype, instances in sorted(capacity.items()):
        total = sum(p["counts"].get(itype, 0) for p in proposals.values())
        if total > instances:
            problems.append("proposed guarantees of %s add up to %d instances, more than the cluster's %d" % (itype, total, instances))
    return {"proposals": proposals, "problems": problems, "fits": not any("more than the cluster" in p for p in problems)}


def _team_block(lines, name):
    """(first, end) line indexes of the team ``name``'s list item in a team file, or None."""
    pattern = re.compile(r"^(\s*)- name:\s*['\"]?%s['\"]?\s*(#.*)?$" % re.escape(name))
    for index, line in enumerate(lines):
        match = pattern.match(line)
        if match:
            indent = len(match.group(1))
            end = index + 1
            while end < len(lines):
                stripped = lines[end].strip()
                current = len(lines[end]) - len(lines[end].lstrip())
                if stripped and not stripped.startswith("#") and current <= indent:
                    break
                end += 1
            return index, end
    return None


def _set_count(lines, first, end, itype, count):
    """Change the count of ``itype`` in quota.resources between the two lines (flow or block style); False if absent."""
    for index in range(first, end):
        if not re.search(r"instance_type:\s*['\"]?%s['\"]?" % re.escape(itype), lines[index]):
            continue
        for candidate in range(index, min(index + 6, end)):
            if re.search(r"\bcount:\s*\d+", lines[candidate]):
                lines[candidate] = re.sub(r"\bcount:\s*\d+", "count: %d" % count, lines[candidate], count=1)
                return True
    return False


def quota_diff(text, advice, path="group_vars/all/teams.yml"):
    """A unified diff of the team file with the advised counts and borrow limits, for a person to apply.

    Only ``count`` of existing ``quota.resources`` entries and ``borrow_limit`` lines are changed (a
    ``borrow_limit`` is added after ``sharing`` when missing); what cannot be placed is returned in
    ``unplaced`` instead. The file itself is never written.
    """
    lines = text.splitlines(True)
    unplaced = []
    for name, proposal in sorted(advice["proposals"].items()):
        block = _team_block(lines, name)
        if block is None:
            unplaced.append("team %r: not found in %s" % (name, path))
            continue
        first, end = block
        for itype, count in sorted(proposal["counts"].items()):
            if proposal["current"].get(itype) == count:
                continue
            if not _set_count(lines, first, end, itype, count):
                unplaced.append("team %r: add quota.resources {instance_type: %s, count: %d}" % (name, itype, count))
        limit = proposal["borrow_limit"]
        if limit is None or limit == proposal["current_borrow_limit"]:
            continue
        found = [i for i in range(first, end) if re.match(r"^\s*borrow_limit:\s*\d+", lines[i])]
        if found:
            lines[found[0]] = re.sub(r"borrow_limit:\s*\d+", "borrow_limit: %d" % limit, lines[found[0]], count=1)
            continue
        sharing = [i for i in range(first, end) if re.match(r"^\s*sharing:", lines[i])]
        if sharing:
            indent = lines[sharing[0]][: len(lines[sharing[0]]) - len(lines[sharing[0]].lstrip())]
            lines.insert(sharing[0] + 1, "%sborrow_limit: %d\n" % (indent, limit))
        else:
            unplaced.append("team %r: set quota.borrow_limit: %d" % (name, limit))
    # git's a/ b/ prefixes for a path relative to where the diff is applied (patch -p1); an absolute path as is (patch -p0).
    before, after = (path, path) if path.startswith("/") else ("a/" + path, "b/" + path)
    diff = "".join(difflib.unified_diff(text.splitlines(True), lines, before, after))
    return diff, unplaced
