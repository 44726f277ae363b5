"""The month of cluster metrics the usage tests read, and what it must give, worked out by hand.

February 2026: 28 days, 672 hours. Capacity: 8 ml.p5.48xlarge (8 GPUs each, 64 GPUs) and
6 ml.g5.12xlarge (4 GPUs each, 24 GPUs). Guaranteed quotas fill both types exactly:

| team     | p5 quota | g5 quota | what ran                                                                   |
|----------|----------|----------|----------------------------------------------------------------------------|
| vision   | 4 (32)   |          | 6 p5 (48 GPUs) hours 0-336 (borrows 16 GPUs), 4 p5 hours 336-672; 75 % busy |
| nlp      | 3 (24)   | 2 (8)    | 1 p5 all month, 50 % busy; 4 g5 (16 GPUs) hours 0-168 (borrows 8), 100 %    |
| research |          | 4 (16)   | 2 g5 (8 GPUs) all month at 10 %: admitted, hardly busy (the team that idles) |
| audio    | 1 (8)    |          | nothing (the team with no jobs): its whole quota lent or idle               |

Kueue restarts at hour 300 (its counters drop to 0): vision admits 3 workloads at hour 0 and 2 at
hour 336, nlp 1 + 2 at hour 0, research 4 at hour 0.
"""

from __future__ import annotations

from decimal import Decimal

from sandbox.prometheus import Job, Scenario

MONTH = "2026-02"
P5, G5 = "ml.p5.48xlarge", "ml.g5.12xlarge"
TEAMS = [
    {"name": "vision", "quota": {"resources": [{"instance_type": P5, "count": 4}], "sharing": "lend_and_borrow", "borrow_limit": 50}},
    {"name": "nlp", "quota": {"resources": [{"instance_type": P5, "count": 3}, {"instance_type": G5, "count": 2}],
                              "sharing": "lend_and_borrow", "borrow_limit": 25}},
    {"name": "research", "quota": {"resources": [{"instance_type": G5, "count": 4}], "sharing": "lend"}},
    {"name": "audio", "quota": {"resources": [{"instance_type": P5, "count": 1}], "sharing": "lend_and_borrow"}},
]
CAPACITY = {P5: 8, G5: 6}
# The team file's cluster of that capacity (the usage and the chargeback tests' team files).
CLUSTER = {
    "name": "ml-shared",
    "eks_cluster_name": "ml-shared-eks",
    "node_recovery": "automatic",
    "instance_groups": [
        {"name": "p5", "instance_type": P5, "count": CAPACITY[P5], "threads_per_core": 1},
        {"name": "g5", "instance_type": G5, "count": CAPACITY[G5], "threads_per_core": 1},
    ],
}
SCENARIO = Scenario(
    month=MONTH,
    capacity=CAPACITY,
    quotas={"vision": {P5: 4}, "nlp": {P5: 3, G5: 2}, "research": {G5: 4}, "audio": {P5: 1}},
    jobs=[
        Job("vision", P5, 0, 336, 6, 75, workloads=3),
        Job("vision", P5, 336, 672, 4, 75, workloads=2),
        Job("nlp", P5, 0, 672, 1, 50, workloads=1),
        Job("nlp", G5, 0, 168, 4, 100, workloads=2),
        Job("research", G5, 0, 672, 2, 10, workloads=4),
    ],
    counter_resets=[300],
)


def _h(guaranteed, admitted, busy, borrowed, lent, instance_hours):
    return {"guaranteed": Decimal(guaranteed), "admitted": Decimal(admitted), "busy": Decimal(busy),
            "borrowed": Decimal(borrowed), "lent": Decimal(lent), "instance_hours": Decimal(instance_hours)}


# GPU-hours (instance-hours for the last figure), by hand:
EXPECTED = {
    "vision": {
        # 32 x 672; 48 x 336 + 32 x 336; 75 % of it; 16 x 336; never below its quota; 26880 / 8
        P5: _h("21504", "26880", "20160", "5376", "0", "3360"),
    },
    "nlp": {
        # 24 x 672; 8 x 672; 50 %; none; 16 x 672; 5376 / 8
        P5: _h("16128", "5376", "2688", "0", "10752", "672"),
        # 8 x 672; 16 x 168; 100 %; 8 x 168; 8 x 504 after hour 168; 2688 / 4
        G5: _h("5376", "2688", "2688", "1344", "4032", "672"),
    },
    "research": {
        # 16 x 672; 8 x 672; 10 % of it; none; 8 x 672; 5376 / 4
        G5: _h("10752", "5376", "537.6", "0", "5376", "1344"),
    },
    "audio": {
        P5: _h("5376", "0", "0", "0", "5376", "0"),  # 8 x 672 guaranteed, all of it lent or idle
    },
}
WORKLOADS = {"vision": 5, "nlp": 3, "research": 4, "audio": 0}  # 3 + 2 across the restart; 1 + 2; 4; none

# Cost Explorer's SageMaker cost of the month: p5 43008 GPU-hours at 7.00; g5 6 x 672 instance-hours at 7.09 (and a cent).
CLUSTER_COST = {P5: Decimal("301056.00"), G5: Decimal("28586.89")}
# Usage split (instance-hours / capacity instance-hours), by hand:
#   vision p5 3360 / 5376 = 0.625 -> 188160.00; nlp p5 672 / 5376 = 0.125 -> 37632.00
#   nlp g5 672 / 4032 = 1/6 -> 4764.48 (4764.4816...); research g5 1344 / 4032 = 1/3 -> 9528.96 (9528.9633...)
#   idle: p5 301056.00 - 188160.00 - 37632.00 = 75264.00; g5 28586.89 - 4764.48 - 9528.96 = 14293.45
SHARES = {"vision": Decimal("188160.00"), "nlp": Decimal("42396.48"), "research": Decimal("9528.96"), "audio": Decimal("0.00")}
IDLE = Decimal("89557.45")
