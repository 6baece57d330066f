#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: existing_pods
short_description: Use existing Kubernetes pods (a training job's) as commcheck hosts, and leave them clean
version_added: 1.0.0
description:
  - With O(state=attached), reads the pods chosen by O(selector) and/or O(names) in O(namespace) and returns, for each,
    its node (C(spec.nodeName)), pod IP, secondary-network IPs and the container tests run in (RV(pods)). Pods that
    are not Running and Ready, are terminating, or lack the container are left out and returned with the reason
    (RV(skipped), RV(records)); named pods that do not exist are RV(missing).
  - With O(mpi_agent_dir), installs Open MPI's C(kubexec.sh) agent and its C(kubexec.conf) into every usable pod (as
    M(clusterops.commcheck.test_pods) does), so C(mpirun) in one pod reaches the others with C(kubectl exec).
  - With O(state=detached), stops in each of O(pods) the processes the collection started there (the process groups
    of its deadline wrapper C(timeout -k 3 ...), the MPI agent, anything that names O(mpi_agent_dir)) and removes the
    agent's two files; the pod's own processes are left alone. This is what deleting created test pods is for them.
  - Never creates, changes or deletes a pod. Runs C(kubectl) on the host the module runs on (normally the controller).
author:
  - commcheck developers (@clusterops)
extends_documentation_fragment:
  - clusterops.commcheck.kubectl_client
  - clusterops.commcheck.kubectl_client.mpi_agent
options:
  state:
    description: C(attached) reads the pods and installs the agent; C(detached) stops the collection's processes.
    type: str
    choices: [attached, detached]
    default: attached
  namespace:
    description: Namespace of the pods (a DNS-1123 label).
    type: str
    default: default
  selector:
    description:
      - Label selector of the pods (for example C(volcano.sh/job-name=trainingjob-m1)); never a flag.
      - With O(state=attached), O(selector) or O(names) is required; pods of both are used.
    type: str
  names:
    description: Pod names (RFC 1123), for example C(trainingjob-m1-worker-0).
    type: list
    elements: str
    default: []
  container:
    description:
      - Container to run the tests in; by default each pod's C(kubectl.kubernetes.io/default-container), else its
        first container.
    type: str
  host_name:
    description: How RV(records) name a pod's host, as the role names pod hosts (V(node) falls back to the pod).
    type: str
    choices: [node, pod]
    default: node
  pods:
    description: With O(state=detached), the pods to clean, as RV(pods) returned them (C(name), C(container)).
    type: list
    elements: dict
    default: []
  mpi_agent_dir:
    description: Directory of the MPI agent in the pods (absolute, no spaces); unset installs no agent.
    type: str
attributes:
  check_mode:
    support: full
    description: Reads the pods; installs nothing and stops nothing.
  diff_mode:
    support: none
    description: Nothing about the pods changes.
notes:
  - The pods need C(sh) and the test tools in the container; for the collective also C(kubectl) and a service account
    allowed to C(get)/C(list) pods and C(create)/C(get) C(pods/exec) (the C(clusterops.commcheck.k8s_pods) role writes one with C(commcheck_k8s_render_rbac)).
  - The controller's kubectl needs C(get)/C(list) on pods and C(create)/C(get) on C(pods/exec) in O(namespace).
seealso:
  - module: clusterops.commcheck.test_pods
'''

EXAMPLES = r'''
- name: Use the pods of a Volcano job as hosts
  clusterops.commcheck.existing_pods:
    namespace: training
    selector: volcano.sh/job-name=trainingjob-m1
    mpi_agent_dir: /tmp/commcheck-kubexec
  register: job_pods

- name: Stop what the checks left in them
  clusterops.commcheck.existing_pods:
    state: detached
    namespace: training
    pods: "{{ job_pods.pods }}"
    mpi_agent_dir: /tmp/commcheck-kubexec
'''

RETURN = r'''
pods:
  description: The usable pods (Running, Ready, with the container), as M(clusterops.commcheck.test_pods) returns pods.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Pod name.
      type: str
      returned: always
    node:
      description: Node the pod runs on (C(spec.nodeName)).
      type: str
      returned: always
    container:
      description: Container the tests run in.
      type: str
      returned: always
    address:
      description: The address tests use (the first secondary-network IP, else the pod IP).
      type: str
      returned: when known
skipped:
  description: Pods left out, each with C(name), C(node), C(phase) and C(reason).
  returned: always
  type: list
  elements: dict
missing:
  description: Names in O(names) that no pod has.
  returned: always
  type: list
  elements: str
records:
  description: One C(discover) record with verdict C(skipped) per pod left out, for M(clusterops.commcheck.record).
  returned: always
  type: list
  elements: dict
mpi_agent:
  description: The MPI agent installed (C(path), C(mca), C(config), C(installed)), as M(clusterops.commcheck.test_pods).
  returned: when O(mpi_agent_dir) is set, O(state=attached) and a pod is usable
  type: dict
stopped:
  description: With O(state=detached), by pod name, the processes stopped (C(pid), C(cmdline)).
  returned: always
  type: dict
unreachable:
  description: With O(state=detached), by pod name, why kubectl exec could not clean the pod.
  returned: always
  type: dict
'''

import json

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import checked_module

from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import k8s_existing as existing
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import kube_auth, kubexec
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.k8s_pods import client_argv
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import (
    HostTransport,
    KubectlTransport,
    check_kubectl_settings,
    commands_fail_task,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.output_capture import DOCUMENT
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.transport import require_cluster_client

STOP_TIMEOUT_S = 60
# The kubectl settings that are options of this module (a problem names the option).
OWN_OPTIONS = {"namespace": "namespace", "container": "container", "context": "context", "kubeconfig": "kubeconfig",
               "binary": "kubectl_binary"}


class Kubectl:
    def __init__(self, module):
        self.module = module
        self.host = HostTransport()
        params = module.params
        self.binary = params["kubectl_binary"] or self.host.which("kubectl")
        if not self.binary:
            module.fail_json(msg="kubectl was not found on PATH; install it or set kubectl_binary")
        # before kubectl first acts on the cluster: a readable kubeconfig, and a binary that is kubectl
        require_cluster_client(module, self.host, self.binary, "kubectl_binary", kubeconfig=params["kubeconfig"])
        self.base = client_argv(self.binary, params)

    def get_pods(self, args):
        res = self.host.run(self.base + ["get", "pods"] + args + ["-o", "json"], 60, capture=DOCUMENT)
        if res["rc"] != 0:
            stderr = rules.withhold(res["stderr"], self.module.params["kubeconfig"])
            self.module.fail_json(msg="kubectl get pods failed: %s" % (stderr.strip() or res["stdout"].strip()),
                                  rc=res["rc"], stdout=res["stdout"][-2000:], stderr=stderr[-2000:],
                                  cmd=res["cmd"])
        try:
            doc = json.loads(res["stdout"] or "{}")
        except ValueError:
            self.module.fail_json(msg="kubectl get pods returned no JSON", rc=res["rc"], stdout=res["stdout"][-2000:],
                                  stderr=res["stderr"][-2000:], cmd=res["cmd"])
        if not isinstance(doc, dict) or not isinstance(doc.get("items") or [], list) \
                or not all(isinstance(item, dict) for item in doc.get("items") or []):
            # JSON, but not what kubectl get prints (a list, null, a string...): not "no pod matches"
            self.module.fail_json(msg="kubectl get pods returned JSON that is not a list of pods", rc=res["rc"],
                                  stdout=res["stdout"][-2000:], stderr=res["stderr"][-2000:], cmd=res["cmd"])
        return existing.listed_pods(doc)

    def transport(self, pod):
        params = self.module.params
        return KubectlTransport(pod=pod["name"], namespace=params["namespace"], container=pod.get("container"),
                                context=params["context"], kubeconfig=params["kubeconfig"], binary=self.binary)


def option_errors(params):
    """Problems with the options; each names its option. None of them may reach kubectl as a flag."""
    errors = []
    checks = [lambda: check_kubectl_settings("pod", params["namespace"], params["container"], params["context"],
                                             params["kubeconfig"], params["kubectl_binary"], names=OWN_OPTIONS,
                                             which=HostTransport().which if params["kubectl_binary"] else None)]
    if params["state"] == "attached":
        checks.append(lambda: existing.check_selection(
            {"selector": params["selector"], "names": params["names"], "container": params["container"]}))
    else:
        checks.append(lambda: existing.check_pod_refs(params["pods"]))
    if params["mpi_agent_dir"] is not None:
        checks += [lambda: kubexec.check_dir(params["mpi_agent_dir"], "mpi_agent_dir"),
                   lambda: kubexec.check_kubectl(params["mpi_agent_kubectl"], "mpi_agent_kubectl")]
    for check in checks:
        try:
            check()
        except rules.OptionError as exc:
            errors.append(str(exc))
    return errors


def read_pods(module, kubectl):
    """(usable summaries, skipped [{name,node,phase,reason}], records, missing names)."""
    params = module.params
    by_selector = kubectl.get_pods(["-l", params["selector"]]) if params["selector"] else []
    by_name = kubectl.get_pods(list(params["names"]) + ["--ignore-not-found"]) if params["names"] else []
    chosen, missing = existing.chosen_pods(by_selector, by_name, params["names"])
    usable, skipped, records = [], [], []
    for pod in chosen:
        summary, problem = existing.pod_use(pod, params["container"])
        if problem:
            skipped.append({"name": summary["name"], "node": summary["node"], "phase": summary["phase"],
                            "reason": problem})
            records.append(existing.skipped_record(summary, problem, params["host_name"]))
        else:
            usable.append(summary)
    return usable, skipped, records, missing


def install_agent(module, kubectl, usable, result):
    """Install the agent into each usable pod; a pod it cannot be installed in is left out with the reason."""
    params = module.params
    try:
        config = existing.agent_config(usable, params["namespace"], kubectl=params["mpi_agent_kubectl"])
    except kubexec.KubexecError as exc:
        module.fail_json(msg="MPI agent for the existing pods: %s" % exc, **result)
    result["mpi_agent"] = {"path": kubexec.agent_path(params["mpi_agent_dir"]),
                           "mca": kubexec.mca_options(params["mpi_agent_dir"]), "config": config, "installed": []}
    if module.check_mode:
        return usable
    kept = []
    for pod in usable:
        try:
            if kubexec.install(kubectl.transport(pod), params["mpi_agent_dir"], config)[0]:
                result["mpi_agent"]["installed"].append(pod["name"])
            kept.append(pod)
        except kubexec.KubexecError as exc:
            reason = "pod %s: the MPI agent could not be installed: %s" % (pod["name"], exc)
            result["skipped"].append({"name": pod["name"], "node": pod["node"], "phase": pod["phase"],
                                      "reason": reason})
            result["records"].append(existing.skipped_record(pod, reason, params["host_name"]))
    result["changed"] = bool(result["mpi_agent"]["installed"])
    return kept


def attach(module, kubectl):
    usable, skipped, records, missing = read_pods(module, kubectl)
    result = dict(changed=False, pods=[], skipped=skipped, records=records, missing=missing, stopped={},
                  unreachable={})
    if usable and module.params["mpi_agent_dir"]:
        usable = install_agent(module, kubectl, usable, result)
    result["pods"] = usable
    if not usable:
        why = "; ".join(s["reason"] for s in result["skipped"]) or "no pod matches"
        module.fail_json(msg="no existing pod can run the checks: %s%s" % (
            why, "; not found: %s" % ", ".join(missing) if missing else ""), **result)
    module.exit_json(**result)


def detach(module, kubectl):
    """Stop the collection's processes in every pod and remove the agent's files; a pod gone is only reported."""
    params = module.params
    result = dict(changed=False, pods=[], skipped=[], records=[], missing=[], stopped={}, unreachable={})
    if module.check_mode:
        module.exit_json(**result)
    directory = params["mpi_agent_dir"] or kubexec.DEFAULT_DIR
    for pod in existing.check_pod_refs(params["pods"]):
        res = kubectl.transport(pod).run_plain(existing.stop_argv(directory), STOP_TIMEOUT_S)
        if res["rc"] != 0:
            result["unreachable"][pod["name"]] = (res["stderr"] or res["stdout"]).strip()[-500:]
            continue
        stopped, removed = existing.stopped_processes(res["stdout"])
        result["stopped"][pod["name"]] = stopped
        result["changed"] = result["changed"] or bool(stopped) or removed
    module.exit_json(**result)


ARGUMENT_SPEC = dict(
    state=dict(type="str", default="attached", choices=["attached", "detached"]),
    namespace=dict(type="str", default="default"),
    selector=dict(type="str"),
    names=dict(type="list", elements="str", default=[]),
    container=dict(type="str"),
    host_name=dict(type="str", default="node", choices=["node", "pod"]),
    pods=dict(type="list", elements="dict", default=[]),
    mpi_agent_dir=dict(type="str"),
    mpi_agent_kubectl=dict(type="str", default="kubectl"),
    **kube_auth.client_argument_spec()
)


def main():
    module = checked_module(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    errors = option_errors(params)
    if errors:
        module.fail_json(msg="invalid existing-pod parameters: " + "; ".join(errors), errors=errors)
    params["kubeconfig"], params["context"] = kube_auth.module_kubeconfig(module, params["kubeconfig"], params["context"])
    # kubectl that cannot start (missing, not executable, not a program for this machine) fails the task
    with commands_fail_task(module, "existing_pods"):
        kubectl = Kubectl(module)
        if module.params["state"] == "detached":
            detach(module, kubectl)
        attach(module, kubectl)


if __name__ == "__main__":
    main()
