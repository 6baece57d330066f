# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report's GPU x NIC table (issue 37 §1): GPU-memory against host-memory bandwidth of every GPU tested."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_gpu
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_html
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_json
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_markdown
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model


def _host(host, peer, rail, gbps):
    return {"kind": "rdma_bw", "host": host, "peer": peer, "params": {"op": "write", "rail": rail,
                                                                      "device": "mlx5_%d" % rail,
                                                                      "peer_device": "mlx5_%d" % rail},
            "metrics": {"bw_gbps": gbps}, "verdict": "pass"}


def _cuda(host, peer, rail, gpu, peer_gpu, gbps, retest=False):
    rec = _host(host, peer, rail, gbps)
    rec["params"].update(memory="cuda", gpu=gpu, peer_gpu=peer_gpu, gpu_pci="0000:%02x:00.0" % (0x80 + gpu),
                         peer_gpu_pci="0000:%02x:00.0" % (0x80 + peer_gpu),
                         gpu_path="same_switch" if gpu < 2 else "same_numa", peer_gpu_path="same_numa")
    if retest:
        rec["params"]["retest"] = True
        rec["kind"] = "rdma_bw_retest"
    return rec


# h1's GPU 2 (rail 0) is slow and named; its retest (20 Gb/s) is left out of the table
RECORDS = [_host("h1", "h2", 0, 96.0), _host("h1", "h2", 1, 90.0),
           _cuda("h1", "h2", 0, 0, 0, 94.0), _cuda("h1", "h2", 1, 1, 1, 88.0), _cuda("h1", "h2", 0, 2, 2, 30.0),
           _cuda("h1", "h2", 0, 2, 2, 20.0, retest=True),
           {"kind": "finding", "host": "h1", "peer": None, "verdict": "fail",
            "params": {"check": "rdma_perf", "finding": "gpudirect_gpu_slow", "rail": 0, "gpu": 2}}]


def _render(render, records):
    return render(records, report_model.summarize(records))


def test_the_view_model_has_a_row_per_host_and_gpu_and_a_cell_per_rail():
    table = report_gpu.gpu_table(RECORDS)
    assert table["rails"] == [0, 1]
    assert [(r["host"], r["gpu"], r["gpu_pci"], r["gpu_path"]) for r in table["rows"]] == [
        ("h1", 0, "0000:80:00.0", "same_switch"), ("h1", 1, "0000:81:00.0", "same_switch"),
        ("h1", 2, "0000:82:00.0", "same_numa"), ("h2", 0, "0000:80:00.0", "same_numa"),
        ("h2", 1, "0000:81:00.0", "same_numa"), ("h2", 2, "0000:82:00.0", "same_numa")]
    slow = table["rows"][2]["cells"]
    assert list(slow) == [0]
    assert slow[0] == {"device": "mlx5_0", "cuda_gbps": 30.0, "host_gbps": 96.0, "ratio": 0.3125, "pairs": 1,
                       "slow": True}
    assert table["rows"][1]["cells"][1]["ratio"] == round(88.0 / 90.0, 4)
    # the peer's GPU 2 took part in the slow pair, but no finding names it
    assert table["rows"][5]["cells"][0]["slow"] is False


def test_markdown_html_and_json_show_the_table():
    page = _render(report_markdown.render_markdown, RECORDS)
    section = page.split("## GPUDirect RDMA: GPU memory against host memory (6 GPUs)", 1)[1].split("##", 1)[0]
    assert "| host | GPU | PCI | path to NIC | rail 0 | rail 1 |" in section
    assert "| h1 | 2 | 0000:82:00.0 | same_numa | GPU 30 / host 96 Gb/s (31%) SLOW | - |" in section
    assert "| h1 | 1 | 0000:81:00.0 | same_switch | - | GPU 88 / host 90 Gb/s (98%) |" in section
    html = _render(report_html.render_html, RECORDS)
    assert "GPUDirect RDMA: GPU memory against host memory (6 GPUs)" in html
    assert '<tr class="fail"><td>h1</td><td>2</td><td>0000:82:00.0</td><td>same_numa</td>' \
        '<td>GPU 30 / host 96 Gb/s (31%) SLOW</td><td>-</td></tr>' in html
    data = json.loads(report_json.render(report_model.ReportView(RECORDS, report_model.summarize(RECORDS))))
    assert data["gpus"]["rows"][2]["cells"]["0"]["cuda_gbps"] == 30.0


def test_no_gpu_memory_results_no_section():
    records = RECORDS[:2]
    assert "GPUDirect RDMA" not in _render(report_markdown.render_markdown, records)
    assert "GPUDirect RDMA" not in _render(report_html.render_html, records)
    assert report_gpu.gpu_table(records) == {"rails": [], "rows": []}
    assert "gpus" not in json.loads(report_json.render(report_model.ReportView(records, report_model.summarize(
        records))))


def test_a_large_fleet_shows_the_worst_gpus_first():
    records = [_host("h%d" % n, "h%d" % (n + 1), 0, 96.0) for n in range(80)] + [
        _cuda("h%d" % n, "h%d" % (n + 1), 0, 0, 0, 90.0 - (n == 41) * 50.0) for n in range(80)]
    table = report_gpu.gpu_table(records)
    rows, note = report_gpu.shown_rows(table)
    assert len(table["rows"]) == 81 and len(rows) == report_gpu.ROWS_SHOWN and note == ", the 64 worst shown"
    # the pair h41-h42 is slow: both of its GPUs first, the rest by ratio
    assert [(r["host"], r["gpu"]) for r in rows[:2]] in ([("h41", 0), ("h42", 0)], [("h42", 0), ("h41", 0)])
    page = _render(report_markdown.render_markdown, records)
    assert "## GPUDirect RDMA: GPU memory against host memory (81 GPUs, the 64 worst shown)" in page
