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


def test_a_retest_no_expectation_judges_keeps_the_rest_of_its_record():
    passing = dict(unexpected(as_is("h9", "h10", 1, "fail", value=94)), cause="far", fix="reseat")
    out = rt.judged_by_first_pass(passing, rt.first_pass_reference(first_pass_without_rate(), 0.8), 0.8)
    assert out == dict(passing, verdict="pass", cause=None, fix=None)
    failing = dict(unexpected(as_is("h9", "h10", 1, "pass", value=60)), fix="reseat")
    out = rt.judged_by_first_pass(failing, rt.first_pass_reference(first_pass_without_rate(), 0.8), 0.8)
    assert out == dict(failing, verdict="fail",
                       cause="60 is below the fleet median 95 x 0.8 of the first pass's 6 comparable records")


@pytest.mark.parametrize("verdict", ["error", "skipped"])
def test_an_errored_or_skipped_retest_is_left_as_it_is(verdict):
    record = dict(unexpected(as_is("h9", "h10", 1, "pass", value=60)), verdict=verdict)
    assert rt.judged_by_first_pass(record, rt.first_pass_reference(first_pass_without_rate(), 0.8), 0.8) == record


def test_a_latency_retest_far_above_the_first_pass_says_so_in_latency_words():
    pairs = [("h2", "h3"), ("h3", "h4"), ("h4", "h5"), ("h5", "h6")]
    first = [rec(a, b, 1, "pass", kind="rdma_lat", metric="lat", op="send") for a, b in pairs]
    for record, value in zip(first, (2.0, 2.1, 2.2, 2.0)):
        record["metrics"] = {"lat_us": value}
    retest = rec("h9", "h10", 1, "pass", kind="rdma_lat_retest", metric="lat", op="send", retest=True,
                 retest_purpose="as_is", attempt=1)
    retest["metrics"] = {"lat_us": 40.0}
    out = rt.judged_by_first_pass(retest, rt.first_pass_reference(first), None)
    assert out["verdict"] == "fail"
    assert out["cause"] == "40 is 3 x or more slower than the best quarter 2 of the first pass's 4 comparable records"


def test_the_first_pass_reference_leaves_out_errors_skips_and_records_without_a_value():
    first = first_pass_without_rate()[:3] + [
        unexpected(rec("h2", "h8", 1, verdict, value=10)) for verdict in ("error", "skipped", "error")]
    no_value = unexpected(rec("h3", "h8", 1, "pass"))
    del no_value["metrics"]["bw_gbps"]
    reference = rt.first_pass_reference(first + [no_value], 0.8)
    (values, _split), = reference["groups"].values()
    assert values == [95, 96, 94]
    retest = unexpected(as_is("h9", "h10", 1, "pass", value=60))
    assert rt.judged_by_first_pass(retest, reference, 0.8)["verdict"] == "fail"


def test_a_retest_is_compared_with_the_first_pass_of_its_own_rail_and_metric():
    rail3 = [dict(r, params=dict(r["params"], rail=3)) for r in first_pass_without_rate()]
    for record, value in zip(rail3, (40, 41, 39, 40, 42, 20)):
        record["metrics"]["bw_gbps"] = value
    reference = rt.first_pass_reference(first_pass_without_rate() + rail3, 0.8)
    assert rt.judged_by_first_pass(unexpected(as_is("h9", "h10", 3, "pass", value=38)), reference, 0.8)[
        "verdict"] == "pass"
    slow_on_rail_3 = unexpected(as_is("h9", "h10", 3, "pass", value=20))
    del slow_on_rail_3["params"]["metric"]     # bandwidth, as the first pass's
    assert rt.judged_by_first_pass(slow_on_rail_3, reference, 0.8)["verdict"] == "fail"
    on_rail_1 = unexpected(as_is("h9", "h10", 1, "pass", value=38))
    assert rt.judged_by_first_pass(on_rail_1, reference, 0.8)["verdict"] == "fail"


# ------------------------------------------------------------------ small rules

def test_small_rules():
    assert [rt.rail_number(v) for v in (None, "", "2", 3)] == [0, 0, 2, 3]
    assert rt.test_of({"params": {"op": "read"}}) == ("read", "bw")
    assert rt.did_not_pass(("fail",)) == ("fail", "error")
    assert rt.did_not_pass(("fail", "error")) == ("fail", "error")
    assert rt.did_not_pass(("warn",)) == ("warn", "error")


def test_separating_retests_are_no_as_is_retests_of_a_pair():
    records = [rec("h9", "h10", 1, "fail")]
    control = rec("h9", "h10", 1, "pass", kind="rdma_bw_retest", retest=True, retest_purpose="control")
    out = rt.classify(records, [control, as_is("h9", "h10", 1, "fail")])
    assert out["pairs"][0]["as_is"] == ["fail"] and out["pairs"][0]["status"] == "confirmed"


def test_a_partner_retest_serves_each_of_its_origins():
    records = [rec("h9", "h10", 1, "fail"), rec("h9", "h11", 1, "fail")]
    shared = partner("h9", "h2", 1, "fail", "h9-h10", origins=["h9-h10", "h9-h11"])
    alone = partner("h11", "h3", 1, "pass", "h9-h11")
    out = rt.classify(records, [shared, alone])
    assert [p["partner_retests"] for p in out["pairs"]] == [1, 2]
    assert out["pairs"][1]["implicated"] == ["h9"] and out["pairs"][1]["cleared"] == ["h11"]


def test_the_as_is_retests_read_in_the_order_of_their_attempts_and_the_evidence_adds_up():
    record = rec("h9", "h10", 1, "fail")
    record["evidence"] = ["first pass: 30 Gb/s"]
    retests = [as_is("h9", "h10", 1, "pass", attempt=2), as_is("h9", "h10", 1, "fail", attempt=1),
               partner("h9", "h2", 1, "pass", "h9-h10"), partner("h10", "h2", 1, "pass", "h9-h10")]
    untried = as_is("h9", "h10", 1, "warn")
    del untried["params"]["attempt"]
    out = rt.classify([record], retests[:2] + [untried] + retests[2:])
    pair = out["pairs"][0]
    assert pair["as_is"] == ["warn", "fail", "pass"] and pair["first_pass"] == 1
    first = out["records"][0]
    assert first["evidence"][0] == "first pass: 30 Gb/s" and first["evidence"][1].startswith("retest as is: warn, ")
    assert first["metrics"]["retests"] == 5


def test_a_retested_pair_keeps_its_own_outcome_and_disagreeing_pairs_infer_nothing():
    records = [rec("h2", "h9", 1, "fail"), rec("h2", "h10", 1, "fail"), rec("h2", "h11", 1, "fail")]
    skipped = [{"server": "h2", "client": "h9", "rail": 1, "test": "write", "sampled_host": "h2"}]
    agree = rt.classify(records[:2], [as_is("h2", "h9", 1, "pass"), as_is("h2", "h10", 1, "pass")], skipped=skipped)
    assert agree["pairs"][0]["status"] == "flaky" and "inferred_from" not in agree["pairs"][0]
    assert agree["records"][0]["cause"] == "flaky: slow, then passed on retest 1 of 1"
    skipped = [{"server": "h2", "client": "h11", "rail": 1, "test": "write", "sampled_host": "h2"}]
    disagree = rt.classify(records, [as_is("h2", "h9", 1, "pass"), as_is("h2", "h10", 1, "fail")], skipped=skipped)
    assert [p["status"] for p in disagree["pairs"]] == ["flaky", "confirmed", "not_retested"]


def test_a_sampled_out_latency_pair_takes_the_outcome_of_its_hosts_latency_pairs():
    def lat(host, peer, verdict, **params):
        record = rec(host, peer, 1, verdict, kind="rdma_lat", metric="lat", op="send", **params)
        record["metrics"] = {"lat_us": 9.0 if verdict == "fail" else 2.0}
        return record
    records = [lat("h2", "h9", "fail"), lat("h2", "h10", "fail"), rec("h2", "h11", 1, "fail")]
    retests = [dict(lat("h2", "h9", "pass", retest=True, retest_purpose="as_is", attempt=1), kind="rdma_lat_retest"),
               as_is("h2", "h11", 1, "fail")]
    skipped = [{"server": "h2", "client": "h10", "rail": 1, "test": "send", "metric": "lat", "sampled_host": "h2"}]
    out = rt.classify(records, retests, skipped=skipped)
    assert [(p["metric"], p["status"]) for p in out["pairs"]] == [("lat", "flaky"), ("lat", "flaky"), ("bw", "confirmed")]
    assert out["pairs"][1]["inferred_from"] == "h2"


def test_the_summary_record_of_failing_pairs_none_of_them_retested_passes():
    record = rt.summary_record({"summary": {"retests": 0, "failing_pairs": 2,
                                            "not_retested": ["h9-h10 rail 1 write bw", "h2-h9 rail 3 write bw"]}})
    assert record["verdict"] == "pass"
    assert record["evidence"] == ["not retested: h9-h10 rail 1 write bw", "not retested: h2-h9 rail 3 write bw"]
