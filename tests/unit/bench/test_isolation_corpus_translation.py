"""bench/isolation_corpus_live.py without a sandbox: how a corpus statement's team ids become the sandbox's, and CI's part."""

from __future__ import annotations

import pytest

from bench.isolation_corpus_live import _id_translation, stratified
from tests.unit.plugins.module_utils import widening_corpus as corpus

UNIT = {"nlp": "q00000000000", "research": "q00000000001", "vis": "q00000000002", "vision": "q00000000003"}
LIVE = {"nlp": "vpkz6mulswef", "research": "hly9sg23bd2o", "vis": "wfgj612iwgcn", "vision": "9cc3p23w2i8w"}
DOMAINS = {"nlp": "d-vwkko55wa1a1", "research": "d-3ouat8soysig", "vis": "d-hmlf3fw1g88w", "vision": "d-l1633crlhil1"}


@pytest.mark.parametrize(
    ("token", "live", "translated"),
    [
        ("q00000000003", LIVE, "9cc3p23w2i8w"),
        ("q00000000003*", LIVE, "9cc3p23w2i8w*"),
        ("q0000000000?", LIVE, "*"),
        ("q*", LIVE, "*"),
        ("d-00000000000?", DOMAINS, "d-*"),
        ("x*", LIVE, "x*"),
    ],
    ids=["a team's id", "a team's id and what follows", "every team's by a wildcard", "every team's by their shape", "every domain", "no team's"],
)
def test_a_team_id_or_a_pattern_over_every_teams_ids_becomes_the_sandboxs(token, live, translated):
    unit = UNIT if live is LIVE else {team: "d-%012d" % index for index, team in enumerate(sorted(UNIT))}
    assert _id_translation(token, unit, live) == translated


def test_a_pattern_over_some_teams_ids_has_no_translation():
    """The sandbox's ids share no shape with the unit account's: which of them such a pattern would name is unknown."""
    unit = {"nlp": "q1", "research": "q2", "vis": "x3", "vision": "x4"}
    with pytest.raises(ValueError, match="matches some teams' ids only"):
        _id_translation("q*", unit, LIVE)


def test_ci_runs_a_leak_and_a_benign_statement_of_each_family_on_every_principal_kind():
    picked = stratified()
    assert len(picked) == 2 * len(corpus.FAMILIES) == len({e.id for e in picked})
    assert {(e.family, e.label) for e in picked} == {(family, label) for family in corpus.FAMILIES for label in (corpus.LEAK, corpus.BENIGN)}
    assert {e.principal.split("/")[1] for e in picked} == set(corpus.KINDS)
