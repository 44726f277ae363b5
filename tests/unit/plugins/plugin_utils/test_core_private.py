"""plugin_utils/core_private.py: ansible-core's private API behind one version check, with a fallback where it is not proven."""

from __future__ import annotations

import types

from ansible.parsing.dataloader import DataLoader
from ansible_collections.hyperpod.tenancy.plugins.action import team_budget
from ansible_collections.hyperpod.tenancy.plugins.action.validate_team_file import _walk
from ansible_collections.hyperpod.tenancy.plugins.plugin_utils import core_private, in_worker


def test_the_in_worker_run_is_used_on_this_ansible_core_which_is_a_proven_one():
    assert core_private.CORE_VERSION in core_private.PROVEN
    assert core_private.IN_WORKER, core_private.WHY_NOT


def test_another_release_is_refused_with_its_version_named(monkeypatch):
    monkeypatch.setattr(core_private, "CORE_VERSION_TEXT", "2.22.0")
    monkeypatch.setattr(core_private, "CORE_VERSION", (2, 22))
    supported, why = core_private._in_worker_support()
    assert not supported
    assert why == "ansible-core 2.22.0 is not one of the releases the in-worker run is proven on (2.19, 2.20, 2.21)"


def action(transport="local"):
    """An in-worker action of a task on a local connection, without become or async, on this Python."""
    plugin = team_budget.ActionModule.__new__(team_budget.ActionModule)
    plugin._connection = types.SimpleNamespace(transport=transport)
    plugin._play_context = types.SimpleNamespace(become=False)
    plugin._task = types.SimpleNamespace(async_val=0)
    plugin._templar = types.SimpleNamespace(template=lambda value: value)
    return plugin


def test_an_action_runs_its_module_in_the_worker_only_where_that_is_proven(monkeypatch):
    assert isinstance(action(), in_worker.InWorkerAction)
    assert action()._in_worker({})
    assert not action("ssh")._in_worker({})
    monkeypatch.setattr(core_private, "IN_WORKER", False)
    monkeypatch.setattr(core_private, "WHY_NOT", "ansible-core 2.22.0 is not one of the releases ...")
    # ActionBase._execute_module then runs it as a module process, as every other module runs.
    assert not action()._in_worker({})


def test_a_target_side_run_restores_what_it_changed():
    from ansible.module_utils import _internal, basic

    before = (basic._ANSIBLE_ARGS, basic._ANSIBLE_PROFILE, _internal.is_controller)
    with core_private.TargetSide(b"{}"):
        assert (basic._ANSIBLE_ARGS, basic._ANSIBLE_PROFILE, _internal.is_controller) == (b"{}", "legacy", False)
    assert (basic._ANSIBLE_ARGS, basic._ANSIBLE_PROFILE, _internal.is_controller) == before


def test_a_variable_ansible_loaded_names_its_file_and_line(tmp_path):
    path = tmp_path / "cluster.yml"
    path.write_text("hyperpod_cluster:\n  name: demo\n  instance_groups:\n    - count: -1\n")
    cluster = DataLoader().load_from_file(str(path))["hyperpod_cluster"]
    place = core_private.origin(cluster["instance_groups"][0]["count"])
    assert place is not None and place[0] == str(path) and place[1] == 4
    assert _walk(cluster, "instance_groups[0].count").endswith("cluster.yml:4:14")


def test_a_value_of_no_file_has_no_place():
    assert core_private.origin("plain") is None
    assert core_private.origin(None) is None
    assert _walk({"name": "demo"}, "name") is None
