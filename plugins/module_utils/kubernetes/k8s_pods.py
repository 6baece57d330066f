# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test pods for Kubernetes nodes: manifests, names, readiness and addresses (pure)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import kubexec
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.k8s_refusals import pod_refusal

RUN_LABEL = "commcheck.clusterops.io/run"
NODE_LABEL = "commcheck.clusterops.io/node"
APP_LABEL = "app.kubernetes.io/name"
CONTAINER_NAME = "commcheck"
NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
NETWORK_STATUS_ANNOTATIONS = ("k8s.v1.cni.cncf.io/network-status", "k8s.v1.cni.cncf.io/networks-status")

_RESOURCE_NAME = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$")
_LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_IMAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,511}$")
_CAPABILITY = re.compile(r"^[A-Z_]{2,32}$")
_NETWORK = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?(@[A-Za-z0-9_.-]{1,15})?$")
# A label selector as kubectl -l takes it: key=value, key==value, key!=value, key in (a,b), key notin (a,b),
# key, !key, comma separated; keys and values as Kubernetes labels have them.
MAX_SELECTOR = 1024
_KEY = r"(?:[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_VALUE = r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)"
_TERM = (r"\s*(?:!\s*{k}|{k}\s*(?:==|!=|=)\s*{v}?|{k}\s+(?:in|notin)\s+\(\s*{v}?(?:\s*,\s*{v}?)*\s*\)|{k})\s*"
         .format(k=_KEY, v=_VALUE))
_SELECTOR = re.compile(r"^{t}(?:,{t})*$".format(t=_TERM))
TOLERATION_KEYS = ("key", "operator", "value", "effect", "tolerationSeconds")
TOLERATION_OPERATORS = ("Exists", "Equal")
TOLERATION_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
MAX_GPUS = 1024
MAX_DEADLINE_S = 30 * 24 * 3600
MAX_WAIT_S = 24 * 3600


def client_argv(binary, params):
    """The kubectl prefix every call of a pod module starts with: the binary, the module's kubeconfig and
    context when set, and its namespace (``params``: the module's, validated before)."""
    argv = [binary]
    if params.get("kubeconfig"):
        argv += ["--kubeconfig", params["kubeconfig"]]
    if params.get("context"):
        argv += ["--context", params["context"]]
    return argv + ["-n", params["namespace"]]


def _problem(check, *args):
    """The message of an option check that fails, or None."""
    try:
        check(*args)
    except rules.OptionError as exc:
        return str(exc)
    return None


def client_option_errors(params, which=None):
    """Problems with the options that reach the pod modules' kubectl command lines, each naming its option: the
    kubectl binary (its file name kubectl's; with ``which``, a lookup on this host, it must exist), the kubeconfig
    (an absolute path, never quoted), the context, and the MPI agent's kubectl and directory."""
    checks = [(rules.check_program, "mpi_agent_kubectl", params["mpi_agent_kubectl"], "kubectl", None, False)]
    if params["kubectl_binary"] is not None:
        checks.append((rules.check_program, "kubectl_binary", params["kubectl_binary"], "kubectl", which))
    if params["kubeconfig"] is not None:
        checks.append((rules.check_config_path, "kubeconfig", params["kubeconfig"], True))
    if params["context"] is not None:
        checks.append((rules.check_name, "context", params["context"], "k8s_context"))
    if params["mpi_agent_dir"] is not None:
        checks.append((rules.check_path, "mpi_agent_dir", params["mpi_agent_dir"]))
    problems = [_problem(*check) for check in checks]
    if params["mpi_agent_dir"] is not None and not any(problems):
        problems.append(_problem(kubexec.check_dir, params["mpi_agent_dir"], "mpi_agent_dir"))
    return [p for p in problems if p]


def pod_name(prefix, run_id, node):
    """A DNS-1123 pod name for (prefix, run, node), at most 63 characters."""
    raw = "-".join(p for p in (prefix, run_id, node) if p)
    name = re.sub(r"[^a-z0-9-]+", "-", raw.lower()).strip("-")
    name = re.sub(r"-+", "-", name)
    if len(name) > 63:
        # Keep it unique when long node names are cut: add a short stable hash.
        digest = "%08x" % (_fnv1a(raw) & 0xFFFFFFFF)
        name = name[:54].rstrip("-") + "-" + digest
    return name


def _fnv1a(text):
    value = 0x811C9DC5
    for byte in text.encode("utf-8"):
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def _check(errors, check, *args):
    """Run one option_rules check; collect its message instead of raising."""
    try:
        return check(*args)
    except rules.OptionError as exc:
        errors.append(str(exc))
        return None


def is_label_selector(value):
    """True for a label selector kubectl -l reads (length checked first: the pattern is not cheap)."""
    return isinstance(value, str) and len(value) <= MAX_SELECTOR and bool(_SELECTOR.match(value))


def _match(errors, option, value, pattern, what):
    """A value that is not a flag and matches ``pattern``."""
    if _check(errors, rules.check_not_flag, option, value) is None:
        return
    if not pattern.match(value):
        errors.append("%s %s is not %s" % (option, rules.show(value), what))


def _selector(errors, option, value):
    if _check(errors, rules.check_not_flag, option, value) is None:
        return
    if not is_label_selector(value):
        errors.append("%s %s is not a label selector (key=value, key!=value, key, !key, key in (a,b), "
                      "comma-separated, at most %d characters)" % (option, rules.show(value), MAX_SELECTOR))


def _dns_label(errors, option, value):
    _check(errors, rules.check_name, option, value, "k8s_label")


def _check_tolerations(errors, tolerations):
    for index, item in enumerate(tolerations or []):
        where = "tolerations[%d]" % index
        if not isinstance(item, dict):
            errors.append("%s must be a dict, got %s" % (where, rules.show(item)))
            continue
        unknown = sorted(set(item) - set(TOLERATION_KEYS), key=str)
        if unknown:
            errors.append("%s has unknown keys %s (known: %s)" % (where, rules.show(unknown),
                                                                  ", ".join(TOLERATION_KEYS)))
        if item.get("key") not in (None, ""):
            _match(errors, where + ".key", item["key"], _LABEL_KEY, "a label key")
        if item.get("value") not in (None, ""):
            _check(errors, rules.check_name, where + ".value", item["value"], "k8s_label_value")
        if item.get("operator") not in (None,) + TOLERATION_OPERATORS:
            errors.append("%s.operator %s must be one of %s" % (where, rules.show(item["operator"]),
                                                                ", ".join(TOLERATION_OPERATORS)))
        if item.get("effect") not in (None, "") + TOLERATION_EFFECTS:
            errors.append("%s.effect %s must be one of %s" % (where, rules.show(item["effect"]),
                                                              ", ".join(TOLERATION_EFFECTS)))
        if item.get("tolerationSeconds") is not None:
            _check(errors, rules.check_int, where + ".tolerationSeconds", item["tolerationSeconds"], 0,
                   MAX_DEADLINE_S)


def _check_numbers(errors, params):
    for name, low, high in (("gpus", 0, MAX_GPUS), ("active_deadline_seconds", 0, MAX_DEADLINE_S),
                            ("wait_timeout", 1, MAX_WAIT_S)):
        if params.get(name) is not None:
            _check(errors, rules.check_int, name, params[name], low, high)


def _check_image(errors, image):
    if not image:
        errors.append("image is required when state=present")
    elif ".." in str(image).split("/"):
        errors.append("image %s must not contain '..' components" % rules.show(image))
    else:
        _match(errors, "image", image, _IMAGE, "a valid image reference")


def _check_placement(errors, params):
    """The nodes, the node selector and, for state=present, the image."""
    for index, node in enumerate(params.get("nodes") or []):
        _check(errors, rules.check_name, "nodes[%d]" % index, node, "k8s_name")
    if params.get("state", "present") == "present":
        if not params.get("nodes") and not params.get("node_selector"):
            errors.append("nodes or node_selector is required when state=present")
        _check_image(errors, params.get("image"))
    selector = params.get("node_selector")
    if selector:
        _selector(errors, "node_selector", selector)


def _check_names(errors, params):
    """Names of Kubernetes objects the pods refer to."""
    for key in ("namespace", "name_prefix", "run_id"):
        value = params.get(key)
        if value is not None:       # '' is no name: kubectl -n '' would not be this option's namespace
            _dns_label(errors, key, value)
    for key in ("service_account",):
        if params.get(key):
            _check(errors, rules.check_name, key, params[key], "k8s_name")
    for index, secret in enumerate(params.get("image_pull_secrets") or []):
        _check(errors, rules.check_name, "image_pull_secrets[%d]" % index, secret, "k8s_name")
    if params.get("gpu_resource") is not None:
        _match(errors, "gpu_resource", params["gpu_resource"], _RESOURCE_NAME, "an extended resource name")


def _check_resources(errors, params):
    for name, quantity in (params.get("resources") or {}).items():
        _match(errors, "resources key", str(name), _RESOURCE_NAME, "an extended resource name")
        _match(errors, "resources[%s]" % name, str(quantity), _QUANTITY, "a Kubernetes quantity")
    shm = params.get("shm_size")
    if shm:
        _match(errors, "shm_size", str(shm), _QUANTITY, "a Kubernetes quantity")


def _check_metadata(errors, params):
    for key, value in (params.get("labels") or {}).items():
        _match(errors, "labels key", str(key), _LABEL_KEY, "a Kubernetes label key")
        _check(errors, rules.check_name, "labels[%s]" % key, str(value), "k8s_label_value")
    for key, value in (params.get("annotations") or {}).items():
        _match(errors, "annotations key", str(key), _LABEL_KEY, "a Kubernetes annotation key")
        if not isinstance(value, str) or "\x00" in value or len(value) > 65536:
            errors.append("annotations[%s] must be a string without NUL of at most 65536 characters" % key)


def _check_container(errors, params):
    for index, cap in enumerate(params.get("capabilities") or []):
        _match(errors, "capabilities[%d]" % index, str(cap), _CAPABILITY, "a Linux capability name (like IPC_LOCK)")
    networks = params.get("networks") or []
    for index, net in enumerate(networks.split(",") if isinstance(networks, str) else networks):
        # an empty item is refused where it stands, not dropped (and the indexes stay the ones given)
        if not str(net).strip():
            errors.append("networks[%d] %s is empty: name a NetworkAttachmentDefinition or remove the item"
                          % (index, rules.show(net)))
            continue
        _match(errors, "networks[%d]" % index, str(net).strip(), _NETWORK, "a NetworkAttachmentDefinition reference")
    errors += command_errors(params.get("command"))


def validate_params(params):
    """Return a list of error strings for test-pod parameters (empty = valid); each names its option."""
    errors = []
    for check in (_check_placement, _check_names, _check_resources, _check_metadata, _check_container):
        check(errors, params)
    _check_tolerations(errors, params.get("tolerations"))
    _check_numbers(errors, params)
    return errors


def command_errors(command, option="command"):
    """Problems with a container's command: a program (a name or an absolute path in the image), then arguments."""
    errors = []
    if not command:
        return errors
    if not isinstance(command, (list, tuple)):
        return ["%s must be a list of strings, got %s" % (option, rules.show(command))]
    _check(errors, rules.check_binary, "%s[0]" % option, command[0], None, False)
    for index, item in enumerate(command):
        if not isinstance(item, str) or "\x00" in item or len(item) > rules.PATH_MAX:
            errors.append("%s[%d] %s must be a string without NUL of at most %d characters"
                          % (option, index, rules.show(item), rules.PATH_MAX))
    return errors


def _network_list(networks):
    if not networks:
        return []
    if isinstance(networks, str):
        return [n.strip() for n in networks.split(",") if n.strip()]
    return [str(n).strip() for n in networks if str(n).strip()]


def add_worker_resources(container, params):
    """The extended resources (RDMA devices, GPUs) and the /dev/shm mount of a container that runs the test."""
    resources = {str(k): str(v) for k, v in (params.get("resources") or {}).items()}
    if params.get("gpus"):
        resources[params.get("gpu_resource") or "nvidia.com/gpu"] = str(params["gpus"])
    if resources:
        # Extended resources need limits (requests default to them); no cpu/memory limits.
        container["resources"] = {"limits": dict(resources), "requests": dict(resources)}
    if params.get("shm_size"):
        container["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}]


def _pod_metadata(params, node):
    run_id = params.get("run_id") or "run"
    labels = {APP_LABEL: "commcheck", RUN_LABEL: run_id, NODE_LABEL: pod_name("", "", node)[:63]}
    labels.update({str(k): str(v) for k, v in (params.get("labels") or {}).items()})
    annotations = {str(k): str(v) for k, v in (params.get("annotations") or {}).items()}
    networks = _network_list(params.get("networks"))
    if networks and not params.get("host_network"):
        annotations[NETWORKS_ANNOTATION] = ",".join(networks)
    metadata = {"name": pod_name(params.get("name_prefix") or "commcheck", run_id, node),
                "namespace": params.get("namespace") or "default", "labels": labels}
    if annotations:
        metadata["annotations"] = annotations
    return metadata


def _pod_container(params):
    container = {
        "name": CONTAINER_NAME,
        "image": params["image"],
        "imagePullPolicy": params.get("image_pull_policy") or "IfNotPresent",
        "command": [str(c) for c in (params.get("command") or ["sleep", "infinity"])],
        "securityContext": {
            "capabilities": {"add": [str(c) for c in (params.get("capabilities") or ["IPC_LOCK"])]},
        },
    }
    if params.get("privileged"):
        container["securityContext"]["privileged"] = True
    add_worker_resources(container, params)
    return container


def _pod_spec(params, node):
    spec = {
        "nodeName": node,
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 5,
        "containers": [_pod_container(params)],
    }
    if params.get("host_network"):
        spec["hostNetwork"] = True
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    if params.get("active_deadline_seconds"):
        spec["activeDeadlineSeconds"] = int(params["active_deadline_seconds"])
    if params.get("tolerations"):
        spec["tolerations"] = [dict(t) for t in params["tolerations"]]
    if params.get("shm_size"):
        spec["volumes"] = [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": str(params["shm_size"])}}]
    if params.get("service_account"):
        spec["serviceAccountName"] = params["service_account"]
    if params.get("image_pull_secrets"):
        spec["imagePullSecrets"] = [{"name": s} for s in params["image_pull_secrets"]]
    return spec


def build_pod_manifest(params, node):
    """The Pod manifest for one node: pinned with nodeName, RDMA/GPU resources,
    IPC_LOCK, no memory limit (a memory limit makes MR registration fail),
    hostNetwork or Multus networks, tolerations and run labels."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": _pod_metadata(params, node),
            "spec": _pod_spec(params, node)}


def manifest_differs(existing, wanted):
    """True when a live pod does not match the wanted manifest in what matters.

    Pods are immutable: a difference means delete and create again.
    """
    if not existing:
        return True
    spec = existing.get("spec") or {}
    wspec = wanted["spec"]
    if spec.get("nodeName") != wspec.get("nodeName"):
        return True
    if bool(spec.get("hostNetwork")) != bool(wspec.get("hostNetwork")):
        return True
    live = (spec.get("containers") or [{}])[0]
    want = wspec["containers"][0]
    if live.get("image") != want.get("image") or live.get("command") != want.get("command"):
        return True
    live_limits = (live.get("resources") or {}).get("limits") or {}
    if {k: str(v) for k, v in live_limits.items()} != (want.get("resources") or {}).get("limits", {}):
        return True
    live_ann = (existing.get("metadata") or {}).get("annotations") or {}
    want_ann = wanted["metadata"].get("annotations") or {}
    if live_ann.get(NETWORKS_ANNOTATION) != want_ann.get(NETWORKS_ANNOTATION):
        return True
    phase = (existing.get("status") or {}).get("phase")
    return phase in ("Failed", "Succeeded")


def plan_pods(params, existing, result):
    """The pods wanted, and which to create, replace and delete; recorded in ``result``. Returns the plan."""
    wanted = [build_pod_manifest(params, node) for node in params["nodes"]]
    names = [m["metadata"]["name"] for m in wanted]
    stale = [n for n in existing if n not in names]
    replace = [n for n, m in zip(names, wanted) if n in existing and manifest_differs(existing[n], m)]
    create = [m for n, m in zip(names, wanted) if n not in existing or n in replace]
    result.update(manifests=wanted, created=[m["metadata"]["name"] for m in create],
                  deleted=sorted(stale + replace), changed=bool(create or stale),
                  diff=dict(before={"pods": sorted(existing)}, after={"pods": names}))
    return {"names": names, "create": create, "replace": replace}


def network_status(pod):
    """Secondary networks of a pod from Multus' network-status annotation."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    raw = None
    for key in NETWORK_STATUS_ANNOTATIONS:
        if annotations.get(key):
            raw = annotations[key]
            break
    if not raw:
        return []
    try:
        entries = json.loads(raw)
    except ValueError:
        return []
    networks = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        networks.append({
            "name": entry.get("name"),
            "interface": entry.get("interface"),
            "ips": [ip for ip in entry.get("ips") or [] if isinstance(ip, str)],
            "default": bool(entry.get("default")),
            "mac": entry.get("mac"),
        })
    return networks


def pod_is_ready(pod):
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def pod_summary(pod):
    """What a play needs of a pod: name, node, IPs, secondary networks, readiness."""
    status = pod.get("status") or {}
    networks = network_status(pod)
    secondary = [ip for net in networks if not net["default"] for ip in net["ips"]]
    return {
        "name": (pod.get("metadata") or {}).get("name"),
        "namespace": (pod.get("metadata") or {}).get("namespace"),
        "node": (pod.get("spec") or {}).get("nodeName"),
        "pod_ip": status.get("podIP"),
        "host_ip": status.get("hostIP"),
        "phase": status.get("phase"),
        "ready": pod_is_ready(pod),
        "networks": networks,
        "network_ips": secondary,
        "address": secondary[0] if secondary else status.get("podIP"),
    }


def pod_failure_reason(pod):
    """Why a pod is refused or not becoming ready ('OutOfrdma/...: Pod was rejected: ...'), or None (k8s_refusals)."""
    refusal = pod_refusal(pod)
    if not refusal:
        return None
    return "%s: %s" % (refusal["reason"], refusal["message"]) if refusal["message"] else refusal["reason"]


def selectable_nodes(node_list):
    """Names of Ready, schedulable nodes in a ``kubectl get nodes -o json`` list."""
    names = []
    for node in (node_list or {}).get("items") or []:
        if (node.get("spec") or {}).get("unschedulable"):
            continue
        ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                    for c in (node.get("status") or {}).get("conditions") or [])
        if ready:
            names.append((node.get("metadata") or {}).get("name"))
    return sorted(n for n in names if n)
