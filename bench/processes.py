"""What the benchmarks need to run their processes: a free port, and a wrapper that measures a command."""

from __future__ import annotations

import socket

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
