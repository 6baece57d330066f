# -*- coding: utf-8 -*-
"""What tells checks and hosts apart in the report: operations, variants, node sets and short host labels."""
import re
import xml.etree.ElementTree as ET

from hypothesis import given, strategies as st

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_collectives
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_html
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_identity as ident
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_markdown
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_svg

SVG = "{http://www.w3.org/2000/svg}"
FQDN = ["gpu-h100-node-%03d.rack%02d.dc-west.example.com" % (i, 1 + i // 4) for i in range(1, 9)]


def _bw(host, peer, value, **params):
    return {"kind": "rdma_bw", "host": host, "peer": peer, "verdict": "pass",
            "params": dict({"op": "write", "rail": 0, "device": "mlx5_0", "size": 65536}, **params),
            "metrics": {"bw_gbps": value, "expected_gbps": 100.0}}


def test_the_operation_of_every_kind():
    assert ident.op_of({"kind": "rdma_bw", "params": {"op": "read"}}) == "read"
    assert ident.op_of({"kind": "collective", "params": {"operation": "all_gather", "library": "nccl"}}) == \
        "all_gather"
    assert ident.op_of({"kind": "x", "params": {"test": "alltoall"}}) == "alltoall"
    assert ident.op_of({"kind": "discover", "params": {"op": None, "operation": ""}}) == "discover"


def test_records_of_one_check_have_no_variant_and_different_checks_are_named_by_what_differs():
    one = [_bw("a", "b", 90.0, round=1, tcp_port=1), _bw("a", "b", 91.0, round=2, tcp_port=2, size=65536.0)]
    assert ident.variants(one) == ["", ""]   # scheduling differs, and 65536 is 65536.0
    two = [_bw("a", "b", 90.0), _bw("a", "b", 91.0, size=4096, bidirectional=True), _bw("a", "b", 92.0, qps=4)]
    assert ident.variants(two) == ["size=65536", "size=4096 bidirectional=yes", "size=65536 qps=4"]
    assert ident.variants(two, skip=("size",)) == ["", "bidirectional=yes", "qps=4"]
    # a param set to False is the same as one not set (the producers leave False options out)
    assert ident.variants([_bw("a", "b", 1.0), _bw("a", "b", 1.0, bidirectional=False)]) == ["", ""]


def test_the_best_size_of_an_all_sizes_run_is_a_result_not_another_check():
    """perftest -a: params.size is the size of the row with the best rate, which differs from pair to pair."""
    records = [_bw("a", "b", 90.0, all_sizes=True, size=4194304), _bw("b", "c", 91.0, all_sizes=True, size=8388608),
               _bw("a", "b", 92.0, all_sizes=True, size=8388608, round=3)]
    assert ident.variants(records) == ["", "", ""]
    [hm] = report_model.heatmaps(records)
    assert hm["title"] == "rdma_bw write" and hm["links"] == 3


_PARAMS = st.fixed_dictionaries({}, optional={"size": st.sampled_from([2, 4096, 65536, 4096.0]),
                                              "qps": st.integers(1, 3), "reverse": st.booleans(),
                                              "op": st.sampled_from(["write", "read"])})


@given(st.lists(_PARAMS, min_size=1, max_size=6))
def test_variants_tell_exactly_the_different_checks_apart(params):
    records = [{"kind": "rdma_bw", "params": p} for p in params]
    texts = ident.variants(records)
    for i, first in enumerate(records):
        for j, second in enumerate(records):
            same = ident.identity(first) == ident.identity(second)
            assert (texts[i] == texts[j]) == same


def test_node_sets_as_ranges_or_a_digest_that_still_tells_them_apart():
    assert ident.node_set_text(["node3", "node1", "node2", "x"]) == "node1-node3, x"
    many = ["host-%s.example.com" % word for word in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot",
                                                      "golf", "hotel", "india", "juliet")]
    text = ident.node_set_text(many)
    assert len(text) < 100 and text.startswith("host-alpha.example.com .. host-juliet.example.com (10 hosts, ")
    assert ident.node_set_text(many[:-1] + ["host-kilo.example.com"]) != text


def test_a_check_measured_two_ways_gets_two_matrices():
    records = [_bw("a", "b", 90.0), _bw("b", "a", 95.0), _bw("a", "b", 40.0, size=4096),
               _bw("a", "b", 30.0, rail=1, device="mlx5_1")]   # another rail: the cell's worst, one matrix
    maps = dict((hm["title"], hm) for hm in report_model.heatmaps(history.normalize_records(records)[0]))
    assert sorted(maps) == ["rdma_bw write size=4096", "rdma_bw write size=65536"]
    cell = maps["rdma_bw write size=65536"]["cells"][("b", "a")]
    assert (cell["value"], cell["count"]) == (30.0, 2)
    assert maps["rdma_bw write size=4096"]["cells"][("b", "a")]["value"] == 40.0
    svg = report_svg.svg_heatmap(maps["rdma_bw write size=65536"])
    assert "the worst of 2 records of this link (rails, devices)" in svg
    text = report_markdown.render_markdown(records, report_model.summarize(records))
    assert "1 cells hold several records of their link (rails, devices): each shows the worst" in text


def test_collective_lines_of_different_node_sets_stay_apart():
    def run(hosts, busbw):
        return {"kind": "collective", "host": hosts[0], "verdict": "pass",
                "params": {"library": "nccl", "operation": "all_reduce", "hosts": hosts, "stage": "bisect"},
                "metrics": {"rows": [{"bytes": 1024, "busbw_gbs": busbw}]}}
    series = report_model.collective_series([run(["n1", "n2"], 10.0), run(["n3", "n4"], 20.0),
                                             run(["n1", "n2", "n3", "n4"], 30.0)])
    assert [(s["name"], s["points"]) for s in series] == [
        ("nccl all_reduce 2 nodes hosts=n1, n2", [(1024, 10.0)]),
        ("nccl all_reduce 2 nodes hosts=n3, n4", [(1024, 20.0)]),
        ("nccl all_reduce 4 nodes", [(1024, 30.0)])]


def test_per_node_runs_are_a_line_each_and_the_chart_keeps_the_lowest():
    """Per-node mode: one run per node and operation. Each node is a line of its own (they were one zigzag line);
    a large fleet's chart draws the CHART_LINES lowest, and says so."""
    def node_run(node, busbw):
        return {"kind": "collective", "host": node, "verdict": "pass",
                "params": {"library": "nccl", "operation": "all_reduce", "hosts": [node], "mode": "per_node"},
                "metrics": {"rows": [{"bytes": 1 << 20, "busbw_gbs": busbw / 2}, {"bytes": 1 << 26, "busbw_gbs": busbw}]}}
    nodes = ["node%02d" % i for i in range(40)]
    records = [node_run(node, 100.0 + i) for i, node in enumerate(nodes)]
    series = report_model.collective_series(records)
    assert [s["name"] for s in series] == ["nccl all_reduce %s" % node for node in nodes]
    shown = report_collectives.lowest_series(series)
    assert [s["name"] for s in shown] == ["nccl all_reduce %s" % node for node in nodes[:report_collectives.CHART_LINES]]
    summary = report_model.summarize(records)
    page = report_html.render_html(records, summary)
    assert page.count('<polyline class="series"') == report_collectives.CHART_LINES
    assert "The 16 of 40 lines with the lowest bus bandwidth" in page
    text = report_markdown.render_markdown(records, summary)
    assert "The 16 of 40 series with the lowest bus bandwidth (all in results.json)." in text
    assert "nccl all_reduce node15 |" in text and "nccl all_reduce node16 |" not in text


def test_chart_legend_names_are_whole():
    name = "hccl all_reduce 1024 nodes hosts=gpu-h100-node-0001-gpu-h100-node-1024"
    svg = report_svg.svg_busbw_chart([{"name": name, "points": [(1024, 1.0), (2048, 2.0)], "verdict": "fail"}])
    root = ET.fromstring(svg)
    legend = [el.text for el in root.iter(SVG + "text") if el.get("class") == "legend"]
    assert legend == [name + " (fail)"]
    assert int(root.get("width")) >= 60 + 30 + 7 * len(legend[0])


# --------------------------------------------------------------------------
# host names on the pictures' axes
# --------------------------------------------------------------------------

def test_short_names_are_the_fewest_leading_labels_that_tell_hosts_apart():
    labels = ident.short_names(FQDN + ["gpu-h100-node-001.rack09.dc-east.example.com", "10.0.0.1", "10.0.0.2",
                                       "login", "login.example.com"])
    assert labels[FQDN[1]] == "gpu-h100-node-002"
    assert labels[FQDN[0]] == "gpu-h100-node-001.rack01"   # another node-001 sits in rack09
    assert labels["gpu-h100-node-001.rack09.dc-east.example.com"] == "gpu-h100-node-001.rack09"
    assert labels["10.0.0.1"] == "10.0.0.1" and labels["login"] == "login"
    assert labels["login.example.com"] == "login.example"   # "login" alone is another host


@given(st.sets(st.lists(st.sampled_from(["a", "b", "ab", "10", "x-1"]), min_size=1, max_size=4).map(".".join),
               min_size=1, max_size=12))
def test_short_names_are_distinct_prefixes_of_whole_labels(hosts):
    labels = ident.short_names(hosts)
    assert len(set(labels.values())) == len(hosts)
    for host, label in labels.items():
        assert host == label or host.startswith(label + ".")


def _label_fits(root, cls, labels):
    """Each label of class ``cls`` is a short name with its full name as tooltip, and the room left of x holds it."""
    seen = {}
    for group in root.iter(SVG + "g"):
        title, text = group.find(SVG + "title"), group.find(SVG + "text")
        if text is not None and text.get("class") == cls:
            seen[text.text] = title.text
            if cls != "col":
                assert float(text.get("x")) >= report_svg.CHAR_W * len(text.text) - 1, text.text
    assert seen == dict((label, host) for host, label in labels.items()), seen
    return seen


def test_heat_map_of_fqdn_hosts_labels_each_host_whole_and_apart():
    records = [_bw(a, b, 90.0) for a in FQDN for b in FQDN if a != b]
    [hm] = report_model.heatmaps(records)
    root = ET.fromstring(report_svg.svg_heatmap(hm))
    labels = ident.short_names(FQDN)
    assert sorted(labels.values()) == ["gpu-h100-node-%03d" % i for i in range(1, 9)]
    _label_fits(root, "row", labels)
    _label_fits(root, "col", labels)
    first_cell = min(float(r.get("x")) for r in root.iter(SVG + "rect") if (r.get("class") or "").startswith("cell"))
    assert first_cell >= 12 + report_svg.CHAR_W * len("gpu-h100-node-001")
    # column labels lean right as they rise (60 degrees): the last one still ends inside the picture
    last = max(float(re.match(r"translate\(([\d.]+),", t.get("transform")).group(1))
               for t in root.iter(SVG + "text") if t.get("class") == "col")
    assert last + report_svg.CHAR_W * len("gpu-h100-node-008") / 2 <= int(root.get("width"))


def test_host_rail_grid_of_fqdn_hosts_labels_each_host_apart():
    records = [_bw(FQDN[i], FQDN[(i + 1) % 8], 90.0) for i in range(8)]
    view = report_model.ReportView(records, report_model.summarize(records))
    from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_fleet
    root = ET.fromstring(report_svg.svg_host_rail_grid(report_fleet.grid(view)))
    _label_fits(root, "host", ident.short_names(FQDN))


def test_a_thousand_fqdn_hosts_in_the_grid_keep_their_labels_whole():
    hosts = ["gpu-h100-node-%04d.rack%02d.dc-west.example.com" % (i, i // 32) for i in range(1024)]
    cells = dict(((h, "0"), {"fraction": 0.95, "value": 95.0, "expected": 100.0, "partner": "x", "check": "c",
                             "records": 1, "bad": 0, "verdict": "pass"}) for h in hosts)
    svg = report_svg.svg_host_rail_grid({"hosts": hosts, "rails": ["0"], "cells": cells, "relative": False})
    root = ET.fromstring(svg)
    shown = [t for t in root.iter(SVG + "text") if t.get("class") == "host"]
    assert len(shown) == 1024 // 16 and all(re.match(r"^gpu-h100-node-\d{4}$", t.text) for t in shown)
    for text in shown:
        assert float(text.get("x")) % int(root.get("width")) >= report_svg.SMALL_CHAR_W * len(text.text) - 1


def test_markdown_and_tables_show_names_whole():
    records = [_bw(FQDN[0], FQDN[1], 40.0), _bw(FQDN[1], FQDN[0], 95.0)]
    records[0]["verdict"] = "fail"
    text = report_markdown.render_markdown(records, report_model.summarize(records))
    assert "| sender \\ receiver | %s | %s |" % (FQDN[0], FQDN[1]) in text
    assert "| %s | 0%%" not in text and "| %s | " % FQDN[0] in text
