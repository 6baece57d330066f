# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""CPU governor planning (pure) and applying on emulated sysfs trees."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import sys

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import cpu_governor as cg

HERE = os.path.dirname(os.path.abspath(__file__))
LAB = os.path.join(os.path.dirname(HERE), "lab")
if LAB not in sys.path:
    sys.path.insert(0, LAB)

import sysfs_tree  # noqa: E402  pylint: disable=wrong-import-position


def _tree(tmp_path, governors):
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [], cpus=governors)
    return root


def _gov(root, cpu):
    with open(os.path.join(root, "devices/system/cpu/cpu%d/cpufreq/scaling_governor" % cpu)) as handle:
        return handle.read().strip()


def test_parse_cpu_list():
    assert cg.parse_cpu_list(["0-2", "5", "cpu7", "9,11", 12]) == [
        "cpu0", "cpu1", "cpu2", "cpu5", "cpu7", "cpu9", "cpu11", "cpu12"]
    assert cg.parse_cpu_list([]) == []
    for bad in (["3-1"], ["x"], ["cpu"], ["-1"]):
        with pytest.raises(cg.GovernorError):
            cg.parse_cpu_list(bad)


def test_read_and_plan(tmp_path):
    root = _tree(tmp_path, ["powersave", "performance", None, "ondemand"])
    cpus = cg.read_cpus(root)
    assert sorted(cpus) == ["cpu0", "cpu1", "cpu3"]          # cpu2 has no cpufreq
    assert cpus["cpu0"]["governor"] == "powersave" and "performance" in cpus["cpu0"]["available"]
    targets, changes = cg.plan_changes(cpus, governor="performance")
    assert targets == {"cpu0": "performance", "cpu1": "performance", "cpu3": "performance"}
    assert changes == {"cpu0": ("powersave", "performance"), "cpu3": ("ondemand", "performance")}
    assert cg.diff_text(cpus, changes) == "cpu0: powersave\ncpu3: ondemand\n"
    assert cg.diff_text(cpus, changes, after=True) == "cpu0: performance\ncpu3: performance\n"
    changes = cg.plan_changes(cpus, governor="performance", selected=["cpu1"])[1]
    assert changes == {}
    changes = cg.plan_changes(cpus, governors={"cpu0": "ondemand", "3": "ondemand"})[1]
    assert changes == {"cpu0": ("powersave", "ondemand")}


@pytest.mark.parametrize("kwargs,message", [
    ({"governor": "turbo"}, "does not offer the turbo governor"),
    ({"governor": "performance", "selected": ["cpu2"]}, "cpu2 has no cpufreq"),
    ({"governors": {"cpu9": "performance"}}, "cpu9 has no cpufreq"),
    ({"governor": "perf; rm -rf /"}, "is not a governor name"),
    ({}, "exactly one of"),
    ({"governor": "performance", "governors": {}}, "exactly one of"),
])
def test_plan_refuses_bad_input(tmp_path, kwargs, message):
    cpus = cg.read_cpus(_tree(tmp_path, ["powersave", "performance", None]))
    with pytest.raises(cg.GovernorError) as err:
        cg.plan_changes(cpus, **kwargs)
    assert message in str(err.value)


def test_apply_and_restore(tmp_path):
    root = _tree(tmp_path, ["powersave", "performance", "schedutil"])
    cpus = cg.read_cpus(root)
    targets, changes = cg.plan_changes(cpus, governor="performance")
    previous = dict((name, cpus[name]["governor"]) for name in targets)
    assert cg.apply_changes(cpus, changes) == ["cpu0", "cpu2"]
    assert [_gov(root, n) for n in range(3)] == ["performance"] * 3
    cpus = cg.read_cpus(root)
    changes = cg.plan_changes(cpus, governors=previous)[1]
    cg.apply_changes(cpus, changes)
    assert [_gov(root, n) for n in range(3)] == ["powersave", "performance", "schedutil"]


def test_failed_write_rolls_back(tmp_path):
    root = _tree(tmp_path, ["powersave", "powersave", "powersave"])
    cpus = cg.read_cpus(root)
    changes = cg.plan_changes(cpus, governor="performance")[1]
    # cpu2's file turns into a directory: the write fails after cpu0 and cpu1 were written
    path = cpus["cpu2"]["path"]
    os.unlink(path)
    os.mkdir(path)
    with pytest.raises(cg.GovernorError) as err:
        cg.apply_changes(cpus, changes)
    assert "restored cpu0, cpu1" in str(err.value)
    assert [_gov(root, n) for n in range(2)] == ["powersave", "powersave"]


def test_no_cpufreq(tmp_path):
    assert cg.read_cpus(_tree(tmp_path, [None, None])) == {}
    assert cg.read_cpus(str(tmp_path / "nothing")) == {}


def test_governor_hold_switches_then_puts_back(tmp_path):
    root = _tree(tmp_path, ["powersave", "performance", "ondemand"])
    hold = cg.GovernorHold("performance", root, "host")
    assert hold.take() is None
    assert [_gov(root, n) for n in range(3)] == ["performance"] * 3
    assert hold.report == {"governor": "performance", "previous": {"cpu0": "powersave", "cpu2": "ondemand"},
                           "restored": False}
    hold.release()
    assert [_gov(root, n) for n in range(3)] == ["powersave", "performance", "ondemand"]
    assert hold.report["restored"] is True


def test_governor_hold_leaves_alone_what_it_cannot_set(tmp_path):
    assert cg.GovernorHold(None, "/sys", "host").take() is None
    pod = cg.GovernorHold("performance", "/sys", "kubectl")
    assert "kubectl transport" in pod.take() and pod.report["skipped"]
    bare = cg.GovernorHold("performance", str(tmp_path), "host")
    assert bare.take() is None and bare.report["skipped"].startswith("no cpufreq")
    bare.release()
    assert bare.report["restored"] is False
    root = _tree(tmp_path, ["powersave"])
    with pytest.raises(cg.GovernorError):
        cg.GovernorHold("no_such_governor", root, "host").take()


def test_unwritable_reason_names_the_cpus_to_change_that_cannot_be_written(tmp_path):
    cpus = cg.read_cpus(_tree(tmp_path, ["powersave"] * 7))
    changes = cg.plan_changes(cpus, governor="performance")[1]
    assert cg.unwritable_reason(cpus, changes, probe=lambda path: None) is None
    assert cg.unwritable_reason(cpus, {}, probe=lambda path: cg.WHY_READ_ONLY) is None
    assert cg.unwritable_reason(cpus, changes, probe=lambda path: cg.WHY_NOT_PRIVILEGED if "cpu3" in path else None) == (
        "cannot write the scaling_governor of cpu3 (not privileged)")
    assert cg.unwritable_reason(cpus, changes, probe=lambda path: cg.WHY_READ_ONLY) == (
        "cannot write the scaling_governor of cpu0, cpu1, cpu2, cpu3 and 3 more CPU(s) (read-only /sys)")


def test_governor_hold_leaves_alone_a_sysfs_it_cannot_write(tmp_path, monkeypatch):
    root = _tree(tmp_path, ["powersave", "performance"])
    # the tests run as root, who may write any file mode: refuse as an unprivileged process is refused
    monkeypatch.setattr(cg, "write_refusal", lambda path: cg.WHY_NOT_PRIVILEGED)
    hold = cg.GovernorHold("performance", root, "host")
    reason = "cannot write the scaling_governor of cpu0 (not privileged)"
    assert hold.take() == "cpu_governor: %s; left alone (governor_unmanaged)" % reason
    unmanaged = hold.report.pop("unmanaged")
    assert hold.report == {"governor": "performance", "previous": {}, "restored": False, "skipped": reason}
    assert unmanaged["why"] == ["not privileged"] and unmanaged["governors"] == {"powersave": 1, "performance": 1}
    hold.release()
    assert [_gov(root, n) for n in range(2)] == ["powersave", "performance"]


def test_governor_hold_leaves_the_note_an_earlier_killed_step_saved(tmp_path):
    root = _tree(tmp_path, ["powersave", "ondemand"])
    lock = str(tmp_path / "lock")
    # a killed step switched cpu0 and saved its own governor; cpu1 is still at its own
    cg.save_state(lock, root, {"cpu0": "powersave"})
    cg.apply_changes(cg.read_cpus(root), {"cpu0": ("powersave", "performance")})
    hold = cg.GovernorHold("performance", root, "host", state_dir=lock)
    hold.take()
    assert cg.load_state(lock)["previous"] == {"cpu0": "powersave", "cpu1": "ondemand"}
    hold.release()
    # the hold put back what it found; the note keeps cpu0's own governor for restore_saved
    assert [_gov(root, n) for n in range(2)] == ["performance", "ondemand"]
    assert cg.load_state(lock)["previous"] == {"cpu0": "powersave", "cpu1": "ondemand"}
    own = cg.GovernorHold("performance", root, "host", state_dir=str(tmp_path / "own"))
    own.take()
    own.release()
    assert cg.load_state(str(tmp_path / "own")) is None
