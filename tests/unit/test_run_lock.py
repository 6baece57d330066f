# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run lock: its decisions (free, ours, held, stale by pid, stale by lease, takeover), leftovers of a killed
run, the directory's safety, the module, and the governors a killed module saved."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
from ansible.module_utils import basic

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import cpu_governor as cg
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import run_lock as rl
from ansible_collections.clusterops.commcheck.plugins.modules import cpu_governor as governor_module
from ansible_collections.clusterops.commcheck.plugins.modules import run_lock as lock_module

HERE = os.path.dirname(os.path.abspath(__file__))
LAB = os.path.join(os.path.dirname(HERE), "lab")
if LAB not in sys.path:
    sys.path.insert(0, LAB)

import sysfs_tree  # noqa: E402  pylint: disable=wrong-import-position
from module_in_process import run_module  # noqa: E402  pylint: disable=wrong-import-position

ME = {"host": "ctl1", "boot_id": "b-1", "pid": 4242, "pid_start": 777, "user": "alice"}
OTHER = {"host": "ctl2", "boot_id": "b-2", "pid": 99, "pid_start": 5, "user": "bob"}
T0 = 1767225600.0


def _lock(run_id="run-a", controller=None, at=T0, lease=600):
    return rl.lock_record(run_id, controller or OTHER, at, lease)


# -- decisions ---------------------------------------------------------------------------------------------------

def test_free_when_no_lock():
    assert rl.decide(None, "run-b", T0)[0] == rl.FREE


def test_ours_when_this_run_holds_it():
    assert rl.decide(_lock("run-b"), "run-b", T0 + 10)[0] == rl.OURS


def test_held_by_a_live_run_names_its_lease():
    state, why = rl.decide(_lock(), "run-b", T0 + 599)
    assert state == rl.HELD and "2026-01-01T00:10:00Z" in why


def test_stale_by_lease_counts_from_the_last_renewal():
    lock = _lock()
    assert rl.decide(lock, "run-b", T0 + 700)[0] == rl.STALE
    # a command of the holder renewed the lease (the file's mtime) 200 s after it took the host
    assert rl.decide(lock, "run-b", T0 + 700, mtime=T0 + 200)[0] == rl.HELD
    state, why = rl.decide(lock, "run-b", T0 + 900, mtime=T0 + 200)
    assert state == rl.STALE and "100 s ago" in why


def test_stale_by_pid_before_the_lease_ends():
    state, why = rl.decide(_lock(controller=ME), "run-b", T0 + 1, dead_runs=["run-a"])
    assert state == rl.STALE and "pid 4242" in why and "ctl1" in why


def _proc(tmp_path, pid, start, state="S"):
    os.makedirs(str(tmp_path / str(pid)))
    fields = [state, "1"] + ["0"] * 17 + [str(start)] + ["0"] * 10
    (tmp_path / str(pid) / "stat").write_text(u"%d (ansible-playbook) %s\n" % (pid, " ".join(fields)))


def test_controller_alive_only_when_it_can_be_told(tmp_path):
    _proc(tmp_path, 4242, 777)
    assert rl.controller_alive(ME, ME, str(tmp_path)) is True
    # the pid now belongs to another process (started at another time): the holder is gone
    assert rl.controller_alive(dict(ME, pid_start=778), ME, str(tmp_path)) is False
    assert rl.controller_alive(dict(ME, pid=4243), ME, str(tmp_path)) is False
    # another controller, or this one after a reboot: cannot be told from here
    assert rl.controller_alive(OTHER, ME, str(tmp_path)) is None
    assert rl.controller_alive(dict(ME, boot_id="b-0"), ME, str(tmp_path)) is None
    _proc(tmp_path, 4244, 1, state="Z")
    assert rl.controller_alive(dict(ME, pid=4244, pid_start=1), ME, str(tmp_path)) is False


def test_leftover_wait_is_bounded_by_deadlines_and_the_limit():
    notes = [{"pgid": 7, "run_id": "run-a", "deadline": T0 + 30}, {"pgid": 8, "run_id": "run-a", "deadline": T0 + 90}]
    assert rl.leftover_wait(notes, T0, 600) == 90
    assert rl.leftover_wait(notes, T0, 60) == 60
    assert rl.leftover_wait(notes, T0, 0) == 0
    assert rl.leftover_wait([], T0, 600) == 0
    live = rl.live_leftovers(notes + [{"pgid": 9, "run_id": "run-b"}], "run-b", lambda pgid: pgid != 7)
    assert [n["pgid"] for n in live] == [8]


# -- the directory and acquire/release ------------------------------------------------------------------------------

class Clock(object):
    def __init__(self, now=T0):
        self.now = now

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def _dir(tmp_path):
    return rl.LockDir(str(tmp_path / "lock")).ensure()


def test_takes_refuses_then_takes_over_a_stale_lock(tmp_path):
    lock_dir, clock = _dir(tmp_path), Clock()
    first = rl.acquire(lock_dir, "run-a", OTHER, 600, clock=clock)
    assert first["acquired"] and first["state"] == rl.FREE
    assert oct(os.stat(lock_dir.path).st_mode & 0o777) == oct(0o700)
    assert oct(os.stat(os.path.join(lock_dir.path, rl.LOCK_NAME)).st_mode & 0o777) == oct(0o600)
    clock.now += 10
    second = rl.acquire(lock_dir, "run-b", ME, 600, clock=clock)
    assert not second["acquired"] and second["state"] == rl.HELD
    assert "run run-a" in second["msg"] and "ctl2" in second["msg"] and "2026-01-01T00:00:00Z" in second["msg"]
    os.utime(os.path.join(lock_dir.path, rl.LOCK_NAME), (T0, T0))
    clock.now = T0 + 601
    third = rl.acquire(lock_dir, "run-b", ME, 600, clock=clock)
    assert third["acquired"] and third["state"] == rl.STALE and third["took_over"]["run_id"] == "run-a"
    assert lock_dir.read()[0]["run_id"] == "run-b"
    assert not rl.release(lock_dir, "run-a") and rl.release(lock_dir, "run-b")
    assert lock_dir.read() == (None, None)


def test_an_unreadable_lock_is_held_for_one_lease(tmp_path):
    lock_dir, clock = _dir(tmp_path), Clock()
    path = os.path.join(lock_dir.path, rl.LOCK_NAME)
    with open(path, "w") as handle:
        handle.write("{not json")
    os.utime(path, (T0, T0))
    assert rl.acquire(lock_dir, "run-b", ME, 600, clock=clock)["state"] == rl.HELD
    clock.now += 601
    assert rl.acquire(lock_dir, "run-b", ME, 600, clock=clock)["acquired"]


@pytest.mark.parametrize("make", ["symlink", "others_write"])
def test_an_unsafe_directory_is_refused(tmp_path, make):
    target = tmp_path / "elsewhere"
    target.mkdir()
    path = tmp_path / "lock"
    if make == "symlink":
        os.symlink(str(target), str(path))
    else:
        path.mkdir()
        os.chmod(str(path), 0o777)
    with pytest.raises(rl.LockError):
        rl.LockDir(str(path)).ensure()
    assert os.listdir(str(target)) == []


def test_leftovers_of_a_killed_run_are_waited_for_then_refused(tmp_path, monkeypatch):
    lock_dir, clock = _dir(tmp_path), Clock()
    leftover = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        monkeypatch.setenv(rl.ENV_LOCK_DIR, lock_dir.path)
        lock_dir.write(_lock("run-a", controller=ME))
        rl.note_group(leftover.pid, 30, ["/usr/bin/ib_write_bw", "-d", "mlx5_0"])
        refused = rl.acquire(lock_dir, "run-b", ME, 600, stale_runs=["run-a"], leftovers_wait_s=20,
                             clock=clock, sleep=clock.sleep)
        assert not refused["acquired"] and refused["waited_s"] >= 20
        assert [n["program"] for n in refused["leftovers"]] == ["ib_write_bw"]
        assert "pgid %d (ib_write_bw of run run-a" % leftover.pid in refused["msg"]
        assert lock_dir.read() == (None, None)  # a run that refuses gives back what it took
    finally:
        leftover.kill()
        leftover.wait()
    done = rl.acquire(lock_dir, "run-b", ME, 600, stale_runs=["run-a"], leftovers_wait_s=20, clock=clock,
                      sleep=clock.sleep)
    assert done["acquired"] and done["leftovers"] == [] and lock_dir.notes() == []


def test_a_killed_runs_module_is_waited_for_between_its_rounds(tmp_path, monkeypatch):
    """The module of a killed run (here: a child that noted its tool) starts its next round's tools after these
    end: the wait goes on while it lives, up to the limit, and refuses naming it."""
    lock_dir, clock = _dir(tmp_path), Clock()
    monkeypatch.setenv(rl.ENV_LOCK_DIR, lock_dir.path)
    lock_dir.write(_lock("run-a", controller=ME))
    tool = subprocess.Popen(["sleep", "60"], start_new_session=True)
    module = subprocess.Popen(["sleep", "60"])
    rl.note_group(tool.pid, 30, ["/usr/bin/ib_write_bw"])
    path = os.path.join(lock_dir.path, rl.PROCS_DIR, "%d.json" % tool.pid)
    with open(path) as handle:
        note = json.load(handle)
    note["module_pid"] = module.pid      # the note a module in another process wrote
    with open(path, "w") as handle:
        json.dump(note, handle)
    try:
        def sleep(seconds):
            clock.sleep(seconds)
            if tool.poll() is None:   # its round ends: the tool goes, its note with it
                tool.kill()
                tool.wait()
                lock_dir.forget(tool.pid)

        out = rl.acquire(lock_dir, "run-b", ME, 600, stale_runs=["run-a"], leftovers_wait_s=45, clock=clock,
                         sleep=sleep)
        assert not out["acquired"] and out["waited_s"] >= 45
        assert "module (pid %d)" % module.pid in out["msg"] and "of run run-a" in out["msg"]
    finally:
        for proc in (tool, module):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    done = rl.acquire(lock_dir, "run-b", ME, 600, stale_runs=["run-a"], leftovers_wait_s=45, clock=clock,
                      sleep=clock.sleep)
    assert done["acquired"] and done["leftovers"] == []


# -- the module ----------------------------------------------------------------------------------------------------

def warned(monkeypatch):
    """The texts the module warns with (AnsibleModule.warn), whatever else ran in this process before."""
    texts = []
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda _self, text: texts.append(text))
    return texts


def run(monkeypatch, capsys, module, args, check_mode=False):
    return run_module(module, monkeypatch, capsys, args, check_mode=check_mode)


def test_module_check_mode_takes_no_lock(monkeypatch, capsys, tmp_path):
    path = str(tmp_path / "lock")
    result = run(monkeypatch, capsys, lock_module, {"run_id": "run-a", "dir": path, "controller": ME},
                 check_mode=True)
    assert result["changed"] is False and "check mode takes no lock" in result["msg"] and not os.path.exists(path)


def test_module_refuses_a_held_host_and_warns_on_takeover(monkeypatch, capsys, tmp_path):
    path = str(tmp_path / "lock")
    taken = run(monkeypatch, capsys, lock_module, {"run_id": "run-a", "dir": path, "controller": OTHER})
    assert taken["changed"] and taken["acquired"]
    held = run(monkeypatch, capsys, lock_module, {"run_id": "run-b", "dir": path, "controller": ME})
    assert held["failed"] and "run run-a" in held["msg"] and "pid 99 of ansible-playbook on ctl2" in held["msg"]
    warnings = warned(monkeypatch)
    over = run(monkeypatch, capsys, lock_module, {"run_id": "run-b", "dir": path, "controller": ME,
                                                  "stale_runs": ["run-a"]})
    assert over["acquired"] and over["took_over"]["run_id"] == "run-a"
    assert any("took over the stale lock of run run-a" in w for w in warnings)
    released = run(monkeypatch, capsys, lock_module, {"run_id": "run-b", "dir": path, "state": "absent"})
    assert released["changed"] and released["released"]


# -- the governors a killed module saved -----------------------------------------------------------------------------

def _governors(root):
    return [cg.read_cpus(root)["cpu%d" % n]["governor"] for n in range(3)]


def test_a_killed_modules_governors_are_put_back(monkeypatch, capsys, tmp_path):
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [], cpus=["powersave", "performance", "ondemand"])
    state = _dir(tmp_path).path
    hold = cg.GovernorHold("performance", root, "host", state_dir=state)
    hold.take()
    assert _governors(root) == ["performance"] * 3
    # killed here: release() never runs; a second module of the run, killed too, must not save "performance"
    cg.GovernorHold("performance", root, "host", state_dir=state).take()
    warnings = warned(monkeypatch)
    result = run(monkeypatch, capsys, governor_module, {"restore_saved": state, "sysfs_root": root})
    assert result["changed"] and result["restored_saved"] == {"cpu0": "powersave", "cpu2": "ondemand"}
    assert any("killed" in w for w in warnings)
    assert _governors(root) == ["powersave", "performance", "ondemand"]
    again = run(monkeypatch, capsys, governor_module, {"restore_saved": state, "sysfs_root": root})
    assert again["changed"] is False and again["restored_saved"] == {}


def test_a_hold_that_ends_leaves_nothing_saved(tmp_path):
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [], cpus=["powersave", "performance", "ondemand"])
    state = _dir(tmp_path).path
    hold = cg.GovernorHold("performance", root, "host", state_dir=state)
    hold.take()
    assert cg.load_state(state)["previous"] == {"cpu0": "powersave", "cpu2": "ondemand"}
    hold.release()
    assert cg.load_state(state) is None and _governors(root) == ["powersave", "performance", "ondemand"]
