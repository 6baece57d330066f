# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A spine run's pairs across leaves (under the load round, expecting the rate over the oversubscription) and its
pairs within a leaf (alone, at the full rate) are compared each among their own: by the fraction of its expected
rate each delivers, a cross pair at twice its expectation made every healthy pair within a leaf a low outlier."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import pair_analysis as pa
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import thresholds as th

CROSS = [("h1", "h4"), ("h5", "h2"), ("h3", "h6")]
WITHIN = [("h1", "h2"), ("h3", "h4"), ("h5", "h6")]


def bw(pair, value, expected, **params):
    return {"kind": "rdma_bw", "host": pair[0], "peer": pair[1], "verdict": "pass", "cause": None, "evidence": [],
            "params": dict({"op": "write", "metric": "bw", "rail": 1, "size": 65536}, **params),
            "metrics": {"bw_gbps": value, "expected_gbps": expected}}


def spine_run(cross_value, slow_within=None):
    """A 4:1 spine run of three leaves of two hosts: the cross pairs at ``cross_value`` of 25 expected."""
    return [bw(pair, cross_value, 25.0, oversubscription=4.0, leaves=["a", "b"]) for pair in CROSS] + \
        [bw(pair, 30.0 if pair == slow_within else value, 100.0, leaves=["a", "a"])
         for pair, value in zip(WITHIN, (94.0, 95.0, 93.0))]


@pytest.mark.parametrize("cross_value", [50.0, 95.0])
def test_pairs_within_a_leaf_are_no_outliers_of_a_spine_run_s_cross_pairs(cross_value):
    records = spine_run(cross_value)
    pa.mark_outliers(records, fleet_min_fraction=0.5)
    assert [r["verdict"] for r in records] == ["pass"] * 6, [r["cause"] for r in records]
    judged = th.evaluate(spine_run(cross_value), set_verdicts=True, fleet_min_fraction=0.5)["records"]
    assert [r["verdict"] for r in judged] == ["pass"] * 6, [r["cause"] for r in judged]


def test_a_slow_pair_within_a_leaf_is_still_judged_among_its_own():
    judged = th.evaluate(spine_run(50.0, slow_within=("h3", "h4")), set_verdicts=True,
                         fleet_min_fraction=0.5)["records"]
    assert [(r["host"], r["peer"]) for r in judged if r["verdict"] == "fail"] == [("h3", "h4")]
