# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The perftest and iperf3 modules run as real processes (as Ansible runs them).

Tools are found on PATH; some tests put a small tool double first on PATH (a
spy that records that it ran, or one that replays a real perftest output
from tests/fixtures/corpus) to check what the module does around the tool.
The real Debian binaries are exercised in tests/integration.

The checks of invalid input and the plans of check mode, where no tool
starts, run the module's main() in this process instead (``in_process``):
what they pin is the check or the plan, which a process of its own only makes
slower to reach (a Python start and Ansible's imports per case).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from ansible_collections.clusterops.commcheck.plugins.modules import iperf3 as iperf3_module
from ansible_collections.clusterops.commcheck.plugins.modules import perftest as perftest_module
from module_in_process import run_module as run_main

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
COLLECTIONS = os.path.join(REPO, ".build", "collections")
MODULES = os.path.join(REPO, "plugins", "modules")
CORPUS = os.path.join(REPO, "tests", "fixtures", "corpus")
LAB_DIR = os.path.join(REPO, "tests", "lab")


def run_module(name, args, tmp_path, path_first=None, check_mode=False, timeout=300):
    args = dict(args)
    if check_mode:
        args["_ansible_check_mode"] = True
    argfile = tmp_path / ("args-%s-%d.json" % (name, time.monotonic_ns()))
    argfile.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    env = dict(os.environ, PYTHONPATH=COLLECTIONS)
    if path_first:
        env["PATH"] = path_first + os.pathsep + env.get("PATH", "")
    proc = subprocess.run([sys.executable, os.path.join(MODULES, name + ".py"), str(argfile)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env,
                          timeout=timeout, check=False)
    try:
        result = json.loads(proc.stdout[proc.stdout.index("{"):])
    except ValueError:
        raise AssertionError("no JSON from module: rc=%s\n%s\n%s" % (proc.returncode, proc.stdout, proc.stderr))
    return result


@pytest.fixture
def in_process(tmp_path, monkeypatch, capsys):
    """(run(name, args): the module's result with main() run in this process, the spy's log): the tools on PATH
    are spies that log that they ran."""
    bindir, log = spy(tmp_path, monkeypatch)
    monkeypatch.setenv("PATH", bindir + os.pathsep + os.environ.get("PATH", ""))
    modules = {"perftest": perftest_module, "iperf3": iperf3_module}
    # the modules install handlers for these signals when they start their tools: put pytest's back
    saved = dict((sig, signal.getsignal(sig)) for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT))
    yield (lambda name, args, check_mode=False: run_main(modules[name], monkeypatch, capsys, args,
                                                         check_mode=check_mode)), log
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def tool_dir(tmp_path, tools, body):
    """A directory with tool doubles named like the real tools (python scripts)."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    for tool in tools:
        path = bindir / tool
        path.write_text("#!%s\n%s" % (sys.executable, body))
        path.chmod(0o755)
    return str(bindir)


SPY = ("import os, sys\n"
       "open(os.environ['SPY_LOG'], 'a').write(' '.join(sys.argv) + '\\n')\n")


def spy(tmp_path, monkeypatch):
    log = tmp_path / "spy.log"
    monkeypatch.setenv("SPY_LOG", str(log))
    bindir = tool_dir(tmp_path, ["ib_write_bw", "ib_read_lat", "ib_send_bw", "iperf3"], SPY)
    return bindir, log


@pytest.mark.parametrize("args,message", [
    ({"role": "client"}, "server"),
    ({"role": "client", "server": "10.0.0.1; rm -rf /"}, "shell metacharacter"),
    ({"role": "server", "device": "mlx5_0|x"}, "shell metacharacter"),
    ({"role": "server", "device": "mlx5 0"}, "shell metacharacter"),
    ({"role": "server", "size": 0}, "size must be between"),
    ({"role": "server", "iterations": 3}, "iterations must be between"),
    ({"role": "server", "tcp_port": 99999}, "tcp_port must be between"),
    ({"role": "server", "extra_args": ["-F", "$(reboot)"]}, "shell metacharacter"),
    ({"role": "server", "mtu": 1500}, "value of mtu must be one of"),
    ({"role": "server", "test": "bogus"}, "test 'bogus' must be one of write, read"),
    ({"sides": [{"role": "client", "server": "a&b"}]}, "sides\\[0\\]: server"),
    ({"sides": [{"role": "server"}, {"role": "client", "server": "10.0.0.2", "device": "../x"}]},
     "sides\\[1\\]: device"),
    ({}, "one of the following is required: role, sides"),
    ({"role": "server", "sides": [{"role": "server"}]}, "mutually exclusive"),
    ({"role": "server", "min_fraction": 1.5}, "min_fraction"),
])
def test_invalid_input_fails_before_anything_runs(in_process, args, message):
    run, log = in_process
    result = run("perftest", args)
    assert result.get("failed") is True
    assert re.search(message, result["msg"]), result["msg"]
    assert not log.exists(), "a tool ran although the input was invalid"


def test_check_mode_builds_argv_and_runs_nothing(in_process):
    run, log = in_process
    facts = {"devices": [{"name": "mlx5_3", "ports": [{"port": 1, "link_layer": "Ethernet", "gid_index": 7}]}]}
    result = run("perftest", {"role": "client", "device": "mlx5_3", "gid_index": "auto", "rdma_facts": facts,
                              "server": "10.1.1.1", "duration": 5, "timeout": 30}, check_mode=True)
    assert result["changed"] is False and result["verdict"] == "skipped"
    assert result["cmd"] == ["ib_write_bw", "-d", "mlx5_3", "-i", "1", "-x", "7", "-p", "18515", "-D", "5",
                             "--report_gbits", "10.1.1.1"]
    assert not log.exists()


def lab_sysfs_tree():
    """The lab's sysfs tree writer (tests/lab/sysfs_tree.py)."""
    sys.path.insert(0, LAB_DIR)
    try:
        import sysfs_tree  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.remove(LAB_DIR)
    return sysfs_tree


def test_gid_auto_from_sysfs_root(tmp_path, in_process):
    sysfs_tree = lab_sysfs_tree()
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [{"name": "mlx5_0", "ports": [{"port": 1, "netdev": "eth9", "ipv4": "10.3.0.9"}]}])
    run, _log = in_process
    result = run("perftest", {"role": "server", "device": "mlx5_0", "gid_index": "auto", "sysfs_root": root},
                 check_mode=True)
    assert result["cmd"][:7] == ["ib_write_bw", "-d", "mlx5_0", "-i", "1", "-x", "3"]


REPLAY = ("import os, sys\n"
          "sys.stdout.write(open(os.environ['REPLAY_FILE']).read())\n"
          "sys.exit(int(os.environ.get('REPLAY_RC', '0')))\n")


def test_replayed_output_is_parsed_and_judged(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLAY_FILE", os.path.join(CORPUS, "perftest_bw", "ib_write_bw_ndr_gbits_cpufreq_warn.txt"))
    bindir = tool_dir(tmp_path, ["ib_write_bw"], REPLAY)
    args = {"role": "client", "device": "mlx5_0", "server": "csegpu2", "timeout": 120}
    good = run_module("perftest", dict(args, expected_gbps=400), tmp_path, path_first=bindir)
    assert good["verdict"] == "pass" and good["rc"] == 0 and good["changed"] is False
    assert good["metrics"]["bw_gbps"] == 392.34 and good["perftest"]["settings"]["device"] == "mlx5_0"
    assert good["cmd"][0] == os.path.join(bindir, "ib_write_bw")
    slow = run_module("perftest", dict(args, expected_gbps=800), tmp_path, path_first=bindir)
    assert slow["verdict"] == "fail" and "below 90%" in slow["errors"][0]["message"] and not slow.get("failed")


def test_port_counters_are_read_when_the_tests_end(tmp_path, monkeypatch):
    sysfs_tree = lab_sysfs_tree()
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [{"name": "mlx5_0", "ports": [{"port": 1, "netdev": "eth9", "ipv4": "10.3.0.9",
                                                                "counters": {"symbol_error": 7}}]}])
    monkeypatch.setenv("REPLAY_FILE", os.path.join(CORPUS, "perftest_bw", "ib_write_bw_ndr_gbits_cpufreq_warn.txt"))
    bindir = tool_dir(tmp_path, ["ib_write_bw"], REPLAY)
    args = {"role": "client", "device": "mlx5_0", "server": "csegpu2", "timeout": 120, "sysfs_root": root}
    read = run_module("perftest", dict(args, port_counters=True), tmp_path, path_first=bindir)
    assert read["verdict"] == "pass", read
    ports = read["port_counters"]["devices"][0]["ports"]
    assert read["port_counters"]["devices"][0]["name"] == "mlx5_0" and ports[0]["port"] == 1
    assert ports[0]["counters"]["symbol_error"] == 7 and ports[0]["netdev"] == "eth9"
    assert "port_counters" not in run_module("perftest", args, tmp_path, path_first=bindir)
    assert "port_counters" not in run_module("perftest", dict(args, port_counters=True), tmp_path, path_first=bindir,
                                             check_mode=True)


def test_error_verdict_fails_the_task_unless_told_not_to(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLAY_FILE", os.path.join(CORPUS, "perftest_bw", "err_port_state_down.txt"))
    monkeypatch.setenv("REPLAY_RC", "1")
    bindir = tool_dir(tmp_path, ["ib_write_bw"], REPLAY)
    args = {"role": "server", "device": "mlx5_0", "timeout": 120}
    failed = run_module("perftest", args, tmp_path, path_first=bindir)
    assert failed["failed"] and failed["verdict"] == "error"
    assert "port_down" in [e["code"] for e in failed["errors"]]
    kept = run_module("perftest", dict(args, fail_on_error=False), tmp_path, path_first=bindir)
    assert not kept.get("failed") and kept["verdict"] == "error" and kept["cause"] and kept["fix"]


CONNECT_LATER = ("import os, sys\n"
                 "listening = os.path.exists(os.environ['LISTEN_FLAG'])\n"
                 "open(os.environ['ATTEMPTS_LOG'], 'a').write('connected\\n' if listening else 'refused\\n')\n"
                 "if not listening:\n"
                 "    print(\"Couldn't connect to %s:18515\" % sys.argv[-1]); sys.exit(1)\n"
                 "sys.stdout.write(open(os.environ['REPLAY_FILE']).read())\n")


def _attempts(log):
    return log.read_text().split() if log.exists() else []


def test_client_retries_until_server_listens(tmp_path, monkeypatch, wait_until):
    """The server starts listening only after the client's first attempt was refused (an event, not a delay)."""
    flag, log = tmp_path / "listening", tmp_path / "attempts.log"
    monkeypatch.setenv("LISTEN_FLAG", str(flag))
    monkeypatch.setenv("ATTEMPTS_LOG", str(log))
    monkeypatch.setenv("REPLAY_FILE", os.path.join(CORPUS, "perftest_bw", "ib_write_bw_ndr_gbits_cpufreq_warn.txt"))
    bindir = tool_dir(tmp_path, ["ib_write_bw"], CONNECT_LATER)
    module_done = threading.Event()

    def server_listens_after_a_refusal():
        if wait_until(lambda: "refused" in _attempts(log) or module_done.is_set(), within=120):
            flag.touch()

    server = threading.Thread(target=server_listens_after_a_refusal)
    server.start()
    try:
        # the module's deadline only bounds the test: the client connects at its first retry after the refusal
        result = run_module("perftest", {"role": "client", "server": "10.0.0.5", "timeout": 120}, tmp_path,
                            path_first=bindir)
    finally:
        module_done.set()
        server.join()
    attempts = _attempts(log)
    assert attempts[0] == "refused" and attempts[-1] == "connected", attempts
    assert result["verdict"] == "pass" and result["attempts"] == len(attempts) >= 2, (result, attempts)


HANG = "import time\ntime.sleep(600)\n"


def _procs_with(text):
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                if text.encode() in handle.read():
                    found.append(int(pid))
        except (IOError, OSError):
            pass
    return found


def test_server_never_outlives_its_deadline(tmp_path, wait_until):
    bindir = tool_dir(tmp_path, ["ib_write_bw", "ib_read_bw"], HANG)
    result = run_module("perftest", {"fail_on_error": False, "timeout": 2, "sides": [
        {"role": "server", "peer": "b", "rail": 0, "tcp_port": 18600},
        {"role": "server", "peer": "b", "rail": 1, "tcp_port": 18601, "test": "read"}]}, tmp_path,
        path_first=bindir)
    # each side (its own start to end, as the module reports it) stopped at the 2 s deadline, not after the
    # 600 s the servers sleep; 10x margin for a busy machine, and the module's own start-up is not measured
    assert all(s["ended"] - s["started"] < 30 for s in result["sides"]), result["sides"]
    assert [s["verdict"] for s in result["sides"]] == ["error", "error"]
    assert all(s["timed_out"] and s["errors"][0]["code"] == "server_no_client" for s in result["sides"])
    assert [s["tcp_port"] for s in result["sides"]] == [18600, 18601]
    # killed processes take a moment to vanish from /proc; a survivor would sleep its 600 s
    assert wait_until(lambda: _procs_with(bindir) == [], within=30), "a test process outlived the module"


def test_interrupted_module_leaves_nothing(tmp_path, wait_until):
    bindir = tool_dir(tmp_path, ["ib_write_bw"], HANG)
    argfile = tmp_path / "args.json"
    argfile.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {"role": "server", "timeout": 300}}))
    env = dict(os.environ, PYTHONPATH=COLLECTIONS, PATH=bindir + os.pathsep + os.environ["PATH"])
    proc = subprocess.Popen([sys.executable, os.path.join(MODULES, "perftest.py"), str(argfile)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert wait_until(lambda: _procs_with(os.path.join(bindir, "ib_write_bw")), within=120), \
        "the server side never started"
    proc.terminate()
    proc.wait(timeout=120)
    # the module stopped the server before it exited; the killed process may take a moment to vanish
    assert wait_until(lambda: _procs_with(bindir) == [], within=30), "a test process outlived the module"


# Starts a command with the runner and gets SIGTERM at the worst moment: its process runs, but
# Popen has not returned yet (Ansible interrupting a module as it starts a test).
SIGNAL_WHILE_STARTING = (
    "import os, signal, sys\n"
    "from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import runner\n"
    "real_popen = runner.subprocess.Popen\n"
    "def popen_then_signal(*args, **kwargs):\n"
    "    proc = real_popen(*args, **kwargs)\n"
    "    open(sys.argv[1], 'w').write(str(proc.pid))\n"
    "    os.kill(os.getpid(), signal.SIGTERM)\n"
    "    return proc\n"
    "runner.install_cleanup_handlers()\n"
    "runner.subprocess.Popen = popen_then_signal\n"
    "runner.Background(['sleep', '600'], 600)\n"
    "sys.exit(3)\n")


def _cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            return handle.read()      # empty for a zombie: it has ended
    except (IOError, OSError):
        return b""


def test_signal_while_a_command_starts_still_stops_it(tmp_path, wait_until):
    pidfile = tmp_path / "pid"
    env = dict(os.environ, PYTHONPATH=COLLECTIONS)
    proc = subprocess.run([sys.executable, "-c", SIGNAL_WHILE_STARTING, str(pidfile)], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300,
                          check=False)
    assert proc.returncode == 128 + 15, (proc.returncode, proc.stderr)
    pid = int(pidfile.read_text())
    assert wait_until(lambda: not _cmdline(pid), within=30), "the command started during the signal outlived it"


def test_iperf3_module_real_loopback(tmp_path):
    """Real iperf3 on loopback: one module call runs server and client sides at once."""
    import shutil  # pylint: disable=import-outside-toplevel
    if not shutil.which("iperf3"):
        pytest.skip("iperf3 is not installed")
    port = 20000 + os.getpid() % 20000
    result = run_module("iperf3", {"duration": 1, "timeout": 120, "sides": [
        {"role": "client", "server": "127.0.0.1", "tcp_port": port, "peer": "me"},
        {"role": "server", "bind": "127.0.0.1", "tcp_port": port, "peer": "me"}]}, tmp_path)
    client, server = result["sides"]
    assert client["verdict"] == "pass", client
    assert client["metrics"]["bw_gbps"] > 0 and client["iperf3"]["ok"]
    assert server["verdict"] == "pass" and server["cmd"][1:4] == ["-s", "-1", "-J"]


def test_iperf3_module_client_without_server_is_bounded(tmp_path):
    import shutil  # pylint: disable=import-outside-toplevel
    if not shutil.which("iperf3"):
        pytest.skip("iperf3 is not installed")
    result = run_module("iperf3", {"role": "client", "server": "127.0.0.1", "tcp_port": 9, "duration": 1,
                                   "timeout": 3, "fail_on_error": False}, tmp_path)
    assert result["verdict"] == "error" and result["errors"][0]["code"] == "connect_failed"
    # the side (its own start to end, as the module reports it) is bounded by its 3 s deadline: 10x margin for a
    # busy machine, and the module's own start-up is not measured; unbounded, it would retry until killed
    side = result["sides"][0]
    assert result["attempts"] >= 2 and side["ended"] - side["started"] < 30, side


def test_iperf3_module_invalid(in_process):
    run, log = in_process
    result = run("iperf3", {"role": "client", "server": "x`id`"})
    assert result["failed"] and "shell metacharacter" in result["msg"] and not log.exists()
