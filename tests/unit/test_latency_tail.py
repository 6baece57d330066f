# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The latency tail (verdicts/latency_tail.py through thresholds.evaluate): a pair whose p99 stands out of its
fleet's while its median is normal is a ``latency_tail`` warning; the median is what the fleet check judges."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits as cp
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import latency_tail as lt
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import thresholds as th
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.finding_codes import CULPRIT_FINDINGS

from fault_lab import Fabric


def lat(host, peer, median, avg, p99, rail=1, verdict="pass"):
    """A latency pair record; its median, average and p99 all differ, so that reading one for another shows."""
    return {"kind": "rdma_lat", "host": host, "peer": peer, "verdict": verdict, "cause": None,
            "params": {"op": "write", "metric": "lat", "rail": rail, "size": 2, "device": "mlx5_%d" % rail,
                       "peer_device": "mlx5_%d" % rail},
            "metrics": {"lat_us": median, "lat_avg_us": avg, "lat_p99_us": p99}}


def fleet(*odd, **base):
    """Eight pairs of one rail: medians about ``median`` (2 us), averages a little above, p99s about ``p99`` (3 us);
    ``odd`` replaces pairs (by host) with other numbers."""
    median, p99 = base.get("median", 2.0), base.get("p99", 3.0)
    healthy = [lat("h%d" % i, "h%d" % (i % 8 + 1), median + 0.02 * i, median + 0.2 + 0.02 * i, p99 + 0.05 * i)
               for i in range(1, 9)]
    replaced = dict((rec["host"], rec) for rec in odd)
    return [replaced.get(rec["host"], rec) for rec in healthy]


def tails(out):
    return [(f["host"], f["peer"]) for f in out["findings"] if f["params"]["finding"] == lt.CODE]


def test_a_long_p99_with_a_normal_median_is_a_latency_tail_warning_with_its_numbers():
    # h3-h4: median normal, p99 25 us against about 3.2; h6-h7: a high average (a few huge stalls) but its median
    # and p99 normal: judged on the median, it is nothing; judged on the average it would be the outlier
    out = th.evaluate(fleet(lat("h3", "h4", 2.05, 2.4, 25.0), lat("h6", "h7", 2.1, 14.0, 3.3)),
                      set_verdicts=True, fleet_min_fraction=0.5)
    assert tails(out) == [("h3", "h4")]
    assert out["summary"]["latency_tails"] == 1 and out["summary"]["tripped_records"] == 0
    finding = out["findings"][0]
    assert finding["verdict"] == "warn" and finding["kind"] == "finding"
    assert finding["params"] == {"check": "rdma_perf", "finding": "latency_tail", "family": "rdma_lat", "op": "write",
                                 "size": 2, "rail": 1, "device": "mlx5_1", "peer_device": "mlx5_1"}
    metrics = finding["metrics"]
    assert (metrics["p99_us"], metrics["lat_us"], metrics["n"]) == (25.0, 2.05, 8)
    assert metrics["fleet_median_p99_us"] == pytest.approx(3.275) and metrics["fleet_median_us"] == pytest.approx(2.09)
    assert finding["cause"].startswith("the pair's 99th-percentile latency 25 us is 7.63 x its fleet's median p99 "
                                       "3.27 us")
    assert "while its median 2.05 us is normal (fleet median 2.09 us)" in finding["cause"]
    assert "CPU governor" in finding["fix"] and "interrupts" in finding["fix"] and "pause" in finding["fix"]
    assert finding["evidence"] == ["latency tail: p99 25 us against the fleet median p99 3.27 us of 8 (robust z %s); "
                                   "median 2.05 us (fleet median 2.09 us)" % metrics["robust_z"]]
    pair = [rec for rec in out["records"] if rec["host"] == "h3"][0]
    # the pair keeps its verdict (one finding says it) and carries the numbers
    assert pair["verdict"] == "pass" and pair["thresholds"]["tail"]["tripped"] is True
    assert pair["metrics"]["fleet_median_p99_us"] == pytest.approx(3.275) and pair["evidence"] == finding["evidence"]
    assert [r["thresholds"]["tail"]["tripped"] for r in out["records"]].count(True) == 1
    # a warning names no culprit: nothing is quarantined for a tail
    assert cp.culprits(out["records"] + out["findings"]) == []
    assert lt.CODE in CULPRIT_FINDINGS


def test_a_pair_whose_median_is_already_an_outlier_keeps_its_verdict_and_gets_no_tail_finding():
    out = th.evaluate(fleet(lat("h3", "h4", 9.0, 9.5, 40.0)), set_verdicts=True, fleet_min_fraction=0.5)
    late = [rec for rec in out["records"] if rec["host"] == "h3"][0]
    assert late["verdict"] == "fail" and late["thresholds"]["tripped"] == ["fleet"]
    assert late["thresholds"]["tail"]["tripped"] is False and out["findings"] == []


@pytest.mark.parametrize("records", [
    # robust z far out, 50 % above the fleet's median p99, but under 2 us above it
    fleet(lat("h3", "h4", 2.05, 2.4, 4.9)),
    # 3 us above the median p99, but in a fleet of 20 us p99s that is 15 %: below the relative floor
    fleet(lat("h3", "h4", 17.05, 17.4, 23.0), median=17.0, p99=20.0),
], ids=["under-the-absolute-gap", "under-the-relative-floor"])
def test_microsecond_noise_of_a_p99_is_no_tail(records):
    out = th.evaluate(records, set_verdicts=True, fleet_min_fraction=0.5)
    tail = [rec for rec in out["records"] if rec["host"] == "h3"][0]["thresholds"]["tail"]
    assert tail["robust_z"] > 3.5 and tail["tripped"] is False and out["findings"] == []


def test_a_record_without_a_p99_or_in_a_group_of_two_is_not_judged_for_its_tail():
    # by time perftest prints only the average: no p99; two pairs are no fleet
    records = fleet(lat("h3", "h4", 2.05, 2.4, None))
    out = th.evaluate(records + [lat("h1", "h2", 2.0, 2.1, 30.0, rail=2), lat("h3", "h4", 2.0, 2.1, 3.0, rail=2)])
    judged = dict(((r["host"], r["params"]["rail"]), r["thresholds"]) for r in out["records"])
    assert "tail" not in judged[("h3", 1)] and "tail" not in judged[("h1", 2)] and "tail" in judged[("h1", 1)]
    assert out["findings"] == []


def test_a_retest_is_no_second_tail_finding_and_no_member_of_the_fleet():
    # h3-h4 was retested (its first pass failed on its median); its retest passed with a long p99. The four
    # retests of healthy pairs with p99s of 9 us would move the fleet's median p99 if they counted.
    retest = dict(lat("h3", "h4", 2.05, 2.4, 25.0), params=dict(lat("h3", "h4", 0, 0, 0)["params"], retest=True))
    others = [dict(lat("h%d" % i, "h9", 2.0, 2.1, 9.0), params=dict(lat("h1", "h9", 0, 0, 0)["params"], retest=True))
              for i in range(1, 5)]
    out = th.evaluate(fleet() + [retest] + others, set_verdicts=True, fleet_min_fraction=0.5)
    assert out["findings"] == [] and "tail" not in out["records"][8]["thresholds"]
    assert out["records"][0]["thresholds"]["tail"]["median"] == pytest.approx(3.225)


def test_a_host_that_stalls_is_a_tail_warning_of_its_pairs_through_the_whole_chain():
    # h5's pairs: p99 30 us later and their average 12 us later, their median (t_typical) unchanged. The median
    # is what the fleet judges, so nothing fails and nothing is retested; judged on the average, both pairs would
    # fail as far outliers and the tail would not be named.
    fabric = Fabric(n=8, rails=1, pattern="ring", metrics=("lat",)).tail(30.0, host="h5")
    fabric.run()
    lat_records = [r for r in fabric.judged["records"] if r["kind"] == "rdma_lat"]
    assert set(r["verdict"] for r in lat_records) == {"pass"} and fabric.plan["rounds"] == []
    found = [f for f in fabric.published if (f.get("params") or {}).get("finding") == lt.CODE]
    assert sorted((f["host"], f["peer"]) for f in found) == [("h4", "h5"), ("h5", "h6")]
    assert all(f["verdict"] == "warn" for f in found) and fabric.culprits == []
