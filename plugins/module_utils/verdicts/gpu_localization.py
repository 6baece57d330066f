# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which GPU's path to its NIC is slow, from the GPU-memory records after their retests and thresholds (pure).

A GPU-memory test measures two GPUs, their PCIe paths and the NICs between
them. A GPU (host, rail, GPU index) is named ``gpudirect_gpu_slow`` when
its bandwidth from GPU memory (the median over the pairs it took part in)
is a low outlier among the GPUs tested over the same rail (robust z from
``stats``, ``commcheck_outlier_z`` and ``commcheck_outlier_min_rel``) and
one of its pairs failed, or when its pairs fail with most of its peers (two
at least) after the retests, AND none of its slow pairs passed on retest (flaky), AND the host-memory tests of the same NIC are fine:
then the NIC,
its links and the host are not at fault, the GPU's path is (its PCIe link,
the switch or root port between it and the NIC, ACS). Where host memory on
that NIC fails too, the host-memory localization names the NIC or the host
and no GPU is named. A low outlier none of whose pairs failed is a
``gpudirect_gpu_slow`` warning: it reads below its peers, but nothing failed
to retest, so it names no culprit.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import stats

FINDING = "gpudirect_gpu_slow"
CHECK = "rdma_perf"
BAD = ("fail", "error")
# the verdicts of a pair record that say nothing of its ends
NOT_MEASURED = ("skipped", "error")

CAUSE = ("GPU %s (%s, %s path to %s) moves %.2f Gb/s from GPU memory against %.2f Gb/s for the other GPUs tested "
         "over rail %s, while host memory on the same NIC is fine: the GPU's own PCIe path is slow (its link trained "
         "down, the PCIe switch or root port between it and the NIC, ACS redirecting peer-to-peer traffic)")
FIX = ("check the GPU's link (lspci -vv: LnkSta against LnkCap, nvidia-smi -q -d PCIE), nvidia-smi topo -m between "
       "this GPU and the NIC, ACS on the switch's downstream ports; reseat or replace the GPU, or compare with its "
       "twin on another node")


def is_cuda(rec):
    return (rec.get("params") or {}).get("memory") == "cuda"


def _is_pair(rec):
    return bool(rec.get("peer")) and rec.get("kind") == "rdma_bw" and not (rec.get("params") or {}).get("retest")


def gpu_ends(records, bad_verdicts=BAD):
    """{(host, rail, gpu): {device, gpu_pci, gpu_path, values, peers, flaky}} over the GPU-memory pair records (first
    pass; ``values``: Gb/s; ``peers``: peer end -> bad on any record; ``flaky``: its records that failed and passed
    on retest)."""
    out = {}
    for rec in records or []:
        if not is_cuda(rec) or not _is_pair(rec) or rec.get("verdict") in NOT_MEASURED:
            continue
        params = rec.get("params") or {}
        value = (rec.get("metrics") or {}).get("bw_gbps")
        ends = ((rec["host"], params.get("device"), params.get("gpu"), params.get("gpu_pci"), params.get("gpu_path"),
                 (rec["peer"], params.get("peer_gpu"))),
                (rec["peer"], params.get("peer_device"), params.get("peer_gpu"), params.get("peer_gpu_pci"),
                 params.get("peer_gpu_path"), (rec["host"], params.get("gpu"))))
        for host, device, gpu, pci, path, other in ends:
            if gpu is None:
                continue
            entry = out.setdefault((host, params.get("rail"), gpu), {"device": device, "gpu_pci": pci,
                                                                     "gpu_path": path, "values": [], "peers": {},
                                                                     "flaky": 0})
            entry["flaky"] += 1 if rec.get("verdict") == "flaky" else 0
            if value is not None:
                entry["values"].append(float(value))
            entry["peers"][other] = entry["peers"].get(other, False) or rec.get("verdict") in bad_verdicts
    return out


def nic_fine(records, host, rail, bad_verdicts=BAD):
    """Whether host memory on the host's NIC of ``rail`` measured fine: it has judged host-memory pair records
    there, none of them bad."""
    seen = False
    for rec in records or []:
        if is_cuda(rec) or not rec.get("peer") or rec.get("kind") not in ("rdma_bw", "rdma_lat"):
            continue
        params = rec.get("params") or {}
        if params.get("retest") or host not in (rec.get("host"), rec.get("peer")) or params.get("rail") != rail:
            continue
        if rec.get("verdict") in bad_verdicts:
            return False
        seen = seen or rec.get("verdict") not in NOT_MEASURED
    return seen


def slow_gpus(gpu_records, host_records, outlier_z=stats.OUTLIER_Z, outlier_min_rel=stats.OUTLIER_MIN_REL,
              bad_verdicts=BAD):
    """[{host, rail, gpu, device, gpu_pci, gpu_path, gbps, rail_gbps, z, bad_peers, peers, outlier, fails_with_most,
    nic_fine, flaky, named, below}] for every GPU tested from GPU memory; ``named``: the GPU is at fault (see the module
    doc); ``below``: it reads below the other GPUs of its rail though none of its pairs failed (a warning)."""
    ends = gpu_ends(gpu_records, bad_verdicts)
    medians = dict((key, stats.median(entry["values"])) for key, entry in ends.items() if entry["values"])
    rows = []
    for key in sorted(ends, key=lambda k: (natural_key(str(k[0])), str(k[1]), k[2])):
        host, rail, gpu = key
        entry = ends[key]
        peers = [medians[k] for k in medians if k[1] == rail]
        center, scale = stats.spread(peers)
        value = medians.get(key)
        z = stats.z_score(value, center, scale) if value is not None and len(peers) >= 3 else None
        rel = stats.relative_distance(value, center) if value is not None and center else 0.0
        outlier = z is not None and stats.fleet_outlier(z, rel, True, outlier_z, outlier_min_rel)
        bad = sorted((p for p, is_bad in entry["peers"].items() if is_bad), key=lambda p: (natural_key(p[0]), p[1]))
        most = len(bad) >= 2 and len(bad) > 0.5 * len(entry["peers"])
        fine = nic_fine(host_records, host, rail, bad_verdicts)
        # its slow pairs passed on retest: a transient, not its path
        cleared = entry["flaky"] > 0 and not bad
        rows.append({"host": host, "rail": rail, "gpu": gpu, "device": entry["device"], "gpu_pci": entry["gpu_pci"],
                     "gpu_path": entry["gpu_path"], "gbps": value, "rail_gbps": center,
                     "z": round(z, 3) if z is not None else None, "bad_peers": len(bad),
                     "peers": len(entry["peers"]), "outlier": outlier, "fails_with_most": most, "nic_fine": fine,
                     "flaky": entry["flaky"], "named": bool(fine and not cleared and (most or (outlier and bad))),
                     "below": bool(fine and not cleared and outlier and not most and not bad)})
    return rows


def findings(rows, check=CHECK):
    """A ``gpudirect_gpu_slow`` finding (``params.component`` ``gpu``) per named GPU (verdict fail) and per GPU only
    below the others of its rail (verdict warn: no pair of it failed, so it names no culprit)."""
    out = []
    for row in rows or []:
        if not row.get("named") and not row.get("below"):
            continue
        out.append({
            "kind": "finding", "host": row["host"], "peer": None,
            "params": {"check": check, "finding": FINDING, "family": "rdma_gpudirect", "component": "gpu",
                       "rail": row["rail"], "device": row["device"], "gpu": row["gpu"], "gpu_pci": row["gpu_pci"],
                       "gpu_path": row["gpu_path"], "memory": "cuda", "confidence": "high" if row["outlier"]
                       and row["fails_with_most"] else "medium"},
            "metrics": {"cuda_gbps": row["gbps"], "rail_gbps": row["rail_gbps"], "z": row["z"],
                        "bad_peers": row["bad_peers"], "peers": row["peers"]},
            "verdict": "fail" if row.get("named") else "warn",
            "cause": CAUSE % (row["gpu"], row["gpu_pci"], row["gpu_path"], row["device"], row["gbps"] or 0.0,
                              row["rail_gbps"] or 0.0, row["rail"]),
            "fix": FIX,
            "evidence": ["%s GPU %s rail %s: %s of %s GPU-memory pairs bad, robust z %s; host memory on %s fine"
                         % (row["host"], row["gpu"], row["rail"], row["bad_peers"], row["peers"], row["z"],
                            row["device"])],
        })
    return out


def named_places(rows):
    """{(host, rail, gpu)} of the named GPUs (their ``gpudirect_slow`` rows are theirs, not a setting's)."""
    return set((r["host"], r["rail"], r["gpu"]) for r in rows or [] if r.get("named"))
