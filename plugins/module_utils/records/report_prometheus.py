# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""commcheck.prom: gauges in the Prometheus text format for node_exporter's textfile collector.

The cardinality is bounded by the cluster, never by the records: a series
is a link, a NIC (host x rail), a host or the run, with a fixed small set
of labels per family; no record parameter becomes a label. A series has one
sample, the latest record's (records of one series later in the run win).
Re-measurements (retests) are left out: their ids would make new series
every run. Every family has one HELP and one TYPE line and the same label
names on every sample.

Verdicts as numbers (``VERDICT_VALUE``; the higher, the worse; alert on
``>= 4``): pass 0, skipped 1, warn 2, flaky 3, fail 4, error 5,
interrupted 6 (a run that did not reach its end).

Per link check (labels ``kind, op, host, peer, rail``; ``host`` is the
record's host, for a pair check the server, ``peer`` the client; ``rail``
the rail index, else the device); every link check when the run has at most
``LINK_SERIES_LIMIT`` (20,000: a ring of 1,024 hosts x 8 rails has 17,400),
else only those that did not pass or regressed, worst first, at most that
many (a full mesh of 128 hosts x 8 rails has 138,000; the NIC gauges below
still cover every link):

- ``commcheck_link_bandwidth_gbps``: the bandwidth measured (Gb/s);
- ``commcheck_link_bandwidth_fraction``: that bandwidth / the expected one;
- ``commcheck_link_latency_us``: the latency measured (us);
- ``commcheck_link_regression_change_ratio``: relative change of the worst
  regressed metric against its baseline (only checks that regressed);
- ``commcheck_link_verdict`` (labels ``host, peer, rail``): the worst
  verdict of the link's exported checks, as a number.

Per NIC (labels ``host, rail``), over every bandwidth link it took part in,
on either side:

- ``commcheck_nic_bandwidth_fraction``: the worst fraction of expected;
- ``commcheck_nic_verdict``: the worst verdict.

Per host (labels ``host, kind``), over the records without a peer
(discover, finding, collective, ...): ``commcheck_host_verdict``, the worst
verdict. Per collective (labels ``host, op``; ``host`` names the pool by
its first host): ``commcheck_collective_busbw_gbs``.

The run (labels as listed): ``commcheck_link_checks`` and
``commcheck_link_checks_exported`` (link checks in the run, and with
series), ``commcheck_checks{verdict}`` (checks per
verdict), ``commcheck_run_verdict``, ``commcheck_last_run_ok`` (1 when no
check failed or errored), ``commcheck_regressions``, ``commcheck_bad_hosts``,
``commcheck_bad_nics``, ``commcheck_bad_links``,
``commcheck_culprits{component}`` (host, nic, link, fabric, config),
``commcheck_last_run_info{run_id}`` (1) and
``commcheck_last_run_timestamp_seconds``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_model import (
    VERDICT_ORDER,
    ReportView,
    bw_metric,
    is_retest_run,
    lat_metric,
    num,
    op_of,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.visible_text import visible

VERDICT_VALUE = {"pass": 0, "skipped": 1, "warn": 2, "flaky": 3, "fail": 4, "error": 5, "interrupted": 6}
VERDICT_HELP = ", ".join("%s %d" % item for item in sorted(VERDICT_VALUE.items(), key=lambda i: i[1]))
UNKNOWN_VERDICT = VERDICT_VALUE["error"]
CULPRIT_COMPONENTS = ("host", "nic", "link", "fabric", "config")

LINK_LABELS = ("kind", "op", "host", "peer", "rail")
LINK_VERDICT_LABELS = ("host", "peer", "rail")
# Link checks (kind, op, host, peer, rail) that all get series; a run with more (a full mesh of 128 hosts x 8 rails
# has 138,000) exports only those that did not pass or regressed. A ring of 1,024 hosts x 8 rails fits (17,400).
LINK_SERIES_LIMIT = 20000
NIC_LABELS = ("host", "rail")
HOST_LABELS = ("host", "kind")
COLLECTIVE_LABELS = ("host", "op")

# name: (label names, help)
FAMILIES = (
    ("commcheck_link_bandwidth_gbps", LINK_LABELS, "bandwidth of a link in the last run (Gb/s)"),
    ("commcheck_link_bandwidth_fraction", LINK_LABELS, "bandwidth of a link / its expected bandwidth"),
    ("commcheck_link_latency_us", LINK_LABELS, "latency of a link in the last run (us)"),
    ("commcheck_link_verdict", LINK_VERDICT_LABELS, "worst verdict of a link's checks as a number: " + VERDICT_HELP),
    ("commcheck_link_regression_change_ratio", LINK_LABELS,
     "relative change of a regressed link's worst metric against its baseline (negative: lower)"),
    ("commcheck_nic_bandwidth_fraction", NIC_LABELS,
     "worst bandwidth / expected of the links a NIC (host x rail) took part in"),
    ("commcheck_nic_verdict", NIC_LABELS, "worst verdict of the links of a NIC (host x rail): " + VERDICT_HELP),
    ("commcheck_host_verdict", HOST_LABELS, "worst verdict of a host's own checks of a kind: " + VERDICT_HELP),
    ("commcheck_collective_busbw_gbs", COLLECTIVE_LABELS, "bus bandwidth of a collective (GB/s), pool named by "
                                                          "its first host"),
    ("commcheck_link_checks", (), "number of link checks (kind, op, host, peer, rail) of the last run"),
    ("commcheck_link_checks_exported", (), "number of link checks with commcheck_link_* series"),
    ("commcheck_checks", ("verdict",), "number of checks of the last run by verdict"),
    ("commcheck_run_verdict", (), "verdict of the last run as a number: " + VERDICT_HELP),
    ("commcheck_last_run_ok", (), "1 when the last run had no failed or errored check"),
    ("commcheck_regressions", (), "number of regressed checks in the last run"),
    ("commcheck_bad_hosts", (), "number of hosts named bad in the last run"),
    ("commcheck_bad_nics", (), "number of NICs named bad in the last run"),
    ("commcheck_bad_links", (), "number of links named bad in the last run"),
    ("commcheck_culprits", ("component",), "number of culprits of the last run by component"),
    ("commcheck_last_run_info", ("run_id",), "1, labelled with the id of the last run"),
    ("commcheck_last_run_timestamp_seconds", (), "when the last run's report was made (Unix time)"),
)


def verdict_value(verdict):
    """The number of a verdict (VERDICT_VALUE); an unknown one counts as an error."""
    return VERDICT_VALUE.get(verdict, UNKNOWN_VERDICT)


def escape_label_value(value):
    return visible(str(value)).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def format_value(value):
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(round(float(value), 6))


def rail_of(record):
    """The rail label of a record: its rail index, else its device, else ''."""
    params = record.get("params") or {}
    rail = params.get("rail")
    if rail is None or isinstance(rail, (dict, list)):
        rail = params.get("device")
    return "" if rail is None or isinstance(rail, (dict, list)) else str(rail)


def link_labels(record):
    return (str(record.get("kind")), op_of(record), str(record.get("host") or ""), str(record.get("peer")),
            rail_of(record))


def bandwidth_fraction(metrics, value):
    """The record's fraction of expected, else bandwidth / expected_gbps, else None."""
    fraction = num(metrics.get("fraction"))
    if fraction is not None:
        return fraction
    expected = num(metrics.get("expected_gbps"))
    return value / expected if expected else None


class Gauges(object):
    """One sample per (family, label values): a later value replaces an earlier one."""

    def __init__(self):
        self.samples = dict((name, {}) for name, _labels, _help in FAMILIES)

    def set(self, name, labels, value):
        self.samples[name][labels] = value

    def worst(self, name, labels, value, lower_is_worse=False):
        old = self.samples[name].get(labels)
        if old is None or (value < old if lower_is_worse else value > old):
            self.samples[name][labels] = value

    def render(self):
        lines = []
        for name, label_names, help_text in FAMILIES:
            samples = self.samples[name]
            if not samples:
                continue
            lines.append("# HELP %s %s" % (name, help_text.replace("\\", "\\\\").replace("\n", " ")))
            lines.append("# TYPE %s gauge" % name)
            for labels in sorted(samples):
                text = ",".join('%s="%s"' % (n, escape_label_value(v)) for n, v in zip(label_names, labels))
                lines.append("%s%s %s" % (name, "{%s}" % text if text else "", format_value(samples[labels])))
        return "\n".join(lines) + "\n"


def link_is_of_interest(record):
    """A link check that did not pass, or regressed: exported even when the run has too many links for all."""
    return record.get("verdict") != "pass" or bool(record.get("regression"))


def _worst_first(record):
    metrics = record.get("metrics") or {}
    _name, bandwidth = bw_metric(metrics)
    fraction = bandwidth_fraction(metrics, bandwidth) if bandwidth is not None else None
    return (-verdict_value(record.get("verdict")), 2.0 if fraction is None else fraction)


def exported_links(links, limit=LINK_SERIES_LIMIT):
    """The link checks that get series: all of them up to ``limit``; beyond, the ones that did not pass or
    regressed, worst first, at most ``limit`` (the NIC gauges still cover every link)."""
    keys = list(links)
    if len(keys) <= limit:
        return keys
    keys = [key for key in keys if link_is_of_interest(links[key])]
    return sorted(keys, key=lambda key: _worst_first(links[key]))[:limit]


def _add_nic(gauges, labels, record):
    """The worst fraction and verdict of the two NICs of a bandwidth link (host and peer, on the link's rail)."""
    metrics = record.get("metrics") or {}
    _name, bandwidth = bw_metric(metrics)
    if bandwidth is None:
        return
    fraction = bandwidth_fraction(metrics, bandwidth)
    for host in (labels[2], labels[3]):
        nic = (host, labels[4])
        gauges.worst("commcheck_nic_verdict", nic, verdict_value(record.get("verdict")))
        if fraction is not None:
            gauges.worst("commcheck_nic_bandwidth_fraction", nic, fraction, lower_is_worse=True)


def _add_link(gauges, labels, record):
    metrics = record.get("metrics") or {}
    gauges.worst("commcheck_link_verdict", labels[2:], verdict_value(record.get("verdict")))
    _name, bandwidth = bw_metric(metrics)
    if bandwidth is not None:
        gauges.set("commcheck_link_bandwidth_gbps", labels, bandwidth)
        fraction = bandwidth_fraction(metrics, bandwidth)
        if fraction is not None:
            gauges.set("commcheck_link_bandwidth_fraction", labels, fraction)
    _name, latency = lat_metric(metrics)
    if latency is not None:
        gauges.set("commcheck_link_latency_us", labels, latency)
    change = num((record.get("regression") or {}).get("worst_change"))
    if change is not None:
        gauges.set("commcheck_link_regression_change_ratio", labels, change)


def _add_host_check(gauges, record):
    host = str(record.get("host") or "")
    gauges.worst("commcheck_host_verdict", (host, str(record.get("kind"))), verdict_value(record.get("verdict")))
    busbw = num((record.get("metrics") or {}).get("busbw_gbs"))
    if busbw is not None:
        gauges.set("commcheck_collective_busbw_gbs", (host, op_of(record)), busbw)


def _culprit_counts(summary):
    counts = dict((component, 0) for component in CULPRIT_COMPONENTS)
    for item in summary.get("culprits") or []:
        if isinstance(item, dict) and item.get("component"):
            counts[str(item["component"])] = counts.get(str(item["component"]), 0) + 1
    return counts


def _add_summary(gauges, summary, now):
    counts = summary.get("counts") or {}
    for verdict in VERDICT_ORDER:
        gauges.set("commcheck_checks", (verdict,), counts.get(verdict, 0))
    gauges.set("commcheck_run_verdict", (), verdict_value(summary.get("verdict")))
    gauges.set("commcheck_last_run_ok", (), 0 if summary.get("verdict") == "fail" else 1)
    gauges.set("commcheck_regressions", (), summary.get("regressions") or 0)
    for name, key in (("commcheck_bad_hosts", "bad_hosts"), ("commcheck_bad_nics", "bad_nics"),
                      ("commcheck_bad_links", "bad_links")):
        gauges.set(name, (), len(summary.get(key) or []))
    for component, count in _culprit_counts(summary).items():
        gauges.set("commcheck_culprits", (component,), count)
    gauges.set("commcheck_last_run_info", (str(summary.get("run_id") or ""),), 1)
    gauges.set("commcheck_last_run_timestamp_seconds", (), round(now.timestamp(), 3))


def latest_checks(checks):
    """({link labels: the link's latest record}, [records without a peer]); re-measurements left out."""
    links, own = {}, []
    for record in checks:
        if is_retest_run(record):
            continue
        if record.get("peer"):
            links[link_labels(record)] = record
        else:
            own.append(record)
    return links, own


def render(view, now=None, link_limit=LINK_SERIES_LIMIT):
    """Prometheus text exposition format for node_exporter's textfile collector (gauges, no timestamps)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    gauges = Gauges()
    links, own = latest_checks(view.checks)
    for labels, record in links.items():
        _add_nic(gauges, labels, record)
    exported = exported_links(links, link_limit)
    for labels in exported:
        _add_link(gauges, labels, links[labels])
    for record in own:
        _add_host_check(gauges, record)
    gauges.set("commcheck_link_checks", (), len(links))
    gauges.set("commcheck_link_checks_exported", (), len(exported))
    _add_summary(gauges, view.summary, now)
    return gauges.render()


def render_prometheus(records, summary, meta=None, now=None, link_limit=LINK_SERIES_LIMIT):
    """Prometheus text exposition format for node_exporter's textfile collector (gauges, no timestamps)."""
    return render(ReportView(records, summary, meta), now=now, link_limit=link_limit)
