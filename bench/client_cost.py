"""``python -m bench.client_cost``: what a team's boto3 clients cost in a worker, cold and warm.

A team's layers make one client per service. In a module process every client loads its service model,
endpoint rule set and the SDK's data files; in the worker of the ``team_resources`` action plugin they come
from the data loader the plugin filled in the ``ansible-playbook`` process before the worker was forked.
This forks a child (as Ansible forks a worker) and prints the CPU seconds its clients cost: from a cold start,
from the plugin's warm loader, and from the warm loader with one boto3 session for all of them (as
``layer.AWSModule`` makes a run's clients; amazon.aws makes a session per client). No request is sent.
"""

from __future__ import annotations

import os
import sys
import time

from bench.processes import ROOT

SERVICES = ("sso-admin", "identitystore", "eks", "iam", "sagemaker", "s3", "budgets", "sts")


def clients_cpu_seconds(boto3, one_session=False) -> float:
    start = time.process_time()
    shared = boto3.session.Session() if one_session else None
    for service in SERVICES:
        session = shared or boto3.session.Session()
        session.client(service, region_name="us-east-1", aws_access_key_id="bench", aws_secret_access_key="bench")
    return time.process_time() - start


def in_child(measure) -> float:
    """``measure()`` in a forked child: its CPU seconds, as a worker forked from this process would spend them."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.write(write, repr(measure()).encode())
        os._exit(0)
    os.close(write)
    answer = os.read(read, 64)
    os.waitpid(pid, 0)
    return float(answer)


def main() -> None:
    sys.path.insert(0, str(ROOT / "collections"))
    import boto3

    cold = in_child(lambda: clients_cpu_seconds(boto3))
    start = time.process_time()
    from ansible_collections.hyperpod.tenancy.plugins.action import team_resources  # noqa: F401 - imported for its warm start
    from ansible_collections.hyperpod.tenancy.plugins.plugin_utils import in_worker

    warmed = time.process_time() - start

    def warm(one_session=False) -> float:
        with in_worker._WarmLoader():
            return clients_cpu_seconds(boto3, one_session)

    print(f"{len(SERVICES)} clients in a forked child, cold: {cold:.3f} CPU-s")
    print(f"importing the action plugin (boto3, module_utils, models loaded, clients made once): {warmed:.3f} CPU-s, once per run")
    print(f"{len(SERVICES)} clients in a forked child, from the warm loader: {in_child(warm):.3f} CPU-s")
    print(f"{len(SERVICES)} clients in a forked child, from the warm loader and one session: {in_child(lambda: warm(True)):.3f} CPU-s")
    print(f"load average: {' '.join('%.2f' % load for load in os.getloadavg())}")


if __name__ == "__main__":
    main()
