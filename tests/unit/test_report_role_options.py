"""The report action's arguments from the report role's variables (role_options: true)."""

import json
import os
from unittest import mock

from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import report as report_action
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import report_role_options as ro

ROLE_VALUES = {
    "commcheck_run_id": "run-7",
    "commcheck_report_dir": "/reports",
    "commcheck_history_dir": "/history",
    "commcheck_report_from_history": "run-3",
    "commcheck_report_compare": False,
    "commcheck_baseline_runs": 9,
    "commcheck_baseline_run": "run-1",
    "commcheck_baseline_max_age": "30d",
    "commcheck_baseline_min_runs": 2,
    "commcheck_regression_threshold": 0.35,
    "commcheck_regression_thresholds": {"bw_gbps": 0.1},
    "commcheck_baseline_ignore_params": ["round"],
    "commcheck_report_formats": ["json", "md"],
    "commcheck_report_junit_regression_fails": False,
    "commcheck_report_index": True,
    "commcheck_report_index_runs": 4,
    "commcheck_report_index_points": 11,
    "commcheck_report_index_rows": 12,
}
PUBLISHED = [{"host": "node-b", "check": "rdma_bw"}, {"host": "node-a", "check": "rdma_bw"}]


def _args(args, values, published=None):
    return ro.role_args(args, values.get, lambda: published)


def test_every_argument_comes_from_its_own_role_variable():
    full = _args({"role_options": True, "run_subdir": True}, ROLE_VALUES, PUBLISHED)
    assert full == {
        "run_subdir": True, "run_id": "run-7", "report_dir": "/reports", "history_dir": "/history",
        "history_run": "run-3", "compare": False, "baseline_runs": 9, "baseline_run": "run-1",
        "baseline_max_age": "30d", "min_runs": 2, "threshold": 0.35, "thresholds": {"bw_gbps": 0.1},
        "ignore_params": ["round"], "formats": ["json", "md"], "regression_fails": False, "index": True,
        "index_runs": 4, "index_points": 11, "index_rows": 12, "records": PUBLISHED,
    }


def test_a_role_variable_replaces_the_tasks_value_an_unset_one_keeps_it():
    values = dict(ROLE_VALUES, commcheck_history_dir="")
    full = _args({"report_dir": "/elsewhere", "history_dir": "/given", "records": []}, values, PUBLISHED)
    assert full["report_dir"] == "/reports"
    assert full["history_dir"] == "/given"
    assert full["records"] == PUBLISHED


def test_an_empty_text_leaves_only_the_optional_names_unset():
    values = dict(ROLE_VALUES, commcheck_history_dir="", commcheck_report_from_history="", commcheck_baseline_run="",
                  commcheck_baseline_max_age="", commcheck_run_id="", commcheck_report_compare=None)
    full = _args({}, values)
    assert not {"history_dir", "history_run", "baseline_run", "baseline_max_age", "compare"} & set(full)
    # an empty run id is the caller's (the action refuses it), not "unset"
    assert full["run_id"] == ""
    assert full["index_runs"] == 4


def test_the_records_are_the_roles_unless_none_then_the_published_ones():
    own = [{"host": "node-c", "check": "tcp_bw"}]
    assert _args({}, dict(ROLE_VALUES, commcheck_report_records=own), PUBLISHED)["records"] == own
    assert _args({}, dict(ROLE_VALUES, commcheck_report_records=[]), PUBLISHED)["records"] == []
    assert _args({}, ROLE_VALUES, PUBLISHED)["records"] == PUBLISHED
    assert _args({}, ROLE_VALUES, None)["records"] == []


def test_the_action_reads_the_role_variables_and_the_published_records(tmp_path):
    task = mock.MagicMock()
    task.args = {"role_options": True, "run_subdir": True, "return_records": False}
    task.check_mode = False
    task.async_val = 0
    task.diff = False
    templar = mock.MagicMock()
    templar.template.side_effect = lambda value: value
    action = report_action.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(),
                                        templar=templar, shared_loader_obj=mock.MagicMock())
    records = [dict(record, verdict="pass", kind="rdma") for record in PUBLISHED]
    task_vars = dict(ROLE_VALUES, commcheck_report_dir=str(tmp_path), commcheck_history_dir="",
                     commcheck_report_from_history="", commcheck_baseline_run="", commcheck_report_records=None,
                     hostvars={"node-b": {}, "localhost": {"commcheck_run_records": records}})
    result = action.run(task_vars=task_vars)
    assert not result.get("failed"), result
    assert result["run_id"] == "run-7"
    assert result["report_dir"] == os.path.join(str(tmp_path), "run-7")
    assert sorted(result["files"]) == ["json", "md"]
    with open(result["files"]["json"]) as stream:
        written = json.load(stream)
    assert sorted(record["host"] for record in written["records"]) == ["node-a", "node-b"]
