"""What the benchmarks need to run their processes: a free port, and a wrapper that measures a command."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from sandbox.client import SandboxClient

ROOT = Path(__file__).resolve().parent.parent

# ``python -c RUSAGE_WRAPPER <file> <command...>`` runs the command and writes [peak RSS KiB,
# CPU seconds] of it and everything under it: a benchmark's own RUSAGE_CHILDREN also holds the
# sandbox servers it has reaped.
RUSAGE_WRAPPER = """
import json, resource, subprocess, sys
code = subprocess.call(sys.argv[2:])
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write(json.dumps([usage.ru_maxrss, usage.ru_utime + usage.ru_stime]))
sys.exit(code)
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def own_sandbox(status_delay: float = 0.2):
    """(server process, client) of a sandbox of the benchmark's own, on a free port, stopped on exit."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "sandbox", "serve", "--port", str(port)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, SANDBOX_STATUS_DELAY=str(status_delay)),
    )
    client = SandboxClient(f"http://127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + 60
        while not client.healthy():
            if time.monotonic() > deadline:
                raise SystemExit("sandbox did not start")
            time.sleep(0.2)
        yield server, client
    finally:
        server.terminate()
        server.wait(timeout=10)
