# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One side's RDMA endpoint as a typed record, and what ``gid_index: auto`` means for it.

``Endpoint`` (host, device, port, gid_index, address, rail, numa_node) is
checked when it is made, so ``gid_index`` is an ``int`` (or ``None``) from
the GID choice to perftest's ``-x N``. ``Endpoint.from_side`` makes one from a
module's side parameters or a ``round_plan`` side.

``gid_index: auto`` resolves through discovery's one GID choice
(``select_gid``): from the ``commcheck_rdma`` fact (``gid_index_from_facts``)
or from the port's sysfs GID table with each GID's netdev
(``gid_index_from_sysfs``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from collections import namedtuple

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.gid import select_gid

GID_MIN, GID_MAX = 0, 255
PORT_MIN, PORT_MAX = 1, 255
RAIL_MAX = 1023
NUMA_NODE_MAX = 2 ** 31 - 1
# Ports whose GID table has this many empty entries in a row after a real one end there.
GID_HOLES_MAX = 32

_FIELDS = ("host", "device", "port", "gid_index", "address", "rail", "numa_node")


class Endpoint(namedtuple("Endpoint", _FIELDS)):
    """A side's RDMA endpoint; every field checked (``option_rules.OptionError`` otherwise).

    ``gid_index`` None: perftest's default (InfiniBand, or nothing known).
    ``numa_node`` None or -1: no NUMA node known.
    """

    __slots__ = ()

    def __new__(cls, host=None, device=None, port=1, gid_index=None, address=None, rail=None, numa_node=None):
        if host is not None:
            option_rules.check_text("host", host, 255)
        if device is not None:
            option_rules.check_name("device", device, "rdma_device")
        port = option_rules.check_int("ib_port", 1 if port is None else port, PORT_MIN, PORT_MAX)
        if gid_index is not None:
            gid_index = option_rules.check_int("gid_index", gid_index, GID_MIN, GID_MAX)
        if address not in (None, "") and not option_rules.is_host(address):
            option_rules.fail("address", address, "is not a host name or an IP address")
        if rail is not None:
            rail = option_rules.check_int("rail", rail, 0, RAIL_MAX)
        if numa_node is not None:
            numa_node = option_rules.check_int("numa_node", numa_node, -1, NUMA_NODE_MAX)
        return super(Endpoint, cls).__new__(cls, host, device, port, gid_index, address or None, rail, numa_node)

    @classmethod
    def from_side(cls, side, host=None, numa_node=None):
        """The endpoint of a side (``device``, ``ib_port``, ``gid_index``, ``rail``; ``bind`` as its address).

        A ``gid_index`` still 'auto' (not resolved) is None: perftest's default.
        """
        gid = side.get("gid_index")
        return cls(host=host, device=side.get("device"), port=side.get("ib_port"),
                   gid_index=None if gid == "auto" else gid, address=side.get("bind"), rail=side.get("rail"),
                   numa_node=numa_node)


def port_gid_index(gids, netdev=None, addresses=None, subnet=None):
    """The GID index ``gid_index: auto`` means for a RoCE port: discovery's choice (``select_gid``).

    ``gids``: ``{index, gid, type[, netdev, ipv4]}`` (type as sysfs prints it);
    ``netdev`` the port's own netdev, so that a VLAN or macvlan GID at a lower
    index is not taken for the port's address.
    """
    return select_gid(gids, "Ethernet", netdev=netdev, addresses=addresses, subnet=subnet,
                      ipv6_fallback=True)["gid_index"]


def gid_index_from_facts(rdma_facts, device, ib_port):
    """(found, gid_index) from a commcheck_rdma fact for device/port.

    found is False when the fact does not know the port. The fact's own
    ``gid_index`` (discovery's choice) comes first; an InfiniBand port without
    one needs no GID index (None): discovery chose one only when
    ``ib_gid_index`` asked for it.
    """
    port = _fact_port(rdma_facts, device, int(ib_port))
    if port is None:
        return False, None
    if port.get("gid_index") is not None:
        label = "rdma_facts gid_index of %s port %d" % (device, int(ib_port))
        return True, option_rules.check_int(label, port["gid_index"], GID_MIN, GID_MAX)
    if str(port.get("link_layer") or "").lower() == "infiniband":
        return True, None
    entries = [dict(g, index=g.get("index", g.get("gid_index"))) for g in port.get("gids") or []
               if isinstance(g, dict)]
    return True, port_gid_index(entries, netdev=port.get("netdev"), addresses=port.get("addresses"))


def _fact_port(rdma_facts, device, number):
    """The fact's entry of port ``number`` of ``device``, or None."""
    for dev in (rdma_facts or {}).get("devices") or []:
        if dev.get("name") != device:
            continue
        for port in dev.get("ports") or []:
            try:
                if int(port.get("port", 1)) == number:
                    return port
            except (TypeError, ValueError):
                continue
    return None


def gid_index_from_sysfs(read_file, sysfs_root, device, ib_port, limit=256):
    """(found, gid_index) reading ``<sysfs_root>/class/infiniband/DEV/ports/N``.

    ``read_file(path, default)`` is the transport's reader, so this works on
    the host or inside a pod.
    """
    base = "%s/class/infiniband/%s/ports/%d" % (sysfs_root.rstrip("/") or "", device, int(ib_port))
    link_layer = read_file(base + "/link_layer", None)
    if link_layer is None:
        return False, None
    if link_layer.strip().lower() == "infiniband":
        return True, None
    entries = sysfs_gid_entries(read_file, base, limit)
    # GID 0 is the link-local GID of the port's own netdev (the kernel fills it first).
    own = entries[0]["netdev"] if entries and entries[0]["index"] == 0 else None
    return True, port_gid_index(entries, netdev=own)


def sysfs_gid_entries(read_file, base, limit=256):
    """The non-empty GIDs of a port's sysfs directory: ``{index, gid, type, netdev}`` each."""
    entries = []
    misses = 0
    for idx in range(limit):
        gid = read_file("%s/gids/%d" % (base, idx), None)
        if gid is None:
            break
        gid = gid.strip()
        if not gid or not gid.replace("0", "").replace(":", ""):
            misses += 1
            if misses > GID_HOLES_MAX and entries:
                break
            continue
        misses = 0      # the holes in a row after this GID are counted, not all of them
        kind = read_file("%s/gid_attrs/types/%d" % (base, idx), "") or ""
        ndev = read_file("%s/gid_attrs/ndevs/%d" % (base, idx), "") or ""
        entries.append({"index": idx, "gid": gid, "type": kind.strip(), "netdev": ndev.strip() or None})
    return entries


def resolve_gid_index(side, rdma_facts, read_file, sysfs_root):
    """(gid_index, warning or None) for a side whose ``gid_index`` may be 'auto'.

    Facts first, then sysfs; a port neither knows keeps perftest's default (None) with a warning.
    """
    if side.get("gid_index") != "auto":
        return side.get("gid_index"), None
    device = side.get("device")
    if not device:
        return None, "gid_index=auto without a device: left to perftest's default"
    found, index = gid_index_from_facts(rdma_facts, device, side["ib_port"])
    if not found:
        found, index = gid_index_from_sysfs(read_file, sysfs_root, device, side["ib_port"])
    if not found:
        return index, ("gid_index=auto: port %s/%s is unknown to the facts and to %s; left to perftest's default"
                       % (device, side["ib_port"], sysfs_root))
    return index, None
