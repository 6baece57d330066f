# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CPU governor in the history: a ``governor_unmanaged`` finding of a module result becomes one finding record
per host and check (the history callback writes it), and the governor state of a collective run's hosts."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os

import pytest

from ansible_collections.clusterops.commcheck.plugins.callback import commcheck_history
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import cpu_governor as cg
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import governor_records as gr
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history

HERE = os.path.dirname(os.path.abspath(__file__))


def unmanaged(where="node7", why="read-only /sys", governors=None):
    return cg.unmanaged_finding(where, dict(("cpu%d" % n, {"governor": g}) for n, g in enumerate(
        governors or ["powersave", "powersave", "ondemand"])), [why], "performance", "cannot write cpu0")


class _Named(object):
    def __init__(self, name, action=None):
        self.name = name
        self.action = action
        self.no_log = False


class _Result(object):
    def __init__(self, data, host, action):
        self._result = data
        self._host = _Named(host)
        self._task = _Named("task", action)


class _Display(object):
    def __init__(self):
        self.warnings = []

    def warning(self, message):
        self.warnings.append(message)


def _callback(tmp_path):
    callback = commcheck_history.CallbackModule()
    callback._plugin_options = {"write_summary": True, "fsync": False, "run_id": "r1"}
    callback._dir, callback._fsync = str(tmp_path), False
    callback._display = _Display()
    return callback


def _lines(tmp_path):
    out = []
    for name in sorted(os.listdir(str(tmp_path))):
        with open(os.path.join(str(tmp_path), name)) as handle:
            out.extend(json.loads(line) for line in handle if line.strip())
    return out


def test_a_pair_modules_unmanaged_governor_is_a_finding_record_of_its_inventory_host():
    [rec] = gr.finding_records({"cpu_governor": {"governor": "performance", "unmanaged": unmanaged(
        "commcheck/commcheck-gpu-h2")}}, "h2", "clusterops.commcheck.perftest")
    assert (rec["kind"], rec["host"], rec["peer"], rec["verdict"]) == ("finding", "h2", None, "warn")
    assert rec["params"]["code"] == rec["params"]["finding"] == "governor_unmanaged"
    assert rec["params"]["check"] == "rdma" and rec["params"]["where"] == "commcheck/commcheck-gpu-h2"
    assert rec["params"]["why"] == ["read-only /sys"]
    assert rec["params"]["governors"] == {"powersave": 2, "ondemand": 1}
    assert rec["evidence"] == ["1 CPU(s) at ondemand", "2 CPU(s) at powersave"]
    assert rec["cause"].startswith("h2: the CPU governor stays unmanaged") and "privileged" in rec["fix"]
    history.normalize_record(rec)


@pytest.mark.parametrize("action, check", [("clusterops.commcheck.iperf3", "tcp"), ("iperf3", "tcp"),
                                           ("clusterops.commcheck.cpu_governor", "collective")])
def test_the_check_is_the_one_the_module_holds_the_governor_for(action, check):
    data = {"unmanaged": unmanaged()} if action.endswith("cpu_governor") else {"cpu_governor": {
        "unmanaged": unmanaged()}}
    assert [rec["params"]["check"] for rec in gr.finding_records(data, "h1", action)] == [check]


@pytest.mark.parametrize("data", [{}, {"cpu_governor": {"governor": "performance", "previous": {"cpu0": "ondemand"}}},
                                  {"cpu_governor": {}, "unmanaged": None}, {"unmanaged": {"code": "other"}},
                                  {"cpu_governor": "performance"}, None])
def test_a_result_without_the_finding_gives_no_record(data):
    assert gr.finding_records(data, "h1", "perftest") == []


def test_governor_state_of_the_collectives_hosts():
    results = {"h1": {"changed": True, "previous": {"cpu0": "powersave"}},
               "h2": {"changed": False, "skipped_reason": "cannot write", "unmanaged": unmanaged()},
               "h3": {"skipped": True}, "h4": {"changed": False, "previous": {}}}
    assert gr.governor_state(results, ["h1", "h2", "h3", "h4", "h5"], "performance") == {
        "h1": "held", "h2": "unmanaged", "h3": "not_held", "h4": "held", "h5": "not_held"}
    assert set(gr.governor_state(results, ["h1", "h2"], "").values()) == {"not_held"}


def test_the_history_callback_writes_the_finding_once_per_host_and_check(tmp_path):
    callback = _callback(tmp_path)
    perftest = {"changed": True, "cpu_governor": {"governor": "performance", "unmanaged": unmanaged("ns/pod-h1")}}
    callback.v2_runner_on_ok(_Result(perftest, "h1", "clusterops.commcheck.perftest"))
    # the retests of the same check on the same host say it again: no second line
    callback.v2_runner_on_ok(_Result(perftest, "h1", "clusterops.commcheck.perftest"))
    callback.v2_runner_on_ok(_Result(perftest, "h1", "clusterops.commcheck.iperf3"))
    callback.v2_runner_on_ok(_Result(perftest, "h2", "clusterops.commcheck.perftest"))
    callback.v2_runner_on_ok(_Result({"changed": True, "cpu_governor": {"governor": "performance", "previous": {}}},
                                     "h3", "clusterops.commcheck.perftest"))
    lines = _lines(tmp_path)
    assert [(r["kind"], r["host"], r["params"]["check"], r["verdict"], r["run_id"]) for r in lines] == [
        ("finding", "h1", "rdma", "warn", "r1"), ("finding", "h1", "tcp", "warn", "r1"),
        ("finding", "h2", "rdma", "warn", "r1")]
    assert lines[0]["params"]["where"] == "ns/pod-h1"
    assert callback._counts == {"warn": 3}


def test_a_real_ansible_result_with_the_finding_is_read():
    from ansible.executor import task_result
    if not hasattr(task_result, "CallbackTaskResult"):
        pytest.skip("ansible-core < 2.19 hands callbacks the task result itself")
    from ansible.inventory.host import Host
    from ansible.playbook.task import Task
    from ansible_collections.clusterops.commcheck.plugins.plugin_utils.history_results import data_if_read
    held = task_result.CallbackTaskResult(Host("h1"), Task(), {"cpu_governor": {"governor": "performance"}}, {})
    refused = task_result.CallbackTaskResult(Host("h1"), Task(), {"unmanaged": unmanaged()}, {})
    assert data_if_read(held) is None
    assert data_if_read(refused)["unmanaged"]["code"] == "governor_unmanaged"


def test_the_finding_code_is_documented():
    with open(os.path.join(os.path.dirname(os.path.dirname(HERE)), "docs", "troubleshooting.md")) as handle:
        assert "| `governor_unmanaged` |" in handle.read()
