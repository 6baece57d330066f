# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The parts of the thresholds one at a time (issue 34, mutation testing): what a record is measured by and
compared with, history baselines, the hardware, fleet and other-rail checks, and what evaluate reports.

Fixtures differ where a mix-up would hide: rails 3, 7 and 11 (not 0 and 1), hosts h2, h9 and h10 (natural
order is not text order), runs whose names sort against their times, medians that are not averages."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import thresholds as th


def bw(host, peer, value, rail=3, rate=None, verdict="pass", kind="rdma_bw", **params):
    base = {"op": "write", "metric": "bw", "rail": rail, "size": 65536}
    base.update(params)
    metrics = {"bw_gbps": value}
    if rate is not None:
        metrics["expected_gbps"] = rate
    return {"kind": kind, "host": host, "peer": peer, "params": base, "metrics": metrics, "verdict": verdict,
            "cause": None, "evidence": []}


def lat(host, peer, value, rail=3, verdict="pass", **metrics):
    return {"kind": "rdma_lat", "host": host, "peer": peer, "verdict": verdict, "cause": None, "evidence": [],
            "params": {"op": "write", "metric": "lat", "rail": rail, "size": 2}, "metrics": dict(metrics, lat_us=value)}


def past(record, run, time=None):
    out = dict(record, run_id=run)
    if time:
        out["time"] = time
    return out


def day(num):
    return "2025-03-%02dT00:00:00Z" % num


# --- what a record is measured by and compared with -----------------------------------------------------

@pytest.mark.parametrize("record, expected", [
    ({"kind": "collective", "params": {"metric": "lat"}, "metrics": {"busbw_gbs": 12.5, "lat_us": 3.0}},
     ("busbw_gbs", 12.5, True)),
    ({"kind": "rdma_bw", "params": {"metric": "lat"}, "metrics": {"bw_gbps": 9.0, "lat_us": 3.0}}, ("lat_us", 3.0, False)),
    ({"kind": "rdma_lat", "params": {"metric": "bw"}, "metrics": {"bw_gbps": 9.0, "lat_us": 3.0}}, ("lat_us", 3.0, False)),
    ({"kind": "rdma_bw", "params": {"metric": "bw"}, "metrics": {"bw_gbps": 9.0, "lat_us": 3.0}}, ("bw_gbps", 9.0, True)),
    ({"kind": "tcp_bw", "params": None, "metrics": None}, ("bw_gbps", None, True)),
])
def test_metric_a_collective_by_bus_bandwidth_a_latency_by_its_kind_or_metric_else_bandwidth(record, expected):
    assert th._metric(record) == expected


def test_group_and_identity_say_what_is_compared_with_what():
    record = bw("h9", "h10", 1.0, round=2, step=5, server="h9", retest=True, memory="cuda")
    assert th._group(record) == ("rdma_bw", "write", "bw", "65536", "cuda", "None", "None", "3")
    assert th._group(dict(record, params=dict(record["params"], loopback=True)))[-3:] == ("True", "None", "3")
    # a spine pair across leaves ran under load: a group of its own
    assert th._group(dict(record, params=dict(record["params"], oversubscription=2)))[-2:] == ("2", "3")
    assert th._identity(record) == ("rdma_bw", "h9", "h10", (("memory", "cuda"), ("metric", "bw"), ("op", "write"),
                                                             ("rail", "3"), ("size", "65536")))
    params = {"library": "nccl", "mode": "per_node", "stage": "pool", "nodes": 1, "ranks": 8, "min_bytes": 1024,
              "max_bytes": 4096, "datatype": "float", "operation": "all_gather"}
    coll = {"kind": "collective", "host": "n1", "params": params}
    assert th._group(coll) == ("collective", "nccl", "per_node", "None", "pool", "1", "8", "1024", "4096", "float",
                               "all_gather")
    assert th._identity({"kind": "rdma_bw", "host": "h1", "peer": None, "params": None}) == ("rdma_bw", "h1", None, ())


@pytest.mark.parametrize("record, judged", [
    (bw("h1", "h2", 9.0, verdict="warn"), True),
    (bw("h1", "h2", 9.0, verdict="flaky"), True),
    (bw("h1", "h2", None), False),
    (bw("h1", "h2", 9.0, kind="finding"), False),
    (bw("h1", "h2", 9.0, kind="summary"), False),
    (bw("h1", "h2", 9.0, verdict="error"), False),
    (bw("h1", "h2", 9.0, verdict="skipped"), False),
])
def test_a_record_is_judged_with_a_value_unless_a_finding_summary_error_or_skipped(record, judged):
    assert th._judged(record, th._metric(record)[1]) is judged
    out = th.evaluate([bw("h3", "h4", 9.0), record, bw("h5", "h6", 9.1)])
    assert ["thresholds" in r for r in out["records"]] == [True, judged, True]
    assert out["summary"]["records"] == 2 + judged


# --- history baselines -------------------------------------------------------------------------------------

def test_history_baselines_keep_the_newest_k_runs_by_time_oldest_first_one_median_per_run():
    # run names sort against their times; run "a" has two links of the pair (rounds) at different times, its
    # newest one makes it the newest run; "m" and "n" have the same time: then by name, not by value nor by
    # the order they came in
    history = [past(bw("h1", "h2", 30.0), "z", day(1)),
               past(bw("h1", "h2", 40.0, round=1), "a", day(2)), past(bw("h1", "h2", 41.0, round=2), "a", day(9)),
               past(bw("h1", "h2", 50.0), "n", day(5)), past(bw("h1", "h2", 60.0), "m", day(5)),
               past(bw("h1", "h2", 20.0), "b", day(3))]
    pairs, hosts = th.history_baselines(history, k=3)
    (entry,) = list(pairs.values())
    assert entry == {"baseline": 50.0, "runs": 3, "values": [60.0, 50.0, 40.5]}
    assert hosts[("h2", th._group(history[0]))] == entry
    assert th.history_baselines(history, k=1)[0][th._identity(history[0])]["values"] == [40.5]
    assert th.history_baselines(history, k=0)[0][th._identity(history[0])]["values"] == [40.5]


def test_history_baselines_default_to_the_last_five_runs():
    history = [past(bw("h1", "h2", value), "r%d" % num, day(num)) for num, value in enumerate([1.0, 9.0, 8.0, 7.0,
                                                                                              6.0, 5.0], 1)]
    (entry,) = list(th.history_baselines(history)[0].values())
    assert entry["values"] == [9.0, 8.0, 7.0, 6.0, 5.0] and entry["baseline"] == 7.0


def test_history_baselines_median_of_a_runs_values_not_their_average():
    history = [past(bw("h1", "h2", value, round=num), "r1", day(num)) for num, value in enumerate([1.0, 2.0, 9.0])]
    (entry,) = list(th.history_baselines(history)[0].values())
    assert entry == {"baseline": 2.0, "runs": 1, "values": [2.0]}


def test_history_baselines_without_a_run_id_a_record_is_a_run_of_its_time_and_without_a_time_the_oldest():
    history = [bw("h1", "h2", 10.0), dict(bw("h1", "h2", 30.0), time=day(4)), dict(bw("h1", "h2", 20.0), time=day(2)),
               dict(bw("h1", "h2", 40.0), time=day(2))]
    (entry,) = list(th.history_baselines(history)[0].values())
    assert entry["values"] == [10.0, 30.0, 30.0]


def test_history_baselines_a_hosts_baseline_counts_it_as_host_and_as_peer_in_each_group():
    history = [past(bw("h2", "h9", 100.0), "r1", day(1)), past(bw("h9", "h10", 50.0), "r1", day(1)),
               past(bw("h9", "h10", 70.0), "r2", day(2)), past(bw("h9", "h10", 7.0, rail=7), "r2", day(2)),
               past(bw("h10", None, 1.0, kind="tcp_bw"), "r2", day(2))]
    hosts = th.history_baselines(history)[1]
    rail3, rail7, tcp = th._group(history[0]), th._group(history[3]), th._group(history[4])
    assert hosts == {
        ("h2", rail3): {"baseline": 100.0, "runs": 1, "values": [100.0]},
        ("h9", rail3): {"baseline": 72.5, "runs": 2, "values": [75.0, 70.0]},
        ("h10", rail3): {"baseline": 60.0, "runs": 2, "values": [50.0, 70.0]},
        ("h9", rail7): {"baseline": 7.0, "runs": 1, "values": [7.0]},
        ("h10", rail7): {"baseline": 7.0, "runs": 1, "values": [7.0]},
        ("h10", tcp): {"baseline": 1.0, "runs": 1, "values": [1.0]}}


@pytest.mark.parametrize("left_out", [
    dict(bw("h1", "h2", 1.0), verdict="fail"),
    dict(bw("h1", "h2", 1.0), kind="summary"),
    dict(bw("h1", "h2", 1.0), kind="finding"),
    dict(bw("h1", "h2", 1.0), kind="regression"),
    bw("h1", "h2", None),
    dict(bw("h1", "h2", 1.0), run_id="now"),
    "not a record",
])
def test_history_baselines_leave_out_failed_findings_summaries_regressions_no_value_and_the_current_run(left_out):
    if isinstance(left_out, dict):
        left_out = dict({"run_id": "r0", "time": day(9)}, **left_out)
    history = [left_out, past(bw("h1", "h2", 50.0), "r1", day(1))]
    (entry,) = list(th.history_baselines(history, exclude_run="now")[0].values())
    assert entry == {"baseline": 50.0, "runs": 1, "values": [50.0]}


# --- the hardware check ------------------------------------------------------------------------------------

def hardware(record, rates=None, efficiency=None):
    return th.evaluate([record], rates=rates, efficiency=efficiency)["records"][0]


def test_hardware_a_pair_at_its_expectation_exactly_passes():
    record = hardware(bw("h1", "h2", 360.0, rate=400.0))
    assert record["thresholds"]["hardware"] == {"checked": True, "link_rate": 400.0, "efficiency": 0.9,
                                                "expected": 360.0, "value": 360.0, "tripped": False}
    assert (record["metrics"]["link_rate_gbps"], record["metrics"]["hw_expected_gbps"]) == (400.0, 360.0)
    coll = {"kind": "collective", "host": "n1", "verdict": "pass", "params": {"op": "all_reduce"},
            "metrics": {"busbw_gbs": 80.0, "threshold_busbw_gbs": 80.0}}
    assert hardware(coll)["thresholds"]["hardware"]["tripped"] is False


@pytest.mark.parametrize("kind, op, efficiency", [("tcp_bw", None, 0.5), ("rdma_bw", None, 0.7), ("tcp_bw", "send", 0.6)])
def test_hardware_a_tcp_record_without_an_op_takes_the_tcp_efficiency(kind, op, efficiency):
    record = hardware(bw("t1", "t2", 1.0, rate=100.0, kind=kind, op=op),
                      efficiency={"tcp": 0.5, "default": 0.7, "send": 0.6})
    assert record["thresholds"]["hardware"]["efficiency"] == efficiency


@pytest.mark.parametrize("bidirectional, rates, expected", [
    (True, {"h1": {3: 200.0}, "h2": {3: 400.0}}, 360.0),
    (True, None, 360.0),
    (False, {"h1": {3: 200.0}, "h2": {3: 400.0}}, 180.0),
])
def test_hardware_a_bidirectional_pair_counts_twice_the_rate_it_is_given_not_its_own_expected_rate(
        bidirectional, rates, expected):
    # the pair analysis' expected_gbps of a bidirectional pair is already both directions; a rate from rates is not
    record = hardware(bw("h1", "h2", 100.0, rate=400.0, bidirectional=bidirectional), rates=rates)
    assert record["metrics"]["hw_expected_gbps"] == expected


@pytest.mark.parametrize("rates, expected", [
    ({"h1": {3: 300.0, 7: 100.0}, "h2": {"3": 200.0}}, 200.0),     # the lower end of the pair, its rail as a number or text
    ({"h1": {"3": 300.0}, "h2": {7: 100.0}}, 300.0),
    ({"h1": 250.0, "h9": 100.0}, 250.0),                            # one rate for every rail of a host
    ({"h1": {3: "fast"}, "h2": {3: None}}, 400.0),                  # none usable: the record's own expected rate
])
def test_rate_of_a_pair_is_the_lower_of_its_hosts_on_its_rail(rates, expected):
    assert th._rate(bw("h1", "h2", 1.0, rate=400.0), rates) == expected


# --- the fleet check ---------------------------------------------------------------------------------------

def test_fleet_three_comparable_records_are_enough_two_are_not():
    two = th.evaluate([bw("h1", "h2", 100.0), bw("h3", "h4", 10.0)])["records"]
    assert [r["thresholds"]["fleet"] for r in two] == [{"checked": False}] * 2
    assert all("fleet_median" not in r["metrics"] for r in two)
    three = th.evaluate([bw("h1", "h2", 100.0), bw("h3", "h4", 99.0), bw("h5", "h6", 10.0)])["records"]
    assert three[2]["thresholds"]["fleet"] == {"checked": True, "median": 99.0, "robust_z": -60.03, "n": 3,
                                               "tripped": True, "far": False, "min_fraction": None}
    assert (three[2]["metrics"]["fleet_median"], three[2]["metrics"]["robust_z"]) == (99.0, -60.03)


def test_fleet_counts_the_records_with_a_value_but_no_error_or_skipped_one():
    records = [bw("h1", "h2", None), bw("h3", "h4", 100.0), bw("h5", "h6", 1.0, verdict="error"),
               bw("h7", "h8", 1.0, verdict="skipped"), bw("h9", "h10", 98.0, verdict="warn"), bw("h11", "h12", 97.0)]
    out = th.evaluate(records)["records"]
    assert [r["thresholds"]["fleet"]["n"] for r in out if "thresholds" in r] == [3, 3, 3]


def test_fleet_of_mixed_link_rates_compares_fractions_and_shows_the_fleet_at_each_records_rate():
    # a 200G pair at 190 is as healthy as a 400G one at 380; one at 60 delivers 0.3 of its rate
    records = [bw("h1", "h2", 380.0, rate=400.0), bw("h3", "h4", 376.0, rate=400.0), bw("h5", "h6", 190.0, rate=200.0),
               bw("h7", "h8", 384.0, rate=400.0), bw("h9", "h10", 60.0, rate=200.0)]
    out = th.evaluate(records, fleet_min_fraction=0.2, efficiency=0.25)["records"]
    assert [r["thresholds"]["tripped"] for r in out] == [[], [], [], [], ["fleet"]]
    slow = out[4]
    assert slow["metrics"]["fleet_median"] == pytest.approx(190.0) and slow["thresholds"]["fleet"]["far"]
    assert slow["metrics"]["fleet_best"] == pytest.approx(190.0) == slow["thresholds"]["fleet"]["best"]


# --- a rail whose every link is late, against the other rails ----------------------------------------------

def test_other_rails_best_quarter_per_rail_of_each_latency_test_measured_on_two_rails_three_links_each():
    records = [bw("h%d" % num, "x", 10.0, rail=rail) for num in range(3) for rail in (3, 7)]
    records += [lat("h1", "h2", 0.1, verdict="error"), lat("h1", "h2", 0.2, verdict="skipped"),
                lat("h1", "h2", 0.3, rail=None), lat("h1", "h2", None, rail=7)]
    records += [lat("h%d" % num, "x", value) for num, value in enumerate([5.0, 2.0, 9.0])]
    records += [lat("h%d" % num, "x", value, rail=7) for num, value in enumerate([4.0, 3.0, 8.0, 6.0])]
    records += [lat("h%d" % num, "x", 1.0, rail=11) for num in range(2)]
    records += [dict(lat("h%d" % num, "x", 0.5), params=dict(lat("a", "b", 0)["params"], size=4096)) for num in range(3)]
    assert th.other_rails_best(records) == {("rdma_lat", "write", "lat", "2", "None", "None", "None"): {
        "3": 2.0, "7": 3.0}}


def test_a_late_rail_of_two_links_fails_against_another_rails_best_and_says_so():
    records = [lat("h%d" % num, "x", 2.0) for num in range(3)] + [lat("h%d" % num, "x", 2.5, rail=7) for num in range(3)]
    records += [lat("h8", "h9", 40.0, rail=11), lat("h9", "h10", 41.0, rail=11)]
    late = th.evaluate(records, set_verdicts=True, fleet_min_fraction=0.5)["records"][6]
    assert late["thresholds"]["fleet"] == {"checked": True, "tripped": True, "far": True, "best": 2.0,
                                           "best_factor": 3.0, "other_rail": True}
    assert late["metrics"]["fleet_best"] == 2.0 and late["verdict"] == "fail"
    assert late["evidence"] == ["thresholds tripped (fleet) -- fleet: 3 x or more off another rail's best quarter 2"]


def test_a_late_link_is_measured_against_the_other_rails_not_its_own():
    # rail 3's best links answer in 1 us and its 25 us link is its outlier (a warning without a fraction); 25 us
    # is not 3 x the best of rails 7 and 11, whose every link is late against rail 3
    records = [lat("h%d" % num, "x", value) for num, value in enumerate([1.0, 1.0, 1.0, 1.0, 25.0])]
    records += [lat("h%d" % num, "x", 10.0, rail=7) for num in range(3)]
    records += [lat("h%d" % num, "x", 12.0, rail=11) for num in range(3)]
    out = th.evaluate(records, set_verdicts=True)["records"]
    assert [r["verdict"] for r in out] == ["pass"] * 4 + ["warn"] + ["fail"] * 6
    assert "other_rail" not in out[4]["thresholds"]["fleet"]


def test_a_link_far_from_its_own_rails_median_keeps_that_reason():
    records = [lat("h%d" % num, "x", value) for num, value in enumerate([10.0, 10.0, 10.0, 10.0, 40.0])]
    records += [lat("h%d" % num, "x", 1.0, rail=7) for num in range(3)]
    late = th.evaluate(records, set_verdicts=True, fleet_min_fraction=0.5)["records"][4]
    assert late["cause"].startswith("40 is above the fleet median 10 / 0.5 (far fleet outlier")
    assert "other_rail" not in late["thresholds"]["fleet"] and "fleet_best" not in late["metrics"]


@pytest.mark.parametrize("rates, higher, scales", [
    ([400.0, 0.5, 200.0], True, [400.0, 0.5, 200.0]),       # the lab's half-Gb/s links are a rate too
    ([400.0, 0.5, 200.0], False, []),
    ([400.0, 0.0, 200.0], True, []),
    ([400.0, None, 200.0], True, []),
    ([400.0, -1.0, 200.0], True, []),
    ([], True, []),
])
def test_rate_scales_only_when_every_bandwidth_record_has_its_own_positive_rate(rates, higher, scales):
    records = [{"metrics": {"expected_gbps": rate}} for rate in rates]
    assert th.rate_scales(records, higher) == scales


# --- what evaluate reports ---------------------------------------------------------------------------------

def test_evaluate_counts_each_tripped_check_and_the_records_only_the_fleet_or_history_tripped():
    records = [bw("h%d" % num, "x", value, rate=400.0) for num, value in enumerate([380.0, 381.0, 379.0, 382.0, 100.0,
                                                                                   120.0, 300.0])]
    out = th.evaluate(records, outlier_min_rel=0.1, efficiency=0.5)
    assert [r["thresholds"]["tripped"] for r in out["records"]] == [[]] * 4 + [["hardware", "fleet"]] * 2 + [["fleet"]]
    assert out["summary"] == {"records": 7, "tripped": {"hardware": 2, "fleet": 3, "history": 0}, "tripped_records": 3,
                              "only_fleet_or_history": 1, "hosts_below_history": [], "latency_tails": 0}
    assert sorted(out) == ["findings", "records", "summary"]
    assert sorted(out["records"][6]["thresholds"]) == ["fleet", "hardware", "history", "tripped"]


def test_evaluate_changes_no_verdict_unless_asked_and_leaves_its_input_alone():
    records = [bw("h1", "h2", 100.0, rate=400.0)]
    (out,) = th.evaluate(records)["records"]
    assert out["thresholds"]["tripped"] == ["hardware"] and (out["verdict"], out["cause"]) == ("pass", None)
    assert records[0]["metrics"] == {"bw_gbps": 100.0, "expected_gbps": 400.0} and "thresholds" not in records[0]


def test_evaluate_judges_history_over_the_last_five_runs_by_default():
    history = [past(bw("h1", "h2", value), "r%d" % num, day(num)) for num, value in enumerate([1000.0] * 3 + [100.0] * 3, 1)]
    hist = th.evaluate([bw("h1", "h2", 95.0)], history=history)["records"][0]["thresholds"]["history"]
    assert (hist["baseline"], hist["runs"]) == (100.0, 5)


@pytest.mark.parametrize("settings, tails", [({}, 1), ({"outlier_z": 100}, 0), ({"outlier_min_rel": 1.5}, 0)])
def test_evaluate_judges_latency_tails_by_its_own_outlier_settings(settings, tails):
    records = [lat("h%d" % num, "x", 2.0, lat_p99_us=p99) for num, p99 in enumerate([3.0, 3.1, 3.0, 3.05, 3.0, 6.0])]
    out = th.evaluate(records, **settings)
    assert out["summary"]["latency_tails"] == len(out["findings"]) == tails


def test_history_of_a_new_pair_takes_the_higher_bandwidth_baseline_of_its_hosts():
    history = [past(bw(host, peer, value), "r%d" % run, day(run)) for run in range(1, 4)
               for host, peer, value in (("h1", "h5", 300.0), ("h2", "h6", 390.0))]
    (out,) = th.evaluate([bw("h1", "h2", 350.0)], history=history)["records"]
    assert out["thresholds"]["history"] == {"checked": True, "scope": "host", "baseline": 390.0, "runs": 3,
                                            "change": -0.1026, "threshold": 0.2, "spread": 0.0, "tripped": False}
    assert out["metrics"]["history_baseline"] == 390.0


def test_hosts_below_their_history_in_natural_host_order_then_group_as_host_and_as_peer():
    pairs = [("h10", "h2", 3), ("h9", "h10", 3), ("h2", "h9", 3), ("h2", "h9", 7)]
    history = [past(bw(host, peer, 100.0, rail=rail), "r%d" % run, day(run)) for run in range(1, 4)
               for host, peer, rail in pairs]
    now = [bw("h1", "h2", 1.0, verdict="error"), lat("h2", "h9", 2.0)]
    now += [bw(host, peer, 50.0, rail=rail) for host, peer, rail in pairs]
    below = th.evaluate(now, history=history)["summary"]["hosts_below_history"]
    rail3, rail7 = list(th._group(now[2])), list(th._group(now[5]))
    assert [(entry["host"], entry["group"]) for entry in below] == [
        ("h2", rail3), ("h2", rail7), ("h9", rail3), ("h9", rail7), ("h10", rail3)]
    assert below[0] == {"host": "h2", "group": rail3, "median": 50.0, "baseline": 100.0, "change": -0.5, "runs": 3}


@pytest.mark.parametrize("verdict, cause, after", [
    ("pass", None, None),
    ("warn", "slow once", "slow once [thresholds tripped: hardware]"),
    ("flaky", "lost packets", "lost packets [thresholds tripped: hardware]"),
    ("fail", "too slow [thresholds tripped: hardware]", "too slow [thresholds tripped: hardware]"),
])
def test_a_tripped_record_keeps_its_evidence_and_its_bad_cause_names_the_thresholds_once(verdict, cause, after):
    record = dict(bw("h1", "h2", 100.0, rate=400.0, verdict=verdict), cause=cause, evidence=["measured twice"])
    (out,) = th.evaluate([record])["records"]
    assert out["cause"] == after and out["verdict"] == verdict
    assert out["evidence"] == ["measured twice", "thresholds tripped (hardware) -- hardware: 100 < 360 (link rate 400 x "
                               "efficiency 0.9)"]


# --- the small rules -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, message", [
    (lambda: th.efficiency_for("x", {"x": 2}, collective=True), "collective_efficiency[x] must be a fraction"),
    (lambda: th.evaluate([], efficiency={"read": 2}), "efficiency[read] must be a fraction"),
])
def test_a_bad_efficiency_names_the_option_it_came_from(call, message):
    with pytest.raises(th.ThresholdError) as err:
        call()
    assert str(err.value).startswith(message)


def test_a_record_without_an_op_takes_the_default_efficiency_whatever_ops_are_named():
    assert th.efficiency_for(None, {"xxxx": 0.5, "": 0.6}) == 0.6
    assert th.efficiency_for(None, {"xxxx": 0.5}) == 0.9


@pytest.mark.parametrize("value, med, higher", [(-10.0, -1.0, True), (-1.0, 0.0, True), (5.0, 0.0, False), (1.0, None, True)])
def test_nothing_is_beyond_a_fraction_of_a_median_at_or_below_zero(value, med, higher):
    assert th._beyond_fraction(value, med, higher, 0.5) is False


def test_far_rules_take_the_settings_they_are_given():
    # 30 % below the median is beyond 0.9 of it, but not the 50 % this caller asks for; nor a third of the best
    assert th.far_outlier(70.0, [100.0] * 9 + [70.0], True, 0.9, outlier_min_rel=0.5) == (False, None)
    # 3.25 x the best quarter but only 4.5 us above it: within a topology
    assert th.far_from_best(6.5, [2.0, 2.0, 2.0, 6.5], False) == (False, 2.0)
