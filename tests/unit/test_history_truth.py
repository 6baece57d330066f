# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A history that tells the truth (issue 39): no half line after a failed append, nothing lost without a word,
a run stopped by a failed task recorded as interrupted with its cause, and no worker left behind."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import errno
import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from ansible_collections.clusterops.commcheck.plugins.action import check_outputs
from ansible_collections.clusterops.commcheck.plugins.callback import commcheck_history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history_state
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history_summary as ending
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history_write
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.writable import dir_write_problem

UTC = datetime.timezone.utc
WHEN = datetime.datetime(2026, 3, 1, 2, 0, 0, tzinfo=UTC)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTIONS = os.path.join(REPO, ".build", "collections")


def _rec(kind="rdma_bw", host="a", verdict="pass", pad=""):
    return {"kind": kind, "host": host, "peer": "b", "params": {"op": "write", "pad": pad},
            "metrics": {"bw_gbps": 9.5}, "verdict": verdict, "cause": None, "fix": None, "evidence": []}


class _FailingOs(object):
    """``os`` as history_write sees it, with one call made to fail the way a full disk or a dying disk fails."""

    def __init__(self, fail_write_after=None, fsync_error=None, truncate_error=None, full_dir=None):
        self.fail_write_after = fail_write_after     # bytes the disk still takes, then ENOSPC
        self.fsync_error = fsync_error
        self.truncate_error = truncate_error
        self.full_dir = full_dir                     # only files in this directory are on the full disk
        self.full_fds = set()
        self.taken = 0

    def __getattr__(self, name):
        return getattr(os, name)

    def open(self, path, *args):
        fd = os.open(path, *args)
        if self.full_dir is None or os.path.dirname(path) == self.full_dir:
            self.full_fds.add(fd)
        return fd

    def close(self, fd):
        self.full_fds.discard(fd)
        return os.close(fd)

    def write(self, fd, data):
        if self.fail_write_after is None or fd not in self.full_fds:
            return os.write(fd, data)
        room = self.fail_write_after - self.taken
        if room <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written = os.write(fd, bytes(data[:room]))
        self.taken += written
        return written

    def fsync(self, fd):
        if self.fsync_error and fd in self.full_fds:
            raise OSError(self.fsync_error, os.strerror(self.fsync_error))
        return os.fsync(fd)

    def ftruncate(self, fd, size):
        if self.truncate_error:
            raise OSError(self.truncate_error, os.strerror(self.truncate_error))
        return os.ftruncate(fd, size)


# ---------------------------------------------------------------- the writer: whole lines or none

@pytest.mark.parametrize("failing", [
    _FailingOs(fail_write_after=100),          # half of the first line goes in, then the disk is full
    _FailingOs(fail_write_after=0),            # nothing goes in
    _FailingOs(fsync_error=errno.EIO),         # everything goes in, then the disk cannot keep it
], ids=["half-a-line", "no-room", "fsync-fails"])
def test_a_failed_append_cuts_the_file_back_to_what_it_was(tmp_path, monkeypatch, failing):
    history.append_records(str(tmp_path), [_rec(host="before")], "r0", when=WHEN)
    path = history.history_file(str(tmp_path), WHEN)
    before = open(path, "rb").read()
    monkeypatch.setattr(history_write, "os", failing)
    with pytest.raises(history.AppendError) as caught:
        history.append_records(str(tmp_path), [_rec(pad="x" * 400), _rec(kind="tcp_bw")], "r1", when=WHEN)
    assert open(path, "rb").read() == before
    assert caught.value.lines == 2 and caught.value.path == path and not caught.value.torn
    assert caught.value.errno in (errno.ENOSPC, errno.EIO)
    monkeypatch.undo()
    history.append_records(str(tmp_path), [_rec(host="after")], "r2", when=WHEN)   # room again: whole lines
    report = history.ReadReport()
    assert [r["host"] for r in history.query(str(tmp_path), report=report)] == ["before", "after"]
    assert report.problems == []


def test_a_torn_line_of_a_dead_writer_is_left_as_it_was_when_the_append_after_it_fails(tmp_path, monkeypatch):
    path = history.history_file(str(tmp_path), WHEN)
    with open(path, "wb") as handle:
        handle.write(b'{"schema":1,"run_id":"dead","ti')        # a writer killed mid-line
    monkeypatch.setattr(history_write, "os", _FailingOs(fail_write_after=10))
    with pytest.raises(history.AppendError):
        history.append_records(str(tmp_path), [_rec()], "r1", when=WHEN)
    assert open(path, "rb").read() == b'{"schema":1,"run_id":"dead","ti'


def test_when_the_cut_fails_too_the_error_says_a_part_may_be_left(tmp_path, monkeypatch):
    monkeypatch.setattr(history_write, "os", _FailingOs(fail_write_after=20, truncate_error=errno.EROFS))
    with pytest.raises(history.AppendError) as caught:
        history.append_records(str(tmp_path), [_rec()], "r1", when=WHEN)
    assert caught.value.torn and "a part of a line may be left" in str(caught.value)


def test_a_write_past_the_file_size_limit_of_the_kernel_leaves_no_half_line(tmp_path):
    """A real failing write, no stand-in: RLIMIT_FSIZE lets the kernel take part of the lines and refuse the rest
    (EFBIG), as a full disk does."""
    script = textwrap.dedent("""
        import resource, signal, sys
        sys.path.insert(0, %(collections)r)
        from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
        directory, limit = sys.argv[1], int(sys.argv[2])
        history.append_records(directory, [{"kind": "discover", "host": "h1", "verdict": "pass"}], "r1")
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        try:
            history.append_records(directory, [{"kind": "rdma_bw", "host": "h%%d" %% n, "verdict": "pass",
                                                "params": {"pad": "x" * 300}} for n in range(10)], "r1")
        except history.AppendError as exc:
            print("LOST %%d %%s" %% (exc.lines, exc.torn))
    """) % {"collections": COLLECTIONS}
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path), "1500"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["LOST", "10", "False"]
    [name] = os.listdir(str(tmp_path))
    text = open(os.path.join(str(tmp_path), name)).read()
    assert text.endswith("\n") and [json.loads(line)["host"] for line in text.splitlines()] == ["h1"]


# ---------------------------------------------------------------- the callback: nothing lost without a word

class _Display(object):
    def __init__(self):
        self.warnings, self.errors, self.lines = [], [], []

    def warning(self, message):
        self.warnings.append(message)

    def error(self, message):
        self.errors.append(message)

    def display(self, message, **_kwargs):
        self.lines.append(message)

    def vvv(self, _message):
        pass


class _Named(object):
    def __init__(self, name, **attrs):
        self.name = name
        self.no_log = False
        self.__dict__.update(attrs)

    def get_name(self):
        return self.name


class _Result(object):
    def __init__(self, data, host="h1", task="task", run_once=False):
        self._result = data
        self._host = _Named(host)
        self._task = _Named(task)
        self._task_fields = {"run_once": run_once}


class _Stats(object):
    def __init__(self, hosts, failures=(), dark=(), custom=None):
        self.processed = dict((h, 1) for h in hosts)
        self.failures = dict((h, 1) for h in failures)
        self.dark = dict((h, 1) for h in dark)
        self.custom = {"_run": custom} if custom else {}


def _callback(tmp_path, spill):
    callback = commcheck_history.CallbackModule()
    callback._plugin_options = {"write_summary": True, "fsync": False, "run_id": "r1"}
    callback._dir, callback._fsync, callback._spill_dir = str(tmp_path / "history"), False, str(spill)
    callback._display = _Display()
    callback._stop_workers = lambda signum: []
    callback._publish_state(callback._dir)
    callback.v2_playbook_on_play_start(_Named("play", get_variable_manager=lambda: _Named("vm", extra_vars={})))
    return callback


def _records(*kinds):
    return _Result({"commcheck_records": [_rec(kind=kind, host="h%d" % n) for n, kind in enumerate(kinds)]})


def _history_lines(directory):
    return [json.loads(line) for name in sorted(os.listdir(directory))
            for line in open(os.path.join(directory, name)).read().splitlines()]


def test_lines_the_disk_cannot_take_are_counted_kept_aside_and_told_at_the_end(tmp_path, monkeypatch):
    spill = tmp_path / "spill"
    callback = _callback(tmp_path, spill)
    callback.v2_runner_on_ok(_records("discover", "finding"))
    disk = _FailingOs(fail_write_after=300, full_dir=str(tmp_path / "history"))
    monkeypatch.setattr(history_write, "os", disk)
    callback.v2_runner_on_ok(_records("rdma_bw", "rdma_bw", "rdma_lat"))
    callback.v2_runner_on_ok(_records("tcp_bw"))
    # one warning when it first happens, naming the spill file
    assert len(callback._display.warnings) == 1 and "kept in %s" % spill in callback._display.warnings[0]
    # the play's last task fails, naming what was lost (the state is read as the main process has it)
    result = _run_check_outputs("end")
    assert result["failed"] and "4 record(s) (rdma_bw 2, rdma_lat 1, tcp_bw 1)" in result["msg"]
    assert result["history"]["records_written"] == 2 and result["history"]["records_not_written"] == 4
    callback.v2_playbook_on_stats(_Stats(["h1"]))
    [error] = callback._display.errors
    assert "4 record(s) (rdma_bw 2, rdma_lat 1, tcp_bw 1) and the summary line could not be written" in error
    assert "No space left on device" in error and "they are kept in %s" % spill in error
    # the history holds whole lines only; the spill file holds exactly the rest, summary included
    monkeypatch.undo()
    assert [r["kind"] for r in _history_lines(str(tmp_path / "history"))] == ["discover", "finding"]
    kept = _history_lines(str(spill))
    assert [r["kind"] for r in kept] == ["rdma_bw", "rdma_bw", "rdma_lat", "tcp_bw", "summary"]
    assert kept[-1]["history"]["not_written"] == {"rdma_bw": 2, "rdma_lat": 1, "tcp_bw": 1}
    assert oct(os.stat(callback._writer_state().spill).st_mode & 0o777) == "0o600"


def test_a_run_whose_lines_were_all_written_passes_the_end_step(tmp_path):
    callback = _callback(tmp_path, tmp_path / "spill")
    callback.v2_runner_on_ok(_records("discover"))
    result = _run_check_outputs("end")
    assert not result.get("failed") and result["history"]["records_written"] == 1
    callback.v2_playbook_on_stats(_Stats(["h1"]))
    assert callback._display.errors == [] and not (tmp_path / "spill").exists()


def _run_check_outputs(step, report_dir=None, check_mode=False):
    from unittest import mock  # pylint: disable=import-outside-toplevel

    task = mock.MagicMock()
    task.args = dict(step=step, **({"report_dir": report_dir} if report_dir else {}))
    task.check_mode = check_mode
    task.async_val = 0
    action = check_outputs.ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None,
                                        shared_loader_obj=None)
    return action.run(task_vars={})


def test_the_start_step_refuses_a_report_directory_it_cannot_write_and_names_it(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    result = _run_check_outputs("start", report_dir=str(blocker / "reports"))
    assert result["failed"] and "nothing was run" in result["msg"]
    assert "commcheck_report_dir %s cannot be written" % (blocker / "reports") in result["msg"]
    assert not _run_check_outputs("start", report_dir=str(tmp_path / "new" / "reports")).get("failed")
    assert not (tmp_path / "new").exists()            # checked in its nearest parent, nothing made


def test_the_write_probe_asks_the_file_system_not_the_permission_bits(tmp_path):
    # root may write anywhere by its permission bits; /proc refuses new files all the same
    assert dir_write_problem("/proc/self") is not None
    assert dir_write_problem(str(tmp_path)) is None and os.listdir(str(tmp_path)) == []


# ---------------------------------------------------------------- how a run ended

def test_a_task_that_failed_for_every_host_left_ends_the_run_interrupted_with_its_cause(tmp_path):
    callback = _callback(tmp_path, tmp_path / "spill")
    callback.v2_runner_on_ok(_records("rdma_bw", "tcp_bw"))
    failed = _Result({"msg": "report_dir /r: [Errno 30] Read-only file system: " + "x" * 2000,
                      "_ansible_delegated_vars": {"ansible_delegated_host": "localhost"}},
                     host="h1", task="Write the report of this run", run_once=True)
    callback.v2_runner_on_failed(failed)
    callback.v2_playbook_on_stats(_Stats(["h1", "h2"], failures=["h1"]))
    [summary] = [r for r in _history_lines(str(tmp_path / "history")) if r["kind"] == "summary"]
    assert summary["verdict"] == "interrupted" and summary["interrupted"] is True and summary["signal"] is None
    assert summary["partial_verdict"] == "pass"
    assert summary["cause"].startswith("the run stopped at the failed task 'Write the report of this run' on "
                                       "localhost (for h1): report_dir /r: [Errno 30] Read-only file system")
    assert len(summary["failed_task"]["message"]) < ending.MESSAGE_LIMIT + 40
    # the controller's error is not the host's: h1 ran everything it was given
    assert summary["hosts"] == {"ok": ["h1", "h2"], "failed": [], "unreachable": []}
    [run] = history.list_runs(str(tmp_path / "history"))
    assert run["status"] == "interrupted"
    assert callback._display.lines == [
        "commcheck_history: run r1 stopped at the failed task 'Write the report of this run': 2 record(s) and its "
        "summary (interrupted) are in %s" % run_file(tmp_path)]


def run_file(tmp_path):
    [name] = os.listdir(str(tmp_path / "history"))
    return os.path.join(str(tmp_path / "history"), name)


ONCE = ending.task_failure("Write the report", "h1", "read-only", delegated_to="localhost", run_once=True)
EVERY = dict(ending.task_failure("Discover", "h1", "no sysfs"), hosts=["h1", "h2"])


@pytest.mark.parametrize("last, went_on, failed_hosts, reported, stopped", [
    (ONCE, False, {"h1"}, False, True),      # a run-once task failed: every host fails, the play stops
    (EVERY, False, {"h1", "h2"}, False, True),  # every host that ran the task failed it: none is left
    (EVERY, True, {"h1", "h2"}, False, False),  # another host went on past it (ok or skipped): the run went on
    (ONCE, False, set(), False, False),      # a rescue handled it: Ansible does not count the host failed
    (ONCE, False, {"h1"}, True, False),      # after the report published its summary: the verdict's failure
    (None, False, {"h1"}, False, False),     # no task failed (a host failed by being unreachable only)
], ids=["run-once", "every-host", "went-on", "rescued", "after-the-report", "no-failure"])
def test_the_failed_task_that_stopped_the_run(last, went_on, failed_hosts, reported, stopped):
    assert ending.stopping_failure(last, went_on, failed_hosts, reported) == (last if stopped else None)


def test_a_host_that_failed_the_last_task_while_others_skipped_it_fails_a_complete_run(tmp_path):
    callback = _callback(tmp_path, tmp_path / "spill")
    callback.v2_runner_on_ok(_records("discover"))
    callback.v2_runner_on_skipped(_Result({}, host="h1", task="Last"))
    callback.v2_runner_on_failed(_Result({"msg": "boom"}, host="h2", task="Last"))
    callback.v2_playbook_on_stats(_Stats(["h1", "h2"], failures=["h2"]))
    [run] = history.list_runs(str(tmp_path / "history"))
    assert run["status"] == "complete" and run["summary"]["verdict"] == "fail"
    assert run["summary"]["hosts"] == {"ok": ["h1"], "failed": ["h2"], "unreachable": []}


def test_a_host_is_listed_failed_only_for_a_task_of_its_own():
    own = ending.task_failure("Discover", "h2", "rdma_facts failed")
    delegated = ending.task_failure("Report", "h1", "read-only", delegated_to="localhost")
    once = ending.task_failure("Check options", "h3", "bad option", run_once=True)
    assert [ending.blames_host(f) for f in (own, delegated, once)] == [True, False, False]
    assert ending.split_hosts(["h1", "h2", "h3", "h4"], ["h1", "h2", "h3"], ["h4"], {"h2"}) == (
        ["h1", "h3"], ["h2"], ["h4"])
    both = ending.add_failure(ending.add_failure(None, own), ending.task_failure("Discover", "h3", "also"))
    assert both["hosts"] == ["h2", "h3"] and both["message"] == "rdma_facts failed"
    assert ending.add_failure(both, delegated)["task"] == "Report"


def test_a_verdict_failure_after_the_report_leaves_the_run_complete(tmp_path):
    callback = _callback(tmp_path, tmp_path / "spill")
    callback.v2_runner_on_ok(_records("rdma_bw"))
    callback.v2_runner_on_failed(_Result({"msg": "commcheck run r1: 1 failed"}, task="Fail when the run failed",
                                         run_once=True))
    callback.v2_playbook_on_stats(_Stats(["h1"], failures=["h1"], custom={"commcheck_summary": {"verdict": "fail"}}))
    [run] = history.list_runs(str(tmp_path / "history"))
    assert run["status"] == "complete" and run["summary"]["verdict"] == "pass"
    assert callback._display.lines == []


def test_a_signal_prints_one_line_with_why_and_where(tmp_path):
    callback = _callback(tmp_path, tmp_path / "spill")
    stopped = []
    callback._stop_workers = stopped.append
    callback._previous_handlers = {signal.SIGHUP: lambda signum, frame: None}
    callback.v2_runner_on_ok(_records("rdma_bw", "rdma_lat"))
    callback._on_signal(signal.SIGHUP, None)
    assert stopped == [signal.SIGTERM]           # the workers are stopped, as Ansible does on SIGTERM
    assert callback._display.lines == [
        "commcheck_history: run r1 stopped by SIGHUP: 2 record(s) and its summary (interrupted) are in %s"
        % run_file(tmp_path)]
    off = history_state.WriterState(None, "the history is off: COMMCHECK_HISTORY_DIR is empty")
    assert off.stopped_line("r2", "stopped by SIGTERM") == (
        "run r2 stopped by SIGTERM: no record was kept (the history is off: COMMCHECK_HISTORY_DIR is empty)")


# ---------------------------------------------------------------- no worker outlives the controller

CONTROLLER = textwrap.dedent("""
    import multiprocessing, os, sys, time
    sys.path.insert(0, %(collections)r)
    from ansible_collections.clusterops.commcheck.plugins.plugin_utils import controller_signals
    if sys.argv[1] == "guard":
        controller_signals.workers_end_with_controller()
    def work():
        time.sleep(600)
    worker = multiprocessing.get_context("fork").Process(target=work)
    worker.start()
    print(worker.pid, flush=True)
    if sys.argv[1] == "stop":
        controller_signals.stop_workers()
        worker.join(60)
        print("exit", worker.exitcode, flush=True)
    time.sleep(600)
""") % {"collections": COLLECTIONS}


def _gone(pid):
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
@pytest.mark.parametrize("guard", [True, False], ids=["guarded", "unguarded"])
def test_a_worker_ends_when_its_controller_is_killed_outright(guard, wait_until):
    controller = subprocess.Popen([sys.executable, "-c", CONTROLLER, "guard" if guard else "plain"],
                                  stdout=subprocess.PIPE, text=True)
    worker = int(controller.stdout.readline())
    try:
        controller.kill()
        controller.wait(60)
        # unguarded, Ansible's case: the worker stays (until killed here); guarded, it goes
        assert bool(wait_until(lambda: _gone(worker), within=60 if guard else 2)) is guard
    finally:
        if not _gone(worker):
            os.kill(worker, signal.SIGKILL)


def test_stop_workers_stops_the_children_multiprocessing_started():
    controller = subprocess.Popen([sys.executable, "-c", CONTROLLER, "stop"], stdout=subprocess.PIPE, text=True)
    try:
        int(controller.stdout.readline())
        assert controller.stdout.readline().split() == ["exit", str(-signal.SIGTERM)]
    finally:
        controller.kill()
        controller.wait(60)


def test_a_cleanup_signal_held_by_a_thread_ends_the_module_not_only_the_thread():
    """runner.py: a signal that came while a thread started a command is handled when that thread is done; it
    must end the module (the main thread), not raise SystemExit in the thread and let the module go on."""
    script = textwrap.dedent("""
        import signal, sys, threading, time
        sys.path.insert(0, %(collections)r)
        from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import runner
        runner.install_cleanup_handlers()
        def start_a_command():
            with runner._starting():           # a command is being started: the signal is held meanwhile
                signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)
                deadline = time.monotonic() + 60
                while not runner._HELD_SIGNALS and time.monotonic() < deadline:
                    time.sleep(0.01)
        threading.Thread(target=start_a_command).start()
        time.sleep(60)
        print("the module went on")
    """) % {"collections": COLLECTIONS}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 128 + signal.SIGTERM and "went on" not in proc.stdout, proc.stdout + proc.stderr


def test_the_summary_line_counts_the_runs_judgements_not_the_retests_re_measurements(tmp_path):
    """A flaky pair whose partner retest failed again: the history's summary is warn, as the report's is."""
    callback = _callback(tmp_path, tmp_path / "spill")
    first = dict(_rec(kind="rdma_lat", host="h1", verdict="flaky"), peer="h3")
    again = dict(_rec(kind="rdma_lat_retest", host="h2", verdict="fail"), peer="h1",
                 params={"retest": True, "retest_purpose": "partner"})
    callback.v2_runner_on_ok(_Result({"commcheck_records": [first, again, dict(_rec(kind="rdma_lat", host="h2"),
                                                                               peer="h3")]}))
    callback.v2_playbook_on_stats(_Stats(["h1", "h2", "h3"]))
    lines = _history_lines(str(tmp_path / "history"))
    [summary] = [r for r in lines if r["kind"] == "summary"]
    assert [r["kind"] for r in lines] == ["rdma_lat", "rdma_lat_retest", "rdma_lat", "summary"]
    assert summary["counts"] == {"flaky": 1, "pass": 1} and summary["verdict"] == "warn", summary
    assert summary["metrics"]["records"] == 3
