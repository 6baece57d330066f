# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Designed retests after the first retest pass (pure): localization as group testing.

The hypotheses a failing link leaves are its hosts (their NICs), the path between them, and the rail's fabric
or its expected rate. Every measurement so far (the first pass and every retest pass) is evidence: a link that
passed clears both its hosts (a bad host fails with every peer); a host that failed with a cleared host is
*confirmed*; a host in a failing link that is neither is *unresolved*. Where a rail still has unresolved hosts,
:func:`next_pass` plans the fewest pairs not measured yet that tell them apart: each unresolved host with a
cleared host (``partner``), or, where the rail has no cleared host at all (fabric or hosts undecided), the
``control`` (non-suspects with each other) and ``cross`` (suspects with each other) pairs not tried yet. It plans
nothing when nothing is ambiguous, or when every pair that would separate was measured already; the role calls
it at most ``commcheck_retest_rounds`` times.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest as rt
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest_plan as rp

# the most passes after the first one that commcheck_retest_rounds may ask for
MAX_ROUNDS = 20


def link_evidence(records, bad_verdicts=rt.BAD_VERDICTS, exclude_hosts=()):
    """(rail, op, metric) -> {link (frozenset of two hosts): {"marks": [True for each bad measurement, False
    for each good one], "purposes": the retest purposes it was measured for}} over the first pass's records and
    every retest's (as is, partner, control, cross alike).

    A first-pass record counts as bad when its verdict was retested (``bad_verdicts``), a retest's when it did
    not pass (``retest.did_not_pass``); an ``error`` that was not retested and a ``skipped`` test say nothing."""
    retest_bad = rt.did_not_pass(bad_verdicts)
    out = {}
    for rec in records or []:
        if not isinstance(rec, dict) or not rec.get("peer") or rec.get("verdict") in (None, "skipped"):
            continue
        if rec["host"] in exclude_hosts or rec["peer"] in exclude_hosts or rec["host"] == rec["peer"]:
            continue
        retested = rt.is_retest(rec)
        bad = rec["verdict"] in (retest_bad if retested else bad_verdicts)
        if not bad and rec["verdict"] == "error":
            continue
        op, metric = rt.test_of(rec)
        group = (rt.rail_number((rec.get("params") or {}).get("rail")), op, metric)
        link = out.setdefault(group, {}).setdefault(frozenset((rec["host"], rec["peer"])),
                                                    {"marks": [], "purposes": set()})
        link["marks"].append(bad)
        if retested:
            link["purposes"].add((rec.get("params") or {}).get("retest_purpose"))
    return out


def hypotheses(links):
    """What one rail's (one test's) evidence leaves open: ``{"cleared", "confirmed", "unresolved", "bad_links",
    "measured"}``. A link is bad when most of its measurements failed, good when most passed (a tie is
    neither); hosts sorted by name."""
    bad_links = [link for link, seen in links.items() if 2 * sum(seen["marks"]) > len(seen["marks"])]
    good_links = [link for link, seen in links.items() if 2 * sum(seen["marks"]) < len(seen["marks"])]
    cleared = set(host for link in good_links for host in link)
    confirmed = set(host for link in bad_links for host in link
                    if host not in cleared and (link - set([host])) <= cleared)
    unresolved = set(host for link in bad_links for host in link) - cleared - confirmed
    return {"cleared": sorted(cleared, key=natural_key), "confirmed": sorted(confirmed, key=natural_key),
            "unresolved": sorted(unresolved, key=natural_key),
            "bad_links": sorted((sorted(link, key=natural_key) for link in bad_links), key=lambda pair: (
                natural_key(pair[0]), natural_key(pair[1]))),
            "measured": set(links)}


def designed_pairs(links):
    """[(purpose, a, b, suspects)] for one rail and test: the pairs not measured yet that separate what
    :func:`hypotheses` leaves open (empty when nothing is ambiguous)."""
    seen = hypotheses(links)
    if not seen["unresolved"]:
        return []
    measured = seen["measured"]
    if seen["cleared"]:
        return _with_cleared(seen["unresolved"], seen["cleared"], measured)
    # no host passed anything on this rail: the fabric (or the expected rate) against the hosts, unless control
    # pairs already failed too (that is the fabric's evidence; more pairs would only measure it again)
    if any("control" in seen["purposes"] for seen in links.values()):
        return []
    bad_peers = {}
    for a, b in seen["bad_links"]:
        bad_peers.setdefault(a, set()).add(b)
        bad_peers.setdefault(b, set()).add(a)
    suspects = sorted(rp.cover(bad_peers), key=natural_key)
    others = sorted(set(h for link in measured for h in link if h not in suspects), key=natural_key)
    return [("control", a, b, suspects) for a, b in rp.matching(others, measured)] + \
        [("cross", a, b, suspects) for a, b in rp.matching(suspects, measured)]


def _with_cleared(unresolved, cleared, measured):
    """Each unresolved host with a cleared host it was not measured with, the least used one first (no host
    in two pairs where another is left)."""
    use = dict((host, 0) for host in cleared)
    out = []
    for host in unresolved:
        choices = [c for c in cleared if frozenset((host, c)) not in measured]
        if choices:
            partner = min(choices, key=lambda c: (use[c], natural_key(c)))
            use[partner] += 1
            out.append(("partner", host, partner, [host]))
    return out


def next_pass(records, number, host_rails=None, repeats=1, base_port=18515, bad_verdicts=rt.BAD_VERDICTS,
              exclude_hosts=(), max_jobs=200, round_offset=0, merge=False, side_tests=True):
    """Retest pass ``number`` (2 and up) from all the evidence so far (``records``: the first pass's and the
    judged, tagged retests of the passes before), in the shape of ``retest_plan.plan_retests``' result; no
    ``rounds`` when nothing is left to separate.

    A ``partner`` item keeps the subject in the role it had in its first failing pair and serves as origins
    every first-pass failing pair of the subject on that rail and test (what ``retest.classify`` reads); a
    ``control`` / ``cross`` item carries the suspects it assumes."""
    if isinstance(number, bool) or not isinstance(number, int) or number < 2:
        raise rt.RetestError("a designed retest pass is number 2 or more, got %r" % (number,))
    if isinstance(max_jobs, bool) or not isinstance(max_jobs, int) or max_jobs < 0:
        raise rt.RetestError("max_jobs must be an integer >= 0, got %r" % (max_jobs,))
    if isinstance(repeats, bool) or not isinstance(repeats, int) or not 1 <= repeats <= rp.MAX_REPEATS:
        raise rt.RetestError("repeats must be an integer from 1 to %d, got %r" % (rp.MAX_REPEATS, repeats))
    exclude = set(exclude_hosts or ())
    evidence = link_evidence(records, bad_verdicts, exclude)
    failing = rp.failing_pairs(records, bad_verdicts, exclude)
    items = []
    for group in sorted(evidence, key=lambda g: (g[0], str(g[1]), str(g[2]))):
        rail, op, metric = group
        for purpose, a, b, suspects in designed_pairs(evidence[group]):
            for attempt in range(1, repeats + 1):
                items.append(_designed_item(purpose, attempt, a, b, group, suspects, failing, number))
    skipped = [{"server": i["server"], "client": i["client"], "rail": i["rail"], "subject": i.get("subject"),
                "reason": "over max_jobs (%d)" % max_jobs} for i in items[max_jobs:]]
    items = items[:max_jobs]
    for num, item in enumerate(items):
        item["id"] = "p%dr%d" % (number, num + 1)
    rounds = rp.pack_rounds(items, host_rails, base_port, round_offset, merge, side_tests)
    summary = dict((purpose, sum(1 for i in items if i["purpose"] == purpose))
                   for purpose in ("as_is", "partner", "control", "cross"))
    summary.update(failing_pairs=len(failing), planned=len(items), sampled=0, rounds=len(rounds),
                   skipped=len(skipped), dropped=len(skipped), retest_pass=number)
    return {"retests": items, "rounds": rounds, "skipped": skipped, "summary": summary,
            "hosts": sorted(set(host for rnd in rounds for host in rnd["sides"]), key=natural_key)}


def _designed_item(purpose, attempt, a, b, group, suspects, failing, number):
    rail, op, metric = group
    if purpose != "partner":
        item = rp.retest_item(purpose, attempt, a, b, rail, op, metric, {"server": a, "client": b}, number=number)
        item["suspects"] = list(suspects)
        return item
    origins = [{"server": s, "client": c} for s, c, r, o, m in failing if (r, o, m) == group and a in (s, c)]
    as_server = bool(origins) and origins[0]["server"] == a
    server, client = (a, b) if as_server or not origins else (b, a)
    item = rp.retest_item("partner", attempt, server, client, rail, op, metric,
                          origins[0] if origins else {"server": server, "client": client}, a, b, number=number)
    item["origins"] = [dict(o) for o in origins] or [dict(item["origin"])]
    return item
