# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one-click check on a two-tier lab (``lab.py up --tiers 2``): the leaf switches come from LLDP.

6 hosts, 2 rails, 2 hosts per leaf: per rail three leaf bridges under a spine bridge, each joined to it by a
shapeable uplink veth, and the lab's lldpctl EMULATOR on every host naming the leaf and port of each rail netdev.
The inventory has no ``commcheck_topology``: discovery asks lldpctl (``commcheck_discover_topology_tools``, set
by the lab because each host's sysfs root is its own tree) and localization reads the leaves from there. Three
leaves, not two: with two, a slow uplink of one and of the other fail the same links (the product then names
the uplinks between both, which side not separable).

Fast tier: the healthy run shows each host's leaf and port per rail (source lldp) in the localization record
and the report. Full tier: a slow uplink of leaf 2 on rail 1 is that leaf's ``uplink``, a slow leaf 2 is that
``leaf``, and no host is blamed in either; the same uplink found by ``playbooks/rdma.yml`` alone (the rdma_perf role
without the one-click check's discovery: its own reading of the ports asks lldpctl); the TCP check's ``leaf_ring``
planned from the leaf of the RDMA port holding each host's TCP address; and the fabric itself: a slowed uplink slows only what leaves its
leaf, ``heal`` restores it, and a two-tier lab's ``down`` leaves none of its interfaces. The spine pattern on the
fabric made 2:1 oversubscribed (``Lab.oversubscribe``): it passes against the ratio stated while the shaped uplinks
cap what its load round moves, and one leaf's uplink slowed further is that leaf's ``uplink``, no host.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import glob
import json
import os

import pytest

import faults
import lab as lablib
import oneclick_helpers as oc
from lab_checks import HEALTHY_VERDICTS, history_env, read_history, slow_rate
from test_lab import NOMINAL_FLOOR, iperf3, nominal_reading

pytestmark = [pytest.mark.lab, pytest.mark.slow]

HOSTS, RAILS, PER_LEAF = 6, 2, 2
EXTRA = {"commcheck_checks": ["discover", "rdma"], "commcheck_rdma_ops": ["write"],
         "commcheck_rdma_metrics": ["bw"], "commcheck_rdma_duration": 2}
# the rdma_perf role alone (playbooks/rdma.yml): its own options only
ALONE = dict((name, value) for name, value in EXTRA.items() if name != "commcheck_checks")


@pytest.fixture(scope="module")
def tier2(lab_factory):
    return lab_factory("tier2", hosts=HOSTS, rails=RAILS, tiers=2, per_leaf=PER_LEAF)


def faulted_run(lab, tmp_path, fault=None, extra=None):
    lab.heal()
    if fault is not None:
        fault.inject()
    try:
        return oc.oneclick(lab, tmp_path, extra or EXTRA, on_line=fault.during if fault is not None else None)
    finally:
        if fault is not None:
            fault.heal()
        lab.heal()


def components(run):
    """(component, host, rail, leaves) of the RDMA check's localization findings; a ``flaky`` link (a healthy link
    read low once on the loaded machine, passing its retest: nobody blamed) is left out."""
    return [(r["params"]["component"], r["host"], r["params"].get("rail"),
             (r["params"].get("switch") or {}).get("leaves"))
            for r in run.records("finding") if r["params"].get("check") == "rdma_perf"
            and r["params"].get("component") not in (None, "flaky")]


def lldp_topology(lab):
    """What each host's lldpctl EMULATOR says, as the localization record should carry it."""
    return dict((host, dict((str(hrail["rail"]), {"leaf": "lab-r%d-leaf%d" % (hrail["rail"], num // PER_LEAF + 1),
                                                  "port": "swp%d" % (num % PER_LEAF + 1), "source": "lldp"})
                            for hrail in lab.host(host)["rails"]))
                for num, host in enumerate(lab.hosts))


def test_a_healthy_two_tier_run_passes_and_shows_each_hosts_leaf_from_lldp(tier2, tmp_path):
    with open(tier2.inventory) as handle:
        assert "commcheck_topology" not in handle.read()
    run = faulted_run(tier2, tmp_path)
    assert run.rc == 0, run.tail()
    measured = run.records("rdma_bw")
    # a ring of 6 hosts on each of 2 rails, every link measured; two of each rail's links cross an uplink
    assert len(measured) == HOSTS * RAILS and all(r["verdict"] in HEALTHY_VERDICTS for r in measured), [
        (r["host"], r["peer"], r["params"]["rail"], r["verdict"]) for r in measured]
    assert components(run) == []
    [localization] = [r for r in run.records("localization") if r["params"].get("check") == "rdma_perf"]
    assert localization["params"]["topology"] == lldp_topology(tier2)
    [report] = glob.glob(os.path.join(str(run.report_dir), "*", "report.md"))
    with open(report) as handle:
        text = handle.read()
    assert "## Leaf switches (6 hosts, 6 leaves)" in text, text[:3000]
    assert "| h3 | lab-r0-leaf2 port swp1 (lldp) | lab-r1-leaf2 port swp1 (lldp) |" in text


@pytest.mark.full
def test_a_slow_uplink_of_one_leaf_is_that_leafs_uplink_and_no_host(tier2, tmp_path):
    fault = faults.SlowUplink(tier2.lab, slow_rate(tier2), rail=1, leaf=2)
    run = faulted_run(tier2, tmp_path, fault)
    assert components(run) == [("uplink", "*", 1, ["lab-r1-leaf2"])], (components(run), run.tail())
    [finding] = [r for r in run.records("finding") if r["params"].get("component") == "uplink"]
    assert finding["params"]["switch"]["hosts"] == ["h3", "h4"]
    assert "the uplinks of leaf switch lab-r1-leaf2" in finding["cause"], finding["cause"]
    assert any("h3 port swp1 (lldp)" in line for line in finding["evidence"]), finding["evidence"]


@pytest.mark.full
def test_a_slow_leaf_is_that_leaf_and_no_host(tier2, tmp_path):
    fault = faults.SlowLeafSwitch(tier2.lab, slow_rate(tier2), rail=1, leaf=2)
    run = faulted_run(tier2, tmp_path, fault)
    assert components(run) == [("leaf", "*", 1, ["lab-r1-leaf2"])], (components(run), run.tail())
    [finding] = [r for r in run.records("finding") if r["params"].get("component") == "leaf"]
    assert finding["params"]["switch"]["hosts"] == ["h3", "h4"]
    assert "every host behind leaf switch lab-r1-leaf2 (h3, h4) fails" in finding["cause"], finding["cause"]


# the spine pattern on a 2:1 fabric (each uplink: its two hosts' rate over 2, one host's rate), both ways at once:
# under the load round each uplink carries two flows each way, so a pair gets the rate over 2 each way, what
# commcheck_rdma_oversubscription 2 expects of it (the rate, doubled for bidirectional, over 2). One way only, the
# round's alternating servers and clients would put one flow each way on an uplink: no congestion at 2:1. Rounds
# with a barrier and 8 s tests: the pairs of the load round start as the hosts' tasks do (a second or so apart on
# a loaded machine), so they overlap for most of their time, not all of it.
SPINE = dict(EXTRA, commcheck_rdma_pattern="spine", commcheck_rdma_oversubscription=2,
             commcheck_rdma_bidirectional=True, commcheck_rdma_duration=8, commcheck_rdma_strategy="rounds")
OVERSUBSCRIPTION = 2
# what a pair that starts late moves alone before the others end, over the uplinks' rate
SKEW_SLACK = 1.25


def spine_run(lab, tmp_path, fault=None):
    lab.lab.oversubscribe(OVERSUBSCRIPTION)
    try:
        return faulted_run(lab, tmp_path, fault, SPINE)
    finally:
        lab.lab.oversubscribe(1)


def first_pass(run):
    """The first pass's bandwidth records: (across leaves, within a leaf)."""
    records = [r for r in run.records("rdma_bw") if not r["params"].get("retest")]
    return ([r for r in records if r["params"]["leaves"][0] != r["params"]["leaves"][1]],
            [r for r in records if r["params"]["leaves"][0] == r["params"]["leaves"][1]])


@pytest.mark.full
def test_a_spine_run_on_an_oversubscribed_fabric_passes_against_the_ratio_stated_and_its_uplinks_cap_it(
        tier2, tmp_path):
    run = spine_run(tier2, tmp_path)
    assert run.rc == 0, run.tail()
    across, within = first_pass(run)
    rate = tier2.rate_gbps
    # the load round: on each rail three pairs, one from each leaf to the next, both ways
    assert sorted((r["params"]["rail"], r["host"], r["peer"]) for r in across) == [
        (rail, host, peer) for rail in (0, 1) for host, peer in (("h1", "h4"), ("h3", "h6"), ("h5", "h2"))]
    assert all(r["params"]["oversubscription"] == OVERSUBSCRIPTION and r["metrics"]["expected_gbps"] ==
               pytest.approx(2 * rate / OVERSUBSCRIPTION) for r in across), [r["metrics"] for r in across]
    # then each leaf's two hosts with each other, alone, expecting the full (bidirectional) rate
    assert sorted((r["params"]["rail"], r["host"], r["peer"]) for r in within) == [
        (rail, host, peer) for rail in (0, 1) for host, peer in (("h1", "h2"), ("h3", "h4"), ("h5", "h6"))]
    assert not any("oversubscription" in r["params"] for r in within)
    assert all(r["metrics"]["expected_gbps"] == pytest.approx(2 * rate) for r in within)
    assert all(r["verdict"] in HEALTHY_VERDICTS for r in across + within), [
        (r["host"], r["peer"], r["params"]["rail"], r["verdict"], r["metrics"]["bw_gbps"]) for r in across + within]
    assert components(run) == []
    # real bytes through the shaped uplinks: each flow of a rail's three pairs leaves its leaf by one uplink, and
    # the three uplinks carry at most their rate each way (the same hosts' pairs within a leaf, alone, moved about
    # twice the rate each: a non-blocking fabric would let the three pairs move about twice as much)
    uplink = 3 * PER_LEAF * rate / OVERSUBSCRIPTION
    moved = dict((rail, sum(r["metrics"]["bw_gbps"] for r in across if r["params"]["rail"] == rail)) for rail in (0, 1))
    alone = dict((rail, sum(r["metrics"]["bw_gbps"] for r in within if r["params"]["rail"] == rail)) for rail in (0, 1))
    assert all(0 < moved[rail] <= SKEW_SLACK * uplink for rail in (0, 1)), (moved, alone, uplink)


@pytest.mark.full
def test_a_slow_uplink_under_the_spine_s_load_is_that_leafs_uplink_and_no_host(tier2, tmp_path):
    slow = slow_rate(tier2, divisor=10)
    fault = faults.SlowUplink(tier2.lab, slow, rail=1, leaf=2)
    run = spine_run(tier2, tmp_path, fault)
    assert components(run) == [("uplink", "*", 1, ["lab-r1-leaf2"])], (components(run), run.tail())
    [finding] = [r for r in run.records("finding") if r["params"].get("component") == "uplink"]
    assert finding["params"]["switch"]["hosts"] == ["h3", "h4"]
    assert "the uplinks of leaf switch lab-r1-leaf2" in finding["cause"], finding["cause"]
    across, within = first_pass(run)
    # what crosses leaf 2's uplink on rail 1 (h1-h4, h3-h6) is held to the slowed rate, both ways; the rest passes
    slowed = [r for r in across if r["params"]["rail"] == 1 and "lab-r1-leaf2" in r["params"]["leaves"]]
    assert sorted((r["host"], r["peer"]) for r in slowed) == [("h1", "h4"), ("h3", "h6")]
    assert all(r["verdict"] == "fail" and r["metrics"]["bw_gbps"] <= 1.05 * 2 * lablib.rate_gbps(slow)
               for r in slowed), [
        (r["host"], r["peer"], r["verdict"], r["metrics"]["bw_gbps"]) for r in slowed]
    assert all(r["verdict"] in HEALTHY_VERDICTS for r in across + within if r not in slowed)


@pytest.mark.full
def test_rdma_perf_alone_reads_the_leaves_from_lldp_and_names_a_slow_uplink(tier2, tmp_path):
    fault = faults.SlowUplink(tier2.lab, slow_rate(tier2), rail=1, leaf=2)
    tier2.heal()
    fault.inject()
    try:
        proc = tier2.ansible_playbook("playbooks/rdma.yml", extra_vars=ALONE, env=history_env(tmp_path / "history"),
                                      on_line=fault.during)
    finally:
        fault.heal()
        tier2.heal()
    assert proc.returncode == 0, proc.stdout[-4000:]
    lines = read_history(tmp_path / "history")
    [localization] = [r for r in lines if r.get("kind") == "localization" and r["params"].get("check") == "rdma_perf"]
    assert localization["params"]["topology"] == lldp_topology(tier2)
    named = [(r["params"]["component"], r["host"], r["params"].get("rail"), (r["params"].get("switch") or {}).get(
        "leaves")) for r in lines if r.get("kind") == "finding" and r["params"].get("check") == "rdma_perf"
        and r["params"].get("component") not in (None, "flaky")]
    assert named == [("uplink", "*", 1, ["lab-r1-leaf2"])], (named, proc.stdout[-3000:])


@pytest.mark.full
def test_tcp_leaf_ring_plans_from_the_leaf_of_the_port_holding_each_host_s_address(tier2, tmp_path):
    tier2.heal()
    run = oc.oneclick(tier2, tmp_path, {"commcheck_checks": ["discover", "tcp"], "commcheck_tcp_pattern": "leaf_ring",
                                        "commcheck_tcp_duration": 2})
    assert run.rc == 0, run.tail()
    records = [r for r in run.records("tcp_bw") if not r["params"].get("retest")]
    # each host's TCP address is its rail-0 address: the leaves are rail 0's, from lldpctl
    leaf = dict((host, "lab-r0-leaf%d" % (num // PER_LEAF + 1)) for num, host in enumerate(tier2.hosts))
    assert records and all(r["params"]["leaves"] == [leaf[r["host"]], leaf[r["peer"]]] for r in records), [
        (r["host"], r["peer"], r["params"].get("leaves")) for r in records]
    pairs = set((r["host"], r["peer"]) for r in records)
    # two hosts a leaf, three leaves: each leaf's pair, and each two leaves once through the spine
    assert len([p for p in pairs if leaf[p[0]] == leaf[p[1]]]) == 3
    assert set(frozenset((leaf[a], leaf[b])) for a, b in pairs if leaf[a] != leaf[b]) == set(
        frozenset(p) for p in [("lab-r0-leaf1", "lab-r0-leaf2"), ("lab-r0-leaf1", "lab-r0-leaf3"),
                               ("lab-r0-leaf2", "lab-r0-leaf3")])


@pytest.mark.full
def test_a_slowed_uplink_slows_only_what_leaves_its_leaf_and_heal_restores_it(tier2):
    tier2.heal()
    floor = NOMINAL_FLOOR * tier2.rate_gbps
    try:
        tier2.slow_uplink(1, 2, "100mbit")
        # h3 and h4 are behind leaf 2 of each rail, h1 behind leaf 1
        across = iperf3(tier2, "h1", "h3", rail=1)
        back = iperf3(tier2, "h1", "h3", rail=1, reverse=True)
        within = nominal_reading(tier2, "h3", "h4", 1)
        other_rail = nominal_reading(tier2, "h1", "h3", 0)
    finally:
        tier2.heal()
    assert 0 < across <= 0.105 and 0 < back <= 0.105, (across, back)
    assert within >= floor and other_rail >= floor, (within, other_rail)
    healed = nominal_reading(tier2, "h1", "h3", 1)
    assert floor <= healed <= 1.02 * tier2.rate_gbps, healed


@pytest.mark.full
def test_each_host_hangs_off_its_leaf_bridge_and_down_leaves_no_interface(lab_available):
    name = "t2dn%d" % (os.getpid() % 100000)
    lab = lablib.up(name, 4, rails=1, owner_pid=os.getpid(), tiers=2, per_leaf=2)
    try:
        tag = lablib.name_hash(name)[:5]
        masters = dict((link["ifname"], link.get("master")) for link in json.loads(
            lablib.run(["ip", "-j", "link", "show"]).stdout) if tag in link["ifname"])
        leaves = lab.state["rails"][0]["leaves"]
        assert [masters[lab.host(h)["rails"][0]["peer"]] for h in lab.hosts] == [
            leaves[0]["bridge"], leaves[0]["bridge"], leaves[1]["bridge"], leaves[1]["bridge"]]
        assert [(masters[leaf["uplink_leaf"]], masters[leaf["uplink_spine"]]) for leaf in leaves] == [
            (leaf["bridge"], lab.state["rails"][0]["bridge"]) for leaf in leaves]
        assert lab.exec("h4", ["lldpctl", "-f", "json"]).stdout.count("lab-r0-leaf2") == 1
    finally:
        lablib.down(name)
    assert not [link for link in lablib.link_names() if tag in link]
