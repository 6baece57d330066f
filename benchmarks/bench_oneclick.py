#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark (not a test): the whole one-click run (playbooks/commcheck.yml) on N lab hosts.

For each N it brings up a lab of N network-namespace hosts (tests/lab; root
needed), runs the real ``ansible-playbook playbooks/commcheck.yml`` over SSH
with every check (discover, rdma, collective, tcp; the lab's perftest and
nccl-tests EMULATORS, real iperf3 and Open MPI) and the report, and prints a
table:

- wall: the whole ansible-playbook run (option checks, discovery, tool probe,
  RDMA, collective, TCP, report, history);
- ideal: the time the tests themselves need, with nothing else costing
  anything: RDMA rounds x steps (ops x metrics) x t_rdma + TCP rounds x t_tcp
  + the collective's own mpirun time (as measured by the collective module);
  the rounds are counted from the run's records;
- wall / ideal, and the time of each phase (from the task banners).

Usage::

    sudo .venv/bin/python benchmarks/bench_oneclick.py [--hosts 8 16] [--pattern ring|mesh]
        [--rdma-duration 5] [--tcp-duration 5] [--json out.json] [--logs DIR]

The labs are taken down afterwards, also on Ctrl-C. docs/benchmarks.md has
the numbers measured on the 2-core build machine.
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

PLAYBOOK = os.path.join(REPO, "playbooks", "commcheck.yml")
TASK_RE = re.compile(r"^TASK \[(?P<name>.*?)\] \*+\s*$")
PHASES = (("discover", "discover"), ("rdma_perf", "rdma"), ("collective", "collective"), ("tcp_perf", "tcp"),
          ("report", "report"))


def ansible_playbook(lab, extra_vars, log_path, history_dir):
    argv = [os.path.join(REPO, ".venv", "bin", "ansible-playbook"), "-i", lab.inventory,
            "-e", json.dumps(extra_vars), PLAYBOOK]
    env = lab.ansible_env({"ANSIBLE_CALLBACKS_ENABLED": "clusterops.commcheck.commcheck_history",
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


def phase_times(marks, total):
    """{phase: seconds}: the time between task banners, by the role a task belongs to ("other": the rest)."""
    out = {}
    for num, (start, name) in enumerate(marks):
        end = marks[num + 1][0] if num + 1 < len(marks) else total
        role = name.split(" : ", 1)[0].rsplit(".", 1)[-1] if " : " in name else ""
        phase = dict(PHASES).get(role, "other")
        out[phase] = out.get(phase, 0.0) + (end - start)
    if marks:
        out["other"] = out.get("other", 0.0) + marks[0][0]
    return dict((k, round(v, 1)) for k, v in out.items())


def slowest_tasks(marks, total, count=10):
    """[(task, seconds)] of the slowest tasks, from the TASK banners' arrival times."""
    out = []
    for num, (start, name) in enumerate(marks):
        end = marks[num + 1][0] if num + 1 < len(marks) else total
        out.append((name, round(end - start, 1)))
    return sorted(out, key=lambda item: -item[1])[:count]


def history(history_dir):
    lines = []
    for name in sorted(os.listdir(history_dir)) if os.path.isdir(history_dir) else []:
        with open(os.path.join(history_dir, name)) as handle:
            lines += [json.loads(line) for line in handle if line.strip()]
    return lines


def rounds_of(records):
    return len(set(r["params"].get("round") for r in records if r.get("verdict") != "skipped"))


def bench(hosts, pattern, t_rdma, t_tcp, logs, rails=1, rate=lablib.DEFAULT_RATE):
    name = "bo%d" % hosts
    lablib.down(name)
    t0 = time.monotonic()
    lab = lablib.up(name, hosts, rails, rate=rate, owner_pid=os.getpid())
    up_s = time.monotonic() - t0
    try:
        ops, metrics = ["write"], ["bw", "lat"]
        extra = {
            "commcheck_checks": ["discover", "rdma", "collective", "tcp"], "commcheck_pattern": pattern,
            "commcheck_rdma_ops": ops, "commcheck_rdma_metrics": metrics,
            "commcheck_rdma_duration": t_rdma, "commcheck_tcp_duration": t_tcp, "commcheck_min_fraction": 0.5,
            # the lab has no GPUs: its nccl-tests emulator runs on CPUs, one rank per host, small messages
            "commcheck_require_accelerators": False, "commcheck_gpus_per_node": 1,
            "commcheck_collective_min_bytes": "1M", "commcheck_collective_max_bytes": "4M",
            "commcheck_collective_iterations": 5, "commcheck_collective_warmup_iterations": 1,
            "commcheck_collective_nic_rates_gbps": [lablib.rate_gbps(rate)],
            "commcheck_collective_link_efficiency": 0.5, "commcheck_collective_min_fraction": 0.2,
            "commcheck_report_dir": os.path.join(lab.dir, "bench-report"),
        }
        log_path = os.path.join(logs or lab.dir, "bench-oneclick-%d-%s.log" % (hosts, pattern))
        history_dir = os.path.join(lab.dir, "bench-history")
        rc, wall, marks = ansible_playbook(lab, extra, log_path, history_dir)
        lines = history(history_dir)
        left = lab.pids()
    finally:
        lablib.down(name)
    rdma = [r for r in lines if r.get("kind") == "rdma_bw"]
    tcp = [r for r in lines if r.get("kind") == "tcp_bw"]
    coll = [r for r in lines if r.get("kind") == "collective" and r.get("verdict") != "skipped"]
    rdma_rounds, tcp_rounds = rounds_of(rdma), rounds_of(tcp)
    coll_s = sum(float(r["metrics"].get("duration_s") or 0) for r in coll)
    ideal = {"rdma": rdma_rounds * len(ops) * len(metrics) * t_rdma, "tcp": tcp_rounds * t_tcp,
             "collective": round(coll_s, 1)}
    ideal_total = sum(ideal.values())
    verdicts = {}
    for rec in lines:
        if rec.get("kind") not in ("summary", "finding", "discover"):
            verdicts[rec["verdict"]] = verdicts.get(rec["verdict"], 0) + 1
    return {
        "hosts": hosts, "pattern": pattern, "t_rdma_s": t_rdma, "t_tcp_s": t_tcp, "rc": rc,
        "lab_up_s": round(up_s, 1), "wall_s": round(wall, 1), "ideal_s": round(ideal_total, 1), "ideal": ideal,
        "ratio": round(wall / ideal_total, 2) if ideal_total else None, "phases": phase_times(marks, wall),
        "rdma_rounds": rdma_rounds, "tcp_rounds": tcp_rounds, "records": len([r for r in lines if r.get("kind") != "summary"]),
        "verdicts": verdicts, "processes_left": len(left), "log": log_path,
        "slowest_tasks": slowest_tasks(marks, wall),
    }


def table(results):
    rows = ["| hosts | pattern | wall (s) | ideal bound (s) | wall / ideal | RDMA / coll. / TCP ideal (s) | "
            "phases: discover, RDMA, collective, TCP, report, other (s) |",
            "|---|---|---|---|---|---|---|"]
    for res in results:
        phases = res["phases"]
        rows.append("| %d | %s | %.1f | %.1f | %.2f | %s / %s / %s | %s |" % (
            res["hosts"], res["pattern"], res["wall_s"], res["ideal_s"], res["ratio"] or 0,
            res["ideal"]["rdma"], res["ideal"]["collective"], res["ideal"]["tcp"],
            ", ".join(str(phases.get(p, 0)) for p in ("discover", "rdma", "collective", "tcp", "report", "other"))))
    return "\n".join(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, nargs="+", default=[8, 16])
    parser.add_argument("--pattern", default="ring", choices=["ring", "mesh", "star"])
    parser.add_argument("--rdma-duration", type=int, default=5, help="seconds per perftest (t_rdma)")
    parser.add_argument("--tcp-duration", type=int, default=5, help="seconds per iperf3 (t_tcp)")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--logs", help="directory to keep the ansible-playbook logs in")
    args = parser.parse_args(argv)
    if not lablib.is_root():
        parser.error("the lab needs root")
    results = []
    for hosts in args.hosts:
        res = bench(hosts, args.pattern, args.rdma_duration, args.tcp_duration, args.logs)
        results.append(res)
        sys.stdout.write("N=%(hosts)d %(pattern)s: rc=%(rc)d wall %(wall_s).1fs ideal %(ideal_s).1fs "
                         "ratio %(ratio)s; rounds RDMA %(rdma_rounds)d TCP %(tcp_rounds)d; records %(records)d "
                         "%(verdicts)s; processes left %(processes_left)d\n" % res)
        for task, seconds in res["slowest_tasks"]:
            sys.stdout.write("    %6.1fs  %s\n" % (seconds, task))
        sys.stdout.flush()
    sys.stdout.write(table(results) + "\n")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=1)
    return 0 if all(r["rc"] == 0 and r["processes_left"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
