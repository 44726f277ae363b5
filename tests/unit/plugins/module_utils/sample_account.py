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
FSX_ID = "fs-0123456789abcdef0"
GRAFANA_ID = "g-0123456789"
PROMETHEUS_ID = "ws-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"
# The roles the HyperPod cluster runs as: its instance groups' execution role and its autoscaling role.
PLATFORM_ROLES = [f"arn:aws:iam::{ACCOUNT}:role/HyperPodClusterExecution", f"arn:aws:iam::{ACCOUNT}:role/HyperPodClusterAutoscaling"]
INSTANCE_ARN = "arn:aws:sso:::instance/ssoins-0123456789abcdef"
IDENTITY_STORE_ID = "d-0123456789"
# The sample teams, plus "vis", whose name is a prefix of "vision".
TEAMS = sorted({t["name"] for t in yaml.safe_load((ROOT / "teams/teams.yml").read_text())["hyperpod_teams"]} | {"vis"})
