"""execution-environment.yml: ansible-builder makes a build context of runtime dependencies only.

Building the image needs podman or docker with a daemon, which CI does not have (docs/awx.md):
the test stops at `ansible-builder create`, which writes the Containerfile and copies the files.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml
from bindep.depends import Depends
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
EE = yaml.safe_load((ROOT / "execution-environment.yml").read_text())
# What requirements.txt carries for tests, lint and the sandbox, never for a job.
TEST_ONLY = {"pytest", "pytest-xdist", "molecule", "moto", "ansible-lint", "ruff", "yamllint", "parliament", "ansible-builder", "flask", "werkzeug"}


def requirements(path: Path) -> dict[str, Requirement]:
    found = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r "):
            found.update(requirements(path.parent / line[3:].strip()))
        elif line:
            requirement = Requirement(line)
            found[canonicalize_name(requirement.name)] = requirement
    return found


RUNTIME = requirements(ROOT / "requirements-ee.txt")
PINNED = requirements(ROOT / "requirements.txt")


@pytest.fixture(scope="module")
def context(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("ee") / "context"
    result = subprocess.run(
        [str(BIN / "ansible-builder"), "create", "-f", "execution-environment.yml", "-c", str(target), "--output-filename", "Containerfile"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return target


def test_definition_is_schema_3_with_the_repository_files():
    assert EE["version"] == 3
    dependencies = EE["dependencies"]
    assert (dependencies["python"], dependencies["system"], dependencies["galaxy"]) == ("requirements-ee.txt", "bindep.txt", "requirements.yml")
    assert dependencies["ansible_core"]["package_pip"] == f"ansible-core{PINNED['ansible-core'].specifier}"


def test_create_writes_a_build_context_of_the_runtime_files(context):
    build = context / "_build"
    assert (build / "requirements.txt").read_text() == (ROOT / "requirements-ee.txt").read_text()
    assert (build / "bindep.txt").read_text() == (ROOT / "bindep.txt").read_text()
    assert yaml.safe_load((build / "requirements.yml").read_text()) == yaml.safe_load((ROOT / "requirements.yml").read_text())
    containerfile = (context / "Containerfile").read_text()
    assert f'ARG EE_BASE_IMAGE="{EE["images"]["base_image"]["name"]}"' in containerfile
    refs = re.search(r'ARG ANSIBLE_INSTALL_REFS="([^"]*)"', containerfile).group(1).split()
    assert refs == [EE["dependencies"]["ansible_core"]["package_pip"], EE["dependencies"]["ansible_runner"]["package_pip"]]
    assert 'ARG PYCMD="/usr/bin/python3.11"' in containerfile
    assert "ansible-galaxy collection install" in containerfile and "introspect" in containerfile


def test_build_context_has_no_test_tools(context):
    installed = requirements(context / "_build" / "requirements.txt")
    assert not set(installed) & TEST_ONLY
    containerfile = (context / "Containerfile").read_text().lower()
    for tool in sorted(TEST_ONLY):
        assert re.search(rf"pip install[^\n]*\b{re.escape(tool)}\b", containerfile) is None, tool


def test_runtime_pins_match_the_tested_pins():
    """requirements-ee.txt is the runtime part of requirements.txt, at the versions CI tests."""
    assert RUNTIME
    for name, requirement in RUNTIME.items():
        assert name in PINNED, f"{name} is in requirements-ee.txt but not in requirements.txt"
        assert str(requirement.specifier) == str(PINNED[name].specifier), name
        assert str(requirement.specifier).startswith("=="), f"{name} is not pinned"
    assert not set(RUNTIME) & TEST_ONLY


def _third_party_imports() -> set[str]:
    stdlib = set(sys.stdlib_module_names)
    found = set()
    for path in (ROOT / "plugins").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in stdlib and top not in ("ansible", "ansible_collections", "__future__"):
                    found.add(top)
    return found


def test_every_library_the_plugins_import_is_in_the_ee():
    distributions = importlib.metadata.packages_distributions()
    imports = _third_party_imports()
    assert "botocore" in imports  # the scan sees the plugins' imports
    for module in imports:
        names = {canonicalize_name(d) for d in distributions.get(module, [])}
        assert names & set(RUNTIME), f"plugins import {module} ({names or 'not installed'}): add it to requirements-ee.txt"


@pytest.fixture(scope="module")
def introspected(tmp_path_factory) -> dict:
    """What ansible-builder's introspection merges in the image: the collections' requirements and ours.

    Run on the copies of requirements.yml's collections that the ansible package bundles (the versions CI tests).
    """
    import ansible_collections

    bundled = Path(list(ansible_collections.__path__)[-1])
    folder = tmp_path_factory.mktemp("collections")
    for collection in yaml.safe_load((ROOT / "requirements.yml").read_text())["collections"]:
        namespace, name = collection["name"].split(".")
        (folder / "ansible_collections" / namespace).mkdir(parents=True, exist_ok=True)
        (folder / "ansible_collections" / namespace / name).symlink_to(bundled / namespace / name)
    script = Path(__import__("ansible_builder").__file__).parent / "_target_scripts" / "introspect.py"
    result = subprocess.run(
        [sys.executable, str(script), "introspect", "--user-pip=requirements-ee.txt", "--user-bindep=bindep.txt", str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout[result.stdout.index("---") :])


def test_pins_satisfy_what_the_collections_require(introspected):
    """kubernetes.core wants kubernetes, amazon.aws boto3/botocore: the EE pins them at tested versions that fit."""
    merged = [Requirement(line.split("#", 1)[0].strip()) for line in introspected["python"]]
    from_collections = [r for r, line in zip(merged, introspected["python"], strict=True) if "from collection user" not in line]
    assert {canonicalize_name(r.name) for r in from_collections} >= {"boto3", "botocore", "kubernetes"}
    for requirement in from_collections:
        pinned = RUNTIME.get(canonicalize_name(requirement.name))
        if pinned is not None:
            version = str(pinned.specifier).removeprefix("==")
            assert requirement.specifier.contains(version, prereleases=True), f"{requirement} does not accept our pin {pinned}"
    assert not {canonicalize_name(r.name) for r in merged} & TEST_ONLY


def test_bindep_names_packages_for_both_platform_families():
    depends = Depends((ROOT / "bindep.txt").read_text())
    rpm = [rule[0] for rule in depends.active_rules(["platform:rpm", "platform:redhat", "platform:centos"])]
    dpkg = [rule[0] for rule in depends.active_rules(["platform:dpkg", "platform:debian"])]
    assert rpm == ["ca-certificates", "git-core"]
    assert dpkg == ["ca-certificates", "git"]


def test_galaxy_requirements_cover_the_collection_dependencies():
    galaxy = yaml.safe_load((ROOT / "galaxy.yml").read_text())
    listed = {c["name"] for c in yaml.safe_load((ROOT / "requirements.yml").read_text())["collections"]}
    assert set(galaxy["dependencies"]) <= listed


def test_python_interpreter_matches_the_tested_python():
    """The image's Python is the one requirements.txt's pins are tested on. A run on another ansible-core of the range
    (docs/development.md, "ansible-core versions"; 2.20 and 2.21 need Python 3.12) does not test the image's pins."""
    if importlib.metadata.version("ansible-core") not in PINNED["ansible-core"].specifier:
        pytest.skip("this run tests ansible-core %s, not the image's pinned %s" % (importlib.metadata.version("ansible-core"), PINNED["ansible-core"]))
    interpreter = EE["dependencies"]["python_interpreter"]
    version = sysconfig.get_python_version()
    assert interpreter["package_system"] == f"python{version}"
    assert interpreter["python_path"] == f"/usr/bin/python{version}"


def test_image_finds_galaxy_collections_under_the_project_config(context):
    """The final stage checks, under the project's own collections_path, that the Galaxy collections are found."""
    import configparser

    config = configparser.ConfigParser()
    config.read(ROOT / "ansible.cfg")
    project_setting = config["defaults"]["collections_path"]
    final = (context / "Containerfile").read_text().split("FROM base AS final", 1)[1]
    assert "/usr/share/ansible/collections" in project_setting.split(":")
    check = final.index(f"collections_path = {project_setting}\\n' > ansible.cfg")
    assert final.index("COPY --from=galaxy /usr/share/ansible /usr/share/ansible") < check
    assert "ansible-doc -l amazon.aws" in final[check:] and "import boto3, botocore, kubernetes" in final[check:]
