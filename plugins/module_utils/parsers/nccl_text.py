# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One pass over nccl-tests text output: each line goes to the first handler that knows it."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.collective_lines import (
    MAX_WARNINGS, CollectiveLines)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.mpi_errors import ErrorCollector
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_errors import (
    BITWISE_HINT, NCCL_TESTS_ERRORS, add_last_error, add_warn_error, classify_warn, hint_for, result_code)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_lines import (
    LOG_AT_START, LOG_LOOSE, LOG_UNNAMED, split_lines)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_result import (
    empty_result, finish, nccl_version_from_code)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_table import (
    Table, layout_from_header, may_start_row)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_transport import TransportSeen
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    Notes, holds_any, note_if_unread, snake_case, to_float, to_int, unique)

# "NCCL version 2.27.3+cuda12.9"; RCCL (NCCL_DEBUG=VERSION or INFO) prints "RCCL version : 2.22.3-HEAD:7d8d67c"
# Vendor builds of nccl-tests print the code: "NCCL version: 22602, CUDA Runtime Version: 12.0" (2.26.2).
_VERSION_LINE = re.compile(r"\b(?P<lib>NCCL|RCCL) version\s?:?\s(?:(?P<ver>\d+\.\d+[\w.+\-]*(?::\w+\+?)?)"
                           r"|(?P<code>\d{4,6})\b)")
# "# nccl-tests version 2.17.6 nccl-headers=22703 nccl-library=22703"; newer rccl-tests print the same line
# ("# rccl-tests version 2.17.9-<branch>:<commit> rccl-headers=22803 rccl-library=22803")
_TESTS_VERSION = re.compile(r"(?P<lib>[nr])ccl-tests version (?P<ver>[\w.+\-/:]+)(?P<rest>.*)$")
# rccl-tests' header: "rccl-tests: Version develop:33cc4df" (branch:commit, or "Unknown")
_RCCL_TESTS_VERSION = re.compile(r"^rccl-tests: Version\s+(?P<ver>[\w.+\-:]+)")
_HEADER_KV = re.compile(r"([A-Za-z][A-Za-z_ ]{0,40}?)\s*:?\s+(-?\d+)(?:\((\w+)\))?(?=\s|$)")
# "nThread 1 nGpus 8 minBytes 8 ..."; rccl-tests of 2022-2023 print "nThreads: 1 nGpus: 4 nRanks: 1 minBytes: 8 ..."
_RUN_HEADER = re.compile(r"\bnThreads?:?\s+\d+\s+nGpus:?\s+\d+.*$")
_RANK_LINE = re.compile(
    r"\bRank\s+(?P<rank>\d+)\s+(?:Group\s+(?P<group>\d+)\s+)?(?:Pid\s+(?P<pid>\d+)\s+)?on\s+(?P<host>\S+)\s+"
    r"device\s+(?P<device>\d+)\s+\[(?P<bus>[^\]]{0,64})\]\s*(?P<name>.*)$")
_OOB = re.compile(r"Out of bounds values\s*:\s*(?P<n>-?\d+)\s*(?P<status>OK|FAILED)?")
_AVG = re.compile(r"Avg bus bandwidth\s*:\s*(?P<bw>[-+]?(?:[\d.]+(?:[eE][-+]?\d+)?|nan|inf))\s*(?P<status>OK|FAILED)?",
                  re.I)
_BITWISE = re.compile(r"Bitwise mismatches\s*:\s*(?P<n>\d+)\s*(?P<status>OK|FAILED)?")
_REDUCING = re.compile(r"Reducing maxBytes to (?P<n>\d+)")
_TEST_START = re.compile(r"Collective test starting:\s*(?P<name>\S+)")
_TEST_END = re.compile(r"Collective test concluded:\s*(?P<name>\S+)")
_GPU_MEM = re.compile(r"GPU memory usage\s*:\s*(?P<v>.+)$")
_BINARY = re.compile(r"(?:^|[\s/=])(?P<name>[a-z][a-z0-9_]{0,64}_perf)(?:_mpi)?(?=\s|$)")
# A second launcher prefix clean_lines leaves: padded srun labels (" 3: "), "[0] " after "[1,0]<stdout>:",
# or a pdsh-style "host: " in front of a '#' line.
_EXTRA_PREFIX = re.compile(r"^(?:\[\d+(?:,\d+)?\](?:<std\w+>:)?\s*|\d+:\s+|[A-Za-z][\w.\-]{0,63}:\s+(?=#))")
_HASH_ERROR = re.compile(r"^\s*#\s*error:\s*(?P<msg>.*)$")
_HEADER_CODES = re.compile(r"[nr]ccl-(headers|library)=(\d+)")
_DIGITS = re.compile(r"\d+")
_FAILURE_TAIL = re.compile(r"\s+(\S+)\s+'")
# nccl-tests before 2019 printed "NCCL failure common.cu:921 'unhandled system error'" (no "Test "), maybe behind
# "host: "; the file:line keeps prose that names an NCCL failure out
_BARE_FAILURE = re.compile(r"^(?:[\w.\-]{1,255}:\s+)?NCCL failure\s+\S+:\d+\s+'")

_TEST_TRACE = re.compile(r"^\s*\.\.\s+(?P<host>\S+)\s+pid\s+\d+:\s+Test failure\b")
_GPU_MISMATCH = re.compile(r"Invalid number of GPUs|requested but only \d+ were found")
_BAD_ARGS = re.compile(r"invalid sizes? (?:specified )?for|invalid option\b|unrecognized option\b"
                       r"|option requires an argument|option '[^']*' (?:requires|doesn't allow) an argument")
# the binary's usage text ("USAGE: all_reduce_perf", "[-T,--timeout <time in seconds>]"), printed after a bad option
_USAGE = re.compile(r"^(?:USAGE:\s|\[-\w,--[\w-]+(?:\s.*)?\]$)")
_RANK_WRONG = re.compile(r"\brank=\d+\s+#wrong=\d+")

_HEADER_KEYS = {
    "nthread": "nthread", "nthreads": "nthread", "ngpus": "ngpus", "minbytes": "min_bytes",
    "maxbytes": "max_bytes", "warmupiters": "warmup_iters", "iters": "iters", "aggiters": "agg_iters",
    "validation": "validation", "graph": "graph", "unalign": "unalign", "stepbytes": "step_bytes",
    "stepfactor": "step_factor", "nranks": "nranks",
}


def _parse_run_header(text, header):
    """'nThread 1 nGpus 1 minBytes 8 maxBytes ... step: 2(factor) ...' into the header."""
    for key, value, paren in _HEADER_KV.findall(text):
        norm = re.sub(r"[\s_]+", "", key).lower()
        number = to_int(value)
        if norm == "step":
            header["step_bytes" if paren and paren.lower().startswith("byte") else "step_factor"] = number
            continue
        name = _HEADER_KEYS.get(norm) or snake_case(key)
        if name:
            header[name] = number


def _host_before(head):
    """'node1: ' in front of a 'Test ... failure' marker -> 'node1' (at most 255 characters), else None."""
    if not head or not head[-1].isspace():
        return None
    head = head.rstrip()
    if not head.endswith(":"):
        return None
    word = head[:-1].rsplit(None, 1)[-1] if head[:-1].strip() else ""
    if not word or head[-2:-1].isspace():
        return None
    word = word.rsplit(":", 1)[-1][-255:]
    return word or None


def _failure_line(content, marker):
    """(host, where, message) of "[host: ]Test NCCL failure common.cu:1005 'message'", or None."""
    at = content.find(marker)
    tail = content[at + len(marker):]
    match = _FAILURE_TAIL.match(tail)
    if not match:
        return None
    message = tail[match.end():].rstrip()
    if message.endswith("'"):
        message = message[:-1]
    return _host_before(content[:at]), match.group(1), message


def _after_prefix(stripped):
    """The line without a second launcher prefix (clean_lines took the first)."""
    if stripped[0] == "[" or ":" in stripped:
        return _EXTRA_PREFIX.sub("", stripped, count=1).strip()
    return stripped


def _starts_with_size(body):
    """True when the first word is 'size' (any case): a column-name line, maybe."""
    return body[:4].lower() == "size" and (len(body) == 4 or body[4].isspace())


class TextParser(CollectiveLines):
    """One pass over nccl-tests text output; each line is handled by the first kind it turns out to be.

    The kinds, cheapest and most frequent first: NCCL log records, table rows,
    header and footer lines, comments, errors, and at last lines this parser
    does not know (a warning when they report a problem, never an error).
    Every regex that is not anchored is gated by a substring the match must
    contain, so most lines cost a few substring tests; no regex runs over
    more than one line.
    """

    def __init__(self):
        CollectiveLines.__init__(self)
        self.result = empty_result()
        self.header = self.result["header"]
        self.warnings = Notes(limit=MAX_WARNINGS, width=1000)
        self.result["warnings"] = self.warnings
        self.errors = ErrorCollector(NCCL_TESTS_ERRORS)
        self.table = Table(self.result, self.warnings)
        self.ranks = {}
        self.other_jobs = []    # rank lines of a rank already printed by another job (see _another_job)
        self.transport = TransportSeen()
        self.proxy_service = False
        self.specific_failure = False
        self.trace_hosts = []
        self.trace_lines = []
        self.records = 0        # NCCL/RCCL log records read
        # (content, body) -> handled: the lines that are not log records, in this order
        self.line_handlers = (self._row, self._header_or_footer, self._comment, self._column_names,
                              self._other_comment, self._prefixed_row, self._usage)
        self.header_handlers = (self._library_version, self._tests_version, self._run_header, self._test_start_end,
                                self._rank, self._out_of_bounds, self._average, self._bitwise, self._reducing,
                                self._gpu_memory)
        # (line, content) -> handled: errors nccl-tests itself prints
        self.test_error_handlers = (self._nccl_failure, self._cuda_failure, self._test_timeout, self._trace_line,
                                    self._gpu_mismatch, self._bad_arguments, self._rank_wrong)

    def parse(self, data):
        lines, records = split_lines(data)
        for index, line in enumerate(lines):
            stripped = line.strip()
            if stripped:
                self._line(lines, index, line, stripped, records.get(index))
        self.table.flush()
        return note_if_unread(self._conclude(), data, "nccl-tests", self._read_anything())

    # --- one line ------------------------------------------------------------

    def _line(self, lines, index, line, stripped, record):
        if "ncclProxyService" in line:
            self.proxy_service = True
        if ("CCL" in line or "WARN " in line or "INFO " in line) and self._log_record(line, stripped, record):
            return
        content = _after_prefix(stripped)
        if not content or self._frame(content):
            return
        body = content.lstrip("#").strip() if content[0] == "#" else content
        for handler in self.line_handlers:
            if handler(content, body):
                return
        is_command = self._command_line(content)
        if self._test_error(line, content) or self._launcher_error(lines, index):
            return
        if not is_command:
            self._unknown(index, content)

    def _row(self, content, _body):
        return content[0].isdigit() and self.table.feed(content.split())

    @staticmethod
    def _usage(content, _body):
        """A line of the binary's usage text: no warning (the bad option before it is the error)."""
        return content[:1] in ("U", "[") and bool(_USAGE.match(content.strip()))

    def _prefixed_row(self, content, _body):
        """A row behind a prefix the table knows ('node1:'), or a row piece not starting with a digit."""
        if content[0].isdigit():
            return False    # _row had it
        tokens = content.split()
        return bool(tokens) and may_start_row(tokens[0]) and self.table.feed(tokens)

    def _column_names(self, _content, body):
        if not _starts_with_size(body):
            return False
        layout = layout_from_header(body.split())
        if layout is None:
            return False
        self.table.set_header(layout)
        self.header["columns"] = layout.columns()
        self.header["time_kind"] = layout.time_kind
        if layout.wrong_kind:
            self.header["wrong_column"] = "#wrong" if layout.wrong_kind == "count" else "error"
        return True

    def _other_comment(self, content, _body):
        """A '#' line no rule knows: a comment, nothing to report."""
        return content[0] == "#"

    def _log_record(self, line, stripped, log):
        """An NCCL/RCCL log record ("host:pid:tid [dev] NCCL INFO ..."): handled, True."""
        if log is None and (" INFO" in line or " WARN" in line or " TRACE" in line
                            or " ABORT" in line or " ERROR" in line):
            log = LOG_AT_START.match(line)
        if log is None and ("NCCL " in line or "RCCL " in line) and stripped[0] != "#":
            log = LOG_LOOSE.search(line)
        if log is None and "CCL" not in line:
            log = LOG_UNNAMED.match(line)
        if log is None:
            return False
        self.records += 1
        level = log.group("level")
        message = (log.group("msg") or "").strip()
        if level == "INFO":
            if not ("version" in message and self._set_library_version(message)):
                self.transport.info(message, self.warnings)
        elif level in ("WARN", "ABORT", "ERROR"):
            self._warn(message, log.groupdict().get("host"))
        return True

    def _warn(self, message, host):
        code = classify_warn(message)
        if code:
            add_warn_error(self.errors, code, message, host=host)
        else:
            self.warnings.add("NCCL WARN %s" % message)

    # --- header and footer (with or without the leading '#') -------------------

    def _header_or_footer(self, content, body):
        return any(handler(content, body) for handler in self.header_handlers)

    def _library_version(self, content, _body):
        return "CCL version" in content and "nccl-tests" not in content and self._set_library_version(content)

    def _set_library_version(self, text):
        """'NCCL version 2.27.3+cuda12.9' (or RCCL): True when the text names it."""
        version = _VERSION_LINE.search(text)
        if version:
            self.result["nccl_version"] = version.group("ver") or nccl_version_from_code(version.group("code"))
            self.header["library"] = version.group("lib")
        return bool(version)

    def _tests_version(self, _content, body):
        if body.startswith("rccl-tests:"):
            return self._rccl_tests_version(body)
        tests_version = _TESTS_VERSION.search(body) if "ccl-tests version" in body else None
        if not tests_version:
            return False
        self.result["version"] = tests_version.group("ver")
        if tests_version.group("lib") == "r":
            self.header["tests"] = "rccl-tests"
        for key, value in _HEADER_CODES.findall(tests_version.group("rest")):
            self.header["nccl_%s_code" % key] = int(value)
        return True

    def _rccl_tests_version(self, body):
        """'rccl-tests: Version develop:33cc4df': the tests are rccl-tests, their version is branch:commit."""
        self.header["tests"] = "rccl-tests"
        match = _RCCL_TESTS_VERSION.match(body)
        if match and match.group("ver").lower() != "unknown":
            self.result["version"] = match.group("ver")
        return True

    def _run_header(self, _content, body):
        run_header = _RUN_HEADER.search(body) if "nThread" in body else None
        if run_header:
            _parse_run_header(run_header.group(0), self.header)
        return bool(run_header)

    def _test_start_end(self, _content, body):
        if "Collective test" not in body:
            return False
        start = _TEST_START.search(body)
        if start:
            self.result["test"] = start.group("name")
            return True
        if _TEST_END.search(body):
            self.result["completed"] = True
            return True
        return False

    def _rank(self, _content, body):
        rank = _RANK_LINE.search(body) if "Rank" in body else None
        if not rank:
            return False
        number = int(rank.group("rank"))
        entry = {
            "rank": number, "group": to_int(rank.group("group")), "pid": to_int(rank.group("pid")),
            "host": rank.group("host"), "device": to_int(rank.group("device")),
            "bus_id": rank.group("bus"), "name": rank.group("name").strip() or None,
        }
        first = self.ranks.setdefault(number, entry)
        if first is not entry and self._another_job(first, entry):
            self.other_jobs.append(entry)
        return True

    def _another_job(self, first, again):
        """The same rank printed again by another process of this run: mpirun started separate jobs.

        A rank on another host always is; on the same host only before any row (a later run in the
        same log prints its ranks again after the first run's table)."""
        if again["host"] != first["host"]:
            return True
        return not self.result["rows"] and again["pid"] is not None and again["pid"] != first["pid"]

    def _out_of_bounds(self, content, body):
        oob = _OOB.search(body) if "Out of bounds values" in body else None
        if not oob:
            return False
        result = self.result
        self.table.flush()
        count, status = int(oob.group("n")), oob.group("status")
        result["out_of_bounds"] = count
        result["out_of_bounds_status"] = status
        result["out_of_bounds_ok"] = (status == "OK") if status else (count == 0)
        if count > 0:
            self.errors.add("wrong_results", content)
        return True

    def _average(self, content, body):
        avg = _AVG.search(body) if "bandwidth" in body.lower() else None
        if not avg:
            return False
        result = self.result
        self.table.flush()
        result["avg_busbw_gbs"] = to_float(avg.group("bw"))
        result["avg_busbw_source"] = "footer" if result["avg_busbw_gbs"] is not None else None
        result["avg_busbw_status"] = avg.group("status")
        result["completed"] = True
        if avg.group("status") == "FAILED":
            self.errors.add("bandwidth_below_min", content)
        return True

    def _header_number(self, body, marker, pattern, key):
        """The match of a line that states a number (``n``) of the run, kept in the header as ``key``; None for
        another line."""
        match = pattern.search(body) if marker in body else None
        if match:
            self.header[key] = int(match.group("n"))
        return match

    def _bitwise(self, content, body):
        bitwise = self._header_number(body, "Bitwise mismatches", _BITWISE, "bitwise_mismatches")
        if bitwise and self.header["bitwise_mismatches"] > 0:
            self.errors.add("wrong_results", content, hint=BITWISE_HINT)
        return bool(bitwise)

    def _reducing(self, _content, body):
        reducing = self._header_number(body, "Reducing maxBytes", _REDUCING, "max_bytes_reduced_to")
        if reducing:
            self.warnings.add("maxBytes reduced to %s bytes due to GPU memory limitation" % reducing.group("n"))
        return bool(reducing)

    def _gpu_memory(self, _content, body):
        gpu_mem = _GPU_MEM.search(body) if "GPU memory usage" in body else None
        if gpu_mem:
            self.header["gpu_memory_usage"] = gpu_mem.group("v").strip()
        return bool(gpu_mem)

    def _comment(self, content, body):
        """Flags of '#' lines; '# error: ...' (ncclGetLastError). True when the line is done."""
        if content[0] != "#":
            return False
        self._comment_flag(body)
        if "error:" in content:
            hash_error = _HASH_ERROR.match(content)
            if hash_error and hash_error.group("msg").strip():
                add_last_error(hash_error.group("msg"), self.errors, self.warnings)
                return True
        return False

    def _comment_flag(self, body):
        header = self.header
        low = body.lower()
        if "blocking enabled" in low:
            header["blocking"] = True
        elif "parallel init enabled" in low:
            header["parallel_init"] = True
        elif "per-iteration report" in low:
            header["per_iter_timing"] = True
        elif low.startswith("bitwise repeatability"):
            header["bitwise_repeats"] = to_int((_DIGITS.findall(body) or [None])[0])
        elif low.startswith("writing json output to"):
            header["json_output"] = body.split(" to ", 1)[-1].strip()

    # --- command lines and errors ------------------------------------------------

    def _command_line(self, content):
        """A command line naming the test binary (it names the test when none was seen): True."""
        if "_perf" not in content:
            return False
        binary = _BINARY.search(content)
        if not binary or not (" -" in content or "mpirun" in content or "srun" in content or "Running" in content
                              or content.startswith(("./", "/", ">", "$")) or "$ " in content or "# " in content
                              or "error while loading" in content or "not found" in content):
            return False
        if self.result["test"] is None:
            self.result["test"] = binary.group("name")
        return True

    def _test_error(self, line, content):
        """Errors nccl-tests itself prints (Test NCCL/CUDA failure, timeout, trace, bad arguments): True."""
        return any(handler(line, content) for handler in self.test_error_handlers)

    def _nccl_failure(self, _line, content):
        failure = self._marked_failure(content, "Test NCCL failure") or self._bare_failure(content)
        if not failure:
            return False
        host, message = failure
        result_part, _sep, last_error = message.partition(" / ")
        code = result_code(result_part)
        self.errors.add(code, content, host=host, hint=hint_for(code, message))
        if last_error.strip():
            add_last_error(last_error, self.errors, self.warnings, host=host)
        return True

    def _cuda_failure(self, _line, content):
        # rccl-tests print the CUDA check's failures as "Test HIP failure common.cu:1129 'hipErrorInvalidDevice'"
        failure = (self._marked_failure(content, "Test CUDA failure")
                   or self._marked_failure(content, "Test HIP failure"))
        if failure:
            host, message = failure
            self.errors.add("nccl_cuda_failure", content, host=host, hint=hint_for("nccl_cuda_failure", message))
        return bool(failure)

    def _bare_failure(self, content):
        if "NCCL failure" not in content or not _BARE_FAILURE.match(content):
            return None
        return self._marked_failure(content, "NCCL failure")

    def _marked_failure(self, content, marker):
        """(host, message) of a '[host: ]<marker> file.cu:123 'message'' line, or None."""
        failure = _failure_line(content, marker) if marker in content else None
        if not failure:
            return None
        self.specific_failure = True
        return failure[0], failure[2]

    def _test_timeout(self, _line, content):
        at = content.find("Test timeout")
        if at < 0:
            return False
        after = content[at + len("Test timeout"):at + len("Test timeout") + 1]
        if after.isalnum() or after == "_":
            return False
        self.specific_failure = True
        self.errors.add("nccl_timeout", content, host=_host_before(content[:at]))
        return True

    def _trace_line(self, line, content):
        """' .. node1 pid 123: Test failure common.cu:...': the trace each failing rank prints."""
        trace = _TEST_TRACE.match(line) if ".." in line and "Test failure" in line else None
        if trace:
            self.trace_hosts.append(trace.group("host"))
            self.trace_lines.append(content)
        return bool(trace)

    def _gpu_mismatch(self, _line, content):
        return ("GPUs" in content or "were found" in content) and self._add_if(
            _GPU_MISMATCH.search(content), "gpu_count_mismatch", content)

    def _bad_arguments(self, _line, content):
        return ("invalid" in content or "option" in content) and "NCCL" not in content and self._add_if(
            _BAD_ARGS.search(content), "invalid_arguments", content)

    def _rank_wrong(self, _line, content):
        return "#wrong=" in content and self._add_if(_RANK_WRONG.search(content), "wrong_results", content)

    def _add_if(self, match, code, content):
        if match:
            self.errors.add(code, content)
        return bool(match)

    # --- end -----------------------------------------------------------------

    def _conclude(self):
        result, header = self.result, self.header
        result["ranks"] = [self.ranks[k] for k in sorted(self.ranks)]
        result["nranks"] = len(result["ranks"])
        result["hosts"] = unique(entry["host"] for entry in result["ranks"] + self.other_jobs)
        if self.other_jobs:
            self._separate_jobs()
        # NCCL version from the header code when no 'NCCL version' line was printed
        if result["nccl_version"] is None and header.get("nccl_library_code"):
            result["nccl_version"] = nccl_version_from_code(header["nccl_library_code"])
        self.transport.finish(result, self.warnings)
        if self.trace_lines and not self.specific_failure:
            self._test_failure_from_traces()
        self._count_unlisted()
        finish(result, self.errors, self.proxy_service)
        return result

    def _read_anything(self):
        """Whether any line of nccl-tests' (or NCCL's) own was read: a row, a header or footer line, a rank, a log
        record, an error; a command line naming a test binary is not its output."""
        result = self.result
        return (holds_any(result, "rows", "header", "ranks", "nccl_version", "version", "transport", "completed")
                or self.records > 0 or any(entry["code"] != "no_table" for entry in result["errors"]))

    def _separate_jobs(self):
        """One error naming every host whose job printed a rank that another job printed already."""
        lowest = min(entry["rank"] for entry in self.other_jobs)
        printers = [self.ranks[lowest]] + [entry for entry in self.other_jobs if entry["rank"] == lowest]
        jobs = unique((entry["host"], entry["pid"]) for entry in printers)
        message = "Rank %d printed by %d processes (%s): mpirun started separate nccl-tests jobs, not one run" % (
            lowest, len(jobs), ", ".join("%s pid %s" % job for job in jobs))
        for host in unique(entry["host"] for entry in printers):
            self.errors.add("separate_jobs", message, host=host)

    def _test_failure_from_traces(self):
        """Only the trace lines tell of the failure: one test_failure error with every host that traced."""
        trace_hosts = unique(self.trace_hosts)
        self.errors.add("test_failure", self.trace_lines[0], host=trace_hosts[0] if trace_hosts else None)
        for host in trace_hosts[1:]:
            self.errors.get("test_failure")["hosts"].append(host)
