#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: test_pods
short_description: Create or delete commcheck test pods on chosen Kubernetes nodes
version_added: 1.0.0
description:
  - Creates one test pod per chosen node (pinned with C(nodeName)) from an image,
    with RDMA / GPU resource requests, the C(IPC_LOCK) capability, no memory limit,
    C(hostNetwork) or Multus secondary networks, tolerations and labels that identify
    the run; waits until every pod is Ready, with a deadline.
  - Returns each pod's node, pod IP and secondary-network IPs (from the
    C(k8s.v1.cni.cncf.io/network-status) annotation).
  - With O(state=absent) deletes every pod of the run.
  - Runs C(kubectl) on the host the module runs on (normally the controller).
author:
  - commcheck developers (@clusterops)
extends_documentation_fragment:
  - clusterops.commcheck.kubectl_client
  - clusterops.commcheck.kubectl_client.mpi_agent
options:
  state:
    description: Whether the run's test pods should exist.
    type: str
    choices: [present, absent]
    default: present
  nodes:
    description:
      - Kubernetes node names (RFC 1123) to put one test pod on each. Required with O(state=present) unless
        O(node_selector) is set.
    type: list
    elements: str
    default: []
  node_selector:
    description:
      - Label selector (for example C(nvidia.com/gpu.present=true)) choosing the nodes instead of,
        or in addition to, O(nodes). Only Ready, schedulable nodes are used.
    type: str
  run_id:
    description: Identifies the run; every pod gets the label C(commcheck.clusterops.io/run=<run_id>).
    type: str
    required: true
  namespace:
    description: Namespace of the pods.
    type: str
    default: default
  name_prefix:
    description: Prefix of the pod names (C(<prefix>-<run_id>-<node>), cut to 63 characters).
    type: str
    default: commcheck
  image:
    description: Container image with the test tools (perftest, nccl-tests or hccl_test, MPI, iperf3).
    type: str
  image_pull_policy:
    description: Image pull policy of the container.
    type: str
    choices: [Always, IfNotPresent, Never]
    default: IfNotPresent
  image_pull_secrets:
    description: Names of image pull secrets.
    type: list
    elements: str
    default: []
  command:
    description:
      - Command the container runs; it must keep running (tests are started with C(kubectl exec)). The first item is
        the program, a name or an absolute path in the image (no relative path, no C(..), not starting with C(-)).
    type: list
    elements: str
    default: [sleep, infinity]
  resources:
    description:
      - >-
        Extended resources as name to quantity, set as both limits and requests, for example
        C({"rdma/rdma_shared_device_a": 1}), C({"spidernet.io/shared_cx5_gpu1": 1}) or C({"nvidia.com/hostdev": 1}).
      - No cpu or memory limits are set, on purpose; a memory limit makes RDMA memory registration fail.
    type: dict
    default: {}
  gpus:
    description: Number of GPUs to request (0 for none, at most 1024).
    type: int
    default: 0
  gpu_resource:
    description: Resource name of a GPU.
    type: str
    default: nvidia.com/gpu
  capabilities:
    description: Linux capabilities added to the container. C(IPC_LOCK) lets RDMA pin memory.
    type: list
    elements: str
    default: [IPC_LOCK]
  privileged:
    description: Run the container privileged.
    type: bool
    default: false
  host_network:
    description: Use the node's network namespace (O(networks) is ignored then).
    type: bool
    default: false
  networks:
    description: Multus NetworkAttachmentDefinitions (C([namespace/]name[@interface])) for the
      C(k8s.v1.cni.cncf.io/networks) annotation.
    type: list
    elements: str
    default: []
  shm_size:
    description: Size of a memory-backed C(/dev/shm) (NCCL needs more than the default 64Mi), for example C(8Gi).
    type: str
  tolerations:
    description: Pod tolerations, in Kubernetes' own form.
    type: list
    elements: dict
    default: []
  labels:
    description: Extra labels on every pod.
    type: dict
    default: {}
  annotations:
    description: Extra annotations on every pod.
    type: dict
    default: {}
  service_account:
    description: Service account of the pods.
    type: str
  active_deadline_seconds:
    description:
      - The pods end themselves after this many seconds (C(activeDeadlineSeconds)), so a run that is
        interrupted before its cleanup leaves nothing behind for long. 0 disables it; at most 2592000 (30 days).
    type: int
    default: 7200
  wait_timeout:
    description: Seconds to wait for every pod to be Ready (or deleted), 1 to 86400.
    type: int
    default: 300
  delete_on_failure:
    description: Delete the run's pods when they do not become Ready in time.
    type: bool
    default: true
  mpi_agent_dir:
    description:
      - When set, installs into every test pod, in this directory, Open MPI's remote agent C(kubexec.sh)
        (a constant script that starts a command in another test pod with C(kubectl exec), as mpi-operator does)
        and its C(kubexec.conf) (which pod each address and name stands for), so C(mpirun) started in any pod
        reaches the others with C(--mca plm_rsh_agent <dir>/kubexec.sh) (see RV(mpi_agent.mca)); give the same
        directory to M(clusterops.commcheck.collective) as its O(clusterops.commcheck.collective#module:mpi_agent_dir),
        which adds those options itself (they are never taken from its C(mca)).
      - The pods need C(kubectl) (O(mpi_agent_kubectl)) and a service account allowed to exec into pods;
        the C(clusterops.commcheck.k8s_pods) role writes one with C(commcheck_k8s_render_rbac).
    type: str
attributes:
  check_mode:
    support: full
    description: Reports which pods would be created or deleted; changes nothing.
  diff_mode:
    support: full
    description: Shows the pod manifests before and after.
notes:
  - Pods are immutable; a pod whose node, image, command, resources or networks differ from
    what is asked is deleted and created again.
  - A refused pod's failure names the reason from its status and its events (C(kubectl get events)), and a fix.
'''

EXAMPLES = r'''
- name: Create test pods on two GPU nodes with a shared RDMA device and a Multus network
  clusterops.commcheck.test_pods:
    run_id: "{{ commcheck_run_id }}"
    namespace: commcheck
    nodes: [gpu-node-01, gpu-node-02]
    image: ghcr.io/example/commcheck-tools:latest
    resources:
      rdma/rdma_shared_device_a: 1
    gpus: 8
    networks: [default/roce-net]
    shm_size: 8Gi
  register: pods

- name: Test pods from which mpirun reaches the others with kubectl exec
  clusterops.commcheck.test_pods:
    run_id: "{{ commcheck_run_id }}"
    namespace: commcheck
    nodes: [gpu-node-01, gpu-node-02]
    image: ghcr.io/example/commcheck-tools:latest
    service_account: commcheck
    mpi_agent_dir: /tmp/commcheck-kubexec
  register: pods

- name: Delete them again
  clusterops.commcheck.test_pods:
    run_id: "{{ commcheck_run_id }}"
    namespace: commcheck
    state: absent
'''

RETURN = r'''
pods:
  description: One entry per test pod.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Pod name.
      type: str
      returned: always
    namespace:
      description: Namespace.
      type: str
      returned: always
    node:
      description: Node the pod runs on.
      type: str
      returned: always
    pod_ip:
      description: The pod's primary IP.
      type: str
      returned: when known
    host_ip:
      description: The node's IP.
      type: str
      returned: when known
    phase:
      description: Pod phase.
      type: str
      returned: when known
    ready:
      description: Whether the pod is Ready.
      type: bool
      returned: always
    networks:
      description: Secondary networks from the network-status annotation (name, interface, ips, default, mac).
      type: list
      elements: dict
      returned: always
    network_ips:
      description: IPs on secondary networks.
      type: list
      elements: str
      returned: always
    address:
      description: The address tests should use (the first secondary IP, else the pod IP).
      type: str
      returned: when known
manifests:
  description: The pod manifests asked for.
  returned: always
  type: list
  elements: dict
created:
  description: Names of pods created (or that would be, in check mode).
  returned: always
  type: list
  elements: str
deleted:
  description: Names of pods deleted (or that would be, in check mode).
  returned: always
  type: list
  elements: str
mpi_agent:
  description: The MPI remote agent installed into the pods.
  returned: when O(mpi_agent_dir) is set and O(state=present)
  type: dict
  contains:
    path:
      description: Path of C(kubexec.sh) inside the pods.
      type: str
      returned: always
    mca:
      description:
        - The Open MPI MCA options that C(mpirun) in a pod needs (C(plm_rsh_agent) and C(plm_rsh_no_tree_spawn)), for
          information; M(clusterops.commcheck.collective) adds them itself from its O(clusterops.commcheck.collective#module:mpi_agent_dir).
      type: dict
      returned: always
    config:
      description: The C(kubexec.conf) text (C(host ADDRESS POD CONTAINER) lines).
      type: str
      returned: always
    installed:
      description: Pods whose agent files were written (not those already up to date).
      type: list
      elements: str
      returned: always
problems:
  description: Why each pod that did not become Ready did not, as one line (reason, message, events, fix), by pod name.
  returned: when the pods do not become Ready (the module fails)
  type: dict
refusals:
  description:
    - By pod name, RV(problems) as data. C(reason) is the kubelet's verdict (C(OutOfrdma/hca_shared_devices_a),
      C(UnexpectedAdmissionError)), the scheduler's (C(Unschedulable)), the container's (C(ErrImagePull)) or the
      latest Warning event's (C(FailedCreatePodSandBox)); also C(message), C(fix), C(final) (waiting does not cure it)
      and C(events) (latest Warning events, with C(reason), C(message), C(count), C(last_seen), C(component)).
  returned: when the pods do not become Ready (the module fails)
  type: dict
'''

import json
import os
import tempfile
import time

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import checked_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import kube_auth, kubexec
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.k8s_pods import (
    CONTAINER_NAME,
    RUN_LABEL,
    client_argv,
    client_option_errors,
    plan_pods,
    pod_summary,
    selectable_nodes,
    validate_params,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.k8s_refusals import (
    events_argv,
    is_final,
    pod_refusal,
    refusal_text,
    waiting_refusals,
    warning_events,
    with_events,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import (
    HostTransport, KubectlTransport, commands_fail_task)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.output_capture import DOCUMENT
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.transport import require_cluster_client

POLL_S = 2


class Kubectl:
    def __init__(self, module):
        self.module = module
        self.transport = HostTransport()
        binary = module.params["kubectl_binary"] or self.transport.which("kubectl")
        if not binary:
            module.fail_json(msg="kubectl was not found on PATH; install it or set kubectl_binary")
        # before kubectl first acts on the cluster: a readable kubeconfig, and a binary that is kubectl
        require_cluster_client(module, self.transport, binary, "kubectl_binary", kubeconfig=module.params["kubeconfig"])
        self.base = client_argv(binary, module.params)

    def run(self, args, timeout=60, check=True):
        # kubectl's answers are documents (get -o json): read whole, up to the bound for documents
        res = self.transport.run(self.base + args, timeout, capture=DOCUMENT)
        if check and res["rc"] != 0:
            stderr = rules.withhold(res["stderr"], self.module.params["kubeconfig"])
            self.module.fail_json(msg="kubectl %s failed: %s" % (args[0], stderr.strip() or res["stdout"].strip()),
                                  rc=res["rc"], stdout=res["stdout"], stderr=stderr, cmd=res["cmd"])
        return res

    def get_json(self, args):
        res = self.run(["get"] + args + ["-o", "json"])
        try:
            doc = json.loads(res["stdout"] or "{}")
        except ValueError:
            self.module.fail_json(msg="kubectl get returned no JSON", stdout=res["stdout"], cmd=res["cmd"])
        if not isinstance(doc, dict) or not isinstance(doc.get("items") or [], list) \
                or not all(isinstance(item, dict) for item in doc.get("items") or []):
            # JSON, but not the object kubectl get prints (a list, null, a string...): a failure, not a traceback
            self.module.fail_json(msg="kubectl get returned JSON that is not a list of Kubernetes objects",
                                  rc=res["rc"], stdout=res["stdout"][-2000:], stderr=res["stderr"], cmd=res["cmd"])
        return doc

    def run_pods(self, run_id):
        return self.get_json(["pods", "-l", "%s=%s" % (RUN_LABEL, run_id)]).get("items") or []

    def delete(self, names, timeout):
        if names:
            self.run(["delete", "pod", "--ignore-not-found", "--wait=true", "--timeout=%ds" % timeout] + list(names),
                     timeout=timeout + 30)

    def pod_events(self, name):
        """The pod's Warning events, latest first; [] when kubectl cannot list them (RBAC, an old server)."""
        try:
            argv = events_argv(name)
        except rules.OptionError:
            return []
        res = self.run(argv, timeout=30, check=False)
        return warning_events(res["stdout"], name) if res["rc"] == 0 else []

    def apply(self, manifests, timeout):
        fd, path = tempfile.mkstemp(prefix="commcheck-pods-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as handle:
                json.dump({"apiVersion": "v1", "kind": "List", "items": manifests}, handle)
            self.run(["apply", "-f", path], timeout=timeout)
        finally:
            os.unlink(path)


def wait_ready(kubectl, run_id, names, timeout):
    """Poll until every named pod is Ready, one is refused for good, or the deadline; return (summaries, refusals):
    name to refusal (k8s_refusals) of each pod not Ready, with its Warning events and a fix."""
    deadline = time.monotonic() + timeout
    while True:
        pods = {p["metadata"]["name"]: p for p in kubectl.run_pods(run_id)}
        ready = [n for n in names if n in pods and pod_summary(pods[n])["ready"]]
        waited = time.monotonic() >= deadline
        if len(ready) == len(names) or waited or is_final({n: pod_refusal(pods[n]) for n in names if n in pods}):
            summaries = [pod_summary(pods[n]) for n in names if n in pods]
            return summaries, explain(kubectl, pods, waiting_refusals(pods, names, ready, timeout, waited))
        time.sleep(POLL_S)


def explain(kubectl, pods, refusals):
    """Each refusal with the pod's events (for pods that exist) and a fix that names its node."""
    explained = {}
    for name, refusal in refusals.items():
        pod = pods.get(name)
        node = (pod.get("spec") or {}).get("nodeName") if pod else None
        explained[name] = with_events(refusal, kubectl.pod_events(name) if pod else [], node)
    return explained


def mpi_agent(module, kubectl, pods):
    """The agent's files for these pods; installed into each pod unless in check mode."""
    params = module.params
    try:
        config = kubexec.agent_config(pods, params["namespace"], container=CONTAINER_NAME,
                                      kubectl=params["mpi_agent_kubectl"])
        info = {"path": kubexec.agent_path(params["mpi_agent_dir"]),
                "mca": kubexec.mca_options(params["mpi_agent_dir"]), "config": config, "installed": []}
        if module.check_mode:
            return info
        for pod in pods:
            transport = KubectlTransport(pod=pod["name"], namespace=params["namespace"], container=CONTAINER_NAME,
                                         context=params["context"], kubeconfig=params["kubeconfig"],
                                         binary=kubectl.base[0])
            changed = kubexec.install(transport, params["mpi_agent_dir"], config)[0]
            if changed:
                info["installed"].append(pod["name"])
    except kubexec.KubexecError as exc:
        raise AgentError(str(exc))
    return info


class AgentError(Exception):
    """Installing the MPI agent into the pods failed."""


ARGUMENT_SPEC = dict(
    state=dict(type="str", default="present", choices=["present", "absent"]),
    nodes=dict(type="list", elements="str", default=[]),
    node_selector=dict(type="str"),
    run_id=dict(type="str", required=True),
    namespace=dict(type="str", default="default"),
    name_prefix=dict(type="str", default="commcheck"),
    image=dict(type="str"),
    image_pull_policy=dict(type="str", default="IfNotPresent", choices=["Always", "IfNotPresent", "Never"]),
    image_pull_secrets=dict(type="list", elements="str", default=[], no_log=False),
    command=dict(type="list", elements="str", default=["sleep", "infinity"]),
    resources=dict(type="dict", default={}),
    gpus=dict(type="int", default=0),
    gpu_resource=dict(type="str", default="nvidia.com/gpu"),
    capabilities=dict(type="list", elements="str", default=["IPC_LOCK"]),
    privileged=dict(type="bool", default=False),
    host_network=dict(type="bool", default=False),
    networks=dict(type="list", elements="str", default=[]),
    shm_size=dict(type="str"),
    tolerations=dict(type="list", elements="dict", default=[]),
    labels=dict(type="dict", default={}),
    annotations=dict(type="dict", default={}),
    service_account=dict(type="str"),
    active_deadline_seconds=dict(type="int", default=7200),
    wait_timeout=dict(type="int", default=300),
    delete_on_failure=dict(type="bool", default=True),
    mpi_agent_dir=dict(type="str"),
    mpi_agent_kubectl=dict(type="str", default="kubectl"),
    **kube_auth.client_argument_spec()
)


def add_selected_nodes(module, kubectl):
    """The Ready, schedulable nodes of node_selector join params['nodes']."""
    params = module.params
    selected = selectable_nodes(kubectl.get_json(["nodes", "-l", params["node_selector"]]))
    if not selected and not params["nodes"]:
        module.fail_json(msg="no Ready, schedulable node matches node_selector %s"
                         % rules.show(params["node_selector"]))
    params["nodes"] = list(params["nodes"]) + [n for n in selected if n not in params["nodes"]]


def remove_run(module, kubectl, existing, result):
    """state=absent: every pod of the run goes."""
    result["deleted"] = sorted(existing)
    result["changed"] = bool(existing)
    result["diff"] = dict(before={"pods": sorted(existing)}, after={"pods": []})
    if existing and not module.check_mode:
        kubectl.delete(sorted(existing), module.params["wait_timeout"])
    module.exit_json(**result)


def report_check_mode(module, kubectl, existing, plan, result):
    """Check mode: the pods that would stay, and the agent they would get."""
    result["pods"] = [pod_summary(existing[n]) for n in plan["names"] if n in existing and n not in plan["replace"]]
    if module.params["mpi_agent_dir"] and result["pods"]:
        try:
            result["mpi_agent"] = mpi_agent(module, kubectl, result["pods"])
        except AgentError as exc:
            module.fail_json(msg=str(exc), **result)
    module.exit_json(**result)


def fail_and_clean_up(module, kubectl, names, msg, result, **extra):
    if module.params["delete_on_failure"]:
        kubectl.delete(names, module.params["wait_timeout"])
    module.fail_json(msg=msg, **dict(result, **extra))


def start_pods(module, kubectl, plan, result):
    """Replace, create and wait for the pods; returns their summaries."""
    params = module.params
    names = plan["names"]
    kubectl.delete(result["deleted"], params["wait_timeout"])
    if plan["create"]:
        kubectl.apply(plan["create"], timeout=120)
    pods, refusals = wait_ready(kubectl, params["run_id"], names, params["wait_timeout"])
    result["pods"] = pods
    if refusals:
        problems = {n: refusal_text(r) for n, r in refusals.items()}
        fail_and_clean_up(module, kubectl, names, "test pods did not become Ready: " + "; ".join(
            "%s: %s" % (n, p) for n, p in sorted(problems.items())), result, problems=problems, refusals=refusals)
    return pods


def install_agent(module, kubectl, pods, names, result):
    try:
        result["mpi_agent"] = mpi_agent(module, kubectl, pods)
    except AgentError as exc:
        fail_and_clean_up(module, kubectl, names, str(exc), result)
    result["changed"] = result["changed"] or bool(result["mpi_agent"]["installed"])


def main():
    module = checked_module(
        argument_spec=ARGUMENT_SPEC,
        required_if=[("state", "present", ("image",))],
        supports_check_mode=True,
    )
    params = module.params
    errors = validate_params(params) + client_option_errors(params, HostTransport().which)
    if errors:
        module.fail_json(msg="invalid test pod parameters: " + "; ".join(errors), errors=errors)
    params["kubeconfig"], params["context"] = kube_auth.module_kubeconfig(module, params["kubeconfig"], params["context"])

    # kubectl that cannot start (missing, not executable, not a program for this machine) fails the task
    with commands_fail_task(module, "test_pods"):
        manage(module)


def manage(module):
    params = module.params
    kubectl = Kubectl(module)
    if params["node_selector"] and params["state"] == "present":
        add_selected_nodes(module, kubectl)
    existing = {p["metadata"]["name"]: p for p in kubectl.run_pods(params["run_id"])}
    result = dict(changed=False, pods=[], manifests=[], created=[], deleted=[])
    if params["state"] == "absent":
        remove_run(module, kubectl, existing, result)
    plan = plan_pods(params, existing, result)
    if module.check_mode:
        report_check_mode(module, kubectl, existing, plan, result)
    pods = start_pods(module, kubectl, plan, result)
    if params["mpi_agent_dir"]:
        install_agent(module, kubectl, pods, plan["names"], result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
