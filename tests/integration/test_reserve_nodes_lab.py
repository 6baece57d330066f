# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reservation of the nodes under test on the Kubernetes path, against the kubectl STAND-IN (not kubectl).

``playbooks/k8s_commcheck.yml`` (real ansible-playbook; two "pods" on this
machine, discovery in them, no root needed) with
``commcheck_reserve_nodes: label``. The stand-in's event log is the record of
what reached "the API server", in order:

- the action as a task runs it (``ansible localhost -m``, fast tier): what it
  reserved, what it left, the release; then a playbook's reservation is
  refused a node that does not exist, nothing set;
- a whole run (full tier, a playbook run of its own): node-a is labelled before the first command in a pod (the
  first test) and the label is removed after the last one; node-b carried
  the key before (another run's) and is left exactly as it was;
- an interrupted run (full tier): SIGINT to ansible-playbook once the first
  test runs; the always sections do not run, and the guard the reservation
  started removes the label all the same.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import signal
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
STANDIN_PY = os.path.join(REPO, "tests", "lab", "kubectl_standin.py")
VENV_PYTHON = os.path.join(REPO, ".venv", "bin", "python")
PYTHON = VENV_PYTHON if os.path.exists(VENV_PYTHON) else sys.executable
PLAYBOOK = os.path.join(REPO, "playbooks", "k8s_commcheck.yml")
KEY = "commcheck.clusterops.io/testing"
NAMESPACE = "commcheck"


@pytest.fixture
def standin(tmp_path):
    """Two 'nodes' that are this machine; node-b carries the reservation key of another run already."""
    launcher = tmp_path / "bin" / "kubectl"
    launcher.parent.mkdir()
    launcher.write_text("#!/bin/sh\n# STAND-IN launcher (commcheck lab): this is not kubectl\nexec %s %s \"$@\"\n"
                        % (PYTHON, STANDIN_PY))
    launcher.chmod(0o755)
    state = tmp_path / "k8s-state.json"
    config = tmp_path / "standin.json"
    config.write_text(json.dumps({
        "state": str(state),
        "nodes": {"node-a": {"addresses": ["127.0.0.1", "127.0.20.1"]},
                  "node-b": {"addresses": ["127.0.0.2", "127.0.20.2"], "labels": {KEY: "another-run"}}}}))
    return {"kubectl": str(launcher), "config": str(config), "state": str(state)}


def playbook(tmp_path, standin, run_id):
    extra = {"commcheck_k8s_kubectl_binary": standin["kubectl"], "commcheck_k8s_nodes": ["node-a", "node-b"],
             "commcheck_k8s_image": "registry.example.com/commcheck-tools:lab", "commcheck_k8s_run_id": run_id,
             "commcheck_k8s_namespace": NAMESPACE, "commcheck_checks": ["discover"],
             "commcheck_report_dir": str(tmp_path / "reports"),
             "commcheck_lock_dir": str(tmp_path / "lock"), "commcheck_run_id": run_id,
             "commcheck_reserve_nodes": "label", "commcheck_reserve_kubectl": standin["kubectl"],
             "commcheck_reserve_state_dir": str(tmp_path / "reservations")}
    extra_file = tmp_path / "extra.json"
    extra_file.write_text(json.dumps(extra))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("K8S_AUTH_", "KUBERNETES_", "KUBECONFIG"))}
    env.update(COMMCHECK_KUBECTL_STANDIN=standin["config"], HOME=str(tmp_path),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build", "collections"), ANSIBLE_PYTHON_INTERPRETER=PYTHON,
               ANSIBLE_NOCOLOR="1", ANSIBLE_DEPRECATION_WARNINGS="0", COMMCHECK_HISTORY_DIR=str(tmp_path / "history"),
               COMMCHECK_HISTORY_FSYNC="false", LC_ALL="C.UTF-8")
    argv = [os.path.join(os.path.dirname(PYTHON), "ansible-playbook"), "-i", "localhost,", "-c", "local",
            "-e", "@" + str(extra_file), PLAYBOOK]
    return argv, env


def events(standin):
    try:
        with open(standin["state"] + ".events") as handle:
            return [json.loads(line) for line in handle if line.strip()]
    except IOError:
        return []


def labels_of(standin, name):
    out = subprocess.run([standin["kubectl"], "get", "node", name, "-o", "json"], stdout=subprocess.PIPE,
                         universal_newlines=True, env=dict(os.environ, COMMCHECK_KUBECTL_STANDIN=standin["config"]),
                         timeout=60, check=True).stdout
    return json.loads(out)["metadata"]["labels"]


def checks_in_pods(log):
    """Indexes of the commands run in the pods for the checks (the MPI agent's files the pods role writes into
    each pod when it creates them are its set-up, not a test)."""
    return [i for i, e in enumerate(log) if e["event"] == "exec" and not any("kubexec.sh" in a for a in e["argv"])]


def reservation_events(log):
    """(index, node, set|removed) of each label call of the reservation key."""
    out = []
    for index, event in enumerate(log):
        if event["event"] == "node" and event["verb"] == "label":
            for item in event["args"]:
                if item.startswith(KEY + "="):
                    out.append((index, event["node"], "set"))
                elif item == KEY + "-":
                    out.append((index, event["node"], "removed"))
    return out


@pytest.mark.full
def test_nodes_are_reserved_before_the_first_test_and_released_after_the_last(tmp_path, standin):
    argv, env = playbook(tmp_path, standin, "rsv-whole")
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env,
                          cwd=REPO, timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    log = events(standin)
    execs = checks_in_pods(log)
    marks = reservation_events(log)
    assert execs
    # node-a: set once before the first command in a pod, removed once after the last; node-b: never touched
    assert [(n, what) for _i, n, what in marks] == [("node-a", "set"), ("node-a", "removed")], marks
    assert marks[0][0] < execs[0] and marks[1][0] > execs[-1]
    assert not [e for e in log if e["event"] == "node" and e["node"] == "node-b"]
    assert KEY not in labels_of(standin, "node-a")
    assert labels_of(standin, "node-b")[KEY] == "another-run"
    assert os.listdir(str(tmp_path / "reservations")) == []


@pytest.mark.full
def test_an_interrupted_run_releases_the_nodes(tmp_path, standin, wait_until):
    argv, env = playbook(tmp_path, standin, "rsv-sigint")
    out = open(str(tmp_path / "ansible.out"), "w")
    proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=REPO)
    try:
        # interrupted once the first test runs in a pod, the node reserved
        started = wait_until(lambda: checks_in_pods(events(standin)), within=600)
        assert started, open(str(tmp_path / "ansible.out")).read()[-4000:]
        assert KEY in labels_of(standin, "node-a")
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        out.close()
        subprocess.run([standin["kubectl"], "delete", "pod", "-n", NAMESPACE, "-l",
                        "commcheck.clusterops.io/run=rsv-sigint", "--ignore-not-found"],
                       env=dict(os.environ, COMMCHECK_KUBECTL_STANDIN=standin["config"]), timeout=120, check=False,
                       stdout=subprocess.DEVNULL)
    assert proc.returncode != 0
    # ansible-playbook is gone without its always sections: the guard removes the label
    assert wait_until(lambda: KEY not in labels_of(standin, "node-a"), within=120)
    marks = reservation_events(events(standin))
    assert [(n, what) for _i, n, what in marks] == [("node-a", "set"), ("node-a", "removed")], marks
    assert labels_of(standin, "node-b")[KEY] == "another-run"
    assert wait_until(lambda: os.listdir(str(tmp_path / "reservations")) == [], within=60)


def adhoc(tmp_path, standin, **args):
    """The action as a task runs it: ``ansible localhost -m clusterops.commcheck.reserve_nodes``; its result."""
    _argv, env = playbook(tmp_path, standin, "unused")
    args = dict({"run_id": "rsv-adhoc", "kubectl_binary": standin["kubectl"],
                 "state_dir": str(tmp_path / "reservations")}, **args)
    proc = subprocess.run([os.path.join(os.path.dirname(PYTHON), "ansible"), "localhost", "-i", "localhost,", "-c",
                           "local", "-m", "clusterops.commcheck.reserve_nodes", "-a", json.dumps(args)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env, cwd=REPO,
                          timeout=300, check=False)
    try:      # ad hoc's output: 'localhost | CHANGED => {...}' ('FAILED!' stands for the result's 'failed')
        result = json.loads(proc.stdout[proc.stdout.index("=> {") + 3:])
    except ValueError:
        raise AssertionError(proc.stdout[-3000:] + proc.stderr[-2000:])
    result.setdefault("failed", "localhost | FAILED!" in proc.stdout)
    return result


def kubectl(standin, *args):
    return subprocess.run([standin["kubectl"]] + list(args), stdout=subprocess.PIPE, universal_newlines=True,
                          env=dict(os.environ, COMMCHECK_KUBECTL_STANDIN=standin["config"]), timeout=60,
                          check=True).stdout


def taints_of(standin, name):
    return json.loads(kubectl(standin, "get", "node", name, "-o", "json"))["spec"].get("taints") or []


def test_the_action_reserves_its_guard_releases_when_ansible_ends_and_the_release_undoes(
        tmp_path, standin, wait_until):
    reservations = tmp_path / "reservations"
    res = adhoc(tmp_path, standin, nodes=["node-a"], mode="taint")
    assert not res.get("failed"), res
    assert res["reserved"] == ["node-a"] and res["reserved_before"] == [] and res["changed"] is True
    # the ad hoc run was the controller: it ended, so its guard took the taint off (and the file)
    assert wait_until(lambda: taints_of(standin, "node-a") == [] and os.listdir(str(reservations)) == [],
                      within=120)
    taint_calls = [e["args"] for e in events(standin) if e["event"] == "node" and e["verb"] == "taint"]
    assert taint_calls == [[KEY + "=rsv-adhoc:NoSchedule"], [KEY + ":NoSchedule-"]]
    # node-b carries the key: left as it was
    kept = adhoc(tmp_path, standin, nodes=["node-b"], mode="label", run_id="rsv-other")
    assert kept["reserved"] == [] and kept["reserved_before"] == ["node-b"] and kept["changed"] is False
    assert not [e for e in events(standin) if e["event"] == "node" and e["node"] == "node-b"]
    assert labels_of(standin, "node-b")[KEY] == "another-run"
    # the release undoes what the run's file holds, and removes it
    kubectl(standin, "label", "node", "node-a", KEY + "=rsv-kept")
    with open(str(reservations / "rsv-kept.json"), "w") as handle:
        json.dump({"undo": [{"node": "node-a", "action": "release",
                             "argv": [standin["kubectl"], "label", "node", "node-a", KEY + "-"]}]}, handle)
    back = adhoc(tmp_path, standin, state="absent", run_id="rsv-kept")
    assert back["released"] == ["node-a"] and back["changed"] is True and not back.get("failed"), back
    assert KEY not in labels_of(standin, "node-a") and os.listdir(str(reservations)) == []
    # an unknown node: refused before anything is set
    bad = adhoc(tmp_path, standin, nodes=["node-a", "node-x"], run_id="rsv-bad")
    assert bad.get("failed") and "cannot read node node-x" in bad["msg"] and "nothing was reserved" in bad["msg"]
    assert [e["args"] for e in events(standin) if e["event"] == "node" and e["verb"] == "label"] == [
        [KEY + "=rsv-kept"], [KEY + "-"]]
