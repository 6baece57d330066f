# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cpu_governor module on emulated sysfs trees: switch, put back, check mode, a /sys it cannot write."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import errno
import os
import sys

import pytest

from ansible.module_utils import basic
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


def refuse_writes(monkeypatch, refused, number=errno.EROFS):
    """Opening a governor file for writing fails as a read-only /sys (EROFS) or an unprivileged process (EACCES)
    makes it fail where ``refused(path)``: the tests run as root, who may write any file mode."""
    real_open = os.open

    def fake_open(path, flags, *args):
        if flags & (os.O_WRONLY | os.O_RDWR) and refused(str(path)):
            raise OSError(number, os.strerror(number), path)
        return real_open(path, flags, *args)
    monkeypatch.setattr(os, "open", fake_open)


@pytest.mark.parametrize("check_mode", [False, True])
def test_unwritable_sysfs_is_reported_not_failed(monkeypatch, capsys, root, check_mode):
    refuse_writes(monkeypatch, lambda path: path.startswith(root))
    result = run(monkeypatch, capsys, {"governor": "performance", "sysfs_root": root}, check_mode=check_mode)
    assert result.get("failed") is not True
    assert result["changed"] is False and result["changed_cpus"] == []
    assert result["skipped_reason"] == "cannot write the scaling_governor of cpu0, cpu2 (read-only /sys)"
    assert result["unmanaged"]["code"] == "governor_unmanaged" and result["unmanaged"]["why"] == ["read-only /sys"]
    assert result["unmanaged"]["governors"] == {"powersave": 1, "performance": 1, "ondemand": 1}
    assert result["current"] == result["previous"]
    assert governors(root) == BEFORE


def test_writable_sysfs_with_nothing_to_change_is_not_skipped(monkeypatch, capsys, root):
    # the CPUs already at the governor need no write, so an unwritable file there is no reason to skip
    refuse_writes(monkeypatch, lambda path: "cpu1" in path, errno.EACCES)
    result = run(monkeypatch, capsys, {"governor": "performance", "sysfs_root": root, "cpus": ["0", "2"]})
    assert "skipped_reason" not in result and "unmanaged" not in result and result["changed_cpus"] == ["cpu0", "cpu2"]
    assert governors(root) == ["performance"] * 3


def test_governor_a_cpu_lacks_fails_before_writing(monkeypatch, capsys, root):
    result = run(monkeypatch, capsys, {"governor": "turbo", "sysfs_root": root})
    assert result["failed"] is True and "does not offer the turbo governor" in result["msg"]
    assert governors(root) == BEFORE


@pytest.fixture
def warned(monkeypatch):
    """The warnings the module gave (module.warn), in order."""
    seen = []
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda self, text: seen.append(text))
    return seen


def test_a_hold_saved_to_the_lock_dir_is_put_back_from_there(monkeypatch, capsys, root, tmp_path, warned):
    lock = str(tmp_path / "lock" / "commcheck")
    held = run(monkeypatch, capsys, {"governor": "performance", "sysfs_root": root, "save_to": lock})
    assert held["changed"] is True and held["saved_to"] == lock and governors(root) == ["performance"] * 3
    assert oct(os.stat(lock).st_mode & 0o777) == "0o700"
    # the saved note holds only what was switched (cpu1 was at performance already)
    assert module.load_state(lock)["previous"] == {"cpu0": "powersave", "cpu2": "ondemand"}
    released = run(monkeypatch, capsys, {"restore_saved": lock, "leftover": False, "sysfs_root": root})
    assert released["changed"] is True and released["restored_saved"] == {"cpu0": "powersave", "cpu2": "ondemand"}
    assert warned == [] and governors(root) == BEFORE and module.load_state(lock) is None
    again = run(monkeypatch, capsys, {"restore_saved": lock, "leftover": False, "sysfs_root": root})
    assert again["changed"] is False and again["restored_saved"] == {}


def test_what_a_killed_run_saved_is_put_back_with_a_warning(monkeypatch, capsys, root, tmp_path, warned):
    lock = str(tmp_path / "lock")
    run(monkeypatch, capsys, {"governor": "performance", "sysfs_root": root, "save_to": lock})
    # the run is killed here; a second hold finds the CPUs switched and keeps the first note's governors
    second = run(monkeypatch, capsys, {"governor": "performance", "sysfs_root": root, "save_to": lock})
    assert second["changed"] is False and "saved_to" not in second
    leftover = run(monkeypatch, capsys, {"restore_saved": lock, "sysfs_root": root})
    assert leftover["changed"] is True and governors(root) == BEFORE
    assert len(warned) == 1 and "did not put back the CPU governor of cpu0, cpu2" in warned[0]


def test_a_hold_in_check_mode_saves_nothing(monkeypatch, capsys, root, tmp_path):
    lock = str(tmp_path / "lock")
    result = run(monkeypatch, capsys, {"governor": "performance", "sysfs_root": root, "save_to": lock},
                 check_mode=True)
    assert result["changed"] is True and "saved_to" not in result
    assert not os.path.exists(lock) and governors(root) == BEFORE


@pytest.mark.parametrize("args, message", [
    ({"governors": {"cpu0": "performance"}, "save_to": "/run/lock/commcheck"}, "save_to"),
    ({"governor": "performance", "save_to": "/run/../tmp"}, "save_to"),
])
def test_save_to_is_checked_before_anything_is_written(monkeypatch, capsys, root, args, message):
    result = run(monkeypatch, capsys, dict(args, sysfs_root=root))
    assert result["failed"] is True and message in result["msg"]
    assert governors(root) == BEFORE


def test_a_lock_dir_that_cannot_be_used_switches_nothing(monkeypatch, capsys, root, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(str(shared), 0o777)
    result = run(monkeypatch, capsys, {"governor": "performance", "sysfs_root": root, "save_to": str(shared)})
    assert result["failed"] is True and "cannot save the governors" in result["msg"]
    assert governors(root) == BEFORE
