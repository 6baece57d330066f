# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure renderers of a commcheck run: summary, Markdown, self-contained HTML
(inline-SVG heat maps and charts), results.json, JUnit XML, Prometheus text.

Every function takes the run's records (the results contract of
docs/DEVELOPING.md, optionally with ``baseline``/``regression`` from
baseline.py) and returns text; nothing here touches files.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import json
import math
import re
import xml.etree.ElementTree as ET
from html import escape as _html_escape

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline as _baseline
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import run_verdict as _run_verdict

RESULTS_SCHEMA = 1
_NOT_A_HOST = ("*", "-", "all", "pool")
VERDICT_ORDER = ("error", "fail", "flaky", "warn", "skipped", "pass")
BAD = ("fail", "error")
_BW_PREFERENCE = ("bw_gbps", "bw_avg_gbps", "received_gbps", "sent_gbps", "bw_peak_gbps")
_LAT_PREFERENCE = ("lat_us", "t_typical_us", "t_avg_us", "t_min_us")
_CONTROL_CHARS = re.compile(u"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

FORMATS = ("md", "html", "json", "junit", "prom")
FILE_NAMES = {"md": "report.md", "html": "report.html", "json": "results.json", "junit": "junit.xml",
              "prom": "commcheck.prom"}
# Arguments of the clusterops.commcheck.report action (shared with its documentation module).
REPORT_ARGUMENT_SPEC = dict(
    records=dict(type="list", elements="dict", default=[]),
    report_dir=dict(type="path", required=True),
    run_subdir=dict(type="bool", default=False),
    run_id=dict(type="str"),
    history_dir=dict(type="path"),
    history_run=dict(type="str"),
    compare=dict(type="bool", default=True),
    baseline_runs=dict(type="int", default=5),
    baseline_run=dict(type="str"),
    baseline_max_age=dict(type="str"),
    min_runs=dict(type="int", default=1),
    threshold=dict(type="float", default=0.2),
    thresholds=dict(type="dict", default={}),
    ignore_params=dict(type="list", elements="str",
                       default=["round", "step", "tcp_port", "server", "client", "duration", "iterations",
                                "attempt", "retest"]),
    formats=dict(type="list", elements="str", choices=list(FORMATS), default=list(FORMATS)),
    regression_fails=dict(type="bool", default=True),
)


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

def _num(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value):
        return None
    return float(value)


def _fmt(value, digits=3):
    number = _num(value)
    if number is None:
        return "-" if value is None else str(value)
    if number == 0:
        return "0"
    if abs(number) >= 1000:
        return "%.0f" % number
    return "%.*g" % (digits, number)


def _pct(change):
    number = _num(change)
    return "-" if number is None else "%+.1f%%" % (number * 100)


def _esc(value):
    return _html_escape("" if value is None else str(value), quote=True)


def _md(value):
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ").strip() or "-"


def _params_text(params, skip=()):
    params = params or {}
    return " ".join("%s=%s" % (k, params[k]) for k in sorted(params)
                    if k not in skip and not isinstance(params[k], (dict, list)))


def check_name(record):
    """Human name of a check: 'rdma_bw a->b [device=mlx5_0 op=write]'."""
    host, peer = record.get("host"), record.get("peer")
    text = "%s %s" % (record.get("kind"), host if not peer else "%s->%s" % (host, peer))
    params = _params_text(record.get("params"), skip=_baseline.DEFAULT_IGNORE_PARAMS)
    return "%s [%s]" % (text, params) if params else text


def bw_metric(metrics):
    """(name, value) of the bandwidth metric of a record, or (None, None)."""
    metrics = metrics or {}
    for name in _BW_PREFERENCE:
        if _num(metrics.get(name)) is not None:
            return name, _num(metrics[name])
    for name in sorted(metrics):
        if name.endswith("_gbps") and not name.startswith("expected") and _num(metrics[name]) is not None:
            return name, _num(metrics[name])
    return None, None


def lat_metric(metrics):
    metrics = metrics or {}
    for name in _LAT_PREFERENCE:
        if _num(metrics.get(name)) is not None:
            return name, _num(metrics[name])
    return None, None


def _op(record):
    params = record.get("params") or {}
    return str(params.get("op") or params.get("test") or params.get("tool") or record.get("kind"))


def _size(record):
    params = record.get("params") or {}
    for key in ("size", "bytes", "msg_size", "message_size"):
        value = _num(params.get(key))
        if value is not None:
            return value
    return None


def _sorted_records(records):
    rank = dict((v, i) for i, v in enumerate(VERDICT_ORDER))
    return sorted(records, key=lambda r: (rank.get(r.get("verdict"), 0), str(r.get("kind")),
                                          str(r.get("host")), str(r.get("peer") or "")))


def is_retest(record):
    """A re-run of a failing check (params.retest) or the summary of the retests."""
    params = record.get("params") or {}
    kind = str(record.get("kind", ""))
    return bool(record.get("retest") or params.get("retest") or kind.endswith("_retest") or kind == "retest_summary")


def _is_retest_run(record):
    """A re-measurement (not the retest summary): kept out of matrices, tables and metric series."""
    return bool((record.get("params") or {}).get("retest") or record.get("retest"))


# --------------------------------------------------------------------------
# summary
# --------------------------------------------------------------------------

def summarize(records, run_id=None, generated=None, report_dir=None):
    """Counts, bad hosts/links and regressions of a run (the set_stats payload)."""
    records = [r for r in records or [] if r.get("kind") not in ("summary",)]
    checks = [r for r in records if r.get("kind") != "regression"]
    counts = dict((v, 0) for v in VERDICT_ORDER)
    by_kind = {}
    for record in checks:
        verdict = record.get("verdict")
        counts[verdict] = counts.get(verdict, 0) + 1
        kind_counts = by_kind.setdefault(record.get("kind"), {})
        kind_counts[verdict] = kind_counts.get(verdict, 0) + 1
    bad_links, peers_of, bad_peers_of, bad_hosts = set(), {}, {}, set()
    for record in checks:
        host, peer = record.get("host"), record.get("peer")
        if _is_retest_run(record):
            # a retest pairs a suspect with a known-good partner on purpose: evidence, not another bad link
            continue
        if peer:
            for a, b in ((host, peer), (peer, host)):
                peers_of.setdefault(a, set()).add(b)
            if record.get("verdict") in BAD:
                bad_links.add(tuple(sorted((host, peer))))
                for a, b in ((host, peer), (peer, host)):
                    bad_peers_of.setdefault(a, set()).add(b)
        elif record.get("verdict") in BAD and host and host not in _NOT_A_HOST:
            bad_hosts.add(host)
    for host, bad in bad_peers_of.items():
        # a host whose links fail with most of its peers is the likely culprit, not each peer
        if len(bad) >= 2 and len(bad) * 2 > len(peers_of.get(host, ())):
            bad_hosts.add(host)
    regressions = _baseline.regressions(checks)
    reg_links = sorted(set(tuple(sorted((r["host"], r["peer"]))) for r in regressions if r["peer"]))
    reg_peers = {}
    for a, b in reg_links:
        reg_peers.setdefault(a, set()).add(b)
        reg_peers.setdefault(b, set()).add(a)
    regressed_hosts = set(r["host"] for r in regressions if not r["peer"])
    for host, bad in reg_peers.items():
        if len(bad) >= 2 and len(bad) * 2 > len(peers_of.get(host, ())):
            regressed_hosts.add(host)
    total = len(checks)
    verdict = _run_verdict.overall_verdict(counts, regressions=len(regressions))
    return {
        "run_id": run_id,
        "generated": generated,
        "verdict": verdict,
        "total": total,
        "counts": counts,
        "by_kind": by_kind,
        "bad_hosts": sorted(h for h in bad_hosts if h),
        "bad_links": ["%s<->%s" % link for link in sorted(bad_links)],
        "regressions": len(regressions),
        "regressed_hosts": sorted(h for h in regressed_hosts if h),
        "regressed_links": ["%s<->%s" % link for link in reg_links],
        "report_dir": report_dir,
    }


# --------------------------------------------------------------------------
# heat maps and charts (data)
# --------------------------------------------------------------------------

def heatmaps(records):
    """Bandwidth matrices per (kind, op): [{title, kind, op, hosts, cells: {(host, peer): cell}}].

    A cell is the worst (lowest fraction) record of that host pair; the
    fraction is value / expected_gbps, or value / best value of the matrix
    when no expected bandwidth is known.
    """
    groups = {}
    for record in records or []:
        if not record.get("peer") or record.get("kind") in ("regression", "summary") or _is_retest_run(record):
            continue
        name, value = bw_metric(record.get("metrics"))
        if value is None:
            continue
        key = (record.get("kind"), _op(record))
        groups.setdefault(key, []).append((record, name, value))
    maps = []
    for (kind, op), items in sorted(groups.items()):
        best = max(v for _r, _n, v in items) or 1.0
        hosts = sorted(set(r["host"] for r, _n, _v in items) | set(r["peer"] for r, _n, _v in items))
        cells, relative = {}, False
        for record, name, value in items:
            metrics = record.get("metrics") or {}
            expected = _num(metrics.get("expected_gbps"))
            fraction = _num(metrics.get("fraction"))
            if fraction is None:
                if expected:
                    fraction = value / expected
                else:
                    fraction, relative = value / best, True
            cell_key = (record["host"], record["peer"])
            old = cells.get(cell_key)
            cell = {"value": value, "metric": name, "expected": expected, "fraction": fraction,
                    "verdict": record.get("verdict"), "regression": record.get("regression"),
                    "count": 1, "detail": check_name(record)}
            if old is None:
                cells[cell_key] = cell
            else:
                cell["count"] = old["count"] + 1
                if old["fraction"] <= fraction:
                    old["count"] = cell["count"]
                    old["regression"] = old["regression"] or cell["regression"]
                    if old["verdict"] not in BAD and cell["verdict"] in BAD:
                        old["verdict"] = cell["verdict"]
                    continue
                cell["regression"] = cell["regression"] or old["regression"]
                if cell["verdict"] not in BAD and old["verdict"] in BAD:
                    cell["verdict"] = old["verdict"]
                cells[cell_key] = cell
        maps.append({"kind": kind, "op": op, "hosts": hosts, "cells": cells, "relative": relative,
                     "title": "%s %s" % (kind, op) if op != kind else kind})
    return maps


def collective_series(records):
    """busbw vs message size series: [{name, points: [(bytes, busbw_gbs)], verdict}]."""
    series = {}
    for record in records or []:
        kind = str(record.get("kind"))
        metrics = record.get("metrics") or {}
        if kind in ("regression", "summary"):
            continue
        if "collective" not in kind and "nccl" not in kind and "hccl" not in kind and "busbw_gbs" not in metrics:
            continue
        params = record.get("params") or {}
        name = "%s %s" % (_op(record), params.get("scope") or params.get("nodes") or record.get("host"))
        if isinstance(params.get("nodes"), list):
            name = "%s %d nodes" % (_op(record), len(params["nodes"]))
        entry = series.setdefault(name, {"name": name, "points": [], "verdict": "pass"})
        if record.get("verdict") in BAD:
            entry["verdict"] = record.get("verdict")
        rows = metrics.get("rows") or metrics.get("series")
        if isinstance(rows, list):
            for row in rows:
                if not isinstance(row, dict):
                    continue
                size = _num(row.get("bytes", row.get("size")))
                value = _num(row.get("busbw_gbs"))
                if value is None and isinstance(row.get("out_of_place"), dict):
                    value = _num(row["out_of_place"].get("busbw_gbs"))
                if size and value is not None:
                    entry["points"].append((size, value))
        size, value = _size(record), _num(metrics.get("busbw_gbs"))
        if size and value is not None:
            entry["points"].append((size, value))
    out = []
    for name in sorted(series):
        points = sorted(set(series[name]["points"]))
        if points:
            out.append(dict(series[name], points=points))
    return out


# --------------------------------------------------------------------------
# SVG
# --------------------------------------------------------------------------

_STOPS = ((0.0, (215, 48, 39)), (0.5, (252, 141, 89)), (0.75, (254, 224, 139)),
          (0.9, (217, 239, 139)), (1.0, (26, 152, 80)))


def fraction_color(fraction):
    """Red (0) -> yellow (0.75) -> green (>= 1) as '#rrggbb'."""
    if fraction is None:
        return "#dddddd"
    f = max(0.0, min(1.0, float(fraction)))
    for (f0, c0), (f1, c1) in zip(_STOPS, _STOPS[1:]):
        if f <= f1:
            t = (f - f0) / (f1 - f0) if f1 > f0 else 0.0
            return "#%02x%02x%02x" % tuple(int(round(a + (b - a) * t)) for a, b in zip(c0, c1))
    return "#%02x%02x%02x" % _STOPS[-1][1]


def svg_heatmap(hm, cell=None):
    hosts = hm["hosts"]
    n = len(hosts)
    cell = cell or (44 if n <= 12 else 28 if n <= 24 else max(6, 700 // max(n, 1)))
    label_w = min(160, 12 + 7 * max([len(h) for h in hosts] + [4]))
    top = label_w
    width, height = max(label_w + n * cell + 10, label_w + 330), top + n * cell + 40
    show_text = cell >= 28
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" class="heatmap" width="%d" height="%d" '
             'viewBox="0 0 %d %d" role="img" aria-label="%s">' % (width, height, width, height,
                                                                  _esc("bandwidth heat map " + hm["title"]))]
    parts.append('<style>text{font:11px sans-serif}.v{font-size:10px}</style>')
    for i, host in enumerate(hosts):
        y = top + i * cell + cell / 2.0 + 4
        parts.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (label_w - 6, y, _esc(host)))
        x = label_w + i * cell + cell / 2.0
        parts.append('<text transform="translate(%.1f,%d) rotate(-60)">%s</text>' % (x, top - 6, _esc(host)))
    for i, host in enumerate(hosts):
        for j, peer in enumerate(hosts):
            x, y = label_w + j * cell, top + i * cell
            data = hm["cells"].get((host, peer))
            if data is None:
                fill = "#f4f4f4" if i != j else "#ffffff"
                parts.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#ffffff"/>'
                             % (x, y, cell, cell, fill))
                continue
            stroke = ' stroke="#000000" stroke-width="3"' if data["regression"] else ' stroke="#ffffff"'
            tip = "%s: %s Gb/s (%s of %s)%s%s" % (
                data["detail"], _fmt(data["value"]), "%.0f%%" % (data["fraction"] * 100),
                "best" if data["expected"] is None else "%s Gb/s expected" % _fmt(data["expected"]),
                ", verdict %s" % data["verdict"], ", REGRESSION" if data["regression"] else "")
            parts.append('<rect class="cell v-%s" x="%d" y="%d" width="%d" height="%d" fill="%s"%s>'
                         '<title>%s</title></rect>' % (_esc(data["verdict"]), x, y, cell, cell,
                                                       fraction_color(data["fraction"]), stroke, _esc(tip)))
            if show_text:
                parts.append('<text class="v" x="%.1f" y="%.1f" text-anchor="middle">%s</text>'
                             % (x + cell / 2.0, y + cell / 2.0 + 4, _esc(_fmt(data["value"]))))
    legend_y = top + n * cell + 14
    for k in range(11):
        parts.append('<rect x="%d" y="%d" width="20" height="10" fill="%s"/>'
                     % (label_w + k * 20, legend_y, fraction_color(k / 10.0)))
    parts.append('<text x="%d" y="%d">0%%</text><text x="%d" y="%d">100%% of %s</text>' % (
        label_w, legend_y + 22, label_w + 180, legend_y + 22, "best" if hm["relative"] else "expected"))
    parts.append("</svg>")
    return "".join(parts)


_SERIES_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


def _size_label(size):
    for unit, factor in (("G", 2 ** 30), ("M", 2 ** 20), ("K", 2 ** 10)):
        if size >= factor:
            return "%g%s" % (round(size / factor, 1), unit)
    return "%g" % size


def svg_busbw_chart(series, width=720, height=360):
    """Line chart: bus bandwidth (GB/s) against message size (bytes, log2 axis)."""
    left, right, top, bottom = 60, 180, 20, 50
    plot_w, plot_h = width - left - right, height - top - bottom
    points = [p for s in series for p in s["points"]]
    xs = [math.log(p[0], 2) for p in points]
    x0, x1 = min(xs), max(xs)
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    y1 = max([p[1] for p in points] + [0.0]) * 1.1 or 1.0

    def sx(size):
        return left + (math.log(size, 2) - x0) / (x1 - x0) * plot_w

    def sy(value):
        return top + plot_h - value / y1 * plot_h

    parts = ['<svg xmlns="http://www.w3.org/2000/svg" class="busbw" width="%d" height="%d" viewBox="0 0 %d %d" '
             'role="img" aria-label="collective bus bandwidth against message size">' % (width, height, width, height),
             '<style>text{font:11px sans-serif}</style>',
             '<rect x="%d" y="%d" width="%d" height="%d" fill="#fafafa" stroke="#999999"/>' % (left, top, plot_w, plot_h)]
    for k in range(6):
        value = y1 * k / 5.0
        y = sy(value)
        parts.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e0e0e0"/>' % (left, left + plot_w, y, y))
        parts.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (left - 4, y + 4, _fmt(value)))
    step = max(1, int(math.ceil((x1 - x0) / 10.0)))
    tick = int(math.ceil(x0))
    while tick <= x1:
        x = sx(2 ** tick)
        parts.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#e0e0e0"/>' % (x, x, top, top + plot_h))
        parts.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'
                     % (x, top + plot_h + 14, _esc(_size_label(2 ** tick))))
        tick += step
    parts.append('<text x="%d" y="%d" text-anchor="middle">message size (bytes)</text>'
                 % (left + plot_w // 2, height - 10))
    parts.append('<text transform="translate(14,%d) rotate(-90)" text-anchor="middle">busbw (GB/s)</text>'
                 % (top + plot_h // 2))
    for index, entry in enumerate(series):
        color = _SERIES_COLORS[index % len(_SERIES_COLORS)]
        coords = " ".join("%.1f,%.1f" % (sx(s), sy(v)) for s, v in entry["points"])
        parts.append('<polyline class="series" fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (color, coords))
        for s, v in entry["points"]:
            parts.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s: %s bytes, %s GB/s</title></circle>'
                         % (sx(s), sy(v), color, _esc(entry["name"]), int(s), _fmt(v)))
        ly = top + 14 + index * 16
        parts.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"/>'
                     % (left + plot_w + 10, left + plot_w + 30, ly - 4, ly - 4, color))
        parts.append('<text x="%d" y="%d">%s%s</text>'
                     % (left + plot_w + 34, ly, _esc(entry["name"][:22]), " (fail)" if entry["verdict"] in BAD else ""))
    parts.append("</svg>")
    return "".join(parts)


# --------------------------------------------------------------------------
# tables (data shared by Markdown and HTML)
# --------------------------------------------------------------------------

def latency_rows(records):
    rows = []
    for record in records or []:
        if record.get("kind") in ("regression", "summary") or _is_retest_run(record):
            continue
        name, value = lat_metric(record.get("metrics"))
        if value is None:
            continue
        metrics = record.get("metrics") or {}
        rows.append({"host": record.get("host"), "peer": record.get("peer"), "kind": record.get("kind"),
                     "op": _op(record), "params": _params_text(record.get("params"), skip=("op",)),
                     "lat_us": value, "metric": name, "p99_us": _num(metrics.get("p99_us")),
                     "t_max_us": _num(metrics.get("t_max_us")), "verdict": record.get("verdict"),
                     "regression": bool(record.get("regression"))})
    return sorted(rows, key=lambda r: (r["kind"], r["op"], str(r["host"]), str(r["peer"])))


def findings(records):
    """Records that need attention (fail/error/flaky/warn, and every 'finding'), worst first."""
    out = [r for r in records or [] if r.get("kind") not in ("summary",)
           and (r.get("verdict") in ("fail", "error", "flaky", "warn") or r.get("kind") == "finding")]
    return _sorted_records(out)


# --------------------------------------------------------------------------
# Markdown
# --------------------------------------------------------------------------

def render_markdown(records, summary, meta=None):
    meta = meta or {}
    records = list(records or [])
    lines = ["# commcheck report: run %s" % (summary.get("run_id") or "-"), ""]
    lines.append("Generated %s. Verdict: **%s**." % (summary.get("generated") or "-", summary["verdict"].upper()))
    lines.append("")
    lines.append("| checks | " + " | ".join(VERDICT_ORDER) + " | regressions |")
    lines.append("|---" * (len(VERDICT_ORDER) + 2) + "|")
    counts_text = " | ".join(str(summary["counts"].get(v, 0)) for v in VERDICT_ORDER)
    lines.append("| %d | %s | %d |" % (summary["total"], counts_text, summary["regressions"]))
    lines.append("")
    lines.append("- Bad hosts: %s" % (", ".join(summary["bad_hosts"]) or "none"))
    lines.append("- Bad links: %s" % (", ".join(summary["bad_links"]) or "none"))
    if summary.get("regressions"):
        lines.append("- Regressed hosts: %s" % (", ".join(summary["regressed_hosts"]) or "none"))
        lines.append("- Regressed links: %s" % (", ".join(summary["regressed_links"]) or "none"))
    lines.append("")

    regs = _baseline.regressions(records)
    lines.append("## Regressions")
    lines.append("")
    base = meta.get("baseline") or {}
    if base:
        lines.append("Baseline: %s; threshold %s." % (
            "run %s" % base["run"] if base.get("run") else "median of the last %s passing runs" % base.get("k"),
            "%.0f%%" % (float(base.get("threshold", 0)) * 100)))
        lines.append("")
    if regs:
        lines.append("| check | metric | baseline | now | change |")
        lines.append("|---|---|---|---|---|")
        for reg in regs:
            lines.append("| %s | %s | %s | %s | %s |"
                         % (_md(reg["check"]), reg["metric"], _fmt(reg["baseline"]), _fmt(reg["value"]), _pct(reg["change"])))
    else:
        lines.append("None.")
    lines.append("")

    found = findings([r for r in records if r.get("kind") != "regression"])
    lines.append("## Findings")
    lines.append("")
    if found:
        lines.append("| verdict | check | cause | fix |")
        lines.append("|---|---|---|---|")
        for record in found:
            lines.append("| %s | %s | %s | %s |" % (record.get("verdict"), _md(check_name(record)),
                                                    _md(record.get("cause")), _md(record.get("fix"))))
    else:
        lines.append("None.")
    lines.append("")

    for hm in heatmaps(records):
        lines.append("## Bandwidth: %s (Gb/s, %% of %s)" % (hm["title"], "best" if hm["relative"] else "expected"))
        lines.append("")
        hosts = hm["hosts"]
        if len(hosts) <= 16:
            lines.append("| host \\ peer | " + " | ".join(_md(h) for h in hosts) + " |")
            lines.append("|---" * (len(hosts) + 1) + "|")
            for host in hosts:
                cells = []
                for peer in hosts:
                    data = hm["cells"].get((host, peer))
                    if data is None:
                        cells.append("")
                        continue
                    mark = " **!**" if data["verdict"] in BAD else ""
                    mark += " (regr.)" if data["regression"] else ""
                    cells.append("%s (%.0f%%)%s" % (_fmt(data["value"]), data["fraction"] * 100, mark))
                lines.append("| %s | %s |" % (_md(host), " | ".join(cells)))
        else:
            lines.append("| host | peer | Gb/s | fraction | verdict |")
            lines.append("|---|---|---|---|---|")
            for (host, peer), data in sorted(hm["cells"].items()):
                lines.append("| %s | %s | %s | %.0f%% | %s |" % (_md(host), _md(peer), _fmt(data["value"]),
                                                                 data["fraction"] * 100, data["verdict"]))
        lines.append("")

    lat = latency_rows(records)
    if lat:
        lines.append("## Latency (us)")
        lines.append("")
        lines.append("| kind | op | host | peer | params | latency | p99 | verdict |")
        lines.append("|---|---|---|---|---|---|---|---|")
        for row in lat:
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s%s |" % (
                row["kind"], row["op"], _md(row["host"]), _md(row["peer"]), _md(row["params"]), _fmt(row["lat_us"]),
                _fmt(row["p99_us"]), row["verdict"], " (regr.)" if row["regression"] else ""))
        lines.append("")

    series = collective_series(records)
    if series:
        lines.append("## Collectives: bus bandwidth (GB/s) by message size")
        lines.append("")
        lines.append("| series | size (bytes) | busbw |")
        lines.append("|---|---|---|")
        for entry in series:
            for size, value in entry["points"]:
                lines.append("| %s | %d | %s |" % (_md(entry["name"]), int(size), _fmt(value)))
        lines.append("")

    retests = [r for r in records if is_retest(r)]
    if retests:
        lines.append("## Retests")
        lines.append("")
        lines.append("| check | verdict | cause |")
        lines.append("|---|---|---|")
        for record in _sorted_records(retests):
            lines.append("| %s | %s | %s |" % (_md(check_name(record)), record.get("verdict"), _md(record.get("cause"))))
        lines.append("")

    lines.append("## Checks by kind")
    lines.append("")
    lines.append("| kind | " + " | ".join(VERDICT_ORDER) + " |")
    lines.append("|---" * (len(VERDICT_ORDER) + 1) + "|")
    for kind in sorted(summary["by_kind"], key=str):
        counts = summary["by_kind"][kind]
        lines.append("| %s | %s |" % (kind, " | ".join(str(counts.get(v, 0)) for v in VERDICT_ORDER)))
    lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------

_CSS = """
body{font:14px/1.4 -apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f0f0f0}.pass{color:#1a7f37}.fail,.error{color:#c62828;font-weight:bold}.warn,.flaky{color:#b26a00}
.skipped{color:#777}.badge{display:inline-block;padding:2px 10px;border-radius:10px;color:#fff}
.badge.pass{background:#1a7f37;color:#fff}.badge.fail{background:#c62828;color:#fff}.badge.warn{background:#b26a00;color:#fff}
.regr{background:#fff3e0}.muted{color:#777}figure{margin:8px 0 24px 0}figcaption{font-weight:bold;margin-bottom:4px}
"""


def _verdict_span(verdict):
    return '<span class="%s">%s</span>' % (_esc(verdict), _esc(verdict))


def _html_table(headers, rows, row_classes=None):
    out = ["<table><thead><tr>%s</tr></thead><tbody>" % "".join("<th>%s</th>" % _esc(h) for h in headers)]
    for index, row in enumerate(rows):
        cls = row_classes[index] if row_classes else ""
        out.append('<tr%s>%s</tr>' % (' class="%s"' % cls if cls else "", "".join("<td>%s</td>" % c for c in row)))
    out.append("</tbody></table>")
    return "".join(out)


def render_html(records, summary, meta=None):
    """A self-contained HTML page (inline CSS and SVG, no scripts, no external resources)."""
    meta = meta or {}
    records = list(records or [])
    title = "commcheck report: run %s" % (summary.get("run_id") or "-")
    body = ["<h1>%s</h1>" % _esc(title)]
    body.append('<p>Generated %s. Verdict: <span class="badge %s">%s</span></p>' % (
        _esc(summary.get("generated") or "-"), _esc(summary["verdict"]), _esc(summary["verdict"].upper())))
    body.append(_html_table(["checks"] + list(VERDICT_ORDER) + ["regressions"],
                            [[str(summary["total"])] + [str(summary["counts"].get(v, 0)) for v in VERDICT_ORDER]
                             + [str(summary["regressions"])]]))
    body.append("<p>Bad hosts: <b>%s</b><br>Bad links: <b>%s</b>" % (
        _esc(", ".join(summary["bad_hosts"]) or "none"), _esc(", ".join(summary["bad_links"]) or "none")))
    if summary.get("regressions"):
        body.append("<br>Regressed hosts: <b>%s</b><br>Regressed links: <b>%s</b>" % (
            _esc(", ".join(summary["regressed_hosts"]) or "none"), _esc(", ".join(summary["regressed_links"]) or "none")))
    body.append("</p>")

    maps = heatmaps(records)
    body.append('<h2 id="bandwidth">Bandwidth heat maps</h2>')
    if maps:
        body.append('<p class="muted">Rows: host (client), columns: peer (server). Colour: fraction of the expected '
                    'bandwidth (or of the best pair when none is known); a black border marks a regression; hover '
                    'a cell for details.</p>')
        for hm in maps:
            body.append('<figure class="heatmap-figure" data-op="%s"><figcaption>%s (Gb/s)</figcaption>%s</figure>'
                        % (_esc(hm["op"]), _esc(hm["title"]), svg_heatmap(hm)))
    else:
        body.append('<p class="muted">No bandwidth results in this run.</p>')

    regs = _baseline.regressions(records)
    body.append('<h2 id="regressions">Regressions</h2>')
    base = meta.get("baseline") or {}
    if base:
        body.append('<p class="muted">Baseline: %s; threshold %.0f%%.</p>' % (
            _esc("run %s" % base["run"] if base.get("run") else "median of the last %s passing runs" % base.get("k")),
            float(base.get("threshold", 0)) * 100))
    if regs:
        body.append(_html_table(["check", "metric", "baseline", "now", "change", "baseline runs"],
                                [[_esc(r["check"]), _esc(r["metric"]), _esc(_fmt(r["baseline"])), _esc(_fmt(r["value"])),
                                  "<b>%s</b>" % _esc(_pct(r["change"])), _esc(", ".join(r["baseline_runs"][-5:]))]
                                 for r in regs], ["regr"] * len(regs)))
    else:
        body.append("<p>None.</p>")

    found = findings([r for r in records if r.get("kind") != "regression"])
    body.append('<h2 id="findings">Findings and fixes</h2>')
    if found:
        body.append(_html_table(["verdict", "check", "cause", "fix", "evidence"],
                                [[_verdict_span(r.get("verdict")), _esc(check_name(r)), _esc(r.get("cause") or ""),
                                  _esc(r.get("fix") or ""),
                                  "<br>".join("<code>%s</code>" % _esc(e) for e in (r.get("evidence") or [])[:3])]
                                 for r in found]))
    else:
        body.append("<p>None.</p>")

    lat = latency_rows(records)
    body.append('<h2 id="latency">Latency</h2>')
    if lat:
        body.append(_html_table(["kind", "op", "host", "peer", "params", "latency (us)", "p99 (us)", "max (us)", "verdict"],
                                [[_esc(r["kind"]), _esc(r["op"]), _esc(r["host"]), _esc(r["peer"] or ""),
                                  _esc(r["params"]), _esc(_fmt(r["lat_us"])), _esc(_fmt(r["p99_us"])),
                                  _esc(_fmt(r["t_max_us"])), _verdict_span(r["verdict"])] for r in lat],
                                ["regr" if r["regression"] else "" for r in lat]))
    else:
        body.append('<p class="muted">No latency results in this run.</p>')

    series = collective_series(records)
    body.append('<h2 id="collectives">Collectives: bus bandwidth by message size</h2>')
    if series:
        body.append("<figure>%s</figure>" % svg_busbw_chart(series))
    else:
        body.append('<p class="muted">No collective results in this run.</p>')

    retests = [r for r in records if is_retest(r)]
    if retests:
        body.append('<h2 id="retests">Retests</h2>')
        body.append(_html_table(["check", "verdict", "cause"],
                                [[_esc(check_name(r)), _verdict_span(r.get("verdict")), _esc(r.get("cause") or "")]
                                 for r in _sorted_records(retests)]))

    body.append('<h2 id="checks">All checks</h2>')
    checks = _sorted_records([r for r in records if r.get("kind") not in ("regression", "summary")])
    body.append(_html_table(["verdict", "kind", "host", "peer", "params", "metrics", "cause"],
                            [[_verdict_span(r.get("verdict")), _esc(r.get("kind")), _esc(r.get("host")),
                              _esc(r.get("peer") or ""), _esc(_params_text(r.get("params"))),
                              _esc(", ".join("%s=%s" % (k, _fmt(v)) for k, v in sorted((r.get("metrics") or {}).items())
                                             if not isinstance(v, (list, dict)))),
                              _esc(r.get("cause") or "")] for r in checks],
                            ["regr" if r.get("regression") else "" for r in checks]))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<title>%s</title><style>%s</style></head><body>\n%s\n</body></html>\n" % (_esc(title), _CSS, "\n".join(body)))


# --------------------------------------------------------------------------
# results.json
# --------------------------------------------------------------------------

def render_results_json(records, summary, meta=None):
    meta = meta or {}
    document = {
        "schema": RESULTS_SCHEMA,
        "run_id": summary.get("run_id"),
        "generated": summary.get("generated"),
        "summary": summary,
        "baseline": meta.get("baseline"),
        "records": [r for r in records or [] if r.get("kind") != "regression"],
        "regressions": _baseline.regressions(records),
    }
    return json.dumps(document, indent=2, sort_keys=True, default=str) + "\n"


# --------------------------------------------------------------------------
# JUnit
# --------------------------------------------------------------------------

def _xml_text(value):
    return _CONTROL_CHARS.sub("", "" if value is None else str(value))


def render_junit(records, summary, meta=None, regression_fails=True):
    """JUnit XML: one testsuite per kind, one testcase per check record.

    fail -> <failure>, error -> <error>, skipped -> <skipped>; a regression
    is a <failure type="regression"> when regression_fails; flaky/warn pass
    with a note in <system-out>.
    """
    checks = [r for r in records or [] if r.get("kind") not in ("regression", "summary")]
    suites = {}
    for record in checks:
        suites.setdefault(str(record.get("kind")), []).append(record)
    root = ET.Element("testsuites", name="commcheck")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for kind in sorted(suites):
        suite = ET.SubElement(root, "testsuite", name="commcheck.%s" % kind)
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="run_id", value=_xml_text(summary.get("run_id")))
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        seen = {}
        for record in suites[kind]:
            name = check_name(record)
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:
                name = "%s #%d" % (name, seen[name])
            metrics = record.get("metrics") or {}
            duration = _num(metrics.get("duration_s")) or 0.0
            case = ET.SubElement(suite, "testcase", classname="commcheck.%s" % kind, name=_xml_text(name),
                                 time="%.3f" % duration)
            counts["tests"] += 1
            verdict = record.get("verdict")
            detail = "\n".join(filter(None, [
                "cause: %s" % record["cause"] if record.get("cause") else "",
                "fix: %s" % record["fix"] if record.get("fix") else "",
                "metrics: %s" % json.dumps(metrics, sort_keys=True, default=str) if metrics else "",
            ] + list(record.get("evidence") or [])))
            if verdict == "fail":
                node = ET.SubElement(case, "failure", message=_xml_text(record.get("cause") or "check failed"), type="fail")
                node.text = _xml_text(detail)
                counts["failures"] += 1
            elif verdict == "error":
                node = ET.SubElement(case, "error", message=_xml_text(record.get("cause") or "check error"), type="error")
                node.text = _xml_text(detail)
                counts["errors"] += 1
            elif verdict == "skipped":
                ET.SubElement(case, "skipped", message=_xml_text(record.get("cause") or "skipped"))
                counts["skipped"] += 1
            elif record.get("regression") and regression_fails:
                regression = record["regression"]
                message = "regression: " + ", ".join(
                    "%s %s vs baseline %s" % (n, _pct(m["change"]), _fmt(m["baseline"]))
                    for n, m in sorted(regression["metrics"].items()))
                node = ET.SubElement(case, "failure", message=_xml_text(message), type="regression")
                node.text = _xml_text(detail)
                counts["failures"] += 1
            if verdict in ("flaky", "warn"):
                out = ET.SubElement(case, "system-out")
                out.text = _xml_text("%s: %s" % (verdict, detail))
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))
    if hasattr(ET, "indent"):
        ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# --------------------------------------------------------------------------
# Prometheus text format
# --------------------------------------------------------------------------

_PROM_NAME_BAD = re.compile(r"[^a-zA-Z0-9_]")


def prom_name(text):
    name = _PROM_NAME_BAD.sub("_", str(text)).strip("_")
    name = re.sub(r"_+", "_", name)
    if not name or name[0].isdigit():
        name = "_" + name
    return name


def prom_metric_name(kind, metric):
    """commcheck_<kind>_<metric>, without repeating the kind's last word: rdma_bw + bw_gbps -> commcheck_rdma_bw_gbps."""
    kind, metric = prom_name(kind).lower(), prom_name(metric).lower()
    last = kind.split("_")[-1]
    if metric == last or metric.startswith(last + "_"):
        metric = metric[len(last):].lstrip("_")
    return "commcheck_%s_%s" % (kind, metric) if metric else "commcheck_%s" % kind


def _prom_escape(value):
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _prom_value(value):
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(round(float(value), 6))


def _scalar_params(params):
    out = {}
    for key, value in (params or {}).items():
        if isinstance(value, (dict, list)) or value is None:
            continue
        out[prom_name(key).lower()] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


class _Families(object):
    def __init__(self):
        self.order, self.help, self.samples = [], {}, {}

    def add(self, name, help_text, labels, value):
        if name not in self.samples:
            self.order.append(name)
            self.help[name] = help_text
            self.samples[name] = {}
        key = tuple(sorted(labels.items()))
        self.samples[name][key] = value  # a later record of the same series wins (no duplicates)

    def render(self):
        lines = []
        for name in self.order:
            samples = self.samples[name]
            label_names = sorted(set(k for key in samples for k, _v in key))
            lines.append("# HELP %s %s" % (name, self.help[name].replace("\\", "\\\\").replace("\n", " ")))
            lines.append("# TYPE %s gauge" % name)
            for key, value in samples.items():
                labels = dict(key)
                # every sample of a family has the same label names (node_exporter requires it)
                text = ",".join('%s="%s"' % (n, _prom_escape(labels.get(n, ""))) for n in label_names)
                lines.append("%s%s %s" % (name, "{%s}" % text if text else "", _prom_value(value)))
        return "\n".join(lines) + "\n"


def render_prometheus(records, summary, meta=None, now=None):
    """Prometheus text exposition format for node_exporter's textfile collector (gauges, no timestamps)."""
    meta = meta or {}
    now = now or datetime.datetime.now(datetime.timezone.utc)
    families = _Families()
    checks = [r for r in records or [] if r.get("kind") not in ("regression", "summary")]
    reserved = ("host", "peer", "kind", "verdict", "metric", "run_id")
    for record in checks:
        if _is_retest_run(record):
            continue  # retest ids would make new series every run
        base = dict((k, v) for k, v in _scalar_params(record.get("params")).items()
                    if k not in reserved and k not in _baseline.DEFAULT_IGNORE_PARAMS)
        base.update(host=str(record.get("host") or ""), peer=str(record.get("peer") or ""))
        for metric, value in sorted((record.get("metrics") or {}).items()):
            number = _num(value)
            if number is None:
                continue
            name = prom_metric_name(record.get("kind"), metric)
            families.add(name, "commcheck %s %s of the last run" % (record.get("kind"), metric), base, number)
        labels = dict(base, kind=str(record.get("kind")), verdict=str(record.get("verdict")))
        families.add("commcheck_check_verdict", "1 per check of the last run, labelled with its verdict", labels, 1)
        families.add("commcheck_check_ok", "1 when a check of the last run passed (pass, warn, flaky), else 0",
                     dict(base, kind=str(record.get("kind"))),
                     0 if record.get("verdict") in ("fail", "error") else (1 if record.get("verdict") != "skipped" else 0))
        regression = record.get("regression")
        if regression:
            for metric, data in sorted(regression["metrics"].items()):
                families.add("commcheck_check_regression_change_ratio",
                             "relative change against the baseline of a regressed metric (negative: lower)",
                             dict(base, kind=str(record.get("kind")), metric=metric), data["change"])
    for verdict in VERDICT_ORDER:
        families.add("commcheck_checks", "number of checks of the last run by verdict", {"verdict": verdict},
                     summary["counts"].get(verdict, 0))
    families.add("commcheck_regressions", "number of regressed metrics in the last run", {}, summary["regressions"])
    families.add("commcheck_bad_hosts", "number of hosts named bad in the last run", {}, len(summary["bad_hosts"]))
    families.add("commcheck_bad_links", "number of links named bad in the last run", {}, len(summary["bad_links"]))
    families.add("commcheck_last_run_ok", "1 when the last run had no failed or errored check", {},
                 0 if summary["verdict"] == "fail" else 1)
    families.add("commcheck_last_run_info", "1, labelled with the id of the last run",
                 {"run_id": str(summary.get("run_id") or "")}, 1)
    families.add("commcheck_last_run_timestamp_seconds", "when the last run's report was made (Unix time)", {},
                 round(now.timestamp(), 3))
    return families.render()


# --------------------------------------------------------------------------
# summary table for the console
# --------------------------------------------------------------------------

def summary_lines(summary, files=None):
    """A short fixed-width table for the end of the play."""
    counts = summary["counts"]
    lines = [
        "commcheck run %s: %s" % (summary.get("run_id") or "-", summary["verdict"].upper()),
        "%-8s %6s %6s %6s %6s %6s %7s %6s" % ("checks", "pass", "fail", "error", "warn", "flaky", "skipped", "regr"),
        "%-8d %6d %6d %6d %6d %6d %7d %6d" % (summary["total"], counts.get("pass", 0), counts.get("fail", 0),
                                              counts.get("error", 0), counts.get("warn", 0), counts.get("flaky", 0),
                                              counts.get("skipped", 0), summary["regressions"]),
        "bad hosts: %s" % (", ".join(summary["bad_hosts"]) or "none"),
        "bad links: %s" % (", ".join(summary["bad_links"][:8]) or "none")
        + (" (+%d more)" % (len(summary["bad_links"]) - 8) if len(summary["bad_links"]) > 8 else ""),
    ]
    if summary["regressions"]:
        lines.append("regressed: %s" % (", ".join(summary["regressed_hosts"] + summary["regressed_links"][:8]) or "-"))
    if files and files.get("html"):
        lines.append("report: %s" % files["html"])
    return lines
