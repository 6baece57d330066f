# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""RDMA discovery: a sysfs snapshot (plus a few host facts) -> the ``commcheck_rdma`` fact.

:func:`discover` is pure and puts the stages together:

- ``ports.parse_devices``: ``devices[]`` with ``ports[]`` and ``gids[]``;
- ``gid.select_gid``: the GID index each port's tests use;
- ``findings`` / ``cross_check``: what is wrong, each finding
  ``{severity, code, device, port, message, fix}``;
- ``host_facts``: memlock, netns mode, CPU governors, GPUs, modules.

:func:`collect` is the one impure entry point: it reads the snapshot and the
host facts through a transport (host or kubectl, see ``gather``) and calls
:func:`discover`. ``report`` turns the fact into records and a table.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import gather
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import ib_fabric_scan, ib_topology
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.cross_check import cross_check
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.findings import (
    SEVERITIES,
    device_findings,
    host_findings,
    port_findings,
    sort_findings,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.gid import select_gid
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.host_facts import (
    complete_host,
    governor_counts,
    loaded_modules,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.numa import node_cpulists
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.ports import parse_devices
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.sysfs_snapshot import snapshot
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import topology
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.sysfs_values import link_base, text_at
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.tool_versions import (
    driver_version,
    firmware_version,
)

TOOL_VERSION_KEYS = ("perftest", "iperf3", "openmpi", "nccl", "nccl_tests", "cann")
# the tools that name each port's leaf switch (lldpd's neighbours; smpquery is asked per InfiniBand port): they ask
# the switches, not sysfs, so they may run where the cross-check tools do not (``topology_tools``)
TOPOLOGY_TOOLS = ("lldpctl",)


def discover(snap, host=None, expected_rate_gbps=None, subnet=None, ib_gid_index=None, addresses=None,
             tools=None):
    """The ``commcheck_rdma`` fact from a snapshot and host facts (pure).

    host: ``{sysfs_root, sysfs_error, memlock, cap_eff, ipc_lock, netns_mode, in_container,
    perftest, gpus: {present, evidence}, gpudirect_module, cpu_governors, tool_versions}``
    (missing keys are read from the snapshot where it has them);
    addresses: ``{netdev: ["a.b.c.d/len", ...]}`` from ``ip`` or None;
    tools: parsed tool outputs for :func:`cross_check` or None (``lldpctl``'s neighbours, ``smpquery``'s answers and
    the ``iblinkinfo`` / ``ibnetdiscover`` scans give ``topology``, the leaf switch of each port:
    ``discovery.ib_topology.discovered``).
    """
    devices = parse_devices(snap)
    modules = loaded_modules(snap)
    host = complete_host(host, snap, modules)
    findings = []
    gid_index = {}
    for device in devices:
        for port in device["ports"]:
            netdev = port.get("netdev")
            port_addrs = addresses.get(netdev) if (addresses is not None and netdev) else None
            selection = select_gid(port["gids"], port.get("link_layer"), netdev=netdev,
                                   addresses=port_addrs, subnet=subnet, ib_gid_index=ib_gid_index)
            _set_port_addressing(port, selection, port_addrs)
            gid_index["%s/%s" % (device["name"], port["port"])] = port["gid_index"]
            findings.extend(port_findings(device, port, expected_rate_gbps, subnet, selection, port_addrs))
    findings.extend(device_findings(devices, expected_rate_gbps, virtual=host.get("virtual")))
    if tools:
        findings.extend(cross_check(devices, tools))
    findings.extend(host_findings(devices, host))
    findings = sort_findings(findings)
    return {
        "devices": devices,
        "topology": ib_topology.discovered(tools, devices),
        "findings": findings,
        "gid_index": gid_index,
        "summary": _summary(devices, findings),
        "host": _host_section(host, snap, modules, versions(host.get("tool_versions"), devices, snap)),
    }


def _set_port_addressing(port, selection, port_addrs):
    """The chosen GID and the port's IPv4 addresses: from ``ip`` when given, else its own GIDs'."""
    port["gid_index"] = selection["gid_index"]
    port["gid_reason"] = selection["reason"]
    if port_addrs is not None:
        port["ipv4"] = [a.split("/")[0] for a in port_addrs]
        port["ipv4_cidr"] = [a for a in port_addrs if "/" in a]
        return
    seen = []
    for gid in port["gids"]:
        if gid.get("ipv4") and gid["ipv4"] not in seen and gid.get("netdev") in (port.get("netdev"), None):
            seen.append(gid["ipv4"])
    port["ipv4"] = seen


def _summary(devices, findings):
    counts = dict((s, sum(1 for f in findings if f["severity"] == s)) for s in SEVERITIES)
    all_ports = [p for d in devices for p in d["ports"]]
    return {
        "devices": len(devices),
        "ports": len(all_ports),
        "active_ports": sum(1 for p in all_ports if p.get("state") == "ACTIVE"),
        "errors": counts["error"],
        "warnings": counts["warning"],
        "infos": counts["info"],
        "worst": next((s for s in SEVERITIES if counts[s]), None),
    }


def _host_section(host, snap, modules, tool_versions):
    return {
        "versions": tool_versions,
        "sysfs_root": host.get("sysfs_root"),
        "memlock": host.get("memlock"),
        "ipc_lock": host.get("ipc_lock"),
        "netns_mode": host.get("netns_mode"),
        "in_container": host.get("in_container"),
        "perftest": host.get("perftest"),
        "gpus": host["gpus"],
        "npus": host["npus"],
        "gpudirect_module": host.get("gpudirect_module"),
        "virtual": host.get("virtual"),
        "cpu_governors": governor_counts(host.get("cpu_governors") or {}),
        "numa_nodes": dict((str(k), v) for k, v in sorted(node_cpulists(snap).items())),
        "modules": modules,
        "identity": host.get("identity"),
    }


def versions(tool_versions, devices, snap):
    """{perftest, iperf3, openmpi, nccl, nccl_tests, cann, firmware: {dev: fw}, driver: {dev: "name version"},
    nic_model: {dev: hca_type}} (firmware is compared per model).

    The tools' versions are those probed (None where not probed or not found);
    firmware and driver come from sysfs.
    """
    out = dict((key, (tool_versions or {}).get(key)) for key in TOOL_VERSION_KEYS)
    out["firmware"] = {}
    out["driver"] = {}
    out["nic_model"] = {}
    for device in devices:
        name = device["name"]
        if device.get("hca_type"):
            out["nic_model"][name] = device["hca_type"]
        fw_ver = firmware_version(device.get("fw_ver"))
        if fw_ver:
            out["firmware"][name] = fw_ver
        driver = link_base(snap, "class/infiniband/%s/device/driver" % name)
        if driver:
            version = driver_version(text_at(snap, "module/%s/version" % driver))
            out["driver"][name] = "%s %s" % (driver, version) if version else driver
    return out


def collect(transport, sysfs_root="/sys", expected_rate_gbps=None, subnet=None, ib_gid_index=None,
            tools=None, address_source="auto", timeout=60, topology_tools=None):
    """Read everything through the transport and return the ``commcheck_rdma`` fact.

    tools: None = run the cross-check tools only when sysfs_root is /sys;
    topology_tools: whether to ask lldpctl and smpquery for each port's leaf switch (None: as ``tools``);
    address_source: ``auto`` (``ip`` when sysfs_root is /sys, else the GIDs),
    ``ip`` or ``gids``.
    """
    snap, info = snapshot(transport, sysfs_root, timeout=timeout)
    host = {"sysfs_root": sysfs_root}
    if not any(key.startswith("class/infiniband/") for key in snap) and info["errors"]:
        host["sysfs_error"] = "; ".join(e["message"] for e in info["errors"])
    host.update(gather.probe_host(transport))
    run_tools = gather.is_default_root(sysfs_root) if tools is None else bool(tools)
    run_topology = run_tools if topology_tools is None else bool(topology_tools)
    tool_results, parsed = {}, {}
    if run_tools or run_topology:
        names = [spec[0] for spec in gather.TOOL_SPECS if (spec[0] in TOPOLOGY_TOOLS and run_topology)
                 or (spec[0] not in TOPOLOGY_TOOLS and run_tools)]
        tool_results, parsed = gather.run_tools(transport, names)
    if run_topology:
        devices = parse_devices(snap)
        tool_results["smpquery"], neighbours = gather.query_ib_neighbours(transport, devices)
        if neighbours:
            parsed["smpquery"] = neighbours
        scans, scanned = ib_fabric_scan.scan_fabric(transport, devices, topology.from_smpquery(neighbours, devices),
                                                    parsed.get("ibstat"))
        tool_results.update(scans)
        parsed.update(scanned)
    if run_tools:
        host["tool_versions"] = gather.tool_version_probes(transport)
        mode = gather.rdma_netns_mode(transport)
        if mode:
            host["netns_mode"] = mode
    addresses = None
    if address_source == "ip" or (address_source == "auto" and gather.is_default_root(sysfs_root)):
        addresses = gather.ip_addresses(transport)
    facts = discover(snap, host, expected_rate_gbps=expected_rate_gbps, subnet=subnet,
                     ib_gid_index=ib_gid_index, addresses=addresses,
                     tools=parsed if run_tools or run_topology else None)
    facts["sources"] = {
        "sysfs": info["source"],
        "sysfs_errors": info["errors"],
        "addresses": "ip" if addresses is not None else "gids",
        "tools": tool_results,
    }
    return facts


PORT_COUNTER_KEYS = ("port", "netdev", "rate_gbps", "counters", "hw_counters")


def port_counters(transport, sysfs_root="/sys", timeout=60):
    """The port counters of every RDMA device, shaped like the ``commcheck_rdma`` fact (``devices`` with
    their ``name`` and ``ports``, each port only its C(port), C(netdev), C(rate_gbps), C(counters),
    C(hw_counters)): a reading after a test, for the counter deltas, read as discovery reads them."""
    facts = collect(transport, sysfs_root=sysfs_root, tools=False, address_source="gids", timeout=timeout)
    devices = []
    for dev in facts.get("devices") or []:
        ports = [dict((k, port.get(k)) for k in PORT_COUNTER_KEYS) for port in dev.get("ports") or []]
        devices.append({"name": dev.get("name"), "ports": ports})
    return {"devices": devices}
