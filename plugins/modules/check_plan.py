#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: check_plan
short_description: Plan the one-click check for every host at once, on the controller
version_added: 1.1.0
description:
  - The controller steps of the one-click role C(clusterops.commcheck.commcheck), each over every host of the play
    in one pass. Each step reads the role variables of the run (C(commcheck_checks), C(commcheck_rdma_ops), ...)
    and each host's own variables (C(commcheck_devices), C(commcheck_address), discovery's C(commcheck_rdma)
    fact, the tool probe's result); register its result.
  - O(step=plan) plans the checks and operations of the run from C(commcheck_checks),
    C(commcheck_collective_library), C(commcheck_collective_ops), C(commcheck_rdma_ops) and
    C(commcheck_rdma_metrics), and what the tool probe looks for.
  - O(step=hosts) notes, from the plan (C(commcheck_oneclick_plan)), each host's rails (its RDMA ports, or
    C(commcheck_devices)), its TCP rail (C(commcheck_tcp_address)), how mpirun reaches it and its machine
    identity. With the RDMA check, it fails, nothing having run, when a device asked for is not on its host,
    when two inventory names reach one machine or when rails of two hosts share an address.
  - O(step=decide) decides what each check runs on from each host's tool probe and discovery facts and its own
    C(commcheck_collective_binary_dir), C(commcheck_collective_mpirun) and C(commcheck_require_accelerators),
    giving the collective library, the hosts of each check and one C(skipped) record per check a host cannot run.
  - O(step=runs) says whether the check O(check) runs (planned, and enough of the hosts the decision
    (C(commcheck_oneclick_decision)) chose for it still in the play - two for a pair check, one and a library
    for the collective) and, when it runs, the variables of its role the one-click check decides (RV(role_vars)).
  - O(step=lost) makes one finding record per host that left the run, from whether its ssh port still answers, asked
    from the controller (a connection to its C(ansible_host) and C(ansible_port), tried for 5 seconds; hosts whose
    C(ansible_connection) is not ssh are not asked), or read from O(probe) when given.
author:
  - commcheck developers (@clusterops)
options:
  step:
    description:
      - Which step to run.
    type: str
    required: true
    choices: [plan, hosts, decide, runs, lost]
  check:
    description:
      - The check O(step=runs) decides on.
    type: str
    choices: [rdma, tcp, collective]
  probe:
    description:
      - For O(step=lost), the registered result of a loop of C(ansible.builtin.wait_for) over the hosts that left
        the run (loop variable C(commcheck_oneclick_lost)); an item skipped is a host not reached over ssh. Not
        given, the step asks each host's ssh port itself.
    type: dict
seealso:
  - module: clusterops.commcheck.fleet_facts
extends_documentation_fragment:
  - clusterops.commcheck.controller
'''

EXAMPLES = r'''
- name: Plan the checks of this run
  clusterops.commcheck.check_plan:
    step: plan
  run_once: true
  register: commcheck_oneclick_plan

- name: Note the devices, rails and addresses of every host (stops when a device asked for is missing)
  clusterops.commcheck.check_plan:
    step: hosts
  run_once: true
  register: commcheck_oneclick_hosts

- name: Decide what each check runs on
  clusterops.commcheck.check_plan:
    step: decide
  run_once: true
  register: commcheck_oneclick_decision

- name: Decide whether the RDMA check runs
  clusterops.commcheck.check_plan:
    step: runs
    check: rdma
  run_once: true
  register: commcheck_oneclick_runs_rdma
'''

RETURN = r'''
checks:
  description: The checks of the run (O(step=plan)); also C(discover), C(rdma), C(tcp), C(collective) (booleans),
    C(library), C(collective_ops), C(rdma_ops), C(rdma_metrics) and C(need_facts) (discovery facts are needed).
  returned: O(step=plan)
  type: list
  elements: str
  sample: [discover, rdma, collective, tcp]
probe_keys:
  description: What the tool probe looks for, in order (O(step=plan)).
  returned: O(step=plan)
  type: list
  elements: str
  sample: ["cmd:ib_write_bw", "cmd:ib_write_lat", "cmd:iperf3", "cmd:mpirun"]
rails:
  description: Per host, the rails (RDMA ports) the RDMA check tests, with device, port, gid_index and address
    (O(step=hosts)).
  returned: O(step=hosts)
  type: dict
tcp_rails:
  description: Per host, its one TCP rail (C(rail), C(address)) (O(step=hosts)).
  returned: O(step=hosts)
  type: dict
entries:
  description: Per host, how mpirun reaches it (C(name), C(address)) (O(step=hosts)).
  returned: O(step=hosts)
  type: dict
identities:
  description: Per host, the machine identity discovery read, or null (O(step=hosts)).
  returned: O(step=hosts)
  type: dict
unknown_devices:
  description: One text per host that lacks a device asked for (O(step=hosts)).
  returned: O(step=hosts)
  type: list
  elements: str
library:
  description: The collective library chosen, or null (O(step=decide)); also C(library_chosen_by), C(rdma_hosts),
    C(tcp_hosts) and C(collective_hosts).
  returned: O(step=decide)
  type: str
  sample: nccl
records:
  description: The C(skipped) records of the checks that cannot run (O(step=decide)), or the findings of the hosts
    that left the run (O(step=lost)), for C(clusterops.commcheck.record).
  returned: O(step=decide) or O(step=lost)
  type: list
  elements: dict
runs:
  description: Whether the check runs (O(step=runs)); C(hosts) lists its hosts still in the play.
  returned: O(step=runs)
  type: bool
  sample: true
role_vars:
  description:
    - The variables of the check's role that the one-click check decides (O(step=runs), when the check runs) - its
      hosts still in the play, pattern, operations, metrics and every host's rails (RDMA, TCP) or mpirun entry
      (collective). The controller steps of that role (M(clusterops.commcheck.pair_check),
      M(clusterops.commcheck.collective_plan)) take them in place of the role's own variables when they run inside
      the one-click role.
    - What the user set for an option of the check's role (at the host level - inventory, facts, extra variables -
      or any value unlike the role's declared default) wins - its hosts narrow the hosts decided (in the user's
      order), its pattern, operations and metrics are passed as given; the one-click check fills only the options
      left unset.
  returned: O(step=runs)
  type: dict
  sample: {"commcheck_tcp_hosts": ["node1", "node2"], "commcheck_tcp_pattern": "ring", "commcheck_pair_perf_rails_by_host": {}}
'''

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import controller_only
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.oneclick_hosts import CHECK_PLAN_SPEC


def main():
    controller_only("check_plan", CHECK_PLAN_SPEC)


if __name__ == "__main__":
    main()
