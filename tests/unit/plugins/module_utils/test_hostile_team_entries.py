"""Team entries a hostile team lead's merged pull request may hold, found by red-teaming the team file's checks (issue 36):
amounts given as text or in units the limits did not compare, guarantees the cluster's capacity did not count, input
that made the checks slow or raise. Each test names the line of the threat model it holds (docs/isolation.md).
"""

from __future__ import annotations

import copy
import multiprocessing
import os
import time

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import chargeback
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_model import check_team_file
from ansible_collections.hyperpod.tenancy.plugins.plugin_utils import team_file

from tests.unit.plugins.module_utils.test_team_model import CLUSTER

P5 = "ml.p5.48xlarge"
TEAMS = [
    {
        "name": "vision",
        "identity_center_group": "TeamVision",
        "members": [{"name": "alice", "uid": 10001}],
        "quota": {"resources": [{"instance_type": P5, "count": 4}], "borrow_limit": 50, "fair_share_weight": 40},
    },
    {"name": "nlp", "identity_center_group": "TeamNLP", "quota": {"resources": [{"instance_type": P5, "count": 4}]}},
]


def problems_with(change):
    teams = copy.deepcopy(TEAMS)
    change(teams[0])
    return check_team_file(teams, CLUSTER, "hyperpod")[0]


def borrowing(*limits):
    return lambda team: team["quota"].__setitem__("absolute_borrow_limits", list(limits))


# vision guarantees 4 p5 and the platform lets a team borrow 100% of what it guarantees (hyperpod_team_limits default):
# each of these asks for more. Text and booleans pass the team model's check (it compares numbers only), and the
# quota layer's argument spec then converts them: "99" reaches CreateComputeQuota as AbsoluteBorrowLimits Count 99.
TEXT_AMOUNTS = [
    ("count as text", {"instance_type": P5, "count": "99"}, "count"),
    ("accelerators as text", {"instance_type": P5, "accelerators": "640"}, "accelerators"),
    ("vcpu as text", {"instance_type": P5, "vcpu": "5000000"}, "vcpu"),
    ("memory as text", {"instance_type": P5, "memory_gib": "5000000"}, "memory_gib"),
]


@pytest.mark.parametrize("label, limit, key", TEXT_AMOUNTS, ids=[case[0] for case in TEXT_AMOUNTS])
def test_a_borrow_limit_given_as_text_is_refused_not_converted_past_the_platform_maximum(label, limit, key):
    """Threat model: (a) issue 36, case 6: a team grants itself capacity. ``absolute_borrow_limits`` amounts given as
    text (``count: "99"``) skip the comparison with hyperpod_team_limits and are converted to numbers by the quota
    layer, so a team borrows what the platform does not allow."""
    problems = problems_with(borrowing(limit))
    assert [p for p in problems if "quota.absolute_borrow_limits[0].%s" % key in p], problems


def test_a_borrowed_mig_partition_is_bounded_like_the_other_amounts():
    """Threat model: (a) issue 36, case 6: ``absolute_borrow_limits[].accelerator_partition`` is compared with no
    maximum: a team guaranteeing 4 whole p5 instances borrows 1000 MIG slices."""
    problems = problems_with(borrowing({"instance_type": P5, "accelerator_partition": {"type": "mig-1g.10gb", "count": 1000}}))
    assert [p for p in problems if "quota.absolute_borrow_limits[0].accelerator_partition" in p], problems


GUARANTEES = [
    ("every GPU of the cluster's p5", {"instance_type": P5, "accelerators": 64}),
    ("ten million GPUs", {"instance_type": P5, "accelerators": 10000000}),
    ("a million vCPUs", {"instance_type": P5, "vcpu": 1000000}),
    ("a thousand MIG slices", {"instance_type": P5, "accelerator_partition": {"type": "mig-1g.10gb", "count": 1000}}),
]


@pytest.mark.parametrize("label, resource", GUARANTEES, ids=[case[0] for case in GUARANTEES])
def test_a_guarantee_in_accelerators_vcpu_or_partitions_counts_against_the_cluster(label, resource):
    """Threat model: (a) issue 36, case 6: the cluster's capacity check adds up ``count`` only. vision and nlp
    guarantee all 8 p5 instances; a new team guaranteeing the same GPUs as ``accelerators`` (or vCPUs, memory, MIG
    slices) is accepted, and its Kueue nominal quota then reclaims what the others were guaranteed."""
    teams = copy.deepcopy(TEAMS)
    teams.append({"name": "grab", "identity_center_group": "TeamGrab", "quota": {"resources": [resource]}})
    problems = check_team_file(teams, CLUSTER, "hyperpod")[0]
    assert [p for p in problems if "quota.resources" in p], problems


def test_every_quota_the_team_file_accepts_can_be_charged_back():
    """Threat model: (a) issue 36, case 4 (one team stops every team): a guarantee in vCPUs is accepted by
    validate_team_file, and chargeback then raises for the whole month's report (allocation needs a count)."""
    teams = copy.deepcopy(TEAMS)
    teams[0]["quota"]["resources"] = [{"instance_type": P5, "vcpu": 1}]
    problems, normalized, unused_capacity = check_team_file(teams, CLUSTER, "hyperpod")
    if problems:
        return  # refused with its file and line: nothing reaches chargeback
    for team in normalized:
        chargeback.quota_instances(team)  # raises ChargebackError today


def test_checking_a_long_member_list_takes_linear_time():
    """Threat model: (a) issue 36, case 4 (a small file stops every run): the member check compares each name with
    every earlier one in lower case (quadratic). 20,000 members (a 400 KB team file) take about a minute; the 260,000
    a 4 MiB file holds take hours, for every playbook and the hourly drift run."""
    teams = copy.deepcopy(TEAMS)
    teams[0]["members"] = ["u%d" % index for index in range(20000)]
    started = time.monotonic()
    check_team_file(teams, CLUSTER, "hyperpod")
    assert time.monotonic() - started < 10


def test_checking_a_notify_address_takes_linear_time():
    """Threat model: (a) issue 36, case 4: ``naming.EMAIL_PATTERN`` backtracks quadratically on
    ``x@`` followed by dots; one 1 MB budget.notify entry keeps validate_team_file busy for hours."""
    # A million dots: a backtracking pattern takes hours on them (it took seconds on 20,000), a linear one a fraction of a
    # second; the bound is that far from both so that a loaded machine (the suite beside kube-apiservers) decides nothing.
    # The check runs in a child process, stopped at the bound: a backtracking pattern holds the interpreter in C.
    teams = copy.deepcopy(TEAMS)
    teams[0]["budget"] = {"monthly_usd": 100, "notify": ["x@" + "." * 1_000_000 + "@"]}

    def check():
        problems = check_team_file(teams, CLUSTER, "hyperpod")[0]
        os._exit(0 if [p for p in problems if "budget.notify[0]" in p] else 1)

    child = multiprocessing.get_context("fork").Process(target=check)
    child.start()
    child.join(60)
    still_checking = child.is_alive()
    child.kill()
    child.join()
    assert not still_checking, "the notify address was still being checked after 60 s"
    assert child.exitcode == 0, "no problem named budget.notify[0]"


# Team files the reader must refuse with a problem naming the file and line, never an exception (a traceback names
# neither, and "every problem names the file, line and column" is the reader's promise).
UNREADABLE = [
    ("a plain '=' (YAML 1.1's value tag, which SafeConstructor cannot build)", "    description: =\n"),
    ("a merge key with a scalar", "    <<: 5\n"),
    ("a sequence as a mapping key", "    ? [a, b]\n    : c\n"),
    ("an integer of more than 4300 digits", "    storage: {gid: %s}\n" % ("9" * 5000)),
    ("nesting as deep as libyaml allows", "    tags: %s%s\n" % ("[" * 996, "]" * 996)),
]


@pytest.mark.parametrize("label, tail", UNREADABLE, ids=[case[0] for case in UNREADABLE])
def test_a_yaml_trick_is_a_problem_with_its_place_not_an_exception(tmp_path, label, tail):
    """Threat model: (a) issue 36, case 4: each of these raises out of ``team_file.read`` (ConstructorError,
    ValueError, RecursionError), so the inventory and validate_team_file fail with a traceback naming no file or
    line, instead of the refusal the reader promises."""
    path = tmp_path / "teams.yml"
    path.write_text("hyperpod_teams:\n  - name: vision\n    identity_center_group: TeamVision\n" + tail)
    read = team_file.read(str(path))
    assert read.problems and all(str(path.name) in problem for problem in read.problems), read.problems


def test_a_merge_key_is_refused_like_an_alias(tmp_path):
    """Threat model: (a) issue 36, case 1/9: the reader refuses anchors and aliases ("each team's entry is written
    out") but takes the merge key ``<<``, which sets keys silently (the duplicate-key check does not see them) and
    puts values where ``TeamFile.place`` cannot find their line."""
    path = tmp_path / "teams.yml"
    path.write_text("hyperpod_teams:\n  - <<: {name: vision, identity_center_group: TeamVision}\n    name: nlp\n")
    read = team_file.read(str(path))
    assert [p for p in read.problems if "<<" in p], (read.problems, read.teams)
