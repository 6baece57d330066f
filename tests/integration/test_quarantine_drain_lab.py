# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Quarantine's cordon and drain against the kubectl STAND-IN (tests/lab/kubectl_standin.py, not kubectl).

No lab hosts: the stand-in's nodes are this machine and its pods are entries
of its state file (a ReplicaSet's pod, a DaemonSet's pod, one a
PodDisruptionBudget of the stand-in's configuration covers). The module runs as
Ansible runs it (its file, with its arguments as JSON):

- a dry run plans the drain and runs nothing (the stand-in logs no call);
- a real drain evicts the node's pods but the DaemonSet's, never with
  ``--force``, ``--disable-eviction`` nor ``--delete-emptydir-data``;
- a PodDisruptionBudget keeps its pod until ``drain_timeout``: the task fails
  saying so, the record's ``params.drain`` says ``pdb_blocked``, and the other
  node was still drained;
- ``state=absent`` uncordons.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
STANDIN_PY = os.path.join(REPO, "tests", "lab", "kubectl_standin.py")
MODULE = os.path.join(REPO, "plugins", "modules", "quarantine.py")
COLLECTIONS = os.path.join(REPO, ".build", "collections")


def pod(name, node, owner="ReplicaSet", labels=None, namespace="apps"):
    meta = {"name": name, "namespace": namespace, "labels": labels or {"app": name}}
    if owner:
        meta["ownerReferences"] = [{"kind": owner, "name": name + "-owner", "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": node, "containers": [{"name": "main", "image": "registry.example.com/app:1"}]},
            "status": {"phase": "Running"}}


@pytest.fixture
def standin(tmp_path):
    launcher = tmp_path / "bin" / "kubectl"
    launcher.parent.mkdir()
    launcher.write_text("#!/bin/sh\n# STAND-IN launcher (commcheck lab): this is not kubectl\nexec %s %s \"$@\"\n"
                        % (sys.executable, STANDIN_PY))
    launcher.chmod(0o755)
    state = tmp_path / "k8s-state.json"
    pods = [pod("web-1", "node-a"), pod("exporter-a", "node-a", owner="DaemonSet", namespace="monitoring"),
            pod("db-0", "node-b", owner="StatefulSet", labels={"app": "db"}), pod("web-2", "node-b"),
            pod("exporter-b", "node-b", owner="DaemonSet", namespace="monitoring")]
    state.write_text(json.dumps(dict(("%s/%s" % (p["metadata"]["namespace"], p["metadata"]["name"]), p)
                                     for p in pods)))
    config = tmp_path / "standin.json"
    config.write_text(json.dumps({
        "state": str(state),
        "nodes": {"node-a": {"addresses": ["127.0.0.1"]}, "node-b": {"addresses": ["127.0.0.2"]}},
        "pdbs": [{"namespace": "apps", "selector": "app=db"}]}))
    return {"kubectl": str(launcher), "config": str(config), "state": str(state)}


def run_module(tmp_path, standin, **args):
    args = dict({"backend": "kubernetes", "hosts": ["node-a", "node-b"], "kubectl_binary": standin["kubectl"]},
                **args)
    argfile = tmp_path / ("args-%d.json" % time.monotonic_ns())
    argfile.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    env = dict(os.environ, PYTHONPATH=COLLECTIONS, COMMCHECK_KUBECTL_STANDIN=standin["config"])
    proc = subprocess.run([sys.executable, MODULE, str(argfile)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=300, check=False)
    try:
        return json.loads(proc.stdout[proc.stdout.index("{"):])
    except ValueError:
        raise AssertionError("no JSON from module: rc=%s\n%s\n%s" % (proc.returncode, proc.stdout, proc.stderr))


def events(standin, kind):
    try:
        with open(standin["state"] + ".events") as handle:
            return [e for e in (json.loads(line) for line in handle if line.strip()) if e["event"] == kind]
    except IOError:
        return []


def pods_left(standin):
    with open(standin["state"]) as handle:
        return sorted(json.load(handle))


def node(standin, name):
    out = subprocess.run([standin["kubectl"], "get", "node", name, "-o", "json"], stdout=subprocess.PIPE,
                         universal_newlines=True, env=dict(os.environ, COMMCHECK_KUBECTL_STANDIN=standin["config"]),
                         timeout=60, check=True).stdout
    return json.loads(out)


def test_drain_dry_run_plans_and_runs_nothing(tmp_path, standin):
    res = run_module(tmp_path, standin, drain=True, drain_timeout=45)
    assert not res.get("failed"), res
    assert res["dry_run"] is True and res["changed"] is False
    drains = [a for a in res["actions"] if a["action"] == "drain"]
    assert [d["argv"][1:] for d in drains] == [["drain", "node-a", "--ignore-daemonsets", "--timeout=45s"],
                                               ["drain", "node-b", "--ignore-daemonsets", "--timeout=45s"]]
    assert all("would also drain" in r["cause"] for r in res["records"])
    assert events(standin, "node") == [] and events(standin, "delete") == []
    assert len(pods_left(standin)) == 5


def test_drain_evicts_but_daemonsets_and_a_pdb_blocks_until_the_timeout(tmp_path, standin):
    res = run_module(tmp_path, standin, drain=True, drain_timeout=2, dry_run=False)
    # node-b's db-0 is kept by its PodDisruptionBudget: the task fails and says so; node-a was drained all the same
    assert res.get("failed") is True, res
    assert "blocked by a PodDisruptionBudget" in res["msg"] and "apps/db-0" in res["msg"], res["msg"]
    assert [line for line in res["report"] if "blocked by a PodDisruptionBudget" in line]     # the role shows it
    outcomes = dict((a["node"], a["outcome"]) for a in res["actions"] if a["action"] == "drain")
    assert outcomes["node-a"]["outcome"] == "drained"
    assert outcomes["node-b"]["outcome"] == "pdb_blocked" and outcomes["node-b"]["pods"] == ["apps/db-0"]
    records = dict((r["params"]["node"], r) for r in res["records"])
    assert records["node-b"]["params"]["drain"]["outcome"] == "pdb_blocked"
    assert "blocked by a PodDisruptionBudget" in records["node-b"]["cause"]
    assert records["node-a"]["params"]["drain"]["outcome"] == "drained"
    # evicted: the ReplicaSets' pods; kept: the DaemonSets' pods and the pod the budget covers
    assert pods_left(standin) == ["apps/db-0", "monitoring/exporter-a", "monitoring/exporter-b"]
    drains = [e for e in events(standin, "node") if e["verb"] == "drain"]
    assert [e["node"] for e in drains] == ["node-a", "node-b"]
    for event in drains:
        assert "ignore-daemonsets" in event["switches"] and "timeout" in event["switches"]
        assert not {"force", "disable-eviction", "delete-emptydir-data"} & set(event["switches"])
    assert node(standin, "node-a")["spec"].get("unschedulable") is True
    assert node(standin, "node-b")["spec"].get("unschedulable") is True
    # released: labels off and uncordoned
    back = run_module(tmp_path, standin, drain=True, state="absent", dry_run=False)
    assert not back.get("failed"), back
    assert sorted((a["node"], a["action"]) for a in back["actions"] if a["action"] == "uncordon") == [
        ("node-a", "uncordon"), ("node-b", "uncordon")]
    assert not node(standin, "node-a")["spec"].get("unschedulable")
    assert "commcheck.clusterops.io/result" not in node(standin, "node-b")["metadata"]["labels"]


def test_cordon_only_cordons_once(tmp_path, standin):
    res = run_module(tmp_path, standin, cordon=True, hosts=["node-a"], dry_run=False)
    assert not res.get("failed"), res
    assert [a["action"] for a in res["actions"]] == ["label", "annotate", "cordon"]
    assert node(standin, "node-a")["spec"]["unschedulable"] is True
    assert len(pods_left(standin)) == 5                 # a cordon evicts nothing
    again = run_module(tmp_path, standin, cordon=True, hosts=["node-a"], dry_run=False)
    assert again["actions"] == [] and again["changed"] is False


def test_the_role_drains_publishes_the_records_then_fails_on_a_blocked_drain(tmp_path, standin):
    """The quarantine role as a play runs it: its variables reach the module, the records are published (the
    history has them) even though a PodDisruptionBudget blocked a drain, and then the play fails."""
    python = os.path.join(REPO, ".venv", "bin", "python")
    python = python if os.path.exists(python) else sys.executable
    playbook = tmp_path / "quarantine.yml"
    playbook.write_text(json.dumps([{
        "name": "Quarantine", "hosts": "localhost", "gather_facts": False,
        "roles": [{"role": "clusterops.commcheck.quarantine"}],
        "vars": {"commcheck_quarantine": True, "commcheck_quarantine_hosts": ["node-a", "node-b"],
                 "commcheck_quarantine_dry_run": False, "commcheck_quarantine_drain": True,
                 "commcheck_quarantine_drain_timeout": 2, "commcheck_run_records": []}}]))
    env = dict(os.environ, COMMCHECK_KUBECTL_STANDIN=standin["config"],
               PATH=os.path.dirname(standin["kubectl"]) + os.pathsep + os.environ.get("PATH", ""),
               ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_PYTHON_INTERPRETER=python, ANSIBLE_NOCOLOR="1",
               ANSIBLE_CALLBACKS_ENABLED="clusterops.commcheck.commcheck_history",
               COMMCHECK_HISTORY_DIR=str(tmp_path / "history"), COMMCHECK_HISTORY_FSYNC="false",
               COMMCHECK_RUN_ID="quar37-role", LC_ALL="C.UTF-8")
    proc = subprocess.run([os.path.join(os.path.dirname(python), "ansible-playbook"), "-i", "localhost,", "-c",
                           "local", str(playbook)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=env, cwd=str(tmp_path), timeout=600, check=False)
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert "drain of kubernetes node-b blocked by a PodDisruptionBudget" in proc.stdout, proc.stdout[-3000:]
    records = [json.loads(line) for name in sorted(os.listdir(str(tmp_path / "history")))
               if name.endswith(".jsonl") for line in open(str(tmp_path / "history" / name)) if line.strip()]
    drains = dict((r["params"]["node"], r["params"]["drain"]["outcome"]) for r in records
                  if r.get("kind") == "quarantine")
    assert drains == {"node-a": "drained", "node-b": "pdb_blocked"}
    assert pods_left(standin) == ["apps/db-0", "monitoring/exporter-a", "monitoring/exporter-b"]
