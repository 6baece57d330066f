# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPUDirect RDMA pass of the RDMA check: which GPU each rail tests with, and its rounds (pure).

After the host-memory tests, the bandwidth tests run again with each side's
buffer in GPU memory (perftest ``--use_cuda=<gpu>``). Each rail uses the
GPU nearest its NIC (``discovery.gpu_affinity``), one GPU per rail, so the
pass adds one bandwidth step per bandwidth test and round, never one per
GPU. Rail k of the server meets rail k of the client as in the host-memory
rounds; a rail runs only where both of its sides have a GPU. With
``commcheck_rdma_gpudirect_pairs: all`` every GPU is tested against its
nearest NIC: each host round runs once per GPU round (``gpu_pairs``), so no
NIC and no GPU is used twice at once.

Its records are the host-memory records' kind (``rdma_bw``) with
``params.memory`` = ``cuda``, ``params.gpu`` / ``params.peer_gpu`` (the
server's and client's GPU) and ``params.gpudirect`` (``peermem`` or
``dmabuf``); host-memory records keep their params unchanged, so their
history baselines still match.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import gpu_affinity
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import gpu_pairs
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


def host_gpudirect(rdma_facts, rails, setting="auto", dmabuf=False, kernel_release=None, pairs="nearest"):
    """One host's GPUDirect state: ``{enabled, gpus, mode, cause, fix, pairs, rails}``.

    ``rails``: the host's rails (``schedule.select_rails``); ``rails`` of the
    result: ``{rail, device, gpu, gpu_pci, gpu_path, slot}`` for each GPU a tested NIC meets
    (``gpu_pairs.rail_gpus``: one per rail, or every GPU with ``pairs`` ``all``).
    ``enabled``: the setting asks for it (``auto``: GPUs were found)
    and GPU memory can be registered (``mode``); ``cause`` / ``fix`` say why not.
    """
    setting = normalize_setting(setting)
    facts = rdma_facts or {}
    host = facts.get("host") or {}
    gpus = ((host.get("gpus") or {}).get("devices")) or []
    wanted = setting == "true" or (setting == "auto" and bool(gpus))
    peermem = bool(host.get("gpudirect_module")) or gpu_affinity.peermem_loaded(facts.get("snapshot"))
    state = gpu_affinity.gpudirect_mode(peermem, bool(dmabuf), kernel_release)
    found = gpu_affinity.affinity_from_facts(facts) if wanted else []
    rail_gpus = gpu_pairs.rail_gpus(found, rails, pairs)
    out = {"setting": setting, "wanted": wanted, "gpus": len(gpus), "mode": state["mode"], "pairs": found,
           "rails": rail_gpus, "cause": state["cause"], "fix": state["fix"], "gpu_pairs": gpu_pairs.normalize_pairs(pairs)}
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


def _gpu_of(states, host, rail, slot=0):
    return gpu_pairs.gpu_at(states, host, rail, slot)


def _dmabuf(states, host):
    return (states.get(host) or {}).get("mode") == "dmabuf"


def _enabled(states, host):
    return bool((states.get(host) or {}).get("enabled"))


def gpu_round_plans(rounds, host_rails, states, tests=None, base_port=18515, rails=None):
    """One plan per round (``schedule.round_plan``'s shape) of the bandwidth steps from GPU memory.

    ``states``: host -> ``host_gpudirect``. A pair x rail runs when both
    hosts have GPUDirect enabled and a GPU on that rail; each side gets
    ``use_cuda`` (its own GPU) and ``use_cuda_dmabuf``; each job gets
    ``memory`` (``cuda``), ``server_gpu``, ``client_gpu``, their PCI addresses and bus paths, ``gpu_slot`` and
    ``gpudirect``. Each host round runs once per GPU round (``gpu_pairs.slot_count``); a rail runs in GPU round
    k while one of its two sides still has a GPU not tested. Rounds without any such pair are left out.
    """
    states = states or {}
    steps = bandwidth_steps(tests)
    plans = []
    if not steps:
        return plans
    for rnd in rounds or []:
        pairs = [p for p in rnd or [] if _enabled(states, p[0]) and _enabled(states, p[1])]
        for slot in range(gpu_pairs.slot_count(states)):
            plan = schedule.round_plan(pairs, host_rails, steps, base_port, None, rails, round_index=len(plans))
            plan = gpu_sides(plan, states, slot)
            if plan["jobs"]:
                plans.append(plan)
    return _renumbered(plans)


def _renumbered(plans):
    """Round numbers 0, 1, ... of the plans kept (a plan left out leaves no gap)."""
    for num, plan in enumerate(plans):
        for job in plan["jobs"]:
            job["round"] = num
        for sides in plan["sides"].values():
            for side in sides:
                side["round"] = num
    return plans


def gpu_sides(plan, states, slot=0):
    """The jobs and sides of a host-memory plan (``schedule.round_plan``'s shape) that run from GPU memory in GPU
    round ``slot``: each side's ``use_cuda`` its GPU there, each job marked (:func:`gpu_round_plans`)."""
    jobs = []
    keep = {}
    for job in plan["jobs"]:
        server, client, rail = job["server"], job["client"], job["rail"]
        if slot >= max(gpu_pairs.slots_on(states, server, rail), gpu_pairs.slots_on(states, client, rail)):
            continue
        s_gpu, c_gpu = _gpu_of(states, server, rail, slot), _gpu_of(states, client, rail, slot)
        if s_gpu is None or c_gpu is None:
            continue
        modes = sorted(set((states.get(h) or {}).get("mode") for h in (server, client)))
        jobs.append(dict(job, memory="cuda", server_gpu=s_gpu["gpu"], client_gpu=c_gpu["gpu"],
                         server_gpu_pci=s_gpu.get("gpu_pci"), client_gpu_pci=c_gpu.get("gpu_pci"),
                         server_gpu_path=s_gpu.get("gpu_path"), client_gpu_path=c_gpu.get("gpu_path"),
                         gpu_slot=slot, gpudirect="+".join(modes)))
        keep[(server, rail, job["step"])] = s_gpu["gpu"]
        keep[(client, rail, job["step"])] = c_gpu["gpu"]
    sides = {}
    for host, host_sides in plan["sides"].items():
        for side in host_sides:
            if (host, side["rail"], side["step"]) in keep:
                gpu_side = dict(side, use_cuda=keep[(host, side["rail"], side["step"])])
                if _dmabuf(states, host):
                    gpu_side["use_cuda_dmabuf"] = True
                sides.setdefault(host, []).append(gpu_side)
    return {"sides": sides, "jobs": jobs, "skipped": []}


def _job_key(item):
    return (item.get("round"), int(item.get("step") or 0), item.get("rail"), item.get("server"), item.get("client"))


def mark_gpu_records(records, jobs):
    """The pair records of the GPU pass with ``params.memory`` / ``gpu`` / ``peer_gpu`` / ``gpudirect``, the GPUs'
    PCI addresses (``gpu_pci`` / ``peer_gpu_pci``), bus paths to their NICs (``gpu_path`` / ``peer_gpu_path``:
    ``gpu_affinity.gpu_path``) and GPU round (``gpu_slot``) added."""
    by_key = dict((_job_key(job), job) for job in jobs or [])
    out = []
    for rec in records or []:
        params = dict(rec.get("params") or {})
        job = by_key.get(_job_key(params))
        params["memory"] = "cuda"
        if job is not None:
            params.update(gpu=job.get("server_gpu"), peer_gpu=job.get("client_gpu"), gpudirect=job.get("gpudirect"),
                          gpu_pci=job.get("server_gpu_pci"), peer_gpu_pci=job.get("client_gpu_pci"),
                          gpu_path=job.get("server_gpu_path"), peer_gpu_path=job.get("client_gpu_path"),
                          gpu_slot=job.get("gpu_slot"))
        out.append(dict(rec, params=params))
    return out
