"""`python -m sandbox stop` stops every server `python -m sandbox start` started, as `make demo` relies on.

Started and stopped from processes of their own (as `python -m sandbox run` does), so the servers are nobody's
children here and a server that outlives the stop shows as a live process id.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import ROOT


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def test_stop_leaves_no_server_running(tmp_path):
    env = dict(os.environ, SANDBOX_STATE_DIR=str(tmp_path), SANDBOX_PORT="0")
    subprocess.run([sys.executable, "-m", "sandbox", "start"], cwd=ROOT, env=env, check=True, capture_output=True)
    pids = [int(pid) for pid in (tmp_path / "kube" / "pids").read_text().split()]
    pids.append(int((tmp_path / "sandbox.pid").read_text()))
    assert len(pids) == 4 and all(alive(pid) for pid in pids)  # etcd, kube-apiserver, kube-controller-manager, the sandbox
    subprocess.run([sys.executable, "-m", "sandbox", "stop"], cwd=ROOT, env=env, check=True, capture_output=True)
    assert [pid for pid in pids if alive(pid)] == []
