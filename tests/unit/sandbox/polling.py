"""Waiting in sandbox tests for an asynchronous status, as the sandbox's Lifecycle moves it."""

from __future__ import annotations

import time

from botocore.exceptions import ClientError


def unless_gone(read, gone_code: str):
    """``read()``, or None when the service answers ``gone_code`` (the resource no longer exists)."""
    try:
        return read()
    except ClientError as error:
        if error.response["Error"]["Code"] != gone_code:
            raise
        return None


def wait_until(read, wanted, what: str, timeout: float = 10, status=lambda value: value):
    """Poll ``read()`` until ``status`` of it is ``wanted`` (None: gone); the last value read, or a failure naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        current = status(value)
        if current == wanted:
            return value
        assert time.monotonic() < deadline, f"{what} stayed {current}, wanted {wanted}"
        time.sleep(0.05)
