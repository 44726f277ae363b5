"""The benchmark's rate floor: the least wall time AWS's request rates allow for a run's requests."""

from __future__ import annotations

from bench.__main__ import rate_floor


def test_the_floor_is_the_rate_limited_service_whose_requests_take_longest_at_its_rate():
    log = [{"service": "sso-admin"}] * 405 + [{"service": "sagemaker"}] * 300 + [{"service": "eks"}] * 1000
    assert rate_floor(log) == (20.25, "sso-admin")
    assert rate_floor(log, {"sso-admin": 20, "sagemaker": 10}) == (30.0, "sagemaker")
    # A service AWS does not throttle low here (EKS) sets no floor.
    assert rate_floor([{"service": "eks"}]) == (0.0, "")


def test_the_identity_stores_floor_is_its_busiest_apis():
    """ "Identity Store APIs have a throttle limit of 20 transactions per second (TPS) per API" (Quotas and limits in IAM
    Identity Center): two APIs' requests fit in the time of the busier one's."""
    log = [{"service": "identitystore", "operation": "ListGroups"}] * 30 + [{"service": "identitystore", "operation": "GetGroupId"}] * 40
    assert rate_floor(log) == (2.0, "identitystore:GetGroupId")
