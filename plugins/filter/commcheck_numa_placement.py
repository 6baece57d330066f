# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_numa_placement
short_description: NUMA node, CPU list and closest GPU of each RDMA device, with placement findings
version_added: 1.0.0
description:
  - From a host's C(commcheck_rdma) fact, for each RDMA device (or those in O(devices)); its NUMA node, the
    CPUs of that node, the pin prefix a test process gets (C(numactl --cpunodebind=N --membind=N), or
    C(taskset -c CPUS)), and the GPU closest to it (same PCIe switch, then same NUMA node, then nearest bus).
  - Findings; C(numa_mismatch) (warning) when the GPU a GPUDirect test uses (O(use_cuda), or the closest one
    with O(gpu_select=closest)) is on another NUMA node than the NIC; C(not_pinned) (info) when the NIC's node is
    unknown.
options:
  _input:
    description: The C(commcheck_rdma) fact of one host.
    type: dict
    required: true
  devices:
    description: Only these RDMA devices.
    type: list
    elements: str
  use_cuda:
    description: The GPU index a GPUDirect test uses (none when omitted).
    type: int
  gpu_select:
    description: V(given) uses O(use_cuda); V(closest) picks the GPU closest to each NIC.
    type: str
    choices: [given, closest]
    default: given
  host:
    description: Host name for the findings' messages.
    type: str
'''

EXAMPLES = r'''
- name: Where each NIC sits
  ansible.builtin.debug:
    msg: "{{ ansible_facts.commcheck_rdma | clusterops.commcheck.commcheck_numa_placement(use_cuda=0, gpu_select='closest') }}"
'''

RETURN = r'''
_value:
  description:
    - One item per device with C(device), C(numa_node), C(cpulist), C(prefix) (numactl argv; taskset when only
      the CPU list is known), C(pinned), C(reason), C(gpu) (index, pci, numa_node) or null, C(gpu_reason),
      C(use_cuda) and C(findings).
  type: list
  elements: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import numa


def commcheck_numa_placement(rdma_facts, devices=None, use_cuda=None, gpu_select="given", host=None):
    if not isinstance(rdma_facts, dict):
        raise AnsibleFilterError("commcheck_numa_placement: the input must be the commcheck_rdma fact (a dict)")
    names = list(devices) if devices else [d.get("name") for d in rdma_facts.get("devices") or []]
    gpus = numa.gpus_from_facts(rdma_facts)
    out = []
    try:
        for name in names:
            nic = numa.nic_from_facts(rdma_facts, name)
            if nic is None:
                raise numa.NumaError("device %r is not in the facts" % (name,))
            plan = numa.plan_placement(nic, gpus, None if use_cuda is None else int(use_cuda), gpu_select,
                                       "auto", "numactl", "taskset", host)
            out.append(dict(plan, device=name, numa_node=nic["numa_node"], cpulist=nic["cpulist"]))
    except (numa.NumaError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("commcheck_numa_placement: %s" % exc)
    return out


class FilterModule(object):
    def filters(self):
        return {"commcheck_numa_placement": commcheck_numa_placement}
