"""A run keeps to AWS's request rates (module_utils/rates.py): with the sandbox throttling what a service receives
beyond its rate, as AWS throttles an account, site.yml onboards the sample teams without one throttled request, all its
workers pacing their requests together; the same run without the pace is throttled."""

from __future__ import annotations

import json

from sandbox import iam_propagation
from tests.integration.playbook_runner import assert_ok

# Low enough that the sample's three teams, converged at once, go past them unpaced.
LIMITS = {"sso-admin": 4, "identitystore": 4, "iam": 6, "sagemaker": 6}


def _throttled(sample) -> list:
    return [f"{r['service']}:{r['operation']}" for r in sample.client.requests() if r.get("fault") == "throttle"]


def test_a_run_paced_below_the_accounts_rates_is_never_throttled(sample):
    sample.client.set_faults(rate_limits=LIMITS, iam_propagation_s=iam_propagation.DEFAULT_DELAY)
    paced = dict(sample.env, HYPERPOD_AWS_REQUEST_RATES=json.dumps({service: 0.9 * rate for service, rate in LIMITS.items()}))
    sample.client.clear_requests()
    assert_ok(sample.run("site.yml", env=paced), "site.yml, paced")
    assert _throttled(sample) == []
    assert {r["service"] for r in sample.client.requests()} >= set(LIMITS)

    unpaced = dict(sample.env, HYPERPOD_AWS_REQUEST_RATES=json.dumps(dict.fromkeys(LIMITS, 0)))
    sample.client.clear_requests()
    sample.run("site.yml", env=unpaced)
    assert _throttled(sample), "the no-op's reads, unpaced, stayed under the sandbox's limits: this test proves nothing"
