# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""report.html: one self-contained page (inline CSS and SVG, no scripts), section by section."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_model import (
    VERDICT_ORDER,
    ReportView,
    baseline_text,
    check_name,
    esc,
    fmt_value,
    params_text,
    pct,
    sorted_records,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_flow import flow_label
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_svg import svg_busbw_chart, svg_heatmap
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits

TOP_CULPRITS = 20

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
    return '<span class="%s">%s</span>' % (esc(verdict), esc(verdict))


def _html_table(headers, rows, row_classes=None):
    out = ["<table><thead><tr>%s</tr></thead><tbody>" % "".join("<th>%s</th>" % esc(h) for h in headers)]
    for index, row in enumerate(rows):
        cls = row_classes[index] if row_classes else ""
        out.append('<tr%s>%s</tr>' % (' class="%s"' % cls if cls else "", "".join("<td>%s</td>" % c for c in row)))
    out.append("</tbody></table>")
    return "".join(out)


def _none(text):
    return '<p class="muted">%s</p>' % text


def _head(view):
    summary = view.summary
    body = ['<p>Generated %s. Verdict: <span class="badge %s">%s</span></p>' % (
        esc(summary.get("generated") or "-"), esc(summary["verdict"]), esc(summary["verdict"].upper()))]
    body.append(_html_table(["checks"] + list(VERDICT_ORDER) + ["regressions"],
                            [[str(summary["total"])] + [str(summary["counts"].get(v, 0)) for v in VERDICT_ORDER]
                             + [str(summary["regressions"])]]))
    body += _what_to_do(summary.get("culprits") or [])
    body.append("<p>Bad hosts: <b>%s</b><br>Bad NICs: <b>%s</b><br>Bad links: <b>%s</b>" % (
        esc(", ".join(summary["bad_hosts"]) or "none"), esc(", ".join(summary.get("bad_nics") or []) or "none"),
        esc(", ".join(summary["bad_links"]) or "none")))
    if summary.get("regressions"):
        body.append("<br>Regressed hosts: <b>%s</b><br>Regressed links: <b>%s</b>" % (
            esc(", ".join(summary["regressed_hosts"]) or "none"), esc(", ".join(summary["regressed_links"]) or "none")))
    body.append("</p>")
    return body


def _what_to_do(found, limit=TOP_CULPRITS):
    """One line per culprit, worst first: what it is, the checks and evidence behind it, and the fix."""
    if not found:
        return []
    items = ['<li><b>%s</b> <span class="muted">[%s; %s confidence; %d evidence]</span>: %s</li>' % (
        esc(culprits.describe(c)), esc(", ".join(c["checks"]) or "-"), esc(c["confidence"]), len(c["evidence"]),
        esc(c["fix"] or c["cause"] or "-")) for c in found[:limit]]
    if len(found) > limit:
        items.append('<li class="muted">%d more in results.json (summary.culprits)</li>' % (len(found) - limit))
    return ['<h2 id="what-to-do">What to do</h2><ol>%s</ol>' % "".join(items)]


def _heatmaps(view):
    body = ['<h2 id="bandwidth">Bandwidth heat maps</h2>']
    if not view.heatmaps:
        return body + [_none("No bandwidth results in this run.")]
    body.append('<p class="muted">Rows: sender, columns: receiver (a cell is the data its row sent to its '
                'column). Write, send, atomic and iperf3 send from the client to the server; read and iperf3 '
                'reverse from the server to the client; a bidirectional test fills both cells of its pair. '
                'Colour: fraction of the expected bandwidth (or of the best pair when none is known); a black '
                'border marks a regression; hover a cell for details.</p>')
    for hm in view.heatmaps:
        body.append('<figure class="heatmap-figure" data-op="%s"><figcaption>%s (Gb/s): rows send, columns '
                    'receive; %s</figcaption>%s</figure>'
                    % (esc(hm["op"]), esc(hm["title"]), esc(", ".join(hm["flows"])), svg_heatmap(hm)))
    return body


def _regressions(view):
    body = ['<h2 id="regressions">Regressions</h2>']
    base = view.baseline
    if base:
        body.append('<p class="muted">Baseline: %s; threshold %.0f%%.</p>' % (
            esc(baseline_text(base)), float(base.get("threshold", 0)) * 100))
    regs = view.regressions
    if not regs:
        return body + ["<p>None.</p>"]
    body.append(_html_table(["check", "metric", "baseline", "now", "change", "baseline runs"],
                            [[esc(check_name(r)), esc(r["metric"]), esc(fmt_value(r["baseline"])), esc(fmt_value(r["value"])),
                              "<b>%s</b>" % esc(pct(r["change"])), esc(", ".join(r["baseline_runs"][-5:]))]
                             for r in regs], ["regr"] * len(regs)))
    return body


def _evidence(record):
    return "<br>".join("<code>%s</code>" % esc(e) for e in (record.get("evidence") or [])[:3])


def _findings(view):
    body = ['<h2 id="findings">Findings and fixes</h2>']
    if not view.findings:
        return body + ["<p>None.</p>"]
    body.append(_html_table(["verdict", "check", "cause", "fix", "evidence"],
                            [[_verdict_span(r.get("verdict")), esc(check_name(r)), esc(r.get("cause") or ""),
                              esc(r.get("fix") or ""), _evidence(r)] for r in view.findings]))
    return body


def _versions(view):
    """The tool, library and firmware versions by host; only when discovery or a collective run found some."""
    if not view.versions:
        return []
    return ['<h2 id="versions">Versions</h2>',
            _html_table(["tool", "version", "hosts", "count"],
                        [[esc(r["tool"]), esc(r["version"]), esc(r["hosts"]), str(r["count"])] for r in view.versions],
                        ["regr" if r["mixed"] else "" for r in view.versions])]


def _latency(view):
    body = ['<h2 id="latency">Latency</h2>']
    lat = view.latency
    if not lat:
        return body + [_none("No latency results in this run.")]
    body.append(_html_table(["kind", "op", "hosts (a->b: a sends)", "params", "latency (us)", "p99 (us)", "max (us)",
                             "verdict"],
                            [[esc(r["kind"]), esc(r["op"]), esc(r["flow"]),
                              esc(r["params"]), esc(fmt_value(r["lat_us"])), esc(fmt_value(r["p99_us"])),
                              esc(fmt_value(r["t_max_us"])), _verdict_span(r["verdict"])] for r in lat],
                            ["regr" if r["regression"] else "" for r in lat]))
    return body


def _collectives(view):
    body = ['<h2 id="collectives">Collectives: bus bandwidth by message size</h2>']
    if not view.series:
        return body + [_none("No collective results in this run.")]
    # which network each series ran on: a fall-back to NET/Socket shows here next to its numbers
    transports = _html_table(["series", "transport", "verdict"],
                             [[esc(e["name"]), esc(e.get("transport") or "-"), _verdict_span(e.get("verdict"))]
                              for e in view.series])
    return body + ["<figure>%s</figure>" % svg_busbw_chart(view.series), transports]


def _retests(view):
    if not view.retests:
        return []
    return ['<h2 id="retests">Retests</h2>',
            _html_table(["check", "verdict", "cause"],
                        [[esc(check_name(r)), _verdict_span(r.get("verdict")), esc(r.get("cause") or "")]
                         for r in view.retests])]


def _scalar_metrics_text(metrics):
    return ", ".join("%s=%s" % (k, fmt_value(v)) for k, v in sorted((metrics or {}).items())
                     if not isinstance(v, (list, dict)))


def _all_checks(view):
    checks = sorted_records(view.checks)
    return ['<h2 id="checks">All checks</h2>',
            _html_table(["verdict", "kind", "hosts (a->b: a sends)", "params", "metrics", "cause"],
                        [[_verdict_span(r.get("verdict")), esc(r.get("kind")), esc(flow_label(r)),
                          esc(params_text(r.get("params"))),
                          esc(_scalar_metrics_text(r.get("metrics"))), esc(r.get("cause") or "")] for r in checks],
                        ["regr" if r.get("regression") else "" for r in checks])]


SECTIONS = (_head, _heatmaps, _regressions, _findings, _versions, _latency, _collectives, _retests, _all_checks)


def render(view):
    """A self-contained HTML page (inline CSS and SVG, no scripts, no external resources)."""
    title = "commcheck report: run %s" % (view.summary.get("run_id") or "-")
    body = ["<h1>%s</h1>" % esc(title)]
    for section in SECTIONS:
        body += section(view)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<title>%s</title><style>%s</style></head><body>\n%s\n</body></html>\n" % (esc(title), _CSS, "\n".join(body)))


def render_html(records, summary, meta=None):
    """A self-contained HTML page (inline CSS and SVG, no scripts, no external resources)."""
    return render(ReportView(records, summary, meta))
