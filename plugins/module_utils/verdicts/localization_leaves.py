# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Localization's switch step (pure), when the topology is known: which leaf switch each host's rail hangs off
(``commcheck_topology`` in the inventory, or what discovery read: lldpd's LLDP neighbours, smpquery's switches, the
node an iblinkinfo or ibnetdiscover scan shows at the other end of an InfiniBand port's cable).

- :func:`leaf_of_rails`: the topology as ``{(host, rail): {leaf, port, source}}``, a device name resolved to
  its rail through the check's own devices;
- :func:`leaf_components`: the leaves whose every host fails with the hosts behind the other leaves while the
  hosts of those other leaves pass with each other: a ``leaf`` component (the hosts behind it fail with each
  other too: the switch itself) or an ``uplink`` component (they pass with each other: only what leaves the
  switch fails, its uplinks); with two leaves whose hosts pass within each leaf and fail across, the uplinks
  between them (which side is not separable);
- :func:`without_leaves`: the view in which what those components explain is no evidence against the hosts.

A leaf with one host behind it is never named: its switch and that host's NIC cannot be told apart, the NIC is
the likelier (one part, not a switch); a host that is slow behind a healthy leaf stays a host, since the other
hosts of its leaf pass with everyone."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.localization_view import (
    component, link_lines)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

LEAF_FIX = ("every host behind leaf switch %s fails on rail %s, with the hosts behind it too, while the hosts behind "
            "the other leaves pass with each other: check that leaf switch (error and discard counters, buffer / "
            "PFC / ECN settings, firmware, power and temperature); replace it or move its hosts to a spare, then "
            "rerun the check")
UPLINK_FIX = ("the hosts behind leaf switch %s pass with each other and fail with the hosts behind %s on rail %s: "
              "check the uplinks of %s towards the spines (a link down leaving fewer uplinks, error counters, "
              "optics and cables, speed, ECMP hashing), not the hosts nor the leaf's host ports")


# --- the topology ----------------------------------------------------------------------------

def leaf_of_rails(view, topology):
    """``{(host, rail): {leaf, port, source}}`` of the hosts and rails of ``view`` that ``topology`` places.

    ``topology``: host -> {rail number or RDMA device name: {leaf, port, source}} (a device name is resolved
    through the devices the check measured on that host; a rail or device the check did not measure is left
    out)."""
    out = {}
    for host, rails in (topology or {}).items():
        if not isinstance(rails, dict):
            continue
        for key, where in rails.items():
            if not isinstance(where, dict) or not where.get("leaf"):
                continue
            rail = _rail_key(view, host, key)
            if rail is not None and (host, rail) in view.stats:
                out[(host, rail)] = {"leaf": str(where["leaf"]), "port": where.get("port"),
                                     "source": where.get("source") or "inventory"}
    return out


def _rail_key(view, host, key):
    """The rail of ``host`` that ``key`` (a rail number, as a number or text, or a device name) names, or None."""
    text = str(key)
    if text.isdigit():
        return int(text)
    return next((rail for (node, rail), device in view.devices.items() if node == host and device == text), None)


def by_host(placed):
    """``{host: {rail as text: {leaf, port, source}}}`` of :func:`leaf_of_rails`' result (a record's shape)."""
    out = {}
    for (host, rail), where in sorted(placed.items(), key=lambda item: (natural_key(item[0][0]), item[0][1])):
        out.setdefault(host, {})[str(rail)] = dict(where)
    return out


def leaves_of_rail(placed, rail):
    """leaf -> its hosts (natural order) on ``rail``."""
    out = {}
    for (host, r), where in placed.items():
        if r == rail:
            out.setdefault(where["leaf"], []).append(host)
    return dict((leaf, sorted(hosts, key=natural_key)) for leaf, hosts in out.items())


# --- the components ------------------------------------------------------------------------

def leaf_components(view, placed):
    """(components, explained: the (rail, pair) keys of the links they explain) of every rail with two leaves or
    more (see the module doc). A rail whose every host fails names no leaf: no leaf's hosts pass among
    themselves there."""
    found = []
    for rail in sorted(view.hosts_of_rail):
        leaves = leaves_of_rail(placed, rail)
        if len(leaves) < 2:
            continue
        failing = [leaf for leaf in sorted(leaves, key=natural_key) if _cut_off(view, rail, leaves, leaf)]
        found += _rail_components(view, rail, leaves, failing, placed)
    out = [comp for comp in found if not _same_hosts_everywhere(view, comp, found)]
    explained = set(key for comp in out for key in view.links
                    if key[0] == comp["rail"] and through(comp["switch"], *key[1]))
    return out, explained


def _same_hosts_everywhere(view, comp, found):
    """Whether the hosts of a failing ``leaf`` fail the same way behind other leaves on every other rail of
    theirs (two rails or more): what they share is themselves, not one switch (the hosts' own faults)."""
    if comp["switch"]["part"] != "leaf":
        return False
    hosts = set(comp["switch"]["hosts"])
    rails = set(r for h in hosts for r in view.rails_of.get(h, ()))
    same = [c for c in found if c["switch"]["part"] == "leaf" and set(c["switch"]["hosts"]) == hosts]
    return len(rails) >= 2 and set(c["rail"] for c in same) == rails and \
        len(set(c["switch"]["leaves"][0] for c in same)) > 1


def _rail_components(view, rail, leaves, failing, placed):
    """The components of ``rail`` from its ``failing`` leaves (:func:`_cut_off`)."""
    if len(failing) == len(leaves):
        # only two leaves can each be cut off from the other: whose own hosts pass with each other, the path
        # between them
        inner = [_inner(view, rail, leaves[leaf]) for leaf in failing]
        return [uplink_component(view, rail, leaves, failing, placed)] if inner == ["good", "good"] else []
    out = []
    for leaf in failing:
        inner = _inner(view, rail, leaves[leaf])
        if inner == "good":
            out.append(uplink_component(view, rail, leaves, [leaf], placed))
        elif inner in ("bad", None):
            out.append(leaf_component(view, rail, leaves, leaf, placed, inner is None))
    return out


def _cut_off(view, rail, leaves, leaf):
    """Whether the hosts behind ``leaf`` (two or more) fail with most of the hosts behind the other leaves
    while those pass with each other (most of their links among themselves good).

    A host's tests across the leaf are its first-pass links and its partner retests with hosts behind the other
    leaves. A host with neither is no evidence either way: a ring pairs the hosts in the middle of a leaf only
    with their neighbours behind it, so with more than two hosts per leaf only the two at its ends cross it in
    the first pass; every other host must fail across, and at least two must."""
    hosts = leaves[leaf]
    others = [h for other, members in leaves.items() if other != leaf for h in members]
    if len(hosts) < 2 or _most(_statuses(view, rail, others, others, inner=True)) != "good":
        return False
    across = [_statuses(view, rail, [host], others) + _partner_statuses(view, rail, host, others) for host in hosts]
    measured = [statuses for statuses in across if statuses]
    return len(measured) >= 2 and all(_most(statuses) == "bad" for statuses in measured)


def _partner_statuses(view, rail, host, peers):
    """The statuses (good or bad) of the partner retests of ``host`` on ``rail`` with one of ``peers``."""
    results, bad, good = view.partner_view(host, rail)
    peers = set(peers)
    return ["bad" if res in bad else "good" for res in results
            if res.get("partner") in peers and (res in bad or res in good)]


def _statuses(view, rail, hosts, peers, inner=False):
    """The statuses (good or bad) of the links of ``rail`` between ``hosts`` and ``peers`` (``inner``: the
    links among ``hosts``, each once, ``peers`` being the same)."""
    status_of = _rail_statuses(view, rail)
    peers = set(peers)
    out = []
    for host in hosts:
        for peer, status in status_of.get(host, {}).items():
            if peer in peers and (not inner or host < peer):
                out.append(status)
    return out


def _rail_statuses(view, rail):
    """host -> peer -> status (good or bad) of the links of ``rail``, built once per view and rail (a leaf's test
    reads its hosts' links, not the whole table)."""
    cache = view.leaf_statuses
    if rail not in cache:
        status_of = {}
        for (r, (a, b)), link in view.links.items():
            if r == rail and link["status"] in ("good", "bad"):
                status_of.setdefault(a, {})[b] = link["status"]
                status_of.setdefault(b, {})[a] = link["status"]
        cache[rail] = status_of
    return cache[rail]


def _most(statuses):
    """``bad`` when most are bad, ``good`` when most are good, None when none (or as many of each)."""
    bad = statuses.count("bad")
    good = statuses.count("good")
    return "bad" if bad > good else ("good" if good > bad else None)


def _inner(view, rail, hosts):
    """``good`` when every measured link among ``hosts`` passed, ``bad`` when every one failed, ``mixed``, or
    None when none was measured (a ring may not pair two hosts of one leaf)."""
    statuses = _statuses(view, rail, hosts, hosts, inner=True)
    if not statuses:
        return None
    return statuses[0] if len(set(statuses)) == 1 else "mixed"


def _evidence(view, rail, leaves, behind, placed):
    """(lines: the leaves at fault with their hosts' ports, the other leaves in one line; their bad links)."""
    lines = ["rail %s leaf %s: %s" % (rail, leaf, ", ".join(h + _port_text(placed.get((h, rail))) for h in leaves[leaf]))
             for leaf in behind]
    others = ["%s (%d hosts)" % (leaf, len(leaves[leaf])) for leaf in sorted(leaves, key=natural_key)
              if leaf not in behind]
    if others:
        lines.append("rail %s other leaves, their hosts passing with each other: %s" % (rail, ", ".join(others)))
    members = set(h for leaf in behind for h in leaves[leaf])
    bad = [link for (r, pair), link in view.sorted_links() if r == rail and link["status"] == "bad" and
           members & set(pair)]
    return lines, bad


def _port_text(where):
    if not where:
        return ""
    port = " port %s" % where["port"] if where.get("port") not in (None, "") else ""
    return "%s (%s)" % (port, where.get("source") or "inventory")


def leaf_component(view, rail, leaves, leaf, placed, inner_unknown):
    """The leaf switch ``leaf`` of ``rail``: its hosts fail with everyone, each other too."""
    hosts = leaves[leaf]
    lines, bad = _evidence(view, rail, leaves, [leaf], placed)
    others = [h for other, members in leaves.items() if other != leaf for h in members]
    counted = _statuses(view, rail, hosts, others) + _statuses(view, rail, hosts, hosts, inner=True)
    names = ", ".join(hosts)
    comp = component(
        "leaf", "*", None, rail, [rail], view.rail_devices(hosts, rail),
        "rail %s: every host behind leaf switch %s (%s) fails with the hosts behind the other leaves%s, while those "
        "pass with each other: the leaf switch, not %d NICs" % (
            rail, leaf, names, " (no two of its hosts were paired)" if inner_unknown else " and with each other",
            len(hosts)),
        lines + link_lines(bad, 6), {"total": len(counted), "bad": counted.count("bad")},
        "high" if any(link["confirmed"] for link in bad) else "medium")
    comp["fix"] = LEAF_FIX % (leaf, rail)
    comp["switch"] = {"part": "leaf", "leaves": [leaf], "hosts": list(hosts), "groups": [list(hosts)]}
    comp["groups"] = [list(hosts)]
    return comp


def uplink_component(view, rail, leaves, behind, placed):
    """The uplinks of the leaves ``behind`` (one; or both of two leaves) of ``rail``: their hosts pass with each
    other and fail across."""
    hosts = [h for leaf in behind for h in leaves[leaf]]
    others = [leaf for leaf in sorted(leaves, key=natural_key) if leaf not in behind]
    lines, bad = _evidence(view, rail, leaves, behind, placed)
    across = _statuses(view, rail, leaves[behind[0]], [h for lf in leaves if lf != behind[0] for h in leaves[lf]])
    if len(behind) == 2:
        fix = UPLINK_FIX % (behind[0], behind[1], rail, "both leaves (and the spine between them)")
        cause = "rail %s: the hosts behind leaf switch %s and those behind %s each pass among themselves and fail " \
            "across (%d of %d links bad): the uplinks between the two leaves, not the hosts" % (
                rail, behind[0], behind[1], across.count("bad"), len(across))
    else:
        fix = UPLINK_FIX % (behind[0], "the other leaves (%s)" % ", ".join(others), rail, behind[0])
        cause = "rail %s: the hosts behind leaf switch %s pass with each other and fail with the hosts behind %s " \
            "(%d of %d links across bad): the uplinks of leaf switch %s, not the hosts" % (
                rail, behind[0], ", ".join(others), across.count("bad"), len(across), behind[0])
    comp = component(
        "uplink", "*", None, rail, [rail], view.rail_devices(hosts, rail), cause,
        lines + link_lines(bad, 6), {"total": len(across), "bad": across.count("bad")},
        "high" if any(link["confirmed"] for link in bad) else "medium")
    comp["fix"] = fix
    comp["groups"] = [list(leaves[leaf]) for leaf in behind]
    comp["switch"] = {"part": "uplink", "leaves": list(behind), "hosts": list(hosts), "groups": comp["groups"]}
    return comp


# --- what they explain -----------------------------------------------------------------------

def without_leaves(view, components, explained):
    """The view in which the links ``explained`` count as good and the partner retests across the switches of
    ``components`` are left out (a host behind a slow leaf fails with a known-good partner across it too)."""
    if not explained:
        return view
    out = view.without(explained)
    out.partners = dict((key, [res for res in results if not _across(components, key[0], key[1], res["partner"])])
                        for key, results in view.partners.items())
    return out


def _across(components, rail, subject, partner):
    for comp in components:
        if comp["rail"] == rail and through(comp["switch"], subject, partner):
            return True
    return False


def through(switch, a, b):
    """Whether the path between ``a`` and ``b`` goes through ``switch`` (a leaf: any path of its hosts; its
    uplinks: the paths that leave it)."""
    if switch["part"] == "leaf":
        return a in switch["hosts"] or b in switch["hosts"]
    group_of = dict((host, num) for num, group in enumerate(switch["groups"]) for host in group)
    return (a in group_of or b in group_of) and group_of.get(a) != group_of.get(b)
