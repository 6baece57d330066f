# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What REAL kubectl does with the command lines the collection builds.

There is no cluster here; real kubectl talks to a loopback request recorder
(tests/lab/kube_api_recorder.py) that answers discovery, serves pods and
nodes from dicts, and records (then refuses) every exec. So these tests show,
with the real kubectl binary:

- the kubectl transport's exec argv: the pod, namespace, container and
  context kubectl uses, and every argv item arriving unchanged as a
  ``command`` parameter of the exec request (the deadline wrapper included);
- the kubexec.sh agent (mpirun's remote agent in pods): the pod it picks and
  the ``/bin/sh -c`` command it sends;
- the test_pods module with real kubectl: listing pods by run label, deleting
  them (``delete --ignore-not-found --wait``), and resolving a node selector;
- ``kubectl apply --dry-run=client`` reading the module's manifest file (with
  ``--validate=false``: the recorder serves no OpenAPI document; the schemas
  are checked with kubernetes-validate in test_k8s_pods.py).

Skipped when no kubectl binary is installed.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import k8s_pods
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import kubexec
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import runner

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LAB = os.path.join(REPO, "tests", "lab")
COLLECTIONS = os.path.join(REPO, ".build", "collections")
if LAB not in sys.path:
    sys.path.insert(0, LAB)

import kube_api_recorder  # noqa: E402  pylint: disable=wrong-import-position

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="no kubectl binary on this machine")


@pytest.fixture
def recorder(tmp_path):
    rec = kube_api_recorder.Recorder()
    rec.config = rec.kubeconfig(str(tmp_path / "kubeconfig"))
    yield rec
    rec.close()


def _run(argv, env=None, timeout=60):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          env=env, timeout=timeout, check=False)


def _pod(name, namespace="ns", node="gpu-01", labels=None):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
            "spec": {"nodeName": node, "containers": [{"name": "commcheck", "image": "x"}]},
            "status": {"phase": "Running", "podIP": "10.244.0.9",
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def test_exec_help_lists_the_flags_we_use():
    helptext = _run([KUBECTL, "exec", "--help"]).stdout
    assert "-c, --container=" in helptext and "kubectl exec" in helptext
    options = _run([KUBECTL, "options"]).stdout
    for flag in ("--kubeconfig=", "--context=", "-n, --namespace="):
        assert flag in options


def test_transport_argv_reaches_the_api_unchanged(recorder):
    """Every argv item, shell metacharacters included, arrives as one command parameter."""
    recorder.pods["ns/p1"] = _pod("p1")
    transport = runner.KubectlTransport(pod="p1", namespace="ns", container="commcheck", context="recorder",
                                        kubeconfig=recorder.config, binary=KUBECTL)
    argv = ["ib_write_bw", "-d", "mlx5_0", "--report_gbits", "a b;$(id)`x`", "'q'", ""]
    wrapped = transport.wrap(argv, 30)
    res = _run(wrapped)
    assert res.returncode != 0 and "exec of ns/p1 recorded" in res.stderr, res.stderr
    execs = recorder.execs()
    assert execs, recorder.requests
    sep = wrapped.index("--")
    for call in execs:            # the WebSocket GET, then the SPDY POST fallback: both carry the same command
        assert call["namespace"] == "ns" and call["pod"] == "p1" and call["container"] == "commcheck"
        assert call["command"] == wrapped[sep + 1:]
    assert execs[0]["command"][-3:] == ["a b;$(id)`x`", "'q'", ""]
    assert execs[0]["command"][:6] == ["sh", "-c", runner._REMOTE_WRAPPER_SH, "sh", str(runner.KILL_GRACE_S), "31"]
    # --context was honoured: the kubeconfig's current context points at a closed port, not at the recorder.
    # (client-go sends no bearer token over plain http, so the user cannot be checked here.)
    assert recorder.requests[0]["path"] == "/version" or recorder.requests[0]["path"].startswith("/api")


def test_plain_and_which_run_without_the_wrapper(recorder):
    recorder.pods["ns/p1"] = _pod("p1")
    transport = runner.KubectlTransport(pod="p1", namespace="ns", context="recorder", kubeconfig=recorder.config,
                                        binary=KUBECTL)
    assert transport.which("iperf3") is None             # exec refused by the recorder -> not found
    assert recorder.execs()[0]["command"] == ["sh", "-c", 'command -v "$1"', "sh", "iperf3"]
    assert recorder.execs()[0]["container"] == "commcheck"   # no -c: kubectl picks the pod's only container


def test_kubexec_agent_with_real_kubectl(recorder, tmp_path):
    """mpirun's remote agent in a pod: real kubectl gets the mapped pod and one /bin/sh -c command."""
    recorder.pods["ns/commcheck-r1-gpu-02"] = _pod("commcheck-r1-gpu-02", node="gpu-02")
    pods = [{"name": "commcheck-r1-gpu-01", "address": "192.168.10.11", "pod_ip": "10.244.1.5"},
            {"name": "commcheck-r1-gpu-02", "address": "192.168.10.12", "pod_ip": "10.244.2.7"}]
    config = kubexec.agent_config(pods, "ns", container="commcheck", kubectl=KUBECTL)
    directory = str(tmp_path / "agent")
    kubexec.install(runner.HostTransport(), directory, config)
    # In a pod kubectl uses the service account; here KUBECONFIG stands for it.
    env = dict(os.environ, KUBECONFIG=recorder.config)
    env.pop("KUBERNETES_SERVICE_HOST", None)
    subprocess.run([KUBECTL, "config", "use-context", "recorder"], env=env, check=True, stdout=subprocess.PIPE)
    orted = ["PATH=/usr/bin:$PATH", ";", "export", "PATH", ";", "orted", "-mca", "orte_hnp_uri",
             "\"4000.0;tcp://192.168.10.11:37000\""]
    res = _run([kubexec.agent_path(directory), "192.168.10.12"] + orted, env=env)
    assert res.returncode != 0 and "exec of ns/commcheck-r1-gpu-02 recorded" in res.stderr, res.stderr
    call = recorder.execs()[0]
    assert call["container"] == "commcheck"
    assert call["command"] == ["/bin/sh", "-c", " ".join(orted)]


def _module(args, tmp_path, check_mode=False):
    argfile = tmp_path / "args.json"
    module_args = dict(args, _ansible_check_mode=check_mode)
    argfile.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": module_args}))
    env = dict(os.environ, PYTHONPATH=COLLECTIONS)
    proc = subprocess.run([sys.executable, os.path.join(REPO, "plugins", "modules", "test_pods.py"), str(argfile)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env,
                          timeout=120, check=False)
    return json.loads(proc.stdout[proc.stdout.index("{"):])


def test_test_pods_lists_and_deletes_with_real_kubectl(recorder, tmp_path):
    run = {k8s_pods.RUN_LABEL: "r1"}
    recorder.pods["ns/commcheck-r1-gpu-01"] = _pod("commcheck-r1-gpu-01", labels=run)
    recorder.pods["ns/commcheck-r1-gpu-02"] = _pod("commcheck-r1-gpu-02", node="gpu-02", labels=run)
    recorder.pods["ns/other"] = _pod("other", labels={k8s_pods.RUN_LABEL: "r2"})
    base = {"run_id": "r1", "namespace": "ns", "state": "absent", "kubeconfig": recorder.config,
            "context": "recorder", "kubectl_binary": KUBECTL, "wait_timeout": 20}
    out = _module(base, tmp_path, check_mode=True)
    assert out.get("failed") is not True, out
    assert out["changed"] is True and out["deleted"] == ["commcheck-r1-gpu-01", "commcheck-r1-gpu-02"]
    assert len(recorder.pods) == 3
    out = _module(base, tmp_path)
    assert out.get("failed") is not True and out["changed"] is True, out
    assert sorted(recorder.pods) == ["ns/other"]
    deletes = [r["path"] for r in recorder.requests if r["method"] == "DELETE"]
    assert deletes == ["/api/v1/namespaces/ns/pods/commcheck-r1-gpu-01", "/api/v1/namespaces/ns/pods/commcheck-r1-gpu-02"]
    listed = [r["query"].get("labelSelector") for r in recorder.requests
              if r["method"] == "GET" and r["path"] == "/api/v1/namespaces/ns/pods"]
    assert [k8s_pods.RUN_LABEL + "=r1"] in listed
    out = _module(base, tmp_path)
    assert out["changed"] is False


def test_test_pods_node_selector_with_real_kubectl(recorder, tmp_path):
    for name, labels, ready, cordoned in (("gpu-01", {"rdma": "true"}, True, False),
                                          ("gpu-02", {"rdma": "true"}, True, True),
                                          ("gpu-03", {"rdma": "true"}, False, False),
                                          ("cpu-01", {}, True, False)):
        recorder.nodes[name] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                                "spec": {"unschedulable": True} if cordoned else {},
                                "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}
    out = _module({"run_id": "r1", "namespace": "ns", "node_selector": "rdma=true", "image": "example/tools:1",
                   "kubeconfig": recorder.config, "context": "recorder", "kubectl_binary": KUBECTL},
                  tmp_path, check_mode=True)
    assert out.get("failed") is not True, out
    assert [m["spec"]["nodeName"] for m in out["manifests"]] == ["gpu-01"]
    assert out["created"] == ["commcheck-r1-gpu-01"] and recorder.pods == {}


def test_apply_dry_run_reads_our_manifest_file(recorder, tmp_path):
    params = dict(state="present", nodes=["gpu-01", "gpu-02"], run_id="r1", namespace="ns", image="example/tools:1",
                  resources={"rdma/rdma_shared_device_a": 1, "nvidia.com/hostdev": "1"}, gpus=8,
                  networks=["ns/roce-net@net1"], shm_size="8Gi", active_deadline_seconds=7200,
                  tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
    manifests = [k8s_pods.build_pod_manifest(params, node) for node in params["nodes"]]
    path = tmp_path / "pods.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": manifests}))   # as test_pods writes it
    res = _run([KUBECTL, "--kubeconfig", recorder.config, "--context", "recorder", "-n", "ns", "apply",
                "--dry-run=client", "--validate=false", "-o", "json", "-f", str(path)])
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    items = out["items"] if out.get("kind") == "List" else [out]
    assert [i["metadata"]["name"] for i in items] == ["commcheck-r1-gpu-01", "commcheck-r1-gpu-02"]
    for item, manifest in zip(items, manifests):
        assert item["spec"] == manifest["spec"]
        assert item["metadata"]["labels"] == manifest["metadata"]["labels"]
    assert not [r for r in recorder.requests if r["method"] in ("POST", "PUT", "PATCH", "DELETE")]
