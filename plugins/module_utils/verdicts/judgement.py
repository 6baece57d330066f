# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""After a pair check's first pass: its retests judged, classified, the thresholds and localization (pure).

The RDMA and the TCP checks both turn their first pass into verdicts one can
believe with the same steps, in this order, each handed the one before's
result: the retest sides judged like the first pass
(``pair_analysis.analyze_pairs``), the failing pairs classified flaky or
confirmed (``retest.classify``), the thresholds where the check asks for them
(``thresholds.evaluate``; the TCP check applies them to its first pass
instead), and the faulty components named (``localization``). The records a
check publishes and its verdict follow from :func:`judge_retests`'s result
and :func:`check_verdict`.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization as loc
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization_loopback as loc_loopback
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest as rt
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import stats as robust
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import thresholds as th
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.pair_analysis import analyze_pairs
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.pair_findings import CULPRIT_FINDINGS, name_culprits

# family -> (record kind, check name)
FAMILIES = {"rdma": ("rdma_bw", "rdma_perf"), "tcp": ("tcp_bw", "tcp_perf")}
# the pair kinds of a check beside the one localization names (their culprits: pair_analysis.name_culprits)
OTHER_KINDS = {"rdma": ("rdma_lat",), "tcp": ()}
# worst first: a check's verdict is the worst of its pair records and findings
VERDICT_ORDER = ("error", "fail", "flaky", "warn", "pass")
# the options of thresholds.evaluate a check may set (the others keep their defaults)
THRESHOLD_OPTIONS = ("history", "efficiency", "fleet_min_fraction", "history_threshold", "history_k", "outlier_z",
                     "outlier_min_rel")


class JudgementError(ValueError):
    pass


def judge_retests(records, family, retest_sides=None, plan=None, pair_options=None, bad_verdicts=None,
                  thresholds=None, counter_deltas=None, fleet_min_fraction=None, first_findings=None, topology=None):
    """``{records, findings, other_findings, localized, retests, summary_records}`` of a pair check after its
    retests.

    records: the first pass's judged pair records. retest_sides: the side results of the retest rounds.
    plan: the retest plan (``rounds``, ``skipped``; empty when nothing was retested). pair_options: the
    ``analyze_pairs`` options that judge a retest side (min_fraction, expected_gbps, outlier_z,
    outlier_min_rel; ``outlier_z`` is localization's too). bad_verdicts: the verdicts that were retested. thresholds: ``thresholds.evaluate``
    options (``THRESHOLD_OPTIONS``), or None when the check applied them before. counter_deltas: port
    counter changes, evidence for localization. fleet_min_fraction: the fleet threshold's fraction, for the
    retests no expectation judges (``retest.classify``). first_findings: the first pass's findings; those
    localization does not name again come back as ``other_findings`` (:func:`other_findings`). topology: the
    leaf switch of each host's rails where known (``localization.localize``).
    """
    kind, check = _family(family)
    bad = tuple(bad_verdicts) if bad_verdicts else rt.BAD_VERDICTS
    plan = plan or {}
    rounds = plan.get("rounds") or []
    retest_records = _judged_retest_records(retest_sides, rounds, family, pair_options) if rounds else []
    classified = rt.classify(list(records), rt.tag_retest_records(retest_records, rounds), bad,
                             plan.get("skipped") or [], fleet_min_fraction=fleet_min_fraction)
    judged, tails = (classified["records"], []) if thresholds is None else \
        _with_thresholds(classified["records"], thresholds)
    # a retest-worthy verdict (bad_verdicts may add warn) is not a broken link: localization names fail / error
    localized = loc_loopback.localize_records(judged, kind, loc.BAD_VERDICTS, 0.5, 2,
                                              (pair_options or {}).get("outlier_z", robust.OUTLIER_Z), topology)
    loc.attach_counter_evidence(localized, counter_deltas or [])
    localized["findings"] = loc.finding_records(localized, check, kind) + tails
    localized["summary_record"] = loc.summary_record(localized, check, kind, classified["summary"])
    localized["records"] = loc.annotate_records(judged, localized, kind)
    return {"records": localized["records"], "findings": localized["findings"], "localized": localized,
            "other_findings": other_findings(first_findings or [], judged, family),
            "retests": classified["summary"],
            "summary_records": _summary_records(classified, rt.summary_record(classified, check, kind), localized)}


def other_findings(first_findings, judged, family):
    """The first pass's findings that localization (which names the culprits of the check's main kind) does
    not replace: the culprits of its other pair kinds (RDMA latency beside bandwidth) named again from their
    judged records, and the rest (unreachable hosts, missing rails) as they were.

    A culprit of the first pass is only a reason to retest: a latency pair that passed its retest is flaky, and
    its first-pass "bad link" failed a healthy run (a loaded lab's healthy run was FAIL with one flaky pair).
    """
    kind, check = _family(family)
    renamed = OTHER_KINDS[family]

    def replaced(finding):
        params = finding.get("params") or {}
        return params.get("family") == kind or (
            params.get("family") in renamed and params.get("finding") in CULPRIT_FINDINGS)

    return [f for f in first_findings if not replaced(f)] + name_culprits(
        [rec for rec in judged if rec.get("kind") in renamed], check)


def check_verdict(records, kinds):
    """The worst verdict of the records of these kinds (``skipped`` when none has one of VERDICT_ORDER)."""
    present = set(rec.get("verdict") for rec in records if rec.get("kind") in kinds)
    return next((verdict for verdict in VERDICT_ORDER if verdict in present), "skipped")


def _family(family):
    if family not in FAMILIES:
        raise JudgementError("family must be one of %s, got %r" % (", ".join(sorted(FAMILIES)), family))
    return FAMILIES[family]


def _judged_retest_records(retest_sides, rounds, family, pair_options):
    jobs = [job for rnd in rounds for job in rnd.get("jobs") or []]
    return analyze_pairs(list(retest_sides or []), jobs=jobs, family=family, **(pair_options or {}))["records"]


def judged_retests(records, family, retest_sides, rounds, pair_options=None, fleet_min_fraction=None):
    """The retest records of ``rounds`` (every retest pass's so far) judged as :func:`judge_retests` judges them,
    tagged with their retest parameters: what the next designed retest pass is planned from
    (``retest_design.next_pass``)."""
    _family(family)
    if not rounds:
        return []
    tagged = rt.tag_retest_records(_judged_retest_records(retest_sides, rounds, family, pair_options), rounds)
    reference = rt.first_pass_reference([r for r in records or [] if not rt.is_retest(r)], fleet_min_fraction)
    return [rt.judged_by_first_pass(r, reference, fleet_min_fraction) for r in tagged if rt.is_retest(r)]


def _with_thresholds(records, options):
    """(records judged by the thresholds, their latency-tail findings)."""
    unknown = sorted(set(options) - set(THRESHOLD_OPTIONS))
    if unknown:
        raise JudgementError("unknown threshold options: %s" % ", ".join(unknown))
    evaluated = th.evaluate(records, set_verdicts=True, **options)
    return evaluated["records"], evaluated["findings"]


def noise_summary(record):
    """The retest summary of a check whose confirmed pairs are all within their rails' noise (no component at
    fault): a warning, as those pairs' records are (``localization.within_noise``)."""
    return dict(record, verdict="warn", cause="%s; the failures are within their rails' noise" % record["cause"])


def _summary_records(classified, retest_summary_record, localized):
    """The retest summary when a pair failed, the localization summary when a link was bad or flaky or the
    topology is known (its ``params.topology`` is the report's leaf table, a healthy run's too)."""
    out = [retest_summary_record] if classified["summary"]["failing_pairs"] > 0 else []
    if retest_summary_record["verdict"] == "fail" and localized.get("noisy") and not localized["components"]:
        out = [noise_summary(retest_summary_record)]
    summary = localized["summary"]
    if summary["links_bad"] + summary["links_flaky"] > 0 or localized.get("topology"):
        out.append(localized["summary_record"])
    return out
