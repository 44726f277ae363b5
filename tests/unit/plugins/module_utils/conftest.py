"""Fixtures of the module_utils tests."""

from __future__ import annotations

import pytest

from sandbox.client import SANDBOX_CREDENTIALS

# The data bucket of the S3 fixture.
S3_BUCKET = "data"


@pytest.fixture
def s3(monkeypatch):
    """A boto3 S3 client on moto, with the bucket ``data``; ``s3.calls`` lists the operations made since the last ``clear()``."""
    from moto import mock_aws

    for name, value in SANDBOX_CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        import boto3

        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=S3_BUCKET)
        calls = []
        client.meta.events.register("before-call.s3.*", lambda model, **kwargs: calls.append(model.name))
        client.calls = calls
        client.clear = calls.clear
        yield client


@pytest.fixture
def sleeps(monkeypatch):
    """The back-off's sleeps, recorded instead of slept."""
    from ansible_collections.amazon.aws.plugins.module_utils import cloud

    slept = []
    monkeypatch.setattr(cloud.time, "sleep", slept.append)
    return slept
