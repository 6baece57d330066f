# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_collective_expectation
short_description: The NIC rates a collective run is judged by, from configuration or from discovery
version_added: 1.0.0
description:
  - With O(configured) rates, those (source V(configured)).
  - Else, for every host of the input, the link rates (Gb/s) of the ACTIVE ports of its C(commcheck_rdma) fact
    (from C(clusterops.commcheck.rdma_facts)) that NCCL can use (narrowed by O(ib_hca), C(NCCL_IB_HCA)'s syntax),
    and the list of the slowest host (the smallest sum), as a pool is as fast as its slowest member (source
    V(discovery)). Hosts with no active port of known rate are left out; none known gives no rates.
  - The C(clusterops.commcheck.collective) module turns the rates into the expected inter-node bus bandwidth,
    sum / 8 x its C(link_efficiency); NVLink / PCIe inside a node are not modelled.
options:
  _input:
    description: The hosts of the run.
    type: list
    elements: str
    required: true
  facts:
    description: Host name -> its C(commcheck_rdma) fact.
    type: dict
    default: {}
  configured:
    description: Rates (Gb/s) given in the configuration; when not empty they win.
    type: list
    elements: float
    default: []
  ib_hca:
    description:
      - An C(NCCL_IB_HCA) value (C(mlx5_0,mlx5_1:1), C(^mlx5_2), C(=mlx5_0)); empty takes every active port.
    type: str
    default: ""
'''

EXAMPLES = r'''
- name: The NIC rates of the pool
  ansible.builtin.set_fact:
    pool_rates: >-
      {{ pool_hosts | clusterops.commcheck.commcheck_collective_expectation(
           facts=dict(pool_hosts | zip(pool_hosts | map('extract', hostvars) | map(attribute='ansible_facts')
                                       | map(attribute='commcheck_rdma', default={})))) }}
'''

RETURN = r'''
_value:
  description:
    - C(rates) (Gb/s, empty when none is known), C(host) (the slowest host, or null), C(source) (V(configured),
      V(discovery) or null) and C(note) (where the rates came from, for the module's C(nic_rates_source)).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.collective_expectation import (
    nic_rates_choice)


def commcheck_collective_expectation(hosts, facts=None, configured=None, ib_hca=""):
    if not isinstance(hosts, (list, tuple)):
        raise AnsibleFilterError("commcheck_collective_expectation: the input must be a list of host names")
    if facts is not None and not isinstance(facts, dict):
        raise AnsibleFilterError("commcheck_collective_expectation: facts must be a dict of host -> commcheck_rdma")
    try:
        return nic_rates_choice(configured or [], facts or {}, list(hosts), ib_hca)
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError("commcheck_collective_expectation: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"commcheck_collective_expectation": commcheck_collective_expectation}
