# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The culprits' order of explaining and of listing, a fabric named down to its switch, which pair kinds are
localized here, and which culprits get their devices' warnings. The culprits are given in the order that would
hide a wrong rank (the one to be explained first)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits as cp

C = cp.culprit


def described(items):
    return [(cp.describe(c), c["evidence"]) for c in items]


@pytest.mark.parametrize("items, expected", [
    # a NIC explains its host named only by a check that cannot tell the two apart
    ([C("host", "h1", check="collective", evidence=["pool slow"]), C("nic", "h1", rail=0, device="mlx5_0", check="rdma_perf")],
     [("nic h1 mlx5_0 (rail 0)", ["explains host h1", "pool slow"])]),
    # that host explains its links
    ([C("link", "h1", "h2", rail=0, check="rdma_perf"), C("host", "h1", check="collective")],
     [("host h1", ["explains link h1 - h2 (rail 0)"])]),
    # a link of a rail explains the same pair measured without rails
    ([C("link", "h1", "h2", check="tcp_perf"), C("link", "h2", "h1", rail=0, check="rdma_perf")],
     [("link h2 - h1 (rail 0)", ["explains link h1 - h2"])]),
    # a failing NIC explains a flaky reading of the same NIC, given first
    ([C("nic", "h1", rail=0, device="mlx5_0", verdict="flaky", check="rdma_perf"), C("nic", "h1", device="mlx5_0", check="discover")],
     [("nic h1 mlx5_0 (rail 0)", [])]),
])
def test_what_explains_is_asked_first_whatever_order_the_culprits_come_in(items, expected):
    assert described(cp.merge(items)) == expected


def test_two_readings_of_one_nic_on_a_rail_are_one_culprit_with_its_checks_in_the_order_they_came():
    merged = cp.merge([C("nic", "h1", rail=1, verdict="flaky", check="rdma_perf", evidence=["retest passed"]),
                       C("nic", "h1", rail=1, device="mlx5_1", check="counters", evidence=["link downed 3"])])
    assert [(c["verdict"], c["device"], c["checks"], c["evidence"]) for c in merged] == [
        ("fail", "mlx5_1", ["rdma_perf", "counters"], ["retest passed", "link downed 3"])]


@pytest.mark.parametrize("items, expected", [
    ([C("config", "10.0.0.1", "10.0.0.2", rail=0), C("config", "10.0.0.1", rail=0)],
     ["config 10.0.0.1 (rail 0)", "config 10.0.0.1 - 10.0.0.2 (rail 0)"]),
    ([C("config", "10.0.0.1", rail=0), C("config", None, rail=0)], ["config None (rail 0)", "config 10.0.0.1 (rail 0)"]),
])
def test_a_culprit_without_a_host_or_a_peer_comes_before_those_with_one(items, expected):
    assert [cp.describe(c) for c in sorted(items, key=cp.sort_key)] == expected


def leaf_finding(component, switch, host="*"):
    return {"kind": "finding", "host": host, "peer": None, "verdict": "fail", "cause": "%s slow" % component,
            "fix": "check it", "evidence": [], "params": {"component": component, "rail": 1, "switch": switch,
                                                          "check": "rdma_perf", "family": "rdma_bw"}}


def test_a_leaf_and_the_uplinks_of_a_rail_are_two_fabric_culprits_named_down_to_their_switches():
    leaf, uplinks = {"part": "leaf", "leaves": ["leaf-3"]}, {"part": "uplinks", "leaves": ["leaf-1", "leaf-2"]}
    found = cp.culprits([leaf_finding("leaf", leaf), leaf_finding("uplink", uplinks)])
    assert [(cp.describe(c), c["component"], c["switch"]) for c in found] == [
        ("leaf switch leaf-3 (rail 1)", "fabric", leaf),
        ("uplinks between leaf switches leaf-1 and leaf-2 (rail 1)", "fabric", uplinks)]


def test_a_host_culprit_is_named_behind_the_leaf_its_localization_records_give():
    topology = {"kind": "localization", "host": "*", "peer": None, "verdict": "fail",
                "params": {"family": "rdma_bw", "topology": {"h2": {"1": {"leaf": "leaf-3", "port": "Eth1/2"}}}}}
    host = {"kind": "finding", "host": "h2", "peer": None, "verdict": "fail", "cause": "slow", "fix": None,
            "evidence": [], "params": {"component": "host", "check": "rdma_perf", "family": "rdma_bw"}}
    assert [cp.describe(c) for c in cp.culprits([topology, host])] == ["host h2 behind leaf leaf-3"]


def test_a_published_component_that_is_already_a_culprits_component_is_kept():
    assert cp.from_component({"component": "config", "host": "h1", "rail": 0}, "custom")["component"] == "config"


def pair(kind, host, peer, verdict, rail=0):
    return {"kind": kind, "host": host, "peer": peer, "verdict": verdict, "cause": None, "fix": None, "evidence": [],
            "params": {"rail": rail, "device": "mlx5_0", "peer_device": "mlx5_0"},
            "metrics": {"bw_gbps": 30.0 if verdict == "fail" else 95.0, "expected_gbps": 100.0}}


def test_a_kind_is_localized_here_when_a_record_of_it_failed_whatever_the_others_of_its_family_say():
    # a pair analysis finding of the family is no localization of it; the kind's only record failed
    named = {"kind": "finding", "host": "h1", "peer": "h2", "verdict": "fail", "cause": "slow", "fix": None,
             "evidence": [], "params": {"family": "b_bw", "finding": "bad_link", "check": "rdma_perf"}}
    assert [cp.describe(c) for c in cp.culprits([named, pair("b_bw", "h1", "h2", "fail")])] == ["link h1 - h2 (rail 0)"]


def test_a_kind_that_cannot_be_localized_leaves_the_next_kind_localized():
    records = [pair("a_bw", "h1", "h2", "fail", rail="x"), pair("b_bw", "h1", "h2", "fail")]
    assert [cp.describe(c) for c in cp.localized_here(records, set())] == ["link h1 - h2 (rail 0)"]


def test_the_failing_nics_and_device_settings_get_their_devices_warnings_first_a_flaky_one_none():
    notes = [{"kind": "finding", "host": "h1", "peer": None, "verdict": "warn", "cause": "x%d lanes" % lanes,
              "params": {"check": "discover", "code": "pcie_low", "device": device}, "evidence": []}
             for device, lanes in (("mlx5_0", 8), ("mlx5_3", 4))]
    items = [C("nic", "h1", rail=0, device="mlx5_0", verdict="flaky", evidence=["retest passed"]),
             C("link", "h1", "h2", rail=0, evidence=["slow"]),
             C("config", "h1", rail=3, device="mlx5_3", check="gpudirect", evidence=["gpudirect: slow"])]
    assert [c["evidence"] for c in cp.with_discovery_notes(items, notes)] == [
        ["retest passed"], ["slow"], ["discovery: pcie_low: x4 lanes", "gpudirect: slow"]]
