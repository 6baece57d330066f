# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_nccl_tests: every corpus file with values read from it, plus format variants and errors."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os

import pytest

from ansible_collections.clusterops.commcheck.plugins.filter.parse_nccl_tests import FilterModule
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_result import nccl_version_from_code
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import (
    NCCL_TESTS_ERRORS, parse_nccl_tests, parse_nccl_tests_json)
from nccl_captures import CORPUS, codes, load, parse


def row_at(result, size):
    found = [r for r in result["rows"] if r["bytes"] == size]
    assert len(found) == 1, "expected one row of %d bytes" % size
    return found[0]


# --- corpus files ----------------------------------------------------------------

def test_old_2018_all_gather_no_redop_root_error_column_oob_failed():
    r = parse("all_gather_perf_old_2018_no_redop_root_oob_failed.txt")
    assert r["test"] == "all_gather_perf" and r["collective"] == "all_gather"
    assert r["version"] is None and r["nccl_version"] is None
    h = r["header"]
    assert (h["nthread"], h["ngpus"], h["min_bytes"], h["max_bytes"]) == (1, 12, 8, 10737418240)
    assert (h["step_factor"], h["warmup_iters"], h["iters"], h["validation"]) == (2, 5, 20, 1)
    assert "agg_iters" not in h and "graph" not in h
    assert h["wrong_column"] == "error"
    assert len(r["ranks"]) == 12 and r["hosts"] == ["seville"]
    assert r["ranks"][0] == {"rank": 0, "group": None, "pid": 87569, "host": "seville", "device": 0,
                             "bus_id": "0x36", "name": "Tesla V100-SXM3-32GB"}
    assert r["ranks"][11]["bus_id"] == "0xe7"
    assert len(r["rows"]) == 31
    assert all(row["redop"] is None and row["root"] is None for row in r["rows"])
    assert r["rows"][0]["bytes"] == 0 and r["rows"][3]["bytes"] == 48
    row = row_at(r, 1073741808)
    assert row["count"] == 22369621 and row["type"] == "float"
    assert row["out_of_place"] == {"time_us": 13744.0, "algbw_gbs": 71.61, "busbw_gbs": 71.61, "wrong": 0}
    assert row["in_place"]["time_us"] == 8837.0 and row["in_place"]["busbw_gbs"] == 111.38
    assert row_at(r, 8589934560)["out_of_place"]["wrong"] == 1   # '1e+00'
    assert r["avg_busbw_gbs"] == 30.2993 and r["avg_busbw_source"] == "footer"
    assert r["max_busbw_gbs"] == 112.34 and r["max_busbw_bytes"] == 8589934560
    assert r["out_of_bounds"] == 4 and r["out_of_bounds_ok"] is False and r["out_of_bounds_status"] == "FAILED"
    assert codes(r) == ["wrong_results"]
    assert r["ok"] is False


def test_v2_18_5_all_gather_two_nodes_gb10():
    r = parse("all_gather_perf_v2.18.5_2node_gb10.txt")
    assert r["version"] == "2.18.5"
    assert r["nccl_version"] == "2.28.9"      # from nccl-library=22809, no 'NCCL version' line
    assert r["header"]["nccl_library_code"] == 22809
    assert r["test"] == "all_gather_perf"
    assert r["header"]["unalign"] == 0 and r["header"]["warmup_iters"] == 1
    assert r["hosts"] == ["promaxgb10-4c75", "promaxgb10-4c99"]
    assert [x["pid"] for x in r["ranks"]] == [37755, 30808]
    assert r["ranks"][1]["bus_id"] == "000f:01:00" and r["ranks"][1]["name"] == "NVIDIA GB10"
    assert len(r["rows"]) == 1
    row = r["rows"][0]
    assert (row["bytes"], row["count"], row["redop"], row["root"]) == (17179869184, 2147483648, "none", -1)
    assert row["out_of_place"] == {"time_us": 374425.0, "algbw_gbs": 45.88, "busbw_gbs": 22.94, "wrong": 0}
    assert row["in_place"]["busbw_gbs"] == 22.98
    assert r["avg_busbw_gbs"] == 22.9611
    assert r["completed"] is True and r["ok"] is True and r["errors"] == []


def test_two_nodes_16_h100_mpirun_integer_time_column():
    r = parse("all_reduce_perf_2node_16gpu_h100_mpirun.txt")
    assert r["test"] == "all_reduce_perf"       # from the quoted mpirun command
    assert len(r["ranks"]) == 16 and r["nranks"] == 16
    assert r["hosts"] == ["ztan-mig-235z", "ztan-mig-gq73"]
    assert r["ranks"][8] == {"rank": 8, "group": 0, "pid": 6733, "host": "ztan-mig-gq73", "device": 0,
                             "bus_id": "0000:04:00", "name": "NVIDIA H100 80GB HBM3"}
    assert len(r["rows"]) == 31
    assert r["rows"][0]["out_of_place"]["time_us"] == 135.8
    assert row_at(r, 1073741824)["out_of_place"]["time_us"] == 6759.0
    row = row_at(r, 2147483648)      # time switches to integers at >= 10000 us
    assert row["out_of_place"] == {"time_us": 12646.0, "algbw_gbs": 169.81, "busbw_gbs": 318.40, "wrong": 0}
    assert row["in_place"] == {"time_us": 12641.0, "algbw_gbs": 169.88, "busbw_gbs": 318.52, "wrong": 0}
    assert r["avg_busbw_gbs"] == 70.742
    assert r["max_busbw_gbs"] == 338.82 and r["max_busbw_bytes"] == 8589934592
    assert r["busbw_at_max_bytes_gbs"] == 338.82
    assert r["out_of_bounds"] == 0 and r["out_of_bounds_ok"] is True
    assert r["ok"] is True


def test_two_pods_ngpus2_shared_pid_reducing_maxbytes():
    r = parse("all_reduce_perf_2pod_l40s_g2_ngpus2.txt")
    assert r["header"]["ngpus"] == 2 and r["header"]["max_bytes"] == 17179869184
    assert r["header"]["max_bytes_reduced_to"] == 15534478677
    assert any("15534478677" in w for w in r["warnings"])
    assert r["nccl_version"] == "2.27.3+cuda12.9"
    assert [x["pid"] for x in r["ranks"]] == [11142, 11142, 11317, 11317]
    assert [x["device"] for x in r["ranks"]] == [0, 1, 0, 1]
    assert r["hosts"] == ["nvidiatools-29-workload", "nvidiatools-30-workload"]
    assert len(r["rows"]) == 31
    assert row_at(r, 67108864)["out_of_place"]["time_us"] == 10496.0
    last = r["rows"][-1]
    assert last["bytes"] == 8589934592
    assert last["out_of_place"]["time_us"] == 1338003.0 and last["out_of_place"]["busbw_gbs"] == 9.63
    assert last["in_place"]["time_us"] == 1340024.0
    assert r["avg_busbw_gbs"] == 4.74277
    assert r["transport"] is None          # NCCL_DEBUG=VERSION prints no transport lines
    assert r["ok"] is True


def test_two_pods_reducing_maxbytes_one_gpu():
    r = parse("all_reduce_perf_2pod_l40s_reducing_maxbytes.txt")
    assert r["test"] == "all_reduce_perf"
    assert r["nccl_version"] == "2.27.3+cuda12.9"
    assert len(r["ranks"]) == 2 and [x["pid"] for x in r["ranks"]] == [14744, 13965]
    assert len(r["rows"]) == 31
    assert row_at(r, 8192)["out_of_place"] == {"time_us": 15.39, "algbw_gbs": 0.53, "busbw_gbs": 0.53, "wrong": 0}
    assert r["rows"][-1]["out_of_place"]["time_us"] == 1059765.0
    assert r["max_busbw_gbs"] == 8.14 and r["max_busbw_bytes"] == 4294967296
    assert r["busbw_at_max_bytes_gbs"] == 8.12
    assert r["avg_busbw_gbs"] == 3.98762
    assert r["ok"] is True


def test_fragment_with_nccl_info_inside_rows_has_no_complete_row():
    r = parse("all_reduce_perf_fragment_nccl_info_inside_row_srun_label.txt")
    # The excerpt starts inside the 4096 row and ends inside the 8192 row: no row is complete,
    # and the tuning INFO lines ('4096 Bytes -> Algo 0 ...') must not become rows.
    assert r["rows"] == []
    assert any("75.38" in w for w in r["warnings"])
    assert any("8192 2048 float sum -1" in w for w in r["warnings"])
    assert codes(r) == ["no_table"]
    assert r["ok"] is False


def test_nccl_debug_info_warn_and_cuda_failure():
    r = parse("all_reduce_perf_nccl_debug_info_warn_cuda_failure.txt")
    assert r["test"] == "all_reduce_perf"
    assert r["nccl_version"] == "2.25.1+cuda12.8"      # 'NCCL INFO NCCL version' form
    assert r["header"]["ngpus"] == 2 and r["header"]["max_bytes"] == 134217728
    assert [x["bus_id"] for x in r["ranks"]] == ["0x21", "0x61"]
    assert r["transport"] == "Socket" and r["transport_kind"] == "tcp"
    assert r["channel_transports"] == ["SHM"]
    assert any("libibverbs" in w for w in r["warnings"])
    assert any("Could not find a path for pattern 4" in w for w in r["warnings"])
    assert r["rows"] == []
    assert codes(r) == ["nccl_cuda_failure", "no_table"]
    cuda = r["errors"][0]
    assert cuda["count"] == 2 and cuda["hosts"] == ["GENOA-06"]
    assert "Cuda failure 1 'invalid argument'" in cuda["evidence"][0]
    assert any("unhandled cuda error" in m for m in cuda["evidence"])
    assert cuda["cause"] == NCCL_TESTS_ERRORS["nccl_cuda_failure"][0]


def test_oke_mpijob_kubectl_and_ssh_noise():
    r = parse("all_reduce_perf_oke_mpijob_16gpu_a100.txt")
    assert r["test"] is None                     # the log names no binary
    assert len(r["ranks"]) == 16
    assert r["ranks"][0]["bus_id"] == "0x0f" and r["ranks"][15]["bus_id"] == "0xda"
    assert r["hosts"] == ["nccl-allreduce-job0-mpiworker-0", "nccl-allreduce-job0-mpiworker-1"]
    assert len(r["rows"]) == 31
    row = row_at(r, 2147483648)
    assert row["out_of_place"] == {"time_us": 18289.0, "algbw_gbs": 117.42, "busbw_gbs": 220.16, "wrong": 0}
    assert row["in_place"] == {"time_us": 17557.0, "algbw_gbs": 122.31, "busbw_gbs": 229.34, "wrong": 0}
    assert r["avg_busbw_gbs"] == 66.4834
    assert r["warnings"] == [] and r["errors"] == [] and r["ok"] is True


def test_old_k80_error_column_and_info_line_between_header_and_rows():
    r = parse("all_reduce_perf_old_k80_error_col_nccl_info.txt")
    assert r["header"]["wrong_column"] == "error" and r["header"]["columns"]["lead"] == ["bytes", "count", "type", "redop"]
    assert [x["pid"] for x in r["ranks"]] == [195, 196, 198, 197]
    assert all(x["group"] is None for x in r["ranks"])
    assert r["hosts"] == ["2e3f9af7241040529530e810ce60fe5d000002"]
    assert len(r["rows"]) == 7
    first = r["rows"][0]
    assert (first["bytes"], first["redop"], first["root"]) == (33554432, "sum", None)
    assert first["out_of_place"] == {"time_us": 19902.0, "algbw_gbs": 1.69, "busbw_gbs": 2.53, "wrong": 2e-07}
    assert r["rows"][-1]["out_of_place"]["time_us"] == 1258554.0
    assert r["avg_busbw_gbs"] == 2.54225
    assert r["ok"] is True       # an 'error' of 2e-07 is within tolerance: the footer says 0 OK


def test_test_nccl_failure_without_rows():
    r = parse("all_reduce_perf_test_nccl_failure_unhandled_cuda_error.txt")
    assert r["test"] == "all_reduce_perf"        # from the prompt + command line
    assert len(r["ranks"]) == 2 and r["rows"] == []
    assert codes(r) == ["nccl_cuda_failure", "no_table"]
    assert "unhandled cuda error" in r["errors"][0]["message"]
    assert r["errors"][0]["hosts"] == ["GENOA-06"]
    assert r["ok"] is False


def test_ucx_error_before_nccl_starts():
    r = parse("mpirun_ucx_error_before_nccl_start.txt")
    assert r["test"] == "all_reduce_perf"
    assert codes(r) == ["ucx_error", "no_table"]
    ucx = r["errors"][0]
    assert "ibv_create_ah" in ucx["message"] and "mlx5_15" in ucx["message"]
    assert "No such device" in ucx["message"]     # the wrapped second line is joined
    assert "UCX_NET_DEVICES" in ucx["hint"]
    assert r["header"] == {} and r["ranks"] == []


def test_every_corpus_file_has_a_test_above():
    """Here, or in the tests of the captures made on a real GPU (test_nccl_real_device_*.py)."""
    names = set(os.listdir(CORPUS))
    here = os.path.dirname(os.path.abspath(__file__))
    source = "".join(open(os.path.join(here, name)).read()
                     for name in ("test_parse_nccl_tests.py", "test_nccl_real_device_capture.py",
                                  "test_nccl_real_device_failures.py", "test_nccl_real_device_mpirun.py"))
    assert names and all(name in source for name in names), sorted(n for n in names if n not in source)


# --- format variants -----------------------------------------------------------

NEWEST = "\n".join([
    "# nccl-tests version 2.18.5 nccl-headers=22809 nccl-library=22809",
    "# Collective test starting: all_reduce_perf",
    "# nThread 1 nGpus 8 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 "
    "validation: 1 graph: 0 unalign: 0",
    "#",
    "#  Rank  0 Group  0 Pid   1234 on     node-a device  0 [0000:18:00] NVIDIA H100 80GB HBM3",
    "#",
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong  #bitdiff    i_min    i_max"
    "    i_p99    i_cv%     time   algbw   busbw  #wrong  #bitdiff    i_min    i_max    i_p99    i_cv%           timestamp",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)                       (us)     (us)"
    "     (us)      (%)     (us)  (GB/s)  (GB/s)                       (us)     (us)     (us)      (%) %Y-%m-%d %H:%M:%S",
    "     1048576        262144     float     sum      -1    50.10   20.93   36.63       0         0    49.00    52.00"
    "    51.90     1.20    49.80   21.06   36.85       0         0    48.80    51.00    50.90     1.10  2025-06-01 10:00:01",
    "     2097152        524288     float     sum      -1    80.50   26.05   45.59       0         0    79.00    82.00"
    "    81.90     0.90    80.10   26.18   45.82       0         0    79.10    81.00    80.90     0.80  2025-06-01 10:00:02",
    "# Out of bounds values : 0 OK",
    "# Bitwise mismatches   : 0 OK",
    "# Avg bus bandwidth    : 41.2225 OK",
    "#",
    "# Collective test concluded: all_reduce_perf",
    "",
])


def test_newest_format_bitwise_per_iteration_and_timestamp_columns():
    r = parse_nccl_tests(NEWEST)
    assert len(r["rows"]) == 2
    row = r["rows"][1]
    assert row["timestamp"] == "2025-06-01 10:00:02"
    assert row["out_of_place"]["busbw_gbs"] == 45.59 and row["out_of_place"]["bitdiff"] == 0
    assert row["out_of_place"]["iter_p99_us"] == 81.9 and row["in_place"]["iter_cv_pct"] == 0.8
    assert r["avg_busbw_status"] == "OK" and r["header"]["bitwise_mismatches"] == 0
    assert r["ok"] is True


def test_bitwise_mismatches_above_zero_are_wrong_results_with_the_repeatability_hint():
    failed = NEWEST.replace("# Bitwise mismatches   : 0 OK", "# Bitwise mismatches   : 3 FAILED")
    assert failed != NEWEST
    r = parse_nccl_tests(failed)
    assert r["header"]["bitwise_mismatches"] == 3
    wrong = [e for e in r["errors"] if e["code"] == "wrong_results"]
    assert len(wrong) == 1 and "Bitwise repeatability" in wrong[0]["hint"]
    assert r["ok"] is False


@pytest.mark.parametrize("prefix", ["[1,0]<stdout>:", "[1,0]<stdout>: ", "0: ", "[0] ", "12: ", "  3: ", "gpu1: ",
                                    "[1,0]<stdout>:[0] "])
def test_launcher_prefixes_give_the_same_result(prefix):
    plain = parse_nccl_tests(NEWEST)
    tagged = parse_nccl_tests("\n".join(prefix + line for line in NEWEST.splitlines()))
    assert tagged["rows"] == plain["rows"]
    assert tagged["ranks"] == plain["ranks"]
    assert tagged["avg_busbw_gbs"] == plain["avg_busbw_gbs"] and tagged["ok"] is True


def test_lines_without_hash_tabs_and_crlf():
    text = "\r\n".join(line.lstrip("#").replace("    ", "\t") for line in NEWEST.splitlines())
    r = parse_nccl_tests(text)
    assert len(r["rows"]) == 2 and r["rows"][0]["in_place"]["busbw_gbs"] == 36.85
    assert r["ranks"][0]["host"] == "node-a" and r["out_of_bounds"] == 0 and r["avg_busbw_gbs"] == 41.2225


def test_row_split_by_nccl_info_lines_is_reassembled():
    # Built from the corpus fragment's shapes: '[0] ' srun labels, tuning INFO lines glued to the row start.
    info = "[0] h100clust-worker-1:497888:497888 [0] NCCL INFO 4096 Bytes -> Algo 0 proto 0 time 25.874907"
    text = "\n".join([
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
        "[0]         4096          1024     float     sum      -1" + info,
        info,
        "[0]     76.01    0.05    0.10      0" + info,
        info,
        "[0]     75.38    0.05    0.10      0",
        "[0]         8192          2048     float     sum      -1    77.00    0.11    0.21      0    76.50    0.11    0.21      0",
    ])
    r = parse_nccl_tests(text)
    assert len(r["rows"]) == 2
    first = r["rows"][0]
    assert first["bytes"] == 4096 and first["partial"] is False and first["split_lines"] == 3
    assert first["out_of_place"] == {"time_us": 76.01, "algbw_gbs": 0.05, "busbw_gbs": 0.10, "wrong": 0}
    assert first["in_place"] == {"time_us": 75.38, "algbw_gbs": 0.05, "busbw_gbs": 0.10, "wrong": 0}
    assert r["rows"][1]["in_place"]["time_us"] == 76.5
    assert r["avg_busbw_source"] == "rows" and r["avg_busbw_gbs"] == pytest.approx((0.1 + 0.1 + 0.21 + 0.21) / 4)


def test_log_lines_with_timestamps_and_extra_tokens():
    r = parse_nccl_tests("[2025-01-29 19:38:32] node7:1234:1234 [0] NCCL INFO Using network IB\n"
                         "node7:1:2 [0] 1.234567 NCCL INFO NCCL version 2.26.2+cuda12.2\n"
                         "node7:1:2 [0] enqueue.cc:1 NCCL WARN Cuda failure 'out of memory'")
    assert r["transport"] == "IB" and r["nccl_version"] == "2.26.2+cuda12.2"
    assert r["errors"][0]["code"] == "nccl_cuda_failure" and r["errors"][0]["hosts"] == ["node7"]


def test_rows_without_footer_warn_that_the_run_may_be_cut():
    lines = NEWEST.splitlines()
    r = parse_nccl_tests("\n".join(lines[:10]))
    assert len(r["rows"]) == 2 and r["completed"] is False
    assert any("no result footer" in w for w in r["warnings"])
    assert r["avg_busbw_source"] == "rows"


def test_no_check_na_and_no_header():
    text = ("      8             2     float     sum      -1    17.10    0.00    0.00    N/A    17.11    0.00    0.00    N/A\n"
            "     16             4     float     sum      -1    16.79    0.00    0.01    N/A    17.07    0.00    0.00    N/A\n")
    r = parse_nccl_tests(text)
    assert [row["root"] for row in r["rows"]] == [-1, -1]
    assert r["rows"][1]["out_of_place"] == {"time_us": 16.79, "algbw_gbs": 0.0, "busbw_gbs": 0.01, "wrong": None}
    assert r["max_busbw_gbs"] == 0.01 and r["ok"] is True


@pytest.mark.parametrize("header,row,redop,root", [
    ("#       size         count    type    root     time   algbw   busbw  error     time   algbw   busbw  error",
     "     8388608       2097152   float       0    120.5   69.61   69.61  0e+00    119.9   69.96   69.96  0e+00", None, 0),
    ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
     "     8388608       2097152     float    none       0    120.5   69.61   69.61      0    119.9   69.96   69.96      0", "none", 0),
    ("#       size         count      type     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
     "     8388608       2097152     float    120.5   69.61   69.61      0    119.9   69.96   69.96      0", None, None),
])
def test_columns_are_mapped_by_the_header(header, row, redop, root):
    r = parse_nccl_tests(header + "\n" + row + "\n")
    assert len(r["rows"]) == 1
    got = r["rows"][0]
    assert (got["redop"], got["root"]) == (redop, root)
    assert got["out_of_place"]["busbw_gbs"] == 69.61 and got["in_place"]["time_us"] == 119.9


def test_unknown_extra_column_is_tolerated():
    text = ("#       size         count      type   redop    root     time   algbw   busbw #wrong  newcol     time   algbw   busbw #wrong  newcol\n"
            "        1024           256     float     sum      -1    20.00    0.05    0.09      0    7.5    20.10    0.05    0.09      0    7.6\n")
    r = parse_nccl_tests(text)
    assert r["rows"][0]["out_of_place"]["newcol"] == 7.5 and r["rows"][0]["in_place"]["time_us"] == 20.1


def test_transport_from_info_lines():
    text = "\n".join([
        "n1:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.1<0>",
        "n1:1:2 [0] NCCL INFO Using network IB",
        "n1:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA",
        "n1:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read",
        "n1:1:2 [0] NCCL INFO Channel 01/0 : 1[1] -> 0[0] via SHM/direct/direct",
    ])
    r = parse_nccl_tests(text)
    assert r["transport"] == "IB" and r["transport_kind"] == "rdma" and r["gdr"] is True
    assert r["channel_transports"] == ["NET/IB", "P2P", "SHM"]
    only_via = parse_nccl_tests("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IBext_v8/0")
    assert only_via["transport"] == "IBext_v8" and only_via["gdr"] is False
    efa = parse_nccl_tests("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/AWS Libfabric/0/GDRDMA")
    assert efa["transport"] == "AWS Libfabric" and efa["transport_kind"] == "rdma"


# --- errors --------------------------------------------------------------------

@pytest.mark.parametrize("text,expected,host", [
    ("n1:12:34 [3] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<59016> with "
     "error 12, opcode 32765, len 0, vendor err 129 (Recv)\n"
     "n1: Test NCCL failure common.cu:1005 'remote process exited or there was a network error / NET/IB : Got "
     "completion from peer 10.0.0.2<59016> with error 12'", ["ib_transport_error", "nccl_remote_error"], "n1"),
    ("n1:1:1 [0] transport/net_ib.cc:611 NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory",
     ["ib_setup_failed"], "n1"),
    ("n1:1:1 [0] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device\n"
     "n1: Test NCCL failure common.cu:958 'unhandled system error (run with NCCL_DEBUG=INFO for details) / "
     "Call to posix_fallocate failed : No space left on device'", ["shm_exhausted", "nccl_system_error"], "n1"),
    ("n1:1:1 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.1.1.2<40000> failed : "
     "Connection refused", ["nccl_bootstrap_failed"], "n1"),
    ("n1: Test NCCL failure common.cu:100 'internal error - please report this issue to the NCCL developers / '",
     ["nccl_internal_error"], "n1"),
    ("n1: Test NCCL failure common.cu:100 'invalid usage (run with NCCL_DEBUG=WARN for details) / '",
     ["nccl_invalid_usage"], "n1"),
    ("n1: Test NCCL failure common.cu:100 'invalid argument (run with NCCL_DEBUG=WARN for details)'",
     ["nccl_invalid_argument"], "n1"),
    ("gpu7: Test timeout (300s) common.cu:404\n .. gpu7 pid 12: Test failure common.cu:500", ["nccl_timeout"], "gpu7"),
    ("gpu7: Test CUDA failure common.cu:891 'out of memory'", ["nccl_cuda_failure"], "gpu7"),
    (" .. gpu7 pid 12: Test failure common.cu:500\n .. gpu7 pid 12: Test failure all_reduce.cu:90", ["test_failure"],
     "gpu7"),
    ("[node1:01234] *** Process received signal ***\n[node1:01234] Signal: Segmentation fault (11)\n"
     "[node1:01234] [ 3] /usr/lib/libnccl.so.2(+0x5a1b2)[0x7f00] ncclProxyService", ["segfault"], "node1"),
    ("mpirun noticed that process rank 0 with PID 0 on node gpu-3 exited on signal 7 (Bus error).", ["bus_error"],
     "gpu-3"),
    ("mpirun noticed that process rank 0 with PID 0 on node gpu-3 exited on signal 9 (Killed).", ["process_killed"],
     "gpu-3"),
    ("There are not enough slots available in the system to satisfy the 16\nslots that were requested",
     ["mpi_launch_failed"], None),
    ("ssh: connect to host node2 port 22: Connection refused", ["mpi_launch_failed"], "node2"),
    ("bash: line 1: orted: command not found\nORTE was unable to reliably start one or more daemons.",
     ["orted_not_found", "mpi_launch_failed"], None),
    ("./build/all_reduce_perf: error while loading shared libraries: libmpi.so.40: cannot open shared object file",
     ["mpi_lib_missing"], None),
    ("./build/all_reduce_perf: error while loading shared libraries: libnccl.so.2: cannot open shared object file",
     ["shared_lib_missing"], None),
    ("mpirun was unable to find the specified executable file, and therefore", ["binary_not_found"], None),
    ("Invalid number of GPUs: 8 requested but only 4 were found.", ["gpu_count_mismatch"], None),
    ("invalid option 'x'", ["invalid_arguments"], None),
    ("ssh: Could not resolve hostname gpu-9: Name or service not known", ["hostname_unresolvable"], "gpu-9"),
])
def test_error_classification(text, expected, host):
    r = parse_nccl_tests(text)
    got = codes(r)
    assert got[:len(expected)] == expected and got[len(expected):] == ["no_table"]
    first = r["errors"][0]
    assert first["message"] and first["cause"] and first["fix"]
    if host:
        assert host in first["hosts"]
    assert r["ok"] is False


def test_hints_name_the_specific_fix():
    memlock = parse_nccl_tests("n1:1:1 [0] NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory")
    assert "memlock" in memlock["errors"][0]["hint"]
    proxy = parse_nccl_tests("[n:1] Signal: Segmentation fault (11)\n[n:1] [ 3] libnccl.so.2 ncclProxyService")
    assert "IPC_LOCK" in proxy["errors"][0]["hint"]
    oom = parse_nccl_tests("n1: Test CUDA failure common.cu:891 'out of memory'")
    assert "memory" in oom["errors"][0]["hint"]
    slots = parse_nccl_tests("There are not enough slots available in the system to satisfy the 4")
    assert "slots" in slots["errors"][0]["hint"]


@pytest.mark.parametrize("warn, words", [
    ("Call to ibv_modify_qp failed with 22 Invalid argument, on dev mlx5_0:1, curr state INIT, next state RTR, "
     "local GID index 3, local GID ::ffff:10.0.1.2, remote GID ::", "peer's (remote) GID is all-zero"),
    ("Call to ibv_modify_qp failed with 61 No data available, on dev mlx5_0:1, curr state INIT, next state RTR, "
     "local GID index 3, local GID ::", "local GID is all-zero"),
    ("Call to ibv_modify_qp failed with 61 No data available, on dev mlx5_0:1, curr state INIT, next state RTR",
     "ENODATA"),
    ("Call to ibv_modify_qp failed with error Network is unreachable", "NCCL_CROSS_NIC=0"),
    ("Call to ibv_modify_qp failed with 22 Invalid argument, on dev mlx5_0:1, curr state INIT, next state RTR, "
     "local GID index 3, local GID ::ffff:10.0.1.2, remote GID ::ffff:10.0.1.3", "NCCL_IB_GID_INDEX"),
])
def test_modify_qp_hint_follows_the_zero_gid_and_the_errno(warn, words):
    r = parse_nccl_tests("n1:1:1 [0] misc/ibvwrap.cc:309 NCCL WARN " + warn)
    assert codes(r)[0] == "ib_setup_failed" and words in r["errors"][0]["hint"]


def test_wrong_values_with_and_without_footer():
    head = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
    rows = ("        1024           256     float     sum      -1    20.00    0.05    0.09      0    20.00    0.05    0.09      0\n"
            "        2048           512     float     sum      -1    21.00    0.10    0.18     17    21.00    0.10    0.18      3\n")
    with_footer = parse_nccl_tests(head + rows + "# Out of bounds values : 2 FAILED\n# Avg bus bandwidth    : 0.135 FAILED\n")
    assert codes(with_footer) == ["wrong_results", "bandwidth_below_min"]
    assert with_footer["errors"][0]["sizes"] == [2048] and with_footer["avg_busbw_status"] == "FAILED"
    without = parse_nccl_tests(head + rows)
    assert codes(without) == ["wrong_results"] and without["rows"][1]["out_of_place"]["wrong"] == 17
    clean = parse_nccl_tests(head + rows.splitlines()[0] + "\n# Out of bounds values : 0 OK\n")
    assert clean["ok"] is True


def test_benign_warn_is_a_warning_not_an_error():
    text = NEWEST + "n:1:2 [0] graph/search.cc:1135 NCCL WARN Could not find a path for pattern 4, falling back\n"
    r = parse_nccl_tests(text)
    assert r["ok"] is True and any("pattern 4" in w for w in r["warnings"])


# --- JSON ----------------------------------------------------------------------

# Shaped like src/util.cu of nccl-tests writes it (devices inside config, root as a padded string,
# okay flags as "true"/"false" strings, "nan" for NaN).
NCCL_JSON = {
    "version": 1, "start_time": "2025-06-01 10:00:00",
    "args": ["./build/all_reduce_perf", "-b", "8", "-e", "16", "-f", "2", "-J", "out.json"],
    "env": ["SECRET_TOKEN=abc"], "nccl_version": 22703,
    "config": {"nthreads": 1, "ngpus": 1, "minimum_bytes": 8, "maximum_bytes": 16, "step_factor": 2,
               "warmup_iters": 5, "iterations": 20, "aggregated_iterations": 1, "validation": 1, "graph": 0,
               "blocking_collectives": "false", "parallel_init": "false",
               "devices": [{"rank": 0, "group": 0, "pid": 10, "hostname": "n1", "device": 0,
                            "device_hex": "0000:18:00", "device_info": "NVIDIA H100 80GB HBM3"}]},
    "results": [
        {"size": 8, "count": 2, "type": "float", "redop": "sum", "root": "    -1",
         "out_of_place": {"time": 10.5, "alg_bw": 0.0, "bus_bw": 0.0, "nwrong": 0.0},
         "in_place": {"time": 10.1, "alg_bw": 0.0, "bus_bw": 0.0, "nwrong": 0.0},
         "actual_iterations": 20, "experiment_name": ""},
        {"size": 16, "count": 4, "type": "float", "redop": "sum", "root": "    -1",
         "out_of_place": {"time": 10.7, "alg_bw": 0.0, "bus_bw": 0.02, "nwrong": None},
         "in_place": {"time": "nan", "alg_bw": 0.0, "bus_bw": 0.01, "nwrong": None},
         "actual_iterations": 20, "experiment_name": ""}],
    "out_of_bounds": {"count": 0, "okay": "true"},
    "average_bus_bandwidth": {"bandwidth": 0.0075, "okay": "unchecked"},
    "errors": [""], "end_time": "2025-06-01 10:00:01",
}


@pytest.mark.parametrize("form", ["text", "bytes", "dict", "direct"])
def test_nccl_tests_json_output(form):
    if form == "text":
        r = parse_nccl_tests(json.dumps(NCCL_JSON, indent=1))
    elif form == "bytes":
        r = parse_nccl_tests(json.dumps(NCCL_JSON).encode())
    elif form == "dict":
        r = parse_nccl_tests(NCCL_JSON)
    else:
        r = parse_nccl_tests_json(json.dumps(NCCL_JSON))
    assert r["format"] == "json" and r["test"] == "all_reduce_perf" and r["nccl_version"] == "2.27.3"
    assert r["header"]["iters"] == 20 and r["header"]["max_bytes"] == 16 and r["header"]["blocking"] is False
    assert r["ranks"] == [{"rank": 0, "group": 0, "pid": 10, "host": "n1", "device": 0, "bus_id": "0000:18:00",
                           "name": "NVIDIA H100 80GB HBM3"}]
    assert [row["root"] for row in r["rows"]] == [-1, -1]
    assert r["rows"][0]["out_of_place"] == {"time_us": 10.5, "algbw_gbs": 0.0, "busbw_gbs": 0.0, "wrong": 0}
    assert r["rows"][1]["in_place"]["time_us"] is None and r["rows"][1]["out_of_place"]["wrong"] is None
    assert r["avg_busbw_gbs"] == 0.0075 and r["max_busbw_gbs"] == 0.02
    assert r["out_of_bounds"] == 0 and r["out_of_bounds_ok"] is True
    assert "SECRET_TOKEN" not in json.dumps(r)
    assert r["ok"] is True


def test_json_after_a_prompt_and_truncated_json():
    r = parse_nccl_tests("$ cat out.json\n" + json.dumps(NCCL_JSON) + "\n$ ")
    assert r["format"] == "json" and len(r["rows"]) == 2
    cut = parse_nccl_tests(json.dumps(NCCL_JSON)[:400])
    assert codes(cut) == ["json_invalid", "no_table"]


def test_rccl_tests_json_list():
    doc = [{"numCycle": 0, "name": "AllReduce", "gpus": 4, "size": 1024, "type": "float", "redop": "sum",
            "inPlace": 0, "time": 19.18, "algBw": 0.053, "busBw": 0.080, "wrong": "0"},
           {"numCycle": 0, "name": "AllReduce", "gpus": 4, "size": 1024, "type": "float", "redop": "sum",
            "inPlace": 1, "time": 19.89, "algBw": 0.051, "busBw": 0.077, "wrong": "N/A"}]
    r = parse_nccl_tests(json.dumps(doc))
    assert len(r["rows"]) == 1 and r["collective"] == "all_reduce"
    assert r["rows"][0]["out_of_place"]["busbw_gbs"] == 0.08 and r["rows"][0]["in_place"]["wrong"] is None


# --- robustness, catalog, filter -------------------------------------------------

@pytest.mark.parametrize("value", [None, b"", b"\xff\xfe\x00", "", "{", "[1,0]<stdout>:", 12, 3.5, ["a"], {"x": 1},
                                   "\x00" * 50, "size count type time busbw"])
def test_odd_input_never_raises(value):
    r = parse_nccl_tests(value)
    assert r["rows"] == [] and r["ok"] is False and "no_table" in codes(r)
    assert not any(e["message"].startswith("parser error") for e in r["errors"])
    json.dumps(r)


REQUIRED = ["nccl_cuda_failure", "nccl_system_error", "nccl_internal_error", "nccl_invalid_usage", "nccl_remote_error",
            "nccl_timeout", "test_failure", "wrong_results", "ib_setup_failed", "ucx_error", "mpi_lib_missing",
            "orted_not_found", "mpi_launch_failed", "segfault", "no_table"]


def test_catalog_has_every_required_code_with_one_line_cause_and_fix():
    for code in REQUIRED:
        assert code in NCCL_TESTS_ERRORS
    for code, (cause, fix) in NCCL_TESTS_ERRORS.items():
        assert cause.strip() and fix.strip() and "\n" not in cause + fix, code


def test_version_codes():
    assert nccl_version_from_code(22703) == "2.27.3"
    assert nccl_version_from_code(2708) == "2.7.8"
    assert nccl_version_from_code("x") is None


def test_filter_plugin_exposes_the_parser():
    filters = FilterModule().filters()
    assert filters["parse_nccl_tests"] is parse_nccl_tests
    assert filters["parse_nccl_tests"](load("all_gather_perf_v2.18.5_2node_gb10.txt"))["avg_busbw_gbs"] == 22.9611


# --- sweep 8: the classes behind its real outputs ----------------------------------------------------------

def test_bare_nccl_failure_behind_a_host_and_prose_that_only_names_one():
    r = parse_nccl_tests("node7: NCCL failure common.cu:916 'unhandled system error'\n")
    assert codes(r) == ["nccl_system_error", "no_table"] and r["errors"][0]["hosts"] == ["node7"]
    # no file:line after it: prose, not the failure line
    r = parse_nccl_tests("the NCCL failure we saw yesterday 'was odd'\n")
    assert codes(r) == ["no_table"]


def test_test_hip_failure_behind_a_host_and_a_hip_out_of_memory():
    r = parse_nccl_tests("mi300: Test HIP failure common.cu:1024 'hipErrorOutOfMemory'\n"
                         " .. mi300 pid 42: Test failure common.cu:900\n")
    assert codes(r) == ["nccl_cuda_failure", "no_table"]
    assert r["errors"][0]["hosts"] == ["mi300"] and "lower -e" in r["errors"][0]["hint"]


@pytest.mark.parametrize("message, code", [
    ("HIP failure 'invalid device pointer' at src/transport/p2p.cc:300", "nccl_cuda_failure"),
    ("cudaIpcOpenMemHandle failed : invalid resource handle", "nccl_cuda_failure"),
    ("Duplicate GPU detected : rank 3 and rank 2 both on CUDA device e2000", "nccl_invalid_usage"),
    ("Socket creation failed : Address family not supported by protocol", "nccl_bootstrap_failed"),
    # a message that only names the word is not a runtime failure
    ("Skipping chip failed check", None),
])
def test_warn_classes_of_sweep8(message, code):
    r = parse_nccl_tests("node1:12:34 [0] file.cc:1 NCCL WARN %s\n" % message)
    assert [e["code"] for e in r["errors"] if e["code"] != "no_table"] == ([code] if code else [])


def test_test_nccl_failure_whose_last_error_is_a_duplicate_gpu_gets_its_hint():
    r = parse_nccl_tests("gpu1: Test NCCL failure common.cu:1005 'invalid usage (run with NCCL_DEBUG=WARN for "
                         "details) / Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000'\n")
    assert codes(r)[0] == "nccl_invalid_usage" and "same GPU" in r["errors"][0]["hint"]


def test_unnamed_log_records_need_the_host_pid_tid_and_device():
    r = parse_nccl_tests("[ INFO     ] Calling PIPE_READ to Child 0\n"
                         "server:12:13 [1] INFO NET : Using interface eth0\n")
    assert codes(r) == ["no_table"] and r["warnings"] == []


@pytest.mark.parametrize("reason, hint", [(" DUE TO NODE FAILURE", "node of the job failed"),
                                          (" DUE TO PREEMPTION", "preempted"), ("", "scancel")])
def test_slurm_cancellations_by_reason(reason, hint):
    r = parse_nccl_tests("slurmstepd: error: *** JOB 77 ON n3 CANCELLED AT 2024-01-01T00:00:00%s ***\n" % reason)
    assert codes(r) == ["job_cancelled", "no_table"] and hint in r["errors"][0]["hint"]
    assert r["errors"][0]["hosts"] == []


def test_json_fragments_need_every_line_to_be_an_object():
    line = '{"#wrong":"0","algBw":1.0,"busBw":1.5,"gpus":2,"inPlace":0,"name":"AllGather","size":8,"time":2.0}'
    assert parse_nccl_tests(line + "\n" + line.replace('"inPlace":0', '"inPlace":1') + "\n")["ok"] is True
    # a file cut while written: its last line is no object
    assert codes(parse_nccl_tests(line + "\n" + line[:30] + "\n")) == ["json_invalid", "no_table"]
