# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test pods for Kubernetes nodes: manifests, names, readiness and addresses (pure)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import re

RUN_LABEL = "commcheck.clusterops.io/run"
NODE_LABEL = "commcheck.clusterops.io/node"
APP_LABEL = "app.kubernetes.io/name"
CONTAINER_NAME = "commcheck"
NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
NETWORK_STATUS_ANNOTATIONS = ("k8s.v1.cni.cncf.io/network-status", "k8s.v1.cni.cncf.io/networks-status")

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_NODE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
_RESOURCE_NAME = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$")
_LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")
_IMAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,511}$")
_CAPABILITY = re.compile(r"^[A-Z_]{2,32}$")
_NETWORK = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?(@[A-Za-z0-9_.-]{1,15})?$")


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


def validate_params(params):
    """Return a list of error strings for test-pod parameters (empty = valid)."""
    errors = []
    for node in params.get("nodes") or []:
        if not _NODE_NAME.match(str(node)):
            errors.append("node name %r is not a valid Kubernetes node name" % (node,))
    if params.get("state", "present") == "present":
        if not params.get("nodes") and not params.get("node_selector"):
            errors.append("nodes or node_selector is required when state=present")
        image = params.get("image")
        if not image or not _IMAGE.match(image):
            errors.append("image %r is not a valid image reference" % (image,))
    selector = params.get("node_selector")
    if selector and not re.match(r"^[A-Za-z0-9_./=!,() -]+$", selector):
        errors.append("node_selector %r is not a label selector" % (selector,))
    for key in ("namespace", "name_prefix", "run_id"):
        value = params.get(key)
        if value and not _DNS_LABEL.match(value):
            errors.append("%s %r must be a DNS-1123 label (lowercase letters, digits, '-')" % (key, value))
    for name, quantity in (params.get("resources") or {}).items():
        if not _RESOURCE_NAME.match(str(name)):
            errors.append("resource name %r is not a valid extended resource name" % (name,))
        if not _QUANTITY.match(str(quantity)):
            errors.append("resource %s quantity %r is not a Kubernetes quantity" % (name, quantity))
    shm = params.get("shm_size")
    if shm and not _QUANTITY.match(str(shm)):
        errors.append("shm_size %r is not a Kubernetes quantity" % (shm,))
    for key, value in (params.get("labels") or {}).items():
        if not _LABEL_KEY.match(str(key)) or not _LABEL_VALUE.match(str(value)):
            errors.append("label %r=%r is not a valid Kubernetes label" % (key, value))
    for cap in params.get("capabilities") or []:
        if not _CAPABILITY.match(str(cap)):
            errors.append("capability %r is not a Linux capability name (like IPC_LOCK)" % (cap,))
    for net in _network_list(params.get("networks")):
        if not _NETWORK.match(net):
            errors.append("network %r is not a NetworkAttachmentDefinition reference" % (net,))
    for item in params.get("command") or []:
        if "\x00" in str(item):
            errors.append("command items must not contain NUL bytes")
    return errors


def _network_list(networks):
    if not networks:
        return []
    if isinstance(networks, str):
        return [n.strip() for n in networks.split(",") if n.strip()]
    return [str(n).strip() for n in networks if str(n).strip()]


def build_pod_manifest(params, node):
    """The Pod manifest for one node: pinned with nodeName, RDMA/GPU resources,
    IPC_LOCK, no memory limit (a memory limit makes MR registration fail),
    hostNetwork or Multus networks, tolerations and run labels."""
    run_id = params.get("run_id") or "run"
    name = pod_name(params.get("name_prefix") or "commcheck", run_id, node)
    labels = {APP_LABEL: "commcheck", RUN_LABEL: run_id, NODE_LABEL: pod_name("", "", node)[:63]}
    labels.update({str(k): str(v) for k, v in (params.get("labels") or {}).items()})
    annotations = {str(k): str(v) for k, v in (params.get("annotations") or {}).items()}
    networks = _network_list(params.get("networks"))
    if networks and not params.get("host_network"):
        annotations[NETWORKS_ANNOTATION] = ",".join(networks)

    resources = {str(k): str(v) for k, v in (params.get("resources") or {}).items()}
    gpus = params.get("gpus") or 0
    if gpus:
        resources[params.get("gpu_resource") or "nvidia.com/gpu"] = str(gpus)
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
    if resources:
        # Extended resources need limits (requests default to them); no cpu/memory limits.
        container["resources"] = {"limits": dict(resources), "requests": dict(resources)}
    volumes = []
    if params.get("shm_size"):
        container["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}]
        volumes.append({"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": str(params["shm_size"])}})
    spec = {
        "nodeName": node,
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 5,
        "containers": [container],
    }
    if params.get("host_network"):
        spec["hostNetwork"] = True
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    if params.get("active_deadline_seconds"):
        spec["activeDeadlineSeconds"] = int(params["active_deadline_seconds"])
    if params.get("tolerations"):
        spec["tolerations"] = [dict(t) for t in params["tolerations"]]
    if volumes:
        spec["volumes"] = volumes
    if params.get("service_account"):
        spec["serviceAccountName"] = params["service_account"]
    if params.get("image_pull_secrets"):
        spec["imagePullSecrets"] = [{"name": s} for s in params["image_pull_secrets"]]
    metadata = {"name": name, "namespace": params.get("namespace") or "default", "labels": labels}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


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
    """Why a pod is not becoming ready (Unschedulable, ImagePullBackOff, …), or None."""
    status = pod.get("status") or {}
    for cond in status.get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            return "%s: %s" % (cond.get("reason"), cond.get("message"))
    for cstat in status.get("containerStatuses") or []:
        waiting = (cstat.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") in ("ImagePullBackOff", "ErrImagePull", "CrashLoopBackOff",
                                     "CreateContainerConfigError", "InvalidImageName"):
            return "%s: %s" % (waiting.get("reason"), waiting.get("message"))
    if status.get("phase") in ("Failed", "Succeeded"):
        return "pod phase %s" % status.get("phase")
    return None


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
