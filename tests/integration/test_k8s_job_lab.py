# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collective check as an MPIJob or a Volcano Job, end to end, against the kubectl STAND-IN.

There is no Kubernetes cluster, no mpi-operator and no Volcano here: the stand-in (tests/lab/kubectl_standin.py
with tests/lab/kube_jobs_standin.py) plays the API server and both operators after their real semantics (the
pods' names, the status conditions / phases, gang scheduling, cleanPodPolicy) on this machine's "nodes" (no
root, no lab). The launcher's mpirun is real Open MPI and its ranks the nccl-tests EMULATOR (mpi4py), all on
this machine (the stand-in drops ``--map-by ppr:K:node``: mpi-operator would start them on the workers).

``playbooks/k8s_commcheck.yml`` with ``commcheck_k8s_render_job`` + ``commcheck_k8s_run_job`` and
``commcheck_k8s_render_only`` (the job only, no test pods):

- fast tier: an MPIJob that succeeds: the manifest still written, the job submitted, watched, its launcher's
  log read into the same ``collective`` record (bus bandwidth, per-size rows, the nodes), the job and its
  pods deleted;
- full tier: a Volcano Job whose worker cannot be scheduled (its node has no free RDMA device): the run's
  record is an error that names the pod and the scheduler's reason, and a fix; nothing is left. And an
  interrupted run (Ctrl-C, SIGINT to ansible-playbook's process group, once the stand-in logged that the
  launcher runs): the job is deleted, its launcher's processes killed.

Run times on the 2-core build machine: 20-40 s each.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import signal
import subprocess
import time

import pytest

from lab_checks import history_env, read_history
from test_k8s_lab import (PLAYBOOK, REPO, STANDIN, VENV_BIN, ansible_env, events, mpi_missing, nccl_binaries, pods_in,
                          write_config)

RUN_LABEL = "commcheck.clusterops.io/run"
IMAGE = "registry.example.com/commcheck-tools:lab"


@pytest.fixture
def nodes(tmp_path):
    """Two Ready 'nodes' that are this machine; node-b has no free rdma/rdma_shared_device_a."""
    if mpi_missing():
        pytest.skip(mpi_missing())
    return write_config(tmp_path, {
        "node-a": {"addresses": ["127.0.0.1"], "labels": {"rdma": "true"}},
        "node-b": {"addresses": ["127.0.0.2"], "labels": {"rdma": "true"}},
        "node-c": {"addresses": ["127.0.0.3"], "labels": {"rdma": "true"},
                   "exhausted": ["rdma/rdma_shared_device_a"]}})


def job_vars(tmp_path, kind, run_id, nodes, iterations=3, **more):
    values = {"commcheck_k8s_kubectl_binary": STANDIN, "commcheck_k8s_namespace": "commcheck",
              "commcheck_k8s_image": IMAGE, "commcheck_k8s_nodes": nodes, "commcheck_k8s_run_id": run_id,
              "commcheck_k8s_resources": {"rdma/rdma_shared_device_a": 1},
              "commcheck_k8s_render_job": kind, "commcheck_k8s_run_job": True, "commcheck_k8s_render_only": True,
              "commcheck_k8s_manifest_dir": str(tmp_path / "manifests"), "commcheck_k8s_wait_timeout": 6,
              "commcheck_k8s_job_timeout": 600,
              "commcheck_k8s_job_collective": {"binary_dir": nccl_binaries(), "min_bytes": "64K", "max_bytes": "256K",
                                               "iterations": iterations, "warmup_iterations": 1}}
    values.update(more)
    path = tmp_path / "extra.json"
    path.write_text(json.dumps(values))
    return path


def playbook(extra_file, config, history):
    return [os.path.join(VENV_BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", "-e", "@" + str(extra_file),
            PLAYBOOK], ansible_env(config, history_env(history))


def run(tmp_path, config, extra_file):
    argv, env = playbook(extra_file, config, tmp_path / "history")
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, env=env,
                          cwd=REPO, timeout=600, check=False)
    records = [r for r in read_history(tmp_path / "history") if r.get("kind") == "collective"]
    return proc, records


def jobs_in(state):
    try:
        with open(state + ".jobs") as handle:
            return json.load(handle)
    except (IOError, ValueError):
        return {}


def test_an_mpijob_runs_and_its_launcher_log_becomes_the_collective_record(tmp_path, nodes):
    config, state = nodes
    proc, records = run(tmp_path, config, job_vars(tmp_path, "mpijob", "kj1", ["node-a", "node-b"]))
    assert proc.returncode == 0, proc.stdout[-5000:]
    assert (tmp_path / "manifests" / "kj1-mpijob.yml").exists()           # the artifact, written all the same
    assert len(records) == 1, records
    record = records[0]
    assert record["verdict"] == "pass", record
    assert record["params"]["launcher"] == "mpijob" and record["params"]["job"] == "commcheck-kj1-mpijob"
    assert record["params"]["hosts"] == ["node-a", "node-b"] and record["host"] == "node-a"
    assert record["metrics"]["busbw_gbs"] > 0
    assert [row["bytes"] for row in record["metrics"]["rows"]] == [65536, 131072, 262144]
    assert record["metrics"]["nccl_version"].endswith("+emulated")
    seen = [e["event"] for e in events(state)]
    assert seen.index("job-apply") < seen.index("job-running") < seen.index("job-ended") < seen.index("job-delete")
    # mpi-operator's names, and nothing left of the run
    applied = [e for e in events(state) if e["event"] == "job-delete"][0]
    assert applied["job"] == "mpijob:commcheck/commcheck-kj1-mpijob"
    assert jobs_in(state) == {} and pods_in(state) == {}
    assert "Succeeded: pass" in proc.stdout


@pytest.mark.full
def test_a_volcano_worker_that_cannot_schedule_fails_the_run_with_the_scheduler_reason(tmp_path, nodes):
    config, state = nodes
    proc, records = run(tmp_path, config, job_vars(tmp_path, "volcano", "kj2", ["node-a", "node-c"]))
    assert proc.returncode == 0, proc.stdout[-5000:]
    assert len(records) == 1, records
    record = records[0]
    assert record["verdict"] == "error" and record["params"]["launcher"] == "volcano"
    assert "commcheck-kj2-vcjob-mpiworker-1 (worker): Unschedulable" in record["cause"], record["cause"]
    assert "Insufficient rdma/rdma_shared_device_a" in record["cause"]
    assert any(line.startswith("fix: ") and "rdma/rdma_shared_device_a" in line for line in record["evidence"]), \
        record["evidence"]
    assert not [e for e in events(state) if e["event"] == "job-running"]        # gang scheduling: nothing ran
    assert jobs_in(state) == {} and pods_in(state) == {}


def wait_for(predicate, within):
    deadline = time.monotonic() + within
    value = predicate()
    while not value and time.monotonic() < deadline:
        time.sleep(0.2)
        value = predicate()
    return value


@pytest.mark.full
def test_an_interrupted_run_deletes_the_job_and_its_launcher(tmp_path, nodes):
    config, state = nodes
    extra = job_vars(tmp_path, "mpijob", "kj3", ["node-a", "node-b"], iterations=1000000)
    argv, env = playbook(extra, config, tmp_path / "history")
    with open(tmp_path / "playbook.log", "w") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO,
                                start_new_session=True)
        try:
            running = wait_for(lambda: [e for e in events(state) if e["event"] == "job-running"], 300)
            assert running, (tmp_path / "playbook.log").read_text()[-4000:]
            os.killpg(proc.pid, signal.SIGINT)                                  # Ctrl-C
            proc.wait(timeout=300)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    deleted = wait_for(lambda: [e for e in events(state) if e["event"] == "job-delete"], 120)
    assert deleted and deleted[0]["job"] == "mpijob:commcheck/commcheck-kj3-mpijob", \
        (tmp_path / "playbook.log").read_text()[-4000:]
    assert any("mpirun" in k["cmdline"] for k in deleted[0]["killed"]), deleted
    assert jobs_in(state) == {}
    assert wait_for(lambda: pods_in(state) == {}, 60), pods_in(state)
    assert not [e for e in events(state) if e["event"] == "job-ended"]
