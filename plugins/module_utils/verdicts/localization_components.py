# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Localization, one function per component kind (pure; ``localization.localize`` is the driver).

Each step reads a :class:`LinkView` (the link table of one check and its
statistics per host and rail) and returns the components it names, built by
:func:`component`:

- :func:`suspect_host_rails`: the (host, rail) pairs with mostly bad links,
  worst first, each one's links no longer counting against its peers;
- :func:`without_noise`: the failures of a healthy but noisy rail are no evidence;
- :func:`shortfall_components`: rails whose links are one tight population at the
  pass line, so that chance picks which fail (the rail's, not those links' hosts);
- :func:`fleet_components`: rails where every host has mostly bad links (and no few of
  them explain every bad link);
- :func:`switch_components`: suspects of one rail that pass with each other: the
  switch they share (a ``fabric`` component), not their NICs;
- :func:`cut_components`: hosts of a rail that split into groups passing among
  themselves and failing across, known-good partners too (a spine in a ring);
- :func:`blame_sides`: bad links no suspect explains, judged by partner
  retests and by the side that failed to answer in an ``error`` (which side,
  if any, is implicated; a side that hung implicates its whole host);
- :func:`node_components`: ``host`` (implicated on every rail it has) or
  ``rail`` components for the implicated (host, rail) pairs;
- :func:`path_components`: the links that blame neither side: ``fabric``
  when two of them on a rail share no host and every host of them passes
  with known-good partners, else one ``link`` each (saying ``link or
  fabric, not separated`` when the partner retests that would separate
  them did not run);
- :func:`flaky_components`: links that failed and then passed on retest.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import stats as robust
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.stats import median
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

FINDING_NAME = {"host": "bad_node", "rail": "bad_nic", "link": "bad_link", "fabric": "fabric",
                "fleet": "fleet", "flaky": "flaky"}
VERDICT_OF = {"host": "fail", "rail": "fail", "link": "fail", "fabric": "fail", "fleet": "fail", "flaky": "flaky"}
FIX = {
    "host": "take the host out of the pool; check what all its NICs share: PCIe root ports and link width "
            "(lspci -vv), NUMA placement, CPU governor and load, firmware and driver versions, memory "
            "(hugepages, memlock); compare with a good host",
    "rail": "check that NIC and its port only: ibstat / ethtool link speed and width, port error counters, "
            "the cable and transceivers to its switch, the switch port, the NIC's PCIe link and firmware",
    "link": "check the path between the two hosts on that rail: cables and transceivers, the switch ports "
            "on both ends and the switch-to-switch links they use (error counters, speed); reseat or "
            "replace, then rerun the pair",
    "fabric": "pairs that share no host fail on the same rail while each host passes with others: check the "
              "switch fabric of that rail (spine / inter-switch links, ECMP hashing, routing tables, PFC / ECN "
              "and buffer settings, congestion), not the hosts",
    "fleet": "every host of the rail is affected: check the expected bandwidth (link rate x efficiency), the "
             "test parameters and the rail's switch (configuration, firmware, PFC / MTU) before blaming hosts",
    "flaky": "a transient slowdown (it passed on retest): watch the error counters and history of these ports; "
             "rerun the check; a component that is flaky run after run is failing",
}
SWITCH_FIX = ("hosts that pass with each other fail with every host outside their group: check the switch they "
              "share on that rail (the leaf, its uplinks and their error counters, ECMP, PFC / ECN), not the hosts")
EVERY_RAIL_SWITCH = "on every rail (a switch the hosts share across the rails, or the spine between the rails' leaves)"
MANY_RAILS = 4
# a rail whose links spread more than this (MAD / median) is not one population: its failures are not its own
SHORTFALL_SPREAD = 0.05
SHORTFALL_FIX = ("the rail's links all run at about the same rate and that rate is at the pass line, so which of "
                 "them fail is chance: check what the whole rail shares (its switches' configuration and firmware, "
                 "PFC / ECN, MTU, congestion from other traffic) and whether the expected rate and efficiency fit "
                 "this hardware, not the hosts")
# a rail whose typical link passes and whose links spread wider than this (MAD / median) is noisy, not failing:
# twice the spread floor, so that a rail whose every link reads the same at its pass line stays the line's
NOISE_SPREAD = 0.01
# ... and its failed links are noise only within this fraction of its median: a NIC at 80 % is no noise
NOISE_BAND = 0.12
_NO_STAT = {"links": 0, "bad": 0, "bad_peers": [], "flaky": 0}


def pair_key(a, b):
    """The two hosts of a link, in natural order (a link is the same both ways)."""
    return tuple(sorted((a, b), key=natural_key))


def fmt(value):
    if value is None:
        return "n/a"
    return "%.3g" % value if abs(value) < 10 else "%.1f" % value


def majority(count, total, fraction, minimum):
    return count >= minimum and total > 0 and count > fraction * total


class LinkView(object):
    """What the steps decide from: ``link_table``'s links, partner results, devices and error blame
    (``hung``: the (rail, host) sides that never answered), ``host_rail_stats``' statistics,
    ``what`` the links are (for causes), whether ``higher`` values are better (bandwidth; not latency) and
    ``outlier_z``, the robust z beyond which a link is an outlier of its rail (``commcheck_outlier_z``)."""

    def __init__(self, links, partners, devices, blame, rail_stats, what="links", hung=None, higher=True,
                 outlier_z=robust.OUTLIER_Z):
        self.higher = higher
        self.outlier_z = float(outlier_z)
        self._outliers = None
        self._spreads = {}
        self.links = links
        self.partners = partners
        self.devices = devices
        self.blame = blame
        self.hung = set(hung or ())
        self.noisy = set()    # (rail, pair) of links whose failures are their rail's noise (noise_links)
        self.refused = set()  # (rail, host) clients refused while their servers listened
        self.stats = rail_stats
        self.what = what
        self.rails_of = {}
        self.hosts_of_rail = {}
        for (node, rail) in rail_stats:
            self.rails_of.setdefault(node, set()).add(rail)
            self.hosts_of_rail.setdefault(rail, set()).add(node)

    def stat(self, node, rail):
        return self.stats.get((node, rail)) or dict(_NO_STAT, bad_peers=[])

    def partner_view(self, node, rail):
        """(all, bad, good) partner retest results of ``node`` on ``rail``; one that passed while it measured
        as far below the rail's other links as its failures did (:meth:`outlying`) is neither."""
        results = self.partners.get((rail, node)) or []
        bad = [p for p in results if p["bad"]]
        good = [p for p in results if not p["bad"] and p["verdict"] not in ("skipped",)
                and not self.outlying(node, rail, p, p.get("value"))]
        return results, bad, good

    def outlying(self, node, rail, link, value):
        """Whether ``value`` (of ``link``: its ``expected`` rate), measured by ``node``, is a low outlier of the
        first-pass links of ``rail`` that ``node`` is not in (robust z below -``outlier_z``)."""
        if value is None:
            return False
        if (node, rail) not in self._spreads:
            levels, rated = rail_levels(self, rail)
            others = [value for pair, value in levels.items() if node not in pair]
            self._spreads[(node, rail)] = (robust.spread(others) if len(others) >= 3 else (None, None)) + (rated,)
        med, spread, rated = self._spreads[(node, rail)]
        return med is not None and robust.z_score(level(link, value, self.higher, rated), med, spread) < -self.outlier_z

    def sorted_links(self):
        """(key, link) items by rail, then hosts in natural order."""
        return sorted(self.links.items(), key=lambda item: (item[0][0], [natural_key(h) for h in item[0][1]]))

    def rail_devices(self, hosts, rail):
        return sorted(set(self.devices.get((h, rail)) for h in hosts) - set([None]))

    def host_devices(self, node, rails):
        return sorted(set(self.devices.get((node, r)) for r in rails) - set([None]))

    def cleared(self, node, rail):
        """True when ``node`` passed every partner retest on ``rail`` (and had at least one)."""
        _all, bad, good = self.partner_view(node, rail)
        return bool(good) and not bad

    def is_confirmed(self, node, rail, peers):
        """True when one of the links of ``node`` with ``peers`` on ``rail`` failed again on an as-is retest."""
        return any(self.links[(rail, pair_key(node, p))]["confirmed"] for p in peers)

    def peers_of(self, node, rail):
        return [p for (r, pair) in self.links for p in pair if r == rail and node in pair and p != node]

    def without(self, explained):
        """A view in which the links ``explained`` ((rail, pair) keys) by a component of their rail count as good
        for their hosts (they are no evidence against either)."""
        links = dict((key, dict(link, status="good", confirmed=False) if key in explained else link)
                     for key, link in self.links.items())
        view = LinkView(links, self.partners, self.devices, self.blame, host_rail_stats(links), self.what, self.hung,
                        self.higher, self.outlier_z)
        view.noisy = set(self.noisy)
        view.refused = set(self.refused)
        return view

    def outliers(self):
        """The (host, rail) pairs whose links measure far below the rail's others every time
        (:func:`outlying_hosts`)."""
        if self._outliers is None:
            self._outliers = outlying_hosts(self)
        return self._outliers


def host_rail_stats(links):
    """(host, rail) -> {links, bad, flaky, bad_peers, flaky_peers, values}."""
    stats = {}
    for (rail, pair), link in links.items():
        if link["status"] == "unknown":
            continue
        for node in pair:
            other = pair[1] if node == pair[0] else pair[0]
            entry = stats.setdefault((node, rail), {"links": 0, "bad": 0, "flaky": 0, "bad_peers": [],
                                                    "flaky_peers": []})
            entry["links"] += 1
            if link["status"] == "bad":
                entry["bad"] += 1
                entry["bad_peers"].append(other)
            elif link["status"] == "flaky":
                entry["flaky"] += 1
                entry["flaky_peers"].append(other)
    return stats


def component(kind, host, peer, rail, rails, devices, cause, evidence, links, confidence):
    return {
        "component": kind,
        "finding": FINDING_NAME[kind],
        "host": host,
        "peer": peer,
        "rail": rail,
        "rails": list(rails or []),
        "devices": list(devices or []),
        "confidence": confidence,
        "verdict": VERDICT_OF[kind],
        "cause": cause,
        "fix": FIX[kind],
        "evidence": list(evidence),
        "links": links,
    }


# --- suspects and fleet --------------------------------------------------------------

def majority_host_rails(view, fraction, minimum):
    """(host, rail) pairs with mostly bad links: more than ``fraction`` of them, and at least ``minimum``."""
    return set(key for key, st in view.stats.items() if majority(st["bad"], st["links"], fraction, minimum))


def suspect_host_rails(view, fraction, minimum):
    """The (host, rail) pairs whose bad links a majority rule blames on them, one at a time.

    The worst (host, rail) with a majority of bad links is named first; its links then explain
    the failures of its peers, so they no longer count for them. Without that, a slow host's
    peers also look slow where a second fault takes one more of their links (a slow host plus
    a slow link elsewhere would name the link's host too).

    A (host, rail) that passed every retest with a known-good partner is never a suspect: it is the victim
    of its bad peers (in a ring, the host between two bad hosts fails with both of its only peers). One whose
    links are far worse than its rail's others every time (:meth:`LinkView.outliers`) counts them all as bad
    once one of them failed, on any rail: it sits at the pass line, and noise alone passed the others.
    """
    neighbours = _rail_neighbours(view)
    order = sorted((key for key in neighbours if not view.cleared(*key)), key=lambda key: (key[1], natural_key(key[0])))
    suspects = set()
    while True:
        best, best_rank = None, None
        for key in order:
            if key in suspects:
                continue
            left = [(other, status) for other, status in neighbours[key] if (other, key[1]) not in suspects]
            bad = _bad_count(view, key, left)
            rank = (float(bad) / len(left) if left else 0.0, bad)
            if majority(bad, len(left), fraction, minimum) and (best_rank is None or rank > best_rank):
                best, best_rank = key, rank
        if best is None:
            return suspects
        suspects.add(best)


def _bad_count(view, key, links):
    """How many of the (peer, status) ``links`` of ``key`` (host, rail) count as bad: the bad ones; all of them when
    the host's links on that rail measure far below the others' every time (:meth:`LinkView.outliers`) and one
    of its links on such a rail failed (bad or flaky)."""
    node, rail = key
    if key in view.outliers() and _outlier_failed(view, node):
        return len(links)
    return sum(1 for _other, status in links if status == "bad")


def _outlier_failed(view, node):
    return any(node in pair and (node, rail) in view.outliers() and link["status"] in ("bad", "flaky")
               for (rail, pair), link in view.links.items())


def _rail_neighbours(view):
    """(host, rail) -> [(peer, link status)] of the links with a known status."""
    out = {}
    for (rail, pair), link in view.links.items():
        if link["status"] == "unknown":
            continue
        out.setdefault((pair[0], rail), []).append((pair[1], link["status"]))
        out.setdefault((pair[1], rail), []).append((pair[0], link["status"]))
    return out


def fleet_components(view, suspect, explaining=None):
    """A ``fleet`` component per rail whose every host (three at least) is suspect; and the set of those rails.

    ``explaining``: the suspects taken one at a time (:func:`suspect_host_rails`). A rail whose bad links
    they all explain without naming every host is not the fleet's: two bad hosts of four make every host
    of the rail mostly bad, yet the link between the other two passes."""
    out = []
    fleet_rails = set()
    for rail, nodes in sorted(view.hosts_of_rail.items()):
        if len(nodes) >= 3 and all((n, rail) in suspect for n in nodes) and \
                not explained_by_some_hosts(view, rail, explaining):
            fleet_rails.add(rail)
            out.append(fleet_component(view, rail, nodes))
    return one_for_every_rail(view, out), fleet_rails


def one_for_every_rail(view, fleets):
    """The ``fleet`` components of a check's rails, or one for all of them when every rail has one."""
    if len(fleets) >= 2 and set(c["rail"] for c in fleets) == set(view.hosts_of_rail):
        # one cause, not one per rail: what every rail shares is the expectation, the test or the whole fabric
        return [every_rail_component(view, sorted(fleets, key=lambda c: c["rail"]))]
    return fleets


def explained_by_some_hosts(view, rail, suspects, bad_pairs=None):
    """True when the ``suspects`` on ``rail`` leave out hosts of it, are in every bad link of it (of
    ``bad_pairs`` when given), and two of the hosts they leave out pass with each other. Without that good link
    nothing shows the others are fine: in a ring of four, two opposite hosts are in every link, whether they or
    the whole rail are slow."""
    if not suspects:
        return False
    named = set(n for (n, r) in suspects if r == rail)
    if not named or named >= view.hosts_of_rail.get(rail, set()):
        return False
    links = [(set(pair), link["status"]) for (r, pair), link in view.links.items() if r == rail]
    bad = [set(pair) for pair in bad_pairs] if bad_pairs is not None else \
        [pair for pair, status in links if status == "bad"]
    if not all(pair & named for pair in bad):
        return False
    return any(status == "good" and not pair & named for pair, status in links)


def fleet_component(view, rail, nodes):
    rail_links = [l for (r, _p), l in view.links.items() if r == rail and l["status"] != "unknown"]
    bad = [l for l in rail_links if l["status"] == "bad"]
    return component(
        "fleet", "*", None, rail, [rail], view.rail_devices(nodes, rail),
        "rail %s: every host has mostly bad links (%d of %d links bad)" % (rail, len(bad), len(rail_links)),
        ["rail %s: %d of %d links bad, on all %d hosts" % (rail, len(bad), len(rail_links), len(nodes))]
        + link_lines(bad, 6),
        {"total": len(rail_links), "bad": len(bad)}, "high" if len(nodes) >= 4 else "medium")


def every_rail_component(view, fleets):
    """The one ``fleet`` component of a check whose every rail is failing on every host or at its pass line
    (``fleets``: the rails' own components)."""
    rails = sorted(c["rail"] for c in fleets)
    total = sum(c["links"]["total"] for c in fleets)
    bad = sum(c["links"]["bad"] for c in fleets)
    nodes = set(n for r in rails for n in view.hosts_of_rail.get(r, ()))
    comp = component(
        "fleet", "*", None, None, rails, sorted(set(d for c in fleets for d in c["devices"])),
        "every rail fails across its hosts (%d of %d links bad, %d hosts, %d rails): one cause they all share" % (
            bad, total, len(nodes), len(rails)),
        [line for c in fleets for line in c["evidence"][:2]], {"total": total, "bad": bad}, "high")
    comp["fix"] = FIX["fleet"] + "; on every rail at once, the expectation and the test first"
    return comp


# --- a rail at its pass line --------------------------------------------------------------

def shortfall_components(view, suspects, skip=()):
    """A ``fleet`` component per rail (not in ``skip``) whose links are one population at the pass line
    (:func:`shortfall_links`); and a view in which the links it explains count as good for their hosts.

    Every link of such a rail measures about the same, a little above or below the line, so noise alone
    decides which fail, pass or pass on retest: named one by one they would be a scatter of NICs, links and
    flaky links where the one fault is what the whole rail shares. Its links far below the others (a bad NIC
    on that rail) are left to the other rules, and its hosts' other rails still tell a NIC from its host."""
    out = []
    covered = set()
    for rail in sorted(set(view.hosts_of_rail) - set(skip)):
        links = shortfall_links(view, rail, suspects)
        if links:
            out.append(shortfall_component(view, rail, links))
            covered.update((rail, link["hosts"]) for link in links)
    return out, (view.without(covered) if covered else view)


def without_noise(view, suspects):
    """The view in which the failed links of noisy rails (:func:`noise_links`) count as good, with them in its
    ``noisy``; the same view when no rail is noisy. First of all steps: noise is no evidence for any of them
    (by chance every host of a rail can have most of its links failed once)."""
    noisy = set((rail, link["hosts"]) for rail in sorted(view.hosts_of_rail)
                for link in noise_links(view, rail, suspects))
    if not noisy:
        return view
    view = view.without(noisy)
    view.noisy |= noisy
    return view


def noise_links(view, rail, suspects):
    """The failed links of a healthy but noisy ``rail``, else []: most of its measurements (first pass and as-is
    retests) passed, so its typical link meets the expectation; they spread more widely than
    :data:`NOISE_SPREAD` of their median (and less than twice :data:`SHORTFALL_SPREAD`: wider is no one
    population); and no few hosts explain its failed links, flaky ones too (:func:`_hosts_explain`). Only the
    links within :data:`NOISE_BAND` of the rail's median count (a few samples' spread is too uncertain to tell
    an outlier by): those below it, a slow NIC's, are left to the other rules.

    Then the failures are the low tail of a fabric that varies from test to test (congestion, other traffic,
    ECMP collisions), and a retest draws anew, so some are confirmed by chance: named one by one they would be a
    scatter of links, NICs and flaky hosts, and named together a failing fabric that most tests find fine. A
    rail whose links all read within a hair of each other at the line is the line's
    (:func:`shortfall_component`), whichever side most of them fell on."""
    levels = rail_levels(view, rail)[0]
    if len(levels) < 3:
        return []
    med = median(list(levels.values()))
    links = [view.links[(rail, pair)] for pair, lvl in levels.items() if lvl >= med - NOISE_BAND * abs(med)]
    rated = all(link.get("expected") for link in links)
    # the as-is retests are draws of the same links too
    measured = [(level(link, v, view.higher, rated), verdict) for link in links
                for v, verdict in zip(link["values"] + link["retest_values"], link["original"] + link["retests"])
                if v is not None]
    med, spread = robust.spread([lvl for lvl, _verdict in measured])
    passed = sum(1 for _lvl, verdict in measured if verdict == "pass")
    if not med or 2 * passed <= len(measured) or not NOISE_SPREAD < spread / abs(med) <= 2 * SHORTFALL_SPREAD:
        return []
    failed = [link for link in links if link["status"] in ("bad", "flaky")]
    if not failed or _hosts_explain(view, rail, suspects, [link["hosts"] for link in failed], levels):
        return []
    return failed


def shortfall_links(view, rail, suspects):
    """The bad and flaky links of ``rail`` that are typical of it, when the rail is at its pass line: its links
    are one tight population (relative spread at most :data:`SHORTFALL_SPREAD`, none far above it) on both
    sides of the line: two or more of its typical links failed (one of them for good), others passed (at least
    on a retest), and the failures are its low end; and no few hosts explain them (:func:`_hosts_explain`).
    A rail whose every link fails is :func:`fleet_components`' to judge, or its hosts'. Else []."""
    levels = rail_levels(view, rail)[0]
    if len(levels) < 3:
        return []
    med, spread = robust.spread(list(levels.values()))
    if not med or spread / abs(med) > SHORTFALL_SPREAD:
        return []
    z = dict((pair, robust.z_score(value, med, spread)) for pair, value in levels.items())
    if any(score > view.outlier_z for score in z.values()):
        return []
    typical = [view.links[(rail, pair)] for pair, score in sorted(z.items()) if score >= -view.outlier_z]
    failed = [link for link in typical if link["status"] in ("bad", "flaky")]
    bad = [link for link in failed if link["status"] == "bad"]
    passed = [levels[link["hosts"]] for link in typical if link["status"] in ("good", "flaky")]
    if not bad or len(failed) < 2 or not passed or \
            median([levels[link["hosts"]] for link in bad]) >= median(passed) or \
            _hosts_explain(view, rail, suspects, [link["hosts"] for link in bad], levels):
        return []
    return failed


def _hosts_explain(view, rail, suspects, bad_pairs, levels):
    """Whether the suspects of ``rail`` explain ``bad_pairs`` (:func:`explained_by_some_hosts`) and their links
    measure distinctly worse than those between the other hosts: beyond the others' spread (robust z below
    -``outlier_z``), or by more than :data:`SHORTFALL_SPREAD` of them (a NIC a little slow among noisy
    links). Suspects whose links measure as the others' were only unlucky."""
    if not explained_by_some_hosts(view, rail, suspects, bad_pairs):
        return False
    named = set(n for (n, r) in suspects if r == rail)
    theirs = median([levels[pair] for pair in levels if set(pair) & named])
    med, spread = robust.spread([levels[pair] for pair in levels if not set(pair) & named])
    if theirs is None or med is None:
        return True
    return robust.z_score(theirs, med, spread) < -view.outlier_z or med - theirs > SHORTFALL_SPREAD * abs(med)


def rail_levels(view, rail):
    """(pair -> the worst first-pass value of each link of ``rail`` as the rail compares them, rated) (:func:`level`);
    links whose test errored have none: their value, if any, is not what failed."""
    links = [(pair, link) for (r, pair), link in view.links.items()
             if r == rail and link["status"] != "unknown" and "error" not in link["original"]
             and any(v is not None for v in link["values"])]
    rated = all(link.get("expected") for _pair, link in links)
    return dict((pair, min(level(link, v, view.higher, rated) for v in link["values"] if v is not None))
                for pair, link in links), rated


def level(link, value, higher, rated):
    """A value of a link as its rail compares it: ``rated`` (every link of the rail has an expected rate), a
    fraction of the link's expected rate (a fleet of mixed NIC speeds); negated for latency, so that lower is
    worse either way."""
    if higher and rated and link.get("expected"):
        return value / float(link["expected"])
    return value if higher else -value


def outlying_hosts(view):
    """The (host, rail) pairs whose every link measured far below the rail's other links each time (first pass and
    as-is retests, :meth:`LinkView.outlying`), two links at least: the host is as slow (late) on that rail each
    time, though noise puts its links on either side of the pass line."""
    out = set()
    for rail in view.hosts_of_rail:
        levels = rail_levels(view, rail)[0]
        for node in view.hosts_of_rail[rail]:
            mine = [view.links[(rail, pair)] for pair in levels if node in pair]
            measured = [(link, v) for link in mine for v in link["values"] + link["retest_values"] if v is not None]
            if len(mine) >= 2 and all(view.outlying(node, rail, link, v) for link, v in measured):
                out.add((node, rail))
    return out


def shortfall_component(view, rail, links):
    rail_links = [l for (r, _p), l in view.sorted_links() if r == rail and l["status"] != "unknown"]
    bad = [link for link in links if link["status"] == "bad"]
    flaky = [link for link in links if link["status"] == "flaky"]
    values = [v for link in rail_links for v in link["values"] if v is not None]
    nodes = view.hosts_of_rail.get(rail, set())
    comp = component(
        "fleet", "*", None, rail, [rail], view.rail_devices(nodes, rail),
        "rail %s: its links all measure about the same (median %s) and that is at the pass line: %d of %d failed "
        "and %d more failed once, on %d hosts, as chance had it" % (
            rail, fmt(median(values)), len(bad), len(rail_links), len(flaky),
            len(set(h for link in links for h in link["hosts"]))),
        ["rail %s: %d bad and %d flaky of %d links, within the rail's usual spread" % (
            rail, len(bad), len(flaky), len(rail_links))] + link_lines(bad + flaky, 6),
        {"total": len(rail_links), "bad": len(bad)}, "medium")
    comp["fix"] = SHORTFALL_FIX
    return comp


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
        while group_of[node] != node:
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
    implicated on every rail it has (its host, not its NIC, failed to answer). Only then are
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
    for rail, pair, _link in bad:
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
               if r not in fleet_rails or sum(1 for pair in rail_levels(view, r)[0] if node not in pair) >= 3)


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
        "with two hosts only, either host or the path between them; a third host tells them apart" if alone
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
            lines.append("only two hosts on rail %s: the link cannot be told apart from either host" % rail)
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
    """One ``flaky`` component per flaky link not in ``grouped`` nor on ``fleet_rails``."""
    out = []
    for (rail, pair), link in view.sorted_links():
        if link["status"] != "flaky" or (rail, pair) in grouped or rail in fleet_rails:
            continue
        out.append(component(
            "flaky", pair[0], pair[1], rail, [rail], view.rail_devices(pair, rail),
            "link %s - %s (rail %s) failed once and passed on retest (transient, not failed)" % (pair[0], pair[1], rail),
            link_lines([link], 1), {"total": 1, "bad": 0, "flaky": 1}, "medium"))
    return out


# --- evidence and confidence ------------------------------------------------------------------

def link_lines(links, limit):
    """One line per link (at most ``limit``): its verdicts and values, and its as-is retests."""
    out = [_link_line(link) for link in links[:limit]]
    if len(links) > limit:
        out.append("... and %d more" % (len(links) - limit))
    return out


def _link_line(link):
    a, b = link["hosts"]
    values = [v for v in link["values"] if v is not None]
    text = "%s-%s rail %s: %s" % (a, b, link["rail"], ", ".join(link["original"]) or "no result")
    if values:
        text += " at %s" % "/".join(fmt(v) for v in values)
        if link.get("expected"):
            text += " (expected %s)" % fmt(link["expected"])
    if link["retests"]:
        again = sum(1 for v in link["retests"] if v != "pass")
        text += "; retest as is: %d of %d failed again" % (again, len(link["retests"]))
        rvalues = [v for v in link["retest_values"] if v is not None]
        if rvalues:
            text += " (%s)" % "/".join(fmt(v) for v in rvalues)
    return text


def confidence(confirmed, peers, via_partner, several_rails):
    """high / medium / low: one point each for a confirming retest, three peers or more, a failing partner
    retest, and a verdict that holds on several rails."""
    score = 0
    score += 1 if confirmed else 0
    score += 1 if peers >= 3 else 0
    score += 1 if via_partner else 0
    score += 1 if several_rails else 0
    return "high" if score >= 3 else ("medium" if score >= 2 else "low")


def link_confidence(link, cleared, hosts_on_rail):
    if hosts_on_rail <= 2:
        return "low"
    if link["confirmed"] and cleared:
        return "high"
    if link["confirmed"] or cleared:
        return "medium"
    return "low"
