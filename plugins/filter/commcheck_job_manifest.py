# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_job_manifest
short_description: Render an MPIJob or Volcano Job manifest for a collective check
version_added: 1.0.0
description:
  - For sites that run MPI work through their scheduler instead of C(kubectl exec), renders a
    Kubeflow mpi-operator C(MPIJob) (v2beta1) or a Volcano C(Job) that runs the given launcher
    command across the chosen nodes, one worker per node, with the same resources, capabilities,
    networks and tolerations as the commcheck test pods.
  - The launcher reaches its workers over SSH, so every worker runs C(sshd) in the foreground
    (C(/usr/sbin/sshd -De), as mpi-operator's own v2beta1 examples do); the image must contain
    sshd. The MPIJob sets C(launcherCreationPolicy=WaitForWorkersReady) (mpi-operator v0.5.0 or later).
options:
  _input:
    description: Pod parameters, as for M(clusterops.commcheck.test_pods) (image, resources, gpus, networks, run_id, namespace, ...).
    type: dict
    required: true
  nodes:
    description: Node names; one worker each.
    type: list
    elements: str
    required: true
  command:
    description:
      - The launcher's argv (for example the output of C(clusterops.commcheck.commcheck_job_command)). Its first item
        is a program name or an absolute path in the image (no relative path, no C(..), not starting with C(-)).
    type: list
    elements: str
    required: true
  kind:
    description: Which manifest to render.
    type: str
    choices: [mpijob, volcano]
    default: mpijob
'''

EXAMPLES = r'''
- name: Write an MPIJob for the NCCL all_reduce check
  ansible.builtin.copy:
    dest: /tmp/commcheck-mpijob.yml
    mode: "0644"
    content: >-
      {{ {'image': 'nvcr.io/nvidia/pytorch:24.05-py3', 'gpus': 8, 'run_id': 'r1',
          'resources': {'rdma/rdma_shared_device_a': 1}}
         | clusterops.commcheck.commcheck_job_manifest(nodes=['gpu1', 'gpu2'],
             command=['mpirun', '-np', '16', 'all_reduce_perf', '-b', '8', '-e', '8G', '-f', '2'])
         | to_nice_yaml }}
'''

RETURN = r'''
_value:
  description: The manifest as a dictionary.
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.k8s_jobs import (
    mpijob_manifest,
    volcano_job_manifest,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.k8s_pods import command_errors, validate_params
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import show


def commcheck_job_manifest(params, nodes, command, kind="mpijob"):
    if not isinstance(params or {}, dict):
        raise AnsibleFilterError("commcheck_job_manifest: the input must be a dict of pod parameters")
    if not isinstance(nodes, (list, tuple)):
        raise AnsibleFilterError("commcheck_job_manifest: nodes must be a list of node names")
    params = dict(params or {}, nodes=list(nodes or []), state="present")
    errors = validate_params(params)
    if not command or not isinstance(command, (list, tuple)) or not all(isinstance(c, str) for c in command):
        errors.append("command must be a non-empty list of strings")
    else:
        errors += command_errors(command)
    if kind not in ("mpijob", "volcano"):
        errors.append("kind must be mpijob or volcano, got %s" % show(kind))
    if errors:
        raise AnsibleFilterError("commcheck_job_manifest: " + "; ".join(errors))
    render = mpijob_manifest if kind == "mpijob" else volcano_job_manifest
    return render(params, list(nodes), list(command))


class FilterModule(object):
    def filters(self):
        return {"commcheck_job_manifest": commcheck_job_manifest}
