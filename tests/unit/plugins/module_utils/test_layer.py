"""The one runner of every module (module_utils/layer.py): its result shape and its failures."""

from __future__ import annotations

import errno
import json

import pytest
from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.testing import patch_module_args
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import ModuleFailure, converge_by_state, result, run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import NAME_PREFIX, STATE, options, wait

OPTIONS = options(dict(name=dict(type="str", required=True)), STATE, NAME_PREFIX, wait(60))


def run(converge, args, capsys):
    with patch_module_args(args), pytest.raises(SystemExit):
        run_module(OPTIONS, converge, module_class=AnsibleModule)
    return json.loads(capsys.readouterr().out)


class Manager:
    """Records which ensure_* ran, with what it was made from."""

    def __init__(self, context, params):
        self.made = (context.check_mode, params["name"], params["name_prefix"], params["wait_timeout"])

    def ensure_present(self):
        return True, None, {"name": "x"}, {"made": list(self.made), "ran": "present"}

    def ensure_absent(self):
        return False, None, None, {"made": list(self.made), "ran": "absent"}


@pytest.mark.parametrize("state, changed", [("present", True), ("absent", False)])
def test_converge_by_state_runs_the_state_s_ensure_and_returns_one_result_shape(state, changed, capsys):
    out = run(converge_by_state("thing", Manager), {"name": "x", "state": state, "_ansible_check_mode": True}, capsys)
    assert out["changed"] is changed
    assert out["thing"] == {"made": [True, "x", "hyperpod", 60], "ran": state}
    assert out["diff"] == {"before": None, "after": {"name": "x"} if state == "present" else None}


def test_result_puts_the_keys_beside_changed_and_the_diff():
    assert result(True, {"a": 1}, {"a": 2}, thing={"a": 2}) == {"changed": True, "thing": {"a": 2}, "diff": {"before": {"a": 1}, "after": {"a": 2}}}


def test_a_refusal_fails_with_its_message(capsys):
    def converge(context, params):
        raise InputError(message="name: refused")

    out = run(converge, {"name": "x"}, capsys)
    assert out["failed"] and out["msg"] == "name: refused"


def test_a_module_failure_returns_what_it_carries(capsys):
    def converge(context, params):
        raise ModuleFailure("two problems", problems=["a", "b"], changed=True)

    out = run(converge, {"name": "x"}, capsys)
    assert out["failed"] and out["msg"] == "two problems"
    assert out["problems"] == ["a", "b"] and out["changed"] is True


def test_a_file_system_error_names_its_file_and_errno(capsys):
    def converge(context, params):
        raise OSError(errno.EACCES, "Permission denied", "/fsx/vision")

    out = run(converge, {"name": "x"}, capsys)
    assert out["failed"] and out["msg"] == "/fsx/vision: Permission denied" and out["errno"] == errno.EACCES
