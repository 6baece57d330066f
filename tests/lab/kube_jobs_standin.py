# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The job controllers of the kubectl STAND-IN (tests only; NOT mpi-operator, NOT Volcano).

kubectl_standin.py calls ``reconcile`` on every call, under its state lock, and plays the two
operators' part there, one step a call, after their real semantics:

- Kubeflow mpi-operator (``kubeflow.org/v2beta1`` MPIJob): on apply, condition ``Created`` and the
  worker pods ``<job>-worker-<i>``; with ``launcherCreationPolicy: WaitForWorkersReady`` the launcher
  pod ``<job>-launcher`` comes once every worker is Running, and the condition ``Running`` with it;
  when the launcher ends, ``Succeeded`` (exit 0) or ``Failed`` (reason ``BackoffLimitExceeded``,
  nothing retried here), and ``cleanPodPolicy: Running`` deletes the workers still running.
- Volcano (``batch.volcano.sh/v1alpha1`` Job): pods ``<job>-<task>-<i>`` for every task on apply;
  gang scheduling (``minAvailable``): none is bound until all can be; ``status.state.phase``
  ``Pending``, ``Running``, then ``Completed`` once the ``mpimaster`` task ends with exit 0
  (``TaskCompleted``/``CompleteJob``; the other pods are killed) or ``Failed``.
- Scheduling: a worker goes to the i-th node of its node affinity's ``kubernetes.io/hostname`` values;
  a node that is unknown, not Ready, cordoned, or whose configuration lists a resource the pod requests
  under ``exhausted`` leaves the pod Pending with the scheduler's ``PodScheduled=False``/``Unschedulable``
  condition and message (``0/N nodes are available: 1 Insufficient rdma/...``).
- The launcher runs its container's command (``mpirun ... <op>_perf ...``) as a process of this machine
  marked as the launcher pod's (deleting the pod kills it), with every rank here: ``--map-by ppr:K:node``
  is dropped and ``--oversubscribe`` added, since mpi-operator would start the ranks on the workers over
  SSH, which the lab's "pods" do not run. Its output is the pod's log (``kubectl logs``).

Jobs live in ``<state>.jobs`` (JSON, "kind:namespace/name" to the object); their pods are ordinary pods
of the state file. Events: ``job-apply``, ``job-running`` (the launcher started), ``job-ended``,
``job-delete`` (with what it had to kill), in ``<state>.events``.
"""

from __future__ import absolute_import, division, print_function

import copy
import json
import os
import subprocess
import sys


class Refused(Exception):
    """What kubectl would print on stderr before exiting 1."""


KINDS = {"MPIJob": "mpijob", "Job": "volcano"}
RESOURCE_KINDS = {"mpijob": "mpijob", "mpijobs": "mpijob", "mpijobs.kubeflow.org": "mpijob",
                  "vcjob": "volcano", "vcjobs": "volcano", "jobs.batch.volcano.sh": "volcano"}
HOSTNAME = "kubernetes.io/hostname"
ROLE = "commcheck-role"


def is_job(item):
    api = str(item.get("apiVersion") or "")
    return (item.get("kind") == "MPIJob" and api.startswith("kubeflow.org/")) or \
        (item.get("kind") == "Job" and api.startswith("batch.volcano.sh/"))


def jobs_path(config):
    return config["state"] + ".jobs"


def load(config):
    try:
        with open(jobs_path(config)) as handle:
            return json.load(handle)
    except (IOError, ValueError):
        return {}


def save(config, jobs):
    tmp = jobs_path(config) + ".tmp"
    with open(tmp, "w") as handle:
        json.dump(jobs, handle)
    os.replace(tmp, jobs_path(config))


def key_of(kind, namespace, name):
    return "%s:%s/%s" % (kind, namespace, name)


def _template_pod(job, template, name, role_index):
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": copy.deepcopy(template.get("metadata") or {}), "spec": copy.deepcopy(template.get("spec") or {})}
    pod["metadata"].update(name=name, namespace=job["metadata"]["namespace"])
    pod["metadata"]["ownerReferences"] = [{"kind": job["kind"], "name": job["metadata"]["name"]}]
    pod["metadata"]["creationTimestamp"] = "2026-01-01T00:00:%02dZ" % min(role_index, 59)
    pod["status"] = {"phase": "Pending"}
    return pod


def _pods_of(job):
    """[(name, template, role index)] of the pods a job's controller makes (the launcher of an MPIJob later)."""
    name, spec = job["metadata"]["name"], job["spec"]
    if KINDS[job["kind"]] == "mpijob":
        worker = spec["mpiReplicaSpecs"]["Worker"]
        return [("%s-worker-%d" % (name, i), worker["template"], i) for i in range(int(worker.get("replicas") or 0))]
    return [("%s-%s-%d" % (name, task["name"], i), task["template"], i)
            for task in spec.get("tasks") or [] for i in range(int(task.get("replicas") or 0))]


def apply(config, state, jobs, item, namespace, log_event):
    """Create a job (its pods as its controller would); an identical one again is unchanged."""
    item["metadata"].setdefault("namespace", namespace)
    kind = KINDS[item["kind"]]
    key = key_of(kind, item["metadata"]["namespace"], item["metadata"]["name"])
    if key in jobs:
        if jobs[key]["spec"] != item["spec"]:
            jobs[key]["spec"] = item["spec"]
            return "%s.%s/%s configured" % (kind, item["apiVersion"].split("/")[0], item["metadata"]["name"])
        return "%s/%s unchanged" % (kind, item["metadata"]["name"])
    job = copy.deepcopy(item)
    job["status"] = {"conditions": [_condition("Created", "MPIJobCreated", "MPIJob %s/%s is created."
                                               % (job["metadata"]["namespace"], job["metadata"]["name"]))]} \
        if kind == "mpijob" else {"state": {"phase": "Pending"}, "minAvailable": job["spec"].get("minAvailable")}
    jobs[key] = job
    for name, template, index in _pods_of(job):
        state.pods["%s/%s" % (job["metadata"]["namespace"], name)] = _template_pod(job, template, name, index)
    log_event(config, {"event": "job-apply", "job": key})
    return "%s/%s created" % (kind, job["metadata"]["name"])


def _condition(kind, reason, message):
    return {"type": kind, "status": "True", "reason": reason, "message": message,
            "lastTransitionTime": "2026-01-01T00:00:00Z"}


def _owned(state, job):
    namespace, name = job["metadata"]["namespace"], job["metadata"]["name"]
    return [(k, p) for k, p in sorted(state.pods.items()) if k.startswith(namespace + "/")
            and any(o.get("name") == name and o.get("kind") == job["kind"]
                    for o in p["metadata"].get("ownerReferences") or [])]


def _requests(pod):
    names = set()
    for container in pod["spec"].get("containers") or []:
        names.update(((container.get("resources") or {}).get("requests") or {}).keys())
    return names


def _affinity_nodes(pod):
    terms = (((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {})
             .get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or []
    for term in terms:
        for expr in term.get("matchExpressions") or []:
            if expr.get("key") == HOSTNAME:
                return list(expr.get("values") or [])
    return None


def _placement(config, pod, index):
    """(node, None) for a worker that fits, else (None, the scheduler's message)."""
    wanted = _affinity_nodes(pod)
    total = len(config["nodes"])
    node = wanted[index % len(wanted)] if wanted else sorted(config["nodes"])[0]
    info = config["nodes"].get(node)
    if info is None or not info.get("ready", True) or info.get("unschedulable"):
        return None, ("0/%d nodes are available: %d node(s) didn't match Pod's node affinity/selector. preemption: "
                      "0/%d nodes are available: %d Preemption is not helpful for scheduling." % (
                          total, total, total, total))
    short = sorted(_requests(pod) & set(info.get("exhausted") or []))
    if short:
        return None, ("0/%d nodes are available: 1 Insufficient %s, %d node(s) didn't match Pod's node "
                      "affinity/selector. preemption: 0/%d nodes are available: 1 No preemption victims found for "
                      "incoming pod, %d Preemption is not helpful for scheduling." % (
                          total, short[0], total - 1, total, total - 1))
    return node, None


def reconcile(config, state, jobs, schedule, log_event):
    """One step of each operator for every job that has not ended; True when anything changed."""
    changed = False
    for key, job in sorted(jobs.items()):
        if job.get("_ended"):
            continue
        pods = _owned(state, job)
        changed = _bind(config, job, pods, schedule) or changed
        changed = _run_launcher(config, state, key, job, schedule, log_event) or changed
        changed = _finish(config, state, key, job, log_event) or changed
    return changed


def _bind(config, job, pods, schedule):
    """Bind the Pending pods that fit (Volcano: all of them or none, its gang)."""
    volcano = KINDS[job["kind"]] == "volcano"
    pending = [(k, p) for k, p in pods if p["status"].get("phase") == "Pending" and "nodeName" not in p["spec"]]
    if not pending:
        return False
    places = {}
    for key, pod in pending:
        index = int(pod["metadata"]["name"].rsplit("-", 1)[1])
        places[key] = _placement(config, pod, index) if pod["metadata"]["labels"].get(ROLE) == "worker" else \
            (sorted(n for n, i in config["nodes"].items() if i.get("ready", True))[0], None)
    refused = [k for k, (node, _m) in places.items() if node is None]
    changed = False
    for key, pod in pending:
        node, message = places[key]
        if node is None or (volcano and refused):
            condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                         "message": message or "pod group is not ready, %d Pending, %d minAvailable" % (
                             len(pending), job["spec"].get("minAvailable") or len(pending))}
            if pod["status"].get("conditions") != [condition]:
                pod["status"] = {"phase": "Pending", "conditions": [condition]}
                changed = True
            continue
        pod["spec"]["nodeName"] = node
        schedule(pod, config)
        changed = True
    return changed


def _launcher_key(state, job):
    namespace, name = job["metadata"]["namespace"], job["metadata"]["name"]
    launcher = "%s-launcher" % name if KINDS[job["kind"]] == "mpijob" else "%s-mpimaster-0" % name
    return "%s/%s" % (namespace, launcher)


def _run_launcher(config, state, key, job, schedule, log_event):
    """Start the launcher once every worker runs (MPIJob: create its pod first)."""
    if job.get("_launched"):
        return False
    pods = _owned(state, job)
    workers = [p for _k, p in pods if p["metadata"]["labels"].get(ROLE) == "worker"]
    if not workers or any(p["status"].get("phase") != "Running" for p in workers):
        return False
    launcher_key = _launcher_key(state, job)
    if KINDS[job["kind"]] == "mpijob":
        template = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]
        pod = _template_pod(job, template, launcher_key.split("/", 1)[1], 0)
        pod["spec"]["nodeName"] = workers[0]["spec"]["nodeName"]
        state.pods[launcher_key] = schedule(pod, config)
        job["status"]["conditions"].append(_condition("Running", "MPIJobRunning", "MPIJob %s is running."
                                                      % launcher_key.rsplit("-", 1)[0]))
    else:
        job["status"]["state"] = {"phase": "Running"}
    pod = state.pods.get(launcher_key)
    if not pod or pod["status"].get("phase") != "Running":
        return True
    job["_launched"] = True
    _start(config, launcher_key, pod)
    log_event(config, {"event": "job-running", "job": key, "launcher": launcher_key})
    return True


def log_path(config, pod_key):
    return "%s.logs/%s.log" % (config["state"], pod_key.replace("/", "_"))


def _start(config, pod_key, pod, marker="COMMCHECK_STANDIN_POD"):
    """The launcher's command, every rank here, marked as the pod's; its output is the pod's log."""
    container = pod["spec"]["containers"][0]
    argv = list(container.get("command") or []) + list(container.get("args") or [])
    if "--map-by" in argv:
        at = argv.index("--map-by")
        del argv[at:at + 2]
    if argv and os.path.basename(argv[0]) in ("mpirun", "mpiexec"):
        argv[1:1] = ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 and
                                           "--allow-run-as-root" not in argv else [])
    path = log_path(config, pod_key)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    env = dict(os.environ)
    env[marker] = pod_key
    # the exit status goes next to the log when the command ends
    subprocess.Popen(["sh", "-c", '"$@" > "$0" 2>&1; echo $? > "$0.rc"', path] + argv, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True,
                     close_fds=True)


def _finish(config, state, key, job, log_event):
    """The launcher ended: its pod and the job say how; the workers still running go."""
    if not job.get("_launched"):
        return False
    launcher_key = _launcher_key(state, job)
    try:
        with open(log_path(config, launcher_key) + ".rc") as handle:
            rc = int(handle.read().strip() or 1)
    except (IOError, ValueError):
        return False
    pod = state.pods.get(launcher_key)
    if pod:
        pod["status"] = {"phase": "Succeeded" if rc == 0 else "Failed", "containerStatuses": [{
            "name": pod["spec"]["containers"][0]["name"], "ready": False,
            "state": {"terminated": {"exitCode": rc, "reason": "Completed" if rc == 0 else "Error"}}}]}
    if KINDS[job["kind"]] == "mpijob":
        for cond in job["status"]["conditions"]:
            if cond["type"] == "Running":      # mpi-operator turns Running off when the job ends
                cond["status"] = "False"
        job["status"]["conditions"].append(
            _condition("Succeeded", "MPIJobSucceeded", "MPIJob %s successfully completed."
                       % launcher_key.rsplit("-", 1)[0]) if rc == 0 else
            _condition("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"))
    else:
        job["status"]["state"] = {"phase": "Completed"} if rc == 0 else {
            "phase": "Failed", "reason": "PodFailed", "message": "task mpimaster failed with exit code %d" % rc}
    for pod_key, worker in _owned(state, job):
        if worker["metadata"]["labels"].get(ROLE) == "worker" and worker["status"].get("phase") == "Running":
            del state.pods[pod_key]
    job["_ended"] = True
    log_event(config, {"event": "job-ended", "job": key, "rc": rc})
    return True


def public(job):
    """The job as the API server shows it (without the stand-in's own marks)."""
    return dict((k, v) for k, v in job.items() if not k.startswith("_"))


def delete_jobs(config, state, jobs, kind, namespace, names, selector, label_match, end_pod_processes, log_event):
    """Delete jobs (and, as the garbage collector does, their pods); returns kubectl's lines."""
    lines = []
    for key, job in sorted(jobs.items()):
        meta = job["metadata"]
        if KINDS[job["kind"]] != kind or meta["namespace"] != namespace:
            continue
        if (names and meta["name"] not in names) or not label_match(meta.get("labels") or {}, selector):
            continue
        killed = []
        for pod_key, _pod in _owned(state, job):
            del state.pods[pod_key]
            killed += end_pod_processes(pod_key)
        del jobs[key]
        log_event(config, {"event": "job-delete", "job": key, "killed": killed})
        lines.append('%s.%s "%s" deleted' % (job["kind"].lower(), job["apiVersion"].split("/")[0], meta["name"]))
    return lines


def logs(config, state, namespace, name, container):
    """``kubectl logs POD -c C``: what the pod's command printed; None when the pod is unknown."""
    key = "%s/%s" % (namespace, name)
    pod = state.pods.get(key)
    if pod is None:
        return None
    names = [c.get("name") for c in pod["spec"].get("containers") or []]
    if container and container not in names:
        raise ValueError('container %s is not valid for pod %s' % (container, name))
    try:
        with open(log_path(config, key), "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except IOError:
        return ""


def manage(config, state, jobs, verb, opts, kind, names, api):
    """get / delete of MPIJobs and Volcano Jobs; ``api``: the stand-in's label_match, output, end_pod_processes
    and log_event."""
    label_match, output, end_pod_processes, log_event = api
    if verb == "get":
        found = [public(j) for j in jobs.values() if KINDS[j["kind"]] == kind
                 and j["metadata"]["namespace"] == opts["namespace"] and (not names or j["metadata"]["name"] in names)
                 and label_match(j["metadata"].get("labels") or {}, opts.get("selector"))]
        state.release()
        if names and not found and opts["switches"].get("ignore-not-found") not in ("true", ""):
            raise Refused('Error from server (NotFound): %ss "%s" not found' % (kind, names[0]))
        if names and not found:
            return 0          # --ignore-not-found: kubectl prints nothing
        return output(found, names, opts, kind + "s")
    if verb != "delete":
        raise Refused("kubectl stand-in: only get and delete of %s" % kind)
    lines = delete_jobs(config, state, jobs, kind, opts["namespace"], names, opts.get("selector"), label_match,
                        end_pod_processes, log_event)
    save(config, jobs)
    state.save()
    if not lines and not opts["switches"].get("ignore-not-found") in ("true", ""):
        print("No resources found")
    for line in lines:
        print(line)
    return 0


def pod_logs(config, state, opts, args):
    state.release()
    if len(args) != 1:
        raise Refused("error: expected 'logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]'.")
    try:
        text = logs(config, state, opts["namespace"], args[0], opts.get("container"))
    except ValueError as exc:
        raise Refused("error: %s" % exc)
    if text is None:
        raise Refused('Error from server (NotFound): pods "%s" not found' % args[0])
    sys.stdout.write(text)
    return 0
