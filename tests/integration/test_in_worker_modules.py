"""The modules with an in-worker action (plugin_utils/in_worker.py) run their code in the worker, and answer exactly
as the module process does.

Every module of the collection has one. Two hosts run the same tasks of every module: ``team_worker`` with this
Python (the action plugin runs the module's ``main()`` in the worker), ``team_module`` with a wrapper script that starts
this Python (another interpreter path: the plugin sends the module as a module process). The results must be equal,
task by task: argument validation, check mode and diff, ``no_log`` values masked, the task's ``environment:`` and the
module's fallbacks on it. The tasks fail before any AWS call, so no sandbox is needed. The sandbox runs of each module
(its target in test_targets.py, the playbook tests) show the same of every layer's calls.
"""

from __future__ import annotations

import json
import subprocess
import sys

import yaml

from tests.integration.playbook_runner import ANSIBLE_PLAYBOOK, ROOT

SECRET = "s3cr3t-team"
TASKS = [
    ("missing team", {"region": "us-east-1"}, {}),
    ("unsupported layer option", {"team": "x", "region": "us-east-1", "budget": {"bogus": 1}}, {}),
    ("offboarding refused, check mode and diff", {"team": "x", "region": "us-east-1", "budget": {"state": "absent", "monthly_usd": 5}},
     {"check_mode": True, "diff": True}),
    ("a layer's check", {"team": "x", "region": "us-east-1", "budget": {"monthly_usd": -5}}, {}),
    ("secret masked", {"team": SECRET, "region": "us-east-1", "access_key": "AKIAEXAMPLE", "secret_key": SECRET, "budget": {"bogus": 1}}, {}),
    # The first call goes where the task's environment says (amazon.aws's AWS_URL fallback), with its credentials.
    ("environment", {"team": "x", "budget": {"monthly_usd": 5, "account_id": "123456789012"}},
     {"environment": {"AWS_URL": "http://127.0.0.1:9", "AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "x"}}),
]
# What every other module refuses before any call: an option it does not have, with a no_log value given.
REFUSED = [
    ("unsupported option", {"region": "us-east-1", "bogus_option": 1}, {}),
    ("secret masked", {"region": "us-east-1", "access_key": "AKIAEXAMPLE", "secret_key": SECRET, "bogus_option": SECRET}, {}),
]
IN_WORKER = sorted(path.stem for path in (ROOT / "plugins/action").glob("*.py") if "(InWorkerAction)" in path.read_text())
MODULES = sorted(path.stem for path in (ROOT / "plugins/modules").glob("*.py") if path.stem != "__init__")


def test_every_module_of_the_collection_runs_in_the_worker():
    # validate_team_file's action reads the team file on the controller, and never starts the module.
    assert sorted(set(MODULES) - {"validate_team_file"}) == IN_WORKER


def without_import_deprecations(result):
    """The result less the deprecations ansible-core raises when a module_utils imports a deprecated name.

    A module process imports its module_utils for every task, so each of its results carries such a deprecation (on
    ansible-core 2.20, amazon.aws 10.x imports ``ansible.module_utils._text``); the worker's module_utils were imported
    once, by ``ansible-playbook`` when it loaded the action, which displays the deprecation once for the run.
    """
    kept = [d for d in result.get("deprecations", []) if not d.get("msg", "").startswith("Importing ")]
    result = dict(result)
    result.pop("deprecations", None)
    return dict(result, deprecations=kept) if kept else result


def tasks_of(module):
    return TASKS if module == "team_resources" else REFUSED


def test_the_worker_answers_as_the_module_process(tmp_path):
    """One run for every module (a run costs seconds of CPU whatever it holds, docs/development.md): each module's tasks,
    task by task, on both hosts."""
    wrapper = tmp_path / "python-wrapper"
    calls = tmp_path / "wrapper-calls"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    # Every module process leaves its AnsiballZ file in the remote tmp (ANSIBLE_KEEP_REMOTE_FILES): the worker's tasks none.
    remote_tmp = str(tmp_path / "remote-tmp")
    hosts = {
        "team_worker": {"ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}", "ansible_remote_tmp": remote_tmp},
        "team_module": {"ansible_connection": "local", "ansible_python_interpreter": str(wrapper), "ansible_remote_tmp": remote_tmp},
    }
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
    given = [(module, name, args, keywords) for module in IN_WORKER for name, args, keywords in tasks_of(module)]
    tasks = [
        dict({"name": "%s: %s" % (module, name), "hyperpod.tenancy." + module: args, "register": "r%d" % i, "ignore_errors": True}, **keywords)
        for i, (module, name, args, keywords) in enumerate(given)
    ]
    tasks.append({
        "name": "Write the results",
        "delegate_to": "localhost",
        "ansible.builtin.copy": {
            "content": "{{ [%s] | to_json }}" % ", ".join("r%d" % i for i in range(len(given))),
            "dest": str(tmp_path / "{{ inventory_hostname }}.json"),
        },
    })
    (tmp_path / "play.yml").write_text(yaml.safe_dump([{"hosts": "all", "gather_facts": False, "tasks": tasks}], sort_keys=False))
    env = {"ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ANSIBLE_KEEP_REMOTE_FILES": "1"}
    run = subprocess.run(
        [ANSIBLE_PLAYBOOK, "-i", str(tmp_path / "hosts.yml"), str(tmp_path / "play.yml")], env=env, cwd=ROOT,
        capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr

    in_worker = json.loads((tmp_path / "team_worker.json").read_text())
    in_process = json.loads((tmp_path / "team_module.json").read_text())
    # team_module started a Python for each task, team_worker none.
    assert len(calls.read_text().splitlines()) == len(given)
    for module in IN_WORKER:
        assert len(list((tmp_path / "remote-tmp").rglob("AnsiballZ_%s.py" % module))) == len(tasks_of(module)), module
    assert len(in_worker) == len(in_process) == len(given)
    results = {}
    for (module, name, _args, _keywords), worker, in_process_result in zip(given, in_worker, in_process, strict=True):
        assert worker["failed"] is True, (module, name, worker)
        assert worker == without_import_deprecations(in_process_result), (module, name)
        assert SECRET not in json.dumps(worker), (module, name)
        results[module, name] = worker
    for module in IN_WORKER:
        if module != "team_resources":
            # Refused by the argument spec, before any call: the unknown option, or a required one missing first.
            refused = results[module, "unsupported option"]["msg"]
            assert "bogus_option" in refused or refused.startswith(("missing required arguments: ", "one of the following is required: ")), (
                module, refused)
    assert results["team_resources", "missing team"]["msg"] == "missing required arguments: team"
    assert "budget: team_resources only builds and converges" in results["team_resources", "offboarding refused, check mode and diff"]["msg"]
    assert results["team_resources", "a layer's check"]["msg"].startswith("team 'x': budget: "), results["team_resources", "a layer's check"]
    masked = results["team_resources", "secret masked"]
    assert masked["msg"].startswith("team %r" % "********"), masked
    assert "http://127.0.0.1:9" in results["team_resources", "environment"]["msg"], results["team_resources", "environment"]
