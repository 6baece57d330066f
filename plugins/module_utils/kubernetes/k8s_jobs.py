# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""MPIJob (Kubeflow mpi-operator v2beta1) and Volcano Job manifests for a collective run (pure)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import mpi_cmd
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.k8s_pods import (
    APP_LABEL,
    RUN_LABEL,
    add_worker_resources,
    pod_name,
)

HOSTNAME_LABEL = "kubernetes.io/hostname"
# mpi-operator's launcher reaches its workers over SSH, so a worker must run sshd
# in the foreground as its only process: the command of the Worker in
# kubeflow/mpi-operator examples/v2beta1/pi/pi.yaml (there with "-f" for a
# non-root sshd), and what its controller (pkg/controller/mpi_job_controller.go,
# newWorker) fills in from v0.4.0 only when a worker has neither command nor args.
MPIJOB_WORKER_COMMAND = ("/usr/sbin/sshd", "-De")
# Where mpi-operator mounts the job's SSH keys (its default for a root sshd, spelled out).
MPIJOB_SSH_AUTH_MOUNT_PATH = "/root/.ssh"
# The launcher starts once every worker is Ready (sshd started) instead of failing
# and restarting until they are (mpi-operator v0.5.0 and later).
MPIJOB_LAUNCHER_CREATION_POLICY = "WaitForWorkersReady"
# Volcano's ssh plugin gives keys, not a running sshd: its example
# (volcano-sh/volcano example/integrations/mpi/mpi-example.yaml) makes sshd's
# privilege-separation directory and runs sshd in the foreground in each worker.
VOLCANO_WORKER_COMMAND = ("/bin/sh", "-c", "mkdir -p /var/run/sshd && exec /usr/sbin/sshd -De")


def _container(name, params, command=None, worker=True):
    container = {
        "name": name,
        "image": params["image"],
        "imagePullPolicy": params.get("image_pull_policy") or "IfNotPresent",
        "securityContext": {"capabilities": {"add": list(params.get("capabilities") or ["IPC_LOCK"])}},
    }
    if command:
        container["command"] = [str(c) for c in command]
    if worker:
        add_worker_resources(container, params)
    return container


def _pod_spec(params, container, nodes=None):
    spec = {"containers": [container]}
    if params.get("host_network"):
        spec["hostNetwork"] = True
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    if params.get("shm_size") and container.get("volumeMounts"):
        spec["volumes"] = [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": str(params["shm_size"])}}]
    if params.get("tolerations"):
        spec["tolerations"] = [dict(t) for t in params["tolerations"]]
    if nodes:
        spec["affinity"] = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": HOSTNAME_LABEL, "operator": "In", "values": list(nodes)}]}]}},
            # one worker per node
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {RUN_LABEL: params.get("run_id") or "run",
                                                  "commcheck-role": "worker"}},
                "topologyKey": HOSTNAME_LABEL}]},
        }
    return spec


def _template(params, role, spec):
    labels = {APP_LABEL: "commcheck", RUN_LABEL: params.get("run_id") or "run", "commcheck-role": role}
    metadata = {"labels": labels}
    networks = params.get("networks")
    if networks and not params.get("host_network"):
        metadata["annotations"] = {"k8s.v1.cni.cncf.io/networks": ",".join(networks)}
    return {"metadata": metadata, "spec": spec}


def _job_metadata(params, kind):
    run_id = params.get("run_id") or "run"
    return {"name": pod_name(params.get("name_prefix") or "commcheck", run_id, kind),
            "namespace": params.get("namespace") or "default",
            "labels": {APP_LABEL: "commcheck", RUN_LABEL: run_id}}


def mpijob_manifest(params, nodes, command):
    """A Kubeflow MPIJob (v2beta1) that runs ``command`` (an mpirun argv) across ``nodes``; workers run sshd."""
    worker = _pod_spec(params, _container("worker", params, command=MPIJOB_WORKER_COMMAND), nodes)
    launcher = _pod_spec(params, _container("launcher", params, command=command, worker=False))
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": _job_metadata(params, "mpijob"),
        "spec": {
            "slotsPerWorker": int(params.get("gpus") or 1),
            "runPolicy": {"cleanPodPolicy": "Running", "ttlSecondsAfterFinished": 3600},
            "sshAuthMountPath": MPIJOB_SSH_AUTH_MOUNT_PATH,
            "launcherCreationPolicy": MPIJOB_LAUNCHER_CREATION_POLICY,
            "mpiImplementation": "OpenMPI",
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": _template(params, "launcher", launcher)},
                "Worker": {"replicas": len(nodes), "template": _template(params, "worker", worker)},
            },
        },
    }


def volcano_job_manifest(params, nodes, command):
    """A Volcano Job (batch.volcano.sh/v1alpha1) with ssh/svc plugins, an mpimaster and workers."""
    master = _pod_spec(params, _container("mpimaster", params, command=command, worker=False))
    master["restartPolicy"] = "OnFailure"
    worker = _pod_spec(params, _container("mpiworker", params, command=VOLCANO_WORKER_COMMAND), nodes)
    worker["restartPolicy"] = "OnFailure"
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": _job_metadata(params, "vcjob"),
        "spec": {
            "minAvailable": len(nodes) + 1,
            "schedulerName": "volcano",
            "plugins": {"ssh": [], "svc": []},
            "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
            "tasks": [
                {"replicas": 1, "name": "mpimaster", "template": _template(params, "launcher", master),
                 "policies": [{"event": "TaskCompleted", "action": "CompleteJob"}]},
                {"replicas": len(nodes), "name": "mpiworker", "template": _template(params, "worker", worker)},
            ],
        },
    }


def pod_templates(manifest):
    """The pod templates inside an MPIJob or Volcano Job (for schema validation)."""
    if manifest.get("kind") == "MPIJob":
        return [r["template"] for r in manifest["spec"]["mpiReplicaSpecs"].values()]
    return [t["template"] for t in manifest["spec"]["tasks"]]


# Where Volcano's ssh/svc plugins put the worker host list in the master pod.
VOLCANO_HOSTFILE = "/etc/volcano/mpiworker.host"
JOB_KINDS = ("mpijob", "volcano")
_COLLECTIVE_KEYS = ("library", "operation", "gpus_per_node", "gpus_per_process", "min_bytes", "max_bytes",
                    "step_factor", "iterations", "warmup_iterations", "check", "datatype", "reduce_op", "root",
                    "env", "mca", "mpirun", "allow_run_as_root", "binary_dir")


def launcher_command(kind, nodes, collective=None):
    """The launcher argv of an MPIJob / Volcano Job that runs one collective test.

    mpi-operator gives the launcher its hostfile (OMPI_MCA_orte_default_hostfile),
    Volcano's ssh/svc plugins write /etc/volcano/mpiworker.host; either way the
    command names no hosts. ``collective`` takes the collective module's
    options (library, operation, gpus_per_node, sizes, env, mca, ...).
    Raises mpi_cmd.MpiCmdError on bad input.
    """
    if kind not in JOB_KINDS:
        raise mpi_cmd.MpiCmdError("kind must be one of %s, got %s" % (", ".join(JOB_KINDS), rules.show(kind)))
    if not nodes:
        raise mpi_cmd.MpiCmdError("nodes must be a non-empty list")
    for index, node in enumerate(nodes):
        mpi_cmd.rule(rules.check_name, "nodes[%d]" % index, node, "k8s_name")
    opts = dict(collective or {})
    unknown = sorted(set(opts) - set(_COLLECTIVE_KEYS), key=str)
    if unknown:
        names = ", ".join(str(name) for name in unknown)
        raise mpi_cmd.MpiCmdError("unknown collective options: %s" % (
            names if len(names) <= rules.QUOTE_LIMIT else names[:rules.QUOTE_LIMIT] + "..."))
    library = opts.get("library") or "nccl"
    operation = opts.get("operation") or "all_reduce"
    params = mpi_cmd.test_params(
        library, operation, min_bytes=opts.get("min_bytes", "32M"), max_bytes=opts.get("max_bytes", "8G"),
        step_factor=opts.get("step_factor", 2), iterations=opts.get("iterations", 20),
        warmup_iterations=opts.get("warmup_iterations", 5), check=opts.get("check", 1),
        datatype=opts.get("datatype"), reduce_op=opts.get("reduce_op", "sum"), root=opts.get("root", 0),
        gpus_per_process=opts.get("gpus_per_process", 1), gpus_per_node=opts.get("gpus_per_node", 1))
    program = mpi_cmd.binary_argv(mpi_cmd.binary_path(library, operation, opts.get("binary_dir")), params)
    hosts = [{"address": str(n), "slots": 4096, "name": str(n)} for n in nodes]
    layout = mpi_cmd.ranks_layout(library, hosts, params["gpus_per_node"], params["gpus_per_process"])
    argv = [mpi_cmd.check_mpirun(opts.get("mpirun") or "mpirun", "collective.mpirun")]
    if opts.get("allow_run_as_root"):
        argv.append("--allow-run-as-root")
    argv += ["-np", str(layout["np"]), "--map-by", "ppr:%d:node" % layout["processes_per_node"]]
    if kind == "volcano":
        argv += ["--hostfile", VOLCANO_HOSTFILE]
    env = dict(mpi_cmd.check_env(opts.get("env"), "collective.env"))
    if library == "nccl":
        env.setdefault("NCCL_DEBUG", "INFO")
    for key, value in sorted(env.items()):
        argv += ["-x", "%s=%s" % (key, value)]
    for key, value in mpi_cmd.check_mca(opts.get("mca"), "collective.mca").items():
        argv += ["--mca", key, value]
    return argv + list(program)
