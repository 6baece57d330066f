# -*- coding: utf-8 -*-
"""Work in a forked child beside the caller's (plugin_utils/work_beside.py): what it raised is raised again, and
no child outlives its caller."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.history_records import RecordError
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import work_beside

COLLECTIONS = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".build", "collections"))
# how long a test waits for a process to end before it fails: the event, not a guess of its time
WIDE_DEADLINE_S = 120


def _gone(pid):
    """True when ``pid`` no longer runs (ended, or a zombie nobody reaps)."""
    try:
        with open("/proc/%d/status" % pid) as handle:
            return any(line.startswith("State:") and "Z" in line.split()[1] for line in handle)
    except FileNotFoundError:
        return True


def _wait_gone(pid):
    deadline = time.monotonic() + WIDE_DEADLINE_S
    while not _gone(pid):
        assert time.monotonic() < deadline, "process %d still runs" % pid
        time.sleep(0.05)


def test_the_work_runs_in_another_process_while_the_block_runs(tmp_path):
    mark = tmp_path / "child"
    read_fd, write_fd = os.pipe()

    def work():
        # waits for the block: the child and the block run at the same time
        os.read(read_fd, 1)
        mark.write_text(str(os.getpid()))

    with work_beside.beside(work, "noting") as child:
        os.write(write_fd, b"x")
    assert int(mark.read_text()) == child.pid != os.getpid()
    assert _gone(child.pid)


def test_what_the_child_returned_is_the_value_whatever_its_size():
    # larger than a pipe's buffer: the child's writes wait for the parent's reads
    big = {"hosts": ["gpu-%05d" % i for i in range(200000)], "nested": [{"rail": 3, "gbps": 1.5}]}
    with work_beside.beside(lambda: big, "returning") as child:
        pass
    assert child.value == big
    assert work_beside.start(lambda: None, "nothing").wait() is None


@pytest.mark.parametrize("failure", [RecordError("line 3: no kind"), OSError(28, "No space left on device")])
def test_what_the_child_raised_is_raised_again_as_it_was(failure):
    def work():
        raise failure

    with pytest.raises(type(failure)) as raised:
        with work_beside.beside(work, "writing"):
            pass
    assert type(raised.value) is type(failure) and str(raised.value) == str(failure)


def test_an_exception_that_cannot_cross_is_named_with_its_message():
    class Local(Exception):  # a class local to a function cannot be pickled
        pass

    def work():
        raise Local("the disk is gone")

    with pytest.raises(work_beside.ChildFailed, match="writing: Local: the disk is gone"):
        with work_beside.beside(work, "writing"):
            pass


def test_a_child_killed_by_a_signal_is_an_os_error():
    with pytest.raises(OSError, match="rendering x: the child process was ended by signal 9"):
        with work_beside.beside(lambda: os.kill(os.getpid(), signal.SIGKILL), "rendering x"):
            pass


def test_a_block_that_fails_stops_and_reaps_the_child_and_its_failure_goes_on():
    read_fd, _write_fd = os.pipe()
    with pytest.raises(KeyError, match="the block's"):
        with work_beside.beside(lambda: os.read(read_fd, 1), "waiting") as child:
            raise KeyError("the block's")
    with pytest.raises(ChildProcessError):  # reaped already: no zombie left
        os.waitpid(child.pid, os.WNOHANG)


def test_the_child_of_a_caller_killed_outright_ends_too(tmp_path):
    """Ansible kills a worker it interrupts: the report's child must not write on after it."""
    pid_file = tmp_path / "child.pid"
    script = textwrap.dedent("""
        import os, signal, sys
        sys.path.insert(0, %r)
        from ansible_collections.clusterops.commcheck.plugins.plugin_utils import work_beside
        told, tell = os.pipe()
        never, _kept = os.pipe()
        def work():
            os.write(tell, str(os.getpid()).encode())
            os.read(never, 1)  # the child holds the write end too: nothing but a signal ends this
        work_beside.start(work, "waiting")
        with open(%r, "w") as handle:
            handle.write(os.read(told, 32).decode())
        os.kill(os.getpid(), signal.SIGKILL)
    """) % (COLLECTIONS, str(pid_file))
    proc = subprocess.run([sys.executable, "-c", script], timeout=WIDE_DEADLINE_S, check=False)
    assert proc.returncode == -signal.SIGKILL
    child = int(pid_file.read_text())
    try:
        _wait_gone(child)
    finally:
        if not _gone(child):
            os.kill(child, signal.SIGKILL)


def test_a_spare_cpu_is_one_beside_the_callers(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    assert work_beside.spare_cpus() == 1 and work_beside.can_fork()
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {3}, raising=False)
    assert work_beside.spare_cpus() == 0 and not work_beside.can_fork()
