# -*- coding: utf-8 -*-
"""The third round of the 128-host mesh's speed-ups (issue 37 §6) gives what the code before it gave.

Each changed step runs beside the way it was computed before (copied here as the reference) on inputs made to
tell them apart: check keys and comparable metrics of records in many shapes (params in other orders, values of
every type, text subclasses, non-dict params and metrics, more shapes than are kept); the raw filter on lines
with several tokens a group, tokens with regular-expression characters and non-ASCII bytes, times readable or
not; history files with every kind of bad line, read through the one loop; the report view handed the shared
regressions beside the view that finds them itself.
"""
import datetime
import json
import random

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history_read
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_render
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline as bl


# --- check keys and comparable metrics: the names of each shape sorted or sifted once ----------------------

class Text(str):
    """A text subclass, as Ansible's unsafe text is: equal to the plain text in a key."""


PARAM_VALUES = [0, 1, 1.0, -0.0, 0.0, True, False, None, "1", Text("1"), "mlx5_0", Text("mlx5_0"), [1, "a"],
                {"b": 1, "a": [2]}, (1, 2), 2 ** 70]
METRIC_VALUES = [1.5, 2, True, False, None, "3", float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 10 ** 30,
                 [1.0], {"x": 1.0}]
PARAM_NAMES = ["op", "rail", "device", "round", "tcp_port", "size", "retest", "server", "a", "z"]
METRIC_NAMES = ["bw_gbps", "lat_us", "expected_gbps", "fraction", "lat_max_us", "busbw_gbps", "t_avg_us", "count",
                "sent_mbps"]


def random_check_record(rnd):
    """A record whose params and metrics have a random few names in a random order and values of every type."""
    record = {"kind": rnd.choice(["rdma_bw", "rdma_lat", None, 3]), "host": rnd.choice(["h1", "h2", None]),
              "peer": rnd.choice(["h2", None, Text("h2")])}
    shape = rnd.random()
    if shape < 0.8:
        names = rnd.sample(PARAM_NAMES, rnd.randint(0, len(PARAM_NAMES)))
        record["params"] = dict((name, rnd.choice(PARAM_VALUES)) for name in names)
    elif shape < 0.9:
        record["params"] = rnd.choice([None, {}, ""])
    names = rnd.sample(METRIC_NAMES, rnd.randint(0, len(METRIC_NAMES)))
    record["metrics"] = dict((name, rnd.choice(METRIC_VALUES)) for name in names) if rnd.random() < 0.9 \
        else rnd.choice([None, {}, []])
    return record


def _outcome(function, *args):
    try:
        return "value", function(*args)
    except Exception as exc:  # pylint: disable=broad-except
        return "error", type(exc).__name__


@pytest.mark.parametrize("kept", [4096, 3])
@pytest.mark.parametrize("seed", range(6))
def test_check_keys_give_record_key_and_comparable_metrics_of_every_record(monkeypatch, seed, kept):
    monkeypatch.setattr(bl, "_SHAPES_KEPT", kept)
    rnd = random.Random(seed)
    for ignore in ((), bl.DEFAULT_IGNORE_PARAMS, ["a", "rail"]):
        keys = bl.CheckKeys(ignore)
        for _record in range(600):
            record = random_check_record(rnd)
            got, expected = _outcome(keys.key, record), _outcome(bl.record_key, record, frozenset(ignore))
            assert repr(got) == repr(expected), record
            if expected[0] == "value":
                assert hash(got[1]) == hash(expected[1]) and got[1] == expected[1]
            got = _outcome(keys.metrics, record.get("metrics"))
            expected = _outcome(bl.comparable_metrics, record.get("metrics"))
            assert repr(got) == repr(expected), record     # the same names, values and order
        assert len(keys._params) <= kept and len(keys._metrics) <= kept


def test_check_keys_tell_the_types_apart_and_a_text_subclass_from_nothing():
    keys = bl.CheckKeys()
    made = [keys.key({"kind": "k", "params": {"v": value}}) for value in (1, 1.0, True, "1", Text("1"))]
    assert len(set(made)) == 4 and made[3] == made[4]
    assert keys.key({"kind": "k", "params": {"b": 1, "a": 2}}) == keys.key({"kind": "k", "params": {"a": 2, "b": 1}})
    listed = {"kind": "k", "params": {"a": [1, {"b": 2.0}]}}
    assert keys.key(listed) == bl.record_key(listed) and hash(keys.key(listed)) == hash(bl.record_key(listed))
    assert keys.metrics({"bw_gbps": True, "lat_us": float("nan"), "expected_gbps": 1.0, "t_avg_us": 3}) == \
        {"t_avg_us": 3.0}


# --- the raw filter: a group's tokens looked for in one search, the time compared as bytes -----------------

def reference_raw_time(raw):
    """history_read.raw_time as it was called by the filter."""
    if not raw.startswith(history_read.LINE_HEAD):
        return None
    index = raw.find(history_read.TIME_KEY, 0, 320)
    if index < 0:
        return None
    value = raw[index + 8:index + 35]
    if len(value) == 27 and value.endswith(b"Z") and raw[index + 35:index + 36] == b'"':
        return value.decode("ascii")
    return None


def reference_filter(filter_, raw):
    """_Filter.__call__ as it was: raw_time's text compared with the bounds, then each token of each group."""
    if filter_.since_text is not None or filter_.until_text is not None:
        text = reference_raw_time(raw)
        if text is not None:
            if filter_.since_text is not None and text < filter_.since_text:
                return False
            if filter_.until_text is not None and text > filter_.until_text:
                return False
    for group in filter_.groups:
        for token in group:
            if token in raw:
                break
        else:
            return False
    return True


TOKEN_WORDS = ["rdma_bw", "rdma_lat", "tcp_bw", "a.b", "x|y", "(z", "*", "\\", "r\u00e9seau", "[k]", "$^"]


def random_raw_line(rnd):
    stamp = rnd.choice(['"time":"2026-12-%02dT10:00:00.000000Z"' % rnd.randint(1, 9), '"time":"late"',
                        '"time":"2026-12-05T10:00:00.000000\u00e9"', '"time":"2026-12-0\u00e9T10:00:00.00000Z"',
                        ""])
    head = rnd.choice(['{"schema":1,', '{"schema":1,', '{"x":1,'])
    words = rnd.sample(TOKEN_WORDS + ["other", "axb", "xy", "z"], 3)
    line = "%s%s,\"kind\":\"%s\",\"run_id\":\"%s\",\"note\":\"%s\"}" % (head, stamp, words[0], words[1], words[2])
    return line.encode("utf-8")


def _filter_outcome(function, raw):
    try:
        return function(raw)
    except UnicodeDecodeError as exc:
        return ("error", str(exc))


def test_the_raw_filter_keeps_the_lines_it_kept_and_fails_where_it_failed():
    rnd = random.Random(11)
    lines = [random_raw_line(rnd) for _line in range(1500)]
    filters = [history_read.Selection(kind=["rdma_bw", "a.b", "x|y", "*"], until="2026-12-05T00:00:00Z").prefilter,
               history_read.Selection(kind=["(z", "\\", "r\u00e9seau"], run_id=["[k]", "$^", "rdma_lat"],
                                      since="2026-12-03T00:00:00Z", until="2026-12-07T00:00:00Z").prefilter,
               history_read.Selection(kind="tcp_bw", run_id="rdma_bw").prefilter,
               history_read.Selection(since="2026-12-04T00:00:00Z").prefilter,
               history_read.Selection().prefilter]
    assert any(len(group) > 2 for group in filters[1].groups)
    for filter_ in filters:
        got = [_filter_outcome(filter_, raw) for raw in lines]
        assert got == [_filter_outcome(lambda raw, f=filter_: reference_filter(f, raw), raw) for raw in lines]
        kept = sum(1 for outcome in got if outcome is True)
        assert 0 < kept and (kept < len(lines) or filter_ is filters[-1])
    assert any(isinstance(_filter_outcome(filters[0], raw), tuple) for raw in lines)   # a time that is not ASCII


# --- history lines: the file read, decoded and checked in one loop --------------------------------------

def reference_parse_lines(path, report, raw_filter):
    """history_read._parse_lines as it was: iter_lines, then load_line (record_line_problem) of each line."""
    decode = history_read._line_decoder()
    for number, raw in history_read.iter_lines(path, report):
        report.lines += 1
        if raw_filter is not None and not raw_filter(raw):
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            report.corrupt.append({"file": path, "line": number, "reason": "not UTF-8: %s" % exc})
            continue
        if not text or text.isspace():
            continue
        record = history_read.load_line(path, number, text, report, decode)
        if record is not None:
            yield record


GOOD = '{"schema":1,"run_id":"r1","time":"2026-12-01T10:00:00.000000Z","kind":"rdma_bw","host":"h1"}'
ODD_RECORDS = ['{"kind":"rdma_bw","host":"h1"}', '{"kind":" ","host":"h1"}', '{"kind":"rdma_bw","host":" \\t"}',
               '{"kind":"rdma_bw","host":""}', '{"kind":"","host":"h1"}', '{"kind":"rdma_bw"}',
               '{"kind":"rdma_bw","host":null}', '{"kind":"summary","host":null}', '{"kind":"summary","host":7}',
               '{"kind":5,"host":"h1"}', '{"kind":"rdma_bw","host":["h1"]}', '{"kind":"\\u2003","host":"h1"}',
               '{"kind":"rdma_bw","host":"\\u2003h"}', '{"kind":"summary","host":"h1"}', '[1]', '"text"', '3',
               'null', '{"host":"h1"}']
BAD_LINES = [" " + GOOD, GOOD + " ", GOOD + "x", "\u2003", " \t", "", "\ufeff" + GOOD,
             '{"kind":"rdma_bw","host":"h1",}', GOOD + GOOD, "nul"]


@pytest.mark.parametrize("last", ["torn", "whole", "newline"])
def test_a_history_file_reads_and_reports_through_one_loop_as_through_the_generators(tmp_path, last):
    rnd = random.Random(last)
    lines = [rnd.choice([GOOD] * 3 + ODD_RECORDS + BAD_LINES) for _line in range(300)] + ODD_RECORDS + BAD_LINES
    data = b"\n".join(line.encode("utf-8") for line in lines) + b"\n\xff\xfe\n"
    data += {"torn": GOOD.encode()[:20], "whole": GOOD.encode(), "newline": b""}[last]
    path = tmp_path / "history-2026-12.jsonl"
    path.write_bytes(data)
    for raw_filter in (None, history_read.Selection(kind=["rdma_bw", "summary"]).prefilter,
                       history_read.Selection(until="2026-11-30T00:00:00Z").prefilter):
        new_report, old_report = history.ReadReport(), history.ReadReport()
        got = list(history_read._parse_lines(str(path), new_report, raw_filter))
        expected = list(reference_parse_lines(str(path), old_report, raw_filter))
        assert got == expected and new_report.as_dict() == old_report.as_dict()
        if raw_filter is None:
            assert len(got) > 50 and len(new_report.corrupt) > 100
            assert len(new_report.torn) == (1 if last == "torn" else 0)


# --- the report view handed the shared regressions -----------------------------------------------------

RING = [("h%d" % n, "h%d" % (n % 8 + 1)) for n in range(1, 9)]


def _record(run, day, host, peer, value, rail):
    return {"schema": 1, "run_id": run, "time": "2026-05-%02dT00:00:00.000000Z" % (day + 1), "kind": "rdma_lat",
            "host": host, "peer": peer, "verdict": "pass", "metrics": {"lat_us": value},
            "params": {"op": "write", "metric": "lat", "size": 2, "rail": rail, "device": "mlx5_%d" % rail,
                       "peer_device": "mlx5_%d" % rail, "round": day % 2}}


def test_a_view_handed_the_shared_regressions_writes_what_it_wrote_finding_them_itself():
    """Rail 0 rose together (shared), rail 1 on three pairs only (their own), one pair far beyond the shift."""
    hist = [_record("r%d" % day, day, h, p, 8.0 * (1 + 0.01 * (day + n)), rail)
            for day in range(3) for n, (h, p) in enumerate(RING) for rail in (0, 1)]
    now = [_record("now", 9, h, p, 14.5 + 0.1 * n if rail == 0 else (20.0 if n < 3 else 8.0), rail)
           for n, (h, p) in enumerate(RING) for rail in (0, 1)]
    now[4]["metrics"]["lat_us"] = 80.0
    records = bl.compare(now, hist, ignore_params=bl.DEFAULT_IGNORE_PARAMS)
    shared = bl.shared_groups(records)
    assert len(shared) == 1
    summary = report_model.summarize(records, run_id="now", generated="2026-05-10T00:00:00.000000Z",
                                     shared=shared)
    handed = report_model.ReportView(records, summary, shared=shared)
    found = report_model.ReportView(records, summary)
    assert handed.regressions == found.regressions == bl.regressions(records)
    assert sum(1 for r in handed.regressions if r["shared"]) == 7 and len(handed.regressions) == 11
    formats = list(report_render.FORMATS)
    when = datetime.datetime(2026, 5, 10, tzinfo=datetime.timezone.utc)
    texts = dict(report_render.each_format(formats, records, summary, {"baseline": None}, now=when, shared=shared))
    assert texts == dict(report_render.each_format(formats, records, summary, {"baseline": None}, now=when))
    assert json.loads(texts["json"])["regressions"] == bl.regressions(records)


# --- the selection: a canonical time compared as it is ------------------------------------------------------

def reference_selection(selection, record):
    """Selection.__call__ as it was: the time through _record_time_ok."""
    rkind = record.get("kind")
    if selection.kinds is not None and rkind not in selection.kinds:
        return False
    if not selection.include_summary and rkind == "summary":
        return False
    if selection.hosts is not None and record.get("host") not in selection.hosts:
        return False
    if selection.peers is not None:
        rpeer = record.get("peer")
        if not ((rpeer is None and selection.peer_null) or (rpeer is not None and rpeer in selection.peers)):
            return False
    if selection.runs is not None and str(record.get("run_id")) not in selection.runs:
        return False
    if selection.verdicts is not None and record.get("verdict") not in selection.verdicts:
        return False
    if not history_read._record_time_ok(record, selection.since_text, selection.until_text):
        return False
    return selection.where is None or selection.where(record)


TIMES = ["2026-12-%02dT10:00:00.000000Z" % day for day in range(1, 10)] + [
    Text("2026-12-05T10:00:00.000000Z"), "2026-12-05T10:00:00Z", "2026-12-05T10:00:00.000000+00:00",
    "2026-12-05T10:00:00.0000000", "late", "", None, 5, 1796400000, "2026-12-04T23:59:59.999999Z",
    "2026-12-07T00:00:00.000000Z"]


def test_the_selection_keeps_the_records_it_kept():
    rnd = random.Random(5)
    records = [{"kind": rnd.choice(["rdma_bw", "summary", "tcp_bw"]), "host": rnd.choice(["h1", "h2"]),
                "peer": rnd.choice(["h2", None]), "run_id": rnd.choice(["r1", "r2", 3]),
                "verdict": rnd.choice(["pass", "fail"]), "time": rnd.choice(TIMES)} for _record in range(2000)]
    for record in records[::7]:
        del record["time"]
    selections = [history_read.Selection(kind=["rdma_bw", "tcp_bw"], until="2026-12-05T00:00:00Z"),
                  history_read.Selection(run_id="r1", since="2026-12-04T00:00:00Z", until="2026-12-07T00:00:00Z"),
                  history_read.Selection(since="2026-12-05T10:00:00Z", include_summary=True, verdict="pass"),
                  history_read.Selection(peer="null", host="h1"), history_read.Selection()]
    for selection in selections:
        got = [_outcome(selection, record) for record in records]
        assert got == [_outcome(reference_selection, selection, record) for record in records]
        kept = sum(1 for outcome in got if outcome == ("value", True))
        assert 0 < kept < len(records)
    # an empty time fails alike (as an AttributeError of parse_time's None) where a bound asks for one
    assert ("error", "AttributeError") in [_outcome(selections[0], record) for record in records]
