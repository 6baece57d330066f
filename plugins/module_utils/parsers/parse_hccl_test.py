# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for Huawei Ascend CANN ``hccl_test`` output (``all_reduce_test`` and friends).

The binary prints ``the minbytes is 8192, maxbytes is ..., iters is 20,
warmup_iters is 5``, then a pipe-separated table whose header the real
binary spells ``aveg_time(us):`` (the documentation shows ``avg_time(us):``)
and whose ``check_result`` is ``success``, ``failed`` or ``NULL`` (not
checked). Columns are mapped by their header names. ``parse_hccl_test``
never raises.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.collective_lines import (
    MAX_LINE, MAX_WARNINGS, CollectiveLines, parser_error_result)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.hccl_errors import (
    HCCL_RESULTS, HCCL_TEST_ERRORS, result_code)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.mpi_errors import ErrorCollector
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    Notes, clean_lines, holds_any, note_if_unread, snake_case, to_float, to_int, to_text)

# The catalog belongs to this entry point's API: tools/gen_docs.py builds the troubleshooting table from it here.
__all__ = ["HCCL_TEST_ERRORS", "parse_hccl_test"]

_SECONDARY = ("rank_failed", "no_table", "hccl_op_failed")
_MAX_STAGES = 20   # stages listed per error

_PREAMBLE = re.compile(r"the minbytes is\s+\d+", re.I)
_PREAMBLE_KV = re.compile(r"([A-Za-z_]{1,40})\s+is\s+(-?\d+)")
_PREAMBLE_KEYS = {"minbytes": "min_bytes", "maxbytes": "max_bytes", "iters": "iters", "warmupiters": "warmup_iters",
                  "stepbytes": "step_bytes", "stepfactor": "step_factor"}
_RETCODE = re.compile(r"(?P<kind>hccl|acl) interface return err(?:return err)?\s+(?P<where>\S+?),?\s+retcode:\s*(?P<code>-?\d+)",
                      re.I)
_NAMED_RESULT = re.compile(r"\b(HCCL_E_[A-Z_]+)\b")
_FAILED_CALL = re.compile(r"\b(?P<call>[Hh]ccl\w{1,64})\s+(?:execute\s+)?failed\b.{0,200}?\bret(?:code|urn)?\s*[:=\[(]?\s*(?P<code>-?\d+)")
_ERROR_STAGE = re.compile(r"This is an error in (?P<stage>\w+)")
_CHECK_FAILED = re.compile(r"rank id (?P<rank>\d+), check result failed", re.I)
_CANN_CODE = re.compile(r"\b(?P<code>E[A-Z]\d{4})\b")
_BINARY = re.compile(r"(?:^|[\s/=])(?P<name>[a-z][a-z0-9_]{0,64}_test)(?=[\s:]|$)")
_BAD_ARGS = re.compile(r"^Error:.*(?:is invalid|must be)|invalid size specified for|^invalid option|non-option ARGV-elements"
                       r"|invalid option: maxbytes < minbytes")
_NO_DEVICE = re.compile(r"number of device is 0", re.I)
_OOM = re.compile(r"Alloc memory size is larger than free memory|Get ddr memory info failed", re.I)
_OP_FAILED = re.compile(r"hccl_op_base execute failed|hccl_op_base destory_alloc_buf failed", re.I)
_ROOT_INFO = re.compile(r"HcclGetRootInfo failed|received invalid data from root process", re.I)
_PORT_IN_USE = re.compile(r"listen on ip\[[^\]]{0,64}\] and specific port\[\d+\] fail")
_SOCKET_WAIT = re.compile(r"wait socket establish timeout")
# The HCCL library's own log lines ("[ERROR] HCCL(2717288,python3):<time> [file.cc:100] [tid]..."), printed to
# stdout with ASCEND_SLOG_PRINT_TO_STDOUT=1 by hccl_test as by any HCCL program, give the HcclResult as
# errNo[0x0000000005000013] (the result in the low bits), "call trace: hcclRet -> 19" or "ret[9]".
_HCCL_LOG = re.compile(r"^\[(?:ERROR|WARNING|EVENT)\]\s*HCCL\(")
_LOG_CODES = (re.compile(r"\berrNo\[0x(?P<hex>[0-9A-Fa-f]{1,16})\]"), re.compile(r"\bhcclRet\s*->\s*(?P<dec>-?\d+)"),
              re.compile(r"\bret\[(?P<dec>-?\d+)\]"))
_EXTRA_PREFIX = re.compile(r"^(?:\[\d+(?:,\d+)?\](?:<std\w+>:)?\s*|\d+:\s+(?=\S))")
_WARNING = re.compile(r"^Warning:|calculation result overflows|No verification is performed", re.I)
# CANN's timeouts say "times out" ("EI0002: ... The wait execution of the Notify register times out.")
_CANN_FAILURE = re.compile(r"error|fail|timeout|times? out|timed out|\[ERROR\]", re.I)
# HCCL's guess at the root of a cluster failure: "Cluster Exception Location[IP/ID]:[90.90.92.240/1], Arrival
# Time:[...], Discoverer:[90.90.92.240/0], ExceptionType:[Heartbeat Lost Occurred], Possible Reason:..."
_CLUSTER_EXCEPTION = re.compile(r"Cluster Exception Location\[IP/ID\]:\[(?P<ip>[^/\]\s]{1,64})/(?P<id>\d{1,6})\]"
                                r"(?:.{0,300}?ExceptionType:\[(?P<type>[^\]]{1,64})\])?")
_EXCEPTION_HINTS = (
    ("heartbeat lost", "The process of rank %s on %s exited or its host network went down: read that rank's own "
                       "output first (a crash, an OOM kill) and check the host's link."),
    ("stuck", "Rank %s on %s hung: look for a stuck process there (npu-smi info, its plog) or a rank that runs "
              "other collectives than the rest."),
    ("error cqe", "The NPU NIC of rank %s on %s reported RoCE retransmission errors: check its links and counters "
                  "(hccn_tool -i <dev> -link -g, -stat -g) and the switch port."),
)
# (lowercase needles, regex, code): tried in order, the regex only when the lowercased line holds a needle.
_SIMPLE_ERRORS = [
    (("rootinfo failed", "from root process"), _ROOT_INFO, "hccl_root_info_failed"),
    (("specific port[",), _PORT_IN_USE, "hccl_port_in_use"),
    (("wait socket establish timeout",), _SOCKET_WAIT, "hccl_socket_timeout"),
    (("hccl_op_base",), _OP_FAILED, "hccl_op_failed"),
    (("alloc memory size", "get ddr memory info failed"), _OOM, "npu_out_of_memory"),
    (("number of device is 0",), _NO_DEVICE, "npu_not_found"),
    (("error:", "invalid", "non-option"), _BAD_ARGS, "invalid_arguments"),
]


def _empty_result():
    return {
        "test": None, "collective": None, "header": {}, "rows": [], "max_algbw_gbs": None,
        "max_algbw_bytes": None, "algbw_at_max_bytes_gbs": None, "checks_failed": 0,
        "failed_ranks": [], "completed": False, "errors": [], "warnings": [], "ok": False,
    }


def _column_name(cell):
    """'aveg_time(us):' -> ('aveg_time', 'us'): the name, and the unit in the parentheses at its end."""
    cell = cell.strip().rstrip(":").strip()
    end = cell[:-1].rstrip() if cell.endswith(":") else cell
    if end.endswith(")"):
        body = end[:-1]
        opening = body.find("(", body.rfind(")") + 1)   # the group's '(' : the first after any other ')'
        if opening >= 0:
            return snake_case(body[:opening]), body[opening + 1:].strip()
    return snake_case(cell), None


def _field_for(name, unit):
    """Map a column name to a row key and a factor to us or GB/s."""
    low = name.lower()
    unit_low = (unit or "").lower()
    if "size" in low or low in ("bytes", "data"):
        return "bytes", 1
    if "time" in low or "latency" in low:
        factor = {"ms": 1000.0, "s": 1e6, "ns": 1e-3}.get(unit_low, 1)
        if low in ("time", "latency") or any(k in low for k in ("avg", "aveg", "average", "alg")):
            return "avg_time_us", factor
        return low + "_us", factor
    if "bandwidth" in low or low.endswith("bw"):
        factor = {"mb/s": 1e-3, "gbps": 1 / 8.0, "gb/s": 1}.get(unit_low, 1)
        return ("busbw_gbs" if "bus" in low else "algbw_gbs"), factor
    if "check" in low or "result" in low:
        return "check", None
    return name or "col", None


_DEFAULT_COLUMNS = [("data_size", "Bytes"), ("aveg_time", "us"), ("alg_bandwidth", "GB/s"), ("check_result", None)]


def _check_value(text):
    """'success' / 'failed' / None (NULL: not checked) of a check_result cell; its first word decides (words after
    it are a note someone added)."""
    words = text.split(None, 1)
    low = words[0].lower() if words else ""
    if low in ("success", "succeeded", "pass", "passed", "ok"):
        return "success"
    if low.startswith("fail") or low == "error":
        return "failed"
    if low in ("null", "none", "", "n/a", "-"):
        return None
    return low


def _make_row(cells, columns):
    """A row from its cells, keyed and scaled by the _Columns of the table."""
    row = {"bytes": None, "avg_time_us": None, "algbw_gbs": None, "check": None, "check_result": None}
    for (key, factor), cell in zip(columns.fields, cells):
        cell = cell.strip()
        if key == "bytes":
            row["bytes"] = to_int(cell)
        elif key == "check":
            row["check_result"] = cell.split(None, 1)[0] if cell else None
            row["check"] = _check_value(cell)
        elif factor is not None:
            value = to_float(cell)
            row[key] = round(value * factor, 6) if value is not None and factor != 1 else value
        else:
            value = to_float(cell)
            row[key] = value if value is not None else (cell or None)
    if len(cells) > len(columns.names):
        row["extra"] = [c.strip() for c in cells[len(columns.names):]]
    return row


def _is_result(row):
    """A size with a numeric time or bandwidth: what makes a line a result row."""
    return row["bytes"] is not None and (isinstance(row["avg_time_us"], float) or isinstance(row["algbw_gbs"], float))


def parse_hccl_test(text):
    """Parse hccl_test output. Never raises; returns header, rows, errors, warnings, ok."""
    try:
        return _Parser().parse(to_text(text))
    except Exception as exc:  # a parser must never raise; report instead
        return parser_error_result(_empty_result(), HCCL_TEST_ERRORS, exc)


def _may_be_header(content):
    """False when the line cannot be a column header (no size column, or no time/bandwidth column)."""
    low = content.lower()
    return (("size" in low or "bytes" in low or "data" in low)
            and ("time" in low or "latency" in low or "bandwidth" in low or "bw" in low))


class _Columns(object):
    """A table's columns: (name, unit) each, with the row key and factor of each and where the size is."""

    def __init__(self, names):
        self.names = names
        self.fields = [_field_for(name, unit) for name, unit in names]
        self.size_at = next((i for i, (key, _factor) in enumerate(self.fields) if key == "bytes"), 0)


_DEFAULT = _Columns(_DEFAULT_COLUMNS)


class _Parser(CollectiveLines):
    """One pass over hccl_test output: preamble, table (with or without pipes), errors, and the lines
    no rule knows (warnings, unless they carry no message). Unanchored regexes are gated by a
    substring their match must contain."""

    def __init__(self):
        CollectiveLines.__init__(self)
        self.result = _empty_result()
        self.errors = ErrorCollector(HCCL_TEST_ERRORS)
        self.warnings = Notes(limit=MAX_WARNINGS)
        self.columns = None
        self.last_code = None       # the code of the last HCCL/ACL error: 'This is an error in <stage>' adds to it
        self.failed_ranks = set()
        # (content, lowercased content) -> handled: the errors HCCL, ACL, CANN and hccl_test print, in this order
        self.error_handlers = (self._cluster_exception, self._return_code, self._error_stage, self._log_code,
                               self._failed_call, self._named_result, self._check_failed, self._simple_error,
                               self._cann_code)

    def parse(self, data):
        lines = clean_lines(data)
        for index, line in enumerate(lines):
            if len(line) > MAX_LINE:
                line = lines[index] = line[:MAX_LINE]
            content = line.strip()
            if content and (content[0] == "[" or ":" in content):
                content = _EXTRA_PREFIX.sub("", content, count=1).strip()
            if not content:
                continue
            if (content[0] == "-" or self.frame_lines is not None) and self._frame(content):
                continue
            self._line(lines, index, content)
        self._count_unlisted()
        self.result["warnings"] = self.warnings.as_list()
        _finish(self.result, self.errors)
        return note_if_unread(self.result, data, "hccl_test", _read_anything(self.result))

    def _line(self, lines, index, content):
        is_command = "_test" in content and self._command_line(content)
        if self._preamble(content) or self._table_line(content):
            return
        if self._error_line(content) or self._launcher_error(lines, index):
            return
        low = content.lower()
        if ("warning:" in low or "overflows" in low or "verification" in low) and _WARNING.search(content):
            self.warnings.add(content[:300])
            return
        if not is_command:
            self._unknown(index, content)

    def _command_line(self, content):
        """A line naming a test binary (it names the test when none was seen): True."""
        binary = _BINARY.search(content)
        if not binary or binary.group("name") in ("hccl_test", "nccl_test"):
            return False
        if self.result["test"] is None:
            self.result["test"] = binary.group("name")
        return True

    def _preamble(self, content):
        """'the minbytes is 8192, maxbytes is 67108864, iters is 20, warmup_iters is 5': True."""
        if "minbytes" not in content.lower() or not _PREAMBLE.search(content):
            return False
        for key, value in _PREAMBLE_KV.findall(content):
            name = _PREAMBLE_KEYS.get(key.lower().replace("_", "")) or snake_case(key)
            self.result["header"][name] = to_int(value)
        return True

    # --- the table ---------------------------------------------------------------

    def _table_line(self, content):
        """A column header or a result row (pipe-separated or not): True."""
        if "|" in content:
            return self._pipe_line(content)
        if "data_size" in content and ("time" in content or "bandwidth" in content) and _may_be_header(content):
            return self._set_columns([_column_name(c) for c in content.split()])
        if self.columns is not None:
            return self._plain_row(content)
        return False

    def _pipe_line(self, content):
        cells = content.split("|")
        if to_int(cells[0]) is None and _may_be_header(content) and self._set_columns(
                [_column_name(c) for c in cells]):
            return True
        use = self.columns or _DEFAULT
        if len(cells) >= 2 and use.size_at < len(cells) and to_int(cells[use.size_at].strip()) is not None:
            return self._add_row(_make_row(cells, use))
        return False

    def _plain_row(self, content):
        """A row of a table without pipes: as many cells as columns, a size and two numbers at least."""
        tokens = content.split()
        columns = self.columns
        if len(tokens) > len(columns.names) and to_float(tokens[len(columns.names)]) is None:
            tokens = tokens[:len(columns.names)]    # words after the last cell: a note someone added
        if (len(tokens) == len(columns.names) and to_int(tokens[columns.size_at]) is not None
                and sum(1 for t in tokens if to_float(t) is not None) >= 2):
            return self._add_row(_make_row(tokens, columns))
        return False

    def _add_row(self, row):
        if not _is_result(row):
            return False
        self.result["rows"].append(row)
        return True

    def _set_columns(self, names):
        columns = _Columns(names)
        keys = [key for key, _factor in columns.fields]
        if "bytes" not in keys or ("avg_time_us" not in keys and "algbw_gbs" not in keys):
            return False
        header = self.result["header"]
        self.columns = columns
        header["columns"] = [n for n, _u in names]
        header["column_units"] = [u for _n, u in names]
        header["time_column"] = next((n for n, _u in names if "time" in n), None)
        return True

    # --- errors ------------------------------------------------------------------

    def _error_line(self, content):
        """Errors HCCL, ACL, CANN and hccl_test print: True."""
        low = content.lower()
        for handler in self.error_handlers:
            if handler(content, low):
                return True
        return False

    def _add_coded(self, code, content):
        """An HCCL/ACL error a later 'This is an error in <stage>' line may add to."""
        self.last_code = code
        self.errors.add(code, content)
        return True

    def _cluster_exception(self, content, _low):
        """'Cluster Exception Location[IP/ID]:[ip/id], ... ExceptionType:[...]': the rank HCCL blames, by IP."""
        found = _CLUSTER_EXCEPTION.search(content) if "Cluster Exception Location" in content else None
        if not found:
            return False
        self.errors.add("hccl_rank_exception", content, host=found.group("ip"),
                        hint=_exception_hint(found.group("type"), found.group("id"), found.group("ip")))
        return True

    def _return_code(self, content, low):
        retcode = _RETCODE.search(content) if "interface return err" in low else None
        if not retcode:
            return False
        code = "acl_error" if retcode.group("kind").lower() == "acl" else result_code(retcode.group("code"))
        return self._add_coded(code, content)

    def _error_stage(self, content, _low):
        stage = _ERROR_STAGE.search(content) if "This is an error in" in content else None
        if not stage:
            return False
        entry = self.errors.get(self.last_code) if self.last_code else None
        if entry is not None:
            stages = entry.setdefault("stages", [])
            if len(stages) < _MAX_STAGES and stage.group("stage") not in stages:
                stages.append(stage.group("stage"))
        return True

    def _log_code(self, content, _low):
        """An HCCL log line with its HcclResult (errNo[0x...], hcclRet -> N, ret[N]); one whose number is no
        HcclResult is left to the other rules."""
        if "HCCL" not in content or not _HCCL_LOG.match(content):
            return False
        for regex in _LOG_CODES:
            found = regex.search(content)
            if found:
                hexa = found.groupdict().get("hex")
                value = int(hexa, 16) & 0xFFFF if hexa else int(found.group("dec"))
                if value in HCCL_RESULTS:
                    return self._add_coded(HCCL_RESULTS[value][0].lower(), content)
        return False

    def _failed_call(self, content, _low):
        failed_call = _FAILED_CALL.search(content) if "ccl" in content and "failed" in content else None
        return bool(failed_call) and self._add_coded(result_code(failed_call.group("code")), content)

    def _named_result(self, content, low):
        named = _NAMED_RESULT.search(content) if "HCCL_E_" in content else None
        if not named or not ("fail" in low or "error" in low or "ret" in low):
            return False
        name = named.group(1).lower()
        return self._add_coded(name if name in HCCL_TEST_ERRORS else "hccl_error", content)

    def _check_failed(self, content, low):
        check = _CHECK_FAILED.search(content) if "check result failed" in low else None
        if not check:
            return False
        rank = int(check.group("rank"))
        if rank not in self.failed_ranks:
            self.failed_ranks.add(rank)
            self.result["failed_ranks"].append(rank)
        self.errors.add("check_failed", content)
        return True

    def _simple_error(self, content, low):
        for needles, regex, code in _SIMPLE_ERRORS:
            if any(needle in low for needle in needles) and regex.search(content):
                self.errors.add(code, content)
                return True
        return False

    def _cann_code(self, content, _low):
        cann = _CANN_CODE.search(content) if "E" in content else None
        if not cann or not _CANN_FAILURE.search(content):
            return False
        code = {"EI0006": "hccl_socket_timeout", "EI0002": "hccl_notify_timeout"}.get(cann.group("code"),
                                                                                      "hccl_cann_error")
        self.errors.add(code, content)
        return True


def _read_anything(result):
    """Whether any line of hccl_test's (or HCCL's) own was read: the preamble, a column header, a row, an error;
    a command line naming a test binary is not its output."""
    return holds_any(result, "rows", "header") or any(entry["code"] != "no_table" for entry in result["errors"])


def _exception_hint(kind, rank, ip):
    low = (kind or "").lower()
    for needle, hint in _EXCEPTION_HINTS:
        if needle in low:
            return hint % (rank, ip)
    return None


def _finish(result, errors):
    rows = result["rows"]
    if result["test"]:
        name = result["test"]
        result["collective"] = name[:-5] if name.endswith("_test") else name
    _judge_checks(result, errors)
    _summarise_algbw(result)
    result["completed"] = _completed(result)
    if not rows:
        errors.add("no_table", "no hccl_test result rows in the output")
    result["errors"] = errors.entries(last=_SECONDARY)
    result["ok"] = bool(rows) and not result["errors"]


def _judge_checks(result, errors):
    """Rows whose check_result failed: one check_failed error naming their sizes."""
    failed = [r for r in result["rows"] if r.get("check") == "failed"]
    result["checks_failed"] = len(failed)
    if failed:
        errors.add("check_failed", "check_result failed at sizes %s" % ", ".join(str(r["bytes"]) for r in failed))
        errors.get("check_failed")["sizes"] = [r["bytes"] for r in failed]


def _summarise_algbw(result):
    """The highest algorithm bandwidth (and its size), and the best one at the largest size."""
    best = None
    for row in result["rows"]:
        bw = row.get("algbw_gbs")
        if isinstance(bw, (int, float)) and (best is None or bw > best[0]):
            best = (float(bw), row.get("bytes"))
    if best:
        result["max_algbw_gbs"], result["max_algbw_bytes"] = best
    sized = [r for r in result["rows"]
             if isinstance(r.get("bytes"), int) and isinstance(r.get("algbw_gbs"), (int, float))]
    if sized:
        top = max(r["bytes"] for r in sized)
        result["algbw_at_max_bytes_gbs"] = max(float(r["algbw_gbs"]) for r in sized if r["bytes"] == top)


def _completed(result):
    """True when a row reached maxbytes, None when the preamble gave none, False without rows."""
    rows = result["rows"]
    max_bytes = result["header"].get("max_bytes")
    if max_bytes is None or not rows:
        return None if rows else False
    return any(isinstance(r.get("bytes"), int) and r["bytes"] >= max_bytes for r in rows)
