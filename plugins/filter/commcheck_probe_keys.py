# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_probe_keys
short_description: What the tool probe looks for on every host of a one-click run
version_added: 1.0.0
description:
  - The keys of the tool probe (C(clusterops.commcheck.tool_probe), or the
    O(clusterops.commcheck.rdma_facts#module:probe) option of discovery) for a plan of
    the one-click run (the plan of M(clusterops.commcheck.check_plan) O(clusterops.commcheck.check_plan#module:step=plan))
    - the perftest tools of the RDMA check, C(iperf3), the MPI
    launcher, the test binaries of the candidate collective libraries and the evidence of an NVIDIA GPU or an
    Ascend NPU.
  - Each key once, in that order.
options:
  _input:
    description: The plan (M(clusterops.commcheck.check_plan) with O(clusterops.commcheck.check_plan#module:step=plan)).
    type: dict
    required: true
  mpirun:
    description: The MPI launcher.
    type: str
    default: mpirun
  binary_dir:
    description: Directory of the collective test binaries; empty for C(PATH).
    type: str
    default: ''
'''

EXAMPLES = r'''
- name: What to look for
  ansible.builtin.set_fact:
    keys: "{{ plan | clusterops.commcheck.commcheck_probe_keys(binary_dir='/opt/nccl-tests/build') }}"
'''

RETURN = r'''
_value:
  description: Probe keys such as C(cmd:ib_write_bw), C(cmd:iperf3), C(cmd:/opt/nccl-tests/build/all_reduce_perf)
    and C(exists:/dev/nvidiactl).
  type: list
  elements: str
'''

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.check_plan import probe_keys


def commcheck_probe_keys(plan, mpirun="mpirun", binary_dir=""):
    return probe_keys(plan, mpirun, binary_dir)


class FilterModule(object):
    def filters(self):
        return {"commcheck_probe_keys": commcheck_probe_keys}
