# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Quarantine: which nodes, kubectl argv lists, the Slurm drain script, and the module as Ansible runs it.

The module tests put a small TOOL DOUBLE of kubectl / scontrol first on PATH
(a recorder that keeps node objects in a JSON file), like the perftest module
tests do; the real kubectl binary checks our command lines (it parses them,
then fails to reach the loopback address we give it).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import quarantine as q

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
COLLECTIONS = os.path.join(REPO, ".build", "collections")
MODULE = os.path.join(REPO, "plugins", "modules", "quarantine.py")

LOCALIZATION = {"components": [
    {"component": "host", "host": "node-3", "peer": None, "cause": "node-3: 6 of its 6 links are bad"},
    {"component": "rail", "host": "node-2", "peer": None, "cause": "node-2 rail 1 (mlx5_1): 3 of 3 links bad"},
    {"component": "link", "host": "node-1", "peer": "node-4", "cause": "link node-1 - node-4 (rail 0) is bad"},
    {"component": "flaky", "host": "node-5", "peer": None, "cause": "flaky"},
    {"component": "fabric", "host": "*", "peer": None, "cause": "rail 0 fabric"},
]}


def test_bad_nodes_from_localization():
    nodes = q.bad_nodes(LOCALIZATION)
    assert [(n["node"], n["components"]) for n in nodes] == [("node-2", ["rail"]), ("node-3", ["host"])]
    assert nodes[1]["reason"] == "commcheck: node-3: 6 of its 6 links are bad"
    assert [n["node"] for n in q.bad_nodes(LOCALIZATION, ("host", "rail", "link"))] == [
        "node-1", "node-2", "node-3", "node-4"]
    # flaky never; fabric names no node
    assert [n["node"] for n in q.bad_nodes(LOCALIZATION, ("fabric",))] == []
    named = q.bad_nodes(LOCALIZATION, node_names={"node-3": "gpu-node-03.example.com"})
    assert named[1]["host"] == "node-3" and named[1]["node"] == "gpu-node-03.example.com"


def test_bad_nodes_from_findings_and_lists():
    findings = [{"kind": "finding", "host": "h1", "peer": None, "params": {"finding": "bad_node"}, "cause": "slow"},
                {"kind": "finding", "host": "h2", "peer": None, "params": {"finding": "bad_nic"}, "cause": "nic"},
                {"kind": "finding", "host": "h2", "peer": None, "params": {"finding": "port_down"}, "cause": "x"},
                {"kind": "rdma_bw", "host": "h9", "peer": "h8", "verdict": "fail"}]
    nodes = q.bad_nodes(findings)
    assert [(n["node"], n["reason"]) for n in nodes] == [("h1", "commcheck: slow"), ("h2", "commcheck: nic")]
    assert [n["node"] for n in q.bad_nodes(["h2", {"host": "h1", "reason": "manual"}])] == ["h1", "h2"]
    with pytest.raises(q.QuarantineError, match="components"):
        q.bad_nodes([], components=("everything",))
    with pytest.raises(q.QuarantineError):
        q.bad_nodes("h1")
    with pytest.raises(q.QuarantineError):
        q.bad_nodes([42])


def test_reason_is_one_clean_line():
    assert q.clean_reason("a\nb\tc\x00d  e") == "a b c d e"
    long = q.clean_reason("x" * 5000)
    assert len(long) == q.MAX_REASON and long.endswith("...")


NODES = [{"node": "node-3", "reason": "commcheck: slow host; rm -rf / $(reboot)"}]


def test_kubectl_plan_without_current_state_plans_everything():
    plan = q.kubectl_plan(NODES, taint=True, kubeconfig="/k/config", context="prod")
    assert [p["action"] for p in plan] == ["label", "annotate", "taint"]
    assert plan[0]["argv"] == ["kubectl", "--kubeconfig", "/k/config", "--context", "prod", "label", "node", "node-3",
                               "commcheck.clusterops.io/result=fail", "--overwrite"]
    assert plan[1]["argv"][-2] == "commcheck.clusterops.io/reason=commcheck: slow host; rm -rf / $(reboot)"
    assert plan[2]["argv"][-2:] == ["commcheck.clusterops.io/result=fail:NoSchedule", "--overwrite"]
    absent = q.kubectl_plan(NODES, state="absent", taint=True)
    assert [p["argv"][-1] for p in absent] == ["commcheck.clusterops.io/result-", "commcheck.clusterops.io/reason-",
                                               "commcheck.clusterops.io/result:NoSchedule-"]


def node_obj(labels=None, annotations=None, taints=None):
    return {"kind": "Node", "metadata": {"name": "node-3", "labels": labels or {}, "annotations": annotations or {}},
            "spec": {"taints": taints or []}}


def test_kubectl_plan_only_what_is_missing():
    done = node_obj({q.LABEL_KEY: "fail"}, {q.ANNOTATION_KEY: NODES[0]["reason"]},
                    [{"key": q.LABEL_KEY, "value": "fail", "effect": "NoSchedule"}])
    assert q.kubectl_plan(NODES, {"node-3": done}, taint=True) == []
    half = node_obj({q.LABEL_KEY: "fail"}, {q.ANNOTATION_KEY: "old reason"})
    assert [p["action"] for p in q.kubectl_plan(NODES, {"node-3": half}, taint=True)] == ["annotate", "taint"]
    assert q.kubectl_plan(NODES, {"node-3": node_obj()}, state="absent", taint=True) == []
    assert [p["action"] for p in q.kubectl_plan(NODES, {"node-3": half}, state="absent")] == ["unlabel", "unannotate"]


@pytest.mark.parametrize("kwargs,match", [
    ({"state": "gone"}, "state"), ({"taint_effect": "Never"}, "taint_effect"),
    ({"label_key": "bad key"}, "label_key"), ({"annotation_key": "-x/y"}, "annotation_key"),
    ({"label_value": "not ok!"}, "label value"), ({"context": "--all"}, "kube_context"),
    ({"kubectl": "../kubectl"}, "kubectl_binary"), ({"kubeconfig": "/k/../config"}, "kubeconfig")])
def test_kubectl_plan_refuses_bad_options(kwargs, match):
    with pytest.raises(q.QuarantineError, match=match):
        q.kubectl_plan(NODES, **kwargs)


@pytest.mark.parametrize("name", ["Node_3", "-n", "node 3", "a" * 254, "node;reboot", ""])
def test_bad_kubernetes_node_names(name):
    with pytest.raises(q.QuarantineError):
        q.kubectl_plan([{"node": name, "reason": "x"}])


def test_slurm_argvs_keep_the_reason_in_one_argument():
    nodes = [{"node": "gpu001", "reason": "commcheck: it's bad; $(reboot) `x`"}, {"node": "gpu002", "reason": "ok"}]
    argvs = q.slurm_argvs(nodes)
    assert argvs[0]["argv"] == ["scontrol", "update", "NodeName=gpu001", "State=DRAIN",
                                "Reason=commcheck: it's bad; $(reboot) `x`"]
    assert q.slurm_argvs(nodes, state="absent")[1]["argv"] == ["scontrol", "update", "NodeName=gpu002",
                                                               "State=RESUME"]
    assert q.slurm_argvs(nodes, scontrol="/opt/slurm/bin/scontrol")[0]["argv"][0] == "/opt/slurm/bin/scontrol"
    # shown to a person as one line, quoted so a paste would not expand it
    assert q.show_argv(argvs[0]["argv"]) == (
        "scontrol update NodeName=gpu001 State=DRAIN 'Reason=commcheck: it'\"'\"'s bad; $(reboot) `x`'")
    assert not hasattr(q, "slurm_script")    # no script is ever written
    for bad in ("gpu 1", "-gpu1", "gpu[1-4]", "gpu1,gpu2", "NodeName=x"):
        with pytest.raises(q.QuarantineError, match="not a valid Slurm node name"):
            q.slurm_argvs([{"node": bad, "reason": "x"}])
    for scontrol in ("../scontrol", "bin/scontrol", "-scontrol", "/opt/../scontrol"):
        with pytest.raises(q.QuarantineError, match="scontrol_binary"):
            q.slurm_argvs(nodes, scontrol=scontrol)


@pytest.mark.skipif(not shutil.which("kubectl"), reason="kubectl is not installed here")
def test_real_kubectl_parses_our_command_lines(tmp_path):
    """kubectl parses every command line we build and fails only for want of a cluster (loopback port 1)."""
    config = tmp_path / "kubeconfig"
    config.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "none",
        "clusters": [{"name": "none", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "none", "user": {"token": "not-a-secret"}}],
        "contexts": [{"name": "none", "context": {"cluster": "none", "user": "none"}}]}))
    plans = q.kubectl_plan(NODES, taint=True, kubeconfig=str(config)) + \
        q.kubectl_plan(NODES, state="absent", taint=True, kubeconfig=str(config))
    plans.append({"action": "get", "argv": q.kubectl_get_argv("node-3", kubeconfig=str(config))})
    for item in plans:
        argv = item["argv"][:1] + ["--request-timeout=5s"] + item["argv"][1:]
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=60, check=False)
        assert proc.returncode != 0
        assert "refused" in proc.stderr, (item["action"], proc.stderr)
        assert "unknown" not in proc.stderr and "invalid" not in proc.stderr.lower(), (item["action"], proc.stderr)


# --- the module, as Ansible runs it ----------------------------------------------------------------

DOUBLE = r'''
import json, os, sys
# TOOL DOUBLE of kubectl / scontrol for the quarantine module tests: records argv, keeps node objects in a file.
state_path = os.environ["QUARANTINE_DOUBLE_STATE"]
with open(state_path) as handle:
    state = json.load(handle)
argv = sys.argv[1:]
state["calls"].append([os.path.basename(sys.argv[0])] + argv)
def save():
    with open(state_path, "w") as handle:
        json.dump(state, handle)
if argv in (["--version"], ["version", "--client"]):
    save()
    print("slurm 23.11.4" if argv == ["--version"] else "Client Version: v1.30.2\nKustomize Version: v5.0.4")
    sys.exit(0)
if os.path.basename(sys.argv[0]) == "scontrol":
    node = [a for a in argv if a.startswith("NodeName=")][0].split("=", 1)[1]
    state["slurm"][node] = [a for a in argv if a.startswith("State=")][0].split("=", 1)[1]
    save()
    sys.exit(0)
while argv and argv[0].startswith("--"):
    argv = argv[2:]
verb, kind, name = argv[0], argv[1], argv[2]
node = state["nodes"].get(name)
if node is None:
    save()
    sys.stderr.write('Error from server (NotFound): nodes "%s" not found\n' % name)
    sys.exit(1)
meta = node["metadata"]
if verb == "get":
    print(json.dumps(node))
elif verb in ("label", "annotate"):
    table = meta.setdefault("labels" if verb == "label" else "annotations", {})
    item = argv[3]
    if item.endswith("-"):
        table.pop(item[:-1], None)
    else:
        key, value = item.split("=", 1)
        table[key] = value
elif verb == "taint":
    taints = node.setdefault("spec", {}).setdefault("taints", [])
    item = argv[3]
    if item.endswith("-"):
        key, effect = item[:-1].split(":")
        node["spec"]["taints"] = [t for t in taints if not (t["key"] == key and t["effect"] == effect)]
    else:
        kv, effect = item.rsplit(":", 1)
        key, value = kv.split("=", 1)
        taints.append({"key": key, "value": value, "effect": effect})
save()
'''


@pytest.fixture
def doubles(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("kubectl", "scontrol"):
        path = bindir / tool
        path.write_text("#!%s\n%s" % (sys.executable, DOUBLE))
        path.chmod(0o755)
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"calls": [], "slurm": {}, "nodes": dict(
        (n, {"kind": "Node", "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}}, "spec": {}})
        for n in ("node-2", "node-3"))}))
    return {"bin": str(bindir), "state": state}


def run_module(args, tmp_path, doubles=None, check_mode=False):
    args = dict(args)
    if check_mode:
        args["_ansible_check_mode"] = True
    argfile = tmp_path / ("args-%d.json" % time.monotonic_ns())
    argfile.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    env = dict(os.environ, PYTHONPATH=COLLECTIONS)
    if doubles:
        env["PATH"] = doubles["bin"] + os.pathsep + env.get("PATH", "")
        env["QUARANTINE_DOUBLE_STATE"] = str(doubles["state"])
    proc = subprocess.run([sys.executable, MODULE, str(argfile)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=120, check=False)
    try:
        return json.loads(proc.stdout[proc.stdout.index("{"):])
    except ValueError:
        raise AssertionError("no JSON from module: rc=%s\n%s\n%s" % (proc.returncode, proc.stdout, proc.stderr))


def calls(doubles):
    return json.loads(doubles["state"].read_text())["calls"]


def test_module_dry_run_is_the_default_and_runs_nothing(tmp_path, doubles):
    res = run_module({"backend": "kubernetes", "localization": LOCALIZATION, "taint": True}, tmp_path, doubles)
    assert res["changed"] is False and res["dry_run"] is True
    assert [(a["node"], a["action"]) for a in res["actions"]] == [
        ("node-2", "label"), ("node-2", "annotate"), ("node-2", "taint"),
        ("node-3", "label"), ("node-3", "annotate"), ("node-3", "taint")]
    assert res["report"][0] == "quarantine (kubernetes, dry run): 6 action(s)"
    assert calls(doubles) == []


def test_module_labels_annotates_taints_and_is_idempotent(tmp_path, doubles):
    args = {"backend": "kubernetes", "localization": LOCALIZATION, "taint": True, "dry_run": False}
    res = run_module(args, tmp_path, doubles)
    assert res["changed"] is True and res["dry_run"] is False
    assert all(a["rc"] == 0 for a in res["actions"]) and len(res["actions"]) == 6
    state = json.loads(doubles["state"].read_text())
    node = state["nodes"]["node-3"]
    assert node["metadata"]["labels"][q.LABEL_KEY] == "fail"
    assert node["metadata"]["annotations"][q.ANNOTATION_KEY] == "commcheck: node-3: 6 of its 6 links are bad"
    assert node["spec"]["taints"] == [{"key": q.LABEL_KEY, "value": "fail", "effect": "NoSchedule"}]
    before = len(calls(doubles))
    again = run_module(args, tmp_path, doubles)
    assert again["changed"] is False and again["actions"] == []
    # the second run only asked kubectl what it is and read the two nodes
    again_calls = calls(doubles)[before:]
    assert again_calls[0] == ["kubectl", "version", "--client"]
    assert [c[1:2] + c[-3:-2] for c in again_calls[1:]] == [["get", "node-2"], ["get", "node-3"]]
    released = run_module(dict(args, state="absent"), tmp_path, doubles)
    assert released["changed"] is True and len(released["actions"]) == 6
    state = json.loads(doubles["state"].read_text())
    assert q.LABEL_KEY not in state["nodes"]["node-3"]["metadata"]["labels"]
    assert state["nodes"]["node-3"]["spec"]["taints"] == []


def test_module_check_mode_plans_only(tmp_path, doubles):
    res = run_module({"backend": "kubernetes", "hosts": ["node-3"], "dry_run": False}, tmp_path, doubles,
                     check_mode=True)
    assert res["changed"] is False and res["dry_run"] is True and len(res["actions"]) == 2
    assert res["nodes"][0]["reason"] == "commcheck: named by the operator"
    assert calls(doubles) == []


def test_module_unknown_node_fails_before_changing_anything(tmp_path, doubles):
    res = run_module({"backend": "kubernetes", "hosts": ["node-2", "node-9"], "dry_run": False}, tmp_path, doubles)
    assert res.get("failed") and "cannot read node node-9" in res["msg"] and "NotFound" in res["msg"]
    assert [c[1] for c in calls(doubles)] == ["version", "get", "get"]


def test_module_refuses_bad_names_before_running(tmp_path, doubles):
    res = run_module({"backend": "kubernetes", "hosts": ["Node_1"], "dry_run": False}, tmp_path, doubles)
    assert res.get("failed") and "not a valid Kubernetes node name" in res["msg"]
    res = run_module({"backend": "slurm", "hosts": ["gpu 1"]}, tmp_path, doubles)
    assert res.get("failed") and "not a valid Slurm node name" in res["msg"]
    res = run_module({"backend": "kubernetes", "hosts": ["n1"], "label_key": "a b"}, tmp_path, doubles)
    assert res.get("failed") and "label_key" in res["msg"]
    assert calls(doubles) == []


def test_module_slurm_dry_run_shows_the_argv_lists_and_writes_nothing(tmp_path, doubles):
    findings = [{"kind": "finding", "host": "node-3", "peer": None, "params": {"finding": "bad_node"},
                 "cause": "node-3 is slow; it's bad"}]
    before = sorted(os.listdir(str(tmp_path)))
    res = run_module({"backend": "slurm", "findings": findings}, tmp_path, doubles)
    assert res["changed"] is False and res["dry_run"] is True
    [action] = res["actions"]
    assert action["argv"][1:] == ["update", "NodeName=node-3", "State=DRAIN",
                                  "Reason=commcheck: node-3 is slow; it's bad"]
    assert os.path.basename(action["argv"][0]) == "scontrol" and "rc" not in action
    assert "script" not in res and "script_path" not in res
    assert res["records"][0]["evidence"] == [q.show_argv(action["argv"])]
    assert calls(doubles) == []
    # only the module's own argument file appeared
    assert [f for f in sorted(os.listdir(str(tmp_path))) if f not in before and not f.startswith("args-")] == []
    gone = run_module({"backend": "slurm", "findings": findings, "script_path": str(tmp_path / "x.sh")},
                      tmp_path, doubles)
    assert gone.get("failed") and "script_path" in gone["msg"] and not (tmp_path / "x.sh").exists()


def test_module_slurm_runs_scontrol_and_reports_each_result(tmp_path, doubles):
    findings = [{"kind": "finding", "host": h, "peer": None, "params": {"finding": "bad_node"}, "cause": "slow"}
                for h in ("node-3", "node-2")]
    res = run_module({"backend": "slurm", "findings": findings, "dry_run": False}, tmp_path, doubles)
    assert res["changed"] is True and res["dry_run"] is False
    assert [(a["node"], a["action"], a["rc"]) for a in res["actions"]] == [
        ("node-2", "drain", 0), ("node-3", "drain", 0)]
    assert json.loads(doubles["state"].read_text())["slurm"] == {"node-2": "DRAIN", "node-3": "DRAIN"}
    # scontrol said what it is (scontrol --version) before the first drain
    assert [c[0:2] for c in calls(doubles)] == [["scontrol", "--version"], ["scontrol", "update"], ["scontrol", "update"]]
    assert res["report"][0] == "quarantine (slurm, applied): 2 action(s)" and res["report"][1].endswith("(rc 0)")
    resumed = run_module({"backend": "slurm", "hosts": ["node-3"], "state": "absent", "dry_run": False},
                         tmp_path, doubles)
    assert resumed["changed"] is True and resumed["actions"][0]["argv"][-1] == "State=RESUME"
    assert json.loads(doubles["state"].read_text())["slurm"]["node-3"] == "RESUME"
    checked = run_module({"backend": "slurm", "hosts": ["node-3"], "dry_run": False}, tmp_path, doubles,
                         check_mode=True)
    assert checked["changed"] is False and checked["dry_run"] is True and len(calls(doubles)) == 5


def test_module_slurm_failure_stops_and_reports_what_ran(tmp_path, doubles):
    failing = tmp_path / "failing-scontrol"   # scontrol is its file name, as the option requires
    failing.write_text("#!/bin/sh\n[ \"$1\" = --version ] && echo 'slurm 23.11.4' && exit 0\n"
                       "echo 'slurm_update error: Invalid node name specified' >&2\nexit 1\n")
    failing.chmod(0o755)
    res = run_module({"backend": "slurm", "hosts": ["gpu001", "gpu002"], "dry_run": False,
                      "scontrol_binary": str(failing)}, tmp_path, doubles)
    assert res.get("failed") and "drain of gpu001 failed (rc 1): slurm_update error" in res["msg"]
    assert [a["node"] for a in res["actions"]] == ["gpu001"] and res["changed"] is False


def test_module_slurm_without_scontrol_says_so(tmp_path):
    res = run_module({"backend": "slurm", "hosts": ["gpu001"], "dry_run": False,
                      "scontrol_binary": str(tmp_path / "no-scontrol")}, tmp_path)
    assert res.get("failed") and "scontrol not found" in res["msg"] and "scontrol_binary" in res["msg"]
    assert res["actions"][0]["argv"][-2:] == ["State=DRAIN", "Reason=commcheck: named by the operator"]


def test_faults_read_each_kind_of_source():
    assert q._faults(None) == []
    assert q._faults({"components": [{"component": "link", "host": "h1", "peer": "h2", "cause": "c"}]}) == [
        ("link", "h1", "h2", "c")]
    assert q._faults(["h1", {"kind": "rdma_bw", "host": "h2"}, {"host": "h3", "reason": "r"},
                      {"kind": "finding", "host": "h4", "params": {"finding": "bad_nic"}, "cause": "nic"}]) == [
        ("host", "h1", None, "named for quarantine"), ("host", "h3", None, "r"), ("rail", "h4", None, "nic")]
    with pytest.raises(q.QuarantineError, match="cannot read a bad node"):
        q._faults([42])


def test_marks_of_a_node_object():
    marks = q._Marks(None, q.LABEL_KEY, "NoSchedule")
    assert marks.known is False and marks.labels == {} and marks.has_taint is False
    obj = {"metadata": {"labels": {q.LABEL_KEY: "fail"}},
           "spec": {"taints": [{"key": q.LABEL_KEY, "effect": "NoExecute"}]}}
    assert q._Marks(obj, q.LABEL_KEY, "NoExecute").has_taint is True
    assert q._Marks(obj, q.LABEL_KEY, "NoSchedule").has_taint is False


def test_culprits_quarantine_their_failing_hosts_and_nics_never_flaky_ones():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits as cp
    found = [cp.culprit("host", "h3", check="collective", cause="runs with h3 are bad"),
             cp.culprit("nic", "h2", rail=1, device="mlx5_1", check="discover", cause="port down"),
             cp.culprit("link", "h1", "h4", 0, check="rdma_perf", cause="slow link"),
             cp.culprit("link", "h1", "h2", 0, verdict="flaky", check="rdma_perf", cause="flaky"),
             cp.culprit("fabric", "*", rail=0, check="rdma_perf", cause="fabric")]
    nodes = q.bad_nodes(found)
    assert [(n["host"], n["components"]) for n in nodes] == [("h2", ["rail"]), ("h3", ["host"])]
    assert "runs with h3 are bad" in nodes[1]["reason"]
    assert [n["host"] for n in q.bad_nodes(found, components=["link"])] == ["h1", "h4"]
