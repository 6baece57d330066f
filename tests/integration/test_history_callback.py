# -*- coding: utf-8 -*-
"""The commcheck_history callback under real ansible-playbook and ansible_runner.run() (localhost only)."""
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_BIN = os.path.dirname(sys.executable)
COLLECTIONS = os.path.join(REPO, ".build", "collections")
CALLBACK = "clusterops.commcheck.commcheck_history"
SECRET = "hunter2-do-not-store"

PLAYBOOK = """
- name: Publish records the way the check roles do
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Publish two links
      clusterops.commcheck.record:
        records:
          - {kind: tcp_bw, host: a, peer: b, params: {op: tcp, password: %(secret)s}, metrics: {bw_gbps: 9.5}, verdict: pass}
          - {kind: tcp_bw, host: b, peer: a, params: {op: tcp}, metrics: {bw_gbps: 1.5}, verdict: fail,
             cause: "slow", evidence: ["iperf3 --password=%(secret)s"]}
    - name: Publish one record per loop item
      clusterops.commcheck.record:
        records:
          - {kind: discover, host: "{{ item }}", verdict: pass}
      loop: [h1, h2, h3]
    - name: A no_log task keeps its records out of the history
      clusterops.commcheck.record:
        records:
          - {kind: finding, host: nolog, verdict: fail, cause: "%(secret)s"}
      no_log: true
    - name: Show the run id the tasks see
      ansible.builtin.debug:
        msg: "RUNID={{ lookup('ansible.builtin.env', 'COMMCHECK_RUN_ID') }} DIR={{ lookup('ansible.builtin.env', 'COMMCHECK_HISTORY_DIR') }}"
    - name: Publish a summary for set_stats
      ansible.builtin.set_stats:
        data:
          commcheck_summary: {verdict: fail}
        per_host: false
        aggregate: false
""" % {"secret": SECRET}


def _env(tmp_path, **extra):
    env = dict(os.environ)
    for key in ("COMMCHECK_RUN_ID", "JOB_ID", "AWX_JOB_ID", "ANSIBLE_CONFIG"):
        env.pop(key, None)
    env.update({
        "ANSIBLE_COLLECTIONS_PATH": COLLECTIONS,
        "ANSIBLE_CALLBACKS_ENABLED": CALLBACK,
        "COMMCHECK_HISTORY_DIR": str(tmp_path / "history"),
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"),
        "ANSIBLE_NOCOLOR": "1",
    })
    env.update(extra)
    return env


def _playbook(tmp_path):
    path = tmp_path / "publish.yml"
    path.write_text(PLAYBOOK)
    return str(path)


def _history(tmp_path):
    directory = tmp_path / "history"
    files = sorted(os.listdir(str(directory)))
    assert len(files) == 1 and files[0].startswith("history-") and files[0].endswith(".jsonl")
    text = (directory / files[0]).read_text()
    assert text.endswith("\n")
    return text, [json.loads(line) for line in text.splitlines()]


def _run(tmp_path, args=(), **env):
    proc = subprocess.run([os.path.join(VENV_BIN, "ansible-playbook"), "-i", "localhost,", _playbook(tmp_path)]
                          + list(args), env=_env(tmp_path, **env), capture_output=True, text=True, check=False, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def _check_lines(text, lines, run_id=None):
    assert SECRET not in text and "nolog" not in text
    records = [r for r in lines if r["kind"] != "summary"]
    assert [(r["kind"], r["host"]) for r in records] == [
        ("tcp_bw", "a"), ("tcp_bw", "b"), ("discover", "h1"), ("discover", "h2"), ("discover", "h3")]
    for line in lines:
        assert line["schema"] == 1 and line["time"].endswith("Z") and len(line["time"]) == 27
    assert len(set(line["run_id"] for line in lines)) == 1
    if run_id:
        assert lines[0]["run_id"] == run_id
    assert records[0]["params"] == {"op": "tcp"}
    [summary] = [r for r in lines if r["kind"] == "summary"]
    assert lines[-1] is summary
    assert summary["counts"] == {"pass": 4, "fail": 1}
    assert summary["metrics"]["records"] == 5
    assert summary["hosts"] == {"ok": ["localhost"], "failed": [], "unreachable": []}
    assert summary["playbook"] == "publish.yml"
    assert summary["stats"] == {"commcheck_summary": {"verdict": "fail"}}
    return summary


def test_ansible_playbook_writes_records_and_summary_without_secrets(tmp_path):
    proc = _run(tmp_path)
    text, lines = _history(tmp_path)
    _check_lines(text, lines)
    run_id = lines[0]["run_id"]
    assert "RUNID=%s" % run_id in proc.stdout  # tasks see the callback's run id ...
    assert "DIR=%s" % (tmp_path / "history") in proc.stdout  # ... and its directory


def test_run_id_from_environment_extra_vars_and_awx_job_id(tmp_path):
    _run(tmp_path, COMMCHECK_RUN_ID="svc-123")
    _run(tmp_path, args=["-e", "commcheck_run_id=from-extra-vars"], COMMCHECK_RUN_ID="svc-ignored")
    _run(tmp_path, JOB_ID="4711")
    _text, lines = _history(tmp_path)
    assert [r["run_id"] for r in lines if r["kind"] == "summary"] == ["svc-123", "from-extra-vars", "awx-4711"]


def test_ini_options_and_check_mode(tmp_path):
    cfg = tmp_path / "ansible.cfg"
    cfg.write_text("[defaults]\ncallbacks_enabled = %s\n[commcheck_history]\nhistory_dir = %s\nrun_id = ini-run\n"
                   % (CALLBACK, tmp_path / "history"))
    env = _env(tmp_path, ANSIBLE_CONFIG=str(cfg))
    for key in ("ANSIBLE_CALLBACKS_ENABLED", "COMMCHECK_HISTORY_DIR"):
        env.pop(key)
    argv = [os.path.join(VENV_BIN, "ansible-playbook"), "-i", "localhost,", _playbook(tmp_path)]
    proc = subprocess.run(argv + ["--check"], env=env, capture_output=True, text=True, check=False, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (tmp_path / "history").exists()  # nothing in check mode
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _text, lines = _history(tmp_path)
    assert set(r["run_id"] for r in lines) == {"ini-run"}


def test_not_enabled_means_nothing_written(tmp_path):
    env = _env(tmp_path)
    env.pop("ANSIBLE_CALLBACKS_ENABLED")
    proc = subprocess.run([os.path.join(VENV_BIN, "ansible-playbook"), "-i", "localhost,", _playbook(tmp_path)],
                          env=env, capture_output=True, text=True, check=False, timeout=180)
    assert proc.returncode == 0
    assert not (tmp_path / "history").exists()


def test_unwritable_history_warns_and_the_play_goes_on(tmp_path):
    blocker = tmp_path / "history"
    blocker.write_text("a file, not a directory")
    proc = _run(tmp_path)
    assert "commcheck_history: cannot write history" in proc.stdout + proc.stderr


def test_under_ansible_runner_with_its_own_stdout_callback(tmp_path):
    ansible_runner = pytest.importorskip("ansible_runner")
    private = tmp_path / "runner"
    (private / "project").mkdir(parents=True)
    (private / "project" / "publish.yml").write_text(PLAYBOOK)
    env = _env(tmp_path, COMMCHECK_RUN_ID="runner-1")
    envvars = dict((k, env[k]) for k in ("ANSIBLE_COLLECTIONS_PATH", "ANSIBLE_CALLBACKS_ENABLED",
                                         "COMMCHECK_HISTORY_DIR", "COMMCHECK_RUN_ID", "ANSIBLE_LOCAL_TEMP"))
    old = dict(os.environ)
    try:
        for key in ("JOB_ID", "AWX_JOB_ID", "COMMCHECK_RUN_ID"):
            os.environ.pop(key, None)
        os.environ["PATH"] = VENV_BIN + os.pathsep + os.environ.get("PATH", "")  # runner finds ansible-playbook
        result = ansible_runner.run(private_data_dir=str(private), playbook="publish.yml", inventory="localhost",
                                    envvars=envvars, extravars={"ansible_connection": "local"}, quiet=True,
                                    timeout=180)
    finally:
        os.environ.clear()
        os.environ.update(old)
    assert result.status == "successful", result.stdout.read()
    assert result.stats["ok"]["localhost"] >= 5
    stats_events = [e for e in result.events if e.get("event") == "playbook_on_stats"]
    assert stats_events[0]["event_data"]["artifact_data"] == {"commcheck_summary": {"verdict": "fail"}}
    text, lines = _history(tmp_path)
    _check_lines(text, lines, run_id="runner-1")
