#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark (not a test): the verdict pipeline's pure functions at fleet scale.

For a full mesh of N hosts x R rails (one write bandwidth test per pair and
rail) with one slowed rail of one host, one slowed pair link and a few flaky
links, it times, on this machine's Python:

- pair records -> retest plan (as is + known-good partners, packed into rounds);
- tagging + classifying the retest results (confirmed / flaky);
- thresholds (hardware, fleet, history against 5 runs of history);
- localization (host / rail / link / fabric / flaky) with counter evidence;

and checks that the localization still names the injected faults. Usage::

    .venv/bin/python benchmarks/bench_verdicts.py [--hosts 16 64 128] [--rails 8] [--per-host 3] [--json out.json]

"steps" is how many retest steps the merged plan has: each costs one test
duration, so it is what the retests add to a run's wall time.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import argparse
import json
import os
import random
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, ".build", "collections"))

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization as loc  # noqa: E402
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest as rt  # noqa: E402
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest_plan as rp  # noqa: E402
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import thresholds as th  # noqa: E402

RATE = 400.0


def records(n, rails, seed=1):
    rnd = random.Random(seed)
    hosts = ["node%03d" % i for i in range(n)]
    bad_rail_host, link = hosts[n // 3], (hosts[1], hosts[n - 2])
    flaky = set()
    while len(flaky) < 3:
        a, b = sorted(rnd.sample(hosts, 2))
        if bad_rail_host not in (a, b) and set((a, b)) != set(link):
            flaky.add((a, b, rnd.randrange(rails)))
    out = []
    for rail in range(rails):
        for i, a in enumerate(hosts):
            for b in hosts[i + 1:]:
                slow = (rail == rails - 1 and bad_rail_host in (a, b)) or (rail == 0 and set((a, b)) == set(link)) \
                    or (a, b, rail) in flaky
                value = (80.0 if slow else 385.0) * rnd.uniform(0.98, 1.02)
                out.append({"kind": "rdma_bw", "host": a, "peer": b,
                            "params": {"op": "write", "metric": "bw", "rail": rail, "size": 65536,
                                       "device": "mlx5_%d" % rail, "peer_device": "mlx5_%d" % rail},
                            "metrics": {"bw_gbps": value, "expected_gbps": RATE},
                            "verdict": "fail" if value < 0.9 * RATE else "pass", "cause": None, "fix": None,
                            "evidence": []})
    rails_by_host = dict((h, [{"rail": k, "device": "mlx5_%d" % k, "port": 1, "gid_index": 3, "rate_gbps": RATE,
                               "address": "10.%d.%d.%d" % (k, i // 250, i % 250 + 1)} for k in range(rails)])
                         for i, h in enumerate(hosts))
    return out, rails_by_host, bad_rail_host, link, flaky


def retest_results(plan, bad_rail_host, link, rails):
    out = []
    for rnd in plan["rounds"]:
        for job in rnd["jobs"]:
            pair = set((job["server"], job["client"]))
            slow = (job["rail"] == rails - 1 and bad_rail_host in pair) or (job["rail"] == 0 and pair == set(link))
            value = 80.0 if slow else 385.0
            out.append({"kind": "rdma_bw", "host": job["server"], "peer": job["client"],
                        "params": {"op": job["test"], "metric": "bw", "rail": job["rail"], "round": job["round"],
                                   "device": job["server_device"], "peer_device": job["client_device"]},
                        "metrics": {"bw_gbps": value, "expected_gbps": RATE},
                        "verdict": "fail" if slow else "pass", "cause": None, "fix": None, "evidence": []})
    return out


def history(recs, runs=5):
    out = []
    for num in range(runs):
        for rec in recs:
            out.append(dict(rec, verdict="pass", metrics={"bw_gbps": 385.0}, run_id="r%d" % num,
                            time="2026-01-%02dT00:00:00Z" % (num + 1)))
    return out


def timed(func, *args, **kwargs):
    started = time.perf_counter()
    value = func(*args, **kwargs)
    return value, time.perf_counter() - started


def bench(n, rails, per_host=3):
    recs, rails_by_host, bad_rail_host, link, flaky = records(n, rails)
    plan, t_plan = timed(rp.plan_retests, recs, rails_by_host, repeats=1, max_jobs=100000, merge=True,
                         per_host=per_host or None)
    results = retest_results(plan, bad_rail_host, link, rails)
    tagged, t_tag = timed(rt.tag_retest_records, results, plan["rounds"])
    classified, t_class = timed(rt.classify, recs, tagged, skipped=plan["skipped"])
    past = history(recs)
    judged, t_thr = timed(th.evaluate, classified["records"], past, 0.9, set_verdicts=True)
    result, t_loc = timed(loc.localize_records, judged["records"])
    kinds = sorted((c["component"], c["host"], c["peer"], c["rail"]) for c in result["components"])
    expected = sorted([("rail", bad_rail_host, None, rails - 1), ("link", link[0], link[1], 0)]
                      + [("flaky", a, b, r) for a, b, r in flaky])
    return {"hosts": n, "rails": rails, "pair_records": len(recs), "retests": len(plan["retests"]),
            "retest_steps": plan["rounds"][0]["steps"] if plan["rounds"] else 0, "history_records": len(past),
            "plan_s": round(t_plan, 3), "tag_classify_s": round(t_tag + t_class, 3),
            "thresholds_s": round(t_thr, 3), "localize_s": round(t_loc, 3),
            "named_right": kinds == expected, "named": kinds if kinds != expected else None}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, nargs="+", default=[16, 64, 128])
    parser.add_argument("--rails", type=int, default=8)
    parser.add_argument("--per-host", type=int, default=3, help="retest per_host sampling (0: every pair)")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    rows = []
    print("%6s %5s %8s %8s %6s %8s %10s %9s %9s %s" % (
        "hosts", "rails", "records", "retests", "steps", "plan s", "classify s", "thresh s", "locate s", "named right"))
    for n in args.hosts:
        row = bench(n, args.rails, args.per_host)
        rows.append(row)
        print("%6d %5d %8d %8d %6d %8.3f %10.3f %9.3f %9.3f %s" % (
            row["hosts"], row["rails"], row["pair_records"], row["retests"], row["retest_steps"], row["plan_s"],
            row["tag_classify_s"], row["thresholds_s"], row["localize_s"], row["named_right"]))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=1)
    return 0 if all(r["named_right"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
