# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The parts of retest.py the whole-flow tests pass by: tagging by round and metric, the outcome of a pair on a
rail other than 0, the partner verdicts, the words of a flaky record, the summary counts and record.

Rails 1 and 3 (not 0), hosts h9 and h10 (natural order is not text order)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest as rt

FLAKY_FIX = ("a transient problem, not a persistent fault: watch this pair's port counters and history; it is a "
             "failure when it keeps coming back")


def rec(host, peer, rail, verdict, value=None, kind="rdma_bw", cause="slow", **params):
    base = {"op": "write", "metric": "bw", "rail": rail}
    base.update(params)
    return {"kind": kind, "host": host, "peer": peer, "params": base,
            "metrics": {"bw_gbps": value if value is not None else (30.0 if verdict in ("fail", "warn") else 95.0),
                        "expected_gbps": 100.0},
            "verdict": verdict, "cause": cause if verdict != "pass" else None, "fix": None, "evidence": []}


def as_is(host, peer, rail, verdict, attempt=1, **params):
    return rec(host, peer, rail, verdict, kind="rdma_bw_retest", retest=True, retest_purpose="as_is",
               attempt=attempt, **params)


def partner(subject, other, rail, verdict, origin, **params):
    server, client = (subject, other) if subject < other else (other, subject)
    return rec(server, client, rail, verdict, kind="rdma_bw_retest", retest=True, retest_purpose="partner",
               attempt=1, subject=subject, partner=other, origin=origin, **params)


# ------------------------------------------------------------------ tagging

def job(server, client, rail, retest, **kw):
    out = {"server": server, "client": client, "rail": rail, "test": "write", "retest": retest}
    out.update(kw)
    return out


def test_a_record_takes_the_retest_params_of_the_job_of_its_own_round():
    """The same pair retested in two rounds, the jobs without a round of their own (the round is their place)."""
    rounds = [{"jobs": [job("h9", "h10", 3, {"retest": True, "attempt": 1})]},
              {"jobs": [job("h9", "h10", 3, {"retest": True, "attempt": 2})]}]
    second, first = rt.tag_retest_records([rec("h9", "h10", 3, "pass", round=1),
                                           rec("h9", "h10", 3, "pass", round=0)], rounds)
    assert (first["params"]["attempt"], second["params"]["attempt"]) == (1, 2)
    assert first["kind"] == second["kind"] == "rdma_bw_retest"


def test_a_missing_metric_is_bandwidth_on_either_side():
    rounds = [{"jobs": [job("h9", "h10", 1, {"retest": True, "attempt": 1})]}]
    tagged = rt.tag_retest_records([rec("h9", "h10", 1, "pass")], rounds)[0]
    assert tagged["params"]["metric"] == "bw" and tagged["params"]["attempt"] == 1
    rounds = [{"jobs": [job("h9", "h10", 1, {"retest": True, "attempt": 1}, metric="bw")]}]
    record = rec("h9", "h10", 1, "pass")
    del record["params"]["metric"]
    assert rt.tag_retest_records([record], rounds)[0]["params"]["attempt"] == 1


def test_a_record_already_of_a_retest_kind_keeps_its_kind():
    rounds = [{"jobs": [job("h9", "h10", 1, {"retest": True, "attempt": 1})]}]
    tagged = rt.tag_retest_records([rec("h9", "h10", 1, "pass", kind="rdma_bw_retest")], rounds)[0]
    assert tagged["kind"] == "rdma_bw_retest" and tagged["params"]["attempt"] == 1


# ------------------------------------------------------------------ outcome

def test_a_pair_on_rail_3_is_judged_by_its_rail_3_retests_only():
    records = [rec("h9", "h10", 3, "fail"), rec("h9", "h10", 1, "pass")]
    retests = [as_is("h9", "h10", 3, "fail"), as_is("h9", "h10", 1, "pass")]
    out = rt.classify(records, retests)
    (pair,) = out["pairs"]
    assert pair["id"] == "h9-h10 rail 3 write bw" and pair["rail"] == 3
    assert pair["status"] == "confirmed" and pair["as_is"] == ["fail"]
    assert pair["partner_retests"] == 0


def test_a_pair_left_without_retests_says_so():
    out = rt.classify([rec("h9", "h10", 1, "fail")], [])
    assert out["pairs"][0]["status"] == "not_retested"
    assert out["records"][0]["evidence"] == ["not retested"]
    assert out["records"][0]["metrics"]["retests"] == 0


def test_the_verdicts_retested_are_the_ones_that_count_against_a_retest():
    """With warn among the retested verdicts, a warn that warns again on its retest is confirmed."""
    records = [rec("h9", "h10", 1, "warn")]
    out = rt.classify(records, [as_is("h9", "h10", 1, "warn")], bad_verdicts=("fail", "warn"))
    assert out["pairs"][0]["status"] == "confirmed"
    assert rt.classify(records, [as_is("h9", "h10", 1, "pass")], bad_verdicts=("fail", "warn"))["pairs"][0][
        "status"] == "flaky"


def test_partner_evidence_names_both_sides_and_the_path():
    origin = "h9-h10"
    both_bad = rt.classify([rec("h9", "h10", 1, "fail")], [
        as_is("h9", "h10", 1, "fail"), partner("h9", "h2", 1, "fail", origin), partner("h10", "h2", 1, "fail", origin)])
    pair = both_bad["pairs"][0]
    assert pair["implicated"] == ["h9", "h10"] and pair["cleared"] == [] and pair["partner_retests"] == 2
    assert "also fails with a known-good partner: h9, h10" in pair["evidence"]
    path = rt.classify([rec("h9", "h10", 1, "fail")], [
        as_is("h9", "h10", 1, "fail"), partner("h9", "h2", 1, "pass", origin), partner("h10", "h2", 1, "pass", origin)])
    pair = path["pairs"][0]
    assert pair["cleared"] == ["h9", "h10"] and pair["implicated"] == []
    assert pair["evidence"][-1] == "both sides pass with known-good partners: the path between them is at fault"
    one = rt.classify([rec("h9", "h10", 1, "fail")], [as_is("h9", "h10", 1, "fail"),
                                                      partner("h10", "h2", 1, "pass", origin)])
    assert one["pairs"][0]["cleared"] == ["h10"]
    assert not [e for e in one["pairs"][0]["evidence"] if "path" in e or "also fails" in e]


@pytest.mark.parametrize("verdicts,implicated", [
    (("fail", "pass"), ["h10"]),            # fails half of its partner retests: implicated
    (("fail", "pass", "pass"), []),         # a third: neither implicated nor cleared
])
def test_a_side_is_implicated_when_it_fails_at_least_half_its_partner_retests(verdicts, implicated):
    origin = "h9-h10"
    retests = [as_is("h9", "h10", 1, "fail")] + [
        partner("h10", other, 1, verdict, origin) for other, verdict in zip(("h2", "h3", "h4"), verdicts)]
    pair = rt.classify([rec("h9", "h10", 1, "fail")], retests)["pairs"][0]
    assert pair["implicated"] == implicated and pair["cleared"] == []


# ------------------------------------------------------------------ a flaky record

def test_a_flaky_record_without_a_cause_names_its_verdict_and_gets_the_flaky_fix():
    record = rec("h9", "h10", 1, "fail", cause=None)
    out = rt.classify([record], [as_is("h9", "h10", 1, "fail"), as_is("h9", "h10", 1, "pass", attempt=2),
                                 as_is("h9", "h10", 1, "pass", attempt=3)])
    flaky = out["records"][0]
    assert flaky["verdict"] == "flaky"
    assert flaky["cause"] == "flaky: fail, then passed on retest 2 of 3"
    assert flaky["fix"] == FLAKY_FIX


def test_an_inferred_outcome_replaces_only_the_not_retested_evidence():
    """h2 fails with h9 and h10 on rail 1; only h2-h9 is retested (per-host sampling) and passes: h2-h10 is
    flaky by inference, its other evidence kept."""
    left = rec("h2", "h10", 1, "fail", cause=None)
    left["evidence"] = ["first pass: 30 Gb/s"]
    skipped = [{"server": "h2", "client": "h10", "rail": 1, "test": "write", "sampled_host": "h2"}]
    out = rt.classify([rec("h2", "h9", 1, "fail"), left], [as_is("h2", "h9", 1, "pass")], skipped=skipped)
    inferred = out["records"][1]
    assert inferred["verdict"] == "flaky" and inferred["fix"] == FLAKY_FIX
    assert inferred["cause"] == "flaky (inferred): fail, and every retested pair of h2 on rail 1 passed"
    assert inferred["evidence"] == ["first pass: 30 Gb/s",
                                    "not retested itself: flaky (inferred from the retested pairs of h2)"]


# ------------------------------------------------------------------ summary

def test_retests_among_the_records_count_as_retests_and_each_purpose_is_counted():
    records = [rec("h9", "h10", 1, "fail"), as_is("h9", "h10", 1, "pass")]
    extra = [partner("h9", "h2", 1, "pass", "h9-h10"),
             rec("h2", "h3", 1, "pass", kind="rdma_bw_retest", retest=True, retest_purpose="control"),
             rec("h9", "h3", 1, "pass", kind="rdma_bw_retest", retest=True, retest_purpose="cross"),
             rec("h10", "h3", 1, "pass", kind="rdma_bw_retest", retest=True, retest_purpose="cross")]
    out = rt.classify(records, extra)
    assert out["summary"] == {"retests": 5, "as_is": 1, "partner": 1, "control": 1, "cross": 2,
                              "failing_pairs": 1, "confirmed": [], "flaky": ["h9-h10 rail 1 write bw"],
                              "not_retested": []}
    assert [r["kind"] for r in out["records"]] == ["rdma_bw"] + ["rdma_bw_retest"] * 4
    assert out["records"][0]["verdict"] == "flaky"


def test_the_summary_record_counts_and_names_each_pair():
    classified = {"summary": {"retests": 7, "as_is": 4, "partner": 3, "failing_pairs": 3,
                              "confirmed": ["h9-h10 rail 1 write bw"], "flaky": ["h2-h9 rail 3 write bw"],
                              "not_retested": ["h2-h10 rail 1 write bw"]}}
    assert rt.summary_record(classified, check="tcp_perf", kind="tcp_bw") == {
        "kind": "retest_summary", "host": "*", "peer": None, "params": {"check": "tcp_perf", "family": "tcp_bw"},
        "metrics": {"retests": 7, "as_is_retests": 4, "partner_retests": 3, "failing_pairs": 3,
                    "confirmed_pairs": 1, "flaky_pairs": 1},
        "verdict": "fail", "cause": "7 retest(s) of 3 failing pair(s): 1 confirmed, 1 flaky, 1 not retested",
        "fix": None,
        "evidence": ["confirmed: h9-h10 rail 1 write bw", "flaky: h2-h9 rail 3 write bw",
                     "not retested: h2-h10 rail 1 write bw"]}


def test_the_summary_record_is_flaky_with_only_flaky_pairs_and_passes_without_failing_pairs():
    flaky = rt.summary_record({"summary": {"retests": 2, "as_is": 2, "failing_pairs": 1,
                                           "flaky": ["h9-h10 rail 1 write bw"]}})
    assert flaky["verdict"] == "flaky" and flaky["params"] == {"check": "rdma_perf", "family": "rdma_bw"}
    assert flaky["metrics"] == {"retests": 2, "as_is_retests": 2, "partner_retests": 0, "failing_pairs": 1,
                                "confirmed_pairs": 0, "flaky_pairs": 1}
    assert flaky["cause"] == "2 retest(s) of 1 failing pair(s): 0 confirmed, 1 flaky, 0 not retested"
    assert flaky["evidence"] == ["flaky: h9-h10 rail 1 write bw"]
    empty = rt.summary_record({})
    assert empty["verdict"] == "pass" and empty["evidence"] == []
    assert empty["metrics"] == {"retests": 0, "as_is_retests": 0, "partner_retests": 0, "failing_pairs": 0,
                                "confirmed_pairs": 0, "flaky_pairs": 0}
    assert empty["cause"] == "0 retest(s) of 0 failing pair(s): 0 confirmed, 0 flaky, 0 not retested"
    # names without a count of failing pairs: nothing failed
    assert rt.summary_record({"summary": {"confirmed": ["h9-h10 rail 1 write bw"]}})["verdict"] == "pass"


# ------------------------------------------------------------------ retests no expectation judges

def unexpected(record):
    """A bandwidth record without a link rate: no expectation judges it, the first pass's records do."""
    del record["metrics"]["expected_gbps"]
    return record


def first_pass_without_rate():
    pairs = [("h2", "h3"), ("h3", "h4"), ("h4", "h5"), ("h5", "h6"), ("h6", "h7")]
    return [unexpected(rec(a, b, 1, "pass", value=v)) for (a, b), v in zip(pairs, (95, 96, 94, 95, 97))] + \
        [unexpected(rec("h9", "h10", 1, "fail", value=60))]


def test_a_retest_without_a_rate_is_judged_by_the_fleet_threshold_given():
    retest = unexpected(as_is("h9", "h10", 1, "pass", value=60))
    out = rt.classify(first_pass_without_rate(), [retest], fleet_min_fraction=0.8)
    assert out["pairs"][0]["status"] == "confirmed"
    assert out["records"][-1]["verdict"] == "fail"
    assert out["records"][-1]["cause"] == \
        "60 is below the fleet median 95 x 0.8 of the first pass's 6 comparable records"
    out = rt.classify(first_pass_without_rate(), [retest])
    assert out["pairs"][0]["status"] == "flaky" and out["records"][-1]["verdict"] == "pass"


def test_a_retest_without_a_rate_is_held_to_the_good_pairs_level_the_first_pass_shows():
    """The first pass's slow pair is explained by its hosts, so the level is that of the pairs without them."""
    retest = unexpected(as_is("h9", "h10", 1, "pass", value=80))
    out = rt.classify(first_pass_without_rate(), [retest], fleet_min_fraction=0.9)
    assert out["records"][-1]["cause"] == ("80 is below the good pairs' level 95 x 0.9 (the pairs without h9, h10) "
                                           "of the first pass's 6 comparable records")
