# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The good pairs' level (verdicts/good_pairs.py) and the three places that judge by it: the first pass
(pair_analysis), a retest against the first pass (retest.classify) and the fleet threshold (thresholds.evaluate).

Fixtures: a rail of a 4-host mesh; ``late`` hosts add 20 us to every pair they are in (a pair of two late hosts:
40 us), so five of six pairs are late and the median and the best quarter are late too."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import good_pairs as gp
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import pair_analysis as pa
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest as rt
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import thresholds as th

FRACTION = 0.5
HOSTS = ["h1", "h2", "h3", "h4"]
PAIRS = [(a, b) for i, a in enumerate(HOSTS) for b in HOSTS[i + 1:]]


def latencies(late, base=2.0, extra=20.0, pairs=PAIRS):
    return [base + extra * sum(1 for host in pair if host in late) for pair in pairs]


def bandwidths(slow, rate=95.0, factor=0.3, pairs=PAIRS):
    return [rate * factor ** sum(1 for host in pair if host in slow) for pair in pairs]


def lat_record(pair, value, verdict="pass", **params):
    return {"kind": "rdma_lat", "host": pair[0], "peer": pair[1], "verdict": verdict, "evidence": [],
            "params": dict({"op": "write", "metric": "lat", "rail": 0, "size": 2}, **params),
            "metrics": {"lat_us": value}}


# --- host_explained -------------------------------------------------------------------------------------------

def test_two_late_hosts_of_four_are_the_suspects_and_the_pair_without_them_is_the_level():
    split = gp.host_explained(PAIRS, latencies(["h4", "h2"], base=3.0), False, FRACTION)
    assert split == {"level": 3.0, "suspects": ["h2", "h4"], "good": 1}


def test_slow_hosts_explain_bandwidth_too_and_the_level_is_the_median_of_the_good_pairs():
    pairs = PAIRS + [("h1", "h5"), ("h3", "h5"), ("h2", "h5"), ("h4", "h5")]
    values = bandwidths(["h10", "h2", "h4"], pairs=pairs)
    values[pairs.index(("h1", "h5"))] = 91.0
    values[pairs.index(("h3", "h5"))] = 89.0
    split = gp.host_explained(pairs, values, True, FRACTION)
    # hosts in natural order (h10 is in no pair); the level is the middle of 95, 91, 89, not the best
    assert split == {"level": 91.0, "suspects": ["h2", "h4"], "good": 3}


@pytest.mark.parametrize("values,why", [
    ([2.0, 2.1, 1.9, 2.05, 2.2, 1.95], "healthy: no pair far from the best"),
    ([22.0, 22.1, 21.9, 22.05, 22.2, 21.95], "a late plane: no good pair"),
    # h2 late, and the link h1-h3 too: h1 and h3 have good pairs (with h4), so no host explains that one
    ([22.0, 30.0, 2.0, 22.0, 22.0, 2.0], "a late pair between hosts that have good pairs"),
])
def test_no_split_without_hosts_that_explain_every_far_pair(values, why):
    assert gp.host_explained(PAIRS, values, False, FRACTION) is None, why


def test_a_suspects_pair_near_the_good_level_leaves_the_group_to_the_other_rules():
    # h2's pair with h3 is late by 5 us only: not far (the gap), so h2 is a suspect whose pairs are not all far
    values = latencies(["h2", "h4"])
    values[PAIRS.index(("h2", "h3"))] = 6.5
    assert gp.host_explained(PAIRS, values, False, FRACTION) is None


def test_a_latency_within_the_topologys_few_microseconds_is_not_far():
    # 3 x the good level, but only 4 us above it: a longer path, no fault
    assert gp.host_explained(PAIRS, latencies(["h2", "h4"], base=2.0, extra=4.0), False, FRACTION) is None
    assert gp.far_from_level(7.0, 2.0, False, FRACTION)
    assert not gp.far_from_level(6.9, 2.0, False, FRACTION)
    assert not gp.far_from_level(6.0, 2.0, False, 0.2)      # above 2 / 0.5, not above 2 / 0.2


def test_suspects_come_in_natural_order_and_three_pairs_are_enough():
    pairs = [("h1", "h2"), ("h1", "h3"), ("h1", "h10"), ("h2", "h3"), ("h2", "h10"), ("h3", "h10")]
    assert gp.host_explained(pairs, latencies(["h10", "h2"], pairs=pairs), False, FRACTION)["suspects"] == ["h2", "h10"]
    triangle = [("h1", "h2"), ("h1", "h3"), ("h2", "h3")]
    assert gp.host_explained(triangle, [22.0, 22.0, 2.0], False, FRACTION) == {"level": 2.0, "suspects": ["h1"], "good": 1}


@pytest.mark.parametrize("value,level,higher,fraction,far", [
    (47.4, 95.0, True, FRACTION, True), (47.5, 95.0, True, FRACTION, False),      # bandwidth: below level x fraction
    (10.1, 5.0, False, FRACTION, True), (10.0, 5.0, False, FRACTION, False),      # latency: above level / fraction
    (16.0, 10.0, False, FRACTION, False),                                         # 6 us above, but not 2 x
    (10.0, 1.0, False, FRACTION, True),
    (10.0, 0.0, False, FRACTION, False), (1.0, None, True, FRACTION, False),      # no level to be far from
    (1.0, 2.0, True, None, False), (30.0, 2.0, False, None, False),               # no fraction: no far rule
])
def test_far_from_level(value, level, higher, fraction, far):
    assert gp.far_from_level(value, level, higher, fraction) is far
    assert gp.explained_far(value, {"level": level} if level is not None else None, higher, fraction) is far


def test_without_a_fraction_or_with_a_pair_missing_its_peer_there_is_no_split():
    values = latencies(["h2", "h4"])
    assert gp.host_explained(PAIRS, values, False, None) is None
    assert gp.host_explained(PAIRS[:-1] + [("h3", None)], values, False, FRACTION) is None
    assert gp.host_explained(PAIRS[:2], values[:2], False, FRACTION) is None


# --- the three judges ----------------------------------------------------------------------------------------

def test_the_first_pass_fails_the_suspects_pairs_against_the_good_level_and_keeps_the_good_pair():
    recs = [lat_record(pair, value) for pair, value in zip(PAIRS, latencies(["h2", "h4"]))]
    pa.fail_far_outliers(recs, [r["metrics"]["lat_us"] for r in recs], False, "lat", (3.5, 0.2, FRACTION))
    assert [(r["host"], r["peer"]) for r in recs if r["verdict"] == "fail"] == [p for p in PAIRS if p != ("h1", "h3")]
    h1_h2 = recs[0]
    assert h1_h2["metrics"]["fleet_good_level"] == 2.0
    assert h1_h2["cause"] == "far fleet outlier: 22 us is above the good pairs' level 2 us / 0.5 (the pairs " \
        "without h2, h4) of 6 comparable records"
    # without the fleet fraction, no far rule: nothing fails
    recs = [lat_record(pair, value) for pair, value in zip(PAIRS, latencies(["h2", "h4"]))]
    pa.fail_far_outliers(recs, [r["metrics"]["lat_us"] for r in recs], False, "lat")
    assert all(r["verdict"] == "pass" for r in recs)


def test_a_retest_is_judged_against_the_first_pass_good_level():
    first = [lat_record(pair, value, verdict="pass" if pair == ("h1", "h3") else "fail")
             for pair, value in zip(PAIRS, latencies(["h2", "h4"]))]
    reference = rt.first_pass_reference(first, FRACTION)
    assert reference["groups"][("rdma_lat", "write", "lat", 2, 0)][1]["suspects"] == ["h2", "h4"]
    late = rt.judged_by_first_pass(lat_record(("h1", "h2"), 21.0, retest=True), reference, FRACTION)
    assert late["verdict"] == "fail" and "good pairs' level 2" in late["cause"]
    # the same value against the first pass's median alone (no split): within it, passes
    assert rt.judged_by_first_pass(lat_record(("h1", "h2"), 21.0, verdict="fail", retest=True),
                                   rt.first_pass_reference(first), FRACTION)["verdict"] == "pass"
    control = rt.judged_by_first_pass(lat_record(("h1", "h3"), 2.2, verdict="fail", retest=True), reference, FRACTION)
    assert control["verdict"] == "pass"


def test_the_fleet_threshold_fails_the_suspects_pairs_against_the_good_level():
    recs = [lat_record(pair, value) for pair, value in zip(PAIRS, latencies(["h2", "h4"]))]
    out = th.evaluate(recs, fleet_min_fraction=FRACTION, set_verdicts=True)["records"]
    verdicts = dict(((r["host"], r["peer"]), r["verdict"]) for r in out)
    assert verdicts.pop(("h1", "h3")) == "pass" and set(verdicts.values()) == set(["fail"])
    fleet = out[0]["thresholds"]["fleet"]
    assert (fleet["far"], fleet["good"], fleet["suspects"], fleet["median"]) == (True, 2.0, ["h2", "h4"], 22.0)
    assert out[0]["cause"].startswith("22 is above the good pairs' level 2 / 0.5: the pairs without h2, h4 "
                                      "(far fleet outlier, fleet median 22, 6 comparable records)")
    assert "far off the good pairs' level 2 (the pairs without h2, h4)" in out[0]["evidence"][-1]
    # h2-h4, the pair of two late hosts (42 us), is below the median's far line too (22 / 0.5)
    assert out[PAIRS.index(("h2", "h4"))]["cause"].startswith("42 is above the good pairs' level 2 / 0.5")
    without = th.evaluate(recs, set_verdicts=True)["records"]
    assert all(r["verdict"] in ("pass", "warn") for r in without)
