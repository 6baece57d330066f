# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cpu_governor module with the kubectl transport (the collective role's hold in pods): a privileged pod's
governors switched and kept in a directory of the pod's own in the controller's lock directory, put back from
there; an unprivileged pod left alone with the governor_unmanaged finding."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import shutil
import sys
import tempfile

import pytest

from ansible_collections.clusterops.commcheck.plugins.modules import cpu_governor as module
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import cpu_governor as cg

HERE = os.path.dirname(os.path.abspath(__file__))
LAB = os.path.join(os.path.dirname(HERE), "lab")
for path in (LAB, HERE):
    if path not in sys.path:
        sys.path.insert(0, path)

import sysfs_tree  # noqa: E402  pylint: disable=wrong-import-position
from module_in_process import run_module  # noqa: E402  pylint: disable=wrong-import-position
from test_governor_unmanaged import NOBODY, LocalPod  # noqa: E402  pylint: disable=wrong-import-position

BEFORE = ["powersave", "performance", "ondemand"]
POD = {"namespace": "commcheck", "pod": "commcheck-gpu-h1"}


@pytest.fixture
def root():
    top = tempfile.mkdtemp(prefix="commcheck-podgov-")
    os.chmod(top, 0o755)
    path = os.path.join(top, "sys")
    sysfs_tree.build_sysfs(path, [], cpus=BEFORE)
    yield path
    shutil.rmtree(top, True)


def governors(root_dir):
    out = []
    for cpu in range(len(BEFORE)):
        with open(os.path.join(root_dir, "devices/system/cpu/cpu%d/cpufreq/scaling_governor" % cpu)) as handle:
            out.append(handle.read().strip())
    return out


def in_pod(monkeypatch, capsys, args, pod):
    """The module with the kubectl transport, its execs run on this machine as the pod would run them."""
    monkeypatch.setattr(module, "get_transport", lambda _module: pod)
    return run_module(module, monkeypatch, capsys, dict(args, transport="kubectl", kubectl=POD))


def test_a_privileged_pod_is_held_and_put_back_from_its_own_note(monkeypatch, capsys, root, tmp_path):
    lock = str(tmp_path / "lock")
    pod = LocalPod()
    held = in_pod(monkeypatch, capsys, {"governor": "performance", "save_to": lock, "sysfs_root": root}, pod)
    assert held["changed"] is True and held["changed_cpus"] == ["cpu0", "cpu2"], held
    assert governors(root) == ["performance"] * 3
    own = os.path.join(lock, "pods", "commcheck", "commcheck-gpu-h1")
    assert held["saved_to"] == own
    with open(os.path.join(own, cg.STATE_NAME)) as handle:
        assert json.load(handle)["previous"] == {"cpu0": "powersave", "cpu2": "ondemand"}
    # nothing in the lock directory itself, which every pod of the controller shares
    assert not os.path.exists(os.path.join(lock, cg.STATE_NAME))
    # every read and write went through the pod's exec
    assert pod.calls and all(call[:2] == ["sh", "-c"] for call in pod.calls)
    back = in_pod(monkeypatch, capsys, {"restore_saved": lock, "leftover": False, "sysfs_root": root}, LocalPod())
    assert back["changed"] is True and back["restored_saved"] == {"cpu0": "powersave", "cpu2": "ondemand"}, back
    assert governors(root) == BEFORE and not os.path.exists(os.path.join(own, cg.STATE_NAME))


def test_another_pods_note_is_not_put_back_on_this_pod(monkeypatch, capsys, root, tmp_path):
    lock = str(tmp_path / "lock")
    in_pod(monkeypatch, capsys, {"governor": "performance", "save_to": lock, "sysfs_root": root}, LocalPod())
    other = LocalPod()
    other.pod = "commcheck-gpu-h2"
    monkeypatch.setattr(module, "get_transport", lambda _module: other)
    result = run_module(module, monkeypatch, capsys, {"restore_saved": lock, "sysfs_root": root,
                                                      "transport": "kubectl",
                                                      "kubectl": dict(POD, pod="commcheck-gpu-h2")})
    assert result["changed"] is False and result["restored_saved"] == {}
    assert governors(root) == ["performance"] * 3


@pytest.mark.skipif(os.geteuid() != 0, reason="the unprivileged pod is this machine's nobody, which needs root")
def test_an_unprivileged_pod_is_left_alone_with_the_finding(monkeypatch, capsys, root, tmp_path):
    lock = str(tmp_path / "lock")
    result = in_pod(monkeypatch, capsys, {"governor": "performance", "save_to": lock, "sysfs_root": root},
                    LocalPod(prefix=NOBODY))
    assert result["changed"] is False and "skipped_reason" in result, result
    assert result["unmanaged"]["host"] == "commcheck/commcheck-gpu-h1"
    assert result["unmanaged"]["why"] == ["not privileged"]
    assert governors(root) == BEFORE and not os.path.exists(lock)


def test_a_pod_without_cpufreq_gives_the_finding(monkeypatch, capsys, tmp_path):
    result = in_pod(monkeypatch, capsys, {"governor": "performance", "sysfs_root": str(tmp_path)}, LocalPod())
    assert result["unmanaged"]["why"] == ["no cpufreq"] and result["unmanaged"]["host"] == "commcheck/commcheck-gpu-h1"


def test_the_pod_state_dir_is_the_pods_own():
    assert cg.pod_state_dir("/run/lock/cc", "ns", "p1") == "/run/lock/cc/pods/ns/p1"
