# -*- coding: utf-8 -*-
"""History files: whole-line appends under flock, streaming reads, torn lines, queries."""
import datetime
import json
import multiprocessing
import os

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history_summary

UTC = datetime.timezone.utc


def _rec(host="a", peer="b", kind="rdma_bw", verdict="pass", bw=100.0, **params):
    return {"kind": kind, "host": host, "peer": peer, "params": params or {"op": "write"},
            "metrics": {"bw_gbps": bw}, "verdict": verdict, "cause": None, "fix": None, "evidence": []}


def _lines(directory):
    out = []
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as handle:
            out.extend(handle.read().split(b"\n"))
    return [line for line in out if line]


def test_append_stamps_and_writes_one_line_per_record_in_the_month_file(tmp_path):
    when = datetime.datetime(2026, 2, 28, 23, 59, 59, 5, tzinfo=UTC)
    stamped = history.append_records(str(tmp_path), [_rec(), _rec(host="c")], "run-1", when=when)
    assert os.listdir(str(tmp_path)) == ["history-2026-02.jsonl"]
    lines = _lines(str(tmp_path))
    assert len(lines) == 2
    first = json.loads(lines[0])
    assert list(first)[:3] == ["schema", "run_id", "time"]
    assert first["schema"] == history.SCHEMA_VERSION and first["run_id"] == "run-1"
    assert first["time"] == "2026-02-28T23:59:59.000005Z"
    assert stamped[1]["host"] == "c"
    history.append_records(str(tmp_path), [_rec()], "run-2", when=when + datetime.timedelta(seconds=1))
    assert sorted(os.listdir(str(tmp_path))) == ["history-2026-02.jsonl", "history-2026-03.jsonl"]


def _writer(directory, index, count, barrier, fsync):
    barrier.wait()
    for number in range(count):
        history.append_records(directory, [_rec(host="w%d" % index, n=number, pad="x" * (number % 700))],
                               "run-%d" % index, fsync=fsync)


@pytest.mark.parametrize("count, fsync", [(5000, False), (250, True)])
def test_concurrent_writers_give_exactly_all_lines_whole(tmp_path, count, fsync):
    """4 processes x 5,000 appends (lines up to ~900 bytes) -> exactly 20,000 valid JSON lines.

    fsync (about 2 ms per append here, serialized by the lock) does not change
    how lines interleave, so the big run leaves it off to stay fast; the small
    run keeps it on.
    """
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(4)
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), i, count, barrier, fsync)) for i in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    raw = b"".join(open(os.path.join(str(tmp_path), n), "rb").read() for n in os.listdir(str(tmp_path)))
    assert raw.endswith(b"\n")
    lines = raw.split(b"\n")[:-1]
    assert len(lines) == 4 * count
    seen = set()
    for line in lines:
        record = json.loads(line)
        seen.add((record["host"], record["params"]["n"]))
    assert len(seen) == 4 * count
    report = history.ReadReport()
    assert len(history.query(str(tmp_path), report=report)) == 4 * count
    assert report.problems == []


def test_fsync_append_works(tmp_path):
    history.append_records(str(tmp_path), [_rec()], "r", fsync=True)
    assert len(_lines(str(tmp_path))) == 1


def test_truncated_last_line_is_skipped_and_reported(tmp_path):
    history.append_records(str(tmp_path), [_rec(host="a"), _rec(host="b")], "r1")
    path = os.path.join(str(tmp_path), os.listdir(str(tmp_path))[0])
    with open(path, "rb") as handle:
        data = handle.read()
    with open(path, "wb") as handle:
        handle.write(data[:-25])  # the second line loses its end (and its newline)
    report = history.ReadReport()
    records = history.query(str(tmp_path), report=report)
    assert [r["host"] for r in records] == ["a"]
    assert len(report.torn) == 1 and report.corrupt == []
    assert report.torn[0]["line"] == 2 and report.torn[0]["file"] == path


def test_a_whole_record_without_its_newline_is_kept(tmp_path):
    history.append_records(str(tmp_path), [_rec(host="a")], "r1")
    path = os.path.join(str(tmp_path), os.listdir(str(tmp_path))[0])
    with open(path, "rb+") as handle:
        handle.truncate(os.path.getsize(path) - 1)
    report = history.ReadReport()
    assert [r["host"] for r in history.query(str(tmp_path), report=report)] == ["a"]
    assert report.problems == []


def test_append_after_a_torn_line_starts_a_new_line(tmp_path):
    history.append_records(str(tmp_path), [_rec(host="a")], "r1")
    path = os.path.join(str(tmp_path), os.listdir(str(tmp_path))[0])
    with open(path, "ab") as handle:
        handle.write(b'{"kind":"rdma_bw","host":"dead wri')  # a writer died here
    history.append_records(str(tmp_path), [_rec(host="c")], "r2")
    report = history.ReadReport()
    records = history.query(str(tmp_path), report=report)
    assert [r["host"] for r in records] == ["a", "c"]
    assert len(report.corrupt) == 1 and report.corrupt[0]["line"] == 2
    assert report.torn == []


def test_query_filters(tmp_path):
    base = datetime.datetime(2026, 1, 10, tzinfo=UTC)
    d = str(tmp_path)
    for day in range(6):
        run = "run-%d" % day
        when = base + datetime.timedelta(days=day * 10)   # spans Jan..Feb..Mar
        history.append_records(d, [_rec("a", "b", bw=100 - day), _rec("b", "a"), _rec("a", None, kind="discover"),
                                   _rec("c", "d", kind="tcp_bw", verdict="fail" if day % 2 else "pass")], run, when=when)
        history.append_lines(history.history_file(d, when), [history.dumps(history.stamp(
            {"kind": "summary", "host": None, "peer": None, "verdict": "pass"}, run, when))])
    now = base + datetime.timedelta(days=60)
    assert len(history.query(d)) == 24  # summaries left out
    assert len(history.query(d, kind="summary")) == 6
    assert len(history.query(d, include_summary=True)) == 30
    assert len(history.query(d, kind="rdma_bw")) == 12
    assert len(history.query(d, kind=["rdma_bw", "tcp_bw"])) == 18
    assert len(history.query(d, kind="rdma_bw", host="a")) == 6
    assert len(history.query(d, host="a", peer="null")) == 6
    assert len(history.query(d, peer=["b", "d"])) == 12
    assert [r["run_id"] for r in history.query(d, kind="tcp_bw", verdict="fail")] == ["run-1", "run-3", "run-5"]
    assert len(history.query(d, run_id="run-2")) == 4
    since = history.query(d, kind="rdma_bw", host="a", since="2026-02-01")
    assert [r["run_id"] for r in since] == ["run-3", "run-4", "run-5"]
    assert [r["run_id"] for r in history.query(d, host="a", kind="rdma_bw", since="25d", now=now)] == \
        ["run-4", "run-5"]
    assert [r["run_id"] for r in history.query(d, host="a", kind="rdma_bw", until="2026-01-20T00:00:00Z")] == \
        ["run-0", "run-1"]
    assert {r["run_id"] for r in history.query(d, last_runs=2)} == {"run-4", "run-5"}
    # the current run (another slice may have written part of it) never counts among the last runs
    assert {r["run_id"] for r in history.query(d, last_runs=2, exclude_run_id="run-5")} == {"run-3", "run-4"}
    assert "run-2" not in {r["run_id"] for r in history.query(d, kind="rdma_bw", exclude_run_id="run-2")}
    assert len(history.query(d, exclude_run_id="")) == len(history.query(d))
    assert len(history.query(d, limit=3)) == 3
    assert history.query(d, kind="rdma_bw", host="a", jmespath_query="[].metrics.bw_gbps") == \
        [100.0, 99.0, 98.0, 97.0, 96.0, 95.0]
    runs = history.list_runs(d)
    assert [r["run_id"] for r in runs] == ["run-%d" % i for i in range(6)]
    assert runs[0]["records"] == 4 and runs[0]["summary"]["kind"] == "summary"


def test_month_files_outside_the_range_are_not_opened(tmp_path):
    d = str(tmp_path)
    history.append_records(d, [_rec()], "old", when=datetime.datetime(2025, 1, 5, tzinfo=UTC))
    history.append_records(d, [_rec()], "new", when=datetime.datetime(2026, 1, 5, tzinfo=UTC))
    report = history.ReadReport()
    assert [r["run_id"] for r in history.query(d, since="2025-12-01", report=report)] == ["new"]
    assert [os.path.basename(f) for f in report.files] == ["history-2026-01.jsonl"]


def test_missing_directory_reads_as_empty(tmp_path):
    assert history.query(str(tmp_path / "nope")) == []


def test_bad_inputs_raise_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="not a time"):
        history.query(str(tmp_path), since="yesterday-ish")
    history.append_records(str(tmp_path), [_rec()], "r")
    with pytest.raises(ValueError, match="JMESPath"):
        history.query(str(tmp_path), jmespath_query="[?")


@pytest.mark.parametrize("text, seconds", [("7d", 7 * 86400), ("12h", 43200), ("30m", 1800), ("2w", 1209600),
                                           ("90s", 90), ("1.5d", 129600)])
def test_relative_times(text, seconds):
    now = datetime.datetime(2026, 3, 1, tzinfo=UTC)
    assert (now - history.parse_time(text, now)).total_seconds() == seconds


def test_parse_time_forms():
    assert history.parse_time("2026-01-02").isoformat() == "2026-01-02T00:00:00+00:00"
    assert history.parse_time("2026-01-02T03:04:05Z").hour == 3
    assert history.parse_time("2026-01-02T03:04:05+02:00").astimezone(UTC).hour == 1
    assert history.parse_time(0).year == 1970
    assert history.parse_time(None) is None


def test_run_id_from_env():
    assert history.run_id_from_env({"COMMCHECK_RUN_ID": "svc-1", "JOB_ID": "5"}) == "svc-1"
    assert history.run_id_from_env({"JOB_ID": "42"}) == "awx-42"
    assert history.run_id_from_env({}) is None
    assert len(history.new_run_id()) == len("20260131T235959Z-1a2b3c")


def test_history_api_for_services(tmp_path):
    api = history.History(str(tmp_path))
    api.append([_rec(host="x", token="s3cret")], run_id="svc-7")
    got = api.query(host="x")
    assert got[0]["run_id"] == "svc-7" and "token" not in got[0]["params"]
    assert api.last_run()["run_id"] == "svc-7"
    with pytest.raises(history.RecordError):
        api.append([{"kind": "x"}], run_id="svc-8")


# --------------------------------------------------------------------------
# The history directory
# --------------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    ("/var/lib/commcheck/history", "/var/lib/commcheck/history"),
    ("/var/lib//commcheck/./history/", "/var/lib/commcheck/history"),
    ("~/h", os.path.join(os.path.expanduser("~"), "h")),
    ("$COMMCHECK_TEST_BASE/h", "/srv/base/h"),
])
def test_history_dir_is_normalised(monkeypatch, value, expected):
    monkeypatch.setenv("COMMCHECK_TEST_BASE", "/srv/base")
    assert history.check_history_dir(value) == expected


@pytest.mark.parametrize("value, message", [
    ("", "COMMCHECK_HISTORY_DIR is empty"),
    ("   ", "COMMCHECK_HISTORY_DIR is empty"),
    (None, "COMMCHECK_HISTORY_DIR is not set"),
    ("history", "must be an absolute path"),
    ("./history", "must be an absolute path"),
    ("/var/lib/../tmp/history", "must not have a '..' component"),
    ("/var/lib/history/..", "must not have a '..' component"),
    ("../history", "must not have a '..' component"),
    ("/var/lib/hi\x00story", "NUL byte or a line break"),
    ("/var/lib/history\n", "NUL byte or a line break"),
    ("/var/lib/hi\rstory", "NUL byte or a line break"),
    ("$COMMCHECK_TEST_BAD/h", "NUL byte or a line break"),
    (["/var/lib"], "must be a path"),
])
def test_bad_history_dirs_are_refused_with_the_source_named(monkeypatch, value, message):
    monkeypatch.setenv("COMMCHECK_TEST_BAD", "/a\nb")
    with pytest.raises(ValueError, match=message.replace(".", r"\.")) as info:
        history.check_history_dir(value, "COMMCHECK_HISTORY_DIR")
    assert str(info.value).startswith("COMMCHECK_HISTORY_DIR")


def test_a_dot_dot_inside_a_name_is_not_a_component():
    assert history.check_history_dir("/var/lib/a..b/history") == "/var/lib/a..b/history"


# --------------------------------------------------------------------------
# Lines that are not records
# --------------------------------------------------------------------------

def _append_raw(directory, objects, when=None):
    when = when or datetime.datetime(2026, 3, 1, tzinfo=UTC)
    path = history.history_file(directory, when)
    history.append_lines(path, [o if isinstance(o, str) else json.dumps(o) for o in objects])
    return path


def test_lines_without_kind_or_host_are_skipped_and_reported(tmp_path):
    d = str(tmp_path)
    when = datetime.datetime(2026, 3, 1, tzinfo=UTC)
    stamp = {"schema": 1, "run_id": "r1", "time": history.format_time(when)}
    good = dict(stamp, kind="rdma_bw", host="a", peer="b", verdict="pass")
    summary = dict(stamp, kind="summary", host=None, peer=None, verdict="pass")
    path = _append_raw(d, [
        good,
        dict(stamp, host="a", verdict="pass"),                 # 2: no kind
        dict(stamp, kind="rdma_bw", verdict="pass"),           # 3: no host
        dict(stamp, kind="rdma_bw", host=None, verdict="pass"),  # 4: host null on a record
        dict(stamp, kind="", host="a", verdict="pass"),        # 5: empty kind
        dict(stamp, kind="rdma_bw", host=7, verdict="pass"),   # 6: host not a string
        summary,                                               # 7: a summary has host null: fine
        "[1, 2]",                                              # 8: not an object
    ], when)
    report = history.ReadReport()
    records = history.query(d, include_summary=True, report=report)
    assert [(r["kind"], r["host"]) for r in records] == [("rdma_bw", "a"), ("summary", None)]
    assert [(p["line"], p["reason"].split(" (")[0]) for p in report.corrupt] == [
        (2, "no 'kind'"), (3, "no 'host'"), (4, "no 'host'"), (5, "no 'kind'"), (6, "bad 'host' 7"),
        (8, "not a JSON object")]
    assert all(p["file"] == path for p in report.corrupt)
    # the run list reads the same lines the same way
    runs_report = history.ReadReport()
    [run] = history.list_runs(d, report=runs_report)
    assert run["records"] == 1 and run["summary"]["kind"] == "summary"
    assert [p["line"] for p in runs_report.corrupt] == [2, 3, 4, 5, 6, 8]


def test_the_fast_run_list_checks_kind_and_host_of_lines_it_does_not_parse(tmp_path):
    """Lines in the writer's own layout skip parsing in list_runs; a line in that layout without a host
    still has to be caught."""
    d = str(tmp_path)
    when = datetime.datetime(2026, 3, 1, tzinfo=UTC)
    written = history.stamp({"kind": "rdma_bw", "host": "a", "peer": None, "verdict": "pass"}, "r1", when)
    no_host = history.stamp({"kind": "rdma_bw", "peer": None, "verdict": "pass"}, "r1", when)
    empty_host = history.stamp({"kind": "rdma_bw", "host": "", "verdict": "pass"}, "r1", when)
    _append_raw(d, [history.dumps(written), history.dumps(no_host), history.dumps(empty_host)], when)
    assert history.dumps(no_host).startswith('{"schema":1,"run_id":"r1","time":"')
    report = history.ReadReport()
    [run] = history.list_runs(d, report=report)
    assert run["records"] == 1
    assert [p["line"] for p in report.corrupt] == [2, 3]
    assert report.parsed == 2   # the good line took the fast path


# --------------------------------------------------------------------------
# Summary lines: the report's verdict, interrupted and incomplete runs
# --------------------------------------------------------------------------

HOSTS_OK = {"ok": ["a", "b"], "failed": [], "unreachable": []}


@pytest.mark.parametrize("counts, hosts, verdict", [
    ({"pass": 3}, HOSTS_OK, "pass"),
    ({"pass": 3, "warn": 1}, HOSTS_OK, "warn"),
    ({"pass": 3, "flaky": 1}, HOSTS_OK, "warn"),
    ({"pass": 3, "skipped": 2}, HOSTS_OK, "pass"),
    ({"pass": 3, "warn": 1, "fail": 1}, HOSTS_OK, "fail"),
    ({"error": 1}, HOSTS_OK, "fail"),
    ({"pass": 3}, {"ok": ["a"], "failed": ["b"], "unreachable": []}, "fail"),
    ({"pass": 3}, {"ok": ["a"], "failed": [], "unreachable": ["b"]}, "fail"),
    ({}, HOSTS_OK, "pass"),
])
def test_summary_verdict(counts, hosts, verdict):
    summary = history.summary_record("p.yml", "ctl", hosts, counts, sum(counts.values()))
    assert summary["verdict"] == verdict and summary["cause"] is None
    assert summary["interrupted"] is False and "partial_verdict" not in summary
    assert history.record_line_problem(summary) is None


@pytest.mark.parametrize("counts, hosts, cause", [
    ({}, {"ok": [], "failed": [], "unreachable": []}, "no host ran a task (no hosts matched"),
    ({"skipped": 4}, HOSTS_OK, "every check of the run was skipped (4)"),
    ({}, {"ok": [], "failed": ["localhost"], "unreachable": []}, "1 host(s) failed or were unreachable before any"),
    ({}, {"ok": [], "failed": [], "unreachable": ["a", "b"]}, "2 host(s) failed or were unreachable before any"),
])
def test_a_run_that_checked_nothing_is_an_error_with_its_reason(counts, hosts, cause):
    summary = history.summary_record("p.yml", "ctl", hosts, counts, sum(counts.values()))
    assert summary["verdict"] == "error" and cause in summary["cause"], summary
    assert history.record_line_problem(summary) is None


@pytest.mark.parametrize("records, verdict", [(0, "error"), (3, "interrupted")])
def test_a_failed_task_before_any_record_is_an_error_after_one_an_interruption(records, verdict):
    failure = history_summary.task_failure("Check the options", "a", "Bad option(s), nothing was run")
    summary = history.summary_record("p.yml", "ctl", {"ok": ["a", "b"], "failed": [], "unreachable": []},
                                     {"pass": records} if records else {}, records, failed_task=failure)
    assert summary["verdict"] == verdict and summary["interrupted"] is True, summary
    assert "Check the options" in summary["cause"] and summary["failed_task"]["task"] == "Check the options"
    assert history.record_line_problem(summary) is None


@pytest.mark.parametrize("verdicts", [
    ["pass", "pass"], ["pass", "warn"], ["pass", "flaky"], ["pass", "fail"], ["error"], ["skipped"], ["warn", "fail"],
])
def test_summary_line_and_report_give_a_run_the_same_verdict(verdicts):
    from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model as report_render

    records = [_rec(host="h%d" % i, peer=None, kind="finding", verdict=v) for i, v in enumerate(verdicts)]
    counts = {}
    for record in records:
        counts[record["verdict"]] = counts.get(record["verdict"], 0) + 1
    summary = history.summary_record("p.yml", "ctl", HOSTS_OK, counts, len(records))
    assert summary["verdict"] == report_render.summarize(records)["verdict"]


def test_a_regression_record_makes_both_warn():
    """The report counts regressions; the history counts the regression records (verdict warn) it publishes."""
    from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline
    from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model as report_render

    regressed = {"value": 50.0, "baseline": 100.0, "change": -0.5, "threshold": 0.2}
    checked = dict(_rec(), regression={"metrics": {"bw_gbps": regressed}, "baseline_runs": ["r0"]})
    published = [checked] + baseline.regression_records([checked])
    counts = {}
    for record in published:
        counts[record["verdict"]] = counts.get(record["verdict"], 0) + 1
    assert counts == {"pass": 1, "warn": 1}
    assert report_render.summarize([checked])["verdict"] == "warn"
    assert history.summary_record("p.yml", "ctl", HOSTS_OK, counts, 2)["verdict"] == "warn"


def test_interrupted_summary():
    summary = history.summary_record("p.yml", "ctl", HOSTS_OK, {"pass": 1, "warn": 1}, 2, interrupted_by="SIGTERM")
    assert summary["verdict"] == "interrupted" and summary["interrupted"] is True
    assert summary["partial_verdict"] == "warn" and summary["signal"] == "SIGTERM"
    assert "SIGTERM" in summary["cause"] and "2 record(s)" in summary["cause"]
    early = history.summary_record("p.yml", "ctl", HOSTS_OK, {}, 0, interrupted_by="ansible-playbook exited early")
    assert early["verdict"] == "interrupted" and early["signal"] is None


def test_runs_are_complete_interrupted_or_incomplete(tmp_path):
    d = str(tmp_path)
    base = datetime.datetime(2026, 3, 1, tzinfo=UTC)
    for number, ending in enumerate(["summary", "interrupted", None]):
        when = base + datetime.timedelta(hours=number)
        run = "run-%d" % number
        history.append_records(d, [_rec()], run, when=when)
        if ending:
            summary = history.summary_record("p.yml", "ctl", HOSTS_OK, {"pass": 1}, 1,
                                             interrupted_by="SIGINT" if ending == "interrupted" else None)
            history.append_records(d, [summary], run, when=when + datetime.timedelta(seconds=1))
    runs = history.list_runs(d)
    assert [(r["run_id"], r["status"]) for r in runs] == [
        ("run-0", "complete"), ("run-1", "interrupted"), ("run-2", "incomplete")]
    assert runs[2]["summary"] is None and runs[2]["records"] == 1
    assert history.History(d).last_run()["status"] == "incomplete"


def test_a_signal_in_the_middle_of_an_append_is_handled_once_the_lines_are_whole(tmp_path, monkeypatch):
    """The callback's signal handler runs in the main thread; when it interrupts the main thread's own
    append (which holds the file lock), it waits until the append is done, then writes the summary and
    hands the signal on."""
    import signal

    from ansible_collections.clusterops.commcheck.plugins.callback import commcheck_history

    callback = commcheck_history.CallbackModule()
    callback._plugin_options = {"write_summary": True, "fsync": False}
    callback._dir, callback._run_id, callback._started, callback._fsync = str(tmp_path), "r1", True, False
    handed_on = []
    callback._previous_handlers = {signal.SIGTERM: lambda signum, frame: handed_on.append(signum)}
    append = history.append_records

    def append_while_a_signal_comes(directory, records, run_id, **kwargs):
        if records[0]["kind"] != "summary":
            callback._on_signal(signal.SIGTERM, None)
            assert handed_on == [] and not callback._summary_written   # not yet: the append is not done
        return append(directory, records, run_id, **kwargs)

    monkeypatch.setattr(history, "append_records", append_while_a_signal_comes)
    record, _removed = history.normalize_record(_rec(verdict="warn"))
    callback._counts, callback._written = {"warn": 1}, 1
    callback._write([record])
    assert handed_on == [signal.SIGTERM]
    lines = [json.loads(line) for line in _lines(str(tmp_path))]
    assert [(r["kind"], r["verdict"]) for r in lines] == [("rdma_bw", "warn"), ("summary", "interrupted")]
    assert lines[1]["signal"] == "SIGTERM" and lines[1]["partial_verdict"] == "warn"
    # a second signal does not write a second summary, and is still handed on
    callback._on_signal(signal.SIGTERM, None)
    assert handed_on == [signal.SIGTERM, signal.SIGTERM] and len(_lines(str(tmp_path))) == 2


def test_a_long_failure_message_keeps_its_beginning_and_the_reason_at_its_end():
    message = "cannot write /tmp/" + "a/" * 400 + ": Read-only file system"
    kept = history_summary.bounded(message)
    assert kept.startswith("cannot write /tmp/a/a/") and kept.endswith(": Read-only file system")
    assert "(%d characters)" % len(message) in kept and len(kept) < history_summary.MESSAGE_LIMIT + 40
    assert len(message) > history_summary.MESSAGE_LIMIT
    assert history_summary.bounded("short: why") == "short: why"
