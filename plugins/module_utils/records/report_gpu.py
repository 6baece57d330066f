# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report's GPU x NIC table: GPU-memory against host-memory bandwidth of every GPU tested (pure).

One row per host and GPU the pass from GPU memory tested (its index, PCI
address and bus path to the NIC, ``gpu_path``), one column per rail; a cell
holds the GPU's GPU-memory bandwidth (the median over the first-pass pairs
it took part in, retests left out), the host-memory bandwidth of the same
host and rail over the same operations, and their ratio. ``slow``: the run
named that GPU (a ``gpudirect_gpu_slow`` finding) or found its rail's
GPU-memory bandwidth far below host memory's (``gpudirect_slow``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.stats import median

SLOW_FINDINGS = ("gpudirect_gpu_slow", "gpudirect_slow")
# the rows a page shows: beyond, the slow ones and the lowest ratios first (a 1,024-host run of 8 GPUs is 8,192 rows)
ROWS_SHOWN = 64


def _pair_bw(rec):
    params = rec.get("params") or {}
    if rec.get("kind") != "rdma_bw" or not rec.get("peer") or params.get("retest") or \
            rec.get("verdict") in ("error", "skipped"):
        return None
    value = (rec.get("metrics") or {}).get("bw_gbps")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _ends(rec):
    params = rec.get("params") or {}
    return ((rec.get("host"), params.get("gpu"), params.get("gpu_pci"), params.get("gpu_path"), params.get("device")),
            (rec.get("peer"), params.get("peer_gpu"), params.get("peer_gpu_pci"), params.get("peer_gpu_path"),
             params.get("peer_device")))


def _slow_places(records):
    """{(host, rail, gpu)} of the GPUs a finding names; a ``gpudirect_slow`` finding names its GPU."""
    out = set()
    for rec in records:
        params = rec.get("params") or {}
        if rec.get("kind") == "finding" and params.get("finding") in SLOW_FINDINGS:
            out.add((rec.get("host"), params.get("rail"), params.get("gpu")))
    return out


def gpu_table(records):
    """``{rails, rows: [{host, gpu, gpu_pci, gpu_path, cells: {rail: {device, cuda_gbps, host_gbps, ratio, pairs,
    slow}}}]}``; empty lists when nothing ran from GPU memory."""
    cuda, host = {}, {}
    records = [r for r in records or [] if isinstance(r, dict)]
    for rec in records:
        value = _pair_bw(rec)
        if value is None:
            continue
        params = rec.get("params") or {}
        rail, op = params.get("rail"), params.get("op")
        for name, gpu, pci, path, device in _ends(rec):
            if params.get("memory") == "cuda":
                if gpu is None:
                    continue
                entry = cuda.setdefault((name, gpu), {"gpu_pci": pci, "gpu_path": path, "cells": {}})
                cell = entry["cells"].setdefault(rail, {"device": device, "values": [], "ops": set()})
                cell["values"].append(value)
                cell["ops"].add(op)
            else:
                host.setdefault((name, rail), []).append((op, value))
    slow = _slow_places(records)
    rows = []
    for (name, gpu) in sorted(cuda, key=lambda key: (natural_key(str(key[0])), key[1])):
        entry = cuda[(name, gpu)]
        cells = {}
        for rail, cell in entry["cells"].items():
            cuda_gbps = median(cell["values"])
            host_gbps = median([v for op, v in host.get((name, rail)) or [] if op in cell["ops"]])
            cells[rail] = {"device": cell["device"], "cuda_gbps": cuda_gbps, "host_gbps": host_gbps,
                           "ratio": round(cuda_gbps / host_gbps, 4) if host_gbps else None,
                           "pairs": len(cell["values"]), "slow": (name, rail, gpu) in slow}
        rows.append({"host": name, "gpu": gpu, "gpu_pci": entry["gpu_pci"], "gpu_path": entry["gpu_path"],
                     "cells": cells})
    rails = sorted(set(rail for row in rows for rail in row["cells"]), key=lambda r: natural_key(str(r)))
    return {"rails": rails, "rows": rows}


def cell_text(cell):
    """'GPU 45.1 / host 46 Gb/s (98%)', '... SLOW' when a finding names it; '-' for a rail the GPU was not tested on."""
    if not cell:
        return "-"
    ratio = "" if cell.get("ratio") is None else " (%.0f%%)" % (cell["ratio"] * 100)
    return "GPU %s / host %s Gb/s%s%s" % (_number(cell["cuda_gbps"]), _number(cell["host_gbps"]), ratio,
                                          " SLOW" if cell.get("slow") else "")


def _number(value):
    return "-" if value is None else "%.3g" % value


def header(table):
    """The table's header cells: the GPU's columns, then one per rail."""
    return ["host", "GPU", "PCI", "path to NIC"] + ["rail %s" % rail for rail in table["rails"]]


def row_cells(table, row):
    """A row's cells as text, in :func:`header`'s order."""
    return [str(row["host"]), str(row["gpu"]), str(row["gpu_pci"] or "-"), str(row["gpu_path"] or "-")] + [
        cell_text(row["cells"].get(rail)) for rail in table["rails"]]


def _lowest_ratio(row):
    ratios = [c["ratio"] for c in row["cells"].values() if c.get("ratio") is not None]
    return min(ratios) if ratios else 1.0


def shown_rows(table, limit=ROWS_SHOWN):
    """(rows, title note): every row up to ``limit``, else the ``limit`` worst (a GPU a finding names first, then
    the lowest GPU-memory / host-memory ratio) and a note that says so."""
    rows = table["rows"]
    if len(rows) <= limit:
        return rows, ""
    worst = sorted(rows, key=lambda row: (not any(c.get("slow") for c in row["cells"].values()), _lowest_ratio(row),
                                          natural_key(str(row["host"])), row["gpu"]))[:limit]
    return worst, ", the %d worst shown" % limit
