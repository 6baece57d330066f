# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Designed retests (verdicts/retest_design.py): after the first retest pass, more passes of the pairs not measured
yet that separate what the evidence still leaves open, bounded by ``commcheck_retest_rounds``; and localization
naming each of several faults on its own.

The fault cases run the chain the roles run (``fault_lab.Fabric``: first pass, retest pass 1, the designed
passes, ``judgement.judge_retests``); the bounds run through the pair-check engine's steps the action calls
(``pair_engine.retests`` / ``retest_again`` / ``judge``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import families
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits as cp
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest_design as rd
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.retest import RetestError
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import pair_engine as engine

from fault_lab import Fabric
from test_pair_check_action import run_step
from test_pair_engine import RDMA, SHARED, TCP, by_host, fleet_of, reader


def named(fabric):
    return [(cp.describe(c), c["confidence"]) for c in fabric.run()]


def designed(fabric):
    """(pass, purpose, server, client, rail) of the retests of the passes after the first."""
    return [(i["pass"], i["purpose"], i["server"], i["client"], i["rail"]) for i in fabric.plan["retests"]
            if i["pass"] > 1]


def measured_purposes(fabric):
    """(pass, purpose, verdict) of every retest record the run judged."""
    return sorted(set((r["params"]["retest_pass"], r["params"]["retest_purpose"], r["verdict"])
                      for r in fabric.judged["records"] if (r.get("params") or {}).get("retest")))


def bw(host, peer, rail, verdict, **params):
    return {"kind": "rdma_bw", "host": host, "peer": peer, "verdict": verdict,
            "params": dict({"op": "write", "metric": "bw", "rail": rail}, **params), "metrics": {"bw_gbps": 1.0}}


def ring(hosts, rail, bad):
    """The first pass of a ring: a link fails when one of its ends is in ``bad``."""
    return [bw(a, b, rail, "fail" if a in bad or b in bad else "pass")
            for a, b in zip(hosts, hosts[1:] + hosts[:1])]


# ------------------------------------------------------------------ the hypotheses and the pairs that separate them

def test_a_pass_clears_both_hosts_a_failure_with_a_cleared_host_confirms_the_other_and_the_rest_is_unresolved():
    hosts = ["h1", "h2", "h3", "h4", "h5", "h6"]
    records = ring(hosts, 0, ("h2", "h4", "h6")) + [
        bw("h1", "h3", 0, "pass", retest=True, retest_purpose="cross"),
        bw("h2", "h4", 0, "fail", retest=True, retest_purpose="control")]
    seen = rd.hypotheses(rd.link_evidence(records)[(0, "write", "bw")])
    assert seen["cleared"] == ["h1", "h3"]
    assert seen["confirmed"] == ["h2", "h4", "h6"]
    # h5 failed only with hosts that are bad themselves: it may be either
    assert seen["unresolved"] == ["h5"]
    # the next pass: h5 with a cleared host it never met, nothing else
    assert rd.designed_pairs(rd.link_evidence(records)[(0, "write", "bw")]) == [("partner", "h5", "h1", ["h5"])]


def test_nothing_ambiguous_plans_no_further_pass():
    hosts = ["h1", "h2", "h3", "h4"]
    # h2 failed with h1 and h3, which passed with h4: confirmed, nothing else open
    plan = rd.next_pass(ring(hosts, 0, ("h2",)), 2)
    assert (plan["rounds"], plan["retests"], plan["hosts"]) == ([], [], [])
    assert plan["summary"]["planned"] == 0


def test_a_rail_where_no_host_passed_gets_control_and_cross_pairs_once_and_none_after_a_control_failed():
    hosts = ["h1", "h2", "h3", "h4", "h5", "h6"]
    records = ring(hosts, 1, hosts)
    plan = rd.next_pass(records, 2)
    assert [(i["purpose"], i["server"], i["client"], i["rail"], i["suspects"]) for i in plan["retests"]] == [
        ("control", "h2", "h4", 1, ["h1", "h3", "h5"]), ("cross", "h1", "h3", 1, ["h1", "h3", "h5"])]
    assert all(job["retest"]["retest_pass"] == 2 for rnd in plan["rounds"] for job in rnd["jobs"])
    # the control pair failed too: the fabric's evidence, no more pairs to measure it again
    failed = [bw("h2", "h4", 1, "fail", retest=True, retest_purpose="control"),
              bw("h1", "h3", 1, "fail", retest=True, retest_purpose="cross")]
    assert rd.next_pass(records + failed, 3)["retests"] == []


def test_a_partner_pair_keeps_the_subject_in_its_role_and_serves_its_failing_pairs():
    hosts = ["h1", "h2", "h3", "h4", "h5", "h6"]
    records = ring(hosts, 0, ("h1", "h3", "h5")) + [
        bw("h2", "h4", 0, "pass", retest=True, retest_purpose="control"),
        bw("h1", "h3", 0, "fail", retest=True, retest_purpose="cross")]
    plan = rd.next_pass(records, 2, max_jobs=5)
    # h6 failed only with h5 and h1, both bad: it meets h2, a cleared host it never met, as the client it was
    # in its first failing pair (h5 - h6)
    assert [(i["purpose"], i["server"], i["client"], i["subject"], i["partner"]) for i in plan["retests"]] == [
        ("partner", "h2", "h6", "h6", "h2")]
    assert plan["retests"][0]["origins"] == [{"server": "h5", "client": "h6"}, {"server": "h6", "client": "h1"}]
    job = plan["rounds"][0]["jobs"][0]["retest"]
    assert (job["retest_purpose"], job["retest_pass"], job["subject"], job["origins"]) == (
        "partner", 2, "h6", ["h5-h6", "h6-h1"])
    assert rd.next_pass(records, 2, max_jobs=0)["skipped"][0]["reason"] == "over max_jobs (0)"


@pytest.mark.parametrize("number,max_jobs,repeats", [(1, 200, 1), (True, 200, 1), (2, -1, 1), (2, 200, 0)])
def test_a_bad_pass_number_budget_or_repeats_is_refused_before_anything_is_planned(number, max_jobs, repeats):
    with pytest.raises(RetestError):
        rd.next_pass([], number, max_jobs=max_jobs, repeats=repeats)


# ------------------------------------------------------------------ several faults, each named on its own

def test_two_opposite_slow_hosts_of_a_ring_of_four_are_named_by_one_pass_of_control_and_cross_pairs():
    fabric = Fabric(4, 2, pattern="ring").slow(0.3, "h2").slow(0.3, "h4")
    assert named(fabric) == [("host h2", "high"), ("host h4", "high")]
    # h1 - h3 passes, h2 - h4 fails: nothing left open after the first retest pass
    assert measured_purposes(fabric) == [(1, "as_is", "fail"), (1, "control", "fail"), (1, "cross", "pass")]
    assert designed(fabric) == []


@pytest.mark.parametrize("n,bad", [(6, ("h2", "h3")), (6, ("h3", "h4")), (8, ("h4", "h5")), (8, ("h1", "h8"))])
def test_two_adjacent_slow_hosts_of_a_ring_are_each_named(n, bad):
    fabric = Fabric(n, 2, pattern="ring")
    for host in bad:
        fabric.slow(0.3, host)
    assert [name for name, _c in named(fabric)] == ["host %s" % h for h in bad]


def test_three_alternate_slow_hosts_of_a_ring_of_six_take_a_second_pass_that_clears_the_host_between_two():
    fabric = Fabric(6, 2, pattern="ring").slow(0.3, "h2").slow(0.3, "h4").slow(0.3, "h6")
    assert [name for name, _c in named(fabric)] == ["host h2", "host h4", "host h6"]
    # after pass 1 (h1 - h3 passed) h5 had failed only with h4 and h6: pass 2 meets it with h1 on each rail
    assert designed(fabric) == [(2, "partner", "h5", "h1", 0), (2, "partner", "h5", "h1", 1)]
    assert (2, "partner", "pass") in measured_purposes(fabric)


@pytest.mark.parametrize("rounds,passes", [(0, 1), (1, 2), (2, 2)])
def test_the_designed_passes_never_exceed_commcheck_retest_rounds(rounds, passes):
    fabric = Fabric(6, 2, pattern="ring", retest_rounds=rounds).slow(0.3, "h1").slow(0.3, "h3").slow(0.3, "h5")
    assert [name for name, _c in named(fabric)] == ["host h1", "host h3", "host h5"]
    assert len(fabric.plan["passes"]) == passes
    assert max(r["params"]["retest_pass"] for r in fabric.judged["records"]
               if (r.get("params") or {}).get("retest")) == passes


@pytest.mark.parametrize("n,link", [(4, ("h3", "h4")), (6, ("h4", "h5")), (8, ("h5", "h6"))])
def test_a_slow_host_and_a_slow_link_elsewhere_in_a_ring_are_named_each(n, link):
    fabric = Fabric(n, 2, pattern="ring").slow(0.3, "h2").slow(0.3, link[0], rail=0, peer=link[1])
    assert [name for name, _c in named(fabric)] == ["host h2", "link %s - %s (rail 0)" % link]


@pytest.mark.parametrize("n,pattern", [(4, "ring"), (8, "ring"), (4, "mesh")])
def test_a_slow_nic_on_rail_0_and_a_slow_plane_of_rail_1_are_named_each(n, pattern):
    fabric = Fabric(n, 2, pattern=pattern).slow(0.3, "h2", rail=0).slow(0.5, rail=1)
    assert [name for name, _c in named(fabric)] == ["nic h2 mlx5_0 (rail 0)", "fabric of rail 1"]
    # the control pairs of rail 1 failed in the first retest pass: no pass measures the plane again
    assert designed(fabric) == []


def test_two_hosts_are_not_separable_and_no_pass_is_designed():
    fabric = Fabric(2, 2).slow(0.3, "h2")
    found = fabric.run()
    assert [cp.describe(c) for c in found] == ["link h1 - h2"]
    assert "not separable with two hosts only" in " ".join(found[0]["evidence"] + [found[0]["cause"]])
    assert designed(fabric) == []


# ------------------------------------------------------------------ through the engine's steps

def run_engine(fabric, rounds):
    """first pass, retests, retest_again until it plans nothing (the role's loop of commcheck_retest_rounds
    passes), judge: (every plan the steps returned, the verdicts)."""
    row = families.family("rdma")
    opts = reader(SHARED, RDMA, commcheck_rdma_pattern="ring", commcheck_retest_rounds=rounds)
    fleet = fleet_of(fabric)
    run = engine.plan(row, opts, fleet, 30, forks=50)
    first = engine.first_pass(row, opts, run, by_host(fabric.sides(run["rounds"], "first")), {})
    plans = [engine.retests(row, opts, first, fleet, run, forks=50)]
    sides = fabric.sides(plans[0]["rounds"], "retest")
    for _loop in range(rounds):
        plans.append(engine.retest_again(row, opts, first, fleet, run, plans[-1], sides, forks=50))
        sides += fabric.sides(plans[-1]["rounds"], "retest")
    return plans, engine.judge(row, opts, first, plans[-1], sides, [], [], [], {}, {"preflight": run["preflight"]})


def test_the_engine_plans_pass_2_from_pass_1s_sides_stops_after_it_and_judges_every_pass():
    fabric = Fabric(6, 2, pattern="ring").slow(0.3, "h2").slow(0.3, "h4").slow(0.3, "h6")
    plans, verdicts = run_engine(fabric, 3)
    ran = [(p["retest_pass"], len(p["rounds"]) > 0) for p in plans]
    assert ran == [(1, True), (2, True), (2, False), (2, False)]
    assert plans[1]["message"].startswith("retest pass 2: 2 pair(s) not measured yet")
    assert plans[1]["hosts"] == ["h1", "h5"] and plans[2]["message"] is None
    # the last plan carries every pass's retests for the judge
    assert [i["pass"] for i in plans[-1]["all_retests"]].count(2) == 2
    assert len(plans[-1]["all_rounds"]) == len(plans[0]["rounds"]) + len(plans[1]["rounds"])
    assert verdicts["localized"]["summary"]["hosts"] == ["h2", "h4", "h6"]
    purposes = set((r["params"].get("retest_pass"), r["params"].get("retest_purpose")) for r in verdicts["publish"]
                   if (r.get("params") or {}).get("retest"))
    assert (2, "partner") in purposes and (1, "cross") in purposes


def test_the_engine_plans_no_designed_pass_with_rounds_0():
    fabric = Fabric(6, 2, pattern="ring").slow(0.3, "h2").slow(0.3, "h4").slow(0.3, "h6")
    row = families.family("rdma")
    opts = reader(SHARED, RDMA, commcheck_rdma_pattern="ring", commcheck_retest_rounds=0)
    fleet = fleet_of(fabric)
    run = engine.plan(row, opts, fleet, 30, forks=50)
    first = engine.first_pass(row, opts, run, by_host(fabric.sides(run["rounds"], "first")), {})
    last = engine.retests(row, opts, first, fleet, run, forks=50)
    again = engine.retest_again(row, opts, first, fleet, run, last, fabric.sides(last["rounds"], "retest"), 50)
    assert (again["rounds"], again["hosts"], again["message"]) == ([], [], None)
    assert again["all_retests"] == last["all_retests"] and again["passes"] == last["passes"]


def test_the_tcp_check_takes_the_same_designed_pass_on_ports_past_its_first_pass():
    fabric = Fabric(n=6, rails=1).slow(0.3, host="h2").slow(0.3, host="h4").slow(0.3, host="h6")
    row = families.family("tcp")
    opts = reader(SHARED, TCP, commcheck_tcp_pattern="ring", commcheck_tcp_expected_gbps=95,
                  commcheck_retest_rounds=2)
    rails = dict((h, [{"rail": 0, "address": "10.0.0.%d" % (i + 10)}]) for i, h in enumerate(fabric.hosts))
    fleet = {"hosts": list(fabric.hosts), "unreachable": [], "own": list(fabric.hosts), "slices": 1,
             "facts": {"rails": rails}}
    run = engine.plan(row, opts, fleet, 45, forks=50)
    first = engine.first_pass(row, opts, run, by_host(fabric.tcp_sides(run["rounds"], "first", 0)), {})
    plans = [engine.retests(row, opts, first, fleet, run, forks=50)]
    sides = fabric.tcp_sides(plans[0]["rounds"], "retest", 0)
    for _loop in range(2):
        plans.append(engine.retest_again(row, opts, first, fleet, run, plans[-1], sides, 50))
        sides += fabric.tcp_sides(plans[-1]["rounds"], "retest", 0)
    jobs = [(j["server"], j["client"], j["retest"]["retest_purpose"]) for r in plans[1]["rounds"] for j in r["jobs"]]
    assert jobs == [("h5", "h1", "partner")] and plans[2]["rounds"] == []
    first_ports = set(job["tcp_port"] for job in run["jobs"])
    assert min(j["tcp_port"] for r in plans[1]["rounds"] for j in r["jobs"]) > max(first_ports)
    assert all("test" not in side for r in plans[1]["rounds"] for host_sides in r["sides"].values()
               for side in host_sides)
    verdicts = engine.judge(row, opts, first, plans[-1], sides, [], [], [], {}, {})
    assert "bad nodes ['h2', 'h4', 'h6']" in verdicts["message"]


def test_the_action_plans_pass_2_from_the_retest_sides_gathered_from_every_host():
    fabric = Fabric(6, 2, pattern="ring").slow(0.3, "h2").slow(0.3, "h4").slow(0.3, "h6")
    row = families.family("rdma")
    values = dict(SHARED, **RDMA)
    values.update(commcheck_rdma_pattern="ring", commcheck_retest_rounds=2)
    opts = reader(values)
    fleet = fleet_of(fabric)
    run = engine.plan(row, opts, fleet, 30, forks=50)
    first = engine.first_pass(row, opts, run, by_host(fabric.sides(run["rounds"], "first")), {})
    last = engine.retests(row, opts, first, fleet, run, forks=50)
    kept = by_host(fabric.sides(last["rounds"], "retest"))
    # what fleet_facts gathered (retest_again.yml): each host's kept sides; a host with none has an empty list
    gathered = {"facts": {"retest_sides": dict((h, kept.get(h, [])) for h in fabric.hosts)}}
    task_vars = dict(values, ansible_play_hosts=fabric.hosts, commcheck_pair_perf=first,
                     commcheck_pair_perf_fleet=fleet, commcheck_pair_perf_run=run,
                     commcheck_pair_perf_retest_plan=last, commcheck_pair_perf_fleet_retested=gathered)
    result = run_step("rdma", "retest_again", task_vars)
    assert not result.get("failed"), result
    assert (result["retest_pass"], result["hosts"]) == (2, ["h1", "h5"])
    assert result["message"].startswith("retest pass 2: 2 pair(s)")
    task_vars["commcheck_retest_rounds"] = 0
    assert run_step("rdma", "retest_again", task_vars)["hosts"] == []
