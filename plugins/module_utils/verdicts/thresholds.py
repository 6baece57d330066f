# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Three thresholds for a bandwidth, and which of them tripped (pure).

1. ``hardware``: what the hardware should give. For a pair, the discovered link rate (the lower of the two ports,
   a port that negotiated less than its like ports counted at theirs: ``schedule.pair_rate``; twice that when
   bidirectional) x an efficiency per operation (:data:`DEFAULT_EFFICIENCY`, configurable); for a collective, its
   own pass line when the collective module judged it (``threshold_busbw_gbs``), else rails x link rate / 8 (GB/s)
   x an efficiency per collective (:data:`DEFAULT_COLLECTIVE_EFFICIENCY`), else its nominal ``expected_busbw_gbs``
   x that efficiency. Collective runs are compared with the fleet only within the same library, mode, stage,
   operation, node and rank counts and sizes (per-node runs: node against node).
2. ``fleet``: the record is a low outlier (``stats.fleet_outlier``) among comparable records of the same run (same
   kind, op, metric, size, memory (host or GPU), rail): robust z-score from the median and the MAD below
   ``-outlier_z`` and at least ``outlier_min_rel`` below the median (latency: above); bandwidths by the fraction
   of each record's own expected rate when every record of the group has one (:func:`rate_scales`: a fleet of
   mixed NIC speeds). It is *far* when it is also beyond ``fleet_min_fraction`` of the median: below
   ``fleet_min_fraction`` x the median bandwidth, or above the median latency / ``fleet_min_fraction`` (the pass
   line the hardware check draws, with the fleet median standing in for what the links deliver), so one link at
   40 % of its peers fails even on a first run with no history and no known link rate. A value :data:`BEST_FACTOR`
   times worse than the best quarter of its group (a latency 3 x above it, a bandwidth below a third of it) is a
   far outlier too, however many links share it: one host of a 4-host ring is in half of its rail's pairs, and
   such a share moves the median and the MAD themselves. Latency has no hardware expectation, so this is what
   finds a late NIC there; a bandwidth usually has one. Both far rules need ``fleet_min_fraction`` (without it a
   fleet outlier only warns).
3. ``history``: the value regresses against its own baseline: the median of the same pair's passing values over
   the last ``history_k`` runs, or, when the pair has no history, the median of the host's passing links of that
   kind (its own history baseline). What a regression is, is decided by ``baseline.RegressionRule`` (the report's
   rule): at least ``min_runs`` earlier runs, and a change beyond the larger of ``history_threshold`` (for
   latency: of it and the wider latency default) and the spread of those runs.

:func:`evaluate` annotates records: ``metrics`` gains ``link_rate_gbps``, ``hw_expected_gbps``
(``hw_expected_busbw_gbs`` for collectives), ``fleet_median``, ``robust_z``, ``history_baseline``; the record
gains ``thresholds`` (``tripped``: the names that tripped, and each check's numbers) and an evidence line; the
cause of a bad record ends with ``[thresholds tripped: ...]``. With ``set_verdicts`` a passing record becomes
``fail`` when the hardware threshold tripped or the record is a far fleet outlier, and ``warn`` when only the
fleet (not far) or history one did; ``error``, ``fail``, ``flaky`` and ``skipped`` stay. A latency pair whose
median tripped nothing but whose p99 is a fleet outlier is a ``latency_tail`` finding (``latency_tail``): the
result's ``findings``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.baseline import (
    DEFAULT_MIN_RUNS, HIGHER, LOWER, RegressionRule, is_retest)
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import good_pairs
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import latency_tail
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import stats as robust
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.stats import best_quarter, median, spread as spread_of
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.threshold_text import (
    far_outlier_text, hw_text, tripped_evidence)
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.values import finite_number, fmt_value
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

# atomics move 8-byte messages: their bandwidth is a message rate, not judged against line rate
DEFAULT_EFFICIENCY = {"write": 0.9, "read": 0.9, "send": 0.9, "tcp": 0.9, "atomic": None}
DEFAULT_COLLECTIVE_EFFICIENCY = {"all_reduce": 0.8, "allreduce": 0.8, "all_gather": 0.8, "allgather": 0.8,
                                 "reduce_scatter": 0.8, "reducescatter": 0.8, "broadcast": 0.8, "reduce": 0.8,
                                 "alltoall": 0.6, "all_to_all": 0.6, "sendrecv": 0.8}
CHECKS = ("hardware", "fleet", "history")
# A switch hop adds far less than the latency of a rail's best links, so even the farthest pairs of a rail stay
# within about twice its best, and healthy links of one rail move about the same bandwidth; a link three times
# worse than the best ones has a fault of its own.
BEST_FACTOR = 3.0
# ... and for latency at least this many microseconds above them: on the fastest fabrics (about 1 us between two
# ports of one leaf, 3 us across a three-tier fat tree) 3 x is within the topology, not a fault.
BEST_MIN_LATENCY_GAP_US = 5.0
# memory: GPU- and host-memory results of a link are not alike (gpudirect.py compares them); oversubscription: a
# spine pair across leaves ran under load, apart from the pairs run alone; rail last: other_rails_best drops it
_GROUP_PARAMS = ("op", "metric", "size", "memory", "loopback", "oversubscription", "rail")
_COLLECTIVE_GROUP_PARAMS = ("library", "mode", "variant", "stage", "nodes", "ranks", "min_bytes", "max_bytes", "datatype")
_IDENTITY_SKIP = ("round", "step", "tcp_port", "server", "client", "duration", "iterations", "attempt", "retest",
                  "retest_purpose", "retest_id", "retest_pass", "subject", "partner", "origin", "origins", "suspects")


class ThresholdError(ValueError):
    """Bad configuration (a clear message)."""


def _efficiency_table(defaults, override, name):
    table = dict(defaults)
    if override is None:
        return table
    if isinstance(override, (int, float)) and not isinstance(override, bool):
        # one number: every op that has an efficiency gets it
        number = override
        override = dict((key, number) for key, value in table.items() if value is not None)
        override["default"] = number
    if not isinstance(override, dict):
        raise ThresholdError("%s must be a number or a dict of op -> fraction, got %r" % (name, override))
    for key, value in override.items():
        number = finite_number(value)
        if value is not None and (number is None or not 0 < number <= 1):
            raise ThresholdError("%s[%s] must be a fraction in (0, 1], got %r" % (name, key, value))
        table[str(key).lower()] = number     # efficiency_for looks ops up in lower case ('Write' is write)
    return table


def efficiency_for(op, efficiency=None, collective=False):
    """The efficiency of an op (None: the op is not judged against line rate, e.g. atomics)."""
    table = _efficiency_table(DEFAULT_COLLECTIVE_EFFICIENCY if collective else DEFAULT_EFFICIENCY, efficiency,
                              "collective_efficiency" if collective else "efficiency")
    key = str(op or "").lower()
    if key in table:
        return table[key]
    return table.get("default", 0.8 if collective else 0.9)


def expected_bw(rate_gbps, op, efficiency=None, bidirectional=False):
    """(expected Gb/s, efficiency) for a pair: link rate x efficiency (x2 bidirectional); None if unknown."""
    rate = finite_number(rate_gbps)
    eff = efficiency_for(op, efficiency)
    if rate is None or rate <= 0 or eff is None:
        return None, eff
    return round(rate * eff * (2 if bidirectional else 1), 6), eff


def expected_busbw(rails, rate_gbps, op, efficiency=None):
    """(expected bus bandwidth in GB/s, efficiency) for a collective: rails x rate / 8 x efficiency."""
    rate = finite_number(rate_gbps)
    eff = efficiency_for(op, efficiency, collective=True)
    if rate is None or rate <= 0 or not rails or eff is None:
        return None, eff
    return round(int(rails) * rate / 8.0 * eff, 6), eff


def _metric(rec):
    metrics = rec.get("metrics") or {}
    params = rec.get("params") or {}
    if rec.get("kind") == "collective":
        return "busbw_gbs", finite_number(metrics.get("busbw_gbs")), True
    if params.get("metric") == "lat" or str(rec.get("kind", "")).endswith("_lat"):
        return "lat_us", finite_number(metrics.get("lat_us")), False
    return "bw_gbps", finite_number(metrics.get("bw_gbps")), True


def _group(rec):
    params = rec.get("params") or {}
    if rec.get("kind") == "collective":
        # comparable collective runs: same test on the same number of nodes and ranks
        return (rec.get("kind"),) + tuple(str(params.get(k)) for k in _COLLECTIVE_GROUP_PARAMS) + (str(_op(params)),)
    return (rec.get("kind"),) + tuple(str(params.get(k)) for k in _GROUP_PARAMS)


def _identity(rec):
    params = rec.get("params") or {}
    shown = tuple(sorted((k, str(v)) for k, v in params.items() if k not in _IDENTITY_SKIP))
    return (rec.get("kind"), rec.get("host"), rec.get("peer"), shown)


def history_baselines(history_records, k=5, exclude_run=None):
    """Baselines from history: ``(pairs, hosts)``.

    ``pairs``: identity -> median over the last ``k`` runs of passing values;
    ``hosts``: (host, group) -> median over the last ``k`` runs of the run's
    median value of the host's passing records in that group. Each entry:
    ``{"baseline", "runs", "values"}`` (``values``: one median per run, oldest first).
    """
    per_pair = {}
    per_host = {}
    for rec in history_records or []:
        if not isinstance(rec, dict) or rec.get("verdict") != "pass" or _of_run(rec, exclude_run):
            continue
        if rec.get("kind") in ("summary", "finding", "regression"):
            continue
        name, value, _higher = _metric(rec)
        if value is None:
            continue
        run = rec.get("run_id") or rec.get("time")
        when = rec.get("time") or ""
        entry = per_pair.setdefault(_identity(rec), {}).setdefault(run, [when, []])
        entry[0] = max(entry[0], when)
        entry[1].append(value)
        for node in (rec.get("host"), rec.get("peer")):
            if node:
                hentry = per_host.setdefault((node, _group(rec)), {}).setdefault(run, [when, []])
                hentry[0] = max(hentry[0], when)
                hentry[1].append(value)
    k = max(1, int(k))

    def reduce(table):
        out = {}
        for key, runs in table.items():
            ordered = sorted(runs.items(), key=lambda item: (item[1][0], str(item[0])))[-k:]
            values = [median(vals) for _run, (_when, vals) in ordered]
            out[key] = {"baseline": median(values), "runs": len(ordered), "values": values}
        return out

    return reduce(per_pair), reduce(per_host)


def _of_run(rec, run_id):
    """Whether the record is of the run left out of the history (none named: no record is, one without a run id
    neither)."""
    return run_id is not None and rec.get("run_id") == run_id


def evaluate(records, history=None, efficiency=None, collective_efficiency=None, rates=None,
             outlier_z=robust.OUTLIER_Z, outlier_min_rel=robust.OUTLIER_MIN_REL, history_threshold=0.2, history_k=5,
             min_runs=DEFAULT_MIN_RUNS, set_verdicts=False, run_id=None, fleet_min_fraction=None):
    """Annotated copies of ``records`` and a summary of which thresholds tripped (see module doc).

    ``rates``: ``{host: {rail: Gb/s}}`` (default: each pair record's
    ``expected_gbps``, the lower link rate the pair analysis used);
    ``history``: past records (``commcheck_history`` lookup), ``run_id``: the
    current run (left out of the history). The fleet check judges a first-pass record against its group's
    first-pass records (as when its retests were planned), a retest against the whole group.
    """
    _check_settings(outlier_z, outlier_min_rel, history_threshold, min_runs, efficiency, collective_efficiency)
    _check_fleet_fraction(fleet_min_fraction)
    pair_base, host_base = history_baselines(history, history_k, run_id)
    rule = RegressionRule(threshold=history_threshold, min_runs=min_runs)
    out = [dict(rec, metrics=dict(rec.get("metrics") or {})) for rec in records or []]
    # the retests' tight values (healthy partners) would narrow a group's spread, failing unretested what passed
    first = [rec for rec in out if not is_retest(rec)]
    lines = {False: (_fleet_stats(first, fleet_min_fraction), other_rails_best(first)),
             True: (_fleet_stats(out, fleet_min_fraction), other_rails_best(out))}
    counts = dict((c, 0) for c in CHECKS)
    tripped_records = []
    for rec in out:
        name, value, higher = _metric(rec)
        if not _judged(rec, value):
            continue
        result = {"tripped": []}
        stats, rail_bests = lines[is_retest(rec)]
        result["hardware"] = _hardware_check(rec, value, higher, efficiency, collective_efficiency, rates)
        result["fleet"] = _fleet_check(rec, value, higher, stats, (outlier_z, outlier_min_rel, fleet_min_fraction))
        best = None if result["fleet"].get("far") else late_against_other_rails(rec, value, rail_bests)
        if best is not None:
            # a rail of fewer than three records has no median nor robust z of its own: none is made up for it
            rec["metrics"]["fleet_best"] = best
            result["fleet"].update(checked=True, tripped=True, far=True, best=best, best_factor=BEST_FACTOR,
                                   other_rail=True)
        result["history"] = _history_check(rec, name, value, higher, pair_base, host_base, rule)
        result["tripped"] = [c for c in CHECKS if result[c].get("tripped")]
        rec["thresholds"] = result
        for check in result["tripped"]:
            counts[check] += 1
        if result["tripped"]:
            tripped_records.append(rec)
            _record_trip(rec, result, name, value, set_verdicts)
    tails = latency_tail.judge_tails(out, _group, outlier_z, outlier_min_rel)
    summary = {"records": sum(1 for r in out if "thresholds" in r), "tripped": counts,
               "tripped_records": len(tripped_records),
               "only_fleet_or_history": sum(1 for r in tripped_records
                                            if "hardware" not in r["thresholds"]["tripped"]),
               "hosts_below_history": _hosts_below(out, host_base, rule), "latency_tails": len(tails)}
    return {"records": out, "findings": tails, "summary": summary}


def _check_settings(outlier_z, outlier_min_rel, history_threshold, min_runs, efficiency, collective_efficiency):
    for name, value in (("outlier_z", outlier_z), ("outlier_min_rel", outlier_min_rel),
                        ("history_threshold", history_threshold)):
        if finite_number(value) is None or value < 0:
            raise ThresholdError("%s must be a number >= 0, got %r" % (name, value))
    if isinstance(min_runs, bool) or not isinstance(min_runs, int) or min_runs < 1:
        raise ThresholdError("min_runs must be an integer >= 1, got %r" % (min_runs,))
    _efficiency_table(DEFAULT_EFFICIENCY, efficiency, "efficiency")
    _efficiency_table(DEFAULT_COLLECTIVE_EFFICIENCY, collective_efficiency, "collective_efficiency")


def _check_fleet_fraction(fraction):
    if fraction is not None and (finite_number(fraction) is None or not 0 < fraction <= 1):
        raise ThresholdError("fleet_min_fraction must be a fraction in (0, 1] or None, got %r" % (fraction,))


def _judged(rec, value):
    """Whether a record gets thresholds at all: a value, not a finding or summary, not an error or skipped."""
    return value is not None and rec.get("kind") not in ("finding", "summary") and \
        rec.get("verdict") not in ("error", "skipped")


def _fleet_stats(records, fleet_min_fraction=None):
    """group -> (count, median, spread, best quarter, rated, split) of the comparable records that have a value
    (findings included); best quarter: the value a quarter of the way up from the best (for latency: from the
    lowest); rated: the values are fractions of each record's own expected rate (:func:`rate_scales`); split: the
    good pairs' level when a few hosts explain the far pairs (``good_pairs.host_explained``), else None."""
    groups = {}
    higher_of = {}
    for rec in records:
        _name, value, higher = _metric(rec)
        if value is not None and rec.get("verdict") not in ("error", "skipped"):
            groups.setdefault(_group(rec), []).append((rec, value))
            higher_of[_group(rec)] = higher
    out = {}
    for key, items in groups.items():
        scales = rate_scales([rec for rec, _v in items], higher_of[key])
        values = [value / scale for (_rec, value), scale in zip(items, scales or [1.0] * len(items))]
        split = good_pairs.host_explained([(rec.get("host"), rec.get("peer")) for rec, _v in items], values,
                                          higher_of[key], fleet_min_fraction)
        out[key] = (len(values),) + spread_of(values) + (best_quarter(values, higher_of[key]), bool(scales), split)
    return out


def other_rails_best(records):
    """(latency group without its rail) -> {rail: the best quarter of that rail's latencies}, for the groups
    measured on two rails or more (three records a rail at least)."""
    by_rail = {}
    for rec in records:
        _name, value, higher = _metric(rec)
        params = rec.get("params") or {}
        if higher or value is None or rec.get("verdict") in ("error", "skipped") or params.get("rail") is None:
            continue
        by_rail.setdefault(_group(rec)[:-1], {}).setdefault(str(params.get("rail")), []).append(value)
    out = {}
    for key, rails in by_rail.items():
        bests = dict((rail, best_quarter(values, False)) for rail, values in rails.items() if len(values) >= 3)
        if len(bests) >= 2:
            out[key] = bests
    return out


def late_against_other_rails(rec, value, rail_bests):
    """The best quarter of another rail of the same latency test (``rail_bests``: :func:`other_rails_best`) that
    ``value`` is :data:`BEST_FACTOR` times (and :data:`BEST_MIN_LATENCY_GAP_US`) above, else None.

    Rails built alike answer alike: a rail plane whose every link is late (a PFC storm, a wrong QoS class) is no
    outlier among its own links. The first pass applies it too (``pair_analysis``): such a link is retested."""
    _name, _value, higher = _metric(rec)
    bests = rail_bests.get(_group(rec)[:-1]) if not higher else None
    rail = str((rec.get("params") or {}).get("rail"))
    others = [best for other, best in (bests or {}).items() if other != rail]
    best = min(others) if others else None
    return best if _far_from_best(value, best, False) else None


def rate_scales(records, higher):
    """Each bandwidth record's own expected rate (``metrics.expected_gbps``) when every record of the group has
    one, else an empty list: the group is then compared by the fraction of that rate each record delivers.

    In a fleet of mixed NIC speeds a pair limited by a 200G port delivers half what two 400G ports do, and is
    as healthy; compared by Gb/s its every link would be a far fleet outlier. Latency is compared as measured."""
    if not higher:
        return []
    scales = [finite_number((rec.get("metrics") or {}).get("expected_gbps")) for rec in records]
    return scales if scales and all(scale is not None and scale > 0 for scale in scales) else []


def _own_scale(rec, rated):
    """The factor that turns a fleet statistic of a rated group back into this record's Gb/s (1 when unrated)."""
    return finite_number((rec.get("metrics") or {}).get("expected_gbps")) if rated else 1.0


def _hardware_check(rec, value, higher, efficiency, collective_efficiency, rates):
    """The hardware threshold of one record; the expectation goes into its metrics."""
    if not higher:
        return {"checked": False}
    metrics = rec["metrics"]
    if rec.get("kind") == "collective":
        expected, eff, source = _collective_expectation(rec, collective_efficiency)
        if not expected:
            return {"checked": False}
        metrics["hw_expected_busbw_gbs"] = expected
        return {"checked": True, "expected": expected, "efficiency": eff, "source": source, "value": value,
                "tripped": value < expected}
    params = rec.get("params") or {}
    rate = _rate(rec, rates)
    op = params.get("op") or ("tcp" if rec.get("kind") == "tcp_bw" else None)
    expected, eff = expected_bw(rate, op, efficiency, bool(params.get("bidirectional")) and rates is not None)
    if not expected:
        return {"checked": False}
    metrics["link_rate_gbps"] = rate
    metrics["hw_expected_gbps"] = expected
    return {"checked": True, "link_rate": rate, "efficiency": eff, "expected": expected, "value": value,
            "tripped": value < expected}


def _fleet_check(rec, value, higher, stats, limits):
    """The fleet threshold: a robust outlier on the bad side, far enough from the median (3 records at least).

    ``limits``: (outlier_z, outlier_min_rel, fleet_min_fraction); a tripped
    record is ``far`` when it is beyond ``fleet_min_fraction`` of the median. In a rated group (every record
    with its own expected rate) the record is compared by its fraction of that rate, and the median and best
    shown are the fleet's at this record's rate.
    """
    outlier_z, outlier_min_rel, fraction = limits
    count, med, spread, best, rated, split = stats[_group(rec)]     # every judged record has a value: its group is
    if count < 3:
        return {"checked": False}
    scale = _own_scale(rec, rated)
    value = value / scale
    z = round(robust.z_score(value, med, spread), 2)
    rec["metrics"]["fleet_median"] = med * scale
    rec["metrics"]["robust_z"] = z
    tripped = bool(robust.fleet_outlier(z, robust.relative_distance(value, med), higher, outlier_z, outlier_min_rel))
    result = {"checked": True, "median": med * scale, "robust_z": z, "n": count, "tripped": tripped,
              "far": tripped and _beyond_fraction(value, med, higher, fraction), "min_fraction": fraction}
    if fraction and not result["far"] and _far_from_best(value, best, higher):
        rec["metrics"]["fleet_best"] = best * scale
        result.update(tripped=True, far=True, best=best * scale, best_factor=BEST_FACTOR)
    elif not result["far"] and good_pairs.explained_far(value, split, higher, fraction):
        rec["metrics"]["fleet_good_level"] = split["level"] * scale
        result.update(tripped=True, far=True, good=split["level"] * scale, suspects=split["suspects"])
    return result


def far_outlier(value, values, higher, fraction=None, outlier_z=robust.OUTLIER_Z, outlier_min_rel=robust.OUTLIER_MIN_REL,
                split=None):
    """(far, why) of a value among its comparable ``values`` (three at least) by the fleet check's far rules:
    a robust outlier beyond ``fraction`` of their median, or :data:`BEST_FACTOR` times worse than their best
    quarter (:func:`far_from_best`, the one rule without a fraction), or beyond ``fraction`` of the good pairs'
    level when a few hosts explain the group's far pairs (``split``: ``good_pairs.host_explained`` of the group).
    ``why``: ``{"median": ...}``, ``{"best": ...}`` or ``{"good": ..., "suspects": ...}``, the figure it was far
    from; None when not far.

    What judges a value that no expectation judges before the thresholds do (the first pass, so that it is
    retested; a retest, against the first pass) must be the rule the thresholds apply afterwards: else a value
    between the two lines fails without a retest, and a moment of slowness is called a failure."""
    if len(values) < 3:
        return False, None
    med, spread = robust.spread(values)
    z = robust.z_score(value, med, spread)
    if robust.fleet_outlier(z, robust.relative_distance(value, med), higher, outlier_z, outlier_min_rel) and \
            _beyond_fraction(value, med, higher, fraction):
        return True, {"median": med}
    far, best = far_from_best(value, values, higher)
    if far:
        return True, {"best": best}
    if good_pairs.explained_far(value, split, higher, fraction):
        return True, {"good": split["level"], "suspects": split["suspects"]}
    return False, None


def far_outlier_or_late_rail(rec, value, values, rule, rail_bests):
    """(far, why) of a record's value by the thresholds' far rules: among its comparable ``values``
    (:func:`far_outlier`; ``rule``: higher-is-better, fraction, outlier_z, outlier_min_rel, split) or,
    a latency, against another rail's best (:func:`late_against_other_rails`)."""
    higher, fraction, outlier_z, min_rel, split = rule
    far, why = far_outlier(value, values, higher, fraction, outlier_z, min_rel, split)
    if far:
        return far, why
    best = late_against_other_rails(rec, value, rail_bests)
    return (True, {"best": best, "other_rail": True}) if best is not None else (False, None)


def far_text(value, why, higher, count, fraction, unit="", of="%d comparable records"):
    """'<value> is 3 x or more lower than the best quarter <best> of <count> comparable records' or
    '<value> is below the fleet median <median> x <fraction> of ...' (latency: slower; above median / fraction)."""
    whose = of % count
    if why.get("other_rail"):
        return "%s%s is %s x or more slower than the best quarter %s%s of another rail's comparable records (rails " \
            "built alike answer alike)" % (fmt_value(value), unit, fmt_value(BEST_FACTOR), fmt_value(why["best"]), unit)
    if "good" in why:
        return "%s%s is %s the good pairs' level %s%s %s %s (the pairs without %s) of %s" % (
            fmt_value(value), unit, "below" if higher else "above", fmt_value(why["good"]), unit,
            "x" if higher else "/", fraction, ", ".join(why["suspects"]), whose)
    if "best" in why:
        return "%s%s is %s x or more %s than the best quarter %s%s of %s" % (
            fmt_value(value), unit, fmt_value(BEST_FACTOR), "lower" if higher else "slower",
            fmt_value(why["best"]), unit, whose)
    return "%s%s is %s the fleet median %s%s %s %s of %s" % (
        fmt_value(value), unit, "below" if higher else "above", fmt_value(why["median"]), unit,
        "x" if higher else "/", fraction, whose)


def far_from_best(value, values, higher):
    """(far, best quarter): whether value is :data:`BEST_FACTOR` times worse than the best quarter of ``values``
    (three of them at least), the far-outlier rule that needs no configured fraction."""
    if len(values) < 3:
        return False, None
    best = best_quarter(values, higher)
    return _far_from_best(value, best, higher), best


def _far_from_best(value, best, higher):
    """Whether value is BEST_FACTOR times worse than its group's best quarter (bandwidth: below a third of it,
    latency: three times above it and BEST_MIN_LATENCY_GAP_US more)."""
    if best is None or best <= 0:
        return False
    if higher:
        return value * BEST_FACTOR <= best
    return value >= BEST_FACTOR * best and value - best >= BEST_MIN_LATENCY_GAP_US


def _beyond_fraction(value, med, higher, fraction):
    """Whether value is on the bad side of fraction x median (latency: median / fraction)."""
    if not fraction or med is None or med <= 0:
        return False
    return value < fraction * med if higher else value > med / fraction


def _history_baseline(rec, higher, pair_base, host_base, min_runs):
    """(baseline entry, scope): the pair's own, else the best (for latency: lowest) of its hosts' baselines."""
    base = pair_base.get(_identity(rec))
    if base and base["runs"] >= min_runs:
        return base, "pair"
    candidates = [host_base.get((node, _group(rec))) for node in (rec.get("host"), rec.get("peer")) if node]
    candidates = [c for c in candidates if c and c["runs"] >= min_runs]
    if not candidates:
        return None, "host"
    pick = max if higher else min
    return pick(candidates, key=lambda c: c["baseline"]), "host"


def _judge_history(rule, name, value, higher, base):
    """The regression rule's verdict on value against a history baseline entry (None: not judged)."""
    if not base:
        return None
    return rule.judge(name, value, base["values"], HIGHER if higher else LOWER)


def _history_check(rec, name, value, higher, pair_base, host_base, rule):
    """The history threshold: the record regressed against its baseline (``RegressionRule``)."""
    base, scope = _history_baseline(rec, higher, pair_base, host_base, rule.min_runs)
    verdict = _judge_history(rule, name, value, higher, base)
    if verdict is None:
        return {"checked": False}
    rec["metrics"]["history_baseline"] = verdict["baseline"]
    return {"checked": True, "scope": scope, "baseline": verdict["baseline"], "runs": verdict["runs"],
            "change": verdict["change"], "threshold": verdict["threshold"], "spread": verdict["spread"],
            "tripped": verdict["regressed"]}


def _record_trip(rec, result, name, value, set_verdicts):
    """Evidence, and with ``set_verdicts`` the verdict, of a record whose thresholds tripped; its cause says which."""
    rec["evidence"] = list(rec.get("evidence") or []) + [tripped_evidence(result)]
    if set_verdicts and rec.get("verdict") in ("pass", "warn"):
        if "hardware" in result["tripped"]:
            hw = result["hardware"]
            rec["verdict"] = "fail"
            rec["cause"] = "%s is below the hardware expectation %s (%s)" % (
                fmt_value(value), fmt_value(hw["expected"]), hw_text(hw))
        elif result["fleet"].get("far"):
            rec["verdict"] = "fail"
            rec["cause"] = far_outlier_text(result["fleet"], name, value)
        elif rec.get("verdict") == "pass":
            rec["verdict"] = "warn"
            rec["cause"] = tripped_evidence(result)
    if rec.get("verdict") in ("fail", "warn", "flaky") and "thresholds tripped" not in (rec.get("cause") or ""):
        rec["cause"] = "%s [thresholds tripped: %s]" % (
            rec.get("cause") or rec["verdict"], ", ".join(result["tripped"]))


def _op(params):
    return params.get("op") or params.get("operation")


def _collective_expectation(rec, collective_efficiency):
    """(expected busbw GB/s, efficiency, source) of a collective record; expected None when unknown.

    The run's own pass line (``threshold_busbw_gbs``: its expectation x
    ``min_fraction``, from the collective module) comes first, so the two
    judgements agree; then rails x rate from ``params``; then the run's
    nominal ``expected_busbw_gbs`` x the collective's efficiency.
    """
    params = rec.get("params") or {}
    metrics = rec.get("metrics") or {}
    op = _op(params)
    own = finite_number(metrics.get("threshold_busbw_gbs"))
    if own:
        return own, None, "pass line of the run"
    if params.get("rails") and params.get("rate_gbps"):
        expected, eff = expected_busbw(params["rails"], params["rate_gbps"], op, collective_efficiency)
        return expected, eff, "rails x rate x efficiency"
    nominal = finite_number(metrics.get("expected_busbw_gbs"))
    eff = efficiency_for(op, collective_efficiency, collective=True)
    if nominal and eff:
        return round(nominal * eff, 6), eff, "expected x efficiency"
    return None, eff, None


def _rate(rec, rates):
    params = rec.get("params") or {}
    if rates:
        rail = params.get("rail")
        found = []
        for node in (rec.get("host"), rec.get("peer")):
            table = rates.get(node) or {}
            value = table.get(rail, table.get(str(rail))) if isinstance(table, dict) else table
            if finite_number(value):
                found.append(float(value))
        if found:
            return min(found)
    return finite_number((rec.get("metrics") or {}).get("expected_gbps"))


def _hosts_below(records, host_base, rule):
    """Hosts whose median in a group regressed against their own history baseline (``RegressionRule``)."""
    per_host = {}
    for rec in records:
        if "thresholds" not in rec:
            continue
        name, value, higher = _metric(rec)
        if not higher:
            continue
        for node in (rec.get("host"), rec.get("peer")):
            if node:
                per_host.setdefault((node, _group(rec)), []).append(value)
    out = []
    for (node, group), values in sorted(per_host.items(), key=lambda item: (natural_key(item[0][0]), item[0][1])):
        verdict = _judge_history(rule, "bw_gbps", median(values), True, host_base.get((node, group)))
        if verdict and verdict["regressed"]:
            out.append({"host": node, "group": list(group), "median": verdict["value"],
                        "baseline": verdict["baseline"], "change": verdict["change"], "runs": verdict["runs"]})
    return out
