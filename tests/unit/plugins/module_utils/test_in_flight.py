"""Identity Center's requests in flight (module_utils/in_flight.py) and the ConflictException backoff of its asynchronous
writes (identity_center.py, retry.conflict_backoff): the run's forks and threads together never hold more requests in
flight than Identity Center allows, and a refused write is retried after a jittered, growing, bounded sleep."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import identity_center, in_flight
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import IdentityCenterError, error_code

from tests.unit.plugins.module_utils.test_calls import stubbed

INSTANCE = "arn:aws:sso:::instance/ssoins-1111111111111111"
PERMISSION_SET = "arn:aws:sso:::permissionSet/ssoins-1111111111111111/ps-2222222222222222"
REQUEST_ID = "11111111-2222-3333-4444-555555555555"
ASSIGNMENT = dict(
    InstanceArn=INSTANCE, PermissionSetArn=PERMISSION_SET, TargetId="123456789012", TargetType="AWS_ACCOUNT",
    PrincipalType="GROUP", PrincipalId="g-1",
)


@pytest.fixture
def own_slots(monkeypatch):
    """The module's slots put back after the test (share_across_forks replaces them)."""
    monkeypatch.setattr(in_flight, "_slots", dict(in_flight._slots))
    monkeypatch.setattr(in_flight, "_account_locks", list(in_flight._account_locks))


class _Peak:
    """How many holders at once, counted in shared memory (across forks and threads)."""

    def __init__(self):
        self.now, self.peak, self.lock = multiprocessing.RawValue("i", 0), multiprocessing.RawValue("i", 0), multiprocessing.Lock()

    def hold(self, held, seconds=0.15):
        with held:
            with self.lock:
                self.now.value += 1
                self.peak.value = max(self.peak.value, self.now.value)
            time.sleep(seconds)
            with self.lock:
                self.now.value -= 1


def test_the_forks_of_a_run_hold_at_most_the_limit_together(own_slots, monkeypatch):
    """Six workers each sending an assignment at once: never more than the limit outstanding (here 2) in the run."""
    monkeypatch.setattr(in_flight, "LIMITS", {"assignments": 2, "provisionings": 1})
    assert in_flight.share_across_forks()
    peak = _Peak()
    children = []
    for _worker in range(6):
        child = os.fork()
        if child == 0:  # pragma: no cover - the child's exit status is the assertion
            peak.hold(in_flight.slots("assignments").held())
            os._exit(0)
        children.append(child)
    assert all(os.waitpid(child, 0)[1] == 0 for child in children)
    assert peak.peak.value == 2


def test_one_role_is_provisioned_at_a_time_per_account_and_three_at_once_in_all(own_slots):
    accounts = []
    for number in range(100000000000, 100000001000):
        account = str(number)
        if in_flight.account_lock(account) not in [in_flight.account_lock(a) for a in accounts]:
            accounts.append(account)
    one_account, peak = _Peak(), _Peak()
    for group in (
        [threading.Thread(target=one_account.hold, args=(in_flight.provisioning("123456789012"),)) for _thread in range(4)],
        [threading.Thread(target=peak.hold, args=(in_flight.provisioning(account),)) for account in accounts[:6]],
    ):
        for thread in group:
            thread.start()
        for thread in group:
            thread.join()
    assert one_account.peak.value == 1
    assert peak.peak.value == in_flight.LIMITS["provisionings"] == 3


def test_a_slot_not_given_back_in_time_lets_the_request_go_without_it(own_slots):
    """Only a worker killed while holding one keeps a slot: the others go on after the wait, and the backoff takes over."""
    held = in_flight.Slots(1)
    with held.held() as first, held.held(timeout=0.05) as second:
        assert (first, second) == (True, False)
    with held.held(timeout=0.05) as again:
        assert again is True


@pytest.mark.parametrize("operation", ["create_account_assignment", "delete_account_assignment", "provision_permission_set"])
def test_a_conflict_is_retried_after_a_jittered_growing_sleep(sleeps, operation):
    client, stub = stubbed("sso-admin")
    if operation == "provision_permission_set":
        request = dict(InstanceArn=INSTANCE, PermissionSetArn=PERMISSION_SET, TargetId="123456789012", TargetType="AWS_ACCOUNT")
        answer = {"PermissionSetProvisioningStatus": {"RequestId": REQUEST_ID, "Status": "IN_PROGRESS"}}
    else:
        request = ASSIGNMENT
        key = "AccountAssignmentCreationStatus" if operation.startswith("create") else "AccountAssignmentDeletionStatus"
        answer = {key: {"RequestId": REQUEST_ID, "Status": "IN_PROGRESS"}}
    for _refusal in range(3):
        stub.add_client_error(operation, service_error_code="ConflictException", http_status_code=409, expected_params=request)
    stub.add_response(operation, answer, request)
    with stub:
        assert getattr(identity_center, operation)(client, **request)["RequestId"] == REQUEST_ID
    stub.assert_no_pending_responses()
    # Full jitter: each sleep drawn from zero to a cap that doubles (1, 2, 4 s).
    assert len(sleeps) == 3 and all(0 <= slept <= cap for slept, cap in zip(sleeps, (1, 2, 4), strict=True))


def test_a_conflict_that_lasts_gives_up_within_a_bound(sleeps):
    """The same code is a lost race too (another run's assignment): the backoff ends and the layer converges again."""
    client, stub = stubbed("sso-admin")
    for _refusal in range(7):
        stub.add_client_error("create_account_assignment", service_error_code="ConflictException", http_status_code=409)
    with stub, pytest.raises(IdentityCenterError) as raised:
        identity_center.create_account_assignment(client, **ASSIGNMENT)
    assert error_code(raised.value) == "ConflictException"
    assert len(sleeps) == 6 and sum(sleeps) <= 1 + 2 + 4 + 8 + 16 + 16
