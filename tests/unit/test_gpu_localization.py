# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which GPU's path is slow (verdicts/gpu_localization.py): a GPU below the other GPUs of its rail (robust z), or
failing with most of its peers, while host memory on its NIC is fine (issue 37 §1, issue 36 §4)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import gpu_localization as gl
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import gpudirect as gv

HOSTS = ("h1", "h2", "h3", "h4")


def _pair(host, peer, rail, gbps, verdict="pass", gpu=None, peer_gpu=None):
    params = {"op": "write", "rail": rail, "device": "mlx5_%d" % rail, "peer_device": "mlx5_%d" % rail}
    if gpu is not None:
        params.update(memory="cuda", gpu=gpu, peer_gpu=peer_gpu, gpu_pci="pci-%s-%d" % (host, gpu),
                      peer_gpu_pci="pci-%s-%d" % (peer, peer_gpu), gpu_path="same_switch", peer_gpu_path="same_switch")
    return {"kind": "rdma_bw", "host": host, "peer": peer, "params": params, "metrics": {"bw_gbps": gbps},
            "verdict": verdict}


def mesh(rail, gpu, gbps_of, verdict_of=lambda a, b: "pass"):
    """Every pair of HOSTS on ``rail`` from GPU ``gpu``; ``gbps_of(a, b)`` its bandwidth."""
    return [_pair(a, b, rail, gbps_of(a, b), verdict_of(a, b), gpu, gpu)
            for i, a in enumerate(HOSTS) for b in HOSTS[i + 1:]]


def host_mesh(rail, verdict_of=lambda a, b: "pass"):
    return [_pair(a, b, rail, 96.0, verdict_of(a, b)) for i, a in enumerate(HOSTS) for b in HOSTS[i + 1:]]


def test_a_gpu_below_its_rails_other_gpus_is_a_warning_and_named_once_a_pair_of_it_fails():
    # h2's GPU 1 reads 60 Gb/s with everyone (above the pass line), the other GPUs about 94
    cuda = mesh(1, 1, lambda a, b: 60.0 if "h2" in (a, b) else 94.0 + HOSTS.index(a) * 0.2) + \
        mesh(0, 0, lambda a, b: 94.0)
    rows = gl.slow_gpus(cuda, host_mesh(0) + host_mesh(1), outlier_z=3.5, outlier_min_rel=0.2)
    assert [(r["host"], r["rail"], r["gpu"]) for r in rows if r["below"]] == [("h2", 1, 1)]
    assert not [r for r in rows if r["named"]]
    row = [r for r in rows if r["below"]][0]
    assert row["outlier"] and not row["fails_with_most"] and row["z"] < -3.5 and row["gbps"] == 60.0
    (finding,) = gl.findings(rows)
    assert (finding["params"]["component"], finding["params"]["gpu_pci"], finding["verdict"]) == (
        "gpu", "pci-h2-1", "warn")
    # one of its pairs failed: named
    cuda[0] = dict(cuda[0], verdict="fail")
    assert cuda[0]["host"] == "h1" and cuda[0]["peer"] == "h2"
    rows = gl.slow_gpus(cuda, host_mesh(0) + host_mesh(1), outlier_z=3.5, outlier_min_rel=0.2)
    assert [(r["host"], r["gpu"]) for r in rows if r["named"]] == [("h2", 1)]
    assert [f["verdict"] for f in gl.findings(rows)] == ["fail"]


def slow(a, b):
    return "h3" in (a, b)


def test_a_gpu_failing_with_most_peers_is_named_and_not_where_host_memory_fails_on_its_nic():
    cuda = mesh(0, 2, lambda a, b: 30.0 if slow(a, b) else 94.0, lambda a, b: "fail" if slow(a, b) else "pass")
    rows = gl.slow_gpus(cuda, host_mesh(0), outlier_z=3.5, outlier_min_rel=0.2)
    assert [(r["host"], r["fails_with_most"], r["named"]) for r in rows if r["bad_peers"]] == [
        ("h1", False, False), ("h2", False, False), ("h3", True, True), ("h4", False, False)]
    # the same, with h3's host memory failing on that NIC: the NIC's localization names it, no GPU
    rows = gl.slow_gpus(cuda, host_mesh(0, lambda a, b: "fail" if slow(a, b) else "pass"))
    assert not [r for r in rows if r["named"]]
    # no host-memory record of that NIC at all: nothing says the NIC is fine
    assert not [r for r in gl.slow_gpus(cuda, host_mesh(1)) if r["named"]]


def test_the_gpudirect_rows_are_per_gpu():
    cuda = mesh(0, 0, lambda a, b: 94.0) + mesh(0, 2, lambda a, b: 30.0 if "h3" in (a, b) else 94.0)
    rows = gv.gpudirect_rows(host_mesh(0) + cuda)
    h3 = [(r["gpu"], r["cuda_gbps"], r["slow"]) for r in rows if r["host"] == "h3"]
    assert h3 == [(0, 94.0, False), (2, 30.0, True)]
