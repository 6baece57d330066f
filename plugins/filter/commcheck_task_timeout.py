# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_task_timeout
short_description: The whole-task bound of a task that runs tests
version_added: 1.0.0
description:
  - Seconds a task that runs O(_input) test steps one after the other, each bounded by O(step_timeout)
    seconds on the host, may take as a whole; the roles give it to Ansible's task keyword C(timeout), so that
    a module that never comes back (stopped, wedged, its session hung) cannot hold the run, whatever the forks.
  - The steps times the step timeout plus 5 seconds each, plus O(margin); at least one step.
  - A collective that may bisect its pool counts its bisection runs as steps (O(bisect_hosts)).
options:
  _input:
    description:
      - The number of test steps the task runs one after the other (C(0) counts as one), or the host's sides
        (the pair modules' O(clusterops.commcheck.perftest#module:sides)), counted by their distinct C(step) values.
      - Or C(discovery), the commands one C(clusterops.commcheck.rdma_facts) run makes one after the other.
    type: raw
    required: true
  step_timeout:
    description: The deadline of one step on the host, in seconds.
    type: int
    required: true
  margin:
    description: Seconds for what the task does around its steps (start, facts, result).
    type: int
    default: 60
  bisect_hosts:
    description: The hosts of a collective's pool that a bisection may search (C(0) for none).
    type: int
    default: 0
  bisect_max_runs:
    description: The collective's O(clusterops.commcheck.collective#module:bisect_max_runs) (C(0) for its default).
    type: int
    default: 0
'''

EXAMPLES = r'''
- name: Run every step of this host, bounded as a whole
  clusterops.commcheck.perftest:
    sides: "{{ sides }}"
    timeout: 40
  timeout: "{{ plan.steps | clusterops.commcheck.commcheck_task_timeout(40) }}"
'''

RETURN = r'''
_value:
  description: The bound in seconds.
  type: int
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.task_bound import TASK_MARGIN_S, task_timeout


def commcheck_task_timeout(steps, step_timeout, margin=TASK_MARGIN_S, bisect_hosts=0, bisect_max_runs=0):
    try:
        return task_timeout(steps, step_timeout, margin, bisect_hosts, bisect_max_runs)
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError("commcheck_task_timeout: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"commcheck_task_timeout": commcheck_task_timeout}
