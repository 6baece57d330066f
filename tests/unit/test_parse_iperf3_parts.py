# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_iperf3, part by part: what it decides on the shapes an operator meets (issue mut34b: each test pins a
behaviour a one-line mistake in parsers/parse_iperf3.py would change)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers import parse_iperf3 as parse_iperf3_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_iperf3 import classify, parse_iperf3

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "iperf3")


def loopback(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return json.load(handle)


def codes(result):
    return [error["code"] for error in result["errors"]]


def test_an_interrupted_side_is_interrupted_before_its_terminated_words():
    assert classify("interrupt - the client has terminated") == "interrupted"
    assert classify("the client has terminated") == "control_closed"


def with_hosts(doc, local="10.0.0.1", remote="10.0.0.2", local_port=51204, remote_port=5299):
    """A loopback capture as two hosts see it: every address and port differs, so a mix-up shows."""
    doc["start"]["connected"][0].update(local_host=local, local_port=local_port, remote_host=remote,
                                        remote_port=remote_port)
    if "connecting_to" in doc["start"]:
        doc["start"]["connecting_to"].update(host=remote, port=remote_port)
    return doc


def gb(block):
    return round(block["bits_per_second"] / 1e9, 6)


def test_blank_output_is_no_output_and_every_field_empty():
    result = parse_iperf3(" \n\t\n")
    assert result == {
        "ok": False, "sent_gbps": None, "received_gbps": None, "retransmits": None,
        "errors": [result["errors"][0]], "warnings": [], "protocol": None, "streams": None, "duration_s": None,
        "reverse": None, "bidirectional": None, "role": None, "remote_host": None, "remote_port": None,
        "local_host": None, "sent_bytes": None, "received_bytes": None, "bidir_reverse": None, "jitter_ms": None,
        "lost_packets": None, "packets": None, "lost_percent": None, "cpu_host_percent": None,
        "cpu_remote_percent": None, "cpu_utilization_percent": None, "interval_gbps": [], "version": None,
        "system_info": None, "timestamp": None, "sender_tcp_congestion": None, "receiver_tcp_congestion": None,
    }
    assert codes(result) == ["no_output"]
    assert result["errors"][0]["message"] == "no output"


def test_a_tcp_client_result_reads_every_field_from_its_place():
    doc = with_hosts(loopback("tcp_loopback.json"))
    doc["end"]["sum_received"]["bytes"] = doc["end"]["sum_sent"]["bytes"] - 4096
    doc["end"]["sum_received"]["bits_per_second"] = doc["end"]["sum_sent"]["bits_per_second"] * 0.75
    doc["start"]["test_start"].update(num_streams=3, duration=7, omit=2, blksize=65536, target_bitrate=1000)
    doc["end"].update(sender_tcp_congestion="cubic", receiver_tcp_congestion="bbr")
    result = parse_iperf3(json.dumps(doc))
    sums = doc["end"]
    assert result["ok"] is True and result["errors"] == [] and result["warnings"] == []
    assert (result["sent_gbps"], result["received_gbps"]) == (gb(sums["sum_sent"]), gb(sums["sum_received"]))
    assert (result["sent_bytes"], result["received_bytes"]) == (sums["sum_sent"]["bytes"], sums["sum_received"]["bytes"])
    assert result["retransmits"] == 10
    assert (result["protocol"], result["streams"], result["duration_s"]) == ("TCP", 3, 7.0)
    assert (result["omit_s"], result["blksize"], result["target_bitrate"]) == (2.0, 65536, 1000)
    assert (result["reverse"], result["bidirectional"], result["bidir_reverse"]) == (False, False, None)
    assert (result["role"], result["local_host"], result["remote_host"], result["remote_port"]) == (
        "client", "10.0.0.1", "10.0.0.2", 5299)
    assert result["version"] == "iperf 3.12"
    assert result["system_info"] == doc["start"]["system_info"]
    assert result["timestamp"] == "Sat, 21 Nov 2026 19:55:50 GMT"
    assert (result["sender_tcp_congestion"], result["receiver_tcp_congestion"]) == ("cubic", "bbr")
    cpu = sums["cpu_utilization_percent"]
    assert result["cpu_utilization_percent"] == cpu
    assert (result["cpu_host_percent"], result["cpu_remote_percent"]) == (cpu["host_total"], cpu["remote_total"])
    assert result["interval_gbps"] == [gb(i["sum"]) for i in doc["intervals"]]
    assert (result["jitter_ms"], result["lost_packets"], result["packets"], result["lost_percent"]) == (None,) * 4


def test_a_reverse_run_says_so():
    doc = loopback("tcp_reverse_loopback.json")
    assert doc["start"]["test_start"]["reverse"] == 1
    assert parse_iperf3(json.dumps(doc))["reverse"] is True
    doc["start"]["test_start"]["reverse"] = "yes"
    assert parse_iperf3(json.dumps(doc))["reverse"] is False
    del doc["start"]["test_start"]["reverse"]
    assert parse_iperf3(json.dumps(doc))["reverse"] is None


def test_the_server_side_names_its_client_from_the_accepted_connection():
    doc = loopback("server_side_tcp_loopback.json")
    doc["start"]["accepted_connection"].update(host="10.0.0.9", port=40000)
    doc["start"]["connected"][0].update(local_host="10.0.0.2", remote_host="10.0.0.8", remote_port=40001)
    result = parse_iperf3(json.dumps(doc))
    assert (result["role"], result["remote_host"], result["remote_port"], result["local_host"]) == (
        "server", "10.0.0.9", 40000, "10.0.0.2")


def test_without_a_peer_block_the_first_connection_names_the_remote_and_no_role():
    doc = with_hosts(loopback("tcp_loopback.json"))
    del doc["start"]["connecting_to"]
    doc["start"]["connected"].append({"local_host": "10.0.0.5", "remote_host": "10.0.0.6", "remote_port": 1})
    result = parse_iperf3(json.dumps(doc))
    assert (result["role"], result["remote_host"], result["remote_port"], result["local_host"]) == (
        None, "10.0.0.2", 5299, "10.0.0.1")


def test_a_peer_block_without_host_takes_the_host_of_the_first_connection():
    doc = with_hosts(loopback("tcp_loopback.json"), remote_port=6000)
    doc["start"]["connecting_to"] = {"port": 5299}
    result = parse_iperf3(json.dumps(doc))
    assert (result["role"], result["remote_host"], result["remote_port"]) == ("client", "10.0.0.2", 6000)


def test_no_connection_list_leaves_the_hosts_unknown():
    doc = loopback("tcp_loopback.json")
    del doc["start"]["connecting_to"]
    for connected in ([], None, "127.0.0.1"):
        doc["start"]["connected"] = connected
        result = parse_iperf3(json.dumps(doc))
        assert (result["role"], result["remote_host"], result["local_host"], result["remote_port"]) == (None,) * 4
        assert result["ok"] is True


def test_fields_of_the_wrong_json_type_read_as_none():
    doc = loopback("tcp_loopback.json")
    doc["start"].update(version=True, system_info={"kernel": "6.1"}, timestamp="yesterday")
    doc["start"]["test_start"]["protocol"] = ["TCP"]
    doc["end"]["sender_tcp_congestion"] = None
    doc["end"]["cpu_utilization_percent"] = [97.9]
    result = parse_iperf3(json.dumps(doc))
    assert (result["version"], result["system_info"], result["timestamp"], result["protocol"]) == (None,) * 4
    assert result["sender_tcp_congestion"] is None
    assert (result["cpu_utilization_percent"], result["cpu_host_percent"], result["cpu_remote_percent"]) == (None,) * 3
    assert result["ok"] is True


def test_a_number_where_text_is_expected_reads_as_its_text():
    doc = loopback("tcp_loopback.json")
    doc["start"]["version"] = 3.12
    doc["start"]["timestamp"]["time"] = 1795290950
    assert (parse_iperf3(json.dumps(doc))["version"], parse_iperf3(json.dumps(doc))["timestamp"]) == (
        "3.12", "1795290950")


def test_udp_reads_the_receivers_jitter_and_loss():
    doc = loopback("udp_loopback.json")
    doc["end"]["sum"].update(jitter_ms=9.5, lost_packets=99, packets=999, lost_percent=9.9)
    doc["end"]["sum_received"].update(jitter_ms=0.25, lost_packets=3, packets=382, lost_percent=0.78)
    result = parse_iperf3(json.dumps(doc))
    assert (result["jitter_ms"], result["lost_packets"], result["packets"], result["lost_percent"]) == (
        0.25, 3, 382, 0.78)
    assert result["protocol"] == "UDP" and result["retransmits"] is None
    assert result["received_gbps"] == gb(doc["end"]["sum_received"])


def test_old_udp_with_only_an_end_sum_reads_it_for_both_directions():
    doc = loopback("udp_loopback.json")
    del doc["end"]["sum_sent"]
    del doc["end"]["sum_received"]
    doc["end"]["sum"].update(jitter_ms=0.5, lost_packets=4, packets=400, lost_percent=1.0)
    result = parse_iperf3(json.dumps(doc))
    assert result["sent_gbps"] == result["received_gbps"] == gb(doc["end"]["sum"])
    assert result["sent_bytes"] == result["received_bytes"] == doc["end"]["sum"]["bytes"]
    assert (result["jitter_ms"], result["lost_packets"], result["packets"], result["lost_percent"]) == (0.5, 4, 400, 1.0)


def test_udp_whose_receiver_block_lacks_jitter_reads_the_end_sum():
    doc = loopback("udp_loopback.json")
    for key in ("jitter_ms", "lost_packets", "packets", "lost_percent"):
        del doc["end"]["sum_received"][key]
    doc["end"]["sum"].update(jitter_ms=0.5, lost_packets=4, packets=400, lost_percent=1.0)
    result = parse_iperf3(json.dumps(doc))
    assert (result["jitter_ms"], result["lost_packets"], result["packets"], result["lost_percent"]) == (0.5, 4, 400, 1.0)


def test_a_jitter_in_the_receivers_block_is_read_whatever_the_protocol_says():
    doc = loopback("udp_loopback.json")
    doc["start"]["test_start"]["protocol"] = "SCTP"
    doc["end"]["sum_received"]["jitter_ms"] = 0.125
    assert parse_iperf3(json.dumps(doc))["jitter_ms"] == 0.125
    tcp = loopback("tcp_loopback.json")
    assert parse_iperf3(json.dumps(tcp))["jitter_ms"] is None


def test_only_a_sender_block_reads_the_sent_side():
    doc = loopback("tcp_loopback.json")
    del doc["end"]["sum_received"]
    result = parse_iperf3(json.dumps(doc))
    assert result["sent_gbps"] == gb(doc["end"]["sum_sent"]) and result["received_gbps"] is None
    assert result["received_bytes"] is None and result["sent_bytes"] == doc["end"]["sum_sent"]["bytes"]
    assert result["ok"] is True


def test_only_a_receiver_block_reads_the_received_side():
    doc = loopback("tcp_loopback.json")
    del doc["end"]["sum_sent"]
    result = parse_iperf3(json.dumps(doc))
    assert result["received_gbps"] == gb(doc["end"]["sum_received"]) and result["sent_gbps"] is None
    assert (result["sent_bytes"], result["retransmits"]) == (None, None)
    assert result["ok"] is True


def test_a_sender_without_retransmits_has_none_not_zero():
    doc = loopback("tcp_loopback.json")
    del doc["end"]["sum_sent"]["retransmits"]
    assert parse_iperf3(json.dumps(doc))["retransmits"] is None
    doc["end"]["sum_sent"]["retransmits"] = 0
    assert parse_iperf3(json.dumps(doc))["retransmits"] == 0


def test_bidir_reads_the_reverse_direction_apart():
    doc = loopback("tcp_bidir_loopback.json")
    end = doc["end"]
    end["sum_sent_bidir_reverse"].update(retransmits=7, bytes=1000)
    end["sum_received_bidir_reverse"]["bytes"] = 900
    result = parse_iperf3(json.dumps(doc))
    assert result["bidirectional"] is True
    assert result["bidir_reverse"] == {
        "sent_gbps": gb(end["sum_sent_bidir_reverse"]), "received_gbps": gb(end["sum_received_bidir_reverse"]),
        "retransmits": 7, "sent_bytes": 1000, "received_bytes": 900}
    assert result["sent_gbps"] == gb(end["sum_sent"]) != result["bidir_reverse"]["sent_gbps"]


def test_bidir_with_one_reverse_block_keeps_the_other_unknown():
    doc = loopback("tcp_bidir_loopback.json")
    del doc["end"]["sum_sent_bidir_reverse"]
    result = parse_iperf3(json.dumps(doc))
    assert result["bidir_reverse"]["sent_gbps"] is None and result["bidir_reverse"]["sent_bytes"] is None
    assert result["bidir_reverse"]["retransmits"] is None
    assert result["bidir_reverse"]["received_gbps"] == gb(doc["end"]["sum_received_bidir_reverse"])
    doc = loopback("tcp_bidir_loopback.json")
    del doc["end"]["sum_received_bidir_reverse"]
    del doc["end"]["sum_sent_bidir_reverse"]["retransmits"]
    result = parse_iperf3(json.dumps(doc))
    assert (result["bidir_reverse"]["received_gbps"], result["bidir_reverse"]["received_bytes"]) == (None, None)
    assert result["bidir_reverse"]["retransmits"] is None
    assert result["bidir_reverse"]["sent_bytes"] == doc["end"]["sum_sent_bidir_reverse"]["bytes"]


def test_bidir_asked_but_no_reverse_totals_yet():
    doc = loopback("tcp_bidir_loopback.json")
    del doc["end"]["sum_sent_bidir_reverse"]
    del doc["end"]["sum_received_bidir_reverse"]
    doc["start"]["test_start"]["bidir"] = 1
    result = parse_iperf3(json.dumps(doc))
    assert result["bidirectional"] is True
    assert result["bidir_reverse"] == dict.fromkeys(
        ("sent_gbps", "received_gbps", "retransmits", "sent_bytes", "received_bytes"))
    doc["start"]["test_start"]["bidir"] = 0
    assert parse_iperf3(json.dumps(doc))["bidirectional"] is False


def test_omitted_warm_up_intervals_and_intervals_without_a_rate_are_left_out():
    doc = loopback("tcp_loopback.json")
    first = doc["intervals"][0]
    warm = json.loads(json.dumps(first))
    warm["sum"].update(omitted=True, bits_per_second=1e9)
    marked = json.loads(json.dumps(first))
    marked["sum"].update(omitted="true", bits_per_second=3e9)
    doc["intervals"] = [warm, first, {"sum": {"bytes": 5}}, "noise", {"streams": []}, marked]
    assert parse_iperf3(json.dumps(doc))["interval_gbps"] == [gb(first["sum"]), 3.0]
    doc["intervals"] = {"sum": first["sum"]}
    assert parse_iperf3(json.dumps(doc))["interval_gbps"] == []


def stream(*events):
    return "\n".join(json.dumps({"event": event, "data": data}) for event, data in events) + "\n"


def test_a_json_stream_assembles_start_intervals_end_and_error():
    doc = with_hosts(loopback("tcp_loopback.json"))
    text = stream(("start", doc["start"]), *[("interval", i) for i in doc["intervals"]] + [
        ("unknown_event", {"end": {"sum_sent": {"bits_per_second": 1}}}),
        ("end", doc["end"]), ("server_output_json", {"end": {}})])
    result = parse_iperf3(text)
    assert result["ok"] is True
    assert (result["remote_host"], result["local_host"]) == ("10.0.0.2", "10.0.0.1")
    assert result["sent_gbps"] == gb(doc["end"]["sum_sent"])
    assert result["interval_gbps"] == [gb(i["sum"]) for i in doc["intervals"]]


def test_a_json_stream_error_is_the_results_error():
    result = parse_iperf3(stream(("start", {"version": "iperf 3.17"}), ("error", "unable to connect to server: "
                                                                                 "No route to host")))
    assert codes(result) == ["no_route"]
    assert result["version"] == "iperf 3.17" and result["ok"] is False


def test_a_json_stream_of_intervals_only_has_rates_but_no_totals():
    doc = loopback("tcp_loopback.json")
    result = parse_iperf3(stream(*[("interval", i) for i in doc["intervals"]]))
    assert result["interval_gbps"] == [gb(i["sum"]) for i in doc["intervals"]]
    assert codes(result) == ["no_results"] and result["ok"] is False


def test_objects_that_are_no_iperf3_result_or_event_are_not_read():
    text = '{"event_count": 3}\n{"data": {"end": {}}}\n{"hosts": ["a", "b"]}\n'
    result = parse_iperf3(text)
    assert codes(result) == ["invalid_json"]
    assert result["errors"][0]["message"].startswith("no iperf3 JSON object in the output: ")
    assert result["errors"][0]["message"].endswith('(its first line: "{\\"event_count\\": 3}")')


def test_a_result_object_is_known_by_any_one_of_its_parts():
    refused = {"error": "unable to connect to server: Connection refused"}
    assert codes(parse_iperf3(json.dumps(refused))) == ["connection_refused"]
    for part in ({"start": {"version": "iperf 3.9"}}, {"end": {}}, {"intervals": []}):
        doc = dict(part, junk=1)
        result = parse_iperf3('{"other": 1}\n' + json.dumps(doc) + '\n{"other": 2}\n')
        assert codes(result) == ["no_results"], part
    for part in ({"start": "x"}, {"end": []}, {"intervals": {}}, {"error": 5}):
        assert codes(parse_iperf3(json.dumps(part))) == ["invalid_json"], part


def test_the_last_complete_result_wins_over_a_stream_before_it():
    first = loopback("tcp_loopback.json")
    second = loopback("tcp_reverse_loopback.json")
    text = stream(("end", first["end"])) + json.dumps(second) + "\n" + json.dumps({"note": "done"}) + "\n"
    result = parse_iperf3(text)
    assert result["sent_gbps"] == gb(second["end"]["sum_sent"]) and result["reverse"] is True


def test_text_mode_errors_outside_the_json_are_kept_unless_the_json_says_the_same():
    doc = loopback("error_connection_refused.json")
    text = "iperf3: error - unable to connect to server: Connection refused\n" + json.dumps(doc)
    assert codes(parse_iperf3(text)) == ["connection_refused"]
    text = "iperf3: error - the server is busy running a test. try again later\n" + json.dumps(doc)
    assert codes(parse_iperf3(text)) == ["connection_refused", "server_busy"]


def test_a_text_error_after_a_good_result_fails_it():
    doc = loopback("tcp_loopback.json")
    result = parse_iperf3(json.dumps(doc) + "\niperf3: error - control socket has closed unexpectedly\n")
    assert codes(result) == ["control_closed"] and result["ok"] is False
    assert result["sent_gbps"] == gb(doc["end"]["sum_sent"])


def test_text_mode_lines_each_read_for_what_they_say():
    text = "\n".join([
        "Connecting to host 10.0.0.2, port 5201",
        "iperf3: error - unable to connect to server: Connection refused",
        "iperf3: unrecognized option -- 'bidir'",
        "warning: Report format (-f) flag ignored with JSON output (-J)",
        "iperf3: the client has unexpectedly closed the connection",
        "iperf3: interrupt - the server has terminated",
        "iperf3: error -   ",
        "iperf3: some words iperf3 does not print",
        "WARNING -  ",
    ])
    result = parse_iperf3(text)
    assert codes(result) == ["connection_refused", "bad_option", "control_closed", "interrupted"]
    assert [e["message"] for e in result["errors"]] == [
        "iperf3: error - unable to connect to server: Connection refused",
        "iperf3: unrecognized option -- 'bidir'",
        "iperf3: the client has unexpectedly closed the connection",
        "iperf3: interrupt - the server has terminated"]
    assert result["warnings"] == ["Report format (-f) flag ignored with JSON output (-J)"]
    assert result["ok"] is False


def test_a_text_error_line_repeated_is_one_error():
    line = "iperf3: error - unable to send control message: Connection reset by peer"
    result = parse_iperf3("\n".join([line, line, "iperf3: error - unable to send control message: Broken pipe"]))
    assert [e["message"] for e in result["errors"]] == [line, "iperf3: error - unable to send control message: Broken pipe"]


def test_text_errors_stop_at_twenty():
    lines = ["iperf3: error - unable to connect to server 10.0.0.%d: Connection refused" % n for n in range(30)]
    options = ["iperf3: invalid option -- '%s'" % c for c in "abcdefghijklmnopqrstuvwxyz"]
    assert len(parse_iperf3("\n".join(lines))["errors"]) == 20
    assert len(parse_iperf3("\n".join(options))["errors"]) == 20
    assert len(parse_iperf3("\n".join(lines[:19] + options))["errors"]) == 20
    assert len(parse_iperf3("\n".join(options[:19] + lines))["errors"]) == 20


def test_a_bare_iperf3_line_is_an_error_only_with_a_known_message():
    assert codes(parse_iperf3("iperf3: Broken pipe\n")) == ["control_closed"]
    result = parse_iperf3("iperf3: starting\niperf3:   \n")
    assert codes(result) == ["invalid_json"]


def test_a_cut_result_is_truncated_and_its_error_still_read():
    text = '{"start": {"connected": []},\n "intervals": [],\n "end": {},\n "error": "unable to connect to server ' \
           '\\"h2\\": No route to host",\n "extra": ['
    result = parse_iperf3(text)
    assert codes(result) == ["truncated_json", "no_route"]
    assert result["errors"][0]["message"] == "iperf3 JSON output is incomplete"
    assert result["errors"][1]["message"] == 'unable to connect to server "h2": No route to host'


def test_a_cut_result_with_a_bad_escape_keeps_the_error_as_printed():
    text = '{"start": {"connected": []}, "error": "bind to \\x0 failed: unable to bind", "end": {'
    result = parse_iperf3(text)
    assert codes(result) == ["truncated_json", "bind_failed"]
    assert result["errors"][1]["message"] == "bind to \\x0 failed: unable to bind"


def test_an_error_string_before_the_cut_object_is_not_its_error():
    text = 'log: "error": "server is busy"\n{"start": {"connected": []}, "intervals": ['
    assert codes(parse_iperf3(text)) == ["truncated_json"]


def test_a_cut_object_after_a_complete_result_is_a_warning():
    doc = loopback("tcp_loopback.json")
    result = parse_iperf3(json.dumps(doc) + '\n{"start": {"connected": [')
    assert result["ok"] is True
    assert result["warnings"] == ["incomplete JSON after the last complete iperf3 object was ignored"]
    result = parse_iperf3('{"start": {"broken": tru}}\n' + json.dumps(doc))
    assert result["ok"] is True and result["warnings"] == []


def test_invalid_json_in_front_is_skipped_and_the_result_behind_it_read():
    doc = loopback("tcp_loopback.json")
    result = parse_iperf3('{"a": nope} {"b": [1, 2,, 3]}\n^C' + json.dumps(doc))
    assert result["ok"] is True and result["sent_gbps"] == gb(doc["end"]["sum_sent"])


def test_two_deeply_nested_junk_lines_are_skipped_and_a_third_or_one_without_a_line_end_ends_the_scan():
    doc = loopback("tcp_loopback.json")
    junk = '{"a": ' * 100000 + "\n"
    assert parse_iperf3(junk * 2 + json.dumps(doc))["ok"] is True
    result = parse_iperf3(junk * 3 + json.dumps(doc))
    assert codes(result) == ["truncated_json"] and result["ok"] is False
    result = parse_iperf3(json.dumps(doc) + "\n" + junk.strip())
    assert result["ok"] is True
    assert result["warnings"] == ["incomplete JSON after the last complete iperf3 object was ignored"]


def test_a_result_with_no_totals_and_no_error_is_no_results():
    doc = loopback("tcp_loopback.json")
    doc["end"] = {"cpu_utilization_percent": doc["end"]["cpu_utilization_percent"]}
    result = parse_iperf3(json.dumps(doc))
    assert codes(result) == ["no_results"] and result["ok"] is False
    assert result["errors"][0]["message"] == "iperf3 JSON has no end-of-test sums"


def test_an_error_with_totals_is_not_ok():
    doc = loopback("tcp_loopback.json")
    doc["error"] = "interrupt - the client has terminated"
    result = parse_iperf3(json.dumps(doc))
    assert codes(result) == ["interrupted"] and result["ok"] is False
    doc["error"] = ""
    assert parse_iperf3(json.dumps(doc))["ok"] is True


def test_a_receiver_that_counted_nothing_is_named():
    doc = loopback("tcp_loopback.json")
    sent = doc["end"]["sum_sent"]["bytes"]
    doc["end"]["sum_received"].update(bytes=0, bits_per_second=0)
    result = parse_iperf3(json.dumps(doc))
    assert result["warnings"] == [
        "the receiver counted 0 bytes of the %d bytes sent (a transfer too short for the receiver's report, or its "
        "report was lost): received_gbps 0 is no measured rate" % sent]
    assert result["received_gbps"] == 0.0
    doc["end"]["sum_sent"]["bytes"] = 0
    assert parse_iperf3(json.dumps(doc))["warnings"] == []


def test_the_reverse_receiver_that_counted_nothing_is_named_too():
    doc = loopback("tcp_bidir_loopback.json")
    doc["end"]["sum_sent_bidir_reverse"]["bytes"] = 4242
    doc["end"]["sum_received_bidir_reverse"]["bytes"] = 0
    warnings = parse_iperf3(json.dumps(doc))["warnings"]
    assert len(warnings) == 1 and "0 bytes of the 4242 bytes sent" in warnings[0]


def test_a_pasted_result_behind_quote_markers_is_read():
    doc = loopback("tcp_loopback.json")
    pasted = "\n".join("> " + line for line in json.dumps(doc, indent=1).splitlines())
    result = parse_iperf3("here is what I got:\n" + pasted + "\n")
    assert result["ok"] is True and result["sent_gbps"] == gb(doc["end"]["sum_sent"])


def test_a_pasted_text_without_a_result_reports_the_text_as_given():
    result = parse_iperf3('> {"hosts": 2}\n> iperf3: error - unable to connect to server: Connection refused\n')
    assert codes(result) == ["connection_refused"]


def test_undecodable_bytes_and_a_word_for_a_number_are_read_not_raised():
    result = parse_iperf3(b'\xff{"start": {"test_start": {"num_streams": "two"}}, "end": {}}')
    assert result["streams"] is None and codes(result) == ["no_results"]


MESSAGES = {
    "interrupted": ["interrupt - the server has terminated", "caught SIGTERM interrupt"],
    "bad_option": ["parameter error - the timeout must be positive", "unrecognized option '--bidir'",
                   "invalid option -- 'z'", "this OS does not support sendfile, not supported"],
    "connection_refused": ["unable to connect to server: Connection refused"],
    "server_busy": ["the server is busy running a test. try again later"],
    "no_route": ["unable to connect to server: No route to host", "unable to connect to server: Network is unreachable",
                 "unable to connect to server: Host is unreachable"],
    "connect_timeout": ["unable to connect to server: Connection timed out",
                        "unable to receive control message - port may not be available: Connection timeout"],
    "resolve_failed": ["unable to resolve host: Name or service not known", "Temporary failure in name resolution",
                       "Unable to resolve hostname", "nodename nor servname provided, or not known"],
    "control_closed": ["control socket has closed unexpectedly", "the client has unexpectedly closed the connection",
                       "stream socket has closed unexpectedly", "unable to send control message: Bad file descriptor",
                       "unable to receive control message: Bad file descriptor", "the server has terminated",
                       "Connection reset by peer", "Broken pipe"],
    "listen_failed": ["unable to start listener for connections: Permission denied", "Address already in use"],
    "bind_failed": ["unable to bind to server socket: Permission denied", "Cannot assign requested address"],
    "auth_failed": ["test authentication failed", "authorization failed"],
    "unknown": ["something else", None],
}


@pytest.mark.parametrize("message, code", [(message, code) for code, messages in MESSAGES.items()
                                           for message in messages])
def test_classify_each_message_iperf3_prints(message, code):
    assert classify(message) == code


def test_a_stream_of_only_the_servers_output_is_a_stream_without_totals():
    assert codes(parse_iperf3(stream(("server_output_json", {"end": {}})))) == ["no_results"]
    assert codes(parse_iperf3(stream(("server_output_text", "Accepted connection")))) == ["invalid_json"]


def test_launcher_json_before_the_stream_events_does_not_stop_them():
    doc = loopback("tcp_loopback.json")
    text = '{"job": "iperf-pair-3", "node": "h1"}\n' + stream(("start", doc["start"]), ("end", doc["end"]))
    result = parse_iperf3(text)
    assert result["ok"] is True and result["sent_gbps"] == gb(doc["end"]["sum_sent"])


def test_the_scan_gives_up_after_its_limit_of_failed_starts(monkeypatch):
    monkeypatch.setattr(parse_iperf3_module, "_MAX_JSON_FAILURES", 3)
    doc = json.dumps(loopback("tcp_loopback.json"))
    assert parse_iperf3('{"a" 1}\n' * 2 + doc)["ok"] is True
    result = parse_iperf3('{"a" 1}\n' * 3 + doc)
    assert codes(result) == ["truncated_json"] and result["ok"] is False


def test_a_result_that_reads_as_is_is_not_replaced_by_a_quoted_one_after_it():
    plain = loopback("tcp_loopback.json")
    quoted = loopback("tcp_reverse_loopback.json")
    text = json.dumps(plain) + "\n" + "\n".join("> " + line for line in json.dumps(quoted, indent=1).splitlines())
    result = parse_iperf3(text)
    assert result["reverse"] is False and result["sent_gbps"] == gb(plain["end"]["sum_sent"])
    assert result["warnings"] == ["incomplete JSON after the last complete iperf3 object was ignored"]


def test_an_iperf3_error_inside_the_json_strings_is_no_text_error():
    doc = loopback("tcp_loopback.json")
    doc["extra_data"] = "iperf3: error - unable to connect to server: Connection refused"
    doc["title"] = "warning: rerun of the h1-h2 pair"
    result = parse_iperf3(json.dumps(doc, indent=1))
    assert result["errors"] == [] and result["warnings"] == [] and result["ok"] is True


def test_text_right_after_the_closing_brace_is_a_line_of_its_own():
    doc = json.dumps(loopback("tcp_loopback.json"))
    result = parse_iperf3("^C" + doc + "warning: Report format (-f) flag ignored with JSON output (-J)\n")
    assert result["warnings"] == ["Report format (-f) flag ignored with JSON output (-J)"]
    result = parse_iperf3("^C" + doc + "iperf3: interrupt - the client has terminated")
    assert codes(result) == ["interrupted"]


def test_a_cut_object_right_behind_the_result_is_warned_about():
    doc = json.dumps(loopback("tcp_loopback.json"))
    result = parse_iperf3(doc + '{"start": {"connected": [')
    assert result["ok"] is True
    assert result["warnings"] == ["incomplete JSON after the last complete iperf3 object was ignored"]


def test_an_iperf3_error_line_with_a_message_no_rule_knows_is_an_unknown_error():
    result = parse_iperf3("iperf3: error - test stopped by the CPU affinity check\n")
    assert codes(result) == ["unknown"]
    assert result["errors"][0]["message"] == "iperf3: error - test stopped by the CPU affinity check"
    assert result["errors"][0]["cause"] == "iperf3 reported an error this parser does not know."


def test_a_parser_failure_is_reported_on_an_empty_result(monkeypatch):
    def broken(_text):
        raise ValueError("boom")
    monkeypatch.setattr(parse_iperf3_module, "_json_in", broken)
    result = parse_iperf3(json.dumps(loopback("tcp_loopback.json")))
    assert result["ok"] is False and result["sent_gbps"] is None and result["warnings"] == []
    assert result["errors"] == [{
        "code": "parser_error", "message": "ValueError: boom",
        "cause": "The parser failed on this text (a bug in commcheck); nothing was read from it.",
        "fix": "Report the raw output to the commcheck maintainers."}]


def test_a_coloured_output_cut_off_is_truncated_and_a_quoted_object_no_result():
    result = parse_iperf3('\x1b[1m{\x1b[0m\n\x1b[1m"start": {\x1b[0m"connected": [],\n"error": "unable to connect to '
                          'server: No route to host",\n"end": {')
    assert codes(result) == ["truncated_json", "no_route"]
    assert codes(parse_iperf3('> {"job": "iperf-pair-3",\n> "node": "h1"}\n')) == ["invalid_json"]
