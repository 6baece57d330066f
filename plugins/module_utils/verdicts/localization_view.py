# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Localization's view of a check (pure): the link table with its statistics per host and rail
(:class:`LinkView`), the component a step names (:func:`component`), and the evidence lines and confidence
of every component kind.

``localization.localize`` is the driver; one module per component group holds the steps:
``localization_fleet`` (suspects, rails where every host is bad, rails at their pass line, noise),
``localization_fabric`` (a switch some hosts share, a cut between groups of hosts),
``localization_hosts`` (which side of a bad link, host and rail components) and
``localization_links`` (links, fabric from links that share no host, flaky components)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import stats as robust
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

# a leaf switch and its uplinks are the fabric's findings (named by the component's ``switch``)
FINDING_NAME = {"host": "bad_node", "rail": "bad_nic", "link": "bad_link", "fabric": "fabric",
                "fleet": "fleet", "flaky": "flaky", "leaf": "fabric", "uplink": "fabric"}
VERDICT_OF = {"host": "fail", "rail": "fail", "link": "fail", "fabric": "fail", "fleet": "fail", "flaky": "flaky",
              "leaf": "fail", "uplink": "fail"}
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
    "leaf": "check the leaf switch the hosts share on that rail (error and discard counters, buffers, PFC / ECN, "
            "firmware, power); replace it or move its hosts to a spare",
    "uplink": "check the leaf switch's uplinks to the spines (links down, error counters, optics, ECMP), not the "
              "hosts",
    "flaky": "a transient slowdown (it passed on retest): watch the error counters and history of these ports; "
             "rerun the check; a component that is flaky run after run is failing",
}
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
        self._rails = {}
        self._sides = None
        self._sorted = None
        self.links = links
        self.partners = partners
        self.devices = devices
        self.blame = blame
        self.hung = set(hung or ())
        self.noisy = set()    # (rail, pair) of links whose failures are their rail's noise (noise_links)
        self.refused = set()  # (rail, host) clients refused while their servers listened
        self.leaf_statuses = {}  # rail -> host -> peer -> good | bad (localization_leaves)
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
        levels = self.levels(rail)
        value = level(link, value, self.higher, levels.rated)
        if (node, rail) not in self._spreads and not levels.may_be_low_outlier(node, value, self.outlier_z):
            return False
        med, spread = self._spread_without(node, rail)
        return med is not None and robust.z_score(value, med, spread) < -self.outlier_z

    def _spread_without(self, node, rail):
        """(median, spread) of the levels of the links of ``rail`` that ``node`` is not in, computed once."""
        if (node, rail) not in self._spreads:
            self._spreads[(node, rail)] = self.levels(rail).spread_without(node)
        return self._spreads[(node, rail)]

    def outlier_depth(self, node, rail):
        """How far below the others of ``rail`` the links of ``node`` measure: the distance of their median level
        from the median of the links ``node`` is not in, as a fraction of the latter (0.0 when not told)."""
        levels = self.levels(rail)
        mine = [levels.by_pair[pair] for pair in levels.pairs_of.get(node, ())]
        med, _spread = self._spread_without(node, rail)
        if not mine or med is None:
            return 0.0
        return robust.relative_distance(robust.median(mine), med)

    def levels(self, rail):
        """The :class:`RailLevels` of ``rail``, built once (the links of a view do not change)."""
        if rail not in self._rails:
            self._rails[rail] = RailLevels(self, rail)
        return self._rails[rail]

    def link_keys(self, node, rail):
        """The (rail, pair) keys of the links of ``node`` on ``rail``, in the table's order."""
        if self._sides is None:
            self._sides = {}
            for key in self.links:
                for side in key[1]:
                    self._sides.setdefault((side, key[0]), []).append(key)
        return self._sides.get((node, rail), [])

    def sorted_links(self):
        """(key, link) items by rail, then hosts in natural order (sorted once: the links of a view do not change)."""
        if self._sorted is None:
            self._sorted = sorted(self.links.items(), key=lambda item: (item[0][0], [natural_key(h) for h in item[0][1]]))
        return list(self._sorted)

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
        return [p for (_r, pair) in self.link_keys(node, rail) for p in pair if p != node]

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


def rail_levels(view, rail):
    """(pair -> the worst first-pass value of each link of ``rail`` as the rail compares them, rated) (:func:`level`);
    links whose test errored have none: their value, if any, is not what failed."""
    levels = view.levels(rail)
    return levels.by_pair, levels.rated


class RailLevels(object):
    """:func:`rail_levels` of one rail with what each host's outlier test needs, built once per view and rail:
    ``by_pair`` and ``rated`` as :func:`rail_levels` gives them, ``pairs_of`` each host's pairs among them, and the
    levels sorted with their deviations from their median (:func:`stats.spread_bounds`)."""

    def __init__(self, view, rail):
        self.by_pair, self.rated = _measure_rail(view, rail)
        self.pairs_of = {}
        for pair in self.by_pair:
            for node in pair:
                self.pairs_of.setdefault(node, []).append(pair)
        self.ordered = sorted(self.by_pair.values())
        self.center = robust.median(self.ordered)
        self.deviations = sorted(abs(v - self.center) for v in self.ordered) if self.ordered else []

    def others(self, node):
        """How many links of the rail ``node`` is not in."""
        return len(self.by_pair) - len(self.pairs_of.get(node, ()))

    def may_be_low_outlier(self, node, value, outlier_z):
        """False when ``value`` cannot be a low outlier of the links ``node`` is not in (too few of them, or too
        near their median whichever they are); True when :meth:`spread_without` must tell."""
        if self.others(node) < 3:
            return False
        bounds = robust.spread_bounds(self.ordered, self.deviations, self.center, len(self.pairs_of.get(node, ())))
        return robust.may_be_low_outlier(value, bounds, outlier_z)

    def spread_without(self, node):
        """(median, spread) of the levels of the links ``node`` is not in; (None, None) for fewer than three."""
        mine = set(self.pairs_of.get(node, ()))
        others = [value for pair, value in self.by_pair.items() if pair not in mine]
        return robust.spread(others) if len(others) >= 3 else (None, None)


def _measure_rail(view, rail):
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
        levels = view.levels(rail)
        for node in view.hosts_of_rail[rail]:
            mine = [view.links[(rail, pair)] for pair in levels.pairs_of.get(node, ())]
            measured = [(link, v) for link in mine for v in link["values"] + link["retest_values"] if v is not None]
            if len(mine) >= 2 and all(view.outlying(node, rail, link, v) for link, v in measured):
                out.add((node, rail))
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
