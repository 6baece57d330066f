# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reserve the Kubernetes nodes under test while a run lasts (pure: what to set and to undo, as argv lists).

Opt-in (``commcheck_reserve_nodes: label`` or ``taint``): before the first
test each node gets the label ``<key>=<run>`` (or the taint
``<key>=<run>:NoSchedule``), so that schedulers that honour it (a Kueue or
Volcano queue whose node selector or affinity excludes it, or any scheduler
for the taint) keep new workloads off the nodes; the run removes it at its
end, and on interruption (plugins/plugin_utils/node_reservation.py).

A node that carries the key already (another run, an operator) is left as
it was: neither set nor removed (``reserved_before``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import quarantine as q

MODES = ("none", "label", "taint")
DEFAULT_KEY = "commcheck.clusterops.io/testing"
TAINT_EFFECT = "NoSchedule"
_NOT_IN_VALUE = re.compile(r"[^A-Za-z0-9_.-]+")


class ReserveError(q.QuarantineError):
    """Bad input (reported before anything runs)."""


def label_value(run_id):
    """The run id as a Kubernetes label value: characters a value may not hold become '_', at most 63, starting
    and ending with a letter or digit; '' for an empty id."""
    text = _NOT_IN_VALUE.sub("_", str(run_id or ""))[:63]
    return text.strip("_.-")


def check_options(mode, key, run_id, nodes):
    """Everything that reaches a command line, checked before anything runs; raises ReserveError."""
    if mode not in MODES:
        raise ReserveError("mode must be one of %s, got %s" % (", ".join(MODES), rules.show(mode)))
    try:
        q.check_key(key, "key")
        for index, node in enumerate(nodes or []):
            q.check_k8s_node(node, "nodes[%d]" % index)
    except q.QuarantineError as exc:
        raise ReserveError(str(exc))
    if mode != "none" and not label_value(run_id):
        raise ReserveError("run_id %s gives no label value (letters, digits, - _ .)" % rules.show(run_id))


def carries(obj, mode, key):
    """Whether a node object already has the reservation's key (a label, or a taint of that key)."""
    obj = obj or {}
    if mode == "label":
        return key in ((obj.get("metadata") or {}).get("labels") or {})
    return any(t.get("key") == key for t in ((obj.get("spec") or {}).get("taints") or []))


def plan(nodes, current, mode, key, run_id, base):
    """``{"set": [...], "undo": [...], "reserved_before": [...]}``: the ``{node, action, argv}`` that reserve
    each node of ``nodes`` that does not carry ``key`` yet (``current``: node -> its object) and those that
    remove exactly that again; the nodes that carried it before are in neither."""
    check_options(mode, key, run_id, nodes)
    out = {"set": [], "undo": [], "reserved_before": []}
    if mode == "none":
        return out
    value = label_value(run_id)
    for node in sorted(set(nodes or []), key=q.natural_key):
        if carries(current.get(node), mode, key):
            out["reserved_before"].append(node)
            continue
        if mode == "label":
            put = ["label", "node", node, "%s=%s" % (key, value)]
            undo = ["label", "node", node, "%s-" % key]
        else:
            put = ["taint", "node", node, "%s=%s:%s" % (key, value, TAINT_EFFECT)]
            undo = ["taint", "node", node, "%s:%s-" % (key, TAINT_EFFECT)]
        out["set"].append({"node": node, "action": "reserve", "argv": list(base) + put})
        out["undo"].append({"node": node, "action": "release", "argv": list(base) + undo})
    return out


def report_lines(mode, key, result):
    """What the reservation did, for the task's output."""
    lines = ["reserve nodes (%s %s): %d reserved, %d released" % (
        mode, key, len(result.get("reserved") or []), len(result.get("released") or []))]
    if result.get("reserved_before"):
        lines.append("left as they were (carried %s before): %s" % (key, ", ".join(result["reserved_before"])))
    return lines


# The arguments of clusterops.commcheck.reserve_nodes (an action on the controller; its module file documents them).
ARGUMENT_SPEC = dict(
    state=dict(type="str", choices=["present", "absent"], default="present"),
    mode=dict(type="str", choices=list(MODES), default="label"),
    key=dict(type="str", default=DEFAULT_KEY, no_log=False),
    run_id=dict(type="str"),
    nodes=dict(type="list", elements="str", default=[]),
    node_names=dict(type="dict", default={}),
    kubectl_binary=dict(type="str", default="kubectl"),
    kubeconfig=dict(type="str", no_log=True),
    kube_context=dict(type="str"),
    state_dir=dict(type="str"),
    timeout=dict(type="int", default=60),
    role_options=dict(type="bool", default=False),
)
MAX_TIMEOUT_S = 3600
