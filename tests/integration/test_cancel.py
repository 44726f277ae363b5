"""A cancelled run leaves no process behind.

A job runner cancels a run by killing its process group: ansible-runner's
``Runner.handle_termination`` sends SIGKILL to the group of the ``ansible-playbook`` it started.
ansible-core's workers (``WorkerProcess._detach``) call ``setsid()``, so that signal does not
reach them. A worker that finishes its task after that writes its result into the result queue,
which nobody reads any more: a result larger than a pipe's buffer (64 KiB on Linux) blocks it for
ever, and the other workers wait on the queue's lock. The ``hyperpod.tenancy.orphan_guard``
callback (enabled in ansible.cfg) has Linux send every worker SIGTERM when its ansible-playbook dies.
The interrupted-onboarding test of test_playbooks.py cancels real runs the same way and asserts
the same.
"""

from __future__ import annotations

import time

import yaml

from tests.integration.playbook_runner import ANSIBLE_PLAYBOOK, ROOT, cancel, processes_of, start

# Waits, then prints about 400 KB: far more than a pipe's buffer, as a team's diff can be.
PLAYBOOK = [
    {
        "name": "Answer at length once released",
        "hosts": "all",
        "gather_facts": False,
        "tasks": [
            {
                "name": "Wait for the release, then print",
                "ansible.builtin.shell": "while [ ! -e {{ release }} ]; do sleep 0.1; done; head -c 300000 /dev/zero | base64",
                "changed_when": False,
            }
        ],
    }
]


def test_workers_end_with_a_run_cancelled_as_ansible_runner_does(tmp_path):
    hosts = ["team_a", "team_b", "team_c"]
    (tmp_path / "hosts.yml").write_text(
        yaml.safe_dump({"all": {"hosts": dict.fromkeys(hosts, {"ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}"})}})
    )
    (tmp_path / "answer.yml").write_text(yaml.safe_dump(PLAYBOOK, sort_keys=False))
    release = tmp_path / "release"
    env = {"ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    run = start([ANSIBLE_PLAYBOOK, "-i", str(tmp_path / "hosts.yml"), str(tmp_path / "answer.yml"), "-e", f"release={release}"], env)
    # Cancel while every host's task runs in a worker of a session of its own.
    deadline = time.monotonic() + 120
    while sum("sleep 0.1" in line for line in processes_of(run.marker).values()) < len(hosts):
        assert run.poll() is None, f"the run ended before its tasks ran: {run.communicate()}"
        assert time.monotonic() < deadline, "the tasks did not start within 120 s"
        time.sleep(0.1)
    workers = [line for line in processes_of(run.marker).values() if f" sid={run.pid} " not in line and "ansible-playbook" in line]
    assert len(workers) == len(hosts), workers
    # Once ansible-playbook is gone, a worker still alive finishes its task and writes its result.
    assert cancel(run, then=release.touch) == []
