# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collective role's controller steps (plugin_utils/collective_steps.py and the collective_plan action):
the rules the role's run-once Jinja held before, each pinned once."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

import pytest
import yaml

from unittest import mock

from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import collective_plan as action
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import collective_steps as steps

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def role_defaults():
    with open(os.path.join(REPO, "roles", "collective", "defaults", "main.yml")) as handle:
        return yaml.safe_load(handle)


def variables(**changes):
    out = dict(role_defaults(), **changes)
    return out


def dev(name, state):
    return {"name": name, "ports": [{"port": 1, "state": state}]}


FACTS = {"a": {"devices": [dev("mlx5_1", "ACTIVE"), dev("mlx5_0", "ACTIVE")]},
         "b": {"devices": [dev("mlx5_0", "ACTIVE"), dev("mlx5_2", "DOWN")]},
         "c": {}, "d": {"devices": [dev("mlx5_9", "ACTIVE")]}}


def rated(rate):
    return {"devices": [{"name": "mlx5_0", "ports": [{"port": 1, "state": "ACTIVE", "link_layer": "InfiniBand",
                                                      "rate_gbps": rate}]}]}


# ---------------------------------------------------------------- hosts and groups

def test_the_hosts_asked_that_remain_and_can_run_are_chosen_in_the_order_asked():
    assert steps.choose_hosts("nccl", None, ["c", "a", "x"], ["a", "b", "c"], ["a", "b", "c", "x"]) == (
        "nccl", ["c", "a"], ["x"])


def test_no_host_asked_means_every_host_of_the_play():
    assert steps.choose_hosts("hccl", None, [], ["b", "a"], ["b", "a", "z"]) == ("hccl", ["b", "a"], ["z"])


def test_library_auto_takes_the_probe_decision():
    decision = {"library": "hccl", "collective_hosts": ["b"]}
    assert steps.choose_hosts("auto", decision, [], ["a", "b"], ["a", "b"]) == ("hccl", ["b"], [])
    with pytest.raises(ValueError, match="no probe decided"):
        steps.choose_hosts("auto", None, [], ["a"], ["a"])


def test_pool_mode_runs_the_chosen_hosts_as_one_group_pairs_mode_every_pair_and_per_node_none():
    assert steps.run_groups(["c", "a", "b"], "pool", "ring") == [["c", "a", "b"]]
    assert steps.run_groups([], "pool", "ring") == []
    assert steps.run_groups(["a", "b", "c", "d"], "pairs", "ring") == [["a", "b"], ["c", "d"], ["b", "c"], ["d", "a"]]
    assert steps.run_groups(["a", "b"], "per_node", "ring") == []


# ---------------------------------------------------------------- the module arguments

def test_the_active_devices_of_the_run_hosts_only():
    assert steps.active_devices(FACTS, ["a", "b", "c"]) == ["mlx5_0", "mlx5_1"]


def group(library="nccl", facts=None, launcher=None, hosts=("a", "b", "c"), **changes):
    facts = FACTS if facts is None else facts
    entries = [{"name": host, "address": host} for host in hosts]
    return steps.group_args(variables(**changes), library, list(hosts), "all_reduce", entries, facts, launcher or {})


def test_a_pool_run_passes_the_devices_and_the_expectation_of_ib():
    args = group(commcheck_collective_ib_expected=True)
    assert args["ib_devices"] == ["mlx5_0", "mlx5_1"] and args["ib_expected"] is True


@pytest.mark.parametrize("changes", [dict(commcheck_collective_transport_check=False), dict(library="hccl")])
def test_the_opt_out_and_hccl_pass_no_devices(changes):
    assert group(**changes)["ib_devices"] == []


def test_the_opt_out_also_turns_ib_expected_off():
    assert group(commcheck_collective_transport_check=False, commcheck_collective_ib_expected=True)["ib_expected"] is False


def test_the_slowest_host_rates_judge_nccl_and_configured_rates_win():
    facts = {"a": rated(400), "b": rated(100)}
    args = group(facts=facts, hosts=("a", "b"))
    assert args["nic_rates_gbps"] == [100.0] and "slowest host b" in args["nic_rates_source"]
    configured = group(facts=facts, hosts=("a", "b"), commcheck_collective_nic_rates_gbps=[25])
    assert configured["nic_rates_gbps"] == [25.0] and configured["nic_rates_source"] == "rates configured"
    # HCCL drives the NPUs' own NICs: discovery's rates do not judge it
    assert group(library="hccl", facts=facts, hosts=("a", "b"))["nic_rates_gbps"] == []
    assert "nic_rates_source" not in group(library="hccl", facts=facts, hosts=("a", "b"))


def test_nccl_ib_hca_narrows_the_rates():
    facts = {"a": {"devices": rated(100)["devices"] + [dict(rated(200)["devices"][0], name="mlx5_1")]}}
    assert group(facts=facts, hosts=("a",))["nic_rates_gbps"] == [100.0, 200.0]
    assert group(facts=facts, hosts=("a",), commcheck_collective_env={"NCCL_IB_HCA": "=mlx5_1"})["nic_rates_gbps"] == [200.0]


def test_empty_options_are_left_to_the_module_and_set_ones_are_passed():
    args = group()
    for option in ("datatype", "ssh_config", "binary_dir", "expected_busbw_gbs", "bisect_max_runs", "kubectl",
                   "mpi_agent_dir"):
        assert option not in args, option
    args = group(commcheck_collective_datatype="float", commcheck_mpi_ssh_config="/etc/ssh/cc.conf",
                 commcheck_collective_binary_dir="/opt/nccl-tests/build", commcheck_collective_expected_busbw_gbs=40,
                 commcheck_collective_bisect_max_runs=7)
    assert (args["datatype"], args["ssh_config"], args["binary_dir"], args["expected_busbw_gbs"],
            args["bisect_max_runs"]) == ("float", "/etc/ssh/cc.conf", "/opt/nccl-tests/build", 40, 7)


def test_the_role_options_reach_the_module_as_they_are():
    args = group(commcheck_collective_min_bytes="1M", commcheck_gpus_per_node=4, commcheck_collective_timeout=77)
    assert (args["min_bytes"], args["gpus_per_node"], args["timeout"]) == ("1M", 4, 77)
    assert (args["library"], args["operation"], args["fail_on_error"]) == ("nccl", "all_reduce", False)
    assert [entry["name"] for entry in args["hosts"]] == ["a", "b", "c"]


def test_mca_options_go_to_open_mpi_only():
    mca = {"btl_tcp_if_include": "eth0"}
    assert group(commcheck_mpi_mca=mca)["mca"] == mca
    assert group(commcheck_mpi_mca=mca, commcheck_collective_launcher="mpich")["mca"] == {}


@pytest.mark.parametrize("launcher", ["mpich", "srun"])
def test_ssh_config_goes_to_open_mpi_only(launcher):
    assert group(commcheck_mpi_ssh_config="/etc/ssh/cc.conf")["ssh_config"] == "/etc/ssh/cc.conf"
    assert "ssh_config" not in group(commcheck_mpi_ssh_config="/etc/ssh/cc.conf", commcheck_collective_launcher=launcher)


def test_the_slurm_job_id_reaches_the_module_when_set():
    assert "slurm_job_id" not in group(commcheck_collective_launcher="srun")
    args = group(commcheck_collective_launcher="srun", commcheck_collective_mpirun="srun",
                 commcheck_collective_slurm_job_id="4711")
    assert (args["launcher"], args["mpirun"], args["slurm_job_id"]) == ("srun", "srun", "4711")


def test_bisection_runs_in_pool_mode_only():
    assert group()["bisect"] is True
    assert group(commcheck_collective_mode="pairs")["bisect"] is False
    assert group(commcheck_collective_bisect=False)["bisect"] is False


def test_the_launcher_host_says_where_mpirun_runs():
    launcher = {"transport": "kubectl", "kubectl": {"pod": "p-a"}, "mpi_agent_dir": "/tmp/agent"}
    args = group(launcher=launcher)
    assert (args["transport"], args["kubectl"], args["mpi_agent_dir"]) == ("kubectl", {"pod": "p-a"}, "/tmp/agent")
    assert group(launcher={"mpi_agent_dir": ""})["transport"] == "host"
    assert "mpi_agent_dir" not in group(launcher={"mpi_agent_dir": ""})


def test_the_task_bound_counts_the_bisection_runs_of_a_pool():
    assert steps.group_timeout(variables(commcheck_collective_timeout=100), ["a", "b", "c"]) == (1 + 9) * 105 + 180
    assert steps.group_timeout(variables(commcheck_collective_timeout=100, commcheck_collective_bisect_max_runs=2),
                               ["a", "b", "c"]) == 3 * 105 + 180
    assert steps.group_timeout(variables(commcheck_collective_timeout=100, commcheck_collective_mode="pairs"),
                               ["a", "b"]) == 105 + 180


def test_one_run_per_group_and_operation_from_the_first_host_groups_first():
    launchers = {"a": {"environment": {"PATH": "/a"}}, "c": {"environment": {"PATH": "/c"}}}
    runs = steps.group_runs(variables(commcheck_collective_ops=["all_reduce", "all_gather"]), "nccl",
                            [["a", "b"], ["c", "d"]], lambda host: {"name": host, "address": host}, FACTS,
                            lambda host: launchers.get(host, {}))
    assert [(run["launcher"], run["operation"]) for run in runs] == [
        ("a", "all_reduce"), ("a", "all_gather"), ("c", "all_reduce"), ("c", "all_gather")]
    assert runs[2]["label"] == "all_reduce on c,d" and runs[2]["environment"] == {"PATH": "/c"}
    assert runs[0]["args"]["ib_devices"] == ["mlx5_0", "mlx5_1"] and runs[2]["args"]["ib_devices"] == ["mlx5_9"]


def test_per_node_runs_take_each_hosts_own_options_and_the_node_expectation():
    own = {"a": variables(commcheck_collective_binary_dir="/a/bin", commcheck_collective_node_expected_busbw_gbs=300,
                          commcheck_collective_expected_busbw_gbs=40, commcheck_environment={"PATH": "/a"}),
           "b": variables(commcheck_collective_timeout=10)}
    runs = steps.node_runs(lambda host: own[host], "nccl", ["b", "a"], lambda host: {"name": host, "address": host})
    assert list(runs) == ["b", "a"]
    [run_a] = runs["a"]
    assert run_a["args"]["binary_dir"] == "/a/bin" and run_a["args"]["expected_busbw_gbs"] == 300
    assert run_a["args"]["hosts"] == [{"name": "a", "address": "a"}] and run_a["environment"] == {"PATH": "/a"}
    for option in ("nic_rates_gbps", "ib_devices", "bisect", "transport"):
        assert option not in run_a["args"]
    assert "binary_dir" not in runs["b"][0]["args"] and runs["b"][0]["timeout"] == 15 + 180
    assert runs["b"][0]["environment"] == {}


def test_the_probe_of_the_role_alone_looks_for_the_libraries_of_its_operations():
    probe = steps.probe_step(["all_reduce"], "/opt/mpi/bin/mpirun", "")
    assert probe["plan"]["checks"] == ["collective"] and probe["plan"]["library"] == "auto"
    assert "cmd:/opt/mpi/bin/mpirun" in probe["probe_keys"] and probe["timeout"] == 125 + 60


# ---------------------------------------------------------------- results

def test_a_failed_run_fails_with_every_message():
    assert steps.failures({"results": [{"skipped": True}, {"verdict": "pass"}]}) is None
    failed = {"failed": True, "results": [{"failed": True, "msg": "killed"}, {"failed": False}, {"failed": True}]}
    assert steps.failures(failed) == "killed; the collective module failed"


def test_the_results_are_the_group_runs_then_each_node_skipped_ones_left_out():
    group_results = {"results": [{"verdict": "pass", "n": 1}, {"skipped": False, "n": 2}]}
    nodes = [{"results": [{"verdict": "fail", "n": 3}]}, {}, {"results": [{"skipped": True}, {"n": 4}]}]
    assert [res["n"] for res in steps.run_results(group_results, nodes)] == [1, 3, 4]


def test_bad_nodes_once_each_in_the_order_named():
    results = [{"bad_nodes": ["n3", ["n1"]]}, {}, {"bad_nodes": ["n1", "n2"]}]
    assert steps.bad_nodes(results) == ["n3", "n1", "n2"]


def test_the_outcome_line():
    gathered = steps.gathered([{"verdict": "fail", "bad_nodes": ["n2"]}, {}], "pool", ["n9"])
    assert gathered["verdicts"] == ["fail", "skipped"]
    assert [r["kind"] for r in gathered["records"]][-1] == "finding"
    assert steps.outcome("nccl", "pool", gathered, ["n9"]) == (
        "NCCL pool: 2 test(s), verdicts ['fail', 'skipped']; bad nodes ['n2']; unreachable ['n9']")
    assert steps.outcome(None, "pool", steps.gathered([], "pool", []), []).startswith("NO LIBRARY pool: 0 test(s)")


# ---------------------------------------------------------------- the action reads every host once

def run_step(step, task_vars):
    task = mock.MagicMock()
    task.args = {"step": step}
    task.check_mode = False
    task.async_val = 0
    templar = mock.MagicMock()
    templar.template.side_effect = lambda value, **kwargs: value
    plugin = action.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(), templar=templar,
                                 shared_loader_obj=mock.MagicMock())
    return plugin.run(task_vars=task_vars)


def play_vars(**changes):
    hostvars = {"a": {"commcheck_collective_entry": {"name": "a", "address": "10.0.0.1"},
                      "ansible_facts": {"commcheck_rdma": FACTS["a"]}},
                "b": {"commcheck_collective_entry": {"name": "b", "address": "10.1.0.2"}, "commcheck_transport": "kubectl",
                      "commcheck_kubectl": {"pod": "p-b"}, "commcheck_collective_binary_dir": "/b/bin",
                      "ansible_facts": {"commcheck_rdma": FACTS["b"]}},
                "c": {}}
    task_vars = dict(variables(), hostvars=hostvars, ansible_play_hosts=["b", "a"], ansible_play_hosts_all=["b", "a", "c"],
                     inventory_hostname="b")
    task_vars.update(changes)
    return task_vars


def test_the_runs_step_reads_each_hosts_entry_facts_and_launcher():
    result = run_step("runs", play_vars())
    assert not result.get("failed"), result.get("msg")
    assert (result["library"], result["chosen"], result["unreachable"]) == ("nccl", ["b", "a"], ["c"])
    [run] = result["runs"]
    assert run["launcher"] == "b" and run["args"]["hosts"] == [{"name": "b", "address": "10.1.0.2"},
                                                               {"name": "a", "address": "10.0.0.1"}]
    assert run["args"]["transport"] == "kubectl" and run["args"]["kubectl"] == {"pod": "p-b"}
    assert run["args"]["ib_devices"] == ["mlx5_0", "mlx5_1"] and result["node_runs"] == {}


def test_the_one_click_entries_win_and_per_node_runs_take_the_hosts_own_values():
    entries = {"a": {"name": "a", "address": "192.0.2.1"}, "b": {"name": "b", "address": "192.0.2.2"}}
    result = run_step("runs", play_vars(commcheck_collective_mode="per_node", commcheck_collective_entry_by_host=entries))
    assert result["runs"] == [] and list(result["node_runs"]) == ["b", "a"]
    assert result["node_runs"]["b"][0]["args"]["binary_dir"] == "/b/bin"
    assert "binary_dir" not in result["node_runs"]["a"][0]["args"]
    assert result["node_runs"]["a"][0]["args"]["hosts"] == [entries["a"]]


def test_a_host_without_its_entry_is_named():
    task_vars = play_vars()
    del task_vars["hostvars"]["a"]["commcheck_collective_entry"]
    result = run_step("runs", task_vars)
    assert result["failed"] and "host a has no commcheck_collective_entry" in result["msg"]


def test_a_step_outside_the_role_names_the_missing_variable():
    result = run_step("runs", {"hostvars": {}})
    assert result["failed"] and "commcheck_" in result["msg"] and "collective role" in result["msg"]


def test_the_results_step_fails_with_the_failed_runs_message():
    failed = {"failed": True, "results": [{"failed": True, "msg": "timed out"}]}
    hostvars = {"b": {"commcheck_collective_group_results": failed}}
    result = run_step("results", play_vars(hostvars=hostvars))
    assert result["failed"] and result["msg"] == "timed out"


def test_the_results_step_judges_the_records_of_the_chosen_nodes():
    node = {"params": {"library": "nccl", "operation": "all_reduce", "hosts": ["a"]}, "verdict": "pass",
            "runs": [{"hosts": ["a"], "cmd": ["mpirun"], "verdict": "pass", "busbw_gbs": 40.0}]}
    plan = {"library": "nccl", "chosen": ["a"], "unreachable": ["c"]}
    hostvars = {"b": {"commcheck_collective_plan": plan, "commcheck_collective_group_results": {"results": []},
                      "commcheck_collective_node_results": {"results": [dict(node, verdict="stale")]}},
                "a": {"commcheck_collective_node_results": {"results": [node]}}}
    result = run_step("results", play_vars(hostvars=hostvars, commcheck_collective_mode="per_node",
                                           commcheck_thresholds_history=False))
    assert not result.get("failed"), result.get("msg")
    # b was not chosen in this run: its per-node results of an earlier run are not this run's
    assert result["verdicts"] == ["pass"] and [r["kind"] for r in result["records"]] == ["collective", "finding"]
    assert result["outcome"] == "NCCL per_node: 1 test(s), verdicts ['pass']; bad nodes []; unreachable ['c']"
    assert result["thresholds"]["records"] == 1 and result["thresholds"]["tripped"]["history"] == 0
