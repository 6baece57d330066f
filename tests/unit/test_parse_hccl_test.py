# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_hccl_test: every corpus file with values read from it, plus variants and errors."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os

import pytest

from ansible_collections.clusterops.commcheck.plugins.filter.parse_hccl_test import FilterModule
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.mpi_errors import MPI_ERRORS
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_hccl_test import (
    HCCL_TEST_ERRORS, parse_hccl_test)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import parse_nccl_tests

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "corpus", "hccl_tests")


def load(name):
    with open(os.path.join(CORPUS, name), "rb") as handle:
        return handle.read()


def codes(result):
    return [e["code"] for e in result["errors"]]


# --- corpus files ----------------------------------------------------------------

def test_hccl_vm_512kb_real_binary_header_spelling():
    r = parse_hccl_test(load("all_reduce_test_hccl_vm_512KB.txt"))
    assert r["header"]["columns"] == ["data_size", "aveg_time", "alg_bandwidth", "check_result"]
    assert r["header"]["column_units"] == ["Bytes", "us", "GB/s", None]
    assert r["rows"] == [{"bytes": 524288, "avg_time_us": 1000.0, "algbw_gbs": 0.52429, "check": "success",
                          "check_result": "success"}]
    assert r["max_algbw_gbs"] == 0.52429
    assert r["completed"] is None          # no preamble: the maximum size is unknown
    assert r["ok"] is True and r["errors"] == []


def test_official_doc_example_8npu():
    r = parse_hccl_test(load("all_reduce_test_official_doc_example_8npu.txt"))
    h = r["header"]
    assert (h["min_bytes"], h["max_bytes"], h["iters"], h["warmup_iters"]) == (8192, 67108864, 20, 5)
    assert h["time_column"] == "avg_time"          # the documentation's spelling
    assert len(r["rows"]) == 14
    assert r["rows"][0] == {"bytes": 8192, "avg_time_us": 764.55, "algbw_gbs": 0.00998, "check": "success",
                            "check_result": "success"}
    by_size = dict((row["bytes"], row) for row in r["rows"])
    assert by_size[262144]["avg_time_us"] == 1573.45 and by_size[262144]["algbw_gbs"] == 0.15516
    assert by_size[33554432]["algbw_gbs"] == 18.22317
    assert r["rows"][-1]["bytes"] == 67108864 and r["rows"][-1]["avg_time_us"] == 2630.20
    assert all(row["check"] == "success" for row in r["rows"])
    assert r["max_algbw_gbs"] == 23.76245 and r["algbw_at_max_bytes_gbs"] == 23.76245
    assert r["completed"] is True and r["ok"] is True


def test_libmpi_missing_on_every_rank():
    r = parse_hccl_test(load("hccl_test_libmpi_missing_error.txt"))
    assert r["test"] == "all_reduce_test" and r["collective"] == "all_reduce"
    assert codes(r) == ["mpi_lib_missing", "no_table"]
    entry = r["errors"][0]
    assert entry["count"] == 7
    assert "libmpi.so.12" in entry["message"] and "libmpi.so.12" in entry["hint"]
    assert entry["cause"] == MPI_ERRORS["mpi_lib_missing"][0]
    assert r["ok"] is False


def test_orted_not_found_localized_with_daemon_died_block():
    r = parse_hccl_test(load("hccl_test_orted_not_found_openmpi.txt"))
    assert codes(r) == ["orted_not_found", "no_table"]
    entry = r["errors"][0]
    assert entry["message"] == u"bash: orted: 未找到命令"
    assert entry["count"] == 2                     # + 'died unexpectedly with status 127'
    assert "--prefix" in entry["fix"] and "PATH" in entry["fix"]


def test_every_corpus_file_has_a_test_above():
    names = set(os.listdir(CORPUS))
    source = open(__file__, encoding="utf-8").read()
    assert names and all(name in source for name in names)


def test_launcher_errors_are_classified_the_same_by_both_parsers():
    for name in ("hccl_test_orted_not_found_openmpi.txt", "hccl_test_libmpi_missing_error.txt"):
        assert codes(parse_hccl_test(load(name))) == codes(parse_nccl_tests(load(name)))


# --- variants ----------------------------------------------------------------------

def test_mpirun_tag_output_prefix_and_failed_check():
    text = "\n".join("[1,%d]<stdout>:%s" % (i % 2, line) for i, line in enumerate([
        "the minbytes is 8192, maxbytes is 16384, iters is 20, warmup_iters is 5",
        "rank id 3, check result failed",
        "data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:",
        "8192              | 100.00         | 0.08192              | failed",
        "16384             | 110.00         | 0.14894              | success",
    ]))
    r = parse_hccl_test(text)
    assert [row["check"] for row in r["rows"]] == ["failed", "success"]
    assert r["failed_ranks"] == [3] and r["checks_failed"] == 1
    assert codes(r) == ["check_failed"]
    assert r["errors"][0]["sizes"] == [8192]
    assert r["ok"] is False


def test_null_check_and_overflow_warning():
    text = ("data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n"
            "8192              | 100.00         | 0.08192              | NULL\n"
            "Warning: The calculation result overflows, No verification is performed.\n")
    r = parse_hccl_test(text)
    assert r["rows"][0]["check"] is None and r["rows"][0]["check_result"] == "NULL"
    assert r["warnings"] == ["Warning: The calculation result overflows, No verification is performed."]
    assert r["ok"] is True


def test_reordered_columns_and_units_are_mapped_by_header():
    text = "check_result: | alg_bandwidth(GB/s): | data_size(Bytes): | aveg_time(ms):\nsuccess | 1.5 | 1048576 | 0.7\n"
    r = parse_hccl_test(text)
    assert r["rows"][0]["bytes"] == 1048576 and r["rows"][0]["avg_time_us"] == 700.0
    assert r["rows"][0]["algbw_gbs"] == 1.5 and r["rows"][0]["check"] == "success"


def test_header_and_rows_without_pipes():
    text = ("data_size(Bytes):   aveg_time(us):   alg_bandwidth(GB/s):   check_result:\n"
            "8192                 1079.65            0.00759               success\n")
    r = parse_hccl_test(text)
    assert r["rows"] == [{"bytes": 8192, "avg_time_us": 1079.65, "algbw_gbs": 0.00759, "check": "success",
                          "check_result": "success"}]


def test_other_time_and_bus_bandwidth_columns_do_not_overwrite_the_main_ones():
    text = ("data_size(Bytes): | aveg_time(us): | min_time(ms): | alg_bandwidth(GB/s): | bus_bandwidth(GB/s): | "
            "check_result:\n  3: 8192 | 10.0 | 0.009 | 1.5 | 2.5 | success\n")
    r = parse_hccl_test(text)
    assert r["rows"] == [{"bytes": 8192, "avg_time_us": 10.0, "min_time_us": 9.0, "algbw_gbs": 1.5, "busbw_gbs": 2.5,
                          "check": "success", "check_result": "success"}]


# --- errors --------------------------------------------------------------------

@pytest.mark.parametrize("text,expected", [
    ("the minbytes is 8192, maxbytes is 2147483648, iters is 20, warmup_iters is 5\n"
     "hccl interface return err ./common/src/hccl_test_common.cc:538, retcode: 7 \n"
     "This is an error in init_hcclComm.\n"
     "hccl interface return errreturn err ./common/src/hccl_test_common.cc:538, retcode: 7\n"
     "This is an error in init_hcclComm.\n", ["hccl_e_unavail"]),
    ("hcclCommInitRootInfo failed. ret = 12", ["hccl_e_roce_connect"]),
    ("HcclCommInitRootInfo failed, ret HCCL_E_TIMEOUT", ["hccl_e_timeout"]),
    ("hccl interface return err ./x.cc:1, retcode: 99", ["hccl_error"]),
    ("acl interface return err ./common/src/hccl_test_common.cc:411, retcode: 507033", ["acl_error"]),
    ("Process 0 HcclGetRootInfo failed, notify other process to exit", ["hccl_root_info_failed"]),
    ("[ERROR] HCCL(1234,all_reduce_test):2024-01-01 [socket.cc:100] EI0006: Getting socket times out.",
     ["hccl_socket_timeout"]),
    ("Error: The number of device is 0.Check whether the package is correct.", ["npu_not_found"]),
    ("Alloc memory size is larger than free memory, allocSize: 10, freeMem: 1, totalMem: 2", ["npu_out_of_memory"]),
    ("Error: [-p,--npus <npus used for one node>] is invalid, npus must be greater than or equal to 1",
     ["invalid_arguments"]),
    ("hccl_op_base execute failed, Detailed logs are stored at the default path: /root/ascend/log/",
     ["hccl_op_failed"]),
    ("bash: hydra_pmi_proxy: command not found", ["orted_not_found"]),
    ("=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 1 RUNNING AT node2\n=   EXIT CODE: 139",
     ["segfault", "rank_failed"]),
    ("gethostbyname failed", ["hostname_unresolvable"]),
])
def test_error_classification(text, expected):
    r = parse_hccl_test(text)
    got = codes(r)
    assert sorted(got) == sorted(expected + ["no_table"])
    for entry in r["errors"]:
        assert entry["message"] and entry["cause"] and entry["fix"]
    assert r["ok"] is False


def test_retcode_keeps_the_stage():
    r = parse_hccl_test("hccl interface return err ./a.cc:538, retcode: 7\nThis is an error in init_hcclComm.")
    assert r["errors"][0]["stages"] == ["init_hcclComm"] and r["errors"][0]["count"] == 1


@pytest.mark.parametrize("value", [None, b"", b"\xff\xfe", "", "|||", "8192 | x | y | z", 42, ["a"], {"a": 1}])
def test_odd_input_never_raises(value):
    r = parse_hccl_test(value)
    assert r["rows"] == [] and r["ok"] is False and "no_table" in codes(r)
    assert not any(e["message"].startswith("parser error") for e in r["errors"])
    json.dumps(r)


def test_catalog_has_required_codes_with_one_line_cause_and_fix():
    for code in ("mpi_lib_missing", "orted_not_found", "check_failed", "hccl_e_unavail", "hccl_e_timeout",
                 "hccl_e_roce_connect", "hccl_error", "no_table"):
        assert code in HCCL_TEST_ERRORS
    for code, (cause, fix) in HCCL_TEST_ERRORS.items():
        assert cause.strip() and fix.strip() and "\n" not in cause + fix, code


def test_filter_plugin_exposes_the_parser():
    filters = FilterModule().filters()
    assert filters["parse_hccl_test"] is parse_hccl_test
    assert len(filters["parse_hccl_test"](load("all_reduce_test_official_doc_example_8npu.txt"))["rows"]) == 14


def test_a_row_without_a_numeric_time_or_bandwidth_is_not_a_result():
    """Found by the fuzz test: a garbled row ('524288 <junk> <junk> 1000.0') under a header is no result row."""
    text = ("data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n"
            "524288 \u0395          \u27fa 1000.0")
    result = parse_hccl_test(text)
    assert result["rows"] == []
    assert not result["ok"]


@pytest.mark.parametrize("kind, hint", [("Stuck Occurred", "hung"), ("Error cqe Occurred", "hccn_tool"),
                                        ("Something New", None)])
def test_cluster_exception_location_hint_by_exception_type(kind, hint):
    line = ("[ERROR] HCCL(1,all_reduce_test):2025-10-23-17:28:06.049.385 [task_exception_handler.cc:610][1]Cluster "
            "Exception Location[IP/ID]:[10.0.0.7/3], Arrival Time:[Thu Oct 23 17:25:58 2025], Discoverer:[10.0.0.8/0], "
            "ExceptionType:[%s], Possible Reason:..." % kind)
    result = parse_hccl_test(line)
    assert codes(result) == ["hccl_rank_exception", "no_table"] and result["errors"][0]["hosts"] == ["10.0.0.7"]
    error_hint = result["errors"][0]["hint"]
    assert (hint in error_hint and "rank 3 on 10.0.0.7" in error_hint.lower()) if hint else error_hint is None


def test_cann_code_lines_that_time_out_are_read():
    result = parse_hccl_test("EI0006: [PID: 9] 2025-01-01-00:00:00.000.000 Getting socket times out. Reason: ...\n")
    assert codes(result) == ["hccl_socket_timeout", "no_table"]
