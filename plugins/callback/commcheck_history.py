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
    the playbook name and the C(set_stats) data of the run). Its counts and verdict are the run's judgements;
    a retest's re-measurement (C(params.retest)) is evidence for its first-pass record, whose verdict the
    retests set, and is left out of them, as the report does.
  - Writes one C(kind=finding) line, code C(governor_unmanaged), for a host whose test module could not switch
    the CPU governor (a C(perftest) or C(iperf3) result's C(cpu_governor.unmanaged), a C(cpu_governor) result's
    C(unmanaged)), once per host and check (C(params.check) rdma, tcp or collective), verdict C(warn).
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
extends_documentation_fragment:
  - clusterops.commcheck.history
options:
  history_dir:
    description:
      - Directory of the history files; created when missing.
      - An absolute path, or one that starts with C(~/); C($VARIABLES) are expanded and the path is normalised.
        A relative path, a C(..) component, a NUL byte or a line break are refused, and so is an empty value
        (an empty C(COMMCHECK_HISTORY_DIR)); the callback then writes nothing, never into the current
        directory, and says so in a warning; the play goes on.
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
  spill_dir:
    description:
      - Where the lines that the history cannot take (a full disk, a quota, a read-only or lost mount) are kept,
        in a new private file C(commcheck-history-<run id>-<random>.jsonl). It holds the same JSON lines, so appending
        the file to its month file once there is room makes the history whole again.
      - Choose a directory on another file system than O(history_dir). Default the system's temporary directory
        (C(TMPDIR), else C(/tmp)). An absolute path, checked as O(history_dir) is.
    type: str
    env:
      - name: COMMCHECK_HISTORY_SPILL_DIR
    ini:
      - section: commcheck_history
        key: spill_dir
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
    the C(partial_verdict) of its records, and one line on stderr says why the run stopped and where its
    records are. On C(SIGTERM) and C(SIGHUP) the callback first stops Ansible's workers (Ansible itself does
    not on C(SIGHUP)); then Ansible handles the signal as it would have without the callback.
    A controller killed outright (C(SIGKILL)) leaves records and no summary line; readers
    (C(list_runs()) of the history API) call such a run C(incomplete). On Linux its workers get C(SIGTERM)
    when it dies, so none of them is left behind.
  - A run whose play stopped because a task failed for every host left (a run-once task, a controller error
    such as a report directory that cannot be written) ends with a summary with C(verdict=interrupted),
    C(signal=null), the task and its message in C(cause) and C(failed_task). A run-once or delegated task's
    failure is the run's, so the host it was queued for is not listed as failed. A failure after the run's report
    was published (C(commcheck_report_fail_on)) is the verdict of a finished run.
  - A line the history cannot take is never left half-written; it is kept in O(spill_dir), a warning says so
    when it first happens, and an error at the end of the run says how many records of which kinds (and
    whether the summary line) were not written and where they are kept. The C(clusterops.commcheck.check_outputs)
    action (C(step=end), the one-click role's last task) fails the run then, so ansible-playbook exits non-zero.
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
import tempfile
import threading

from ansible import context
from ansible.plugins.callback import CallbackBase

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history_state
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import governor_records
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history_summary as ending
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import run_verdict
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.controller_signals import (
    stop_workers,
    workers_end_with_controller,
)
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.filter_preload import preload_filters
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.history_results import (
    data_if_read,
    result_part,
    failure_of,
    task_id,
)

# Signals after which the run ends with an "interrupted" summary line. SIGKILL cannot be caught:
# such a run has records and no summary, and readers call it incomplete.
INTERRUPT_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")
# Signals on which the workers are stopped first: Ansible stops them on SIGTERM only after this callback's
# handler, and never on SIGHUP (its workers would then block for good on the dead controller's pipe).
STOP_WORKERS_ON = ("SIGTERM", "SIGHUP")


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
        self._own_failures = set()       # hosts that failed a task of their own (not run-once, not delegated)
        self._last_failure = None        # the failed task that may have stopped the run
        self._went_on = set()            # tasks that a host went on past (ok or skipped there)
        self._started = False            # a play started: an end of the run is due
        self._summary_written = False
        self._pid = os.getpid()          # workers are forked: only this process writes the summary
        self._lock = threading.Lock()    # one append at a time (results thread and main thread)
        self._busy = set()               # threads inside an append
        self._pending_signal = None      # a signal that arrived while the main thread was appending
        self._previous_handlers = {}
        self._state = None               # history_state.WriterState: what was written, what was not
        self._spill = None
        self._spill_dir = None
        self._stop_workers = stop_workers
        self._unmanaged_seen = set()     # (host, check) of the governor_unmanaged findings written

    # -- options and run id -------------------------------------------------

    def set_options(self, task_keys=None, var_options=None, direct=None):
        super(CallbackModule, self).set_options(task_keys=task_keys, var_options=var_options, direct=direct)
        self._fsync = self.get_option("fsync")
        # whatever happens to the history, the run's end is handled: the workers never outlive the controller
        self._catch_interruptions()
        workers_end_with_controller()
        try:
            self._dir = history.check_history_dir(self.get_option("history_dir"), self._option_source("history_dir"))
        except ValueError as exc:
            self._disabled = True
            self._publish_state(None, "the history is off: %s" % exc)
            self._display.warning("commcheck_history: the history is OFF for this run, nothing is written: %s" % exc)
            return
        if context.CLIARGS.get("check") and not self.get_option("write_in_check_mode"):
            self._disabled = True
            self._publish_state(self._dir, "check mode (write_in_check_mode is off)")
            return
        self._spill_dir = self._checked_spill_dir()
        self._publish_state(self._dir)

    def _publish_state(self, directory, off_reason=None):
        self._state = history_state.WriterState(directory, off_reason, pid=self._pid)
        history_state.publish(self._state)

    def _writer_state(self):
        if self._state is None:
            self._state = history_state.WriterState(self._dir, pid=self._pid)
        return self._state

    def _checked_spill_dir(self):
        value = self.get_option("spill_dir")
        fallback = tempfile.gettempdir()
        if not value:
            return fallback
        try:
            return history.check_history_dir(value, self._option_source("spill_dir"))
        except ValueError as exc:
            self._display.warning("commcheck_history: %s; lines the history cannot take will be kept in %s"
                                  % (exc, fallback))
            return fallback

    def _option_source(self, name):
        """Where an option came from, for error messages ('COMMCHECK_HISTORY_DIR', 'history_dir in ...')."""
        try:
            _value, origin = self.get_option_and_origin(name)
        except (AttributeError, KeyError):  # pragma: no cover - older cores
            return name
        origin = str(origin or "")
        if origin.startswith("env:"):
            return origin.split(":", 1)[1].strip() or name
        if origin and origin != "default":
            return "%s (from %s)" % (name, origin)
        return name

    def _take_extra_var_run_id(self, play):
        """The caller's extra variable commcheck_run_id, when the run has no id yet."""
        try:
            extra = play.get_variable_manager().extra_vars
        except Exception:  # pragma: no cover - defensive: older/odd variable managers
            extra = {}
        self._adopt_run_id(extra.get("commcheck_run_id") if extra else None)

    def _take_fact_run_id(self, result):
        """The commcheck_run_id fact a play sets once (set_fact) before its first record."""
        data = data_if_read(result)
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
            name = signal.Signals(signum).name
            if name in STOP_WORKERS_ON:
                self._stop_workers(signal.SIGTERM)
            if self._end_interrupted(name):
                self._say_how_it_ended("stopped by %s" % name)
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
        if os.getpid() == self._pid and self._end_interrupted("ansible-playbook exited early, see its error"):
            self._say_how_it_ended("ended early by an error")

    def _end_interrupted(self, reason):
        """Write the interrupted summary once; True when this call ended the run (False: it had ended)."""
        if self._summary_written or not self._started:
            return False
        self._summary_written = True
        if not self._disabled and self.get_option("write_summary"):
            self._write_summary(self._seen_hosts(), stats=None, interrupted_by=reason)
        return True

    def _say_how_it_ended(self, how):
        """One line: why the run stopped, and where its records are."""
        self._display.display("commcheck_history: %s" % self._writer_state().stopped_line(
            self._run_id, how, history.history_file(self._dir, history.utc_now()) if self._dir else None),
            stderr=True)

    def _seen_hosts(self):
        hosts = {"ok": [], "failed": [], "unreachable": []}
        for host, state in self._hosts.items():
            hosts[state].append(host)
        return hosts

    def _see_host(self, result, state):
        host = getattr(result_part(result, "host"), "name", None)
        if host and self._hosts.get(host) != "unreachable" and not (state == "ok" and host in self._hosts):
            self._hosts[host] = state

    def _see_failure(self, result, state):
        """A failed or unreachable result: the host is to blame only for a task of its own."""
        failure = failure_of(result, unreachable=state == "unreachable")
        self._last_failure = ending.add_failure(self._last_failure, failure)
        if state == "unreachable" or ending.blames_host(failure):
            self._own_failures.update(failure["hosts"])
            self._see_host(result, state)
        else:
            self._see_host(result, "ok")

    def _see_going_on(self, result):
        """An ok or skipped result: its host went on past that task."""
        self._went_on.add(task_id(result))

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
        self._see_going_on(result)
        self._take_fact_run_id(result)
        self._collect(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        if ignore_errors:
            self._see_host(result, "ok")
            self._see_going_on(result)
        else:
            self._see_failure(result, "failed")
        self._collect(result)

    def v2_runner_on_unreachable(self, result):
        self._see_failure(result, "unreachable")

    def v2_runner_on_skipped(self, result):
        self._see_host(result, "ok")
        self._see_going_on(result)

    def v2_runner_item_on_ok(self, result):
        self._collect(result)

    def v2_runner_item_on_failed(self, result):
        self._collect(result)

    def v2_playbook_on_stats(self, stats):
        if self._summary_written:
            return
        self._summary_written = True
        custom = {}
        if getattr(stats, "custom", None):
            custom = history.redact(history.plain(stats.custom.get("_run", {}), "custom"))
        processed = sorted(stats.processed.keys())
        failed = [h for h in processed if stats.failures.get(h)]
        unreachable = [h for h in processed if stats.dark.get(h)]
        last = self._last_failure
        stopped = ending.stopping_failure(last, last is not None and last["task_id"] in self._went_on,
                                          set(failed + unreachable),
                                          "commcheck_summary" in custom)
        if not self._disabled and self.get_option("write_summary"):
            ok, failed, unreachable = ending.split_hosts(processed, failed, unreachable, self._own_failures)
            self._write_summary({"ok": ok, "failed": failed, "unreachable": unreachable}, stats=custom,
                                failed_task=stopped)
        if stopped:
            self._say_how_it_ended("stopped at the failed task '%s'" % stopped["task"])
        loss = self._writer_state().loss_message()
        if loss:
            self._display.error("commcheck_history: %s" % loss)

    # -- work -------------------------------------------------------------------

    def _write_summary(self, hosts, stats, interrupted_by=None, failed_task=None):
        self._summary_written = True
        summary = history.summary_record(
            self._playbook, socket.gethostname(), hosts, self._counts, self._written,
            check_mode=context.CLIARGS.get("check"), stats=stats, interrupted_by=interrupted_by,
            failed_task=failed_task)
        state = self._writer_state()
        if state.has_losses():
            summary["history"] = {"not_written": dict(state.lost), "spill": state.spill}
        self._write([summary])

    def _collect(self, result):
        if self._disabled:
            return
        data = data_if_read(result)
        if not isinstance(data, dict) or data.get("_ansible_no_log"):
            return
        task = result_part(result, "task")
        if task is not None and getattr(task, "no_log", False):
            return
        records = data.get("commcheck_records")
        if not records or not isinstance(records, list):
            records = self._governor_findings(result, data)
        if not records:
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
            # the run's verdict counts its judgements; a retest's own verdict is evidence for its first pass
            if not run_verdict.is_remeasurement(item):
                self._counts[item["verdict"]] = self._counts.get(item["verdict"], 0) + 1
        self._written += len(good)
        self._write(good)

    def _governor_findings(self, result, data):
        """The ``governor_unmanaged`` finding of a module result as a record, once per host and check."""
        task = result_part(result, "task")
        host = getattr(result_part(result, "host"), "name", None)
        found = governor_records.finding_records(data, host, getattr(task, "action", None)) if host else []
        keys = set((rec["host"], rec["params"]["check"]) for rec in found)
        found = [rec for rec in found if (rec["host"], rec["params"]["check"]) not in self._unmanaged_seen]
        self._unmanaged_seen.update(keys)
        return found

    def _write(self, records):
        if not records or self._disabled:
            return
        self._ensure_run_id()
        me = threading.get_ident()
        self._busy.add(me)
        try:
            with self._lock:
                self._append(records)
        finally:
            self._busy.discard(me)
        self._handle_pending_signal()

    def _append(self, records):
        state = self._writer_state()
        state.run_id = self._run_id
        when = history.utc_now()
        path = history.history_file(self._dir, when)
        try:
            history.append_records(self._dir, records, self._run_id, when=when, fsync=self._fsync)
        except (OSError, IOError) as exc:
            self._keep_aside(state, path, records, when, exc)
            return
        state.note_written(path, records)

    def _keep_aside(self, state, path, records, when, error):
        """Lines the history cannot take: counted, kept in the spill file, told now once and at the end."""
        first = not state.has_losses()
        state.note_lost(path, records, error)
        if self._spill is None:
            self._spill = history_state.Spill(self._spill_dir or tempfile.gettempdir(), self._run_id)
        try:
            state.note_kept(self._spill.keep([history.dumps(history.stamp(r, self._run_id, when)) for r in records],
                                             fsync=self._fsync))
        except (OSError, IOError) as exc:
            state.note_kept(self._spill.path, exc)
        if first:
            # its own warning, not the once-per-run one: a loss must be told even after another warning
            self._display.warning("commcheck_history: cannot write history to %s (%s); the lines it cannot take are "
                                  "kept in %s, and the run will end with an error that lists them"
                                  % (path, state.error, self._spill.path or "no file"))

    def _handle_pending_signal(self):
        """A signal that came during the main thread's append is handled once the append is whole."""
        if self._pending_signal is None or threading.current_thread() is not threading.main_thread():
            return
        signum, frame = self._pending_signal
        self._pending_signal = None
        self._on_signal(signum, frame)
