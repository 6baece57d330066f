# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""planning/per_test_options: which of a check's options each test takes, and the perftest module applying it."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.per_test_options import (
    side_options, unhonoured)
from ansible_collections.clusterops.commcheck.plugins.modules import perftest as perftest_module
from module_in_process import run_module as run_main

ASKED = {"bidirectional": True, "qps": 4, "size": 4096, "all_sizes": False, "lat_iterations": 2000, "mtu": 1024,
         "duration": 5}


@pytest.mark.parametrize("test,kept,dropped", [
    ({"test": "write", "metric": "bw"}, ("bidirectional", "qps", "size"), ("lat_iterations",)),
    ({"test": "write", "metric": "lat"}, ("size", "lat_iterations"), ("bidirectional", "qps")),
    ({"test": "atomic", "metric": "bw"}, ("bidirectional", "qps"), ("size", "lat_iterations")),
    (["atomic", "lat"], ("lat_iterations",), ("bidirectional", "qps", "size")),
])
def test_each_test_keeps_the_options_it_takes(test, kept, dropped):
    for family in ("rdma", "gpudirect"):
        got = side_options(family, ASKED, test)
        assert [got[k] for k in kept] == [ASKED[k] for k in kept]
        assert [got[k] for k in dropped] == [None] * len(dropped)
        # options with no per-test rule reach every test
        assert (got["mtu"], got["duration"]) == (1024, 5)


def test_tcp_has_one_test_and_keeps_every_option():
    options = {"bidirectional": True, "parallel": 8, "reverse": False}
    assert side_options("tcp", options, {"metric": "bw"}) == options


def test_side_options_does_not_change_its_input_and_refuses_an_unknown_family():
    options = dict(ASKED)
    side_options("rdma", options, {"test": "read", "metric": "lat"})
    assert options == ASKED
    with pytest.raises(ValueError, match="unknown check family 'nfs'"):
        side_options("nfs", options, {"test": "read", "metric": "lat"})


def test_unhonoured_names_what_no_planned_test_takes():
    tests = [["atomic", "lat"], ["write", "lat"]]
    assert unhonoured("rdma", {"bidirectional": True, "qps": 4, "size": 8, "lat_iterations": 0}, tests) == [
        ("bidirectional", "bandwidth tests only (metric bw)"), ("qps", "bandwidth tests only (metric bw)")]
    assert unhonoured("rdma", {"size": 8}, [["atomic", "bw"]]) == [
        ("size", "every test but atomic ones (fixed 8 bytes)")]
    assert unhonoured("rdma", {"size": 8, "qps": 4}, [["atomic", "bw"], ["send", "lat"]]) == []
    assert unhonoured("rdma", {"lat_iterations": 100}, [["write", "bw"]]) == [
        ("lat_iterations", "latency tests only (metric lat)")]


def _sides():
    sides = []
    for step, (op, metric) in enumerate([("write", "bw"), ("write", "lat"), ("atomic", "bw"), ("read", "lat")]):
        sides.append({"role": "server", "peer": "n2", "test": op, "metric": metric, "step": step,
                      "tcp_port": 18515 + step, "device": "mlx5_0"})
        sides.append({"role": "client", "peer": "n1", "server": "10.0.0.1", "test": op, "metric": metric,
                      "step": step, "tcp_port": 18515 + step, "device": "mlx5_1"})
    return sides


def test_the_module_gives_each_side_the_top_level_options_its_test_takes(monkeypatch, capsys):
    """One call mixes bandwidth, latency and atomic sides with bidirectional, QPs and a size: every side runs."""
    result = run_main(perftest_module, monkeypatch, capsys, {
        "sides": _sides(), "bidirectional": True, "qps": 4, "size": 4096, "lat_iterations": 1000, "duration": 3,
        "timeout": 30}, check_mode=True)
    assert not result.get("failed"), result.get("msg")
    cmds = dict(((s["test"], s["metric"], s["role"]), s["cmd"]) for s in result["sides"])
    assert cmds[("write", "bw", "client")][0] == "ib_write_bw"
    assert cmds[("write", "bw", "client")][5:] == ["-p", "18515", "-s", "4096", "-D", "3", "-q", "4", "-b",
                                                   "--report_gbits", "10.0.0.1"]
    assert cmds[("write", "lat", "server")][5:] == ["-p", "18516", "-s", "4096", "-n", "1000"]
    assert cmds[("atomic", "bw", "client")][5:] == ["-p", "18517", "-D", "3", "-q", "4", "-b", "--report_gbits",
                                                    "10.0.0.1"]
    assert cmds[("read", "lat", "client")][5:] == ["-p", "18518", "-s", "4096", "-n", "1000", "10.0.0.1"]


def test_one_side_from_role_is_the_test_asked_for_and_is_refused_as_before(monkeypatch, capsys):
    result = run_main(perftest_module, monkeypatch, capsys, {
        "role": "server", "metric": "lat", "bidirectional": True}, check_mode=True)
    assert result["failed"] and result["msg"] == "bidirectional applies to bandwidth tests only (metric=bw)"
