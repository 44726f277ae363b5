"""The request rates a run keeps to (module_utils/rates.py): a token bucket per service, shared by the forks of a run,
that keeps a paced client under the sandbox's throttling where an unpaced one is throttled."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import rates
from botocore.exceptions import ClientError


class _Clock:
    """A clock that only moves when the bucket sleeps."""

    def __init__(self):
        self.now, self.slept = 100.0, []

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def test_a_bucket_lets_one_seconds_worth_through_then_one_per_period():
    clock = _Clock()
    bucket = rates.TokenBucket(10, clock=lambda: clock.now, sleep=clock.sleep)
    for _taken in range(10):
        bucket.take()
    assert clock.slept == []
    for _taken in range(20):
        bucket.take()
    assert sum(clock.slept) == pytest.approx(2.0)
    # Idle for a minute, it saves up one second's worth, no more.
    clock.now += 60
    for _taken in range(10):
        bucket.take()
    assert sum(clock.slept) == pytest.approx(2.0)
    bucket.take()
    assert sum(clock.slept) == pytest.approx(2.1)


def test_a_rate_below_one_a_second_still_lets_a_request_through():
    clock = _Clock()
    bucket = rates.TokenBucket(0.5, clock=lambda: clock.now, sleep=clock.sleep)
    bucket.take()
    bucket.take()
    assert sum(clock.slept) == pytest.approx(2.0)


def test_the_rates_come_from_the_environment_where_given():
    assert rates.configured_rates({}) == rates.RATES
    raised = rates.configured_rates({rates.ENVIRONMENT: json.dumps({"sso-admin": 90, "iam": 0, "eks": 5})})
    expected = dict(rates.RATES, **{"sso-admin": 90.0, "eks": 5.0})
    del expected["iam"]  # 0: no pace
    assert raised == expected
    with pytest.raises(ValueError, match=rates.ENVIRONMENT):
        rates.configured_rates({rates.ENVIRONMENT: "[20]"})


def test_the_forks_of_a_run_draw_from_one_bucket(monkeypatch):
    """A token a forked worker takes is gone for the parent and every other worker."""
    monkeypatch.setattr(rates, "_buckets", {})
    monkeypatch.setenv(rates.ENVIRONMENT, json.dumps({"sso-admin": 1}))
    rates.share_across_forks()
    shared = rates.bucket("sso-admin")
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's exit status is the assertion
        shared.take()
        os._exit(0)
    assert os.waitpid(child, 0)[1] == 0
    assert shared.state[0] < 1, "the child's token is still in the parent's bucket"
    own = rates.TokenBucket(1)
    assert own.state[0] == 1


class _Sent:
    """What botocore's before-send handlers see of a client: the events it registers, fired by hand."""

    def __init__(self, service):
        self.handlers = []
        self.meta = type("Meta", (), {})()
        self.meta.service_model = type("Model", (), {"service_name": service})()
        self.meta.events = type("Events", (), {"register": lambda unused_self, event, handler: self.handlers.append((event, handler))})()


def test_every_request_of_a_paced_client_takes_a_token_of_its_service(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(rates, "_buckets", {"sso-admin": rates.TokenBucket(2, clock=lambda: clock.now, sleep=clock.sleep), "eks": None})
    paced, unpaced = rates.pace(_Sent("sso-admin")), rates.pace(_Sent("eks"))
    assert unpaced.handlers == [] and [event for event, unused in paced.handlers] == ["before-send"]
    send = paced.handlers[0][1]
    for _request in range(4):
        assert send(request=object()) is None  # None: botocore sends the request
    assert sum(clock.slept) == pytest.approx(1.0)


def test_each_identity_store_api_takes_a_token_of_its_own_bucket(monkeypatch):
    """ "Identity Store APIs have a throttle limit of 20 transactions per second (TPS) per API" (Quotas and limits in IAM
    Identity Center): a second's worth of ListGroups does not hold back GetGroupId, as one bucket for the service would."""
    clock = _Clock()
    monkeypatch.setenv(rates.ENVIRONMENT, json.dumps({"identitystore": 2}))
    apis = ("ListGroups", "GetGroupId")
    monkeypatch.setattr(rates, "_buckets", dict((("identitystore", api), rates.TokenBucket(2, clock=lambda: clock.now, sleep=clock.sleep)) for api in apis))
    [(event, send)] = rates.pace(_Sent("identitystore")).handlers
    for operation in ("ListGroups", "ListGroups", "GetGroupId", "GetGroupId"):
        send(request=object(), event_name="before-send.identitystore.%s" % operation)
    assert event == "before-send" and clock.slept == []
    send(request=object(), event_name="before-send.identitystore.ListGroups")
    assert sum(clock.slept) == pytest.approx(0.5)


def test_the_forks_share_a_bucket_per_identity_store_api(monkeypatch):
    monkeypatch.setattr(rates, "_buckets", {})
    monkeypatch.delenv(rates.ENVIRONMENT, raising=False)
    assert rates.share_across_forks()
    shared = rates.bucket("identitystore", "CreateGroupMembership")
    assert shared is rates._buckets[("identitystore", "CreateGroupMembership")] and not isinstance(shared.state, list)
    assert shared is not rates.bucket("identitystore", "ListGroupMemberships")
    assert rates.bucket("sso-admin", "ListInstances") is rates.bucket("sso-admin", "ListPermissionSets")


def test_a_paced_client_stays_under_the_sandboxs_throttling_where_an_unpaced_one_is_throttled(sandbox, monkeypatch):
    """Eight threads listing Identity Center's instances as fast as they can, against a limit of 5 a second."""
    monkeypatch.setattr(rates, "_buckets", {})
    monkeypatch.setenv(rates.ENVIRONMENT, json.dumps({"sso-admin": 4.5}))
    sandbox.set_faults(rate_limits={"sso-admin": 5})

    def three_calls(client):
        for _call in range(3):
            try:
                client.list_instances()
            except ClientError as error:  # the sandbox's client does not retry: the throttle is in the log
                assert error.response["Error"]["Code"] == "ThrottlingException"

    def burst(client):
        sandbox.clear_requests()
        threads = [threading.Thread(target=three_calls, args=(client,)) for _thread in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return [r for r in sandbox.requests() if r["service"] == "sso-admin"]

    unpaced = burst(sandbox.boto3_client("sso-admin"))
    assert any(r["fault"] == "throttle" for r in unpaced), "the sandbox let a burst of 24 through a limit of 5 a second"
    time.sleep(1.2)  # what the unpaced burst spent of the sandbox's limit comes back
    paced = burst(rates.pace(sandbox.boto3_client("sso-admin")))
    assert [r for r in paced if r["fault"]] == [] and len(paced) == 24


def test_without_shared_semaphores_each_process_keeps_its_own_buckets(monkeypatch):
    import multiprocessing

    def no_shm(unused_method):
        raise OSError(38, "Function not implemented")  # what a system without /dev/shm answers

    monkeypatch.setattr(rates, "_buckets", {})
    monkeypatch.setattr(multiprocessing, "get_context", no_shm)
    assert rates.share_across_forks() is False and rates._buckets == {}
    assert isinstance(rates.bucket("sso-admin").state, list)
