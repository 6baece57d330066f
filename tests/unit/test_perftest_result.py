# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What parsers/perftest_result.py decides about a perftest output: the result's keys, the table's columns, rows
and units, the settings' types, the side, and the explanations and warnings added at the end.

The fixtures are the real NDR outputs of tests/fixtures/corpus (ib_write_bw and ib_send_lat on mlx5_0), edited
where one behaviour needs another value."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import parse_perftest

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "corpus")


def corpus(name):
    with open(os.path.join(CORPUS, name), encoding="utf-8") as handle:
        return handle.read()


# ib_write_bw -d mlx5_0 --report_gbits: one row, 65536 bytes, peak 392.38, average 392.34 Gb/s
BW = corpus("perftest_bw/ib_write_bw_ndr_gbits_cpufreq_warn.txt")
# ib_send_lat -d mlx5_0: one row, 2 bytes, t_min 1.24, t_max 5.19, typical 1.27, p99 1.37, p99.9 5.19
LAT = corpus("perftest_lat/ib_send_lat_ndr_cpufreq_warn.txt")
BW_TABLE = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
BW_ROW = " 65536      5000             392.38             392.34 \t\t     0.748336\n"
LAT_TABLE = (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
             "99% percentile[usec]   99.9% percentile[usec] \n")
# typical (the median) 1.27, average 1.31, p99 1.37, max 5.19: no two alike
LAT_ROW = " 2       1000          1.24           5.19         1.27     \t       1.31        \t0.09   \t\t1.37    \t\t4.02   \n"
LAT_KEYS = {"bytes", "iterations", "t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us", "p99_us",
            "p99_9_us", "tps"}
RESULT_KEYS = {"test", "metric", "bidirectional", "side", "verb", "atomic_type", "banner", "command", "settings",
               "local_addresses", "remote_addresses", "columns", "bw_unit", "time_unit", "duration_mode",
               "peak_measured", "gpu_memory", "connected_at", "completed_at", "total_run_time_s", "rows", "errors",
               "warnings", "ok"}
CONNECT_FAILED = "Couldn't connect to 10.0.0.2:18515\n"


def bw_with(table):
    """The BW output with its result table (header and row) replaced by ``table``."""
    return BW.replace(BW_TABLE, "").replace(BW_ROW, "").replace(
        "Conflicting CPU frequency", table + "Conflicting CPU frequency")


def test_every_result_has_the_contract_keys_and_what_was_not_printed_is_empty():
    full, failed = parse_perftest(BW), parse_perftest(CONNECT_FAILED)
    assert set(full) == set(failed) == RESULT_KEYS
    assert (full["verb"], full["ok"], full["bidirectional"]) == ("RDMA_Write", True, False)
    assert failed["settings"] == {"device": None, "qps": None, "transport_type": None, "connection_type": None,
                                  "mtu": None, "link_type": None, "gid_index": None, "rdma_cm": None}
    assert [failed[key] for key in ("bidirectional", "columns", "connected_at", "completed_at", "total_run_time_s",
                                    "atomic_type", "gpu_memory", "warnings", "ok")] == [
        False, [], None, None, None, None, None, [], False]


@pytest.mark.parametrize("text, metric", [
    (BW_TABLE + BW_ROW, "bw"),
    (LAT_TABLE + LAT_ROW, "lat"),
    (" #bytes #iterations MsgRate[Mpps]\n 2 1000 0.5\n", None),
    (CONNECT_FAILED, None),
])
def test_without_banner_or_command_the_table_says_the_metric(text, metric):
    assert parse_perftest(text)["metric"] == metric


def test_a_latency_row_read_before_any_banner_has_the_latency_keys_only():
    assert [set(row) for row in parse_perftest(LAT_TABLE + LAT_ROW)["rows"]] == [LAT_KEYS]


@pytest.mark.parametrize("table, duration", [
    (BW_TABLE + BW_ROW, False),
    (LAT_TABLE.rstrip() + "  tps average\n" + LAT_ROW.rstrip() + " 780000.00\n", False),
    (" #bytes        #iterations       t_avg[usec]    tps average\n 2             4588212            1.09  916521.28\n",
     True),
])
def test_duration_mode_is_a_latency_table_with_tps_and_no_t_min(table, duration):
    result = parse_perftest(table)
    assert result["rows"] and result["duration_mode"] is duration


@pytest.mark.parametrize("text, bidirectional", [
    ("# ib_write_bw -b -d mlx5_0 10.0.0.2\n" + CONNECT_FAILED, True),
    ("# ib_write_bw -d mlx5_0 10.0.0.2\n" + CONNECT_FAILED, False),
    (BW.replace("ib_write_bw -d", "ib_write_bw -b -d"), False),     # the banner says unidirectional
])
def test_the_command_line_says_bidirectional_only_when_no_banner_does(text, bidirectional):
    result = parse_perftest(text)
    assert result["command"] and result["bidirectional"] is bidirectional


@pytest.mark.parametrize("text, side", [
    ("Couldn't listen to port 18515\n", "server"),
    (CONNECT_FAILED, "client"),
    ("Did not detect devices\n", None),
    ("Did not detect devices\n" + CONNECT_FAILED, "client"),
])
def test_without_a_banner_the_errors_say_the_side(text, side):
    assert parse_perftest(text)["side"] == side


@pytest.mark.parametrize("printed, link_type", [
    ("ethernet", "Ethernet"), ("Eth", "Ethernet"), ("Etherent", "Ethernet"), ("ib", "IB"), ("InfiniBand", "IB"),
    ("OPA", "OPA"),
])
def test_the_link_type_is_named_in_one_spelling(printed, link_type):
    text = BW.replace("Link type       : IB", "Link type       : %s" % printed)
    assert parse_perftest(text)["settings"]["link_type"] == link_type


@pytest.mark.parametrize("qps_line, data_ex, rdma_cm", [
    ("ON", "Ethernet", True), ("OFF", "rdma_cm", True), ("OFF", "Ethernet", False),
])
def test_rdma_cm_is_used_when_its_qps_or_its_data_exchange_say_so(qps_line, data_ex, rdma_cm):
    text = BW.replace("rdma_cm QPs\t : OFF", "rdma_cm QPs\t : %s" % qps_line).replace(
        "Data ex. method : Ethernet", "Data ex. method : %s" % data_ex)
    assert parse_perftest(text)["settings"]["rdma_cm"] is rdma_cm


@pytest.mark.parametrize("printed, replaced, key", [
    ("Mtu             : 4096[B]", "Mtu             : ON", "mtu"),
    ("Mtu             : 4096[B]", "Mtu             : jumbo", "mtu"),
    ("Number of qps   : 1", "Number of qps   : ON", "qps"),
    ("Device         : mlx5_0", "Device         : 5", "device"),
])
def test_a_setting_of_the_wrong_type_is_null(printed, replaced, key):
    result = parse_perftest(BW.replace(printed, replaced))
    assert result["settings"][key] is None and result["ok"] is True


@pytest.mark.parametrize("line, gpu_memory", [
    (" Use ROCm memory : ON\n", "rocm"), (" Use ROCm memory : OFF\n", None),
])
def test_a_header_that_says_rocm_memory_makes_the_buffers_rocm(line, gpu_memory):
    text = BW.replace(" Data ex. method", line + " Data ex. method")
    assert parse_perftest(text)["gpu_memory"] == gpu_memory


@pytest.mark.parametrize("needle, gpu", [("--use_cuda=0", "CUDA"), ("--use_rocm=0", "ROCm")])
def test_a_gpu_buffer_that_failed_to_register_names_its_gpu(needle, gpu):
    result = parse_perftest("# ib_write_bw %s -d mlx5_0\nCouldn't allocate MR\n" % needle)
    assert result["errors"][0]["detail"].startswith("The buffer was %s GPU memory: " % gpu)


def test_a_completion_error_without_status_syndrome_or_side_has_none():
    error = parse_perftest("Completion with error\n")["errors"][0]
    assert error["code"] == "completion_error"
    assert (error["wc_status"], error["vendor_err"], error["side"], error["detail"]) == (None, None, None, None)


@pytest.mark.parametrize("text, where", [
    ("Failed status 12: wr_id 0 syndrom 0x81\n", "the local side"),
    (CONNECT_FAILED + "Completion with error at server\nFailed status 12: wr_id 0\n", "the server"),
])
def test_a_completion_error_is_explained_where_it_happened_after_any_other_error(text, where):
    error = [e for e in parse_perftest(text)["errors"] if e["code"] == "completion_error"][0]
    assert error["wc_status"] == 12
    assert error["detail"].startswith("Completion status 12 (IBV_WC_RETRY_EXC_ERR) at %s: " % where)


def test_an_all_zero_gid_explains_only_the_failed_qp_connection():
    text = BW.replace("Link type       : IB", "Link type       : Ethernet").replace(
        " remote address: LID 0x02 QPN 0x0049 PSN 0x4601da RKey 0x1fff00 VAddr 0x007778e64eb000\n",
        " remote address: LID 0x02 QPN 0x0049 PSN 0x4601da RKey 0x1fff00 VAddr 0x007778e64eb000\n"
        " GID: 00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00\n").replace(
        BW_TABLE, "Failed to modify QP 0x0049 to RTR\nCouldn't allocate MR\n").replace(BW_ROW, "")
    details = dict((e["code"], e["detail"]) for e in parse_perftest(text)["errors"])
    assert details["mr_alloc_failed"] is None and "remote" in details["qp_connect_failed"]


@pytest.mark.parametrize("text, evidence", [
    ("Usage:\n  ib_write_bw            start a server and wait for connection\n",
     ["perftest printed its usage text (its command line was rejected)"]),
    ("ib_write_bw: invalid option -- 'z'\nUsage:\n  ib_write_bw            start a server and wait for connection\n",
     ["ib_write_bw: invalid option -- 'z'"]),
])
def test_the_usage_text_is_one_invalid_option_error(text, evidence):
    assert [(e["code"], e["evidence"]) for e in parse_perftest(text)["errors"]] == [("invalid_option", evidence)]


@pytest.mark.parametrize("count, last", [(50, "note: 49 packets lost"), (53, "3 more output lines not understood (not listed)")])
def test_lines_no_rule_knows_are_listed_up_to_fifty_then_counted(count, last):
    text = BW + "".join("note: %d packets lost\n" % n for n in range(count))
    warnings = parse_perftest(text)["warnings"]
    assert len(warnings) == 51 + (count > 50) and warnings[-1] == last


def test_cycles_rows_keep_cycles_and_say_so_once():
    text = LAT.replace(LAT_TABLE, LAT_TABLE.replace("[usec]", "[cycles]"))
    result = parse_perftest(text)
    assert set(result["rows"][0]) == LAT_KEYS | {"t_min_cycles", "t_max_cycles", "t_typical_cycles", "t_avg_cycles",
                                                 "t_stdev_cycles", "p99_cycles", "p99_9_cycles"}
    assert result["rows"][0]["t_typical_cycles"] == 1.27 and result["rows"][0]["t_typical_us"] is None
    assert "latency values are CPU cycles (-C / --report-cycles): *_us values are null, see *_cycles" in \
        result["warnings"]


def test_a_latency_run_has_no_bandwidth_peak_to_miss():
    text = LAT.replace("Disabling dynamic polling", "WARNING: BW peak won't be measured in this run.")
    assert not [w for w in parse_perftest(text)["warnings"] if w.startswith("BW peak was not measured")]


@pytest.mark.parametrize("unit, t_typical", [(None, 1.27), ("usec", 1.27), ("psec", None)])
def test_latency_without_a_unit_is_microseconds_and_in_an_unknown_unit_null(unit, t_typical):
    table = LAT_TABLE.replace("[usec]", "[%s]" % unit if unit else "")
    names = ["t_min", "t_max", "t_typical", "t_avg", "t_stdev", "99% percentile", "99.9% percentile"]
    if unit is None:      # without units the words of a name are not told from the next name's: one per line
        table = " #bytes #iterations " + " ".join("%s[]" % name for name in names) + "\n"
    assert parse_perftest(table + LAT_ROW)["rows"][0]["t_typical_us"] == t_typical


def test_rows_after_a_new_table_header_are_read_with_its_columns():
    second = (" #bytes     #iterations    BW average[Gb/sec]   MsgRate[Mpps]   CPU_Util[%]\n"
              " 131072     5000     391.00     0.372884     12.50\n")
    rows = parse_perftest(BW.replace(BW_ROW, BW_ROW + second))["rows"]
    assert rows[1] == {"bytes": 131072, "iterations": 5000, "bw_peak_gbps": None, "bw_avg_gbps": 391.0,
                       "msg_rate_mpps": 0.372884, "cpu_util_pct": 12.5}


@pytest.mark.parametrize("header, columns", [
    (" #bytes #iterations t_avg[usec] tps", ["#bytes", "#iterations", "t_avg[usec]", "tps"]),
    (" #bytes #iterations t_avg[usec] tps average", ["#bytes", "#iterations", "t_avg[usec]", "tps average"]),
    (" #bytes #iterations t avg tps average", ["#bytes", "#iterations", "t avg", "tps average"]),
    (" #bytes #iterations t avg tps average Msg Rate", ["#bytes", "#iterations", "t avg", "tps average", "Msg Rate"]),
    (" #bytes #iterations t_avg[usec] tps average Msg Rate", ["#bytes", "#iterations", "t_avg[usec]", "tps average", "Msg Rate"]),
])
def test_the_header_is_split_into_names_at_units_and_at_tps_average(header, columns):
    assert parse_perftest(header + "\n 2 1000 1.09 916521.28\n")["columns"] == columns


@pytest.mark.parametrize("name, key, value", [
    ("TPS", "tps", 916521.28),
    ("50% percentile[usec]", "50_pct_percentile_usec", 916521.28),
    ("Depth]", "depth", 916521.28),
    ("Depth[x", "depth_x", 916521.28),
    ("Rate[Gb[2]/sec]", "rate_gb_2_sec", 916521.28),
    ("---", "column", 916521.28),
])
def test_a_column_the_table_adds_is_keyed_by_its_name_and_unit(name, key, value):
    row = parse_perftest(" #bytes #iterations t_avg[usec] %s\n 2 1000 1.09 916521.28\n" % name)["rows"][0]
    assert row[key] == value


def test_a_service_level_column_is_an_integer():
    row = parse_perftest(" #bytes #iterations #SL BW average[Gb/sec]\n 65536 5000 3 392.34\n")["rows"][0]
    assert (row["sl"], type(row["sl"])) == (3, int)


@pytest.mark.parametrize("after, read, bad", [
    ("", True, 0), ("7", True, 1), ("7 8", True, 1), ("-7", True, 1), (".5", True, 1),
    ("7 8 9", False, 0), ("x2 slower", True, 0), ("X2", True, 0), ("1a", False, 0), ("-5x", False, 0),
])
def test_words_after_a_rows_values_are_more_values_when_they_start_as_numbers(after, read, bad):
    result = parse_perftest(bw_with(BW_TABLE + BW_ROW.rstrip() + " " + after + "\n" + BW_ROW.rstrip() + " " + after + "\n"))
    assert len(result["rows"]) == (2 if read else 0)
    assert bool([w for w in result["warnings"] if w.startswith("%d result row(s) did not have" % (2 * bad))]) is bool(bad)


@pytest.mark.parametrize("row", [" 2 1000\n", " 2\n"])
def test_a_line_of_fewer_than_three_numbers_is_no_row(row):
    assert parse_perftest(BW_TABLE + row)["rows"] == []


def test_a_three_column_table_has_rows():
    assert parse_perftest(" #bytes #iterations BW average[Gb/sec]\n 65536 5000 392.34\n")["rows"] == [
        {"bytes": 65536, "iterations": 5000, "bw_avg_gbps": 392.34, "bw_peak_gbps": None, "msg_rate_mpps": None}]


@pytest.mark.parametrize("peak, average, expected", [("0.00", "0.00", 0.0), ("0.00", "nan", 0.0), ("0.00", "1.00", None)])
def test_a_zero_peak_is_unmeasured_only_beside_a_measured_average(peak, average, expected):
    row = " 65536      5000             %s             %s \t\t     0.748336\n" % (peak, average)
    assert parse_perftest(bw_with(BW_TABLE + row))["rows"][0]["bw_peak_gbps"] == expected


def test_bandwidth_in_mib_per_second_is_given_to_six_decimals():
    table = BW_TABLE.replace("Gb/sec", "MB/sec") + " 65536 5000 18.79 18.67 2.446776\n"
    assert parse_perftest(table)["rows"][0]["bw_avg_gbps"] == 0.156615     # 18.67 * 8 * 2^20 / 1e9 = 0.15661...


def test_header_fields_alone_are_perftest_output_that_was_read():
    assert parse_perftest(" Mtu             : 4096[B]\n")["warnings"] == []


def test_lines_that_belong_to_an_earlier_line_that_never_came_are_dropped_quietly():
    text = BW.replace(" local address", " GID: 00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:01\nerrno: 5\n local address")
    result = parse_perftest(text)
    assert result["ok"] is True and "gid" not in result["local_addresses"][0]
    assert not [w for w in result["warnings"] if "not understood" in w]


def test_a_word_that_only_starts_with_bytes_is_no_table_header():
    result = parse_perftest(" #bytesfoo #iterations BW peak[Gb/sec]\n 65536 5000 392.38\n")
    assert result["columns"] == [] and result["rows"] == []
