# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report's views that stay the same size from 4 to 4,096 hosts, computed once per view.

- host_rail_grid(): one cell per host and rail, the worst fraction of the
  expected bandwidth of that host's NIC on that rail over all its pair records;
- finding_groups(): one row per finding code (or failing check kind and op)
  with the hosts it affects as ranges;
- worst(): the N worst rows of a table, in one pass (no sort of the whole table).

Each function is linear in the number of records. grid(), groups() and
fleet_hosts() keep their result in the view (report_model.ReportView.once).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import heapq

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_identity import op_of
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_model import (
    NOT_A_HOST,
    bandwidth_groups,
    check_name,
    latency_row,
    record_fraction,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_values import BAD, num
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.version_mix import host_ranges
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

SEVERITIES = ("error", "warning", "info")
_SEVERITY_OF_VERDICT = {"fail": "error", "error": "error", "flaky": "warning", "warn": "warning",
                        "pass": "info", "skipped": "info"}
_ACRONYMS = ("cpu", "gpu", "npu", "nic", "pci", "pcie", "mtu", "gid", "roce", "rdma", "tcp", "pfc", "ecn", "numa",
             "iommu", "acs", "ats", "dcqcn", "qos", "ib", "hca", "lid", "sl", "tc", "dscp", "nccl", "hccl")
EVIDENCE_EXAMPLES = 3
EXAMPLE_CHARS = 300


def worst(rows, limit, key):
    """The ``limit`` rows with the smallest key, smallest first (heapq: one pass, not a sort of every row)."""
    return heapq.nsmallest(limit, rows, key=key)


# --------------------------------------------------------------------------
# host x rail grid
# --------------------------------------------------------------------------

def rail_of(record):
    """The rail a pair record ran on: params.rail, else its device, else '-'."""
    params = record.get("params") or {}
    for key in ("rail", "device"):
        if params.get(key) is not None and params.get(key) != "":
            return str(params[key])
    return "-"


def _add_to_grid(cells, key, fraction, value, expected, partner, record):
    """Count the record in the cell of ``key``; keep its numbers when it is the cell's worst so far."""
    bad = 1 if record.get("verdict") in BAD else 0
    cell = cells.get(key)
    if cell is None:
        cell = cells[key] = {"fraction": None, "records": 0, "bad": 0}
    cell["records"] += 1
    cell["bad"] += bad
    if cell["fraction"] is None or fraction < cell["fraction"]:
        cell.update(fraction=fraction, value=value, expected=expected, partner=partner, verdict=record.get("verdict"),
                    check="%s %s" % (record.get("kind"), op_of(record)))


def host_rail_grid(records, groups=None):
    """{hosts, rails, cells: {(host, rail): cell}, relative}: every NIC's worst fraction of the expected bandwidth.

    A pair record counts for both of its ends (its host's NIC and its peer's
    on the record's rail); a cell keeps the lowest fraction, its value and
    expected rate, the partner of that record (``partner``) and how many
    records (``records``) and failing ones (``bad``) it saw. ``relative``:
    some fraction is of the best value of its check, no expected rate known.
    ``groups``: report_model.bandwidth_groups(records) when already known.
    """
    cells, relative = {}, False
    groups = bandwidth_groups(records) if groups is None else groups
    for _key, items in groups.items():
        best = max(v for _r, _n, v in items) or 1.0
        for record, _name, value in items:
            fraction, expected, cell_relative = record_fraction(record, value, best)
            relative = relative or cell_relative
            rail = rail_of(record)
            host, peer = record.get("host"), record.get("peer")
            _add_to_grid(cells, (host, rail), fraction, value, expected, peer, record)
            _add_to_grid(cells, (peer, rail), fraction, value, expected, host, record)
    hosts = sorted(set(h for h, _r in cells), key=natural_key)
    rails = sorted(set(r for _h, r in cells), key=natural_key)
    return {"hosts": hosts, "rails": rails, "cells": cells, "relative": relative}


def marked_hosts(summary):
    """{host: reason} of the culprits' hosts (host, NIC, config culprits), to mark their rows in the grid."""
    marks = {}
    for item in (summary or {}).get("culprits") or []:
        if item.get("component") in ("host", "nic", "config") and item.get("host"):
            marks.setdefault(item["host"], "%s %s" % (item["component"], item.get("verdict")))
    return marks


def worst_nics(grid, limit):
    """The ``limit`` worst (host, rail) cells of the grid: [(host, rail, cell)], worst first."""
    return worst(((h, r, c) for (h, r), c in grid["cells"].items()), limit,
                 key=lambda item: (item[2]["fraction"], natural_key(item[0]), natural_key(item[1])))


# --------------------------------------------------------------------------
# findings grouped by code
# --------------------------------------------------------------------------

def finding_code(record):
    """A finding's code (params.code, params.finding; else its check and stage), or the words naming a check that
    did not pass: its kind, op or operation and stage ('rdma_bw write', 'collective all_reduce bisect')."""
    params = record.get("params") or {}
    if record.get("kind") == "finding":
        return str(params.get("code") or params.get("finding")
                   or " ".join(_distinct(["finding", params.get("check"), params.get("stage")])))
    return " ".join(_distinct([record.get("kind"), params.get("operation") or op_of(record), params.get("stage")]))


def _distinct(words):
    out = []
    for word in words:
        if word not in (None, "") and str(word) not in out:
            out.append(str(word))
    return out


def severity_of(record):
    """error, warning or info: the finding's own severity, else that of its verdict (an info is never 'pass')."""
    severity = (record.get("params") or {}).get("severity")
    if severity in SEVERITIES:
        return severity
    return _SEVERITY_OF_VERDICT.get(record.get("verdict"), "warning")


def code_title(code):
    """'cpu_governor_not_performance' -> 'CPU governor not performance'."""
    words = [w.upper() if w.lower() in _ACRONYMS else w for w in str(code).replace("_", " ").split()]
    if words and words[0] == words[0].lower():
        words[0] = words[0][:1].upper() + words[0][1:]
    return " ".join(words)


def _where(record):
    """Where a record points: 'h1 mlx5_0 port 1', 'h1->h2 [rail=0 ...]'."""
    params = record.get("params") or {}
    if record.get("kind") != "finding" and record.get("peer"):
        return check_name(record)
    parts = [str(record.get("host"))] if record.get("host") not in NOT_A_HOST else []
    if record.get("peer"):
        parts = ["%s - %s" % (record.get("host"), record.get("peer"))]
    for key, label in (("device", ""), ("port", "port "), ("rail", "rail ")):
        if params.get(key) is not None and params.get(key) != "":
            parts.append("%s%s" % (label, params[key]))
    return " ".join(parts) or "run"


def _example(record):
    """One evidence line of a group: where, what was found, and the record's own first evidence line (a command
    line of a few hundred characters is cut: the record in results.json keeps it whole)."""
    text = "%s: %s" % (_where(record), record.get("cause") or record.get("verdict"))
    own = record.get("evidence") or []
    if own and isinstance(own[0], str):
        text += "; %s" % own[0]
    return text if len(text) <= EXAMPLE_CHARS else text[:EXAMPLE_CHARS - 3] + "..."


def _new_group(code, record):
    return {"code": code, "title": code_title(code) if record.get("kind") == "finding" else code,
            "severity": severity_of(record), "count": 0, "hosts": set(), "verdicts": {},
            "cause": record.get("cause"), "fix": record.get("fix"), "examples": [], "run_wide": False}


def _add_to_group(group, record):
    severity = severity_of(record)
    if SEVERITIES.index(severity) < SEVERITIES.index(group["severity"]):
        group["severity"], group["cause"], group["fix"] = severity, record.get("cause"), record.get("fix")
    group["count"] += 1
    verdict = record.get("verdict")
    group["verdicts"][verdict] = group["verdicts"].get(verdict, 0) + 1
    group["fix"] = group["fix"] or record.get("fix")
    group["cause"] = group["cause"] or record.get("cause")
    ends = [h for h in (record.get("host"), record.get("peer")) if h and h not in NOT_A_HOST]
    group["hosts"].update(ends)
    group["run_wide"] = group["run_wide"] or not ends
    if len(group["examples"]) < EVIDENCE_EXAMPLES:
        group["examples"].append(_example(record))


def _hosts_text(group, fleet_size):
    if not group["hosts"]:
        return "run-wide"
    return "%d/%d hosts %s" % (len(group["hosts"]), fleet_size, host_ranges(group["hosts"]))


def finding_groups(findings, fleet_size):
    """One row per finding code: {code, title, severity, count, verdicts, hosts, hosts_text, cause, fix, examples}.

    ``findings``: the records that need attention (report_model.findings).
    Worst severity first, then the most records. ``examples``: up to
    EVIDENCE_EXAMPLES evidence lines (where and what), so a discovery
    finding shows each host's own message even when its record has no
    evidence of its own.
    """
    groups = {}
    explained = _hosts_with_discovery_findings(findings)
    for record in findings:
        if record.get("kind") == "discover" and record.get("host") in explained:
            continue   # the host's discovery verdict only sums up its findings, each listed under its code
        code = finding_code(record)
        if code not in groups:
            groups[code] = _new_group(code, record)
        _add_to_group(groups[code], record)
    out = []
    for group in groups.values():
        group["hosts_text"] = _hosts_text(group, fleet_size)
        group["hosts"] = sorted(group["hosts"], key=natural_key)
        group["more"] = group["count"] - len(group["examples"])
        out.append(group)
    return sorted(out, key=lambda g: (SEVERITIES.index(g["severity"]), -g["count"], g["code"]))


def _hosts_with_discovery_findings(findings):
    return set(r.get("host") for r in findings
               if r.get("kind") == "finding" and (r.get("params") or {}).get("check", "discover") == "discover")


def verdicts_text(verdicts):
    """'12 fail, 2 flaky'."""
    return ", ".join("%d %s" % (n, v) for v, n in sorted(verdicts.items(), key=lambda vn: (-vn[1], str(vn[0]))))


# --------------------------------------------------------------------------
# cached on the view
# --------------------------------------------------------------------------

def fleet_hosts(view):
    """The hosts of the run (every record's host and peer, placeholders such as '*' left out)."""
    def compute():
        hosts = set()
        for record in view.records:
            for name in (record.get("host"), record.get("peer")):
                if name and name not in NOT_A_HOST:
                    hosts.add(name)
        return hosts
    return view.once("fleet_hosts", compute)


def grid(view):
    return view.once("grid", lambda: host_rail_grid(view.records, view.bandwidth_groups))


def groups(view):
    return view.once("finding_groups", lambda: finding_groups(view.findings, len(fleet_hosts(view))))


def slowest_latency(view, limit):
    """All latency rows when they are at most 2 x limit, else the ``limit`` slowest (highest latency first; rows
    made for those only)."""
    entries = view.latency_entries
    if len(entries) <= 2 * limit:
        return view.latency
    return [latency_row(entry) for entry in worst(entries, limit, key=lambda entry: -(num(entry[4]) or 0.0))]
