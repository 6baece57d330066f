# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_rdma_rails
short_description: The rails (RDMA ports) a host tests, from its commcheck_rdma facts
version_added: 1.0.0
description:
  - Without O(devices), every ACTIVE port of the host's C(commcheck_rdma) fact (from
    C(clusterops.commcheck.rdma_facts)), in natural device order (C(mlx5_2) before C(mlx5_10)); rail k is the
    k-th of them.
  - With O(devices), those ports, in that order.
  - Each rail carries the port's GID index, link rate (the expected bandwidth), link layer, netdev and the
    port's IPv4 address (from its facts or its RoCE v2 IPv4-mapped GID), or O(address) when the facts know none.
options:
  _input:
    description: The C(commcheck_rdma) fact (a dict with C(devices)); may be empty when O(devices) is given.
    type: dict
    required: true
  devices:
    description:
      - Ports to test instead of every active one; items are C(mlx5_0), C(mlx5_0:2) (device:port) or dicts with
        C(device), C(port) and optionally C(address), C(gid_index), C(rate_gbps).
    type: list
    elements: raw
  address:
    description: Address peers use to reach this host when a port has no address of its own.
    type: str
  port:
    description: Port number of the items of O(devices) that name none (C(mlx5_0), or a dict without C(port)).
    type: int
    default: 1
'''

EXAMPLES = r'''
- name: This host's rails
  ansible.builtin.set_fact:
    my_rails: "{{ commcheck_rdma | clusterops.commcheck.commcheck_rdma_rails(address=ansible_host) }}"
'''

RETURN = r'''
_value:
  description: One dict per rail with C(rail), C(device), C(port), C(gid_index), C(rate_gbps), C(link_layer),
    C(netdev), C(address), C(model) (the NIC model, its hca_type; ports of one model on one rail are like ports).
  type: list
  elements: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import ScheduleError, select_rails


def commcheck_rdma_rails(rdma_facts, devices=None, address=None, port=1):
    if rdma_facts is not None and not isinstance(rdma_facts, dict):
        raise AnsibleFilterError("commcheck_rdma_rails: the input must be the commcheck_rdma fact (a dict)")
    try:
        return select_rails(rdma_facts, devices, address, port)
    except ScheduleError as exc:
        raise AnsibleFilterError("commcheck_rdma_rails: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"commcheck_rdma_rails": commcheck_rdma_rails}
