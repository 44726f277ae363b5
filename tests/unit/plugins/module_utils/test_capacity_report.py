"""The capacity report's pure part (issue 38): Kubernetes quantities read exactly, ClusterQueues to rows, the table.

The report against the API server's real ClusterQueues is test_capacity_report_kubernetes.py.
"""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import capacity_report, naming
from ansible_collections.hyperpod.tenancy.plugins.module_utils.capacity_report import amount, parse_quantity, queue_rows, report, shown, table
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError

GI = 2**30


@pytest.mark.parametrize(
    "text, value",
    [
        ("8", 8),
        (8, 8),
        ("500m", Fraction(1, 2)),
        ("1500m", Fraction(3, 2)),
        ("1.5", Fraction(3, 2)),
        (".5", Fraction(1, 2)),
        ("5.", 5),
        ("+2k", 2000),
        ("-1", -1),
        ("1M", 10**6),
        ("1Mi", 2**20),
        ("1Ki", 1024),
        ("2048Gi", 2048 * GI),
        ("1536Mi", Fraction(3, 2) * GI),
        ("1Ti", 1024 * GI),
        ("1E", 10**18),
        ("1Ei", 2**60),
        ("1e3", 1000),
        ("1E-3", Fraction(1, 1000)),
        ("25e+1", 250),
        ("100n", Fraction(1, 10**7)),
        ("12u", Fraction(12, 10**6)),
        ("0", 0),
    ],
)
def test_a_quantity_is_read_exactly(text, value):
    assert parse_quantity(text) == value
    assert isinstance(parse_quantity(text), Fraction)


def test_decimal_quantities_add_up_exactly():
    # Floats would give 0.30000000000000004.
    assert parse_quantity("0.1") + parse_quantity("0.2") == parse_quantity("300m") == Fraction(3, 10)


@pytest.mark.parametrize("text", ["", "Gi", "1GiB", "1gi", "1.2.3", "1 Gi", "e3", "1e", "1Ki3", "1e1.5", "ten", None, True, [1], 2.5, "1e5000", "1e-31"])
def test_what_is_no_quantity_is_refused(text):
    with pytest.raises(InputError, match="is not a Kubernetes quantity"):
        parse_quantity(text)


def test_a_queue_with_no_quantity_is_named():
    queue = p5_queue(status={"flavorsUsage": [{"name": "ml.p5.48xlarge", "resources": [{"name": "memory", "total": "4 TiB"}]}]})
    with pytest.raises(InputError, match=r"^ClusterQueue hyperpod-ns-vision-clusterqueue, flavor ml.p5.48xlarge, memory: '4 TiB' is not a Kubernetes"):
        queue_rows(queue)


def test_memory_is_in_gib_and_the_rest_as_counted():
    assert amount("memory", "2048Gi") == 2048
    assert amount("memory", "500Mi") == Fraction(500, 1024)
    assert amount("memory", "1G") == Fraction(10**9, GI)
    assert amount("ephemeral-storage", "10Gi") == amount("hugepages-1Gi", "10Gi") == 10
    assert amount("cpu", "500m") == Fraction(1, 2)
    assert amount("nvidia.com/gpu", "8") == 8
    assert amount("nvidia.com/mig-1g.10gb", 7) == 7
    assert amount("cpu", None) is None
    assert [capacity_report.unit(r) for r in ("memory", "cpu", "nvidia.com/gpu")] == ["GiB", "vCPU", "count"]


@pytest.mark.parametrize(
    "value, text",
    [(Fraction(96), "96"), (Fraction(1, 2), "0.5"), (Fraction(2, 3), "0.67"), (Fraction(500, 1024), "0.49"), (Fraction(121, 1), "121"),
     (Fraction(-3, 2), "-1.5"), (Fraction(1, 1000), "0"), (Fraction(-1, 1000), "0"), (Fraction(5, 1000), "0.01"), (Fraction(-5, 1000), "-0.01"), (None, "-")],
)  # fmt: skip
def test_the_table_shows_amounts_to_two_places(value, text):
    assert shown(value) == text


@pytest.mark.parametrize("team", ["vision", "ml-ops", "a", "x9-y8-z7"])
def test_the_queue_name_is_read_back_as_its_team(team):
    assert capacity_report.QUEUE_NAME.match(naming.cluster_queue(team)).group("team") == team


def p5_queue(team="vision", status=None):
    """A ClusterQueue as Task Governance writes it (sandbox/kube/task_governance.py), two flavors, with ``status``."""
    flavor = {"name": "ml.p5.48xlarge", "resources": [
        {"name": "cpu", "nominalQuota": 384, "borrowingLimit": 192, "lendingLimit": 384},
        {"name": "memory", "nominalQuota": "4Ti", "borrowingLimit": "2048Gi"},
        {"name": "nvidia.com/gpu", "nominalQuota": 16, "borrowingLimit": 8, "lendingLimit": 16},
    ]}  # fmt: skip
    g5 = {"name": "ml.g5.12xlarge", "resources": [{"name": "cpu", "nominalQuota": "48"}, {"name": "memory", "nominalQuota": "192Gi"},
                                                  {"name": "nvidia.com/gpu", "nominalQuota": "4"}]}  # fmt: skip
    return {
        "metadata": {"name": naming.cluster_queue(team)},
        "spec": {"cohort": "shared-pool", "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"], "flavors": [flavor, g5]}]},
        "status": status or {},
    }


STATUS = {
    "flavorsReservation": [{"name": "ml.p5.48xlarge", "resources": [
        {"name": "cpu", "total": "300", "borrowed": "0"}, {"name": "memory", "total": "5Ti", "borrowed": "1Ti"},
        {"name": "nvidia.com/gpu", "total": "20", "borrowed": "4"}]}],
    "flavorsUsage": [
        {"name": "ml.p5.48xlarge", "resources": [
            {"name": "cpu", "total": "288500m"}, {"name": "memory", "total": "4608Gi", "borrowed": "512Gi"},
            {"name": "nvidia.com/gpu", "total": "18", "borrowed": "2"}]},
        # A MIG slice the spec no longer names (the quota changed while it ran): a row of its own, guaranteed 0.
        {"name": "ml.p5.48xlarge-mig", "resources": [{"name": "nvidia.com/mig-1g.10gb", "total": "3", "borrowed": "3"}]},
    ],
    "pendingWorkloads": 5, "reservingWorkloads": 3, "admittedWorkloads": 2,
}  # fmt: skip


def test_a_queue_gives_a_row_per_flavor_and_resource_from_its_spec_and_status():
    rows = {(r["flavor"], r["resource"]): {k: r[k] for k in capacity_report.AMOUNTS} for r in queue_rows(p5_queue(status=STATUS))}

    assert rows == {
        ("ml.p5.48xlarge", "cpu"): dict(guaranteed=384, borrowing_limit=192, lending_limit=384, reserved=300, in_use=Fraction(577, 2), borrowed=0),
        ("ml.p5.48xlarge", "memory"): dict(guaranteed=4096, borrowing_limit=2048, lending_limit=None, reserved=5120, in_use=4608, borrowed=512),
        ("ml.p5.48xlarge", "nvidia.com/gpu"): dict(guaranteed=16, borrowing_limit=8, lending_limit=16, reserved=20, in_use=18, borrowed=2),
        ("ml.g5.12xlarge", "cpu"): dict(guaranteed=48, borrowing_limit=None, lending_limit=None, reserved=0, in_use=0, borrowed=0),
        ("ml.g5.12xlarge", "memory"): dict(guaranteed=192, borrowing_limit=None, lending_limit=None, reserved=0, in_use=0, borrowed=0),
        ("ml.g5.12xlarge", "nvidia.com/gpu"): dict(guaranteed=4, borrowing_limit=None, lending_limit=None, reserved=0, in_use=0, borrowed=0),
        ("ml.p5.48xlarge-mig", "nvidia.com/mig-1g.10gb"): dict(guaranteed=0, borrowing_limit=None, lending_limit=None, reserved=0, in_use=3, borrowed=3),
    }  # fmt: skip
    # The spec's order, then what only the status names.
    assert [(r["flavor"], r["resource"]) for r in queue_rows(p5_queue(status=STATUS))][-1] == ("ml.p5.48xlarge-mig", "nvidia.com/mig-1g.10gb")


def test_borrowed_is_the_usage_not_the_reservation_nor_the_total():
    """Kueue's ResourceUsage.borrowed of status.flavorsUsage: the reservation's borrowed (4 GPUs) and the use (18) differ."""
    [gpus] = [r for r in queue_rows(p5_queue(status=STATUS)) if r["resource"] == "nvidia.com/gpu" and r["flavor"] == "ml.p5.48xlarge"]
    assert (gpus["in_use"], gpus["borrowed"], gpus["reserved"]) == (18, 2, 20)


def test_every_task_governance_queue_is_reported_and_the_others_counted():
    others = [{"metadata": {"name": "batch-cq"}, "spec": {}}, {"metadata": {"name": "hyperpod-ns--clusterqueue"}}]
    queues = [p5_queue("vision", STATUS), p5_queue("ml-ops")] + others

    made = report(queues, teams=["vision", "research"])

    assert [(t["team"], t["cluster_queue"], t["in_team_files"]) for t in made["teams"]] == [
        ("ml-ops", "hyperpod-ns-ml-ops-clusterqueue", False),
        ("research", None, True),
        ("vision", "hyperpod-ns-vision-clusterqueue", True),
    ]
    vision = made["teams"][2]
    assert (vision["admitted_workloads"], vision["reserving_workloads"], vision["pending_workloads"], vision["cohort"]) == (2, 3, 5, "shared-pool")
    # A queue without a status yet (Kueue has not seen it) counts no workload.
    assert (made["teams"][0]["admitted_workloads"], made["teams"][0]["pending_workloads"]) == (0, 0)
    assert made["teams"][1]["resources"] == [] and made["teams"][1]["pending_workloads"] is None
    assert made["other_queues"] == ["batch-cq", "hyperpod-ns--clusterqueue"]
    # Without the team files' names, nothing is marked.
    assert {t["in_team_files"] for t in report(queues)["teams"]} == {None}
    # A queue whose spec the API server gives as null is a queue of no quota, not a crash.
    assert report([{"metadata": {"name": "hyperpod-ns-nlp-clusterqueue"}, "spec": None}])["teams"][0]["cohort"] is None


def test_the_returned_amounts_are_json_numbers():
    [team] = capacity_report.as_returned(report([p5_queue(status=STATUS)])["teams"])
    cpu = team["resources"][0]
    assert (cpu["in_use"], cpu["guaranteed"], cpu["borrowed"], cpu["lending_limit"]) == (288.5, 384, 0, 384)
    # JSON's whole numbers stay ints (no Decimal, no 384.0) and fractions are floats.
    assert isinstance(cpu["guaranteed"], int) and not isinstance(cpu["guaranteed"], bool) and isinstance(cpu["in_use"], float)
    assert team["resources"][1]["lending_limit"] is None


def test_the_table():
    queues = [p5_queue("vision", STATUS), {"metadata": {"name": "batch-cq"}}]
    made = report(queues, teams=["vision", "research"])
    lines = table(made["teams"], made["other_queues"])

    assert lines == [
        "team    flavor              resource                guaranteed  borrow limit  lend limit  reserved  in use  borrowed",
        "vision  ml.p5.48xlarge      cpu                            384           192         384       300   288.5         0",
        "vision  ml.p5.48xlarge      memory (GiB)                  4096          2048           -      5120    4608       512",
        "vision  ml.p5.48xlarge      nvidia.com/gpu                  16             8          16        20      18         2",
        "vision  ml.g5.12xlarge      cpu                             48             -           -         0       0         0",
        "vision  ml.g5.12xlarge      memory (GiB)                   192             -           -         0       0         0",
        "vision  ml.g5.12xlarge      nvidia.com/gpu                   4             -           -         0       0         0",
        "vision  ml.p5.48xlarge-mig  nvidia.com/mig-1g.10gb           0             -           -         0       3         3",
        "",
        "team      cluster queue                    admitted  reserving  pending",
        "research  -                                       -          -        -  no ClusterQueue hyperpod-ns-research-clusterqueue (no compute quota yet)",
        "vision    hyperpod-ns-vision-clusterqueue         2          3        5",
        "borrow limit - = no limit; lend limit - = all of guaranteed may be lent; in use includes borrowed",
        "1 other ClusterQueue(s), not Task Governance's: batch-cq",
    ]


def test_a_queue_of_no_team_in_the_files_is_marked():
    lines = table(report([p5_queue("legacy")], teams=["vision"])["teams"])
    assert [re.split(r"\s{2,}", line) for line in lines if line.startswith("legacy  hyperpod-ns")] == [
        ["legacy", "hyperpod-ns-legacy-clusterqueue", "0", "0", "0", "not in the team files"]
    ]


def test_a_cluster_without_team_queues_says_so():
    assert table([], ["batch-cq"]) == [
        "no ClusterQueue hyperpod-ns-<team>-clusterqueue on the cluster",
        "1 other ClusterQueue(s), not Task Governance's: batch-cq",
    ]
