#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: pods_plan
short_description: The steps of the k8s_pods role, from its role variables, on the controller
version_added: 1.1.0
description:
  - The steps of the role C(clusterops.commcheck.k8s_pods), which runs on localhost (where kubectl runs). Each step
    reads the role's C(commcheck_k8s_*) variables (see the role's documentation) once; C(create), C(attach)
    and C(cleanup) run the modules M(clusterops.commcheck.test_pods) and M(clusterops.commcheck.existing_pods)
    with the arguments built from them (an empty C(commcheck_k8s_kubeconfig), C(commcheck_k8s_context) or
    C(commcheck_k8s_kubectl_binary) is left out) and return their results.
  - O(step=state) fixes this run's pod settings (C(commcheck_k8s_run_id), else a new id
    C(cc-<UTC time>-<number>); the namespace, the kubectl settings, the nodes of C(commcheck_k8s_nodes) as a
    list, what the cleanup must do) and says in C(msg) how to delete the pods of an interrupted run; register
    it as C(commcheck_k8s_pods_state).
  - O(step=render) renders the manifests asked for (C(commcheck_k8s_render_job), C(commcheck_k8s_render_rbac))
    as RV(files) and writes them under C(commcheck_k8s_manifest_dir) (each file atomically, mode C(0644); the
    directory made with mode C(0755) when missing; a file that already holds its content is left, none is
    written in check mode); a C(commcheck_k8s_node_selector) is resolved by test_pods in check mode (nothing is
    created).
  - O(step=job) runs the job O(step=render) writes (C(commcheck_k8s_run_job)) with
    M(clusterops.commcheck.k8s_job) - submitted, watched (a pod Pending longer than C(commcheck_k8s_wait_timeout)
    ends it), its launcher's log read into C(collective) records, deleted - and returns that module's result
    (RV(records) among it).
  - O(step=create) creates one test pod per node (test_pods C(state=present)); O(step=attach) reads the
    existing pods of C(commcheck_k8s_existing_pods) (existing_pods C(state=attached)).
  - O(step=hosts) gives the C(ansible.builtin.add_host) entry of each pod of O(result) as RV(hosts), named after
    its node (C(commcheck_k8s_host_name=node)) unless that node carries several of the pods, in group
    C(commcheck_k8s_group), reached with C(kubectl exec), then C(commcheck_k8s_pod_vars) and the
    C(commcheck_k8s_node_vars) of its node on top.
  - O(step=cleanup) deletes the test pods of the run localhost keeps in C(commcheck_k8s_pods_state) (else of the
    role variables), unless none were created, they are kept (C(commcheck_k8s_keep_pods)) or there is no run id;
    in existing pods it stops what the collection started and removes the MPI agent's files.
author:
  - commcheck developers (@clusterops)
options:
  step:
    description:
      - Which step to run.
    type: str
    required: true
    choices: [state, render, job, create, attach, hosts, cleanup]
  result:
    description:
      - For O(step=hosts), the registered result of O(step=create) or O(step=attach).
    type: dict
seealso:
  - module: clusterops.commcheck.test_pods
  - module: clusterops.commcheck.existing_pods
extends_documentation_fragment:
  - clusterops.commcheck.controller
'''

EXAMPLES = r'''
- name: Fix this run's test pod settings
  clusterops.commcheck.pods_plan:
    step: state
  register: commcheck_k8s_pods_state

- name: Create one test pod per node and wait until every one is Ready
  clusterops.commcheck.pods_plan:
    step: create
  register: commcheck_k8s_pods_result

- name: Note each pod's host in the inventory
  clusterops.commcheck.pods_plan:
    step: hosts
    result: "{{ commcheck_k8s_pods_result }}"
  register: commcheck_k8s_pods_hosts

- name: Add each pod to the inventory
  ansible.builtin.add_host: "{{ item }}"
  loop: "{{ commcheck_k8s_pods_hosts.hosts }}"
'''

RETURN = r'''
run_id:
  description: The run id of the pods (O(step=state)); also C(namespace), C(kubeconfig), C(context),
    C(kubectl_binary), C(wait_timeout), C(keep), C(created), C(existing), C(mpi_agent_dir), C(attached) and
    C(nodes).
  returned: O(step=state)
  type: str
  sample: cc-20260301-020000-4711
files:
  description: The manifests asked for, each with C(dest) and C(content) (YAML) (O(step=render)).
  returned: O(step=render)
  type: list
  elements: dict
written:
  description: The manifests of RV(files) written (or, in check mode, that would be), O(step=render).
  returned: O(step=render)
  type: list
  elements: str
hosts:
  description: The add_host entry of each pod (O(step=hosts)).
  returned: O(step=hosts)
  type: list
  elements: dict
state:
  description: The pod settings localhost keeps after the cleanup (O(step=cleanup)); C(detached_pods) says whether
    existing pods were cleaned, C(deleted) and C(detached) hold the module results.
  returned: O(step=cleanup)
  type: dict
records:
  description: The C(collective) records of the job run (O(step=job)), with the rest of the result of
    M(clusterops.commcheck.k8s_job).
  returned: O(step=job)
  type: list
  elements: dict
pods:
  description: The pods, as M(clusterops.commcheck.test_pods) or M(clusterops.commcheck.existing_pods) return them
    (O(step=create), O(step=attach)), with the rest of that module's result.
  returned: O(step=create) or O(step=attach)
  type: list
  elements: dict
'''

from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.pods_plan import PODS_PLAN_SPEC
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import controller_only


def main():
    controller_only("pods_plan", PODS_PLAN_SPEC)


if __name__ == "__main__":
    main()
