# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU -> nearest RDMA NIC from a sysfs snapshot, and how GPU memory is registered (gpu_affinity)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import gpu_affinity as ga

GPU_CLASS = "0x030200"


def _link(path):
    return {"link": "../../../devices/pci0000:00/" + "/".join(path)}


def _add_gpu(snap, path, node=0):
    pci = path[-1]
    snap["bus/pci/devices/%s" % pci] = _link(path)
    snap["bus/pci/devices/%s/vendor" % pci] = "0x10de"
    snap["bus/pci/devices/%s/class" % pci] = GPU_CLASS
    snap["bus/pci/devices/%s/numa_node" % pci] = str(node)


def _add_nic(snap, name, path, node=0):
    pci = path[-1]
    snap["bus/pci/devices/%s" % pci] = _link(path)
    snap["bus/pci/devices/%s/vendor" % pci] = "0x15b3"
    snap["bus/pci/devices/%s/class" % pci] = "0x020700"
    snap["class/infiniband/%s" % name] = {"dir": True}
    snap["class/infiniband/%s/device" % name] = {"link": "../../../%s" % pci}
    snap["class/infiniband/%s/device/numa_node" % name] = str(node)


def dgx_like():
    """8 GPUs and 8 NICs behind 4 PCIe switches, 2 GPUs + 2 NICs each; NICs numbered against the GPU order."""
    snap = {}
    nic_names = ["mlx5_%d" % n for n in (3, 2, 1, 0, 7, 6, 5, 4)]
    for sw in range(4):
        root = "0000:%02x:01.0" % (0x10 * sw)
        up = "0000:%02x:00.0" % (0x10 * sw + 1)
        bridge = [root, up]
        for slot in range(4):
            down = "0000:%02x:%02x.0" % (0x10 * sw + 2, slot)
            end = "0000:%02x:00.0" % (0x10 * sw + 3 + slot)
            if slot < 2:
                _add_gpu(snap, bridge + [down, end], node=sw // 2)
            else:
                _add_nic(snap, nic_names[2 * sw + slot - 2], bridge + [down, end], node=sw // 2)
    return snap


def test_dgx_like_each_gpu_gets_its_own_nic_on_its_switch():
    pairs = ga.affinity_from_snapshot(dgx_like())
    assert [p["gpu"] for p in pairs] == list(range(8))
    assert [p["device"] for p in pairs] == ["mlx5_3", "mlx5_2", "mlx5_1", "mlx5_0",
                                            "mlx5_7", "mlx5_6", "mlx5_5", "mlx5_4"]
    assert set(p["how"] for p in pairs) == {"pcie_switch"}
    assert set(p["bridges"] for p in pairs) == {2}
    # both GPUs of a switch share that switch's two NICs out, never one NIC for both
    assert len(set(p["device"] for p in pairs)) == 8


def test_a_nic_behind_a_deeper_shared_bridge_wins_over_its_switch_neighbour():
    snap = {}
    _add_gpu(snap, ["0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0"])
    _add_nic(snap, "mlx5_0", ["0000:00:01.0", "0000:01:00.0", "0000:02:01.0", "0000:04:00.0"])
    _add_nic(snap, "mlx5_1", ["0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:05:00.0"])
    (pair,) = ga.affinity_from_snapshot(snap)
    assert (pair["device"], pair["how"], pair["bridges"]) == ("mlx5_1", "pcie_switch", 3)


def test_without_a_shared_bridge_a_nic_on_the_same_numa_node_else_none():
    snap = {}
    _add_gpu(snap, ["0000:00:01.0", "0000:03:00.0"], node=0)
    _add_gpu(snap, ["0000:00:02.0", "0000:83:00.0"], node=1)
    _add_gpu(snap, ["0000:00:04.0", "0000:c3:00.0"], node=2)
    _add_nic(snap, "mlx5_0", ["0000:00:03.0", "0000:43:00.0"], node=1)
    _add_nic(snap, "mlx5_1", ["0000:00:05.0", "0000:44:00.0"], node=0)
    pairs = ga.affinity_from_snapshot(snap)
    assert [(p["gpu"], p["device"], p["how"]) for p in pairs] == [
        (0, "mlx5_1", "numa_node"), (1, "mlx5_0", "numa_node"), (2, None, "none")]


def test_gpus_and_nics_of_one_numa_node_pair_in_pci_order_like_the_lab():
    snap = {}
    for k in range(2):
        _add_nic(snap, "mlx5_%d" % k, ["0000:%02x:00.0" % (0x17 + k)])
        _add_gpu(snap, ["0000:%02x:00.0" % (0x80 + k)])
    pairs = ga.affinity_from_snapshot(snap)
    assert [(p["gpu"], p["device"]) for p in pairs] == [(0, "mlx5_0"), (1, "mlx5_1")]
    assert ga.nic_gpus(pairs)["mlx5_1"]["gpu"] == 1


def test_one_gpu_per_nic_is_the_lowest_numbered():
    pairs = [{"gpu": 0, "device": "mlx5_0"}, {"gpu": 1, "device": "mlx5_0"}, {"gpu": 2, "device": None}]
    assert ga.nic_gpus(pairs) == {"mlx5_0": {"gpu": 0, "device": "mlx5_0"}}


def test_shared_bridges_never_counts_the_functions_themselves():
    assert ga.shared_bridges(["a", "b", "x"], ["a", "b", "y"]) == 2
    assert ga.shared_bridges(["x"], ["y"]) == 0
    assert ga.shared_bridges(["a", "x"], ["b", "x"]) == 0


def test_affinity_from_facts_reads_devices_and_host_gpus():
    facts = {"devices": [{"name": "mlx5_0", "pci": "0000:04:00.0", "numa_node": 0,
                          "pci_path": ["0000:00:01.0", "0000:02:00.0", "0000:04:00.0"]}],
             "host": {"gpus": {"devices": [{"index": 0, "pci": "0000:03:00.0", "numa_node": 0, "vendor": "0x10de",
                                            "pci_path": ["0000:00:01.0", "0000:02:00.0", "0000:03:00.0"]}]}}}
    (pair,) = ga.affinity_from_facts(facts)
    assert (pair["gpu"], pair["device"], pair["how"], pair["bridges"]) == (0, "mlx5_0", "pcie_switch", 2)


def test_peermem_from_the_snapshot_or_proc_modules():
    assert ga.peermem_loaded({"module/nvidia_peermem/initstate": "live"})
    assert ga.peermem_loaded({"module/nv_peer_mem/initstate": "live"})
    assert not ga.peermem_loaded({"module/nvidia/initstate": "live"})
    assert ga.peermem_loaded({}, "nvidia_peermem 16384 0 - Live 0x0000000000000000\n")
    assert not ga.peermem_loaded({}, "nvidia 56000000 10 nvidia_modeset, Live 0x0\n")


def test_mode_peermem_then_dmabuf_then_a_cause_and_fix():
    assert ga.gpudirect_mode(True)["mode"] == "peermem"
    assert ga.gpudirect_mode(False, dmabuf=True, kernel_release="5.15.0-91-generic")["mode"] == "dmabuf"
    assert ga.gpudirect_mode(False, dmabuf=True)["mode"] == "dmabuf"
    old = ga.gpudirect_mode(False, dmabuf=True, kernel_release="5.4.0-150-generic")
    assert old["mode"] is None and "5.12" in old["cause"] and "5.4.0-150-generic" in old["cause"]
    off = ga.gpudirect_mode(False)
    assert off["mode"] is None and "nvidia_peermem" in off["cause"]
    assert "modprobe nvidia_peermem" in off["fix"] and "DMA-BUF" in off["fix"]


def test_kernel_version():
    assert ga.kernel_version("6.8.0-45-generic") == (6, 8)
    assert ga.kernel_version("junk") is None
