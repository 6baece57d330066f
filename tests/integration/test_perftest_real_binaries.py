# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The argv our perftest module builds is accepted by the REAL Debian perftest binaries.

perftest parses its whole command line before it looks for a device; on this
machine (no RDMA device at all) an accepted command line therefore ends with
" Did not detect devices" (and, from most tools, " Unable to find the
Infiniband/RoCE device"),
while a rejected one ends with "Parser function exited with Error" or
"Invalid Command or flag". The module must report the former as no_device.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import perftest_cmd as pc
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import parse_perftest
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import HostTransport

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTIONS = os.path.join(REPO, ".build", "collections")
TOOLS = [pc.tool_name(t, m) for t in pc.TESTS for m in pc.METRICS]
# every tool prints the first line; some also print the second
NO_DEVICE = ("Did not detect devices",)
NO_DEVICE_ANY = ("Did not detect devices", "Unable to find the Infiniband/RoCE device")
REJECTED = ("Parser function exited with Error", "Invalid Command or flag", "unrecognized option")

pytestmark = pytest.mark.skipif(
    not all(shutil.which(t, path="/usr/bin") for t in TOOLS),
    reason="the Debian perftest package (/usr/bin/ib_*_bw, ib_*_lat) is not installed")


def _has_rdma_device():
    return bool(os.path.isdir("/sys/class/infiniband") and os.listdir("/sys/class/infiniband"))


def run_real(argv):
    return HostTransport().run(["/usr/bin/" + argv[0]] + argv[1:], 15)


def option_sets(test, metric):
    """Many option combinations the module can produce for this tool."""
    sets = [
        {},
        {"device": "mlx5_0", "ib_port": 1, "gid_index": 3, "tcp_port": 18600},
        {"device": "mlx5_bond_0", "ib_port": 2, "gid_index": 0, "duration": 5, "timeout": 30},
        {"device": "rocep133s0f0", "iterations": 5, "rdma_cm": True, "mtu": 4096},
        {"device": "irdma0", "iterations": 100000000, "mtu": 256, "extra_args": ["-F"]},
    ]
    if test != "atomic":
        sets += [{"device": "mlx5_1", "size": 1}, {"device": "mlx5_1", "size": 2 ** 31 - 1},
                 {"device": "mlx5_1", "all_sizes": True, "iterations": 1000}]
    if metric == "bw":
        sets += [{"device": "mlx5_2", "qps": 16384, "bidirectional": True, "duration": 3, "timeout": 20},
                 {"device": "mlx5_2", "qps": 1, "extra_args": ["--tclass=106", "-Q", "1"]}]
    return sets


@pytest.mark.skipif(_has_rdma_device(), reason="this machine has RDMA devices: the tools would really run")
@pytest.mark.parametrize("tool", TOOLS)
def test_real_parser_accepts_every_argv_we_build(tool):
    test, metric = tool[3:].rsplit("_", 1)
    checked = 0
    for options in option_sets(test, metric):
        for role in ("server", "client"):
            params = dict(options, role=role, test=test, metric=metric, server="192.0.2.10")
            argv = pc.build_argv(params)
            res = run_real(argv)
            text = res["stdout"] + res["stderr"]
            assert not any(r in text for r in REJECTED), "perftest rejected %s:\n%s" % (argv, text)
            assert all(n in text for n in NO_DEVICE), "unexpected output for %s:\n%s" % (argv, text)
            assert res["rc"] not in (0, None) and not res["timed_out"]
            parsed = parse_perftest(text)
            assert [e["code"] for e in parsed["errors"]] == ["no_device"], (argv, parsed["errors"])
            checked += 1
    assert checked >= 10


@pytest.mark.parametrize("argv,complaint", [
    (["ib_write_bw", "-s", "0"], "Message Size should be between 1 and 2147483647"),
    (["ib_write_bw", "-n", "4"], "Iteration num should be between 5"),
    (["ib_write_bw", "-q", "16385"], "num of Qps should be between 1 and 16384"),
    (["ib_read_lat", "-b"], "Bidirectional is only available in BW test"),
    (["ib_write_bw", "-a", "-D", "5"], "Duration mode currently doesn't support running on all sizes"),
    (["ib_write_bw", "-i", "0"], "IB Port can't be less than 1"),
])
def test_what_we_refuse_the_real_parser_refuses_too(argv, complaint):
    """Control: the device message above is not what perftest prints for everything."""
    res = run_real(argv)
    text = res["stdout"] + res["stderr"]
    assert complaint in text and not any(n in text for n in NO_DEVICE_ANY)
    params = {"role": "server", "test": argv[0].split("_")[1], "metric": argv[0].split("_")[2]}
    flags = {"-s": ("size", 0), "-n": ("iterations", 4), "-q": ("qps", 16385), "-b": ("bidirectional", True),
             "-i": ("ib_port", 0)}
    if argv[1] == "-a":
        params.update(all_sizes=True, duration=5, timeout=30)
    else:
        key, value = flags[argv[1]]
        params[key] = value
    with pytest.raises(pc.ArgumentError):
        pc.build_argv(params)


def run_module(args, tmp_path):
    argfile = tmp_path / "args.json"
    argfile.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    env = dict(os.environ, PYTHONPATH=COLLECTIONS, PATH="/usr/sbin:/usr/bin:/sbin:/bin")
    proc = subprocess.run([sys.executable, os.path.join(REPO, "plugins", "modules", "perftest.py"), str(argfile)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env,
                          timeout=120, check=False)
    return json.loads(proc.stdout[proc.stdout.index("{"):])


@pytest.mark.skipif(_has_rdma_device(), reason="this machine has RDMA devices: the tools would really run")
def test_module_reports_no_device_from_real_binaries(tmp_path):
    result = run_module({"role": "client", "test": "read", "metric": "bw", "device": "mlx5_0", "gid_index": 3,
                         "server": "192.0.2.10", "duration": 2, "timeout": 20}, tmp_path)
    assert result["failed"] is True and result["verdict"] == "error"
    assert result["cmd"][0] == "/usr/bin/ib_read_bw"
    assert result["errors"][0]["code"] == "no_device" and result["attempts"] == 1
    assert "driver" in result["cause"] and result["fix"]
    assert "Did not detect devices" in result["stdout"] + result["stderr"]


@pytest.mark.skipif(_has_rdma_device(), reason="this machine has RDMA devices: the tools would really run")
def test_module_sides_with_real_binaries(tmp_path):
    result = run_module({"fail_on_error": False, "duration": 2, "timeout": 20, "sides": [
        {"role": "server", "peer": "b", "device": "mlx5_0", "tcp_port": 18700, "rail": 0},
        {"role": "server", "peer": "b", "device": "mlx5_1", "tcp_port": 18701, "rail": 1},
        {"role": "client", "peer": "c", "server": "192.0.2.11", "device": "mlx5_0", "tcp_port": 18702,
         "test": "send", "metric": "lat", "step": 1}]}, tmp_path)
    assert not result.get("failed") and result["verdict"] == "error"
    assert [s["errors"][0]["code"] for s in result["sides"]] == ["no_device"] * 3
    assert [s["cmd"][0] for s in result["sides"]] == ["/usr/bin/ib_write_bw"] * 2 + ["/usr/bin/ib_send_lat"]


def test_use_cuda_rejected_by_a_build_without_cuda(tmp_path):
    res = run_real(["ib_write_bw", "--use_cuda=0"])
    if "unrecognized option" not in res["stdout"] + res["stderr"]:
        pytest.skip("this perftest build knows --use_cuda")
    result = run_module({"role": "server", "device": "mlx5_0", "use_cuda": 0, "timeout": 20,
                         "fail_on_error": False}, tmp_path)
    assert result["verdict"] == "error" and result["errors"][0]["code"] == "invalid_option"
    assert "CUDA" in result["cause"] and "--use_cuda=0" in result["cmd"]
