# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The leaf switch of each host's TCP path (pure): what the topology patterns and localization of the TCP check
plan and judge by.

The TCP check measures one path a host (its address, numbered rail 0 by the check), where the RDMA check's
topology is one entry per RDMA rail or device. The TCP path's leaf is, for each host:

1. its ``commcheck_topology`` entry ``tcp`` (the inventory names the leaf of the TCP address itself);
2. else the entry of the RDMA device whose port holds the host's TCP address (what discovery read with lldpctl or
   smpquery, keyed by device, or the inventory's entry for that device);
3. else none: a topology pattern then stops the check naming the host (``leaf_schedule``), and localization
   names no switch for it.

A rail number in the topology never places the TCP path: the TCP address may be on any network, and RDMA rail 0
is no more likely than another.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

TCP_KEY = "tcp"
PATH_RAIL = 0


def device_of_address(facts, address):
    """The name of the RDMA device one of whose ports holds ``address`` (discovery's facts), or None."""
    if not isinstance(facts, dict) or not address:
        return None
    for device in facts.get("devices") or []:
        if not isinstance(device, dict):
            continue
        for port in device.get("ports") or []:
            if isinstance(port, dict) and str(address) in port_addresses(port):
                return device.get("name")
    return None


def port_addresses(port):
    """The IPv4 addresses of a port's netdev (``ipv4``, ``ipv4_cidr`` without the prefix length)."""
    out = []
    for key in ("ipv4", "ipv4_cidr"):
        held = port.get(key)
        out += [str(one).split("/", maxsplit=1)[0] for one in ([held] if isinstance(held, str) else list(held or []))]
    return out


def path_address(rails):
    """The address of a host's TCP path: its (first) rail's ``address``, or None."""
    for rail in rails or []:
        if isinstance(rail, dict) and rail.get("address"):
            return rail["address"]
    return None


def path_topology(topology, rdma_facts, rails):
    """``{host: {0: {leaf, port, source}}}`` of the hosts of ``topology`` whose TCP path's leaf is known (see the
    module doc); ``{host: {}}`` for the others.

    ``topology``: host -> {rail number or device: entry} (checked, ``pair_engine.fleet_topology``); ``rdma_facts``:
    host -> discovery's facts (``ansible_facts.commcheck_rdma``); ``rails``: host -> the TCP check's rails
    (``[{rail: 0, address}]``)."""
    out = {}
    for host, entries in (topology or {}).items():
        entries = entries if isinstance(entries, dict) else {}
        entry = entries.get(TCP_KEY)
        if entry is None:
            device = device_of_address((rdma_facts or {}).get(host), path_address((rails or {}).get(host)))
            entry = entries.get(device) if device else None
        out[host] = {PATH_RAIL: dict(entry)} if isinstance(entry, dict) and entry.get("leaf") else {}
    return out
