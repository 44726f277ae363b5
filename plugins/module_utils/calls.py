# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""How a one-call API wrapper is made: the service's error handler around the collection's retry.

``retry_codes`` are error codes the call also retries (IAM's ConcurrentModification, Cost Explorer's
LimitExceededException), besides throttling and IAM propagation.

Each service file (``sagemaker.py``, ``eks.py``, ``identity_center.py``, ...) declares its calls with
these, so that every call has one contract (its boto3 keyword arguments in, one documented value
out) and goes through the same retry (``retry.aws_retry``: it wraps the function, so it takes
effect on any boto3 client; ``module.client(retry_decorator=...)`` only retries a call made with
``aws_retry=True``, which no wrapper does).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from concurrent.futures import ThreadPoolExecutor

from ansible_collections.hyperpod.tenancy.plugins.module_utils.retry import aws_retry

# How many of one service's reads shared_info keeps in flight when it reads one thing per team: a read waits on
# AWS's latency, not on this process, and four at once stay far below the request rates the services allow.
# ``together`` keeps it the bound per service for a whole phase set: two phases reading one service never overlap.
READS_IN_FLIGHT = 4


def _pick(response, key):
    if key is None:
        return dict((k, v) for k, v in (response or {}).items() if k != "ResponseMetadata")
    return response[key]


def _named(function, operation):
    function.__name__ = function.__qualname__ = operation
    return function


def read(handler, what, operation, key=None, default=None, missing_ok=True, retry_codes=()):
    """``client.<operation>(**request)`` (its ``key``, or the response less its metadata); ``default`` when missing.

    With ``missing_ok=False`` a missing resource raises, as any other error (a read that only follows another read of the resource).
    """
    guard = handler.list_error_handler(what, default) if missing_ok else handler.common_error_handler(what)

    @guard
    @aws_retry(extra_codes=retry_codes)
    def call(client, **request):
        return _pick(getattr(client, operation)(**request), key)

    return _named(call, operation)


def write(handler, what, operation, key=None, retry_codes=(), backoff=None):
    """``client.<operation>(**request)`` (its ``key``, or the response less its metadata); any error raises.

    ``backoff`` (a retry decorator such as ``retry.conflict_backoff()``) retries, around the throttling retry, what the
    service asks to be retried on its own schedule.
    """

    @aws_retry(extra_codes=retry_codes)
    def call(client, **request):
        return _pick(getattr(client, operation)(**request), key)

    return _named(handler.common_error_handler(what)(backoff(call) if backoff else call), operation)


def delete(handler, what, operation, retry_codes=()):
    """``client.<operation>(**request)``: True when deleted, False when it was already gone."""

    @handler.deletion_error_handler(what)
    @aws_retry(extra_codes=retry_codes)
    def call(client, **request):
        getattr(client, operation)(**request)
        return True

    return _named(call, operation)


def listing(handler, what, operation, key, page_size=None, missing_ok=True, retry_codes=()):
    """Every item under ``key`` of every page of ``operation``, as a list.

    A missing parent gives ``[]`` (or raises, with ``missing_ok=False``). ``page_size`` asks for
    the API's largest page where every team lists the same collection.
    """
    guard = handler.list_error_handler(what, None) if missing_ok else handler.common_error_handler(what)

    @guard
    @aws_retry(extra_codes=retry_codes)
    def pages(client, **request):
        if page_size:
            request["PaginationConfig"] = {"PageSize": page_size}
        return client.get_paginator(operation).paginate(**request).build_full_result().get(key, [])

    def call(client, **request):
        return pages(client, **request) or []

    return _named(call, operation)


def crud(handler, noun, name, list_key, page_size=None):
    """``list_<name>s``, ``describe_``, ``create_``, ``update_`` and ``delete_<name>``: a resource whose API has all five."""
    return (
        listing(handler, "list %ss" % noun, "list_%ss" % name, list_key, page_size=page_size),
        read(handler, "describe %s" % noun, "describe_%s" % name),
        write(handler, "create %s" % noun, "create_%s" % name),
        write(handler, "update %s" % noun, "update_%s" % name),
        delete(handler, "delete %s" % noun, "delete_%s" % name),
    )


def each(function, items, workers=READS_IN_FLIGHT):
    """``[function(item) for item in items]`` with up to ``workers`` calls in flight at once (boto3 clients are
    thread-safe); the first error, in the items' order, is raised."""
    items = list(items)
    if len(items) < 2 or workers < 2:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(workers, len(items))) as pool:
        return list(pool.map(function, items))


def together(*phases):
    """``[function() for services, function in phases]``, the phases that read different services in flight together.

    A phase is ``(services, function)``: the AWS services (a name, or several) that ``function`` reads. A phase waits
    for every earlier phase that reads one of its services, so no service ever has two phases' reads in flight, and as
    a phase keeps at most READS_IN_FLIGHT reads in flight (``each``), no service gets more than READS_IN_FLIGHT from
    a ``together``: Identity Center's, IAM's and SageMaker's low request rates hold however many phases there are.

    The results come in the phases' order, once every phase has ended. The first error in the phases' order is raised,
    the one running them one after another would raise: a phase after a failed one of its services is not run, and
    a phase of other services already ran (more reads than one after another, only on the way to that error).
    """
    phases = [(frozenset([services]) if isinstance(services, str) else frozenset(services), function) for services, function in phases]
    if len(phases) < 2:
        return [function() for unused_services, function in phases]
    # One thread per phase: a phase that waits for an earlier one never holds the thread that one needs.
    with ThreadPoolExecutor(max_workers=len(phases)) as pool:
        futures = []
        for services, function in phases:
            earlier = [future for (their_services, unused_function), future in zip(phases, futures) if their_services & services]
            futures.append(pool.submit(_after, earlier, function))
    return [future.result() for future in futures]


def _after(earlier, function):
    # An earlier phase's error is the one to raise; this phase's answer would never be looked at.
    if any(future.exception() is not None for future in earlier):
        return None
    return function()
