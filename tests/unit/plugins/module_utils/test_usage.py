"""The usage reader's arithmetic, its answers' checks, the quota advisor and its team-file diff."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import chargeback as cb
from ansible_collections.hyperpod.tenancy.plugins.module_utils import usage as us
from botocore.exceptions import EndpointConnectionError

P5, G5 = "ml.p5.48xlarge", "ml.g5.12xlarge"
CAPACITY = {P5: 8, G5: 6}
TEAMS = [
    {"name": "vision", "quota": {"resources": [{"instance_type": P5, "count": 4}], "sharing": "lend_and_borrow", "borrow_limit": 50}},
    {"name": "nlp", "quota": {"resources": [{"instance_type": P5, "count": 3}], "sharing": "lend_and_borrow"}},
]


def test_percentile_is_nearest_rank():
    values = list(range(1, 101))
    assert us.percentile(values, Decimal("0.95")) == 95
    assert us.percentile(values, Decimal("0.5")) == 50
    assert us.percentile([7], Decimal("0.95")) == 7
    assert us.percentile([1, 2, 3, 4], Decimal("0.95")) == 4  # rank ceil(3.8) = 4


def test_a_counter_drop_is_a_reset():
    assert us.counter_increase({0: "2", 1: "5", 2: "1", 3: "3"}) == 3 + 1 + 2
    assert us.counter_increase({0: "4"}) == 0


def test_the_period_must_split_into_whole_steps():
    period = cb.month_period("2026-02")
    assert us.range_of(period, 3600) == (1769904000, 1772323200, 672)
    assert us.range_of(period, 3600, weeks=1)[2] == 168
    with pytest.raises(us.UsageError, match="whole steps"):
        us.range_of(period, 5 * 3600)  # 672 h is not a multiple of 5 h


@pytest.mark.parametrize(
    "status, body, message",
    [
        (400, json.dumps({"status": "error", "errorType": "bad_data", "error": "parse error"}), "HTTP 400 \\(bad_data: parse error\\)"),
        (403, json.dumps({"__type": "AccessDeniedException", "message": "no aps:QueryMetrics"}), "AccessDeniedException: no aps:QueryMetrics"),
        (502, "<html>bad gateway</html>", "no JSON"),
        (200, json.dumps({"status": "success", "data": {"resultType": "vector", "result": []}}), "a vector, not a matrix"),
    ],
)
def test_an_answer_that_is_not_a_matrix_is_refused(status, body, message):
    with pytest.raises(us.UsageError, match=message):
        us.parse_matrix(status, body, "up")


def test_a_value_that_is_not_a_number_is_refused():
    answers = {"guaranteed": [({"cluster_queue": "hyperpod-ns-vision-clusterqueue", "flavor": P5}, {1769904000: "NaN"})],
               "admitted": [], "busy": [], "workloads": []}
    with pytest.raises(us.UsageError, match="answered NaN at 1769904000"):
        us.collect(answers, TEAMS, CAPACITY, cb.month_period("2026-02"), step=3600)


class _Answer:
    def __init__(self, status, body):
        self.status_code, self.content = status, body


def test_throttling_is_retried_then_the_answer_is_read():
    query = us.AmpQuery("https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-1/api/v1/query_range", None, "us-east-1", sleep=lambda s: None)
    answers = [_Answer(429, "{}"), _Answer(503, "{}"),
               _Answer(200, json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {"a": "b"}, "values": [[0, "1"]]}]}}))]
    sent = []
    query._send = lambda form: sent.append(form) or answers.pop(0)
    assert query.range("up", 0, 3600, 3600) == [({"a": "b"}, {0: "1"})]
    assert len(sent) == 3 and sent[0] == {"query": "up", "start": "0", "end": "3600", "step": "3600s"}


def test_an_endpoint_that_does_not_answer_is_an_error_naming_it():
    query = us.AmpQuery("http://127.0.0.1:9/workspaces/ws-1/api/v1/query_range", None, "us-east-1", attempts=2, sleep=lambda s: None)

    def refused(form):
        raise EndpointConnectionError(endpoint_url=query.url)

    query._send = refused
    with pytest.raises(us.UsageError, match="127.0.0.1:9/workspaces/ws-1/api/v1/query_range did not answer"):
        query.range("up", 0, 3600, 3600)


def test_the_query_url_is_amps_or_the_endpoints():
    assert us.query_url("eu-west-1", "ws-1") == "https://aps-workspaces.eu-west-1.amazonaws.com/workspaces/ws-1/api/v1/query_range"
    assert us.query_url("eu-west-1", "ws-1", "http://127.0.0.1:5055/") == "http://127.0.0.1:5055/workspaces/ws-1/api/v1/query_range"


def test_proposals_above_the_capacity_are_reported_not_settled():
    use = {("vision", P5): [Decimal(5)] * 10, ("nlp", P5): [Decimal(4)] * 10}
    advice = us.advise(use, TEAMS, CAPACITY)
    assert advice["proposals"]["vision"]["counts"] == {P5: 5} and advice["proposals"]["nlp"]["counts"] == {P5: 4}
    assert not advice["fits"]
    assert advice["problems"] == ["proposed guarantees of ml.p5.48xlarge add up to 9 instances, more than the cluster's 8"]


def test_the_borrow_limit_reaches_towards_the_high_percentile():
    use = {("vision", P5): [Decimal(2)] * 6 + [Decimal(3)] * 4}  # median 2, p95 3: borrow 50 %
    advice = us.advise(use, TEAMS[:1], CAPACITY)
    assert advice["proposals"]["vision"]["counts"] == {P5: 2}
    assert advice["proposals"]["vision"]["borrow_limit"] == 50
    assert advice["fits"]


BLOCK_STYLE = """---
hyperpod_teams:
  - name: vision
    quota:
      resources:
        - instance_type: ml.p5.48xlarge
          count: 4
      sharing: lend_and_borrow
  - name: nlp  # the language team
    quota:
      resources:
        - {instance_type: ml.p5.48xlarge, count: 3}
      sharing: lend_and_borrow
      borrow_limit: 10
"""


def test_the_diff_changes_counts_and_limits_in_either_style_and_names_what_it_cannot_place():
    advice = {"proposals": {
        "vision": {"counts": {P5: 2, G5: 1}, "current": {P5: 4}, "borrow_limit": 50, "current_borrow_limit": None},
        "nlp": {"counts": {P5: 3}, "current": {P5: 3}, "borrow_limit": 30, "current_borrow_limit": 10},
        "audio": {"counts": {P5: 1}, "current": {}, "borrow_limit": None, "current_borrow_limit": None},
    }}
    diff, unplaced = us.quota_diff(BLOCK_STYLE, advice, "teams.yml")
    changed = [line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == ["-          count: 4", "+          count: 2", "+      borrow_limit: 50", "-      borrow_limit: 10", "+      borrow_limit: 30"]
    assert unplaced == ["team 'audio': not found in teams.yml", "team 'vision': add quota.resources {instance_type: ml.g5.12xlarge, count: 1}"]
    assert diff.startswith("--- a/teams.yml\n+++ b/teams.yml\n")


def test_nothing_to_change_is_an_empty_diff():
    advice = {"proposals": {"nlp": {"counts": {P5: 3}, "current": {P5: 3}, "borrow_limit": None, "current_borrow_limit": 10}}}
    assert us.quota_diff(BLOCK_STYLE, advice) == ("", [])
