# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The JSON nccl-tests writes with -J/--output_file <name>.json (one object), and the rccl-tests JSON
list (one object per measurement), read into the result of parse_nccl_tests."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_errors import (
    BITWISE_HINT, add_last_error)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_result import nccl_version_from_code
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    snake_case, to_float, to_int, to_text, unique)

_CONFIG_KEYS = {"nthreads": "nthread", "ngpus": "ngpus", "minimum_bytes": "min_bytes", "maximum_bytes": "max_bytes",
                "step_factor": "step_factor", "step_bytes": "step_bytes", "warmup_iters": "warmup_iters",
                "iterations": "iters", "aggregated_iterations": "agg_iters", "validation": "validation",
                "graph": "graph", "bitwise_repeats": "bitwise_repeats", "per_iter_skip": "per_iter_skip"}
_CONFIG_FLAGS = {"blocking_collectives": "blocking", "parallel_init": "parallel_init",
                 "per_iter_timing": "per_iter_timing"}
_PER_ITER_STATS = ("min_us", "max_us", "avg_us", "p50_us", "p95_us", "p99_us", "stdev_us", "cv_pct")


def _json_bool(value):
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "yes", "1"):
            return True
        if low in ("false", "no", "0"):
            return False
    return None


def _json_number(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    number = to_float(value)
    if number is not None and number == int(number) and abs(number) < 2 ** 63:
        return int(number)
    return number


def _json_float(value):
    if isinstance(value, bool):
        return None
    return to_float(value)


def _json_str(value):
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        return None
    text = to_text(value).strip()
    return text or None


def _json_size(value):
    number = _json_number(value)
    return number if isinstance(number, int) and number >= 0 else None


def _json_group(group):
    if not isinstance(group, dict):
        return None
    out = {
        "time_us": _json_float(group.get("time", group.get("cpu_time"))),
        "algbw_gbs": _json_float(group.get("alg_bw", group.get("algBw"))),
        "busbw_gbs": _json_float(group.get("bus_bw", group.get("busBw"))),
        "wrong": _json_number(group.get("nwrong")) if group.get("nwrong") is not None else None,
    }
    bitwise = group.get("bitwise")
    if isinstance(bitwise, dict):
        out["bitdiff"] = _json_number(bitwise.get("different_bits"))
    return out


def _dict_at(doc, key):
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def _list_at(doc, key):
    value = doc.get(key)
    return value if isinstance(value, list) else []


def read_nccl_json(doc, result, errors):
    """Read the nccl-tests JSON object into result."""
    _read_identity(doc, result)
    config = _dict_at(doc, "config")
    _read_config(config, result["header"])
    # util.cu writes "devices" inside "config"; accept it at the top level too.
    devices = config.get("devices") if isinstance(config.get("devices"), list) else doc.get("devices")
    _read_devices(devices if isinstance(devices, list) else [], result)
    for item in _list_at(doc, "results"):
        row = _json_row(item) if isinstance(item, dict) else None
        if row is not None:
            result["rows"].append(row)
    _read_out_of_bounds(doc, result)
    _read_average(doc, result, errors)
    _read_bitwise(doc, result, errors)
    for message in _list_at(doc, "errors"):
        add_last_error(message, errors, result["warnings"])
    if result["rows"]:
        result["header"]["wrong_column"] = "#wrong"


def _read_identity(doc, result):
    """JSON format version, NCCL version (a code or a string) and the test binary."""
    result["header"]["json_version"] = _json_number(doc.get("version"))
    version = _json_str(doc.get("nccl_version"))
    if version:
        result["nccl_version"] = nccl_version_from_code(version) or version
    args = doc.get("args")
    if isinstance(args, list) and args and _json_str(args[0]):
        result["test"] = os.path.basename(_json_str(args[0])) or None


def _read_config(config, header):
    for key, value in config.items():
        if key == "devices":
            continue
        if key in _CONFIG_KEYS:
            header[_CONFIG_KEYS[key]] = _json_number(value)
        elif key in _CONFIG_FLAGS:
            header[_CONFIG_FLAGS[key]] = _json_bool(value)
        else:
            header[snake_case(key)] = value if isinstance(value, (int, float, str, bool)) else None


def _read_devices(devices, result):
    """One rank entry per rank (the first entry of a rank wins)."""
    seen = set()
    for dev in devices:
        if not isinstance(dev, dict):
            continue
        rank = _json_number(dev.get("rank"))
        if not isinstance(rank, int) or rank in seen:
            continue
        seen.add(rank)
        result["ranks"].append({
            "rank": rank, "group": _json_number(dev.get("group")), "pid": _json_number(dev.get("pid")),
            "host": _json_str(dev.get("hostname")),
            "device": _json_number(dev.get("device")),
            "bus_id": _json_str(dev.get("device_hex")),
            "name": _json_str(dev.get("device_info")),
        })
    result["nranks"] = len(result["ranks"])
    result["hosts"] = unique(entry["host"] for entry in result["ranks"] if entry["host"])


def _json_row(item):
    """A result row from one 'results' item; None without a size or a measurement."""
    row = {
        "bytes": _json_size(item.get("size")), "count": _json_size(item.get("count")),
        "type": _json_str(item.get("type")),
        "redop": _json_str(item.get("redop")),
        "root": to_int(_json_str(item.get("root"))),
        "out_of_place": _json_group(item.get("out_of_place")),
        "in_place": _json_group(item.get("in_place")),
        "partial": False,
    }
    if item.get("actual_iterations") is not None:
        row["actual_iterations"] = _json_number(item.get("actual_iterations"))
    for key in ("out_of_place", "in_place"):
        _add_per_iter_stats(item.get(key + "_per_iter"), row.get(key))
    if isinstance(row["bytes"], int) and (row["out_of_place"] or row["in_place"]):
        return row
    return None


def _add_per_iter_stats(stats, group):
    if isinstance(stats, dict) and isinstance(group, dict):
        for name in _PER_ITER_STATS:
            if name in stats:
                group["iter_" + name] = _json_float(stats.get(name))


def _read_out_of_bounds(doc, result):
    oob = doc.get("out_of_bounds")
    if not isinstance(oob, dict):
        return
    result["out_of_bounds"] = _json_size(oob.get("count"))
    result["out_of_bounds_ok"] = _json_bool(oob.get("okay"))
    if result["out_of_bounds_ok"] is not None:
        result["out_of_bounds_status"] = "OK" if result["out_of_bounds_ok"] else "FAILED"


def _read_average(doc, result, errors):
    """The average bus bandwidth: like the text footer, it marks the run completed."""
    avg = doc.get("average_bus_bandwidth")
    if not isinstance(avg, dict):
        return
    result["avg_busbw_gbs"] = _json_float(avg.get("bandwidth"))
    result["avg_busbw_source"] = "footer" if result["avg_busbw_gbs"] is not None else None
    okay = _json_bool(avg.get("okay"))
    if okay is not None:
        result["avg_busbw_status"] = "OK" if okay else "FAILED"
        if not okay:
            errors.add("bandwidth_below_min", "average_bus_bandwidth okay=false (%s GB/s)" % avg.get("bandwidth"))
    result["completed"] = True


def _read_bitwise(doc, result, errors):
    bitwise = doc.get("bitwise_mismatches")
    if isinstance(bitwise, dict) and _json_number(bitwise.get("count")):
        result["header"]["bitwise_mismatches"] = _json_number(bitwise.get("count"))
        errors.add("wrong_results", "bitwise_mismatches count=%s" % bitwise.get("count"), hint=BITWISE_HINT)


def read_rccl_json(doc, result):
    """rccl-tests --output_file JSON: one object per (size, in-place) measurement."""
    rows = {}
    order = []
    for item in doc:
        if not isinstance(item, dict) or item.get("size") is None:
            continue
        key = tuple(repr(item.get(k)) for k in ("numCycle", "name", "size", "type", "redop"))
        if key not in rows:
            rows[key] = {"bytes": _json_size(item.get("size")), "count": None,
                         "type": _json_str(item.get("type")), "redop": _json_str(item.get("redop")), "root": None,
                         "out_of_place": None, "in_place": None, "partial": False}
            order.append(key)
            if result["test"] is None and _json_str(item.get("name")):
                result["test"] = _json_str(item.get("name"))
                result["collective"] = snake_case(result["test"]) or None
        wrong = item.get("wrong", item.get("#wrong"))
        group = {"time_us": _json_float(item.get("time")), "algbw_gbs": _json_float(item.get("algBw")),
                 "busbw_gbs": _json_float(item.get("busBw")),
                 "wrong": None if wrong is None or to_text(wrong).upper() == "N/A" else _json_number(wrong)}
        rows[key]["in_place" if _json_number(item.get("inPlace")) else "out_of_place"] = group
        for name in ("nodes", "ranks", "ranksPerNode", "gpusPerRank", "gpus"):
            if item.get(name) is not None:
                result["header"][snake_case(name)] = _json_number(item.get(name))
    result["rows"] = [rows[k] for k in order if isinstance(rows[k]["bytes"], int)]
    if result["rows"]:
        result["header"]["wrong_column"] = "#wrong"
