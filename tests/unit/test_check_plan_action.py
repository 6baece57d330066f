# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one-click role's controller steps (plugins/action/check_plan.py, planning/oneclick_hosts.py,
records/lost_hosts.py): what every host's variables and the run's give, read once."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from unittest import mock

import pytest

from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import check_plan as action
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import check_plan as cp
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import oneclick_hosts

RUN = {"commcheck_checks": ["discover", "rdma", "collective", "tcp"], "commcheck_collective_library": "auto",
       "commcheck_collective_ops": ["all_reduce"], "commcheck_rdma_ops": ["write"], "commcheck_rdma_metrics": ["bw"],
       "commcheck_devices": [], "commcheck_ib_port": 1, "commcheck_require_accelerators": True,
       "commcheck_collective_binary_dir": "", "commcheck_collective_mpirun": "mpirun"}


def rdma_facts(*ports, **identity):
    """A commcheck_rdma fact with ACTIVE ports ('mlx5_0:1', ...) and the machine identity given."""
    devices = {}
    for spec in ports:
        name, port = spec.split(":")
        devices.setdefault(name, []).append({"port": int(port), "state": "ACTIVE", "gid_index": 3,
                                             "link_layer": "Ethernet", "rate_gbps": 100})
    return {"devices": [{"name": name, "ports": found} for name, found in devices.items()],
            "summary": {"active_ports": len(ports), "devices": len(devices), "ports": len(ports)},
            "host": {"identity": identity or None}}


def run_step(hostvars, play_hosts=None, all_hosts=None, **args):
    """The action's result over ``hostvars`` (host: its own variables), the run's variables RUN updated with
    ``run`` (an argument of this helper), in check mode."""
    run = dict(RUN, **args.pop("run", {}))
    task = mock.MagicMock()
    task.args = args
    task.check_mode = True
    task.async_val = 0
    templar = mock.MagicMock()
    templar.template.side_effect = lambda value, **kwargs: value
    plugin = action.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(), templar=templar,
                                 shared_loader_obj=mock.MagicMock())
    hosts = list(hostvars) if play_hosts is None else play_hosts
    return plugin.run(task_vars=dict(run, hostvars=hostvars, ansible_play_hosts=hosts,
                                     ansible_play_hosts_all=all_hosts or list(hostvars)))


def plan_of(**run):
    result = run_step({}, step="plan", run=run)
    assert not result.get("failed"), result
    return result


def test_the_plan_takes_the_run_s_variables_and_says_what_the_probe_looks_for():
    plan = plan_of(commcheck_checks="tcp, nccl", commcheck_collective_ops="all_reduce,all_gather",
                   commcheck_collective_mpirun="", commcheck_collective_binary_dir="/opt/t/")
    assert plan["checks"] == ["tcp", "nccl"] and plan["library"] == "nccl"
    assert plan["collective_ops"] == ["all_reduce", "all_gather"]
    # an empty mpirun is mpirun; the binary directory's trailing slash goes
    assert plan["probe_keys"][:4] == ["cmd:iperf3", "cmd:mpirun", "cmd:/opt/t/all_reduce_perf",
                                      "cmd:/opt/t/all_gather_perf"]


def test_each_host_s_own_address_wins_over_the_run_s_then_ansible_host_then_its_name():
    plan = plan_of()
    hostvars = {"a": {"commcheck_address": "10.0.0.1", "ansible_host": "192.0.2.1",
                      "ansible_facts": {"commcheck_rdma": rdma_facts("mlx5_0:1")}},
                "b": {"ansible_host": "192.0.2.2", "commcheck_tcp_address": "10.9.0.2",
                      "ansible_facts": {"commcheck_rdma": rdma_facts("mlx5_0:1")}},
                "c": {"ansible_facts": {"commcheck_rdma": rdma_facts("mlx5_0:1")}}}
    out = run_step(hostvars, step="hosts", run={"commcheck_oneclick_plan": plan})
    assert out["entries"] == {"a": {"name": "a", "address": "10.0.0.1"}, "b": {"name": "b", "address": "192.0.2.2"},
                              "c": {"name": "c", "address": "c"}}
    assert out["tcp_rails"] == {"a": [{"rail": 0, "address": "192.0.2.1"}], "b": [{"rail": 0, "address": "10.9.0.2"}],
                                "c": [{"rail": 0, "address": "c"}]}
    with_run = run_step(hostvars, step="hosts", run={"commcheck_oneclick_plan": plan, "commcheck_address": "10.1.1.1"})
    assert [with_run["entries"][h]["address"] for h in "abc"] == ["10.0.0.1", "10.1.1.1", "10.1.1.1"]


def test_each_host_tests_its_own_devices_and_port_else_the_run_s():
    plan = plan_of()
    hostvars = {"a": {"commcheck_devices": ["mlx5_1"], "commcheck_ib_port": 2,
                      "ansible_facts": {"commcheck_rdma": rdma_facts("mlx5_0:1", "mlx5_1:2")}},
                "b": {"ansible_facts": {"commcheck_rdma": rdma_facts("mlx5_0:1", "mlx5_1:1")}}}
    out = run_step(hostvars, step="hosts", run={"commcheck_oneclick_plan": plan, "commcheck_devices": ["mlx5_0"]})
    assert not out.get("failed"), out
    assert [(r["device"], r["port"], r["rail"]) for r in out["rails"]["a"]] == [("mlx5_1", 2, 0)]
    assert [(r["device"], r["port"]) for r in out["rails"]["b"]] == [("mlx5_0", 1)]
    every = run_step(hostvars, step="hosts", run={"commcheck_oneclick_plan": plan})
    assert [r["device"] for r in every["rails"]["b"]] == ["mlx5_0", "mlx5_1"]


def test_a_device_asked_for_that_a_host_lacks_stops_the_run_naming_it_and_the_host_s_ports():
    plan = plan_of()
    hostvars = {"a": {"ansible_facts": {"commcheck_rdma": rdma_facts("mlx5_0:1")}},
                "b": {"ansible_facts": {"commcheck_rdma": rdma_facts("mlx5_0:1", "mlx5_1:1")}},
                "c": {"ansible_facts": {"commcheck_rdma": {"devices": []}}}}
    out = run_step(hostvars, step="hosts", run={"commcheck_oneclick_plan": plan, "commcheck_devices": ["mlx5_1"]})
    # c has no RDMA port at all: the tool probe skips it with its reason, it does not stop the run
    assert out["failed"] and out["msg"] == ("commcheck_devices: mlx5_1:1 not found on a (its RDMA ports: mlx5_0:1); "
                                            "nothing was run")
    assert out["unknown_devices"] == ["mlx5_1:1 not found on a (its RDMA ports: mlx5_0:1)"]


def test_without_the_rdma_check_devices_and_facts_are_not_read_and_nothing_stops_the_run():
    plan = plan_of(commcheck_checks=["tcp"])
    same = {"boot_id": "b1", "netns": "n1"}
    hostvars = {"a": {"ansible_facts": {"commcheck_rdma": rdma_facts("mlx5_0:1", **same)}},
                "b": {"ansible_facts": {"commcheck_rdma": rdma_facts("mlx5_0:1", **same)}}}
    out = run_step(hostvars, step="hosts", run={"commcheck_oneclick_plan": plan, "commcheck_devices": ["mlx5_9"]})
    assert not out.get("failed") and out["rails"] == {"a": [], "b": []} and out["identities"] == {"a": None, "b": None}
    rdma = run_step(hostvars, step="hosts", run={"commcheck_oneclick_plan": plan_of()})
    assert rdma["failed"] and "nothing was run" in rdma["msg"] and "a" in rdma["msg"] and "b" in rdma["msg"]


def test_the_decision_reads_each_host_s_probe_facts_and_own_tool_settings():
    plan = plan_of(commcheck_checks=["nccl"])
    has = {"rc": 0, "stderr": "", "stdout_lines": ["cmd:/opt/t/all_reduce_perf\t/x", "cmd:/opt/mpi/mpirun\t/y"]}
    old = {"rc": 0, "stderr": "", "stdout_lines": []}
    hostvars = {
        # the collective role's probe wins over discovery's
        "n1": {"commcheck_oneclick_probe_run": {"probe": has}, "commcheck_discover_run": {"probe": old},
               "commcheck_require_accelerators": "no"},
        "n2": {"commcheck_discover_run": {"probe": has}, "commcheck_collective_binary_dir": "/elsewhere",
               "commcheck_require_accelerators": False},
        # an empty own setting is the run's
        "n3": {"commcheck_discover_run": {"probe": has}, "commcheck_collective_mpirun": "",
               "commcheck_collective_binary_dir": "", "commcheck_require_accelerators": False},
        "n4": {"commcheck_discover_run": {"probe": has}},
    }
    run = {"commcheck_oneclick_plan": plan, "commcheck_collective_binary_dir": "/opt/t",
           "commcheck_collective_mpirun": "/opt/mpi/mpirun"}
    out = run_step(hostvars, step="decide", run=run)
    assert out["library"] == "nccl" and out["collective_hosts"] == ["n1", "n3"]
    causes = dict((r["host"], r["cause"]) for r in out["records"])
    assert causes["n2"] == "nccl-tests binary all_reduce_perf not found in /elsewhere"
    assert causes["n4"].startswith("no NVIDIA GPU found") and set(causes) == {"n2", "n4"}
    assert out["msg"] == "RDMA on no host; collective (nccl) on n1, n3; TCP on no host; 2 check(s) skipped"
    assert "commcheck_records" not in out  # the record action publishes them, not this step


@pytest.mark.parametrize("check, hosts_left, expected", [
    ("rdma", ["a", "b"], True), ("rdma", ["a", "c"], False), ("tcp", ["a", "b", "c"], True),
    ("collective", ["b"], True), ("collective", ["c"], False),
])
def test_a_check_runs_with_enough_of_its_hosts_still_in_the_play(check, hosts_left, expected):
    plan = plan_of()
    decision = {"library": "nccl", "rdma_hosts": ["a", "b"], "tcp_hosts": ["a", "b", "c"], "collective_hosts": ["b"]}
    out = run_step({}, play_hosts=hosts_left, step="runs", check=check,
                   run={"commcheck_oneclick_plan": plan, "commcheck_oneclick_decision": decision})
    assert out["runs"] is expected, out
    assert out["hosts"] == [h for h in decision[check + "_hosts"] if h in hosts_left]


@pytest.mark.parametrize("check, own, expected", [
    # the check's own pattern, set by the user, stands for that check (a topology pattern or any other); one equal
    # to its role's default cannot be told from the default, and the shared one fills it
    ("rdma", {"commcheck_rdma_pattern": "leaf_ring", "commcheck_tcp_pattern": "spine"}, "leaf_ring"),
    ("tcp", {"commcheck_rdma_pattern": "leaf_ring", "commcheck_tcp_pattern": "spine"}, "spine"),
    ("tcp", {"commcheck_rdma_pattern": "leaf_ring", "commcheck_tcp_pattern": "mesh"}, "ring"),
    ("tcp", {"commcheck_rdma_pattern": "spine"}, "ring"),
    ("rdma", {"commcheck_rdma_pattern": "star"}, "star"),
])
def test_a_check_s_own_topology_pattern_stands_for_it_in_the_one_click_check(check, own, expected):
    decision = {"library": "nccl", "rdma_hosts": ["a", "b"], "tcp_hosts": ["a", "b"], "collective_hosts": []}
    out = run_step({}, play_hosts=["a", "b"], step="runs", check=check,
                   run=dict(own, commcheck_oneclick_plan=plan_of(), commcheck_oneclick_decision=decision,
                            commcheck_pattern="ring"))
    assert out["role_vars"]["commcheck_%s_pattern" % check] == expected, out


def test_no_collective_without_a_library_and_no_check_not_planned():
    decision = {"library": None, "rdma_hosts": ["a", "b"], "tcp_hosts": ["a", "b"], "collective_hosts": ["a"]}
    assert not oneclick_hosts.check_runs(plan_of(), decision, "collective", ["a", "b"])
    assert not oneclick_hosts.check_runs(plan_of(commcheck_checks=["rdma"]), decision, "tcp", ["a", "b"])
    assert oneclick_hosts.check_runs(plan_of(commcheck_checks=["rdma"]), decision, "rdma", ["a", "b"])


def test_each_host_that_left_the_run_gets_the_finding_its_ssh_port_tells():
    hostvars = {"lost": {}, "down": {"ansible_host": "192.0.2.7", "ansible_port": 2222}, "failed": {}}
    probe = {"results": [{"commcheck_oneclick_lost": "lost", "skipped": True},
                         {"commcheck_oneclick_lost": "down", "failed": True,
                          "msg": "Timeout when waiting for 192.0.2.7:2222"},
                         {"commcheck_oneclick_lost": "failed", "elapsed": 0, "port": 22}]}
    out = run_step(hostvars, play_hosts=[], step="lost", probe=probe)
    assert [(r["host"], r["params"]) for r in out["records"]] == [
        ("lost", {"check": "commcheck", "finding": "lost", "code": "host_lost"}),
        ("down", {"check": "commcheck", "finding": "unreachable", "code": "host_unreachable"}),
        ("failed", {"check": "commcheck", "finding": "failed", "code": "host_failed"})]
    down = out["records"][1]
    assert down["cause"].startswith("down is unreachable (ssh to 192.0.2.7:2222 does not answer)")
    assert down["evidence"] == ["Timeout when waiting for 192.0.2.7:2222"]
    assert "(failed:22)" in out["records"][2]["cause"] and out["records"][2]["evidence"] == []
    assert all(r["verdict"] == "error" and r["kind"] == "finding" for r in out["records"])


def test_a_step_before_the_plan_fails_naming_it():
    out = run_step({"a": {}}, step="decide")
    assert out["failed"] and "commcheck_oneclick_plan is not a plan of this run" in out["msg"]
    assert cp.plan_checks([])["rdma"] is False


def test_the_run_lock_stop_step_names_every_run_that_holds_a_host_of_the_play_in_play_order():
    from ansible_collections.clusterops.commcheck.plugins.action import run_lock as lock_action
    hostvars = {"a": {"commcheck_run_lock": {"failed": True, "msg": "a is held by run r7"}},
                "b": {"commcheck_run_lock": {"acquired": True, "failed": False}},
                "c": {"commcheck_run_lock": {"failed": True, "msg": "c is held by run r8"}},
                "gone": {"commcheck_run_lock": {"failed": True, "msg": "not in the play any more"}},
                "d": {}}
    assert lock_action.held_messages(hostvars, ["c", "b", "a", "d"]) == ["c is held by run r8", "a is held by run r7"]
    task = mock.MagicMock()
    task.args = {"state": "held", "run_id": "r1"}
    task.async_val = 0
    plugin = lock_action.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(),
                                      templar=mock.MagicMock(), shared_loader_obj=mock.MagicMock())
    held = plugin.run(task_vars={"hostvars": hostvars, "ansible_play_hosts": ["a", "b"]})
    assert held["failed"] and held["msg"] == "a is held by run r7"
    free = plugin.run(task_vars={"hostvars": hostvars, "ansible_play_hosts": ["b", "d"]})
    assert not free.get("failed") and free["changed"] is False
