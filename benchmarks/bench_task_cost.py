#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark (not a test): what one task costs the controller for each host, by kind of task.

Brings up a lab of N network-namespace hosts (tests/lab; root needed) and runs
small playbooks over SSH: discovery once (the facts the filter tasks read), then
T tasks of one kind:

- skip: a task whose condition is false;
- set_fact: a constant;
- filter: a set_fact through one of this collection's filters
  (commcheck_rdma_rails over the host's discovery facts);
- module: ansible.builtin.ping over SSH (pipelining, ControlPersist);
- discovery: this collection's discovery module (rdma_facts) again: its
  payload, arguments and result.

Each runs without and with the history callback, which imports the
collection's filter plugins in the main process when the playbook starts
(plugin_utils/filter_preload.py). The controller CPU of a run is the
ansible-playbook process tree's (getrusage of its children; the ssh connection
masters detach and are not in it); a task kind's cost per host is (its run -
the run with discovery alone) / (T x N). Every figure is from the same run of
this script, so only ratios between them are meant to be compared.

Usage::

    sudo .venv/bin/python benchmarks/bench_task_cost.py [--hosts 4] [--tasks 20] [--repeat 2]
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import argparse
import os
import resource
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "lab"))

import lab as lablib  # noqa: E402  pylint: disable=wrong-import-position

DISCOVERY = """- hosts: all
  gather_facts: false
  tasks:
    - name: discovery
      clusterops.commcheck.rdma_facts:
        sysfs_root: "{{ commcheck_sysfs_root | default('/sys') }}"
      environment: "{{ commcheck_environment | default({}) }}"
"""
TASKS = {
    "skip": "    - {name: t%d, ansible.builtin.debug: {msg: x}, when: false}\n",
    "set_fact": "    - {name: t%d, ansible.builtin.set_fact: {x: 1}}\n",
    "filter": ("    - name: t%d\n      ansible.builtin.set_fact:\n        rails: \"{{ ansible_facts.commcheck_rdma"
               " | clusterops.commcheck.commcheck_rdma_rails(address=ansible_host) }}\"\n"),
    "module": "    - {name: t%d, ansible.builtin.ping: {}}\n",
    "discovery": ("    - name: t%d\n      clusterops.commcheck.rdma_facts:\n"
                  "        sysfs_root: \"{{ commcheck_sysfs_root | default('/sys') }}\"\n"
                  "      environment: \"{{ commcheck_environment | default({}) }}\"\n"),
}
HISTORY_CALLBACK = "clusterops.commcheck.commcheck_history"


def playbook(directory, kind, tasks):
    path = os.path.join(directory, "%s.yml" % kind)
    with open(path, "w") as handle:
        handle.write(DISCOVERY + "".join(TASKS[kind] % num for num in range(tasks)) if kind != "base" else DISCOVERY)
    return path


def run_cpu(lab, path, callback, history_dir):
    """Controller CPU seconds of one ansible-playbook run."""
    env = lab.ansible_env({"COMMCHECK_HISTORY_DIR": history_dir, "COMMCHECK_HISTORY_FSYNC": "false"})
    env.pop("ANSIBLE_CALLBACKS_ENABLED", None)
    if callback:
        env["ANSIBLE_CALLBACKS_ENABLED"] = HISTORY_CALLBACK
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([os.path.join(REPO, ".venv", "bin", "ansible-playbook"), "-i", lab.inventory, path],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, env=env,
                          cwd=REPO, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (path, proc.stdout[-3000:]))
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=4)
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=2, help="runs of each playbook; the lowest CPU counts")
    args = parser.parse_args(argv)
    if not lablib.is_root():
        parser.error("the lab needs root")
    name = "btc%d" % args.hosts
    lablib.down(name)
    lab = lablib.up(name, args.hosts, 1, owner_pid=os.getpid())
    try:
        directory = tempfile.mkdtemp(prefix="task-cost-", dir=lab.dir)
        history = os.path.join(directory, "history")
        cpu = {}
        for callback in (False, True):
            for kind in ("base",) + tuple(TASKS):
                path = playbook(directory, kind, args.tasks)
                cpu[(kind, callback)] = min(run_cpu(lab, path, callback, history) for _run in range(args.repeat))
    finally:
        lablib.down(name)
    host_tasks = float(args.tasks * args.hosts)
    rows = ["| task kind | without the history callback (ms per host) | with it: filters preloaded (ms per host) |",
            "|---|---|---|"]
    for kind in TASKS:
        without, preloaded = [1000.0 * (cpu[(kind, cb)] - cpu[("base", cb)]) / host_tasks for cb in (False, True)]
        rows.append("| %s | %.0f | %.0f |" % (kind, without, preloaded))
    sys.stdout.write("%d hosts, %d tasks of each kind; discovery alone: %.2f s / %.2f s of controller CPU\n"
                     % (args.hosts, args.tasks, cpu[("base", False)], cpu[("base", True)]))
    sys.stdout.write("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
