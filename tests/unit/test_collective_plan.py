# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bandwidth formulas, verdicts and records (collective_plan.py); the bisection planner is in test_bisection.py."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import collective_plan as cp
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_hccl_test import parse_hccl_test
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import (
    parse_nccl_tests,
    parse_nccl_tests_json,
)

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "corpus")


def corpus(name):
    with open(os.path.join(CORPUS, name)) as handle:
        return handle.read()


def pool_of(n):
    return ["n%02d" % i for i in range(n)]


# ---------------------------------------------------------------- bandwidth

@pytest.mark.parametrize("op,n,factor", [
    ("all_reduce", 2, 1.0), ("all_reduce", 8, 1.75), ("all_reduce", 16, 1.875), ("all_reduce", 1, 0.0),
    ("all_gather", 4, 0.75), ("reduce_scatter", 8, 0.875), ("alltoall", 2, 0.5), ("alltoallv", 4, 0.75),
    ("broadcast", 16, 1.0), ("reduce", 8, 1.0), ("sendrecv", 2, 1.0),
])
def test_bus_factor_is_nccl_tests_formula(op, n, factor):
    assert cp.bus_factor(op, n) == pytest.approx(factor)


def test_bus_factor_refuses_zero_ranks():
    with pytest.raises(ValueError):
        cp.bus_factor("all_reduce", 0)


def test_expected_busbw_from_nic_rates():
    # 8 x 400 Gb/s NICs: 400 GB/s line rate, 90% of it expected.
    assert cp.expected_busbw([400] * 8, 0.9) == 360.0
    assert cp.expected_busbw([200, 200], 1.0) == 50.0
    assert cp.expected_busbw([], 0.9) is None
    assert cp.expected_busbw([0, None], 0.9) is None


def test_measured_busbw_metrics_on_real_h100_output():
    parsed = parse_nccl_tests(corpus("nccl_tests/all_reduce_perf_2node_16gpu_h100_mpirun.txt"))
    peak = cp.measured_busbw(parsed, "max")
    assert peak == pytest.approx(parsed["max_busbw_gbs"], rel=1e-4)
    largest = cp.measured_busbw(parsed, "largest")
    assert largest == pytest.approx(parsed["busbw_at_max_bytes_gbs"], rel=1e-4)
    assert cp.measured_busbw(parsed, "avg") == pytest.approx(parsed["avg_busbw_gbs"], rel=1e-4)
    assert cp.measured_busbw({"rows": []}) is None


def test_hccl_rows_get_bus_bandwidth():
    parsed = parse_hccl_test(corpus("hccl_tests/all_reduce_test_official_doc_example_8npu.txt"))
    rows = cp.hccl_rows_with_busbw(parsed, "all_reduce", 8)
    last = rows[-1]
    assert last["bytes"] == 67108864
    assert last["out_of_place"]["algbw_gbs"] == pytest.approx(23.76245)
    assert last["out_of_place"]["busbw_gbs"] == pytest.approx(23.76245 * 1.75, rel=1e-4)
    assert last["out_of_place"]["wrong"] == 0


# ------------------------------------------------------------------ verdicts

def judge(parsed, **kw):
    kw.setdefault("rc", 0)
    kw.setdefault("timed_out", False)
    library = kw.pop("library", "nccl")
    return cp.judge_run(library, kw.pop("operation", "all_reduce"), kw.pop("nranks", 16), kw.pop("rc"),
                        kw.pop("timed_out"), parsed, **kw)


def test_verdict_pass_and_fail_against_expected_busbw():
    parsed = parse_nccl_tests(corpus("nccl_tests/all_reduce_perf_2node_16gpu_h100_mpirun.txt"))
    peak = cp.measured_busbw(parsed)
    ok = judge(parsed, expected_busbw_gbs=peak / 0.8 - 1)
    assert ok["verdict"] == "pass" and ok["cause"] is None
    low = judge(parsed, expected_busbw_gbs=peak / 0.8 + 5)
    assert low["verdict"] == "fail"
    assert "below" in low["cause"] and low["fix"]
    assert low["threshold_busbw_gbs"] == pytest.approx((peak / 0.8 + 5) * 0.8, rel=1e-3)
    assert judge(parsed)["verdict"] == "pass"  # no expectation: measured and clean


def test_wrong_results_fail_even_when_fast():
    parsed = parse_nccl_tests(corpus("nccl_tests/all_gather_perf_old_2018_no_redop_root_oob_failed.txt"))
    out = judge(parsed, rc=1, operation="all_gather", expected_busbw_gbs=1)
    assert out["verdict"] == "fail"
    assert out["wrong"] >= 4
    assert "corrupted" in out["cause"]


def test_cuda_failure_is_an_error_with_the_parsers_cause():
    parsed = parse_nccl_tests(corpus("nccl_tests/all_reduce_perf_test_nccl_failure_unhandled_cuda_error.txt"))
    out = judge(parsed, rc=1)
    assert out["verdict"] == "error"
    assert "CUDA" in out["cause"]
    assert out["fix"]


def test_launcher_error_is_reported_not_the_missing_table():
    parsed = parse_hccl_test(corpus("hccl_tests/hccl_test_orted_not_found_openmpi.txt"))
    out = judge(parsed, rc=1, library="hccl")
    assert out["verdict"] == "error"
    assert "orted" in out["cause"] or "daemon" in out["cause"]


def test_timeout_is_an_error():
    out = judge({"rows": []}, rc=-9, timed_out=True, timeout=60)
    assert out["verdict"] == "error" and "60s" in out["cause"]


def test_socket_instead_of_ib_fails_and_explains_why():
    parsed = parse_nccl_tests(corpus("nccl_tests/all_reduce_perf_2node_16gpu_h100_mpirun.txt"))
    parsed["transport"] = "Socket"
    out = judge(parsed, ib_expected=True)
    assert out["verdict"] == "fail"
    assert "NET/Socket" in out["cause"] and "NCCL_IB_HCA" in out["fix"]
    assert out["warnings"]
    slow = judge(parsed, ib_expected=True, expected_busbw_gbs=1000)
    assert slow["verdict"] == "fail" and "NET/Socket" in slow["cause"] and "below" in slow["cause"]
    assert "NCCL_IB_HCA" in slow["fix"]
    assert judge(parsed, ib_expected=False)["verdict"] == "pass"


def test_hccl_verdict_uses_bus_bandwidth():
    parsed = parse_hccl_test(corpus("hccl_tests/all_reduce_test_official_doc_example_8npu.txt"))
    out = judge(parsed, library="hccl", nranks=8, expected_busbw_gbs=40, min_fraction=0.8)
    assert out["busbw_gbs"] == pytest.approx(23.76245 * 1.75, rel=1e-3)
    assert out["verdict"] == "pass"
    assert judge(parsed, library="hccl", nranks=8, expected_busbw_gbs=60)["verdict"] == "fail"


def test_named_hosts_and_global_errors():
    hosts = [{"name": "gpu-1", "address": "10.0.0.1"}, {"name": "gpu-2", "address": "10.0.0.2"}]
    judged = {"verdict": "error", "errors": [
        {"code": "mpi_launch_failed", "hosts": ["10.0.0.2"]}, {"code": "no_table", "hosts": []}]}
    assert cp.named_hosts(judged, hosts) == ["gpu-2"]
    assert not cp.global_error(judged)
    judged = {"verdict": "error", "errors": [{"code": "invalid_arguments", "hosts": ["gpu-1"]}]}
    assert cp.named_hosts(judged, hosts) == []
    assert cp.global_error(judged)
    assert not cp.global_error({"verdict": "fail", "errors": [{"code": "invalid_arguments"}]})


def test_json_numbers_with_stdout_transport_and_errors():
    doc = {"version": 1, "args": ["/opt/all_reduce_perf", "-b", "1M"], "env": ["SECRET_TOKEN=abc"],
           "nccl_version": 22703,
           "config": {"nthreads": 1, "ngpus": 1, "minimum_bytes": 1048576, "maximum_bytes": 2097152},
           "results": [{"size": 2097152, "count": 524288, "type": "float", "redop": "sum", "root": "    -1",
                        "out_of_place": {"time": 100.0, "alg_bw": 20.97152, "bus_bw": 31.45728, "nwrong": 0.0},
                        "in_place": {"time": 99.0, "alg_bw": 21.18, "bus_bw": 31.77, "nwrong": 0.0}}],
           "out_of_bounds": {"count": 0, "okay": "true"},
           "average_bus_bandwidth": {"bandwidth": 31.6, "okay": "unchecked"}, "errors": [""]}
    text = parse_nccl_tests("h1:1:1 [0] NCCL INFO Using network IB\n"
                            "ssh: connect to host 10.0.0.9 port 22: No route to host\n")
    merged = cp.merge_json_result(text, parse_nccl_tests_json(doc))
    assert merged["format"] == "json"
    assert merged["transport"] == "IB"
    assert cp.measured_busbw(merged) == pytest.approx(31.77)
    assert "mpi_launch_failed" in [e["code"] for e in merged["errors"]]
    assert "no_table" not in [e["code"] for e in merged["errors"]]
    assert "SECRET_TOKEN" not in repr(merged)
    assert cp.merge_json_result(text, {"rows": []}) is text


# ------------------------------------------------------------------- records

def module_result():
    return {
        "params": {"library": "nccl", "operation": "all_reduce", "hosts": ["h1", "h2", "h3", "h4"]},
        "verdict": "fail", "cause": "slow", "fix": "check h3",
        "expected_busbw_gbs": 0.06, "threshold_busbw_gbs": 0.03,
        "runs": [
            {"hosts": ["h1", "h2", "h3", "h4"], "cmd": ["mpirun", "-np", "4"], "busbw_gbs": 0.01,
             "verdict": "fail", "cause": "slow", "fix": "bisect", "duration_s": 9.0},
            {"hosts": ["h1", "h2"], "cmd": ["mpirun", "-np", "2"], "busbw_gbs": 0.05, "verdict": "pass"},
            {"hosts": ["h3", "h1"], "cmd": ["mpirun", "-np", "2"], "busbw_gbs": 0.01, "verdict": "fail"},
        ],
        "bad_nodes": ["h3"], "bisect": {"conclusion": "isolated"},
    }


def test_records_one_per_run_plus_findings():
    records = cp.collective_records([module_result(), {"skipped": True}], mode="pool", unreachable=["h9"])
    kinds = [r["kind"] for r in records]
    assert kinds == ["collective", "collective", "collective", "finding", "finding"]
    pool = records[0]
    assert pool["host"] == "h1" and pool["peer"] is None
    assert pool["params"]["stage"] == "pool" and pool["params"]["nodes"] == 4 and pool["params"]["mode"] == "pool"
    assert pool["metrics"]["busbw_gbs"] == 0.01 and pool["metrics"]["expected_busbw_gbs"] == 0.06
    assert pool["evidence"] == ["mpirun -np 4"]
    pair = records[2]
    assert pair["host"] == "h3" and pair["peer"] == "h1" and pair["params"]["stage"] == "bisect"
    finding = records[3]
    assert finding["host"] == "h3" and finding["verdict"] == "fail" and "bisection" in finding["cause"]
    assert records[4]["host"] == "h9" and records[4]["verdict"] == "error"


def test_records_of_a_result_that_never_ran():
    res = {"params": {"library": "hccl", "operation": "all_reduce", "hosts": ["a", "b"]}, "runs": [],
           "verdict": "error", "cause": "binary missing", "fix": "install", "cmd": ["mpirun", "x"]}
    records = cp.collective_records([res], mode="pairs")
    assert len(records) == 1
    assert records[0]["verdict"] == "error" and records[0]["peer"] == "b"
    assert records[0]["params"]["mode"] == "pairs"


def test_the_pool_record_carries_bus_bandwidth_per_size_for_the_chart():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model
    rows = [{"bytes": 1048576, "out_of_place": {"busbw_gbs": 0.03}, "in_place": {"busbw_gbs": 0.031}},
            {"bytes": 2097152, "out_of_place": {"busbw_gbs": 0.04}}, {"bytes": 0, "out_of_place": {"busbw_gbs": 0.0}}]
    res = {"params": {"library": "nccl", "operation": "all_reduce", "hosts": ["h1", "h2"]}, "verdict": "pass",
           "result": {"rows": rows}, "runs": [{"hosts": ["h1", "h2"], "verdict": "pass", "busbw_gbs": 0.04}]}
    [record] = cp.collective_records([res])
    assert record["metrics"]["rows"] == [{"bytes": 1048576, "busbw_gbs": 0.03}, {"bytes": 2097152, "busbw_gbs": 0.04}]
    [series] = report_model.collective_series([record])
    assert series["points"] == [(1048576.0, 0.03), (2097152.0, 0.04)]
