# -*- coding: utf-8 -*-
"""The 1,024- and 4,096-host x 8-rail reports in headless Chromium: the verdict and "What to do" are on screen without
scrolling at 1280x800, a link to a host's row (report.html#host-NAME) opens the page on that row with its name shown,
and the page is a few MB (no lab needed: synthetic ring records, the report renderers)."""
import json
import os
import re
import shutil
import subprocess

import pytest
from test_report_html_chromium import png_pixels  # the PNG decoder of the small-report test

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_render

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
RAILS = 8
BAD_HOST = "node0100"
BAD_NIC = ("node0700", 3)
WIDTH, HEIGHT = 1280, 800

pytestmark = [pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium)"),
              pytest.mark.full]


def _value(server, client, rail):
    if BAD_HOST in (server, client):
        return 30.0
    if (server, rail) == BAD_NIC or (client, rail) == BAD_NIC:
        return 45.0
    return 96.0


def _hosts(count):
    return ["node%04d" % i for i in range(1, count + 1)]


def _ring(hosts):
    recs = []
    for rail in range(RAILS):
        for i, server in enumerate(hosts):
            client = hosts[(i + 1) % len(hosts)]
            value = _value(server, client, rail)
            ok = value >= 90
            recs.append({"kind": "rdma_bw", "host": server, "peer": client,
                         "params": {"op": "write", "metric": "bw", "server": server, "client": client, "rail": rail,
                                    "round": i % 2, "step": 0, "device": "mlx5_%d" % rail,
                                    "peer_device": "mlx5_%d" % rail, "tcp_port": 18515 + rail},
                         "metrics": {"bw_gbps": value, "expected_gbps": 100.0}, "verdict": "pass" if ok else "fail",
                         "cause": None if ok else "%.0f Gb/s is below 90%% of 100 Gb/s" % value,
                         "fix": None if ok else "check the cable and port counters", "evidence": []})
    return history.normalize_records(recs)[0]


def _chromium(args, tmp_path, timeout=180):
    argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=%d,%d" % (WIDTH, HEIGHT),
            "--user-data-dir=%s" % (tmp_path / "chromium-profile")] + args
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=timeout)


# Measures where the top section lies in the laid-out page; only the test's copy of the page carries it.
_PROBE = """<script>
(function () {
  function box(el) { var r = el.getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; }
  var heading = document.getElementById("what-to-do");
  var out = {verdict: box(document.getElementById("verdict")), what: box(heading),
             list: box(heading.nextElementSibling), items: heading.nextElementSibling.children.length,
             viewport: window.innerHeight, width: window.innerWidth, scrolled: window.scrollY};
  document.body.setAttribute("data-probe", JSON.stringify(out));
})();
</script>"""


@pytest.fixture(scope="module", name="report", params=[1024, 4096])
def _report(request, tmp_path_factory):
    hosts = _hosts(request.param)
    records = _ring(hosts)
    summary = report_model.summarize(records, run_id="scale-%d" % len(hosts), generated="2026-11-25T00:00:00Z")
    page = report_render.render_formats(["html"], records, summary)["html"]
    directory = tmp_path_factory.mktemp("scale")
    path = directory / "report.html"
    path.write_text(page, encoding="utf-8")
    return hosts, path, page, summary


def test_page_is_a_few_mb_and_names_the_culprits(report):
    hosts, path, page, summary = report
    assert os.path.getsize(str(path)) <= 5 * 1000 * 1000
    assert "<script" not in page
    assert [c["host"] for c in summary["culprits"]][:2] == [BAD_HOST, BAD_NIC[0]]
    assert page.count('<rect class="g"') == len(hosts) * RAILS


def test_top_section_is_visible_without_scrolling(report, tmp_path):
    _hosts_, _path, page, _summary = report
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", _PROBE + "</body>"), encoding="utf-8")
    dom = _chromium(["--dump-dom", "file://%s" % probed], tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    match = re.search(r'data-probe="([^"]*)"', dom.stdout)
    assert match, dom.stdout[:2000]
    probe = json.loads(match.group(1).replace("&quot;", '"'))
    # --dump-dom lays the page out in a window of this size less its frame: the viewport is at most 800 px high
    assert probe["width"] == WIDTH and 600 <= probe["viewport"] <= HEIGHT and probe["scrolled"] == 0, probe
    assert probe["items"] >= 2  # the bad host and the bad NIC
    assert 0 <= probe["verdict"]["top"] < probe["what"]["top"] < probe["list"]["bottom"] <= probe["viewport"], probe


def test_screenshot_shows_the_verdict_banner_at_the_top(report, tmp_path):
    _hosts_, path, _page, _summary = report
    shot = tmp_path / "shot.png"
    res = _chromium(["--screenshot=%s" % shot, "file://%s" % path], tmp_path)
    assert res.returncode == 0 and shot.exists(), res.stderr[-2000:]
    width, height, rows = png_pixels(str(shot))
    assert (width, height) == (WIDTH, HEIGHT)
    fail_red = (0xc6, 0x28, 0x28)  # .badge.fail
    banner = [y for y, row in enumerate(rows) for px in row if all(abs(a - b) <= 10 for a, b in zip(px, fail_red))]
    assert len(banner) > 200, "no FAIL badge on screen"
    assert max(banner) < HEIGHT // 4, "the verdict is not at the top"


# Once the page has loaded and scrolled to its link's row: where that row is, and whether its name and another
# unlabelled row's name are drawn.
_ROW_PROBE = """<script>
window.addEventListener("load", function () { setTimeout(function () {
  function shown(id) { return getComputedStyle(document.getElementById(id).querySelector("text.t")).display; }
  var row = document.getElementById("%s").getBoundingClientRect();
  document.body.setAttribute("data-probe", JSON.stringify({top: row.top, bottom: row.bottom, scrolled: window.scrollY,
    viewport: window.innerHeight, target: shown("%s"), other: shown("%s")}));
}, 50); });
</script>"""


def test_a_link_to_a_host_opens_the_page_on_its_named_row(report, tmp_path):
    hosts, _path, page, _summary = report
    # rows near the foot of the last block, below the first screen, neither one with a label of its own (one every
    # 16 rows)
    wanted, other = hosts[-3], hosts[-2]
    assert 'id="host-%s"><text class="t"' % wanted in page and 'id="host-%s"><text class="t"' % other in page
    probed = tmp_path / "report.html"
    probed.write_text(page.replace("</body>", _ROW_PROBE % ("host-" + wanted, "host-" + wanted, "host-" + other)
                                   + "</body>"), encoding="utf-8")
    dom = _chromium(["--virtual-time-budget=5000", "--dump-dom", "file://%s#host-%s" % (probed, wanted)], tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    match = re.search(r'data-probe="([^"]*)"', dom.stdout)
    assert match, dom.stdout[-2000:]
    probe = json.loads(match.group(1).replace("&quot;", '"'))
    # the row lies below the first screen, and the page opened scrolled to it
    assert probe["top"] + probe["scrolled"] > probe["viewport"], probe
    assert 0 <= probe["top"] < probe["bottom"] <= probe["viewport"], probe
    assert probe["target"] != "none" and probe["other"] == "none", probe
