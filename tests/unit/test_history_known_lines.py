# -*- coding: utf-8 -*-
"""The lines of the judged run, read once: the report's baseline passes over them unread (history.LinesOfRun).

A quarter of a 128-host mesh's history is the run being judged; the baseline
never takes it, so the lines the run's own read found are not decoded again.
What the baseline and the read report say must be what they said before.
"""
import json
import os
import shutil
from unittest import mock

from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import report as report_action
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history_baseline

RUN = "now"


def _line(run, day, host, peer, bw, kind="rdma_bw", verdict="pass", **extra):
    record = {"schema": 1, "run_id": run, "time": "2026-12-%02dT10:00:00.000000Z" % day, "kind": kind,
              "host": host, "peer": peer, "verdict": verdict, "params": {"device": "mlx5_0"},
              "metrics": {"bw_gbps": bw}}
    record.update(extra)
    return json.dumps(record, separators=(",", ":"))


def _history(directory):
    """Three earlier runs and the judged one, their lines interleaved as concurrent writers leave them; an
    earlier run's line that names the judged run (its raw text matches the run's token); a corrupt line that
    names it too; a line of the judged run in a second month file."""
    os.makedirs(directory)
    december = []
    for day, run in ((1, "e1"), (2, "e2"), (3, "e3")):
        for host, peer, bw in (("a", "b", 90.0 + day), ("b", "c", 80.0 + day), ("c", "a", 70.0 + day)):
            december.append(_line(run, day, host, peer, bw))
            if run == "e2":
                december.append(_line(RUN, 4, host, peer, bw - 40.0, verdict="fail"))
    december.insert(3, _line("e3", 3, "a", "c", 60.0, evidence=['rerun of "run_id":"now"']))
    december.insert(5, '{"run_id":"now","kind":"rdma_bw",')
    december.append(_line(RUN, 4, "a", "c", 10.0, verdict="fail"))
    with open(os.path.join(directory, "history-2026-12.jsonl"), "w") as handle:
        handle.write("\n".join(december) + "\n")
    with open(os.path.join(directory, "history-2026-11.jsonl"), "w") as handle:
        handle.write(_line("e0", 1, "a", "b", 95.0) + "\n" + _line(RUN, 30, "b", "c", 5.0) + "\n")


def _judged(directory, known):
    report = history.ReadReport()
    records = history.query(directory, run_id=RUN, report=report, note=known)
    compared = history_baseline.compare_with_history(records, directory, k=5, exclude_runs=[RUN], min_runs=1,
                                                     report=report, known=known)
    return compared, report


def test_the_baseline_without_the_runs_lines_is_the_baseline_with_them(tmp_path):
    directory = str(tmp_path / "history")
    _history(directory)
    known = history.LinesOfRun(RUN)
    skipping, report = _judged(directory, known)
    reading, reference = _judged(directory, None)
    assert skipping == reading
    assert [r["baseline"]["n"] for r in skipping if r.get("baseline")] == [3, 4, 3, 3, 1]
    # the same lines, the same problems; the run's five whole lines decoded once, not twice
    assert report.problems == reference.problems and len(report.corrupt) == 2
    assert report.lines == reference.lines and report.parsed == reference.parsed - 5
    noted = sorted(len(numbers) for numbers in known.by_file.values())
    assert noted == [1, 4]


def test_a_history_file_replaced_since_the_runs_read_is_read_whole(tmp_path):
    directory = str(tmp_path / "history")
    _history(directory)
    known = history.LinesOfRun(RUN)
    report = history.ReadReport()
    records = history.query(directory, run_id=RUN, report=report, note=known)
    # rewritten between the two reads: an earlier run's line where a line of the run was
    path = os.path.join(directory, "history-2026-12.jsonl")
    with open(path) as handle:
        lines = handle.read().splitlines()
    first = next(i for i, text in enumerate(lines) if text.startswith('{"schema":1,"run_id":"now"'))
    lines[first] = _line("e4", 4, "a", "b", 50.0)
    os.remove(path)
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    skipping = history_baseline.compare_with_history(records, directory, k=5, exclude_runs=[RUN], min_runs=1,
                                                     report=history.ReadReport(), known=known)
    reading = history_baseline.compare_with_history(records, directory, k=5, exclude_runs=[RUN], min_runs=1,
                                                    report=history.ReadReport())
    assert skipping == reading
    assert "e4" in next(r for r in skipping if r["host"] == "a" and r["peer"] == "b")["baseline"]["runs"]


def test_the_lines_of_a_run_the_baseline_takes_are_never_passed_over(tmp_path):
    directory = str(tmp_path / "history")
    _history(directory)
    known = history.LinesOfRun("e2")
    history.query(directory, run_id="e2", note=known)
    records = history.query(directory, run_id=RUN)
    report, reference = history.ReadReport(), history.ReadReport()
    skipping = history_baseline.compare_with_history(records, directory, k=5, exclude_runs=[RUN], min_runs=1,
                                                     report=report, known=known)
    reading = history_baseline.compare_with_history(records, directory, k=5, exclude_runs=[RUN], min_runs=1,
                                                    report=reference)
    assert skipping == reading and report.parsed == reference.parsed
    assert sum("e2" in r["baseline"]["runs"] for r in skipping if r.get("baseline")) == 4


def test_the_report_of_a_run_from_the_history_notes_its_lines_for_the_baseline(tmp_path):
    directory = str(tmp_path / "history")
    _history(directory)
    for wanted in (RUN, "last"):
        report = history.ReadReport()
        args = {"records": [], "history_run": wanted, "history_dir": directory, "run_id": None}
        records, run_id, _until, known = report_action.ActionModule._records_of_the_run(None, args, report)
        assert run_id == RUN and known.run_id == RUN and len(records) == 5
        assert sorted(len(numbers) for numbers in known.by_file.values()) == [1, 4]
    copied = str(tmp_path / "copy")
    shutil.copytree(directory, copied)
    given = {"records": [{"kind": "rdma_bw", "host": "a", "peer": "b", "verdict": "pass"}], "history_run": RUN,
             "history_dir": copied, "run_id": "given"}
    assert report_action.ActionModule._records_of_the_run(None, given, history.ReadReport())[3] is None


def test_a_bad_line_read_by_the_run_and_by_the_baseline_is_one_problem(tmp_path):
    directory = str(tmp_path / "history")
    _history(directory)
    task = mock.MagicMock()
    task.args = {"history_dir": directory, "history_run": RUN, "report_dir": str(tmp_path / "reports"),
                 "run_subdir": True, "compare": True, "min_runs": 1, "return_records": False}
    task.check_mode, task.async_val, task.diff = False, 0, False
    action = report_action.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(),
                                        templar=mock.MagicMock(), shared_loader_obj=mock.MagicMock())
    result = action.run(task_vars={})
    assert not result.get("failed"), result
    # the corrupt line names the run and holds a baseline kind: both reads pass over it, one problem
    assert [(p["line"], p["reason"][:9]) for p in result["history_problems"]] == [(6, "not JSON:")]
    assert result["warnings"][0].startswith("skipped 1 bad history line(s): ")
