# -*- coding: utf-8 -*-
"""commcheck.prom: valid for node_exporter's textfile collector, promtool and prometheus_client, in base units, with
cardinality bounded by links, NICs and hosts."""
import datetime

import pytest
from report_consumers import parse_prometheus as parse, promtool_problems, values

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_prometheus as prom
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline

NOW = datetime.datetime(2026, 3, 1, 2, 0, 0, tzinfo=datetime.timezone.utc)
GBPS = 1e9 / 8   # bytes per second in one Gb/s
BW = "commcheck_link_bandwidth_bytes_per_second"
LAT = "commcheck_link_latency_seconds"
NIC_RATIO = "commcheck_nic_bandwidth_of_expected_ratio"


def bw(host, peer, rail, value, verdict="pass", **params):
    return {"kind": "rdma_bw", "host": host, "peer": peer,
            "params": dict({"op": "write", "rail": rail, "device": "mlx5_%d" % rail, "size": 65536}, **params),
            "metrics": {"bw_gbps": value, "expected_gbps": 400.0, "fraction": round(value / 400.0, 4)},
            "verdict": verdict}


def lat(host, peer, rail, value):
    return {"kind": "rdma_lat", "host": host, "peer": peer, "params": {"op": "write", "rail": rail, "size": 2},
            "metrics": {"lat_us": value, "lat_p99_us": value * 1.5}, "verdict": "pass"}


def ring(hosts, rails, **params):
    names = ["h%03d" % i for i in range(hosts)]
    records = []
    for rail in range(rails):
        for i, host in enumerate(names):
            records.append(bw(names[(i + 1) % hosts], host, rail, 380.0, **params))
            records.append(lat(names[(i + 1) % hosts], host, rail, 2.0))
    return history.normalize_records(records)[0]


def render(records, now=NOW):
    return prom.render_prometheus(records, report_model.summarize(records, run_id="r1"), now=now)


def _every_family(records):
    """Records that fill every family: a ring, a discovery, a collective, a regression."""
    now = records + history.normalize_records([
        {"kind": "discover", "host": "h000", "verdict": "pass", "metrics": {"devices": 2}},
        {"kind": "collective", "host": "h000", "params": {"library": "nccl", "operation": "all_reduce",
                                                          "hosts": ["h000", "h001"]},
         "metrics": {"busbw_gbs": 180.5}, "verdict": "pass"}])[0]
    earlier = [dict(rec, run_id="old%d" % i, time="2026-01-0%dT00:00:00.000000Z" % i,
                    metrics=dict(rec["metrics"], bw_gbps=900.0)) for i in (1, 2, 3) for rec in now[:1]]
    return baseline.compare(now, earlier)


def test_every_family_is_valid_with_its_fixed_labels():
    families = parse(render(_every_family(ring(4, 2))))
    expected = dict((name, labels) for name, labels, _help in prom.FAMILIES)
    assert set(families) == set(expected)
    for name, family in families.items():
        assert set(family["samples"][0][0]) == set(expected[name]), name
        assert family["type"] == "gauge" and family["help"], name
    link = {"kind": "rdma_bw", "op": "write", "memory": "host", "host": "h001", "peer": "h000", "rail": "0",
            "variant": ""}
    assert (link, 380.0 * GBPS) in families[BW]["samples"]
    assert (dict(link, kind="rdma_lat"), 2.0e-6) in families[LAT]["samples"]
    hosts = {"library": "nccl", "op": "all_reduce", "hosts": "h000, h001", "variant": ""}
    assert families["commcheck_collective_bus_bandwidth_bytes_per_second"]["samples"] == [(hosts, 180.5e9)]
    assert families["commcheck_collective_verdict"]["samples"] == [(hosts, 0.0)]


def test_promtool_finds_nothing_to_say():
    """promtool's lint: base units (no _us, no Gb/s), no _total on a gauge, help and type on every family."""
    assert promtool_problems(render(_every_family(ring(4, 2)))) == []


@pytest.mark.parametrize("hosts, rails", [(4, 1), (8, 2), (16, 8)])
def test_series_grow_with_hosts_and_rails(hosts, rails):
    families = parse(render(ring(hosts, rails)))
    assert len(families[BW]["samples"]) == hosts * rails
    assert len(families[LAT]["samples"]) == hosts * rails
    assert len(families["commcheck_link_verdict"]["samples"]) == hosts * rails   # one per link, over its kinds
    assert len(families[NIC_RATIO]["samples"]) == hosts * rails


def test_record_params_never_make_series():
    plain = parse(render(ring(8, 2)))
    # the same links measured with params that differ per record (scheduling, sizes, ids)
    varied = []
    for index, record in enumerate(ring(8, 2)):
        record["params"].update(round=index, tcp_port=18000 + index, qps=index % 3, attempt_id="a%d" % index)
        varied.append(record)
    noisy = parse(render(varied))
    for name in plain:
        if name != "commcheck_last_run_timestamp_seconds":
            assert len(noisy[name]["samples"]) == len(plain[name]["samples"]), name
    labels = set(k for family in noisy.values() for labels, _v in family["samples"] for k in labels)
    assert labels == {"kind", "op", "memory", "host", "peer", "rail", "variant", "verdict", "component", "run_id"}
    assert set(labels["variant"] for labels, _v in noisy[BW]["samples"]) == {""}


def _link(host, peer, variant="", **labels):
    return tuple(sorted(dict({"host": host, "peer": peer, "kind": "rdma_bw", "op": "write", "memory": "host",
                              "rail": "0", "variant": variant}, **labels).items()))


def test_the_latest_record_of_a_check_wins():
    records = history.normalize_records([bw("a", "b", 0, 100.0, "fail", tcp_port=1),
                                         bw("a", "b", 0, 390.0, "pass", tcp_port=2)])[0]
    families = parse(render(records))
    assert values(families, BW) == {_link("a", "b"): 390.0 * GBPS}
    assert values(families, "commcheck_link_verdict") == {(("host", "a"), ("peer", "b"), ("rail", "0")):
                                                          prom.VERDICT_VALUE["pass"]}


def test_two_checks_of_one_link_are_two_series_named_by_what_differs():
    records = history.normalize_records([bw("a", "b", 0, 100.0, "fail", size=4096),
                                         bw("a", "b", 0, 390.0, "pass", size=65536),
                                         bw("a", "b", 0, 380.0, "pass", size=65536, op="read"),
                                         bw("a", "b", 0, 200.0, "fail", size=65536, memory="cuda", gpu=0)])[0]
    families = parse(render(records))
    assert values(families, BW) == {_link("a", "b", "size=4096"): 100.0 * GBPS,
                                    _link("a", "b", "size=65536"): 390.0 * GBPS,
                                    _link("a", "b", op="read"): 380.0 * GBPS,
                                    _link("a", "b", memory="cuda"): 200.0 * GBPS}
    assert families["commcheck_link_checks"]["samples"] == [({}, 4.0)]
    # the link's verdict is the worst of its checks, as its help says
    assert values(families, "commcheck_link_verdict") == {(("host", "a"), ("peer", "b"), ("rail", "0")): 4.0}


@pytest.mark.parametrize("verdict, number", [("pass", 0), ("skipped", 1), ("warn", 2), ("flaky", 3), ("fail", 4),
                                             ("error", 5)])
def test_verdicts_as_numbers(verdict, number):
    records = history.normalize_records([bw("a", "b", 0, 380.0, verdict)])[0]
    families = parse(render(records))
    assert list(values(families, "commcheck_link_verdict").values()) == [number]
    assert "%s %d" % (verdict, number) in families["commcheck_link_verdict"]["help"]
    assert prom.verdict_value("no such verdict") == prom.VERDICT_VALUE["error"]


def test_a_nic_shows_its_worst_link_on_either_side():
    records = history.normalize_records([bw("a", "b", 3, 380.0), bw("b", "c", 3, 120.0, "fail"),
                                         bw("c", "a", 3, 390.0), bw("a", "b", 4, 396.0)])[0]
    families = parse(render(records))
    fractions = values(families, NIC_RATIO)
    assert fractions[(("host", "b"), ("rail", "3"))] == 0.3 and fractions[(("host", "c"), ("rail", "3"))] == 0.3
    assert fractions[(("host", "a"), ("rail", "3"))] == 0.95 and fractions[(("host", "a"), ("rail", "4"))] == 0.99
    verdicts = values(families, "commcheck_nic_verdict")
    assert verdicts[(("host", "b"), ("rail", "3"))] == 4 and verdicts[(("host", "a"), ("rail", "3"))] == 0


def test_beyond_the_link_limit_only_links_of_interest_get_series():
    records = ring(8, 2)
    records[0].update(verdict="fail", metrics=dict(records[0]["metrics"], bw_gbps=100.0, fraction=0.25))
    records[2].update(verdict="fail", metrics=dict(records[2]["metrics"], bw_gbps=200.0, fraction=0.5))
    records[5]["verdict"] = "error"   # a latency check
    summary = report_model.summarize(records, run_id="r1")
    everything = parse(prom.render_prometheus(records, summary, now=NOW, link_limit=len(records)))
    assert len(everything[BW]["samples"]) == 16
    limited = parse(prom.render_prometheus(records, summary, now=NOW, link_limit=len(records) - 1))
    assert sorted(v for _l, v in limited[BW]["samples"]) == [100.0 * GBPS, 200.0 * GBPS]
    assert len(limited[LAT]["samples"]) == 1
    assert limited["commcheck_link_checks"]["samples"] == [({}, 32.0)]
    assert limited["commcheck_link_checks_exported"]["samples"] == [({}, 3.0)]
    # the NICs still cover every link
    assert values(limited, NIC_RATIO) == values(everything, NIC_RATIO)
    worst = parse(prom.render_prometheus(records, summary, now=NOW, link_limit=2))
    assert [v for _l, v in worst[LAT]["samples"]] == [2.0e-6]   # the error first
    assert [v for _l, v in worst[BW]["samples"]] == [100.0 * GBPS]


def test_fraction_from_expected_when_the_record_has_none():
    record = {"kind": "tcp_bw", "host": "a", "peer": "b", "params": {"op": "tcp"},
              "metrics": {"bw_gbps": 50.0, "expected_gbps": 100.0}, "verdict": "pass"}
    families = parse(render(history.normalize_records([record])[0]))
    assert list(values(families, "commcheck_link_bandwidth_of_expected_ratio").values()) == [0.5]
    assert families[BW]["samples"][0][0]["rail"] == ""


def test_host_checks_keep_their_worst_verdict_per_kind():
    records = history.normalize_records([
        {"kind": "finding", "host": "a", "params": {"code": "cpu_governor"}, "verdict": "warn"},
        {"kind": "finding", "host": "a", "params": {"code": "pcie_width"}, "verdict": "fail"},
        {"kind": "finding", "host": "a", "params": {"code": "mtu"}, "verdict": "pass"},
        {"kind": "discover", "host": "a", "verdict": "pass"},
        # a failing pool run whose first host is a: the pool's verdict, not a's
        {"kind": "collective", "host": "a", "peer": "b", "params": {"library": "nccl", "operation": "all_reduce",
                                                                    "hosts": ["a", "b"]}, "verdict": "fail"}])[0]
    families = parse(render(records))
    assert values(families, "commcheck_host_verdict") == {(("host", "a"), ("kind", "discover")): 0,
                                                          (("host", "a"), ("kind", "finding")): 4}
    assert "commcheck_link_verdict" not in families
    [(labels, verdict)] = families["commcheck_collective_verdict"]["samples"]
    assert labels["hosts"] == "a, b" and verdict == 4


def test_label_values_are_escaped():
    records = history.normalize_records([bw('h"1\\', "p\nq", 0, 380.0)])[0]
    text = render(records)
    assert 'host="h\\"1\\\\"' in text and 'peer="p\\nq"' in text
    [(labels, _value)] = parse(text)[BW]["samples"]
    assert labels["host"] == 'h"1\\' and labels["peer"] == "p\nq"


def test_retests_are_left_out():
    original = bw("a", "b", 0, 120.0, "fail")
    retest = dict(bw("a", "b", 0, 390.0, "pass", retest=True, retest_id="rt-1"), kind="rdma_bw_retest")
    families = parse(render(history.normalize_records([original, retest])[0]))
    assert list(values(families, BW).values()) == [120.0 * GBPS]
    assert list(values(families, "commcheck_link_verdict").values()) == [4]
    assert families["commcheck_link_checks"]["samples"] == [({}, 1.0)]


def test_regressed_links_carry_their_change():
    now = history.normalize_records([bw("a", "b", 0, 200.0, "fail"), bw("b", "c", 0, 380.0)])[0]
    earlier = [dict(rec, run_id="old%d" % i, time="2026-01-0%dT00:00:00.000000Z" % i, verdict="pass",
                    metrics=dict(rec["metrics"], bw_gbps=381.0 + i, fraction=0.95))
               for i in (1, 2, 3) for rec in now]
    families = parse(render(baseline.compare(now, earlier)))
    [(labels, change)] = families["commcheck_link_regression_change_ratio"]["samples"]
    assert labels["host"] == "a" and labels["peer"] == "b" and change < -0.4
    assert families["commcheck_regressions"]["samples"][0][1] == 1


def test_run_totals():
    records = ring(4, 1)
    records[0]["verdict"] = "fail"
    summary = report_model.summarize(records, run_id="r1")
    families = parse(prom.render_prometheus(records, summary, now=NOW))
    checks = dict((labels["verdict"], value) for labels, value in families["commcheck_checks"]["samples"])
    assert checks["fail"] == 1 and checks["pass"] == 7 and set(checks) == set(report_model.VERDICT_ORDER)
    assert families["commcheck_run_verdict"]["samples"] == [({}, 4.0)]
    assert families["commcheck_last_run_ok"]["samples"] == [({}, 0.0)]
    assert families["commcheck_bad_links"]["samples"] == [({}, float(len(summary["bad_links"])))]
    culprits = dict((labels["component"], value) for labels, value in families["commcheck_culprits"]["samples"])
    assert sum(culprits.values()) == len(summary["culprits"]) >= 1
    assert families["commcheck_last_run_info"]["samples"] == [({"run_id": "r1"}, 1.0)]
    assert families["commcheck_last_run_timestamp_seconds"]["samples"] == [({}, NOW.timestamp())]


def test_an_empty_run_is_valid():
    families = parse(prom.render_prometheus([], report_model.summarize([], run_id="empty"), now=NOW))
    assert families["commcheck_run_verdict"]["samples"] == [({}, 0.0)]
    assert BW not in families
