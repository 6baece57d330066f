# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The retest planner (pure): which failing pairs are measured again, with whom, in which rounds.

:func:`plan_retests` turns the failing records into retest jobs (``as_is``: the same pair again; ``partner``:
each side with a known-good host of its rail, :func:`good_hosts`; where a rail has no known-good host, the pairs
that separate hosts from the fabric, :func:`separating_pairs`: ``control``, non-suspects with each other, and
``cross``, suspects with each other) and packs them into rounds (a host runs at
most one test per rail per round), each round in the shape of ``schedule.round_plan`` (``sides`` per host,
``jobs``) so the same perftest task runs it. What the retests then say is ``retest.classify``'s.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import round_plan
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.retest import BAD_VERDICTS, RetestError, is_retest, rail_number, test_of
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

MAX_REPEATS = 10


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
        op, metric = test_of(rec)
        key = (rec["host"], rec["peer"], rail_number((rec.get("params") or {}).get("rail")), op, metric)
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
    """host -> {links, bad, bad_peers, peers} over the distinct links of the original pair records on ``rail``;
    a link is bad when any of its records is."""
    links = {}
    for rec in records or []:
        if not isinstance(rec, dict) or not rec.get("peer") or is_retest(rec):
            continue
        if rail_number((rec.get("params") or {}).get("rail")) != rail or rec.get("verdict") == "skipped":
            continue
        key = frozenset((rec["host"], rec["peer"]))
        links[key] = links.get(key, False) or rec.get("verdict") in bad_verdicts
    stats = {}
    for key, bad in links.items():
        for node in key:
            entry = stats.setdefault(node, {"links": 0, "bad": 0, "bad_peers": set(), "peers": set()})
            entry["links"] += 1
            entry["peers"].update(key - set([node]))
            if bad:
                entry["bad"] += 1
                entry["bad_peers"].update(key - set([node]))
    return stats


def separating_pairs(records, rail, bad_verdicts=BAD_VERDICTS, exclude_hosts=()):
    """([(purpose, a, b)], suspects): the pairs of ``rail`` not measured yet that tell bad hosts from the rail's
    fabric, for a rail where no host passed (:func:`good_hosts` is empty), and the suspects they assume.

    The suspects are the fewest hosts that are in every bad link (most bad links first, then by name): ``control``
    pairs join two non-suspects (both pass unless the fabric or the expected rate is at fault), ``cross`` pairs two
    suspects (both fail when each is bad on its own). Each kind is a matching: no host in two pairs. In a ring of
    four with two opposite slow hosts every link has one slow end and the first pass is symmetric; which diagonal
    is the control is then a naming choice, the localization reads the outcomes."""
    stats = dict((h, st) for h, st in _link_stats(records, rail, bad_verdicts).items() if h not in exclude_hosts)
    measured = set(frozenset((h, p)) for h, st in stats.items() for p in st["peers"])
    suspects = cover(dict((h, set(st["bad_peers"]) - set(exclude_hosts)) for h, st in stats.items()))
    others = sorted((h for h in stats if h not in suspects), key=natural_key)
    return [("control", a, b) for a, b in matching(others, measured)] + \
        [("cross", a, b) for a, b in matching(sorted(suspects, key=natural_key), measured)], sorted(
            suspects, key=natural_key)


def cover(bad_peers):
    """The fewest hosts (greedy: most bad links left first, then by name) in every bad link of ``bad_peers``."""
    left = set(frozenset((h, p)) for h, peers in bad_peers.items() for p in peers)
    cover = set()
    while left:
        best = min(bad_peers, key=lambda h: (-sum(1 for link in left if h in link), natural_key(h)))
        cover.add(best)
        left = set(link for link in left if best not in link)
    return cover


def matching(hosts, measured):
    """Pairs of ``hosts`` (in order) not in ``measured``, no host twice."""
    used = set()
    out = []
    for i, a in enumerate(hosts):
        for b in hosts[i + 1:]:
            if a not in used and b not in used and frozenset((a, b)) not in measured:
                out.append((a, b))
                used.update((a, b))
    return out


def bad_with_most(records, bad_verdicts=BAD_VERDICTS, host_fraction=0.5):
    """{(host, rail, op, metric): [failing peers]} for hosts bad with more than host_fraction of their peers (>= 2)."""
    links = {}
    for rec in records or []:
        if not isinstance(rec, dict) or not rec.get("peer") or is_retest(rec) or rec.get("verdict") == "skipped":
            continue
        op, metric = test_of(rec)
        rail = rail_number((rec.get("params") or {}).get("rail"))
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
            planner.separating(rail, op, metric)
    items, skipped = planner.items, planner.skipped
    dropped = max(0, len(items) - max_jobs)
    for item in items[max_jobs:]:
        skipped.append({"server": item["server"], "client": item["client"], "rail": item["rail"],
                        "subject": item.get("subject"), "reason": "over max_jobs (%d)" % max_jobs})
    items = items[:max_jobs]
    for num, item in enumerate(items):
        item["id"] = "r%d" % (num + 1)
    rounds = pack_rounds(items, host_rails, base_port, round_offset, merge, side_tests)
    summary = {"failing_pairs": len(failing), "planned": len(items),
               "sampled": sum(1 for s in skipped if s.get("sampled_host")),
               "as_is": sum(1 for i in items if i["purpose"] == "as_is"),
               "partner": sum(1 for i in items if i["purpose"] == "partner"),
               "control": sum(1 for i in items if i["purpose"] == "control"),
               "cross": sum(1 for i in items if i["purpose"] == "cross"),
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
                self.items.append(retest_item("as_is", attempt, server, client, rail, op, metric, origin))

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
                item = retest_item("partner", attempt, pair[0], pair[1], rail, op, metric, origin, subject, partner)
                self._groups[group].append(item)
                self.items.append(item)

    def separating(self, rail, op, metric):
        """Once per rail and test, where the rail has no known-good host: its control and cross pairs."""
        key = ("separating", rail, op, metric)
        if key in self._seen or self._good(rail):
            return
        self._seen.add(key)
        pairs, suspects = separating_pairs(self.records, rail, self.bad_verdicts, self.exclude)
        for purpose, server, client in pairs:
            for attempt in range(1, self.repeats + 1):
                item = retest_item(purpose, attempt, server, client, rail, op, metric, {"server": server, "client": client})
                item["suspects"] = suspects
                self.items.append(item)


def pack_rounds(items, host_rails, base_port, round_offset=0, merge=False, side_tests=True):
    """Retest items (each with its ``id``) packed into rounds (a host at most once per rail per round), each in
    the shape of ``schedule.round_plan``; ``merge``: one plan holding every round as a step (see
    :func:`plan_retests`)."""
    if isinstance(round_offset, bool) or not isinstance(round_offset, int) or round_offset < 0:
        raise RetestError("round_offset must be an integer >= 0, got %r" % (round_offset,))
    batches = _pack(items)
    if merge:
        return _merged_rounds(batches, items, host_rails, base_port, round_offset, side_tests)
    return [_round(batch, host_rails, base_port, round_offset + num, side_tests=side_tests)
            for num, batch in enumerate(batches)]


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


def retest_item(purpose, attempt, server, client, rail, op, metric, origin, subject=None, partner=None, number=1):
    """A retest job before it is packed; ``number``: the retest pass it belongs to (1: the first)."""
    item = {"id": None, "purpose": purpose, "attempt": attempt, "server": server, "client": client, "rail": rail,
            "test": op, "metric": metric, "origin": dict(origin), "origins": [dict(origin)], "subject": subject,
            "partner": partner, "pass": number}
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
            chosen = [r for r in rails if rail_number(r.get("rail", rails.index(r))) == item["rail"]]
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
              "origin": "%s-%s" % (item["origin"]["server"], item["origin"]["client"]), "retest_id": item["id"],
              "retest_pass": item.get("pass", 1)}
    if item["purpose"] == "partner":
        params["subject"] = item["subject"]
        params["partner"] = item["partner"]
        params["origins"] = ["%s-%s" % (o["server"], o["client"]) for o in item["origins"]]
    if item["purpose"] in ("control", "cross"):
        params["suspects"] = list(item["suspects"])
    return params
