# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes path with nothing but AWX's Kubernetes credential, against the kubectl STAND-IN.

There is no cluster here: tests/lab/kubectl_standin.py (not kubectl) stands
for kubectl and its API server. Configured with ``auth``, it loads a
kubeconfig the way real kubectl does (``--kubeconfig``, ``KUBECONFIG``,
``~/.kube/config``, the pod's service account) and refuses, with real
kubectl's messages, a call whose kubeconfig does not lead to its server, with
its CA, as its user (bearer token). The messages were taken from real kubectl
1.32 against a loopback endpoint; what real kubectl does with the kubeconfig
the collection writes is in tests/unit/test_kube_auth.py.

- the stand-in's rules, one call each (no playbook);
- one run of ``playbooks/k8s_commcheck.yml`` (real ansible-playbook; two "pods"
  on this machine, discovery and TCP with real iperf3, no root needed) whose
  only credentials are the variables AWX's "OpenShift or Kubernetes API Bearer
  Token" credential injects: ``K8S_AUTH_HOST``, ``K8S_AUTH_API_KEY``,
  ``K8S_AUTH_VERIFY_SSL=True`` and ``K8S_AUTH_SSL_CA_CERT`` (the path of a file
  holding the CA's PEM, as AWX writes it). Every kubectl call of the run must
  authenticate; afterwards the kubeconfigs the modules wrote are gone and the
  token is in no output, record or report.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import glob
import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
STANDIN_PY = os.path.join(REPO, "tests", "lab", "kubectl_standin.py")
VENV_PYTHON = os.path.join(REPO, ".venv", "bin", "python")
PYTHON = VENV_PYTHON if os.path.exists(VENV_PYTHON) else sys.executable
PLAYBOOK = os.path.join(REPO, "playbooks", "k8s_commcheck.yml")
SERVER = "https://api.gpu-lab.example:6443"
TOKEN = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImxhYiJ9.Y29tbWNoZWNrLWxhYi10b2tlbg.c2lnbmF0dXJl"
CA_PEM = "-----BEGIN CERTIFICATE-----\nMIIBlabCA\n-----END CERTIFICATE-----\n"
NOT_SERVED = "The connection to the server localhost:8080 was refused - did you specify the right host or port?"
UNAUTHORIZED = "error: You must be logged in to the server (the server has asked for the client to provide credentials)"


@pytest.fixture
def standin(tmp_path):
    """The stand-in's launcher and configuration: two 'nodes' that are this machine, and the credentials it wants."""
    launcher = tmp_path / "bin" / "kubectl"
    launcher.parent.mkdir()
    launcher.write_text("#!/bin/sh\n# STAND-IN launcher (commcheck lab): this is not kubectl\nexec %s %s \"$@\"\n"
                        % (PYTHON, STANDIN_PY))
    launcher.chmod(0o755)
    service_account = tmp_path / "serviceaccount"
    service_account.mkdir()
    (service_account / "token").write_text(TOKEN + "\n")
    (service_account / "ca.crt").write_text(CA_PEM)
    state = tmp_path / "k8s-state.json"
    config = tmp_path / "standin.json"
    config.write_text(json.dumps({
        "state": str(state),
        "nodes": {"node-a": {"addresses": ["127.0.0.1", "127.0.20.1"]},
                  "node-b": {"addresses": ["127.0.0.2", "127.0.20.2"]}},
        "auth": {"server": SERVER, "token": TOKEN, "ca": CA_PEM, "service_account_dir": str(service_account)}}))
    home = tmp_path / "home"            # no ~/.kube/config
    home.mkdir()
    return {"kubectl": str(launcher), "config": str(config), "state": str(state), "home": str(home),
            "service_account": str(service_account)}


def clean_env(standin, **extra):
    """This process's environment without any kubectl or K8S_AUTH setting of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("K8S_AUTH_", "KUBERNETES_", "KUBECONFIG"))}
    env.update(HOME=standin["home"], COMMCHECK_KUBECTL_STANDIN=standin["config"])
    env.update(extra)
    return env


def events(standin, kind="call"):
    try:
        with open(standin["state"] + ".events") as handle:
            return [e for e in (json.loads(line) for line in handle if line.strip()) if e["event"] == kind]
    except IOError:
        return []


def kubeconfig(tmp_path, name, cluster=None, user=None):
    """A kubeconfig written by hand (what an operator would have)."""
    path = tmp_path / name
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "lab",
        "clusters": [{"name": "lab", "cluster": dict({"server": SERVER}, **(cluster or {}))}],
        "users": [{"name": "lab", "user": {"token": TOKEN} if user is None else user}],
        "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "lab"}}]}))
    return str(path)


def test_standin_refuses_what_kubectl_refuses_without_the_right_credentials(tmp_path, standin):
    ca = tmp_path / "ca.pem"
    ca.write_text(CA_PEM)
    other = tmp_path / "other.pem"
    other.write_text(CA_PEM.replace("lab", "xyz"))
    good = kubeconfig(tmp_path, "good", {"certificate-authority": str(ca)})

    def kubectl(*args, **env):
        proc = subprocess.run([standin["kubectl"]] + list(args) + ["get", "pods", "-o", "json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                              env=clean_env(standin, **env), timeout=60, check=False)
        return proc.returncode, proc.stderr.strip()

    assert kubectl() == (1, NOT_SERVED)                                # no kubeconfig, not in a pod
    assert kubectl("--kubeconfig", good) == (0, "")
    assert kubectl(KUBECONFIG="/nonexistent:" + good) == (0, "")      # KUBECONFIG: the files that exist
    data = kubeconfig(tmp_path, "data", {"certificate-authority-data": base64.b64encode(CA_PEM.encode()).decode()})
    assert kubectl("--kubeconfig", data) == (0, "")
    assert kubectl("--kubeconfig", kubeconfig(tmp_path, "insecure", {"insecure-skip-tls-verify": True})) == (0, "")
    assert kubectl("--kubeconfig", kubeconfig(tmp_path, "both", {"insecure-skip-tls-verify": True,
                                                                 "certificate-authority": str(ca)})) == (
        1, "error: specifying a root certificates file with the insecure flag is not allowed")
    assert kubectl("--kubeconfig", kubeconfig(tmp_path, "ca", {"certificate-authority": str(other)}))[1].endswith(
        "x509: certificate signed by unknown authority")
    assert kubectl("--kubeconfig", kubeconfig(tmp_path, "gone", {"certificate-authority": "/nonexistent/ca"})) == (
        1, "error: unable to read certificate-authority /nonexistent/ca for lab due to open /nonexistent/ca: "
           "no such file or directory")
    assert kubectl("--kubeconfig", kubeconfig(tmp_path, "anon", {"certificate-authority": str(ca)}, {})) == (
        1, UNAUTHORIZED)
    assert kubectl("--kubeconfig", kubeconfig(tmp_path, "wrong", {"certificate-authority": str(ca)},
                                              {"token": TOKEN[:-1]})) == (1, UNAUTHORIZED)
    assert kubectl("--kubeconfig", good, "--context", "prod") == (
        1, "Error in configuration: context was not found for specified context: prod")
    elsewhere = kubeconfig(tmp_path, "elsewhere", {"server": "https://api.other.example:6443"})
    assert kubectl("--kubeconfig", elsewhere) == (
        1, "Unable to connect to the server: dial tcp: lookup api.other.example: no such host")
    # in a pod: the service account, as kubectl's in-cluster config reads it (token file and CA)
    assert kubectl(KUBERNETES_SERVICE_HOST="api.gpu-lab.example", KUBERNETES_SERVICE_PORT="6443") == (0, "")
    calls = events(standin)
    assert [(e["verb"], e["source"], e["authenticated"]) for e in calls][-1] == ("get", "in-cluster", True)
    assert len(calls) == 13 and calls[0]["source"] is None and not calls[0]["authenticated"]
    assert all(TOKEN not in json.dumps(e) for e in calls)


@pytest.mark.skipif(not shutil.which("iperf3"), reason="iperf3 is not installed")
@pytest.mark.full
def test_k8s_path_with_only_the_awx_kubernetes_credential(tmp_path, standin):
    """One run: pods created, discovery and TCP inside them, pods deleted; only K8S_AUTH_* says where and who."""
    awx_env = tmp_path / "awx_private_data_dir" / "env"            # where AWX's injector writes the CA file
    awx_env.mkdir(parents=True)
    ca = awx_env / "tmpk8sca"
    ca.write_text(CA_PEM)
    ca.chmod(0o660)
    extra = {"commcheck_k8s_kubectl_binary": standin["kubectl"], "commcheck_k8s_nodes": ["node-a", "node-b"],
             "commcheck_k8s_image": "registry.example.com/commcheck-tools:lab", "commcheck_k8s_networks": ["roce"],
             "commcheck_k8s_run_id": "awx1", "commcheck_k8s_namespace": "commcheck",
             "commcheck_checks": ["discover", "tcp"], "commcheck_tcp_duration": 1,
             "commcheck_report_dir": str(tmp_path / "reports"), "commcheck_lock_dir": str(tmp_path / "lock")}
    extra_file = tmp_path / "extra.json"
    extra_file.write_text(json.dumps(extra))
    env = clean_env(standin, K8S_AUTH_HOST=SERVER, K8S_AUTH_API_KEY=TOKEN, K8S_AUTH_VERIFY_SSL="True",
                    K8S_AUTH_SSL_CA_CERT=str(ca), ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build", "collections"),
                    ANSIBLE_PYTHON_INTERPRETER=PYTHON, ANSIBLE_NOCOLOR="1", ANSIBLE_DEPRECATION_WARNINGS="0",
                    ANSIBLE_CALLBACKS_ENABLED="clusterops.commcheck.commcheck_history",
                    COMMCHECK_HISTORY_DIR=str(tmp_path / "history"), COMMCHECK_HISTORY_FSYNC="false",
                    LC_ALL="C.UTF-8")
    proc = subprocess.run([os.path.join(os.path.dirname(PYTHON), "ansible-playbook"), "-i", "localhost,", "-c",
                           "local", "-e", "@" + str(extra_file), PLAYBOOK], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env, cwd=REPO, timeout=600, check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]

    records = [json.loads(line) for path in sorted(glob.glob(str(tmp_path / "history" / "*.jsonl")))
               for line in open(path) if line.strip()]
    assert sorted(r["host"] for r in records if r.get("kind") == "discover") == ["node-a", "node-b"]
    assert len([r for r in records if r.get("kind") == "tcp_bw"]) == 1
    # every kubectl call of the run: authenticated through a kubeconfig a module wrote (0600 in a 0700
    # directory), which is gone now; pods created, read, exec'd into and deleted that way
    calls = events(standin)
    assert calls and all(e["source"] == "kubeconfig" and e["authenticated"] for e in calls), calls
    assert {(e["mode"], e["dir_mode"]) for e in calls} == {("0600", "0700")}
    assert {"apply", "get", "exec", "delete"} <= {e["verb"] for e in calls}
    assert not [e["kubeconfig"] for e in calls if os.path.exists(os.path.dirname(e["kubeconfig"]))]
    with open(standin["state"]) as handle:
        assert json.load(handle) == {}                                      # the pods are gone
    # the token is in no output, history line, report or stand-in log
    written = glob.glob(str(tmp_path / "reports" / "**" / "*"), recursive=True)
    reports = [open(p, errors="replace").read() for p in written if os.path.isfile(p)]
    assert reports
    for text in [output, json.dumps(records), json.dumps(calls)] + reports:
        assert TOKEN not in text
