# -*- coding: utf-8 -*-
"""Report renderers: summary, Markdown, self-contained HTML/SVG, results.json, JUnit, Prometheus."""
import itertools
import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
from report_consumers import parse_prometheus

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history_records
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_html
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_json
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_junit
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_markdown
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_prometheus
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_render as rr
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_svg

HOSTS = ["node-a", "node-b", "node-c", "node-d"]


def _run(slow=None, run_id="r", bw=95.0):
    recs = []
    for op in ("write", "read"):
        for host, peer in itertools.permutations(HOSTS, 2):
            value = 40.0 if slow in (host, peer) else bw
            recs.append({"kind": "rdma_bw", "host": host, "peer": peer,
                         "params": {"op": op, "device": "mlx5_0", "size": 65536},
                         "metrics": {"bw_gbps": value, "expected_gbps": 100.0},
                         "verdict": "pass" if value >= 90 else "fail",
                         "cause": None if value >= 90 else "%.0f Gb/s is below 90%% of 100 Gb/s" % value,
                         "fix": None if value >= 90 else "check the cable and port counters of %s" % slow})
    recs.append({"kind": "rdma_lat", "host": "node-a", "peer": "node-b", "params": {"op": "write", "size": 2},
                 "metrics": {"lat_us": 1.9, "p99_us": 2.4}, "verdict": "pass"})
    for exp in range(10, 28, 3):
        recs.append({"kind": "collective", "host": "node-a", "params": {"op": "all_reduce", "size": 2 ** exp,
                                                                        "nodes": HOSTS},
                     "metrics": {"busbw_gbs": min(90.0, 2 ** exp / 2 ** 20)}, "verdict": "pass"})
    recs.append({"kind": "finding", "host": "node-d", "verdict": "error", "cause": "memlock limit 64 KiB",
                 "fix": "set memlock unlimited"})
    recs.append({"kind": "tcp_bw", "host": "node-a", "peer": "node-b", "params": {"op": "tcp"},
                 "metrics": {"bw_gbps": 9.0}, "verdict": "flaky"})
    recs.append({"kind": "rdma_bw", "host": "node-a", "peer": "node-b",
                 "params": {"op": "write", "device": "mlx5_0", "size": 65536, "retest": True, "retest_purpose": "as_is"},
                 "metrics": {"bw_gbps": 96.0, "expected_gbps": 100.0}, "verdict": "pass"})
    recs.append({"kind": "discover", "host": "node-b", "verdict": "skipped", "cause": "no RDMA device"})
    return history.normalize_records(recs)[0]


@pytest.fixture(name="compared")
def _compared():
    hist = []
    for i in range(3):
        for rec in _run(run_id="r%d" % i, bw=95 + i):
            hist.append(dict(rec, run_id="r%d" % i, time="2026-05-0%dT00:00:00.000000Z" % (i + 1)))
    return baseline.compare(_run(slow="node-c"), hist, exclude_runs=["now"])


def test_summary_names_the_slow_host_and_its_links(compared):
    summary = report_model.summarize(compared, run_id="now")
    assert summary["bad_hosts"] == ["node-c", "node-d"]  # node-c from its links, node-d from its finding
    # the links of a bad host are its evidence, not bad links of their own
    assert summary["bad_links"] == []
    node_c = [c for c in summary["culprits"] if c["host"] == "node-c"]
    assert len(node_c) == 1 and node_c[0]["component"] == "host" and node_c[0]["verdict"] == "fail"
    assert node_c[0]["checks"] == ["rdma_bw"] and node_c[0]["fix"]
    assert summary["regressed_hosts"] == ["node-c"]
    assert summary["regressed_links"] == ["node-a<->node-c", "node-b<->node-c", "node-c<->node-d"]
    assert summary["regressions"] == 12
    assert summary["counts"]["fail"] == 12 and summary["counts"]["error"] == 1
    assert summary["counts"]["skipped"] == 1 and summary["counts"]["flaky"] == 1
    # the one retest's re-measurement is evidence, not a check of the run
    assert summary["total"] == len(compared) - 1 and summary["retests"] == 1
    assert summary["by_kind"]["rdma_bw"]["pass"] == sum(
        1 for r in compared if r["kind"] == "rdma_bw" and r["verdict"] == "pass")
    assert summary["verdict"] == "fail"


def test_a_retest_that_failed_again_is_evidence_not_the_runs_verdict():
    """A late link passed on its as-is retest (flaky) while its partner retest failed again: the run is flaky (warn),
    not failed, in the report's counts, its junit and the history's summary line alike."""
    first = {"kind": "rdma_lat", "host": "h1", "peer": "h3", "params": {"op": "write", "metric": "lat", "rail": 0},
             "metrics": {"lat_us": 29.8}, "verdict": "flaky", "cause": "flaky: far fleet outlier"}
    again = {"kind": "rdma_lat_retest", "host": "h2", "peer": "h1",
             "params": {"op": "write", "metric": "lat", "rail": 0, "retest": True, "retest_purpose": "partner"},
             "metrics": {"lat_us": 32.5}, "verdict": "fail", "cause": "far fleet outlier: 32.5 us"}
    passed = dict(first, kind="rdma_lat_retest", params=dict(again["params"], retest_purpose="as_is"),
                  metrics={"lat_us": 9.4}, verdict="pass", cause=None)
    fine = {"kind": "rdma_lat", "host": "h2", "peer": "h3", "params": {"op": "write", "metric": "lat", "rail": 0},
            "metrics": {"lat_us": 7.1}, "verdict": "pass"}
    records = history.normalize_records([first, again, passed, fine])[0]
    summary = report_model.summarize(records, run_id="r1")
    assert summary["verdict"] == "warn" and summary["counts"]["fail"] == 0 and summary["counts"]["flaky"] == 1
    assert (summary["total"], summary["retests"]) == (2, 2)
    assert summary["by_kind"]["rdma_lat_retest"] == {"fail": 1, "pass": 1}
    junit = ET.fromstring(report_junit.render_junit(records, summary))
    assert junit.get("failures") == "0" and junit.get("tests") == "4"
    assert any("fail: " in (out.text or "") for out in junit.iter("system-out"))
    counted = history_records.summary_record("commcheck.yml", "ctl", {"ok": ["h1", "h2", "h3"], "failed": [],
                                                                      "unreachable": []},
                                             {"flaky": 1, "pass": 1}, 4)
    assert counted["verdict"] == "warn"


def test_summary_of_a_clean_run_passes():
    summary = report_model.summarize([r for r in _run() if r["verdict"] == "pass"])
    assert summary["verdict"] == "pass" and summary["bad_hosts"] == [] and summary["bad_links"] == []


def _no_retests(recs):
    return [r for r in recs if not (r.get("params") or {}).get("retest")]


def test_one_bad_link_does_not_blame_a_host():
    recs = _no_retests(_run())
    recs[0]["verdict"] = "fail"
    summary = report_model.summarize(recs)
    assert summary["bad_links"] == ["node-a<->node-b"]
    assert "node-a" not in summary["bad_hosts"] and "node-b" not in summary["bad_hosts"]


def test_a_link_that_passes_its_retest_is_flaky_not_bad():
    recs = _run()
    recs[0]["verdict"] = "fail"    # node-a -> node-b; its as-is retest passed
    summary = report_model.summarize(recs)
    assert summary["bad_links"] == [] and "node-a" not in summary["bad_hosts"]
    assert summary["flaky"] == ["link node-a - node-b (flaky)"]


@pytest.mark.parametrize("partner_verdict, named", [("fail", "host node-a"), ("pass", "link node-a - node-b")])
def test_partner_retests_decide_between_the_side_and_the_link(partner_verdict, named):
    recs = _no_retests(_run())
    recs[0]["verdict"] = "fail"
    # the suspect node-a retested against node-c and node-d (both fine elsewhere)
    for partner in ("node-c", "node-d"):
        recs.append(dict(recs[0], kind="rdma_bw_retest", peer=partner, verdict=partner_verdict,
                         params=dict(recs[0]["params"], retest=True, retest_purpose="partner", subject="node-a")))
    summary = report_model.summarize(recs)
    failing = [culprits.describe(c) for c in summary["culprits"] if c["host"] != "node-d"]
    assert failing == [named]
    # the retests themselves are evidence, never bad links of their own
    assert "node-a<->node-c" not in summary["bad_links"] and "node-a<->node-d" not in summary["bad_links"]
    assert summary["by_kind"]["rdma_bw_retest"] == {partner_verdict: 2}


def test_heatmaps_one_per_op_with_fractions(compared):
    maps = dict((hm["title"], hm) for hm in report_model.heatmaps(compared))
    assert sorted(maps) == ["rdma_bw read", "rdma_bw write", "tcp_bw tcp"]
    write = maps["rdma_bw write"]
    assert write["hosts"] == HOSTS and not write["relative"]
    cell = write["cells"][("node-a", "node-c")]
    assert cell["fraction"] == 0.4 and cell["verdict"] == "fail" and cell["regression"]
    assert write["cells"][("node-a", "node-b")]["regression"] is None
    assert ("node-a", "node-a") not in write["cells"]
    assert maps["tcp_bw tcp"]["relative"]  # no expected bandwidth: fraction of the best pair


def test_heatmap_cell_keeps_the_worst_record_of_a_pair():
    recs = [{"kind": "rdma_bw", "host": "a", "peer": "b", "params": {"op": "write", "device": d},
             "metrics": {"bw_gbps": v, "expected_gbps": 100}, "verdict": "pass" if v > 90 else "fail"}
            for d, v in (("mlx5_0", 99), ("mlx5_1", 50), ("mlx5_2", 97))]
    [hm] = report_model.heatmaps(recs)
    cell = hm["cells"][("b", "a")]  # write: the client (peer b) sends to the server (host a)
    assert cell["value"] == 50 and cell["count"] == 3 and cell["verdict"] == "fail"


def test_fraction_colors():
    assert report_svg.fraction_color(0) == "#d73027"
    assert report_svg.fraction_color(1) == "#1a9850" and report_svg.fraction_color(1.7) == "#1a9850"
    assert report_svg.fraction_color(None) == "#dddddd"
    assert report_svg.fraction_color(0.5) == "#fc8d59"


class _Collector(HTMLParser):
    def __init__(self):
        HTMLParser.__init__(self)
        self.tags, self.attrs, self.stack, self.errors = [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)


def test_html_is_self_contained_with_one_svg_heat_map_per_op(compared):
    summary = report_model.summarize(compared, run_id="now", generated="2026-05-09T00:00:00.000000Z")
    page = report_html.render_html(compared, summary, {"baseline": {"k": 5, "threshold": 0.2}})
    parser = _Collector()
    parser.feed(page)
    assert parser.tags.count("svg") == 5  # the host x rail grid, 3 heat maps and the busbw chart
    assert page.count('class="heatmap"') == 3 and page.count('class="railgrid"') == 1
    assert page.count('class="busbw"') == 1 and "<polyline" in page
    assert "script" not in parser.tags and "link" not in parser.tags and "img" not in parser.tags
    for name, value in parser.attrs:
        if name in ("src", "href"):
            pytest.fail("external reference %s=%s" % (name, value))
    assert 'stroke="#000000" stroke-width="3"' in page  # regression marks
    assert "Findings and fixes" in page and "set memlock unlimited" in page
    assert "Regressions" in page and "-58.3%" in page  # 40 against the median 96
    assert "Retests" in page and "Latency" in page
    assert page.startswith("<!DOCTYPE html>")


def test_html_escapes_everything():
    recs = [{"kind": "rdma_bw", "host": "<script>alert(1)</script>", "peer": "b&c", "params": {"op": "\"x\""},
             "metrics": {"bw_gbps": 1.0}, "verdict": "fail", "cause": "<b>bad</b>", "fix": "x", "evidence": ["<i>"]}]
    page = report_html.render_html(recs, report_model.summarize(recs))
    assert "<script>" not in page and "<b>bad</b>" not in page and "<i>" not in page
    assert "&lt;script&gt;" in page


def test_markdown_sections(compared):
    summary = report_model.summarize(compared, run_id="now")
    text = report_markdown.render_markdown(compared, summary, {"baseline": {"k": 5, "threshold": 0.2}})
    for heading in ("# commcheck report: run now", "## Regressions", "## Findings", "## Bandwidth: rdma_bw write",
                    "## Latency (us)", "## Collectives", "## Retests", "## Checks by kind"):
        assert heading in text, heading
    assert "Bad hosts: node-c, node-d" in text
    assert "| node-c | 40 (40%) **!** (regr.) |" in text
    assert "median of the last 5 passing runs; threshold 20%" in text


def test_results_json(compared):
    summary = report_model.summarize(compared, run_id="now")
    doc = json.loads(report_json.render_results_json(compared, summary, {"baseline": {"k": 5}}))
    assert doc["schema"] == report_json.RESULTS_SCHEMA and doc["run_id"] == "now"
    assert len(doc["records"]) == len(compared) and len(doc["regressions"]) == 12
    assert doc["summary"]["bad_hosts"] == ["node-c", "node-d"]


def test_junit_one_testcase_per_check(compared):
    summary = report_model.summarize(compared, run_id="now")
    root = ET.fromstring(report_junit.render_junit(compared, summary).encode("utf-8"))
    cases = root.findall(".//testcase")
    assert len(cases) == len(compared)
    assert len(set(c.get("name") for c in cases)) == len(cases)
    assert int(root.get("tests")) == len(compared)
    failures = root.findall(".//failure")
    assert len(failures) == 12 and all(f.get("type") == "fail" for f in failures)  # regressions that also failed
    assert len(root.findall(".//error")) == 1 and len(root.findall(".//skipped")) == 1
    assert int(root.get("failures")) == 12 and int(root.get("errors")) == 1
    flaky = [c for c in cases if c.find("system-out") is not None]
    assert len(flaky) == 1 and "flaky" in flaky[0].find("system-out").text


def test_junit_regression_of_a_passing_check_is_a_failure_unless_turned_off():
    hist = [{"run_id": "r%d" % i, "time": "2026-01-0%dT00:00:00.000000Z" % i, "kind": "tcp_bw", "host": "a",
             "peer": "b", "params": {}, "metrics": {"bw_gbps": 10.0}, "verdict": "pass"} for i in (1, 2, 3)]
    recs = baseline.compare([{"kind": "tcp_bw", "host": "a", "peer": "b", "params": {}, "metrics": {"bw_gbps": 5.0},
                              "verdict": "pass"}], hist)
    root = ET.fromstring(report_junit.render_junit(recs, report_model.summarize(recs)))
    [failure] = root.findall(".//failure")
    assert failure.get("type") == "regression" and "-50.0%" in failure.get("message")
    root = ET.fromstring(report_junit.render_junit(recs, report_model.summarize(recs), regression_fails=False))
    assert root.findall(".//failure") == []


def test_junit_strips_control_characters():
    recs = [{"kind": "x", "host": "a", "verdict": "fail", "cause": "bad\x00\x1b[31m", "evidence": ["\x07bell"]}]
    ET.fromstring(report_junit.render_junit(history.normalize_records(recs)[0], report_model.summarize(recs)))


def test_collective_series_from_rows_and_sizes():
    recs = [{"kind": "collective", "host": "pool", "params": {"op": "all_reduce"}, "verdict": "pass",
             "metrics": {"rows": [{"bytes": 1024, "out_of_place": {"busbw_gbs": 1.0}},
                                  {"bytes": 2048, "busbw_gbs": 2.0}]}},
            {"kind": "collective", "host": "pool", "params": {"op": "all_reduce", "size": 4096},
             "metrics": {"busbw_gbs": 3.0}, "verdict": "fail"}]
    [series] = report_model.collective_series(recs)
    assert series["points"] == [(1024, 1.0), (2048, 2.0), (4096, 3.0)] and series["verdict"] == "fail"
    assert "<polyline" in report_svg.svg_busbw_chart([series])


def test_summary_lines():
    summary = report_model.summarize(_run(slow="node-c"), run_id="x")
    lines = rr.summary_lines(summary, {"html": "/r/report.html"})
    assert lines[0] == "commcheck run x: FAIL"
    assert lines[-1] == "report: /r/report.html"
    assert "bad hosts: node-c, node-d" in lines


def test_empty_run_renders_everything():
    summary = report_model.summarize([], run_id="empty")
    assert summary["total"] == 0 and summary["verdict"] == "pass"
    assert "No bandwidth results" in report_html.render_html([], summary)
    assert "None." in report_markdown.render_markdown([], summary)
    ET.fromstring(report_junit.render_junit([], summary))
    parse_prometheus(report_prometheus.render_prometheus([], summary))


def test_retests_are_listed_but_kept_out_of_matrices_and_metric_series():
    original = {"kind": "rdma_bw", "host": "a", "peer": "b", "params": {"op": "write", "rail": 0},
                "metrics": {"bw_gbps": 40.0, "expected_gbps": 100.0}, "verdict": "flaky"}
    retest = {"kind": "rdma_bw", "host": "a", "peer": "b",
              "params": {"op": "write", "rail": 0, "retest": True, "retest_purpose": "as_is", "retest_id": "r1-0"},
              "metrics": {"bw_gbps": 98.0, "expected_gbps": 100.0}, "verdict": "pass"}
    summary_rec = {"kind": "retest_summary", "host": "*", "peer": None, "params": {"check": "rdma"},
                   "metrics": {"retests": 1}, "verdict": "fail", "cause": "1 retest(s)"}
    recs = history.normalize_records([original, retest, summary_rec])[0]
    [hm] = report_model.heatmaps(recs)
    assert hm["cells"][("b", "a")]["value"] == 40.0 and hm["cells"][("b", "a")]["count"] == 1
    summary = report_model.summarize(recs)
    assert "*" not in summary["bad_hosts"]
    text = report_markdown.render_markdown(recs, summary)
    assert "## Retests" in text and "retest_summary" in text
    families = parse_prometheus(report_prometheus.render_prometheus(recs, summary))
    bandwidth = families["commcheck_link_bandwidth_bytes_per_second"]["samples"]
    assert [value for _labels, value in bandwidth] == [40.0 * 1e9 / 8]
    assert not any("retest_id" in labels for labels, _v in bandwidth)
    assert ({"host": "*", "kind": "retest_summary"}, 4.0) in families["commcheck_host_verdict"]["samples"]
    compared = baseline.compare(recs, [dict(original, run_id="old%d" % i, time="2026-01-0%dT00:00:00.000000Z" % i,
                                            verdict="pass", metrics={"bw_gbps": 99.0}) for i in (1, 2, 3)])
    assert compared[0]["regression"] is not None and compared[1]["regression"] is None


def test_a_culprit_host_is_shown_with_its_leaf_where_the_localization_knew_it():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization
    # the check localized with the topology: node-c's rail 0 hangs off leaf-r0-03 (lldp), node-a's off leaf-r0-01
    records = _run(slow="node-c")
    localized = localization.localize_records(records, topology={
        "node-c": {0: {"leaf": "leaf-r0-03", "port": "Ethernet12", "source": "lldp"}},
        "node-a": {"mlx5_0": {"leaf": "leaf-r0-01", "port": "Ethernet3", "source": "inventory"}}})
    records = records + localization.finding_records(localized) + [localization.summary_record(localized)]
    summary = report_model.summarize(records, run_id="now")
    node_c = [c for c in summary["culprits"] if c["host"] == "node-c"][0]
    assert node_c["switches"] == [{"rail": 0, "leaf": "leaf-r0-03", "port": "Ethernet12", "source": "lldp"}]
    text = report_markdown.render_markdown(records, summary, {})
    assert "host node-c behind leaf leaf-r0-03 [" in text
    assert "node-d behind" not in text
    assert "host node-c behind leaf leaf-r0-03" in report_html.render_html(records, summary, {})


def test_each_format_makes_each_text_when_the_one_before_is_taken_from_one_view(monkeypatch):
    records = _run(slow="node-c")
    summary = report_model.summarize(records, run_id="r")
    views, rendered = [], []
    real_view = rr.ReportView

    def view(*args, **kwargs):
        views.append(real_view(*args, **kwargs))
        return views[-1]

    def noting(fmt, render):
        def wrapped(v, **kwargs):
            assert v is views[0]
            rendered.append(fmt)
            return render(v, **kwargs)
        return wrapped

    monkeypatch.setattr(rr, "ReportView", view)
    for fmt, module in (("md", report_markdown), ("json", report_json), ("prom", report_prometheus)):
        monkeypatch.setattr(module, "render", noting(fmt, module.render))
    texts = rr.each_format(["json", "md", "prom"], records, summary)
    assert next(texts)[0] == "json" and rendered == ["json"]
    assert next(texts)[0] == "md" and rendered == ["json", "md"]
    assert [fmt for fmt, _text in texts] == ["prom"] and rendered == ["json", "md", "prom"] and len(views) == 1
    monkeypatch.undo()
    assert dict(rr.each_format(["json", "md"], records, summary)) == rr.render_formats(["json", "md"], records, summary)
