# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The watch of an MPIJob / Volcano Job (kubernetes/k8s_job_watch.py) and its collective result
(kubernetes/k8s_job_result.py), from objects shaped as the real API returns them: mpi-operator's v2beta1
``status`` (``conditions`` with ``lastUpdateTime``/``lastTransitionTime``, ``replicaStatuses``, ``startTime``),
Volcano's (``state.phase``, ``minAvailable``, ``running``, ``taskStatusCount``), pods as the kubelet and the
scheduler leave them, and a real Volcano launcher's log (tests/fixtures/corpus/nccl_tests/
all_reduce_perf_oke_mpijob_16gpu_a100.txt, kubectl's and ssh's noise in front of it)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import os

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import k8s_job_watch as watch
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import k8s_job_result as job_result
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import pods_plan
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.collective_plan import collective_records
from ansible_collections.clusterops.commcheck.plugins.modules import k8s_job

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "corpus",
                      "nccl_tests", "all_reduce_perf_oke_mpijob_16gpu_a100.txt")
T0, T1, T2 = "2026-03-02T10:00:00Z", "2026-03-02T10:00:20Z", "2026-03-02T10:03:11Z"


def manifest(kind="mpijob", nodes=("node-a", "node-b"), run_id="r1"):
    values = {"commcheck_k8s_render_job": kind, "commcheck_k8s_namespace": "cc",
              "commcheck_k8s_name_prefix": "commcheck",
              "commcheck_k8s_image": "registry.example.com/tools:1", "commcheck_k8s_gpus": 8,
              "commcheck_k8s_resources": {"rdma/rdma_shared_device_a": 1},
              "commcheck_k8s_job_collective": {"gpus_per_node": 8}}
    return pods_plan.job_manifest(values, run_id, list(nodes))


def cond(kind, status="True", reason=None, message=""):
    return {"type": kind, "status": status, "reason": reason or "MPIJob" + kind, "message": message,
            "lastUpdateTime": T1, "lastTransitionTime": T1}


def mpijob(*conditions):
    job = copy.deepcopy(manifest())
    job["status"] = {"conditions": list(conditions), "startTime": T0,
                     "replicaStatuses": {"Launcher": {}, "Worker": {"active": 2}}}
    return job


def vcjob(phase, **state):
    job = copy.deepcopy(manifest("volcano"))
    job["status"] = {"state": dict(state, phase=phase, lastTransitionTime=T1), "minAvailable": 3, "running": 3,
                     "version": 2, "taskStatusCount": {"mpiworker": {"phase": {"Running": 2}}}}
    return job


def pod(name, role, phase="Running", node="node-a", **status):
    out = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "cc", "creationTimestamp": status.pop("created", T0),
                        "labels": {"commcheck.clusterops.io/run": "r1", "commcheck-role": role}},
           "spec": {"containers": [{"name": "worker"}]}, "status": dict(status, phase=phase)}
    if node:
        out["spec"]["nodeName"] = node
    return out


UNSCHEDULABLE = {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                 "lastTransitionTime": T1,
                                 "message": "0/4 nodes are available: 1 Insufficient rdma/rdma_shared_device_a, 3 "
                                            "node(s) didn't match Pod's node affinity/selector."}]}
RUNNING = [pod("j-worker-0", "worker"), pod("j-worker-1", "worker", node="node-b"), pod("j-launcher", "launcher")]


# ---------------------------------------------------------------- what the manifest is

def test_the_two_kinds_and_their_identity():
    assert watch.identity(manifest()) == ("mpijob", "commcheck-r1-mpijob", "cc", "r1")
    assert watch.identity(manifest("volcano")) == ("volcano", "commcheck-r1-vcjob", "cc", "r1")
    assert watch.launcher_argv(manifest("volcano"))[:2] == ["mpirun", "-np"]
    assert watch.ranks(watch.launcher_argv(manifest())) == 16
    batch = dict(manifest(), apiVersion="batch/v1")            # a Kubernetes Job is no MPI job
    with pytest.raises(watch.JobManifestError, match="batch/v1 MPIJob"):
        watch.kind_of(batch)
    unlabelled = copy.deepcopy(manifest())
    del unlabelled["metadata"]["labels"]["commcheck.clusterops.io/run"]
    with pytest.raises(watch.JobManifestError, match="commcheck.clusterops.io/run"):
        watch.identity(unlabelled)


def test_module_arguments_are_refused_before_anything_runs():
    base = {"manifest": manifest(), "collective": {}, "timeout": 60, "schedule_timeout": 30, "min_fraction": 0.8,
            "expected_busbw_gbs": None, "kubeconfig": None, "context": None, "kubectl_binary": None}
    assert k8s_job.problems(base)[1] == []
    bad = copy.deepcopy(manifest())
    bad["metadata"]["name"] = "Bad_Name"
    assert any("manifest.metadata.name" in p for p in k8s_job.problems(dict(base, manifest=bad))[1])
    assert "collective.library must be one of nccl, hccl, got 'mpi'" in \
        k8s_job.problems(dict(base, collective={"library": "mpi"}))[1]
    assert any(p.startswith("timeout") for p in k8s_job.problems(dict(base, timeout=0))[1])
    assert any(p.startswith("schedule_timeout") for p in k8s_job.problems(dict(base, schedule_timeout=10 ** 9))[1])
    assert any("min_fraction" in p for p in k8s_job.problems(dict(base, min_fraction=1.5))[1])
    assert k8s_job.problems(dict(base, expected_busbw_gbs=180.0))[1] == []
    assert any("expected_busbw_gbs" in p for p in k8s_job.problems(dict(base, expected_busbw_gbs=0.0))[1])


# ---------------------------------------------------------------- the job's own word

@pytest.mark.parametrize("conditions, phase", [
    ([], "Pending"),
    ([cond("Created")], "Pending"),
    ([cond("Created"), cond("Running")], "Running"),
    ([cond("Created"), cond("Running"), cond("Restarting")], "Running"),
    ([cond("Created"), cond("Running", "False"), cond("Succeeded")], "Succeeded"),
    ([cond("Created"), cond("Running", "False"), cond("Failed", reason="BackoffLimitExceeded")], "Failed"),
    ([cond("Created"), cond("Suspended")], "Pending"),
])
def test_mpijob_conditions(conditions, phase):
    assert watch.job_phase("mpijob", mpijob(*conditions))[0] == phase


def test_an_mpijob_that_failed_says_why():
    job = mpijob(cond("Created"), cond("Failed", reason="BackoffLimitExceeded",
                                       message="Job has reached the specified backoff limit"))
    seen = watch.observe("mpijob", job, RUNNING[:2], {}, 60)
    assert seen["ended"] and seen["phase"] == "Failed"
    assert seen["cause"] == "the mpijob failed: BackoffLimitExceeded: Job has reached the specified backoff limit"


@pytest.mark.parametrize("phase, ours", [("Pending", "Pending"), ("Running", "Running"), ("Completing", "Running"),
                                         ("Restarting", "Running"), ("Completed", "Succeeded"), ("Failed", "Failed"),
                                         ("Aborted", "Failed"), ("Terminated", "Failed"), ("Aborting", "Pending")])
def test_volcano_phases(phase, ours):
    assert watch.job_phase("volcano", vcjob(phase))[0] == ours


# ---------------------------------------------------------------- the pods

def test_a_worker_pending_is_waited_for_until_the_schedule_timeout_then_explained():
    pods = [pod("j-worker-0", "worker"), pod("j-worker-1", "worker", "Pending", node=None, **UNSCHEDULABLE)]
    job = mpijob(cond("Created"))
    early = watch.observe("mpijob", job, pods, {"j-worker-1": 59}, 60)
    assert not early["ended"] and early["phase"] == "Pending" and early["refusals"] == {}
    late = watch.observe("mpijob", job, pods, {"j-worker-1": 60}, 60)
    assert late["ended"] and late["phase"] == "Failed" and list(late["refusals"]) == ["j-worker-1"]
    assert late["cause"].startswith("pod(s) of the job could not start: j-worker-1 (worker): Unschedulable: 0/4 nodes")
    assert "Insufficient rdma/rdma_shared_device_a" in late["cause"]


def test_a_refusal_waiting_does_not_cure_ends_the_watch_at_once():
    admitted = pod("j-worker-1", "worker", "Failed", node="node-b", reason="OutOfrdma/rdma_shared_device_a",
                   message="Pod was rejected: Node didn't have enough resource: rdma/rdma_shared_device_a")
    seen = watch.observe("mpijob", mpijob(cond("Created")), [pod("j-worker-0", "worker"), admitted], {}, 600)
    assert seen["ended"] and seen["refusals"]["j-worker-1"]["reason"] == "OutOfrdma/rdma_shared_device_a"


def test_a_launcher_that_completed_is_no_refusal():
    done = pod("j-launcher", "launcher", "Succeeded", containerStatuses=[
        {"name": "launcher", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}])
    seen = watch.observe("mpijob", mpijob(cond("Created"), cond("Running")), RUNNING[:2] + [done], {}, 60)
    assert seen["refusals"] == {} and not seen["ended"] and seen["phase"] == "Running"


def test_volcano_gang_waits_give_way_to_the_pod_that_lacks_a_node():
    gang = {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                            "message": "pod group is not ready, 3 Pending, 3 minAvailable; Pending: 1 Unschedulable"}]}
    pods = [pod("v-mpimaster-0", "launcher", "Pending", node=None, **gang),
            pod("v-mpiworker-0", "worker", "Pending", node=None, **gang),
            pod("v-mpiworker-1", "worker", "Pending", node=None, **UNSCHEDULABLE)]
    pending = dict((p["metadata"]["name"], 300) for p in pods)
    seen = watch.observe("volcano", vcjob("Pending"), pods, pending, 300)
    assert list(seen["refusals"]) == ["v-mpiworker-1"]
    only_gang = watch.observe("volcano", vcjob("Pending"), pods[:2], pending, 300)
    assert sorted(only_gang["refusals"]) == ["v-mpimaster-0", "v-mpiworker-0"]


def test_pending_time_counts_from_the_first_look_and_drops_a_pod_that_started():
    waiting = [pod("a", "worker", "Pending", node=None), pod("b", "worker")]
    first = watch.pending_times({}, waiting, 5)
    assert first == {"a": 0}
    assert watch.pending_times(first, waiting, 2.5) == {"a": 2.5}
    assert watch.pending_times({"a": 2.5}, [pod("a", "worker")], 2) == {}


def test_the_latest_launcher_is_read():
    pods = [pod("j-launcher-x", "launcher", "Failed", created=T0), pod("j-launcher-y", "launcher", created=T2),
            pod("j-worker-0", "worker")]
    assert watch.launcher_pod(pods) == "j-launcher-y"
    assert watch.launcher_pod(pods[2:]) is None
    assert watch.summary([watch._pod_line(p) for p in RUNNING]) == "launcher Running on node-a; 2/2 workers Running"


# ---------------------------------------------------------------- the result and its records

def test_a_real_launcher_log_becomes_the_collective_record():
    with open(CORPUS) as handle:
        text = handle.read()
    job = manifest("volcano")
    seen = dict(watch.observe("volcano", vcjob("Completed"), RUNNING, {}, 60), worker_nodes=["node-a", "node-b"])
    res = job_result.job_result(job, {"library": "nccl", "gpus_per_node": 8}, seen,
                                {"text": text, "duration_s": 191.0}, {"expected_busbw_gbs": 200})
    assert res["verdict"] == "pass" and res["busbw_gbs"] == 237.94
    assert res["threshold_busbw_gbs"] == 160.0 and res["params"]["ranks"] == 16
    [record] = collective_records([res], mode="pool")
    assert record["kind"] == "collective" and record["host"] == "node-a" and record["peer"] == "node-b"
    assert record["params"]["launcher"] == "volcano" and record["params"]["job"] == "commcheck-r1-vcjob"
    assert record["metrics"]["busbw_gbs"] == 237.94 and record["metrics"]["duration_s"] == 191.0
    assert record["metrics"]["rows"][-1] == {"bytes": 8589934592, "busbw_gbs": 237.94}
    slow = job_result.job_result(job, {"library": "nccl"}, seen, {"text": text}, {"expected_busbw_gbs": 400})
    assert slow["verdict"] == "fail"


def test_a_job_that_never_started_is_an_error_with_the_refusal_and_its_fix():
    pods = [pod("j-worker-0", "worker"), pod("j-worker-1", "worker", "Pending", node=None, **UNSCHEDULABLE)]
    seen = watch.observe("mpijob", mpijob(cond("Created")), pods, {"j-worker-1": 60}, 60)
    seen["refusals"]["j-worker-1"]["fix"] = "free rdma/rdma_shared_device_a on a node"
    res = job_result.job_result(manifest(), {}, seen, {"text": None})
    assert res["verdict"] == "error" and res["cause"] == seen["cause"]
    assert res["fix"] == job_result.NOT_STARTED_FIX
    assert res["params"]["hosts"] == ["node-a", "node-b"]                 # the manifest's, none ran
    [record] = collective_records([res])
    assert "fix: free rdma/rdma_shared_device_a on a node" in record["evidence"]


def test_a_job_that_failed_without_a_table_blames_the_job():
    seen = watch.observe("mpijob", mpijob(cond("Failed", reason="BackoffLimitExceeded")), RUNNING, {}, 60)
    res = job_result.job_result(manifest(), {}, seen, {"text": "ssh: connect to host j-worker-1 port 22: refused\n"})
    assert res["verdict"] == "error" and res["cause"].startswith("the mpijob failed: BackoffLimitExceeded")
    assert res["fix"] == job_result.FAILED_FIX
