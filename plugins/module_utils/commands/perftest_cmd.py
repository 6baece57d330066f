# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""perftest command lines (pure) and verdicts.

``build_argv(params, endpoint=...)`` validates one side of a perftest run and
returns its argv (``ib_<test>_<metric> -d DEV -i PORT -x GID ... [server]``);
the device, port and GID index come from the side's ``discovery.endpoint.Endpoint``.
Anything invalid raises ``ArgumentError`` with a message naming the option,
before anything runs. ``side_verdict`` turns a run result plus its parsed
output into pass / fail / error with a cause and a fix. The sides run through
``side_runner.run_sides``; ``gid_index: auto`` resolves in ``discovery/endpoint.py``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import cli_grammar
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import show
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.side_options import (
    ArgumentError, bandwidth_outcome, catalog_entry, check_binary, check_choice, check_role, check_server,
    check_side_labels, check_tokens, checked, int_option, not_started_outcome, refuse_shell_meta, side_outcome,
    CANNOT_START, OUTPUT_TOO_LARGE, too_large_entry)
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.endpoint import (
    GID_MAX, GID_MIN, PORT_MAX as IB_PORT_MAX, PORT_MIN as IB_PORT_MIN, Endpoint)

TESTS = ("write", "read", "send", "atomic")
METRICS = ("bw", "lat")
MTUS = (256, 512, 1024, 2048, 4096)

# Ranges the perftest option parser enforces (perftest 4.5 / 25.x).
SIZE_MIN, SIZE_MAX = 1, 2 ** 31 - 1
ITERS_MIN, ITERS_MAX = 5, 100000000
QPS_MIN, QPS_MAX = 1, 16384
PORT_MIN, PORT_MAX = 1, 65535
DURATION_MAX = 86400
TIMEOUT_MAX = 86400
GPU_MAX = 1023

DEVICE_RE = option_rules.NAME_KINDS["rdma_device"][0]

# perftest's own option table (src/perftest_parameters.c, parser of every
# ib_*_bw / ib_*_lat tool): the getopt_long short string and long options of
# perftest 4.5-0.17 (Debian 12) and of the newest release, together; options
# that only some builds have (HAVE_* in the source) are listed too.
PERFTEST_SHORTOPTS = "w:y:p:d:i:m:s:n:t:u:S:x:c:q:I:o:M:r:Q:A:l:D:f:B:T:L:E:J:j:K:k:X:W:aFegzRvhbNVCHUOZP"
_R, _N = cli_grammar.REQUIRED_ARGUMENT, cli_grammar.NO_ARGUMENT
PERFTEST_LONGOPTS = (
    ("port", _R, "p"), ("ib-dev", _R, "d"), ("ib-port", _R, "i"), ("mtu", _R, "m"), ("size", _R, "s"),
    ("iters", _R, "n"), ("tx-depth", _R, "t"), ("qp-timeout", _R, "u"), ("sl", _R, "S"), ("gid-index", _R, "x"),
    ("all", _N, "a"), ("CPU-freq", _N, "F"), ("connection", _R, "c"), ("qp", _R, "q"), ("events", _N, "e"),
    ("vector", _R, "X"), ("inline_size", _R, "I"), ("outs", _R, "o"), ("mcg", _N, "g"), ("comm_rdma_cm", _N, "z"),
    ("rdma_cm", _N, "R"), ("tos", _R, "T"), ("hop_limit", _R, "L"), ("help", _N, "h"), ("MGID", _R, "M"),
    ("rx-depth", _R, "r"), ("bidirectional", _N, "b"), ("cq-mod", _R, "Q"), ("noPeak", _N, "N"),
    ("version", _N, "V"), ("report-cycles", _N, "C"), ("report-histogrm", _N, "H"), ("report-unsorted", _N, "U"),
    ("atomic_type", _R, "A"), ("dualport", _N, "O"), ("post_list", _R, "l"), ("duration", _R, "D"),
    ("margin", _R, "f"), ("source_mac", _R, "B"), ("dest_mac", _R, "E"), ("dest_ip", _R, "J"),
    ("source_ip", _R, "j"), ("dest_port", _R, "K"), ("source_port", _R, "k"), ("ethertype", _R, "Y"),
    ("limit_bw", _R, "w"), ("limit_msgrate", _R, "y"), ("server", _N, "Z"), ("client", _N, "P"),
    ("mac_fwd", _N, "v"), ("use_rss", _N, "G"), ("report-counters", _R, "W"),
)
# long options without a short form: those that take a value, then the flags
_PERFTEST_LONG_WITH_VALUE = (
    "force-link", "remote_mac", "local_mac", "remote_ip", "local_ip", "remote_port", "local_port", "pkey_index",
    "burst_size", "typical_pkt_size", "rate_limit", "rate_limit_type", "rate_units", "output", "out_json_file",
    "latency_gap", "flow_label", "retry_count", "payload_file_path", "use_cuda", "use_cuda_bus_id",
    "cuda_mem_type", "use_musa", "use_musa_bus_id", "use_rocm", "use_neuron", "use_hl", "use_mlu", "use_opencl",
    "opencl_platform_id", "use_ib_dm_dmabuf", "gpu_touch", "mmap", "mmap-offset", "dlid", "tclass",
    "wait_destroy", "flows", "flows_burst", "reply_every", "vlan_pcp", "recv_post_list", "aes_block_size",
    "kek_path", "credentials_path", "data_enc_keys_number", "data_enc_key_app_path", "log_dci_streams",
    "log_active_dci_streams", "congest_type", "bind_source_ip", "cqe_poll", "tph_mem", "cpu_id", "ph",
    "pin_cores", "numa_node", "inline_recv")
_PERFTEST_LONG_FLAGS = (
    "run_infinitely", "report_gbits", "use-srq", "no_lock", "use-null-mr", "report-both", "reversed", "tcp",
    "cpu_util", "out_json", "dont_xchg_versions", "use_cuda_dmabuf", "use_cuda_pcie_mapping", "use_data_direct",
    "use_musa_dmabuf", "use_musa_pcie_mapping", "use_rocm_dmabuf", "use_neuron_dmabuf", "use_mlu_dmabuf", "ipv6",
    "ipv6-addr", "raw_ipv6", "report-per-port", "odp", "use_hugepages", "use_old_post_send", "promiscuous",
    "sniffer", "raw_mcast", "mr_per_qp", "perform_warm_up", "vlan_en", "aes_xts", "encrypt_on_tx", "sig_before",
    "disable_pcie_relaxed", "use_ooo", "write_with_imm", "send_with_imm", "no_enhanced_reorder",
    "unsolicited_write", "connectionless", "disable_dynamic_polling", "sig_offload", "data_validation",
    "data_validation_debug", "disable_numa")
PERFTEST_LONGOPTS += tuple((name, _R, None) for name in _PERFTEST_LONG_WITH_VALUE)
PERFTEST_LONGOPTS += tuple((name, _N, None) for name in _PERFTEST_LONG_FLAGS)
PERFTEST_GRAMMAR = cli_grammar.Grammar("perftest", PERFTEST_SHORTOPTS, PERFTEST_LONGOPTS)

# Options the module sets itself (by their canonical key: -p stands for --port,
# --po, -p1...): extra_args may not set them in any spelling (the parsed
# settings would no longer match the module's parameters).
MANAGED_OPTIONS = {
    "-d": "device", "-i": "ib_port", "-x": "gid_index", "-p": "tcp_port", "-s": "size", "-a": "all_sizes",
    "-n": "iterations", "-D": "duration", "-q": "qps", "-b": "bidirectional", "-R": "rdma_cm", "-m": "mtu",
    "--use_cuda": "use_cuda", "--use_cuda_bus_id": "use_cuda", "--use_cuda_dmabuf": "use_cuda_dmabuf",
    "--report_gbits": "report_gbits",
    "-Z": "role", "-P": "role",
    "--out_json": "(output format)", "--out_json_file": "(output format)", "--output": "(output format)",
    "-h": "(help)", "-V": "(version)", "--run_infinitely": "(never ends)",
}
# Options extra_args may not hold at all, and why.
REFUSED_OPTIONS = {
    "--mmap": "perftest maps that file as its test buffer and writes into it",
    "--kek_path": "perftest runs it through a shell (system()) to make AES-XTS keys",
    "--data_enc_key_app_path": "perftest runs it through a shell (system()) to make AES-XTS keys",
    "--credentials_path": "AES-XTS needs --kek_path and --data_enc_key_app_path, which perftest runs through a shell",
}


def _counter_list(label, value):
    """--report-counters: comma-separated counter files under the port's sysfs directory."""
    for item in value.split(","):
        option_rules.check_path(label, item, absolute=False)
        if item.startswith("/"):
            option_rules.fail(label, value, "must name counters relative to the port (counters/NAME)")
    return value


PERFTEST_RULES = cli_grammar.ArgumentRules(
    PERFTEST_GRAMMAR, managed=MANAGED_OPTIONS, refused=REFUSED_OPTIONS,
    value_rules={"--payload_file_path": cli_grammar.path_value, "-W": _counter_list})


def tool_name(test, metric):
    """``ib_write_bw`` and friends."""
    return "ib_%s_%s" % (test, metric)


def parse_gid_index(value):
    """None, 'auto' or an int in range; anything else raises ArgumentError."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    if isinstance(value, bool):
        raise ArgumentError("gid_index must be an integer or 'auto', got %s" % show(value))
    text = str(value).strip()
    if not re.match(r"^\d+$", text):
        raise ArgumentError("gid_index must be an integer or 'auto', got %s" % show(value))
    number = int(text)
    if number < GID_MIN or number > GID_MAX:
        raise ArgumentError("gid_index must be between %d and %d, got %d" % (GID_MIN, GID_MAX, number))
    return number


def check_extra_args(extra_args, rules=None):
    """extra_args for perftest (``rules``: another tool's ``cli_grammar.ArgumentRules``); see
    ``side_options.check_tokens``."""
    return check_tokens(extra_args, PERFTEST_RULES if rules is None else rules)


def normalize(params):
    """Validate one side's parameters; return a normalized copy.

    Raises ArgumentError naming the first bad option. ``gid_index`` may
    still be 'auto' (the caller resolves it with ``endpoint.resolve_gid_index``).
    """
    p = dict(params or {})
    # peer is the peer's inventory name, a label for the result (check_side_labels), never tool input
    refuse_shell_meta(p, ("role", "test", "metric", "device", "server"))
    out = _identity(p)
    check_server(out["role"], p.get("server"))
    check_side_labels(p)
    out.update(_port_options(p))
    out.update(_run_options(p))
    _latency_by_count(out, int_option(p, "lat_iterations", ITERS_MIN, ITERS_MAX))
    _check_mtu(out)
    _check_gpu_memory(out)
    _check_length(out)
    _check_latency_only(out)
    return out


def _identity(p):
    """role, test, metric, device (and the server address a client connects to)."""
    role = check_role(p.get("role"))
    test = check_choice(p, "test", TESTS, "write")
    metric = check_choice(p, "metric", METRICS, "bw")
    device = p.get("device")
    if device is not None:
        checked(option_rules.check_name, "device", device, "rdma_device")
    return {"role": role, "test": test, "metric": metric, "device": device,
            "server": p.get("server") if role == "client" else None}


def _port_options(p):
    return {
        "ib_port": int_option(p, "ib_port", IB_PORT_MIN, IB_PORT_MAX) or 1,
        "gid_index": parse_gid_index(p.get("gid_index")),
        "tcp_port": int_option(p, "tcp_port", PORT_MIN, PORT_MAX) or 18515,
    }


def _run_options(p):
    """How long, how much and how: sizes, iterations or duration, queue pairs, extra_args, deadline."""
    return {
        "size": int_option(p, "size", SIZE_MIN, SIZE_MAX),
        "all_sizes": bool(p.get("all_sizes")),
        "iterations": int_option(p, "iterations", ITERS_MIN, ITERS_MAX),
        "duration": int_option(p, "duration", 1, DURATION_MAX),
        "qps": int_option(p, "qps", QPS_MIN, QPS_MAX),
        "bidirectional": bool(p.get("bidirectional")),
        "rdma_cm": bool(p.get("rdma_cm")),
        "mtu": int_option(p, "mtu", 0, 1 << 30),
        "use_cuda": int_option(p, "use_cuda", 0, GPU_MAX),
        "use_cuda_dmabuf": _flag(p, "use_cuda_dmabuf"),
        "extra_args": check_extra_args(p.get("extra_args")),
        "report_gbits": p.get("report_gbits", True) is not False,
        "timeout": int_option(p, "timeout", 1, TIMEOUT_MAX) or 120,
        "connect_retries": int_option(p, "connect_retries", 0, 100000),
    }


def _latency_by_count(out, lat_iterations):
    """A latency test runs lat_iterations times when that is given, whatever duration or iterations say.

    perftest prints the median (t_typical) and the tail percentiles only when it runs by count; by time it
    prints the average alone, which one stall of either host moves.
    """
    if out["metric"] == "lat" and lat_iterations is not None:
        out["iterations"], out["duration"] = lat_iterations, None


def _flag(p, name):
    """A boolean option: True / False (None: False); anything else raises ArgumentError."""
    value = p.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ArgumentError("%s must be a boolean, got %s" % (name, show(value)))
    return value


def _check_gpu_memory(out):
    """perftest refuses --use_cuda_dmabuf without --use_cuda ("CUDA DMA-BUF cannot be used without CUDA")."""
    if out["use_cuda_dmabuf"] and out["use_cuda"] is None:
        raise ArgumentError("use_cuda_dmabuf needs use_cuda (the GPU whose memory is registered through DMA-BUF)")


def _check_mtu(out):
    if out["mtu"] is not None and out["mtu"] not in MTUS:
        raise ArgumentError("mtu must be one of %s, got %d" % (", ".join(str(m) for m in MTUS), out["mtu"]))


def _check_length(out):
    """One way to say how much is sent: a size or all sizes; iterations or a duration shorter than timeout."""
    if out["size"] is not None and out["all_sizes"]:
        raise ArgumentError("size and all_sizes are mutually exclusive")
    if out["iterations"] is not None and out["duration"] is not None:
        raise ArgumentError("iterations and duration are mutually exclusive")
    if out["all_sizes"] and out["duration"] is not None:
        raise ArgumentError("all_sizes cannot be combined with duration (perftest runs one size in duration mode)")
    if out["test"] == "atomic" and (out["size"] is not None or out["all_sizes"]):
        raise ArgumentError("atomic tests use a fixed 8-byte size: size and all_sizes do not apply")


def _check_latency_only(out):
    """Bandwidth-only options on a latency test; then the deadline against the duration."""
    if out["metric"] == "lat":
        if out["bidirectional"]:
            raise ArgumentError("bidirectional applies to bandwidth tests only (metric=bw)")
        if out["qps"] is not None and out["qps"] != 1:
            raise ArgumentError("qps applies to bandwidth tests only (metric=bw)")
    if out["duration"] is not None and out["timeout"] <= out["duration"]:
        raise ArgumentError("timeout (%d s) must be longer than duration (%d s)" % (out["timeout"], out["duration"]))


def build_argv(params, binary=None, endpoint=None):
    """The argv of one side (validated with ``normalize`` first).

    ``binary`` replaces the tool name (a full path found by the transport).
    ``endpoint`` (an ``Endpoint``; made from the side when not given) gives
    ``-d``, ``-i`` and ``-x``; a ``gid_index`` 'auto' that was not resolved is
    left out (perftest's default: no GID on IB, index 0 on Ethernet).
    """
    p = normalize(params)
    check_binary(binary)
    if endpoint is None:
        endpoint = checked(Endpoint.from_side, p)
    argv = [binary or tool_name(p["test"], p["metric"])]
    argv += endpoint_args(endpoint) + ["-p", str(p["tcp_port"])]
    argv += _length_args(p) + _transfer_args(p) + p["extra_args"]
    if p["role"] == "client":
        argv.append(p["server"])
    return argv


def endpoint_args(endpoint):
    """``-d DEV -i PORT [-x GID]`` of an Endpoint."""
    argv = ["-d", endpoint.device] if endpoint.device else []
    argv += ["-i", str(endpoint.port)]
    if endpoint.gid_index is not None:
        argv += ["-x", str(endpoint.gid_index)]
    return argv


def _length_args(p):
    argv = []
    if p["all_sizes"]:
        argv.append("-a")
    elif p["size"] is not None:
        argv += ["-s", str(p["size"])]
    if p["iterations"] is not None:
        argv += ["-n", str(p["iterations"])]
    if p["duration"] is not None:
        argv += ["-D", str(p["duration"])]
    return argv


def _transfer_args(p):
    bw = p["metric"] == "bw"
    argv = []
    if bw and p["qps"] is not None:
        argv += ["-q", str(p["qps"])]
    if bw and p["bidirectional"]:
        argv.append("-b")
    if p["rdma_cm"]:
        argv.append("-R")
    if p["mtu"] is not None:
        argv += ["-m", str(p["mtu"])]
    if p["use_cuda"] is not None:
        argv.append("--use_cuda=%d" % p["use_cuda"])
        if p["use_cuda_dmabuf"]:
            argv.append("--use_cuda_dmabuf")
    if bw and p["report_gbits"]:
        argv.append("--report_gbits")
    return argv


# --- results -----------------------------------------------------------------

# cause / fix for what the module itself detects (the parser has its own
# catalog for what perftest prints).
CATALOG = {
    "cannot_start": CANNOT_START,
    "output_too_large": OUTPUT_TOO_LARGE,
    "tool_missing": (
        "the perftest tool is not installed on this host (or not on PATH)",
        "install perftest (Debian/Ubuntu: apt install perftest; RHEL: dnf install perftest; "
        "MLNX_OFED/DOCA include it) or put it on PATH through commcheck_environment"),
    "invalid_option": (
        "this perftest build rejected an option of the command line (too old, or built without "
        "CUDA for use_cuda)",
        "upgrade perftest, build it with CUDA support for GPUDirect tests, or drop the option"),
    "server_no_client": (
        "the server waited until its deadline and no client connected",
        "check that the peer's side ran (its own result), that the TCP port is not filtered "
        "between the hosts, and that forks is at least the number of hosts in the check"),
    "client_timeout": (
        "the test did not finish before its deadline",
        "raise timeout, shorten the test (duration, iterations, sizes), or check the link for "
        "errors and congestion"),
    "connect_failed": (
        "the client could not reach the server's TCP port before its deadline (the server "
        "never listened, or the address is unreachable or filtered)",
        "check the peer's own result, the address used for the peer, routes and firewalls, and "
        "that forks is at least the number of hosts in the check"),
    "below_expected": (
        "bandwidth is below the expected share of the link rate",
        "check the link (ibstat / ethtool speed, cable, errors counters), PCIe width and NUMA "
        "placement, CPU frequency governor, and PFC/ECN on RoCE fabrics"),
    "no_rows": (
        "the client finished without printing a result table",
        "look at stdout / stderr of the run; rerun by hand with the same command line"),
    "nonzero_exit": (
        "the tool exited with an error that the parser does not know",
        "look at stdout / stderr of the run; rerun by hand with the same command line"),
}

_UNRECOGNIZED_RE = re.compile(r"unrecognized option|invalid option|Invalid Command or flag", re.I)


def summarize(parsed):
    """Headline numbers of a parse_perftest result.

    bw: ``bw_gbps`` = the average bandwidth of the row with the highest
    average (the largest sizes reach line rate), ``bw_peak_gbps``, ``bytes``.
    lat: ``lat_us`` = typical latency (average when only that is printed) of
    the smallest size, ``lat_avg_us``, ``lat_p99_us``, ``lat_max_us`` (those perftest printed).
    """
    parsed = parsed or {}
    rows = parsed.get("rows") or []
    out = {}
    if not rows:
        return out
    if parsed.get("metric") == "lat" or any("t_avg_us" in r for r in rows):
        row = rows[0]
        typical = row.get("t_typical_us")
        out["lat_us"] = typical if typical is not None else row.get("t_avg_us")
        out["lat_avg_us"] = row.get("t_avg_us")
        out["lat_p99_us"] = row.get("p99_us")
        out["lat_max_us"] = row.get("t_max_us")
        out["bytes"] = row.get("bytes")
    else:
        best = None
        for row in rows:
            value = row.get("bw_avg_gbps")
            if value is not None and (best is None or value > best.get("bw_avg_gbps")):
                best = row
        if best is not None:
            out["bw_gbps"] = best.get("bw_avg_gbps")
            out["bw_peak_gbps"] = best.get("bw_peak_gbps")
            out["bytes"] = best.get("bytes")
    return out


def side_verdict(side, result, parsed, min_fraction=0.9):
    """pass / fail / error with cause, fix and the error list for one side.

    ``side``: the normalized side (role, metric, expected_gbps). ``result``:
    the transport's result (rc, timed_out, stdout, stderr). ``parsed``:
    parse_perftest's dict.
    """
    parsed = parsed or {}
    errors = list(parsed.get("errors") or [])
    text = (result.get("stdout") or "") + "\n" + (result.get("stderr") or "")
    role = side.get("role")
    not_started = not_started_outcome(CATALOG, result)
    if not_started:
        return not_started
    if result.get("output_too_large") and (result.get("output_stopped") or not parsed.get("rows")):
        return side_outcome("error", [too_large_entry(CATALOG, result)] + errors)
    if _UNRECOGNIZED_RE.search(text) and not parsed.get("rows"):
        line = next((ln.strip() for ln in text.splitlines() if _UNRECOGNIZED_RE.search(ln)), None)
        return side_outcome("error", [catalog_entry(CATALOG, "invalid_option", line)] + errors)
    if result.get("timed_out"):
        return _timeout_verdict(role, result, parsed, text, errors)
    if errors:
        return side_outcome("error", errors)
    if result.get("rc") not in (0, None):
        return side_outcome("error", [catalog_entry(CATALOG, "nonzero_exit", "exit status %s" % result.get("rc"))])
    if role == "client" and not parsed.get("rows"):
        return side_outcome("error", [catalog_entry(CATALOG, "no_rows")])
    return _bandwidth_verdict(side, summarize(parsed).get("bw_gbps"), min_fraction)


def _timeout_verdict(role, result, parsed, text, errors):
    if role == "server" and not parsed.get("rows") and not _connected(text):
        return side_outcome("error", [catalog_entry(CATALOG, "server_no_client")] + errors)
    if role == "client" and result.get("connect_failed"):
        return side_outcome("error", [catalog_entry(CATALOG, "connect_failed")] + errors)
    return side_outcome("error", [catalog_entry(CATALOG, "client_timeout")] + errors)


def _bandwidth_verdict(side, bw_gbps, min_fraction):
    """fail when a bandwidth side is below ``min_fraction`` of what it expects (twice that, bidirectional)."""
    expected = side.get("expected_gbps")
    if side.get("metric", "bw") != "bw" or not expected:
        return side_outcome("pass", [])
    if side.get("bidirectional"):
        expected = expected * 2
    return bandwidth_outcome(CATALOG, bw_gbps, expected, min_fraction)


def _connected(text):
    return bool(re.search(r"remote address:|#bytes", text))
