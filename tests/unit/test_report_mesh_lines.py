# -*- coding: utf-8 -*-
"""The second round of the 128-host mesh's speed-ups (issue 37 §6) gives what the code before it gave.

Each changed step runs beside the way it was computed before (copied here as the reference) on inputs made to
tell them apart: baselines of checks measured once, twice and with other metrics in one run, named and
excluded runs, retests and ties in time; history lines that are corrupt in every way the reader reports; raw
filters with and without a readable time; latency rows with tied latencies past the rows shown.
"""
import json
import random

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history_baseline
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history_read
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_fleet
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_markdown
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_values import num
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline as bl
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.stats import median


# --- baselines: one run's metrics kept as they are, each check's baseline built when asked ----------------

class ReferenceBuilder(bl.BaselineBuilder):
    """BaselineBuilder.add and baselines as they were: a list per metric for every run, every baseline at once."""

    def add(self, record):
        run = record.get("run_id")
        if record.get("kind") in ("summary", "regression") or bl.is_retest(record):
            return False
        if run in self.exclude_runs:
            return False
        if self.baseline_run is not None:
            if run != self.baseline_run or record.get("verdict") in ("error", "skipped"):
                return False
        elif record.get("verdict") not in self.verdicts:
            return False
        key = bl.record_key(record, self.ignore_params)
        if self.keys is not None and key not in self.keys:
            return False
        metrics = bl.comparable_metrics(record.get("metrics"))
        if not metrics:
            return False
        entry = self._runs.setdefault(key, {}).setdefault(run, [record.get("time") or "", {}])
        entry[0] = max(entry[0], record.get("time") or "")
        for name, value in metrics.items():
            entry[1].setdefault(name, []).append(value)
        return True

    def baselines(self):
        result = {}
        for key, runs in self._runs.items():
            ordered = sorted(runs.items(), key=lambda item: (item[1][0], str(item[0])))[-self.k:]
            per_metric = {}
            for _run, (_time, metrics) in ordered:
                for name, values in metrics.items():
                    per_metric.setdefault(name, []).append(float(values[0]) if len(values) == 1 else median(values))
            result[key] = {
                "metrics": dict((name, median(values)) for name, values in per_metric.items()),
                "values": per_metric,
                "runs": [run for run, _entry in ordered],
                "n": len(ordered),
            }
        return result


def random_history(seed):
    """Records of 4-8 runs over a few checks: measured once, twice or not at all in a run, a second record with
    other metrics, ints beside floats, failing and erroring ones, retests, summaries, equal times."""
    rnd = random.Random(seed)
    runs = ["run-%d" % i for i in range(rnd.randint(4, 8))]
    checks = [("rdma_bw", "h%d" % h, "h%d" % (h + 1), {"device": "mlx5_%d" % r, "size": 65536})
              for h in range(3) for r in range(2)] + [("rdma_lat", "h1", "h2", {"device": "mlx5_0"})]
    records = []
    for index, run in enumerate(runs):
        when = "2026-11-%02dT10:00:00.000000Z" % (10 + (index if rnd.random() < 0.8 else index - 1))
        for kind, host, peer, params in checks:
            for _times in range(rnd.choice([0, 1, 1, 1, 2, 3])):
                metric = "lat_us" if kind == "rdma_lat" else rnd.choice(["bw_gbps", "bw_gbps", "busbw_gbps"])
                value = rnd.choice([rnd.uniform(50, 100), rnd.randint(50, 100)])
                records.append({"run_id": run, "time": when if rnd.random() < 0.7 else when.replace("10:", "11:"),
                                "kind": kind, "host": host, "peer": peer,
                                "params": dict(params, round=rnd.randint(0, 3),
                                               retest=rnd.random() < 0.1),
                                "verdict": rnd.choice(["pass"] * 6 + ["fail", "error", "skipped"]),
                                "metrics": {metric: value, "expected_gbps": 100.0, "fraction": 0.9}})
        records.append({"run_id": run, "time": when, "kind": "summary", "host": None, "verdict": "pass"})
    rnd.shuffle(records)
    return records, runs


def both_builders(records, **options):
    new, old = bl.BaselineBuilder(**options), ReferenceBuilder(**options)
    for record in records:
        assert new.add(record) == old.add(record)
    return new, old


@pytest.mark.parametrize("seed", range(30))
def test_baselines_of_runs_kept_as_they_are_are_the_baselines_of_lists(seed):
    records, runs = random_history(seed)
    rnd = random.Random(seed)
    for options in ({"k": 3}, {"k": 5, "exclude_runs": [runs[-1]]}, {"k": 2, "ignore_params": ["round", "retest"]},
                    {"k": 5, "baseline_run": rnd.choice(runs)}, {"k": 1, "verdicts": ("pass", "fail")}):
        new, old = both_builders(records, **options)
        expected = old.baselines()
        assert new.baselines() == expected, options
        lazy = bl.Baselines(new)
        for key in expected:
            assert lazy.get(key) == expected[key]
        assert lazy.get(("rdma_bw", "nowhere", None, ())) is None
        assert lazy.get(("rdma_bw", "nowhere", None, ()), "none") == "none"
        assert new.satisfied() == old.satisfied()


def test_the_random_histories_have_checks_measured_twice_in_a_run_and_runs_cut_to_k():
    """The equality above is no empty claim: runs with two records of a check, other metrics in a second record
    and more runs than K happen."""
    twice = other_metric = cut = 0
    for seed in range(30):
        records, _runs = random_history(seed)
        old = ReferenceBuilder(k=3)
        old.add_all(records)
        for runs in old._runs.values():
            twice += sum(1 for _time, metrics in runs.values() if any(len(v) > 1 for v in metrics.values()))
            other_metric += sum(1 for _time, metrics in runs.values() if len(metrics) > 1)
            cut += len(runs) > 3
    assert twice > 20 and other_metric > 5 and cut > 5


def _write_history(tmp_path, records):
    directory = tmp_path / "history"
    directory.mkdir()
    by_month = {}
    for record in sorted(records, key=lambda r: r["time"]):
        by_month.setdefault(record["time"][:7], []).append(json.dumps(dict(record, schema=1), separators=(",", ":")))
    for month, lines in by_month.items():
        (directory / ("history-%s.jsonl" % month)).write_text("\n".join(lines) + "\n{torn")
    return str(directory)


@pytest.mark.parametrize("seed", range(10))
def test_a_run_compared_with_the_history_is_compared_as_with_every_baseline_built_first(tmp_path, seed):
    records, runs = random_history(seed)
    directory = _write_history(tmp_path, [r for r in records if r["run_id"] != runs[-1]])
    current = [r for r in records if r["run_id"] == runs[-1] and r["kind"] != "summary"]
    report = history.ReadReport()
    ignore = frozenset(bl.DEFAULT_IGNORE_PARAMS)
    got = history_baseline.compare_with_history(current, directory, k=3, min_runs=2, report=report,
                                                ignore_params=ignore)
    builder = ReferenceBuilder(k=3, keys=set(bl.record_key(r, ignore) for r in current), ignore_params=ignore)
    builder.add_all(history.query(directory, since=None))
    expected = bl.compare_all(current, builder.baselines(), ignore, None, bl.rule_of(0.2, None, 2, 0.5, 5.0))
    assert got == expected
    assert any(r["baseline"] for r in got) and [p["reason"] for p in report.torn] == [
        "torn last line (no newline, not valid JSON)"] * len(report.files)


# --- history lines: the decoder's scanner called directly ----------------------------------------------

LINES = ['{"a":1}\n', '{"a":1}', ' {"a":1}\n', '{"a":1} \n', '{"a":1}\r\n', '{"a":1}\t\n', '{"a":1}x\n',
         '{"a":1}{"b":2}\n', '{"a":\n', '\ufeff{"a":1}\n', '[1,2]\n', '"s"\n', '1 2\n', 'nul\n', '\n', '{"a":NaN}\n',
         '{"a":"\\u00e9","b":[1.5,-0.0,1e400]}\n', '{"a":1}\n\n', '{"a":1,}\n', '{"a":"\x01"}\n', '}\n', '1\n']


def _outcome(decode, text):
    try:
        return "value", decode(text)
    except ValueError as exc:
        return "error", str(exc)


@pytest.mark.parametrize("text", LINES)
def test_a_line_decodes_or_fails_as_the_decoder_itself_decodes_it(text):
    expected = _outcome(json.JSONDecoder().decode, text)
    got = _outcome(history_read._line_decoder(), text)
    assert repr(got) == repr(expected)


def reference_parse_lines(path, report, raw_filter):
    """history_read._parse_lines as it was: each line through JSONDecoder().decode, blank ones told by strip()."""
    decode = json.JSONDecoder().decode
    for number, raw in history_read.iter_lines(path, report):
        report.lines += 1
        if raw_filter is not None and not raw_filter(raw):
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            report.corrupt.append({"file": path, "line": number, "reason": "not UTF-8: %s" % exc})
            continue
        if not text.strip():
            continue
        record = history_read.load_line(path, number, text, report, decode)
        if record is not None:
            yield record


def test_a_history_with_every_kind_of_bad_line_reads_and_reports_as_before(tmp_path, monkeypatch):
    good = '{"schema":1,"run_id":"r1","time":"2026-12-01T10:00:00.000000Z","kind":"rdma_bw","host":"h1"}'
    lines = [good, " " + good, good + " ", good + "x", '{"kind":"rdma_bw"}', '{"kind":"summary","host":null}',
             "[1]", "\u2003", " \t", "", "\ufeff" + good, '{"kind":"rdma_bw","host":"h1",}', good + good, "nul"]
    path = tmp_path / "history-2026-12.jsonl"
    path.write_bytes(b"\n".join(line.encode("utf-8") for line in lines) + b"\n\xff\xfe\n" + good.encode()[:20])
    new_report, old_report = history.ReadReport(), history.ReadReport()
    got = list(history_read._parse_lines(str(path), new_report, None))
    expected = list(reference_parse_lines(str(path), old_report, None))
    assert got == expected and len(got) == 4
    assert new_report.as_dict() == old_report.as_dict()
    assert len(new_report.corrupt) == 8 and len(new_report.torn) == 1


# --- the raw filter: the time looked at first ---------------------------------------------------------

def reference_filter(filter_, raw):
    for group in filter_.groups:
        for token in group:
            if token in raw:
                break
        else:
            return False
    if filter_.since_text is not None or filter_.until_text is not None:
        text = history_read.raw_time(raw)
        if text is not None:
            if filter_.since_text is not None and text < filter_.since_text:
                return False
            if filter_.until_text is not None and text > filter_.until_text:
                return False
    return True


def test_the_raw_filter_with_the_time_first_keeps_the_lines_it_kept():
    rnd = random.Random(7)
    lines = []
    for _line in range(400):
        stamp = '"time":"2026-12-%02dT10:00:00.000000Z"' % rnd.randint(1, 9)
        head = rnd.choice(['{"schema":1,', '{"schema":1,', '{"x":1,'])
        lines.append(("%s%s,\"kind\":\"%s\",\"run_id\":\"%s\"}" % (
            head, stamp if rnd.random() < 0.8 else '"time":"late"', rnd.choice(["rdma_bw", "tcp_bw"]),
            rnd.choice(["r1", "r2"]))).encode())
    filters = [history_read.Selection(kind=["rdma_bw"], until="2026-12-05T00:00:00Z").prefilter,
               history_read.Selection(kind="tcp_bw", run_id="r2", since="2026-12-03T00:00:00Z",
                                      until="2026-12-07T00:00:00Z").prefilter,
               history_read.Selection(run_id="r1").prefilter, history_read.Selection().prefilter]
    kept = [sum(1 for raw in lines if f(raw)) for f in filters]
    for filter_ in filters:
        assert [filter_(raw) for raw in lines] == [reference_filter(filter_, raw) for raw in lines]
    assert all(0 < count < len(lines) for count in kept[:3]) and kept[3] == len(lines)


# --- latency rows: made for the slowest only ----------------------------------------------------------

def reference_slowest(records, limit):
    rows = reference_latency_rows(records)
    if len(rows) <= 2 * limit:
        return rows, len(rows)
    return report_fleet.worst(rows, limit, key=lambda r: -(num(r["lat_us"]) or 0.0)), len(rows)


def reference_latency_rows(records):
    rows = []
    for record in records or []:
        if record.get("kind") in ("regression", "summary") or report_model.is_retest_run(record):
            continue
        name, value = report_model.lat_metric(record.get("metrics"))
        if value is None:
            continue
        metrics = record.get("metrics") or {}
        rows.append({"host": record.get("host"), "peer": record.get("peer"), "kind": record.get("kind"),
                     "flow": report_model.flow_label(record), "op": report_model.op_of(record),
                     "params": report_model.params_text(record.get("params"), skip=(
                         "op", "metric", "peer_device") + bl.DEFAULT_IGNORE_PARAMS),
                     "lat_us": value, "metric": name,
                     "p99_us": report_model._first_number(metrics, report_model._P99_KEYS),
                     "t_max_us": report_model._first_number(metrics, report_model._MAX_KEYS),
                     "verdict": record.get("verdict"), "regression": bool(record.get("regression"))})
    return sorted(rows, key=lambda r: (r["kind"], r["op"], str(r["host"]), str(r["peer"])))


def latency_records(seed, count):
    """Latency records of a few hosts: latencies from a short list (many ties), p99 and max on some, other kinds
    and retests among them, hosts that sort differently as text, records without a latency."""
    rnd = random.Random(seed)
    records = []
    for index in range(count):
        kind = rnd.choice(["rdma_lat", "rdma_lat", "tcp_lat", "rdma_bw"])
        metrics = {"lat_us": rnd.choice([1.5, 2, 2.0, 3.25, 9])} if kind != "rdma_bw" else {"bw_gbps": 90.0}
        if rnd.random() < 0.3:
            metrics = {"t_typical_us": rnd.choice([2, 4.5]), "t_max_us": 30, "p99_us": 7.5}
        if rnd.random() < 0.05:
            metrics = {"other": 1}
        records.append({"kind": kind, "host": rnd.choice(["h2", "h10", "h1", 7]), "peer": rnd.choice(["h3", None]),
                        "params": {"op": rnd.choice(["write", "read"]), "device": "mlx5_%d" % (index % 3),
                                   "retest": rnd.random() < 0.05, "round": index},
                        "verdict": rnd.choice(["pass", "fail", "flaky"]),
                        "regression": {"metrics": {}} if rnd.random() < 0.1 else None, "metrics": metrics})
    return records


@pytest.mark.parametrize("seed,count", [(seed, count) for seed in range(8) for count in (0, 5, 60, 400)])
def test_the_slowest_latency_rows_are_those_of_every_row_sorted(seed, count):
    records = latency_records(seed, count)
    view = report_model.ReportView(records, {})
    expected, total = reference_slowest(records, 20)
    assert report_fleet.slowest_latency(view, 20) == expected
    assert len(view.latency_entries) == total
    assert report_model.latency_rows(records) == reference_latency_rows(records)
    assert report_model.ReportView(records, {}).latency == reference_latency_rows(records)


def test_the_markdown_latency_section_names_the_slowest_of_all():
    records = latency_records(3, 400)
    lines = report_markdown._latency(report_model.ReportView(records, {}))
    total = len(reference_latency_rows(records))
    assert "The %d slowest of %d latency results (all in results.json)." % (report_markdown.WORST_ROWS, total) \
        in lines
    assert report_markdown._latency(report_model.ReportView([], {})) == []
