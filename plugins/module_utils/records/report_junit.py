# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""junit.xml: one testsuite per kind, one testcase per check record.

What the readers take: the file validates against the schema Jenkins' xunit
plugin checks a JUnit file with (junit-10.xsd: ``<testsuites>`` has no
``skipped`` count, each ``<testsuite>`` has one), and readers that merge
every suite's properties into one set (xunitparser) find ``run_id`` once,
in the first suite, not repeated in each.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_model import ReportView, check_name, is_retest_run
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_values import fmt_value, num, pct
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.visible_text import visible

# The file is written as text, element by element, as ElementTree writes it indented (ET.indent, two spaces):
# building and walking a tree of 100,000 testcases cost more than rendering them.
INDENT = "  "


def _xml_text(value):
    return visible("" if value is None else str(value))


# What ElementTree escapes in element content, and in an attribute value besides (quotes, and line ends and tabs as
# numbered entities); "&" first, so that no entity is escaped again.
_CDATA_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"))
_ATTRIBUTE_ESCAPES = _CDATA_ESCAPES + (('"', "&quot;"), ("\r", "&#13;"), ("\n", "&#10;"), ("\t", "&#09;"))


def _escaped(text, escapes):
    for char, entity in escapes:
        if char in text:
            text = text.replace(char, entity)
    return text


def _cdata(text):
    """Element content escaped as ElementTree escapes it."""
    return _escaped(text, _CDATA_ESCAPES)


def _attribute(text):
    """An attribute value escaped as ElementTree escapes it."""
    return _escaped(text, _ATTRIBUTE_ESCAPES)


def _open(tag, attributes):
    return "<%s%s" % (tag, "".join(' %s="%s"' % (name, _attribute(value)) for name, value in attributes))


def _leaf(tag, attributes, text=None):
    """An element without children: its text, or closed in itself when it has none."""
    head = _open(tag, attributes)
    return "%s>%s</%s>" % (head, _cdata(text), tag) if text else head + " />"


def _parent(tag, attributes, children, level):
    """An element with children, each on its own line one level deeper."""
    inner = "\n" + INDENT * (level + 1)
    return "%s>%s%s\n%s</%s>" % (_open(tag, attributes), inner, inner.join(children), INDENT * level, tag)


# json.dumps(metrics, sort_keys=True, default=str), its encoder made once for the run's every record
_METRICS_JSON = json.JSONEncoder(sort_keys=True, default=str).encode


def _detail(record, metrics):
    return "\n".join(filter(None, [
        "cause: %s" % record["cause"] if record.get("cause") else "",
        "fix: %s" % record["fix"] if record.get("fix") else "",
        "metrics: %s" % _METRICS_JSON(metrics) if metrics else "",
    ] + list(record.get("evidence") or [])))


def _regression_message(regression):
    return "regression: " + ", ".join(
        "%s %s vs baseline %s" % (n, pct(m["change"]), fmt_value(m["baseline"]))
        for n, m in sorted(regression["metrics"].items()))


def _outcome(record, detail, regression_fails):
    """(the failure, error or skipped element of a testcase, the counter it adds to), or (None, None); a retest's
    re-measurement fails nothing (its first-pass record carries the verdict the retests set). ``detail``: a
    callable giving the text, asked only when an element shows it."""
    verdict = record.get("verdict")
    if is_retest_run(record):
        return None, None
    if verdict == "fail":
        return _leaf("failure", [("message", _xml_text(record.get("cause") or "check failed")), ("type", "fail")],
                     _xml_text(detail())), "failures"
    if verdict == "error":
        return _leaf("error", [("message", _xml_text(record.get("cause") or "check error")), ("type", "error")],
                     _xml_text(detail())), "errors"
    if verdict == "skipped":
        return _leaf("skipped", [("message", _xml_text(record.get("cause") or "skipped"))]), "skipped"
    if record.get("regression") and regression_fails:
        return _leaf("failure", [("message", _xml_text(_regression_message(record["regression"]))),
                                 ("type", "regression")], _xml_text(detail())), "failures"
    return None, None


def _seconds(value):
    """A time attribute in the form junit-10.xsd allows (digits, at most three decimals)."""
    return "%.3f" % max(0.0, value)


def _testcase(kind, name, record, counts, regression_fails):
    metrics = record.get("metrics") or {}
    duration = num(metrics.get("duration_s")) or 0.0
    attributes = [("classname", "commcheck.%s" % kind), ("name", _xml_text(name)), ("time", _seconds(duration))]
    counts["tests"] += 1
    counts["time"] += max(0.0, duration)
    # most checks pass and show no detail: its text (the metrics as JSON among it) made only for those that do
    made = []

    def detail():
        if not made:
            made.append(_detail(record, metrics))
        return made[0]

    outcome, counter = _outcome(record, detail, regression_fails)
    children = [outcome] if outcome else []
    if counter:
        counts[counter] += 1
    verdict = record.get("verdict")
    if verdict in ("flaky", "warn") or (is_retest_run(record) and verdict != "pass"):
        children.append(_leaf("system-out", (), _xml_text("%s: %s" % (verdict, detail()))))
    return _parent("testcase", attributes, children, 2) if children else _leaf("testcase", attributes)


def _testsuite(first, kind, records, run_id, regression_fails):
    """(one kind's suite, its counts); the run's id as a property of the first suite only."""
    children = []
    if first:
        children.append(_parent("properties", (), [_leaf("property", [("name", "run_id"),
                                                                      ("value", _xml_text(run_id))])], 2))
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "time": 0.0}
    seen = {}
    for record in records:
        name = check_name(record)
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = "%s #%d" % (name, seen[name])
        children.append(_testcase(kind, name, record, counts, regression_fails))
    attributes = [("name", "commcheck.%s" % kind)] + [(key, str(counts[key]))
                                                      for key in ("tests", "failures", "errors", "skipped")]
    return _parent("testsuite", attributes + [("time", _seconds(counts["time"]))], children, 1), counts


def render(view, regression_fails=True):
    """JUnit XML: one testsuite per kind, one testcase per check record.

    fail -> <failure>, error -> <error>, skipped -> <skipped>; a regression
    is a <failure type="regression"> when regression_fails; flaky/warn pass
    with a note in <system-out>. ``<testsuites>`` has the totals junit-10.xsd
    allows it (tests, failures, errors, time); the skipped ones are counted
    per suite.
    """
    suites = {}
    for record in view.checks:
        suites.setdefault(str(record.get("kind")), []).append(record)
    totals = {"tests": 0, "failures": 0, "errors": 0, "time": 0.0}
    children = []
    for kind in sorted(suites):
        suite, counts = _testsuite(not children, kind, suites[kind], view.summary.get("run_id"), regression_fails)
        children.append(suite)
        for key in totals:
            totals[key] += counts[key]
    attributes = [("name", "commcheck")] + [(key, str(totals[key])) for key in ("tests", "failures", "errors")]
    attributes.append(("time", _seconds(totals["time"])))
    root = _parent("testsuites", attributes, children, 0) if children else _leaf("testsuites", attributes)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + root + "\n"


def render_junit(records, summary, meta=None, regression_fails=True):
    return render(ReportView(records, summary, meta), regression_fails=regression_fails)
