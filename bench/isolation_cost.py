"""``python -m bench.isolation_cost``: what verify_isolation's matrix costs the collection as the team count grows.

For each team count (``--teams 10,50,100``), the teams' three principals with the policies the collection renders
(the permission set's, the Studio execution role's, the Pod Identity role's), each team's resources (a domain with
two profiles, a quota, a budget, an access entry, a permission set, two roles, S3) and the shared ones, crossed as
``verify_isolation`` crosses them: IAM asked about each principal's own team, the shared resources and its witness
(``isolation.witness_decider``), the evaluator about the rest. "IAM" here is an in-process client that answers
SimulatePrincipalPolicy from the same evaluator, so the figures are the collection's own: the calls it would make,
the cells, the CPU seconds and the peak memory of the matrix (not IAM's latency; ``python -m bench`` has that).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tracemalloc

from bench.processes import ROOT

sys.path.insert(0, str(ROOT / "collections"))

from ansible_collections.hyperpod.tenancy.plugins.module_utils import (  # noqa: E402
    execution_role,
    iam_evaluation,
    isolation,
    isolation_report,
    naming,
    team_namespace,
)
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_policy import render_team_policy  # noqa: E402

ACCOUNT, REGION, BUCKET = "123456789012", "us-east-1", "hyperpod-team-data"
HYPERPOD = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:cluster/p0a1b2c3d4e5"
EKS = f"arn:aws:eks:{REGION}:{ACCOUNT}:cluster/ml-shared-eks"


class EvaluatingIam:
    """SimulatePrincipalPolicy answered by ``decide`` (the evaluator) for the request's actions and ARNs, one page."""

    def __init__(self, principals, decide):
        self.by_arn = {p["arn"]: p for p in principals}
        self.decide = decide

    def simulate_principal_policy(self, PolicySourceArn, ActionNames, ResourceArns, ContextEntries=()):  # noqa: N803 - boto3's names
        context = {e["ContextKeyName"]: e["ContextKeyValues"][0] for e in ContextEntries}
        principal = self.by_arn[PolicySourceArn]
        # One request each, as IAM decides it: the evaluator decides a resource of the principal's own team on its sample.
        asks = [({"arn": arn, "context": context, "team": principal["team"], "kind": "sample"}, ActionNames) for arn in ResourceArns]
        answers = self.decide(principal, asks)
        return {
            "IsTruncated": False,
            "EvaluationResults": [
                {
                    "EvalActionName": action,
                    "EvalDecision": "implicitDeny",
                    "ResourceSpecificResults": [
                        {"EvalResourceName": arn, "EvalResourceDecision": answer.get(action, "implicitDeny")}
                        for arn, answer in zip(ResourceArns, answers, strict=True)
                    ],
                }
                for action in ActionNames
            ],
        }


class EvaluatingAnalyzer:
    """CheckAccessNotGranted answered as the sandbox answers it (``iam_evaluation.access_granting_statements``)."""

    def check_access_not_granted(self, policyDocument, access, policyType):  # noqa: N803 - boto3's names
        del policyType
        granting = iam_evaluation.access_granting_statements(json.loads(policyDocument), access[0]["actions"], access[0]["resources"])
        return {"result": "FAIL" if granting else "PASS", "reasons": [{"statementIndex": index} for index in granting]}


def teams_of(count: int):
    principals, policies, resources = [], {}, []
    names = ["team%03d" % index for index in range(count)]
    for index, team in enumerate(names):
        roles = [
            f"arn:aws:iam::{ACCOUNT}:role/{naming.studio_execution_role_name(team)}",
            f"arn:aws:iam::{ACCOUNT}:role/{team_namespace.pod_role_name(team, naming.DEFAULT_PREFIX)}",
        ]
        sso = f"arn:aws:iam::{ACCOUNT}:role/AWSReservedSSO_hyperpod-{team}_0123456789abcdef"
        execution = execution_role.inline_policies(team, BUCKET, HYPERPOD, EKS)
        for kind, arn, identity in (
            ("permission_set", sso, [("AwsSSOInlinePolicy", render_team_policy(team, ACCOUNT, REGION, BUCKET, HYPERPOD, EKS))]),
            ("execution_role", roles[0], [(name, execution[name]) for name, unused_key in execution_role.OWN_POLICIES]),
            ("pod_identity", roles[1], [(execution_role.TEAM_DATA_POLICY, execution_role.team_data_policy(BUCKET, team))]),
        ):
            principals.append({"id": arn, "team": team, "kind": kind, "arn": arn})
            policies[arn] = {"identity": identity, "role_arn": arn}
        found = {
            "bucket": BUCKET, "domain_id": f"d-{index:012d}", "user_profiles": [f"{team}-alice", f"{team}-bob"],
            "compute_quota_id": f"q{index:011d}", "budget_name": naming.budget_name(team),
            "access_entry_arn": f"arn:aws:eks:{REGION}:{ACCOUNT}:access-entry/ml-shared-eks/role/{ACCOUNT}/AWSReservedSSO_hyperpod-{team}_x/{index:08d}",
            "permission_set_arn": f"arn:aws:sso:::permissionSet/ssoins-0123456789abcdef/ps-{index:016d}", "roles": roles,
        }  # fmt: skip
        resources += isolation.team_resources(team, ACCOUNT, REGION, found)
    shared = {
        "bucket": BUCKET, "eks_cluster_arn": EKS, "hyperpod_cluster_arn": HYPERPOD, "fsx_file_system_id": "fs-0123456789abcdef0",
        "identity_center_instance_arn": "arn:aws:sso:::instance/ssoins-0123456789abcdef", "identity_store_id": "d-0123456789",
        "group_ids": [f"9067d4d8-1081-7012-49a3-{index:012d}" for index in range(count)],
    }  # fmt: skip
    return principals, policies, resources + isolation.shared_resources(shared, ACCOUNT, REGION)


# The pace the collection keeps to services that publish no rate (IAM, Access Analyzer's checks): docs/performance.md.
CALLS_A_SECOND = 18


def measure(count: int) -> dict:
    principals, policies, resources = teams_of(count)
    evaluator = isolation.local_decider(policies, ACCOUNT)
    simulate = isolation.simulate_decider(EvaluatingIam(principals, evaluator), region=REGION)
    decide = isolation.witness_decider(simulate, isolation.local_decider(policies, ACCOUNT), inputs=policies)
    documents = {arn: spec["identity"] for arn, spec in policies.items()}
    tracemalloc.start()
    started = time.process_time()
    result = isolation.matrix(principals, resources, decide, keep_cells=False)
    lines = isolation_report.matrix_lines(result)
    cpu = time.process_time() - started
    analyzed = isolation.access_not_granted(EvaluatingAnalyzer(), documents, principals, resources)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    calls = simulate.calls + analyzed["checks"]
    return {
        "teams": count, "principals": len(principals), "resources": len(resources), "cells": result["summary"]["cells"],
        "simulate_calls": simulate.calls, "analyzer_checks": analyzed["checks"], "local_cells": decide.local_cells,
        "leaks": len(result["leaks"]), "fallbacks": len(decide.fallbacks), "matrix_lines": len(lines) - 1,
        "cpu_seconds": round(cpu, 1), "at_aws_rates_s": round(calls / CALLS_A_SECOND), "peak_mib": round(peak / 2**20, 1),
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.isolation_cost")
    parser.add_argument("--teams", default="10,50,100", help="team counts, comma-separated")
    args = parser.parse_args()
    columns = (
        "teams", "principals", "resources", "cells", "simulate_calls", "analyzer_checks", "local_cells", "leaks", "fallbacks",
        "matrix_lines", "cpu_seconds", "at_aws_rates_s", "peak_mib",
    )  # fmt: skip
    print(" ".join(f"{c:>14}" for c in columns))
    for count in (int(n) for n in args.teams.split(",")):
        figures = measure(count)
        print(" ".join(f"{figures[c]:>14}" for c in columns), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
