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
import xml.etree.ElementTree as ET

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_model import ReportView, check_name
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_values import fmt_value, num, pct
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.visible_text import visible


def _xml_text(value):
    return visible("" if value is None else str(value))


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


def _outcome(case, record, detail, regression_fails):
    """The failure, error or skipped element of a testcase; returns the counter it adds to, or None."""
    verdict = record.get("verdict")
    if verdict == "fail":
        node = ET.SubElement(case, "failure", message=_xml_text(record.get("cause") or "check failed"), type="fail")
        node.text = _xml_text(detail)
        return "failures"
    if verdict == "error":
        node = ET.SubElement(case, "error", message=_xml_text(record.get("cause") or "check error"), type="error")
        node.text = _xml_text(detail)
        return "errors"
    if verdict == "skipped":
        ET.SubElement(case, "skipped", message=_xml_text(record.get("cause") or "skipped"))
        return "skipped"
    if record.get("regression") and regression_fails:
        node = ET.SubElement(case, "failure", message=_xml_text(_regression_message(record["regression"])),
                             type="regression")
        node.text = _xml_text(detail)
        return "failures"
    return None


def _seconds(value):
    """A time attribute in the form junit-10.xsd allows (digits, at most three decimals)."""
    return "%.3f" % max(0.0, value)


def _testcase(suite, kind, name, record, counts, regression_fails):
    metrics = record.get("metrics") or {}
    duration = num(metrics.get("duration_s")) or 0.0
    case = ET.SubElement(suite, "testcase", classname="commcheck.%s" % kind, name=_xml_text(name),
                         time=_seconds(duration))
    counts["tests"] += 1
    counts["time"] += max(0.0, duration)
    detail = _detail(record, metrics)
    counter = _outcome(case, record, detail, regression_fails)
    if counter:
        counts[counter] += 1
    verdict = record.get("verdict")
    if verdict in ("flaky", "warn"):
        out = ET.SubElement(case, "system-out")
        out.text = _xml_text("%s: %s" % (verdict, detail))


def _testsuite(root, kind, records, run_id, regression_fails):
    """One kind's suite; the run's id as a property of the first suite only."""
    suite = ET.SubElement(root, "testsuite", name="commcheck.%s" % kind)
    if len(root) == 1:
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="run_id", value=_xml_text(run_id))
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "time": 0.0}
    seen = {}
    for record in records:
        name = check_name(record)
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = "%s #%d" % (name, seen[name])
        _testcase(suite, kind, name, record, counts, regression_fails)
    for key in ("tests", "failures", "errors", "skipped"):
        suite.set(key, str(counts[key]))
    suite.set("time", _seconds(counts["time"]))
    return counts


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
    root = ET.Element("testsuites", name="commcheck")
    totals = {"tests": 0, "failures": 0, "errors": 0, "time": 0.0}
    for kind in sorted(suites):
        counts = _testsuite(root, kind, suites[kind], view.summary.get("run_id"), regression_fails)
        for key in totals:
            totals[key] += counts[key]
    for key in ("tests", "failures", "errors"):
        root.set(key, str(totals[key]))
    root.set("time", _seconds(totals["time"]))
    if hasattr(ET, "indent"):
        ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def render_junit(records, summary, meta=None, regression_fails=True):
    return render(ReportView(records, summary, meta), regression_fails=regression_fails)
