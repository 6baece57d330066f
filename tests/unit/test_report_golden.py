# -*- coding: utf-8 -*-
"""The report of a fixed history reads byte for byte as it did before the report's speed-ups (issue 37 §6).

The history (tests/fixtures/report_golden/history) is benchmarks/bench_report.py's synthetic ring at 10 hosts x
8 rails: two healthy runs and the measured one with a bad host, a bad NIC, two bad links, two flaky links and
host findings, so the baseline, the culprits and the outlier rules all have work. Every file the report action
writes for it (the five formats, the run's digest and the results page) is compared with the one the tree
before the speed-ups wrote (tests/fixtures/report_golden/expected). A change that is meant to change the
report rewrites them: ``COMMCHECK_WRITE_GOLDEN=1 pytest tests/unit/test_report_golden.py``, then review the diff.
"""
import datetime
import os
import shutil
from unittest import mock

import pytest
from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import report as report_action
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_index
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import work_beside

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "report_golden")
EXPECTED = os.path.join(FIXTURE, "expected")
NOW = datetime.datetime(2026, 12, 2, 9, 30, 0, tzinfo=datetime.timezone.utc)
RUN = "golden"
FILES = sorted(report_action.FILE_NAMES.values()) + [report_index.DIGEST_NAME]
TMP_MARK = "@TMP@"


def _run_report(tmp_path):
    result = _report_result(tmp_path)
    assert not result.get("failed"), result
    return result


def _report_result(tmp_path):
    history_dir = str(tmp_path / "history")
    shutil.copytree(os.path.join(FIXTURE, "history"), history_dir)
    task = mock.MagicMock()
    task.args = {"history_dir": history_dir, "history_run": RUN, "report_dir": str(tmp_path / "reports"),
                 "run_subdir": True, "index": True, "compare": True, "min_runs": 2, "return_records": False}
    task.check_mode = False
    task.async_val = 0
    task.diff = False
    action = report_action.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(),
                                        templar=mock.MagicMock(), shared_loader_obj=mock.MagicMock())
    with mock.patch.object(history, "utc_now", return_value=NOW):
        return action.run(task_vars={})


def _written(tmp_path):
    """{name: text} of every file the report wrote, the temporary directory's path masked."""
    out = {}
    run_dir = tmp_path / "reports" / RUN
    for name in FILES:
        out[name] = (run_dir / name).read_text(encoding="utf-8")
    out[report_index.INDEX_NAME] = (tmp_path / "reports" / report_index.INDEX_NAME).read_text(encoding="utf-8")
    return dict((name, text.replace(str(tmp_path), TMP_MARK)) for name, text in out.items())


def test_the_report_of_a_fixed_history_is_what_it_was_byte_for_byte(tmp_path):
    result = _run_report(tmp_path)
    written = _written(tmp_path)
    if os.environ.get("COMMCHECK_WRITE_GOLDEN"):
        os.makedirs(EXPECTED, exist_ok=True)
        for name, text in written.items():
            with open(os.path.join(EXPECTED, name), "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
        pytest.skip("expected files written: review their diff")
    # the fixture has what the report is there to find, so the comparison covers the culprits and regressions
    assert result["summary"]["verdict"] == "fail" and result["regressions"], result["summary"]
    assert sorted(os.listdir(EXPECTED)) == sorted(written)
    for name, text in sorted(written.items()):
        with open(os.path.join(EXPECTED, name), encoding="utf-8", newline="") as handle:
            assert text == handle.read(), name


def _noting_forks(monkeypatch):
    forks = []
    real_start = work_beside.start

    def start(work, what):
        forks.append(what)
        return real_start(work, what)

    monkeypatch.setattr(work_beside, "can_fork", lambda: True)
    monkeypatch.setattr(work_beside, "start", start)
    return forks


def test_the_culprits_found_beside_the_comparison_give_the_same_files(tmp_path, monkeypatch):
    """The path a large report takes (the culprits found by a forked child while the parent compares the run
    with its history) writes what the one process writes."""
    forks = _noting_forks(monkeypatch)
    monkeypatch.setattr(report_action, "BESIDE_RECORDS", 1)
    _run_report(tmp_path)
    assert forks == ["finding the culprits"]
    for name, text in sorted(_written(tmp_path).items()):
        with open(os.path.join(EXPECTED, name), encoding="utf-8", newline="") as handle:
            assert text == handle.read(), name


def test_a_failure_of_the_child_fails_the_task_as_in_one_process(tmp_path, monkeypatch):
    def failing(_records):
        raise ValueError("a culprit without a host")

    monkeypatch.setattr(culprits, "culprits", failing)
    messages = []
    forks = _noting_forks(monkeypatch)
    for beside in (False, True):
        monkeypatch.setattr(report_action, "BESIDE_RECORDS", 1 if beside else 10 ** 9)
        result = _report_result(tmp_path / str(beside))
        assert result["failed"]
        messages.append(result["msg"])
    assert forks == ["finding the culprits"]
    assert messages[0] == messages[1] == "clusterops.commcheck.report: a culprit without a host"
