# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubectl STAND-IN (tests only): the node verbs - label, annotate, taint, cordon, uncordon, drain.

Part of tests/lab/kubectl_standin.py (NOT kubectl; it talks to no API server),
which binds itself here (``bind``) for its State, events and refusals.
What these verbs change is kept in ``<state>.nodes`` (node -> labels, annotations, taints, unschedulable) on
top of the configuration's nodes; every call is logged as a ``node`` event (verb, node, its arguments).
``drain`` does what kubectl's does with the stand-in's pods on the node: cordon, then DaemonSet pods are
ignored with --ignore-daemonsets (else refused), a pod without a controller (no ownerReferences) is refused
without --force and one with an emptyDir volume without --delete-emptydir-data, the others are evicted
(deleted, their processes ended) unless a PodDisruptionBudget of the configuration (``"pdbs": [{"namespace":
"ns", "selector": "app=db"}]``, no disruption allowed) covers them: then kubectl's retry message, and after
--timeout its "global timeout reached" error (exit 1).
"""
import fcntl
import json
import os
import sys
import time

K = None     # the stand-in module (kubectl_standin), set by bind()

NODE_VERBS = ("label", "annotate", "taint", "cordon", "uncordon", "drain")
NODE_SWITCHES = {
    "label": {"--overwrite"}, "annotate": {"--overwrite"}, "taint": {"--overwrite"}, "cordon": set(),
    "uncordon": set(),
    "drain": {"--ignore-daemonsets", "--timeout", "--delete-emptydir-data", "--force", "--disable-eviction",
              "--grace-period"},
}
PDB_REFUSAL = "Cannot evict pod as it would violate the pod's disruption budget."


class NodeState:
    """What the node verbs changed, keyed by node, in ``<state>.nodes`` under an exclusive lock."""

    def __init__(self, config):
        self.path = config["state"] + ".nodes"
        self.lock = open(self.path + ".lock", "a+")
        fcntl.flock(self.lock, fcntl.LOCK_EX)
        try:
            with open(self.path) as handle:
                self.nodes = json.load(handle)
        except (IOError, ValueError):
            self.nodes = {}

    def node(self, name, config):
        info = config["nodes"][name]
        return self.nodes.setdefault(name, {"labels": {}, "annotations": {}, "taints": [],
                                            "unschedulable": bool(info.get("unschedulable"))})

    def save(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as handle:
            json.dump(self.nodes, handle)
        os.replace(tmp, self.path)
        self.release()

    def release(self):
        if not self.lock.closed:
            fcntl.flock(self.lock, fcntl.LOCK_UN)
            self.lock.close()


def node_changes(config):
    """{node: what the node verbs changed} (read without waiting for writers' lock: the file is replaced whole)."""
    try:
        with open(config["state"] + ".nodes") as handle:
            return json.load(handle)
    except (IOError, ValueError):
        return {}


def with_node_changes(config, item):
    """A node object of ``nodes_list`` with what the node verbs changed."""
    change = node_changes(config).get(item["metadata"]["name"])
    if not change:
        return item
    labels = dict(item["metadata"]["labels"])
    labels.update(change["labels"])
    item["metadata"]["labels"] = {k: v for k, v in labels.items() if v is not None}
    annotations = {k: v for k, v in change["annotations"].items() if v is not None}
    if annotations:
        item["metadata"]["annotations"] = annotations
    spec = {"unschedulable": True} if change["unschedulable"] else {}
    if change["taints"]:
        spec["taints"] = change["taints"]
    item["spec"] = spec
    return item


def _key_value(verb, item):
    """(key, value or None to remove) of ``label``/``annotate`` ``k=v`` or ``k-``."""
    if item.endswith("-") and "=" not in item:
        return item[:-1], None
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise K.Refused("error: invalid %s format: %s" % (verb, item))
    return key, value


def _set_table(node, verb, items, overwrite):
    table = node["labels" if verb == "label" else "annotations"]
    for item in items:
        key, value = _key_value(verb, item)
        if value is None:
            if table.get(key) is None:
                print('%s "%s" not found.' % (verb, key))
            table[key] = None
        elif table.get(key) not in (None, value) and not overwrite:
            raise K.Refused("error: '%s' already has a value (%s), and --overwrite is false" % (key, table[key]))
        else:
            table[key] = value


def _set_taints(node, name, items, overwrite):
    for item in items:
        remove = item.endswith("-")
        body, _sep, effect = (item[:-1] if remove else item).rpartition(":")
        if not body:
            body, effect = (item[:-1] if remove else item), ""
        key, _sep, value = body.partition("=")
        same = [t for t in node["taints"] if t["key"] == key and (not effect or t["effect"] == effect)]
        if remove:
            if not same:
                raise K.Refused('error: taint "%s" not found' % item[:-1])
            node["taints"] = [t for t in node["taints"] if t not in same]
        elif same and not overwrite:
            raise K.Refused("error: node %s already has %s taint(s) with same effect(s) and --overwrite is "
                            "false" % (name, key))
        else:
            node["taints"] = [t for t in node["taints"] if t not in same] + [
                dict({"key": key, "effect": effect}, **({"value": value} if value else {}))]


def manage_node(config, verb, opts, args):
    if args[:1] in (["node"], ["nodes"], ["no"]):
        args = args[1:]
    if not args:
        raise K.Refused("error: resource(s) were provided, but no name was specified")
    name, items = args[0], args[1:]
    K.log_event(config, {"event": "node", "verb": verb, "node": name, "args": items,
                         "switches": sorted(opts["switches"])})
    if name not in config["nodes"]:
        raise K.Refused('Error from server (NotFound): nodes "%s" not found' % name)
    if verb == "drain":
        return drain_node(config, opts, name)
    state = NodeState(config)
    try:
        node = state.node(name, config)
        overwrite = "overwrite" in opts["switches"]
        if verb in ("label", "annotate"):
            _set_table(node, verb, items, overwrite)
            done = "labeled" if verb == "label" else "annotated"
        elif verb == "taint":
            _set_taints(node, name, items, overwrite)
            done = "tainted" if not items[-1].endswith("-") else "untainted"
        else:
            was = node["unschedulable"]
            node["unschedulable"] = verb == "cordon"
            done = ("already " if was == node["unschedulable"] else "") + verb + "ed"
        state.save()
    finally:
        state.release()
    print("node/%s %s" % (name, done))
    return 0


def _pdb_covers(config, pod):
    meta = pod["metadata"]
    return any(pdb.get("namespace", "default") == meta.get("namespace", "default")
               and K.label_match(meta.get("labels") or {}, pdb.get("selector")) for pdb in config.get("pdbs") or [])


def _drain_refusal(pods, switches):
    """kubectl's refusal of the pods it will not delete, or None."""
    unmanaged = ["%s/%s" % (p["metadata"].get("namespace", "default"), p["metadata"]["name"]) for p in pods
                 if not p["metadata"].get("ownerReferences")]
    local = ["%s/%s" % (p["metadata"].get("namespace", "default"), p["metadata"]["name"]) for p in pods
             if any("emptyDir" in v for v in p["spec"].get("volumes") or [])]
    problems = []
    if unmanaged and "force" not in switches:
        problems.append("cannot delete Pods that declare no controller (use --force to override): %s"
                        % ", ".join(unmanaged))
    if local and "delete-emptydir-data" not in switches:
        problems.append("cannot delete Pods with local storage (use --delete-emptydir-data to override): %s"
                        % ", ".join(local))
    return ", ".join(problems) or None


def _drain_fails(name, error, pending=()):
    if pending:
        sys.stderr.write("There are pending pods in node \"%s\" when an error occurred: %s\n" % (name, error))
        for pod in pending:
            sys.stderr.write("pod/%s\n" % pod)
    sys.stderr.write("error: unable to drain node \"%s\" due to error: %s, continuing command...\n"
                     "There are pending nodes to be drained:\n %s\n" % (name, error, name))
    raise K.Refused("error: %s" % error)


def drain_node(config, opts, name):
    switches = opts["switches"]
    timeout = float(str(switches.get("timeout", "0s")).rstrip("s") or 0)
    nodes = NodeState(config)
    nodes.node(name, config)["unschedulable"] = True
    nodes.save()
    print("node/%s cordoned" % name)
    state = K.State(config["state"])
    on_node = [(key, pod) for key, pod in sorted(state.pods.items()) if pod["spec"].get("nodeName") == name]
    daemons = [(k, p) for k, p in on_node
               if any(o.get("kind") == "DaemonSet" for o in p["metadata"].get("ownerReferences") or [])]
    others = [(k, p) for k, p in on_node if (k, p) not in daemons]
    if daemons and "ignore-daemonsets" not in switches:
        state.release()
        _drain_fails(name, "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): %s"
                     % ", ".join(k for k, _p in daemons))
    refusal = _drain_refusal([p for _k, p in others], switches)
    if refusal:
        state.release()
        _drain_fails(name, refusal)
    if daemons:
        sys.stderr.write("Warning: ignoring DaemonSet-managed Pods: %s\n" % ", ".join(k for k, _p in daemons))
    blocked = [(k, p) for k, p in others if _pdb_covers(config, p) and "disable-eviction" not in switches]
    for key, pod in others:
        print("evicting pod %s" % key)
        if (key, pod) in blocked:
            continue
        del state.pods[key]
        K.log_event(config, {"event": "delete", "pod": key, "killed": K.end_pod_processes(key), "by": "drain"})
    state.save()
    for key, pod in others:
        if (key, pod) not in blocked:
            print("pod/%s evicted" % pod["metadata"]["name"])
    if not blocked:
        print("node/%s drained" % name)
        return 0
    for key, pod in blocked:
        sys.stderr.write("error when evicting pods/\"%s\" -n \"%s\" (will retry after 5s): %s\n"
                         % (pod["metadata"]["name"], key.split("/")[0], PDB_REFUSAL))
    # kubectl retries every 5 s until --timeout (0: for ever; the stand-in stops after a day)
    time.sleep(timeout if timeout > 0 else 86400)
    key, pod = blocked[0]
    error = "error when evicting pods/\"%s\" -n \"%s\": global timeout reached: %ds" % (
        pod["metadata"]["name"], key.split("/")[0], timeout)
    return _drain_fails(name, error, [p["metadata"]["name"] for _k, p in blocked])


def bind(standin):
    """Called by the stand-in at import: its State, log_event, Refused...; its parser learns the node verbs."""
    global K  # pylint: disable=global-statement
    K = standin
    standin.VERB_SWITCHES.update(NODE_SWITCHES)
