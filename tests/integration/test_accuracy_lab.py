# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the verdict names, end to end: faults injected into a lab (tests/lab/faults.py), the real one-click
playbook (perftest EMULATOR, real iperf3 / Open MPI, over SSH), and results.json's ``summary.culprits``
compared with what was injected: exactly the injected components, nothing else (the scoring of
benchmarks/bench_accuracy.py, which runs every fault class at 4 and 8 hosts).

Fast tier: one run on an 8-host, 2-rail lab with several faults at once, each on hosts and rails of its
own so that none hides another (``several_faults``; the tests below read it):

- h2 slowed on every rail: the host;
- h3's rail 1 slowed: its NIC, whose port counts 40 symbol errors while the run goes on (the counter
  deltas of the run are evidence of that NIC);
- h4's first NIC gone from its sysfs: that NIC (its second keeps its rail);
- the path between h5 and h6 on rail 0 slowed: the link (both ends pass with known-good partners);
- h7's rail-0 netdev at MTU 9000 where the others have 1500: a RoCE configuration mismatch, said before
  the pairs run;
- h8's rail-1 NIC answering every latency message 2 ms late: that NIC, by its latency alone;
- a ninth host in the inventory that does not exist: unreachable, reported, not fatal.

The run measures bandwidth and latency (RDMA) and TCP, 1 s a test (the lab's links are shaped to a few
hundred Mbit/s: a second moves tens of MB), judged at half the link rate (lab_checks.LAB_MIN_FRACTION).

Full tier (``pytest.mark.full``): the other fault classes of the bench, one run each on the 4-host lab
(a port down, a flaky link, a slow rail plane, a NIC slow only in what it sends, a port at half its rate,
a NIC on a degraded PCIe link).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import functools
import os
import sys

import pytest

import faults
import oneclick_helpers as oc
from lab_checks import HEALTHY_VERDICTS, LAB_MIN_FRACTION

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "benchmarks"))

import bench_accuracy  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = [pytest.mark.lab, pytest.mark.slow]

RETEST_MARK = "pair_perf : Plan the retests of the failing pairs"


class ErrorsDuringTheRun(faults.Fault):
    """A port counts errors while the run goes on: its counter rises between discovery's reading (before the
    tests) and the RDMA check's (after them). Evidence of a fault, not one of its own."""

    name = "errors during the run"

    def __init__(self, lab, host, rail, counter, by):
        super(ErrorsDuringTheRun, self).__init__(lab)
        self.host, self.rail, self.counter, self.by = host, rail, counter, by
        self.done = False

    def path(self):
        device = self.lab.host(self.host)["rails"][self.rail]["device"]
        return os.path.join(self.lab.sysfs_root(self.host), "class", "infiniband", device, "ports", "1", "counters",
                            self.counter)

    def during(self, line):
        if not self.done and RETEST_MARK in line:
            with open(self.path()) as handle:
                value = int(handle.read().strip())
            with open(self.path(), "w") as handle:
                handle.write("%d\n" % (value + self.by))
            self.done = True

    def heal(self):
        self.lab.heal(self.host)


class Several(object):
    """The faults of the fast tier's run, and the hosts each one is on."""

    def __init__(self, lab):
        h = lab.hosts
        slow = bench_accuracy.slow_rate(lab)
        self.slow_host = faults.SlowHost(lab, h[1], slow)
        self.slow_rail = faults.SlowRail(lab, h[2], slow, rail=1)
        self.errors = ErrorsDuringTheRun(lab, h[2], 1, "symbol_error", 40)
        self.missing_nic = faults.MissingNic(lab, h[3], rail=0)
        self.slow_link = faults.SlowLink(lab, h[4], h[5], slow, rail=0)
        self.mtu = faults.MtuMismatch(lab, h[6], rail=0)
        self.late_nic = faults.LateNic(lab, h[7], rail=1)
        self.all = [self.slow_host, self.slow_rail, self.errors, self.missing_nic, self.slow_link, self.mtu,
                    self.late_nic]
        self.fault = functools.reduce(lambda first, second: faults.Both(lab, first, second), self.all)
        self.ghost = "ghost"
        self.expected = self.fault.expected + [faults.culprit("host", self.ghost)]


class FaultedRun(object):
    def __init__(self, lab, injected, run, results):
        self.lab, self.injected, self.run, self.results = lab, injected, run, results


@pytest.fixture(scope="module")
def lab8(lab_factory):
    return lab_factory("acc8", hosts=8, rails=2)


@pytest.fixture(scope="module")
def several_faults(lab8, tmp_path_factory):
    """The one-click run on the 8-host lab with the faults of ``Several`` injected, healed afterwards."""
    tmp = tmp_path_factory.mktemp("several")
    lab8.heal()
    injected = Several(lab8.lab)
    base = lab8.address(lab8.hosts[0]).rsplit(".", 1)[0]
    overlay = {"lab": {"hosts": {injected.ghost: {"ansible_host": base + ".250",
                                                  "commcheck_sysfs_root": oc.empty_sysfs(injected.ghost)}}}}
    extra = dict(bench_accuracy.base_vars(lab8.lab, ("discover", "rdma", "tcp"), None),
                 commcheck_rdma_metrics=["bw", "lat"], commcheck_rdma_duration=1, commcheck_tcp_duration=1,
                 commcheck_min_fraction=LAB_MIN_FRACTION)
    extra.pop("commcheck_report_dir")
    injected.fault.inject()
    try:
        run = oc.oneclick(lab8, tmp, extra, overlay=overlay, on_line=injected.fault.during)
    finally:
        injected.fault.heal()
    assert os.path.isdir(os.path.join(str(run.report_dir), run.run_id or "")), run.tail()
    _directory, results = oc.report_of(run.report_dir, run.run_id)
    return FaultedRun(lab8, injected, run, results)


def test_the_culprits_are_exactly_the_injected_faults(several_faults):
    run, injected = several_faults.run, several_faults.injected
    assert run.rc == 4, run.tail()              # ansible-playbook: some host unreachable
    named = bench_accuracy.named_culprits(several_faults.results, run.records())
    # No flaky link is injected here: one the retests found transient on a loaded machine (it passed again) is
    # named as flaky, never as a fault; every fault named must be an injected one, and every injected one named.
    if not any(e["component"] == "flaky" for e in injected.expected):
        named = [n for n in named if n["component"] != "flaky"]
    right, named_ok, expected_ok = bench_accuracy.score(named, injected.expected)
    # what each culprit was named from (its cause and evidence) says why, when the list is wrong
    culprits = (several_faults.results.get("summary") or {}).get("culprits") or []
    assert right, "injected %s, named %s\n%s" % (
        bench_accuracy.describe(injected.expected), bench_accuracy.describe(named), "\n".join(
            "%s %s %s rail %s: %s | %s" % (
                c.get("component"), c.get("host"), c.get("peer"), c.get("rail"), c.get("cause"),
                "; ".join(c.get("evidence") or [])) for c in culprits))
    assert named_ok == len(named) and expected_ok == len(injected.expected)


def components(run, host=None, check="rdma_perf"):
    """(component, host, peer, rail, devices) of the localization findings of one check (one host's)."""
    return [(r["params"]["component"], r["host"], r["peer"], r["params"].get("rail"), r["params"].get("devices"))
            for r in run.records("finding") if r["params"].get("check") == check and r["params"].get("component")
            and host in (None, r["host"])]


def finding_of(run, component, host, check="rdma_perf"):
    [found] = [r for r in run.records("finding", host=host) if r["params"].get("check") == check
               and r["params"].get("component") == component]
    return found


def test_a_slowed_host_is_the_host(several_faults):
    run, slow = several_faults.run, several_faults.injected.slow_host.host
    assert components(run, slow) == [("host", slow, None, None, ["mlx5_0", "mlx5_1"])], components(run)
    finding = finding_of(run, "host", slow)
    assert finding["params"]["finding"] == "bad_node" and finding["params"]["rails"] == [0, 1], finding["params"]
    # a ring: two links a rail
    assert "4 of its 4 rdma_bw links are bad on every rail" in finding["cause"], finding["cause"]
    # the TCP check (the hosts' rail-0 addresses) names it too
    assert components(run, slow, "tcp_perf") == [("host", slow, None, None, None)], components(run, None, "tcp_perf")


def test_one_slowed_rail_is_that_hosts_rail_and_its_errors_are_its_evidence(several_faults):
    run, slow = several_faults.run, several_faults.injected.slow_rail.host
    assert components(run, slow) == [("rail", slow, None, 1, ["mlx5_1"])], components(run)
    finding = finding_of(run, "rail", slow)
    assert finding["params"]["finding"] == "bad_nic"
    assert "its other rail (0) is fine" in finding["cause"]
    # ... which its retest with a known-good partner there showed (its rail-0 peers are the slowed host and the
    # host without a rail-0 NIC)
    assert [line for line in finding["evidence"]
            if line.startswith("%s rail 0 (mlx5_0) with known-good " % slow) and ": pass " in line], finding["evidence"]
    # the counter deltas of the run: attributed to the port, and part of the evidence of the bad rail
    counters = [r for r in run.records("port_counters", host=slow) if r["params"]["device"] == "mlx5_1"]
    assert len(counters) == 1 and counters[0]["verdict"] == "warn"
    assert counters[0]["metrics"]["symbol_error_delta"] == 40
    assert all(r["verdict"] == "pass" for r in run.records("port_counters") if r is not counters[0])
    assert any(line.startswith("%s mlx5_1/1: symbol_error +40 during the run" % slow) for line in finding["evidence"])
    # every test ran pinned to its NIC's NUMA node (the emulated NICs are on node 0), both sides of each pair
    measured = [r for r in run.records("rdma_bw") if r["verdict"] != "skipped"]
    pinned = [e for r in measured for e in r["evidence"] if ": pinned with " in e]
    assert len(pinned) == 2 * len(measured) and all("--cpunodebind=0 --membind=0" in e or "taskset -c" in e
                                                    for e in pinned)


def test_one_slowed_pair_link_is_the_link(several_faults):
    run, link = several_faults.run, several_faults.injected.slow_link
    a, b = link.host, link.peer
    assert components(run, a) == [("link", a, b, 0, ["mlx5_0"])], components(run)
    finding = finding_of(run, "link", a)
    assert finding["params"]["finding"] == "bad_link" and "and with known-good partners" in finding["cause"]
    partner = [r for r in run.records("rdma_bw_retest") if r["params"]["retest_purpose"] == "partner"
               and r["params"]["subject"] in (a, b) and r["params"]["rail"] == link.rail]
    assert sorted(r["params"]["subject"] for r in partner) == sorted([a, b])
    assert all(r["verdict"] == "pass" and r["params"]["partner"] not in (a, b) for r in partner), partner
    # the TCP check's path between them (rail 0) is slow too: the same link, confirmed the same way
    assert components(run, a, "tcp_perf") == [("link", a, b, 0, None)], components(run, None, "tcp_perf")
    tcp = finding_of(run, "link", a, "tcp_perf")
    assert any("retest as is: 1 of 1 failed again" in line for line in tcp["evidence"]), tcp["evidence"]
    # the TCP retests ran on ports of their own, past the first pass's
    first_ports = set(r["params"]["tcp_port"] for r in run.records("tcp_bw"))
    assert min(r["params"]["tcp_port"] for r in run.records("tcp_bw_retest")) > max(first_ports)


def test_a_missing_nic_leaves_its_rail_a_gap_that_is_named(several_faults):
    """The host's first NIC is gone: its second keeps rail 1 (tested there with its peers' second NICs), and
    the rail-0 pairs it would be in are skipped with the reason instead of run across the planes."""
    run, missing = several_faults.run, several_faults.injected.missing_nic.host
    [gap] = [r for r in run.records("finding", host=missing) if r["params"].get("finding") == "rail_missing"]
    assert gap["verdict"] == "fail" and gap["params"]["rail"] == 0 and "mlx5_0" in gap["cause"], gap
    skipped = run.records("rdma_bw", verdict="skipped")
    assert sorted(r["params"]["rail"] for r in skipped) == [0, 0]
    assert all(missing in (r["host"], r["peer"]) for r in skipped), skipped
    rail1 = [r for r in run.records("rdma_bw") if missing in (r["host"], r["peer"]) and r["params"]["rail"] == 1]
    assert len(rail1) == 2 and all(r["params"]["device"] == r["params"]["peer_device"] == "mlx5_1" for r in rail1)


def test_a_late_nic_is_named_by_its_latency_alone(several_faults):
    run, late = several_faults.run, several_faults.injected.late_nic.host
    [culprit] = [c for c in several_faults.results["summary"]["culprits"] if c["host"] == late]
    assert (culprit["component"], culprit["rail"], culprit["device"], culprit["checks"]) == (
        "nic", 1, "mlx5_1", ["rdma_lat"]), culprit
    # (a latency_tail warning of a pair is a finding of that family too; the culprit's finding is the one named)
    [finding] = [r for r in run.records("finding", host=late) if r["params"].get("family") == "rdma_lat"
                 and r["params"].get("finding") != "latency_tail"]
    assert finding["params"]["finding"] == "bad_nic" and finding["params"]["devices"] == ["mlx5_1"], finding
    mine = [r for r in run.records("rdma_lat") if late in (r["host"], r["peer"])]
    # its rail-0 links are healthy (a moment of lateness on a loaded machine is retested: flaky at worst)
    assert sorted((r["params"]["rail"], r["verdict"] if r["params"]["rail"] else "ok" if r["verdict"] in (
        "pass", "flaky") else r["verdict"]) for r in mine) == [(0, "ok"), (0, "ok"), (1, "fail"), (1, "fail")], [
        (r["host"], r["peer"], r["params"]["rail"], r["verdict"], r.get("cause")) for r in mine]
    # its bandwidth holds
    assert all(r["verdict"] in HEALTHY_VERDICTS for r in run.records("rdma_bw") if late in (r["host"], r["peer"]))


def test_roce_mismatch_is_a_finding_before_the_pair_runs(several_faults):
    run, host = several_faults.run, several_faults.injected.mtu.host
    peers = sorted(set(r["host"] if r["peer"] == host else r["peer"] for r in run.records("rdma_bw")
                       if host in (r["host"], r["peer"]) and r["params"]["rail"] == 0))
    found = [r for r in run.records("finding") if r["params"].get("check") == "roce_preflight"]
    assert sorted((r["params"]["finding"], sorted((r["host"], r["peer"])), r["params"]["rail"]) for r in found) == \
        sorted((finding, sorted((host, peer)), 0) for peer in peers
               for finding in ("active_mtu_mismatch", "netdev_mtu_mismatch")), found
    for active in [r for r in found if r["params"]["finding"] == "active_mtu_mismatch"]:
        assert "(derived from the netdev MTU); the pair runs at 1024" in active["cause"], active["cause"]
        assert active["verdict"] == "warn" and "mtu" in active["fix"].lower()
    # said before the first test ran
    assert run.stdout.index("Show the RoCE mismatches found before the tests") < \
        run.stdout.index("Run every round of this host")


def test_unreachable_host_is_reported_not_fatal(several_faults):
    run, ghost, lab = several_faults.run, several_faults.injected.ghost, several_faults.lab
    assert run.rc == 4, run.tail()            # ansible-playbook: some host unreachable
    lost = run.records("finding", host=ghost)
    assert len(lost) == 1 and lost[0]["verdict"] == "error", lost
    assert lost[0]["params"]["finding"] == "unreachable" and "%s is unreachable" % ghost in lost[0]["cause"]
    # the others are measured: a ring of the eight
    tcp = run.records("tcp_bw")
    assert len(tcp) == len(lab.hosts) and {r["host"] for r in tcp} | {r["peer"] for r in tcp} == set(lab.hosts), tcp
    faulty = (several_faults.injected.slow_host.host, several_faults.injected.slow_link.host)
    assert all(r["verdict"] in HEALTHY_VERDICTS for r in tcp if not set(faulty) & {r["host"], r["peer"]}), tcp
    summary = run.summary()
    assert summary["hosts"]["unreachable"] == [ghost] and sorted(summary["hosts"]["ok"]) == sorted(lab.hosts)
    results = several_faults.results
    assert ghost in results["summary"]["bad_hosts"] or any(
        r["host"] == ghost and r["verdict"] == "error" for r in results["records"])


@pytest.mark.full
@pytest.mark.parametrize("name", ["port down", "flaky link", "slow rail plane", "slow NIC, transmit only",
                                  "port rate downgraded"])
def test_a_single_fault_is_named_exactly(lab4, tmp_path, name):
    fault = scenario(lab4, name)
    row = run_alone(lab4, fault, tmp_path)
    named = bench_accuracy.describe(row["named"])
    injected = bench_accuracy.describe(fault.expected)
    assert row["right"], "injected %s, named %s (log %s)" % (injected, named, row["log"])
    assert row["named_ok"] == len(row["named"]) and row["expected_ok"] == len(fault.expected)


def run_alone(lab4, fault, tmp_path):
    rows = bench_accuracy.run_scenario(lab4.lab, fault, 1, str(tmp_path / "work"), str(tmp_path))
    return rows[0]


def scenario(lab4, name):
    hosts = lab4.lab.hosts
    slow = bench_accuracy.slow_rate(lab4.lab)
    return {
        "port down": faults.PortDown(lab4.lab, hosts[1], rail=1),
        "flaky link": faults.FlakyLink(lab4.lab, hosts[2], hosts[3], slow, rail=0),
        "PCIe link degraded": faults.PcieDowngraded(lab4.lab, hosts[2], slow, rail=1),
        # every host's rail 1: the switch plane, named once, not as four NICs
        "slow rail plane": faults.SlowPlane(lab4.lab, slow, rail=1),
        # what one NIC sends, not what it receives: only its client sides measure slow
        "slow NIC, transmit only": faults.SlowTransmit(lab4.lab, hosts[2], slow, rail=0),
        # half its rate negotiated: its pairs measure what it reports, so only its like ports show it
        "port rate downgraded": faults.RateDowngraded(lab4.lab, hosts[2], rail=0),
    }[name]


@pytest.mark.full
def test_a_nic_on_a_degraded_pcie_link_is_named_with_the_link_first_in_its_evidence(lab4, tmp_path):
    # the NIC's link trained at Gen3 x4 in its Gen4 x16 slot (emulated sysfs) and its rail measures slow: the
    # culprit is that NIC alone, and what discovery read of its PCIe link is its first evidence
    fault = scenario(lab4, "PCIe link degraded")
    row = run_alone(lab4, fault, tmp_path)
    assert row["right"], "injected %s, named %s (log %s)" % (
        bench_accuracy.describe(fault.expected), bench_accuracy.describe(row["named"]), row["log"])
    results = bench_accuracy.newest_results(str(tmp_path / "work" / "report-PCIe_link_degraded-0"))
    nic = [c for c in results["summary"]["culprits"] if c["component"] == "nic"]
    assert len(nic) == 1 and nic[0]["host"] == fault.host, nic
    assert nic[0]["evidence"][0].startswith("discovery: pcie_link_degraded: mlx5_1: its PCIe link runs at 8 GT/s x4"), \
        nic[0]["evidence"]
