# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""EMULATED /sys trees for tests and the lab (never imported by plugins/).

``build_sysfs(root, devices, cpus=None, modules=(), net=None, gpus=0)`` writes
a /sys-like tree under ``root`` (``root`` stands for ``/sys``) laid out like
the kernel lays it out, so ``rdma_facts(sysfs_root=root)`` reads it exactly as
it reads a real node:

- ``devices/pci0000:00/<pci>/`` is the PCI function of each RDMA device with
  ``vendor``, ``device``, ``class``, ``numa_node``, ``net/<netdev>/`` (the
  netdevs of that PCI function, real directories) and
  ``infiniband/<dev>/`` (the RDMA device directory, real directory);
  ``bus/pci/devices/<pci>`` links to it.
- ``class/infiniband/<dev>`` is a symlink to that RDMA device directory; in
  it: ``board_id fw_ver hca_type node_guid sys_image_guid node_desc
  node_type``, ``device`` (symlink ``../../../<pci>``, the PCI device dir),
  ``ports/<n>/{state phys_state rate link_layer lid sm_lid sm_sl cap_mask
  lid_mask_count}``, ``ports/<n>/gids/<i>``,
  ``ports/<n>/gid_attrs/{types,ndevs}/<i>``, ``ports/<n>/counters/*``,
  ``ports/<n>/hw_counters/*``. File contents use the kernel's formats
  (drivers/infiniband/core/sysfs.c): ``4: ACTIVE``, ``5: LinkUp``,
  ``100 Gb/sec (4X EDR)``, ``0x1a`` (lid), GIDs as eight groups of four hex
  digits, ``RoCE v2`` / ``IB/RoCE v1``.
- Unused GID slots (the table has ``gid_tbl_len`` entries, most unused): the
  GID reads as all zeros and the type / ndev files cannot be read (the
  kernel answers EINVAL). Emulated as EMPTY files with mode 000 (an empty
  read is what root gets), or, with ``unused_gid_style="einval_text"``, as
  files containing ``Invalid argument``.
- ``class/net/<netdev>`` is a symlink to the netdev directory (under its PCI
  function, or ``devices/virtual/net/<name>`` for bonds and other virtual
  devices) with ``operstate mtu address carrier type ifindex dev_id
  dev_port``, ``device`` (symlink to the PCI dir, physical netdevs only);
  bonds have ``bonding/{slaves,mode}`` and their slaves a ``master`` symlink
  and the bond an ``upper``-less ``lower_<slave>`` link like the kernel.
- ``devices/system/cpu/cpu<N>/cpufreq/{scaling_governor,
  scaling_available_governors, scaling_driver}``.
- ``module/<name>/`` (``initstate`` = ``live``) for loaded modules, with
  ``parameters/<p>`` files (e.g. ``ib_core`` ``netns_mode`` = ``Y``/``N``).
- ``gpus=N`` adds N NVIDIA GPU PCI functions (vendor 0x10de, class 0x030200),
  on NUMA node 0 or ``gpu_numa_nodes[i]`` (``add_gpu`` / ``remove_gpu`` one more or less later).
- ``devices/system/node/node<N>/cpulist`` from ``numa_nodes`` ({node:
  cpulist}; default: one node 0 with all ``cpus``), and each device's PCI
  ``local_cpulist`` (its ``local_cpulist`` or its node's cpulist).

Arguments
---------
``devices``: list of dicts::

    {"name": "mlx5_0", "hca_type": "MT4129", "fw_ver": "28.41.1000",
     "node_guid": "b83f:d203:00a1:b2c4" (default derived from the name),
     "sys_image_guid": ..., "board_id": "MT_0000000838", "node_desc": ...,
     "numa_node": 0, "pci": "0000:17:00.0" (default assigned),
     "vendor": "0x15b3", "pci_device": "0x1021",
     "netdevs": ["ens1f1np1"] (extra netdevs of the PCI function),
     "pcie": {"current_link_speed": "8.0 GT/s PCIe", "current_link_width": 8, ...} (default PCIE_LINK;
              a None value leaves that file out),
     "iommu": "DMA-FQ" (the type of its IOMMU group, kernel/iommu_groups/<n>/type, linked from the PCI
               function's iommu_group; default: no IOMMU group, as with the IOMMU off),
     "ports": [port, ...]}

``port``::

    {"port": 1, "state": "ACTIVE" | "4: ACTIVE" | 4,
     "phys_state": "LinkUp" | "5: LinkUp" | 5 (default: LinkUp if ACTIVE/INIT/ARMED,
                   else Disabled),
     "rate_gbps": 100 (-> "100 Gb/sec (4X EDR)") or "rate": "raw string",
     "link_layer": "Ethernet" | "InfiniBand" (default Ethernet),
     "lid": 0, "sm_lid": 0 (ints; written in hex like the kernel),
     "port_guid": "b83f:d203:00a1:b2c4" (IB GID 0 interface id),
     "netdev": "ens1f0np0" | None, "ipv4": "10.0.0.2" | ["10.0.0.2/24", ...],
     "ipv6": ["fd00::2"] (global IPv6 GIDs, optional),
     "addresses": ["fd00::2", "10.0.0.2"] (the netdev's IPv4 and IPv6 addresses in the order they
                  were added, instead of ipv4 and ipv6: the kernel adds their GIDs in that order),
     "gids": [{"index": 3, "gid": "...", "type": "RoCE v2", "netdev": "eth0"}],
     "gid_tbl_len": 16 (slots written; unused ones as described above),
     "counters": {...}, "hw_counters": {...}}

When ``gids`` is not given, they are built like the kernel builds them:
RoCE (``Ethernet``): the netdev's link-local GID (fe80::<EUI-64 of its MAC>)
as v1/v2 at indexes 0/1, then for each address (``addresses`` in their order,
else the IPv4 ones, then the IPv6 ones; IPv4 as ``::ffff:a.b.c.d``) as v1/v2
at 2/3, 4/5, ...: an IPv6 address added before the IPv4 one moves the IPv4
address's RoCE v2 GID from index 3 to 5; InfiniBand: index 0 = fe80::<port_guid>, type
``IB/RoCE v1``, no ndev. Given ``gids`` may use any (non-zero, sparse)
indexes; ``gid`` may be an IPv4 address (mapped for you).

``net``: dict netdev -> {"operstate": "up", "mtu": 1500, "address": mac,
"slaves": [...], "mode": "802.3ad 4", "carrier": 1}. A netdev with ``slaves``
is a bond (virtual); when a port's netdev is a bond (``mlx5_bond_0`` on
``bond0``), slave i is created in PCI function i of that device's slot
(slave 0 in the device's own function, like the kernel's LAG). Netdevs named by ports / devices are created without
an entry here (defaults: up, mtu 1500 Ethernet / 2044 IPoIB).

``cpus``: None (no cpu dir), an int N (N CPUs, governor ``performance``), a
list of governors (None for a CPU without cpufreq), or a dict
``{index: governor}``.

``modules``: names, or a dict name -> {param: value}.

Also here: ``extract_ttar`` (prometheus/procfs fixture archives) and
``build_from_head_dump`` (the ``==> path <==`` concatenations in the corpus).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ipaddress
import os
import re
import shutil
import zlib

STATES = {1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER"}
PHYS_STATES = {1: "Sleep", 2: "Polling", 3: "Disabled", 4: "PortConfigurationTraining",
               5: "LinkUp", 6: "LinkErrorRecovery", 7: "Phy Test"}
# rate in Gb/s -> "(<width> <speed>)" as the kernel prints for common links
RATE_SUFFIX = {
    2.5: "1X", 5: "1X DDR", 10: "4X", 14: "1X FDR", 20: "4X DDR", 25: "1X EDR",
    40: "4X QDR", 50: "2X EDR", 56: "4X FDR", 100: "4X EDR", 200: "4X HDR",
    400: "4X NDR", 800: "4X XDR",
}
DEFAULT_COUNTERS = {
    "port_rcv_data": 0, "port_xmit_data": 0, "port_rcv_packets": 0, "port_xmit_packets": 0,
    "symbol_error": 0, "link_downed": 0, "link_error_recovery": 0, "port_rcv_errors": 0,
    "port_xmit_discards": 0, "port_xmit_wait": 0, "local_link_integrity_errors": 0,
    "excessive_buffer_overrun_errors": 0,
}
DEFAULT_HW_COUNTERS_ROCE = {
    "out_of_buffer": 0, "out_of_sequence": 0, "packet_seq_err": 0, "local_ack_timeout_err": 0,
    "np_cnp_sent": 0, "np_ecn_marked_roce_packets": 0, "rp_cnp_handled": 0,
    "duplicate_request": 0, "implied_nak_seq_err": 0, "rnr_nak_retry_err": 0,
}


# The PCIe link of every emulated NIC unless its spec's "pcie" says otherwise (the kernel's text forms,
# drivers/pci/pci-sysfs.c): a Gen4 x16 card in a Gen4 x16 slot.
PCIE_LINK = {"current_link_speed": "16.0 GT/s PCIe", "current_link_width": 16,
             "max_link_speed": "16.0 GT/s PCIe", "max_link_width": 16}


def _write(path, content, mode=None):
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        os.makedirs(parent)
    with open(path, "w") as handle:
        handle.write(content)
    if mode is not None:
        os.chmod(path, mode)


def _link(target, path):
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        os.makedirs(parent)
    if os.path.lexists(path):
        os.unlink(path)
    os.symlink(target, path)


def state_text(value, table=None):
    """'4: ACTIVE' from 4, 'ACTIVE' or '4: ACTIVE' (table: STATES by default)."""
    table = STATES if table is None else table
    if isinstance(value, int):
        return "%d: %s" % (value, table.get(value, "UNKNOWN"))
    text = str(value).strip()
    if re.match(r"^\d+:", text):
        return text
    for num, name in table.items():
        if name.lower() == text.lower():
            return "%d: %s" % (num, name)
    raise ValueError("unknown state %r" % (value,))


def rate_text(gbps):
    """Kernel rate string for a rate in Gb/s: 100 -> '100 Gb/sec (4X EDR)'."""
    gbps = float(gbps)
    num = ("%d" % gbps) if gbps == int(gbps) else ("%g" % gbps)
    suffix = RATE_SUFFIX.get(gbps if gbps != int(gbps) else int(gbps), "4X")
    return "%s Gb/sec (%s)" % (num, suffix)


def gid_text(value):
    """A GID in the kernel's form: eight groups of four hex digits."""
    value = str(value)
    if "/" in value:
        value = value.split("/", 1)[0]
    try:
        addr = ipaddress.ip_address(value)
    except ValueError:
        addr = ipaddress.IPv6Address(value)
    if addr.version == 4:
        addr = ipaddress.IPv6Address("::ffff:" + str(addr))
    return ":".join("%04x" % int(addr.exploded.split(":")[i], 16) for i in range(8))


def _mac_for(name):
    crc = zlib.crc32(name.encode())
    return "0c:42:a1:%02x:%02x:%02x" % ((crc >> 16) & 0xff, (crc >> 8) & 0xff, crc & 0xff)


def _guid_for(name, salt=""):
    crc = zlib.crc32((name + salt).encode())
    return "b83f:d203:%04x:%04x" % ((crc >> 16) & 0xffff, crc & 0xffff)


def _eui64_link_local(mac):
    parts = [int(p, 16) for p in mac.split(":")]
    parts[0] ^= 0x02
    eui = parts[:3] + [0xff, 0xfe] + parts[3:]
    groups = ["%02x%02x" % (eui[i], eui[i + 1]) for i in range(0, 8, 2)]
    return "fe80:0000:0000:0000:" + ":".join(groups)


def _ipv4_list(value):
    if not value:
        return []
    if isinstance(value, str):
        value = [value]
    return [str(v).split("/", 1)[0] for v in value]


def default_gids(port, mac, ll):
    """The GID table the kernel builds for a port (see module docstring)."""
    netdev = port.get("netdev")
    if ll == "InfiniBand":
        guid = port.get("port_guid") or "0000:0000:0000:0001"
        return [{"index": 0, "gid": "fe80:0000:0000:0000:" + guid, "type": "IB/RoCE v1", "netdev": None}]
    if not netdev:
        return []
    gids = []
    idx = 0
    if port.get("addresses") is not None:
        added = [str(a).split("/", 1)[0] for a in port["addresses"]]
    else:
        added = _ipv4_list(port.get("ipv4")) + list(port.get("ipv6") or [])
    entries = [_eui64_link_local(mac)] + [gid_text(a) for a in added]
    for gid in entries:
        gids.append({"index": idx, "gid": gid, "type": "IB/RoCE v1", "netdev": netdev})
        gids.append({"index": idx + 1, "gid": gid, "type": "RoCE v2", "netdev": netdev})
        idx += 2
    return gids


def _write_port(pdir, port, mac, unused_gid_style):
    state = state_text(port.get("state", "ACTIVE"))
    if "phys_state" in port:
        phys = state_text(port["phys_state"], PHYS_STATES)
    else:
        phys = "5: LinkUp" if state.split(": ")[1] in ("ACTIVE", "INIT", "ARMED", "ACTIVE_DEFER") else "3: Disabled"
    ll = port.get("link_layer", "Ethernet")
    rate = port.get("rate") or rate_text(port.get("rate_gbps", 100))
    _write(os.path.join(pdir, "state"), state + "\n")
    _write(os.path.join(pdir, "phys_state"), phys + "\n")
    _write(os.path.join(pdir, "rate"), rate + "\n")
    _write(os.path.join(pdir, "link_layer"), ll + "\n")
    _write(os.path.join(pdir, "lid"), "0x%x\n" % int(port.get("lid", 0)))
    _write(os.path.join(pdir, "sm_lid"), "0x%x\n" % int(port.get("sm_lid", 0)))
    _write(os.path.join(pdir, "sm_sl"), "0\n")
    _write(os.path.join(pdir, "lid_mask_count"), "0\n")
    _write(os.path.join(pdir, "cap_mask"), "0x%08x\n" % (0x04010000 if ll == "Ethernet" else 0x2651e848))
    gids = port.get("gids")
    if gids is None:
        gids = default_gids(port, mac, ll)
    used = {}
    for entry in gids:
        gid = dict(entry)
        gid.setdefault("type", "RoCE v2")
        gid.setdefault("netdev", port.get("netdev") if ll == "Ethernet" else None)
        used[int(gid["index"])] = gid
    top = max(used) + 1 if used else 0
    table_len = int(port.get("gid_tbl_len", max(top + 2, 4)))
    for idx in range(table_len):
        gid = used.get(idx)
        gpath = os.path.join(pdir, "gids", str(idx))
        tpath = os.path.join(pdir, "gid_attrs", "types", str(idx))
        npath = os.path.join(pdir, "gid_attrs", "ndevs", str(idx))
        if gid:
            _write(gpath, gid_text(gid["gid"]) + "\n")
            _write(tpath, gid["type"] + "\n")
            if gid.get("netdev"):
                _write(npath, gid["netdev"] + "\n")
            else:
                _unreadable(npath, unused_gid_style)
        else:
            _write(gpath, ":".join(["0000"] * 8) + "\n")
            _unreadable(tpath, unused_gid_style)
            _unreadable(npath, unused_gid_style)
    counters = dict(DEFAULT_COUNTERS)
    counters.update(port.get("counters") or {})
    for key, value in counters.items():
        _write(os.path.join(pdir, "counters", key), "%s\n" % value)
    hw = port.get("hw_counters")
    if hw is None:
        hw = DEFAULT_HW_COUNTERS_ROCE if ll == "Ethernet" else {}
    for key, value in hw.items():
        _write(os.path.join(pdir, "hw_counters", key), "%s\n" % value)


def _unreadable(path, style):
    if style == "einval_text":
        _write(path, "Invalid argument\n")
    elif style == "missing":
        return
    else:
        _write(path, "", mode=0)


def _netdev_dir(root, netdev, pci_dir, spec, ll):
    """Create a netdev dir (physical under pci_dir, virtual when pci_dir is None)."""
    if pci_dir is None:
        ndir = os.path.join(root, "devices", "virtual", "net", netdev)
        _link(os.path.join("..", "..", "devices", "virtual", "net", netdev),
              os.path.join(root, "class", "net", netdev))
    else:
        ndir = os.path.join(pci_dir, "net", netdev)
        rel = os.path.relpath(ndir, os.path.join(root, "class", "net"))
        _link(rel, os.path.join(root, "class", "net", netdev))
        # like the kernel: class/net/<n>/device -> ../../../<pci>
        _link(os.path.join("..", "..", "..", os.path.basename(pci_dir)), os.path.join(ndir, "device"))
    ipoib = ll == "InfiniBand"
    files = {
        "operstate": spec.get("operstate", "up"),
        "mtu": spec.get("mtu", 2044 if ipoib else 1500),
        "address": spec.get("address") or (("00:00:10:29:fe:80:00:00:00:00:00:00:" + _mac_for(netdev)[9:])
                                           if ipoib else _mac_for(netdev)),
        "carrier": spec.get("carrier", 1 if spec.get("operstate", "up") == "up" else 0),
        "type": 32 if ipoib else 1,
        "ifindex": spec.get("ifindex", (zlib.crc32(netdev.encode()) % 1000) + 2),
        "dev_id": spec.get("dev_id", "0x0"),
        "dev_port": spec.get("dev_port", 0),
    }
    for key, value in files.items():
        _write(os.path.join(ndir, key), "%s\n" % value)
    return ndir


def gpu_pci(num):
    """The PCI address of emulated GPU ``num``."""
    return "0000:%02x:00.0" % (0x80 + num)


def add_gpu(root, num, numa_node=0):
    """Write emulated GPU ``num`` (an NVIDIA PCI function on the root complex) under an emulated /sys."""
    pci = gpu_pci(num)
    bus = os.path.join(root, "bus", "pci", "devices")
    gdir = os.path.join(root, "devices", "pci0000:00", pci)
    for key, value in (("vendor", "0x10de"), ("device", "0x2330"), ("class", "0x030200"), ("numa_node", numa_node)):
        _write(os.path.join(gdir, key), "%s\n" % value)
    _link(os.path.relpath(gdir, bus), os.path.join(bus, pci))


def remove_gpu(root, num):
    """Take emulated GPU ``num`` out of an emulated /sys again (:func:`add_gpu`'s undo)."""
    pci = gpu_pci(num)
    link = os.path.join(root, "bus", "pci", "devices", pci)
    if os.path.lexists(link):
        os.remove(link)
    shutil.rmtree(os.path.join(root, "devices", "pci0000:00", pci), ignore_errors=True)


def build_sysfs(root, devices, cpus=None, modules=(), net=None, gpus=0, unused_gid_style="unreadable",
                numa_nodes=None, gpu_numa_nodes=None):
    """Write an emulated /sys under root; return root. See the module docstring."""
    net = dict(net or {})
    if numa_nodes is None and cpus is not None:
        count = cpus if isinstance(cpus, int) else len(cpus)
        numa_nodes = {0: "0-%d" % (count - 1) if count > 1 else "0"} if count else {}
    numa_nodes = dict((int(k), v) for k, v in (numa_nodes or {}).items())
    for node, cpulist in sorted(numa_nodes.items()):
        _write(os.path.join(root, "devices", "system", "node", "node%d" % node, "cpulist"), "%s\n" % cpulist)
    os.makedirs(os.path.join(root, "class", "infiniband"), exist_ok=True)
    os.makedirs(os.path.join(root, "class", "net"), exist_ok=True)
    os.makedirs(os.path.join(root, "module"), exist_ok=True)
    bus = os.path.join(root, "bus", "pci", "devices")
    os.makedirs(bus, exist_ok=True)
    pci_root = os.path.join(root, "devices", "pci0000:00")
    made_netdevs = {}
    bonds = dict((name, spec) for name, spec in net.items() if spec.get("slaves"))
    bond_slaves = set(s for spec in bonds.values() for s in spec["slaves"])
    for num, dev in enumerate(devices or []):
        name = dev["name"]
        pci = dev.get("pci") or "0000:%02x:00.0" % (0x17 + num)
        pci_dir = os.path.join(pci_root, pci)
        is_ib = any(p.get("link_layer") == "InfiniBand" for p in dev.get("ports", []))
        for key, value in (("vendor", dev.get("vendor", "0x15b3")), ("device", dev.get("pci_device", "0x101b")),
                           ("class", "0x020700" if is_ib else "0x020000"),
                           ("numa_node", dev.get("numa_node", -1))):
            _write(os.path.join(pci_dir, key), "%s\n" % value)
        link = dict(PCIE_LINK, **(dev.get("pcie") or {}))
        for key in ("current_link_speed", "current_link_width", "max_link_speed", "max_link_width"):
            if link.get(key) is not None:
                _write(os.path.join(pci_dir, key), "%s\n" % link[key])
        if dev.get("iommu"):
            group = os.path.join(root, "kernel", "iommu_groups", str(num))
            _write(os.path.join(group, "type"), "%s\n" % dev["iommu"])
            _link(os.path.relpath(group, pci_dir), os.path.join(pci_dir, "iommu_group"))
        if dev.get("local_cpulist") or numa_nodes.get(dev.get("numa_node", -1)):
            _write(os.path.join(pci_dir, "local_cpulist"),
                   "%s\n" % (dev.get("local_cpulist") or numa_nodes[dev.get("numa_node", -1)]))
        _link(os.path.relpath(pci_dir, bus), os.path.join(bus, pci))
        ddir = os.path.join(pci_dir, "infiniband", name)
        node_guid = dev.get("node_guid") or _guid_for(name)
        attrs = {
            "hca_type": dev.get("hca_type", "MT4123"),
            "fw_ver": dev.get("fw_ver", "20.31.1014"),
            "node_guid": node_guid,
            "sys_image_guid": dev.get("sys_image_guid", node_guid),
            "board_id": dev.get("board_id", "MT_0000000223"),
            "node_desc": dev.get("node_desc", "%s %s" % ("node", name)),
            "node_type": "1: CA",
        }
        for key, value in attrs.items():
            if value is not None:
                _write(os.path.join(ddir, key), "%s\n" % value)
        _link(os.path.join("..", "..", "..", pci), os.path.join(ddir, "device"))
        _link(os.path.relpath(ddir, os.path.join(root, "class", "infiniband")),
              os.path.join(root, "class", "infiniband", name))
        extra = list(dev.get("netdevs") or [])
        for pnum, port in enumerate(dev.get("ports") or []):
            port = dict(port)
            port.setdefault("port", pnum + 1)
            ll = port.get("link_layer", "Ethernet")
            netdev = port.get("netdev")
            if ll == "InfiniBand" and not port.get("port_guid"):
                port["port_guid"] = _guid_for(name, str(port["port"]))
            mac = _mac_for(netdev or name)
            if netdev and netdev not in made_netdevs:
                spec = dict(net.get(netdev) or {})
                if netdev in bonds:
                    ndir = _netdev_dir(root, netdev, None, spec, ll)
                    # the bond's slaves are the PCI functions of this device:
                    # slave i lives in function i of the same PCI slot
                    for snum, slave in enumerate(bonds[netdev]["slaves"]):
                        if slave in made_netdevs:
                            continue
                        sdir_pci = pci_dir if snum == 0 or slave in extra else \
                            os.path.join(pci_root, pci[:-1] + str(snum))
                        if sdir_pci != pci_dir:
                            for key, value in (("vendor", dev.get("vendor", "0x15b3")),
                                               ("device", dev.get("pci_device", "0x101b")),
                                               ("class", "0x020000"), ("numa_node", dev.get("numa_node", -1))):
                                _write(os.path.join(sdir_pci, key), "%s\n" % value)
                            _link(os.path.relpath(sdir_pci, bus), os.path.join(bus, os.path.basename(sdir_pci)))
                        sspec = dict(net.get(slave) or {})
                        sspec.setdefault("dev_port", 0)
                        made_netdevs[slave] = _netdev_dir(root, slave, sdir_pci, sspec, "Ethernet")
                else:
                    spec.setdefault("dev_port", port["port"] - 1)
                    ndir = _netdev_dir(root, netdev, pci_dir, spec, ll)
                made_netdevs[netdev] = ndir
                mac = spec.get("address") or mac
            _write_port(os.path.join(ddir, "ports", str(port["port"])), port, mac, unused_gid_style)
        for netdev in extra:
            if netdev not in made_netdevs:
                made_netdevs[netdev] = _netdev_dir(root, netdev, pci_dir, dict(net.get(netdev) or {}), "Ethernet")
    for name, spec in net.items():
        if name in made_netdevs:
            continue
        made_netdevs[name] = _netdev_dir(root, name, None, spec, "Ethernet")
    for name, spec in bonds.items():
        bdir = made_netdevs[name]
        _write(os.path.join(bdir, "bonding", "slaves"), " ".join(spec["slaves"]) + "\n")
        _write(os.path.join(bdir, "bonding", "mode"), "%s\n" % spec.get("mode", "802.3ad 4"))
        for slave in spec["slaves"]:
            sdir = made_netdevs.get(slave)
            if sdir is None:
                sdir = made_netdevs[slave] = _netdev_dir(root, slave, None, dict(net.get(slave) or {}), "Ethernet")
            _link(os.path.relpath(bdir, sdir), os.path.join(sdir, "master"))
            _link(os.path.relpath(bdir, sdir), os.path.join(sdir, "upper_" + name))
            _link(os.path.relpath(sdir, bdir), os.path.join(bdir, "lower_" + slave))
    del bond_slaves
    for num in range(int(gpus or 0)):
        add_gpu(root, num, (gpu_numa_nodes or {}).get(num, 0))
    if cpus is not None:
        if isinstance(cpus, int):
            cpus = ["performance"] * cpus
        if isinstance(cpus, (list, tuple)):
            cpus = dict(enumerate(cpus))
        for idx, governor in sorted(cpus.items()):
            cdir = os.path.join(root, "devices", "system", "cpu", "cpu%d" % int(idx))
            os.makedirs(cdir, exist_ok=True)
            _write(os.path.join(cdir, "online"), "1\n")
            if governor is None:
                continue
            _write(os.path.join(cdir, "cpufreq", "scaling_governor"), governor + "\n")
            _write(os.path.join(cdir, "cpufreq", "scaling_available_governors"),
                   "conservative ondemand userspace powersave performance schedutil\n")
            _write(os.path.join(cdir, "cpufreq", "scaling_driver"), "acpi-cpufreq\n")
    if isinstance(modules, dict):
        mods = modules
    else:
        mods = dict((m, {}) for m in (modules or ()))
    for mod, params in mods.items():
        mdir = os.path.join(root, "module", mod)
        _write(os.path.join(mdir, "initstate"), "live\n")
        for key, value in (params or {}).items():
            _write(os.path.join(mdir, "parameters", key), "%s\n" % value)
    return root


# --- real corpus formats -----------------------------------------------------

def extract_ttar(text, dest, strip_prefix="fixtures/sys/"):
    """Extract a prometheus/procfs ttar archive (text) under dest.

    Paths lose ``strip_prefix`` (so ``fixtures/sys/class/infiniband/x``
    becomes ``dest/class/infiniband/x``). Handles ``Directory:``,
    ``Path:``/``Lines:`` (content lines; ``Lines: 0`` is an empty file; a last
    line ending in ``EOF`` means no final newline),
    ``SymlinkTo:`` and ``Mode:``. Returns the list of files written.
    """
    lines = text.split("\n")
    written = []
    i = 0
    current = None
    while i < len(lines):
        line = lines[i]
        if line.startswith("Directory: "):
            current = os.path.join(dest, _strip(line[len("Directory: "):], strip_prefix))
            os.makedirs(current, exist_ok=True)
        elif line.startswith("Path: "):
            current = os.path.join(dest, _strip(line[len("Path: "):], strip_prefix))
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if nxt.startswith("Lines: "):
                count = int(nxt[len("Lines: "):])
                body = lines[i + 2:i + 2 + count]
                content = "".join(b + "\n" for b in body)
                if body and body[-1].endswith("EOF"):
                    # ttar marks a file without a final newline with "EOF"
                    content = content[:-len("EOF\n")]
                _write(current, content)
                written.append(current)
                i += 2 + count
                continue
            if nxt.startswith("SymlinkTo: "):
                _link(nxt[len("SymlinkTo: "):], current)
                written.append(current)
                i += 2
                continue
        elif line.startswith("Mode: ") and current and os.path.isfile(current) and not os.path.islink(current):
            os.chmod(current, int(line[len("Mode: "):], 8))
        i += 1
    return written


def _strip(path, prefix):
    return path[len(prefix):] if prefix and path.startswith(prefix) else path


def build_from_head_dump(text, dest, base="class/infiniband"):
    """Write files from a ``==> relpath <==`` + content concatenation.

    The corpus' H100 attrs file is such a dump of
    ``/sys/class/infiniband/<dev>/...`` files; each becomes
    ``dest/<base>/<relpath>``. Returns the list of files written.
    """
    written = []
    path = None
    body = []

    def flush():
        if path is not None:
            target = os.path.join(dest, base, path)
            _write(target, "".join(b + "\n" for b in body))
            written.append(target)

    for line in text.split("\n"):
        match = re.match(r"^==> (.+) <==$", line)
        if match:
            flush()
            path = match.group(1)
            body = []
        elif path is not None:
            body.append(line)
    if body and body[-1] == "":
        body.pop()
    flush()
    return written
