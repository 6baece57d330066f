# -*- coding: utf-8 -*-
"""The run id is set once and passed explicitly: the commcheck_history callback takes it from the play's
extra variable or commcheck_run_id fact, the lookup resolves it for the roles, and nothing goes through the
environment."""
import json
import os

import pytest

from ansible_collections.clusterops.commcheck.plugins.callback import commcheck_history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history


class _VariableManager(object):
    def __init__(self, extra_vars):
        self.extra_vars = extra_vars


class _Play(object):
    def __init__(self, extra_vars=None):
        self._manager = _VariableManager(extra_vars or {})

    def get_variable_manager(self):
        return self._manager


class _Named(object):
    def __init__(self, name):
        self.name = name
        self.no_log = False


class _Result(object):
    def __init__(self, data, host="node-a"):
        self._result = data
        self._host = _Named(host)
        self._task = _Named("task")


class _Display(object):
    def __init__(self):
        self.warnings = []

    def warning(self, message):
        self.warnings.append(message)


def _callback(tmp_path, run_id=None):
    callback = commcheck_history.CallbackModule()
    callback._plugin_options = {"write_summary": True, "fsync": False, "run_id": run_id}
    callback._dir, callback._fsync = str(tmp_path), False
    callback._display = _Display()
    return callback


def _record_result(verdict="pass"):
    return _Result({"commcheck_records": [{"kind": "tcp_bw", "host": "node-a", "peer": "node-b",
                                           "verdict": verdict}]})


def _run_ids(tmp_path):
    ids = []
    for name in sorted(os.listdir(str(tmp_path))):
        with open(os.path.join(str(tmp_path), name)) as handle:
            ids.extend(json.loads(line)["run_id"] for line in handle if line.strip())
    return ids


@pytest.fixture(autouse=True)
def _no_run_id_in_environment(monkeypatch):
    for name in ("COMMCHECK_RUN_ID", "COMMCHECK_HISTORY_DIR", "JOB_ID", "AWX_JOB_ID"):
        monkeypatch.delenv(name, raising=False)


def test_resolve_run_id_takes_the_first_plain_id_then_the_environment_then_a_new_one():
    assert history.resolve_run_id(["  from-var ", "setting"], environ={"COMMCHECK_RUN_ID": "svc"}) == "from-var"
    assert history.resolve_run_id(["", None, "{{ x }}", "setting"], environ={}) == "setting"
    assert history.resolve_run_id([None], environ={"COMMCHECK_RUN_ID": "svc", "JOB_ID": "7"}) == "svc"
    assert history.resolve_run_id([], environ={"JOB_ID": "7"}) == "awx-7"
    assert len(history.resolve_run_id([], environ={})) == len("20260131T235959Z-1a2b3c")


def test_a_split_run_takes_the_id_every_slice_shares_or_refuses():
    env = {"JOB_ID": "7"}
    assert history.resolve_run_id(["given"], environ=env, slices=2) == "given"
    assert history.resolve_run_id([None], environ=dict(env, COMMCHECK_RUN_ID="svc"), slices=2) == "svc"
    # AWX job slices: each slice has its own JOB_ID, the workflow job is theirs in common
    assert history.resolve_run_id([None], environ=env, slices=2, workflow_job_id=42) == "awx-wf-42"
    with pytest.raises(ValueError, match="needs one run id for all of them"):
        history.resolve_run_id([None], environ=env, slices=2)
    assert history.resolve_run_id([None], environ=env, slices=1, workflow_job_id=42) == "awx-7"


def test_plain_run_id():
    assert history.plain_run_id(" r1 ") == "r1"
    for value in ("", "  ", None, 5, "{{ commcheck_run_id }}"):
        assert history.plain_run_id(value) is None


def test_the_fact_the_role_sets_names_the_run_and_nothing_goes_into_the_environment(tmp_path):
    callback = _callback(tmp_path, run_id=None)
    callback.v2_playbook_on_play_start(_Play())
    assert callback._run_id is None                     # not decided before the play says it
    callback.v2_runner_on_ok(_Result({"ansible_facts": {"commcheck_run_id": "role-1"}}))
    callback.v2_runner_on_ok(_record_result())
    assert _run_ids(tmp_path) == ["role-1"]
    assert "COMMCHECK_RUN_ID" not in os.environ and "COMMCHECK_HISTORY_DIR" not in os.environ
    assert callback._display.warnings == []


def test_the_extra_variable_wins_and_the_same_fact_is_no_news(tmp_path):
    callback = _callback(tmp_path, run_id="from-setting")
    callback.v2_playbook_on_play_start(_Play({"commcheck_run_id": "from-extra-vars"}))
    callback.v2_runner_on_ok(_Result({"ansible_facts": {"commcheck_run_id": "from-extra-vars"}}))
    callback.v2_runner_on_ok(_record_result())
    assert _run_ids(tmp_path) == ["from-extra-vars"]
    assert callback._display.warnings == []


def test_without_a_variable_or_fact_the_setting_then_a_new_id(tmp_path, monkeypatch):
    callback = _callback(tmp_path / "a", run_id="from-setting")
    callback.v2_playbook_on_play_start(_Play())
    callback.v2_runner_on_ok(_record_result())
    assert _run_ids(tmp_path / "a") == ["from-setting"]
    monkeypatch.setenv("JOB_ID", "42")
    callback = _callback(tmp_path / "b", run_id=None)
    callback.v2_playbook_on_play_start(_Play())
    callback.v2_runner_on_ok(_record_result())
    assert _run_ids(tmp_path / "b") == ["awx-42"]


def test_a_fact_after_written_lines_does_not_split_the_run(tmp_path):
    callback = _callback(tmp_path, run_id="first")
    callback.v2_playbook_on_play_start(_Play())
    callback.v2_runner_on_ok(_record_result())
    callback.v2_runner_on_ok(_Result({"ansible_facts": {"commcheck_run_id": "late"}}))
    callback.v2_runner_on_ok(_record_result())
    assert _run_ids(tmp_path) == ["first", "first"]
    assert len(callback._display.warnings) == 1 and "late" in callback._display.warnings[0]


PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  roles:
    - role: clusterops.commcheck.report
      vars:
        commcheck_report_records: [{kind: tcp_bw, host: a, peer: b, verdict: pass, metrics: {bw_gbps: 9.0}}]
        commcheck_report_dir: "%(reports)s"
        commcheck_report_formats: [json]
  post_tasks:
    - name: the lookup's settings, as the roles see them
      ansible.builtin.copy:
        dest: "%(out)s"
        content: "{{ {'run_id': commcheck_run_id, 'history_dir': commcheck_history_dir} | to_json }}"
"""


@pytest.mark.parametrize("environment, expected", [({}, None), ({"COMMCHECK_RUN_ID": "svc-3"}, "svc-3")])
def test_the_report_role_and_the_history_share_one_run_id_without_the_environment(tmp_path, environment, expected):
    """One real run: the report role sets the id once, the report directory and the history's summary use it,
    and the report compares with the directory the callback writes (its COMMCHECK_HISTORY_DIR setting)."""
    import subprocess
    import sys

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    history_dir, reports, out = tmp_path / "history", tmp_path / "reports", tmp_path / "seen.json"
    playbook = tmp_path / "play.yml"
    playbook.write_text(PLAYBOOK % {"reports": reports, "out": out})
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "COMMCHECK_")))
    env.update(ANSIBLE_COLLECTIONS_PATH=os.path.join(repo, ".build", "collections"),
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CALLBACKS_ENABLED="clusterops.commcheck.commcheck_history",
               COMMCHECK_HISTORY_DIR=str(history_dir), COMMCHECK_HISTORY_FSYNC="false", **environment)
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,",
                           "-c", "local", "-e", "ansible_python_interpreter=%s" % sys.executable, str(playbook)],
                          env=env, capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = json.loads(out.read_text())
    assert seen["history_dir"] == str(history_dir)
    run_id = seen["run_id"]
    assert run_id == expected if expected else len(run_id) == len("20260131T235959Z-1a2b3c")
    assert sorted(os.listdir(str(reports))) == sorted([run_id, "index.html"])   # the run, and the results page
    results = json.loads((reports / run_id / "results.json").read_text())
    assert results["run_id"] == run_id and results["baseline"]["history_dir"] == str(history_dir)
    assert set(_run_ids(history_dir)) == {run_id}


def test_no_plugin_or_role_sets_or_reads_the_run_id_through_the_environment():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for folder in ("plugins", "roles", "playbooks"):
        for directory, _dirs, files in os.walk(os.path.join(root, folder)):
            for name in files:
                if not name.endswith((".py", ".yml", ".yaml", ".j2")):
                    continue
                with open(os.path.join(directory, name)) as handle:
                    text = handle.read()
                where = os.path.join(directory, name)
                assert 'os.environ["COMMCHECK_' not in text, where
                assert "lookup('ansible.builtin.env', 'COMMCHECK_RUN_ID')" not in text or "EXAMPLES" in text, where
                assert "lookup('ansible.builtin.env', 'COMMCHECK_HISTORY_DIR')" not in text, where


def test_results_without_records_are_not_turned_into_native_types(tmp_path):
    # Ansible's own callback result: its data becomes native types (a copy of the whole
    # result, in the main process) only when a callback reads `result`.
    from ansible.executor import task_result
    if not hasattr(task_result, "CallbackTaskResult"):
        pytest.skip("ansible-core < 2.19 hands callbacks the task result itself: there is no copy to avoid")
    from ansible.inventory.host import Host
    from ansible.playbook.task import Task

    def ansible_result(data):
        return task_result.CallbackTaskResult(Host("node-a"), Task(), data, {})

    callback = _callback(tmp_path, run_id="r1")
    callback.v2_playbook_on_play_start(_Play())
    sides = ansible_result({"changed": False, "sides": [{"stdout": "x" * 1000}] * 50})
    callback.v2_runner_on_ok(sides)
    callback.v2_runner_item_on_ok(sides)
    assert "result" not in vars(sides)                # never read, so never copied
    fact = ansible_result({"ansible_facts": {"commcheck_run_id": "r1"}})
    records = ansible_result({"commcheck_records": [{"kind": "tcp_bw", "host": "node-a", "peer": "node-b",
                                                     "verdict": "pass"}]})
    callback.v2_runner_on_ok(fact)
    callback.v2_runner_on_ok(records)
    assert "result" in vars(fact) and "result" in vars(records)
    assert _run_ids(tmp_path) == ["r1"]
