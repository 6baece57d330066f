# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cpu_governor module on emulated sysfs trees: switch, put back, check mode, a /sys it cannot write."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import sys

import pytest

from ansible_collections.clusterops.commcheck.plugins.modules import cpu_governor as module

HERE = os.path.dirname(os.path.abspath(__file__))
LAB = os.path.join(os.path.dirname(HERE), "lab")
if LAB not in sys.path:
    sys.path.insert(0, LAB)

import sysfs_tree  # noqa: E402  pylint: disable=wrong-import-position
from module_in_process import run_module  # noqa: E402  pylint: disable=wrong-import-position

BEFORE = ["powersave", "performance", "ondemand"]


@pytest.fixture
def root(tmp_path):
    path = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(path, [], cpus=BEFORE)
    return path


def governors(root):
    out = []
    for cpu in range(len(BEFORE)):
        with open(os.path.join(root, "devices/system/cpu/cpu%d/cpufreq/scaling_governor" % cpu)) as handle:
            out.append(handle.read().strip())
    return out


def run(monkeypatch, capsys, args, check_mode=False):
    """The module's result (failed ones too), run in this process, in diff mode."""
    return run_module(module, monkeypatch, capsys, args, check_mode=check_mode, diff=True)


def test_switch_then_put_back(monkeypatch, capsys, root):
    switched = run(monkeypatch, capsys, {"governor": "performance", "sysfs_root": root})
    assert switched["changed"] is True and switched["changed_cpus"] == ["cpu0", "cpu2"]
    assert switched["previous"] == {"cpu0": "powersave", "cpu1": "performance", "cpu2": "ondemand"}
    assert governors(root) == ["performance"] * 3
    again = run(monkeypatch, capsys, {"governor": "performance", "sysfs_root": root})
    assert again["changed"] is False and again["changed_cpus"] == []
    restored = run(monkeypatch, capsys, {"governors": switched["previous"], "sysfs_root": root})
    assert restored["changed"] is True and restored["changed_cpus"] == ["cpu0", "cpu2"]
    assert governors(root) == BEFORE


def test_check_mode_tells_and_writes_nothing(monkeypatch, capsys, root):
    result = run(monkeypatch, capsys, {"governor": "performance", "sysfs_root": root}, check_mode=True)
    assert result["changed"] is True and result["changed_cpus"] == ["cpu0", "cpu2"]
    assert result["current"] == {"cpu0": "performance", "cpu1": "performance", "cpu2": "performance"}
    assert result["diff"]["before"] == "cpu0: powersave\ncpu2: ondemand\n"
    assert governors(root) == BEFORE


@pytest.mark.parametrize("check_mode", [False, True])
def test_unwritable_sysfs_is_reported_not_failed(monkeypatch, capsys, root, check_mode):
    # the tests run as root, who may write any file mode: refuse like a read-only /sys does
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: (
        False if path.startswith(root) and mode & os.W_OK else real_access(path, mode)))
    result = run(monkeypatch, capsys, {"governor": "performance", "sysfs_root": root}, check_mode=check_mode)
    assert result.get("failed") is not True
    assert result["changed"] is False and result["changed_cpus"] == []
    assert result["skipped_reason"] == ("cannot write the scaling_governor of cpu0, cpu2 "
                                        "(not root, or a read-only /sys)")
    assert result["current"] == result["previous"]
    assert governors(root) == BEFORE


def test_writable_sysfs_with_nothing_to_change_is_not_skipped(monkeypatch, capsys, root):
    # the CPUs already at the governor need no write, so an unwritable file there is no reason to skip
    monkeypatch.setattr(os, "access", lambda path, mode: "cpu1" not in path)
    result = run(monkeypatch, capsys, {"governor": "performance", "sysfs_root": root, "cpus": ["0", "2"]})
    assert "skipped_reason" not in result and result["changed_cpus"] == ["cpu0", "cpu2"]
    assert governors(root) == ["performance"] * 3


def test_governor_a_cpu_lacks_fails_before_writing(monkeypatch, capsys, root):
    result = run(monkeypatch, capsys, {"governor": "turbo", "sysfs_root": root})
    assert result["failed"] is True and "does not offer the turbo governor" in result["msg"]
    assert governors(root) == BEFORE
