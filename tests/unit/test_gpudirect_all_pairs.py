# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""commcheck_rdma_gpudirect_pairs (issue 37 §1): every GPU against its nearest NIC, in GPU rounds where no NIC
and no GPU is used twice at once; each GPU's bus path to its NIC from the PCI paths."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from collections import Counter

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import gpu_affinity as ga
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import gpu_pairs as gp
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import gpudirect as gd
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import role_options


def facts(nics, gpus, gpu_numa=None):
    """NICs and GPUs on NUMA node 0 (GPU g on ``gpu_numa[g]`` where given), no shared bridge."""
    return {
        "devices": [{"name": "mlx5_%d" % k, "pci": "0000:%02x:00.0" % (0x17 + k), "numa_node": 0,
                     "pci_path": ["0000:%02x:00.0" % (0x17 + k)]} for k in range(nics)],
        "host": {"gpudirect_module": "nvidia_peermem",
                 "gpus": {"devices": [{"index": g, "pci": "0000:%02x:00.0" % (0x80 + g),
                                       "numa_node": (gpu_numa or {}).get(g, 0), "vendor": "0x10de",
                                       "pci_path": ["0000:%02x:00.0" % (0x80 + g)]} for g in range(gpus)]}},
    }


def rails(count):
    return [{"rail": k, "device": "mlx5_%d" % k, "port": 1, "gid_index": 3, "rate_gbps": 100,
             "address": "10.0.%d.1" % k} for k in range(count)]


def assert_rounds_valid(rounds, assignments):
    """The planner's invariant: no NIC and no GPU twice in a round; every assignment in exactly one round."""
    for rnd in rounds:
        assert max(Counter(a["device"] for a in rnd).values()) == 1, rnd
        assert max(Counter(a["gpu"] for a in rnd).values()) == 1, rnd
    placed = [(a["gpu"], a["device"]) for rnd in rounds for a in rnd]
    assert sorted(placed) == sorted((a["gpu"], a["device"]) for a in assignments)


@pytest.mark.parametrize("nics,gpus,expected_rounds", [(4, 8, 2), (8, 8, 1), (4, 6, 2), (3, 8, 3), (2, 1, 1)])
def test_all_tests_every_gpu_in_rounds_without_a_nic_or_gpu_twice(nics, gpus, expected_rounds):
    state = gd.host_gpudirect(facts(nics, gpus), rails(nics), pairs="all")
    assert sorted(a["gpu"] for a in state["rails"]) == list(range(gpus))
    rounds = gp.slot_rounds(state["rails"])
    assert len(rounds) == expected_rounds
    assert_rounds_valid(rounds, state["rails"])
    # the same rounds when the slots are left to the planner
    assert [[a["gpu"] for a in rnd] for rnd in gp.slot_rounds([dict(a, slot=None) for a in state["rails"]])] == \
        [[a["gpu"] for a in rnd] for rnd in rounds]


def test_uneven_gpus_per_nic_make_a_shorter_last_round():
    # 6 GPUs over 4 NICs: NICs 0 and 1 meet two GPUs each, NICs 2 and 3 one
    rounds = gp.slot_rounds(gd.host_gpudirect(facts(4, 6), rails(4), pairs="all")["rails"])
    assert [sorted((a["device"], a["gpu"]) for a in rnd) for rnd in rounds] == [
        [("mlx5_0", 0), ("mlx5_1", 1), ("mlx5_2", 2), ("mlx5_3", 3)], [("mlx5_0", 4), ("mlx5_1", 5)]]


def test_nearest_keeps_the_lowest_gpu_of_each_nic():
    state = gd.host_gpudirect(facts(4, 8), rails(4))
    assert [(a["device"], a["gpu"], a["slot"]) for a in state["rails"]] == [
        ("mlx5_0", 0, 0), ("mlx5_1", 1, 0), ("mlx5_2", 2, 0), ("mlx5_3", 3, 0)]


def test_a_gpu_of_an_untested_nic_is_not_planned():
    state = gd.host_gpudirect(facts(4, 8), rails(2), pairs="all")
    assert sorted((a["device"], a["gpu"]) for a in state["rails"]) == [
        ("mlx5_0", 0), ("mlx5_0", 4), ("mlx5_1", 1), ("mlx5_1", 5)]


def test_gpu_rounds_of_the_fleet_run_each_host_round_once_per_gpu_round():
    states = dict((h, gd.host_gpudirect(facts(2, 4), rails(2), pairs="all")) for h in ("a", "b"))
    host_rails = {"a": rails(2), "b": rails(2)}
    plans = gd.gpu_round_plans([[("a", "b")]], host_rails, states, [["write", "bw"]])
    assert len(plans) == 2
    by_round = [sorted((j["rail"], j["server_gpu"], j["client_gpu"], j["gpu_slot"]) for j in p["jobs"]) for p in plans]
    assert by_round == [[(0, 0, 0, 0), (1, 1, 1, 0)], [(0, 2, 2, 1), (1, 3, 3, 1)]]
    assert [p["jobs"][0]["round"] for p in plans] == [0, 1]
    for plan in plans:
        for host, sides in plan["sides"].items():
            assert len(set(s["use_cuda"] for s in sides)) == len(sides)
            assert len(set(s["device"] for s in sides)) == len(sides)
    job = plans[1]["jobs"][0]
    assert (job["server_gpu_pci"], job["client_gpu_path"]) == ("0000:82:00.0", "same_numa")
    records = gd.mark_gpu_records([{"kind": "rdma_bw", "host": "a", "peer": "b",
                                    "params": {"round": 1, "step": job["step"], "rail": job["rail"], "server": "a",
                                               "client": "b"}}], [job])
    params = records[0]["params"]
    assert (params["gpu"], params["gpu_pci"], params["gpu_path"], params["gpu_slot"]) == (
        job["server_gpu"], job["server_gpu_pci"], "same_numa", 1)


def test_a_host_with_fewer_gpus_on_a_nic_partners_every_gpu_of_its_peer():
    states = {"a": gd.host_gpudirect(facts(1, 2), rails(1), pairs="all"),
              "b": gd.host_gpudirect(facts(1, 1), rails(1), pairs="all")}
    plans = gd.gpu_round_plans([[("a", "b")]], {"a": rails(1), "b": rails(1)}, states, [["write", "bw"]])
    assert [(p["jobs"][0]["server_gpu"], p["jobs"][0]["client_gpu"]) for p in plans] == [(0, 0), (1, 0)]


@pytest.mark.parametrize("value,expected", [(None, "nearest"), ("ALL", "all"), ("nearest", "nearest")])
def test_normalize_pairs(value, expected):
    assert gp.normalize_pairs(value) == expected


@pytest.mark.parametrize("value", ["every", 1, True])
def test_normalize_pairs_refuses_anything_else(value):
    with pytest.raises(gp.GpuPairsError, match="nearest or all"):
        gp.normalize_pairs(value)


def test_the_option_is_checked_before_anything_runs():
    assert "commcheck_rdma_gpudirect_pairs" in role_options.RULES


# --- bus paths from sysfs snapshots ------------------------------------------------------------------------

def _link(path):
    return {"link": "../../../devices/pci0000:00/" + "/".join(path)}


def _add(snap, path, node, vendor, klass, name=None):
    pci = path[-1]
    snap["bus/pci/devices/%s" % pci] = _link(path)
    snap["bus/pci/devices/%s/vendor" % pci] = vendor
    snap["bus/pci/devices/%s/class" % pci] = klass
    snap["bus/pci/devices/%s/numa_node" % pci] = str(node)
    if name:
        snap["class/infiniband/%s" % name] = {"dir": True}
        snap["class/infiniband/%s/device" % name] = {"link": "../../../%s" % pci}
        snap["class/infiniband/%s/device/numa_node" % name] = str(node)


def mixed_host():
    """One NIC behind a switch on node 0; GPU 0 on its switch, GPU 1 on its root port only, GPU 2 on another
    root port of node 0, GPU 3 on node 1."""
    snap = {}
    root, up = "0000:10:01.0", "0000:11:00.0"
    _add(snap, [root, up, "0000:12:00.0", "0000:13:00.0"], 0, "0x15b3", "0x020700", "mlx5_0")
    _add(snap, [root, up, "0000:12:01.0", "0000:14:00.0"], 0, "0x10de", "0x030200")
    _add(snap, [root, "0000:15:00.0"], 0, "0x10de", "0x030200")
    _add(snap, ["0000:20:01.0", "0000:21:00.0"], 0, "0x10de", "0x030200")
    _add(snap, ["0000:80:01.0", "0000:81:00.0"], 1, "0x10de", "0x030200")
    return snap


def test_each_gpu_path_from_the_pci_paths():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.numa import (
        gpus_from_snapshot, nic_placement)
    snap = mixed_host()
    nic = nic_placement(snap, "mlx5_0")
    paths = [ga.gpu_path(g["pci_path"], nic["pci_path"], g["numa_node"], nic["numa_node"])
             for g in gpus_from_snapshot(snap)]
    assert paths == ["same_switch", "same_root_port", "same_numa", "cross_socket"]


def test_the_pair_of_a_gpu_carries_its_path():
    pairs = ga.affinity_from_snapshot(mixed_host())
    by_gpu = dict((p["gpu"], p) for p in pairs)
    assert (by_gpu[0]["device"], by_gpu[0]["gpu_path"]) == ("mlx5_0", "same_switch")
    # GPU 3 is on another node: no NIC is near, so no path to one
    assert (by_gpu[3]["device"], by_gpu[3]["gpu_path"]) == (None, None)


@pytest.mark.parametrize("gpu_node,nic_node,expected", [
    (0, 0, "same_numa"), (1, 0, "cross_socket"), (None, None, "cross_socket")])
def test_without_a_shared_bridge_the_numa_nodes_decide(gpu_node, nic_node, expected):
    assert ga.gpu_path(["0000:20:01.0", "0000:21:00.0"], ["0000:30:01.0", "0000:31:00.0"], gpu_node,
                       nic_node) == expected
