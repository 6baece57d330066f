# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Localization: which component is most likely at fault, with the evidence (pure).

Input is the per-rail link matrix of a pairwise check: rail k of host A
against rail k of host B, one observation per measurement (the records of
``pair_analysis``, or a synthetic matrix through :func:`observations_from_matrix`).
Retests (see ``retest``) are observations too: an *as is* retest repeats a
failing pair, a *partner* retest pairs one side of a failing pair with a host
that passed; *control* and *cross* retests (non-suspects with each other, suspects
with each other, on a rail where no host passed) are links of their own: a control
pair that passes is the good link that keeps the rail's fleet from the blame.

1. Link status per (rail, pair): ``good``; ``bad`` (a test of it failed in
   more of its measurements than it passed: failed again on a retest,
   ``confirmed``; or not retested); ``flaky`` (failed, then passed on as many
   retests as it failed).
2. A host's rail is *suspect* when more than ``host_fraction`` of its links on
   that rail are bad (at least ``min_bad_links``). A host suspect on every
   rail it has (with four rails or more, on most of them) is the culprit
   ``host``; suspect on some rails only, its ``rail`` (NIC, port, cable to
   its switch) is. When every host of a rail is suspect, and no few of them
   explain every bad link of it, the problem is the rail's ``fleet`` (switch
   plane, expectation; every rail's: one ``fleet`` with no rail). Suspects
   of a rail that pass with each other are hosts behind one switch: a
   ``fabric`` component, not their NICs. A host that passed with known-good
   partners is no suspect; one whose links on a rail are far below the
   rail's others every time counts them all as bad once one failed. A rail
   whose links are one tight population at the pass line is the rail's
   ``fleet`` too (chance picks which of them fail); hosts that split into
   groups passing among themselves and failing across, known-good partners
   too, are a ``fabric`` component (a spine in a ring).
3. A bad link no suspect explains is judged by its partner retests: a side
   that also fails with a known-good partner implicates that side's rail
   (or the whole host when that covers all of its rails); an ``error``
   implicates the side that failed to answer (``side_outcome``: its host
   when its process hung). The links left, whose hosts nothing implicates,
   are the paths': one such pair on a rail is a ``link`` (cable,
   transceiver, switch port); two or more such pairs on one rail that share
   no host point at ``fabric`` routing (a shared switch link, ECMP, a spine)
   only when every host of them passed with known-good partners; without
   those retests they stay ``link`` s, saying link or fabric is not
   separated. A pair that is a ``link`` on every rail of its hosts is one
   ``link`` with no rail.
   Where the topology says which leaf switch each host's rail hangs off (``localization_leaves``), a leaf
   whose every host fails with the hosts behind the other leaves while those pass with each other is named
   first: ``leaf`` (its hosts fail with each other too) or ``uplink`` (they pass with each other); what it
   explains no longer counts against the hosts.
4. Flaky links are never blamed as failures: they become ``flaky``
   components (grouped per host when most of a host's links are flaky; a
   host flaky on some rails only has the first of them as ``rail``).

Components come out most severe first; each has ``component``, ``host``,
``peer``, ``rail``, ``rails``, ``devices``, ``confidence``, ``cause``,
``fix``, ``evidence`` (list of strings), ``links`` counts and ``finding``
(the ``pair_analysis`` name: ``bad_node``, ``bad_nic``, ``bad_link``,
``fabric``, ``fleet``, ``flaky``).

Steps 2 to 4 are one function per component kind, in one module per component group:
``localization_fleet``, ``localization_fabric``, ``localization_hosts`` and ``localization_links``, over
``localization_view`` (the :class:`LinkView`, components, evidence); :func:`localize` runs them in that order
over one :func:`link_view`.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization_fabric as loc_fabric
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization_fleet as loc_fleet
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization_hosts as loc_hosts
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization_leaves as loc_leaves
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization_links as loc_links
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization_view as loc_view
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import stats as robust
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.localization_view import pair_key
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.localization_knock_on import late_partner_errors
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.retest import PURPOSES, fails_most
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.side_outcome import STUCK
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

BAD_VERDICTS = ("fail", "error")
COMPONENTS = ("fleet", "leaf", "uplink", "host", "rail", "fabric", "link", "flaky")
_RANK = dict((name, idx) for idx, name in enumerate(COMPONENTS))


class LocalizationError(ValueError):
    """Input that cannot be localized (reported as a clear error)."""


# --- observations --------------------------------------------------------------

def _rail_of(value):
    if value is None or value == "":
        return 0
    try:
        return int(value)
    except (TypeError, ValueError):
        raise LocalizationError("rail must be an integer, got %r" % (value,))


def observation(host, peer, rail=0, verdict="pass", value=None, expected=None, op=None, device=None,
                peer_device=None, retest=None, attempt=0, subject=None, origin=None, cause=None, failed=None):
    """One measurement of rail ``rail`` between ``host`` and ``peer`` (plain dict).

    ``failed``: for an ``error``, what the sides' outcomes say (``side_outcome``): ``(host or None, how)``,
    ``how`` being ``hung`` or ``error``; None when they are not known (the cause is read instead).
    """
    if not host or not peer or host == peer:
        raise LocalizationError("an observation needs two different hosts, got %r and %r" % (host, peer))
    if retest not in (None,) + PURPOSES:
        raise LocalizationError("retest must be None or one of %s, got %r" % (", ".join(PURPOSES), retest))
    if retest == "partner" and subject not in (host, peer):
        raise LocalizationError("a partner retest names its subject (one of %s, %s), got %r" % (host, peer, subject))
    return {"host": host, "peer": peer, "rail": _rail_of(rail), "verdict": verdict, "value": value,
            "expected": expected, "op": op, "device": device, "peer_device": peer_device, "retest": retest,
            "attempt": attempt, "subject": subject, "origin": origin, "cause": cause, "failed": failed}


def observations_from_records(records, kind="rdma_bw"):
    """Observations from results-contract records (pairs only) of one kind.

    Retest records (kind ``<kind>_retest``, or ``params.retest``) carry ``params.retest`` (true), ``params.retest_purpose``
    (``as_is`` | ``partner``), ``params.attempt``, ``params.subject`` and
    ``params.origin`` (``server-client`` of the failing pair).
    """
    out = []
    records = [rec for rec in records or [] if isinstance(rec, dict) and rec.get("peer")
               and rec.get("kind") in (kind, kind + "_retest") and rec.get("verdict") != "skipped"
               and not (rec.get("params") or {}).get("module_killed")]
    late = late_partner_errors(records)
    for index, rec in enumerate(records):
        if index in late:
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
            params.get("subject"), params.get("origin"), rec.get("cause"), _failed(params)))
    return out


def _failed(params):
    """(host or None, how, that side's outcome) from an error record's side outcomes; None for a record without
    them."""
    if "failed_side" not in params:
        return None
    side = params.get("failed_side")
    role = "server" if side is not None and side == params.get("server") else "client"
    outcome = params.get("%s_outcome" % role) if side is not None else None
    return side, params.get("failed_how"), outcome


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

_SIDE_CAUSE = re.compile(r"^(?:server|client) side on (\S+?):")
_MISSING_CAUSE = re.compile(r"^no result from (\S+?)(?: and (\S+?))? \(")


def error_side(obs):
    """The host of an ``error`` observation that failed to answer, as a list, or None.

    From the sides' outcomes when the record has them (``failed``); else from the cause
    (``pair_analysis`` wording: ``server side on h4: ...``, ``no result from h4``).
    """
    if obs.get("failed") is not None:
        host = obs["failed"][0]
        return [host] if host in (obs["host"], obs["peer"]) else None
    cause = obs.get("cause") or ""
    match = _SIDE_CAUSE.match(cause)
    if match and match.group(1) in (obs["host"], obs["peer"]):
        return [match.group(1)]
    match = _MISSING_CAUSE.match(cause)
    if match:
        return [h for h in match.groups() if h in (obs["host"], obs["peer"])] or None
    return None


def link_table(observations, bad_verdicts=BAD_VERDICTS):
    """(links: (rail, (a, b)) -> link dict with status, partners: (rail, subject) -> partner results,
    devices, blame: (rail, host) -> error causes, hung: the (rail, host) sides that never answered, refused: the
    (rail, host) clients refused while their servers listened).

    An ``error`` whose side outcomes (or cause) name the side that failed is also
    recorded as blame on that side (:func:`error_side`); in ``hung`` when that side's
    process never answered (a host matter, not its NIC's).
    """
    links = {}
    partners = {}
    devices = {}
    blame = {}
    hung = set()
    refused = set()
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
                "op": obs.get("op"), "expected": obs.get("expected")})
            continue
        key = (rail, pair_key(obs["host"], obs["peer"]))
        link = links.setdefault(key, {"rail": rail, "hosts": key[1], "original": [], "retests": [],
                                      "values": [], "retest_values": [], "expected": None, "ops": set(),
                                      "causes": [], "original_of": {}, "retests_of": {}})
        if obs.get("expected") is not None:
            link["expected"] = obs["expected"]
        if obs.get("op"):
            link["ops"].add(obs["op"])
        if obs.get("retest") in ("control", "cross"):
            link["purpose"] = obs["retest"]
        if obs.get("retest") == "as_is":
            link["retests"].append(obs["verdict"])
            link["retest_values"].append(obs.get("value"))
            link["retests_of"].setdefault(obs.get("op"), []).append(obs["verdict"])
        else:
            link["original"].append(obs["verdict"])
            link["values"].append(obs.get("value"))
            link["original_of"].setdefault(obs.get("op"), []).append(obs["verdict"])
            if obs["verdict"] in bad_verdicts and obs.get("cause"):
                link["causes"].append(obs["cause"])
            if obs["verdict"] == "error" and obs["verdict"] in bad_verdicts:
                failed = tuple(obs.get("failed") or ()) + (None, None, None)
                for side in error_side(obs) or []:
                    blame.setdefault((rail, side), []).append(obs["cause"])
                    if failed[1] == "hung":
                        hung.add((rail, side))
                        if failed[2] == STUCK:
                            link.setdefault("stuck", []).append(side)
                    elif failed[2] == "refused":
                        refused.add((rail, side))
    for link in links.values():
        link["status"], link["confirmed"] = _status(link, bad_verdicts)
        link["ops"] = sorted(link["ops"])
    return links, partners, devices, blame, hung, refused


def _status(link, bad_verdicts):
    """(status, confirmed) of a link from each test's first-pass verdict and as-is retests: ``bad`` when a test of
    it failed in more of its measurements than it passed (``retest.fails_most``; not retested: failed once), else
    ``flaky`` when a test failed and passed again, else ``good`` (``unknown`` when nothing ran)."""
    if link.get("stuck"):
        # a side's process stopped or wedged in the kernel on its own host: a retest's fresh process passing
        # does not make that a moment of the path
        return "bad", False
    statuses = [_test_status(original, link["retests_of"].get(test, []), bad_verdicts)
                for test, original in link["original_of"].items()]
    if "bad" in statuses:
        return "bad", any(status == "bad" and link["retests_of"].get(test) for test, status in
                          zip(link["original_of"], statuses))
    if "flaky" in statuses:
        return "flaky", False
    if link["original"] and all(v in ("skipped",) for v in link["original"]):
        return "unknown", False
    return "good", False


def _test_status(original, retests, bad_verdicts):
    """bad | flaky | good of one test of a link (its first-pass verdicts, as classified, and as-is retests)."""
    failed = [v for v in original if v in bad_verdicts]
    if failed:
        return "bad" if fails_most(failed + list(retests), bad_verdicts) else "flaky"
    return "flaky" if "flaky" in original else "good"


# --- the decision ---------------------------------------------------------------------

def link_view(observations, bad_verdicts=BAD_VERDICTS, what="links", higher=True, outlier_z=robust.OUTLIER_Z):
    """The :class:`localization_view.LinkView` the steps of :func:`localize` read (``higher``: the
    values are better higher, a bandwidth; not a latency; ``outlier_z``: a link's robust z beyond which it is an
    outlier of its rail)."""
    links, partners, devices, blame, hung, refused = link_table(observations, bad_verdicts)
    view = loc_view.LinkView(links, partners, devices, blame, loc_view.host_rail_stats(links), what, hung,
                             higher, outlier_z)
    view.refused = refused
    return view


def localize(observations, bad_verdicts=BAD_VERDICTS, host_fraction=0.5, min_bad_links=2, label=None,
             outlier_z=robust.OUTLIER_Z, topology=None):
    """Components at fault, most severe first, with their evidence (see module doc).

    ``label``: what the links are (e.g. ``rdma_bw``), named in the causes. ``outlier_z``: the robust z beyond
    which a link measures as an outlier of its rail (``commcheck_outlier_z``, the fleet threshold's too).
    ``topology``: host -> {rail or device: {leaf, port, source}} where known (``localization_leaves``): a leaf
    switch or its uplinks are named where the hosts behind one leaf fail together; without it, nothing changes.
    """
    what = "%s links" % label if label else "links"
    if not 0 < float(host_fraction) < 1:
        raise LocalizationError("host_fraction must be in (0, 1), got %r" % (host_fraction,))
    if int(min_bad_links) < 1:
        raise LocalizationError("min_bad_links must be at least 1, got %r" % (min_bad_links,))
    if not 0 < float(outlier_z) < float("inf"):
        raise LocalizationError("outlier_z must be a finite number above 0, got %r" % (outlier_z,))
    shown = link_view(observations, bad_verdicts, what, not str(label or "").endswith("_lat"), outlier_z)
    suspect = loc_fleet.suspect_host_rails(shown, host_fraction, min_bad_links)
    judged = loc_fleet.without_noise(shown, suspect)
    if judged is not shown:
        suspect = loc_fleet.suspect_host_rails(judged, host_fraction, min_bad_links)
    placed = loc_leaves.leaf_of_rails(judged, topology)
    leaves, explained = loc_leaves.leaf_components(judged, placed)
    if leaves:
        judged = loc_leaves.without_leaves(judged, leaves, explained)
        suspect = loc_fleet.suspect_host_rails(judged, host_fraction, min_bad_links)
    fleets, fleet_rails = loc_fleet.fleet_components(
        judged, loc_fleet.majority_host_rails(judged, host_fraction, min_bad_links), suspect)
    shortfalls, view = loc_fleet.shortfall_components(judged, suspect, fleet_rails)
    if shortfalls:
        suspect = loc_fleet.suspect_host_rails(view, host_fraction, min_bad_links)
    components = leaves + loc_fleet.one_for_every_rail(view, fleets + shortfalls)
    switches, switched = loc_fabric.switch_components(view, suspect, fleet_rails)
    cuts, cut = loc_fabric.cut_components(view, fleet_rails, switched)
    switched = set(switched) | cut
    components += loc_fabric.one_switch_for_every_rail(view, switches + cuts)
    implicated = dict(((n, r), "majority") for (n, r) in suspect if r not in fleet_rails and (n, r) not in switched)
    implicated.update(loc_fabric.outliers_of_fleet_rails(view, fleet_rails))
    implicated, open_links = loc_hosts.blame_sides(view, implicated, fleet_rails, switched)
    components += loc_hosts.node_components(view, implicated, fleet_rails)
    components += loc_links.path_components(view, open_links)
    components += loc_links.flaky_components(view, host_fraction, min_bad_links, fleet_rails)
    components.sort(key=severity)
    noisy = [{"rail": rail, "hosts": list(pair)} for rail, pair in sorted(view.noisy)]
    return dict(_result(components, shown), noisy=noisy, topology=loc_leaves.by_host(placed))


def severity(comp):
    return (_RANK[comp["component"]], natural_key(comp["host"]), natural_key(comp["peer"] or ""),
            comp["rail"] if comp["rail"] is not None else -1)


def describe(component):
    """'h2 rail 1 (mlx5_1)', 'host h3', 'link h1 - h2 (rail 0)' ..."""
    kind = component["component"]
    devs = component.get("devices") or []
    if kind == "host":
        return "host %s" % component["host"]
    if kind == "rail":
        return "%s rail %s%s" % (component["host"], component["rail"], " (%s)" % devs[0] if devs else "")
    if kind == "link":
        return "link %s - %s (%s)" % (component["host"], component["peer"], _rails_text(component))
    if kind == "fabric":
        return "fabric of rail %s" % component["rail"]
    if kind in ("leaf", "uplink"):
        return switch_text(component["switch"], component["rail"])
    if kind == "fleet":
        return "every host of %s" % _rails_text(component)
    if component.get("peer"):
        return "flaky link %s - %s (rail %s)" % (component["host"], component["peer"], component["rail"])
    return "flaky %s" % component["host"]


def switch_text(switch, rail):
    """'leaf switch leaf-3 (rail 1)', 'uplinks of leaf switch leaf-3 (rail 1)', 'uplinks between leaf switches
    leaf-1 and leaf-2 (rail 1)'."""
    leaves = switch["leaves"]
    if switch["part"] == "leaf":
        return "leaf switch %s (rail %s)" % (leaves[0], rail)
    if len(leaves) == 1:
        return "uplinks of leaf switch %s (rail %s)" % (leaves[0], rail)
    return "uplinks between leaf switches %s (rail %s)" % (" and ".join(leaves), rail)


def _rails_text(component):
    return "every rail" if component["rail"] is None else "rail %s" % component["rail"]


def _result(components, view):
    link_rows = _link_rows(view)
    return {"components": components, "primary": components[0] if components else None, "links": link_rows,
            "hosts": _host_rows(view), "summary": summary_of(components, link_rows)}


def _link_rows(view):
    return [{"host": pair[0], "peer": pair[1], "rail": rail, "status": link["status"],
             "confirmed": link["confirmed"], "verdicts": list(link["original"]), "retests": list(link["retests"]),
             "values": list(link["values"]), "expected": link["expected"]}
            for (rail, pair), link in view.sorted_links()]


def _host_rows(view):
    """host -> rail (as text) -> {links, bad, flaky, device}."""
    hosts = {}
    for (node, rail), st in sorted(view.stats.items(), key=lambda item: (natural_key(item[0][0]), item[0][1])):
        hosts.setdefault(node, {})[str(rail)] = {"links": st["links"], "bad": st["bad"], "flaky": st["flaky"],
                                                 "device": view.devices.get((node, rail))}
    return hosts


def summary_of(components, link_rows):
    def of(kind):
        return [c for c in components if c["component"] == kind]

    failing = [c for c in components if c["component"] != "flaky"]
    return {
        "verdict": "fail" if failing else ("flaky" if components else "pass"),
        "most_likely": describe(components[0]) if components else None,
        "hosts": sorted(set(c["host"] for c in of("host")), key=natural_key),
        "rails": ["%s:%s" % (c["host"], (c["devices"] or [c["rail"]])[0]) for c in of("rail")],
        "links": [("%s-%s:%s" % (c["host"], c["peer"], c["rail"])) if c["rail"] is not None
                  else "%s-%s" % (c["host"], c["peer"]) for c in of("link")],
        "fabric": [c["rail"] for c in of("fabric")],
        "switches": [describe(c) for c in components if c["component"] in ("leaf", "uplink")],
        "fleet": [c["rail"] for c in of("fleet")],
        "flaky": [describe(c) for c in of("flaky")],
        "links_total": len(link_rows),
        "links_bad": sum(1 for l in link_rows if l["status"] == "bad"),
        "links_flaky": sum(1 for l in link_rows if l["status"] == "flaky"),
        "links_confirmed": sum(1 for l in link_rows if l["status"] == "bad" and l["confirmed"]),
    }


# --- records ---------------------------------------------------------------------------

def localize_records(records, kind="rdma_bw", bad_verdicts=BAD_VERDICTS, host_fraction=0.5, min_bad_links=2,
                     outlier_z=robust.OUTLIER_Z, topology=None):
    """:func:`localize` over results-contract records of one kind (and its retests)."""
    return localize(observations_from_records(records, kind), bad_verdicts, host_fraction, min_bad_links, kind,
                    outlier_z, topology)


def finding_records(result, check="rdma_perf", kind="rdma_bw"):
    """One ``finding`` record per component (``params.finding`` as ``pair_analysis`` names them)."""
    out = []
    family = kind
    for comp in result.get("components") or []:
        params = {"check": check, "finding": comp["finding"], "component": comp["component"], "family": family,
                  "rail": comp["rail"], "rails": comp["rails"], "confidence": comp["confidence"]}
        if comp["devices"]:
            params["devices"] = comp["devices"]
        if comp.get("switch"):
            params["switch"] = comp["switch"]
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
    params = {"check": check, "family": kind}
    if result.get("topology"):
        # the leaf of each host's rail, for the report (culprits name the leaf behind a host or NIC)
        params["topology"] = result["topology"]
    return {"kind": "localization", "host": "*", "peer": None, "params": params, "metrics": metrics,
            "verdict": "pass" if summary.get("verdict") == "pass" else summary.get("verdict"),
            "cause": cause, "fix": fix, "evidence": evidence}


def annotate_records(records, result, kind="rdma_bw"):
    """Copies of the pair records with the component that explains each bad one added to evidence
    (and its fix as the record's fix, for a failure)."""
    out = []
    comps = result.get("components") or []
    noisy = set((item["rail"], pair_key(*item["hosts"])) for item in result.get("noisy") or [])
    for rec in records or []:
        rec = dict(rec)
        rail = _rail_of((rec.get("params") or {}).get("rail"))
        if rec.get("kind") in (kind, kind + "_retest") and rec.get("peer") and measures_noisy(rec, rail, noisy):
            out.append(within_noise(rec, rail))
            continue
        if rec.get("kind") == kind and rec.get("peer") and rec.get("verdict") in BAD_VERDICTS + ("flaky",):
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


def measures_noisy(rec, rail, noisy):
    """Whether a pair record measures one of the ``noisy`` links ((rail, pair)): its own pair is one, or it is a
    retest with a partner of one (``params.origins`` / ``origin``: 'server-client', host names may hold '-')."""
    if (rail, pair_key(rec["host"], rec["peer"])) in noisy:
        return True
    params = rec.get("params") or {}
    origins = set(params.get("origins") or [params.get("origin")])
    return any(r == rail and ("%s-%s" % pair in origins or "%s-%s" % pair[::-1] in origins) for r, pair in noisy)


def within_noise(rec, rail):
    """A failing pair record of a noisy rail (``localization_fleet.noise_links``) as a warning: below
    the line this time, like others of its rail at random, while most of the rail's tests pass: no component
    is at fault, the fabric varies (a ``fail`` would fail the check for what no one can repair)."""
    if rec.get("verdict") not in ("fail", "flaky"):
        return rec
    return dict(rec, verdict="warn", cause="%s; within the noise of rail %s: most of its tests pass and its "
                "failures are spread over its links at random" % (rec.get("cause") or rec["verdict"], rail),
                fix="watch the fabric of rail %s (congestion, other traffic, ECMP, PFC / ECN): its rates vary from "
                "test to test" % rail)


def _explains(comp, pair, rail):
    kind = comp["component"]
    if kind == "host":
        return comp["host"] in pair
    if kind in ("rail", "flaky") and comp.get("peer") is None:
        return comp["host"] in pair and (rail in comp["rails"] or not comp["rails"])
    if kind in ("link", "flaky"):
        return set((comp["host"], comp["peer"])) == pair and rail in _rails_of(comp)
    if kind in ("fabric", "fleet"):
        return rail in _rails_of(comp)
    if kind in ("leaf", "uplink"):
        return rail == comp["rail"] and loc_leaves.through(comp["switch"], *sorted(pair))
    return False


def _rails_of(comp):
    return comp["rails"] if comp["rail"] is None else [comp["rail"]]


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
