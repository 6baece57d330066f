# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A representative subset of benchmarks/bench_accuracy.py as lab tests.

Each test injects a fault into the shared 4-host, 2-rail lab, runs the real
one-click playbook (perftest EMULATOR, real iperf3 / Open MPI, over SSH) and
compares results.json's ``summary.culprits`` with what was injected: exactly
the injected components, nothing else. The bench runs every scenario at 4
and 8 hosts; these are the ones whose verdicts were wrong before the culprit
model (two faults at once, a port down that must be its NIC, a transient
slowdown that must be flaky).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import sys

import pytest

import faults

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "benchmarks"))

import bench_accuracy  # noqa: E402  pylint: disable=wrong-import-position


def run(lab4, fault, tmp_path):
    rows = bench_accuracy.run_scenario(lab4.lab, fault, 1, str(tmp_path / "work"), str(tmp_path))
    return rows[0]


def scenario(lab4, name):
    hosts = lab4.lab.hosts
    slow = bench_accuracy.slow_rate(lab4.lab)
    return {
        "two faults": faults.Both(lab4.lab, faults.SlowHost(lab4.lab, hosts[1], slow),
                                  faults.SlowLink(lab4.lab, hosts[2], hosts[3], slow, rail=0)),
        "port down": faults.PortDown(lab4.lab, hosts[1], rail=1),
        "flaky link": faults.FlakyLink(lab4.lab, hosts[2], hosts[3], slow, rail=0),
        "PCIe link degraded": faults.PcieDowngraded(lab4.lab, hosts[2], slow, rail=1),
        # every host's rail 1: the switch plane, named once, not as four NICs
        "slow rail plane": faults.SlowPlane(lab4.lab, slow, rail=1),
        # what one NIC sends, not what it receives: only its client sides measure slow
        "slow NIC, transmit only": faults.SlowTransmit(lab4.lab, hosts[2], slow, rail=0),
        # latency only, in half of its rail's pairs: no hardware expectation, and the median is its own
        "high latency NIC": faults.LateNic(lab4.lab, hosts[1], rail=0),
        # half its rate negotiated: its pairs measure what it reports, so only its like ports show it
        "port rate downgraded": faults.RateDowngraded(lab4.lab, hosts[2], rail=0),
        # the first of a host's two NICs gone: the second keeps its rail
        "NIC missing": faults.MissingNic(lab4.lab, hosts[2], rail=0),
    }[name]


@pytest.mark.parametrize("name", ["two faults", "port down", "flaky link", "slow rail plane",
                                  "slow NIC, transmit only", "high latency NIC", "port rate downgraded",
                                  "NIC missing"])
def test_the_culprits_are_exactly_the_injected_faults(lab4, tmp_path, name):
    fault = scenario(lab4, name)
    row = run(lab4, fault, tmp_path)
    named = bench_accuracy.describe(row["named"])
    injected = bench_accuracy.describe(fault.expected)
    assert row["right"], "injected %s, named %s (log %s)" % (injected, named, row["log"])
    assert row["named_ok"] == len(row["named"]) and row["expected_ok"] == len(fault.expected)


def test_a_nic_on_a_degraded_pcie_link_is_named_with_the_link_first_in_its_evidence(lab4, tmp_path):
    # the NIC's link trained at Gen3 x4 in its Gen4 x16 slot (emulated sysfs) and its rail measures slow: the
    # culprit is that NIC alone, and what discovery read of its PCIe link is its first evidence
    fault = scenario(lab4, "PCIe link degraded")
    row = run(lab4, fault, tmp_path)
    assert row["right"], "injected %s, named %s (log %s)" % (
        bench_accuracy.describe(fault.expected), bench_accuracy.describe(row["named"]), row["log"])
    results = bench_accuracy.newest_results(str(tmp_path / "work" / "report-PCIe_link_degraded-0"))
    nic = [c for c in results["summary"]["culprits"] if c["component"] == "nic"]
    assert len(nic) == 1 and nic[0]["host"] == fault.host, nic
    assert nic[0]["evidence"][0].startswith("discovery: pcie_link_degraded: mlx5_1: its PCIe link runs at 8 GT/s x4"), \
        nic[0]["evidence"]
