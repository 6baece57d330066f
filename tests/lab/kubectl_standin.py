#!/usr/bin/env python3
"""kubectl STAND-IN for the lab (tests only; never shipped in plugins/).

It understands the subset of kubectl the collection uses and maps it onto
the lab:

- ``exec POD [-c C] -- argv…`` runs argv in the lab host (network namespace)
  that stands for the pod's node: ``ip netns exec NS argv…``;
- ``apply -f FILE``, ``get pods/pod …  -o json``, ``delete pod …`` and
  ``wait`` work on a JSON state file instead of an API server. Pods are Ready
  at once; their IPs are the lab host's addresses (rail 0 as pod IP, rail 1+
  as Multus secondary networks when the pod asks for networks).

Configuration: env COMMCHECK_KUBECTL_STANDIN (a JSON file):
``{"state": "/path/state.json", "nodes": {"node1": {"netns": "ns", "addresses": ["10.0.0.2", …]}}}``
"""
import fcntl
import json
import os
import sys

NETWORKS = "k8s.v1.cni.cncf.io/networks"
STATUS = "k8s.v1.cni.cncf.io/network-status"


def load_config():
    path = os.environ.get("COMMCHECK_KUBECTL_STANDIN")
    if not path:
        sys.exit("kubectl stand-in: COMMCHECK_KUBECTL_STANDIN is not set")
    with open(path) as handle:
        return json.load(handle)


class State:
    def __init__(self, path):
        self.path = path
        self.lock = open(path + ".lock", "a+")
        fcntl.flock(self.lock, fcntl.LOCK_EX)
        try:
            with open(path) as handle:
                self.pods = json.load(handle)
        except (IOError, ValueError):
            self.pods = {}

    def save(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as handle:
            json.dump(self.pods, handle)
        os.replace(tmp, self.path)
        fcntl.flock(self.lock, fcntl.LOCK_UN)


def parse(argv):
    opts = {"namespace": "default", "selector": None, "output": None, "files": [], "container": None}
    rest = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest.append(argv[i:])
            break
        if arg in ("-n", "--namespace"):
            opts["namespace"] = argv[i + 1]
            i += 2
            continue
        if arg in ("--kubeconfig", "--context"):
            opts[arg[2:]] = argv[i + 1]
            i += 2
            continue
        if arg in ("-l", "--selector"):
            opts["selector"] = argv[i + 1]
            i += 2
            continue
        if arg == "-o":
            opts["output"] = argv[i + 1]
            i += 2
            continue
        if arg == "-f":
            opts["files"].append(argv[i + 1])
            i += 2
            continue
        if arg == "-c":
            opts["container"] = argv[i + 1]
            i += 2
            continue
        if arg.startswith("--") and "=" in arg:
            key, value = arg[2:].split("=", 1)
            opts[key] = value
            i += 1
            continue
        rest.append(arg)
        i += 1
    return opts, rest


def matches(pod, namespace, selector):
    if pod["metadata"].get("namespace", "default") != namespace:
        return False
    if not selector:
        return True
    labels = pod["metadata"].get("labels") or {}
    for term in selector.split(","):
        key, _, value = term.partition("=")
        if labels.get(key) != value:
            return False
    return True


def schedule(pod, config):
    node = pod["spec"].get("nodeName")
    info = config["nodes"].get(node)
    status = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                                                  "reason": "Unschedulable", "message": "node %s not found" % node}]}
    if info:
        addresses = info["addresses"]
        status = {"phase": "Running", "podIP": addresses[0], "hostIP": addresses[0],
                  "conditions": [{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "True"}],
                  "containerStatuses": [{"name": "commcheck", "ready": True, "state": {"running": {}}}]}
        networks = (pod["metadata"].get("annotations") or {}).get(NETWORKS)
        if networks and not pod["spec"].get("hostNetwork"):
            entries = [{"name": "lab-default", "interface": "eth0", "ips": [addresses[0]], "default": True}]
            for idx, net in enumerate(networks.split(",")):
                if idx + 1 < len(addresses):
                    entries.append({"name": net.split("@")[0], "interface": "net%d" % (idx + 1),
                                    "ips": [addresses[idx + 1]]})
            pod["metadata"].setdefault("annotations", {})[STATUS] = json.dumps(entries)
    pod["status"] = status
    return pod


def main(argv):
    config = load_config()
    opts, rest = parse(argv)
    if not rest:
        sys.exit("kubectl stand-in: no command")
    verb = rest[0]
    if verb == "exec":
        pod_name = rest[1]
        command = rest[-1][1:] if isinstance(rest[-1], list) else []
        state = State(config["state"])
        pod = state.pods.get("%s/%s" % (opts["namespace"], pod_name))
        fcntl.flock(state.lock, fcntl.LOCK_UN)
        if not pod:
            sys.stderr.write('Error from server (NotFound): pods "%s" not found\n' % pod_name)
            return 1
        info = config["nodes"][pod["spec"]["nodeName"]]
        os.execvp("ip", ["ip", "netns", "exec", info["netns"]] + command)
    state = State(config["state"])
    try:
        if verb == "apply" or verb == "create":
            for path in opts["files"]:
                with open(path) as handle:
                    doc = json.load(handle)
                for item in doc.get("items", [doc]) if doc.get("kind") == "List" else [doc]:
                    item["metadata"].setdefault("namespace", opts["namespace"])
                    key = "%s/%s" % (item["metadata"]["namespace"], item["metadata"]["name"])
                    state.pods[key] = schedule(item, config)
                    print("pod/%s configured" % item["metadata"]["name"])
            return 0
        if verb == "get":
            names = [n for n in rest[2:] if not isinstance(n, list)]
            items = [p for k, p in sorted(state.pods.items()) if matches(p, opts["namespace"], opts["selector"])
                     and (not names or p["metadata"]["name"] in names)]
            if names and not items and opts.get("ignore-not-found") != "true":
                sys.stderr.write('Error from server (NotFound): pods "%s" not found\n' % names[0])
                return 1
            if opts["output"] == "json":
                if names and len(names) == 1 and items:
                    print(json.dumps(items[0]))
                else:
                    print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
            else:
                for pod in items:
                    print(pod["metadata"]["name"])
            return 0
        if verb == "delete":
            names = [n for n in rest[2:] if not isinstance(n, list)]
            for key, pod in list(state.pods.items()):
                if matches(pod, opts["namespace"], opts["selector"]) and (not names or pod["metadata"]["name"] in names):
                    del state.pods[key]
                    print('pod "%s" deleted' % pod["metadata"]["name"])
            return 0
        if verb == "wait":
            return 0
        sys.stderr.write("kubectl stand-in: unsupported command %s\n" % verb)
        return 1
    finally:
        state.save()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
