# -*- coding: utf-8 -*-
"""The commcheck_history callback under real ansible-playbook and ansible_runner.run() (localhost only).

Fast tier: records and summary without secrets, a warn run's summary, an unwritable history, a run stopped by
SIGINT, a bad history directory. Full tier (``pytest.mark.full``): the run id's sources, ini options and
check mode, the callback not enabled, ansible-runner's own stdout callback, the other signals, a run stopped
by an error, the other bad directories, the lookup.
"""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history

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
    - name: Set the run id once, before any record (as the one-click role does)
      ansible.builtin.set_fact:
        commcheck_run_id: >-
          {{ commcheck_run_id | default('', true) or lookup('clusterops.commcheck.commcheck_history', setting='run_id') }}
      run_once: true
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
        msg: "RUNID={{ commcheck_run_id }} DIR={{ lookup('clusterops.commcheck.commcheck_history', setting='history_dir') }}"
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
    assert summary["verdict"] == "fail" and summary["interrupted"] is False
    return summary


def test_ansible_playbook_writes_records_and_summary_without_secrets(tmp_path):
    proc = _run(tmp_path)
    text, lines = _history(tmp_path)
    _check_lines(text, lines)
    run_id = lines[0]["run_id"]
    assert "RUNID=%s" % run_id in proc.stdout  # the callback writes the run id the play set ...
    assert "DIR=%s" % (tmp_path / "history") in proc.stdout  # ... and its directory


@pytest.mark.full
def test_run_id_from_environment_extra_vars_and_awx_job_id(tmp_path):
    _run(tmp_path, COMMCHECK_RUN_ID="svc-123")
    _run(tmp_path, args=["-e", "commcheck_run_id=from-extra-vars"], COMMCHECK_RUN_ID="svc-ignored")
    _run(tmp_path, JOB_ID="4711")
    _text, lines = _history(tmp_path)
    assert [r["run_id"] for r in lines if r["kind"] == "summary"] == ["svc-123", "from-extra-vars", "awx-4711"]


@pytest.mark.full
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


@pytest.mark.full
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


@pytest.mark.full
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


# --------------------------------------------------------------------------
# The summary line has the report's verdict
# --------------------------------------------------------------------------

WARN_PLAYBOOK = """
- name: A run the report calls WARN
  hosts: localhost
  connection: local
  gather_facts: false
  vars:
    records:
      - {kind: tcp_bw, host: a, peer: b, metrics: {bw_gbps: 9.5}, verdict: pass}
      - {kind: tcp_bw, host: b, peer: a, metrics: {bw_gbps: 7.5}, verdict: warn, cause: "slower than usual"}
  tasks:
    - name: Publish the records
      clusterops.commcheck.record:
        records: "{{ records }}"
    - name: Report on the same records
      clusterops.commcheck.report:
        records: "{{ records }}"
        report_dir: "%(reports)s"
        formats: [json]
        compare: false
"""


def test_summary_verdict_of_a_warn_run_is_the_reports_warn(tmp_path):
    playbook = tmp_path / "warn.yml"
    playbook.write_text(WARN_PLAYBOOK % {"reports": tmp_path / "reports"})
    proc = subprocess.run([os.path.join(VENV_BIN, "ansible-playbook"), "-i", "localhost,", str(playbook)],
                          env=_env(tmp_path), capture_output=True, text=True, check=False, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(str(tmp_path / "reports" / "results.json")) as handle:
        report = json.load(handle)
    _text, lines = _history(tmp_path)
    [summary] = [r for r in lines if r["kind"] == "summary"]
    assert report["summary"]["verdict"] == "warn"
    assert summary["verdict"] == "warn" and summary["counts"] == {"pass": 1, "warn": 1}


# --------------------------------------------------------------------------
# Interrupted runs keep their records and end with an "interrupted" summary
# --------------------------------------------------------------------------

# The second task holds the run until the test releases it (or a 900 s safety deadline passes).
HOLD = ("import os, sys, time\n"
        "open(sys.argv[1], 'w').close()\n"
        "deadline = time.monotonic() + 900\n"
        "while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:\n"
        "    time.sleep(0.1)\n")

INTERRUPT_PLAYBOOK = """
- name: A run that is stopped in the middle
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Publish a record
      clusterops.commcheck.record:
        records:
          - {kind: tcp_bw, host: a, peer: b, metrics: {bw_gbps: 7.5}, verdict: warn}
    - name: Wait for the test
      ansible.builtin.command:
        argv: [%(python)s, -c, %(hold)s, %(started)s, %(release)s]
    - name: Never reached
      clusterops.commcheck.record:
        records:
          - {kind: never, host: a, verdict: pass}
"""


def _process_tree(pid):
    """pid and its descendants (from /proc)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as handle:
                stat = handle.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo.extend(children.get(current, []))
    return tree


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_for(condition, what, proc=None, deadline_s=180):
    """Wait for an event (a file, a history line); wide deadline, fails early if the playbook ended."""
    deadline = time.monotonic() + deadline_s
    while not condition():
        if proc is not None and proc.poll() is not None:
            raise AssertionError("ansible-playbook ended (rc %s) before %s: %s" % (
                proc.returncode, what, proc.stdout.read() if proc.stdout else ""))
        if time.monotonic() > deadline:
            raise AssertionError("no %s within %d s" % (what, deadline_s))
        time.sleep(0.05)


def _history_has(tmp_path, token):
    directory = tmp_path / "history"
    if not directory.is_dir():
        return False
    return any(token in (directory / name).read_text() for name in os.listdir(str(directory)))


@pytest.mark.parametrize("signame, rc", [("SIGINT", 99),
                                         pytest.param("SIGTERM", -signal.SIGTERM, marks=pytest.mark.full),
                                         pytest.param("SIGHUP", -signal.SIGHUP, marks=pytest.mark.full),
                                         pytest.param("SIGKILL", -signal.SIGKILL, marks=pytest.mark.full)])
def test_a_stopped_run_keeps_its_records_and_says_how_it_ended(tmp_path, signame, rc):
    started, release = tmp_path / "started", tmp_path / "release"
    playbook = tmp_path / "stopped.yml"
    playbook.write_text(INTERRUPT_PLAYBOOK % dict((k, json.dumps(str(v))) for k, v in (
        ("python", sys.executable), ("hold", HOLD), ("started", started), ("release", release))))
    argv = [os.path.join(VENV_BIN, "ansible-playbook"), "-i", "localhost,", "-e",
            "ansible_python_interpreter=%s" % sys.executable, str(playbook)]
    proc = subprocess.Popen(argv, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    tree = [proc.pid]
    try:
        _wait_for(lambda: _history_has(tmp_path, '"kind":"tcp_bw"'), "record line in the history", proc)
        _wait_for(started.exists, "start of the second task", proc)
        tree = _process_tree(proc.pid)
        proc.send_signal(getattr(signal, signame))
        output = proc.communicate(timeout=180)[0]
    finally:
        release.write_text("go")      # the held task ends, also in workers the controller left behind
        if proc.poll() is None:
            proc.kill()
            proc.wait(60)
        _wait_for(lambda: not any(_alive(pid) for pid in tree), "end of the run's processes", deadline_s=180)
    assert proc.returncode == rc, output
    report = history.ReadReport()
    lines = history.query(str(tmp_path / "history"), include_summary=True, report=report)
    assert report.problems == []
    assert [(r["kind"], r["verdict"]) for r in lines if r["kind"] != "summary"] == [("tcp_bw", "warn")]
    [run] = history.list_runs(str(tmp_path / "history"))
    assert run["records"] == 1
    if signame == "SIGKILL":   # nothing can catch it: records and no summary, which readers call incomplete
        assert run["summary"] is None and run["status"] == "incomplete"
        return
    [summary] = [r for r in lines if r["kind"] == "summary"]
    assert run["status"] == "interrupted"
    assert summary["verdict"] == "interrupted" and summary["interrupted"] is True
    assert summary["signal"] == signame and summary["partial_verdict"] == "warn"
    assert summary["counts"] == {"warn": 1} and summary["metrics"]["records"] == 1
    assert summary["run_id"] == lines[0]["run_id"]


ERROR_PLAYBOOK = """
- name: A first play that runs
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Publish a record
      clusterops.commcheck.record:
        records:
          - {kind: tcp_bw, host: a, peer: b, metrics: {bw_gbps: 9.5}, verdict: pass}
- name: A second play that stops ansible-playbook with an error
  hosts: "{{ no_such_variable }}"
  gather_facts: false
  tasks:
    - name: Never reached
      ansible.builtin.debug:
        msg: never
"""


@pytest.mark.full
def test_a_run_stopped_by_an_error_ends_with_an_interrupted_summary(tmp_path):
    playbook = tmp_path / "error.yml"
    playbook.write_text(ERROR_PLAYBOOK)
    proc = subprocess.run([os.path.join(VENV_BIN, "ansible-playbook"), "-i", "localhost,", str(playbook)],
                          env=_env(tmp_path), capture_output=True, text=True, check=False, timeout=180)
    assert proc.returncode != 0 and "no_such_variable" in proc.stdout + proc.stderr
    [run] = history.list_runs(str(tmp_path / "history"))
    assert run["records"] == 1 and run["status"] == "interrupted"
    assert run["summary"]["signal"] is None and run["summary"]["partial_verdict"] == "pass"


# --------------------------------------------------------------------------
# The history directory
# --------------------------------------------------------------------------

@pytest.mark.parametrize("value, message", [
    pytest.param("", "COMMCHECK_HISTORY_DIR is empty", marks=pytest.mark.full),
    ("relative/history", "COMMCHECK_HISTORY_DIR must be an absolute path"),
    pytest.param("%(tmp)s/a/../history", "COMMCHECK_HISTORY_DIR must not have a '..' component",
                 marks=pytest.mark.full),
    pytest.param("%(tmp)s/his\ntory", "COMMCHECK_HISTORY_DIR contains a NUL byte or a line break",
                 marks=pytest.mark.full),
])
def test_a_bad_history_dir_turns_the_history_off_with_a_warning(tmp_path, value, message):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    home = tmp_path / "home"       # the default directory would be under HOME: it must stay unused too
    home.mkdir()
    env = _env(tmp_path, COMMCHECK_HISTORY_DIR=value % {"tmp": tmp_path}, HOME=str(home))
    proc = subprocess.run([os.path.join(VENV_BIN, "ansible-playbook"), "-i", "localhost,", _playbook(tmp_path)],
                          cwd=str(cwd), env=env, capture_output=True, text=True, check=False, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr       # the play goes on
    output = " ".join((proc.stdout + proc.stderr).split())
    assert "commcheck_history: the history is OFF for this run, nothing is written: %s" % message in output
    assert os.listdir(str(cwd)) == []
    written = [os.path.join(root, name) for root, _dirs, names in os.walk(str(tmp_path))
               for name in names if name.endswith(".jsonl")]
    assert written == []
    assert not os.path.exists(os.path.join(str(home), ".ansible", "commcheck"))


@pytest.mark.full
def test_the_lookup_refuses_an_empty_history_dir(tmp_path):
    env = _env(tmp_path, COMMCHECK_HISTORY_DIR="")
    env.pop("ANSIBLE_CALLBACKS_ENABLED")
    proc = subprocess.run([os.path.join(VENV_BIN, "ansible"), "localhost", "-c", "local", "-m", "ansible.builtin.debug",
                           "-a", "msg={{ query('clusterops.commcheck.commcheck_history') }}"],
                          cwd=str(tmp_path), env=env, capture_output=True, text=True, check=False, timeout=180)
    assert proc.returncode != 0
    assert "commcheck_history lookup: history_dir is empty" in " ".join((proc.stdout + proc.stderr).split())
