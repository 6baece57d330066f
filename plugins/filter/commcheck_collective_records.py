# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_collective_records
short_description: Turn clusterops.commcheck.collective results into history records
version_added: 1.0.0
description:
  - Takes the results of C(clusterops.commcheck.collective) (a registered loop's C(results), or a list of single
    results) and returns records for C(clusterops.commcheck.record), one C(kind=collective) record per run (the
    pool run and each bisection run, C(params.stage) V(pool) or V(bisect)) and one C(kind=finding) record per
    node named bad, and one C(kind=finding) record per unreachable host.
  - Skipped results without runs are left out.
options:
  _input:
    description: The module results.
    type: list
    elements: dict
    required: true
  mode:
    description: The role's mode, stored in C(params.mode).
    type: str
    default: pool
  unreachable:
    description: Hosts left out because Ansible could not reach them; each gets a C(finding) record (V(error)).
    type: list
    elements: str
    default: []
'''

EXAMPLES = r'''
- name: Publish the collective results
  clusterops.commcheck.record:
    records: "{{ commcheck_collective_results.results | clusterops.commcheck.commcheck_collective_records(mode='pool') }}"
  run_once: true
  delegate_to: localhost
'''

RETURN = r'''
_value:
  description: Records with C(kind), C(host), C(peer), C(params), C(metrics) (C(busbw_gbs), C(algbw_gbs),
    C(expected_busbw_gbs), C(threshold_busbw_gbs), C(duration_s)), C(verdict), C(cause), C(fix), C(evidence).
  type: list
  elements: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.collective_plan import collective_records


def commcheck_collective_records(results, mode="pool", unreachable=None):
    if isinstance(results, dict):
        results = results.get("results", [results])
    if not isinstance(results, (list, tuple)):
        raise AnsibleFilterError("commcheck_collective_records: expected a list of module results, got %r"
                                 % type(results).__name__)
    return collective_records(list(results), mode=mode, unreachable=list(unreachable or []))


class FilterModule(object):
    def filters(self):
        return {"commcheck_collective_records": commcheck_collective_records}
