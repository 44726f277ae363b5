# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""How many of Identity Center's asynchronous requests a run keeps in flight, whatever the number of teams, forks and threads.

IAM Identity Center allows at most 15 ``CreateAccountAssignment`` calls outstanding, 3 ``ProvisionPermissionSet`` calls at
once and one permission-set role updated at a time per account ("Quotas and limits in IAM Identity Center", throttle
limits; they cannot be raised). A request is outstanding until its status (``DescribeAccountAssignmentCreationStatus``,
``DescribePermissionSetProvisioningStatus``) leaves ``IN_PROGRESS``. A run converges every team at once, one fork each,
so without a bound it sends as many as it has forks and Identity Center refuses the rest (ConflictException: AWS
documents no other answer, an assumption the sandbox shares, ``sandbox/services/sso_admin.py``).

So a request takes a slot before it is sent and gives it back once its status is read settled (``held``): the
run's slots never number more than the limits, and each is held at least as long as Identity Center counts the request.
``LIMITS`` are the slots; the per-account limit is one lock per account (``ACCOUNT_LOCKS`` locks, an account's chosen by
its id: two accounts that share a lock only wait for each other). Deletions of assignments take the assignments' slots
too: the quota page names ``CreateAccountAssignment`` only, but a deletion is the same kind of asynchronous write (an
assumption that only ever makes a run wait, never refused).

The slots are the process's own, unless ``share_across_forks`` made them in shared memory before Ansible forked its
workers (``plugin_utils/in_worker.py`` does, as it does for ``rates.py``'s buckets): then every worker of the run takes
from the same, as Identity Center counts the instance's requests, not a process's. A second run at the same time (an
onboarding while the scheduled correction runs) has slots of its own: the ConflictException backoff of the calls
(``identity_center.py``) is what keeps the two within the limits together.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import threading
import zlib

LIMITS = {"assignments": 15, "provisionings": 3}
ACCOUNT_LOCKS = 16
# How long a request waits for a slot before it goes without one: a slot is given back when its request settles, so
# only a worker killed while holding one keeps it for good; the call's ConflictException backoff then takes over.
WAIT_FOR_SLOT = 600


class Slots:
    """``count`` requests in flight at once, ``held`` around each; the semaphore is the process's or one shared across forks."""

    def __init__(self, count, semaphore=None):
        self.count = count
        self.semaphore = semaphore if semaphore is not None else threading.BoundedSemaphore(count)

    @contextlib.contextmanager
    def held(self, timeout=WAIT_FOR_SLOT):
        taken = self.semaphore.acquire(True, timeout)
        try:
            yield taken
        finally:
            if taken:
                self.semaphore.release()


_slots = dict((name, Slots(count)) for name, count in LIMITS.items())
_account_locks = [Slots(1) for unused in range(ACCOUNT_LOCKS)]
_made = threading.Lock()


def slots(name):
    """The run's slots ``name`` (a key of ``LIMITS``)."""
    with _made:
        return _slots[name]


def account_lock(account_id):
    """The slot of ``account_id``'s permission-set roles: one role updated at a time per account."""
    with _made:
        return _account_locks[zlib.crc32(str(account_id).encode()) % len(_account_locks)]


@contextlib.contextmanager
def provisioning(account_id, timeout=WAIT_FOR_SLOT):
    """Held while a ProvisionPermissionSet to ``account_id`` is in flight: the account's lock, then a provisioning slot
    (always in that order, so two holders never wait for each other)."""
    with account_lock(account_id).held(timeout), slots("provisionings").held(timeout):
        yield


def share_across_forks():
    """Make the slots in shared memory, so that processes forked from now on take from the same.

    False where the system has no shared semaphores (no ``/dev/shm``): each process then keeps its own slots.
    """
    global _slots, _account_locks
    try:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        shared = dict((name, Slots(count, context.BoundedSemaphore(count))) for name, count in LIMITS.items())
        locks = [Slots(1, context.BoundedSemaphore(1)) for unused in range(ACCOUNT_LOCKS)]
    except (ImportError, OSError):
        return False
    with _made:
        _slots, _account_locks = shared, locks
    return True
