#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: pair_check
short_description: A controller step of a pair check (RDMA or TCP) - hosts, plan, retests, judgement
version_added: 1.1.0
description:
  - The controller side of the pair checks C(clusterops.commcheck.rdma_perf) and C(clusterops.commcheck.tcp_perf)
    (their shared task files, C(clusterops.commcheck.pair_perf)),
    one engine for every check family (RDMA from host memory, RDMA from GPU memory, TCP), each a row of one table
    (C(plugins/module_utils/planning/families.py)).
  - Reads the family's role variables once (C(commcheck_rdma_*) or C(commcheck_tcp_*) and the shared ones such as
    C(commcheck_min_fraction), C(commcheck_outlier_z), C(commcheck_retest_*)) and the results the role registered
    under the prefix every family shares (C(commcheck_pair_perf_fleet), C(commcheck_pair_perf_run), ...; the role
    C(clusterops.commcheck.pair_perf) runs one family after the other).
  - Run it with C(run_once=true).
author:
  - commcheck developers (@clusterops)
options:
  family:
    description:
      - The check family.
      - Unset, the family the task's variable C(commcheck_pair_family) names (the roles that run the shared task
        files of C(clusterops.commcheck.pair_perf) set it); the task fails when neither names one.
    type: str
    choices: [rdma, rdma_gpu, tcp]
  step:
    description:
      - V(hosts) the check's hosts, the hosts the play lost, the step timeout.
      - V(plan) the rounds of pairs (one merged plan when pipelined), the task bound, whether the tests run in
        the background, how long the controller waits for them, the module's options, the RoCE preflight.
      - V(wait) sleeps on the controller while a plan runs in the background, its expected test time, less
        what starting the jobs already took (at least one second).
      - V(first) the first pass judged (records, findings, matrices, summary).
      - V(retests) the retest plan of the failing pairs, shaped like V(plan) (retest pass 1).
      - V(retest_again) the next retest pass, from the pass before (C(<facts>_retest_plan)) and the retest sides
        this controller's hosts measured so far, with the pairs not measured yet that separate the hypotheses
        still open (a host not yet tested with a known-good one, hosts or the fabric); none when nothing is
        ambiguous or C(commcheck_retest_rounds) passes after the first have run.
      - V(counters) the port counter changes of this controller's hosts.
      - V(gpu_states), V(gpu_plan), V(gpu_retests), V(gpu_judge) the pass from GPU memory (GPUDirect RDMA) and its
        retests.
      - V(judge) retests judged, thresholds, localization, counters' trend; the records to publish, this
        controller's share of them, the check's verdict and its outcome line.
    type: str
    required: true
    choices: [hosts, plan, wait, first, retests, retest_again, counters, gpu_states, gpu_plan, gpu_retests, gpu_judge, judge]
extends_documentation_fragment:
  - clusterops.commcheck.controller
attributes:
  check_mode:
    support: full
    description: Computes only; the same in check mode.
seealso:
  - module: clusterops.commcheck.fleet_facts
  - module: clusterops.commcheck.perftest
  - module: clusterops.commcheck.iperf3
'''

EXAMPLES = r'''
- name: Plan the rounds of the RDMA check
  clusterops.commcheck.pair_check:
    family: rdma
    step: plan
  run_once: true
  register: commcheck_pair_perf_run

- name: Judge the TCP check
  clusterops.commcheck.pair_check:
    family: tcp
    step: judge
  run_once: true
  register: commcheck_pair_perf_verdicts
'''

RETURN = r'''
hosts:
  description: Step V(hosts), V(plan), V(retests), V(retest_again) - the hosts of the check (of the retests).
  returned: steps hosts, plan, retests, retest_again
  type: list
  elements: str
unreachable:
  description: The hosts of the check the play lost.
  returned: steps hosts, plan
  type: list
  elements: str
rails_by_host:
  description:
    - Every host's rails as the one-click check noted them in one task for this family's check
      (C(commcheck_pair_perf_rails_by_host) of its decisions); empty when the role runs on its own (each host's own
      fact C(commcheck_pair_perf_rails) then).
  returned: step hosts
  type: dict
timeout:
  description: Seconds one test step may take.
  returned: steps hosts, plan, retests, retest_again, gpu_plan
  type: int
rounds:
  description: The plans to run, each with C(sides) per host, C(jobs), C(steps) and C(bounds) (each host's task bound).
  returned: steps plan, retests, retest_again, gpu_plan
  type: list
  elements: dict
bound:
  description: Seconds the pipelined task of the first plan may take as a whole.
  returned: steps plan, retests, retest_again, gpu_plan
  type: int
background:
  description: Whether the pipelined tests run in the background (async) for want of forks.
  returned: steps plan, retests, retest_again, gpu_plan
  type: bool
wait_s:
  description: Seconds of measurement the controller waits for before it collects background tests.
  returned: steps plan, retests, retest_again, gpu_plan
  type: int
module_args:
  description: The options of the family's module, the same for every host.
  returned: steps plan, retests, retest_again, gpu_plan
  type: dict
waited_s:
  description: The seconds the controller waited.
  returned: step wait
  type: int
message:
  description: The line that says how many retests run (V(retests), V(retest_again)), or how the check went
    (V(judge)).
  returned: steps retests, retest_again, judge
  type: str
retest_pass:
  description: The number of the retest pass (1 for V(retests)).
  returned: steps retests, retest_again
  type: int
all_rounds:
  description: The jobs (C(jobs)) of every retest pass so far, this one's included, for V(judge).
  returned: steps retests, retest_again
  type: list
  elements: dict
all_retests:
  description: The retest items of every retest pass so far, each with its C(purpose) and C(pass).
  returned: steps retests, retest_again
  type: list
  elements: dict
all_skipped:
  description: The retests of every pass so far that were left out, with the reason.
  returned: steps retests, retest_again
  type: list
  elements: dict
passes:
  description: The summary of each retest pass that planned something (C(partner), C(control), C(cross), ...).
  returned: steps retests, retest_again
  type: list
  elements: dict
publish:
  description: Every record of the check.
  returned: step judge
  type: list
  elements: dict
share:
  description: The records this controller publishes (all of them, or its slice's share of a split run).
  returned: step judge
  type: list
  elements: dict
verdict:
  description: The worst verdict of the check's pair records and findings.
  returned: step judge
  type: str
'''

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import controller_only
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.families import PAIR_CHECK_SPEC


def main():
    controller_only("pair_check", PAIR_CHECK_SPEC)


if __name__ == "__main__":
    main()
