"""``python -m bench.client_cost``: what a team's boto3 clients cost in a worker, cold and warm.

A team's layers make one client per service. In a module process every client loads its service model,
endpoint rule set and the SDK's data files; in the worker of the ``team_resources`` action plugin they come
from the data loader the plugin filled in the ``ansible-playbook`` process before the worker was forked.
This forks a child (as Ansible forks a worker) and prints the CPU seconds its clients cost: from a cold start,
and from the plugin's warm loader. No request is sent.
"""

from __future__ import annotations

import os
import sys
import time

from bench.processes import ROOT

SERVICES = ("sso-admin", "identitystore", "eks", "iam", "sagemaker", "s3", "budgets", "sts")


def clients_cpu_seconds(boto3) -> float:
    start = time.process_time()
    for service in SERVICES:
        boto3.session.Session().client(service, region_name="us-east-1", aws_access_key_id="bench", aws_secret_access_key="bench")
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
    from ansible_collections.hyperpod.tenancy.plugins.action import team_resources

    warmed = time.process_time() - start

    def warm() -> float:
        with team_resources._WarmLoader():
            return clients_cpu_seconds(boto3)

    print(f"{len(SERVICES)} clients in a forked child, cold: {cold:.3f} CPU-s")
    print(f"importing the action plugin (boto3, module_utils, models loaded, clients made once): {warmed:.3f} CPU-s, once per run")
    print(f"{len(SERVICES)} clients in a forked child, from the warm loader: {in_child(warm):.3f} CPU-s")
    print(f"load average: {' '.join('%.2f' % load for load in os.getloadavg())}")


if __name__ == "__main__":
    main()
