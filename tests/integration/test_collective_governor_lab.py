# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CPU governor held on every host of the collective check (issue 37), on the 4-host lab.

Real ansible-playbook over real SSH, real Open MPI mpirun; the ranks are the lab's nccl-tests EMULATOR, which
notes the governors of its host's emulated sysfs while it runs (a directory the test makes in each host's
``commcheck-lab/governors_seen``). The governor files, the run lock directory and the module that switches
them are real.

- a healthy run: every rank on every host ran at ``performance``; after the run each host is back at its own
  governors (they differ between hosts), and nothing is left saved in its lock directory;
- a failed collective (the collective module on the launcher killed with SIGKILL while its ranks run, as the
  OOM killer would): the role's own always-step puts every host back, not the end-of-run clean-up;
- an interrupted run (SIGINT to ansible-playbook while the ranks run): the governors stay switched and saved
  in each host's lock directory; the next run puts them back, naming the CPUs.

Each scenario is a one-click run of the collective check alone, 30-60 s on the 2-core build machine:
``pytest.mark.full``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import shutil
import signal
import time

import pytest

import oneclick_helpers as oc
from test_oneclick_lab import task_results

pytestmark = [pytest.mark.lab, pytest.mark.full,
              pytest.mark.skipif(oc.mpi_missing() is not None, reason=oc.mpi_missing() or "")]

PUT_BACK = "Put back the CPU governors of the hosts of the collective check"
# Each host starts at its own governors, so that a host put back with another's would show.
OWN = {"h1": ["ondemand", "ondemand", "powersave", "performance"],
       "h2": ["powersave", "powersave", "powersave", "powersave"],
       "h3": ["performance", "ondemand", "ondemand", "ondemand"],
       "h4": ["ondemand", "powersave", "ondemand", "powersave"]}


@pytest.fixture(scope="module")
def lab(lab4):
    return lab4


@pytest.fixture
def watched(lab):
    """Each host at its own governors, with the emulated ranks noting what they saw; undone after the test."""
    for host in lab.hosts:
        oc.set_governors(lab, OWN[host], hosts=[host])
        seen = seen_dir(lab, host)
        shutil.rmtree(seen, ignore_errors=True)
        os.makedirs(seen)
    yield lab
    for host in lab.hosts:
        shutil.rmtree(seen_dir(lab, host), ignore_errors=True)
        saved = os.path.join(lab.dir, "lock", host, "governor.json")
        if os.path.exists(saved):
            os.unlink(saved)
    oc.set_governors(lab, oc.GOVERNORS)


def seen_dir(lab, host):
    return os.path.join(lab.dir, "sysfs", host, "commcheck-lab", "governors_seen")


def seen_by_ranks(lab):
    """{host: [governors each rank on it noted]} (the emulator's notes)."""
    out = {}
    for host in lab.hosts:
        for name in sorted(os.listdir(seen_dir(lab, host))):
            with open(os.path.join(seen_dir(lab, host), name)) as handle:
                out.setdefault(host, []).append(json.load(handle)["governors"])
    return out


def saved_note(lab, host):
    try:
        with open(os.path.join(lab.dir, "lock", host, "governor.json")) as handle:
            return json.load(handle)
    except (IOError, OSError):
        return None


def collective_vars(lab):
    return dict(oc.COLLECTIVE, commcheck_checks=["collective"], commcheck_require_accelerators=False,
                commcheck_collective_binary_dir=oc.collective_bin("nccl"),
                commcheck_collective_expected_busbw_gbs=0.001)


def start_while_ranks_run(lab, tmp_path, wait_until, name, extra=None):
    """A one-click collective run, started; returns it once a rank on every host has noted its governors."""
    variables = collective_vars(lab)
    variables.update(extra or {})
    proc, history, report = oc.start_oneclick(lab, tmp_path, variables, name=name)
    noted = wait_until(lambda: proc.poll() is not None or len(seen_by_ranks(lab)) == len(lab.hosts),
                       within=600, every=0.2)
    assert proc.poll() is None and noted, open(proc.log_path).read()[-4000:]
    return proc, history, report


def assert_back_to_their_own(lab):
    assert dict((host, oc.governors(lab, host)) for host in lab.hosts) == dict((h, OWN[h]) for h in lab.hosts)


def test_every_host_runs_the_collective_at_performance_and_gets_its_own_back(watched, tmp_path):
    lab = watched
    run = oc.oneclick(lab, tmp_path, collective_vars(lab), name="held")
    assert run.rc == 0, run.tail()
    assert [r["verdict"] for r in run.records("collective")] == ["pass"], run.tail()
    # the record says every host of the run held the governor
    assert run.records("collective")[0]["params"]["cpu_governor"] == {
        "governor": "performance", "held": lab.hosts, "unmanaged": [], "not_held": []}
    seen = seen_by_ranks(lab)
    assert sorted(seen) == sorted(lab.hosts), seen
    assert all(governors == ["performance"] * 4 for notes in seen.values() for governors in notes), seen
    assert_back_to_their_own(lab)
    assert [saved_note(lab, host) for host in lab.hosts] == [None] * len(lab.hosts)
    assert "did not put back the CPU governor" not in run.output


def test_a_failed_collective_puts_every_host_back(watched, tmp_path, wait_until):
    lab = watched
    proc, history, report = start_while_ranks_run(lab, tmp_path, wait_until, "failed")
    launcher = lab.hosts[0]
    mpirun = [pid for pid, host in oc.tool_processes(lab, "mpirun").items() if host == launcher]
    assert mpirun, open(proc.log_path).read()[-4000:]
    module = module_above(mpirun[0])
    assert all(oc.governors(lab, host) == ["performance"] * 4 for host in lab.hosts)
    os.kill(module, signal.SIGKILL)
    run = oc.finish(proc, history, report, time.monotonic())
    assert task_results(run.output, PUT_BACK) == {"changed"}, run.tail()
    assert_back_to_their_own(lab)
    # the collective role's always-step put them back, before the run's end had anything left to do
    assert "did not put back the CPU governor" not in run.output, run.tail()
    assert [saved_note(lab, host) for host in lab.hosts] == [None] * len(lab.hosts)
    assert oc.wait_no_test_processes(lab, timeout=120) == []


def test_an_interrupted_run_is_put_back_by_the_next(watched, tmp_path, wait_until):
    lab = watched
    proc, _history, _report = start_while_ranks_run(lab, tmp_path, wait_until, "interrupted")
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=120)
    assert oc.wait_no_test_processes(lab, timeout=300) == []
    # no always-step runs after an interrupt: the CPUs stay switched, their own governors kept in the lock dir
    assert all(oc.governors(lab, host) == ["performance"] * 4 for host in lab.hosts)
    assert saved_note(lab, "h2")["previous"] == dict(("cpu%d" % n, "powersave") for n in range(4))
    run = oc.oneclick(lab, tmp_path, {"commcheck_checks": ["discover"]}, name="next")
    assert run.rc == 0, run.tail()
    assert_back_to_their_own(lab)
    assert "did not put back the CPU governor" in run.output, run.tail()
    assert [saved_note(lab, host) for host in lab.hosts] == [None] * len(lab.hosts)


def module_above(pid):
    """The module process (python) that started process ``pid`` (mpirun)."""
    for _level in range(4):
        with open("/proc/%d/status" % pid) as handle:
            pid = int(handle.read().split("PPid:")[1].split()[0])
        with open("/proc/%d/cmdline" % pid) as handle:
            if "python" in handle.read():
                return pid
    raise AssertionError("no python module process above mpirun")
