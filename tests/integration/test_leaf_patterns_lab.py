# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The topology pattern leaf_ring end to end: the one-click play on a 6-host lab whose inventory places three hosts
behind each of two leaf switches (commcheck_topology).

The lab itself is flat (every host on one emulated segment, perftest EMULATOR moving real data over TCP): the
leaves are what the inventory says, which is all the planner reads. What is checked is the plan the product makes
from them and that its pairs run and pass: every host meets a host of its own leaf, the two leaves meet through
the spine, and the records name each pair's leaves.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

import oneclick_helpers as oc
from lab_checks import HEALTHY_VERDICTS

pytestmark = [pytest.mark.lab, pytest.mark.slow, pytest.mark.full]


@pytest.fixture(scope="module")
def lab(lab_factory):
    return lab_factory("lring6", hosts=6, rails=1)


def test_oneclick_leaf_ring_pairs_each_host_within_its_leaf_and_the_leaves_through_the_spine(lab, tmp_path):
    leaf = dict((host, "lab-leaf-%s" % ("a" if num < 3 else "b")) for num, host in enumerate(lab.hosts))
    overlay = {"all": {"hosts": dict((host, {"commcheck_topology": {0: {"leaf": leaf[host], "port": "swp%d" % num}}})
                                     for num, host in enumerate(lab.hosts))}}
    run = oc.oneclick(lab, tmp_path, {"commcheck_checks": ["discover", "rdma"], "commcheck_rdma_pattern": "leaf_ring",
                                      "commcheck_rdma_metrics": ["bw"]}, overlay=overlay)
    assert run.rc == 0, run.tail()
    # the first pass (a failing pair of a loaded machine is retested: its retests are records of their own)
    records = [r for r in run.records("rdma_bw") if not r["params"].get("retest")]
    assert records and all(r["verdict"] in HEALTHY_VERDICTS for r in records), [
        (r["host"], r["peer"], r["verdict"], r["cause"]) for r in records]
    pairs = set((r["host"], r["peer"]) for r in records)
    # each record names its two ends' leaves, as the inventory places them
    assert all(r["params"]["leaves"] == [leaf[r["host"]], leaf[r["peer"]]] for r in records)
    same = [p for p in pairs if leaf[p[0]] == leaf[p[1]]]
    across = [p for p in pairs if leaf[p[0]] != leaf[p[1]]]
    # three hosts a leaf: a pair and the odd host out with the first, per leaf; the two leaves once
    assert len(same) == 4 and len(across) == 1, sorted(pairs)
    assert set(h for p in same for h in p) == set(lab.hosts)
    # in at most 2 + 2 rounds, no host twice in one
    rounds = {}
    for r in records:
        rounds.setdefault(r["params"]["round"], []).extend([r["host"], r["peer"]])
    assert len(rounds) <= 4 and all(len(hosts) == len(set(hosts)) for hosts in rounds.values()), rounds
    assert not any("oversubscription" in r["params"] for r in records)
