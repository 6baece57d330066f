# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The parts of the bisection planner (bisection.py) the whole-search tests pass by: the pairs across stuck
groups, the caps on a search that cannot end, bisect_pool's defaults and bisect_outcome's words."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import bisection


def pool_of(n):
    return ["n%02d" % i for i in range(n)]


def hosts_of_rounds(plan):
    return [[run["hosts"] for run in made] for made in plan["rounds"]]


# ------------------------------------------------------------- stuck groups

def test_disjoint_pairs_pairs_every_host_it_can_not_only_those_before_the_first_paired():
    assert bisection._disjoint_pairs(["a", "b", "c", "d", "e", "f"], set()) == [["a", "b"], ["c", "d"], ["e", "f"]]
    # a pair run before is not run again: a goes with c, b with d
    assert bisection._disjoint_pairs(["a", "b", "c", "d"], {frozenset(("a", "b"))}) == [["a", "c"], ["b", "d"]]


def test_stuck_groups_are_paired_all_in_one_round():
    """Four bad hosts of seven: no known-good host is left to pair a suspect with, and every stuck pair of the
    round runs at once (n05 with n06 beside n01 with n03 and the good n00 with n02)."""
    bad = {"n01", "n03", "n04", "n05"}
    plan, runs = bisection.bisect_simulate(pool_of(7), lambda hosts: bool(bad & set(hosts)), confirm=False)
    assert hosts_of_rounds(plan)[3] == [["n01", "n03"], ["n00", "n02"], ["n05", "n06"]]
    assert plan["conclusion"] == "isolated" and sorted(plan["bad_nodes"]) == sorted(bad)
    assert len(runs) == 13


def test_a_pool_bad_everywhere_stops_pairing_after_four_runs_a_host():
    """Every host of ten bad: nobody is ever known good, so the search pairs suspects until it has made more
    than 4 runs a host (40), then leaves them all unresolved; without max_runs nothing else stops it."""
    plan, runs = bisection.bisect_simulate(pool_of(10), lambda hosts: True, max_runs=None)
    sizes = [len(made) for made in plan["rounds"]]
    assert sum(sizes[:-1]) == 40 and len(runs) == 42
    assert plan["conclusion"] == "unresolved" and plan["bad_nodes"] == [] and plan["good_nodes"] == []
    assert sorted(plan["unresolved"]) == pool_of(10)


def test_bisect_simulate_stops_at_64_runs_unless_told_otherwise():
    pool = pool_of(13)
    bad = set(pool) - {"n00", "n11"}

    def is_bad(hosts):
        return bool(bad & set(hosts))

    plan, runs = bisection.bisect_simulate(pool, is_bad)
    assert len(runs) == 64 and plan["conclusion"] == "max_runs"
    more, more_runs = bisection.bisect_simulate(pool, is_bad, max_runs=65)
    assert len(more_runs) == 65 and more["conclusion"] == "max_runs"


# --------------------------------------------------------------- bisect_pool

def drive(pool, is_bad, **kw):
    def run_round(subsets, number):
        return [is_bad(hosts) for hosts in subsets]
    return bisection.bisect_pool(pool, run_round, **kw)


def test_bisect_pool_confirms_a_deduced_node_by_default():
    """Three hosts, n02 bad: the halving leaves n02 deduced; by default it is named only after a run of it with
    a known-good host (and then it is not inferred), with confirm=False at once."""
    def is_bad(hosts):
        return "n02" in hosts

    plan = drive(pool_of(3), is_bad)
    assert plan["bad_nodes"] == ["n02"] and plan["inferred"] == []
    assert plan == bisection.bisect_simulate(pool_of(3), is_bad, max_runs=None)[0]
    deduced = drive(pool_of(3), is_bad, confirm=False)
    assert deduced["bad_nodes"] == ["n02"] and deduced["inferred"] == ["n02"]
    assert len(deduced["rounds"]) < len(plan["rounds"])


def test_bisect_pool_verifies_by_default_and_keeps_its_budget():
    def is_bad(hosts):
        return "n05" in hosts

    plan = drive(pool_of(8), is_bad)
    last = plan["rounds"][-1]
    assert len(last) == 1 and sorted(last[0]["hosts"]) == sorted(set(pool_of(8)) - {"n05"})
    unverified = drive(pool_of(8), is_bad, verify=False)
    assert len(unverified["rounds"]) == len(plan["rounds"]) - 1
    capped = drive(pool_of(8), is_bad, max_runs=3)
    assert capped["conclusion"] == "max_runs" and capped["runs"] <= 3


def test_bisect_pool_refuses_a_round_answered_with_too_few_results():
    with pytest.raises(bisection.BisectMismatch, match=r"^round 2: 1 result\(s\) for 2 run\(s\)$"):
        bisection.bisect_pool(pool_of(6), lambda subsets, number: [True])


# ------------------------------------------------------------------ outcome

def outcome_plan(conclusion, **kw):
    plan = {"conclusion": conclusion, "bad_nodes": [], "good_nodes": [], "unresolved": [], "inferred": [],
            "unexplained": [], "runs": 5, "retest": None,
            "rounds": [[{"hosts": ["h0", "h1"], "bad": True, "round": 1}]] * 3}
    plan.update(kw)
    return plan


def test_bisect_outcome_summary_keeps_each_list_of_the_plan():
    plan = outcome_plan("isolated", bad_nodes=["h4", "h7"], good_nodes=["h0", "h1"], unresolved=["h9"],
                        inferred=["h7"], unexplained=[2], retest="failed", runs=8)
    bad, cause, summary = bisection.bisect_outcome(plan, "slow", 9)
    assert bad == ["h4", "h7"]
    assert cause == "slow; bisection names h4, h7 (9 runs in 3 rounds)"
    assert summary == {"conclusion": "isolated", "good_nodes": ["h0", "h1"], "unresolved": ["h9"],
                       "inferred": ["h7"], "unexplained": [2], "runs": 8, "retest": "failed", "suspects": [],
                       "rounds": 3}


def test_bisect_outcome_unresolved_without_names_speaks_of_the_hosts():
    bad, cause, _summary = bisection.bisect_outcome(outcome_plan("unresolved"), "slow", 4)
    assert bad == [] and cause == "slow; bisection could not separate the hosts (4 runs in 3 rounds)"
    bad, cause, _summary = bisection.bisect_outcome(
        outcome_plan("max_runs", unresolved=["h2", "h3"], bad_nodes=["h5", "h6"]), "slow", 7)
    assert bad == ["h5", "h6"]
    assert cause == "slow; bisection could not separate h2, h3 (7 runs in 3 rounds); named h5, h6"


def test_bisect_outcome_inconsistent_words():
    _bad, cause, _summary = bisection.bisect_outcome(
        outcome_plan("inconsistent", bad_nodes=["h2", "h3"], unexplained=[1]), "slow", 5)
    assert cause == ("slow; bisection does not add up (5 runs in 3 rounds): a run without any node it would name "
                     "was bad as well (suspects: h2, h3). A flaky result or a fault that needs many hosts at once "
                     "(a shared link or switch) is likely; run the check again")
    _bad, cause, summary = bisection.bisect_outcome(outcome_plan("inconsistent", unexplained=[1]), "slow", 5)
    assert summary["suspects"] == []
    assert cause == ("slow; bisection does not add up (5 runs in 3 rounds): a run without any node it would name "
                     "was bad as well. A flaky result or a fault that needs many hosts at once (a shared link or "
                     "switch) is likely; run the check again")
    _bad, cause, _summary = bisection.bisect_outcome(
        outcome_plan("inconsistent", unexplained=[1], retest="failed"), "slow", 6)
    assert cause == ("slow; the pool failed again on retest while no part of it failed on its own (6 runs in 3 "
                     "rounds): the fault needs hosts of both halves together (a shared link, a switch, the fabric)")


# ------------------------------------------------------------ the search's turns

def scripted(answers):
    """An oracle that answers the runs in the order they are asked, whatever their hosts (a flaky fabric)."""
    answers = list(answers)
    return lambda hosts: answers.pop(0)


def test_a_host_beside_a_bad_half_that_found_no_partner_waits_and_is_not_blamed():
    """Five hosts, runs of three, n03 bad: the half [n03] and the half [n04] each need two known-good partners and
    only three are known, so n04 waits while [n03] runs bad; n04 then runs on its own (good) and is not named."""
    plan, _runs = bisection.bisect_simulate(pool_of(5), lambda hosts: "n03" in hosts, min_size=3, confirm=False)
    assert hosts_of_rounds(plan) == [[pool_of(5)], [["n00", "n01", "n02"]], [["n03", "n00", "n01"]],
                                     [["n04", "n00", "n01"]], [["n00", "n01", "n02", "n04"]]]
    assert plan["bad_nodes"] == ["n03"] and plan["conclusion"] == "isolated"


def test_a_lone_suspect_waiting_for_its_confirmation_is_not_halved_into_a_run_of_good_hosts():
    bad = {"n02", "n03", "n04", "n08"}
    plan, _runs = bisection.bisect_simulate(pool_of(11), lambda hosts: bool(bad & set(hosts)), max_runs=20)
    assert hosts_of_rounds(plan)[4] == [["n03", "n09"], ["n04", "n10"], ["n08", "n00"]]
    assert plan["conclusion"] == "isolated" and sorted(plan["bad_nodes"]) == sorted(bad)


@pytest.mark.parametrize("n,min_size,number,waiting", [
    (6, 2, 3, [["n02", "n05"]]),
    (10, 3, 3, [["n03", "n04", "n08", "n09"]]),
])
def test_hosts_waiting_for_partners_run_together_not_halved(n, min_size, number, waiting):
    """A pool bad everywhere: the halves too small to run wait, and then run as one group, unsplit."""
    plan, _runs = bisection.bisect_simulate(pool_of(n), lambda hosts: True, min_size=min_size, max_runs=None)
    assert hosts_of_rounds(plan)[number] == waiting
    assert plan["conclusion"] == "unresolved" and plan["bad_nodes"] == []


def test_a_long_search_of_twelve_hosts_is_not_cut_short():
    bad = {"n01", "n03", "n06", "n08"}
    plan, _runs = bisection.bisect_simulate(pool_of(12), lambda hosts: bool(bad & set(hosts)), min_size=3,
                                            confirm=False)
    assert len(plan["rounds"]) == 10
    assert plan["conclusion"] == "isolated" and sorted(plan["bad_nodes"]) == sorted(bad)


def test_only_the_pool_run_without_the_sole_suspect_stands_for_the_verify_run():
    """Three hosts: the pool bad, then [n00, n01] good, so n02 is deduced bad. That halving run was the pool
    without n02, but no hypothesis run: the verify run repeats it, and its bad result makes the search inconsistent
    (a flaky fabric), where taking the halving run as the verify run had named n02."""
    plan, runs = bisection.bisect_simulate(pool_of(3), scripted([True, False, True]), confirm=False)
    assert [run["hosts"] for run in runs] == [pool_of(3), ["n00", "n01"], ["n00", "n01"]]
    assert plan["conclusion"] == "inconsistent" and plan["bad_nodes"] == ["n02"] and plan["unexplained"] == [2]


# ------------------------------------------------------------ bisect_plan's answer

def test_bisect_plan_answers_every_key_finished_or_pending():
    pool = pool_of(4)
    assert bisection.bisect_plan(pool, [{"hosts": pool, "bad": False}]) == {
        "done": True, "next": None, "next_round": [], "round": None, "bad_nodes": [], "good_nodes": pool,
        "inferred": [], "unresolved": [], "unexplained": [], "conclusion": "healthy", "runs": 1,
        "rounds": [[{"hosts": pool, "bad": False, "round": 1}]], "retest": None}
    pending = bisection.bisect_plan(pool, [{"hosts": pool, "bad": True}, {"hosts": ["n00", "n01"], "bad": False}])
    assert pending == {
        "done": False, "next": ["n02", "n03"], "next_round": [["n02", "n03"]], "round": 2, "bad_nodes": [],
        "good_nodes": [], "inferred": [], "unresolved": [], "unexplained": [], "conclusion": "pending", "runs": 2,
        "rounds": [[{"hosts": pool, "bad": True, "round": 1}]], "retest": None}


def test_bisect_plan_confirms_a_deduced_node_by_default():
    pool = pool_of(3)
    runs = [{"hosts": pool, "bad": True}, {"hosts": ["n00", "n01"], "bad": False}]
    assert bisection.bisect_plan(pool, runs)["next_round"] == [["n02", "n00"]]
    assert bisection.bisect_plan(pool, runs, confirm=False)["bad_nodes"] == ["n02"]


def test_bisect_plan_refuses_bad_input_with_what_is_wrong():
    with pytest.raises(ValueError, match=r"^pool has duplicate hosts$"):
        bisection.bisect_plan(["a", "b", "a"])
    with pytest.raises(ValueError, match=r"^bisection needs at least 3 hosts, got 2$"):
        bisection.bisect_plan(["a", "b"], min_size=3)
    pool = pool_of(4)
    first = {"hosts": pool, "bad": True}
    with pytest.raises(bisection.BisectMismatch,
                       match=r"^run 2 was on \['n00', 'n02'\] but the round asked for "
                             r"\[\['n00', 'n01'\], \['n02', 'n03'\]\]$"):
        bisection.bisect_plan(pool, [first, {"hosts": ["n02", "n03"], "bad": False},
                                     {"hosts": ["n00", "n02"], "bad": False}])
    healthy = [{"hosts": pool, "bad": False}]
    with pytest.raises(bisection.BisectMismatch, match=r"^2 run\(s\) given after the plan was complete$"):
        bisection.bisect_plan(pool, healthy + [{"hosts": ["n00", "n01"], "bad": False}] * 2)


def test_runs_of_one_host_find_the_bad_one_of_two():
    plan, _runs = bisection.bisect_simulate(["n00", "n01"], lambda hosts: "n01" in hosts, min_size=1)
    assert hosts_of_rounds(plan) == [[["n00", "n01"]], [["n00"], ["n01"]], [["n00"]]]
    assert plan["conclusion"] == "isolated" and plan["bad_nodes"] == ["n01"]
