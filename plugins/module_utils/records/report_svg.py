# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Inline SVG of the HTML report: the host x rail grid, bandwidth heat maps and the bus-bandwidth chart."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import math
from urllib.parse import quote

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_identity import short_names
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_values import BAD, esc, fmt_value

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


# Width of a character of the 11 px (9 px) sans-serif labels, on the wide side: a label's room is counted from it.
CHAR_W = 7.0
SMALL_CHAR_W = 6.0


def label_width(labels, char_w=CHAR_W, least=0):
    """Pixels a column of labels needs (with a margin): the longest one whole, never less than ``least``."""
    return max(least, int(12 + char_w * max([len(text) for text in labels] + [0])))


def host_label(host, label, attrs):
    """A host's name on an axis: its short label (report_identity.short_names), the full name as its tooltip."""
    text = "<text %s>%s</text>" % (attrs, esc(label))
    return text if label == host else "<g><title>%s</title>%s</g>" % (esc(host), text)


# the prefix of a host's row in the grid: report.html#host-NAME opens the page on that row
HOST_ANCHOR_PREFIX = "host-"


def host_anchor(host):
    """The id of a host's row in the grid: ``host-`` and the name, any character but letters, digits and ``-._~``
    percent-encoded (a unique id without spaces; report.html#host-NAME is the same text in a link). A name that
    is no valid text (a lone surrogate) keeps its code points' bytes, so it stays apart from every other."""
    return HOST_ANCHOR_PREFIX + quote(str(host), safe="", errors="surrogatepass")


def _axis_labels(hosts, labels, label_w, top, cell):
    """Host names down the rows (senders) and along the columns (receivers), and what the axes are."""
    parts = ['<text class="axis" x="4" y="%d">rows send,</text>' % (top - 22),
             '<text class="axis" x="4" y="%d">columns receive</text>' % (top - 8)]
    for i, host in enumerate(hosts):
        y = top + i * cell + cell / 2.0 + 4
        parts.append(host_label(host, labels[host], 'class="row" x="%d" y="%.1f" text-anchor="end"' % (label_w - 6, y)))
        x = label_w + i * cell + cell / 2.0
        parts.append(host_label(host, labels[host], 'class="col" transform="translate(%.1f,%d) rotate(-60)"'
                                % (x, top - 6)))
    return parts


def _cell_tip(data):
    return "%s: %s Gb/s (%s of %s)%s%s%s" % (
        data["detail"], fmt_value(data["value"]), "%.0f%%" % (data["fraction"] * 100),
        "best" if data["expected"] is None else "%s Gb/s expected" % fmt_value(data["expected"]),
        ", verdict %s" % data["verdict"], ", REGRESSION" if data["regression"] else "",
        "; the worst of %d records of this link (rails, devices)" % data["count"] if data["count"] > 1 else "")


def _cell(data, x, y, cell, diagonal, show_text):
    """One cell: an empty square, or the coloured value with its tooltip (and black border when it regressed)."""
    if data is None:
        return ['<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#ffffff"/>'
                % (x, y, cell, cell, "#ffffff" if diagonal else "#f4f4f4")]
    stroke = ' stroke="#000000" stroke-width="3"' if data["regression"] else ' stroke="#ffffff"'
    parts = ['<rect class="cell v-%s" x="%d" y="%d" width="%d" height="%d" fill="%s"%s><title>%s</title></rect>'
             % (esc(data["verdict"]), x, y, cell, cell, fraction_color(data["fraction"]), stroke,
                esc(_cell_tip(data)))]
    if show_text:
        parts.append('<text class="v" x="%.1f" y="%.1f" text-anchor="middle">%s</text>'
                     % (x + cell / 2.0, y + cell / 2.0 + 4, esc(fmt_value(data["value"]))))
    return parts


def _legend(label_w, legend_y, relative):
    parts = ['<rect x="%d" y="%d" width="20" height="10" fill="%s"/>'
             % (label_w + k * 20, legend_y, fraction_color(k / 10.0)) for k in range(11)]
    parts.append('<text x="%d" y="%d">0%%</text><text x="%d" y="%d">100%% of %s</text>' % (
        label_w, legend_y + 22, label_w + 180, legend_y + 22, "best" if relative else "expected"))
    return parts


def svg_heatmap(hm, cell=None):
    """The heat map of one op: rows send, columns receive (``hm["cells"]`` keyed (sender, receiver))."""
    hosts = hm["hosts"]
    n = len(hosts)
    cell = cell or (44 if n <= 12 else 28 if n <= 24 else max(6, 700 // max(n, 1)))
    labels = short_names(hosts)
    # the longest label whole; rotated by 60 degrees the column labels need about as much room above the cells
    label_w = label_width(labels.values(), least=label_width(["columns receive"]))
    top = label_w
    # a column label leans right as it rises (cos 60 = 0.5): the last one needs half its length beyond the cells
    overhang = max(10, int(CHAR_W * max([len(text) for text in labels.values()] + [0]) / 2 - cell / 2.0) + 6)
    width, height = max(label_w + n * cell + overhang, label_w + 330), top + n * cell + 40
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" class="heatmap" width="%d" height="%d" '
             'viewBox="0 0 %d %d" role="img" aria-label="%s">' % (
                 width, height, width, height,
                 esc("bandwidth heat map %s, rows send to columns" % hm["title"]))]
    parts.append('<style>text{font:11px sans-serif}.v{font-size:10px}.axis{fill:#555555}</style>')
    parts += _axis_labels(hosts, labels, label_w, top, cell)
    for i, sender in enumerate(hosts):
        for j, receiver in enumerate(hosts):
            parts += _cell(hm["cells"].get((sender, receiver)), label_w + j * cell, top + i * cell, cell, i == j,
                           cell >= 28)
    parts += _legend(label_w, top + n * cell + 14, hm["relative"])
    parts.append("</svg>")
    return "".join(parts)


# The host x rail grid: up to GRID_LABELLED_HOSTS hosts one labelled row each; beyond, thin rows in blocks of
# GRID_BLOCK hosts side by side, a label every GRID_LABEL_EVERY rows, and the value of each cell in its tooltip.
GRID_LABELLED_HOSTS = 64
GRID_BLOCK = 128
GRID_LABEL_EVERY = 16
GRID_WIDTH = 1200
# Cells that each get their tooltip (2,048 hosts x 8 rails); a bigger grid gives one only to the cells with a
# failing record and those of the hosts a culprit names, or 4,096 hosts' tooltips alone would pass 5 MB.
GRID_TIPPED_CELLS = 16384


def _grid_layout(labels, n_rails):
    """Cell size, block height and label width of the grid (room for the longest label, whole)."""
    if len(labels) <= GRID_LABELLED_HOSTS:
        return {"row": 16, "col": 40 if n_rails <= 4 else 24, "block": max(len(labels), 1),
                "label": label_width(labels, least=110), "every": 1}
    return {"row": 5, "col": 10, "block": GRID_BLOCK, "label": label_width(labels, SMALL_CHAR_W, least=54),
            "every": GRID_LABEL_EVERY}


def _grid_tip(host, rail, data, relative):
    return "%s rail %s: %.0f%% of %s (%s Gb/s%s), worst partner %s, %s, %d record(s), %d failing" % (
        host, rail, data["fraction"] * 100, "best" if relative and data["expected"] is None else "expected",
        fmt_value(data["value"]), "" if data["expected"] is None else " of %s" % fmt_value(data["expected"]),
        data["partner"], data["check"], data["records"], data["bad"])


def grid_tips_every_cell(grid):
    """Whether every cell of the grid gets its tooltip (:data:`GRID_TIPPED_CELLS`)."""
    return len(grid["hosts"]) * len(grid["rails"]) <= GRID_TIPPED_CELLS


def _grid_block(grid, hosts, x0, y0, lay, marks, labels):
    """One block of rows: labels, the culprit marks and the cells."""
    parts = []
    rails, relative = grid["rails"], grid["relative"]
    cells_x = x0 + lay["label"]
    tip_all = grid_tips_every_cell(grid)
    for j, rail in enumerate(rails):
        parts.append('<text class="r" x="%.1f" y="%d" text-anchor="middle">%s</text>'
                     % (cells_x + j * lay["col"] + lay["col"] / 2.0, y0 - 4, esc(rail)))
    for i, host in enumerate(hosts):
        y = y0 + i * lay["row"]
        parts.append('<g class="h" id="%s">' % esc(host_anchor(host)))
        label_at = 'x="%d" y="%d" text-anchor="end"' % (cells_x - 6, y + (12 if lay["row"] >= 12 else 7))
        if i % lay["every"] == 0:
            parts.append(host_label(host, labels[host], 'class="host" ' + label_at))
        else:
            # drawn only when the page is opened on this row (report.html#host-NAME, CSS :target)
            parts.append('<text class="t" %s>%s</text>' % (label_at, esc(labels[host])))
        if host in marks:
            parts.append('<rect class="mark" x="%d" y="%d" width="4" height="%d" fill="#000000"><title>%s: %s'
                         '</title></rect>' % (cells_x - 5, y, lay["row"], esc(host), esc(marks[host])))
        for j, rail in enumerate(rails):
            data = grid["cells"].get((host, rail))
            fill = "#f4f4f4" if data is None else fraction_color(data["fraction"])
            rect = '<rect class="g" x="%d" y="%d" width="%d" height="%d" fill="%s"' % (
                cells_x + j * lay["col"], y, lay["col"] - 1, lay["row"] - (1 if lay["row"] > 6 else 0), fill)
            if data is None:
                parts.append('%s><title>%s</title></rect>' % (rect, esc("%s rail %s: not measured" % (host, rail))))
            elif tip_all or data["bad"] or host in marks:
                parts.append('%s><title>%s</title></rect>' % (rect, esc(_grid_tip(host, rail, data, relative))))
            else:
                parts.append('%s/>' % rect)
        parts.append("</g>")
    return parts


# the row a link opens the page on (report.html#host-NAME): its name shown, its cells outlined
_TARGET_CSS = (".t{display:none}g.h:target .t{display:inline;font-weight:bold}"
               "g.h:target rect.g{stroke:#000000;stroke-width:1.5}")


def svg_host_rail_grid(grid, marks=None):
    """The host x rail grid: rows hosts (natural order), columns rails, colour the NIC's worst fraction.

    ``marks``: {host: reason} of hosts a culprit names; their rows get a
    black bar left of the cells. Many hosts wrap into blocks side by side.
    Each host's row is a group with the id :func:`host_anchor`, so a link
    ending in ``#host-NAME`` opens the page on it, named and outlined.
    """
    marks = marks or {}
    hosts, rails = grid["hosts"], grid["rails"]
    labels = short_names(hosts)
    lay = _grid_layout([labels[h] for h in hosts], len(rails))
    block_w = lay["label"] + len(rails) * lay["col"] + 10
    per_line = max(1, min(GRID_WIDTH // block_w, (len(hosts) + lay["block"] - 1) // lay["block"]))
    blocks = [hosts[k:k + lay["block"]] for k in range(0, len(hosts), lay["block"])] or [[]]
    block_h = 20 + lay["block"] * lay["row"] + 10
    lines = (len(blocks) + per_line - 1) // per_line
    width, height = max(per_line * block_w, lay["label"] + 300), lines * block_h + 40
    label = "host by rail grid: %d hosts, %d rails" % (len(hosts), len(rails))
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" class="railgrid" width="%d" height="%d" viewBox="0 0 %d %d" '
             'role="img" aria-label="%s">' % (width, height, width, height, esc(label)),
             '<style>text{font:%dpx sans-serif}.r{fill:#555555}%s</style>' % (11 if lay["row"] >= 12 else 9, _TARGET_CSS)]
    for index, block in enumerate(blocks):
        parts += _grid_block(grid, block, (index % per_line) * block_w, (index // per_line) * block_h + 20, lay, marks,
                             labels)
    parts += _legend(lay["label"], lines * block_h + 8, grid["relative"])
    parts.append("</svg>")
    return "".join(parts)


_SERIES_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
_SERIES_DASHES = ("", "6,3", "2,2", "8,3,2,3")


def _size_label(size):
    for unit, factor in (("G", 2 ** 30), ("M", 2 ** 20), ("K", 2 ** 10)):
        if size >= factor:
            return "%g%s" % (round(size / factor, 1), unit)
    return "%g" % size


def _series_style(index):
    """(colour, dash) of the index-th line: eight colours, then the same colours in three dash patterns (32 looks)."""
    return _SERIES_COLORS[index % len(_SERIES_COLORS)], _SERIES_DASHES[(index // len(_SERIES_COLORS)) % len(_SERIES_DASHES)]


def _legend_rows(series, x, y0):
    """One legend row per line, under the chart: its sample, its whole name and '(fail)' when it failed."""
    parts = []
    for index, entry in enumerate(series):
        color, dash = _series_style(index)
        y = y0 + index * 16
        parts.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                     % (x, x + 24, y - 4, y - 4, color, ' stroke-dasharray="%s"' % dash if dash else ""))
        parts.append('<text class="legend" x="%d" y="%d">%s%s</text>'
                     % (x + 30, y, esc(entry["name"]), " (fail)" if entry["verdict"] in BAD else ""))
    return parts


def svg_busbw_chart(series, width=720, height=360):
    """Line chart: bus bandwidth (GB/s) against message size (bytes, log2 axis); the legend below, names whole."""
    left, right, top, bottom = 60, 20, 20, 50
    plot_w, plot_h = width - left - right, height - top - bottom
    width = max(width, left + 30 + label_width([e["name"] + " (fail)" for e in series]))
    total_h = height + 16 * len(series) + 8
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
             'role="img" aria-label="collective bus bandwidth against message size">' % (width, total_h, width, total_h),
             '<style>text{font:11px sans-serif}</style>',
             '<rect x="%d" y="%d" width="%d" height="%d" fill="#fafafa" stroke="#999999"/>' % (left, top, plot_w, plot_h)]
    for k in range(6):
        value = y1 * k / 5.0
        y = sy(value)
        parts.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e0e0e0"/>' % (left, left + plot_w, y, y))
        parts.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (left - 4, y + 4, fmt_value(value)))
    step = max(1, int(math.ceil((x1 - x0) / 10.0)))
    tick = int(math.ceil(x0))
    while tick <= x1:
        x = sx(2 ** tick)
        parts.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#e0e0e0"/>' % (x, x, top, top + plot_h))
        parts.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'
                     % (x, top + plot_h + 14, esc(_size_label(2 ** tick))))
        tick += step
    parts.append('<text x="%d" y="%d" text-anchor="middle">message size (bytes)</text>'
                 % (left + plot_w // 2, height - 10))
    parts.append('<text transform="translate(14,%d) rotate(-90)" text-anchor="middle">busbw (GB/s)</text>'
                 % (top + plot_h // 2))
    for index, entry in enumerate(series):
        color, dash = _series_style(index)
        coords = " ".join("%.1f,%.1f" % (sx(s), sy(v)) for s, v in entry["points"])
        parts.append('<polyline class="series" fill="none" stroke="%s" stroke-width="2"%s points="%s"><title>%s'
                     '</title></polyline>' % (color, ' stroke-dasharray="%s"' % dash if dash else "", coords,
                                              esc(entry["name"])))
        for s, v in entry["points"]:
            parts.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s: %s bytes, %s GB/s</title></circle>'
                         % (sx(s), sy(v), color, esc(entry["name"]), int(s), fmt_value(v)))
    parts += _legend_rows(series, left, height + 8)
    parts.append("</svg>")
    return "".join(parts)
