# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Retests of failing collective runs before anything is blamed (pure): which runs run again, and what they say.

Every collective mode is retested (a pool run with bisection retests itself in the module, ``bisection.py``):

- ``per_node``: a node whose own run failed runs again as is, ``repeats`` times;
- ``pairs``: a failing pair runs again as is, and each side with a known-good partner (a host whose pairs passed),
  ``repeats`` times each, planned by ``retest_plan.plan_retests`` as the RDMA pairs are;
- ``pool`` without bisection: the pool runs again once as it was.

A run is retested when its first-pass verdict (the module's, then the fleet's and history's) is one of the retested
verdicts, and it ran and failed for a reason a run again could change: a launch refusal no run avoids
(``collective_plan.global_error``), a run whose launcher's errors named its bad host, and a pool the module bisected
are not.

What the retests say is ``retest.classify``'s, through a view of each collective record in the pair records'
shape (:func:`view`: its two ends, ``op`` the operation, ``metric`` ``busbw``, one rail): a failure that passes
on a retest as is is ``flaky``, one that fails again is confirmed; a pair side that fails with its known-good
partners is implicated (:func:`findings` names it), and a confirmed pair whose sides both pass with known-good
partners is the link between them.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.collective_plan import global_error
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest as rt
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest_plan as rp

# the params a retest record carries beyond its first pass's (DESIGN.md's record contract: same keys otherwise)
RETEST_KEYS = ("retest", "retest_purpose", "attempt", "origin", "origins", "retest_id", "subject", "partner")
# a pool without bisection is retested once as it was: a second as-is retest of a whole pool tells nothing more
POOL_REPEATS = 1


def run_key(hosts, operation):
    """How a run is named among the runs of a check: its hosts, in order, and its operation."""
    return tuple(hosts or ()), operation


def record_key(record):
    params = record.get("params") or {}
    return run_key(params.get("hosts") or [record.get("host")], params.get("operation"))


def retestable(results):
    """The keys (:func:`run_key`) of the module results a retest could change: a run was made, no bisection
    ran (it retests a pool itself), the launcher's errors named no host, and no error no run avoids."""
    keys = set()
    for res in results or []:
        if not isinstance(res, dict) or res.get("skipped") or not res.get("runs"):
            continue
        if res.get("bisect") is not None or res.get("bad_nodes") or global_error(res):
            continue
        params = res.get("params") or {}
        keys.add(run_key(params.get("hosts") or [], params.get("operation")))
    return keys


def first_pass(records):
    """The first pass's run records: one per module result (its first run, ``stage`` pool), no retests."""
    return [rec for rec in records or [] if isinstance(rec, dict) and rec.get("kind") == "collective"
            and (rec.get("params") or {}).get("stage") == "pool" and not rt.is_retest(rec)]


def _ends(hosts):
    """(host, peer) of a run's view: a pair's two hosts, a node with itself, a pool's first host and the rest."""
    hosts = [str(h) for h in hosts]
    if len(hosts) == 1:
        return hosts[0], hosts[0]
    return hosts[0], ",".join(hosts[1:])


def view(record, retested=True):
    """A collective run record in the shape ``retest.classify`` and ``retest_plan`` read (a pair record).

    ``retested``: False for a run no retest could change (see :func:`retestable`): its verdict reads
    ``skipped``, so it is neither retested nor counted as a good link. A run the module judged against its own
    pass line keeps that judgement (``expected_gbps``); one without is judged against the first pass's runs."""
    params = record.get("params") or {}
    metrics = record.get("metrics") or {}
    host, peer = _ends(params.get("hosts") or [record.get("host")])
    # a node's IB loopback run is a test of its own beside the node's run of the same operation
    own = {"op": " ".join(str(p) for p in (params.get("operation"), params.get("variant")) if p is not None),
           "metric": "busbw", "rail": 0}
    own.update((key, params[key]) for key in RETEST_KEYS if key in params)
    return {"kind": "collective", "host": host, "peer": peer, "params": own,
            "metrics": {"bw_gbps": metrics.get("busbw_gbs"), "expected_gbps": metrics.get("threshold_busbw_gbs")},
            "verdict": record.get("verdict") if retested else "skipped", "cause": record.get("cause"),
            "fix": record.get("fix"), "evidence": []}


def plan(records, results, mode, repeats=1, partners=True, verdicts=("fail",)):
    """The retests of the failing runs: ``{"retests": [item], "skipped": [...], "summary": {...}}``.

    ``records``: the first pass's records, judged (fleet, history); ``results``: its module results. An item:
    ``id``, ``purpose`` (``as_is`` / ``partner``), ``attempt``, ``hosts`` (the run's, in launch order),
    ``operation``, ``origin`` (the hosts of the failing run), and a partner retest's ``subject`` and ``partner``;
    ``params``: what its records carry (``retest``, ``retest_purpose``, ``attempt``, ``origin``, ...).
    ``repeats`` 0 retests nothing."""
    _check(repeats, verdicts)
    keys = retestable(results)
    firsts = first_pass(records)
    failing = [rec for rec in firsts if record_key(rec) in keys and rec.get("verdict") in verdicts]
    if not repeats or not failing:
        return {"retests": [], "skipped": [], "summary": _summary([], [], len(failing))}
    if mode == "pairs":
        items, skipped = _pair_items(firsts, keys, repeats, partners, verdicts)
    else:
        count = POOL_REPEATS if mode == "pool" else repeats
        items = [dict(_item("as_is", attempt, list(rec["params"]["hosts"]), rec["params"].get("operation"),
                            list(rec["params"]["hosts"])), variant=rec["params"].get("variant"))
                 for rec in failing for attempt in range(1, count + 1)]
        skipped = []
    for number, item in enumerate(items):
        item["id"] = "c%d" % (number + 1)
        item["params"] = _params(item)
    return {"retests": items, "skipped": skipped, "summary": _summary(items, skipped, len(failing))}


def _check(repeats, verdicts):
    if isinstance(repeats, bool) or not isinstance(repeats, int) or not 0 <= repeats <= rp.MAX_REPEATS:
        raise rt.RetestError("repeats must be an integer from 0 to %d, got %r" % (rp.MAX_REPEATS, repeats))
    if not isinstance(verdicts, (list, tuple)) or not all(isinstance(v, str) for v in verdicts):
        raise rt.RetestError("verdicts must be a list of verdicts, got %r" % (verdicts,))


def _pair_items(firsts, keys, repeats, partners, verdicts):
    """The pairs' retests as ``retest_plan.plan_retests`` plans the RDMA pairs' (as is, then each side with a
    known-good partner); the pairs that separate hosts from the fabric where no host passed are not run here."""
    views = [view(rec, record_key(rec) in keys) for rec in firsts]
    planned = rp.plan_retests(views, None, repeats, partners, bad_verdicts=tuple(verdicts))
    items, skipped, partnered = [], list(planned["skipped"]), {}
    for entry in planned["retests"]:
        if entry["purpose"] not in ("as_is", "partner"):
            skipped.append({"server": entry["server"], "client": entry["client"], "reason": "%s pairs (no host "
                            "passed every pair) are not retested for collectives" % entry["purpose"]})
            continue
        origins = [[o["server"], o["client"]] for o in entry["origins"]]
        # a collective has no server and client: a side's run with its partner serves each pair it failed in
        same = (entry["subject"], entry["partner"], entry["test"], entry["attempt"])
        if entry["purpose"] == "partner" and same in partnered:
            partnered[same]["origins"].extend(o for o in origins if o not in partnered[same]["origins"])
            continue
        item = _item(entry["purpose"], entry["attempt"], [entry["server"], entry["client"]], entry["test"],
                     origins[0], entry.get("subject"), entry.get("partner"))
        item["origins"] = origins
        if entry["purpose"] == "partner":
            partnered[same] = item
        items.append(item)
    return items, skipped


def _item(purpose, attempt, hosts, operation, origin, subject=None, partner=None):
    return {"id": None, "purpose": purpose, "attempt": attempt, "hosts": list(hosts), "operation": operation,
            "origin": list(origin), "origins": [list(origin)], "subject": subject, "partner": partner}


def _origin_text(hosts):
    """An origin as the views name it ('server-client' of :func:`view`'s ends)."""
    return "%s-%s" % _ends(hosts)


def _params(item):
    params = {"retest": True, "retest_purpose": item["purpose"], "attempt": item["attempt"],
              "origin": _origin_text(item["origin"]), "retest_id": item["id"]}
    if item.get("variant"):
        # a per-node run's IB loopback (collective_steps.ib_loopback_run) is retested as that run, not the node's own
        params["variant"] = item["variant"]
    if item["purpose"] == "partner":
        params.update(subject=item["subject"], partner=item["partner"],
                      origins=[_origin_text(origin) for origin in item["origins"]])
    return params


def _summary(items, skipped, failing):
    return {"failing_runs": failing, "planned": len(items),
            "as_is": sum(1 for i in items if i["purpose"] == "as_is"),
            "partner": sum(1 for i in items if i["purpose"] == "partner"), "skipped": len(skipped)}


def tag(records, params):
    """Copies of a retest run's records (its first run's; a retest makes no bisection) with the retest params."""
    out = []
    for rec in records or []:
        if rec.get("kind") == "collective":
            rec = dict(rec, params=dict(rec.get("params") or {}, **params))
        out.append(rec)
    return out


def classify(records, retest_records, mode, verdicts=("fail",)):
    """The first pass's records with the retests' outcome, the retest records (judged as the first pass's when
    no pass line of their own judged them) and the outcome of each failing run.

    Returns ``{"records": first pass (a flaky run's verdict ``flaky``, every retested run's evidence with its
    retests) + retests, "outcomes": [...], "summary": retest.classify's summary, "classified": its whole
    answer}``; an outcome: ``record`` (the index of its first-pass record in ``records``), ``status``
    (``confirmed`` / ``flaky`` / ``not_retested``), ``hosts``, ``operation``, ``implicated``, ``cleared``."""
    records = list(records or [])
    firsts = [(index, rec) for index, rec in enumerate(records) if first_pass([rec])]
    retests = [rec for rec in retest_records or [] if rt.is_retest(rec)]
    views = [view(rec) for _index, rec in firsts]
    classified = rt.classify(views, [view(rec) for rec in retests], bad_verdicts=tuple(verdicts))
    judged = classified["records"]
    out = list(records)
    for position, (index, rec) in enumerate(firsts):
        out[index] = _with_outcome(rec, judged[position])
    retested = [_with_outcome(rec, judged[len(views) + n]) for n, rec in enumerate(retests)]
    outcomes = []
    for pair in classified["pairs"]:
        position = _position(views, pair)
        index, rec = firsts[position]
        outcomes.append({"record": index, "status": pair["status"], "hosts": list(rec["params"].get("hosts") or []),
                         "operation": rec["params"].get("operation"), "implicated": pair["implicated"],
                         "cleared": pair["cleared"], "mode": mode})
    return {"records": out + retested, "outcomes": outcomes, "summary": classified["summary"],
            "classified": classified}


def _position(views, pair):
    """The first-pass view a classified pair is of (its ends, operation; the first failing one)."""
    for position, item in enumerate(views):
        if (item["host"], item["peer"], item["params"]["op"]) == (pair["server"], pair["client"], pair["op"]) and \
                item["verdict"] == pair["original"]:
            return position
    raise rt.RetestError("no first-pass run for %s" % pair["id"])


def _with_outcome(rec, judged):
    """``rec`` with what the classification changed in its view: verdict, cause, fix, evidence, retest count."""
    if (judged.get("verdict"), judged.get("cause")) == (rec.get("verdict"), rec.get("cause")) and \
            not judged.get("evidence"):
        return rec
    out = dict(rec, verdict=judged.get("verdict"), cause=judged.get("cause"), fix=judged.get("fix"))
    out["evidence"] = list(rec.get("evidence") or []) + list(judged.get("evidence") or [])
    if "retests" in (judged.get("metrics") or {}):
        out["metrics"] = dict(rec.get("metrics") or {}, retests=judged["metrics"]["retests"])
    return out


def findings(outcomes):
    """``finding`` records of the confirmed failures: a node whose own run (``per_node``) fails again, or whose
    pairs fail with known-good partners too (``pairs``), once per node and operation; a confirmed pair whose
    sides both pass with known-good partners: the link between them. A confirmed pool names no node."""
    out, seen = [], set()
    for outcome in outcomes or []:
        if outcome["status"] != "confirmed" or outcome["mode"] == "pool":
            continue
        nodes = outcome["hosts"] if outcome["mode"] == "per_node" else outcome["implicated"]
        for node in nodes:
            if (node, outcome["operation"]) not in seen:
                seen.add((node, outcome["operation"]))
                out.append(_node_finding(node, outcome))
        if outcome["mode"] == "pairs" and not nodes and len(outcome["cleared"]) == 2:
            out.append(_link_finding(outcome))
    return out


def _node_finding(node, outcome):
    if outcome["mode"] == "per_node":
        cause = "%s's own %s run failed, and failed again on retest" % (node, outcome["operation"])
    else:
        cause = "%s's %s pair %s failed, and %s fails with known-good partners as well" % (
            node, outcome["operation"], "-".join(outcome["hosts"]), node)
    return {"kind": "finding", "host": node, "peer": None,
            "params": {"check": "collective", "mode": outcome["mode"], "operation": outcome["operation"],
                       "code": "collective_node_failed_retest", "hosts": list(outcome["hosts"])},
            "metrics": {}, "verdict": "fail", "cause": cause,
            "fix": "check this node's GPUs, NICs and links (its RDMA and discovery results)",
            "evidence": ["%s on %s: %s" % (outcome["operation"], ",".join(outcome["hosts"]), outcome["status"])]}


def _link_finding(outcome):
    first, second = outcome["hosts"]
    return {"kind": "finding", "host": first, "peer": second,
            # a link, not its first host: the culprit list reads the component
            "params": {"check": "collective", "mode": "pairs", "operation": outcome["operation"],
                       "code": "collective_link_failed_retest", "hosts": [first, second], "component": "link",
                       "confidence": "medium"},
            "metrics": {}, "verdict": "fail",
            "cause": "the %s pair %s-%s failed again on retest while both hosts pass with known-good partners: "
                     "the path between them is at fault" % (outcome["operation"], first, second),
            "fix": "check the links and switch ports between the two hosts (their RDMA pair results)",
            "evidence": ["cleared with known-good partners: %s" % ", ".join(outcome["cleared"])]}


def summary_record(classified):
    """The ``retest_summary`` record of the collective check (``retest.summary_record``'s)."""
    return rt.summary_record(classified, check="collective", kind="collective")
