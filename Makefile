# `make demo` and `make test` work on a fresh clone: they create .venv first.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
# molecule and ansible-lint call ansible's own commands by name
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
export ANSIBLE_NOCOLOR := 1
SANITY_ROOT := build/sanity/ansible_collections/hyperpod/tenancy
PYTEST_WORKERS ?= 2

.PHONY: venv system-packages kube-binaries hyp-cli demo test lint sanity unit integration molecule newest bench clean sandbox-start sandbox-stop

# Debian packages the tests need: Chromium renders the report pages; Prometheus (prometheus, promtool)
# serves the usage month that the sandbox's AMP query API forwards to; iproute2 (ip netns) and nftables
# (nft, to read the enforcer's rules) for the node that enforces the NetworkPolicies (sandbox/kube/node.py);
# patch for building that enforcer (sandbox/kube/build.sh).
SYSTEM_PACKAGES := chromium prometheus iproute2 nftables patch

$(VENV)/.installed: requirements.txt requirements-common.txt
	python3 -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip check
	touch $@

venv: $(VENV)/.installed

# The newest ansible-core meta/runtime.yml claims, in a venv of its own (.venv holds the oldest): ansible-core 2.21 needs
# Python 3.12, pyenv's on this machine kind.
NEWEST_VENV ?= .venv-newest
NEWEST_PYTHON ?= $(shell PYENV_VERSION=$$(pyenv versions --bare 2>/dev/null | grep '^3\.12' | tail -1) pyenv which python3.12 2>/dev/null || command -v python3.12)

$(NEWEST_VENV)/.installed: requirements-newest.txt requirements-common.txt
	@test -n "$(NEWEST_PYTHON)" || { echo "the newest ansible-core needs Python 3.12: install it (pyenv install 3.12) or set NEWEST_PYTHON" >&2; exit 1; }
	$(NEWEST_PYTHON) -m venv $(NEWEST_VENV)
	$(NEWEST_VENV)/bin/pip install --quiet --upgrade pip
	$(NEWEST_VENV)/bin/pip install --quiet -r requirements-newest.txt
	$(NEWEST_VENV)/bin/pip check
	touch $@

# kube-apiserver, kube-controller-manager and etcd for the sandbox's cluster, built from their Go
# modules at the release sandbox/kube/apiserver/go.mod pins, and the NetworkPolicy enforcer
# kube-network-policies at the version sandbox/kube/netpol/go.mod pins, once per machine: cached under
# /var/cache/hyperpod-tenancy/ (KUBE_CACHE_DIR), so this is a no-op after the first build.
kube-binaries:
	@sandbox/kube/build.sh >/dev/null

# Installs what is missing when run as root (CI, a new machine), and otherwise says what to install.
# The SageMaker HyperPod CLI (PyPI sagemaker-hyperpod, the version sandbox/hyp/install.sh pins) in a venv of its own, for
# the test that runs hyp as a team member (tests/unit/sandbox/test_hyp_cli.py), once per machine: cached beside the kube
# binaries (KUBE_CACHE_DIR), so this is a no-op after the first install (about 2 minutes with an empty pip cache).
hyp-cli:
	@sandbox/hyp/install.sh >/dev/null

system-packages:
	@missing=$$(for package in $(SYSTEM_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$package 2>/dev/null | grep -q '^install ok installed' || echo $$package; done); \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing Debian packages: "$$missing; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
		else \
			echo "make test needs these Debian packages, which only root can install: sudo apt-get install -y "$$missing >&2; \
			exit 1; \
		fi; \
	fi

# Builds the cluster and onboards the sample teams on a sandbox of its own, prints the
# per-team summary, then writes last month's chargeback report from the seeded costs, and the
# same month by measured use (a generated month of metrics in a local Prometheus, read through
# the sandbox's AMP; its samples are hourly, hence the step): usage split, idle capacity, quota advice.
# On a fresh machine the venv (pip: mostly downloads and unpacking) and the kube binaries (Go: compiling, at nice 10)
# are made side by side, after the Debian packages the build needs.
demo: system-packages
	$(MAKE) --no-print-directory --output-sync=target -j2 venv kube-binaries
	$(PY) -m sandbox run -- /bin/sh -c '$(BIN)/ansible-playbook site.yml && $(BIN)/ansible-playbook playbooks/capacity.yml \
		&& $(PY) -m sandbox.kube.pod_identity_agent \
		&& $(BIN)/ansible-playbook playbooks/chargeback.yml \
		&& $(BIN)/ansible-playbook playbooks/usage_report.yml -e usage_step=3600'

# lint, sanity and molecule run side by side: each keeps about one core busy at most (ansible-lint, ansible-test's
# pylint and molecule's one playbook at a time, which also waits on its sandbox's start and statuses), so on CI's two
# cores the three take about as long as molecule alone (docs/development.md, "The suite's time budget"). unit and
# integration use both cores (pytest-xdist) and run alone, after them. The HyperPod CLI's install (hyp-cli, mostly waiting
# on PyPI) goes beside them too, so that unit finds it made.
# Each stage says how long it took, for the suite's time budget.
test: system-packages
	@SECONDS=0; $(MAKE) --no-print-directory --output-sync=target -j5 lint sanity molecule newest hyp-cli && echo "make test: lint, sanity, molecule and newest took $$SECONDS s"
	@SECONDS=0; $(MAKE) --no-print-directory unit && echo "make test: unit took $$SECONDS s"
	@SECONDS=0; $(MAKE) --no-print-directory integration && echo "make test: integration took $$SECONDS s"

lint: venv
	$(BIN)/ruff check .
	$(BIN)/yamllint -s .
	$(BIN)/ansible-lint --offline -q

# ansible-test sanity runs on exactly what the collection ships: the artifact that
# `ansible-galaxy collection build` makes (galaxy.yml's build_ignore leaves out the
# sandbox and the test harness), extracted where ansible-test expects it, beside
# the collections it depends on.
# ansible-test --venv bootstraps pip with a script it downloads from a host our machines
# cannot reach; .ci/get_pip_bootstrap.py does the same from ensurepip and PyPI. It goes where
# ansible-test looks for a cached copy, named after the pip version this ansible-test pins.
GET_PIP_CACHE = $$HOME/.ansible/test/cache/get_pip_$$($(PY) -c 'from types import SimpleNamespace; \
	from ansible_test._internal.python_requirements import get_venv_packages; \
	print(get_venv_packages(SimpleNamespace(version="3.11"))["pip"].replace(".", "_"))').py

sanity: venv
	install -D -m 0644 .ci/get_pip_bootstrap.py $(GET_PIP_CACHE)
	rm -rf build/sanity build/hyperpod-tenancy-*.tar.gz
	mkdir -p $(SANITY_ROOT)
	$(BIN)/ansible-galaxy collection build --force --output-path build/ >/dev/null
	tar -xzf build/hyperpod-tenancy-*.tar.gz -C $(SANITY_ROOT)
	for dependency in amazon kubernetes; do \
		ln -s $$($(PY) -c 'import ansible_collections; print(list(ansible_collections.__path__)[-1])')/$$dependency build/sanity/ansible_collections/$$dependency; \
	done
	cd $(SANITY_ROOT) && echo "tests/output/" > .gitignore && git init -q . && git add -A && \
		$(CURDIR)/$(BIN)/ansible-test sanity --python 3.11 --venv --requirements --color no

unit: venv kube-binaries hyp-cli
	$(BIN)/pytest -n $(PYTEST_WORKERS) --durations=15 tests/unit

integration: venv system-packages kube-binaries
	$(BIN)/pytest -n $(PYTEST_WORKERS) --durations=30 tests/integration

# The two ends of the ansible-core range meta/runtime.yml claims (docs/development.md, "ansible-core versions"): the oldest
# runs the whole suite in .venv; the newest runs the collection's unit tests, the in-worker run against the module process,
# and the installed artifact's life (dry run, cold site.yml, no-op, add_team, drift, remove_team). One worker: it runs
# beside lint, sanity and molecule.
newest: $(NEWEST_VENV)/.installed kube-binaries
	$(NEWEST_VENV)/bin/pytest -p no:cacheprovider tests/unit/plugins tests/unit/test_execution_environment.py tests/unit/test_observability_claims.py \
		tests/integration/test_in_worker_modules.py tests/integration/test_playbooks.py::$(INSTALLED_ARTIFACT_TEST)

INSTALLED_ARTIFACT_TEST := test_the_installed_artifact_from_a_dry_run_on_a_new_account_to_a_cold_site_a_no_op_a_corrected_role_and_an_offboarding

molecule: venv kube-binaries
	$(BIN)/molecule test --all

bench: venv
	$(PY) -m bench $(BENCH_ARGS)

sandbox-start: venv kube-binaries
	$(PY) -m sandbox start
	$(PY) -m sandbox seed >/dev/null

sandbox-stop:
	-$(PY) -m sandbox stop

clean:
	rm -rf build .pytest_cache .ruff_cache
