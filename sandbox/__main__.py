"""``python -m sandbox start|stop|status|reset|seed|serve|run|requests``."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from sandbox.client import DEFAULT_PORT, ENDPOINT_FILE_NAME, INSTANCE_FILE_NAME, SANDBOX_CREDENTIALS, NotThisSandbox, SandboxClient, SandboxError
from sandbox.launch import endpoint_of, listening_socket, new_instance_id, spawn_server

ROOT = Path(__file__).resolve().parent.parent
STATE_DIR = Path(os.environ.get("SANDBOX_STATE_DIR", ROOT / ".sandbox"))
PID_FILE = STATE_DIR / "sandbox.pid"
ENDPOINT_FILE = STATE_DIR / ENDPOINT_FILE_NAME
# The id the sandbox at that endpoint answers its health check with: another sandbox there is not this one.
INSTANCE_FILE = STATE_DIR / INSTANCE_FILE_NAME
LOG_FILE = STATE_DIR / "sandbox.log"
# The Kubernetes API server the sandbox's EKS clusters point at (sandbox/kube): its certificates,
# its admin kubeconfig, its data and logs. SANDBOX_KUBERNETES=off runs the sandbox without it.
KUBE_DIR = STATE_DIR / "kube"
KUBECONFIG_FILE = KUBE_DIR / "kubeconfig"


def _kubernetes_wanted() -> bool:
    return os.environ.get("SANDBOX_KUBERNETES", "on").lower() not in ("off", "0", "false", "no")


def _running_pid() -> int | None:
    try:
        pid = int(PID_FILE.read_text())
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError):
        return None


def recorded_sandbox() -> SandboxClient | None:
    """The sandbox this state directory records, if its process runs: a client that takes no other sandbox for it."""
    if _running_pid() and ENDPOINT_FILE.exists() and INSTANCE_FILE.exists():
        return SandboxClient.recorded_in(STATE_DIR)
    return None


def not_answering(client: SandboxClient) -> str | None:
    """Why ``client``'s own sandbox does not answer (another sandbox answers in its place, or none), None when it does."""
    try:
        client.verify()
    except NotThisSandbox as error:
        return f"sandbox not running: {error}"
    except (OSError, SandboxError) as error:
        return f"sandbox not running: {client.endpoint} does not answer ({error})"
    return None


def start(port: int | None) -> tuple[SandboxClient, bool]:
    """Start the sandbox unless it runs; return (its client, whether this call started it)."""
    recorded = recorded_sandbox()
    if recorded and recorded.healthy():
        return recorded, False
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    if port is None:
        port = int(os.environ.get("SANDBOX_PORT", DEFAULT_PORT))
    instance = new_instance_id()
    env = dict(os.environ)
    # The port is this sandbox's from here, through the Kubernetes API server's seconds of starting: a sandbox starting
    # beside it gets another port, never this one's answers (issue 42).
    with listening_socket(port) as sock:
        endpoint = endpoint_of(sock)
        if _kubernetes_wanted():
            from sandbox.kube import KubeCluster

            KubeCluster.stop_recorded(KUBE_DIR)
            # The API server asks this sandbox about EKS tokens and access policies: its port is known, and bound, already.
            KubeCluster(KUBE_DIR).start(webhook=endpoint)
            env["SANDBOX_KUBE_DIR"] = str(KUBE_DIR)
        with open(LOG_FILE, "ab") as log:
            process = spawn_server(sock, instance, log, env)
    # The instance before the endpoint, the endpoint before the process id that makes them current (recorded_sandbox).
    INSTANCE_FILE.write_text(instance)
    ENDPOINT_FILE.write_text(endpoint)
    PID_FILE.write_text(str(process.pid))
    client = SandboxClient(endpoint, instance)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"sandbox exited with {process.returncode}; see {LOG_FILE}")
        if client.healthy():
            return client, True
        time.sleep(0.2)
    stop()
    raise SystemExit(f"sandbox did not answer on {endpoint} within 60 s; see {LOG_FILE}")


def stop() -> bool:
    from sandbox.kube import KubeCluster, wait_for_exit

    pid = _running_pid()
    if pid:
        os.kill(pid, signal.SIGTERM)
        wait_for_exit(pid, 5.0)
    PID_FILE.unlink(missing_ok=True)
    ENDPOINT_FILE.unlink(missing_ok=True)
    INSTANCE_FILE.unlink(missing_ok=True)

    KubeCluster.stop_recorded(KUBE_DIR)
    return pid is not None


def sandbox_environment(client: SandboxClient) -> dict:
    """What a command run against the sandbox gets: its endpoint, instance id (for SandboxClient()) and credentials, and
    the cluster's kubeconfig (K8S_AUTH_KUBECONFIG, which kubernetes.core and the collection's Kubernetes layer read)."""
    env = dict(os.environ, HYPERPOD_SANDBOX_URL=client.endpoint, HYPERPOD_SANDBOX_INSTANCE=client.instance or "", **SANDBOX_CREDENTIALS)
    if KUBECONFIG_FILE.exists():
        env["K8S_AUTH_KUBECONFIG"] = str(KUBECONFIG_FILE)
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox", description="The local AWS endpoint for hyperpod.tenancy.")
    commands = parser.add_subparsers(dest="command", required=True)
    start_cmd = commands.add_parser("start", help="start in the background (port 5055, or a free one when taken)")
    start_cmd.add_argument("--port", type=int, help="0 picks a free port")
    commands.add_parser("stop")
    commands.add_parser("status")
    commands.add_parser("reset", help="forget every resource, the request log and the faults")
    seed_cmd = commands.add_parser("seed", help="create what an AWS account would already have")
    seed_cmd.add_argument("--project", default=str(ROOT), help="the project whose cluster file (group_vars/all) and team file (teams/) to seed for")
    serve_cmd = commands.add_parser("serve", help="serve in the foreground")
    serve_cmd.add_argument("--port", type=int, default=DEFAULT_PORT)
    serve_cmd.add_argument("--fd", type=int, help="serve on this listening socket (what start hands over) instead of binding --port")
    serve_cmd.add_argument("--instance", help="the id the health check answers (default: a new one)")
    commands.add_parser("requests", help="print the request log, counted per operation")
    run_cmd = commands.add_parser("run", help="start (and seed) if needed, run a command against it, stop what was started")
    run_cmd.add_argument("--no-seed", action="store_true")
    run_cmd.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)

    if args.command == "serve":
        from sandbox.server import serve

        serve("127.0.0.1", args.port, args.instance or new_instance_id(), args.fd)
        return 0
    if args.command == "start":
        client, started = start(args.port)
        print(f"sandbox {'started' if started else 'already running'} at {client.endpoint} (instance {client.instance})")
        return 0
    if args.command == "stop":
        print("sandbox stopped" if stop() else "sandbox was not running")
        return 0
    if args.command == "run":
        client, started = start(None)
        prometheus = None
        try:
            if not args.no_seed:
                from sandbox import prometheus as demo_prometheus
                from sandbox.seed import load_sample, seed_from_vars

                seed_from_vars(client, load_sample(), STATE_DIR / "seed.json")
                if demo_prometheus.installed():
                    # The month of metrics playbooks/usage_report.yml reads through the sandbox's AMP.
                    prometheus = demo_prometheus.serve_demo(client, load_sample(), STATE_DIR)
                else:
                    print("prometheus is not installed (make system-packages): no metrics for playbooks/usage_report.yml", file=sys.stderr)
            command = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
            return subprocess.call(command, env=sandbox_environment(client)) if command else 0
        finally:
            if prometheus is not None:
                prometheus.stop()
            if started:
                stop()
    client = recorded_sandbox()
    problem = not_answering(client) if client else "sandbox not running"
    if args.command == "status":
        print(problem or f"sandbox running at {client.endpoint} (instance {client.instance})")
        return 3 if problem else 0
    if problem:
        print(f"{problem}: python -m sandbox start" if client is None else problem, file=sys.stderr)
        return 3
    if args.command == "reset":
        client.reset()
        print("sandbox reset")
    elif args.command == "seed":
        from sandbox.seed import load_sample, seed_from_vars

        print(json.dumps(seed_from_vars(client, load_sample(Path(args.project)), STATE_DIR / "seed.json"), indent=2))
    elif args.command == "requests":
        for (service, operation, kind), count in sorted(client.counts().items()):
            print(f"{count:5d}  {kind:5s}  {service}:{operation}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
