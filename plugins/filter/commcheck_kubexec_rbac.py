# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_kubexec_rbac
short_description: Render the ServiceAccount, Role and RoleBinding that let test pods exec into each other
version_added: 1.0.0
description:
  - Collectives in test pods run C(mpirun) in one pod, which starts its daemons in the other pods with
    C(kubectl exec) (the C(kubexec.sh) agent that M(clusterops.commcheck.test_pods) installs with
    C(mpi_agent_dir)). C(kubectl) inside a pod uses the pod's service account, which needs C(get), C(list)
    and C(watch) on C(pods) and C(create) and C(get) on C(pods/exec) in the namespace.
  - Returns a list of three manifests (C(ServiceAccount), C(Role), C(RoleBinding)); apply them once per
    namespace (C(kubectl apply -f)) and give the pods the service account.
options:
  _input:
    description: Namespace of the test pods.
    type: str
    required: true
  service_account:
    description: Name of the service account.
    type: str
    default: commcheck
  name:
    description: Name of the Role and the RoleBinding; default C(<service_account>-kubexec).
    type: str
'''

EXAMPLES = r'''
- name: Write the RBAC objects for MPI in the test pods
  ansible.builtin.copy:
    dest: /tmp/commcheck-rbac.yml
    mode: "0644"
    content: >-
      {{ {'apiVersion': 'v1', 'kind': 'List',
          'items': 'commcheck' | clusterops.commcheck.commcheck_kubexec_rbac(service_account='commcheck')}
         | to_nice_yaml }}
'''

RETURN = r'''
_value:
  description: The ServiceAccount, Role and RoleBinding manifests.
  type: list
  elements: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.kubexec import KubexecError, rbac_manifests
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError, check_not_flag


def commcheck_kubexec_rbac(namespace, service_account="commcheck", name=None):
    try:
        # kubexec.rbac_manifests holds them to DNS-1123 labels; first: strings that are no flags, quoted short
        check_not_flag("namespace (the input)", namespace)
        check_not_flag("service_account", service_account)
        if name is not None:
            check_not_flag("name", name)
        return rbac_manifests(namespace, service_account=service_account, name=name)
    except (KubexecError, OptionError) as exc:
        raise AnsibleFilterError("commcheck_kubexec_rbac: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"commcheck_kubexec_rbac": commcheck_kubexec_rbac}
