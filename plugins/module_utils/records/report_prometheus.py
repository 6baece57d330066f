# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""commcheck.prom: gauges in the Prometheus text format for node_exporter's textfile collector.

Names follow the Prometheus naming guide: base units (seconds, bytes per
second), ``_ratio`` for a fraction, ``_info`` for a labelled 1, one HELP and
one TYPE line per family; every family is a gauge (a run's counts start
again each run, so none is a counter and none ends in ``_total``); the same
label names on every sample of a family; ``promtool check metrics`` finds
nothing to say.

The cardinality is bounded by the cluster, never by the records: a series
is a link, a NIC (host x rail), a host, a collective's node set or the run,
with a fixed set of labels per family. Two records are one series only when
they are one check (report_identity: same kind, hosts and what they
measured); a series then has the latest record's value. Records of
different checks that the other labels do not tell apart (two message sizes
of one link, say) get ``variant``, the params that differ ('size=4096');
it is empty otherwise. Re-measurements (retests) are left out: their ids
would make new series every run.

Verdicts as numbers (``VERDICT_VALUE``; the higher, the worse; alert on
``>= 4``): pass 0, skipped 1, warn 2, flaky 3, fail 4, error 5,
interrupted 6 (a run that did not reach its end).

Per link check (labels ``kind, op, memory, host, peer, rail, variant``;
``host`` is the record's host, for a pair check the server, ``peer`` the
client; ``memory`` ``host`` or ``cuda`` (GPUDirect); ``rail`` the rail
index, else the device); every link check when the run has at most
``LINK_SERIES_LIMIT`` (10,000: a ring of 512 hosts x 8 rails has 8,700),
else only those that did not pass or regressed, worst first, at most that
many (a ring of 1,024 hosts x 8 rails has 17,400, a full mesh of 128 hosts x
8 rails 138,000; the NIC gauges below still cover every link). The file
stays under 5 MB up to 4,096 hosts x 8 rails:

- ``commcheck_link_bandwidth_bytes_per_second``: the bandwidth measured;
- ``commcheck_link_bandwidth_of_expected_ratio``: that bandwidth / the expected one;
- ``commcheck_link_latency_seconds``: the latency measured;
- ``commcheck_link_regression_change_ratio``: relative change of the worst
  regressed metric against its baseline (only checks that regressed);
- ``commcheck_link_verdict`` (labels ``host, peer, rail``): the worst
  verdict of the link's exported checks, as a number.

Per NIC (labels ``host, rail``), over every bandwidth link it took part in,
on either side:

- ``commcheck_nic_bandwidth_of_expected_ratio``: the worst fraction of expected;
- ``commcheck_nic_verdict``: the worst verdict.

Per host (labels ``host, kind``), over the records without a peer that are
not collectives (discover, finding, port_counters, ...):
``commcheck_host_verdict``, the worst verdict. Per collective run (labels
``library, op, hosts, variant``; ``hosts`` the node set as ranges,
report_identity.node_set_text): ``commcheck_collective_bus_bandwidth_bytes_per_second``
and ``commcheck_collective_verdict``.

The run (labels as listed): ``commcheck_link_checks`` and
``commcheck_link_checks_exported`` (link checks in the run, and with
series), ``commcheck_checks{verdict}`` (checks per
verdict), ``commcheck_run_verdict``, ``commcheck_last_run_ok`` (1 when no
check failed or errored), ``commcheck_regressions``, ``commcheck_bad_hosts``,
``commcheck_bad_nics``, ``commcheck_bad_links``,
``commcheck_culprits{component}`` (host, nic, link, fabric, config; gpu where one is named),
``commcheck_last_run_info{run_id}`` (1) and
``commcheck_last_run_timestamp_seconds``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_collectives import (
    collective_hosts,
    is_collective,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_identity import (
    OP_PARAMS,
    node_set_text,
    op_of,
    split_by_variant,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_model import (
    ReportView,
    bw_metric,
    is_retest_run,
    lat_metric,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_values import VERDICT_ORDER, num
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.visible_text import visible

VERDICT_VALUE = {"pass": 0, "skipped": 1, "warn": 2, "flaky": 3, "fail": 4, "error": 5, "interrupted": 6}
VERDICT_HELP = ", ".join("%s %d" % item for item in sorted(VERDICT_VALUE.items(), key=lambda i: i[1]))
UNKNOWN_VERDICT = VERDICT_VALUE["error"]
CULPRIT_COMPONENTS = ("host", "nic", "link", "fabric", "config")
# The records' units to the base units of the names: Gb/s (10^9 bit/s) and GB/s (10^9 byte/s) to bytes per second,
# microseconds to seconds.
BYTES_PER_SECOND_PER_GBPS = 1e9 / 8
BYTES_PER_SECOND_PER_GBS = 1e9
SECONDS_PER_US = 1e-6

LINK_LABELS = ("kind", "op", "memory", "host", "peer", "rail", "variant")
LINK_VERDICT_LABELS = ("host", "peer", "rail")
# Link checks that all get series; a run with more (a ring of 1,024 hosts x 8 rails has 17,400, a full mesh of
# 128 hosts x 8 rails 138,000) exports only those that did not pass or regressed. All of a 1,024-host ring's made
# a 5.3 MB file, over the 5 MB a scrape should read; its NIC gauges cover every link in 1 MB.
LINK_SERIES_LIMIT = 10000
NIC_LABELS = ("host", "rail")
HOST_LABELS = ("host", "kind")
COLLECTIVE_LABELS = ("library", "op", "hosts", "variant")
# A link series' labels name these params already; the variant says which of the others differ.
_LINK_NAMED = OP_PARAMS + ("metric", "memory", "rail", "device")
_COLLECTIVE_NAMED = OP_PARAMS + ("library", "hosts", "nodes")

# name: (label names, help)
FAMILIES = (
    ("commcheck_link_bandwidth_bytes_per_second", LINK_LABELS, "bandwidth of a link in the last run"),
    ("commcheck_link_bandwidth_of_expected_ratio", LINK_LABELS, "bandwidth of a link / its expected bandwidth"),
    ("commcheck_link_latency_seconds", LINK_LABELS, "latency of a link in the last run"),
    ("commcheck_link_verdict", LINK_VERDICT_LABELS, "worst verdict of a link's checks as a number: " + VERDICT_HELP),
    ("commcheck_link_regression_change_ratio", LINK_LABELS,
     "relative change of a regressed link's worst metric against its baseline (negative: lower)"),
    ("commcheck_nic_bandwidth_of_expected_ratio", NIC_LABELS,
     "worst bandwidth / expected of the links a NIC (host x rail) took part in"),
    ("commcheck_nic_verdict", NIC_LABELS, "worst verdict of the links of a NIC (host x rail): " + VERDICT_HELP),
    ("commcheck_host_verdict", HOST_LABELS, "worst verdict of a host's own checks of a kind: " + VERDICT_HELP),
    ("commcheck_collective_bus_bandwidth_bytes_per_second", COLLECTIVE_LABELS,
     "bus bandwidth of a collective run on a node set"),
    ("commcheck_collective_verdict", COLLECTIVE_LABELS, "verdict of a collective run on a node set: " + VERDICT_HELP),
    ("commcheck_link_checks", (), "number of link checks of the last run"),
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
    """A sample value: 15 significant digits (1.93e-06 s stays 1.93e-06, not 2e-06), no float noise."""
    return "%.15g" % float(value)


def rail_of(record):
    """The rail label of a record: its rail index, else its device, else ''."""
    params = record.get("params") or {}
    rail = params.get("rail")
    if rail is None or isinstance(rail, (dict, list)):
        rail = params.get("device")
    return "" if rail is None or isinstance(rail, (dict, list)) else str(rail)


def memory_of(record):
    """Where a pair check's buffers were: 'cuda' (GPUDirect, params.memory) or 'host'."""
    memory = (record.get("params") or {}).get("memory")
    return str(memory) if memory not in (None, "") and not isinstance(memory, (dict, list)) else "host"


def link_labels(record, variant=""):
    return (str(record.get("kind")), op_of(record), memory_of(record), str(record.get("host") or ""),
            str(record.get("peer")), rail_of(record), variant)


def collective_labels(record, variant=""):
    library = (record.get("params") or {}).get("library")
    return ("" if library is None else str(library), op_of(record), node_set_text(collective_hosts(record)), variant)


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
    for host in (labels[3], labels[4]):
        nic = (host, labels[5])
        gauges.worst("commcheck_nic_verdict", nic, verdict_value(record.get("verdict")))
        if fraction is not None:
            gauges.worst("commcheck_nic_bandwidth_of_expected_ratio", nic, fraction, lower_is_worse=True)


def _add_link(gauges, labels, record):
    metrics = record.get("metrics") or {}
    gauges.worst("commcheck_link_verdict", labels[3:6], verdict_value(record.get("verdict")))
    _name, bandwidth = bw_metric(metrics)
    if bandwidth is not None:
        gauges.set("commcheck_link_bandwidth_bytes_per_second", labels, bandwidth * BYTES_PER_SECOND_PER_GBPS)
        fraction = bandwidth_fraction(metrics, bandwidth)
        if fraction is not None:
            gauges.set("commcheck_link_bandwidth_of_expected_ratio", labels, fraction)
    _name, latency = lat_metric(metrics)
    if latency is not None:
        gauges.set("commcheck_link_latency_seconds", labels, latency * SECONDS_PER_US)
    change = num((record.get("regression") or {}).get("worst_change"))
    if change is not None:
        gauges.set("commcheck_link_regression_change_ratio", labels, change)


def _add_host_check(gauges, record):
    host = str(record.get("host") or "")
    gauges.worst("commcheck_host_verdict", (host, str(record.get("kind"))), verdict_value(record.get("verdict")))


def _add_collective(gauges, labels, record):
    gauges.set("commcheck_collective_verdict", labels, verdict_value(record.get("verdict")))
    busbw = num((record.get("metrics") or {}).get("busbw_gbs"))
    if busbw is not None:
        gauges.set("commcheck_collective_bus_bandwidth_bytes_per_second", labels, busbw * BYTES_PER_SECOND_PER_GBS)


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


def _latest_by_check(groups, named):
    """{labels with their variant: the latest record of that check}: each group (records with the same other labels,
    keyed by them with an empty variant last) split into its checks (report_identity.variants), so that only records
    of one check share a series."""
    latest = {}
    for (key, variant), records in split_by_variant(groups, skip=named).items():
        latest[key[:-1] + (variant,)] = records[-1]
    return latest


def latest_checks(checks):
    """({link labels: the check's latest record}, {collective labels: the same}, [other records without a peer]);
    re-measurements left out."""
    links, collectives, own = {}, {}, []
    for record in checks:
        if is_retest_run(record):
            continue
        if record.get("peer") and not is_collective(record):
            links.setdefault(link_labels(record), []).append(record)
        elif is_collective(record):
            collectives.setdefault(collective_labels(record), []).append(record)
        else:
            own.append(record)
    return (_latest_by_check(links, _LINK_NAMED), _latest_by_check(collectives, _COLLECTIVE_NAMED), own)


def render(view, now=None, link_limit=LINK_SERIES_LIMIT):
    """Prometheus text exposition format for node_exporter's textfile collector (gauges, no timestamps)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    gauges = Gauges()
    links, collectives, own = latest_checks(view.checks)
    for labels, record in links.items():
        _add_nic(gauges, labels, record)
    exported = exported_links(links, link_limit)
    for labels in exported:
        _add_link(gauges, labels, links[labels])
    for labels, record in collectives.items():
        _add_collective(gauges, labels, record)
    for record in own:
        _add_host_check(gauges, record)
    gauges.set("commcheck_link_checks", (), len(links))
    gauges.set("commcheck_link_checks_exported", (), len(exported))
    _add_summary(gauges, view.summary, now)
    return gauges.render()


def render_prometheus(records, summary, meta=None, now=None, link_limit=LINK_SERIES_LIMIT):
    """Prometheus text exposition format for node_exporter's textfile collector (gauges, no timestamps)."""
    return render(ReportView(records, summary, meta), now=now, link_limit=link_limit)
