# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU-memory pairs through the pair check's retests and thresholds (pure).

The records of the pass from GPU memory go through the same retest planner
(``retest_plan.plan_retests``: as is, with known-good partners, control and
cross pairs), the same classification (``retest.classify``) and the same
thresholds (``thresholds.evaluate``, whose groups keep ``memory`` apart, so
GPU-memory results are judged against the fleet of GPU-memory results) as
the host-memory records. One thing differs: with
``commcheck_rdma_gpudirect_pairs: all`` a pair of hosts meets on one rail
once per GPU round, so the planner and the classification, which know a pair
by (server, client, rail, test), each take one GPU round (``params.gpu_slot``)
at a time; the rounds of GPU round k are numbered from
``(k + 1) * ROUND_OFFSET``. Each retest side runs from the GPU its host has in
that GPU round (``planning.gpudirect.gpu_sides``); a partner without a GPU
there is left out. The GPU-memory retests run one pass (no designed passes).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import gpudirect as gpu_plan
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest as rt
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest_plan as rp
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import thresholds as th
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.gpu_localization import is_cuda
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.pair_analysis import analyze_pairs

ROUND_OFFSET = 2000
SUMMARY_KEYS = ("failing_pairs", "planned", "sampled", "as_is", "partner", "control", "cross", "rounds", "skipped",
                "dropped")


def slot_of(rec):
    return int((rec.get("params") or {}).get("gpu_slot") or 0)


def by_slot(records):
    """{GPU round: its GPU-memory records} (first pass and retests alike)."""
    out = {}
    for rec in records or []:
        if isinstance(rec, dict) and is_cuda(rec):
            out.setdefault(slot_of(rec), []).append(rec)
    return out


def plan_gpu_retests(records, host_rails, states, repeats=1, partners=True, base_port=18515,
                     bad_verdicts=rt.BAD_VERDICTS, exclude_hosts=(), max_jobs=200, per_host=None):
    """``plan_retests``' result for the failing GPU-memory pairs, GPU round by GPU round, each retest side from its
    host's GPU of that round: ``{retests, rounds, skipped, summary, hosts}`` (the retests' ``gpu_slot`` says
    which)."""
    out = {"retests": [], "rounds": [], "skipped": [], "summary": dict((key, 0) for key in SUMMARY_KEYS)}
    left = int(max_jobs)
    for slot, recs in sorted(by_slot(records).items()):
        planned = rp.plan_retests(recs, host_rails, repeats, partners, base_port, bad_verdicts, exclude_hosts,
                                  max(left, 0), (slot + 1) * ROUND_OFFSET, False, per_host, True)
        rounds = [_named(gpu_plan.gpu_sides(rnd, states, slot), slot) for rnd in planned["rounds"]]
        rounds = [rnd for rnd in rounds if rnd["jobs"]]
        kept = set(job["retest"]["retest_id"] for rnd in rounds for job in rnd["jobs"])
        for item in planned["retests"]:
            item = dict(item, id=_id(item["id"], slot), gpu_slot=slot)
            if item["id"] in kept:
                out["retests"].append(item)
            else:
                out["skipped"].append({"server": item["server"], "client": item["client"], "rail": item["rail"],
                                       "gpu_slot": slot, "reason": "no GPU to test from on one side"})
        out["rounds"] += rounds
        out["skipped"] += [dict(item, gpu_slot=slot) for item in planned["skipped"]]
        for key in SUMMARY_KEYS:
            out["summary"][key] += int(planned["summary"].get(key) or 0)
        left -= len(planned["retests"])
    out["summary"]["rounds"] = len(out["rounds"])
    out["hosts"] = sorted(set(host for rnd in out["rounds"] for host in rnd["sides"]))
    return out


def _id(retest_id, slot):
    """A retest's id, unique over the GPU rounds (each GPU round's plan numbers its own from r1)."""
    return "g%d-%s" % (slot, retest_id)


def _named(rnd, slot):
    for job in rnd["jobs"]:
        job["retest"] = dict(job["retest"], retest_id=_id(job["retest"]["retest_id"], slot))
    return rnd


def judge_gpu_records(records, retest_sides, plan, pair_options=None, bad_verdicts=None, thresholds=None,
                      fleet_min_fraction=None):
    """``{records, summary}``: the GPU-memory records of the first pass with their retests, classified GPU round by
    GPU round (``retest.classify``), then the thresholds (``thresholds.evaluate`` with ``thresholds``' options,
    None for none) over them all; the retest records carry the GPU params as the first pass's do."""
    bad = tuple(bad_verdicts) if bad_verdicts else rt.BAD_VERDICTS
    rounds = (plan or {}).get("rounds") or []
    jobs = [job for rnd in rounds for job in rnd.get("jobs") or []]
    measured = analyze_pairs(list(retest_sides or []), jobs=jobs, family="rdma", **(pair_options or {}))["records"] \
        if jobs else []
    retest_records = by_slot(gpu_plan.mark_gpu_records(measured, jobs))
    skipped = (plan or {}).get("skipped") or []
    judged = []
    summary = {}
    for slot, recs in sorted(by_slot(records).items()):
        slot_rounds = [rnd for rnd in rounds if any(int(j.get("gpu_slot") or 0) == slot for j in rnd["jobs"])]
        classified = rt.classify(recs, rt.tag_retest_records(retest_records.get(slot) or [], slot_rounds), bad,
                                 [s for s in skipped if int(s.get("gpu_slot") or 0) == slot],
                                 fleet_min_fraction=fleet_min_fraction)
        judged += classified["records"]
        for key, value in classified["summary"].items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                summary[key] = summary.get(key, 0) + value
            elif isinstance(value, list):
                summary[key] = list(summary.get(key) or []) + value
    if thresholds is not None and judged:
        judged = th.evaluate(judged, set_verdicts=True, **thresholds)["records"]
    return {"records": judged, "summary": summary}
