#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: reserve_nodes
short_description: Keep workloads off the Kubernetes nodes under test while a commcheck run lasts
version_added: 1.1.0
description:
  - O(state=present) labels (O(mode=label)) each node C(<key>=<run>) or taints it (O(mode=taint))
    C(<key>=<run>:NoSchedule), so that schedulers keep new workloads off the nodes while they are tested (a Kueue
    ResourceFlavor or a Volcano queue whose node selector or affinity excludes the label; every scheduler honours
    the taint). The value is O(run_id) as a label value (characters a label value may not hold become C(_)).
  - A node that already carries O(key) (as a label, or as a taint for O(mode=taint)) is left as it was; it is
    neither set nor removed, and named in RV(reserved_before).
  - Before the first node is touched, what will be set and how to undo it is kept in a file of O(state_dir), and a
    guard process is started on the controller. When C(ansible-playbook) ends before the release (Ctrl-C, SIGTERM,
    even SIGKILL), the guard undoes the reservation and removes the file.
  - O(state=absent) undoes what the run set (from that file) and removes the file; the guard then ends.
  - O(mode=none) does nothing. Every command is a C(kubectl) argv list, run on the controller; a node name is
    never a flag.
author:
  - commcheck developers (@clusterops)
options:
  state:
    description: V(present) reserves the nodes, V(absent) releases what this run reserved.
    type: str
    choices: [present, absent]
    default: present
  mode:
    description: Reserve with a label, a C(NoSchedule) taint, or not at all.
    type: str
    choices: [none, label, taint]
    default: label
  key:
    description: The label or taint key.
    type: str
    default: commcheck.clusterops.io/testing
  run_id:
    description: The run that reserves the nodes (the label's value, and the name of its file).
    type: str
  nodes:
    description:
      - The Kubernetes node names. With O(role_options), when empty, the nodes of the play's hosts (a test pod's
        node, C(commcheck_k8s_node); else O(node_names) of the host, else the host's name).
    type: list
    elements: str
    default: []
  node_names:
    description: Inventory host name to node name, where they differ.
    type: dict
    default: {}
  kubectl_binary:
    description: kubectl, a command name or an absolute path; its file name must be kubectl's.
    type: str
    default: kubectl
  kubeconfig:
    description: kubeconfig of the node commands (kubectl's default when omitted); its path is never shown.
    type: str
  kube_context:
    description: kubeconfig context of the node commands.
    type: str
  state_dir:
    description:
      - Directory of the reservation files on the controller (made C(0700); a symlink, another user's directory or
        one that others may write is refused). Default C(<tmp>/commcheck-reserve-<uid>).
    type: str
  timeout:
    description: Seconds each kubectl command may take, 1 to 3600.
    type: int
    default: 60
  role_options:
    description:
      - Take the options from the one-click role's variables (O(mode) from C(commcheck_reserve_nodes), O(key) from
        C(commcheck_reserve_key), O(run_id) from C(commcheck_run_id), O(node_names) from
        C(commcheck_reserve_node_names), O(kubectl_binary) from C(commcheck_reserve_kubectl), O(kubeconfig) from
        C(commcheck_reserve_kubeconfig), O(kube_context) from C(commcheck_reserve_context), O(state_dir) from
        C(commcheck_reserve_state_dir)); an empty kubeconfig, context or directory leaves it unset.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Reads and sets nothing; says which mode it would use.
  platform:
    support: full
    platforms: posix
    description: Runs on the controller only (an action plugin); kubectl runs there.
notes:
  - The one-click role reserves the nodes right after it took the hosts (C(commcheck_reserve_nodes) not V(none)),
    before the first test, and releases them at the end of the run, also after a failed task
    (C(playbooks/commcheck.yml) and C(playbooks/k8s_commcheck.yml)).
seealso:
  - module: clusterops.commcheck.quarantine
  - module: clusterops.commcheck.run_lock
'''

EXAMPLES = r'''
- name: Keep workloads off the nodes under test
  clusterops.commcheck.reserve_nodes:
    mode: taint
    run_id: "{{ commcheck_run_id }}"
    nodes: [gpu-node-01, gpu-node-02]
  run_once: true

- name: Give them back
  clusterops.commcheck.reserve_nodes:
    state: absent
    run_id: "{{ commcheck_run_id }}"
  run_once: true
'''

RETURN = r'''
mode:
  description: The mode used.
  returned: always
  type: str
reserved:
  description: The nodes this run labelled or tainted (O(state=present)).
  returned: always
  type: list
  elements: str
reserved_before:
  description: The nodes that carried O(key) already and were left as they were.
  returned: always
  type: list
  elements: str
released:
  description: The nodes whose reservation was removed (O(state=absent)).
  returned: always
  type: list
  elements: str
actions:
  description: The kubectl commands run, each with C(node), C(action) (V(reserve), V(release)), C(argv), C(rc)
    and C(stderr).
  returned: always
  type: list
  elements: dict
guard_pid:
  description: The process id of the guard that undoes the reservation should the run end without releasing it.
  returned: when nodes were reserved
  type: int
report:
  description: Lines saying what was done.
  returned: always
  type: list
  elements: str
'''

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import controller_only
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.reserve import ARGUMENT_SPEC


def main():
    controller_only("reserve_nodes", ARGUMENT_SPEC)


if __name__ == "__main__":
    main()
