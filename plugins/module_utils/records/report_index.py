# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The results page across runs: ``index.html`` beside the run directories of the report role.

Each run directory gets a small digest, ``index-entry.json``: the run's time,
verdict, culprits in words, regression count and, per host and per link, the
worst bandwidth measured in that run. The page is drawn from the digests of
the newest run directories (a directory made before digests existed is read
from its ``results.json`` when that is small enough, else from its summary
line in the history), so a deleted run directory simply drops out and no
shared state file is read, changed and written back by concurrent runs.

The page is bounded whatever the fleet: at most ``runs`` runs, ``points``
points per trend and ``rows`` hosts and ``rows`` links (the most dropped and
the worst first), every shown text clipped; trends are inline SVG, no script
and no external asset. Everything shown is escaped (host names are user data).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import json
import os
from urllib.parse import quote

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_model import bw_metric, is_retest_run
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_values import esc, num
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.visible_text import visible
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits as _culprits
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.stats import median
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.localization_view import pair_key
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

INDEX_NAME = "index.html"
DIGEST_NAME = "index-entry.json"
DIGEST_SCHEMA = 1
REPORT_NAME = "report.html"
RESULTS_NAME = "results.json"

DEFAULT_RUNS, DEFAULT_POINTS, DEFAULT_ROWS = 50, 20, 100
RUNS_RANGE, POINTS_RANGE, ROWS_RANGE = (1, 1000), (2, 200), (1, 10000)
# A digest keeps at most this many hosts and links (the worst): a 1,024-host full mesh stays a few MB at most.
DIGEST_SERIES_LIMIT = 5000
DIGEST_CULPRITS = 20
# A results.json bigger than this is not parsed for a run without a digest (its history summary is used).
RESULTS_READ_LIMIT = 16 * 1024 * 1024
CULPRITS_SHOWN = 5
TEXT_LIMIT = 120
# Host and link names are never cut: a DNS name has at most 253 characters, a link names two and its rail.
NAME_LIMIT = 600

# Options of the report action for the page (merged into its argument spec and documented there).
INDEX_ARGUMENT_SPEC = dict(
    index=dict(type="bool", default=True),
    index_runs=dict(type="int", default=DEFAULT_RUNS),
    index_points=dict(type="int", default=DEFAULT_POINTS),
    index_rows=dict(type="int", default=DEFAULT_ROWS),
)
INDEX_RANGES = {"index_runs": RUNS_RANGE, "index_points": POINTS_RANGE, "index_rows": ROWS_RANGE}


# --------------------------------------------------------------------------
# the digest of one run
# --------------------------------------------------------------------------

def _worse(point, other):
    """The worse of two (bandwidth, fraction) points: the lower fraction of expected, else the lower bandwidth."""
    if other is None:
        return point
    return point if _badness(point) < _badness(other) else other


def _badness(point):
    """Lower is worse: the fraction of expected (2.0 when unknown), then the bandwidth."""
    return (point[1] if point[1] is not None else 2.0, point[0])


def record_point(record):
    """(bandwidth Gb/s, fraction of expected or None) of a pair record with a bandwidth; None for any other."""
    if not record.get("peer") or record.get("kind") in ("regression", "summary") or is_retest_run(record):
        return None
    _name, value = bw_metric(record.get("metrics"))
    if value is None:
        return None
    metrics = record.get("metrics") or {}
    fraction = num(metrics.get("fraction"))
    expected = num(metrics.get("expected_gbps"))
    if fraction is None and expected:
        fraction = value / expected
    return value, fraction


def link_name(host, peer):
    return "%s<->%s" % pair_key(str(host), str(peer))


def run_points(records):
    """({host: point}, {link: point}): the worst bandwidth point of every host and link in a run."""
    hosts, pairs = {}, {}
    for record in records or []:
        point = record_point(record)
        if point is None:
            continue
        host, peer = str(record.get("host")), str(record.get("peer"))
        for name in (host, peer):
            hosts[name] = _worse(point, hosts.get(name))
        pair = (host, peer) if host <= peer else (peer, host)
        pairs[pair] = _worse(point, pairs.get(pair))
    return hosts, dict((link_name(*pair), point) for pair, point in pairs.items())


def _bounded_points(points):
    """The points as [bandwidth, fraction] lists, rounded; only the DIGEST_SERIES_LIMIT worst when there are more."""
    limit = DIGEST_SERIES_LIMIT
    names = sorted(points, key=lambda n: (points[n][1] if points[n][1] is not None else 2.0, points[n][0]))[:limit]
    return dict((n, [round(points[n][0], 3), None if points[n][1] is None else round(points[n][1], 4)])
                for n in names)


def culprit_words(summary):
    """The summary's culprits in words ('host h2', 'link h1 - h2 (rail 0)'), the first DIGEST_CULPRITS."""
    words = []
    for item in (summary.get("culprits") or [])[:DIGEST_CULPRITS]:
        try:
            words.append(_culprits.describe(item))
        except (KeyError, TypeError, AttributeError):
            words.append(str(item))
    return words


def run_digest(summary, records=None, time=None):
    """The run's entry of the results page (see the module doc), from its summary and records."""
    summary = summary if isinstance(summary, dict) else {}
    hosts, links = run_points(records)
    return {
        "schema": DIGEST_SCHEMA,
        "run_id": summary.get("run_id"),
        "time": summary.get("generated") or time,
        "verdict": summary.get("verdict") or "unknown",
        "total": summary.get("total"),
        "regressions": summary.get("regressions") or 0,
        "culprits": culprit_words(summary),
        "culprit_count": len(summary.get("culprits") or []),
        "hosts": _bounded_points(hosts),
        "links": _bounded_points(links),
    }


def digest_text(digest):
    return json.dumps(digest, sort_keys=True, separators=(",", ":"), default=str) + "\n"


# --------------------------------------------------------------------------
# reading the run directories
# --------------------------------------------------------------------------

def run_directories(parent_dir):
    """[(mtime, name)] of the plain subdirectories of the report directory, newest first (symlinks left out)."""
    found = []
    try:
        entries = list(os.scandir(parent_dir))
    except OSError:
        return []
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            found.append((entry.stat(follow_symlinks=False).st_mtime, entry.name))
        except OSError:
            continue
    return sorted(found, reverse=True)


def _load_json(path, limit=None):
    """The JSON document of a file, or None when it is missing, too big, unreadable or not an object."""
    try:
        if limit is not None and os.path.getsize(path) > limit:
            return None
        with open(path, "rb") as handle:
            document = json.loads(handle.read().decode("utf-8"))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


def digest_of_directory(path):
    """The digest of a run directory: its own digest, else one made from a small enough results.json; or None."""
    digest = _load_json(os.path.join(path, DIGEST_NAME))
    if digest is not None and digest.get("schema") == DIGEST_SCHEMA:
        return digest
    results = _load_json(os.path.join(path, RESULTS_NAME), RESULTS_READ_LIMIT)
    if results is None or not isinstance(results.get("summary"), dict):
        return None
    records = results.get("records") if isinstance(results.get("records"), list) else []
    return run_digest(results["summary"], [r for r in records if isinstance(r, dict)], results.get("generated"))


def digest_of_summary_line(line):
    """A digest without points from a run's summary line in the history (the report's summary in its stats)."""
    stats = line.get("stats") if isinstance(line.get("stats"), dict) else {}
    summary = stats.get("commcheck_summary") if isinstance(stats.get("commcheck_summary"), dict) else {}
    digest = run_digest(dict(summary, run_id=line.get("run_id")), None, line.get("time"))
    if not summary:
        digest["verdict"] = line.get("verdict") or "unknown"
    return digest


def history_summaries(history_dir, run_ids):
    """{run_id: summary line} of the given runs in the history ({} without a history or on a read error)."""
    if not history_dir or not run_ids:
        return {}
    try:
        lines = history.query(history_dir, kind="summary", run_id=sorted(run_ids), include_summary=True,
                              report=history.ReadReport())
    except (OSError, ValueError):
        return {}
    return dict((str(line.get("run_id")), line) for line in lines)


def _time_text(mtime):
    return history.format_time(datetime.datetime.fromtimestamp(mtime, history.UTC))


def collect_entries(parent_dir, runs=DEFAULT_RUNS, history_dir=None):
    """The newest ``runs`` runs with a digest (newest first), each with ``dir`` and ``report`` (link or None).

    Directories are read newest first by modification time, at most
    2 x ``runs`` of them; one with no digest, no readable results.json and no
    summary line in the history is not a run directory and is skipped.
    """
    entries, missing = [], {}
    for examined, (mtime, name) in enumerate(run_directories(parent_dir)):
        if len(entries) >= runs or examined >= 2 * runs:
            break
        digest = digest_of_directory(os.path.join(parent_dir, name))
        if digest is None:
            missing[name] = mtime
        else:
            entries.append(_entry(parent_dir, name, digest, mtime))
    found = history_summaries(history_dir, missing) if len(entries) < runs else {}
    for name, line in found.items():
        entries.append(_entry(parent_dir, name, digest_of_summary_line(line), missing[name]))
    entries.sort(key=lambda e: (str(e.get("time") or ""), e["dir"]), reverse=True)
    return entries[:runs]


def _entry(parent_dir, name, digest, mtime):
    entry = dict(digest, dir=name)
    entry["time"] = entry.get("time") if isinstance(entry.get("time"), str) else _time_text(mtime)
    entry["report"] = name if os.path.isfile(os.path.join(parent_dir, name, REPORT_NAME)) else None
    return entry


# --------------------------------------------------------------------------
# trends
# --------------------------------------------------------------------------

def _point(entry, group, name):
    points = entry.get(group)
    value = points.get(name) if isinstance(points, dict) else None
    if not isinstance(value, list) or not value:
        return None, None
    fraction = num(value[1]) if len(value) > 1 else None
    return num(value[0]), fraction


def trend_rows(entries, group, points=DEFAULT_POINTS, rows=DEFAULT_ROWS):
    """(shown, total): per host (group ``hosts``) or link (``links``) its trend over the newest ``points`` runs.

    A row: name, values (oldest first, None where the run has no point),
    latest, fraction (of the newest run), change (latest against the median
    of the earlier points, None without both). The most dropped rows come
    first, then the lowest fraction of expected; at most ``rows`` of them.
    """
    window = list(reversed(entries[:points]))
    names = set()
    for entry in window:
        if isinstance(entry.get(group), dict):
            names.update(entry[group])
    table = [_trend_row(name, window, group) for name in names]
    table.sort(key=_row_order)
    return table[:rows], len(table)


def _trend_row(name, window, group):
    pairs = [_point(entry, group, name) for entry in window]
    values = [p[0] for p in pairs]
    latest, fraction = pairs[-1] if pairs else (None, None)
    earlier = [v for v in values[:-1] if v is not None]
    base = median(earlier) if earlier else None
    change = (latest - base) / base if latest is not None and base else None
    return {"name": name, "values": values, "latest": latest, "fraction": fraction, "change": change}


def _row_order(row):
    change = row["change"] if row["change"] is not None else 0.0
    fraction = row["fraction"] if row["fraction"] is not None else 2.0
    return change, fraction, natural_key(row["name"])


def sparkline(values, width=120, height=24):
    """An inline SVG line of the values (None leaves a gap), 0 at the bottom; the newest point marked."""
    known = [v for v in values if v is not None]
    if not known:
        return '<svg class="spark" width="%d" height="%d"></svg>' % (width, height)
    top = max(known) or 1.0
    step = (width - 4.0) / max(len(values) - 1, 1)
    segments, current, last = [], [], None
    for index, value in enumerate(values):
        if value is None:
            if current:
                segments.append(current)
            current = []
            continue
        last = (2 + index * step, height - 2 - (height - 4) * value / top)
        current.append("%.1f,%.1f" % last)
    if current:
        segments.append(current)
    lines = "".join('<polyline points="%s"/>' % " ".join(s) for s in segments if len(s) > 1)
    return ('<svg class="spark" width="%d" height="%d" viewBox="0 0 %d %d"><title>%s</title>%s'
            '<circle cx="%.1f" cy="%.1f" r="2"/></svg>') % (
        width, height, width, height, esc("%s to %s Gb/s" % (_gbps(min(known)), _gbps(max(known)))),
        lines, last[0], last[1])


# --------------------------------------------------------------------------
# the page
# --------------------------------------------------------------------------

_STYLE = (
    "body{font-family:sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse;margin-bottom:1.5em}"
    "th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}th{background:#eee}"
    ".pass{color:#1a7f37}.fail,.error{color:#cf222e;font-weight:bold}.warn,.flaky{color:#9a6700}"
    ".interrupted,.unknown,.skipped{color:#666}.drop{color:#cf222e}"
    "svg.spark polyline{fill:none;stroke:#0969da;stroke-width:1.5}svg.spark circle{fill:#0969da}"
)


def clip(value, limit=TEXT_LIMIT):
    """The value as text, cut to ``limit`` characters, then escaped."""
    text = "-" if value is None else str(value)
    return esc(text if len(text) <= limit else text[:limit - 3] + "...")


def _gbps(value):
    return "-" if value is None else ("%.0f" % value if abs(value) >= 100 else "%.3g" % value)


def _percent(value, signed=False):
    return "-" if value is None else ("%+.0f%%" if signed else "%.0f%%") % (100.0 * value)


def _verdict(verdict):
    word = str(verdict or "unknown")
    css = word if word.isalpha() else "unknown"
    return '<span class="%s">%s</span>' % (esc(css), clip(word.upper(), 20))


def _run_cell(entry):
    text = clip(entry.get("run_id") or entry["dir"])
    if not entry.get("report"):
        return text
    return '<a href="%s">%s</a>' % (esc(quote(entry["report"], safe="") + "/" + REPORT_NAME), text)


def _culprits_cell(entry):
    words = [w for w in entry.get("culprits") or [] if isinstance(w, str)]
    count = entry.get("culprit_count")
    count = max(count, len(words)) if isinstance(count, int) else len(words)
    if not words:
        return "none"
    shown = "<br>".join(clip(w, NAME_LIMIT) for w in words[:CULPRITS_SHOWN])
    return shown + (" (+%d more)" % (count - CULPRITS_SHOWN) if count > CULPRITS_SHOWN else "")


def _runs_table(entries):
    head = "<tr><th>Time (UTC)</th><th>Run</th><th>Verdict</th><th>Culprits</th><th>Regressions</th></tr>"
    rows = ["<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
        clip(str(e.get("time") or "-")[:19].replace("T", " ")), _run_cell(e), _verdict(e.get("verdict")),
        _culprits_cell(e), clip(e.get("regressions") if isinstance(e.get("regressions"), int) else "-"))
        for e in entries]
    return "<table>%s%s</table>" % (head, "".join(rows))


def _trend_table(title, rows, total, points):
    if not rows:
        return "<h2>%s</h2><p>No bandwidth measured in these runs.</p>" % title
    head = ("<tr><th>%s</th><th>Bandwidth, last %d runs</th><th>Latest Gb/s</th><th>Change</th>"
            "<th>Of expected</th></tr>") % (title[:-1], points)
    body = "".join('<tr><td>%s</td><td>%s</td><td>%s</td><td%s>%s</td><td>%s</td></tr>' % (
        clip(r["name"], NAME_LIMIT), sparkline(r["values"]), _gbps(r["latest"]),
        ' class="drop"' if (r["change"] or 0) < -0.1 else "", _percent(r["change"], signed=True),
        _percent(r["fraction"])) for r in rows)
    note = "" if total <= len(rows) else "<p>The %d most dropped or worst of %d shown.</p>" % (len(rows), total)
    return "<h2>%s</h2>%s<table>%s%s</table>" % (title, note, head, body)


def render_index(entries, points=DEFAULT_POINTS, rows=DEFAULT_ROWS, generated=None):
    """index.html (text) of the entries, newest first (see collect_entries)."""
    hosts, host_total = trend_rows(entries, "hosts", points, rows)
    links, link_total = trend_rows(entries, "links", points, rows)
    parts = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>commcheck runs</title>',
        "<style>%s</style></head><body><h1>commcheck runs</h1>" % _STYLE,
        "<p>%d run(s), newest first%s. Bandwidth: the worst measured on the host or link in each run; change:"
        " the newest run against the median of the runs before it.</p>" % (
            len(entries), ", page written %s" % clip(generated) if generated else ""),
        _runs_table(entries) if entries else "<p>No run yet.</p>",
        _trend_table("Hosts", hosts, host_total, points),
        _trend_table("Links", links, link_total, points),
        "</body></html>\n",
    ]
    return visible("\n".join(parts))


# --------------------------------------------------------------------------
# after a run
# --------------------------------------------------------------------------

def update_index(parent_dir, run_dir, digest, write, runs=DEFAULT_RUNS, points=DEFAULT_POINTS, rows=DEFAULT_ROWS,
                 history_dir=None, generated=None):
    """Write the run's digest into ``run_dir``, then rewrite ``index.html`` in ``parent_dir``; return both paths.

    ``write(path, text)`` must replace a file atomically (temporary file in
    the same directory, then rename), so a reader sees the old page or the
    new one, never a part; the page is rendered in full before it is written.
    """
    digest_path = os.path.join(run_dir, DIGEST_NAME)
    write(digest_path, digest_text(digest))
    text = render_index(collect_entries(parent_dir, runs, history_dir), points, rows, generated)
    index_path = os.path.join(parent_dir, INDEX_NAME)
    write(index_path, text)
    return index_path, digest_path
