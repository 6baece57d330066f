# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bisection of a bad collective pool in rounds of concurrent runs (pure).

- ``bisect_plan``: given a pool and the runs so far, the runs of the next
  round (disjoint host sets, to run at the same time) and the nodes named bad.
- ``bisect_simulate``: the planner against a callable oracle.
- ``bisect_pool``: the planner driving a callable that runs a round (the
  ``collective`` module's loop), and ``bisect_outcome``: what its plan means
  for the pool run's result (bad nodes, cause, the ``bisect`` return value).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class BisectMismatch(ValueError):
    """The runs given do not follow the plan."""


def _halves(group):
    cut = (len(group) + 1) // 2
    return group[:cut], group[cut:]


def _flat(groups):
    return [h for g in groups for h in g]


def _disjoint_pairs(candidates, tested):
    """Pairs of candidates never run together so far, no host in two of them (first come, first paired)."""
    pairs, used = [], set()
    for index, first in enumerate(candidates):
        if first in used:
            continue
        for second in candidates[index + 1:]:
            if second not in used and frozenset((first, second)) not in tested:
                pairs.append([first, second])
                used.update((first, second))
                break
    return pairs


class _Rounds(object):
    """Adaptive group testing in rounds, where a run needs ``min_size`` hosts (a
    collective across nodes needs two).

    ``search()`` is a generator: it yields the runs of one round (disjoint host
    lists, made at the same time) and receives, for each, True when it was
    bad. Round 1 is the pool run; it was bad, so the pool holds a bad host.

    Every round runs both halves of every suspect group (a group known to hold
    a bad host); a half smaller than ``min_size`` is topped up with known-good
    hosts no other run of the round uses, or waits for a later round. A good
    half clears its hosts; a bad half is a suspect group of the next round. A
    group whose halves could not all run: when no half that ran was bad, the
    fault is in the halves that did not run; otherwise those wait, untested,
    and run (together) in a later round.

    A lone suspect is named bad after a bad run of it with known-good hosts
    only (``confirm=True``; a deduction alone is not trusted, so a flaky pool
    run cannot blame a healthy host) or as soon as it is deduced
    (``confirm=False``). When nothing can run for want of known-good hosts,
    the pool without its one remaining suspect is run (that run doubles as the
    verify run), or pairs across the stuck groups until one is good.

    When every host is cleared and none named, no part of the pool reproduced
    its failure: the pool is run once more as it was (``retest``: ``passed``,
    a flaky failure; ``failed``, a fault that needs hosts of several parts
    together). With ``verify`` the pool without the hosts named bad is run
    once at the end: if that run is bad too, the search was misled (a flaky
    result, or a fault no single host explains) and the plan says so.
    ``state`` is filled in as the search goes (good, bad, inferred,
    unresolved, tests, rounds, retest).
    """

    def __init__(self, pool, state, min_size=2, confirm=True, verify=True):
        self.pool = list(pool)
        self.min_size = min_size
        self.confirm = confirm
        self.verify = verify
        state.update({"good": [], "bad": [], "inferred": [], "unresolved": [], "tests": [], "rounds": [],
                      "retest": None})
        self.state = state
        self.good, self.bad = state["good"], state["bad"]
        self.known = set()      # good or bad
        self.tested_sets = set()
        self.suspects = []      # disjoint groups, each holding a bad host
        self.waiting = []       # hosts of halves that found no partner: not run since the pool run
        self.hypothesis = None  # the last round ran the pool without its one remaining suspect

    # -- what is known
    def mark_good(self, hosts):
        for host in hosts:
            if host not in self.known:
                self.known.add(host)
                self.good.append(host)

    def mark_bad(self, host, inferred=False):
        if host not in self.known:
            self.known.add(host)
            self.bad.append(host)
            if inferred:
                self.state["inferred"].append(host)

    def open_hosts(self, hosts):
        return [h for h in hosts if h not in self.known]

    def confirmed(self, node):
        # A bad run of the smallest size whose other hosts are known good.
        good = set(self.good)
        return any(test["bad"] and node in test["hosts"] and len(test["hosts"]) <= self.min_size
                   and all(h == node or h in good for h in test["hosts"]) for test in self.state["tests"])

    def tested(self, hosts):
        return frozenset(hosts) in self.tested_sets

    def run_round(self, runs):
        results = yield [list(hosts) for hosts in runs]
        number = len(self.state["rounds"]) + 1
        made = [{"hosts": list(hosts), "bad": bool(bad), "round": number} for hosts, bad in zip(runs, results)]
        self.state["tests"].extend(made)
        self.state["rounds"].append(made)
        self.tested_sets.update(frozenset(t["hosts"]) for t in made)
        return [t["bad"] for t in made]

    # -- the search
    def search(self):
        (pool_bad,) = yield from self.run_round([self.pool])
        if not pool_bad:
            self.mark_good(self.pool)
            return self.state
        self.suspects.append(list(self.pool))
        while len(self.state["rounds"]) <= 4 * len(self.pool) + 8:
            if not (yield from self.search_round()):
                break
        if len(self.good) == len(self.pool):
            yield from self.retest_pool()
            return self.state
        self.mark_unresolved()
        yield from self.verify_rest()
        return self.state

    def search_round(self):
        """One round of the search; False when nothing is left that can run."""
        self.name_lone_suspects()
        entries, runs = self.plan_halves()
        if not runs:
            self.learn(entries, [])   # nothing ran: every group stays as it was
            entries, runs = self.plan_stuck()
            if not runs:
                return False
        self.hypothesis = runs[0] if entries[0]["kind"] == "hypothesis" else None
        results = yield from self.run_round(runs)
        self.learn(entries, results)
        return True

    def name_lone_suspects(self):
        groups, self.suspects = [self.open_hosts(g) for g in self.suspects], []
        for group in groups:
            if len(group) == 1 and self.confirmed(group[0]):
                self.mark_bad(group[0])
            elif len(group) == 1 and not self.confirm:
                self.mark_bad(group[0], inferred=True)
            elif group:
                self.suspects.append(group)

    def plan_halves(self):
        """Both halves of every suspect group and the waiting hosts, each topped up from ``free``."""
        free = list(self.good)
        groups = [("suspect", g) for g in self.suspects]
        waiting = self.open_hosts(self.waiting)
        if waiting:
            groups.append(("waiting", waiting))
        self.suspects, self.waiting = [], []
        entries, runs = [], []
        for kind, group in groups:
            parts = _halves(group) if kind == "suspect" and len(group) > 1 else (group,)
            halves = []
            for part in parts:
                hosts = self.topped_up(part, free)
                halves.append((list(part), len(runs) if hosts else None))
                if hosts:
                    runs.append(hosts)
            entries.append({"kind": kind, "halves": halves})
        return entries, runs

    def topped_up(self, part, free):
        need = self.min_size - len(part)
        if need <= 0:
            return list(part)
        if len(free) < need:
            return None
        partners, free[:need] = free[:need], []
        return list(part) + partners

    def plan_stuck(self):
        """No half can run for want of known-good partners: the pool without its sole suspect, or pairs."""
        sole = self.sole_suspect()
        rest = [h for h in self.pool if h not in self.bad and h != sole]
        if sole is not None and len(rest) >= self.min_size and not self.tested(rest):
            return [{"kind": "hypothesis", "halves": [(rest, 0)]}], [rest]
        if self.min_size != 2 or len(self.state["tests"]) > 4 * len(self.pool):
            return [], []
        candidates = [h for g in self.suspects for h in reversed(g)] + self.open_hosts(self.waiting)
        pairs = _disjoint_pairs(candidates, self.tested_sets)
        return [{"kind": "pair", "halves": [(p, i)]} for i, p in enumerate(pairs)], pairs

    def sole_suspect(self):
        """The one open host in every bad run that no named host explains, if there is exactly one."""
        common = None
        bad = set(self.bad)
        for test in self.state["tests"]:
            if test["bad"] and not bad.intersection(test["hosts"]):
                hosts = set(self.open_hosts(test["hosts"]))
                common = hosts if common is None else common & hosts
        return next(iter(common)) if common and len(common) == 1 else None

    def learn(self, entries, results):
        for entry in entries:
            outcomes = [(half, results[i] if i is not None else None) for half, i in entry["halves"]]
            for half, bad in outcomes:
                if bad is False:
                    self.mark_good(half)
            if entry["kind"] in ("pair", "hypothesis"):
                continue
            bad_halves = [half for half, bad in outcomes if bad]
            not_run = _flat(half for half, bad in outcomes if bad is None)
            self.suspects.extend(bad_halves)
            if entry["kind"] == "suspect" and not bad_halves and not_run:
                self.suspects.append(not_run)   # the group's fault must be in what did not run
            else:
                self.waiting.extend(not_run)

    def retest_pool(self):
        (bad,) = yield from self.run_round([self.pool])
        self.state["retest"] = "failed" if bad else "passed"

    def mark_unresolved(self):
        unresolved = self.state["unresolved"]
        for host in self.open_hosts(_flat(self.suspects) + self.waiting):
            if host not in unresolved:
                unresolved.append(host)

    def verify_rest(self):
        rest = [h for h in self.pool if h not in self.bad and h not in self.state["unresolved"]]
        if not (self.verify and self.bad and len(rest) >= self.min_size):
            return
        last = self.state["rounds"][-1]
        if self.hypothesis and len(last) == 1 and not last[0]["bad"] and sorted(last[0]["hosts"]) == sorted(rest):
            return   # the last round already ran the pool without the named host(s)
        yield from self.run_round([rest])


def _match_round(wanted, given, offset):
    """The results of the round's runs in plan order (None: not given yet); the given runs may be in any order."""
    keys = [frozenset(hosts) for hosts in wanted]
    found = {}
    for index, run in enumerate(given):
        hosts = list(run.get("hosts") or [])
        key = frozenset(hosts)
        if key not in keys or key in found or len(key) != len(hosts):
            raise BisectMismatch("run %d was on %s but the round asked for %s" % (offset + index, hosts, wanted))
        found[key] = bool(run.get("bad"))
    return [found.get(key) for key in keys]


def _replay(search, results):
    """Feed the runs made so far to the search, a round at a time.

    Returns (finished, the round's runs still to make, the round's number).
    """
    offset, number = 0, 1
    try:
        wanted = next(search)
        while True:
            given = results[offset:offset + len(wanted)]
            outcome = _match_round(wanted, given, offset)
            if len(given) < len(wanted):
                return False, [w for w, bad in zip(wanted, outcome) if bad is None], number
            offset += len(given)
            number += 1
            try:
                wanted = search.send(outcome)
            except StopIteration:
                if offset != len(results):
                    raise BisectMismatch("%d run(s) given after the plan was complete" % (len(results) - offset))
                raise
    except StopIteration:
        return True, None, None
    finally:
        search.close()


def _conclusion(state, unexplained):
    if not state["tests"][0]["bad"]:
        return "healthy"
    if state["retest"] == "passed":
        return "flaky"
    if unexplained:
        return "inconsistent"
    if state["unresolved"]:
        return "unresolved"
    return "isolated"


def bisect_plan(pool, results=None, min_size=2, confirm=True, verify=True, max_runs=None):
    """The runs of the next round and the nodes named bad, given the runs so far.

    ``pool``: the host names; ``results``: runs already made, round after
    round, each ``{'hosts': [...], 'bad': bool}`` (the first is the whole
    pool; within a round in any order). Returns ``{done, next, next_round,
    round, bad_nodes, good_nodes, inferred, unresolved, unexplained,
    conclusion, runs, rounds, retest}``: ``next_round`` the host lists still to
    run in round number ``round`` (disjoint: run them at the same time),
    ``next`` the first of them (None when done), ``rounds`` the rounds made
    (lists of ``{hosts, bad, round}``). ``conclusion``: ``pending``,
    ``healthy`` (the pool run was good), ``isolated`` (bad nodes named and
    every bad run explained), ``flaky`` (no part of the pool failed and the
    pool passed on retest), ``inconsistent`` (a bad run contains no node named
    bad: a flaky result or a fault that needs many hosts, e.g. a switch
    uplink; ``retest`` ``failed`` when the pool failed again as it was),
    ``unresolved`` (no known-good host to pair a suspect with), ``max_runs``
    (the next round would make more than ``max_runs`` runs in all).
    """
    pool = list(pool or [])
    if len(pool) != len(set(pool)):
        raise ValueError("pool has duplicate hosts")
    if len(pool) < min_size:
        raise ValueError("bisection needs at least %d hosts, got %d" % (min_size, len(pool)))
    results = list(results or [])
    state = {}
    search = _Rounds(pool, state, min_size=min_size, confirm=confirm, verify=verify).search()
    finished, wanted, number = _replay(search, results)
    plan = {"done": True, "next": None, "next_round": [], "round": None, "bad_nodes": list(state["bad"]),
            "good_nodes": list(state["good"]), "inferred": list(state["inferred"]),
            "unresolved": list(state["unresolved"]), "unexplained": [], "conclusion": None, "runs": len(results),
            "rounds": [list(r) for r in state["rounds"]], "retest": state["retest"]}
    if not finished:
        if max_runs is not None and len(results) + len(wanted) > max_runs:
            known = set(state["good"]) | set(state["bad"])
            plan.update(conclusion="max_runs", unresolved=[h for h in pool if h not in known])
        else:
            plan.update(done=False, next=wanted[0], next_round=wanted, round=number, conclusion="pending",
                        unresolved=[])
        return plan
    plan["unexplained"] = _unexplained(state)
    plan["conclusion"] = _conclusion(state, plan["unexplained"])
    return plan


def _unexplained(state):
    """Indexes of the bad runs that hold no host named bad or left unresolved."""
    named = set(state["bad"]) | set(state["unresolved"])
    return [i for i, test in enumerate(state["tests"]) if test["bad"] and not named.intersection(test["hosts"])]


def bisect_simulate(pool, is_bad, min_size=2, confirm=True, verify=True, max_runs=64):
    """Run the planner against a callable ``is_bad(hosts) -> bool``; return (plan, runs).

    The runs of a round are asked in plan order; each run has its ``round``.
    """
    runs = []
    while True:
        plan = bisect_plan(pool, runs, min_size=min_size, confirm=confirm, verify=verify, max_runs=max_runs)
        if plan["done"]:
            return plan, runs
        runs.extend({"hosts": hosts, "bad": bool(is_bad(hosts)), "round": plan["round"]}
                    for hosts in plan["next_round"])


def bisect_pool(names, run_round, confirm=True, verify=True, max_runs=None):
    """Bisect a pool whose run was bad, round after round.

    ``run_round(subsets, number) -> [bad, ...]`` makes the runs of round
    ``number`` (disjoint host lists, to run at the same time) and says which
    were bad, in order. Returns the final plan of ``bisect_plan``.
    """
    runs = [{"hosts": list(names), "bad": True, "round": 1}]
    while True:
        plan = bisect_plan(names, runs, confirm=confirm, verify=verify, max_runs=max_runs)
        if plan["done"]:
            return plan
        subsets = [list(hosts) for hosts in plan["next_round"]]
        results = list(run_round(subsets, plan["round"]))
        if len(results) != len(subsets):
            raise BisectMismatch("round %s: %d result(s) for %d run(s)" % (plan["round"], len(results), len(subsets)))
        runs.extend({"hosts": hosts, "bad": bool(bad), "round": plan["round"]} for hosts, bad in zip(subsets, results))


def bisect_outcome(plan, cause, count):
    """What a finished bisection means for the pool run: (bad_nodes, cause, bisect summary).

    ``cause``: the pool run's cause; ``count``: the runs made, the pool run
    included.
    """
    keys = ("conclusion", "good_nodes", "unresolved", "inferred", "unexplained", "runs", "retest")
    summary = dict((k, plan.get(k)) for k in keys)
    rounds = len(plan.get("rounds") or [])
    summary.update(suspects=[], rounds=rounds)
    made = "%d runs in %d rounds" % (count, rounds)
    named = plan["bad_nodes"]
    if plan["conclusion"] == "isolated":
        return named, "%s; bisection names %s (%s)" % (cause, ", ".join(named), made), summary
    if plan["conclusion"] == "flaky":
        failed = sum(1 for r in plan.get("rounds") or [] for run in r if run["bad"])
        return [], "failed %s, passed on retest (%s; %s)" % (
            "once" if failed <= 1 else "%d times" % failed, cause, made), summary
    if plan["conclusion"] == "inconsistent":
        # Names from a search that does not add up are suspects, not findings.
        summary["suspects"] = named
        return [], _inconsistent_cause(plan, cause, made, named), summary
    return named, "%s; bisection could not separate %s (%s)%s" % (
        cause, ", ".join(plan["unresolved"]) or "the hosts", made,
        "; named %s" % ", ".join(named) if named else ""), summary


def _inconsistent_cause(plan, cause, made, named):
    if plan.get("retest") == "failed":
        return ("%s; the pool failed again on retest while no part of it failed on its own (%s): the fault needs "
                "hosts of both halves together (a shared link, a switch, the fabric)" % (cause, made))
    return ("%s; bisection does not add up (%s): a run without any node it would name was bad as well%s. "
            "A flaky result or a fault that needs many hosts at once (a shared link or switch) is likely; "
            "run the check again" % (cause, made, " (suspects: %s)" % ", ".join(named) if named else ""))
