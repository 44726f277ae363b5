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

.PHONY: venv demo test lint sanity unit integration molecule bench clean sandbox-start sandbox-stop

$(VENV)/.installed: requirements.txt
	python3 -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip check
	touch $@

venv: $(VENV)/.installed

# Builds the cluster and onboards the sample teams on a sandbox of its own, prints the
# per-team summary, then writes last month's chargeback report from the seeded costs.
demo: venv
	$(PY) -m sandbox run -- /bin/sh -c '$(BIN)/ansible-playbook site.yml && $(BIN)/ansible-playbook playbooks/chargeback.yml'


test: lint sanity unit integration molecule

lint: venv
	$(BIN)/ruff check .
	$(BIN)/yamllint -s .
	$(BIN)/ansible-lint --offline -q

# ansible-test sanity runs on exactly what the collection ships: the artifact that
# `ansible-galaxy collection build` makes (galaxy.yml's build_ignore leaves out the
# sandbox and the test harness), extracted where ansible-test expects it, beside
# the collections it depends on.
sanity: venv $(GET_PIP_CACHE)
	rm -rf build/sanity build/hyperpod-tenancy-*.tar.gz
	mkdir -p $(SANITY_ROOT)
	$(BIN)/ansible-galaxy collection build --force --output-path build/ >/dev/null
	tar -xzf build/hyperpod-tenancy-*.tar.gz -C $(SANITY_ROOT)
	for dependency in amazon kubernetes; do \
		ln -s $$($(PY) -c 'import ansible_collections; print(list(ansible_collections.__path__)[-1])')/$$dependency build/sanity/ansible_collections/$$dependency; \
	done
	cd $(SANITY_ROOT) && echo "tests/output/" > .gitignore && git init -q . && git add -A && \
		$(CURDIR)/$(BIN)/ansible-test sanity --python 3.11 --venv --requirements --color no

unit: venv
	$(BIN)/pytest -n $(PYTEST_WORKERS) tests/unit

integration: venv
	$(BIN)/pytest -n $(PYTEST_WORKERS) tests/integration

molecule: venv
	$(BIN)/molecule test --all

bench: venv
	$(PY) -m bench

sandbox-start: venv
	$(PY) -m sandbox start
	$(PY) -m sandbox seed >/dev/null

sandbox-stop:
	-$(PY) -m sandbox stop

clean:
	rm -rf build .pytest_cache .ruff_cache
