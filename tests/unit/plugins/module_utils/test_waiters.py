# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.waiters import read_settled


def statuses(*sequence):
    """A describe() that answers each status in turn (then the last one), counting its calls."""
    answers = list(sequence)

    def describe():
        describe.calls += 1
        return {"Status": answers.pop(0) if len(answers) > 1 else answers[0], "FailureReason": "quota exceeded"}

    describe.calls = 0
    return describe


def test_without_wait_the_resource_is_read_once_whatever_its_status():
    describe = statuses("Creating", "Created")
    assert read_settled(describe, "compute quota q", False, ("Created",), timeout=5)["Status"] == "Creating"
    assert describe.calls == 1


def test_with_wait_it_is_read_until_its_status_is_ready():
    describe = statuses("Creating", "Creating", "Created")
    assert read_settled(describe, "compute quota q", True, ("Created",), timeout=30)["Status"] == "Created"
    assert describe.calls == 3


def test_a_failed_status_raises_with_the_reason():
    with pytest.raises(HyperPodError, match="compute quota q is CreateFailed: quota exceeded"):
        read_settled(statuses("CreateFailed"), "compute quota q", True, ("Created",), failed=("CreateFailed",), timeout=5)
