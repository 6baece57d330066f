#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: collective_plan
short_description: Plan and gather the collective check of every host, once, on the controller
version_added: 1.1.0
description:
  - The controller steps of the C(clusterops.commcheck.collective) role. Each reads the role's variables
    (C(commcheck_collective_*)) and every host's variables once, and returns what the role's next tasks take.
  - With O(step=probe), the plan and the probe keys of the tool probe the role runs alone with
    C(commcheck_collective_library=auto), and where each host's probe runs (RV(runs_from), RV(environment)).
  - With O(step=hosts), the library, the hosts that run (those asked, else every host of the play, that are still in
    the play and, with library C(auto), have the library), those asked that left the play, and how mpirun reaches
    each (RV(entries)), what the slices of a run split over several controllers share at their C(collective-hosts)
    meeting (C(clusterops.commcheck.fleet_facts), registered as C(commcheck_collective_fleet)).
  - With O(step=runs), the hosts of every slice (those of the C(collective-hosts) meeting; this controller's alone
    without one) and every run with the arguments of its C(clusterops.commcheck.collective) module call. One
    mpirun reaches every host, so only the first slice (the meeting's leader) launches the pool or pair runs, over
    the hosts of every slice, bisection and retests included (RV(launches)); the others hold the CPU governor of
    their own hosts and wait for its results. Per-node runs run in each slice on its own hosts. A pool run and each pair run start mpirun from
    their first host, with its transport, C(kubectl) and MPI agent directory; they are judged by the configured NIC
    rates, else by the active ports of the slowest host (NCCL only). In V(per_node) mode each host runs its own
    operations, with the options its own variables set.
  - With O(step=retests), the runs that repeat the first pass's failing runs before anything is blamed
    (C(commcheck_retest_repeats), C(commcheck_retest_verdicts); none when a run failed as a task). In V(per_node)
    mode a failing node's run again, C(commcheck_retest_repeats) times; in V(pairs) mode a failing pair as is, and
    each side with a known-good partner (a host whose pairs passed; C(commcheck_retest_partners)); a V(pool)
    without bisection once as it was. A launch refusal no run avoids, a run whose launcher's errors named its bad host and a
    bisected pool are not retested.
  - With O(step=results), the results of the runs (C(commcheck_collective_group_results) and every per-node host's
    C(commcheck_collective_node_results)) as records, judged against the fleet and the history of earlier runs
    (C(commcheck_thresholds_history)), then the retests' (C(commcheck_collective_retest_results), records with
    C(params.retest)); a failing run that passes on a retest as is becomes V(flaky), one that fails again stays
    V(fail), and a node whose own run (V(per_node)) or whose pairs with known-good partners (V(pairs)) fail again
    is named by a C(finding). When a run failed as a task, the step fails with the runs' messages.
  - With O(step=share), what this slice posts at the C(collective-results) meeting once the runs ended
    (RV(values)); the first slice its runs' results. With O(step=results) every slice reads them from that
    meeting (C(commcheck_collective_fleet_results)), so every slice builds the same records; each record of a run
    carries C(params.cpu_governor), its hosts by governor state (C(held), C(unmanaged), C(not_held), from each
    host's C(commcheck_collective_governor) hold), and RV(share) the records this slice publishes.
author:
  - commcheck developers (@clusterops)
options:
  step:
    description:
      - Which step of the collective role to take.
    type: str
    required: true
    choices: [probe, hosts, runs, retests, share, results]
extends_documentation_fragment:
  - clusterops.commcheck.controller
attributes:
  check_mode:
    support: full
    description: It only reads variables and the history.
notes:
  - Run it with C(run_once=true), inside the collective role (it reads the role's variables).
seealso:
  - module: clusterops.commcheck.collective
  - module: clusterops.commcheck.record
'''

EXAMPLES = r'''
- name: Choose the library, the hosts and the runs of the collective check
  clusterops.commcheck.collective_plan:
    step: runs
  run_once: true
  register: commcheck_collective_plan

- name: Plan the retests of the failing collective runs
  clusterops.commcheck.collective_plan:
    step: retests
  run_once: true
  register: commcheck_collective_retests

- name: Gather the results, build the records and judge them
  clusterops.commcheck.collective_plan:
    step: results
  run_once: true
  register: commcheck_collective
'''

RETURN = r'''
plan:
  description: The plan of the tool probe (the one-click check's plan with the collective check alone).
  returned: O(step=probe)
  type: dict
probe_keys:
  description: What the tool probe looks for on every host.
  returned: O(step=probe)
  type: list
  elements: str
  sample: ["cmd:mpirun", "cmd:all_reduce_perf"]
timeout:
  description: The whole-task bound of the probe, in seconds.
  returned: O(step=probe)
  type: int
runs_from:
  description:
    - Per host of the play, where its probe runs (the task's C(delegate_to)) - C(localhost) for a pod (the host's
      C(commcheck_transport) is C(kubectl), so the probe is a C(kubectl exec) from the controller), else the host
      itself.
  returned: O(step=probe)
  type: dict
  sample: {node-1: node-1, pod-a: localhost}
environment:
  description:
    - Per host of the play, the environment of its probe - the host's C(commcheck_environment), none for a pod.
  returned: O(step=probe)
  type: dict
  sample: {node-1: {PATH: /opt/mpi/bin:/usr/bin}, pod-a: {}}
library:
  description: The library that runs (null with library C(auto) when no host has one).
  returned: O(step=hosts) or O(step=runs)
  type: str
  sample: nccl
chosen:
  description: The hosts that run the check, in play order (O(step=runs) - of every slice, in the order of the
    slices' meeting).
  returned: O(step=hosts) or O(step=runs)
  type: list
  elements: str
unreachable:
  description: The hosts asked that left the play (of every slice with O(step=runs)).
  returned: O(step=hosts) or O(step=runs)
  type: list
  elements: str
entries:
  description: How mpirun reaches each host of RV(chosen) (C(name), C(address), ...).
  returned: O(step=hosts)
  type: dict
launches:
  description: Whether this controller launches the pool or pair runs (the first slice of a split run; always
    with one controller).
  returned: O(step=runs)
  type: bool
own:
  description: The hosts of RV(chosen) that this slice runs.
  returned: O(step=runs)
  type: list
  elements: str
results_wait:
  description: How long, in seconds, a slice waits at the C(collective-results) meeting for the first slice's
    runs (C(commcheck_slice_wait) plus every run's bound, once and once per C(commcheck_retest_repeats)).
  returned: O(step=runs)
  type: int
values:
  description: The C(values) of this slice's post at C(collective-results) - C(launched) (under the first slice's
    first host - its C(group_results), C(retest_plan) and C(retest_results)); empty in the other slices.
  returned: O(step=share)
  type: dict
share:
  description: The records this slice publishes - those of its own hosts, and in the first slice those of no host.
  returned: O(step=results)
  type: list
  elements: dict
runs:
  description:
    - The pool or pair runs, one per host group and operation, each with C(hosts), C(operation), C(launcher) (the
      host mpirun starts from), C(label), C(args) (the module's arguments), C(environment) and C(timeout) (the
      task's bound, in seconds).
    - With O(step=retests), the retest runs, the same keys and C(retest), the params their records carry
      (C(retest), C(retest_purpose), C(attempt), C(origin), C(retest_id); a partner retest's C(subject),
      C(partner), C(origins)).
  returned: O(step=runs) or O(step=retests)
  type: list
  elements: dict
governor_hosts:
  description:
    - This slice's hosts of RV(chosen) that hold C(commcheck_cpu_governor) around the runs - it is set (the
      host's own value, else the run's). A pod holds it through C(kubectl exec) (the C(cpu_governor) module's
      transport).
  returned: O(step=runs)
  type: list
  elements: str
retests:
  description: The planned retests (C(id), C(purpose) as_is or partner, C(attempt), C(hosts), C(operation),
    C(origin), C(subject), C(partner), C(params)).
  returned: O(step=retests)
  type: list
  elements: dict
skipped:
  description: Retests left out, each with its C(reason).
  returned: O(step=retests)
  type: list
  elements: dict
summary:
  description: How many runs failed and how many retests were planned (C(failing_runs), C(planned), C(as_is),
    C(partner), C(skipped)).
  returned: O(step=retests)
  type: dict
node_runs:
  description: Per host, its per-node runs (the same keys as RV(runs)); empty unless the mode is V(per_node).
  returned: O(step=runs)
  type: dict
results:
  description: The module results of the runs.
  returned: O(step=results)
  type: list
  elements: dict
records:
  description: The records to publish, judged (one C(collective) record per run, one C(finding) per bad node and per
    host lost), then the retests' (one C(collective) record per retest run, C(params.retest) true), the
    C(finding) of each node or link the retests confirmed and a C(retest_summary) record.
  returned: O(step=results)
  type: list
  elements: dict
bad_nodes:
  description: Every node a run named bad.
  returned: O(step=results)
  type: list
  elements: str
verdicts:
  description: The verdict of each result.
  returned: O(step=results)
  type: list
  elements: str
thresholds:
  description: The summary of the judgement (which thresholds tripped).
  returned: O(step=results)
  type: dict
retest_counts:
  description: The retest summary record's metrics (C(retests), C(confirmed_pairs), C(flaky_pairs), ...); null
    when nothing was retested.
  returned: O(step=results)
  type: dict
outcome:
  description: One line that says what ran and what it found.
  returned: O(step=results)
  type: str
  sample: "NCCL pool: 1 test(s), verdicts ['pass']; bad nodes []; unreachable []"
'''

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import controller_only


def main():
    controller_only("collective_plan", dict(step=dict(type="str", required=True,
                                                      choices=["probe", "hosts", "runs", "retests", "share",
                                                               "results"])))


if __name__ == "__main__":
    main()
