# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""What people read of the isolation proof (``isolation.matrix``, ``isolation.access_not_granted``): the page, the
matrix as text, the failure message.

The page opens on its verdict, in words and in a red or green banner, so that a failing run never looks like a passing
one; then, when it fails, every cross-team allow, every cell not proven denied, every Access Analyzer finding, every
denial of what a team needs and every evaluator fallback, each in a sentence a platform lead can forward to security,
and what to do next; the matrix at a glance comes last.

A cell of ``result["leaks"]`` has ``"decision": "allowed"``, or ``"unknown"`` when it could not be proven denied (IAM
lacked a context key, the evaluator could not read a policy), and may carry a ``"why"``. A resource is shown as the
matrix gives it, a set written with a wildcard (``arn:aws:s3:::bucket/vision/*``) included.

Team names and ARNs come from AWS and a team file: every one of them is escaped, and none is put in an attribute.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import html
import shlex
import time

from ansible_collections.hyperpod.tenancy.plugins.module_utils.isolation import OTHER_TEAMS, SHARED_OWNER, UNKNOWN

PRINCIPAL_NAMES = {
    "permission_set": "Identity Center permission set role",
    "execution_role": "Studio execution role",
    "pod_identity": "Pod Identity role",
}

# The resource kinds of isolation.actions_by_kind, as a platform lead names them; a kind not listed is shown as it is.
RESOURCE_NAMES = {
    "s3_objects": "S3 objects",
    "s3_listing": "S3 prefix listing",
    "domain": "SageMaker AI domain",
    "user_profile": "SageMaker AI user profile",
    "space": "SageMaker AI space",
    "app": "SageMaker AI app",
    "home_efs": "Studio home EFS file system",
    "compute_quota": "HyperPod compute quota",
    "budget": "budget",
    "access_entry": "EKS access entry",
    "permission_set": "Identity Center permission set",
    "role": "IAM role",
    "sso_role": "permission set role",
    "shared_bucket": "data bucket",
    "shared_objects": "S3 objects",
    "shared_listing": "S3 prefix listing",
    "eks_cluster": "EKS cluster",
    "eks_addon": "EKS add-on",
    "eks_pod_identity_association": "EKS Pod Identity association",
    "hyperpod_cluster": "HyperPod cluster",
    "cluster_scheduler_config": "HyperPod scheduler configuration",
    "fsx_file_system": "FSx file system",
    "fsx_association": "FSx data repository association",
    "grafana_workspace": "Grafana workspace",
    "amp_workspace": "Prometheus workspace",
    "amp_rule_groups_namespace": "Prometheus rule groups namespace",
    "amp_anomaly_detector": "Prometheus anomaly detector",
    "identity_center": "Identity Center instance",
    "identity_store": "Identity Center identity store",
    "identity_center_group": "Identity Center group",
    "platform_role": "platform IAM role",
    "platform_access_entry": "EKS access entry that is no team's",
    "platform_sso_role": "Identity Center role that is no team's",
}
_KIND_ORDER = ("permission_set", "execution_role", "pod_identity")

RERUN = "ansible-playbook playbooks/verify_isolation.yml -e hyperpod_isolation_report=isolation.html"


# --- words ------------------------------------------------------------------------------------------


def _text(value):
    # Text between tags only (no value ever goes into an attribute): <, > and & are what a browser reads as markup
    # there, and leaving quotes as they are keeps "nlp's" greppable in the file.
    return html.escape("%s" % (value,), quote=False)


def _plural(count, word, words=None):
    return "%d %s" % (count, word if count == 1 else (words or word + "s"))


def principal_name(kind):
    return PRINCIPAL_NAMES.get(kind, kind)


def resource_name(kind):
    return RESOURCE_NAMES.get(kind, kind)


def _whose(owner):
    return "the platform's" if owner == SHARED_OWNER else "%s's" % owner


def is_unknown(cell):
    return cell.get("decision") == UNKNOWN


def _unproven(cell):
    return "could not be proven denied (%s)" % cell["why"] if cell.get("why") else "could not be proven denied"


def _who(cell):
    return "%s's %s (%s)" % (cell["team"], principal_name(cell["principal"]), cell["principal_arn"])


def leak_sentence(cell):
    """One cell of ``result["leaks"]`` as a platform lead would forward it to security."""
    where = "on %s %s %s" % (_whose(cell["owner"]), resource_name(cell["resource_kind"]), cell["resource"])
    because = " (%s)" % cell["why"] if cell.get("why") else ""
    if is_unknown(cell):
        return "%s could not be proven denied %s %s%s" % (_who(cell), cell["action"], where, because)
    return "%s can %s %s%s" % (_who(cell), cell["action"], where, because)


def gap_sentence(cell):
    """One cell of ``result["gaps"]``: an action a team needs on its own resource, denied."""
    where = "on its own %s %s" % (resource_name(cell["resource_kind"]), cell["resource"])
    because = " (%s)" % cell["why"] if cell.get("why") else ""
    if is_unknown(cell):
        return "%s could not be proven allowed %s %s, which the team needs%s" % (_who(cell), cell["action"], where, because)
    return "%s is denied %s %s, which the team needs%s" % (_who(cell), cell["action"], where, because)


def _statements(finding):
    return ", ".join("%s" % (s,) for s in finding.get("statements") or [] if s is not None) or "not named"


def finding_sentence(finding):
    """One Access Analyzer finding (``isolation.access_not_granted``)."""
    return "IAM Access Analyzer says %s's %s (%s) has a policy, %s, that may grant access to %s %s (statements: %s)" % (
        finding["team"],
        principal_name(finding["principal"]),
        finding["principal_arn"],
        finding["policy"],
        _whose(finding["owner"]),
        resource_name(finding["resource_kind"]),
        _statements(finding),
    )


def verdict(result, findings=()):
    """(passed, the verdict in words): the counts that make a run fail, and what it covered."""
    unknown = sum(1 for cell in result["leaks"] if is_unknown(cell))
    allows, gaps = len(result["leaks"]) - unknown, len(result["gaps"])
    counts = "%s, %s, %s, %s" % (
        _plural(allows, "cross-team allow"),
        _plural(len(findings), "Access Analyzer finding"),
        _plural(unknown, "cell not proven denied", "cells not proven denied"),
        _plural(gaps, "denial of what a team needs", "denials of what a team needs"),
    )
    if allows or unknown or gaps or findings:
        return False, "FAIL: %s." % counts
    return True, "PASS: no team principal can reach another team's resources or the platform's (%s)." % counts


def _scope(result, now):
    summary = result.get("summary") or {}
    teams = set(team for team, unused_principal, unused_owner, unused_kind in result.get("grid") or {})
    teams.update(cell["team"] for cell in list(result["leaks"]) + list(result["gaps"]))
    return "Checked %s: %s, %s, %s (%d shared), %s (%d across teams, %d on shared resources)." % (
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(now)),
        _plural(len(teams), "team"),
        _plural(summary.get("principals", 0), "principal"),
        _plural(summary.get("resources", 0), "resource"),
        summary.get("shared_resources", 0),
        _plural(summary.get("cells", 0), "cell"),
        summary.get("cross_team_cells", 0),
        summary.get("shared_cells", 0),
    )


# --- the matrix at a glance -------------------------------------------------------------------------


def table(result):
    """team x principal x owner x resource kind -> allowed and denied cells, the other teams' resources in one row
    (owner OTHER_TEAMS, ``teams`` of them): the matrix at a glance."""
    return [
        dict(team=team, principal=principal, owner=owner, resource_kind=kind, **counts)
        for (team, principal, owner, kind), counts in sorted(result["grid"].items())
    ]


def _row(cell):
    owner = cell["owner"] if cell["owner"] in (SHARED_OWNER, cell["team"]) else OTHER_TEAMS
    return (cell["team"], cell["principal"], owner, cell["resource_kind"])


def _leaked_by_row(result, unknown=False):
    """row -> the leaked cells' "owner: action" (the action alone on a shared resource): the allowed ones, or with
    ``unknown`` the ones not proven denied."""
    found = {}
    for cell in result["leaks"]:
        if is_unknown(cell) != unknown:
            continue
        text = cell["action"] if cell["owner"] == SHARED_OWNER else "%s: %s" % (cell["owner"], cell["action"])
        listed = found.setdefault(_row(cell), [])
        if text not in listed:
            listed.append(text)
    return found


def _few(texts, limit):
    more = len(texts) - limit
    return ", ".join(texts[:limit]) + (", and %d more" % more if more > 0 else "")


def matrix_lines(result):
    """The matrix as text, one line per team principal x owner (the other teams together) x resource kind."""
    lines = ["%-12s %-15s %-12s %-15s %s" % ("team", "principal", "owner", "resource", "decision")]
    leaked, unproven = _leaked_by_row(result), _leaked_by_row(result, unknown=True)
    gapped = set(_row(c) for c in result["gaps"])
    for row in table(result):
        key = (row["team"], row["principal"], row["owner"], row["resource_kind"])
        if key in leaked or key in unproven:
            said = []
            if key in leaked:
                said.append("CROSS-TEAM ALLOW (%d of %d actions: %s)" % (row["allowed"], row["allowed"] + row["denied"], _few(leaked[key], 5)))
            if key in unproven:
                said.append("NOT PROVEN DENIED (%s: %s)" % (_plural(len(unproven[key]), "action"), _few(unproven[key], 5)))
            verdict_text = "; ".join(said)
        elif key in gapped:
            verdict_text = "NEEDED ACTION DENIED"
        elif row["owner"] == SHARED_OWNER:
            verdict_text = "shared: %d allowed (SHARED_ALLOWED), %d denied" % (row["allowed"], row["denied"])
        elif row["team"] == row["owner"]:
            verdict_text = "own: %d allowed, %d denied" % (row["allowed"], row["denied"])
        else:
            verdict_text = "denied on %d other teams (%d actions)" % (row["teams"], row["denied"])
        lines.append("%-12s %-15s %-12s %-15s %s" % (row["team"], row["principal"], row["owner"], row["resource_kind"], verdict_text))
    return lines


# --- the failure message ----------------------------------------------------------------------------


def problem_lines(result, limit=50):
    """One sentence per principal, resource and kind of decision (its actions together) for the leaks and gaps, the first
    ``limit``: the failure message, which a widening of one statement would otherwise fill with one resource's actions."""
    lines, grouped = [], {}
    for cell in result["leaks"]:
        whose = "the teams' shared" if cell["owner"] == SHARED_OWNER else "%s's" % cell["owner"]
        because = " (%s)" % cell["why"] if cell.get("why") else ""
        verb = "could not be proven denied" if is_unknown(cell) else "is allowed"
        key = (cell["team"], cell["principal"], cell["principal_arn"], verb, whose, cell["resource_kind"], cell["resource"], because)
        grouped.setdefault(key, []).append(cell["action"])
    for (team, principal, arn, verb, whose, kind, resource, because), actions in grouped.items():
        lines.append("%s's %s (%s) %s %s on %s %s %s%s" % (team, principal, arn, verb, _few(actions, 8), whose, kind, resource, because))
    for cell in result["gaps"]:
        lines.append(
            "%s's %s (%s) is denied %s on its own %s %s"
            % (cell["team"], cell["principal"], cell["principal_arn"], cell["action"], cell["resource_kind"], cell["resource"])
        )
    more = len(lines) - limit
    return lines[:limit] + (["... and %d more" % more] if more > 0 else [])


def finding_lines(found):
    """One sentence per Access Analyzer finding (``found``: ``isolation.access_not_granted``'s answer)."""
    return [
        "Access Analyzer: %s's %s (%s) policy %s may grant access to %s's %s (statements %s)"
        % (f["team"], f["principal"], f["principal_arn"], f["policy"], f["owner"], f["resource_kind"], _statements(f))
        for f in found["findings"]
    ]


# --- the page ---------------------------------------------------------------------------------------

_STYLE = (
    "body{font-family:sans-serif;margin:16px;color:#111;background:#fff}"
    ".verdict{padding:14px 18px;color:#fff;font-size:1.5em;font-weight:bold;margin:0 0 12px}"
    ".verdict.fail{background:#b00020}.verdict.pass{background:#1b5e20}"
    ".verdict p{font-size:0.6em;font-weight:normal;margin:6px 0 0}"
    "h2.fail{color:#b00020}"
    "table{border-collapse:collapse;margin:4px 0 16px}table.cells{width:100%}"
    "td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}"
    # An ARN is one long word: it wraps anywhere rather than push the table past the window.
    "td.words{overflow-wrap:anywhere;min-width:20em}"
    "td.arn{font-family:monospace;word-break:break-all}"
    ".leak{background:#fbb}.unproven{background:#fe9}.gap{background:#fdd}.own{color:#555}"
)
_LEAK_COLUMNS = ("team", "principal", "principal ARN", "whose resource", "kind", "resource", "action", "why", "in words")


def _cells(values, arn_columns=()):
    """The row's cells; the ARNs in ``arn_columns``, the sentence in the last column."""
    last = len(values) - 1

    def css(index):
        return " class='arn'" if index in arn_columns else (" class='words'" if index == last else "")

    return "".join("<td%s>%s</td>" % (css(index), _text(value)) for index, value in enumerate(values))


def _header(columns):
    return "<tr>%s</tr>" % "".join("<th>%s</th>" % _text(c) for c in columns)


def _by_principal(cells):
    """[((team, principal kind, principal ARN), [cells])], the principals in team and kind order."""
    groups = {}
    for cell in cells:
        groups.setdefault((cell["team"], cell["principal"], cell["principal_arn"]), []).append(cell)

    def order(key):
        team, kind, arn = key
        return (team, _KIND_ORDER.index(kind) if kind in _KIND_ORDER else len(_KIND_ORDER), kind, arn)

    return [(key, sorted(groups[key], key=lambda c: (c["owner"], c["resource_kind"], c["resource"], c["action"]))) for key in sorted(groups, key=order)]


def _why(cell):
    if is_unknown(cell):
        return _unproven(cell)
    return "allowed (%s)" % cell["why"] if cell.get("why") else "allowed"


def _leak_section(out, heading, groups, anchors):
    """A table per principal. ``anchors``: principal -> the id of its first heading, popped once given."""
    out.append("<h2 class='fail'>%s</h2>" % _text(heading))
    for (team, kind, arn), cells in groups:
        owners = sorted(set("the platform" if cell["owner"] == SHARED_OWNER else cell["owner"] for cell in cells))
        anchor = anchors.pop((team, kind, arn), None)
        out.append(
            "<h3%s>%s</h3>"
            % (
                " id='%s'" % anchor if anchor else "",
                _text("%s's %s (%s): %s on %s" % (team, principal_name(kind), arn, _plural(len(cells), "cell"), ", ".join(owners))),
            )
        )
        out.append("<table class='cells'>" + _header(_LEAK_COLUMNS))
        for cell in cells:
            whose = "the platform" if cell["owner"] == SHARED_OWNER else cell["owner"]
            values = (
                cell["team"],
                principal_name(cell["principal"]),
                cell["principal_arn"],
                whose,
                resource_name(cell["resource_kind"]),
                cell["resource"],
                cell["action"],
                _why(cell),
                leak_sentence(cell),
            )
            out.append("<tr class='%s'>%s</tr>" % ("unproven" if is_unknown(cell) else "leak", _cells(values, (2, 5))))
        out.append("</table>")


def _next_steps(out, result):
    # SimulatePrincipalPolicy's EvaluationResult lists the statements that decided it in MatchedStatements (IAM API
    # Reference, https://docs.aws.amazon.com/IAM/latest/APIReference/API_EvaluationResult.html). An AWSReservedSSO_ role is
    # changed through its permission set only: IAM answers "Cannot perform the operation on the protected role"
    # (https://repost.aws/knowledge-center/identity-center-aws-reserved-sso; "IAM roles created by IAM Identity Center",
    # IAM Identity Center User Guide).
    first = next((cell for cell in result["leaks"] if not is_unknown(cell)), None)
    out.append("<h2>What to do next</h2><ol>")
    out.append(
        "<li><b>Find the statement.</b> An Access Analyzer finding names the policy and its statements. For an allow, ask IAM "
        "which statement allows it: <code>aws iam simulate-principal-policy --policy-source-arn &lt;principal ARN&gt; "
        "--action-names &lt;action&gt; --resource-arns &lt;resource&gt;</code> names it in each result's MatchedStatements "
        "(IAM API Reference, SimulatePrincipalPolicy and EvaluationResult).</li>"
    )
    if first is not None:
        # Quoted for the shell, that copies it: a wildcard of a resource set stays one, and a key is no command.
        out.append(
            "<li>For the first allow above: <code>%s</code></li>"
            % _text(
                "aws iam simulate-principal-policy --policy-source-arn %s --action-names %s --resource-arns %s"
                % (shlex.quote(first["principal_arn"]), shlex.quote(first["action"]), shlex.quote(first["resource"]))
            )
        )
    out.append(
        "<li><b>Remove it.</b> From a Studio execution role or a Pod Identity role: delete the inline policy or detach the "
        "managed policy that holds the statement (or narrow the statement). From an Identity Center permission set role "
        "(AWSReservedSSO_...): change the permission set in IAM Identity Center, not the role, which IAM refuses to change "
        '(AWS re:Post, "How do I resolve the IAM error Cannot perform the operation on the protected role AWSReservedSSO"), '
        "and provision it again. A statement the collection rendered is a bug of the collection: report it with this page.</li>"
    )
    if any(is_unknown(cell) for cell in result["leaks"]):
        out.append(
            "<li><b>Cells not proven denied</b> count as leaks: the reason names the context key IAM lacked or the policy "
            "the evaluator could not read. Rewrite the statement so that its Resource element names its own team's "
            "resources, or report the evaluator's reason to the collection.</li>"
        )
    if result["gaps"]:
        out.append(
            "<li><b>Denials of what a team needs</b>: the team's members cannot work. Converge the team again "
            "(<code>ansible-playbook site.yml</code>) and look for a Deny or a permissions boundary added by hand.</li>"
        )
    out.append("<li><b>Run the proof again</b> until this page says PASS: <code>%s</code></li></ol>" % _text(RERUN))


def render_html(result, findings=(), fallbacks=(), title="Team isolation", now=None):
    """A page people can read: the verdict first, in a red or green banner; when failing, every cross-team allow (and
    cell not proven denied), grouped by principal, every Access Analyzer finding (``findings``,
    ``isolation.access_not_granted``'s), every denial of what a team needs, every evaluator fallback (``fallbacks``,
    ``witness_decider``'s) and what to do next; then the matrix at a glance, one row per team principal x owner x
    resource kind. Every cell is listed, however many: the page is a file, and security reads all of it. ``now``
    (epoch seconds) dates it, the current time by default. Self-contained: inline CSS, no script."""
    findings, fallbacks = list(findings or ()), list(fallbacks or ())
    passed, said = verdict(result, findings)
    allows = [cell for cell in result["leaks"] if not is_unknown(cell)]
    unknown = [cell for cell in result["leaks"] if is_unknown(cell)]
    groups = _by_principal(result["leaks"])
    anchors = dict((key, "principal-%d" % index) for index, (key, unused_cells) in enumerate(groups, 1))
    out = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>%s</title>" % _text("%s: %s" % ("PASS" if passed else "FAIL", title)),
        "<style>%s</style></head><body>" % _STYLE,
        "<div class='verdict %s' role='status'>%s<p>%s</p></div>" % ("pass" if passed else "fail", _text(said), _text(_scope(result, now))),
        "<h1>%s</h1>" % _text(title),
    ]
    if groups:
        out.append("<p>Principals that reach beyond their team:</p><ul>")
        for key, cells in groups:
            team, kind, arn = key
            counted = []
            allowed = sum(1 for cell in cells if not is_unknown(cell))
            if allowed:
                counted.append(_plural(allowed, "cross-team allow"))
            if len(cells) - allowed:
                counted.append(_plural(len(cells) - allowed, "cell not proven denied", "cells not proven denied"))
            out.append("<li><a href='#%s'>%s</a></li>" % (anchors[key], _text("%s's %s (%s): %s" % (team, principal_name(kind), arn, ", ".join(counted)))))
        out.append("</ul>")
    if allows:
        _leak_section(out, "Cross-team allows (%d)" % len(allows), _by_principal(allows), anchors)
    if unknown:
        _leak_section(out, "Cells not proven denied (%d)" % len(unknown), _by_principal(unknown), anchors)
    if findings:
        out.append("<h2 class='fail'>%s</h2><table class='cells'>" % _text("Access Analyzer findings (%d)" % len(findings)))
        out.append(_header(("team", "principal", "principal ARN", "policy", "whose resources", "kind", "statements", "in words")))
        for finding in sorted(findings, key=lambda f: (f["team"], f["principal"], f["principal_arn"], f["policy"], f["owner"], f["resource_kind"])):
            values = (
                finding["team"],
                principal_name(finding["principal"]),
                finding["principal_arn"],
                finding["policy"],
                "the platform" if finding["owner"] == SHARED_OWNER else finding["owner"],
                resource_name(finding["resource_kind"]),
                _statements(finding),
                finding_sentence(finding),
            )
            out.append("<tr class='leak'>%s</tr>" % _cells(values, (2, 3)))
        out.append("</table>")
    if result["gaps"]:
        out.append("<h2 class='fail'>%s</h2><table class='cells'>" % _text("Denials of what a team needs (%d)" % len(result["gaps"])))
        out.append(_header(("team", "principal", "principal ARN", "kind", "resource", "action", "in words")))
        for cell in [cell for unused_principal, cells in _by_principal(result["gaps"]) for cell in cells]:
            values = (
                cell["team"],
                principal_name(cell["principal"]),
                cell["principal_arn"],
                resource_name(cell["resource_kind"]),
                cell["resource"],
                cell["action"],
                gap_sentence(cell),
            )
            out.append("<tr class='gap'>%s</tr>" % _cells(values, (2, 4)))
        out.append("</table>")
    if fallbacks:
        # Not a failure by itself: IAM answered these principals in full, so their cells above are IAM's.
        out.append("<h2>%s</h2>" % _text("Evaluator fallbacks (%d)" % len(fallbacks)))
        out.append(
            "<p>IAM answered every cell of these principals, as the collection's evaluator disagreed with it on one of their cells "
            "or could not read one of their policies. Not a failure by itself: a difference worth reporting to the collection.</p><ul>"
        )
        out.extend("<li>%s</li>" % _text(line) for line in fallbacks)
        out.append("</ul>")
    if not passed:
        _next_steps(out, result)
    _matrix_section(out, result)
    out.append("</body></html>")
    return "\n".join(out)


def _matrix_section(out, result):
    leaked, unproven = _leaked_by_row(result), _leaked_by_row(result, unknown=True)
    gapped = set(_row(c) for c in result["gaps"])
    summary = dict({"cells": 0, "cross_team_cells": 0, "shared_cells": 0}, **(result.get("summary") or {}))
    out.append("<h2>The matrix at a glance</h2>")
    out.append(
        "<p>%d cells (%d across teams, %d on shared resources); %s; %s.</p>"
        % (
            summary["cells"],
            summary["cross_team_cells"],
            summary["shared_cells"],
            _plural(sum(1 for cell in result["leaks"] if not is_unknown(cell)), "cross-team allow"),
            _plural(len(result["gaps"]), "denial of what a team needs", "denials of what a team needs"),
        )
    )
    out.append(
        "<table id='matrix'><tr><th>team</th><th>principal</th><th>resources of</th><th>resource</th><th>allowed</th><th>denied</th>"
        "<th>cross-team allows</th><th>not proven denied</th></tr>"
    )
    for row in table(result):
        key = (row["team"], row["principal"], row["owner"], row["resource_kind"])
        if key in leaked:
            css = "leak"
        elif key in unproven:
            css = "unproven"
        elif key in gapped:
            css = "gap"
        else:
            css = "own" if row["team"] == row["owner"] else ""
        owner = "the %s" % _plural(row["teams"], "other team") if row["owner"] == OTHER_TEAMS else row["owner"]
        out.append(
            "<tr class='%s'><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%s</td><td>%s</td></tr>"
            % (
                css,
                _text(row["team"]),
                _text(row["principal"]),
                _text(owner),
                _text(row["resource_kind"]),
                row["allowed"],
                row["denied"],
                _text(_few(leaked.get(key, []), 50)),
                _text(_few(unproven.get(key, []), 50)),
            )
        )
    out.append("</table>")
