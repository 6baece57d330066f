# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Existing pods as hosts: the selection, which pods can run tests, the agent config, the stop script."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import runner
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import k8s_existing as ex
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import kubexec
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError
from ansible_collections.clusterops.commcheck.plugins.modules import existing_pods
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import role_options as ro


def pod(name, node="node-a", phase="Running", ready=True, containers=("main",), running=True, **meta):
    status = {"phase": phase, "podIP": "10.0.0.%d" % (len(name) % 200 + 1),
              "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
              "containerStatuses": [{"name": c, "state": {"running": {}} if running else
                                     {"waiting": {"reason": "CrashLoopBackOff"}}} for c in containers]}
    metadata = {"name": name, "namespace": "training"}
    metadata.update(meta)
    return {"metadata": metadata, "spec": {"nodeName": node, "containers": [{"name": c} for c in containers]},
            "status": status}


# ---------------------------------------------------------------- the selection

@pytest.mark.parametrize("selector", ["volcano.sh/job-name=trainingjob-m1", "app", "!canary", "a==b,c!=d",
                                      "role in (worker,master)", "tier notin (x)", "a=,b"])
def test_label_selectors_pass(selector):
    assert ex.check_selection({"selector": selector})["selector"] == selector


@pytest.mark.parametrize("selector,fragment", [
    ("-A", "must not start with '-'"), ("--all-namespaces", "must not start with '-'"),
    ("a=b;id", "is not a label selector"), ("a=$(id)", "is not a label selector"), ("a=b c", "is not a label selector"),
    ("a in b", "is not a label selector"), ("a=b\nc", "")])
def test_hostile_selectors_are_refused(selector, fragment):
    with pytest.raises(OptionError) as err:
        ex.check_selection({"selector": selector}, option="sel")
    assert str(err.value).startswith("sel.selector") and fragment in str(err.value)


@pytest.mark.parametrize("value,fragment", [
    ({}, "needs a selector or names"), ({"names": []}, "needs a selector or names"),
    ({"names": ["-n"]}, "names[0]"), ({"names": ["Pod_1"]}, "names[0]"), ({"names": "a"}, "list of pod names"),
    ({"names": ["a"], "namespace": "--all"}, "namespace"), ({"names": ["a"], "container": "a.b"}, "container"),
    ({"names": ["a"], "podz": 1}, "unknown keys"), ("a", "must be a dict")])
def test_bad_selections_name_what_is_wrong(value, fragment):
    with pytest.raises(OptionError) as err:
        ex.check_selection(value)
    assert fragment in str(err.value)


def test_the_role_option_rule_takes_empty_and_refuses_a_flag_naming_the_variable():
    rule = ro.RULES["commcheck_k8s_existing_pods"]
    rule("commcheck_k8s_existing_pods", {}, None)
    rule("commcheck_k8s_existing_pods", {"names": ["trainingjob-m1-0"], "namespace": "training"}, None)
    with pytest.raises(OptionError) as err:
        rule("commcheck_k8s_existing_pods", {"selector": "-l"}, None)
    assert str(err.value).startswith("commcheck_k8s_existing_pods: selector '-l' must not start with '-'"), err.value


def test_module_options_are_checked_before_kubectl_runs():
    params = dict(state="attached", namespace="training", selector="a=b;id", names=[], container=None,
                  context=None, kubeconfig=None, kubectl_binary=None, pods=[], mpi_agent_dir="/tmp/a b",
                  mpi_agent_kubectl="kubectl", host_name="node")
    errors = existing_pods.option_errors(params)
    assert any(e.startswith("selector ") for e in errors) and any(e.startswith("mpi_agent_dir ") for e in errors)
    params.update(state="detached", pods=[{"name": "-x"}], mpi_agent_dir=None)
    assert any("pods[0].name" in e for e in existing_pods.option_errors(params))


# ---------------------------------------------------------------- which pods

def test_selector_and_names_are_joined_once_and_missing_names_reported():
    a, b, c = pod("a"), pod("b"), pod("c")
    chosen, missing = ex.chosen_pods([a, b], [b, c, pod("d")], ["b", "c", "e"])
    assert [p["metadata"]["name"] for p in chosen] == ["a", "b", "c"] and missing == ["e"]


def test_listed_pods_reads_a_list_or_one_pod():
    assert ex.listed_pods({"kind": "Pod", "metadata": {"name": "a"}}) == [{"kind": "Pod", "metadata": {"name": "a"}}]
    assert ex.listed_pods({"kind": "List", "items": [pod("a"), "junk"]}) == [pod("a")]
    assert ex.listed_pods(None) == []


def test_a_running_ready_pod_is_used_with_its_node_and_container():
    summary, problem = ex.pod_use(pod("trainingjob-m1-0", node="gpu-7", containers=("sidecar", "main")))
    assert problem is None and summary["node"] == "gpu-7" and summary["container"] == "sidecar"
    annotated = pod("w", containers=("sidecar", "main"),
                    annotations={"kubectl.kubernetes.io/default-container": "main"})
    assert ex.pod_use(annotated)[0]["container"] == "main"
    assert ex.pod_use(annotated, "sidecar")[0]["container"] == "sidecar"


@pytest.mark.parametrize("live,asked,fragment", [
    (pod("p", phase="Pending", ready=False), None, "is Pending, not Running"),
    (pod("p", phase="Succeeded", ready=False), None, "is Succeeded, not Running"),
    (pod("p", ready=False), None, "is Running but not Ready"),
    (pod("p", node=None), None, "is not scheduled to a node"),
    (pod("p", deletionTimestamp="2026-01-01T00:00:00Z"), None, "is terminating"),
    (pod("p"), "tools", "has no container 'tools' (containers: main)"),
    (pod("p", running=False), None, "container main is not running (CrashLoopBackOff)"),
])
def test_a_pod_that_cannot_run_tests_is_left_out_with_the_reason(live, asked, fragment):
    summary, problem = ex.pod_use(live, asked)
    assert problem.startswith("pod p ") and fragment in problem, problem
    record = ex.skipped_record(summary, problem)
    assert record["verdict"] == "skipped" and record["kind"] == "discover" and record["cause"] == problem
    assert record["host"] == (summary["node"] or "p") and record["fix"]
    assert ex.skipped_record(summary, problem, host_name="pod")["host"] == "p"


# ---------------------------------------------------------------- the MPI agent

def test_agent_config_gives_each_pod_its_own_container():
    pods = [dict(name="tj-launcher-0", address="10.0.0.1", pod_ip="10.0.0.1", container="launcher"),
            dict(name="tj-worker-0", address="10.0.1.2", pod_ip="10.0.0.2", network_ips=["10.0.1.2"],
                 container="worker")]
    text = ex.agent_config(pods, "training", kubectl="kubectl")
    assert text.splitlines() == ["kubectl kubectl", "namespace training", "host 10.0.0.1 tj-launcher-0 launcher",
                                 "host tj-launcher-0 tj-launcher-0 launcher", "host 10.0.1.2 tj-worker-0 worker",
                                 "host 10.0.0.2 tj-worker-0 worker", "host tj-worker-0 tj-worker-0 worker"]
    pods[1]["pod_ip"] = "10.0.0.1"
    with pytest.raises(kubexec.KubexecError, match="stands for two pods"):
        ex.agent_config(pods, "training")
    with pytest.raises(kubexec.KubexecError):
        ex.agent_config([dict(name="a", address="1.2.3.4", container="-c")], "training")


# ---------------------------------------------------------------- leaving the pods clean

def test_stop_argv_passes_the_directory_as_an_argument_and_refuses_odd_ones():
    argv = ex.stop_argv("/tmp/commcheck-kubexec")
    assert argv[:2] == ["sh", "-c"] and argv[3:] == ["sh", "/tmp/commcheck-kubexec", "3", runner.REMOTE_MARKER]
    assert "/tmp/commcheck-kubexec" not in argv[2]
    for bad in ("/tmp/a b", "relative", "/", "/tmp/$(id)"):
        with pytest.raises(kubexec.KubexecError):
            ex.stop_argv(bad)


def test_stopped_processes_are_read_from_the_script_output():
    out = "stopped 12 timeout -k 3 9 ib_write_bw -d mlx5_0\nnoise\nstopped x y\nremoved /tmp/d\n"
    assert ex.stopped_processes(out) == ([{"pid": 12, "cmdline": "timeout -k 3 9 ib_write_bw -d mlx5_0"}], True)
    assert ex.stopped_processes("") == ([], False)


def test_pod_refs_for_the_cleanup_are_checked():
    assert ex.check_pod_refs([{"name": "a", "container": "main", "node": "n"}, {"name": "b"}]) == [
        {"name": "a", "container": "main"}, {"name": "b", "container": None}]
    with pytest.raises(OptionError, match=r"pods\[0\]"):
        ex.check_pod_refs([{"container": "main"}])


def _unshare_missing():
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("timeout"):
        return "needs root, unshare and timeout (the script runs in a network namespace of its own)"
    probe = subprocess.run(["unshare", "--net", "true"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    return None if probe.returncode == 0 else "unshare --net does not work here"


@pytest.mark.skipif(_unshare_missing() is not None, reason=_unshare_missing() or "")
def test_stop_script_stops_only_the_collections_processes_and_removes_only_its_agent(tmp_path):
    """In a network namespace of its own (so nothing else on this machine is in reach): a wrapped command, an
    MPI agent and a 'job' process; the script stops the first two, leaves the job, and removes the agent files."""
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    (agent_dir / "kubexec.sh").write_text(kubexec.KUBEXEC_SCRIPT)
    (agent_dir / "kubexec.conf").write_text("namespace x\n")
    other = tmp_path / "job-dir"
    other.mkdir()
    (other / "kubexec.sh").write_text("#!/bin/sh\n# the job's own\n")
    stop = " ".join("'%s'" % a.replace("'", "'\\''") for a in ex.stop_argv(str(agent_dir)))
    scene = (
        "env %s timeout -k 3 300 sleep 300 & w=$!; "                           # the deadline wrapper's group
        "\"$PY\" -c 'import time; time.sleep(300)' \"$AGENT\" & a=$!; "          # the MPI agent
        "sleep 301 & j=$!; "                                                    # the job's own
        "timeout -k 3 300 sleep 302 & t=$!; "                                   # the job's own timeout, same grace
        "%s; "
        "wait $w; echo \"wrapper $?\"; wait $a; echo \"agent $?\"; "
        "kill -0 $j && echo job-alive; kill -0 $t && echo job-timeout-alive; kill $j $t" % (runner.REMOTE_MARKER, stop))
    env = dict(os.environ, PY=sys.executable, AGENT=str(agent_dir / "kubexec.sh"))
    proc = subprocess.run(["unshare", "--net", "sh", "-c", scene], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=120, check=False, env=env)
    out = proc.stdout
    stopped, removed = ex.stopped_processes(out)
    assert removed and not agent_dir.exists(), out + proc.stderr
    # the wrapper's child (sleep) inherited the marker too; timeout may have stopped it before the script got to it
    names = set(p["cmdline"].split()[0] for p in stopped)
    assert set([sys.executable, "timeout"]) <= names <= set([sys.executable, "timeout", "sleep"]), out
    assert "wrapper 124" in out or "wrapper 143" in out, out
    assert "agent 143" in out and "job-alive" in out and "job-timeout-alive" in out, out
    assert (other / "kubexec.sh").exists()
