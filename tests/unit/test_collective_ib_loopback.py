# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL's IB loopback in per_node mode (plugin_utils/collective_steps.py): a host with an RDMA device and 2+ GPUs
runs each operation once more with P2P and shared memory off, on its NICs; the records say ``variant:
ib_loopback``, are judged among themselves and retested as themselves."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.collective_plan import collective_records
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import collective_retest
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import thresholds as th
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import collective_steps as steps

from test_collective_steps import play_vars, rated, run_step, variables


def node_runs(facts, library="nccl", **changes):
    own = variables(commcheck_collective_mode="per_node", commcheck_collective_ops=["all_reduce", "all_gather"],
                    commcheck_collective_node_expected_busbw_gbs=300, commcheck_collective_env={"NCCL_IB_HCA": "mlx5"},
                    **changes)
    return steps.node_runs(lambda host: own, library, ["n1"], lambda host: {"name": host, "address": host},
                           lambda host: facts)["n1"]


def test_a_host_with_an_rdma_device_and_gpus_runs_each_operation_again_through_its_nics():
    runs = node_runs(rated(200))
    assert [(run["operation"], run.get("variant")) for run in runs] == [
        ("all_reduce", None), ("all_gather", None), ("all_reduce", "ib_loopback"), ("all_gather", "ib_loopback")]
    own, loop = runs[0], runs[2]
    assert own["args"]["env"] == {"NCCL_IB_HCA": "mlx5"} and own["args"]["expected_busbw_gbs"] == 300
    assert loop["args"]["env"] == {"NCCL_IB_HCA": "mlx5", "NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1"}
    # NCCL must take its IB/RoCE network; the NICs' rate judges it, not the GPUs' own links
    assert loop["args"]["ib_expected"] is True and loop["args"]["ib_devices"] == ["mlx5_0"]
    assert "expected_busbw_gbs" not in loop["args"] and loop["args"]["nic_rates_gbps"] == [200]
    assert loop["hosts"] == ["n1"] and loop["label"] == "IB loopback all_reduce on n1"
    assert loop["args"]["hosts"] == own["args"]["hosts"] and loop["timeout"] == own["timeout"]


@pytest.mark.parametrize("facts, library, changes", [
    ({"devices": [{"name": "mlx5_0", "ports": [{"port": 1, "state": "DOWN", "rate_gbps": 200}]}]}, "nccl", {}),
    ({}, "nccl", {}),
    (rated(200), "nccl", {"commcheck_gpus_per_node": 1}),
    (rated(200), "hccl", {}),
    (rated(200), "nccl", {"commcheck_collective_ib_loopback": False})],
    ids=["port-down", "no-rdma", "one-gpu", "hccl", "turned-off"])
def test_no_ib_loopback_without_an_active_device_two_gpus_nccl_or_when_turned_off(facts, library, changes):
    assert [run.get("variant") for run in node_runs(facts, library, **changes)] == [None, None]


def result(host, busbw, run=None):
    out = {"params": {"library": "nccl", "operation": "all_reduce", "hosts": [host], "nodes": 1, "ranks": 8},
           "verdict": "pass", "runs": [{"hosts": [host], "cmd": ["mpirun"], "verdict": "pass", "busbw_gbs": busbw}]}
    if run is not None:
        out[steps.NODE_RUN_VAR] = run
    return out


def test_the_ib_loopback_records_say_so_and_are_judged_among_themselves():
    registered = [{"results": [result(h, 150.0 + i), result(h, 22.0 + i, {"variant": "ib_loopback"})]}
                  for i, h in enumerate(["n1", "n2", "n3", "n4", "n5"])]
    results = steps.run_results({}, registered)
    records = collective_records(results, mode="per_node")
    assert [r["params"].get("variant") for r in records] == [None, "ib_loopback"] * 5
    judged = th.evaluate(records, [], outlier_z=3.5, outlier_min_rel=0.2, set_verdicts=True,
                         fleet_min_fraction=0.5)["records"]
    assert set(r["verdict"] for r in judged) == set(["pass"])
    # one node's loopback far below the other loopbacks fails, though its own run passes
    registered[2]["results"][1]["runs"][0]["busbw_gbs"] = 4.0
    judged = th.evaluate(collective_records(steps.run_results({}, registered), mode="per_node"), [], outlier_z=3.5,
                         outlier_min_rel=0.2, set_verdicts=True, fleet_min_fraction=0.5)["records"]
    assert [(r["host"], r["params"].get("variant")) for r in judged if r["verdict"] == "fail"] == [
        ("n3", "ib_loopback")]


def test_a_failing_ib_loopback_is_retested_as_the_loopback_run_not_the_nodes_own():
    runs = node_runs(rated(200))
    failing = collective_records([dict(result("n1", 150.0), params=dict(result("n1", 1)["params"])),
                                  dict(result("n1", 3.0, {"variant": "ib_loopback"}),
                                       params=dict(result("n1", 1)["params"], variant="ib_loopback"))],
                                 mode="per_node")
    failing[1]["verdict"] = "fail"
    results = [dict(result("n1", 150.0)),
               dict(result("n1", 3.0), params=dict(result("n1", 1)["params"], variant="ib_loopback"))]
    planned = collective_retest.plan(failing, results, "per_node", repeats=1)
    [item] = planned["retests"]
    assert item["params"]["variant"] == "ib_loopback"
    [again] = steps.retest_runs([], {"n1": runs}, [item], None)
    assert again["variant"] == "ib_loopback" and again["args"]["env"]["NCCL_SHM_DISABLE"] == "1"
    assert again["retest"]["variant"] == "ib_loopback"


def test_the_runs_step_reads_each_hosts_rdma_facts_for_the_ib_loopback():
    result_ = run_step("runs", play_vars(commcheck_collective_mode="per_node"))
    assert not result_.get("failed"), result_.get("msg")
    # a and b have an active device (their discovery facts): each runs its IB loopback after its own run
    assert [(run["label"], run.get("variant")) for run in result_["node_runs"]["a"]] == [
        ("all_reduce on a", None), ("IB loopback all_reduce on a", "ib_loopback")]
    assert result_["node_runs"]["a"][1]["args"]["ib_devices"] == ["mlx5_0", "mlx5_1"]
    assert result_["node_runs"]["b"][1]["args"]["ib_devices"] == ["mlx5_0"]


def test_the_retests_of_a_nodes_run_and_of_its_ib_loopback_are_told_apart():
    base = result("n1", 1)["params"]
    records = collective_records([result("n1", 150.0), dict(result("n1", 3.0), params=dict(base, variant="ib_loopback"))],
                                 mode="per_node")
    records[1]["verdict"] = "fail"
    again = dict(base, variant="ib_loopback", retest=True, retest_purpose="as_is", attempt=1)
    retest = collective_records([dict(result("n1", 3.1), params=again)], mode="per_node")
    retest[0]["verdict"] = "fail"
    classified = collective_retest.classify(records, retest, "per_node")
    assert [o["status"] for o in classified["outcomes"]] == ["confirmed"]
    assert [r["verdict"] for r in classified["records"][:2]] == ["pass", "fail"]
    # the node's own run passing again does not clear its loopback
    retest[0]["params"].pop("variant")
    retest[0].update(verdict="pass", metrics=dict(retest[0]["metrics"], busbw_gbs=150.0))
    classified = collective_retest.classify(records, retest, "per_node")
    assert [o["status"] for o in classified["outcomes"]] == ["not_retested"]
