# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""benchmarks/bench_accuracy.py's scoring: what a run names against what a scenario injected (no lab).

A leaf switch, its uplinks and a rail's whole plane are different things to replace: a run that names the
leaf's uplinks, the rail's plane or another leaf for a slow leaf is wrong, and each is scored as its own
component, by the switch names. The two-tier scenarios are listed by the leaves a lab has.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import bench_accuracy as bench  # noqa: E402  pylint: disable=wrong-import-position
import faults  # noqa: E402  pylint: disable=wrong-import-position


def summary_culprit(component, rail, part=None, leaves=(), host="*", verdict="fail"):
    """One culprit of results.json's summary; a leaf or uplink one is the fabric with its ``switch``."""
    item = {"component": component, "host": host, "peer": None, "rail": rail, "verdict": verdict}
    if part:
        item["switch"] = {"part": part, "leaves": list(leaves), "hosts": ["h3", "h4"], "groups": [["h3", "h4"]]}
    return item


def injected(component, rail, leaves=None):
    out = {"component": component, "host": None, "peer": None, "rail": rail}
    if leaves:
        out["switch"] = list(leaves)
    return out


LEAF2 = injected("leaf", 1, ["lab-r1-leaf2"])
UPLINK2 = injected("uplink", 1, ["lab-r1-leaf2"])
PLANE1 = injected("fabric", 1)


@pytest.mark.parametrize("culprit, component", [
    (summary_culprit("fabric", 1, "leaf", ["lab-r1-leaf2"]), "leaf"),
    (summary_culprit("fabric", 1, "uplink", ["lab-r1-leaf2"]), "uplink"),
    (summary_culprit("fabric", 1), "fabric"),
    (summary_culprit("nic", 1, host="h3"), "nic"),
])
def test_a_summary_fabric_culprit_is_the_switch_part_it_names(culprit, component):
    [named] = bench.named_from_culprits({"culprits": [culprit]})
    assert named["component"] == component
    assert named["switch"] == ((culprit.get("switch") or {}).get("leaves") or None)


def test_a_localization_finding_of_an_uplink_keeps_its_switch_names():
    records = [{"kind": "finding", "host": "*", "verdict": "fail",
                "params": {"check": "rdma_perf", "component": "uplink", "rail": 1,
                           "switch": {"part": "uplink", "leaves": ["lab-r1-leaf3"], "hosts": ["h5", "h6"]}}},
               {"kind": "finding", "host": "h2", "verdict": "fail",
                "params": {"check": "rdma_perf", "component": "rail", "rail": 0}}]
    named = bench.named_from_records(records, {})
    assert [(n["component"], n["host"], n["rail"], n["switch"]) for n in named] == [
        ("uplink", "*", 1, ["lab-r1-leaf3"]), ("nic", "h2", 0, None)]


@pytest.mark.parametrize("culprits, expected, right", [
    ([summary_culprit("fabric", 1, "leaf", ["lab-r1-leaf2"])], [LEAF2], True),
    ([summary_culprit("fabric", 1, "uplink", ["lab-r1-leaf2"])], [UPLINK2], True),
    # the right switch, the wrong part: a leaf is not its uplinks, nor the other way round
    ([summary_culprit("fabric", 1, "uplink", ["lab-r1-leaf2"])], [LEAF2], False),
    ([summary_culprit("fabric", 1, "leaf", ["lab-r1-leaf2"])], [UPLINK2], False),
    # the rail's whole plane for one leaf, or one leaf for the plane
    ([summary_culprit("fabric", 1)], [LEAF2], False),
    ([summary_culprit("fabric", 1, "leaf", ["lab-r1-leaf2"])], [PLANE1], False),
    ([summary_culprit("fabric", 1)], [PLANE1], True),
    # another leaf, the same leaf and one more (the uplinks between two leaves), the same name on another rail
    ([summary_culprit("fabric", 1, "leaf", ["lab-r1-leaf1"])], [LEAF2], False),
    ([summary_culprit("fabric", 1, "uplink", ["lab-r1-leaf1", "lab-r1-leaf2"])], [UPLINK2], False),
    ([summary_culprit("fabric", 0, "leaf", ["lab-r1-leaf2"])], [LEAF2], False),
    # the leaf, and also one of its hosts' NICs: one extra culprit
    ([summary_culprit("fabric", 1, "leaf", ["lab-r1-leaf2"]), summary_culprit("nic", 1, host="h3")], [LEAF2], False),
])
def test_a_leaf_or_uplink_is_right_only_as_that_part_of_that_switch(culprits, expected, right):
    named = bench.named_from_culprits({"culprits": culprits})
    assert bench.score(named, expected)[0] is right


def test_precision_and_recall_count_a_wrong_part_as_a_wrong_culprit():
    named = bench.named_from_culprits({"culprits": [summary_culprit("fabric", 1, "uplink", ["lab-r1-leaf2"])]})
    assert bench.score(named, [LEAF2]) == (False, 0, 0)
    assert bench.describe(named) == "uplink rail 1 lab-r1-leaf2"


class TwoTierLab(object):
    """What the two-tier faults read of a lab (``lab.Lab``'s state after ``lab.py up --tiers 2``), no network."""

    rate = "500mbit"

    def __init__(self, hosts, per_leaf, rails=2):
        self.hosts = ["h%d" % (num + 1) for num in range(hosts)]
        count = (hosts + per_leaf - 1) // per_leaf
        self.state = {"rails": [{"rail": rail, "leaves": [
            {"leaf": leaf, "name": "lab-r%d-leaf%d" % (rail, leaf),
             "hosts": self.hosts[(leaf - 1) * per_leaf:leaf * per_leaf]} for leaf in range(1, count + 1)]}
            for rail in range(rails)]}
        self.per_leaf = per_leaf

    def leaf(self, rail, leaf):
        return [entry for entry in self.state["rails"][rail]["leaves"] if entry["leaf"] == leaf][0]

    def host(self, host):
        num = self.hosts.index(host)
        return {"rails": [{"rail": rail, "leaf": "lab-r%d-leaf%d" % (rail, num // self.per_leaf + 1),
                           "port": "swp%d" % (num % self.per_leaf + 1)} for rail in range(2)]}


def test_two_tier_scenarios_run_the_uplink_only_where_a_rail_has_three_leaves():
    four = [fault.name for fault, _runs in bench.two_tier_scenarios(TwoTierLab(4, 2))]
    eight = [fault.name for fault, _runs in bench.two_tier_scenarios(TwoTierLab(8, 2))]
    assert four == list(bench.TWO_TIER[:2])
    assert eight == list(bench.TWO_TIER)


def test_the_inventory_scenario_names_leaves_lldp_does_not_and_turns_lldp_off():
    lab = TwoTierLab(8, 2)
    fault = faults.SlowLeafSwitchInventory(lab, "100mbit", rail=1, leaf=2)
    topology = fault.inventory_overlay["all"]["hosts"]
    assert topology["h3"]["commcheck_topology"] == {"0": {"leaf": "inv-lab-r0-leaf2", "port": "swp1"},
                                                    "1": {"leaf": "inv-lab-r1-leaf2", "port": "swp1"}}
    assert topology["h8"]["commcheck_topology"]["1"] == {"leaf": "inv-lab-r1-leaf4", "port": "swp2"}
    assert fault.extra_vars == {"commcheck_discover_topology_tools": False}
    # a run that read the leaves from LLDP names lab-r1-leaf2: wrong here, right for the LLDP scenario
    from_lldp = bench.named_from_culprits({"culprits": [summary_culprit("fabric", 1, "leaf", ["lab-r1-leaf2"])]})
    from_inventory = bench.named_from_culprits({"culprits": [
        summary_culprit("fabric", 1, "leaf", ["inv-lab-r1-leaf2"])]})
    assert bench.score(from_lldp, fault.expected)[0] is False
    assert bench.score(from_inventory, fault.expected)[0] is True
    lldp = faults.SlowLeafSwitch(lab, "100mbit", rail=1, leaf=2)
    assert bench.score(from_lldp, lldp.expected)[0] is True
    assert bench.score(from_inventory, lldp.expected)[0] is False


def test_the_one_tier_slow_leaf_expects_the_leaf_its_inventory_names():
    lab = TwoTierLab(8, 2)
    lab.host = lambda host: {"rails": [{"rail": 0}, {"rail": 1}]}
    fault = faults.SlowLeaf(lab, "100mbit", rail=1, per_leaf=2)
    assert fault.expected == [dict(faults.culprit("leaf", None, rail=1), switch=["lab-leaf1-2"])]
    assert fault.inventory_overlay["all"]["hosts"]["h4"]["commcheck_topology"][1] == {
        "leaf": "lab-leaf1-2", "port": "swp2"}
