# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 38 section 5: a text no parser could read says so, and what a paste adds around a record is no part of it.

1. Every parser fed another tool's real output (the mix-up an operator makes: the wrong register, the wrong file)
   reads nothing from it and says so in one warning that quotes the text's first line (the ``invalid_json``
   error of iperf3, whose contract has that code); the list filters say it as an Ansible warning. A blank text
   is no misread text: no such warning.
2. The hint is safe to print: quotes, backslashes, control, format and separator characters escaped, cut at
   80 characters.
3. clean_lines takes off what a paste adds (Markdown fences, quote markers, bullets, cat -n numbers,
   timestamps, launcher prefixes, notes after the record, right prompts, terminal escapes) and leaves the
   tool's own text alone where it looks alike ("#wrong", "#iterations", a pdsh prefix before "#  size", a
   shell prompt before "# cmd", a tool's own tab-separated numbers).
4. Words after a record that carry no marker ("slow one") do not stop the record from being read, nor does a
   perftest header or row a paste wrapped onto the next line.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible.utils.display import Display

from ansible_collections.clusterops.commcheck.plugins.filter.parse_ibstat import FilterModule as IbstatFilter
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_hccl_test import parse_hccl_test
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibdev2netdev import (
    parse_ibdev2netdev_full)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibstat import (
    parse_ibstat_full, parse_ibstatus_full)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibv_devinfo import (
    parse_ibv_devices_full, parse_ibv_devinfo_full)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_iperf3 import parse_iperf3
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import parse_nccl_tests
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import parse_perftest
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_rdma_link import (
    parse_rdma_link_full, parse_rdma_system)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_show_gids import (
    parse_show_gids_full)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    clean_lines, first_line_hint, quote_hint)
from real_outputs import real

IBSTAT = real("ibstat", "ibstat_cx4_roce_and_ib_down.txt")
SHOW_GIDS = real("show_gids", "show_gids_ib_port_no_netdev_spaces.txt")
RDMA_LINK = real("rdma_link", "rdma_link_new_format_down_disabled.txt")
IBV_DEVINFO = real("ibv_devinfo", "ibv_devinfo_cx7_ib_port_down_lid_65535_prompt.txt")
IBDEV2NETDEV = real("ibdev2netdev", "ibdev2netdev_eth_down_and_bonds_up_prompt.txt")
NCCL = real("nccl_tests", "rccl_all_reduce_2node_r9700_mpirun.txt")


def _note(tool, first_line, cut=""):
    return 'the text was not recognised as %s output, nothing was read from it (its first line: "%s"%s)' % (
        tool, first_line, cut)


def _strings(warnings):
    return [w["message"] if isinstance(w, dict) else w for w in warnings]


# --- 1. one warning per parser ----------------------------------------------------------------------------

@pytest.mark.parametrize("parse, text, tool, first_line", [
    (parse_perftest, IBSTAT, "perftest (ib_*_bw / ib_*_lat)", "$ ibstat"),
    (parse_nccl_tests, SHOW_GIDS, "nccl-tests", "$ show_gids"),
    (parse_hccl_test, RDMA_LINK, "hccl_test", "link mlx5_0/1 state DOWN physical_state DISABLED netdev ens7f0np0"),
    (parse_ibstat_full, RDMA_LINK, "ibstat (or ibstatus)",
     "link mlx5_0/1 state DOWN physical_state DISABLED netdev ens7f0np0"),
    (parse_ibstatus_full, IBDEV2NETDEV, "ibstatus", ":~#ibdev2netdev"),
    (parse_ibv_devinfo_full, IBDEV2NETDEV, "ibv_devinfo", ":~#ibdev2netdev"),
    (parse_ibv_devices_full, RDMA_LINK, "ibv_devices",
     "link mlx5_0/1 state DOWN physical_state DISABLED netdev ens7f0np0"),
    (parse_ibdev2netdev_full, IBSTAT, "ibdev2netdev", "$ ibstat"),
    (parse_rdma_link_full, IBDEV2NETDEV, "rdma link", ":~#ibdev2netdev"),
    (parse_rdma_system, RDMA_LINK, "rdma system", "link mlx5_0/1 state DOWN physical_state DISABLED netdev ens7f0np0"),
    (parse_show_gids_full, IBV_DEVINFO, "show_gids (or hiroce3 gids)", "root@f51fec68bf55:~# ibv_devinfo"),
], ids=["perftest", "nccl_tests", "hccl_test", "ibstat", "ibstatus", "ibv_devinfo", "ibv_devices", "ibdev2netdev",
        "rdma_link", "rdma_system", "show_gids"])
def test_another_tools_output_is_said_to_be_unread(parse, text, tool, first_line):
    result = parse(text)
    assert _strings(result["warnings"]) == [_note(tool, first_line)]
    assert result.get("ok") is not True


def test_iperf3_says_it_in_its_invalid_json_error():
    result = parse_iperf3(NCCL)
    first = NCCL.splitlines()[0]
    assert [(e["code"], e["message"]) for e in result["errors"]] == [
        ("invalid_json", "no iperf3 JSON object in the output: " + _note("iperf3 -J", first[:80], "..."))]
    assert len(first) > 80


def test_the_devinfo_warning_is_an_entry_like_the_other_devinfo_warnings():
    warning = parse_ibv_devinfo_full("hello\n")["warnings"][0]
    assert warning["code"] == "not_recognised" and warning["cause"] and warning["fix"]


@pytest.mark.parametrize("blank", ["", "\n\n", " \t\r\n", None])
def test_a_blank_text_is_no_misread_text(blank):
    assert parse_perftest(blank)["warnings"] == []
    assert parse_ibstat_full(blank)["warnings"] == []


def test_a_text_only_a_fence_wraps_is_said_to_be_unread_without_a_hint():
    assert parse_rdma_link_full("```\n```\n")["warnings"] == [
        "the text was not recognised as rdma link output, nothing was read from it "
        "(no line of it is more than decoration)"]


def test_a_command_line_alone_is_no_output_of_the_tool():
    result = parse_perftest("$ ib_write_bw -d mlx5_0 10.0.0.2\n")
    assert _strings(result["warnings"]) == [_note("perftest (ib_*_bw / ib_*_lat)", "$ ib_write_bw -d mlx5_0 10.0.0.2")]
    assert result["test"] == "write"     # the command line still says which test it was


def test_the_list_filter_warns_through_ansible(monkeypatch):
    shown = []
    monkeypatch.setattr(Display, "warning", lambda self, msg, *args, **kwargs: shown.append(msg))
    parse = IbstatFilter().filters()["parse_ibstat"]
    assert parse(RDMA_LINK) == []
    first_line = "link mlx5_0/1 state DOWN physical_state DISABLED netdev ens7f0np0"
    assert shown == ["parse_ibstat: " + _note("ibstat (or ibstatus)", first_line)]
    assert [ca["name"] for ca in parse(IBSTAT)] == ["mlx5_0", "mlx5_1"] and len(shown) == 1


# --- 2. the hint ---------------------------------------------------------------------------------------------

def test_the_hint_escapes_what_a_terminal_would_obey_and_keeps_words():
    assert quote_hint('say "hi" \\ \x07\x1b[2J\u202eevil\t\u3000end 日本') == (
        '"say \\"hi\\" \\\\ \\x07\\x1b[2J\\u202eevil\\t\\u3000end 日本"')
    assert quote_hint("x" * 81) == '"' + "x" * 80 + '"...'


def test_the_hint_is_the_first_line_with_words_once_cleaned():
    assert first_line_hint("\n\n```text\n\x1b[1m[1,0]<stdout>:  hello  \x1b[0m\nnext\n") == '"hello"'
    assert first_line_hint(" \n\t\n") is None


# --- 3. clean_lines -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("pasted, line", [
    ("```console", ""),
    ("> > \tState: Active", "\tState: Active"),
    ("  - mlx5_0 port 1 ==> ib0 (Up)", "mlx5_0 port 1 ==> ib0 (Up)"),
    ("* Waiting for client to connect... *", "Waiting for client to connect... *"),
    ("Jan 02 10:11:12 node1 ib_write_bw[4242]:  65536 5000", " 65536 5000"),
    ("2024-05-01T10:11:12.123456789Z \thca_id:\tmlx5_0", "\thca_id:\tmlx5_0"),
    ("[10:11:12.5] 0: #  size", "#  size"),
    ("[1,0]<stdout>:\tport:\t1", "\tport:\t1"),
    ("(pid=1234) [3] 2 1000 1.1", "2 1000 1.1"),
    ("  65536  5000  11.2 11.1 0.02   # slow one", "  65536  5000  11.2 11.1 0.02"),
    ("mlx5_0 port 1 ==> ib0 (Up) <-- this", "mlx5_0 port 1 ==> ib0 (Up)"),
    ("\t\tState: Down  \u2190 here", "\t\tState: Down"),
    ("link mlx5_0/1 state ACTIVE // the good one", "link mlx5_0/1 state ACTIVE"),
    ("$ ibstat      \u2714  10:32:01", "$ ibstat"),
    ("$ ibstat        [10:32:01]", "$ ibstat"),
    ("\x1b]0;root@n1: ~\x07\x1b[1;31mred\x1b(B\x1b[m", "red"),
    ("\u2502        Port 1:                               \u2502", "        Port 1:"),
])
def test_clean_lines_takes_off_what_the_paste_added(pasted, line):
    assert clean_lines(pasted) == [line]


@pytest.mark.parametrize("line", [
    "#bytes #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
    "#       size         count      type   redop    root     time   algbw   busbw #wrong",
    "node1: #  size  count  type",
    "ip-172-30-4-150:~ # ibstat",
    "(venv) root@n1:/tmp # ibstat",
    "2\t1000\t3.1",
    "-----------------------------------------------------",
    "***************************************",
    "  -a, --all  Run sizes from 2 till 2^23",
    "  NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] -1/-1/-1->0->1",
])
def test_clean_lines_leaves_the_tools_own_text_alone(line):
    assert clean_lines(line) == [line]


def test_cat_n_numbers_are_taken_off_only_where_they_count_up():
    assert clean_lines("     1\tCA 'mlx5_0'\n     2\t\tPort 1:\n     3\t\t\tState: Active") == [
        "CA 'mlx5_0'", "\tPort 1:", "\t\tState: Active"]
    rows = "     2\t1000\t3.1\n     4\t1000\t3.2"     # a tool's own tab-separated sizes: 2, 4
    assert clean_lines(rows) == rows.split("\n")


# --- 4. words after a record ------------------------------------------------------------------------------------

BW_TABLE = ("#bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
            " 65536      5000             97.43              97.39  		   0.185751\n")


def test_a_perftest_row_with_words_after_it_is_read():
    clean = parse_perftest(BW_TABLE)
    noted = parse_perftest(BW_TABLE.rstrip("\n") + "   slow one (node7)\n")
    assert noted["rows"] == clean["rows"] and [r["bw_avg_gbps"] for r in noted["rows"]] == [97.39]
    assert noted["warnings"] == clean["warnings"] == []


LAT_TABLE = (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]\n"
             "    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]\n"
             " 2       1000          1.42           1.93         1.47                1.47\n"
             "             0.00            1.57                    1.93\n"
             " 4       1000          1.43           1.99         1.48                1.48             0.01            1.60"
             "                    1.99\n")


def test_a_wrapped_latency_header_and_row_are_read_whole():
    result = parse_perftest(LAT_TABLE)
    assert [(r["bytes"], r["t_min_us"], r["t_stdev_us"], r["p99_us"], r["p99_9_us"]) for r in result["rows"]] == [
        (2, 1.42, 0.0, 1.57, 1.93), (4, 1.43, 0.01, 1.6, 1.99)]
    assert result["warnings"] == []


def test_an_hccl_row_with_words_after_its_check_is_read():
    pipes = parse_hccl_test("data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n"
                            "524288            | 1000.00        | 0.52429              | success   slow one\n")
    plain = parse_hccl_test("data_size(Bytes) aveg_time(us) alg_bandwidth(GB/s) check_result\n"
                            "524288 1000.00 0.52429 success slow one\n")
    for result in (pipes, plain):
        assert [(r["bytes"], r["algbw_gbs"], r["check"], r["check_result"]) for r in result["rows"]] == [
            (524288, 0.52429, "success", "success")]


def test_an_ibdev2netdev_line_with_words_after_its_state_is_read():
    devices = parse_ibdev2netdev_full("mlx5_4 port 1 ==> eth4 (Down)   this one, since Monday\n")["devices"]
    assert [(d["device"], d["port"], d["netdev"], d["state"]) for d in devices] == [("mlx5_4", 1, "eth4", "Down")]
