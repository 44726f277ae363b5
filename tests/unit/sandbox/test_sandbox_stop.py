"""`python -m sandbox stop` stops every server `python -m sandbox start` started, as `make demo` relies on.

Started and stopped from processes of their own (as `python -m sandbox run` does), so the servers are nobody's
children here and a server that outlives the stop shows as a live process id.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from tests.conftest import ROOT


def answers_signal_0(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"


def alive(pid: int) -> bool:
    """Running: an exited server waiting for its parent (process 1 here) to reap it is not."""
    return state(pid) not in ("gone", "Z")


def test_stop_leaves_no_server_running(tmp_path):
    env = dict(os.environ, SANDBOX_STATE_DIR=str(tmp_path), SANDBOX_PORT="0")
    subprocess.run([sys.executable, "-m", "sandbox", "start"], cwd=ROOT, env=env, check=True, capture_output=True)
    pids = [int(pid) for pid in (tmp_path / "kube" / "pids").read_text().split()]
    pids.append(int((tmp_path / "sandbox.pid").read_text()))
    assert len(pids) == 4 and all(alive(pid) for pid in pids)  # etcd, kube-apiserver, kube-controller-manager, the sandbox
    subprocess.run([sys.executable, "-m", "sandbox", "stop"], cwd=ROOT, env=env, check=True, capture_output=True)
    assert [pid for pid in pids if alive(pid)] == []


def test_a_server_that_has_exited_is_not_waited_for_as_if_it_ran(tmp_path):
    """`python -m sandbox run` starts the Kubernetes servers as its own children and stops them by pid: an exited child
    is a zombie, which answers signal 0, until reaped. Waited for as a live process, each took its whole timeout (a
    `sandbox run` spent 50 s stopping); now the child is reaped and the wait ends at once."""
    from sandbox.kube import wait_for_exit

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    while state(child.pid) != "Z":
        time.sleep(0.01)
    assert answers_signal_0(child.pid)  # what the old wait took for a running server
    started = time.monotonic()
    wait_for_exit(child.pid, 15.0)
    assert time.monotonic() - started < 1.0 and state(child.pid) == "gone"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    started = time.monotonic()
    wait_for_exit(sleeper.pid, 0.5)  # a running process is still waited for
    assert time.monotonic() - started >= 0.5 and alive(sleeper.pid)
    sleeper.kill()
    sleeper.wait()
