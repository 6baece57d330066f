# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""RoCE consistency preflight: do the two ends of a pair agree? (pure)

Before a RoCE pair runs, both sides' discovery facts (``commcheck_rdma``) are
compared for the port each side tests:

- link layer (an InfiniBand port cannot talk to an Ethernet one);
- the GID each side uses: present, the same RoCE version (v2 on both; v1 is
  not routable and a v1 / v2 mix does not connect), the same address family
  (IPv4-mapped or IPv6), and the same IP subnet when prefixes are known (or
  both inside ``subnet``);
- MTU: the netdev MTU and the port's active RDMA MTU (read from
  ``ibv_devinfo`` when available, else derived from the netdev MTU as the
  kernel does: the largest IB MTU that fits the netdev MTU minus 96 bytes of
  RoCE v2 headers);
- traffic class / DSCP where readable (sysfs ``tc/<port>/traffic_class`` of
  mlx5, the rdma_cm ``default_roce_tos``).

A mismatch is a finding (``severity``, ``code``, ``message``, ``fix``,
``values``), so a pair that would measure a mysterious low number (or fail
to connect) comes with the reason and the fix.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ipaddress

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

IB_MTUS = (256, 512, 1024, 2048, 4096)
ROCE_HEADERS = 40 + 8 + 12 + 4 + 28 + 4     # GRH + UDP + BTH + XRC ext + AtomicETH + ICRC (iboe_get_mtu)
ROCE_V2 = "RoCE v2"
SEVERITY_ORDER = ("error", "warning", "info")


class PreflightError(ValueError):
    """Bad input to the preflight."""


def roce_active_mtu(netdev_mtu):
    """The RDMA MTU a RoCE port gets from its netdev MTU (the kernel's iboe_get_mtu), or None."""
    if isinstance(netdev_mtu, bool) or not isinstance(netdev_mtu, int):
        return None
    best = None
    for mtu in IB_MTUS:
        if netdev_mtu - ROCE_HEADERS >= mtu:
            best = mtu
    return best


def _find_port(facts, device, port):
    for dev in (facts or {}).get("devices") or []:
        if dev.get("name") != device:
            continue
        for item in dev.get("ports") or []:
            if int(item.get("port", 1)) == int(port):
                return dev, item
    return None, None


def port_view(facts, device, port=1, gid_index=None):
    """What the preflight compares about one side's port (None when the facts do not know it)."""
    dev, item = _find_port(facts, device, port)
    if item is None:
        return None
    index = item.get("gid_index") if gid_index in (None, "auto") else int(gid_index)
    gid = None
    for entry in item.get("gids") or []:
        if entry.get("index") == index:
            gid = entry
    netdev_mtu = item.get("netdev_mtu")
    active = item.get("active_mtu")
    derived = False
    if active is None and item.get("link_layer") == "Ethernet":
        active = roce_active_mtu(netdev_mtu)
        derived = active is not None
    cidrs = [c for c in item.get("ipv4_cidr") or [] if "/" in str(c)]
    return {
        "device": device, "port": int(port), "link_layer": item.get("link_layer"), "state": item.get("state"),
        "gid_index": index, "gid": (gid or {}).get("gid"), "gid_type": (gid or {}).get("type"),
        "ipv4": (gid or {}).get("ipv4"), "netdev": item.get("netdev"), "netdev_mtu": netdev_mtu,
        "active_mtu": active, "active_mtu_derived": derived, "cidrs": cidrs,
        "traffic_class": item.get("traffic_class"), "roce_tos": item.get("roce_tos"),
    }


def _family(view):
    gid = view.get("gid") or ""
    if not gid:
        return None
    return "ipv4" if view.get("ipv4") or gid.startswith("0000:0000:0000:0000:0000:ffff:") else "ipv6"


def _network(view):
    """The IPv4 network of the GID's address from the port's CIDRs, or None when the prefix is unknown."""
    addr = view.get("ipv4")
    if not addr:
        return None
    for cidr in view.get("cidrs") or []:
        try:
            iface = ipaddress.ip_interface(u"%s" % cidr)
        except ValueError:
            continue
        if str(iface.ip) == addr:
            return iface.network
    return None


def _finding(severity, code, message, fix, a, b, ctx, values):
    return {"severity": severity, "code": code, "host": ctx.get("host"), "peer": ctx.get("peer"),
            "device": a.get("device") if a else None, "peer_device": b.get("device") if b else None,
            "rail": ctx.get("rail"), "message": message, "fix": fix, "values": values}


def check_pair(a, b, host=None, peer=None, rail=None, subnet=None):
    """Findings for one pair from both sides' :func:`port_view` (worst first)."""
    ctx = {"host": host or "server", "peer": peer or "client", "rail": rail}
    if a is None or b is None:
        return [_port_unknown(a, b, ctx)]
    where = "%s %s/%s and %s %s/%s" % (ctx["host"], a["device"], a["port"], ctx["peer"], b["device"], b["port"])
    if a["link_layer"] != b["link_layer"]:
        return [_finding("error", "link_layer_mismatch",
                         "%s: link layers differ (%s vs %s); they cannot talk RDMA to each other" % (
                             where, a["link_layer"], b["link_layer"]),
                         "test ports of the same fabric: InfiniBand with InfiniBand, RoCE (Ethernet) with RoCE", a, b,
                         ctx, {ctx["host"]: a["link_layer"], ctx["peer"]: b["link_layer"]})]
    if a["link_layer"] != "Ethernet":
        return _infiniband_findings(a, b, ctx, where)
    out = _gid_findings(a, b, ctx, where, subnet) + _mtu_findings(a, b, ctx, where) + \
        _priority_findings(a, b, ctx, where)
    order = dict((s, i) for i, s in enumerate(SEVERITY_ORDER))
    out.sort(key=lambda f: (order[f["severity"]], f["code"]))
    return out


def _port_unknown(a, b, ctx):
    missing = [n for n, v in ((ctx["host"], a), (ctx["peer"], b)) if v is None]
    return _finding("warning", "port_unknown",
                    "preflight skipped: the discovery facts of %s do not know the tested port" % " and ".join(missing),
                    "run discovery (clusterops.commcheck.rdma_facts) on both hosts before the pairs", a, b, ctx, {})


def _infiniband_findings(a, b, ctx, where):
    """InfiniBand ports: only their active MTUs are compared."""
    if a.get("active_mtu") and b.get("active_mtu") and a["active_mtu"] != b["active_mtu"]:
        return [_finding("warning", "active_mtu_mismatch",
                         "%s: active MTUs differ (%s vs %s); the pair runs at %s" % (
                             where, a["active_mtu"], b["active_mtu"], min(a["active_mtu"], b["active_mtu"])),
                         "set the same MTU on both ports (the subnet manager's partition MTU, opensm "
                         "mtu / the port's max MTU)", a, b, ctx,
                         {ctx["host"]: a["active_mtu"], ctx["peer"]: b["active_mtu"]})]
    return []


def _gid_findings(a, b, ctx, where, subnet):
    """RoCE GIDs: present, the same type (v2 both), the same address family, the same subnet."""
    h, p = ctx["host"], ctx["peer"]
    missing = [n for n, v in ((h, a), (p, b)) if not v.get("gid")]
    if missing:
        return [_finding("error", "gid_missing",
                         "%s: no usable GID at the chosen index on %s (index %s / %s)" % (
                             where, " and ".join(missing), a.get("gid_index"), b.get("gid_index")),
                         "give the port's netdev an IP address (the kernel then adds RoCE v2 GIDs) and use that "
                         "GID index (perftest -x, NCCL_IB_GID_INDEX); check show_gids", a, b, ctx,
                         {h: a.get("gid_index"), p: b.get("gid_index")})]
    out = []
    if a["gid_type"] != b["gid_type"]:
        out.append(_finding("error", "gid_type_mismatch",
                            "%s: GID types differ (%s at index %s vs %s at index %s); a RoCE v1 side and a v2 "
                            "side do not connect" % (where, a["gid_type"], a["gid_index"], b["gid_type"],
                                                     b["gid_index"]),
                            "use the RoCE v2 GID index on both sides (perftest -x, NCCL_IB_GID_INDEX; "
                            "show_gids lists them), and the same RDMA CM mode (cma_roce_mode)", a, b, ctx,
                            {h: a["gid_type"], p: b["gid_type"]}))
    elif a["gid_type"] != ROCE_V2:
        out.append(_finding("warning", "gid_not_roce_v2",
                            "%s: both sides use %s GIDs (index %s / %s); RoCE v1 is not routable and gets no "
                            "DSCP-based QoS" % (where, a["gid_type"], a["gid_index"], b["gid_index"]),
                            "use the RoCE v2 GID indexes (show_gids) for tests and jobs", a, b, ctx,
                            {h: a["gid_type"], p: b["gid_type"]}))
    fam_a, fam_b = _family(a), _family(b)
    if fam_a and fam_b and fam_a != fam_b:
        out.append(_finding("error", "gid_family_mismatch",
                            "%s: one side uses an %s GID, the other an %s one (%s vs %s)" % (
                                where, fam_a, fam_b, a["gid"], b["gid"]),
                            "use GIDs of the same address family on both sides (the IPv4-mapped RoCE v2 GIDs "
                            "on a typical fabric)", a, b, ctx, {h: a["gid"], p: b["gid"]}))
    return out + _subnet_findings(a, b, ctx, where, subnet)


def _mtu_findings(a, b, ctx, where):
    """RoCE MTUs: the netdevs' and the active RDMA MTUs of both sides."""
    h, p = ctx["host"], ctx["peer"]
    out = []
    if a.get("netdev_mtu") and b.get("netdev_mtu") and a["netdev_mtu"] != b["netdev_mtu"]:
        out.append(_finding("warning", "netdev_mtu_mismatch",
                            "%s: netdev MTUs differ (%s %s vs %s %s)" % (
                                where, a.get("netdev"), a["netdev_mtu"], b.get("netdev"), b["netdev_mtu"]),
                            "set the same MTU on both netdevs and every switch port on the path (e.g. 4200 or "
                            "9000 for RoCE: ip link set dev <netdev> mtu 4200)", a, b, ctx,
                            {h: a["netdev_mtu"], p: b["netdev_mtu"]}))
    if a.get("active_mtu") and b.get("active_mtu") and a["active_mtu"] != b["active_mtu"]:
        derived = " (derived from the netdev MTU)" if a.get("active_mtu_derived") or b.get("active_mtu_derived") \
            else ""
        out.append(_finding("warning", "active_mtu_mismatch",
                            "%s: active RDMA MTUs differ (%s vs %s)%s; the pair runs at %s bytes" % (
                                where, a["active_mtu"], b["active_mtu"], derived,
                                min(a["active_mtu"], b["active_mtu"])),
                            "raise the smaller side's netdev MTU so both reach 4096-byte RDMA MTU (netdev MTU "
                            ">= 4192, e.g. 4200 or 9000)", a, b, ctx, {h: a["active_mtu"], p: b["active_mtu"]}))
    return out


def _priority_findings(a, b, ctx, where):
    """RoCE traffic class and RDMA CM ToS: both directions in the same priority."""
    out = []
    for key, label in (("traffic_class", "traffic class"), ("roce_tos", "RDMA CM default ToS")):
        va, vb = a.get(key), b.get(key)
        if va is not None and vb is not None and va != vb:
            out.append(_finding("warning", "%s_mismatch" % key,
                                "%s: %s differs (%s vs %s): the two directions use different priorities / DSCP, "
                                "so PFC or ECN may protect only one" % (where, label, va, vb),
                                "set the same traffic class / ToS on both hosts (mlx5: echo tclass=N > "
                                "/sys/class/infiniband/<dev>/tc/<port>/traffic_class; rdma_cm configfs "
                                "default_roce_tos; or perftest --tclass / NCCL_IB_TC) and check the switch's "
                                "DSCP-to-priority map", a, b, ctx, {ctx["host"]: va, ctx["peer"]: vb}))
    return out


def _subnet_findings(a, b, ctx, where, subnet):
    h, p = ctx["host"], ctx["peer"]
    out = []
    if subnet:
        try:
            net = ipaddress.ip_network(u"%s" % subnet, strict=False)
        except ValueError:
            raise PreflightError("subnet %r is not a network like 10.0.0.0/24" % (subnet,))
        outside = [n for n, v in ((h, a), (p, b)) if v.get("ipv4") and ipaddress.ip_address(u"%s" % v["ipv4"])
                   not in net]
        if outside:
            out.append(_finding("warning", "gid_subnet_mismatch",
                                "%s: the GID address of %s is outside the RDMA subnet %s (%s / %s)" % (
                                    where, " and ".join(outside), subnet, a.get("ipv4"), b.get("ipv4")),
                                "choose the GID of the address in the RDMA subnet (the discover role's subnet) or "
                                "fix the netdev's address", a, b, ctx, {h: a.get("ipv4"), p: b.get("ipv4")}))
        return out
    net_a, net_b = _network(a), _network(b)
    if net_a is not None and net_b is not None and net_a != net_b:
        out.append(_finding("warning", "gid_subnet_mismatch",
                            "%s: the GID addresses are in different subnets (%s in %s, %s in %s); this works only "
                            "when the fabric routes RoCE v2 between them (L3)" % (
                                where, a["ipv4"], net_a, b["ipv4"], net_b),
                            "put both ports in the same subnet, or check the routes (and the GID each side picks) "
                            "on a routed RoCE fabric", a, b, ctx, {h: str(net_a), p: str(net_b)}))
    return out


def _rail_of(host_rails, host, rail):
    for item in (host_rails or {}).get(host) or []:
        if item.get("rail") == rail:
            return item
    return None


def preflight(jobs, facts_by_host, host_rails=None, subnet=None):
    """Findings for every distinct pair and rail of planned jobs.

    ``jobs``: the ``jobs`` of ``schedule.round_plan`` (``server``,
    ``client``, ``rail``, ``server_device``, ``client_device``);
    ``facts_by_host``: host -> ``commcheck_rdma``; ``host_rails``: host ->
    rails (for the port and GID index). Returns ``{"findings": [...],
    "pairs": {"server-client:rail": [codes]}, "checked": n}``.
    """
    if not isinstance(facts_by_host, dict):
        raise PreflightError("facts_by_host must be a dict of host -> commcheck_rdma")
    seen = set()
    findings = []
    pairs = {}
    for job in jobs or []:
        server, client = job.get("server"), job.get("client")
        rail = job.get("rail")
        key = (server, client, rail)
        if not server or not client or key in seen:
            continue
        seen.add(key)
        views = []
        for host, dev_key in ((server, "server_device"), (client, "client_device")):
            spec = _rail_of(host_rails, host, rail) or {}
            device = spec.get("device") or job.get(dev_key)
            facts = facts_by_host.get(host)
            if not device or facts is None:
                views.append(None)
                continue
            views.append(port_view(facts, device, spec.get("port", 1), spec.get("gid_index")))
        found = check_pair(views[0], views[1], server, client, rail, subnet)
        pairs["%s-%s:%s" % (server, client, rail)] = [f["code"] for f in found]
        findings += found
    return {"findings": findings, "pairs": pairs, "checked": len(seen)}


def finding_records(findings, check="roce_preflight"):
    """``finding`` records (host = server side, peer = client side) for history and the report."""
    verdict = {"error": "fail", "warning": "warn", "info": "pass"}
    out = []
    for item in findings or []:
        out.append({"kind": "finding", "host": item.get("host"), "peer": item.get("peer"),
                    "params": {"check": check, "finding": item["code"], "severity": item["severity"],
                               "rail": item.get("rail"), "device": item.get("device"),
                               "peer_device": item.get("peer_device")},
                    "metrics": {}, "verdict": verdict.get(item["severity"], "warn"), "cause": item["message"],
                    "fix": item["fix"], "evidence": ["%s: %s" % (k, v) for k, v in sorted(
                        (item.get("values") or {}).items(), key=lambda kv: natural_key(kv[0]))]})
    return out
