"""The account, cluster and teams the policy tests render the team policies for (test_team_policy, test_isolation_matrix)."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[4]
ACCOUNT = "123456789012"
REGION = "us-east-1"
BUCKET = "hyperpod-team-data"
HYPERPOD_ARN = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:cluster/p1a2b3c4d5e6"
EKS_ARN = f"arn:aws:eks:{REGION}:{ACCOUNT}:cluster/ml-shared-eks"
# The sample teams, plus "vis", whose name is a prefix of "vision".
TEAMS = sorted({t["name"] for t in yaml.safe_load((ROOT / "group_vars/all/teams.yml").read_text())["hyperpod_teams"]} | {"vis"})
