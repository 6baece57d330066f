# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pairwise results -> records, verdicts, matrices and named culprits (pure).

Input: the side results of every host (the ``sides`` items the
``perftest`` / ``iperf3`` modules return, each with ``host`` and ``round``
added) and optionally the planned jobs (``schedule.round_plan``'s ``jobs``
with ``round``), so a pair whose host never answered still gets a record.

1. One record per pair, rail and test: the client's measurement, and the
   verdict ``error`` (either side failed; the root cause is the side that
   failed to answer, read from how each side ended, ``side_outcome``, and
   kept in ``params.server_outcome`` / ``client_outcome`` / ``failed_side``
   / ``failed_how``; when nothing tells the sides apart the cause names
   neither), ``fail`` (below
   ``min_fraction`` x expected, where expected is the lower link rate of the
   two ports unless given) or ``pass``.
2. Fleet outliers, even when everything passes: per group of comparable
   records (same kind, op, metric, size, rail) a record whose value is
   beyond ``outlier_z`` robust z-scores (median / MAD) from the group's
   median and at least ``outlier_min_rel`` away from it becomes ``warn``;
   one that no expectation judges (latency, a bandwidth without a link
   rate) and that is far worse than the group's best (``thresholds``'
   far rule that needs no fraction) becomes ``fail``, so it is retested;
   per node, the median of its links is compared the same way against the
   other nodes' (this catches a bad node even when it drags half of the
   links down, as in small meshes).
3. Culprits, per kind and rail (``pair_findings.name_culprits``): a node
   with mostly bad links, on every rail (``bad_node``) or some (``bad_nic``),
   a ``bad_link`` no bad node explains, or the whole rail (``fleet``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import good_pairs
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import killed_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import side_outcome as so
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.pair_findings import (
    FIX, missing_rail_findings, name_culprits, sort_key, unreachable_findings)
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import stats as robust
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.thresholds import (
    far_outlier_or_late_rail, far_text, other_rails_best, rate_scales)

# the metric a far outlier's cause gives the figure it was far from in
FAR_METRICS = {"best": "fleet_best", "good": "fleet_good_level", "median": "fleet_median"}
KIND_BY_METRIC = {("rdma", "bw"): "rdma_bw", ("rdma", "lat"): "rdma_lat", ("tcp", "bw"): "tcp_bw"}


def robust_outliers(values, z=robust.OUTLIER_Z, min_rel=robust.OUTLIER_MIN_REL, low=True,
                    floor_rel=robust.SPREAD_FLOOR_REL, min_count=3):
    """Indexes of values that are outliers on the bad side, with their robust z.

    ``low``: bandwidth (bad = low); else latency (bad = high). MAD gets a
    floor of ``floor_rel`` x |median| so identical values do not make every
    small difference an outlier. Returns (median, {index: z}).
    """
    vals = [float(v) for v in values]
    if len(vals) < min_count:
        return (robust.median(vals), {})
    med, spread = robust.spread(vals, floor_rel)
    out = {}
    for idx, value in enumerate(vals):
        score = robust.z_score(value, med, spread)
        if robust.fleet_outlier(score, robust.relative_distance(value, med), low, z, min_rel):
            out[idx] = round(score, 2)
    return (med, out)


def _key(side):
    return (side.get("round"), int(side.get("step") or 0), side.get("rail"))


def _pair_of(side):
    if side.get("role") == "server":
        return side.get("host"), side.get("peer")
    return side.get("peer"), side.get("host")


def _value(kind_metric, side):
    metrics = (side or {}).get("metrics") or {}
    if kind_metric == "lat":
        return metrics.get("lat_us")
    return metrics.get("bw_gbps")


def _side_error(side):
    return side if side is not None and side.get("verdict") == "error" else None


def _evidence(server, client):
    out = []
    for label, side in (("client", client), ("server", server)):
        if side and side.get("cmd"):
            out.append("%s %s: %s" % (label, side.get("host"), " ".join(str(a) for a in side["cmd"])))
        placement = (side or {}).get("placement") or {}
        if placement.get("prefix"):
            out.append("%s %s: pinned with %s (%s)" % (
                label, side.get("host"), " ".join(placement["prefix"]), placement.get("reason")))
        elif placement.get("reason") and placement.get("reason") != "pinning disabled":
            out.append("%s %s: not pinned (%s)" % (label, side.get("host"), placement["reason"]))
        if side and side.get("verdict") == "error":
            for err in (side.get("errors") or [])[:2]:
                if err.get("message"):
                    out.append("%s %s: %s" % (label, side.get("host"), err["message"]))
    return out


def pair_records(sides, jobs=None, family="rdma", min_fraction=0.9, expected_gbps=None):
    """One record per planned (or observed) pair x rail x test step."""
    by_key = {}
    for side in sides or []:
        if not isinstance(side, dict) or not side.get("host"):
            continue
        server, client = _pair_of(side)
        by_key.setdefault(_key(side) + (server, client), {})[side.get("role")] = side
    if jobs is not None:
        keys = []
        for job in jobs:
            key = (job.get("round"), int(job.get("step") or 0), job.get("rail"), job.get("server"), job.get("client"))
            keys.append((key, job))
    else:
        keys = [(key, None) for key in by_key]
    records = []
    for key, job in sorted(keys, key=lambda item: sort_key(item[0])):
        pair = by_key.get(key, {})
        server_side, client_side = pair.get("server"), pair.get("client")
        records.append(_record(key, job, server_side, client_side, family, min_fraction, expected_gbps))
    return records


_PASSED_OPTIONS = ("size", "all_sizes", "duration", "iterations", "qps", "bidirectional", "parallel", "reverse")


def _params(key, ref, family, metric, server_side, client_side, job):
    rnd, step, rail, server, client = key
    params = {"op": ref.get("test") if family == "rdma" else "tcp", "metric": metric, "server": server,
              "client": client, "rail": rail, "round": rnd, "step": step,
              "device": (server_side or {}).get("device") or (job or {}).get("server_device"),
              "peer_device": (client_side or {}).get("device") or (job or {}).get("client_device"),
              "tcp_port": ref.get("tcp_port")}
    for opt in _PASSED_OPTIONS:
        if ref.get(opt) not in (None, False):
            params[opt] = ref.get(opt)
    cmetrics = (client_side or {}).get("metrics") or {}
    if cmetrics.get("bytes") is not None:
        params["size"] = cmetrics["bytes"]
    return params


def _metrics(metric, value, client_side):
    metrics = {}
    cmetrics = (client_side or {}).get("metrics") or {}
    if metric == "lat":
        metrics.update(lat_us=value, lat_avg_us=cmetrics.get("lat_avg_us"), lat_p99_us=cmetrics.get("lat_p99_us"),
                       lat_max_us=cmetrics.get("lat_max_us"))
        return metrics
    metrics["bw_gbps"] = value
    for extra in ("bw_peak_gbps", "sent_gbps", "received_gbps", "retransmits"):
        if cmetrics.get(extra) is not None:
            metrics[extra] = cmetrics[extra]
    return metrics


def _expected(expected_override, server_side, client_side, job):
    """The expected rate: given, else the sides' (client first), else the job's."""
    if expected_override is not None:
        return expected_override
    return (client_side or {}).get("expected_gbps") or (server_side or {}).get("expected_gbps") or \
        (job or {}).get("expected_gbps")


def _add_expected(metrics, expected, value, bidirectional):
    """Bandwidth only: a bidirectional test expects twice the rate. Returns the expected rate to judge by."""
    expected = float(expected) * (2 if bidirectional else 1)
    metrics["expected_gbps"] = expected
    if value is not None and expected:
        metrics["fraction"] = round(value / expected, 4)
    return expected


# What a side reports only because its peer never came (its peer's side is missing: the peer is the cause).
PEER_ABSENT_CODES = frozenset(("server_no_client", "connect_failed"))


def _only_waited_for_peer(side):
    codes = set((e or {}).get("code") for e in side.get("errors") or [])
    return bool(codes) and codes <= PEER_ABSENT_CODES


def _missing_verdict(missing, s_err, c_err):
    cause = ("no result from %s (host unreachable, or its task failed, or its module did not come back within the "
             "task's time bound)" % " and ".join(missing))
    fix = FIX["unreachable"]
    first = s_err or c_err
    if first and not _only_waited_for_peer(first):
        cause = first.get("cause") or cause
        fix = first.get("fix") or fix
    return "error", cause, fix


def _verdict(sides, metric, value, expected, min_fraction):
    """(verdict, cause, fix) of one pair: skipped, error (missing side, side error, no value), fail or pass."""
    (server, server_side), (client, client_side) = sides
    skipped = [side for side in (server_side, client_side) if side and side.get("verdict") == "skipped"]
    s_err, c_err = _side_error(server_side), _side_error(client_side)
    missing = [h for h, side in sides if side is None]
    if skipped and not missing and not (s_err or c_err):
        return "skipped", skipped[0].get("cause") or "not run", None
    if missing:
        return _missing_verdict(missing, s_err, c_err)
    if s_err or c_err:
        return ("error",) + so.error_cause(sides)
    if value is None and client_side is not None:
        return "error", "the client printed no result", "look at the client's output in evidence"
    if metric == "bw" and expected and value < float(expected) * float(min_fraction):
        cause = "%.2f Gb/s is below %.0f%% of the expected %.2f Gb/s" % (value, float(min_fraction) * 100,
                                                                         float(expected))
        return "fail", cause, FIX["bad_link"]
    return "pass", None, None


def _record(key, job, server_side, client_side, family, min_fraction, expected_override):
    server, client = key[3], key[4]
    ref = client_side or server_side or job or {}
    metric = ref.get("metric") or "bw"
    params = _params(key, ref, family, metric, server_side, client_side, job)
    value = _value(metric, client_side)
    metrics = _metrics(metric, value, client_side)
    expected = _expected(expected_override, server_side, client_side, job)
    if expected is not None and metric == "bw":
        expected = _add_expected(metrics, expected, value, ref.get("bidirectional"))
    verdict, cause, fix = _verdict(((server, server_side), (client, client_side)), metric, value, expected,
                                   min_fraction)
    if verdict == "error":
        params.update(so.outcome_params(((server, server_side), (client, client_side))))
    # a topology pattern's job: the leaves of its two ends, and the oversubscription a spine pair is judged by; a
    # loopback's: that it is one (host and peer are one host) and the rails of its two ends
    for name in ("leaves", "oversubscription", "loopback", "rails"):
        if (job or {}).get(name) is not None:
            params[name] = job[name]
    downgraded = (job or {}).get("downgraded_ports") or []
    if downgraded:
        params["downgraded_ports"] = downgraded
        if verdict == "fail":
            cause = "%s; %s" % (cause, downgraded_text(downgraded))
            fix = FIX["downgraded"]
    return {
        "kind": KIND_BY_METRIC.get((family, metric), "%s_%s" % (family, metric)),
        "host": server,
        "peer": client,
        "params": params,
        "metrics": metrics,
        "verdict": verdict,
        "cause": cause,
        "fix": fix,
        "evidence": _evidence(_with_host(server_side, server), _with_host(client_side, client)),
    }


def downgraded_text(ports):
    """'h3 mlx5_0 negotiated 0.25 Gb/s where its like ports run at 0.5 Gb/s' for each downgraded port."""
    return "; ".join("%s %s negotiated %s Gb/s where its like ports (same NIC model and rail) run at %s Gb/s" % (
        p.get("host"), p.get("device"), _num(p.get("rate_gbps")), _num(p.get("like_gbps"))) for p in ports)


def _num(value):
    return "%g" % value if isinstance(value, (int, float)) else str(value)


def _with_host(side, host):
    if side is None:
        return None
    out = dict(side)
    out.setdefault("host", host)
    return out


def _group_key(rec):
    p = rec["params"]
    return (rec["kind"], p.get("op"), p.get("metric"), p.get("size"), p.get("rail"))


def mark_outliers(records, z=robust.OUTLIER_Z, min_rel=robust.OUTLIER_MIN_REL, fleet_min_fraction=None):
    """Flag link outliers and node outliers (see module doc); returns node outliers."""
    groups = {}
    for rec in records:
        value = _record_value(rec)
        if value is None or rec["verdict"] == "error":
            continue
        # a loopback pair (one host's two ports) crosses no other host, a spine pair across leaves (its
        # oversubscription) ran under the load round: each a population of its own
        groups.setdefault(_group_key(rec) + (("loopback",) if rec["params"].get("loopback") else ()) + (
            ("oversubscription",) if rec["params"].get("oversubscription") is not None else ()), []).append(rec)
    node_outliers = []
    rail_bests = other_rails_best(records)
    for gkey, recs in groups.items():
        low = gkey[2] != "lat"
        values = [_record_value(r) for r in recs]
        # a fleet of mixed NIC speeds: each link compared by the fraction of its own expected rate
        rated = rate_scales(recs, low)
        scales = rated or [1.0] * len(recs)
        judged = [value / scale for value, scale in zip(values, scales)]
        med, flagged = robust_outliers(judged, z=z, min_rel=min_rel, low=low)
        for idx, score in flagged.items():
            rec = recs[idx]
            rec["metrics"]["fleet_median"] = med * scales[idx]
            rec["metrics"]["robust_z"] = score
            if rec["verdict"] == "pass":
                rec["verdict"] = "warn"
                rec["cause"] = "fleet outlier: %s is %s than the fleet median %s (robust z %.1f)" % (
                    _fmt(values[idx], gkey[2]), "lower" if low else "higher", _fmt(med * scales[idx], gkey[2]),
                    score)
                rec["fix"] = FIX["outlier"]
        fail_far_outliers(recs, values, low, gkey[2], (z, min_rel, fleet_min_fraction), rail_bests)
        node_outliers += _node_outliers(recs, judged, scales, gkey, (z, min_rel), bool(rated))
    return node_outliers


def _node_outliers(recs, judged, scales, gkey, limits, rated):
    """Per node of one group: the median of its links (``judged``: as the group compares them; ``rated``: as
    fractions of their expected rates) against the other nodes'; a node far below them is a node outlier, and
    its links that are worse than the nodes' median warn."""
    z, min_rel = limits
    low = gkey[2] != "lat"
    per_node = {}
    for rec, value in zip(recs, judged):
        for node in (rec["host"], rec["peer"]):
            per_node.setdefault(node, []).append(value)
    nodes = sorted(per_node)
    scores = [robust.median(per_node[n]) for n in nodes]
    nmed, nflag = robust_outliers(scores, z=z, min_rel=min_rel, low=low, min_count=3)
    out = []
    for idx, score in nflag.items():
        node = nodes[idx]
        out.append({"host": node, "group": gkey, "node_median": scores[idx], "fleet_median": nmed,
                    "robust_z": score, "unit": "fraction of rate" if rated else _unit(gkey[2])})
        for rec, value, scale in zip(recs, judged, scales):
            if node not in (rec["host"], rec["peer"]):
                continue
            worse = value < nmed * (1 - min_rel) if low else value > nmed * (1 + min_rel)
            if worse and rec["verdict"] == "pass":
                rec["verdict"] = "warn"
                rec["cause"] = ("node outlier: %s's links have a median of %s against %s for the fleet's nodes"
                                % (node, _fmt(scores[idx] * scale, gkey[2]), _fmt(nmed * scale, gkey[2])))
                rec["fix"] = FIX["outlier"]
                rec["metrics"]["fleet_median"] = nmed * scale
    return out


def fail_far_outliers(recs, values, low, metric, limits=(robust.OUTLIER_Z, robust.OUTLIER_MIN_REL, None),
                      rail_bests=None):
    """Fail the records that no expectation judges (latency; a bandwidth without a link rate) and that are far
    outliers of their group (``thresholds.far_outlier``; ``limits``: outlier_z, outlier_min_rel and the fleet
    threshold's fleet_min_fraction) or, latency, far above another rail's best (``rail_bests``:
    ``thresholds.other_rails_best`` of the pass).

    The thresholds fail them too, but after the retests are planned: failing here gets them retested, so a
    moment of lateness is ``flaky``, not a late host."""
    outlier_z, min_rel, fraction = limits
    split = good_pairs.host_explained([(rec["host"], rec["peer"]) for rec in recs], values, low, fraction)
    for rec, value in zip(recs, values):
        if rec["verdict"] not in ("pass", "warn") or rec["metrics"].get("expected_gbps") is not None:
            continue
        far, why = far_outlier_or_late_rail(rec, value, values, (low, fraction, outlier_z, min_rel, split),
                                            rail_bests or {})
        if far:
            rec["verdict"] = "fail"
            unit = " us" if metric == "lat" else " Gb/s"
            rec["cause"] = "far fleet outlier: %s" % far_text(value, why, low, len(values), fraction, unit)
            rec["fix"] = FIX["far_outlier"]
            key = next(key for key in ("best", "good", "median") if key in why)
            rec["metrics"][FAR_METRICS[key]] = why[key]


def _unit(metric):
    return "us" if metric == "lat" else "Gb/s"


def _fmt(value, metric):
    if value is None:
        return "n/a"
    return ("%.2f us" % value) if metric == "lat" else ("%.2f Gb/s" % value)


def _record_value(rec):
    m = rec.get("metrics") or {}
    return m.get("lat_us") if rec["params"].get("metric") == "lat" else m.get("bw_gbps")


def matrices(records):
    """One matrix per kind / op / metric / rail / size: hosts and a values grid.

    ``values[i][j]`` is the measurement with hosts[i] as server and hosts[j]
    as client; a pair measured in one direction only fills both cells (the
    link is the same); never-measured cells are null.
    """
    groups = {}
    for rec in records:
        groups.setdefault(_group_key(rec), []).append(rec)
    out = []
    for gkey in sorted(groups, key=sort_key):
        recs = groups[gkey]
        hosts = []
        for rec in recs:
            for h in (rec["host"], rec["peer"]):
                if h not in hosts:
                    hosts.append(h)
        hosts.sort(key=_natural)
        index = dict((h, i) for i, h in enumerate(hosts))
        grid = [[None] * len(hosts) for dummy in hosts]
        verdicts = [[None] * len(hosts) for dummy in hosts]
        measured = set()
        for rec in recs:
            i, j = index[rec["host"]], index[rec["peer"]]
            grid[i][j] = _record_value(rec)
            verdicts[i][j] = rec["verdict"]
            measured.add((i, j))
        for (i, j) in list(measured):
            if (j, i) not in measured:
                grid[j][i] = grid[i][j]
                verdicts[j][i] = verdicts[i][j]
        kind, op, metric, size, rail = gkey
        out.append({"kind": kind, "op": op, "metric": metric, "size": size, "rail": rail,
                    "unit": "us" if metric == "lat" else "Gb/s", "hosts": hosts, "values": grid,
                    "verdicts": verdicts})
    return out


def _natural(text):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", str(text))]


def skipped_records(skipped, family="rdma"):
    """Records for planned pairs that could not run (e.g. no common active port)."""
    out = []
    for item in skipped or []:
        params = {"server": item.get("server"), "client": item.get("client"), "round": item.get("round")}
        if item.get("rail") is not None:
            params["rail"] = item["rail"]
        out.append({"kind": KIND_BY_METRIC.get((family, "bw"), family), "host": item.get("server"),
                    "peer": item.get("client"), "params": params,
                    "metrics": {}, "verdict": "skipped", "cause": item.get("reason"), "fix": None, "evidence": []})
    return out


def analyze_pairs(sides, jobs=None, family="rdma", min_fraction=0.9, expected_gbps=None,
                  outlier_z=robust.OUTLIER_Z, outlier_min_rel=robust.OUTLIER_MIN_REL, unreachable=None, check=None,
                  skipped=None, fleet_min_fraction=None, killed=None):
    """Everything above in one call: records, findings, matrices, summary (``fleet_min_fraction``: the fleet
    threshold's, so that a value it will fail as a far outlier fails here, and is retested; ``killed``: hosts
    whose test module was killed, named as such instead of as culprits)."""
    if not 0 < float(min_fraction) <= 1:
        raise ValueError("min_fraction must be in (0, 1], got %r" % (min_fraction,))
    check = check or ("rdma_perf" if family == "rdma" else "tcp_perf")
    killed = sorted(killed or [])
    records = killed_module.mark_records(pair_records(sides, jobs, family, min_fraction, expected_gbps), killed)
    node_outliers = mark_outliers(records, outlier_z, outlier_min_rel, fleet_min_fraction)
    findings = name_culprits([r for r in records if not killed_module.involves(r, killed)], check) + \
        unreachable_findings(unreachable, check, family) + killed_module.findings(killed, check, family) + \
        missing_rail_findings(skipped, family)
    grids = matrices(records)
    records += skipped_records(skipped, family)
    counts = {}
    for rec in records:
        counts[rec["verdict"]] = counts.get(rec["verdict"], 0) + 1
    summary = {
        "records": len(records),
        "verdicts": counts,
        "bad_nodes": sorted(set(f["host"] for f in findings if f["params"]["finding"] == "bad_node")),
        "bad_nics": sorted(set("%s:%s" % (f["host"], ",".join(f["params"].get("devices") or []) or f["params"]["rail"])
                               for f in findings if f["params"]["finding"] == "bad_nic")),
        "bad_links": sorted("%s-%s" % (f["host"], f["peer"]) for f in findings
                            if f["params"]["finding"] == "bad_link"),
        "fleet": any(f["params"]["finding"] == "fleet" for f in findings),
        "unreachable": sorted(unreachable or []),
        "node_outliers": node_outliers,
        "verdict": _overall(records, findings),
    }
    return {"records": records, "findings": findings, "matrices": grids, "summary": summary}


def _overall(records, findings):
    verdicts = set(r["verdict"] for r in records) | set(f["verdict"] for f in findings)
    for verdict in ("error", "fail", "warn"):
        if verdict in verdicts:
            return verdict
    return "pass" if "pass" in verdicts else "skipped"
