# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The whole-task bound of every task that runs tests: how long the controller waits for a host's module.

Each step of a test ends by its own deadline on the host (the runner kills what outlives it). A module that
does not come back at all (stopped, wedged in the kernel, its ssh session hung) is bounded only by the
controller: the roles give every task that runs tests Ansible's task keyword ``timeout`` with this bound,
whatever the forks (``async`` bounds a task only when it goes to the background). A host whose task hits
the bound fails that task and leaves the run; the other hosts go on, and its pairs are errors naming it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# What a step may take beyond its own deadline: the runner's kill grace, and starting the next step.
STEP_SLACK_S = 5
# What the whole task may take beyond its steps: the module's start over ssh, reading the facts it is given,
# the CPU governor, the port counters, and its result's way back (a busy controller, hundreds of hosts).
TASK_MARGIN_S = 60
# Tasks whose steps the collection knows by name: discovery (rdma_facts) runs, one after the other, each under
# its timeout: the sysfs dump, ibdev2netdev, ibstat, ibv_devinfo, rdma link, show_gids, their versions, the probe.
NAMED_STEPS = {"discovery": 10}


def step_count(steps):
    """The number of steps a task runs one after the other: a number, a host's sides (their distinct
    ``step`` values, a side without one being step 0), or the name of a task in NAMED_STEPS."""
    if isinstance(steps, str) and steps in NAMED_STEPS:
        return NAMED_STEPS[steps]
    if isinstance(steps, (list, tuple)):
        return len(set(int((side or {}).get("step") or 0) for side in steps))
    return int(steps or 0)


def bisection_runs(hosts, max_runs=0):
    """The runs a collective's bisection of ``hosts`` hosts may add to its pool run, one after the other at
    worst: ``max_runs`` (the module's bisect_max_runs), else the module's default of 2N+3; none under 2 hosts."""
    hosts, max_runs = int(hosts or 0), int(max_runs or 0)
    if hosts < 2:
        return 0
    return max_runs if max_runs > 0 else 2 * hosts + 3


def task_timeout(steps, step_timeout, margin=TASK_MARGIN_S, bisect_hosts=0, bisect_max_runs=0):
    """Seconds a task running ``steps`` steps one after the other (``step_count``), each bounded by
    ``step_timeout`` seconds, may take as a whole (at least one step); a collective that may bisect a pool of
    ``bisect_hosts`` hosts counts its bisection runs as steps too. ValueError for a value that is not a number
    of seconds."""
    steps = step_count(steps) + bisection_runs(bisect_hosts, bisect_max_runs)
    step_timeout, margin = int(float(step_timeout)), int(margin)
    if step_timeout <= 0 or margin < 0 or steps < 0:
        raise ValueError("task_timeout needs a positive step timeout and no negative steps or margin, got "
                         "steps=%r step_timeout=%r margin=%r" % (steps, step_timeout, margin))
    return max(1, steps) * (step_timeout + STEP_SLACK_S) + margin
