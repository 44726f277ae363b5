"""The widening corpus on the sandbox enforcing IAM (issue 37), a stratified part of it: one leak and one benign statement
of each family, on the three principal kinds by turns (``bench.isolation_corpus_live.stratified``, 20 of the 504).

The sample teams and ``vis`` are built once; ``playbooks/verify_isolation.yml`` passes on them; then each statement is put
on its principal's role, verify_isolation's own code runs against the sandbox's IAM and Access Analyzer (crossing that
principal with every team's resources, with what the previous entry's run remembered), its verdict is checked, and the
statement is removed. The whole corpus is too long for CI (1.3 CPU-s a statement, 0.4 of them in verify_isolation's
code and 0.9 in the sandbox: 580 CPU-s): ``python -m bench.isolation_corpus_live`` runs it and exits 1 on any miss or
false alarm.
"""

from __future__ import annotations

import pytest

from bench.isolation_corpus_live import built, corpus_settings, run_entries, stratified
from sandbox.seed import seed
from tests.integration.playbook_runner import SAMPLE, Playbooks, assert_ok
from tests.unit.plugins.module_utils import widening_corpus as corpus


@pytest.fixture
def corpus_sample(sandbox, tmp_path):
    """The playbooks, with the corpus's teams (the sample's and ``vis``), against the worker's sandbox seeded for them."""
    settings = corpus_settings(SAMPLE)
    return Playbooks(sandbox, seed(sandbox, settings), tmp_path, settings)


def test_every_leak_of_the_stratified_corpus_fails_verify_isolation_and_every_benign_statement_passes(corpus_sample):
    assert_ok(corpus_sample.run("site.yml"), "site.yml")
    entries = stratified()
    assert {(e.family, e.label) for e in entries} == {(family, label) for family in corpus.FAMILIES for label in (corpus.LEAK, corpus.BENIGN)}
    assert {e.principal.split("/")[1] for e in entries} == set(corpus.KINDS)
    outcome = run_entries(built(corpus_sample), entries)
    # Each entry's own verdict: a leak reported on the owners it reaches and no other, a benign statement nowhere.
    assert outcome["misses"] == []
    assert outcome["refused"] == []
    assert sum(outcome["caught"].values()) == len(entries)
    # Each run crossed one principal and kept what the others' answers were: once the statements are gone and the trusts
    # as they were, a run of every principal asks IAM nothing the playbook's run did not answer.
    assert outcome["final"]["remembered_principals"] == outcome["final"]["principals"] == 12
    assert outcome["final"]["simulate_calls"] == 0
