"""Fixtures of the playbook tests."""

from __future__ import annotations

import copy

import pytest

from tests.integration.playbook_runner import SAMPLE, Playbooks


@pytest.fixture
def sample(seeded, tmp_path):
    """The playbooks, run with the sample team file against a seeded sandbox of the test's own."""
    client, seed = seeded
    return Playbooks(client, seed, tmp_path, copy.deepcopy(SAMPLE))
