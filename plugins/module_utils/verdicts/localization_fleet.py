# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Localization's fleet steps (pure), on a :class:`localization_view.LinkView`:

- :func:`suspect_host_rails`: the (host, rail) pairs with mostly bad links,
  worst first, each one's links no longer counting against its peers;
- :func:`without_noise`: the failures of a healthy but noisy rail are no evidence;
- :func:`shortfall_components`: rails whose links are one tight population at the
  pass line, so that chance picks which fail (the rail's, not those links' hosts);
- :func:`fleet_components`: rails where every host has mostly bad links (and no few of
  them explain every bad link)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import stats as robust
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.stats import median
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.localization_view import (
    FIX, component, fmt, level, link_lines, majority, rail_levels)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

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


# An outlier counts all its links as bad from a failure on another of its rails only where that rail's links sit at
# most this many times as far below their rail: a host at the pass line fails a little on one rail and passes a
# little on another, while a NIC far below its rail (a broken one, a thousand times late) says nothing about a
# rail where the host measures a few percent behind a tight rail.
COMPARABLE_DEPTH = 4.0


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
    links are far worse than its rail's others every time (:meth:`LinkView.outliers`) counts them all as bad,
    those with suspects too, once one of them failed with a host that is not a suspect, on that rail or on another
    where it is an outlier about as deep (:data:`COMPARABLE_DEPTH`): it sits at the pass line, and noise alone
    passed the others. A failure with a suspect is that suspect's: an outlier
    whose only failures are with suspects is judged by its bad links like any host (a host a little late on
    every link, between passes, is no culprit because its neighbour is one), and at the same share of bad links
    the key with more of its links left measured bad is named first. One whose bad links all join suspects is one too when
    it fails with known-good partners (:func:`hidden_by_suspects`).
    """
    neighbours = _rail_neighbours(view)
    order = sorted((key for key in neighbours if not view.cleared(*key)), key=lambda key: (key[1], natural_key(key[0])))
    # A key counts a bad link, or all of them as an outlier; naming suspects only takes links away: a key with
    # neither never becomes a majority, and each round need not look at it (a 4,096-host ring: 32,768 keys, a few
    # candidates, one round per suspect).
    outliers = view.outliers()
    candidates = [key for key in order
                  if key in outliers or any(status == "bad" for _other, status in neighbours[key])]
    # each candidate's links left (not with a suspect) and bad links among them, updated as suspects are named:
    # a mesh's bad host is every key's neighbour, and counting every key's links again each round is quadratic
    left = dict((key, len(neighbours[key])) for key in candidates)
    measured = dict((key, sum(1 for _other, status in neighbours[key] if status == "bad")) for key in candidates)
    whole = dict((key, key in outliers and _outlier_failed(view, key[0], key[1])) for key in candidates)
    keys_of = {}
    for key in candidates:
        keys_of.setdefault(key[0], []).append(key)
    suspects = set()
    while True:
        best, best_rank = None, None
        for key in candidates:
            if key in suspects:
                continue
            count = len(neighbours[key]) if whole[key] else left[key]
            bad = count if whole[key] else measured[key]
            rank = (_share(bad, count), _share(measured[key], left[key]), measured[key], bad)
            if majority(bad, count, fraction, minimum) and (best_rank is None or rank > best_rank):
                best, best_rank = key, rank
        if best is None:
            return suspects | set(key for key in order if key not in suspects and
                                  hidden_by_suspects(view, key, neighbours[key], suspects, fraction, minimum))
        suspects.add(best)
        _without_suspect(view, neighbours, best, suspects, (left, measured, whole), keys_of)


def _share(part, count):
    return float(part) / count if count else 0.0


def _without_suspect(view, neighbours, suspect, suspects, counts, keys_of):
    """Take the links with ``suspect`` (host, rail) out of the counts of its peers on that rail (the keys in
    ``left``), and tell its peers' outliers whether they still failed with a host that is not a suspect.
    ``counts``: (links left, bad links among them, whether an outlier counts all its links) per key;
    ``keys_of``: host -> its keys."""
    left, measured, whole = counts
    host, rail = suspect
    for other in set(other for other, _status in neighbours[suspect]):
        key = (other, rail)
        if key not in left:
            continue
        gone = [status for peer, status in neighbours[key] if peer == host]
        left[key] -= len(gone)
        measured[key] -= sum(1 for status in gone if status == "bad")
        for each in keys_of[other]:
            if whole[each] and not _outlier_failed(view, other, each[1], suspects):
                whole[each] = False


def hidden_by_suspects(view, key, links, suspects, fraction, minimum):
    """Whether ``key`` (host, rail), with mostly bad links and every one of them with a suspect, fails with its
    known-good partners too (in most of those retests): a bad host between bad hosts, not their victim. Its links are explained by
    its neighbours, so only the partner retests, which do not depend on them, can name it."""
    node, rail = key
    results, bad, _good = view.partner_view(node, rail)
    bad_peers = [other for other, status in links if status == "bad"]
    return majority(len(bad_peers), len(links), fraction, minimum) and 2 * len(bad) > len(results) and \
        all((other, rail) in suspects for other in bad_peers)


def _outlier_failed(view, node, rail, suspects=()):
    """Whether a link of ``node`` on a rail where it is an outlier, at most COMPARABLE_DEPTH times as far below
    that rail's others as ``node``'s links on ``rail`` are below theirs, failed (bad or flaky) with a peer that is
    not one of the ``suspects`` on that rail (a failure with a suspect is the suspect's)."""
    deepest = COMPARABLE_DEPTH * view.outlier_depth(node, rail)
    return any(view.links[key]["status"] in ("bad", "flaky") and
               not any((peer, each) in suspects for peer in key[1] if peer != node)
               for (host, each) in view.outliers()
               if host == node and (each == rail or view.outlier_depth(node, each) <= deepest)
               for key in view.link_keys(node, each))


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
    the whole rail are slow.

    This is the control-pair rule: the rail's fabric (or its expected rate) is blamed only when the control pairs,
    non-suspects with each other, fail too; the retest planner measures them where the first pass has none
    (``retest_plan.separating_pairs``, purpose ``control``)."""
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


# the fewest hosts of a rail whose every pair fails for the fabric to be more than the likelier reading: with
# four, every host but one bad at once (three faults) fails every pair too, and the tests cannot tell them apart
SEPARABLE_FLEET = 5
OR_HOSTS = ", or %d of its %d hosts at once: not separable by these tests"


def fleet_component(view, rail, nodes):
    rail_links = [l for (r, _p), l in view.links.items() if r == rail and l["status"] != "unknown"]
    bad = [l for l in rail_links if l["status"] == "bad"]
    return component(
        "fleet", "*", None, rail, [rail], view.rail_devices(nodes, rail),
        "rail %s: every host has mostly bad links (%d of %d links bad)%s" % (
            rail, len(bad), len(rail_links), OR_HOSTS % (len(nodes) - 1, len(nodes)) if not_separable_lines(
                rail, nodes, bad, rail_links) else ""),
        ["rail %s: %d of %d links bad, on all %d hosts" % (rail, len(bad), len(rail_links), len(nodes))]
        + control_lines(rail, bad) + not_separable_lines(rail, nodes, bad, rail_links) + link_lines(bad, 6),
        {"total": len(rail_links), "bad": len(bad)}, "high" if len(nodes) >= SEPARABLE_FLEET else "medium")


def not_separable_lines(rail, nodes, bad, rail_links):
    """Where every link of a small rail failed: the reading the tests cannot rule out, all hosts but one bad."""
    if len(nodes) >= SEPARABLE_FLEET or len(bad) != len(rail_links):
        return []
    return ["rail %s: not separable from %d of its %d hosts bad at once, which would fail every pair too; a fifth "
            "host, or a host known to be good, tells them apart" % (rail, len(nodes) - 1, len(nodes))]


def control_lines(rail, bad):
    """The evidence that rules the hosts out: control pairs (hosts that no bad link needs, with each other) that
    fail too."""
    controls = ["%s-%s" % link["hosts"] for link in bad if link.get("purpose") == "control"]
    if not controls:
        return []
    return ["rail %s: the control pairs (hosts that no bad link needs, with each other) fail too: %s" % (
        rail, ", ".join(controls))]


def every_rail_component(view, fleets):
    """The one ``fleet`` component of a check whose every rail is failing on every host or at its pass line
    (``fleets``: the rails' own components)."""
    rails = sorted(c["rail"] for c in fleets)
    total = sum(c["links"]["total"] for c in fleets)
    bad = sum(c["links"]["bad"] for c in fleets)
    nodes = set(n for r in rails for n in view.hosts_of_rail.get(r, ()))
    comp = component(
        "fleet", "*", None, None, rails, sorted(set(d for c in fleets for d in c["devices"])),
        "every rail fails across its hosts (%d of %d links bad, %d hosts, %d rails): one cause they all share%s" % (
            bad, total, len(nodes), len(rails), OR_HOSTS % (len(nodes) - 1, len(nodes)) if any(
                "not separable" in line for c in fleets for line in c["evidence"]) else ""),
        [line for c in fleets for line in rail_summary(c)],
        {"total": total, "bad": bad}, "high" if all(c["confidence"] == "high" for c in fleets) else "medium")
    comp["fix"] = FIX["fleet"] + "; on every rail at once, the expectation and the test first"
    return comp


def rail_summary(comp):
    """A rail's lines in the every-rail component: its counts, its control pairs that failed too, what its tests
    could not separate, its first link (its own component's lines start ``rail N: ``, a link's with its hosts)."""
    lines = comp["evidence"][1:]
    return comp["evidence"][:1] + [line for line in lines if "control pairs" in line or "not separable" in line] + \
        [line for line in lines if not line.startswith("rail ")][:1]


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
