# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which leaf switch each rail of a host hangs off (pure): the ``commcheck_topology`` inventory variable, checked,
and the one topology of a host that discovery records and localization reads.

A host's topology is ``{rail or RDMA device: {leaf, port, source}}``: the key is a rail number (0, 1, ...) or the
name of the RDMA device of that rail (``mlx5_3``); ``leaf`` names the switch the rail's port is cabled to,
``port`` the switch's port (optional), ``source`` where it was read (``inventory``; ``lldp``: lldpd's
neighbour of a RoCE port's netdev; ``smpquery``: the switch an InfiniBand port's directed route ``0,<port>``
reaches; ``iblinkinfo`` / ``ibnetdiscover``: the node a fabric scan shows at the other end of the port's cable, where
smpquery placed none: ``ib_topology``). Names are labels, shown in reports and compared with each other: never a command line's
flag nor a path."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules

VARIABLE = "commcheck_topology"
ENTRY_KEYS = ("leaf", "port")
SOURCES = ("inventory", "lldp", "smpquery", "iblinkinfo", "ibnetdiscover")
RAIL_MAX = 1023
LABEL_MAX = 128
# a switch's or port's name as switches report it (sysName, ifName, node description): letters, digits and a
# few separators, spaces inside; never a leading '-' (a flag), '/', '.' or '~' (a path) nor '..'
_LABEL = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:;/@+#,()\[\] -]{0,%d}$" % (LABEL_MAX - 1))
_RAIL_TEXT = re.compile(r"^\d{1,4}$")


class TopologyError(ValueError):
    """A topology that cannot be read (the message names the variable and the entry)."""


def check_label(where, value):
    """A switch or port label (see the module doc), as text; a number is taken as its text."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise TopologyError("%s: %s is not a name (text)" % (where, rules.show(value)))
    text = str(value)
    if not _LABEL.match(text) or ".." in text or text.endswith(" "):
        raise TopologyError("%s: %s is not a switch or port name (letters, digits and _ . : ; / @ + # , ( ) [ ] "
                            "and inner spaces, at most %d, not starting with - / . or ~, no '..')" % (
                                where, rules.show(text), LABEL_MAX))
    return text


def rail_key(where, key):
    """A rail number (as a number or digits) as an int, or an RDMA device name as it is."""
    if isinstance(key, bool):
        raise TopologyError("%s: %r is neither a rail number nor an RDMA device name" % (where, key))
    if isinstance(key, int) or (isinstance(key, str) and _RAIL_TEXT.match(key)):
        if not 0 <= int(key) <= RAIL_MAX:
            raise TopologyError("%s: rail %s is out of range (0 to %d)" % (where, key, RAIL_MAX))
        return int(key)
    if not isinstance(key, str) or key.startswith("-") or not rules.NAME_KINDS["rdma_device"][0].match(key):
        raise TopologyError("%s: %s is neither a rail number (0 to %d) nor an RDMA device name (mlx5_0)" % (
            where, rules.show(key), RAIL_MAX))
    return key


def check_topology(value, variable=VARIABLE, sourced=False):
    """``value`` (a host's ``commcheck_topology``) as ``{rail or device: {leaf, port, source}}``; raises
    :class:`TopologyError` naming ``variable`` and the entry at fault. Empty: no topology (nothing changes).
    ``sourced``: entries may say their ``source`` (one of :data:`SOURCES`; discovery's), else it is
    ``inventory``."""
    if value in (None, ""):
        return {}
    if not isinstance(value, dict):
        raise TopologyError("%s: must be a dict of rail number or RDMA device -> {leaf, port}, got %s" % (
            variable, rules.show(value)))
    out = {}
    for key, entry in value.items():
        rail = rail_key(variable, key)
        where = "%s.%s" % (variable, key)
        if rail in out:
            raise TopologyError("%s: rail %s is given twice" % (where, rail))
        out[rail] = check_entry(where, entry, sourced)
    return out


def check_entry(where, entry, sourced=False):
    """One rail's ``{leaf, port}`` (``leaf`` required; ``source`` too when ``sourced``; nothing else)."""
    if not isinstance(entry, dict):
        raise TopologyError("%s: must be a dict with leaf (and port), got %s" % (where, rules.show(entry)))
    source = entry.get("source", "inventory") if sourced else "inventory"
    if source not in SOURCES:
        raise TopologyError("%s.source: %s is not one of %s" % (where, rules.show(source), ", ".join(SOURCES)))
    unknown = sorted(str(k) for k in entry if k not in ENTRY_KEYS + (("source",) if sourced else ()))
    if unknown:
        raise TopologyError("%s: unknown key(s) %s (leaf and port only)" % (where, ", ".join(unknown)))
    if entry.get("leaf") in (None, ""):
        raise TopologyError("%s: leaf is required (the name of the switch this rail is cabled to)" % where)
    port = entry.get("port")
    return {"leaf": check_label(where + ".leaf", entry["leaf"]),
            "port": None if port in (None, "") else check_label(where + ".port", port), "source": source}


def from_lldp(neighbors, devices):
    """``{device: {leaf, port, source: lldp}}`` of the RDMA devices whose port's netdev has an LLDP neighbour
    (``parse_lldpctl``'s entries): the leaf is the neighbour's system name (its chassis id without one), the
    port its port id (its description where the id is a MAC address). A neighbour whose names are no labels
    (:func:`check_label`) is left out; so is a device with several ports cabled to different switches."""
    by_netdev = dict((n.get("interface"), n) for n in neighbors or [] if isinstance(n, dict))
    out = {}
    for device in devices or []:
        found = [_lldp_entry(by_netdev.get(port.get("netdev"))) for port in device.get("ports") or []
                 if port.get("netdev") in by_netdev]
        keep_one_leaf(out, device["name"], found)
    return out


def keep_one_leaf(out, device, found):
    """out[device] = the entry of its ports, where those that have one all name the same leaf."""
    found = [entry for entry in found if entry]
    if found and all(entry["leaf"] == found[0]["leaf"] for entry in found):
        out[device] = found[0]


def from_smpquery(answers, devices):
    """``{device: {leaf, port, source: smpquery}}`` of the RDMA devices whose InfiniBand port answered
    ``smpquery nodeinfo`` / ``nodedesc`` over the directed route ``0,<port>`` with a switch (``answers``:
    ``{device: [{port, parse_smpquery's result}]}``): the leaf is the switch's node description (its node GUID
    where the description is no label), the port the switch's port the query came in by. A channel adapter cabled
    back to back is no leaf; a device with ports on different switches is left out."""
    out = {}
    for device in devices or []:
        answered = (answers or {}).get(device.get("name")) or []
        keep_one_leaf(out, device["name"], [_smpquery_entry(a) for a in answered if isinstance(a, dict)])
    return out


def _smpquery_entry(answer):
    if not answer.get("is_switch"):
        return None
    node = answer.get("node") or {}
    leaf = None
    for name in (answer.get("description"), node.get("guid"), node.get("system_guid")):
        try:
            leaf = check_label("smpquery", name)
            break
        except TopologyError:
            continue
    port = node.get("local_port")
    if leaf is None:
        return None
    return {"leaf": leaf, "port": str(port) if isinstance(port, int) and port > 0 else None, "source": "smpquery"}


def discovered(tools, devices):
    """A host's topology as its tools see it: lldpd's for RoCE ports, smpquery's for InfiniBand ones (a device
    both name keeps lldpd's)."""
    out = from_smpquery((tools or {}).get("smpquery"), devices)
    out.update(from_lldp((tools or {}).get("lldpctl"), devices))
    return out


def _lldp_entry(neighbor):
    leaf = neighbor.get("chassis") or neighbor.get("chassis_id")
    port = neighbor.get("port_id")
    if neighbor.get("port_id_type") == "mac" and neighbor.get("port_descr"):
        port = neighbor["port_descr"]
    try:
        return {"leaf": check_label("lldp", leaf), "port": None if not port else check_label("lldp", port),
                "source": "lldp"}
    except TopologyError:
        return None


def check_hosts(topology, variable="topology"):
    """``{host: check_topology(its entries, sourced)}`` of a fleet's topology (host -> rail or device -> entry)."""
    if topology in (None, ""):
        return {}
    if not isinstance(topology, dict):
        raise TopologyError("%s: must be a dict of host -> its topology, got %s" % (variable, rules.show(topology)))
    return dict((host, check_topology(entries, "%s of %s" % (variable, host), sourced=True))
                for host, entries in topology.items())
