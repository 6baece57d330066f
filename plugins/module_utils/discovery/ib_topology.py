# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The leaf switch of an InfiniBand port from a fabric scan (pure): ``iblinkinfo`` or ``ibnetdiscover`` output read
by their parsers, and the host's own GUIDs.

A scan names ports by GUID: a local port is found in it by its port GUID (the interface id of its GID 0 in sysfs,
or ibstat's ``Port GUID``) or its adapter's node GUID, with its port number. The node at the other end of its cable
is its leaf: ``leaf`` its node description, ``port`` the switch's port. A switch nobody named keeps its factory
description (``Quantum Mellanox Technologies``), which every switch of that model shares: two such leaves would read
as one, so the switch's GUID is its leaf where the scan shows it (and where the description is no label).

Where the scans stand among the sources (see ``topology``): inventory > lldp > smpquery > iblinkinfo >
ibnetdiscover. smpquery asks the one node behind the port (two small queries); ``iblinkinfo -D 0`` scans the local
node and its neighbours (a few more); ``ibnetdiscover`` scans the whole fabric (seconds to minutes on thousands of
nodes), so each runs only for ports the ones before it did not place (``ib_fabric_scan``). The later sources are
also the less certain: ``iblinkinfo -D 0`` does not say whether the peer is a switch (a port cabled straight to
another host's adapter would show that adapter), ``ibnetdiscover`` does.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import topology
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.ib_fabric import guid

SCAN_SOURCES = ("ibnetdiscover", "iblinkinfo")   # the later one wins
# the node description a Mellanox / NVIDIA switch has until someone names it: the model, the same on every switch
FACTORY_NAME = re.compile(r"(?:^|\s)Mellanox Technologies\s*$", re.I)


def port_guids(device, port, ibstat=None):
    """The GUIDs that name this port of this device in a scan: the port's GUID (its GID 0's interface id, ibstat's
    port GUID) and the adapter's node GUID, each as ``0x`` and 16 hex digits."""
    found = set()
    for gid in port.get("gids") or []:
        if gid.get("index") == 0 and gid.get("gid"):
            found.add(guid(gid["gid"]))
    for name in (device.get("node_guid"),):
        if name:
            found.add(guid(name))
    for ca in ibstat or []:
        if isinstance(ca, dict) and ca.get("name") == device.get("name"):
            if ca.get("node_guid"):
                found.add(guid(ca["node_guid"]))
            for ibstat_port in ca.get("ports") or []:
                if ibstat_port.get("port") == port.get("port") and ibstat_port.get("port_guid"):
                    found.add(guid(ibstat_port["port_guid"]))
    found.discard(None)
    return found


def _entry(peer, source):
    """{leaf, port, source} of the node at the other end, or None where it is a host's adapter or has no name."""
    if not peer or peer.get("type") == "CA":
        return None
    names = [(peer.get("description") or "").strip(), peer.get("guid")]
    if FACTORY_NAME.search(names[0]) and peer.get("guid"):
        names.reverse()
    for name in names:
        try:
            leaf = topology.check_label(source, name)
        except topology.TopologyError:
            continue
        port = peer.get("port")
        return {"leaf": leaf, "port": str(port) if isinstance(port, int) and port > 0 else None, "source": source}
    return None


def iblinkinfo_leaf(result, port, guids):
    """The leaf of local port ``port`` (GUIDs ``guids``) in parse_iblinkinfo's ``result``, or None."""
    for line in (result or {}).get("ports") or []:
        node = line.get("node") or {}
        if line.get("port") == port and node.get("type") != "Switch" and (
                node.get("port_guid") in guids or node.get("guid") in guids):
            return _entry(line.get("peer"), "iblinkinfo")
    return None


def ibnetdiscover_leaf(result, port, guids):
    """The leaf of local port ``port`` (GUIDs ``guids``) in parse_ibnetdiscover's ``result``, or None: the switch
    its link reaches (nothing where the link reaches another adapter)."""
    for link in (result or {}).get("links") or []:
        for near, far in ((link.get("from") or {}, link.get("to") or {}), (link.get("to") or {}, link.get("from") or {})):
            if near.get("type") == "CA" and near.get("port") == port and (
                    near.get("port_guid") in guids or near.get("guid") in guids):
                return _entry(far, "ibnetdiscover") if far.get("type") == "Switch" else None
    return None


LEAF_OF = {"iblinkinfo": iblinkinfo_leaf, "ibnetdiscover": ibnetdiscover_leaf}


def from_scans(tools, devices):
    """``{device: {leaf, port, source}}`` from the scans in ``tools`` (``{iblinkinfo|ibnetdiscover: {device:
    [parsed result with its port]}}``, ``ibstat`` for the port GUIDs): iblinkinfo's over ibnetdiscover's; a device
    whose ports reach different leaves is left out."""
    tools = tools or {}
    out = {}
    for source in SCAN_SOURCES:
        answers = tools.get(source) or {}
        for device in devices or []:
            found = []
            for answer in answers.get(device.get("name")) or []:
                if not isinstance(answer, dict):
                    continue
                port = next((p for p in device.get("ports") or [] if p.get("port") == answer.get("port")), None)
                if port is not None:
                    found.append(LEAF_OF[source](answer, port["port"], port_guids(device, port, tools.get("ibstat"))))
            topology.keep_one_leaf(out, device["name"], found)
    return out


def discovered(tools, devices):
    """A host's topology from every tool: lldpd's and smpquery's (``topology.discovered``) over the scans'."""
    out = from_scans(tools, devices)
    out.update(topology.discovered(tools, devices))
    return out
