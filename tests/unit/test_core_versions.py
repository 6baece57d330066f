# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles and plugins behave the same on every supported ansible-core (2.16 to 2.19).

Before 2.19, templating differs in ways the roles must not depend on:

- a template that ends in a null gives "" (only a bare variable or a value
  inside a list or mapping stays null): a null is omitted, or kept inside a
  container, never the whole value of an argument or a fact;
- a template's text is read back as a Python literal when it looks like one
  ("{...}", "[...]"): a JSON text that a task parses with ``from_json`` must
  be the template's only output, or JSON without true/false/null comes back
  as a mapping;
- each value of a mapping is templated on its own, a computed number comes
  out as text and a null as "": a mapping handed on as data is built in one
  expression, where the types stay.

The static checks cover every task file; the others template the roles' own
task values with the running core (``make compat`` runs this file on each).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import glob
import os
import re

import pytest
import yaml
from ansible.inventory.host import Host
from ansible.module_utils import basic
from ansible.parsing.dataloader import DataLoader
from ansible.playbook.task import Task
from ansible.template import Templar

from ansible_collections.clusterops.commcheck.plugins.callback import commcheck_history
from core_compat import core_version, patch_module_args, trust_as_template
from test_commcheck_history_callback import _callback, _Named, _Play, _run_ids

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TASK_FILES = sorted(glob.glob(os.path.join(REPO, "roles", "*", "tasks", "*.yml")))
JINJA_FILES = sorted(glob.glob(os.path.join(REPO, "roles", "*", "templates", "*.j2")))
# what the play's omit token is before 2.19 (2.19 knows omit itself and drops the key)
OMIT = "__omit_place_holder__commcheck_test"
ENDS_IN_NULL = re.compile(r"(\belse\s+none|\bdefault\(\s*none\s*(,\s*true\s*)?\))[\s)]*\}\}\s*$")
ENDS_IN_NUMBER = re.compile(r"\|\s*(int|float)[\s)]*\}\}\s*$")
ENDS_IN_JSON = re.compile(r"\|\s*(ansible\.builtin\.)?to_json[\s)]*\}\}\s*$")


# ------------------------------------------------------------------ the task files

def tasks_of(tasks):
    for task in tasks or []:
        if isinstance(task, dict):
            yield task
            for key in ("block", "rescue", "always"):
                yield from tasks_of(task.get(key))


def strings(value, path):
    """(path, text) of every string in a task's value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from strings(item, "%s.%s" % (path, key))
    elif isinstance(value, list):
        for num, item in enumerate(value):
            yield from strings(item, "%s[%d]" % (path, num))
    elif isinstance(value, str):
        yield path, value.strip()


def task_strings():
    """(where, task, text) of every string of every task of every role."""
    for path in TASK_FILES:
        with open(path) as handle:
            tasks = yaml.safe_load(handle)
        where = os.path.relpath(path, REPO)
        for task in tasks_of(tasks):
            for key, value in task.items():
                for inner, text in strings(value, key):
                    yield "%s: %s: %s" % (where, task.get("name"), inner), text


def set_values(task):
    """(name, value) of what a task sets: its vars and its set_fact."""
    for name, value in (task.get("vars") or {}).items():
        yield "vars.%s" % name, value
    for key in ("ansible.builtin.set_fact", "set_fact"):
        for name, value in (task.get(key) or {}).items():
            yield "set_fact.%s" % name, value


def task_named(role, name, prefix):
    with open(os.path.join(REPO, "roles", role, "tasks", name)) as handle:
        [task] = [t for t in tasks_of(yaml.safe_load(handle)) if t.get("name", "").startswith(prefix)]
    return task


def ends_in_null(text):
    """True when the template's last expression can end in a null (not one given to a filter or test)."""
    match = ENDS_IN_NULL.search(text)
    if not match:
        return False
    opened = []
    for pos, char in enumerate(text[text.rindex("{{"):match.start()]):
        if char == "(":
            opened.append(pos)
        elif char == ")" and opened:
            opened.pop()
    head = text[text.rindex("{{"):]
    # an open parenthesis right after a name or '=' is a call's: the null is an argument there
    return not any(re.search(r"[\w=]\s*$", head[:pos]) for pos in opened)


def test_no_template_ends_in_a_null():
    found = [where for where, text in task_strings() if "{{" in text and ends_in_null(text)]
    assert not found, "omit the value, or keep the null inside a list or mapping: %s" % found


def test_a_json_text_is_the_only_output_of_its_template():
    found = [where for where, text in task_strings() if ENDS_IN_JSON.search(text) and text.count("{{") > 1]
    for path in JINJA_FILES:
        with open(path) as handle:
            text = handle.read().strip()
        if ENDS_IN_JSON.search(text) and text.count("{{") > 1:
            found.append(os.path.relpath(path, REPO))
    assert not found, "change state with {%% set _ = ... %%}, print only the JSON: %s" % found


def test_a_mapping_set_as_data_keeps_its_numbers_and_nulls():
    found = []
    for path in TASK_FILES:
        with open(path) as handle:
            tasks = yaml.safe_load(handle)
        for task in tasks_of(tasks):
            for name, value in set_values(task):
                if not isinstance(value, (dict, list)):
                    continue
                found += ["%s: %s: %s" % (os.path.relpath(path, REPO), task.get("name"), inner)
                          for inner, text in strings(value, name)
                          if ENDS_IN_NUMBER.search(text) or ends_in_null(text)]
    assert not found, "build the mapping in one expression: %s" % found


# ------------------------------------------------------------------ the running core's templating

def trusted(value):
    """A value read from a task file, its strings templates (as Ansible loads a task file)."""
    if isinstance(value, dict):
        return dict((key, trusted(item)) for key, item in value.items())
    if isinstance(value, list):
        return [trusted(item) for item in value]
    return trust_as_template(value) if isinstance(value, str) else value


def template(value, variables, task=None):
    """``value`` (task arguments or one template) as this core templates it for ``task`` (its vars apply);
    omitted keys left out."""
    variables = dict(variables, **trusted((task or {}).get("vars") or {}))
    if core_version() < (2, 19):
        variables["omit"] = OMIT
    if isinstance(value, dict):
        out = Templar(loader=DataLoader(), variables=variables).template(trusted(value))
        return dict((key, item) for key, item in out.items() if item != OMIT)
    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template(value))


@pytest.mark.parametrize("job, expected", [({}, None), ({"port_counters": {"mlx5_0": {"1": {}}}}, {"mlx5_0": {"1": {}}})])
def test_the_latest_port_counters_stay_unset_until_a_test_reads_them(job, expected):
    # a "" instead of null would hide the first pass's counters from the verdicts (pair_check step counters)
    name = "commcheck_pair_perf_counters_latest"
    for role_file, prefix in (("gpudirect.yml", "Keep the first results apart"), ("retest_run.yml", "Keep the first results apart")):
        task = task_named("pair_perf", role_file, prefix)
        latest = template({name: task["ansible.builtin.set_fact"][name]}, {name: None, "commcheck_pair_perf_job": job})
        assert latest.get(name) == expected, role_file  # an omitted fact keeps its value: null


# ------------------------------------------------------------------ plugins and test helpers

def core_task_result(data):
    """A task result as this core hands it to callbacks (CallbackTaskResult from 2.19, TaskResult before)."""
    from ansible.executor import task_result  # pylint: disable=import-outside-toplevel
    result_class = getattr(task_result, "CallbackTaskResult", None) or task_result.TaskResult
    return result_class(Host("node-a"), Task(), data, {})


def test_the_history_callback_reads_the_results_this_core_hands_it(tmp_path):
    callback = _callback(tmp_path, run_id="r1")
    callback.v2_playbook_on_play_start(_Play())
    callback.v2_runner_on_ok(core_task_result({"changed": False, "sides": []}))
    assert not os.listdir(str(tmp_path))
    callback.v2_runner_on_ok(core_task_result({"commcheck_records": [
        {"kind": "tcp_bw", "host": "node-a", "peer": "node-b", "verdict": "pass"}]}))
    assert _run_ids(tmp_path) == ["r1"]
    assert isinstance(callback, commcheck_history.CallbackModule)


class _PublicResult(object):
    """A task result with only the public names (2.19 has both; it plans to deprecate the underscored ones)."""

    def __init__(self, data, host, no_log=False):
        self.result, self.host, self.task = data, _Named(host), _Named("task")
        self.task.no_log = no_log


def test_the_history_callback_reads_the_public_names_of_a_task_result(tmp_path):
    callback = _callback(tmp_path, run_id="r1")
    callback.v2_playbook_on_play_start(_Play())
    record = {"kind": "tcp_bw", "host": "node-b", "peer": "node-a", "verdict": "pass"}
    callback.v2_runner_on_ok(_PublicResult({"commcheck_records": [dict(record, verdict="fail")]}, "node-b", no_log=True))
    assert not os.listdir(str(tmp_path))  # the task's no_log is read from its public name too
    callback.v2_runner_on_unreachable(_PublicResult({"unreachable": True}, "node-c"))
    callback.v2_runner_on_ok(_PublicResult({"commcheck_records": [record]}, "node-b"))
    assert _run_ids(tmp_path) == ["r1"]
    assert callback._seen_hosts() == {"ok": ["node-b"], "failed": [], "unreachable": ["node-c"]}


def test_module_arguments_reach_ansible_module_on_this_core():
    with patch_module_args({"name": "x", "count": 3}):
        module = basic.AnsibleModule(argument_spec={"name": {"type": "str"}, "count": {"type": "int"}})
    assert (module.params["name"], module.params["count"]) == ("x", 3)
