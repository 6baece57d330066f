# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a host's loopback tests (its RDMA ports against each other, ``planning/loopback.py``) tell localization.

A loopback pair is one host's two ports: it exercises the host (PCIe, memory, driver, firmware) and both NICs,
but no other host. So:

- a host the links between hosts name as ``host`` whose every loopback pair passes is not the host: what its
  NICs do with each other works, what fails is what only the links to other hosts cross (its NICs' ports, cables,
  switch ports, or the fabric). It becomes one ``rail`` component per rail it was named on, saying so;
- a host whose loopback pairs fail keeps (or gets) the blame: one ``rail`` where a single rail is in every failing
  loopback pair and in no passing one (the other NIC passes with a third), else the ``host`` (with two rails and
  one pair, the host and either NIC cannot be told apart, which its evidence says).

:func:`localize_records` is ``localization.localize_records`` with this applied: the loopback records are taken
out of the observations (a link between hosts needs two of them) and judged here.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.loopback import is_loopback
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization as loc
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import stats as robust
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.localization_view import component

NOT_HOST = ("%s's NICs pass with each other (%s) but its links to other hosts fail on %s: not the host (its PCIe, "
            "memory and driver carry the loopback) but what only those links cross: %s")
PAST_NIC = "that NIC's port, cable or switch port, or the fabric behind it"
LOOP_HOST = ("%s's RDMA ports fail with each other on the host itself (%s): the host (PCIe, NUMA, driver, "
             "firmware) or a NIC")
LOOP_RAIL = ("%s rail %s%s fails its loopback with the host's other ports (%s) while they pass with each other (%s): "
             "that NIC or port")
ALONE = "two RDMA ports only: the host and either NIC cannot be told apart by a loopback"


def loop_links(records, kind="rdma_bw"):
    """host -> its loopback pairs of ``kind``: ``rails`` [server's, client's], ``devices``, ``bad`` (failed or
    errored), ``value`` and ``verdict``; skipped ones left out."""
    out = {}
    for rec in records or []:
        if not is_loopback(rec) or rec.get("kind") != kind or rec.get("verdict") in ("skipped", None):
            continue
        params = rec.get("params") or {}
        rails = list(params.get("rails") or [params.get("rail"), None])
        metrics = rec.get("metrics") or {}
        out.setdefault(rec["host"], []).append({
            "rails": rails, "devices": [params.get("device"), params.get("peer_device")],
            "bad": rec.get("verdict") in loc.BAD_VERDICTS, "verdict": rec.get("verdict"),
            "value": metrics.get("lat_us") if params.get("metric") == "lat" else metrics.get("bw_gbps")})
    return out


def _text(link):
    return "rail %s (%s) - rail %s (%s): %s%s" % (
        link["rails"][0], link["devices"][0], link["rails"][1], link["devices"][1], link["verdict"],
        "" if link["value"] is None else " %s" % link["value"])


def _lines(host, links):
    return ["%s loopback %s" % (host, _text(link)) for link in links]


def _device(links, rail):
    for link in links:
        for num, dev in zip(link["rails"], link["devices"]):
            if num == rail and dev:
                return dev
    return None


def _not_host(comp, links):
    """The ``rail`` components that replace a ``host`` component whose loopback pairs all pass."""
    rails = comp["rails"] or sorted(set(r for link in links for r in link["rails"] if r is not None))
    out = []
    for rail in rails:
        dev = _device(links, rail)
        cause = NOT_HOST % (comp["host"], ", ".join(_text(link) for link in links), "rail %s%s" % (
            rail, " (%s)" % dev if dev else ""), PAST_NIC)
        out.append(component("rail", comp["host"], None, rail, [rail], [dev] if dev else [], cause,
                             comp["evidence"] + _lines(comp["host"], links), comp["links"], comp["confidence"]))
    return out


def _blamed(host, links):
    """The component the failing loopback pairs of ``host`` name: one rail, else the host."""
    bad = [link for link in links if link["bad"]]
    good_rails = set(r for link in links if not link["bad"] for r in link["rails"])
    common = set(bad[0]["rails"])
    for link in bad[1:]:
        common &= set(link["rails"])
    alone = sorted(r for r in common - good_rails if r is not None)
    lines = _lines(host, links)
    counts = {"total": len(links), "bad": len(bad)}
    if len(alone) == 1 and good_rails:
        rail = alone[0]
        dev = _device(links, rail)
        cause = LOOP_RAIL % (host, rail, " (%s)" % dev if dev else "", ", ".join(_text(l) for l in bad),
                             ", ".join(_text(l) for l in links if not l["bad"]))
        return component("rail", host, None, rail, [rail], [dev] if dev else [], cause, lines, counts, "medium")
    rails = sorted(set(r for link in links for r in link["rails"] if r is not None))
    if len(rails) <= 2:
        lines.append(ALONE)
    devices = [_device(links, rail) for rail in rails]
    return component("host", host, None, None, rails, [d for d in devices if d],
                     LOOP_HOST % (host, ", ".join(_text(l) for l in bad)), lines, counts,
                     "low" if len(rails) <= 2 else "medium")


def revise(components, loops):
    """``components`` (localization's, from the links between hosts) with what ``loops`` (:func:`loop_links`)
    tell: a ``host`` whose loopback passes becomes its rails; failing loopback pairs keep or add the blame."""
    out = []
    named = set()
    for comp in components:
        links = loops.get(comp["host"]) if comp["component"] in ("host", "rail") and not comp.get("peer") else None
        if not links:
            out.append(comp)
            continue
        named.add(comp["host"])
        if comp["component"] == "host" and not any(link["bad"] for link in links):
            out += _not_host(comp, links)
        else:
            out.append(dict(comp, evidence=list(comp["evidence"]) + _lines(comp["host"], links)))
    for host in sorted(loops, key=natural_key):
        if host not in named and any(link["bad"] for link in loops[host]):
            out.append(_blamed(host, loops[host]))
    return sorted(out, key=loc.severity)


def localize_records(records, kind="rdma_bw", bad_verdicts=loc.BAD_VERDICTS, host_fraction=0.5, min_bad_links=2,
                     outlier_z=robust.OUTLIER_Z, topology=None):
    """``localization.localize_records`` with the loopback pairs of ``records`` judged by :func:`revise`; the
    summary counts them among its links (``links_total``, ``links_bad``) and as ``loopback`` {links, bad}."""
    others = [rec for rec in records or [] if not is_loopback(rec)]
    result = loc.localize_records(others, kind, bad_verdicts, host_fraction, min_bad_links, outlier_z, topology)
    loops = loop_links(records, kind)
    if not loops:
        return result
    components = revise(result["components"], loops)
    summary = loc.summary_of(components, result["links"])
    count = sum(len(links) for links in loops.values())
    bad = sum(1 for links in loops.values() for link in links if link["bad"])
    summary.update(links_total=summary["links_total"] + count, links_bad=summary["links_bad"] + bad,
                   loopback={"links": count, "bad": bad})
    return dict(result, components=components, primary=components[0] if components else None, summary=summary)
