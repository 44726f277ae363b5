"""The usage reader against the sandbox's AMP query API, which forwards to a real Prometheus.

The Prometheus (Debian's package) serves the month of tests/integration/usage_month.py, backfilled with
promtool; the reader signs its requests with SigV4 for ``aps`` exactly as it would for AWS and reads the
workspace's URL on the sandbox's endpoint. Every figure is compared with the ones worked out by hand.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import chargeback
from ansible_collections.hyperpod.tenancy.plugins.module_utils import usage as us
from botocore.credentials import Credentials
from botocore.httpsession import URLLib3Session

from sandbox.client import SANDBOX_CREDENTIALS
from tests.integration.usage_month import CAPACITY, EXPECTED, MONTH, TEAMS, WORKLOADS

CREDENTIALS = Credentials(SANDBOX_CREDENTIALS["AWS_ACCESS_KEY_ID"], SANDBOX_CREDENTIALS["AWS_SECRET_ACCESS_KEY"])
REGION = "us-east-1"


def _reader(sandbox, workspace_id, credentials=CREDENTIALS, region=REGION):
    return us.AmpQuery(us.query_url(region, workspace_id, sandbox.endpoint), credentials, region)


def test_the_month_read_through_amp_matches_the_hand_figures(sandbox, amp_workspace):
    sandbox.clear_requests()
    usage = us.read_month(_reader(sandbox, amp_workspace), TEAMS, CAPACITY, chargeback.month_period(MONTH), step=3600)
    assert usage["teams"] == EXPECTED
    assert usage["workloads"] == WORKLOADS
    assert usage["unknown"] == []
    # Per day and type: the sums of the days are the month's.
    for itype in CAPACITY:
        days = usage["days"][itype]
        assert len(days) == 28
        for measure in ("guaranteed", "admitted", "busy"):
            assert sum(day[measure] for day in days.values()) == sum(EXPECTED[t][i][measure] for t in EXPECTED for i in EXPECTED[t] if i == itype)
    # vision borrowed in the first fortnight: 48 GPUs x 24 h on day 1, 32 x 24 on day 28 (p5: + nlp's 8 x 24).
    assert usage["days"]["ml.p5.48xlarge"]["2026-02-01"]["admitted"] == Decimal(48 * 24 + 8 * 24)
    assert usage["days"]["ml.p5.48xlarge"]["2026-02-28"]["admitted"] == Decimal(32 * 24 + 8 * 24)
    # Only the AMP query API was asked, once per query, every one signed for aps.
    asked = [(r["service"], r["operation"], r["kind"], r["status"]) for r in sandbox.requests()]
    assert asked == [("amp", "QueryMetrics", "read", 200)] * len(us.QUERIES)


def test_a_team_missing_from_the_team_file_is_reported_not_charged(sandbox, amp_workspace):
    teams = [t for t in TEAMS if t["name"] != "vision"]
    usage = us.read_month(_reader(sandbox, amp_workspace), teams, CAPACITY, chargeback.month_period(MONTH), step=3600)
    assert "vision" not in usage["teams"]
    assert any("hyperpod-ns-vision-clusterqueue" in u for u in usage["unknown"])
    assert any("namespace=hyperpod-ns-vision" in u for u in usage["unknown"])


def _post(url, headers=None, body="query=up"):
    from botocore.awsrequest import AWSRequest

    request = AWSRequest(method="POST", url=url, data=body, headers=dict({"Content-Type": "application/x-www-form-urlencoded"}, **(headers or {})))
    return request


@pytest.mark.parametrize(
    "case, status, code",
    [
        ("unsigned", 403, "MissingAuthenticationTokenException"),
        ("unknown key", 403, "UnrecognizedClientException"),
        ("wrong secret", 403, "InvalidSignatureException"),
        ("signed for another service", 403, "InvalidSignatureException"),
        ("body changed after signing", 403, "InvalidSignatureException"),
        ("no such workspace", 404, "ResourceNotFoundException"),
    ],
)
def test_the_query_api_refuses_what_aws_refuses(sandbox, amp_workspace, case, status, code):
    import json

    from botocore.auth import SigV4Auth

    workspace = "ws-00000000-0000-0000-0000-000000000000" if case == "no such workspace" else amp_workspace
    request = _post(us.query_url(REGION, workspace, sandbox.endpoint, api="query"))
    credentials = {"unknown key": Credentials("AKIAUNKNOWN000000000", "x"), "wrong secret": Credentials(CREDENTIALS.access_key, "wrong")}.get(case, CREDENTIALS)
    if case != "unsigned":
        SigV4Auth(credentials, "execute-api" if case == "signed for another service" else "aps", REGION).add_auth(request)
    if case == "signed for another service":
        # The sandbox finds the service from the scope; keep it routed to AMP but signed for another one.
        request.headers["Authorization"] = request.headers["Authorization"].replace("/execute-api/", "/aps/")
    if case == "body changed after signing":
        request.data = "query=vector(1)"
    answer = URLLib3Session().send(request.prepare())
    assert answer.status_code == status, answer.content
    assert json.loads(answer.content)["__type"] == code


def test_a_signed_instant_query_reaches_prometheus(sandbox, amp_workspace):
    import json

    from botocore.auth import SigV4Auth

    at = 1769904000 + 10 * 3600  # hour 10 of the month
    request = _post(us.query_url(REGION, amp_workspace, sandbox.endpoint, api="query"), body="query=count(kube_node_labels)&time=%d" % at)
    SigV4Auth(CREDENTIALS, "aps", REGION).add_auth(request)
    answer = json.loads(URLLib3Session().send(request.prepare()).content)
    assert answer["status"] == "success"
    assert answer["data"]["result"][0]["value"][1] == "14"  # 8 p5 and 6 g5 nodes
