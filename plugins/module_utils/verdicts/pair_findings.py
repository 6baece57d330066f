# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The findings of a pair check's first pass (pure): the culprits its pair records name, per kind and rail
(:func:`name_culprits`: ``bad_node``, ``bad_nic``, ``bad_link``, ``fleet``), unreachable hosts and missing
rails, each with the fix an operator applies (:data:`FIX`). ``pair_analysis.analyze_pairs`` calls them.

A node is bad when more than half of its links (at least two) are bad; a bad node on every rail it has is a
``bad_node``, on some rails a ``bad_nic``. A bad link that no bad node explains is a ``bad_link``. When every
node of a rail is bad the finding is fleet-wide instead.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

BAD = ("fail", "error", "warn")
FIX = {
    "rail_missing": "check that the NIC is there and up on that host (ibv_devinfo, ibdev2netdev, lspci, dmesg), "
                    "that its driver is loaded, its port is cabled and active, and in Kubernetes that the pod gets "
                    "that device (the RDMA device plugin's resource and the pod's network attachments)",
    "downgraded": "the port negotiated fewer lanes or a lower speed than its like ports: check its cable and "
                  "transceiver and the switch port's speed setting (mlxlink -d <device> -m, ethtool <netdev>, "
                  "ibstat), then reseat or replace the cable",
    "bad_node": "take the node out of the pool and check its NICs, PCIe links (lspci -vv width/speed), NUMA "
                "placement, firmware and CPU governor; compare its counters with a good node's",
    "bad_nic": "check that NIC's port and cable (ibstat / ethtool, error counters), its switch port, its PCIe "
               "link and firmware",
    "bad_link": "check the cable / transceivers and the switch ports between the two hosts (error counters, "
                "link speed); reseat or replace; then rerun the pair",
    "fleet": "every node is affected: check the expected rate (commcheck_expected_gbps), the fabric "
             "(switch, PFC/ECN, MTU), and the test parameters before blaming nodes",
    "unreachable": "make the host reachable (ssh, inventory address) and rerun the check",
    "outlier": "compare this pair's links and hosts with the fleet's; a consistent outlier points to a "
               "cable, port or host problem that has not crossed the pass/fail line yet",
    "far_outlier": "far worse than its comparable links with nothing else to judge it by: compare this pair's "
                   "links and hosts with the fleet's (a late or slow NIC, port or host), and rerun the pair",
}
# the findings name_culprits makes (the others of a pair check: unreachable hosts, missing rails)
CULPRIT_FINDINGS = ("fleet", "bad_node", "bad_nic", "bad_link")


def sort_key(key):
    """A record key as a sortable tuple: None first, then numbers, then text."""
    return tuple((0, "") if k is None else (1, k) if isinstance(k, int) else (2, str(k)) for k in key)


def _links_by_pair(records):
    """(family, rail, {host, peer}) -> {bad, records, pair}: a link is bad when one of its records is."""
    links = {}
    for rec in records:
        key = (rec["kind"], rec["params"].get("rail"), frozenset((rec["host"], rec["peer"])))
        entry = links.setdefault(key, {"bad": False, "records": [], "pair": (rec["host"], rec["peer"])})
        entry["records"].append(rec)
        if rec["verdict"] in BAD:
            entry["bad"] = True
    return links


def _node_stats(links):
    """(family, rail, node) -> {links, bad, bad_links}."""
    per_node = {}
    for (fam, rail, _pair), entry in links.items():
        for node in entry["pair"]:
            stat = per_node.setdefault((fam, rail, node), {"links": 0, "bad": 0, "bad_links": []})
            stat["links"] += 1
            if entry["bad"]:
                stat["bad"] += 1
                stat["bad_links"].append(entry)
    return per_node


def _bad_rails(per_node):
    """(family, node) -> the rails on which more than half of the node's links (at least two) are bad."""
    bad_rails = {}
    for (fam, rail, node), stat in per_node.items():
        if stat["links"] >= 2 and stat["bad"] * 2 > stat["links"]:
            bad_rails.setdefault((fam, node), []).append(rail)
    return bad_rails


def _rails_and_nodes(per_node):
    """(family, node) -> its rails, and (family, rail) -> its nodes."""
    rails_of = {}
    nodes_of = {}
    for (fam, rail, node) in per_node:
        rails_of.setdefault((fam, node), set()).add(rail)
        nodes_of.setdefault((fam, rail), set()).add(node)
    return rails_of, nodes_of


def _fleet_findings(links, nodes_of, bad_rails, check):
    """Fleet findings (every node of a rail, at least three, is bad) and the (family, rail) they cover."""
    findings = []
    fleet_rails = set()
    for (fam, rail), nodes in nodes_of.items():
        bad_here = [n for n in nodes if rail in bad_rails.get((fam, n), [])]
        if len(nodes) < 3 or len(bad_here) != len(nodes):
            continue
        fleet_rails.add((fam, rail))
        total = [e for k, e in links.items() if k[0] == fam and k[1] == rail]
        n_bad = sum(1 for e in total if e["bad"])
        findings.append(_finding(
            "fleet", "*", fam, check, rail,
            "every node has mostly bad %s links on rail %s (%d of %d links bad)" % (fam, rail, n_bad, len(total)),
            FIX["fleet"], {"links": len(total), "bad_links": n_bad}, []))
    return findings, fleet_rails


def _node_finding(fam, node, rails, stats, node_rails, check):
    """bad_node when ``rails`` cover every rail of the node (``node_rails``), else bad_nic."""
    n_links = sum(s["links"] for s in stats)
    n_bad = sum(s["bad"] for s in stats)
    devices = sorted(set(_node_device(e, node) for s in stats for e in s["bad_links"]) - set([None]))
    evidence = []
    for s in stats:
        for e in s["bad_links"][:8]:
            rec = _worst(e["records"])
            evidence.append("%s-%s rail %s: %s" % (rec["host"], rec["peer"], rec["params"].get("rail"),
                                                   rec.get("cause") or rec["verdict"]))
    verdict = _worst([r for s in stats for e in s["bad_links"] for r in e["records"]])["verdict"]
    metrics = {"links": n_links, "bad_links": n_bad}
    if set(rails) >= node_rails:
        cause = "%s: %d of its %d %s links are bad%s" % (
            node, n_bad, n_links, fam, "" if len(node_rails) == 1 else " on every rail")
        return _finding("bad_node", node, fam, check, None, cause, FIX["bad_node"], metrics, evidence,
                        devices=devices, verdict=verdict)
    cause = "%s rail %s (%s): %d of its %d %s links on that rail are bad" % (
        node, ", ".join(str(r) for r in sorted(rails, key=str)), ", ".join(devices) or "device unknown",
        n_bad, n_links, fam)
    return _finding("bad_nic", node, fam, check, sorted(rails, key=str), cause, FIX["bad_nic"], metrics, evidence,
                    devices=devices, verdict=verdict)


def _node_findings(per_node, rails_of, bad_rails, fleet_rails, check):
    """bad_node / bad_nic findings (rails a fleet finding covers left out) and the (family, rail, node) blamed."""
    findings = []
    blamed = set()
    for (fam, node), rails in sorted(bad_rails.items(), key=lambda item: (item[0][0], str(item[0][1]))):
        rails = [r for r in rails if (fam, r) not in fleet_rails]
        if not rails:
            continue
        stats = [per_node[(fam, r, node)] for r in rails]
        findings.append(_node_finding(fam, node, rails, stats, rails_of[(fam, node)], check))
        for r in rails:
            blamed.add((fam, r, node))
    return findings, blamed


def _link_findings(links, fleet_rails, blamed, check):
    """bad_link findings: bad links on no fleet rail whose two nodes are both unblamed on that rail."""
    findings = []
    for (fam, rail, _pair), entry in sorted(links.items(), key=lambda item: sort_key(
            (item[0][0], item[0][1]) + tuple(sorted(item[0][2])))):
        if not entry["bad"] or (fam, rail) in fleet_rails:
            continue
        a, b = entry["pair"]
        if (fam, rail, a) in blamed or (fam, rail, b) in blamed:
            continue
        rec = _worst(entry["records"])
        # neither host is blamed, which says nothing about its other links being good (it may have no others)
        cause = "link %s - %s (rail %s) is bad and neither host is bad on most of its links: %s" % (
            a, b, rail, rec.get("cause") or rec["verdict"])
        findings.append(_finding("bad_link", a, fam, check, rail, cause, FIX["bad_link"],
                                 {"bad_records": sum(1 for r in entry["records"] if r["verdict"] in BAD)},
                                 _link_evidence(entry), peer=b, verdict=rec["verdict"]))
    return findings


def name_culprits(records, check="rdma_perf"):
    """Finding records: bad nodes / NICs, bad links, fleet-wide problems."""
    links = _links_by_pair(records)
    per_node = _node_stats(links)
    bad_rails = _bad_rails(per_node)
    rails_of, nodes_of = _rails_and_nodes(per_node)
    findings, fleet_rails = _fleet_findings(links, nodes_of, bad_rails, check)
    node_findings, blamed = _node_findings(per_node, rails_of, bad_rails, fleet_rails, check)
    return findings + node_findings + _link_findings(links, fleet_rails, blamed, check)


def _link_evidence(entry):
    out = []
    for rec in entry["records"]:
        if rec["verdict"] in BAD:
            out.append("%s %s: %s" % (rec["params"].get("op"), rec["params"].get("metric"),
                                      rec.get("cause") or rec["verdict"]))
    return out


def _node_device(entry, node):
    rec = entry["records"][0]
    if rec["host"] == node:
        return rec["params"].get("device")
    return rec["params"].get("peer_device")


def _worst(records):
    rank = {"error": 3, "fail": 2, "warn": 1}
    return max(records, key=lambda r: rank.get(r["verdict"], 0))


def _finding(code, host, family, check, rail, cause, fix, metrics, evidence, peer=None, devices=None,
             verdict="fail"):
    params = {"check": check, "finding": code, "family": family, "rail": rail}
    if devices:
        params["devices"] = devices
    return {"kind": "finding", "host": host, "peer": peer, "params": params, "metrics": metrics,
            "verdict": verdict, "cause": cause, "fix": fix, "evidence": evidence}


def unreachable_findings(hosts, check="rdma_perf", family="rdma"):
    return [{"kind": "finding", "host": h, "peer": None,
             "params": {"check": check, "finding": "unreachable", "family": family, "rail": None},
             "metrics": {}, "verdict": "error", "cause": "%s was unreachable; none of its links were tested" % h,
             "fix": FIX["unreachable"], "evidence": []} for h in hosts or []]


def missing_rail_findings(skipped, family="rdma"):
    """One failing finding per host and rail that its pairs' peers have and it has not (``missing`` of the
    planned pairs that could not run: schedule.round_plan): a NIC that is gone, down before the run, not passed
    into the pod, or whose driver is not loaded. Named like discovery's own findings, by host and device."""
    seen = {}
    for item in skipped or []:
        gap = item.get("missing")
        if not isinstance(gap, dict) or not gap.get("host"):
            continue
        entry = seen.setdefault((gap["host"], gap.get("rail")), {"device": gap.get("device"), "peers": []})
        if gap.get("peer") and gap["peer"] not in entry["peers"]:
            entry["peers"].append(gap["peer"])
    out = []
    for (host, rail), entry in sorted(seen.items(), key=lambda kv: (str(kv[0][0]), kv[0][1] or 0)):
        peers = ", ".join(entry["peers"])
        out.append({"kind": "finding", "host": host, "peer": None,
                    "params": {"check": "discover", "code": "rdma_rail_missing", "finding": "rail_missing",
                               "family": family, "rail": rail, "device": entry["device"]},
                    "metrics": {}, "verdict": "fail",
                    "cause": "%s has no active RDMA port for rail %s, where its peers (%s) have %s: its pairs on "
                             "that rail could not run" % (host, rail, peers, entry["device"]),
                    "fix": FIX["rail_missing"], "evidence": ["peers with rail %s: %s" % (rail, peers)]})
    return out
