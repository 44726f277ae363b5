"""playbooks/awx_configure.yml and its data (playbooks/vars/awx.yml), without an AWX server.

- The job templates are checked against the repository: each playbook exists and parses, each survey
  and extra variable is one the playbook reads, and the limits (default and the documented per-team
  one) leave a host in every play, as `ansible-playbook --list-hosts` on examples/inventory shows.
- The drift templates are sliced: each slice's inventory, computed from the imported one as AWX
  does, keeps the localhost plays and its own teams, and both slices of a drift report run against
  the sandbox, the cluster compared by one of them only.
- The schedules' rrule strings are what awx.awx's schedule_rrule lookup computes.
- The playbook runs for real against stand-ins of the awx.awx modules (a collection placed before the
  real one on the collections path) that record the arguments they get: the test then checks those
  arguments against the real modules' documented options and choices, and that no secret reaches the output.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jinja2
import jinja2.nodes
import pytest
import yaml

from tests.integration.out_of_band import shrink_quota
from tests.integration.playbook_runner import ANSIBLE_PLAYBOOK, Result, assert_ok

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PLAYBOOK = ROOT / "playbooks" / "awx_configure.yml"
DATA = ROOT / "playbooks" / "vars" / "awx.yml"
AWX_COLLECTION = Path(__import__("ansible_collections").__path__[-1]) / "awx" / "awx"
JINJA_KEYS = {"when", "that", "failed_when", "changed_when", "until", "loop"}
TEAM = "vision"  # a team of teams/teams.yml
SECRETS = {
    "awx_aws_access_key_id": "AKIAEXAMPLEKEYID0001",
    "awx_aws_secret_access_key": "example-secret-access-key-0001",
    "awx_aws_session_token": "example-session-token-0001",
    "awx_notification_email_password": "example-smtp-password-0001",
    "awx_scm_credential_inputs": {"username": "git", "password": "example-scm-token-0001"},
}


class _Loader(yaml.SafeLoader):
    """SafeLoader that reads Ansible's !unsafe and !vault tags as plain strings."""


_Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))
_Loader.add_constructor("!vault", lambda loader, node: loader.construct_scalar(node))


def load(path: Path):
    return yaml.load(path.read_text(), Loader=_Loader)  # noqa: S506 - SafeLoader subclass


DATA_VARS = load(DATA)
TEMPLATES = {t["name"]: t for t in DATA_VARS["awx_job_templates"]}


def ansible_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1", PATH=f"{BIN}:{os.environ['PATH']}")
    env.pop("HYPERPOD_DRIFT_REPORT", None)
    env.update(extra)
    return env


def run(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / args[0]), *args[1:]], cwd=cwd, env=env or ansible_env(), capture_output=True, text=True, timeout=300, check=False)


# ---- what a playbook reads --------------------------------------------------------------------


def _strings(node, key=None):
    """(key, string) for every string in a parsed YAML document."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _strings(v, k)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v, key)
    elif isinstance(node, str):
        yield key, node


def _names(expression: str) -> set[str]:
    ast = jinja2.Environment().parse(expression)
    return {n.name for n in ast.find_all(jinja2.nodes.Name) if n.ctx == "load"}


def variables_read(playbook: Path, seen: set[Path] | None = None) -> set[str]:
    """Names every Jinja expression of a playbook reads, following import_playbook and import_tasks."""
    seen = seen if seen is not None else set()
    if playbook in seen:
        return set()
    seen.add(playbook)
    names: set[str] = set()
    document = load(playbook) or []
    for key, value in _strings(document):
        if key in ("ansible.builtin.import_playbook", "import_playbook", "ansible.builtin.import_tasks", "import_tasks"):
            names |= variables_read((playbook.parent / value).resolve(), seen)
        elif "{{" in value or "{%" in value:
            names |= _names(value)
        elif key in JINJA_KEYS:
            names |= _names("{{ %s }}" % value)
    return names


def test_variables_read_finds_the_names_a_playbook_uses():
    """The scanner the next test relies on: it sees remove_team's `confirm`, not words of task names."""
    names = variables_read(ROOT / "playbooks" / "remove_team.yml")
    assert {"team", "confirm", "hyperpod_teams_normalized"} <= names
    assert "offboard" not in names and "Offboard" not in names
    assert "enforce" in variables_read(ROOT / "playbooks" / "drift.yml")
    assert "enforce" not in variables_read(ROOT / "playbooks" / "add_team.yml")


# ---- job templates against the repository ------------------------------------------------------


def test_the_issue_s_job_templates_are_defined():
    assert set(TEMPLATES) == {"HyperPod site", "HyperPod add team", "HyperPod remove team", "HyperPod drift report", "HyperPod drift correct"}
    report, correct = TEMPLATES["HyperPod drift report"], TEMPLATES["HyperPod drift correct"]
    assert (report["job_type"], report["diff_mode"], report["extra_vars"]) == ("check", True, {"enforce": False})
    assert (correct["job_type"], correct["diff_mode"], correct["extra_vars"]) == ("run", True, {"enforce": True})
    assert [q["variable"] for q in TEMPLATES["HyperPod add team"]["survey"]] == ["team"]
    assert [q["variable"] for q in TEMPLATES["HyperPod remove team"]["survey"]] == ["team", "confirm"]
    assert {name for name, t in TEMPLATES.items() if t["notify_on_error"]} == {"HyperPod drift report", "HyperPod drift correct"}


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_job_template_playbook_exists_and_reads_its_variables(name):
    template = TEMPLATES[name]
    playbook = ROOT / template["playbook"]
    assert playbook.is_file(), f"{name}: {template['playbook']} is not in the repository"
    read = variables_read(playbook)
    for question in template["survey"]:
        assert question["variable"] in read, f"{name}: survey variable {question['variable']} is not used by {template['playbook']}"
        assert question["type"] in ("text", "textarea", "password", "integer", "float", "multiplechoice", "multiselect")
        assert {"question_name", "variable", "type", "required"} <= set(question)
    for variable in template["extra_vars"]:
        assert variable in read, f"{name}: extra variable {variable} is not used by {template['playbook']}"
    # AWX passes survey answers as extra variables: the playbook parses with them.
    result = run("ansible-playbook", "--syntax-check", "-i", "examples/inventory", template["playbook"], "-e", f"team={TEAM}")
    assert result.returncode == 0, result.stderr


def list_hosts(template: dict, limit: str) -> list[tuple[str, list[str]]]:
    """(play name, hosts) per play, as ansible-playbook would run the template with this limit."""
    args = ["ansible-playbook", "--list-hosts", "-i", "examples/inventory", template["playbook"]]
    answers = {q["variable"]: TEAM for q in template["survey"]}
    args += ["-e", json.dumps({**answers, **template["extra_vars"]})]
    if limit:
        args += ["--limit", limit]
    result = run(*args)
    assert result.returncode == 0, result.stdout + result.stderr
    plays = []
    for block in re.split(r"\n\s*play #\d+ ", result.stdout)[1:]:
        header, _, rest = block.partition("\n")
        lines = [line.strip() for line in rest.splitlines() if line.strip()]
        hosts = [line for line in lines if not line.startswith(("pattern:", "hosts ("))]
        plays.append((header, hosts))
    assert plays, result.stdout
    return plays


def offboards_no_team(play: str) -> bool:
    """Whether ``play`` is teams.yml's offboarding play, whose hosts are the teams marked absent: the example's team
    file marks none, so that play has no host whatever the limit."""
    teams = load(ROOT / "teams" / "teams.yml")["hyperpod_teams"]
    return play.startswith("(hyperpod_teams_absent)") and all(t.get("state", "present") == "present" for t in teams)


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_job_template_limit_leaves_a_host_in_every_play(name):
    """With the template's own limit (none by default), every play has its hosts: localhost first."""
    template = TEMPLATES[name]
    plays = list_hosts(template, template["limit"])
    assert plays[0][1] == ["localhost"]
    for play, hosts in plays:
        assert hosts or offboards_no_team(play), f"{name}: play {play} matches no host with limit {template['limit']!r}"
    if template["survey"]:  # add/remove: the playbook itself narrows to the team the survey names
        assert plays[-1][1] == [f"team_{TEAM}"]


@pytest.mark.parametrize("name", sorted(n for n, t in TEMPLATES.items() if t["ask_limit_on_launch"]))
def test_per_team_limit_needs_localhost(name):
    """The limit documented for one team keeps localhost: the team plays read hostvars['localhost']."""
    template = TEMPLATES[name]
    assert "localhost,team_<name>" in template["description"]
    plays = list_hosts(template, f"localhost,team_{TEAM}")
    assert all(hosts or offboards_no_team(play) for play, hosts in plays)
    team_plays = [hosts for play, hosts in plays if hosts != ["localhost"] and not offboards_no_team(play)]
    assert team_plays and all(hosts == [f"team_{TEAM}"] for hosts in team_plays)
    # Without localhost the plays that read the team file match no host: that limit would break the job.
    without = list_hosts(template, f"team_{TEAM}")
    assert any(not hosts for _, hosts in without)


@pytest.mark.parametrize("name", sorted(n for n, t in TEMPLATES.items() if t["survey"]))
def test_survey_templates_do_not_prompt_for_a_limit(name):
    """add/remove target team_<team> themselves; a prompted limit could only drop localhost or the team."""
    assert TEMPLATES[name]["ask_limit_on_launch"] is False
    assert TEMPLATES[name]["limit"] == ""


# ---- schedules ----------------------------------------------------------------------------------


def rrule_lookup():
    try:
        import pytz  # noqa: F401 - the lookup needs it and says only "No module named 'pytz'"
    except ImportError:
        pytest.fail("awx.awx.schedule_rrule needs pytz: requirements.txt must pin it (pytz==2026.6)")
    from ansible_collections.awx.awx.plugins.lookup.schedule_rrule import LookupModule

    return LookupModule()


def test_schedule_rrules_are_what_the_lookup_computes():
    lookup = rrule_lookup()
    schedules = {s["name"]: s for s in DATA_VARS["awx_schedules"]}
    for schedule in schedules.values():
        args = dict(schedule["rrule_args"])
        computed = lookup.run([args.pop("frequency")], **args)
        assert computed == schedule["rrule"], f"{schedule['name']}: rrule should be {computed!r}"
        assert schedule["unified_job_template"] in TEMPLATES
    hourly = schedules["HyperPod drift report hourly"]
    assert hourly["rrule"] == "DTSTART;TZID=UTC:20260101T000500 RRULE:FREQ=HOURLY;INTERVAL=1"
    assert hourly["enabled"] is True and hourly["unified_job_template"] == "HyperPod drift report"
    correct = schedules["HyperPod drift correct daily"]
    assert correct["rrule"] == "DTSTART;TZID=UTC:20260101T063000 RRULE:FREQ=DAILY;INTERVAL=1"
    assert correct["enabled"] is False and correct["unified_job_template"] == "HyperPod drift correct"


def test_rrule_lookup_still_cannot_run_in_a_template(tmp_path):
    """Why the rrules are written out. When this fails, awx.awx returns a list: call the lookup from the playbook."""
    rrule_lookup()  # pytz is there: the failure below is the return type, not the import
    play = [
        {
            "name": "Compute an rrule",
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {
                    "name": "Print it",
                    "ansible.builtin.debug": {
                        "msg": "{{ lookup('awx.awx.schedule_rrule', 'hour', start_date='2026-01-01 00:05:00', timezone='UTC', every=1) }}"
                    },
                }
            ],
        }
    ]
    path = tmp_path / "rrule.yml"
    path.write_text(yaml.safe_dump(play))
    result = run("ansible-playbook", "-i", "localhost,", "-c", "local", str(path))
    assert result.returncode != 0
    assert "instead of <class 'list'>" in result.stdout + result.stderr


# ---- the playbook, run against stand-ins of the awx.awx modules ---------------------------------

# Each stand-in is an action plugin of the module's name, which Ansible runs in its worker instead of the module: it records
# the task's arguments as the module would have received them (templated, omitted ones left out) and starts no Python
# process per call (the playbook makes about a hundred). The module file stays, so that the name resolves as awx.awx's.
STUB_MODULE = "#!/usr/bin/python\nraise SystemExit('the action plugin of the same name answers for this module')\n"
STUB_ACTION = """import json
import os

from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        with open(os.environ["AWX_STUB_LOG"], "a") as log:
            log.write(json.dumps({"module": "%(name)s", "params": self._task.args}) + "\\n")
        return {"changed": True, "id": 1}
"""


@pytest.fixture(scope="module")
def stub_collections(tmp_path_factory) -> Path:
    """A collections path holding awx.awx stand-ins, one per module the real collection has."""
    root = tmp_path_factory.mktemp("stub_collections")
    target = root / "ansible_collections" / "awx" / "awx"
    (target / "plugins" / "modules").mkdir(parents=True)
    (target / "plugins" / "action").mkdir()
    (target / "meta").mkdir()
    (target / "meta" / "runtime.yml").write_text((AWX_COLLECTION / "meta" / "runtime.yml").read_text())
    (target / "galaxy.yml").write_text("namespace: awx\nname: awx\nversion: 24.6.1\n")
    for module in (AWX_COLLECTION / "plugins" / "modules").glob("*.py"):
        if module.name != "__init__.py":
            (target / "plugins" / "modules" / module.name).write_text(STUB_MODULE)
            (target / "plugins" / "action" / module.name).write_text(STUB_ACTION % {"name": module.stem})
    return root


def configure(stub_collections: Path, tmp_path: Path, extra: dict) -> tuple[subprocess.CompletedProcess, list[dict]]:
    log = tmp_path / "calls.jsonl"
    log.touch()
    env = ansible_env(
        AWX_STUB_LOG=str(log),
        ANSIBLE_COLLECTIONS_PATH=f"{stub_collections}:{ROOT / 'collections'}",
        CONTROLLER_HOST="https://awx.invalid",
        CONTROLLER_OAUTH_TOKEN="unused-by-the-stand-ins",
    )
    extra_file = tmp_path / "extra.yml"
    extra_file.write_text(yaml.safe_dump(extra))
    result = run("ansible-playbook", "-i", "examples/inventory", str(PLAYBOOK), "-e", f"@{extra_file}", env=env)
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    return result, calls


def documented_options(module: str) -> dict:
    """The real awx.awx module's options, with the auth fragment's, keyed by name and alias."""
    source = (AWX_COLLECTION / "plugins" / "modules" / f"{module}.py").read_text()
    doc = yaml.safe_load(re.search(r"DOCUMENTATION = r?(['\"]{3})(.*?)\1", source, re.S).group(2))
    options = dict(doc["options"])
    fragment = (AWX_COLLECTION / "plugins" / "doc_fragments" / "auth.py").read_text()
    options.update(yaml.safe_load(re.search(r"DOCUMENTATION = r?(['\"]{3})(.*?)\1", fragment, re.S).group(2))["options"])
    for spec in list(options.values()):
        for alias in spec.get("aliases", []):
            options[alias] = spec
    return options


REQUIRED = {
    "awx_project_scm_url": "https://git.example.com/platform/hyperpod.tenancy.git",
    "awx_execution_environment_image": "registry.example.com/platform/hyperpod-tenancy-ee:0.1.0",
}


@pytest.fixture(scope="module")
def configured(stub_collections, tmp_path_factory):
    result, calls = configure(stub_collections, tmp_path_factory.mktemp("configure"), {**REQUIRED, **SECRETS})
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    return result, calls


def test_configure_calls_match_the_modules_documentation(configured):
    _, calls = configured
    assert calls
    for call in calls:
        options = documented_options(call["module"])
        for name, value in call["params"].items():
            assert name in options, f"{call['module']}: {name} is not an option"
            choices = options[name].get("choices")
            if choices and value is not None:
                assert value in choices, f"{call['module']}: {name}={value!r} not in {choices}"
            if options[name].get("type") == "bool":
                assert isinstance(value, bool), f"{call['module']}: {name}={value!r} is not a bool"
            if options[name].get("type") in ("dict", "list") and value is not None:
                assert isinstance(value, dict if options[name]["type"] == "dict" else list), f"{call['module']}: {name}"


def test_configure_creates_everything_in_dependency_order(configured):
    _, calls = configured
    modules = [c["module"] for c in calls]
    assert modules == (
        ["execution_environment", "credential", "project", "credential", "inventory", "inventory_source", "notification_template"]
        + ["job_template"] * len(TEMPLATES)
        + ["schedule"] * len(DATA_VARS["awx_schedules"])
    )
    by = {(c["module"], c["params"]["name"]): c["params"] for c in calls}
    project = by[("project", "HyperPod tenancy")]
    assert project["scm_url"] == REQUIRED["awx_project_scm_url"] and project["scm_type"] == "git"
    assert project["credential"] == "HyperPod source control" and project["default_environment"] == "HyperPod tenancy EE"
    source = by[("inventory_source", "HyperPod team file")]
    assert (source["source"], source["source_project"], source["source_path"]) == ("scm", "HyperPod tenancy", "examples/inventory")
    assert source["update_on_launch"] is True and source["overwrite"] is True
    aws = by[("credential", "HyperPod AWS")]
    assert aws["credential_type"] == "Amazon Web Services"
    assert aws["inputs"] == {
        "username": SECRETS["awx_aws_access_key_id"],
        "password": SECRETS["awx_aws_secret_access_key"],
        "security_token": SECRETS["awx_aws_session_token"],
    }
    notification = by[("notification_template", "HyperPod drift")]
    assert notification["notification_type"] == "email"
    assert notification["notification_configuration"]["password"] == SECRETS["awx_notification_email_password"]
    assert notification["notification_configuration"]["recipients"] == ["platform-team@example.com"]
    assert "{{ job.id }}" in notification["messages"]["error"]["message"]  # left for AWX to render


def test_configure_job_templates_carry_the_data(configured):
    _, calls = configured
    sent = {c["params"]["name"]: c["params"] for c in calls if c["module"] == "job_template"}
    assert set(sent) == set(TEMPLATES)
    for name, template in TEMPLATES.items():
        params = sent[name]
        assert params["playbook"] == template["playbook"] and params["project"] == "HyperPod tenancy"
        assert params["inventory"] == "HyperPod teams" and params["credentials"] == ["HyperPod AWS"]
        assert (params["job_type"], params["diff_mode"], params["extra_vars"]) == (template["job_type"], template["diff_mode"], template["extra_vars"])
        assert (params["limit"], params["ask_limit_on_launch"]) == (template["limit"], template["ask_limit_on_launch"])
        assert (params["job_slice_count"], params["ask_job_slice_count_on_launch"]) == (slice_count(template), template["ask_job_slice_count_on_launch"])
        assert params["ask_variables_on_launch"] is False
        # The drift jobs keep verify_isolation's answers from IAM in AWX's fact cache, from one job to the next.
        assert params["use_fact_cache"] is (template["playbook"] == "playbooks/drift.yml")
        assert params["notification_templates_error"] == (["HyperPod drift"] if template["notify_on_error"] else [])
        assert params["survey_enabled"] is bool(template["survey"])
        if template["survey"]:
            assert params["survey_spec"]["spec"] == template["survey"]
        else:
            assert "survey_spec" not in params


def test_configure_schedules_use_the_computed_rrules(configured):
    _, calls = configured
    sent = {c["params"]["name"]: c["params"] for c in calls if c["module"] == "schedule"}
    lookup = rrule_lookup()
    for schedule in DATA_VARS["awx_schedules"]:
        args = dict(schedule["rrule_args"])
        assert sent[schedule["name"]]["rrule"] == lookup.run([args.pop("frequency")], **args)
        assert sent[schedule["name"]]["enabled"] is schedule["enabled"]
        assert sent[schedule["name"]]["unified_job_template"] == schedule["unified_job_template"]


def test_configure_keeps_secrets_out_of_the_output(configured):
    result, _ = configured
    output = result.stdout + result.stderr
    secrets = [v for v in SECRETS.values() if isinstance(v, str)] + [SECRETS["awx_scm_credential_inputs"]["password"]]
    assert len(secrets) == 5
    for value in secrets:
        assert value not in output


def test_configure_slack_without_scm_credential(stub_collections, tmp_path):
    secrets = {k: v for k, v in SECRETS.items() if k not in ("awx_scm_credential_inputs", "awx_aws_session_token", "awx_notification_email_password")}
    slack = {"awx_notification_type": "slack", "awx_notification_slack_token": "xoxb-example-0001"}
    result, calls = configure(stub_collections, tmp_path, {**REQUIRED, **secrets, **slack})
    assert result.returncode == 0, result.stdout[-4000:]
    assert [c["params"]["name"] for c in calls if c["module"] == "credential"] == ["HyperPod AWS"]
    project = next(c["params"] for c in calls if c["module"] == "project")
    assert "credential" not in project
    aws = next(c["params"] for c in calls if c["module"] == "credential")
    assert set(aws["inputs"]) == {"username", "password"}
    notification = next(c["params"] for c in calls if c["module"] == "notification_template")
    assert notification["notification_type"] == "slack"
    assert notification["notification_configuration"] == {"channels": ["#hyperpod-platform"], "hex_color": "", "token": "xoxb-example-0001"}
    assert "xoxb-example-0001" not in result.stdout + result.stderr


@pytest.mark.parametrize("missing", ["awx_project_scm_url", "awx_execution_environment_image", "awx_aws_secret_access_key"])
def test_configure_refuses_to_start_without_required_settings(stub_collections, tmp_path, missing):
    extra = {**REQUIRED, **SECRETS}
    extra[missing] = ""
    result, calls = configure(stub_collections, tmp_path, extra)
    assert result.returncode != 0
    assert "see docs/awx.md" in result.stdout
    assert calls == []  # nothing reached AWX


def test_configure_syntax_and_lint():
    result = run("ansible-playbook", "--syntax-check", str(PLAYBOOK))
    assert result.returncode == 0, result.stderr
    result = run("ansible-lint", "--offline", "playbooks/awx_configure.yml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_inventory_source_imports_localhost_and_the_teams(configured, tmp_path):
    """What AWX's inventory update runs: ansible-inventory on the project's source_path, with the source's
    variables as its environment, in a directory without ansible.cfg (the project is /runner/project there)."""
    _, calls = configured
    source = next(c["params"] for c in calls if c["module"] == "inventory_source")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update({k: str(v).replace("/runner/project", str(ROOT)) for k, v in source["source_vars"].items()})
    env["PATH"] = f"{BIN}:{env['PATH']}"
    result = run("ansible-inventory", "-i", str(ROOT / source["source_path"]), "--list", "--export", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Failed to parse" not in result.stderr and "not found" not in result.stderr, result.stderr
    inventory = json.loads(result.stdout)
    teams = load(ROOT / "teams" / "teams.yml")["hyperpod_teams"]
    assert sorted(inventory["hyperpod_teams"]["hosts"]) == sorted("team_" + t["name"].replace("-", "_") for t in teams)
    assert "localhost" in inventory["ungrouped"]["hosts"]
    assert inventory["all"]["vars"]["hyperpod_aws"]["region"]  # the inventory's group_vars come along


# ---- job slicing ----------------------------------------------------------------------------------
# A template whose job_slice_count is above 1 launches a workflow of that many jobs. AWX's user guide
# (Job Slicing): "The inventory fed into ansible-playbook is a pared-down version of the original
# inventory that only contains the hosts in that particular slice." AWX takes the inventory's hosts
# ordered by name and gives slice n (from 1) every count-th host from the (n-1)th. So the
# inventory's `localhost` is in one slice only; the others run the playbook's localhost plays on
# Ansible's implicit localhost, which is in no group but gets the `all` group's variables.

SLICED = sorted(name for name, t in TEMPLATES.items() if t["playbook"] == "playbooks/drift.yml")


def slice_count(template: dict) -> int:
    """The template's job_slice_count, rendered with the data's own variables."""
    return int(jinja2.Environment(autoescape=False).from_string(str(template["job_slice_count"])).render(**DATA_VARS))  # noqa: S701 - not HTML


def _plain(value):
    """ansible-inventory --export's JSON with its {"__ansible_unsafe": ...} wrappers taken off."""
    if isinstance(value, dict):
        return value["__ansible_unsafe"] if set(value) == {"__ansible_unsafe"} else {k: _plain(v) for k, v in value.items()}
    return [_plain(v) for v in value] if isinstance(value, list) else value


def awx_slices(inventory: Path, count: int, directory: Path) -> list[tuple[list[str], Path]]:
    """(hosts, inventory file) of each slice of ``inventory`` that AWX would give a job sliced in ``count``.

    The inventory is what AWX imports from the source (``ansible-inventory --list --export``:
    groups, their variables, hosts and their variables), with only the slice's hosts.
    """
    result = run("ansible-inventory", "-i", str(inventory), "--list", "--export")
    assert result.returncode == 0, result.stderr
    export = _plain(json.loads(result.stdout))
    hostvars = export["_meta"]["hostvars"]
    hosts = sorted(set(hostvars) | {h for name, g in export.items() if name != "_meta" for h in g.get("hosts", [])})

    def group(name: str, keep: set[str]) -> dict:
        spec = export.get(name, {})
        out = {}
        if members := [h for h in spec.get("hosts", []) if h in keep]:
            out["hosts"] = {h: hostvars.get(h) or None for h in members}
        if spec.get("vars"):
            out["vars"] = spec["vars"]
        if spec.get("children"):
            out["children"] = {child: group(child, keep) for child in spec["children"]}
        return out

    slices = []
    for number in range(1, count + 1):
        keep = hosts[number - 1 :: count]
        path = directory / f"slice{number}of{count}.yml"
        path.write_text(yaml.safe_dump({"all": group("all", set(keep))}))
        slices.append((keep, path))
    return slices


def test_the_example_inventory_s_variables_do_not_need_an_inventory_host():
    """The implicit localhost of a slice has no inventory_dir or inventory_file: the variables of the
    `all` group that the localhost plays read must not use them."""
    paths = sorted((ROOT / "examples" / "inventory" / "group_vars").rglob("*.yml"))
    assert len(paths) == 2, paths  # the account and the cluster file: a moved inventory must not pass this unread
    for path in paths:
        text = path.read_text()
        assert "inventory_dir" not in text and "inventory_file" not in text, path


def test_drift_templates_are_sliced_and_the_others_are_not():
    """Drift report and correction scale out; site, add and remove build or change shared things once."""
    for name, template in TEMPLATES.items():
        if name in SLICED:
            assert slice_count(template) == DATA_VARS["awx_drift_job_slice_count"] > 1, name
            # One team: launched with slice count 1, or the slices without that team would fail.
            assert template["ask_job_slice_count_on_launch"] is True and "slice count 1" in template["description"], name
        else:
            assert (template["job_slice_count"], template["ask_job_slice_count_on_launch"]) == (1, False), name


@pytest.mark.parametrize("count", [2, 3])
@pytest.mark.parametrize("name", SLICED)
def test_every_slice_runs_the_localhost_plays_and_its_own_teams(name, count, tmp_path):
    """Each slice's ansible-playbook still has localhost in the plays that read the team file, and
    its own teams in the team play; together the slices cover every team once."""
    template = TEMPLATES[name]
    teams = load(ROOT / "teams" / "teams.yml")["hyperpod_teams"]
    state_of = {"team_" + t["name"].replace("-", "_"): t.get("state", "present") for t in teams}
    covered = []
    holders = 0
    for hosts, inventory in awx_slices(ROOT / "examples" / "inventory", count, tmp_path):
        args = ["ansible-playbook", "--list-hosts", "-i", str(inventory), template["playbook"], "-e", json.dumps(template["extra_vars"])]
        result = run(*args)
        assert result.returncode == 0, result.stdout + result.stderr
        plays = []  # (hosts pattern, hosts) per play
        for block in re.split(r"\n\s*play #\d+ ", result.stdout)[1:]:
            header, _, rest = block.partition("\n")
            lines = [line.strip() for line in rest.splitlines() if line.strip() and not line.strip().startswith(("pattern:", "hosts ("))]
            plays.append((re.match(r"\((.*?)\)", header).group(1), lines))
        team_plays = ["hyperpod_teams_absent", "hyperpod_teams_present"]
        assert [pattern for pattern, _ in plays] == ["localhost", "localhost", *team_plays, "localhost", "localhost"], result.stdout
        team_hosts = sorted(h for h in hosts if h.startswith("team_"))
        for pattern, play_hosts in plays:
            expected = [h for h in team_hosts if "hyperpod_teams_" + state_of[h] == pattern] if pattern in team_plays else ["localhost"]
            assert sorted(play_hosts) == expected, (inventory.name, pattern, play_hosts)
        covered += team_hosts
        holders += "localhost" in hosts
    assert sorted(covered) == sorted("team_" + t["name"].replace("-", "_") for t in teams)
    # The cluster-wide plays (cluster comparison, isolation matrix) run where the inventory's localhost is.
    assert holders == 1


def task_results(result: Result, task: str) -> dict:
    """host -> result of the task named ``task`` in a run's ansible.posix.json report."""
    return {host: r for play in result.report["plays"] for t in play["tasks"] if t["task"]["name"] == task for host, r in t["hosts"].items()}


def test_a_sliced_drift_report_finds_each_team_in_its_slice_and_compares_the_cluster_once(sample, tmp_path):
    """Both slices of a drift report, run as AWX runs them (the project's group_vars, no team file on
    the command line): each compares its own teams, only the slice holding the inventory's
    localhost compares the cluster and crosses the teams, and the drift is reported by its team's slice."""
    assert_ok(sample.run("site.yml"), "site.yml")
    shrink_quota(sample.client, "nlp")
    slices = awx_slices(sample.inventory, 2, tmp_path)
    # The sandbox inventory finds the sandbox's state directory from inventory_dir, which Ansible's
    # implicit localhost does not have: name it as the unsliced run computed it.
    extra = {"enforce": False, "hyperpod_sandbox_dir": str(sample.inventory / ".." / ".." / ".sandbox")}
    runs = []
    for _, inventory in slices:
        command = [ANSIBLE_PLAYBOOK, "-i", str(inventory), "playbooks/drift.yml", "--check", "--diff", "-e", json.dumps(extra)]
        done = subprocess.run(command, cwd=ROOT, env=sample.env, capture_output=True, text=True, timeout=1200, check=False)
        runs.append(Result(done.returncode, done.stdout, done.stderr))
    for (hosts, _), result in zip(slices, runs, strict=True):
        teams = sorted(h for h in hosts if h.startswith("team_"))
        assert sorted(h for h in result.stats if h != "localhost") == teams, result.failures() or result.stdout[-3000:] + result.stderr[-3000:]
        assert result.stats["localhost"]["failures"] == (1 if "team_nlp" in hosts else 0), result.stdout[-3000:]
        holder = "localhost" in hosts
        cluster = task_results(result, "Compare the EKS add-on, the HyperPod cluster and the scheduler policy")["localhost"]
        isolation = task_results(result, "Ask IAM about every team principal on every team's resources")["localhost"]
        assert (not cluster.get("skipped"), not isolation.get("skipped")) == (holder, holder)
        compared = task_results(result, "hyperpod.tenancy.team : Give the team its permission set, kubectl access, domain, quota, storage and budget")
        assert sorted(compared) == teams and not any(r.get("failed") for r in compared.values()), result.failures()
        if "team_nlp" in hosts:
            assert result.returncode == 2 and any("Drift in nlp:" in line for line in result.failures()), result.failures()
        else:
            assert_ok(result, f"slice without nlp: {teams}")
