# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A latency far above another rail's best is retested before it fails (the thresholds' far rules are the first
pass's): a moment of lateness is ``flaky``, a rail that stays late is confirmed.

The CI's loaded machine once failed a healthy run: one send latency of 22 us against another rail's 5 us was
failed by the thresholds after the retests were planned, so it was never retested. Rails 3 and 7 (not 0 and 1),
hosts h2, h9, h10 (natural order is not text order)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import random

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import pair_analysis as pa
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest as rt
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import thresholds as th

PAIRS = [("h2", "h9"), ("h9", "h10"), ("h10", "h2")]


def lat(pair, value, rail, verdict="pass", **params):
    return {"kind": "rdma_lat", "host": pair[0], "peer": pair[1], "verdict": verdict, "cause": None, "evidence": [],
            "params": dict({"op": "send", "metric": "lat", "rail": rail, "size": 2}, **params),
            "metrics": {"lat_us": value}}


def first_pass(rail7=(20.0, 21.0, 22.0)):
    """Rail 3 answers in 2-3 us, rail 7's every link is late (none is an outlier of its own rail)."""
    return [lat(pair, value, 3) for pair, value in zip(PAIRS, (2.0, 2.5, 3.0))] + \
        [lat(pair, value, 7) for pair, value in zip(PAIRS, rail7)]


def retest(pair, value, rail, verdict="pass"):
    return dict(lat(pair, value, rail, verdict, retest=True, attempt=1), kind="rdma_lat_retest")


def test_the_first_pass_fails_a_late_rail_against_another_rails_best_so_it_is_retested():
    records = first_pass()
    pa.mark_outliers(records, fleet_min_fraction=0.5)
    assert [r["verdict"] for r in records] == ["pass"] * 3 + ["fail"] * 3
    late = records[4]
    assert late["metrics"]["fleet_best"] == 2.0
    assert late["cause"] == "far fleet outlier: 21 us is 3 x or more slower than the best quarter 2 us of " \
        "another rail's comparable records (rails built alike answer alike)"
    # 3 x the best but within the few microseconds of a topology: not far
    near = first_pass(rail7=(6.0, 6.5, 6.9))
    pa.mark_outliers(near, fleet_min_fraction=0.5)
    assert all(r["verdict"] == "pass" for r in near)


@pytest.mark.parametrize("again, status, verdict", [(2.6, "flaky", "flaky"), (20.5, "confirmed", "fail")])
def test_a_late_rails_retest_is_judged_against_the_other_rails_of_the_first_pass(again, status, verdict):
    records = first_pass()
    pa.mark_outliers(records, fleet_min_fraction=0.5)
    # the retests alone are no fleet: one record of rail 7 has no other rail to be compared with
    out = rt.classify(records, [retest(("h9", "h10"), again, 7)], fleet_min_fraction=0.5)
    pair = next(p for p in out["pairs"] if p["id"].startswith("h9-h10"))
    assert pair["status"] == status
    assert out["records"][4]["verdict"] == verdict
    judged = th.evaluate(out["records"], set_verdicts=True, fleet_min_fraction=0.5)["records"]
    assert judged[4]["verdict"] == verdict


def _random_latency_pass(rng):
    rails = rng.choice([(3, 7), (3, 7, 11)])
    records = []
    for rail in rails:
        base = rng.choice([1.0, 2.0, 8.0])
        for host, peer in PAIRS + [("h2", "h11"), ("h11", "h9")][:rng.randint(0, 2)]:
            late = rng.random() < 0.25
            records.append(lat((host, peer), round(base * (1 + rng.random()) + (rng.uniform(5, 60) if late else 0),
                                                   2), rail))
    return records


@pytest.mark.parametrize("fraction", [None, 0.5, 0.05])
def test_whatever_the_thresholds_fail_as_far_the_first_pass_failed_first(fraction):
    rng = random.Random(20261203)
    for _case in range(300):
        records = _random_latency_pass(rng)
        first = [dict(r, metrics=dict(r["metrics"])) for r in records]
        pa.mark_outliers(first, fleet_min_fraction=fraction)
        judged = th.evaluate(records, set_verdicts=True, fleet_min_fraction=fraction)["records"]
        far = [num for num, rec in enumerate(judged) if rec["thresholds"]["fleet"].get("far")]
        assert [num for num in far if first[num]["verdict"] != "fail"] == [], [
            (r["params"]["rail"], r["metrics"]["lat_us"]) for r in records]
