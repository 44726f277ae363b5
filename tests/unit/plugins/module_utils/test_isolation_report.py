"""What people read of the isolation proof (isolation_report): a failing run's page opens on FAIL and names every
cross-team allow, cell not proven denied, Access Analyzer finding and denial of what a team needs before the matrix;
a passing one opens on PASS; what AWS and the team file gave is escaped; the matrix as text and the failure message.

The matrices are test_isolation_matrix's (the rendered policies, widened) and small ones built by hand.
"""

from __future__ import annotations

import copy
import re
from html.parser import HTMLParser

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import execution_role, isolation, isolation_report

from tests.unit.plugins.module_utils.sample_account import ACCOUNT, BUCKET, REGION, TEAMS
from tests.unit.plugins.module_utils.test_isolation_matrix import (
    ACTIONS,
    BUCKET_ARN,
    SHARED_WIDENINGS,
    WIDENINGS,
    _matrix,
    _principals,
    _rendered,
    _resources,
    _statement,
    _widened,
)

NLP_STUDIO = f"arn:aws:iam::{ACCOUNT}:role/hyperpod-nlp-studio-execution"
VISION_PODS = f"arn:aws:iam::{ACCOUNT}:role/hyperpod-vision-pods"
MATRIX_TABLE = "<table id='matrix'>"


def _cell(team, principal, arn, owner, kind, resource, action, decision="allowed", **extra):
    return dict(
        {"team": team, "principal": principal, "principal_arn": arn, "owner": owner, "resource_kind": kind, "resource": resource, "action": action},
        decision=decision,
        **extra,
    )


def _result(leaks=(), gaps=()):
    """A matrix as isolation.matrix returns it (keep_cells=False), its grid made from its leaks and gaps."""
    grid = {}
    for cell in list(leaks) + list(gaps):
        row = isolation_report._row(cell)
        counts = grid.setdefault(row, {"allowed": 0, "denied": 0, "teams": 1})
        counts["allowed" if cell["decision"] == "allowed" else "denied"] += 1
    summary = {"cells": 40, "cross_team_cells": 20, "shared_cells": 10, "principals": 3, "resources": 7, "shared_resources": 2}
    return {"cells": [], "grid": grid, "leaks": list(leaks), "gaps": list(gaps), "summary": dict(summary, leaks=len(leaks), gaps=len(gaps))}


WIDE_OPEN = _cell("nlp", "execution_role", NLP_STUDIO, "vision", "s3_objects", f"{BUCKET_ARN}/vision/*", "s3:GetObject")
BUCKET_POLICY = _cell(
    "nlp", "pod_identity", f"arn:aws:iam::{ACCOUNT}:role/hyperpod-nlp-pods", isolation.SHARED_OWNER, "shared_bucket", BUCKET_ARN, "s3:PutBucketPolicy"
)
UNPROVEN = _cell(
    "research",
    "permission_set",
    f"arn:aws:iam::{ACCOUNT}:role/AWSReservedSSO_hyperpod-research_x",
    "vision",
    "s3_listing",
    BUCKET_ARN,
    "s3:ListBucket",
    decision="unknown",
    why="IAM lacked the context key s3:prefix",
)
GAP = _cell("vision", "pod_identity", VISION_PODS, "vision", "s3_objects", f"{BUCKET_ARN}/vision/*", "s3:PutObject", decision="implicitDeny")
FINDING = {
    "team": "nlp",
    "principal": "execution_role",
    "principal_arn": NLP_STUDIO,
    "policy": "added-by-hand",
    "owner": "vision",
    "resource_kind": "s3_objects",
    "statements": [0, "ReadEverything"],
}
FALLBACK = f"nlp's execution_role ({NLP_STUDIO}): asked of IAM in full, as the evaluator cannot read its policies (unknown operator)"


def test_a_failing_page_opens_on_fail_and_names_every_leak_finding_gap_and_fallback_before_the_matrix():
    result = _result([WIDE_OPEN, UNPROVEN, BUCKET_POLICY], [GAP])
    page = isolation_report.render_html(result, [FINDING], [FALLBACK], now=0)
    body = page[page.index("<body>") :]
    # The verdict is the first thing in the body, in words, in the red banner, and in the window's title.
    assert body.startswith(
        "<body>\n<div class='verdict fail' role='status'>FAIL: 2 cross-team allows, 1 Access Analyzer finding, 1 cell not proven denied, "
        "1 denial of what a team needs.<p>Checked 1970-01-01 00:00 UTC: 3 teams, 3 principals, 7 resources (2 shared), 40 cells"
    )
    assert "<title>FAIL: Team isolation</title>" in page and ".verdict.fail{background:#b00020}" in page
    matrix = page.index(MATRIX_TABLE)
    sentences = [isolation_report.leak_sentence(c) for c in (WIDE_OPEN, UNPROVEN, BUCKET_POLICY)]
    sentences += [isolation_report.finding_sentence(FINDING), isolation_report.gap_sentence(GAP), FALLBACK]
    for sentence in sentences:
        assert 0 < page.index(sentence) < matrix, sentence
    assert page.index("What to do next") < matrix
    # The first allow's own SimulatePrincipalPolicy question, to find its statement.
    assert f"--policy-source-arn {NLP_STUDIO} --action-names s3:GetObject --resource-arns '{BUCKET_ARN}/vision/*'" in page
    # The matrix still highlights the rows with leaks.
    assert re.search(r"<tr class='leak'><td>nlp</td><td>execution_role</td><td>the 1 other team</td><td>s3_objects</td>", page)


def test_a_forwardable_sentence_names_the_principal_its_arn_the_action_the_owner_and_the_resource_set():
    assert isolation_report.leak_sentence(WIDE_OPEN) == (
        f"nlp's Studio execution role ({NLP_STUDIO}) can s3:GetObject on vision's S3 objects {BUCKET_ARN}/vision/*"
    )
    assert isolation_report.leak_sentence(BUCKET_POLICY) == (
        f"nlp's Pod Identity role (arn:aws:iam::{ACCOUNT}:role/hyperpod-nlp-pods) can s3:PutBucketPolicy on the platform's data bucket {BUCKET_ARN}"
    )
    assert isolation_report.finding_sentence(FINDING) == (
        f"IAM Access Analyzer says nlp's Studio execution role ({NLP_STUDIO}) has a policy, added-by-hand, that may grant access to "
        "vision's S3 objects (statements: 0, ReadEverything)"
    )
    page = isolation_report.render_html(_result([WIDE_OPEN]))
    # Text as it is in the file too: quotes are left alone between tags, so the sentence can be grepped and copied.
    assert isolation_report.leak_sentence(WIDE_OPEN) in page


def test_cells_not_proven_denied_are_worded_so_and_counted_apart_from_the_allows():
    result = _result([UNPROVEN])
    assert isolation_report.leak_sentence(UNPROVEN) == (
        f"research's Identity Center permission set role ({UNPROVEN['principal_arn']}) could not be proven denied s3:ListBucket "
        f"on vision's S3 prefix listing {BUCKET_ARN} (IAM lacked the context key s3:prefix)"
    )
    passed, said = isolation_report.verdict(result)
    assert not passed and said.startswith("FAIL: 0 cross-team allows, 0 Access Analyzer findings, 1 cell not proven denied,")
    page = isolation_report.render_html(result)
    assert "<td>could not be proven denied (IAM lacked the context key s3:prefix)</td>" in page
    assert "Cells not proven denied (1)" in page and "Cross-team allows (" not in page
    # Not an allow: the matrix's row and line say so, and the failure message too.
    assert "<tr class='unproven'><td>research</td>" in page
    line = next(line for line in isolation_report.matrix_lines(result)[1:] if line.startswith("research"))
    assert line.endswith("NOT PROVEN DENIED (1 action: vision: s3:ListBucket)") and "CROSS-TEAM ALLOW" not in line
    assert isolation_report.problem_lines(result) == [
        f"research's permission_set ({UNPROVEN['principal_arn']}) could not be proven denied s3:ListBucket on vision's s3_listing {BUCKET_ARN}"
        " (IAM lacked the context key s3:prefix)"
    ]
    # Without a reason, the words alone.
    bare = dict(UNPROVEN)
    del bare["why"]
    assert isolation_report.leak_sentence(bare).endswith(f"could not be proven denied s3:ListBucket on vision's S3 prefix listing {BUCKET_ARN}")


def test_the_leaks_are_grouped_by_principal():
    other = _cell("nlp", "execution_role", NLP_STUDIO, "research", "s3_objects", f"{BUCKET_ARN}/research/*", "s3:GetObject")
    page = isolation_report.render_html(_result([WIDE_OPEN, BUCKET_POLICY, other]))
    headings = re.findall(r"<h3 id='principal-\d+'>(.*?)</h3>", page)
    assert [h.split(" (")[0] for h in headings] == ["nlp's Studio execution role", "nlp's Pod Identity role"]
    studio = page.index(headings[0])
    pods = page.index(headings[1])
    # Both of the Studio role's cells under its heading, before the Pod Identity role's.
    assert studio < page.index(isolation_report.leak_sentence(WIDE_OPEN)) < pods
    assert studio < page.index(isolation_report.leak_sentence(other)) < pods < page.index(isolation_report.leak_sentence(BUCKET_POLICY))
    assert headings[0].endswith(": 2 cells on research, vision")


def test_a_passing_page_opens_on_pass_and_has_no_leak_section():
    grid = {
        ("nlp", "execution_role", "nlp", "s3_objects"): {"allowed": 3, "denied": 28, "teams": 1},
        ("nlp", "execution_role", isolation.OTHER_TEAMS, "s3_objects"): {"allowed": 0, "denied": 93, "teams": 3},
        ("vision", "pod_identity", isolation.SHARED_OWNER, "shared_bucket"): {"allowed": 0, "denied": 60, "teams": 1},
    }
    summary = {"cells": 212, "cross_team_cells": 93, "shared_cells": 60, "principals": 2, "resources": 5, "shared_resources": 1}
    # An evaluator fallback is no failure: it is listed, and the page still passes.
    page = isolation_report.render_html({"grid": grid, "leaks": [], "gaps": [], "summary": summary}, [], [FALLBACK], now=0)
    body = page[page.index("<body>") :]
    assert body.startswith(
        "<body>\n<div class='verdict pass' role='status'>PASS: no team principal can reach another team's resources or the platform's "
        "(0 cross-team allows, 0 Access Analyzer findings, 0 cells not proven denied, 0 denials of what a team needs)."
        "<p>Checked 1970-01-01 00:00 UTC: 2 teams, 2 principals, 5 resources (1 shared), 212 cells (93 across teams, 60 on shared resources).</p></div>"
    )
    assert "<title>PASS: Team isolation</title>" in page and ".verdict.pass{background:#1b5e20}" in page
    for section in ("verdict fail", "Cross-team allows (", "Cells not proven denied (", "Access Analyzer findings (", "Denials of what", "What to do next"):
        assert section not in page, section
    assert "class='leak'" not in page and page.index(FALLBACK) < page.index(MATRIX_TABLE)
    assert "<td>the 3 other teams</td>" in page


def test_a_finding_alone_fails_the_page():
    passed, said = isolation_report.verdict(_result(), [FINDING])
    assert not passed and said.startswith("FAIL: 0 cross-team allows, 1 Access Analyzer finding,")
    page = isolation_report.render_html(_result(), [FINDING])
    assert "verdict fail" in page and page.index(isolation_report.finding_sentence(FINDING)) < page.index(MATRIX_TABLE)


class _Markup(HTMLParser):
    """The tags and attributes a browser would read in a page."""

    def __init__(self):
        super().__init__()
        self.tags, self.attributes = set(), set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attributes.update((tag, name, value) for name, value in attrs if name not in ("class", "id", "href"))
        self.attributes.update((tag, name, re.sub(r"\d+$", "N", value or "")) for name, value in attrs if name in ("id", "href"))


def test_names_and_arns_from_aws_and_the_team_file_are_escaped():
    hostile = "<script>alert('team')</script>"
    arn = f'arn:aws:iam::{ACCOUNT}:role/x"><img src=x onerror=alert(1)>&amp;'
    leak = _cell(hostile, "execution_role", arn, "vision", "s3_objects", f"{BUCKET_ARN}/<b>vision</b>/*", "s3:GetObject")
    unproven = dict(UNPROVEN, owner=hostile, why="<i>no context</i>")
    gap = dict(GAP, team=hostile, owner=hostile, principal_arn=arn)
    finding = dict(FINDING, team=hostile, principal_arn=arn, policy="<svg onload=alert(1)>", statements=["<u>sid</u>"])
    page = isolation_report.render_html(_result([leak, unproven], [gap]), [finding], ["<marquee>fallback</marquee>"], title="<blink>title</blink>")
    markup = _Markup()
    markup.feed(page)
    # Only the page's own markup: none of the values became a tag or an attribute.
    assert markup.tags == {
        "html",
        "head",
        "meta",
        "title",
        "style",
        "body",
        "div",
        "p",
        "h1",
        "h2",
        "h3",
        "ul",
        "li",
        "a",
        "table",
        "tr",
        "th",
        "td",
        "ol",
        "b",
        "code",
    }
    assert markup.attributes == {
        ("html", "lang", "en"),
        ("meta", "charset", "utf-8"),
        ("div", "role", "status"),
        ("h3", "id", "principal-N"),
        ("a", "href", "#principal-N"),
        ("table", "id", "matrix"),
    }
    for raw in (hostile, arn, "<b>vision</b>", "<i>no context</i>", "<svg", "<u>sid</u>", "<marquee>", "<blink>"):
        assert raw not in page, raw
    assert "&lt;script&gt;alert('team')&lt;/script&gt;" in page and 'x"&gt;&lt;img src=x onerror=alert(1)&gt;&amp;amp;' in page


@pytest.mark.parametrize("name", ["bucket policy writes", "pods role: HyperPod cluster updates", "the lifecycle entry script by name"])
def test_a_widening_of_a_shared_resource_is_reported_on_it(name):
    assert name in SHARED_WIDENINGS
    widen, statement = WIDENINGS[name]
    policies = copy.deepcopy(_rendered())
    widen(policies, statement)
    shared = [c for c in _matrix(policies)["leaks"] if c["owner"] == isolation.SHARED_OWNER]
    assert shared
    assert "the teams' shared" in isolation_report.problem_lines({"leaks": shared, "gaps": []})[0]
    assert "on the platform's" in isolation_report.leak_sentence(shared[0])


def test_lifecycle_scripts_in_a_teams_prefix_are_reported_for_that_team():
    """Threat model (issue 36, case 3): a team named lifecycle, given the prefix the lifecycle scripts were kept under;
    its principals' failure message names the scripts."""
    team = "lifecycle"
    policies = {f"{team}/pod_identity": {"identity": [(execution_role.TEAM_DATA_POLICY, execution_role.team_data_policy(BUCKET, team))]}}
    principals = [{"id": f"{team}/pod_identity", "team": team, "kind": "pod_identity", "arn": f"arn:aws:iam::{ACCOUNT}:role/hyperpod-{team}-pods"}]
    places = isolation.shared_locations(BUCKET, [team], [f"{team}/"], [], [{"SourceS3Uri": f"s3://{BUCKET}/lifecycle/", "OnCreate": "on_create.sh"}])
    resources = isolation.team_resources(team, ACCOUNT, REGION, {"bucket": BUCKET}) + isolation.shared_resources({"s3_places": places}, ACCOUNT, REGION)
    leaks = isolation.matrix(principals, resources, isolation.local_decider(policies, ACCOUNT), ACTIONS)["leaks"]
    script = f"{BUCKET_ARN}/lifecycle/on_create.sh"
    lines = isolation_report.problem_lines({"leaks": leaks, "gaps": []})
    assert any("is allowed" in line and f"s3:PutObject on the teams' shared shared_objects {script}" in line for line in lines), lines
    page = isolation_report.render_html({"grid": {}, "leaks": leaks, "gaps": [], "summary": {}})
    assert f"can s3:PutObject on the platform's S3 objects {script}" in page


def test_the_page_names_the_leaks():
    policies = _rendered()
    policies["vision/permission_set"]["identity"].append(("oob", _statement("budgets:ModifyBudget", "*")))
    page = isolation_report.render_html(_matrix(policies))
    assert "class='leak'" in page and "budgets:ModifyBudget" in page
    assert page.index("can budgets:ModifyBudget on nlp's budget") < page.index(MATRIX_TABLE)


def test_a_matrix_without_its_cells_reads_the_same():
    policies = _widened("quota updates")
    policies["nlp/permission_set"]["identity"] = []  # every action nlp needs denied: gaps
    kept = isolation.matrix(_principals(), _resources(), isolation.local_decider(policies, ACCOUNT), ACTIONS)
    lean = isolation.matrix(_principals(), _resources(), isolation.local_decider(policies, ACCOUNT), ACTIONS, keep_cells=False)
    assert lean["cells"] == [] and kept["leaks"] and kept["gaps"]
    assert isolation_report.matrix_lines(lean) == isolation_report.matrix_lines(kept)
    assert isolation_report.render_html(lean, now=0) == isolation_report.render_html(kept, now=0)


def test_the_matrix_at_a_glance_grows_with_the_teams_not_their_square():
    """One line per principal and kind for all the other teams' resources together; a leak's line names its owner."""
    result = _matrix(_widened("quota updates"))
    lines = isolation_report.matrix_lines(result)[1:]
    rows = [line.split(None, 4) for line in lines]
    own_kinds = {r["kind"] for r in _resources() if r["team"] == "vision"}
    shared_kinds = {r["kind"] for r in _resources() if r.get("shared")}
    for principal in _principals():
        mine = [row for row in rows if row[:2] == [principal["team"], principal["kind"]]]
        expected = [principal["team"]] * len(own_kinds) + [isolation.OTHER_TEAMS] * len(own_kinds) + [isolation.SHARED_OWNER] * len(shared_kinds)
        assert sorted(row[2] for row in mine) == sorted(expected)
    others = len(TEAMS) - 1
    leak = [row for row in rows if row[:4] == ["vision", "permission_set", isolation.OTHER_TEAMS, "compute_quota"]]
    assert leak == [["vision", "permission_set", isolation.OTHER_TEAMS, "compute_quota", leak[0][4]]]
    assert leak[0][4].startswith(f"CROSS-TEAM ALLOW ({others} of ")
    assert leak[0][4].endswith(": " + ", ".join(f"{owner}: sagemaker:UpdateComputeQuota" for owner in TEAMS if owner != "vision") + ")")
    quiet = [row for row in rows if row[:4] == ["nlp", "permission_set", isolation.OTHER_TEAMS, "compute_quota"]]
    assert quiet[0][4] == f"denied on {others} other teams ({others * len(ACTIONS['compute_quota'])} actions)"
    page = isolation_report.render_html(result)
    assert f"the {others} other teams" in page and "nlp: sagemaker:UpdateComputeQuota" in page
    # Every one of the leaks, each before the matrix.
    for cell in result["leaks"]:
        assert page.index(isolation_report.leak_sentence(cell)) < page.index(MATRIX_TABLE)


def test_the_failure_message_names_leaks_gaps_and_findings():
    result = _result([WIDE_OPEN, BUCKET_POLICY], [GAP])
    assert isolation_report.problem_lines(result) + isolation_report.finding_lines({"findings": [FINDING]}) == [
        f"nlp's execution_role ({NLP_STUDIO}) is allowed s3:GetObject on vision's s3_objects {BUCKET_ARN}/vision/*",
        f"nlp's pod_identity (arn:aws:iam::{ACCOUNT}:role/hyperpod-nlp-pods) is allowed s3:PutBucketPolicy on the teams' shared shared_bucket {BUCKET_ARN}",
        f"vision's pod_identity ({VISION_PODS}) is denied s3:PutObject on its own s3_objects {BUCKET_ARN}/vision/*",
        f"Access Analyzer: nlp's execution_role ({NLP_STUDIO}) policy added-by-hand may grant access to vision's s3_objects (statements 0, ReadEverything)",
    ]
    # One line per principal and resource, its actions together; at most 50 lines.
    actions = isolation_report.problem_lines(_result([dict(WIDE_OPEN, action="s3:Action%d" % i) for i in range(53)]))
    assert actions == [f"nlp's execution_role ({NLP_STUDIO}) is allowed s3:Action0, s3:Action1, s3:Action2, s3:Action3, s3:Action4, "
                       f"s3:Action5, s3:Action6, s3:Action7, and 45 more on vision's s3_objects {BUCKET_ARN}/vision/*"]  # fmt: skip
    many = isolation_report.problem_lines(_result([dict(WIDE_OPEN, resource="%s/vision/%d" % (BUCKET_ARN, i)) for i in range(53)]))
    assert len(many) == 51 and many[-1] == "... and 3 more"
