# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which versions of the test tools, libraries and NIC firmware the hosts of a run have (pure).

The versions come from each host's ``discover`` record (``metrics.versions``)
and from collective runs (``metrics.nccl_version`` / ``nccl_tests_version``:
what rank 0 printed, so they stand for the run's first host). NCCL's runtime
version is preferred to the one nccl.h declares: when any collective run
printed it, the header versions are left out, so the two sources never
count as a mismatch. Firmware is compared per adapter model.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

# Tools whose different versions across the hosts of a run are a finding.
COMPARED = ("nccl", "perftest", "firmware")
TOOL_ORDER = ("nccl", "nccl_tests", "perftest", "openmpi", "iperf3", "cann", "firmware", "driver")
PER_DEVICE = ("firmware", "driver")
MAX_HOST_PARTS = 8
FIXES = {
    "nccl": "Align NCCL on every host: pin one NCCL build (the container image or the libnccl package "
            "version) for the whole pool, then rerun.",
    "perftest": "Install the same perftest version on every host (pin the package or the image); "
                "versions differ in defaults and output. Then rerun.",
    "firmware": "Flash one firmware version on every adapter of this model (mlxfwmanager or mstflint with a "
                "pinned image), reset the NIC or reboot, then rerun.",
}
LABELS = {"nccl": "NCCL", "nccl_tests": "nccl-tests", "perftest": "perftest", "openmpi": "Open MPI",
          "iperf3": "iperf3", "cann": "CANN", "firmware": "NIC firmware", "driver": "NIC driver"}


def _text(value):
    return value.strip() if isinstance(value, str) and value.strip() else None


def _add(mix, tool, version, host):
    version = _text(version)
    if version and host:
        hosts = mix.setdefault(tool, {}).setdefault(version, [])
        if host not in hosts:
            hosts.append(host)


def _device_tool(tool, device, models):
    """'firmware MT4129' when the device's model is known, else the tool name."""
    model = _text(models.get(device)) if tool == "firmware" else None
    return "%s %s" % (tool, model) if model else tool


def _add_discovered(mix, host, versions):
    models = versions.get("nic_model") if isinstance(versions.get("nic_model"), dict) else {}
    for tool, value in versions.items():
        if tool in PER_DEVICE and isinstance(value, dict):
            for device, version in value.items():
                _add(mix, _device_tool(tool, device, models), version, host)
        elif tool in TOOL_ORDER and not isinstance(value, dict):
            _add(mix, tool, value, host)


def version_mix(records):
    """{tool: {version: [hosts, sorted]}} over the run's records; firmware keyed 'firmware <model>'."""
    mix = {}
    runtime = {}
    for record in records or []:
        if not isinstance(record, dict):
            continue
        metrics = record.get("metrics") if isinstance(record.get("metrics"), dict) else {}
        host = _text(record.get("host"))
        if record.get("kind") == "discover" and isinstance(metrics.get("versions"), dict):
            _add_discovered(mix, host, metrics["versions"])
        elif record.get("kind") == "collective":
            _add(runtime, "nccl", metrics.get("nccl_version"), host)
            _add(runtime, "nccl_tests", metrics.get("nccl_tests_version"), host)
    mix.update(runtime)
    return dict((tool, dict((v, sorted(h, key=natural_key)) for v, h in versions.items()))
                for tool, versions in mix.items())


def tool_sort_key(tool):
    base = tool.split(" ", 1)[0]
    return (TOOL_ORDER.index(base) if base in TOOL_ORDER else len(TOOL_ORDER), tool)


def tool_label(tool):
    """'firmware MT4129' -> 'NIC firmware MT4129'."""
    base, _sep, rest = tool.partition(" ")
    return (LABELS.get(base, base) + " " + rest).strip()


def version_findings(records):
    """One ``finding`` record (host '*', verdict warn) per compared tool whose hosts run different versions."""
    out = []
    mix = version_mix(records)
    for tool in sorted(mix, key=tool_sort_key):
        base = tool.split(" ", 1)[0]
        if base not in COMPARED or len(mix[tool]) < 2:
            continue
        out.append(_mismatch_finding(tool, base, mix[tool]))
    return out


def _mismatch_finding(tool, base, versions):
    # The most common version first: the odd hosts out come last.
    ordered = sorted(versions.items(), key=lambda vh: (-len(vh[1]), natural_key(vh[0])))
    cause = "the hosts of this run have different %s versions: %s" % (
        tool_label(tool), "; ".join("%s on %s" % (v, host_ranges(h)) for v, h in ordered))
    return {
        "kind": "finding",
        "host": "*",
        "peer": None,
        "params": {"check": "versions", "code": "version_mismatch", "tool": tool},
        "metrics": {"versions": dict(versions)},
        "verdict": "warn",
        "cause": cause,
        "fix": FIXES[base],
        "evidence": [],
    }


def with_version_findings(records):
    """The records with the version findings of this run (those already among them replaced)."""
    kept = [r for r in records or [] if not _is_version_finding(r)]
    return kept + version_findings(kept)


def _is_version_finding(record):
    params = record.get("params") if isinstance(record, dict) else None
    return (record.get("kind") == "finding" and isinstance(params, dict)
            and params.get("check") == "versions")


# --- host lists --------------------------------------------------------------------

def _numbered(host):
    """('node', '07') for 'node07'; None for a name without a trailing number."""
    match = re.match(r"^(.*?)(\d+)$", host)
    return (match.group(1), match.group(2)) if match else None


def host_ranges(hosts, limit=MAX_HOST_PARTS):
    """['h1', 'h2', 'h3', 'h4', 'x'] -> 'h1-h4, x'; more than ``limit`` parts end with '+N more'."""
    parts = []
    run = []
    for host in sorted(set(hosts or []), key=natural_key):
        if run and _follows(run[-1], host):
            run.append(host)
            continue
        parts.extend(_run_parts(run))
        run = [host]
    parts.extend(_run_parts(run))
    if len(parts) > limit:
        return "%s, +%d more" % (", ".join(parts[:limit]), len(parts) - limit)
    return ", ".join(parts)


def _follows(previous, host):
    """True when host is previous's successor: same prefix, number plus one, zero-padded alike."""
    a, b = _numbered(previous), _numbered(host)
    if not (a and b and a[0] == b[0] and int(b[1]) == int(a[1]) + 1):
        return False
    return len(a[1]) == len(b[1]) or not (a[1].startswith("0") or b[1].startswith("0"))


def _run_parts(run):
    if len(run) >= 3:
        return ["%s-%s" % (run[0], run[-1])]
    return list(run)


def version_rows(records):
    """The report's versions table: [{tool, version, hosts (compressed), count, mixed}], tool by tool."""
    mix = version_mix(records)
    rows = []
    for tool in sorted(mix, key=tool_sort_key):
        for version, hosts in sorted(mix[tool].items(), key=lambda vh: natural_key(vh[0])):
            rows.append({"tool": tool_label(tool), "version": version, "hosts": host_ranges(hosts),
                         "count": len(hosts), "mixed": len(mix[tool]) > 1})
    return rows
