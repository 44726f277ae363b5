# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Polling for the asynchronous SageMaker, EKS and Identity Center operations.

botocore ships no waiters for compute quotas, scheduler configs, access entries
or permission-set provisioning, so every module waits through this one loop.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError

GONE = None


def wait_for_status(describe, what, ready, failed=(), timeout=1800, status_key="Status", reason_key="FailureReason", first_delay=0.5, max_delay=15):
    """Call ``describe()`` until its status is in ``ready``; return the last resource.

    ``describe`` returns the resource or ``None`` when it does not exist; put
    ``GONE`` in ``ready`` to wait for a deletion. A status in ``failed`` raises
    with the resource's failure reason; so does running out of ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    delay = first_delay
    while True:
        resource = describe()
        status = GONE if resource is None else resource.get(status_key)
        if status in ready:
            return resource
        if status in failed:
            reason = (resource or {}).get(reason_key) or "no reason given"
            raise HyperPodError(message="%s is %s: %s" % (what, status, reason))
        if time.monotonic() + delay > deadline:
            raise HyperPodError(message="Timed out after %ss waiting for %s to be %s (status: %s)" % (timeout, what, "/".join(str(r) for r in ready), status))
        time.sleep(delay)
        delay = min(delay * 2, max_delay)


def read_settled(describe, what, wait, ready, failed=(), timeout=1800):
    """``describe()``'s resource: read once when ``wait`` is off, else once its status is in ``ready`` (``wait_for_status``)."""
    if not wait:
        return describe()
    return wait_for_status(describe, what, ready=ready, failed=failed, timeout=timeout)
