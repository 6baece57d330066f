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

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.mpi_errors import (
    MPI_ERRORS, ErrorCollector, scan_launcher_line)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    Notes, clean_lines, is_context_line, is_diagnostic_line, snake_case, unique, strip_launcher_prefix, to_float, to_int, to_text)

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
_MAX_WARNINGS = 100  # listed; more are counted
_MAX_UNKNOWN_LISTED = 50  # lines no rule knows, listed as warnings; more are counted

# --- line classification -----------------------------------------------------

# host:pid:tid [dev] [file.cc:123] NCCL INFO|WARN ...; optional timestamp/launcher bracket first.
_LOG_AT_START = re.compile(
    r"^\s*(?:\[[^\]]{0,64}\]\s*)?(?P<host>[^\s:\[\]]+):(?P<pid>\d+):(?P<tid>\d+)\s+\[(?P<dev>\d+)\]\s+"
    r"(?:\S+\s+){0,2}?(?P<lib>NCCL|RCCL)\s+(?P<level>INFO|WARN|TRACE|ABORT|ERROR)\b\s?(?P<msg>.*)$")
_LOG_LOOSE = re.compile(r"\b(?P<lib>NCCL|RCCL)\s+(?P<level>INFO|WARN|TRACE|ABORT|ERROR)\b\s?(?P<msg>.*)$")
# A log record glued to the end of a partial table row: launcher prefix, or a host starting with a letter.
_LOG_EMBEDDED = re.compile(
    r"(?:\[\d+(?:,\d+)?\](?:<std\w+>:)?\s?)?(?:\[[^\]\d][^\]]{0,62}\]\s*)?"
    r"(?<![^\W\d]|[.\-])[A-Za-z][\w.\-]{0,254}:\d+:\d+\s+\[\d+\]\s+(?:\S+:\d+\s+)?(?:NCCL|RCCL)\s+(?:INFO|WARN|TRACE|ABORT|ERROR)\b")

_VERSION_LINE = re.compile(r"\b(?P<lib>NCCL|RCCL) version (?P<ver>\d+\.\d+[\w.+\-]*)")
_TESTS_VERSION = re.compile(r"nccl-tests version (?P<ver>[\w.+\-]+)(?P<rest>.*)$")
_HEADER_KV = re.compile(r"([A-Za-z][A-Za-z_ ]{0,40}?)\s*:?\s+(-?\d+)(?:\((\w+)\))?(?=\s|$)")
_RUN_HEADER = re.compile(r"\bnThread\s+\d+\s+nGpus\s+\d+.*$")
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
_FRAME = re.compile(r"^-{20,}$")
_HEADER_CODES = re.compile(r"nccl-(headers|library)=(\d+)")
_DIGITS = re.compile(r"\d+")
_EMBEDDED_JSON = re.compile(r'(?m)^[ \t]*(\{)\s*"(?:version|start_time|config|results|args)"')
_WEAK_NETWORK = re.compile(r"NET/(IB\w*|Socket)\s*:\s*Using\b")
_NO_IB_DEVICE = re.compile(r"NET/IB\s*:\s*No device found|Failed to open libibverbs")
_VIA = re.compile(r"\bvia\s+(\S+(?: [A-Za-z]+)?)")
_FAILURE_TAIL = re.compile(r"\s+(\S+)\s+'")

_TEST_TRACE = re.compile(r"^\s*\.\.\s+(?P<host>\S+)\s+pid\s+\d+:\s+Test failure\b")
_GPU_MISMATCH = re.compile(r"Invalid number of GPUs|requested but only \d+ were found")
_BAD_ARGS = re.compile(r"invalid sizes? (?:specified )?for|invalid option\b")
_RANK_WRONG = re.compile(r"\brank=\d+\s+#wrong=\d+")

# Classification of NCCL WARN messages (and last-error strings). First match wins. Each regex is
# only tried when the lowercased message holds one of its needles (substrings every match holds).
_WARN_RULES = [
    ("nccl_cuda_failure", ("cuda",),
     re.compile(r"Cuda failure|CUDA (?:error|failure)|cudaError|unhandled cuda error", re.I)),
    ("ib_transport_error", ("got completion", "with error", "ibv_wc_", "retry counter exceeded", "remote access error",
                            "wc status", "async event"),
     re.compile(r"Got completion (?:from peer|with error)|with error \d+, opcode|IBV_WC_"
                r"|retry counter exceeded|remote access error|wc status|async event", re.I)),
    ("ib_setup_failed", ("ibv_", "net/ib", "unable to ", "gid index", "mlx5"),
     re.compile(r"\bibv_\w+|NET/IB\w*\s*:.*(?:fail|unable|error|cannot|could not)"
                r"|Unable to (?:open|query) (?:device|port)|GID index|mlx5\w*.*fail", re.I)),
    ("shm_exhausted", ("/dev/shm", "posix_fallocate", "shm_open", "shared memory segment", "no space left on device"),
     re.compile(r"/dev/shm|posix_fallocate|shm_open|shared memory segment|No space left on device", re.I)),
    ("nccl_bootstrap_failed", ("bootstrap", "socket", "connect to ", "connection ", "message truncated", "net"),
     re.compile(r"bootstrap|socket\w*\s*:|Connect to \S+ failed|Connection (?:refused|reset)"
                r"|no socket interface|Message truncated|\bNet\s*:\s", re.I)),
    ("nccl_timeout", ("time", "watchdog"), re.compile(r"time ?out|timed out|watchdog", re.I)),
    ("nccl_remote_error", ("remote", "network error"),
     re.compile(r"remote process exited|remote error|network error", re.I)),
    ("nccl_system_error", ("system error",), re.compile(r"unhandled system error|system error", re.I)),
    ("nccl_internal_error", ("internal error",), re.compile(r"internal error", re.I)),
    ("nccl_invalid_usage", ("invalid usage",), re.compile(r"invalid usage", re.I)),
    ("nccl_invalid_argument", ("invalid argument",), re.compile(r"invalid argument", re.I)),
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
_ROW_FIRST = frozenset("0123456789-+.nNiI")   # first characters of a _TOKEN_NUM token
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


def _cell_float(token):
    """A validated numeric cell as a finite float; None for N/A, nan and inf."""
    try:
        value = float(token)
    except ValueError:
        return None
    return value if value - value == 0 else None


def _wrong_value(token):
    if token.isdecimal():
        return int(token)
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
        self.validators = [_validator(spec) for spec in specs]
        # per group: the group dict to copy, and (field, converter) per column
        self.group_plans = [(dict.fromkeys(list(_GROUP_KEYS) + [f for f in fields if f not in _GROUP_KEYS]),
                             [(field, _converter(field)) for field in fields]) for fields in groups]

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


def _validator(spec):
    """The check a token must pass to fill this column (a compiled regex's match, or accept-all)."""
    kind, name, _index = spec
    if kind == "lead":
        if name in ("bytes", "count"):
            return _TOKEN_UINT.match
        if name in ("type", "redop"):
            return _TOKEN_WORD.match
        if name == "root":
            return _TOKEN_INT.match
        return _any_token
    if kind == "ts":
        return _TOKEN_DATE.match if name == "date" else _TOKEN_CLOCK.match
    return _TOKEN_NUM.match


def _any_token(_token):
    return True


def _converter(field):
    if field == "wrong":
        return _wrong_value
    if field == "bitdiff":
        return to_int
    return _cell_float


def _is_row_start(tokens):
    return (len(tokens) >= 3 and _TOKEN_UINT.match(tokens[0]) is not None
            and _TOKEN_UINT.match(tokens[1]) is not None and _TOKEN_WORD.match(tokens[2]) is not None
            and tokens[2].upper() != "N/A")


def _may_start_row(token):
    """False when a line starting with this token can be no table content (no number, no launcher prefix)."""
    return token[0] in _ROW_FIRST or token[-1] in ":]"


def _strip_row_prefix(tokens):
    """Drop leading launcher/host tokens ("node1:", "[1,0]<stdout>:") in front of a row."""
    if not tokens or tokens[0][-1] not in ":]":
        return tokens
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
        layout = self.pending_layout
        specs, validators, lead_n = layout.specs, layout.validators, len(layout.lead)
        pending, extra = self.pending, self.pending_extra
        width = len(specs)
        for token in tokens:
            position = len(pending)
            if position >= width:
                extra.append(token)
            elif validators[position](token):
                pending.append(token)
            elif specs[position][0] == "ts" and _TOKEN_NUM.match(token) is None:
                extra.append(token)
            elif position < lead_n:
                self.pending = None     # not a real row: drop it
                return
            else:
                extra.append(token)
        if len(pending) >= width:
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
                row[name] = int(token)
            else:
                row[name] = token
        groups = []
        position = lead_n
        for template, plan in layout.group_plans:
            values = tokens[position:position + len(plan)]
            position += len(plan)
            if not values:
                groups.append(None)
                continue
            group = template.copy()
            for (field, convert), token in zip(plan, values):
                group[field] = convert(token)
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

def _split_embedded(line, checked=False):
    """Split 'row part<host:pid:tid [d] NCCL INFO ...>' into the row part and the log record.

    nccl-tests prints a row in pieces without a newline; a log record printed
    meanwhile lands behind the piece on the same line. The record must start
    with a launcher prefix ("[0] ") or a host name whose first letter does not
    continue a word (host names starting with a digit are not split off).
    """
    if "NCCL " not in line and "RCCL " not in line:
        return [line]
    if not checked and _LOG_AT_START.match(line):
        return [line]
    # A record starts at most ~400 characters before its "NCCL"/"RCCL" word and ends just after the
    # level: only those windows are searched (around the first few such words), so a long line costs
    # a bounded number of regex attempts, not one per character.
    for at in _lib_words(line):
        for candidate in _LOG_EMBEDDED.finditer(line, max(0, at - 400), min(len(line), at + 20)):
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


def _lib_words(line, limit=2):
    """Positions of the first `limit` "NCCL " / "RCCL " words after the line's first character."""
    found = []
    for word in ("NCCL ", "RCCL "):
        at = line.find(word, 1)
        while at > 0 and len(found) < 2 * limit:
            found.append(at)
            at = line.find(word, at + 1)
    return sorted(found)[:limit]


def _classify_warn(message):
    low = message.lower()
    for code, needles, regex in _WARN_RULES:
        for needle in needles:
            if needle in low:
                if regex.search(message):
                    return code
                break
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
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, (dict, list)) else None


def _find_embedded_json(data):
    # [ \t]* (not \s*) at the line start: a \s* there spans runs of blank lines and made this search
    # quadratic in them. The \s* after the brace is tried once per brace, so it stays linear.
    match = _EMBEDDED_JSON.search(data)
    if not match:
        return None
    try:
        doc, _end = json.JSONDecoder().raw_decode(data, match.start(1))
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def _split_lines(data):
    """clean_lines cut to _MAX_LINE, with log records glued behind a row piece split off.

    Returns (lines, records): records maps the index of each line that is a
    whole log record to its _LOG_AT_START match, so that no line is matched twice.
    """
    lines = []
    records = {}
    for raw in clean_lines(data):
        if len(raw) > _MAX_LINE:
            raw = raw[:_MAX_LINE]
        if "CCL " not in raw:
            lines.append(raw)
            continue
        log = _LOG_AT_START.match(raw)
        if log is not None:
            records[len(lines)] = log
            lines.append(raw)
        else:
            lines.extend(_split_embedded(raw, checked=True))
    return lines, records


def _parse_text(data):
    return _TextParser().parse(data)


class _TextParser(object):
    """One pass over nccl-tests text output; each line is handled by the first kind it turns out to be.

    The kinds, cheapest and most frequent first: NCCL log records, table rows,
    header and footer lines, comments, errors, and at last lines this parser
    does not know (a warning when they report a problem, never an error).
    Every regex that is not anchored is gated by a substring the match must
    contain, so most lines cost a few substring tests; no regex runs over
    more than one line.
    """

    def __init__(self):
        self.result = _empty_result()
        self.header = self.result["header"]
        self.warnings = Notes(limit=_MAX_WARNINGS, width=1000)
        self.result["warnings"] = self.warnings
        self.errors = ErrorCollector(NCCL_TESTS_ERRORS)
        self.table = _Table(self.result, self.warnings)
        self.ranks = {}
        self.networks = {}
        self.weak_networks = {}
        self.channels = set()
        self.proxy_service = False
        self.specific_failure = False
        self.trace_hosts = []
        self.trace_lines = []
        self.unknown_lines = 0
        self.frame_lines = None     # lines seen so far inside an Open MPI help frame (dash lines), or None
        self.joined_line = None     # a wrapped line joined to the error message of the line before

    def parse(self, data):
        lines, records = _split_lines(data)
        for index, line in enumerate(lines):
            stripped = line.strip()
            if stripped:
                self._line(lines, index, line, stripped, records.get(index))
        self.table.flush()
        return self._conclude()

    # --- one line ------------------------------------------------------------

    def _line(self, lines, index, line, stripped, record):
        if "ncclProxyService" in line:
            self.proxy_service = True
        if "CCL" in line and self._log_record(line, stripped, record):
            return
        content = stripped
        if content[0] == "[" or ":" in content:
            content = _EXTRA_PREFIX.sub("", content, count=1).strip()
            if not content:
                return
        if self._frame(content):
            return
        fed = False
        if content[0].isdigit():
            fed = True
            if self.table.feed(content.split()):
                return
        body = content.lstrip("#").strip() if content[0] == "#" else content
        if self._header_or_footer(content, body):
            return
        if content[0] == "#" and self._comment(content, body):
            return
        tokens = body.split()
        if tokens and tokens[0].lower() == "size":
            layout = _layout_from_header(tokens)
            if layout is not None:
                self._set_columns(layout)
                return
        if content[0] == "#":
            return
        if not fed and tokens and _may_start_row(tokens[0]) and self.table.feed(tokens):
            return
        is_command = self._command_line(content)
        if self._test_error(line, content) or self._launcher_error(lines, index):
            return
        if not is_command and index != self.joined_line:
            self._unknown(content)

    def _log_record(self, line, stripped, log):
        """An NCCL/RCCL log record ("host:pid:tid [dev] NCCL INFO ..."): handled, True."""
        if log is None and (" INFO" in line or " WARN" in line or " TRACE" in line
                            or " ABORT" in line or " ERROR" in line):
            log = _LOG_AT_START.match(line)
        if log is None and ("NCCL " in line or "RCCL " in line) and stripped[0] != "#":
            log = _LOG_LOOSE.search(line)
        if log is None:
            return False
        level = log.group("level")
        message = (log.group("msg") or "").strip()
        host = log.groupdict().get("host")
        if level == "INFO":
            self._info(message)
        elif level in ("WARN", "ABORT", "ERROR"):
            self._warn(message, host)
        return True

    def _info(self, message):
        if "version" in message:
            version = _VERSION_LINE.search(message)
            if version:
                self.result["nccl_version"] = version.group("ver")
                self.header["library"] = version.group("lib")
                return
        if "Using network" in message:
            name = message.split("Using network", 1)[1].strip()
            if name:
                self.networks[name] = self.networks.get(name, 0) + 1
            return
        if " via " in message:
            self._channel(message)
            return
        if "NET/" not in message and "libibverbs" not in message:
            return
        weak = _WEAK_NETWORK.match(message)
        if weak:
            self.weak_networks[weak.group(1)] = self.weak_networks.get(weak.group(1), 0) + 1
            return
        if _NO_IB_DEVICE.search(message):
            self.warnings.add("NCCL found no usable IB/RoCE device (%s)" % message)

    def _channel(self, message):
        """'Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA': the transport of a channel."""
        for via in _VIA.findall(message):
            parts = via.split("/")
            family = parts[0]
            if family == "NET" and len(parts) > 1 and parts[1].strip():
                name = parts[1].strip()
                self.networks["__via__" + name] = self.networks.get("__via__" + name, 0) + 1
                self.channels.add("NET/" + name)
                if "GDRDMA" in message:
                    self.result["gdr"] = True
                elif self.result["gdr"] is None:
                    self.result["gdr"] = False
            elif family.split():
                self.channels.add(family.split()[0])

    def _warn(self, message, host):
        code = _classify_warn(message)
        if code:
            self.errors.add(code, message, host=host, hint=_hint_for(code, message))
        else:
            self.warnings.add("NCCL WARN %s" % message)

    def _header_or_footer(self, content, body):
        """Version, run header, rank, footer lines (with or without the leading '#'): handled, True."""
        result, header = self.result, self.header
        if "CCL version" in content and "nccl-tests" not in content:
            version = _VERSION_LINE.search(content)
            if version:
                result["nccl_version"] = version.group("ver")
                header["library"] = version.group("lib")
                return True
        if "nccl-tests version" in body:
            tests_version = _TESTS_VERSION.search(body)
            if tests_version:
                result["version"] = tests_version.group("ver")
                for key, value in _HEADER_CODES.findall(tests_version.group("rest")):
                    header["nccl_%s_code" % key] = int(value)
                return True
        if "nThread" in body:
            run_header = _RUN_HEADER.search(body)
            if run_header:
                _parse_run_header(run_header.group(0), header)
                return True
        if "Collective test" in body:
            start = _TEST_START.search(body)
            if start:
                result["test"] = start.group("name")
                return True
            if _TEST_END.search(body):
                result["completed"] = True
                return True
        if "Rank" in body and self._rank(body):
            return True
        if "Out of bounds values" in body and self._out_of_bounds(content, body):
            return True
        if "bandwidth" in body.lower() and self._average(content, body):
            return True
        if "Bitwise mismatches" in body:
            bitwise = _BITWISE.search(body)
            if bitwise:
                header["bitwise_mismatches"] = int(bitwise.group("n"))
                if int(bitwise.group("n")) > 0:
                    self.errors.add("wrong_results", content,
                                    hint="Bitwise repeatability check failed: results differ between identical runs.")
                return True
        if "Reducing maxBytes" in body:
            reducing = _REDUCING.search(body)
            if reducing:
                header["max_bytes_reduced_to"] = int(reducing.group("n"))
                self.warnings.add("maxBytes reduced to %s bytes due to GPU memory limitation" % reducing.group("n"))
                return True
        if "GPU memory usage" in body:
            gpu_mem = _GPU_MEM.search(body)
            if gpu_mem:
                header["gpu_memory_usage"] = gpu_mem.group("v").strip()
                return True
        return False

    def _rank(self, body):
        rank = _RANK_LINE.search(body)
        if not rank:
            return False
        number = int(rank.group("rank"))
        if number not in self.ranks:
            self.ranks[number] = {
                "rank": number, "group": to_int(rank.group("group")), "pid": to_int(rank.group("pid")),
                "host": rank.group("host"), "device": to_int(rank.group("device")),
                "bus_id": rank.group("bus"), "name": rank.group("name").strip() or None,
            }
        return True

    def _out_of_bounds(self, content, body):
        oob = _OOB.search(body)
        if not oob:
            return False
        result = self.result
        self.table.flush()
        result["out_of_bounds"] = int(oob.group("n"))
        result["out_of_bounds_status"] = oob.group("status")
        result["out_of_bounds_ok"] = (oob.group("status") == "OK") if oob.group("status") else (
            int(oob.group("n")) == 0)
        if int(oob.group("n")) > 0:
            self.errors.add("wrong_results", content)
        return True

    def _average(self, content, body):
        avg = _AVG.search(body)
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

    def _comment(self, content, body):
        """Flags of '#' lines; '# error: ...' (ncclGetLastError). True when the line is done."""
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
        if "error:" in content:
            hash_error = _HASH_ERROR.match(content)
            if hash_error and hash_error.group("msg").strip():
                self._last_error(hash_error.group("msg"))
                return True
        return False

    def _set_columns(self, layout):
        self.table.set_header(layout)
        self.header["columns"] = layout.columns()
        self.header["time_kind"] = layout.time_kind
        if layout.wrong_kind:
            self.header["wrong_column"] = "#wrong" if layout.wrong_kind == "count" else "error"

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
        errors = self.errors
        if "Test NCCL failure" in content:
            failure = _failure_line(content, "Test NCCL failure")
            if failure:
                self._nccl_failure(content, *failure)
                return True
        if "Test CUDA failure" in content:
            failure = _failure_line(content, "Test CUDA failure")
            if failure:
                host, _where, message = failure
                self.specific_failure = True
                errors.add("nccl_cuda_failure", content, host=host, hint=_hint_for("nccl_cuda_failure", message))
                return True
        if "Test timeout" in content:
            at = content.find("Test timeout")
            after = content[at + len("Test timeout"):at + len("Test timeout") + 1]
            if not (after.isalnum() or after == "_"):
                self.specific_failure = True
                errors.add("nccl_timeout", content, host=_host_before(content[:at]))
                return True
        if ".." in line and "Test failure" in line:
            trace = _TEST_TRACE.match(line)
            if trace:
                self.trace_hosts.append(trace.group("host"))
                self.trace_lines.append(content)
                return True
        if ("GPUs" in content or "were found" in content) and _GPU_MISMATCH.search(content):
            errors.add("gpu_count_mismatch", content)
            return True
        if "invalid" in content and _BAD_ARGS.search(content) and "NCCL" not in content:
            errors.add("invalid_arguments", content)
            return True
        if "#wrong=" in content and _RANK_WRONG.search(content):
            errors.add("wrong_results", content)
            return True
        return False

    def _nccl_failure(self, content, host, _where, message):
        self.specific_failure = True
        code = "nccl_error"
        result_part, _sep, last_error = message.partition(" / ")
        for rule_code, regex in _RESULT_RULES:
            if regex.search(result_part):
                code = rule_code
                break
        self.errors.add(code, content, host=host, hint=_hint_for(code, message))
        if last_error.strip():
            self._last_error(last_error, host=host)

    def _launcher_error(self, lines, index):
        launcher = scan_launcher_line(lines, index)
        if not launcher:
            return False
        code, message, hint, host = launcher
        if len(message) > len(lines[index].strip()):
            self.joined_line = index + 1
        self.errors.add(code, message, host=host, hint=hint)
        return True

    def _frame(self, content):
        """Open MPI frames its help messages with dash lines: count the lines inside. True for a dash line."""
        if content[0] == "-" and _FRAME.match(content):
            self.frame_lines = 0 if self.frame_lines is None else None
            return True
        if self.frame_lines is not None:
            self.frame_lines += 1
        return False

    def _unknown(self, content):
        """A line no rule knows never makes the result fail: when it reports a problem in words
        ("libibverbs: Warning: ...", "mpirun noticed that the job aborted") it is a warning; chatter
        (progress notes, prompts, wrapped command lines) is left out. Inside an Open MPI help frame
        only its first line (the headline) is taken; the rest explains it.
        """
        if self.frame_lines is not None and self.frame_lines > 1:
            return
        if not is_diagnostic_line(content) or is_context_line(content):
            return
        self.unknown_lines += 1
        if self.unknown_lines <= _MAX_UNKNOWN_LISTED:
            self.warnings.add(content[:300])

    def _last_error(self, message, host=None):
        _last_error(message, self.errors, self.warnings, host=host)

    # --- end -----------------------------------------------------------------

    def _conclude(self):
        result, header = self.result, self.header
        result["ranks"] = [self.ranks[k] for k in sorted(self.ranks)]
        result["nranks"] = len(result["ranks"])
        result["hosts"] = unique(entry["host"] for entry in result["ranks"])
        # NCCL version from the header code when no 'NCCL version' line was printed
        if result["nccl_version"] is None and header.get("nccl_library_code"):
            result["nccl_version"] = nccl_version_from_code(header["nccl_library_code"])
        _finish_transport(result, self.networks, self.weak_networks, self.channels)
        if self.trace_lines and not self.specific_failure:
            trace_hosts = unique(self.trace_hosts)
            self.errors.add("test_failure", self.trace_lines[0], host=trace_hosts[0] if trace_hosts else None)
            for host in trace_hosts[1:]:
                self.errors.get("test_failure")["hosts"].append(host)
        if self.unknown_lines > _MAX_UNKNOWN_LISTED:
            self.warnings.add("%d more output lines not understood (not listed)"
                              % (self.unknown_lines - _MAX_UNKNOWN_LISTED))
        _finish(result, self.errors, self.proxy_service)
        return result


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


def _last_error(message, errors, warnings, host=None):
    """ncclGetLastError() text: an error when it names a known failure, else a warning."""
    message = to_text(message).strip()
    if not message:
        return
    code = _classify_warn(message)
    if code:
        errors.add(code, message, host=host, hint=_hint_for(code, message))
    else:
        warnings.add("NCCL last error: %s" % message)


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
    result["networks"] = unique(name for source in (named, via, weak_networks) for name in sorted(source))
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
        result["warnings"].add("no result footer (Avg bus bandwidth): the output may be cut or the run unfinished")
    result["warnings"] = result["warnings"].as_list()
    result["errors"] = errors.entries(last=_SECONDARY)
    result["ok"] = bool(result["rows"]) and not result["errors"]


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
    result["warnings"] = Notes(limit=_MAX_WARNINGS, width=1000)
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
    result["hosts"] = unique(entry["host"] for entry in result["ranks"] if entry["host"])
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
