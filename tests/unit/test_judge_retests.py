# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""verdicts/judgement.py: judge_retests, the one chain after a pair check's first pass, and check_verdict."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_localize import commcheck_localize
from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_retest_classify import \
    commcheck_retest_classify
from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_thresholds import commcheck_thresholds
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import judgement
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.pair_analysis import analyze_pairs

from fault_lab import FLEET_MIN_FRACTION, MIN_FRACTION, Fabric


def slowed_host(n=4):
    fabric = Fabric(n=n, rails=2, pattern="ring")
    fabric.slow(0.3, host="h2")
    return fabric


def late_once(n=4):
    fabric = Fabric(n=n, rails=1, pattern="mesh", metrics=("bw", "lat"))
    fabric.late(200.0, host="h3", phase="first")
    return fabric


def slow_link(n=4):
    fabric = Fabric(n=n, rails=2, pattern="mesh")
    fabric.slow(0.3, host="h1", peer="h4", rail=1)
    return fabric


def flaky_link(n=4):
    fabric = Fabric(n=n, rails=2, pattern="mesh")
    fabric.slow(0.3, host="h1", peer="h4", rail=1, phase="first")
    return fabric


def pair_options(min_fraction=MIN_FRACTION, outlier_z=3.5):
    """What judges a retest side (judgement.judge_retests' pair_options)."""
    return {"min_fraction": min_fraction, "outlier_z": outlier_z, "outlier_min_rel": 0.2, "expected_gbps": None}


def rdma_thresholds():
    return {"history": [], "efficiency": MIN_FRACTION, "fleet_min_fraction": FLEET_MIN_FRACTION}


def step_by_step(first, sides, plan):
    """classify -> thresholds -> localize called one by one, as roles/rdma_perf chained them before."""
    jobs = [job for rnd in plan["rounds"] for job in rnd["jobs"]]
    retest_records = analyze_pairs(sides, jobs=jobs, family="rdma", min_fraction=MIN_FRACTION)["records"] if jobs else []
    classified = commcheck_retest_classify(first, retest_records, plan["rounds"], bad_verdicts=["fail"],
                                           skipped=plan["skipped"], fleet_min_fraction=FLEET_MIN_FRACTION)
    judged = commcheck_thresholds(classified["records"], history=[], efficiency=MIN_FRACTION,
                                  fleet_min_fraction=FLEET_MIN_FRACTION, set_verdicts=True)
    localized = commcheck_localize(judged["records"], kind="rdma_bw", check="rdma_perf",
                                   retest_summary=classified["summary"])
    summaries = [classified["summary_record"]] if classified["summary"]["failing_pairs"] else []
    if localized["summary"]["links_bad"] + localized["summary"]["links_flaky"]:
        summaries.append(localized["summary_record"])
    return classified, localized, summaries


@pytest.mark.parametrize("build", [slowed_host, late_once, flaky_link, slow_link], ids=lambda f: f.__name__)
def test_the_rdma_chain_is_the_one_the_filters_made_step_by_step(build):
    fabric = build()
    fabric.run()
    sides = fabric.sides(fabric.plan["rounds"], "retest")
    judged = judgement.judge_retests(fabric.first["records"], "rdma", retest_sides=sides, plan=fabric.plan,
                                     pair_options=pair_options(), bad_verdicts=["fail"], thresholds=rdma_thresholds(),
                                     fleet_min_fraction=FLEET_MIN_FRACTION)
    classified, localized, summaries = step_by_step(fabric.first["records"], sides, fabric.plan)
    assert judged["records"] == localized["records"]
    assert judged["findings"] == localized["findings"]
    assert judged["retests"] == classified["summary"]
    assert judged["summary_records"] == summaries
    # each of these faults is judged something: a component, or (latency, which localization leaves to the
    # culprits) a flaky record
    assert judged["findings"] or [r for r in judged["records"] if r["verdict"] == "flaky"]


def _latency_culprits(findings):
    return sorted((f["params"]["finding"], f["host"], f["peer"], f["verdict"]) for f in findings
                  if f["params"].get("family") == "rdma_lat")


def test_a_latency_culprit_of_the_first_pass_is_named_again_after_the_retests():
    # h3 late in the first pass only: its first-pass culprit is a reason to retest, not a verdict
    fabric = late_once()
    fabric.run()
    first = [f for f in _latency_culprits(fabric.first["findings"]) if f[-1] == "fail"]
    assert first, fabric.first["findings"]
    other = fabric.judged["other_findings"]
    assert [f for f in _latency_culprits(other) if f[-1] == "fail"] == []
    lat = [r for r in fabric.judged["records"] if r["kind"] == "rdma_lat"]
    assert "flaky" in set(r["verdict"] for r in lat) and "fail" not in set(r["verdict"] for r in lat)
    assert judgement.check_verdict(fabric.published, ["rdma_bw", "rdma_lat", "finding"]) == "flaky"


def test_a_latency_culprit_confirmed_by_its_retests_stays_and_the_rest_is_kept():
    fabric = Fabric(n=4, rails=1, pattern="mesh", metrics=("bw", "lat"))
    fabric.late(200.0, host="h3")
    fabric.run()
    assert [f[:2] for f in _latency_culprits(fabric.judged["other_findings"])] == [("bad_node", "h3")]
    assert judgement.check_verdict(fabric.published, ["rdma_bw", "rdma_lat", "finding"]) == "fail"
    # findings that are no culprits of a pair kind (unreachable hosts, missing rails) come back as they were
    unreachable = {"kind": "finding", "host": "h9", "peer": None, "verdict": "fail",
                   "params": {"check": "rdma_perf", "finding": "unreachable", "family": "rdma", "rail": None}}
    judged = judgement.judge_retests(fabric.first["records"], "rdma",
                                     first_findings=fabric.first["findings"] + [unreachable])
    assert unreachable in judged["other_findings"]
    assert not [f for f in judged["other_findings"] if f["params"].get("family") == "rdma_bw"]


def test_without_retests_the_first_pass_is_localized_as_it_is():
    fabric = slowed_host()
    fabric.run(retests=False)
    judged = judgement.judge_retests(fabric.first["records"], "rdma", plan=fabric.plan, thresholds=rdma_thresholds())
    assert judged["retests"]["retests"] == 0 and judged["retests"]["failing_pairs"] > 0
    assert [f["params"]["finding"] for f in judged["findings"]] == ["bad_node"]
    assert [r["kind"] for r in judged["summary_records"]] == ["retest_summary", "localization"]


def test_the_outlier_z_of_the_chain_reaches_localization(monkeypatch):
    fabric = slowed_host()
    fabric.run(retests=False)
    seen = []
    real = judgement.loc.localize_records

    def spy(*args):
        seen.append(args[5])
        return real(*args)

    monkeypatch.setattr(judgement.loc, "localize_records", spy)
    judgement.judge_retests(fabric.first["records"], "rdma", plan=fabric.plan, pair_options=pair_options(outlier_z=5.5))
    judgement.judge_retests(fabric.first["records"], "rdma", plan=fabric.plan)
    assert seen == [5.5, 3.5]


def test_thresholds_left_out_leave_the_classified_verdicts():
    """The TCP check applies its thresholds to the first pass: none are applied again."""
    fabric = flaky_link()
    fabric.run()
    sides = fabric.sides(fabric.plan["rounds"], "retest")
    judged = judgement.judge_retests(fabric.first["records"], "rdma", retest_sides=sides, plan=fabric.plan,
                                     pair_options=pair_options(), bad_verdicts=["fail"])
    assert all("thresholds" not in r for r in judged["records"])
    assert [r["verdict"] for r in judged["records"] if r["kind"] == "rdma_bw" and r["verdict"] != "pass"] == \
        ["flaky"]


def test_a_warn_that_was_retested_is_not_localized_as_broken():
    """bad_verdicts says what is retested; a link that only warned is not a bad link (localization names fail and
    error only)."""
    fabric = Fabric(n=4, rails=1, pattern="mesh")
    fabric.slow(0.8, host="h1", peer="h2", rail=0)
    fabric.run()
    records = [dict(r, verdict="warn") if {r["host"], r["peer"]} == {"h1", "h2"} else r
               for r in fabric.first["records"]]
    judged = judgement.judge_retests(records, "rdma", bad_verdicts=["fail", "warn"])
    assert judged["findings"] == []
    assert commcheck_localize(records)["findings"] == judged["findings"]


def test_tcp_names_its_records_after_its_check():
    fabric = Fabric(n=4, rails=1, pattern="mesh")
    fabric.slow(0.2, host="h3")
    fabric.run(retests=False)
    records = [dict(r, kind="tcp_bw", params=dict(r["params"], op="tcp")) for r in fabric.first["records"]]
    judged = judgement.judge_retests(records, "tcp")
    assert [(r["kind"], r["params"]["check"]) for r in judged["summary_records"]] == [
        ("retest_summary", "tcp_perf"), ("localization", "tcp_perf")]
    assert [(f["params"]["check"], f["params"]["finding"], f["host"]) for f in judged["findings"]] == [
        ("tcp_perf", "bad_node", "h3")]


@pytest.mark.parametrize("verdicts, expected", [
    (["pass", "warn"], "warn"),
    (["pass", "flaky", "warn"], "flaky"),
    (["flaky", "fail"], "fail"),
    (["fail", "error", "pass"], "error"),
    (["pass"], "pass"),
    ([], "skipped"),
    (["skipped"], "skipped"),
])
def test_a_checks_verdict_is_its_worst(verdicts, expected):
    records = [{"kind": "rdma_bw", "verdict": v} for v in verdicts]
    assert judgement.check_verdict(records, ["rdma_bw", "finding"]) == expected


def test_a_checks_verdict_reads_only_its_kinds():
    records = [{"kind": "port_counters", "verdict": "fail"}, {"kind": "tcp_bw", "verdict": "pass"}]
    assert judgement.check_verdict(records, ["tcp_bw", "finding"]) == "pass"


def test_bad_options_are_clear_errors():
    with pytest.raises(judgement.JudgementError, match="family must be one of rdma, tcp"):
        judgement.judge_retests([], "ib")
    with pytest.raises(Exception, match="unknown threshold options: efficency"):
        judgement.judge_retests([], "rdma", thresholds={"efficency": 0.9})
