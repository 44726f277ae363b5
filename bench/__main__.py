"""``python -m bench``: how fast the collection converges, and how little it calls.

For a team file of 50 teams (``--teams``, comma-separated: ``--teams 50,500``) and each
per-call latency (``--latency``, milliseconds the sandbox waits before it answers every AWS call,
its ``/_sandbox/faults`` ``latency_ms``; 0 and 50 by default), against a sandbox of its own: a cold
``site.yml``, a no-op rerun, a first ``drift.yml`` check run and the next one, as the hourly job runs it with the first's
answers from IAM in the fact cache (``--runs`` picks some). For each: wall time (in all and per team),
peak RSS of the largest process, CPU seconds, API reads and writes from the sandbox's request log
(in all, and per team), the peak request rate per service (most requests that one service received
within one second), the rate floor (``floor s``: the least wall time AWS's request rates, ``RATE_LIMITS``, allow
for the run's requests, whoever sends them), and module invocations and seconds per module. Prints a table, how the cost per
team grows with the team count, and writes JSON (``--json``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.processes import RUSAGE_WRAPPER, own_sandbox  # noqa: E402
from bench.teams import raise_account_quotas, sandbox_inventory, team_file, write_settings  # noqa: E402
from sandbox.client import SANDBOX_CREDENTIALS  # noqa: E402
from sandbox.seed import seed  # noqa: E402
from sandbox.server import RATE_LIMITS, rate_key  # noqa: E402

# "drift" is the first drift job (verify_isolation asks IAM and Access Analyzer everything); "hourly" the next one,
# with their answers in the fact cache, as the scheduled job runs it.
RUNS = (("cold", "site.yml", ()), ("noop", "site.yml", ()), ("drift", "playbooks/drift.yml", ()), ("hourly", "playbooks/drift.yml", ()))


def module_breakdown(json_output: str) -> dict:
    """Invocations and seconds per module, from the ansible.posix.json callback's output."""
    start = json_output.find("{")
    # raw_decode: the drift callback prints its summary after the JSON document.
    report = json.JSONDecoder().raw_decode(json_output[start:])[0] if start >= 0 else {"plays": []}
    calls: Counter = Counter()
    seconds: defaultdict = defaultdict(float)
    for play in report.get("plays", []):
        for task in play.get("tasks", []):
            duration = task["task"].get("duration", {})
            if not duration.get("end"):
                continue
            began = datetime.fromisoformat(duration["start"].replace("Z", "+00:00"))
            ended = datetime.fromisoformat(duration["end"].replace("Z", "+00:00"))
            for result in task.get("hosts", {}).values():
                if result.get("skipped"):
                    continue
                action = result.get("action", "?")
                calls[action] += 1
                seconds[action] += (ended - began).total_seconds() / max(1, len(task["hosts"]))
    return {action: {"invocations": calls[action], "seconds": round(seconds[action], 2)} for action in sorted(calls, key=lambda a: -seconds[a])}


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a running process (Linux /proc), to tell the sandbox's share apart."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rate_floor(log: list[dict], limits: dict = RATE_LIMITS) -> tuple[float, str]:
    """(seconds, service): the least wall time AWS's request rates allow for ``log``'s requests, whoever sends them:
    the requests of the service (``service:operation`` for one limited per API) whose rate they take longest to fit in."""
    sent = Counter((record["service"], rate_key(record["service"], record.get("operation", ""))) for record in log)
    floors = [(count / limits[service], key) for (service, key), count in sent.items() if service in limits]
    return max(floors, default=(0.0, ""))


def peak_rates(log: list[dict]) -> dict:
    """service -> the most requests it received within any one second (a window sliding over the log)."""
    times: defaultdict = defaultdict(list)
    for record in log:
        times[record["service"]].append(record["time"])
    peaks = {}
    for service, stamps in times.items():
        stamps.sort()
        first, peak = 0, 0
        for last, stamp in enumerate(stamps):
            while stamp - stamps[first] >= 1.0:
                first += 1
            peak = max(peak, last - first + 1)
        peaks[service] = peak
    return dict(sorted(peaks.items(), key=lambda item: -item[1]))


def measure(count: int, latency_ms: int, workdir: Path, runs: tuple = RUNS, rate_limits: bool = True) -> dict:
    with own_sandbox() as (server, client):
        settings = team_file(count)
        vars_file = workdir / f"platform-{count}.yml"
        team_file_path = workdir / f"teams-{count}" / "teams.yml"
        write_settings(settings, team_file_path, vars_file)
        seed_file = workdir / f"seed-{count}.json"
        seed_file.write_text(json.dumps(seed(client, settings)))
        raise_account_quotas(client, settings)
        inventory_dir = sandbox_inventory(workdir / f"n{count}-{latency_ms}ms", team_file_path)
        # After seeding: every AWS call the playbooks make waits this long before the sandbox answers, and what a
        # service receives beyond AWS's rate is throttled.
        client.set_faults(latency_ms=latency_ms, rate_limits=RATE_LIMITS if rate_limits else {})
        env = dict(
            os.environ,
            ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
            ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
            HYPERPOD_SANDBOX_URL=client.endpoint,
            HYPERPOD_SANDBOX_SEED=str(seed_file),
            HYPERPOD_DRIFT_REPORT=str(workdir / f"drift-{count}-{latency_ms}ms.json"),
            # A fact cache of this sandbox's own: the first drift run remembers nothing.
            ANSIBLE_CACHE_PLUGIN_CONNECTION=str(workdir / f"facts-{count}-{latency_ms}ms"),
            **SANDBOX_CREDENTIALS,
        )
        results = {}
        for label, playbook, extra in runs:
            client.clear_requests()
            sandbox_cpu_before = process_cpu_seconds(server.pid)
            usage_file = workdir / f"{label}-{count}-{latency_ms}ms.rusage"
            started = time.monotonic()
            run = subprocess.run(
                [sys.executable, "-c", RUSAGE_WRAPPER, str(usage_file),
                 str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(inventory_dir), "-e", f"@{vars_file}", playbook, *extra],
                cwd=ROOT, env=env, capture_output=True, text=True,
            )
            wall = time.monotonic() - started
            peak_kib, ansible_cpu = json.loads(usage_file.read_text())
            sandbox_cpu = process_cpu_seconds(server.pid) - sandbox_cpu_before
            log = client.requests()
            reads = sum(1 for r in log if r["kind"] == "read")
            writes = sum(1 for r in log if r["kind"] == "write")
            throttled = Counter(r["service"] for r in log if r.get("fault") == "throttle")
            floor, bound_by = rate_floor(log)
            results[label] = {
                "exit_code": run.returncode,
                "wall_seconds": round(wall, 1),
                "wall_seconds_per_team": round(wall / count, 2),
                "peak_rss_mib": round(peak_kib / 1024, 1),
                "ansible_cpu_seconds": round(ansible_cpu, 1),
                "sandbox_cpu_seconds": round(sandbox_cpu, 1),
                "reads": reads,
                "writes": writes,
                "reads_per_team": round(reads / count, 1),
                "writes_per_team": round(writes / count, 1),
                "peak_requests_per_second": peak_rates(log),
                "rate_floor_seconds": round(floor, 1),
                "rate_floor_service": bound_by,
                "throttled": dict(throttled.most_common()),
                "calls": dict(Counter(f"{r['service']}:{r['operation']}" for r in log).most_common()),
                "modules": module_breakdown(run.stdout),
            }
            (workdir / f"{label}-{count}-{latency_ms}ms.log").write_text(run.stdout + run.stderr)
        return results


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--teams", default="50", help="team counts, comma-separated (e.g. 50,500)")
    parser.add_argument("--latency", default="0,50", help="per-call latencies in milliseconds, comma-separated")
    parser.add_argument("--runs", default=",".join(label for label, _, _ in RUNS),
                        help="which runs, in this order, comma-separated: cold (needed before the others), noop, drift, hourly (after drift)")
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    parser.add_argument("--no-rate-limits", action="store_true", help="let the sandbox take any request rate (AWS throttles: sandbox.server.RATE_LIMITS)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs of failed runs)")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="hyperpod-bench-"))
    figures = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "runs": {},
    }
    latencies = [int(n) for n in args.latency.split(",")]
    selected = tuple(run for run in RUNS if run[0] in args.runs.split(","))
    for count in (int(n) for n in args.teams.split(",")):
        for latency in latencies:
            figures["runs"][f"{count}@{latency}ms"] = measure(count, latency, workdir, selected, not args.no_rate_limits)
    print(
        f"{'teams':>5} {'lat ms':>6} {'run':<6} {'exit':>4} {'wall s':>8} {'s/team':>7} {'RSS MiB':>8} {'cpu s':>7} {'sbx cpu':>7}"
        f" {'reads':>6} {'writes':>6} {'r/team':>7} {'w/team':>7} {'thr':>4} {'floor s':>8}  peak requests/s by service"
    )
    for key, runs in figures["runs"].items():
        count, latency = key.split("@")
        for label, run in runs.items():
            peaks = ", ".join(f"{service} {rate}" for service, rate in list(run["peak_requests_per_second"].items())[:6])
            print(
                f"{count:>5} {latency[:-2]:>6} {label:<6} {run['exit_code']:>4} {run['wall_seconds']:>8} {run['wall_seconds_per_team']:>7}"
                f" {run['peak_rss_mib']:>8} {run['ansible_cpu_seconds']:>7} {run['sandbox_cpu_seconds']:>7}"
                f" {run['reads']:>6} {run['writes']:>6} {run['reads_per_team']:>7} {run['writes_per_team']:>7} {sum(run['throttled'].values()):>4}"
                f" {run['rate_floor_seconds']:>8}  {peaks}"
            )
    counts = sorted({int(key.split("@")[0]) for key in figures["runs"]})
    if len(counts) > 1:
        print("\nhow the wall time per team grows with the team count (s/team, and x the smallest count's):")
        for latency in latencies:
            for label, _, _ in selected:
                base = figures["runs"][f"{counts[0]}@{latency}ms"][label]["wall_seconds_per_team"]
                steps = [figures["runs"][f"{c}@{latency}ms"][label]["wall_seconds_per_team"] for c in counts]
                print(f"  {latency:>3} ms {label:<6} " + "  ".join(f"{c} teams {v} (x{v / base:.2f})" for c, v in zip(counts, steps, strict=True)))
    for key, runs in figures["runs"].items():
        if "noop" not in runs:
            continue
        count = int(key.split("@")[0])
        print(f"\nper module, no-op rerun, {key} (invocations, seconds):")
        for action, figure in list(runs["noop"]["modules"].items())[:10]:
            print(f"  {action:<55} {figure['invocations']:>5} {figure['seconds']:>8}")
        print(f"API reads per team by service, no-op rerun, {key}:")
        by_service: Counter = Counter()
        for call, calls in runs["noop"]["calls"].items():
            by_service[call.split(":")[0]] += calls
        print("  " + ", ".join(f"{service} {calls / count:.1f}" for service, calls in by_service.most_common()))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(f"\nwork directory: {workdir}")
    print(json.dumps({c: {k: {m: r[m] for m in ("wall_seconds", "reads", "writes")} for k, r in runs.items()} for c, runs in figures["runs"].items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
