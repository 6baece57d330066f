# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The result dictionary of parse_nccl_tests: its empty form, and the summary and verdict built from the
rows and errors once the text or the JSON was read."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import snake_case, to_int, to_text

GROUP_NAMES = ("out_of_place", "in_place")
SECONDARY = ("test_failure", "rank_failed", "no_table")   # consequences: listed after their cause


def empty_result():
    return {
        "test": None, "collective": None, "version": None, "nccl_version": None, "header": {},
        "ranks": [], "nranks": 0, "hosts": [], "rows": [], "avg_busbw_gbs": None, "avg_busbw_source": None,
        "avg_busbw_status": None, "max_busbw_gbs": None, "max_busbw_bytes": None,
        "busbw_at_max_bytes_gbs": None, "out_of_bounds": None, "out_of_bounds_ok": None,
        "out_of_bounds_status": None, "transport": None, "transport_kind": None, "networks": [],
        "channel_transports": [], "gdr": None, "nvls_channels": None, "completed": False, "format": "text",
        "errors": [], "warnings": [], "ok": False,
    }


def nccl_version_from_code(code):
    """22703 -> '2.27.3', 2708 -> '2.7.8' (NCCL_VERSION_CODE); None if not a code."""
    code = to_int(code)
    if code is None or code <= 0:
        return None
    if code >= 10000:
        return "%d.%d.%d" % (code // 10000, (code % 10000) // 100, code % 100)
    return "%d.%d.%d" % (code // 1000, (code % 1000) // 100, code % 100)


def collective_of(test):
    """'all_reduce_perf_mpi' -> 'all_reduce'."""
    if not test:
        return None
    name = os.path.basename(to_text(test))
    if name.endswith("_mpi"):
        name = name[:-4]
    if name.endswith("_perf"):
        name = name[:-5]
    return snake_case(name) or None


def _groups(row):
    """The measurement groups of a row that were printed (out-of-place, in-place)."""
    for key in GROUP_NAMES:
        group = row.get(key)
        if group:
            yield group


def _busbw(group):
    bw = group.get("busbw_gbs")
    return float(bw) if isinstance(bw, (int, float)) else None


def _summarise_max(result):
    """The highest bus bandwidth of any row, and its size."""
    best = None
    for row in result["rows"]:
        for group in _groups(row):
            bw = _busbw(group)
            if bw is not None and (best is None or bw > best[0]):
                best = (bw, row.get("bytes"))
    if best:
        result["max_busbw_gbs"] = best[0]
        result["max_busbw_bytes"] = best[1]


def _summarise_largest_size(result):
    """The best bus bandwidth at the largest size measured."""
    sized = [r for r in result["rows"] if isinstance(r.get("bytes"), int)]
    if not sized:
        return
    top = max(r["bytes"] for r in sized)
    bws = [bw for row in sized if row["bytes"] == top for bw in map(_busbw, _groups(row)) if bw is not None]
    result["busbw_at_max_bytes_gbs"] = max(bws) if bws else None


def _summarise_average(result):
    """Without a footer the average bus bandwidth is that of the rows."""
    if result["avg_busbw_gbs"] is not None:
        return
    values = [bw for row in result["rows"] for bw in map(_busbw, _groups(row)) if bw is not None]
    if values:
        result["avg_busbw_gbs"] = round(sum(values) / len(values), 6)
        result["avg_busbw_source"] = "rows"


def _wrong_sizes(result):
    """Sizes of the rows with a nonzero #wrong count (an 'error' column holds a max error, not a count)."""
    if result["header"].get("wrong_column") == "error":
        return []
    bad = []
    for row in result["rows"]:
        for group in _groups(row):
            wrong = group.get("wrong")
            if isinstance(wrong, int) and wrong > 0:
                bad.append(row.get("bytes"))
    return bad


def _judge_wrong_data(result, errors):
    """Wrong data: the footer decides; without a footer, nonzero #wrong counts."""
    bad_rows = _wrong_sizes(result)
    if result["out_of_bounds"] is not None and result["out_of_bounds"] > 0:
        if not errors.has("wrong_results"):
            errors.add("wrong_results", "Out of bounds values : %d FAILED" % result["out_of_bounds"])
    elif result["out_of_bounds"] is None and bad_rows:
        errors.add("wrong_results", "nonzero #wrong at sizes %s" % ", ".join(str(b) for b in sorted(set(bad_rows))))
    if bad_rows:
        entry = errors.get("wrong_results")
        if entry is not None:
            entry["sizes"] = sorted(set(b for b in bad_rows if b is not None))


def finish(result, errors, proxy_service):
    """Summaries, the verdict on the data, and the errors and warnings as lists."""
    _summarise_max(result)
    _summarise_largest_size(result)
    _summarise_average(result)
    if result["test"] and not result["collective"]:
        result["collective"] = collective_of(result["test"])
    _judge_wrong_data(result, errors)
    if proxy_service and errors.has("segfault"):
        errors.get("segfault")["hint"] = (
            "The crash is in ncclProxyService: the container lacks the IPC_LOCK capability / memlock limit; "
            "add capabilities: add: [IPC_LOCK] to the pod's securityContext.")
    if not result["rows"]:
        errors.add("no_table", "no nccl-tests result rows in the output")
    elif not result["completed"] and result["format"] == "text":
        result["warnings"].add("no result footer (Avg bus bandwidth): the output may be cut or the run unfinished")
    result["warnings"] = result["warnings"].as_list()
    result["errors"] = errors.entries(last=SECONDARY)
    result["ok"] = bool(result["rows"]) and not result["errors"]
