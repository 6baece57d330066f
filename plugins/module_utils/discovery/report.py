# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``commcheck_rdma`` fact for people and for history: result records and the operator table (pure)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.findings import SEVERITIES
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

VERDICT_FOR = {"error": "fail", "warning": "warn", "info": "pass"}
TABLE_COLUMNS = ("HOST", "DEVICE", "PORT", "STATE", "PHYS", "RATE", "LINK", "NETDEV", "GID")


# --- records -------------------------------------------------------------------------

def discovery_records(host_name, facts):
    """Records (results contract) for one host's discovery: one ``discover`` + one ``finding`` each."""
    records = [_discover_record(host_name, facts)]
    for item in facts.get("findings") or []:
        records.append({
            "kind": "finding",
            "host": host_name,
            "peer": None,
            "params": {"check": "discover", "code": item["code"], "severity": item["severity"],
                       "device": item.get("device"), "port": item.get("port")},
            "metrics": {},
            "verdict": VERDICT_FOR.get(item["severity"], "warn"),
            "cause": item["message"],
            "fix": item["fix"],
            "evidence": [],
        })
    return records


def _discover_record(host_name, facts):
    """The summary record; its cause and fix are those of the first finding of the worst severity."""
    summary = facts.get("summary") or {}
    worst = summary.get("worst")
    record = {
        "kind": "discover",
        "host": host_name,
        "peer": None,
        "params": {"sysfs_root": (facts.get("host") or {}).get("sysfs_root")},
        "metrics": {
            "devices": summary.get("devices", 0),
            "ports": summary.get("ports", 0),
            "active_ports": summary.get("active_ports", 0),
            "errors": summary.get("errors", 0),
            "warnings": summary.get("warnings", 0),
            "ports_detail": [
                {"device": d["name"], "port": p["port"], "state": p.get("state"),
                 "rate_gbps": p.get("rate_gbps"), "link_layer": p.get("link_layer"),
                 "netdev": p.get("netdev"), "gid_index": p.get("gid_index")}
                for d in facts.get("devices") or [] for p in d.get("ports") or []],
            "versions": compact_versions((facts.get("host") or {}).get("versions")),
        },
        "verdict": VERDICT_FOR.get(worst, "pass"),
        "cause": None,
        "fix": None,
        "evidence": [],
    }
    if facts.get("topology"):
        # the leaf switch of each device's port where lldpd or smpquery named one (discovery.topology)
        record["params"]["topology"] = dict((str(key), dict(where)) for key, where in facts["topology"].items())
    first = next((f for f in facts.get("findings") or [] if f["severity"] == worst), None)
    if first and worst != "info":
        record["cause"] = first["message"]
        record["fix"] = first["fix"]
    return record


def compact_versions(versions):
    """The versions found: tools and libraries without a version and empty per-device maps left out."""
    return dict((key, value) for key, value in (versions or {}).items() if value)


# --- operator table --------------------------------------------------------------------

def discovery_table(facts_by_host, findings=True, min_severity="info"):
    """Lines of a compact per-host table plus the findings (pure).

    ``facts_by_host``: ``{host: commcheck_rdma}`` (a single ``commcheck_rdma``
    dict is taken as host ``-``). Findings below ``min_severity`` are left
    out. Returns a list of strings (one line each) for a debug message.
    """
    if not isinstance(facts_by_host, dict):
        raise ValueError("expected a dict of host -> commcheck_rdma facts")
    if min_severity not in SEVERITIES:
        raise ValueError("min_severity must be one of %s" % ", ".join(SEVERITIES))
    if "devices" in facts_by_host and "findings" in facts_by_host:
        facts_by_host = {"-": facts_by_host}
    rows = [TABLE_COLUMNS]
    found = []
    for host in sorted(facts_by_host, key=natural_key):
        facts = facts_by_host[host] or {}
        rows.extend(_host_rows(host, facts.get("devices") or []))
        found.extend((host, item) for item in facts.get("findings") or [])
    lines = _aligned(rows)
    if findings:
        lines.extend(_findings_lines(found, min_severity))
    return lines


def _host_rows(host, devices):
    if not devices:
        return [(host, "(no RDMA devices)", "", "", "", "", "", "", "")]
    rows = []
    for device in devices:
        for port in device.get("ports") or []:
            rate = port.get("rate_gbps")
            rows.append((host, device.get("name"), port.get("port"), port.get("state"), port.get("phys_state"),
                         "%sG" % rate if rate is not None else None, port.get("link_layer"),
                         port.get("netdev"), port.get("gid_index")))
        if not device.get("ports"):
            rows.append((host, device.get("name"), "(no ports)", "", "", "", "", "", ""))
    return rows


def _cell(value):
    return "-" if value is None or value == "" else str(value)


def _aligned(rows):
    """Rows as left-aligned columns; an empty cell stays empty, a missing value shows as '-'."""
    rows = [tuple("" if c == "" else _cell(c) for c in row) for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(TABLE_COLUMNS))]
    return ["  ".join(row[i].ljust(widths[i]) for i in range(len(row))).rstrip() for row in rows]


def _findings_lines(found, min_severity):
    """A count line over all findings, then one line for each finding at min_severity or worse."""
    limit = SEVERITIES.index(min_severity)
    shown = [(h, f) for h, f in found if SEVERITIES.index(f.get("severity", "info")) <= limit]
    order = dict((s, i) for i, s in enumerate(SEVERITIES))
    shown.sort(key=lambda hf: (order.get(hf[1].get("severity"), 9), natural_key(hf[0]),
                               hf[1].get("device") or "", hf[1].get("port") or 0, hf[1].get("code")))
    lines = ["", "Findings: %d error(s), %d warning(s), %d info" % tuple(
        sum(1 for hf in found if hf[1].get("severity") == s) for s in SEVERITIES)]
    lines.extend(_finding_line(host, item) for host, item in shown)
    return lines


def _finding_line(host, item):
    where = item.get("device") or ""
    if item.get("port") is not None:
        where += "/%s" % item["port"]
    return "%-7s %s %s%s: %s Fix: %s" % (
        item.get("severity", "").upper(), host, where + " " if where else "", item.get("code"),
        item.get("message"), item.get("fix"))
