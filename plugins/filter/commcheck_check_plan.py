# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_check_plan
short_description: The checks of a one-click run, from commcheck_checks
version_added: 1.0.0
description:
  - Turns C(commcheck_checks) (a list, or the comma-separated string an AWX survey sends) into the plan of
    the run that the C(clusterops.commcheck.commcheck) role follows.
  - C(nccl) or C(hccl) among the checks asks for the collective check with that library.
options:
  _input:
    description: The checks (C(discover), C(rdma), C(collective), C(nccl), C(hccl), C(tcp)).
    type: raw
    required: true
  library:
    description: The collective library asked for (C(auto), C(nccl) or C(hccl)) when the checks name none.
    type: str
    default: auto
  collective_ops:
    description: The collective operations (a list or a comma-separated string).
    type: raw
    default: []
  rdma_ops:
    description: The perftest operations (a list or a comma-separated string).
    type: raw
    default: []
  rdma_metrics:
    description: The perftest metrics, C(bw) and C(lat) (a list or a comma-separated string).
    type: raw
    default: []
'''

EXAMPLES = r'''
- name: Plan the run
  ansible.builtin.set_fact:
    plan: >-
      {{ 'discover,rdma,tcp' | clusterops.commcheck.commcheck_check_plan(rdma_ops=['write'], rdma_metrics=['bw']) }}
'''

RETURN = r'''
_value:
  description: C(checks), C(discover), C(rdma), C(tcp), C(collective) (booleans but the first), C(library),
    C(collective_ops), C(rdma_ops), C(rdma_metrics) (lists) and C(need_facts) (whether discovery must run).
  type: dict
'''

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.check_plan import plan_checks


def commcheck_check_plan(checks, library="auto", collective_ops=(), rdma_ops=(), rdma_metrics=()):
    return plan_checks(checks, library, collective_ops, rdma_ops, rdma_metrics)


class FilterModule(object):
    def filters(self):
        return {"commcheck_check_plan": commcheck_check_plan}
