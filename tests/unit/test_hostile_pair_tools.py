# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile option values against every option of the pair-tool modules and the kubectl path.

Each module's ``main()`` runs in this process with the value; nothing may run
(every process start goes through ``subprocess.Popen``, replaced here by a
recorder that refuses to start anything) and nothing may be written (the
cpu_governor module works on a sysfs tree of its own). The task must fail
with a message that names the option and quotes at most ~200 characters of
the value. Each module also has a control: valid options get as far as
starting a process (or writing), so a recorder that recorded nothing proves
something.

The fast tier gives each option the first value of each class (a flag, shell,
a control character, '..', a huge or empty text, a malformed one, a negative,
zero or too large number; ``value_classes``): the rules behind them are tested
value by value where they live (option_rules, the tools' option grammars in
test_perftest_cmd.py, the kubectl settings' check). The full tier gives every
option the rest of its values.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import signal
import subprocess

import pytest
from ansible.module_utils.testing import patch_module_args


from ansible_collections.clusterops.commcheck.plugins.modules import cpu_governor as cpu_governor_module
from ansible_collections.clusterops.commcheck.plugins.modules import iperf3 as iperf3_module
from ansible_collections.clusterops.commcheck.plugins.modules import perftest as perftest_module
from ansible_collections.clusterops.commcheck.plugins.modules import rdma_facts as rdma_facts_module
from ansible_collections.clusterops.commcheck.plugins.modules import tool_probe as tool_probe_module
from module_in_process import Recorder
from value_classes import tiers

LONG = "a" * 5000
MODULES = {"perftest": perftest_module, "iperf3": iperf3_module, "rdma_facts": rdma_facts_module,
           "cpu_governor": cpu_governor_module, "tool_probe": tool_probe_module}

# --- the classes of hostile values ----------------------------------------------------------
FLAGS = ["-x", "--help", "-dmlx5_9", "-oProxyCommand=x"]
SHELL = ["a;b", "$(id)", "a b", "`id`"]
CONTROL = ["a\nb", "a\x00b", "a\tb"]
TRAVERSAL = ["../x", "a/../../b"]
NAMES = FLAGS + SHELL + CONTROL + TRAVERSAL + [LONG, ""]
PATHS = ["relative/sys", "-x", "/sys/../etc", "/sys/x/../../etc", "/sys\n", "/sys\x00x", "/" + LONG]
BINARIES = ["bin/kubectl", "./kubectl", "../kubectl", "-kubectl", "/usr/../bin/kubectl", "/etc/passwd",
            "/nonexistent/kubectl", "no-such-kubectl-xyz", "kubectl --insecure", LONG]
CONTEXTS = ["-x", "--kubeconfig=/tmp/x", "a b", "a\nb", "a;b", LONG]
KUBECONFIGS = ["-x", "--insecure-skip-tls-verify", "relative/config", "/a/../b", "/a\nb", "/" + LONG]
# probe keys (tool_probe's keys, rdma_facts' probe): flags, code, control characters, relative paths
PROBE_KEYS = ["cmd:" + v for v in FLAGS + CONTROL + [LONG, ""]] + ["exists:" + v for v in TRAVERSAL + ["x", ""]] + [
    "iperf3", "sh:-c", "", LONG]

PERFTEST_EXTRA = [
    ["-dmlx5_9"], ["-p1"], ["-bd", "mlx5_1"], ["-Fq2"], ["--por=1"], ["--po=1"], ["--report_g"], ["10.0.0.9"],
    ["-F", "--"], ["-"], ["--bogus"], ["-G"], ["--tclass", "-5"], ["--tclass"], ["--mmap=/etc/passwd"],
    ["--kek_path=/k"], ["--data_enc_key_app_path=/bin/sh"], ["--payload_file_path=../x"], ["-W/etc/shadow"],
    ["--out_json_file=/etc/cron.d/x"], ["--run_inf"], ["-Z"], ["a;b"], ["a\nb"], ["$(id)"], [LONG], "-F -a",
]
IPERF3_EXTRA = [
    ["-cevil.example"], ["-p1"], ["-RZ"], ["--po", "1"], ["--par=4"], ["-n1G"], ["10.0.0.9"], ["--"],
    ["--logfile=/tmp/x"], ["-F/etc/passwd"], ["-I", "/tmp/p"], ["-D"], ["--json-stream"], ["--bogus"],
    ["-w", "-5"], ["--debug", "3"], ["--rsa-private-key-path=../key"], ["-w"], ["a;b"], [LONG], "-Z -R",
]
INTS_ANY = [-1, -10 ** 12, 10 ** 12, 10 ** 30]


def kubectl_cases():
    """(kubectl options, option named in the message) for every kubectl suboption."""
    cases = []
    for value in ["--help", "-x", "Bad_Pod", "a;b", "a\nb", LONG, "a..b"]:
        cases.append(({"pod": value}, "kubectl.pod", value))
    for value in ["-n", "--all-namespaces", "a.b", "Upper", "a b", LONG]:
        cases.append(({"pod": "p1", "namespace": value}, "kubectl.namespace", value))
    for value in ["-c", "a b", "a.b", LONG]:
        cases.append(({"pod": "p1", "container": value}, "kubectl.container", value))
    for value in CONTEXTS:
        cases.append(({"pod": "p1", "context": value}, "kubectl.context", value))
    for value in KUBECONFIGS:
        cases.append(({"pod": "p1", "kubeconfig": value}, "kubectl.kubeconfig", value))
    for value in BINARIES:
        cases.append(({"pod": "p1", "binary": value}, "kubectl.binary", value))
    return cases


def perftest_cases():
    base = {"role": "client", "server": "10.0.0.2", "device": "mlx5_0"}
    cases = []
    for value in NAMES + ["mlx5/0"]:
        cases.append((dict(base, device=value), "device", value))
    for value in FLAGS + SHELL + CONTROL + [LONG, "a..b"]:
        cases.append((dict(base, server=value), "server", value))
    for value in ["-1", "--help", "256", "3;ls", "a\nb", LONG]:
        cases.append((dict(base, gid_index=value), "gid_index", value))
    ranges = {"ib_port": [0, 256], "tcp_port": [0, 65536], "size": [0, 2 ** 31], "iterations": [4],
              "duration": [0], "qps": [0, 16385], "use_cuda": [1024], "timeout": [0, 86401],
              "connect_retries": [100001]}
    for key, values in ranges.items():
        for value in values + INTS_ANY:
            cases.append((dict(base, **{key: value}), key, value))
    for value in [-1.0, -1e300, 1e12]:
        cases.append((dict(base, expected_gbps=value), "expected_gbps", value))
    for value in [0, -0.5, 1.5, 1e300]:
        cases.append((dict(base, min_fraction=value), "min_fraction", value))
    for value in PATHS:
        cases.append((dict(base, sysfs_root=value), "sysfs_root", value))
    for value in FLAGS + SHELL + CONTROL + ["PERF", LONG]:
        cases.append((dict(base, cpu_governor=value), "cpu_governor", value))
    for value in ["-1", "x;y", 999, LONG]:       # a GID index that comes from the rdma_facts option
        facts = {"devices": [{"name": "mlx5_0", "ports": [{"port": 1, "link_layer": "Ethernet", "gid_index": value}]}]}
        cases.append((dict(base, gid_index="auto", rdma_facts=facts), "rdma_facts gid_index", value))
    for value in PERFTEST_EXTRA:
        cases.append((dict(base, extra_args=value), "extra_args", value))
    side = {"role": "server", "device": "mlx5_0"}
    for key, values in {"rail": [1024], "step": [10001], "round": [1000001], "ib_port": [0], "tcp_port": [0],
                        "use_cuda": [1024]}.items():
        for value in values + INTS_ANY[:2]:
            cases.append(({"sides": [side, dict(side, **{key: value})]}, "sides[1]: %s" % key, value))
    for value in ["a\nb", "a\x00b", LONG]:
        cases.append(({"sides": [dict(side, peer=value)]}, "sides[0]: peer", value))
    for value in FLAGS + SHELL + ["mlx5/0", LONG]:
        cases.append(({"sides": [dict(side, device=value)]}, "sides[0]: device", value))
    for value in FLAGS + SHELL + [LONG]:
        cases.append(({"sides": [{"role": "client", "server": value}]}, "sides[0]: server", value))
    for value in [-1.0, 1e12]:
        cases.append(({"sides": [dict(side, expected_gbps=value)]}, "sides[0]: expected_gbps", value))
    for kube, name, value in kubectl_cases():
        cases.append((dict(base, transport="kubectl", kubectl=kube), name, value))
    return cases


def iperf3_cases():
    base = {"role": "client", "server": "10.0.0.2"}
    cases = []
    for value in FLAGS + SHELL + CONTROL + [LONG, "a..b", ""]:
        cases.append((dict(base, server=value), "server", value))
    for value in FLAGS + SHELL + CONTROL + [LONG, "10.0.0.1%eth0"]:
        cases.append((dict(base, bind=value), "bind", value))
    ranges = {"tcp_port": [0, 65536], "duration": [0], "parallel": [0, 129], "omit": [601], "timeout": [0, 86401],
              "connect_retries": [100001]}
    for key, values in ranges.items():
        for value in values + INTS_ANY:
            cases.append((dict(base, **{key: value}), key, value))
    for value in [-1.0, 1e12]:
        cases.append((dict(base, expected_gbps=value), "expected_gbps", value))
    for value in [0, -0.5, 1.5]:
        cases.append((dict(base, min_fraction=value), "min_fraction", value))
    for value in IPERF3_EXTRA:
        cases.append((dict(base, extra_args=value), "extra_args", value))
    for value in PATHS:
        cases.append((dict(base, sysfs_root=value), "sysfs_root", value))
    for value in FLAGS + SHELL + CONTROL + ["PERF", LONG]:
        cases.append((dict(base, cpu_governor=value), "cpu_governor", value))
    side = {"role": "server"}
    for key, values in {"rail": [1024], "step": [10001], "round": [1000001], "tcp_port": [0]}.items():
        for value in values + INTS_ANY[:2]:
            cases.append(({"sides": [side, dict(side, **{key: value})]}, "sides[1]: %s" % key, value))
    for value in ["a\nb", LONG]:
        cases.append(({"sides": [dict(side, peer=value)]}, "sides[0]: peer", value))
    for value in FLAGS + [LONG]:
        cases.append(({"sides": [dict(side, bind=value)]}, "sides[0]: bind", value))
    for kube, name, value in kubectl_cases()[::3]:
        cases.append((dict(base, transport="kubectl", kubectl=kube), name, value))
    return cases


def rdma_facts_cases():
    cases = []
    for value in PATHS:
        cases.append(({"sysfs_root": value}, "sysfs_root", value))
    for value in [0, -1.0, 1e12, -1e300]:
        cases.append(({"expected_rate_gbps": value}, "expected_rate_gbps", value))
    for value in [LONG, "10.0.0.0/33", "-x", "a\nb"]:
        cases.append(({"subnet": value}, "subnet", value))
    for value in [256] + INTS_ANY:
        cases.append(({"ib_gid_index": value}, "ib_gid_index", value))
    for value in [0, 86401] + INTS_ANY:
        cases.append(({"timeout": value}, "timeout", value))
    for kube, name, value in kubectl_cases():
        cases.append(({"transport": "kubectl", "kubectl": kube}, name, value))
    for value in PROBE_KEYS:
        cases.append(({"probe": ["cmd:iperf3", value]}, "probe[1]", value))
    return cases


def tool_probe_cases():
    cases = []
    for value in PROBE_KEYS:
        cases.append(({"keys": ["cmd:iperf3", value]}, "keys[1]", value))
    cases.append(({"keys": ["cmd:iperf3"] * 513}, "keys", ["cmd:iperf3"] * 513))
    for value in [0, 86401] + INTS_ANY:
        cases.append(({"keys": ["cmd:iperf3"], "timeout": value}, "timeout", value))
    for kube, name, value in kubectl_cases():
        cases.append(({"keys": ["cmd:iperf3"], "transport": "kubectl", "kubectl": kube}, name, value))
    return cases


def cpu_governor_cases():
    cases = []
    for value in FLAGS + SHELL + CONTROL + ["PERF", LONG]:
        cases.append(({"governor": value}, "governor", value))
    for value in ["-1", "0-99999999999", "99999", "a;b", "cpu0\n", "3-1", LONG, "--help"]:
        cases.append(({"governor": "performance", "cpus": [value]}, "cpus", value))
    for value in [{"cpu0": "--help"}, {"cpu0": "a;b"}, {"cpu0": LONG}, {"-1": "performance"},
                  {"99999": "performance"}, {"0-3": "performance"}, {LONG: "performance"}]:
        cases.append(({"governors": value}, "governors", value))
    for value in PATHS:
        cases.append(({"governor": "performance", "sysfs_root": value}, "sysfs_root", value))
    return cases


# --- running a module in this process ---------------------------------------------------------

@pytest.fixture
def recorder(monkeypatch):
    rec = Recorder()
    monkeypatch.setattr(subprocess, "Popen", rec)
    # the modules install handlers for these signals when they start their tools: put pytest's back
    saved = dict((sig, signal.getsignal(sig)) for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT))
    yield rec
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def run_main(name, args, capsys):
    """(result dict, exception) of one module run: the JSON it printed, or what escaped from main()."""
    capsys.readouterr()
    escaped = None
    with patch_module_args(args):
        try:
            MODULES[name].main()
        except SystemExit:
            pass
        except Exception as exc:  # pylint: disable=broad-except
            escaped = exc
    out = capsys.readouterr().out
    result = json.loads(out[out.index("{"):]) if "{" in out else None
    return result, escaped


def sysfs_tree(root, governors=("powersave", "powersave")):
    for num, governor in enumerate(governors):
        path = os.path.join(root, "devices", "system", "cpu", "cpu%d" % num, "cpufreq")
        os.makedirs(path)
        with open(os.path.join(path, "scaling_governor"), "w") as handle:
            handle.write(governor + "\n")
        with open(os.path.join(path, "scaling_available_governors"), "w") as handle:
            handle.write("performance powersave\n")
    return root


def tree_state(root):
    state = {}
    for base, _dirs, files in os.walk(root):
        for name in files:
            with open(os.path.join(base, name)) as handle:
                state[os.path.join(base, name)] = handle.read()
    return state


def refusal_problem(result, escaped, option, recorder):
    """What keeps a module run from being a clean refusal naming ``option`` (None: it is one)."""
    if escaped is not None:
        return "main() raised %r instead of failing the task" % (escaped,)
    if result is None or result.get("failed") is not True:
        return "taken: %s" % result
    msg = result["msg"]
    if option not in msg:
        return "the message does not name %s: %s" % (option, msg)
    if LONG in msg or len(msg) >= 700:
        return "the message quotes too much: %d characters" % len(msg)
    if recorder.argvs:
        return "something ran: %s" % recorder.argvs
    return None


def tiered(name, cases):
    """((module, option), [args, ...]) parameters of module ``name``'s (args, option, value) ``cases`` (see
    value_classes.tiers)."""
    return tiers((((name, option), args, value) for args, option, value in cases), ids="-".join)


def assert_each_refused(name, option, cases, recorder, capsys, after=None):
    """Every run of module ``name`` with the arguments of ``cases`` is refused naming ``option`` (``after(args)``:
    what else is wrong after a run, or None); all are run, and each one that is not refused is named."""
    problems = []
    for args in cases:
        del recorder.argvs[:]
        result, escaped = run_main(name, args, capsys)
        problem = refusal_problem(result, escaped, option, recorder) or (after and after(args))
        if problem:
            problems.append("%s: %s" % (_id(args), problem))
    assert problems == [], "\n".join(problems)


def _id(args):
    text = json.dumps(args, sort_keys=True)
    return text if len(text) < 80 else text[:60] + "...%d" % len(text)


@pytest.mark.parametrize("option,cases", tiered("perftest", perftest_cases()) + tiered("iperf3", iperf3_cases())
                         + tiered("tool_probe", tool_probe_cases()))
def test_pair_tools_and_tool_probe_refuse_hostile_values(option, cases, recorder, capsys):
    assert_each_refused(option[0], option[1], cases, recorder, capsys)


@pytest.mark.parametrize("option,cases", tiered("rdma_facts", rdma_facts_cases()))
def test_rdma_facts_refuses_hostile_values(option, cases, recorder, capsys, tmp_path):
    root = sysfs_tree(str(tmp_path / "sys"))
    cases = [dict({"sysfs_root": root}, **args) for args in cases]
    assert_each_refused("rdma_facts", option[1], cases, recorder, capsys)


@pytest.mark.parametrize("option,cases", tiered("cpu_governor", cpu_governor_cases()))
def test_cpu_governor_refuses_hostile_values(option, cases, recorder, capsys, tmp_path):
    root = sysfs_tree(str(tmp_path / "sys"))
    before = tree_state(root)

    def wrote(_args):
        return "the module wrote although its input was refused" if tree_state(root) != before else None
    cases = [dict({"sysfs_root": root}, **args) for args in cases]
    assert_each_refused("cpu_governor", option[1], cases, recorder, capsys, after=wrote)


# --- controls: valid options do get to run ------------------------------------------------------

def fake_kubectl(tmp_path):
    return fake_tool(tmp_path, "kubectl")


def fake_tool(tmp_path, name):
    path = tmp_path / name
    path.write_text("#!/bin/sh\nexit 1\n")
    path.chmod(0o755)
    return str(path)


def test_control_perftest_valid_options_start_the_tool(recorder, capsys, tmp_path, monkeypatch):
    tool = fake_tool(tmp_path, "ib_write_bw")
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    extra = ["-F", "--tclass=106", "-l", "4", "--tcl", "96", "-Wcounters/port_xmit_data"]
    args = {"role": "client", "server": "10.0.0.2", "device": "mlx5_0", "extra_args": extra, "duration": 5,
            "timeout": 30, "sysfs_root": sysfs_tree(str(tmp_path / "sys")), "numa_pin": "none"}
    result, escaped = run_main("perftest", args, capsys)
    assert escaped is None and result is not None
    assert recorder.argvs, result
    argv = recorder.argvs[0]
    assert argv[argv.index(tool):] == [tool, "-d", "mlx5_0", "-i", "1", "-p", "18515", "-D", "5", "--report_gbits"] + \
        extra + ["10.0.0.2"]


def test_control_iperf3_valid_options_start_the_tool(recorder, capsys, tmp_path, monkeypatch):
    tool = fake_tool(tmp_path, "iperf3")
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    args = {"role": "server", "bind": "10.0.0.1", "extra_args": ["-Z", "-w", "4M", "--debug=2"], "timeout": 30}
    result, escaped = run_main("iperf3", args, capsys)
    assert escaped is None and recorder.argvs, result
    argv = recorder.argvs[0]
    assert argv[argv.index(tool):] == [tool, "-s", "-1", "-J", "-p", "5201", "-B", "10.0.0.1", "-Z", "-w", "4M",
                                       "--debug=2"]


def test_control_iperf3_holds_the_governor_while_its_sides_run_and_puts_it_back(
        recorder, capsys, tmp_path, monkeypatch):
    """As perftest does: every CPU switched right before the sides start, each put back when they end."""
    tool = fake_tool(tmp_path, "iperf3")
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    root = sysfs_tree(str(tmp_path / "sys"), governors=("powersave", "performance"))
    before = tree_state(root)
    result, escaped = run_main("iperf3", {"role": "server", "timeout": 30, "sysfs_root": root,
                                          "cpu_governor": "performance"}, capsys)
    assert escaped is None and recorder.argvs and tool in recorder.argvs[0], result
    assert result["cpu_governor"] == {"governor": "performance", "previous": {"cpu0": "powersave"}, "restored": True}
    assert dict((k, v.strip()) for k, v in tree_state(root).items()) == dict((k, v.strip()) for k, v in before.items())


def test_control_kubectl_options_reach_kubectl(recorder, capsys, tmp_path):
    kube = {"pod": "commcheck-r1-gpu-01", "namespace": "commcheck", "container": "commcheck",
            "context": "arn:aws:eks:us-east-1:1:cluster/x", "kubeconfig": str(tmp_path / "config"),
            "binary": fake_kubectl(tmp_path)}
    _result, _escaped = run_main("iperf3", {"role": "server", "transport": "kubectl", "kubectl": kube}, capsys)
    assert recorder.argvs, "valid kubectl options did not get to kubectl"
    assert recorder.argvs[0][:10] == [kube["binary"], "--kubeconfig", kube["kubeconfig"], "--context", kube["context"],
                                      "-n", "commcheck", "exec", "commcheck-r1-gpu-01", "-c"]


def test_control_kubectl_bare_name_on_path(recorder, capsys, tmp_path, monkeypatch):
    fake_kubectl(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    run_main("rdma_facts", {"transport": "kubectl", "kubectl": {"pod": "p1", "binary": "kubectl"}}, capsys)
    assert recorder.argvs and recorder.argvs[0][0] == "kubectl"


def test_control_rdma_facts_valid_options_pass(recorder, capsys, tmp_path):
    args = {"sysfs_root": sysfs_tree(str(tmp_path / "sys")), "expected_rate_gbps": 400, "subnet": "10.0.0.0/16",
            "ib_gid_index": 0, "timeout": 30, "tools": False, "address_source": "gids"}
    result, escaped = run_main("rdma_facts", args, capsys)
    assert escaped is None and result is not None and not result.get("failed"), result


def test_control_cpu_governor_valid_options_write(recorder, capsys, tmp_path):
    root = sysfs_tree(str(tmp_path / "sys"))
    before = tree_state(root)
    result, escaped = run_main("cpu_governor", {"governor": "performance", "cpus": ["0-1"], "sysfs_root": root},
                               capsys)
    assert escaped is None and result["changed"] and result["changed_cpus"] == ["cpu0", "cpu1"]
    assert tree_state(root) != before
