# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU-memory bandwidth next to host-memory bandwidth, per host and rail, and its findings (pure).

Training traffic leaves and enters GPU memory. A rail whose bandwidth from
GPU memory is far below its bandwidth from host memory (default below 0.7 x)
moves the GPU's data through the CPU side of the machine: ``gpudirect_slow``.
Hosts where GPUDirect was asked for but cannot run: ``gpudirect_unavailable``.
Both are ``finding`` records of family ``rdma_gpudirect`` (kept apart from the
host-memory localization findings, family ``rdma_bw``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.gpu_localization import is_cuda
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.stats import median

DEFAULT_MIN_RATIO = 0.7
CHECK = "rdma_perf"

SLOW_CAUSE = ("bandwidth from GPU memory is %.2f Gb/s against %.2f Gb/s from host memory on the same rail "
              "(%.0f%%, below %.0f%%): GPU peer memory is not really used (nvidia_peermem / DMA-BUF not "
              "working, so data is staged through host memory), the GPU and the NIC are on different NUMA nodes "
              "or PCIe switches, or PCIe ACS redirects peer-to-peer traffic through the root complex")
SLOW_FIX = ("check nvidia-smi topo -m (the GPU and NIC should be PIX/PXB, not SYS/NODE), lsmod | grep "
            "nvidia_peermem, disable ACS on the PCIe switches' downstream ports (setpci ... ECAP_ACS+0x6.w=0000 "
            "or the BIOS) and IOMMU passthrough (iommu=pt); compare with another node of the same model")


def _bw_of(rec):
    if rec.get("kind") != "rdma_bw" or rec.get("verdict") in ("error", "skipped"):
        return None
    return (rec.get("metrics") or {}).get("bw_gbps")


def _per_host_rail(records, by_gpu=False):
    """{(host, rail, gpu or None): {values: {op: [Gb/s]}, device, gpu}} over both hosts of each pair record
    (``by_gpu``: one entry per GPU, else one per rail)."""
    out = {}
    for rec in records or []:
        value = _bw_of(rec)
        if value is None:
            continue
        params = rec.get("params") or {}
        for host, device, gpu in ((rec.get("host"), params.get("device"), params.get("gpu")),
                                  (rec.get("peer"), params.get("peer_device"), params.get("peer_gpu"))):
            entry = out.setdefault((host, params.get("rail"), gpu if by_gpu else None),
                                   {"values": {}, "device": device, "gpu": gpu})
            entry["values"].setdefault(params.get("op"), []).append(float(value))
    return out


def _row_order(item):
    (host, rail, gpu), _entry = item
    return (str(host), str(rail), gpu if isinstance(gpu, int) else -1)


def gpudirect_rows(records, min_ratio=DEFAULT_MIN_RATIO):
    """[{host, rail, device, gpu, host_gbps, cuda_gbps, ratio, slow}] for each host, rail and GPU tested from GPU
    memory.

    Medians over the pairs each host's GPU took part in on that rail, host memory
    over the same operations as the GPU-memory tests.
    """
    cuda = _per_host_rail([r for r in records or [] if is_cuda(r)], by_gpu=True)
    host_memory = _per_host_rail([r for r in records or [] if not is_cuda(r)])
    rows = []
    for (host, rail, _gpu), entry in sorted(cuda.items(), key=_row_order):
        host_values = (host_memory.get((host, rail, None)) or {}).get("values") or {}
        host_gbps = median([v for op in entry["values"] for v in host_values.get(op, [])])
        cuda_gbps = median([v for values in entry["values"].values() for v in values])
        ratio = round(cuda_gbps / host_gbps, 4) if host_gbps else None
        rows.append({"host": host, "rail": rail, "device": entry["device"], "gpu": entry["gpu"],
                     "host_gbps": host_gbps, "cuda_gbps": cuda_gbps, "ratio": ratio,
                     "slow": ratio is not None and ratio < float(min_ratio)})
    return rows


def slow_findings(rows, min_ratio=DEFAULT_MIN_RATIO, check=CHECK):
    """A ``gpudirect_slow`` finding record (verdict fail) for each slow row of ``gpudirect_rows``."""
    out = []
    for row in rows or []:
        if not row.get("slow"):
            continue
        out.append({
            "kind": "finding", "host": row["host"], "peer": None,
            "params": {"check": check, "finding": "gpudirect_slow", "family": "rdma_gpudirect", "rail": row["rail"],
                       "device": row["device"], "gpu": row["gpu"], "memory": "cuda"},
            "metrics": {"cuda_gbps": row["cuda_gbps"], "host_gbps": row["host_gbps"], "ratio": row["ratio"],
                        "min_ratio": float(min_ratio)},
            "verdict": "fail",
            "cause": SLOW_CAUSE % (row["cuda_gbps"], row["host_gbps"], row["ratio"] * 100, float(min_ratio) * 100),
            "fix": SLOW_FIX,
            "evidence": ["%s rail %s (%s) with GPU %s" % (row["host"], row["rail"], row["device"], row["gpu"])],
        })
    return out


def unavailable_findings(states, check=CHECK):
    """A ``gpudirect_unavailable`` finding (verdict warn) per host where GPUDirect was wanted but cannot run.

    ``states``: host -> ``planning.gpudirect.host_gpudirect``.
    """
    out = []
    for host in sorted(states or {}):
        state = states[host] or {}
        if not state.get("wanted") or state.get("enabled") or not state.get("cause"):
            continue
        out.append({
            "kind": "finding", "host": host, "peer": None,
            "params": {"check": check, "finding": "gpudirect_unavailable", "family": "rdma_gpudirect", "rail": None,
                       "memory": "cuda", "setting": state.get("setting")},
            "metrics": {"gpus": state.get("gpus")},
            "verdict": "warn", "cause": "GPUDirect RDMA was not tested: %s" % state["cause"],
            "fix": state.get("fix"), "evidence": [],
        })
    return out


def gpudirect_verdicts(records, states=None, min_ratio=DEFAULT_MIN_RATIO, check=CHECK):
    """{rows, findings, summary} from the host-memory and GPU-memory records of one run."""
    rows = gpudirect_rows(records, min_ratio)
    findings = slow_findings(rows, min_ratio, check) + unavailable_findings(states, check)
    summary = {"rails": len(rows), "slow": sum(1 for r in rows if r["slow"]),
               "hosts": sorted(set(r["host"] for r in rows)),
               "unavailable": sorted(f["host"] for f in findings if f["params"]["finding"] == "gpudirect_unavailable")}
    return {"rows": rows, "findings": findings, "summary": summary}
