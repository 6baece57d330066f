# -*- coding: utf-8 -*-
"""Regressions a whole test shares (baseline.shared_groups): said once, blaming no host nor link; a pair that
regressed beyond the shared shift still stands on its own."""
import datetime

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline

T0 = datetime.datetime(2026, 5, 1, tzinfo=datetime.timezone.utc)
RING = [("h%d" % n, "h%d" % (n % 8 + 1)) for n in range(1, 9)]


def _rec(run, day, host, peer, value, kind="rdma_lat", rail=0):
    metric = "lat_us" if kind == "rdma_lat" else "bw_gbps"
    return {"schema": 1, "run_id": run, "time": history.format_time(T0 + datetime.timedelta(days=day)),
            "kind": kind, "host": host, "peer": peer, "verdict": "pass", "metrics": {metric: value},
            "params": {"op": "write", "metric": "lat" if kind == "rdma_lat" else "bw", "size": 2, "rail": rail,
                       "device": "mlx5_%d" % rail, "peer_device": "mlx5_%d" % rail, "round": day % 2}}


def _compared(now, kind="rdma_lat", base=8.0):
    """Three healthy earlier runs of the ring (each pair a little apart), then ``now``: {(host, peer): value}."""
    hist = [_rec("r%d" % day, day, h, p, base * (1 + 0.01 * (day + n)), kind)
            for day in range(3) for n, (h, p) in enumerate(RING)]
    current = [_rec("now", 9, h, p, now.get((h, p), base), kind) for h, p in RING]
    return baseline.compare(current, hist, ignore_params=baseline.DEFAULT_IGNORE_PARAMS)


def test_a_test_whose_pairs_all_rose_together_is_one_shared_regression_blaming_no_host():
    compared = _compared(dict(((h, p), 14.5 + 0.1 * n) for n, (h, p) in enumerate(RING)))
    regs = baseline.regressions(compared)
    assert len(regs) == 8 and all(r["shared"] for r in regs)
    assert regs[0]["shared"]["checks"] == 8 and regs[0]["shared"]["regressed"] == 8
    summary = report_model.summarize(compared)
    assert summary["regressions"] == 8 and summary["verdict"] == "warn"
    assert summary["regressed_hosts"] == [] and summary["regressed_links"] == []
    assert summary["regressed_together"] == [baseline.shared_text(regs[0]["shared"])]
    assert "8 of 8 checks regressed" in summary["regressed_together"][0]
    record, = [r for r in baseline.regression_records(compared) if r["host"] == "h1"]
    assert "not this pair" in record["fix"] and record["evidence"] == summary["regressed_together"]


def test_a_pair_far_beyond_the_shared_shift_is_its_own_regression_and_names_its_link():
    now = dict(((h, p), 14.0) for h, p in RING)
    now[("h3", "h4")] = 60.0                # +650 %: from the +75 % the others share, still 4 x worse
    regs = baseline.regressions(_compared(now))
    own = [r for r in regs if not r["shared"]]
    assert [(r["host"], r["peer"]) for r in own] == [("h3", "h4")]
    summary = report_model.summarize(_compared(now))
    assert summary["regressed_links"] == ["h3<->h4"] and len(summary["regressed_together"]) == 1


def test_a_few_regressed_pairs_of_a_test_share_nothing_and_name_their_hosts():
    now = {("h1", "h2"): 20.0, ("h2", "h3"): 20.0, ("h5", "h6"): 20.0}      # 3 of 8: below half
    regs = baseline.regressions(_compared(now))
    assert len(regs) == 3 and not any(r["shared"] for r in regs)
    summary = report_model.summarize(_compared(now))
    assert summary["regressed_together"] == [] and "h1<->h2" in summary["regressed_links"]


def test_a_bandwidth_that_dropped_everywhere_is_shared_and_one_that_dropped_further_is_not():
    now = dict(((h, p), 60.0) for h, p in RING)          # -40 % on every pair
    now[("h7", "h8")] = 20.0                           # -80 %: from the shared -40 %, a third of it is left
    regs = baseline.regressions(_compared(now, kind="rdma_bw", base=100.0))
    assert sorted((r["host"], bool(r["shared"])) for r in regs)[6:8] == [("h7", False), ("h8", True)]
    assert -0.45 < regs[0]["shared"]["change"] < -0.4      # the median change of the 8 (baselines ~104)


def test_shared_groups_need_four_checks_of_one_test_and_other_rails_are_other_tests():
    hist = [_rec("r%d" % day, day, h, p, 8.0, rail=rail) for day in range(3) for h, p in RING[:3] for rail in (0, 1)]
    current = [_rec("now", 9, h, p, 16.0, rail=rail) for h, p in RING[:3] for rail in (0, 1)]
    compared = baseline.compare(current, hist, ignore_params=baseline.DEFAULT_IGNORE_PARAMS)
    assert len(baseline.regressions(compared)) == 6
    assert baseline.shared_groups(compared) == {}     # 3 checks a rail: no fleet of its own
