# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collective module run as a real process, as Ansible runs it.

No MPI job runs here: ``mpirun`` is a small double first on PATH that logs
its argv and replays a real nccl-tests / hccl_test output from
tests/fixtures/corpus (choosing the output by the hosts it was given, to
drive a bisection). Real mpirun with the lab's emulators runs in
tests/integration/test_collective_lab.py.

The checks of bad input and the plans of check mode, where nothing is
launched, run the module's main() in this process instead (``in_process``):
what they pin is the check or the plan, which a process of its own only makes
slower to reach (a Python start and Ansible's imports per case).
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

from ansible_collections.clusterops.commcheck.plugins.modules import collective
from module_in_process import run_module as run_main

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
COLLECTIONS = os.path.join(REPO, ".build", "collections")
MODULE = os.path.join(REPO, "plugins", "modules", "collective.py")
CORPUS = os.path.join(REPO, "tests", "fixtures", "corpus")
H100 = os.path.join(CORPUS, "nccl_tests", "all_reduce_perf_2node_16gpu_h100_mpirun.txt")   # peak ~339 GB/s
L40S = os.path.join(CORPUS, "nccl_tests", "all_reduce_perf_2pod_l40s_reducing_maxbytes.txt")  # peak ~8 GB/s
HCCL = os.path.join(CORPUS, "hccl_tests", "all_reduce_test_official_doc_example_8npu.txt")

# mpirun double: logs argv (one JSON line per call), copies a -f hostfile, writes the -J JSON file when
# REPLAY_JSON is set, and prints REPLAY_SLOW when a host of SLOW_HOSTS is in -H, else REPLAY_FILE.
MPIRUN_DOUBLE = r'''
import json, os, shutil, sys
argv = sys.argv[1:]
log = os.environ["MPIRUN_LOG"]
with open(log, "a") as handle:
    handle.write(json.dumps(argv) + "\n")
if argv[0] == "-f":
    shutil.copy(argv[1], log + ".hostfile")
hosts = argv[argv.index("-H") + 1] if "-H" in argv else ""
slow = [h for h in os.environ.get("SLOW_HOSTS", "").split(",") if h]
name = os.environ["REPLAY_FILE"]
if slow and any(h + ":" in hosts for h in slow):
    name = os.environ["REPLAY_SLOW"]
if os.environ.get("REPLAY_JSON") and "-J" in argv:
    shutil.copy(os.environ["REPLAY_JSON"], argv[argv.index("-J") + 1])
sys.stdout.write(open(name).read())
sys.exit(int(os.environ.get("REPLAY_RC", "0")))
'''

OLD_HELP = "USAGE: all_reduce_perf \n\t[-b,--minbytes <min size in bytes>] \n\t[-h,--help]\n"
NEW_HELP = OLD_HELP + "\t[-J,--output_file <file> write output to filepath, if accessible.] \n"


def write_script(path, body):
    path.write_text("#!%s\n%s" % (sys.executable, body))
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def tools(tmp_path, monkeypatch):
    """PATH dir with the mpirun double, and a binary dir with test-binary doubles answering --help."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    write_script(bindir / "mpirun", MPIRUN_DOUBLE)
    tests = tmp_path / "tests"
    tests.mkdir()
    for name in ("all_reduce_perf", "all_gather_perf", "all_reduce_test"):
        write_script(tests / name, "import os, sys\nsys.stdout.write(os.environ.get('HELP_TEXT', ''))\n")
    log = tmp_path / "mpirun.log"
    monkeypatch.setenv("MPIRUN_LOG", str(log))
    monkeypatch.setenv("REPLAY_FILE", H100)
    monkeypatch.setenv("REPLAY_SLOW", L40S)
    monkeypatch.setenv("HELP_TEXT", OLD_HELP)
    monkeypatch.delenv("SLOW_HOSTS", raising=False)
    monkeypatch.delenv("REPLAY_JSON", raising=False)
    return {"path": str(bindir), "binary_dir": str(tests), "log": log, "tmp": tmp_path}


def run_module(args, tools, check_mode=False, timeout=60):
    args = dict(args)
    if check_mode:
        args["_ansible_check_mode"] = True
    argfile = tools["tmp"] / ("args-%d.json" % time.monotonic_ns())
    argfile.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    env = dict(os.environ, PYTHONPATH=COLLECTIONS)
    env["PATH"] = tools["path"] + os.pathsep + env.get("PATH", "")
    proc = subprocess.run([sys.executable, MODULE, str(argfile)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=timeout, check=False)
    try:
        return json.loads(proc.stdout[proc.stdout.index("{"):])
    except ValueError:
        raise AssertionError("no JSON from module: rc=%s\n%s\n%s" % (proc.returncode, proc.stdout, proc.stderr))


@pytest.fixture
def in_process(tools, monkeypatch, capsys):
    """run(args): the module's result with main() run in this process; mpirun and the test binaries are still the
    doubles on PATH, run as processes."""
    monkeypatch.setenv("PATH", tools["path"] + os.pathsep + os.environ.get("PATH", ""))
    # the module installs handlers for these signals: put pytest's back
    saved = dict((sig, signal.getsignal(sig)) for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT))
    yield lambda args, check_mode=False: run_main(collective, monkeypatch, capsys, args, check_mode=check_mode)
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def mpirun_calls(tools):
    if not tools["log"].exists():
        return []
    return [json.loads(line) for line in tools["log"].read_text().splitlines()]


def base(tools, **kw):
    args = {"library": "nccl", "hosts": ["n1", "n2"], "binary_dir": tools["binary_dir"], "gpus_per_node": 8,
            "gpus_per_process": 8, "min_bytes": "8", "max_bytes": "8G"}
    args.update(kw)
    return args


@pytest.mark.parametrize("override,message", [
    ({"hosts": ["n1", "n2;reboot"]}, "hosts[1] 'n2;reboot' is not a host name"),
    ({"hosts": ["-oProxyCommand=touch /tmp/x", "n2"]}, "hosts[0] '-oProxyCommand=touch /tmp/x' is not a host name"),
    ({"hosts": []}, "non-empty"),
    ({"env": {"LD_PRELOAD": "/tmp/evil.so"}}, "not allowed"),
    ({"env": {"NCCL_DEBUG": "INFO\n-x EVIL=1"}}, "control character"),
    ({"mca": {"--prefix": "/tmp"}}, "MCA parameter"),
    ({"min_bytes": "64M", "max_bytes": "8M"}, "larger than max_bytes"),
    ({"max_bytes": "8Q"}, "size"),
    ({"datatype": "fp32"}, "datatype"),
    ({"library": "hccl", "operation": "sendrecv"}, "no 'sendrecv' test"),
    ({"launcher": "mpich", "mca": {"pml": "ob1"}}, "mca options"),
    ({"gpus_per_process": 3}, "multiple"),
    ({"hosts": ["n1:4", "n2:4"], "gpus_per_process": 1}, "slot"),
    ({"mpirun": "-np"}, "mpirun '-np' must not start with '-'"),
    ({"mpirun": "../bin/mpirun"}, "mpirun '../bin/mpirun' must be an absolute path or a command name"),
    ({"mca": {"plm_rsh_agent": "/tmp/evil"}}, "mca key 'plm_rsh_agent' is refused"),
    ({"env": {"OMPI_MCA_plm_rsh_agent": "/tmp/evil"}}, "env OMPI_MCA_plm_rsh_agent (an MCA parameter) key"),
    ({"timeout": -1}, "timeout -1 must be between 1 and"),
    ({"mpi_agent_dir": "/tmp/commcheck-kubexec"}, "mpi_agent_dir '/tmp/commcheck-kubexec' needs transport=kubectl"),
    ({"ssh_config": "/nonexistent/ssh_config"}, "ssh_config '/nonexistent/ssh_config' is not a file"),
    ({"workdir": "/tmp/../etc"}, "workdir '/tmp/../etc' must not contain '..'"),
    ({"min_fraction": 1.5}, "min_fraction"),
    ({"binary_dir": "relative/bin"}, "absolute"),
])
def test_bad_input_fails_before_anything_runs(tools, in_process, override, message):
    out = in_process(base(tools, **override))
    assert out.get("failed"), out
    assert message in out["msg"]
    assert mpirun_calls(tools) == []


def test_check_mode_returns_the_command_and_runs_nothing(tools, in_process):
    out = in_process(base(tools, env={"NCCL_IB_HCA": "mlx5_0"}, allow_run_as_root=True), check_mode=True)
    assert not out.get("failed")
    assert out["verdict"] == "skipped"
    assert out["cmd"][:8] == ["mpirun", "--allow-run-as-root", "-np", "2", "-H", "n1:1,n2:1", "--map-by",
                              "ppr:1:node"]
    assert "NCCL_IB_HCA=mlx5_0" in out["cmd"] and "NCCL_DEBUG=INFO" in out["cmd"]
    assert out["cmd"][out["cmd"].index("-g") + 1] == "8"
    assert mpirun_calls(tools) == []


def test_missing_binary_is_a_clear_error(tools, in_process, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    out = in_process(base(tools, binary_dir=str(empty)))
    assert out["failed"] and out["verdict"] == "error"
    assert "all_reduce_perf was not found in %s on the launcher host" % empty in out["msg"]
    assert "binary_dir" in out["fix"]
    assert mpirun_calls(tools) == []
    kept = in_process(base(tools, binary_dir=str(empty), fail_on_error=False))
    assert not kept["failed"] and kept["verdict"] == "error" and kept["cmd"][0] == "mpirun"


def test_missing_mpirun_is_a_clear_error(tools, in_process):
    out = in_process(base(tools, mpirun="/nonexistent/mpirun"))
    assert out["failed"] and "not installed on the launcher host" in out["msg"]


def test_text_output_parsed_and_judged(tools):
    out = run_module(base(tools, expected_busbw_gbs=300), tools)
    assert not out["failed"]
    assert out["json_output"] is False and "-J" not in out["cmd"]
    assert out["verdict"] == "pass"
    assert out["busbw_gbs"] == pytest.approx(338.82, rel=1e-3)
    assert out["threshold_busbw_gbs"] == 240.0
    [argv] = mpirun_calls(tools)
    assert argv == out["cmd"][1:]
    assert argv[argv.index("-H") + 1] == "n1:1,n2:1"
    low = run_module(base(tools, nic_rates_gbps=[400] * 8, link_efficiency=0.9), tools)
    assert low["expected_busbw_gbs"] == 360.0 and low["verdict"] == "pass"
    slow = run_module(base(tools, expected_busbw_gbs=450), tools)
    assert slow["verdict"] == "fail" and "below" in slow["cause"] and slow["failed"] is False


def test_json_output_used_when_the_binary_offers_it(tools, monkeypatch):
    doc = {"version": 1, "args": ["all_reduce_perf"], "env": ["API_TOKEN=s3cr3t"], "nccl_version": 22703,
           "config": {"nthreads": 1, "ngpus": 8, "minimum_bytes": 8, "maximum_bytes": 8589934592},
           "results": [{"size": 8589934592, "count": 2147483648, "type": "float", "redop": "sum", "root": "-1",
                        "out_of_place": {"time": 42000.5, "alg_bw": 204.5, "bus_bw": 383.43, "nwrong": 0.0},
                        "in_place": {"time": 42100.0, "alg_bw": 204.0, "bus_bw": 382.5, "nwrong": 0.0}}],
           "out_of_bounds": {"count": 0, "okay": "true"},
           "average_bus_bandwidth": {"bandwidth": 382.9, "okay": "unchecked"}, "errors": [""]}
    path = tools["tmp"] / "replay.json"
    path.write_text(json.dumps(doc))
    monkeypatch.setenv("REPLAY_JSON", str(path))
    monkeypatch.setenv("HELP_TEXT", NEW_HELP)
    out = run_module(base(tools, expected_busbw_gbs=400), tools)
    assert out["json_output"] is True
    assert out["cmd"][-2] == "-J" and out["cmd"][-1].endswith("run-1-1.json")
    assert out["busbw_gbs"] == pytest.approx(383.43)
    assert out["verdict"] == "pass"
    assert "s3cr3t" not in json.dumps(out)
    assert not os.path.exists(os.path.dirname(out["cmd"][-1]))  # its temporary workdir is gone
    never = run_module(base(tools, json_output="never"), tools)
    assert "-J" not in never["cmd"] and never["json_output"] is False
    monkeypatch.setenv("HELP_TEXT", OLD_HELP)
    always = run_module(base(tools, json_output="always"), tools)
    assert always["failed"] and "-J/--output_file" in always["msg"]


def test_bisection_names_the_slow_host(tools, monkeypatch):
    monkeypatch.setenv("SLOW_HOSTS", "n3")
    hosts = [{"address": "n%d" % i, "name": "node%d" % i} for i in range(1, 5)]
    out = run_module(base(tools, hosts=hosts, gpus_per_process=8, expected_busbw_gbs=300, bisect=True), tools)
    assert out["verdict"] == "fail"
    assert out["bad_nodes"] == ["node3"]
    assert out["bisect"]["conclusion"] == "isolated"
    runs = [(r["round"], r["hosts"], r["verdict"]) for r in out["runs"]]
    assert runs == [(1, ["node1", "node2", "node3", "node4"], "fail"),
                    (2, ["node1", "node2"], "pass"), (2, ["node3", "node4"], "fail"),
                    (3, ["node3", "node1"], "fail"), (3, ["node4", "node2"], "pass"),
                    (4, ["node1", "node2", "node4"], "pass")]
    assert out["bisect"]["rounds"] == 4 and out["bisect"]["runs"] == 6
    assert "bisection names node3 (6 runs in 4 rounds)" in out["cause"]
    # The runs of a round run at the same time: the log has them in either order.
    hosts = [c[c.index("-H") + 1] for c in mpirun_calls(tools)]
    assert hosts[0] == "n1:1,n2:1,n3:1,n4:1" and hosts[5] == "n1:1,n2:1,n4:1"
    assert sorted(hosts[1:3]) == ["n1:1,n2:1", "n3:1,n4:1"] and sorted(hosts[3:5]) == ["n3:1,n1:1", "n4:1,n2:1"]


def test_no_bisection_without_bisect_or_on_a_pass(tools, monkeypatch):
    monkeypatch.setenv("SLOW_HOSTS", "n3")
    out = run_module(base(tools, hosts=["n1", "n2", "n3", "n4"], expected_busbw_gbs=300), tools)
    assert out["verdict"] == "fail" and len(out["runs"]) == 1 and out["bisect"] is None
    ok = run_module(base(tools, hosts=["n1", "n2", "n4"], expected_busbw_gbs=300, bisect=True), tools)
    assert ok["verdict"] == "pass" and len(ok["runs"]) == 1


def test_hccl_with_mpich_hostfile(tools, monkeypatch):
    monkeypatch.setenv("REPLAY_FILE", HCCL)
    out = run_module({"library": "hccl", "hosts": ["10.78.130.22", "10.78.130.21"], "gpus_per_node": 8,
                      "launcher": "mpich", "min_bytes": "8K", "max_bytes": "64M", "datatype": "fp32",
                      "binary_dir": tools["binary_dir"], "env": {"HCCL_SOCKET_IFNAME": "eth0"},
                      "expected_busbw_gbs": 40}, tools)
    assert not out["failed"], out
    cmd = out["cmd"]
    assert cmd[:5] == ["mpirun", "-f", cmd[2], "-n", "16"]
    assert cmd[5:8] == ["-genv", "HCCL_SOCKET_IFNAME", "eth0"]
    assert cmd[8:] == [os.path.join(tools["binary_dir"], "all_reduce_test"), "-p", "8", "-b", "8K", "-e", "64M",
                       "-f", "2", "-n", "20", "-w", "5", "-c", "1", "-d", "fp32", "-o", "sum"]
    hostfile = (tools["tmp"] / "mpirun.log.hostfile").read_text().split()
    assert hostfile == ["10.78.130.22:8", "10.78.130.21:8"]
    assert out["busbw_gbs"] == pytest.approx(23.76245 * 2 * 15 / 16, rel=1e-3)
    assert out["verdict"] == "pass"


def test_launcher_failure_names_the_unreachable_host(tools, monkeypatch, tmp_path):
    text = tmp_path / "ssh_fail.txt"
    text.write_text("ssh: connect to host n9 port 22: No route to host\n"
                    "--------------------------------------------------------------------------\n"
                    "ORTE was unable to reliably start one or more daemons.\n")
    monkeypatch.setenv("REPLAY_FILE", str(text))
    monkeypatch.setenv("REPLAY_RC", "255")
    out = run_module(base(tools, hosts=["n1", "n9"], bisect=True, fail_on_error=False), tools)
    assert out["verdict"] == "error" and out["rc"] == 255
    assert out["bad_nodes"] == ["n9"]
    assert "No route to host" in out["cause"]
    assert len(out["runs"]) == 1  # named by the error itself: no bisection


def test_launch_settings_come_from_their_own_options(tools, in_process, tmp_path):
    """ssh_config and mpi_agent_dir are how mpirun reaches other hosts; mca can never set them."""
    config = tmp_path / "ssh_config"
    config.write_text("Host *\n  Port 2222\n")
    out = in_process(base(tools, ssh_config=str(config), mca={"btl_tcp_if_include": "10.0.0.0/24"}), check_mode=True)
    assert not out.get("failed"), out
    cmd = out["cmd"]
    assert cmd[cmd.index("plm_rsh_args") - 1:cmd.index("plm_rsh_args") + 2] == [
        "--mca", "plm_rsh_args", "-F %s" % config]
    agent = in_process(base(tools, transport="kubectl", kubectl={"pod": "commcheck-r1-node-a"},
                            mpi_agent_dir="/tmp/commcheck-kubexec"), check_mode=True)
    assert not agent.get("failed"), agent
    assert agent["cmd"][agent["cmd"].index("plm_rsh_agent") + 1] == "/tmp/commcheck-kubexec/kubexec.sh"
    both = in_process(base(tools, transport="kubectl", kubectl={"pod": "p"}, mpi_agent_dir="/tmp/commcheck-kubexec",
                           ssh_config=str(config)))
    assert both["failed"] and "exclude each other" in both["msg"]
    mpich = in_process(base(tools, launcher="mpich", ssh_config=str(config)))
    assert mpich["failed"] and "launcher 'mpich' takes no mpi_agent_dir or ssh_config" in mpich["msg"]
    assert mpirun_calls(tools) == []
