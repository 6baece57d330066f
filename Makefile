# commcheck — make targets named in README.md.
SHELL := /bin/bash
.DEFAULT_GOAL := help
ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
VENV := $(ROOT)/.venv
PY := $(VENV)/bin/python
BUILD := $(ROOT)/.build
COLLECTIONS := $(BUILD)/collections
# Outside the repository: inside it ansible-test would only see files git tracks.
SANITY_ROOT := $(or $(TMPDIR),/tmp)/commcheck-sanity/ansible_collections/clusterops/commcheck
APT_PACKAGES := openssh-server openssh-client iperf3 openmpi-bin libopenmpi-dev perftest \
	ibverbs-utils infiniband-diags iproute2 rsync numactl procps psmisc kmod python3-venv chromium git make
export ANSIBLE_COLLECTIONS_PATH := $(COLLECTIONS)
export PATH := $(VENV)/bin:$(PATH)
LAB ?= demo
LAB_HOSTS ?= 4

.PHONY: help setup apt venv link demo lab-up lab-down unit integration test lint sanity build changelog-lint clean

help:
	@echo "make demo   - set up this machine, start a $(LAB_HOSTS)-host lab, run the one-click check, print the report path"
	@echo "make test   - unit + integration (lab) tests, ansible-lint, ansible-test sanity, collection build"
	@echo "make setup  - only install system packages and the Python venv"

setup: apt venv link

apt:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing: $$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

venv: $(VENV)/.installed

$(VENV)/.installed: requirements-dev.txt requirements.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt -r requirements.txt
	touch $@

link:
	@mkdir -p $(COLLECTIONS)/ansible_collections/clusterops
	@ln -sfn ../../../.. $(COLLECTIONS)/ansible_collections/clusterops/commcheck

demo: setup
	$(PY) tests/lab/lab.py up --replace --name $(LAB) --hosts $(LAB_HOSTS)
	ANSIBLE_CONFIG=$(BUILD)/lab/$(LAB)/ansible.cfg \
	  ANSIBLE_CALLBACKS_ENABLED=clusterops.commcheck.commcheck_history \
	  COMMCHECK_HISTORY_DIR=$(ROOT)/reports/history-$(LAB) $(VENV)/bin/ansible-playbook \
	  -i $(BUILD)/lab/$(LAB)/inventory.yml playbooks/commcheck.yml \
	  -e commcheck_report_dir=$(ROOT)/reports/$(LAB)
	@echo "Report: $$(ls -d $(ROOT)/reports/$(LAB)/*/ 2>/dev/null | tail -n 1)report.html"

lab-down:
	$(PY) tests/lab/lab.py down --name $(LAB)

unit: venv link
	$(PY) -m pytest -q -n 2 tests/unit

integration: venv link
	$(PY) -m pytest -q tests/integration

lint: venv link
	$(VENV)/bin/ansible-lint --profile production

changelog-lint: venv
	$(VENV)/bin/antsibull-changelog lint

sanity: venv
	rm -rf $(SANITY_ROOT) && mkdir -p $(SANITY_ROOT)
	git ls-files -co --exclude-standard | rsync -a --files-from=- $(ROOT)/ $(SANITY_ROOT)/
	mkdir -p $(HOME)/.ansible/test/cache
	cp tests/tools/ansible_test_get_pip.py $(HOME)/.ansible/test/cache/get_pip_24_2.py
	cd $(SANITY_ROOT) && $(VENV)/bin/ansible-test sanity --venv --python 3.11 --color no

build: venv
	mkdir -p $(BUILD)/dist
	$(VENV)/bin/ansible-galaxy collection build --force --output-path $(BUILD)/dist .

test: setup
	$(MAKE) unit
	$(MAKE) integration
	$(MAKE) lint
	$(MAKE) changelog-lint
	$(MAKE) sanity
	$(MAKE) build

clean:
	rm -rf $(BUILD) reports
