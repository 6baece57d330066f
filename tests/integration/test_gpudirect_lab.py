# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPUDirect RDMA in the lab (issue 16): each host's emulated GPU k sits beside NIC k, nvidia_peermem is
loaded, so the RDMA check reruns its bandwidth tests from GPU memory (perftest --use_cuda) per rail and
judges them against host memory. The lab's inventory turns GPUDirect off for the other tests; these ask
for it. Takes about 2 minutes each; the slow GPU path (``faults.SlowGpuPath``, ``commcheck_rdma_gpudirect_pairs:
all``) about 3.5.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

import faults
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits as cp
from lab_checks import assert_nothing_left, run_with_history

# The full tier's: GPUDirect runs in the fast tier's run in pods (test_k8s_lab.py).
pytestmark = [pytest.mark.lab, pytest.mark.slow, pytest.mark.full]

PLAYBOOK = "playbooks/rdma.yml"


@pytest.fixture
def lab(lab4):
    lab4.heal()
    yield lab4
    lab4.heal()


def test_gpu_memory_bandwidth_per_rail_next_to_host_memory(lab, tmp_path):
    proc, lines, _elapsed = run_with_history(lab, PLAYBOOK, tmp_path, {
        "commcheck_rdma_gpudirect": "auto", "commcheck_rdma_ops": ["write"], "commcheck_rdma_metrics": ["bw"],
        "commcheck_rdma_duration": 2, "commcheck_min_fraction": 0.5})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    records = [r for r in lines if r.get("kind") == "rdma_bw" and not (r.get("params") or {}).get("retest")]
    host = [r for r in records if (r["params"].get("memory") or "host") == "host"]
    gpu = [r for r in records if r["params"].get("memory") == "cuda"]
    # 6 pairs x 2 rails from host memory, and again from GPU memory with each rail's own GPU
    assert len(host) == 12 and len(gpu) == 12, [(r["host"], r["peer"], r["params"]) for r in gpu]
    for rec in gpu:
        rail = int(rec["params"]["rail"])
        assert rec["params"]["gpu"] == rail and rec["params"]["peer_gpu"] == rail, rec["params"]
        assert rec["metrics"]["bw_gbps"] > 0
    # host-memory records keep the params they always had: their history baselines still match
    assert all("gpu" not in r["params"] for r in host)
    # the emulated GPU path is as fast as host memory: no gpudirect finding
    codes = [(r["params"].get("code") or r["params"].get("finding")) for r in lines if r.get("kind") == "finding"]
    assert not [c for c in codes if c and str(c).startswith("gpudirect")], codes
    evidence = [" ".join(str(x) for x in r.get("evidence") or []) for r in gpu]
    assert "--use_cuda=" in proc.stdout or any("--use_cuda=" in text for text in evidence)
    assert_nothing_left(lab)


def test_gpudirect_off_runs_host_memory_only(lab, tmp_path):
    proc, lines, _elapsed = run_with_history(lab, PLAYBOOK, tmp_path, {
        "commcheck_rdma_gpudirect": False, "commcheck_rdma_ops": ["write"], "commcheck_rdma_metrics": ["bw"],
        "commcheck_rdma_duration": 2, "commcheck_min_fraction": 0.5})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    records = [r for r in lines if r.get("kind") == "rdma_bw"]
    assert len(records) == 12 and not [r for r in records if r["params"].get("memory") == "cuda"]


def test_all_gpus_a_slow_gpu_path_is_the_gpu_not_its_nic_or_host(lab, tmp_path):
    """Issue 37 §1 / 36 §4: 2 GPUs per NIC on every host, ``pairs: all`` tests all 4 of each host in 2 GPU rounds;
    one GPU's path is slowed to a fifth of the link: the retests confirm it and that GPU is named, not its NIC."""
    slow_host = lab.hosts[2]
    fault = faults.SlowGpuPath(lab.lab, slow_host, gpu=3, rate_mbit=max(50, int(lab.rate_gbps * 1000 / 5)))
    fault.inject()
    try:
        proc, lines, _elapsed = run_with_history(lab, PLAYBOOK, tmp_path, dict(fault.extra_vars, **{
            "commcheck_rdma_ops": ["write"], "commcheck_rdma_metrics": ["bw"], "commcheck_rdma_duration": 2,
            "commcheck_min_fraction": 0.5, "commcheck_retest_repeats": 1}))
    finally:
        fault.heal()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    gpu = [r for r in lines if r.get("kind") == "rdma_bw" and r["params"].get("memory") == "cuda"]
    # 6 pairs x 2 rails x 2 GPU rounds, every GPU of every host tested over its nearest NIC (GPU g: rail g % 2)
    assert len(gpu) == 24, [(r["host"], r["peer"], r["params"].get("gpu")) for r in gpu]
    for host in lab.hosts:
        tested = set((r["params"]["gpu"], r["params"]["rail"]) for r in gpu if r["host"] == host) | set(
            (r["params"]["peer_gpu"], r["params"]["rail"]) for r in gpu if r["peer"] == host)
        assert tested == {(0, 0), (1, 1), (2, 0), (3, 1)}, (host, tested)
    for rec in gpu:
        assert rec["params"]["gpu_path"] == "same_numa" and rec["params"]["gpu_pci"] == "0000:%02x:00.0" % (
            0x80 + rec["params"]["gpu"]), rec["params"]
    # the slow GPU's pairs were retested from GPU memory
    assert [r for r in lines if r.get("kind") == "rdma_bw_retest" and r["params"].get("memory") == "cuda"]
    named = [r for r in lines if r.get("kind") == "finding" and r["params"].get("finding") == "gpudirect_gpu_slow"]
    assert [(r["host"], r["params"]["gpu"], r["params"]["rail"]) for r in named] == [(slow_host, 3, 1)], named
    # the one culprit is that GPU: not its NIC, its links or its host (host memory there is fine)
    found = [(c["component"], c["host"], c["rail"], c.get("gpu")) for c in cp.culprits(lines)
             if c["verdict"] == "fail"]
    assert found == [("gpu", slow_host, 1, 3)], found
    assert_nothing_left(lab)
