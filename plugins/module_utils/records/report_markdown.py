# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""report.md: the run as Markdown, one function per section, from the view model.

Like report.html it reads the same at 4 and at 4,096 hosts: the verdict,
what to do and the regressions first, then the host x rail grid (its worst
NICs beyond MATRIX_MAX_HOSTS hosts), findings grouped by code, and every
table bounded (the worst rows; results.json has them all).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_fleet
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_gpu
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_collectives import lowest_series
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_model import (
    ReportView,
    baseline_text,
    check_name,
    leaf_cell_text,
    leaf_hosts_text,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_values import (
    BAD,
    VERDICT_ORDER,
    fmt_value,
    md_cell,
    pct,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.visible_text import visible
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits

# A matrix (and the host x rail grid) wider than this is written as its worst rows instead.
MATRIX_MAX_HOSTS = 16
WORST_ROWS = 50
RETEST_ROWS = 200
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
        lines += ["%d. %s" % (n + 1, md_cell(text))
                  for n, text in enumerate(culprits.action_lines(found[:TOP_CULPRITS]))]
        if len(found) > TOP_CULPRITS:
            lines.append("- %d more in results.json (summary.culprits)" % (len(found) - TOP_CULPRITS))
    lines += ["", "- Bad hosts: %s" % _names(summary["bad_hosts"]),
              "- Bad NICs: %s" % _names(summary.get("bad_nics")),
              "- Bad links: %s" % _names(summary["bad_links"])]
    if summary.get("regressions"):
        lines.append("- Regressed hosts: %s" % _names(summary["regressed_hosts"]))
        lines.append("- Regressed links: %s" % _names(summary["regressed_links"]))
        lines += ["- Regressed together (a shared cause, not these pairs): %s" % md_cell(text)
                  for text in summary.get("regressed_together") or []]
    return lines + [""]


def _names(names, limit=20):
    """'a, b' or 'none'; a long list ends with '+N more (results.json)'."""
    names = list(names or [])
    text = ", ".join(md_cell(n) for n in names[:limit]) or "none"
    return text + (" +%d more (results.json)" % (len(names) - limit) if len(names) > limit else "")


def _regressions(view):
    lines = ["## Regressions", ""]
    base = view.baseline
    if base:
        threshold = "%.0f%%" % (float(base.get("threshold", 0)) * 100)
        lines += ["Baseline: %s; threshold %s." % (baseline_text(base), threshold), ""]
    if view.regressions:
        regs = report_fleet.worst(view.regressions, WORST_ROWS, key=lambda r: -abs(r.get("change") or 0.0))
        lines += _table(["check", "metric", "baseline", "now", "change"],
                        [[md_cell(check_name(reg)), md_cell(reg["metric"]), fmt_value(reg["baseline"]),
                          fmt_value(reg["value"]), pct(reg["change"])] for reg in regs])
        if len(regs) < len(view.regressions):
            lines += ["", "The %d largest of %d regressions (all in results.json)."
                      % (len(regs), len(view.regressions))]
    else:
        lines.append("None.")
    return lines + [""]


def _evidence_cell(group):
    lines = list(group["examples"]) + (["+%d more" % group["more"]] if group["more"] > 0 else [])
    return md_cell("; ".join(lines))


def _findings(view):
    """One row per finding code: severity, the hosts as ranges, how many records, cause, fix, example evidence."""
    lines = ["## Findings", ""]
    groups = report_fleet.groups(view)
    if groups:
        lines += _table(["severity", "finding: hosts", "records", "cause", "fix", "evidence"],
                        [[g["severity"], md_cell("**%s**: %s" % (g["title"], g["hosts_text"])),
                          md_cell(report_fleet.verdicts_text(g["verdicts"])), md_cell(g["cause"]), md_cell(g["fix"]),
                          _evidence_cell(g)] for g in groups])
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
    text = "Rows send, columns receive (row -> column); data flows %s." % ", ".join(hm["flows"])
    merged = sum(1 for data in (hm["cells"] or {}).values() if data["count"] > 1)
    if merged:
        text += (" %d cells hold several records of their link (rails, devices): each shows the worst "
                 "(results.json has them all)." % merged)
    return text


def _heatmap(hm):
    lines = ["## Bandwidth: %s (Gb/s, %% of %s)" % (hm["title"], "best" if hm["relative"] else "expected"), "",
             _flows_line(hm), ""]
    hosts = hm["hosts"]
    if hm["cells"] is not None and len(hosts) <= MATRIX_MAX_HOSTS:
        lines += _table(["sender \\ receiver"] + [md_cell(h) for h in hosts],
                        [[md_cell(sender)] + [_matrix_cell(hm["cells"].get((sender, receiver))) for receiver in hosts]
                         for sender in hosts])
    else:
        lines += ["The %d worst of %d links (%d hosts):" % (len(hm["worst"]), hm["links"], len(hosts)), ""]
        lines += _table(["#", "link (a->b: a sends)", "rail", "device", "Gb/s", "of expected", "verdict"],
                        [[str(n + 1), md_cell(r["flow"]), fmt_value(r["rail"]), md_cell(r["device"]),
                          fmt_value(r["value"]), _pct(r["fraction"]),
                          "%s%s" % (r["verdict"], " (regr.)" if r["regression"] else "")]
                         for n, r in enumerate(hm["worst"])])
    return lines + [""]


def _pct(fraction):
    return "-" if fraction is None else "%.0f%%" % (fraction * 100)


def _grid_cell(data):
    return "" if data is None else _pct(data["fraction"]) + (" **!**" if data["bad"] else "")


def _grid(view):
    """Hosts by rail: the whole grid for a few hosts, else the worst host NICs."""
    grid = report_fleet.grid(view)
    if not grid["cells"]:
        return []
    lines = ["## Hosts by rail (worst %% of %s per host NIC)" % ("best" if grid["relative"] else "expected"), ""]
    hosts, rails = grid["hosts"], grid["rails"]
    if len(hosts) <= MATRIX_MAX_HOSTS:
        lines += _table(["host \\ rail"] + [md_cell(r) for r in rails],
                        [[md_cell(h)] + [_grid_cell(grid["cells"].get((h, r))) for r in rails] for h in hosts])
        return lines + [""]
    worst = report_fleet.worst_nics(grid, WORST_ROWS)
    lines += ["%d hosts x %d rails; the %d worst host NICs:" % (len(hosts), len(rails), len(worst)), ""]
    lines += _table(["host", "rail", "worst", "Gb/s", "worst partner", "check", "failing records"],
                    [[md_cell(h), md_cell(r), _pct(c["fraction"]), fmt_value(c["value"]), md_cell(c["partner"]),
                      md_cell(c["check"]), "%d/%d" % (c["bad"], c["records"])] for h, r, c in worst])
    return lines + [""]


def _leaves(view):
    """Each host's leaf switch per rail and where it was read (host x rail up to MATRIX_MAX_HOSTS hosts, else each
    leaf's hosts); only when the topology is known."""
    leaves = view.leaves
    if not leaves["cells"]:
        return []
    lines = ["## Leaf switches (%d hosts, %d leaves)" % (len(leaves["hosts"]), len(leaves["by_leaf"])), ""]
    rails = leaves["rails"]
    if len(leaves["hosts"]) <= MATRIX_MAX_HOSTS:
        lines += _table(["host \\ rail"] + [str(r) for r in rails],
                        [[md_cell(h)] + [md_cell(leaf_cell_text(leaves["cells"].get((h, r)))) for r in rails]
                         for h in leaves["hosts"]])
    else:
        lines += _table(["leaf", "rails", "hosts", "source"],
                        [[md_cell(e["leaf"]), ", ".join(str(r) for r in e["rails"]),
                          md_cell("%d: %s" % (len(e["hosts"]), leaf_hosts_text(e["hosts"]))),
                          md_cell(", ".join(e["sources"]))]
                         for e in leaves["by_leaf"]])
    return lines + [""]


def _gpus(view):
    """GPU-memory against host-memory bandwidth of every GPU tested from GPU memory (GPU x NIC), when any was."""
    table = view.gpus
    if not table["rows"]:
        return []
    rows, note = report_gpu.shown_rows(table)
    lines = ["## GPUDirect RDMA: GPU memory against host memory (%d GPUs%s)" % (len(table["rows"]), note), ""]
    lines += _table([md_cell(h) for h in report_gpu.header(table)],
                    [[md_cell(c) for c in report_gpu.row_cells(table, row)] for row in rows])
    return lines + [""]


def _heatmaps(view):
    lines = []
    for hm in view.heatmaps:
        lines += _heatmap(hm)
    return lines


def _latency(view):
    if not view.latency_entries:
        return []
    shown = report_fleet.slowest_latency(view, WORST_ROWS)
    rows = [[md_cell(row["kind"]), md_cell(row["op"]), md_cell(row["flow"]), md_cell(row["params"]),
             fmt_value(row["lat_us"]), fmt_value(row["p99_us"]), fmt_value(row["t_max_us"]),
             "%s%s" % (row["verdict"], " (regr.)" if row["regression"] else "")] for row in shown]
    count = len(view.latency_entries)
    note = [] if len(shown) == count else [
        "The %d slowest of %d latency results (all in results.json)." % (len(shown), count), ""]
    return (["## Latency (us)", ""] + note
            + _table(["kind", "op", "hosts (a->b: a sends)", "params", "latency", "p99", "max", "verdict"], rows)
            + [""])


def _collectives(view):
    if not view.series:
        return []
    shown = lowest_series(view.series)
    rows = [[md_cell(entry["name"]), md_cell(entry.get("transport") or "-"), "%d" % int(size), fmt_value(value)]
            for entry in shown for size, value in entry["points"]]
    note = [] if len(shown) == len(view.series) else [
        "The %d of %d series with the lowest bus bandwidth (all in results.json)." % (len(shown), len(view.series)),
        ""]
    # which series failed, and which failed and then passed on retest (flaky)
    verdicts = [[md_cell(entry["name"]), md_cell(entry["verdict"])] for entry in shown
                if entry.get("verdict") not in (None, "pass")]
    return (["## Collectives: bus bandwidth (GB/s) by message size", ""] + note
            + _table(["series", "transport", "size (bytes)", "busbw"], rows) + [""]
            + (_table(["series", "verdict"], verdicts) + [""] if verdicts else []))


def _retests(view):
    if not view.retests:
        return []
    rows = [[md_cell(check_name(r)), md_cell(r.get("verdict")), md_cell(r.get("cause"))]
            for r in view.retests[:RETEST_ROWS]]
    note = [] if len(rows) == len(view.retests) else [
        "The first %d of %d retests (all in results.json)." % (len(rows), len(view.retests)), ""]
    return ["## Retests", ""] + note + _table(["check", "verdict", "cause"], rows) + [""]


def _by_kind(view):
    by_kind = view.summary["by_kind"]
    rows = [[str(kind)] + [str(by_kind[kind].get(v, 0)) for v in VERDICT_ORDER] for kind in sorted(by_kind, key=str)]
    return ["## Checks by kind", ""] + _table(["kind"] + list(VERDICT_ORDER), rows) + [""]


SECTIONS = (_head, _regressions, _grid, _leaves, _gpus, _findings, _versions, _heatmaps, _latency, _collectives, _retests, _by_kind)


def render(view):
    lines = []
    for section in SECTIONS:
        lines += section(view)
    return visible("\n".join(lines))


def render_markdown(records, summary, meta=None):
    return render(ReportView(records, summary, meta))
