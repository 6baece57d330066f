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

:func:`plan_retests` turns the failing records into retest jobs and packs
them into rounds (a host runs at most one test per rail per round), each
round in the shape of ``schedule.round_plan`` (``sides`` per host, ``jobs``)
so the same perftest task runs it. :func:`tag_retest_records` marks the
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

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import round_plan
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.thresholds import far_outlier, far_text
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.values import fmt_value
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

BAD_VERDICTS = ("fail", "error")
PURPOSES = ("as_is", "partner")
MAX_REPEATS = 10
RETEST_PARAMS = ("retest", "retest_purpose", "attempt", "subject", "partner", "origin")
# retest records get their own kind (rdma_bw_retest) so heat maps, baselines and
# counts of a check's pairs see the planned pairs only
RETEST_SUFFIX = "_retest"


class RetestError(ValueError):
    """Bad input to the retest planner (a clear message, never a traceback)."""


def _rail(value):
    return 0 if value in (None, "") else int(value)


def is_retest(record):
    """A retest record: ``params.retest`` set, or a kind ending in ``_retest``."""
    record = record or {}
    return bool((record.get("params") or {}).get("retest")) or str(record.get("kind") or "").endswith(RETEST_SUFFIX)


def pair_id(server, client, rail, op, metric):
    """'h1-h2 rail 0 write bw': how a failing pair is named in summaries."""
    return "%s-%s rail %s %s %s" % (server, client, rail, op, metric)


def _test_of(rec):
    params = rec.get("params") or {}
    return params.get("op"), params.get("metric") or "bw"


def failing_pairs(records, bad_verdicts=BAD_VERDICTS, exclude_hosts=()):
    """Distinct failing (server, client, rail, op, metric) of the original (non-retest) pair records."""
    seen = []
    for rec in records or []:
        if not isinstance(rec, dict) or not rec.get("peer") or is_retest(rec):
            continue
        if rec.get("verdict") not in bad_verdicts:
            continue
        if rec["host"] in exclude_hosts or rec["peer"] in exclude_hosts:
            continue
        op, metric = _test_of(rec)
        key = (rec["host"], rec["peer"], _rail((rec.get("params") or {}).get("rail")), op, metric)
        if key not in seen:
            seen.append(key)
    return seen


def good_hosts(records, rail, bad_verdicts=BAD_VERDICTS, host_fraction=0.5):
    """Hosts that passed on ``rail``, best first.

    First the hosts with no bad original record on that rail; when there are
    none, the hosts whose bad records all involve a host that is bad with
    most of its peers (they are victims, not culprits). Sorted by how many
    passing links they have (most first), then by name.
    """
    stats = _link_stats(records, rail, bad_verdicts)
    clean = [h for h, st in stats.items() if st["bad"] == 0]
    if not clean:
        culprits = set(h for h, st in stats.items() if st["bad"] >= 2 and st["bad"] > host_fraction * st["links"])
        clean = [h for h, st in stats.items() if h not in culprits and st["bad_peers"] <= culprits]
    return sorted(clean, key=lambda h: (-(stats[h]["links"] - stats[h]["bad"]), natural_key(h)))


def _link_stats(records, rail, bad_verdicts):
    """host -> {links, bad, bad_peers} over the distinct links of the original pair records on ``rail``;
    a link is bad when any of its records is."""
    links = {}
    for rec in records or []:
        if not isinstance(rec, dict) or not rec.get("peer") or is_retest(rec):
            continue
        if _rail((rec.get("params") or {}).get("rail")) != rail or rec.get("verdict") == "skipped":
            continue
        key = frozenset((rec["host"], rec["peer"]))
        links[key] = links.get(key, False) or rec.get("verdict") in bad_verdicts
    stats = {}
    for key, bad in links.items():
        for node in key:
            entry = stats.setdefault(node, {"links": 0, "bad": 0, "bad_peers": set()})
            entry["links"] += 1
            if bad:
                entry["bad"] += 1
                entry["bad_peers"].update(key - set([node]))
    return stats


def bad_with_most(records, bad_verdicts=BAD_VERDICTS, host_fraction=0.5):
    """{(host, rail, op, metric): [failing peers]} for hosts bad with more than host_fraction of their peers (>= 2)."""
    links = {}
    for rec in records or []:
        if not isinstance(rec, dict) or not rec.get("peer") or is_retest(rec) or rec.get("verdict") == "skipped":
            continue
        op, metric = _test_of(rec)
        rail = _rail((rec.get("params") or {}).get("rail"))
        for node, other in ((rec["host"], rec["peer"]), (rec["peer"], rec["host"])):
            entry = links.setdefault((node, rail, op, metric), {})
            entry[other] = entry.get(other, False) or rec.get("verdict") in bad_verdicts
    out = {}
    for key, peers in links.items():
        bad = sorted((p for p, is_bad in peers.items() if is_bad), key=natural_key)
        if len(bad) >= 2 and len(bad) > host_fraction * len(peers):
            out[key] = bad
    return out


def plan_retests(records, host_rails=None, repeats=1, partners=True, base_port=18515, bad_verdicts=BAD_VERDICTS,
                 exclude_hosts=(), max_jobs=200, round_offset=0, merge=False, per_host=None, side_tests=True):
    """Retest jobs for the failing pairs, packed into rounds.

    ``host_rails``: host -> rails (``schedule.select_rails``), used to build
    each side's device / GID / address. Returns ``{"retests": [...],
    "rounds": [round_plan dicts with "jobs" carrying "retest"], "skipped":
    [...], "summary": {...}, "hosts": [...]}``; ``hosts``: the hosts that run a
    side of a retest, the only ones the retests need to reach. Round i carries ``round_offset + i`` in its
    sides and jobs (``round``). ``merge``: one plan holding every round as
    a step (step i = round i, ``steps`` = the count), for the pipelined
    strategy; ports then cycle through a window of steps like
    ``schedule.plan_rounds(merge=True)``. A retest item: ``id``, ``purpose``,
    ``attempt``, ``server``, ``client``, ``rail``, ``test``, ``metric``,
    ``subject`` / ``partner`` (partner retests), ``origin``
    (``{server, client}``).

    ``per_host``: a host bad with most of its peers on a rail would serialize
    every retest through itself (one test per rail at a time: N - 1 steps);
    with ``per_host`` only that many of its failing pairs are retested as is
    (the others are ``skipped`` with ``sampled_host``, and :func:`classify`
    infers their outcome from the sampled ones). None retests every pair.

    ``side_tests``: False leaves the test (``test``, ``metric``) out of the
    sides, for a tool with a single test whose sides take no such keys
    (iperf3); the jobs keep it, so :func:`tag_retest_records` still matches.
    """
    _check_plan_options(records, repeats, max_jobs, per_host)
    exclude = set(exclude_hosts or ())
    failing = failing_pairs(records, bad_verdicts, exclude)
    planner = _Planner(records, repeats, bad_verdicts, exclude, per_host)
    for server, client, rail, op, metric in failing:
        if not planner.sample(server, client, rail, op, metric):
            continue
        planner.as_is(server, client, rail, op, metric)
        if partners and repeats:
            planner.with_partners(server, client, rail, op, metric)
    items, skipped = planner.items, planner.skipped
    dropped = max(0, len(items) - max_jobs)
    for item in items[max_jobs:]:
        skipped.append({"server": item["server"], "client": item["client"], "rail": item["rail"],
                        "subject": item.get("subject"), "reason": "over max_jobs (%d)" % max_jobs})
    items = items[:max_jobs]
    for num, item in enumerate(items):
        item["id"] = "r%d" % (num + 1)
    if isinstance(round_offset, bool) or not isinstance(round_offset, int) or round_offset < 0:
        raise RetestError("round_offset must be an integer >= 0, got %r" % (round_offset,))
    batches = _pack(items)
    if merge:
        rounds = _merged_rounds(batches, items, host_rails, base_port, round_offset, side_tests)
    else:
        rounds = [_round(batch, host_rails, base_port, round_offset + num, side_tests=side_tests)
                  for num, batch in enumerate(batches)]
    summary = {"failing_pairs": len(failing), "planned": len(items),
               "sampled": sum(1 for s in skipped if s.get("sampled_host")),
               "as_is": sum(1 for i in items if i["purpose"] == "as_is"),
               "partner": sum(1 for i in items if i["purpose"] == "partner"),
               "rounds": len(rounds), "skipped": len(skipped), "dropped": dropped}
    return {"retests": items, "rounds": rounds, "skipped": skipped, "summary": summary,
            "hosts": sorted(set(host for rnd in rounds for host in rnd["sides"]))}


def _check_plan_options(records, repeats, max_jobs, per_host):
    if isinstance(repeats, bool) or not isinstance(repeats, int) or not 0 <= repeats <= MAX_REPEATS:
        raise RetestError("repeats must be an integer from 0 to %d, got %r" % (MAX_REPEATS, repeats))
    if isinstance(max_jobs, bool) or not isinstance(max_jobs, int) or max_jobs < 0:
        raise RetestError("max_jobs must be an integer >= 0, got %r" % (max_jobs,))
    if not isinstance(records, (list, tuple)):
        raise RetestError("records must be a list of pair records")
    if per_host is not None and (isinstance(per_host, bool) or not isinstance(per_host, int) or per_host < 1):
        raise RetestError("per_host must be an integer >= 1 or None, got %r" % (per_host,))


class _Planner(object):
    """The retest items of the failing pairs, in order, and what was left out (``skipped``)."""

    def __init__(self, records, repeats, bad_verdicts, exclude, per_host):
        self.records = records
        self.repeats = repeats
        self.bad_verdicts = bad_verdicts
        self.exclude = exclude
        self.per_host = per_host
        self.suspects = bad_with_most(records, bad_verdicts) if per_host else {}
        self.items = []
        self.skipped = []
        self._sampled = {}
        self._seen = set()
        self._use = {}
        self._groups = {}
        self._good_by_rail = {}
        self._bad_peers_by_rail = {}

    def sample(self, server, client, rail, op, metric):
        """False (and a ``sampled_host`` skip) once every bad-with-most host of the pair has per_host pairs."""
        owners = [h for h in (server, client) if (h, rail, op, metric) in self.suspects]
        if owners and self.repeats and all(len(self._sampled.get((h, rail, op, metric), [])) >= self.per_host
                                           for h in owners):
            self.skipped.append({
                "server": server, "client": client, "rail": rail, "test": op, "metric": metric,
                "sampled_host": owners[0], "reason": "%s fails with %d peers on rail %s: %d of its pairs are "
                "retested" % (owners[0], len(self.suspects[(owners[0], rail, op, metric)]), rail, self.per_host)})
            return False
        for host in owners:
            self._sampled.setdefault((host, rail, op, metric), []).append((server, client))
        return True

    def as_is(self, server, client, rail, op, metric):
        origin = {"server": server, "client": client}
        for attempt in range(1, self.repeats + 1):
            key = ("as_is", server, client, rail, op, metric, attempt)
            if key not in self._seen:
                self._seen.add(key)
                self.items.append(_item("as_is", attempt, server, client, rail, op, metric, origin))

    def _good(self, rail):
        if rail not in self._good_by_rail:
            self._good_by_rail[rail] = [h for h in good_hosts(self.records, rail, self.bad_verdicts)
                                        if h not in self.exclude]
        return self._good_by_rail[rail]

    def _bad_peers(self, rail):
        if rail not in self._bad_peers_by_rail:
            self._bad_peers_by_rail[rail] = dict((h, st["bad_peers"]) for h, st in _link_stats(
                self.records, rail, self.bad_verdicts).items())
        return self._bad_peers_by_rail[rail]

    def with_partners(self, server, client, rail, op, metric):
        """Each side with a known-good partner in its own role; the least used partner first."""
        origin = {"server": server, "client": client}
        good = self._good(rail)
        for subject, role in ((server, "server"), (client, "client")):
            # rather not a host whose own link with the subject failed: that retests a bad link, not the
            # subject (a slow link next to a slow host would blame the link's end); unless no other is left
            failed_with = self._bad_peers(rail).get(subject, set())
            choices = [h for h in good if h not in (server, client)]
            choices = [h for h in choices if h not in failed_with] or choices
            if not choices:
                self.skipped.append({"server": server, "client": client, "rail": rail, "subject": subject,
                                     "reason": "no host passed every test on rail %s (apart from %s and %s)" % (
                                         rail, server, client)})
                continue
            # a partner test already planned for this subject (from another failing pair) is reused
            group = (subject, role, rail, op, metric)
            if group in self._groups:
                for item in self._groups[group]:
                    item["origins"].append(origin)
                continue
            partner = min(choices, key=lambda h: (self._use.get((h, rail), 0), good.index(h)))
            self._use[(partner, rail)] = self._use.get((partner, rail), 0) + 1
            self._groups[group] = []
            for attempt in range(1, self.repeats + 1):
                pair = (subject, partner) if role == "server" else (partner, subject)
                item = _item("partner", attempt, pair[0], pair[1], rail, op, metric, origin, subject, partner)
                self._groups[group].append(item)
                self.items.append(item)


def _merged_rounds(batches, items, host_rails, base_port, round_offset, side_tests=True):
    """One plan holding every batch as a step; ports cycle through a window of steps."""
    stride = max([i["rail"] for i in items] + [0]) + 1
    window = max(1, min(256, len(batches), (65535 - int(base_port)) // stride + 1))
    if not batches:
        return []
    merged = {"sides": {}, "jobs": [], "skipped": [], "steps": len(batches)}
    for num, batch in enumerate(batches):
        rnd = _round(batch, host_rails, int(base_port) + (num % window) * stride, round_offset + num, num,
                     side_tests)
        for host, host_sides in rnd["sides"].items():
            merged["sides"].setdefault(host, []).extend(host_sides)
        merged["jobs"].extend(rnd["jobs"])
        merged["skipped"].extend(rnd["skipped"])
    return [merged]


def _item(purpose, attempt, server, client, rail, op, metric, origin, subject=None, partner=None):
    item = {"id": None, "purpose": purpose, "attempt": attempt, "server": server, "client": client, "rail": rail,
            "test": op, "metric": metric, "origin": dict(origin), "origins": [dict(origin)], "subject": subject,
            "partner": partner}
    return item


def _pack(items):
    """Greedy first fit: a host at most once per rail per round."""
    rounds = []
    busy = []
    for item in items:
        need = set(((item["server"], item["rail"]), (item["client"], item["rail"])))
        for idx, used in enumerate(busy):
            if not need & used:
                rounds[idx].append(item)
                used.update(need)
                break
        else:
            rounds.append([item])
            busy.append(set(need))
    return rounds


def _round(batch, host_rails, base_port, index, step=0, side_tests=True):
    sides = {}
    jobs = []
    skipped = []
    host_rails = host_rails or {}
    for item in batch:
        s_rails = host_rails.get(item["server"])
        c_rails = host_rails.get(item["client"])
        sub_rails = {}
        # only rail k of each host, so it runs as rail k of the round
        for host, rails in ((item["server"], s_rails), (item["client"], c_rails)):
            if rails is None:
                continue
            chosen = [r for r in rails if _rail(r.get("rail", rails.index(r))) == item["rail"]]
            sub_rails[host] = chosen
        test = {"metric": item["metric"]}
        if item["test"]:
            test["test"] = item["test"]
        plan = round_plan([[item["server"], item["client"]]], sub_rails or None, [test], base_port=base_port,
                          port_stride=1, round_index=index)
        if plan["skipped"]:
            for skip in plan["skipped"]:
                skipped.append(dict(skip, retest=item["id"]))
            continue
        for host, host_sides in plan["sides"].items():
            sides.setdefault(host, []).extend(_side(side, item["rail"], step, base_port, side_tests)
                                              for side in host_sides)
        for job in plan["jobs"]:
            job.update(rail=item["rail"], step=step, tcp_port=int(base_port) + item["rail"])
            job["retest"] = _retest_params(item)
            jobs.append(job)
    return {"sides": sides, "jobs": jobs, "skipped": skipped}


def _side(side, rail, step, base_port, side_tests):
    """A side of a retest round, run as rail ``rail`` of step ``step``; without ``side_tests``, no test keys."""
    side.update(rail=rail, step=step, tcp_port=int(base_port) + rail)
    if not side_tests:
        side.pop("test", None)
        side.pop("metric", None)
    return side


def _retest_params(item):
    params = {"retest": True, "retest_purpose": item["purpose"], "attempt": item["attempt"],
              "origin": "%s-%s" % (item["origin"]["server"], item["origin"]["client"]), "retest_id": item["id"]}
    if item["purpose"] == "partner":
        params["subject"] = item["subject"]
        params["partner"] = item["partner"]
        params["origins"] = ["%s-%s" % (o["server"], o["client"]) for o in item["origins"]]
    return params


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
            key = (job.get("server"), job.get("client"), _rail(job.get("rail")), job.get("test"),
                   job.get("metric") or "bw")
            jobs.setdefault(key, []).append((job.get("round", num), job))
    out = []
    for rec in records or []:
        rec = dict(rec)
        params = dict(rec.get("params") or {})
        key = (rec.get("host"), rec.get("peer"), _rail(params.get("rail")), params.get("op"),
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
    reference = _first_pass_values(originals)
    retest_records = [judged_by_first_pass(r, reference, fleet_min_fraction) for r in retest_records or []]
    retests = [r for r in records or [] if is_retest(r)] + [r for r in retest_records if is_retest(r)]
    as_is, partner = _index_retests(retests)
    out, pairs = _judge_originals(originals, as_is, partner, bad_verdicts)
    _infer_sampled(pairs, skipped)
    for outcome in pairs:
        _apply_outcome(out[outcome.pop("record")], outcome)
    as_is_count = sum(len(v) for v in as_is.values())
    summary = {
        "retests": len(retests),
        "as_is": as_is_count,
        "partner": len(retests) - as_is_count,
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
    return (kind, params.get("op"), params.get("metric") or "bw", params.get("size"), _rail(params.get("rail")))


def _first_pass_values(originals):
    """comparable -> the values of the first pass's records that ran."""
    out = {}
    for rec in originals:
        value = _value(rec)
        if rec.get("peer") and value is not None and rec.get("verdict") not in ("error", "skipped"):
            out.setdefault(_comparable(rec), []).append(value)
    return out


def judged_by_first_pass(rec, reference, fleet_min_fraction=None):
    """A retest that no expectation judges (latency; a bandwidth without a link rate), judged against the first
    pass's comparable records, by the rule that failed the first pass's (``thresholds.far_outlier``, with the
    fleet threshold's ``fleet_min_fraction``): the retests alone are no fleet (a late host's retests are all
    late)."""
    value = _value(rec)
    metric = (rec.get("params") or {}).get("metric") or "bw"
    if value is None or rec.get("verdict") in ("error", "skipped") or \
            (rec.get("metrics") or {}).get("expected_gbps") is not None:
        return rec
    values = reference.get(_comparable(rec)) or []
    if len(values) < 3:
        return rec
    far, why = far_outlier(value, values, metric != "lat", fleet_min_fraction)
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
        op, metric = _test_of(rec)
        rail = _rail(params.get("rail"))
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
        op, metric = _test_of(rec)
        rail = _rail((rec.get("params") or {}).get("rail"))
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
            left_out[(item.get("server"), item.get("client"), _rail(item.get("rail")), item.get("test"),
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
    op, metric = _test_of(rec)
    rail = _rail(params.get("rail"))
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
