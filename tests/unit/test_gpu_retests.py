# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The retest plan of failing GPU-memory pairs (verdicts/gpu_retests.py): the shared planner GPU round by GPU round,
each side from its own GPU; a retest a side has no GPU for is skipped, saying why."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import gpudirect as gd
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import gpu_retests as gr

from test_gpudirect_all_pairs import facts, rails

HOSTS = ("h1", "h2", "h3", "h4")


def _rec(host, peer, slot, gpu, verdict):
    return {"kind": "rdma_bw", "host": host, "peer": peer, "verdict": verdict, "metrics": {"bw_gbps": 10.0},
            "params": {"op": "write", "metric": "bw", "rail": 0, "memory": "cuda", "gpu": gpu, "peer_gpu": gpu,
                       "gpu_slot": slot, "round": slot}}


def test_each_gpu_round_is_planned_apart_and_a_side_without_a_gpu_is_skipped():
    states = dict((h, gd.host_gpudirect(facts(1, 2), rails(1), pairs="all")) for h in HOSTS[:3])
    # h4 has no GPU: its partner retests cannot run from GPU memory
    states["h4"] = gd.host_gpudirect(facts(1, 0), rails(1), pairs="all")
    records = [_rec(a, b, slot, slot, "fail" if (a, b) == ("h1", "h2") else "pass")
               for slot in (0, 1) for i, a in enumerate(HOSTS) for b in HOSTS[i + 1:]]
    host_rails = dict((h, rails(1)) for h in HOSTS)
    plan = gr.plan_gpu_retests(records, host_rails, states, repeats=1, partners=True)
    assert plan["summary"]["failing_pairs"] == 2
    by_slot = {}
    for rnd in plan["rounds"]:
        for job in rnd["jobs"]:
            by_slot.setdefault(job["gpu_slot"], []).append(job)
            assert job["round"] >= (job["gpu_slot"] + 1) * gr.ROUND_OFFSET
            assert "h4" not in (job["server"], job["client"])
            assert (job["server_gpu"], job["client_gpu"]) == (job["gpu_slot"], job["gpu_slot"])
            for host in (job["server"], job["client"]):
                assert [s["use_cuda"] for s in rnd["sides"][host] if s["rail"] == 0] == [job["gpu_slot"]]
    assert sorted(by_slot) == [0, 1]
    assert set(i["id"].split("-")[0] for i in plan["retests"]) == {"g0", "g1"}
    assert len(set(i["id"] for i in plan["retests"])) == len(plan["retests"])
    no_gpu = [s for s in plan["skipped"] if s["reason"] == "no GPU to test from on one side"]
    assert no_gpu and all("h4" in (s["server"], s["client"]) for s in no_gpu)
    assert "h4" not in plan["hosts"]
