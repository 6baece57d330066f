#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubectl STAND-IN for the lab (tests only; never shipped in plugins/).

This is NOT kubectl and talks to no API server. It understands the subset of
kubectl the collection uses and maps it onto the lab, behaving like kubectl
where the collection depends on it:

- ``exec POD [-c C] -- argv…`` runs argv in the lab host that stands for the
  pod's node: in its network (and UTS) namespace (``nsenter -t PID -n -u``
  when the node has a ``pid``, else ``ip netns exec NS``), with the pod's own
  environment (the node's ``env``, like an image's ENV; never the caller's),
  stdin closed. Like real kubectl exec, the command is NOT a child of the
  local process group: killing the local kubectl leaves it running (only a
  remote ``kill`` or the pod's deletion ends it). The exit status comes back
  (128+N for a signal), with kubectl's ``command terminated with exit code N``
  on stderr. Each exec is logged in the events file.
- ``apply -f FILE`` (a Pod or a List of Pods), ``get pods|pod NAME… [-l SEL]
  -o json``, ``get nodes [-l SEL] -o json``, ``delete pod NAME…|-l SEL`` and
  ``wait`` work on a JSON state file instead of an API server. Pods on a
  known node are Running and Ready at once; pod IP = the node's first address
  (rail 0); with ``k8s.v1.cni.cncf.io/networks`` the Multus
  ``network-status`` annotation lists rail 1, 2… as the secondary networks'
  IPs. A pod on an unknown node stays Pending (Unschedulable). Pods are
  immutable: applying a different spec to an existing pod is refused, as the
  API server does.
- Deleting a pod kills every process that was started in it (they carry
  ``COMMCHECK_STANDIN_POD=<ns>/<pod>`` in their environment), as the kubelet
  does when a container ends; what it had to kill is logged as a ``delete``
  event (tests assert that nothing was left for it to kill).
- Unknown flags are refused (``error: unknown flag``), a ``--kubeconfig`` file
  must exist, a ``-c`` container must be one of the pod's.
- Credentials, only when the configuration has ``auth``: like real kubectl, a
  call loads its kubeconfig from ``--kubeconfig``, else the files of
  ``KUBECONFIG``, else ``~/.kube/config``, else the pod's service account
  (``KUBERNETES_SERVICE_HOST``/``_PORT`` and a ``token`` file, in
  ``auth.service_account_dir`` instead of /var/run/secrets/kubernetes.io/
  serviceaccount); takes ``--context`` or the current context; and reaches
  "the API server" only when that context's cluster has ``auth.server`` as its
  server, trusts ``auth.ca`` (the PEM, from ``certificate-authority`` or
  ``-data``; or skips verification) and its user has ``auth.token``
  (``token`` or ``tokenFile``). Otherwise it fails with real kubectl's message
  (``The connection to the server localhost:8080 was refused ...``, ``error:
  You must be logged in to the server ...``, ``x509: certificate signed by
  unknown authority`` ...). Every call is logged as a ``call`` event with the
  verb, the kubeconfig's path and mode, and whether it was authenticated
  (never the token).
- ``label``, ``annotate``, ``taint``, ``cordon``, ``uncordon`` and ``drain``
  of nodes: tests/lab/kubectl_standin_nodes.py.
- ``version --client`` prints kubectl's ``Client Version:`` line (the version
  names the stand-in), which the collection reads before kubectl acts.

Configuration: env ``COMMCHECK_KUBECTL_STANDIN`` names a JSON file::

  {"state": "/path/state.json",          # pods; events go to <state>.events (JSON lines)
   "nodes": {"node1": {"netns": "ns", "pid": 1234, "addresses": ["10.0.0.2", ...],   # no netns/pid: this machine
                       "env": {"PATH": "..."}, "labels": {"k": "v"},
                       "ready": true, "unschedulable": false}},
   "auth": {"server": "https://api.example:6443", "token": "...", "ca": "-----BEGIN CERTIFICATE-----...",
            "service_account_dir": "/path"}}   # optional: calls need these credentials
"""
import base64
import fcntl
import json
import os
import signal
import subprocess
import sys
import time

import kube_jobs_standin as kube_jobs  # the stand-in's own directory is on sys.path (it runs as a script)
import kubectl_standin_nodes as node_verbs  # pylint: disable=import-error

NETWORKS = "k8s.v1.cni.cncf.io/networks"
STATUS = "k8s.v1.cni.cncf.io/network-status"
MARKER = "COMMCHECK_STANDIN_POD"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

GLOBAL_FLAGS = {"-n": "namespace", "--namespace": "namespace", "--kubeconfig": "kubeconfig",
                "--context": "context", "--request-timeout": "request-timeout"}
VERB_FLAGS = {
    "exec": {"-c": "container", "--container": "container"},
    "get": {"-l": "selector", "--selector": "selector", "-o": "output", "--output": "output"},
    "apply": {"-f": "files", "--filename": "files"},
    "create": {"-f": "files", "--filename": "files"},
    "delete": {"-l": "selector", "--selector": "selector", "-f": "files"},
    "wait": {"-l": "selector", "--selector": "selector"},
    "logs": {"-c": "container", "--container": "container"},
}
VERB_SWITCHES = {
    "exec": {"-i", "--stdin", "-q", "--quiet"},
    "get": {"--ignore-not-found"},
    "apply": set(),
    "create": set(),
    "delete": {"--ignore-not-found", "--wait", "--now", "--grace-period", "--timeout"},
    "wait": {"--for", "--timeout"},
    "version": {"--client"},
    "logs": set(),
}
# What ``version --client`` prints: kubectl's line, the version naming the stand-in (as k3s's "+k3s1" names k3s).
VERSION = "Client Version: v1.30.0+commcheck-standin\nKustomize Version: v5.0.4\n"


# What kubectl would print on stderr before exiting 1.
Refused = kube_jobs.Refused


def load_config():
    path = os.environ.get("COMMCHECK_KUBECTL_STANDIN")
    if not path:
        raise Refused("kubectl stand-in: COMMCHECK_KUBECTL_STANDIN is not set")
    with open(path) as handle:
        return json.load(handle)


def log_event(config, event):
    event = dict(event, time=round(time.time(), 3), pid=os.getpid())
    with open(config["state"] + ".events", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(json.dumps(event, sort_keys=True) + "\n")


class State:
    """The pods, keyed "namespace/name", in a JSON file under an exclusive lock."""

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
        self.write()
        self.release()

    def write(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as handle:
            json.dump(self.pods, handle)
        os.replace(tmp, self.path)

    def release(self):
        fcntl.flock(self.lock, fcntl.LOCK_UN)


def parse(argv):
    """kubectl's command line: global flags anywhere, the verb, its flags, args, and ``-- argv`` for exec."""
    opts = {"namespace": "default", "files": [], "switches": {}}
    args = []
    command = None
    verb = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            command = argv[i + 1:]
            break
        if arg.startswith("-") and arg != "-":
            name, has_value, value = arg.partition("=")
            flags = dict(GLOBAL_FLAGS, **VERB_FLAGS.get(verb, {}))
            if name in flags:
                if not has_value:
                    if i + 1 >= len(argv):
                        raise Refused("error: flag needs an argument: %s" % name)
                    value = argv[i + 1]
                    i += 1
                key = flags[name]
                if key == "files":
                    opts["files"].append(value)
                else:
                    opts[key] = value
            elif verb and name in VERB_SWITCHES.get(verb, set()):
                opts["switches"][name.lstrip("-")] = value if has_value else "true"
            else:
                raise Refused("error: unknown flag: %s\nSee 'kubectl %s --help' for usage." % (name, verb or ""))
            i += 1
            continue
        if verb is None:
            verb = arg
        else:
            args.append(arg)
        i += 1
    return verb, opts, args, command


def label_match(labels, selector):
    """Equality-based label selectors: k=v, k==v, k!=v, k, !k (comma = and)."""
    for term in [t.strip() for t in (selector or "").split(",") if t.strip()]:
        if "!=" in term:
            key, value = term.split("!=", 1)
            if labels.get(key.strip()) == value.strip():
                return False
        elif "=" in term:
            key, value = term.replace("==", "=").split("=", 1)
            if labels.get(key.strip()) != value.strip():
                return False
        elif term.startswith("!"):
            if term[1:].strip() in labels:
                return False
        elif term not in labels:
            return False
    return True


def pod_matches(pod, namespace, selector):
    if pod["metadata"].get("namespace", "default") != namespace:
        return False
    return label_match(pod["metadata"].get("labels") or {}, selector)


def schedule(pod, config):
    node = pod["spec"].get("nodeName")
    info = config["nodes"].get(node)
    status = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                                                  "reason": "Unschedulable", "message": "node %s not found" % node}]}
    if info and info.get("ready", True):
        addresses = info["addresses"]
        names = [c.get("name") for c in pod["spec"].get("containers") or []]
        status = {"phase": "Running", "podIP": addresses[0], "hostIP": addresses[0],
                  "podIPs": [{"ip": addresses[0]}],
                  "conditions": [{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "True"}],
                  "containerStatuses": [{"name": n, "ready": True, "state": {"running": {}}} for n in names]}
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


def validate_pod(item, path):
    problems = []
    if item.get("apiVersion") != "v1" or item.get("kind") != "Pod":
        problems.append("the stand-in only knows v1 Pods, got %s/%s" % (item.get("apiVersion"), item.get("kind")))
    meta = item.get("metadata") or {}
    if not meta.get("name"):
        problems.append("metadata.name is required")
    containers = (item.get("spec") or {}).get("containers") or []
    if not containers or not all(c.get("name") and c.get("image") for c in containers):
        problems.append("spec.containers needs a name and an image")
    if problems:
        raise Refused('error: error validating "%s": %s' % (path, "; ".join(problems)))


def pod_pids(key):
    """Processes started in pod ``key`` (their environment carries the marker)."""
    marker = ("%s=%s" % (MARKER, key)).encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % entry, "rb") as handle:
                environ = handle.read().split(b"\0")
            if marker not in environ:
                continue
            with open("/proc/%s/cmdline" % entry, "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except (IOError, OSError):
            continue
        found.append({"pid": int(entry), "cmdline": cmdline})
    return found


def end_pod_processes(key):
    """What the kubelet does when a pod goes: every process of it is killed."""
    victims = pod_pids(key)
    for proc in victims:
        try:
            os.kill(proc["pid"], signal.SIGKILL)
        except OSError:
            pass
    return victims


def exec_in_pod(config, opts, args, command):
    if not args:
        raise Refused("error: expected 'exec POD_NAME COMMAND [ARG1] [ARG2] ... [ARGN]'.\nPOD_NAME is required "
                      "for exec")
    if not command:
        raise Refused("error: you must specify at least one command for the container")
    state = State(config["state"])
    key = "%s/%s" % (opts["namespace"], args[0])
    pod = state.pods.get(key)
    state.release()
    if not pod:
        raise Refused('Error from server (NotFound): pods "%s" not found' % args[0])
    if "status" not in pod:       # a pod a test wrote into the state file directly
        pod = schedule(pod, config)
    names = [c.get("name") for c in pod["spec"].get("containers") or []]
    container = opts.get("container") or (names[0] if names else None)
    if names and container not in names:
        raise Refused("Error from server (BadRequest): container %s is not valid for pod %s" % (container, args[0]))
    if (pod.get("status") or {}).get("phase") != "Running":
        raise Refused("error: unable to upgrade connection: pod %s is not running" % args[0])
    info = config["nodes"][pod["spec"]["nodeName"]]
    env = {"PATH": SYSTEM_PATH, "HOME": "/root", "HOSTNAME": args[0]}
    env.update({str(k): str(v) for k, v in (info.get("env") or {}).items()})
    env[MARKER] = key
    pid = info.get("pid")
    if pid and os.path.exists("/proc/%d/ns/net" % int(pid)):
        prefix = ["nsenter", "-t", str(int(pid)), "-n", "-u", "--"]
    elif info.get("netns"):
        prefix = ["ip", "netns", "exec", info["netns"]]
    else:
        prefix = []     # a node that is this machine itself (tests without root)
    argv = prefix + ["env", "-i"] + ["%s=%s" % (k, v) for k, v in sorted(env.items())] + list(command)
    log_event(config, {"event": "exec", "pod": key, "container": container,
                       "argv": [a if len(a) <= 300 else a[:300] + "..." for a in command]})
    stdin = None if opts["switches"].get("stdin") or opts["switches"].get("i") else subprocess.DEVNULL
    # Its own session: like a process in a container, it does not die with the local kubectl.
    proc = subprocess.Popen(argv, stdin=stdin, start_new_session=True, close_fds=True)
    rc = proc.wait()
    if rc < 0:
        rc = 128 - rc
    if rc:
        sys.stderr.write("command terminated with exit code %d\n" % rc)
    return rc


def kubeconfig_ok(opts):
    path = opts.get("kubeconfig")
    if path and not os.path.isfile(path):
        raise Refused("error: stat %s: no such file or directory" % path)


NO_SERVER = "The connection to the server localhost:8080 was refused - did you specify the right host or port?"
UNAUTHORIZED = "error: You must be logged in to the server (the server has asked for the client to provide credentials)"


def _read_config(path):
    import yaml  # pylint: disable=import-outside-toplevel
    with open(path) as handle:
        return yaml.safe_load(handle) or {}


def _named(entries, name):
    return next((e for e in entries or [] if e.get("name") == name), None)


def load_kubeconfig(config, opts):
    """kubectl's loading rules: (merged config, source, path of the first file)."""
    paths = [opts["kubeconfig"]] if opts.get("kubeconfig") else \
        [p for p in os.environ.get("KUBECONFIG", "").split(":") if p and os.path.isfile(p)]
    home = os.path.join(os.environ.get("HOME", "/"), ".kube", "config")
    if not paths and os.path.isfile(home):
        paths = [home]
    if paths:
        merged = {"clusters": [], "users": [], "contexts": [], "current-context": None}
        for path in paths:       # the first file that sets an entry wins
            doc = _read_config(path)
            for kind in ("clusters", "users", "contexts"):
                merged[kind] += [e for e in doc.get(kind) or [] if not _named(merged[kind], e.get("name"))]
            merged["current-context"] = merged["current-context"] or doc.get("current-context")
        return merged, "kubeconfig", paths[0]
    sa_dir = config["auth"].get("service_account_dir") or "/var/run/secrets/kubernetes.io/serviceaccount"
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST"), os.environ.get("KUBERNETES_SERVICE_PORT")
    if host and port and os.path.isfile(os.path.join(sa_dir, "token")):
        ca = os.path.join(sa_dir, "ca.crt")
        cluster = {"server": "https://%s:%s" % (host, port)}
        if os.path.isfile(ca):
            cluster["certificate-authority"] = ca
        return {"clusters": [{"name": "in-cluster", "cluster": cluster}],
                "users": [{"name": "in-cluster", "user": {"tokenFile": os.path.join(sa_dir, "token")}}],
                "contexts": [{"name": "in-cluster", "context": {"cluster": "in-cluster", "user": "in-cluster"}}],
                "current-context": "in-cluster"}, "in-cluster", None
    raise Refused(NO_SERVER)


def _trusted_ca(name, cluster):
    """The PEM the cluster entry trusts (None: the system's), as kubectl reads it."""
    if cluster.get("insecure-skip-tls-verify") and (cluster.get("certificate-authority")
                                                    or cluster.get("certificate-authority-data")):
        raise Refused("error: specifying a root certificates file with the insecure flag is not allowed")
    if cluster.get("certificate-authority-data"):
        return base64.b64decode(cluster["certificate-authority-data"]).decode("utf-8", "replace")
    path = cluster.get("certificate-authority")
    if path:
        try:
            with open(path) as handle:
                return handle.read()
        except (IOError, OSError) as exc:
            raise Refused("error: unable to read certificate-authority %s for %s due to open %s: %s"
                          % (path, name, path, (exc.strerror or "").lower()))
    return None


def _token(user):
    if user.get("token"):
        return user["token"]
    if user.get("tokenFile"):
        try:
            with open(user["tokenFile"]) as handle:
                return handle.read().strip()
        except (IOError, OSError) as exc:
            raise Refused("error: open %s: %s" % (user["tokenFile"], (exc.strerror or "").lower()))
    return None


def authenticate(config, verb, opts):
    """Refuse the call as real kubectl would when its kubeconfig does not lead to the configured API server."""
    auth = config["auth"]
    event = {"event": "call", "verb": verb, "source": None, "kubeconfig": None, "authenticated": False}
    try:
        merged, event["source"], path = load_kubeconfig(config, opts)
        if path:
            event.update(kubeconfig=path, mode="%04o" % (os.stat(path).st_mode & 0o7777),
                         dir_mode="%04o" % (os.stat(os.path.dirname(os.path.abspath(path))).st_mode & 0o7777))
        name = opts.get("context") or merged.get("current-context")
        context = (_named(merged["contexts"], name) or {}).get("context") if name else None
        if name and context is None:
            raise Refused("Error in configuration: context was not found for specified context: %s" % name)
        if context is None:
            raise Refused(NO_SERVER)
        cluster = (_named(merged["clusters"], context.get("cluster")) or {}).get("cluster") or {}
        server = cluster.get("server") or "http://localhost:8080"
        ca = _trusted_ca(context.get("cluster"), cluster)
        if server.rstrip("/") != auth["server"].rstrip("/"):
            raise Refused("Unable to connect to the server: dial tcp: lookup %s: no such host"
                          % server.split("://")[-1].split(":")[0].split("/")[0])
        if auth.get("ca") and not cluster.get("insecure-skip-tls-verify") and (ca or "").strip() != auth["ca"].strip():
            raise Refused("Unable to connect to the server: tls: failed to verify certificate: x509: certificate "
                          "signed by unknown authority")
        if _token((_named(merged["users"], context.get("user")) or {}).get("user") or {}) != auth["token"]:
            raise Refused(UNAUTHORIZED)
        event["authenticated"] = True
    finally:
        log_event(config, event)


def main(argv):
    try:
        verb, opts, args, command = parse(argv)
        if verb == "version" and opts["switches"].get("client") and not args:
            sys.stdout.write(VERSION)      # like kubectl: no configuration, no API server
            return 0
        config = load_config()
        if not verb:
            raise Refused("kubectl stand-in: no command")
        kubeconfig_ok(opts)
        if config.get("auth"):
            authenticate(config, verb, opts)
        if verb == "exec":
            return exec_in_pod(config, opts, args, command)
        if command is not None:
            raise Refused("error: unexpected arguments after --")
        if verb in node_verbs.NODE_VERBS:
            return node_verbs.manage_node(config, verb, opts, args)
        return manage(config, verb, opts, args)
    except Refused as exc:
        sys.stderr.write("%s\n" % exc)
        return 1


def nodes_list(config, selector):
    items = []
    for name, info in sorted(config["nodes"].items()):
        labels = {"kubernetes.io/hostname": name}
        labels.update(info.get("labels") or {})
        if not label_match(labels, selector):
            continue
        ready = "True" if info.get("ready", True) else "False"
        items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                      "spec": {"unschedulable": True} if info.get("unschedulable") else {},
                      "status": {"conditions": [{"type": "Ready", "status": ready}],
                                 "addresses": [{"type": "InternalIP", "address": info["addresses"][0]}]}})
    return [node_verbs.with_node_changes(config, item) for item in items]


def resource_names(args):
    """('pods', [names]) from ``pods a b``, ``pod/a``, ``pods/a``."""
    if not args:
        raise Refused("error: you must specify the type of resource")
    kind, _sep, first = args[0].partition("/")
    names = ([first] if first else []) + list(args[1:])
    kind = dict({"pod": "pods", "po": "pods", "pods": "pods", "node": "nodes", "nodes": "nodes", "no": "nodes"},
                **kube_jobs.RESOURCE_KINDS).get(kind)
    if not kind:
        raise Refused('error: the server doesn\'t have a resource type "%s"' % args[0])
    return kind, names


def manage(config, verb, opts, args):
    if verb not in ("apply", "create", "get", "delete", "wait", "logs"):
        raise Refused('error: unknown command "%s" for "kubectl"' % verb)
    if verb == "get":
        kind, names = resource_names(args)
        if kind == "nodes":
            items = [n for n in nodes_list(config, opts.get("selector")) if not names or n["metadata"]["name"] in names]
            unknown = [n for n in names if n not in config["nodes"]]
            if unknown and opts["switches"].get("ignore-not-found") not in ("true", ""):
                raise Refused('Error from server (NotFound): nodes "%s" not found'
                              % unknown[0])
            return output(items, names, opts, "nodes")
    state = State(config["state"])
    jobs = kube_jobs.load(config)
    # the operators' step of this call (MPIJob / Volcano Job: pods, launcher, status)
    if kube_jobs.reconcile(config, state, jobs, schedule, log_event):
        state.write()
        kube_jobs.save(config, jobs)
    try:
        if verb == "logs":
            return kube_jobs.pod_logs(config, state, opts, args)
        if verb in ("apply", "create"):
            if not opts["files"]:
                raise Refused("error: must specify one of -f and -k")
            for path in opts["files"]:
                if path == "-":
                    doc = json.load(sys.stdin)
                else:
                    with open(path) as handle:
                        doc = json.load(handle)
                items = doc.get("items", []) if doc.get("kind") == "List" else [doc]
                for item in items:
                    if not kube_jobs.is_job(item):
                        validate_pod(item, path)
                for item in [i for i in items if kube_jobs.is_job(i)]:
                    print(kube_jobs.apply(config, state, jobs, item, opts["namespace"], log_event))
                kube_jobs.save(config, jobs)
                for item in [i for i in items if not kube_jobs.is_job(i)]:
                    item["metadata"].setdefault("namespace", opts["namespace"])
                    key = "%s/%s" % (item["metadata"]["namespace"], item["metadata"]["name"])
                    old = state.pods.get(key)
                    if old is not None:
                        if verb == "create":
                            raise Refused('Error from server (AlreadyExists): pods "%s" already exists'
                                          % item["metadata"]["name"])
                        if old["spec"] != item["spec"]:
                            raise Refused('The Pod "%s" is invalid: spec: Forbidden: pod updates may not change '
                                          'fields other than `spec.containers[*].image`, ...' % item["metadata"]["name"])
                        print("pod/%s unchanged" % item["metadata"]["name"])
                        continue
                    state.pods[key] = schedule(item, config)
                    print("pod/%s created" % item["metadata"]["name"])
            state.save()
            return 0
        kind, names = resource_names(args)
        if kind in kube_jobs.KINDS.values():
            return kube_jobs.manage(config, state, jobs, verb, opts, kind, names,
                                    (label_match, output, end_pod_processes, log_event))
        if kind != "pods":
            raise Refused("kubectl stand-in: only pods can be %sd" % verb)
        selected = [(k, p) for k, p in sorted(state.pods.items())
                    if pod_matches(p, opts["namespace"], opts.get("selector"))
                    and (not names or p["metadata"]["name"] in names)]
        missing = [n for n in names if n not in [p["metadata"]["name"] for _key, p in selected]]
        ignore = opts["switches"].get("ignore-not-found") in ("true", "")
        if verb == "get":
            state.release()
            if missing and not ignore:
                raise Refused('Error from server (NotFound): pods "%s" not found' % missing[0])
            return output([p for _key, p in selected], names, opts, "pods")
        if verb == "delete":
            if missing and not ignore:
                state.release()
                raise Refused('Error from server (NotFound): pods "%s" not found' % missing[0])
            for key, pod in selected:
                del state.pods[key]
                killed = end_pod_processes(key)
                log_event(config, {"event": "delete", "pod": key, "killed": killed})
                print('pod "%s" deleted' % pod["metadata"]["name"])
            state.save()
            return 0
        # wait: pods are Ready at once or never
        state.release()
        for _key, pod in selected:
            if (pod.get("status") or {}).get("phase") != "Running":
                raise Refused("error: timed out waiting for the condition on pods/%s" % pod["metadata"]["name"])
            print("pod/%s condition met" % pod["metadata"]["name"])
        return 0
    finally:
        if state.lock and not state.lock.closed:
            state.release()


def output(items, names, opts, kind):
    if opts.get("output") == "json":
        if len(names) == 1 and len(items) == 1:
            print(json.dumps(items[0]))
        else:
            print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    elif opts.get("output") in (None, "name"):
        for item in items:
            print("%s/%s" % (kind[:-1], item["metadata"]["name"]) if opts.get("output") else item["metadata"]["name"])
    else:
        raise Refused("error: the stand-in only prints -o json or -o name")
    return 0


# label, annotate, taint, cordon, uncordon and drain of nodes (quarantine, reservation):
# tests/lab/kubectl_standin_nodes.py
node_verbs.bind(sys.modules[__name__])

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
