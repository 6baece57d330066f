# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bisection planner (bisection.py): rounds of concurrent runs, retest, confirm and verify."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import itertools
import math
import random

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_bisect import commcheck_bisect
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import bisection


def pool_of(n):
    return ["n%02d" % i for i in range(n)]


def simulate(n, bad, **kw):
    pool = pool_of(n)
    bad_set = set(pool[i] for i in bad)
    plan, runs = bisection.bisect_simulate(pool, lambda hosts: bool(bad_set & set(hosts)), **kw)
    return plan, runs, bad_set


def round_bound(n):
    """The target: the pool run, ceil(log2 N) rounds of halving, the verify run."""
    return int(math.ceil(math.log2(n))) + 2


def hosts_of_rounds(plan):
    return [[run["hosts"] for run in made] for made in plan["rounds"]]


def assert_well_formed(plan, runs, pool, min_size=2):
    """Every run is big enough, on hosts of the pool, and no host is in two runs of one round."""
    assert [run for made in plan["rounds"] for run in made] == runs[:sum(len(r) for r in plan["rounds"])]
    for number, made in enumerate(plan["rounds"], 1):
        in_round = [h for run in made for h in run["hosts"]]
        assert len(in_round) == len(set(in_round)), (number, made)
        assert all(run["round"] == number for run in made)
    for run in runs:
        assert len(run["hosts"]) >= min_size and len(set(run["hosts"])) == len(run["hosts"])
        assert set(run["hosts"]) <= set(pool)


def assert_names_from_bad_runs(plan, runs):
    for node in plan["bad_nodes"]:
        assert any(r["bad"] and node in r["hosts"] for r in runs)
    assert not set(plan["bad_nodes"]) & set(plan["good_nodes"])


def assert_names_confirmed(plan, runs, min_size=2):
    """A node named without being inferred had a bad run of min_size hosts whose others are known good."""
    good = set(plan["good_nodes"])
    for node in set(plan["bad_nodes"]) - set(plan["inferred"]):
        assert any(r["bad"] and node in r["hosts"] and len(r["hosts"]) <= min_size
                   and set(r["hosts"]) - {node} <= good for r in runs), (node, runs)


# ------------------------------------------------------------- one bad node

@pytest.mark.parametrize("n", list(range(2, 34)))
def test_one_bad_node_found_within_the_round_bound(n):
    for index in range(n):
        plan, runs, truth = simulate(n, [index])
        assert_well_formed(plan, runs, pool_of(n))
        assert len(plan["rounds"]) <= round_bound(n), (index, hosts_of_rounds(plan))
        if n == 2:
            # Two hosts cannot be told apart: a run needs both.
            assert plan["conclusion"] == "unresolved" and plan["bad_nodes"] == [] and len(runs) == 1
            continue
        assert plan["conclusion"] == "isolated", (index, hosts_of_rounds(plan))
        assert set(plan["bad_nodes"]) == truth and not plan["inferred"]
        assert_names_confirmed(plan, runs)
        # verify: the pool without the named node is the last run
        assert sorted(runs[-1]["hosts"]) == sorted(set(pool_of(n)) - truth) and not runs[-1]["bad"]


def test_rounds_for_four_and_sixteen_hosts():
    """The rounds reported for the issue: the pool, both halves at once, pairs with partners, verify."""
    plan, runs, dummy = simulate(4, [2])
    assert hosts_of_rounds(plan) == [[["n00", "n01", "n02", "n03"]], [["n00", "n01"], ["n02", "n03"]],
                                     [["n02", "n00"], ["n03", "n01"]], [["n00", "n01", "n03"]]]
    assert [len(simulate(16, [i])[0]["rounds"]) for i in range(16)] == [6] * 16
    assert max(len(simulate(16, [i])[1]) for i in range(16)) == 10
    assert max(len(simulate(16, [i], verify=False)[0]["rounds"]) for i in range(16)) == 5


def test_three_hosts_sole_suspect_run_is_the_verify_run():
    # n01 bad: [n00, n01] bad, then [n01, n02] bad; the pool without n01 clears n00 and n02 and
    # confirms n01 through [n01, n02]; being the pool without the named node it is the verify run too.
    plan, runs, truth = simulate(3, [1])
    assert hosts_of_rounds(plan) == [[["n00", "n01", "n02"]], [["n00", "n01"]], [["n01", "n02"]],
                                     [["n00", "n02"]]]
    assert plan["bad_nodes"] == ["n01"] and plan["conclusion"] == "isolated"


# ------------------------------------------------------------ several bad nodes

@pytest.mark.parametrize("n", list(range(4, 17)))
def test_two_bad_nodes_found(n):
    # Measured bound: the one-bad-node bound from 8 hosts up, two rounds more below.
    bound = round_bound(n) + (0 if n >= 8 else 2)
    for pair in itertools.combinations(range(n), 2):
        plan, runs, truth = simulate(n, pair)
        assert set(plan["bad_nodes"]) == truth, (pair, hosts_of_rounds(plan))
        assert plan["conclusion"] == "isolated"
        assert_names_confirmed(plan, runs)
        assert len(runs) <= 2 * n + 3   # the module's default max_runs
        assert len(plan["rounds"]) <= bound, (pair, hosts_of_rounds(plan))


def test_healthy_pool_is_one_run():
    plan, runs, dummy = simulate(8, [])
    assert plan["conclusion"] == "healthy" and len(runs) == 1 and plan["good_nodes"] == pool_of(8)
    assert len(plan["rounds"]) == 1 and plan["retest"] is None


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


# ----------------------------------------------------------- retest, flaky

def test_flaky_pool_run_is_retested_and_blames_nobody():
    pool = pool_of(8)
    calls = []

    def once_bad(hosts):
        calls.append(hosts)
        return len(calls) == 1
    plan, runs = bisection.bisect_simulate(pool, once_bad)
    assert hosts_of_rounds(plan) == [[pool], [pool[:4], pool[4:]], [pool]]
    assert plan["conclusion"] == "flaky" and plan["retest"] == "passed"
    assert plan["bad_nodes"] == [] and plan["unexplained"] == [0]
    bad, cause, summary = bisection.bisect_outcome(plan, "slow", len(runs))
    assert bad == [] and cause == "failed once, passed on retest (slow; 4 runs in 3 rounds)"
    assert summary["rounds"] == 3 and summary["retest"] == "passed"


def test_pool_failing_again_on_retest_needs_both_halves():
    # A fault that only shows with hosts of both halves in one run (an uplink between them).
    pool = pool_of(8)
    plan, runs = bisection.bisect_simulate(pool, lambda hosts: len(hosts) == len(pool))
    assert hosts_of_rounds(plan) == [[pool], [pool[:4], pool[4:]], [pool]]
    assert plan["conclusion"] == "inconsistent" and plan["retest"] == "failed"
    assert plan["bad_nodes"] == [] and plan["unexplained"] == [0, 3]
    bad, cause, summary = bisection.bisect_outcome(plan, "slow", len(runs))
    assert bad == [] and "failed again on retest" in cause and "both halves together" in cause
    assert summary["retest"] == "failed"


def test_flaky_half_is_retested_as_the_pool():
    # n00 fails twice (the pool and its half), then never: everything is cleared, the pool retested.
    pool = pool_of(8)
    calls = []

    def fades(hosts):
        calls.append(hosts)
        return "n00" in hosts and len(calls) <= 2
    plan, runs = bisection.bisect_simulate(pool, fades)
    assert plan["conclusion"] == "flaky" and plan["bad_nodes"] == []
    assert runs[-1]["hosts"] == pool and not runs[-1]["bad"]
    assert bisection.bisect_outcome(plan, "slow", len(runs))[1].startswith("failed 2 times, passed on retest")


# ---------------------------------------------------------- confirm, verify

def test_verify_run_catches_a_host_blamed_by_flaky_runs():
    # n00 is bad, but its pair run flakes good and runs of n02 with one partner flake bad: n02 is
    # confirmed by a bad run with a known-good partner; the pool without n02 is still bad.
    pool = pool_of(8)

    def flaky(hosts):
        return ("n00" in hosts and set(hosts) != {"n00", "n01"}) or ("n02" in hosts and len(hosts) <= 2)
    plan, runs = bisection.bisect_simulate(pool, flaky)
    assert plan["conclusion"] == "inconsistent" and plan["bad_nodes"] == ["n02"] and plan["retest"] is None
    assert runs[-1]["hosts"] == [h for h in pool if h != "n02"] and runs[-1]["bad"]
    bad, cause, summary = bisection.bisect_outcome(plan, "slow", len(runs))
    assert bad == [] and summary["suspects"] == ["n02"] and "(suspects: n02)" in cause
    # Without the verify run the same flakes would blame a healthy host.
    plan, runs = bisection.bisect_simulate(pool, flaky, verify=False)
    assert plan["conclusion"] == "isolated" and plan["bad_nodes"] == ["n02"]


def test_confirm_false_names_by_deduction():
    # n02 gets no partner in round 2 ([n00, n01] is the only run); [n00, n01] passes, so n02 is deduced.
    plan, runs, truth = simulate(3, [2], confirm=False, verify=False)
    assert plan["bad_nodes"] == ["n02"] and plan["inferred"] == ["n02"]
    confirmed, confirmed_runs, dummy = simulate(3, [2], verify=False)
    assert confirmed["bad_nodes"] == ["n02"] and confirmed["inferred"] == []
    assert confirmed_runs[-1] == {"hosts": ["n02", "n00"], "bad": True, "round": 3}
    assert len(runs) < len(confirmed_runs)


def test_a_deduction_alone_does_not_name_a_node():
    # n02 is deduced after [n00, n01] passed, but its own run with a known-good partner passes (a flaky pool).
    calls = []

    def once_bad(hosts):
        calls.append(hosts)
        return len(calls) == 1
    plan, runs = bisection.bisect_simulate(pool_of(3), once_bad)
    assert plan["bad_nodes"] == [] and plan["conclusion"] == "flaky"
    assert [r["hosts"] for r in runs] == [pool_of(3), ["n00", "n01"], ["n02", "n00"], pool_of(3)]


# ----------------------------------------------------------------- max_runs

@pytest.mark.parametrize("max_runs", list(range(1, 12)))
def test_max_runs_counts_runs_not_rounds(max_runs):
    plan, runs, truth = simulate(8, [3, 6], max_runs=max_runs)
    assert len(runs) <= max_runs
    unlimited, all_runs, dummy = simulate(8, [3, 6])
    if len(all_runs) <= max_runs:
        assert plan == unlimited
        return
    assert plan["conclusion"] == "max_runs" and plan["done"] and plan["next_round"] == []
    # A round that would go past the budget is not started.
    next_round = bisection.bisect_plan(pool_of(8), runs)["next_round"]
    assert len(runs) + len(next_round) > max_runs
    assert set(plan["bad_nodes"]) <= truth
    assert set(plan["unresolved"]) == set(pool_of(8)) - set(plan["good_nodes"]) - set(plan["bad_nodes"])


# ---------------------------------------------------- invariants, any fault

@settings(max_examples=200, deadline=None)
@given(n=st.integers(min_value=3, max_value=40), bad=st.sets(st.integers(min_value=0, max_value=39), max_size=4),
       seed=st.integers(min_value=0, max_value=10 ** 6), flake=st.sampled_from([0.0, 0.1, 0.3]),
       min_size=st.sampled_from([2, 2, 3]), confirm=st.booleans())
def test_no_host_in_two_runs_of_a_round(n, bad, seed, flake, min_size, confirm):
    """Random faults and random flaky results: the plan ends, runs are valid, names come from bad runs."""
    pool = pool_of(n)
    truth = set(pool[i] for i in bad if i < n)
    rng = random.Random(seed)

    def oracle(hosts):
        result = bool(truth & set(hosts))
        return (not result) if rng.random() < flake else result
    plan, runs = bisection.bisect_simulate(pool, oracle, min_size=min_size, confirm=confirm, max_runs=4 * n + 8)
    assert plan["done"]
    assert len(runs) <= 4 * n + 8
    assert runs[0]["hosts"] == pool
    assert_well_formed(plan, runs, pool, min_size)
    assert_names_from_bad_runs(plan, runs)
    if confirm:
        assert_names_confirmed(plan, runs, min_size)
    if plan["conclusion"] == "flaky":
        assert plan["bad_nodes"] == [] and runs[-1]["hosts"] == pool and not runs[-1]["bad"]
    if flake == 0.0 and len(truth) <= 2 and n >= 4 and min_size == 2:
        assert set(plan["bad_nodes"]) == truth
        assert plan["conclusion"] in ("isolated", "healthy")


# ------------------------------------------------------- the plan, stepwise

def test_plan_is_stepwise_and_checks_the_runs_given():
    pool = ["a", "b", "c", "d"]
    first = bisection.bisect_plan(pool, [])
    assert first["next"] == pool and first["next_round"] == [pool] and first["round"] == 1
    assert first["conclusion"] == "pending"
    second = bisection.bisect_plan(pool, [{"hosts": pool, "bad": True}])
    assert second["next_round"] == [["a", "b"], ["c", "d"]] and second["round"] == 2 and second["next"] == ["a", "b"]
    # A round given in part: the rest of it; within a round any order.
    part = bisection.bisect_plan(pool, [{"hosts": pool, "bad": True}, {"hosts": ["d", "c"], "bad": True}])
    assert part["next_round"] == [["a", "b"]] and part["round"] == 2 and part["good_nodes"] == []
    third = bisection.bisect_plan(pool, [{"hosts": pool, "bad": True}, {"hosts": ["d", "c"], "bad": True},
                                         {"hosts": ["b", "a"], "bad": False}])
    assert third["next_round"] == [["c", "a"], ["d", "b"]] and third["round"] == 3
    assert third["good_nodes"] == ["a", "b"] and len(third["rounds"]) == 2
    with pytest.raises(bisection.BisectMismatch):
        bisection.bisect_plan(pool, [{"hosts": pool, "bad": True}, {"hosts": ["a", "c"], "bad": False}])
    with pytest.raises(bisection.BisectMismatch):
        bisection.bisect_plan(pool, [{"hosts": pool, "bad": True}, {"hosts": ["a", "b"], "bad": False},
                                     {"hosts": ["b", "a"], "bad": False}])
    with pytest.raises(bisection.BisectMismatch):
        bisection.bisect_plan(pool, [{"hosts": pool, "bad": False}, {"hosts": ["a", "b"], "bad": False}])
    stopped = bisection.bisect_plan(pool, [{"hosts": pool, "bad": True}], max_runs=2)
    assert stopped["done"] and stopped["conclusion"] == "max_runs" and stopped["unresolved"] == pool
    with pytest.raises(ValueError):
        bisection.bisect_plan(["a", "a"], [])
    with pytest.raises(ValueError):
        bisection.bisect_plan(["a"], [])


def test_bisect_filter_wraps_the_planner():
    runs = [{"hosts": ["n1", "n2", "n3", "n4"], "bad": True}, {"hosts": ["n1", "n2"], "bad": False},
            {"hosts": ["n3", "n4"], "bad": True}]
    out = commcheck_bisect(["n1", "n2", "n3", "n4"], runs=runs)
    assert out["round"] == 3 and out["next_round"] == [["n3", "n1"], ["n4", "n2"]] and out["next"] == ["n3", "n1"]
    from ansible.errors import AnsibleFilterError
    with pytest.raises(AnsibleFilterError):
        commcheck_bisect("n1,n2")
    with pytest.raises(AnsibleFilterError):
        commcheck_bisect(["n1", "n2"], runs=[{"hosts": ["n9", "n2"], "bad": True}])


def test_bisect_pool_drives_the_planner_one_round_at_a_time():
    pool = ["h%d" % i for i in range(6)]
    seen = []

    def run_round(subsets, number):
        seen.append((number, [list(s) for s in subsets]))
        return ["h4" in hosts for hosts in subsets]

    plan = bisection.bisect_pool(pool, run_round, max_runs=2 * len(pool) + 3)
    expected, runs = bisection.bisect_simulate(pool, lambda hosts: "h4" in hosts, max_runs=2 * len(pool) + 3)
    assert plan == expected
    assert seen == [(number, [r["hosts"] for r in made]) for number, made in enumerate(plan["rounds"][1:], 2)]
    assert plan["conclusion"] == "isolated" and plan["bad_nodes"] == ["h4"]
    with pytest.raises(bisection.BisectMismatch):
        bisection.bisect_pool(pool, lambda subsets, number: [True])


# ------------------------------------------------------------------ outcome

def outcome_plan(conclusion, **kw):
    plan = {"conclusion": conclusion, "bad_nodes": [], "good_nodes": [], "unresolved": [], "inferred": [],
            "unexplained": [], "runs": 5, "retest": None,
            "rounds": [[{"hosts": ["h0", "h1"], "bad": True, "round": 1}]] * 4}
    plan.update(kw)
    return plan


def test_bisect_outcome_isolated_names_the_nodes():
    plan = outcome_plan("isolated", bad_nodes=["h4"], good_nodes=["h0"])
    bad, cause, summary = bisection.bisect_outcome(plan, "slow", 6)
    assert bad == ["h4"] and cause == "slow; bisection names h4 (6 runs in 4 rounds)"
    assert summary["suspects"] == [] and summary["conclusion"] == "isolated" and "bad_nodes" not in summary
    assert summary["rounds"] == 4 and summary["runs"] == 5


def test_bisect_outcome_inconsistent_keeps_suspects_out_of_bad_nodes():
    plan = outcome_plan("inconsistent", bad_nodes=["h2"], unexplained=[3])
    bad, cause, summary = bisection.bisect_outcome(plan, "slow", 5)
    assert bad == [] and summary["suspects"] == ["h2"]
    assert cause.startswith("slow; bisection does not add up (5 runs in 4 rounds)") and "(suspects: h2)" in cause


def test_bisect_outcome_unresolved_says_what_it_could_not_separate():
    plan = outcome_plan("unresolved", unresolved=["h0", "h1"], rounds=[[{"hosts": ["h0", "h1"], "bad": True}]])
    bad, cause, summary = bisection.bisect_outcome(plan, "slow", 1)
    assert bad == [] and cause == "slow; bisection could not separate h0, h1 (1 runs in 1 rounds)"
