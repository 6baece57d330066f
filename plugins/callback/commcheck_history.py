# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_history
type: notification
short_description: Append every commcheck check record and a run summary to a JSON-lines history
version_added: 1.0.0
description:
  - Writes one JSON line for every item of a task result's top-level C(commcheck_records) list
    (the list the C(clusterops.commcheck.record) action returns; loop items included), and one
    C(kind=summary) line per playbook run (hosts ok, failed and unreachable, record counts by verdict,
    the playbook name and the C(set_stats) data of the run).
  - Each line gets C(schema) (format version), C(run_id) (one per playbook run) and C(time)
    (UTC, ISO 8601) in addition to the record's own keys.
  - One file per month, C(history-YYYY-MM.jsonl), in the history directory. Lines are appended whole,
    with one write under an exclusive C(fcntl.flock), flushed and fsynced, so several runs may write
    to the same directory at the same time.
  - Results of C(no_log) tasks are censored by Ansible before a callback sees them and never reach
    the history; records are re-checked and anything that looks secret is dropped or masked.
  - It is a notification callback, so it works next to any stdout callback, under
    C(ansible-playbook), C(ansible_runner.run()) and AWX. Enable it with
    C(callbacks_enabled = clusterops.commcheck.commcheck_history) in C(ansible.cfg) or
    C(ANSIBLE_CALLBACKS_ENABLED=clusterops.commcheck.commcheck_history).
  - The run id is, in this order, the extra variable C(commcheck_run_id), the O(run_id) option
    (C(COMMCHECK_RUN_ID)), C(awx-<JOB_ID>) under AWX, or a new C(YYYYmmddTHHMMSSZ-xxxxxx).
    The callback puts it into the controller's C(COMMCHECK_RUN_ID) environment variable, and the history
    directory into C(COMMCHECK_HISTORY_DIR), so tasks and lookups of the run (for example the report role,
    through C(lookup('ansible.builtin.env', 'COMMCHECK_RUN_ID'))) see the same id and directory.
  - Nothing is written in check mode unless O(write_in_check_mode=true).
author:
  - commcheck developers (@clusterops)
requirements:
  - enable in ansible.cfg or with ANSIBLE_CALLBACKS_ENABLED
options:
  history_dir:
    description: Directory of the history files; created when missing.
    type: path
    default: ~/.ansible/commcheck/history
    env:
      - name: COMMCHECK_HISTORY_DIR
    ini:
      - section: commcheck_history
        key: history_dir
  run_id:
    description:
      - Run id for every line of this run, for example a service's job id.
      - The extra variable C(commcheck_run_id) takes precedence.
    type: str
    env:
      - name: COMMCHECK_RUN_ID
    ini:
      - section: commcheck_history
        key: run_id
  fsync:
    description: fsync the file after each append (turn off only for throwaway histories).
    type: bool
    default: true
    env:
      - name: COMMCHECK_HISTORY_FSYNC
    ini:
      - section: commcheck_history
        key: fsync
  write_summary:
    description: Write the C(kind=summary) line at the end of the run.
    type: bool
    default: true
    env:
      - name: COMMCHECK_HISTORY_SUMMARY
    ini:
      - section: commcheck_history
        key: write_summary
  write_in_check_mode:
    description: Also write records of runs in check mode (C(--check)).
    type: bool
    default: false
    env:
      - name: COMMCHECK_HISTORY_CHECK_MODE
    ini:
      - section: commcheck_history
        key: write_in_check_mode
notes:
  - Under AWX, the job's execution environment is thrown away after the job; point O(history_dir) at
    a persistent path exposed to jobs (for example a volume mount) to keep the history between jobs.
  - Lines of one run are written when each task finishes, so an interrupted run leaves the records of
    its finished tasks and no summary line.
seealso:
  - plugin: clusterops.commcheck.commcheck_history
    plugin_type: lookup
  - module: clusterops.commcheck.record
'''

EXAMPLES = r'''
# ansible.cfg
# [defaults]
# callbacks_enabled = clusterops.commcheck.commcheck_history
# [commcheck_history]
# history_dir = /var/lib/commcheck/history

# or from the environment
# ANSIBLE_CALLBACKS_ENABLED=clusterops.commcheck.commcheck_history \
# COMMCHECK_HISTORY_DIR=/var/lib/commcheck/history \
# COMMCHECK_RUN_ID=nightly-42 ansible-playbook -i inventory.yml clusterops.commcheck.commcheck
'''

import os
import socket

from ansible import context
from ansible.plugins.callback import CallbackBase

from ansible_collections.clusterops.commcheck.plugins.module_utils import history


class CallbackModule(CallbackBase):

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "notification"
    CALLBACK_NAME = "clusterops.commcheck.commcheck_history"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, display=None):
        super(CallbackModule, self).__init__(display=display)
        self._run_id = None
        self._playbook = None
        self._counts = {}
        self._written = 0
        self._warned = False
        self._disabled = False

    # -- options and run id -------------------------------------------------

    def set_options(self, task_keys=None, var_options=None, direct=None):
        super(CallbackModule, self).set_options(task_keys=task_keys, var_options=var_options, direct=direct)
        self._dir = os.path.abspath(os.path.expanduser(self.get_option("history_dir")))
        # Tasks and lookups of this run (the report role, the history lookup) read the same directory.
        os.environ["COMMCHECK_HISTORY_DIR"] = self._dir
        self._fsync = self.get_option("fsync")
        if context.CLIARGS.get("check") and not self.get_option("write_in_check_mode"):
            self._disabled = True

    def _ensure_run_id(self, play=None):
        if self._run_id:
            return self._run_id
        run_id = None
        if play is not None:
            try:
                extra = play.get_variable_manager().extra_vars
            except Exception:  # pragma: no cover - defensive: older/odd variable managers
                extra = {}
            value = extra.get("commcheck_run_id") if extra else None
            if isinstance(value, str) and value.strip() and "{{" not in value:
                run_id = value.strip()
        if not run_id:
            option = self.get_option("run_id")
            run_id = option.strip() if isinstance(option, str) and option.strip() else None
        run_id = run_id or history.run_id_from_env() or history.new_run_id()
        self._run_id = run_id
        # Tasks forked after this point (and lookups on the controller) see the same id.
        os.environ["COMMCHECK_RUN_ID"] = run_id
        return run_id

    def _warn(self, message):
        if not self._warned:
            self._display.warning("commcheck_history: %s" % message)
            self._warned = True

    # -- events ---------------------------------------------------------------

    def v2_playbook_on_start(self, playbook):
        self._playbook = os.path.basename(getattr(playbook, "_file_name", "") or "")

    def v2_playbook_on_play_start(self, play):
        self._ensure_run_id(play)

    def v2_runner_on_ok(self, result):
        self._collect(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._collect(result)

    def v2_runner_item_on_ok(self, result):
        self._collect(result)

    def v2_runner_item_on_failed(self, result):
        self._collect(result)

    def v2_playbook_on_stats(self, stats):
        if self._disabled or not self.get_option("write_summary"):
            return
        hosts = sorted(stats.processed.keys())
        failed = sorted(h for h in hosts if stats.failures.get(h))
        unreachable = sorted(h for h in hosts if stats.dark.get(h))
        ok = sorted(h for h in hosts if h not in failed and h not in unreachable)
        custom = {}
        if getattr(stats, "custom", None):
            custom = history.redact(history.plain(stats.custom.get("_run", {}), "custom"))
        bad = sum(self._counts.get(v, 0) for v in history.BAD_VERDICTS)
        summary = {
            "kind": "summary",
            "host": None,
            "peer": None,
            "playbook": self._playbook,
            "controller": socket.gethostname(),
            "hosts": {"ok": ok, "failed": failed, "unreachable": unreachable},
            "counts": dict(self._counts),
            "params": {"playbook": self._playbook, "check_mode": bool(context.CLIARGS.get("check"))},
            "metrics": {"records": self._written, "hosts": len(hosts), "hosts_ok": len(ok),
                        "hosts_failed": len(failed), "hosts_unreachable": len(unreachable)},
            "verdict": "fail" if (failed or unreachable or bad) else "pass",
            "cause": None,
            "fix": None,
            "evidence": [],
            "stats": custom,
        }
        self._write([summary])

    # -- work -------------------------------------------------------------------

    def _collect(self, result):
        if self._disabled:
            return
        data = getattr(result, "_result", None)
        if not isinstance(data, dict) or data.get("_ansible_no_log"):
            return
        task = getattr(result, "_task", None)
        if task is not None and getattr(task, "no_log", False):
            return
        records = data.get("commcheck_records")
        if not records or not isinstance(records, list):
            return
        good = []
        for index, record in enumerate(records):
            try:
                item, _removed = history.normalize_record(record, index)
            except history.RecordError as exc:
                self._display.warning("commcheck_history: record skipped: %s" % exc)
                continue
            good.append(item)
        for item in good:
            self._counts[item["verdict"]] = self._counts.get(item["verdict"], 0) + 1
        self._written += len(good)
        self._write(good)

    def _write(self, records):
        if not records:
            return
        self._ensure_run_id()
        try:
            history.append_records(self._dir, records, self._run_id, fsync=self._fsync)
        except (OSError, IOError) as exc:
            self._warn("cannot write history to %s: %s" % (self._dir, exc))
