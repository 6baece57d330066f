# -*- coding: utf-8 -*-
"""Every report file as its real readers take it, with records of every kind, two operations each, on FQDN hosts.

No two different checks may share a series, a row, a cell or a chart line without the report saying so, and
every check's operation reaches every format. The readers are the real ones: prometheus_client's parser and
promtool for commcheck.prom; Jenkins xunit-plugin's junit-10.xsd, xunitparser and junitparser for junit.xml.
"""
import io
import json
import re
import xml.etree.ElementTree as ET

import junitparser
import markupsafe
import pytest
import xunitparser
from report_consumers import junit_schema_errors, parse_prometheus, promtool_problems, values

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_render
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_values
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline

SERVER = "gpu-h100-node-005.rack01.dc-west.example.com"
CLIENT = "gpu-h100-node-006.rack01.dc-west.example.com"
GBPS = 1e9 / 8


def _pair(kind, op, value, **params):
    metric = {"rdma_lat": "lat_us"}.get(kind, "bw_gbps")
    metrics = {metric: value}
    if metric == "bw_gbps":
        metrics["expected_gbps"] = 200.0
    return {"kind": kind, "host": SERVER, "peer": CLIENT, "verdict": "pass",
            "params": dict({"op": op, "rail": 0, "device": "mlx5_0", "server": SERVER, "client": CLIENT}, **params),
            "metrics": metrics}


def _collective(operation, busbw):
    return {"kind": "collective", "host": SERVER, "peer": CLIENT, "verdict": "pass",
            "params": {"library": "nccl", "operation": operation, "hosts": [SERVER, CLIENT], "nodes": 2,
                       "stage": "pool"},
            "metrics": {"busbw_gbs": busbw, "rows": [{"bytes": 1 << 20, "busbw_gbs": busbw / 2},
                                                     {"bytes": 1 << 26, "busbw_gbs": busbw}]}}


def every_kind():
    """Two checks of every kind on the same hosts, told apart only by their operation (or what stands for it)."""
    records = [
        _pair("rdma_bw", "write", 180.0), _pair("rdma_bw", "read", 90.0),
        _pair("rdma_bw", "write", 70.0, memory="cuda", gpu=0, peer_gpu=0),
        _pair("rdma_lat", "write", 2.0, size=2), _pair("rdma_lat", "read", 3.5, size=2),
        _pair("tcp_bw", "tcp", 9.0), _pair("tcp_bw", "tcp", 8.0, reverse=True),
        _collective("all_reduce", 180.0), _collective("all_gather", 90.0),
        {"kind": "finding", "host": SERVER, "verdict": "warn", "cause": "governor powersave",
         "params": {"check": "discover", "code": "cpu_governor_not_performance", "severity": "warning"}},
        {"kind": "finding", "host": SERVER, "verdict": "fail", "cause": "MTU 1500 where peers have 4096",
         "params": {"check": "discover", "code": "mtu_mismatch", "severity": "error"}},
        {"kind": "port_counters", "host": SERVER, "verdict": "pass", "params": {"device": "mlx5_0", "port": 1}},
        {"kind": "port_counters", "host": SERVER, "verdict": "warn", "params": {"device": "mlx5_1", "port": 1},
         "cause": "port_rcv_errors rose"},
        {"kind": "discover", "host": SERVER, "verdict": "pass"},
        {"kind": "discover", "host": CLIENT, "verdict": "pass"},
    ]
    return history.normalize_records(records)[0]


@pytest.fixture(scope="module", name="files")
def _files():
    records = every_kind()
    summary = report_model.summarize(records, run_id="r1", generated="2026-03-01T02:00:00Z")
    return records, report_render.render_formats(report_render.FORMATS, records, summary)


# --------------------------------------------------------------------------
# every operation in every format, none merged
# --------------------------------------------------------------------------

def _link(kind, op, memory="host", variant=""):
    return tuple(sorted({"kind": kind, "op": op, "memory": memory, "host": SERVER, "peer": CLIENT, "rail": "0",
                         "variant": variant}.items()))


def test_prometheus_keeps_every_operation_apart(files):
    families = parse_prometheus(files[1]["prom"])
    assert values(families, "commcheck_link_bandwidth_bytes_per_second") == {
        _link("rdma_bw", "write"): 180.0 * GBPS, _link("rdma_bw", "read"): 90.0 * GBPS,
        _link("rdma_bw", "write", memory="cuda"): 70.0 * GBPS,
        _link("tcp_bw", "tcp"): 9.0 * GBPS, _link("tcp_bw", "tcp", variant="reverse=yes"): 8.0 * GBPS}
    assert values(families, "commcheck_link_latency_seconds") == {
        _link("rdma_lat", "write"): 2.0e-6, _link("rdma_lat", "read"): 3.5e-6}

    def pool(op):
        return (("hosts", "%s, %s" % (SERVER, CLIENT)), ("library", "nccl"), ("op", op), ("variant", ""))
    assert values(families, "commcheck_collective_bus_bandwidth_bytes_per_second") == {
        pool("all_gather"): 90.0e9, pool("all_reduce"): 180.0e9}
    assert values(families, "commcheck_collective_verdict") == {pool("all_gather"): 0, pool("all_reduce"): 0}
    # a host's own checks of a kind: the worst, as the family's help says (no collective among them)
    assert values(families, "commcheck_host_verdict") == {
        (("host", SERVER), ("kind", "discover")): 0, (("host", CLIENT), ("kind", "discover")): 0,
        (("host", SERVER), ("kind", "finding")): 4, (("host", SERVER), ("kind", "port_counters")): 2}
    assert families["commcheck_link_checks"]["samples"] == [({}, 7.0)]
    assert promtool_problems(files[1]["prom"]) == []


def test_html_keeps_every_operation_apart(files):
    page = files[1]["html"]
    assert sorted(re.findall(r'<figure class="heatmap-figure" data-op="([^"]*)"', page)) == [
        "read", "tcp", "tcp reverse=yes", "write", "write (GPU memory)"]
    assert sorted(re.findall(r'<polyline class="series"[^>]*><title>([^<]*)</title>', page)) == [
        "nccl all_gather 2 nodes", "nccl all_reduce 2 nodes"]
    assert sorted(re.findall(r'<text class="legend"[^>]*>([^<]*)</text>', page)) == [
        "nccl all_gather 2 nodes", "nccl all_reduce 2 nodes"]
    latency = page[page.index('id="latency"'):page.index('id="collectives"')]
    assert latency.count("<td>rdma_lat</td><td>write</td>") == 1 and latency.count("<td>rdma_lat</td><td>read</td>") == 1
    checks = page[page.index('id="checks"'):]
    assert checks.count("<tr") == 1 + len(files[0])   # the header, then one row per check
    for operation in ("all_reduce", "all_gather"):
        assert checks.count("operation=%s" % operation) == 1


def test_markdown_keeps_every_operation_apart(files):
    text = files[1]["md"]
    for title in ("rdma_bw write", "rdma_bw read", "rdma_bw write (GPU memory)", "tcp_bw tcp",
                  "tcp_bw tcp reverse=yes"):
        assert text.count("## Bandwidth: %s (Gb/s" % title) == 1, title
    for name, value in (("nccl all_reduce 2 nodes", "180"), ("nccl all_gather 2 nodes", "90")):
        assert "| %s | - | 67108864 | %s |" % (name, value) in text
    assert re.search(r"\| rdma_lat \| write \| [^|]+ \| [^|]* \| 2 \|", text)
    assert re.search(r"\| rdma_lat \| read \| [^|]+ \| [^|]* \| 3\.5 \|", text)
    assert "| %s | 90 (45%%) |" % CLIENT not in text   # a read cell: the server sends
    assert "| %s |  | 90 (45%%) |" % SERVER in text
    assert "**CPU governor not performance**: 1/2 hosts %s" % SERVER in text
    assert "**MTU mismatch**: 1/2 hosts %s" % SERVER in text


def test_results_json_keeps_every_record_and_operation(files):
    doc = json.loads(files[1]["json"])
    assert len(doc["records"]) == len(files[0])
    operations = sorted(r["params"]["operation"] for r in doc["records"] if r["kind"] == "collective")
    assert operations == ["all_gather", "all_reduce"]
    assert sorted(r["params"]["op"] for r in doc["records"] if r["kind"] == "rdma_bw") == ["read", "write", "write"]
    assert set(r["host"] for r in doc["records"]) == {SERVER, CLIENT}   # names whole


def test_junit_names_every_check_apart(files):
    root = ET.fromstring(files[1]["junit"].encode("utf-8"))
    names = [case.get("name") for case in root.iter("testcase")]
    assert len(names) == len(files[0]) == len(set(names))
    assert not any("#" in name for name in names)   # told apart by what they measured, not by a counter
    collectives = sorted(n for n in names if n.startswith("collective "))
    assert [("operation=all_gather" in n, "operation=all_reduce" in n) for n in collectives] == [(True, False),
                                                                                                 (False, True)]
    assert all(n.startswith("collective %s, %s [" % (SERVER, CLIENT)) for n in collectives)


# --------------------------------------------------------------------------
# junit.xml as Jenkins' xunit plugin, xunitparser and junitparser read it
# --------------------------------------------------------------------------

def _verdicts_run():
    """Every outcome: pass, fail, error, skipped, flaky, warn, and a passing check that regressed."""
    records = every_kind()
    records[1].update(verdict="fail", cause="90 Gb/s is below 90% of 200 Gb/s")
    records[3].update(verdict="error", cause="client side: no device")
    records[5].update(verdict="skipped", cause="no common port")
    records[6].update(verdict="flaky")
    hist = [dict(rec, run_id="old%d" % i, time="2026-01-0%dT00:00:00.000000Z" % i, verdict="pass",
                 metrics=dict(rec["metrics"], bw_gbps=400.0)) for i in (1, 2, 3) for rec in records[:1]]
    return baseline.compare(records, hist)


@pytest.mark.parametrize("regression_fails", [True, False])
def test_junit_validates_against_jenkins_xunit_schema(regression_fails):
    records = _verdicts_run()
    text = report_render.render_formats(["junit"], records, report_model.summarize(records, run_id="r1"),
                                        regression_fails=regression_fails)["junit"]
    assert junit_schema_errors(text) == []


def test_junit_schema_refuses_what_the_plugin_refuses():
    """The schema check is real: a skipped count on <testsuites> (what junit.xml had) fails it."""
    records = _verdicts_run()
    text = report_render.render_formats(["junit"], records, report_model.summarize(records))["junit"]
    bad = text.replace('<testsuites name="commcheck"', '<testsuites name="commcheck" skipped="1"', 1)
    assert any("skipped" in error for error in junit_schema_errors(bad))


def test_junit_totals_as_xunitparser_and_junitparser_count_them():
    records = _verdicts_run()
    summary = report_model.summarize(records, run_id="r1")
    text = report_render.render_formats(["junit"], records, summary)["junit"]
    # xunitparser checks the <testsuites> totals against the cases and refuses a property twice
    suite, result = xunitparser.parse(io.StringIO(text))
    assert result.testsRun == len(records)
    # failures: the failing read, the regressed write and the MTU finding
    assert (len(result.failures), len(result.errors), len(result.skipped)) == (3, 1, 1)
    assert suite.properties == {"run_id": "r1"}
    xml = junitparser.JUnitXml.fromstring(text)
    suites = list(xml)
    assert sum(s.tests for s in suites) == len(records)
    assert (sum(s.failures for s in suites), sum(s.errors for s in suites), sum(s.skipped for s in suites)) == \
        (3, 1, 1)
    cases = [case for s in suites for case in s]
    kinds = dict((case.name, [type(r).__name__ for r in case.result]) for case in cases)
    assert sorted(k for k in kinds.values() if k) == [["Error"], ["Failure"], ["Failure"], ["Failure"], ["Skipped"]]


# --------------------------------------------------------------------------
# HTML and SVG escaping (markupsafe)
# --------------------------------------------------------------------------

def test_html_text_is_escaped_by_markupsafe():
    hostile = "<x a='1' b=\"2\">&amp;"
    assert report_values.esc(hostile) == str(markupsafe.escape(hostile))
    assert report_values.esc(None) == "" and report_values.esc(["a<", "b"]) == "a&lt;, b"


def test_svg_stays_well_formed_xml_with_hostile_names():
    hostile = ["h'1\"&<svg>.example.com", "h'2\"&<svg>.example.com"]
    records = [{"kind": "rdma_bw", "host": hostile[0], "peer": hostile[1], "verdict": "pass",
                "params": {"op": "wr'ite\"&", "rail": 0}, "metrics": {"bw_gbps": 90.0, "expected_gbps": 100.0}},
               {"kind": "collective", "host": hostile[0], "verdict": "pass",
                "params": {"operation": "a<b>'\"", "hosts": hostile}, "metrics": {"busbw_gbs": 9.0, "size": 1024},
                }]
    records = history.normalize_records(records)[0]
    page = report_render.render_formats(["html"], records, report_model.summarize(records))["html"]
    svgs = re.findall(r"<svg .*?</svg>", page, re.S)
    assert len(svgs) == 2   # the grid and the heat map
    for svg in svgs:
        root = ET.fromstring(svg)   # every attribute and text escaped for XML
        texts = ["".join(el.itertext()) for el in root.iter("{http://www.w3.org/2000/svg}title")]
        assert any(hostile[0] in text for text in texts)
