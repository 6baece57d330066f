# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Retests of failing pairs, and what they say (pure).

Before anything is blamed, every failing pair (a pair record whose verdict
is in ``bad_verdicts``) is measured again:

- ``as_is``: the same server, client, rail and test, ``repeats`` times;
- ``partner``: each side of the pair with a host that passed (a *known-good*
  partner on that rail), keeping its role, ``repeats`` times, so a side that
  fails with everyone is told apart from a path that fails only between the
  two.

:func:`retest_plan.plan_retests` turns the failing records into retest jobs
and packs them into rounds (the planner lives there). :func:`tag_retest_records` marks the
records measured in those rounds (``params.retest`` and friends), and
:func:`classify` puts originals and retests together: a failing pair that
passes on an *as is* retest is ``flaky`` (its record's verdict becomes
``flaky``), unless it failed in more of its measurements than it passed (a
flapping port: it failed again after it passed): then, like one that fails
every time, it is ``confirmed``. A retest that no
expectation judges (latency) is judged against the first pass's comparable
records (:func:`judged_by_first_pass`), not among the retests.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import good_pairs
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.run_verdict import (
    RETEST_SUFFIX, is_remeasurement)
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.stats import OUTLIER_MIN_REL, OUTLIER_Z
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.thresholds import (
    far_outlier_or_late_rail, far_text, other_rails_best)
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.values import fmt_value
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

BAD_VERDICTS = ("fail", "error")
PURPOSES = ("as_is", "partner", "control", "cross")
# pairs the first pass did not measure, planned to tell hosts from the fabric: links of their own, no retest of one
SEPARATING = ("control", "cross")
RETEST_PARAMS = ("retest", "retest_purpose", "attempt", "subject", "partner", "origin")


class RetestError(ValueError):
    """Bad input to the retest planner (a clear message, never a traceback)."""


def rail_number(value):
    """A rail as a number (0 when none is given)."""
    return 0 if value in (None, "") else int(value)


def is_retest(record):
    """A retest record: ``params.retest`` set, or a kind ending in ``_retest`` (``run_verdict.is_remeasurement``,
    the one rule the report and the history count by too). Retest records get their own kind (rdma_bw_retest) so
    heat maps, baselines and counts of a check's pairs see the planned pairs only."""
    return is_remeasurement(record)


def pair_id(server, client, rail, op, metric):
    """'h1-h2 rail 0 write bw': how a failing pair is named in summaries."""
    return "%s-%s rail %s %s %s" % (server, client, rail, op, metric)


def test_of(rec):
    """(op, metric) of a pair record (metric ``bw`` when none is given)."""
    params = rec.get("params") or {}
    return params.get("op"), params.get("metric") or "bw"


def tag_retest_records(records, rounds):
    """Copies of the records measured in retest ``rounds`` with the retest params added.

    Their kind gets the suffix ``_retest`` (``rdma_bw`` -> ``rdma_bw_retest``).

    A record matches a job by (server, client, rail, op, metric) and round
    (``params.round`` against the job's ``round`` when both have one).
    Records that match nothing are returned unchanged.
    """
    jobs = {}
    for num, rnd in enumerate(rounds or []):
        for job in rnd.get("jobs") or []:
            key = (job.get("server"), job.get("client"), rail_number(job.get("rail")), job.get("test"),
                   job.get("metric") or "bw")
            jobs.setdefault(key, []).append((job.get("round", num), job))
    out = []
    for rec in records or []:
        rec = dict(rec)
        params = dict(rec.get("params") or {})
        key = (rec.get("host"), rec.get("peer"), rail_number(params.get("rail")), params.get("op"),
               params.get("metric") or "bw")
        found = jobs.get(key) or []
        match = [job for num, job in found if params.get("round") in (None, num)] or [job for _n, job in found]
        if match:
            params.update(match[0]["retest"])
            rec["params"] = params
            if not str(rec.get("kind") or "").endswith(RETEST_SUFFIX):
                rec["kind"] = "%s%s" % (rec.get("kind"), RETEST_SUFFIX)
        out.append(rec)
    return out


def classify(records, retest_records=None, bad_verdicts=BAD_VERDICTS, skipped=None, fleet_min_fraction=None):
    """Originals plus retests -> updated records, per-pair outcomes and a summary.

    ``records``: the original pair records (retest records among them are
    taken as retests). ``retest_records``: records tagged by
    :func:`tag_retest_records`. ``skipped``: the plan's ``skipped`` (pairs
    left out by ``per_host`` sampling take the outcome of their bad host's
    retested pairs when those all agree); ``fleet_min_fraction``: the fleet
    threshold's, for the retests no expectation judges
    (:func:`judged_by_first_pass`). Returns ``{"records": originals
    (flaky ones with verdict ``flaky``) + retests, "pairs": [...],
    "summary": {...}}``.
    """
    originals = [r for r in records or [] if not is_retest(r)]
    reference = first_pass_reference(originals, fleet_min_fraction)
    retest_records = [judged_by_first_pass(r, reference, fleet_min_fraction) for r in retest_records or []]
    retests = [r for r in records or [] if is_retest(r)] + [r for r in retest_records if is_retest(r)]
    as_is, partner = _index_retests(retests)
    out, pairs = _judge_originals(originals, as_is, partner, bad_verdicts)
    _infer_sampled(pairs, skipped)
    for outcome in pairs:
        _apply_outcome(out[outcome.pop("record")], outcome)
    as_is_count = sum(len(v) for v in as_is.values())
    separating = dict((purpose, sum(1 for r in retests if (r.get("params") or {}).get("retest_purpose") == purpose))
                      for purpose in SEPARATING)
    summary = {
        "retests": len(retests),
        "as_is": as_is_count,
        "partner": len(retests) - as_is_count - sum(separating.values()),
        "control": separating["control"],
        "cross": separating["cross"],
        "failing_pairs": len(pairs),
        "confirmed": [p["id"] for p in pairs if p["status"] == "confirmed"],
        "flaky": [p["id"] for p in pairs if p["status"] == "flaky"],
        "not_retested": [p["id"] for p in pairs if p["status"] == "not_retested"],
    }
    return {"records": out + list(retest_records or []), "pairs": pairs, "summary": summary}


def _comparable(rec):
    """What a record is compared with: its kind (a retest's as the first pass's), test, size and rail."""
    params = rec.get("params") or {}
    kind = str(rec.get("kind") or "")
    if kind.endswith(RETEST_SUFFIX):
        kind = kind[:-len(RETEST_SUFFIX)]
    return (kind, params.get("op"), params.get("metric") or "bw", params.get("size"), rail_number(params.get("rail")))


def first_pass_reference(originals, fleet_min_fraction=None):
    """What a retest is judged against: ``groups``: comparable -> (the values of the first pass's records that
    ran, their split: the good pairs' level when a few hosts explain the far ones, ``good_pairs.host_explained``,
    else None); ``rail_bests``: the best quarter of each rail's latencies (``thresholds.other_rails_best``)."""
    pairs = {}
    for rec in originals:
        value = _value(rec)
        if rec.get("peer") and value is not None and rec.get("verdict") not in ("error", "skipped"):
            pairs.setdefault(_comparable(rec), []).append(((rec.get("host"), rec.get("peer")), value))
    groups = dict((key, ([value for _pair, value in items], good_pairs.host_explained(
        [pair for pair, _value in items], [value for _pair, value in items], key[2] != "lat", fleet_min_fraction)))
        for key, items in pairs.items())
    return {"groups": groups, "rail_bests": other_rails_best(originals)}


def judged_by_first_pass(rec, reference, fleet_min_fraction=None):
    """A retest that no expectation judges (latency; a bandwidth without a link rate), judged against the first
    pass's comparable records, by the rules that failed the first pass's (``thresholds.far_outlier_or_late_rail``,
    with the fleet threshold's ``fleet_min_fraction``): the retests alone are no fleet (a late host's retests are
    all late)."""
    value = _value(rec)
    metric = (rec.get("params") or {}).get("metric") or "bw"
    if value is None or rec.get("verdict") in ("error", "skipped") or \
            (rec.get("metrics") or {}).get("expected_gbps") is not None:
        return rec
    values, split = reference["groups"].get(_comparable(rec)) or ([], None)
    if len(values) < 3:
        return rec
    as_first_pass = dict(rec, kind=_comparable(rec)[0])
    far, why = far_outlier_or_late_rail(as_first_pass, value, values, (
        metric != "lat", fleet_min_fraction, OUTLIER_Z, OUTLIER_MIN_REL, split), reference["rail_bests"])
    if far == (rec.get("verdict") == "fail"):
        return rec
    if not far:
        return dict(rec, verdict="pass", cause=None, fix=None)
    return dict(rec, verdict="fail", fix=rec.get("fix"),
                cause=far_text(value, why, metric != "lat", len(values), fleet_min_fraction,
                               of="the first pass's %d comparable records"))


def _index_retests(retests):
    """``(as_is, partner)``: as-is retests by (server, client, rail, op, metric), partner retests by
    (origin 'server-client', rail, op, metric), each origin they serve."""
    as_is = {}
    partner = {}
    for rec in retests:
        params = rec.get("params") or {}
        op, metric = test_of(rec)
        rail = rail_number(params.get("rail"))
        if params.get("retest_purpose") in SEPARATING:
            continue
        if params.get("retest_purpose") == "partner":
            for origin in params.get("origins") or [params.get("origin")]:
                partner.setdefault((origin, rail, op, metric), []).append(rec)
        else:
            as_is.setdefault((rec.get("host"), rec.get("peer"), rail, op, metric), []).append(rec)
    return as_is, partner


def _judge_originals(originals, as_is, partner, bad_verdicts):
    """Copies of the originals (a bad pair's with the retest evidence) and the outcome of each bad pair;
    ``record`` in an outcome is its record's index."""
    pairs = []
    out = []
    for rec in originals:
        rec = dict(rec)
        op, metric = test_of(rec)
        rail = rail_number((rec.get("params") or {}).get("rail"))
        if rec.get("peer") and rec.get("verdict") in bad_verdicts:
            again = sorted(as_is.get((rec["host"], rec["peer"], rail, op, metric)) or [],
                           key=lambda r: (r.get("params") or {}).get("attempt") or 0)
            partners = partner.get(("%s-%s" % (rec["host"], rec["peer"]), rail, op, metric)) or []
            outcome = _outcome(rec, again, partners, bad_verdicts)
            outcome["record"] = len(out)
            pairs.append(outcome)
            rec["evidence"] = list(rec.get("evidence") or []) + outcome["evidence"]
            rec["metrics"] = dict(rec.get("metrics") or {}, retests=len(again) + len(partners))
        out.append(rec)
    return out, pairs


def _apply_outcome(rec, outcome):
    """A flaky pair's record becomes ``flaky``; an inferred outcome replaces its 'not retested' evidence."""
    if outcome["status"] == "flaky":
        if outcome.get("inferred_from"):
            rec["cause"] = "flaky (inferred): %s, and every retested pair of %s on rail %s passed" % (
                rec.get("cause") or rec["verdict"], outcome["inferred_from"], outcome["rail"])
        else:
            rec["cause"] = "flaky: %s, then passed on retest %s of %d" % (
                rec.get("cause") or rec["verdict"], outcome["first_pass"], len(outcome["as_is"]))
        rec["verdict"] = "flaky"
        rec["fix"] = ("a transient problem, not a persistent fault: watch this pair's port counters and "
                      "history; it is a failure when it keeps coming back")
    if outcome.get("inferred_from"):
        rec["evidence"] = [e for e in rec["evidence"] if e != "not retested"] + [
            "not retested itself: %s (inferred from the retested pairs of %s)" % (
                outcome["status"], outcome["inferred_from"])]


def _infer_sampled(pairs, skipped):
    """A pair left out of the retests by ``per_host`` sampling takes the outcome of its bad host's retested pairs
    when they all agree (all confirmed, or all flaky); ``inferred_from`` names that host."""
    left_out = {}
    for item in skipped or []:
        if isinstance(item, dict) and item.get("sampled_host"):
            left_out[(item.get("server"), item.get("client"), rail_number(item.get("rail")), item.get("test"),
                      item.get("metric") or "bw")] = item["sampled_host"]
    if not left_out:
        return
    by_host = {}
    for outcome in pairs:
        if outcome["status"] in ("confirmed", "flaky"):
            for host in (outcome["server"], outcome["client"]):
                by_host.setdefault((host, outcome["rail"], outcome["op"], outcome["metric"]), set()).add(
                    outcome["status"])
    for outcome in pairs:
        host = left_out.get((outcome["server"], outcome["client"], outcome["rail"], outcome["op"], outcome["metric"]))
        if outcome["status"] != "not_retested" or not host:
            continue
        statuses = by_host.get((host, outcome["rail"], outcome["op"], outcome["metric"]))
        if statuses and len(statuses) == 1:
            outcome["status"] = list(statuses)[0]
            outcome["inferred_from"] = host


def _value(rec):
    metrics = rec.get("metrics") or {}
    if (rec.get("params") or {}).get("metric") == "lat":
        return metrics.get("lat_us")
    return metrics.get("bw_gbps")


def did_not_pass(bad_verdicts):
    """The verdicts of a retest that count against its pair: the retested ones, and an ``error`` always.

    ``bad_verdicts`` says which first-pass verdicts were retested (errors are not, by default); a retest that
    then ends in an error did not pass either. A pair that failed and whose retest errored is no moment: read
    as a pass, it had been called flaky."""
    return tuple(bad_verdicts) + (() if "error" in bad_verdicts else ("error",))


def _outcome(rec, again, partners, bad_verdicts):
    params = rec.get("params") or {}
    op, metric = test_of(rec)
    rail = rail_number(params.get("rail"))
    bad_verdicts = did_not_pass(bad_verdicts)
    verdicts = [r.get("verdict") for r in again]
    first_pass = next((num + 1 for num, r in enumerate(again) if r.get("verdict") not in bad_verdicts), None)
    if not again:
        status, evidence = "not_retested", ["not retested"]
    else:
        status = "confirmed" if fails_most([rec.get("verdict")] + verdicts, bad_verdicts) else "flaky"
        evidence = ["retest as is: %s (%s)" % (", ".join(verdicts), "/".join(fmt_value(_value(r)) for r in again))]
    implicated, cleared, lines = _partner_blame(partners, bad_verdicts)
    evidence += lines
    if status == "confirmed":
        if implicated:
            evidence.append("also fails with a known-good partner: %s" % ", ".join(implicated))
        elif len(cleared) == 2:
            evidence.append("both sides pass with known-good partners: the path between them is at fault")
    return {"id": pair_id(rec["host"], rec["peer"], rail, op, metric), "server": rec["host"], "client": rec["peer"],
            "rail": rail, "op": op, "metric": metric, "original": rec.get("verdict"), "status": status,
            "as_is": verdicts, "first_pass": first_pass, "implicated": implicated, "cleared": cleared,
            "partner_retests": len(partners), "evidence": evidence}


def fails_most(verdicts, bad_verdicts=BAD_VERDICTS):
    """Whether a test failed in more of its measurements (the first pass and its as-is retests) than it passed.

    A failure that passes one retest is a moment (flaky); one that keeps coming back after it passed, failing
    twice of three, is a port that flaps: it fails, whatever one retest in between said."""
    bad = sum(1 for verdict in verdicts if verdict in bad_verdicts)
    return 2 * bad > len(verdicts)


def _partner_blame(partners, bad_verdicts):
    """(implicated, cleared, evidence) from the partner retests: a side that fails in at least half of its
    retests with known-good partners is implicated, one that never fails is cleared."""
    blame = {}
    evidence = []
    for r in partners:
        rp = r.get("params") or {}
        subject = rp.get("subject")
        blame.setdefault(subject, []).append(r.get("verdict") in bad_verdicts)
        evidence.append("retest of %s with known-good %s: %s %s" % (subject, rp.get("partner"), r.get("verdict"),
                                                                    fmt_value(_value(r))))
    implicated = sorted((h for h, bads in blame.items() if bads and sum(bads) * 2 >= len(bads)), key=natural_key)
    cleared = sorted((h for h, bads in blame.items() if bads and not any(bads)), key=natural_key)
    return implicated, cleared, evidence


def summary_record(classified, check="rdma_perf", kind="rdma_bw"):
    """A ``retest_summary`` record: how many retests ran and which pairs they confirmed."""
    summary = classified.get("summary") or {}
    confirmed = summary.get("confirmed") or []
    flaky = summary.get("flaky") or []
    verdict = "fail" if confirmed else ("flaky" if flaky else "pass")
    if not summary.get("failing_pairs"):
        verdict = "pass"
    cause = "%d retest(s) of %d failing pair(s): %d confirmed, %d flaky, %d not retested" % (
        summary.get("retests", 0), summary.get("failing_pairs", 0), len(confirmed), len(flaky),
        len(summary.get("not_retested") or []))
    evidence = ["confirmed: %s" % p for p in confirmed] + ["flaky: %s" % p for p in flaky] + \
        ["not retested: %s" % p for p in summary.get("not_retested") or []]
    return {"kind": "retest_summary", "host": "*", "peer": None, "params": {"check": check, "family": kind},
            "metrics": {"retests": summary.get("retests", 0), "as_is_retests": summary.get("as_is", 0),
                        "partner_retests": summary.get("partner", 0),
                        "failing_pairs": summary.get("failing_pairs", 0), "confirmed_pairs": len(confirmed),
                        "flaky_pairs": len(flaky)},
            "verdict": verdict, "cause": cause, "fix": None, "evidence": evidence}
