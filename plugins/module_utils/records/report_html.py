# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""report.html: one self-contained page (inline CSS and SVG, no scripts), section by section.

The top (verdict, what to do, regressions) and the host x rail grid are
open; every other section is folded (``<details>``). The fleet-sized
sections are in report_html_sections.py.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_html_sections as sections
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_html_sections import (
    fold,
    html_table,
    none_text,
    verdict_span,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_collectives import lowest_series
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_model import (
    ReportView,
    baseline_text,
    check_name,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_values import (
    VERDICT_ORDER,
    esc,
    fmt_value,
    pct,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_svg import svg_busbw_chart
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.visible_text import visible
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits

# Culprits listed open under the verdict; the next ones folded below them; the rest only in results.json.
TOP_CULPRITS = 10
MORE_CULPRITS = 200
# Regressions listed open, one line each (the largest); a table of up to MORE_REGRESSIONS folded below.
TOP_REGRESSIONS = 3
MORE_REGRESSIONS = 500
RETEST_ROWS = 200

_CSS = """
body{font:14px/1.4 -apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px;margin:0 0 8px 0}h2{font-size:18px;margin-top:20px;border-bottom:1px solid #ddd}
summary h2{display:inline-block;margin:14px 0 4px 0;border:0}summary{cursor:pointer}
details.section{border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f0f0f0}.pass{color:#1a7f37}.fail,.error{color:#c62828;font-weight:bold}.warn,.flaky{color:#b26a00}
.skipped{color:#777}.badge{display:inline-block;padding:2px 10px;border-radius:10px;color:#fff}
.badge.pass{background:#1a7f37;color:#fff}.badge.fail{background:#c62828;color:#fff}.badge.warn{background:#b26a00;color:#fff}
.sev-error{color:#c62828;font-weight:bold}.sev-warning{color:#b26a00;font-weight:bold}.sev-info{color:#31708f}
.regr{background:#fff3e0}.muted{color:#777}figure{margin:8px 0 24px 0}figcaption{font-weight:bold;margin-bottom:4px}
#top ol{margin:4px 0}#top p{margin:6px 0}
"""


def _head(view):
    summary = view.summary
    counts = ", ".join("%d %s" % (summary["counts"].get(v, 0), v) for v in VERDICT_ORDER
                       if summary["counts"].get(v, 0)) or "none"
    body = ['<p>Verdict: <span class="badge %s" id="verdict">%s</span> <b>%d checks</b>: %s; <b>%d regressions</b>. '
            '<span class="muted">Generated %s.</span></p>' % (
                esc(summary["verdict"]), esc(summary["verdict"].upper()), summary["total"], esc(counts),
                summary["regressions"], esc(summary.get("generated") or "-"))]
    body += _what_to_do(summary.get("culprits") or [])
    body.append("<p>Bad hosts: <b>%s</b> &middot; bad NICs: <b>%s</b> &middot; bad links: <b>%s</b>" % (
        esc(_names(summary["bad_hosts"])), esc(_names(summary.get("bad_nics") or [])),
        esc(_names(summary["bad_links"]))))
    if summary.get("regressions"):
        body.append("<br>Regressed hosts: <b>%s</b> &middot; regressed links: <b>%s</b>" % (
            esc(_names(summary["regressed_hosts"])), esc(_names(summary["regressed_links"]))))
        body += ["<br>Regressed together (a shared cause, not these pairs): <b>%s</b>" % esc(text)
                 for text in summary.get("regressed_together") or []]
    body.append("</p>")
    return body


def _names(names, limit=20):
    """'a, b, c' or 'none'; a long list ends with '+N more'."""
    names = list(names or [])
    text = ", ".join(names[:limit]) or "none"
    return text + (" +%d more" % (len(names) - limit) if len(names) > limit else "")


def _culprit_item(item):
    return '<li><b>%s</b> <span class="muted">[%s; %s confidence; %d evidence]</span>: %s</li>' % (
        esc(culprits.describe(item)), esc(", ".join(item["checks"]) or "-"), esc(item["confidence"]),
        len(item["evidence"]), esc(item["fix"] or item["cause"] or "-"))


def _what_to_do(found):
    """One line per culprit, worst first: what it is, the checks and evidence behind it, and the fix."""
    if not found:
        return []
    body = ['<h2 id="what-to-do">What to do</h2><ol>%s</ol>' % "".join(_culprit_item(c) for c in found[:TOP_CULPRITS])]
    more = found[TOP_CULPRITS:TOP_CULPRITS + MORE_CULPRITS]
    if more:
        body.append('<details><summary>%d more culprits</summary><ol start="%d">%s</ol></details>'
                    % (len(more), TOP_CULPRITS + 1, "".join(_culprit_item(c) for c in more)))
    if len(found) > TOP_CULPRITS + MORE_CULPRITS:
        body.append(none_text("%d more in results.json (summary.culprits)"
                              % (len(found) - TOP_CULPRITS - MORE_CULPRITS)))
    return body


def _regression_table(regs):
    return html_table(["check", "metric", "baseline", "now", "change", "baseline runs"],
                      [[esc(check_name(r)), esc(r["metric"]), esc(fmt_value(r["baseline"])), esc(fmt_value(r["value"])),
                        "<b>%s</b>" % esc(pct(r["change"])), esc(", ".join(r["baseline_runs"][-5:]))]
                       for r in regs], ["regr"] * len(regs))


def _regression_item(reg):
    return "<li>%s: %s %s -&gt; %s <b>%s</b></li>" % (
        esc(check_name(reg)), esc(reg["metric"]), esc(fmt_value(reg["baseline"])), esc(fmt_value(reg["value"])),
        esc(pct(reg["change"])))


def _regressions(view):
    """The TOP_REGRESSIONS largest regressions one line each, then a folded table of up to MORE_REGRESSIONS."""
    regs = view.regressions
    base = view.baseline
    baseline = " against the %s, threshold %.0f%%" % (
        baseline_text(base), float(base.get("threshold", 0)) * 100) if base else ""
    body = ['<h2 id="regressions">Regressions</h2>', '<p class="muted">%d regressed checks%s.</p>'
            % (len(regs), esc(baseline))]
    if not regs:
        return body[:1] + ["<p>None.%s</p>" % esc(baseline and " (compared%s)" % baseline)]
    worst = sections.worst_first(regs, MORE_REGRESSIONS)
    body.append("<ul>%s</ul>" % "".join(_regression_item(r) for r in worst[:TOP_REGRESSIONS]))
    body.append('<details><summary>the %s regressions, with their baseline runs</summary>%s%s</details>' % (
        "%d largest of %d" % (len(worst), len(regs)) if len(worst) < len(regs) else "%d" % len(regs),
        _regression_table(worst), none_text("All in results.json.") if len(worst) < len(regs) else ""))
    return body


def _versions(view):
    """The tool, library and firmware versions by host; only when discovery or a collective run found some."""
    if not view.versions:
        return []
    return fold("versions", "Versions", [
        html_table(["tool", "version", "hosts", "count"],
                   [[esc(r["tool"]), esc(r["version"]), esc(r["hosts"]), str(r["count"])] for r in view.versions],
                   ["regr" if r["mixed"] else "" for r in view.versions])])


def _collectives(view):
    if not view.series:
        return fold("collectives", "Collectives", [none_text("No collective results in this run.")])
    shown = lowest_series(view.series)
    note = "" if len(shown) == len(view.series) else none_text(
        "The %d of %d lines with the lowest bus bandwidth (per-node runs draw one line per node); every run is in "
        "results.json." % (len(shown), len(view.series)))
    # which network each series ran on: a fall-back to NET/Socket shows here next to its numbers
    transports = html_table(["series", "transport", "verdict"],
                            [[esc(e["name"]), esc(e.get("transport") or "-"), verdict_span(e.get("verdict"))]
                             for e in shown])
    return fold("collectives", "Collectives: bus bandwidth by message size",
                [note, "<figure>%s</figure>" % svg_busbw_chart(shown), transports])


def _retests(view):
    if not view.retests:
        return []
    rows = view.retests[:RETEST_ROWS]
    note = "" if len(rows) == len(view.retests) else none_text(
        "The first %d of %d retests (all in results.json)." % (len(rows), len(view.retests)))
    return fold("retests", "Retests (%d)" % len(view.retests), [note, html_table(
        ["check", "verdict", "cause"],
        [[esc(check_name(r)), verdict_span(r.get("verdict")), esc(r.get("cause") or "")] for r in rows])])


def _top(view):
    """Open at the top: the verdict, what to do, the regressions."""
    return ['<div id="top">'] + _head(view) + _regressions(view) + ["</div>"]


SECTIONS = (_top, sections.grid_section, sections.leaves_section, sections.gpus_section, sections.bandwidth_section, sections.findings_section, _versions,
            sections.latency_section, _collectives, _retests, sections.all_checks_section)


def render(view):
    """A self-contained HTML page (inline CSS and SVG, no scripts, no external resources)."""
    title = "commcheck report: run %s" % (view.summary.get("run_id") or "-")
    body = ["<h1>%s</h1>" % esc(title)]
    for section in SECTIONS:
        body += section(view)
    return visible("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                   "<title>%s</title><style>%s</style></head><body>\n%s\n</body></html>\n"
                   % (esc(title), _CSS, "\n".join(body)))


def render_html(records, summary, meta=None):
    """A self-contained HTML page (inline CSS and SVG, no scripts, no external resources)."""
    return render(ReportView(records, summary, meta))
