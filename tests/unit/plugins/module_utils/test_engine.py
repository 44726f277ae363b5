"""plugins/module_utils/engine.py: check mode predicts and writes nothing, a run-wide copy is read again before a write, one result shape."""

from __future__ import annotations

import copy

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import engine


class Thing(engine.Resource):
    """A resource of one setting, ``size``, and its API: ``live`` is what AWS has, ``copy`` what shared_info read earlier."""

    label = "thing"

    def __init__(self, size, live=None, copy_=None, wait=True):
        self.want, self.live, self.copy, self.waiting = size, live, copy_, wait
        self.writes, self.reads, self.waits = [], [], []

    def read(self, fresh=False):
        self.reads.append("fresh" if fresh else "first")
        if self.copy is not None and not fresh:
            return dict(self.copy, copied=True)
        return copy.deepcopy(self.live)

    def copied(self, raw):
        return bool((raw or {}).get("copied"))

    def view(self, raw):
        return {"size": raw["Size"]}

    def desired(self, raw):
        return {"size": self.want}

    def refuse(self, raw, desired):
        if raw.get("Status") == "FAILED":
            raise ValueError("thing is FAILED")

    def predict(self, raw, desired):
        return dict(raw or {"Name": "t"}, Size=desired["size"])

    def create(self, desired):
        self.writes.append(("create", desired["size"]))
        self.live = {"Name": "t", "Size": desired["size"]}
        return "t"

    def update(self, raw, desired):
        self.writes.append(("update", desired["size"]))
        self.live["Size"] = desired["size"]
        return True

    def delete(self, raw):
        self.writes.append(("delete",))
        self.live = None
        return True

    def read_back(self, handle, settle):
        self.waits.append(settle)
        return copy.deepcopy(self.live)

    def wait_gone(self, raw):
        self.waits.append("gone")

    def result(self, raw):
        return {"name": raw["Name"], "size": raw["Size"]}


@pytest.mark.parametrize(
    "live, want, changed, before, after, writes",
    [
        (None, 2, True, {}, {"size": 2}, [("create", 2)]),
        ({"Name": "t", "Size": 1}, 2, True, {"size": 1}, {"size": 2}, [("update", 2)]),
        ({"Name": "t", "Size": 2}, 2, False, {"size": 2}, {"size": 2}, []),
    ],
)
def test_check_mode_predicts_what_the_run_then_does(live, want, changed, before, after, writes):
    checked = Thing(want, live=copy.deepcopy(live))
    predicted = engine.ensure_present(checked, check_mode=True)
    assert checked.writes == []
    real = Thing(want, live=copy.deepcopy(live))
    outcome = engine.ensure_present(real)
    assert real.writes == writes
    assert predicted == outcome == (changed, before, after, {"name": "t", "size": want})
    assert engine.ensure_present(real) == (False, after, after, {"name": "t", "size": want})
    assert real.writes == writes  # a second run changes nothing


def test_a_run_wide_copy_is_read_again_before_a_write():
    # shared_info read size 1; another run has set 2 since: nothing to write.
    thing = Thing(2, live={"Name": "t", "Size": 2}, copy_={"Name": "t", "Size": 1})
    outcome = engine.ensure_present(thing)
    assert thing.reads == ["first", "fresh"]
    assert thing.writes == []
    assert outcome == (False, {"size": 2}, {"size": 2}, {"name": "t", "size": 2})


def test_a_run_wide_copy_is_not_read_again_in_check_mode_nor_when_nothing_moves():
    thing = Thing(1, live={"Name": "t", "Size": 3}, copy_={"Name": "t", "Size": 1})
    assert engine.ensure_present(thing).changed is False
    thing = Thing(2, live={"Name": "t", "Size": 3}, copy_={"Name": "t", "Size": 1})
    assert engine.ensure_present(thing, check_mode=True).before == {"size": 1}
    assert thing.reads == ["first"]


def test_the_write_follows_the_fresh_read():
    thing = Thing(2, live={"Name": "t", "Size": 5}, copy_={"Name": "t", "Size": 1})
    outcome = engine.ensure_present(thing)
    assert thing.writes == [("update", 2)]
    assert outcome.before == {"size": 5}


@pytest.mark.parametrize(
    "copied, check_mode, copy_size, reads",
    [
        (True, False, 1, [False, True]),  # the copy would be written from: read again, planned from that
        (True, False, 2, [False]),  # the copy says nothing changes: believed
        (True, True, 1, [False]),  # check mode predicts from the copy
        (False, False, 1, [False]),  # a read of this run is written from
    ],
)
def test_plan_from_copy_reads_again_only_a_copy_that_would_be_written_from(copied, check_mode, copy_size, reads):
    # What a layer that is not a Resource hands it: how to read (from the copy unless fresh), whether the read came
    # from the copy, how to plan (size 2 wanted).
    asked, live = [], {"size": 2}

    def read(fresh):
        asked.append(fresh)
        return dict(live) if fresh else {"size": copy_size}

    raw, planned = engine.plan_from_copy(read, lambda raw: copied, lambda raw: 2 - raw["size"], check_mode)
    assert asked == reads
    assert (raw, planned) == ((live, 0) if reads[-1] else ({"size": copy_size}, 2 - copy_size))


def test_a_resource_that_cannot_be_changed_in_place_is_refused_before_any_write():
    thing = Thing(2, live={"Name": "t", "Size": 1, "Status": "FAILED"})
    with pytest.raises(ValueError, match="FAILED"):
        engine.ensure_present(thing)
    assert thing.writes == []


@pytest.mark.parametrize("wait", [True, False])
def test_waiting_follows_the_resources_wait(wait):
    thing = Thing(2, live={"Name": "t", "Size": 1}, wait=wait)
    engine.ensure_present(thing)
    assert thing.waits == [wait]
    engine.ensure_absent(thing)
    assert thing.waits == [wait, "gone"] if wait else [wait]


def test_absent_deletes_once_and_check_mode_deletes_nothing():
    thing = Thing(2, live={"Name": "t", "Size": 1})
    assert engine.ensure_absent(thing, check_mode=True) == (True, {"size": 1}, {}, {})
    assert thing.writes == []
    assert engine.ensure_absent(thing) == (True, {"size": 1}, {}, {})
    assert engine.ensure_absent(thing) == engine.NOTHING
    assert thing.writes == [("delete",)]


class OthersThing(Thing):
    """A thing another team owns: ``owned`` refuses it."""

    def owned(self, raw):
        raise PermissionError("thing is another team's")


@pytest.mark.parametrize("check_mode", [False, True])
@pytest.mark.parametrize("converge", [engine.ensure_present, engine.ensure_absent])
def test_what_is_not_the_runs_is_refused_before_it_is_planned_from_or_deleted(converge, check_mode):
    thing = OthersThing(2, live={"Name": "t", "Size": 1})
    with pytest.raises(PermissionError):
        converge(thing, check_mode)
    assert thing.writes == []
    # Nothing exists: nothing is anyone's, and a new one is made.
    assert engine.ensure_present(OthersThing(2)).changed
