# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The request rates a run keeps to, per AWS service, whatever the number of teams, forks and threads.

A run converges many teams at once (forks, each with a few reads in flight per service: ``calls.READS_IN_FLIGHT``),
so without a pace its request rate grows with the forks and the latency falls, past what AWS accepts: IAM Identity
Center's APIs "have a collective throttle limit of 20 transactions per second" (IAM Identity Center quotas), and a
run that meets it retries the throttled calls, all at once, again. Every request of a client made by
``layer.AWSModule`` first takes a token of its service's bucket (botocore's ``before-send``, so a retry takes one too).
The Identity Store's limit is not collective but each API's: "Identity Store APIs have a throttle limit of 20
transactions per second (TPS) per API" (the same page), so its requests take a token of their operation's bucket
(``PER_API``), as AWS counts them.

``RATES`` are the rates kept by default: nine tenths of Identity Center's documented limit (of each API's, for the
Identity Store); IAM and SageMaker publish none and throttle low, and are kept at the same pace.
``HYPERPOD_AWS_REQUEST_RATES`` (a JSON object, service -> requests per second, each API's for a ``PER_API`` service;
0 for no pace) changes them, for an account whose quotas were raised.

The buckets are the process's own, unless ``share_across_forks`` made them in shared memory before Ansible forked
its workers (``plugin_utils/in_worker.py`` does, in ``ansible-playbook``): then every worker of the run draws from
the same buckets, as AWS counts the account's requests, not a process's.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import threading
import time

RATES = {"sso-admin": 18.0, "identitystore": 18.0, "iam": 18.0, "sagemaker": 18.0}
# The services whose rate is each API's: a bucket per operation.
PER_API = frozenset(["identitystore"])
ENVIRONMENT = "HYPERPOD_AWS_REQUEST_RATES"


class TokenBucket:
    """``rate`` tokens a second, at most one second's worth saved up (one, below one a second); ``take`` waits for one.

    ``state`` holds (tokens, time of the last refill): a list for a process's own bucket, a shared array for one
    shared across forks (``multiprocessing``'s, with its lock). The times are ``time.monotonic``'s, one clock for
    every process of the machine.
    """

    def __init__(self, rate, lock=None, state=None, clock=time.monotonic, sleep=time.sleep):
        self.rate = float(rate)
        self.burst = max(1.0, self.rate)
        self.lock = lock or threading.Lock()
        self.state = state if state is not None else [self.burst, clock()]
        self.clock, self.sleep = clock, sleep

    def take(self):
        # A token not there yet is taken all the same, as a debt the bucket's refill pays: whoever comes next waits
        # behind it, so takers are served in turn and none waits twice.
        with self.lock:
            now = self.clock()
            tokens = min(self.burst, self.state[0] + (now - self.state[1]) * self.rate) - 1
            self.state[0], self.state[1] = tokens, now
        if tokens < 0:
            self.sleep(-tokens / self.rate)


def configured_rates(environ=None):
    """RATES with ``HYPERPOD_AWS_REQUEST_RATES`` applied: {service: requests per second}, no service at 0."""
    rates = dict(RATES)
    text = (os.environ if environ is None else environ).get(ENVIRONMENT)
    if text:
        try:
            given = json.loads(text)
            rates.update((str(service), float(rate)) for service, rate in given.items())
        except (ValueError, TypeError, AttributeError):
            raise ValueError("%s must be a JSON object of service names and requests per second, not %r" % (ENVIRONMENT, text))
    return dict((service, rate) for service, rate in rates.items() if rate > 0)


_buckets = {}
_made = threading.Lock()


def _key(service, operation):
    return (service, operation) if service in PER_API else service


def bucket(service, operation=None):
    """The bucket of ``service`` (of its ``operation``, for a ``PER_API`` service), None for a service without a pace."""
    key = _key(service, operation)
    with _made:
        if key not in _buckets:
            rate = configured_rates().get(service)
            _buckets[key] = TokenBucket(rate) if rate else None
        return _buckets[key]


def _operations(service):
    """The operations of ``service`` in botocore's model (none without botocore: their buckets are then each process's)."""
    try:
        import botocore.session
    except ImportError:
        return []
    return botocore.session.get_session().get_service_model(service).operation_names


def share_across_forks():
    """Make every paced service's bucket in shared memory, so that processes forked from now on draw from the same.

    False where the system has no shared semaphores (no ``/dev/shm``): each process then keeps its own buckets.
    """
    try:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        shared = {}
        for service, rate in configured_rates().items():
            for operation in _operations(service) if service in PER_API else [None]:
                shared[_key(service, operation)] = TokenBucket(rate, context.Lock())
        for paced in shared.values():
            paced.state = context.RawArray("d", paced.state)
    except (ImportError, OSError):
        return False
    with _made:
        _buckets.update(shared)
    return True


def pace(client):
    """Have every request of ``client`` (a retry too) wait for a token of its service's bucket (its operation's, ``PER_API``)."""
    service = client.meta.service_model.service_name
    if service in PER_API and configured_rates().get(service):
        # botocore's event is before-send.<service id>.<operation name>.
        client.meta.events.register("before-send", lambda event_name, **unused: bucket(service, event_name.rsplit(".", 1)[-1]).take())
        return client
    paced = bucket(service)
    if paced is not None:
        client.meta.events.register("before-send", lambda **unused: paced.take())
    return client
