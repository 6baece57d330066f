# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Localization's link steps (pure), on a :class:`localization_view.LinkView`:

- :func:`path_components`: the links that blame neither side: ``fabric``
  when two of them on a rail share no host and every host of them passes
  with known-good partners, else one ``link`` each (saying ``link or
  fabric, not separated`` when the partner retests that would separate
  them did not run);
- :func:`flaky_components`: links that failed and then passed on retest."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.localization_view import (
    component, fmt, link_confidence, link_lines, majority, pair_key)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key


# --- links and fabric ------------------------------------------------------------------------

def path_components(view, open_links):
    """Per rail, the open links: ``fabric`` when two of them share no host and every host of them passes with
    known-good partners (:func:`separated`), else one ``link`` each."""
    by_rail = {}
    for rail, pair, link in open_links:
        by_rail.setdefault(rail, []).append((pair, link))
    out = []
    for rail in sorted(by_rail):
        items = by_rail[rail]
        disjoint = has_disjoint(items)
        if disjoint and separated(view, rail, items):
            out.append(fabric_component(view, rail, items))
        else:
            out += link_components(view, rail, items, unseparated=disjoint)
    return pairs_on_every_rail(view, out)


def pairs_on_every_rail(view, comps):
    """The ``link`` components of a pair bad on every rail (two at least) of its hosts, as one: the rails are
    separate planes, so what fails between the two hosts on all of them is one thing, not a cable of each."""
    by_pair = {}
    for comp in comps:
        if comp["component"] == "link":
            by_pair.setdefault(pair_key(comp["host"], comp["peer"]), []).append(comp)
    out = []
    for comp in comps:
        pair = pair_key(comp["host"], comp["peer"]) if comp["component"] == "link" else None
        links = by_pair.get(pair) or []
        shared = view.rails_of.get(pair[0], set()) & view.rails_of.get(pair[1], set()) if pair else set()
        if len(links) < 2 or set(c["rail"] for c in links) != shared:
            out.append(comp)
        elif comp is links[0]:
            out.append(pair_component(view, pair, links))
    return out


def pair_component(view, pair, links):
    rails = sorted(c["rail"] for c in links)
    alone = all(len(view.hosts_of_rail.get(r, ())) <= 2 for r in rails)
    lines = [line for c in links for line in c["evidence"]]
    cause = "link %s - %s is bad on every rail (%s): %s" % (
        pair[0], pair[1], ", ".join(str(r) for r in rails),
        "not separable with two hosts only: either host, the path between them or the fabric (no control pair "
        "is possible); a third host tells them apart" if alone
        else "what the two hosts' paths share, not a cable of one rail")
    return component("link", pair[0], pair[1], None, rails, sorted(set(d for c in links for d in c["devices"])),
                     cause, lines, {"total": len(links), "bad": len(links)},
                     min((c["confidence"] for c in links), key=("low", "medium", "high").index))


def separated(view, rail, items):
    """True when every host of the (pair, link) items passed its partner retests on ``rail``: only then are
    the hosts known good and the paths between them (link or fabric) to blame."""
    return all(view.cleared(node, rail) for pair, _link in items for node in pair)


def has_disjoint(items):
    """True when two of the (pair, link) items share no host."""
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            if not set(items[i][0]) & set(items[j][0]):
                return True
    return False


def fabric_component(view, rail, items):
    names = ["%s-%s" % pair for pair, _l in items]
    lines = ["rail %s: %d bad pairs, %s" % (rail, len(items), "; ".join(names))]
    for pair, link in items:
        lines += pair_lines(view, pair, rail, link)
    return component(
        "fabric", "*", None, rail, [rail], view.rail_devices([h for p, _l in items for h in p], rail),
        "rail %s: %d bad pairs that share no host, while each host is fine with others: %s" % (
            rail, len(items), ", ".join(names)),
        lines, {"total": sum(1 for (r, _p) in view.links if r == rail), "bad": len(items)},
        "medium" if all(l["confirmed"] for _p, l in items) else "low")


def link_components(view, rail, items, unseparated=False):
    """One ``link`` component per (pair, link) item of one rail; a host in several of them is pointed out.

    ``unseparated``: the items include pairs that share no host, but partner retests did not clear every host,
    so link and fabric are not told apart (said in the cause)."""
    shared = {}
    for pair, _link in items:
        for node in pair:
            shared[node] = shared.get(node, 0) + 1
    hosts_on_rail = len(view.hosts_of_rail.get(rail, ()))
    out = []
    for pair, link in items:
        a, b = pair
        lines = pair_lines(view, pair, rail, link)
        for node in pair:
            if shared[node] > 1:
                lines.append("%s is in %d of the bad pairs on rail %s: check its port too" % (node, shared[node], rail))
        cleared = all(view.cleared(n, rail) for n in pair)
        cause = link_cause(view, rail, pair, cleared, unseparated)
        if hosts_on_rail <= 2:
            lines.append("only two hosts on rail %s: not separable, the link cannot be told apart from either host or the "
                         "fabric (no control pair is possible)" % rail)
        out.append(component("link", a, b, rail, [rail], view.rail_devices(pair, rail), cause, lines,
                             {"total": 1, "bad": 1}, link_confidence(link, cleared, hosts_on_rail)))
    return out


def link_cause(view, rail, pair, cleared, unseparated):
    """What the evidence says of one open link: whether both hosts are good with every other peer on the
    rail, or only not bad with most; whether known-good partners cleared them; link or fabric unseparated."""
    a, b = pair
    others_good = all(view.stat(n, rail)["bad"] <= 1 for n in pair)
    cause = "link %s - %s (rail %s) is bad while %s" % (
        a, b, rail, "both hosts are good with their other peers" if others_good
        else "neither host is bad with most of its peers")
    if cleared:
        cause += " and with known-good partners"
    if unseparated:
        retested = any(r == rail for (r, _node) in view.partners)
        cause += "; link or fabric, not separated (%s)" % (
            "not every host passed with known-good partners" if retested else "no retests")
    return cause


def pair_lines(view, pair, rail, link):
    lines = link_lines([link], 1)
    for node in pair:
        st = view.stats.get((node, rail)) or {"links": 0, "bad": 0}
        dev = view.devices.get((node, rail))
        lines.append("%s rail %s%s: %d of %d links bad" % (node, rail, " (%s)" % dev if dev else "", st["bad"],
                                                           st["links"]))
        for res in view.partners.get((rail, node)) or []:
            lines.append("%s rail %s with known-good %s: %s %s" % (node, rail, res["partner"], res["verdict"],
                                                                   fmt(res["value"])))
    return lines


# --- flaky -----------------------------------------------------------------------------------

def flaky_components(view, fraction, minimum, fleet_rails=()):
    """Flaky hosts (most links of some rails flaky), then the flaky links no flaky host covers; none on the
    ``fleet_rails``, whose failing rail-wide component explains a link of them that failed once too."""
    hosts, grouped = flaky_host_components(view, fraction, minimum, fleet_rails)
    return hosts + flaky_link_components(view, grouped, fleet_rails)


def flaky_host_components(view, fraction, minimum, fleet_rails=()):
    """One ``flaky`` component per host with mostly flaky links on some rails; and the links they cover."""
    out = []
    grouped = set()
    for node in sorted(view.rails_of, key=natural_key):
        flaky_rails = [r for r in sorted(view.rails_of[node]) if r not in fleet_rails and
                       majority(view.stats[(node, r)]["flaky"], view.stats[(node, r)]["links"], fraction, minimum)]
        if not flaky_rails:
            continue
        n_links = sum(view.stats[(node, r)]["links"] for r in flaky_rails)
        n_flaky = sum(view.stats[(node, r)]["flaky"] for r in flaky_rails)
        whole = flaky_rails == sorted(view.rails_of[node])
        lines = []
        for rail in flaky_rails:
            st = view.stats[(node, rail)]
            lines.append("%s rail %s: %d of %d links failed and then passed on retest" % (
                node, rail, st["flaky"], st["links"]))
            lines += link_lines([view.links[(rail, pair_key(node, p))] for p in st["flaky_peers"]], 4)
            grouped.update((rail, pair_key(node, peer)) for peer in st["flaky_peers"])
        where = node if whole else "%s rail %s" % (node, ", ".join(str(r) for r in flaky_rails))
        out.append(component(
            "flaky", node, None, None if whole else flaky_rails[0], flaky_rails,
            view.host_devices(node, flaky_rails),
            "%s: %d of its %d links were slow once and passed on retest (transient, not failed)" % (
                where, n_flaky, n_links), lines, {"total": n_links, "bad": 0, "flaky": n_flaky}, "medium"))
    return out, grouped


def flaky_link_components(view, grouped, fleet_rails=()):
    """One ``flaky`` component per flaky link not in ``grouped`` nor on ``fleet_rails``; a link whose one side
    never answered once (its process hung or never started, ``view.hung``) is that side's host, flaky."""
    out = []
    hung_once = {}
    for (rail, pair), link in view.sorted_links():
        if link["status"] != "flaky" or (rail, pair) in grouped or rail in fleet_rails:
            continue
        hung = [host for host in pair if (rail, host) in view.hung]
        if len(hung) == 1:
            hung_once.setdefault(hung[0], []).append(link)
            continue
        out.append(component(
            "flaky", pair[0], pair[1], rail, [rail], view.rail_devices(pair, rail),
            "link %s - %s (rail %s) failed once and passed on retest (transient, not failed)" % (pair[0], pair[1], rail),
            link_lines([link], 1), {"total": 1, "bad": 0, "flaky": 1}, "medium"))
    return [hung_once_component(view, host, links) for host, links in sorted(
        hung_once.items(), key=lambda item: natural_key(item[0]))] + out


def hung_once_component(view, host, links):
    """``host`` flaky: its side of ``links`` never answered once, and their retests passed. The host's process
    hung, not the path: its peers only waited for it."""
    rails = sorted(set(link["rail"] for link in links))
    return component(
        "flaky", host, None, None, rails, view.host_devices(host, rails),
        "%s: its side of %d test(s) never answered once (the process hung or never started) and passed on retest "
        "(transient, on the host, not its links)" % (host, len(links)), link_lines(links, 4),
        {"total": len(links), "bad": 0, "flaky": len(links)}, "medium")
