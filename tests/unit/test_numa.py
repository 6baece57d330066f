# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NUMA pinning prefixes, the GPU closest to a NIC, placement findings, and what discovery reads for them."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import shutil
import signal
import subprocess
import sys

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import numa
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.rdma_discovery import discover
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.sysfs_snapshot import (
    snapshot_from_dump, snapshot_from_fs, dump_argv)
from ansible_collections.clusterops.commcheck.plugins.modules import perftest as perftest_module
from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_numa_placement import \
    commcheck_numa_placement

LAB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lab")
sys.path.insert(0, LAB)
import sysfs_tree  # noqa: E402  pylint: disable=wrong-import-position
sys.path.remove(LAB)
from module_in_process import run_module as run_main  # noqa: E402  pylint: disable=wrong-import-position


@pytest.mark.parametrize("text,cpus", [
    ("0-3", [0, 1, 2, 3]), ("0-3,8-11", [0, 1, 2, 3, 8, 9, 10, 11]), ("5", [5]), ("0-7:2", [0, 2, 4, 6]),
    ("", []), (None, []), ("1,0", [0, 1])])
def test_parse_cpulist(text, cpus):
    assert numa.parse_cpulist(text) == cpus


@pytest.mark.parametrize("text", ["0-", "a", "3-1", "0;reboot", "0 1", "0-7:0", "0-99999"])
def test_parse_cpulist_refuses_junk(text):
    with pytest.raises(numa.NumaError):
        numa.parse_cpulist(text)


def test_format_cpulist_round_trips():
    assert numa.format_cpulist([0, 1, 2, 3, 8, 10, 11]) == "0-3,8,10-11"
    assert numa.parse_cpulist(numa.format_cpulist(range(0, 64, 3))) == list(range(0, 64, 3))


def test_pin_prefers_numactl_then_taskset():
    assert numa.pin_argv(1, "16-31", numactl="/usr/bin/numactl") == (
        ["/usr/bin/numactl", "--cpunodebind=1", "--membind=1"], "numactl on node 1")
    assert numa.pin_argv(1, "16-31", numactl=None, taskset="/usr/bin/taskset") == (
        ["/usr/bin/taskset", "-c", "16-31"], "taskset on node 1's CPUs 16-31")
    assert numa.pin_argv(1, "16-31", mode="taskset", taskset="taskset")[0] == ["taskset", "-c", "16-31"]
    prefix, reason = numa.pin_argv(1, None, numactl=None, taskset="taskset")
    assert prefix == [] and "neither numactl nor taskset" in reason
    assert numa.pin_argv("-1", "0-3") == ([], "the NIC's NUMA node is unknown")
    assert numa.pin_argv(0, "0-3", mode="none") == ([], "pinning disabled")


def test_pin_modes_that_cannot_be_honoured_fail_clearly():
    with pytest.raises(numa.NumaError, match="numactl is not installed"):
        numa.pin_argv(0, "0-3", mode="numactl", numactl=None)
    with pytest.raises(numa.NumaError, match="CPU list of node 0 is unknown"):
        numa.pin_argv(0, None, mode="taskset")
    with pytest.raises(numa.NumaError, match="NUMA node is unknown"):
        numa.pin_argv(-1, None, mode="numactl")
    with pytest.raises(numa.NumaError, match="must be one of"):
        numa.pin_argv(0, None, mode="hard")


GPUS = [
    {"index": 0, "pci": "0000:18:00.0", "numa_node": 0, "pci_path": ["0000:16:02.0", "0000:17:00.0", "0000:18:00.0"]},
    {"index": 1, "pci": "0000:3b:00.0", "numa_node": 0, "pci_path": ["0000:3a:02.0", "0000:3b:00.0"]},
    {"index": 2, "pci": "0000:86:00.0", "numa_node": 1, "pci_path": ["0000:85:02.0", "0000:86:00.0"]},
    {"index": 3, "pci": "0000:af:00.0", "numa_node": 1, "pci_path": ["0000:ae:02.0", "0000:af:00.0"]},
]


def test_closest_gpu_same_switch_then_node_then_bus():
    nic = {"pci": "0000:19:00.0", "numa_node": 0, "pci_path": ["0000:16:02.0", "0000:17:00.0", "0000:19:00.0"]}
    gpu, reason = numa.closest_gpu(nic, GPUS)
    assert gpu["index"] == 0 and "shares 2 PCIe bridge(s)" in reason and "same NUMA node 0" in reason
    nic = {"pci": "0000:b0:00.0", "numa_node": 1, "pci_path": ["0000:b0:00.0"]}
    assert numa.closest_gpu(nic, GPUS)[0]["index"] == 3
    nic = {"pci": "0000:90:00.0", "numa_node": 0}
    gpu, reason = numa.closest_gpu(nic, [g for g in GPUS if g["numa_node"] == 1])
    assert gpu["index"] == 2 and "no GPU on the NIC's NUMA node 0" in reason
    assert numa.closest_gpu(nic, []) == (None, "no GPU found")


def test_placement_findings_and_plan():
    findings = numa.placement_findings("mlx5_0", 0, GPUS[2], host="h1")
    assert [f["code"] for f in findings] == ["numa_mismatch"]
    assert "h1 mlx5_0 is on NUMA node 0 but GPU 2 (0000:86:00.0) is on node 1" in findings[0]["message"]
    assert numa.placement_findings("mlx5_0", 0, GPUS[0]) == []
    assert numa.placement_findings("mlx5_0", None, GPUS[2]) == []
    nic = {"device": "mlx5_0", "pci": "0000:b0:00.0", "numa_node": 1, "cpulist": "8-15", "pci_path": ["0000:b0:00.0"]}
    plan = numa.plan_placement(nic, GPUS, use_cuda=0, numactl=None)
    assert plan["prefix"] == ["taskset", "-c", "8-15"] and plan["use_cuda"] == 0
    assert [f["code"] for f in plan["findings"]] == ["numa_mismatch"]
    plan = numa.plan_placement(nic, GPUS, use_cuda=0, gpu_select="closest")
    assert plan["use_cuda"] == 3 and plan["findings"] == [] and plan["prefix"][0] == "numactl"
    plan = numa.plan_placement({"device": "mlx5_9", "numa_node": None}, [], use_cuda=None)
    assert plan["pinned"] is False and [f["code"] for f in plan["findings"]] == ["not_pinned"]
    with pytest.raises(numa.NumaError):
        numa.plan_placement(nic, GPUS, use_cuda=0, gpu_select="nearest")


def build(tmp_path, numa_nodes=None, gpus=0, gpu_numa=None):
    root = str(tmp_path / "sys")
    devices = [{"name": "mlx5_%d" % k, "numa_node": k, "pci": "0000:%02x:00.0" % (0x17 + k), "ports": [
        {"port": 1, "state": "ACTIVE", "rate_gbps": 400, "netdev": "ens%dnp0" % k, "ipv4": "10.0.%d.2" % k}]}
        for k in range(2)]
    sysfs_tree.build_sysfs(root, devices, cpus=4, numa_nodes=numa_nodes or {0: "0-1", 1: "2-3"}, gpus=gpus,
                           gpu_numa_nodes=gpu_numa)
    return root


def test_discovery_reads_numa_nodes_cpulists_and_gpus(tmp_path):
    root = build(tmp_path, gpus=2, gpu_numa={0: 1, 1: 0})
    facts = discover(snapshot_from_fs(root))
    assert facts["host"]["numa_nodes"] == {"0": "0-1", "1": "2-3"}
    dev1 = facts["devices"][1]
    assert dev1["numa_node"] == 1 and dev1["local_cpulist"] == "2-3" and dev1["pci_path"] == ["0000:18:00.0"]
    gpus = facts["host"]["gpus"]["devices"]
    assert [(g["index"], g["pci"], g["numa_node"]) for g in gpus] == [(0, "0000:80:00.0", 1), (1, "0000:81:00.0", 0)]
    out = commcheck_numa_placement(facts, use_cuda=0, gpu_select="closest", host="h1")
    assert [(p["device"], p["numa_node"], p["prefix"][1:], p["use_cuda"]) for p in out] == [
        ("mlx5_0", 0, ["--cpunodebind=0", "--membind=0"], 1), ("mlx5_1", 1, ["--cpunodebind=1", "--membind=1"], 0)]
    out = commcheck_numa_placement(facts, devices=["mlx5_0"], use_cuda=0)
    assert [f["code"] for f in out[0]["findings"]] == ["numa_mismatch"]
    with pytest.raises(AnsibleFilterError, match="not in the facts"):
        commcheck_numa_placement(facts, devices=["mlx5_7"])


@pytest.mark.skipif(not os.path.isdir("/sys/devices/system/node"), reason="no NUMA nodes in this machine's /sys")
def test_the_dump_script_reads_node_cpulists_of_this_machine():
    """Node cpulists are binary attributes the shell's read cannot read; the dump uses cat for them."""
    proc = subprocess.run(dump_argv("/sys"), stdout=subprocess.PIPE, universal_newlines=True, check=False, timeout=60)
    snap, errors = snapshot_from_dump(proc.stdout)
    assert errors == []
    nodes = numa.node_cpulists(snap)
    assert nodes and nodes == numa.node_cpulists(snapshot_from_fs("/sys"))
    assert all(numa.parse_cpulist(text) for text in nodes.values())


@pytest.mark.skipif(not shutil.which("numactl") or not os.path.isdir("/sys/devices/system/node/node0"),
                    reason="numactl or NUMA node 0 is missing here")
def test_numactl_accepts_the_prefix():
    prefix, _reason = numa.pin_argv(0, None, numactl=shutil.which("numactl"))
    proc = subprocess.run(prefix + ["true"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False, timeout=30)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.skipif(not shutil.which("taskset"), reason="taskset is missing here")
def test_taskset_accepts_the_prefix():
    cpus = numa.format_cpulist(sorted(os.sched_getaffinity(0)))
    prefix, _reason = numa.pin_argv(0, cpus, numactl=None, taskset=shutil.which("taskset"))
    proc = subprocess.run(prefix + ["true"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False, timeout=30)
    assert proc.returncode == 0, proc.stderr


# --- the perftest module pins its processes ----------------------------------------------------------

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTIONS = os.path.join(REPO, ".build", "collections")
PERFTEST = os.path.join(REPO, "plugins", "modules", "perftest.py")
# A TOOL DOUBLE of ib_write_bw: records the CPUs it may run on, prints nothing perftest would.
AFFINITY_SPY = "import json, os, sys\nopen(os.environ['SPY_LOG'], 'a').write(json.dumps(" \
               "{'argv': sys.argv[1:], 'cpus': sorted(os.sched_getaffinity(0))}) + '\\n')\n"


@pytest.fixture
def plan(monkeypatch, capsys):
    """plan(args): the perftest module's result in check mode, main() run in this process (nothing starts; a
    process of its own would only add a Python start and Ansible's imports)."""
    saved = dict((sig, signal.getsignal(sig)) for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT))
    yield lambda args: run_main(perftest_module, monkeypatch, capsys, args, check_mode=True)
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def run_perftest(args, tmp_path, path_first=None):
    import json  # pylint: disable=import-outside-toplevel
    import time  # pylint: disable=import-outside-toplevel
    args = dict(args)
    argfile = tmp_path / ("args-%d.json" % time.monotonic_ns())
    argfile.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    env = dict(os.environ, PYTHONPATH=COLLECTIONS, SPY_LOG=str(tmp_path / "spy.log"))
    if path_first:
        env["PATH"] = path_first + os.pathsep + env["PATH"]
    proc = subprocess.run([sys.executable, PERFTEST, str(argfile)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=120, check=False)
    return json.loads(proc.stdout[proc.stdout.index("{"):])


FACTS = {"devices": [{"name": "mlx5_0", "numa_node": 1, "local_cpulist": "0", "pci": "0000:b0:00.0",
                      "ports": [{"port": 1, "link_layer": "Ethernet", "gid_index": 3}]}],
         "host": {"numa_nodes": {"0": "0-1", "1": "0"}, "gpus": {"devices": [
             {"index": 0, "pci": "0000:18:00.0", "numa_node": 0, "pci_path": ["0000:18:00.0"]},
             {"index": 1, "pci": "0000:af:00.0", "numa_node": 1, "pci_path": ["0000:af:00.0"]}]}}}
SIDE = {"role": "server", "device": "mlx5_0", "duration": 2, "timeout": 20, "rdma_facts": FACTS}


@pytest.mark.skipif(not shutil.which("numactl"), reason="numactl is not installed here")
def test_perftest_module_pins_with_numactl_in_check_mode(plan):
    res = plan(SIDE)
    side = res["sides"][0]
    assert side["placement"]["prefix"] == [shutil.which("numactl"), "--cpunodebind=1", "--membind=1"]
    assert side["exec_cmd"][:3] == side["placement"]["prefix"] and side["exec_cmd"][3:] == side["cmd"]
    assert side["cmd"][0] == "ib_write_bw" and side["placement"]["numa_node"] == 1


def test_perftest_module_pin_modes(plan, tmp_path):
    res = plan(dict(SIDE, numa_pin="taskset"))
    assert res["sides"][0]["placement"]["prefix"][1:] == ["-c", "0"]
    res = plan(dict(SIDE, numa_pin="none"))
    assert res["sides"][0]["placement"]["prefix"] == [] and res["sides"][0]["exec_cmd"] == res["sides"][0]["cmd"]
    unknown = {"devices": [{"name": "mlx5_0", "numa_node": -1, "ports": []}]}
    res = plan(dict(SIDE, rdma_facts=unknown, numa_pin="numactl", sysfs_root=str(tmp_path)))
    assert res.get("failed") and "NUMA node is unknown" in res["msg"]
    res = plan(dict(SIDE, rdma_facts=unknown, sysfs_root=str(tmp_path)))
    assert res["sides"][0]["placement"]["prefix"] == []
    assert res["sides"][0]["placement"]["reason"] == "the NIC's NUMA node is unknown"
    assert [f["code"] for f in res["sides"][0]["findings"]] == ["not_pinned"]


def test_side_without_a_device():
    plan = numa.side_placement(None, mode="none")
    assert plan["prefix"] == [] and "no device given" in plan["reason"]
    assert numa.side_placement(None)["prefix"] == []
    with pytest.raises(numa.NumaError, match="needs the side's device"):
        numa.side_placement(None, mode="numactl")


def test_perftest_module_reads_numa_from_sysfs_without_facts(plan, tmp_path):
    root = build(tmp_path)
    res = plan({"role": "server", "device": "mlx5_1", "sysfs_root": root, "numa_pin": "taskset"})
    placement = res["sides"][0]["placement"]
    assert placement["numa_node"] == 1 and placement["cpulist"] == "2-3" and placement["prefix"][1:] == ["-c", "2-3"]


def test_perftest_module_closest_gpu_and_mismatch(plan):
    res = plan(dict(SIDE, use_cuda=0, numa_pin="none"))
    side = res["sides"][0]
    assert "--use_cuda=0" in side["cmd"] and [f["code"] for f in side["findings"]] == ["numa_mismatch"]
    res = plan(dict(SIDE, use_cuda=0, gpu_select="closest", numa_pin="none"))
    side = res["sides"][0]
    assert "--use_cuda=1" in side["cmd"] and side["findings"] == []
    assert side["placement"]["gpu"] == {"index": 1, "pci": "0000:af:00.0", "numa_node": 1}


@pytest.mark.skipif(not shutil.which("taskset") or not hasattr(os, "sched_getaffinity"),
                    reason="taskset / sched_getaffinity missing here")
def test_a_pinned_side_really_runs_on_the_nodes_cpus(tmp_path):
    import json  # pylint: disable=import-outside-toplevel
    bindir = tmp_path / "bin"
    bindir.mkdir()
    tool = bindir / "ib_write_bw"
    tool.write_text("#!%s\n%s" % (sys.executable, AFFINITY_SPY))
    tool.chmod(0o755)
    cpu = sorted(os.sched_getaffinity(0))[0]
    facts = {"devices": [dict(FACTS["devices"][0], local_cpulist=str(cpu))]}
    res = run_perftest(dict(SIDE, rdma_facts=facts, numa_pin="taskset", fail_on_error=False), tmp_path,
                       path_first=str(bindir))
    (ran,) = [json.loads(line) for line in (tmp_path / "spy.log").read_text().splitlines()]
    assert ran["cpus"] == [cpu] and ran["argv"][:2] == ["-d", "mlx5_0"]
    assert res["sides"][0]["exec_cmd"][-len(res["sides"][0]["cmd"]):] == res["sides"][0]["cmd"]


def test_placement_finding_records_of_the_sides():
    mismatch = numa.placement_findings("mlx5_0", 0, GPUS[2], host="h1")
    sides = [{"host": "h1", "findings": mismatch}, {"host": "h1", "findings": mismatch},
             {"host": "h2", "findings": numa.placement_findings("mlx5_0", None, None, pinned=False, reason="x")},
             "junk"]
    recs = numa.finding_records([side for side in sides if isinstance(side, dict)])
    assert [(r["host"], r["params"]["finding"], r["verdict"]) for r in recs] == [("h1", "numa_mismatch", "warn")]


def test_pair_records_show_the_pinning():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import pair_analysis as pa
    pinned = {"prefix": ["/usr/bin/numactl", "--cpunodebind=1", "--membind=1"], "reason": "numactl on node 1"}
    sides = [{"host": "h1", "role": "server", "peer": "h2", "rail": 0, "round": 0, "step": 0, "cmd": ["ib_write_bw"],
              "verdict": "pass", "placement": pinned},
             {"host": "h2", "role": "client", "peer": "h1", "rail": 0, "round": 0, "step": 0, "cmd": ["ib_write_bw"],
              "verdict": "pass", "metrics": {"bw_gbps": 90.0},
              "placement": {"prefix": [], "reason": "the NIC's NUMA node is unknown"}}]
    (rec,) = pa.pair_records(sides)
    assert "server h1: pinned with /usr/bin/numactl --cpunodebind=1 --membind=1 (numactl on node 1)" in rec["evidence"]
    assert "client h2: not pinned (the NIC's NUMA node is unknown)" in rec["evidence"]
