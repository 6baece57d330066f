# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collectives' part of the report: which records are collective runs, their node sets, and the bus-bandwidth
lines of the chart (one per library, operation and node count, split by report_identity.variants when runs of one
name measured different things, so no line merges two)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import heapq

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_identity import (
    OP_PARAMS,
    op_of,
    split_by_variant,
    with_variant,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_values import BAD, VERDICT_ORDER, num

# The bus-bandwidth chart draws this many lines at most (per-node runs give one per node): the lowest ones.
CHART_LINES = 16
# A series' verdict: the worst of its runs' among these (a run that passed on retest is flaky, not failed).
SHOWN = tuple(verdict for verdict in VERDICT_ORDER if verdict in BAD + ("flaky",))


def _is_retest_run(record):
    return bool((record.get("params") or {}).get("retest") or record.get("retest"))


def size_of(record):
    """The message size a record names (params size, bytes, msg_size or message_size), or None."""
    params = record.get("params") or {}
    for key in ("size", "bytes", "msg_size", "message_size"):
        value = num(params.get(key))
        if value is not None:
            return value
    return None


def is_collective(record):
    """A collective run's record (NCCL, HCCL): a bus bandwidth over a node set, not a link between two hosts."""
    kind = str(record.get("kind"))
    if kind in ("regression", "summary"):
        return False
    metrics = record.get("metrics") or {}
    return "collective" in kind or "nccl" in kind or "hccl" in kind or "busbw_gbs" in metrics


# What is not a line of its own in the bus-bandwidth chart: the name says these, and a size is a point of a line.
_SERIES_NAMED = OP_PARAMS + ("library", "nodes", "scope", "size", "bytes", "msg_size", "message_size")


def collective_hosts(record):
    """The node set of a collective record: params.hosts, else params.nodes when it is a list, else its host."""
    params = record.get("params") or {}
    for key in ("hosts", "nodes"):
        if isinstance(params.get(key), list) and params[key]:
            return [str(h) for h in params[key]]
    return [str(record.get("host"))]


def _node_count(record):
    """How many nodes a collective ran on: its node set's size, else params.nodes when it is a number."""
    params = record.get("params") or {}
    if not isinstance(params.get("hosts"), list) and not isinstance(params.get("nodes"), list):
        count = num(params.get("nodes"))
        if count is not None:
            return int(count)
    return len(collective_hosts(record))


def _series_name(record):
    """'nccl all_reduce 8 nodes', 'all_gather pool-a', 'nccl all_reduce node7' (a per-node run): library,
    operation and the node count, the scope, or the node."""
    params = record.get("params") or {}
    count = _node_count(record)
    where = params.get("scope") or ("%d nodes" % count if count > 1 else collective_hosts(record)[0])
    return " ".join(str(part) for part in (params.get("library"), op_of(record), where) if part)


def _with_node_set(record):
    """The record with its node set as params.hosts (a record that names only its first host: that host)."""
    return dict(record, params=dict(record.get("params") or {}, hosts=collective_hosts(record)))


def _row_points(rows):
    """(bytes, busbw) of each table row of a collective record (out-of-place when the row has both)."""
    points = []
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict):
            continue
        size = num(row.get("bytes", row.get("size")))
        value = num(row.get("busbw_gbs"))
        if value is None and isinstance(row.get("out_of_place"), dict):
            value = num(row["out_of_place"].get("busbw_gbs"))
        if size and value is not None:
            points.append((size, value))
    return points


def collective_series(records):
    """busbw vs message size series: [{name, points: [(bytes, busbw_gbs)], verdict, transport}].

    ``name``: library, operation and node count ('nccl all_reduce 8 nodes'),
    with the variant when runs of that name measured different things (other
    node sets, data types: report_identity.variants), so no line merges two.
    ``transport``: the networks the runs of the series used (``IB``, ``Socket``, ...), joined, or None.
    """
    series = {}
    transports = {}
    named = {}
    for record in records or []:
        # a retest is no point of the first pass's line: the retests' section shows it, its run's verdict says it
        if is_collective(record) and not _is_retest_run(record):
            named.setdefault(_series_name(record), []).append(record)
    lines = split_by_variant(named, record_of=_with_node_set, skip=_SERIES_NAMED)
    for (base, variant), members in sorted(lines.items()):
        for record in members:
            _add_to_series(series, transports, with_variant(base, variant), record)
    out = []
    for name in sorted(series):
        points = sorted(set(series[name]["points"]))
        if points:
            out.append(dict(series[name], points=points, transport=", ".join(sorted(transports.get(name, ()))) or None))
    return out


def lowest_series(series, limit=CHART_LINES):
    """The ``limit`` series of the lowest peak bus bandwidth (the ones to look at), in name order."""
    if len(series) <= limit:
        return list(series)
    picked = heapq.nsmallest(limit, series, key=lambda entry: (max(v for _s, v in entry["points"]), entry["name"]))
    return sorted(picked, key=lambda entry: entry["name"])


def _add_to_series(series, transports, name, record):
    """The points, transport and worst verdict of one collective record, into the series ``name``."""
    metrics = record.get("metrics") or {}
    entry = series.setdefault(name, {"name": name, "points": [], "verdict": "pass"})
    if metrics.get("transport"):
        transports.setdefault(name, set()).add(str(metrics["transport"]))
    verdict = record.get("verdict")
    if verdict in SHOWN and (entry["verdict"] not in SHOWN or SHOWN.index(verdict) < SHOWN.index(entry["verdict"])):
        entry["verdict"] = verdict
    entry["points"].extend(_row_points(metrics.get("rows") or metrics.get("series")))
    size, value = size_of(record), num(metrics.get("busbw_gbs"))
    if size and value is not None:
        entry["points"].append((size, value))
