# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Localization's fabric steps (pure), on a :class:`localization_view.LinkView`:

- :func:`switch_components`: suspects of one rail that pass with each other: the
  switch they share (a ``fabric`` component), not their NICs;
- :func:`cut_components`: hosts of a rail that split into groups passing among
  themselves and failing across, known-good partners too (a spine in a ring)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.localization_view import (
    component, fmt, link_lines, pair_key)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

SWITCH_FIX = ("hosts that pass with each other fail with every host outside their group: check the switch they "
              "share on that rail (the leaf, its uplinks and their error counters, ECMP, PFC / ECN), not the hosts")
EVERY_RAIL_SWITCH = "on every rail (a switch the hosts share across the rails, or the spine between the rails' leaves)"


# --- a switch that hosts share ------------------------------------------------------------

def switch_components(view, suspects, fleet_rails):
    """A ``fabric`` component per group of suspects of one rail that pass with each other: behind one switch.

    Hosts that each fail with most of their peers on a rail but pass among themselves are not bad NICs (two
    slow NICs would be slow between them too): the switch they share, a leaf or its uplinks, is slow for
    whatever crosses it. Returns (components, the (host, rail) pairs of those groups)."""
    out = []
    grouped = set()
    for rail in sorted(view.hosts_of_rail):
        if rail in fleet_rails:
            continue
        for group in passing_groups(view, rail, [n for (n, r) in suspects if r == rail]):
            out.append(switch_component(view, rail, group))
            grouped.update((node, rail) for node in group)
    return out, grouped


def passing_groups(view, rail, nodes):
    """The groups (two hosts or more, in natural order) of ``nodes`` joined by good links on ``rail`` whose
    every link among themselves that has a status is good."""
    left = sorted(nodes, key=natural_key)
    groups = []
    while left:
        group, frontier = [left[0]], [left[0]]
        while frontier:
            node = frontier.pop()
            for other in left:
                if other not in group and _status(view, rail, node, other) == "good":
                    group.append(other)
                    frontier.append(other)
        left = [n for n in left if n not in group]
        inner = [_status(view, rail, a, b) for i, a in enumerate(group) for b in group[i + 1:]]
        if len(group) >= 2 and all(status in ("good", None, "unknown") for status in inner):
            groups.append(sorted(group, key=natural_key))
    return groups


def _status(view, rail, a, b):
    link = view.links.get((rail, pair_key(a, b)))
    return link["status"] if link else None


def switch_component(view, rail, group):
    """The switch the hosts of ``group`` share on ``rail``: its evidence is their links across it."""
    members = set(group)
    across = [link for (r, pair), link in view.sorted_links()
              if r == rail and len(members & set(pair)) == 1 and link["status"] != "unknown"]
    bad = [link for link in across if link["status"] == "bad"]
    names = ", ".join(group)
    lines = ["rail %s: %s pass with each other and fail across: %d of %d links to the other hosts bad" % (
        rail, names, len(bad), len(across))]
    for node in group:
        st = view.stat(node, rail)
        lines.append("%s rail %s: %d of %d links bad" % (node, rail, st["bad"], st["links"]))
    comp = component(
        "fabric", "*", None, rail, [rail], view.rail_devices(group, rail),
        "rail %s: %s pass with each other but fail with the other hosts (%d of %d links across bad): the "
        "switch they share, not their NICs" % (rail, names, len(bad), len(across)),
        lines + link_lines(bad, 6), {"total": len(across), "bad": len(bad)},
        "high" if any(link["confirmed"] for link in bad) else "medium")
    comp["fix"] = SWITCH_FIX
    comp["groups"] = [list(group)]
    return comp


# --- a cut between groups of hosts -----------------------------------------------------------

def cut_components(view, fleet_rails, switched):
    """A ``fabric`` component per rail whose hosts split into groups (:func:`cut_groups`) that pass among
    themselves, first pass and partner retests alike, while every failure, a known-good partner's among them,
    is between two groups; and the (host, rail) pairs of those failures.

    In a ring (each host has two peers) the hosts on either side of a slow spine or leaf uplink fail with one
    peer only, so no majority names them; the retests with known-good partners then fail across the cut too,
    which would blame each side that was retested. Hosts on one side of a cut are fine with each other: the
    switches between the groups are at fault."""
    out = []
    cut = set()
    for rail in sorted(view.hosts_of_rail):
        if rail in fleet_rails or any(r == rail for (_n, r) in switched):
            continue
        groups = cut_groups(view, rail)
        if groups:
            out.append(cut_component(view, rail, groups))
            cut.update((node, rail) for (r, pair), link in view.links.items()
                       if r == rail and link["status"] == "bad" for node in pair)
    return out, cut


def cut_groups(view, rail):
    """The groups of hosts of ``rail`` joined by good links and passing partner retests, when there are two or
    more, each of two hosts or more, every bad link and failing partner retest joins two of them, and a
    known-good partner failed across (without that, two unrelated bad links cut a ring just the same). Else
    None."""
    good, bad, partner_bad = _rail_edges(view, rail)
    group_of = _groups(view.hosts_of_rail.get(rail, ()), good)
    groups = {}
    for node, gid in group_of.items():
        groups.setdefault(gid, []).append(node)
    if len(groups) < 2 or any(len(members) < 2 for members in groups.values()):
        return None
    if not bad or any(group_of[a] == group_of[b] for a, b in bad + partner_bad):
        return None
    if not partner_bad:
        return None
    return sorted((sorted(members, key=natural_key) for members in groups.values()), key=lambda g: natural_key(g[0]))


def _rail_edges(view, rail):
    """(good, bad links, failing partner retests) of ``rail`` as host pairs: good links and passing partner
    retests; flaky links are neither."""
    good, bad, partner_bad = [], [], []
    for (r, pair), link in view.links.items():
        if r == rail and link["status"] == "good":
            good.append(pair)
        elif r == rail and link["status"] == "bad":
            bad.append(pair)
    for (r, subject), results in view.partners.items():
        if r != rail:
            continue
        for res in results:
            if res["bad"]:
                partner_bad.append((subject, res["partner"]))
            elif res["verdict"] not in ("skipped",):
                good.append((subject, res["partner"]))
    return good, bad, partner_bad


def _groups(nodes, edges):
    """node -> a group id: the connected groups of ``nodes`` over ``edges``."""
    group_of = dict((node, node) for node in nodes)

    def root(node):
        # path halving: a ring's hosts joined one after another made chains as long as the ring (quadratic);
        # each set keeps its root, so the group ids are the same
        while group_of[node] != node:
            group_of[node] = group_of[group_of[node]]
            node = group_of[node]
        return node

    for a, b in edges:
        if a in group_of and b in group_of:
            group_of[root(a)] = root(b)
    return dict((node, root(node)) for node in nodes)


def cut_component(view, rail, groups):
    """The switches between ``groups`` on ``rail``: its evidence is what failed across them."""
    bad = [link for (r, _p), link in view.sorted_links() if r == rail and link["status"] == "bad"]
    names = " | ".join(", ".join(group) for group in groups)
    lines = ["rail %s: the hosts pass within each group (%s) and fail across" % (rail, names)]
    for group in groups:
        for node in group:
            for res in view.partner_view(node, rail)[0]:
                lines.append("%s rail %s with known-good %s: %s %s" % (node, rail, res["partner"], res["verdict"],
                                                                       fmt(res["value"])))
    comp = component(
        "fabric", "*", None, rail, [rail], view.rail_devices([n for g in groups for n in g], rail),
        "rail %s: the hosts split into %d groups (%s) that pass with each other and fail across, known-good "
        "partners too (%d links across bad): the switches between the groups, not the hosts" % (
            rail, len(groups), names, len(bad)),
        lines + link_lines(bad, 6), {"total": sum(1 for (r, _p) in view.links if r == rail), "bad": len(bad)},
        "medium")
    comp["fix"] = SWITCH_FIX
    comp["groups"] = [list(group) for group in groups]
    return comp


def one_switch_for_every_rail(view, fabrics):
    """The ``fabric`` components of switches and cuts (:func:`switch_components`, :func:`cut_components`), or one
    per group of hosts for all rails when every rail (two or more) splits the same hosts the same way.

    The same hosts cut off from the others on every rail at once are one fault, not one per rail: the switch
    they all hang off (a top-of-rack switch of those hosts), or what every rail's switches share between
    them (a spine, its power or its uplinks)."""
    rails = set(view.hosts_of_rail)
    by_rail = {}
    for comp in fabrics:
        by_rail.setdefault(comp["rail"], set()).add(_split_of(comp))
    splits = set(frozenset(s) for s in by_rail.values())
    if len(rails) < 2 or set(by_rail) != rails or len(splits) != 1:
        return fabrics
    out = []
    for split in sorted(next(iter(splits)), key=lambda sp: sorted(sorted(g, key=natural_key) for g in sp)):
        mine = sorted((c for c in fabrics if _split_of(c) == split), key=lambda c: c["rail"])
        comp = component(
            "fabric", "*", None, None, sorted(rails), sorted(set(d for c in mine for d in c["devices"])),
            "every rail: %s; the same hosts on all %d rails: one switch or link they all share" % (
                mine[0]["cause"].split(": ", 1)[1], len(mine)),
            [line for c in mine for line in c["evidence"][:1]] + mine[0]["evidence"][1:],
            {"total": sum(c["links"]["total"] for c in mine), "bad": sum(c["links"]["bad"] for c in mine)},
            "high" if any(c["confidence"] == "high" for c in mine) else "medium")
        comp["fix"] = SWITCH_FIX.replace("on that rail", EVERY_RAIL_SWITCH)
        out.append(comp)
    return out


def _split_of(comp):
    """The groups of hosts a switch or cut component separates, as a comparable value (its rail's devices
    differ; its hosts do not)."""
    return frozenset(frozenset(g) for g in comp["groups"])


def outliers_of_fleet_rails(view, fleet_rails):
    """{(host, rail): "majority"} for the hosts whose links on a fleet rail measure far below the rail's others
    every time (:meth:`LinkView.outliers`): a slow NIC on a slow rail is a fault of its own."""
    return dict(((node, rail), "majority") for (node, rail) in view.outliers() if rail in fleet_rails)
