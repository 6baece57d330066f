# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse the text printed by perftest (ib_{write,read,send,atomic}_{bw,lat}).

The result is read from the output perftest prints on its console (stdout and
stderr, possibly merged, with prompts, wrapped command lines, launcher
prefixes and CPU-frequency warnings in the middle).  Nothing here raises:
whatever can not be read ends up in ``errors`` / ``warnings``.

The exact message strings come from perftest's sources (perftest_parameters.c,
perftest_resources.c, perftest_communication.c, get_clock.c, cuda_memory.c,
rocm_memory.c) and the Debian perftest 4.5 binaries.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ipaddress
import math
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    MIB_PER_SEC_TO_GBPS,
    clean_lines,
    error_entry,
    found_after,
    is_context_line,
    is_diagnostic_line,
    snake_case,
    to_float,
    to_int,
)

# --------------------------------------------------------------------------
# Error catalog: code -> (likely cause, fix).  One line each; docs build the
# troubleshooting table from it.
# --------------------------------------------------------------------------
PERFTEST_ERRORS = {
    "no_device": (
        "No RDMA device is visible: the RDMA driver (mlx5_ib, irdma, bnxt_re, ionic, ...) is not loaded, "
        "the container/pod was not given the device (/dev/infiniband, RDMA device-plugin resource), or the "
        "rdma-core/libibverbs provider in the image is missing or too old for the kernel",
        "Check `ibv_devices` / `rdma link` on the host and load the driver; in Kubernetes request the RDMA "
        "resource (e.g. rdma/rdma_shared_device_a) so /dev/infiniband is mounted; install an rdma-core that "
        "matches the kernel in the image",
    ),
    "device_not_found": (
        "The device named with -d does not exist on this host (device names differ between hosts and "
        "between a host and its containers)",
        "List the devices with `ibv_devices` or `rdma link` on that host and pass the right name with -d "
        "(or leave -d out to use the first device)",
    ),
    "port_down": (
        "The RDMA port is not ACTIVE (Down/Init/Armed): cable or link down, switch port disabled, or on "
        "InfiniBand no subnet manager (the port stays in Init)",
        "Check `ibstat` / `ibv_devinfo` and the link; fix the cable or switch port; on InfiniBand run a "
        "subnet manager (opensm) on the fabric; select the right port with -i",
    ),
    "link_layer_failed": (
        "perftest could not read or set the port's link layer: the port is not usable, -i names the wrong "
        "port, or --force-link does not match the port",
        "Check the port with `ibv_devinfo -d DEV -i PORT`; use the correct -i and drop or correct --force-link",
    ),
    "device_open_failed": (
        "The device exists but could not be opened: driver in a bad state, /dev/infiniband/uverbs* not "
        "accessible (container without the device or permissions), or the port problem reported with it",
        "Check that /dev/infiniband/uverbs* exists and is accessible where the test runs; give the pod the "
        "RDMA device resource; reload the driver if `ibv_devinfo` fails too",
    ),
    "gpu_init_failed": (
        "GPU memory for the test could not be set up: CUDA/ROCm not initialised, no GPU visible to the "
        "process, wrong GPU id, DMA-BUF unsupported, or this perftest was built without GPU support",
        "Run nvidia-smi / rocm-smi in the same container, check the id given to --use_cuda / --use_rocm, "
        "and use a perftest built with CUDA/ROCm support",
    ),
    "hugepages_failed": (
        "--use_hugepages was given but no free huge pages are available",
        "Reserve huge pages (sysctl vm.nr_hugepages=N, or a hugepages-2Mi resource for pods) or drop "
        "--use_hugepages",
    ),
    "mr_alloc_failed": (
        "Memory registration failed: memlock limit (ulimit -l) too low, or pod memory limit / missing "
        "IPC_LOCK; with GPU buffers, GPUDirect RDMA (nvidia-peermem or DMA-BUF) is not available",
        "set memlock unlimited (/etc/security/limits.conf, systemd LimitMEMLOCK=infinity), give the pod "
        "IPC_LOCK and no memory limit; for GPU buffers load nvidia-peermem or use --use_cuda_dmabuf",
    ),
    "resources_failed": (
        "Verbs resources (PD/CQ/QP/SRQ) could not be created: device limits reached, -q/-t/-r/--inline too "
        "large for the device, many processes sharing the device, or the memlock limit",
        "Lower -q/-t/-r/--inline, stop stale perftest processes, check `ulimit -l` and the device limits "
        "(`ibv_devinfo -v`: max_qp, max_cqe, max_qp_wr)",
    ),
    "qp_connect_failed": (
        "The QPs could not be moved to INIT/RTR/RTS: wrong or missing GID index on RoCE, MTU above what the "
        "path supports, peer LID/GID unreachable, or different perftest options on the two sides",
        "Use identical options on both sides; on RoCE pass with -x the RoCE v2 GID index that carries the "
        "interface IP (show_gids); check -m against both ports' active MTU",
    ),
    "gid_invalid": (
        "The local or peer GID is not usable: the GID index (-x) does not exist or has no address, or the "
        "two sides use different GID types (RoCE v1 vs v2, IPv4 vs IPv6)",
        "Pick a RoCE v2 GID index with an IPv4 address on both hosts (show_gids or "
        "/sys/class/infiniband/DEV/ports/PORT/gid_attrs/types) and pass it with -x; use one IP version on "
        "both sides",
    ),
    "mtu_invalid": (
        "The MTU requested with -m is not valid or not supported by the port",
        "Omit -m to use the port's active MTU, or choose 256/512/1024/2048/4096 supported by both ports",
    ),
    "listen_failed": (
        "The server could not listen: its TCP port (default 18515, -p) is already in use, often by a stale "
        "perftest server from an earlier run, or with -R the address is not on an RDMA interface",
        "Stop stale ib_*_bw / ib_*_lat processes (pgrep -a ib_), use a free port with -p, and with -R bind "
        "to the IP of the RDMA netdev",
    ),
    "connect_failed": (
        "The client could not connect to the server: server not (yet) listening, wrong address, firewall "
        "blocking the TCP port (default 18515), or with rdma_cm (-R) the address is not reachable over the "
        "RDMA interface (address/route resolution errors)",
        "Start the server first and let the client retry; check the address and `nc -zv SERVER 18515`; "
        "open the port in firewalls / NetworkPolicies; with -R use the IP of the server's RDMA netdev and "
        "check routing/ARP on it",
    ),
    "exchange_failed": (
        "The side channel (TCP or rdma_cm) broke while exchanging QP data or results: the peer exited or "
        "failed on its own, options or perftest versions differ between the sides, or a stale server answered",
        "Read the peer's output for its own error; run the same perftest version with identical options on "
        "both sides; kill stale perftest servers before testing",
    ),
    "completion_error": (
        "Work completions failed during the run (e.g. status 12 transport retry exceeded, 13 RNR retry): "
        "the path dropped packets or broke: link flaps, wrong GID/route, RoCE PFC/ECN misconfiguration, or "
        "the peer went away",
        "Check port error counters (ethtool -S, perfquery) and link stability, RoCE PFC/ECN/DSCP settings "
        "on NICs and switches, and the GID index; then rerun",
    ),
    "below_limit": (
        "The result is below the limit given with -w/--limit_bw or -y/--limit_msgrate",
        "Investigate the slow link (compare with the port's expected rate) or adjust the limit",
    ),
    "cpu_freq_failed": (
        "perftest could not determine a stable CPU frequency (frequency scaling, conflicting cpufreq "
        "values), so it could not turn cycles into time",
        "Set the CPU governor to performance (cpupower frequency-set -g performance) or pass -F",
    ),
    "timeout": (
        "The peer stopped answering (perftest gives up after 120 s without a message) or the run exceeded "
        "its deadline",
        "Check that the peer is still running and reachable; allow a longer deadline for -a or -D runs",
    ),
    "version_mismatch": (
        "Server and client run perftest versions that cannot work together",
        "Install the same perftest version on every host and image",
    ),
    "invalid_option": (
        "perftest rejected its command line: unknown flag, invalid value, or an option this test or "
        "perftest version does not support",
        "Check the options against `ib_<test> --help` of the installed perftest; use the same version on "
        "both sides",
    ),
    "not_installed": (
        "The perftest binary was not found on the host or in the container image",
        "Install perftest (apt install perftest, dnf install perftest, or MLNX_OFED/DOCA) or put it on PATH",
    ),
    "crashed": (
        "perftest crashed (segmentation fault / abort), usually right after an earlier error such as a "
        "failed GPU memory registration, or because it does not match the installed rdma-core/driver",
        "Fix the first error reported before the crash; use a perftest build that matches the installed "
        "rdma-core / OFED",
    ),
    "unknown": (
        "perftest reported an error this parser does not recognise",
        "Read the message and the full output; rerun the same command by hand on that host",
    ),
}

# Extra, situation-specific advice attached to an error entry as ``detail``.
_GPU_MR_DETAIL = (
    "The buffer was {gpu} GPU memory: registering it needs GPUDirect RDMA (nvidia-peermem / nv_peer_mem, "
    "amdgpu peer-direct, or DMA-BUF via --use_cuda_dmabuf / --use_rocm_dmabuf); vGPU and some MIG or "
    "virtualised setups do not support it"
)

# How lines are classified.  Each rule is (code, lowercase substrings, optional
# regex on the lowercased line that must also match).  Order matters: the
# first rule that matches decides the code.  Plain substring tests keep the
# parser fast (CPython's re is slow on long alternations).
_ERROR_RULES = [
    ("not_installed", ("command not found", "executable file not found"), None),
    ("not_installed", (": not found",), r": not found$"),
    # "no such file or directory" and later a perftest binary's name (_After: two searches, not one .*)
    ("not_installed", ("no such file or directory",), ("no such file or directory", r"ib_\w{1,32}?_(?:bw|lat)")),
    ("no_device", ("did not detect devices", "if device exists, check if driver is up",
                   "unable to find the infiniband/roce device", "no ib devices found",
                   "failed to get ib devices list", "no rdma devices"), None),
    ("device_not_found", ("couldn't find device", "could not find device"), None),
    ("device_not_found", ("ib device ",), r"ib device \S+ not found"),
    ("port_down", ("port number",), r"port number\s+\d+\s+state is"),
    ("link_layer_failed", ("couldn't set the link layer", "unable to query port", "error when trying to query port",
                           "test can only run on ethernet link"), None),
    ("link_layer_failed", ("link layer on port",), r"link layer on port \d+ is unknown"),
    ("device_open_failed", ("couldn't get context for", "couldn't allocate context", "failed to open device",
                            "ibv_open_device failed"), None),
    ("gpu_init_failed", ("cuinit(", "cudevicegetcount", "that support cuda", "no such device id",
                         "cuctxcreate() error", "cuctxsetcurrent() error", "couldn't init gpu context",
                         "cudevicegetbypcibusid failed", "dma-buf is not supported on this gpu",
                         "hipdevicegetcount", "requested rocm device", "couldn't initialize rocm device",
                         "unsupported memory type", "cuda dma-buf cannot be used", "neuron dma-buf cannot be used",
                         "invalid neuron core", "cumemalloc error", "cumemallochost error",
                         "cumemallocmanaged error", "hipmalloc error", "failed to export dmabuf handle",
                         "can't use multiple memory types"), None),
    ("hugepages_failed", ("failed to allocate hugepage", "please configure hugepages"), None),
    ("mr_alloc_failed", ("couldn't allocate mr", "failed to create mr", "couldn't register mr",
                         "couldn't create null mr", "stack does not support dma-buf", "ibv_reg_mr failed",
                         "failed to register memory"), None),
    ("qp_connect_failed", ("unable to connect the hca's through the link", "failed to modify qp",
                           "couldn't modify to init", "couldn't modify to rtr", "couldn't modify to rts",
                           "couldn't modify qp to"), None),
    ("resources_failed", ("couldn't create ib resources", "couldn't allocate pd", "couldn't create cq",
                          "couldn't create a receiver cq", "couldn't create send cq", "couldn't create recv cq",
                          "failed to create cqs", "couldn't create qp", "couldn't create rdma new qp",
                          "couldn't create rdma old qp", "unable to create qp", "failed to create qp",
                          "couldn't create completion channel", "couldn't create comp channel",
                          "couldn't create srq", "couldn't create xrc", "couldn't open xrc", "error opening xrc",
                          "unable to create rdma resources", "unable to create rdma_cm resources",
                          "unable to create the resources needed", "failed to initialize rdma contexts",
                          "couldn't allocate work buf", "cannot allocate", "failed to create ah",
                          "unable to create ah", "unable to create address handler",
                          "requested qp size might be too big", "failed to allocate rdma cm nodes",
                          "failed to create rdma cm connection with resources", "couldn't attach qp",
                          "couldn't malloc"), None),
    ("gid_invalid", ("found incompatibility issue with gid types", "please try to use a different ip version",
                     "failed to query gid", "ibv_query_gid failed", "couldn't get gid",
                     "unable to set up my ib connection parameters", "unable to set up socket connection"), None),
    ("gid_invalid", ("gid index",), r"gid index \S+ is (?:not valid|invalid)"),
    ("mtu_invalid", ("invalid mtu", "please choose mtu f", "couldn't set eth mtu"), None),
    ("listen_failed", ("couldn't listen to port", "failed to bind socket", "rdma_bind_addr failed",
                       "failed to bind rdma cm address", "rdma_listen failed", "failed to listen on rdma cm"), None),
    ("connect_failed", ("couldn't connect to", "unable to open file descriptor for socket connection",
                        "unable to init the socket connection", "unable to connect", "failed to connect rdma cm",
                        "failed to connect through rdma cm", "failed to handle rdma cm event",
                        "failed to resolve rdma cm", "rdma_resolve_addr failed", "rdma_resolve_route failed",
                        "times addr_error", "rdma cm event error", "function rdma_connect failed",
                        "unable to perform rdma_client function", "unable to perform rdma_server function",
                        "failed to get rdma cm", "failed to create rdma cm id", "failed to create rdma cm event channel",
                        "failed to create rdma cm connection", "rdma_create_id failed",
                        "rdma_create_event_channel failed", "failed to establish ud connection for rdma cm",
                        "failed request ud connection parameters", "accept() failed", "failed to accept rdma cm",
                        "function rdma_accept failed", "couldn't connect client"), None),
    ("connect_failed", ("event: rdma_cm_event_",), r"event: rdma_cm_event_\w+; error"),
    ("exchange_failed", ("failed to exchange", "unable to read from socket", "unable to read to socket",
                         "unable to write to socket", "unable to write from socket", "ethernet_read_",
                         "ethernet_write_", "couldn't read remote address", "couldn't send local address",
                         "couldn't write to socket", "couldn't read from socket", "couldn't send reports",
                         "couldn't read reports", "failed to sync between",
                         "failed to close connection between server and client", "unable to send my qp number",
                         "couldn't post send my qp number", "failed to send ud connection parameters"), None),
    ("completion_error", ("completion with error", "failed status ", "poll send cq error", "poll send cq failed",
                          "poll send cq to clean credit failed", "poll receive cq failed", "poll cq failed",
                          "poll on send cq failed", "bad wc status", "bad wqe status", "error occurred in run_iter",
                          "error occurred while running", "failed to complete run_iter", "test exited with error",
                          "couldn't post send", "couldn't post recv", "failed to post receive",
                          "function ibv_post_send failed", "function ibv_post_recv failed", "failed to poll cq"),
     None),
    ("below_limit", ("below bw limit", "below msg_rate limit", "below the bw limit"), None),
    ("cpu_freq_failed", ("can't produce a report", "couldn't acquire cpu frequency"), None),
    ("timeout", ("did not get message for", "timed out"), None),
    ("version_mismatch", ("not compatible with versions older than", "version mismatch", "versions mismatch"), None),
    ("crashed", ("segmentation fault", "core dumped", "bus error", "illegal instruction", "floating point exception",
                 "double free", "stack smashing"), None),
    ("crashed", ("aborted",), r"^aborted\b"),
    ("invalid_option", ("invalid command", "please check command line", "should be between", "must be positive",
                        "must be non-negative", "must be a multiple", "must be greater", "not supported",
                        "doesn't support", "does not support", "isn't supported", "only available", "you must",
                        "cannot be greater", "can't be grater", "duration mode currently doesn't",
                        "duration mode doesn't", "bidirectional is only", "message size cannot be changed",
                        "number of iterations must", "post list size must", "only valid for",
                        "unrecognized option", "invalid option", "requires an argument",
                        "parser function exited with error"), None),
    ("invalid_option", ("usage:", "invalid "), r"^(?:usage:|invalid )"),
]


class _After(object):
    """A regex pair searched as first.*then, in linear time (first match of `first`, then `then` after it)."""

    def __init__(self, first, then):
        self.first, self.then = re.compile(first), re.compile(then)

    def search(self, text):
        return found_after(self.first, self.then, text)


def _rule_regex(regex):
    if regex is None:
        return None
    return _After(*regex) if isinstance(regex, tuple) else re.compile(regex)


_ERROR_RULES = [(code, needles, _rule_regex(regex)) for code, needles, regex in _ERROR_RULES]
_ERROR_CODES = tuple(sorted(set(rule[0] for rule in _ERROR_RULES)))

# Error-looking lines no rule above knows become "unknown".
_ERRORISH_NEEDLES = ("couldn't", "couldnt", "could not", "unable to", "fail", "error", "cannot", "can't",
                     "invalid", "not supported", "segmentation fault", "core dumped", "abort")

# Warnings / notes (checked before errors): lines starting with "warning" and these.
_WARNING_NEEDLES = (
    "conflicting cpu frequency", "test integrity may be harmed", "using sampled cpu speed",
    "measured timestamp frequency", "correlation coefficient", "requested mtu is higher than active mtu",
    "changing to active mtu", "will run with the port active mtu", "max msg size in ", "changing to this mtu",
    "changing msg size to this mtu", "min msg size for raweth", "unable to validata pkey index",
    "changing cq moderation", "post list requested", "setting inline size to", "rate_limit type is forced",
    "providing sw rate limit", "bw peak won't be measured", "cpu frequency is not max",
)
_TAGGED_WARNING = re.compile(r"^(?:[\w.\-/]{1,64}:\s*){1,2}warn(?:ing)?\b")
_CUDA_NEEDLES = ("initializing cuda", "cuda device", "cumemalloc", "cuda ctx", "--use_cuda", "cuinit")
_ROCM_NEEDLES = ("using rocm device", "hipmalloc", "--use_rocm", "rocm device")


def _is_warning(low):
    """A warning or note: perftest's own, or a line its tool marks as one ("libibverbs: warning: ...",
    "mlx4: warning: bluefame ..."): never an error, whatever words it holds."""
    return (low.lstrip("* ").startswith("warning") or any(needle in low for needle in _WARNING_NEEDLES)
            or ("warn" in low and _TAGGED_WARNING.match(low) is not None))


_CLIENT_HINT = re.compile(
    r"Couldn't connect to|Failed to connect RDMA CM|resolve|ADDR_ERROR|rdma_client|Function rdma_connect|"
    r"Unable to connect \(retries", re.I)
_SERVER_HINT = re.compile(
    r"Couldn't listen|Failed to bind|rdma_bind_addr|rdma_listen|Failed to listen|accept\(\)|rdma_accept|"
    r"rdma_server", re.I)

_BANNER_RE = re.compile(
    r"^(?P<verb>RDMA_Write_imm|RDMA_Write|RDMA_Read|Send|Atomic|Write_imm)\s+"
    r"(?:(?P<atomic>CMP_AND_SWAP|FETCH_AND_ADD)\s+)?"
    r"(?P<bidir>Bidirectional\s+)?"
    r"(?:Post\s+List\s+)?"
    r"(?:(?P<metric>BW|Latency)\s+)?"
    r"(?:forwarding\s+)?(?:Multicast\s+)?Test\b", re.I)
_VERB_TEST = {"send": "send", "rdma_write": "write", "rdma_write_imm": "write", "write_imm": "write",
              "rdma_read": "read", "atomic": "atomic"}
_COMMAND_RE = re.compile(r"\bib_(write|read|send|atomic)_(bw|lat)\b")
_SEPARATOR_RE = re.compile(r"^(?:-{10,}|={10,})$")
_STARS_RE = re.compile(r"^\*+$")
_WAITING_RE = re.compile(r"Waiting for client (?:to connect|rdma_cm QP to connect)", re.I)
_ADDRESS_RE = re.compile(r"^(local|remote)\s+address\s*:\s*(.*)$", re.I)
_GID_LINE_RE = re.compile(r"^(M?GID)\s*:\s*(\S+)", re.I)
_PAIR_RE = re.compile(r"([A-Za-z][A-Za-z0-9_]*)\s+(\S+)")
_HEADER_KEY_RE = re.compile(r"^[A-Za-z][A-Za-z0-9 .*_\-/()]{0,47}$")
_NUM_UNIT_RE = re.compile(r"^(-?\d+(?:\.\d+)?)\s*\[([A-Za-z/%]+)\]$")
_INT_RE = re.compile(r"^-?\d+$")
# get_clock.c prints this on stderr; merged with stdout it can end up glued to a table row.
_CPU_FREQ_GLUED_RE = re.compile(
    r"Conflicting CPU frequency values detected: [0-9.]+ != [0-9.]+\.?(?: CPU Frequency is not max\.)?")
_HISTOGRAM_UNIT_RE = re.compile(r"^#,\s*(usec|cycles)\s*$", re.I)
_CONNECTED_RE = re.compile(r"^Connected:\s*(.+)$")
_COMPLETED_RE = re.compile(r"^Completed:\s*(.+)$")
_RUN_TIME_RE = re.compile(r"^Total run time:\s*(\d+(?:\.\d+)?)\s*s", re.I)
_CYCLES_FLAG_RE = re.compile(r"(?:^|\s)(?:-C|--report-cycles)(?:\s|$)")
_BIDIR_FLAG_RE = re.compile(r"(?:^|\s)(?:-b|--bidirectional)(?:\s|$)")

# Header fields perftest prints (snake_cased); recognised even outside the
# banner block (for output whose first lines were cut off).
_KNOWN_HEADER_KEYS = frozenset((
    "dual_port", "device", "number_of_qps", "transport_type", "connection_type", "using_srq",
    "pcie_relax_order", "ibv_wr_api", "tx_depth", "rx_depth", "cq_moderation", "cqe_poll_batch", "mtu",
    "link_type", "gid_index", "gid_index2", "max_inline_data", "outstand_reads", "rdma_cm_qps",
    "data_ex_method", "lock_free", "using_ddp", "cpu_freq", "using_enhanced_reorder", "post_list",
    "recv_post_list", "use_rocm_memory", "buffer_size", "dcs_num_streams", "block_size",
))

_BW_UNITS = {"mb/sec": MIB_PER_SEC_TO_GBPS, "mib/sec": MIB_PER_SEC_TO_GBPS, "mbyte/sec": MIB_PER_SEC_TO_GBPS,
             "gb/sec": 1.0, "gbit/sec": 1.0, "gbps": 1.0, "gbits/sec": 1.0}
_TIME_UNITS = {"usec": 1.0, "us": 1.0, "nsec": 0.001, "ns": 0.001, "msec": 1000.0, "ms": 1000.0}

BW_ROW_KEYS = ("bytes", "iterations", "bw_peak_gbps", "bw_avg_gbps", "msg_rate_mpps")
LAT_ROW_KEYS = ("bytes", "iterations", "t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us",
                "p99_us", "p99_9_us", "tps")
_LAT_TIME_KEYS = ("t_min", "t_max", "t_typical", "t_avg", "t_stdev", "p99", "p99_9")
_MAX_PROBE = 1024
_MAX_WARNINGS = 200
_MAX_UNKNOWN_LISTED = 50   # lines no rule knows, listed as warnings; more are counted


def classify_perftest_error(line):
    """Return the error code for one line of perftest output, or None when it is no error.

    Warnings (CPU frequency, MTU adjustments, ...) return None; an error-looking
    line that no known pattern matches returns ``"unknown"``.
    """
    try:
        text = clean_lines(line)
        probe = " ".join(part.strip() for part in text if part.strip())[:_MAX_PROBE]
    except Exception:  # pragma: no cover - clean_lines never raises on str/bytes
        return None
    low = probe.lower()
    if not probe or _is_warning(low):
        return None
    return _classify(low)


def _classify(low):
    """Error code of a stripped, lowercased line that is no warning, or None."""
    for code, needles, regex in _ERROR_RULES:
        for needle in needles:
            if needle in low:
                if regex is None or regex.search(low):
                    return code
                break
    if any(needle in low for needle in _ERRORISH_NEEDLES):
        return "unknown"
    return None


_SNAKE_CACHE = {}


def _snake(name):
    """snake_case with a small cache: header keys repeat in every run."""
    value = _SNAKE_CACHE.get(name)
    if value is None:
        value = snake_case(name)
        if len(_SNAKE_CACHE) < 512:
            _SNAKE_CACHE[name] = value
    return value


def _convert_value(value):
    """Header value -> bool (ON/OFF), int, number with a [unit], or the string."""
    text = value.strip()
    upper = text.upper()
    if upper == "ON":
        return True, None
    if upper == "OFF":
        return False, None
    if _INT_RE.match(text):
        return int(text), None
    match = _NUM_UNIT_RE.match(text)
    if match:
        number = to_float(match.group(1))
        if number is not None and number == int(number):
            number = int(number)
        unit = match.group(2)
        return number, (None if unit.upper() == "B" else snake_case(unit))
    return text, None


def _split_fields(line):
    """' Number of qps   : 1\t\tTransport type : IB' -> [('Number of qps', '1'), ('Transport type', 'IB')]."""
    fields = []
    rest = line.strip()
    for _field in range(8):
        idx = rest.find(":")
        if idx <= 0:
            break
        key = rest[:idx].strip()
        after = rest[idx + 1:].strip()
        value, rest = after, ""
        if ":" in after:
            parts = after.split(None, 1)
            if len(parts) == 2 and ":" in parts[1] and ":" not in parts[0]:
                value, rest = parts[0], parts[1]
        fields.append((key, value))
        if not rest:
            break
    return fields


def _gid_addresses(raw):
    """perftest prints GIDs as 16 decimal bytes 'a:b:...:p'; return (ipv6 text, ipv4 text or None)."""
    parts = raw.split(":")
    try:
        if len(parts) == 16 and all(part.isdigit() and int(part) <= 255 for part in parts):
            address = ipaddress.IPv6Address(bytes(int(part) for part in parts))
        elif len(parts) == 16 and all(re.match(r"^[0-9a-fA-F]{1,2}$", part) for part in parts):
            address = ipaddress.IPv6Address(bytes(int(part, 16) for part in parts))
        else:
            address = ipaddress.IPv6Address(raw)
    except (ValueError, TypeError):
        return None, None
    mapped = address.ipv4_mapped
    return str(address), (str(mapped) if mapped else None)


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
    words = header[:_MAX_PROBE].split()
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
        "settings": {
            "device": None, "qps": None, "transport_type": None, "connection_type": None, "mtu": None,
            "link_type": None, "gid_index": None, "rdma_cm": None,
        },
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


class _State(object):
    def __init__(self):
        self.result = _empty_result()
        self.raw_settings = {}
        self.in_header = False
        self.in_usage = False
        self.columns = None        # list of (key, kind, unit) for the current table
        self.column_names = None
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


def _add_warning(state, text):
    text = text.strip()
    if not text or text in state.warning_set:
        return
    if len(state.warnings) >= _MAX_WARNINGS:
        state.dropped_warnings += 1
        return
    state.warning_set.add(text)
    state.warnings.append(text)


def _add_error(state, code, message):
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


def _handle_banner(state, match, line):
    verb = match.group("verb")
    test = _VERB_TEST.get(verb.lower())
    metric = match.group("metric")
    metric = {"bw": "bw", "latency": "lat"}.get(metric.lower()) if metric else None
    signature = (test, metric)
    if state.seen_banners and signature not in state.seen_banners:
        _add_warning(state, "more than one perftest run in the input (%s): rows of all runs are listed" % line)
    state.seen_banners.add(signature)
    result = state.result
    if result["banner"] is None:
        result["banner"] = line
        result["verb"] = verb
        result["test"] = test
        result["metric"] = metric
        result["bidirectional"] = bool(match.group("bidir"))
        result["atomic_type"] = match.group("atomic").upper() if match.group("atomic") else None
    state.in_header = True


def _handle_header_fields(state, line, header_block):
    """Store 'Key : value' fields; outside the header block only perftest's own keys count."""
    fields = _split_fields(line)
    if not fields:
        return False
    parsed = []
    for key, value in fields:
        if not _HEADER_KEY_RE.match(key):
            return False
        name = _snake(key)
        if not header_block and name not in _KNOWN_HEADER_KEYS:
            return False
        parsed.append((name, value))
    for name, value in parsed:
        converted, unit = _convert_value(value)
        if unit:
            name = name + "_" + unit
        state.raw_settings[name] = converted
    return True


def _handle_address(state, side, rest):
    entry = {}
    for key, value in _PAIR_RE.findall(rest[:_MAX_PROBE]):
        entry[key.lower()] = value
    target = state.result["local_addresses" if side == "local" else "remote_addresses"]
    if len(target) < 4096:
        target.append(entry)
    state.last_address = entry


def _handle_gid(state, kind, raw):
    entry = state.last_address
    if entry is None:
        return
    key = "mgid" if kind.upper() == "MGID" else "gid"
    if key in entry:
        return
    entry[key] = raw
    if key == "gid":
        ipv6, ipv4 = _gid_addresses(raw)
        entry["gid_ip"] = ipv6
        entry["gid_ipv4"] = ipv4


def _parse_row(state, line):
    """Numbers of one table row keyed by column, or None when the line is no row."""
    tokens = line.split()
    columns = state.columns
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


def _finish_row(state, values):
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
    if metric != "lat" and row.get("bw_peak_gbps") == 0.0:
        # perftest prints 0.00 when it does not measure the peak (-N, -D): a
        # measured peak is never below the average.
        if not result["peak_measured"] or (row.get("bw_avg_gbps") or 0.0) > 0.0:
            row["bw_peak_gbps"] = None
            result["peak_measured"] = False
    return row


def _handle_table_header(state, line):
    names = _split_columns(line)
    if not names or names[0].lower() != "#bytes":
        return
    state.seen_row_header = True
    specs = [_column_spec(name) for name in names]
    if state.column_names == names:
        return   # perftest sometimes prints the header twice
    state.column_names = names
    state.columns = specs
    result = state.result
    result["columns"] = names
    kinds = set(spec[1] for spec in specs)
    state.table_metric = "lat" if "time" in kinds else ("bw" if "bw" in kinds else None)
    for key, kind, unit in specs:
        if kind == "bw" and unit and result["bw_unit"] is None:
            result["bw_unit"] = unit
        if kind == "time" and unit and result["time_unit"] is None:
            result["time_unit"] = unit
    if result["bw_unit"] and result["bw_unit"].lower() not in _BW_UNITS:
        _add_warning(state, "unknown bandwidth unit %s: bandwidth values are null" % result["bw_unit"])
    if state.table_metric == "lat" and "tps" in [spec[0] for spec in specs] and "t_min" not in [
            spec[0] for spec in specs]:
        result["duration_mode"] = True


def _finish(state):
    result = state.result
    raw = state.raw_settings
    settings = dict(raw)
    settings["device"] = raw["device"] if isinstance(raw.get("device"), str) else None
    settings["qps"] = to_int(raw.get("number_of_qps")) if not isinstance(raw.get("number_of_qps"), bool) else None
    for key in ("transport_type", "connection_type"):
        settings[key] = raw[key] if isinstance(raw.get(key), str) else None
    mtu = raw.get("mtu")
    settings["mtu"] = mtu if isinstance(mtu, int) and not isinstance(mtu, bool) else None
    link = raw.get("link_type")
    if isinstance(link, str):
        low = link.lower()
        link = "Ethernet" if low.startswith("eth") or low == "etherent" else ("IB" if low in (
            "ib", "infiniband") else link)
    settings["link_type"] = link if isinstance(link, str) else None
    gid = raw.get("gid_index")
    settings["gid_index"] = gid if isinstance(gid, int) and not isinstance(gid, bool) else None
    rdma_cm = None
    if isinstance(raw.get("rdma_cm_qps"), bool):
        rdma_cm = raw["rdma_cm_qps"]
    data_ex = raw.get("data_ex_method")
    if isinstance(data_ex, str):
        rdma_cm = bool(rdma_cm) or data_ex.lower() == "rdma_cm"
    settings["rdma_cm"] = rdma_cm
    result["settings"] = settings

    if raw.get("use_rocm_memory") is True and result["gpu_memory"] is None:
        result["gpu_memory"] = "rocm"

    # Fall back to the command line (prompt lines) for what the banner did not say.
    command = result["command"] or ""
    match = _COMMAND_RE.search(command) or _COMMAND_RE.search(state.program or "")
    if result["test"] is None and match:
        result["test"] = match.group(1)
    if result["metric"] is None:
        result["metric"] = (match.group(2) if match else None) or state.table_metric
    if result["banner"] is None and command and _BIDIR_FLAG_RE.search(command):
        result["bidirectional"] = True

    # Side: the waiting banner marks the server; results or client-only errors the client.
    if result["side"] is None:
        messages = " ".join(line for entry in result["errors"] for line in [entry["message"]] + entry["evidence"])
        if result["rows"] or (messages and _CLIENT_HINT.search(messages)):
            result["side"] = "client"
        elif messages and _SERVER_HINT.search(messages):
            result["side"] = "server"
        elif result["banner"] and result["remote_addresses"] and not messages and not state.seen_row_header:
            # Connected (peer addresses printed) but no result table: a client
            # prints the table header right after the addresses, the server of
            # a latency test never does.
            result["side"] = "server"

    # GPU buffers change the advice for failed memory registration.
    gpu = result["gpu_memory"]
    for entry in result["errors"]:
        if entry["code"] == "mr_alloc_failed" and gpu:
            entry["detail"] = _GPU_MR_DETAIL.format(gpu=gpu.upper() if gpu == "cuda" else "ROCm")

    if result["rows"]:
        _demote_unknown_errors(state)

    keys = LAT_ROW_KEYS if result["metric"] == "lat" else BW_ROW_KEYS
    for row in result["rows"]:
        for key in keys:
            row.setdefault(key, None)
    if result["rows"] and result["metric"] == "lat" and result["duration_mode"]:
        _add_warning(state, "duration mode (-D): perftest reports only t_avg and tps, the other latency "
                            "values are null")
    if result["rows"] and result["time_unit"] == "cycles":
        _add_warning(state, "latency values are CPU cycles (-C / --report-cycles): *_us values are null, "
                            "see *_cycles")
    if not result["peak_measured"] and result["rows"] and result["metric"] != "lat":
        _add_warning(state, "BW peak was not measured (-N or duration mode): bw_peak_gbps is null")
    if state.in_usage and "invalid_option" not in state.error_index:
        _add_error(state, "invalid_option", "perftest printed its usage text (its command line was rejected)")
    if state.bad_rows:
        _add_warning(state, "%d result row(s) did not have as many values as the table header has columns"
                     % state.bad_rows)
    if result["side"] == "server" and not result["rows"] and not result["errors"] and result["banner"] is None:
        _add_warning(state, "server side: only the waiting banner, no client connected")
    if state.unknown_lines > _MAX_UNKNOWN_LISTED:
        _add_warning(state, "%d more output lines not understood (not listed)" % (
            state.unknown_lines - _MAX_UNKNOWN_LISTED))
    if state.dropped_warnings:
        state.warnings.append("%d more warning line(s) not listed" % state.dropped_warnings)
    result["warnings"] = state.warnings
    result["ok"] = bool(result["rows"]) and not result["errors"]
    return result


def _demote_unknown_errors(state):
    """With a result table read, error-looking lines no rule knows are warnings: only a recognised
    error (or no table) makes the result fail."""
    entry = state.error_index.pop("unknown", None)
    if entry is None:
        return
    state.result["errors"].remove(entry)
    for line in entry["evidence"]:
        _add_warning(state, line)


def _process_line(state, raw_line):
    line = raw_line.strip()
    if not line:
        return
    result = state.result
    if len(line) > 4 * _MAX_PROBE:
        line = line[:4 * _MAX_PROBE]
    first = line[0]

    # Result rows first: they are the hot path.
    if first.isdigit() and state.columns and not state.in_usage:
        values = _parse_row(state, line)
        if values is not None:
            result["rows"].append(_finish_row(state, values))
            return
    if first in "-=" and _SEPARATOR_RE.match(line):
        state.in_header = False
        return
    if first == "*" and _STARS_RE.match(line):
        return
    if state.program is None and "ib_" in line:
        match = _COMMAND_RE.search(line[:_MAX_PROBE])
        state.program = match.group(0) if match else None
    probe = line[:_MAX_PROBE]
    low = probe.lower()
    if state.in_usage:
        # perftest's help text follows "Usage:"; only real messages (printed on
        # stderr, so possibly merged after it) are still read.
        if first == "-" or low.startswith(("note", "usage:", "options:")) or _is_warning(low):
            return
        code = _classify(low)
        if code is not None and code != "unknown":
            _add_error(state, code, probe)
        return
    if result["gpu_memory"] is None:
        if any(needle in low for needle in _CUDA_NEEDLES):
            result["gpu_memory"] = "cuda"
        elif any(needle in low for needle in _ROCM_NEEDLES):
            result["gpu_memory"] = "rocm"

    match = _BANNER_RE.match(probe)
    if match:
        _handle_banner(state, match, probe)
        return
    if first == "#":
        if probe[:6].lower() == "#bytes":
            _handle_table_header(state, probe)
            return
        match = _HISTOGRAM_UNIT_RE.match(probe)
        if match:
            if match.group(1).lower() == "cycles":
                result["time_unit"] = "cycles"
            return
    if "aiting for client" in probe and _WAITING_RE.search(probe):
        result["side"] = "server"
        return
    if ":" in probe:
        match = _ADDRESS_RE.match(probe)
        if match:
            _handle_address(state, match.group(1).lower(), match.group(2))
            return
        match = _GID_LINE_RE.match(probe)
        if match:
            _handle_gid(state, match.group(1), match.group(2))
            return
        for regex, key in ((_CONNECTED_RE, "connected_at"), (_COMPLETED_RE, "completed_at")):
            match = regex.match(probe)
            if match:
                result[key] = match.group(1).strip()
                return
        match = _RUN_TIME_RE.match(probe)
        if match:
            result["total_run_time_s"] = to_float(match.group(1))
            return
        # perftest's own header fields (never error messages)
        if _handle_header_fields(state, probe, False):
            return

    if _is_warning(low):
        if "won't be measured" in low:
            result["peak_measured"] = False
        _add_warning(state, probe)
        return
    if probe[:6].upper() == "ERRNO:" and state.last_error is not None:
        if len(state.last_error["evidence"]) < 20:
            state.last_error["evidence"].append(probe)
        return

    is_command = "ib_" in probe and bool(_COMMAND_RE.search(probe))
    code = _classify(low)
    if code is not None and not (is_command and code == "unknown"):
        if code == "invalid_option" and low.startswith("usage:"):
            state.in_usage = True
            return
        _add_error(state, code, probe)
        return
    if is_command:
        if result["command"] is None:
            result["command"] = probe
            if _CYCLES_FLAG_RE.search(probe):
                result["time_unit"] = "cycles"
        return
    if state.in_header and ":" in probe and _handle_header_fields(state, probe, True):
        return
    _unknown_line(state, probe)


def _unknown_line(state, line):
    """A line no rule knows is never an error: a warning when it reports a problem in words,
    else chatter (CUDA set-up notes, wrapped command lines) that is left out."""
    if not is_diagnostic_line(line) or is_context_line(line):
        return
    state.unknown_lines += 1
    if state.unknown_lines <= _MAX_UNKNOWN_LISTED:
        _add_warning(state, line)


def _split_glued(line):
    """Split a CPU-frequency warning glued to other text (merged stderr) into separate lines."""
    if "Conflicting CPU" not in line:
        return [line]
    match = _CPU_FREQ_GLUED_RE.search(line[:_MAX_PROBE])
    if not match or (match.start() == 0 and not line[match.end():].strip()):
        return [line]
    return [line[:match.start()], match.group(0), line[match.end():]]


def parse_perftest(text):
    """Parse perftest console output into a dict (see the module docstring and DESIGN.md)."""
    state = _State()
    try:
        lines = clean_lines(text)
    except Exception:  # pragma: no cover - defensive: clean_lines handles str/bytes/None/lists
        lines = []
    for raw_line in lines:
        try:
            for part in _split_glued(raw_line):
                _process_line(state, part)
        except Exception as exc:  # pragma: no cover - a parser never raises
            _add_warning(state, "line not understood (%s): %s" % (type(exc).__name__, raw_line[:200]))
    return _finish(state)
