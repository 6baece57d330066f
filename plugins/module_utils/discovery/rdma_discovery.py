# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""RDMA discovery: a sysfs snapshot (plus a few host facts) -> devices, ports, GIDs, findings.

Everything here except :func:`collect` is a pure function over plain data:

- :func:`parse_devices` turns a snapshot (see ``sysfs_snapshot``) into
  ``devices[]`` with ``ports[]`` and ``gids[]``;
- :func:`select_gid` chooses the GID index a test should use (the RoCE v2
  GID whose IPv4 is the netdev's address; none for InfiniBand unless asked);
- :func:`host_findings` / :func:`port_findings` / :func:`cross_check` say
  what is wrong, each finding ``{severity, code, device, port, message, fix}``;
- :func:`discover` puts it all together into the ``commcheck_rdma`` fact.

:func:`collect` is the one impure entry point: it reads the snapshot and the
host facts through a transport (host or kubectl) and calls :func:`discover`.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ipaddress
import json
import os
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.sysfs_snapshot import snapshot
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.numa import gpus_from_snapshot, node_cpulists, pci_path_of
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibdev2netdev import parse_ibdev2netdev_full
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibstat import parse_ibstat_full
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibv_devinfo import parse_ibv_devinfo_full
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_rdma_link import (
    parse_rdma_link,
    parse_rdma_system,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_show_gids import parse_show_gids

SEVERITIES = ("error", "warning", "info")
ROCE_V2 = "RoCE v2"
ROCE_V1 = "IB/RoCE v1"
ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"
PORT_STATES = {0: "NOP", 1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER"}
PHYS_STATES = {1: "Sleep", 2: "Polling", 3: "Disabled", 4: "PortConfigurationTraining", 5: "LinkUp",
               6: "LinkErrorRecovery", 7: "Phy Test"}
ERROR_COUNTERS = ("symbol_error", "link_downed", "link_error_recovery", "port_rcv_errors",
                  "port_rcv_remote_physical_errors", "port_xmit_discards", "local_link_integrity_errors",
                  "excessive_buffer_overrun_errors")
HW_COUNTERS = ("out_of_sequence", "out_of_buffer", "packet_seq_err", "local_ack_timeout_err", "rnr_nak_retry_err",
               "np_cnp_sent", "np_ecn_marked_roce_packets", "rp_cnp_handled", "rp_cnp_ignored")
GPUDIRECT_MODULES = ("nvidia_peermem", "nv_peer_mem")
MEMLOCK_WARN_BYTES = 1 << 30
ROCE_GOOD_MTU = 4200
TOOL_TIMEOUT = 20
_KERNEL_GID = re.compile(r"^[0-9a-f]{4}(?::[0-9a-f]{4}){7}$")


# --- small parsers over sysfs text -------------------------------------------

def _num_prefix(text):
    """'4: ACTIVE' -> (4, 'ACTIVE'); 'ACTIVE' -> (None, 'ACTIVE'); None -> (None, None)."""
    if text is None:
        return None, None
    text = text.strip()
    if text.isdigit():
        return int(text), None
    match = re.match(r"^(\d+)\s*:\s*(.*)$", text)
    if match:
        return int(match.group(1)), match.group(2).strip() or None
    return None, text or None


def parse_state(text):
    """Port state as the kernel names it: 'ACTIVE', 'DOWN', 'INIT', 'ARMED' (None if unknown)."""
    num, name = _num_prefix(text)
    if name:
        return name.upper()
    return PORT_STATES.get(num) if num is not None else None


def parse_phys_state(text):
    """Physical state: 'LinkUp', 'Polling', 'Disabled', ... (None if unknown)."""
    num, name = _num_prefix(text)
    if name and name != "<unknown>":
        return name
    return PHYS_STATES.get(num) if num is not None else None


def parse_rate(text):
    """'100 Gb/sec (4X EDR)' -> 100; '2.5 Gb/sec (1X)' -> 2.5; None if unreadable."""
    if not text:
        return None
    match = re.match(r"^\s*(\d+(?:\.\d+)?)\s*Gb/sec", text)
    if not match:
        return None
    value = float(match.group(1))
    return int(value) if value == int(value) else value


def parse_traffic_class(text):
    """mlx5 ``tc/<port>/traffic_class``: 'Global tclass=106' / 'tclass=106' / '106' -> 106; '' -> None."""
    if not text:
        return None
    match = re.search(r"tclass\s*=\s*(\d+)", text)
    if match:
        return int(match.group(1))
    text = text.strip()
    return int(text) if text.isdigit() else None


def parse_int(text):
    """Kernel integers: '0x1a', '12', '-1' -> int; None if unreadable."""
    if text is None:
        return None
    text = text.strip()
    try:
        if text.lower().startswith(("0x", "-0x")):
            return int(text, 16)
        return int(text, 10)
    except ValueError:
        return None


def normalize_gid(text):
    """A GID in the kernel's 8x4 hex form (lower case), or None if it is not a GID."""
    if not text:
        return None
    text = text.strip().lower()
    if _KERNEL_GID.match(text):
        return text
    try:
        addr = ipaddress.IPv6Address(u"%s" % text)
    except (ValueError, ipaddress.AddressValueError):
        return None
    return ":".join(addr.exploded.split(":"))


def gid_ipv4(gid):
    """The IPv4 address of an IPv4-mapped GID (::ffff:a.b.c.d), else None."""
    gid = normalize_gid(gid)
    if not gid or not gid.startswith("0000:0000:0000:0000:0000:ffff:"):
        return None
    return str(ipaddress.IPv6Address(u"%s" % gid).ipv4_mapped)


def normalize_gid_type(text):
    """'RoCE v2' / 'IB/RoCE v1' (kernel spellings), tolerant of tool spellings; None if unknown."""
    if not text:
        return None
    low = text.strip().lower().replace(" ", "")
    if low in ("rocev2", "v2", "2"):
        return ROCE_V2
    if low in ("ib/rocev1", "rocev1", "v1", "ib", "1"):
        return ROCE_V1
    return None


# --- snapshot -> devices -------------------------------------------------------

class _IndexedSnapshot(dict):
    """A snapshot plus a parent -> children index built once (the trees have ~10^4 keys)."""

    def __init__(self, snap):
        dict.__init__(self, snap)
        self.kids = {}
        for key in snap:
            child = key
            while "/" in child:
                parent, name = child.rsplit("/", 1)
                known = parent in self.kids
                self.kids.setdefault(parent, set()).add(name)
                if known:
                    break
                child = parent


def _indexed(snap):
    return snap if isinstance(snap, _IndexedSnapshot) else _IndexedSnapshot(snap)


def _children(snap, prefix):
    """Names directly under prefix/ that appear in snapshot keys."""
    if isinstance(snap, _IndexedSnapshot):
        return set(snap.kids.get(prefix, ()))
    names = set()
    plen = len(prefix) + 1
    for key in snap:
        if key.startswith(prefix + "/"):
            names.add(key[plen:].split("/", 1)[0])
    return names


def _has_under(snap, prefix):
    if isinstance(snap, _IndexedSnapshot):
        return prefix in snap.kids or prefix in snap
    return prefix in snap or any(key.startswith(prefix + "/") for key in snap)


def _natural_key(name):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _text(snap, path):
    value = snap.get(path)
    if isinstance(value, dict) or value is None:
        return None
    return value.strip()


def _link_base(snap, path):
    value = snap.get(path)
    if isinstance(value, dict):
        target = value.get("link") or ""
        return target.rstrip("/").split("/")[-1] or None
    return None


def netdev_info(snap, name):
    """What sysfs says about a netdev: operstate, mtu, address, master, bond slaves."""
    base = "class/net/%s" % name
    exists = _has_under(snap, base)
    if not exists:
        return None
    slaves = _text(snap, base + "/bonding/slaves")
    return {
        "name": name,
        "operstate": _text(snap, base + "/operstate"),
        "mtu": parse_int(_text(snap, base + "/mtu")),
        "address": _text(snap, base + "/address"),
        "carrier": parse_int(_text(snap, base + "/carrier")),
        "master": _link_base(snap, base + "/master"),
        "bond_slaves": slaves.split() if slaves else None,
        "bond_mode": _text(snap, base + "/bonding/mode"),
        "physical": isinstance(snap.get(base + "/device"), dict),
    }


def _port_gids(snap, pbase, link_layer):
    gids = []
    has_attrs = _has_under(snap, pbase + "/gid_attrs")
    for idx in sorted(_children(snap, pbase + "/gids"), key=_natural_key):
        if not idx.isdigit():
            continue
        gid = normalize_gid(_text(snap, "%s/gids/%s" % (pbase, idx)))
        if gid is None or gid == ZERO_GID:
            continue
        raw_type = _text(snap, "%s/gid_attrs/types/%s" % (pbase, idx))
        gid_type = normalize_gid_type(raw_type)
        if gid_type is None and has_attrs and link_layer != "InfiniBand":
            # A RoCE slot whose type cannot be read is not in use.
            continue
        if gid_type is None and link_layer == "InfiniBand":
            gid_type = ROCE_V1
        ndev = _text(snap, "%s/gid_attrs/ndevs/%s" % (pbase, idx)) or None
        if ndev and (" " in ndev or ndev.lower().startswith("invalid")):
            ndev = None
        gids.append({"index": int(idx), "gid": gid, "type": gid_type, "netdev": ndev, "ipv4": gid_ipv4(gid)})
    return gids


def _device_netdevs(snap, dbase):
    """Netdevs of the device's PCI function: [(name, dev_port, dev_id)].

    From ``<dev>/device/net/*``; when that is missing, the netdevs whose
    ``class/net/<n>/device`` link names the same PCI function.
    """
    out = []
    for name in sorted(_children(snap, dbase + "/device/net"), key=_natural_key):
        out.append((name, parse_int(_text(snap, "%s/device/net/%s/dev_port" % (dbase, name))),
                    parse_int(_text(snap, "%s/device/net/%s/dev_id" % (dbase, name)))))
    if out:
        return out
    pci = _link_base(snap, dbase + "/device")
    if not pci:
        return out
    for name in sorted(_children(snap, "class/net"), key=_natural_key):
        if _link_base(snap, "class/net/%s/device" % name) == pci:
            out.append((name, parse_int(_text(snap, "class/net/%s/dev_port" % name)),
                        parse_int(_text(snap, "class/net/%s/dev_id" % name))))
    return out


def _pick_netdev(candidates):
    """One name out of several netdevs of a port: a parent (ib0) over its children (ib0.8001)."""
    if len(candidates) == 1:
        return candidates[0][0]
    parents = [c for c in candidates if "." not in c[0]]
    if len(parents) == 1:
        return parents[0][0]
    return None


def _port_netdev(snap, dev_name, dbase, port_num, link_layer, gids):
    """The netdev of a port: from the GID table (RoCE), else the PCI function's netdevs."""
    if link_layer != "InfiniBand":
        by_index = dict((g["index"], g["netdev"]) for g in gids if g["netdev"])
        if 0 in by_index:
            return by_index[0], "gids"
        if by_index:
            counts = {}
            for ndev in by_index.values():
                counts[ndev] = counts.get(ndev, 0) + 1
            return sorted(counts, key=lambda n: (-counts[n], n))[0], "gids"
    netdevs = _device_netdevs(snap, dbase)
    chosen = None
    if netdevs:
        # dev_port is the port index (port - 1); older IPoIB kernels use dev_id instead
        by_port = [n for n in netdevs if n[1] == port_num - 1]
        if by_port:
            chosen = _pick_netdev(by_port)
        if chosen is None:
            by_id = [n for n in netdevs if n[2] == port_num - 1]
            if by_id:
                chosen = _pick_netdev(by_id)
        if chosen is None and all(n[1] is None and n[2] is None for n in netdevs):
            chosen = _pick_netdev(netdevs)
    if chosen is None:
        return None, None
    info = netdev_info(snap, chosen)
    if link_layer != "InfiniBand" and info and info.get("master") and "bond" in dev_name:
        return info["master"], "bond"
    return chosen, "device"


def parse_devices(snap):
    """devices[] (sorted by name) from a snapshot; ports and GIDs without selection or findings."""
    devices = []
    snap = _indexed(snap)
    for name in sorted(_children(snap, "class/infiniband"), key=_natural_key):
        dbase = "class/infiniband/" + name
        device = {
            "name": name,
            "hca_type": _text(snap, dbase + "/hca_type"),
            "fw_ver": _text(snap, dbase + "/fw_ver"),
            "node_guid": _text(snap, dbase + "/node_guid"),
            "board_id": _text(snap, dbase + "/board_id"),
            "sys_image_guid": _text(snap, dbase + "/sys_image_guid"),
            "node_desc": _text(snap, dbase + "/node_desc"),
            "numa_node": parse_int(_text(snap, dbase + "/device/numa_node")),
            "local_cpulist": _text(snap, dbase + "/device/local_cpulist") or None,
            "pci": _link_base(snap, dbase + "/device"),
            "pci_path": pci_path_of(snap, _link_base(snap, dbase + "/device")),
            "bond": None,
            "ports": [],
        }
        for pnum in sorted((p for p in _children(snap, dbase + "/ports") if p.isdigit()), key=int):
            pbase = "%s/ports/%s" % (dbase, pnum)
            link_layer = _text(snap, pbase + "/link_layer")
            if link_layer:
                link_layer = link_layer.splitlines()[0].strip()
            gids = _port_gids(snap, pbase, link_layer)
            netdev, netdev_source = _port_netdev(snap, name, dbase, int(pnum), link_layer, gids)
            info = netdev_info(snap, netdev) if netdev else None
            counters = {}
            for key in ERROR_COUNTERS:
                value = parse_int(_text(snap, "%s/counters/%s" % (pbase, key)))
                if value is not None:
                    counters[key] = value
            hw_counters = {}
            for key in HW_COUNTERS:
                value = parse_int(_text(snap, "%s/hw_counters/%s" % (pbase, key)))
                if value is not None:
                    hw_counters[key] = value
            port = {
                "port": int(pnum),
                "state": parse_state(_text(snap, pbase + "/state")),
                "phys_state": parse_phys_state(_text(snap, pbase + "/phys_state")),
                "link_layer": link_layer,
                "rate_gbps": parse_rate(_text(snap, pbase + "/rate")),
                "rate": _text(snap, pbase + "/rate"),
                "lid": parse_int(_text(snap, pbase + "/lid")),
                "sm_lid": parse_int(_text(snap, pbase + "/sm_lid")),
                "netdev": netdev,
                "netdev_source": netdev_source,
                "netdev_state": info.get("operstate") if info else None,
                "netdev_mtu": info.get("mtu") if info else None,
                "active_mtu": None,
                "ipv4": [],
                "gids": gids,
                "gid_index": None,
                "counters": counters,
                "hw_counters": hw_counters,
                "traffic_class": parse_traffic_class(_text(snap, "%s/tc/%s/traffic_class" % (dbase, pnum))),
                "roce_tos": parse_int(_text(snap, "kernel/config/rdma_cm/%s/ports/%s/default_roce_tos" % (name, pnum))),
            }
            if info and info.get("bond_slaves"):
                device["bond"] = {
                    "netdev": netdev,
                    "slaves": info["bond_slaves"],
                    "mode": info.get("bond_mode"),
                    "slave_states": dict((s, (netdev_info(snap, s) or {}).get("operstate"))
                                         for s in info["bond_slaves"]),
                }
            device["ports"].append(port)
        devices.append(device)
    return devices


# --- GID selection -------------------------------------------------------------

def _in_subnet(ipv4, subnet):
    try:
        return ipaddress.ip_address(u"%s" % ipv4) in ipaddress.ip_network(u"%s" % subnet, strict=False)
    except ValueError:
        return False


def subnet_error(subnet):
    """An error message for a bad subnet option, or None."""
    if subnet in (None, ""):
        return None
    try:
        net = ipaddress.ip_network(u"%s" % subnet, strict=False)
    except ValueError as exc:
        return "subnet %r is not a valid CIDR network: %s" % (subnet, exc)
    if net.version != 4:
        return "subnet %r must be an IPv4 network (RoCE v2 GIDs are chosen by IPv4 address)" % (subnet,)
    return None


def select_gid(gids, link_layer="Ethernet", netdev=None, addresses=None, subnet=None, ib_gid_index=None,
               ipv6_fallback=False):
    """Choose the GID index to test with.

    - InfiniBand: None (the default GID is used), unless ``ib_gid_index`` is
      given and that slot is in use.
    - RoCE (any other link layer): among the ``RoCE v2`` GIDs with an IPv4
      address, those in ``subnet`` when given (any netdev; a VLAN or macvlan
      on top of the port's netdev has its own GIDs), else those of ``netdev``
      (when any are); then those whose IPv4 is one of ``addresses`` (the
      netdev's addresses from ``ip``, primary first) when that leaves any.
      The primary address's GID wins, then the lowest index. None if no
      candidate.

    ``ipv6_fallback`` (perftest's ``gid_index: auto``): when no RoCE v2 GID
    has an IPv4 address and no subnet is asked for, a RoCE v2 global IPv6
    GID, else a link-local one (the netdev's own first), rather than none.

    Returns ``{gid_index, candidates, reason}``; candidates are the indexes
    that qualified before the tie-break.
    """
    gids = [g for g in (gids or []) if isinstance(g, dict)]
    if link_layer == "InfiniBand":
        if ib_gid_index is not None:
            used = set(int(g["index"]) for g in gids if g.get("index") is not None)
            if int(ib_gid_index) in used:
                return {"gid_index": int(ib_gid_index), "candidates": [int(ib_gid_index)],
                        "reason": "InfiniBand: GID index %s as asked" % ib_gid_index}
            return {"gid_index": None, "candidates": [],
                    "reason": "InfiniBand: GID index %s asked for is not in use" % ib_gid_index}
        return {"gid_index": None, "candidates": [], "reason": "InfiniBand: no GID index needed"}
    cands = []
    for gid in gids:
        ipv4 = gid.get("ipv4") or gid_ipv4(gid.get("gid"))
        if normalize_gid_type(gid.get("type")) == ROCE_V2 and ipv4 and gid.get("index") is not None:
            cands.append((int(gid["index"]), ipv4, gid.get("netdev")))
    cands.sort()
    if not cands:
        if ipv6_fallback and not subnet:
            return _ipv6_gid(gids, netdev)
        return {"gid_index": None, "candidates": [], "reason": "no RoCE v2 GID with an IPv4 address"}
    if subnet:
        cands = [c for c in cands if _in_subnet(c[1], subnet)]
        if not cands:
            return {"gid_index": None, "candidates": [],
                    "reason": "no RoCE v2 GID with an IPv4 address in %s" % subnet}
    elif netdev:
        own = [c for c in cands if c[2] in (netdev, None)]
        if own:
            cands = own
    addresses = [str(a).split("/", 1)[0] for a in (addresses or [])]
    if addresses:
        matching = [c for c in cands if c[1] in addresses]
        if matching:
            cands = matching
    candidates = [c[0] for c in cands]
    for addr in addresses:
        for cand in cands:
            if cand[1] == addr:
                return {"gid_index": cand[0], "candidates": candidates,
                        "reason": "RoCE v2 GID of %s%s" % (addr, " in %s" % subnet if subnet else "")}
    return {"gid_index": cands[0][0], "candidates": candidates,
            "reason": "RoCE v2 GID of %s%s" % (cands[0][1], " in %s" % subnet if subnet else "")}


def _ipv6_gid(gids, netdev):
    """A RoCE v2 IPv6 GID for a port without IPv4 GIDs: global before link-local, the netdev's own first."""
    ranked = []
    for gid in gids:
        text = normalize_gid(gid.get("gid"))
        if normalize_gid_type(gid.get("type")) != ROCE_V2 or gid.get("index") is None or not text:
            continue
        address = ipaddress.IPv6Address(u"%s" % text)
        if int(address) == 0:
            continue
        foreign = bool(netdev) and gid.get("netdev") not in (netdev, None)
        ranked.append((foreign, address.is_link_local, int(gid["index"])))
    if not ranked:
        return {"gid_index": None, "candidates": [], "reason": "no RoCE v2 GID"}
    best = min(ranked)
    return {"gid_index": best[2], "candidates": sorted(r[2] for r in ranked),
            "reason": "RoCE v2 %s IPv6 GID (no IPv4 GID)" % ("link-local" if best[1] else "global")}


# --- host facts parsers --------------------------------------------------------

def parse_memlock(limits_text):
    """'Max locked memory' from /proc/<pid>/limits: {soft, hard} (ints in bytes or 'unlimited'), or None."""
    for line in (limits_text or "").splitlines():
        match = re.match(r"^Max locked memory\s+(\S+)\s+(\S+)", line)
        if match:
            def conv(value):
                return "unlimited" if value == "unlimited" else parse_int(value)
            return {"soft": conv(match.group(1)), "hard": conv(match.group(2))}
    return None


def parse_ip_addr(text):
    """IPv4 addresses per interface from ``ip -j -4 addr show`` (or ``ip -o -4 addr show``).

    Returns ``{ifname: ["a.b.c.d/len", ...]}`` with primary addresses first,
    or None when the text is neither format.
    """
    text = (text or "").strip()
    if not text:
        return None
    if text.startswith("["):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, list):
            out = {}
            for link in data:
                if not isinstance(link, dict) or not link.get("ifname"):
                    continue
                addrs = []
                for info in link.get("addr_info") or []:
                    if info.get("family", "inet") == "inet" and info.get("local"):
                        addrs.append((bool(info.get("secondary")), "%s/%s" % (info["local"], info.get("prefixlen", 32))))
                out[link["ifname"]] = [pair[1] for pair in sorted(addrs, key=lambda x: x[0])]
            return out
    out = {}
    found = False
    for line in text.splitlines():
        match = re.match(r"^\d+:\s+(\S+)\s+inet\s+(\d+\.\d+\.\d+\.\d+/\d+)(.*)$", line)
        if match:
            found = True
            name = match.group(1).split("@")[0]
            secondary = " secondary" in match.group(3)
            out.setdefault(name, []).append((secondary, match.group(2)))
    if not found:
        return None
    return dict((k, [pair[1] for pair in sorted(v, key=lambda x: x[0])]) for k, v in out.items())


def parse_netns_mode(text):
    """'shared' / 'exclusive' from ``rdma system show`` or ib_core's netns_mode parameter (Y/N/1/0)."""
    if text is None:
        return None
    match = re.search(r"\bnetns\s+(shared|exclusive)\b", text)
    if match:
        return match.group(1)
    value = text.strip().upper()
    if value in ("Y", "1"):
        return "shared"
    if value in ("N", "0"):
        return "exclusive"
    return None


def cpu_governors(snap):
    """{cpuN: governor} from the snapshot."""
    out = {}
    for key, value in snap.items():
        match = re.match(r"^devices/system/cpu/(cpu\d+)/cpufreq/scaling_governor$", key)
        if match and isinstance(value, str) and value.strip():
            out[match.group(1)] = value.strip()
    return out


def gpu_pci_functions(snap):
    """PCI functions that are NVIDIA GPUs (vendor 0x10de, display/3D class)."""
    out = []
    for key, value in snap.items():
        match = re.match(r"^bus/pci/devices/([^/]+)/vendor$", key)
        if match and isinstance(value, str) and value.strip().lower() == "0x10de":
            cls = _text(snap, "bus/pci/devices/%s/class" % match.group(1)) or ""
            if cls.lower().startswith(("0x0300", "0x0302")):
                out.append(match.group(1))
    return sorted(out)


def loaded_modules(snap):
    """Kernel modules the snapshot shows (``module/<name>/...`` keys)."""
    return sorted(set(key.split("/")[1] for key in snap if key.startswith("module/") and key.count("/") >= 2))


# --- findings ------------------------------------------------------------------

def finding(severity, code, message, fix, device=None, port=None):
    return {"severity": severity, "code": code, "device": device, "port": port, "message": message, "fix": fix}


def port_findings(device, port, expected_rate_gbps=None, subnet=None, selection=None, addresses=None):
    """Findings about one port (state, link, rate, GID, netdev, counters)."""
    name = device["name"]
    pnum = port["port"]
    where = "%s port %s" % (name, pnum)
    state = port.get("state")
    phys = port.get("phys_state")
    ll = port.get("link_layer")
    netdev = port.get("netdev")
    out = []
    active = state in ("ACTIVE", "ACTIVE_DEFER")
    if state == "DOWN":
        if phys == "Polling":
            fix = ("No link partner: check the cable/transceiver (mlxlink -d %s -m), that the peer switch port is "
                   "up and the link speeds match." % name)
        elif phys == "Disabled":
            fix = ("The port is disabled: bring up %s (ip link set %s up) or enable the port "
                   "(ibportstate / mlxlink --port_state UP)." % (netdev or "its netdev", netdev or "<netdev>"))
        else:
            fix = "Check the cable and the peer port, then the driver (dmesg | grep %s)." % name
        out.append(finding("error", "port_down", "%s is DOWN (physical state %s)." % (where, phys or "unknown"),
                           fix, name, pnum))
    elif state in ("INIT", "ARMED"):
        if ll == "InfiniBand":
            msg = "%s is %s: the link is up but no subnet manager has activated the port." % (where, state)
            fix = "Start or check the subnet manager (opensm, or the switch's SM) for this fabric; see sminfo."
        else:
            msg = "%s is %s, not ACTIVE." % (where, state)
            fix = "Check the netdev %s and the driver (dmesg)." % (netdev or "")
        out.append(finding("error", "port_not_active", msg, fix, name, pnum))
    elif state is None:
        out.append(finding("warning", "port_state_unknown", "%s: the port state cannot be read." % where,
                           "Check that the RDMA driver is loaded and healthy (dmesg).", name, pnum))
    if phys == "Polling":
        out.append(finding("error", "phys_state_polling",
                           "%s physical state is Polling: it is looking for a link partner and finds none." % where,
                           "Reseat or replace the cable/transceiver and check the peer (switch) port is enabled; "
                           "mlxlink -d %s -m shows cable and lane details." % name, name, pnum))
    rate = port.get("rate_gbps")
    if active and expected_rate_gbps and rate is not None and rate < float(expected_rate_gbps):
        out.append(finding("warning", "rate_below_expected",
                           "%s runs at %s Gb/s, expected %s Gb/s." % (where, rate, _num(expected_rate_gbps)),
                           "A lower rate means fewer lanes or a lower speed negotiated: check the cable, "
                           "the switch port speed and mlxlink -d %s (FEC, width)." % name, name, pnum))
    if ll and ll != "InfiniBand":
        if port.get("gid_index") is None:
            sev = "error" if active else "warning"
            if subnet:
                msg = "%s has no RoCE v2 GID with an IPv4 address in %s." % (where, subnet)
            else:
                msg = "%s has no RoCE v2 GID with an IPv4 address%s." % (
                    where, " (netdev %s)" % netdev if netdev else "")
            fix = ("Give %s an IPv4 address (the kernel then adds the RoCE v2 GID); in a pod, the RDMA device and "
                   "its netdev must be in the pod's network namespace." % (netdev or "the port's netdev"))
            out.append(finding(sev, "no_roce_v2_gid", msg, fix, name, pnum))
        elif selection and len(selection.get("candidates") or []) > 1 and not subnet:
            out.append(finding("info", "multiple_roce_v2_gids",
                               "%s has several RoCE v2 IPv4 GIDs (indexes %s); using %s." % (
                                   where, ", ".join(str(c) for c in selection["candidates"]), port["gid_index"]),
                               "Set subnet (commcheck_subnet) to choose the network the tests use.", name, pnum))
        if addresses is not None and netdev and port.get("gid_index") is not None:
            gid_ips = set(g["ipv4"] for g in port.get("gids") or [] if g.get("ipv4"))
            ips = set(a.split("/")[0] for a in addresses)
            if ips and not (ips & gid_ips):
                out.append(finding("warning", "gid_address_mismatch",
                                   "%s: the GIDs' IPv4 addresses (%s) are not the addresses of %s (%s)." % (
                                       where, ", ".join(sorted(gid_ips)), netdev, ", ".join(sorted(ips))),
                                   "The GID table follows the netdev's addresses; check the addresses are on the "
                                   "port's netdev itself (not only on an upper device) and the RDMA driver.",
                                   name, pnum))
        if not netdev:
            out.append(finding("warning", "no_netdev", "%s (RoCE) has no network device." % where,
                               "Check the NIC driver (mlx5_core) and that the netdev is in this network namespace.",
                               name, pnum))
        elif active and port.get("netdev_state") not in (None, "up", "unknown"):
            out.append(finding("warning", "netdev_down",
                               "%s is ACTIVE but its netdev %s is %s." % (where, netdev, port.get("netdev_state")),
                               "ip link set %s up, and check its addresses." % netdev, name, pnum))
        mtu = port.get("netdev_mtu")
        if active and mtu is not None and mtu < ROCE_GOOD_MTU:
            out.append(finding("info", "roce_mtu_small",
                               "%s: netdev %s MTU is %s, so the RoCE path MTU is at most %s bytes." % (
                                   where, netdev, mtu, _ib_mtu_for(mtu)),
                               "Use an MTU of at least 4200 (jumbo frames, e.g. 9000) on hosts and switches "
                               "for full RDMA bandwidth.", name, pnum))
    counters = port.get("counters") or {}
    bad = dict((k, v) for k, v in counters.items() if k in ("symbol_error", "link_downed") and v)
    if bad:
        out.append(finding("info", "port_error_counters",
                           "%s error counters since boot: %s." % (
                               where, ", ".join("%s=%s" % (k, bad[k]) for k in sorted(bad))),
                           "Rising symbol_error/link_downed counts mean a marginal cable or transceiver; "
                           "watch them during the tests.", name, pnum))
    return out


def _num(value):
    value = float(value)
    return int(value) if value == int(value) else value


def _ib_mtu_for(netdev_mtu):
    best = 256
    for size in (256, 512, 1024, 2048, 4096):
        if size + 100 <= netdev_mtu:
            best = size
    return best


def device_findings(devices, expected_rate_gbps=None):
    """Findings across devices: bonds and rates that differ between like ports."""
    out = []
    for device in devices:
        bond = device.get("bond")
        if bond:
            down = sorted(s for s, st in (bond.get("slave_states") or {}).items() if st not in (None, "up", "unknown"))
            out.append(finding("info", "bond_device",
                               "%s is a RoCE LAG over %s (slaves %s%s)." % (
                                   device["name"], bond["netdev"], ", ".join(bond["slaves"]),
                                   ", mode %s" % bond["mode"] if bond.get("mode") else ""),
                               "Tests through a bond use one slave per connection; run with several QPs "
                               "(perftest -q) to use both.", device["name"], None))
            if down:
                out.append(finding("warning", "bond_slave_down",
                                   "%s: bond %s slave(s) %s are down." % (device["name"], bond["netdev"],
                                                                          ", ".join(down)),
                                   "Check the cables and switch ports of %s." % ", ".join(down),
                                   device["name"], None))
    if expected_rate_gbps:
        return out
    groups = {}
    for device in devices:
        for port in device["ports"]:
            if port.get("state") == "ACTIVE" and port.get("rate_gbps") is not None:
                key = (device.get("hca_type"), port.get("link_layer"))
                groups.setdefault(key, []).append((device["name"], port))
    for key, members in sorted(groups.items(), key=lambda kv: str(kv[0])):
        if len(members) < 2:
            continue
        top = max(member[1]["rate_gbps"] for member in members)
        for name, port in members:
            if port["rate_gbps"] < top:
                out.append(finding("warning", "rate_inconsistent",
                                   "%s port %s runs at %s Gb/s while other %s ports of this host run at %s Gb/s." % (
                                       name, port["port"], port["rate_gbps"], key[0] or "like", top),
                                   "Check the cable and switch port of this link (mlxlink -d %s); set "
                                   "expected_rate_gbps to check against a fixed rate." % name,
                                   name, port["port"]))
    return out


def host_findings(devices, host):
    """Host-level findings: no devices, netns, memlock, governor, perftest, GPUDirect."""
    out = []
    root = host.get("sysfs_root") or "/sys"
    netns = host.get("netns_mode")
    in_container = host.get("in_container")
    if not devices:
        if host.get("sysfs_error"):
            msg = "No RDMA devices: %s." % host["sysfs_error"]
        else:
            msg = "No RDMA devices under %s/class/infiniband." % root.rstrip("/")
        fix = ("Load the NIC's RDMA driver (mlx5_core + mlx5_ib, ib_uverbs) and check lspci; in a pod, request the "
               "RDMA device resource (e.g. rdma/hca or an SR-IOV VF) or use host networking.")
        out.append(finding("error", "no_rdma_devices", msg, fix))
    if netns == "exclusive" and (in_container or not devices):
        if devices:
            out.append(finding("info", "rdma_netns_exclusive",
                               "The RDMA subsystem is in exclusive network-namespace mode: this container sees "
                               "only the %d device(s) moved into its namespace." % len(devices),
                               "Nothing to do if these are the devices the tests should use; otherwise move "
                               "devices with rdma dev set DEV netns NS.", None, None))
        else:
            out.append(finding("error", "rdma_netns_exclusive",
                               "The RDMA subsystem is in exclusive network-namespace mode and no RDMA device is "
                               "in this network namespace.",
                               "Move a device into this namespace (rdma dev set DEV netns NS; the RDMA device "
                               "plugin / SR-IOV CNI does this for pods) or switch the host to shared mode "
                               "(rdma system set netns shared).", None, None))
    memlock = host.get("memlock")
    if memlock and memlock.get("soft") != "unlimited" and memlock.get("soft") is not None:
        soft = memlock["soft"]
        sev = "warning" if soft < MEMLOCK_WARN_BYTES else "info"
        out.append(finding(sev, "memlock_limited",
                           "RLIMIT_MEMLOCK is %s (soft) / %s (hard): large RDMA buffers fail to register "
                           "(perftest: \"Couldn't allocate MR\")." % (_bytes(soft), _bytes(memlock.get("hard"))),
                           "Set memlock to unlimited: '* - memlock unlimited' in /etc/security/limits.d/ (new "
                           "login), LimitMEMLOCK=infinity for services, or a pod with IPC_LOCK and no memlock "
                           "limit (container runtime --ulimit memlock=-1).", None, None))
    governors = host.get("cpu_governors") or {}
    other = dict((cpu, gov) for cpu, gov in governors.items() if gov != "performance")
    if other:
        counts = {}
        for gov in other.values():
            counts[gov] = counts.get(gov, 0) + 1
        out.append(finding("warning", "cpu_governor_not_performance",
                           "%d of %d CPUs are not on the performance governor (%s): latency and bandwidth "
                           "results vary (perftest warns about conflicting CPU frequency)." % (
                               len(other), len(governors),
                               ", ".join("%s: %d" % (g, counts[g]) for g in sorted(counts))),
                           "Use the clusterops.commcheck.cpu_governor module (governor: performance) for the "
                           "test and restore afterwards, or cpupower frequency-set -g performance.", None, None))
    if host.get("perftest") is None and host.get("perftest_checked", True):
        out.append(finding("warning", "perftest_missing",
                           "perftest (ib_write_bw) is not installed; RDMA bandwidth/latency tests cannot run.",
                           "Install perftest (apt install perftest / dnf install perftest) or use an image that "
                           "has it.", None, None))
    gpus = host.get("gpus") or {}
    if gpus.get("present") and not host.get("gpudirect_module"):
        out.append(finding("warning", "gpudirect_module_missing",
                           "NVIDIA GPUs are present (%s) but neither nvidia_peermem nor nv_peer_mem is loaded: "
                           "GPUDirect RDMA is off unless DMA-BUF is used." % ", ".join(gpus.get("evidence") or []),
                           "modprobe nvidia_peermem (ships with the NVIDIA driver; load it at boot), or use "
                           "DMA-BUF (open kernel modules, NCCL_DMABUF_ENABLE=1).", None, None))
    return out


def _bytes(value):
    if value in (None, "unlimited"):
        return value or "unknown"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= size and value % size == 0:
            return "%d %s" % (value // size, unit)
    return "%d bytes" % value


# --- tool cross-check ----------------------------------------------------------

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


def _mismatch(tool, device, port, what, tool_value, sysfs_value):
    return finding("warning", "tool_mismatch",
                   "%s says %s%s %s is %s; sysfs says %s." % (
                       tool, device, "/%s" % port if port is not None else "", what, tool_value, sysfs_value),
                   "The state changed between the reads, or the tool reads another namespace/device set; "
                   "rerun discovery and compare %s with /sys/class/infiniband." % tool, device, port)


def cross_check(devices, tools):
    """Compare sysfs with tool outputs; returns tool_mismatch / verbs_devices_missing findings.

    ``tools`` maps a tool name to its parsed output: ``ibdev2netdev`` (list of
    {device, port, netdev}), ``ibstat`` (list of CAs), ``ibv_devinfo`` (list of
    hca), ``rdma_link`` (list of {device, port, state, physical_state, netdev}),
    ``show_gids`` (list of {device, port, gid_index, ipv4, version}). Only
    devices both sides know are compared; a tool that lists nothing is skipped
    (except ``ibv_devinfo``: seeing none while sysfs has some means user space
    cannot use the devices).
    """
    out = []
    ports = {}
    for device in devices:
        for port in device["ports"]:
            ports[(device["name"], port["port"])] = port
    names = set(d["name"] for d in devices)

    def device_sets(tool, listed):
        if not listed:
            return
        for name in sorted(listed - names):
            out.append(finding("warning", "tool_mismatch", "%s lists %s, which sysfs does not have." % (tool, name),
                               "Compare the tool with /sys/class/infiniband (namespace or sysfs root).", name, None))
        for name in sorted(names - listed):
            out.append(finding("warning", "tool_mismatch", "%s does not list %s, which sysfs has." % (tool, name),
                               "The device may be unusable from user space; check the driver and %s." % tool,
                               name, None))

    entries = tools.get("ibdev2netdev")
    if entries:
        device_sets("ibdev2netdev", set(e.get("device") for e in entries if e.get("device")))
        for entry in entries:
            port = ports.get((entry.get("device"), entry.get("port")))
            if port and entry.get("netdev") and port.get("netdev") and entry["netdev"] != port["netdev"]:
                out.append(_mismatch("ibdev2netdev", entry["device"], entry["port"], "netdev",
                                     entry["netdev"], port["netdev"]))
    cas = tools.get("ibstat")
    if cas:
        device_sets("ibstat", set(ca.get("name") for ca in cas if ca.get("name")))
        for ca in cas:
            for tport in ca.get("ports") or []:
                port = ports.get((ca.get("name"), tport.get("port")))
                if not port:
                    continue
                for what, tval, sval, canon in (
                        ("state", tport.get("state"), port.get("state"), _canon_state),
                        ("physical state", tport.get("phys_state"), port.get("phys_state"), _canon_phys),
                        ("link layer", tport.get("link_layer"), port.get("link_layer"), _canon_phys)):
                    if tval and sval and canon(tval) != canon(sval):
                        out.append(_mismatch("ibstat", ca["name"], tport["port"], what, tval, sval))
                trate = tport.get("rate")
                if (isinstance(trate, (int, float)) and port.get("rate_gbps") is not None
                        and port.get("state") == "ACTIVE" and abs(trate - port["rate_gbps"]) > 0.01):
                    out.append(_mismatch("ibstat", ca["name"], tport["port"], "rate", "%s Gb/s" % trate,
                                         "%s Gb/s" % port["rate_gbps"]))
    hcas = tools.get("ibv_devinfo")
    if hcas is not None:
        listed = set(h.get("hca_id") for h in hcas if h.get("hca_id"))
        if devices and not listed:
            out.append(finding("error", "verbs_devices_missing",
                               "ibv_devinfo (libibverbs) sees no RDMA device while sysfs has %d: user-space RDMA "
                               "(perftest, NCCL) cannot open them." % len(devices),
                               "Install the verbs providers (rdma-core / ibverbs-providers, or MLNX_OFED/DOCA) "
                               "matching the driver, load ib_uverbs, and in a pod mount /dev/infiniband.",
                               None, None))
        else:
            device_sets("ibv_devinfo", listed)
        for hca in hcas:
            for tport in hca.get("ports") or []:
                port = ports.get((hca.get("hca_id"), tport.get("port")))
                if not port:
                    continue
                if tport.get("active_mtu"):
                    port["active_mtu"] = tport["active_mtu"]
                for what, tval, sval, canon in (
                        ("state", tport.get("state"), port.get("state"), _canon_state),
                        ("link layer", tport.get("link_layer"), port.get("link_layer"), _canon_phys)):
                    if tval and sval and canon(tval) != canon(sval):
                        out.append(_mismatch("ibv_devinfo", hca["hca_id"], tport["port"], what, tval, sval))
    links = tools.get("rdma_link")
    if links:
        device_sets("rdma link", set(e.get("device") for e in links if e.get("device")))
        for entry in links:
            port = ports.get((entry.get("device"), entry.get("port")))
            if not port:
                continue
            for what, tval, sval, canon in (
                    ("state", entry.get("state"), port.get("state"), _canon_state),
                    ("physical state", entry.get("physical_state"), port.get("phys_state"), _canon_phys)):
                if tval and sval and canon(tval) != canon(sval):
                    out.append(_mismatch("rdma link", entry["device"], entry["port"], what, tval, sval))
            if entry.get("netdev") and port.get("netdev") and entry["netdev"] != port["netdev"]:
                out.append(_mismatch("rdma link", entry["device"], entry["port"], "netdev",
                                     entry["netdev"], port["netdev"]))
    gids = tools.get("show_gids")
    if gids:
        theirs = {}
        for entry in gids:
            version = str(entry.get("version") or "").lower()
            if entry.get("ipv4") and version in ("v2", "2", "roce v2"):
                theirs.setdefault((entry.get("device"), entry.get("port")), set()).add(
                    (entry.get("gid_index"), entry.get("ipv4")))
        for key, values in sorted(theirs.items(), key=lambda kv: str(kv[0])):
            port = ports.get(key)
            if not port:
                continue
            ours = set((g["index"], g["ipv4"]) for g in port.get("gids") or [] if g.get("ipv4")
                       and g.get("type") == ROCE_V2)
            if ours != values:
                out.append(_mismatch("show_gids", key[0], key[1], "RoCE v2 IPv4 GIDs",
                                     _fmt_gids(values), _fmt_gids(ours)))
    return out


def _fmt_gids(pairs):
    return ", ".join("%s=%s" % (i, ip) for i, ip in sorted(pairs, key=lambda p: (p[0] is None, p[0]))) or "none"


# --- putting it together -------------------------------------------------------

def _sort_findings(findings):
    order = dict((s, i) for i, s in enumerate(SEVERITIES))
    return sorted(findings, key=lambda f: (order.get(f["severity"], 9), f.get("device") or "",
                                           f.get("port") or 0, f["code"]))


def discover(snap, host=None, expected_rate_gbps=None, subnet=None, ib_gid_index=None, addresses=None,
             tools=None):
    """The ``commcheck_rdma`` fact from a snapshot and host facts (pure).

    host: ``{sysfs_root, sysfs_error, memlock, netns_mode, in_container,
    perftest, gpus: {present, evidence}, gpudirect_module, cpu_governors}``
    (missing keys are read from the snapshot where it has them);
    addresses: ``{netdev: ["a.b.c.d/len", ...]}`` from ``ip`` or None;
    tools: parsed tool outputs for :func:`cross_check` or None.
    """
    host = dict(host or {})
    devices = parse_devices(snap)
    host.setdefault("cpu_governors", cpu_governors(snap))
    modules = loaded_modules(snap)
    if "netns_mode" not in host or host["netns_mode"] is None:
        host["netns_mode"] = parse_netns_mode(_text(snap, "module/ib_core/parameters/netns_mode"))
    if "gpudirect_module" not in host:
        host["gpudirect_module"] = next((m for m in GPUDIRECT_MODULES if m in modules), None)
    gpus = dict(host.get("gpus") or {})
    evidence = list(gpus.get("evidence") or [])
    pci_gpus = gpu_pci_functions(snap)
    if pci_gpus:
        evidence.append("%d NVIDIA PCI GPU function(s)" % len(pci_gpus))
    if "nvidia" in modules:
        evidence.append("nvidia module loaded")
    gpus["evidence"] = evidence
    gpus["present"] = bool(evidence)
    gpus["pci"] = pci_gpus
    gpus["devices"] = gpus_from_snapshot(snap)
    host["gpus"] = gpus
    findings = []
    gid_index = {}
    for device in devices:
        for port in device["ports"]:
            netdev = port.get("netdev")
            port_addrs = addresses.get(netdev) if (addresses is not None and netdev) else None
            selection = select_gid(port["gids"], port.get("link_layer"), netdev=netdev,
                                   addresses=port_addrs, subnet=subnet, ib_gid_index=ib_gid_index)
            port["gid_index"] = selection["gid_index"]
            port["gid_reason"] = selection["reason"]
            if port_addrs is not None:
                port["ipv4"] = [a.split("/")[0] for a in port_addrs]
                port["ipv4_cidr"] = [a for a in port_addrs if "/" in a]
            else:
                seen = []
                for gid in port["gids"]:
                    if gid.get("ipv4") and gid["ipv4"] not in seen and gid.get("netdev") in (netdev, None):
                        seen.append(gid["ipv4"])
                port["ipv4"] = seen
            gid_index["%s/%s" % (device["name"], port["port"])] = port["gid_index"]
            findings.extend(port_findings(device, port, expected_rate_gbps, subnet, selection, port_addrs))
    findings.extend(device_findings(devices, expected_rate_gbps))
    if tools:
        findings.extend(cross_check(devices, tools))
    findings.extend(host_findings(devices, host))
    findings = _sort_findings(findings)
    counts = dict((s, sum(1 for f in findings if f["severity"] == s)) for s in SEVERITIES)
    all_ports = [p for d in devices for p in d["ports"]]
    return {
        "devices": devices,
        "findings": findings,
        "gid_index": gid_index,
        "summary": {
            "devices": len(devices),
            "ports": len(all_ports),
            "active_ports": sum(1 for p in all_ports if p.get("state") == "ACTIVE"),
            "errors": counts["error"],
            "warnings": counts["warning"],
            "infos": counts["info"],
            "worst": next((s for s in SEVERITIES if counts[s]), None),
        },
        "host": {
            "sysfs_root": host.get("sysfs_root"),
            "memlock": host.get("memlock"),
            "netns_mode": host.get("netns_mode"),
            "in_container": host.get("in_container"),
            "perftest": host.get("perftest"),
            "gpus": host["gpus"],
            "gpudirect_module": host.get("gpudirect_module"),
            "cpu_governors": _governor_counts(host.get("cpu_governors") or {}),
            "numa_nodes": dict((str(k), v) for k, v in sorted(node_cpulists(snap).items())),
            "modules": modules,
        },
    }


def _governor_counts(governors):
    counts = {}
    for gov in governors.values():
        counts[gov] = counts.get(gov, 0) + 1
    return counts


VERDICT_FOR = {"error": "fail", "warning": "warn", "info": "pass"}


def discovery_records(host_name, facts):
    """Records (results contract) for one host's discovery: one ``discover`` + one ``finding`` each."""
    summary = facts.get("summary") or {}
    worst = summary.get("worst")
    records = [{
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
        },
        "verdict": VERDICT_FOR.get(worst, "pass"),
        "cause": None,
        "fix": None,
        "evidence": [],
    }]
    first_error = next((f for f in facts.get("findings") or [] if f["severity"] == worst), None)
    if first_error and worst != "info":
        records[0]["cause"] = first_error["message"]
        records[0]["fix"] = first_error["fix"]
    for item in facts.get("findings") or []:
        records.append({
            "kind": "finding",
            "host": host_name,
            "peer": None,
            "params": {"code": item["code"], "severity": item["severity"], "device": item.get("device"),
                       "port": item.get("port")},
            "metrics": {},
            "verdict": VERDICT_FOR.get(item["severity"], "warn"),
            "cause": item["message"],
            "fix": item["fix"],
            "evidence": [],
        })
    return records


# --- gathering through a transport (impure) -------------------------------------

def _is_default_root(root):
    return os.path.normpath(root or "/sys") == "/sys"


def _run_tool(transport, argv, timeout=TOOL_TIMEOUT):
    try:
        res = transport.run(argv, timeout)
    except Exception as exc:  # pylint: disable=broad-except
        return {"cmd": argv, "rc": None, "stdout": "", "stderr": str(exc), "timed_out": False}
    return res


def collect(transport, sysfs_root="/sys", expected_rate_gbps=None, subnet=None, ib_gid_index=None,
            tools=None, address_source="auto", timeout=60):
    """Read everything through the transport and return the ``commcheck_rdma`` fact.

    tools: None = run the cross-check tools only when sysfs_root is /sys;
    address_source: ``auto`` (``ip`` when sysfs_root is /sys, else the GIDs),
    ``ip`` or ``gids``.
    """
    snap, info = snapshot(transport, sysfs_root, timeout=timeout)
    host = {"sysfs_root": sysfs_root}
    if not any(key.startswith("class/infiniband/") for key in snap):
        if info["errors"]:
            host["sysfs_error"] = "; ".join(e["message"] for e in info["errors"])
    limits = transport.read_file("/proc/self/limits")
    host["memlock"] = parse_memlock(limits)
    in_container = bool(getattr(transport, "remote", False))
    for marker in ("/.dockerenv", "/run/.containerenv"):
        if not in_container and transport.read_file(marker) is not None:
            in_container = True
    if not in_container and not getattr(transport, "remote", False) and os.environ.get("KUBERNETES_SERVICE_HOST"):
        in_container = True
    host["in_container"] = in_container
    host["perftest"] = transport.which("ib_write_bw")
    evidence = []
    if transport.read_file("/proc/driver/nvidia/version") is not None:
        evidence.append("/proc/driver/nvidia")
    if transport.which("nvidia-smi"):
        evidence.append("nvidia-smi")
    host["gpus"] = {"evidence": evidence}

    run_tools = _is_default_root(sysfs_root) if tools is None else bool(tools)
    tool_results = {}
    parsed = {}
    cmds = []
    if run_tools:
        specs = (
            ("ibdev2netdev", ["ibdev2netdev"], lambda t: parse_ibdev2netdev_full(t)["devices"]),
            ("ibstat", ["ibstat"], lambda t: parse_ibstat_full(t)["cas"]),
            ("ibv_devinfo", ["ibv_devinfo"], lambda t: parse_ibv_devinfo_full(t)["devices"]),
            ("rdma_link", ["rdma", "link", "show"], parse_rdma_link),
            ("show_gids", ["show_gids"], parse_show_gids),
        )
        for name, argv, parser in specs:
            path = transport.which(argv[0])
            if not path:
                tool_results[name] = {"ran": False, "reason": "not installed"}
                continue
            res = _run_tool(transport, [path] + argv[1:])
            cmds.append(res.get("cmd"))
            text = (res.get("stdout") or "") + "\n" + (res.get("stderr") or "")
            try:
                value = parser(text)
            except Exception as exc:  # pylint: disable=broad-except
                value = None
                res["stderr"] = "%s\nparser error: %s" % (res.get("stderr") or "", exc)
            tool_results[name] = {"ran": True, "rc": res.get("rc"), "timed_out": res.get("timed_out"),
                                  "entries": len(value) if isinstance(value, list) else None}
            if res.get("timed_out") or value is None:
                continue
            if name == "ibv_devinfo" and res.get("rc") not in (0, None) and not value:
                # "Failed to get IB devices list" / "No IB devices found": user space sees nothing.
                parsed[name] = []
            elif value or name == "ibv_devinfo":
                parsed[name] = value
        rdma = transport.which("rdma")
        if rdma:
            res = _run_tool(transport, [rdma, "system", "show"])
            mode = parse_rdma_system(res.get("stdout") or "").get("netns_mode") if res.get("rc") == 0 else None
            if mode:
                host["netns_mode"] = mode
    addresses = None
    use_ip = address_source == "ip" or (address_source == "auto" and _is_default_root(sysfs_root))
    if use_ip:
        ip_bin = transport.which("ip")
        if ip_bin:
            res = _run_tool(transport, [ip_bin, "-j", "-4", "addr", "show"])
            addresses = parse_ip_addr(res.get("stdout")) if res.get("rc") == 0 else None
            if addresses is None:
                res = _run_tool(transport, [ip_bin, "-o", "-4", "addr", "show"])
                addresses = parse_ip_addr(res.get("stdout")) if res.get("rc") == 0 else None
    facts = discover(snap, host, expected_rate_gbps=expected_rate_gbps, subnet=subnet,
                     ib_gid_index=ib_gid_index, addresses=addresses, tools=parsed if run_tools else None)
    facts["sources"] = {
        "sysfs": info["source"],
        "sysfs_errors": info["errors"],
        "addresses": "ip" if addresses is not None else "gids",
        "tools": tool_results,
    }
    return facts


# --- operator table --------------------------------------------------------------

TABLE_COLUMNS = ("HOST", "DEVICE", "PORT", "STATE", "PHYS", "RATE", "LINK", "NETDEV", "GID")


def _cell(value):
    return "-" if value is None or value == "" else str(value)


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
    for host in sorted(facts_by_host, key=_natural_key):
        facts = facts_by_host[host] or {}
        devices = facts.get("devices") or []
        if not devices:
            rows.append((host, "(no RDMA devices)", "", "", "", "", "", "", ""))
        for device in devices:
            for port in device.get("ports") or []:
                rate = port.get("rate_gbps")
                rows.append((host, device.get("name"), port.get("port"), port.get("state"), port.get("phys_state"),
                             "%sG" % rate if rate is not None else None, port.get("link_layer"),
                             port.get("netdev"), port.get("gid_index")))
            if not device.get("ports"):
                rows.append((host, device.get("name"), "(no ports)", "", "", "", "", "", ""))
        for item in facts.get("findings") or []:
            found.append((host, item))
    rows = [tuple("" if c == "" else _cell(c) for c in row) for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(TABLE_COLUMNS))]
    lines = ["  ".join(row[i].ljust(widths[i]) for i in range(len(row))).rstrip() for row in rows]
    if findings:
        limit = SEVERITIES.index(min_severity)
        shown = [(h, f) for h, f in found if SEVERITIES.index(f.get("severity", "info")) <= limit]
        order = dict((s, i) for i, s in enumerate(SEVERITIES))
        shown.sort(key=lambda hf: (order.get(hf[1].get("severity"), 9), _natural_key(hf[0]),
                                   hf[1].get("device") or "", hf[1].get("port") or 0, hf[1].get("code")))
        lines.append("")
        lines.append("Findings: %d error(s), %d warning(s), %d info" % tuple(
            sum(1 for hf in found if hf[1].get("severity") == s) for s in SEVERITIES))
        for host, item in shown:
            where = item.get("device") or ""
            if item.get("port") is not None:
                where += "/%s" % item["port"]
            lines.append("%-7s %s %s%s: %s Fix: %s" % (
                item.get("severity", "").upper(), host, where + " " if where else "", item.get("code"),
                item.get("message"), item.get("fix")))
    return lines
