# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""report.html's building blocks and its fleet-sized sections: the host x rail grid, the bandwidth matrices or
worst-links tables, the findings grouped by code, latency and the checks table (report_html.py puts them together).

Every table here has a bounded number of rows, whatever the number of
records: the page of a 1,024-host run stays a few MB (docs/reports.md).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_fleet
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_gpu
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.record_flow import flow_label
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_model import (
    MATRIX_MAX_HOSTS,
    leaf_cell_text,
    leaf_hosts_text,
    params_text,
    sorted_records,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_values import esc, fmt_value
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_svg import (
    HOST_ANCHOR_PREFIX,
    grid_tips_every_cell,
    host_anchor,
    svg_heatmap,
    svg_host_rail_grid,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.baseline import DEFAULT_IGNORE_PARAMS

# A matrix this small is shown open; larger ones (up to report_model.MATRIX_MAX_HOSTS) are folded.
OPEN_MATRIX_HOSTS = 16
LATENCY_ROWS = 50
CHECK_ROWS = 500
WORST_NIC_ROWS = 20


# --------------------------------------------------------------------------
# building blocks
# --------------------------------------------------------------------------

def verdict_span(verdict):
    return '<span class="%s">%s</span>' % (esc(verdict), esc(verdict))


def html_table(headers, rows, row_classes=None):
    out = ["<table><thead><tr>%s</tr></thead><tbody>" % "".join("<th>%s</th>" % esc(h) for h in headers)]
    for index, row in enumerate(rows):
        cls = row_classes[index] if row_classes else ""
        out.append('<tr%s>%s</tr>' % (' class="%s"' % cls if cls else "", "".join("<td>%s</td>" % c for c in row)))
    out.append("</tbody></table>")
    return "".join(out)


def none_text(text):
    return '<p class="muted">%s</p>' % text


def fold(section_id, title, body, is_open=False):
    """A section folded under its title (``<details>``): the page opens on the verdict, not on every table."""
    return ['<details class="section"%s><summary><h2 id="%s">%s</h2></summary>%s</details>'
            % (" open" if is_open else "", esc(section_id), esc(title), "".join(body))]


def _pct(fraction):
    return "-" if fraction is None else "%.0f%%" % (fraction * 100)


# --------------------------------------------------------------------------
# host x rail grid
# --------------------------------------------------------------------------

def grid_section(view):
    """The main picture, open: one row per host, one column per rail, colour the NIC's worst fraction."""
    grid = report_fleet.grid(view)
    body = ['<h2 id="grid">Hosts by rail</h2>']
    if not grid["cells"]:
        return body + [none_text("No bandwidth results in this run.")]
    marks = report_fleet.marked_hosts(view.summary)
    tips_where = "" if grid_tips_every_cell(grid) else (
        " with a failing record or of a host a culprit names (the worst NICs are listed below)")
    body.append('<p class="muted">%d hosts (name order) x %d rails: each host NIC\'s worst fraction of the expected '
                'bandwidth over its pair records; a black bar marks a host a culprit names; hover a cell%s for the '
                'value and the worst partner. To find a host, open this page with <code>#%sNAME</code> after its '
                'address (for example <code>report.html#%s</code>): it opens on that host\'s row, named and '
                'outlined.</p>' % (len(grid["hosts"]), len(grid["rails"]), tips_where,
                                   HOST_ANCHOR_PREFIX, esc(host_anchor(grid["hosts"][0]))))
    body.append('<figure class="grid-figure">%s</figure>' % svg_host_rail_grid(grid, marks))
    worst = [item for item in report_fleet.worst_nics(grid, WORST_NIC_ROWS) if item[2]["fraction"] < 0.9]
    if worst:
        body.append('<details><summary>%d worst host NICs (below 90%%)</summary>' % len(worst))
        body.append(html_table(["host", "rail", "worst fraction", "Gb/s", "worst partner", "check",
                                "failing records"],
                               [[esc(h), esc(r), esc(_pct(c["fraction"])), esc(fmt_value(c["value"])),
                                 esc(c["partner"]), esc(c["check"]), "%d/%d" % (c["bad"], c["records"])]
                                for h, r, c in worst]))
        body.append("</details>")
    return body


def leaves_section(view):
    """Each host's leaf switch per rail and where it was read, folded: host x rail up to MATRIX_MAX_HOSTS hosts, else
    each leaf with the hosts behind it; nothing without a topology."""
    leaves = view.leaves
    if not leaves["cells"]:
        return []
    if len(leaves["hosts"]) <= MATRIX_MAX_HOSTS:
        table = html_table(["host \\ rail"] + [str(r) for r in leaves["rails"]],
                           [[esc(h)] + [esc(leaf_cell_text(leaves["cells"].get((h, r)))) for r in leaves["rails"]]
                            for h in leaves["hosts"]])
    else:
        table = html_table(["leaf", "rails", "hosts", "source"],
                           [[esc(e["leaf"]), esc(", ".join(str(r) for r in e["rails"])),
                             esc("%d: %s" % (len(e["hosts"]), leaf_hosts_text(e["hosts"]))), esc(", ".join(e["sources"]))]
                            for e in leaves["by_leaf"]])
    return fold("leaves", "Leaf switches (%d hosts, %d leaves)" % (len(leaves["hosts"]), len(leaves["by_leaf"])),
                [table])


def gpus_section(view):
    """GPU-memory against host-memory bandwidth of every GPU tested from GPU memory (GPU x NIC), folded; a GPU a
    finding names is marked; nothing when no GPU was tested."""
    table = view.gpus
    if not table["rows"]:
        return []
    rows, note = report_gpu.shown_rows(table)
    classes = ["fail" if any(c.get("slow") for c in row["cells"].values()) else "" for row in rows]
    return fold("gpus", "GPUDirect RDMA: GPU memory against host memory (%d GPUs%s)" % (len(table["rows"]), note),
                [html_table(report_gpu.header(table), [[esc(c) for c in report_gpu.row_cells(table, row)]
                                                       for row in rows], classes)])


# --------------------------------------------------------------------------
# bandwidth: a matrix per check up to MATRIX_MAX_HOSTS hosts, its worst links beyond
# --------------------------------------------------------------------------

_MATRIX_NOTE = ('<p class="muted">Rows send, columns receive: write, send, atomic and iperf3 from the client to the '
                'server; read and iperf3 reverse from the server to the client; bidirectional fills both cells. '
                'Colour: fraction of expected (or of the best pair); black border: regression; hover for details.</p>')


def _worst_links_table(hm):
    rows = [[str(n + 1), esc(r["flow"]), esc(fmt_value(r["rail"])), esc(r["device"] or "-"),
             esc(fmt_value(r["value"])), esc(fmt_value(r["expected"])), esc(_pct(r["fraction"])),
             verdict_span(r["verdict"])] for n, r in enumerate(hm["worst"])]
    return html_table(["#", "link (a->b: a sends)", "rail", "device", "Gb/s", "expected", "of expected", "verdict"],
                      rows, ["regr" if r["regression"] else "" for r in hm["worst"]])


def _bandwidth_figure(hm):
    if hm["cells"] is not None:
        return ('<figure class="heatmap-figure" data-op="%s"><figcaption>%s (Gb/s): rows send, columns receive; '
                '%s</figcaption>%s</figure>' % (esc(hm["op"]), esc(hm["title"]), esc(", ".join(hm["flows"])),
                                                svg_heatmap(hm)))
    return ('<figure class="worst-links" data-op="%s"><figcaption>%s: the %d worst of %d links (%d hosts, too many '
            'for a matrix); %s</figcaption>%s</figure>'
            % (esc(hm["op"]), esc(hm["title"]), len(hm["worst"]), hm["links"], len(hm["hosts"]),
               esc(", ".join(hm["flows"])), _worst_links_table(hm)))


def bandwidth_section(view):
    maps = view.heatmaps
    if not maps:
        return fold("bandwidth", "Bandwidth by link", [none_text("No bandwidth results in this run.")])
    body = [_MATRIX_NOTE if any(hm["cells"] is not None for hm in maps) else ""]
    body += [_bandwidth_figure(hm) for hm in maps]
    small = all(hm["cells"] is not None and len(hm["hosts"]) <= OPEN_MATRIX_HOSTS for hm in maps)
    title = "Bandwidth heat maps" if any(hm["cells"] is not None for hm in maps) else "Bandwidth: worst links"
    return fold("bandwidth", title, body, is_open=small)


# --------------------------------------------------------------------------
# findings, one row per code
# --------------------------------------------------------------------------

def _examples(group):
    lines = ["<code>%s</code>" % esc(line) for line in group["examples"]]
    if group["more"] > 0:
        lines.append('<span class="muted">+%d more in results.json</span>' % group["more"])
    return "<br>".join(lines)


def findings_section(view):
    groups = report_fleet.groups(view)
    if not groups:
        return fold("findings", "Findings and fixes", ["<p>None.</p>"])
    rows = [['<span class="sev-%s">%s</span>' % (esc(g["severity"]), esc(g["severity"])),
             "<b>%s</b>: %s" % (esc(g["title"]), esc(g["hosts_text"])),
             esc(report_fleet.verdicts_text(g["verdicts"])), esc(g["cause"] or "-"), esc(g["fix"] or "-"),
             _examples(g)] for g in groups]
    body = ['<p class="muted">One row per finding code (or check that did not pass), worst severity first; the '
            'hosts it affects as ranges; the evidence lines are examples.</p>',
            html_table(["severity", "finding: hosts", "records", "cause", "fix", "evidence"], rows)]
    return fold("findings", "Findings and fixes (%d)" % len(groups), body)


# --------------------------------------------------------------------------
# latency and every check
# --------------------------------------------------------------------------

def latency_section(view):
    rows = report_fleet.slowest_latency(view, LATENCY_ROWS)
    if not rows:
        return fold("latency", "Latency", [none_text("No latency results in this run.")])
    count = len(view.latency_entries)
    note = "" if len(rows) == count else (
        '<p class="muted">The %d slowest of %d latency results (all in results.json).</p>' % (len(rows), count))
    table = html_table(["kind", "op", "hosts (a->b: a sends)", "params", "latency (us)", "p99 (us)", "max (us)",
                        "verdict"],
                       [[esc(r["kind"]), esc(r["op"]), esc(r["flow"]), esc(r["params"]), esc(fmt_value(r["lat_us"])),
                         esc(fmt_value(r["p99_us"])), esc(fmt_value(r["t_max_us"])), verdict_span(r["verdict"])]
                        for r in rows], ["regr" if r["regression"] else "" for r in rows])
    return fold("latency", "Latency", [note, table])


def _scalar_metrics_text(metrics):
    return ", ".join("%s=%s" % (k, fmt_value(v)) for k, v in sorted((metrics or {}).items())
                     if v is not None and not isinstance(v, (list, dict)))


def _listed_checks(checks):
    """Every check when there are at most CHECK_ROWS, else the ones that did not pass (CHECK_ROWS at most)."""
    if len(checks) <= CHECK_ROWS:
        return sorted_records(checks)
    return sorted_records([r for r in checks if r.get("verdict") != "pass"])[:CHECK_ROWS]


def all_checks_section(view):
    checks = _listed_checks(view.checks)
    note = "" if len(checks) == len(view.checks) else (
        '<p class="muted">%d of %d checks: the ones that did not pass (every check is in results.json).</p>'
        % (len(checks), len(view.checks)))
    table = html_table(["verdict", "kind", "hosts (a->b: a sends)", "params", "metrics", "cause"],
                       [[verdict_span(r.get("verdict")), esc(r.get("kind")), esc(flow_label(r)),
                         esc(params_text(r.get("params"), skip=DEFAULT_IGNORE_PARAMS)),
                         esc(_scalar_metrics_text(r.get("metrics"))), esc(r.get("cause") or "")] for r in checks],
                       ["regr" if r.get("regression") else "" for r in checks])
    return fold("checks", "All checks (%d)" % len(view.checks), [note, table])


def worst_first(regressions, limit):
    """The ``limit`` regressions of the largest relative change, largest first."""
    return report_fleet.worst(regressions, limit, key=lambda r: -abs(r.get("change") or 0.0))
