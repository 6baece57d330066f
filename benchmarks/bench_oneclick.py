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
  + the collective's data time: for each collective run, every message size x
  (iterations + warmup) x size x nccl-tests' bus-bandwidth factor (2(n-1)/n
  for all_reduce) / the link rate, i.e. the time at a bus bandwidth equal to
  the link rate (not the measured mpirun time); the rounds are counted from
  the run's records;
- wall / ideal, and the time of each phase (from the task banners);
- controller CPU: the CPU seconds of the ansible-playbook process tree (its
  forks, the ssh clients and the ssh connection masters it starts; not the
  lab hosts' sshd and modules), in total, per host and per phase, and the
  tasks that cost the most; of it, the main ansible-playbook process's own
  CPU, peak memory and page faults (callback_plugins/bench_main_cpu.py):
  the part that handles every result one after another;
- the lab hosts' CPU (their sshd with everything it reaped: modules, the
  emulators, iperf3, Open MPI) and all CPU / cores: the wall time this
  machine needs for the controller's and the emulated hosts' work even with
  perfect overlap (both share its cores; a real cluster's hosts do not);
- machine busy: how long the whole machine's cores were busy during the run
  (/proc/stat), also what the two counts above miss (processes not reaped
  yet, the kernel's work for the lab's network), and its share of wall x
  cores.

Usage::

    sudo .venv/bin/python benchmarks/bench_oneclick.py [--hosts 8 16 32] [--pattern ring|mesh]
        [--rdma-duration 5] [--tcp-duration 5] [--rate 500mbit] [--json out.json] [--logs DIR]
        [--lab-prefix bo]

The labs are taken down afterwards, also on Ctrl-C. docs/benchmarks.md has
the numbers measured on the 2-core build machine.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "lab"))

import lab as lablib  # noqa: E402  pylint: disable=wrong-import-position

PLAYBOOK = os.path.join(REPO, "playbooks", "commcheck.yml")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
CORES = os.cpu_count() or 1
# nccl-tests' bus bandwidth = algorithm bandwidth x this factor (n ranks): the share of
# the data each rank's link carries (nccl-tests doc/PERFORMANCE.md)
BUS_FACTOR = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n, "all_gather": lambda n: (n - 1.0) / n,
    "reduce_scatter": lambda n: (n - 1.0) / n, "alltoall": lambda n: (n - 1.0) / n,
    "broadcast": lambda n: 1.0, "reduce": lambda n: 1.0, "sendrecv": lambda n: 1.0,
}
COLLECTIVE_SIZES = (1 << 20, 2 << 20, 4 << 20)      # commcheck_collective_min/max_bytes 1M..4M, step factor 2
COLLECTIVE_ITERS = 5 + 1                            # iterations + warmup
TASK_RE = re.compile(r"^TASK \[(?P<name>.*?)\] \*+\s*$")
PHASES = (("discover", "discover"), ("rdma_perf", "rdma"), ("collective", "collective"), ("tcp_perf", "tcp"),
          ("report", "report"))


def _proc_table():
    """{pid: (ppid, cpu ticks of the process and of the children it reaped, cmdline)} of every process."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as handle:
                data = handle.read()
            with open("/proc/%s/cmdline" % entry, "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        rest = data[data.rindex(")") + 2:].split()
        utime, stime, cutime, cstime = (int(x) for x in rest[11:15])
        table[int(entry)] = (int(rest[1]), utime + stime + cutime + cstime, cmdline)
    return table


def controller_cpu(root_pid, ssh_marker):
    """CPU seconds of root_pid's live process tree (with what each reaped) plus the ssh connection
    masters of this lab (they detach from the tree: ControlPersist)."""
    table = _proc_table()
    children = {}
    for pid, (ppid, _ticks, _cmd) in table.items():
        children.setdefault(ppid, []).append(pid)
    seen, stack, ticks = set(), [root_pid], 0
    while stack:
        pid = stack.pop()
        if pid in seen or pid not in table:
            continue
        seen.add(pid)
        ticks += table[pid][1]
        stack.extend(children.get(pid, []))
    ticks += sum(t for pid, (_p, t, cmd) in table.items()
                 if pid not in seen and cmd.startswith("ssh") and ssh_marker in cmd)
    return ticks / float(CLOCK_TICKS)


def lab_hosts_cpu(lab):
    """CPU seconds the emulated hosts spent (at least): each host's sshd listener with everything it reaped
    (sessions, modules, perftest and nccl-tests emulators, iperf3, Open MPI daemons) plus what still runs
    in its namespace. What daemonized and ended is missed."""
    ticks = 0
    table = _proc_table()
    for entry in lab.state["hosts"]:
        for pid in lablib.ns_pids(entry["netns"]):
            if pid in table and (table[pid][0] == 1 or pid == lab.sshd_pid(entry["name"])):
                ticks += table[pid][1]      # the listener and daemons: their whole tree, reaped children included
    return ticks / float(CLOCK_TICKS)


def masters_cpu(ssh_marker):
    return sum(t for _pid, (_p, t, cmd) in _proc_table().items()
               if cmd.startswith("ssh") and ssh_marker in cmd) / float(CLOCK_TICKS)


def machine_busy_s():
    """CPU seconds this machine's cores have been busy since boot (/proc/stat: all but idle and iowait).

    Everything counts: the controller, the emulated hosts' processes whether they were reaped or not, and
    the kernel's work for the lab's network (softirq), which no process's rusage shows."""
    with open("/proc/stat") as handle:
        fields = [int(value) for value in handle.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / float(os.sysconf("SC_CLK_TCK"))


def ansible_playbook(lab, extra_vars, log_path, history_dir, profile=None, workers=False):
    """(rc, wall, marks, cpu, main_cpu, busy): busy is the CPU seconds the whole machine was busy meanwhile
    (machine_busy_s); main_cpu is what the main ansible-playbook process used itself
    (CPU seconds as cpu_s, peak memory, page faults: benchmarks/callback_plugins/bench_main_cpu.py; None when
    it wrote nothing); marks are (seconds, task name, controller CPU seconds so far) per task banner.

    profile: a file for py-spy's samples of the main ansible-playbook process (collapsed stacks); py-spy
    runs beside the process tree, so its own CPU is not in the controller's. workers: the worker processes
    Ansible forks too (py-spy --subprocesses; it then slows the run down, and its own CPU, reaped by this
    process, is counted as the controller's: for where the CPU goes, not for the figures)."""
    argv = [os.path.join(REPO, ".venv", "bin", "ansible-playbook"), "-i", lab.inventory,
            "-e", json.dumps(extra_vars), PLAYBOOK]
    main_cpu_path = os.path.join(lab.dir, "main-cpu.json")
    env = lab.ansible_env({"ANSIBLE_CALLBACKS_ENABLED": "clusterops.commcheck.commcheck_history,bench_main_cpu",
                           "ANSIBLE_CALLBACK_PLUGINS": os.path.join(HERE, "callback_plugins"),
                           "COMMCHECK_BENCH_MAIN_CPU": main_cpu_path,
                           "COMMCHECK_HISTORY_DIR": history_dir, "COMMCHECK_HISTORY_FSYNC": "false"})
    marker = os.path.join(lab.dir, "cp")      # the lab's ssh control_path_dir
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy_before = machine_busy_s()
    started = time.monotonic()
    marks = []
    with open(log_path, "w") as log:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                                env=env, cwd=REPO)
        spy = None
        if profile:
            spy = subprocess.Popen([os.path.join(REPO, ".venv", "bin", "py-spy"), "record", "--pid", str(proc.pid),
                                    "--rate", "50", "--format", "raw", "--nonblocking", "-o", profile]
                                   + (["--subprocesses"] if workers else []),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for line in proc.stdout:
            log.write(line)
            match = TASK_RE.match(line)
            if match:
                marks.append((time.monotonic() - started, match.group("name"), controller_cpu(proc.pid, marker)))
        proc.wait()
        if spy is not None:
            spy.wait()
    wall = time.monotonic() - started
    busy = machine_busy_s() - busy_before
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime) + masters_cpu(marker)
    try:
        with open(main_cpu_path) as handle:
            own = json.load(handle)
        main_cpu = dict(own, cpu_s=own["user_s"] + own["system_s"])
    except (OSError, ValueError, KeyError):
        main_cpu = None
    return proc.returncode, wall, marks, cpu, main_cpu, busy


def _role_of(name):
    return name.split(" : ", 1)[0].rsplit(".", 1)[-1] if " : " in name else ""


def _phase_of(name, pair_phase="rdma"):
    """The phase of a task banner by its role; the pair checks' shared task files (role pair_perf) are the phase of
    the check that runs them, ``pair_phase``."""
    role = _role_of(name)
    return pair_phase if role == "pair_perf" else dict(PHASES).get(role, "other")


def _pair_phase(name, current):
    """Which pair check the next pair_perf banners belong to: RDMA runs first; the TCP check's role, or a one-click
    banner that names it (after the collective's), starts TCP's."""
    role = _role_of(name)
    if role == "tcp_perf" or (role == "commcheck" and "TCP" in name.split()):
        return "tcp"
    return "rdma" if role == "rdma_perf" else current


def phase_times(marks, total, column=0):
    """{phase: seconds}: wall (column 0) or controller CPU (column 2) between task banners, by the role a
    task belongs to ("other": the rest, and what came before the first banner)."""
    out, pair_phase = {}, "rdma"
    for num, mark in enumerate(marks):
        end = marks[num + 1][column] if num + 1 < len(marks) else total
        pair_phase = _pair_phase(mark[1], pair_phase)
        phase = _phase_of(mark[1], pair_phase)
        out[phase] = out.get(phase, 0.0) + (end - mark[column])
    if marks:
        out["other"] = out.get("other", 0.0) + marks[0][column]
    return dict((k, round(v, 1)) for k, v in out.items())


def slowest_tasks(marks, total, count=10, column=0):
    """[(task, seconds)] of the slowest tasks (column 0: wall) or of the costliest (column 2: controller CPU),
    from the TASK banners' arrival times; a task that runs several times counts once with its sum."""
    out = {}
    for num, mark in enumerate(marks):
        end = marks[num + 1][column] if num + 1 < len(marks) else total
        out[mark[1]] = out.get(mark[1], 0.0) + (end - mark[column])
    return sorted(((task, round(sec, 1)) for task, sec in out.items()), key=lambda item: -item[1])[:count]


RESULT_RE = re.compile(r"^(?P<word>ok|changed|skipping|failed|included): \[(?P<host>[^\]\s]+)")


def host_tasks(log_path, host):
    """{result word: count} of the task results host printed (one per task it ran or skipped: each is a
    worker process on the controller; "included" counts the include, not the tasks it brings)."""
    counts, task = {}, None
    with open(log_path) as handle:
        for line in handle:
            if TASK_RE.match(line):
                task = line
                continue
            match = RESULT_RE.match(line)
            word = match.group("word") if match and match.group("host") == host else None
            if line.startswith("included: ") and host in line.rstrip().split(" for ", 1)[-1].split(", "):
                word = "included"     # "included: FILE for h1, h2, ..."
            if word and task is not None:
                counts[word] = counts.get(word, 0) + 1
                task = None      # a loop prints one line per item: count the task once
    return counts


def collective_ideal(records, ranks, rate_gbps):
    """Seconds the collective runs need at a bus bandwidth equal to the link rate (nccl-tests' formula)."""
    seconds = 0.0
    for rec in records:
        factor = BUS_FACTOR.get(rec["params"].get("op") or "all_reduce", BUS_FACTOR["all_reduce"])(max(ranks, 2))
        seconds += sum(COLLECTIVE_ITERS * size * 8 * factor / (rate_gbps * 1e9) for size in COLLECTIVE_SIZES)
    return seconds


def history(history_dir):
    lines = []
    for name in sorted(os.listdir(history_dir)) if os.path.isdir(history_dir) else []:
        with open(os.path.join(history_dir, name)) as handle:
            lines += [json.loads(line) for line in handle if line.strip()]
    return lines


def rounds_of(records):
    return len(set(r["params"].get("round") for r in records if r.get("verdict") != "skipped"))


def bench(hosts, pattern, t_rdma, t_tcp, logs, rails=1, rate=lablib.DEFAULT_RATE, profile=None, workers=False,
          lab_prefix="bo"):
    name = lablib.check_name("%s%d" % (lab_prefix, hosts))
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
            # latency by time too, as the figures of docs/benchmarks.md were measured: every step costs t_rdma
            # (the product runs latency by count, a fraction of a second a step)
            "commcheck_rdma_lat_iterations": 0,
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
        profile_path = os.path.join(profile, "profile-%d-%s.txt" % (hosts, pattern)) if profile else None
        rc, wall, marks, cpu, main_cpu, busy = ansible_playbook(lab, extra, log_path, history_dir, profile_path,
                                                                workers)
        # a host other than the first (the first also runs the run_once tasks)
        per_host = host_tasks(log_path, lab.hosts[-1])
        lines = history(history_dir)
        lab_cpu = lab_hosts_cpu(lab)
        left = lab.pids()
    finally:
        lablib.down(name)
    rdma = [r for r in lines if r.get("kind") == "rdma_bw"]
    tcp = [r for r in lines if r.get("kind") == "tcp_bw"]
    coll = [r for r in lines if r.get("kind") == "collective" and r.get("verdict") != "skipped"]
    rdma_rounds, tcp_rounds = rounds_of(rdma), rounds_of(tcp)
    coll_s = sum(float(r["metrics"].get("duration_s") or 0) for r in coll)
    ideal = {"rdma": rdma_rounds * len(ops) * len(metrics) * t_rdma, "tcp": tcp_rounds * t_tcp,
             "collective": round(collective_ideal(coll, hosts, lablib.rate_gbps(rate)), 2)}
    ideal_total = sum(ideal.values())
    verdicts = {}
    for rec in lines:
        if rec.get("kind") not in ("summary", "finding", "discover"):
            verdicts[rec["verdict"]] = verdicts.get(rec["verdict"], 0) + 1
    return {
        "hosts": hosts, "pattern": pattern, "t_rdma_s": t_rdma, "t_tcp_s": t_tcp, "rc": rc,
        "lab_up_s": round(up_s, 1), "wall_s": round(wall, 1), "ideal_s": round(ideal_total, 1), "ideal": ideal,
        "ratio": round(wall / ideal_total, 2) if ideal_total else None, "phases": phase_times(marks, wall),
        "collective_mpirun_s": round(coll_s, 1), "controller_cpu_s": round(cpu, 1),
        "controller_cpu_per_host_s": round(cpu / hosts, 2), "lab_hosts_cpu_s": round(lab_cpu, 1),
        "main_process_cpu_s": round(main_cpu["cpu_s"], 1) if main_cpu is not None else None,
        "main_process": main_cpu,
        "cpu_bound_s": round((cpu + lab_cpu) / CORES, 1),
        "machine_busy_s": round(busy, 1), "machine_busy_fraction": round(busy / (wall * CORES), 2) if wall else None,
        "cpu_phases": phase_times(marks, cpu, column=2),
        "rdma_rounds": rdma_rounds, "tcp_rounds": tcp_rounds,
        "records": len([r for r in lines if r.get("kind") != "summary"]),
        "verdicts": verdicts, "processes_left": len(left), "log": log_path,
        "slowest_tasks": slowest_tasks(marks, wall), "costliest_tasks": slowest_tasks(marks, cpu, count=40, column=2),
        "host_tasks": per_host, "profile": profile_path,
    }


PHASE_ORDER = ("discover", "rdma", "collective", "tcp", "report", "other")


def table(results):
    rows = ["| hosts | pattern | wall (s) | ideal bound (s) | wall / ideal | RDMA / coll. / TCP ideal (s) | "
            "phases: discover, RDMA, collective, TCP, report, other (s) | controller CPU (s) | per host (s) | "
            "of it the main process (s) | CPU by phase (s) | lab hosts' CPU (s) | all CPU / cores (s) | "
            "machine busy (s), of wall x cores |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for res in results:
        phases, cpu_phases = res["phases"], res["cpu_phases"]
        row = ("| %d | %s | %.1f | %.1f | %.2f | %s / %s / %s | %s | %.1f | %.2f | %s | %s | %.1f | %.1f | "
               "%.1f, %d %% |")
        rows.append(row % (
            res["hosts"], res["pattern"], res["wall_s"], res["ideal_s"], res["ratio"] or 0,
            res["ideal"]["rdma"], res["ideal"]["collective"], res["ideal"]["tcp"],
            ", ".join(str(phases.get(p, 0)) for p in PHASE_ORDER), res["controller_cpu_s"],
            res["controller_cpu_per_host_s"],
            "-" if res["main_process_cpu_s"] is None else "%.1f" % res["main_process_cpu_s"],
            ", ".join(str(cpu_phases.get(p, 0)) for p in PHASE_ORDER),
            res["lab_hosts_cpu_s"], res["cpu_bound_s"], res["machine_busy_s"],
            round(100 * (res["machine_busy_fraction"] or 0))))
    return "\n".join(rows)


def linear_fit(points):
    """(a, b) of y = a + b x by least squares over [(x, y)]."""
    n = float(len(points))
    mean_x = sum(x for x, _y in points) / n
    mean_y = sum(y for _x, y in points) / n
    var = sum((x - mean_x) ** 2 for x, _y in points)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / var if var else 0.0
    return mean_y - slope * mean_x, slope


def projection(results, sizes=(256, 1024, 4096), per_controller=(256,)):
    """Markdown: wall and controller CPU fitted as a + b N over the measured sizes, projected to ``sizes``
    on one controller and split into slices of ``per_controller`` hosts (the slices run side by side)."""
    if len(results) < 2:
        return ""
    wall_a, wall_b = linear_fit([(r["hosts"], r["wall_s"]) for r in results])
    cpu_a, cpu_b = linear_fit([(r["hosts"], r["controller_cpu_s"]) for r in results])
    rows = ["model: wall = %.1f s + %.2f s x N, controller CPU = %.1f s + %.2f s x N (least squares over N = %s)"
            % (wall_a, wall_b, cpu_a, cpu_b, ", ".join(str(r["hosts"]) for r in results)), "",
            "| hosts | one controller: wall (min) | CPU (min) | " + " | ".join(
                "slices of %d: controllers, wall (min)" % k for k in per_controller) + " |",
            "|---|---|---|" + "---|" * len(per_controller)]
    for size in sizes:
        cells = []
        for k in per_controller:
            slices = -(-size // k)
            cells.append("%d, %.1f" % (slices, (wall_a + wall_b * min(size, k)) / 60.0))
        rows.append("| %d | %.1f | %.1f | %s |" % (size, (wall_a + wall_b * size) / 60.0,
                                                   (cpu_a + cpu_b * size) / 60.0, " | ".join(cells)))
    return "\n".join(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, nargs="+", default=[8, 16, 32])
    parser.add_argument("--pattern", default="ring", choices=["ring", "mesh", "star"])
    parser.add_argument("--rdma-duration", type=int, default=5, help="seconds per perftest (t_rdma)")
    parser.add_argument("--tcp-duration", type=int, default=5, help="seconds per iperf3 (t_tcp)")
    parser.add_argument("--rate", default=lablib.DEFAULT_RATE,
                        help="the lab's emulated link rate (tc units, default %(default)s)")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--logs", help="directory to keep the ansible-playbook logs in")
    parser.add_argument("--profile", help="directory for py-spy samples of the main ansible-playbook process "
                        "(collapsed stacks; needs py-spy in .venv)")
    parser.add_argument("--lab-prefix", default="bo",
                        help="the labs are named PREFIX<hosts> (default %(default)s): a prefix of its own lets "
                        "benchmarks run beside other labs on the machine, and two trees side by side")
    parser.add_argument("--profile-workers", action="store_true",
                        help="with --profile: sample the worker processes Ansible forks too (slows the run; "
                        "its CPU figures then include py-spy's)")
    args = parser.parse_args(argv)
    if not lablib.is_root():
        parser.error("the lab needs root")
    for hosts in args.hosts:
        try:
            lablib.check_name("%s%d" % (args.lab_prefix, hosts))
        except lablib.LabError as err:
            parser.error("--lab-prefix: %s" % err)
    results = []
    for hosts in args.hosts:
        res = bench(hosts, args.pattern, args.rdma_duration, args.tcp_duration, args.logs, rate=args.rate,
                    profile=args.profile, workers=args.profile_workers, lab_prefix=args.lab_prefix)
        results.append(res)
        sys.stdout.write("N=%(hosts)d %(pattern)s: rc=%(rc)d wall %(wall_s).1fs ideal %(ideal_s).1fs "
                         "ratio %(ratio)s; controller CPU %(controller_cpu_s).1fs (%(controller_cpu_per_host_s).2fs "
                         "per host; main process %(main_process_cpu_s)ss); rounds RDMA %(rdma_rounds)d "
                         "TCP %(tcp_rounds)d; records %(records)d "
                         "%(verdicts)s; processes left %(processes_left)d; task results of one host "
                         "%(host_tasks)s\n" % res)
        for task, seconds in res["slowest_tasks"]:
            sys.stdout.write("    %6.1fs  %s\n" % (seconds, task))
        sys.stdout.flush()
    sys.stdout.write(table(results) + "\n")
    sys.stdout.write(projection(results) + "\n")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=1)
    return 0 if all(r["rc"] == 0 and r["processes_left"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
