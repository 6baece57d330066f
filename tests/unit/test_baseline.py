# -*- coding: utf-8 -*-
"""Baselines (median of the last K passing runs, or a named run) and regressions."""
import datetime

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history_baseline

UTC = datetime.timezone.utc
T0 = datetime.datetime(2026, 5, 1, tzinfo=UTC)


def _rec(run, day, host="a", peer="b", bw=100.0, lat=None, verdict="pass", kind="rdma_bw", **params):
    metrics = {"bw_gbps": bw, "expected_gbps": 100.0}
    if lat is not None:
        metrics = {"lat_us": lat}
    return {"schema": 1, "run_id": run, "time": history.format_time(T0 + datetime.timedelta(days=day)),
            "kind": kind, "host": host, "peer": peer, "params": params or {"op": "write", "size": 65536},
            "metrics": metrics, "verdict": verdict}


@pytest.mark.parametrize("name, direction", [
    ("bw_gbps", baseline.HIGHER), ("busbw_gbs", baseline.HIGHER), ("algbw_gbs", baseline.HIGHER),
    ("msg_rate_mpps", baseline.HIGHER), ("received_gbps", baseline.HIGHER),
    ("lat_us", baseline.LOWER), ("t_typical_us", baseline.LOWER), ("p99_us", baseline.LOWER),
    ("avg_time_us", baseline.LOWER), ("expected_gbps", baseline.IGNORED), ("fraction", baseline.IGNORED),
    ("retransmits", baseline.IGNORED), ("duration_s", baseline.IGNORED), ("robust_z", baseline.IGNORED),
    ("bw_gbps_change", baseline.IGNORED), ("lat_max_us", baseline.IGNORED), ("t_max_us", baseline.IGNORED),
    ("fleet_median_p99_us", baseline.IGNORED), ("fleet_median_us", baseline.IGNORED),
    ("hw_expected_gbps", baseline.IGNORED), ("hw_expected_busbw_gbs", baseline.IGNORED),
])
def test_metric_direction(name, direction):
    assert baseline.metric_direction(name) == direction


def test_baseline_is_median_of_last_k_passing_runs_of_the_same_check():
    hist = [_rec("r%d" % i, i, bw=bw) for i, bw in enumerate([10, 100, 98, 50, 102, 99, 101])]
    hist[3]["verdict"] = "fail"                         # a failing run never counts
    hist.append(_rec("rX", 8, host="z", bw=1))          # another host: another check
    hist.append(_rec("rY", 9, bw=1, op="read", size=65536))  # other params: another check
    current = [_rec("now", 10, bw=70)]
    [out] = baseline.compare(current, hist, k=5)
    # last 5 passing: r1 100, r2 98, r4 102, r5 99, r6 101 -> median 100 (r0's 10 is older than K)
    assert out["baseline"]["metrics"]["bw_gbps"] == 100
    assert out["baseline"]["n"] == 5
    assert out["regression"]["metrics"]["bw_gbps"]["change"] == -0.3
    assert out["regression"]["baseline_runs"] == ["r1", "r2", "r4", "r5", "r6"]
    assert "expected_gbps" not in out["baseline"]["metrics"]


def test_within_threshold_is_not_a_regression_and_improvement_never_is():
    hist = [_rec("r1", 1, bw=100)]
    small, better = baseline.compare([_rec("n", 2, bw=85), _rec("n", 2, bw=150, host="a")], hist, threshold=0.2,
                                     min_runs=1)
    assert small["regression"] is None and small["baseline"]["changes"]["bw_gbps"]["change"] == -0.15
    assert better["regression"] is None


def test_latency_regresses_upwards_and_per_metric_thresholds():
    hist = [_rec("r%d" % i, i, lat=2.0, kind="rdma_lat") for i in range(3)]
    [out] = baseline.compare([_rec("n", 5, lat=3.2, kind="rdma_lat")], hist, threshold=0.2)
    assert out["regression"]["metrics"]["lat_us"]["change"] == 0.6
    assert out["regression"]["metrics"]["lat_us"]["threshold"] == baseline.DEFAULT_LATENCY_THRESHOLD
    [out] = baseline.compare([_rec("n", 5, lat=2.6, kind="rdma_lat")], hist, threshold=0.2, thresholds={"lat_us": 0.2})
    assert out["regression"]["metrics"]["lat_us"]["change"] == 0.3
    [out] = baseline.compare([_rec("n", 5, lat=3.2, kind="rdma_lat")], hist, threshold=0.2, thresholds={"lat_us": 0.7})
    assert out["regression"] is None


def test_a_shift_of_the_fleets_figures_beside_a_steady_pair_is_no_regression_of_that_pair():
    """The fleet's median p99 and the hardware expectation a record carries are the same for every record of its
    group: only the pair's own measurements are baselined, so a fleet-wide figure moving is not N regressions."""
    def lat(run, day, own_p99, fleet_p99):
        rec = _rec(run, day, lat=8.0, kind="rdma_lat")
        rec["metrics"].update(lat_p99_us=own_p99, fleet_median_p99_us=fleet_p99, fleet_median_us=8.0)
        return rec
    hist = [lat("r%d" % i, i, 20.0, 2000.0) for i in range(3)]
    [steady] = baseline.compare([lat("n", 5, 21.0, 3700.0)], hist)
    assert steady["regression"] is None
    assert "fleet_median_p99_us" not in steady["baseline"]["metrics"]
    [own] = baseline.compare([lat("n", 5, 40.0, 2000.0)], hist)
    assert list(own["regression"]["metrics"]) == ["lat_p99_us"]


def test_current_run_is_excluded_and_no_history_means_no_baseline():
    hist = [_rec("now", 1, bw=10)]
    [out] = baseline.compare([_rec("now", 1, bw=10)], hist, exclude_runs=["now"])
    assert out["baseline"] is None and out["regression"] is None


def test_min_runs():
    hist = [_rec("r1", 1, bw=100)]
    [out] = baseline.compare([_rec("n", 2, bw=10)], hist, min_runs=2)
    assert out["regression"] is None
    [out] = baseline.compare([_rec("n", 2, bw=10)], hist + [_rec("r2", 2, bw=100)], min_runs=2)
    assert out["regression"] is not None


def test_named_baseline_run_is_used_even_if_it_is_not_the_latest():
    hist = [_rec("golden", 1, bw=200), _rec("r2", 2, bw=100), _rec("r3", 3, bw=100)]
    [out] = baseline.compare([_rec("n", 4, bw=120)], hist, baseline_run="golden")
    assert out["baseline"]["runs"] == ["golden"]
    assert out["regression"]["metrics"]["bw_gbps"]["baseline"] == 200


def test_several_records_of_one_check_in_one_run_count_as_one_run():
    hist = [_rec("r1", 1, bw=100), _rec("r1", 1, bw=100), _rec("r1", 1, bw=100), _rec("r2", 2, bw=50)]
    [out] = baseline.compare([_rec("n", 3, bw=75)], hist, k=2, min_runs=2)
    assert out["baseline"]["n"] == 2 and out["baseline"]["metrics"]["bw_gbps"] == 75


def test_ignore_params():
    hist = [_rec("r1", 1, bw=100, op="write", round=1)]
    [out] = baseline.compare([_rec("n", 2, bw=10, op="write", round=3)], hist)
    assert out["baseline"] is None
    [out] = baseline.compare([_rec("n", 2, bw=10, op="write", round=3)], hist, ignore_params=["round"], min_runs=1)
    assert out["regression"] is not None


def test_compare_with_history_streams_from_files(tmp_path):
    d = str(tmp_path)
    for i in range(3):
        history.append_records(d, [_rec("x", 0, host=h, peer=p, bw=100) for h, p in (("a", "b"), ("b", "c"))],
                               "r%d" % i, when=T0 + datetime.timedelta(days=i))
    history.append_records(d, [_rec("x", 0, host="a", peer="b", bw=10)], "now", when=T0 + datetime.timedelta(days=5))
    current = [_rec("now", 5, host="a", peer="b", bw=10), _rec("now", 5, host="b", peer="c", bw=99)]
    out = history_baseline.compare_with_history(current, d, exclude_runs=["now"])
    assert out[0]["regression"]["metrics"]["bw_gbps"]["baseline"] == 100
    assert out[1]["regression"] is None
    regs = baseline.regressions(out)
    assert len(regs) == 1 and regs[0]["host"] == "a" and regs[0]["metric"] == "bw_gbps"
    [reg] = baseline.regression_records(out)
    assert reg["kind"] == "regression" and reg["verdict"] == "warn" and reg["params"]["check_kind"] == "rdma_bw"
    assert "-90%" in reg["cause"]
    history.normalize_records([reg])  # a valid record for the record action


def test_filter_plugin_is_a_thin_wrapper():
    from ansible.errors import AnsibleFilterError
    from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_compare import FilterModule

    compare = FilterModule().filters()["commcheck_compare"]
    hist = [_rec("r1", 1, bw=100, round=0, tcp_port=1)]
    [out] = compare([_rec("n", 2, bw=50, round=3, tcp_port=2)], hist, min_runs=1)  # scheduling params ignored
    assert out["regression"]["metrics"]["bw_gbps"]["change"] == -0.5
    with pytest.raises(AnsibleFilterError):
        compare({"not": "a list"}, hist)


# --- what a regression is (issue 14): enough runs, beyond the noise, latency wider, counted per check ---

def _runs(values, kind="rdma_bw", metric="bw", **kw):
    if metric == "lat":
        return [_rec("r%d" % i, i, lat=v, kind=kind, **kw) for i, v in enumerate(values)]
    return [_rec("r%d" % i, i, bw=v, kind=kind, **kw) for i, v in enumerate(values)]


def test_a_second_healthy_run_against_one_earlier_run_is_not_a_regression():
    # the issue: +83 % latency of a healthy small-message run against a baseline of one run
    [out] = baseline.compare([_rec("n", 9, lat=1.1, kind="rdma_lat")], _runs([0.6], metric="lat"))
    assert out["regression"] is None and out["baseline"] is None
    [out] = baseline.compare([_rec("n", 9, bw=10)], _runs([100, 100]))   # two runs: still too few by default
    assert out["regression"] is None
    [out] = baseline.compare([_rec("n", 9, bw=10)], _runs([100, 100, 100]))
    assert out["regression"]["metrics"]["bw_gbps"]["change"] == -0.9
    assert baseline.DEFAULT_MIN_RUNS == 3


def test_a_change_inside_the_run_to_run_spread_is_not_a_regression():
    noisy = _runs([100, 70, 130, 85, 115])          # median 100, MAD 15: spread 0.15, limit 5 x 0.15 = 0.75
    [out] = baseline.compare([_rec("n", 9, bw=60)], noisy)
    assert out["regression"] is None
    assert out["baseline"]["changes"]["bw_gbps"] == {"value": 60.0, "baseline": 100.0, "change": -0.4, "spread": 0.15}
    # the same -40 % against a steady history is a regression at the configured 20 %
    [out] = baseline.compare([_rec("n", 9, bw=60)], _runs([100, 101, 99, 100, 100]))
    assert out["regression"]["metrics"]["bw_gbps"]["threshold"] == 0.2


def test_a_real_drop_beyond_the_spread_is_a_regression():
    [out] = baseline.compare([_rec("n", 9, bw=20)], _runs([100, 70, 130, 85, 115]))
    reg = out["regression"]["metrics"]["bw_gbps"]
    assert reg["change"] == -0.8 and reg["threshold"] == 0.75 and reg["spread"] == 0.15


def test_rule_limit_is_the_larger_of_the_configured_change_and_k_spreads():
    rule = baseline.RegressionRule(threshold=0.2, spread_k=2)
    assert rule.judge("bw_gbps", 80.0, [100, 100, 100])["threshold"] == 0.2
    assert rule.judge("bw_gbps", 80.0, [100, 80, 120])["threshold"] == 0.4
    assert rule.judge("bw_gbps", 79.0, [100, 100, 100])["regressed"] is True
    assert rule.judge("bw_gbps", 79.0, [100, 80, 120])["regressed"] is False
    assert rule.judge("bw_gbps", 10.0, [100, 100]) is None            # too few runs
    assert rule.judge("expected_gbps", 10.0, [100, 100, 100]) is None  # no direction
    assert baseline.relative_spread([100]) == 0.0 and baseline.relative_spread([100, 80, 120]) == 0.2


def test_latency_default_is_wider_than_bandwidth():
    rule = baseline.RegressionRule()
    assert rule.configured("lat_us") == baseline.DEFAULT_LATENCY_THRESHOLD > rule.configured("bw_gbps")
    assert rule.configured("t_typical_us") == baseline.DEFAULT_LATENCY_THRESHOLD
    assert baseline.RegressionRule(threshold=0.8).configured("lat_us") == 0.8     # never narrower than threshold
    assert baseline.RegressionRule(thresholds={"lat_us": 0.1}).configured("lat_us") == 0.1
    steady_lat = _runs([2.0, 2.0, 2.0], kind="rdma_lat", metric="lat")
    [out] = baseline.compare([_rec("n", 9, lat=2.8, kind="rdma_lat")], steady_lat)   # +40 %: latency noise
    assert out["regression"] is None
    [out] = baseline.compare([_rec("n", 9, bw=60)], _runs([100, 100, 100]))        # -40 % bandwidth is not
    assert out["regression"] is not None


def _tcp(run, day, bw, sent, received, **params):
    record = _rec(run, day, kind="tcp_bw", op="tcp", **params)
    record["metrics"] = {"bw_gbps": bw, "sent_gbps": sent, "received_gbps": received}
    return record


def test_three_metrics_of_one_check_are_one_regression():
    hist = [_tcp("r%d" % i, i, 10.0, 10.0, 10.0) for i in range(3)]
    compared = baseline.compare([_tcp("n", 9, 4.0, 4.2, 3.9)], hist)
    [reg] = baseline.regressions(compared)
    assert sorted(reg["metrics"]) == ["bw_gbps", "received_gbps", "sent_gbps"]
    assert reg["metric"] == "received_gbps" and reg["change"] == -0.61     # the worst of them
    assert len(baseline.regression_records(compared)) == 1
    # the same check measured in two rounds of one run is still one check
    compared = baseline.compare([_tcp("n", 9, 4.0, 4.2, 3.9, round=1), _tcp("n", 9, 5.0, 5.0, 5.0, round=2)],
                                hist, ignore_params=baseline.DEFAULT_IGNORE_PARAMS)
    [reg] = baseline.regressions(compared)
    assert reg["metrics"]["bw_gbps"]["change"] == -0.6


def test_report_summary_counts_checks_not_metrics():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model

    hist = [_tcp("r%d" % i, i, 10.0, 10.0, 10.0, peer=p) for i in range(3) for p in ("b", "c", "d")]
    now = [_tcp("n", 9, 4.0, 4.0, 4.0, peer=p) for p in ("b", "c", "d")]
    summary = report_model.summarize(baseline.compare(now, hist))
    assert summary["regressions"] == 3


def test_a_named_baseline_run_needs_no_min_runs():
    hist = [_rec("golden", 1, bw=200)]
    [out] = baseline.compare([_rec("n", 4, bw=120)], hist, baseline_run="golden")
    assert out["regression"]["baseline_runs"] == ["golden"]


def test_filter_passes_the_rule_settings():
    from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_compare import commcheck_compare

    steady_lat = _runs([2.0, 2.0, 2.0], kind="rdma_lat", metric="lat")
    now = [_rec("n", 9, lat=2.8, kind="rdma_lat")]
    assert commcheck_compare(now, steady_lat)[0]["regression"] is None
    assert commcheck_compare(now, steady_lat, latency_threshold=0.3)[0]["regression"] is not None
    assert commcheck_compare(now, steady_lat, thresholds={"lat_us": 0.3})[0]["regression"] is not None
    noisy = _runs([100, 70, 130, 85, 115])
    assert commcheck_compare([_rec("n", 9, bw=60)], noisy)[0]["regression"] is None
    assert commcheck_compare([_rec("n", 9, bw=60)], noisy, spread_k=1)[0]["regression"] is not None
    assert commcheck_compare([_rec("n", 9, bw=10)], noisy[:1])[0]["regression"] is None


@pytest.mark.parametrize("options", [
    {"spread_k": -1}, {"spread_k": float("nan")}, {"latency_threshold": "-x"}, {"min_runs": 10 ** 9},
    {"thresholds": {"--x": 1}}, {"thresholds": {"bw_gbps": -0.5}}, {"k": 0},
])
def test_compare_filter_refuses_numbers_out_of_range(options):
    from ansible.errors import AnsibleFilterError
    from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_compare import commcheck_compare
    with pytest.raises(AnsibleFilterError, match="commcheck_compare: "):
        commcheck_compare([], [], **options)


def test_regression_labels_follow_the_data_direction():
    # records: host = server, peer = client; ib_write_bw sends from the client, ib_read_bw from the server
    write = baseline.record_key({"kind": "rdma_bw", "host": "h1", "peer": "h2", "params": {"op": "write"}})
    read = baseline.record_key({"kind": "rdma_bw", "host": "h1", "peer": "h2", "params": {"op": "read"}})
    assert baseline.describe_key(write) == "rdma_bw h2->h1 [op=write]"
    assert baseline.describe_key(read) == "rdma_bw h1->h2 [op=read]"


def test_record_key_keeps_each_value_and_its_type():
    def key(**params):
        return baseline.record_key({"kind": "rdma_bw", "host": "h1", "peer": "h2", "params": params}, ["round"])
    assert len(set([key(rail=1), key(rail=1.0), key(rail=True), key(rail="1")])) == 4
    assert key(op="write", rail=0, round=3) == key(rail=0, op="write", round=7)
    nested = key(op="write", tags={"b": [1, 2], "a": None}, bidirectional=False)
    assert nested == key(bidirectional=False, tags={"a": None, "b": [1, 2]}, op="write") and hash(nested)
    assert nested != key(op="write", tags={"b": [2, 1], "a": None}, bidirectional=False)
    # a record from Ansible's variables (unsafe text) has the key of the same record read from the history

    class UnsafeText(str):
        pass
    assert key(op=UnsafeText("write"), device=UnsafeText("mlx5_0")) == key(op="write", device="mlx5_0")
    assert baseline.describe_key(key(op="write", rail=0, bidirectional=True)) == \
        "rdma_bw h2<->h1 [bidirectional=True op=write rail=0]"
