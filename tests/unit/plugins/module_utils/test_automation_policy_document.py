"""The automation role's policy: one place renders it, the docs ship that rendering, and its shape keeps its promises.

That it suffices and that every statement is needed is proved against a run: tests/integration/test_automation_policy.py.
"""

from __future__ import annotations

import json
from pathlib import Path

from ansible_collections.hyperpod.tenancy.plugins.module_utils import automation_policy

ROOT = Path(__file__).resolve().parents[4]
EXAMPLE = {"account_id": "111122223333", "region": "us-east-1", "data_bucket": "hyperpod-team-data", "eks_cluster": "ml-shared-eks",
           "cluster_execution_roles": ["arn:aws:iam::111122223333:role/HyperPodClusterExecution"]}


def test_the_docs_ship_what_the_module_renders():
    assert json.loads((ROOT / "docs" / "automation-policy.json").read_text()) == automation_policy.render(**EXAMPLE)
    assert json.loads((ROOT / "docs" / "automation-policy-identity-center.json").read_text()) == automation_policy.render_identity_center()


def test_it_fits_a_managed_policy():
    for policy in (automation_policy.render(**EXAMPLE), automation_policy.render_identity_center()):
        assert automation_policy.size(policy) <= automation_policy.MANAGED_POLICY_LIMIT


def test_no_action_is_a_wildcard_and_pass_role_is_scoped_to_a_service():
    for statement in automation_policy.render(**EXAMPLE)["Statement"]:
        assert statement["Effect"] == "Allow"
        assert all("*" not in action for action in statement["Action"]), statement
        if "iam:PassRole" in statement["Action"]:
            assert statement["Action"] == ["iam:PassRole"] and statement["Resource"] != "*"
            assert list(statement["Condition"]["StringEquals"]) == ["iam:PassedToService"]


def test_iam_writes_reach_only_the_collections_roles():
    for statement in automation_policy.render(**EXAMPLE)["Statement"]:
        if any(action.startswith("iam:") and not action.startswith(("iam:Get", "iam:List", "iam:Simulate")) for action in statement["Action"]):
            resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
            assert all(r.startswith("arn:aws:iam::111122223333:role/hyperpod-") or r in EXAMPLE["cluster_execution_roles"] for r in resources), statement


def test_identity_center_elsewhere_moves_its_statements_to_its_account():
    here = automation_policy.render(identity_center_elsewhere=True, **EXAMPLE)
    there = automation_policy.render_identity_center()
    actions_here = {a for s in here["Statement"] for a in s["Action"]}
    actions_there = {a for s in there["Statement"] for a in s["Action"]}
    assert not any(a.startswith(("sso:", "identitystore:")) for a in actions_here)
    assert actions_there and all(a.startswith(("sso:", "identitystore:")) for a in actions_there)
    assert actions_here | actions_there == {a for s in automation_policy.render(**EXAMPLE)["Statement"] for a in s["Action"]}
