# -*- coding: utf-8 -*-
"""The report's data direction: 'a->b' means a sends to b; heat-map rows send, columns receive.

A pair record is filed under the server (``host``) with the client as
``peer``; write/send/atomic/iperf3 data flows client -> server, read (and
iperf3 reverse) server -> client, bidirectional and ping-pong latency both ways.
"""
import re

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import record_flow
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_html
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_markdown
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_svg
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import pair_analysis


def _rec(op="write", kind="rdma_bw", host="h1", peer="h2", value=40.0, **params):
    params = dict({"op": op, "device": "mlx5_0"}, **params)
    return {"kind": kind, "host": host, "peer": peer, "params": params,
            "metrics": {"bw_gbps": value, "expected_gbps": 100.0}, "verdict": "fail" if value < 90 else "pass"}


@pytest.mark.parametrize("record, label", [
    (_rec("write"), "h2->h1"),
    (_rec("send"), "h2->h1"),
    (_rec("atomic"), "h2->h1"),
    (_rec("read"), "h1->h2"),
    (_rec("tcp", kind="tcp_bw"), "h2->h1"),
    (_rec("tcp", kind="tcp_bw", reverse=True), "h1->h2"),
    (_rec("tcp", kind="tcp_bw", bidirectional=True), "h2<->h1"),
    (_rec("write", bidirectional=True), "h2<->h1"),
    (_rec("write", kind="rdma_lat", metric="lat"), "h2<->h1"),  # ping-pong
    (_rec("read", kind="rdma_lat", metric="lat"), "h1->h2"),
    (_rec("write", kind="rdma_bw_retest"), "h2->h1"),
    (_rec("write", server="h2", client="h1"), "h1->h2"),  # a record that says its host is the client
    (dict(_rec("write"), kind="finding"), "h1<->h2"),  # a link, no direction
    (_rec("write", kind="custom_bw"), "h1<->h2"),
    (dict(_rec("write"), peer=None), "h1"),
])
def test_flow_label_says_who_sends(record, label):
    assert record_flow.flow_label(record) == label


def test_a_regression_record_follows_the_kind_it_regressed():
    record = dict(_rec("read"), kind="regression")
    record["params"]["check_kind"] = "rdma_bw"
    assert record_flow.flow_label(record) == "h1->h2"


def test_check_name_points_from_sender_to_receiver():
    assert report_model.check_name(_rec("write")) == "rdma_bw h2->h1 [device=mlx5_0 op=write]"
    assert report_model.check_name(_rec("read")) == "rdma_bw h1->h2 [device=mlx5_0 op=read]"


def test_write_lands_in_the_client_row_and_read_in_the_server_row():
    maps = dict((hm["op"], hm) for hm in report_model.heatmaps([_rec("write"), _rec("read", value=95.0)]))
    assert list(maps["write"]["cells"]) == [("h2", "h1")]  # row: sender h2 (client), column: receiver h1
    assert list(maps["read"]["cells"]) == [("h1", "h2")]  # the client h2 reads h1's memory: h1 sends
    assert maps["write"]["flows"] == ["client -> server"] and maps["read"]["flows"] == ["server -> client"]


def test_both_ways_and_unknown_directions_fill_both_cells():
    [hm] = report_model.heatmaps([_rec("tcp", kind="tcp_bw", bidirectional=True)])
    assert sorted(hm["cells"]) == [("h1", "h2"), ("h2", "h1")] and hm["flows"] == ["both ways"]
    hm["cells"][("h1", "h2")]["count"] = 7
    assert hm["cells"][("h2", "h1")]["count"] == 1  # two cells, not one shared dict
    [hm] = report_model.heatmaps([_rec("write", kind="custom_bw")])
    assert sorted(hm["cells"]) == [("h1", "h2"), ("h2", "h1")] and hm["flows"] == ["direction unknown"]


def _side(role, host, peer, value=None):
    side = {"role": role, "host": host, "peer": peer, "round": 0, "step": 0, "rail": 0, "test": "write",
            "metric": "bw", "device": "mlx5_0", "verdict": "pass", "cmd": ["ib_write_bw", "-d", "mlx5_0"]}
    if value is not None:
        side["metrics"] = {"bw_gbps": value}
    return side


def test_a_one_way_fault_of_a_sender_shows_in_its_row():
    """h2 transmits badly: every write h2 sends as client is slow, whoever serves it (the issue's case)."""
    sides = []
    for server, client in (("h1", "h2"), ("h2", "h1"), ("h3", "h2"), ("h2", "h3"), ("h1", "h3"), ("h3", "h1")):
        value = 30.0 if client == "h2" else 95.0
        sides += [_side("server", server, client), _side("client", client, server, value)]
    records = pair_analysis.pair_records(sides, family="rdma", expected_gbps=100.0)
    slow = [r for r in records if r["verdict"] == "fail"]
    assert sorted((r["host"], r["peer"]) for r in slow) == [("h1", "h2"), ("h3", "h2")]  # host = server
    assert all(e.startswith("client h2: ib_write_bw") for r in slow for e in r["evidence"][:1])
    [hm] = report_model.heatmaps(records)
    bad = sorted(key for key, cell in hm["cells"].items() if cell["verdict"] == "fail")
    assert bad == [("h2", "h1"), ("h2", "h3")]  # the row of the sender h2
    text = report_markdown.render_markdown(records, report_model.summarize(records))
    assert "| sender \\ receiver | h1 | h2 | h3 |" in text
    assert "| h2 | 30 (30%) **!** |  | 30 (30%) **!** |" in text
    assert "Rows send, columns receive (row -> column); data flows client -> server." in text


def test_html_says_rows_send_and_draws_the_cell_in_the_sender_row():
    records = [_rec("write")]
    page = report_html.render_html(records, report_model.summarize(records))
    assert "Rows send, columns receive: write, send" in page and "host (client)" not in page
    assert "rows send, columns receive; client -&gt; server</figcaption>" in page
    assert "rdma_bw h2-&gt;h1 [device=mlx5_0 op=write]" in page
    [hm] = report_model.heatmaps(records)
    svg = report_svg.svg_heatmap(hm, cell=44)
    [(x, y)] = [(int(a), int(b)) for a, b in re.findall(r'<rect class="cell[^"]*" x="(\d+)" y="(\d+)"', svg)]
    label_w = int(re.search(r'<text class="row" x="(\d+)" y="[\d.]+" text-anchor="end">h1</text>', svg).group(1)) + 6
    assert (x, y) == (label_w, label_w + 44)  # hosts [h1, h2]: row 1 (h2 sends), column 0 (h1 receives)


def test_regressions_table_names_the_direction():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline
    hist = [dict(_rec("write", value=95.0), run_id="r%d" % i, time="2026-01-0%dT00:00:00.000000Z" % i,
                 verdict="pass") for i in (1, 2, 3)]
    compared = baseline.compare([_rec("write", value=40.0)], hist)
    summary = report_model.summarize(compared)
    text = report_markdown.render_markdown(compared, summary)
    assert "| rdma_bw h2->h1 [device=mlx5_0 op=write] | bw_gbps |" in text
