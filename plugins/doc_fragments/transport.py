# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    # The modules that run commands on a host or in a pod; none of them edits a file it could show a diff of.
    DOCUMENTATION = r'''
attributes:
  diff_mode:
    support: none
    description: Nothing to diff.
options:
  transport:
    description:
      - Where the commands run.
      - V(host) runs them on the target host itself.
      - V(kubectl) runs them inside a pod through C(kubectl exec) from the
        host the module runs on (usually the controller).
    type: str
    choices: [host, kubectl]
    default: host
  kubectl:
    description:
      - Pod to exec into when O(transport=kubectl).
      - The sub-options are checked whatever the transport, so a bad value fails the task with
        O(transport=host) too. Only O(transport=kubectl) needs O(kubectl.pod) and looks O(kubectl.binary)
        up on E(PATH).
    type: dict
    suboptions:
      namespace:
        description: Namespace of the pod (a DNS-1123 label).
        type: str
        default: default
      pod:
        description: Name of the pod (a Kubernetes name; never one that starts with C(-)).
        type: str
      container:
        description: Container in the pod (a DNS-1123 label); the pod's default container when omitted.
        type: str
      context:
        description:
          - kubeconfig context to use. Letters, digits and C(_.@:/-), not starting with C(-)
            (the names cloud CLIs write, such as C(arn:aws:eks:...) or C(gke_project_zone_name), fit).
        type: str
      kubeconfig:
        description:
          - Path of the kubeconfig file, an absolute path without C(..) components.
          - With O(transport=kubectl) it must be a regular file the run's user can read on the host the module
            runs on, and look like a kubeconfig, before anything runs.
          - Its path is never shown in messages, results (C(exec_cmd) shows C(--kubeconfig (value not shown)))
            or logs, and its contents are never read into them.
          - When omitted, kubectl gets a kubeconfig written for this module run (mode 0600, removed when the module
            ends) from the E(K8S_AUTH_HOST), E(K8S_AUTH_API_KEY), E(K8S_AUTH_VERIFY_SSL) and E(K8S_AUTH_SSL_CA_CERT)
            variables of AWX's Kubernetes credential, else from the service account of the pod it runs in, else
            kubectl's default (E(KUBECONFIG), C(~/.kube/config)).
        type: path
      binary:
        description:
          - The kubectl binary, an absolute path to an executable file or a bare command name found on
            E(PATH). Relative paths and C(..) are refused. C(kubectl) from E(PATH) when omitted.
          - Its file name must be kubectl's (V(kubectl), V(kubectl-1.30), V(microk8s.kubectl)); with
            O(transport=kubectl), C(kubectl version --client) must print kubectl's C(Client Version:) line before
            anything runs, else the task fails naming this option.
        type: path
'''
