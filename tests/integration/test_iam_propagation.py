"""A cold site.yml converges although IAM is eventually consistent: every new role is refused for a moment.

The sandbox refuses a role for ``iam_propagation_s`` seconds after its CreateRole, with what each service
answers (sandbox/iam_propagation.py); the modules wait it out with the bounded retries of exactly those
errors (module_utils/retry.py ``IAM_PROPAGATION``). The request log shows each refusal and the retry after it.
"""

from __future__ import annotations

from tests.integration.playbook_runner import assert_ok

DELAY = 2.0


def test_a_cold_site_run_waits_out_new_roles(sample):
    sample.client.set_faults(iam_propagation_s=DELAY)
    sample.client.clear_requests()
    assert_ok(sample.run("site.yml"), "site.yml while new roles are refused")
    requests = sample.client.requests()
    # Per team: the access entries of its permission-set role and of its Studio execution role; its pods role's association.
    for operation, made in (("CreateAccessEntry", 6), ("CreatePodIdentityAssociation", 3)):
        statuses = [r["status"] for r in requests if r["operation"] == operation]
        # Refused while the team roles were new, then accepted: every team got its entry and association.
        assert 400 in statuses, (operation, statuses)
        assert statuses.index(400) < len(statuses) - 1 and statuses[-1] == 200, (operation, statuses)
        assert statuses.count(200) == made, (operation, statuses)
    sample.client.set_faults(iam_propagation_s=0)
    rerun = sample.run("site.yml")
    assert_ok(rerun, "site.yml again")
    assert rerun.changed_tasks() == set()
