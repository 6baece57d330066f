# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for NVIDIA nccl-tests output (``*_perf`` binaries; rccl-tests print the same).

``parse_nccl_tests(text)`` reads what the binary printed (any version since
2018: with or without ``Group``, ``redop``, ``root``, ``#wrong`` or ``error``
columns, per-iteration and bitwise columns of the newest releases), with
launcher prefixes, prompts, NCCL INFO/WARN lines anywhere -- also inside a
table row -- and errors of NCCL, CUDA, MPI, ssh and the kernel. It also
accepts the JSON file that nccl-tests writes with ``-J/--output_file
<name>.json`` (and the rccl-tests JSON list); ``parse_nccl_tests_json`` does
only that. It never raises.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.mpi_errors import (
    MPI_ERRORS, ErrorCollector, scan_launcher_line)
from ansible_collections.clusterops.commcheck.plugins.module_utils.text import (
    clean_lines, snake_case, strip_launcher_prefix, to_float, to_int, to_text)

NCCL_TESTS_ERRORS = dict(MPI_ERRORS)
NCCL_TESTS_ERRORS.update({
    "nccl_cuda_failure": (
        "A CUDA call failed inside NCCL or the test (driver/runtime mismatch, GPU not usable, out of memory, "
        "or peer-to-peer access not supported between the GPUs).",
        "Check nvidia-smi and dmesg (Xid) on the host, that the driver supports the CUDA version of the test, "
        "and GPU memory; for P2P problems try NCCL_P2P_DISABLE=1 or fix the PCIe ACS/IOMMU settings.",
    ),
    "nccl_system_error": (
        "A system call or external library used by NCCL failed (socket, shared memory, verbs, a remote peer exited).",
        "Run with NCCL_DEBUG=INFO and fix the failing call named in the NCCL WARN lines "
        "(network interface, /dev/shm size, RDMA device permissions, memlock limit).",
    ),
    "nccl_internal_error": (
        "NCCL hit an internal check failure.",
        "Use the same NCCL version on every node; if it persists, upgrade NCCL and report the NCCL WARN lines.",
    ),
    "nccl_invalid_argument": (
        "NCCL rejected an argument (buffer, count, datatype, rank or device).",
        "Run with NCCL_DEBUG=WARN to see which argument; check that every rank runs the same test binary "
        "and arguments, and that -g/-t match the GPUs of each process.",
    ),
    "nccl_invalid_usage": (
        "NCCL was used in a way it does not allow (e.g. two ranks on one GPU, mismatched calls between ranks).",
        "Make each rank use a distinct GPU (ranks per node x -g x -t must not exceed the GPUs) and run the "
        "same binary and arguments on every rank.",
    ),
    "nccl_remote_error": (
        "A remote rank exited or the network between ranks failed during the test.",
        "Find the first failing node (its own errors, dmesg, link flaps on its NICs) and fix or exclude it.",
    ),
    "nccl_timeout": (
        "A collective did not finish in time: a hung rank, a dead link, or a network stuck without progress.",
        "Check the links and NICs of the nodes involved (ibstat, error counters), exclude the node that hangs, "
        "and raise -T only if the size is simply very large.",
    ),
    "nccl_error": (
        "NCCL returned an error.",
        "Run with NCCL_DEBUG=INFO and read the NCCL WARN lines that precede the failure.",
    ),
    "nccl_bootstrap_failed": (
        "NCCL ranks could not connect to each other over TCP (bootstrap/socket): wrong interface, "
        "firewall, or unreachable address.",
        "Set NCCL_SOCKET_IFNAME to an interface every node can reach (the one mpirun uses), open TCP between "
        "nodes, and use the same NCCL version on every node.",
    ),
    "ib_setup_failed": (
        "NCCL could not set up an RDMA (InfiniBand/RoCE) resource: device open, memory registration, "
        "queue pair creation or GID selection failed.",
        "Check the HCA (ibstat, ibv_devinfo), the memlock limit (ulimit -l unlimited, IPC_LOCK in pods), "
        "/dev/infiniband in containers, NCCL_IB_HCA and NCCL_IB_GID_INDEX (RoCE v2 GID).",
    ),
    "ib_transport_error": (
        "An RDMA transfer completed with an error (e.g. retry counter exceeded): a link, cable or switch "
        "problem, or a peer that went away.",
        "Check port error counters and link flaps on both nodes (ibstat, perfquery, ethtool -S), "
        "the lossless/PFC configuration for RoCE, and rerun the pair with ib_write_bw.",
    ),
    "shm_exhausted": (
        "NCCL could not create its shared-memory segment: /dev/shm is too small or full.",
        "Enlarge /dev/shm (docker --shm-size=1g or more; a Memory emptyDir at /dev/shm in Kubernetes) "
        "or set NCCL_SHM_DISABLE=1.",
    ),
    "test_failure": (
        "The nccl-tests binary stopped with a test failure.",
        "Read the first error printed before the 'Test failure' trace lines.",
    ),
    "wrong_results": (
        "The collective returned wrong data (nonzero #wrong / out-of-bounds values): silent data corruption "
        "on a GPU, NVLink, PCIe path or NIC.",
        "Rerun to confirm, then bisect the nodes; check GPU health (nvidia-smi -q, dcgmi diag, Xid in dmesg) "
        "and remove the failing GPU/node from service.",
    ),
    "bandwidth_below_min": (
        "The average bus bandwidth is below the NCCL_TESTS_MIN_BW limit the test was given.",
        "Find the slow links or nodes (per-pair RDMA tests, bisection) and check that NCCL used the expected transport.",
    ),
    "gpu_count_mismatch": (
        "The test asked for more GPUs than the node shows to the process.",
        "Lower -g/-t or the ranks per node, or make all GPUs visible (CUDA_VISIBLE_DEVICES, the pod's GPU request).",
    ),
    "invalid_arguments": (
        "The test binary rejected its command line.",
        "Fix the options (sizes like 8, 128M, 8G; -b not larger than -e); see the binary's -h output.",
    ),
    "json_invalid": (
        "The nccl-tests JSON output is not valid JSON (the run was probably cut off while writing it).",
        "Rerun the test; read the text output of the run for the error.",
    ),
    "no_table": (
        "The output holds no nccl-tests result rows: the test did not run or stopped before measuring.",
        "Read the other errors of this result, or the raw output, to see why the test did not start.",
    ),
})

_SECONDARY = ("test_failure", "rank_failed", "no_table")
_MAX_LINE = 4096  # longer lines are read up to here (no nccl-tests line is that long)

# --- line classification -----------------------------------------------------

# host:pid:tid [dev] [file.cc:123] NCCL INFO|WARN ...; optional timestamp/launcher bracket first.
_LOG_AT_START = re.compile(
    r"^\s*(?:\[[^\]]{0,64}\]\s*)?(?P<host>[^\s:\[\]]+):(?P<pid>\d+):(?P<tid>\d+)\s+\[(?P<dev>\d+)\]\s+"
    r"(?:\S+\s+){0,2}?(?P<lib>NCCL|RCCL)\s+(?P<level>INFO|WARN|TRACE|ABORT|ERROR)\b\s?(?P<msg>.*)$")
_LOG_LOOSE = re.compile(r"\b(?P<lib>NCCL|RCCL)\s+(?P<level>INFO|WARN|TRACE|ABORT|ERROR)\b\s?(?P<msg>.*)$")
# A log record glued to the end of a partial table row: launcher prefix, or a host starting with a letter.
_LOG_EMBEDDED = re.compile(
    r"(?:\[\d+(?:,\d+)?\](?:<std\w+>:)?\s?)?(?:\[[^\]\d][^\]]{0,62}\]\s*)?"
    r"[A-Za-z][\w.\-]{0,254}:\d+:\d+\s+\[\d+\]\s+(?:\S+:\d+\s+)?(?:NCCL|RCCL)\s+(?:INFO|WARN|TRACE|ABORT|ERROR)\b")

_VERSION_LINE = re.compile(r"\b(?P<lib>NCCL|RCCL) version (?P<ver>\d+\.\d+[\w.+\-]*)")
_TESTS_VERSION = re.compile(r"nccl-tests version (?P<ver>[\w.+\-]+)(?P<rest>.*)$")
_HEADER_KV = re.compile(r"([A-Za-z][A-Za-z_ ]{0,40}?)\s*:?\s+(-?\d+)(?:\((\w+)\))?(?=\s|$)")
_RUN_HEADER = re.compile(r"\bnThread\s+\d+\s+nGpus\s+\d+.*$")
_RANK_LINE = re.compile(
    r"\bRank\s+(?P<rank>\d+)\s+(?:Group\s+(?P<group>\d+)\s+)?(?:Pid\s+(?P<pid>\d+)\s+)?on\s+(?P<host>\S+)\s+"
    r"device\s+(?P<device>\d+)\s+\[(?P<bus>[^\]]*)\]\s*(?P<name>.*?)\s*$")
_OOB = re.compile(r"Out of bounds values\s*:\s*(?P<n>-?\d+)\s*(?P<status>OK|FAILED)?")
_AVG = re.compile(r"Avg bus bandwidth\s*:\s*(?P<bw>[-+]?(?:[\d.]+(?:[eE][-+]?\d+)?|nan|inf))\s*(?P<status>OK|FAILED)?",
                  re.I)
_BITWISE = re.compile(r"Bitwise mismatches\s*:\s*(?P<n>\d+)\s*(?P<status>OK|FAILED)?")
_REDUCING = re.compile(r"Reducing maxBytes to (?P<n>\d+)")
_TEST_START = re.compile(r"Collective test starting:\s*(?P<name>\S+)")
_TEST_END = re.compile(r"Collective test concluded:\s*(?P<name>\S+)")
_GPU_MEM = re.compile(r"GPU memory usage\s*:\s*(?P<v>.+?)\s*$")
_BINARY = re.compile(r"(?:^|[\s/=])(?P<name>[a-z][a-z0-9_]{0,64}_perf)(?:_mpi)?(?=\s|$)")
# A second launcher prefix clean_lines leaves: padded srun labels (" 3: "), "[0] " after "[1,0]<stdout>:",
# or a pdsh-style "host: " in front of a '#' line.
_EXTRA_PREFIX = re.compile(r"^(?:\[\d+(?:,\d+)?\](?:<std\w+>:)?\s*|\d+:\s+|[A-Za-z][\w.\-]{0,63}:\s+(?=#))")
_HASH_ERROR = re.compile(r"^\s*#\s*error:\s*(?P<msg>.+?)\s*$")

_TEST_NCCL_FAILURE = re.compile(r"(?:(?P<host>[^\s:]{1,255}):\s+)?Test NCCL failure\s+(?P<where>\S+)\s+'(?P<msg>.*?)'?\s*$")
_TEST_CUDA_FAILURE = re.compile(r"(?:(?P<host>[^\s:]{1,255}):\s+)?Test CUDA failure\s+(?P<where>\S+)\s+'(?P<msg>.*?)'?\s*$")
_TEST_TIMEOUT = re.compile(r"(?:(?P<host>[^\s:]{1,255}):\s+)?Test timeout\b")
_TEST_TRACE = re.compile(r"^\s*\.\.\s+(?P<host>\S+)\s+pid\s+\d+:\s+Test failure\b")
_GPU_MISMATCH = re.compile(r"Invalid number of GPUs|requested but only \d+ were found")
_BAD_ARGS = re.compile(r"invalid sizes? (?:specified )?for|invalid option\b")
_RANK_WRONG = re.compile(r"\brank=\d+\s+#wrong=\d+")

# Classification of NCCL WARN messages (and last-error strings). First match wins.
_WARN_RULES = [
    ("nccl_cuda_failure", re.compile(r"Cuda failure|CUDA (?:error|failure)|cudaError|unhandled cuda error", re.I)),
    ("ib_transport_error", re.compile(r"Got completion (?:from peer|with error)|with error \d+, opcode|IBV_WC_"
                                      r"|retry counter exceeded|remote access error|wc status|async event", re.I)),
    ("ib_setup_failed", re.compile(r"\bibv_\w+|NET/IB\w*\s*:.*(?:fail|unable|error|cannot|could not)"
                                   r"|Unable to (?:open|query) (?:device|port)|GID index|mlx5\w*.*fail", re.I)),
    ("shm_exhausted", re.compile(r"/dev/shm|posix_fallocate|shm_open|shared memory segment"
                                 r"|No space left on device", re.I)),
    ("nccl_bootstrap_failed", re.compile(r"bootstrap|socket\w*\s*:|Connect to \S+ failed|Connection (?:refused|reset)"
                                         r"|no socket interface|Message truncated|\bNet\s*:\s", re.I)),
    ("nccl_timeout", re.compile(r"time ?out|timed out|watchdog", re.I)),
    ("nccl_remote_error", re.compile(r"remote process exited|remote error|network error", re.I)),
    ("nccl_system_error", re.compile(r"unhandled system error|system error", re.I)),
    ("nccl_internal_error", re.compile(r"internal error", re.I)),
    ("nccl_invalid_usage", re.compile(r"invalid usage", re.I)),
    ("nccl_invalid_argument", re.compile(r"invalid argument", re.I)),
]

# 'Test NCCL failure' result strings (ncclGetErrorString) -> code.
_RESULT_RULES = [
    ("nccl_cuda_failure", re.compile(r"cuda", re.I)),
    ("nccl_system_error", re.compile(r"system error", re.I)),
    ("nccl_internal_error", re.compile(r"internal error", re.I)),
    ("nccl_invalid_argument", re.compile(r"invalid argument", re.I)),
    ("nccl_invalid_usage", re.compile(r"invalid usage", re.I)),
    ("nccl_remote_error", re.compile(r"remote", re.I)),
    ("nccl_timeout", re.compile(r"time ?out|timed out", re.I)),
]

_CUDA_HINTS = [
    (re.compile(r"out of memory", re.I),
     "GPU memory is exhausted: lower -e (max size) or stop other processes on the GPU."),
    (re.compile(r"no CUDA-capable device|invalid device ordinal|no device", re.I),
     "The process sees no (or fewer) GPUs: check CUDA_VISIBLE_DEVICES and the pod's GPU request."),
    (re.compile(r"driver version is insufficient|unsupported display driver|forward compatibility", re.I),
     "The NVIDIA driver is older than the CUDA runtime of the test: upgrade the driver or use a matching image."),
    (re.compile(r"peer access|peer mapping|invalid argument", re.I),
     "Peer-to-peer between these GPUs failed: try NCCL_P2P_DISABLE=1 to confirm, then check PCIe ACS/IOMMU "
     "and the GPU topology (nvidia-smi topo -m)."),
    (re.compile(r"ECC|uncorrectable|Xid", re.I),
     "A GPU hardware error: check dmesg for Xid and drain the GPU."),
]

_IB_HINTS = [
    (re.compile(r"Cannot allocate memory|reg_mr|memlock", re.I),
     "Memory registration failed: set the memlock limit to unlimited (ulimit -l; IPC_LOCK and a memlock "
     "rlimit in pods)."),
    (re.compile(r"GID", re.I),
     "Select the RoCE v2 GID of the port's IPv4 address with NCCL_IB_GID_INDEX."),
]

_TOKEN_INT = re.compile(r"^[-+]?\d+$")
_TOKEN_UINT = re.compile(r"^\d+$")
_TOKEN_WORD = re.compile(r"^[A-Za-z][\w.+\-]*$")
_TOKEN_NUM = re.compile(r"^(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf|infinity)|N/A)$", re.I)
_TOKEN_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TOKEN_CLOCK = re.compile(r"^\d{1,2}:\d{2}:\d{2}(?:\.\d+)?$")
_ROW_PREFIX = re.compile(r"^(?:\[[^\]]*\](?:<\w+>:)?|<\w+>:|[A-Za-z0-9][\w.\-@]*:)$")

_HEADER_KEYS = {
    "nthread": "nthread", "nthreads": "nthread", "ngpus": "ngpus", "minbytes": "min_bytes",
    "maxbytes": "max_bytes", "warmupiters": "warmup_iters", "iters": "iters", "aggiters": "agg_iters",
    "validation": "validation", "graph": "graph", "unalign": "unalign", "stepbytes": "step_bytes",
    "stepfactor": "step_factor",
}

_GROUP_FIELDS = {
    "time": "time_us", "cputime": "time_us", "algbw": "algbw_gbs", "busbw": "busbw_gbs",
    "wrong": "wrong", "error": "wrong", "errors": "wrong", "bitdiff": "bitdiff",
    "i_min": "iter_min_us", "i_max": "iter_max_us", "i_p99": "iter_p99_us", "i_cv": "iter_cv_pct",
}
_LEAD_FIELDS = {"size": "bytes", "bytes": "bytes", "count": "count", "type": "type", "redop": "redop",
                "op": "redop", "root": "root"}
_GROUP_NAMES = ("out_of_place", "in_place")
_GROUP_KEYS = ("time_us", "algbw_gbs", "busbw_gbs", "wrong")
_RDMA_NETS = ("ib", "ibext", "aws libfabric", "libfabric", "ofi", "gdr", "efa", "roce", "collnet")


def nccl_version_from_code(code):
    """22703 -> '2.27.3', 2708 -> '2.7.8' (NCCL_VERSION_CODE); None if not a code."""
    code = to_int(code)
    if code is None or code <= 0:
        return None
    if code >= 10000:
        return "%d.%d.%d" % (code // 10000, (code % 10000) // 100, code % 100)
    return "%d.%d.%d" % (code // 1000, (code % 1000) // 100, code % 100)


def _empty_result():
    return {
        "test": None, "collective": None, "version": None, "nccl_version": None, "header": {},
        "ranks": [], "nranks": 0, "hosts": [], "rows": [], "avg_busbw_gbs": None, "avg_busbw_source": None,
        "avg_busbw_status": None, "max_busbw_gbs": None, "max_busbw_bytes": None,
        "busbw_at_max_bytes_gbs": None, "out_of_bounds": None, "out_of_bounds_ok": None,
        "out_of_bounds_status": None, "transport": None, "transport_kind": None, "networks": [],
        "channel_transports": [], "gdr": None, "completed": False, "format": "text",
        "errors": [], "warnings": [], "ok": False,
    }


def _collective_of(test):
    if not test:
        return None
    name = os.path.basename(to_text(test))
    if name.endswith("_mpi"):
        name = name[:-4]
    if name.endswith("_perf"):
        name = name[:-5]
    return snake_case(name) or None


def _number(token):
    """Value of a numeric table cell: int when integral, float otherwise, None for N/A/nan/junk."""
    text = to_text(token).strip()
    if _TOKEN_INT.match(text):
        return int(text)
    return to_float(text)


def _wrong_value(token):
    text = to_text(token).strip()
    if text.upper() == "N/A" or text == "":
        return None
    value = to_int(text)
    if value is not None:
        return value
    return to_float(text)


# --- table layout ------------------------------------------------------------

class _Layout(object):
    """Column layout of a result table: leading columns, then measurement groups."""

    def __init__(self, lead, groups, timestamp=False, source="default", wrong_kind=None, time_kind="time"):
        self.lead = lead            # e.g. ["bytes", "count", "type", "redop", "root"]
        self.groups = groups        # e.g. [["time_us", "algbw_gbs", "busbw_gbs", "wrong"], [...]]
        self.timestamp = timestamp
        self.source = source        # "header" | "inferred" | "default"
        self.wrong_kind = wrong_kind
        self.time_kind = time_kind
        specs = [("lead", name, None) for name in lead]
        for index, fields in enumerate(groups):
            specs.extend(("group", field, index) for field in fields)
        if timestamp:
            specs.extend([("ts", "date", None), ("ts", "clock", None)])
        self.specs = specs

    @property
    def width(self):
        return len(self.specs)

    def columns(self):
        return {"lead": list(self.lead), "groups": [list(g) for g in self.groups], "timestamp": self.timestamp}


def _default_layout(has_redop=True, has_root=True, wrong_kind=None):
    lead = ["bytes", "count", "type"] + (["redop"] if has_redop else []) + (["root"] if has_root else [])
    fields = ["time_us", "algbw_gbs", "busbw_gbs", "wrong"]
    return _Layout(lead, [list(fields), list(fields)], source="default", wrong_kind=wrong_kind)


def _layout_from_header(tokens):
    """Build a layout from the column-name line; None if it is not one."""
    names = [t.lower() for t in tokens]
    if "size" not in names or "type" not in names:
        return None
    if not any(n in ("time", "cputime") for n in names) or not any(n in ("algbw", "busbw") for n in names):
        return None
    lead = []
    groups = []
    timestamp = False
    wrong_kind = None
    time_kind = "time"
    for raw in tokens:
        name = raw.lower().lstrip("#").rstrip("%")
        if name in ("time", "cputime"):
            time_kind = name
            groups.append([])
        if name == "timestamp":
            timestamp = True
            continue
        if not groups:
            lead.append(_LEAD_FIELDS.get(name, snake_case(name) or "col%d" % len(lead)))
            continue
        if name in ("wrong", "error", "errors"):
            wrong_kind = "count" if name == "wrong" else "max_error"
        field = _GROUP_FIELDS.get(name, snake_case(name) or "col")
        if field in groups[-1]:
            field = "%s_%d" % (field, len(groups[-1]))
        groups[-1].append(field)
    if not lead or lead[0] != "bytes" or not groups:
        return None
    if any("time_us" not in g or "busbw_gbs" not in g for g in groups):
        return None     # a damaged column line: rather infer the layout from the rows
    return _Layout(lead, groups, timestamp=timestamp, source="header", wrong_kind=wrong_kind, time_kind=time_kind)


def _valid(spec, token):
    kind, name, _index = spec
    if kind == "lead":
        if name in ("bytes", "count"):
            return bool(_TOKEN_UINT.match(token))
        if name in ("type", "redop"):
            return bool(_TOKEN_WORD.match(token))
        if name == "root":
            return bool(_TOKEN_INT.match(token))
        return True
    if kind == "ts":
        return bool(_TOKEN_DATE.match(token) if name == "date" else _TOKEN_CLOCK.match(token))
    return bool(_TOKEN_NUM.match(token))


def _is_row_start(tokens):
    return (len(tokens) >= 3 and _TOKEN_UINT.match(tokens[0]) is not None
            and _TOKEN_UINT.match(tokens[1]) is not None and _TOKEN_WORD.match(tokens[2]) is not None
            and tokens[2].upper() != "N/A")


def _strip_row_prefix(tokens):
    """Drop leading launcher/host tokens ("node1:", "[1,0]<stdout>:") in front of a row."""
    index = 0
    while index < len(tokens) and index < 3 and _ROW_PREFIX.match(tokens[index]) and not _TOKEN_NUM.match(tokens[index]):
        index += 1
    return tokens[index:] if index else tokens


class _Table(object):
    """Assemble result rows from token streams, also when NCCL log lines split a row."""

    def __init__(self, result, warnings):
        self.result = result
        self.warnings = warnings
        self.layout = None          # from a header, or locked after the first complete inferred row
        self.pending = None
        self.pending_layout = None
        self.pending_extra = []
        self.pending_lines = 0

    def set_header(self, layout):
        self.flush()
        self.layout = layout

    def _infer(self, tokens):
        """Layout for a row when no column header was seen."""
        has_redop = len(tokens) > 3 and _TOKEN_WORD.match(tokens[3]) is not None and tokens[3].upper() != "N/A"
        rest = tokens[3 + (1 if has_redop else 0):]
        wrong_kind = None
        if len(rest) >= 4:
            probe = rest[-1]
            wrong_kind = "max_error" if re.search(r"[eE.]", probe) and probe.upper() != "N/A" else "count"
        if len(rest) in (8, 9):
            layout = _default_layout(has_redop, len(rest) == 9, wrong_kind)
            layout.source = "inferred"
            self.layout = layout
            return layout
        if len(rest) % 4 == 1:
            has_root = True
        elif len(rest) % 4 == 0 and rest:
            has_root = False
        else:
            has_root = has_redop
        layout = _default_layout(has_redop, has_root, wrong_kind)
        layout.source = "inferred"
        return layout

    def feed(self, tokens):
        """Feed the tokens of one data-like line. Return True if they were table content."""
        tokens = _strip_row_prefix(tokens)
        if not tokens:
            return False
        if _is_row_start(tokens):
            if self.pending is None and self.layout is None and len(tokens) < 4 and not self.result["rows"]:
                return False
            self.flush()
            self.pending_layout = self.layout if self.layout is not None else self._infer(tokens)
            self.pending = []
            self.pending_extra = []
            self.pending_lines = 1
            self._extend(tokens)
            return True
        if self.pending is not None and all(_TOKEN_NUM.match(t) or _TOKEN_DATE.match(t) or _TOKEN_CLOCK.match(t)
                                            for t in tokens):
            self.pending_lines += 1
            self._extend(tokens)
            return True
        if all(_TOKEN_NUM.match(t) for t in tokens) and len(tokens) >= 3:
            self.warnings.append("table fragment without its row start ignored: %s" % " ".join(tokens)[:200])
            return True
        return False

    def _extend(self, tokens):
        specs = self.pending_layout.specs
        for token in tokens:
            position = len(self.pending)
            if position < len(specs):
                spec = specs[position]
                if spec[0] == "ts" and not _valid(spec, token) and _TOKEN_NUM.match(token) is None:
                    self.pending_extra.append(token)
                    continue
                if not _valid(spec, token):
                    if position < len(self.pending_layout.lead):
                        # Not a real row: drop it.
                        self.pending = None
                        return
                    self.pending_extra.append(token)
                    continue
                self.pending.append(token)
            else:
                self.pending_extra.append(token)
        if self.pending is not None and len(self.pending) >= len(specs):
            self._emit(partial=False)

    def flush(self):
        if self.pending is not None:
            self._emit(partial=True)

    def _emit(self, partial):
        tokens, layout, extra = self.pending, self.pending_layout, self.pending_extra
        self.pending = None
        self.pending_extra = []
        if not tokens:
            return
        lead_n = len(layout.lead)
        if len(tokens) <= lead_n:
            self.warnings.append("incomplete table row dropped (no measurement): %s" % " ".join(tokens)[:200])
            return
        row = {"bytes": None, "count": None, "type": None, "redop": None, "root": None}
        for name, token in zip(layout.lead, tokens[:lead_n]):
            if name in ("bytes", "count", "root"):
                row[name] = to_int(token)
            else:
                row[name] = token
        groups = []
        position = lead_n
        for index, fields in enumerate(layout.groups):
            values = tokens[position:position + len(fields)]
            position += len(fields)
            if not values:
                groups.append(None)
                continue
            group = dict((field, None) for field in _GROUP_KEYS)
            group.update((field, None) for field in fields)
            for field, token in zip(fields, values):
                if field == "wrong":
                    group[field] = _wrong_value(token)
                elif field == "bitdiff":
                    group[field] = to_int(token)
                else:
                    group[field] = to_float(token)
            groups.append(group)
        for index, group in enumerate(groups):
            key = _GROUP_NAMES[index] if index < len(_GROUP_NAMES) else "group_%d" % (index + 1)
            row[key] = group
        for key in _GROUP_NAMES:
            row.setdefault(key, None)
        if layout.timestamp and len(tokens) >= position + 2:
            row["timestamp"] = "%s %s" % (tokens[position], tokens[position + 1])
        if extra:
            row["extra"] = [_number(t) if _TOKEN_NUM.match(t) else t for t in extra]
        row["partial"] = bool(partial)
        if partial:
            self.warnings.append("table row for %s bytes is incomplete (output cut or interleaved)" % row["bytes"])
        if self.pending_lines > 1:
            row["split_lines"] = self.pending_lines
        self.result["rows"].append(row)
        if self.result["header"].get("wrong_column") is None and layout.wrong_kind:
            self.result["header"]["wrong_column"] = "#wrong" if layout.wrong_kind == "count" else "error"


# --- line helpers -------------------------------------------------------------

def _split_embedded(line):
    """Split 'row part<host:pid:tid [d] NCCL INFO ...>' into the row part and the log record.

    nccl-tests prints a row in pieces without a newline; a log record printed
    meanwhile lands behind the piece on the same line. The record must start
    with a launcher prefix ("[0] ") or a host name whose first letter does not
    continue a word (host names starting with a digit are not split off).
    """
    if "NCCL " not in line and "RCCL " not in line:
        return [line]
    if _LOG_AT_START.match(line):
        return [line]
    at = max(line.find("NCCL ", 1), line.find("RCCL ", 1))
    if at <= 0:
        return [line]
    for candidate in _LOG_EMBEDDED.finditer(line, max(0, at - 400)):
        begin = candidate.start()
        if begin == 0:
            continue
        if line[begin] != "[" and (line[begin - 1].isalpha() or line[begin - 1] in "._-"):
            continue
        head = line[:begin]
        if not head.strip():
            return [line]
        return [head, strip_launcher_prefix(line[begin:])]
    return [line]


def _classify_warn(message):
    for code, regex in _WARN_RULES:
        if regex.search(message):
            return code
    return None


def _hint_for(code, message):
    table = _CUDA_HINTS if code == "nccl_cuda_failure" else _IB_HINTS if code in ("ib_setup_failed",) else ()
    for regex, hint in table:
        if regex.search(message):
            return hint
    return None


def _parse_run_header(text, header):
    for key, value, paren in _HEADER_KV.findall(text):
        norm = re.sub(r"[\s_]+", "", key).lower()
        number = to_int(value)
        if norm == "step":
            if paren and paren.lower().startswith("byte"):
                header["step_bytes"] = number
            else:
                header["step_factor"] = number
            continue
        name = _HEADER_KEYS.get(norm) or snake_case(key)
        if name:
            header[name] = number


def _net_kind(name):
    if not name:
        return None
    low = name.lower()
    if low == "socket":
        return "tcp"
    if any(low.startswith(n) for n in _RDMA_NETS):
        return "rdma"
    return "other"


# --- main parser --------------------------------------------------------------

def parse_nccl_tests(text):
    """Parse nccl-tests output (text or JSON). Never raises; see module doc for the keys."""
    try:
        if isinstance(text, (dict, list)):
            return parse_nccl_tests_json(text)
        data = to_text(text)
        stripped = data.lstrip()
        if stripped[:1] in ("{", "[") and not re.match(r"\[\d+(?:,\d+)?\]", stripped):
            doc = _load_json(stripped)
            if doc is not None:
                return parse_nccl_tests_json(doc)
            if stripped[:1] == "{" and re.match(r'\{\s*"', stripped):
                result = _empty_result()
                result["format"] = "json"
                errors = ErrorCollector(NCCL_TESTS_ERRORS)
                errors.add("json_invalid", "the input starts like JSON but cannot be decoded")
                errors.add("no_table", "no result rows in the input")
                result["errors"] = errors.entries(last=_SECONDARY)
                return result
        result = _parse_text(data)
        if not result["rows"] and not result["header"].get("nthread"):
            embedded = _find_embedded_json(data)
            if embedded is not None:
                return parse_nccl_tests_json(embedded)
        return result
    except Exception as exc:  # a parser must never raise; report instead
        result = _empty_result()
        errors = ErrorCollector(NCCL_TESTS_ERRORS)
        errors.add("unknown", "parser error: %s" % exc)
        result["errors"] = errors.entries()
        return result


def _load_json(text):
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    return doc if isinstance(doc, (dict, list)) else None


def _find_embedded_json(data):
    match = re.search(r'(?m)^\s*\{\s*"(?:version|start_time|config|results|args)"', data)
    if not match:
        return None
    try:
        doc, _end = json.JSONDecoder().raw_decode(data[match.start():].lstrip())
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def _parse_text(data):
    result = _empty_result()
    header = result["header"]
    warnings = result["warnings"]
    errors = ErrorCollector(NCCL_TESTS_ERRORS)
    table = _Table(result, warnings)
    ranks = {}
    networks = {}
    weak_networks = {}
    channels = set()
    proxy_service = False
    specific_failure = False
    trace_hosts = []
    trace_lines = []

    lines = []
    for raw in clean_lines(data):
        lines.extend(_split_embedded(raw[:_MAX_LINE]))

    for index, line in enumerate(lines):
        if len(line) > _MAX_LINE:
            line = line[:_MAX_LINE]
        if not line.strip():
            continue
        if "ncclProxyService" in line:
            proxy_service = True

        # 1. NCCL/RCCL log records
        log = _LOG_AT_START.match(line) if (" INFO" in line or " WARN" in line or " TRACE" in line
                                            or " ABORT" in line or " ERROR" in line) else None
        if log is None and ("NCCL " in line or "RCCL " in line) and not line.lstrip().startswith("#"):
            log = _LOG_LOOSE.search(line)
        if log is not None:
            _handle_log(log, result, errors, warnings, networks, weak_networks, channels)
            continue

        content = _EXTRA_PREFIX.sub("", line.strip(), count=1).strip()
        if not content:
            continue
        body = content.lstrip("#").strip() if content.startswith("#") else content

        # 2. version / header / footer lines (with or without the leading '#')
        version = _VERSION_LINE.search(content)
        if version and "nccl-tests" not in content:
            result["nccl_version"] = version.group("ver")
            header["library"] = version.group("lib")
            continue
        tests_version = _TESTS_VERSION.search(body)
        if tests_version:
            result["version"] = tests_version.group("ver")
            for key, value in re.findall(r"nccl-(headers|library)=(\d+)", tests_version.group("rest")):
                header["nccl_%s_code" % key] = int(value)
            continue
        if _RUN_HEADER.search(body):
            _parse_run_header(_RUN_HEADER.search(body).group(0), header)
            continue
        start = _TEST_START.search(body)
        if start:
            result["test"] = start.group("name")
            continue
        if _TEST_END.search(body):
            result["completed"] = True
            continue
        rank = _RANK_LINE.search(body) if "Rank" in body else None
        if rank:
            number = int(rank.group("rank"))
            if number not in ranks:
                ranks[number] = {
                    "rank": number, "group": to_int(rank.group("group")), "pid": to_int(rank.group("pid")),
                    "host": rank.group("host"), "device": to_int(rank.group("device")),
                    "bus_id": rank.group("bus"), "name": rank.group("name") or None,
                }
            continue
        oob = _OOB.search(body)
        if oob:
            table.flush()
            result["out_of_bounds"] = int(oob.group("n"))
            result["out_of_bounds_status"] = oob.group("status")
            result["out_of_bounds_ok"] = (oob.group("status") == "OK") if oob.group("status") else (
                int(oob.group("n")) == 0)
            if int(oob.group("n")) > 0:
                errors.add("wrong_results", content)
            continue
        avg = _AVG.search(body)
        if avg:
            table.flush()
            result["avg_busbw_gbs"] = to_float(avg.group("bw"))
            result["avg_busbw_source"] = "footer" if result["avg_busbw_gbs"] is not None else None
            result["avg_busbw_status"] = avg.group("status")
            result["completed"] = True
            if avg.group("status") == "FAILED":
                errors.add("bandwidth_below_min", content)
            continue
        bitwise = _BITWISE.search(body)
        if bitwise:
            header["bitwise_mismatches"] = int(bitwise.group("n"))
            if int(bitwise.group("n")) > 0:
                errors.add("wrong_results", content,
                           hint="Bitwise repeatability check failed: results differ between identical runs.")
            continue
        reducing = _REDUCING.search(body)
        if reducing:
            header["max_bytes_reduced_to"] = int(reducing.group("n"))
            warnings.append("maxBytes reduced to %s bytes due to GPU memory limitation" % reducing.group("n"))
            continue
        gpu_mem = _GPU_MEM.search(body)
        if gpu_mem:
            header["gpu_memory_usage"] = gpu_mem.group("v")
            continue
        if content.startswith("#"):
            low = body.lower()
            if "blocking enabled" in low:
                header["blocking"] = True
            elif "parallel init enabled" in low:
                header["parallel_init"] = True
            elif "per-iteration report" in low:
                header["per_iter_timing"] = True
            elif low.startswith("bitwise repeatability"):
                header["bitwise_repeats"] = to_int((re.findall(r"\d+", body) or [None])[0])
            elif low.startswith("writing json output to"):
                header["json_output"] = body.split(" to ", 1)[-1].strip()
            hash_error = _HASH_ERROR.match(content)
            if hash_error:
                _last_error(hash_error.group("msg"), errors, warnings)
                continue

        tokens = body.split()
        layout = _layout_from_header(tokens) if tokens and tokens[0].lower() == "size" else None
        if layout is not None:
            table.set_header(layout)
            header["columns"] = layout.columns()
            header["time_kind"] = layout.time_kind
            if layout.wrong_kind:
                header["wrong_column"] = "#wrong" if layout.wrong_kind == "count" else "error"
            continue
        if content.startswith("#"):
            continue

        # 3. table data
        if tokens and table.feed(tokens):
            continue

        if result["test"] is None and "_perf" in content:
            binary = _BINARY.search(content)
            if binary and (" -" in content or "mpirun" in content or "srun" in content or "Running" in content
                           or content.startswith(("./", "/", ">", "$")) or "$ " in content or "# " in content
                           or "error while loading" in content or "not found" in content):
                result["test"] = binary.group("name")

        # 4. errors printed by the test
        failure = _TEST_NCCL_FAILURE.search(content) if "Test NCCL failure" in content else None
        if failure:
            specific_failure = True
            message = failure.group("msg")
            code = "nccl_error"
            result_part, _sep, last_error = message.partition(" / ")
            for rule_code, regex in _RESULT_RULES:
                if regex.search(result_part):
                    code = rule_code
                    break
            errors.add(code, content, host=failure.group("host"), hint=_hint_for(code, message))
            if last_error.strip():
                _last_error(last_error, errors, warnings, host=failure.group("host"))
            continue
        cuda = _TEST_CUDA_FAILURE.search(content) if "Test CUDA failure" in content else None
        if cuda:
            specific_failure = True
            errors.add("nccl_cuda_failure", content, host=cuda.group("host"),
                       hint=_hint_for("nccl_cuda_failure", cuda.group("msg")))
            continue
        timeout = _TEST_TIMEOUT.search(content) if "Test timeout" in content else None
        if timeout:
            specific_failure = True
            errors.add("nccl_timeout", content, host=timeout.group("host"))
            continue
        trace = _TEST_TRACE.match(line)
        if trace:
            if trace.group("host") not in trace_hosts:
                trace_hosts.append(trace.group("host"))
            trace_lines.append(content)
            continue
        if _GPU_MISMATCH.search(content):
            errors.add("gpu_count_mismatch", content)
            continue
        if _BAD_ARGS.search(content) and "NCCL" not in content:
            errors.add("invalid_arguments", content)
            continue
        if _RANK_WRONG.search(content):
            errors.add("wrong_results", content)
            continue
        launcher = scan_launcher_line(lines, index)
        if launcher:
            code, message, hint, host = launcher
            errors.add(code, message, host=host, hint=hint)
            continue
        if content.startswith(("USAGE:", "invalid type ", "invalid op ", "WARNING:", "Warning:")) and (
                "Permanently added" not in content and len(warnings) < 200 and content[:300] not in warnings):
            warnings.append(content[:300])
            continue

    table.flush()

    # ranks, hosts
    result["ranks"] = [ranks[k] for k in sorted(ranks)]
    result["nranks"] = len(result["ranks"])
    hosts = []
    for entry in result["ranks"]:
        if entry["host"] not in hosts:
            hosts.append(entry["host"])
    result["hosts"] = hosts

    # NCCL version from the header code when no 'NCCL version' line was printed
    if result["nccl_version"] is None and header.get("nccl_library_code"):
        result["nccl_version"] = nccl_version_from_code(header["nccl_library_code"])

    _finish_transport(result, networks, weak_networks, channels)

    if trace_lines and not specific_failure:
        errors.add("test_failure", trace_lines[0], host=trace_hosts[0] if trace_hosts else None)
        for host in trace_hosts[1:]:
            errors.get("test_failure")["hosts"].append(host)

    _finish(result, errors, proxy_service)
    return result


def _handle_log(log, result, errors, warnings, networks, weak_networks, channels):
    groups = log.groupdict()
    level = groups.get("level")
    message = (groups.get("msg") or "").strip()
    host = groups.get("host")
    if level == "INFO":
        version = _VERSION_LINE.search(message)
        if version:
            result["nccl_version"] = version.group("ver")
            result["header"]["library"] = version.group("lib")
            return
        if "Using network" in message:
            name = message.split("Using network", 1)[1].strip()
            if name:
                networks[name] = networks.get(name, 0) + 1
            return
        if " via " in message:
            for via in re.findall(r"\bvia\s+(\S+(?: [A-Za-z]+)?)", message):
                parts = via.split("/")
                family = parts[0]
                if family == "NET" and len(parts) > 1 and parts[1].strip():
                    name = parts[1].strip()
                    networks["__via__" + name] = networks.get("__via__" + name, 0) + 1
                    channels.add("NET/" + name)
                    if "GDRDMA" in message:
                        result["gdr"] = True
                    elif result["gdr"] is None:
                        result["gdr"] = False
                elif family.split():
                    channels.add(family.split()[0])
            return
        weak = re.match(r"NET/(IB\w*|Socket)\s*:\s*Using\b", message)
        if weak:
            weak_networks[weak.group(1)] = weak_networks.get(weak.group(1), 0) + 1
            return
        if re.search(r"NET/IB\s*:\s*No device found|Failed to open libibverbs", message):
            text = "NCCL found no usable IB/RoCE device (%s)" % message
            if text not in warnings:
                warnings.append(text)
        return
    if level in ("WARN", "ABORT", "ERROR"):
        code = _classify_warn(message)
        if code:
            errors.add(code, message, host=host, hint=_hint_for(code, message))
        else:
            text = "NCCL WARN %s" % message
            if text not in warnings and len(warnings) < 200:
                warnings.append(text)


def _last_error(message, errors, warnings, host=None):
    """ncclGetLastError() text: an error when it names a known failure, else a warning."""
    message = to_text(message).strip()
    if not message:
        return
    code = _classify_warn(message)
    if code:
        errors.add(code, message, host=host, hint=_hint_for(code, message))
    elif message not in warnings:
        warnings.append("NCCL last error: %s" % message)


def _finish_transport(result, networks, weak_networks, channels):
    named = dict((k, v) for k, v in networks.items() if not k.startswith("__via__"))
    via = dict((k[len("__via__"):], v) for k, v in networks.items() if k.startswith("__via__"))
    transport = None
    for source in (named, via, weak_networks):
        if source:
            transport = sorted(source.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
            break
    result["transport"] = transport
    result["transport_kind"] = _net_kind(transport)
    seen = []
    for source in (named, via, weak_networks):
        for name in sorted(source):
            if name not in seen:
                seen.append(name)
    result["networks"] = seen
    result["channel_transports"] = sorted(channels)


def _summarise_rows(result):
    values = []
    best = None
    for row in result["rows"]:
        for key in _GROUP_NAMES:
            group = row.get(key)
            if not group:
                continue
            bw = group.get("busbw_gbs")
            if isinstance(bw, (int, float)):
                values.append(float(bw))
                if best is None or bw > best[0]:
                    best = (float(bw), row.get("bytes"))
    if best:
        result["max_busbw_gbs"] = best[0]
        result["max_busbw_bytes"] = best[1]
    sized = [r for r in result["rows"] if isinstance(r.get("bytes"), int)]
    if sized:
        top = max(r["bytes"] for r in sized)
        bws = []
        for row in sized:
            if row["bytes"] != top:
                continue
            for key in _GROUP_NAMES:
                group = row.get(key) or {}
                if isinstance(group.get("busbw_gbs"), (int, float)):
                    bws.append(float(group["busbw_gbs"]))
        result["busbw_at_max_bytes_gbs"] = max(bws) if bws else None
    if result["avg_busbw_gbs"] is None and values:
        result["avg_busbw_gbs"] = round(sum(values) / len(values), 6)
        result["avg_busbw_source"] = "rows"


def _finish(result, errors, proxy_service):
    _summarise_rows(result)
    if result["test"] and not result["collective"]:
        result["collective"] = _collective_of(result["test"])
    # wrong data: the footer decides; without a footer, nonzero #wrong counts
    bad_rows = []
    for row in result["rows"]:
        for key in _GROUP_NAMES:
            group = row.get(key) or {}
            wrong = group.get("wrong")
            if isinstance(wrong, int) and wrong > 0 and result["header"].get("wrong_column") != "error":
                bad_rows.append(row.get("bytes"))
    if result["out_of_bounds"] is not None and result["out_of_bounds"] > 0:
        if not errors.has("wrong_results"):
            errors.add("wrong_results", "Out of bounds values : %d FAILED" % result["out_of_bounds"])
    elif result["out_of_bounds"] is None and bad_rows:
        errors.add("wrong_results", "nonzero #wrong at sizes %s" % ", ".join(str(b) for b in sorted(set(bad_rows))))
    if bad_rows:
        entry = errors.get("wrong_results")
        if entry is not None:
            entry["sizes"] = sorted(set(b for b in bad_rows if b is not None))
    if proxy_service and errors.has("segfault"):
        errors.get("segfault")["hint"] = (
            "The crash is in ncclProxyService: the container lacks the IPC_LOCK capability / memlock limit; "
            "add capabilities: add: [IPC_LOCK] to the pod's securityContext.")
    if not result["rows"]:
        errors.add("no_table", "no nccl-tests result rows in the output")
    elif not result["completed"] and result["format"] == "text":
        result["warnings"].append("no result footer (Avg bus bandwidth): the output may be cut or the run unfinished")
    result["warnings"] = _dedupe(result["warnings"])
    result["errors"] = errors.entries(last=_SECONDARY)
    result["ok"] = bool(result["rows"]) and not result["errors"]


def _dedupe(items, limit=100):
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    if len(out) > limit:
        out = out[:limit] + ["... %d more warnings" % (len(out) - limit)]
    return out


# --- JSON ----------------------------------------------------------------------

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


def parse_nccl_tests_json(data):
    """Parse the JSON nccl-tests writes with -J/--output_file <f>.json (or the rccl-tests list).

    Accepts the JSON text, bytes, or the already decoded dict/list. Never raises.
    """
    result = _empty_result()
    result["format"] = "json"
    errors = ErrorCollector(NCCL_TESTS_ERRORS)
    try:
        doc = data
        if not isinstance(data, (dict, list)):
            doc = _load_json(to_text(data).strip())
            if doc is None:
                errors.add("json_invalid", "input is not a JSON object or list")
        if isinstance(doc, list):
            _json_rccl(doc, result)
        elif isinstance(doc, dict):
            _json_nccl(doc, result, errors)
    except Exception as exc:  # never raise
        errors.add("unknown", "parser error: %s" % exc)
    _finish(result, errors, False)
    return result


def _json_nccl(doc, result, errors):
    header = result["header"]
    header["json_version"] = _json_number(doc.get("version"))
    if _json_str(doc.get("nccl_version")):
        result["nccl_version"] = nccl_version_from_code(_json_str(doc.get("nccl_version"))) or _json_str(
            doc.get("nccl_version"))
    args = doc.get("args")
    if isinstance(args, list) and args and _json_str(args[0]):
        result["test"] = os.path.basename(_json_str(args[0])) or None
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    mapping = {"nthreads": "nthread", "ngpus": "ngpus", "minimum_bytes": "min_bytes", "maximum_bytes": "max_bytes",
               "step_factor": "step_factor", "step_bytes": "step_bytes", "warmup_iters": "warmup_iters",
               "iterations": "iters", "aggregated_iterations": "agg_iters", "validation": "validation",
               "graph": "graph", "bitwise_repeats": "bitwise_repeats", "per_iter_skip": "per_iter_skip"}
    for key, value in config.items():
        if key == "devices":
            continue
        name = mapping.get(key)
        if name:
            header[name] = _json_number(value)
        elif key in ("blocking_collectives", "parallel_init", "per_iter_timing"):
            header["blocking" if key == "blocking_collectives" else key] = _json_bool(value)
        else:
            header[snake_case(key)] = value if isinstance(value, (int, float, str, bool)) else None
    # util.cu writes "devices" inside "config"; accept it at the top level too.
    devices = config.get("devices") if isinstance(config.get("devices"), list) else doc.get("devices")
    devices = devices if isinstance(devices, list) else []
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
    for entry in result["ranks"]:
        if entry["host"] and entry["host"] not in result["hosts"]:
            result["hosts"].append(entry["host"])
    results = doc.get("results") if isinstance(doc.get("results"), list) else []
    for item in results:
        if not isinstance(item, dict):
            continue
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
        for key in ("out_of_place_per_iter", "in_place_per_iter"):
            stats = item.get(key)
            target = row.get(key.replace("_per_iter", ""))
            if isinstance(stats, dict) and isinstance(target, dict):
                for name in ("min_us", "max_us", "avg_us", "p50_us", "p95_us", "p99_us", "stdev_us", "cv_pct"):
                    if name in stats:
                        target["iter_" + name] = _json_float(stats.get(name))
        if isinstance(row["bytes"], int) and (row["out_of_place"] or row["in_place"]):
            result["rows"].append(row)
    oob = doc.get("out_of_bounds")
    if isinstance(oob, dict):
        result["out_of_bounds"] = _json_size(oob.get("count"))
        result["out_of_bounds_ok"] = _json_bool(oob.get("okay"))
        if result["out_of_bounds_ok"] is not None:
            result["out_of_bounds_status"] = "OK" if result["out_of_bounds_ok"] else "FAILED"
    avg = doc.get("average_bus_bandwidth")
    if isinstance(avg, dict):
        result["avg_busbw_gbs"] = _json_float(avg.get("bandwidth"))
        result["avg_busbw_source"] = "footer" if result["avg_busbw_gbs"] is not None else None
        okay = avg.get("okay")
        if _json_bool(okay) is not None:
            result["avg_busbw_status"] = "OK" if _json_bool(okay) else "FAILED"
            if not _json_bool(okay):
                errors.add("bandwidth_below_min", "average_bus_bandwidth okay=false (%s GB/s)" % avg.get("bandwidth"))
        result["completed"] = True
    bitwise = doc.get("bitwise_mismatches")
    if isinstance(bitwise, dict) and _json_number(bitwise.get("count")):
        result["header"]["bitwise_mismatches"] = _json_number(bitwise.get("count"))
        errors.add("wrong_results", "bitwise_mismatches count=%s" % bitwise.get("count"),
                   hint="Bitwise repeatability check failed: results differ between identical runs.")
    for message in doc.get("errors") if isinstance(doc.get("errors"), list) else []:
        _last_error(message, errors, result["warnings"])
    if result["rows"]:
        result["header"]["wrong_column"] = "#wrong"


def _json_rccl(doc, result):
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
