# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Localization's host steps (pure), on a :class:`localization_view.LinkView`:

- :func:`blame_sides`: bad links no suspect explains, judged by partner
  retests and by the side that failed to answer in an ``error`` (which side,
  if any, is implicated; a side that hung implicates its whole host);
- :func:`node_components`: ``host`` (implicated on every rail it has) or
  ``rail`` components for the implicated (host, rail) pairs."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.localization_view import (
    component, confidence, fmt, link_lines, pair_key)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

MANY_RAILS = 4


# --- which side of a bad link ------------------------------------------------------------

def blamed_sides(view, rail, pair):
    """[(host, why)] for one bad link: a side that fails with at least as many known-good partners as it
    passes with (``partner``), or the only side an error names as the one that failed to answer: ``hung``
    when its process never answered, else ``error``."""
    blamed = []
    for node in pair:
        _all, bad, good = view.partner_view(node, rail)
        other = pair[1] if node == pair[0] else pair[0]
        if bad and len(bad) >= len(good):
            blamed.append((node, "partner"))
        elif view.blame.get((rail, node)) and not view.blame.get((rail, other)):
            hung = (rail, node) in view.hung
            if hung or not refused_on_one_path(view, node, rail):
                blamed.append((node, "hung" if hung else "error"))
    return blamed


def refused_on_one_path(view, node, rail):
    """Whether ``node`` was a client refused while its server listened, on this one bad link of ``rail``, and
    has a good link there at least (a ring gives two links).

    The refusal says where the exchange broke, not that the client's NIC is bad: the NIC reaches its other
    peers and the server answers others, so the path between the two is what fails (a route, an ACL, a
    switch port's table): the link. A side that exited with its own error, or hung, stays that side's."""
    if (rail, node) not in view.refused:
        return False
    st = view.stat(node, rail)
    return st["bad"] == 1 and st["links"] - st["bad"] - st["flaky"] >= 1


def blame_sides(view, implicated, fleet_rails, switched=()):
    """The sides the bad links off fleet rails implicate, and the links nothing implicated explains.

    ``implicated``: (host, rail) -> why (``majority``, ``partner``, ``error``, ``hung``). Every
    bad link no suspect explains is judged by :func:`blamed_sides` first; a side that hung is
    implicated on every rail it has (its host, not its NIC, failed to answer), and a side found stopped or
    stuck in the kernel (``link["stuck"]``) is, whatever suspect explains its link. Only then are
    the links left open whose hosts are both unimplicated on that rail, so a run never blames a
    host and calls one of its links bad while both hosts are good. ``switched``: the (host, rail)
    pairs behind a faulty switch (:func:`switch_components`), whose bad links that switch explains.
    Returns (implicated, open links as (rail, pair, link)).
    """
    implicated = dict(implicated)
    suspects = set(implicated) | set(switched)
    bad = [(rail, pair, link) for (rail, pair), link in view.sorted_links()
           if link["status"] == "bad" and rail not in fleet_rails
           and not any((n, rail) in switched for n in pair)]
    for rail, pair, link in bad:
        # a process its own host stopped or wedged is that host's whatever else its peer has (a slow peer
        # explains a slow link, not a stopped process)
        for node in link.get("stuck") or ():
            for each in sorted(view.rails_of.get(node, set([rail])) - fleet_rails):
                implicated.setdefault((node, each), "hung")
        if any((n, rail) in suspects for n in pair):
            continue
        for node, why in blamed_sides(view, rail, pair):
            rails = sorted(view.rails_of.get(node, set([rail])) - fleet_rails) if why == "hung" else [rail]
            for each in rails:
                implicated.setdefault((node, each), why)
    open_links = [(rail, pair, link) for rail, pair, link in bad
                  if not any((n, rail) in implicated for n in pair)]
    return implicated, open_links


# --- hosts and rails -----------------------------------------------------------------------

def node_components(view, implicated, fleet_rails):
    """A ``host`` component per host implicated on every rail it has, else one ``rail`` component per implicated
    rail. A fleet rail counts as one of its rails only where its measurements place the host among the rail's
    others (:func:`placed_rails`): on a rail that fails everywhere nothing else tells a host's NIC good or bad."""
    out = []
    for node in sorted(set(n for n, _r in implicated), key=natural_key):
        why = dict((r, w) for (n, r), w in implicated.items() if n == node)
        all_rails = sorted(placed_rails(view, node, fleet_rails) | set(why))
        if is_the_host(sorted(why), all_rails):
            out.append(host_component(view, node, why))
        else:
            out += rail_components(view, node, why, [r for r in all_rails if r not in why])
    return out


def placed_rails(view, node, fleet_rails):
    """The rails of ``node`` its links tell something about: every rail off ``fleet_rails``, and a fleet rail whose
    links between other hosts measured values (three at least), against which the node's are outliers or not
    (:func:`outliers_of_fleet_rails`)."""
    return set(r for r in view.rails_of.get(node, set())
               if r not in fleet_rails or view.levels(r).others(node) >= 3)


def is_the_host(bad_rails, all_rails):
    """Whether a host implicated on ``bad_rails`` of ``all_rails`` is the culprit rather than those NICs: on every
    rail it has; or, with :data:`MANY_RAILS` or more, on most of them (six NICs of eight failing at once are
    far likelier what they share, PCIe, NUMA, driver or firmware, than six faults)."""
    if not all_rails:
        return False
    if bad_rails == all_rails:
        return True
    return len(all_rails) >= MANY_RAILS and 2 * len(bad_rails) > len(all_rails)


def node_lines(view, node, why):
    """Evidence for a host: its links on each rail, its partner retests, its failed sides, then the bad links
    of its implicated rails (``why``: rail -> why)."""
    lines = []
    for rail in sorted(view.rails_of.get(node, set())):
        st = view.stat(node, rail)
        dev = view.devices.get((node, rail))
        tag = "rail %s%s" % (rail, " (%s)" % dev if dev else "")
        lines.append("%s %s: %d of %d links bad%s" % (
            node, tag, st["bad"], st["links"],
            (" (with %s)" % ", ".join(sorted(st["bad_peers"], key=natural_key))) if st["bad_peers"] else ""))
        for res in view.partner_view(node, rail)[0]:
            lines.append("%s %s with known-good %s: %s %s" % (node, tag, res["partner"], res["verdict"],
                                                              fmt(res["value"])))
        if why.get(rail) in ("error", "hung") and view.blame.get((rail, node)):
            lines.append("%s %s: its side of the test %s: %s" % (
                node, tag, "never answered" if (rail, node) in view.hung else "failed", view.blame[(rail, node)][0]))
    for rail in sorted(why):
        lines += link_lines([view.links[(rail, pair_key(node, p))] for p in view.stat(node, rail)["bad_peers"]], 4)
    return lines


def host_component(view, node, why):
    """The host itself: implicated (``why``: rail -> why) on every rail it has."""
    rails = sorted(why)
    stats = [view.stat(node, r) for r in rails]
    n_links = sum(st["links"] for st in stats)
    n_bad = sum(st["bad"] for st in stats)
    # one confirmed link of a host bad with most peers confirms it (retests may be sampled)
    confirmed = any(view.is_confirmed(node, r, st["bad_peers"]) for r, st in zip(rails, stats))
    via_partner = "partner" in why.values()
    lines = node_lines(view, node, why)
    cause = host_cause(view, node, why, n_bad, n_links)
    if len(rails) == 1 and "hung" not in why.values():
        lines.append("one rail only: the host and its NIC cannot be told apart")
    peers = len(set(p for r in rails for p in view.peers_of(node, r)))
    return component("host", node, None, None, rails, view.host_devices(node, rails), cause, lines,
                     {"total": n_links, "bad": n_bad}, confidence(confirmed, peers, via_partner, len(rails) > 1))


def host_cause(view, node, why, n_bad, n_links):
    """Why the host: its side hung (whatever the count), or its bad links on every rail, and what else."""
    if "hung" in why.values():
        return "%s: its side of a test never answered (the process hung, was stopped or never started); " \
            "%d of its %d %s are bad" % (node, n_bad, n_links, view.what)
    rails = len(view.rails_of.get(node, ()))
    where = "its only rail" if rails == 1 else "every rail" if len(why) >= rails else \
        "%d of its %d rails" % (len(why), rails)
    cause = "%s: %d of its %d %s are bad on %s" % (node, n_bad, n_links, view.what, where)
    if "partner" in why.values():
        cause += " (and it fails with known-good partners)"
    if "error" in why.values():
        cause += " (its side of the tests failed)"
    return cause


def rail_components(view, node, why, good_rails):
    """One ``rail`` component (NIC, port, cable to its switch) per implicated rail of a host that is fine on
    ``good_rails``."""
    lines = node_lines(view, node, why)
    out = []
    for rail in sorted(why):
        st = view.stat(node, rail)
        dev = view.devices.get((node, rail))
        cause = "%s rail %s%s: %d of its %d %s on that rail are bad, its other rail%s (%s) %s fine" % (
            node, rail, " (%s)" % dev if dev else "", st["bad"], st["links"], view.what,
            "s" if len(good_rails) > 1 else "", ", ".join(str(r) for r in good_rails),
            "are" if len(good_rails) > 1 else "is")
        if why[rail] == "partner":
            cause += "; it also fails with a known-good partner"
        elif why[rail] == "error":
            cause += "; its side of the test failed"
        elif why[rail] == "hung":
            cause += "; its side of a test never answered"
        out.append(component(
            "rail", node, None, rail, [rail], [dev] if dev else [], cause, lines,
            {"total": st["links"], "bad": st["bad"]},
            confidence(view.is_confirmed(node, rail, st["bad_peers"]), len(view.peers_of(node, rail)),
                       why[rail] == "partner", True)))
    return out
