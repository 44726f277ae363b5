"""A run keeps within Identity Center's limits on requests in flight (module_utils/in_flight.py): 15 CreateAccountAssignment
calls outstanding, 3 ProvisionPermissionSet calls at once, one permission-set role updated at a time per account, which
the sandbox applies as AWS does (services/sso_admin.py, refusing beyond them with ConflictException). A cold onboarding of
16 teams at 16 forks, then a change to every team's permission set at once (its session duration, which Identity Center
copies into the account's roles only when provisioned again), converge without one refused call: the run's workers hold
their slots together until each request settles."""

from __future__ import annotations

from tests.integration.playbook_runner import assert_ok
from tests.integration.test_playbooks import generated

TEAMS = 16
# Long enough that a team's provisioning is still in progress when the other teams send theirs (the onboarding runs at the
# tests' 0.2 s: at 1 s the 16 teams' assignments were still not 16 in flight at once, and the run took 50 s longer).
STATUS_DELAY = 0.5
ASYNC_WRITES = ("CreateAccountAssignment", "DeleteAccountAssignment", "ProvisionPermissionSet")


def _async_writes(client) -> list:
    return [(r["operation"], r["status"]) for r in client.requests() if r["service"] == "sso-admin" and r["operation"] in ASYNC_WRITES]


def test_sixteen_teams_at_sixteen_forks_are_never_refused_by_identity_centers_limits(sandbox, tmp_path):
    playbooks = generated(sandbox, tmp_path, TEAMS)
    env = dict(playbooks.env, ANSIBLE_FORKS=str(TEAMS))

    sandbox.clear_requests()
    assert_ok(playbooks.run("site.yml", env=env), "cold site.yml of 16 teams at 16 forks")
    cold = _async_writes(sandbox)
    assert [status for _operation, status in cold if status >= 400] == [], cold
    assert sum(operation == "CreateAccountAssignment" for operation, _status in cold) >= TEAMS

    sandbox.configure(status_delay=STATUS_DELAY)
    sandbox.clear_requests()
    assert_ok(playbooks.run("site.yml", "-e", "identity_session_duration=PT4H", env=env), "every team's permission set changed at once")
    changed = _async_writes(sandbox)
    assert [status for _operation, status in changed if status >= 400] == [], changed
    assert sum(operation == "ProvisionPermissionSet" for operation, _status in changed) == TEAMS
