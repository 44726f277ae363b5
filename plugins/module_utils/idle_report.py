# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The idle-capacity report: per instance type and day, GPU-hours guaranteed, admitted, busy and idle.

From the usage reader's ``days`` (``usage.collect``) and the cluster's capacity:

- **capacity**: the type's instances x GPUs per instance x 24 h;
- **guaranteed**: the teams' nominal quotas; **admitted**: GPUs of admitted workloads (borrowed included);
  **busy**: GPUs actually busy (DCGM utilisation);
- **idle**: capacity no workload was admitted to (``capacity - admitted``), which the usage chargeback
  shows as its own line; **admitted, not busy**: ``admitted - busy``, GPUs held by workloads that left
  them idle.

Rendered as CSV, Markdown and a self-contained HTML page with an inline SVG chart per instance type (one
stacked bar per day: busy, admitted not busy, idle; the guaranteed GPU-hours as a line).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import io
from decimal import Decimal

from ansible_collections.hyperpod.tenancy.plugins.module_utils import chargeback

COLUMNS = ("day", "instance_type", "capacity", "guaranteed", "admitted", "busy", "idle", "admitted_not_busy")
COLOURS = {"busy": "#2ca02c", "admitted_not_busy": "#ff7f0e", "idle": "#9e9e9e", "guaranteed": "#1f3b73"}
LABELS = {"busy": "busy", "admitted_not_busy": "admitted, not busy", "idle": "idle (nothing admitted)", "guaranteed": "guaranteed"}


def rows(usage, capacity):
    """[{column: value}] per instance type and day, then a month line per type (``day`` = the month)."""
    out = []
    for itype in sorted(usage["days"]):
        per_day = chargeback.ACCELERATORS.get(itype, 0) * capacity.get(itype, 0) * 24
        month = dict.fromkeys(COLUMNS[2:], Decimal(0))
        for day, cell in sorted(usage["days"][itype].items()):
            row = {"day": day, "instance_type": itype, "capacity": Decimal(per_day)}
            row.update((k, cell[k]) for k in ("guaranteed", "admitted", "busy"))
            row["idle"] = row["capacity"] - row["admitted"]
            row["admitted_not_busy"] = row["admitted"] - row["busy"]
            out.append(row)
            for key in month:
                month[key] += row[key]
        out.append(dict(month, day=usage["month"], instance_type=itype))
    return out


def _fmt(value):
    return value if isinstance(value, str) else "%.2f" % value


def to_csv(report_rows):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in report_rows:
        writer.writerow([_fmt(row[c]) for c in COLUMNS])
    return out.getvalue()


def to_markdown(usage, report_rows):
    text = ["# Idle GPU capacity %s" % usage["month"], "",
            "GPU-hours per instance type and day, from the cluster's Prometheus workspace. Idle: capacity no workload "
            "was admitted to; admitted, not busy: GPUs held by workloads that left them idle.", ""]
    text.append("| " + " | ".join(COLUMNS) + " |")
    text.append("|" + "|".join(["---", "---"] + ["---:"] * (len(COLUMNS) - 2)) + "|")
    for row in report_rows:
        cells = [_fmt(row[c]) for c in COLUMNS]
        if row["day"] == usage["month"]:
            cells = ["**%s**" % c for c in cells]
        text.append("| " + " | ".join(cells) + " |")
    return "\n".join(text) + "\n"


def summary(report_rows, month):
    """Text lines: the month per instance type."""
    lines = ["Idle GPU capacity %s (GPU-hours)" % month]
    for row in report_rows:
        if row["day"] == month:
            lines.append("%s: capacity %s, guaranteed %s, admitted %s, busy %s, idle %s, admitted not busy %s" % tuple(
                [row["instance_type"]] + [_fmt(row[c]) for c in COLUMNS[2:]]))
    return lines


def _escape(text):
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def to_svg(itype, days):
    """One chart: a stacked bar per day (busy, admitted not busy, idle) and the guaranteed GPU-hours as a line."""
    bar_width, gap, left, top, base = 16, 6, 70, 30, 250
    width = left + len(days) * (bar_width + gap) + gap + 10
    scale_top = max([float(d["capacity"]) for d in days] + [1.0])
    scale = (base - top) / scale_top
    ident = "idle-chart-%s" % itype.replace(".", "-")
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" id="%s" class="idle-chart" data-instance-type="%s" width="%d" height="%d" role="img">'
             % (ident, _escape(itype), width, base + 60),
             "<title>GPU-hours per day, %s</title>" % _escape(itype),
             '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333" stroke-width="1"/>' % (left - 6, base, width - 6, base)]
    for tick in range(5):
        value = scale_top * tick / 4
        parts.append('<text x="%d" y="%.1f" font-size="11" text-anchor="end" fill="#333">%s</text>'
                     % (left - 10, base - value * scale + 4, "{:,.0f}".format(value)))
    points = []
    for index, day in enumerate(days):
        x = left + gap + index * (bar_width + gap)
        parts.append('<g class="day" data-day="%s" data-busy="%s" data-admitted="%s" data-idle="%s" data-guaranteed="%s">'
                     % (day["day"], _fmt(day["busy"]), _fmt(day["admitted"]), _fmt(day["idle"]), _fmt(day["guaranteed"])))
        y = float(base)
        for kind in ("busy", "admitted_not_busy", "idle"):
            h = max(float(day[kind]) * scale, 0.0)
            y -= h
            parts.append('<rect class="%s" x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"><title>%s %s: %s GPU-hours</title></rect>'
                         % (kind, x, y, bar_width, h, COLOURS[kind], day["day"], LABELS[kind], _fmt(day[kind])))
        parts.append("</g>")
        points.append("%d,%.1f" % (x + bar_width // 2, base - float(day["guaranteed"]) * scale))
        if index % 7 == 0:
            parts.append('<text x="%d" y="%d" font-size="10" text-anchor="middle" fill="#111">%s</text>' % (x + bar_width // 2, base + 14, day["day"][5:]))
    parts.append('<polyline class="guaranteed" points="%s" fill="none" stroke="%s" stroke-width="2"/>' % (" ".join(points), COLOURS["guaranteed"]))
    for index, kind in enumerate(("busy", "admitted_not_busy", "idle", "guaranteed")):
        x = left + index * 170
        parts.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>' % (x, base + 32, COLOURS[kind]))
        parts.append('<text x="%d" y="%d" font-size="12" fill="#111">%s</text>' % (x + 16, base + 41, LABELS[kind]))
    parts.append("</svg>")
    return "\n".join(parts)


def to_html(usage, report_rows):
    """A self-contained page: a chart per instance type, then the table; no external assets."""
    charts = []
    for itype in sorted(usage["days"]):
        days = [r for r in report_rows if r["instance_type"] == itype and r["day"] != usage["month"]]
        charts.append("<h2>%s</h2>\n%s" % (_escape(itype), to_svg(itype, days)))
    table = ["<table>", "<thead><tr>" + "".join("<th>%s</th>" % c for c in COLUMNS) + "</tr></thead>", "<tbody>"]
    for row in report_rows:
        css = ' class="month"' if row["day"] == usage["month"] else ""
        cells = [("<td>%s</td>" if i < 2 else '<td class="num">%s</td>') % _escape(_fmt(row[c])) for i, c in enumerate(COLUMNS)]
        table.append("<tr%s>%s</tr>" % (css, "".join(cells)))
    table.append("</tbody></table>")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Idle GPU capacity %(month)s</title>"
        "<style>body{font-family:sans-serif;margin:24px;color:#111;background:#fff}table{border-collapse:collapse;margin-top:16px}"
        "td,th{border:1px solid #ccc;padding:3px 6px}td.num{text-align:right;font-variant-numeric:tabular-nums}tr.month{font-weight:bold}</style>"
        "</head><body><h1>Idle GPU capacity %(month)s</h1>"
        "<p>GPU-hours per instance type and day, %(start)s to %(end)s (exclusive).</p>%(charts)s%(table)s</body></html>\n"
    ) % {"month": _escape(usage["month"]), "start": usage["start"], "end": usage["end"], "charts": "\n".join(charts), "table": "\n".join(table)}
