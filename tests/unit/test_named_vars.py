# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""fleet_facts reads the hosts, the unreachable hosts and derived values of a meeting from the variables it is given
the names of (``hosts_from``, ``unreachable_from``, a ``values`` entry as text), and record its records
(``records_from``), so the roles pass names, not templates (issue 35 section 4); every name a role passes is
registered by a task of that role."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import glob
import os
import re

import pytest
import yaml
from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import fleet_facts as ff
from ansible_collections.clusterops.commcheck.plugins.action import record as record_action
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.host_vars import MISSING, read_var
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.named_vars import task_value

try:
    from unittest import mock
except ImportError:  # pragma: no cover
    import mock

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# what the first host of a check holds after its run-once tasks registered their results
REGISTERED = {
    "chosen": {"hosts": ["n1", "n2", "n3"], "unreachable": ["n9"], "rails_by_host": {"n1": [{"rail": 0}]}},
    "fleet": {"hosts": ["n1", "n2", "n3", "n4"], "own": ["n2", "n3"], "leader": False, "slices": 2},
    "counted": {"counters": {"n2": {"delta": 4}}},
}


def read(path):
    return read_var(REGISTERED, path, MISSING)


def test_the_named_hosts_unreachable_hosts_and_values_are_read_from_the_variables_named():
    args = ff.named_inputs({"hosts": None, "hosts_from": "fleet.own", "unreachable": [],
                            "unreachable_from": "chosen.unreachable",
                            "values": {"counters": "counted.counters", "given": {"n2": 1}}}, read)
    assert args["hosts"] == ["n2", "n3"]                    # the slice's own hosts, not every slice's
    assert args["unreachable"] == ["n9"]
    assert args["values"] == {"counters": {"n2": {"delta": 4}}, "given": {"n2": 1}}
    # the first meeting takes the chosen hosts themselves
    assert ff.named_inputs({"hosts_from": "chosen.hosts", "values": {}}, read)["hosts"] == ["n1", "n2", "n3"]
    # hosts given as a list are taken as they are, and nothing is read
    given = ff.named_inputs({"hosts": ["n7"], "unreachable": ["n8"], "values": {}}, lambda path: 1 / 0)
    assert (given["hosts"], given["unreachable"]) == (["n7"], ["n8"])


@pytest.mark.parametrize("args, message", [
    ({"hosts": ["n1"], "hosts_from": "fleet.own"}, "give one of hosts and hosts_from .*not both"),
    ({}, "give one of hosts and hosts_from .*not neither"),
    ({"hosts_from": "fleet.nothing"}, "hosts_from 'fleet.nothing' names a variable the task's host does not have"),
    ({"hosts_from": "fleet"}, "hosts_from 'fleet' names a dict, not a list"),
    ({"hosts_from": "{{ fleet.own }}"}, "hosts_from .* must name a variable of the task's host"),
    ({"hosts_from": "fleet.own\n"}, "hosts_from .* contains a control character"),
    ({"hosts_from": "fleet.own", "unreachable": ["n1"], "unreachable_from": "chosen.unreachable"},
     "give one of unreachable and unreachable_from, not both"),
    ({"hosts_from": "fleet.own", "unreachable_from": "chosen.rails_by_host"},
     "unreachable_from 'chosen.rails_by_host' names a dict, not a list"),
    ({"hosts_from": "fleet.own", "values": {"counters": "fleet.own"}}, "values.counters 'fleet.own' names a list, "
                                                                       "not a mapping"),
    ({"hosts_from": "fleet.own", "values": {"counters": "counted.missing"}}, "values.counters .* does not have"),
])
def test_a_name_that_gives_no_host_list_or_mapping_is_refused_naming_the_option(args, message):
    with pytest.raises(ValueError, match=message):
        ff.named_inputs(args, read)


def _action(args, module=ff):
    task = mock.MagicMock()
    task.args = args
    task.check_mode = False
    task.async_val = 0
    templar = mock.MagicMock()
    templar.template.side_effect = lambda item, **kwargs: item
    return module.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(), templar=templar,
                               shared_loader_obj=mock.MagicMock())


def test_the_action_meets_with_the_hosts_and_values_of_the_first_hosts_registered_results():
    hostvars = {"n2": dict(REGISTERED, rails=[{"rail": 1}]), "n3": {"rails": [{"rail": 2}]}, "n4": {"rails": []}}
    result = _action({"step": "s", "hosts_from": "fleet.own", "unreachable_from": "chosen.unreachable",
                      "facts": {"rails": "rails"}, "values": {"counters": "counted.counters"},
                      "missing": {"counters": {}}}).run(
        task_vars={"hostvars": hostvars, "inventory_hostname": "n2", "commcheck_run_id": "r1"})
    assert not result.get("failed"), result
    assert result["own"] == ["n2", "n3"] and result["unreachable"] == ["n9"]
    assert result["facts"] == {"rails": {"n2": [{"rail": 1}], "n3": [{"rail": 2}]},
                               "counters": {"n2": {"delta": 4}, "n3": {}}}
    # the names are read on the task's own host: another host has no such results
    failed = _action({"step": "s", "hosts_from": "fleet.own"}).run(
        task_vars={"hostvars": hostvars, "inventory_hostname": "n3", "commcheck_run_id": "r1"})
    assert failed["failed"] and "hosts_from 'fleet.own' names a variable" in failed["msg"], failed


def test_a_magic_variable_of_the_play_names_the_hosts_too():
    hostvars = {"n1": {"fleet": {"own": ["n1"]}}, "n2": {}}
    task_vars = {"hostvars": hostvars, "inventory_hostname": "n1", "ansible_play_hosts_all": ["n1", "n2"],
                 "fleet": {"own": ["stale"]}}
    # the host's variables first (as fleet_facts reads every host's), the play's magic variables beside them
    assert task_value(task_vars, "fleet.own") == ["n1"]
    assert task_value(task_vars, "ansible_play_hosts_all") == ["n1", "n2"]
    assert task_value(task_vars, "ansible_play_hosts") is MISSING
    result = _action({"step": "s", "hosts_from": "ansible_play_hosts_all"}).run(
        task_vars=dict(task_vars, commcheck_run_id="r1"))
    assert not result.get("failed") and result["own"] == ["n1", "n2"], result


IMPORTS = ("ansible.builtin.import_role", "ansible.builtin.include_role")
# the internal role whose task files the pair-check roles (rdma_perf, tcp_perf) run as their own
ENGINE = "clusterops.commcheck.pair_perf"


def _role_tasks(role, seen=None):
    """Every task of the role's task files and of the engine's, where the role imports them (rdma_perf and tcp_perf
    run the task files of pair_perf): what registers a name and what reads it may sit in either."""
    seen = set() if seen is None else seen
    seen.add(role)
    tasks = []
    for path in sorted(glob.glob(os.path.join(REPO, "roles", role, "tasks", "*.yml"))):
        with open(path) as handle:
            stack = list(yaml.safe_load(handle) or [])
        while stack:
            task = stack.pop(0)
            tasks.append(task)
            for section in ("block", "rescue", "always"):
                stack[:0] = task.get(section) or []
    for task in list(tasks):
        imported = next((task[key]["name"] for key in IMPORTS if key in task), "")
        if imported == ENGINE and imported.split(".")[-1] not in seen:
            tasks += _role_tasks(imported.split(".")[-1], seen)
    return tasks


RECORD = {"kind": "tcp_bw", "host": "n2", "peer": "n3", "verdict": "pass"}


def test_record_publishes_the_records_the_variable_it_names_holds():
    judged = {"share": [RECORD], "records": [dict(RECORD, host="n3")]}
    # delegated to localhost, the task still reads its own host's variables
    task_vars = {"hostvars": {"n2": {"judged": judged}, "localhost": {}}, "inventory_hostname": "n2"}
    result = _action({"records_from": "judged.share"}, record_action).run(task_vars=task_vars)
    assert not result.get("failed"), result
    assert [(r["host"], r["peer"], r["verdict"]) for r in result["commcheck_records"]] == [("n2", "n3", "pass")]
    assert record_action.given_records({"records": [RECORD]}, lambda path: 1 / 0) == [RECORD]
    assert record_action.given_records({"records_from": "judged.records"},
                                       lambda path: read_var({"judged": judged}, path, MISSING))[0]["host"] == "n3"


@pytest.mark.parametrize("args, message", [
    ({"records": [RECORD], "records_from": "judged.share"}, "give one of records and records_from .*not both"),
    ({}, "give one of records and records_from .*not neither"),
    ({"records_from": "judged.none"}, "records_from 'judged.none' names a variable the task's host does not have"),
    ({"records_from": "judged"}, "records_from 'judged' names a dict, not a list"),
    ({"records_from": "judged.share | first"}, "records_from .* must name a variable"),
])
def test_record_refuses_records_it_cannot_read_naming_the_option(args, message):
    task_vars = {"hostvars": {"n2": {"judged": {"share": [RECORD]}}}, "inventory_hostname": "n2"}
    result = _action(args, record_action).run(task_vars=task_vars)
    assert result.get("failed"), result
    assert re.search(message, result["msg"]), result["msg"]


NAMING = {"clusterops.commcheck.fleet_facts": ("hosts_from", "unreachable_from"),
          "clusterops.commcheck.record": ("records_from",)}


@pytest.mark.parametrize("role", ["pair_perf", "rdma_perf", "tcp_perf", "collective", "commcheck", "discover",
                                  "report", "k8s_pods"])
def test_every_name_a_role_gives_fleet_facts_or_record_is_a_result_the_role_registers(role):
    tasks = _role_tasks(role)
    registered = set(task["register"] for task in tasks if "register" in task)
    named = []
    for task in tasks:
        action = next((name for name in NAMING if name in task), None)
        if action is None:
            continue
        args = task[action]
        # the role names the variable
        assert "hosts" not in args and "records" not in args, (role, task["name"])
        named += [args[option] for option in NAMING[action] if option in args]
        values = args.get("values") if isinstance(args.get("values"), dict) else {}
        named += [value for value in values.values() if isinstance(value, str)]
    assert len(named) >= {"pair_perf": 11, "rdma_perf": 11, "tcp_perf": 11, "collective": 6, "commcheck": 3}.get(role, 1), named
    assert [name for name in named if name != "ansible_play_hosts_all" and (
        name.split(".")[0] not in registered or "." not in name)] == []
