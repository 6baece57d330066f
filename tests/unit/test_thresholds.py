# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hardware, fleet and history thresholds, and which of them tripped."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import stats
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import thresholds as th
from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_thresholds import commcheck_thresholds


def rec(host, peer, value, rail=0, op="write", rate=400.0, verdict="pass", kind="rdma_bw", **params):
    base = {"op": op, "metric": "bw", "rail": rail, "size": 65536}
    base.update(params)
    return {"kind": kind, "host": host, "peer": peer, "params": base,
            "metrics": {"bw_gbps": value, "expected_gbps": rate}, "verdict": verdict, "cause": None, "fix": None,
            "evidence": []}


def test_expected_bandwidth_is_rate_times_efficiency():
    assert th.expected_bw(400, "write") == (360.0, 0.9)
    assert th.expected_bw(400, "read", {"read": 0.8}) == (320.0, 0.8)
    assert th.expected_bw(400, "write", 0.95, bidirectional=True) == (760.0, 0.95)
    assert th.expected_bw(400, "atomic") == (None, None)
    assert th.expected_bw(400, "atomic", {"atomic": 0.5}) == (200.0, 0.5)
    assert th.expected_bw(400, "atomic", 0.95) == (None, None)
    assert th.expected_bw(None, "write") == (None, 0.9)
    assert th.expected_bw(400, "weird", {"default": 0.7}) == (280.0, 0.7)


def test_collective_expectation_from_rails_and_rate():
    # 8 rails of 400 Gb/s = 400 GB/s of bus bandwidth at line rate
    assert th.expected_busbw(8, 400, "all_reduce") == (320.0, 0.8)
    assert th.expected_busbw(8, 400, "alltoall") == (240.0, 0.6)
    assert th.expected_busbw(2, 100, "all_gather", {"all_gather": 0.9}) == (22.5, 0.9)
    assert th.expected_busbw(0, 100, "all_reduce")[0] is None


def test_bad_efficiency_is_refused():
    with pytest.raises(th.ThresholdError):
        th.efficiency_for("write", {"write": 1.5})
    with pytest.raises(th.ThresholdError):
        th.efficiency_for("write", "fast")
    with pytest.raises(AnsibleFilterError, match="efficiency"):
        commcheck_thresholds([], efficiency={"read": 0})


def fleet(values, **kw):
    return [rec("h%d" % i, "h%d" % (i + 10), v, **kw) for i, v in enumerate(values)]


def test_hardware_only():
    recs = fleet([380, 385, 350, 382])
    recs[2].update(verdict="fail", cause="350 Gb/s is below 90% of the expected 400 Gb/s")
    out = th.evaluate(recs)
    low = out["records"][2]
    assert low["cause"] == "350 Gb/s is below 90% of the expected 400 Gb/s [thresholds tripped: hardware]"
    assert low["thresholds"]["tripped"] == ["hardware"]
    assert low["metrics"]["hw_expected_gbps"] == 360.0 and low["metrics"]["link_rate_gbps"] == 400.0
    assert "hardware: 350 < 360 (link rate 400 x efficiency 0.9)" in low["evidence"][-1]
    assert out["summary"]["tripped"] == {"hardware": 1, "fleet": 0, "history": 0}
    assert all(r["thresholds"]["tripped"] == [] for i, r in enumerate(out["records"]) if i != 2)


def test_fleet_outlier_that_passes_the_hardware_line():
    out = th.evaluate(fleet([398, 399, 397, 398, 396, 399, 362]), outlier_min_rel=0.05)
    low = out["records"][-1]
    assert low["thresholds"]["tripped"] == ["fleet"]
    assert low["thresholds"]["fleet"]["median"] == 398 and low["thresholds"]["fleet"]["robust_z"] < -3.5
    assert out["summary"]["only_fleet_or_history"] == 1
    # with the default 20% minimum distance it is not an outlier
    assert th.evaluate(fleet([398, 399, 397, 398, 396, 399, 362]))["summary"]["tripped_records"] == 0


def history_runs(values_by_run, host="h1", peer="h2"):
    out = []
    for num, value in enumerate(values_by_run):
        record = rec(host, peer, value)
        record.update(run_id="run%d" % num, time="2025-01-%02dT00:00:00Z" % (num + 1))
        out.append(record)
    return out


def test_history_of_the_pair_and_of_the_host():
    past = history_runs([395, 396, 394])
    now = [rec("h1", "h2", 370), rec("h3", "h4", 396), rec("h5", "h6", 397)]
    out = th.evaluate(now, history=past, history_threshold=0.05)
    first = out["records"][0]
    assert first["thresholds"]["tripped"] == ["history"]
    assert first["thresholds"]["history"]["scope"] == "pair" and first["thresholds"]["history"]["baseline"] == 395
    assert first["metrics"]["history_baseline"] == 395
    assert "history: -6% against the pair baseline 395 (3 runs)" in first["evidence"][-1]
    # a new peer of h1: the host's own baseline is used
    out = th.evaluate([rec("h1", "h9", 300)], history=past, history_threshold=0.05)
    hist = out["records"][0]["thresholds"]["history"]
    assert hist["scope"] == "host" and hist["tripped"]
    assert out["summary"]["hosts_below_history"][0]["host"] == "h1"
    # min_runs: not enough history yet
    out = th.evaluate(now, history=past, history_threshold=0.05, min_runs=4)
    assert out["records"][0]["thresholds"]["history"] == {"checked": False}


def test_history_ignores_failed_runs_and_the_current_run():
    past = history_runs([395, 396, 394])
    past[1]["verdict"] = "fail"
    past.append(dict(rec("h1", "h2", 100), run_id="now", time="2025-02-01T00:00:00Z"))
    out = th.evaluate([rec("h1", "h2", 370)], history=past, run_id="now", history_threshold=0.05, min_runs=2)
    assert out["records"][0]["thresholds"]["history"]["runs"] == 2


def test_all_three_and_verdicts():
    past = history_runs([395] * 3)
    now = [rec("h1", "h2", 120)] + [rec("h%d" % i, "h%d" % (i + 1), 396 + i % 3) for i in range(3, 12, 2)]
    out = th.evaluate(now, history=past, set_verdicts=True)
    first = out["records"][0]
    assert first["thresholds"]["tripped"] == ["hardware", "fleet", "history"]
    assert first["verdict"] == "fail" and first["cause"].startswith("120 is below the hardware expectation 360")
    assert first["cause"].endswith("[thresholds tripped: hardware, fleet, history]")
    assert all(r["verdict"] == "pass" for r in out["records"][1:])
    # fleet only: pass -> warn; error / flaky / skipped / fail untouched
    recs = fleet([398, 399, 397, 398, 396, 399, 300], rate=300)
    recs.append(rec("x", "y", 10, verdict="flaky"))
    recs.append(rec("x", "z", None, verdict="error"))
    out = th.evaluate(recs, set_verdicts=True)
    assert out["records"][6]["verdict"] == "warn" and out["records"][6]["thresholds"]["tripped"] == ["fleet"]
    assert out["records"][6]["cause"].startswith("thresholds tripped (fleet) -- fleet: robust z")
    assert out["records"][7]["verdict"] == "flaky" and "thresholds" not in out["records"][8]
    assert recs[6]["verdict"] == "pass"


def test_rates_override_and_latency_and_collectives():
    out = th.evaluate([rec("h1", "h2", 150, rate=None)], rates={"h1": {0: 200}, "h2": {"0": 400}})
    assert out["records"][0]["metrics"]["link_rate_gbps"] == 200 and out["records"][0]["thresholds"]["tripped"] == [
        "hardware"]
    lat = [{"kind": "rdma_lat", "host": "h%d" % i, "peer": "x", "params": {"op": "write", "metric": "lat"},
            "metrics": {"lat_us": v}, "verdict": "pass"} for i, v in enumerate([2.0, 2.1, 2.0, 2.05, 9.0])]
    out = th.evaluate(lat)
    assert [r["thresholds"]["tripped"] for r in out["records"]] == [[], [], [], [], ["fleet"]]
    assert out["records"][0]["thresholds"]["hardware"] == {"checked": False}
    coll = {"kind": "collective", "host": "pool", "peer": None, "verdict": "pass",
            "params": {"op": "all_reduce", "rails": 2, "rate_gbps": 100}, "metrics": {"busbw_gbs": 15.0}}
    out = th.evaluate([coll])
    hw = out["records"][0]["thresholds"]["hardware"]
    assert hw["expected"] == 20.0 and hw["tripped"] and out["records"][0]["metrics"]["hw_expected_busbw_gbs"] == 20.0


def test_filter_wraps_and_checks():
    out = commcheck_thresholds(fleet([380, 300, 390]), efficiency={"write": 0.5})
    assert out["summary"]["tripped"]["hardware"] == 0
    with pytest.raises(AnsibleFilterError, match="must be a list"):
        commcheck_thresholds("x")
    with pytest.raises(AnsibleFilterError, match="min_runs"):
        commcheck_thresholds([], min_runs=0)


def _coll(host, busbw, operation="all_reduce", verdict="pass", **metrics):
    params = {"library": "nccl", "operation": operation, "mode": "per_node", "stage": "pool", "hosts": [host],
              "nodes": 1, "ranks": 8, "min_bytes": 1024, "max_bytes": 1 << 30, "datatype": "float"}
    metrics = dict(metrics, busbw_gbs=busbw)
    return {"kind": "collective", "host": host, "peer": None, "params": params, "metrics": metrics,
            "verdict": verdict}


def test_collective_hardware_uses_the_runs_own_pass_line_first():
    # the collective module judged against 100 GB/s x min_fraction 0.8 = 80: the thresholds agree with it
    ok, low = th.evaluate([_coll("n1", 85.0, expected_busbw_gbs=100.0, threshold_busbw_gbs=80.0),
                           _coll("n2", 70.0, expected_busbw_gbs=100.0, threshold_busbw_gbs=80.0)])["records"]
    assert ok["thresholds"]["hardware"]["tripped"] is False and ok["metrics"]["hw_expected_busbw_gbs"] == 80.0
    assert low["thresholds"]["hardware"]["tripped"] is True
    assert "pass line of the run" in low["evidence"][-1]
    # only the nominal expectation: x the collective's efficiency (all_gather 0.8, alltoall 0.6)
    (rec,) = th.evaluate([_coll("n1", 70.0, operation="alltoall", expected_busbw_gbs=100.0)])["records"]
    assert rec["thresholds"]["hardware"]["expected"] == 60.0 and rec["thresholds"]["tripped"] == []


def test_collective_fleet_compares_like_with_like():
    records = [_coll("n%d" % i, v) for i, v in enumerate([180.0, 182.0, 179.0, 181.0, 120.0])]
    # all_gather runs are slower by nature: they are not outliers among all_reduce runs, nor make n4 normal
    records += [_coll("n%d" % i, 90.0, operation="all_gather") for i in range(5)]
    out = th.evaluate(records, set_verdicts=True)["records"]
    tripped = [(r["host"], r["params"]["operation"]) for r in out if r["thresholds"]["tripped"]]
    assert tripped == [("n4", "all_reduce")]
    assert out[4]["verdict"] == "warn" and out[4]["thresholds"]["tripped"] == ["fleet"]
    assert all(r["verdict"] == "pass" for r in out[:4] + out[5:])


def test_collective_history_baseline_per_node():
    past = [dict(_coll("n1", 180.0 + run), run_id="r%d" % run, time="2026-11-0%dT00:00:00Z" % (run + 1))
            for run in range(3)]
    (rec,) = th.evaluate([_coll("n1", 120.0)], history=past, set_verdicts=True)["records"]
    assert rec["thresholds"]["history"]["checked"] and rec["thresholds"]["tripped"] == ["history"]
    assert rec["thresholds"]["history"]["scope"] == "pair" and rec["verdict"] == "warn"


def test_host_baseline_is_the_kinder_one_of_the_two_hosts():
    # no pair history: bandwidth takes the higher host baseline, latency the lower
    record = rec("h1", "h2", 350)
    group = th._group(record)
    host_base = {("h1", group): {"baseline": 300.0, "runs": 2}, ("h2", group): {"baseline": 390.0, "runs": 2}}
    assert th._history_baseline(record, True, {}, host_base, 1) == ({"baseline": 390.0, "runs": 2}, "host")
    assert th._history_baseline(record, False, {}, host_base, 1) == ({"baseline": 300.0, "runs": 2}, "host")
    assert th._history_baseline(record, True, {}, host_base, 3) == (None, "host")


def _tcp(values, verdict="pass"):
    """TCP pair records as pair_analysis.analyze_pairs leaves them when no link rate is known."""
    return [rec("t%d" % i, "t%d" % (i + 1), v, op="tcp", rate=None, verdict=verdict, kind="tcp_bw", size=None)
            for i, v in enumerate(values)]


def _lat(values):
    return [{"kind": "rdma_lat", "host": "h%d" % i, "peer": "h%d" % (i + 1), "verdict": "pass", "cause": None,
             "params": {"op": "write", "metric": "lat", "rail": 0, "size": 2}, "metrics": {"lat_us": v},
             "evidence": []} for i, v in enumerate(values)]


def test_far_tcp_fleet_outlier_fails_on_a_first_run():
    values = [9.41, 9.38, 9.44, 9.36, 9.42, 9.40, 3.8]
    out = commcheck_thresholds(_tcp(values), set_verdicts=True, fleet_min_fraction=0.9)
    slow = out["records"][-1]
    assert slow["thresholds"]["tripped"] == ["fleet"] and slow["thresholds"]["fleet"]["far"]
    assert slow["thresholds"]["hardware"] == {"checked": False}
    assert slow["verdict"] == "fail"
    assert slow["cause"].startswith("3.8 is below 0.9 x the fleet median 9.4 (far fleet outlier")
    assert slow["cause"].endswith("[thresholds tripped: fleet]")
    assert [r["verdict"] for r in out["records"][:-1]] == ["pass"] * 6
    # the fleet warning analyze_pairs already gave becomes a fail too
    out = th.evaluate(_tcp(values[:-1]) + _tcp([3.8], verdict="warn"), set_verdicts=True, fleet_min_fraction=0.7)
    assert out["records"][-1]["verdict"] == "fail"
    # without fleet_min_fraction a fleet outlier only warns (the collective role, direct callers)
    assert th.evaluate(_tcp(values), set_verdicts=True)["records"][-1]["verdict"] == "warn"


def test_fleet_outlier_within_the_fraction_only_warns():
    # 9 % below a tight fleet: an outlier (min_rel 0.05), but above 0.9 x the median
    out = th.evaluate(_tcp([9.41, 9.38, 9.44, 9.36, 9.42, 9.40, 8.6]), set_verdicts=True, outlier_min_rel=0.05,
                      fleet_min_fraction=0.9)
    low = out["records"][-1]
    assert low["thresholds"]["tripped"] == ["fleet"] and not low["thresholds"]["fleet"]["far"]
    assert low["verdict"] == "warn"


def test_far_latency_outlier_is_the_slower_link():
    out = th.evaluate(_lat([2.0, 2.1, 1.95, 2.05, 2.0, 6.1]), set_verdicts=True, fleet_min_fraction=0.7)
    slow = out["records"][-1]
    assert slow["thresholds"]["tripped"] == ["fleet"] and slow["verdict"] == "fail"
    assert slow["cause"].startswith("6.1 is above the fleet median 2.02 / 0.7 (far fleet outlier")
    assert [r["verdict"] for r in out["records"][:-1]] == ["pass"] * 5
    # a link much faster than its peers is no latency outlier
    fast = th.evaluate(_lat([2.0, 2.1, 1.95, 2.05, 2.0, 0.6]), set_verdicts=True, fleet_min_fraction=0.7)
    assert [r["verdict"] for r in fast["records"]] == ["pass"] * 6


def test_the_retests_values_do_not_move_the_line_a_first_pass_record_is_judged_against():
    # a loaded machine's first pass spreads wide; the retests (healthy partners, as-is) sit tight at the median:
    # with them in its group, 22.3 and the two 13s would be far or outliers, though the first pass planned no
    # retest for them
    first = _lat([6.5, 9.0, 12.5, 8.0, 13.0, 10.0, 17.5, 22.3])
    retests = _lat([9.3, 9.35, 9.4, 9.3, 9.33, 9.36])
    for num, record in enumerate(retests):
        record["params"].update(retest="partner" if num % 2 else "as_is", attempt=1)
    alone = th.evaluate(first, set_verdicts=True, fleet_min_fraction=0.5)["records"]
    both = th.evaluate(first + retests, set_verdicts=True, fleet_min_fraction=0.5)["records"]
    assert [r["verdict"] for r in both[:len(first)]] == [r["verdict"] for r in alone] == ["pass"] * len(first)
    assert [r["metrics"]["fleet_median"] for r in both[:len(first)]] == [r["metrics"]["fleet_median"] for r in alone]
    # a retest is judged against the whole group: 19 us, within the first pass's median / 0.5, is far from it
    late = _lat([19.0])[0]
    late["params"].update(retest="as_is", attempt=1)
    assert th.evaluate(first[:-1] + retests + [late], set_verdicts=True, fleet_min_fraction=0.5)["records"][-1][
        "verdict"] == "fail"
    assert th.evaluate(first[:-1] + [_lat([19.0])[0]], set_verdicts=True, fleet_min_fraction=0.5)["records"][-1][
        "verdict"] == "pass"


def test_healthy_noisy_fleet_has_no_outlier():
    bw = [9.4 * f for f in (1.0, 0.91, 1.09, 0.95, 1.05, 0.9, 1.1, 0.97)]
    out = th.evaluate(_tcp(bw), set_verdicts=True, fleet_min_fraction=0.9)
    assert out["summary"]["tripped_records"] == 0 and all(r["verdict"] == "pass" for r in out["records"])
    lat = th.evaluate(_lat([2.0 * f for f in (1.0, 0.9, 1.1, 0.95, 1.05, 1.08)]), set_verdicts=True,
                      fleet_min_fraction=0.9)
    assert lat["summary"]["tripped_records"] == 0


def test_bad_fleet_min_fraction_is_refused():
    with pytest.raises(th.ThresholdError, match="fleet_min_fraction"):
        th.evaluate([], fleet_min_fraction=1.5)
    with pytest.raises(AnsibleFilterError, match="fleet_min_fraction"):
        commcheck_thresholds([], fleet_min_fraction=0)


# --- the history threshold uses the report's regression rule (baseline.RegressionRule) ---

def test_history_needs_three_earlier_runs_by_default():
    out = th.evaluate([rec("h1", "h2", 200)], history=history_runs([395, 396]))
    assert out["records"][0]["thresholds"]["history"] == {"checked": False}
    out = th.evaluate([rec("h1", "h2", 200)], history=history_runs([395, 396, 394]))
    assert out["records"][0]["thresholds"]["history"]["tripped"] is True


def test_history_change_inside_the_spread_does_not_trip():
    noisy = history_runs([400, 280, 520, 340, 460])     # median 400, MAD 60: limit 5 x 0.15 = 0.75
    hist = th.evaluate([rec("h1", "h2", 240)], history=noisy)["records"][0]["thresholds"]["history"]
    assert hist["checked"] and hist["tripped"] is False and hist["threshold"] == 0.75 and hist["change"] == -0.4
    hist = th.evaluate([rec("h1", "h2", 80)], history=noisy)["records"][0]["thresholds"]["history"]
    assert hist["tripped"] is True
    summary = th.evaluate([rec("h1", "h9", 240)], history=noisy)["summary"]
    assert summary["hosts_below_history"] == []


def _lat_rec(host, peer, value, run=None, day=1):
    record = rec(host, peer, 0, kind="rdma_lat", metric="lat")
    record["metrics"] = {"lat_us": value}
    if run:
        record.update(run_id=run, time="2025-01-%02dT00:00:00Z" % day)
    return record


def test_history_latency_gets_the_wider_default():
    past = [_lat_rec("h1", "h2", 2.0, "r%d" % i, i + 1) for i in range(3)]
    hist = th.evaluate([_lat_rec("h1", "h2", 2.8)], history=past)["records"][0]["thresholds"]["history"]
    assert hist["checked"] and hist["tripped"] is False and hist["threshold"] == 0.5    # +40 %: noise for latency
    hist = th.evaluate([_lat_rec("h1", "h2", 3.2)], history=past)["records"][0]["thresholds"]["history"]
    assert hist["tripped"] is True


def test_a_late_nic_in_half_of_its_rails_pairs_fails_against_the_best_links():
    # one host of a 4-host ring answers late on rail 0: 2 of the rail's 4 pairs, so the median and the MAD are
    # its own; the rail's best links still show what the rail can do (seen in the lab: 1,100 us against 25)
    records = [_lat_rec("h1", "h2", 1103.8), _lat_rec("h3", "h4", 24.9), _lat_rec("h2", "h3", 1098.4),
               _lat_rec("h4", "h1", 25.3)]
    out = th.evaluate(records, set_verdicts=True, fleet_min_fraction=0.5)
    assert [r["verdict"] for r in out["records"]] == ["fail", "pass", "fail", "pass"]
    late = out["records"][0]
    assert late["thresholds"]["fleet"]["far"] and late["metrics"]["fleet_best"] == 24.9
    assert late["cause"].startswith("1104 is 3 x or more slower than the best quarter 24.9 of 4 comparable records")
    assert "off its best quarter 24.9" in late["evidence"][-1]


def test_latency_spread_of_a_healthy_rail_stays_below_three_times_its_best():
    # same-leaf and cross-spine pairs of one rail (one to five switch hops) differ by less than 3 x
    records = [_lat_rec("h%d" % i, "h%d" % (i + 1), value)
               for i, value in enumerate([1.6, 1.7, 2.9, 3.4, 1.65, 3.1, 2.2, 4.5])]
    out = th.evaluate(records, set_verdicts=True, fleet_min_fraction=0.5)
    assert [r["verdict"] for r in out["records"]] == ["pass"] * 8
    # same-leaf pairs at 1.1 us and cross-pod ones at 3.4 us: over 3 x, but a few microseconds are topology
    records = [_lat_rec("h%d" % i, "h%d" % (i + 1), value) for i, value in enumerate([1.1, 1.1, 3.4, 3.4])]
    assert all("fleet_best" not in r["metrics"]
               for r in th.evaluate(records, set_verdicts=True, fleet_min_fraction=0.5)["records"])


def test_a_slow_host_in_half_of_its_rails_pairs_fails_without_a_known_link_rate():
    # no link rate (no hardware threshold): one host at a tenth of the others in a 4-host ring is half of the
    # rail's pairs; the median alone (about 245) let it pass
    records = [rec("h1", "h2", 39.0, rate=None), rec("h3", "h4", 390.0, rate=None),
               rec("h2", "h3", 40.0, rate=None), rec("h4", "h1", 392.0, rate=None)]
    out = th.evaluate(records, set_verdicts=True, fleet_min_fraction=0.5)
    assert [r["verdict"] for r in out["records"]] == ["fail", "pass", "fail", "pass"]
    assert out["records"][0]["cause"].startswith("39 is 3 x or more lower than the best quarter 392 of 4")
    # half as fast is not a third: left to the hardware and median rules
    records = [rec("h1", "h2", 200.0, rate=None), rec("h3", "h4", 390.0, rate=None),
               rec("h2", "h3", 200.0, rate=None), rec("h4", "h1", 392.0, rate=None)]
    out = th.evaluate(records, set_verdicts=True, fleet_min_fraction=0.5)
    assert all("fleet_best" not in r["metrics"] for r in out["records"])


def test_without_fleet_min_fraction_nothing_is_far_from_the_best_either():
    records = [_lat_rec("h1", "h2", 1103.8), _lat_rec("h3", "h4", 24.9), _lat_rec("h2", "h3", 1098.4),
               _lat_rec("h4", "h1", 25.3)]
    out = th.evaluate(records, set_verdicts=True)
    assert [r["verdict"] for r in out["records"]] == ["pass"] * 4


# --- the pieces, whole answers ------------------------------------------------------------------------

def test_one_efficiency_number_sets_every_judged_op_and_ops_are_named_in_any_case():
    assert th.efficiency_for("write", 0.8) == 0.8 and th.efficiency_for("made-up", 0.8) == 0.8
    assert th.efficiency_for("atomic", 0.8) is None            # atomics stay a message rate
    # an operator's 'Write' or 'AllReduce' is the op write / allreduce (it was silently ignored)
    assert th.efficiency_for("write", {"Write": 0.7}) == 0.7
    assert th.efficiency_for("allreduce", {"AllReduce": 0.6}, collective=True) == 0.6
    # an op set to None is no longer judged against the line rate
    assert th.expected_bw(400, "read", {"read": None}) == (None, None)
    assert (th.efficiency_for("made-up"), th.efficiency_for(None), th.efficiency_for("made-up", collective=True),
            th.efficiency_for("AllReduce", collective=True)) == (0.9, 0.9, 0.8, 0.8)


@pytest.mark.parametrize("override, message", [
    ({"read": 0}, "efficiency[read] must be a fraction in (0, 1], got 0"),
    ({"Read": 1.01}, "efficiency[Read] must be a fraction in (0, 1], got 1.01"),
    ({"read": "0.9"}, "efficiency[read] must be a fraction in (0, 1], got '0.9'"),
    (True, "efficiency must be a number or a dict of op -> fraction, got True"),
    ([0.9], "efficiency must be a number or a dict of op -> fraction, got [0.9]"),
])
def test_a_bad_efficiency_says_which_and_why(override, message):
    with pytest.raises(th.ThresholdError) as err:
        th.efficiency_for("read", override)
    assert str(err.value) == message


def test_expectations_need_a_positive_rate_and_rails():
    assert th.expected_bw(0.5, "write") == (0.45, 0.9)               # half a Gb/s is a rate (the lab's links)
    assert th.expected_bw(0, "write") == (None, 0.9) and th.expected_bw("400", "write") == (None, 0.9)
    assert th.expected_busbw(8, 0.5, "all_reduce") == (0.4, 0.8)
    assert th.expected_busbw("2", 400, "all_reduce") == (80.0, 0.8)
    assert th.expected_busbw(8, 0, "all_reduce") == (None, 0.8) and th.expected_busbw(None, 400, "x") == (None, 0.8)
    assert th.expected_busbw(8, 400, "x", {"x": None}) == (None, None)
    # micro-units: six decimals
    assert th.expected_bw(1.23456789, "write", 1) == (1.234568, 1)
    assert th.expected_busbw(1, 9.87654321, "x", 1) == (1.234568, 1)


def test_median_spread_robust_z_and_best_quarter():
    assert (th.median([3, 1, 2]), th.median([4, 1, 3, 2]), th.median([5]), th.median([])) == (2.0, 2.5, 5.0, None)
    assert th.spread_of([1, 2, 3, 4, 100]) == (3.0, 1.0)
    assert th.spread_of([10, 10, 10, 10]) == (10.0, 0.05)            # the floor: half a percent of the median
    assert th.spread_of([0, 0, 0]) == (0.0, 1e-12) and th.spread_of([]) == (None, None)
    assert round(stats.z_score(100, *th.spread_of([1, 2, 3, 4, 100])), 2) == 65.43
    assert round(stats.z_score(9, *stats.spread([10, 10, 10, 10], floor_rel=0.01)), 2) == -6.74
    values = [9, 1, 5, 3, 7, 2, 8, 4, 6]
    assert (th.best_quarter(values, True), th.best_quarter(values, False), th.best_quarter([], True)) == (7.0, 3.0, None)


@pytest.mark.parametrize("settings, message", [
    ({"outlier_z": -1}, "outlier_z must be a number >= 0, got -1"),
    ({"outlier_min_rel": float("nan")}, "outlier_min_rel must be a number >= 0, got nan"),
    ({"history_threshold": "0.2"}, "history_threshold must be a number >= 0, got '0.2'"),
    ({"min_runs": 0}, "min_runs must be an integer >= 1, got 0"),
    ({"min_runs": True}, "min_runs must be an integer >= 1, got True"),
    ({"fleet_min_fraction": 0}, "fleet_min_fraction must be a fraction in (0, 1] or None, got 0"),
    ({"fleet_min_fraction": 1.5}, "fleet_min_fraction must be a fraction in (0, 1] or None, got 1.5"),
    ({"collective_efficiency": {"all_reduce": 2}}, "collective_efficiency[all_reduce] must be a fraction in (0, 1], got 2"),
])
def test_bad_settings_are_refused_before_any_record_is_judged(settings, message):
    with pytest.raises(th.ThresholdError) as err:
        th.evaluate([rec("h1", "h2", 1.0)], **settings)
    assert str(err.value) == message
    assert th.evaluate([], outlier_z=0, outlier_min_rel=0, history_threshold=0, min_runs=1, fleet_min_fraction=1)


def collective_rec(host, busbw, metrics=None, **params):
    base = {"library": "nccl", "mode": "pool", "stage": "pool", "nodes": 2, "ranks": 16}
    base.update(params)
    values = {"busbw_gbs": busbw}
    values.update(metrics or {})
    return {"kind": "collective", "host": host, "peer": None, "params": base, "metrics": values, "verdict": "pass",
            "cause": None, "fix": None, "evidence": []}


def test_a_collectives_expectation_is_its_own_pass_line_else_rails_x_rate_else_its_nominal_and_says_which():
    records = [collective_rec("h1", 38.0, {"threshold_busbw_gbs": 40.0}, op="all_reduce"),
               collective_rec("h2", 48.0, operation="all_gather", rails=2, rate_gbps=400),
               collective_rec("h3", 60.0, {"expected_busbw_gbs": 123.4567891}, op="alltoall", rails=2),
               collective_rec("h4", 60.0, op="broadcast")]
    out = th.evaluate(records, collective_efficiency={"all_gather": 0.5, "alltoall": 0.5}, set_verdicts=True)
    assert [(r["thresholds"]["hardware"], r["verdict"], r["cause"]) for r in out["records"]] == [
        ({"checked": True, "expected": 40.0, "efficiency": None, "source": "pass line of the run", "value": 38.0,
          "tripped": True}, "fail",
         "38 is below the hardware expectation 40 (pass line of the run) [thresholds tripped: hardware]"),
        ({"checked": True, "expected": 50.0, "efficiency": 0.5, "source": "rails x rate x efficiency", "value": 48.0,
          "tripped": True}, "fail",
         "48 is below the hardware expectation 50 (rails x rate x efficiency, efficiency 0.5) [thresholds tripped: "
         "hardware]"),
        ({"checked": True, "expected": 61.728395, "efficiency": 0.5, "source": "expected x efficiency", "value": 60.0,
          "tripped": True}, "fail",
         "60 is below the hardware expectation 61.7 (expected x efficiency, efficiency 0.5) [thresholds tripped: "
         "hardware]"),
        ({"checked": False}, "pass", None)]
    assert [r["metrics"].get("hw_expected_busbw_gbs") for r in out["records"]] == [40.0, 50.0, 61.728395, None]


def test_far_from_the_best_quarter_at_three_times_exactly():
    assert th.far_from_best(30.0, [90.0, 90.0, 90.0, 30.0], True) == (True, 90.0)
    assert th.far_from_best(31.0, [90.0, 90.0, 90.0, 31.0], True) == (False, 90.0)
    # latency: three times the best quarter and BEST_MIN_LATENCY_GAP_US above it, both at their line
    assert th.far_from_best(7.5, [2.5, 2.6, 2.7, 7.5], False) == (True, 2.5)
    assert th.far_from_best(7.4, [2.5, 2.6, 2.7, 7.4], False) == (False, 2.5)
    assert th.far_from_best(6.0, [0.5, 0.5, 0.5, 6.0], False) == (True, 0.5)       # sub-microsecond fabrics
    assert th.far_from_best(6.0, [0.0, 0.0, 0.0, 6.0], False) == (False, 0.0)
    assert th.far_from_best(1.0, [9.0, 9.0], True) == (False, None)


def test_far_beyond_the_fleet_median_at_the_fraction_exactly():
    assert th.far_outlier(50.0, [100.0] * 9 + [50.0], True, 0.5) == (False, None)
    assert th.far_outlier(49.0, [100.0] * 9 + [49.0], True, 0.5) == (True, {"median": 100.0})
    assert th.far_outlier(20.0, [10.0] * 9 + [20.0], False, 0.5) == (False, None)
    assert th.far_outlier(21.0, [10.0] * 9 + [21.0], False, 0.5) == (True, {"median": 10.0})
    assert th.far_outlier(15.0, [10.0] * 9 + [15.0], False, 0.5) == (False, None)
    assert th.far_outlier(0.3, [0.8] * 9 + [0.3], True, 0.5) == (True, {"median": 0.8})
    assert th.far_outlier(0.3, [0.8] * 9 + [0.3], True, None) == (False, None)


def _fleet_of(values, metric="bw", rails=None):
    kind = "rdma_lat" if metric == "lat" else "rdma_bw"
    out = []
    for num, value in enumerate(values):
        record = rec("h%d" % (num + 2), "h1", value, kind=kind, metric=metric, rail=(rails or {}).get(num, 0))
        record["metrics"] = {"lat_us" if metric == "lat" else "bw_gbps": value}     # no link rate: the fleet judges
        out.append(record)
    return out


def test_a_far_fleet_outlier_fails_and_its_cause_says_far_from_what():
    def cause(records):
        return th.evaluate(records, fleet_min_fraction=0.5, set_verdicts=True)["records"][-1]["cause"]

    assert cause(_fleet_of([100.0 + n * 0.1 for n in range(9)] + [40.0])) == (
        "40 is below 0.5 x the fleet median 100 (far fleet outlier, robust z -81.13, 10 comparable records) "
        "[thresholds tripped: fleet]")
    assert cause(_fleet_of([10.0 + n * 0.1 for n in range(9)] + [25.0], "lat")) == (
        "25 is above the fleet median 10.4 / 0.5 (far fleet outlier, robust z 39.26, 10 comparable records) "
        "[thresholds tripped: fleet]")
    assert cause(_fleet_of([100.0] * 3 + [30.0] * 4)) == (
        "30 is 3 x or more lower than the best quarter 100 of 7 comparable records (far fleet outlier, fleet median "
        "30) [thresholds tripped: fleet]")
    assert cause(_fleet_of([10.0] * 4 + [40.0] * 4, "lat", rails=dict((n, 1) for n in range(4, 8)))) == (
        "40 is 3 x or more slower than the best quarter 10 of another rail's comparable records (far fleet outlier: "
        "rails built alike answer alike) [thresholds tripped: fleet]")


def test_far_text_says_far_from_what_in_the_callers_words():
    assert th.far_text(30.0, {"best": 95.0}, True, 7, 0.5) == \
        "30 is 3 x or more lower than the best quarter 95 of 7 comparable records"
    assert th.far_text(40.0, {"best": 10.0}, False, 8, 0.5, unit=" us", of="%d pairs of the rail") == \
        "40 us is 3 x or more slower than the best quarter 10 us of 8 pairs of the rail"
    assert th.far_text(40.0, {"median": 100.0}, True, 10, 0.5, unit=" Gb/s") == \
        "40 Gb/s is below the fleet median 100 Gb/s x 0.5 of 10 comparable records"
    assert th.far_text(25.0, {"median": 10.4}, False, 10, 0.5) == \
        "25 is above the fleet median 10.4 / 0.5 of 10 comparable records"


def test_far_outlier_needs_three_values_a_robust_z_beyond_3_5_and_a_fifth_from_the_median():
    assert th.far_outlier(20.0, [90.0, 90.0, 20.0], True, 0.5) == (True, {"median": 90.0})
    assert th.far_from_best(20.0, [90.0, 90.0, 20.0], True) == (True, 90.0)
    assert th.far_outlier(20.0, [90.0, 20.0], True, 0.5) == (False, None)
    # robust z -4.05 (beyond the default 3.5) and 30 % off; -2.02 is no outlier
    assert th.far_outlier(70.0, [80.0, 100.0, 100.0, 105.0, 70.0], True, 0.9) == (True, {"median": 100.0})
    assert th.far_outlier(60.0, [110.0, 105.0, 90.0, 70.0, 110.0, 60.0], True, 0.9) == (False, None)
    # beyond 0.9 x the median but only 15 % off it: no; 20 % exactly: yes
    assert th.far_outlier(85.0, [100.0] * 9 + [85.0], True, 0.9) == (False, None)
    assert th.far_outlier(80.0, [100.0] * 9 + [80.0], True, 0.9) == (True, {"median": 100.0})
    # no fraction: only the best quarter's rule; a fleet at zero has no median to be far from
    assert th.far_outlier(30.0, [100.0] * 3 + [30.0], True) == (True, {"best": 100.0})
    assert th.far_outlier(5.0, [0.0, 0.0, 0.0, 5.0], False, 0.5) == (False, None)
