# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Port counter snapshots, deltas attributed to ports, and trends across runs."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import sys

import pytest


from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import counters as ct
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.rdma_discovery import discover
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.sysfs_snapshot import snapshot_from_fs
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.families import family
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.pair_engine import counter_deltas

LAB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lab")
sys.path.insert(0, LAB)
import sysfs_tree  # noqa: E402  pylint: disable=wrong-import-position
sys.path.remove(LAB)


def facts(counters0=None, hw0=None, counters1=None):
    def port(num, counters, hw):
        return {"port": num, "netdev": "ens1f%dnp%d" % (num - 1, num - 1), "rate_gbps": 400,
                "counters": dict(counters or {}), "hw_counters": dict(hw or {})}
    return {"devices": [{"name": "mlx5_0", "ports": [port(1, counters0, hw0)]},
                        {"name": "mlx5_1", "ports": [port(1, counters1, {})]}]}


BASE = {"symbol_error": 0, "link_downed": 1, "port_rcv_errors": 5, "port_xmit_discards": 0}
HW = {"np_cnp_sent": 100, "out_of_sequence": 0}


def test_snapshot_reads_the_fact():
    snap = ct.snapshot(facts(BASE, HW, BASE))
    assert sorted(snap) == ["mlx5_0/1", "mlx5_1/1"]
    assert snap["mlx5_0/1"]["counters"]["link_downed"] == 1 and snap["mlx5_0/1"]["hw_counters"]["np_cnp_sent"] == 100
    assert ct.snapshot(None) == {}
    with pytest.raises(ct.CounterError):
        ct.snapshot(["not", "facts"])


def test_deltas_are_attributed_to_ports_worst_first():
    before = ct.snapshot(facts(BASE, HW, BASE))
    after = ct.snapshot(facts(dict(BASE, symbol_error=12, link_downed=2), dict(HW, np_cnp_sent=350),
                              dict(BASE, port_xmit_discards=3)))
    out = ct.deltas(before, after, "h1")
    assert [(d["device"], d["counter"], d["delta"], d["severity"]) for d in out] == [
        ("mlx5_0", "link_downed", 1, "error"),
        ("mlx5_0", "symbol_error", 12, "warning"),
        ("mlx5_1", "port_xmit_discards", 3, "warning"),
        ("mlx5_0", "np_cnp_sent", 250, "info")]
    assert all(d["host"] == "h1" and d["port"] == 1 for d in out)
    assert out[0]["netdev"] == "ens1f0np0" and "retrained" in out[0]["meaning"]
    assert [d["counter"] for d in ct.deltas(before, after, include_info=False)] == [
        "link_downed", "symbol_error", "port_xmit_discards"]


def test_a_counter_that_went_down_was_reset():
    before = ct.snapshot(facts(dict(BASE, symbol_error=50), {}, BASE))
    after = ct.snapshot(facts(dict(BASE, symbol_error=2), {}, BASE))
    (item,) = ct.deltas(before, after)
    assert item["delta"] is None and item["severity"] == "info" and "reset" in item["meaning"]


def test_ports_or_counters_on_one_side_only_are_left_out():
    before = ct.snapshot(facts(BASE, {}, BASE))
    after = ct.snapshot({"devices": [{"name": "mlx5_0", "ports": [{"port": 1, "counters": {"symbol_error": 9,
                                                                                           "new_one": 4}}]}]})
    assert [(d["counter"], d["delta"]) for d in ct.deltas(before, after)] == [("symbol_error", 9)]
    with pytest.raises(ct.CounterError):
        ct.deltas(before, None)


def test_records_one_per_port_with_deltas():
    before = ct.snapshot(facts(BASE, HW, BASE))
    after = ct.snapshot(facts(dict(BASE, link_downed=3), HW, BASE))
    recs = ct.counter_records("h2", before, after)
    assert [(r["params"]["device"], r["verdict"]) for r in recs] == [("mlx5_0", "fail"), ("mlx5_1", "pass")]
    assert recs[0]["metrics"]["link_downed"] == 3 and recs[0]["metrics"]["link_downed_delta"] == 2
    assert recs[0]["cause"].startswith("link_downed rose by 2 during the run on mlx5_0 port 1")
    assert recs[0]["evidence"] == ["link_downed: 1 -> 3 (+2)"]
    assert recs[1]["cause"] is None and recs[1]["kind"] == "port_counters"
    with pytest.raises(ct.CounterError):
        ct.counter_records("", before, after)


def test_filter_with_discovery_of_an_emulated_sysfs(tmp_path):
    """Counters written into an emulated /sys, read by discovery before and after."""
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [{"name": "mlx5_0", "numa_node": 0, "ports": [
        {"port": 1, "state": "ACTIVE", "rate_gbps": 200, "netdev": "ens1f0np0", "ipv4": "10.0.0.2",
         "counters": {"symbol_error": 0}, "hw_counters": {"np_cnp_sent": 0, "out_of_sequence": 0}}]}], cpus=2)
    before = discover(snapshot_from_fs(root))
    base = os.path.join(root, "class", "infiniband", "mlx5_0", "ports", "1")
    with open(os.path.join(base, "counters", "symbol_error"), "w") as handle:
        handle.write("17\n")
    with open(os.path.join(base, "hw_counters", "np_cnp_sent"), "w") as handle:
        handle.write("42\n")
    after = discover(snapshot_from_fs(root))
    out = counter_deltas(family("rdma"), "h1", before, after)
    assert [(d["counter"], d["delta"], d["severity"]) for d in out["deltas"]] == [
        ("symbol_error", 17, "warning"), ("np_cnp_sent", 42, "info")]
    assert out["records"][0]["verdict"] == "warn"
    assert out["evidence"] == ["h1 mlx5_0/1: symbol_error +17 during the run (symbol (bit) errors on the wire: "
                               "a marginal cable, transceiver or port)"]
    # a reading that is no facts (a skipped task's result) gives no deltas
    assert counter_deltas(family("rdma"), "h1", "nope", after) is None


def history(values, counter="symbol_error", host="h1", start=0):
    out = []
    for num, value in enumerate(values):
        out.append({"kind": "port_counters", "host": host, "run_id": "run%02d" % (num + start),
                    "time": "2025-01-%02dT00:00:00Z" % (num + start + 1),
                    "params": {"device": "mlx5_0", "port": 1}, "metrics": {counter: value}, "verdict": "pass"})
    return out


def test_trend_names_counters_that_keep_rising():
    records = history([0, 5, 9, 30]) + history([1, 1, 1, 1], "link_downed") + \
        history([0, 1, 2, 3], "link_downed", host="h2") + history([0, 5, 9, 30], "np_cnp_sent")
    items = ct.trend(records, min_runs=3)
    assert [(t["host"], t["counter"], t["name"], t["values"]) for t in items] == [
        ("h1", "symbol_error", "rising bit error rate", [5, 9, 30]),
        ("h2", "link_downed", "flapping link", [1, 2, 3])]
    assert items[0]["increase"] == 25 and items[0]["rises"] == 2


def test_trend_needs_enough_runs_and_restarts_after_a_reset():
    assert ct.trend(history([0, 5]), min_runs=3) == []
    assert ct.trend(history([10, 20, 0, 1]), min_runs=3) == []
    assert [t["values"] for t in ct.trend(history([10, 20, 0, 1, 2]), min_runs=3)] == [[0, 1, 2]]
    # one flat interval out of three is allowed with min_rises=2
    assert ct.trend(history([0, 1, 1, 2]), min_runs=4) == []
    assert len(ct.trend(history([0, 1, 1, 2]), min_runs=4, min_rises=2)) == 1


def test_trend_takes_a_runs_last_value_and_ignores_other_kinds():
    records = history([0, 1, 20])
    # run01 read its counters twice: the later value counts
    records.append(dict(records[1], time="2025-01-02T00:00:05Z", metrics={"symbol_error": 7}))
    records.append({"kind": "rdma_bw", "host": "h1", "metrics": {"symbol_error": 99}})
    (item,) = ct.trend(records, min_runs=3)
    assert item["values"] == [0, 7, 20] and item["rises"] == 2
    records.append(dict(records[1], time="2025-01-02T00:00:09Z", metrics={"symbol_error": 0}))
    assert ct.trend(records, min_runs=3, min_rises=1)[0]["values"] == [0, 0, 20]
    assert ct.trend(records, min_runs=3) == []


def test_trend_with_this_runs_records_last():
    now = {"kind": "port_counters", "host": "h1", "params": {"device": "mlx5_0", "port": 1},
           "metrics": {"symbol_error": 50}, "verdict": "pass"}
    (item,) = ct.trend(history([0, 5]) + [now], min_runs=3)
    assert item["values"] == [0, 5, 50]
    assert ct.trend(history([60, 70]) + [now], min_runs=3) == []


def test_trend_and_its_records():
    (rec,) = ct.trend_records(ct.trend(history([0, 2, 4]), 3))
    assert rec["kind"] == "finding" and rec["verdict"] == "warn" and rec["params"]["finding"] == "counter_trend"
    assert rec["cause"] == ("rising bit error rate on h1 mlx5_0/1: symbol_error rose in 2 of the last 2 intervals "
                            "between runs (0 -> 2 -> 4)")
    assert ct.trend(history([0, 2, 4]), 3, names=["port_xmit_discards"]) == []
    with pytest.raises(ct.CounterError, match="min_runs"):
        ct.trend([], 1)
    with pytest.raises(ct.CounterError, match="min_rises"):
        ct.trend([], 3, 3)


def test_only_the_values_after_the_last_reset_count():
    assert ct._since_last_reset([1, 5, 2, 3, 0, 4]) == [0, 4]
    assert ct._since_last_reset([1, 2, 3]) == [1, 2, 3]
    assert ct._since_last_reset([]) == []
