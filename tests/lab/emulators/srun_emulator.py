#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""EMULATOR (commcheck lab only): Slurm's ``srun`` starting a job step inside an allocation.

The lab has no Slurm. This program takes srun's command line (srun(1),
https://slurm.schedmd.com/srun.html: ``--jobid --mpi --nodes/-N --ntasks/-n
--ntasks-per-node --nodelist/-w --gpus-per-node --kill-on-bad-exit/-K
--label/-l --export --time/-t``, options before the executable) and behaves as
srun does inside an allocation:

- the allocation is ``--jobid``, else ``SLURM_JOB_ID``; what slurmctld knows
  (the nodes and their addresses, the jobs and their nodes and GPUs) is the
  lab's cluster file, given by the launcher (``--emulator-cluster=FILE``, the
  emulated slurm.conf and controller state);
- an unknown job, a node outside the allocation, an unknown node, more GPUs than
  the job holds, a bad time or MPI type are refused with srun's own error lines
  and exit status 1, before any task starts;
- the tasks start on the step's nodes through REAL Open MPI ``mpirun`` over the
  lab's ssh (the emulated slurmstepd), each with ``SLURM_PROCID``,
  ``SLURM_LOCALID``, ``SLURM_NODEID``, ``SLURM_NTASKS``, ``SLURM_JOB_ID`` and
  ``SLURM_STEP_ID`` set, and the caller's environment (``--export=ALL``);
- ``--label`` prefixes each task's lines with its task number and ``": "``,
  padded as srun pads it; ``--time`` cancels the step with slurmstepd's
  ``*** STEP J.S ON node CANCELLED AT ... DUE TO TIME LIMIT ***``; SIGINT and
  SIGTERM are forwarded to the tasks; the exit status is the tasks' (mpirun's).

Every step started is appended to ``<cluster file>.steps`` (one JSON line:
job, step, nodes, tasks), what slurmctld's accounting would show (sacct).
``--version`` prints a Slurm version line, as srun does. It is NOT Slurm.
"""

from __future__ import absolute_import, division, print_function

import datetime
import fcntl
import getopt
import json
import os
import re
import signal
import subprocess
import sys
import threading

VERSION = "slurm 23.11.4"
SHORT = "N:n:w:lKt:"
LONG = ["jobid=", "mpi=", "nodes=", "ntasks=", "ntasks-per-node=", "nodelist=", "gpus-per-node=",
        "kill-on-bad-exit=", "label", "export=", "time=", "version", "help", "emulator-cluster=",
        "emulator-task"]
MPI_TYPES = ("pmix", "pmix_v3", "pmix_v4", "pmix_v5")
# what the tasks get of the caller's environment through mpirun (besides SLURM_*)
FORWARDED = re.compile(r"^(?:NCCL|HCCL|UCX|CUDA|NVIDIA|ASCEND|COMMCHECK|PERFTEST|PATH$|LC_ALL$|LANG$)")
TIME = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$")
TAG = re.compile(r"^\[\d+,(\d+)\]<(stdout|stderr)>:(.*)$")
# mpirun tags each write, so a line a task wrote in pieces holds more tags; srun labels whole lines
INNER_TAG = re.compile(r"\[\d+,\d+\]<(?:stdout|stderr)>:")


def fail(*lines):
    for line in lines:
        sys.stderr.write(line + "\n")
    sys.exit(1)


def minutes(text):
    """srun --time forms: minutes, minutes:seconds, hours:minutes:seconds, days-hours[:minutes[:seconds]]."""
    match = TIME.match(text or "")
    if not match:
        fail("srun: error: Invalid time limit specification")
    days, first, second, third = match.groups()
    if days is not None:
        seconds = int(days) * 86400 + int(first) * 3600 + int(second or 0) * 60 + int(third or 0)
    elif third is not None:
        seconds = int(first) * 3600 + int(second) * 60 + int(third)
    else:
        seconds = int(first) * 60 + int(second or 0)
    return max(1, -(-seconds // 60))


def parse(argv):
    try:
        opts, program = getopt.getopt(argv, SHORT, LONG)
    except getopt.GetoptError as exc:
        fail("srun: %s" % exc, 'Try "srun --help" for more information')
    names = {"-N": "nodes", "-n": "ntasks", "-w": "nodelist", "-l": "label", "-K": "kill-on-bad-exit",
             "-t": "time"}
    out = {}
    for flag, value in opts:
        out[names.get(flag, flag.lstrip("-"))] = value
    return out, program


def allocation(cluster, options):
    job = options.get("jobid") or os.environ.get("SLURM_JOB_ID")
    if not job:
        fail("srun: error: commcheck lab EMULATOR: no --jobid and no SLURM_JOB_ID: this emulator runs steps inside "
             "an allocation only")
    if job not in cluster["jobs"]:
        fail("srun: error: Unable to confirm allocation for job %s: Invalid job id specified" % job,
             "srun: Check SLURM_JOB_ID environment variable. Expired or invalid job %s" % job)
    return job, cluster["jobs"][job]


def step_nodes(cluster, job, held, options):
    nodes = options["nodelist"].split(",") if options.get("nodelist") else list(held["nodes"])
    if any(node not in cluster["nodes"] for node in nodes):
        fail("srun: error: Unable to create step for job %s: Invalid node name specified" % job)
    if any(node not in held["nodes"] for node in nodes):
        fail("srun: error: Unable to create step for job %s: Requested node configuration is not available" % job)
    if options.get("nodes") and int(options["nodes"]) != len(nodes):
        fail("srun: error: commcheck lab EMULATOR: --nodes=%s differs from the %d nodes of --nodelist"
             % (options["nodes"], len(nodes)))
    gpus = options.get("gpus-per-node")
    if gpus and int(gpus.split(":")[-1]) > held.get("gpus_per_node", 0):
        fail("srun: error: Unable to create step for job %s: Invalid generic resource (gres) specification" % job)
    return nodes


def next_step(cluster_file, job, nodes, ntasks):
    """The step id (steps of the job so far), appended to the steps log in one write; bisection starts steps of
    one job at once, and slurmctld gives each its own id: the count and the append are one locked step."""
    log = cluster_file + ".steps"
    with open(log, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        step = sum(1 for line in handle if json.loads(line)["job"] == job)
        handle.write(json.dumps({"job": job, "step": step, "nodes": nodes, "ntasks": ntasks}) + "\n")
    return step


def mpirun_argv(cluster, nodes, per_node, program, env):
    launch = cluster.get("launch", {})
    argv = [launch.get("mpirun", "mpirun")]
    if os.geteuid() == 0:
        argv.append("--allow-run-as-root")
    argv += ["-np", str(per_node * len(nodes)),
             "-H", ",".join("%s:%d" % (cluster["nodes"][n]["addr"], per_node) for n in nodes),
             "--map-by", "ppr:%d:node" % per_node, "--tag-output"]
    if launch.get("ssh_config"):
        argv += ["--mca", "plm_rsh_args", "-F %s" % launch["ssh_config"]]
    for key, value in sorted(launch.get("mca", {}).items()):
        argv += ["--mca", key, str(value)]
    for key in sorted(env):
        argv += ["-x", key]
    return argv + [sys.executable, os.path.abspath(__file__), "--emulator-task"] + program


def label_line(line, width, label):
    """mpirun's ``[1,R]<stdout>:text`` as srun prints it: ``R: text`` with --label, ``text`` without."""
    match = TAG.match(line)
    if not match:
        return None, line
    rank, stream, text = match.groups()
    text = INNER_TAG.sub("", text)
    return stream, ("%*d: %s" % (width, int(rank), text)) if label else text


def relay(proc, width, label):
    for raw in proc.stdout:
        stream, line = label_line(raw.rstrip("\n"), width, label)
        # what mpirun says itself (untagged) is the emulated slurmstepd's: srun prints that on stderr
        target = sys.stdout if stream == "stdout" else sys.stderr
        target.write(line + "\n")
        target.flush()


def task_environment(options):
    """What of the caller's environment the tasks get: all of it with --export=ALL (the default), none with NONE."""
    if not options.get("export", "ALL").startswith("ALL"):
        return {}
    return dict((key, value) for key, value in os.environ.items() if FORWARDED.match(key))


def run_step(cluster, cluster_file, options, program):
    job, held = allocation(cluster, options)
    if options.get("mpi", "pmix") not in MPI_TYPES:
        fail("srun: error: invalid MPI type '%s', --mpi=list for acceptable types" % options["mpi"])
    nodes = step_nodes(cluster, job, held, options)
    per_node = int(options.get("ntasks-per-node") or 1)
    ntasks = per_node * len(nodes)
    if options.get("ntasks") and int(options["ntasks"]) != ntasks:
        fail("srun: error: commcheck lab EMULATOR: --ntasks=%s is not --nodes x --ntasks-per-node" % options["ntasks"])
    limit = minutes(options["time"]) * 60 if options.get("time") else None
    if not program:
        fail("srun: fatal: No command given to execute.")
    step = next_step(cluster_file, job, nodes, ntasks)
    env = task_environment(options)
    env.update(SLURM_JOB_ID=job, SLURM_STEP_ID=str(step), SLURM_NTASKS=str(ntasks), SLURM_NNODES=str(len(nodes)),
               SLURM_NTASKS_PER_NODE=str(per_node), SLURM_STEP_NODELIST=",".join(nodes))
    proc = subprocess.Popen(mpirun_argv(cluster, nodes, per_node, program, env), env=dict(os.environ, **env),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)

    def forward(signum, _frame):
        proc.send_signal(signum)

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    timer = threading.Timer(limit, cancel, (proc, job, step, nodes[0])) if limit else None
    if timer:
        timer.daemon = True
        timer.start()
    relay(proc, len(str(ntasks - 1)), "label" in options)
    rc = proc.wait()
    return 0 if rc == 0 else (rc if rc > 0 else 128 - rc)


def cancel(proc, job, step, node):
    when = datetime.datetime.now().strftime("%Y-%m-%dT%H:%M:%S")
    sys.stderr.write("slurmstepd: error: *** STEP %s.%d ON %s CANCELLED AT %s DUE TO TIME LIMIT ***\n"
                     % (job, step, node, when))
    proc.terminate()


def run_task(program):
    """One task under mpirun: srun's per-task variables from Open MPI's, then the program."""
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
    per_node = int(os.environ.get("SLURM_NTASKS_PER_NODE", "1"))
    os.environ.update(SLURM_PROCID=str(rank), SLURM_LOCALID=os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", "0"),
                      SLURM_NODEID=str(rank // per_node))
    os.execvp(program[0], program)


def main(argv):
    if argv[:1] == ["--emulator-task"]:
        run_task(argv[1:])
    options, program = parse(argv)
    if "version" in options:
        print(VERSION)
        return 0
    if "help" in options:
        print("srun EMULATOR (commcheck lab): starts job steps of the lab's emulated allocations; not Slurm")
        return 0
    if not options.get("emulator-cluster"):
        fail("srun: error: commcheck lab EMULATOR: its launcher gives no --emulator-cluster file")
    with open(options["emulator-cluster"]) as handle:
        cluster = json.load(handle)
    return run_step(cluster, options["emulator-cluster"], options, program)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
