# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""One engine for every AWS resource (kubernetes.core's ``perform_action`` idea).

A resource describes itself (a ``Resource``: how to read, view, compare, create, update and
delete it); ``ensure_present`` / ``ensure_absent`` own the rest, the same way for all of them:

- read, refuse what cannot be done in place (``refuse``), compare the normalized views;
- check mode: predict, write nothing (``predict`` gives the resource as it would read back);
- re-read before a write when the read came from the run-wide copy (``shared_info``'s
  ``hyperpod_shared``): what another run changed since is compared again, not overwritten
  (``plan_from_copy``, which the layers that are not a ``Resource`` call too);
- write, wait (when the resource's ``wait`` is set) and read back;
- one result shape, ``Outcome(changed, before, after, result)``: ``before``/``after`` are the
  normalized views the diff shows, ``result`` the resource as the module returns it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple

Outcome = namedtuple("Outcome", ["changed", "before", "after", "result"])

NOTHING = Outcome(False, {}, {}, {})


class Manager:
    """What every resource manager holds: its client, the module's options, check mode, the module's warn."""

    def __init__(self, client, params, check_mode=False, warn=None, timeout=1800):
        self.client = client
        self.params = params
        self.check_mode = check_mode
        self.warn = warn or (lambda message: None)
        self.timeout = timeout if params.get("wait_timeout") is None else params["wait_timeout"]
        # Whether writes wait for the resource to settle before it is read back.
        self.waiting = params.get("wait", True)


class Resource(Manager):
    """What a resource supplies to the engine; ``raw`` is the resource as its API describes it (None: missing)."""

    label = "resource"

    def read(self, fresh=False):
        """The live resource or None; ``fresh`` asks past any run-wide copy (see ``copied``)."""
        raise NotImplementedError

    def copied(self, raw):
        """Whether ``raw`` came from the run-wide copy rather than a read of this run (re-read before writing); ``raw``
        None too: a copy that says the resource is missing is read past before the resource is created."""
        return False

    def prepare(self, state):
        """Check what needs no read of the resource (the module's input, a cluster it needs), before anything is read;
        ``state`` is the module's. Raise to refuse."""

    def owned(self, raw):
        """Raise when ``raw`` is not this run's to change or delete (another team's, or not the collection's); before
        anything is planned from it."""

    def view(self, raw):
        """The normalized, comparable settings of ``raw`` (what the diff shows)."""
        raise NotImplementedError

    def desired(self, raw):
        """The settings wanted, over ``raw``'s (None when creating): an option left unset keeps its value."""
        raise NotImplementedError

    def moves(self, raw, desired):
        """Whether ``raw`` must be written to reach ``desired`` (settings that differ, or a write that failed and is sent again)."""
        return self.view(raw) != desired

    def refuse(self, raw, desired):
        """Raise when ``raw`` cannot be brought to ``desired`` in place (a failed resource, an immutable member)."""

    def predict(self, raw, desired):
        """``raw`` (None: the new resource) as it would read back once ``desired``: check mode's result."""
        raise NotImplementedError

    def create(self, desired):
        """Write the new resource; return what ``read_back`` needs."""
        raise NotImplementedError

    def update(self, raw, desired):
        """Bring ``raw`` to ``desired``; return whether to wait for it to settle (a settings change) or not (tags)."""
        raise NotImplementedError

    def delete(self, raw):
        """Delete ``raw``; False when it was already gone."""
        raise NotImplementedError

    def read_back(self, handle, settle):
        """The resource after a write (``handle``: what ``create`` returned, or the raw resource updated),
        once settled when ``settle``."""
        raise NotImplementedError

    def unchanged(self, raw):
        """The resource to return when nothing moves (a resource still settling may be waited for)."""
        return raw

    def missing(self):
        """Called by ensure_absent when there is nothing to delete (a deletion in progress may be waited for)."""

    def going(self, raw):
        """Whether ``raw`` is being deleted already: ensure_absent changes nothing, and waits for it to go when waiting."""
        return False

    def wait_gone(self, raw):
        raise NotImplementedError

    def result(self, raw):
        """``raw`` as the module returns it (snake_case)."""
        raise NotImplementedError


def _plan(resource, raw):
    if raw is not None:
        resource.owned(raw)
    desired = resource.desired(raw)
    if raw is not None:
        resource.refuse(raw, desired)
    return desired


def plan_from_copy(read, copied, plan, check_mode=False, writes=bool):
    """``(raw, plan(raw))``: the resource to write from and what is planned from it, read again past the run-wide copy
    when that copy would be written from.

    A copy read earlier in the run (``shared_info``'s ``hyperpod_shared``, handed to a layer of ``team_resources`` as its ``known``)
    only tells that nothing changes: outside check mode, when ``raw`` came from it (``copied(raw)``) and a write is
    planned from it (``writes(plan(raw))``), the resource is read again (``read(True)``, past the copy) and planned
    again, so what another run changed since is compared, not overwritten. Nothing is read twice otherwise:
    ``writes`` is asked only of a copy outside check mode.

    ``read(fresh)`` gives the resource (None: missing), from the copy when it holds it and ``fresh`` is False;
    ``plan(raw)`` what to write (with what the layer checks first: an owner, a refusal); ``writes(plan)`` whether
    that is anything.
    """
    raw = read(False)
    planned = plan(raw)
    if copied(raw) and not check_mode and writes(planned):
        raw = read(True)
        planned = plan(raw)
    return raw, planned


def _desire(resource, raw):
    """(desired, whether ``raw`` must be written to get there)."""
    desired = _plan(resource, raw)
    return desired, raw is None or resource.moves(raw, desired)


def ensure_present(resource, check_mode=False):
    """Create or update ``resource`` to what it desires; an Outcome."""
    raw, (desired, moves) = plan_from_copy(
        resource.read, resource.copied, lambda raw: _desire(resource, raw), check_mode,
        writes=lambda planned: planned[1],
    )
    if not moves:
        return Outcome(False, resource.view(raw), resource.view(raw), resource.result(resource.unchanged(raw)))
    if check_mode:
        before = {} if raw is None else resource.view(raw)
        return Outcome(True, before, desired, resource.result(resource.predict(raw, desired)))
    if raw is None:
        after = resource.read_back(resource.create(desired), resource.waiting)
        return Outcome(True, {}, resource.view(after), resource.result(after))
    before = resource.view(raw)
    settle = resource.update(raw, desired)
    after = resource.read_back(raw, settle and resource.waiting)
    return Outcome(True, before, resource.view(after), resource.result(after))


def ensure_absent(resource, check_mode=False):
    """Delete ``resource`` when it exists; an Outcome whose ``after`` and ``result`` are empty."""
    raw = resource.read()
    if raw is None:
        resource.missing()
        return NOTHING
    resource.owned(raw)
    before = resource.view(raw)
    if resource.going(raw):
        if resource.waiting and not check_mode:
            resource.wait_gone(raw)
        return Outcome(False, before, {}, {})
    if check_mode:
        return Outcome(True, before, {}, {})
    if resource.delete(raw) and resource.waiting:
        resource.wait_gone(raw)
    return Outcome(True, before, {}, {})


def converge(resource, state, check_mode=False):
    """``ensure_present`` or ``ensure_absent`` of ``resource`` by the module's ``state``, once ``resource.prepare(state)``
    found nothing to refuse; an Outcome."""
    resource.prepare(state)
    return ensure_present(resource, check_mode) if state == "present" else ensure_absent(resource, check_mode)
