# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The perftest result being read: its state, the result table (header, rows, units) and the final
settings, side and warnings."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import math
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.perftest_errors import (
    GPU_MR_DETAIL,
    ZERO_GID_DETAIL,
    PERFTEST_ERRORS,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers import wc_status as _wc
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    MIB_PER_SEC_TO_GBPS,
    error_entry,
    holds_any,
    snake_case,
    to_int,
)

_CLIENT_HINT = re.compile(
    r"Couldn't connect to|Failed to connect RDMA CM|resolve|ADDR_ERROR|rdma_client|Function rdma_connect|"
    r"Unable to connect \(retries", re.I)
_SERVER_HINT = re.compile(
    r"Couldn't listen|Failed to bind|rdma_bind_addr|rdma_listen|Failed to listen|accept\(\)|rdma_accept|"
    r"rdma_server", re.I)
COMMAND_RE = re.compile(r"\bib_(write|read|send|atomic)_(bw|lat)\b")
_BIDIR_FLAG_RE = re.compile(r"(?:^|\s)(?:-b|--bidirectional)(?:\s|$)")

_BW_UNITS = {"mb/sec": MIB_PER_SEC_TO_GBPS, "mib/sec": MIB_PER_SEC_TO_GBPS, "mbyte/sec": MIB_PER_SEC_TO_GBPS,
             "gb/sec": 1.0, "gbit/sec": 1.0, "gbps": 1.0, "gbits/sec": 1.0}
_TIME_UNITS = {"usec": 1.0, "us": 1.0, "nsec": 0.001, "ns": 0.001, "msec": 1000.0, "ms": 1000.0}

BW_ROW_KEYS = ("bytes", "iterations", "bw_peak_gbps", "bw_avg_gbps", "msg_rate_mpps")
LAT_ROW_KEYS = ("bytes", "iterations", "t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us",
                "p99_us", "p99_9_us", "tps")
MAX_PROBE = 1024
_MAX_WARNINGS = 200
MAX_UNKNOWN_LISTED = 50   # lines no rule knows, listed as warnings; more are counted


def _column_spec(name):
    """Header column name -> (key, kind, unit).  kind: int | bw | time | float."""
    text = name.strip()
    base, unit = text, None
    if "[" in text and text.endswith("]"):
        base, unit = text[:text.index("[")].strip(), text[text.index("[") + 1:-1].strip()
    low = re.sub(r"\s+", " ", base.lower())
    fixed = {"#bytes": ("bytes", "int"), "#iterations": ("iterations", "int"), "#sl": ("sl", "int"),
             "bw peak": ("bw_peak", "bw"), "bw average": ("bw_avg", "bw"),
             "bw port1": ("bw_port1", "bw"), "bw port2": ("bw_port2", "bw"),
             "msgrate": ("msg_rate_mpps", "float"), "msgrate port1": ("msg_rate_port1_mpps", "float"),
             "msgrate port2": ("msg_rate_port2_mpps", "float"),
             "t_min": ("t_min", "time"), "t_max": ("t_max", "time"), "t_typical": ("t_typical", "time"),
             "t_avg": ("t_avg", "time"), "t_stdev": ("t_stdev", "time"),
             "99% percentile": ("p99", "time"), "99.9% percentile": ("p99_9", "time"),
             "tps average": ("tps", "float"), "tps": ("tps", "float"), "cpu_util": ("cpu_util_pct", "float")}
    if low in fixed:
        key, kind = fixed[low]
        return key, kind, unit
    key = snake_case(low.replace("%", " pct ").replace("#", "num "))
    if unit:
        key = key + "_" + snake_case(unit.replace("%", "pct"))
    return key or "column", "float", unit


def _split_columns(header):
    """Split a '#bytes ... BW peak[MB/sec] ...' header into column names (names contain spaces).

    Words are grouped: '#name' is a column, a word with ']' closes the column
    its preceding words started, 'tps average' is one column.
    """
    names = []
    pending = []
    words = header[:MAX_PROBE].split()
    index = 0
    while index < len(words):
        word = words[index]
        if word.startswith("#") and not pending:
            names.append(word)
        elif word.lower() == "tps" and index + 1 < len(words) and words[index + 1].lower() == "average":
            if pending:
                names.append(" ".join(pending))
                pending = []
            names.append("tps average")
            index += 1
        else:
            pending.append(word)
            if "]" in word:
                names.append(" ".join(pending))
                pending = []
        index += 1
    if pending:
        names.append(" ".join(pending))
    return names


def _empty_result():
    return {
        "test": None,
        "metric": None,
        "bidirectional": False,
        "side": None,
        "verb": None,
        "atomic_type": None,
        "banner": None,
        "command": None,
        "settings": {},     # finish() fills it: the header fields, typed (_settings)
        "local_addresses": [],
        "remote_addresses": [],
        "columns": [],
        "bw_unit": None,
        "time_unit": None,
        "duration_mode": False,
        "peak_measured": True,
        "gpu_memory": None,
        "connected_at": None,
        "completed_at": None,
        "total_run_time_s": None,
        "rows": [],
        "errors": [],
        "warnings": [],
        "ok": False,
    }


class State(object):
    def __init__(self):
        self.result = _empty_result()
        self.raw_settings = {}
        self.in_header = False
        self.in_usage = False
        self.columns = None        # list of (key, kind, unit) for the current table
        self.last_address = None
        self.error_index = {}      # code -> entry
        self.warnings = []
        self.warning_set = set()
        self.dropped_warnings = 0
        self.seen_banners = set()
        self.bad_rows = 0
        self.program = None        # first ib_*_bw / ib_*_lat name seen anywhere
        self.table_metric = None
        self.last_error = None
        self.plan = None
        self.seen_row_header = False
        self.plan_signature = None
        self.unknown_lines = 0
        self.read_warning = False  # a warning perftest (or its libraries) prints was read


def add_warning(state, text):
    text = text.strip()
    if not text or text in state.warning_set:
        return
    if len(state.warnings) >= _MAX_WARNINGS:
        state.dropped_warnings += 1
        return
    state.warning_set.add(text)
    state.warnings.append(text)


def add_error(state, code, message):
    entry = state.error_index.get(code)
    if entry is None:
        entry = error_entry(code, message, PERFTEST_ERRORS)
        entry["evidence"] = []
        entry["detail"] = None
        state.error_index[code] = entry
        state.result["errors"].append(entry)
    if len(entry["evidence"]) < 20:
        entry["evidence"].append(message.strip())
    state.last_error = entry


def parse_row(state, line):
    """Numbers of one table row keyed by column, or None when the line is no row. Words after the row's
    values (a note someone added: "slow one", "(bad)") are no part of it."""
    columns = state.columns
    tokens = _without_note(line.split(), len(columns))
    if len(tokens) < 3 or len(tokens) > len(columns) + 2:
        return None
    values = {}
    for index, token in enumerate(tokens):
        if index < len(columns) and columns[index][1] == "int":
            if not token.isdigit() or not token.isascii():
                return None
            values[columns[index][0]] = int(token)
            continue
        if "_" in token or not token.isascii():
            return None   # float() also takes '1_0' or non-ASCII digits: perftest prints plain decimals
        try:
            number = float(token)
        except ValueError:
            return None
        if not token[-1].isdigit() and token.lower().lstrip("+-") not in ("nan", "inf", "infinity"):
            return None
        if index < len(columns):
            values[columns[index][0]] = number if math.isfinite(number) else None
    if len(tokens) != len(columns):
        state.bad_rows += 1
    return values


def _without_note(tokens, width):
    """The tokens up to the first one after the row's `width` values that is no number (a note's first word)."""
    for index in range(width, min(len(tokens), width + 3)):
        token = tokens[index]
        if not (token[:1].isdigit() or token[:1] in "+-." and token[1:2].isdigit()):
            return tokens[:index]
    return tokens


def _row_plan(state):
    """(column key, output key, factor or None, cycles) per column for the current units."""
    result = state.result
    signature = (id(state.columns), result["bw_unit"], result["time_unit"])
    if state.plan_signature == signature:
        return state.plan
    bw_factor = _BW_UNITS.get((result["bw_unit"] or "").lower())
    time_unit = (result["time_unit"] or "usec").lower()
    time_factor = _TIME_UNITS.get(time_unit)
    plan = []
    for key, kind, _unit in state.columns:
        if kind == "bw":
            plan.append((key, key + "_gbps", bw_factor or 0.0, False))
        elif kind == "time" and time_unit == "cycles":
            plan.append((key, key + "_us", None, True))
        elif kind == "time":
            plan.append((key, key + "_us", time_factor or 0.0, False))
        else:
            plan.append((key, key, None, False))
    state.plan, state.plan_signature = plan, signature
    return plan


def finish_row(state, values):
    """Column values -> a contract row (Gb/s, microseconds)."""
    result = state.result
    metric = result["metric"] or state.table_metric
    row = {}
    for key, out, factor, cycles in _row_plan(state):
        if key not in values:
            continue
        value = values[key]
        if cycles:
            row[key + "_cycles"] = value
            row[out] = None
        elif factor is None:
            row[out] = value
        else:
            row[out] = round(value * factor, 6) if (value is not None and factor) else None
    for key in (LAT_ROW_KEYS if metric == "lat" else BW_ROW_KEYS):
        if key not in row:
            row[key] = None
    if row.get("bw_peak_gbps") == 0.0:
        # perftest prints 0.00 when it does not measure the peak (-N, -D): a
        # measured peak is never below the average.
        if not result["peak_measured"] or (row.get("bw_avg_gbps") or 0.0) > 0.0:
            row["bw_peak_gbps"] = None
            result["peak_measured"] = False
    return row


def start_table(state, line):
    """A '#bytes ...' header line: the columns (and units) of the result table that follows."""
    names = _split_columns(line)
    if not names or names[0].lower() != "#bytes":
        return
    state.seen_row_header = True
    # perftest sometimes prints the header twice: the second one sets the same columns again
    specs = [_column_spec(name) for name in names]
    state.columns = specs
    result = state.result
    result["columns"] = names
    kinds = set(spec[1] for spec in specs)
    state.table_metric = "lat" if "time" in kinds else ("bw" if "bw" in kinds else None)
    _take_units(state, specs)
    keys = [spec[0] for spec in specs]
    if state.table_metric == "lat" and "tps" in keys and "t_min" not in keys:
        result["duration_mode"] = True


def _take_units(state, specs):
    """The first bandwidth and time units the columns name (the first ones seen stay)."""
    result = state.result
    for _key, kind, unit in specs:
        if kind == "bw" and unit and result["bw_unit"] is None:
            result["bw_unit"] = unit
        if kind == "time" and unit and result["time_unit"] is None:
            result["time_unit"] = unit
    if result["bw_unit"] and result["bw_unit"].lower() not in _BW_UNITS:
        add_warning(state, "unknown bandwidth unit %s: bandwidth values are null" % result["bw_unit"])


def finish(state):
    """The result dict once every line is read."""
    result = state.result
    result["settings"] = _settings(state.raw_settings)
    if state.raw_settings.get("use_rocm_memory") is True and result["gpu_memory"] is None:
        result["gpu_memory"] = "rocm"
    _fill_from_command(state)
    if result["side"] is None:
        result["side"] = _guess_side(state)
    _explain_gpu_registration(result)
    _explain_zero_gid(result)
    _explain_completion_status(result)
    if result["rows"]:
        _demote_errors_a_table_outweighs(state)
    _complete_rows(result)
    _add_final_warnings(state)
    result["warnings"] = state.warnings
    result["ok"] = bool(result["rows"]) and not result["errors"]
    return result


# What a perftest result holds only when a line of perftest's own was read (the command line is not its output).
_READ_KEYS = ("banner", "rows", "columns", "errors", "side", "local_addresses", "remote_addresses", "connected_at",
              "completed_at", "total_run_time_s")


def read_anything(state):
    """Whether any line of perftest's own output was read (a banner, a header field, a row, an error, ...)."""
    result = state.result
    return bool(state.raw_settings) or state.in_usage or state.read_warning or holds_any(result, *_READ_KEYS)


def _str_or_none(value):
    return value if isinstance(value, str) else None


def _int_or_none(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _link_type(link):
    """'Ethernet' / 'IB' for perftest's spellings (it once printed 'Etherent'), other text as is."""
    if not isinstance(link, str):
        return None
    low = link.lower()
    if low.startswith("eth"):     # 'etherent' too
        return "Ethernet"
    return "IB" if low in ("ib", "infiniband") else link


def _rdma_cm(raw):
    rdma_cm = raw["rdma_cm_qps"] if isinstance(raw.get("rdma_cm_qps"), bool) else None
    data_ex = raw.get("data_ex_method")
    if isinstance(data_ex, str):
        rdma_cm = bool(rdma_cm) or data_ex.lower() == "rdma_cm"
    return rdma_cm


def _settings(raw):
    """The header fields, with the contract keys typed (a value of the wrong type is null)."""
    settings = dict(raw)
    settings["device"] = _str_or_none(raw.get("device"))
    settings["qps"] = to_int(raw.get("number_of_qps"))     # None for ON / OFF: to_int takes no bool
    for key in ("transport_type", "connection_type"):
        settings[key] = _str_or_none(raw.get(key))
    settings["mtu"] = _int_or_none(raw.get("mtu"))
    settings["link_type"] = _link_type(raw.get("link_type"))
    settings["gid_index"] = _int_or_none(raw.get("gid_index"))
    settings["rdma_cm"] = _rdma_cm(raw)
    return settings


def _fill_from_command(state):
    """Fall back to the command line (prompt lines) for what the banner did not say."""
    result = state.result
    command = result["command"] or ""
    match = COMMAND_RE.search(command) or COMMAND_RE.search(state.program or "")
    if result["test"] is None and match:
        result["test"] = match.group(1)
    if result["metric"] is None:
        result["metric"] = (match.group(2) if match else None) or state.table_metric
    if result["banner"] is None and command and _BIDIR_FLAG_RE.search(command):
        result["bidirectional"] = True


def _guess_side(state):
    """The waiting banner marked the server already; results or client-only errors mark the client."""
    result = state.result
    messages = [line for entry in result["errors"] for line in [entry["message"]] + entry["evidence"]]
    if result["rows"] or _any_line(_CLIENT_HINT, messages):
        return "client"
    if _any_line(_SERVER_HINT, messages):
        return "server"
    if result["banner"] and result["remote_addresses"] and not messages and not state.seen_row_header:
        # Connected (peer addresses printed) but no result table: a client
        # prints the table header right after the addresses, the server of
        # a latency test never does.
        return "server"
    return None


def _any_line(pattern, lines):
    return any(pattern.search(line) for line in lines)


def _first_match(pattern, lines):
    return next((match for match in (pattern.search(line) for line in lines) if match), None)


def _explain_gpu_registration(result):
    """GPU buffers change the advice for failed memory registration."""
    gpu = result["gpu_memory"]
    if not gpu:
        return
    for entry in result["errors"]:
        if entry["code"] == "mr_alloc_failed":
            entry["detail"] = GPU_MR_DETAIL.format(gpu=gpu.upper() if gpu == "cuda" else "ROCm")


_FAILED_STATUS = re.compile(r"Failed status\s*(\d{1,3})\b")
_FAILED_STATUS_TEXT = re.compile(r"Failed status\s*:?\s*(?P<text>[A-Za-z][A-Za-z ]{2,60}?)\s*(?:[:(,]|wr_id|$)")
_SYNDROME = re.compile(r"syndrom[e]?\s*(0x[0-9a-fA-F]{1,8})")
_COMPLETION_SIDE = re.compile(r"Completion wi?th error at (client|server)")


def completion_status(text):
    """The ibv_wc_status of a perftest completion error, by its number or by its ibv_wc_status_str() text."""
    number = _FAILED_STATUS.search(text)
    if number:
        return int(number.group(1))
    words = _FAILED_STATUS_TEXT.search(text)
    return _wc.status_of_text(words.group("text")) if words else None


def _explain_completion_status(result):
    """A completion error keeps its work-completion status and syndrome: status 4 and status 12 need
    different fixes (GPU memory registration versus the link)."""
    for entry in result["errors"]:
        if entry["code"] != "completion_error":
            continue
        lines = [entry["message"]] + entry["evidence"]
        status = next((s for s in (completion_status(line) for line in lines) if s is not None), None)
        syndrome = _first_match(_SYNDROME, lines)
        side = _first_match(_COMPLETION_SIDE, lines)
        entry["wc_status"] = status
        entry["vendor_err"] = syndrome.group(1).lower() if syndrome else None
        entry["side"] = side.group(1) if side else None
        # add_error leaves the detail empty, and only completion errors are explained here
        entry["detail"] = _wc.explain(status, where=entry["side"] or "local side")


def _is_zero_gid(address):
    gid = address.get("gid") or ""
    return bool(gid) and not gid.replace(":", "").strip("0")


def _explain_zero_gid(result):
    """A RoCE connection that failed while a side printed an all-zero GID: the GID index is the cause."""
    if (result["settings"].get("link_type") or "").lower() != "ethernet":
        return
    sides = [side for side, key in (("local", "local_addresses"), ("remote", "remote_addresses"))
             if any(_is_zero_gid(address) for address in result[key])]
    if not sides:
        return
    index = result["settings"].get("gid_index")
    for entry in result["errors"]:
        if entry["code"] == "qp_connect_failed":
            entry["detail"] = ZERO_GID_DETAIL.format(sides=" and ".join(sides),
                                                     index=index if index is not None else "in use")


def _complete_rows(result):
    keys = LAT_ROW_KEYS if result["metric"] == "lat" else BW_ROW_KEYS
    for row in result["rows"]:
        for key in keys:
            row.setdefault(key, None)


def _add_final_warnings(state):
    result = state.result
    rows = result["rows"]
    if rows and result["metric"] == "lat" and result["duration_mode"]:
        add_warning(state, "duration mode (-D): perftest reports only t_avg and tps, the other latency "
                           "values are null")
    if rows and result["time_unit"] == "cycles":
        add_warning(state, "latency values are CPU cycles (-C / --report-cycles): *_us values are null, "
                           "see *_cycles")
    if not result["peak_measured"] and rows and result["metric"] != "lat":
        add_warning(state, "BW peak was not measured (-N or duration mode): bw_peak_gbps is null")
    if state.in_usage and "invalid_option" not in state.error_index:
        add_error(state, "invalid_option", "perftest printed its usage text (its command line was rejected)")
    if state.bad_rows:
        add_warning(state, "%d result row(s) did not have as many values as the table header has columns"
                    % state.bad_rows)
    if state.seen_row_header and not rows and not result["errors"]:
        # Not ok and not one word of why: a table whose rows could not be read must say so.
        add_warning(state, "the result table header was printed but no result row was read")
    if result["side"] == "server" and not rows and not result["errors"] and result["banner"] is None:
        add_warning(state, "server side: only the waiting banner, no client connected")
    if state.unknown_lines > MAX_UNKNOWN_LISTED:
        add_warning(state, "%d more output lines not understood (not listed)" % (
            state.unknown_lines - MAX_UNKNOWN_LISTED))
    if state.dropped_warnings:
        state.warnings.append("%d more warning line(s) not listed" % state.dropped_warnings)


# perftest goes on after these when the test can run without what failed (a device query of an optional
# feature such as signature offload or BlueFlame): with a result table read they are warnings.
_OUTWEIGHED_BY_A_TABLE = ("unknown", "device_query_failed")


def _demote_errors_a_table_outweighs(state):
    """With a result table read, error-looking lines no rule knows (and the codes of _OUTWEIGHED_BY_A_TABLE) are
    warnings: only a recognised error (or no table) makes the result fail."""
    for code in _OUTWEIGHED_BY_A_TABLE:
        entry = state.error_index.pop(code, None)
        if entry is None:
            continue
        state.result["errors"].remove(entry)
        for line in entry["evidence"]:
            add_warning(state, line)
