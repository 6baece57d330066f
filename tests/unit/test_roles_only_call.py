# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the role tasks once templated, now computed in Python: the planned pair tool runs (perftest, iperf3), a
planned collective run, the CPU governor hold from the run's variables, the controller's wait for the tests, and
what the one-click role decides for the roles it runs (issue 35: roles that only call)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import socket
from unittest import mock

import pytest
import yaml

from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import check_plan
from ansible_collections.clusterops.commcheck.plugins.action import collective as collective_action
from ansible_collections.clusterops.commcheck.plugins.action import collective_plan
from ansible_collections.clusterops.commcheck.plugins.action import cpu_governor as governor_action
from ansible_collections.clusterops.commcheck.plugins.action import iperf3 as iperf3_action
from ansible_collections.clusterops.commcheck.plugins.action import pair_check
from ansible_collections.clusterops.commcheck.plugins.action import perftest as perftest_action
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import oneclick_role_vars as orv
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import pair_engine
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import planned_tests

ONECLICK = ["clusterops.commcheck.commcheck"]
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make(module, args, module_defaults=None, async_val=0):
    task = mock.MagicMock()
    task.args = dict(args)
    task.check_mode = False
    task.async_val = async_val
    task.module_defaults = module_defaults or []
    templar = mock.MagicMock()
    templar.template.side_effect = lambda value, **kwargs: value
    connection = mock.MagicMock()
    connection.has_native_async = False
    return module.ActionModule(task, connection, PlayContext(), loader=mock.MagicMock(), templar=templar,
                               shared_loader_obj=mock.MagicMock())


def executed(module, args, task_vars, module_defaults=None, async_val=0):
    """(what the module was run with: name, arguments, wrap_async) or the action's failed result."""
    action = make(module, args, module_defaults, async_val)
    with mock.patch.object(action, "_execute_module", return_value={"changed": False}) as execute, \
            mock.patch.object(action, "_remove_tmp_path"):
        result = action.run(task_vars=task_vars)
    if result.get("failed"):
        return result
    kwargs = execute.call_args.kwargs
    return kwargs["module_name"], kwargs["module_args"], kwargs.get("wrap_async")


# ---------------------------------------------------------------- perftest / iperf3 from the plan

def rdma_vars(**changes):
    run = {"rounds": [{"sides": {"h1": [{"role": "server", "rail": 0}], "h2": [{"role": "client", "rail": 0}]}}],
           "module_args": {"duration": 5, "timeout": 40, "port_counters": True, "fail_on_error": False}}
    out = {"inventory_hostname": "h2", "commcheck_pair_perf_run": run, "commcheck_sysfs_root": "/lab/h2/sys",
           "ansible_facts": {"commcheck_rdma": {"devices": ["mlx5_0"]}}}
    out.update(changes)
    return out


def test_perftest_planned_run_takes_this_host_s_sides_the_plan_s_options_sysfs_and_facts():
    name, args, wrap = executed(perftest_action, {"planned": "run"}, rdma_vars())
    assert name == "clusterops.commcheck.perftest" and not wrap
    assert args == {"sides": [{"role": "client", "rail": 0}], "duration": 5, "timeout": 40, "port_counters": True,
                    "fail_on_error": False, "sysfs_root": "/lab/h2/sys", "rdma_facts": {"devices": ["mlx5_0"]}}


def test_a_round_takes_the_round_s_sides_and_no_facts_are_given_where_the_host_has_none():
    task_vars = rdma_vars(commcheck_pair_perf_round={"sides": {"h2": [{"role": "server", "rail": 1}]}})
    del task_vars["ansible_facts"], task_vars["commcheck_sysfs_root"]
    _name, args, _wrap = executed(perftest_action, {"planned": "round"}, task_vars)
    assert args["sides"] == [{"role": "server", "rail": 1}]
    assert args["sysfs_root"] == "/sys" and "rdma_facts" not in args


def test_the_play_s_defaults_for_the_module_itself_win_over_the_plan_and_the_plan_over_group_defaults():
    defaults = [{"group/clusterops.commcheck.transport": {"transport": "kubectl", "duration": 1},
                 "clusterops.commcheck.perftest": {"timeout": 99, "kubectl": {"pod": "p"}}}]
    # the task's arguments as Ansible hands them over: the play's module_defaults merged in
    given = {"planned": "run", "transport": "kubectl", "duration": 1, "timeout": 99, "kubectl": {"pod": "p"},
             "sides": [{"role": "server"}]}
    _name, args, _wrap = executed(perftest_action, given, rdma_vars(), module_defaults=defaults)
    assert (args["transport"], args["kubectl"], args["timeout"], args["duration"]) == ("kubectl", {"pod": "p"}, 99, 5)
    # sides the task gives itself (no module_defaults entry names them) are its own
    assert args["sides"] == [{"role": "server"}]


def test_iperf3_runs_in_the_background_with_the_tcp_plan_and_never_gets_rdma_facts():
    run = {"rounds": [{"sides": {"h2": [{"role": "client", "server": "10.0.0.1"}]}}], "module_args": {"duration": 3}}
    task_vars = dict(rdma_vars(), commcheck_pair_perf_run=run)
    name, args, wrap = executed(iperf3_action, {"planned": "run"}, task_vars, async_val=60)
    assert name == "clusterops.commcheck.iperf3" and wrap is True
    assert args == {"sides": [{"role": "client", "server": "10.0.0.1"}], "duration": 3, "sysfs_root": "/lab/h2/sys"}


@pytest.mark.parametrize("task_vars, message", [
    ({"inventory_hostname": "h9"}, "commcheck_pair_perf_run holds no plan"),
    (dict(rdma_vars(), inventory_hostname="h9"), "host h9 has no sides in the planned run"),
])
def test_a_missing_plan_or_host_fails_the_task_naming_it(task_vars, message):
    result = executed(perftest_action, {"planned": "run"}, task_vars)
    assert result["failed"] and message in result["msg"]


def test_without_planned_the_module_gets_the_task_s_arguments_as_they_are():
    assert executed(perftest_action, {"role": "server", "sysfs_root": "/x"}, rdma_vars())[1] == {
        "role": "server", "sysfs_root": "/x"}
    assert executed(perftest_action, {"planned": "all"}, rdma_vars())["failed"]


def test_default_keys_reads_templated_entries_and_the_module_s_short_name():
    specific, named = planned_tests.default_keys(
        [{"perftest": {"timeout": 1}}, {"group/x": "{{ t }}"}], "clusterops.commcheck.perftest",
        lambda value: {"qps": 2})
    assert (specific, named) == ({"timeout"}, {"timeout", "qps"})


# ---------------------------------------------------------------- collective, cpu_governor

def test_a_planned_collective_run_s_args_stand_over_the_task_s_module_defaults():
    run = {"args": {"library": "nccl", "hosts": ["a"], "timeout": 30}, "label": "pool"}
    _name, args, _wrap = executed(collective_action, {"run": run, "transport": "kubectl", "timeout": 900}, {})
    assert args == {"library": "nccl", "hosts": ["a"], "timeout": 30, "transport": "kubectl"}
    assert executed(collective_action, {"run": {"label": "x"}}, {})["failed"]
    assert executed(collective_action, {"library": "hccl", "hosts": []}, {})[1] == {"library": "hccl", "hosts": []}


@pytest.mark.parametrize("options, expected", [
    ("hold", {"governor": "performance", "save_to": "/run/lock/cc", "sysfs_root": "/lab/sys"}),
    ("restore", {"restore_saved": "/run/lock/cc", "sysfs_root": "/lab/sys", "leftover": False}),
])
def test_the_governor_hold_and_its_end_take_the_run_s_variables(options, expected):
    task_vars = {"commcheck_cpu_governor": "performance", "commcheck_lock_dir": "/run/lock/cc",
                 "commcheck_sysfs_root": "/lab/sys"}
    given = {"role_options": options, "leftover": False} if options == "restore" else {"role_options": options}
    assert executed(governor_action, given, task_vars)[1] == expected


def test_an_undefined_sysfs_root_leaves_the_module_s_default_and_a_bad_choice_fails():
    assert executed(governor_action, {"role_options": "restore"}, {"commcheck_lock_dir": "/l"})[1] == {
        "restore_saved": "/l"}
    assert executed(governor_action, {"role_options": "switch"}, {})["failed"]


def test_the_collective_plan_names_the_hosts_that_hold_the_governor():
    with open(os.path.join(REPO, "roles", "collective", "defaults", "main.yml")) as handle:
        defaults = yaml.safe_load(handle)
    hostvars = {"a": {"commcheck_collective_entry": {"name": "a", "address": "10.0.0.1"}},
                "b": {"commcheck_collective_entry": {"name": "b", "address": "10.0.0.2"}, "commcheck_transport": "kubectl"},
                "c": {"commcheck_collective_entry": {"name": "c", "address": "10.0.0.3"}, "commcheck_cpu_governor": ""},
                # the role notes the address only: the entry is named after its host
                "d": {"commcheck_collective_entry": {"address": "10.0.0.4"}}}
    task_vars = dict(defaults, hostvars=hostvars, ansible_play_hosts=["a", "b", "c", "d"],
                     ansible_play_hosts_all=["a", "b", "c", "d"], inventory_hostname="a",
                     commcheck_collective_library="nccl", commcheck_cpu_governor="performance")
    result = make(collective_plan, {"step": "runs"}).run(task_vars=task_vars)
    assert not result.get("failed"), result
    # a pod (b) holds it too, through kubectl exec; c has none set
    assert result["chosen"] == ["a", "b", "c", "d"] and result["governor_hosts"] == ["a", "b", "d"]
    assert result["runs"][0]["args"]["hosts"][3] == {"name": "d", "address": "10.0.0.4"}
    off = make(collective_plan, {"step": "runs"}).run(task_vars=dict(task_vars, commcheck_cpu_governor=""))
    assert off["governor_hosts"] == []


# ---------------------------------------------------------------- the controller's wait

@pytest.mark.parametrize("run, now, expected", [
    ({"wait_s": 30, "started": 100.0}, 110.5, 19), ({"wait_s": 30, "started": 100.0}, 200.0, 1), ({}, 5.0, 1),
])
def test_the_wait_is_the_test_time_left_at_least_one_second(run, now, expected):
    assert pair_engine.wait_left(run, now=now) == expected


def test_the_wait_step_sleeps_what_is_left_of_the_registered_plan():
    action = make(pair_check, {"family": "tcp", "step": "wait"})
    with mock.patch.object(pair_check.time, "sleep") as sleep, \
            mock.patch.object(pair_engine.time, "time", return_value=1000.0):
        result = action.run(task_vars={"commcheck_pair_perf_run": {"wait_s": 12, "started": 995.0}})
    assert result["waited_s"] == 7 and sleep.call_args.args == (7,)


# ---------------------------------------------------------------- what the one-click role decides

PLAN = {"rdma_ops": ["write", "read"], "rdma_metrics": ["bw"], "collective_ops": ["all_reduce"], "need_facts": True}
DECISION = {"library": "nccl", "rdma_hosts": ["b", "a", "gone"], "collective_hosts": ["a"], "tcp_hosts": ["a", "b"]}
FLEET = {"rails": {"a": [{"rail": 0}]}, "entries": {"a": {"name": "a"}}, "tcp_rails": {"b": [{"rail": 0}]}}


def test_the_role_variables_of_each_check_keep_the_hosts_still_in_the_play():
    assert orv.role_vars("rdma", PLAN, DECISION, FLEET, "ring", ["a", "b"]) == {
        "commcheck_rdma_hosts": ["b", "a"], "commcheck_rdma_pattern": "ring", "commcheck_rdma_ops": ["write", "read"],
        "commcheck_rdma_metrics": ["bw"], "commcheck_pair_perf_counters_from_discovery": True,
        "commcheck_pair_perf_rails_by_host": {"a": [{"rail": 0}]}}
    assert orv.role_vars("collective", PLAN, DECISION, FLEET, "ring", ["b"])["commcheck_collective_hosts"] == []
    assert orv.role_vars("tcp", PLAN, DECISION, FLEET, "all", ["a", "b"]) == {
        "commcheck_tcp_hosts": ["a", "b"], "commcheck_tcp_pattern": "all",
        "commcheck_pair_perf_rails_by_host": {"b": [{"rail": 0}]}}
    with pytest.raises(ValueError):
        orv.role_vars("gpu", PLAN, DECISION, FLEET, "ring", [])


def test_the_runs_step_returns_the_role_variables_only_when_the_check_runs():
    task_vars = {"hostvars": {}, "ansible_play_hosts": ["a", "b"],
                 "commcheck_oneclick_plan": dict(PLAN, rdma=True, tcp=False),
                 "commcheck_oneclick_decision": DECISION, "commcheck_oneclick_hosts": FLEET, "commcheck_pattern": "all"}
    runs = make(check_plan, {"step": "runs", "check": "rdma"}).run(task_vars=task_vars)
    assert runs["runs"] and runs["role_vars"]["commcheck_rdma_pattern"] == "all"
    assert make(check_plan, {"step": "runs", "check": "tcp"}).run(task_vars=task_vars)["role_vars"] == {}


def test_pair_check_takes_the_one_click_decision_inside_the_one_click_role_only():
    own = {"commcheck_tcp_hosts": ["c"], "commcheck_tcp_pattern": "ring", "commcheck_tcp_timeout": 0,
           "commcheck_tcp_duration": 5, "commcheck_tcp_strategy": "pipelined",
           "ansible_play_hosts": ["a", "b", "c"], "ansible_play_hosts_all": ["a", "b", "c"],
           "commcheck_oneclick_runs_tcp": {
               "runs": True, "role_vars": orv.role_vars("tcp", PLAN, DECISION, FLEET, "all", ["a", "b", "c"])}}
    alone = make(pair_check, {"family": "tcp", "step": "hosts"}).run(task_vars=own)
    inside = make(pair_check, {"family": "tcp", "step": "hosts"}).run(
        task_vars=dict(own, ansible_parent_role_names=ONECLICK))
    assert (alone["hosts"], alone["rails_by_host"]) == (["c"], {})
    assert (inside["hosts"], inside["rails_by_host"]) == (["a", "b"], {"b": [{"rail": 0}]})


def test_collective_plan_takes_the_one_click_decision_inside_the_one_click_role_only():
    task_vars = {"commcheck_collective_ops": ["all_gather"],
                 "commcheck_oneclick_runs_collective": {"role_vars": {"commcheck_collective_ops": ["all_reduce"]}}}
    action = make(collective_plan, {"step": "probe"})
    assert action._var(task_vars, "commcheck_collective_ops") == ["all_gather"]  # pylint: disable=protected-access
    inside = dict(task_vars, ansible_parent_role_names=ONECLICK)
    assert action._var(inside, "commcheck_collective_ops") == ["all_reduce"]  # pylint: disable=protected-access


# ---------------------------------------------------------------- hosts that left the run: their ssh port

def test_a_listening_port_answers_and_a_closed_one_times_out():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        assert check_plan.ssh_port_answer("127.0.0.1", port, wait_s=2, connect_timeout_s=1) == ""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    assert check_plan.ssh_port_answer("127.0.0.1", port, wait_s=0.2, connect_timeout_s=0.1) == (
        "Timeout when waiting for 127.0.0.1:%d" % port)


def test_the_lost_step_asks_the_ssh_port_of_each_host_that_left_but_not_of_hosts_without_ssh():
    hostvars = {"up": {}, "pod": {"ansible_connection": "kubectl"},
                "down": {"ansible_host": "192.0.2.7", "ansible_port": "2222"}}
    asked = []

    def answer(address, port):
        asked.append((address, port))
        return "Timeout when waiting for %s:%s" % (address, port) if address == "192.0.2.7" else ""
    task_vars = {"hostvars": hostvars, "ansible_play_hosts": ["up"], "ansible_play_hosts_all": ["down", "up", "pod"]}
    with mock.patch.object(check_plan, "ssh_port_answer", side_effect=answer):
        out = make(check_plan, {"step": "lost"}).run(task_vars=dict(task_vars, ansible_play_hosts=[]))
    assert asked == [("192.0.2.7", 2222), ("up", 22)]
    assert [(r["host"], r["params"]["code"]) for r in out["records"]] == [
        ("down", "host_unreachable"), ("up", "host_failed"), ("pod", "host_lost")]
    assert out["records"][0]["evidence"] == ["Timeout when waiting for 192.0.2.7:2222"]


# ---------------------------------------------------------------- k8s manifests written by the render step

def test_the_render_step_writes_each_manifest_once_and_nothing_in_check_mode(tmp_path):
    from ansible_collections.clusterops.commcheck.plugins.action import pods_plan
    job, rbac = str(tmp_path / "made" / "r1-mpijob.yml"), str(tmp_path / "made" / "ns-kubexec-rbac.yml")
    files = [{"dest": job, "content": "kind: MPIJob\n"}, {"dest": rbac, "content": "kind: Role\n"}]
    assert pods_plan.write_manifests(files, check_mode=True) == [job, rbac]
    assert not (tmp_path / "made").exists()
    assert pods_plan.write_manifests(files, check_mode=False) == [job, rbac]
    assert (tmp_path / "made" / "r1-mpijob.yml").read_text() == "kind: MPIJob\n"
    assert oct((tmp_path / "made" / "r1-mpijob.yml").stat().st_mode & 0o777) == "0o644"
    files[1]["content"] = "kind: ClusterRole\n"
    assert pods_plan.write_manifests(files, check_mode=False) == [rbac]
    assert (tmp_path / "made" / "ns-kubexec-rbac.yml").read_text() == "kind: ClusterRole\n"


# ---------------------------------------------------------------- rdma_facts: a later reading keeps the facts

def test_a_host_discovered_before_only_reads_again_and_a_new_one_discovers():
    from ansible_collections.clusterops.commcheck.plugins.action import rdma_facts as facts_action
    given = {"keep_facts": True, "sysfs_root": "/lab/sys"}
    assert executed(facts_action, given, {"ansible_facts": {"commcheck_rdma": {"devices": []}}})[1] == {
        "sysfs_root": "/lab/sys", "facts": False, "tools": False}
    assert executed(facts_action, given, {"ansible_facts": {}})[1] == {"sysfs_root": "/lab/sys"}
    assert executed(facts_action, {"keep_facts": False}, {"ansible_facts": {"commcheck_rdma": {}}})[1] == {}


@pytest.mark.parametrize("given, host_vars, expected", [
    # rdma_perf alone on a host no discovery ran on: its leaf switches are asked as the discover role would
    ({}, {"commcheck_discover_topology_tools": True}, {"topology_tools": True}),
    ({}, {"commcheck_discover_topology_tools": False}, {"topology_tools": False}),
    # unset (the discover role's null): the module's own rule
    ({}, {}, {}),
    ({}, {"commcheck_discover_topology_tools": None}, {}),
    # the task's own value stands
    ({"topology_tools": False}, {"commcheck_discover_topology_tools": True}, {"topology_tools": False}),
])
def test_a_host_not_discovered_yet_asks_its_leaf_switches_as_discovery_would(given, host_vars, expected):
    from ansible_collections.clusterops.commcheck.plugins.action import rdma_facts as facts_action
    args = dict(given, keep_facts=True, sysfs_root="/lab/sys")
    assert executed(facts_action, args, dict(host_vars, ansible_facts={}))[1] == dict(expected, sysfs_root="/lab/sys")


def test_a_host_discovered_before_keeps_its_topology_and_asks_no_switch_again():
    from ansible_collections.clusterops.commcheck.plugins.action import rdma_facts as facts_action
    task_vars = {"commcheck_discover_topology_tools": True,
                 "ansible_facts": {"commcheck_rdma": {"topology": {"mlx5_0": {"leaf": "leaf-1"}}}}}
    assert executed(facts_action, {"keep_facts": True}, task_vars)[1] == {"facts": False, "tools": False}
