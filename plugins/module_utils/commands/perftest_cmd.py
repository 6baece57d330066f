# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""perftest command lines (pure) and the side runner shared with iperf3.

``build_argv(params)`` validates one side of a perftest run and returns its
argv (``ib_<test>_<metric> -d DEV -i PORT ... [server]``); anything invalid
raises ``ArgumentError`` with a message naming the option, before anything
runs. ``port_gid_index`` picks the GID an auto ``gid_index`` means (discovery's choice).
``side_verdict`` turns a run result plus its parsed output into
pass / fail / error with a cause and a fix.

``run_sides(transport, jobs)`` runs the sides of one host at once, step by
step: servers start first, clients right after and retry (short backoff)
while the error says the server is not listening yet, every process under
its own deadline; nothing outlives the call.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re
import time

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import cli_grammar
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import show
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import controller_gone
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.rdma_discovery import select_gid

TESTS = ("write", "read", "send", "atomic")
METRICS = ("bw", "lat")
ROLES = ("server", "client")
MTUS = (256, 512, 1024, 2048, 4096)

# Ranges the perftest option parser enforces (perftest 4.5 / 25.x).
SIZE_MIN, SIZE_MAX = 1, 2 ** 31 - 1
ITERS_MIN, ITERS_MAX = 5, 100000000
QPS_MIN, QPS_MAX = 1, 16384
PORT_MIN, PORT_MAX = 1, 65535
IB_PORT_MIN, IB_PORT_MAX = 1, 255
GID_MIN, GID_MAX = 0, 255
DURATION_MAX = 86400
TIMEOUT_MAX = 86400
GPU_MAX = 1023
# Ranges of what a side only carries to be reported back.
RAIL_MAX = 1023
STEP_MAX = 10000
ROUND_MAX = 1000000
EXPECTED_GBPS_MAX = 100000

DEVICE_RE = option_rules.NAME_KINDS["rdma_device"][0]
# A token of extra_args: an option or a value, without any shell
# metacharacter, quote, glob or whitespace.
TOKEN_RE = re.compile(r"^[A-Za-z0-9_.,:=/+@%-]+$")
SHELL_META = set(";&|$`<>(){}[]*?!~'\"\\\n\r\t #")

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
    "--use_cuda": "use_cuda", "--use_cuda_bus_id": "use_cuda", "--report_gbits": "report_gbits",
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


class ArgumentError(option_rules.OptionError):
    """An option value that must not reach a command line."""


def tool_name(test, metric):
    """``ib_write_bw`` and friends."""
    return "ib_%s_%s" % (test, metric)


def shell_meta_error(name, value):
    """A message when value (any nesting of str/list/dict) holds a shell metacharacter."""
    if isinstance(value, str):
        bad = sorted(set(value) & SHELL_META)
        if bad:
            return "%s %s contains shell metacharacter(s) %s" % (name, show(value), " ".join(repr(c) for c in bad))
        return None
    if isinstance(value, (list, tuple)):
        for idx, item in enumerate(value):
            err = shell_meta_error("%s[%d]" % (name, idx), item)
            if err:
                return err
    if isinstance(value, dict):
        for key, item in value.items():
            err = shell_meta_error("%s.%s" % (name, key), item)
            if err:
                return err
    return None


def valid_address(value):
    """True for an IPv4/IPv6 address or a DNS host name that cannot be an option."""
    return option_rules.is_host(value)


def checked(check, *args):
    """Run an ``option_rules`` check; its OptionError comes out as ArgumentError (one type for callers)."""
    try:
        return check(*args)
    except ArgumentError:
        raise
    except option_rules.OptionError as exc:
        raise ArgumentError(str(exc))


def _int(params, key, low, high, required=False):
    value = params.get(key)
    if value is None:
        if required:
            raise ArgumentError("%s is required" % key)
        return None
    if isinstance(value, bool):
        raise ArgumentError("%s must be an integer, got %s" % (key, show(value)))
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        raise ArgumentError("%s must be an integer, got %s" % (key, show(value)))
    if isinstance(value, float) and value != number:
        raise ArgumentError("%s must be an integer, got %s" % (key, show(value)))
    if number < low or number > high:
        raise ArgumentError("%s must be between %d and %d, got %s" % (key, low, high, show(number)))
    return number


def _number(params, key, low, high):
    """A finite number in [low, high], or None when the option is not set."""
    value = params.get(key)
    if value is None:
        return None
    return checked(option_rules.check_number, key, value, low, high)


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
    """Validate extra_args tokens; return them as a list of strings.

    ``rules`` (a ``cli_grammar.ArgumentRules``, perftest's by default) reads
    the tokens with the tool's own option grammar and refuses what the module
    sets itself (in any spelling: ``-p1``, ``--po=1``, ``-bd X``), unknown
    options, positionals, ``--`` and values that start with '-'.
    """
    rules = PERFTEST_RULES if rules is None else rules
    if extra_args is None:
        return []
    if isinstance(extra_args, str) or not isinstance(extra_args, (list, tuple)):
        raise ArgumentError("extra_args must be a list of separate arguments, got %s" % show(extra_args))
    out = []
    for idx, token in enumerate(extra_args):
        if isinstance(token, bool) or not isinstance(token, (str, int, float)):
            raise ArgumentError("extra_args[%d] must be a string, got %s" % (idx, show(token)))
        token = str(token)
        err = shell_meta_error("extra_args[%d]" % idx, token)
        if err:
            raise ArgumentError(err)
        if not TOKEN_RE.match(token):
            raise ArgumentError("extra_args[%d] %s has characters outside [A-Za-z0-9_.,:=/+@%%-]" % (idx, show(token)))
        out.append(token)
    checked(rules.check, out, "extra_args")
    return out


def check_side_labels(p):
    """What a side carries only to be reported back (peer, rail, step, round, expected_gbps)."""
    if p.get("peer") is not None:
        checked(option_rules.check_text, "peer", p["peer"], 255)
    _int(p, "rail", 0, RAIL_MAX)
    _int(p, "step", 0, STEP_MAX)
    _int(p, "round", 0, ROUND_MAX)
    _number(p, "expected_gbps", 0, EXPECTED_GBPS_MAX)


def check_min_fraction(value):
    """The share of the expected bandwidth a side must reach: above 0, at most 1."""
    if value is None:
        return None
    number = checked(option_rules.check_number, "min_fraction", value, 0, 1)
    if number <= 0:
        raise ArgumentError("min_fraction must be in (0, 1], got %s" % show(value))
    return number


def check_server(role, server):
    """The server address: required for a client, a host name or an IP address when given."""
    if role == "client" and not server:
        raise ArgumentError("server (the address of the server side) is required for role=client")
    if server not in (None, "") and not valid_address(server):
        raise ArgumentError("server %s is not a host name or an IP address" % show(server))


def normalize(params):
    """Validate one side's parameters; return a normalized copy.

    Raises ArgumentError naming the first bad option. ``gid_index`` may
    still be 'auto' (the caller resolves it with ``port_gid_index``).
    """
    p = dict(params or {})
    for key in ("role", "test", "metric", "device", "server", "peer"):
        err = shell_meta_error(key, p.get(key))
        if err:
            raise ArgumentError(err)
    role = p.get("role")
    if role not in ROLES:
        raise ArgumentError("role must be one of %s, got %s" % (", ".join(ROLES), show(role)))
    test = p.get("test") or "write"
    if test not in TESTS:
        raise ArgumentError("test must be one of %s, got %s" % (", ".join(TESTS), show(test)))
    metric = p.get("metric") or "bw"
    if metric not in METRICS:
        raise ArgumentError("metric must be one of %s, got %s" % (", ".join(METRICS), show(metric)))
    device = p.get("device")
    if device is not None:
        checked(option_rules.check_name, "device", device, "rdma_device")
    server = p.get("server")
    check_server(role, server)
    check_side_labels(p)
    out = {
        "role": role, "test": test, "metric": metric, "device": device,
        "server": server if role == "client" else None,
        "ib_port": _int(p, "ib_port", IB_PORT_MIN, IB_PORT_MAX) or 1,
        "gid_index": parse_gid_index(p.get("gid_index")),
        "tcp_port": _int(p, "tcp_port", PORT_MIN, PORT_MAX) or 18515,
        "size": _int(p, "size", SIZE_MIN, SIZE_MAX),
        "all_sizes": bool(p.get("all_sizes")),
        "iterations": _int(p, "iterations", ITERS_MIN, ITERS_MAX),
        "duration": _int(p, "duration", 1, DURATION_MAX),
        "qps": _int(p, "qps", QPS_MIN, QPS_MAX),
        "bidirectional": bool(p.get("bidirectional")),
        "rdma_cm": bool(p.get("rdma_cm")),
        "mtu": _int(p, "mtu", 0, 1 << 30),
        "use_cuda": _int(p, "use_cuda", 0, GPU_MAX),
        "extra_args": check_extra_args(p.get("extra_args")),
        "report_gbits": p.get("report_gbits", True) is not False,
        "timeout": _int(p, "timeout", 1, TIMEOUT_MAX) or 120,
        "connect_retries": _int(p, "connect_retries", 0, 100000),
    }
    if out["mtu"] is not None and out["mtu"] not in MTUS:
        raise ArgumentError("mtu must be one of %s, got %d" % (", ".join(str(m) for m in MTUS), out["mtu"]))
    if out["size"] is not None and out["all_sizes"]:
        raise ArgumentError("size and all_sizes are mutually exclusive")
    if out["iterations"] is not None and out["duration"] is not None:
        raise ArgumentError("iterations and duration are mutually exclusive")
    if out["all_sizes"] and out["duration"] is not None:
        raise ArgumentError("all_sizes cannot be combined with duration (perftest runs one size in duration mode)")
    if test == "atomic" and (out["size"] is not None or out["all_sizes"]):
        raise ArgumentError("atomic tests use a fixed 8-byte size: size and all_sizes do not apply")
    if metric == "lat":
        if out["bidirectional"]:
            raise ArgumentError("bidirectional applies to bandwidth tests only (metric=bw)")
        if out["qps"] is not None and out["qps"] != 1:
            raise ArgumentError("qps applies to bandwidth tests only (metric=bw)")
    if out["duration"] is not None and out["timeout"] <= out["duration"]:
        raise ArgumentError("timeout (%d s) must be longer than duration (%d s)" % (out["timeout"], out["duration"]))
    return out


def build_argv(params, binary=None):
    """The argv of one side (validated with ``normalize`` first).

    ``binary`` replaces the tool name (a full path found by the transport).
    ``gid_index`` 'auto' that was not resolved is left out (perftest's
    default: no GID on IB, index 0 on Ethernet).
    """
    p = normalize(params)
    bw = p["metric"] == "bw"
    if binary is not None:
        checked(option_rules.check_binary, "binary", binary, None, False)
    argv = [binary or tool_name(p["test"], p["metric"])]
    if p["device"]:
        argv += ["-d", p["device"]]
    argv += ["-i", str(p["ib_port"])]
    if isinstance(p["gid_index"], int):
        argv += ["-x", str(p["gid_index"])]
    argv += ["-p", str(p["tcp_port"])]
    if p["all_sizes"]:
        argv.append("-a")
    elif p["size"] is not None:
        argv += ["-s", str(p["size"])]
    if p["iterations"] is not None:
        argv += ["-n", str(p["iterations"])]
    if p["duration"] is not None:
        argv += ["-D", str(p["duration"])]
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
    if bw and p["report_gbits"]:
        argv.append("--report_gbits")
    argv += p["extra_args"]
    if p["role"] == "client":
        argv.append(p["server"])
    return argv


# --- GID choice ----------------------------------------------------------------

def port_gid_index(gids, netdev=None, addresses=None, subnet=None):
    """The GID index ``gid_index: auto`` means for a RoCE port: discovery's choice (rdma_discovery.select_gid).

    ``gids``: ``{index, gid, type[, netdev, ipv4]}`` (type as sysfs prints it);
    ``netdev`` the port's own netdev, so that a VLAN or macvlan GID at a lower
    index is not taken for the port's address.
    """
    return select_gid(gids, "Ethernet", netdev=netdev, addresses=addresses, subnet=subnet,
                      ipv6_fallback=True)["gid_index"]


def gid_index_from_facts(rdma_facts, device, ib_port):
    """(found, gid_index) from a commcheck_rdma fact for device/port.

    found is False when the fact does not know the port. An InfiniBand port
    needs no GID index (None).
    """
    for dev in (rdma_facts or {}).get("devices") or []:
        if dev.get("name") != device:
            continue
        for port in dev.get("ports") or []:
            try:
                number = int(port.get("port", 1))
            except (TypeError, ValueError):
                continue
            if number != int(ib_port):
                continue
            if str(port.get("link_layer") or "").lower() == "infiniband":
                return True, None
            if port.get("gid_index") is not None:
                return True, _int({"rdma_facts gid_index of %s port %d" % (device, number): port["gid_index"]},
                                  "rdma_facts gid_index of %s port %d" % (device, number), GID_MIN, GID_MAX)
            entries = [dict(g, index=g.get("index", g.get("gid_index"))) for g in port.get("gids") or []
                       if isinstance(g, dict)]
            return True, port_gid_index(entries, netdev=port.get("netdev"), addresses=port.get("addresses"))
    return False, None


def gid_index_from_sysfs(read_file, sysfs_root, device, ib_port, limit=256):
    """(found, gid_index) reading ``<sysfs_root>/class/infiniband/DEV/ports/N``.

    ``read_file(path, default)`` is the transport's reader, so this works on
    the host or inside a pod.
    """
    base = "%s/class/infiniband/%s/ports/%d" % (sysfs_root.rstrip("/") or "", device, int(ib_port))
    link_layer = read_file(base + "/link_layer", None)
    if link_layer is None:
        return False, None
    if link_layer.strip().lower() == "infiniband":
        return True, None
    entries = []
    misses = 0
    for idx in range(limit):
        gid = read_file("%s/gids/%d" % (base, idx), None)
        if gid is None:
            break
        gid = gid.strip()
        if not gid or not gid.replace("0", "").replace(":", ""):
            misses += 1
            if misses > 32 and entries:
                break
            continue
        kind = read_file("%s/gid_attrs/types/%d" % (base, idx), "") or ""
        ndev = read_file("%s/gid_attrs/ndevs/%d" % (base, idx), "") or ""
        entries.append({"index": idx, "gid": gid, "type": kind.strip(), "netdev": ndev.strip() or None})
    # GID 0 is the link-local GID of the port's own netdev (the kernel fills it first).
    own = entries[0]["netdev"] if entries and entries[0]["index"] == 0 else None
    return True, port_gid_index(entries, netdev=own)


# --- results -----------------------------------------------------------------

# cause / fix for what the module itself detects (the parser has its own
# catalog for what perftest prints).
CATALOG = {
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

_CONNECT_RE = re.compile(r"Couldn't connect to|Unable to init the socket connection|"
                         r"Failed to connect|Connection refused|unable to connect", re.I)
_UNRECOGNIZED_RE = re.compile(r"unrecognized option|invalid option|Invalid Command or flag", re.I)


def catalog_entry(code, message=None):
    cause, fix = CATALOG[code]
    return {"code": code, "message": message or cause, "cause": cause, "fix": fix}


def summarize(parsed):
    """Headline numbers of a parse_perftest result.

    bw: ``bw_gbps`` = the average bandwidth of the row with the highest
    average (the largest sizes reach line rate), ``bw_peak_gbps``, ``bytes``.
    lat: ``lat_us`` = typical latency (average when only that is printed) of
    the smallest size, ``lat_avg_us``, ``lat_p99_us``.
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


def is_connect_failure(result, parsed=None):
    """True when a client attempt failed only because nothing listened yet."""
    if result.get("rc") == 0:
        return False
    codes = [e.get("code") for e in (parsed or {}).get("errors") or []]
    if "connect_failed" in codes:
        return True
    text = (result.get("stdout") or "") + "\n" + (result.get("stderr") or "")
    return bool(_CONNECT_RE.search(text)) and not (parsed or {}).get("rows")


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
    if result.get("tool_missing"):
        return _verdict("error", [catalog_entry("tool_missing", result.get("stderr"))])
    if _UNRECOGNIZED_RE.search(text) and not parsed.get("rows"):
        line = next((ln.strip() for ln in text.splitlines() if _UNRECOGNIZED_RE.search(ln)), None)
        return _verdict("error", [catalog_entry("invalid_option", line)] + errors)
    if result.get("timed_out"):
        if role == "server" and not parsed.get("rows") and not _connected(text):
            return _verdict("error", [catalog_entry("server_no_client")] + errors)
        if role == "client" and result.get("connect_failed"):
            return _verdict("error", [catalog_entry("connect_failed")] + errors)
        return _verdict("error", [catalog_entry("client_timeout")] + errors)
    if errors:
        return _verdict("error", errors)
    if result.get("rc") not in (0, None):
        return _verdict("error", [catalog_entry("nonzero_exit", "exit status %s" % result.get("rc"))])
    metrics = summarize(parsed)
    if role == "client" and not parsed.get("rows"):
        return _verdict("error", [catalog_entry("no_rows")])
    expected = side.get("expected_gbps")
    if side.get("metric", "bw") == "bw" and expected and metrics.get("bw_gbps") is not None:
        if side.get("bidirectional"):
            expected = expected * 2
        limit = float(expected) * float(min_fraction)
        if metrics["bw_gbps"] < limit:
            entry = catalog_entry("below_expected", "%.2f Gb/s is below %.0f%% of the expected %.2f Gb/s" % (
                metrics["bw_gbps"], float(min_fraction) * 100, float(expected)))
            return _verdict("fail", [entry])
    return _verdict("pass", [])


def _connected(text):
    return bool(re.search(r"remote address:|#bytes", text))


def _verdict(verdict, errors):
    first = errors[0] if errors else {}
    return {
        "verdict": verdict,
        "cause": first.get("cause") or first.get("message") if errors else None,
        "fix": first.get("fix") if errors else None,
        "errors": errors,
    }


# --- running sides -------------------------------------------------------------

BACKOFF_S = (0.05, 0.1, 0.2, 0.3, 0.5)
POLL_S = 0.05


def run_sides(transport, jobs, clock=time.monotonic, sleep=time.sleep, abandoned=controller_gone):
    """Run every job (one side each) of one host; return their results in order.

    A job: ``argv``, ``role`` (server | client), ``timeout`` (seconds, the
    side's whole budget including retries), ``connect_retries`` (max extra
    attempts of a client, None = as many as the deadline allows), ``step``
    (jobs of one step run at the same time, steps one after the other),
    ``retryable(result) -> bool`` (whether a finished client attempt only
    failed to connect). A result: the transport's dict plus ``attempts``,
    ``connect_failed`` and ``started`` / ``ended`` (epoch seconds of the
    side's step). Every process is stopped before this returns.

    When ``abandoned()`` turns true (nobody waits for the module any more:
    ansible-playbook was interrupted) the running sides are stopped and the
    steps not started yet are not run; their results say so.
    """
    results = [None] * len(jobs)
    steps = sorted(set(int(j.get("step") or 0) for j in jobs))
    for step in steps:
        if abandoned():
            break
        idxs = [i for i, j in enumerate(jobs) if int(j.get("step") or 0) == step]
        _run_step(transport, jobs, idxs, results, clock, sleep, abandoned)
    for i, res in enumerate(results):
        if res is None:
            results[i] = {"cmd": list(jobs[i]["argv"]), "rc": None, "stdout": "", "timed_out": False,
                          "stderr": "not run: the controller went away (ansible-playbook was interrupted)",
                          "duration_s": 0.0, "attempts": 0, "connect_failed": False, "abandoned": True}
    return results


VERDICT_RANK = {"pass": 0, "skipped": 0, "fail": 1, "error": 2}
# what a module with one side (role given, not sides) also returns at its top level
SINGLE_SIDE_KEYS = ("cmd", "rc", "stdout", "stderr", "timed_out", "attempts", "metrics", "errors")


def side_result(info, argv, result, **outcome):
    """One side as a module returns it: its parameters (``info``), what ran and how it ended (a
    ``run_sides`` result), then ``outcome`` (the parsed output, metrics, verdict, cause, fix...)."""
    item = dict(info)
    item.update(cmd=argv, exec_cmd=result.get("cmd") or argv, rc=result.get("rc"),
                stdout=result.get("stdout", ""), stderr=result.get("stderr", ""),
                timed_out=bool(result.get("timed_out")), duration_s=result.get("duration_s"),
                started=result.get("started"), ended=result.get("ended"), attempts=result.get("attempts", 0))
    item.update(outcome)
    return item


def sides_outcome(results, single, parsed_key):
    """(module result, first error side or None) of a host's sides: the worst verdict with its cause
    and fix; with ``single`` the one side's run keys and ``parsed_key`` at the top level too."""
    worst = max(results, key=lambda r: VERDICT_RANK.get(r["verdict"], 0))
    out = dict(changed=False, sides=results, verdict=worst["verdict"], cause=worst.get("cause"),
               fix=worst.get("fix"))
    if single:
        for key in SINGLE_SIDE_KEYS + (parsed_key,):
            if key in results[0]:
                out[key] = results[0][key]
    errors = [r for r in results if r["verdict"] == "error"]
    return out, (errors[0] if errors else None)


class _Slot(object):
    def __init__(self, job, now):
        self.job = job
        self.deadline = now + float(job["timeout"])
        self.attempts = 0
        self.bg = None
        self.next_start = now
        self.done = None
        self.connect_failed = False
        self.last = None
        self.started = time.time()


def _run_step(transport, jobs, idxs, results, clock, sleep, abandoned):
    now = clock()
    # servers first, so a local client of a loopback pair finds its server
    order = sorted(idxs, key=lambda i: 0 if jobs[i].get("role") == "server" else 1)
    slots = dict((i, _Slot(jobs[i], now)) for i in order)
    gone = False
    try:
        while any(s.done is None for s in slots.values()):
            now = clock()
            for i in order:
                slot = slots[i]
                if slot.done is not None:
                    continue
                if slot.bg is None:
                    if now >= slot.next_start:
                        _start(transport, slot, now)
                    continue
                if slot.bg.poll() is None:
                    continue
                res = slot.bg.result()
                slot.bg = None
                retries = slot.job.get("connect_retries")
                if (slot.job.get("role") == "client" and not res.get("timed_out")
                        and slot.job.get("retryable", _default_retryable)(res)):
                    slot.connect_failed = True
                    left = slot.deadline - clock()
                    backoff = BACKOFF_S[min(slot.attempts - 1, len(BACKOFF_S) - 1)]
                    if (retries is None or slot.attempts <= retries) and left > backoff + 0.5:
                        slot.next_start = clock() + backoff
                        slot.last = res
                        continue
                    if left <= backoff + 0.5:
                        res["timed_out"] = True
                else:
                    slot.connect_failed = slot.connect_failed and bool(res.get("timed_out"))
                slot.done = _finish(res, slot)
            if any(s.done is None for s in slots.values()):
                if abandoned():
                    gone = True
                    break
                sleep(POLL_S)
    finally:
        for slot in slots.values():
            if slot.bg is not None:
                res = slot.bg.result()
                res["timed_out"] = True
                if gone:
                    res["abandoned"] = True
                    res["stderr"] = (res.get("stderr") or "") + "\nstopped: the controller went away"
                slot.done = slot.done or _finish(res, slot)
                slot.bg = None
    for i in idxs:
        results[i] = slots[i].done


def _start(transport, slot, now):
    left = slot.deadline - now
    if left <= 0.2:
        res = slot.last or {
            "cmd": list(slot.job["argv"]), "rc": None, "stdout": "", "stderr": "",
            "timed_out": True, "duration_s": 0.0}
        res["timed_out"] = True
        slot.done = _finish(res, slot)
        return
    slot.attempts += 1
    try:
        slot.bg = transport.start(slot.job["argv"], left, env=slot.job.get("env"))
    except Exception as exc:  # the runner's CommandError: binary missing or not startable
        slot.done = _finish({"cmd": list(slot.job["argv"]), "rc": None, "stdout": "",
                             "stderr": str(exc), "timed_out": False, "duration_s": 0.0,
                             "tool_missing": True}, slot)


def _finish(res, slot):
    res = dict(res)
    res["attempts"] = slot.attempts
    res["connect_failed"] = bool(slot.connect_failed)
    res["started"] = round(slot.started, 3)
    res["ended"] = round(time.time(), 3)
    return res


def _default_retryable(result):
    return is_connect_failure(result)
