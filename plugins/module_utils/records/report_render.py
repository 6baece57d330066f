# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report's entry point: its formats, file names and options, one renderer per format over one view model.

The view model (summary, heat maps, tables) is report_model.py; each format
is its own module: report_markdown.py, report_html.py (with report_svg.py),
report_json.py, report_junit.py, report_prometheus.py. Every function takes the
run's records (the results contract of docs/DEVELOPING.md, optionally with
``baseline``/``regression`` from baseline.py) and returns text; nothing here
touches files.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_html
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_json
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_junit
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_markdown
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_prometheus
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_model import ReportView
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.visible_text import visible
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits

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
    min_runs=dict(type="int", default=3),
    threshold=dict(type="float", default=0.2),
    thresholds=dict(type="dict", default={}),
    ignore_params=dict(type="list", elements="str",
                       default=["round", "step", "tcp_port", "server", "client", "duration", "iterations",
                                "attempt", "retest"]),
    formats=dict(type="list", elements="str", choices=list(FORMATS), default=list(FORMATS)),
    regression_fails=dict(type="bool", default=True),
    fail_on=dict(type="str", choices=["never", "fail", "regression"], default="never"),
    return_records=dict(type="bool", default=True),
    role_options=dict(type="bool", default=False),
)


def each_format(formats, records, summary, meta=None, now=None, regression_fails=True, shared=None, in_pieces=False):
    """(format, text) for each format asked for, in that order, all drawn from one view model, each text made
    when the one before is taken: a caller that writes each text before taking the next holds one at a time (the
    results.json of a 128-host mesh is 145 MB). ``shared``: ``baseline.shared_groups`` of the records, when the
    caller found them already. ``in_pieces``: each text an iterable of the strings it joins, made as they are
    taken (results.json's records a batch at a time, ``report_json.pieces``; the other formats' one text)."""
    view = ReportView(records, summary, meta, shared=shared)
    renderers = {
        "md": report_markdown.render,
        "html": report_html.render,
        "json": report_json.render,
        "junit": lambda v: report_junit.render(v, regression_fails=regression_fails),
        "prom": lambda v: report_prometheus.render(v, now=now),
    }
    for fmt in formats:
        if not in_pieces:
            yield fmt, renderers[fmt](view)
        elif fmt == "json":
            yield fmt, report_json.pieces(view)
        else:
            yield fmt, (renderers[fmt](view),)


def render_formats(formats, records, summary, meta=None, now=None, regression_fails=True):
    """{format: text} for each format asked for, all drawn from one view model."""
    return dict(each_format(formats, records, summary, meta, now=now, regression_fails=regression_fails))


def failed_as_asked(summary, fail_on, report_dir):
    """The message the play fails with when the run failed as ``fail_on`` asks, else an empty string: ``fail``
    when a check failed or errored, ``regression`` when one also regressed, ``never`` never."""
    counts = summary["counts"]
    failed = fail_on != "never" and (counts.get("fail", 0) + counts.get("error", 0)) > 0
    regressed = fail_on == "regression" and summary["regressions"] > 0
    if not (failed or regressed):
        return ""
    return visible("commcheck run %s: %d failed, %d errored, %d regressed; report in %s" % (
        summary.get("run_id") or "-", counts.get("fail", 0), counts.get("error", 0), summary["regressions"],
        report_dir))


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
        "bad NICs: %s" % (", ".join(summary.get("bad_nics") or []) or "none"),
        "bad links: %s" % (", ".join(summary["bad_links"][:8]) or "none")
        + (" (+%d more)" % (len(summary["bad_links"]) - 8) if len(summary["bad_links"]) > 8 else ""),
    ]
    lines += ["do: %s" % line for line in culprits.action_lines((summary.get("culprits") or [])[:8])]
    if summary["regressions"]:
        lines.append("regressed: %s" % (", ".join(summary["regressed_hosts"] + summary["regressed_links"][:8]) or "-"))
        lines += ["regressed together: %s" % text for text in (summary.get("regressed_together") or [])[:4]]
    if files and files.get("html"):
        lines.append("report: %s" % files["html"])
    return [visible(line) for line in lines]
