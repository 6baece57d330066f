#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark (not a test): a full RDMA mesh over N lab hosts with a fixed test duration.

For each N it brings up a lab of N network-namespace hosts (tests/lab; root
needed), runs the real ``ansible-playbook playbooks/rdma.yml`` over SSH with
``commcheck_rdma_pattern=mesh``, one op (write), one metric (bw) and a fixed
duration t per test, and prints

- wall: the whole ansible-playbook run (discovery, governor, every round,
  analysis, records), and the rounds phase alone (first round start to last
  round end, from the per-task timestamps of the run);
- ideal: rounds x t (every round costs exactly t);
- sequential: pairs x t (one pair at a time);
- wall / ideal, sequential / wall, and whether wall <= 1.25 x rounds x t + 30 s.

Usage::

    sudo .venv/bin/python benchmarks/bench_mesh.py [--hosts 8 16] [--duration 10] [--rails 1]
        [--strategy pipelined|rounds] [--background auto|always|never] [--json out.json]

The lab is taken down afterwards, also on Ctrl-C.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "lab"))

import lab as lablib  # noqa: E402  pylint: disable=wrong-import-position

PLAYBOOK = os.path.join(REPO, "playbooks", "rdma.yml")
TASK_RE = re.compile(r"^TASK \[(?P<name>.*?)\] \*+\s*$")
STAMP_RE = re.compile(r"^\w+ (?P<date>\d+ \w+ \d{4}\s+\d+:\d+:\d+ [+-]\d{4})")


def ansible_playbook(lab, extra_vars, log_path, history_dir):
    argv = [os.path.join(REPO, ".venv", "bin", "ansible-playbook"), "-i", lab.inventory,
            "-e", json.dumps(extra_vars), PLAYBOOK]
    env = lab.ansible_env({"ANSIBLE_CALLBACK_RESULT_FORMAT": "yaml",
                           "ANSIBLE_CALLBACKS_ENABLED": "clusterops.commcheck.commcheck_history",
                           "COMMCHECK_HISTORY_DIR": history_dir, "COMMCHECK_HISTORY_FSYNC": "false"})
    started = time.monotonic()
    marks = []
    with open(log_path, "w") as log:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                                env=env, cwd=REPO)
        for line in proc.stdout:
            log.write(line)
            match = TASK_RE.match(line)
            if match:
                marks.append((time.monotonic() - started, match.group("name")))
        proc.wait()
    return proc.returncode, time.monotonic() - started, marks


def task_times(marks, total):
    """[(name, seconds)] for every task, from the TASK banners' arrival times."""
    out = []
    for num, (start, name) in enumerate(marks):
        end = marks[num + 1][0] if num + 1 < len(marks) else total
        out.append((name.split(" : ", 1)[-1], end - start))
    return out


def rounds_phase(marks, total):
    """Seconds the tests took as Ansible saw them: from the first test task to the task after the last."""
    names = [mark[1].split(" : ", 1)[-1] for mark in marks]
    # the test tasks of the pair checks' shared task files (roles/pair_perf), RDMA and TCP alike
    first = ("Run every round of this host", "Run every pair and rail of the round at once")
    # the task after a pipelined run (its result is the module's), or after each round's run
    last = ("Run the rounds one after the other, or collect the tests from the background", "Keep the results",
            "Keep the results of the round")
    starts = [i for i, n in enumerate(names) if n in first]
    ends = [i for i, n in enumerate(names) if n in last]
    if not starts or not ends:
        return None
    end = marks[ends[-1]][0]
    return end - marks[starts[0]][0]


def verdict_counts(history_dir):
    counts = {}
    for name in sorted(os.listdir(history_dir)) if os.path.isdir(history_dir) else []:
        with open(os.path.join(history_dir, name)) as handle:
            for line in handle:
                rec = json.loads(line)
                if rec.get("kind") == "rdma_bw":
                    counts[rec["verdict"]] = counts.get(rec["verdict"], 0) + 1
    return counts


def bench(hosts, duration, rails, rate, keep_logs, strategy, background):
    name = "bm%d" % hosts
    lablib.down(name)
    t0 = time.monotonic()
    lab = lablib.up(name, hosts, rails, rate=rate, owner_pid=os.getpid())
    up_s = time.monotonic() - t0
    try:
        rounds = hosts - 1 if hosts % 2 == 0 else hosts
        pairs = hosts * (hosts - 1) // 2
        extra = {"commcheck_rdma_pattern": "mesh", "commcheck_rdma_ops": ["write"], "commcheck_rdma_metrics": ["bw"],
                 "commcheck_rdma_duration": duration, "commcheck_min_fraction": 0.5,
                 "commcheck_rdma_strategy": strategy, "commcheck_rdma_background": background}
        log_path = os.path.join(keep_logs or lab.dir, "bench-mesh-%d-%s-%s.log" % (hosts, strategy, background))
        history_dir = os.path.join(lab.dir, "bench-history")
        rc, wall, marks = ansible_playbook(lab, extra, log_path, history_dir)
        verdicts = verdict_counts(history_dir)
        phase = rounds_phase(marks, wall)
        times = task_times(marks, wall)
        left = lab.pids()
    finally:
        lablib.down(name)
    ideal = rounds * duration
    sequential = pairs * duration
    target = 1.25 * ideal + 30
    return {
        "hosts": hosts, "rails": rails, "duration_s": duration, "rounds": rounds, "pairs": pairs,
        "strategy": strategy, "background": background, "verdicts": verdicts,
        "lab_up_s": round(up_s, 1), "rc": rc, "wall_s": round(wall, 1),
        "rounds_phase_s": round(phase, 1) if phase is not None else None,
        "ideal_s": ideal, "sequential_s": sequential,
        "wall_over_ideal": round(wall / ideal, 3), "sequential_over_wall": round(sequential / wall, 2),
        "per_round_overhead_s": round((phase - ideal) / rounds, 2) if phase is not None else None,
        "target_s": target, "meets_target": wall <= target, "processes_left": len(left), "log": log_path,
        "slowest_tasks": [(name, round(sec, 1)) for name, sec in sorted(times, key=lambda t: -t[1])[:8]],
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, nargs="+", default=[8, 16])
    parser.add_argument("--duration", type=int, default=10, help="seconds per test (t)")
    parser.add_argument("--rails", type=int, default=1)
    parser.add_argument("--rate", default=lablib.DEFAULT_RATE, help="nominal lab link rate (tc)")
    parser.add_argument("--strategy", default="pipelined", choices=["pipelined", "rounds"],
                        help="commcheck_rdma_strategy")
    parser.add_argument("--background", default="auto", choices=["auto", "always", "never"],
                        help="commcheck_rdma_background")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--logs", help="directory to keep the ansible-playbook logs in")
    args = parser.parse_args(argv)
    if not lablib.is_root():
        parser.error("the lab needs root")
    results = []
    for hosts in args.hosts:
        res = bench(hosts, args.duration, args.rails, args.rate, args.logs, args.strategy, args.background)
        results.append(res)
        sys.stdout.write(
            "N=%(hosts)d rails=%(rails)d t=%(duration_s)ds strategy=%(strategy)s background=%(background)s: "
            "rounds=%(rounds)d pairs=%(pairs)d rc=%(rc)d records %(verdicts)s\n"
            "  wall %(wall_s).1fs (test phase %(rounds_phase_s)ss, %(per_round_overhead_s)ss over t per round)\n"
            "  ideal rounds x t = %(ideal_s)ds, sequential pairs x t = %(sequential_s)ds\n"
            "  wall/ideal = %(wall_over_ideal).3f, sequential/wall = %(sequential_over_wall).2f, "
            "target 1.25 x ideal + 30 = %(target_s).1fs: %(verdict)s; processes left: %(processes_left)d\n"
            % dict(res, verdict="MET" if res["meets_target"] else "MISSED"))
        for name, sec in res["slowest_tasks"]:
            sys.stdout.write("    %6.1fs  %s\n" % (sec, name))
        sys.stdout.flush()
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=1)
    return 0 if all(r["rc"] == 0 and r["meets_target"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
