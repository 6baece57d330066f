# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""perftest / iperf3 argv building and validation, GID choice, verdicts, the side runner."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import re
import shutil
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import cli_grammar
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import iperf3_cmd as ic
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import perftest_cmd as pc
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import side_options
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import side_runner
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import endpoint
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_iperf3 import parse_iperf3
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import parse_perftest
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import HostTransport, controller_gone

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "fixtures", "corpus")
IPERF = os.path.join(HERE, "..", "fixtures", "iperf3")


def corpus(name):
    with open(os.path.join(CORPUS, name)) as handle:
        return handle.read()


# --- argv ------------------------------------------------------------------------

def test_client_bw_argv_full():
    argv = pc.build_argv({"role": "client", "test": "write", "metric": "bw", "device": "mlx5_0", "ib_port": 1,
                          "gid_index": 3, "server": "10.0.0.2", "tcp_port": 18600, "size": 65536,
                          "iterations": 5000, "qps": 4, "bidirectional": True, "rdma_cm": True, "mtu": 4096,
                          "use_cuda": 2, "extra_args": ["-F", "--tclass=106"]})
    assert argv == ["ib_write_bw", "-d", "mlx5_0", "-i", "1", "-x", "3", "-p", "18600", "-s", "65536",
                    "-n", "5000", "-q", "4", "-b", "-R", "-m", "4096", "--use_cuda=2", "--report_gbits",
                    "-F", "--tclass=106", "10.0.0.2"]


def test_server_lat_argv_has_no_bw_only_options_and_no_address():
    argv = pc.build_argv({"role": "server", "test": "read", "metric": "lat", "device": "mlx5_1", "duration": 5,
                          "server": "10.0.0.9", "timeout": 30})
    assert argv == ["ib_read_lat", "-d", "mlx5_1", "-i", "1", "-p", "18515", "-D", "5"]


def test_latency_runs_by_count_with_lat_iterations_and_bandwidth_keeps_its_duration():
    # perftest prints the median and the tail percentiles only by count; by time only the average
    common = {"device": "mlx5_0", "duration": 5, "lat_iterations": 10000, "server": "10.0.0.2", "timeout": 60}
    lat = pc.build_argv(dict(common, role="client", metric="lat"))
    assert lat == ["ib_write_lat", "-d", "mlx5_0", "-i", "1", "-p", "18515", "-n", "10000", "10.0.0.2"]
    assert pc.normalize(dict(common, role="server", metric="lat"))["duration"] is None
    bw = pc.build_argv(dict(common, role="client", metric="bw"))
    assert "-D" in bw and bw[bw.index("-D") + 1] == "5" and "-n" not in bw
    # without lat_iterations a latency test runs as the bandwidth tests do
    assert "-D" in pc.build_argv(dict(common, role="server", metric="lat", lat_iterations=None))
    # lat_iterations replaces iterations too, and is checked like it
    assert pc.normalize({"role": "server", "metric": "lat", "iterations": 50, "lat_iterations": 70})[
        "iterations"] == 70
    with pytest.raises(pc.ArgumentError, match="lat_iterations must be between 5"):
        pc.normalize({"role": "server", "metric": "bw", "lat_iterations": 4})


def test_binary_found_by_a_transport_must_be_a_program():
    for binary in ("bin/ib_write_bw", "-x", "/usr/../bin/ib_write_bw", "ib write"):
        with pytest.raises(pc.ArgumentError, match="binary"):
            pc.build_argv({"role": "server"}, binary=binary)
        with pytest.raises(pc.ArgumentError, match="binary"):
            ic.build_argv({"role": "server"}, binary=binary)


@pytest.mark.parametrize("value,ok", [(0.9, True), (1, True), (0, False), (-0.1, False), (1.5, False),
                                      (float("nan"), False), (float("inf"), False), ("x", False)])
def test_min_fraction(value, ok):
    if ok:
        assert side_options.check_min_fraction(value) == value
    else:
        with pytest.raises(pc.ArgumentError, match="min_fraction"):
            side_options.check_min_fraction(value)


def test_argument_errors_are_option_errors():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError
    assert issubclass(pc.ArgumentError, OptionError) and issubclass(cli_grammar.CliError, OptionError)


def test_all_sizes_and_binary_path():
    argv = pc.build_argv({"role": "client", "test": "send", "metric": "bw", "server": "node-b.example.com",
                          "all_sizes": True}, binary="/usr/bin/ib_send_bw")
    assert argv[0] == "/usr/bin/ib_send_bw" and "-a" in argv and argv[-1] == "node-b.example.com"
    assert "-d" not in argv     # perftest picks the first device


def test_auto_gid_left_out_until_resolved():
    assert "-x" not in pc.build_argv({"role": "server", "gid_index": "auto", "device": "mlx5_0"})
    assert pc.normalize({"role": "server", "gid_index": "AUTO"})["gid_index"] == "auto"
    assert pc.normalize({"role": "server", "gid_index": "7"})["gid_index"] == 7


@pytest.mark.parametrize("params,message", [
    ({"role": "client"}, "server .* is required"),
    ({"role": "client", "server": "10.0.0.1;reboot"}, "shell metacharacter"),
    ({"role": "client", "server": "-oProxyCommand=x"}, "not a host name"),
    ({"role": "client", "server": "a b"}, "shell metacharacter"),
    ({"role": "client", "server": "host_name..bad"}, "not a host name"),
    ({"role": "server", "device": "mlx5_0 -h"}, "shell metacharacter"),
    ({"role": "server", "device": "mlx5/0"}, "not an RDMA device name"),
    ({"role": "server", "device": "$(id)"}, "shell metacharacter"),
    ({"role": "server", "size": 0}, "size must be between 1 and 2147483647"),
    ({"role": "server", "size": 2 ** 31}, "size must be between"),
    ({"role": "server", "iterations": 4}, "iterations must be between 5"),
    ({"role": "server", "iterations": 100000001}, "iterations must be between"),
    ({"role": "server", "qps": 16385}, "qps must be between 1 and 16384"),
    ({"role": "server", "tcp_port": 0}, "tcp_port must be between 1 and 65535"),
    ({"role": "server", "tcp_port": 65536}, "tcp_port must be between"),
    ({"role": "server", "ib_port": 256}, "ib_port must be between 1 and 255"),
    ({"role": "server", "gid_index": 256}, "gid_index must be between 0 and 255"),
    ({"role": "server", "gid_index": "3;ls"}, "shell metacharacter|integer or 'auto'"),
    ({"role": "server", "gid_index": "x"}, "integer or 'auto'"),
    ({"role": "server", "mtu": 1500}, "mtu must be one of"),
    ({"role": "server", "size": 8, "all_sizes": True}, "mutually exclusive"),
    ({"role": "server", "iterations": 100, "duration": 5}, "mutually exclusive"),
    ({"role": "server", "all_sizes": True, "duration": 5}, "all_sizes cannot be combined"),
    ({"role": "server", "test": "atomic", "size": 64}, "atomic tests use a fixed"),
    ({"role": "server", "metric": "lat", "bidirectional": True}, "bandwidth tests only"),
    ({"role": "server", "metric": "lat", "qps": 2}, "bandwidth tests only"),
    ({"role": "server", "duration": 30, "timeout": 30}, "must be longer than duration"),
    ({"role": "server", "extra_args": ["-F", "x;y"]}, "shell metacharacter"),
    ({"role": "server", "extra_args": ["--tclass=1`id`"]}, "shell metacharacter"),
    ({"role": "server", "extra_args": "-F -a"}, "list of separate arguments"),
    ({"role": "server", "extra_args": ["-d", "mlx5_1"]}, "sets device"),
    ({"role": "server", "extra_args": ["--port=1"]}, "sets tcp_port"),
    ({"role": "server", "extra_args": ["--out_json"]}, "has its own option"),
    ({"role": "server", "extra_args": ["é"]}, "characters outside"),
    ({"role": "monitor"}, "role must be one of"),
    ({"role": "server", "test": "multicast"}, "test must be one of"),
    ({"role": "server", "metric": "msgrate"}, "metric must be one of"),
    ({"role": "server", "size": "big"}, "size must be an integer"),
    ({"role": "server", "qps": True}, "qps must be an integer"),
    ({"role": "server", "size": float("inf")}, "size must be an integer"),
    ({"role": "server", "duration": -5}, "duration must be between 1 and 86400, got -5"),
    ({"role": "server", "device": "--help"}, "device '--help' must not start with '-'"),
    ({"role": "server", "device": "a" * 65}, "not an RDMA device name"),
    ({"role": "server", "device": "x" * 5000}, r"device 'x+\.\.\.\(5002 characters\) is longer"),
    ({"role": "server", "peer": "a\x00b"}, "peer .* control character"),
    ({"role": "server", "rail": -1}, "rail must be between 0 and 1023"),
    ({"role": "server", "step": 10001}, "step must be between 0 and 10000"),
    ({"role": "server", "round": -1}, "round must be between 0"),
    ({"role": "server", "expected_gbps": float("nan")}, "expected_gbps nan must be a finite number"),
    ({"role": "server", "expected_gbps": -1}, "expected_gbps -1 must be between 0 and 100000"),
    ({"role": "server", "extra_args": ["-p1"]}, r"'-p1' \(-p\) sets tcp_port"),
    ({"role": "server", "extra_args": ["10.0.0.3"]}, "may not add positional arguments"),
])
def test_invalid_values_fail_before_anything_runs(params, message):
    with pytest.raises(pc.ArgumentError, match=message):
        pc.build_argv(params)


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=12))
def test_no_shell_metacharacter_reaches_an_argv(text):
    """Whatever the device / server / extra arg, an accepted value has no metacharacter."""
    for params in ({"role": "server", "device": text}, {"role": "client", "server": text},
                   {"role": "server", "extra_args": [text]}):
        try:
            argv = pc.build_argv(params)
        except pc.ArgumentError:
            continue
        for token in argv:
            assert not set(token) & side_options.SHELL_META, (params, argv)


@pytest.mark.parametrize("address,ok", [
    ("10.0.0.1", True), ("fd00::2", True), ("node-b", True), ("gpu-01.rack2.example.com", True),
    ("-x", False), ("", False), ("a..b", False), ("a" * 64, False), ("node b", False), (None, False),
])
def test_valid_address(address, ok):
    assert side_options.valid_address(address) is ok


# --- GID choice -------------------------------------------------------------------

def test_auto_gid_prefers_roce_v2_ipv4():
    entries = [
        {"index": 0, "gid": "fe80:0000:0000:0000:0e42:a1ff:fe00:0001", "type": "IB/RoCE v1"},
        {"index": 1, "gid": "fe80:0000:0000:0000:0e42:a1ff:fe00:0001", "type": "RoCE v2"},
        {"index": 2, "gid": "0000:0000:0000:0000:0000:ffff:0a00:0001", "type": "IB/RoCE v1"},
        {"index": 3, "gid": "0000:0000:0000:0000:0000:ffff:0a00:0001", "type": "RoCE v2"},
        {"index": 4, "gid": "fd00:0000:0000:0000:0000:0000:0000:0002", "type": "RoCE v2"},
    ]
    assert endpoint.port_gid_index(entries) == 3
    assert endpoint.port_gid_index(entries[:2] + entries[4:]) == 4
    assert endpoint.port_gid_index(entries[:2]) == 1
    assert endpoint.port_gid_index(entries[:1]) is None
    assert endpoint.port_gid_index([{"index": 5, "gid": "0000:0000:0000:0000:0000:0000:0000:0000", "type": "RoCE v2"}]) is None


def test_auto_and_discovery_choose_the_same_gid_when_a_vlan_gid_comes_first():
    """A VLAN on the port has its RoCE v2 GID at index 3, the port's own address at 5: both pick 5."""
    from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.gid import select_gid

    def entry(index, gid, kind, netdev):
        return {"index": index, "gid": gid, "type": kind, "netdev": netdev}
    entries = [entry(0, "fe80:0000:0000:0000:0e42:a1ff:fe00:0001", "IB/RoCE v1", "ens1f0"),
               entry(1, "fe80:0000:0000:0000:0e42:a1ff:fe00:0001", "RoCE v2", "ens1f0"),
               entry(2, "0000:0000:0000:0000:0000:ffff:c0a8:6405", "IB/RoCE v1", "ens1f0.100"),
               entry(3, "0000:0000:0000:0000:0000:ffff:c0a8:6405", "RoCE v2", "ens1f0.100"),
               entry(4, "0000:0000:0000:0000:0000:ffff:0a00:0005", "IB/RoCE v1", "ens1f0"),
               entry(5, "0000:0000:0000:0000:0000:ffff:0a00:0005", "RoCE v2", "ens1f0")]
    assert select_gid(entries, "Ethernet", netdev="ens1f0")["gid_index"] == 5
    assert endpoint.port_gid_index(entries, netdev="ens1f0") == 5
    files = {"/s/class/infiniband/mlx5_0/ports/1/link_layer": "Ethernet\n"}
    for e in entries:
        files["/s/class/infiniband/mlx5_0/ports/1/gids/%d" % e["index"]] = e["gid"] + "\n"
        files["/s/class/infiniband/mlx5_0/ports/1/gid_attrs/types/%d" % e["index"]] = e["type"] + "\n"
        files["/s/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/%d" % e["index"]] = e["netdev"] + "\n"
    assert endpoint.gid_index_from_sysfs(files.get, "/s", "mlx5_0", 1) == (True, 5)
    facts = {"devices": [{"name": "mlx5_0", "ports": [{"port": 1, "link_layer": "Ethernet", "netdev": "ens1f0",
                                                       "gid_index": None, "gids": entries}]}]}
    assert endpoint.gid_index_from_facts(facts, "mlx5_0", 1) == (True, 5)


def test_gid_index_from_facts():
    facts = {"devices": [{"name": "mlx5_0", "ports": [{"port": 1, "link_layer": "Ethernet", "gid_index": 7}]},
                         {"name": "mlx5_1", "ports": [{"port": 1, "link_layer": "InfiniBand", "gid_index": None}]},
                         {"name": "mlx5_2", "ports": [{"port": 1, "link_layer": "Ethernet", "gid_index": None,
                                                       "gids": [{"index": 3, "gid": "::ffff:10.0.0.1",
                                                                 "type": "RoCE v2"}]}]}]}
    assert endpoint.gid_index_from_facts(facts, "mlx5_0", 1) == (True, 7)
    assert endpoint.gid_index_from_facts(facts, "mlx5_1", 1) == (True, None)
    assert endpoint.gid_index_from_facts(facts, "mlx5_2", 1) == (True, 3)
    assert endpoint.gid_index_from_facts(facts, "mlx5_0", 2) == (False, None)
    assert endpoint.gid_index_from_facts(None, "mlx5_0", 1) == (False, None)


def test_gid_index_from_emulated_sysfs(tmp_path):
    sys.path.insert(0, os.path.join(HERE, "..", "lab"))
    try:
        import sysfs_tree  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.pop(0)
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [
        {"name": "mlx5_0", "ports": [{"port": 1, "netdev": "ens1f0np0", "ipv4": "10.7.0.3"}]},
        {"name": "mlx5_1", "ports": [{"port": 1, "link_layer": "InfiniBand"}]},
    ])
    read = HostTransport().read_file
    assert endpoint.gid_index_from_sysfs(read, root, "mlx5_0", 1) == (True, 3)
    assert endpoint.gid_index_from_sysfs(read, root, "mlx5_1", 1) == (True, None)
    assert endpoint.gid_index_from_sysfs(read, root, "mlx5_9", 1) == (False, None)


# --- verdicts from real outputs ---------------------------------------------------

def _verdict(side, text, rc=0, timed_out=False, **extra):
    result = dict({"rc": rc, "stdout": text, "stderr": "", "timed_out": timed_out}, **extra)
    return pc.side_verdict(side, result, parse_perftest(text))


def test_verdict_pass_and_fail_against_link_rate():
    text = corpus("perftest_bw/ib_write_bw_ndr_gbits_cpufreq_warn.txt")   # 392.34 Gb/s
    client = {"role": "client", "metric": "bw"}
    assert _verdict(dict(client, expected_gbps=400), text)["verdict"] == "pass"
    failed = _verdict(dict(client, expected_gbps=800), text)
    assert failed["verdict"] == "fail"
    assert "392.34 Gb/s is below 90% of the expected 800.00 Gb/s" in failed["errors"][0]["message"]
    assert failed["fix"]
    # bidirectional doubles the expectation
    assert _verdict(dict(client, expected_gbps=400, bidirectional=True), text)["verdict"] == "fail"
    assert pc.summarize(parse_perftest(text)) == {"bw_gbps": 392.34, "bw_peak_gbps": 392.38, "bytes": 65536}


def test_verdict_errors_come_from_the_parser():
    no_dev = _verdict({"role": "client", "metric": "bw"}, corpus("perftest_bw/err_unable_to_find_device_k8s.txt"),
                      rc=1)
    assert no_dev["verdict"] == "error" and no_dev["errors"][0]["code"] == "no_device"
    assert no_dev["cause"] and no_dev["fix"]
    conn = _verdict({"role": "client", "metric": "bw"}, corpus("perftest_bw/err_couldnt_connect_socket.txt"), rc=1)
    assert conn["verdict"] == "error" and "connect_failed" in [e["code"] for e in conn["errors"]]


def test_output_too_large_is_an_error_when_stopped_or_without_rows_and_judged_when_whole():
    client = {"role": "client", "metric": "bw", "expected_gbps": 400}
    text = corpus("perftest_bw/ib_write_bw_ndr_gbits_cpufreq_warn.txt")   # 392.34 Gb/s: passes when judged
    sizes = {"output_bytes": {"stdout": 70000000, "stderr": 12}}
    # stopped at the limit: an error first, whatever rows were read, with the parser's own errors after it
    stopped = _verdict(client, text, output_too_large=True, output_stopped=True, **sizes)
    assert stopped["verdict"] == "error" and [e["code"] for e in stopped["errors"]] == ["output_too_large"]
    assert "70000000 bytes on stdout and 12 on stderr; it was stopped there" in stopped["cause"]
    assert stopped["fix"]
    no_dev = corpus("perftest_bw/err_unable_to_find_device_k8s.txt")
    no_rows = _verdict(client, no_dev, rc=1, output_too_large=True, **sizes)
    assert [e["code"] for e in no_rows["errors"]] == ["output_too_large", "no_device"]
    assert "it was stopped" not in no_rows["cause"]
    # too large but run to its end with its rows: judged on them like any other side
    assert _verdict(client, text, output_too_large=True, **sizes)["verdict"] == "pass"


def test_verdict_timeouts_and_missing_tool_and_unknown_option():
    waiting = corpus("perftest_bw/ib_write_bw_server_waiting_only.txt")
    server = _verdict({"role": "server", "metric": "bw"}, waiting, rc=None, timed_out=True)
    assert server["verdict"] == "error" and server["errors"][0]["code"] == "server_no_client"
    client = _verdict({"role": "client", "metric": "bw"}, "", rc=None, timed_out=True, connect_failed=True)
    assert client["errors"][0]["code"] == "connect_failed"
    slow = _verdict({"role": "client", "metric": "bw"}, "", rc=None, timed_out=True)
    assert slow["errors"][0]["code"] == "client_timeout"
    missing = _verdict({"role": "client"}, "", rc=None, tool_missing=True)
    assert missing["errors"][0]["code"] == "tool_missing"
    bad = _verdict({"role": "client"}, "ib_write_bw: unrecognized option '--use_cuda=0'\n Invalid Command or flag.\n",
                   rc=1)
    assert bad["errors"][0]["code"] == "invalid_option" and "CUDA" in bad["cause"]
    server_ok = _verdict({"role": "server", "metric": "lat"}, corpus("perftest_lat/ib_read_lat_server_mlx4_fdr.txt"))
    assert server_ok["verdict"] == "pass"
    no_rows = _verdict({"role": "client", "metric": "lat"}, corpus("perftest_lat/ib_read_lat_server_mlx4_fdr.txt"))
    assert no_rows["verdict"] == "error" and no_rows["errors"][0]["code"] == "no_rows"


def test_summarize_latency_is_the_median_of_the_smallest_size():
    # -a: 2, 4, 8 ... bytes; the 2-byte row's median (t_typical 1.07) is below its average (1.11), and the
    # 4-byte row's average (1.12) differs from the 2-byte one's: the headline is the smallest size's median
    parsed = parse_perftest(corpus("perftest_lat/ib_send_lat_a_mlx4_fdr.txt"))
    assert pc.summarize(parsed) == {"lat_us": 1.07, "lat_avg_us": 1.11, "lat_p99_us": 1.68, "lat_max_us": 11.76,
                                    "bytes": 2}


def test_summarize_latency_by_duration_is_the_average():
    # -D: perftest prints only t_avg (and tps); the average is then the latency
    parsed = parse_perftest(" #bytes        #iterations       t_avg[usec]    tps average\n"
                            " 2              1234567          1.52           657894.74\n")
    summary = pc.summarize(parsed)
    assert (summary["lat_us"], summary["lat_avg_us"], summary["lat_p99_us"]) == (1.52, 1.52, None)


# --- iperf3 -------------------------------------------------------------------------

def test_iperf3_argv():
    assert ic.build_argv({"role": "server", "tcp_port": 5301, "bind": "10.0.0.1"}) == \
        ["iperf3", "-s", "-1", "-J", "-p", "5301", "-B", "10.0.0.1"]
    assert ic.build_argv({"role": "client", "server": "10.0.0.1", "duration": 5, "parallel": 4, "reverse": True,
                          "omit": 1, "extra_args": ["-Z"]}) == \
        ["iperf3", "-c", "10.0.0.1", "-p", "5201", "-J", "-t", "5", "-P", "4", "-R", "-O", "1", "-Z"]


@pytest.mark.parametrize("params,message", [
    ({"role": "client"}, "required"),
    ({"role": "client", "server": "a|b"}, "shell metacharacter"),
    ({"role": "server", "bind": "--help"}, "not a host name"),
    ({"role": "client", "server": "h", "parallel": 0}, "parallel must be between"),
    ({"role": "client", "server": "h", "duration": 10, "timeout": 10}, "must be longer"),
    ({"role": "client", "server": "h", "reverse": True, "bidirectional": True}, "mutually exclusive"),
    ({"role": "client", "server": "h", "extra_args": ["--logfile=/tmp/x"]}, "has its own option"),
    ({"role": "client", "server": "h", "extra_args": ["-c"]}, "sets server"),
    ({"role": "server", "tcp_port": 70000}, "tcp_port must be between"),
    ({"role": "client", "server": "--help"}, "server '--help' is not a host name"),
    ({"role": "client", "server": "h", "duration": -1}, "duration must be between 1"),
    ({"role": "client", "server": "h", "omit": 601}, "omit must be between 0 and 600"),
    ({"role": "client", "server": "h", "extra_args": ["-cevil.example"]}, "sets server"),
    ({"role": "server", "rail": 1024}, "rail must be between"),
    ({"role": "server", "expected_gbps": 1e9}, "expected_gbps"),
])
def test_iperf3_invalid(params, message):
    with pytest.raises(pc.ArgumentError, match=message):
        ic.build_argv(params)


def _fixture(name):
    with open(os.path.join(IPERF, name)) as handle:
        return handle.read()


def test_iperf3_verdicts_from_real_json():
    good = _fixture("tcp_loopback.json")
    parsed = parse_iperf3(good)
    res = {"rc": 0, "stdout": good, "stderr": "", "timed_out": False}
    assert ic.side_verdict({"role": "client"}, res, parsed)["verdict"] == "pass"
    assert ic.side_verdict({"role": "client", "expected_gbps": 100}, res, parsed)["verdict"] == "fail"
    refused = _fixture("error_connection_refused.json")
    res = {"rc": 0, "stdout": refused, "stderr": "", "timed_out": False}   # iperf3 3.12 exits 0 here
    assert ic.is_connect_failure(res)
    v = ic.side_verdict({"role": "client"}, dict(res, connect_failed=True), parse_iperf3(refused))
    assert v["verdict"] == "error" and v["errors"][0]["code"] == "connect_failed"
    v = ic.side_verdict({"role": "client"}, res, parse_iperf3(refused))
    assert v["verdict"] == "error"
    busy = {"rc": 1, "stdout": _fixture("error_server_busy.json"), "stderr": "", "timed_out": False}
    assert ic.is_connect_failure(busy)
    assert not ic.is_connect_failure({"rc": 0, "stdout": good, "stderr": ""})
    server = ic.side_verdict({"role": "server"}, {"rc": None, "stdout": "", "stderr": "", "timed_out": True},
                             parse_iperf3(""))
    assert server["errors"][0]["code"] == "server_no_client"


# --- the side runner -------------------------------------------------------------------

PY = sys.executable

CLIENT_SCRIPT = (
    "import os, sys\n"
    "flag, attempts = sys.argv[1], sys.argv[2]\n"
    "listening = os.path.exists(flag)\n"
    "open(attempts, 'a').write('connected\\n' if listening else 'refused\\n')\n"
    "if not listening:\n"
    "    print(\"Couldn't connect to 127.0.0.1:18515\"); sys.exit(1)\n"
    "print('connected'); sys.exit(0)\n")
# The server listens once it has seen the client's first refused attempt: an event, not a delay.
SERVER_SCRIPT = (
    "import os, sys, time\n"
    "flag, attempts = sys.argv[1], sys.argv[2]\n"
    "while not (os.path.exists(attempts) and 'refused' in open(attempts).read()):\n"
    "    time.sleep(0.02)\n"
    "open(flag, 'w').close()\n"
    "while 'connected' not in open(attempts).read():\n"
    "    time.sleep(0.02)\n"
    "print('server done')\n")
# A side that records that it started, then runs for argv[3] seconds.
SLEEPER = "import sys, time\nopen(sys.argv[1], 'a').write(sys.argv[2])\ntime.sleep(float(sys.argv[3]))\n"


def _client(tmp_path, timeout, connect_retries=None):
    flag, attempts = str(tmp_path / "listening"), str(tmp_path / "attempts.log")
    return {"argv": [PY, "-c", CLIENT_SCRIPT, flag, attempts], "role": "client", "timeout": timeout,
            "connect_retries": connect_retries}


def test_run_sides_client_retries_until_server_listens(tmp_path):
    flag, attempts = str(tmp_path / "listening"), str(tmp_path / "attempts.log")
    # deadlines only bound the test; the server's wait for the refused attempt is what orders the sides
    jobs = [_client(tmp_path, 120),
            {"argv": [PY, "-c", SERVER_SCRIPT, flag, attempts], "role": "server", "timeout": 120}]
    client, server = side_runner.run_sides(HostTransport(), jobs)
    assert client["rc"] == 0 and "connected" in client["stdout"]
    assert client["attempts"] >= 2 and not client["connect_failed"] and not client["timed_out"]
    assert server["rc"] == 0 and server["attempts"] == 1 and "server done" in server["stdout"]
    with open(attempts) as handle:
        seen = handle.read().split()
    assert seen[0] == "refused" and seen[-1] == "connected" and len(seen) == client["attempts"], seen


class _RefusingTransport(object):
    """Every client attempt is refused at once; time moves only when the runner sleeps (an injected clock)."""

    def __init__(self):
        self.now = 0.0
        self.starts = []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds

    def start(self, argv, timeout, env=None, capture=None):  # pylint: disable=unused-argument
        self.starts.append((self.now, timeout))
        return _Ended({"cmd": list(argv), "rc": 1, "stdout": "Couldn't connect to 127.0.0.1:18515\n",
                       "stderr": "", "timed_out": False, "duration_s": 0.0})


class _Ended(object):
    def __init__(self, result):
        self._result = result

    def poll(self):
        return self._result["rc"]

    def result(self):
        return dict(self._result)


def test_run_sides_client_gives_up_at_deadline():
    transport = _RefusingTransport()
    (client,) = side_runner.run_sides(transport, [{"argv": ["ib_write_bw", "10.0.0.9"], "role": "client", "timeout": 2,
                                                   "connect_retries": None}],
                                      clock=transport.clock, sleep=transport.sleep, abandoned=lambda: False)
    assert client["timed_out"] and client["connect_failed"] and client["attempts"] == len(transport.starts) >= 2
    # it kept retrying into the last second of its budget, each attempt got what was left, and it gave up in time
    assert transport.starts[-1][0] >= 1.0 and transport.now <= 2.0
    assert all(abs(started + timeout - 2.0) < 1e-9 for started, timeout in transport.starts)
    verdict = pc.side_verdict({"role": "client"}, client, parse_perftest(client["stdout"]))
    assert verdict["errors"][0]["code"] == "connect_failed"


def test_run_sides_retry_limit(tmp_path):
    (client,) = side_runner.run_sides(HostTransport(), [_client(tmp_path, 120, connect_retries=2)])
    assert client["attempts"] == 3 and client["rc"] == 1 and not client["timed_out"]


def test_run_sides_server_stopped_at_deadline_and_steps_in_order(tmp_path):
    marker = str(tmp_path / "order")
    # A (step 0) records that it started at once, then sleeps far past its deadline; B (step 1) gets a wide one
    sh_sleeper = 'printf A >> "$1"; exec sleep 300'
    jobs = [
        {"argv": [PY, "-c", SLEEPER, marker, "B", "0"], "role": "server", "timeout": 120, "step": 1},
        {"argv": ["sh", "-c", sh_sleeper, "sh", marker], "role": "server", "timeout": 3, "step": 0},
    ]
    started = time.monotonic()
    second, first = side_runner.run_sides(HostTransport(), jobs)
    assert first["timed_out"] and first["rc"] is not None and first["rc"] != 0
    assert second["rc"] == 0 and not second["timed_out"]
    with open(marker) as handle:
        assert handle.read() == "AB"
    # stopped at its 3 s deadline, not after the 300 s it sleeps (a 10x margin for a busy machine)
    assert time.monotonic() - started < 30


def test_run_sides_stops_when_the_controller_goes_away(tmp_path):
    marker = str(tmp_path / "order")
    jobs = [{"argv": [PY, "-c", SLEEPER, marker, "A", "600"], "role": "server", "timeout": 300, "step": 0},
            {"argv": [PY, "-c", SLEEPER, marker, "B", "0"], "role": "server", "timeout": 300, "step": 1}]
    gone = []

    def controller_gone_once_a_started():
        # the controller goes away once side A is seen running (an event, not a point in time)
        if not gone and os.path.exists(marker) and open(marker).read() == "A":
            gone.append(time.monotonic())
        return bool(gone)

    first, second = side_runner.run_sides(HostTransport(), jobs, abandoned=controller_gone_once_a_started)
    # the running side is stopped at once, not at its 300 s deadline, and step 1 never starts
    assert gone and time.monotonic() - gone[0] < 60
    assert first["abandoned"] and first["timed_out"] and "controller went away" in first["stderr"]
    assert second["abandoned"] and second["rc"] is None and second["attempts"] == 0
    with open(marker) as handle:
        assert handle.read() == "A"


def test_controller_gone_only_for_a_pipe_nobody_reads(tmp_path):
    read_end, write_end = os.pipe()
    try:
        assert controller_gone(write_end) is False
        os.close(read_end)
        assert controller_gone(write_end) is True
    finally:
        os.close(write_end)
    with open(str(tmp_path / "out"), "w") as handle:
        assert controller_gone(handle.fileno()) is False
    assert controller_gone(987654) is False


def test_run_sides_missing_binary():
    (res,) = side_runner.run_sides(HostTransport(), [{"argv": ["/nonexistent/ib_write_bw"], "role": "server", "timeout": 5}])
    assert res["rc"] not in (0, None) or res.get("tool_missing")


def test_side_result_keeps_parameters_run_and_outcome():
    ran = {"cmd": ["timeout", "30", "ib_write_bw"], "rc": 0, "stdout": "out", "stderr": "", "timed_out": False,
           "duration_s": 2.5, "started": 10.0, "ended": 12.5, "attempts": 2}
    item = side_runner.side_result({"role": "client", "peer": "h2"}, ["ib_write_bw"], ran, metrics={"bw_gbps": 90.0},
                                   verdict="pass", cause=None)
    assert item["role"] == "client" and item["peer"] == "h2"
    assert item["cmd"] == ["ib_write_bw"] and item["exec_cmd"] == ran["cmd"]
    assert (item["rc"], item["attempts"], item["duration_s"], item["ended"]) == (0, 2, 2.5, 12.5)
    assert item["metrics"] == {"bw_gbps": 90.0} and item["verdict"] == "pass"
    # a side that never ran (tool missing) still has every key
    bare = side_runner.side_result({}, ["ib_write_bw"], {}, verdict="error")
    assert bare["exec_cmd"] == ["ib_write_bw"] and bare["stdout"] == "" and bare["attempts"] == 0


def test_sides_outcome_worst_first_and_single_side_keys():
    sides = [{"role": "server", "verdict": "pass", "cause": None, "fix": None, "rc": 0, "perftest": {"ok": True}},
             {"role": "client", "verdict": "error", "cause": "no device", "fix": "load mlx5_ib", "rc": 1},
             {"role": "client", "verdict": "fail", "cause": "slow", "fix": "cable"}]
    out, first = side_runner.sides_outcome(sides, False, "perftest")
    assert (out["verdict"], out["cause"], out["fix"]) == ("error", "no device", "load mlx5_ib")
    assert first is sides[1] and out["sides"] == sides and out["changed"] is False and "rc" not in out
    out, first = side_runner.sides_outcome(sides[:1], True, "perftest")
    assert first is None and out["verdict"] == "pass" and out["rc"] == 0 and out["perftest"] == {"ok": True}


# --- extra_args: the tools' own option grammar -----------------------------------------

TOY = cli_grammar.Grammar("toy", "ab:c::", [
    ("alpha", cli_grammar.NO_ARGUMENT, "a"), ("bravo", cli_grammar.REQUIRED_ARGUMENT, "b"),
    ("bravissimo", cli_grammar.REQUIRED_ARGUMENT, "b"), ("charlie", cli_grammar.OPTIONAL_ARGUMENT, "c"),
    ("delta", cli_grammar.REQUIRED_ARGUMENT, None), ("delta-x", cli_grammar.NO_ARGUMENT, None),
    ("echo", cli_grammar.NO_ARGUMENT, None), ("echo2", cli_grammar.NO_ARGUMENT, None)])


@pytest.mark.parametrize("tokens,pairs,positionals", [
    (["-a"], [("-a", None)], []),
    (["-ab1"], [("-a", None), ("-b", "1")], []),              # clustered flag, then an attached value
    (["-ab", "1"], [("-a", None), ("-b", "1")], []),          # clustered, the value is the next argument
    (["-b", "-a"], [("-b", "-a")], []),                       # a required value is taken even if it looks like a flag
    (["-c"], [("-c", None)], []), (["-cX"], [("-c", "X")], []),
    (["--alpha"], [("-a", None)], []), (["--al"], [("-a", None)], []),
    (["--bravo=1"], [("-b", "1")], []), (["--bravo", "1"], [("-b", "1")], []),
    (["--br", "1"], [("-b", "1")], []),                       # bravo and bravissimo are one option: not ambiguous
    (["--charlie"], [("-c", None)], []), (["--charlie=2"], [("-c", "2")], []),
    (["--charlie", "2"], [("-c", None)], [(1, "2")]),         # an optional value only goes with '='
    (["--delta", "x"], [("--delta", "x")], []), (["--delta-x"], [("--delta-x", None)], []),
    (["--echo"], [("--echo", None)], []),                    # an exact name wins over longer ones
    (["x", "-a", "-"], [("-a", None)], [(0, "x"), (2, "-")]),
    (["-a", "--", "-b", "1"], [("-a", None)], [(2, "-b"), (3, "1")]),
])
def test_grammar_reads_arguments_as_getopt_long_does(tokens, pairs, positionals):
    parsed = TOY.parse(tokens)
    assert parsed.pairs() == pairs and parsed.positionals == positionals


@pytest.mark.parametrize("tokens,message", [
    (["-z"], "toy has no option -z"), (["-az"], "toy has no option -z"), (["-:"], "no option -:"),
    (["--zulu"], "no option --zulu"), (["--"] + ["--zulu"], None), (["--ec"], "--ec is ambiguous"),
    (["--del", "1"], "--del is ambiguous"), (["--alpha=1"], "--alpha takes no value"), (["--=x"], "no option --"),
])
def test_grammar_refuses_what_getopt_long_refuses(tokens, message):
    if message is None:
        assert TOY.parse(tokens).positionals == [(1, "--zulu")]
        return
    with pytest.raises(cli_grammar.CliError, match=message):
        TOY.parse(tokens)


def test_grammar_reports_a_missing_value():
    item = TOY.parse(["-a", "--bravo"]).options[-1]
    assert (item.key, item.missing) == ("-b", True)
    assert TOY.parse(["-ab"]).options[-1].missing


def test_rules_refuse_unknown_keys_in_their_tables():
    with pytest.raises(ValueError, match="no option"):
        cli_grammar.ArgumentRules(TOY, managed={"-q": "x"})
    with pytest.raises(ValueError):
        cli_grammar.Grammar("bad", "a:::", [])


def _unique_prefixes(grammar, name):
    """The abbreviations of --name that getopt_long reads as --name."""
    has_arg, key = grammar.long[name]
    out = []
    for end in range(1, len(name)):
        matches = [n for n in grammar.long if n.startswith(name[:end])]
        if all(grammar.long[n] == (has_arg, key) for n in matches):
            out.append(name[:end])
    return out


def _spellings(grammar, key, flag):
    """Every way to write the option ``key``: short, attached, clustered after ``flag``, long, '=', abbreviated."""
    out = []
    letter = key[1] if len(key) == 2 else None
    if letter:
        has_arg = grammar.short[letter]
        out += [[key, "1"], [key + "1"], [flag + letter, "1"]] if has_arg else [[key], [flag + letter]]
    for name, (has_arg, long_key) in grammar.long.items():
        if long_key != key:
            continue
        for spelled in [name] + _unique_prefixes(grammar, name):
            out += [["--%s=1" % spelled], ["--" + spelled, "1"]] if has_arg else [["--" + spelled]]
    return out


@pytest.mark.parametrize("rules,flag", [(pc.PERFTEST_RULES, "-F"), (ic.IPERF3_RULES, "-Z")])
def test_a_managed_option_is_refused_in_every_spelling(rules, flag):
    checked = 0
    for key, option in sorted(rules.managed.items()):
        spellings = _spellings(rules.grammar, key, flag)
        assert spellings, key
        for tokens in spellings:
            with pytest.raises(pc.ArgumentError, match="sets %s" % re.escape(option)):
                pc.check_extra_args(tokens, rules)
            checked += 1
    assert checked > 3 * len(rules.managed)


@pytest.mark.parametrize("tokens,message", [
    (["-dmlx5_9"], r"'-dmlx5_9' \(-d\) sets device"), (["-p1"], r"\(-p\) sets tcp_port"),
    (["-bd", "mlx5_1"], r"'-bd' \(-b\) sets bidirectional"), (["-Fd", "mlx5_1"], r"\(-d\) sets device"),
    (["--por=1"], r"\(--port\) sets tcp_port"), (["--report_g"], "sets report_gbits"),
    (["--po=1"], "--po is ambiguous"), (["10.0.0.9"], "extra_args\\[0\\] '10.0.0.9' is not an option"),
    (["-F", "--"], r"extra_args\[1\] '--' would end the options"), (["-"], "may not add positional"),
    (["--bogus"], "perftest has no option --bogus"), (["-G"], "perftest has no option -G"),
    (["--tclass", "-5"], r"extra_args\[1\] \(the value of --tclass\) '-5' must not start with '-'"),
    (["--tclass=-5"], "must not start with '-'"), (["--tclass="], "is empty"),
    (["--tclass"], r"'--tclass' needs a value after it"), (["-F", "-l"], r"'-l' needs a value"),
    (["--CPU-freq=1"], "takes no value"), (["--serv"], r"\(--server\) sets role"), (["-P"], "sets role"),
    (["--mmap=/etc/passwd"], "perftest maps that file"), (["--kek_path=/k"], "through a shell"),
    (["--data_enc_key_app_path=/bin/sh"], "through a shell"), (["--credentials_path=/c"], "through a shell"),
    (["--payload_file_path=../x"], "must be an absolute path"), (["--payload_file_path=/a/../b"], "'..'"),
    (["-W", "counters/../../../etc/x"], "'..'"), (["-W/etc/shadow"], "relative to the port"),
    (["--out_json_file=/etc/x"], "sets \\(output format\\)"), (["--output=bandwidth"], "sets \\(output format\\)"),
])
def test_perftest_extra_args_refused(tokens, message):
    with pytest.raises(pc.ArgumentError, match=message):
        pc.check_extra_args(tokens)


@pytest.mark.parametrize("tokens,message", [
    (["-cevil.example"], r"\(-c\) sets server"), (["-RZ"], "sets reverse"), (["-ZR"], "sets reverse"),
    (["--po", "1"], r"\(--port\) sets tcp_port"), (["--par=4"], r"\(--parallel\) sets parallel"),
    (["-n1G"], "sets duration"), (["--json-stream"], "JSON output"), (["--json-s"], "ambiguous"),
    (["--logf=/tmp/x"], "sets \\(output\\)"), (["-F/etc/passwd"], "sets \\(file\\)"), (["-I", "/tmp/p"], "pidfile"),
    (["-w", "-5"], "must not start with '-'"), (["--debug", "3"], "'3' is not an option of iperf3"),
    (["--rsa-private-key-path=key"], "must be an absolute path"), (["--bind-dev=-x"], "must not start"),
    (["--bind-dev=a/b"], "network interface name"), (["-m", "x"], "'x' is not an option"),
])
def test_iperf3_extra_args_refused(tokens, message):
    with pytest.raises(pc.ArgumentError, match=message):
        ic.check_extra_args(tokens)


def test_ordinary_extra_args_pass_unchanged():
    perftest = ["-F", "--tclass=106", "-l", "4", "--cpu_util", "-Wcounters/port_xmit_data", "--tcl=96", "-z"]
    assert pc.check_extra_args(perftest) == perftest
    iperf3 = ["-Z", "-w", "4M", "--cport=5300", "-u", "-b", "1G", "--debug=2", "--timestamps", "-C", "bbr"]
    assert ic.check_extra_args(iperf3) == iperf3


# What the Debian 12 builds (perftest 4.5-0.17, iperf3 3.12) lack from the tables: options added later
# upstream, and options that only builds with a feature have (#ifdef HAVE_* in the sources).
PERFTEST_NEWER = {
    "no_lock", "use-null-mr", "payload_file_path", "use_cuda_dmabuf", "use_cuda_pcie_mapping", "use_data_direct",
    "cuda_mem_type", "use_musa", "use_musa_bus_id", "use_musa_dmabuf", "use_musa_pcie_mapping", "use_rocm_dmabuf",
    "use_neuron", "use_neuron_dmabuf", "use_hl", "use_mlu", "use_mlu_dmabuf", "use_opencl", "opencl_platform_id",
    "use_ib_dm_dmabuf", "gpu_touch", "ipv6-addr", "congest_type", "bind_source_ip", "write_with_imm",
    "send_with_imm", "no_enhanced_reorder", "unsolicited_write", "connectionless", "cqe_poll", "tph_mem", "cpu_id",
    "ph", "disable_dynamic_polling", "sig_offload", "data_validation", "data_validation_debug", "pin_cores",
    "numa_node", "disable_numa"}
PERFTEST_BUILD_DEPENDENT = {
    "use_cuda", "use_cuda_bus_id", "use_rocm", "raw_ipv6", "sniffer", "aes_xts", "encrypt_on_tx", "sig_before",
    "aes_block_size", "kek_path", "credentials_path", "data_enc_keys_number", "data_enc_key_app_path",
    "log_dci_streams", "log_active_dci_streams", "disable_pcie_relaxed", "use_ooo"}
# perftest's --help spells --comm_rdma_cm as --com_rdma_cm (a typo in its usage text)
PERFTEST_HELP_TYPOS = {"com_rdma_cm"}
IPERF3_NEWER = {"json-stream", "json-stream-full-output", "server-max-duration", "skip-rx-copy",
                "use-pkcs1-padding", "cntl-ka", "mptcp", "gsro"}
IPERF3_BUILD_DEPENDENT = {"bind-dev", "flowlabel", "affinity", "congestion", "linux-congestion", "sctp", "nstreams",
                          "xbind", "dont-fragment", "username", "rsa-public-key-path", "rsa-private-key-path",
                          "authorized-users-path", "time-skew-threshold"}
PROBE = "--zzz-commcheck-probe"


def _getopt_refused(tool, tokens, cwd):
    """Whether the real tool's getopt_long refuses tokens[0]; a probe option after it ends every run at once."""
    proc = subprocess.run([tool] + tokens + [PROBE], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, cwd=str(cwd), timeout=60, check=False)
    first = tokens[0]
    if first.startswith("--"):
        name = re.escape(first.split("=", 1)[0])
        pattern = r"unrecognized option '%s(=[^']*)?'|option '%s' (is ambiguous|requires|doesn't allow)" % (name, name)
    else:
        letter = re.escape(first[1])
        pattern = r"invalid option -- '%s'|option requires an argument -- '%s'" % (letter, letter)
    return re.search(pattern, proc.stdout) is not None


def _help_names(tool):
    proc = subprocess.run([tool, "--help"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=60, check=False)
    return set(re.findall(r"--([A-Za-z][-A-Za-z0-9_]*)", proc.stdout))


@pytest.mark.parametrize("tool,grammar,missing", [
    ("ib_write_bw", pc.PERFTEST_GRAMMAR, PERFTEST_NEWER | PERFTEST_BUILD_DEPENDENT),
    ("iperf3", ic.IPERF3_GRAMMAR, IPERF3_NEWER | IPERF3_BUILD_DEPENDENT),
])
def test_the_installed_tool_reads_the_table_as_we_do(tmp_path, tool, grammar, missing):
    """Every option of the table that the installed build has is an option for it, and nothing more is."""
    if not shutil.which(tool):
        pytest.skip("%s is not installed (Debian: apt install perftest iperf3)" % tool)
    refused = set()
    for name, (has_arg, _key) in sorted(grammar.long.items()):
        if _getopt_refused(tool, ["--%s=1" % name if has_arg else "--" + name], tmp_path):
            refused.add(name)
    assert refused <= missing, "the table has options this %s does not: %s" % (tool, sorted(refused - missing))
    assert len(grammar.long) - len(refused) > 60
    letters = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    short_refused = set(c for c in letters if _getopt_refused(tool, ["-" + c + ("1" if grammar.short.get(c) else "")],
                                                              tmp_path))
    newer_short = set(grammar.short) & set(k[1] for n, (_a, k) in grammar.long.items() if n in missing and len(k) == 2)
    assert short_refused == letters - set(grammar.short) | (short_refused & newer_short)
    unknown = _help_names(tool) - set(grammar.long) - PERFTEST_HELP_TYPOS
    assert not unknown, "%s --help lists options the table lacks: %s" % (tool, sorted(unknown))


def _timed_out(side, text, parsed=None, **extra):
    result = dict({"rc": None, "stdout": text, "stderr": "", "timed_out": True}, **extra)
    return pc.side_verdict(side, result, parse_perftest(text) if parsed is None else parsed)


def _error(code):
    cause, fix = pc.CATALOG[code]
    return {"verdict": "error", "cause": cause, "fix": fix,
            "errors": [{"code": code, "message": cause, "cause": cause, "fix": fix}]}


def test_a_timed_out_side_says_who_was_waiting_for_what():
    connected = " remote address: LID 0000 QPN 0x003c PSN 0x65b096 RKey 0x014d0c VAddr 0x007f\n"
    assert _timed_out({"role": "server"}, " Waiting for client to connect... *\n") == _error("server_no_client")
    # a server its client reached (its address printed, or results read) waited for the test, not the client
    assert _timed_out({"role": "server"}, connected) == _error("client_timeout")
    assert _timed_out({"role": "server"}, "", parsed={"rows": [{"bytes": 65536}]}) == _error("client_timeout")
    assert _timed_out({"role": "client"}, "", connect_failed=True) == _error("connect_failed")
    assert _timed_out({"role": "client"}, connected) == _error("client_timeout")


def test_report_counters_name_files_under_the_port_each_of_them():
    side = {"role": "client", "server": "10.0.0.2", "device": "mlx5_0"}
    good = ["-W", "counters/port_rcv_data,hw_counters/out_of_buffer"]
    assert pc.build_argv(dict(side, extra_args=good))[-3:] == good + ["10.0.0.2"]
    for value, shown, why in (
            ("counters/port_rcv_data,/sys/class/net/x", "counters/port_rcv_data,/sys/class/net/x",
             "must name counters relative to the port (counters/NAME)"),
            ("counters/port_rcv_data,counters/../../../etc/shadow", "counters/../../../etc/shadow",
             "must not contain '..' components")):
        with pytest.raises(pc.ArgumentError) as err:
            pc.build_argv(dict(side, extra_args=["-W", value]))
        assert str(err.value) == "extra_args[1] (the value of -W) %r %s" % (shown, why)


def _side(side, stdout="", stderr="", rc=0, **extra):
    result = dict({"rc": rc, "stdout": stdout, "stderr": stderr, "timed_out": False}, **extra)
    return pc.side_verdict(side, result, parse_perftest(stdout + "\n" + stderr))


def test_a_side_that_could_not_start_or_has_no_tool_says_so_first():
    cause, fix = pc.CATALOG["cannot_start"]
    error = "[Errno 8] Exec format error: 'ib_write_bw'"
    assert _side({"role": "client"}, "ib_write_bw: unrecognized option", rc=None, start_error=error,
                 tool_missing=True) == {
        "verdict": "error", "cause": "%s: %s" % (cause, error), "fix": fix,
        "errors": [{"code": "cannot_start", "message": error, "cause": "%s: %s" % (cause, error), "fix": fix}]}
    cause, fix = pc.CATALOG["tool_missing"]
    assert _side({"role": "server"}, stderr="ib_read_lat: not found on PATH", rc=None, tool_missing=True) == {
        "verdict": "error", "cause": cause, "fix": fix,
        "errors": [{"code": "tool_missing", "message": "ib_read_lat: not found on PATH", "cause": cause, "fix": fix}]}


def test_an_option_the_build_refused_is_named_by_its_line_on_stderr_too():
    cause, fix = pc.CATALOG["invalid_option"]
    verdict = _side({"role": "client"}, " RDMA_Write BW Test\n", "ib_write_bw: unrecognized option '--use_cuda=0'\n",
                    rc=1)
    assert verdict["verdict"] == "error" and (verdict["cause"], verdict["fix"]) == (cause, fix)
    assert verdict["errors"][0] == {"code": "invalid_option", "message": "ib_write_bw: unrecognized option "
                                    "'--use_cuda=0'", "cause": cause, "fix": fix}


def test_an_exit_status_the_parser_cannot_explain_is_an_error_with_the_status():
    cause, fix = pc.CATALOG["nonzero_exit"]
    assert _side({"role": "server"}, " RDMA_Write BW Test\n", rc=3) == {
        "verdict": "error", "cause": cause, "fix": fix,
        "errors": [{"code": "nonzero_exit", "message": "exit status 3", "cause": cause, "fix": fix}]}


def test_bandwidth_is_judged_against_its_share_of_the_expectation_latency_is_not():
    text = corpus("perftest_bw/ib_write_bw_ndr_gbits_cpufreq_warn.txt")   # 392.34 Gb/s
    passed = {"verdict": "pass", "cause": None, "fix": None, "errors": []}
    # no metric given: a bandwidth side; 392.34 is exactly 0.9 x 435.933...: at the line is a pass
    assert _side({"role": "client", "expected_gbps": 392.34 / 0.9}, text) == passed
    cause, fix = pc.CATALOG["below_expected"]
    assert _side({"role": "client", "expected_gbps": 450}, text) == {
        "verdict": "fail", "cause": cause, "fix": fix,
        "errors": [{"code": "below_expected", "message": "392.34 Gb/s is below 90% of the expected 450.00 Gb/s",
                    "cause": cause, "fix": fix}]}
    # bidirectional: both directions add up, twice the expectation (not three times)
    assert _side({"role": "client", "expected_gbps": 200, "bidirectional": True}, text) == passed
    assert _side({"role": "client", "metric": "lat", "expected_gbps": 800}, text) == passed
    assert _side({"role": "server", "expected_gbps": 800}, " Waiting for client to connect... *\n") == passed


def test_summarize_bandwidth_takes_the_highest_average_the_first_of_equals():
    parsed = {"metric": "bw", "rows": [
        {"bytes": 2, "bw_peak_gbps": None, "bw_avg_gbps": None},
        {"bytes": 4096, "bw_peak_gbps": 90.0, "bw_avg_gbps": 88.0},
        {"bytes": 65536, "bw_peak_gbps": 97.0, "bw_avg_gbps": 95.5},
        {"bytes": 1048576, "bw_peak_gbps": 96.0, "bw_avg_gbps": 95.5}]}
    assert pc.summarize(parsed) == {"bw_gbps": 95.5, "bw_peak_gbps": 97.0, "bytes": 65536}
    assert pc.summarize({"metric": "bw", "rows": []}) == {} and pc.summarize(None) == {}


def test_summarize_knows_a_latency_table_by_its_metric_or_by_its_average_column():
    assert pc.summarize({"metric": "lat", "rows": [{"bytes": 2, "t_typical_us": 1.3}]}) == {
        "lat_us": 1.3, "lat_avg_us": None, "lat_p99_us": None, "lat_max_us": None, "bytes": 2}
    assert pc.summarize({"metric": None, "rows": [{"bytes": 8, "t_avg_us": 2.5}]})["lat_us"] == 2.5


def test_an_error_without_a_cause_is_told_by_its_message():
    parsed = {"rows": [], "errors": [{"code": "unknown", "message": "ibv_create_ah failed", "cause": None,
                                      "fix": None}]}
    result = {"rc": 1, "stdout": "", "stderr": "ibv_create_ah failed", "timed_out": False}
    assert pc.side_verdict({"role": "client"}, result, parsed) == {
        "verdict": "error", "cause": "ibv_create_ah failed", "fix": None, "errors": parsed["errors"]}


def test_an_unknown_option_beside_a_result_table_is_reported_once():
    text = corpus("perftest_bw/ib_write_bw_ndr_gbits_cpufreq_warn.txt") + "ib_write_bw: invalid option -- 'G'\n"
    verdict = _side({"role": "client"}, text)
    assert verdict["verdict"] == "error"
    assert [(e["code"], e["message"]) for e in verdict["errors"]] == [
        ("invalid_option", "ib_write_bw: invalid option -- 'G'")]


# --- options, whole ------------------------------------------------------------------

@pytest.mark.parametrize("params,message", [
    ({"size": 8, "all_sizes": True}, "size and all_sizes are mutually exclusive"),
    ({"iterations": 100, "duration": 5}, "iterations and duration are mutually exclusive"),
    ({"all_sizes": True, "duration": 5},
     "all_sizes cannot be combined with duration (perftest runs one size in duration mode)"),
    ({"test": "atomic", "all_sizes": True}, "atomic tests use a fixed 8-byte size: size and all_sizes do not apply"),
    ({"metric": "lat", "bidirectional": True}, "bidirectional applies to bandwidth tests only (metric=bw)"),
    ({"metric": "lat", "qps": 2}, "qps applies to bandwidth tests only (metric=bw)"),
    ({"duration": 30, "timeout": 30}, "timeout (30 s) must be longer than duration (30 s)"),
    ({"timeout": 0}, "timeout must be between 1 and 86400, got 0"),
    ({"mtu": 0}, "mtu must be one of 256, 512, 1024, 2048, 4096, got 0"),
    ({"mtu": 2 ** 30 + 1}, "mtu must be between 0 and 1073741824, got 1073741825"),
    ({"use_cuda_dmabuf": True}, "use_cuda_dmabuf needs use_cuda (the GPU whose memory is registered through DMA-BUF)"),
    ({"use_cuda": 0, "use_cuda_dmabuf": "yes"}, "use_cuda_dmabuf must be a boolean, got 'yes'"),
    ({"gid_index": True}, "gid_index must be an integer or 'auto', got True"),
    ({"gid_index": "x3"}, "gid_index must be an integer or 'auto', got 'x3'"),
    ({"gid_index": 256}, "gid_index must be between 0 and 255, got 256"),
    ({"connect_retries": -1}, "connect_retries must be between 0 and 100000, got -1"),
    ({"connect_retries": 100001}, "connect_retries must be between 0 and 100000, got 100001"),
    ({"role": "client;id", "server": "10.0.0.1"}, "role 'client;id' contains shell metacharacter(s) ';'"),
    ({"test": "write|id"}, "test 'write|id' contains shell metacharacter(s) '|'"),
    ({"metric": "bw&"}, "metric 'bw&' contains shell metacharacter(s) '&'"),
])
def test_an_option_error_reads_whole(params, message):
    with pytest.raises(pc.ArgumentError) as caught:
        pc.normalize(dict({"role": "server"}, **params))
    assert str(caught.value) == message


def test_a_side_with_nothing_set_takes_perftests_defaults():
    # a server is given no server address even when the side names one
    assert pc.normalize({"role": "server", "server": "10.0.0.1"}) == {
        "role": "server", "test": "write", "metric": "bw", "device": None, "server": None, "ib_port": 1,
        "gid_index": None, "tcp_port": 18515, "size": None, "all_sizes": False, "iterations": None,
        "duration": None, "qps": None, "bidirectional": False, "rdma_cm": False, "mtu": None, "use_cuda": None,
        "use_cuda_dmabuf": False, "extra_args": [], "report_gbits": True, "timeout": 120, "connect_retries": None}


def test_options_at_the_ends_of_their_ranges_are_taken():
    side = pc.normalize({"role": "server", "gid_index": "", "ib_port": 2, "connect_retries": 0, "timeout": 1,
                         "use_cuda": 0, "use_cuda_dmabuf": True, "report_gbits": False})
    keys = ("gid_index", "ib_port", "connect_retries", "timeout", "use_cuda", "use_cuda_dmabuf", "report_gbits")
    assert dict((k, side[k]) for k in keys) == {
        "gid_index": None, "ib_port": 2, "connect_retries": 0, "timeout": 1, "use_cuda": 0,
        "use_cuda_dmabuf": True, "report_gbits": False}
    assert pc.normalize({"role": "server", "gid_index": 0})["gid_index"] == 0
    top = pc.normalize({"role": "server", "gid_index": 255, "connect_retries": 100000})
    assert (top["gid_index"], top["connect_retries"]) == (255, 100000)


def test_gpu_memory_through_dma_buf_and_megabytes_instead_of_gigabits():
    argv = pc.build_argv({"role": "server", "device": "mlx5_0", "use_cuda": 0, "use_cuda_dmabuf": True,
                          "report_gbits": False})
    assert argv == ["ib_write_bw", "-d", "mlx5_0", "-i", "1", "-p", "18515", "--use_cuda=0", "--use_cuda_dmabuf"]


def test_a_size_with_a_duration_and_a_latency_tests_single_queue_pair():
    argv = pc.build_argv({"role": "server", "metric": "lat", "size": 64, "duration": 5, "qps": 1})
    assert argv == ["ib_write_lat", "-i", "1", "-p", "18515", "-s", "64", "-D", "5"]
