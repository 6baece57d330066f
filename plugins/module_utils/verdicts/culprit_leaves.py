# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The leaf switch behind a culprit host or NIC, where the topology is known (pure).

A pair check that localized with a topology (``commcheck_topology``, or discovery's LLDP neighbours) keeps the
leaf of each host's rail in its ``localization`` record (``params.topology``: host -> rail -> {leaf, port,
source}). A NIC culprit gets its rail's leaf, a host culprit the leaves of its rails, as ``switches``
(``[{rail, leaf, port, source}]``): where an operator walks to, and the first thing to compare with the other
culprits (two culprits behind one leaf point at it)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key


# checks whose topology is the leaf of one path a host (numbered rail 0 by that check), not of its RDMA rails
PATH_CHECKS = ("tcp_perf",)


def leaves_of_records(records):
    """``{(host, rail): {leaf, port, source}}`` from the RDMA checks' ``localization`` records' ``params.topology``
    (the TCP check's is its path's leaf, which may be another network's: not a rail's)."""
    out = {}
    for rec in records or []:
        if not isinstance(rec, dict) or rec.get("kind") != "localization":
            continue
        if (rec.get("params") or {}).get("check") in PATH_CHECKS:
            continue
        for host, rails in ((rec.get("params") or {}).get("topology") or {}).items():
            for rail, where in (rails or {}).items() if isinstance(rails, dict) else ():
                if isinstance(where, dict) and where.get("leaf") and str(rail).isdigit():
                    out.setdefault((host, int(rail)), where)
    return out


def with_leaves(items, records):
    """The culprits, each host or NIC one whose leaf is known with ``switches`` (see the module doc)."""
    leaves = leaves_of_records(records)
    if not leaves:
        return items
    for item in items:
        if item["component"] not in ("host", "nic"):
            continue
        rails = [item["rail"]] if item["component"] == "nic" and item["rail"] is not None else sorted(
            rail for (host, rail) in leaves if host == item["host"])
        switches = [dict(leaves[(item["host"], rail)], rail=rail) for rail in rails if (item["host"], rail) in leaves]
        if switches:
            item["switches"] = switches
    return items


def switches_text(item):
    """' behind leaf X' / ' behind leaves X, Y' of a culprit with ``switches``, else ''."""
    names = sorted(set(s["leaf"] for s in item.get("switches") or []), key=natural_key)
    if not names:
        return ""
    return " behind leaf %s" % names[0] if len(names) == 1 else " behind leaves %s" % ", ".join(names)
