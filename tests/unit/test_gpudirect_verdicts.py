# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU-memory bandwidth per host and rail next to host memory, gpudirect_slow / gpudirect_unavailable."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import gpudirect as gp
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import gpudirect as gv
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import thresholds as th


def rec(server, client, rail, bw, memory=None, op="write", verdict="pass", gpu=None, peer_gpu=None):
    params = {"op": op, "metric": "bw", "rail": rail, "server": server, "client": client,
              "device": "mlx5_%d" % rail, "peer_device": "mlx5_%d" % rail}
    if memory:
        params.update(memory=memory, gpu=gpu, peer_gpu=peer_gpu)
    return {"kind": "rdma_bw", "host": server, "peer": client, "params": params, "metrics": {"bw_gbps": bw},
            "verdict": verdict}


def test_rows_put_gpu_memory_next_to_host_memory_per_host_and_rail():
    records = [rec("a", "b", 0, 98.0), rec("a", "b", 0, 97.0, "cuda", gpu=0, peer_gpu=0),
               rec("a", "b", 1, 96.0), rec("a", "b", 1, 40.0, "cuda", gpu=1, peer_gpu=1)]
    rows = gv.gpudirect_rows(records)
    by = dict(((r["host"], r["rail"]), r) for r in rows)
    assert set(by) == {("a", 0), ("a", 1), ("b", 0), ("b", 1)}
    assert (by[("a", 0)]["host_gbps"], by[("a", 0)]["cuda_gbps"], by[("a", 0)]["slow"]) == (98.0, 97.0, False)
    assert by[("b", 1)]["slow"] and by[("b", 1)]["ratio"] == pytest.approx(40.0 / 96.0, abs=1e-4)
    assert by[("b", 1)]["gpu"] == 1 and by[("b", 1)]["device"] == "mlx5_1"


def test_slow_finding_names_the_reasons_and_the_threshold_is_a_parameter():
    records = [rec("a", "b", 0, 100.0), rec("a", "b", 0, 65.0, "cuda", gpu=2, peer_gpu=3)]
    out = gv.gpudirect_verdicts(records)
    assert [f["host"] for f in out["findings"]] == ["a", "b"]
    finding = out["findings"][0]
    assert finding["params"]["finding"] == "gpudirect_slow" and finding["verdict"] == "fail"
    assert finding["params"]["gpu"] == 2 and finding["metrics"]["min_ratio"] == 0.7
    assert finding["params"]["family"] == "rdma_gpudirect"
    for reason in ("nvidia_peermem", "NUMA", "PCIe switches", "ACS"):
        assert reason in finding["cause"]
    assert "nvidia-smi topo -m" in finding["fix"]
    assert gv.gpudirect_verdicts(records, min_ratio=0.6)["findings"] == []


def test_only_the_same_operations_are_compared_and_errors_do_not_count():
    records = [rec("a", "b", 0, 100.0, op="write"), rec("a", "b", 0, 50.0, op="read"),
               rec("a", "b", 0, 10.0, "cuda", verdict="error"), rec("a", "b", 0, 49.0, "cuda", op="read")]
    rows = gv.gpudirect_rows(records)
    assert all(r["host_gbps"] == 50.0 and r["cuda_gbps"] == 49.0 and not r["slow"] for r in rows)


def test_no_host_memory_result_no_ratio_and_no_finding():
    rows = gv.gpudirect_rows([rec("a", "b", 0, 10.0, "cuda")])
    assert rows[0]["ratio"] is None and not rows[0]["slow"]


def test_unavailable_finding_per_host_that_wanted_it():
    states = {"a": {"wanted": True, "enabled": False, "cause": "neither nvidia_peermem nor nv_peer_mem is loaded",
                    "fix": "modprobe nvidia_peermem", "setting": "auto", "gpus": 8},
              "b": {"wanted": False, "enabled": False, "cause": "x"},
              "c": {"wanted": True, "enabled": True, "cause": None}}
    (finding,) = gv.unavailable_findings(states)
    assert (finding["host"], finding["params"]["finding"], finding["verdict"]) == ("a", "gpudirect_unavailable",
                                                                                   "warn")
    assert "nvidia_peermem" in finding["cause"] and finding["fix"] == "modprobe nvidia_peermem"


def test_the_gpu_records_are_marked_and_judged_next_to_host_memory():
    host = [rec("a", "b", 0, 100.0)]
    gpu = [{"kind": "rdma_bw", "host": "a", "peer": "b", "verdict": "pass", "metrics": {"bw_gbps": 30.0},
            "params": {"op": "write", "metric": "bw", "rail": 0, "round": 0, "step": 0, "server": "a", "client": "b",
                       "device": "mlx5_0", "peer_device": "mlx5_0"}}]
    jobs = [{"round": 0, "step": 0, "rail": 0, "server": "a", "client": "b", "server_gpu": 4, "client_gpu": 5,
             "gpudirect": "peermem"}]
    marked = gp.mark_gpu_records(gpu, jobs)
    out = gv.gpudirect_verdicts(host + marked, {}, 0.7)
    assert marked[0]["params"]["memory"] == "cuda" and marked[0]["params"]["gpu"] == 4
    assert out["summary"]["slow"] == 2 and "memory" not in host[0]["params"]
    assert [f["params"]["gpu"] for f in out["findings"]] == [4, 5]


def _bw(host, peer, value, memory=None, run=None):
    params = {"op": "write", "metric": "bw", "rail": 0, "size": 65536}
    if memory:
        params.update(memory=memory, gpu=0, peer_gpu=0, gpudirect="peermem")
    rec = {"kind": "rdma_bw", "host": host, "peer": peer, "params": params, "metrics": {"bw_gbps": value},
           "verdict": "pass"}
    if run:
        rec.update(run_id=run, time="2026-01-0%sT00:00:00Z" % run[-1])
    return rec


def test_gpu_memory_results_are_a_fleet_of_their_own_in_the_thresholds():
    # host memory about 95 Gb/s, GPU memory about 60 (gpudirect_slow's business, not the fleet's); one GPU-memory
    # pair at 25 is an outlier among the GPU-memory ones
    host = [_bw("h%d" % i, "h%d" % (i + 1), 95.0 + 0.1 * i) for i in range(1, 9)]
    cuda = [_bw("h%d" % i, "h%d" % (i + 1), value, "cuda") for i, value in enumerate([60.0, 61.0, 59.5, 60.5, 25.0])]
    out = th.evaluate(host + cuda, set_verdicts=True, fleet_min_fraction=0.5)["records"]
    tripped = [(r["host"], r["params"].get("memory"), r["verdict"]) for r in out if r["thresholds"]["tripped"]]
    assert tripped == [("h4", "cuda", "fail")]
    assert out[-1]["metrics"]["fleet_median"] == 60.0


def test_a_host_baseline_in_the_history_is_of_the_same_memory():
    # h1's GPU-memory pair has no history of its own: its host baseline is h1's GPU-memory results (61), not its
    # host-memory ones (95): 60 from GPU memory is no regression
    past = [rec for run in ("r1", "r2", "r3") for rec in (
        _bw("h1", "h2", 95.0, run=run), _bw("h1", "h3", 95.0, run=run), _bw("h1", "h4", 61.0, "cuda", run=run))]
    judged = th.evaluate([_bw("h1", "h9", 60.0, "cuda")], history=past)["records"][0]["thresholds"]["history"]
    assert judged["checked"] and judged["scope"] == "host" and judged["baseline"] == 61.0
    assert judged["tripped"] is False
