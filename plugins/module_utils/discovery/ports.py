# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A sysfs snapshot -> ``devices[]`` with ``ports[]`` and ``gids[]`` (pure).

:func:`parse_devices` reads what the kernel says about each RDMA device and
port; the GID choice and the findings are added later by ``rdma_discovery``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.gid import (
    ROCE_V1,
    ZERO_GID,
    gid_ipv4,
    normalize_gid,
    normalize_gid_type,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.numa import pci_path_of
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.sysfs_values import (
    children,
    has_under,
    indexed,
    link_base,
    parse_int,
    parse_node_type,
    parse_pcie_speed,
    parse_pcie_width,
    parse_phys_state,
    parse_rate,
    parse_state,
    parse_traffic_class,
    port_fabric,
    text_at,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

ERROR_COUNTERS = ("symbol_error", "link_downed", "link_error_recovery", "port_rcv_errors",
                  "port_rcv_remote_physical_errors", "port_xmit_discards", "local_link_integrity_errors",
                  "excessive_buffer_overrun_errors")
HW_COUNTERS = ("out_of_sequence", "out_of_buffer", "packet_seq_err", "local_ack_timeout_err", "rnr_nak_retry_err",
               "np_cnp_sent", "np_ecn_marked_roce_packets", "rp_cnp_handled", "rp_cnp_ignored")


def netdev_info(snap, name):
    """What sysfs says about a netdev: operstate, mtu, address, master, bond slaves."""
    base = "class/net/%s" % name
    if not has_under(snap, base):
        return None
    slaves = text_at(snap, base + "/bonding/slaves")
    return {
        "name": name,
        "operstate": text_at(snap, base + "/operstate"),
        "mtu": parse_int(text_at(snap, base + "/mtu")),
        "address": text_at(snap, base + "/address"),
        "carrier": parse_int(text_at(snap, base + "/carrier")),
        "master": link_base(snap, base + "/master"),
        "bond_slaves": slaves.split() if slaves else None,
        "bond_mode": text_at(snap, base + "/bonding/mode"),
        "physical": isinstance(snap.get(base + "/device"), dict),
    }


# --- GIDs ------------------------------------------------------------------------

def _port_gids(snap, pbase, link_layer):
    """The in-use GID slots of a port: [{index, gid, type, netdev, ipv4}]."""
    gids = []
    has_attrs = has_under(snap, pbase + "/gid_attrs")
    for idx in sorted(children(snap, pbase + "/gids"), key=natural_key):
        if not idx.isdigit():
            continue
        gid = normalize_gid(text_at(snap, "%s/gids/%s" % (pbase, idx)))
        if gid is None or gid == ZERO_GID:
            continue
        gid_type = normalize_gid_type(text_at(snap, "%s/gid_attrs/types/%s" % (pbase, idx)))
        if gid_type is None and has_attrs and link_layer != "InfiniBand":
            # A RoCE slot whose type cannot be read is not in use.
            continue
        if gid_type is None and link_layer == "InfiniBand":
            gid_type = ROCE_V1
        gids.append({"index": int(idx), "gid": gid, "type": gid_type,
                     "netdev": _gid_netdev(text_at(snap, "%s/gid_attrs/ndevs/%s" % (pbase, idx))),
                     "ipv4": gid_ipv4(gid)})
    return gids


def _gid_netdev(text):
    """A GID slot's netdev name; None for an empty slot's error text ('Invalid argument')."""
    ndev = text or None
    if ndev and (" " in ndev or ndev.lower().startswith("invalid")):
        return None
    return ndev


# --- the netdev of a port ----------------------------------------------------------

def _device_netdevs(snap, dbase):
    """Netdevs of the device's PCI function: [(name, dev_port, dev_id)].

    From ``<dev>/device/net/*``; when that is missing, the netdevs whose
    ``class/net/<n>/device`` link names the same PCI function.
    """
    out = []
    for name in sorted(children(snap, dbase + "/device/net"), key=natural_key):
        out.append((name, parse_int(text_at(snap, "%s/device/net/%s/dev_port" % (dbase, name))),
                    parse_int(text_at(snap, "%s/device/net/%s/dev_id" % (dbase, name)))))
    if out:
        return out
    pci = link_base(snap, dbase + "/device")
    if not pci:
        return out
    for name in sorted(children(snap, "class/net"), key=natural_key):
        if link_base(snap, "class/net/%s/device" % name) == pci:
            out.append((name, parse_int(text_at(snap, "class/net/%s/dev_port" % name)),
                        parse_int(text_at(snap, "class/net/%s/dev_id" % name))))
    return out


def _pick_netdev(candidates):
    """One name out of several netdevs of a port: a parent (ib0) over its children (ib0.8001)."""
    if len(candidates) == 1:
        return candidates[0][0]
    parents = [c for c in candidates if "." not in c[0]]
    if len(parents) == 1:
        return parents[0][0]
    return None


def _netdev_from_gids(gids):
    """RoCE: the netdev of GID 0, else the netdev most GIDs name (None when no GID names one)."""
    by_index = dict((g["index"], g["netdev"]) for g in gids if g["netdev"])
    if 0 in by_index:
        return by_index[0]
    if not by_index:
        return None
    counts = {}
    for ndev in by_index.values():
        counts[ndev] = counts.get(ndev, 0) + 1
    return sorted(counts, key=lambda n: (-counts[n], n))[0]


def _netdev_of_pci_port(netdevs, port_num):
    """The PCI function's netdev of this port, by dev_port (the port index, port - 1).

    Older IPoIB kernels use dev_id instead; a function whose netdevs say
    neither has one netdev for all its ports.
    """
    chosen = None
    by_port = [n for n in netdevs if n[1] == port_num - 1]
    if by_port:
        chosen = _pick_netdev(by_port)
    if chosen is None:
        by_id = [n for n in netdevs if n[2] == port_num - 1]
        if by_id:
            chosen = _pick_netdev(by_id)
    if chosen is None and netdevs and all(n[1] is None and n[2] is None for n in netdevs):
        chosen = _pick_netdev(netdevs)
    return chosen


def _port_netdev(snap, dev_name, dbase, port_num, link_layer, gids):
    """The netdev of a port and where it came from: the GID table (RoCE), else the PCI function's netdevs."""
    roce = link_layer != "InfiniBand"
    if roce:
        from_gids = _netdev_from_gids(gids)
        if from_gids:
            return from_gids, "gids"
    chosen = _netdev_of_pci_port(_device_netdevs(snap, dbase), port_num)
    if chosen is None:
        return None, None
    info = netdev_info(snap, chosen)
    if roce and info and info.get("master") and "bond" in dev_name:
        return info["master"], "bond"
    return chosen, "device"


# --- devices and ports -------------------------------------------------------------

def parse_devices(snap):
    """devices[] (sorted by name) from a snapshot; ports and GIDs without selection or findings."""
    snap = indexed(snap)
    devices = []
    for name in sorted(children(snap, "class/infiniband"), key=natural_key):
        dbase = "class/infiniband/" + name
        device = _device_record(snap, name, dbase)
        for pnum in sorted((p for p in children(snap, dbase + "/ports") if p.isdigit()), key=int):
            port, info = _port_record(snap, name, dbase, pnum)
            port["fabric"] = port_fabric(port["link_layer"], device["node_type"])
            if info and info.get("bond_slaves"):
                device["bond"] = _bond(snap, port["netdev"], info)
            device["ports"].append(port)
        devices.append(device)
    return devices


def _device_record(snap, name, dbase):
    pci = link_base(snap, dbase + "/device")
    return {
        "name": name,
        "hca_type": text_at(snap, dbase + "/hca_type"),
        "fw_ver": text_at(snap, dbase + "/fw_ver"),
        "node_guid": text_at(snap, dbase + "/node_guid"),
        "board_id": text_at(snap, dbase + "/board_id"),
        "sys_image_guid": text_at(snap, dbase + "/sys_image_guid"),
        "node_desc": text_at(snap, dbase + "/node_desc"),
        # CA (InfiniBand/RoCE), RNIC (iWARP), unspecified (AWS EFA), usNIC; None where sysfs does not say
        "node_type": parse_node_type(text_at(snap, dbase + "/node_type")),
        "numa_node": parse_int(text_at(snap, dbase + "/device/numa_node")),
        "local_cpulist": text_at(snap, dbase + "/device/local_cpulist") or None,
        "pci": pci,
        "pci_path": pci_path_of(snap, pci),
        "pcie": _pcie_link(snap, dbase + "/device"),
        # how its DMA goes through the IOMMU: identity (passthrough), DMA / DMA-FQ (translated), ...
        "iommu": text_at(snap, dbase + "/device/iommu_group/type") or None,
        "bond": None,
        "ports": [],
    }


def _pcie_link(snap, pci_base):
    """{speed_gts, width, max_speed_gts, max_width} of the PCIe link of the device's PCI function (None for each
    value the kernel does not give: no such file, 'Unknown', width 0); None when it gives none of them."""
    link = {
        "speed_gts": parse_pcie_speed(text_at(snap, pci_base + "/current_link_speed")),
        "width": parse_pcie_width(text_at(snap, pci_base + "/current_link_width")),
        "max_speed_gts": parse_pcie_speed(text_at(snap, pci_base + "/max_link_speed")),
        "max_width": parse_pcie_width(text_at(snap, pci_base + "/max_link_width")),
    }
    return link if any(value is not None for value in link.values()) else None


def _port_record(snap, dev_name, dbase, pnum):
    """One port's record and its netdev's sysfs facts (None without a netdev)."""
    pbase = "%s/ports/%s" % (dbase, pnum)
    link_layer = text_at(snap, pbase + "/link_layer")
    if link_layer:
        link_layer = link_layer.splitlines()[0].strip()
    gids = _port_gids(snap, pbase, link_layer)
    netdev, netdev_source = _port_netdev(snap, dev_name, dbase, int(pnum), link_layer, gids)
    info = netdev_info(snap, netdev) if netdev else None
    port = {
        "port": int(pnum),
        "state": parse_state(text_at(snap, pbase + "/state")),
        "phys_state": parse_phys_state(text_at(snap, pbase + "/phys_state")),
        "link_layer": link_layer,
        "rate_gbps": parse_rate(text_at(snap, pbase + "/rate")),
        "rate": text_at(snap, pbase + "/rate"),
        "lid": parse_int(text_at(snap, pbase + "/lid")),
        "sm_lid": parse_int(text_at(snap, pbase + "/sm_lid")),
        "netdev": netdev,
        "netdev_source": netdev_source,
        "netdev_state": info.get("operstate") if info else None,
        "netdev_mtu": info.get("mtu") if info else None,
        "active_mtu": None,
        "ipv4": [],
        "gids": gids,
        "gid_index": None,
        "counters": _counters(snap, pbase + "/counters", ERROR_COUNTERS),
        "hw_counters": _counters(snap, pbase + "/hw_counters", HW_COUNTERS),
        "traffic_class": parse_traffic_class(text_at(snap, "%s/tc/%s/traffic_class" % (dbase, pnum))),
        "roce_tos": parse_int(text_at(snap, "kernel/config/rdma_cm/%s/ports/%s/default_roce_tos" % (dev_name, pnum))),
    }
    return port, info


def _counters(snap, folder, names):
    """{name: value} of the counters under folder that the snapshot has and that read as integers."""
    counters = {}
    for key in names:
        value = parse_int(text_at(snap, "%s/%s" % (folder, key)))
        if value is not None:
            counters[key] = value
    return counters


def _bond(snap, netdev, info):
    return {
        "netdev": netdev,
        "slaves": info["bond_slaves"],
        "mode": info.get("bond_mode"),
        "slave_states": dict((s, (netdev_info(snap, s) or {}).get("operstate")) for s in info["bond_slaves"]),
    }
