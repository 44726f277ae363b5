"""``python -m sandbox start|stop|status|reset|seed|serve|run|requests``."""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from sandbox.client import DEFAULT_PORT, SANDBOX_CREDENTIALS, SandboxClient

ROOT = Path(__file__).resolve().parent.parent
STATE_DIR = Path(os.environ.get("SANDBOX_STATE_DIR", ROOT / ".sandbox"))
PID_FILE = STATE_DIR / "sandbox.pid"
ENDPOINT_FILE = STATE_DIR / "endpoint"
LOG_FILE = STATE_DIR / "sandbox.log"
# The Kubernetes API server the sandbox's EKS clusters point at (sandbox/kube): its certificates,
# its admin kubeconfig, its data and logs. SANDBOX_KUBERNETES=off runs the sandbox without it.
KUBE_DIR = STATE_DIR / "kube"
KUBECONFIG_FILE = KUBE_DIR / "kubeconfig"


def _kubernetes_wanted() -> bool:
    return os.environ.get("SANDBOX_KUBERNETES", "on").lower() not in ("off", "0", "false", "no")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _port_taken(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _running_pid() -> int | None:
    try:
        pid = int(PID_FILE.read_text())
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError):
        return None


def current_endpoint() -> str | None:
    if _running_pid() and ENDPOINT_FILE.exists():
        return ENDPOINT_FILE.read_text().strip()
    return None


def start(port: int | None) -> tuple[str, bool]:
    """Start the sandbox unless it runs; return (endpoint, whether this call started it)."""
    endpoint = current_endpoint()
    if endpoint and SandboxClient(endpoint).healthy():
        return endpoint, False
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    if port is None:
        port = int(os.environ.get("SANDBOX_PORT", DEFAULT_PORT))
    if port == 0 or _port_taken(port):
        port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    env = dict(os.environ)
    if _kubernetes_wanted():
        from sandbox.kube import KubeCluster

        KubeCluster.stop_recorded(KUBE_DIR)
        KubeCluster(KUBE_DIR).start()
        env["SANDBOX_KUBE_DIR"] = str(KUBE_DIR)
    with open(LOG_FILE, "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "sandbox", "serve", "--port", str(port)],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
        )
    PID_FILE.write_text(str(process.pid))
    ENDPOINT_FILE.write_text(endpoint)
    client = SandboxClient(endpoint)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"sandbox exited with {process.returncode}; see {LOG_FILE}")
        if client.healthy():
            return endpoint, True
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

    KubeCluster.stop_recorded(KUBE_DIR)
    return pid is not None


def sandbox_environment(endpoint: str) -> dict:
    """What a command run against the sandbox gets: its endpoint and credentials, and the cluster's kubeconfig
    (K8S_AUTH_KUBECONFIG, which kubernetes.core and the collection's Kubernetes layer read)."""
    env = dict(os.environ, HYPERPOD_SANDBOX_URL=endpoint, **SANDBOX_CREDENTIALS)
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
    commands.add_parser("requests", help="print the request log, counted per operation")
    run_cmd = commands.add_parser("run", help="start (and seed) if needed, run a command against it, stop what was started")
    run_cmd.add_argument("--no-seed", action="store_true")
    run_cmd.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)

    if args.command == "serve":
        from sandbox.server import serve

        serve("127.0.0.1", args.port)
        return 0
    if args.command == "start":
        endpoint, started = start(args.port)
        print(f"sandbox {'started' if started else 'already running'} at {endpoint}")
        return 0
    if args.command == "stop":
        print("sandbox stopped" if stop() else "sandbox was not running")
        return 0
    if args.command == "status":
        endpoint = current_endpoint()
        healthy = bool(endpoint) and SandboxClient(endpoint).healthy()
        print(f"sandbox running at {endpoint}" if healthy else "sandbox not running")
        return 0 if healthy else 3
    endpoint = current_endpoint()
    if args.command == "run":
        endpoint, started = start(None)
        prometheus = None
        try:
            if not args.no_seed:
                from sandbox import prometheus as demo_prometheus
                from sandbox.seed import load_sample, seed_from_vars

                seed_from_vars(SandboxClient(endpoint), load_sample(), STATE_DIR / "seed.json")
                if demo_prometheus.installed():
                    # The month of metrics playbooks/usage_report.yml reads through the sandbox's AMP.
                    prometheus = demo_prometheus.serve_demo(SandboxClient(endpoint), load_sample(), STATE_DIR)
                else:
                    print("prometheus is not installed (make system-packages): no metrics for playbooks/usage_report.yml", file=sys.stderr)
            command = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
            return subprocess.call(command, env=sandbox_environment(endpoint)) if command else 0
        finally:
            if prometheus is not None:
                prometheus.stop()
            if started:
                stop()
    if not endpoint:
        print("sandbox not running: python -m sandbox start", file=sys.stderr)
        return 3
    client = SandboxClient(endpoint)
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
