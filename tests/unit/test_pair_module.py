# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pair modules' shared skeleton and side checks."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import pair_module as pm
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import side_options as so


@pytest.mark.parametrize("value, expected", [(5, 5), ("7", 7), (" 8 ", 8), (3.0, 3), (None, None)])
def test_int_option_takes_what_check_int_calls_an_integer(value, expected):
    assert so.int_option({"size": value}, "size", 1, 10) == expected


@pytest.mark.parametrize("value, message", [
    (True, "size must be an integer, got True"), (2.5, "size must be an integer, got 2.5"),
    ("1_0", "size must be an integer"), ("x", "size must be an integer"),
    (0, "size must be between 1 and 10, got 0"), (11, "size must be between 1 and 10, got 11"),
])
def test_int_option_names_the_option(value, message):
    with pytest.raises(so.ArgumentError, match=message):
        so.int_option({"size": value}, "size", 1, 10)


def test_shell_meta_error_finds_nested_values():
    assert so.shell_meta_error("x", {"a": ["ok", "b;c"]}) == "x.a[1] 'b;c' contains shell metacharacter(s) ';'"
    assert so.shell_meta_error("x", ["ok", 3, None]) is None


def test_side_params_side_keys_win_and_step_defaults_to_zero():
    params = {"tcp_port": 5201, "timeout": 60, "server": "10.0.0.1"}
    merged = pm.side_params(params, {"role": "client", "tcp_port": 5300, "server": None}, ("tcp_port", "timeout",
                            "server"), ("role", "tcp_port", "server", "step"))
    assert merged == {"role": "client", "tcp_port": 5300, "timeout": 60, "server": "10.0.0.1", "step": 0}


def test_argument_spec_has_the_shared_options_and_the_tools():
    spec = pm.pair_argument_spec({"bind": {"type": "str"}}, {"bind": {"type": "str"}}, tcp_port=5201, timeout=60)
    assert spec["tcp_port"]["default"] == 5201 and spec["timeout"]["default"] == 60 and "bind" in spec
    assert set(spec["sides"]["options"]) >= {"role", "peer", "server", "tcp_port", "rail", "step", "round",
                                             "expected_gbps", "bind"}
    assert "transport" in spec


def test_not_found_result_says_which_tool():
    res = pm.not_found_result(["ib_read_lat", "-d", "mlx5_0"])
    assert res["stderr"] == "ib_read_lat: not found on PATH" and res["tool_missing"] and res["attempts"] == 0


def test_run_all_runs_only_the_tools_found_and_releases_after(monkeypatch):
    calls = []
    monkeypatch.setattr(pm, "install_cleanup_handlers", lambda: calls.append("handlers"))

    class Transport(object):
        def start(self, argv, timeout, env=None, capture=None):  # pylint: disable=unused-argument
            calls.append(("start", list(argv)))
            raise OSError("no such program")

    sides = [{"argv": ["ib_write_bw"], "role": "server", "timeout": 5, "connect_retries": 0, "step": 0},
             {"argv": ["ib_read_bw"], "role": "server", "timeout": 5, "connect_retries": 0, "step": 0,
              "tool_missing": True}]
    ran = pm.run_all(Transport(), sides, lambda res: False, exec_argv=lambda s: ["numactl"] + s["argv"],
                     hold=lambda: calls.append("hold") or "held", release=calls.append)
    assert calls == ["handlers", "hold", ("start", ["numactl", "ib_write_bw"]), "held"]
    assert ran[0]["tool_missing"] and ran[0]["attempts"] == 1
    assert ran[1]["stderr"] == "ib_read_bw: not found on PATH" and ran[1]["attempts"] == 0


def test_the_result_echoes_the_options_with_the_bulky_documents_summarized():
    sides = [{"role": "server", "device": "mlx5_0"}, {"role": "client", "server": "10.0.0.2"}]
    facts = {"devices": [{"name": "mlx5_0", "ports": [{"port": 1, "gids": ["fe80::1"] * 50}]}, {"name": "mlx5_1"}]}
    params = {"sides": sides, "rdma_facts": facts, "duration": 5, "extra_args": ["-F"], "timeout": None}
    echoed = pm.brief_invocation(params)["module_args"]
    assert echoed == {"sides": "2 side(s), each in the result's sides", "duration": 5, "extra_args": ["-F"],
                      "rdma_facts": "the commcheck_rdma facts of 2 device(s)", "timeout": None}
    assert params["sides"] is sides and params["rdma_facts"] is facts      # the module's own options stay whole
    unset = {"sides": None, "rdma_facts": None}
    assert pm.brief_invocation(unset) == {"module_args": unset}


def test_exit_pair_returns_the_brief_echo_and_every_side(monkeypatch):
    class Module(object):
        params = {"fail_on_error": False, "sides": [{"role": "server"}], "rdma_facts": {"devices": []}}

        def warn(self, text):
            raise AssertionError(text)

        def exit_json(self, **out):
            raise SystemExit(out)

    results = [{"verdict": "pass", "cmd": ["ib_write_bw"], "rc": 0}]
    with pytest.raises(SystemExit) as done:
        pm.exit_pair(Module(), False, results, "perftest", lambda side: "failed")
    out = done.value.args[0]
    assert out["sides"] == results and out["verdict"] == "pass"
    assert out["invocation"] == {"module_args": {"fail_on_error": False, "sides": "1 side(s), each in the result's sides",
                                                 "rdma_facts": "the commcheck_rdma facts of 0 device(s)"}}
