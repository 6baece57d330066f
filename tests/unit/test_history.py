# -*- coding: utf-8 -*-
"""History files: whole-line appends under flock, streaming reads, torn lines, queries."""
import datetime
import json
import multiprocessing
import os

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils import history

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
