"""``python -m bench.isolation_corpus_live``: every statement of the widening corpus, one after another, on the sandbox.

The corpus (``tests/unit/plugins/module_utils/widening_corpus.py``) is written for the unit matrix's account: the sample
teams plus ``vis`` (a prefix of ``vision``), ids such as ``d-000000000003``. Here it runs against one sandbox built once
with the same four teams (``site.yml``) and the same places no team owns in the data bucket (``OTHER_PLACES``), after
``playbooks/verify_isolation.yml`` passed on it. For each entry:

- its statement is translated to the sandbox's ids (``LiveCorpus.translate``: the domains, quotas, permission sets,
  access entries, roles and cluster the sandbox made; a pattern over every team's id of a kind becomes one over every
  team's id there) and put on the principal's role as one more inline policy (``PutRolePolicy``), the role's trust and
  tags set as the entry says (every principal may carry session tags unless its ``spec`` says otherwise: the unit
  harness has no trust policies, and the Studio execution role's trust allows no ``sts:TagSession``);
- ``verify_isolation``'s ``converge`` runs in this process with boto3 clients at the sandbox, so the answers are the
  sandbox's IAM (``SimulatePrincipalPolicy``) and Access Analyzer's, crossing the widened principal only (option
  ``principals``; the others are unchanged since the full run passed) with every team's resources, with what the
  previous entry's run returned as ``witnessed``: an answer IAM gave about another statement must not stand for this
  one (a run that recalls the principal, for a statement new to it, is wrong);
- its verdict is checked as the unit corpus checks it (``test_isolation_corpus._problem``: a leak reported on the owners
  the statement reaches and on none it cannot, a benign statement reported nowhere, no unproven cell, no gap), and so
  are Access Analyzer's findings (none for a benign statement, none on an owner a leak spares);
- the statement is removed, the tags put back, and the next entry runs. The trusts are put back at the end, and a run
  of every principal must pass again. A statement IAM refuses to store (``MalformedPolicyDocument``) is counted apart:
  no role can hold it.

Prints each entry that went wrong, the count caught by family, and the CPU and wall seconds per entry (this process,
which runs the module's code, and the sandbox's); exits 1 on any miss or false alarm. ``--family`` and ``--stratified``
pick a part of the corpus (``tests/integration/test_isolation_corpus_live.py`` runs ``stratified()``'s in CI).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import yaml

from bench.processes import ROOT, free_port

sys.path.insert(0, str(ROOT / "collections"))

from ansible_collections.hyperpod.tenancy.plugins.module_utils import isolation, naming  # noqa: E402
from ansible_collections.hyperpod.tenancy.plugins.module_utils.iam_evaluation import as_list, wildcard_match  # noqa: E402
from ansible_collections.hyperpod.tenancy.plugins.modules import verify_isolation  # noqa: E402

from tests.unit.plugins.module_utils import widening_corpus as corpus  # noqa: E402
from tests.unit.plugins.module_utils.sample_account import HYPERPOD_ARN, INSTANCE_ARN, PROMETHEUS_ID, TEAMS  # noqa: E402
from tests.unit.plugins.module_utils.test_isolation_corpus import _problem  # noqa: E402
from tests.unit.plugins.module_utils.test_isolation_matrix import _found  # noqa: E402

# The corpus's fourth team, beside the sample's three (sample_account.TEAMS): its name is a prefix of vision's.
VIS = {
    "name": "vis",
    "identity_center_group": "TeamVis",
    "members": [{"name": "gina", "uid": 10007}],
    "storage": {"gid": 20004},
    "cost_center": "CC-1004",
    "quota": {"resources": [{"instance_type": "ml.p5.48xlarge", "count": 1}], "sharing": "lend", "preempt": "never", "fair_share_weight": 10},
    "budget": {"monthly_usd": 5000, "notify": ["finops@example.com"]},
}
POLICY_NAME = "corpus-widening"
OTHER_PLACES = ("retired/datasets/kept.parquet", "lifecycle/on_create.sh")


def corpus_settings(sample: dict) -> dict:
    """The sample's settings with the corpus's teams (``vis`` added)."""
    settings = copy.deepcopy(sample)
    settings["hyperpod_teams"].append(copy.deepcopy(VIS))
    assert sorted(team["name"] for team in settings["hyperpod_teams"]) == TEAMS
    return settings


def stratified(entries=corpus.CORPUS) -> list:
    """One leak and one benign entry of each family, on the three principal kinds by turns (the first of the group on the
    kind whose turn it is, or the group's first)."""
    groups = {}
    for entry in entries:
        groups.setdefault((entry.family, entry.label), []).append(entry)
    picked = []
    for turn, group in enumerate(groups.values()):
        kind = corpus.KINDS[turn % len(corpus.KINDS)]
        picked.append(next((e for e in group if e.principal.endswith("/" + kind)), group[0]))
    return picked


class SandboxContext:
    """What verify_isolation's ``converge`` takes of its module: a client per service at the sandbox, and the Region."""

    def __init__(self, client, region: str) -> None:
        self.region = region
        self._client = client
        self._clients: dict = {}
        self._lock = threading.Lock()

    def client(self, service: str):
        with self._lock:
            if service not in self._clients:
                self._clients[service] = self._client.boto3_client(service, self.region)
            return self._clients[service]


def _id_translation(token: str, unit: dict, live: dict) -> str:
    """One team id (or a pattern over them) of the unit account as the sandbox's: a team's id (with what follows it) as
    that team's there, a pattern over every team's id as one over every team's id there (their common start and ``*``)."""
    for team, unit_id in unit.items():
        if token == unit_id or (token.startswith(unit_id) and token[len(unit_id)] in "*?"):
            return live[team] + token[len(unit_id) :]
    matched = {team for team, unit_id in unit.items() if wildcard_match(token, unit_id)}
    if not matched:
        return token
    if matched != set(unit):
        raise ValueError(f"{token!r} matches some teams' ids only ({sorted(matched)}): no translation keeps that")
    return os.path.commonprefix(sorted(live.values())) + "*"


class LiveCorpus:
    """The corpus on a built sandbox: ``run(entry)`` puts one statement, runs verify_isolation, removes it."""

    def __init__(self, client, teams: list, shared: dict, witnessed: dict, prometheus_workspace_arn=None, name_prefix: str = naming.DEFAULT_PREFIX) -> None:
        assert sorted(teams) == TEAMS, "the corpus's teams"
        self.client = client
        self.teams = list(teams)  # in the team file's order, as the playbook gives them
        self.shared = shared
        self.witnessed = dict(witnessed)
        self.name_prefix = name_prefix
        self.context = SandboxContext(client, shared.get("region") or "us-east-1")
        self.iam = self.context.client("iam")
        roles = isolation.AccountRoles(self.iam)
        principals, resources = isolation.discover(self.context, roles, self.teams, shared, name_prefix, shared.get("tag_keys"))
        self.principals = {f"{p['team']}/{p['kind']}": p for p in principals}
        self.trusts = {}  # role name -> its trust as it was, for ``restore``
        self.asked = set()  # (principal, statement, its trust and tags) verified so far
        owned = {(r["team"], r["kind"]): r["arn"] for r in resources if not r.get("shared")}
        self.ids = {
            "domain": ({t: _found(t)["domain_id"] for t in TEAMS}, {t: owned[(t, "domain")].rsplit("/", 1)[-1] for t in TEAMS}),
            "quota": ({t: _found(t)["compute_quota_id"] for t in TEAMS}, {t: owned[(t, "compute_quota")].rsplit("/", 1)[-1] for t in TEAMS}),
            # A team's home EFS file system, in the EFS ARNs only (an FSx file system's id has the same shape).
            "home_efs": ({t: _found(t)["home_efs_file_system_id"] for t in TEAMS}, {t: owned[(t, "home_efs")].rsplit("/", 1)[-1] for t in TEAMS}),
            "permission_set": (
                {t: _found(t)["permission_set_arn"].rsplit("/", 1)[-1] for t in TEAMS},
                {t: owned[(t, "permission_set")].rsplit("/", 1)[-1] for t in TEAMS},
            ),
        }
        unit_instance, live_instance = INSTANCE_ARN.rsplit("/", 1)[-1], shared["identity_center_instance_arn"].rsplit("/", 1)[-1]
        self.patterns = (
            ("domain", re.compile(r"(:(?:domain|user-profile|space|app)/)(d-[0-9*?]+)")),
            ("quota", re.compile(r"(:compute-quota/)([^\"/]+)")),
            ("home_efs", re.compile(r"(:elasticfilesystem:[^:\"]*:[^:\"]*:file-system/)([^\"/]+)")),
            ("permission_set", re.compile(r"(:permissionSet/%s/)([^\"/]+)" % re.escape(unit_instance))),
        )
        # Whole ARNs of the unit account (longest first: an access entry's holds its role's name) and the instance's id.
        # The usage workspace: the sandbox's, as verify_isolation.yml was given it (``built``).
        self.prometheus_workspace_arn = prometheus_workspace_arn
        replaced = {HYPERPOD_ARN: shared["cluster_arn"], unit_instance: live_instance}
        if self.prometheus_workspace_arn:
            replaced[PROMETHEUS_ID] = self.prometheus_workspace_arn.rsplit("/", 1)[-1]
        for team in TEAMS:
            replaced[_found(team)["access_entry_arn"]] = owned[(team, "access_entry")]
            for kind in corpus.KINDS:
                unit_arn, live_arn = corpus.ARNS[f"{team}/{kind}"], self.principals[f"{team}/{kind}"]["arn"]
                replaced[unit_arn], replaced[unit_arn.upper()] = live_arn, live_arn.upper()
        self.replaced = sorted(replaced.items(), key=lambda pair: -len(pair[0]))
        self.unit_only = [unit for unit, live in self.replaced if unit != live] + [i for unit, unused in self.ids.values() for i in unit.values()]
        tag_key = naming.tag_keys_with_defaults(shared.get("tag_keys"))["team"]
        assert f"aws:ResourceTag/{tag_key}" == corpus.TAG, "the corpus's Studio statements test the team tag key the sample uses"

    def translate(self, entry) -> dict:
        """The entry's document with the sandbox's ids, and where and how it goes: {"principal", "role", "document",
        "session_tags", "tags"}."""
        text = json.dumps(entry.document)
        for family, pattern in self.patterns:
            unit, live = self.ids[family]
            text = pattern.sub(lambda match, unit=unit, live=live: match.group(1) + _id_translation(match.group(2), unit, live), text)
        for unit, live in self.replaced:
            text = text.replace(unit, live)
        left = [unit for unit in self.unit_only if unit in text]
        if left:
            raise ValueError(f"{entry.id}: no sandbox id for {left}")
        principal = self.principals[entry.principal]
        return {
            "principal": principal,
            "role": principal["arn"].rsplit("/", 1)[-1],
            "document": json.loads(text),
            "session_tags": entry.spec.get("session_tags", True),
            "tags": entry.spec.get("tags", {}),
        }

    def _set_session_tags(self, role_name: str, allowed: bool) -> None:
        """The role's trust, allowing ``sts:TagSession`` to whom it trusts or not; the first change keeps the trust for ``restore``."""
        role = self.iam.get_role(RoleName=role_name)["Role"]
        trust = role["AssumeRolePolicyDocument"]
        if isolation._trusts_session_tags(trust) == allowed:
            return
        self.trusts.setdefault(role_name, copy.deepcopy(trust))
        statements = [s for s in trust["Statement"] if s.get("Effect") == "Allow"]
        for statement in statements:
            actions = [a for a in as_list(statement["Action"]) if a != "sts:TagSession"]
            statement["Action"] = actions + ["sts:TagSession"] if allowed else actions
        trust["Statement"] = [s for s in trust["Statement"] if s.get("Action")]
        self.iam.update_assume_role_policy(RoleName=role_name, PolicyDocument=json.dumps(trust))

    def _tag(self, role_name: str, tags: dict) -> dict:
        """Tag the role; returns how to put its tags back: {key: the former value, or None}."""
        if not tags:
            return {}
        before = {t["Key"]: t["Value"] for t in self.iam.list_role_tags(RoleName=role_name)["Tags"]}
        self.iam.tag_role(RoleName=role_name, Tags=[{"Key": k, "Value": v} for k, v in tags.items()])
        return {key: before.get(key) for key in tags}

    def _untag(self, role_name: str, former: dict) -> None:
        gone = [key for key, value in former.items() if value is None]
        if gone:
            self.iam.untag_role(RoleName=role_name, TagKeys=gone)
        kept = [{"Key": key, "Value": value} for key, value in former.items() if value is not None]
        if kept:
            self.iam.tag_role(RoleName=role_name, Tags=kept)

    def verify(self, principals: list) -> dict:
        """verify_isolation's ``converge``, as the playbook calls it, for ``principals`` (all when empty)."""
        # Every option at its module default (as AnsibleModule fills them), then what this run gives.
        params = dict((name, spec.get("default")) for name, spec in verify_isolation.MODULE_OPTIONS["argument_spec"].items())
        params.update(teams=self.teams, shared=self.shared, name_prefix=self.name_prefix, principals=principals, witnessed=self.witnessed)
        params.update(prometheus_workspace_arn=self.prometheus_workspace_arn)
        result = verify_isolation.converge(self.context, params)
        self.witnessed = result["witnessed"]
        return result

    def run(self, entry) -> dict:
        """One entry, put, verified and removed: {"entry", "problem" (None when the verdict is right), "result"}."""
        placed = self.translate(entry)
        role = placed["role"]
        try:
            self.iam.put_role_policy(RoleName=role, PolicyName=POLICY_NAME, PolicyDocument=json.dumps(placed["document"]))
        except self.iam.exceptions.MalformedPolicyDocumentException as error:
            # IAM stores no such statement (an S3 ARN with a Region, an IAM ARN outside its resource types): no role can hold it.
            return {"entry": entry, "problem": None, "refused": str(error), "result": None}
        self._set_session_tags(role, placed["session_tags"])
        former = self._tag(role, placed["tags"])
        try:
            result = self.verify([placed["principal"]["arn"]])
        finally:
            self.iam.delete_role_policy(RoleName=role, PolicyName=POLICY_NAME)
            self._untag(role, former)
            # The default of the corpus: every principal may carry session tags.
            self._set_session_tags(role, True)
        problem = verdict_problem(entry, placed["principal"], result)
        # The statement is new to this principal: IAM's answer about it cannot have been given yet.
        asked = (entry.principal, json.dumps(placed["document"], sort_keys=True), placed["session_tags"], json.dumps(placed["tags"], sort_keys=True))
        if not problem and asked not in self.asked and result["summary"]["remembered_principals"]:
            problem = "IAM's answer about another policy of the principal stood for this one (witnessed)"
        self.asked.add(asked)
        return {"entry": entry, "problem": problem, "refused": None, "result": result}

    def restore(self) -> None:
        """The trusts as they were before the first entry."""
        for role_name, trust in self.trusts.items():
            self.iam.update_assume_role_policy(RoleName=role_name, PolicyDocument=json.dumps(trust))
        self.trusts = {}


def verdict_problem(entry, principal: dict, result: dict):
    """What verify_isolation got wrong about ``entry`` on the sandbox, or None: the unit corpus's verdict
    (``test_isolation_corpus._problem``), every leak the widened principal's, and Access Analyzer's findings."""
    problem = _problem(entry, result)
    if problem:
        return problem
    strangers = sorted({c["principal_arn"] for c in result["leaks"]} - {principal["arn"]})
    if strangers:
        return f"leaks of other principals: {strangers}"
    # As the unit corpus: the team's own roles, quota, budget, access entry and permission set are leaks by design.
    findings = {
        (f["owner"], f["resource_kind"])
        for f in result["access_analyzer"]
        if not (f["owner"] == principal["team"] and f["resource_kind"] in isolation.PLATFORM_OWNED)
    }
    if entry.label == corpus.BENIGN and findings:
        return f"false alarm of Access Analyzer on {sorted(findings)}"
    wrong = sorted(finding for finding in findings if finding[0] in entry.spared)
    if wrong:
        return f"Access Analyzer reports {wrong}, which it cannot reach"
    return None


def process_cpu(pid: int) -> float:
    from bench.__main__ import process_cpu_seconds

    return process_cpu_seconds(pid)


def run_entries(live: LiveCorpus, entries, sandbox_pid: int | None = None, report=print) -> dict:
    """Every entry of ``entries`` on ``live``, then every principal once more: {"caught", "misses", "seconds", ...}."""
    caught, misses, refused, costs = Counter(), [], [], []
    for entry in entries:
        wall, cpu = time.monotonic(), time.process_time()
        sandbox_cpu = process_cpu(sandbox_pid) if sandbox_pid else 0.0
        outcome = live.run(entry)
        cost = {
            "wall": time.monotonic() - wall,
            "cpu": time.process_time() - cpu,
            "sandbox_cpu": process_cpu(sandbox_pid) - sandbox_cpu if sandbox_pid else 0.0,
        }
        costs.append(cost)
        if outcome["refused"]:
            refused.append(f"{entry.id}: {outcome['refused']}")
            report(f"REFUSED {refused[-1]}")
        elif outcome["problem"]:
            misses.append(f"{entry.id}: {outcome['problem']}")
            report(f"WRONG {misses[-1]}")
        else:
            caught[(entry.family, entry.label)] += 1
    live.restore()
    final = live.verify([])
    assert (final["leaks"], final["gaps"], final["access_analyzer"]) == ([], [], []), "the sandbox does not pass as it did before the corpus"
    return {"caught": caught, "misses": misses, "refused": refused, "costs": costs, "final": final["summary"]}


def summary_lines(entries, outcome: dict) -> list:
    lines = [f"{'family':<22} {'size':>5} {'leaks':>6} {'caught':>7} {'benign':>7} {'passed':>7}"]
    for name in corpus.FAMILIES:
        of = [e for e in entries if e.family == name]
        if not of:
            continue
        leaks = sum(1 for e in of if e.label == corpus.LEAK)
        lines.append(
            f"{name:<22} {len(of):>5} {leaks:>6} {outcome['caught'][(name, corpus.LEAK)]:>7} {len(of) - leaks:>7} {outcome['caught'][(name, corpus.BENIGN)]:>7}"
        )
    costs = outcome["costs"]
    total = {key: sum(c[key] for c in costs) for key in ("wall", "cpu", "sandbox_cpu")}
    leaks = sum(1 for e in entries if e.label == corpus.LEAK)
    caught = sum(n for (unused, label), n in outcome["caught"].items() if label == corpus.LEAK)
    passed = sum(n for (unused, label), n in outcome["caught"].items() if label == corpus.BENIGN)
    lines.append(
        f"{len(entries)} entries, {leaks} leaks of which {caught} caught, {len(entries) - leaks} benign of which {passed} passed;"
        f" {len(outcome['misses'])} wrong, {len(outcome['refused'])} refused by IAM (no role can hold them)"
    )
    if costs:
        lines.append(
            "per entry: %.2f CPU-s here + %.2f in the sandbox, %.2f s wall; in all: %.1f + %.1f CPU-s, %.1f s wall"
            % (total["cpu"] / len(costs), total["sandbox_cpu"] / len(costs), total["wall"] / len(costs), total["cpu"], total["sandbox_cpu"], total["wall"])
        )
    return lines


def build(workdir: Path):
    """A sandbox of its own with its Kubernetes API server, the corpus's teams built (``site.yml``) and
    ``playbooks/verify_isolation.yml`` passed: (LiveCorpus, the sandbox's pid, a function that stops it all)."""
    from sandbox.client import SandboxClient
    from sandbox.kube import KubeCluster
    from sandbox.seed import seed
    from tests.integration.playbook_runner import SAMPLE, Playbooks, assert_ok

    kube = KubeCluster(workdir / "kube").start()
    env = dict(os.environ, SANDBOX_STATUS_DELAY="0.2", SANDBOX_KUBE_DIR=str(kube.directory))
    port = free_port()
    with open(workdir / "sandbox.log", "wb") as log:
        server = subprocess.Popen([sys.executable, "-m", "sandbox", "serve", "--port", str(port)], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)

    def stop():
        server.terminate()
        server.wait(timeout=10)
        kube.stop()

    try:
        client = SandboxClient(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + 60
        while not client.healthy():
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"sandbox did not start: {(workdir / 'sandbox.log').read_text()[-2000:]}")
            time.sleep(0.2)
        settings = corpus_settings(SAMPLE)
        playbooks = Playbooks(client, seed(client, settings), workdir, settings)
        assert_ok(playbooks.run("site.yml"), "site.yml")
        return built(playbooks), server.pid, stop
    except BaseException:
        stop()
        raise


def built(playbooks) -> LiveCorpus:
    """The LiveCorpus of a built sandbox, once ``playbooks/verify_isolation.yml`` passed on it (its facts: what the teams
    share, what IAM and Access Analyzer answered)."""
    from tests.integration.playbook_runner import assert_ok

    # The corpus's account has two more places no present team owns (widening_corpus's header): a retired team's data
    # and the lifecycle folder of before the platform's prefix; the sandbox's bucket has neither until now.
    s3 = playbooks.client.boto3_client("s3")
    for key in OTHER_PLACES:
        s3.put_object(Bucket=playbooks.settings["hyperpod_data_bucket"], Key=key, Body=b"")
    # And the Prometheus workspace the usage reports read, named by the cluster file as a platform names its own.
    workspace = playbooks.client.boto3_client("amp").create_workspace(alias="corpus-usage")["arn"]
    observability = dict(playbooks.settings.get("hyperpod_observability") or {}, prometheus_workspace_arn=workspace)
    # And the autoscaling role the inventory names (the corpus's second platform role), though the sample does not scale.
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
    autoscaling = playbooks.client.boto3_client("iam").create_role(RoleName="HyperPodClusterAutoscaling", AssumeRolePolicyDocument=json.dumps(trust))
    inventory = yaml.safe_load((ROOT / "inventories/sandbox/group_vars/all/account.yml").read_text())["hyperpod_account"]
    account = dict(playbooks.settings.get("hyperpod_account") or inventory, cluster_autoscaling_role_arn=autoscaling["Role"]["Arn"])
    playbooks.write_settings(dict(playbooks.settings, hyperpod_observability=observability, hyperpod_account=account))
    passed = playbooks.run("playbooks/verify_isolation.yml")
    assert_ok(passed, "verify_isolation.yml")
    facts = {}
    for play in passed.report["plays"]:
        for task in play["tasks"]:
            facts.update(task["hosts"].get("localhost", {}).get("ansible_facts") or {})
    teams = [team["name"] for team in playbooks.settings["hyperpod_teams"]]
    return LiveCorpus(playbooks.client, teams, facts["hyperpod_shared"], facts["hyperpod_isolation_witnessed"], workspace)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.isolation_corpus_live")
    parser.add_argument("--family", action="append", choices=corpus.FAMILIES, help="only these families (repeatable)")
    parser.add_argument("--stratified", action="store_true", help="only the CI test's entries (one per family, label and principal kind)")
    parser.add_argument("--json", type=Path, help="write each entry's verdict and cost here")
    args = parser.parse_args()
    entries = [e for e in corpus.CORPUS if not args.family or e.family in args.family]
    if args.stratified:
        entries = stratified(entries)
    with tempfile.TemporaryDirectory(prefix="hyperpod-corpus-") as workdir:
        started = time.monotonic()
        live, sandbox_pid, stop = build(Path(workdir))
        try:
            print(f"built and verified in {time.monotonic() - started:.0f} s; {len(entries)} entries", flush=True)
            outcome = run_entries(live, entries, sandbox_pid, report=lambda line: print(line, flush=True))
        finally:
            stop()
    print("\n".join(summary_lines(entries, outcome)))
    if args.json:
        args.json.write_text(json.dumps([dict(cost, entry=e.id) for e, cost in zip(entries, outcome["costs"], strict=True)], indent=1))
    return 1 if outcome["misses"] else 0


if __name__ == "__main__":
    sys.exit(main())
