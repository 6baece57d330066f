# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark of the history: write a year of records (10^6 by default), then query it.

Not a test: it prints timings. A year here is 365 daily runs of a 16-host
cluster (240 rdma_bw pairs x 2 ops + 240 tcp_bw + 16 discover + a summary
= ~ 2,700 lines per run, about 1,000,000 lines in 12 month files).

    .venv/bin/python benchmarks/bench_history.py [--records 1000000] [--dir /tmp/bench-history] [--keep]
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import argparse
import datetime
import itertools
import os
import random
import shutil
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, ".build", "collections"))

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline  # noqa: E402
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history  # noqa: E402
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history_baseline  # noqa: E402

UTC = datetime.timezone.utc


def one_run(hosts, rng, slow=None):
    records = []
    for op in ("write", "read"):
        for host, peer in itertools.permutations(hosts, 2):
            bw = rng.gauss(95, 1.5) * (0.4 if slow in (host, peer) else 1)
            records.append({"kind": "rdma_bw", "host": host, "peer": peer,
                            "params": {"op": op, "device": "mlx5_0", "rail": 0, "size": 65536},
                            "metrics": {"bw_gbps": round(bw, 2), "expected_gbps": 100.0, "fraction": round(bw / 100, 4)},
                            "verdict": "pass" if bw > 90 else "fail", "cause": None, "fix": None,
                            "evidence": ["ib_%s_bw -d mlx5_0 -x 3 --report_gbits %s" % (op, peer)]})
    for host, peer in itertools.permutations(hosts, 2):
        records.append({"kind": "tcp_bw", "host": host, "peer": peer, "params": {"op": "tcp", "streams": 4},
                        "metrics": {"bw_gbps": round(rng.gauss(23, 1), 2)}, "verdict": "pass",
                        "cause": None, "fix": None, "evidence": []})
    for host in hosts:
        records.append({"kind": "discover", "host": host, "peer": None, "params": {"device": "mlx5_0"},
                        "metrics": {"rate_gbps": 100}, "verdict": "pass", "cause": None, "fix": None, "evidence": []})
    return records


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--records", type=int, default=1000000)
    parser.add_argument("--hosts", type=int, default=16)
    parser.add_argument("--dir")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--reuse", action="store_true", help="query the history already in --dir, write nothing")
    args = parser.parse_args()
    directory = args.dir or tempfile.mkdtemp(prefix="bench-history-")
    rng = random.Random(7)
    hosts = ["node-%02d" % i for i in range(args.hosts)]
    per_run = len(one_run(hosts, rng)) + 1
    runs = max(2, args.records // per_run)
    start = datetime.datetime(2025, 1, 1, 2, 0, tzinfo=UTC)
    step = datetime.timedelta(days=365.0 / runs)

    if args.reuse and args.dir and history.history_files(directory):
        runs = len(history.list_runs(directory))
        print("reusing %s: %d runs" % (directory, runs))
    else:
        t0 = time.time()
        total = 0
        for index in range(runs):
            when = start + index * step
            run_id = "run-%05d" % index
            slow = hosts[3] if index == runs - 1 else None
            stamped = history.append_records(directory, history.normalize_records(one_run(hosts, rng, slow))[0],
                                             run_id, when=when)
            history.append_lines(history.history_file(directory, when), [history.dumps(history.stamp(
                {"kind": "summary", "host": None, "peer": None, "verdict": "pass"}, run_id, when))])
            total += len(stamped) + 1
        write_s = time.time() - t0
        size = sum(os.path.getsize(os.path.join(directory, n)) for n in os.listdir(directory))
        print("wrote %d records (%d runs, %d files, %.0f MB) in %.1f s: %.0f records/s (normalize + fsync per run)"
              % (total, runs, len(os.listdir(directory)), size / 1e6, write_s, total / write_s))

    print("%-62s %8s %8s" % ("query", "wall s", "cpu s"))

    def timed(label, func):
        wall, cpu = time.time(), time.process_time()
        out = func()
        shown = "%d records" % len(out) if isinstance(out, list) else out
        print("%-62s %8.2f %8.2f  -> %s" % (label, time.time() - wall, time.process_time() - cpu, shown))
        return out

    now = start + runs * step
    everything = history.Selection(include_summary=True)
    timed("count every record (full scan, every line parsed, streamed)",
          lambda: sum(1 for _record in history.select(directory, everything)))
    timed("kind=rdma_bw host=node-03 (whole year)",
          lambda: len(history.query(directory, kind="rdma_bw", host="node-03")))
    timed("kind=rdma_bw host=node-03 peer=node-04, JMESPath bw list",
          lambda: len(history.query(directory, kind="rdma_bw", host="node-03", peer="node-04",
                                    jmespath_query="[].metrics.bw_gbps")))
    timed("since=30d (one or two month files)",
          lambda: len(history.query(directory, since="30d", now=now)))
    timed("verdict=fail (whole year)", lambda: len(history.query(directory, verdict="fail")))
    timed("last_runs=3 (whole year)", lambda: len(history.query(directory, last_runs=3)))
    timed("list_runs", lambda: len(history.list_runs(directory)))
    current = history.query(directory, run_id="run-%05d" % (runs - 1))
    compared = timed("baseline compare of the last run (K=5)",
                     lambda: history_baseline.compare_with_history(current, directory,
                                                                   exclude_runs=["run-%05d" % (runs - 1)],
                                                                   ignore_params=baseline.DEFAULT_IGNORE_PARAMS))
    print("regressions found in the last run: %d (node-03's links were slowed)" % len(baseline.regressions(compared)))
    if not args.keep and not args.dir:
        shutil.rmtree(directory)
    else:
        print("history kept in %s" % directory)


if __name__ == "__main__":
    main()
