# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the k8s_pods role decides on the controller, from its role variables (pure, no I/O).

``values`` is a mapping of the role's variables (``commcheck_k8s_*``) with their types (numbers as ``int``,
flags as ``bool``). The functions give this run's pod settings (``pods_state``), the arguments of each call of
the test_pods and existing_pods modules (an empty kubeconfig, context or kubectl path is left out: the
module's default), the inventory entry of each pod host (``pod_hosts``) and the manifests asked for.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.kubexec import rbac_manifests
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.k8s_jobs import (
    JOB_KINDS,
    launcher_command,
    mpijob_manifest,
    volcano_job_manifest,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.k8s_pods import command_errors, validate_params
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import check_not_flag, show

PREFIX = "commcheck_k8s_"
# kubectl connection settings: module argument, role variable (left out when empty)
CONNECTION = (("kubeconfig", "kubeconfig"), ("context", "context"), ("kubectl_binary", "kubectl_binary"))
# test_pods state=present: module argument, role variable, left out when empty
CREATE_ARGS = (
    ("name_prefix", "name_prefix", False), ("image", "image", False), ("image_pull_policy", "image_pull_policy", False),
    ("image_pull_secrets", "image_pull_secrets", False), ("command", "command", False),
    ("resources", "resources", False), ("gpus", "gpus", False), ("gpu_resource", "gpu_resource", False),
    ("capabilities", "capabilities", False), ("privileged", "privileged", False),
    ("host_network", "host_network", False), ("networks", "networks", False), ("shm_size", "shm_size", True),
    ("tolerations", "tolerations", False), ("labels", "labels", False), ("annotations", "annotations", False),
    ("service_account", "service_account", True), ("active_deadline_seconds", "active_deadline_seconds", False),
    ("wait_timeout", "wait_timeout", False), ("mpi_agent_kubectl", "mpi_kubectl", False),
)
# the pod parameters a job manifest takes: key, role variable
JOB_PARAMS = ("namespace", "name_prefix", "image", "image_pull_policy", "resources", "gpus", "gpu_resource",
              "capabilities", "networks", "host_network", "tolerations")
RUN_LABEL_HINT = "commcheck.clusterops.io/run"
# the arguments of the pods_plan action (its doc-only module validates the same)
PODS_PLAN_SPEC = dict(
    step=dict(type="str", required=True, choices=["state", "render", "job", "create", "attach", "hosts", "cleanup"]),
    result=dict(type="dict"),
)


def var(values, name):
    return values.get(PREFIX + name)


def connection_args(settings):
    """The kubectl connection arguments of a module call from ``settings`` (kubeconfig, context, kubectl_binary):
    an empty one is left out."""
    return dict((arg, settings.get(key)) for arg, key in CONNECTION if settings.get(key))


def node_list(nodes):
    """The nodes as a list: an AWX survey sends comma-separated text ('' for none)."""
    if isinstance(nodes, str):
        return [node.strip() for node in nodes.split(",") if node.strip()]
    return nodes


def pods_state(values, new_run_id):
    """This run's pod settings, kept on localhost for the cleanup: the run id (``new_run_id()`` when
    commcheck_k8s_run_id is empty), the namespace, the kubectl settings and what the cleanup must do."""
    existing = var(values, "existing_pods") or {}
    return {"run_id": var(values, "run_id") or new_run_id(),
            "namespace": existing.get("namespace") or var(values, "namespace"),
            "kubeconfig": var(values, "kubeconfig"), "context": var(values, "context"),
            "kubectl_binary": var(values, "kubectl_binary"), "wait_timeout": var(values, "wait_timeout"),
            "keep": var(values, "keep_pods"), "created": False, "existing": len(existing) > 0,
            "mpi_agent_dir": var(values, "mpi_agent_dir"), "attached": []}


def agent_dir(values):
    """Where the MPI agent goes in the pods, or None when it is not installed."""
    return var(values, "mpi_agent_dir") if var(values, "mpi_agent") else None


def _without_none(args):
    return dict((key, value) for key, value in args.items() if value is not None)


def create_args(values, state, nodes):
    """The arguments of test_pods state=present for this run's pods."""
    args = {"state": "present", "run_id": state["run_id"], "namespace": var(values, "namespace"), "nodes": nodes,
            "node_selector": var(values, "node_selector") or None, "mpi_agent_dir": agent_dir(values)}
    for arg, name, omit_empty in CREATE_ARGS:
        value = var(values, name)
        args[arg] = (value or None) if omit_empty else value
    args.update(connection_args(values_settings(values)))
    return _without_none(args)


def resolve_args(values, state, nodes):
    """The arguments of test_pods state=present in check mode: the nodes its node selector picks."""
    args = {"state": "present", "run_id": state["run_id"], "namespace": var(values, "namespace"), "nodes": nodes,
            "node_selector": var(values, "node_selector"), "image": var(values, "image")}
    args.update(connection_args(values_settings(values)))
    return args


def job_args(values, manifest):
    """The arguments of k8s_job for the job manifest of this run (commcheck_k8s_run_job): the collective options
    it was built from, the pods' wait as the job's scheduling bound, and the whole job's bound."""
    args = {"manifest": manifest, "collective": dict(var(values, "job_collective") or {}),
            "timeout": int(var(values, "job_timeout")), "schedule_timeout": int(var(values, "wait_timeout"))}
    args.update(connection_args(values_settings(values)))
    return args


def attach_args(values, state):
    """The arguments of existing_pods state=attached."""
    existing = var(values, "existing_pods") or {}
    args = {"state": "attached", "namespace": state["namespace"], "selector": existing.get("selector") or None,
            "names": existing.get("names") or [], "container": existing.get("container") or None,
            "host_name": var(values, "host_name"), "mpi_agent_dir": agent_dir(values),
            "mpi_agent_kubectl": var(values, "mpi_kubectl")}
    args.update(connection_args(values_settings(values)))
    return _without_none(args)


def values_settings(values):
    return {"kubeconfig": var(values, "kubeconfig"), "context": var(values, "context"),
            "kubectl_binary": var(values, "kubectl_binary")}


def default_state(values):
    """The pod settings of a cleanup that finds none kept on localhost: from the role variables."""
    return {"run_id": var(values, "run_id"), "namespace": var(values, "namespace"),
            "wait_timeout": var(values, "wait_timeout"), "kubeconfig": var(values, "kubeconfig"),
            "context": var(values, "context"), "kubectl_binary": var(values, "kubectl_binary"),
            "keep": var(values, "keep_pods"), "created": True}


def delete_args(state):
    """The arguments of test_pods state=absent for the pods of the run in ``state``, or None when there is
    nothing to delete (no pod created, pods kept, no run id)."""
    if not state.get("created") or state.get("keep") or not state.get("run_id"):
        return None
    args = {"state": "absent", "run_id": state["run_id"], "namespace": state["namespace"],
            "wait_timeout": int(state["wait_timeout"])}
    args.update(connection_args(state))
    return args


def detach_args(state):
    """The arguments of existing_pods state=detached for the existing pods in ``state``, or None when none."""
    if not state.get("attached"):
        return None
    args = {"state": "detached", "namespace": state["namespace"], "pods": state["attached"],
            "mpi_agent_dir": state["mpi_agent_dir"]}
    args.update(connection_args(state))
    return args


def host_name(pod, nodes, naming):
    """A pod host's inventory name: its node's (commcheck_k8s_host_name node), unless that node carries several
    of the pods (existing pods): then the pod's."""
    return pod["node"] if naming == "node" and nodes.count(pod["node"]) == 1 else pod["name"]


def pod_hosts(values, pods, namespace, agent, python):
    """The add_host entry of each pod: a host reached with kubectl exec, in group commcheck_k8s_group, with the
    pod's addresses; commcheck_k8s_pod_vars, then commcheck_k8s_node_vars of its node, on top."""
    nodes = [pod["node"] for pod in pods]
    settings = values_settings(values)
    out = []
    for pod in pods:
        host = {"name": host_name(pod, nodes, var(values, "host_name")), "groups": [var(values, "group")],
                "ansible_connection": "local", "ansible_python_interpreter": python,
                "commcheck_transport": "kubectl",
                "commcheck_kubectl": {"namespace": namespace, "pod": pod["name"],
                                      "container": pod.get("container") or "commcheck",
                                      "context": settings["context"] or None,
                                      "kubeconfig": settings["kubeconfig"] or None,
                                      "binary": settings["kubectl_binary"] or None},
                "commcheck_address": pod.get("address"), "commcheck_tcp_address": pod.get("address"),
                "commcheck_k8s_node": pod["node"], "commcheck_k8s_pod": pod["name"],
                "commcheck_k8s_pod_ip": pod.get("pod_ip"), "commcheck_k8s_network_ips": pod.get("network_ips"),
                "commcheck_mpi_mca": var(values, "mpi_mca"),
                "commcheck_mpi_agent_dir": var(values, "mpi_agent_dir") if agent else None}
        host.update(var(values, "pod_vars") or {})
        host.update((var(values, "node_vars") or {}).get(pod["node"]) or {})
        out.append(host)
    return out


def job_params(values, run_id):
    """The pod parameters of a job manifest."""
    params = dict((key, var(values, key)) for key in JOB_PARAMS)
    params.update(run_id=run_id, shm_size=var(values, "shm_size") or None)
    return params


def job_command(nodes, kind="mpijob", collective=None):
    """The launcher command of a job over ``nodes`` (a list of node names); ValueError when it cannot be."""
    if not isinstance(nodes, (list, tuple)):
        raise ValueError("nodes must be a list of node names")
    return launcher_command(kind, list(nodes), collective or {})


def checked_job_manifest(params, nodes, command, kind="mpijob"):
    """The MPIJob (``kind`` mpijob) or Volcano Job of ``command`` over ``nodes`` with the pod parameters
    ``params``; ValueError naming every problem of them."""
    if not isinstance(params or {}, dict):
        raise ValueError("the pod parameters must be a dict")
    if not isinstance(nodes, (list, tuple)):
        raise ValueError("nodes must be a list of node names")
    params = dict(params or {}, nodes=list(nodes or []), state="present")
    errors = validate_params(params)
    if not command or not isinstance(command, (list, tuple)) or not all(isinstance(c, str) for c in command):
        errors.append("command must be a non-empty list of strings")
    else:
        errors += command_errors(command)
    if kind not in JOB_KINDS:
        errors.append("kind must be mpijob or volcano, got %s" % show(kind))
    if errors:
        raise ValueError("; ".join(errors))
    render = mpijob_manifest if kind == "mpijob" else volcano_job_manifest
    return render(params, list(nodes), list(command))


def job_manifest(values, run_id, nodes):
    """The job manifest commcheck_k8s_render_job asks for: the collective check (commcheck_k8s_job_collective)
    over ``nodes``."""
    kind = var(values, "render_job")
    return checked_job_manifest(job_params(values, run_id), nodes,
                                job_command(nodes, kind, var(values, "job_collective")), kind)


def rbac_items(namespace, service_account="commcheck", name=None):
    """The ServiceAccount, Role and RoleBinding that let the pods ``kubectl exec`` into each other."""
    # kubexec.rbac_manifests holds them to DNS-1123 labels; first: strings that are no flags, quoted short
    check_not_flag("namespace", namespace)
    check_not_flag("service_account", service_account)
    if name is not None:
        check_not_flag("name", name)
    return rbac_manifests(namespace, service_account=service_account, name=name)


def rbac_list(namespace, service_account):
    """The RBAC for MPI in the pods (commcheck_k8s_service_account, else commcheck) as one List."""
    return {"apiVersion": "v1", "kind": "List", "items": rbac_items(namespace, service_account or "commcheck")}


def pods_line(pods, with_address=True):
    """'name on node on address' (without the address: 'name on node') of every pod, '; '-separated."""
    return "; ".join(" on ".join([pod["name"], pod["node"]] + ([pod["address"]] if with_address else []))
                     for pod in pods)


def pods_summary(found, namespace, existing):
    """What the pods of a test_pods (``existing`` False) or existing_pods result are."""
    pods = found.get("pods") or []
    if not existing:
        return "%d test pod(s) Ready in namespace %s: %s" % (len(pods), namespace, pods_line(pods))
    return ("%d existing pod(s) in namespace %s: %s. Left out: %s. Not found: %s."
            % (len(pods), namespace, pods_line(pods, with_address=False),
               "; ".join(item["reason"] for item in found.get("skipped") or []) or "none",
               ", ".join(found.get("missing") or []) or "none"))


def delete_hint(values, state):
    """How to delete the pods of an interrupted run."""
    return ("Test pods of run %s: they end themselves after %ss; after an interrupted run delete them with "
            "kubectl -n %s delete pod -l %s=%s" % (state["run_id"], var(values, "active_deadline_seconds"),
                                                   var(values, "namespace"), RUN_LABEL_HINT, state["run_id"]))


def existing_hint(state):
    """What an interrupted run leaves in existing pods."""
    return ("Existing pods, run %s: nothing is created or deleted. Each command in them runs under timeout(1) and "
            "is stopped when its module is interrupted; the check play stops what is left and removes the MPI "
            "agent's files." % state["run_id"])
