# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The parts of collective_retest.py the whole-check tests pass by: a run's view, which results a retest could
change, the findings' records, the checks of the options and the summary. Hosts n9 and n10 (natural order is not
text order), operation all_gather (not all_reduce)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import collective_retest as cr
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.retest import RetestError


def record(hosts, verdict="fail", mode="pairs", busbw=2.0, threshold=10.0, **params):
    base = {"hosts": list(hosts), "operation": "all_gather", "mode": mode, "stage": "pool"}
    base.update(params)
    return {"kind": "collective", "host": hosts[0], "peer": None, "params": base,
            "metrics": {"busbw_gbs": busbw, "threshold_busbw_gbs": threshold}, "verdict": verdict,
            "cause": "slow" if verdict == "fail" else None, "fix": "look" if verdict == "fail" else None,
            "evidence": ["busbw %s" % busbw]}


# ------------------------------------------------------------------ view

def test_the_view_of_a_pair_a_node_and_a_pool():
    pair = record(["n9", "n10"], retest=True, retest_purpose="as_is", attempt=2, origin="n9-n10",
                  retest_id="c3", variant="ib_loopback")
    assert cr.view(pair) == {
        "kind": "collective", "host": "n9", "peer": "n10",
        "params": {"op": "all_gather ib_loopback", "metric": "busbw", "rail": 0, "retest": True,
                   "retest_purpose": "as_is", "attempt": 2, "origin": "n9-n10", "retest_id": "c3"},
        "metrics": {"bw_gbps": 2.0, "expected_gbps": 10.0}, "verdict": "fail", "cause": "slow", "fix": "look",
        "evidence": []}
    node = cr.view(record(["n9"], mode="per_node"), retested=False)
    assert (node["host"], node["peer"], node["verdict"], node["params"]["op"]) == ("n9", "n9", "skipped", "all_gather")
    pool = cr.view(record(["n9", "n10", "n11"], mode="pool"))
    assert (pool["host"], pool["peer"]) == ("n9", "n10,n11")
    # two hosts of a pool are no pair
    assert cr.view(record(["n9", "n10"], mode="pool"))["peer"] == "n10"
    hostless = dict(record(["n9"], mode="per_node"), params={"operation": "all_gather"})
    assert (cr.view(hostless)["host"], cr.view(hostless)["peer"]) == ("n9", "n9")
    assert cr.record_key(hostless) == (("n9",), "all_gather")


def result(hosts, runs=1, **kw):
    out = {"params": {"operation": "all_gather", "hosts": list(hosts)}, "runs": [{}] * runs, "bisect": None,
           "bad_nodes": [], "errors": []}
    out.update(kw)
    return out


def test_a_retest_could_change_only_a_run_made_without_bisection_named_hosts_or_a_launch_refusal():
    results = [result(["n9", "n10"]), result(["n2", "n3"], runs=0), result(["n4", "n5"], skipped=True),
               result(["n6", "n7"], bisect={"conclusion": "isolated"}), result(["n8", "n11"], bad_nodes=["n8"]),
               "not a result", result(["n12", "n13"], params={"operation": "all_gather"})]
    assert cr.retestable(results) == {(("n9", "n10"), "all_gather"), ((), "all_gather")}


def test_bad_options_are_refused_with_what_is_wrong():
    with pytest.raises(RetestError, match=r"^repeats must be an integer from 0 to \d+, got True$"):
        cr.plan([], [], "pairs", repeats=True)
    with pytest.raises(RetestError, match=r"^verdicts must be a list of verdicts, got 'fail'$"):
        cr.plan([], [], "pairs", verdicts="fail")
    with pytest.raises(RetestError, match=r"^verdicts must be a list of verdicts, got \(1,\)$"):
        cr.plan([], [], "pairs", verdicts=(1,))


# ------------------------------------------------------------------ findings

def outcome(mode, hosts, status="confirmed", implicated=(), cleared=()):
    return {"record": 0, "status": status, "hosts": list(hosts), "operation": "all_gather",
            "implicated": list(implicated), "cleared": list(cleared), "mode": mode}


def test_a_node_whose_own_run_fails_again_is_a_finding_once_per_operation():
    found = cr.findings([outcome("per_node", ["n9"]), outcome("per_node", ["n9"]), outcome("pool", ["n9", "n10"]),
                         outcome("per_node", ["n10"], status="flaky")])
    assert found == [{
        "kind": "finding", "host": "n9", "peer": None,
        "params": {"check": "collective", "mode": "per_node", "operation": "all_gather",
                   "code": "collective_node_failed_retest", "hosts": ["n9"]},
        "metrics": {}, "verdict": "fail", "cause": "n9's own all_gather run failed, and failed again on retest",
        "fix": "check this node's GPUs, NICs and links (its RDMA and discovery results)",
        "evidence": ["all_gather on n9: confirmed"]}]


def test_a_side_failing_with_known_good_partners_is_a_node_finding():
    (found,) = cr.findings([outcome("pairs", ["n9", "n10"], implicated=["n10"], cleared=["n9"])])
    assert found["host"] == "n10" and found["params"]["mode"] == "pairs"
    assert found["params"]["hosts"] == ["n9", "n10"]
    assert found["cause"] == "n10's all_gather pair n9-n10 failed, and n10 fails with known-good partners as well"
    assert found["evidence"] == ["all_gather on n9,n10: confirmed"]


def test_a_pair_whose_sides_both_pass_with_partners_is_a_link_finding():
    found = cr.findings([outcome("pairs", ["n9", "n10"], cleared=["n9", "n10"]),
                         outcome("pairs", ["n2", "n3"], cleared=["n3"])])
    assert found == [{
        "kind": "finding", "host": "n9", "peer": "n10",
        "params": {"check": "collective", "mode": "pairs", "operation": "all_gather",
                   "code": "collective_link_failed_retest", "hosts": ["n9", "n10"], "component": "link",
                   "confidence": "medium"},
        "metrics": {}, "verdict": "fail",
        "cause": "the all_gather pair n9-n10 failed again on retest while both hosts pass with known-good partners: "
                 "the path between them is at fault",
        "fix": "check the links and switch ports between the two hosts (their RDMA pair results)",
        "evidence": ["cleared with known-good partners: n9, n10"]}]


def test_the_summary_record_is_the_collective_checks():
    summary = cr.summary_record({"summary": {"retests": 2, "failing_pairs": 1, "flaky": ["n9-n10 rail 0 x busbw"]}})
    assert summary["params"] == {"check": "collective", "family": "collective"} and summary["verdict"] == "flaky"


# ------------------------------------------------------------------ plan

def module_result(hosts, verdict, busbw):
    return {"params": {"library": "nccl", "operation": "all_gather", "hosts": list(hosts), "nodes": len(hosts)},
            "verdict": verdict, "cause": None if verdict == "pass" else "slow", "fix": None, "errors": [],
            "threshold_busbw_gbs": 10.0, "expected_busbw_gbs": 12.5,
            "runs": [{"hosts": list(hosts), "cmd": ["mpirun"], "verdict": verdict, "busbw_gbs": busbw, "round": 1}],
            "bisect": None, "bad_nodes": [], "result": {"rows": [{"bytes": 1 << 20, "busbw_gbs": busbw}]}}


def first_pass_of(results, mode):
    from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.collective_plan import (
        collective_records)
    return collective_records(results, mode=mode)


PAIRS = [["n9", "n10"], ["n11", "n2"], ["n9", "n11"], ["n10", "n2"], ["n9", "n2"], ["n10", "n11"]]


def test_the_pairs_retests_as_is_then_each_side_with_a_known_good_partner_serving_each_pair_it_failed():
    results = [module_result(p, "fail" if "n10" in p else "pass", 2.0 if "n10" in p else 20.0) for p in PAIRS]
    planned = cr.plan(first_pass_of(results, "pairs"), results, "pairs", repeats=1)
    assert planned["summary"] == {"failing_runs": 3, "planned": 8, "as_is": 3, "partner": 5, "skipped": 0}
    items = planned["retests"]
    assert items[0] == {"id": "c1", "purpose": "as_is", "attempt": 1, "hosts": ["n9", "n10"],
                        "operation": "all_gather", "origin": ["n9", "n10"], "origins": [["n9", "n10"]],
                        "subject": None, "partner": None,
                        "params": {"retest": True, "retest_purpose": "as_is", "attempt": 1, "origin": "n9-n10",
                                   "retest_id": "c1"}}
    assert items[4] == {"id": "c5", "purpose": "partner", "attempt": 1, "hosts": ["n10", "n9"],
                        "operation": "all_gather", "origin": ["n10", "n2"], "origins": [["n10", "n2"], ["n10", "n11"]],
                        "subject": "n10", "partner": "n9",
                        "params": {"retest": True, "retest_purpose": "partner", "attempt": 1, "origin": "n10-n2",
                                   "retest_id": "c5", "subject": "n10", "partner": "n9",
                                   "origins": ["n10-n2", "n10-n11"]}}
    assert [(i["purpose"], i["hosts"]) for i in items] == [
        ("as_is", ["n9", "n10"]), ("partner", ["n9", "n2"]), ("partner", ["n11", "n10"]), ("as_is", ["n10", "n2"]),
        ("partner", ["n10", "n9"]), ("partner", ["n9", "n2"]), ("as_is", ["n10", "n11"]), ("partner", ["n2", "n11"])]
    alone = cr.plan(first_pass_of(results, "pairs"), results, "pairs", repeats=1, partners=False)
    assert alone["summary"] == {"failing_runs": 3, "planned": 3, "as_is": 3, "partner": 0, "skipped": 0}


def test_a_node_runs_again_repeats_times_a_pool_once_and_repeats_0_runs_nothing():
    results = [module_result(["n9"], "fail", 2.0), module_result(["n10"], "pass", 20.0)]
    planned = cr.plan(first_pass_of(results, "per_node"), results, "per_node", repeats=2)
    assert [(i["id"], i["attempt"], i["hosts"], i["params"]["origin"]) for i in planned["retests"]] == [
        ("c1", 1, ["n9"], "n9-n9"), ("c2", 2, ["n9"], "n9-n9")]
    assert planned["summary"] == {"failing_runs": 1, "planned": 2, "as_is": 2, "partner": 0, "skipped": 0}
    pool = [module_result(["n9", "n10", "n11"], "fail", 2.0)]
    planned = cr.plan(first_pass_of(pool, "pool"), pool, "pool", repeats=2)
    assert [(i["attempt"], i["params"]["origin"]) for i in planned["retests"]] == [(1, "n9-n10,n11")]
    assert cr.plan(first_pass_of(pool, "pool"), pool, "pool", repeats=0) == {
        "retests": [], "skipped": [], "summary": {"failing_runs": 1, "planned": 0, "as_is": 0, "partner": 0,
                                                  "skipped": 0}}


# ------------------------------------------------------------------ classify

def test_the_outcome_of_each_failing_pair_lands_on_its_own_record():
    """n10 slow with everyone but n11 on retest: n9-n10 and n10-n2 confirmed (n10 implicated), n10-n11 flaky."""
    def tagged(item):
        bad = "n10" in item["hosts"] and item["hosts"] != ["n10", "n11"]
        res = module_result(item["hosts"], "fail" if bad else "pass", 2.0 if bad else 20.0)
        return cr.tag([r for r in first_pass_of([res], "pairs") if r["kind"] == "collective"], item["params"])

    results = [module_result(p, "fail" if "n10" in p else "pass", 2.0 if "n10" in p else 20.0) for p in PAIRS]
    first = first_pass_of(results, "pairs")
    retests = [rec for item in cr.plan(first, results, "pairs", repeats=1)["retests"] for rec in tagged(item)]
    out = cr.classify(first, retests, "pairs")
    assert out["outcomes"] == [
        {"record": 0, "status": "confirmed", "hosts": ["n9", "n10"], "operation": "all_gather",
         "implicated": ["n10"], "cleared": ["n9"], "mode": "pairs"},
        {"record": 3, "status": "confirmed", "hosts": ["n10", "n2"], "operation": "all_gather",
         "implicated": ["n10"], "cleared": ["n2"], "mode": "pairs"},
        {"record": 5, "status": "flaky", "hosts": ["n10", "n11"], "operation": "all_gather",
         "implicated": ["n10"], "cleared": ["n11"], "mode": "pairs"}]
    assert len(out["records"]) == len(first) + len(retests) == 14
    confirmed, flaky = out["records"][0], out["records"][5]
    assert confirmed["verdict"] == "fail" and confirmed["metrics"]["retests"] == 3
    assert confirmed["evidence"] == ["mpirun", "retest as is: fail (2)", "retest of n9 with known-good n2: pass 20",
                                     "retest of n10 with known-good n11: fail 2",
                                     "also fails with a known-good partner: n10"]
    assert flaky["verdict"] == "flaky" and flaky["cause"] == "flaky: fail, then passed on retest 1 of 1"
    assert flaky["fix"].startswith("a transient problem") and flaky["metrics"]["busbw_gbs"] == 2.0
    assert flaky["evidence"][:2] == ["mpirun", "retest as is: pass (20)"]
    # a passing run and a passing retest are the records they were
    assert out["records"][1] is first[1]
    assert out["records"][-1] is retests[-1]
    assert [r["verdict"] for r in out["records"][len(first):]] == [r["verdict"] for r in retests]
    assert out["summary"]["confirmed"] == ["n9-n10 rail 0 all_gather busbw", "n10-n2 rail 0 all_gather busbw"]
    assert out["classified"]["summary"] is out["summary"]


def test_a_ring_failing_everywhere_gets_no_control_or_cross_pairs_for_collectives():
    ring = ["n%d" % i for i in range(1, 7)]
    results = [module_result([a, ring[(i + 1) % 6]], "fail", 2.0) for i, a in enumerate(ring)]
    planned = cr.plan(first_pass_of(results, "pairs"), results, "pairs", repeats=1)
    separating = [s for s in planned["skipped"] if "not retested for collectives" in s["reason"]]
    assert separating == [
        {"server": "n2", "client": "n4", "reason": "control pairs (no host passed every pair) are not retested for "
                                                   "collectives"},
        {"server": "n1", "client": "n3", "reason": "cross pairs (no host passed every pair) are not retested for "
                                                   "collectives"}]
    assert [i["purpose"] for i in planned["retests"]] == ["as_is"] * 6


def test_a_partner_run_serving_several_pairs_is_planned_once_and_the_rest_still_follows():
    pairs = PAIRS + [["n2", "n12"], ["n11", "n12"], ["n9", "n12"], ["n10", "n12"]]
    results = [module_result(p, "fail" if "n10" in p or p == ["n2", "n12"] else "pass", 2.0) for p in pairs]
    planned = cr.plan(first_pass_of(results, "pairs"), results, "pairs", repeats=1)
    assert [(i["purpose"], i["hosts"], i["origins"]) for i in planned["retests"]] == [
        ("as_is", ["n9", "n10"], [["n9", "n10"]]), ("partner", ["n9", "n11"], [["n9", "n10"]]),
        ("partner", ["n11", "n10"], [["n9", "n10"]]), ("as_is", ["n10", "n2"], [["n10", "n2"]]),
        ("partner", ["n10", "n9"], [["n10", "n2"], ["n10", "n11"], ["n10", "n12"]]),
        ("partner", ["n9", "n2"], [["n10", "n2"]]), ("as_is", ["n10", "n11"], [["n10", "n11"]]),
        ("partner", ["n9", "n11"], [["n10", "n11"]]), ("as_is", ["n2", "n12"], [["n2", "n12"]]),
        ("partner", ["n2", "n11"], [["n2", "n12"]]), ("partner", ["n9", "n12"], [["n2", "n12"], ["n10", "n12"]]),
        ("as_is", ["n10", "n12"], [["n10", "n12"]])]


def test_a_pair_whose_run_named_its_bad_host_is_not_retested_and_warn_is_retested_when_asked():
    results = [module_result(p, "pass", 20.0) for p in PAIRS]
    results[0] = dict(module_result(PAIRS[0], "fail", 2.0), bad_nodes=["n10"])
    results[3] = module_result(PAIRS[3], "warn", 8.0)
    first = first_pass_of(results, "pairs")
    assert cr.plan(first, results, "pairs")["retests"] == []
    planned = cr.plan(first, results, "pairs", verdicts=("fail", "warn"))
    assert [i["hosts"] for i in planned["retests"] if i["purpose"] == "as_is"] == [["n10", "n2"]]
    retests = cr.tag([r for r in first_pass_of([module_result(PAIRS[3], "warn", 8.0)], "pairs")
                      if r["kind"] == "collective"], planned["retests"][0]["params"])
    out = cr.classify(first, retests, "pairs", verdicts=("fail", "warn"))
    # the run that named its bad host is classified, as no retest of it came back
    assert [(o["hosts"], o["status"]) for o in out["outcomes"]] == [(["n9", "n10"], "not_retested"),
                                                                    (["n10", "n2"], "confirmed")]


def test_repeats_up_to_the_planners_most_are_taken():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest_plan
    results = [module_result(["n9"], "fail", 2.0)]
    planned = cr.plan(first_pass_of(results, "per_node"), results, "per_node", repeats=retest_plan.MAX_REPEATS)
    assert len(planned["retests"]) == retest_plan.MAX_REPEATS


def test_a_classified_pair_without_its_first_pass_run_is_an_error():
    with pytest.raises(RetestError, match=r"^no first-pass run for n9-n10 rail 0 all_gather busbw$"):
        cr._position([], {"id": "n9-n10 rail 0 all_gather busbw", "server": "n9", "client": "n10",
                          "op": "all_gather", "original": "fail"})


def test_findings_read_every_outcome_whatever_comes_first():
    found = cr.findings([outcome("pool", ["n9", "n10"], implicated=["n9"]), outcome("per_node", ["n10"], "flaky"),
                         outcome("per_node", ["n11"])])
    assert [(f["host"], f["params"]["mode"]) for f in found] == [("n11", "per_node")]


def test_a_side_failing_as_server_and_as_client_runs_once_with_its_one_partner():
    """n11 the only known-good host: n10 (client of n9-n10, server of n10-n2) runs with it once for both pairs
    (a collective has no roles), and n2's partner run still follows."""
    pairs = [["n9", "n10"], ["n10", "n2"], ["n11", "n9"], ["n11", "n2"]]
    results = [module_result(p, "fail" if "n10" in p else "pass", 2.0) for p in pairs]
    planned = cr.plan(first_pass_of(results, "pairs"), results, "pairs", repeats=1)
    assert [(i["purpose"], i["hosts"], i["origins"]) for i in planned["retests"]] == [
        ("as_is", ["n9", "n10"], [["n9", "n10"]]), ("partner", ["n9", "n11"], [["n9", "n10"]]),
        ("partner", ["n11", "n10"], [["n9", "n10"], ["n10", "n2"]]), ("as_is", ["n10", "n2"], [["n10", "n2"]]),
        ("partner", ["n11", "n2"], [["n10", "n2"]])]
