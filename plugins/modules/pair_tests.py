#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: pair_tests
short_description: Run the tool module of a pair-check family (perftest for RDMA, iperf3 for TCP)
version_added: 1.1.0
description:
  - The one task of the pair-check role (C(clusterops.commcheck.pair_perf)) that runs a family's tests on a host,
    the same task for every family (a row of C(plugins/module_utils/planning/families.py)).
  - Runs the family's tool module (V(rdma) and V(rdma_gpu) M(clusterops.commcheck.perftest), V(tcp)
    M(clusterops.commcheck.iperf3)) on the task's host with every other option of the task, and returns that
    module's result as it is. In the background (C(async)) and in check mode as the module itself runs.
  - The play's C(module_defaults) apply as they would to a task of that module (its groups' entries, then its own
    entry); an option the task gives itself wins over them.
author:
  - commcheck developers (@clusterops)
options:
  family:
    description:
      - The pair-check family whose module runs.
      - Unset, the family the task's variable C(commcheck_pair_family) names (the roles that run the shared task
        files of C(clusterops.commcheck.pair_perf) set it); the task fails when neither names one.
    type: str
    choices: [rdma, rdma_gpu, tcp]
extends_documentation_fragment:
  - clusterops.commcheck.planned_run
attributes:
  check_mode:
    support: full
    description: As the family's module.
  async:
    support: full
    description: The family's module runs in the background like a task of its own.
seealso:
  - module: clusterops.commcheck.perftest
  - module: clusterops.commcheck.iperf3
  - module: clusterops.commcheck.pair_check
'''

EXAMPLES = r'''
- name: Run every round of this host (the plan the pair_check step plan registered)
  clusterops.commcheck.pair_tests:
    family: tcp
    planned: run
  when: inventory_hostname in commcheck_pair_perf_run.rounds[0].sides
  register: commcheck_pair_perf_job

- name: One server side of an RDMA test, with the task's own options
  clusterops.commcheck.pair_tests:
    family: rdma
    sides:
      - role: server
        device: mlx5_0
        port: 18515
'''

RETURN = r'''
sides:
  description: The family module's sides, each with its command, outcome and result (see that module's return).
  returned: always
  type: list
  elements: dict
port_counters:
  description: The RDMA ports' counters when the tests ended (M(clusterops.commcheck.perftest) with its C(port_counters) option).
  returned: when the family's module returns them
  type: dict
'''

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import checked_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.families import FAMILIES

ARGUMENT_SPEC = {
    "family": {"type": "str", "choices": sorted(FAMILIES)},
    "planned": {"type": "str", "choices": ["run", "round"]},
}


def main():
    # the action plugin runs the family's module in its place; run as a module, it only says so
    module = checked_module(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.fail_json(msg="clusterops.commcheck.pair_tests runs as an action plugin, which runs the family's module "
                         "on the host; it is no module of its own")


if __name__ == "__main__":
    main()
