#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark (not a test): rounds and runs of the collective bisection, simulated.

For N = 4, 8, 16, ..., 1024 hosts it runs the planner (``bisect_simulate``)
against an exact oracle (a run is bad when it holds a bad host) with

- one bad host at every position (N <= 64; a sample of positions above),
- two bad hosts at a sample of position pairs,

and prints the most and the mean rounds (the pool run and the verify run
included) and runs, next to the target ceil(log2 N) + 2 rounds. The old
planner (one run at a time, so its rounds are its runs) is loaded from the
git history for comparison; without git its columns say ``-``.

Usage::

    .venv/bin/python benchmarks/bench_bisection.py [--max-hosts 1024] [--samples 64] [--seed 1] [--no-old]
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import argparse
import itertools
import math
import os
import random
import subprocess
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
COLLECTIONS = os.path.join(REPO, ".build", "collections")
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import bisection  # noqa: E402

# The last commit of bisection.py with the sequential planner (one run at a time).
OLD_PLANNER_COMMIT = "9ea480715cfa614273d466f9854ed5e4bf825258"
OLD_PLANNER_PATH = "plugins/module_utils/planning/bisection.py"


def load_old_planner():
    """The sequential planner from the git history, as a module; None when git or the commit is missing."""
    try:
        source = subprocess.run(["git", "-C", REPO, "show", "%s:%s" % (OLD_PLANNER_COMMIT, OLD_PLANNER_PATH)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True,
                                universal_newlines=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    module = types.ModuleType("old_bisection")
    exec(compile(source, "old_bisection.py", "exec"), module.__dict__)   # our own file, from our history
    return module


def pool_of(n):
    return ["n%04d" % i for i in range(n)]


def cases(n, faults, samples, rng):
    """Position tuples of the bad hosts: all of them when there are few enough, else a sample."""
    if faults == 1 and (n <= 64 or n <= samples):
        return [(i,) for i in range(n)]
    if faults == 1:
        return [(i,) for i in sorted(rng.sample(range(n), samples))]
    every = math.factorial(n) // (math.factorial(faults) * math.factorial(n - faults))
    if every <= samples:
        return list(itertools.combinations(range(n), faults))
    picked = set()
    while len(picked) < samples:
        picked.add(tuple(sorted(rng.sample(range(n), faults))))
    return sorted(picked)


def simulate_new(pool, bad):
    plan, runs = bisection.bisect_simulate(pool, lambda hosts: bool(bad & set(hosts)), max_runs=2 * len(pool) + 3)
    return plan, len(plan["rounds"]), len(runs)


def simulate_old(old, pool, bad):
    plan, runs = old.bisect_simulate(pool, lambda hosts: bool(bad & set(hosts)), max_runs=2 * len(pool) + 3)
    return plan, len(runs), len(runs)


def measure(n, faults, positions, old):
    pool = pool_of(n)
    new_rounds, new_runs, old_runs, wrong = [], [], [], 0
    for position in positions:
        bad = set(pool[i] for i in position)
        plan, rounds, runs = simulate_new(pool, bad)
        wrong += set(plan["bad_nodes"]) != bad
        new_rounds.append(rounds)
        new_runs.append(runs)
        if old is not None:
            old_runs.append(simulate_old(old, pool, bad)[2])
    return {"n": n, "faults": faults, "cases": len(positions), "bound": int(math.ceil(math.log2(n))) + 2,
            "rounds": new_rounds, "runs": new_runs, "old": old_runs, "wrong": wrong}


def stats(values):
    if not values:
        return "-", "-"
    return str(max(values)), "%.1f" % (float(sum(values)) / len(values))


def row(m):
    rounds_max, rounds_mean = stats(m["rounds"])
    runs_max, runs_mean = stats(m["runs"])
    old_max, old_mean = stats(m["old"])
    within = "yes" if max(m["rounds"]) <= m["bound"] else "no (+%d)" % (max(m["rounds"]) - m["bound"])
    return "| %d | %d | %d | %s | %s | %d | %s | %s | %s | %s | %s | %d |" % (
        m["n"], m["faults"], m["cases"], rounds_max, rounds_mean, m["bound"], within, runs_max, runs_mean,
        old_max, old_mean, m["wrong"])


HEADER = ("| N | bad | cases | rounds max | rounds mean | ceil(log2 N)+2 | within | runs max | runs mean "
          "| old runs = rounds, max | old mean | wrong |\n"
          "|---:|---:|---:|---:|---:|---:|:---|---:|---:|---:|---:|---:|")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--max-hosts", type=int, default=1024)
    parser.add_argument("--samples", type=int, default=64, help="positions sampled where not all are run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-old", action="store_true", help="leave out the old sequential planner")
    args = parser.parse_args(argv)
    old = None if args.no_old else load_old_planner()
    rng = random.Random(args.seed)
    print(HEADER)
    n = 4
    while n <= args.max_hosts:
        for faults in (1, 2):
            print(row(measure(n, faults, cases(n, faults, args.samples, rng), old)))
            sys.stdout.flush()
        n *= 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
