# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Why a test pod is refused or stuck, and what to do about it (pure).

Read from the pod's status (what the kubelet or the scheduler wrote) and from
its events (``kubectl get events --field-selector involvedObject.kind=Pod,
involvedObject.name=POD -o json``):

- the kubelet refuses a pod at admission (pods pinned with ``nodeName`` skip
  the scheduler, so the kubelet is the one that says no): phase ``Failed``,
  ``status.reason`` ``OutOf<resource>`` (``OutOfrdma/hca_shared_devices_a``),
  ``UnexpectedAdmissionError``, ``TopologyAffinityError``, ``NodeAffinity``...
  and ``status.message`` "Pod was rejected: Node didn't have enough resource: ...";
- the scheduler: condition ``PodScheduled=False``, reason ``Unschedulable``,
  message "0/4 nodes are available: 4 Insufficient rdma/hca_shared_devices_a.";
- the container runtime: a container ``waiting`` (``ErrImagePull``,
  ``CreateContainerConfigError``...) or ``terminated`` (exit code, reason);
- events, latest Warning first, for what the status does not say
  (``FailedCreatePodSandBox`` when Multus/CNI fails, ``FailedMount``...).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules

MESSAGE_LIMIT = 300
EVENTS_KEPT = 3
# Container states that waiting longer does not cure.
FINAL_WAITING = ("ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName",
                 "CreateContainerConfigError", "CreateContainerError", "RunContainerError", "CrashLoopBackOff")
# Waiting states of a container that is on its way.
NORMAL_WAITING = ("ContainerCreating", "PodInitializing")
OUT_OF = "OutOf"
_INSUFFICIENT = re.compile(r"Insufficient ([A-Za-z0-9./_-]+)")
_NOT_ENOUGH = re.compile(r"enough resource: ([A-Za-z0-9./_-]+)")
_TIMESTAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?")

PULL_FIX = ("the node cannot pull the image: check its name and tag, that the registry is reachable from the node, "
            "and image_pull_secrets for a private registry")
START_FIX = ("the container runtime could not start the command: check that command[0] exists in the image and "
             "that the securityContext (capabilities, privileged) is allowed on the node")
EXITED_FIX = ("the container's command ended; test pods need a command that keeps running (the default is "
              "sleep infinity): see kubectl logs of the pod")
FIXES = {
    "Unschedulable": "the scheduler found no node for the pod; its message says what each node lacks",
    "FailedScheduling": "the scheduler found no node for the pod; its message says what each node lacks",
    "UnexpectedAdmissionError": (
        "the kubelet could not allocate a device from its device plugin (the plugin restarted or lost the device, "
        "or the kubelet's device-plugin checkpoint could not be written): check the device plugin pod and the "
        "kubelet log on the node, then run again"),
    "TopologyAffinityError": (
        "the kubelet's Topology Manager could not place the requested GPUs and RDMA devices on one NUMA node: "
        "request devices one NUMA node can give, or relax the node's topology-manager-policy"),
    "SMTAlignmentError": "the kubelet's CPU manager could not give whole cores: request whole physical cores",
    "NodeAffinity": "the node's labels do not match the pod's node affinity or selector",
    "DeadlineExceeded": "the pod outlived active_deadline_seconds; raise it or run sooner after creating the pods",
    "Evicted": "the kubelet evicted the pod for node pressure (memory, disk): free the node or pick another",
    "ErrImagePull": PULL_FIX, "ImagePullBackOff": PULL_FIX, "ErrImageNeverPull": PULL_FIX,
    "InvalidImageName": "the image reference is not valid: fix the image option",
    "CreateContainerConfigError": (
        "a secret, config map or service account the pod refers to is missing or wrong (see the message): "
        "create it, or fix service_account / image_pull_secrets"),
    "CreateContainerError": START_FIX, "RunContainerError": START_FIX, "ContainerCannotRun": START_FIX,
    "StartError": START_FIX,
    "CrashLoopBackOff": EXITED_FIX, "Error": EXITED_FIX, "Completed": EXITED_FIX, "OOMKilled": EXITED_FIX,
    "FailedCreatePodSandBox": (
        "the pod's network could not be set up (CNI / Multus): check that the NetworkAttachmentDefinitions named "
        "in networks exist in the pod's namespace and that their CNI plugins are installed on the node"),
    "FailedMount": "a volume of the pod could not be mounted (see the message)",
    "NotReady": "the pod did not become Ready in time; its events are shown when there are any "
                "(kubectl describe pod tells the rest); raise wait_timeout if the node is only slow",
    "PodNotFound": "the pod was not created, or something deleted it; kubectl get events in the namespace may say why",
}


def _text(value, limit=MESSAGE_LIMIT):
    """One line of at most ``limit`` characters from whatever the API put there."""
    if value is None:
        return ""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _list(value):
    return value if isinstance(value, list) else []


def _dict(value):
    return value if isinstance(value, dict) else {}


def _refusal(reason, message, final, where):
    return {"reason": _text(reason, 80) or "Unknown", "message": _text(message), "final": bool(final),
            "where": where, "events": []}


def _resource_of(reason, message):
    """The resource a refusal is about: OutOf<resource>, 'Insufficient <resource>', 'enough resource: <r>'."""
    if reason.startswith(OUT_OF) and len(reason) > len(OUT_OF):
        return reason[len(OUT_OF):]
    found = _INSUFFICIENT.search(message) or _NOT_ENOUGH.search(message)
    return found.group(1).rstrip(".,") if found else None


def refusal_fix(reason, message="", node=None):
    """What to do about a refusal: a sentence that names the resource, the node or the option involved."""
    resource = _resource_of(reason, message or "")
    where = "node %s" % node if node else "the node"
    if reason.startswith(OUT_OF) and resource:
        return ("%s has no free %s: other pods hold it or its device plugin advertises fewer (kubectl describe node "
                "shows Allocatable and Allocated resources); free it, request less in resources, or leave the node out"
                % (where, resource))
    fix = FIXES.get(reason, "kubectl describe pod and the node's kubelet log tell more")
    if reason in ("Unschedulable", "FailedScheduling"):
        if resource:
            fix += ("; no node has a free %s: check that its device plugin advertises it (node Allocatable) and "
                    "that other pods do not hold it all" % resource)
        if "taint" in (message or ""):
            fix += "; a node taint the pod does not tolerate: add tolerations"
    return fix


def _status_refusal(status):
    """The kubelet's own verdict: phase Failed with status.reason (admission, eviction, deadline)."""
    if status.get("phase") == "Failed" and status.get("reason"):
        return _refusal(status["reason"], status.get("message"), True, "status")
    return None


def _scheduling_refusal(status):
    for cond in _list(status.get("conditions")):
        if isinstance(cond, dict) and cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            return _refusal(cond.get("reason") or "Unschedulable", cond.get("message"), False, "condition")
    return None


def _terminated_message(term):
    parts = []
    if term.get("exitCode") is not None:
        parts.append("exit code %s" % term["exitCode"])
    if term.get("message"):
        parts.append(str(term["message"]))
    return ": ".join(parts)


def _container_refusal(status):
    for cstat in _list(status.get("initContainerStatuses")) + _list(status.get("containerStatuses")):
        state = _dict(cstat.get("state") if isinstance(cstat, dict) else None)
        waiting = _dict(state.get("waiting"))
        reason = waiting.get("reason")
        if reason and reason not in NORMAL_WAITING:
            return _refusal(reason, waiting.get("message"), reason in FINAL_WAITING, "container")
        term = _dict(state.get("terminated"))
        if term:
            return _refusal(term.get("reason") or "Error", _terminated_message(term), True, "container")
    return None


def pod_refusal(pod):
    """Why a pod is refused or not running yet, from its status; None while nothing is wrong.

    A dict: reason, message, final (waiting longer does not cure it), where
    (status, condition, container, phase) and events (filled in by with_events).
    """
    status = (pod or {}).get("status") or {}
    if not isinstance(status, dict):
        return None
    for read in (_status_refusal, _scheduling_refusal, _container_refusal):
        found = read(status)
        if found:
            return found
    if status.get("phase") in ("Failed", "Succeeded"):
        return _refusal("Completed" if status["phase"] == "Succeeded" else "Error",
                        "pod phase %s" % status["phase"], True, "phase")
    return None


def events_argv(pod):
    """kubectl's arguments for one pod's events (after the global flags). Raises option_rules.OptionError."""
    rules.check_name("pod", pod, "k8s_name")
    return ["get", "events", "--field-selector", "involvedObject.kind=Pod,involvedObject.name=%s" % pod, "-o", "json"]


def _seen(event):
    """A sort key for when an event last happened (core/v1 and events.k8s.io fields)."""
    series, metadata = _dict(event.get("series")), _dict(event.get("metadata"))
    for stamp in (series.get("lastObservedTime"), event.get("lastTimestamp"), event.get("eventTime"),
                  event.get("firstTimestamp"), metadata.get("creationTimestamp")):
        found = _TIMESTAMP.match(stamp) if isinstance(stamp, str) else None
        if found:
            return found.group(1), (found.group(2) or "").ljust(9, "0")
    return "", ""


def _event_items(text):
    try:
        doc = json.loads(text) if isinstance(text, str) and text.strip() else None
    except ValueError:
        return []
    if isinstance(doc, dict) and doc.get("kind") == "Event":
        return [doc]
    items = doc.get("items") if isinstance(doc, dict) else None
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def _about(event, pod):
    involved = event.get("involvedObject")
    if not isinstance(involved, dict):
        return True
    return involved.get("name") in (None, pod) and involved.get("kind") in (None, "Pod")


def warning_events(text, pod=None, limit=EVENTS_KEPT):
    """The Warning events in ``kubectl get events -o json`` output, latest first, one per reason.

    Empty, truncated or foreign output gives []; events about another object
    than ``pod`` (a kubectl that ignored the field selector) are left out.
    """
    chosen, reasons = [], set()
    for event in sorted(_event_items(text), key=_seen, reverse=True):
        reason = _text(event.get("reason"), 80)
        if event.get("type") != "Warning" or not reason or reason in reasons or (pod and not _about(event, pod)):
            continue
        reasons.add(reason)
        count = _dict(event.get("series")).get("count") or event.get("count") or 1
        source = _dict(event.get("source"))
        chosen.append({"reason": reason, "message": _text(event.get("message")),
                       "count": count if isinstance(count, int) else 1, "last_seen": _seen(event)[0],
                       "component": _text(event.get("reportingComponent") or source.get("component"), 80)})
    return chosen[:limit]


def with_events(refusal, events, node=None):
    """The refusal completed with the pod's Warning events and a fix.

    With nothing in the status (a pod Pending in ContainerCreating), the latest
    Warning event is the reason.
    """
    result = dict(refusal)
    events = list(events or [])
    if result["reason"] in ("NotReady", "PodNotFound") and events:
        latest = events[0]
        result.update(reason=latest["reason"], message="%s (%s)" % (latest["message"], refusal["message"]))
    result["events"] = [e for e in events if e["reason"] != result["reason"]]
    result["fix"] = refusal_fix(result["reason"], result["message"], node)
    return result


def waiting_refusals(pods, names, ready, timeout, waited):
    """Why each named pod that is not Ready is not: its status' reason, else not Ready / not found.

    ``pods``: name to pod as listed; ``waited``: whether the wait ran to its
    deadline (else it stopped early at another pod's final refusal).
    """
    refusals = {}
    for name in names:
        if name in ready:
            continue
        if name not in pods:
            refusals[name] = _refusal("PodNotFound", "pod not found", False, "wait")
            continue
        refusals[name] = pod_refusal(pods[name]) or _refusal(
            "NotReady", "not Ready after %ss" % timeout if waited else "not Ready yet when another pod was refused",
            False, "wait")
    return refusals


def is_final(refusals):
    """True when one refusal is one that waiting longer does not cure."""
    return any(r["final"] for r in refusals.values() if r)


def refusal_text(refusal):
    """One line: 'Reason: message; events: ...; fix: ...' (a bare message for the wait's own reasons)."""
    if refusal["reason"] in ("NotReady", "PodNotFound"):
        head = refusal["message"]
    else:
        head = "%s: %s" % (refusal["reason"], refusal["message"]) if refusal["message"] else refusal["reason"]
    events = "; ".join("%s: %s%s" % (e["reason"], e["message"], " (x%d)" % e["count"] if e["count"] > 1 else "")
                       for e in refusal.get("events") or [])
    text = head + (" [events: %s]" % events if events else "")
    return text + (" (fix: %s)" % refusal["fix"] if refusal.get("fix") else "")
