# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GIDs: their text forms and THE one GID choice, :func:`select_gid` (pure).

Discovery (``gid_index`` of each port), the ``commcheck_select_gid`` filter
and perftest's ``gid_index: auto`` all choose through :func:`select_gid`,
so a test never uses a GID other than the one discovery reports.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ipaddress
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.gid_text import mapped_ipv4

ROCE_V2 = "RoCE v2"
ROCE_V1 = "IB/RoCE v1"
ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"
_KERNEL_GID = re.compile(r"^[0-9a-f]{4}(?::[0-9a-f]{4}){7}$")


# --- text forms ------------------------------------------------------------------

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
    if getattr(addr, "scope_id", None) is not None:
        return None     # an interface's address (fe80::1%eth0) is no GID, and it has no exploded form
    return addr.exploded


def gid_ipv4(gid):
    """The IPv4 address of an IPv4-mapped GID (::ffff:a.b.c.d), else None."""
    return mapped_ipv4(gid)


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


# --- the subnet option -----------------------------------------------------------

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


# --- the choice ------------------------------------------------------------------

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
        return _infiniband_gid(gids, ib_gid_index)
    if link_layer and link_layer != "Ethernet":
        return _no_gid("link layer %s: neither InfiniBand nor Ethernet (e.g. AWS EFA), no GID index to choose"
                       % link_layer)
    cands = _roce_v2_ipv4_candidates(gids)
    if not cands:
        if ipv6_fallback and not subnet:
            return _ipv6_gid(gids, netdev)
        return _no_gid("no RoCE v2 GID with an IPv4 address")
    if subnet:
        cands = [c for c in cands if _in_subnet(c[1], subnet)]
        if not cands:
            return _no_gid("no RoCE v2 GID with an IPv4 address in %s" % subnet)
    elif netdev:
        cands = _preferring(cands, lambda c: c[2] in (netdev, None))
    addresses = [str(a).split("/", 1)[0] for a in (addresses or [])]
    cands = _preferring(cands, lambda c: c[1] in addresses)
    best = _primary_address_first(cands, addresses)
    return {"gid_index": best[0], "candidates": [c[0] for c in cands],
            "reason": "RoCE v2 GID of %s%s" % (best[1], " in %s" % subnet if subnet else "")}


def _no_gid(reason):
    return {"gid_index": None, "candidates": [], "reason": reason}


def _infiniband_gid(gids, ib_gid_index):
    """InfiniBand needs no GID index, unless one is asked for and that slot is in use."""
    if ib_gid_index is None:
        return _no_gid("InfiniBand: no GID index needed")
    used = set(int(g["index"]) for g in gids if g.get("index") is not None)
    if int(ib_gid_index) in used:
        return {"gid_index": int(ib_gid_index), "candidates": [int(ib_gid_index)],
                "reason": "InfiniBand: GID index %s as asked" % ib_gid_index}
    return _no_gid("InfiniBand: GID index %s asked for is not in use" % ib_gid_index)


def _roce_v2_ipv4_candidates(gids):
    """Sorted (index, ipv4, netdev) of the RoCE v2 GIDs that carry an IPv4 address."""
    cands = []
    for gid in gids:
        ipv4 = gid.get("ipv4") or gid_ipv4(gid.get("gid"))
        if normalize_gid_type(gid.get("type")) == ROCE_V2 and ipv4 and gid.get("index") is not None:
            cands.append((int(gid["index"]), ipv4, gid.get("netdev")))
    return sorted(cands)


def _preferring(cands, wanted):
    """The wanted candidates when there are any, else all of them."""
    return [c for c in cands if wanted(c)] or cands


def _primary_address_first(cands, addresses):
    """The candidate of the first (primary) address that has one, else the lowest index."""
    for addr in addresses:
        for cand in cands:
            if cand[1] == addr:
                return cand
    return cands[0]


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
        return _no_gid("no RoCE v2 GID")
    best = min(ranked)
    return {"gid_index": best[2], "candidates": sorted(r[2] for r in ranked),
            "reason": "RoCE v2 %s IPv6 GID (no IPv4 GID)" % ("link-local" if best[1] else "global")}
