# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The accelerator probe: NVIDIA / Huawei PCI functions under the sysfs root, and how a GPU / NPU was found."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import gather
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import host_facts
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import rdma_discovery as rd
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import HostTransport
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.sysfs_snapshot import snapshot_from_fs

H100 = ("0x10de", "0x2330", "0x030200")            # 3D controller
NVIDIA_VGA = ("0x10de", "0x2684", "0x030000")
NVIDIA_AUDIO = ("0x10de", "0x22ba", "0x040300")    # the HDMI audio function of a display card
NVIDIA_ACCEL = ("0x10de", "0x2901", "0x120000")    # processing accelerator
ASCEND_910B = ("0x19e5", "0xd802", "0x120000")
HUAWEI_BMC_VGA = ("0x19e5", "0x1711", "0x030000")  # the BMC's display on Huawei servers
HUAWEI_NIC = ("0x19e5", "0x1822", "0x020000")
MELLANOX = ("0x15b3", "0x1021", "0x020000")


def _tree(root, functions):
    """An emulated /sys with the PCI functions {address: (vendor, device, class)} (as the kernel lays them out)."""
    bus = os.path.join(str(root), "bus", "pci", "devices")
    os.makedirs(bus)
    for address, (vendor, device, klass) in functions.items():
        function = os.path.join(str(root), "devices", "pci0000:00", address)
        os.makedirs(function)
        for name, value in (("vendor", vendor), ("device", device), ("class", klass), ("numa_node", "0")):
            with open(os.path.join(function, name), "w") as handle:
                handle.write(value + "\n")
        os.symlink(os.path.relpath(function, bus), os.path.join(bus, address))
    return str(root)


class _NoAccelerator(HostTransport):
    """This machine as the transport, with no accelerator driver or SMI tool whatever it has."""

    remote = False

    def which(self, name):
        return None if name in ("nvidia-smi", "npu-smi") else HostTransport.which(self, name)

    def read_file(self, path, default=None):
        if path.startswith(("/proc/driver/nvidia", "/usr/local/Ascend")):
            return default
        return HostTransport.read_file(self, path, default)


class _Pod(_NoAccelerator):
    remote = True


class _Files(object):
    """A transport with the given files and programs only."""

    remote = False

    def __init__(self, files=(), programs=()):
        self.files = set(files)
        self.programs = set(programs)

    def read_file(self, path, default=None):
        return "x" if path in self.files else default

    def which(self, name):
        return "/usr/bin/" + name if name in self.programs else None


def test_only_accelerator_classes_of_each_vendor_count(tmp_path):
    snap = snapshot_from_fs(_tree(tmp_path / "sys", {
        "0000:81:00.0": H100, "0000:82:00.0": NVIDIA_VGA, "0000:82:00.1": NVIDIA_AUDIO, "0000:83:00.0": NVIDIA_ACCEL,
        "0000:c1:00.0": ASCEND_910B, "0000:03:00.0": HUAWEI_BMC_VGA, "0000:04:00.0": HUAWEI_NIC,
        "0000:17:00.0": MELLANOX}))
    assert host_facts.gpu_pci_functions(snap) == ["0000:81:00.0", "0000:82:00.0", "0000:83:00.0"]
    assert host_facts.npu_pci_functions(snap) == ["0000:c1:00.0"]


def test_pci_functions_alone_find_a_gpu_under_the_sysfs_root(tmp_path):
    root = _tree(tmp_path / "sys", {"0000:81:00.0": H100, "0000:82:00.0": H100, "0000:17:00.0": MELLANOX})
    gpus = rd.collect(_NoAccelerator(), sysfs_root=root)["host"]["gpus"]
    assert gpus["present"] and gpus["pci_only"] and gpus["found_by"] == ["pci"]
    assert gpus["evidence"] == ["2 NVIDIA PCI GPU function(s)"]
    assert gpus["pci"] == ["0000:81:00.0", "0000:82:00.0"] and len(gpus["devices"]) == 2


def test_ascend_functions_find_an_npu_and_no_gpu(tmp_path):
    root = _tree(tmp_path / "sys", {"0000:c1:00.0": ASCEND_910B, "0000:03:00.0": HUAWEI_BMC_VGA})
    host = rd.collect(_NoAccelerator(), sysfs_root=root)["host"]
    assert host["npus"]["present"] and host["npus"]["found_by"] == ["pci"]
    assert host["npus"]["evidence"] == ["1 Huawei PCI NPU function(s)"]
    assert not host["gpus"]["present"] and host["gpus"]["found_by"] == [] and not host["gpus"]["pci_only"]


def test_a_host_without_accelerator_functions_has_none(tmp_path):
    root = _tree(tmp_path / "sys", {"0000:17:00.0": MELLANOX, "0000:03:00.0": HUAWEI_BMC_VGA})
    host = rd.collect(_NoAccelerator(), sysfs_root=root)["host"]
    for kind in ("gpus", "npus"):
        assert host[kind]["present"] is False and host[kind]["evidence"] == [] and host[kind]["pci"] == []


def test_in_a_pod_the_nodes_pci_functions_do_not_count(tmp_path):
    root = _tree(tmp_path / "sys", {"0000:81:00.0": H100, "0000:c1:00.0": ASCEND_910B})
    host = rd.collect(_Pod(), sysfs_root=root, tools=False, address_source="gids")["host"]
    assert not host["gpus"]["present"] and host["gpus"]["pci"] == ["0000:81:00.0"]
    assert host["gpus"]["not_counted"] == ["1 NVIDIA PCI GPU function(s) in the node's /sys (a pod sees them all)"]
    assert not host["npus"]["present"] and host["npus"]["found_by"] == []


def test_evidence_kinds_of_the_driver_and_the_smi_tools():
    transport = _Files(files=("/proc/driver/nvidia/version",), programs=("nvidia-smi", "npu-smi"))
    host = gather.probe_host(transport)
    assert host["gpus"] == {"evidence": ["/proc/driver/nvidia", "nvidia-smi"], "found_by": ["driver", "smi"]}
    assert host["npus"] == {"evidence": ["npu-smi"], "found_by": ["smi"]}
    assert host["pod"] is False


def test_driver_and_pci_together_are_not_pci_only(tmp_path):
    snap = snapshot_from_fs(_tree(tmp_path / "sys", {"0000:81:00.0": H100}))
    given = gather.probe_host(_Files(programs=("nvidia-smi",)))
    gpus = host_facts.complete_host(given, snap, ["nvidia"])["gpus"]
    assert gpus["found_by"] == ["driver", "smi", "pci"] and not gpus["pci_only"]
    assert gpus["evidence"] == ["nvidia-smi", "1 NVIDIA PCI GPU function(s)", "nvidia module loaded"]
