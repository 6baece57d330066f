# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU-memory pairs through the pair engine (issue 36 §4): planned for every GPU (``pairs: all``), retested GPU round
by GPU round from the same GPUs, judged by the thresholds, and a slow GPU path named as the GPU, not its NIC, with
sides from the synthetic fabric (fault_lab) whose GPU-memory bandwidth drops where one GPU takes part."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import families
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits as cp
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import gpu_localization as gl
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import pair_engine as engine

from fault_lab import Fabric
from test_pair_engine import RDMA, SHARED, by_host, fleet_of, reader

SLOW_HOST, SLOW_GPU = "h3", 3
OPTS = reader(SHARED, RDMA, commcheck_rdma_gpudirect="true", commcheck_rdma_gpudirect_pairs="all",
              commcheck_rdma_gpudirect_dmabuf=False, commcheck_rdma_gpudirect_min_ratio=0.7,
              commcheck_retest_rounds=0, commcheck_rdma_strategy="rounds")


def gpu_facts(nics=2, gpus=4):
    return {"devices": [{"name": "mlx5_%d" % k, "pci": "0000:%02x:00.0" % (0x17 + k), "numa_node": 0,
                         "pci_path": ["0000:%02x:00.0" % (0x17 + k)]} for k in range(nics)],
            "host": {"gpudirect_module": "nvidia_peermem",
                     "gpus": {"devices": [{"index": g, "pci": "0000:%02x:00.0" % (0x80 + g), "numa_node": 0,
                                           "vendor": "0x10de", "pci_path": ["0000:%02x:00.0" % (0x80 + g)]}
                                          for g in range(gpus)]}}}


def gpu_sides(fabric, plans, phase, slow_phases):
    """The fabric's sides of GPU-memory plans, a pair at 30 % where SLOW_HOST's GPU SLOW_GPU is one of its ends
    (in the phases named)."""
    jobs = dict(((j["round"], j["server"], j["client"], j["rail"], j["step"]), j) for p in plans for j in p["jobs"])
    out = []
    for side in fabric.sides(plans, phase):
        server, client = (side["host"], side["peer"]) if side["role"] == "server" else (side["peer"], side["host"])
        job = jobs[(side["round"], server, client, side["rail"], side["step"])]
        slow = (server, job["server_gpu"]) == (SLOW_HOST, SLOW_GPU) or (client, job["client_gpu"]) == (
            SLOW_HOST, SLOW_GPU)
        if slow and side["role"] == "client" and any(phase.startswith(p) for p in slow_phases):
            side = dict(side, metrics=dict(side["metrics"], bw_gbps=round(side["metrics"]["bw_gbps"] * 0.3, 2)))
        out.append(side)
    return out


def run_all(slow_phases=("first", "retest"), host_slow=False):
    fabric = Fabric(n=4, rails=2)
    if host_slow:
        fabric.slow(0.3, host=SLOW_HOST, rail=1)
    row, gpu_row = families.family("rdma"), families.family("rdma_gpu")
    fleet = fleet_of(fabric)
    run = engine.plan(row, OPTS, fleet, 60, forks=50)
    first = engine.first_pass(row, OPTS, run, by_host(fabric.sides(run["rounds"], "first")), {})
    states = engine.gpu_states(gpu_row, OPTS, fabric.hosts, fleet["facts"]["rails"],
                               dict((h, gpu_facts()) for h in fabric.hosts), {})
    gpu_run = engine.gpu_rounds(gpu_row, OPTS, fabric.hosts, fleet["facts"]["rails"], states, 60, 50)
    gpu_first = engine.gpu_retests(gpu_row, OPTS, gpu_sides(fabric, gpu_run["rounds"], "first", slow_phases), gpu_run,
                                   fleet, run, 50)
    retested = gpu_sides(fabric, gpu_first["rounds"], "retest", slow_phases)
    gpudirect = engine.gpu_judge(gpu_row, OPTS, first["records"], gpu_first, retested, gpu_run)
    retests = engine.retests(row, OPTS, first, fleet, run, forks=50)
    verdicts = engine.judge(row, OPTS, first, retests, fabric.sides(retests["rounds"], "retest"), [], [], [], {},
                            {"gpudirect": gpudirect})
    return {"gpu_run": gpu_run, "gpu_first": gpu_first, "gpudirect": gpudirect, "verdicts": verdicts}


@pytest.fixture(scope="module", name="slow_gpu")
def fixture_slow_gpu():
    return run_all()


def test_every_gpu_of_every_host_is_tested_in_two_gpu_rounds(slow_gpu):
    jobs = slow_gpu["gpu_run"]["jobs"]
    # 6 pairs x 2 rails x 2 GPU rounds
    assert len(jobs) == 24
    ends = set((j["server"], j["server_gpu"], j["rail"]) for j in jobs) | set(
        (j["client"], j["client_gpu"], j["rail"]) for j in jobs)
    assert ends == set((h, g, g % 2) for h in ("h1", "h2", "h3", "h4") for g in range(4))


def test_the_failing_gpu_pairs_are_retested_from_the_same_gpus_and_with_partners(slow_gpu):
    plan = slow_gpu["gpu_first"]
    failing = [r for r in plan["records"] if r["verdict"] == "fail"]
    assert sorted(set(frozenset((r["host"], r["peer"])) for r in failing), key=sorted) == [
        frozenset(("h1", "h3")), frozenset(("h2", "h3")), frozenset(("h3", "h4"))]
    assert all(r["params"]["gpu_slot"] == 1 and r["params"]["rail"] == 1 for r in failing)
    retests = plan["retests"]
    assert set(i["purpose"] for i in retests) >= {"as_is", "partner"}
    assert all(i["id"].startswith("g1-") for i in retests)
    for rnd in plan["rounds"]:
        assert rnd["jobs"][0]["round"] >= 2000
        for job in rnd["jobs"]:
            # the slow host tests from its GPU 3 again; its partners from their GPU of that GPU round
            for host, gpu in ((job["server"], job["server_gpu"]), (job["client"], job["client_gpu"])):
                assert gpu == 3, job
                sides = [s for s in rnd["sides"][host] if s["rail"] == job["rail"]]
                assert [s["use_cuda"] for s in sides] == [3]


def test_the_gpu_is_named_not_its_nic_its_links_or_its_host(slow_gpu):
    publish = slow_gpu["verdicts"]["publish"]
    named = [r for r in publish if r.get("kind") == "finding" and r["params"].get("finding") == gl.FINDING]
    assert [(r["host"], r["params"]["gpu"], r["params"]["rail"], r["params"]["gpu_path"]) for r in named] == [
        (SLOW_HOST, SLOW_GPU, 1, "same_numa")]
    assert [(c["component"], c["host"], c["rail"], c.get("gpu")) for c in cp.culprits(publish)
            if c["verdict"] == "fail"] == [("gpu", SLOW_HOST, 1, SLOW_GPU)]
    # its gpudirect_slow row is the GPU's, not published as a setting of the host
    assert not [r for r in publish if (r.get("params") or {}).get("finding") == "gpudirect_slow"]
    # the confirmed GPU-memory pairs fail after their retests and are published with their retests
    cuda = [r for r in publish if (r.get("params") or {}).get("memory") == "cuda" and r.get("kind") == "rdma_bw"]
    assert len(cuda) == 24 and sum(1 for r in cuda if r["verdict"] == "fail") == 3
    assert [r for r in publish if r.get("kind") == "rdma_bw_retest" and r["params"].get("memory") == "cuda"]
    assert slow_gpu["gpudirect"]["retests"]["failing_pairs"] == 3


def test_a_gpu_slow_once_is_flaky_and_not_named():
    verdicts = run_all(slow_phases=("first",))["verdicts"]
    cuda = [r for r in verdicts["publish"] if (r.get("params") or {}).get("memory") == "cuda"
            and r.get("kind") == "rdma_bw"]
    assert sorted(r["verdict"] for r in cuda if r["verdict"] != "pass") == ["flaky"] * 3
    assert not [r for r in verdicts["publish"] if (r.get("params") or {}).get("finding") == gl.FINDING]


def test_a_slow_nic_slows_its_gpu_pairs_too_and_is_named_as_the_nic_not_a_gpu():
    verdicts = run_all(slow_phases=(), host_slow=True)["verdicts"]
    cuda = [r for r in verdicts["publish"] if (r.get("params") or {}).get("memory") == "cuda"
            and r.get("kind") == "rdma_bw"]
    assert set(r["verdict"] for r in cuda if SLOW_HOST in (r["host"], r["peer"]) and r["params"]["rail"] == 1) == \
        {"fail"}
    assert not [r for r in verdicts["publish"] if (r.get("params") or {}).get("finding") == gl.FINDING]
    assert [c["component"] for c in cp.culprits(verdicts["publish"]) if c["verdict"] == "fail"
            and c["host"] == SLOW_HOST] == ["nic"]
