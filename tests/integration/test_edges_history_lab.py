# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A history that tells the truth at the edges (issue 39), on the lab (4 hosts, real ssh).

- a report directory on a read-only mount: refused before anything runs, the error names
  commcheck_report_dir, the summary is ``interrupted`` with the failed task in its cause;
- a report directory that turns read-only while the tests run (the controller's error after the
  tests): the run is ``interrupted`` with the report task in its cause, no host is blamed;
- a full history disk (a small tmpfs, nearly full): no torn line, the end of the run says what was
  not written and where it is kept, ansible-playbook exits non-zero, and the spill file makes the
  run whole again;
- SIGHUP while perftest runs: one line says why the run stopped and where its records are, no
  ansible-playbook process is left, the lab is clean and the governors restored, the summary is
  ``interrupted`` by SIGHUP.

Each is one short run on the lab the reliability tests share; the full disk's is in the full tier (make test's
15 minutes).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import collections
import contextlib
import glob
import json
import os
import re
import signal
import subprocess

import pytest

import oneclick_helpers as oc
from lab_checks import assert_nothing_left, read_history

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history

pytestmark = pytest.mark.lab

SPILL_ENV = "COMMCHECK_HISTORY_SPILL_DIR"
CHEAP = {"commcheck_checks": ["discover", "rdma"], "commcheck_rdma_metrics": ["bw"], "commcheck_cpu_governor": ""}


@pytest.fixture(scope="module")
def lab(lab_factory):
    return lab_factory("ocrel", hosts=4, rails=1)


@contextlib.contextmanager
def tmpfs(path, size, read_only=False):
    """A small tmpfs mounted at path for the test (a full disk, a read-only mount), unmounted afterwards."""
    os.makedirs(str(path), exist_ok=True)
    options = "size=%s,mode=0755%s" % (size, ",ro" if read_only else "")
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "commcheck-test", str(path)], check=True)
    try:
        yield str(path)
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill_leaving(path, free_bytes):
    """Fill the file system of path with one file until about free_bytes are left; return what is left."""
    stat = os.statvfs(path)
    room = stat.f_bavail * stat.f_frsize - free_bytes
    with open(os.path.join(path, "filler"), "wb") as handle:
        while room > 0:
            chunk = min(room, 1 << 20)
            handle.write(b"\0" * chunk)
            room -= chunk
    stat = os.statvfs(path)
    return stat.f_bavail * stat.f_frsize


def stop_lines(output, how):
    return [line for line in output.splitlines() if line.startswith("commcheck_history: run ") and how in line]


def test_a_read_only_report_directory_is_refused_before_anything_runs(lab, tmp_path):
    with tmpfs(tmp_path / "rofs", "64k", read_only=True) as read_only:
        report_dir = os.path.join(read_only, "reports")
        run = oc.oneclick(lab, tmp_path, dict(CHEAP, commcheck_report_dir=report_dir), name="ro")
    assert run.rc != 0, run.tail()
    assert "commcheck_report_dir %s cannot be written" % report_dir in run.output, run.tail()
    assert "Read-only file system" in run.output
    # nothing ran: no discovery, no test, no record; the run is interrupted by that task, and says so
    assert run.records() == [], run.records()
    assert not oc.leftover_test_processes(lab)
    summary = run.summary()
    # refused before any check ran: nothing was checked (an error), the failed task is its cause
    assert summary["verdict"] == "error" and summary["interrupted"] is True and summary["signal"] is None, summary
    assert summary["failed_task"]["task"].endswith("Check that the report and the history can be written before anything runs")
    assert "Read-only file system" in summary["cause"] and "nothing was run" in summary["cause"]
    assert summary["hosts"]["failed"] == [], summary["hosts"]
    [run_listed] = history.list_runs(os.path.join(str(tmp_path), "ro", "history"))
    assert run_listed["status"] == "interrupted"
    assert len(stop_lines(run.output, "stopped at the failed task")) == 1, run.tail()


def test_a_report_directory_lost_after_the_tests_ends_the_run_interrupted(lab, tmp_path):
    """The issue's probe: the controller's error after the tests was recorded complete, with a host failed."""
    with tmpfs(tmp_path / "reportfs", "1m") as report_dir:
        def remount_read_only(line):
            # once the checks have started, the report's file system goes read-only (a lost or full mount)
            if "TASK [clusterops.commcheck.discover" in line and not os.path.exists(str(tmp_path / "remounted")):
                subprocess.run(["mount", "-o", "remount,ro", report_dir], check=True)
                open(str(tmp_path / "remounted"), "w").close()
        run = oc.oneclick(lab, tmp_path, dict(CHEAP, commcheck_checks=["discover"], commcheck_report_dir=report_dir),
                          name="lost", on_line=remount_read_only)
    assert os.path.exists(str(tmp_path / "remounted")), run.tail()
    assert run.rc != 0, run.tail()
    discovered = sorted(r["host"] for r in run.records("discover"))
    assert discovered == sorted(lab.hosts), run.tail()
    summary = run.summary()
    assert summary["verdict"] == "interrupted" and summary["interrupted"] is True and summary["signal"] is None
    assert summary["partial_verdict"] in ("pass", "warn", "fail"), summary
    assert summary["failed_task"]["task"].endswith("Write the report of this run"), summary["failed_task"]
    assert summary["cause"].startswith("the run stopped at the failed task '%s'" % summary["failed_task"]["task"])
    assert "Read-only file system" in summary["cause"] and len(summary["cause"]) < 1000
    # the report is the controller's: no host is listed failed for it
    assert summary["hosts"]["failed"] == [] and sorted(summary["hosts"]["ok"]) == sorted(lab.hosts)
    [line] = stop_lines(run.output, "stopped at the failed task '%s'" % summary["failed_task"]["task"])
    assert "run %s " % summary["run_id"] in line and "%d record(s)" % len(run.records()) in line


@pytest.mark.full
def test_a_full_history_disk_loses_no_line_without_a_word(lab, tmp_path):
    spill = tmp_path / "spill"
    with tmpfs(tmp_path / "full" / "history", "256k") as history_dir:
        # room for about the discovery records, not for the rest of the run
        left = fill_leaving(history_dir, 3 * 4096)
        assert left < 5 * 4096, left
        run = oc.oneclick(lab, tmp_path, CHEAP, name="full", env={SPILL_ENV: str(spill)})
        # every line in the history is whole (read_history raises on a line that is not JSON)
        written = read_history(history_dir)
        [month_file] = glob.glob(os.path.join(history_dir, "*.jsonl"))
        with open(month_file, "rb") as handle:
            assert handle.read().endswith(b"\n")
    assert run.rc != 0, run.tail()
    [spill_file] = glob.glob(str(spill / "commcheck-history-*.jsonl"))
    kept = read_history(str(spill))
    # the summary is small: it goes where it fits (the history, when a larger batch before it did not)
    [summary] = [r for r in written + kept if r["kind"] == "summary"]
    summary_lost = summary in kept
    assert written and [r for r in kept if r["kind"] != "summary"], (len(written), len(kept))
    # midway: the first records went in, the later ones are kept aside, none in both
    run_ids = set(r["run_id"] for r in written + kept)
    assert len(run_ids) == 1
    assert not set(json.dumps(r, sort_keys=True) for r in written) & set(json.dumps(r, sort_keys=True) for r in kept)
    # the end says what was not written (by kind), why, and where it is kept; the last task fails the run
    lost = collections.Counter(r["kind"] for r in kept if r["kind"] != "summary")
    counts = ", ".join("%s %d" % item for item in sorted(lost.items(), key=lambda item: (-item[1], item[0])))
    told = "%d record(s) (%s)%s could not be written" % (sum(lost.values()), counts,
                                                         " and the summary line" if summary_lost else "")
    assert told in run.output, run.tail()
    assert "No space left on device" in run.output and spill_file in run.output
    assert "Check that the history of this run was written whole" in run.output
    assert summary["history"]["not_written"] == dict(lost) and summary["history"]["spill"] == spill_file
    # one warning when it first happened
    assert len(re.findall(r"cannot write history to .* the lines it cannot take are kept in", run.output)) == 1
    # appending the spill file once there is room makes the run whole again
    restored = tmp_path / "restored"
    restored.mkdir()
    with open(str(restored / os.path.basename(month_file)), "w") as handle:
        for record in written + kept:
            handle.write(json.dumps(record) + "\n")
    [listed] = history.list_runs(str(restored))
    assert listed["status"] == "complete" and listed["records"] == len(written) + len(kept) - 1, listed


def _children(pid):
    """Pids of the live processes whose parent is pid."""
    out = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(stat.split("/")[2]))
    return out


def _processes_with(marker):
    """Live processes whose command line holds marker (a run's own extra-vars file)."""
    found = []
    for path in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            with open(path, "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
            with open(path[:-len("cmdline")] + "stat") as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
        except OSError:
            continue
        if marker in cmdline:
            found.append((int(path.split("/")[2]), cmdline))
    return found


def test_sighup_stops_the_workers_says_why_and_leaves_the_lab_clean(lab, tmp_path, wait_until):
    proc, history_dir, _report = oc.start_oneclick(lab, tmp_path, {
        "commcheck_checks": ["rdma", "tcp"], "commcheck_rdma_duration": 3, "commcheck_rdma_timeout": 20},
        name="hup")
    varfile = [arg for arg in proc.args if arg.startswith("@")][0][1:]
    try:
        host, seen = oc.governors_while_tool_runs(lab, proc, "perftest_emulator")
        assert seen == ["performance"] * len(oc.GOVERNORS), host
        workers = _children(proc.pid)
        assert workers, "no worker in flight while perftest runs"
        proc.send_signal(signal.SIGHUP)
        proc.wait(timeout=120)
        log = open(proc.log_path).read()
        assert proc.returncode == -signal.SIGHUP, log[-3000:]
        # no ansible-playbook process of this run is left: not the workers, not their connections
        left = wait_until(lambda: _processes_with(varfile) == [], within=120)
        assert left, _processes_with(varfile)
        assert not oc.wait_no_test_processes(lab, timeout=120)
        assert_nothing_left(lab, wait=60)
        for name in lab.hosts:
            assert oc.governors(lab, name) == oc.GOVERNORS, name
        summary = [r for r in read_history(history_dir) if r["kind"] == "summary"]
        assert len(summary) == 1 and summary[0]["verdict"] == "interrupted" and summary[0]["signal"] == "SIGHUP"
        records = [r for r in read_history(history_dir) if r["kind"] != "summary"]
        [month_file] = glob.glob(os.path.join(history_dir, "*.jsonl"))
        assert stop_lines(log, "stopped by SIGHUP") == [
            "commcheck_history: run %s stopped by SIGHUP: %d record(s) and its summary (interrupted) are in %s"
            % (summary[0]["run_id"], len(records), month_file)], log[-3000:]
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
        for pid, _cmdline in _processes_with(varfile):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        oc.wait_no_test_processes(lab, timeout=90)
        oc.set_governors(lab, oc.GOVERNORS)
