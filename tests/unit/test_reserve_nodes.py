# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reservation of the nodes under test: the plan (argv lists, nodes that carried the key before), the file
and the guard that undoes it when ansible-playbook is gone (clock and liveness injected; one real guard process)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import subprocess
import sys
import time

import pytest

from ansible_collections.clusterops.commcheck.plugins.action import reserve_nodes as action
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import reserve
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import node_reservation as held

KEY = reserve.DEFAULT_KEY
BASE = ["kubectl", "--context", "lab"]


def node(name, labels=None, taints=None):
    own = dict({"kubernetes.io/hostname": name}, **(labels or {}))
    return {"kind": "Node", "metadata": {"name": name, "labels": own},
            "spec": {"taints": taints} if taints else {}}


def test_label_plan_sets_and_undoes_exactly_the_key_and_leaves_nodes_that_carried_it():
    current = {"node-a": node("node-a"), "node-b": node("node-b", {KEY: "other-run"}), "node-c": node("node-c")}
    out = reserve.plan(["node-c", "node-a", "node-b"], current, "label", KEY, "20261203T020000Z-1a2b3c", BASE)
    assert out["reserved_before"] == ["node-b"]
    assert [a["argv"] for a in out["set"]] == [
        BASE + ["label", "node", "node-a", KEY + "=20261203T020000Z-1a2b3c"],
        BASE + ["label", "node", "node-c", KEY + "=20261203T020000Z-1a2b3c"]]
    assert [a["argv"] for a in out["undo"]] == [BASE + ["label", "node", "node-a", KEY + "-"],
                                                BASE + ["label", "node", "node-c", KEY + "-"]]
    # never --overwrite: a value someone set meanwhile is refused by kubectl, not replaced
    assert not [a for a in out["set"] if "--overwrite" in a["argv"]]


def test_taint_plan_and_a_node_with_a_taint_of_that_key():
    current = {"node-a": node("node-a", {KEY: "x"}),      # a label of the key does not count for a taint
               "node-b": node("node-b", taints=[{"key": KEY, "value": "r0", "effect": "NoExecute"}])}
    out = reserve.plan(["node-a", "node-b"], current, "taint", KEY, "r1", BASE)
    assert out["reserved_before"] == ["node-b"]
    assert [a["argv"][3:] for a in out["set"]] == [["taint", "node", "node-a", KEY + "=r1:NoSchedule"]]
    assert [a["argv"][3:] for a in out["undo"]] == [["taint", "node", "node-a", KEY + ":NoSchedule-"]]
    nothing = {"set": [], "undo": [], "reserved_before": []}
    assert reserve.plan(["node-a"], current, "none", KEY, "r1", BASE) == nothing


def test_a_run_id_becomes_a_label_value():
    assert reserve.label_value("20261203T020000Z-1a2b3c") == "20261203T020000Z-1a2b3c"
    assert reserve.label_value("awx:42+retry") == "awx_42_retry"
    assert reserve.label_value("-" + "x" * 80) == "x" * 62
    assert reserve.label_value("") == ""


@pytest.mark.parametrize("mode,key,run_id,nodes,match", [
    ("cordon", KEY, "r1", ["n"], "mode must be one of"),
    ("label", "--overwrite", "r1", ["n"], "must not start with '-'"),
    ("label", "a/b/c", "r1", ["n"], "not a valid Kubernetes key"),
    ("label", KEY, "r1", ["-o"], r"nodes\[0\].*not a valid Kubernetes node name"),
    ("label", KEY, "r1", ["Node_A"], "not a valid Kubernetes node name"),
    ("label", KEY, ":::", ["n"], "gives no label value"),
])
def test_bad_input_is_refused_before_anything(mode, key, run_id, nodes, match):
    with pytest.raises(reserve.ReserveError, match=match):
        reserve.plan(nodes, {}, mode, key, run_id, BASE)


def test_play_nodes_are_the_pods_nodes_else_the_mapped_or_own_names():
    hostvars = {"pod-a": {"commcheck_k8s_node": "node-a"}, "pod-b": {"commcheck_k8s_node": "node-a"},
                "h1": {}, "h2": {}}
    assert action.play_nodes(hostvars, ["pod-a", "pod-b", "h1", "h2"], {"h2": "gpu-02"}) == ["node-a", "h1", "gpu-02"]


def test_state_dir_is_private(tmp_path):
    path = held.state_dir(str(tmp_path / "rsv"))
    assert os.stat(path).st_mode & 0o777 == 0o700
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(held.ReservationError, match="no one else"):
        held.state_dir(str(shared))
    link = tmp_path / "link"
    link.symlink_to(path)
    with pytest.raises(held.ReservationError):
        held.state_dir(str(link))
    state = held.state_path(path, "r/1")
    held.write_state(state, {"undo": []})
    assert os.path.dirname(state) == path and os.stat(state).st_mode & 0o777 == 0o600


def test_guard_waits_while_the_controller_lives_and_ends_when_released(tmp_path):
    path = str(tmp_path / "r1.json")
    held.write_state(path, {"undo": [{"node": "n", "argv": ["kubectl", "label", "node", "n", KEY + "-"]}]})
    ran, polls = [], []

    def sleep(_seconds):
        polls.append(1)
        if len(polls) == 3:
            held.forget(path)           # the run's end released it

    assert held.guard_loop(path, {"pid": 1, "pid_start": 1}, alive=lambda who: True, run=ran.append,
                           sleep=sleep) is None
    assert ran == [] and len(polls) == 3


def test_guard_undoes_when_the_controller_is_gone(tmp_path):
    path = str(tmp_path / "r1.json")
    undo = [{"node": "n", "argv": ["kubectl", "label", "node", "n", KEY + "-"]}]
    held.write_state(path, {"undo": undo})
    lives = iter([True, True, False])
    done = held.guard_loop(path, {"pid": 1, "pid_start": 1}, alive=lambda who: next(lives),
                           run=lambda actions: [dict(a, rc=0) for a in actions], sleep=lambda s: None)
    assert done == [dict(undo[0], rc=0)] and not os.path.exists(path)
    # a pid reused by another process is not the controller
    assert held.controller_alive({"pid": 7, "pid_start": 100}, start=lambda pid: 101) is False
    assert held.controller_alive({"pid": 7, "pid_start": 100}, start=lambda pid: None) is False
    assert held.controller_alive({"pid": 7, "pid_start": 100}, start=lambda pid: 100) is True


def test_a_real_guard_outlives_its_starter_and_undoes_when_the_controller_dies(tmp_path, wait_until):
    """The guard is a fresh process in a session of its own; a stand-in 'controller' (sleep) killed => undo runs."""
    marker = tmp_path / "undone"
    path = str(tmp_path / "r1.json")
    held.write_state(path, {"undo": [{"node": "n", "action": "release",
                                      "argv": ["/bin/sh", "-c", 'echo "$0" > "$1"', "released", str(marker)]}]})
    controller = subprocess.Popen(["sleep", "600"])
    try:
        who = {"pid": controller.pid, "pid_start": held.process_start(controller.pid)}
        guard = held.start_guard(path, who, python=sys.executable)
        assert os.getsid(guard) == guard                     # its own session: Ctrl-C of the run does not reach it
        time.sleep(0.1)
        assert not marker.exists()
        controller.kill()
        controller.wait()
        assert wait_until(lambda: marker.exists() and not os.path.exists(path), within=60)
        assert marker.read_text().strip() == "released"
    finally:
        if controller.poll() is None:
            controller.kill()
            controller.wait()


def test_a_real_guard_ends_once_released(tmp_path, wait_until):
    path = str(tmp_path / "r1.json")
    held.write_state(path, {"undo": []})
    guard = held.start_guard(path, {"pid": os.getpid(), "pid_start": held.process_start(os.getpid())},
                             python=sys.executable)
    held.forget(path)
    assert wait_until(lambda: held.process_start(guard) is None, within=60)


def test_report_lines():
    lines = reserve.report_lines("label", KEY, {"reserved": ["a"], "released": [], "reserved_before": ["b"]})
    assert lines == ["reserve nodes (label %s): 1 reserved, 0 released" % KEY,
                     "left as they were (carried %s before): b" % KEY]
    assert json.dumps(lines)
