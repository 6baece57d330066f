# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A NIC whose PCIe link trained below what the card supports, or whose DMA goes through IOMMU translation:
read from sysfs, judged, and named as the likeliest explanation of a slow NIC (discovery/ports.py, findings.py,
host_facts.py, verdicts/culprits.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import sys

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import findings as fnd
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.host_facts import virtual_machine
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.rdma_discovery import discover
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.sysfs_snapshot import (
    DUMP_SCRIPT,
    snapshot_from_fs,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.sysfs_values import (
    parse_pcie_speed,
    parse_pcie_width,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits as cul

LAB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lab")
if LAB not in sys.path:
    sys.path.insert(0, LAB)

import sysfs_tree  # noqa: E402  pylint: disable=wrong-import-position


@pytest.mark.parametrize("text, gts", [
    ("16.0 GT/s PCIe", 16.0),       # kernels since 5.x (pci_speed_string)
    ("8 GT/s", 8.0),                # older kernels
    ("2.5 GT/s PCIe", 2.5),
    ("64.0 GT/s PCIe", 64.0),
    ("Unknown", None),              # no link, or a VF
    ("Unknown speed", None),
    ("0 GT/s", None),
    ("", None),
    (None, None),
])
def test_pcie_speed_in_the_kernels_forms(text, gts):
    assert parse_pcie_speed(text) == gts


@pytest.mark.parametrize("text, width", [("16", 16), ("8\n", 8), ("x4", 4), ("0", None), ("", None),
                                         ("sixteen", None), (None, None)])
def test_pcie_width_in_the_kernels_forms(text, width):
    assert parse_pcie_width(text) == width


def _discover(tmp_path, pcie, rate_gbps=200, dmi=None, iommu=None, code="pcie_link_degraded"):
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [{"name": "mlx5_0", "numa_node": 0, "pcie": pcie, "iommu": iommu, "ports": [
        {"port": 1, "state": "ACTIVE", "rate_gbps": rate_gbps, "netdev": "ens1f0np0", "ipv4": "10.0.0.1"}]}],
        cpus=["performance"])
    for name, text in (dmi or {}).items():
        path = os.path.join(root, "class", "dmi", "id", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write(text + "\n")
    facts = discover(snapshot_from_fs(root))
    return facts, [f for f in facts["findings"] if f["code"] == code]


def test_a_healthy_link_reads_and_says_nothing(tmp_path):
    facts, found = _discover(tmp_path, None)
    assert facts["devices"][0]["pcie"] == {"speed_gts": 16.0, "width": 16, "max_speed_gts": 16.0, "max_width": 16}
    assert found == []
    assert facts["host"]["virtual"] is None


def test_a_link_that_leaves_less_than_the_port_rate_is_an_error_with_the_numbers(tmp_path):
    _facts, found = _discover(tmp_path, {"current_link_speed": "8.0 GT/s PCIe", "current_link_width": 8})
    assert [f["severity"] for f in found] == ["error"]
    assert found[0]["device"] == "mlx5_0" and found[0]["port"] is None
    assert "8 GT/s x8, below the 16 GT/s x16" in found[0]["message"]
    assert "63 Gb/s left for a 200 Gb/s port" in found[0]["message"]     # 8 x 8 x 128/130
    assert "lspci -vv -s 0000:17:00.0" in found[0]["fix"]


def test_a_degraded_link_that_still_carries_the_port_is_a_warning(tmp_path):
    # Gen4 x8 (126 Gb/s) under a 100 Gb/s port: degraded, not limiting
    _facts, found = _discover(tmp_path, {"current_link_width": 8}, rate_gbps=100)
    assert [f["severity"] for f in found] == ["warning"]
    assert "16 GT/s x8" in found[0]["message"] and "for a" not in found[0]["message"]


@pytest.mark.parametrize("pcie", [
    {"current_link_speed": "Unknown", "current_link_width": 0},            # a VF, a link the kernel cannot read
    {"current_link_width": 63, "current_link_speed": "Unknown"},            # a wedged endpoint reads all ones
    {"current_link_speed": None, "current_link_width": None, "max_link_speed": None, "max_link_width": None},
    {"max_link_speed": None},                                                # nothing to compare with
])
def test_unknown_links_are_not_judged(tmp_path, pcie):
    _facts, found = _discover(tmp_path, pcie)
    assert found == []


def test_in_a_virtual_machine_the_emulated_slot_is_only_an_info(tmp_path):
    facts, found = _discover(tmp_path, {"current_link_speed": "2.5 GT/s PCIe", "current_link_width": 1},
                             dmi={"sys_vendor": "QEMU", "product_name": "Standard PC (Q35 + ICH9, 2009)"})
    assert facts["host"]["virtual"] == "QEMU Standard PC (Q35 + ICH9, 2009)"
    assert [f["severity"] for f in found] == ["info"]
    assert "virtual machine" in found[0]["message"]


@pytest.mark.parametrize("vendor, product, virtual", [
    ("Microsoft Corporation", "Virtual Machine", True),
    ("Google", "Google Compute Engine", True),
    ("Amazon EC2", "p5.48xlarge", True),
    ("Amazon EC2", "p4d.metal", False),
    ("VMware, Inc.", "VMware7,1", True),
    ("Supermicro", "SYS-821GE-TNHR", False),
    ("Dell Inc.", "PowerEdge XE9680", False),
    ("Oracle Corporation", "BM.GPU.H100.8", False),
])
def test_virtual_machines_by_their_dmi_names(vendor, product, virtual):
    snap = {"class/dmi/id/sys_vendor": vendor, "class/dmi/id/product_name": product}
    assert bool(virtual_machine(snap)) is virtual
    assert virtual_machine({"hypervisor/type": "xen"}) == "xen"
    assert virtual_machine({}) is None


@pytest.mark.parametrize("kind, severity", [("DMA-FQ", "warning"), ("DMA", "warning"), ("identity", None),
                                            (None, None)])
def test_dma_through_iommu_translation_is_a_warning_and_passthrough_is_fine(tmp_path, kind, severity):
    facts, found = _discover(tmp_path, None, iommu=kind, code="iommu_translated")
    assert facts["devices"][0]["iommu"] == kind
    assert [f["severity"] for f in found] == ([severity] if severity else [])
    if severity:
        assert found[0]["device"] == "mlx5_0" and "IOMMU group type %s" % kind in found[0]["message"]
        assert "iommu=pt" in found[0]["fix"]


def test_iommu_translation_in_a_virtual_machine_is_not_judged(tmp_path):
    _facts, found = _discover(tmp_path, None, iommu="DMA", code="iommu_translated",
                              dmi={"sys_vendor": "QEMU", "product_name": "Standard PC (Q35 + ICH9, 2009)"})
    assert found == []


def test_the_remote_dump_reads_the_link_the_iommu_and_the_platform():
    for name in ("current_link_speed", "current_link_width", "max_link_speed", "max_link_width", "iommu_group/type",
                 "class/dmi/id/sys_vendor", "class/dmi/id/product_name"):
        assert name in DUMP_SCRIPT


@pytest.mark.parametrize("speed, width, gbps", [(2.5, 1, 2.0), (5.0, 8, 32.0), (8.0, 16, 126.0), (16.0, 16, 252.1),
                                                (32.0, 16, 504.1), (64.0, 16, 968.0)])
def test_usable_pcie_bandwidth_by_generation(speed, width, gbps):
    assert fnd.pcie_gbps(speed, width) == pytest.approx(gbps, abs=0.1)


# --- the culprit names the explanation ---------------------------------------------------------------

def _warning(host, code, device, cause):
    return {"kind": "finding", "host": host, "peer": None, "verdict": "warn", "cause": cause, "fix": "f",
            "params": {"check": "discover", "code": code, "severity": "warning", "device": device, "port": None},
            "metrics": {}, "evidence": []}


def _slow_nic(host, rail, device):
    return {"kind": "finding", "host": host, "peer": None, "verdict": "fail", "cause": "slow on rail %d" % rail,
            "fix": "check the NIC", "evidence": ["h1-%s rail %d: 0.1 of expected" % (host, rail)],
            "params": {"check": "rdma_perf", "family": "rdma", "component": "rail", "rail": rail,
                       "devices": [device], "confidence": "high"}, "metrics": {}}


def test_a_slow_nic_carries_the_discovery_warnings_of_its_device_first():
    records = [
        _warning("h3", "pcie_link_degraded", "mlx5_1", "mlx5_1: its PCIe link runs at 8 GT/s x4"),
        _warning("h3", "rate_below_expected", "mlx5_0", "mlx5_0 port 1 runs at 100 Gb/s"),     # another NIC
        _warning("h2", "pcie_link_degraded", "mlx5_1", "mlx5_1: its PCIe link runs at 8 GT/s x4"),  # another host
        _slow_nic("h3", 1, "mlx5_1"),
    ]
    named = cul.culprits(records)
    assert [(c["component"], c["host"], c["rail"]) for c in named] == [("nic", "h3", 1)]
    assert named[0]["evidence"][0] == "discovery: pcie_link_degraded: mlx5_1: its PCIe link runs at 8 GT/s x4"
    assert not any("mlx5_0" in line or "h2" in line for line in named[0]["evidence"])
    assert named[0]["evidence"][1].startswith("h1-h3 rail 1")


def test_a_slow_host_carries_the_warnings_of_its_devices_and_a_flaky_link_none():
    records = [
        _warning("h2", "pcie_link_degraded", "mlx5_0", "pcie"),
        _warning("h2", "cpu_governor_not_performance", None, "governor"),
        {"kind": "finding", "host": "h2", "peer": None, "verdict": "fail", "cause": "slow everywhere", "fix": "f",
         "evidence": [], "metrics": {}, "params": {"check": "rdma_perf", "family": "rdma", "component": "host"}},
        {"kind": "finding", "host": "h3", "peer": "h4", "verdict": "flaky", "cause": "once", "fix": "f",
         "evidence": [], "metrics": {}, "params": {"check": "rdma_perf", "family": "rdma", "component": "flaky",
                                                   "rail": 0}},
        _warning("h3", "cpu_governor_not_performance", None, "governor"),
    ]
    named = dict((c["host"], c) for c in cul.culprits(records))
    # the governor warning read the host before the test modules switched it: no explanation
    assert named["h2"]["evidence"] == ["discovery: pcie_link_degraded: pcie"]
    assert named["h3"]["verdict"] == "flaky" and named["h3"]["evidence"] == []


def test_records_that_are_not_mappings_are_passed_over():
    assert cul.culprits([None, "x", 3, _warning("h1", "pcie_link_degraded", "mlx5_0", "pcie")]) == []
