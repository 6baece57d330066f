# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_gpudirect_plan
short_description: The rounds of the RDMA check's bandwidth tests from GPU memory
version_added: 1.0.0
description:
  - Like C(clusterops.commcheck.commcheck_round_plan) for the bandwidth steps only, on the rails where both hosts
    of a pair have a GPU (C(clusterops.commcheck.commcheck_gpudirect_host)); each side gets C(use_cuda) (its own
    GPU) and C(use_cuda_dmabuf); each job C(memory=cuda), C(server_gpu), C(client_gpu) and C(gpudirect).
  - One GPU per rail, so the pass adds one step per bandwidth test and round. Rounds without such a pair are
    left out.
options:
  _input:
    description: The schedule (C(clusterops.commcheck.commcheck_schedule)).
    type: list
    elements: list
    required: true
  host_rails:
    description: Host name to its rails.
    type: dict
    required: true
  states:
    description: Host name to its C(clusterops.commcheck.commcheck_gpudirect_host) result.
    type: dict
    required: true
  tests:
    description: The test steps of the host-memory pass ([op, metric] pairs or dicts); latency steps are dropped.
    type: list
  base_port:
    description: First TCP port.
    type: int
    default: 18515
  rails:
    description: Only these rail numbers.
    type: list
    elements: int
'''

EXAMPLES = r'''
- name: Plan the GPU-memory rounds
  ansible.builtin.set_fact:
    gpu_plan: "{{ schedule | clusterops.commcheck.commcheck_gpudirect_plan(host_rails=rails, states=states,
                  tests=[['write', 'bw']]) }}"
'''

RETURN = r'''
_value:
  description: One plan per round, each C(sides) (host to sides), C(jobs) and C(skipped).
  type: list
  elements: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import gpudirect, schedule


def commcheck_gpudirect_plan(rounds, host_rails=None, states=None, tests=None, base_port=18515, rails=None):
    if not isinstance(rounds, (list, tuple)):
        raise AnsibleFilterError("commcheck_gpudirect_plan: the input must be a schedule (a list of rounds)")
    try:
        return gpudirect.gpu_round_plans(rounds, host_rails or {}, states or {}, tests, int(base_port), rails)
    except (schedule.ScheduleError, ValueError, TypeError) as exc:
        raise AnsibleFilterError("commcheck_gpudirect_plan: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"commcheck_gpudirect_plan": commcheck_gpudirect_plan}
