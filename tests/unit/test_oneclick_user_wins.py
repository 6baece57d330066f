# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the user set for a check role's own variable wins over what the one-click check decides (issue 35).

Every option of a check's role the one-click role passes (``oneclick_role_vars.USER_OPTIONS``) is swept: set by the
user, its value goes through the one-click check's controller steps (check_plan plan, decide, runs) and reaches the
check role's controller step (pair_check, collective_plan) as the user gave it; left unset, the one-click check
fills it."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
from unittest import mock

import pytest
import yaml

from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import check_plan
from ansible_collections.clusterops.commcheck.plugins.action import collective_plan
from ansible_collections.clusterops.commcheck.plugins.action import pair_check
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import oneclick_role_vars as orv
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import oneclick_user_values as users

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOSTS = ["a", "b", "c", "d"]          # d has no test tool at all: the decision leaves it out of every check
FLEET = {"rails": {"a": [{"rail": 0}]}, "entries": dict((h, {"name": h}) for h in HOSTS), "tcp_rails": {}}

# one case per option: a value the user gives, unlike its role's default and unlike what the one-click decides
USER_CASES = [
    ("rdma", "commcheck_rdma_hosts", ["c", "a"], ["c", "a"]),
    ("rdma", "commcheck_rdma_hosts", ["c", "d", "c", "a"], ["c", "a"]),   # d is skipped (no tool); c once
    ("rdma", "commcheck_rdma_pattern", "star", "star"),
    ("rdma", "commcheck_rdma_pattern", "leaf_ring", "leaf_ring"),           # commcheck_pattern has no such choice
    ("rdma", "commcheck_rdma_pattern", "spine", "spine"),
    ("rdma", "commcheck_rdma_pattern", "mesh", "mesh"),                     # the role's default, set by the user
    ("rdma", "commcheck_rdma_ops", ["read", "send"], ["read", "send"]),
    ("rdma", "commcheck_rdma_ops", "read,send", ["read", "send"]),          # an AWX survey's text
    ("rdma", "commcheck_rdma_metrics", ["lat"], ["lat"]),
    ("collective", "commcheck_collective_hosts", ["b", "a"], ["b", "a"]),
    ("collective", "commcheck_collective_ops", ["all_gather"], ["all_gather"]),
    ("collective", "commcheck_collective_library", "hccl", "hccl"),         # auto would take nccl: every host has it
    ("tcp", "commcheck_tcp_hosts", ["c", "b"], ["c", "b"]),
    ("tcp", "commcheck_tcp_pattern", "star", "star"),
    ("tcp", "commcheck_tcp_pattern", "mesh", "mesh"),
]
# what the one-click check fills when the user left the option unset
FILLED = {"commcheck_rdma_hosts": ["a", "b", "c"], "commcheck_rdma_pattern": "ring", "commcheck_rdma_ops": ["write"],
          "commcheck_rdma_metrics": ["bw", "lat"], "commcheck_collective_hosts": ["a", "b", "c"],
          "commcheck_collective_ops": ["all_reduce"], "commcheck_collective_library": "nccl",
          "commcheck_tcp_hosts": ["a", "b", "c"], "commcheck_tcp_pattern": "ring"}


def make(module, args):
    task = mock.MagicMock()
    task.args = dict(args)
    task.check_mode = False
    task.async_val = 0
    task.module_defaults = []
    templar = mock.MagicMock()
    templar.template.side_effect = lambda value, **kwargs: value
    return module.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(), templar=templar,
                               shared_loader_obj=mock.MagicMock())


def defaults(role):
    with open(os.path.join(REPO, "roles", role, "defaults", "main.yml")) as handle:
        return yaml.safe_load(handle) or {}


def run_vars(check, extra=None, play=None):
    """The variables the one-click role's tasks see: the check role's defaults under the one-click role's, the
    play's variables, then the extra variables (which every host has too, as at the host level)."""
    task_vars = dict(defaults(orv.CHECK_ROLES[check]))
    task_vars.update(defaults("commcheck"))
    task_vars.update(play or {})
    task_vars.update(extra or {})
    hostvars = dict((host, dict(extra or {})) for host in HOSTS)
    task_vars.update(hostvars=hostvars, inventory_hostname="a", ansible_play_hosts=list(HOSTS),
                     ansible_play_hosts_all=list(HOSTS), commcheck_checks=[check, "discover"])
    return task_vars


def one_click(task_vars, check, runs=True):
    """check_plan's steps plan, decide and runs as the one-click role runs them; the runs step's result."""
    for name, step in (("commcheck_oneclick_plan", "plan"), ("commcheck_oneclick_decision", "decide")):
        result = make(check_plan, {"step": step}).run(task_vars=task_vars)
        assert not result.get("failed"), result
        task_vars[name] = result
        if step == "plan":
            found = ["%s\t/usr/bin/x" % key for key in result["probe_keys"]]
            for host in HOSTS:
                task_vars["hostvars"][host].update(
                    commcheck_discover_run={"probe": {"rc": 0, "stdout_lines": found if host != "d" else []}},
                    ansible_facts={"commcheck_rdma": {"summary": {"active_ports": 1}}})
    task_vars["commcheck_oneclick_hosts"] = FLEET
    result = make(check_plan, {"step": "runs", "check": check}).run(task_vars=task_vars)
    assert not result.get("failed") and result["runs"] is runs, result
    return result


def seen_by_the_check(task_vars, check, name):
    """The value the check role's controller step reads for ``name`` inside the one-click role."""
    inside = dict(task_vars, ansible_parent_role_names=[orv.ROLE])
    if check == "collective":
        return make(collective_plan, {"step": "probe"})._var(inside, name)  # pylint: disable=protected-access
    action = make(pair_check, {"family": check, "step": "hosts"})
    result = action.decide({"family": check, "step": "hosts"}, {}, inside)
    assert not result.get("failed"), result
    return action.opts(name)


def test_every_option_the_one_click_passes_has_a_user_case_and_is_the_check_role_s_or_a_note():
    specs = users.load_specs(sorted(orv.CHECK_ROLES.values()))
    declared = dict((role, set(spec["main"]["options"])) for role, spec in specs.items())
    for check, role in orv.CHECK_ROLES.items():
        passed = set(orv.role_vars(check, {}, {}, {}, "ring", []))
        assert passed == set(orv.USER_OPTIONS[check]) | set(orv.NOTES[check])
        assert set(orv.USER_OPTIONS[check]) <= declared[role]
        assert not any(set(orv.NOTES[check]) & names for names in declared.values())
    assert set(case[1] for case in USER_CASES) == set(
        name for options in orv.USER_OPTIONS.values() for name in options)
    assert set(FILLED) == set(name for options in orv.USER_OPTIONS.values() for name in options)


@pytest.mark.parametrize("check, name, given, expected", USER_CASES)
def test_a_value_the_user_set_reaches_the_check_role_s_step_inside_the_one_click(check, name, given, expected):
    task_vars = run_vars(check, extra={name: given})
    runs = one_click(task_vars, check)
    task_vars["commcheck_oneclick_runs_" + check] = runs
    assert runs["role_vars"][name] == expected
    assert seen_by_the_check(task_vars, check, name) == expected
    if name.endswith("_hosts"):
        assert runs["hosts"] == expected


@pytest.mark.parametrize("check, name", [(check, name) for check, options in orv.USER_OPTIONS.items()
                                         for name in options])
def test_an_option_the_user_left_unset_is_filled_by_the_one_click(check, name):
    task_vars = run_vars(check)
    task_vars["commcheck_oneclick_runs_" + check] = one_click(task_vars, check)
    assert seen_by_the_check(task_vars, check, name) == FILLED[name]


def test_a_play_value_counts_as_set_unless_it_is_the_role_s_default():
    task_vars = run_vars("tcp", play={"commcheck_tcp_pattern": "star", "commcheck_pattern": "pairs"})
    assert one_click(task_vars, "tcp")["role_vars"]["commcheck_tcp_pattern"] == "star"
    # a play variable equal to the role's default cannot be told from it: the one-click's pattern fills it
    task_vars = run_vars("tcp", play={"commcheck_tcp_pattern": "mesh", "commcheck_pattern": "star"})
    assert one_click(task_vars, "tcp")["role_vars"]["commcheck_tcp_pattern"] == "star"


def test_hosts_the_user_gave_that_cannot_run_the_check_leave_it_too_few_to_run():
    runs = one_click(run_vars("rdma", extra={"commcheck_rdma_hosts": ["a", "d"]}), "rdma", runs=False)
    assert (runs["runs"], runs["hosts"], runs["role_vars"]) == (False, ["a"], {})


def test_a_user_value_is_read_at_the_host_level_even_without_a_run_value():
    reader = mock.MagicMock(hostvars={"a": {"commcheck_tcp_pattern": "mesh"}})
    reader.run_value.return_value = users.MISSING
    reader.own.return_value = "mesh"
    assert users.user_values(reader, "a", "tcp_perf", ["commcheck_tcp_pattern", "commcheck_tcp_hosts"]) == {
        "commcheck_tcp_pattern": "mesh"}
