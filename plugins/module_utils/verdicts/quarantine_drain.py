# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Quarantine's cordon and drain of Kubernetes nodes (pure: argv lists, and what kubectl's drain said).

- ``cordon``: ``kubectl cordon NODE`` when the node is still schedulable;
  ``state=absent`` plans ``kubectl uncordon NODE`` when it is not.
- ``drain``: ``kubectl drain NODE --ignore-daemonsets --timeout=<N>s``. Only
  what is safe: PodDisruptionBudgets are honoured (never ``--disable-eviction``
  nor ``--force``), pods with emptyDir data are not deleted (no
  ``--delete-emptydir-data``: kubectl refuses to drain such a node, and that is
  reported). A drain cordons the node itself.

:func:`drain_outcome` reads kubectl's output: ``drained``, ``pdb_blocked`` (an
eviction a PodDisruptionBudget refused until the timeout), ``timeout``,
``refused`` (pods kubectl will not delete without ``--force`` or
``--delete-emptydir-data``) or ``failed``, with the pods still on the node.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import quarantine as q

DRAIN_TIMEOUT_MIN = 1
DRAIN_TIMEOUT_MAX = 86400
DRAIN_TIMEOUT_DEFAULT = 300
# the command's own deadline: kubectl's --timeout plus time to print and exit
DRAIN_GRACE_S = 60
OUTCOMES = ("drained", "pdb_blocked", "timeout", "refused", "failed")
# The outcomes of a drain that did not drain its node: (likely cause, fix), for docs/troubleshooting.md
DRAIN_CODES = {
    "pdb_blocked": ("A PodDisruptionBudget refused the eviction of a pod on the node (kubectl retried until "
                    "drain_timeout): evicting it would leave its application with fewer pods than the budget allows",
                    "let the application's other pods become ready (or scale it up) and quarantine again, or raise "
                    "commcheck_quarantine_drain_timeout; never bypass the budget (commcheck does not use --force "
                    "nor --disable-eviction)"),
    "timeout": ("kubectl did not finish evicting the node's pods before drain_timeout (pods slow to end: long "
                "termination grace periods, finalizers)",
                "look at the pods named (kubectl get pods -A --field-selector spec.nodeName=NODE) and raise "
                "commcheck_quarantine_drain_timeout"),
    "refused": ("kubectl refused to delete pods of the node: pods without a controller (they would be lost, "
                "--force) or with emptyDir data (--delete-emptydir-data); commcheck passes neither",
                "move or delete those pods yourself (their owners decide), then quarantine again"),
    "failed": ("kubectl drain failed for another reason (the node does not exist, no permission to evict pods, "
               "the API server unreachable)",
               "read the message; the quarantine's kubeconfig needs the rights to patch nodes and create "
               "pods/eviction"),
}

_PDB = re.compile(r"""error when evicting pods/"([^"]+)" -n "([^"]+)" \(will retry[^)]*\): (.*disruption budget.*)""")
_EVICTING = re.compile(r"""pods/"([^"]+)" -n "([^"]+)\"""")
_PENDING_POD = re.compile(r"^pod/(\S+)$")
_REFUSED = re.compile(r"cannot delete (?:Pods|pods)[^\n]*")


def check_drain_timeout(value):
    """Seconds kubectl's drain may take (1 to 86400); raises QuarantineError."""
    if isinstance(value, bool) or not isinstance(value, int) or not DRAIN_TIMEOUT_MIN <= value <= DRAIN_TIMEOUT_MAX:
        raise q.QuarantineError("drain_timeout must be an integer from %d to %d (seconds), got %s"
                                % (DRAIN_TIMEOUT_MIN, DRAIN_TIMEOUT_MAX, q.rules.show(value)))
    return value


def _unschedulable(obj):
    return bool(((obj or {}).get("spec") or {}).get("unschedulable"))


def node_actions(nodes, current=None, state="present", cordon=False, drain=False,
                 drain_timeout=DRAIN_TIMEOUT_DEFAULT, base=None):
    """``[{node, action, argv}]`` of the cordon / drain (present) or uncordon (absent) of each node.

    ``current``: node -> its object, or None when unknown (then every command
    is planned). ``base``: kubectl and its global flags (``--kubeconfig``,
    ``--context``). A drain is planned whenever asked: whether pods are left
    on the node only kubectl knows.
    """
    check_drain_timeout(drain_timeout)
    base = list(base or ["kubectl"])
    current = current or {}
    plan = []
    for item in nodes or []:
        node = q.check_k8s_node(item["node"])
        obj = current.get(node)
        known = obj is not None
        if state == "present":
            if cordon and not drain and (not known or not _unschedulable(obj)):
                plan.append({"node": node, "action": "cordon", "argv": base + ["cordon", node]})
            if drain:
                plan.append({"node": node, "action": "drain", "argv": base + [
                    "drain", node, "--ignore-daemonsets", "--timeout=%ds" % drain_timeout]})
        elif (cordon or drain) and (not known or _unschedulable(obj)):
            plan.append({"node": node, "action": "uncordon", "argv": base + ["uncordon", node]})
    return plan


def drain_outcome(rc, stdout, stderr):
    """What a ``kubectl drain`` said: ``{outcome, pods, message}``.

    ``pods``: ``namespace/name`` of the pods a PodDisruptionBudget kept, or
    that were still on the node when it stopped. ``message``: kubectl's own
    reason, one line.
    """
    text = "%s\n%s" % (stdout or "", stderr or "")
    blocked = []
    for name, namespace, _why in _PDB.findall(text):
        if "%s/%s" % (namespace, name) not in blocked:
            blocked.append("%s/%s" % (namespace, name))
    if rc == 0:
        return {"outcome": "drained", "pods": [], "message": "drained"}
    pending = []
    for line in text.splitlines():
        match = _PENDING_POD.match(line.strip())
        if match:
            pending.append(match.group(1))
    if "global timeout reached" in text or "timed out" in text:
        timed_out = []
        for line in text.splitlines():
            for name, namespace in _EVICTING.findall(line) if "global timeout reached" in line else ():
                if "%s/%s" % (namespace, name) not in timed_out:
                    timed_out.append("%s/%s" % (namespace, name))
        stuck = blocked or timed_out or pending
        if blocked:
            return {"outcome": "pdb_blocked", "pods": stuck, "message": q.clean_reason(
                "eviction refused by a PodDisruptionBudget until the timeout: %s" % ", ".join(stuck), 500)}
        return {"outcome": "timeout", "pods": stuck, "message": q.clean_reason(
            "pods not evicted before the timeout: %s" % (", ".join(stuck) or "unknown"), 500)}
    refused = _REFUSED.search(text)
    if refused:
        return {"outcome": "refused", "pods": pending, "message": q.clean_reason(refused.group(0), 500)}
    last = [line.strip() for line in (stderr or "").splitlines() if line.strip()]
    return {"outcome": "failed", "pods": pending,
            "message": q.clean_reason(last[-1] if last else "kubectl drain failed (rc %s)" % rc, 500)}


def outcome_line(node, outcome):
    """One line for the report and the record: what the drain of ``node`` came to."""
    if outcome["outcome"] == "drained":
        return "drained kubernetes %s" % node
    what = {"pdb_blocked": "blocked by a PodDisruptionBudget", "timeout": "timed out",
            "refused": "refused by kubectl", "failed": "failed"}[outcome["outcome"]]
    return "drain of kubernetes %s %s: %s" % (node, what, outcome["message"])


def with_node_actions(records, actions, dry_run):
    """The ``quarantine`` records with the cordon / drain / uncordon of their node: ``params.node_actions`` (the
    actions) and ``params.drain`` (the drain's outcome, once run); a drain that did not finish is named in the
    cause, never shown as done."""
    out = []
    for record in records or []:
        node = record["params"]["node"]
        acts = [a for a in actions or [] if a.get("node") == node and a["action"] in ("cordon", "drain", "uncordon")]
        if not acts or record["params"].get("backend") != "kubernetes":     # Slurm's drain is its quarantine
            out.append(record)
            continue
        record = dict(record, params=dict(record["params"], node_actions=[a["action"] for a in acts]),
                      evidence=list(record.get("evidence") or []) + [q.show_argv(a["argv"]) for a in acts])
        drained = [a for a in acts if a["action"] == "drain" and a.get("outcome")]
        if dry_run:
            record["cause"] = "%s (would also %s)" % (record["cause"], " and ".join(a["action"] for a in acts))
        elif drained:
            outcome = drained[-1]["outcome"]
            record["params"]["drain"] = outcome
            record["cause"] = "%s; %s" % (record["cause"], outcome_line(node, outcome))
        else:
            done = ", ".join("%sed" % a["action"] for a in acts if "rc" in a)
            record["cause"] = "%s; %s" % (record["cause"], done or "nothing run")
        out.append(record)
    return out


def drain_problems(actions):
    """One message per drain that ran and did not drain its node."""
    return [outcome_line(a["node"], a["outcome"]) for a in actions or []
            if a.get("action") == "drain" and a.get("outcome") and a["outcome"]["outcome"] != "drained"]
