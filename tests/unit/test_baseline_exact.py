# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ``verdicts/baseline.py`` says, field by field, and where its rules turn (mutation testing of the file).

test_baseline.py shows what a baseline and a regression are; these pin the exact output the report, the history
and the thresholds read (every key and text of a regression, of its record, of a shared group), the bounds of each
rule (a change exactly at its threshold, exactly half of the least fleet regressed, a shift of -100 %), and the
check keys of params that are not plain text or numbers.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import collections
import datetime

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline as bl


# ---------------------------------------------------------------- a run with shared and own regressions

def _rec(run, day, host, peer, bw, peak=None, device="mlx5_0", rnd=1):
    metrics = {"bw_gbps": bw, "bw_avg_gbps": 100.0, "expected_gbps": 100.0}
    if peak is not None:
        metrics["bw_peak_gbps"] = peak
    return {"run_id": run, "time": "2026-05-%02dT00:00:00.000000Z" % day, "kind": "rdma_bw", "host": host,
            "peer": peer, "verdict": "pass",
            "params": {"op": "write", "size": 65536, "sizes": [4096, 65536], "device": device, "round": rnd},
            "metrics": metrics}


PAIRS = [("a", "b", "mlx5_0"), ("c", "d", "mlx5_1"), ("e", "f", "mlx5_2"), ("g", "h", "mlx5_3")]
# six healthy runs (bw 101 on odd days, 100 on even ones), so K = 5 takes r2..r6 and the fix names the last three
HISTORY = [_rec("r%d" % day, day, host, peer, 100.0 + (day % 2), peak=110.0, device=dev)
           for day in range(1, 7) for host, peer, dev in PAIRS]


def _run():
    # a check without history first; a-b measured twice (rounds 1 and 2), regressed on two metrics; c-d regressed
    # within the fleet's shift; e-f and g-h a little slower
    now = [_rec("now", 9, "x", "y", 90.0, device="mlx5_9"),
           _rec("now", 9, "a", "b", 50.0, peak=60.0, device="mlx5_0"),
           _rec("now", 9, "a", "b", 45.0, peak=80.0, device="mlx5_0", rnd=2),
           _rec("now", 9, "c", "d", 71.1, peak=110.0, device="mlx5_1"),
           _rec("now", 9, "e", "f", 95.55, peak=110.0, device="mlx5_2"),
           _rec("now", 9, "g", "h", 97.0, peak=110.0, device="mlx5_3")]
    return bl.compare(now, HISTORY, ignore_params=bl.DEFAULT_IGNORE_PARAMS)


RUNS = ["r2", "r3", "r4", "r5", "r6"]
GROUP = {"kind": "rdma_bw", "metric": "bw_gbps", "params": {"op": "write", "size": 65536, "sizes": [4096, 65536]},
         "checks": 5, "regressed": 3, "change": -0.289}
GROUP_TEXT = "rdma_bw bw_gbps [op=write size=65536]: 3 of 5 checks regressed, -29 % median"


def test_a_compared_record_says_its_baseline_changes_and_regression():
    compared = _run()
    assert compared[0]["baseline"] is None and compared[0]["regression"] is None
    first = compared[1]
    assert first["baseline"] == {
        "metrics": {"bw_avg_gbps": 100.0, "bw_gbps": 100.0, "bw_peak_gbps": 110.0}, "runs": RUNS, "n": 5,
        "changes": {"bw_avg_gbps": {"value": 100.0, "baseline": 100.0, "change": 0.0, "spread": 0.0},
                    "bw_gbps": {"value": 50.0, "baseline": 100.0, "change": -0.5, "spread": 0.0},
                    "bw_peak_gbps": {"value": 60.0, "baseline": 110.0, "change": -0.4545, "spread": 0.0}}}
    assert first["regression"] == {
        "metrics": {"bw_gbps": {"value": 50.0, "baseline": 100.0, "change": -0.5, "spread": 0.0, "threshold": 0.2},
                    "bw_peak_gbps": {"value": 60.0, "baseline": 110.0, "change": -0.4545, "spread": 0.0,
                                     "threshold": 0.2}},
        "worst_change": -0.5, "threshold": 0.2, "baseline_runs": RUNS}
    assert [r["regression"] is not None for r in compared] == [False, True, True, True, False, False]


def test_the_fleet_shares_a_shift_when_half_its_checks_moved():
    groups = bl.shared_groups(_run())
    assert groups == {("rdma_bw", "bw_gbps", (("op", "write"), ("size", ("int", 65536)),
                                              ("sizes", ("list", (("int", 4096), ("int", 65536)))))): GROUP}
    assert bl.shared_text(GROUP) == GROUP_TEXT


def test_each_regressed_check_is_one_regression_with_every_field():
    compared = _run()
    params = {"op": "write", "size": 65536, "sizes": [4096, 65536], "round": 1}
    # a-b's two records are one check: the worst change of each metric kept (bw from round 2, peak from round 1)
    assert bl.regressions(compared) == [
        {"kind": "rdma_bw", "host": "a", "peer": "b", "params": dict(params, device="mlx5_0"),
         "metric": "bw_gbps", "value": 45.0, "baseline": 100.0, "change": -0.55, "threshold": 0.2,
         "metrics": {"bw_gbps": {"value": 45.0, "baseline": 100.0, "change": -0.55, "spread": 0.0, "threshold": 0.2},
                     "bw_peak_gbps": {"value": 60.0, "baseline": 110.0, "change": -0.4545, "spread": 0.0,
                                      "threshold": 0.2}},
         "baseline_runs": RUNS, "check": "rdma_bw b->a [device=mlx5_0 op=write size=65536]", "shared": None},
        {"kind": "rdma_bw", "host": "c", "peer": "d", "params": dict(params, device="mlx5_1"),
         "metric": "bw_gbps", "value": 71.1, "baseline": 100.0, "change": -0.289, "threshold": 0.2,
         "metrics": {"bw_gbps": {"value": 71.1, "baseline": 100.0, "change": -0.289, "spread": 0.0,
                                 "threshold": 0.2}},
         "baseline_runs": RUNS, "check": "rdma_bw d->c [device=mlx5_1 op=write size=65536]", "shared": GROUP}]


def test_each_regressed_check_is_one_history_record_with_its_cause_and_fix():
    compared = _run()
    params = {"op": "write", "size": 65536, "sizes": [4096, 65536], "round": 1, "check_kind": "rdma_bw"}
    assert bl.regression_records(compared) == [
        {"kind": "regression", "host": "a", "peer": "b", "params": dict(params, device="mlx5_0"),
         "metrics": {"bw_gbps_change": -0.55, "bw_peak_gbps_change": -0.4545}, "verdict": "warn",
         "cause": "rdma_bw b->a [device=mlx5_0 op=write size=65536] bw_gbps is 45, -55% against its baseline 100 "
                  "(median of 5 run(s))",
         "fix": "Compare with the baseline runs (r4, r5, r6); look for a slowed link, a changed setting or load on a.",
         "evidence": []},
        {"kind": "regression", "host": "c", "peer": "d", "params": dict(params, device="mlx5_1"),
         "metrics": {"bw_gbps_change": -0.289}, "verdict": "warn",
         "cause": "rdma_bw d->c [device=mlx5_1 op=write size=65536] bw_gbps is 71.1, -29% against its baseline 100 "
                  "(median of 5 run(s))",
         "fix": "Shared with the fleet (%s): look for what these checks share - load on the hosts, a firmware or "
                "configuration change, the fabric - not this pair." % GROUP_TEXT,
         "evidence": [GROUP_TEXT]}]


# ---------------------------------------------------------------- shared groups at their bounds

def _compared(host, change, regressed, kind="rdma_bw", retest=False, baseline=True, **extra):
    params = {"op": "write", "device": "mlx5_%s" % host}
    if retest:
        params["retest"] = True
    changes = dict(extra, bw_gbps={"change": change})
    data = {"value": 100.0 * (1 + change), "baseline": 100.0, "change": change, "threshold": 0.2, "spread": 0.0}
    return {"kind": kind, "host": host, "peer": "z", "params": params,
            "baseline": {"changes": changes} if baseline else None,
            "regression": {"metrics": {"bw_gbps": data}, "baseline_runs": ["r1"]} if regressed else None}


def test_a_group_needs_four_checks_and_half_of_them_regressed():
    four_half = [_compared("a", -0.31234, True), _compared("b", -0.21234, True), _compared("c", -0.01234, False),
                 _compared("d", -0.11111, False)]
    groups = list(bl.shared_groups(four_half).values())
    assert len(groups) == 1
    group = groups[0]
    # the median of -0.21234 and -0.11111, to four places
    assert group["checks"] == 4 and group["regressed"] == 2 and group["change"] == -0.1617
    assert bl.shared_groups(four_half[:1] + [_compared("b", -0.05, False)] + four_half[2:]) == {}
    assert bl.shared_groups([_compared(h, -0.3, True) for h in "abc"]) == {}


def test_a_group_counts_only_compared_checks_of_its_test_and_every_metric_of_them():
    records = [_compared("n", -0.3, True, baseline=False),             # no baseline: not a check of the fleet
               _compared("r", -0.3, True, retest=True),                # a retest: its run's evidence, not a check
               _compared("k", -0.3, True, kind="rdma_lat"),            # another kind
               # an unregressed metric before the regressed one in each check's changes
               _compared("a", -0.3, True, bw_avg_gbps={"change": 0.0}),
               _compared("b", -0.3, True, bw_avg_gbps={"change": 0.0}),
               _compared("c", 0.0, False, bw_avg_gbps={"change": 0.0}),
               _compared("d", 0.0, False, bw_avg_gbps={"change": 0.0})]
    groups = bl.shared_groups(records)
    assert [(g["kind"], g["checks"], g["regressed"]) for g in groups.values()] == [("rdma_bw", 4, 2)]


@pytest.mark.parametrize("name, change, shift, within", [
    ("bw_gbps", -0.625, -0.5, True),      # (1 - 0.625) / (1 - 0.5) - 1 = -0.25: at the threshold, within
    ("bw_gbps", -0.7, -0.5, False),       # -0.4
    ("lat_us", 1.5, 1.0, True),           # 2.5 / 2 - 1 = +0.25: at the threshold, within
    ("lat_us", 1.6, 1.0, False),          # +0.3
    ("bw_gbps", -1.0, -1.0, False),       # a fleet that lost everything has no shift to measure from
    ("bw_gbps", -1.0, -1.5, False),
])
def test_a_regression_is_within_its_fleets_shift_up_to_its_threshold(name, change, shift, within):
    assert bl._within_shift(name, {"change": change, "threshold": 0.25}, shift) is within


def test_the_shared_text_shows_plain_params_sorted_and_the_median_in_percent():
    params = {"size": 2, "op": "write", "sizes": [2, 4], "opts": {"a": 1}}
    group = {"kind": "rdma_lat", "metric": "lat_avg_us", "params": params, "checks": 16, "regressed": 12,
             "change": 0.854}
    assert bl.shared_text(group) == "rdma_lat lat_avg_us [op=write size=2]: 12 of 16 checks regressed, +85 % median"
    assert bl.shared_text(dict(group, params={"sizes": [2]}, change=-0.125)) == \
        "rdma_lat lat_avg_us: 12 of 16 checks regressed, -12 % median"


# ---------------------------------------------------------------- one record against its baseline

def test_a_record_is_compared_only_with_enough_runs_unless_the_run_was_named():
    record = {"kind": "rdma_bw", "host": "a", "peer": "b", "params": {}, "metrics": {"bw_gbps": 50.0}}
    base = {"metrics": {"bw_gbps": 100.0}, "values": {"bw_gbps": [100.0]}, "runs": ["r1"], "n": 1}
    assert bl.compare_record(record, base)["regression"] is None               # min_runs (3) by default
    assert bl.compare_record(record, base, named_run=True)["regression"]["worst_change"] == -0.5
    # a baseline that does not say how many runs it took is none, even of a named run
    no_n = dict(base)
    del no_n["n"]
    assert bl.compare_record(record, no_n, named_run=True) == dict(record, baseline=None, regression=None)


def test_a_baseline_without_per_run_values_compares_with_its_medians_and_skips_what_the_record_lacks():
    # a named run's baseline as a caller may give it: its metrics, one value each
    record = {"kind": "rdma_bw", "host": "a", "peer": "b", "params": {}, "metrics": {"bw_gbps": 50.0}}
    base = {"metrics": {"bw_avg_gbps": 100.0, "bw_gbps": 100.0}, "runs": ["r1"], "n": 1}
    out = bl.compare_record(record, base, named_run=True)
    assert out["baseline"]["changes"] == {"bw_gbps": {"value": 50.0, "baseline": 100.0, "change": -0.5,
                                                      "spread": 0.0}}
    assert out["regression"]["metrics"]["bw_gbps"]["threshold"] == 0.2


# ---------------------------------------------------------------- the rule

def test_a_change_exactly_at_the_threshold_is_no_regression_either_way():
    rule = bl.RegressionRule(threshold=0.25, latency_threshold=0.25)
    assert rule.judge("bw_gbps", 75.0, [100.0, 100.0, 100.0])["regressed"] is False
    assert rule.judge("bw_gbps", 74.0, [100.0, 100.0, 100.0])["regressed"] is True
    assert rule.judge("lat_us", 1.25, [1.0, 1.0, 1.0])["regressed"] is False
    assert rule.judge("lat_us", 1.26, [1.0, 1.0, 1.0])["regressed"] is True


def test_a_baseline_below_one_is_judged_and_one_not_above_zero_is_not():
    rule = bl.RegressionRule()
    assert rule.judge("bw_gbps", 0.25, [0.5, 0.5, 0.5])["change"] == -0.5
    assert rule.judge("bw_gbps", 0.25, [-0.5, -0.5, -0.5]) is None
    assert rule.judge("bw_gbps", 0.25, [0.0, 0.0, 0.0]) is None


def test_the_direction_given_decides_the_threshold_and_the_way_that_is_worse():
    rule = bl.RegressionRule(threshold=0.1, latency_threshold=0.5)
    assert rule.configured("lat_us", bl.HIGHER) == 0.1 and rule.configured("lat_us") == 0.5
    # a metric read as higher-is-better although its name says latency: its drop is what regresses, by 10 %
    judged = rule.judge("lat_us", 8.5, [10.0, 10.0, 10.0], direction=bl.HIGHER)
    assert judged["threshold"] == 0.1 and judged["regressed"] is True


def test_the_judgement_rounds_change_spread_and_threshold_to_four_places():
    rule = bl.RegressionRule(threshold=0.1)
    # MAD 4.4443 on a median of 100: the spread 0.044443, five of it 0.222215
    judged = rule.judge("bw_gbps", 70.0, [100.0 - 4.4443, 100.0, 100.0 + 4.4443])
    assert judged == {"value": 70.0, "baseline": 100.0, "change": -0.3, "threshold": 0.2222, "spread": 0.0444,
                      "runs": 3, "regressed": True}


def test_the_spread_of_two_runs_is_their_mad_over_the_median_and_a_zero_median_has_none():
    assert bl.relative_spread([90.0, 110.0]) == 0.1
    assert bl.relative_spread([100.0]) == 0.0
    assert bl.relative_spread([-1.0, 0.0, 1.0]) == 0.0


def test_the_regression_rule_of_the_options_keeps_each_of_them():
    rule = bl.rule_of(0.3, {"lat_us": 0.9}, 4, 0.6, 7.0)
    assert (rule.threshold, rule.thresholds, rule.min_runs, rule.latency_threshold, rule.spread_k) == (
        0.3, {"lat_us": 0.9}, 4, 0.6, 7.0)


# ---------------------------------------------------------------- building baselines

def _hist(run, day, bw, kind="rdma_bw", verdict="pass", time=True, **params):
    record = {"run_id": run, "kind": kind, "host": "a", "peer": "b", "verdict": verdict,
              "params": params or {"op": "write"}, "metrics": {"bw_gbps": bw}}
    if time:
        record["time"] = "2026-05-%02dT00:00:00.000000Z" % day
    return record


def test_k_of_one_takes_the_latest_run_and_a_run_without_a_time_is_the_oldest():
    key = bl.record_key(_hist("x", 1, 1.0))
    builder = bl.BaselineBuilder(k=1, keys={key})
    for record in (_hist("r1", 1, 10.0), _hist("r3", 3, 30.0), _hist("r0", 0, 99.0, time=False),
                   _hist("r2", 2, 20.0)):
        builder.add(record)
    assert builder.baseline(key) == {"metrics": {"bw_gbps": 30.0}, "values": {"bw_gbps": [30.0]}, "runs": ["r3"],
                                     "n": 1}
    assert bl.BaselineBuilder(k=0).k == 1


def test_add_says_whether_it_kept_the_record():
    key = bl.record_key(_hist("x", 1, 1.0))
    builder = bl.BaselineBuilder(keys={key}, exclude_runs=["now"])
    assert builder.add(_hist("r1", 1, 10.0)) is True
    assert builder.add(_hist("r2", 2, 10.0, kind="summary")) is False
    assert builder.add(_hist("r2", 2, 10.0, kind="regression")) is False
    assert builder.add(_hist("r2", 2, 10.0, op="write", retest=True)) is False
    assert builder.add(_hist("now", 2, 10.0)) is False
    assert builder.add(_hist("r2", 2, 10.0, verdict="fail")) is False
    assert builder.add(_hist("r2", 2, 10.0, op="read")) is False                  # not a check of the run
    assert builder.add(dict(_hist("r2", 2, 10.0), metrics={"expected_gbps": 1.0})) is False
    assert builder.add(_hist("r2", 2, 11.0)) is True
    assert builder.baseline(key)["runs"] == ["r1", "r2"]
    named = bl.BaselineBuilder(keys={key}, baseline_run="r1")
    assert named.add(_hist("r2", 2, 10.0)) is False and named.add(_hist("r1", 1, 10.0, verdict="error")) is False
    assert named.add(_hist("r1", 1, 10.0, verdict="fail")) is True


def test_a_builder_is_satisfied_once_every_check_has_k_runs_or_the_named_run_is_read():
    first, second = bl.record_key(_hist("x", 1, 1.0)), bl.record_key(_hist("x", 1, 1.0, op="read"))
    builder = bl.BaselineBuilder(k=2, keys={first, second})
    assert builder.satisfied() is False
    for run, day in (("r1", 1), ("r2", 2)):
        builder.add(_hist(run, day, 10.0))
    assert builder.satisfied() is False                       # the read check has no run yet
    builder.add(_hist("r1", 1, 10.0, op="read"))
    assert builder.satisfied() is False                       # one run of two
    builder.add(_hist("r2", 2, 10.0, op="read"))
    assert builder.satisfied() is True
    assert bl.BaselineBuilder(k=2).satisfied() is False       # without keys: never
    named = bl.BaselineBuilder(keys={first}, baseline_run="r1")
    assert named.satisfied() is False
    named.add(_hist("r1", 1, 10.0))
    assert named.satisfied() is True


def test_compare_leaves_out_the_runs_it_is_told_to_and_takes_k_runs():
    days = ((1, 10.0), (2, 100.0), (3, 100.0), (4, 100.0), (5, 1.0))
    history = [_hist("r%d" % day, day, bw) for day, bw in days]
    [out] = bl.compare([_hist("now", 9, 100.0)], history, k=3, exclude_runs=["r5"], min_runs=3)
    assert out["baseline"]["runs"] == ["r2", "r3", "r4"] and out["baseline"]["metrics"] == {"bw_gbps": 100.0}
    [default_k] = bl.compare([_hist("now", 9, 100.0)], history, exclude_runs=["r5"], min_runs=3)
    assert default_k["baseline"]["runs"] == ["r1", "r2", "r3", "r4"]


# ---------------------------------------------------------------- check keys

class Params(collections.OrderedDict):
    """A params mapping that is not a plain dict (a record built by a caller, not decoded from JSON)."""


def test_the_keys_of_params_and_metrics_that_are_not_plain_dicts_are_record_keys():
    keys = bl.CheckKeys(ignore_params=["round"])
    record = {"kind": "rdma_bw", "host": "a", "peer": "b", "params": Params([("op", "write"), ("round", 3)])}
    assert keys.key(record) == bl.record_key(record, ["round"]) == ("rdma_bw", "a", "b", (("op", "write"),))
    metrics = Params([("bw_gbps", 10), ("expected_gbps", 5.0), ("lat_us", 7), ("p99_us", "7.5")])
    assert keys.metrics(metrics) == bl.comparable_metrics(metrics) == {"bw_gbps": 10.0, "lat_us": 7.0}


def test_params_that_differ_inside_a_dict_or_a_list_are_other_checks():
    def key(value):
        return bl.record_key({"kind": "k", "host": "a", "peer": "b", "params": {"x": value}})
    when = datetime.datetime(2026, 1, 1)
    different = [{"a": 1}, {"b": 1}, ["a"], ["b"], [when], [when + datetime.timedelta(days=1)], [1], ["1"], [None],
                 ["None"]]
    assert len(set(key(v) for v in different)) == len(different)
    # a value JSON has no type for, inside a list, keys by its text: the key stays hashable
    assert hash(key([bytearray(b"x")])) == hash(key([bytearray(b"x")]))


def test_a_check_is_described_by_its_plain_params_thawed_not_its_scheduling():
    record = {"kind": "rdma_bw", "host": "a", "peer": "b",
              "params": {"op": "write", "round": 3, "size": 65536, "opts": {"qps": [1, 2]}, "sizes": [1, 2]}}
    assert bl.describe_key(bl.record_key(record)) == "rdma_bw b->a [op=write size=65536]"
    # the test's params of a group are given back as they were: lists, numbers, None and booleans in them
    records = []
    for host in "abcd":
        item = _compared(host, -0.3 if host in "ab" else 0.0, host in "ab")
        item["params"].update(sizes=[4096, 2.5, None, True], opts={"qps": 2})
        records.append(item)
    found = list(bl.shared_groups(records).values())
    assert len(found) == 1
    assert found[0]["params"] == {"op": "write", "sizes": [4096, 2.5, None, True], "opts": {"qps": 2}}


def test_a_builder_for_every_check_still_leaves_out_summaries_and_regressions():
    builder = bl.BaselineBuilder()
    assert builder.add(_hist("r1", 1, 10.0, kind="summary")) is False
    assert builder.add(_hist("r1", 1, 10.0, kind="regression")) is False
    assert builder.add(_hist("r1", 1, 10.0)) is True
    assert [key[0] for key in builder.baselines()] == ["rdma_bw"]


def test_of_two_records_of_one_check_that_regressed_alike_the_first_ones_numbers_are_kept():
    # rounds compared apart (no ignored params): the same change from two baselines
    first, second = _compared("a", -0.5, True), _compared("a", -0.5, True)
    second["params"]["round"] = 2
    second["regression"]["metrics"]["bw_gbps"].update(value=100.0, baseline=200.0)
    [regression] = bl.regressions([first, second])
    assert (regression["value"], regression["baseline"]) == (50.0, 100.0)
