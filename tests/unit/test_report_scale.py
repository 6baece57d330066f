# -*- coding: utf-8 -*-
"""The report reads the same at 4 and at 1,024 hosts: bounded page sizes, no N x N matrix beyond 64 hosts,
the worst links instead, findings grouped by code, no Python reprs and no scheduling params in the tables.

Synthetic records in the results contract: 1,024 hosts x 8 rails in a ring and 128 x 8 in a full mesh.
Sizes are asserted, never times.
"""
import re
from html.parser import HTMLParser

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_fleet
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_html
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_markdown
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_values
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_model import ReportView
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits

MB = 1000 * 1000
RAILS = 8
BAD_HOST = "h0100"


def _pair(host, peer, rail, value, rnd=0):
    verdict = "pass" if value >= 90 else "fail"
    return {"kind": "rdma_bw", "host": host, "peer": peer,
            "params": {"op": "write", "metric": "bw", "server": host, "client": peer, "rail": rail, "round": rnd,
                       "step": 0, "device": "mlx5_%d" % rail, "peer_device": "mlx5_%d" % rail,
                       "tcp_port": 18515 + rail, "size": 65536, "qps": None},
            "metrics": {"bw_gbps": value, "expected_gbps": 100.0}, "verdict": verdict,
            "cause": None if verdict == "pass" else "%.1f Gb/s is below 90%% of 100 Gb/s" % value,
            "fix": None if verdict == "pass" else "check the cable", "evidence": []}


def _value(i, j, rail, bad):
    """A spread of good values (90.0 .. 99.9) and 20 + i % 30 on the bad host's links: distinct fractions."""
    if bad:
        return 20.0 + (i * 8 + rail) % 60 / 2.0
    return 90.0 + ((i * 37 + j * 11 + rail * 5) % 100) / 10.0


def _discovery(hosts):
    """Every host's CPU governor warning (no evidence of its own) and an info finding on a few."""
    out = []
    for host in hosts:
        out.append({"kind": "finding", "host": host, "peer": None,
                    "params": {"check": "discover", "code": "cpu_governor_not_performance", "severity": "warning",
                               "device": None, "port": None},
                    "metrics": {}, "verdict": "warn", "cause": "2 of 64 CPUs are not on the performance governor",
                    "fix": "set the performance governor", "evidence": []})
    for host in hosts[:3]:
        out.append({"kind": "finding", "host": host, "peer": None,
                    "params": {"check": "discover", "code": "numa_unknown", "severity": "info", "device": "mlx5_0",
                               "port": 1},
                    "metrics": {"detail": {"node": -1}}, "verdict": "pass", "cause": "NUMA node of mlx5_0 unknown",
                    "fix": None, "evidence": []})
    return out


def _latency(hosts):
    return [{"kind": "rdma_lat", "host": h, "peer": hosts[(i + 1) % len(hosts)],
             "params": {"op": "write", "metric": "lat", "rail": 0, "round": 0, "step": 1, "tcp_port": 18600},
             "metrics": {"lat_us": 1.9 + (i % 50) / 100.0, "lat_avg_us": 2.0, "lat_p99_us": 3.25 + i / 1000.0,
                         "lat_max_us": 9.5},
             "verdict": "pass"} for i, h in enumerate(hosts)]


def _hosts(n):
    return ["h%04d" % i for i in range(1, n + 1)]


def ring(n, rails=RAILS):
    hosts = _hosts(n)
    recs = []
    for rail in range(rails):
        for i, host in enumerate(hosts):
            peer = hosts[(i + 1) % n]
            recs.append(_pair(host, peer, rail, _value(i, i + 1, rail, BAD_HOST in (host, peer))))
    return hosts, recs + _discovery(hosts) + _latency(hosts)


def mesh(n, rails=RAILS):
    hosts = _hosts(n)
    recs = [_pair(host, peer, rail, _value(i, j, rail, BAD_HOST in (host, peer) or (i, j) == (2, 5)), rnd=j)
            for rail in range(rails) for i, host in enumerate(hosts) for j, peer in enumerate(hosts) if i != j]
    return hosts, recs + _discovery(hosts)


def summary_of(records, found):
    """A summary as summarize() makes it, with the culprits given (summarize over 130k records is not the test)."""
    counts, by_kind = {}, {}
    for record in records:
        counts[record["verdict"]] = counts.get(record["verdict"], 0) + 1
        kind = by_kind.setdefault(record["kind"], {})
        kind[record["verdict"]] = kind.get(record["verdict"], 0) + 1
    bad_hosts, bad_nics, bad_links = culprits.bad_lists(found)
    return {"run_id": "scale", "generated": "2026-11-25T00:00:00Z", "verdict": "fail", "total": len(records),
            "counts": counts, "by_kind": by_kind, "culprits": found, "bad_hosts": bad_hosts, "bad_nics": bad_nics,
            "bad_links": bad_links, "flaky": [], "regressions": 0, "regressed_hosts": [], "regressed_links": []}


def _bad_host_culprit():
    return culprits.culprit("host", BAD_HOST, check="rdma_bw", cause="most links of %s fail" % BAD_HOST,
                            fix="take the host out of the pool", evidence=["e1", "e2", "e3"])


def _render(records):
    view = ReportView(records, summary_of(records, [_bad_host_culprit()]))
    return view, report_html.render(view), report_markdown.render(view)


@pytest.fixture(scope="module", name="ring_report")
def _ring_report():
    return _render(ring(1024)[1])


@pytest.fixture(scope="module", name="mesh_report")
def _mesh_report():
    return _render(mesh(128)[1])


class _Cells(HTMLParser):
    """The text of every table cell, and the rows of tables inside a figure of class worst-links."""

    def __init__(self):
        HTMLParser.__init__(self)
        self.cells, self.depth, self.current = [], 0, None
        self.worst_rows, self.in_worst, self.row = [], False, None

    def handle_starttag(self, tag, attrs):
        if tag == "figure" and ("class", "worst-links") in attrs:
            self.in_worst = True
            self.worst_rows.append([])
        if tag == "td":
            self.current = []
        if tag == "tr" and self.in_worst:
            self.row = []

    def handle_endtag(self, tag):
        if tag == "td" and self.current is not None:
            text = "".join(self.current)
            self.cells.append(text)
            if self.row is not None:
                self.row.append(text)
            self.current = None
        if tag == "tr" and self.row:
            self.worst_rows[-1].append(self.row)
            self.row = None
        if tag == "figure":
            self.in_worst = False

    def handle_data(self, data):
        if self.current is not None:
            self.current.append(data)


def _cells(page):
    parser = _Cells()
    parser.feed(page)
    return parser


def test_ring_of_1024_hosts_is_a_few_mb_without_matrices(ring_report):
    view, page, text = ring_report
    assert len(page.encode("utf-8")) <= 5 * MB
    assert len(text.encode("utf-8")) <= 1 * MB
    assert 'class="heatmap"' not in page  # 1,024 hosts: no N x N matrix
    assert page.count('class="railgrid"') == 1
    assert page.count('<rect class="g"') == 1024 * RAILS  # one grid cell per host NIC
    assert page.count('<rect class="mark"') == 1  # the culprit's row
    assert page.count('class="worst-links"') == 1 and "the 50 worst of 8192 links" in page
    assert "sender \\ receiver" not in text and "The 50 worst of 8192 links (1024 hosts)" in text


def test_the_top_comes_first_and_everything_else_is_folded(ring_report):
    _view, page, _text = ring_report
    body = page[page.index("<body>"):]
    assert body.index('id="verdict"') < body.index('id="what-to-do"') < body.index('id="regressions"') \
        < body.index('class="railgrid"') < body.index('<details class="section"')
    assert "host h0100" in body[:body.index('id="regressions"')]
    for section in ("bandwidth", "findings", "latency", "checks"):
        assert re.search(r'<details class="section"><summary><h2 id="%s">' % section, page), section


def test_mesh_of_128_hosts_stays_under_10_mb(mesh_report):
    view, page, text = mesh_report
    assert len(view.checks) > 130000
    assert len(page.encode("utf-8")) <= 10 * MB
    assert len(text.encode("utf-8")) <= 1 * MB
    assert 'class="heatmap"' not in page and "sender \\ receiver" not in text


def _expected_worst(records, limit=50):
    pairs = [r for r in records if r["kind"] == "rdma_bw"]
    fractions = sorted(r["metrics"]["bw_gbps"] / r["metrics"]["expected_gbps"] for r in pairs)
    return fractions[:limit]


def test_worst_links_table_holds_the_50_worst(mesh_report):
    view, page, _text = mesh_report
    [hm] = view.heatmaps
    assert hm["cells"] is None and hm["links"] == 128 * 127 * RAILS
    assert [row["fraction"] for row in hm["worst"]] == _expected_worst(view.records)
    [rows] = _cells(page).worst_rows
    assert len(rows) == 50
    shown = [float(row[6].rstrip("%")) for row in rows]  # the "of expected" column
    assert shown == sorted(shown) and shown[-1] <= round(_expected_worst(view.records)[-1] * 100)
    assert all(BAD_HOST in row[1] or row[1] in ("h0006->h0003",) for row in rows)


def test_findings_are_grouped_by_code_with_host_ranges(ring_report):
    view, page, text = ring_report
    groups = dict((g["code"], g) for g in report_fleet.groups(view))
    governor = groups["cpu_governor_not_performance"]
    assert governor["count"] == 1024 and governor["hosts_text"] == "1024/1024 hosts h0001-h1024"
    assert governor["severity"] == "warning" and governor["title"] == "CPU governor not performance"
    assert len(governor["examples"]) == 3 and governor["examples"][0].startswith("h0001: 2 of 64 CPUs")
    assert page.count("CPU governor not performance</b>: 1024/1024 hosts h0001-h1024") == 1
    assert "**CPU governor not performance**: 1024/1024 hosts h0001-h1024" in text
    failing = groups["rdma_bw write"]
    assert failing["hosts_text"] == "3/1024 hosts h0099-h0101" and failing["severity"] == "error"
    info = groups["numa_unknown"]
    assert info["severity"] == "info" and info["examples"][0] == "h0001 mlx5_0 port 1: NUMA node of mlx5_0 unknown"
    assert '<span class="sev-info">info</span>' in page
    findings_html = page[page.index('id="findings"'):page.index('id="latency"')]
    assert ">pass<" not in findings_html  # an info finding is not a green pass
    assert list(groups) == [g["code"] for g in report_fleet.groups(view)]
    assert [g["severity"] for g in report_fleet.groups(view)] == ["error", "warning", "info"]


def test_no_python_reprs_and_no_scheduling_params_in_table_cells(ring_report):
    _view, page, text = ring_report
    for cell in _cells(page).cells:
        assert not re.search(r"\bNone\b|\bTrue\b|\bFalse\b|\{'|\['", cell), cell
    for line in text.splitlines():
        if line.startswith("|"):
            assert not re.search(r"\bNone\b|\{'|\['", line), line
    for param in ("round=", "step=", "tcp_port=", "server=", "client="):
        assert param not in page and param not in text, param


def test_latency_table_shows_p99_and_max_of_the_slowest(ring_report):
    view, page, text = ring_report
    assert len(view.latency) == 1024
    latency = page[page.index('id="latency"'):page.index('id="checks"')]
    assert "p99 (us)" in latency and "max (us)" in latency and "The 50 slowest of 1024 latency results" in latency
    assert latency.count("<td>9.5</td>") == 50  # lat_max_us of each shown row
    assert "<td>2.39</td>" in latency and "<td>1.9</td>" not in latency  # the slowest shown, the fastest not
    assert "| p99 | max |" in text


@pytest.mark.parametrize("hosts, drawn", [(64, True), (65, False)])
def test_matrix_only_up_to_64_hosts(hosts, drawn):
    _names, recs = mesh(hosts, rails=1)
    view = ReportView(recs, summary_of(recs, []))
    page = report_html.render(view)
    assert ('class="heatmap"' in page) is drawn
    assert ('class="worst-links"' in page) is not drawn
    [hm] = view.heatmaps
    assert (hm["cells"] is not None) is drawn and len(hm["worst"]) == 50


def test_grid_cell_is_the_nics_worst_fraction_and_partner():
    recs = [_pair("a", "b", 0, 95.0), _pair("b", "c", 0, 40.0), _pair("c", "a", 1, 80.0)]
    grid = report_fleet.host_rail_grid(recs)
    assert grid["hosts"] == ["a", "b", "c"] and grid["rails"] == ["0", "1"]
    assert grid["cells"][("b", "0")]["fraction"] == 0.4 and grid["cells"][("b", "0")]["partner"] == "c"
    assert grid["cells"][("b", "0")]["records"] == 2 and grid["cells"][("b", "0")]["bad"] == 1
    assert grid["cells"][("a", "0")]["fraction"] == 0.95 and ("b", "1") not in grid["cells"]
    assert grid["cells"][("a", "1")]["partner"] == "c"


def test_plain_text_never_shows_a_python_repr():
    assert report_model.plain(None) == "" and report_model.plain(True) == "yes"
    assert report_model.plain({"b": [1, 2], "a": None, "c": {"d": 1}}) == "b=1, 2, c=d=1"
    assert report_values.fmt_value({"x": 1}) == "x=1" and report_values.fmt_value(None) == "-"


def test_finding_groups_name_checks_by_kind_operation_and_stage_and_skip_discovery_summaries():
    pool = {"kind": "collective", "host": "h1", "peer": None, "verdict": "fail", "cause": "slow",
            "params": {"operation": "all_reduce", "mode": "pool"}, "evidence": ["mpirun " + "-x A=B " * 200]}
    bisect = {"kind": "collective", "host": "h5", "peer": "h1", "verdict": "fail", "cause": "slow",
              "params": {"operation": "all_reduce", "stage": "bisect"}}
    named = {"kind": "finding", "host": "h5", "peer": None, "verdict": "fail", "cause": "h5 is slow",
             "params": {"check": "collective", "stage": "bisect"}}
    governor = {"kind": "finding", "host": "h2", "peer": None, "verdict": "warn", "cause": "ondemand",
                "params": {"check": "discover", "code": "cpu_governor_not_performance"}}
    summed_up = {"kind": "discover", "host": "h2", "peer": None, "verdict": "warn", "cause": "ondemand",
                 "params": {}}
    alone = {"kind": "discover", "host": "h3", "peer": None, "verdict": "fail", "cause": "no tools", "params": {}}
    groups = report_fleet.finding_groups([pool, bisect, named, governor, summed_up, alone], 8)
    codes = sorted(g["code"] for g in groups)
    assert codes == ["collective all_reduce", "collective all_reduce bisect", "cpu_governor_not_performance",
                     "discover", "finding collective bisect"]
    # h2's discovery record only sums up its finding; h3's has none, so it stays
    assert [g["hosts"] for g in groups if g["code"] == "discover"] == [["h3"]]
    pool_group = [g for g in groups if g["code"] == "collective all_reduce"][0]
    assert len(pool_group["examples"][0]) == report_fleet.EXAMPLE_CHARS and pool_group["examples"][0].endswith("...")


def test_gpu_memory_records_get_their_own_matrix():
    def rec(memory=None):
        params = {"op": "write", "rail": 0}
        if memory:
            params.update(memory=memory, gpu=0)
        return {"kind": "rdma_bw", "host": "h1", "peer": "h2", "verdict": "pass", "params": params,
                "metrics": {"bw_gbps": 90.0, "expected_gbps": 100.0}}
    groups = report_model.bandwidth_groups([rec(), rec("cuda")])
    assert sorted(groups) == [("rdma_bw", "write"), ("rdma_bw", "write (GPU memory)")]
    assert [len(v) for _k, v in sorted(groups.items())] == [1, 1]


def _grid_titles(grid, marks):
    """{(host, rail): whether its cell has a tooltip} of the rendered grid."""
    import xml.etree.ElementTree as ET
    from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_svg
    root = ET.fromstring(report_svg.svg_host_rail_grid(grid, marks))
    out = {}
    for rect in root.iter("{http://www.w3.org/2000/svg}rect"):
        if rect.get("class") == "g":
            x, y = int(rect.get("x")), int(rect.get("y"))
            out[(x, y)] = rect.find("{http://www.w3.org/2000/svg}title") is not None
    return [has for _xy, has in sorted(out.items(), key=lambda item: (item[0][1], item[0][0]))]


def test_a_grid_past_its_tooltip_budget_tips_only_failing_unmeasured_and_culprit_cells(monkeypatch):
    from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_svg
    recs = [_pair("h%04d" % i, "h%04d" % (i + 1), 0, 40.0 if i == 2 else 95.0) for i in range(0, 8, 2)]
    recs.append(_pair("h0008", "h0009", 1, 95.0))
    grid = report_fleet.host_rail_grid(recs)
    marks = {"h0006": "bad host"}
    # rows h0000..h0009 by rail 0, 1: h0002-h0003 failed on rail 0, h0006 is marked, rail 1 measured only at the end
    assert len(grid["hosts"]) * len(grid["rails"]) == 20
    assert all(_grid_titles(grid, marks))
    monkeypatch.setattr(report_svg, "GRID_TIPPED_CELLS", 19)
    tipped = _grid_titles(grid, marks)
    rows = dict((host, tipped[2 * i:2 * i + 2]) for i, host in enumerate(grid["hosts"]))
    assert rows["h0002"] == [True, True] and rows["h0003"] == [True, True]      # failing, unmeasured
    assert rows["h0006"] == [True, True] and rows["h0008"] == [True, False]     # marked; measured, passing
    assert rows["h0000"] == [False, True] and rows["h0009"] == [True, False]    # passing, unmeasured; unmeasured, passing


def _grid_rows(grid, marks=None):
    """{row id: (cell count, label texts shown always, label texts shown only on the row's link)} of the grid."""
    import xml.etree.ElementTree as ET
    from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_svg
    svg = "{http://www.w3.org/2000/svg}"
    root = ET.fromstring(report_svg.svg_host_rail_grid(grid, marks))
    rows = {}
    for group in root.iter(svg + "g"):
        if group.get("class") != "h":
            continue
        assert group.get("id") not in rows
        texts = list(group.iter(svg + "text"))
        rows[group.get("id")] = (sum(1 for r in group.iter(svg + "rect") if r.get("class") == "g"),
                                 [t.text for t in texts if t.get("class") == "host"],
                                 [t.text for t in texts if t.get("class") == "t"])
    return rows


def test_every_host_row_of_a_large_grid_is_a_link_target_that_names_its_host(ring_report):
    view, page, _md = ring_report
    grid = report_fleet.grid(view)
    rows = _grid_rows(grid)
    assert sorted(rows) == sorted("host-%s" % h for h in grid["hosts"]) and len(rows) == 1024
    assert set(cells for cells, _shown, _hidden in rows.values()) == {RAILS}
    # a label every 16th row; the others carry theirs hidden, shown when a link opens the page on the row
    assert rows["host-h0001"] == (RAILS, ["h0001"], []) and rows["host-h0017"] == (RAILS, ["h0017"], [])
    assert rows["host-h0002"] == (RAILS, [], ["h0002"]) and rows["host-h0100"] == (RAILS, [], ["h0100"])
    assert ".t{display:none}g.h:target .t{display:inline" in page and "report.html#host-h0001" in page


def test_row_ids_stay_unique_and_whole_for_names_with_odd_characters():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_svg
    names = ["a b", "a%20b", "x/y", 'q"<&>', "node.example.com", "h\ud800"]
    anchors = [report_svg.host_anchor(n) for n in names]
    assert anchors == ["host-a%20b", "host-a%2520b", "host-x%2Fy", "host-q%22%3C%26%3E", "host-node.example.com",
                       "host-h%ED%A0%80"]
    # the page's text passes visible() (hidden characters shown); the raw picture is parsed here, without the surrogate
    named = names[:-1]
    recs = [_pair(host, named[(i + 1) % len(named)], 0, 95.0) for i, host in enumerate(named)]
    assert sorted(_grid_rows(report_fleet.host_rail_grid(recs))) == sorted(anchors[:-1])
