# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run's kubectl credentials (plugins/module_utils/commands/kube_auth.py).

- which credentials win (an explicit kubeconfig, AWX's K8S_AUTH_* variables,
  the pod's service account, kubectl's default), each read the way AWX's
  credential injector writes it: K8S_AUTH_SSL_CA_CERT is the PATH of a PEM
  file, set only with K8S_AUTH_VERIFY_SSL=True;
- credentials that cannot work fail with the variable named, never the token;
- the written kubeconfig (mode 0600, in a 0700 directory) is gone when the
  process that wrote it exits, fails, or ends on SIGTERM / SIGHUP / SIGINT;
- REAL kubectl with that kubeconfig against a loopback HTTPS endpoint (a
  certificate made here with openssl): it trusts the CA file, sends the token,
  reads a service account's token file, and refuses another CA.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import importlib
import json
import os
import shutil
import signal
import ssl
import stat
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
import yaml

from ansible_collections.clusterops.commcheck.plugins.doc_fragments.kubectl_client import ModuleDocFragment
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import kube_auth

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTIONS = os.path.join(REPO, ".build", "collections")
TOKEN = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXRva2Vu.sig-4d1f"


@pytest.fixture
def ca_file(tmp_path):
    path = tmp_path / "awx-env" / "tmpca1234"
    path.parent.mkdir()
    path.write_text("-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n")
    return str(path)


def awx_env(ca=None, verify=True, **extra):
    """The variables AWX's kubernetes_bearer_token injector sets (awx/main/models/credential/injectors.py)."""
    env = {"K8S_AUTH_HOST": "https://api.gpu.example:6443", "K8S_AUTH_API_KEY": TOKEN,
           "K8S_AUTH_VERIFY_SSL": "True" if verify and ca else "False"}
    if verify and ca:
        env["K8S_AUTH_SSL_CA_CERT"] = ca
    env.update(extra)
    return env


@pytest.fixture
def service_account(tmp_path):
    """A pod's service account directory (what /var/run/secrets/kubernetes.io/serviceaccount holds)."""
    directory = tmp_path / "serviceaccount"
    directory.mkdir()
    (directory / "token").write_text("sa-token\n")
    (directory / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\nsa\n-----END CERTIFICATE-----\n")
    return str(directory)


IN_POD = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}


def test_awx_credential_becomes_a_kubeconfig_with_its_ca_file_and_token(ca_file):
    found = kube_auth.choose(awx_env(ca_file))
    assert found.source == "k8s_auth" and found.kubeconfig is None and found.context is None
    assert found.document == {
        "apiVersion": "v1", "kind": "Config", "preferences": {}, "current-context": "commcheck",
        "clusters": [{"name": "commcheck", "cluster": {"server": "https://api.gpu.example:6443",
                                                       "certificate-authority": ca_file}}],
        "users": [{"name": "commcheck", "user": {"token": TOKEN}}],
        "contexts": [{"name": "commcheck", "context": {"cluster": "commcheck", "user": "commcheck"}}]}
    assert TOKEN in found.secrets


def test_verify_ssl_false_skips_verification_and_drops_a_ca(ca_file):
    """AWX sets K8S_AUTH_VERIFY_SSL=False (and no CA) when the credential does not verify; kubectl refuses both."""
    cluster = kube_auth.choose(awx_env(verify=False, K8S_AUTH_SSL_CA_CERT=ca_file)).document["clusters"][0]["cluster"]
    assert cluster == {"server": "https://api.gpu.example:6443", "insecure-skip-tls-verify": True}


def test_ca_given_as_pem_text_is_embedded_and_a_relative_ca_path_made_absolute(ca_file, tmp_path, monkeypatch):
    with open(ca_file) as handle:
        pem = handle.read()
    cluster = kube_auth.choose(awx_env(ca=pem)).document["clusters"][0]["cluster"]
    assert "certificate-authority" not in cluster
    assert cluster["certificate-authority-data"].startswith("LS0tLS1CRUdJTi")      # base64 of the PEM
    monkeypatch.chdir(os.path.dirname(ca_file))
    cluster = kube_auth.choose(awx_env(ca=os.path.basename(ca_file))).document["clusters"][0]["cluster"]
    assert cluster["certificate-authority"] == ca_file


def test_client_certificate_when_there_is_no_token(ca_file):
    env = awx_env(ca_file, K8S_AUTH_CERT_FILE=ca_file, K8S_AUTH_KEY_FILE=ca_file)
    del env["K8S_AUTH_API_KEY"]
    found = kube_auth.choose(env)
    assert found.document["users"][0]["user"] == {"client-certificate": ca_file, "client-key": ca_file}
    assert found.secrets == ()


def test_precedence_explicit_then_k8s_auth_then_service_account_then_default(ca_file, service_account):
    both = dict(awx_env(ca_file), **IN_POD)
    assert kube_auth.choose(both, kubeconfig="/etc/k/config", context="prod", service_account_dir=service_account) \
        .__dict__ == {"source": "option", "kubeconfig": "/etc/k/config", "context": "prod", "document": None,
                      "secrets": ()}
    assert kube_auth.choose(both, service_account_dir=service_account).source == "k8s_auth"
    pod = kube_auth.choose(IN_POD, service_account_dir=service_account)
    assert pod.source == "service_account"
    assert pod.document["clusters"][0]["cluster"] == {"server": "https://10.96.0.1:443",
                                                      "certificate-authority": service_account + "/ca.crt"}
    # the token file itself, which kubectl reads again as it rotates; the token never leaves it
    assert pod.document["users"][0]["user"] == {"tokenFile": service_account + "/token"}
    default = kube_auth.choose({}, service_account_dir=service_account)
    assert (default.source, default.kubeconfig, default.document) == ("default", None, None)


def test_service_account_needs_both_variables_and_its_token_as_kubectl_does(service_account, tmp_path):
    assert kube_auth.choose({"KUBERNETES_SERVICE_HOST": "10.96.0.1"}, service_account_dir=service_account) \
        .source == "default"
    assert kube_auth.choose(IN_POD, service_account_dir=str(tmp_path / "none")).source == "default"
    six = kube_auth.choose({"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"},
                           service_account_dir=service_account)
    assert six.document["clusters"][0]["cluster"]["server"] == "https://[fd00::1]:443"


def test_a_context_picks_from_a_kubeconfig_file(ca_file, service_account, tmp_path):
    """In a pod a context names one of kubectl's default kubeconfig; K8S_AUTH_KUBECONFIG takes K8S_AUTH_CONTEXT."""
    found = kube_auth.choose(IN_POD, context="lab", service_account_dir=service_account)
    assert (found.source, found.context, found.document) == ("default", "lab", None)
    config = tmp_path / "kubeconfig"
    config.write_text("{}")
    env = {"K8S_AUTH_KUBECONFIG": str(config), "K8S_AUTH_CONTEXT": "gpu-a"}
    found = kube_auth.choose(env)
    assert (found.source, found.kubeconfig, found.context) == ("k8s_auth_kubeconfig", str(config), "gpu-a")
    assert kube_auth.choose(env, context="gpu-b").context == "gpu-b"


@pytest.mark.parametrize("env, named", [
    ({"K8S_AUTH_HOST": "api.gpu.example:6443"}, "K8S_AUTH_HOST 'api.gpu.example:6443' must be the API server's URL"),
    ({"K8S_AUTH_HOST": "https://api.gpu.example:99999"}, "K8S_AUTH_HOST"),
    ({"K8S_AUTH_HOST": "https://api.gpu.example\n-v9"}, "K8S_AUTH_HOST 'https://api.gpu.example\\n-v9' contains a control"),
    ({"K8S_AUTH_SSL_CA_CERT": "/etc/../ca.pem"}, "K8S_AUTH_SSL_CA_CERT '/etc/../ca.pem' must not contain '..'"),
    ({"K8S_AUTH_API_KEY": "Bearer %s extra" % TOKEN}, "K8S_AUTH_API_KEY is not a bearer token"),
    ({"K8S_AUTH_API_KEY": TOKEN + "\x1b[2J"}, "K8S_AUTH_API_KEY is not a bearer token"),
    ({"K8S_AUTH_API_KEY": ""}, "neither K8S_AUTH_API_KEY (a bearer token) nor both K8S_AUTH_CERT_FILE"),
    ({"K8S_AUTH_HOST": ""}, "K8S_AUTH_API_KEY is set without K8S_AUTH_HOST"),
    ({"K8S_AUTH_SSL_CA_CERT": "/nonexistent/ca.pem"}, "K8S_AUTH_SSL_CA_CERT '/nonexistent/ca.pem' cannot be read"),
    ({"K8S_AUTH_SSL_CA_CERT": "/"}, "is not a readable regular file"),
    ({"K8S_AUTH_VERIFY_SSL": "maybe"}, "K8S_AUTH_VERIFY_SSL 'maybe' must be True or False"),
    ({"K8S_AUTH_PROXY": "squid:3128"}, "K8S_AUTH_PROXY"),
    ({"K8S_AUTH_KUBECONFIG": "/nonexistent/config", "K8S_AUTH_HOST": "", "K8S_AUTH_API_KEY": ""},
     "K8S_AUTH_KUBECONFIG '/nonexistent/config' cannot be read"),
])
def test_credentials_that_cannot_work_are_refused_naming_the_variable_never_the_token(env, named, ca_file):
    with pytest.raises(kube_auth.KubeAuthError) as err:
        kube_auth.choose(dict(awx_env(ca_file), **env))
    assert named in str(err.value)
    assert "c2VjcmV0LXRva2Vu" not in str(err.value)


def test_a_context_with_awx_credentials_is_refused(ca_file):
    with pytest.raises(kube_auth.KubeAuthError, match="names a context of a kubeconfig"):
        kube_auth.choose(awx_env(ca_file), context="prod")


def test_bearer_prefix_and_surrounding_whitespace_are_taken_off(ca_file):
    found = kube_auth.choose(awx_env(ca_file, K8S_AUTH_API_KEY="Bearer %s\n" % TOKEN))
    assert found.document["users"][0]["user"] == {"token": TOKEN}


def test_written_kubeconfig_is_private_and_removed(tmp_path, ca_file):
    run = kube_auth.RunKubeconfig(kube_auth.choose(awx_env(ca_file)).document)
    old = os.umask(0)          # even a process without a umask writes it owner-only
    try:
        path = run.write(str(tmp_path))
    finally:
        os.umask(old)
    assert os.path.dirname(os.path.dirname(path)) == str(tmp_path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    with open(path) as handle:
        assert json.load(handle)["users"] == [{"name": "commcheck", "user": {"token": TOKEN}}]
    run.remove()
    assert not os.path.exists(os.path.dirname(path))
    run.remove()               # twice is harmless


# --- module_kubeconfig in a process of its own, as a module runs it -----------------------------------

MODULE_RUN = r'''
import json, sys, time
from ansible.module_utils.basic import AnsibleModule
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import kube_auth
module = AnsibleModule(argument_spec={"kubeconfig": {"type": "path"}, "how": {"type": "str"}})
path, context = kube_auth.module_kubeconfig(module, module.params["kubeconfig"])
print(json.dumps({"path": path}), flush=True)
with open(path) as handle:
    secret = json.load(handle)["users"][0]["user"]["token"]
how = module.params["how"]
if how == "wait":
    print("waiting", flush=True)
    time.sleep(600)
if how == "fail":
    module.fail_json(msg="kubectl failed: token %s rejected" % secret)
module.exit_json(changed=False, echoed=secret)
'''


def _module(tmp_path, env, how, wait=False):
    script = tmp_path / "module_run.py"
    (tmp_path / "rtmp").mkdir(mode=0o700, exist_ok=True)
    script.write_text(MODULE_RUN)
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {"how": how, "_ansible_remote_tmp": str(tmp_path / "rtmp")}}))
    full = dict({k: v for k, v in os.environ.items() if not k.startswith(("K8S_AUTH_", "KUBERNETES_"))},
                PYTHONPATH=COLLECTIONS, **env)
    proc = subprocess.Popen([sys.executable, str(script), str(args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True, env=full)
    if wait:
        path = json.loads(proc.stdout.readline())["path"]
        assert proc.stdout.readline() == "waiting\n"      # a module waiting for kubectl
        return proc, path
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


@pytest.mark.parametrize("how", ["exit", "fail"])
def test_module_run_removes_its_kubeconfig_and_hides_the_token(tmp_path, ca_file, how):
    rc, out, err = _module(tmp_path, awx_env(ca_file), how)
    path = json.loads(out.splitlines()[0])["path"]
    result = json.loads(out.splitlines()[-1])
    assert rc == (0 if how == "exit" else 1), err
    assert path.startswith(str(tmp_path / "rtmp")) and os.path.basename(path) == "kubeconfig"
    assert not os.path.exists(os.path.dirname(path))
    assert TOKEN not in out + err
    shown = result["echoed"] if how == "exit" else result["msg"]
    assert shown in ("VALUE_SPECIFIED_IN_NO_LOG_PARAMETER", "kubectl failed: token ******** rejected")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_module_stopped_by_a_signal_removes_its_kubeconfig(tmp_path, ca_file, sig):
    proc, path = _module(tmp_path, awx_env(ca_file), "wait", wait=True)
    try:
        assert os.path.isfile(path)
        proc.send_signal(sig)
        try:
            proc.communicate(timeout=300)     # bounds the wait for the exit only
        except subprocess.TimeoutExpired:
            with open("/proc/%d/status" % proc.pid) as handle:
                raise AssertionError("still running after signal %d:\n%s" % (sig, handle.read()))
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig
    assert not os.path.exists(os.path.dirname(path))


def test_module_with_bad_credentials_fails_before_anything_runs(tmp_path, ca_file):
    rc, out, err = _module(tmp_path, awx_env(ca_file, K8S_AUTH_HOST="ftp://api"), "exit")
    result = json.loads(out.splitlines()[-1])
    assert rc == 1 and result["msg"].startswith("kubectl credentials: K8S_AUTH_HOST 'ftp://api' must be")
    assert os.listdir(str(tmp_path / "rtmp")) == []


# --- REAL kubectl with the written kubeconfig ------------------------------------------------------

KUBECTL = shutil.which("kubectl")
OPENSSL = shutil.which("openssl")
needs_tools = pytest.mark.skipif(not (KUBECTL and OPENSSL), reason="needs the kubectl and openssl binaries")


def _certificate(directory, name):
    """A self-signed certificate for 127.0.0.1 (the endpoint's, and the CA kubectl is told to trust)."""
    cert, key = os.path.join(directory, name + ".pem"), os.path.join(directory, name + ".key")
    subprocess.run([OPENSSL, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=commcheck-test",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE, timeout=60)
    return cert, key


class _Endpoint(object):
    """HTTPS on 127.0.0.1 that records the Authorization header and answers every GET with an empty PodList."""

    def __init__(self, cert, key):
        self.seen = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # pylint: disable=arguments-differ
                pass

            def do_GET(self):  # pylint: disable=invalid-name
                endpoint.seen.append((self.path, self.headers.get("Authorization")))
                body = json.dumps({"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": []}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.url = "https://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint(tmp_path):
    cert, key = _certificate(str(tmp_path), "server")
    server = _Endpoint(cert, key)
    server.cert = cert
    yield server
    server.close()


PODS = "/api/v1/namespaces/commcheck/pods"


def _kubectl_get(tmp_path, found):
    """kubectl get --raw through the kubeconfig written for ``found`` (one request, no discovery)."""
    run = kube_auth.RunKubeconfig(found.document)
    try:
        path = run.write(str(tmp_path))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
        return subprocess.run([KUBECTL, "--kubeconfig", path, "get", "--raw", PODS],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env,
                              timeout=60, check=False)
    finally:
        run.remove()


@needs_tools
def test_real_kubectl_trusts_the_awx_ca_file_and_sends_the_token(tmp_path, endpoint):
    found = kube_auth.choose(awx_env(endpoint.cert, K8S_AUTH_HOST=endpoint.url))
    proc = _kubectl_get(tmp_path, found)
    assert proc.returncode == 0 and json.loads(proc.stdout)["kind"] == "PodList", proc.stderr
    assert PODS in [path for path, _auth in endpoint.seen]
    assert {auth for _path, auth in endpoint.seen} == {"Bearer " + TOKEN}       # kubectl also asks /version
    assert TOKEN not in proc.stdout + proc.stderr


@needs_tools
def test_real_kubectl_refuses_an_endpoint_the_ca_did_not_sign_unless_told_not_to_verify(tmp_path, endpoint):
    other, _key = _certificate(str(tmp_path), "other")
    proc = _kubectl_get(tmp_path, kube_auth.choose(awx_env(other, K8S_AUTH_HOST=endpoint.url)))
    assert proc.returncode != 0 and "x509: certificate signed by unknown authority" in proc.stderr
    assert endpoint.seen == []
    proc = _kubectl_get(tmp_path, kube_auth.choose(awx_env(verify=False, K8S_AUTH_HOST=endpoint.url)))
    assert proc.returncode == 0, proc.stderr
    assert (PODS, "Bearer " + TOKEN) in endpoint.seen


@needs_tools
def test_real_kubectl_reads_the_service_account_token_file(tmp_path, endpoint, service_account):
    shutil.copy(endpoint.cert, os.path.join(service_account, "ca.crt"))
    port = endpoint.url.rsplit(":", 1)[1]
    found = kube_auth.choose({"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": port},
                             service_account_dir=service_account)
    proc = _kubectl_get(tmp_path, found)
    assert proc.returncode == 0, proc.stderr
    assert (PODS, "Bearer sa-token") in endpoint.seen


# --- every module that runs kubectl on the controller, with only K8S_AUTH_* set ----------------------

# TOOL DOUBLE of kubectl: records each call with what its --kubeconfig held at that moment, answers
# `get` with an empty list (or a node), and anything else with success.
KUBECTL_DOUBLE = r'''
import json, os, stat, sys
argv = sys.argv[1:]
call = {"argv": argv}
if "--kubeconfig" in argv:
    path = argv[argv.index("--kubeconfig") + 1]
    with open(path) as handle:
        users = json.load(handle)["users"]
    call.update(path=path, mode=stat.S_IMODE(os.stat(path).st_mode),
                token=users[0]["user"].get("token") == os.environ.get("K8S_AUTH_API_KEY"))
with open(os.environ["KUBECTL_DOUBLE_LOG"], "a") as handle:
    handle.write(json.dumps(call) + "\n")
if argv == ["version", "--client"]:
    print("Client Version: v1.30.2")
elif "get" in argv and "node" in argv:
    print(json.dumps({"kind": "Node", "metadata": {"name": "node-3", "labels": {}}, "spec": {}}))
elif "get" in argv:
    print(json.dumps({"apiVersion": "v1", "kind": "List", "items": []}))
'''

MODULE_ARGS = {
    "test_pods": {"run_id": "r1", "namespace": "commcheck", "state": "absent", "kubectl_binary": "@"},
    "existing_pods": {"namespace": "training", "selector": "job=m1", "kubectl_binary": "@"},
    "quarantine": {"backend": "kubernetes", "hosts": ["node-3"], "dry_run": False, "kubectl_binary": "@"},
    "tool_probe": {"keys": ["cmd:iperf3"], "transport": "kubectl", "kubectl": {"pod": "p1", "binary": "@"}},
}


@pytest.mark.parametrize("name", sorted(MODULE_ARGS))
def test_every_kubectl_call_of_a_module_uses_the_kubeconfig_written_from_k8s_auth(tmp_path, ca_file, name):
    double = tmp_path / "kubectl"
    double.write_text("#!%s\n%s" % (sys.executable, KUBECTL_DOUBLE))
    double.chmod(0o755)
    log = tmp_path / "calls.jsonl"
    args = json.loads(json.dumps(MODULE_ARGS[name]).replace('"@"', json.dumps(str(double))))
    argfile = tmp_path / "args.json"
    argfile.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": dict(args, _ansible_remote_tmp=str(tmp_path))}))
    env = dict({k: v for k, v in os.environ.items() if not k.startswith(("K8S_AUTH_", "KUBERNETES_"))},
               PYTHONPATH=COLLECTIONS, KUBECTL_DOUBLE_LOG=str(log), **awx_env(ca_file))
    proc = subprocess.run([sys.executable, os.path.join(REPO, "plugins", "modules", name + ".py"), str(argfile)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env,
                          timeout=120, check=False)
    with open(str(log)) as handle:
        calls = [json.loads(line) for line in handle]
    # kubectl says who it is (``version --client`` reads no kubeconfig and reaches no cluster) before it acts
    assert calls[0]["argv"] == ["version", "--client"], calls
    calls = calls[1:]
    assert calls, proc.stdout + proc.stderr
    assert all(c.get("mode") == 0o600 and c.get("token") for c in calls), calls
    assert len({c["path"] for c in calls}) == 1 and not os.path.exists(calls[0]["path"])
    assert TOKEN not in proc.stdout + proc.stderr


@pytest.mark.parametrize("name", ["k8s_job", "test_pods", "existing_pods"])
def test_the_kubectl_client_options_are_the_doc_fragment_s_in_every_module_that_extends_it(name):
    """client_argument_spec is what the kubectl_client doc fragment documents (names, types; kubeconfig never
    logged), and each module that extends the fragment takes it whole."""
    documented = yaml.safe_load(ModuleDocFragment.DOCUMENTATION)["options"]
    spec = kube_auth.client_argument_spec()
    assert dict((k, v["type"]) for k, v in spec.items()) == dict((k, v["type"]) for k, v in documented.items())
    assert spec["kubeconfig"]["no_log"] is True
    module = importlib.import_module("ansible_collections.clusterops.commcheck.plugins.modules." + name)
    fragments = yaml.safe_load(module.DOCUMENTATION)["extends_documentation_fragment"]
    assert "clusterops.commcheck.kubectl_client" in fragments
    assert dict((k, module.ARGUMENT_SPEC[k]) for k in spec) == spec
