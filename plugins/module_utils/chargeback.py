# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Chargeback arithmetic and rendering: pure functions, no AWS calls.

What a team costs in a month is

- its **own resources**: the month's cost of everything tagged ``<team tag>=<team>``
  (Cost Explorer, grouped by the team tag), plus
- its **share of the shared HyperPod cluster**. HyperPod nodes are billed under
  SageMaker (``Cluster:ml.*`` usage types), not as EC2 instances, so EKS split cost
  allocation by namespace does not split them. The cluster's cost per instance type
  (Cost Explorer, SageMaker cost grouped by usage type) is split

  - by **allocation**: the team's guaranteed quota of a type as a fraction of the
    cluster's capacity of that type (``count / capacity``), and
  - by **measured use**, when usage is given: the team's instance-hours of a type as a
    fraction of the capacity's instance-hours in the month (``hours / (capacity * hours in month)``);
    borrowed hours are the borrower's, and what no team used is the **idle** line.

What no team is charged is never spread: the cluster's cost no team's quota (or use)
covers is the **unallocated** line (named ``idle cluster capacity`` by measured use), untagged spend outside the cluster is the
**untagged** line, and tag values that are not a team in the team file get a line each.
Every line is rounded to cents and the unallocated line takes the rounding, so the
lines add up exactly: ``sum(team shares) + unallocated == cluster cost`` and
``sum(all lines) == the month's total``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import csv
import datetime
import io
import re
from decimal import ROUND_HALF_UP, Decimal

from ansible_collections.hyperpod.tenancy.plugins.module_utils import instance_types, text_table

CENT = Decimal("0.01")
ZERO = Decimal("0")
METHODS = ("allocation", "usage")
CLUSTER_USAGE_TYPE = re.compile(r"(?:^|-)Cluster:(ml\.[A-Za-z0-9.]+)$")
# Accelerators per instance (usage and the idle report turn GPU-hours into instance-hours with it): the collection's one
# table of instance types (instance_types, which names its sources).
ACCELERATORS = dict((itype, spec["accelerators"]) for itype, spec in instance_types.INSTANCE_TYPES.items() if spec["accelerators"])
UNALLOCATED_LINE = "unallocated cluster capacity"
IDLE_LINE = "idle cluster capacity"
COLOURS = {"own": "#1f77b4", "share": "#ff7f0e", "unallocated": "#9e9e9e"}


class ChargebackError(ValueError):
    """Input that cannot give a correct report; the message says which and why."""


def money(value):
    return Decimal(str(value)).quantize(CENT, rounding=ROUND_HALF_UP)


# --- the month ------------------------------------------------------------------


def month_period(month=None, today=None):
    """(label 'YYYY-MM', start 'YYYY-MM-01', end: the next month's first day, hours in the month).

    ``month`` defaults to the last full month before ``today`` (UTC).
    """
    if month is None:
        today = today or datetime.datetime.now(datetime.UTC).date()
        last = today.replace(day=1) - datetime.timedelta(days=1)
        year, number = last.year, last.month
    else:
        match = re.match(r"^(\d{4})-(\d{2})$", str(month))
        if not match or not 1 <= int(match.group(2)) <= 12:
            raise ChargebackError("month must be YYYY-MM (got %r)" % (month,))
        year, number = int(match.group(1)), int(match.group(2))
    start = datetime.date(year, number, 1)
    end = datetime.date(year + (number == 12), number % 12 + 1, 1)
    hours = calendar.monthrange(year, number)[1] * 24
    return {"month": start.strftime("%Y-%m"), "start": start.isoformat(), "end": end.isoformat(), "hours": hours}


# --- Cost Explorer requests and answers -------------------------------------------


def team_cost_request(period, tag_key="team", metric="UnblendedCost"):
    """GetCostAndUsage: the month's cost grouped by the team tag (the report's first call)."""
    return {
        "TimePeriod": {"Start": period["start"], "End": period["end"]},
        "Granularity": "MONTHLY",
        "Metrics": [metric],
        "GroupBy": [{"Type": "TAG", "Key": tag_key}],
    }


def cluster_cost_request(period, service="Amazon SageMaker", tag_key="team", metric="UnblendedCost"):
    """GetCostAndUsage: the month's SageMaker cost by usage type and team tag (the report's second call).

    Grouping by the tag too tells under which tag value the cluster's cost sits in the
    first call (untagged, or the tag of a platform team), so it is taken out of exactly
    that line and not counted twice.
    """
    return {
        "TimePeriod": {"Start": period["start"], "End": period["end"]},
        "Granularity": "MONTHLY",
        "Metrics": [metric],
        "Filter": {"Dimensions": {"Key": "SERVICE", "Values": [service]}},
        "GroupBy": [{"Type": "DIMENSION", "Key": "USAGE_TYPE"}, {"Type": "TAG", "Key": tag_key}],
    }


def check_periods(results_by_time, period):
    """Refuse an answer for another period than the one asked (the sandbox's seeded answers can be)."""
    for result in results_by_time:
        answered = result.get("TimePeriod") or {}
        start, end = answered.get("Start", "")[:10], answered.get("End", "")[:10]
        if start < period["start"] or end > period["end"] or not start or not end:
            raise ChargebackError(
                "Cost Explorer answered for %s to %s, the report asked for %s to %s" % (start or "?", end or "?", period["start"], period["end"])
            )


def _cells(results_by_time, metric):
    """[(keys, amount)] over the result's periods, each amount rounded to cents."""
    cells = []
    for result in results_by_time:
        for group in result.get("Groups") or []:
            value = (group.get("Metrics") or {}).get(metric) or {}
            unit = value.get("Unit", "USD")
            if unit != "USD":
                raise ChargebackError("Cost Explorer answered in %s for %s; the report is in USD" % (unit, group["Keys"]))
            cells.append((group["Keys"], money(value.get("Amount", "0"))))
    return cells


def _tag_value(key, tag_key):
    prefix = tag_key + "$"
    if not key.startswith(prefix):
        raise ChargebackError("unexpected group %r in the cost grouped by tag %r" % (key, tag_key))
    return key[len(prefix):]


def parse_tag_costs(results_by_time, tag_key="team", metric="UnblendedCost"):
    """{tag value: cost}; untagged cost is under ''. Cost Explorer's keys read ``<key>$<value>``."""
    costs = {}
    for keys, value in _cells(results_by_time, metric):
        name = _tag_value(keys[0], tag_key)
        costs[name] = costs.get(name, ZERO) + value
    return costs


def parse_cluster_costs(results_by_time, tag_key="team", metric="UnblendedCost"):
    """({instance type: cost}, {tag value: cost}) of HyperPod cluster instances.

    Cluster instances are the usage types ``<region>-Cluster:ml.<type>``; the second
    group key, when present, is the team tag (``''`` when the cluster is untagged).
    """
    by_type, by_tag = {}, {}
    for keys, value in _cells(results_by_time, metric):
        match = CLUSTER_USAGE_TYPE.search(keys[0])
        if not match:
            continue
        tag = _tag_value(keys[1], tag_key) if len(keys) > 1 else ""
        by_type[match.group(1)] = by_type.get(match.group(1), ZERO) + value
        by_tag[tag] = by_tag.get(tag, ZERO) + value
    return by_type, by_tag


# --- shares ---------------------------------------------------------------------------


def quota_instances(team):
    """{instance type: guaranteed instances} of a normalized team's quota.

    A guarantee in accelerators, vCPUs, memory or MIG partitions counts as the instances it takes: its largest share of
    an instance in any unit, vCPU and memory filled in by AWS's ratio when left out (instance_types.instance_equivalent),
    so 4 of a p5's 8 GPUs are half an instance and 7 ``mig-1g.10gb`` slices one GPU.
    """
    quota = {}
    for index, resource in enumerate(((team.get("quota") or {}).get("resources")) or []):
        itype = resource["instance_type"]
        try:
            share = instance_types.instance_equivalent(itype, resource)
        except ValueError as error:
            raise ChargebackError("team %r: quota.resources[%d]: %s" % (team["name"], index, error))
        count = Decimal(share.numerator) / Decimal(share.denominator)
        quota[itype] = quota.get(itype, ZERO) + count
    return quota


def allocation_shares(capacity, teams):
    """{team: {instance type: fraction of the type's capacity}} from guaranteed quotas."""
    shares, totals = {}, {}
    for team in teams:
        quota = quota_instances(team)
        for itype, count in quota.items():
            if itype not in capacity:
                raise ChargebackError("team %r has a quota of %s, which the cluster does not have" % (team["name"], itype))
            totals[itype] = totals.get(itype, ZERO) + count
        shares[team["name"]] = dict((itype, count / capacity[itype]) for itype, count in quota.items())
    for itype, total in sorted(totals.items()):
        if total > capacity[itype]:
            raise ChargebackError("quotas of %s add up to %s instances, more than the cluster's %d" % (itype, total, capacity[itype]))
    return shares


def usage_shares(capacity, usage, hours):
    """{team: {instance type: fraction of the capacity's instance-hours}} from measured use."""
    shares, totals = {}, {}
    for team, by_type in sorted((usage or {}).items()):
        shares[team] = {}
        for itype, used in sorted((by_type or {}).items()):
            used = Decimal(str(used))
            if itype not in capacity:
                raise ChargebackError("usage of team %r names %s, which the cluster does not have" % (team, itype))
            if used < 0:
                raise ChargebackError("usage of team %r on %s is negative" % (team, itype))
            available = Decimal(capacity[itype] * hours)
            shares[team][itype] = used / available
            totals[itype] = totals.get(itype, ZERO) + used
    for itype, used in sorted(totals.items()):
        if used > capacity[itype] * hours:
            raise ChargebackError(
                "usage of %s adds up to %s instance-hours, more than the cluster's %d x %d h" % (itype, used, capacity[itype], hours)
            )
    return shares


def split(cluster_costs, shares):
    """{team: cost} of the cluster, each team's share rounded to cents."""
    return dict(
        (team, sum((money(cluster_costs.get(itype, ZERO) * fraction) for itype, fraction in by_type.items()), ZERO))
        for team, by_type in shares.items()
    )


# --- the report -------------------------------------------------------------------------


def compute(period, tag_costs, cluster_costs, capacity, teams, usage=None, method="allocation", cluster_by_tag=None):
    """The month's chargeback: lines, totals and checks (amounts as Decimal).

    ``tag_costs``: {tag value: cost} ('' untagged); ``cluster_costs``: {instance type: cost};
    ``cluster_by_tag``: {tag value: cluster cost under it} (default: all untagged), taken
    out of those tag values' lines because the cluster is shared out instead;
    ``capacity``: {instance type: instances}; ``teams``: normalized teams (present ones
    are charged); ``usage``: {team: {instance type: instance-hours}} or None.
    """
    if method not in METHODS:
        raise ChargebackError("method must be one of %s" % ", ".join(METHODS))
    if method == "usage" and not usage:
        raise ChargebackError("method 'usage' needs usage data (instance-hours per team and instance type)")
    present = [t for t in teams if t.get("state", "present") == "present"]
    names = [t["name"] for t in present]
    unknown_usage = sorted(set(usage or {}) - set(names))
    if unknown_usage:
        raise ChargebackError("usage names teams that are not present in the team file: %s" % ", ".join(unknown_usage))
    cluster_costs = dict((k, money(v)) for k, v in cluster_costs.items())
    cluster_total = sum(cluster_costs.values(), ZERO)
    if cluster_by_tag is None:
        cluster_by_tag = {"": cluster_total}
    cluster_by_tag = dict((k, money(v)) for k, v in cluster_by_tag.items())
    if sum(cluster_by_tag.values(), ZERO) != cluster_total:
        by_tag_total = sum(cluster_by_tag.values(), ZERO)
        raise ChargebackError("the cluster's cost by tag (%s) differs from its cost by instance type (%s)" % (by_tag_total, cluster_total))
    tag_costs = dict((k, money(v)) for k, v in tag_costs.items())
    for value, amount in cluster_by_tag.items():
        tag_costs[value] = tag_costs.get(value, ZERO) - amount
    by_allocation = split(cluster_costs, allocation_shares(capacity, present))
    by_usage = split(cluster_costs, usage_shares(capacity, usage, period["hours"])) if usage else None
    chosen = by_usage if method == "usage" else by_allocation

    warnings = []
    uncovered = sorted(set(cluster_costs) - set(capacity))
    if uncovered:
        warnings.append("cluster cost of %s, which the cluster definition does not list, is unallocated" % ", ".join(uncovered))

    lines = []
    for name in names:
        own = money(tag_costs.get(name, ZERO))
        share = chosen.get(name, ZERO)
        lines.append(
            {
                "name": name,
                "kind": "team",
                "own": own,
                "share_allocation": by_allocation.get(name, ZERO),
                "share_usage": by_usage.get(name, ZERO) if by_usage is not None else None,
                "cluster_share": share,
                "total": own + share,
            }
        )
    for value in sorted(set(tag_costs) - set(names) - {""}):
        own = money(tag_costs[value])
        if own == 0 and value in cluster_by_tag:
            continue  # a platform tag that holds nothing but the cluster
        lines.append({"name": value, "kind": "other", "own": own, "share_allocation": ZERO, "share_usage": None, "cluster_share": ZERO, "total": own})
        warnings.append("cost tagged %r (%s USD) belongs to no present team" % (value, own))

    unallocated = {
        "allocation": cluster_total - sum(by_allocation.values(), ZERO),
        "usage": cluster_total - sum(by_usage.values(), ZERO) if by_usage is not None else None,
    }
    lines.append(
        {
            # By measured use, the cluster cost no team is charged is the capacity no workload was admitted to.
            "name": IDLE_LINE if method == "usage" else UNALLOCATED_LINE,
            "kind": "unallocated",
            "own": ZERO,
            "share_allocation": unallocated["allocation"],
            "share_usage": unallocated["usage"],
            "cluster_share": unallocated[method],
            "total": unallocated[method],
        }
    )
    untagged = money(tag_costs.get("", ZERO))
    negative = sorted(value or "(untagged)" for value, amount in tag_costs.items() if amount < 0)
    if negative:
        warnings.append(
            "Cost Explorer's cluster cost exceeds the tagged cost of %s: the two answers do not agree" % ", ".join(negative)
        )
    lines.append(
        {"name": "untagged, outside the cluster", "kind": "untagged", "own": untagged, "share_allocation": ZERO, "share_usage": None,
         "cluster_share": ZERO, "total": untagged}
    )

    grand_total = sum(tag_costs.values(), ZERO) + cluster_total
    team_lines = [line for line in lines if line["kind"] == "team"]
    totals = {
        "cluster": cluster_total,
        "own": sum((line["own"] for line in team_lines), ZERO),
        "cluster_share": sum((line["cluster_share"] for line in team_lines), ZERO),
        "teams": sum((line["total"] for line in team_lines), ZERO),
        "unallocated": unallocated[method],
        "untagged": untagged,
        "all": sum((line["total"] for line in lines), ZERO),
        "month": grand_total,
    }
    checks = {
        "cluster_reconciled": totals["cluster_share"] + totals["unallocated"] == cluster_total,
        "month_reconciled": totals["all"] == grand_total,
    }
    return {
        "month": period["month"],
        "start": period["start"],
        "end": period["end"],
        "hours": period["hours"],
        "currency": "USD",
        "method": method,
        "usage_available": by_usage is not None,
        "capacity": dict(capacity),
        "cluster_costs": cluster_costs,
        "lines": lines,
        "totals": totals,
        "checks": checks,
        "warnings": warnings,
    }


def plain(value):
    """The report with Decimal amounts as floats (for JSON and Ansible)."""
    if isinstance(value, dict):
        return dict((k, plain(v)) for k, v in value.items())
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, Decimal):
        return float(value)
    return value


# --- rendering -----------------------------------------------------------------------------

COLUMNS = (
    ("line", "name"),
    ("kind", "kind"),
    ("own_resources_usd", "own"),
    ("cluster_share_allocation_usd", "share_allocation"),
    ("cluster_share_usage_usd", "share_usage"),
    ("cluster_share_usd", "cluster_share"),
    ("total_usd", "total"),
)


def _fmt(value):
    return "" if value is None else "%.2f" % Decimal(value)


def to_csv(report):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["month", "method"] + [column[0] for column in COLUMNS])
    for line in report["lines"]:
        cells = [line[key] if key in ("name", "kind") else _fmt(line[key]) for key in (column[1] for column in COLUMNS)]
        writer.writerow([report["month"], report["method"]] + cells)
    return out.getvalue()


def _rows(report):
    header = ["Line", "Own resources", "Cluster share (allocation)", "Cluster share (usage)", "Total (%s)" % report["method"]]
    rows = [
        [line["name"], _fmt(line["own"]), _fmt(line["share_allocation"]), _fmt(line["share_usage"]) or "n/a", _fmt(line["total"])]
        for line in report["lines"]
    ]
    rows.append(["TOTAL", "", "", "", _fmt(report["totals"]["all"])])
    return header, rows


def to_markdown(report):
    header, rows = _rows(report)
    text = ["# Chargeback %s" % report["month"], ""]
    text.append(
        "Period %s to %s (exclusive), USD. Cluster cost %s, split by %s; unallocated capacity is its own line."
        % (report["start"], report["end"], _fmt(report["totals"]["cluster"]), report["method"])
    )
    text.append("")
    text.append("| " + " | ".join(header) + " |")
    text.append("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
    for row in rows:
        text.append("| " + " | ".join(row) + " |")
    for warning in report["warnings"]:
        text.append("")
        text.append("> warning: %s" % warning)
    return "\n".join(text) + "\n"


def to_table(report):
    """A fixed-width text table, to print at the end of a run."""
    header, rows = _rows(report)
    lines = ["Chargeback %s (USD, method %s)" % (report["month"], report["method"])]
    return lines + text_table.columns([header, None] + [[str(cell) for cell in row] for row in rows], left=(0,))


def _escape(text):
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def to_svg(report):
    """A stacked bar per team (own resources, cluster share) and one for unallocated capacity; inline SVG."""
    bars = [line for line in report["lines"] if line["kind"] in ("team", "unallocated")]
    top = max([float(line["total"]) for line in bars] + [1.0])
    bar_width, gap, left, height, base = 56, 34, 90, 360, 300
    width = left + len(bars) * (bar_width + gap) + gap
    scale = (base - 30) / top
    parts = [
        '<svg xmlns="http://www.w3.org/2000/svg" id="chargeback-chart" width="%d" height="%d" viewBox="0 0 %d %d" role="img">'
        % (width, height, width, height),
        "<title>Chargeback %s by team (USD)</title>" % _escape(report["month"]),
        '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333" stroke-width="1"/>' % (left - 10, base, width - 10, base),
    ]
    for tick in range(0, 5):
        value = top * tick / 4
        y = base - value * scale
        parts.append('<text x="%d" y="%.1f" font-size="11" text-anchor="end" fill="#333">%s</text>' % (left - 14, y + 4, "{:,.0f}".format(value)))
    for index, line in enumerate(bars):
        x = left + gap + index * (bar_width + gap) - gap // 2
        label = _escape(line["name"])
        if line["kind"] == "team":
            segments = (("own", float(line["own"])), ("share", float(line["cluster_share"])))
        else:
            segments = (("unallocated", float(line["total"])),)
        y = base
        parts.append('<g class="bar %s" data-name="%s" data-total="%s">' % (line["kind"], label, _fmt(line["total"])))
        for kind, value in segments:
            h = max(value * scale, 0)
            y -= h
            parts.append(
                '<rect class="%s" x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"><title>%s %s: %s USD</title></rect>'
                % (kind, x, y, bar_width, h, COLOURS[kind], label, kind, "%.2f" % value)
            )
        parts.append("</g>")
        parts.append(
            '<text x="%d" y="%.1f" font-size="10" text-anchor="middle" fill="#333">%s</text>'
            % (x + bar_width // 2, y - 4, "{:,.0f}".format(float(line["total"])))
        )
        short = "unallocated" if line["kind"] == "unallocated" else label[:14]
        parts.append('<text x="%d" y="%d" font-size="12" text-anchor="middle" fill="#111">%s</text>' % (x + bar_width // 2, base + 16, short))
    legend = (("own", "own resources"), ("share", "cluster share"), ("unallocated", "unallocated"))
    for index, (kind, text) in enumerate(legend):
        x = left + index * 150
        parts.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>' % (x, base + 34, COLOURS[kind]))
        parts.append('<text x="%d" y="%d" font-size="12" fill="#111">%s</text>' % (x + 18, base + 44, text))
    parts.append("</svg>")
    return "\n".join(parts)


def to_html(report):
    """A self-contained page: the chart (inline SVG), the table and the warnings; no external assets."""
    header, rows = _rows(report)
    table = ["<table>", "<thead><tr>" + "".join("<th>%s</th>" % _escape(h) for h in header) + "</tr></thead>", "<tbody>"]
    for row in rows:
        table.append("<tr>" + "".join(("<td>%s</td>" if i == 0 else '<td class="num">%s</td>') % _escape(c) for i, c in enumerate(row)) + "</tr>")
    table.append("</tbody></table>")
    warnings = "".join('<p class="warning">warning: %s</p>' % _escape(w) for w in report["warnings"])
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<title>Chargeback %(month)s</title>"
        "<style>body{font-family:sans-serif;margin:24px;color:#111;background:#fff}"
        "table{border-collapse:collapse;margin-top:16px}td,th{border:1px solid #ccc;padding:4px 8px}"
        "td.num{text-align:right;font-variant-numeric:tabular-nums}.warning{color:#a00}</style></head>"
        "<body><h1>Chargeback %(month)s</h1>"
        "<p>Period %(start)s to %(end)s (exclusive), USD. Cluster cost %(cluster)s split by %(method)s.</p>"
        "%(svg)s%(table)s%(warnings)s</body></html>\n"
    ) % {
        "month": _escape(report["month"]),
        "start": report["start"],
        "end": report["end"],
        "cluster": _fmt(report["totals"]["cluster"]),
        "method": report["method"],
        "svg": to_svg(report),
        "table": "\n".join(table),
        "warnings": warnings,
    }
