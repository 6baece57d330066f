# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The culprits of a run: one entry per fault, from every check's findings (pure).

A culprit is ``{component, host, peer, rail, device, verdict, confidence,
checks, cause, fix, evidence}``; ``component`` is one of

- ``host``: the node itself (slow on every rail, hung, unreachable, named by
  collective bisection);
- ``nic``: one NIC / port / rail of a node (localization's ``rail``, a port
  that discovery found down or slow);
- ``gpu``: one GPU's path to its NIC (``gpu`` its index): GPU-memory RDMA slow through
  that GPU while host memory on the same NIC is fine (``gpu_localization``);
- ``link``: the path between two nodes on one rail;
- ``fabric``: a rail's switch plane (localization's ``fabric`` and ``fleet``;
  ``host`` is ``*``);
- ``config``: a setting that breaks RDMA (discovery errors such as memlock or
  a missing device, RoCE GID / MTU mismatches between hosts).

``verdict`` is ``fail``, or ``flaky`` for a component that failed and passed
on retest (never a reason to take it out of the pool).

Where they come from: the localization findings a check published
(``params.component``); for a pair check that published no localization
(``localization`` record of its family), the localization of its records,
done here; failing discovery findings; RoCE preflight mismatches; collective
findings (bisection, launcher errors, unreachable hosts); ports that went down
during the tests (a failing ``port_counters`` record). One fault seen by
several checks is one culprit with their evidence together, and what a
culprit explains is not repeated: the NICs and links of a bad host, the links
of a bad NIC on its rail, a flaky link that failed for good elsewhere, what a
setting breaks (a RoCE mismatch the NIC and links of its rail), a host that
only a check seeing the node through one path (collective, TCP) named when
the RDMA check found one of its NICs.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization as _loc
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.culprit_leaves import switches_text, with_leaves
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.localization_view import pair_key
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

COMPONENTS = ("host", "nic", "gpu", "link", "fabric", "config")
_ORDER = dict((name, idx) for idx, name in enumerate(COMPONENTS))
_FROM_LOCALIZATION = {"host": "host", "rail": "nic", "link": "link", "fabric": "fabric", "fleet": "fabric",
                      "leaf": "fabric", "uplink": "fabric"}
_CONFIDENCE = ("low", "medium", "high")
BAD = ("fail", "error")
MAX_EVIDENCE = 12
NOT_A_HOST = ("*", "-", "all", "pool", None, "")
PAIR_KINDS = ("_bw", "_lat")
PLACEMENT_FINDINGS = ("numa_mismatch",)


def culprit(component, host, peer=None, rail=None, device=None, verdict="fail", confidence="medium", check=None,
            cause=None, fix=None, evidence=()):
    return {"component": component, "host": host, "peer": peer, "rail": _rail(rail), "device": device,
            "verdict": verdict, "confidence": confidence, "checks": [check] if check else [], "cause": cause,
            "fix": fix, "evidence": list(evidence or [])[:MAX_EVIDENCE]}


def _rail(value):
    try:
        return None if value is None or value == "" else int(value)
    except (TypeError, ValueError):
        return None


# --- from each kind of record ------------------------------------------------------------

def from_component(comp, check):
    """A localization component (or its finding record's fields) as a culprit."""
    kind = comp["component"]
    flaky = kind == "flaky"
    if flaky:
        kind = _flaky_place(comp)
    devices = comp.get("devices") or []
    item = culprit(_FROM_LOCALIZATION[kind] if kind in _FROM_LOCALIZATION else kind, comp["host"], comp.get("peer"),
                   comp.get("rail") if kind != "host" else None, devices[0] if len(devices) == 1 else None,
                   "flaky" if flaky else "fail", comp.get("confidence") or "medium", check, comp.get("cause"),
                   comp.get("fix"), comp.get("evidence"))
    if comp.get("switch"):
        # a leaf switch or its uplinks: the fabric, named down to the switch an operator replaces
        item["switch"] = comp["switch"]
    return item


def _flaky_place(comp):
    """What a flaky component is: a link (it has a peer), some rails of a host (its NIC: localization gives
    the rail of a host flaky on some rails only), else the whole host."""
    if comp.get("peer"):
        return "link"
    return "rail" if comp.get("rail") is not None else "host"


def _from_localization_finding(rec):
    params = rec["params"]
    comp = {"component": params["component"], "host": rec.get("host"), "peer": rec.get("peer"),
            "rail": params.get("rail"), "devices": params.get("devices"), "confidence": params.get("confidence"),
            "cause": rec.get("cause"), "fix": rec.get("fix"), "evidence": rec.get("evidence"),
            "switch": params.get("switch")}
    return from_component(comp, params.get("check"))


def _from_finding(rec, component, confidence, check, rail=None, device=None, evidence=()):
    """A failing finding record as a culprit: its host, cause, fix and evidence."""
    return culprit(component, rec.get("host"), None, rail, device, "fail", confidence, check, rec.get("cause"),
                   rec.get("fix"), list(evidence) + list(rec.get("evidence") or []))


def _from_discovery_finding(rec):
    """A failing discovery finding: a port's fault is its NIC's; a host-wide one is the host's setup."""
    params = rec["params"]
    device = params.get("device")
    return _from_finding(rec, "nic" if device else "config", "high", "discover", rail=params.get("rail"),
                         device=device, evidence=["discovery: %s" % params.get("code")])


def _from_collective_finding(rec):
    confidence = "high" if (rec.get("params") or {}).get("stage") == "bisect" or rec.get("verdict") == "error" \
        else "medium"
    return _from_finding(rec, "host", confidence, "collective")


def _from_unreachable(rec):
    return _from_finding(rec, "host", "high", (rec.get("params") or {}).get("check"))


def _from_gpudirect_finding(rec):
    """GPU-memory bandwidth far below host memory's on a rail: the host's GPU-to-NIC path (peer memory, PCIe
    placement, ACS), set up on that host; its NIC and links measured fine from host memory."""
    params = rec.get("params") or {}
    return _from_finding(rec, "config", "medium", "gpudirect", params.get("rail"), params.get("device"),
                         evidence=["gpudirect: %s" % params.get("finding")])


def _from_gpu_finding(rec):
    """A GPU whose path to its NIC is slow (``gpudirect_gpu_slow``): the GPU, not the NIC (host memory there was
    fine)."""
    params = rec.get("params") or {}
    item = _from_finding(rec, "gpu", params.get("confidence") or "medium", "gpudirect", params.get("rail"),
                         params.get("device"), evidence=["gpudirect: GPU %s %s" % (params.get("gpu"), params.get("gpu_path"))])
    item["gpu"] = params.get("gpu")
    return item


def _from_generic_finding(rec):
    """A failing finding of no known check (a caller's own record): its host, or its device's NIC."""
    params = rec.get("params") or {}
    device = params.get("device")
    return _from_finding(rec, "nic" if device else "host", "medium", params.get("check"), params.get("rail"), device)


def _finding_source(rec):
    """Which reader a finding record needs, or None when it names no culprit."""
    params = rec.get("params") or {}
    check = params.get("check")
    if params.get("finding") == "gpudirect_gpu_slow" and rec.get("verdict") in BAD:
        return _from_gpu_finding
    if params.get("component"):
        return _from_localization_finding
    if rec.get("verdict") not in BAD or rec.get("host") in NOT_A_HOST:
        return None
    if check == "collective":
        return _from_collective_finding
    if params.get("finding") == "unreachable":
        return _from_unreachable
    if params.get("family") == "rdma_gpudirect":
        return _from_gpudirect_finding
    if check in (None, "discover") and params.get("code"):
        return _from_discovery_finding
    if check is None and not params.get("finding"):
        return _from_generic_finding
    return None    # pair_analysis' own names (bad_node, bad_link ...): the localization below decides


def counter_culprits(records):
    """Ports whose error counters say the link went down during the tests (a failing ``port_counters`` record):
    their NIC, port or cable, whatever the bandwidth measured; every port of a host at once: the host (a driver
    or firmware reset, its power)."""
    rails = _device_rails(records)
    ports = {}
    failed = {}
    for rec in records:
        if rec.get("kind") != "port_counters" or rec.get("host") in NOT_A_HOST:
            continue
        ports[rec["host"]] = ports.get(rec["host"], 0) + 1
        if rec.get("verdict") in BAD:
            failed.setdefault(rec["host"], []).append(rec)
    out = []
    for host in sorted(failed, key=natural_key):
        recs = failed[host]
        if len(recs) >= 2 and len(recs) == ports[host]:
            out.append(_counter_culprit("host", host, recs, None, None))
            continue
        for rec in recs:
            device = (rec.get("params") or {}).get("device")
            out.append(_counter_culprit("nic", host, [rec], rails.get((host, device)), device))
    return out


def _counter_culprit(component, host, recs, rail, device):
    check = (recs[0].get("params") or {}).get("check") or "counters"
    evidence = ["counters: %s %s: %s" % (host, (r.get("params") or {}).get("device"), line)
                for r in recs for line in r.get("evidence") or []]
    return culprit(component, host, None, rail, device, "fail", "medium", check, recs[0].get("cause"),
                   recs[0].get("fix"), evidence)


def _device_rails(records):
    """(host, device) -> rail, from the pair records' params."""
    out = {}
    for rec in records:
        params = rec.get("params") or {}
        if not rec.get("peer") or _rail(params.get("rail")) is None:
            continue
        for host, key in ((rec.get("host"), "device"), (rec.get("peer"), "peer_device")):
            if params.get(key):
                out.setdefault((host, params[key]), _rail(params["rail"]))
    return out


def roce_config_culprits(records):
    """RoCE preflight mismatches: a host in two or more mismatching pairs of a rail is the one set differently;
    a pair no such host explains is named as a pair."""
    by_rail = {}
    for rec in records:
        params = rec.get("params") or {}
        if rec.get("kind") == "finding" and params.get("check") == "roce_preflight" and \
                rec.get("verdict") in ("warn", "fail") and rec.get("host") and rec.get("peer"):
            by_rail.setdefault(_rail(params.get("rail")), []).append(rec)
    out = []
    for rail, recs in sorted(by_rail.items(), key=lambda item: -1 if item[0] is None else item[0]):
        out += _rail_config_culprits(rail, recs)
    return out


def _rail_config_culprits(rail, recs):
    pairs = {}
    for rec in recs:
        pairs.setdefault(pair_key(rec["host"], rec["peer"]), []).append(rec)
    count = {}
    for pair in pairs:
        for host in pair:
            count[host] = count.get(host, 0) + 1
    odd = set(h for h, n in count.items() if n >= 2)
    out = []
    for host in sorted(odd, key=natural_key):
        mine = [r for pair, rs in pairs.items() if host in pair for r in rs]
        out.append(_config_culprit(host, None, rail, mine, "high"))
    for pair, rs in sorted(pairs.items(), key=lambda item: [natural_key(h) for h in item[0]]):
        if not odd.intersection(pair):
            out.append(_config_culprit(pair[0], pair[1], rail, rs, "medium"))
    return out


def _config_culprit(host, peer, rail, recs, confidence):
    codes = sorted(set((r.get("params") or {}).get("finding") for r in recs) - set([None]))
    evidence = ["%s-%s rail %s: %s" % (r["host"], r["peer"], rail, r.get("cause")) for r in recs]
    return culprit("config", host, peer, rail, None, "fail", confidence, "roce_preflight",
                   "RoCE settings differ (%s): %s" % (", ".join(codes) or "mismatch", recs[0].get("cause")),
                   recs[0].get("fix"), evidence)


def _localized_families(records):
    families = set()
    for rec in records:
        params = rec.get("params") or {}
        if rec.get("kind") == "localization" or (rec.get("kind") == "finding" and params.get("component")):
            families.add(params.get("family"))
    return families


def _pair_kinds_to_localize(records, localized):
    """Pair-measurement kinds (``*_bw``, ``*_lat``: not a 2-node collective run, whose ``peer`` is its
    second node) with a failing or flaky record and no localization of their own."""
    kinds = set()
    for rec in records:
        kind = rec.get("kind") or ""
        if rec.get("peer") and rec.get("verdict") in BAD + ("flaky",) and kind.endswith(PAIR_KINDS) \
                and kind not in localized:
            kinds.add(kind)
    return sorted(kinds)


def localized_here(records, localized):
    # GPU-memory records measure GPUs' paths too: gpu_localization names their culprits (a GPU, not its NIC)
    records = [r for r in records if (r.get("params") or {}).get("memory") != "cuda"]
    out = []
    for kind in _pair_kinds_to_localize(records, localized):
        check = next(((r.get("params") or {}).get("check") for r in records if r.get("kind") == kind
                      and (r.get("params") or {}).get("check")), kind)
        try:
            result = _loc.localize_records(records, kind)
        except _loc.LocalizationError:
            continue
        railless = not any((r.get("params") or {}).get("rail") is not None for r in records if r.get("kind") == kind)
        for comp in result["components"]:
            item = from_component(comp, check)
            if railless:    # e.g. TCP: one path per host pair, not rail 0 of an RDMA fabric
                item["rail"] = None
            out.append(item)
    return out


def raw_culprits(records):
    """Every culprit each source names, before merging."""
    records = [r for r in records or [] if isinstance(r, dict)]
    out = []
    for rec in records:
        reader = _finding_source(rec) if rec.get("kind") == "finding" else None
        if reader is not None:
            out.append(reader(rec))
    out += roce_config_culprits(records)
    out += localized_here(records, _localized_families(records))
    # after the measurements: a port they name already is theirs, with these lines as evidence
    out += counter_culprits(records)
    return out


# --- one entry per fault --------------------------------------------------------------------

def _key(item):
    comp = item["component"]
    if comp == "host":
        return ("host", item["host"])
    if comp == "nic":
        return ("nic", item["host"], item["device"] if item["rail"] is None else item["rail"])
    if comp == "link":
        return ("link", pair_key(item["host"], item["peer"]), item["rail"])
    if comp == "fabric":
        return ("fabric", item["rail"]) + _switch_key(item)
    if comp == "gpu":
        return ("gpu", item["host"], item["rail"], item.get("gpu"))
    return ("config", item["host"], item["peer"], item["rail"])


def _switch_key(item):
    switch = item.get("switch")
    return (switch["part"],) + tuple(switch["leaves"]) if switch else ()


def _absorb(into, item):
    """Add ``item``'s checks and evidence to ``into`` (same fault, or one ``into`` explains)."""
    for check in item["checks"]:
        if check not in into["checks"]:
            into["checks"].append(check)
    if item is not into and (item["component"], item["host"], item["peer"]) != (
            into["component"], into["host"], into["peer"]):
        into["evidence"].append("explains %s" % describe(item))
    for line in item["evidence"]:
        if line not in into["evidence"] and len(into["evidence"]) < MAX_EVIDENCE:
            into["evidence"].append(line)
    into["confidence"] = max(into["confidence"], item["confidence"], key=_CONFIDENCE.index)
    into["device"] = into["device"] or item["device"]
    into["rail"] = into["rail"] if into["rail"] is not None else (item["rail"] if into["component"] == "nic"
                                                                  else into["rail"])
    if into["verdict"] != "fail" and item["verdict"] == "fail":
        into["verdict"], into["cause"], into["fix"] = "fail", item["cause"], item["fix"]


def _same_nic(nic, item):
    if nic["host"] != item["host"]:
        return False
    if nic["rail"] is not None and item["rail"] is not None:
        return nic["rail"] == item["rail"]
    return bool(nic["device"]) and nic["device"] == item["device"]


# checks whose failing config culprits are settings that break the tests measured on the same place
_SETTING_CHECKS = ("roce_preflight", "discover")
# checks that see a node through one path (a pool of ranks, one TCP address): they cannot tell it from its NICs
_NODE_LEVEL_CHECKS = ("collective", "tcp_perf")


def _ends(item):
    return [item["host"], item["peer"]] if item["component"] == "link" else [item["host"]]


def _seen_by_node_level_checks_only(item):
    return item["component"] == "host" and bool(item["checks"]) and set(item["checks"]) <= set(_NODE_LEVEL_CHECKS)


def _nic_explains(nic, item):
    """A NIC explains its rail's links and its own other readings; the links measured without rails (TCP) of
    its host, and its host as a check that cannot tell a host from its NICs named it."""
    ends = _ends(item)
    if item["component"] in ("link", "nic") and any(_same_nic(nic, dict(item, host=end)) for end in ends):
        return True
    if item["component"] == "link" and item["rail"] is None:
        return nic["host"] in ends
    return _seen_by_node_level_checks_only(item) and item["host"] == nic["host"]


def _link_explains(link, item):
    """A link of a rail explains the same pair's link measured without rails (TCP over one of them)."""
    return item["component"] == "link" and item["rail"] is None and \
        pair_key(link["host"], link["peer"]) == pair_key(item["host"], item["peer"])


def _setting_explains(config, item, rails_of):
    """A RoCE or host setting explains what was measured through it: a pair's setting its link; a host's setting
    of one rail that host's NIC and links there (and the host when that is its only rail); a host-wide setting
    all of the host's. Discovery's own readings of a port stand on their own."""
    if not set(config["checks"]) & set(_SETTING_CHECKS) or "discover" in item["checks"]:
        return False
    if item["component"] not in ("host", "nic", "link") or config["host"] not in _ends(item):
        return False
    if config["peer"] is not None:
        return item["component"] == "link" and item["rail"] == config["rail"] and \
            pair_key(config["host"], config["peer"]) == pair_key(item["host"], item["peer"])
    if config["rail"] is None:
        return True
    if item["component"] == "host":
        return set(rails_of.get(item["host"]) or ()) <= set([config["rail"]])
    return item["rail"] == config["rail"]


def _explains(other, item, rails_of):
    kind = other["component"]
    if kind == "config":
        return _setting_explains(other, item, rails_of)
    if kind == "host":
        return item["component"] in ("nic", "link", "host") and other["host"] in _ends(item)
    if kind == "nic":
        return _nic_explains(other, item)
    return kind == "link" and _link_explains(other, item)


def _explainer(item, kept, rails_of=None):
    """The kept culprit that explains ``item`` (a setting what was measured through it; a failing host its NICs
    and links; a NIC its rail's links; any failing culprit a flaky one of the same place; a flaky one the flaky
    ones it would explain failing), or None."""
    for other in kept:
        if other is item or (other["verdict"] != "fail" and item["verdict"] == "fail"):
            continue
        if _explains(other, item, rails_of or {}):
            return other
    return None


def _explaining_order(item):
    """Failing first; a setting before what it breaks; a host before its NICs, those before a host only a check
    that cannot tell the two apart named; links of a rail before the same links measured without rails."""
    comp = item["component"]
    rank = {"config": 0, "host": 1, "nic": 2, "gpu": 2, "link": 4, "fabric": 6}[comp]
    if _seen_by_node_level_checks_only(item):
        rank = 3
    elif comp == "link" and item["rail"] is None:
        rank = 5
    return (item["verdict"] != "fail", rank)


def merge(items, rails_of=None):
    """One culprit per fault (see the module doc), failing ones first, then by component and host.

    ``rails_of``: host -> the rails its pairs were measured on (a setting of a host's only rail explains it)."""
    by_key = {}
    order = []
    for item in items:
        key = _key(item)
        if key in by_key:
            _absorb(by_key[key], item)
        else:
            by_key[key] = dict(item, checks=list(item["checks"]), evidence=list(item["evidence"]))
            order.append(key)
    merged = [by_key[k] for k in order]
    merged.sort(key=_explaining_order)
    kept = []
    for item in merged:
        explainer = _explainer(item, kept, rails_of)
        if explainer is None:
            kept.append(item)
        else:
            _absorb(explainer, item)
    kept.sort(key=sort_key)
    return kept


def sort_key(item):
    return (item["verdict"] != "fail", _ORDER[item["component"]], natural_key(item["host"] or ""),
            natural_key(item["peer"] or ""), -1 if item["rail"] is None else item["rail"])


def culprits(records):
    """The run's culprits (see the module doc) from its records."""
    return with_discovery_notes(with_leaves(merge(raw_culprits(records), measured_rails(records)), records), records)


def measured_rails(records):
    """host -> the rails its pair records were measured on."""
    out = {}
    for rec in records or []:
        if not isinstance(rec, dict) or not rec.get("peer") or not str(rec.get("kind") or "").endswith(PAIR_KINDS):
            continue
        rail = _rail((rec.get("params") or {}).get("rail"))
        if rail is not None:
            for host in (rec.get("host"), rec.get("peer")):
                out.setdefault(host, set()).add(rail)
    return out


def discovery_notes(records):
    """{(host, device): [line]}: the discovery findings of each device that are warnings, and the placement ones
    (a NIC on another NUMA node than its GPU): not culprits themselves, but what may explain one (a port below
    its expected rate, a PCIe link trained low, a bond slave down). Host-wide warnings are left out: the CPU
    governor one, for instance, reads the host before the test modules switch it."""
    notes = {}
    for rec in records or []:
        label = _note_label(rec) if isinstance(rec, dict) else None
        if label:
            params = rec["params"]
            line = "%s: %s: %s" % (label, params.get("code") or params.get("finding"), rec.get("cause"))
            notes.setdefault((rec["host"], params["device"]), []).append(line)
    return notes


def _note_label(rec):
    """``discovery`` or ``placement`` for a device warning that explains its device's culprit, else None."""
    params = rec.get("params") or {}
    if rec.get("kind") != "finding" or rec.get("verdict") != "warn" or rec.get("host") in NOT_A_HOST or \
            not params.get("device"):
        return None
    if params.get("check") == "discover":
        return "discovery"
    return "placement" if params.get("finding") in PLACEMENT_FINDINGS else None


def with_discovery_notes(items, records):
    """The failing NIC culprits (and settings of one device, such as its GPU path) with the discovery and
    placement warnings of their device, the failing host culprits with those of all the host's devices, first
    in their evidence (the likeliest explanation)."""
    notes = discovery_notes(records)
    if not notes:
        return items
    for item in items:
        if item["verdict"] != "fail" or item["component"] not in ("nic", "host", "config"):
            continue
        if item["component"] == "host":
            lines = [line for (host, _device), found in sorted(notes.items(), key=lambda kv: str(kv[0]))
                     if host == item["host"] for line in found]
        else:
            lines = notes.get((item["host"], item["device"]), []) if item["device"] else []
        fresh = [line for line in lines if line not in item["evidence"]]
        item["evidence"] = (fresh + item["evidence"])[:MAX_EVIDENCE]
    return items


# --- views ------------------------------------------------------------------------------------

def describe(item):
    """'host h2', 'nic h3 mlx5_1 (rail 1)', 'link h1 - h2 (rail 0)', 'fabric of rail 0', 'config h4 (rail 0)'."""
    comp = item["component"]
    rail = "" if item["rail"] is None else " (rail %s)" % item["rail"]
    if comp == "host":
        text = "host %s" % item["host"]
    elif comp == "nic":
        text = "nic %s%s%s" % (item["host"], " " + item["device"] if item["device"] else "", rail)
    elif comp == "link":
        text = "link %s - %s%s" % (item["host"], item["peer"], rail)
    elif comp == "fabric" and item.get("switch"):
        text = _loc.switch_text(item["switch"], item["rail"])
    elif comp == "fabric":
        text = "fabric%s" % (" of rail %s" % item["rail"] if item["rail"] is not None else "")
    else:
        text = "config %s%s%s" % (item["host"], " - " + item["peer"] if item["peer"] else "", rail)
    return text + switches_text(item) + (" (flaky)" if item["verdict"] == "flaky" else "")


def bad_lists(items):
    """(bad_hosts, bad_nics, bad_links) of the failing culprits, as the summary lists them."""
    failing = [c for c in items if c["verdict"] == "fail"]
    hosts = sorted(set(c["host"] for c in failing if c["component"] == "host"), key=natural_key)
    nics = ["%s:%s" % (c["host"], c["device"] or "rail %s" % c["rail"]) for c in failing if c["component"] == "nic"]
    links = ["%s<->%s" % pair_key(c["host"], c["peer"]) for c in failing if c["component"] == "link"]
    return hosts, sorted(set(nics), key=natural_key), sorted(set(links), key=natural_key)


def action_lines(items):
    """'what to do' lines: one per culprit, '<what> [<checks>, <n> evidence]: <fix>'."""
    return ["%s [%s; %s confidence; %d evidence]: %s" % (
        describe(c), ", ".join(c["checks"]) or "-", c["confidence"], len(c["evidence"]), c["fix"] or c["cause"] or "-")
        for c in items]
