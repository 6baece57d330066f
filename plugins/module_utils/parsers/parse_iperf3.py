# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse ``iperf3 -J`` (and ``--json-stream``) output into one flat result.

The text may hold warnings or launcher noise before and after the JSON
object (also on its first line: ``^C{`` after Ctrl-C, a prompt), several
concatenated objects (the last complete one is used), a truncated object
(``truncated_json``, plus the ``error`` string when it can still be read),
or iperf3's plain-text ``iperf3: error - ...`` lines. The side that got
SIGINT reports ``interrupt - the client/server has terminated``
(``interrupted``); its peer ``the server/client has terminated``
(``control_closed``). Reading is linear in the text, however many braces
the noise holds.

Bandwidth is in Gb/s (10^9 bit/s). ``sent_gbps``/``received_gbps`` come
from ``end.sum_sent``/``end.sum_received`` (UDP from older iperf3 only has
``end.sum``); with ``--bidir`` the reverse direction is in ``bidir_reverse``.
Note that iperf3 3.12 exits 0 with ``-J`` even when it could not connect:
the ``error`` key, not the exit status, tells.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.pasted import without_spans
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    bounded_lines,
    decode_json_at,
    error_catalog,
    error_entry,
    parse_or_report,
    pasted_text,
    to_float,
    to_int,
    to_text,
    unrecognised_warning,
)

IPERF3_ERRORS = error_catalog({
    "connection_refused": (
        "Nothing listens on the server address and port (iperf3 -s not started, wrong port, or a firewall rejects).",
        "Start iperf3 -s on the server first (the client retries until it listens), check the port and firewall.",
    ),
    "server_busy": (
        "The iperf3 server is already running a test for another client (one test at a time per server port).",
        "Use one server port per concurrent client, or schedule pairs so a server serves one client per round.",
    ),
    "no_route": (
        "The client has no route to the server address (wrong address, interface down, or wrong subnet).",
        "Check the address, ip route and that the test interface is up on both hosts.",
    ),
    "connect_timeout": (
        "The connection or the test timed out (packets dropped by a firewall, or the peer is unreachable or hung).",
        "Check firewalls (nft/iptables) and reachability (ping), and that the server host is responsive.",
    ),
    "resolve_failed": (
        "The server host name could not be resolved.",
        "Use an IP address or fix name resolution (/etc/hosts, DNS).",
    ),
    "control_closed": (
        "The control connection closed during the test (the peer stopped, crashed or was killed, "
        "or a middlebox reset the connection).",
        "Check the peer's iperf3 process and logs; make sure the server was not stopped early by a deadline.",
    ),
    "listen_failed": (
        "The iperf3 server could not listen (port already in use or address not on this host).",
        "Stop the old iperf3 server (or use another port) and bind to an address of this host.",
    ),
    "bind_failed": (
        "iperf3 could not bind to the requested local address or device.",
        "Bind to an address configured on this host (ip addr) or an existing device.",
    ),
    "auth_failed": (
        "iperf3 authentication failed (wrong user, password or RSA keys).",
        "Check the --username/--rsa-public-key-path settings on both sides.",
    ),
    "bad_option": (
        "iperf3 rejected an option (not supported by this iperf3 version, e.g. --bidir before 3.7).",
        "Update iperf3 on both hosts or drop the option.",
    ),
    "interrupted": (
        "iperf3 was interrupted (signal) before the test finished.",
        "Check what stopped it (deadline, Ctrl-C, OOM killer) and run again.",
    ),
    "no_output": (
        "iperf3 printed nothing (it was not run, or its output was lost).",
        "Check that iperf3 is installed and that the command ran; look at stderr.",
    ),
    "truncated_json": (
        "iperf3's JSON output is cut off (the process was killed or output was truncated).",
        "Give the test a longer deadline than its duration; check that iperf3 was not killed.",
    ),
    "invalid_json": (
        "The output holds no iperf3 JSON result (iperf3 without -J, or another program's output).",
        "Run iperf3 with -J (--json).",
    ),
    "no_results": (
        "iperf3 finished without end-of-test totals.",
        "Check the iperf3 output and run again with a longer duration.",
    ),
}, "iperf3", verb="reported")

# Message fragments (lower case) -> code; first match wins.
_MESSAGE_CODES = (
    # iperf3 prints "interrupt - the client has terminated" (or "... the server has terminated") on the
    # side that got the signal; the peer reads "the client/server has terminated" (control_closed).
    ("interrupt -", "interrupted"),
    # "parameter error - <what iperf3 rejected>": before the words that message may hold ("timeout", ...)
    ("parameter error", "bad_option"),
    ("connection refused", "connection_refused"),
    ("server is busy", "server_busy"),
    ("no route to host", "no_route"),
    ("network is unreachable", "no_route"),
    ("host is unreachable", "no_route"),
    ("timed out", "connect_timeout"),
    ("timeout", "connect_timeout"),
    ("name or service not known", "resolve_failed"),
    ("failure in name resolution", "resolve_failed"),
    ("unable to resolve", "resolve_failed"),
    ("nodename nor servname", "resolve_failed"),
    ("control socket has closed", "control_closed"),
    # "the client has unexpectedly closed the connection" (the server's word for a client that went away),
    # "stream socket has closed unexpectedly"
    ("unexpectedly closed", "control_closed"),
    ("closed unexpectedly", "control_closed"),
    ("unable to send control message", "control_closed"),
    ("unable to receive control message", "control_closed"),
    ("has terminated", "control_closed"),
    ("connection reset", "control_closed"),
    ("broken pipe", "control_closed"),
    ("unable to start listener", "listen_failed"),
    ("address already in use", "listen_failed"),
    ("unable to bind", "bind_failed"),
    ("cannot assign requested address", "bind_failed"),
    ("authentication", "auth_failed"),
    ("authorization failed", "auth_failed"),
    ("unrecognized option", "bad_option"),
    ("invalid option", "bad_option"),
    ("not supported", "bad_option"),
    ("interrupt", "interrupted"),
)
# (?P<msg>.*) and a strip in code, not .*\S: that backtracks over a run of trailing blanks quadratically.
_TEXT_ERROR = re.compile(r"iperf3?:\s*(?:(?:parameter\s+)?error|interrupt)\s*-(?P<msg>.*)", re.I)
# iperf3 prints some errors without "error -" ("iperf3: the client has unexpectedly closed the connection"):
# such a line is an error when its message is one iperf3 is known to print.
_TEXT_BARE = re.compile(r"\biperf3?:\s*(?P<msg>\S.*)", re.I)
_TEXT_OPTION = re.compile(r"iperf3?:\s*(?:unrecognized|invalid) option.*", re.I)
_WARNING = re.compile(r"^\s*(?:iperf3:\s*)?warning\s*[:-](?P<msg>.*)", re.I)
_MAX_TEXT_ERRORS = 20   # text-mode error lines read; more say nothing new
_ERROR_STRING = re.compile(r'"error"\s*:\s*"(?P<msg>(?:[^"\\]|\\.)*)"')
# Where a JSON object can start: a '{' that ends its line or is followed (after white space) by a key
# or '}' -- anywhere in a line, so that noise in front of it ("^C{" after Ctrl-C, a prompt) does not
# hide it. Each white-space run is scanned for one brace only: linear.
_OBJECT_START = re.compile(r'\{(?=[ \t]*(?:\r?\n|\Z)|\s*["}])')
_MAX_JSON_FAILURES = 100000   # starts that did not decode; the scan stops there (it is linear anyway)
_MAX_DEEP_FAILURES = 3        # starts nested too deeply to decode (RecursionError): junk, stop early
_GBPS = 1e9


def classify(message):
    """Error code for an iperf3 error message."""
    lowered = to_text(message).lower()
    for fragment, code in _MESSAGE_CODES:
        if fragment in lowered:
            return code
    return "unknown"


def _entry(message):
    return error_entry(classify(message), message, IPERF3_ERRORS)


def _is_iperf_object(value):
    """A -J result object (not one of its inner interval/stream objects); the scan yields only objects."""
    return (isinstance(value.get("start"), dict) or isinstance(value.get("end"), dict)
            or isinstance(value.get("intervals"), list) or isinstance(value.get("error"), str))


def _json_objects(text):
    """(objects, spans, failed): the complete JSON objects in the text, in order, and the positions
    where an object began but did not decode.

    Linear: after a complete object the scan goes on behind it; after a
    failure at the position where the decoder stopped (everything before it
    was a valid JSON prefix, so no object starts there that is not nested in
    the failed one); an object cut off at the end of the text ends the scan.
    """
    objects = []
    spans = []
    failed = []
    deep = 0
    position = 0
    while len(failed) < _MAX_JSON_FAILURES:
        match = _OBJECT_START.search(text, position)
        if not match:
            break
        start = match.start()
        value, end, reason = decode_json_at(text, start)
        if reason is None:
            objects.append(value)
            spans.append((start, end))
            position = end
            continue
        failed.append(start)
        if reason == "deep":
            deep += 1
            newline = text.find("\n", start)
            if deep >= _MAX_DEEP_FAILURES or newline < 0:
                break
            end = newline + 1
        position = end
    return objects, spans, failed


def _from_json_stream(objects):
    """Assemble --json-stream events ({"event": ..., "data": ...}) into one -J style object."""
    assembled = {}
    intervals = []
    for obj in objects:
        event, data = obj.get("event"), obj.get("data")
        if event == "start":
            assembled["start"] = data
        elif event == "interval":
            intervals.append(data)
        elif event == "end":
            assembled["end"] = data
        elif event == "error":
            assembled["error"] = data
        elif event == "server_output_json":
            assembled["server_output_json"] = data
    if not assembled and not intervals:
        return None
    assembled["intervals"] = intervals
    return assembled


def _dict(value):
    return value if isinstance(value, dict) else {}


def _str(value):
    """Strings and numbers as text; anything else (null, objects) as None."""
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        return None
    return to_text(value)


def _gbps(block):
    bps = to_float(_dict(block).get("bits_per_second"))
    return round(bps / _GBPS, 6) if bps is not None else None


def _empty_result():
    return {
        "ok": False,
        "sent_gbps": None,
        "received_gbps": None,
        "retransmits": None,
        "errors": [],
        "warnings": [],
        "protocol": None,
        "streams": None,
        "duration_s": None,
        "reverse": None,
        "bidirectional": None,
        "role": None,
        "remote_host": None,
        "remote_port": None,
        "local_host": None,
        "sent_bytes": None,
        "received_bytes": None,
        "bidir_reverse": None,
        "jitter_ms": None,
        "lost_packets": None,
        "packets": None,
        "lost_percent": None,
        "cpu_host_percent": None,
        "cpu_remote_percent": None,
        "cpu_utilization_percent": None,
        "interval_gbps": [],
        "version": None,
        "system_info": None,
        "timestamp": None,
        "sender_tcp_congestion": None,
        "receiver_tcp_congestion": None,
    }


def _fill(result, data):
    """Fill the result from one -J style object (start, end, intervals, error)."""
    start = _dict(data.get("start"))
    end = _dict(data.get("end"))
    test = _dict(start.get("test_start"))
    _fill_start(result, start, test)
    _fill_peers(result, start)
    received_block, sum_any = _fill_sums(result, end)
    if result["protocol"] == "UDP" or "jitter_ms" in received_block:
        _fill_udp(result, received_block if "jitter_ms" in received_block else sum_any)
    _fill_bidir(result, end, test)
    _fill_cpu(result, end)
    _fill_intervals(result, data.get("intervals"))
    error = data.get("error")
    if error:
        result["errors"].append(_entry(to_text(error)))


def _fill_start(result, start, test):
    result["version"] = _str(start.get("version"))
    result["system_info"] = _str(start.get("system_info"))
    result["timestamp"] = _str(_dict(start.get("timestamp")).get("time"))
    result["protocol"] = _str(test.get("protocol"))
    result["streams"] = to_int(test.get("num_streams"))
    result["duration_s"] = to_float(test.get("duration"))
    result["omit_s"] = to_float(test.get("omit"))
    result["blksize"] = to_int(test.get("blksize"))
    result["target_bitrate"] = to_int(test.get("target_bitrate"))
    if "reverse" in test:
        result["reverse"] = bool(to_int(test.get("reverse"), 0))


def _fill_peers(result, start):
    """The role (a client connects, a server accepts) and the hosts of the first connection."""
    connecting = _dict(start.get("connecting_to"))
    accepted = _dict(start.get("accepted_connection"))
    connected = start.get("connected")
    first = _dict(connected[0]) if isinstance(connected, list) and connected else {}
    peer = connecting or accepted
    if peer:
        result["role"] = "client" if connecting else "server"
        result["remote_host"] = _str(peer.get("host"))
        result["remote_port"] = to_int(peer.get("port"))
    if first:
        result["local_host"] = _str(first.get("local_host"))
        if result["remote_host"] is None:
            result["remote_host"] = _str(first.get("remote_host"))
            result["remote_port"] = to_int(first.get("remote_port"))


def _fill_sums(result, end):
    """Totals from end.sum_sent / end.sum_received (end.sum for UDP from older iperf3).
    Returns (the received block, end.sum) for the UDP figures."""
    sum_sent = _dict(end.get("sum_sent"))
    sum_any = _dict(end.get("sum"))
    sent_block = sum_sent or sum_any
    received_block = _dict(end.get("sum_received")) or sum_any
    result["sent_gbps"] = _gbps(sent_block)
    result["received_gbps"] = _gbps(received_block)
    result["sent_bytes"] = to_int(sent_block.get("bytes"))
    result["received_bytes"] = to_int(received_block.get("bytes"))
    result["retransmits"] = to_int(sum_sent.get("retransmits"))
    return received_block, sum_any


def _fill_udp(result, udp):
    result["jitter_ms"] = to_float(udp.get("jitter_ms"))
    result["lost_packets"] = to_int(udp.get("lost_packets"))
    result["packets"] = to_int(udp.get("packets"))
    result["lost_percent"] = to_float(udp.get("lost_percent"))


def _fill_bidir(result, end, test):
    """--bidir: the reverse direction's totals."""
    reverse_sent = _dict(end.get("sum_sent_bidir_reverse"))
    reverse_received = _dict(end.get("sum_received_bidir_reverse"))
    bidir = bool(reverse_sent or reverse_received) or bool(to_int(test.get("bidir"), 0))
    result["bidirectional"] = bidir
    if bidir:
        result["bidir_reverse"] = {
            "sent_gbps": _gbps(reverse_sent),
            "received_gbps": _gbps(reverse_received),
            "retransmits": to_int(reverse_sent.get("retransmits")),
            "sent_bytes": to_int(reverse_sent.get("bytes")),
            "received_bytes": to_int(reverse_received.get("bytes")),
        }


def _fill_cpu(result, end):
    cpu = end.get("cpu_utilization_percent")
    if isinstance(cpu, dict):
        result["cpu_utilization_percent"] = dict(cpu)
        result["cpu_host_percent"] = to_float(cpu.get("host_total"))
        result["cpu_remote_percent"] = to_float(cpu.get("remote_total"))
    result["sender_tcp_congestion"] = _str(end.get("sender_tcp_congestion"))
    result["receiver_tcp_congestion"] = _str(end.get("receiver_tcp_congestion"))


def _fill_intervals(result, intervals):
    """The measured intervals' rates.  The --omit warm-up intervals (sum.omitted true, their clock restarting
    at 0 after them) are not part of the measurement: iperf3 leaves them out of its end sums, and listing them
    gave a 10 s test with -O 3 thirteen intervals, the slow-start ones among them."""
    if isinstance(intervals, list):
        for interval in intervals:
            block = _dict(_dict(interval).get("sum"))
            if block.get("omitted") is True:
                continue
            gbps = _gbps(block)
            if gbps is not None:
                result["interval_gbps"].append(gbps)


def _result_object(objects, spans):
    """(the iperf3 object to read, where it ends): the last complete -J object, else the
    --json-stream events assembled, else (None, 0)."""
    stream = _from_json_stream(objects)
    candidates = [i for i, obj in enumerate(objects) if _is_iperf_object(obj)]
    if candidates:
        return objects[candidates[-1]], spans[candidates[-1]][1]
    if stream is not None:
        return stream, spans[-1][1]
    return None, 0


def _text_outside(text, spans):
    """The text between the JSON objects."""
    return without_spans(text, spans, "\n")


def _read_text_lines(result, text):
    """iperf3 text-mode errors and warnings (printed outside the JSON)."""
    for line in bounded_lines(text):
        text_error = _TEXT_ERROR.search(line)
        message = text_error.group("msg").strip() if text_error else ""
        if message:
            _add_text_error(result, message, line)
            continue
        if _TEXT_OPTION.search(line):
            if len(result["errors"]) < _MAX_TEXT_ERRORS:
                result["errors"].append(error_entry("bad_option", line.strip(), IPERF3_ERRORS))
            continue
        warning = _WARNING.match(line)
        message = warning.group("msg").strip() if warning else ""
        if message:
            result["warnings"].append(message)
            continue
        message = _known_bare_message(line)
        if message:
            _add_text_error(result, message, line)


def _add_text_error(result, message, line):
    """One text-mode error line, unless its message is already an error."""
    if len(result["errors"]) < _MAX_TEXT_ERRORS and not any(
            message in entry["message"] for entry in result["errors"]):
        result["errors"].append(_entry(line.strip()))


def _known_bare_message(line):
    """The message of an 'iperf3: <message>' line without "error -" when it is an error iperf3 is known to
    print, else ''."""
    bare = _TEXT_BARE.search(line)
    message = bare.group("msg").strip() if bare else ""
    return message if message and classify(message) != "unknown" else ""


def _no_object_errors(result, text, failed):
    """No iperf3 object was read: a truncated one (whose "error" may still be readable), or none at all."""
    if failed:
        result["errors"].append(error_entry("truncated_json", "iperf3 JSON output is incomplete", IPERF3_ERRORS))
        salvaged = _ERROR_STRING.search(text, failed[0])
        if salvaged:
            try:
                message = json.loads('"%s"' % salvaged.group("msg"))
            except ValueError:
                message = salvaged.group("msg")
            result["errors"].append(_entry(message))
    elif not result["errors"]:
        result["errors"].append(error_entry("invalid_json", "no iperf3 JSON object in the output: %s" % (
            unrecognised_warning("iperf3 -J", text)), IPERF3_ERRORS))


def _parse(text):
    result = _empty_result()
    text = to_text(text)
    if not text.strip():
        result["errors"].append(error_entry("no_output", "no output", IPERF3_ERRORS))
        return result
    text, objects, spans, failed = _json_in(text)
    data, data_end = _result_object(objects, spans)
    _read_text_lines(result, _text_outside(text, spans))
    if data is None:
        _no_object_errors(result, text, failed)
        return result

    text_errors = list(result["errors"])
    result["errors"] = []
    _fill(result, data)
    # A text error that repeats the JSON error adds nothing.
    for entry in text_errors:
        if not any(e["code"] == entry["code"] for e in result["errors"]):
            result["errors"].append(entry)
    if any(start >= data_end for start in failed):
        result["warnings"].append("incomplete JSON after the last complete iperf3 object was ignored")
    if result["sent_gbps"] is None and result["received_gbps"] is None and not result["errors"]:
        result["errors"].append(error_entry("no_results", "iperf3 JSON has no end-of-test sums", IPERF3_ERRORS))
    _warn_nothing_received(result)
    result["ok"] = not result["errors"] and (result["sent_gbps"] is not None or result["received_gbps"] is not None)
    return result


def _json_in(text):
    """(text, objects, spans, failed) of the text, or, when it holds no iperf3 object as it is, of the text
    without what a paste added (quote markers, launcher prefixes, colours, notes): a pasted object cut off
    is then read as cut (a colour code inside it hid it from the scan), a complete one as complete."""
    objects, spans, failed = _json_objects(text)
    if _result_object(objects, spans)[0] is None and "{" in text:
        cleaned = pasted_text(text)
        if cleaned != text:
            return (cleaned,) + _json_objects(cleaned)
    return text, objects, spans, failed


def _warn_nothing_received(result):
    """A receiver that counted 0 bytes of what the sender sent measured nothing: say so, the 0 Gb/s is no rate.

    iperf3 3.9 with -n 10240 (a transfer shorter than one interval) reports sum_received bytes 0 after 46464
    bytes were sent; read as is, received_gbps 0.0 failed the bandwidth check with no word of why.
    """
    pairs = [(result["sent_bytes"], result["received_bytes"])]
    if result.get("bidir_reverse"):
        pairs.append((result["bidir_reverse"].get("sent_bytes"), result["bidir_reverse"].get("received_bytes")))
    for sent, received in pairs:
        if sent and received == 0:
            result["warnings"].append(
                "the receiver counted 0 bytes of the %d bytes sent (a transfer too short for the receiver's "
                "report, or its report was lost): received_gbps 0 is no measured rate" % sent)


def parse_iperf3(text):
    """Parse iperf3 -J output; see the module docstring. Never raises."""
    return parse_or_report(_parse, text, _empty_result(), IPERF3_ERRORS)
