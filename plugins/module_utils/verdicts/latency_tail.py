# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A latency pair whose 99th percentile stands out of its fleet's while its median does not (pure).

perftest's latency tests print the median (``t_typical``, a record's ``lat_us``) and the 99 % percentile
(``lat_p99_us``). The median finds a slow path; a pair that is usually fast but now and then stalls (a core
leaving a deep C-state, interrupts served far from the NIC, PFC pauses) has a normal median and a long tail,
and training steps wait for their slowest message. The p99 of a pair is judged against the p99s of its
comparable records (the same group as the fleet threshold: kind, op, metric, size, rail) like the median is
against the medians: a robust z beyond ``outlier_z`` on the slow side AND at least ``outlier_min_rel`` above the
fleet's median p99 AND :data:`TAIL_MIN_GAP_US` above it. Only a pair whose median tripped no threshold is
judged: a median outlier already has its verdict, and one finding says it. The finding, code
:data:`CODE`, is a ``warn``: the pair works, its tail costs time.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import stats as robust
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.values import finite_number, fmt_value

CODE = "latency_tail"
# A p99 is one message in a hundred: a single interrupt or timer tick moves it by about a microsecond on a
# healthy host, which on a 2 us fabric is already 50 %. A tail that matters stalls for more than that.
TAIL_MIN_GAP_US = 2.0
# the check that measures each latency kind (the finding's params.check)
CHECK_OF_KIND = {"rdma_lat": "rdma_perf"}
CAUSE = ("the pair's 99th-percentile latency %s us is %s x its fleet's median p99 %s us (robust z %s, %d "
         "comparable pairs) while its median %s us is normal (fleet median %s us): the pair is usually fast but "
         "stalls now and then: CPU frequency scaling or deep C-states on a host, the NIC's interrupts served on a "
         "busy or far core, PFC pause storms or congestion on the path")
FIX = ("On both hosts: set the performance CPU governor and limit C-states (cpupower frequency-info, "
       "cpupower idle-info; commcheck_cpu_governor), pin the NIC's interrupts to cores of its NUMA node and stop "
       "irqbalance from moving them (/proc/interrupts, set_irq_affinity); on the path: read the pause and ECN "
       "counters (ethtool -S <netdev> | grep -i -e pause -e ecn, the switch ports' PFC counters) for a pause "
       "storm or congestion; then rerun the pair. A tail that follows one host through all its pairs is that host")
_SKIPPED_VERDICTS = ("error", "skipped")


def p99_of(rec):
    """The record's 99th-percentile latency in us (``metrics.lat_p99_us``), None when perftest printed none."""
    return finite_number((rec.get("metrics") or {}).get("lat_p99_us"))


def _first_pass(rec):
    """Whether the record is of the first pass: a retest measures again a pair the median judged, or a partner
    for one, and would count those pairs twice."""
    return not (rec.get("params") or {}).get("retest")


def tail_stats(records, group_of):
    """group -> (count, median p99, floored MAD) of the first-pass records that have a p99 (not error or
    skipped); ``group_of``: the record -> comparable group function of the fleet threshold."""
    groups = {}
    for rec in records:
        p99 = p99_of(rec)
        if p99 is not None and _first_pass(rec) and rec.get("verdict") not in _SKIPPED_VERDICTS:
            groups.setdefault(group_of(rec), []).append(p99)
    return dict((key, (len(values),) + robust.spread(values)) for key, values in groups.items())


def tail_outlier(p99, med, spread, outlier_z=robust.OUTLIER_Z, outlier_min_rel=robust.OUTLIER_MIN_REL):
    """(tripped, robust z) of a p99 against its group's median p99 and spread: a slow-side fleet outlier
    (``stats.fleet_outlier``) that is also :data:`TAIL_MIN_GAP_US` above the median p99."""
    z = round(robust.z_score(p99, med, spread), 2)
    outlier = robust.fleet_outlier(z, robust.relative_distance(p99, med), False, outlier_z, outlier_min_rel)
    return bool(outlier and med > 0 and p99 - med >= TAIL_MIN_GAP_US), z


def _median_is_normal(rec):
    """Whether the pair passed and its median tripped no threshold (else its verdict already says it)."""
    return rec.get("verdict") == "pass" and not (rec.get("thresholds") or {}).get("tripped")


def judge_tails(records, group_of, outlier_z=robust.OUTLIER_Z, outlier_min_rel=robust.OUTLIER_MIN_REL):
    """The :data:`CODE` findings of the judged first-pass latency records (those ``thresholds.evaluate`` gave
    ``thresholds``); each with a p99 in a group of three gains ``thresholds.tail`` and
    ``metrics.fleet_median_p99_us``, a tail outlier an evidence line. Records are changed in place."""
    stats = tail_stats(records, group_of)
    findings = []
    for rec in records:
        p99 = p99_of(rec)
        count, med, spread = stats.get(group_of(rec), (0, None, None))
        if p99 is None or count < 3 or "thresholds" not in rec or not _first_pass(rec):
            continue
        tripped, z = tail_outlier(p99, med, spread, outlier_z, outlier_min_rel)
        tripped = tripped and _median_is_normal(rec)
        rec["metrics"]["fleet_median_p99_us"] = med
        rec["thresholds"]["tail"] = {"checked": True, "p99": p99, "median": med, "robust_z": z, "n": count,
                                     "tripped": tripped}
        if tripped:
            finding = tail_finding(rec, p99, med, z, count)
            rec["evidence"] = list(rec.get("evidence") or []) + finding["evidence"]
            findings.append(finding)
    return findings


def tail_finding(rec, p99, fleet_p99, z, count):
    """The ``warn`` finding of one pair's latency tail, with the p99, the fleet's median p99 and the pair's
    median (and the fleet's) as its numbers."""
    params = rec.get("params") or {}
    metrics = rec.get("metrics") or {}
    own, fleet = finite_number(metrics.get("lat_us")), finite_number(metrics.get("fleet_median"))
    evidence = "latency tail: p99 %s us against the fleet median p99 %s us of %d (robust z %s); median %s us " \
        "(fleet median %s us)" % (fmt_value(p99), fmt_value(fleet_p99), count, z, fmt_value(own), fmt_value(fleet))
    return {
        "kind": "finding", "host": rec.get("host"), "peer": rec.get("peer"),
        "params": dict(dict((key, params[key]) for key in ("op", "size", "rail", "device", "peer_device", "memory")
                            if params.get(key) is not None),
                       check=CHECK_OF_KIND.get(rec.get("kind"), rec.get("kind")), finding=CODE, family=rec.get("kind")),
        "metrics": {"p99_us": p99, "fleet_median_p99_us": fleet_p99, "lat_us": own, "fleet_median_us": fleet,
                    "robust_z": z, "n": count},
        "verdict": "warn",
        "cause": CAUSE % (fmt_value(p99), fmt_value(p99 / fleet_p99), fmt_value(fleet_p99), z, count,
                          fmt_value(own), fmt_value(fleet)),
        "fix": FIX, "evidence": [evidence],
    }
