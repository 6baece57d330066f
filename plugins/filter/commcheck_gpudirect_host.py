# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_gpudirect_host
short_description: Whether and how a host tests GPUDirect RDMA, and which GPU each of its rails uses
version_added: 1.0.0
description:
  - Pairs each NVIDIA GPU of the C(commcheck_rdma) fact with its nearest RDMA NIC (the deepest PCIe bridge they
    share, i.e. the same PCIe switch; else a NIC on the GPU's NUMA node, GPUs and NICs of one node paired in PCI
    order; else none) and keeps one GPU per rail (the lowest-numbered GPU paired with the rail's NIC).
  - GPU memory is registered through nvidia_peermem / nv_peer_mem when loaded (perftest C(--use_cuda=N)), else
    through DMA-BUF when O(dmabuf) says it works and the kernel is 5.12 or newer (C(--use_cuda_dmabuf) too).
options:
  _input:
    description: The C(commcheck_rdma) fact of the host.
    type: dict
    required: true
  rails:
    description: The host's rails (C(clusterops.commcheck.commcheck_rdma_rails)).
    type: list
    elements: dict
    default: []
  setting:
    description: V(auto) (on when GPUs are found), V(true) or V(false) (C(commcheck_rdma_gpudirect)).
    type: raw
    default: auto
  dmabuf:
    description: DMA-BUF works on this host (perftest and the NVIDIA driver support it).
    type: bool
    default: false
  kernel:
    description: The host's kernel release (C(ansible_facts.kernel)); an older kernel than 5.12 rules DMA-BUF out.
    type: str
'''

EXAMPLES = r'''
- name: GPUDirect state of this host
  ansible.builtin.set_fact:
    gpudirect: >-
      {{ ansible_facts.commcheck_rdma | clusterops.commcheck.commcheck_gpudirect_host(
           rails=my_rails, setting='auto', kernel=ansible_facts.kernel | default(none)) }}
'''

RETURN = r'''
_value:
  description:
    - C(enabled) (the GPU pass runs on this host), C(wanted), C(setting), C(gpus) (how many), C(mode)
      (V(peermem), V(dmabuf) or null), C(rails) (C(rail), C(device), C(gpu), C(how)), C(pairs) (every GPU with
      its NIC and how they were paired, C(pcie_switch), C(numa_node) or C(none)), and C(cause) / C(fix) when it
      cannot run.
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import gpudirect


def commcheck_gpudirect_host(rdma_facts, rails=None, setting="auto", dmabuf=False, kernel=None):
    if rdma_facts is not None and not isinstance(rdma_facts, dict):
        raise AnsibleFilterError("commcheck_gpudirect_host: the input must be the commcheck_rdma fact (a dict)")
    try:
        return gpudirect.host_gpudirect(rdma_facts, [r for r in rails or [] if isinstance(r, dict)], setting,
                                        bool(dmabuf), kernel)
    except gpudirect.GpuDirectError as exc:
        raise AnsibleFilterError("commcheck_gpudirect_host: setting %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"commcheck_gpudirect_host": commcheck_gpudirect_host}
