# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_placement_findings
short_description: Finding records for the NUMA placement findings of perftest side results
version_added: 1.0.0
description:
  - Reads the C(findings) the C(clusterops.commcheck.perftest) module attaches to each side (C(numa_mismatch)
    when a NIC and the GPU it is tested with sit on different NUMA nodes) and returns one C(finding) record per
    host, device and code, warnings and worse only (an unpinned side is already visible in its C(exec_cmd)).
options:
  _input:
    description: Side results (each with C(host) added, as the C(clusterops.commcheck.rdma_perf) role keeps them).
    type: list
    elements: dict
    required: true
  check:
    description: The check name of the records.
    type: str
    default: rdma_perf
'''

EXAMPLES = r'''
- name: Placement findings of the RDMA tests
  ansible.builtin.set_fact:
    placement_records: "{{ all_sides | clusterops.commcheck.commcheck_placement_findings }}"
'''

RETURN = r'''
_value:
  description: C(finding) records (C(params.finding) the code, verdict C(warn) for warnings).
  type: list
  elements: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import numa


def commcheck_placement_findings(sides, check="rdma_perf"):
    if not isinstance(sides, (list, tuple)):
        raise AnsibleFilterError("commcheck_placement_findings: the input must be a list of side results")
    return numa.finding_records([s for s in sides if isinstance(s, dict)], check)


class FilterModule(object):
    def filters(self):
        return {"commcheck_placement_findings": commcheck_placement_findings}
