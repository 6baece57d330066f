# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""commcheck.prom: gauges in the Prometheus text format for node_exporter's textfile collector."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline as _baseline
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_model import (
    VERDICT_ORDER,
    ReportView,
    is_retest_run,
    num,
)

_PROM_NAME_BAD = re.compile(r"[^a-zA-Z0-9_]")


def prom_name(text):
    name = _PROM_NAME_BAD.sub("_", str(text)).strip("_")
    name = re.sub(r"_+", "_", name)
    if not name or name[0].isdigit():
        name = "_" + name
    return name


def prom_metric_name(kind, metric):
    """commcheck_<kind>_<metric>, without repeating the kind's last word: rdma_bw + bw_gbps -> commcheck_rdma_bw_gbps."""
    kind, metric = prom_name(kind).lower(), prom_name(metric).lower()
    last = kind.split("_")[-1]
    if metric == last or metric.startswith(last + "_"):
        metric = metric[len(last):].lstrip("_")
    return "commcheck_%s_%s" % (kind, metric) if metric else "commcheck_%s" % kind


def _prom_escape(value):
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _prom_value(value):
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(round(float(value), 6))


def _scalar_params(params):
    out = {}
    for key, value in (params or {}).items():
        if isinstance(value, (dict, list)) or value is None:
            continue
        out[prom_name(key).lower()] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


class _Families(object):
    def __init__(self):
        self.order, self.help, self.samples = [], {}, {}

    def add(self, name, help_text, labels, value):
        if name not in self.samples:
            self.order.append(name)
            self.help[name] = help_text
            self.samples[name] = {}
        key = tuple(sorted(labels.items()))
        self.samples[name][key] = value  # a later record of the same series wins (no duplicates)

    def render(self):
        lines = []
        for name in self.order:
            samples = self.samples[name]
            label_names = sorted(set(k for key in samples for k, _v in key))
            lines.append("# HELP %s %s" % (name, self.help[name].replace("\\", "\\\\").replace("\n", " ")))
            lines.append("# TYPE %s gauge" % name)
            for key, value in samples.items():
                labels = dict(key)
                # every sample of a family has the same label names (node_exporter requires it)
                text = ",".join('%s="%s"' % (n, _prom_escape(labels.get(n, ""))) for n in label_names)
                lines.append("%s%s %s" % (name, "{%s}" % text if text else "", _prom_value(value)))
        return "\n".join(lines) + "\n"


_RESERVED_LABELS = ("host", "peer", "kind", "verdict", "metric", "run_id")


def _record_labels(record):
    """The labels of a record's series: its scalar params (not how it was scheduled), host and peer."""
    base = dict((k, v) for k, v in _scalar_params(record.get("params")).items()
                if k not in _RESERVED_LABELS and k not in _baseline.DEFAULT_IGNORE_PARAMS)
    base.update(host=str(record.get("host") or ""), peer=str(record.get("peer") or ""))
    return base


def _check_ok(verdict):
    return 0 if verdict in ("fail", "error") else (1 if verdict != "skipped" else 0)


def _add_record(families, record):
    base = _record_labels(record)
    kind = str(record.get("kind"))
    for metric, value in sorted((record.get("metrics") or {}).items()):
        number = num(value)
        if number is None:
            continue
        name = prom_metric_name(record.get("kind"), metric)
        families.add(name, "commcheck %s %s of the last run" % (record.get("kind"), metric), base, number)
    labels = dict(base, kind=kind, verdict=str(record.get("verdict")))
    families.add("commcheck_check_verdict", "1 per check of the last run, labelled with its verdict", labels, 1)
    families.add("commcheck_check_ok", "1 when a check of the last run passed (pass, warn, flaky), else 0",
                 dict(base, kind=kind), _check_ok(record.get("verdict")))
    regression = record.get("regression")
    for metric, data in sorted((regression["metrics"] if regression else {}).items()):
        families.add("commcheck_check_regression_change_ratio",
                     "relative change against the baseline of a regressed metric (negative: lower)",
                     dict(base, kind=kind, metric=metric), data["change"])


def _add_summary(families, summary, now):
    for verdict in VERDICT_ORDER:
        families.add("commcheck_checks", "number of checks of the last run by verdict", {"verdict": verdict},
                     summary["counts"].get(verdict, 0))
    families.add("commcheck_regressions", "number of regressed checks in the last run", {}, summary["regressions"])
    families.add("commcheck_bad_hosts", "number of hosts named bad in the last run", {}, len(summary["bad_hosts"]))
    families.add("commcheck_bad_links", "number of links named bad in the last run", {}, len(summary["bad_links"]))
    families.add("commcheck_last_run_ok", "1 when the last run had no failed or errored check", {},
                 0 if summary["verdict"] == "fail" else 1)
    families.add("commcheck_last_run_info", "1, labelled with the id of the last run",
                 {"run_id": str(summary.get("run_id") or "")}, 1)
    families.add("commcheck_last_run_timestamp_seconds", "when the last run's report was made (Unix time)", {},
                 round(now.timestamp(), 3))


def render(view, now=None):
    """Prometheus text exposition format for node_exporter's textfile collector (gauges, no timestamps)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    families = _Families()
    for record in view.checks:
        if is_retest_run(record):
            continue  # retest ids would make new series every run
        _add_record(families, record)
    _add_summary(families, view.summary, now)
    return families.render()


def render_prometheus(records, summary, meta=None, now=None):
    """Prometheus text exposition format for node_exporter's textfile collector (gauges, no timestamps)."""
    return render(ReportView(records, summary, meta), now=now)
