# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""sysfs against the RDMA tools: ``tool_mismatch`` / ``verbs_devices_missing`` findings (pure).

One ``_check_<tool>`` function per tool compares that tool's parsed output
with the ports read from sysfs.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.findings import finding
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.gid import ROCE_V2


def cross_check(devices, tools):
    """Compare sysfs with tool outputs; returns tool_mismatch / verbs_devices_missing findings.

    ``tools`` maps a tool name to its parsed output: ``ibdev2netdev`` (list of
    {device, port, netdev}), ``ibstat`` (list of CAs), ``ibv_devinfo`` (list of
    hca), ``rdma_link`` (list of {device, port, state, physical_state, netdev}),
    ``show_gids`` (list of {device, port, gid_index, ipv4, version}). Only
    devices both sides know are compared; a tool that lists nothing is skipped
    (except ``ibv_devinfo``: seeing none while sysfs has some means user space
    cannot use the devices).

    ``ibv_devinfo`` also fills each port's ``active_mtu`` (sysfs does not have it).
    """
    sysfs = _Sysfs(devices)
    out = []
    if tools.get("ibdev2netdev"):
        out.extend(_check_ibdev2netdev(sysfs, tools["ibdev2netdev"]))
    if tools.get("ibstat"):
        out.extend(_check_ibstat(sysfs, tools["ibstat"]))
    if tools.get("ibv_devinfo") is not None:
        out.extend(_check_ibv_devinfo(sysfs, tools["ibv_devinfo"]))
    if tools.get("rdma_link"):
        out.extend(_check_rdma_link(sysfs, tools["rdma_link"]))
    if tools.get("show_gids"):
        out.extend(_check_show_gids(sysfs, tools["show_gids"]))
    return out


class _Sysfs(object):
    """The devices sysfs has, with their ports by (device, port number)."""

    def __init__(self, devices):
        self.devices = devices
        self.names = set(d["name"] for d in devices)
        self.ports = {}
        for device in devices:
            for port in device["ports"]:
                self.ports[(device["name"], port["port"])] = port

    def port(self, device, num):
        return self.ports.get((device, num))


# --- shared comparisons ----------------------------------------------------------------

def _canon_state(value):
    if value is None:
        return None
    text = re.sub(r"\(\s*\d+\s*\)", "", str(value))
    text = re.sub(r"^\s*\d+\s*:\s*", "", text)
    text = re.sub(r"[^A-Z]", "", text.upper())
    if text.startswith("PORT"):
        text = text[4:]
    return {"INITIALIZING": "INIT", "ACTIVEDEFER": "ACTIVE"}.get(text, text) or None


def _canon_phys(value):
    if value is None:
        return None
    text = re.sub(r"\(\s*\d+\s*\)", "", str(value))
    text = re.sub(r"^\s*\d+\s*:\s*", "", text)
    return re.sub(r"[^A-Z]", "", text.upper()) or None


def _canon_link_layer(value):
    """'Unspecified' (ibv_devinfo) and 'Unknown' (sysfs, ibstat) name the same thing: a link layer that is neither
    InfiniBand nor Ethernet (AWS EFA)."""
    text = _canon_phys(value)
    return "UNSPECIFIED" if text == "UNKNOWN" else text


def _mismatch(tool, device, port, what, tool_value, sysfs_value):
    return finding("warning", "tool_mismatch",
                   "%s says %s%s %s is %s; sysfs says %s." % (
                       tool, device, "/%s" % port if port is not None else "", what, tool_value, sysfs_value),
                   "The state changed between the reads, or the tool reads another namespace/device set; "
                   "rerun discovery and compare %s with /sys/class/infiniband." % tool, device, port)


def _device_sets(tool, listed, sysfs):
    """Devices the tool lists that sysfs does not have, and the other way round (nothing if it lists none)."""
    if not listed:
        return []
    out = []
    for name in sorted(listed - sysfs.names):
        out.append(finding("warning", "tool_mismatch", "%s lists %s, which sysfs does not have." % (tool, name),
                           "Compare the tool with /sys/class/infiniband (namespace or sysfs root).", name, None))
    for name in sorted(sysfs.names - listed):
        out.append(finding("warning", "tool_mismatch", "%s does not list %s, which sysfs has." % (tool, name),
                           "The device may be unusable from user space; check the driver and %s." % tool,
                           name, None))
    return out


def _field_mismatches(tool, device, num, fields):
    """fields: (what, tool value, sysfs value, canonical form); a mismatch for each pair both sides have."""
    return [_mismatch(tool, device, num, what, tval, sval) for what, tval, sval, canon in fields
            if tval and sval and canon(tval) != canon(sval)]


def _netdev_mismatch(tool, entry, port):
    if entry.get("netdev") and port.get("netdev") and entry["netdev"] != port["netdev"]:
        return [_mismatch(tool, entry["device"], entry["port"], "netdev", entry["netdev"], port["netdev"])]
    return []


# --- one function per tool --------------------------------------------------------------

def _check_ibdev2netdev(sysfs, entries):
    out = _device_sets("ibdev2netdev", set(e.get("device") for e in entries if e.get("device")), sysfs)
    for entry in entries:
        port = sysfs.port(entry.get("device"), entry.get("port"))
        if port:
            out.extend(_netdev_mismatch("ibdev2netdev", entry, port))
    return out


def _check_ibstat(sysfs, cas):
    out = _device_sets("ibstat", set(ca.get("name") for ca in cas if ca.get("name")), sysfs)
    for ca in cas:
        for tport in ca.get("ports") or []:
            port = sysfs.port(ca.get("name"), tport.get("port"))
            if port:
                out.extend(_ibstat_port(ca["name"], tport, port))
    return out


def _ibstat_port(name, tport, port):
    out = _field_mismatches("ibstat", name, tport["port"], (
        ("state", tport.get("state"), port.get("state"), _canon_state),
        ("physical state", tport.get("phys_state"), port.get("phys_state"), _canon_phys),
        ("link layer", tport.get("link_layer"), port.get("link_layer"), _canon_link_layer)))
    trate = tport.get("rate")
    if (isinstance(trate, (int, float)) and port.get("rate_gbps") is not None
            and port.get("state") == "ACTIVE" and abs(trate - port["rate_gbps"]) > 0.01):
        out.append(_mismatch("ibstat", name, tport["port"], "rate", "%s Gb/s" % trate,
                             "%s Gb/s" % port["rate_gbps"]))
    return out


def _check_ibv_devinfo(sysfs, hcas):
    listed = set(h.get("hca_id") for h in hcas if h.get("hca_id"))
    if sysfs.devices and not listed:
        out = [finding("error", "verbs_devices_missing",
                       "ibv_devinfo (libibverbs) sees no RDMA device while sysfs has %d: user-space RDMA "
                       "(perftest, NCCL) cannot open them." % len(sysfs.devices),
                       "Install the verbs providers (rdma-core / ibverbs-providers, or MLNX_OFED/DOCA) "
                       "matching the driver, load ib_uverbs, and in a pod mount /dev/infiniband.",
                       None, None)]
    else:
        out = _device_sets("ibv_devinfo", listed, sysfs)
    for hca in hcas:
        for tport in hca.get("ports") or []:
            port = sysfs.port(hca.get("hca_id"), tport.get("port"))
            if not port:
                continue
            if tport.get("active_mtu"):
                port["active_mtu"] = tport["active_mtu"]
            fields = [("state", tport.get("state"), port.get("state"), _canon_state)]
            # rdma-core before PR #884 printed InfiniBand for a device of unspecified transport (AWS EFA):
            # its link layer says nothing there
            if str(hca.get("transport") or "").lower() != "unspecified":
                fields.append(("link layer", tport.get("link_layer"), port.get("link_layer"), _canon_link_layer))
            out.extend(_field_mismatches("ibv_devinfo", hca["hca_id"], tport["port"], fields))
    return out


def _check_rdma_link(sysfs, links):
    out = _device_sets("rdma link", set(e.get("device") for e in links if e.get("device")), sysfs)
    for entry in links:
        port = sysfs.port(entry.get("device"), entry.get("port"))
        if not port:
            continue
        out.extend(_field_mismatches("rdma link", entry["device"], entry["port"], (
            ("state", entry.get("state"), port.get("state"), _canon_state),
            ("physical state", entry.get("physical_state"), port.get("phys_state"), _canon_phys))))
        out.extend(_netdev_mismatch("rdma link", entry, port))
    return out


def _check_show_gids(sysfs, entries):
    out = []
    for key, theirs in sorted(_show_gids_roce_v2_ipv4(entries).items(), key=lambda kv: str(kv[0])):
        port = sysfs.ports.get(key)
        if not port:
            continue
        ours = set((g["index"], g["ipv4"]) for g in port.get("gids") or [] if g.get("ipv4")
                   and g.get("type") == ROCE_V2)
        if ours != theirs:
            out.append(_mismatch("show_gids", key[0], key[1], "RoCE v2 IPv4 GIDs",
                                 _fmt_gids(theirs), _fmt_gids(ours)))
    return out


def _show_gids_roce_v2_ipv4(entries):
    """{(device, port): {(gid_index, ipv4)}} of the RoCE v2 GIDs show_gids lists with an IPv4 address."""
    theirs = {}
    for entry in entries:
        version = str(entry.get("version") or "").lower()
        if entry.get("ipv4") and version in ("v2", "2", "roce v2"):
            theirs.setdefault((entry.get("device"), entry.get("port")), set()).add(
                (entry.get("gid_index"), entry.get("ipv4")))
    return theirs


def _fmt_gids(pairs):
    return ", ".join("%s=%s" % (i, ip) for i, ip in sorted(pairs, key=lambda p: (p[0] is None, p[0]))) or "none"
