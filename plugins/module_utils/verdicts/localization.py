# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Localization: which component is most likely at fault, with the evidence (pure).

Input is the per-rail link matrix of a pairwise check: rail k of host A
against rail k of host B, one observation per measurement (the records of
``pair_analysis``, or a synthetic matrix through :func:`observations_from_matrix`).
Retests (see ``retest``) are observations too: an *as is* retest repeats a
failing pair, a *partner* retest pairs one side of a failing pair with a host
that passed.

1. Link status per (rail, pair): ``good``; ``bad`` (failed, and failed again
   on every retest: ``confirmed``; or not retested); ``flaky`` (failed, then
   passed on a retest).
2. A host's rail is *suspect* when more than ``host_fraction`` of its links on
   that rail are bad (at least ``min_bad_links``). A host suspect on every
   rail it has is the culprit ``host``; suspect on some rails only, its
   ``rail`` (NIC, port, cable to its switch) is. When every host of a rail is
   suspect, the problem is the rail's ``fleet`` (switch plane, expectation).
3. A bad link no suspect explains is judged by its partner retests: a side
   that also fails with a known-good partner implicates that side's rail
   (or the whole host when that covers all of its rails); when both sides
   pass with known-good partners, the path between them is at fault: one such
   pair on a rail is a ``link`` (cable, transceiver, switch port); two or
   more such pairs on one rail that share no host point at ``fabric``
   routing (a shared switch link, ECMP, a spine).
4. Flaky links are never blamed as failures: they become ``flaky``
   components (grouped per host when most of a host's links are flaky).

Components come out most severe first; each has ``component``, ``host``,
``peer``, ``rail``, ``rails``, ``devices``, ``confidence``, ``cause``,
``fix``, ``evidence`` (list of strings), ``links`` counts and ``finding``
(the ``pair_analysis`` name: ``bad_node``, ``bad_nic``, ``bad_link``,
``fabric``, ``fleet``, ``flaky``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

BAD_VERDICTS = ("fail", "error")
COMPONENTS = ("fleet", "host", "rail", "fabric", "link", "flaky")
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
_RANK = dict((name, idx) for idx, name in enumerate(COMPONENTS))


class LocalizationError(ValueError):
    """Input that cannot be localized (reported as a clear error)."""


def natural_key(text):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", str(text))]


def _fmt(value):
    if value is None:
        return "n/a"
    return "%.3g" % value if abs(value) < 10 else "%.1f" % value


# --- observations --------------------------------------------------------------

def _rail_of(value):
    if value is None or value == "":
        return 0
    try:
        return int(value)
    except (TypeError, ValueError):
        raise LocalizationError("rail must be an integer, got %r" % (value,))


def observation(host, peer, rail=0, verdict="pass", value=None, expected=None, op=None, device=None,
                peer_device=None, retest=None, attempt=0, subject=None, origin=None, cause=None):
    """One measurement of rail ``rail`` between ``host`` and ``peer`` (plain dict)."""
    if not host or not peer or host == peer:
        raise LocalizationError("an observation needs two different hosts, got %r and %r" % (host, peer))
    if retest not in (None, "as_is", "partner"):
        raise LocalizationError("retest must be None, 'as_is' or 'partner', got %r" % (retest,))
    if retest == "partner" and subject not in (host, peer):
        raise LocalizationError("a partner retest names its subject (one of %s, %s), got %r" % (host, peer, subject))
    return {"host": host, "peer": peer, "rail": _rail_of(rail), "verdict": verdict, "value": value,
            "expected": expected, "op": op, "device": device, "peer_device": peer_device, "retest": retest,
            "attempt": attempt, "subject": subject, "origin": origin, "cause": cause}


def observations_from_records(records, kind="rdma_bw"):
    """Observations from results-contract records (pairs only) of one kind.

    Retest records (kind ``<kind>_retest``, or ``params.retest``) carry ``params.retest`` (true), ``params.retest_purpose``
    (``as_is`` | ``partner``), ``params.attempt``, ``params.subject`` and
    ``params.origin`` (``server-client`` of the failing pair).
    """
    out = []
    for rec in records or []:
        if not isinstance(rec, dict) or rec.get("kind") not in (kind, kind + "_retest") or not rec.get("peer"):
            continue
        if rec.get("verdict") == "skipped":
            continue
        params = rec.get("params") or {}
        metrics = rec.get("metrics") or {}
        retest = None
        if params.get("retest") or rec.get("kind") == kind + "_retest":
            retest = params.get("retest_purpose") or "as_is"
        value = metrics.get("lat_us") if params.get("metric") == "lat" else metrics.get("bw_gbps")
        out.append(observation(
            rec["host"], rec["peer"], params.get("rail"), rec.get("verdict"), value, metrics.get("expected_gbps"),
            params.get("op"), params.get("device"), params.get("peer_device"), retest, params.get("attempt") or 0,
            params.get("subject"), params.get("origin"), rec.get("cause")))
    return out


def observations_from_matrix(matrix, expected=None, min_fraction=0.9, devices=None):
    """Observations from a synthetic per-rail bandwidth matrix.

    ``matrix``: ``{"hosts": [...], "rails": {rail: grid}}`` where ``grid[i][j]``
    is the bandwidth of hosts[i] -> hosts[j] (None: not measured; only one of
    [i][j] / [j][i] is needed). A value below ``min_fraction`` x ``expected``
    fails. ``devices``: ``{rail: device name}`` (same on every host).
    """
    hosts = list(matrix.get("hosts") or [])
    out = []
    for rail, grid in sorted((matrix.get("rails") or {}).items(), key=lambda item: _rail_of(item[0])):
        if len(grid) != len(hosts) or any(len(row) != len(hosts) for row in grid):
            raise LocalizationError("rail %s: the grid must be %d x %d" % (rail, len(hosts), len(hosts)))
        seen = set()
        for i, host in enumerate(hosts):
            for j, peer in enumerate(hosts):
                value = grid[i][j]
                if i == j or value is None or frozenset((i, j)) in seen:
                    continue
                seen.add(frozenset((i, j)))
                verdict = "pass"
                if expected and value < float(expected) * float(min_fraction):
                    verdict = "fail"
                device = (devices or {}).get(rail)
                out.append(observation(host, peer, rail, verdict, value, expected, "write", device, device))
    return out


# --- link table ----------------------------------------------------------------

def _pair(a, b):
    return tuple(sorted((a, b), key=natural_key))


_SIDE_CAUSE = re.compile(r"^(?:server|client) side on (\S+?):")
_MISSING_CAUSE = re.compile(r"^no result from (\S+?)(?: and (\S+?))? \(")


def error_side(obs):
    """The host an ``error`` observation's cause names as the side that failed (pair_analysis wording), or None."""
    cause = obs.get("cause") or ""
    match = _SIDE_CAUSE.match(cause)
    if match and match.group(1) in (obs["host"], obs["peer"]):
        return [match.group(1)]
    match = _MISSING_CAUSE.match(cause)
    if match:
        return [h for h in match.groups() if h in (obs["host"], obs["peer"])] or None
    return None


def link_table(observations, bad_verdicts=BAD_VERDICTS):
    """(rail, (a, b)) -> link dict with status, and partner results per (rail, subject).

    An ``error`` whose cause names the side that failed (``server side on h4:
    ...``, ``no result from h4``) is also recorded as blame on that side.
    """
    links = {}
    partners = {}
    devices = {}
    blame = {}
    for obs in observations:
        rail = obs["rail"]
        for host, dev in ((obs["host"], obs.get("device")), (obs["peer"], obs.get("peer_device"))):
            if dev:
                devices.setdefault((host, rail), dev)
        if obs.get("retest") == "partner":
            subject = obs["subject"]
            partner = obs["peer"] if obs["host"] == subject else obs["host"]
            partners.setdefault((rail, subject), []).append({
                "partner": partner, "verdict": obs["verdict"], "value": obs.get("value"),
                "bad": obs["verdict"] in bad_verdicts, "origin": obs.get("origin"),
                "op": obs.get("op")})
            continue
        key = (rail, _pair(obs["host"], obs["peer"]))
        link = links.setdefault(key, {"rail": rail, "hosts": key[1], "original": [], "retests": [],
                                      "values": [], "retest_values": [], "expected": None, "ops": set(),
                                      "causes": []})
        if obs.get("expected") is not None:
            link["expected"] = obs["expected"]
        if obs.get("op"):
            link["ops"].add(obs["op"])
        if obs.get("retest") == "as_is":
            link["retests"].append(obs["verdict"])
            link["retest_values"].append(obs.get("value"))
        else:
            link["original"].append(obs["verdict"])
            link["values"].append(obs.get("value"))
            if obs["verdict"] in bad_verdicts and obs.get("cause"):
                link["causes"].append(obs["cause"])
            if obs["verdict"] == "error" and obs["verdict"] in bad_verdicts:
                for side in error_side(obs) or []:
                    blame.setdefault((rail, side), []).append(obs["cause"])
    for link in links.values():
        link["status"], link["confirmed"] = _status(link, bad_verdicts)
        link["ops"] = sorted(link["ops"])
    return links, partners, devices, blame


def _status(link, bad_verdicts):
    original = link["original"]
    retests = link["retests"]
    if any(v == "flaky" for v in original):
        return "flaky", False
    failed = any(v in bad_verdicts for v in original)
    if not failed:
        if original and all(v in ("skipped",) for v in original):
            return "unknown", False
        return "good", False
    if any(v not in bad_verdicts for v in retests):
        return "flaky", False
    return "bad", bool(retests)


# --- host-rail statistics ---------------------------------------------------------

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


def _majority(count, total, fraction, minimum):
    return count >= minimum and total > 0 and count > fraction * total


# --- the decision ---------------------------------------------------------------------

def localize(observations, bad_verdicts=BAD_VERDICTS, host_fraction=0.5, min_bad_links=2, label=None):
    """Components at fault, most severe first, with their evidence (see module doc).

    ``label``: what the links are (e.g. ``rdma_bw``), named in the causes.
    """
    what = "%s links" % label if label else "links"
    if not 0 < float(host_fraction) < 1:
        raise LocalizationError("host_fraction must be in (0, 1), got %r" % (host_fraction,))
    if int(min_bad_links) < 1:
        raise LocalizationError("min_bad_links must be at least 1, got %r" % (min_bad_links,))
    links, partners, devices, blame = link_table(observations, bad_verdicts)
    stats = host_rail_stats(links)
    rails_of = {}
    hosts_of_rail = {}
    for (node, rail) in stats:
        rails_of.setdefault(node, set()).add(rail)
        hosts_of_rail.setdefault(rail, set()).add(node)
    suspect = set(key for key, st in stats.items()
                  if _majority(st["bad"], st["links"], host_fraction, min_bad_links))
    components = []

    # fleet-wide rails: every host of the rail is suspect
    fleet_rails = set()
    for rail, nodes in sorted(hosts_of_rail.items()):
        if len(nodes) >= 3 and all((n, rail) in suspect for n in nodes):
            fleet_rails.add(rail)
            rail_links = [l for (r, _p), l in links.items() if r == rail and l["status"] != "unknown"]
            bad = [l for l in rail_links if l["status"] == "bad"]
            components.append(_component(
                "fleet", "*", None, rail, [rail], sorted(set(devices.get((n, rail)) for n in nodes) - set([None])),
                "rail %s: every host has mostly bad links (%d of %d links bad)" % (rail, len(bad), len(rail_links)),
                ["rail %s: %d of %d links bad, on all %d hosts" % (rail, len(bad), len(rail_links), len(nodes))]
                + _link_lines(bad, 6),
                {"total": len(rail_links), "bad": len(bad)}, "high" if len(nodes) >= 4 else "medium"))

    # partner evidence per (host, rail)
    def partner_view(node, rail):
        results = partners.get((rail, node)) or []
        bad = [p for p in results if p["bad"]]
        good = [p for p in results if not p["bad"] and p["verdict"] not in ("skipped",)]
        return results, bad, good

    implicated = dict(((n, r), "majority") for (n, r) in suspect if r not in fleet_rails)

    def explained_by_suspect(rail, pair):
        return any((n, rail) in implicated for n in pair)

    # unexplained bad links: partner retests decide which side (if any) is at fault
    open_links = []
    for (rail, pair), link in sorted(links.items(), key=lambda item: (item[0][0], [natural_key(h) for h in item[0][1]])):
        if link["status"] != "bad" or rail in fleet_rails or explained_by_suspect(rail, pair):
            continue
        blamed = []
        for node in pair:
            _all, bad, good = partner_view(node, rail)
            if bad and len(bad) >= len(good):
                blamed.append((node, "partner"))
            elif blame.get((rail, node)) and not blame.get((rail, pair[1] if node == pair[0] else pair[0])):
                blamed.append((node, "error"))
        for node, why in blamed:
            implicated.setdefault((node, rail), why)
        if not blamed:
            open_links.append((rail, pair, link))

    # hosts and rails
    for node in sorted(set(n for n, _r in implicated), key=natural_key):
        rails = sorted(r for (n, r) in implicated if n == node)
        all_rails = sorted(rails_of.get(node, set()) - fleet_rails)
        lines = []
        n_links = n_bad = 0
        confirmed = False
        via_partner = False
        for rail in sorted(rails_of.get(node, set())):
            st = stats.get((node, rail)) or {"links": 0, "bad": 0, "bad_peers": [], "flaky": 0}
            dev = devices.get((node, rail))
            tag = "rail %s%s" % (rail, " (%s)" % dev if dev else "")
            if rail in rails:
                n_links += st["links"]
                n_bad += st["bad"]
                for peer in st["bad_peers"]:
                    # one confirmed link of a host bad with most peers confirms it (retests may be sampled)
                    confirmed = confirmed or links[(rail, _pair(node, peer))]["confirmed"]
            lines.append("%s %s: %d of %d links bad%s" % (
                node, tag, st["bad"], st["links"],
                (" (with %s)" % ", ".join(sorted(st["bad_peers"], key=natural_key))) if st["bad_peers"] else ""))
            results, pbad, pgood = partner_view(node, rail)
            for res in results:
                lines.append("%s %s with known-good %s: %s %s" % (
                    node, tag, res["partner"], res["verdict"], _fmt(res["value"])))
            if rail in rails and implicated[(node, rail)] == "partner":
                via_partner = True
            if rail in rails and implicated[(node, rail)] == "error":
                lines.append("%s %s: its side of the test failed: %s" % (node, tag, blame[(rail, node)][0]))
        for rail in rails:
            st = stats.get((node, rail)) or {"bad_peers": []}
            lines += _link_lines([links[(rail, _pair(node, p))] for p in st["bad_peers"]], 4)
        rails_devices = sorted(set(devices.get((node, r)) for r in rails) - set([None]))
        peers = len(set(p for r in rails for p in _peers_of(links, node, r)))
        if rails == all_rails and all_rails:
            cause = "%s: %d of its %d %s are bad on %s" % (
                node, n_bad, n_links, what, "every rail" if len(all_rails) > 1 else "its only rail")
            if len(all_rails) == 1:
                lines.append("one rail only: the host and its NIC cannot be told apart")
            if via_partner:
                cause += " (and it fails with known-good partners)"
            if any(implicated[(node, r)] == "error" for r in rails):
                cause += " (its side of the tests failed)"
            components.append(_component(
                "host", node, None, None, rails, rails_devices, cause, lines, {"total": n_links, "bad": n_bad},
                _confidence(confirmed, peers, via_partner, len(all_rails) > 1)))
        else:
            good_rails = [r for r in all_rails if r not in rails]
            for rail in rails:
                st = stats.get((node, rail)) or {"links": 0, "bad": 0, "bad_peers": []}
                dev = devices.get((node, rail))
                cause = "%s rail %s%s: %d of its %d %s on that rail are bad, its other rail%s (%s) %s fine" % (
                    node, rail, " (%s)" % dev if dev else "", st["bad"], st["links"], what,
                    "s" if len(good_rails) > 1 else "", ", ".join(str(r) for r in good_rails),
                    "are" if len(good_rails) > 1 else "is")
                if implicated[(node, rail)] == "partner":
                    cause += "; it also fails with a known-good partner"
                elif implicated[(node, rail)] == "error":
                    cause += "; its side of the test failed"
                link_confirmed = any(links[(rail, _pair(node, p))]["confirmed"] for p in st["bad_peers"])
                components.append(_component(
                    "rail", node, None, rail, [rail], [dev] if dev else [], cause, lines,
                    {"total": st["links"], "bad": st["bad"]},
                    _confidence(link_confirmed, len(_peers_of(links, node, rail)),
                                implicated[(node, rail)] == "partner", True)))

    # links and fabric
    by_rail = {}
    for rail, pair, link in open_links:
        by_rail.setdefault(rail, []).append((pair, link))
    for rail in sorted(by_rail):
        items = by_rail[rail]
        disjoint = _has_disjoint(items)
        if disjoint:
            lines = ["rail %s: %d bad pairs, %s" % (rail, len(items), "; ".join(
                "%s-%s" % pair for pair, _l in items))]
            for pair, link in items:
                lines += _pair_lines(pair, rail, link, partners, stats, devices)
            components.append(_component(
                "fabric", "*", None, rail, [rail], sorted(set(devices.get((h, rail)) for p, _l in items for h in p)
                                                          - set([None])),
                "rail %s: %d bad pairs that share no host, while each host is fine with others: %s" % (
                    rail, len(items), ", ".join("%s-%s" % pair for pair, _l in items)),
                lines, {"total": sum(1 for (r, _p) in links if r == rail), "bad": len(items)},
                "medium" if all(l["confirmed"] for _p, l in items) else "low"))
            continue
        shared = {}
        for pair, _link in items:
            for node in pair:
                shared[node] = shared.get(node, 0) + 1
        for pair, link in items:
            a, b = pair
            lines = _pair_lines(pair, rail, link, partners, stats, devices)
            for node in pair:
                if shared[node] > 1:
                    lines.append("%s is in %d of the bad pairs on rail %s: check its port too" % (
                        node, shared[node], rail))
            cleared = all(partner_view(n, rail)[2] for n in pair)
            cause = "link %s - %s (rail %s) is bad while both hosts are good with their other peers" % (a, b, rail)
            if cleared:
                cause += " and with known-good partners"
            if len(hosts_of_rail.get(rail, ())) <= 2:
                lines.append("only two hosts on rail %s: the link cannot be told apart from either host" % rail)
            components.append(_component(
                "link", a, b, rail, [rail], sorted(set(devices.get((h, rail)) for h in pair) - set([None])),
                cause, lines, {"total": 1, "bad": 1},
                _link_confidence(link, cleared, len(hosts_of_rail.get(rail, ())))))

    # flaky
    components += _flaky_components(links, stats, devices, host_fraction, min_bad_links, rails_of)
    components.sort(key=lambda c: (_RANK[c["component"]], natural_key(c["host"]), natural_key(c["peer"] or ""),
                                   c["rail"] if c["rail"] is not None else -1))
    return _result(components, links, stats, devices, rails_of)


def _peers_of(links, node, rail):
    return [p for (r, pair) in links for p in pair if r == rail and node in pair and p != node]


def _has_disjoint(items):
    """True when two of the (pair, link) items share no host."""
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            if not set(items[i][0]) & set(items[j][0]):
                return True
    return False


def _pair_lines(pair, rail, link, partners, stats, devices):
    lines = _link_lines([link], 1)
    for node in pair:
        st = stats.get((node, rail)) or {"links": 0, "bad": 0}
        dev = devices.get((node, rail))
        lines.append("%s rail %s%s: %d of %d links bad" % (node, rail, " (%s)" % dev if dev else "", st["bad"],
                                                           st["links"]))
        for res in partners.get((rail, node)) or []:
            lines.append("%s rail %s with known-good %s: %s %s" % (node, rail, res["partner"], res["verdict"],
                                                                   _fmt(res["value"])))
    return lines


def _link_lines(links, limit):
    out = []
    for link in links[:limit]:
        a, b = link["hosts"]
        values = [v for v in link["values"] if v is not None]
        text = "%s-%s rail %s: %s" % (a, b, link["rail"], ", ".join(link["original"]) or "no result")
        if values:
            text += " at %s" % "/".join(_fmt(v) for v in values)
            if link.get("expected"):
                text += " (expected %s)" % _fmt(link["expected"])
        if link["retests"]:
            again = sum(1 for v in link["retests"] if v != "pass")
            text += "; retest as is: %d of %d failed again" % (again, len(link["retests"]))
            rvalues = [v for v in link["retest_values"] if v is not None]
            if rvalues:
                text += " (%s)" % "/".join(_fmt(v) for v in rvalues)
        out.append(text)
    if len(links) > limit:
        out.append("... and %d more" % (len(links) - limit))
    return out


def _confidence(confirmed, peers, via_partner, several_rails):
    score = 0
    score += 1 if confirmed else 0
    score += 1 if peers >= 3 else 0
    score += 1 if via_partner else 0
    score += 1 if several_rails else 0
    return "high" if score >= 3 else ("medium" if score >= 2 else "low")


def _link_confidence(link, cleared, hosts_on_rail):
    if hosts_on_rail <= 2:
        return "low"
    if link["confirmed"] and cleared:
        return "high"
    if link["confirmed"] or cleared:
        return "medium"
    return "low"


def _flaky_components(links, stats, devices, fraction, minimum, rails_of):
    out = []
    grouped = set()
    for node in sorted(rails_of, key=natural_key):
        flaky_rails = [r for r in sorted(rails_of[node])
                       if _majority(stats[(node, r)]["flaky"], stats[(node, r)]["links"], fraction, minimum)]
        if not flaky_rails:
            continue
        n_links = sum(stats[(node, r)]["links"] for r in flaky_rails)
        n_flaky = sum(stats[(node, r)]["flaky"] for r in flaky_rails)
        whole = flaky_rails == sorted(rails_of[node])
        lines = []
        for rail in flaky_rails:
            st = stats[(node, rail)]
            lines.append("%s rail %s: %d of %d links failed and then passed on retest" % (
                node, rail, st["flaky"], st["links"]))
            lines += _link_lines([links[(rail, _pair(node, p))] for p in st["flaky_peers"]], 4)
            for peer in st["flaky_peers"]:
                grouped.add((rail, _pair(node, peer)))
        where = node if whole else "%s rail %s" % (node, ", ".join(str(r) for r in flaky_rails))
        out.append(_component(
            "flaky", node, None, None if whole else flaky_rails[0], flaky_rails,
            sorted(set(devices.get((node, r)) for r in flaky_rails) - set([None])),
            "%s: %d of its %d links were slow once and passed on retest (transient, not failed)" % (
                where, n_flaky, n_links), lines, {"total": n_links, "bad": 0, "flaky": n_flaky}, "medium"))
    for (rail, pair), link in sorted(links.items(), key=lambda item: (item[0][0], [natural_key(h) for h in item[0][1]])):
        if link["status"] != "flaky" or (rail, pair) in grouped:
            continue
        out.append(_component(
            "flaky", pair[0], pair[1], rail, [rail], sorted(set(devices.get((h, rail)) for h in pair) - set([None])),
            "link %s - %s (rail %s) failed once and passed on retest (transient, not failed)" % (pair[0], pair[1], rail),
            _link_lines([link], 1), {"total": 1, "bad": 0, "flaky": 1}, "medium"))
    return out


def _component(component, host, peer, rail, rails, devices, cause, evidence, links, confidence):
    return {
        "component": component,
        "finding": FINDING_NAME[component],
        "host": host,
        "peer": peer,
        "rail": rail,
        "rails": list(rails or []),
        "devices": list(devices or []),
        "confidence": confidence,
        "verdict": VERDICT_OF[component],
        "cause": cause,
        "fix": FIX[component],
        "evidence": list(evidence),
        "links": links,
    }


def describe(component):
    """'h2 rail 1 (mlx5_1)', 'host h3', 'link h1 - h2 (rail 0)' ..."""
    kind = component["component"]
    devs = component.get("devices") or []
    if kind == "host":
        return "host %s" % component["host"]
    if kind == "rail":
        return "%s rail %s%s" % (component["host"], component["rail"], " (%s)" % devs[0] if devs else "")
    if kind == "link":
        return "link %s - %s (rail %s)" % (component["host"], component["peer"], component["rail"])
    if kind == "fabric":
        return "fabric of rail %s" % component["rail"]
    if kind == "fleet":
        return "every host of rail %s" % component["rail"]
    if component.get("peer"):
        return "flaky link %s - %s (rail %s)" % (component["host"], component["peer"], component["rail"])
    return "flaky %s" % component["host"]


def _result(components, links, stats, devices, rails_of):
    link_rows = []
    for (rail, pair), link in sorted(links.items(), key=lambda item: (item[0][0], [natural_key(h) for h in item[0][1]])):
        link_rows.append({"host": pair[0], "peer": pair[1], "rail": rail, "status": link["status"],
                          "confirmed": link["confirmed"], "verdicts": list(link["original"]),
                          "retests": list(link["retests"]), "values": list(link["values"]),
                          "expected": link["expected"]})
    hosts = {}
    for (node, rail), st in sorted(stats.items(), key=lambda item: (natural_key(item[0][0]), item[0][1])):
        hosts.setdefault(node, {})[str(rail)] = {"links": st["links"], "bad": st["bad"], "flaky": st["flaky"],
                                                 "device": devices.get((node, rail))}
    failing = [c for c in components if c["component"] != "flaky"]
    summary = {
        "verdict": "fail" if failing else ("flaky" if components else "pass"),
        "most_likely": describe(components[0]) if components else None,
        "hosts": sorted(set(c["host"] for c in components if c["component"] == "host"), key=natural_key),
        "rails": ["%s:%s" % (c["host"], (c["devices"] or [c["rail"]])[0]) for c in components
                  if c["component"] == "rail"],
        "links": ["%s-%s:%s" % (c["host"], c["peer"], c["rail"]) for c in components if c["component"] == "link"],
        "fabric": [c["rail"] for c in components if c["component"] == "fabric"],
        "fleet": [c["rail"] for c in components if c["component"] == "fleet"],
        "flaky": [describe(c) for c in components if c["component"] == "flaky"],
        "links_total": len(link_rows),
        "links_bad": sum(1 for l in link_rows if l["status"] == "bad"),
        "links_flaky": sum(1 for l in link_rows if l["status"] == "flaky"),
        "links_confirmed": sum(1 for l in link_rows if l["status"] == "bad" and l["confirmed"]),
    }
    return {"components": components, "primary": components[0] if components else None, "links": link_rows,
            "hosts": hosts, "summary": summary}


# --- records ---------------------------------------------------------------------------

def localize_records(records, kind="rdma_bw", bad_verdicts=BAD_VERDICTS, host_fraction=0.5, min_bad_links=2):
    """:func:`localize` over results-contract records of one kind (and its retests)."""
    return localize(observations_from_records(records, kind), bad_verdicts, host_fraction, min_bad_links, kind)


def finding_records(result, check="rdma_perf", kind="rdma_bw"):
    """One ``finding`` record per component (``params.finding`` as ``pair_analysis`` names them)."""
    out = []
    family = kind
    for comp in result.get("components") or []:
        params = {"check": check, "finding": comp["finding"], "component": comp["component"], "family": family,
                  "rail": comp["rail"], "rails": comp["rails"], "confidence": comp["confidence"]}
        if comp["devices"]:
            params["devices"] = comp["devices"]
        metrics = dict(("%s_links" % k if k != "total" else "links", v) for k, v in comp["links"].items())
        out.append({"kind": "finding", "host": comp["host"], "peer": comp["peer"], "params": params,
                    "metrics": metrics, "verdict": comp["verdict"], "cause": comp["cause"], "fix": comp["fix"],
                    "evidence": list(comp["evidence"])})
    return out


def summary_record(result, check="rdma_perf", kind="rdma_bw", retest_summary=None):
    """The ``localization`` summary record of a check (host ``*``)."""
    summary = result.get("summary") or {}
    primary = result.get("primary")
    metrics = {"links": summary.get("links_total", 0), "bad_links": summary.get("links_bad", 0),
               "flaky_links": summary.get("links_flaky", 0), "confirmed_links": summary.get("links_confirmed", 0),
               "components": len(result.get("components") or [])}
    evidence = ["%s (%s confidence): %s" % (describe(c), c["confidence"], c["cause"])
                for c in result.get("components") or []]
    if retest_summary:
        metrics["retests"] = retest_summary.get("retests", 0)
        metrics["retested_pairs"] = retest_summary.get("failing_pairs", 0)
        metrics["confirmed_pairs"] = len(retest_summary.get("confirmed") or [])
        metrics["flaky_pairs"] = len(retest_summary.get("flaky") or [])
        evidence.append("retests: %d run for %d failing pair(s); confirmed: %s; flaky: %s" % (
            metrics["retests"], metrics["retested_pairs"], ", ".join(retest_summary.get("confirmed") or []) or "none",
            ", ".join(retest_summary.get("flaky") or []) or "none"))
    cause = None
    fix = None
    if primary:
        cause = "most likely: %s; %s" % (describe(primary), primary["cause"])
        fix = primary["fix"]
    return {"kind": "localization", "host": "*", "peer": None, "params": {"check": check, "family": kind},
            "metrics": metrics, "verdict": "pass" if summary.get("verdict") == "pass" else summary.get("verdict"),
            "cause": cause, "fix": fix, "evidence": evidence}


def annotate_records(records, result, kind="rdma_bw"):
    """Copies of the pair records with the component that explains each bad one added to evidence
    (and its fix as the record's fix, for a failure)."""
    out = []
    comps = result.get("components") or []
    for rec in records or []:
        rec = dict(rec)
        if rec.get("kind") == kind and rec.get("peer") and rec.get("verdict") in BAD_VERDICTS + ("flaky",):
            rail = _rail_of((rec.get("params") or {}).get("rail"))
            pair = set((rec["host"], rec["peer"]))
            for comp in comps:
                if _explains(comp, pair, rail):
                    rec["evidence"] = list(rec.get("evidence") or []) + [
                        "localized: %s (%s, %s confidence)" % (describe(comp), comp["component"], comp["confidence"])]
                    if rec.get("verdict") in BAD_VERDICTS and comp["component"] != "flaky":
                        rec["fix"] = "%s: %s" % (describe(comp), comp["fix"])
                    break
        out.append(rec)
    return out


def _explains(comp, pair, rail):
    kind = comp["component"]
    if kind == "host":
        return comp["host"] in pair
    if kind in ("rail", "flaky") and comp.get("peer") is None:
        return comp["host"] in pair and (rail in comp["rails"] or not comp["rails"])
    if kind in ("link", "flaky"):
        return set((comp["host"], comp["peer"])) == pair and rail == comp["rail"]
    if kind in ("fabric", "fleet"):
        return rail == comp["rail"]
    return False


def attach_counter_evidence(result, deltas):
    """Add the port counter deltas of the run (``counters.deltas`` items, warning and worse) to the
    evidence of the components whose host / device they belong to. Returns the result (changed in place)."""
    for comp in result.get("components") or []:
        hosts = [h for h in (comp.get("host"), comp.get("peer")) if h and h != "*"]
        devices = set(comp.get("devices") or [])
        lines = []
        for item in deltas or []:
            if item.get("severity") == "info" or item.get("host") not in hosts:
                continue
            if comp["component"] != "host" and devices and item.get("device") not in devices:
                continue
            lines.append("%s %s/%s: %s +%s during the run (%s)" % (
                item["host"], item.get("device"), item.get("port"), item.get("counter"), item.get("delta"),
                item.get("meaning")))
        if lines:
            comp["evidence"] = list(comp["evidence"]) + lines
            comp["counter_evidence"] = len(lines)
    return result
