# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""iperf3 command lines and verdicts (pure); runs through side_runner.run_sides.

Server: ``iperf3 -s -1 -J -p PORT [-B ADDR]`` (one client, then exit; the
runner's deadline stops it when no client comes). Client: ``iperf3 -c
SERVER -p PORT -J -t SECONDS [-P N] [-R | --bidir] [-O S] [-B ADDR]``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import cli_grammar
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import show
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.output_capture import DOCUMENT
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.side_options import (
    ArgumentError, bandwidth_outcome, catalog_entry, check_binary, check_role, check_server, check_side_labels,
    check_tokens, int_option, not_started_outcome, refuse_shell_meta, side_outcome, CANNOT_START, OUTPUT_TOO_LARGE,
    too_large_entry, valid_address)

DEFAULT_PORT = 5201
DURATION_MAX = 86400
PARALLEL_MAX = 128
OMIT_MAX = 600
TIMEOUT_MAX = 86400

# iperf3's own option table (src/iperf_api.c, iperf_parse_arguments): the
# getopt_long short string and long options of iperf3 3.12 (Debian 12) and of
# the newest release, together; options that only some builds have
# (HAVE_SSL, HAVE_SCTP_H, HAVE_TCP_KEEPALIVE... in the source) are listed too.
IPERF3_SHORTOPTS = "p:f:i:D1VJvsc:ub:t:n:k:l:P:Rw:B:M:N46S:L:ZO:F:A:T:C:dI:mhX:"
_R, _N, _O = cli_grammar.REQUIRED_ARGUMENT, cli_grammar.NO_ARGUMENT, cli_grammar.OPTIONAL_ARGUMENT
IPERF3_LONGOPTS = (
    ("port", _R, "p"), ("format", _R, "f"), ("interval", _R, "i"), ("daemon", _N, "D"), ("one-off", _N, "1"),
    ("verbose", _N, "V"), ("json", _N, "J"), ("json-stream", _N, None), ("json-stream-full-output", _N, None),
    ("version", _N, "v"), ("server", _N, "s"), ("client", _R, "c"), ("udp", _N, "u"), ("bitrate", _R, "b"),
    ("bandwidth", _R, "b"), ("server-bitrate-limit", _R, None), ("server-max-duration", _R, None),
    ("time", _R, "t"), ("bytes", _R, "n"), ("blockcount", _R, "k"), ("length", _R, "l"), ("parallel", _R, "P"),
    ("reverse", _N, "R"), ("bidir", _N, None), ("window", _R, "w"), ("bind", _R, "B"), ("bind-dev", _R, None),
    ("cport", _R, None), ("set-mss", _R, "M"), ("no-delay", _N, "N"), ("version4", _N, "4"),
    ("version6", _N, "6"), ("tos", _R, "S"), ("dscp", _R, None), ("extra-data", _R, None),
    ("flowlabel", _R, "L"), ("zerocopy", _N, "Z"), ("omit", _R, "O"), ("file", _R, "F"),
    ("repeating-payload", _N, None), ("timestamps", _O, None), ("affinity", _R, "A"), ("title", _R, "T"),
    ("congestion", _R, "C"), ("linux-congestion", _R, "C"), ("sctp", _N, None), ("nstreams", _R, None),
    ("xbind", _R, "X"), ("pidfile", _R, "I"), ("logfile", _R, None), ("forceflush", _N, None),
    ("get-server-output", _N, None), ("udp-counters-64bit", _N, None), ("no-fq-socket-pacing", _N, None),
    ("dont-fragment", _N, None), ("skip-rx-copy", _N, None), ("username", _R, None),
    ("rsa-public-key-path", _R, None), ("rsa-private-key-path", _R, None), ("authorized-users-path", _R, None),
    ("time-skew-threshold", _R, None), ("use-pkcs1-padding", _N, None), ("fq-rate", _R, None),
    ("pacing-timer", _R, None), ("connect-timeout", _R, None), ("idle-timeout", _R, None),
    ("rcv-timeout", _R, None), ("snd-timeout", _R, None), ("cntl-ka", _O, None), ("mptcp", _N, "m"),
    ("gsro", _N, None), ("debug", _O, "d"), ("help", _N, "h"),
)
IPERF3_GRAMMAR = cli_grammar.Grammar("iperf3", IPERF3_SHORTOPTS, IPERF3_LONGOPTS)

# Options the module sets itself (canonical keys: -p stands for --port, --po,
# -p1...), and those that write files, daemonize or change the output format.
MANAGED_OPTIONS = {
    "-s": "role", "-c": "server", "-p": "tcp_port", "-B": "bind", "-t": "duration", "-P": "parallel",
    "-R": "reverse", "--bidir": "bidirectional", "-O": "omit", "-n": "duration", "-k": "duration",
    "-J": "(JSON output)", "--json-stream": "(JSON output)", "--json-stream-full-output": "(JSON output)",
    "-1": "(one-off server)", "-D": "(daemon)", "--logfile": "(output)", "-I": "(pidfile)", "-F": "(file)",
    "-h": "(help)", "-v": "(version)",
}
IPERF3_RULES = cli_grammar.ArgumentRules(
    IPERF3_GRAMMAR, managed=MANAGED_OPTIONS,
    value_rules={
        "--rsa-public-key-path": cli_grammar.path_value, "--rsa-private-key-path": cli_grammar.secret_path_value,
        "--authorized-users-path": cli_grammar.secret_path_value,
        "--bind-dev": lambda label, value: option_rules.check_name(label, value, "netdev"),
    })

# iperf3 -J prints one JSON document (its intervals grow with the duration): it is read whole, up to the
# runner's bound for documents; cut, it could not be decoded
OUTPUT_CAPTURE = DOCUMENT

CATALOG = {
    "cannot_start": CANNOT_START,
    "output_too_large": OUTPUT_TOO_LARGE,
    "tool_missing": (
        "iperf3 is not installed on this host (or not on PATH)",
        "install iperf3 (apt install iperf3 / dnf install iperf3) or put it on PATH"),
    "server_no_client": (
        "the iperf3 server waited until its deadline and no client connected",
        "check the peer's own result, that the TCP port is not filtered between the hosts, and that "
        "forks is at least the number of hosts in the check"),
    "connect_failed": (
        "the client could not reach the server before its deadline (it never listened, or the "
        "address is unreachable or filtered)",
        "check the peer's own result, the address used for the peer, routes and firewalls"),
    "client_timeout": (
        "the test did not finish before its deadline",
        "raise timeout or shorten duration; check the path for loss (retransmits)"),
    "iperf3_error": (
        "iperf3 reported an error",
        "read the message; rerun by hand with the same command line"),
    "below_expected": (
        "TCP bandwidth is below the expected share",
        "check the Ethernet link speed and errors (ethtool -S), MTU, interrupt / CPU placement, "
        "and that nothing else loads the path"),
    "no_result": (
        "iperf3 finished without a result",
        "look at stdout / stderr of the run; rerun by hand with the same command line"),
}

_CONNECT_RE = re.compile(r"unable to connect to server|server is busy|Connection refused|"
                         r"unable to receive control message|No route to host", re.I)


def check_extra_args(extra_args):
    """extra_args for iperf3, read with iperf3's own option grammar (see side_options.check_tokens)."""
    return check_tokens(extra_args, IPERF3_RULES)


def normalize(params):
    """Validate one iperf3 side; return a normalized copy (raises ArgumentError)."""
    p = dict(params or {})
    # peer is the peer's inventory name, a label for the result (check_side_labels), never tool input
    refuse_shell_meta(p, ("role", "server", "bind"))
    role = check_role(p.get("role"))
    server = p.get("server")
    check_server(role, server if role == "client" else None)
    bind = p.get("bind")
    if bind not in (None, "") and not valid_address(bind):
        raise ArgumentError("bind %s is not a host name or an IP address" % show(bind))
    check_side_labels(p)
    out = {
        "role": role,
        "server": server if role == "client" else None,
        "bind": bind or None,
        "tcp_port": int_option(p, "tcp_port", 1, 65535) or DEFAULT_PORT,
        "duration": int_option(p, "duration", 1, DURATION_MAX) or 10,
        "parallel": int_option(p, "parallel", 1, PARALLEL_MAX),
        "omit": int_option(p, "omit", 0, OMIT_MAX),
        "reverse": bool(p.get("reverse")),
        "bidirectional": bool(p.get("bidirectional")),
        "extra_args": check_extra_args(p.get("extra_args")),
        "timeout": int_option(p, "timeout", 1, TIMEOUT_MAX) or 60,
        "connect_retries": int_option(p, "connect_retries", 0, 100000),
    }
    _check_directions_and_deadline(out)
    return out


def _check_directions_and_deadline(out):
    if out["reverse"] and out["bidirectional"]:
        raise ArgumentError("reverse and bidirectional are mutually exclusive")
    needed = out["duration"] + (out["omit"] or 0)
    if out["role"] == "client" and out["timeout"] <= needed:
        raise ArgumentError("timeout (%d s) must be longer than duration + omit (%d s)" % (out["timeout"], needed))


def build_argv(params, binary=None):
    """argv of one iperf3 side (validated with ``normalize``)."""
    p = normalize(params)
    check_binary(binary)
    argv = [binary or "iperf3"]
    if p["role"] == "server":
        argv += ["-s", "-1", "-J", "-p", str(p["tcp_port"])]
        if p["bind"]:
            argv += ["-B", p["bind"]]
        return argv + p["extra_args"]
    argv += ["-c", p["server"], "-p", str(p["tcp_port"]), "-J", "-t", str(p["duration"])]
    if p["parallel"]:
        argv += ["-P", str(p["parallel"])]
    if p["reverse"]:
        argv.append("-R")
    if p["bidirectional"]:
        argv.append("--bidir")
    if p["omit"]:
        argv += ["-O", str(p["omit"])]
    if p["bind"]:
        argv += ["-B", p["bind"]]
    return argv + p["extra_args"]


def json_error(text):
    """The ``error`` member of iperf3 -J output, or None."""
    try:
        data = json.loads(text)
    except (TypeError, ValueError):
        start = (text or "").find("{")
        if start < 0:
            return None
        try:
            data = json.loads(text[start:])
        except ValueError:
            return None
    return data.get("error") if isinstance(data, dict) else None


def is_connect_failure(result):
    """True when a client attempt failed because the server was not (yet) there."""
    message = json_error(result.get("stdout") or "") or ""
    text = message + "\n" + (result.get("stderr") or "")
    return bool(_CONNECT_RE.search(text))


def bandwidth(parsed):
    """The measured TCP bandwidth in Gb/s: received, else sent."""
    parsed = parsed or {}
    for key in ("received_gbps", "sent_gbps"):
        if parsed.get(key) is not None:
            return parsed[key]
    return None


def side_verdict(side, result, parsed, min_fraction=0.9):
    """pass / fail / error for one iperf3 side, with cause and fix."""
    parsed = parsed or {}
    role = side.get("role")
    not_started = not_started_outcome(CATALOG, result)
    if not_started:
        return not_started
    if result.get("output_too_large") and (result.get("output_stopped") or bandwidth(parsed) is None):
        return side_outcome("error", [too_large_entry(CATALOG, result)])
    if result.get("timed_out"):
        return _timeout_verdict(role, result, parsed)
    message, errors = _reported_errors(result, parsed)
    if role == "client" and result.get("connect_failed"):
        return side_outcome("error", [catalog_entry(CATALOG, "connect_failed", message)] + errors)
    if errors or message or result.get("rc") not in (0, None):
        exit_status = catalog_entry(CATALOG, "iperf3_error", "exit status %s" % result.get("rc"))
        return side_outcome("error", errors or [exit_status])
    return _bandwidth_verdict(side, bandwidth(parsed), min_fraction)


def _timeout_verdict(role, result, parsed):
    if role == "server" and bandwidth(parsed) is None:
        return side_outcome("error", [catalog_entry(CATALOG, "server_no_client")])
    if role == "client" and result.get("connect_failed"):
        return side_outcome("error", [catalog_entry(CATALOG, "connect_failed")])
    return side_outcome("error", [catalog_entry(CATALOG, "client_timeout")])


def _reported_errors(result, parsed):
    """(iperf3's JSON ``error``, the parser's errors each with a cause and fix)."""
    message = json_error(result.get("stdout") or "")
    errors = [dict(e) for e in parsed.get("errors") or []]
    for err in errors:
        if not err.get("cause"):
            err.setdefault("cause", err.get("message") or CATALOG["iperf3_error"][0])
            err.setdefault("fix", CATALOG["iperf3_error"][1])
    if message and not errors:
        errors = [catalog_entry(CATALOG, "iperf3_error", message)]
        errors[0]["cause"] = "iperf3: %s" % message
    return message, errors


def _bandwidth_verdict(side, value, min_fraction):
    if side.get("role") != "client":
        return side_outcome("pass", [])
    if value is None:
        return side_outcome("error", [catalog_entry(CATALOG, "no_result")])
    return bandwidth_outcome(CATALOG, value, side.get("expected_gbps"), min_fraction)
