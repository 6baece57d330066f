# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Values out of a sysfs snapshot: path access and the kernel's text forms (pure).

A snapshot (see ``sysfs_snapshot``) maps a path relative to the sysfs root
to its text, or to ``{"link": target}`` for a symlink / ``{}`` for a
directory. :func:`indexed` wraps one with a parent -> children index so
:func:`children` is cheap on real trees (~10^4 keys).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

PORT_STATES = {0: "NOP", 1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER"}
PHYS_STATES = {1: "Sleep", 2: "Polling", 3: "Disabled", 4: "PortConfigurationTraining", 5: "LinkUp",
               6: "LinkErrorRecovery", 7: "Phy Test"}


# --- snapshot access -------------------------------------------------------------

class IndexedSnapshot(dict):
    """A snapshot plus a parent -> children index built once."""

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


def indexed(snap):
    return snap if isinstance(snap, IndexedSnapshot) else IndexedSnapshot(snap)


def children(snap, prefix):
    """Names directly under prefix/ that appear in snapshot keys."""
    if isinstance(snap, IndexedSnapshot):
        return set(snap.kids.get(prefix, ()))
    names = set()
    plen = len(prefix) + 1
    for key in snap:
        if key.startswith(prefix + "/"):
            names.add(key[plen:].split("/", 1)[0])
    return names


def has_under(snap, prefix):
    if isinstance(snap, IndexedSnapshot):
        return prefix in snap.kids or prefix in snap
    return prefix in snap or any(key.startswith(prefix + "/") for key in snap)


def text_at(snap, path):
    """The stripped text of a file in the snapshot; None for a link, a directory or a missing file."""
    value = snap.get(path)
    if isinstance(value, dict) or value is None:
        return None
    return value.strip()


def link_base(snap, path):
    """The last component of a symlink's target (a PCI address, a netdev), or None."""
    value = snap.get(path)
    if isinstance(value, dict):
        target = value.get("link") or ""
        return target.rstrip("/").split("/")[-1] or None
    return None


# --- the kernel's text forms -----------------------------------------------------

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


def parse_pcie_speed(text):
    """PCIe link speed in GT/s per lane: '16.0 GT/s PCIe' (kernels since 5.x), '8 GT/s' (older),
    '2.5 GT/s' -> 16.0, 8.0, 2.5; 'Unknown', 'Unknown speed' or '' -> None."""
    match = re.match(r"^\s*(\d+(?:\.\d+)?)\s*GT/s", text or "")
    if not match or not float(match.group(1)):
        return None
    return float(match.group(1))


def parse_pcie_width(text):
    """PCIe link width (lanes): '16' or 'x16' -> 16; '0' (a VF, a link that is down) or unreadable -> None."""
    match = re.match(r"^\s*[xX]?(\d+)\s*$", text or "")
    return int(match.group(1)) or None if match else None


def parse_node_type(text):
    """The kernel's node_type ('1: CA', '4: RNIC', '7: unspecified') -> 'CA', 'RNIC', 'unspecified'; None if unread."""
    num, name = _num_prefix(text)
    return name if name and name != "<unknown>" else None


def port_fabric(link_layer, node_type=None):
    """What a port speaks: 'InfiniBand', 'RoCE' (Ethernet on an IB-transport device), 'iWARP' (Ethernet on an RNIC:
    cxgb4, siw, irdma in iWARP mode), 'other' (the kernel's 'Unknown' link layer of a device with an unspecified
    transport, such as AWS EFA, or a usNIC), None when sysfs gives no link layer."""
    if not link_layer:
        return None
    if link_layer == "InfiniBand":
        return "InfiniBand"
    if link_layer != "Ethernet" or (node_type or "").startswith("usNIC"):
        return "other"
    return "iWARP" if node_type == "RNIC" else "RoCE"


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
