# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Existing pods as commcheck hosts (pure): which pods, which of them can run tests, and how to leave them clean.

A run may use the pods of a training job (a Volcano job, an MPIJob) instead
of creating test pods. Nothing here creates, changes or deletes a pod:

- ``check_selection`` validates what the operator names (namespace, label
  selector, pod names, container); none of it ever becomes a kubectl flag.
- ``pod_use`` decides, per pod, whether tests can run in it (Running, Ready,
  not terminating, the container exists and runs) or why not.
- ``agent_config`` is the MPI agent's ``kubexec.conf`` for pods whose
  containers may differ (a job's launcher and workers often do).
- ``STOP_SH`` is what replaces deleting created pods: it stops, in one pod,
  the processes the collection started there (every process that inherited
  the deadline wrapper's ``runner.REMOTE_MARKER`` in its environment, the MPI
  agent and whatever names the agent's directory) and removes the agent's two
  files. A job's own processes match none of these, whatever their command.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import kubexec
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.k8s_pods import (
    is_label_selector,
    pod_failure_reason,
    pod_summary,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import KILL_GRACE_S, REMOTE_MARKER

SELECTION_KEYS = ("namespace", "selector", "names", "container")
DEFAULT_CONTAINER_ANNOTATION = "kubectl.kubernetes.io/default-container"

# Run in each pod with: sh -c STOP_SH sh AGENT_DIR GRACE MARKER. Prints "stopped PID CMDLINE" per process it
# stopped and "removed AGENT_DIR" when it removed the agent's files. The patterns are built from $1 and $2
# at run time, so this script's own command line matches none of them. Only processes in this container's
# network and mount namespaces count: a pod with hostPID sees the node's processes, other pods' among them.
STOP_SH = r'''d=$1; g=$2; mark=$3; me=$$; agent="$d/kubexec.sh"; found=
net=$(readlink /proc/self/ns/net 2>/dev/null); mnt=$(readlink /proc/self/ns/mnt 2>/dev/null)
here() {
  [ "$(readlink "/proc/$1/ns/net" 2>/dev/null)" = "$net" ] && [ "$(readlink "/proc/$1/ns/mnt" 2>/dev/null)" = "$mnt" ]
}
ours() {
  case "$2" in
    *"$agent"*) return 0 ;;
    "sh -c echo \"commcheck-remote-"*) return 0 ;;
  esac
  tr '\000' '\n' < "/proc/$1/environ" 2>/dev/null | grep -qx "$mark"
}
for p in /proc/[0-9]*; do
  pid=${p#/proc/}
  [ "$pid" = "$me" ] && continue
  cmd=$(tr '\000' ' ' < "$p/cmdline" 2>/dev/null) || continue
  [ -n "$cmd" ] || continue
  if ours "$pid" "$cmd" && here "$pid"; then
    kill -TERM -- "-$pid" 2>/dev/null
    kill -TERM "$pid" 2>/dev/null && { found="$found $pid"; echo "stopped $pid $cmd"; }
  fi
done
n=0
while [ -n "$found" ] && [ "$n" -lt "$g" ]; do
  alive=
  for pid in $found; do kill -0 "$pid" 2>/dev/null && alive="$alive $pid"; done
  found=$alive
  [ -n "$found" ] && sleep 1
  n=$((n + 1))
done
for pid in $found; do kill -KILL -- "-$pid" 2>/dev/null; kill -KILL "$pid" 2>/dev/null; done
if [ -f "$agent" ] && grep -q "commcheck kubexec: Open MPI remote agent" "$agent" 2>/dev/null; then
  rm -f -- "$agent" "$d/kubexec.conf" && rmdir -- "$d" 2>/dev/null
  echo "removed $d"
fi
exit 0
'''


class SelectionError(rules.OptionError):
    """Existing pods named in a way that cannot reach kubectl."""


def check_selector(option, selector):
    """A Kubernetes label selector (k=v, k==v, k!=v, k, !k, k in (a,b), k notin (a,b); ',' = and)."""
    rules.check_not_flag(option, selector)
    if not is_label_selector(selector):
        raise SelectionError("%s %s is not a label selector (key=value, key!=value, key, !key, key in (a,b), "
                             "comma-separated)" % (option, rules.show(selector)))
    return selector.strip()


def _names(option, names):
    if not isinstance(names, list):
        raise SelectionError("%s must be a list of pod names, got %s" % (option, rules.show(names)))
    for index, name in enumerate(names):
        rules.check_name("%s[%d]" % (option, index), name, "k8s_name")
    return list(names)


def _where(option, key):
    return "%s.%s" % (option, key) if option else key


def check_selection(value, option=None):
    """The selection as a dict (namespace, selector, names, container; unset ones None or []); raises OptionError.

    Problems name ``<option>.<key>`` (just ``<key>`` without ``option``)."""
    what = option or "the existing-pod selection"
    if not isinstance(value, dict):
        raise SelectionError("%s must be a dict with %s, got %s" % (what, ", ".join(SELECTION_KEYS), rules.show(value)))
    unknown = sorted(set(value) - set(SELECTION_KEYS), key=str)
    if unknown:
        raise SelectionError("%s has unknown keys %s (known: %s)" % (what, rules.show(unknown),
                                                                     ", ".join(SELECTION_KEYS)))
    selection = {"namespace": None, "selector": None, "names": [], "container": None}
    for key in ("namespace", "container"):
        if value.get(key) not in (None, ""):
            selection[key] = rules.check_name(_where(option, key), value[key], "k8s_label")
    if value.get("selector") not in (None, ""):
        selection["selector"] = check_selector(_where(option, "selector"), value["selector"])
    if value.get("names") not in (None, ""):
        selection["names"] = _names(_where(option, "names"), value["names"])
    if not selection["selector"] and not selection["names"]:
        raise SelectionError("%s needs a selector or names (the pods to use)" % what)
    return selection


def listed_pods(doc):
    """The pods of a ``kubectl get -o json`` answer (a List, or one Pod when one name was asked)."""
    if not isinstance(doc, dict):
        return []
    if doc.get("kind") == "Pod":
        return [doc]
    return [p for p in doc.get("items") or [] if isinstance(p, dict)]


def chosen_pods(by_selector, by_name, names):
    """Pods of the selector, then the named ones (each once, in that order); and the names not found."""
    chosen = {}
    named = [p for p in by_name if (p.get("metadata") or {}).get("name") in names]
    for pod in list(by_selector) + named:
        name = (pod.get("metadata") or {}).get("name")
        if name and name not in chosen:
            chosen[name] = pod
    return list(chosen.values()), [n for n in names if n not in chosen]


def pod_container(pod, asked=None):
    """The container tests run in: the one asked for, else the pod's default container, else its first."""
    if asked:
        return asked
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    names = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
    default = annotations.get(DEFAULT_CONTAINER_ANNOTATION)
    if default in names:
        return default
    return names[0] if names else None


def _container_problem(pod, container):
    names = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
    if container not in names:
        return "has no container %s (containers: %s)" % (rules.show(container), ", ".join(map(str, names)) or "none")
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if status.get("name") == container and "running" not in (status.get("state") or {}):
            waiting = (status.get("state") or {}).get("waiting") or (status.get("state") or {}).get("terminated") or {}
            return "container %s is not running%s" % (container, " (%s)" % waiting["reason"]
                                                      if waiting.get("reason") else "")
    return None


def _state_problem(pod):
    """Why a pod as a whole cannot run tests (terminating, not scheduled, not Running, not Ready), or None."""
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return "is terminating"
    summary = pod_summary(pod)
    if not summary["node"]:
        return "is not scheduled to a node%s" % _because(pod)
    if summary["phase"] != "Running":
        return "is %s, not Running%s" % (summary["phase"] or "in no phase", _because(pod))
    if not summary["ready"]:
        return "is Running but not Ready%s" % _because(pod)
    return None


def _because(pod):
    reason = pod_failure_reason(pod)
    return ": %s" % reason if reason else ""


def pod_use(pod, asked_container=None):
    """(summary with 'container', None) when tests can run in the pod, else (summary, why not)."""
    summary = pod_summary(pod)
    summary["container"] = pod_container(pod, asked_container)
    problem = _state_problem(pod) or _container_problem(pod, summary["container"])
    return summary, ("pod %s %s" % (summary["name"], problem) if problem else None)


def skip_fix(reason):
    """What to do about a pod that was left out."""
    if "no container" in reason:
        return "Name the container that has the test tools (container in the existing-pod selection)."
    if "terminating" in reason or "not scheduled" in reason or "not Running" in reason:
        return "Check the job's pods (kubectl describe pod); only Running, Ready pods are tested."
    return "Check the pod (kubectl describe pod); it is tested once it is Running and Ready."


def skipped_record(summary, reason, host_name="node"):
    """A 'discover' record with verdict skipped for a pod that was not used (host: its node, else the pod)."""
    host = summary.get("node") if host_name == "node" and summary.get("node") else summary.get("name")
    return {"kind": "discover", "host": host, "peer": None,
            "params": {"check": "pod", "pod": summary.get("name"), "namespace": summary.get("namespace"),
                       "phase": summary.get("phase"), "reason": "pod_not_usable"},
            "metrics": {}, "verdict": "skipped", "cause": reason, "fix": skip_fix(reason), "evidence": []}


def agent_config(pods, namespace, kubectl="kubectl"):
    """kubexec.conf for pods each with its own container (``host KEY POD CONTAINER``); a shared key is refused."""
    header = None
    lines = []
    owner = {}
    for pod in pods:
        text = kubexec.agent_config([pod], namespace, container=pod.get("container"), kubectl=kubectl)
        head, body = text.splitlines()[:2], text.splitlines()[2:]
        header = header or head
        for line in body:
            key = line.split()[1]
            if owner.get(key, pod["name"]) != pod["name"]:
                raise kubexec.KubexecError("%s stands for two pods: %s and %s" % (key, owner[key], pod["name"]))
            owner[key] = pod["name"]
            lines.append(line)
    if not lines:
        raise kubexec.KubexecError("no pods to reach")
    return "\n".join(header + lines) + "\n"


def stop_argv(directory, grace=KILL_GRACE_S):
    """argv that stops the collection's processes in a pod and removes the agent's files from ``directory``."""
    return ["sh", "-c", STOP_SH, "sh", kubexec.check_dir(directory), str(int(grace)), REMOTE_MARKER]


def stopped_processes(stdout):
    """[{pid, cmdline}] of the 'stopped PID CMDLINE' lines, and whether the agent's files were removed."""
    stopped = []
    removed = False
    for line in (stdout or "").splitlines():
        if line.startswith("stopped "):
            pid, _sep, cmdline = line[len("stopped "):].partition(" ")
            if pid.isdigit():
                stopped.append({"pid": int(pid), "cmdline": cmdline.strip()})
        elif line.startswith("removed "):
            removed = True
    return stopped, removed


def check_pod_refs(pods, option="pods"):
    """The pods to clean: dicts with a Kubernetes 'name' and a DNS-1123 'container' (or none)."""
    checked = []
    for index, pod in enumerate(pods or []):
        where = "%s[%d]" % (option, index)
        if not isinstance(pod, dict) or not pod.get("name"):
            raise SelectionError("%s must be a dict with name (and container), got %s" % (where, rules.show(pod)))
        name = rules.check_name(where + ".name", pod["name"], "k8s_name")
        container = pod.get("container") or None
        if container is not None:
            rules.check_name(where + ".container", container, "k8s_label")
        checked.append({"name": name, "container": container})
    return checked
