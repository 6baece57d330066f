"""kubectl transport: the argv it builds, and that real kubectl accepts it."""
import os
import shutil
import subprocess

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import runner
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import transport
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError


def test_exec_argv_shape():
    t = runner.KubectlTransport(pod="p-1", namespace="ns", container="c", context="ctx",
                                kubeconfig="/k/config", binary="/usr/bin/kubectl")
    argv = t.wrap(["ib_write_bw", "-d", "mlx5_0"], 30)
    assert argv[:11] == ["/usr/bin/kubectl", "--kubeconfig", "/k/config", "--context", "ctx",
                         "-n", "ns", "exec", "p-1", "-c", "c"]
    sep = argv.index("--")
    assert argv[sep + 1:sep + 3] == ["sh", "-c"]
    # the argv and deadline are positional arguments, never part of the script
    assert argv[-3:] == ["ib_write_bw", "-d", "mlx5_0"]
    assert "ib_write_bw" not in argv[sep + 3]
    assert argv[sep + 5:sep + 7] == [str(runner.KILL_GRACE_S), "31"]


@pytest.mark.parametrize("options,ok", [
    ({"pod": "p1"}, True), ({"pod": "p1", "namespace": "kube-system", "container": "main"}, True),
    ({}, False), ({"pod": "--help"}, False), ({"pod": "p1", "namespace": "a;b"}, False),
    ({"pod": "p1", "context": "-x"}, False), ({"pod": "p1", "context": "arn:aws:eks:us-east-1:1:cluster/x"}, True),
    ({"pod": "p1", "context": "--kubeconfig=/tmp/x"}, False), ({"pod": "p1", "context": "a\nb"}, False),
    ({"pod": "p1", "kubeconfig": "/k/config"}, True), ({"pod": "p1", "kubeconfig": "-x"}, False),
    ({"pod": "p1", "kubeconfig": "relative/config"}, False), ({"pod": "p1", "kubeconfig": "/k/../config"}, False),
    ({"pod": "p1", "kubeconfig": "/k/config\x00"}, False), ({"pod": "p1", "namespace": "a.b"}, False),
    ({"pod": "p1", "namespace": "-n"}, False), ({"pod": "p1", "container": "-c"}, False),
    ({"pod": "p1", "container": "x" * 64}, False), ({"pod": "p1", "binary": "/opt/kube/kubectl"}, True),
    ({"pod": "p1", "binary": "kubectl"}, True), ({"pod": "p1", "binary": "bin/kubectl"}, False),
    ({"pod": "p1", "binary": "../kubectl"}, False), ({"pod": "p1", "binary": "/opt/../kubectl"}, False),
    ({"pod": "p1", "binary": "-kubectl"}, False),
])
def test_kubectl_options_validation(options, ok):
    assert (transport.kubectl_options_error(options) is None) is ok


def test_kubectl_options_messages_name_the_option():
    # a kubeconfig's path is never quoted: it names the cluster's credentials
    assert transport.kubectl_options_error({"pod": "p1", "kubeconfig": "-x"}) == \
        "kubectl.kubeconfig (value not shown) must be an absolute path"
    assert transport.kubectl_options_error({"pod": "p1", "context": "-x"}) == \
        "kubectl.context '-x' must not start with '-' (it would be read as an option)"
    long_pod = transport.kubectl_options_error({"pod": "-" + "p" * 5000})
    assert long_pod.startswith("kubectl.pod '-ppp") and len(long_pod) < 400


def test_kubectl_binary_must_exist_when_a_lookup_is_given(tmp_path):
    tool = tmp_path / "kubectl"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    found = {"kubectl": str(tool)}.get
    assert transport.kubectl_options_error({"pod": "p1", "binary": str(tool)}, which=found) is None
    assert transport.kubectl_options_error({"pod": "p1", "binary": "kubectl"}, which=found) is None
    assert "was not found on PATH" in transport.kubectl_options_error({"pod": "p1", "binary": "kubectl2"},
                                                                      which=found)
    assert "is not an executable file" in transport.kubectl_options_error(
        {"pod": "p1", "binary": str(tmp_path / "missing")}, which=found)


@pytest.mark.parametrize("kwargs", [
    {"context": "-x"}, {"kubeconfig": "--insecure-skip-tls-verify"}, {"namespace": "--all-namespaces"},
    {"container": "-c"}, {"binary": "bin/kubectl"}, {"pod": "--help"},
])
def test_the_transport_itself_refuses_values_that_would_become_flags(kwargs):
    """Whoever builds a KubectlTransport (modules, test_pods), no value turns into a kubectl option."""
    args = dict({"pod": "p1"}, **kwargs)
    with pytest.raises(OptionError):
        runner.KubectlTransport(**args)


@pytest.mark.skipif(not shutil.which("kubectl"), reason="no kubectl binary on this machine")
def test_real_kubectl_parses_our_exec_argv(tmp_path):
    """Real kubectl accepts the argv: it gets as far as dialing the API server."""
    config = tmp_path / "config"
    config.write_text(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:9'}\n"
        "users:\n- name: u\n  user: {token: not-a-secret}\ncontexts:\n- name: lab\n  context: {cluster: c, user: u}\n"
        "current-context: lab\n")
    t = runner.KubectlTransport(pod="p1", namespace="ns", container="main", context="lab",
                                kubeconfig=str(config), binary=shutil.which("kubectl"))
    argv = t.wrap(["echo", "x"], 5)
    res = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode != 0
    err = res.stderr.lower()
    assert "unknown flag" not in err and "unknown shorthand" not in err
    assert "127.0.0.1:9" in err or "connection refused" in err


def test_kubectl_transport_with_stand_in(tmp_path, wait_until):
    """Run, deadline and stop through a stand-in that execs locally."""
    fake = tmp_path / "kubectl"
    fake.write_text("#!/usr/bin/env python3\nimport os, sys\na = sys.argv[1:]\ni = a.index('--')\n"
                    "os.execvp(a[i + 1], a[i + 1:])\n")
    fake.chmod(0o755)
    t = runner.KubectlTransport(pod="p1", binary=str(fake))
    res = t.run(["echo", "hello"], 120)
    assert res["rc"] == 0 and res["stdout"] == "hello\n" and res["cmd"] == ["echo", "hello"]
    slow = t.run(["sleep", "30"], 1)
    assert slow["timed_out"] and slow["rc"] in (124, -15, 137)
    assert t.which("sh").endswith("/sh") and t.which("no-such-tool-xyz") is None
    marker = "77.%d" % os.getpid()     # this test's own sleep, also when others run it at the same time
    job = t.start(["sleep", marker], 120)
    # stop it once the remote command is seen running (an event, not a delay), then it must go away
    assert wait_until(lambda: _pgrep_f("^sleep " + marker), within=60), "the remote sleep never started"
    job.stop()
    job.result()
    assert wait_until(lambda: not _pgrep_f("sleep " + marker), within=30), _pgrep_f("sleep " + marker)


def _pgrep_f(pattern):
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True, check=False).stdout.split()


class RecordingTransport(object):
    """Stands for the kubectl transport: records what stop() runs in the pod."""

    def __init__(self):
        self.ran = []

    def run_plain(self, argv, timeout):
        self.ran.append(list(argv))


def test_stop_kills_the_remote_side_whose_pid_line_kubectl_has_not_relayed_yet(tmp_path, monkeypatch):
    """The remote process may run before kubectl relays the wrapper's PID line: stop() waits for that line (the
    exec still runs) instead of leaving the remote side to run to its deadline. The stand-in prints its line only
    once stop() is waiting for it (the first sleep of the wait creates the flag), so no timing decides."""
    flag = tmp_path / "relay"
    script = ("import os, sys, time\n"
              "while not os.path.exists(%r): time.sleep(0.01)\n"
              "sys.stdout.write('commcheck-remote-pid 4242\\n'); sys.stdout.flush()\n"
              "time.sleep(600)\n" % str(flag))
    real_sleep = runner.time.sleep

    def sleep_and_relay(seconds):
        flag.touch()
        real_sleep(seconds)

    monkeypatch.setattr(runner.time, "sleep", sleep_and_relay)
    pods = RecordingTransport()
    job = runner.RemoteBackground(pods, ["python3", "-c", script], 600)
    try:
        assert job.remote_pid() is None
        job.stop()
    finally:
        if job.proc.poll() is None:
            job.proc.kill()
    assert pods.ran == [["kill", "-TERM", "--", "-4242"]]


def test_stop_does_not_wait_for_a_pid_line_of_an_exec_that_ended(monkeypatch):
    waits = []
    monkeypatch.setattr(runner.time, "sleep", waits.append)
    pods = RecordingTransport()
    job = runner.RemoteBackground(pods, ["true"], 60)
    job.proc.wait()
    job.stop()
    assert pods.ran == [] and waits == []
