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

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "report_golden")
EXPECTED = os.path.join(FIXTURE, "expected")
NOW = datetime.datetime(2026, 12, 2, 9, 30, 0, tzinfo=datetime.timezone.utc)
RUN = "golden"
FILES = sorted(report_action.FILE_NAMES.values()) + [report_index.DIGEST_NAME]
TMP_MARK = "@TMP@"


def _run_report(tmp_path):
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
        result = action.run(task_vars={})
    assert not result.get("failed"), result
    return result


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
