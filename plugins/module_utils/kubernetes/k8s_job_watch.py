# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where an MPIJob or a Volcano Job of a collective run stands, from what kubectl lists (pure).

Read from the job (``kubectl get mpijob|vcjob NAME -o json``) and the run's pods
(``kubectl get pods -l commcheck.clusterops.io/run=RUN -o json``):

- Kubeflow mpi-operator (``kubeflow.org/v2beta1`` MPIJob): ``status.conditions``,
  each ``{type, status, reason, message}`` with the types ``Created``, ``Running``,
  ``Restarting``, ``Suspended``, ``Succeeded`` and ``Failed`` (pkg/apis/kubeflow/v2beta1,
  JobConditionType); the job has ended when ``Succeeded`` or ``Failed`` is ``"True"``;
- Volcano (``batch.volcano.sh/v1alpha1`` Job): ``status.state.phase``, one of ``Pending``,
  ``Aborting``, ``Aborted``, ``Running``, ``Restarting``, ``Completing``, ``Completed``,
  ``Terminating``, ``Terminated`` and ``Failed`` (apis pkg/apis/batch/v1alpha1, JobPhase),
  with ``reason`` and ``message`` beside it;
- the pods: the launcher and the workers, told apart by the ``commcheck-role`` label the
  manifests (``k8s_jobs.py``) give their templates; a pod that stays Pending is explained
  with ``k8s_refusals.pod_refusal`` (the scheduler's or the kubelet's reason).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.k8s_refusals import pod_refusal
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.k8s_pods import RUN_LABEL

ROLE_LABEL = "commcheck-role"
# kubectl's names of the two kinds: the MPIJob CRD's singular, Volcano's short name of jobs.batch.volcano.sh
RESOURCES = {"mpijob": "mpijob", "volcano": "vcjob"}
# the container that runs mpirun in each kind's launcher pod (k8s_jobs.py)
LAUNCHER_CONTAINERS = {"mpijob": "launcher", "volcano": "mpimaster"}
MPIJOB_ENDED = ("Succeeded", "Failed")
MPIJOB_ORDER = ("Failed", "Succeeded", "Running", "Restarting", "Suspended", "Created")
VOLCANO_SUCCEEDED = ("Completed",)
VOLCANO_FAILED = ("Failed", "Aborted", "Terminated")
VOLCANO_RUNNING = ("Running", "Completing", "Restarting")
PHASES = ("Pending", "Running", "Succeeded", "Failed")
GANG_WAIT = "pod group is not ready"


class JobManifestError(ValueError):
    """The manifest is not one of the two job kinds this module runs."""


def _dict(value):
    return value if isinstance(value, dict) else {}


def _list(value):
    return value if isinstance(value, list) else []


def kind_of(manifest):
    """'mpijob' for a kubeflow.org MPIJob, 'volcano' for a batch.volcano.sh Job; JobManifestError otherwise."""
    manifest = _dict(manifest)
    api = str(manifest.get("apiVersion") or "")
    if manifest.get("kind") == "MPIJob" and api.startswith("kubeflow.org/"):
        return "mpijob"
    if manifest.get("kind") == "Job" and api.startswith("batch.volcano.sh/"):
        return "volcano"
    raise JobManifestError("manifest must be a kubeflow.org MPIJob or a batch.volcano.sh Job, got %s %s"
                           % (manifest.get("apiVersion"), manifest.get("kind")))


def identity(manifest):
    """(kind, name, namespace, run id) of a job manifest; JobManifestError when one is missing."""
    kind = kind_of(manifest)
    metadata = _dict(manifest.get("metadata"))
    run_id = _dict(metadata.get("labels")).get(RUN_LABEL)
    for key, value in (("metadata.name", metadata.get("name")), ("metadata.labels[%s]" % RUN_LABEL, run_id)):
        if not isinstance(value, str) or not value:
            raise JobManifestError("manifest has no %s" % key)
    return kind, metadata["name"], metadata.get("namespace") or "default", run_id


def launcher_argv(manifest):
    """The launcher container's command (the mpirun argv) in a job manifest, or []."""
    kind = kind_of(manifest)
    spec = _dict(manifest.get("spec"))
    if kind == "mpijob":
        template = _dict(_dict(_dict(spec.get("mpiReplicaSpecs")).get("Launcher")).get("template"))
    else:
        tasks = [t for t in _list(spec.get("tasks")) if _dict(t).get("name") == "mpimaster"]
        template = _dict(tasks[0].get("template")) if tasks else {}
    containers = _list(_dict(template.get("spec")).get("containers"))
    return [str(c) for c in _list(_dict(containers[0]).get("command"))] if containers else []


def ranks(argv):
    """mpirun's -np in a launcher argv (the number of ranks), or None."""
    for flag in ("-np", "-n"):
        if flag in argv[:-1]:
            value = argv[argv.index(flag) + 1]
            return int(value) if value.isdigit() else None
    return None


def _condition(job, kind_name):
    for cond in _list(_dict(job.get("status")).get("conditions")):
        if _dict(cond).get("type") == kind_name and cond.get("status") == "True":
            return cond
    return None


def job_phase(kind, job):
    """(phase, reason, message): the job's own word, phase one of PHASES."""
    if not job:
        return "Pending", "", ""
    if kind == "mpijob":
        for name in MPIJOB_ORDER:
            cond = _condition(job, name)
            if cond:
                phase = name if name in MPIJOB_ENDED else "Running" if name in ("Running", "Restarting") else "Pending"
                return phase, str(cond.get("reason") or name), str(cond.get("message") or "")
        return "Pending", "", ""
    state = _dict(_dict(job.get("status")).get("state"))
    raw = state.get("phase") or "Pending"
    reason, message = str(state.get("reason") or raw), str(state.get("message") or "")
    if raw in VOLCANO_SUCCEEDED:
        return "Succeeded", reason, message
    if raw in VOLCANO_FAILED:
        return "Failed", reason, message
    return ("Running" if raw in VOLCANO_RUNNING else "Pending"), reason, message


def pod_role(pod):
    return _dict(_dict(pod.get("metadata")).get("labels")).get(ROLE_LABEL) or "other"


def _pod_line(pod):
    metadata, status = _dict(pod.get("metadata")), _dict(pod.get("status"))
    return {"name": metadata.get("name"), "role": pod_role(pod), "node": _dict(pod.get("spec")).get("nodeName"),
            "phase": status.get("phase") or "Pending"}


def stuck(pod):
    """Why a pod that has not started is not starting (k8s_refusals), or None: a pod that runs or ended is
    no refusal (a launcher that Completed has a terminated container, which is its end, not a refusal)."""
    phase = _dict(pod.get("status")).get("phase") or "Pending"
    if phase == "Pending" or (phase == "Failed" and _dict(pod.get("status")).get("reason")):
        return pod_refusal(pod)
    return None


def observe(kind, job, pods, pending_for, schedule_timeout):
    """One look at the job: a dict with ``phase`` (PHASES), ``ended``, ``reason``, ``message``, ``pods``
    (name, role, node, phase of each), ``refusals`` (pod name to refusal) and ``cause`` when it failed.

    ``pending_for``: pod name to the seconds it has been seen Pending; a pod Pending longer than
    ``schedule_timeout``, or refused in a way waiting does not cure, fails the job.
    """
    phase, reason, message = job_phase(kind, job)
    lines = [_pod_line(p) for p in pods]
    refusals = {}
    for pod in pods:
        name = _dict(pod.get("metadata")).get("name")
        refusal = stuck(pod)
        if refusal and (refusal["final"] or pending_for.get(name, 0) >= schedule_timeout):
            refusals[name] = refusal
    refusals = own_refusals(refusals)
    out = {"phase": phase, "reason": reason, "message": message, "pods": lines, "refusals": refusals,
           "ended": phase in ("Succeeded", "Failed"), "cause": None}
    if phase == "Failed":
        out["cause"] = "the %s failed: %s%s" % (RESOURCES[kind], reason, ": " + message if message else "")
    elif refusals and phase != "Succeeded":
        out.update(phase="Failed", ended=True, reason="PodRefused",
                   cause="pod(s) of the job could not start: " + "; ".join(
                       "%s (%s): %s" % (name, _role_of(lines, name), _refusal_line(r))
                       for name, r in sorted(refusals.items())))
    return out


def own_refusals(refusals):
    """The refusals that are a pod's own: Volcano's gang scheduler keeps every pod of a job Pending, with
    "pod group is not ready, ..." (volcano-sh/volcano pkg/scheduler), while one of them lacks a node; those
    waiting only for the gang are left out when another pod says what is missing."""
    own = dict((name, r) for name, r in refusals.items()
               if not str(r.get("message") or "").startswith(GANG_WAIT))
    return own or refusals


def _role_of(lines, name):
    return next((line["role"] for line in lines if line["name"] == name), "pod")


def _refusal_line(refusal):
    return "%s: %s" % (refusal["reason"], refusal["message"]) if refusal.get("message") else refusal["reason"]


def pending_times(previous, pods, elapsed):
    """How long each pod has been seen Pending, after ``elapsed`` seconds more: a pod that left Pending drops out."""
    out = {}
    for pod in pods:
        name = _dict(pod.get("metadata")).get("name")
        if (_dict(pod.get("status")).get("phase") or "Pending") == "Pending":
            out[name] = previous.get(name, 0) + elapsed if name in previous else 0
    return out


def launcher_pod(pods):
    """The name of the launcher pod (the latest created when the launcher was restarted), or None."""
    launchers = [p for p in pods if pod_role(p) == "launcher"]
    if not launchers:
        return None
    latest = max(launchers, key=lambda p: str(_dict(p.get("metadata")).get("creationTimestamp") or ""))
    return _dict(latest.get("metadata")).get("name")


def summary(lines):
    """'launcher Running on node-a; 2/2 workers Running' from observe()'s pods."""
    launcher = [line for line in lines if line["role"] == "launcher"]
    workers = [line for line in lines if line["role"] == "worker"]
    parts = ["launcher %s%s" % (launcher[-1]["phase"], " on %s" % launcher[-1]["node"] if launcher[-1]["node"] else "")
             if launcher else "no launcher yet"]
    parts.append("%d/%d workers Running" % (len([w for w in workers if w["phase"] == "Running"]), len(workers)))
    return "; ".join(parts)
