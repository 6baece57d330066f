# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    # How the modules that manage or read pods reach the cluster (test_pods, existing_pods).
    DOCUMENTATION = r'''
options:
  kubeconfig:
    description:
      - Path of the kubeconfig file, absolute, without C(..). It must be a regular file the run's user can read
        and look like a kubeconfig (C(apiVersion), C(clusters), C(contexts)...), checked before kubectl runs.
      - Its path is never shown in messages, results or logs (commands show C(--kubeconfig (value not shown))),
        and its contents are never read into them.
      - When omitted, kubectl gets a kubeconfig written for this module run (mode 0600, removed when the module
        ends) from the E(K8S_AUTH_HOST), E(K8S_AUTH_API_KEY), E(K8S_AUTH_VERIFY_SSL) and E(K8S_AUTH_SSL_CA_CERT)
        variables of AWX's Kubernetes credential, else from the service account of the pod it runs in, else
        kubectl's default (E(KUBECONFIG), C(~/.kube/config)).
    type: path
  context:
    description: kubeconfig context to use.
    type: str
  kubectl_binary:
    description:
      - Absolute path of kubectl, or a command name found on E(PATH) (C(kubectl) on E(PATH) when omitted).
      - Its file name must be kubectl's (V(kubectl), V(kubectl-1.30), V(microk8s.kubectl)), and
        C(kubectl version --client) must print kubectl's C(Client Version:) line before kubectl first acts on the
        cluster; else the task fails naming this option.
    type: path
'''

    # The MPI agent in the pods of test_pods and existing_pods (each module documents its own mpi_agent_dir).
    MPI_AGENT = r'''
options:
  mpi_agent_kubectl:
    description:
      - The kubectl command inside the pods that the MPI agent runs (a name on the pods' E(PATH) or an absolute
        path); its file name must be kubectl's (V(kubectl), V(kubectl-1.30)).
    type: str
    default: kubectl
'''
