"""A pytest plugin: the wall time and the CPU seconds of every test, for the suite's time budget (docs/development.md).

``PYTHONPATH=. .venv/bin/pytest -p bench.pytest_cost -n 0 tests/integration/test_x.py`` (pytest loads the plugin
before tests/conftest.py puts the checkout on the path) appends one JSON line per test to
``$TEST_COST_REPORT`` (default ``test-cost.jsonl`` in the working directory): ``{"test", "wall", "cpu"}``.
CPU seconds are those of pytest itself, of its children that ended (``ansible-playbook`` and every module
process it forked) and the growth of its live descendants' (the worker's sandbox, etcd, kube-apiserver and
kube-controller-manager, which live for the session). A loaded machine moves them
far less than the wall time (the same test measured 161 and 133 CPU-s at a load of 10 to 25, 587 and 763 s wall),
so runs on a shared machine compare by them. Under xdist each worker measures its own processes and appends its own lines.
"""

from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path

import pytest

TICKS = os.sysconf("SC_CLK_TCK")


def _descendants_cpu(root: int) -> float:
    """CPU seconds (their own and their ended children's) of the live processes descending from ``root``."""
    parent, seconds = {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # /proc/<pid>/stat after the command: state ppid ... utime(12) stime(13) cutime(14) cstime(15)
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        pid = int(entry.name)
        parent[pid] = int(fields[1])
        seconds[pid] = sum(int(value) for value in fields[11:15]) / TICKS
    total = 0.0
    for pid, spent in seconds.items():
        ancestor, hops = parent.get(pid), 0
        while ancestor not in (None, 0, 1, root) and hops < 64:
            ancestor, hops = parent.get(ancestor), hops + 1
        if ancestor == root:
            total += spent
    return total


def cpu_seconds() -> float:
    """CPU seconds of this process, its ended children and its live descendants."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    ended = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + ended.ru_utime + ended.ru_stime + _descendants_cpu(os.getpid())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    wall, cpu = time.monotonic(), cpu_seconds()
    yield
    line = {"test": item.nodeid, "wall": round(time.monotonic() - wall, 1), "cpu": round(cpu_seconds() - cpu, 1)}
    with open(os.environ.get("TEST_COST_REPORT", "test-cost.jsonl"), "a", encoding="utf-8") as report:
        report.write(json.dumps(line) + "\n")
