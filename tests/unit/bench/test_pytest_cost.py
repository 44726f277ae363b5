"""bench/pytest_cost.py counts the CPU of live descendants (a session's sandbox and API server) and of ended children."""

from __future__ import annotations

import subprocess
import sys

from bench import pytest_cost

# A child that spends 0.3 CPU seconds of its own (process_time), says so, then waits.
BURN = "import time\nwhile time.process_time() < 0.3: pass\nprint('burnt', flush=True)\nsys.stdin.read()"


def test_a_live_descendant_s_cpu_is_counted_then_an_ended_child_s():
    before = pytest_cost.cpu_seconds()
    child = subprocess.Popen([sys.executable, "-c", "import sys\n" + BURN], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "burnt\n"
        assert pytest_cost._descendants_cpu(pytest_cost.os.getpid()) >= 0.29
        assert pytest_cost.cpu_seconds() - before >= 0.29
    finally:
        child.communicate("")
    # Reaped: its CPU moved to this process's RUSAGE_CHILDREN, still counted once.
    assert pytest_cost.cpu_seconds() - before >= 0.29
