# commcheck — make targets named in README.md.
SHELL := /bin/bash
.DEFAULT_GOAL := help
ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
VENV := $(ROOT)/.venv
PY := $(VENV)/bin/python
BUILD := $(ROOT)/.build
COLLECTIONS := $(BUILD)/collections
# ansible-lint's own cache (ANSIBLE_HOME), private to this checkout: see lint.
LINT_HOME := $(BUILD)/ansible-lint-home
# The stages of `make test` (the fast tier), in order; each one runs even when an earlier one failed.
TEST_STAGES := unit integration lint changelog-lint sanity build
# `make test-full` runs these after the fast tier's: the tests marked `full` (slower
# end-to-end runs, the largest verdict cases, the checks of the lab and its emulators), which
# the fast tier leaves out, and ansible-test sanity on the folders only developers use.
FULL_STAGES := unit-full integration-full sanity-tests compat
APT_PACKAGES := openssh-server openssh-client iperf3 openmpi-bin libopenmpi-dev perftest \
	ibverbs-utils infiniband-diags iproute2 rsync numactl procps psmisc kmod python3-venv chromium git make prometheus
export ANSIBLE_COLLECTIONS_PATH := $(COLLECTIONS)
export PATH := $(VENV)/bin:$(PATH)
LAB ?= demo
# The version is written once, in galaxy.yml; the tarball's name and the image tag follow it.
VERSION := $(shell sed -n 's/^version: *//p' $(ROOT)/galaxy.yml)
TARBALL := $(BUILD)/dist/clusterops-commcheck-$(VERSION).tar.gz
# execution-environment.yml takes the collection from here (a name without the version).
EE_DIR := $(BUILD)/ee
EE_TARBALL := $(EE_DIR)/clusterops-commcheck.tar.gz
LAB_HOSTS ?= 4

.PHONY: help setup apt venv link demo lab-up lab-down unit unit-full integration integration-full compat test test-full lint sanity sanity-tests sanity-venvs build ee clients changelog-lint mutation clean

help:
	@echo "make demo   - set up this machine, start a $(LAB_HOSTS)-host lab, run the one-click check, print the report path"
	@echo "make test   - the fast tier (<= 15 min on 2 cores): unit tests, the fast lab tier (one run of every distinct"
	@echo "              behaviour: healthy, several faults at once, Kubernetes, slices, ansible-runner, AWX launches,"
	@echo "              reliability), ansible-lint, ansible-test sanity of what the collection ships, collection build"
	@echo "make test-full - make test, then the full tier (CI runs this): the tests marked full (unit-full,"
	@echo "              integration-full), ansible-test sanity of tests/, benchmarks/, tools/, .ci/ (sanity-tests), compat"
	@echo "make compat - the other supported ansible-core versions ($(COMPAT_VERSIONS)): sanity subset, unit tests, one lab one-click each"
	@echo "make setup  - only install system packages, the Python venv and ansible-test's sanity venvs"
	@echo "Stages alone: make unit | unit-full | integration | integration-full | lint | changelog-lint | sanity |"
	@echo "              sanity-tests | compat | build; a new test is fast unless marked @pytest.mark.full (docs/DEVELOPING.md)"
	@echo "make mutation - mutation testing of the core (mutmut, hours; MUTATION_ARGS=FILE for one; not part of make test)"

setup: apt venv link sanity-venvs

# tools/apt-install waits (up to 10 minutes) for apt/dpkg locks others hold instead of failing at once.
apt:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing: $$missing"; \
	  $(ROOT)/tools/apt-install $$missing; \
	fi

venv: $(VENV)/.installed

$(VENV)/.installed: requirements-dev.txt requirements.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt -r requirements.txt
	touch $@

link:
	@mkdir -p $(COLLECTIONS)/ansible_collections/clusterops
	@ln -sfn ../../../.. $(COLLECTIONS)/ansible_collections/clusterops/commcheck

demo: apt venv link
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
	$(PY) -m pytest -q -n 2 -m "not full" tests/unit

unit-full: venv link
	$(PY) -m pytest -q -n 2 -m full tests/unit

# Two workers, one test file each at a time: every worker brings up its own labs
# (lab names carry the worker's pid), so module fixtures stay whole and labs never
# clash. Lab tests mostly wait (SSH, shaped links, test durations), so two workers
# halve the stage; a third made a loaded two-core machine noisy enough to turn
# healthy emulated links flaky.
integration: venv link
	$(PY) -m pytest -q -n 3 --dist loadfile --durations=20 -m "not full" tests/integration

integration-full: venv link
	$(PY) -m pytest -q -n 2 --dist loadfile --durations=20 -m full tests/integration

# The ansible-core versions the collection supports besides the .venv's 2.19 (which every other stage tests),
# each in its own venv under .build/compat/<version>/ (made once; again when tests/compat/requirements.txt
# changes): that version's ansible-test sanity subset, the unit tests that use the parts of ansible-core that differ between versions (at most 4 cases
# of each parametrized test function) and one short one-click lab run (tests/integration/test_compat_lab.py).
# tests/compat/matrix.py prints the result and seconds of each stage of each version; a skipped lab fails.
COMPAT_VERSIONS ?= 2.16 2.17 2.18
# COMPAT_ARGS=--pylint adds pylint on plugins/ to each version's sanity subset (several minutes a version).
COMPAT_ARGS ?=
compat: venv link
	$(PY) tests/compat/matrix.py --versions $(COMPAT_VERSIONS) $(COMPAT_ARGS)

# Lint this working tree only. With ANSIBLE_COLLECTIONS_PATH set, ansible-lint uses
# ANSIBLE_HOME (default ~/.ansible, shared by every checkout) as its cache, puts its
# collections directory first, and (unless --offline) installs a copy of the tree
# there; a copy left by another checkout would be linted instead. --offline and a
# private ANSIBLE_HOME leave only .build's link to this tree.
lint: venv link
	$(PY) tools/gen_docs.py --check
	mkdir -p $(LINT_HOME)
	ANSIBLE_HOME=$(LINT_HOME) $(VENV)/bin/ansible-lint --offline --profile production

changelog-lint: venv
	$(VENV)/bin/antsibull-changelog lint

# ansible-test runs in a copy of the working tree (in the working tree it would only see files git tracks):
# .build/sanity, this checkout's own, which no other checkout shares. Every run first makes the copy
# what the working tree is (a file gone from the tree goes from the copy) but keeps its tests/output, where
# ansible-test keeps the virtual environment it delegates to (--venv). `make setup` primes that one and the
# sanity tests' own (~/.ansible/test/venv, shared by every checkout of this user: one primes at a time), so the
# sanity stages install nothing. One sanity stage at a time per checkout (a lock on the copy).
# `make sanity` (the fast tier) checks what the collection's users get (plugins, roles, playbooks, meta, docs,
# changelogs, awx, extensions, the top-level files); `make sanity-tests` (the full tier) the folders only its
# developers use, SANITY_DEV_PATHS.
SANITY_ROOT := $(BUILD)/sanity
SANITY_TREE := $(SANITY_ROOT)/ansible_collections/clusterops/commcheck
SANITY_DEV_PATHS := tests benchmarks tools .ci
ANSIBLE_TEST_HOME := $(HOME)/.ansible/test
# ANSIBLE_TEST_CONTENT_ROOT: the copy is the content, not a part of this git checkout (git tracks none of it).
ANSIBLE_TEST := cd $(SANITY_TREE) && ANSIBLE_TEST_CONTENT_ROOT=$(SANITY_TREE) $(VENV)/bin/ansible-test sanity \
	--venv --python 3.11 --color no

# $(call sanity_copied,commands): hold this checkout's sanity lock, make the copy the working tree, then run
# the commands (in the copy; $$targets: its top-level entries, directories with a trailing slash).
define sanity_copied
	@set -e; \
	mkdir -p $(SANITY_TREE)/tests $(ANSIBLE_TEST_HOME)/cache; \
	exec 9>$(SANITY_ROOT)/.lock; flock 9; \
	find $(SANITY_TREE) -mindepth 1 -maxdepth 1 ! -name tests -exec rm -rf {} +; \
	find $(SANITY_TREE)/tests -mindepth 1 -maxdepth 1 ! -name output -exec rm -rf {} +; \
	git ls-files -co --exclude-standard | rsync -a --ignore-missing-args --files-from=- $(ROOT)/ "$(SANITY_TREE)/"; \
	cp tests/tools/ansible_test_get_pip.py $(SANITY_ROOT)/get_pip.py; \
	mv -f $(SANITY_ROOT)/get_pip.py $(ANSIBLE_TEST_HOME)/cache/get_pip_24_2.py; \
	targets=$$(cd $(SANITY_TREE) && for entry in $$(ls -A); do if [ -d "$$entry" ]; then echo "$$entry/"; else echo "$$entry"; fi; done); \
	echo "sanity tree: $(SANITY_TREE)"; \
	$(1)
endef

sanity-venvs: venv
	$(call sanity_copied,flock $(ANSIBLE_TEST_HOME)/venv.lock $(SHELL) -c '$(ANSIBLE_TEST) --prime-venvs')

sanity: venv
	$(call sanity_copied,shipped=$$(printf '%s\n' $$targets | grep -vxF $(foreach p,$(SANITY_DEV_PATHS),-e $(p)/)); \
	  $(ANSIBLE_TEST) $$shipped)

sanity-tests: venv
	$(call sanity_copied,dev=$$(printf '%s\n' $$targets | grep -xF $(foreach p,$(SANITY_DEV_PATHS),-e $(p)/)); \
	  $(ANSIBLE_TEST) $$dev)

build: venv
	mkdir -p $(BUILD)/dist
	$(VENV)/bin/ansible-galaxy collection build --force --output-path $(BUILD)/dist .

# The execution environment's build context (.build/ee/context): the collection built first, its
# tarball where execution-environment.yml takes it from, then `ansible-builder create` (no container
# engine needed; `podman build` of the context makes the image). ansible-builder only logs a file of
# additional_build_files it cannot find, so the context is checked for the tarball.
ee: build
	mkdir -p $(EE_DIR)
	cp $(TARBALL) $(EE_TARBALL)
	rm -rf $(EE_DIR)/context
	$(VENV)/bin/ansible-builder create -f execution-environment.yml --context $(EE_DIR)/context \
	  --output-filename Containerfile -v 1
	@test -s $(EE_DIR)/context/_build/dist/$(notdir $(EE_TARBALL)) || \
	  { echo "the build context lacks the collection tarball"; exit 1; }
	@echo "Build the image: podman build -f $(EE_DIR)/context/Containerfile -t commcheck-ee:$(VERSION) $(EE_DIR)/context"

# The real clients on the built collection, all of their checks (tests/unit/test_collection_clients.py
# runs the quick part): galaxy-importer as Galaxy runs it on an upload (ansible-doc of every plugin,
# ansible-lint, READMEs, changelog, manifest) must log no WARNING or ERROR; `ee` writes the execution
# environment's build context with ansible-builder. galaxy-importer works in a temporary directory.
clients: ee
	@set -e; \
	tmp=$$(mktemp -d "$${TMPDIR:-/tmp}/commcheck-clients.XXXXXX"); \
	trap 'rm -rf "$$tmp"' EXIT; \
	printf '[galaxy-importer]\nrun_ansible_test = False\nrun_ansible_lint = True\ncheck_required_tags = True\ntmp_root_dir = %s\n' "$$tmp" > "$$tmp/galaxy-importer.cfg"; \
	echo "galaxy-importer $(TARBALL)"; \
	if ! (cd "$$tmp" && GALAXY_IMPORTER_CONFIG="$$tmp/galaxy-importer.cfg" ANSIBLE_HOME="$$tmp/ansible-home" \
	      $(PY) -m galaxy_importer.main $(TARBALL) > "$$tmp/import.log" 2>&1); then cat "$$tmp/import.log"; exit 1; fi; \
	if grep -E '^(WARNING|ERROR|CRITICAL)' "$$tmp/import.log"; then echo "galaxy-importer complained"; exit 1; fi; \
	tail -n 1 "$$tmp/import.log"

# Mutation testing of the core, outside `make test` (about 6,500 mutants: hours on 2 busy cores): tools/mutation.py runs
# mutmut over the files of its TARGETS, each with its unit tests, in a copy of the tree under
# .build/mutation (mutmut's mutants/ copy too), prints per file the mutants, the killed, the equivalent
# (EQUIVALENT, with the reason) and every survivor, and fails when a survivor is not explained.
# MUTATION_ARGS: e.g. "discovery/gid.py --show" (one file, with each survivor's diff).
MUTATION_ARGS ?=
mutation: venv link
	$(PY) tools/mutation.py $(MUTATION_ARGS)

# Every stage runs even when an earlier one failed; a summary of all of them comes
# at the end, and the exit status is non-zero when any failed (pytest's 5, "no
# tests collected", is a failure like any other non-zero status).
define run_stages
	@failed=0; summary=""; \
	for stage in $(1); do \
	  echo "==> make $$stage"; \
	  start=$$(date +%s); \
	  if $(MAKE) --no-print-directory $$stage; then result=pass; else result=FAIL; failed=1; fi; \
	  summary+=$$(printf '%-16s %-6s %6ss' "$$stage" "$$result" "$$(( $$(date +%s) - start ))")$$'\n'; \
	done; \
	echo; echo "make $(2) summary:"; printf '%-16s %-6s %7s\n' stage result time; printf '%s' "$$summary"; \
	if [ "$$failed" -ne 0 ]; then echo "make $(2): FAILED"; exit 1; fi; \
	echo "make $(2): all stages passed"
endef

test: setup
	$(call run_stages,$(TEST_STAGES),test)

test-full: setup
	$(call run_stages,$(TEST_STAGES) $(FULL_STAGES),test-full)

clean:
	rm -rf $(BUILD) reports
