# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Existing pods as hosts, end to end against the kubectl STAND-IN (tests/lab/kubectl_standin.py) in the lab.

The test plays the training job: it creates the pods of ``trainingjob-m1`` with
the stand-in beforehand (outside the collection), four on the lab's nodes and
one that stays Pending, and starts a process of "the job" in one of them. Then
``playbooks/k8s_commcheck.yml`` runs with ``commcheck_k8s_existing_pods``:
discovery, pairwise RDMA (perftest emulator), the collective (real ``mpirun`` in
the first pod, the others reached through the kubexec agent and the stand-in's
exec; nccl-tests emulator) and TCP (real iperf3) run inside those pods.

Checked: a record for every check; the Pending pod and the pod without
nccl-tests are skipped records with the reason; the pods are exactly as the
test created them (nothing applied, deleted or changed); nothing the
collection started is left in them, the job's own process still runs, and the
MPI agent's files are gone.

An interrupted run (SIGINT to ansible-playbook's process group, as Ctrl-C sends
it, while perftest runs in the pods) leaves nothing of the collection in them
either: each module stops its own commands there.

Full tier (``pytest.mark.full``). Run time on the 2-core build machine
(loaded by other work): the full run 50-80 s, the interrupted one about 20 s;
the file with the lab's set-up 70-110 s.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from lab_checks import HEALTHY_VERDICTS, assert_nothing_left, history_env, read_history
from test_k8s_lab import (PLAYBOOK, REPO, STANDIN, VENV_BIN, _after, events, lab_config, lab_vars, mpi_missing,
                          pods_in, run_k8s_playbook)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lab"))
import kubectl_standin  # noqa: E402  pylint: disable=wrong-import-position

# The full tier's: the fast tier runs the checks in pods the collection creates (test_k8s_lab.py).
pytestmark = pytest.mark.full

NAMESPACE = "training"
JOB = "trainingjob-m1"


def job_pod(index, node):
    """A pod of the training job, as the job's controller would have made it (a sidecar first, the tools in main)."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "%s-%d" % (JOB, index), "namespace": NAMESPACE,
                         "labels": {"volcano.sh/job-name": JOB, "volcano.sh/task-spec": "worker"},
                         "annotations": {"k8s.v1.cni.cncf.io/networks": "training/roce-net"}},
            "spec": {"nodeName": node, "containers": [{"name": "sidecar", "image": "registry.example.com/log:1"},
                                                      {"name": "main", "image": "registry.example.com/train:7"}]}}


def standin(config, args):
    env = dict(os.environ, COMMCHECK_KUBECTL_STANDIN=config)
    return subprocess.run([STANDIN] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          env=env, timeout=60, check=False)


def create_job(tmp_path, config, nodes):
    path = tmp_path / "job.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                "items": [job_pod(i, node) for i, node in enumerate(nodes)]}))
    proc = standin(config, ["-n", NAMESPACE, "apply", "-f", str(path)])
    assert proc.returncode == 0, proc.stderr


def collection_processes(pod_keys, job_pids):
    """Processes started in the job's pods that are not the job's own."""
    return [(key, p["cmdline"]) for key in pod_keys for p in kubectl_standin.pod_pids(key) if p["pid"] not in job_pids]


@pytest.fixture
def lab(lab4):
    lab4.heal()
    yield lab4
    lab4.heal()


@pytest.mark.skipif(mpi_missing() is not None, reason=mpi_missing() or "")
def test_checks_run_in_existing_pods_and_leave_them_as_they_were(lab, tmp_path):
    config, state = lab_config(lab, tmp_path)
    hosts = ["gpu-" + h for h in lab.hosts]
    create_job(tmp_path, config, hosts + ["gpu-gone"])
    before = pods_in(state)
    keys = sorted(before)
    assert len(keys) == 5

    # A process of the job itself, in pod 1: the collection must leave it alone.
    started = standin(config, ["-n", NAMESPACE, "exec", JOB + "-1", "-c", "main", "--",
                               "sh", "-c", "sleep 900 >/dev/null 2>&1 & echo $!"])
    assert started.returncode == 0, started.stderr
    job_pids = {int(started.stdout.split()[-1])}
    agent_dir = str(tmp_path / "kubexec")
    try:
        extra = lab_vars(lab, tmp_path, commcheck_k8s_run_id="ex1", commcheck_k8s_mpi_agent_dir=agent_dir,
                         commcheck_k8s_existing_pods={"namespace": NAMESPACE, "container": "main",
                                                      "selector": "volcano.sh/job-name=" + JOB})
        # The image of the pod on gpu-h4 has no nccl-tests where the others have them (a host variable: the
        # extra variable would win over it).
        bindir = extra.pop("commcheck_collective_binary_dir")
        for node, host_vars in extra["commcheck_k8s_node_vars"].items():
            host_vars["commcheck_collective_binary_dir"] = str(tmp_path / "no-tools") if node == "gpu-h4" else bindir
        proc, elapsed = run_k8s_playbook(lab, tmp_path, extra, config)
        output = proc.stdout[-6000:] + proc.stderr[-3000:]
        assert proc.returncode == 0, output
        sys.stderr.write("\nchecks in 4 existing pods: %.0fs\n" % elapsed)

        # the pods: exactly as the job made them; nothing created, deleted or applied
        assert pods_in(state) == before
        log = events(state)
        assert [e for e in log if e["event"] != "exec"] == []
        # nothing of the collection left in them; the job's process still runs; the agent's files are gone
        assert collection_processes(keys, job_pids) == []
        assert [p["pid"] for p in kubectl_standin.pod_pids("%s/%s-1" % (NAMESPACE, JOB))] == sorted(job_pids)
        assert not os.path.exists(agent_dir)
    finally:
        kubectl_standin.end_pod_processes("%s/%s-1" % (NAMESPACE, JOB))       # the job's process
    assert_nothing_left(lab, wait=20)

    execs = [e for e in log if e["event"] == "exec"]
    assert {e["pod"] for e in execs} == set(keys[:4]) and {e["container"] for e in execs} == {"main"}
    stops = [e for e in execs if e["argv"][:2] == ["sh", "-c"] and "kubexec.sh" in e["argv"][2]
             and e["argv"][-3:] == [agent_dir, "3", "COMMCHECK_REMOTE_WRAPPER=1"]]
    assert sorted(e["pod"] for e in stops) == keys[:4]

    records = read_history(tmp_path / "history")
    assert len({r["run_id"] for r in records}) == 1        # the first play's skipped record is of the same run
    kinds = {}
    for rec in records:
        kinds.setdefault(rec.get("kind"), []).append(rec)
    # discovery in the four Running pods, under their nodes' names (spec.nodeName)
    assert sorted(r["host"] for r in kinds["discover"] if r["verdict"] != "skipped") == hosts, kinds["discover"]
    # the Pending pod: a skipped record with the reason
    pending = [r for r in kinds["discover"] if r["verdict"] == "skipped"]
    assert [(r["host"], r["params"]["pod"]) for r in pending] == [("gpu-gone", JOB + "-4")], pending
    assert "Pending" in pending[0]["cause"] and "Unschedulable" in pending[0]["cause"], pending
    # pairwise RDMA in every pod, on both rails (ring of 4 = 4 pairs x 2 rails), with the pods' devices
    rdma = kinds["rdma_bw"]
    assert len(rdma) == 8 and all(r["verdict"] in HEALTHY_VERDICTS for r in rdma), [
        (r["host"], r["peer"], r["verdict"], r["cause"]) for r in rdma]
    assert {r["host"] for r in rdma} | {r["peer"] for r in rdma} == set(hosts)
    perftest = {(e["pod"], _after(e["argv"], "ib_write_bw", "-d")) for e in execs}
    assert {p for p in perftest if p[1]} == {(k, d) for k in keys[:4] for d in ("mlx5_0", "mlx5_1")}
    # TCP over the pods' secondary network
    tcp = kinds["tcp_bw"]
    assert len(tcp) == 4 and all(r["verdict"] in HEALTHY_VERDICTS for r in tcp), tcp
    subnet1 = lab.address(lab.hosts[0], 1).rsplit(".", 1)[0] + "."
    asked = [a for a in (_after(e["argv"], "iperf3", "-c") for e in execs) if a]
    assert asked and all(a.startswith(subnet1) for a in asked), asked
    # the collective: the pod without nccl-tests is skipped with the reason; mpirun in the first pod, the
    # other two reached through the agent (kubectl exec)
    coll = kinds["collective"]
    skipped = [r for r in coll if r["verdict"] == "skipped"]
    assert [r["host"] for r in skipped] == ["gpu-h4"] and "all_reduce_perf" in (skipped[0]["cause"] or ""), skipped
    ran = [r for r in coll if r["verdict"] != "skipped"]
    assert len(ran) == 1 and ran[0]["verdict"] == "pass", [(r["verdict"], r["cause"]) for r in ran]
    assert ran[0]["params"]["hosts"] == hosts[:3]
    mpirun = [e for e in execs if "-np" in e["argv"] and any(a == "mpirun" or a.endswith("/mpirun")
                                                             for a in e["argv"])]
    assert mpirun and {e["pod"] for e in mpirun} == {keys[0]}
    assert agent_dir + "/kubexec.sh" in " ".join(mpirun[0]["argv"])
    orted = [e for e in execs if e["argv"][:2] == ["/bin/sh", "-c"] and "orted" in e["argv"][2]]
    assert sorted(e["pod"] for e in orted) == keys[1:3]


def both_sides(commands):
    """The commands when a server and its client run (two or more), else None: the event to wait for."""
    return commands if len(commands) >= 2 else None


def wait_for(predicate, within):
    """Wait until predicate() is true (an event), at most ``within`` seconds; return its last value."""
    deadline = time.monotonic() + within
    value = predicate()
    while not value and time.monotonic() < deadline:
        time.sleep(0.2)
        value = predicate()
    return value


def test_an_interrupted_run_leaves_nothing_in_the_existing_pods(lab, tmp_path):
    config, state = lab_config(lab, tmp_path)
    create_job(tmp_path, config, ["gpu-" + h for h in lab.hosts])
    before = pods_in(state)
    keys = sorted(before)
    extra = lab_vars(lab, tmp_path, commcheck_k8s_run_id="ex2", commcheck_checks=["discover", "rdma"],
                     commcheck_rdma_duration=300, commcheck_k8s_mpi_agent_dir=str(tmp_path / "kubexec"),
                     commcheck_k8s_existing_pods={"namespace": NAMESPACE, "names": [JOB + "-%d" % i for i in range(4)],
                                                  "container": "main"})
    extra_file = tmp_path / "extra.json"
    extra_file.write_text(json.dumps(extra))
    env = lab.env(history_env(tmp_path / "history", {"COMMCHECK_KUBECTL_STANDIN": config}))
    with open(tmp_path / "playbook.log", "w") as log:
        proc = subprocess.Popen([os.path.join(VENV_BIN, "ansible-playbook"), "-i", lab.inventory,
                                 "-e", "@" + str(extra_file), PLAYBOOK], stdout=log, stderr=subprocess.STDOUT,
                                env=env, cwd=REPO, start_new_session=True)
        try:
            # a server and its client: wait for both (the client starts a moment after its server)
            running = wait_for(lambda: both_sides([c for _key, c in collection_processes(keys, set())
                                                   if "ib_write_bw" in c]), 600)
            assert running and len(running) >= 2, (tmp_path / "playbook.log").read_text()[-4000:]
            os.killpg(proc.pid, signal.SIGINT)                                  # Ctrl-C
            proc.wait(timeout=300)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    left = wait_for(lambda: not collection_processes(keys, set()), 60) or collection_processes(keys, set())
    assert left is True, left
    assert pods_in(state) == before
    assert [e for e in events(state) if e["event"] != "exec"] == []
    assert_nothing_left(lab, wait=20)
