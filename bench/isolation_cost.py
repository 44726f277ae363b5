"""``python -m bench.isolation_cost``: what verify_isolation's matrix costs the collection as the team count grows.

For each team count (``--teams 10,50,100``), the teams' three principals with the policies the collection renders
(the permission set's, the Studio execution role's, the Pod Identity role's), each team's resources (a domain with
two profiles, a quota, a budget, an access entry, a permission set, two roles, S3) and the shared ones, crossed as
``verify_isolation`` crosses them: IAM asked about each principal's own team, the shared resources and its witness
(``isolation.witness_decider``), the evaluator about the rest, then Access Analyzer's checks
(``isolation.access_not_granted``). "IAM" and "Access Analyzer" here are in-process clients that answer
SimulatePrincipalPolicy from the same evaluator and CheckAccessNotGranted as the sandbox does, so the figures are the
collection's own: the calls it would make, the cells, the CPU seconds, the peak memory (not the services' latency;
``python -m bench`` has that).

What is measured, per team count, in a fresh process of its own (``--one N``, which prints the figures as JSON):

- ``cpu_s``: ``time.process_time()`` (user and system CPU of every thread of the process: the matrix asks a few
  principals at once, ``calls.each``, and so do the checks) around the matrix, its lines
  (``isolation_report.matrix_lines``) and Access Analyzer's checks, botocore's models for the action lists included,
  the teams' policies and resources not; ``matrix_cpu_s`` and ``checks_cpu_s`` are its two parts. No tracer runs: the
  first version ran the matrix under ``tracemalloc``, which made its CPU 5.5 times what it is (docs/performance.md).
- ``answering_cpu_s``: of ``cpu_s``, what the in-process IAM and Access Analyzer spent answering (``time.thread_time()``
  in each call, summed over the threads; ``simulating_cpu_s`` is IAM's, within ``matrix_cpu_s``): their CPU, not the
  collection's, which is ``collection_cpu_s``, ``cpu_s`` less it (``collection_us_a_cell``, per cell).
- ``wall_s``: the wall time of the same span, which other work on the machine lengthens.
- ``at_aws_rates_s``: the calls (``SimulatePrincipalPolicy`` and Access Analyzer's checks) one after another at
  ``CALLS_A_SECOND``, as the first run of a day asks them (the next ones recall IAM's and Access Analyzer's answers).
  ``verify_isolation`` asks the two services in parallel: paced apart, the larger of the two is the floor.
- ``setup_rss_mib``, ``peak_rss_mib``: ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` of that process before the matrix
  (the interpreter, botocore's models, the teams' policies and resources) and at its end: the peak of the whole process.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import threading
import time

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


class Answering:
    """The CPU the in-process services spend answering (``time.thread_time()`` of each call, summed over the threads)."""

    def __init__(self):
        self.cpu = 0.0
        self.lock = threading.Lock()

    def timed(self, function, *args, **kwargs):
        started = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent = time.thread_time() - started
            with self.lock:
                self.cpu += spent


class EvaluatingIam:
    """SimulatePrincipalPolicy answered by ``decide`` (the evaluator) for the request's actions and ARNs, one page."""

    def __init__(self, principals, decide, answering=None):
        self.by_arn = {p["arn"]: p for p in principals}
        self.decide = decide
        self.answering = answering or Answering()

    def simulate_principal_policy(self, **request):
        return self.answering.timed(self._simulate, **request)

    def _simulate(self, PolicySourceArn, ActionNames, ResourceArns, ContextEntries=()):  # noqa: N803 - boto3's names
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

    def __init__(self, answering=None):
        self.answering = answering or Answering()

    def check_access_not_granted(self, **request):
        return self.answering.timed(self._check, **request)

    def _check(self, policyDocument, access, policyType):  # noqa: N803 - boto3's names
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


def _mib(kib: int) -> float:
    return round(kib / 1024, 1)  # ru_maxrss is in KiB on Linux


def measure(count: int) -> dict:
    """The figures of one team count, in this process (``--one``: a fresh one, for its peak RSS)."""
    principals, policies, resources = teams_of(count)
    answering = Answering()
    evaluator = isolation.local_decider(policies, ACCOUNT)
    simulate = isolation.simulate_decider(EvaluatingIam(principals, evaluator, answering), region=REGION)
    decide = isolation.witness_decider(simulate, isolation.local_decider(policies, ACCOUNT), inputs=policies)
    documents = {arn: spec["identity"] for arn, spec in policies.items()}
    setup_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started, wall = time.process_time(), time.perf_counter()
    result = isolation.matrix(principals, resources, decide, keep_cells=False)
    lines = isolation_report.matrix_lines(result)
    matrix_cpu, simulating = time.process_time() - started, answering.cpu
    analyzed = isolation.access_not_granted(EvaluatingAnalyzer(answering), documents, principals, resources)
    cpu, wall = time.process_time() - started, time.perf_counter() - wall
    calls = simulate.calls + analyzed["checks"]
    return {
        "teams": count, "principals": len(principals), "resources": len(resources), "cells": result["summary"]["cells"],
        "simulate_calls": simulate.calls, "analyzer_checks": analyzed["checks"], "local_cells": decide.local_cells,
        "leaks": len(result["leaks"]), "findings": len(analyzed["findings"]), "fallbacks": len(decide.fallbacks),
        "matrix_lines": len(lines) - 1, "cpu_s": round(cpu, 1), "matrix_cpu_s": round(matrix_cpu, 1),
        "checks_cpu_s": round(cpu - matrix_cpu, 1), "answering_cpu_s": round(answering.cpu, 1),
        "simulating_cpu_s": round(simulating, 1), "collection_cpu_s": round(cpu - answering.cpu, 1),
        "collection_us_a_cell": round((cpu - answering.cpu) / result["summary"]["cells"] * 1e6, 1), "wall_s": round(wall, 1),
        "at_aws_rates_s": round(calls / CALLS_A_SECOND), "setup_rss_mib": _mib(setup_rss),
        "peak_rss_mib": _mib(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss),
    }  # fmt: skip


COLUMNS = (
    "teams", "principals", "resources", "cells", "simulate_calls", "analyzer_checks", "local_cells", "leaks", "findings",
    "fallbacks", "matrix_lines", "cpu_s", "matrix_cpu_s", "checks_cpu_s", "answering_cpu_s", "simulating_cpu_s", "collection_cpu_s",
    "collection_us_a_cell", "wall_s", "at_aws_rates_s", "setup_rss_mib", "peak_rss_mib",
)  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.isolation_cost")
    parser.add_argument("--teams", default="10,50,100", help="team counts, comma-separated, each measured in a fresh process")
    parser.add_argument("--one", type=int, help="measure this team count in this process and print its figures as JSON")
    parser.add_argument("--json", help="write every team count's figures to this file too")
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(measure(args.one)))
        return 0
    print(" ".join(f"{c:>{max(len(c), 8)}}" for c in COLUMNS), flush=True)
    everything = []
    for count in (int(n) for n in args.teams.split(",")):
        # A process per count: its ru_maxrss is its own peak, not the largest count's so far.
        done = subprocess.run([sys.executable, "-m", "bench.isolation_cost", "--one", str(count)], cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True)
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        everything.append(figures)
        print(" ".join(f"{figures[c]:>{max(len(c), 8)}}" for c in COLUMNS), flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(everything, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
