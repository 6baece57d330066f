# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One pair-check engine in the roles too (issue 35 §3): the task files of a pair check exist once, in the internal
role pair_perf, family-neutral; rdma_perf and tcp_perf (and the one-click role through them) run them with their
family, a row of planning/families.py. A new family needs its row, its tool module and a thin role, not a copy."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import glob
import itertools
import os
import re

import yaml

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import families

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENGINE = "pair_perf"
# what tells one family's copy of a file from another's
FAMILY_WORDS = re.compile(r"rdma|tcp|perftest|iperf3|gpu", re.I)
# a family's own variable (commcheck_rdma_pattern, commcheck_tcp_perf_job, ...)
FAMILY_VARIABLE = re.compile(r"\bcommcheck_(rdma|tcp)_\w+")


def task_files(role):
    return sorted(glob.glob(os.path.join(REPO, "roles", role, "tasks", "*.yml")))


def load(path):
    with open(path) as handle:
        return yaml.safe_load(handle) or []


def roles():
    return sorted(os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(REPO, "roles", "*/")))


def role_families():
    """The families a role runs: every row but those another row reaches as its pass from GPU memory."""
    reached = set(row.get("gpudirect") for row in families.FAMILIES.values())
    return sorted(name for name in families.FAMILIES if name not in reached)


def normalized(tasks):
    """The tasks with their names and the comments gone and every family word alike."""
    return FAMILY_WORDS.sub("FAMILY", yaml.safe_dump([dict((k, v) for k, v in task.items() if k != "name")
                                                      for task in tasks], sort_keys=True))


def copies(files):
    """The pairs of task files of two roles that are one file but for their family words, task names and comments;
    ``files``: [(role, name, tasks)]. A role's entry point that only imports the engine is no copy."""
    def engine_entry(tasks):
        return all((task.get("ansible.builtin.import_role") or {}).get("name") == "clusterops.commcheck." + ENGINE
                   for task in tasks)
    return [(a[:2], b[:2]) for a, b in itertools.combinations(files, 2)
            if a[0] != b[0] and not engine_entry(a[2]) and normalized(a[2]) == normalized(b[2])]


def test_no_two_roles_hold_a_task_file_equal_after_renaming_the_family_words():
    assert copies([(role, os.path.basename(path), load(path)) for role in roles() for path in task_files(role)]) == []
    # the parallel files the roles held before (rdma_perf/tasks/rounds.yml and tcp_perf's) are found
    rounds = [{"name": "Run the rounds one after the other", "ansible.builtin.include_tasks": "round.yml",
               "loop": "{{ commcheck_%s_perf_run.rounds }}" % family} for family in ("rdma", "tcp")]
    assert copies([("rdma_perf", "rounds.yml", [rounds[0]]), ("tcp_perf", "rounds.yml", [rounds[1]])]) == [
        (("rdma_perf", "rounds.yml"), ("tcp_perf", "rounds.yml"))]


def test_the_pair_check_roles_hold_no_task_file_of_the_engine_but_their_entry_points():
    engine = set(os.path.basename(p) for p in task_files(ENGINE))
    assert {"run.yml", "measure.yml", "round.yml", "rounds.yml", "collect.yml", "retest.yml", "retest_run.yml",
            "retest_again.yml", "verdicts.yml", "gpudirect.yml"} <= engine
    for family in role_families():
        role = families.family(family)["check"]
        own = set(os.path.basename(p) for p in task_files(role))
        # main.yml notes each host's rails, run.yml (the one-click role's entry) imports the engine
        assert own == {"main.yml", "run.yml"}, (role, own)


def test_each_family_s_role_runs_the_engine_with_its_family_statically():
    for family in role_families():
        role = families.family(family)["check"]
        [task] = load(os.path.join(REPO, "roles", role, "tasks", "run.yml"))
        engine = {"name": "clusterops.commcheck.pair_perf", "tasks_from": "run", "rolespec_validate": False}
        assert task["ansible.builtin.import_role"] == engine, role
        assert task["vars"] == {families.FAMILY_VAR: family}, role
        main = load(os.path.join(REPO, "roles", role, "tasks", "main.yml"))
        assert main[-1].get("ansible.builtin.import_tasks") == "run.yml", role
        # what the engine's first gathering reads: each host's rails, noted by the role under the shared name
        assert any("commcheck_pair_perf_rails" in t.get("ansible.builtin.set_fact", {}) for t in main), role


def test_the_engine_s_family_choices_are_the_families_a_role_runs():
    with open(os.path.join(REPO, "roles", ENGINE, "meta", "argument_specs.yml")) as handle:
        spec = yaml.safe_load(handle)["argument_specs"]
    assert list(spec) == ["run"]
    option = spec["run"]["options"][families.FAMILY_VAR]
    assert option["required"] is True and option["choices"] == role_families() == ["rdma", "tcp"]


def test_the_engine_s_tasks_name_no_family_and_no_family_s_variable():
    found = []
    for path in task_files(ENGINE):
        text = yaml.safe_dump(load(path))  # the comments left out
        found += ["%s: %s" % (os.path.basename(path), m.group(0)) for m in FAMILY_VARIABLE.finditer(text)]
        for task in load(path):
            for action in ("clusterops.commcheck.pair_check", "clusterops.commcheck.pair_tests"):
                if action in task:
                    # the step's family is the role's (commcheck_pair_family), never written in the shared file
                    assert "family" not in (task[action] or {}), (path, task["name"])
            tools = ("clusterops.commcheck.perftest", "clusterops.commcheck.iperf3")
            assert not any(tool in task for tool in tools), (path, task["name"])
    assert found == []


def test_every_meeting_of_the_slices_is_named_after_the_family():
    """RDMA and TCP run one after the other in one run: their meetings (fleet_facts steps) must differ."""
    steps = []
    for path in task_files(ENGINE):
        for task in load(path):
            if "clusterops.commcheck.fleet_facts" in task:
                steps.append(task["clusterops.commcheck.fleet_facts"]["step"])
    assert len(steps) == 7 and len(set(steps)) == 7
    assert all(step.startswith("{{ %s }}-perf-" % families.FAMILY_VAR) for step in steps), steps


def test_the_engine_starts_each_family_s_run_from_no_results_before_its_tests():
    run = load(os.path.join(REPO, "roles", ENGINE, "tasks", "run.yml"))
    names = [task["name"] for task in run]
    reset = run[names.index("Start every host of the check with no results")]["ansible.builtin.set_fact"]
    # every result a host keeps across tasks (not registered anew by every run of the check) starts empty
    assert reset == {"commcheck_pair_perf_sides": [], "commcheck_pair_perf_retest_sides": [],
                     "commcheck_pair_perf_counters_latest": None, "commcheck_pair_perf_result": {}}
    assert names.index("Start every host of the check with no results") < names.index("Measure on every host of the check")


def _tasks(entries):
    for task in entries or []:
        yield task
        for section in ("block", "rescue", "always"):
            yield from _tasks(task.get(section))


# Keywords Ansible templates before a task's (or its import's) `when`: they must hold where the check does not run
# too, where every result of this role is the skipped result the other family's (or this one's) skipped task left.
BEFORE_WHEN = ("run_once", "loop")


def _static_files(name):
    """The task file and those it imports statically, at any depth (an included file is templated only where its
    include runs)."""
    files = [name]
    for task in _tasks(load(os.path.join(REPO, "roles", ENGINE, "tasks", name))):
        if task.get("ansible.builtin.import_tasks"):
            files.extend(_static_files(task["ansible.builtin.import_tasks"]))
    return files


SKIPPED = {"changed": False, "skipped": True, "skip_reason": "Conditional result was False", "false_condition": "x"}


def test_keywords_templated_before_when_hold_where_the_check_does_not_run():
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar
    try:
        from ansible.template import trust_as_template
    except ImportError:  # before ansible-core 2.19 every string is a template
        def trust_as_template(text):
            return text

    names = set(task["register"] for path in task_files(ENGINE) for task in _tasks(load(path)) if task.get("register"))
    keyed = []
    for name in _static_files("run.yml"):
        for task in _tasks(load(os.path.join(REPO, "roles", ENGINE, "tasks", name))):
            keyed.extend((name, task.get("name"), key, task[key]) for key in BEFORE_WHEN
                         if isinstance(task.get(key), str) and "{{" in task[key])
    assert keyed and "commcheck_pair_perf_run" in names
    variables = {}
    for role in ("commcheck", "rdma_perf", "tcp_perf", "collective"):
        path = os.path.join(REPO, "roles", role, "defaults", "main.yml")
        variables.update(load(path) if os.path.exists(path) else {})
    variables.update((name, dict(SKIPPED)) for name in names)
    variables.update(inventory_hostname="h1", ansible_check_mode=False)
    templar = Templar(loader=DataLoader(), variables=variables)
    for where, name, key, text in keyed:
        try:
            templar.template(trust_as_template(text))
        except Exception as exc:  # pylint: disable=broad-except
            raise AssertionError("%s, task %r: %s fails on a skipped result: %s" % (where, name, key, exc))
