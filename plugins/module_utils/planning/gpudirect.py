# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPUDirect RDMA pass of the RDMA check: which GPU each rail tests with, and its rounds (pure).

After the host-memory tests, the bandwidth tests run again with each side's
buffer in GPU memory (perftest ``--use_cuda=<gpu>``). Each rail uses the
GPU nearest its NIC (``discovery.gpu_affinity``), one GPU per rail, so the
pass adds one bandwidth step per bandwidth test and round, never one per
GPU. Rail k of the server meets rail k of the client as in the host-memory
rounds; a rail runs only where both of its sides have a GPU.

Its records are the host-memory records' kind (``rdma_bw``) with
``params.memory`` = ``cuda``, ``params.gpu`` / ``params.peer_gpu`` (the
server's and client's GPU) and ``params.gpudirect`` (``peermem`` or
``dmabuf``); host-memory records keep their params unchanged, so their
history baselines still match.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import gpu_affinity
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import schedule

SETTINGS = ("auto", "true", "false")


class GpuDirectError(ValueError):
    """A bad setting (reported as a clear error)."""


def normalize_setting(value):
    """``auto`` / ``true`` / ``false`` from the variable (YAML booleans too)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value if value is not None else "auto").strip().lower()
    if text in ("yes", "on"):
        text = "true"
    if text in ("no", "off"):
        text = "false"
    if text not in SETTINGS:
        raise GpuDirectError("must be auto, true or false, got %r" % (value,))
    return text


def host_gpudirect(rdma_facts, rails, setting="auto", dmabuf=False, kernel_release=None):
    """One host's GPUDirect state: ``{enabled, gpus, mode, cause, fix, pairs, rails}``.

    ``rails``: the host's rails (``schedule.select_rails``); ``rails`` of the
    result: ``{rail, device, gpu}`` for each rail whose NIC is nearest to a
    GPU. ``enabled``: the setting asks for it (``auto``: GPUs were found)
    and GPU memory can be registered (``mode``); ``cause`` / ``fix`` say why not.
    """
    setting = normalize_setting(setting)
    facts = rdma_facts or {}
    host = facts.get("host") or {}
    gpus = ((host.get("gpus") or {}).get("devices")) or []
    wanted = setting == "true" or (setting == "auto" and bool(gpus))
    peermem = bool(host.get("gpudirect_module")) or gpu_affinity.peermem_loaded(facts.get("snapshot"))
    state = gpu_affinity.gpudirect_mode(peermem, bool(dmabuf), kernel_release)
    pairs = gpu_affinity.affinity_from_facts(facts) if wanted else []
    by_device = gpu_affinity.nic_gpus(pairs)
    rail_gpus = []
    for rail in rails or []:
        pair = by_device.get(rail.get("device"))
        if pair is not None:
            rail_gpus.append({"rail": rail.get("rail"), "device": rail.get("device"), "gpu": pair["gpu"],
                              "how": pair["how"]})
    out = {"setting": setting, "wanted": wanted, "gpus": len(gpus), "mode": state["mode"], "pairs": pairs,
           "rails": rail_gpus, "cause": state["cause"], "fix": state["fix"]}
    out["enabled"] = bool(wanted and gpus and state["mode"] and rail_gpus)
    if wanted and not gpus:
        out["cause"], out["fix"] = "no NVIDIA GPU was found on this host", \
            "set commcheck_rdma_gpudirect: auto (or false) for hosts without GPUs"
    elif wanted and state["mode"] and not rail_gpus:
        out["cause"], out["fix"] = "no tested RDMA NIC shares a PCIe switch or NUMA node with a GPU", \
            "check nvidia-smi topo -m and which NICs the check tests (commcheck_devices)"
    return out


def bandwidth_steps(tests):
    """The bandwidth test steps (``[op, metric]`` pairs or dicts) of the host-memory pass."""
    out = []
    for test in schedule._tests(tests):
        if test.get("metric", "bw") == "bw" and test not in out:
            out.append(dict(test, metric="bw"))
    return out


def _gpu_of(states, host, rail):
    for item in (states.get(host) or {}).get("rails") or []:
        if item.get("rail") == rail:
            return item.get("gpu")
    return None


def _dmabuf(states, host):
    return (states.get(host) or {}).get("mode") == "dmabuf"


def _enabled(states, host):
    return bool((states.get(host) or {}).get("enabled"))


def gpu_round_plans(rounds, host_rails, states, tests=None, base_port=18515, rails=None):
    """One plan per round (``schedule.round_plan``'s shape) of the bandwidth steps from GPU memory.

    ``states``: host -> ``host_gpudirect``. A pair x rail runs when both
    hosts have GPUDirect enabled and a GPU on that rail; each side gets
    ``use_cuda`` (its own GPU) and ``use_cuda_dmabuf``; each job gets
    ``memory`` (``cuda``), ``server_gpu``, ``client_gpu`` and ``gpudirect``.
    Rounds without any such pair are left out.
    """
    states = states or {}
    steps = bandwidth_steps(tests)
    plans = []
    if not steps:
        return plans
    for num, rnd in enumerate(rounds or []):
        pairs = [p for p in rnd or [] if _enabled(states, p[0]) and _enabled(states, p[1])]
        plan = schedule.round_plan(pairs, host_rails, steps, base_port, None, rails, round_index=num)
        plan = _keep_gpu_rails(plan, states)
        if plan["jobs"]:
            plans.append(plan)
    return plans


def _keep_gpu_rails(plan, states):
    jobs = []
    keep = set()
    for job in plan["jobs"]:
        s_gpu = _gpu_of(states, job["server"], job["rail"])
        c_gpu = _gpu_of(states, job["client"], job["rail"])
        if s_gpu is None or c_gpu is None:
            continue
        modes = sorted(set((states.get(h) or {}).get("mode") for h in (job["server"], job["client"])))
        jobs.append(dict(job, memory="cuda", server_gpu=s_gpu, client_gpu=c_gpu, gpudirect="+".join(modes)))
        keep.add((job["server"], job["rail"], job["step"]))
        keep.add((job["client"], job["rail"], job["step"]))
    sides = {}
    for host, host_sides in plan["sides"].items():
        for side in host_sides:
            if (host, side["rail"], side["step"]) in keep:
                gpu_side = dict(side, use_cuda=_gpu_of(states, host, side["rail"]))
                if _dmabuf(states, host):
                    gpu_side["use_cuda_dmabuf"] = True
                sides.setdefault(host, []).append(gpu_side)
    return {"sides": sides, "jobs": jobs, "skipped": []}


def _job_key(item):
    return (item.get("round"), int(item.get("step") or 0), item.get("rail"), item.get("server"), item.get("client"))


def mark_gpu_records(records, jobs):
    """The pair records of the GPU pass with ``params.memory`` / ``gpu`` / ``peer_gpu`` / ``gpudirect`` added."""
    by_key = dict((_job_key(job), job) for job in jobs or [])
    out = []
    for rec in records or []:
        params = dict(rec.get("params") or {})
        job = by_key.get(_job_key(params))
        params["memory"] = "cuda"
        if job is not None:
            params.update(gpu=job.get("server_gpu"), peer_gpu=job.get("client_gpu"), gpudirect=job.get("gpudirect"))
        out.append(dict(rec, params=params))
    return out
