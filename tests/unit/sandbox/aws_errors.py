"""What the sandbox answers a refused request with, as sandbox tests check it."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError


def error_code(excinfo) -> str:
    """The AWS error code of the ``ClientError`` that ``pytest.raises`` caught."""
    return excinfo.value.response["Error"]["Code"]


def error(excinfo) -> tuple[str, str]:
    """The AWS error code and message of the ``ClientError`` that ``pytest.raises`` caught."""
    return error_code(excinfo), excinfo.value.response["Error"]["Message"]


def refused(call, *args, **kwargs) -> str:
    """The AWS error code ``call(*args, **kwargs)`` is refused with; the test fails when the call succeeds."""
    with pytest.raises(ClientError) as excinfo:
        call(*args, **kwargs)
    return error_code(excinfo)
