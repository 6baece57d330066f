# -*- coding: utf-8 -*-
"""commcheck.prom: valid for node_exporter's textfile collector, cardinality bounded by links, NICs and hosts."""
import datetime
import re

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_prometheus as prom
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline

NOW = datetime.datetime(2026, 3, 1, 2, 0, 0, tzinfo=datetime.timezone.utc)
_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (-?[0-9.e+-]+|NaN|[+-]Inf)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')
_UNESCAPE = re.compile(r'\\(.)')


def parse(text):
    """Strict check of the text exposition format; {name: {"help": text, "samples": [(labels, value)]}}."""
    families, current = {}, None
    assert text.endswith("\n")
    for line in text.splitlines():
        if line.startswith("# HELP "):
            current = line.split(" ")[2]
            assert current not in families, "family %s split or repeated" % current
            families[current] = {"help": line.split(" ", 3)[3], "samples": []}
        elif line.startswith("# TYPE "):
            assert line == "# TYPE %s gauge" % current, line
        else:
            families[current]["samples"].append(_sample(line, current))
    for name, family in families.items():
        samples = family["samples"]
        assert samples, "family %s has no sample" % name
        assert len(set(tuple(sorted(labels)) for labels, _v in samples)) == 1, "label names differ in %s" % name
        series = [tuple(sorted(labels.items())) for labels, _v in samples]
        assert len(series) == len(set(series)), "duplicate series in %s" % name
    return families


def _sample(line, current):
    match = _SAMPLE.match(line)
    assert match, line
    name, _braces, labels_text, value = match.groups()
    assert name == current, line
    labels, rest = {}, labels_text or ""
    while rest:
        label = _LABEL.match(rest)
        assert label, line
        labels[label.group(1)] = _UNESCAPE.sub(lambda m: "\n" if m.group(1) == "n" else m.group(1), label.group(2))
        rest = rest[label.end():]
    return labels, float(value)


def values(families, name):
    return dict((tuple(sorted(labels.items())), value) for labels, value in families[name]["samples"])


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


def test_every_family_is_valid_with_its_fixed_labels():
    records = ring(4, 2) + history.normalize_records([
        {"kind": "discover", "host": "h000", "verdict": "pass", "metrics": {"devices": 2}},
        {"kind": "collective", "host": "h000", "params": {"op": "all_reduce", "hosts": ["h000", "h001"]},
         "metrics": {"busbw_gbs": 180.5}, "verdict": "pass"}])[0]
    families = parse(render(records))
    expected = dict((name, labels) for name, labels, _help in prom.FAMILIES)
    for name, family in families.items():
        assert set(family["samples"][0][0]) == set(expected[name]), name
    assert ({"kind": "rdma_bw", "op": "write", "host": "h001", "peer": "h000", "rail": "0"}, 380.0) in \
        families["commcheck_link_bandwidth_gbps"]["samples"]
    assert values(families, "commcheck_collective_busbw_gbs") == {(("host", "h000"), ("op", "all_reduce")): 180.5}


@pytest.mark.parametrize("hosts, rails", [(4, 1), (8, 2), (16, 8)])
def test_series_grow_with_hosts_and_rails(hosts, rails):
    families = parse(render(ring(hosts, rails)))
    assert len(families["commcheck_link_bandwidth_gbps"]["samples"]) == hosts * rails
    assert len(families["commcheck_link_latency_us"]["samples"]) == hosts * rails
    assert len(families["commcheck_link_verdict"]["samples"]) == hosts * rails   # one per link, over its kinds
    assert len(families["commcheck_nic_bandwidth_fraction"]["samples"]) == hosts * rails


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
    assert labels == {"kind", "op", "host", "peer", "rail", "verdict", "component", "run_id"}


def test_the_latest_record_of_a_series_wins():
    records = history.normalize_records([bw("a", "b", 0, 100.0, "fail", size=4096),
                                         bw("a", "b", 0, 390.0, "pass", size=65536)])[0]
    families = parse(render(records))
    link = (("host", "a"), ("kind", "rdma_bw"), ("op", "write"), ("peer", "b"), ("rail", "0"))
    assert values(families, "commcheck_link_bandwidth_gbps") == {link: 390.0}
    assert values(families, "commcheck_link_verdict") == {link[:1] + link[3:]: prom.VERDICT_VALUE["pass"]}


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
    fractions = values(families, "commcheck_nic_bandwidth_fraction")
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
    assert len(everything["commcheck_link_bandwidth_gbps"]["samples"]) == 16
    limited = parse(prom.render_prometheus(records, summary, now=NOW, link_limit=len(records) - 1))
    assert sorted(v for _l, v in limited["commcheck_link_bandwidth_gbps"]["samples"]) == [100.0, 200.0]
    assert len(limited["commcheck_link_latency_us"]["samples"]) == 1
    assert limited["commcheck_link_checks"]["samples"] == [({}, 32.0)]
    assert limited["commcheck_link_checks_exported"]["samples"] == [({}, 3.0)]
    # the NICs still cover every link
    assert values(limited, "commcheck_nic_bandwidth_fraction") == values(everything, "commcheck_nic_bandwidth_fraction")
    worst = parse(prom.render_prometheus(records, summary, now=NOW, link_limit=2))
    assert [v for _l, v in worst["commcheck_link_latency_us"]["samples"]] == [2.0]   # the error first
    assert [v for _l, v in worst["commcheck_link_bandwidth_gbps"]["samples"]] == [100.0]


def test_fraction_from_expected_when_the_record_has_none():
    record = {"kind": "tcp_bw", "host": "a", "peer": "b", "params": {"op": "tcp"},
              "metrics": {"bw_gbps": 50.0, "expected_gbps": 100.0}, "verdict": "pass"}
    families = parse(render(history.normalize_records([record])[0]))
    assert list(values(families, "commcheck_link_bandwidth_fraction").values()) == [0.5]
    assert families["commcheck_link_bandwidth_gbps"]["samples"][0][0]["rail"] == ""


def test_host_checks_keep_their_worst_verdict_per_kind():
    records = history.normalize_records([
        {"kind": "finding", "host": "a", "params": {"code": "cpu_governor"}, "verdict": "warn"},
        {"kind": "finding", "host": "a", "params": {"code": "pcie_width"}, "verdict": "fail"},
        {"kind": "finding", "host": "a", "params": {"code": "mtu"}, "verdict": "pass"},
        {"kind": "discover", "host": "a", "verdict": "pass"}])[0]
    families = parse(render(records))
    assert values(families, "commcheck_host_verdict") == {(("host", "a"), ("kind", "discover")): 0,
                                                          (("host", "a"), ("kind", "finding")): 4}


def test_label_values_are_escaped():
    records = history.normalize_records([bw('h"1\\', "p\nq", 0, 380.0)])[0]
    text = render(records)
    assert 'host="h\\"1\\\\"' in text and 'peer="p\\nq"' in text
    [(labels, _value)] = parse(text)["commcheck_link_bandwidth_gbps"]["samples"]
    assert labels["host"] == 'h"1\\' and labels["peer"] == "p\nq"


def test_retests_are_left_out():
    original = bw("a", "b", 0, 120.0, "fail")
    retest = dict(bw("a", "b", 0, 390.0, "pass", retest=True, retest_id="rt-1"), kind="rdma_bw_retest")
    families = parse(render(history.normalize_records([original, retest])[0]))
    assert list(values(families, "commcheck_link_bandwidth_gbps").values()) == [120.0]
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
    assert "commcheck_link_bandwidth_gbps" not in families
