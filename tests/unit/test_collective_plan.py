# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bandwidth formulas, verdicts, the bisection planner and records (collective_plan.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import itertools
import os
import random

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_bisect import commcheck_bisect
from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_collective_records import (
    commcheck_collective_records,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import bisection
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


# ----------------------------------------------------------------- bisection

def simulate(n, bad, **kw):
    pool = pool_of(n)
    bad_set = set(pool[i] for i in bad)
    plan, runs = bisection.bisect_simulate(pool, lambda hosts: bool(bad_set & set(hosts)), **kw)
    return plan, runs, bad_set


@pytest.mark.parametrize("n", list(range(3, 17)))
def test_one_bad_node_isolated_in_about_log2_runs(n):
    worst = 0
    for index in range(n):
        plan, runs, truth = simulate(n, [index])
        assert plan["conclusion"] == "isolated", (index, runs)
        assert set(plan["bad_nodes"]) == truth
        assert not plan["inferred"]
        assert all(len(r["hosts"]) >= 2 for r in runs)
        worst = max(worst, len(runs))
    # pool run + halving down to a pair + confirming pair + the run of the rest
    log2 = (n - 1).bit_length()
    assert worst <= log2 + 4, worst


@pytest.mark.parametrize("n", list(range(4, 17)))
def test_two_bad_nodes_isolated(n):
    for pair in itertools.combinations(range(n), 2):
        plan, runs, truth = simulate(n, pair)
        assert set(plan["bad_nodes"]) == truth, (pair, runs)
        assert plan["conclusion"] == "isolated"
        assert len(runs) <= 2 * n + 3


def test_run_counts_for_four_and_eight_hosts():
    """The numbers reported for the issue: runs (pool run included) with one slow host."""
    four = [len(simulate(4, [i])[1]) for i in range(4)]
    eight = [len(simulate(8, [i])[1]) for i in range(8)]
    assert four == [6, 5, 5, 5]
    assert eight == [7, 6, 6, 7, 6, 6, 6, 6]
    without_verify = [len(simulate(8, [i], verify=False)[1]) for i in range(8)]
    assert max(without_verify) == 6


def test_healthy_pool_is_one_run():
    plan, runs, dummy = simulate(8, [])
    assert plan["conclusion"] == "healthy" and len(runs) == 1 and plan["good_nodes"] == pool_of(8)


def test_two_hosts_cannot_be_separated():
    plan, runs, dummy = simulate(2, [1])
    assert plan["conclusion"] == "unresolved"
    assert plan["bad_nodes"] == [] and sorted(plan["unresolved"]) == ["n00", "n01"]
    assert len(runs) == 1


def test_three_hosts_two_bad_unresolved_not_wrong():
    plan, dummy, truth = simulate(3, [0, 2])
    assert plan["conclusion"] in ("unresolved", "isolated")
    assert set(plan["bad_nodes"]) <= truth


def test_all_bad_is_never_blamed_on_a_subset():
    for n in (4, 6):
        plan, runs, truth = simulate(n, range(n))
        assert set(plan["bad_nodes"]) <= truth
        assert plan["conclusion"] in ("unresolved", "isolated")
        assert len(runs) <= 4 * n + 8


def test_flaky_pool_run_blames_nobody():
    pool = pool_of(8)
    calls = []

    def once_bad(hosts):
        calls.append(hosts)
        return len(calls) == 1
    plan, runs = bisection.bisect_simulate(pool, once_bad)
    assert plan["bad_nodes"] == []
    assert plan["conclusion"] == "inconsistent"
    assert plan["unexplained"] == [0]


def test_verify_run_catches_a_bad_host_cleared_by_a_flaky_run():
    # n00 is bad, but the first-half run {n00, n01} flakes good: the search names n02/n03;
    # the run of the pool without them is still bad, so the plan does not trust the names.
    pool = pool_of(4)
    calls = []

    def flaky(hosts):
        calls.append(hosts)
        truth = "n00" in hosts
        return (not truth) if len(calls) == 2 else truth
    plan, runs = bisection.bisect_simulate(pool, flaky)
    assert plan["conclusion"] == "inconsistent"
    assert runs[-1]["hosts"] == ["n00", "n01"] and runs[-1]["bad"]
    # Without the verify run the same flake would blame two healthy hosts.
    del calls[:]
    plan, runs = bisection.bisect_simulate(pool, flaky, verify=False)
    assert plan["conclusion"] == "isolated" and plan["bad_nodes"] == ["n02", "n03"]


@settings(max_examples=150, deadline=None)
@given(n=st.integers(min_value=2, max_value=16), bad=st.sets(st.integers(min_value=0, max_value=15), max_size=3),
       seed=st.integers(min_value=0, max_value=10 ** 6), flake=st.sampled_from([0.0, 0.1, 0.3]))
def test_planner_always_ends_within_bounds(n, bad, seed, flake):
    """Random faults and random flaky results: the plan ends, runs are valid, names come from bad runs."""
    pool = pool_of(n)
    truth = set(pool[i] for i in bad if i < n)
    rng = random.Random(seed)

    def oracle(hosts):
        result = bool(truth & set(hosts))
        return (not result) if rng.random() < flake else result
    plan, runs = bisection.bisect_simulate(pool, oracle, max_runs=4 * n + 8)
    assert plan["done"]
    assert len(runs) <= 4 * n + 8
    assert runs[0]["hosts"] == pool
    for run in runs:
        assert len(run["hosts"]) >= 2 and len(set(run["hosts"])) == len(run["hosts"])
        assert set(run["hosts"]) <= set(pool)
    for node in plan["bad_nodes"]:
        assert any(r["bad"] and node in r["hosts"] for r in runs)
    assert not set(plan["bad_nodes"]) & set(plan["good_nodes"])
    if flake == 0.0 and len(truth) <= 2 and n >= 4:
        assert set(plan["bad_nodes"]) == truth
        assert plan["conclusion"] in ("isolated", "healthy")


def test_plan_is_stepwise_and_checks_the_runs_given():
    pool = ["a", "b", "c", "d"]
    first = bisection.bisect_plan(pool, [])
    assert first["next"] == pool and first["conclusion"] == "pending"
    second = bisection.bisect_plan(pool, [{"hosts": pool, "bad": True}])
    assert second["next"] == ["a", "b"]
    third = bisection.bisect_plan(pool, [{"hosts": pool, "bad": True}, {"hosts": ["b", "a"], "bad": False}])
    assert third["next"] == ["c", "a"] and third["good_nodes"] == ["a", "b"]
    with pytest.raises(bisection.BisectMismatch):
        bisection.bisect_plan(pool, [{"hosts": pool, "bad": True}, {"hosts": ["c", "d"], "bad": False}])
    with pytest.raises(bisection.BisectMismatch):
        bisection.bisect_plan(pool, [{"hosts": pool, "bad": False}, {"hosts": ["a", "b"], "bad": False}])
    stopped = bisection.bisect_plan(pool, [{"hosts": pool, "bad": True}], max_runs=1)
    assert stopped["done"] and stopped["conclusion"] == "max_runs" and stopped["unresolved"] == pool
    with pytest.raises(ValueError):
        bisection.bisect_plan(["a", "a"], [])
    with pytest.raises(ValueError):
        bisection.bisect_plan(["a"], [])


def test_confirm_false_names_by_deduction():
    plan, runs, truth = simulate(8, [7], confirm=False, verify=False)
    assert set(plan["bad_nodes"]) == truth
    assert plan["inferred"] == ["n07"]
    assert len(runs) < len(simulate(8, [7])[1])


def test_bisect_filter_wraps_the_planner():
    runs = [{"hosts": ["n1", "n2", "n3", "n4"], "bad": True}, {"hosts": ["n1", "n2"], "bad": False}]
    out = commcheck_bisect(["n1", "n2", "n3", "n4"], runs=runs)
    assert out["next"] == ["n3", "n1"]
    from ansible.errors import AnsibleFilterError
    with pytest.raises(AnsibleFilterError):
        commcheck_bisect("n1,n2")
    with pytest.raises(AnsibleFilterError):
        commcheck_bisect(["n1", "n2"], runs=[{"hosts": ["n9", "n2"], "bad": True}])


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
    records = commcheck_collective_records([res], mode="pairs")
    assert len(records) == 1
    assert records[0]["verdict"] == "error" and records[0]["peer"] == "b"
    assert records[0]["params"]["mode"] == "pairs"
    assert commcheck_collective_records({"results": [res]}) == commcheck_collective_records([res])


def test_bisect_pool_drives_the_planner_with_a_run_callable():
    pool = ["h%d" % i for i in range(6)]
    seen = []

    def run_subset(hosts):
        seen.append(list(hosts))
        return "h4" in hosts

    plan = bisection.bisect_pool(pool, run_subset, max_runs=2 * len(pool) + 3)
    expected, runs = bisection.bisect_simulate(pool, lambda hosts: "h4" in hosts, max_runs=2 * len(pool) + 3)
    assert plan == expected
    assert seen == [r["hosts"] for r in runs[1:]]   # the pool run is already made
    assert plan["conclusion"] == "isolated" and plan["bad_nodes"] == ["h4"]


def test_bisect_outcome_isolated_names_the_nodes():
    plan = {"conclusion": "isolated", "bad_nodes": ["h4"], "good_nodes": ["h0"], "unresolved": [],
            "inferred": [], "unexplained": [], "runs": 5}
    bad, cause, summary = bisection.bisect_outcome(plan, "slow", 6)
    assert bad == ["h4"] and cause == "slow; bisection names h4 (6 runs)"
    assert summary["suspects"] == [] and summary["conclusion"] == "isolated" and "bad_nodes" not in summary


def test_bisect_outcome_inconsistent_keeps_suspects_out_of_bad_nodes():
    plan = {"conclusion": "inconsistent", "bad_nodes": ["h2"], "good_nodes": [], "unresolved": [],
            "inferred": [], "unexplained": [3], "runs": 4}
    bad, cause, summary = bisection.bisect_outcome(plan, "slow", 5)
    assert bad == [] and summary["suspects"] == ["h2"]
    assert cause.startswith("slow; bisection does not add up (5 runs)") and "(suspects: h2)" in cause


def test_bisect_outcome_unresolved_says_what_it_could_not_separate():
    plan = {"conclusion": "unresolved", "bad_nodes": [], "good_nodes": [], "unresolved": ["h0", "h1"],
            "inferred": [], "unexplained": [], "runs": 3}
    bad, cause, summary = bisection.bisect_outcome(plan, "slow", 3)
    assert bad == [] and cause == "slow; bisection could not separate h0, h1 (3 runs)"
