# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bisection of a bad collective pool: which subset to run next, which nodes are bad (pure).

- ``bisect_plan``: given a pool and the runs so far, the next subset to run
  and the nodes named bad.
- ``bisect_simulate``: the planner against a callable oracle.
- ``bisect_pool``: the planner driving a callable that runs a subset (the
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


class _Search(object):
    """Adaptive group testing where a run needs ``min_size`` hosts (a collective
    across nodes needs two).

    ``search()`` is a generator: it yields host lists to run and receives True
    when that run was bad. The pool run was bad, so the pool holds a bad host.
    A suspect group is split in halves and the first half is run, topped up
    with known-good hosts when it is smaller than ``min_size``:

    - good: its hosts are cleared and the second half must hold the fault
      (searched next, without a run of its own);
    - bad: it is searched first; the second half is set aside and run once,
      together with every other host set aside, when the search is done (a
      second bad host there is found the same way).

    A lone suspect is named bad after a bad run of it with known-good hosts
    only (``confirm=True``; a deduction alone is not trusted, so a flaky pool
    run cannot blame a healthy host) or as soon as it is deduced
    (``confirm=False``). When no host is known good yet, the rest of the group
    plus the untested hosts are run instead, and as a last resort pairs across
    the stuck groups are tried until one is good. With ``verify`` the pool
    without the hosts named bad is run once more at the end: if that run is
    bad too, the search was misled (a flaky result, or a fault no single host
    explains) and the plan says so. ``state`` is filled in as the search goes
    (good, bad, inferred, unresolved, tests).
    """

    def __init__(self, pool, state, min_size=2, confirm=True, verify=True):
        self.pool = list(pool)
        self.min_size = min_size
        self.confirm = confirm
        self.verify = verify
        state.update({"good": [], "bad": [], "inferred": [], "unresolved": [], "tests": []})
        self.state = state
        self.good, self.bad = state["good"], state["bad"]
        self.suspects = []   # groups holding a bad host, searched first to last
        self.unknown = []    # groups set aside, run together once the suspects are done
        self.stuck = []      # groups that cannot be run: no known-good partner yet
        self.requeued_at = 0

    # -- what is known
    def run(self, hosts):
        result = yield list(hosts)
        self.state["tests"].append({"hosts": list(hosts), "bad": bool(result)})
        return bool(result)

    def open_hosts(self, hosts):
        return [h for h in hosts if h not in self.good and h not in self.bad]

    def untested(self):
        return self.open_hosts([h for g in self.unknown for h in g])

    def padded(self, group):
        need = self.min_size - len(group)
        if need <= 0:
            return list(group)
        partners = [h for h in self.good if h not in group][:need]
        return list(group) + partners if len(partners) == need else None

    def confirmed(self, node):
        # A bad run of the smallest size whose other hosts are known good.
        for test in self.state["tests"]:
            if test["bad"] and node in test["hosts"] and len(test["hosts"]) <= self.min_size and all(
                    h == node or h in self.good for h in test["hosts"]):
                return True
        return False

    def tested(self, hosts):
        return any(sorted(t["hosts"]) == sorted(hosts) for t in self.state["tests"])

    def infer_bad(self, node):
        self.bad.append(node)
        self.state["inferred"].append(node)

    # -- the search
    def search(self):
        if not (yield from self.run(self.pool)):
            self.good.extend(self.pool)
            return self.state
        self.suspects.append(list(self.pool))
        while True:
            yield from self.search_suspects()
            if self.requeue_stuck():
                continue
            if not self.stuck or self.good:
                break
            if not (yield from self.seed_good_pair()):
                break
            self.suspects.extend(self.stuck)
            del self.stuck[:]
        self.mark_unresolved()
        yield from self.verify_rest()
        return self.state

    def search_suspects(self):
        while self.suspects or self.unknown:
            if not self.suspects:
                yield from self.flush()
                continue
            group = self.open_hosts(self.suspects.pop(0))
            if group:
                yield from self.narrow(group)

    def flush(self):
        # One run for every host not tested yet (kept aside while searching a bad half).
        group = self.untested()
        del self.unknown[:]
        if not group:
            return
        hosts = self.padded(group)
        if hosts is None:
            self.stuck.append(group)
        elif (yield from self.run(hosts)):
            self.suspects.append(group)
        else:
            self.good.extend(group)

    def narrow(self, group):
        """Name a lone suspect, or run the first half of a group and keep the half at fault."""
        lone = len(group) == 1
        if lone and self.confirmed(group[0]):
            self.bad.append(group[0])
            return
        if lone and not self.confirm:
            self.infer_bad(group[0])
            return
        first, second = ([group[0]], []) if lone else _halves(group)
        hosts = self.padded(first)
        if hosts is None:
            yield from self.narrow_without_partner(group, first)
            return
        was_bad = yield from self.run(hosts)
        if lone:
            (self.bad if was_bad else self.good).append(group[0])
        elif was_bad:
            self.suspects.insert(0, first)
            self.unknown.append(second)
        else:
            self.good.extend(first)
            self.suspects.insert(0, second)

    def narrow_without_partner(self, group, first):
        # A lone host needs a known-good partner. Clear the untested hosts
        # first; failing that, run the rest of the group with them.
        untested = self.untested()
        if len(untested) >= self.min_size:
            self.suspects.insert(0, group)
            yield from self.flush()
            return
        if len(group) == 1:
            self.infer_bad(group[0])
            return
        rest = [h for h in group if h not in first] + untested
        if len(rest) < self.min_size or self.tested(rest):
            self.stuck.append(group)
            return
        del self.unknown[:]
        if (yield from self.run(rest)):
            self.suspects.insert(0, rest)
            self.unknown.append(first)
        else:
            self.good.extend(rest)
            self.suspects.insert(0, first)

    def requeue_stuck(self):
        """Hosts became known good after these groups got stuck: retry them."""
        if not self.stuck or len(self.good) <= self.requeued_at:
            return False
        self.requeued_at = len(self.good)
        self.suspects.extend(self.stuck)
        del self.stuck[:]
        return True

    def seed_good_pair(self):
        # Every half tried so far held a bad host and none is known good:
        # look for one good pair across the stuck groups to use as partners.
        candidates = [h for g in self.stuck for h in reversed(g) if h not in self.bad]
        for a_index, a_host in enumerate(candidates):
            for b_host in candidates[a_index + 1:]:
                if self.tested([a_host, b_host]) or self.min_size != 2:
                    continue
                if not (yield from self.run([a_host, b_host])):
                    self.good.extend([a_host, b_host])
                    return True
            if len(self.state["tests"]) > 4 * len(self.pool):
                break
        return False

    def mark_unresolved(self):
        unresolved = self.state["unresolved"]
        for group in self.stuck:
            for host in self.open_hosts(group):
                if host not in unresolved:
                    unresolved.append(host)

    def verify_rest(self):
        rest = [h for h in self.pool if h not in self.bad and h not in self.state["unresolved"]]
        if self.verify and self.bad and len(rest) >= self.min_size:
            yield from self.run(rest)


def _replay(search, results):
    """Feed the runs made so far to the search; returns (finished, the host list it wants next)."""
    try:
        wanted = next(search)
        for index, result in enumerate(results):
            hosts = list(result.get("hosts") or [])
            if sorted(hosts) != sorted(wanted):
                raise BisectMismatch("run %d was on %s but the plan asked for %s" % (index, hosts, wanted))
            try:
                wanted = search.send(bool(result.get("bad")))
            except StopIteration:
                if index != len(results) - 1:
                    raise BisectMismatch("%d run(s) given after the plan was complete"
                                         % (len(results) - index - 1))
                raise
    except StopIteration:
        return True, None
    finally:
        search.close()
    return False, wanted


def _conclusion(state, unexplained):
    if not state["tests"][0]["bad"]:
        return "healthy"
    if unexplained:
        return "inconsistent"
    if state["unresolved"]:
        return "unresolved"
    return "isolated"


def bisect_plan(pool, results=None, min_size=2, confirm=True, verify=True, max_runs=None):
    """Which hosts to run next and which are named bad, given the runs so far.

    ``pool``: the host names; ``results``: runs already made, in order, each
    ``{'hosts': [...], 'bad': bool}`` (the first is the whole pool). Returns
    ``{done, next, bad_nodes, good_nodes, inferred, unresolved, unexplained,
    conclusion, runs}``; ``next`` is the host list to run now (None when done).
    ``conclusion``: ``pending``, ``healthy`` (the pool run was good),
    ``isolated`` (bad nodes named and every bad run explained),
    ``inconsistent`` (a bad run contains no node named bad: a flaky result or
    a fault that needs many hosts, e.g. a switch uplink), ``unresolved``
    (no known-good host to pair a suspect with), ``max_runs``.
    """
    pool = list(pool or [])
    if len(pool) != len(set(pool)):
        raise ValueError("pool has duplicate hosts")
    if len(pool) < min_size:
        raise ValueError("bisection needs at least %d hosts, got %d" % (min_size, len(pool)))
    results = list(results or [])
    state = {}
    search = _Search(pool, state, min_size=min_size, confirm=confirm, verify=verify).search()
    finished, wanted = _replay(search, results)
    bad = state["bad"]
    plan = {"done": True, "next": None, "bad_nodes": list(bad), "good_nodes": list(state["good"]),
            "inferred": list(state["inferred"]), "unresolved": list(state["unresolved"]),
            "unexplained": [], "conclusion": None, "runs": len(results)}
    if not finished:
        stopped = max_runs is not None and len(results) >= max_runs
        plan.update(done=stopped, next=None if stopped else wanted,
                    conclusion="max_runs" if stopped else "pending",
                    unresolved=[h for h in pool if h not in state["good"] and h not in bad] if stopped else [])
        return plan
    plan["unexplained"] = [i for i, t in enumerate(state["tests"])
                           if t["bad"] and not any(h in bad or h in state["unresolved"] for h in t["hosts"])]
    plan["conclusion"] = _conclusion(state, plan["unexplained"])
    return plan


def bisect_simulate(pool, is_bad, min_size=2, confirm=True, verify=True, max_runs=64):
    """Run the planner against a callable ``is_bad(hosts) -> bool``; return (plan, runs)."""
    runs = []
    while True:
        plan = bisect_plan(pool, runs, min_size=min_size, confirm=confirm, verify=verify, max_runs=max_runs)
        if plan["done"]:
            return plan, runs
        runs.append({"hosts": plan["next"], "bad": bool(is_bad(plan["next"]))})


def bisect_pool(names, run_subset, confirm=True, verify=True, max_runs=None):
    """Bisect a pool whose run was bad: ``run_subset(hosts) -> bool`` (bad) makes each further run.

    Returns the final plan of ``bisect_plan``.
    """
    runs = [{"hosts": list(names), "bad": True}]
    while True:
        plan = bisect_plan(names, runs, confirm=confirm, verify=verify, max_runs=max_runs)
        if plan["done"]:
            return plan
        runs.append({"hosts": list(plan["next"]), "bad": bool(run_subset(plan["next"]))})


def bisect_outcome(plan, cause, count):
    """What a finished bisection means for the pool run: (bad_nodes, cause, bisect summary).

    ``cause``: the pool run's cause; ``count``: the runs made, the pool run
    included.
    """
    keys = ("conclusion", "good_nodes", "unresolved", "inferred", "unexplained", "runs")
    summary = dict((k, plan[k]) for k in keys)
    summary["suspects"] = []
    named = plan["bad_nodes"]
    if plan["conclusion"] == "isolated":
        return named, "%s; bisection names %s (%d runs)" % (cause, ", ".join(named), count), summary
    if plan["conclusion"] == "inconsistent":
        # Names from a search that does not add up are suspects, not findings.
        summary["suspects"] = named
        return [], (
            "%s; bisection does not add up (%d runs): a run without any node it would name was bad as well%s. "
            "A flaky result or a fault that needs many hosts at once (a shared link or switch) is likely; "
            "run the check again" % (cause, count, " (suspects: %s)" % ", ".join(named) if named else "")), summary
    return named, "%s; bisection could not separate %s (%d runs)%s" % (
        cause, ", ".join(plan["unresolved"]) or "the hosts", count,
        "; named %s" % ", ".join(named) if named else ""), summary
