# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runner notes a process found stopped or wedged in the kernel at its deadline (issue 14: a hung side)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import sys
import time

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import runner
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import side_runner

STOP_SELF = "import os, signal; os.kill(os.getpid(), signal.SIGSTOP)"


def fake_proc(tmp_path, procs):
    """A /proc with one ``stat`` per (pid, comm, state, pgrp)."""
    for pid, comm, state, pgrp in procs:
        (tmp_path / str(pid)).mkdir()
        line = "%d (%s) %s 1 %d %d 0 -1 4194560 0\n" % (pid, comm, state, pgrp, pgrp)
        (tmp_path / str(pid) / "stat").write_text(line)
    (tmp_path / "self").mkdir()
    return str(tmp_path)


def test_group_stuck_reads_the_states_of_the_group_only(tmp_path):
    root = fake_proc(tmp_path, [(100, "timeout", "S", 100), (101, "ib_write_bw", "T", 100),
                                (200, "other", "D", 200), (300, "a (b) c", "D", 300)])
    assert runner.group_stuck(100, root) == "stopped"
    assert runner.group_stuck(200, root) == "stuck in the kernel (uninterruptible sleep)"
    # a command name with spaces and parentheses is read after its last ')'
    assert runner.group_stuck(300, root) == "stuck in the kernel (uninterruptible sleep)"
    assert runner.group_stuck(999, root) is None


def test_group_stuck_is_none_when_every_process_waits_or_runs(tmp_path):
    root = fake_proc(tmp_path, [(100, "timeout", "S", 100), (101, "ib_write_bw", "R", 100),
                                (102, "zombie", "Z", 100)])
    assert runner.group_stuck(100, root) is None
    assert runner.group_stuck(100, str(tmp_path / "no-proc-here")) is None


def _state(pid):
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def test_a_stopped_process_is_stuck_at_its_deadline(wait_until):
    job = runner.HostTransport().start([sys.executable, "-c", STOP_SELF], 600)
    try:
        # wait for the event (the process stopped itself), then bring its deadline forward: no timing involved
        assert wait_until(lambda: any(_state(int(pid)) == "T" for pid in os.listdir("/proc")
                                      if pid.isdigit() and runner._stat_fields("/proc/%s/stat" % pid)
                                      and runner._stat_fields("/proc/%s/stat" % pid)[1] == job.pid))
        job.deadline = time.monotonic()
        assert job.poll() is not None
        result = job.result()
    finally:
        job.stop()
    assert result["timed_out"] and result["stuck"] == "stopped"
    # and the side as the modules return it keeps it, for side_outcome
    side = side_runner.side_result({"role": "client"}, result["cmd"], result)
    assert side["stuck"] == "stopped"


def test_a_process_that_only_waits_is_not_stuck(wait_until):
    job = runner.HostTransport().start([sys.executable, "-c", "import time; time.sleep(600)"], 600)
    try:
        assert wait_until(lambda: runner.group_stuck(job.pid) is None and _state(job.pid) == "S")
        job.deadline = time.monotonic()
        job.poll()
        result = job.result()
    finally:
        job.stop()
    assert result["timed_out"] and "stuck" not in result
    assert "stuck" not in side_runner.side_result({"role": "server"}, result["cmd"], result)
