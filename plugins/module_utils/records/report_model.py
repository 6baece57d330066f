# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report's view model: what every format shows, computed once from the records.

summarize() is the summary (also the set_stats payload); heatmaps(),
collective_series() (report_collectives.py), latency_rows() and findings()
are the data behind the tables and charts; ReportView gathers them for the
per-format renderers (report_markdown.py, report_html.py, report_json.py,
report_junit.py, report_prometheus.py). What tells checks and hosts apart
is report_identity.py; numbers and text for people, report_values.py.
Nothing here touches files.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import heapq

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.record_flow import (
    flow_cells,
    flow_label,
    flow_text,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_gpu import gpu_table
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_collectives import (
    collective_hosts,
    collective_series,
    is_collective,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_identity import (
    OP_PARAMS,
    node_set_text,
    op_of,
    split_by_variant,
    with_variant,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_values import (
    BAD,
    VERDICT_ORDER,
    num,
    plain,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline as _baseline
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits as _culprits
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.culprit_leaves import leaves_of_records
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import run_verdict as _run_verdict
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.version_mix import version_rows

NOT_A_HOST = ("*", "-", "all", "pool")
_BW_PREFERENCE = ("bw_gbps", "bw_avg_gbps", "received_gbps", "sent_gbps", "bw_peak_gbps")
_LAT_PREFERENCE = ("lat_us", "t_typical_us", "t_avg_us", "t_min_us")
_P99_KEYS = ("p99_us", "lat_p99_us")
_MAX_KEYS = ("t_max_us", "lat_max_us", "max_us")
# An N x N matrix is drawn up to this many hosts; beyond, the WORST_LINKS worst links of each check instead.
MATRIX_MAX_HOSTS = 64
WORST_LINKS = 50


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

# params_text of the params seen, by (skip, the other params with their exact types): a run's records share a few
_PARAMS_TEXTS = {}
_PARAMS_TEXTS_KEPT = 4096
# values whose (type, value) says their text: equal floats can differ in text (0.0, -0.0), so a float by its text
_KEYED_TYPES = frozenset([str, int, bool, type(None)])


def params_text(params, skip=()):
    """'device=mlx5_0 op=write' of the params not in ``skip`` (and not None, a list or a dict), in name order."""
    params = params or {}
    parts = []
    for k, v in params.items():
        if k in skip:
            continue
        kind = v.__class__
        if kind in _KEYED_TYPES:
            parts.append((k, kind, v))
        elif kind is float:
            parts.append((k, kind, repr(v)))
        else:  # anything else (a list, a dict, a subclass of text) is shown without being kept
            return _params_text(params, skip)
    try:
        key = (skip, tuple(parts))
        text = _PARAMS_TEXTS.get(key)
    except TypeError:  # skip as a list
        return _params_text(params, skip)
    if text is None:
        if len(_PARAMS_TEXTS) >= _PARAMS_TEXTS_KEPT:
            _PARAMS_TEXTS.clear()
        text = _PARAMS_TEXTS[key] = _params_text(params, skip)
    return text


def _params_text(params, skip):
    return " ".join("%s=%s" % (k, plain(params[k])) for k in sorted(params)
                    if k not in skip and params[k] is not None and not isinstance(params[k], (dict, list)))


def check_name(record):
    """Human name of a check: 'rdma_bw a->b [device=mlx5_0 op=write]', a->b: a sends to b (verdicts/record_flow.py); a
    collective's names its node set: 'collective h1-h8 [library=nccl operation=all_reduce ...]'."""
    where = node_set_text(collective_hosts(record)) if is_collective(record) else flow_label(record)
    text = "%s %s" % (record.get("kind"), where)
    params = params_text(record.get("params"), skip=_baseline.DEFAULT_IGNORE_PARAMS)
    return "%s [%s]" % (text, params) if params else text


def bw_metric(metrics):
    """(name, value) of the bandwidth metric of a record, or (None, None)."""
    metrics = metrics or {}
    for name in _BW_PREFERENCE:
        if num(metrics.get(name)) is not None:
            return name, num(metrics[name])
    for name in sorted(metrics):
        if name.endswith("_gbps") and not name.startswith("expected") and num(metrics[name]) is not None:
            return name, num(metrics[name])
    return None, None


def lat_metric(metrics):
    metrics = metrics or {}
    for name in _LAT_PREFERENCE:
        if num(metrics.get(name)) is not None:
            return name, num(metrics[name])
    return None, None


def sorted_records(records):
    rank = dict((v, i) for i, v in enumerate(VERDICT_ORDER))
    return sorted(records, key=lambda r: (rank.get(r.get("verdict"), 0), str(r.get("kind")),
                                          str(r.get("host")), str(r.get("peer") or "")))


def is_retest(record):
    """A re-run of a failing check (params.retest) or the summary of the retests."""
    params = record.get("params") or {}
    kind = str(record.get("kind", ""))
    return bool(record.get("retest") or params.get("retest") or kind.endswith("_retest") or kind == "retest_summary")


def is_retest_run(record):
    """A re-measurement (not the retest summary): kept out of matrices, tables, metric series and the run's
    counts and verdict (``run_verdict.is_remeasurement``)."""
    return _run_verdict.is_remeasurement(record)


# --------------------------------------------------------------------------
# summary
# --------------------------------------------------------------------------

def _count_verdicts(checks):
    """Checks per verdict, and per kind and verdict."""
    counts = dict((v, 0) for v in VERDICT_ORDER)
    by_kind = {}
    for record in checks:
        verdict = record.get("verdict")
        counts[verdict] = counts.get(verdict, 0) + 1
        kind_counts = by_kind.setdefault(record.get("kind"), {})
        kind_counts[verdict] = kind_counts.get(verdict, 0) + 1
    return counts, by_kind


def _link_both_ways(table, host, peer):
    for a, b in ((host, peer), (peer, host)):
        table.setdefault(a, set()).add(b)


def _peers_of(checks):
    """Each host's peers in the pair records of the run (retests left out: they pick partners on purpose)."""
    peers_of = {}
    for record in checks:
        if record.get("peer") and not is_retest_run(record):
            _link_both_ways(peers_of, record.get("host"), record["peer"])
    return peers_of


def _hosts_bad_with_most_peers(bad_peers_of, peers_of):
    """A host whose links fail with most of its peers is the likely culprit, not each peer."""
    return set(host for host, bad in bad_peers_of.items()
               if len(bad) >= 2 and len(bad) * 2 > len(peers_of.get(host, ())))


def _regressed_links_and_hosts(regressions, peers_of):
    reg_links = sorted(set(tuple(sorted((r["host"], r["peer"]))) for r in regressions if r["peer"]))
    reg_peers = {}
    for a, b in reg_links:
        _link_both_ways(reg_peers, a, b)
    regressed_hosts = set(r["host"] for r in regressions if not r["peer"])
    regressed_hosts |= _hosts_bad_with_most_peers(reg_peers, peers_of)
    return reg_links, regressed_hosts


def _regressed_together(regressions):
    """One line per test whose checks regressed together (``baseline.shared_text``), in first-seen order."""
    lines = []
    for regression in regressions:
        text = _baseline.shared_text(regression["shared"]) if regression["shared"] else None
        if text and text not in lines:
            lines.append(text)
    return lines


def checks_of(records):
    """The check records of a run: neither its summary nor regression records."""
    return [r for r in records or [] if r.get("kind") not in ("summary", "regression")]


def run_culprits(records):
    """The culprits ``summarize`` names for these records. They read the run's own verdicts and values, never
    a record's baseline or regression: the report finds them beside the comparison with the history."""
    return _culprits.culprits(checks_of(records))


def summarize(records, run_id=None, generated=None, report_dir=None, shared=None, culprits=None):
    """Counts, culprits (and the bad hosts / NICs / links they name) and regressions of a run (the set_stats
    payload). ``shared``: ``baseline.shared_groups`` of the records, when the caller found them already;
    ``culprits``: ``run_culprits`` of the records, when the caller found them already."""
    checks = checks_of(records)
    # the run's verdict and counts are its judgements: a retest's own verdict is evidence (by_kind lists them)
    judged = [r for r in checks if not is_retest_run(r)]
    counts = _count_verdicts(judged)[0]
    by_kind = _count_verdicts(checks)[1]
    found = _culprits.culprits(checks) if culprits is None else culprits
    bad_hosts, bad_nics, bad_links = _culprits.bad_lists(found)
    regressions = _baseline.regressions(checks, shared)
    # a regression the fleet shares is said once, as its test, and blames neither hosts nor links
    own = [r for r in regressions if not r["shared"]]
    reg_links, regressed_hosts = _regressed_links_and_hosts(own, _peers_of(checks))
    return {
        "run_id": run_id,
        "generated": generated,
        "verdict": _run_verdict.overall_verdict(counts, regressions=len(regressions)),
        "total": len(judged),
        "retests": len(checks) - len(judged),
        "counts": counts,
        "by_kind": by_kind,
        "culprits": found,
        "bad_hosts": bad_hosts,
        "bad_nics": bad_nics,
        "bad_links": bad_links,
        "flaky": [_culprits.describe(c) for c in found if c["verdict"] == "flaky"],
        "regressions": len(regressions),
        "regressed_hosts": sorted(h for h in regressed_hosts if h),
        "regressed_links": ["%s<->%s" % link for link in reg_links],
        "regressed_together": _regressed_together(regressions),
        "report_dir": report_dir,
    }


# --------------------------------------------------------------------------
# heat maps and charts (data)
# --------------------------------------------------------------------------

# A heat-map cell (a pair of hosts) takes the worst of its link's records on these (docs/reports.md); any other
# identity param that differs between the records of a check splits it into matrices of its own.
CELL_PARAMS = ("rail", "device", "peer_device", "gpu", "peer_gpu", "port")


def bandwidth_groups(records):
    """(kind, op) -> [(record, metric name, value)] of the pair records with a bandwidth.

    ``op``: the operation, ' (GPU memory)' for records from GPU memory, and the
    variant when records of one kind and operation measured different things
    ('write size=4096' beside 'write size=65536', report_identity.variants).
    """
    groups = {}
    for record in records or []:
        if not record.get("peer") or record.get("kind") in ("regression", "summary") or is_retest_run(record):
            continue
        name, value = bw_metric(record.get("metrics"))
        if value is None:
            continue
        groups.setdefault((record.get("kind"), op_of(record) + _memory_suffix(record)), []).append(
            (record, name, value))
    split = split_by_variant(groups, record_of=lambda item: item[0],
                             skip=OP_PARAMS + ("metric", "memory") + CELL_PARAMS)
    return dict(((kind, with_variant(op, variant)), items) for ((kind, op), variant), items in split.items())


def _memory_suffix(record):
    """' (GPU memory)' for a GPUDirect record (params.memory cuda): its own matrix, beside host memory's."""
    return " (GPU memory)" if (record.get("params") or {}).get("memory") == "cuda" else ""


def record_fraction(record, value, best):
    """(fraction, expected, relative): of the record's expected rate, else of ``best`` (relative True)."""
    metrics = record.get("metrics") or {}
    expected = num(metrics.get("expected_gbps"))
    fraction = num(metrics.get("fraction"))
    if fraction is not None:
        return fraction, expected, False
    if expected:
        return value / expected, expected, False
    return value / best, expected, True


def _heatmap_cell(record, name, value, best):
    """(cell, relative): relative when the fraction is of the matrix's best value, not of the expected one."""
    fraction, expected, relative = record_fraction(record, value, best)
    cell = {"value": value, "metric": name, "expected": expected, "fraction": fraction,
            "verdict": record.get("verdict"), "regression": record.get("regression"),
            "count": 1, "detail": check_name(record)}
    return cell, relative


def _merge_cell(old, cell):
    """The worse (lower fraction) of two records of one host pair, with both counted and any bad verdict kept."""
    cell["count"] = old["count"] + 1
    if old["fraction"] <= cell["fraction"]:
        old["count"] = cell["count"]
        old["regression"] = old["regression"] or cell["regression"]
        if old["verdict"] not in BAD and cell["verdict"] in BAD:
            old["verdict"] = cell["verdict"]
        return old
    cell["regression"] = cell["regression"] or old["regression"]
    if cell["verdict"] not in BAD and old["verdict"] in BAD:
        cell["verdict"] = old["verdict"]
    return cell


def _worst_link_row(record, name, value, best):
    fraction, expected, _relative = record_fraction(record, value, best)
    params = record.get("params") or {}
    return {"flow": flow_label(record), "rail": params.get("rail"), "device": params.get("device"),
            "peer_device": params.get("peer_device"), "value": value, "metric": name, "expected": expected,
            "fraction": fraction, "verdict": record.get("verdict"), "regression": bool(record.get("regression"))}


def worst_links(items, best, limit=WORST_LINKS):
    """The ``limit`` pair records of a check with the lowest fraction, worst first (one pass, no full sort)."""
    picked = heapq.nsmallest(limit, items, key=lambda item: record_fraction(item[0], item[2], best)[0])
    return [_worst_link_row(record, name, value, best) for record, name, value in picked]


def _heatmap(kind, op, items):
    best = max(v for _r, _n, v in items) or 1.0
    hosts = sorted(set(r["host"] for r, _n, _v in items) | set(r["peer"] for r, _n, _v in items))
    if len(hosts) > MATRIX_MAX_HOSTS:
        cells = None
        relative = any(record_fraction(record, value, best)[2] for record, _n, value in items)
    else:
        cells, relative = _matrix_cells(items, best)
    return {"kind": kind, "op": op, "hosts": hosts, "cells": cells, "relative": relative, "links": len(items),
            "worst": worst_links(items, best), "flows": sorted(set(flow_text(r) for r, _n, _v in items)),
            "title": "%s %s" % (kind, op) if op != kind else kind}


def _matrix_cells(items, best):
    """({(sender, receiver): cell}, relative) of one check's records."""
    cells, relative = {}, False
    for record, name, value in items:
        cell, cell_relative = _heatmap_cell(record, name, value, best)
        relative = relative or cell_relative
        for cell_key in flow_cells(record):
            old = cells.get(cell_key)
            cells[cell_key] = dict(cell) if old is None else _merge_cell(old, dict(cell))
    return cells, relative


def heatmaps(records, groups=None):
    """Bandwidth matrices per (kind, op): [{title, kind, op, hosts, flows, cells: {(sender, receiver): cell},
    links, worst}].

    Rows send, columns receive (verdicts/record_flow.py says who sends per op); a
    record whose data flows both ways, or whose direction is not known,
    fills both cells of its pair. ``flows``: the directions of the records
    ('client -> server', ...). A cell is the worst (lowest fraction) record
    of that direction; the fraction is value / expected_gbps, or value /
    best value of the matrix when no expected bandwidth is known. ``cells``
    is None above MATRIX_MAX_HOSTS hosts; ``worst`` always holds the
    WORST_LINKS records of lowest fraction (a row per link and rail),
    ``links`` how many records the check had. ``groups``: bandwidth_groups(records) when already known.
    """
    groups = bandwidth_groups(records) if groups is None else groups
    return [_heatmap(kind, op, items) for (kind, op), items in sorted(groups.items())]


# --------------------------------------------------------------------------
# tables (data shared by Markdown and HTML)
# --------------------------------------------------------------------------

def _first_number(metrics, names):
    for name in names:
        if num(metrics.get(name)) is not None:
            return num(metrics[name])
    return None


def latency_entries(records):
    """(kind, op, host, peer, latency, metric, record) of each latency record, in the order of
    :func:`latency_rows` (kind, op, host and peer as text, then the records' order): what the slowest are chosen
    from, without the text of a row that is not shown (a mesh has 65,000 latency records)."""
    entries = []
    for record in records or []:
        if record.get("kind") in ("regression", "summary") or is_retest_run(record):
            continue
        name, value = lat_metric(record.get("metrics"))
        if value is None:
            continue
        entries.append((record.get("kind"), op_of(record), str(record.get("host")), str(record.get("peer")), value,
                        name, record))
    return sorted(entries, key=lambda entry: entry[:4])


def latency_row(entry):
    """The row of one of :func:`latency_entries`: typical latency, p99 and max when the tool printed them."""
    record = entry[6]
    metrics = record.get("metrics") or {}
    return {"host": record.get("host"), "peer": record.get("peer"), "kind": record.get("kind"),
            "flow": flow_label(record), "op": entry[1],
            "params": params_text(record.get("params"),
                                  skip=("op", "metric", "peer_device") + _baseline.DEFAULT_IGNORE_PARAMS),
            "lat_us": entry[4], "metric": entry[5], "p99_us": _first_number(metrics, _P99_KEYS),
            "t_max_us": _first_number(metrics, _MAX_KEYS), "verdict": record.get("verdict"),
            "regression": bool(record.get("regression"))}


def latency_rows(records):
    """One row per latency record: typical latency, p99 and max when the tool printed them (perftest does)."""
    return [latency_row(entry) for entry in latency_entries(records)]


def findings(records):
    """Records that need attention (fail/error/flaky/warn, and every 'finding'), worst first."""
    out = [r for r in records or [] if r.get("kind") not in ("summary",)
           and (r.get("verdict") in ("fail", "error", "flaky", "warn") or r.get("kind") == "finding")]
    return sorted_records(out)


# --------------------------------------------------------------------------
# the view model
# --------------------------------------------------------------------------

def _kept_table(name, table, doc=None):
    """A ReportView property: ``table`` of the view's records, computed the first time it is read and kept."""
    return property(lambda view: view.once(name, lambda: table(view.records)), doc=doc)


class ReportView(object):
    """The records, summary and settings of one report, and the tables every format draws from.

    Each table is computed on first use and kept, so the formats written
    together share one computation.
    """

    def __init__(self, records, summary, meta=None, shared=None):
        self.records = list(records or [])
        self.summary = summary
        self.meta = meta or {}
        # baseline.shared_groups of the records when the caller found them already (a pass over every record)
        self.shared = shared
        self._cache = {}

    def once(self, name, compute):
        """compute() the first time ``name`` is asked for, the kept result after (report_fleet.py uses it too)."""
        if name not in self._cache:
            self._cache[name] = compute()
        return self._cache[name]

    _once = once

    @property
    def baseline(self):
        """The baseline settings ({k, threshold, run, history_dir}), or {} when nothing was compared."""
        return self.meta.get("baseline") or {}

    @property
    def checks(self):
        """The check records: neither regression nor summary lines."""
        return self.once("checks", lambda: [r for r in self.records
                                            if r.get("kind") not in ("regression", "summary")])

    @property
    def regressions(self):
        return self.once("regressions", lambda: _baseline.regressions(self.records, self.shared))

    @property
    def findings(self):
        return self.once("findings", lambda: findings([r for r in self.records if r.get("kind") != "regression"]))

    @property
    def heatmaps(self):
        return self.once("heatmaps", lambda: heatmaps(self.records, self.bandwidth_groups))

    bandwidth_groups = _kept_table("bandwidth_groups", bandwidth_groups,
                                   "(kind, op) -> [(record, metric, value)] of the pair records with a bandwidth "
                                   "(retests left out).")
    latency_entries = _kept_table("latency_entries", latency_entries)

    @property
    def latency(self):
        return self.once("latency", lambda: [latency_row(entry) for entry in self.latency_entries])

    series = _kept_table("series", collective_series)
    versions = _kept_table("versions", version_rows, "Rows {tool, version, hosts, count, mixed} of the tool, library "
                                                     "and firmware versions of the hosts.")

    @property
    def retests(self):
        return self.once("retests", lambda: sorted_records([r for r in self.records if is_retest(r)]))

    @property
    def gpus(self):
        """The GPU x NIC table of the pass from GPU memory (``report_gpu.gpu_table``)."""
        return self.once("gpus", lambda: gpu_table(self.records))

    @property
    def leaves(self):
        """Each host's leaf switch per rail, where the topology is known (see :func:`leaf_table`)."""
        return self.once("leaves", lambda: leaf_table(self.records))


LEAF_HOSTS_SHOWN = 8


def leaf_table(records):
    """{hosts, rails, cells: {(host, rail): {leaf, port, source}}, by_leaf: [{leaf, rails, hosts, sources}]} of the
    leaf switches the localization records' topology names (the inventory's ``commcheck_topology`` or discovery's:
    lldp, smpquery, iblinkinfo, ibnetdiscover); all empty without one. ``by_leaf`` is the fleet-sized form: each
    leaf with the rails and hosts behind it and where that was read."""
    cells = leaves_of_records(records)
    hosts = sorted(set(host for host, _rail in cells), key=natural_key)
    rails = sorted(set(rail for _host, rail in cells))
    behind = {}
    for (host, rail), where in cells.items():
        entry = behind.setdefault(where["leaf"], {"leaf": where["leaf"], "rails": set(), "hosts": set(),
                                                  "sources": set()})
        entry["rails"].add(rail)
        entry["hosts"].add(host)
        if where.get("source"):
            entry["sources"].add(str(where["source"]))
    by_leaf = [{"leaf": e["leaf"], "rails": sorted(e["rails"]), "hosts": sorted(e["hosts"], key=natural_key),
                "sources": sorted(e["sources"])}
               for e in sorted(behind.values(), key=lambda e: natural_key(e["leaf"]))]
    return {"hosts": hosts, "rails": rails, "cells": cells, "by_leaf": by_leaf}


def leaf_cell_text(where):
    """'LEAF03 port Ethernet184 (lldp)' / 'LEAF03 (inventory)' of a cell (the source in brackets where known), ''
    of none."""
    if not where:
        return ""
    text = "%s port %s" % (where["leaf"], where["port"]) if where.get("port") else where["leaf"]
    return "%s (%s)" % (text, where["source"]) if where.get("source") else text


def leaf_hosts_text(hosts, shown=LEAF_HOSTS_SHOWN):
    """'h1, h2, h3' or 'h1, ..., h8 and 4 more'."""
    text = ", ".join(hosts[:shown])
    return text + (" and %d more" % (len(hosts) - shown) if len(hosts) > shown else "")


def baseline_text(base):
    """'run X' or 'median of the last K passing runs'."""
    return "run %s" % base["run"] if base.get("run") else "median of the last %s passing runs" % base.get("k")
