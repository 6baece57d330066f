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
  - The run id is, in this order, the extra variable C(commcheck_run_id), the C(commcheck_run_id) fact
    that the play sets before its first record (the C(clusterops.commcheck.commcheck) and
    C(clusterops.commcheck.report) roles set it once, from the caller's variable or the same settings as
    here), the O(run_id) option (C(COMMCHECK_RUN_ID)), C(awx-<JOB_ID>) under AWX, or a new
    C(YYYYmmddTHHMMSSZ-xxxxxx). The roles pass the id on to the report explicitly; the callback sets
    no environment variable.
  - Nothing is written in check mode unless O(write_in_check_mode=true).
author:
  - commcheck developers (@clusterops)
requirements:
  - enable in ansible.cfg or with ANSIBLE_CALLBACKS_ENABLED
options:
  history_dir:
    description:
      - Directory of the history files; created when missing.
      - An absolute path, or one that starts with C(~/); C($VARIABLES) are expanded and the path is normalised.
        A relative path, a C(..) component, a NUL byte or a line break are refused, and so is an empty value
        (an empty C(COMMCHECK_HISTORY_DIR)); the callback then writes nothing, never into the current
        directory, and says so in a warning; the play goes on.
    type: str
    default: ~/.ansible/commcheck/history
    env:
      - name: COMMCHECK_HISTORY_DIR
    ini:
      - section: commcheck_history
        key: history_dir
  run_id:
    description:
      - Run id for every line of this run, for example a service's job id.
      - The extra variable C(commcheck_run_id), and the C(commcheck_run_id) fact a play sets, take precedence.
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
  - Lines of one run are written when each task finishes, so an interrupted run keeps the records of
    its finished tasks. A run stopped by C(SIGINT) (Ctrl-C), C(SIGTERM) or C(SIGHUP), or ended early by an
    error, ends with a summary line with C(verdict=interrupted), C(interrupted=true), the C(signal) and
    the C(partial_verdict) of its records; Ansible then handles the signal as it would have without the
    callback. A controller killed outright (C(SIGKILL)) leaves records and no summary line; readers
    (C(list_runs()) of the history API) call such a run C(incomplete).
  - When a playbook starts, it imports the collection's filter plugins in the controller's main process,
    so the worker processes Ansible forks for every task and host inherit them; without it, each worker
    that uses a filter of the collection imports every filter file of the collection again.
  - The verdict of the summary line is the report's overall verdict (C(fail), C(warn) or C(pass)),
    computed by the same function, with failed or unreachable hosts counting as C(fail). A run that checked
    nothing is C(error), never C(pass), with the reason in C(cause) - every check skipped, every host failed or
    unreachable before any check recorded a result, or no host at all (the play's pattern matched none). A run
    whose hosts all did their part and that keeps no record of its own (a report of an earlier run) stays C(pass).
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

# or the run id as a variable (the report of the run uses the same one)
# ansible-playbook -i inventory.yml clusterops.commcheck.commcheck -e commcheck_run_id=nightly-42
'''

import atexit
import os
import signal
import socket
import threading

from ansible import context
from ansible.plugins.callback import CallbackBase

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.filter_preload import preload_filters

# Signals after which the run ends with an "interrupted" summary line. SIGKILL cannot be caught:
# such a run has records and no summary, and readers call it incomplete.
INTERRUPT_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


def _data_if_read(result):
    """The result's data when it holds what this callback reads (records, the run id fact), else None.

    Ansible 2.19 hands each callback its own copy of a result and turns it into
    native types only when ``result`` is read: on a large cluster that pass over
    every module result (discovery, the tests' sides) is the main process's, one
    result after another, so results without records are not read at all.
    """
    raw = getattr(result, "_return_data", None)
    if isinstance(raw, dict):
        facts = raw.get("ansible_facts")
        if "commcheck_records" not in raw and not (isinstance(facts, dict) and "commcheck_run_id" in facts):
            return None
    return getattr(result, "_result", None)


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
        self._dir = None
        self._fsync = True
        self._hosts = {}                 # host -> "ok" | "failed" | "unreachable", as seen so far
        self._started = False            # a play started: an end of the run is due
        self._summary_written = False
        self._pid = os.getpid()          # workers are forked: only this process writes the summary
        self._lock = threading.Lock()    # one append at a time (results thread and main thread)
        self._busy = set()               # threads inside an append
        self._pending_signal = None      # a signal that arrived while the main thread was appending
        self._previous_handlers = {}

    # -- options and run id -------------------------------------------------

    def set_options(self, task_keys=None, var_options=None, direct=None):
        super(CallbackModule, self).set_options(task_keys=task_keys, var_options=var_options, direct=direct)
        self._fsync = self.get_option("fsync")
        try:
            self._dir = history.check_history_dir(self.get_option("history_dir"), self._history_dir_source())
        except ValueError as exc:
            self._disabled = True
            self._display.warning("commcheck_history: the history is OFF for this run, nothing is written: %s" % exc)
            return
        if context.CLIARGS.get("check") and not self.get_option("write_in_check_mode"):
            self._disabled = True
            return
        self._catch_interruptions()

    def _history_dir_source(self):
        """Where history_dir came from, for error messages ('COMMCHECK_HISTORY_DIR', 'history_dir in ...')."""
        try:
            _value, origin = self.get_option_and_origin("history_dir")
        except (AttributeError, KeyError):  # pragma: no cover - older cores
            return "history_dir"
        origin = str(origin or "")
        if origin.startswith("env:"):
            return origin.split(":", 1)[1].strip() or "COMMCHECK_HISTORY_DIR"
        if origin and origin != "default":
            return "history_dir (from %s)" % origin
        return "history_dir"

    def _take_extra_var_run_id(self, play):
        """The caller's extra variable commcheck_run_id, when the run has no id yet."""
        try:
            extra = play.get_variable_manager().extra_vars
        except Exception:  # pragma: no cover - defensive: older/odd variable managers
            extra = {}
        self._adopt_run_id(extra.get("commcheck_run_id") if extra else None)

    def _take_fact_run_id(self, result):
        """The commcheck_run_id fact a play sets once (set_fact) before its first record."""
        data = _data_if_read(result)
        facts = data.get("ansible_facts") if isinstance(data, dict) else None
        if isinstance(facts, dict) and "commcheck_run_id" in facts:
            self._adopt_run_id(facts["commcheck_run_id"])

    def _adopt_run_id(self, value):
        run_id = history.plain_run_id(value)
        if not run_id or run_id == self._run_id:
            return
        if self._run_id is None:
            self._run_id = run_id
            return
        self._warn("the play set commcheck_run_id=%s after lines of run %s were written; the history keeps %s"
                   % (run_id, self._run_id, self._run_id))

    def _ensure_run_id(self):
        if not self._run_id:
            self._run_id = history.resolve_run_id([self.get_option("run_id")])
        return self._run_id

    def _warn(self, message):
        if not self._warned:
            self._display.warning("commcheck_history: %s" % message)
            self._warned = True

    # -- interruptions ----------------------------------------------------------

    def _catch_interruptions(self):
        """Write an "interrupted" summary when a signal or an early exit ends the run.

        Each handler writes the summary, then hands the signal to the handler
        it replaced (Ansible's own: it stops the workers, then raises
        KeyboardInterrupt or ends the process), so Ansible behaves as before.
        An ignored signal (nohup) stays ignored.
        """
        if self._previous_handlers:
            return
        for name in INTERRUPT_SIGNALS:
            signum = getattr(signal, name, None)
            if signum is None:
                continue
            try:
                previous = signal.getsignal(signum)
                if previous == signal.SIG_IGN:
                    continue
                signal.signal(signum, self._on_signal)
            except (ValueError, OSError):  # not the main thread: no handlers, an early exit stays incomplete
                continue
            self._previous_handlers[signum] = previous
        atexit.register(self._on_exit)

    def _on_signal(self, signum, frame):
        if os.getpid() == self._pid:
            if threading.get_ident() in self._busy:
                # the signal interrupted our own append: finish it, then handle the signal (_write)
                self._pending_signal = (signum, frame)
                return
            self._write_interrupted_summary(signal.Signals(signum).name)
        self._pass_signal_on(signum, frame)

    def _pass_signal_on(self, signum, frame):
        previous = self._previous_handlers.get(signum)
        if callable(previous):
            previous(signum, frame)
            return
        # the default action: end the process the way the signal would have
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    def _on_exit(self):
        """The process ends without v2_playbook_on_stats (an error stopped the playbook)."""
        if os.getpid() == self._pid:
            self._write_interrupted_summary("ansible-playbook exited early, see its error")

    def _write_interrupted_summary(self, reason):
        if self._disabled or self._summary_written or not self._started or not self.get_option("write_summary"):
            return
        self._write_summary(self._seen_hosts(), stats=None, interrupted_by=reason)

    def _seen_hosts(self):
        hosts = {"ok": [], "failed": [], "unreachable": []}
        for host, state in self._hosts.items():
            hosts[state].append(host)
        return hosts

    def _see_host(self, result, state):
        host = getattr(getattr(result, "_host", None), "name", None)
        if host and self._hosts.get(host) != "unreachable" and not (state == "ok" and host in self._hosts):
            self._hosts[host] = state

    # -- events ---------------------------------------------------------------

    def v2_playbook_on_start(self, playbook):
        # ansible-playbook a.yml b.yml: one summary per playbook file, the last one covers the whole run
        self._playbook = os.path.basename(getattr(playbook, "_file_name", "") or "")
        self._summary_written = False
        self._preload_filters()

    def _preload_filters(self):
        """Before any worker is forked: the collection's filters, so no worker imports them again."""
        if os.getpid() != self._pid:
            return
        _loaded, failed = preload_filters()
        for name, error in sorted(failed.items()):
            self._display.vvv("commcheck_history: filter plugin %s not preloaded: %s" % (name, error))

    def v2_playbook_on_play_start(self, play):
        self._started = True
        self._take_extra_var_run_id(play)

    def v2_runner_on_ok(self, result):
        self._see_host(result, "ok")
        self._take_fact_run_id(result)
        self._collect(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._see_host(result, "ok" if ignore_errors else "failed")
        self._collect(result)

    def v2_runner_on_unreachable(self, result):
        self._see_host(result, "unreachable")

    def v2_runner_on_skipped(self, result):
        self._see_host(result, "ok")

    def v2_runner_item_on_ok(self, result):
        self._collect(result)

    def v2_runner_item_on_failed(self, result):
        self._collect(result)

    def v2_playbook_on_stats(self, stats):
        if self._disabled or self._summary_written or not self.get_option("write_summary"):
            return
        hosts = sorted(stats.processed.keys())
        failed = sorted(h for h in hosts if stats.failures.get(h))
        unreachable = sorted(h for h in hosts if stats.dark.get(h))
        ok = sorted(h for h in hosts if h not in failed and h not in unreachable)
        custom = {}
        if getattr(stats, "custom", None):
            custom = history.redact(history.plain(stats.custom.get("_run", {}), "custom"))
        self._write_summary({"ok": ok, "failed": failed, "unreachable": unreachable}, stats=custom)

    # -- work -------------------------------------------------------------------

    def _write_summary(self, hosts, stats, interrupted_by=None):
        self._summary_written = True
        summary = history.summary_record(
            self._playbook, socket.gethostname(), hosts, self._counts, self._written,
            check_mode=context.CLIARGS.get("check"), stats=stats, interrupted_by=interrupted_by)
        self._write([summary])

    def _collect(self, result):
        if self._disabled:
            return
        data = _data_if_read(result)
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
        if not records or self._disabled:
            return
        self._ensure_run_id()
        me = threading.get_ident()
        self._busy.add(me)
        try:
            with self._lock:
                try:
                    history.append_records(self._dir, records, self._run_id, fsync=self._fsync)
                except (OSError, IOError) as exc:
                    self._warn("cannot write history to %s: %s" % (self._dir, exc))
        finally:
            self._busy.discard(me)
        self._handle_pending_signal()

    def _handle_pending_signal(self):
        """A signal that came during the main thread's append is handled once the append is whole."""
        if self._pending_signal is None or threading.current_thread() is not threading.main_thread():
            return
        signum, frame = self._pending_signal
        self._pending_signal = None
        self._on_signal(signum, frame)
