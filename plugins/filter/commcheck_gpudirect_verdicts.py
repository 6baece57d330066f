# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_gpudirect_verdicts
short_description: GPU-memory bandwidth per rail next to host-memory bandwidth, and the GPUDirect findings
version_added: 1.0.0
description:
  - Marks the pair records of the GPU pass (C(params.memory=cuda), C(params.gpu), C(params.peer_gpu),
    C(params.gpudirect)), then compares, per host and rail, the median bandwidth from GPU memory with the median
    from host memory over the same operations.
  - C(gpudirect_slow) (verdict fail) where GPU memory gets less than O(min_ratio) of host memory's bandwidth;
    C(gpudirect_unavailable) (verdict warn) for each host where GPUDirect was wanted but could not run.
options:
  _input:
    description: The host-memory pair records of the run.
    type: list
    elements: dict
    required: true
  gpu_records:
    description: The pair records of the GPU pass (C(clusterops.commcheck.commcheck_pair_verdicts) C(records)).
    type: list
    elements: dict
    default: []
  jobs:
    description: The jobs of the GPU pass (C(clusterops.commcheck.commcheck_gpudirect_plan)).
    type: list
    elements: dict
    default: []
  states:
    description: Host name to its C(clusterops.commcheck.commcheck_gpudirect_host) result.
    type: dict
    default: {}
  min_ratio:
    description: GPU-memory bandwidth below this fraction of host-memory bandwidth is C(gpudirect_slow).
    type: float
    default: 0.7
'''

EXAMPLES = r'''
- name: Judge GPUDirect
  ansible.builtin.set_fact:
    gpudirect: "{{ host_records | clusterops.commcheck.commcheck_gpudirect_verdicts(gpu_records=gpu_records,
                   jobs=gpu_jobs, states=states) }}"
'''

RETURN = r'''
_value:
  description:
    - C(records) (the marked GPU-pass records), C(rows) (C(host), C(rail), C(device), C(gpu), C(host_gbps),
      C(cuda_gbps), C(ratio), C(slow)), C(findings) and C(summary) (C(rails), C(slow), C(hosts), C(unavailable)).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import gpudirect as plan
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import gpudirect


def commcheck_gpudirect_verdicts(records, gpu_records=None, jobs=None, states=None, min_ratio=0.7):
    if not isinstance(records, (list, tuple)):
        raise AnsibleFilterError("commcheck_gpudirect_verdicts: the input must be a list of records")
    try:
        ratio = float(min_ratio)
    except (TypeError, ValueError):
        raise AnsibleFilterError("commcheck_gpudirect_verdicts: min_ratio must be a number, got %r" % (min_ratio,))
    if not 0 < ratio <= 1:
        raise AnsibleFilterError("commcheck_gpudirect_verdicts: min_ratio must be above 0 and at most 1")
    marked = plan.mark_gpu_records([r for r in gpu_records or [] if isinstance(r, dict)], jobs)
    out = gpudirect.gpudirect_verdicts([r for r in records if isinstance(r, dict)] + marked, states or {}, ratio)
    out["records"] = marked
    return out


class FilterModule(object):
    def filters(self):
        return {"commcheck_gpudirect_verdicts": commcheck_gpudirect_verdicts}
