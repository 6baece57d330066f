# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Quarantine the nodes a check found bad (pure: what to do, as argv lists and text).

Opt-in (``commcheck_quarantine: true``) and dry-run by default:

- Kubernetes: label each bad node ``commcheck.clusterops.io/result=fail``,
  put the reason in the annotation ``commcheck.clusterops.io/reason``, and
  optionally taint it (``commcheck.clusterops.io/result=fail:NoSchedule``),
  each as a ``kubectl`` argv list; :func:`kubectl_plan` compares with the
  node's current labels / annotations / taints so only what is missing runs.
  ``state=absent`` removes them again.
- Slurm: ``scontrol update NodeName=<n> State=DRAIN Reason=<reason>``
  (``State=RESUME`` for absent), each as an argv list; a dry run shows them,
  an executed run runs them one by one. No script is ever written.

:func:`bad_nodes` picks the nodes from a localization result (components
``host`` and ``rail`` by default; ``flaky`` never), from the run's culprits
(``culprits.py``; a culprit ``nic`` is a ``rail`` here), from ``finding``
records, or from a plain list.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.rule_errors import raised_as
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

LABEL_KEY = "commcheck.clusterops.io/result"
ANNOTATION_KEY = "commcheck.clusterops.io/reason"
LABEL_VALUE = "fail"
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
DEFAULT_COMPONENTS = ("host", "rail")
COMPONENTS = ("host", "rail", "link", "fabric", "fleet")
CULPRIT_COMPONENT = {"nic": "rail"}
FINDING_COMPONENT = {"bad_node": "host", "bad_nic": "rail", "bad_link": "link", "fabric": "fabric", "fleet": "fleet"}
MAX_REASON = 1024
SLURM_REASON_MAX = 256

# qualified label / annotation keys: optional DNS prefix + "/" + name
_KEY_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
# Slurm node names: host names (letters, digits, - _ .); no ',', '=', '[' or
# spaces, which scontrol would read as a list, another field or a host range.
_SLURM_NODE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_CONTROL = re.compile("(?:%s)+" % rules.CONTROL_CHARACTERS.pattern)


class QuarantineError(rules.OptionError):
    """Bad input (reported before anything runs)."""


def rule(check, *args, **kwargs):
    """Run an option_rules check; its OptionError becomes a QuarantineError (same message)."""
    return raised_as(QuarantineError, check, *args, **kwargs)


def check_key(key, what="label_key"):
    """A qualified Kubernetes key (prefix/name); raises QuarantineError."""
    if not isinstance(key, str) or not key:
        raise QuarantineError("%s must be a non-empty string" % what)
    rule(rules.check_not_flag, what, key)
    prefix, _sep, name = key.rpartition("/")
    if not _KEY_NAME.match(name) or (prefix and not _is_dns_subdomain(prefix)):
        raise QuarantineError("%s %s is not a valid Kubernetes key (prefix/name)" % (what, rules.show(key)))
    return key


def _is_dns_subdomain(text):
    try:
        rules.check_name("prefix", text, "k8s_name")
        return True
    except rules.OptionError:
        return False


def clean_reason(text, limit=MAX_REASON):
    """One line of printable text, at most ``limit`` characters."""
    text = _CONTROL.sub(" ", str(text or "")).strip()
    text = re.sub(r"\s+", " ", text)
    if len(text) > limit:
        text = text[:limit - 3].rstrip() + "..."
    return text


def _check_components(components):
    for comp in components or ():
        if comp not in COMPONENTS:
            raise QuarantineError("components must be among %s, got %s" % (", ".join(COMPONENTS), rules.show(comp)))


def _fault_from_entry(entry):
    """(component, host, peer, reason) named by one list entry, or None for a record that names no fault."""
    if isinstance(entry, str):
        return ("host", entry, None, "named for quarantine")
    if isinstance(entry, dict) and entry.get("kind") == "finding":
        params = entry.get("params") or {}
        comp = params.get("component") or FINDING_COMPONENT.get(params.get("finding"))
        return (comp, entry.get("host"), entry.get("peer"), entry.get("cause"))
    if isinstance(entry, dict) and entry.get("kind"):
        return None    # other records (pair results, summaries) name no fault
    if isinstance(entry, dict) and "component" in entry and "verdict" in entry:
        return _fault_from_culprit(entry)
    if isinstance(entry, dict) and entry.get("host"):
        return (entry.get("component", "host"), entry["host"], None, entry.get("reason") or "named for quarantine")
    raise QuarantineError("cannot read a bad node from %s" % rules.show(entry))


def _fault_from_culprit(entry):
    """A culprit (``culprits.culprits``): a flaky one names no fault; its ``nic`` is quarantine's ``rail``."""
    if entry.get("verdict") != "fail":
        return None
    comp = CULPRIT_COMPONENT.get(entry["component"], entry["component"])
    return (comp, entry.get("host"), entry.get("peer"), entry.get("cause") or "named for quarantine")


def _faults(source, option=None):
    """[(component, host, peer, reason)] from a localization result or a list of findings / hosts.

    A list entry that cannot be read, or that names an empty host ('' or blanks), is refused with its
    index (``option[N]``), never dropped.
    """
    if isinstance(source, dict) and "components" in source:
        return [(comp.get("component"), comp.get("host"), comp.get("peer"), comp.get("cause"))
                for comp in source.get("components") or []]
    if isinstance(source, (list, tuple)):
        faults = []
        for index, entry in enumerate(source):
            where = "%s[%d]" % (option or "entry", index)
            try:
                fault = _fault_from_entry(entry)
            except QuarantineError as exc:
                raise QuarantineError("%s: %s" % (where, exc))
            if isinstance(entry, str) and not entry.strip():
                raise QuarantineError("%s: %s is empty: name a host or remove the item" % (where, rules.show(entry)))
            if fault is not None:
                faults.append(fault)
        return faults
    if source is not None:
        raise QuarantineError("expected a localization result or a list of findings / hosts, got %s"
                              % type(source).__name__)
    return []


def _nodes_by_host(faults, components, node_names):
    """host -> {host, node, reasons, components} for the faults of the chosen components (a link names both ends)."""
    nodes = {}
    for comp, host, peer, reason in faults:
        if comp not in components:
            continue
        for name in ([host, peer] if comp == "link" else [host]):
            if not name or name == "*":
                continue
            entry = nodes.setdefault(name, {"host": name, "node": node_names.get(name, name), "reasons": [],
                                            "components": []})
            if reason and reason not in entry["reasons"]:
                entry["reasons"].append(reason)
            if comp not in entry["components"]:
                entry["components"].append(comp)
    return nodes


def bad_nodes(source, components=DEFAULT_COMPONENTS, node_names=None, option=None):
    """[{node, host, reason, component}] from a localization result, finding records, or a list.

    ``source``: a localization result (``components``), a list of records
    (``kind: finding`` with ``params.finding`` / ``params.component``), or a
    list of host names / ``{host, reason}`` dicts. ``components``: which
    kinds of fault quarantine a node (a ``link`` quarantines both ends).
    ``node_names``: inventory host -> node name (Kubernetes or Slurm).
    """
    _check_components(components)
    nodes = _nodes_by_host(_faults(source, option), components, node_names or {})
    out = []
    for name in sorted(nodes, key=natural_key):
        entry = nodes[name]
        out.append({"host": entry["host"], "node": entry["node"], "components": entry["components"],
                    "reason": clean_reason("commcheck: " + "; ".join(entry["reasons"] or ["found bad"]))})
    return out


def kubectl_base(kubectl, kubeconfig=None, context=None):
    """kubectl and its global flags (``--kubeconfig``, ``--context``), each checked; raises QuarantineError."""
    argv = [rule(rules.check_program, "kubectl_binary", kubectl or "kubectl", "kubectl", must_exist=False)]
    if kubeconfig:
        argv += ["--kubeconfig", rule(rules.check_config_path, "kubeconfig", kubeconfig, True)]
    if context:
        argv += ["--context", rule(rules.check_name, "kube_context", context, "k8s_context")]
    return argv


def check_k8s_node(name, where="node"):
    """A Kubernetes node name (RFC 1123 subdomain), never a flag."""
    try:
        return rules.check_name(where, name, "k8s_name")
    except rules.OptionError:
        raise QuarantineError("%s %s is not a valid Kubernetes node name (RFC 1123 subdomain, not starting "
                              "with '-')" % (where, rules.show(name)))


def _taint_text(key, value, effect):
    return "%s=%s:%s" % (key, value, effect)


def _check_plan_options(state, taint_effect, label_key, annotation_key, label_value):
    if state not in ("present", "absent"):
        raise QuarantineError("state must be present or absent, got %s" % rules.show(state))
    if taint_effect not in TAINT_EFFECTS:
        raise QuarantineError("taint_effect must be one of %s, got %s" % (", ".join(TAINT_EFFECTS),
                                                                          rules.show(taint_effect)))
    check_key(label_key, "label_key")
    check_key(annotation_key, "annotation_key")
    rule(rules.check_name, "label value", label_value or "", "k8s_label_value")


class _Marks(object):
    """What a node object already carries of the quarantine: label, annotation, taint (None: unknown node)."""

    def __init__(self, obj, label_key, taint_effect):
        meta = (obj or {}).get("metadata") or {}
        taints = ((obj or {}).get("spec") or {}).get("taints") or []
        self.known = obj is not None
        self.labels = meta.get("labels") or {}
        self.annotations = meta.get("annotations") or {}
        self.has_taint = any(t.get("key") == label_key and t.get("effect") == taint_effect for t in taints)


def _mark_actions(node, item, marks, taint, keys, base):
    """(action, kubectl arguments) that put the label, annotation and taint that ``marks`` lacks."""
    label_key, annotation_key, label_value, taint_effect = keys
    reason = clean_reason(item.get("reason") or "commcheck: found bad")
    out = []
    if not marks.known or marks.labels.get(label_key) != label_value:
        out.append(("label", ["label", "node", node, "%s=%s" % (label_key, label_value), "--overwrite"]))
    if not marks.known or marks.annotations.get(annotation_key) != reason:
        out.append(("annotate", ["annotate", "node", node, "%s=%s" % (annotation_key, reason), "--overwrite"]))
    if taint and (not marks.known or not marks.has_taint):
        out.append(("taint", ["taint", "node", node, _taint_text(label_key, label_value, taint_effect),
                              "--overwrite"]))
    return [{"node": node, "action": action, "argv": base + args} for action, args in out]


def _unmark_actions(node, marks, taint, keys, base):
    """(action, kubectl arguments) that remove the label, annotation and taint that ``marks`` has."""
    label_key, annotation_key, _label_value, taint_effect = keys
    out = []
    if not marks.known or label_key in marks.labels:
        out.append(("unlabel", ["label", "node", node, "%s-" % label_key]))
    if not marks.known or annotation_key in marks.annotations:
        out.append(("unannotate", ["annotate", "node", node, "%s-" % annotation_key]))
    if taint and (not marks.known or marks.has_taint):
        out.append(("untaint", ["taint", "node", node, "%s:%s-" % (label_key, taint_effect)]))
    return [{"node": node, "action": action, "argv": base + args} for action, args in out]


def kubectl_plan(nodes, current=None, state="present", taint=False, taint_effect="NoSchedule", kubectl="kubectl",
                 kubeconfig=None, context=None, label_key=LABEL_KEY, annotation_key=ANNOTATION_KEY,
                 label_value=LABEL_VALUE):
    """kubectl argv lists that bring ``nodes`` to ``state``.

    ``current``: node -> the node object (``kubectl get node -o json``) or
    None when unknown (then every command is planned). Returns
    ``[{node, action, argv}]``; actions: ``label``, ``annotate``, ``taint``
    and their removals (``unlabel``, ``unannotate``, ``untaint``).
    """
    _check_plan_options(state, taint_effect, label_key, annotation_key, label_value)
    base = kubectl_base(kubectl, kubeconfig, context)
    keys = (label_key, annotation_key, label_value, taint_effect)
    current = current or {}
    plan = []
    for item in nodes or []:
        node = check_k8s_node(item["node"])
        marks = _Marks(current.get(node), label_key, taint_effect)
        if state == "present":
            plan += _mark_actions(node, item, marks, taint, keys, base)
        else:
            plan += _unmark_actions(node, marks, taint, keys, base)
    return plan


def kubectl_get_argv(node, kubectl="kubectl", kubeconfig=None, context=None):
    """argv that reads a node's current object."""
    return kubectl_base(kubectl, kubeconfig, context) + ["get", "node", check_k8s_node(node), "-o", "json"]


def parse_node_json(text):
    """The node object from ``kubectl get node -o json`` output, or None."""
    try:
        obj = json.loads(text or "")
    except ValueError:
        return None
    return obj if isinstance(obj, dict) and obj.get("kind") in ("Node", None) else None


def check_slurm_node(name, where="node"):
    """A Slurm node name (letters, digits, - _ .), never a flag, a list or a host range."""
    if not isinstance(name, str) or not _SLURM_NODE.match(name):
        raise QuarantineError("%s %s is not a valid Slurm node name (letters, digits, - _ .)"
                              % (where, rules.show(name)))
    return name


def slurm_argvs(nodes, state="present", scontrol="scontrol"):
    """``scontrol update`` argv lists: drain (present) or resume (absent) each node."""
    if state not in ("present", "absent"):
        raise QuarantineError("state must be present or absent, got %s" % rules.show(state))
    scontrol = rule(rules.check_program, "scontrol_binary", scontrol or "scontrol", "scontrol", must_exist=False)
    out = []
    for item in nodes or []:
        node = check_slurm_node(item["node"])
        if state == "present":
            reason = clean_reason(item.get("reason") or "commcheck: found bad", SLURM_REASON_MAX)
            out.append({"node": node, "action": "drain", "argv": [
                scontrol, "update", "NodeName=%s" % node, "State=DRAIN", "Reason=%s" % reason]})
        else:
            out.append({"node": node, "action": "resume", "argv": [
                scontrol, "update", "NodeName=%s" % node, "State=RESUME"]})
    return out


def shown_actions(actions):
    """The actions as results, reports and records show them: a kubeconfig's path is never shown."""
    return [dict(item, argv=rules.withhold_secret_paths(item["argv"])) for item in actions or []]


def sh_quote(text):
    """POSIX shell single quoting, for showing an argv to a person (never to run it)."""
    text = str(text)
    if text and re.match(r"^[A-Za-z0-9_./=:,+@%-]+$", text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


def show_argv(argv):
    """An argv as one line a person can read (and paste)."""
    return " ".join(sh_quote(arg) for arg in argv)


def report_lines(plan, backend, dry_run):
    """Human-readable lines for the report: what was (or would be) done."""
    head = "quarantine (%s, %s): %d action(s)" % (backend, "dry run" if dry_run else "applied", len(plan))
    lines = [head]
    for item in plan:
        line = "%s %s: %s" % (item["action"], item["node"], show_argv(item["argv"]))
        if "rc" in item:
            line += " (rc %s)" % item["rc"]
        lines.append(line)
    return lines


def quarantine_records(nodes, actions, backend, dry_run, state="present"):
    """One ``quarantine`` record per node (verdict ``warn``): what was (or would be) done and why."""
    out = []
    for node in nodes or []:
        acts = [a for a in actions or [] if a.get("node") == node["node"]]
        if state == "present":
            what = "drain" if backend == "slurm" else "label%s" % (
                " and taint" if any(a["action"] == "taint" for a in acts) else "")
        else:
            what = "resume" if backend == "slurm" else "release"
        if dry_run:
            head = "dry run: would %s %s %s" % (what, backend, node["node"])
        elif acts:
            head = "%s %s %s" % ({"drain": "drained", "resume": "resumed", "release": "released"}.get(
                what, "labelled" + (" and tainted" if "taint" in what else "")), backend, node["node"])
        else:
            head = "%s %s was already %s" % (backend, node["node"], "quarantined" if state == "present" else
                                             "released")
        out.append({"kind": "quarantine", "host": node["host"], "peer": None,
                    "params": {"backend": backend, "node": node["node"], "dry_run": bool(dry_run), "state": state,
                               "components": list(node.get("components") or [])},
                    "metrics": {"actions": len(acts)}, "verdict": "warn",
                    "cause": "%s: %s" % (head, node.get("reason")),
                    "fix": "repair the component named in the reason, rerun the check, then release the node "
                           "(commcheck_quarantine_state=absent)" if state == "present" else None,
                    "evidence": [show_argv(item["argv"]) for item in acts]})
    return out
