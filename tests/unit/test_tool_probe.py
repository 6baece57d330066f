# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tool probe: its keys, its script run for real through the host transport, and the two modules that
run it (tool_probe alone, rdma_facts with discovery in the same module run); rdma_facts without setting facts."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import sys

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import tool_probe as tp
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import HostTransport
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError
from ansible_collections.clusterops.commcheck.plugins.modules import rdma_facts as rdma_facts_module
from ansible_collections.clusterops.commcheck.plugins.modules import tool_probe as tool_probe_module

HERE = os.path.dirname(os.path.abspath(__file__))
LAB = os.path.join(os.path.dirname(HERE), "lab")
if LAB not in sys.path:
    sys.path.insert(0, LAB)

import sysfs_tree  # noqa: E402  pylint: disable=wrong-import-position
from module_in_process import run_module  # noqa: E402  pylint: disable=wrong-import-position


def executable(path, text="#!/bin/sh\nexit 0\n", mode=0o755):
    with open(path, "w") as handle:
        handle.write(text)
    os.chmod(path, mode)
    return path


@pytest.fixture
def tools(tmp_path, monkeypatch):
    """A PATH with one tool (ib_write_bw), an absolute tool, a file that is not executable and a marker file."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    executable(str(bindir / "ib_write_bw"))
    absolute = executable(str(tmp_path / "all_reduce_perf"))
    plain = executable(str(tmp_path / "not_executable"), mode=0o644)
    marker = tmp_path / "nvidiactl"
    marker.write_text("")
    monkeypatch.setenv("PATH", str(bindir) + ":/usr/bin:/bin")
    return {"bin": str(bindir), "absolute": absolute, "plain": plain, "marker": str(marker)}


def test_the_probe_finds_what_is_there_and_only_that(tools):
    keys = ["cmd:ib_write_bw", "cmd:commcheck-no-such-tool", "cmd:" + tools["absolute"], "cmd:" + tools["plain"],
            "exists:" + tools["marker"], "exists:/nonexistent/commcheck-probe"]
    out = tp.probe_tools(HostTransport(), keys, 30)
    assert out["rc"] == 0 and out["looked_for"] == keys
    assert out["found"] == {"cmd:ib_write_bw": os.path.join(tools["bin"], "ib_write_bw"),
                            "cmd:" + tools["absolute"]: tools["absolute"],
                            "exists:" + tools["marker"]: tools["marker"]}
    assert out["stdout_lines"] == ["%s\t%s" % (key, path) for key, path in out["found"].items()]
    assert out["cmd"][1:] == ["-c", tp.PROBE_SCRIPT, "sh"] + keys and os.path.basename(out["cmd"][0]) == "sh"


def test_tools_are_looked_up_on_the_path_given_even_without_sh_on_it(monkeypatch, tools):
    monkeypatch.setenv("PATH", tools["bin"])
    out = tp.probe_tools(HostTransport(), ["cmd:ib_write_bw", "cmd:iperf3"], 30)
    assert out["rc"] == 0 and out["found"] == {"cmd:ib_write_bw": os.path.join(tools["bin"], "ib_write_bw")}
    assert out["cmd"][0].startswith("/")


def test_keys_are_arguments_never_code(tools, tmp_path):
    # a key that would be code inside the script is only a name that is not found
    canary = tmp_path / "canary"
    hostile = ["cmd:$(touch %s)" % canary, "cmd:`touch %s`" % canary, "exists:/x; touch %s" % canary]
    out = tp.probe_tools(HostTransport(), hostile, 30)
    assert out["rc"] == 0 and out["found"] == {} and not canary.exists()


@pytest.mark.parametrize("keys, message", [
    ("cmd:iperf3", "must be a list"),
    ([""], "non-empty string"),
    (["iperf3"], "must be cmd:NAME or exists:/PATH"),
    (["cmd:"], "must be cmd:NAME or exists:/PATH"),
    (["run:iperf3"], "must be cmd:NAME or exists:/PATH"),
    (["exists:dev/nvidiactl"], "absolute path"),
    (["cmd:-v"], "must not start with '-'"),
    (["cmd:a\nb"], "NUL, tab or line breaks"),
    (["cmd:a\tb"], "NUL, tab or line breaks"),
    (["cmd:" + "x" * 5000], "at most 4096 characters"),
    (["cmd:x"] * 513, "keys: at most 512 probe keys"),
    (["cmd:ok", "cmd:--help"], "keys[1] 'cmd:--help'"),
])
def test_bad_keys_are_refused_before_anything_runs(keys, message):
    with pytest.raises(OptionError) as err:
        tp.check_probe_keys(keys)
    assert message in str(err.value)


def test_no_keys_run_nothing():
    class Refuses(object):
        remote = True

        def run(self, argv, timeout, capture=None):  # pylint: disable=unused-argument
            raise AssertionError("nothing should run")
    expected = {"looked_for": [], "rc": 0, "stdout_lines": [], "stderr": "", "found": {}, "cmd": []}
    assert tp.probe_tools(Refuses(), [], 30) == expected


def test_a_probe_that_cannot_run_says_why():
    class Gone(object):
        remote = True

        def run_plain(self, argv, timeout):
            return {"rc": 1, "stdout": "", "stderr": 'error: pods "p1" not found\n', "timed_out": False}
    out = tp.probe_tools(Gone(), ["cmd:iperf3"], 30)
    assert out["rc"] == 1 and out["found"] == {} and "not found" in out["stderr"]


def test_found_lines_for_keys_not_asked_are_ignored():
    assert tp.found_tools("cmd:iperf3\t/usr/bin/iperf3\ncmd:evil\t/x\nnoise\n", ["cmd:iperf3"]) == {
        "cmd:iperf3": "/usr/bin/iperf3"}


def test_tool_probe_module(monkeypatch, capsys, tools):
    keys = ["cmd:ib_write_bw", "cmd:commcheck-no-such-tool"]
    res = run_module(tool_probe_module, monkeypatch, capsys, {"keys": keys}, check_mode=True)
    assert not res.get("failed") and res["changed"] is False
    assert res["probe"]["found"] == {"cmd:ib_write_bw": os.path.join(tools["bin"], "ib_write_bw")}
    assert res["probe"]["rc"] == 0


def test_tool_probe_module_refuses_bad_keys(monkeypatch, capsys):
    res = run_module(tool_probe_module, monkeypatch, capsys, {"keys": ["cmd:--help"]})
    assert res["failed"] and "must not start with '-'" in res["msg"]


def test_rdma_facts_probes_in_the_same_run(monkeypatch, capsys, tools, tmp_path):
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [])
    args = {"sysfs_root": root, "tools": False, "probe": ["cmd:ib_write_bw", "exists:" + tools["marker"]]}
    res = run_module(rdma_facts_module, monkeypatch, capsys, args)
    assert not res.get("failed"), res
    assert "commcheck_rdma" in res["ansible_facts"]
    assert res["probe"]["found"] == {"cmd:ib_write_bw": os.path.join(tools["bin"], "ib_write_bw"),
                                     "exists:" + tools["marker"]: tools["marker"]}
    # without probe keys there is no probe
    res = run_module(rdma_facts_module, monkeypatch, capsys, {"sysfs_root": root, "tools": False})
    assert "probe" not in res
    res = run_module(rdma_facts_module, monkeypatch, capsys, {"sysfs_root": root, "tools": False, "probe": ["iperf3"]})
    assert res["failed"] and "cmd:NAME or exists:/PATH" in res["msg"]


def test_the_roles_keep_no_copy_of_the_script():
    # one probe: the roles run it through tool_probe or rdma_facts, never a script of their own
    roles = os.path.join(os.path.dirname(os.path.dirname(HERE)), "roles")
    for dirpath, _dirs, files in os.walk(roles):
        for name in files:
            with open(os.path.join(dirpath, name)) as handle:
                assert "command -v \"$v\"" not in handle.read(), os.path.join(dirpath, name)


def test_rdma_facts_can_leave_the_facts_alone(monkeypatch, capsys, tmp_path):
    # a later reading (port counters after the tests) returns what it found without replacing the facts
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [])
    as_facts = run_module(rdma_facts_module, monkeypatch, capsys, {"sysfs_root": root, "tools": False})
    returned = run_module(rdma_facts_module, monkeypatch, capsys, {"sysfs_root": root, "tools": False, "facts": False})
    assert "commcheck_rdma" not in as_facts and "ansible_facts" not in returned
    assert returned["commcheck_rdma"]["summary"] == as_facts["ansible_facts"]["commcheck_rdma"]["summary"]


def test_rdma_facts_without_devices_only_probes(monkeypatch, capsys, tools, tmp_path):
    # the one-click check with only TCP: one module run finds the tools and reads nothing of RDMA,
    # not even a sysfs root that is not there
    res = run_module(rdma_facts_module, monkeypatch, capsys,
                     {"sysfs_root": str(tmp_path / "no-such-sys"), "devices": False, "fail_on": "error",
                      "probe": ["cmd:ib_write_bw", "cmd:commcheck-no-such-tool"]})
    assert not res.get("failed") and res["changed"] is False, res
    assert "ansible_facts" not in res and "commcheck_rdma" not in res
    assert res["probe"]["found"] == {"cmd:ib_write_bw": os.path.join(tools["bin"], "ib_write_bw")}
    res = run_module(rdma_facts_module, monkeypatch, capsys, {"devices": False, "probe": ["cmd:-x"]})
    assert res["failed"] and "must not start with '-'" in res["msg"]
