"""Mutation at scale: every statement of the widening corpus (widening_corpus.py), added to one principal's rendered
policies, is reported as a cross-team allow exactly when it was built to reach another team or a shared resource.

Only the widened principal is evaluated (``isolation.matrix`` over it alone, with every resource, through one
``local_decider`` per family that holds each entry's widened principal under the entry's id), one family per test, each
collecting the entries the evaluator gets wrong: a leak it misses (or reports on none of the owners the statement
reaches, or on an owner it cannot reach), a benign statement it reports (a false alarm), or a gap either causes.
"""

from __future__ import annotations

import functools

from ansible_collections.hyperpod.tenancy.plugins.module_utils import isolation

from tests.unit.plugins.module_utils import widening_corpus as corpus
from tests.unit.plugins.module_utils.sample_account import ACCOUNT
from tests.unit.plugins.module_utils.test_isolation_matrix import ACTIONS, _principals, _rendered, _resources


@functools.lru_cache(maxsize=1)
def _account():
    """The rendered policies, the resources and the principals by id: built once, never changed."""
    return _rendered(), _resources(), {p["id"]: p for p in _principals()}


def _widened(entries) -> tuple:
    """(a decider over the rendered policies with each entry's principal widened, each under the entry's id as its
    principal id; those principals): one decider for a family, so its Action cache is built once, and ``matrix`` asked
    about one widened principal at a time, which is all an entry changes."""
    rendered, unused_resources, principals = _account()
    policies = dict(rendered)
    widened = []
    for entry in entries:
        spec = dict(rendered[entry.principal], **entry.spec)
        spec["identity"] = rendered[entry.principal]["identity"] + [("widened", entry.document)]
        policies[entry.id] = spec
        widened.append(dict(principals[entry.principal], id=entry.id))
    return isolation.local_decider(policies, ACCOUNT), widened


def _result(decide, principal: dict) -> dict:
    return isolation.matrix([principal], _account()[1], decide, ACTIONS, keep_cells=False)


def _cells(cells) -> str:
    shown = sorted({(c["owner"], c["resource_kind"], c["action"]) for c in cells})
    return "%s%s" % (shown[:3], " and %d more" % (len(shown) - 3) if len(shown) > 3 else "")


def _problem(entry: corpus.Widening, result: dict):
    """What the evaluator got wrong about ``entry``, or None."""
    team = _account()[2][entry.principal]["team"]
    # A statement that reaches the team's own roles, access entry, permission set, quota or budget is a leak on them
    # (isolation.PLATFORM_OWNED, test_isolation_matrix.py::test_a_team_that_may_change_what_the_platform_owns_of_it_is_reported);
    # the corpus labels what a statement reaches of the *other* teams and the platform.
    leaks = [c for c in result["leaks"] if not (c["owner"] == team and c["resource_kind"] in isolation.PLATFORM_OWNED)]
    gaps = result["gaps"]
    owners = {c["owner"] for c in leaks}
    if gaps:
        return f"gaps {_cells(gaps)}"
    if any(c["team"] != team for c in leaks) or team in owners:
        return f"leaks off the principal's team or on its own resources: {_cells(leaks)}"
    if entry.label == corpus.BENIGN:
        return f"false alarm on {_cells(leaks)}" if leaks else None
    if not entry.owners <= owners:
        return f"missed on {sorted(entry.owners - owners)} (reported on {sorted(owners)})"
    if entry.spared & owners:
        return f"reported on {sorted(entry.spared & owners)}, which it cannot reach: {_cells(c for c in leaks if c['owner'] in entry.spared)}"
    return None


def misses(family: str) -> list:
    """The entries of ``family`` the evaluator gets wrong, each as "id: what went wrong"."""
    entries = corpus.family(family)
    decide, principals = _widened(entries)
    found = []
    for entry, principal in zip(entries, principals, strict=True):
        try:
            problem = _problem(entry, _result(decide, principal))
        except Exception as error:  # an evaluator that cannot read an entry has it wrong too; the others still run
            problem = f"raised {type(error).__name__}: {error}"
        if problem:
            found.append(f"{entry.id}: {problem}")
    return found


def test_the_corpus_is_large_and_labelled_in_every_family():
    counts = corpus.corpus_counts()
    assert list(counts) == list(corpus.FAMILIES)
    assert sum(size for size, unused_leaks, unused_benign in counts.values()) == len(corpus.CORPUS) >= 300
    assert {name: (leaks > 0, benign > 0) for name, (unused_size, leaks, benign) in counts.items()} == {name: (True, True) for name in corpus.FAMILIES}
    assert len({entry.id for entry in corpus.CORPUS}) == len(corpus.CORPUS)
    principals = _account()[2]
    for entry in corpus.CORPUS:
        assert entry.label in (corpus.LEAK, corpus.BENIGN), entry.id
        assert bool(entry.owners) == (entry.label == corpus.LEAK), entry.id
        assert not entry.owners & entry.spared, entry.id
        assert principals[entry.principal]["team"] not in entry.owners | entry.spared, entry.id
    # Issue 37's three grants, verbatim on nlp's execution role.
    issue = {(e.name, e.principal) for e in corpus.family("issue_37") if e.label == corpus.LEAK}
    assert {name for name, principal in issue if principal == "nlp/execution_role"} == {
        "GetObject on vision/datasets/*",
        "ListBucket with s3:prefix vision/datasets/*",
        "sagemaker:* on * in the region",
    }


def test_the_principals_of_the_corpus_leak_nothing_unwidened():
    """Every leak the families find is their statement's: the rendered policies of each principal alone reach nothing."""
    rendered, unused_resources, principals = _account()
    decide = isolation.local_decider(rendered, ACCOUNT)
    for principal in sorted({entry.principal for entry in corpus.CORPUS}):
        result = _result(decide, principals[principal])
        assert (principal, result["leaks"], result["gaps"]) == (principal, [], [])


def test_resource_patterns():
    assert misses("resource_patterns") == []


def test_listing_prefixes():
    assert misses("listing_prefixes") == []


def test_studio_tags():
    assert misses("studio_tags") == []


def test_condition_operators():
    assert misses("condition_operators") == []


def test_policy_variables():
    assert misses("policy_variables") == []


def test_not_elements():
    assert misses("not_elements") == []


def test_json_values():
    assert misses("json_values") == []


def test_denies():
    assert misses("denies") == []


def test_issue_37():
    assert misses("issue_37") == []


def test_outside_the_matrix():
    """Issue 37's resources outside the matrix: each team's home EFS file system, the Prometheus workspace the usage
    reports read, the roles the cluster runs as and the names of the data bucket's root keys."""
    assert misses("outside_the_matrix") == []
