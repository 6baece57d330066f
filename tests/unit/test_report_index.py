# -*- coding: utf-8 -*-
"""report_index: the results page across runs (digests, trends, page, atomic rewrite, bounds)."""
import json
import os
import re
from html.parser import HTMLParser
from unittest import mock

import pytest
from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import report as report_action
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_index as ri


def _pair(host, peer, bw, expected=100.0, **params):
    return {"kind": "rdma_bw", "host": host, "peer": peer, "params": dict({"op": "write"}, **params),
            "metrics": {"bw_gbps": bw, "expected_gbps": expected}, "verdict": "pass" if bw >= 90 else "fail"}


def _summary(run_id, time, verdict="pass", culprits=(), regressions=0):
    return {"run_id": run_id, "generated": time, "verdict": verdict, "total": 2, "regressions": regressions,
            "culprits": list(culprits)}


def _host_culprit(host):
    return {"component": "host", "host": host, "peer": None, "rail": None, "device": None, "verdict": "fail",
            "confidence": "medium", "checks": ["rdma_perf"], "evidence": ["x"], "cause": "slow", "fix": "take it out"}


def _time(index):
    return "2026-05-%02dT00:00:00.000000Z" % (index + 1)


def _write_run(parent, run_id, time, records, summary=None, report=True, mtime=None):
    run_dir = parent / run_id
    run_dir.mkdir()
    digest = ri.run_digest(summary or _summary(run_id, time), records)
    (run_dir / ri.DIGEST_NAME).write_text(ri.digest_text(digest))
    if report:
        (run_dir / "report.html").write_text("<html></html>")
    if mtime is not None:
        os.utime(str(run_dir), (mtime, mtime))
    return run_dir


def _runs(parent, count, slow_from=None):
    for index in range(count):
        bw = 40.0 if slow_from is not None and index >= slow_from else 95.0
        _write_run(parent, "run-%02d" % index, _time(index), [_pair("h1", "h2", bw), _pair("h2", "h3", 95.0)],
                   mtime=1700000000 + index)


class _Links(HTMLParser):
    def __init__(self):
        HTMLParser.__init__(self)
        self.hrefs, self.tags = [], set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag == "a":
            self.hrefs.append(dict(attrs)["href"])


def _parse(text):
    parser = _Links()
    parser.feed(text)
    return parser


# ---------------------------------------------------------------- digest

def test_the_digest_keeps_the_worst_point_of_each_host_and_link():
    records = [_pair("h1", "h2", 95.0), _pair("h2", "h1", 50.0, op="read"), _pair("h2", "h3", 97.0),
               _pair("h1", "h2", 10.0, retest=True),
               {"kind": "finding", "host": "h1", "verdict": "error"},
               {"kind": "regression", "host": "h1", "peer": "h2", "metrics": {"bw_gbps": 1.0}}]
    digest = ri.run_digest(_summary("r", _time(0), "fail", [_host_culprit("h1")], 2), records)
    assert digest["links"] == {"h1<->h2": [50.0, 0.5], "h2<->h3": [97.0, 0.97]}
    assert digest["hosts"] == {"h1": [50.0, 0.5], "h2": [50.0, 0.5], "h3": [97.0, 0.97]}
    assert digest["culprits"] == ["host h1"] and digest["culprit_count"] == 1
    assert (digest["verdict"], digest["regressions"], digest["time"]) == ("fail", 2, _time(0))


def test_the_digest_keeps_at_most_the_worst_series(monkeypatch):
    monkeypatch.setattr(ri, "DIGEST_SERIES_LIMIT", 2)
    records = [_pair("h%d" % i, "h%d" % (i + 1), 50.0 + i) for i in range(6)]
    digest = ri.run_digest(_summary("r", _time(0)), records)
    assert sorted(digest["links"]) == ["h0<->h1", "h1<->h2"]


# ---------------------------------------------------------------- the page

def test_the_page_lists_runs_newest_first_with_links_to_their_reports(tmp_path):
    _runs(tmp_path, 3)
    _write_run(tmp_path, "no-report", _time(5), [], report=False, mtime=1700000100)
    entries = ri.collect_entries(str(tmp_path))
    assert [e["dir"] for e in entries] == ["no-report", "run-02", "run-01", "run-00"]
    page = ri.render_index(entries)
    assert _parse(page).hrefs == ["run-02/report.html", "run-01/report.html", "run-00/report.html"]
    assert page.index("run-02") < page.index("run-01") < page.index("run-00")
    assert "no-report" in page


def test_the_page_shows_verdict_culprits_in_words_and_regressions(tmp_path):
    culprits = [_host_culprit("h%d" % i) for i in range(8)]
    _write_run(tmp_path, "bad", _time(0), [_pair("h1", "h2", 40.0)],
               summary=_summary("bad", _time(0), "fail", culprits, regressions=3))
    page = ri.render_index(ri.collect_entries(str(tmp_path)))
    assert '<span class="fail">FAIL</span>' in page
    assert "host h0<br>host h1" in page and "host h5" not in page and "(+3 more)" in page
    assert "<td>3</td>" in page


def test_the_runs_are_bounded_and_the_trends_too(tmp_path):
    _runs(tmp_path, 12, slow_from=11)
    entries = ri.collect_entries(str(tmp_path), runs=8)
    assert [e["dir"] for e in entries] == ["run-%02d" % i for i in range(11, 3, -1)]
    rows, total = ri.trend_rows(entries, "links", points=5, rows=1)
    assert total == 2
    assert [r["name"] for r in rows] == ["h1<->h2"]   # the dropped one first
    assert rows[0]["values"] == [95.0, 95.0, 95.0, 95.0, 40.0]
    assert rows[0]["change"] == pytest.approx(40.0 / 95.0 - 1)
    page = ri.render_index(entries, points=5, rows=1)
    assert page.count("<polyline") == 2      # one host row, one link row
    assert all(len(m.split()) == 5 for m in re.findall(r'points="([^"]*)"', page))


def test_a_trend_has_a_gap_where_a_run_did_not_measure_the_link():
    entries = [{"links": {"a<->b": [40.0, 0.4]}}, {"links": {}}, {"links": {"a<->b": [90.0, 0.9]}},
               {"links": {"a<->b": [95.0, 0.95]}}]
    rows, _total = ri.trend_rows(entries, "links")
    assert rows[0]["values"] == [95.0, 90.0, None, 40.0]
    svg = ri.sparkline(rows[0]["values"])
    assert svg.count("<polyline") == 1 and "<circle" in svg


def test_deleted_run_directories_are_skipped(tmp_path):
    _runs(tmp_path, 3)
    for name in os.listdir(str(tmp_path / "run-01")):
        os.unlink(str(tmp_path / "run-01" / name))
    os.rmdir(str(tmp_path / "run-01"))
    (tmp_path / "empty-dir").mkdir()
    (tmp_path / "stray-file").write_text("x")
    page = ri.render_index(ri.collect_entries(str(tmp_path)))
    assert _parse(page).hrefs == ["run-02/report.html", "run-00/report.html"]
    assert "empty-dir" not in page and "stray-file" not in page


def test_a_missing_report_directory_gives_an_empty_page(tmp_path):
    entries = ri.collect_entries(str(tmp_path / "none"))
    assert entries == []
    assert "No run yet." in ri.render_index(entries)


def test_a_run_without_digest_is_read_from_its_results_json(tmp_path):
    run_dir = tmp_path / "old"
    run_dir.mkdir()
    (run_dir / "results.json").write_text(json.dumps({
        "generated": _time(1), "summary": _summary("old", _time(1), "fail", [_host_culprit("h9")]),
        "records": [_pair("h1", "h9", 30.0)]}))
    (tmp_path / "corrupt").mkdir()
    (tmp_path / "corrupt" / ri.DIGEST_NAME).write_text("{not json")
    entries = ri.collect_entries(str(tmp_path))
    assert [(e["dir"], e["verdict"], e["report"]) for e in entries] == [("old", "fail", None)]
    assert entries[0]["links"] == {"h1<->h9": [30.0, 0.3]}


def test_a_run_without_digest_or_results_is_read_from_its_history_summary_line(tmp_path):
    hist = tmp_path / "history"
    hist.mkdir()
    summary = dict(history.summary_record("p.yml", "ctl", {"ok": ["h1"]}, {"fail": 1}, 1),
                   run_id="gone-json", time=_time(2), stats={"commcheck_summary": _summary(
                       "gone-json", _time(2), "fail", [_host_culprit("h4")], regressions=1)})
    (hist / "history-2026-05.jsonl").write_text(json.dumps(summary) + "\n")
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "gone-json").mkdir()
    (reports / "gone-json" / "report.html").write_text("x")
    assert ri.collect_entries(str(reports)) == []          # no history: not a run directory
    entries = ri.collect_entries(str(reports), history_dir=str(hist))
    assert [(e["dir"], e["verdict"], e["culprits"], e["regressions"]) for e in entries] == [
        ("gone-json", "fail", ["host h4"], 1)]


# ---------------------------------------------------------------- escaping and size

HOSTILE = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', "a&b", "</svg><b>x", "x" * 5000]


def test_hostile_names_are_escaped_everywhere(tmp_path):
    records = [_pair(HOSTILE[i], HOSTILE[(i + 1) % len(HOSTILE)], 50.0) for i in range(len(HOSTILE))]
    culprits = [_host_culprit(h) for h in HOSTILE]
    _write_run(tmp_path, "r&<x>", _time(0), records, summary=_summary('<b>"run"</b>', _time(0), "<i>", culprits))
    page = ri.render_index(ri.collect_entries(str(tmp_path)))
    parser = _parse(page)
    assert parser.tags <= {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "table", "tr", "th",
                           "td", "a", "span", "br", "svg", "polyline", "circle"}
    assert "<script" not in page and "<img" not in page and "<b>" not in page and "<i>" not in page
    assert parser.hrefs == ["r%26%3Cx%3E/report.html"]
    assert "x" * ri.NAME_LIMIT not in page   # a name longer than any DNS name is cut


def test_fqdn_host_and_link_names_are_whole(tmp_path):
    longest = ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 61])   # 253 characters, the longest DNS name
    fqdn = ["gpu-h100-node-%03d.rack01.dc-west.example.com" % i for i in (5, 6)] + [longest]
    records = [_pair(fqdn[0], fqdn[1], 40.0, rail=0), _pair(fqdn[1], fqdn[2], 95.0, rail=0)]
    culprits = [{"component": "link", "host": fqdn[0], "peer": fqdn[1], "rail": 0, "device": None, "verdict": "fail",
                 "confidence": "high", "checks": ["rdma_perf"], "evidence": ["x"], "cause": "slow", "fix": "cable"},
                _host_culprit(longest)]
    _write_run(tmp_path, "r1", _time(0), records, summary=_summary("r1", _time(0), "fail", culprits))
    page = ri.render_index(ri.collect_entries(str(tmp_path)))
    assert "..." not in page
    for name in fqdn:
        assert "<td>%s</td>" % name in page
    assert "link %s - %s (rail 0)" % (fqdn[0], fqdn[1]) in page and "host %s" % longest in page


def test_1024_hosts_by_50_runs_keep_the_page_small(tmp_path):
    hosts = ["node-%04d.cluster.example.com" % i for i in range(1024)]
    records = [_pair(hosts[i], hosts[(i + 1) % 1024], 95.0, rail=rail) for i in range(1024) for rail in (0, 1)]
    culprits = [_host_culprit(h) for h in hosts[:40]]
    base = ri.run_digest(_summary("run", _time(0), "fail", culprits), records)
    assert (len(base["hosts"]), len(base["links"]), base["culprit_count"]) == (1024, 1024, 40)
    for run in range(50):
        digest = dict(base, run_id="run-%02d" % run, time="2026-05-01T00:%02d:00.000000Z" % run)
        for group in ("hosts", "links"):
            digest[group] = dict((name, [value[0] - (index + run) % 7, value[1]])
                                 for index, (name, value) in enumerate(sorted(base[group].items())))
        run_dir = tmp_path / digest["run_id"]
        run_dir.mkdir()
        (run_dir / ri.DIGEST_NAME).write_text(ri.digest_text(digest))
        (run_dir / "report.html").write_text("x")
    entries = ri.collect_entries(str(tmp_path))
    page = ri.render_index(entries)
    assert len(entries) == 50
    assert len(page.encode("utf-8")) < 400 * 1024
    assert page.count("<tr>") == 1 + 50 + 2 * (1 + 100)
    assert page.count("most dropped or worst of 1024 shown") == 2


# ---------------------------------------------------------------- the atomic rewrite

def test_update_writes_the_digest_then_the_page(tmp_path):
    _runs(tmp_path, 2)
    run_dir = tmp_path / "now"
    run_dir.mkdir()
    digest = ri.run_digest(_summary("now", _time(9)), [_pair("h1", "h2", 20.0)])
    index, digest_path = ri.update_index(str(tmp_path), str(run_dir), digest, report_action.write_atomic)
    assert index == str(tmp_path / "index.html") and digest_path == str(run_dir / ri.DIGEST_NAME)
    page = (tmp_path / "index.html").read_text()
    assert page.index(">now<") < page.index("run-01")
    assert sorted(n for n in os.listdir(str(tmp_path)) if n.startswith(".")) == []


def test_a_failing_render_leaves_the_old_page_intact(tmp_path, monkeypatch):
    _runs(tmp_path, 1)
    (tmp_path / "index.html").write_text("old page")
    run_dir = tmp_path / "now"
    run_dir.mkdir()

    def broken(*args, **kwargs):
        raise ValueError("render failed")
    monkeypatch.setattr(ri, "render_index", broken)
    with pytest.raises(ValueError):
        ri.update_index(str(tmp_path), str(run_dir), ri.run_digest(_summary("now", _time(9))),
                        report_action.write_atomic)
    assert (tmp_path / "index.html").read_text() == "old page"


def test_a_failing_replace_leaves_the_old_page_and_no_temporary_file(tmp_path, monkeypatch):
    (tmp_path / "index.html").write_text("old page")
    real_replace = os.replace

    def replace(src, dst):
        if dst.endswith("index.html"):
            raise OSError("disk full")
        real_replace(src, dst)
    monkeypatch.setattr(report_action.os, "replace", replace)
    run_dir = tmp_path / "now"
    run_dir.mkdir()
    with pytest.raises(OSError):
        ri.update_index(str(tmp_path), str(run_dir), ri.run_digest(_summary("now", _time(9))),
                        report_action.write_atomic)
    assert (tmp_path / "index.html").read_text() == "old page"
    assert sorted(os.listdir(str(tmp_path))) == ["index.html", "now"]


# ---------------------------------------------------------------- through the action

def _run_action(args, check_mode=False):
    task = mock.MagicMock()
    task.args = dict(args)
    task.check_mode = check_mode
    task.async_val = 0
    task.diff = False
    action = report_action.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(),
                                        templar=mock.MagicMock(), shared_loader_obj=mock.MagicMock())
    return action.run(task_vars={})


def test_the_action_writes_the_page_beside_the_run_directories(tmp_path):
    base = {"report_dir": str(tmp_path), "run_subdir": True, "compare": False, "formats": ["html"]}
    for index, bw in enumerate((95.0, 94.0, 30.0)):
        result = _run_action(dict(base, run_id="r%d" % index, records=[_pair("a", "b", bw)]))
        assert not result.get("failed"), result
    assert result["index"] == str(tmp_path / "index.html")
    page = (tmp_path / "index.html").read_text()
    assert _parse(page).hrefs == ["r2/report.html", "r1/report.html", "r0/report.html"]
    assert os.path.isfile(str(tmp_path / "r2" / ri.DIGEST_NAME))


@pytest.mark.parametrize("args", [{"index": False}, {"run_subdir": False}])
def test_the_action_writes_no_page_when_turned_off_or_without_run_directories(tmp_path, args):
    result = _run_action(dict({"report_dir": str(tmp_path), "run_subdir": True, "run_id": "r", "formats": ["md"],
                               "records": [_pair("a", "b", 95.0)]}, **args))
    assert not result.get("failed") and result["index"] is None, result
    assert not os.path.exists(str(tmp_path / "index.html"))
    assert not [p for p, _d, files in os.walk(str(tmp_path)) for f in files if f == ri.DIGEST_NAME]


@pytest.mark.parametrize("option,value", [("index_runs", 0), ("index_points", 1), ("index_rows", 10 ** 9),
                                          ("index_runs", True)])
def test_the_action_refuses_bounds_out_of_range(tmp_path, option, value):
    result = _run_action({"report_dir": str(tmp_path), "run_subdir": True, "run_id": "r", option: value,
                          "records": [_pair("a", "b", 95.0)]})
    assert result.get("failed") and option in result["msg"], result
    assert os.listdir(str(tmp_path)) == []


def test_a_page_that_cannot_be_written_is_a_warning_and_the_report_stands(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr(ri, "update_index", broken)
    result = _run_action({"report_dir": str(tmp_path), "run_subdir": True, "run_id": "r", "formats": ["md"],
                          "records": [_pair("a", "b", 95.0)]})
    assert not result.get("failed") and result["index"] is None, result
    assert any("results page" in w and "disk full" in w for w in result["warnings"]), result
    assert os.path.isfile(str(tmp_path / "r" / "report.md"))


@pytest.mark.parametrize("return_records", [True, False])
def test_the_action_returns_the_records_only_when_asked(tmp_path, return_records):
    # the report role asks for none: at 100,000 records Ansible's handling of them costs as much as the report
    result = _run_action({"report_dir": str(tmp_path), "run_subdir": True, "run_id": "r", "formats": ["json"],
                          "records": [_pair("a", "b", 95.0)], "return_records": return_records})
    assert not result.get("failed"), result
    assert ("records" in result) is return_records
    assert result["summary"]["total"] == 1 and "regressions" in result
