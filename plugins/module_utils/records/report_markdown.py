# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""report.md: the run as Markdown, one function per section, from the view model."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_model import (
    BAD,
    VERDICT_ORDER,
    ReportView,
    baseline_text,
    check_name,
    fmt_value,
    md_cell,
    pct,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits

# A matrix wider than this is written as a list of pairs.
MATRIX_MAX_HOSTS = 16
# The "what to do" list names this many culprits; results.json has them all.
TOP_CULPRITS = 20


def _table(header, rows):
    """A Markdown table: the header cells, the separator and one line per row of cells."""
    lines = ["| %s |" % " | ".join(header), "|---" * len(header) + "|"]
    lines.extend("| %s |" % " | ".join(row) for row in rows)
    return lines


def _head(view):
    summary = view.summary
    counts_text = [str(summary["counts"].get(v, 0)) for v in VERDICT_ORDER]
    lines = ["# commcheck report: run %s" % (summary.get("run_id") or "-"), "",
             "Generated %s. Verdict: **%s**." % (summary.get("generated") or "-", summary["verdict"].upper()), ""]
    lines += _table(["checks"] + list(VERDICT_ORDER) + ["regressions"],
                    [[str(summary["total"])] + counts_text + [str(summary["regressions"])]])
    found = summary.get("culprits") or []
    if found:
        lines += ["", "## What to do", ""]
        lines += ["%d. %s" % (n + 1, md_cell(text)) for n, text in enumerate(culprits.action_lines(found[:TOP_CULPRITS]))]
        if len(found) > TOP_CULPRITS:
            lines.append("- %d more in results.json (summary.culprits)" % (len(found) - TOP_CULPRITS))
    lines += ["", "- Bad hosts: %s" % (", ".join(summary["bad_hosts"]) or "none"),
              "- Bad NICs: %s" % (", ".join(summary.get("bad_nics") or []) or "none"),
              "- Bad links: %s" % (", ".join(summary["bad_links"]) or "none")]
    if summary.get("regressions"):
        lines.append("- Regressed hosts: %s" % (", ".join(summary["regressed_hosts"]) or "none"))
        lines.append("- Regressed links: %s" % (", ".join(summary["regressed_links"]) or "none"))
    return lines + [""]


def _regressions(view):
    lines = ["## Regressions", ""]
    base = view.baseline
    if base:
        lines += ["Baseline: %s; threshold %s." % (baseline_text(base), "%.0f%%" % (float(base.get("threshold", 0)) * 100)),
                  ""]
    if view.regressions:
        lines += _table(["check", "metric", "baseline", "now", "change"],
                        [[md_cell(check_name(reg)), str(reg["metric"]), fmt_value(reg["baseline"]), fmt_value(reg["value"]),
                          pct(reg["change"])] for reg in view.regressions])
    else:
        lines.append("None.")
    return lines + [""]


def _findings(view):
    lines = ["## Findings", ""]
    if view.findings:
        lines += _table(["verdict", "check", "cause", "fix"],
                        [[str(r.get("verdict")), md_cell(check_name(r)), md_cell(r.get("cause")), md_cell(r.get("fix"))]
                         for r in view.findings])
    else:
        lines.append("None.")
    return lines + [""]


def _versions(view):
    """The tool, library and firmware versions by host (a tool with several versions marked)."""
    if not view.versions:
        return []
    rows = [[md_cell(r["tool"]) + (" (mixed)" if r["mixed"] else ""), md_cell(r["version"]), md_cell(r["hosts"]),
             str(r["count"])] for r in view.versions]
    return ["## Versions", ""] + _table(["tool", "version", "hosts", "count"], rows) + [""]


def _matrix_cell(data):
    if data is None:
        return ""
    mark = " **!**" if data["verdict"] in BAD else ""
    mark += " (regr.)" if data["regression"] else ""
    return "%s (%.0f%%)%s" % (fmt_value(data["value"]), data["fraction"] * 100, mark)


def _flows_line(hm):
    return "Rows send, columns receive (row -> column); data flows %s." % ", ".join(hm["flows"])


def _heatmap(hm):
    lines = ["## Bandwidth: %s (Gb/s, %% of %s)" % (hm["title"], "best" if hm["relative"] else "expected"), "",
             _flows_line(hm), ""]
    hosts = hm["hosts"]
    if len(hosts) <= MATRIX_MAX_HOSTS:
        lines += _table(["sender \\ receiver"] + [md_cell(h) for h in hosts],
                        [[md_cell(sender)] + [_matrix_cell(hm["cells"].get((sender, receiver))) for receiver in hosts]
                         for sender in hosts])
    else:
        lines += _table(["sender", "receiver", "Gb/s", "fraction", "verdict"],
                        [[md_cell(sender), md_cell(receiver), fmt_value(data["value"]),
                          "%.0f%%" % (data["fraction"] * 100), str(data["verdict"])]
                         for (sender, receiver), data in sorted(hm["cells"].items())])
    return lines + [""]


def _heatmaps(view):
    lines = []
    for hm in view.heatmaps:
        lines += _heatmap(hm)
    return lines


def _latency(view):
    if not view.latency:
        return []
    rows = [[str(row["kind"]), str(row["op"]), md_cell(row["flow"]), md_cell(row["params"]),
             fmt_value(row["lat_us"]), fmt_value(row["p99_us"]),
             "%s%s" % (row["verdict"], " (regr.)" if row["regression"] else "")] for row in view.latency]
    return (["## Latency (us)", ""]
            + _table(["kind", "op", "hosts (a->b: a sends)", "params", "latency", "p99", "verdict"], rows) + [""])


def _collectives(view):
    if not view.series:
        return []
    rows = [[md_cell(entry["name"]), md_cell(entry.get("transport") or "-"), "%d" % int(size), fmt_value(value)]
            for entry in view.series for size, value in entry["points"]]
    return (["## Collectives: bus bandwidth (GB/s) by message size", ""]
            + _table(["series", "transport", "size (bytes)", "busbw"], rows) + [""])


def _retests(view):
    if not view.retests:
        return []
    rows = [[md_cell(check_name(r)), str(r.get("verdict")), md_cell(r.get("cause"))] for r in view.retests]
    return ["## Retests", ""] + _table(["check", "verdict", "cause"], rows) + [""]


def _by_kind(view):
    by_kind = view.summary["by_kind"]
    rows = [[str(kind)] + [str(by_kind[kind].get(v, 0)) for v in VERDICT_ORDER] for kind in sorted(by_kind, key=str)]
    return ["## Checks by kind", ""] + _table(["kind"] + list(VERDICT_ORDER), rows) + [""]


SECTIONS = (_head, _regressions, _findings, _versions, _heatmaps, _latency, _collectives, _retests, _by_kind)


def render(view):
    lines = []
    for section in SECTIONS:
        lines += section(view)
    return "\n".join(lines)


def render_markdown(records, summary, meta=None):
    return render(ReportView(records, summary, meta))
