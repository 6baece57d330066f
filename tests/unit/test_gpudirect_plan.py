# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPUDirect pass of the RDMA check: host state, rounds from GPU memory, marked records."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import gpudirect as gd
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import schedule


def facts(nics=2, gpus=2, module="nvidia_peermem"):
    return {
        "devices": [{"name": "mlx5_%d" % k, "pci": "0000:%02x:00.0" % (0x17 + k), "numa_node": 0,
                     "pci_path": ["0000:%02x:00.0" % (0x17 + k)]} for k in range(nics)],
        "host": {"gpudirect_module": module,
                 "gpus": {"devices": [{"index": g, "pci": "0000:%02x:00.0" % (0x80 + g), "numa_node": 0,
                                       "vendor": "0x10de", "pci_path": ["0000:%02x:00.0" % (0x80 + g)]}
                                      for g in range(gpus)]}},
    }


def rails(count=2):
    return [{"rail": k, "device": "mlx5_%d" % k, "port": 1, "gid_index": 3, "rate_gbps": 100,
             "address": "10.0.%d.1" % k} for k in range(count)]


@pytest.mark.parametrize("value,expected", [("auto", "auto"), (True, "true"), (False, "false"), ("no", "false"),
                                            (None, "auto"), ("TRUE", "true")])
def test_normalize_setting(value, expected):
    assert gd.normalize_setting(value) == expected


def test_normalize_setting_refuses_anything_else():
    with pytest.raises(gd.GpuDirectError, match="auto, true or false"):
        gd.normalize_setting("sometimes")


def test_auto_with_gpus_and_peermem_gives_each_rail_its_gpu():
    state = gd.host_gpudirect(facts(), rails())
    assert (state["enabled"], state["mode"], state["gpus"]) == (True, "peermem", 2)
    assert [(r["rail"], r["device"], r["gpu"]) for r in state["rails"]] == [(0, "mlx5_0", 0), (1, "mlx5_1", 1)]


def test_auto_without_gpus_is_off_without_a_cause():
    state = gd.host_gpudirect(facts(gpus=0), rails())
    assert (state["enabled"], state["wanted"], state["rails"]) == (False, False, [])


def test_false_is_off_even_with_gpus():
    assert gd.host_gpudirect(facts(), rails(), "false")["enabled"] is False


def test_true_without_gpus_says_why():
    state = gd.host_gpudirect(facts(gpus=0), rails(), True)
    assert state["wanted"] and not state["enabled"] and "no NVIDIA GPU" in state["cause"]


def test_no_peermem_without_dmabuf_is_not_possible_and_says_how_to_fix():
    state = gd.host_gpudirect(facts(module=None), rails())
    assert state["wanted"] and not state["enabled"] and state["mode"] is None
    assert "modprobe nvidia_peermem" in state["fix"]


def test_no_peermem_with_dmabuf_on_a_new_kernel():
    state = gd.host_gpudirect(facts(module=None), rails(), dmabuf=True, kernel_release="6.5.0")
    assert (state["enabled"], state["mode"]) == (True, "dmabuf")


def test_bandwidth_steps_only():
    assert gd.bandwidth_steps([["write", "bw"], ["write", "lat"], ["read", "bw"]]) == [
        {"test": "write", "metric": "bw"}, {"test": "read", "metric": "bw"}]


def _states(**kw):
    return dict((host, gd.host_gpudirect(facts(**kw.get(host, {})), rails())) for host in ("a", "b", "c"))


def test_gpu_rounds_give_each_side_its_own_gpu_and_jobs_the_memory():
    states = _states()
    states["b"] = dict(states["b"], rails=[{"rail": 0, "device": "mlx5_0", "gpu": 5}, {"rail": 1, "device": "mlx5_1",
                                                                                       "gpu": 6}])
    host_rails = {"a": rails(), "b": rails(), "c": rails()}
    rounds = schedule.commcheck_schedule(["a", "b", "c"], "ring")
    plans = gd.gpu_round_plans(rounds, host_rails, states, [["write", "bw"], ["write", "lat"]])
    jobs = [j for p in plans for j in p["jobs"]]
    # one bandwidth step per pair and rail: 3 ring pairs x 2 rails, latency left out
    assert len(jobs) == 6 and set(j["metric"] for j in jobs) == {"bw"}
    ab = [j for j in jobs if {j["server"], j["client"]} == {"a", "b"} and j["rail"] == 1][0]
    assert ab["memory"] == "cuda" and ab["gpudirect"] == "peermem"
    assert (ab["server_gpu"], ab["client_gpu"]) == ((6, 1) if ab["server"] == "b" else (1, 6))
    sides = [s for p in plans for s in p["sides"].get("b", [])]
    assert sorted(s["use_cuda"] for s in sides) == [5, 5, 6, 6]
    assert not any("use_cuda_dmabuf" in s for s in sides)


def test_a_host_without_gpudirect_drops_its_pairs_and_empty_rounds():
    states = _states(c={"gpus": 0})
    plans = gd.gpu_round_plans(schedule.commcheck_schedule(["a", "b", "c"], "mesh"),
                               {"a": rails(), "b": rails(), "c": rails()}, states, [["write", "bw"]])
    jobs = [j for p in plans for j in p["jobs"]]
    assert jobs and all("c" not in (j["server"], j["client"]) for j in jobs)
    assert all(p["jobs"] for p in plans)


def test_a_rail_without_a_gpu_on_one_side_is_left_out_and_dmabuf_sides_say_so():
    states = {"a": gd.host_gpudirect(facts(gpus=1), rails()),
              "b": gd.host_gpudirect(facts(module=None), rails(), dmabuf=True)}
    (plan,) = gd.gpu_round_plans([[["a", "b"]]], {"a": rails(), "b": rails()}, states, [["read", "bw"]])
    assert [j["rail"] for j in plan["jobs"]] == [0]
    assert plan["jobs"][0]["gpudirect"] == "dmabuf+peermem"
    (b_side,) = plan["sides"]["b"]
    assert b_side["use_cuda_dmabuf"] is True and b_side["use_cuda"] == 0


def test_no_bandwidth_test_no_gpu_rounds():
    assert gd.gpu_round_plans([[["a", "b"]]], {}, _states(), [["write", "lat"]]) == []


def test_mark_gpu_records_adds_memory_and_gpus_only_to_the_gpu_records():
    jobs = [{"round": 0, "step": 0, "rail": 1, "server": "a", "client": "b", "server_gpu": 1, "client_gpu": 3,
             "gpudirect": "peermem"}]
    records = [{"kind": "rdma_bw", "host": "a", "peer": "b",
                "params": {"round": 0, "step": 0, "rail": 1, "server": "a", "client": "b", "op": "write"}}]
    (marked,) = gd.mark_gpu_records(records, jobs)
    assert marked["params"]["memory"] == "cuda"
    assert (marked["params"]["gpu"], marked["params"]["peer_gpu"], marked["params"]["gpudirect"]) == (1, 3, "peermem")
    assert "memory" not in records[0]["params"]
