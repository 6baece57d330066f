# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_check_decision
short_description: Which hosts of a one-click run can run each check, and why the others cannot
version_added: 1.0.0
description:
  - From each host's tool probe and discovery facts, in play order - what each check can run on, the collective
    library (C(auto) - the one whose test binaries the first host that has either has) and one C(skipped) record
    per check and host that cannot run it, with the cause and the fix.
  - A pair check (RDMA, TCP) that only one host can run is skipped there too (C(no_peer)).
options:
  _input:
    description: One dict per host, in play order, with C(host), C(probe) (the probe's result - C(rc),
      C(stdout_lines), C(stderr)), C(facts) (the host's C(commcheck_rdma) discovery facts) and optionally the
      host's own C(binary_dir), C(mpirun) and C(require_accelerators) (else the options below).
    type: list
    elements: dict
    required: true
  plan:
    description: The plan (C(clusterops.commcheck.commcheck_check_plan)).
    type: dict
    required: true
  binary_dir:
    description: Directory of the collective test binaries; empty for C(PATH). Also the directory the
      C(skipped) records name when no host has a library.
    type: str
    default: ''
  mpirun:
    description: The MPI launcher.
    type: str
    default: mpirun
  require_accelerators:
    description: A host needs a GPU (NCCL) or an NPU (HCCL) for the collective check.
    type: bool
    default: true
'''

EXAMPLES = r'''
- name: Decide
  ansible.builtin.set_fact:
    decision: >-
      {{ [{'host': 'n1', 'probe': n1_probe, 'facts': n1_facts}, {'host': 'n2', 'probe': n2_probe, 'facts': n2_facts}]
         | clusterops.commcheck.commcheck_check_decision(plan=plan) }}
'''

RETURN = r'''
_value:
  description: C(library) (or null), C(library_chosen_by) (the host whose binaries chose it under C(auto)),
    C(rdma_hosts), C(tcp_hosts), C(collective_hosts) and C(records) (the C(skipped) records).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.check_plan import decide, host_status


def commcheck_check_decision(hosts, plan, binary_dir="", mpirun="mpirun", require_accelerators=True):
    if not isinstance(hosts, list) or not all(isinstance(item, dict) and item.get("host") for item in hosts):
        raise AnsibleFilterError("commcheck_check_decision: the input must be a list of dicts with host, probe "
                                 "and facts")
    statuses = [(item["host"], host_status(plan, item.get("probe"), item.get("facts"),
                                           item.get("binary_dir", binary_dir), item.get("mpirun", mpirun),
                                           item.get("require_accelerators", require_accelerators)))
                for item in hosts]
    return decide(plan, statuses, binary_dir)


class FilterModule(object):
    def filters(self):
        return {"commcheck_check_decision": commcheck_check_decision}
