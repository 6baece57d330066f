# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_job_command
short_description: The mpirun command line of an MPIJob or Volcano Job launcher for a collective check
version_added: 1.0.0
description:
  - Builds, as an argv list, the C(mpirun) command that the launcher of a Kubeflow C(MPIJob) or the master of a
    Volcano C(Job) runs for one collective test (nccl-tests C(<op>_perf) or hccl_test C(<op>_test)), with the
    same validation as M(clusterops.commcheck.collective).
  - The command names no hosts. mpi-operator gives the launcher a hostfile through
    C(OMPI_MCA_orte_default_hostfile); for Volcano the command reads C(/etc/volcano/mpiworker.host), which its
    C(ssh)/C(svc) plugins write. Each node runs C(gpus_per_node / gpus_per_process) processes (C(--map-by ppr:K:node)).
  - Feed the result to C(clusterops.commcheck.commcheck_job_manifest) as its C(command).
options:
  _input:
    description: Node names; one worker each.
    type: list
    elements: str
    required: true
  kind:
    description: Which job the command is for.
    type: str
    choices: [mpijob, volcano]
    default: mpijob
  collective:
    description:
      - Options of the test, as M(clusterops.commcheck.collective) names them - C(library) (nccl, hccl),
        C(operation), C(gpus_per_node), C(gpus_per_process), C(min_bytes), C(max_bytes), C(step_factor),
        C(iterations), C(warmup_iterations), C(check), C(datatype), C(reduce_op), C(root), C(env), C(mca),
        C(mpirun), C(allow_run_as_root), C(binary_dir).
    type: dict
    default: {}
'''

EXAMPLES = r'''
- name: MPIJob for NCCL all_reduce on two 8-GPU nodes
  ansible.builtin.copy:
    dest: /tmp/commcheck-mpijob.yml
    mode: "0644"
    content: >-
      {{ {'image': 'nvcr.io/nvidia/pytorch:24.05-py3', 'gpus': 8, 'run_id': 'r1'}
         | clusterops.commcheck.commcheck_job_manifest(
             nodes=['gpu1', 'gpu2'],
             command=['gpu1', 'gpu2'] | clusterops.commcheck.commcheck_job_command(
               collective={'gpus_per_node': 8, 'min_bytes': '8', 'max_bytes': '8G'}))
         | to_nice_yaml }}
'''

RETURN = r'''
_value:
  description: The launcher argv, for example C([mpirun, -np, 16, --map-by, ppr:8:node, -x, NCCL_DEBUG=INFO, all_reduce_perf, -b, 8, ...]).
  type: list
  elements: str
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.k8s_jobs import launcher_command


def commcheck_job_command(nodes, kind="mpijob", collective=None):
    if not isinstance(nodes, (list, tuple)):
        raise AnsibleFilterError("commcheck_job_command: the input must be a list of node names")
    try:
        return launcher_command(kind, list(nodes), collective or {})
    except ValueError as exc:
        raise AnsibleFilterError("commcheck_job_command: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"commcheck_job_command": commcheck_job_command}
