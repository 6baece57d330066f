# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_iperf3 on real ``iperf3 -J`` outputs captured on loopback on the build machine.

tests/fixtures/iperf3/ holds iperf 3.12 outputs (see its README.md for the
commands). Expected numbers are computed from the JSON files themselves, so
the tests check the parser's arithmetic and field choice, not constants.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import shutil
import socket
import subprocess
import time

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_iperf3 import classify, parse_iperf3

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "iperf3")


def fixture(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def raw(name):
    return json.loads(fixture(name))


def gbps(block):
    return round(block["bits_per_second"] / 1e9, 6)


def test_every_fixture_has_a_test():
    with open(os.path.abspath(__file__), encoding="utf-8") as handle:
        source = handle.read()
    names = [n for n in sorted(os.listdir(FIXTURES)) if n.endswith(".json")]
    assert names, "no iperf3 fixtures"
    assert not [n for n in names if '"%s"' % n not in source]


def test_tcp_client():
    data = raw("tcp_loopback.json")
    result = parse_iperf3(fixture("tcp_loopback.json"))
    assert result["ok"] is True and result["errors"] == []
    assert result["sent_gbps"] == gbps(data["end"]["sum_sent"])
    assert result["received_gbps"] == gbps(data["end"]["sum_received"])
    assert result["retransmits"] == data["end"]["sum_sent"]["retransmits"]
    assert result["sent_bytes"] == data["end"]["sum_sent"]["bytes"]
    assert result["protocol"] == "TCP" and result["streams"] == 1 and result["duration_s"] == 1.0
    assert result["reverse"] is False and result["bidirectional"] is False
    assert result["role"] == "client"
    assert result["remote_host"] == "127.0.0.1" and result["remote_port"] == 5299
    assert result["cpu_host_percent"] == data["end"]["cpu_utilization_percent"]["host_total"]
    assert result["cpu_remote_percent"] == data["end"]["cpu_utilization_percent"]["remote_total"]
    assert result["interval_gbps"] == [gbps(i["sum"]) for i in data["intervals"]]
    assert result["jitter_ms"] is None and result["bidir_reverse"] is None
    assert result["version"] == "iperf 3.12"
    assert result["sender_tcp_congestion"] == data["end"]["sender_tcp_congestion"]


def test_tcp_reverse():
    data = raw("tcp_reverse_loopback.json")
    result = parse_iperf3(fixture("tcp_reverse_loopback.json"))
    assert result["ok"] and result["reverse"] is True
    assert result["received_gbps"] == gbps(data["end"]["sum_received"])
    assert result["retransmits"] == data["end"]["sum_sent"]["retransmits"]


def test_tcp_parallel_streams():
    data = raw("tcp_parallel2_loopback.json")
    result = parse_iperf3(fixture("tcp_parallel2_loopback.json"))
    assert result["ok"] and result["streams"] == 2
    assert len(data["end"]["streams"]) == 2
    assert result["sent_gbps"] == gbps(data["end"]["sum_sent"])
    per_stream = sum(s["sender"]["bits_per_second"] for s in data["end"]["streams"]) / 1e9
    assert result["sent_gbps"] == pytest.approx(per_stream, rel=1e-3)


def test_tcp_bidir():
    data = raw("tcp_bidir_loopback.json")
    result = parse_iperf3(fixture("tcp_bidir_loopback.json"))
    assert result["ok"] and result["bidirectional"] is True
    assert result["sent_gbps"] == gbps(data["end"]["sum_sent"])
    reverse = result["bidir_reverse"]
    assert reverse["sent_gbps"] == gbps(data["end"]["sum_sent_bidir_reverse"])
    assert reverse["received_gbps"] == gbps(data["end"]["sum_received_bidir_reverse"])
    assert reverse["retransmits"] == data["end"]["sum_sent_bidir_reverse"]["retransmits"]


@pytest.mark.parametrize("name,reverse", [("udp_loopback.json", False), ("udp_reverse_loopback.json", True)])
def test_udp(name, reverse):
    data = raw(name)
    result = parse_iperf3(fixture(name))
    assert result["ok"] and result["protocol"] == "UDP" and result["reverse"] is reverse
    received = data["end"]["sum_received"]
    assert result["received_gbps"] == gbps(received)
    assert result["jitter_ms"] == received["jitter_ms"]
    assert result["lost_packets"] == received["lost_packets"] and result["packets"] == received["packets"]
    assert result["lost_percent"] == received["lost_percent"]
    assert result["retransmits"] is None
    assert result["target_bitrate"] == 100000000


def test_udp_old_format_with_sum_only():
    # iperf3 before 3.5 or so printed only end.sum for UDP: built from the real file.
    data = raw("udp_loopback.json")
    old = {"start": data["start"], "intervals": data["intervals"],
           "end": {"streams": data["end"]["streams"], "sum": data["end"]["sum"]}}
    result = parse_iperf3(json.dumps(old))
    assert result["ok"] and result["sent_gbps"] == result["received_gbps"] == gbps(data["end"]["sum"])
    assert result["jitter_ms"] == data["end"]["sum"]["jitter_ms"]


def test_server_side():
    data = raw("server_side_tcp_loopback.json")
    result = parse_iperf3(fixture("server_side_tcp_loopback.json"))
    assert result["ok"] and result["role"] == "server"
    assert result["received_gbps"] == gbps(data["end"]["sum_received"])
    assert result["remote_host"] == data["start"]["accepted_connection"]["host"]


def test_get_server_output():
    data = raw("tcp_get_server_output_loopback.json")
    assert "server_output_text" in data
    result = parse_iperf3(fixture("tcp_get_server_output_loopback.json"))
    assert result["ok"] and result["received_gbps"] == gbps(data["end"]["sum_received"])


def test_connection_refused():
    result = parse_iperf3(fixture("error_connection_refused.json"))
    assert result["ok"] is False
    assert [e["code"] for e in result["errors"]] == ["connection_refused"]
    assert result["errors"][0]["message"] == "unable to connect to server: Connection refused"
    assert result["errors"][0]["cause"] and result["errors"][0]["fix"]
    assert result["sent_gbps"] is None and result["received_gbps"] is None


def test_server_busy():
    result = parse_iperf3(fixture("error_server_busy.json"))
    assert [e["code"] for e in result["errors"]] == ["server_busy"]
    assert not result["ok"]


def test_text_around_json_and_merged_stderr():
    text = ("warning: Report format (-f) flag ignored with JSON output\n[1,0]<stdout>:noise\n"
            + fixture("tcp_loopback.json") + "\nConnection to host closed.\n")
    result = parse_iperf3(text)
    assert result["ok"] and result["received_gbps"] == gbps(raw("tcp_loopback.json")["end"]["sum_received"])
    assert result["warnings"] == ["Report format (-f) flag ignored with JSON output"]
    merged = fixture("error_connection_refused.json") + "\niperf3: error - unable to connect to server: Connection refused\n"
    assert [e["code"] for e in parse_iperf3(merged)["errors"]] == ["connection_refused"]


def test_concatenated_objects_take_the_last_complete():
    text = fixture("tcp_loopback.json") + fixture("udp_loopback.json") + fixture("tcp_reverse_loopback.json")[:700]
    result = parse_iperf3(text)
    assert result["protocol"] == "UDP" and result["ok"]
    assert any("incomplete JSON" in w for w in result["warnings"])


def test_truncated_json():
    text = fixture("tcp_loopback.json")
    for cut in (1, 40, len(text) // 2, len(text) - 3):
        result = parse_iperf3(text[:cut])
        assert result["ok"] is False
        assert result["errors"][0]["code"] == "truncated_json", cut
    # The error string survives truncation of the rest.
    error_text = fixture("error_connection_refused.json")
    cut = error_text.index("Connection refused") + len("Connection refused") + 1  # just after the closing quote
    result = parse_iperf3(error_text[:cut])
    assert [e["code"] for e in result["errors"]] == ["truncated_json", "connection_refused"]
    result = parse_iperf3(error_text[:cut - 10])  # inside the error string: nothing to salvage
    assert [e["code"] for e in result["errors"]] == ["truncated_json"]


def test_json_stream_events():
    data = raw("tcp_loopback.json")
    lines = [json.dumps({"event": "start", "data": data["start"]})]
    lines += [json.dumps({"event": "interval", "data": i}) for i in data["intervals"]]
    lines.append(json.dumps({"event": "end", "data": data["end"]}))
    result = parse_iperf3("\n".join(lines))
    assert result["ok"] and result["sent_gbps"] == gbps(data["end"]["sum_sent"])
    assert len(result["interval_gbps"]) == len(data["intervals"])


@pytest.mark.parametrize("text,code", [
    ("", "no_output"),
    (None, "no_output"),
    ("Connecting to host 10.0.0.2, port 5201\n", "invalid_json"),
    ("iperf3: error - unable to connect to server: No route to host\n", "no_route"),
    ("iperf3: unrecognized option '--bidir'\n", "bad_option"),
    ("iperf3: parameter error - invalid number of parallel streams (min = 1, max = 128)\n", "bad_option"),
    ("iperf3: the client has unexpectedly closed the connection\n", "control_closed"),
    ('{"start": {}, "intervals": [], "end": {}, "error": "the client has unexpectedly closed the connection"}',
     "control_closed"),
    ('{"start": {}, "intervals": [], "end": {}}', "no_results"),
])
def test_error_cases(text, code):
    result = parse_iperf3(text)
    assert result["ok"] is False
    assert result["errors"][0]["code"] == code


def test_classify_messages():
    assert classify("unable to connect to server: Connection timed out") == "connect_timeout"
    assert classify("unable to start listener for connections: Address already in use") == "listen_failed"
    assert classify("control socket has closed unexpectedly") == "control_closed"
    assert classify("unable to resolve host: Name or service not known") == "resolve_failed"
    assert classify("stream socket has closed unexpectedly") == "control_closed"
    assert classify("unable to receive control message - port may not be available, the other side may have "
                    "stopped running, etc.") == "control_closed"
    assert classify("test authorization failed") == "auth_failed"
    assert classify("something new") == "unknown"


def test_bare_iperf3_line_is_an_error_only_when_iperf3_is_known_to_print_it():
    assert parse_iperf3("iperf3: the client has terminated\n")["errors"][0]["code"] == "control_closed"
    chatter = parse_iperf3("iperf3: starting the test on port 5201\n")
    assert [e["code"] for e in chatter["errors"]] == ["invalid_json"]


def test_bytes_input():
    assert parse_iperf3(fixture("tcp_loopback.json").encode("utf-8"))["ok"]


def _free_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 is not installed")
def test_live_iperf3_on_loopback():
    """Run the real iperf3 once on loopback and parse what it prints now."""
    port = str(_free_port())
    server = subprocess.Popen(["iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", port],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        proc = None
        deadline = time.monotonic() + 120     # only bounds the wait for the server to listen
        while True:
            proc = subprocess.run(["iperf3", "-J", "-c", "127.0.0.1", "-p", port, "-t", "1"],
                                  capture_output=True, text=True, timeout=120, check=False)
            result = parse_iperf3(proc.stdout + proc.stderr)
            if not any(e["code"] == "connection_refused" for e in result["errors"]) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert result["ok"], result["errors"]
        assert result["received_gbps"] > 0 and result["protocol"] == "TCP"
        assert result["remote_port"] == int(port)
    finally:
        server.kill()
        server.wait(timeout=10)


# --- interrupted runs, noise in front of the JSON, truncation ---------------------------------------
# The four error_*interrupted*/error_*_side_* files are real iperf 3.12 outputs on loopback: the client
# or the server got SIGINT (Ctrl-C) during a 10 s test (see README.md).

@pytest.mark.parametrize("name", ["error_interrupted_client_sigint.json", "error_interrupted_server_sigint.json"])
def test_the_interrupted_side_says_interrupted(name):
    data = raw(name)
    assert data["error"].startswith("interrupt - the ")
    result = parse_iperf3(fixture(name))
    assert [e["code"] for e in result["errors"]] == ["interrupted"]
    assert result["errors"][0]["message"] == data["error"]
    assert result["ok"] is False
    # the partial totals are still read
    assert result["sent_gbps"] == gbps(data["end"]["sum_sent"])


@pytest.mark.parametrize("name", ["error_server_side_client_interrupted.json", "error_client_side_server_interrupted.json"])
def test_the_peer_of_an_interrupted_side_says_the_connection_closed(name):
    data = raw(name)
    assert not data["error"].startswith("interrupt")
    result = parse_iperf3(fixture(name))
    assert [e["code"] for e in result["errors"]] == ["control_closed"]
    assert result["ok"] is False


@pytest.mark.parametrize("message", ["interrupt - the client has terminated", "interrupt - the server has terminated",
                                     "iperf3: interrupt - the client has terminated"])
def test_interrupt_messages_classify_as_interrupted(message):
    assert classify(message) == "interrupted"
    # iperf3 without -J prints it as "iperf3: interrupt - ..." (a text-mode error line)
    text = message if message.startswith("iperf3:") else "iperf3: " + message
    assert [e["code"] for e in parse_iperf3(text + "\n")["errors"]] == ["interrupted"]


NOISE_PREFIXES = [
    "^C",                                                   # the terminal's echo of Ctrl-C, same line
    "^C\n",
    "user@node1:~$ iperf3 -J -c 10.0.0.2 -t 10\n",
    "user@node1:~$ ",                                       # the JSON right behind a prompt
    "Warning: Permanently added 'node2' (ED25519) to the list of known hosts.\nWelcome to node2 {banner}\n",
    "[1,0]<stdout>: starting\n{\n",                         # a stray brace line before the real object
]


@pytest.mark.parametrize("prefix", NOISE_PREFIXES)
def test_json_behind_noise_is_found(prefix):
    name = "error_interrupted_client_sigint.json"
    clean = parse_iperf3(fixture(name))
    result = parse_iperf3(prefix + fixture(name))
    assert [e["code"] for e in result["errors"]] == ["interrupted"]
    for key in ("sent_gbps", "received_gbps", "retransmits", "interval_gbps", "remote_port"):
        assert result[key] == clean[key], key
    ok = parse_iperf3(prefix + fixture("tcp_loopback.json"))
    assert ok["ok"] is True and ok["sent_gbps"] == gbps(raw("tcp_loopback.json")["end"]["sum_sent"])


@pytest.mark.parametrize("prefix", ["", "^C", "user@node1:~$ ", "banner line\n"])
@pytest.mark.parametrize("suffix", ["", "\nConnection to node2 closed.\n"])
def test_json_cut_anywhere_is_truncated_not_invalid(prefix, suffix):
    text = fixture("error_interrupted_client_sigint.json")
    for cut in sorted(set([1, 2, 3, 17, 100, len(text) // 3, len(text) // 2, len(text) - 2])
                      | set(range(1, len(text) - 1, 97))):
        result = parse_iperf3(prefix + text[:cut] + suffix)
        assert result["ok"] is False
        assert result["errors"][0]["code"] == "truncated_json", (prefix, cut, suffix)


def test_the_json_scan_is_linear_counted_in_decoded_characters(monkeypatch):
    """Linearity without a clock: the characters handed to the JSON decoder grow ~10x for a 10x
    larger input (a rescan per failed start would make it ~100x), and the real object is still found."""
    from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers import text as text_utils
    decoded = []
    real = text_utils._DECODER

    class Counting(object):
        def raw_decode(self, chunk):
            decoded.append(len(chunk))
            return real.raw_decode(chunk)

    monkeypatch.setattr(text_utils, "_DECODER", Counting())
    body = fixture("tcp_loopback.json")
    expected = gbps(raw("tcp_loopback.json")["end"]["sum_sent"])

    def work(text):
        decoded[:] = []
        result = parse_iperf3(text)
        return result, sum(decoded)

    for junk in ("{\n", '{"a": 1,\n', "{ }\n", '{"a": "\n', "^C{ x\n"):
        small, small_work = work(junk * 2000 + body)
        large, large_work = work(junk * 20000 + body)
        assert small_work > 0 and small["ok"] is True and large["ok"] is True and large["sent_gbps"] == expected, junk
        assert large_work <= 12 * small_work, (junk, small_work, large_work)

    data = json.loads(body)
    data["intervals"] = data["intervals"] * 300
    small_text = json.dumps(data, indent="\t")
    data["intervals"] = data["intervals"] * 10
    large_text = json.dumps(data, indent="\t")
    for cut in (0, 10):
        small, small_work = work(small_text[:len(small_text) - cut])
        large, large_work = work(large_text[:len(large_text) - cut])
        assert (small["ok"], large["ok"]) == ((True, True) if cut == 0 else (False, False))
        assert large_work <= 12 * small_work and large_work <= 4 * len(large_text)


def test_deeply_nested_junk_is_an_error_not_an_exception():
    for junk in ("[" * 100000, "{" * 100000, '{"a": ' * 100000, '{"a":\n' * 50000):
        result = parse_iperf3(junk)
        assert result["ok"] is False
        assert result["errors"][0]["code"] in ("truncated_json", "invalid_json")
